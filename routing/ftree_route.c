/* SPDX-License-Identifier: MIT */
/*
 * DOC: ftree algorithm: fill the LFTs from the model (ftree_model.h)
 *
 * Destinations are handled per destination switch T (a leaf for CA LIDs,
 * the switch itself for switch LIDs), in routing order (leaves by host
 * index, then the other switches):
 *
 *  1. D = T and its ancestors (BFS upward). A switch in D routes down; the
 *     BFS records, for each ancestor, the ports leading to D children.
 *  2. Every other switch routes up, to a parent that can still reach T:
 *     R(s) = D(s) or R(some parent), memoised per T. A switch with no R
 *     parent gets no entry: up/down routing never turns down-then-up, which
 *     is what keeps every route credit-loop free.
 *  3. The up port for destination index idx at a rank-r switch is the
 *     ideal slot (idx / div[r]) mod U(s) of its up-slot table: on a full
 *     tree each upper switch then carries a disjoint set of destinations,
 *     and every shift permutation is congestion free. When the ideal slot's
 *     link is missing, or its parent cannot reach T (it lost its link
 *     toward T), only that route moves: to the valid up port that took the
 *     fewest displaced routes so far (ties broken by rotating from the
 *     ideal slot, which spreads one leaf's displaced set round robin).
 *
 * Cost: O(ancestors + switches) per destination switch plus O(1) per LFT
 * entry; LFT rows are written in LID order per switch and T, which keeps
 * the writes within a few cache lines per row.
 */
#include "config.h"
#include "ftree_model.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ft_run {
	const struct ft_model *m;
	uint32_t gen;
	uint32_t *dstamp;      /* [nsw] == gen: in D */
	uint32_t *rstamp;      /* [nsw] == gen: R known, value in rval */
	uint8_t *rval;
	uint32_t *cand_head;   /* [nsw] first down candidate of a D switch */
	uint32_t *cand_next;   /* [up links] */
	uint8_t *cand_port;
	uint32_t *queue;
	uint32_t *disp;        /* [up links] displaced routes taken by each up port */
	uint8_t cands[256];
	uint64_t displaced;
};

static int reach(struct ft_run *x, uint32_t s)
{
	const struct ft_model *m = x->m;
	if (x->dstamp[s] == x->gen)
		return 1;
	if (x->rstamp[s] == x->gen)
		return x->rval[s];
	int r = 0;
	for (uint32_t e = m->up_off[s]; e < m->up_off[s + 1] && !r; e++)
		r = reach(x, m->up_peer[e]);
	x->rstamp[s] = x->gen;
	x->rval[s] = (uint8_t)r;
	return r;
}

static void mark_down_set(struct ft_run *x, uint32_t t)
{
	const struct ft_model *m = x->m;
	const struct sm_fabric *f = m->f;
	uint32_t qh = 0, qt = 0;

	x->dstamp[t] = x->gen;
	x->cand_head[t] = SM_NONE;
	x->queue[qt++] = t;
	while (qh < qt) {
		uint32_t c = x->queue[qh++];
		for (uint32_t e = m->up_off[c]; e < m->up_off[c + 1]; e++) {
			uint32_t p = m->up_peer[e];
			if (x->dstamp[p] != x->gen) {
				x->dstamp[p] = x->gen;
				x->cand_head[p] = SM_NONE;
				x->queue[qt++] = p;
			}
			/* the port on p's side of this link leads down toward T */
			x->cand_port[e] = sm_port(f, m->sw_node[c], m->up_port[e])->peer_port;
			x->cand_next[e] = x->cand_head[p];
			x->cand_head[p] = e;
		}
	}
}

/* Up port for a displaced route: the valid one with the fewest displaced routes. */
static uint8_t displace(struct ft_run *x, uint32_t s, uint32_t j)
{
	const struct ft_model *m = x->m;
	uint32_t b = m->up_off[s], n = m->up_off[s + 1] - b;
	uint32_t best = SM_NONE;

	for (uint32_t i = 0; i < n; i++) {
		uint32_t e = b + (j + i) % n;
		if (!reach(x, m->up_peer[e]))
			continue;
		if (best == SM_NONE || x->disp[e] < x->disp[best])
			best = e;
	}
	if (best == SM_NONE)
		return SM_LFT_NONE;
	x->disp[best]++;
	x->displaced++;
	return m->up_port[best];
}

