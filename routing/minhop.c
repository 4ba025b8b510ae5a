/* SPDX-License-Identifier: MIT */
/*
 * DOC: minhop engine: shortest paths on any topology, balanced
 *
 * For each switch d that delivers some LID, one BFS from d gives every
 * switch's hop count to d; the candidate egress links of switch s are the
 * links to neighbours one hop closer (parallel links included). Every LID
 * delivered at d (its own LIDs, each LID of the LMC range of each endpoint
 * port cabled to it) is then given, at every switch, the candidate the
 * balancer picks (graph.h, sm_graph_assign): switches decide from the
 * farthest to the nearest, so each knows how many endpoint sources it
 * carries per LID; the LIDs that carry traffic are spread evenly over the
 * candidates, aligned by rank across switches, and cables are loaded by
 * the sources they carry, per destination type. OpenSM's minhop counts
 * LIDs per port instead, which on a 3-level tree piles the hosts of one
 * rank onto one core.
 *
 * Cost: one BFS per destination switch plus one pick per (switch, LID):
 * O(S x (S + L) + LIDs x S x radix).
 *
 * Unreachable LIDs (another physical part, or an endpoint not cabled to a
 * switch) stay SM_LFT_NONE and are counted in ctx->msg; the plane fails only
 * when it has LIDs but none of them can be routed, or no switch at all.
 *
 * Config: none (an empty mapping or nothing); any key is an error naming
 * its YAML line.
 */
#include "config.h"
#include "routing/registry.h"
#include "routing/graph.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

static int minhop_init(void **state, yaml_document_t *doc, yaml_node_t *node, char *err, size_t errlen)
{
	static const char *const known[] = { NULL };
	*state = NULL;
	return sm_yaml_check_keys(doc, node, "minhop", known, err, errlen);
}

static void minhop_free(void *state)
{
	(void)state;
}

static int minhop_route(void *state, struct sm_route_ctx *ctx)
{
	(void)state;
	struct sm_graph *g = NULL;
	int rc = sm_graph_build(ctx->fabric, ctx->plane, &g);
	if (rc) {
		snprintf(ctx->msg, sizeof(ctx->msg), "cannot build the switch graph of plane %u", ctx->plane);
		return rc;
	}
	if (!g->n_sw) {
		snprintf(ctx->msg, sizeof(ctx->msg), "plane %u has no switch", ctx->plane);
		sm_graph_free(g);
		return -ENODEV;
	}
	struct sm_balancer *b = sm_balancer_new(g);
	uint16_t *dist = malloc((size_t)g->n_sw * sizeof(*dist));
	uint32_t *queue = malloc((size_t)g->n_sw * sizeof(*queue));
	uint32_t *cand_off = malloc(((size_t)g->n_sw + 1) * sizeof(*cand_off));
	uint32_t *cand = malloc(((size_t)g->adj_off[g->n_sw] + 1) * sizeof(*cand));
	uint32_t *order = malloc(((size_t)g->n_sw + 1) * sizeof(*order));
	uint32_t *tmp = malloc(((size_t)g->n_sw + 3) * sizeof(*tmp));
	if (!b || !dist || !queue || !cand_off || !cand || !order || !tmp) {
		rc = -ENOMEM;
		goto out;
	}
	uint64_t unreached = 0;
	for (uint32_t d = 0; d < g->n_sw; d++) {
		uint32_t nd = g->dest_off[d + 1] - g->dest_off[d];
		if (!nd)
			continue;
		sm_graph_bfs(g, d, dist, queue);
		uint32_t k = 0;
		for (uint32_t s = 0; s < g->n_sw; s++) {
			cand_off[s] = k;
			if (dist[s] == SM_GRAPH_INF) {
				unreached += nd;
				continue;
			}
			for (uint32_t i = g->adj_off[s]; i < g->adj_off[s + 1]; i++)
				if (dist[g->adj[i].peer] + 1 == dist[s])
					cand[k++] = i;
		}
		cand_off[g->n_sw] = k;
		sm_graph_order_far_first(g, dist, order, tmp);
		sm_graph_assign(g, b, d, cand_off, cand, order, g->n_sw, ctx->out);
	}
	rc = sm_route_note_unreached(g, unreached, ctx->msg, sizeof(ctx->msg));
out:
	free(dist);
	free(queue);
	free(cand_off);
	free(cand);
	free(order);
	free(tmp);
	sm_balancer_free(b);
	sm_graph_free(g);
	return rc;
}

const struct sm_engine_ops sm_engine_minhop = {
	.size = sizeof(struct sm_engine_ops),
	.abi_version = SM_ENGINE_ABI_VERSION,
	.name = "minhop",
	.description = "shortest paths on any topology, routes balanced per cable and per destination type",
	.init = minhop_init,
	.route = minhop_route,
	.free = minhop_free,
};
