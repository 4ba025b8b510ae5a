/* SPDX-License-Identifier: MIT */
/*
 * DOC: ftree's incremental reroute (the engine's reroute() hook, engine.h)
 *
 * ftree routes destination switch by destination switch (route.c): the
 * columns of T's LIDs depend only on the model and on the displacement
 * state of the T's routed before it (displace.c), which only moved routes
 * change. After cables are lost, a T none of whose routes crossed one (no
 * switch's entry for a LID of T names a lost port) keeps exactly its
 * routes: every switch it used is still there with the same up-slot
 * table, every parent on its paths still reaches T (its own route there
 * crossed nothing lost), so its ideal entries are still valid and nothing
 * of it is displaced. So only the T's hit are routed again, in routing
 * order, from fresh columns; every other LFT entry is kept. A T is routed
 * into a small table of its own LIDs and merged into the full one after
 * (route_t(), merge_t()), and when the LIDs to route again would be more
 * than FT_REROUTE_MAX_SAVED entries (a leaf's uplink: every leaf has a
 * host on that slot, so every T is hit) a full run is as cheap.
 *
 * The tree must have been complete before the loss (no up slot missing).
 * Then the result is a cold ftree run's on the degraded tree for every
 * endpoint LID: the T's not hit displace nothing there either, so the
 * displacement state (displace.c: the shift windows of moved routes) each
 * hit T sees is the one a cold run gives it. Switch LIDs carry management
 * routes only, and a cold run also moves some that crossed nothing lost
 * (where a detour starts depends on how many links a switch has left):
 * after a switch-switch cable is lost the LIDs of every switch without
 * hosts are routed again (a leaf's own LID moves only if it was hit), so
 * the tables are exactly a cold run's (and a heavy sweep rewrites
 * nothing). On a tree degraded already, other destinations' routes were
 * moved, and their shift windows, which a cold run would weigh, are not
 * known from the tables alone: placed without them, the moved routes came
 * out one above a cold run's worst shift congestion on 2,048-host trees
 * (tests/test_reroute.c), so ftree routes such a tree in full.
 *
 * Refused with -EAGAIN (the loader routes in full) when the tree was
 * degraded already (above), when the model is not the same apart from the
 * lost cables' slots: ranks, components, up-slot
 * tables (a parent gone), index divisors, destinations and their order;
 * when a rerouted T leaves a leaf pair without an up/down path (the cold
 * run's refusal then says why); when the moved routes would make a cold
 * run's repair pass run (repair.c, ft_repair_wanted: it may change any
 * destination's entries, so it is left to the full run). A destination that lost its cable (a
 * host) is cleared from every switch (as OpenSM's full routing leaves a
 * LID without a port at OSM_NO_PATH; its LID stays reserved in the LID
 * store for when it comes back). Host indices are stable (model.h), so
 * the other destinations keep theirs and the T's hit by lost switch
 * cables in the same sweep are routed again as usual (dests_kept());
 * if the indices did change (no common host-port layout), the whole
 * tree is routed again. A destination that appeared (a host back, no
 * cable lost: the chain's reroute_nodes.h) has its destination switch
 * routed again, all of its LIDs, as a cold run routes them when every
 * other destination kept its index.
 *
 * Cost: a model build (O(switches + ports + LIDs); the previous fabric's
 * is kept from when it was routed, stash.c, or built too), one scan of the
 * previous row of each switch that lost a cable, the hit T's routing:
 * O(hit T's x switches) plus their entries, and for each hit T one pass
 * over its columns in the table (one or two cache lines per switch). One
 * aggregation-core link of a 40,960-host tree: 154 T's, 2,426 LIDs
 * (BENCHMARKS.md "Session 7, incr"; "Session 8, rrft" for the costs).
 */
#include "config.h"
#include "routing/ftree/run.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SAME(a, b, n) (!memcmp((a), (b), (size_t)(n) * sizeof(*(a))))

