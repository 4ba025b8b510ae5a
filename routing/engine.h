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
 *   flags    capability bits (SM_ENGINE_F_*), default 0 = nothing promised.
 *   reroute  incremental routing (below), default NULL: always route().
 *
 * Incremental routing (optional, reroute; sm_engine_reroute()): after a
 * sweep that only lost cables (same nodes, ports and LIDs as the previous
 * routing), the loader hands the engine ctx->out holding a copy of the
 * previous, accepted LFTs and ctx->reroute naming the fabric they were
 * computed for and the cables gone. The engine changes only the
 * destinations that must change (those whose routes crossed a lost cable)
 * and marks every LID whose column it changed in ctx->reroute->changed;
 * the loader validates those LIDs only (incrementally, if the engine has
 * SM_ENGINE_F_NO_CREDIT_LOOP) and routes in full if the result is refused.
 * -EAGAIN: cannot do it incrementally (the loader calls route() on a fresh
 * table); any other error is a refusal as from route().
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

/* What changed since the previous routing (reroute()); see the DOC above. */
struct sm_reroute {
	const struct sm_fabric *prev_fabric;  /* the fabric prev was computed for: same numbering as ctx->fabric */
	const struct sm_lfts *prev;           /* the accepted routes on it (ctx->out starts as their copy) */
	const uint32_t *removed;              /* port indices (both ends) whose cable is gone */
	uint32_t n_removed;
	uint8_t *changed;                     /* [prev->top_lid + 1], zeroed: set 1 for each LID changed */
};

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
	/* reroute() only (NULL otherwise); fields added later go after this one */
	const struct sm_reroute *reroute;
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
	/*
	 * Added after flags (read it through sm_engine_reroute()): optional,
	 * route after cables were lost, from the previous routes
	 * (ctx->reroute). 0, -EAGAIN (route in full instead) or a negative
	 * errno with ctx->msg.
	 */
	int (*reroute)(void *state, struct sm_route_ctx *ctx);
};

/* The first ABI 1 descriptor ended with free: the smallest size loaded. */
#define SM_ENGINE_OPS_MIN_SIZE (offsetof(struct sm_engine_ops, free) + sizeof(void (*)(void *)))

/* The descriptor's flags, 0 if it was built before flags existed. */
static inline uint32_t sm_engine_flags(const struct sm_engine_ops *ops)
{
	return ops->size >= offsetof(struct sm_engine_ops, flags) + sizeof(ops->flags) ? ops->flags : 0;
}

/* The reroute hook of a descriptor, NULL when it has none or was built before the field existed. */
static inline int (*sm_engine_reroute(const struct sm_engine_ops *ops))(void *, struct sm_route_ctx *)
{
	return ops->size >= offsetof(struct sm_engine_ops, reroute) + sizeof(ops->reroute) ? ops->reroute : NULL;
}

/*
 * A descriptor with size and ABI version filled in, the rest by designated
 * initialisers: const struct sm_engine_ops x = SM_ENGINE_OPS(.name = "x", ...);
 */
#define SM_ENGINE_OPS(...) \
	{ .size = sizeof(struct sm_engine_ops), .abi_version = SM_ENGINE_ABI_VERSION, __VA_ARGS__ }

#endif
