/* SPDX-License-Identifier: MIT */
/*
 * DOC: ftree routing engine (descriptor)
 *
 * Fat trees of 2 to 4 switch levels, ranks found from where the CAs sit.
 * The model (ranks, up-slot tables, destinations) is built by
 * ftree_model.c, the LFTs are filled by ftree_route.c; this file is the
 * engine descriptor and its (empty) option set. Holds no state between
 * calls: every route() builds and frees its own model.
 *
 * A plane that is not a fat tree (CAs at different depths, a ring, more
 * than 4 levels, leaves with no up/down path between them) is refused with
 * an error and a reason in ctx->msg, so the engine chain can fall back.
 */
#include "config.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <yaml.h>

#include "engine.h"
#include "ftree_model.h"

static int ftree_init(void **state, yaml_document_t *doc, yaml_node_t *node, char *err, size_t errlen)
{
	*state = NULL;
	if (!node || node->type == YAML_SCALAR_NODE)
		return 0; /* absent, or "ftree:" with an empty value */
	if (node->type != YAML_MAPPING_NODE) {
		snprintf(err, errlen, "ftree: line %lu: options must be a mapping",
			 (unsigned long)node->start_mark.line + 1);
		return -EINVAL;
	}
	for (yaml_node_pair_t *p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(doc, p->key);
		if (!k || k->type != YAML_SCALAR_NODE) {
			snprintf(err, errlen, "ftree: line %lu: option names must be scalars",
				 (unsigned long)node->start_mark.line + 1);
			return -EINVAL;
		}
		snprintf(err, errlen, "ftree: line %lu: unknown option '%.64s' (ftree has no options)",
			 (unsigned long)k->start_mark.line + 1, (const char *)k->data.scalar.value);
		return -EINVAL;
	}
	return 0;
}

static int ftree_route_plane(void *state, struct sm_route_ctx *ctx)
{
	struct ft_model m;
	(void)state;

	if (!ctx || !ctx->fabric || !ctx->out)
		return -EINVAL;
	ctx->msg[0] = 0;
	int rc = ft_model_build(&m, ctx->fabric, ctx->plane, ctx->out, ctx->msg, sizeof(ctx->msg));
	if (rc)
		return rc;
	rc = ft_route(&m, ctx->out, ctx->msg, sizeof(ctx->msg));
	ft_model_free(&m);
	return rc;
}

static void ftree_free(void *state)
{
	(void)state;
}

const struct sm_engine_ops sm_engine_ftree = {
	.size = sizeof(struct sm_engine_ops),
	.abi_version = SM_ENGINE_ABI_VERSION,
	.name = "ftree",
	.description = "fat tree (2-4 levels): shift-permutation congestion-free on full trees, "
		       "degraded trees keep the ideal routes and move only the displaced ones",
	.init = ftree_init,
	.route = ftree_route_plane,
	.route_planes = NULL,
	.free = ftree_free,
};