/* The model of the new fabric is the previous one minus lost slots (1), or why not (0, in msg). */
static int same_tree(const struct ft_model *m, const struct ft_model *pm, int *dests_same, char *msg, size_t len)
{
	const char *why = NULL;
	uint32_t ns = m->nsw;
	if (ns != pm->nsw || m->h != pm->h || !SAME(m->rank, pm->rank, ns) || !SAME(m->comp, pm->comp, ns) ||
	    !SAME(m->by_rank, pm->by_rank, ns))
		why = "ranks or components changed";
	else if (!SAME(m->slot_off, pm->slot_off, ns + 1) || !SAME(m->div, pm->div, FT_MAX_RANK + 2))
		why = "up-slot tables changed";
	for (uint32_t k = 0; !why && k < m->slot_off[ns]; k++)
		if ((m->slot_peer[k] != pm->slot_peer[k] && m->slot_peer[k] != SM_NONE) ||
		    (m->slot_port[k] != pm->slot_port[k] && m->slot_port[k]))
			why = "an up slot leads elsewhere";
	/* a slot already missing before: other destinations' routes were moved, and where is not known here */
	for (uint32_t k = 0; !why && k < pm->slot_off[ns]; k++)
		if (!pm->slot_port[k])
			why = "the tree was degraded already";
	if (why) {
		snprintf(msg, len, "ftree: incremental reroute not possible (%s)", why);
		return 0;
	}
	*dests_same = m->n_dest == pm->n_dest && m->n_tgt == pm->n_tgt && SAME(m->dest_off, pm->dest_off, ns + 1) &&
		      SAME(m->tgt_order, pm->tgt_order, m->n_tgt);
	for (uint32_t i = 0; *dests_same && i < m->n_dest; i++)
		*dests_same = m->dest[i].lid == pm->dest[i].lid && m->dest[i].port == pm->dest[i].port &&
			      m->dest[i].idx == pm->dest[i].idx;
	return 1;
}

/*
 * Every destination of m is pm's with the same LID, port and index, in the
 * same order (stable host indices, model.h): a host that went away left
 * its slot empty and moved nothing else. Then the T's hit route as in a
 * cold run on m, and the other T's keep their columns.
 */
static int dests_kept(const struct ft_model *m, const struct ft_model *pm)
{
	if (m->n_idx != pm->n_idx || m->n_dest > pm->n_dest)
		return 0;
	for (uint32_t s = 0; s < m->nsw; s++) {
		uint32_t k = pm->dest_off[s];
		for (uint32_t i = m->dest_off[s]; i < m->dest_off[s + 1]; i++, k++) {
			const struct ft_dest *d = &m->dest[i];
			while (k < pm->dest_off[s + 1] && pm->dest[k].lid != d->lid)
				k++;
			if (k == pm->dest_off[s + 1] || pm->dest[k].port != d->port || pm->dest[k].idx != d->idx)
				return 0;
		}
	}
	/* targets in the same order, those that lost every destination left out */
	for (uint32_t i = 0, k = 0; i < m->n_tgt; i++, k++) {
		while (k < pm->n_tgt && pm->tgt_order[k] != m->tgt_order[i])
			k++;
		if (k == pm->n_tgt)
			return 0;
	}
	return 1;
}

/* LID -> destination switch of model m (SM_NONE: not a destination); sw (may be NULL): LIDs of switches. */
static uint32_t *target_of_lid(const struct ft_model *m, size_t nl, uint8_t *sw, uint32_t *idx)
{
	uint32_t *t = malloc(nl * sizeof(*t));
	if (!t)
		return NULL;
	for (size_t i = 0; i < nl; i++)
		t[i] = SM_NONE;
	for (uint32_t s = 0; s < m->nsw; s++)
		for (uint32_t k = m->dest_off[s]; k < m->dest_off[s + 1]; k++)
			if (m->dest[k].lid < nl) {
				t[m->dest[k].lid] = s;
				if (sw)
					sw[m->dest[k].lid] = !m->dest[k].port;
				if (idx)
					idx[m->dest[k].lid] = m->dest[k].idx;
			}
	return t;
}

