/* SPDX-License-Identifier: MIT */
/*
 * DOC: deliberately broken plugins for tests/test_plugin.c
 *
 * Built several times with -DBAD_KIND=N; the loader must refuse each one
 * with a clear message and without calling any hook:
 *   1 abi_version 2, 2 size smaller than the first ABI 1 descriptor,
 *   3 no `smd_engine` symbol, 4 name of a built-in engine, 5 route hook NULL,
 *   6 empty name.
 * And one that is not broken: 7, a descriptor that ends at flags
 * (up to flags, built before the optional reroute hook): it loads,
 * without the hook (nothing past its size is read).
 */
#include "config.h"

#include <stddef.h>
#include <stdlib.h>

#include "routing/engine.h"

#ifndef BAD_KIND
#error "build with -DBAD_KIND=N"
#endif

static int bad_init(void **state, yaml_document_t *doc, yaml_node_t *node, char *err, size_t errlen)
{
	/* never reached: the loader refuses the descriptor first */
	abort();
}

#if BAD_KIND != 5
static int bad_route(void *state, struct sm_route_ctx *ctx)
{
	abort();
}
#endif

static void bad_free(void *state)
{
	abort();
}

#if BAD_KIND == 3
#define SYMBOL smd_engine_v0
#else
#define SYMBOL smd_engine
#endif

extern const struct sm_engine_ops SYMBOL;

const struct sm_engine_ops SYMBOL = {
#if BAD_KIND == 2
	.size = offsetof(struct sm_engine_ops, free),
#elif BAD_KIND == 7
	.size = offsetof(struct sm_engine_ops, reroute),
#else
	.size = sizeof(struct sm_engine_ops),
#endif
#if BAD_KIND == 1
	.abi_version = SM_ENGINE_ABI_VERSION + 1,
#else
	.abi_version = SM_ENGINE_ABI_VERSION,
#endif
#if BAD_KIND == 4
	.name = "minhop",
#elif BAD_KIND == 6
	.name = "",
#elif BAD_KIND == 7
	.name = "old_v1",
#else
	.name = "bad",
#endif
	.description = "broken on purpose",
	.init = bad_init,
#if BAD_KIND != 5
	.route = bad_route,
#endif
	.free = bad_free,
};