static void route_target(struct ft_run *x, struct sm_lfts *out, uint32_t t)
{
	const struct ft_model *m = x->m;
	const struct ft_dest *d0 = m->dest + m->dest_off[t];
	uint32_t nd = m->dest_off[t + 1] - m->dest_off[t];

	x->gen++;
	mark_down_set(x, t);
	for (uint32_t s = 0; s < m->nsw; s++) {
		unsigned r = m->rank[s];
		if (r == FT_RANK_NONE || m->comp[s] != m->comp[t])
			continue;
		uint8_t *row = sm_lfts_row(out, s);
		if (s == t) {
			for (uint32_t i = 0; i < nd; i++)
				row[d0[i].lid] = d0[i].port;
			continue;
		}
		if (x->dstamp[s] == x->gen) {
			unsigned nc = 0;
			for (uint32_t e = x->cand_head[s]; e != SM_NONE && nc < sizeof(x->cands); e = x->cand_next[e])
				x->cands[nc++] = x->cand_port[e];
			uint64_t dv = r ? m->div[r - 1] : 1;
			for (uint32_t i = 0; i < nd; i++)
				row[d0[i].lid] = nc == 1 ? x->cands[0] : x->cands[(d0[i].idx / dv) % nc];
			continue;
		}
		if (!reach(x, s))
			continue;
		uint32_t so = m->slot_off[s], u = m->slot_off[s + 1] - so;
		uint64_t dv = m->div[r];
		for (uint32_t i = 0; i < nd; i++) {
			uint32_t j = (uint32_t)((d0[i].idx / dv) % u);
			uint8_t p = m->slot_port[so + j];
			if (p) {
				uint32_t q = ft_peer_slot(m, s, p);
				if (q != SM_NONE && reach(x, q)) {
					row[d0[i].lid] = p;
					continue;
				}
			}
			row[d0[i].lid] = displace(x, s, j);
		}
	}
}

int ft_route(const struct ft_model *m, struct sm_lfts *out, char *msg, size_t msglen)
{
	struct ft_run x = { .m = m };
	size_t ne = (size_t)m->up_off[m->nsw] + 1, ns = (size_t)m->nsw + 1;
	int rc = -ENOMEM;

	x.dstamp = calloc(ns, sizeof(*x.dstamp));
	x.rstamp = calloc(ns, sizeof(*x.rstamp));
	x.rval = calloc(ns, 1);
	x.cand_head = malloc(ns * sizeof(*x.cand_head));
	x.cand_next = malloc(ne * sizeof(*x.cand_next));
	x.cand_port = malloc(ne);
	x.queue = malloc(ns * sizeof(*x.queue));
	x.disp = calloc(ne, sizeof(*x.disp));
	if (!x.dstamp || !x.rstamp || !x.rval || !x.cand_head || !x.cand_next || !x.cand_port ||
	    !x.queue || !x.disp) {
		snprintf(msg, msglen, "ftree: out of memory");
		goto out;
	}
	uint64_t bad = 0;
	uint32_t bad_from = SM_NONE, bad_to = SM_NONE;
	for (uint32_t i = 0; i < m->n_tgt; i++) {
		uint32_t t = m->tgt_order[i];
		route_target(&x, out, t);
		if (m->rank[t] != 0)
			continue;
		/* every leaf must reach every other leaf of its component up then down */
		for (uint32_t s = 0; s < m->nsw; s++)
			if (m->rank[s] == 0 && s != t && m->comp[s] == m->comp[t] && !reach(&x, s)) {
				bad++;
				bad_from = s;
				bad_to = t;
			}
	}
	if (bad) {
		snprintf(msg, msglen,
			 "ftree: %" PRIu64 " leaf pairs have no up/down path (e.g. leaf 0x%016" PRIx64 " to leaf 0x%016" PRIx64 "): the tree is degraded beyond what fat-tree routing can serve",
			 bad, m->f->nodes[m->sw_node[bad_from]].guid, m->f->nodes[m->sw_node[bad_to]].guid);
		rc = -EHOSTUNREACH;
		goto out;
	}
	uint32_t leaves = 0, parts = 0;
	for (uint32_t s = 0; s < m->nsw; s++) {
		leaves += m->rank[s] == 0;
		/* a component is counted at its first leaf (comp[] names its lowest slot) */
		if (m->rank[s] == 0) {
			uint32_t first = s;
			for (uint32_t q = 0; q < s; q++)
				if (m->rank[q] == 0 && m->comp[q] == m->comp[s]) {
					first = q;
					break;
				}
			parts += first == s;
		}
	}
	int n = snprintf(msg, msglen,
			 "ftree: %u levels, %u leaves, %u switches, %u CA ports; %" PRIu64 " routes moved off missing links",
			 m->h + 1u, leaves, m->nsw, m->n_hosts, x.displaced);
	if (parts > 1 && n > 0 && (size_t)n < msglen)
		n += snprintf(msg + n, msglen - (size_t)n,
			      "; fabric split into %u disconnected parts: pairs across them are unreachable", parts);
	if (m->unranked && n > 0 && (size_t)n < msglen)
		snprintf(msg + n, msglen - (size_t)n, "; %u switches reach no CA and were left unrouted", m->unranked);
	rc = 0;
out:
	free(x.dstamp);
	free(x.rstamp);
	free(x.rval);
	free(x.cand_head);
	free(x.cand_next);
	free(x.cand_port);
	free(x.queue);
	free(x.disp);
	return rc;
}