enum { HIT_CA = 1, HIT_SWITCH = 2 };
/* Entries saved while routing again, at most (beyond, most of the table moves: route it in full). */
#define FT_REROUTE_MAX_SAVED ((size_t)64 << 20)

struct rr {
	const struct sm_reroute *rr;
	struct sm_lfts *out;
	size_t nl;
	uint32_t *t_new, *t_old;   /* LID -> destination switch, new and previous model */
	uint8_t *hit;              /* [nsw] destination switch to route again: HIT_* of the LIDs hit */
	uint8_t *sw_lid;           /* [nl] the LID is a switch's own (a destination with port 0) */
	uint32_t *idx;             /* [nl] spreading index of the destination (new model) */
	uint32_t *stamp, *queue, gen; /* [nsw] for ancestor() */
	uint32_t n_lids;           /* the LIDs routed again */
	struct ft_dest *dest;      /* the model's destinations, the hit T's numbered 0 .. nd - 1 (count_lids) */
	uint8_t *scratch;          /* [switches x a T's LIDs] T's new entries (route_t) */
	uint32_t n_hit, lids_gone;
	uint64_t entries;          /* entries that differ from the previous routes */
};

/* Mark what crossed the lost cables: T's hit, and LIDs no longer destinations cleared. */
/* Switch s is T or above T (an up path from t reaches it) in model m. */
static int ancestor(struct rr *r, const struct ft_model *m, uint32_t s, uint32_t t)
{
	uint32_t qh = 0, qt = 0;
	r->gen++;
	r->queue[qt++] = t;
	r->stamp[t] = r->gen;
	while (qh < qt) {
		uint32_t c = r->queue[qh++];
		if (c == s)
			return 1;
		for (uint32_t e = m->up_off[c]; e < m->up_off[c + 1]; e++) {
			uint32_t p = m->up_peer[e];
			if (r->stamp[p] != r->gen) {
				r->stamp[p] = r->gen;
				r->queue[qt++] = p;
			}
		}
	}
	return 0;
}

/*
 * Switch c's route toward T's LID lid (the previous tables: T was not hit,
 * so they hold for it) climbs to a switch that routes down, and that one
 * is T or above T: c has an up/down path to T (ft_reach in route.c).
 */
static int climbs_to_t(struct rr *r, const struct ft_model *m, uint32_t c, uint32_t t, size_t lid)
{
	const struct sm_lfts *pl = r->rr->prev;
	for (unsigned hop = 0; hop < 2 * FT_CHAIN; hop++) {
		uint8_t e = sm_lfts_row(pl, c)[lid];
		if (e == SM_LFT_NONE)
			return 0;
		uint32_t q = e ? ft_peer_slot(m, c, e) : SM_NONE;
		if (!e || q == SM_NONE || m->rank[q] == FT_RANK_NONE || m->rank[q] <= m->rank[c])
			return ancestor(r, m, c, t);
		c = q;
	}
	return 0;
}

/*
 * The new entry of switch s (an end of a lost cable) for T's LID lid, as
 * route.c's rotation over s's shorter list gives it: any_up at the lower
 * end (the first parent from slot j that reaches T), route_detour at the
 * upper end (the first child from T's first index that reaches T or
 * detours itself: routes down, or climbs to T). Written into the output
 * with T's other LIDs (a detour covers all of them); 0 when it cannot say
 * (no such neighbour: T is routed again in full).
 */
