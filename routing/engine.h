/* SPDX-License-Identifier: MIT */
#ifndef SMD_ENGINE_H
#define SMD_ENGINE_H
/*
 * DOC: routing engine ABI (version 1)
 *
 * An engine is a descriptor (struct sm_engine_ops) of hooks. Engines are
 * pure: input is a read-only fabric, the engine's own YAML config subtree and
 * an optional traffic profile; output is the LFTs of one plane (or, with
 * route_planes, of all planes at once). No MADs, no globals, no stdout.
 *
 * Built-in engines register the same descriptor as plugins. A plugin is a
 * shared object exporting exactly one symbol, SM_ENGINE_SYMBOL, of type
 * `const struct sm_engine_ops`. The loader refuses a descriptor whose
 * abi_version differs from SM_ENGINE_ABI_VERSION or whose size is smaller
 * than the loader's sizeof(struct sm_engine_ops).
 *
 * The output, struct sm_lfts, is part of the fabric model (model/lfts.h).
 */
#include <stddef.h>
#include <stdint.h>
#include "model/fabric.h"
#include "model/lfts.h"

#define SM_ENGINE_ABI_VERSION 1
#define SM_ENGINE_SYMBOL "smd_engine"

struct sm_profile;           /* traffic profile (hot-path issue); may be NULL */
typedef struct yaml_document_s yaml_document_t;
typedef struct yaml_node_s yaml_node_t;

struct sm_route_ctx {
	const struct sm_fabric *fabric;
	const struct sm_profile *profile;   /* may be NULL */
	unsigned plane;                      /* route(): the plane to route */
	struct sm_lfts *out;                 /* route(): preallocated, all SM_LFT_NONE */
	/* route_planes(): all planes at once */
	unsigned n_planes;
	const unsigned *planes;
	struct sm_lfts **outs;
	/* engine's explanation when it returns an error (and optional notes otherwise) */
	char msg[256];
};

struct sm_engine_ops {
	uint32_t size;           /* sizeof(struct sm_engine_ops) the engine was built with */
	uint32_t abi_version;    /* SM_ENGINE_ABI_VERSION */
	const char *name;        /* "minhop", "updn", "ftree", ... */
	const char *description;
	/*
	 * Parse the engine's own config subtree (node may be NULL: defaults).
	 * Returns 0 and an opaque state, or a negative errno with a message
	 * (naming the YAML line) in err.
	 */
	int (*init)(void **state, yaml_document_t *doc, yaml_node_t *node, char *err, size_t errlen);
	/* Route one plane. 0 on success; negative errno and ctx->msg on failure. */
	int (*route)(void *state, struct sm_route_ctx *ctx);
	/* Optional: route all planes together (plane-aware engines). NULL otherwise. */
	int (*route_planes)(void *state, struct sm_route_ctx *ctx);
	void (*free)(void *state);
};

/*
 * A descriptor with size and ABI version filled in, the rest by designated
 * initialisers: const struct sm_engine_ops x = SM_ENGINE_OPS(.name = "x", ...);
 */
#define SM_ENGINE_OPS(...) \
	{ .size = sizeof(struct sm_engine_ops), .abi_version = SM_ENGINE_ABI_VERSION, __VA_ARGS__ }

#endif
