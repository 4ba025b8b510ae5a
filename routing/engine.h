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
 * LFTs (struct sm_lfts) are one dense table per plane:
 * ports[slot * (top_lid + 1) + lid] = egress port, SM_LFT_NONE when the
 * switch has no route for that LID. Port 0 means "deliver to this switch".
 */
#include <stddef.h>
#include <stdint.h>
#include "model/fabric.h"

#define SM_ENGINE_ABI_VERSION 1
#define SM_ENGINE_SYMBOL "smd_engine"
#define SM_LFT_NONE 0xff

struct sm_profile;           /* traffic profile (hot-path issue); may be NULL */
typedef struct yaml_document_s yaml_document_t;
typedef struct yaml_node_s yaml_node_t;

struct sm_lfts {
	unsigned plane;
	uint32_t n_switches;
	uint16_t top_lid;        /* highest LID with an entry; each row has top_lid+1 entries */
	uint32_t *sw_node;       /* [n_switches] fabric node index of each switch slot */
	uint32_t *slot_of_node;  /* [fabric n_nodes] switch slot or SM_NONE */
	uint32_t n_nodes;        /* size of slot_of_node */
	uint8_t *ports;          /* [n_switches * (top_lid+1)] */
};

/* Allocate LFTs for every switch of `plane`, rows sized by the plane's max LID, all SM_LFT_NONE. */
struct sm_lfts *sm_lfts_new(const struct sm_fabric *f, unsigned plane);
void sm_lfts_free(struct sm_lfts *l);  /* accepts NULL */
struct sm_lfts *sm_lfts_dup(const struct sm_lfts *l);

static inline uint8_t *sm_lfts_row(const struct sm_lfts *l, uint32_t slot)
{
	return &l->ports[(size_t)slot * ((size_t)l->top_lid + 1)];
}

static inline uint8_t sm_lfts_get(const struct sm_lfts *l, uint32_t node, uint16_t lid)
{
	uint32_t s = node < l->n_nodes ? l->slot_of_node[node] : SM_NONE;
	if (s == SM_NONE || lid > l->top_lid)
		return SM_LFT_NONE;
	return sm_lfts_row(l, s)[lid];
}

static inline void sm_lfts_set(struct sm_lfts *l, uint32_t node, uint16_t lid, uint8_t port)
{
	uint32_t s = l->slot_of_node[node];
	sm_lfts_row(l, s)[lid] = port;
}

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