static int rotate(struct rr *r, const struct ft_model *m, uint32_t s, uint32_t t, size_t lid, int lower)
{
	const uint32_t *off = lower ? m->up_off : m->dn_off, *peer = lower ? m->up_peer : m->dn_peer;
	const uint8_t *port = lower ? m->up_port : m->dn_port;
	uint32_t b = off[s], n = off[s + 1] - b, start;
	const struct ft_dest *d0 = m->dest + m->dest_off[t];
	if (!n)
		return 0;
	if (lower) {
		uint32_t so = m->slot_off[s], u = m->slot_off[s + 1] - so, dv = m->div[m->rank[s]];
		start = u && dv ? r->idx[lid] / dv % u : 0;
	} else {
		start = d0[0].idx;
	}
	for (uint32_t i = 0, e = b + start % n; i < n; i++, e = e + 1 == b + n ? b : e + 1) {
		uint32_t q = peer[e];
		uint8_t qe = sm_lfts_row(r->rr->prev, q)[lid];
		int ok = lower ? climbs_to_t(r, m, q, t, lid)
			       : qe != SM_LFT_NONE && (!qe || ft_peer_slot(m, q, qe) == SM_NONE ||
						       m->rank[ft_peer_slot(m, q, qe)] < m->rank[q] ||
						       climbs_to_t(r, m, q, t, lid));
		if (!ok)
			continue;
		uint8_t *row = sm_lfts_row(r->out, s);
		if (lower) {
			r->entries += row[lid] != port[e];
			r->rr->changed[lid] |= row[lid] != port[e];
			row[lid] = port[e];
		} else {
			for (uint32_t k = 0; k < m->dest_off[t + 1] - m->dest_off[t]; k++) {
				r->entries += row[d0[k].lid] != port[e];
				r->rr->changed[d0[k].lid] |= row[d0[k].lid] != port[e];
				row[d0[k].lid] = port[e];
			}
		}
		return 1;
	}
	return 0;
}

static void find_hit(struct rr *r, const struct ft_model *m, const struct ft_model *pm, const struct sm_fabric *pf)
{
	const struct sm_lfts *pl = r->rr->prev;
	for (uint32_t k = 0; k < r->rr->n_removed; k++) {
		uint32_t i = r->rr->removed[k];
		if (i >= pf->n_ports)
			continue;
		const struct sm_port *pt = &pf->ports[i];
		uint32_t s = pt->node < pl->n_nodes ? pl->slot_of_node[pt->node] : SM_NONE;
		if (s == SM_NONE)
			continue; /* an endpoint's end: its LIDs are cleared below */
		const uint8_t *row = sm_lfts_row(pl, s);
		for (size_t lid = 1; lid < r->nl; lid++) {
			uint32_t t = r->t_new[lid];
			if (row[lid] != pt->num || t == SM_NONE)
				continue;
			r->n_hit += !r->hit[t];
			r->hit[t] |= r->sw_lid[lid] ? HIT_SWITCH : HIT_CA;
		}
	}
	/*
	 * A switch that lost a cable to another switch starts two rotations
	 * elsewhere (route.c), which moves management routes to switch LIDs
	 * that crossed nothing lost: any_up (the first parent that reaches T,
	 * from slot j of the up list: its length changed) at the lower end, and
	 * route_detour (the first usable child, from the destination's index,
	 * over the down list) at the upper end. The LIDs of switches without
	 * hosts that the ends routed that way are placed again, so the tables
	 * stay a cold run's (a heavy sweep then agrees): their entry at that
	 * end is rotated there (rotate()), the rest of their routes are kept. A leaf's own LID
	 * moves only if it was hit (its ancestors route down to it, the others
	 * climb by their ideal slot).
	 */
	for (uint32_t k = 0; k < r->rr->n_removed; k++) {
		uint32_t i = r->rr->removed[k];
		if (i >= pf->n_ports || pf->ports[i].peer_node == SM_NONE)
			continue;
		const struct sm_port *pt = &pf->ports[i];
		uint32_t s = pt->node < pl->n_nodes ? pl->slot_of_node[pt->node] : SM_NONE;
		uint32_t q = pt->peer_node < pl->n_nodes ? pl->slot_of_node[pt->peer_node] : SM_NONE;
		if (s == SM_NONE || q == SM_NONE || pm->rank[s] == FT_RANK_NONE || pm->rank[q] == FT_RANK_NONE)
			continue;
		uint8_t up[256] = { 0 };
		for (uint32_t e = pm->up_off[s]; e < pm->up_off[s + 1]; e++)
			up[pm->up_port[e]] = 1;
		int lower = pm->rank[s] < pm->rank[q];
		uint32_t so = pm->slot_off[s], u = pm->slot_off[s + 1] - so, dv = pm->div[pm->rank[s]];
		const uint8_t *row = sm_lfts_row(pl, s);
		for (size_t lid = 1; lid < r->nl; lid++) {
			uint32_t t = r->t_new[lid];
			uint8_t e = row[lid];
			if (t == SM_NONE || !r->sw_lid[lid] || r->hit[t] || ft_has_hosts(m, t) || e == SM_LFT_NONE || !e)
				continue;
			int moved;
			if (lower) /* routed up by any_up rather than by the ideal slot */
				moved = up[e] && (!u || !dv || pm->slot_port[so + r->idx[lid] / dv % u] != e);
			else /* a detour: down, to a switch that is not T's ancestor */
				moved = !up[e] && !ancestor(r, m, s, t);
			if (moved && !rotate(r, m, s, t, lid, lower)) {
				r->n_hit++;
				r->hit[t] |= HIT_SWITCH;
			}
		}
	}
	/* destinations that went away (a host that lost its cable): no switch routes to them any more */
	for (size_t lid = 1; lid < r->nl; lid++) {
		if (r->t_old[lid] == SM_NONE || r->t_new[lid] != SM_NONE)
			continue;
		r->lids_gone++;
		for (uint32_t s = 0; s < r->out->n_switches; s++) {
			uint8_t *e = &sm_lfts_row(r->out, s)[lid];
			r->entries += *e != SM_LFT_NONE;
			*e = SM_LFT_NONE;
		}
		r->rr->changed[lid] = 1;
	}
}

