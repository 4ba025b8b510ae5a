/* SPDX-License-Identifier: MIT */
#ifndef SMD_ROUTING_CAND_H
#define SMD_ROUTING_CAND_H
/*
 * DOC: routing by candidate links (the loop minhop and updn share)
 *
 * An engine that says, per destination switch, which links each switch may
 * leave by (its candidates) and how far each switch is, gets the rest from
 * here: the switch graph of the plane, one pass per destination switch that
 * delivers LIDs (switches farthest first, the balancer's pick per switch
 * and LID, graph.h sm_graph_assign), and the common note on what stayed
 * unrouted. The engine owns only its rule for candidates.
 */
#include <stdint.h>

#include "routing/engine.h"
#include "routing/graph.h"

struct sm_cand {
	uint32_t *cand_off;   /* [n_sw + 1]: switch s's candidates are cand[cand_off[s] .. cand_off[s+1]-1] */
	uint32_t *cand;       /* indices into g->adj, ascending per switch */
	uint64_t unreached;   /* (switch, LID) entries the rule could not route, summed over destinations */
};

/*
 * Fill c->cand_off and c->cand for destination slot d and return the
 * distances that order the switches (n_sw entries, SM_GRAPH_INF:
 * unreachable), or NULL to skip d.
 */
typedef const uint16_t *sm_cand_rule(void *arg, const struct sm_graph *g, uint32_t d, struct sm_cand *c);

/*
 * Build the plane's switch graph (*gp, caller frees; NULL on failure). 0,
 * or -errno with ctx->msg: the graph cannot be built, the plane has no switch.
 */
int sm_cand_graph(struct sm_route_ctx *ctx, struct sm_graph **gp);
/* Route every destination of g into ctx->out by rule; 0 or -errno (sm_route_note_unreached). */
int sm_cand_route(const struct sm_graph *g, struct sm_route_ctx *ctx, sm_cand_rule *rule, void *arg);

#endif
