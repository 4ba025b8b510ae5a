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
 * than SM_ENGINE_OPS_MIN_SIZE, the first ABI 1 descriptor (up to `free`).
 *
 * Fields are only ever added at the end, within ABI version 1: the loader
 * reads a field only if the descriptor's size covers it (sm_engine_flags()),
 * so a plugin built against an older engine.h loads and gets the default
 * (zero) for everything added since. Added so far:
 *   flags  capability bits (SM_ENGINE_F_*), default 0 = nothing promised.
 *
 * SM_ENGINE_F_NO_CREDIT_LOOP: every output of route()/route_planes() is free
 * of credit loops by construction (up*-then-down* routes: ftree, updn). The
 * chain then lets the incremental validation after a reroute skip the
 * credit-loop check, which needs every destination's routes; an engine
 * without it is validated in full. Set it only if it holds on every fabric
 * the engine accepts, degraded ones included: a wrong promise lets a credit
 * loop through unchecked.
 *
 * The output, struct sm_lfts, is part of the fabric model (model/lfts.h).
 */
#include <stddef.h>
#include <stdint.h>
#include "model/fabric.h"
#include "model/lfts.h"

#define SM_ENGINE_ABI_VERSION 1
#define SM_ENGINE_SYMBOL "smd_engine"

/* sm_engine_ops.flags */
#define SM_ENGINE_F_NO_CREDIT_LOOP (1u << 0)   /* routes have no credit loop by construction */

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
	/* Added after the first ABI 1 descriptor: read through sm_engine_flags(). */
	uint32_t flags;          /* SM_ENGINE_F_* */
};

/* The first ABI 1 descriptor ended with free: the smallest size loaded. */
#define SM_ENGINE_OPS_MIN_SIZE (offsetof(struct sm_engine_ops, free) + sizeof(void (*)(void *)))

/* The descriptor's flags, 0 if it was built before flags existed. */
static inline uint32_t sm_engine_flags(const struct sm_engine_ops *ops)
{
	return ops->size >= offsetof(struct sm_engine_ops, flags) + sizeof(ops->flags) ? ops->flags : 0;
}

/*
 * A descriptor with size and ABI version filled in, the rest by designated
 * initialisers: const struct sm_engine_ops x = SM_ENGINE_OPS(.name = "x", ...);
 */
#define SM_ENGINE_OPS(...) \
	{ .size = sizeof(struct sm_engine_ops), .abi_version = SM_ENGINE_ABI_VERSION, __VA_ARGS__ }

#endif