/*
 * Destinations that appeared (a host back, stable index: model.h): their
 * destination switch T is routed again, all of its LIDs (a T none of whose
 * routes moved routes them as before, a cold run's). Returns how many.
 */
static uint32_t find_appeared(struct rr *r)
{
	uint32_t n = 0;
	for (size_t lid = 1; lid < r->nl; lid++) {
		uint32_t t = r->t_new[lid];
		if (r->t_old[lid] != SM_NONE || t == SM_NONE)
			continue;
		n++;
		r->n_hit += !r->hit[t];
		r->hit[t] |= r->sw_lid[lid] ? HIT_SWITCH : HIT_CA;
	}
	return n;
}

/* The destinations of T to route again: all of them (a part would start its rotations elsewhere). */
static const struct ft_dest *again(const struct rr *r, const struct ft_model *m, uint32_t t, uint32_t *nd)
{
	(void)r;
	*nd = m->dest_off[t + 1] - m->dest_off[t];
	return m->dest + m->dest_off[t];
}

/*
 * The LIDs to route again (one entry per switch each): 0, or -EAGAIN when
 * so many that a full run is as cheap (a leaf's uplink: every T is hit).
 * Each hit T's destinations get LIDs 0 .. nd - 1 in r->dest (the copy of
 * the model's that the routing run sees, route_t()) and r->scratch room
 * for the largest T's rows.
 */
static int count_lids(struct rr *r, const struct ft_model *m)
{
	uint32_t n = 0, most = 0;
	for (uint32_t t = 0; t < m->nsw; t++) {
		if (!r->hit[t])
			continue;
		uint32_t nd;
		(void)again(r, m, t, &nd);
		n += nd;
		most = nd > most ? nd : most;
		for (uint32_t k = 0; k < nd; k++)
			r->dest[m->dest_off[t] + k].lid = (uint16_t)k;
	}
	r->n_lids = n;
	if ((size_t)n * r->out->n_switches > FT_REROUTE_MAX_SAVED)
		return -EAGAIN;
	r->scratch = malloc((size_t)most * r->out->n_switches + 1);
	return r->scratch ? 0 : -ENOMEM;
}

