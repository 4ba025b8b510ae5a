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
#include "routing/util.h"
#include "routing/cand.h"

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

struct minhop {
	uint16_t *dist;
	uint32_t *queue;
};

/* Candidates toward d: the links to a neighbour one hop closer (parallel links included). */
static const uint16_t *minhop_cands(void *arg, const struct sm_graph *g, uint32_t d, struct sm_cand *c)
{
	struct minhop *m = arg;
	uint32_t nd = g->dest_off[d + 1] - g->dest_off[d], k = 0;

	sm_graph_bfs(g, d, m->dist, m->queue);
	for (uint32_t s = 0; s < g->n_sw; s++) {
		c->cand_off[s] = k;
		if (m->dist[s] == SM_GRAPH_INF) {
			c->unreached += nd;
			continue;
		}
		for (uint32_t i = g->adj_off[s]; i < g->adj_off[s + 1]; i++)
			if (m->dist[g->adj[i].peer] + 1 == m->dist[s])
				c->cand[k++] = i;
	}
	c->cand_off[g->n_sw] = k;
	return m->dist;
}

static int minhop_route(void *state, struct sm_route_ctx *ctx)
{
	(void)state;
	struct sm_graph *g;
	int rc = sm_cand_graph(ctx, &g);
	if (rc)
		return rc;
	struct minhop m = {
		.dist = malloc((size_t)g->n_sw * sizeof(*m.dist)),
		.queue = malloc((size_t)g->n_sw * sizeof(*m.queue)),
	};
	rc = m.dist && m.queue ? sm_cand_route(g, ctx, minhop_cands, &m) : -ENOMEM;
	free(m.dist);
	free(m.queue);
	sm_graph_free(g);
	return rc;
}

const struct sm_engine_ops sm_engine_minhop = SM_ENGINE_OPS(
	.name = "minhop",
	.description = "shortest paths on any topology, routes balanced per cable and per destination type",
	.init = minhop_init,
	.route = minhop_route,
	.free = minhop_free);
