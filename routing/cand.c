/* SPDX-License-Identifier: MIT */
/*
 * DOC: routing by candidate links (cand.h): the per-destination loop of
 * minhop and updn and its scratch.
 */
#include "routing/cand.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

int sm_cand_graph(struct sm_route_ctx *ctx, struct sm_graph **gp)
{
	int rc = sm_graph_build(ctx->fabric, ctx->plane, gp);
	if (rc) {
		*gp = NULL;
		snprintf(ctx->msg, sizeof(ctx->msg), "cannot build the switch graph of plane %u", ctx->plane);
		return rc;
	}
	if (!(*gp)->n_sw) {
		snprintf(ctx->msg, sizeof(ctx->msg), "plane %u has no switch", ctx->plane);
		sm_graph_free(*gp);
		*gp = NULL;
		return -ENODEV;
	}
	return 0;
}

int sm_cand_route(const struct sm_graph *g, struct sm_route_ctx *ctx, sm_cand_rule *rule, void *arg)
{
	struct sm_balancer *b = sm_balancer_new(g);
	struct sm_cand c = {
		.cand_off = malloc(((size_t)g->n_sw + 1) * sizeof(*c.cand_off)),
		.cand = malloc(((size_t)g->adj_off[g->n_sw] + 1) * sizeof(*c.cand)),
	};
	uint32_t *order = malloc(((size_t)g->n_sw + 1) * sizeof(*order));
	uint32_t *tmp = malloc(((size_t)g->n_sw + 3) * sizeof(*tmp));
	int rc = -ENOMEM;

	if (!b || !c.cand_off || !c.cand || !order || !tmp)
		goto out;
	for (uint32_t d = 0; d < g->n_sw; d++) {
		if (g->dest_off[d + 1] == g->dest_off[d])
			continue;
		const uint16_t *dist = rule(arg, g, d, &c);
		if (!dist)
			continue;
		sm_graph_order_far_first(g, dist, order, tmp);
		sm_graph_assign(g, b, d, c.cand_off, c.cand, order, g->n_sw, ctx->out);
	}
	rc = sm_route_note_unreached(g, c.unreached, ctx->msg, sizeof(ctx->msg));
out:
	free(c.cand_off);
	free(c.cand);
	free(order);
	free(tmp);
	sm_balancer_free(b);
	return rc;
}