/* Leading destinations of d0[0 .. nd) with consecutive LIDs (a leaf's hosts): one run of row bytes. */
static uint32_t lid_run(const struct ft_dest *d0, uint32_t nd)
{
	uint32_t k = nd ? 1 : 0;
	while (k < nd && d0[k].lid == d0[k - 1].lid + 1)
		k++;
	return k;
}

/*
 * Route T again into a table of its own LIDs only: r->scratch, a row of
 * nd bytes per switch, all SM_LFT_NONE, T's destinations numbered 0 .. nd
 * - 1 (r->dest, seen by the run through its model). The routing reads
 * and writes T's columns only, through x->col and x->nl, so it gives the
 * same entries as in the full table; 3,584 rows of 17 bytes at 40k hosts
 * stay in the cache (routing into the table itself, after saving and
 * clearing T's columns there, and comparing them after, walked 2 x 3,584
 * scattered cache lines three times per T).
 */
static void route_t(struct rr *r, struct ft_run *x, uint32_t t, uint32_t nd)
{
	memset(r->scratch, SM_LFT_NONE, (size_t)nd * r->out->n_switches);
	x->col = r->scratch;
	x->nl = nd;
	ft_route_dests(x, t, r->dest + x->m->dest_off[t], nd);
}

/* T's new entries (route_t()) into the table at T's LIDs d0: count and mark those that differ. */
static void merge_t(struct rr *r, const struct ft_dest *d0, uint32_t nd)
{
	uint32_t run = lid_run(d0, nd);
	const uint8_t *src = r->scratch;
	uint8_t diff[256] = { 0 }; /* per destination (the first 256): some switch's entry differs */
	const uint32_t ns = r->out->n_switches, ahead = 8; /* rows 44 KB apart: fetch T's lines a few rows ahead */
	for (uint32_t s = 0; s < ns; s++, src += nd) {
		uint8_t *row = sm_lfts_row(r->out, s);
		uint32_t k = 0;
		if (s + ahead < ns) {
			const uint8_t *next = sm_lfts_row(r->out, s + ahead);
			__builtin_prefetch(next + d0[0].lid, 1);
			__builtin_prefetch(next + d0[nd - 1].lid, 1);
		}
		if (run && !memcmp(row + d0[0].lid, src, run))
			k = run;
		for (; k < nd; k++) {
			uint8_t *e = &row[d0[k].lid];
			if (*e == src[k])
				continue;
			r->entries++;
			if (k < sizeof(diff))
				diff[k] = 1;
			else
				r->rr->changed[d0[k].lid] = 1;
			*e = src[k];
		}
	}
	for (uint32_t k = 0; k < nd && k < sizeof(diff); k++)
		r->rr->changed[d0[k].lid] |= diff[k];
}

int ft_reroute_plane(void *state, struct sm_route_ctx *ctx)
{
	const struct sm_reroute *rr = ctx ? ctx->reroute : NULL;
	struct ft_model m, pm, mr;
	struct rr r = { .rr = rr };
	struct ft_run x;
	int rc, dests_same = 0;

	if (!ctx || !ctx->fabric || !ctx->out || !rr || !rr->prev || !rr->prev_fabric || !rr->changed ||
	    rr->prev->top_lid != ctx->out->top_lid || rr->prev->n_switches != ctx->out->n_switches)
		return -EINVAL;
	ctx->msg[0] = 0;
	r.out = ctx->out;
	r.nl = (size_t)ctx->out->top_lid + 1;
	/*
	 * The previous fabric's model: the one kept when it was routed
	 * (stash.c), else built again. Either model refused: the full run
	 * gives the refusal (or routes what this cannot).
	 */
	if (!ft_stash_take(state, ctx->plane, rr->prev_fabric, rr->prev, &pm) &&
	    ft_model_build(&pm, rr->prev_fabric, ctx->plane, rr->prev, state, ctx->msg, sizeof(ctx->msg)))
		return -EAGAIN;
	if (ft_model_build(&m, ctx->fabric, ctx->plane, ctx->out, state, ctx->msg, sizeof(ctx->msg))) {
		ft_model_free(&pm);
		return -EAGAIN;
	}
	rc = -EAGAIN;
	memset(&x, 0, sizeof(x));
	if (!same_tree(&m, &pm, &dests_same, ctx->msg, sizeof(ctx->msg)))
		goto out;
	rc = -ENOMEM;
	r.sw_lid = calloc(r.nl, 1);
	r.idx = calloc(r.nl, sizeof(*r.idx));
	r.t_new = r.sw_lid && r.idx ? target_of_lid(&m, r.nl, r.sw_lid, r.idx) : NULL;
	r.t_old = target_of_lid(&pm, r.nl, NULL, NULL);
	r.hit = calloc((size_t)m.nsw + 1, 1);
	r.stamp = calloc((size_t)m.nsw + 1, sizeof(*r.stamp));
	r.queue = malloc(((size_t)m.nsw + 1) * sizeof(*r.queue));
	/* the run sees the model with its own copy of the destinations (count_lids() renumbers the hit T's) */
	r.dest = malloc(((size_t)m.n_dest + 1) * sizeof(*r.dest));
	if (r.dest)
		memcpy(r.dest, m.dest, (size_t)m.n_dest * sizeof(*r.dest));
	mr = m;
	mr.dest = r.dest;
	if (!r.t_new || !r.t_old || !r.hit || !r.stamp || !r.queue || !r.dest || ft_run_init(&x, &mr, ctx->out)) {
		snprintf(ctx->msg, sizeof(ctx->msg), "ftree: out of memory");
		goto out;
	}
	find_hit(&r, &m, &pm, rr->prev_fabric);
	uint32_t appeared = find_appeared(&r);
	rc = -EAGAIN;
	if (r.n_hit && !dests_same && !(appeared ? !r.lids_gone && dests_kept(&pm, &m) : dests_kept(&m, &pm))) {
		snprintf(ctx->msg, sizeof(ctx->msg), "ftree: incremental reroute not possible (destinations renumbered)");
		goto out;
	}
	rc = count_lids(&r, &m);
	if (rc) {
		if (rc == -EAGAIN)
			snprintf(ctx->msg, sizeof(ctx->msg), "ftree: incremental reroute: %u destination switches and %u "
				 "LIDs hit, a full run is cheaper", r.n_hit, r.n_lids);
		goto out;
	}
	rc = -EAGAIN;
	for (uint32_t i = 0; i < m.n_tgt; i++) {
		uint32_t t = m.tgt_order[i], bad_from = SM_NONE, nd;
		if (!r.hit[t])
			continue;
		const struct ft_dest *d0 = again(&r, &m, t, &nd);
		if (!nd)
			continue;
		route_t(&r, &x, t, nd);
		if (ft_bad_pairs(&x, t, &bad_from)) {
			snprintf(ctx->msg, sizeof(ctx->msg), "ftree: incremental reroute: a leaf pair lost every up/down path");
			goto out;
		}
		merge_t(&r, d0, nd);
	}
	if (ft_repair_wanted(&x)) { /* a cold run would repair (repair.c): do not repeat it here */
		snprintf(ctx->msg, sizeof(ctx->msg), "ftree: incremental reroute: the moved routes need the repair pass");
		goto out;
	}
	snprintf(ctx->msg, sizeof(ctx->msg),
		 "ftree: incremental: %u of %u destination switches routed again, %u LIDs gone, %" PRIu64
		 " entries changed; %" PRIu64 " routes moved off missing links",
		 r.n_hit, m.n_tgt, r.lids_gone, r.entries, x.displaced);
	rc = 0;
out:
	ft_run_free(&x);
	free(r.t_new);
	free(r.t_old);
	free(r.sw_lid);
	free(r.idx);
	free(r.stamp);
	free(r.queue);
	free(r.scratch);
	free(r.dest);
	free(r.hit);
	ft_stash_put(state, ctx->plane, ctx->fabric, &m);   /* the next reroute starts from this fabric */
	ft_model_free(&pm);
	return rc;
}
