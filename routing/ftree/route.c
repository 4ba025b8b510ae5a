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
 *     R(s) = D(s) or R(some parent) (memoised per T for leaves; for a T
 *     above the leaves, marked outright as D and everything below it).
 *     Endpoint routes are thus up* then down*, never down-then-up, which
 *     keeps the credit dependencies of endpoint traffic acyclic.
 *  3. The up port for destination index idx at a rank-r switch is the
 *     ideal slot (idx / div[r]) mod U(s) of its up-slot table: on a full
 *     tree each upper switch then carries a disjoint set of destinations,
 *     and every shift permutation is congestion free. When the ideal slot's
 *     link is missing, or its parent cannot reach T (it lost its link
 *     toward T), only that route moves (displace()): to a valid parent
 *     chosen so that displaced destinations do not stack, on the up link
 *     within one shift window or on the down link into T (see there).
 *  4. Switches with no up/down path to T get a management-only route:
 *     a detour down (route_detour) or, for a leaf toward a spine it lost,
 *     an up-down-up valley (route_valleys). No endpoint route passes a
 *     detour; valleys only carry endpoint traffic to switch LIDs.
 *
 * LFT entries are written into a column-major (LID-major) scratch table,
 * so that one destination's entries over all switches are contiguous, and
 * transposed into the row-major struct sm_lfts at the end: on a 32k-host
 * 3-level tree (110 M entries) writing rows directly costs a cache and TLB
 * miss per entry.
 *
 * Cost: O(ancestors + switches) per destination switch plus O(1) per LFT
 * entry, plus O(up ports) per displaced route.
 */
#include "config.h"
#include "routing/ftree/model.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FT_EXN 8                 /* displaced destinations remembered per down link */
#define FT_SRC_ALL UINT32_MAX    /* displaced for every source */
#define FT_PATH_MAX (FT_MAX_RANK + 1) /* down links of a route, at most */

struct ft_extra {
	uint32_t idx;  /* destination index */
	uint32_t src;  /* source class: first leaf (in order) below the displacing switch, or FT_SRC_ALL */
	uint32_t span; /* leaves below the displacing switch */
};

/* Entry for LID lid of the switch whose column base is c (x->col + slot). */
#define COL(c, lid) ((c)[(size_t)(lid) * x->m->nsw])

struct ft_run {
	const struct ft_model *m;
	uint32_t gen;
	uint32_t *dstamp;      /* [nsw] == gen: in D */
	uint32_t *rstamp;      /* [nsw] == gen: R known, value in rval */
	int rcomplete;         /* R was computed for every switch (mark_reach_set): unmarked means no */
	uint32_t *xstamp;      /* [nsw] == gen: no up/down path, but a detour down (route_detour) */
	uint32_t *vstamp;      /* [nsw] == gen: routed by a valley (route_valleys) */
	uint32_t *valley;      /* [nsw] switches left for route_valleys, ascending rank */
	uint32_t nvalley;
	uint8_t *rval;
	uint32_t *cand_head;   /* [nsw] first down candidate of a D switch */
	uint32_t *cand_next;   /* [up links] */
	uint8_t *cand_port;
	uint32_t *queue;
	uint32_t *disp;        /* [up links] displaced routes taken by each up port */
	uint32_t *last;        /* [up links] 1 + index of the last destination displaced to it, 0 none */
	uint32_t *first;       /* [up links] 1 + index of the first one */
	uint32_t nleaf;        /* leaves with CAs (the first entries of the routing order) */
	uint32_t nidx;         /* host indices 0..nidx-1 (shift permutations wrap there) */
	struct ft_extra *ex;   /* [up links * FT_EXN] displaced destinations sent down each link */
	uint32_t *exn;         /* [up links] entries recorded (may exceed FT_EXN: counted, not kept) */
	uint32_t t;            /* destination switch being routed */
	uint32_t *up_owner;    /* [up links] the switch whose up port this is */
	uint32_t *ord;         /* [nsw] source class: position in routing order of the first leaf below */
	uint32_t *span;        /* [nsw] leaves below a switch (1 for a leaf) */
	uint32_t *pload;       /* [nsw] destinations whose first displacement (rep) went to this switch */
	uint32_t *rep;         /* [n_dest] parent a destination was first displaced to, SM_NONE */
	uint8_t *col;          /* [(top_lid+1) * nsw] the LFTs column-major (LID-major), see ft_route */
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
	if (x->rcomplete)
		return 0;
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

/* Down port a D switch q uses toward the destination with index idx (same rule as route_target). */
/* Down link (as the child's up-port index) a D switch q uses toward index idx; same rule as route_target. */
static uint32_t down_link(const struct ft_run *x, uint32_t q, uint32_t idx)
{
	const struct ft_model *m = x->m;
	unsigned nc = 0, r = m->rank[q];
	for (uint32_t e = x->cand_head[q]; e != SM_NONE; e = x->cand_next[e])
		nc++;
	if (nc <= 1)
		return x->cand_head[q]; /* the usual case: one link down toward T */
	uint32_t k = (idx / (r ? m->div[r - 1] : 1)) % nc;
	uint32_t e = x->cand_head[q];
	while (k--)
		e = x->cand_next[e];
	return e;
}

/*
 * The down links (as child up-port indices) a route toward destination idx
 * takes after entering parent q: climbing along ideal slots until it meets
 * a switch of D, then down toward T. Stops (returning what it has) where a
 * hop would itself be displaced, since that choice is not made yet: then
 * *unknown is set.
 */
static unsigned down_path(struct ft_run *x, uint32_t q, uint32_t idx, uint32_t *links, int *unknown)
{
	const struct ft_model *m = x->m;
	unsigned n = 0, guard = 0;
	uint32_t cur = q;
	while (x->dstamp[cur] != x->gen) {
		uint32_t so = m->slot_off[cur], u = m->slot_off[cur + 1] - so;
		*unknown = 1;
		if (!u || ++guard > FT_MAX_RANK + 1)
			return 0;
		uint32_t p = m->slot_peer[so + idx / m->div[m->rank[cur]] % u];
		if (p == SM_NONE || !reach(x, p))
			return 0;
		*unknown = 0;
		cur = p;
	}
	while (cur != x->t && n < FT_PATH_MAX) {
		uint32_t e = down_link(x, cur, idx);
		if (e == SM_NONE)
			break;
		links[n++] = e;
		cur = x->up_owner[e];
	}
	return n;
}

/*
 * Would destination idx, displaced by source class src, stack on down link
 * e with a displaced destination recorded there? Two displaced
 * destinations meet in one shift permutation only if both are displaced
 * for the sources that send to them in that shift: always when one of
 * them is displaced for every source (FT_SRC_ALL), else only when their
 * sources are the same or neighbours in index order (a shift's sources of
 * one leaf's destinations span at most two leaves, or two pods).
 */
static int near(const struct ft_run *x, uint32_t a, uint32_t sa, uint32_t b, uint32_t sb)
{
	uint32_t d = a > b ? a - b : b - a, w = sa > sb ? sa : sb;
	return d <= w || (a < x->nleaf && b < x->nleaf && d + w >= x->nleaf);
}

static unsigned stack_count(const struct ft_run *x, uint32_t e, uint32_t idx, uint32_t src, uint32_t span)
{
	unsigned c = x->exn[e] > FT_EXN ? x->exn[e] - FT_EXN : 0;
	for (unsigned k = 0; k < x->exn[e] && k < FT_EXN; k++) {
		const struct ft_extra *p = &x->ex[(size_t)e * FT_EXN + k];
		if (p->idx == idx)
			continue;
		/* destinations sharing a link into a subtree of w leaves have sources within w leaves */
		uint32_t w = x->span[x->up_owner[e]];
		if (p->src == FT_SRC_ALL || src == FT_SRC_ALL ||
		    near(x, p->src, p->span > w ? p->span : w, src, span))
			c++;
	}
	return c;
}

static void stack_add(struct ft_run *x, uint32_t e, uint32_t idx, uint32_t src, uint32_t span)
{
	for (unsigned k = 0; k < x->exn[e] && k < FT_EXN; k++) {
		struct ft_extra *p = &x->ex[(size_t)e * FT_EXN + k];
		if (p->idx == idx && p->src == src)
			return;
	}
	if (x->exn[e] < FT_EXN)
		x->ex[(size_t)e * FT_EXN + x->exn[e]] = (struct ft_extra){ idx, src, span };
	x->exn[e]++;
}

/*
 * Up port for a displaced route of destination di (index into m->dest) at
 * switch s, whose ideal slot is j of u (slot = idx / dv mod u). Cost of a
 * candidate parent = displaced destinations it would stack with on s's up
 * link (another one within a window of u consecutive slot numbers
 * idx / dv: a shift sends both) plus those it would stack with on the
 * last down link of its path (into the destination switch, where extra
 * destinations collide), plus 1 when the parent would have to displace
 * the route again (its path is not known yet; treating it as free steers
 * everything onto the same broken parent). Ties prefer no up-link stacking, then the parent this destination was
 * already displaced to (fewer extra down links per destination), then a
 * weighted load (see there), rotating from the ideal slot. Every candidate
 * is scored unless one is perfect (about 2x the routing time of stopping
 * at the first one free of stacking; seed 2 at 3% removed needs it).
 */
static uint8_t displace(struct ft_run *x, uint32_t s, uint32_t j, uint32_t u, uint32_t dv, uint32_t di,
		       uint32_t src)
{
	const struct ft_model *m = x->m;
	uint32_t b = m->up_off[s], n = m->up_off[s + 1] - b;
	uint32_t best = SM_NONE, best_path[FT_PATH_MAX];
	unsigned best_np = 0;
	uint64_t best_score = UINT64_MAX;
	uint32_t idx = m->dest[di].idx;

	uint32_t e = b + j % n;
	for (uint32_t i = 0; i < n; i++, e = e + 1 == b + n ? b : e + 1) {
		uint32_t q = m->up_peer[e];
		if (!reach(x, q))
			continue;
		/* indices grow along the run; the first one stands in for the wrap-around */
		uint32_t w = idx / dv;
		uint64_t up = x->last[e] && (w - (x->last[e] - 1) / dv < u ||
					     (idx < x->nidx && (x->first[e] - 1) / dv + (x->nidx + dv - 1) / dv - w < u));
		/*
		 * Below the stacking terms, a weighted load (random permutations):
		 * a destination without a parent yet goes to the parent fewest
		 * displaced destinations went to (every leaf's up link to that
		 * parent carries them), then the up port with the fewest displaced
		 * routes, then the last down link with the fewest displaced
		 * destinations from any source.
		 */
		uint64_t pl = x->rep[di] == SM_NONE ? x->pload[q] : 0;
		uint64_t rp = (uint64_t)(q != x->rep[di]);
		uint64_t score = (up << 48) + (up << 40) + (rp << 32) + ((pl > 0xffff ? 0xffff : pl) << 20) +
				 ((x->disp[e] > 0xffff ? 0xffff : x->disp[e]) << 8);
		/* the down path only adds to the score: skip it when this parent cannot win */
		if (score >= best_score)
			continue;
		uint32_t path[FT_PATH_MAX];
		int unknown = 0;
		unsigned np = down_path(x, q, idx, path, &unknown);
		/* a parent that would displace the route again is no free choice */
		uint64_t down = (uint64_t)unknown;
		if (np)
			down += stack_count(x, path[np - 1], idx, src, x->span[s]);
		uint64_t load = np ? x->exn[path[np - 1]] : 0;
		score += (down << 48) + (load > 0xffff ? 0xffff : load);
		if (score < best_score) {
			best_score = score;
			best = e;
			best_np = np;
			memcpy(best_path, path, np * sizeof(*path));
			/*
			 * Nothing stacks and the destination keeps its parent: only
			 * a parallel link to the same parent could score lower.
			 */
			if (!(score >> 32))
				break;
		}
	}
	if (best == SM_NONE)
		return SM_LFT_NONE;
	uint32_t q = m->up_peer[best];
	for (unsigned k = 0; k < best_np; k++)
		stack_add(x, best_path[k], idx, src, x->span[s]);
	if (x->rep[di] == SM_NONE) {
		x->rep[di] = q;
		x->pload[q]++;
	}
	x->disp[best]++;
	x->last[best] = idx + 1;
	if (!x->first[best])
		x->first[best] = idx + 1;
	x->displaced++;
	return m->up_port[best];
}

/*
 * For a destination switch above the leaves few switches have an up/down
 * path (T's ancestors and their descendants), and proving "no path" by
 * climbing from every other switch costs a scan of all its parents. So mark
 * the set outright: everything below the down set D reaches T.
 */
static void mark_reach_set(struct ft_run *x)
{
	const struct ft_model *m = x->m;
	uint32_t qh = 0, qt = 0;
	for (uint32_t s = 0; s < m->nsw; s++)
		if (x->dstamp[s] == x->gen)
			x->queue[qt++] = s;
	while (qh < qt) {
		uint32_t s = x->queue[qh++];
		for (uint32_t e = m->dn_off[s]; e < m->dn_off[s + 1]; e++) {
			uint32_t c = m->dn_peer[e];
			if (x->dstamp[c] == x->gen || x->rstamp[c] == x->gen)
				continue;
			x->rstamp[c] = x->gen;
			x->rval[c] = 1;
			x->queue[qt++] = c;
		}
	}
	x->rcomplete = 1;
}

/* First up port of s, from slot j on, whose parent reaches T. */
static uint8_t any_up(struct ft_run *x, uint32_t s, uint32_t j)
{
	const struct ft_model *m = x->m;
	uint32_t b = m->up_off[s], n = m->up_off[s + 1] - b;
	for (uint32_t i = 0, e = b + j % n; i < n; i++, e = e + 1 == b + n ? b : e + 1)
		if (reach(x, m->up_peer[e]))
			return m->up_port[e];
	return SM_LFT_NONE;
}

/*
 * Switch s has no up/down path to T (a spine toward another spine, an
 * aggregation switch toward a core of another group, a spine that lost its
 * link to T): go down to a child that has one (or has such a detour
 * itself; children are routed first, ranks ascending). Only traffic that a
 * switch itself sends can take such a route: no endpoint route passes
 * through a switch without an up/down path, so the credit-loop freedom of
 * endpoint traffic is untouched.
 */
static void route_detour(struct ft_run *x, uint8_t *col, uint32_t s, const struct ft_dest *d0, uint32_t nd)
{
	const struct ft_model *m = x->m;
	uint32_t b = m->dn_off[s], n = m->dn_off[s + 1] - b;
	/* management traffic: the first usable child, starting at a per-destination offset */
	for (uint32_t i = 0, e = n ? b + d0[0].idx % n : b; i < n; i++, e = e + 1 == b + n ? b : e + 1) {
		uint32_t c = m->dn_peer[e];
		if (x->xstamp[c] == x->gen || reach(x, c)) {
			x->xstamp[s] = x->gen;
			for (uint32_t k = 0; k < nd; k++)
				COL(col, d0[k].lid) = m->dn_port[e];
			return;
		}
	}
	x->valley[x->nvalley++] = s;
}

/*
 * Switches with neither an up/down path nor a detour down (a leaf that lost
 * its link to a spine, toward that spine's LID): climb to a parent that has
 * a route, so the path is up, down, up ("valley"). Such a path serves CA
 * traffic to a switch LID, so its down-to-up turn does enter the credit
 * dependency graph. A cycle would need turns A->leaf->T and T->leaf->A
 * alike; preferring the best connected parent as A (most down links: an
 * intact spine first) makes every turn start at a switch that needs no
 * valley itself whenever the tree has one, which keeps the graph acyclic.
 * Processed top down, so a parent's own valley route exists before its
 * children choose it.
 */
static void route_valleys(struct ft_run *x, const struct ft_dest *d0, uint32_t nd)
{
	const struct ft_model *m = x->m;
	while (x->nvalley) {
		uint32_t s = x->valley[--x->nvalley], best = SM_NONE, best_deg = 0;
		for (uint32_t e = m->up_off[s]; e < m->up_off[s + 1]; e++) {
			uint32_t p = m->up_peer[e];
			uint32_t deg = m->dn_off[p + 1] - m->dn_off[p];
			if ((x->xstamp[p] == x->gen || x->vstamp[p] == x->gen) && (best == SM_NONE || deg > best_deg)) {
				best = e;
				best_deg = deg;
			}
		}
		if (best == SM_NONE)
			continue;
		x->vstamp[s] = x->gen;
		uint8_t *col = x->col + s;
		for (uint32_t i = 0; i < nd; i++)
			COL(col, d0[i].lid) = m->up_port[best];
	}
}

static void route_target(struct ft_run *x, uint32_t t)
{
	const struct ft_model *m = x->m;
	const struct ft_dest *d0 = m->dest + m->dest_off[t];
	uint32_t nd = m->dest_off[t + 1] - m->dest_off[t];

	x->gen++;
	x->t = t;
	x->rcomplete = 0;
	mark_down_set(x, t);
	if (m->rank[t] > 0)
		mark_reach_set(x);
	for (uint32_t k = 0; k < m->nsw; k++) {
		uint32_t s = m->by_rank[k];
		unsigned r = m->rank[s];
		if (r == FT_RANK_NONE || m->comp[s] != m->comp[t])
			continue;
		uint8_t *col = x->col + s;
		if (s == t) {
			for (uint32_t i = 0; i < nd; i++)
				COL(col, d0[i].lid) = d0[i].port;
			continue;
		}
		if (x->dstamp[s] == x->gen) {
			unsigned nc = 0;
			for (uint32_t e = x->cand_head[s]; e != SM_NONE && nc < sizeof(x->cands); e = x->cand_next[e])
				x->cands[nc++] = x->cand_port[e];
			uint32_t dv = r ? m->div[r - 1] : 1;
			for (uint32_t i = 0; i < nd; i++)
				COL(col, d0[i].lid) = nc == 1 ? x->cands[0] : x->cands[(d0[i].idx / dv) % nc];
			continue;
		}
		if (!reach(x, s)) {
			route_detour(x, col, s, d0, nd);
			continue;
		}
		uint32_t so = m->slot_off[s], u = m->slot_off[s + 1] - so;
		uint32_t dv = m->div[r];
		/* above the leaves consecutive destinations share a slot: check each slot once */
		uint32_t last_j = UINT32_MAX;
		int last_ok = 0;
		for (uint32_t i = 0; i < nd; i++) {
			uint32_t j = d0[i].idx / dv % u;
			if (j != last_j) {
				uint32_t q = m->slot_peer[so + j];
				last_j = j;
				last_ok = q != SM_NONE && reach(x, q);
			}
			if (last_ok) {
				COL(col, d0[i].lid) = m->slot_port[so + j];
				continue;
			}
			/* missing link: only this source is displaced; else the parent lost its way to T */
			uint32_t src = m->slot_port[so + j] ? FT_SRC_ALL : x->ord[s];
			/* switch LIDs carry management traffic only: any valid parent will do */
			COL(col, d0[i].lid) = d0[i].port ? displace(x, s, j, u, dv, m->dest_off[t] + i, src) : any_up(x, s, j);
		}
	}
	route_valleys(x, d0, nd);
}

/* Transpose an 8x8 byte block held as 8 little-endian words: swap row and column index bits. */
static inline void tr8(uint64_t a[8])
{
	uint64_t t;
	for (int i = 0; i < 4; i++) {
		t = ((a[i] >> 32) ^ a[i + 4]) & 0x00000000ffffffffull;
		a[i] ^= t << 32;
		a[i + 4] ^= t;
	}
	for (int i = 0; i < 8; i += (i & 1) ? 3 : 1) {
		t = ((a[i] >> 16) ^ a[i + 2]) & 0x0000ffff0000ffffull;
		a[i] ^= t << 16;
		a[i + 2] ^= t;
	}
	for (int i = 0; i < 8; i += 2) {
		t = ((a[i] >> 8) ^ a[i + 1]) & 0x00ff00ff00ff00ffull;
		a[i] ^= t << 8;
		a[i + 1] ^= t;
	}
}

/*
 * Column-major scratch -> the row-major LFTs: 8x8 byte blocks through
 * registers, in 64x64 tiles that stay in cache; the ragged edges byte by
 * byte.
 */
static void transpose(const struct ft_run *x, struct sm_lfts *out)
{
	const uint32_t n = x->m->nsw, nl = (uint32_t)out->top_lid + 1, tb = 64;
	const uint32_t n8 = n & ~7u, nl8 = nl & ~7u;
	uint64_t a[8];

	for (uint32_t l0 = 0; l0 < nl8; l0 += tb)
		for (uint32_t s0 = 0; s0 < n8; s0 += tb)
			for (uint32_t l = l0; l < l0 + tb && l < nl8; l += 8)
				for (uint32_t s = s0; s < s0 + tb && s < n8; s += 8) {
					for (int k = 0; k < 8; k++)
						memcpy(&a[k], x->col + (size_t)(l + k) * n + s, 8);
					tr8(a);
					for (int k = 0; k < 8; k++)
						memcpy(sm_lfts_row(out, s + k) + l, &a[k], 8);
				}
	for (uint32_t s = 0; s < n; s++) {
		uint8_t *row = sm_lfts_row(out, s);
		for (uint32_t l = s < n8 ? nl8 : 0; l < nl; l++)
			row[l] = x->col[(size_t)l * n + s];
	}
}

/* Destination switch t has CA LIDs (they come first in its destination list). */
static int has_hosts(const struct ft_model *m, uint32_t t)
{
	return m->dest_off[t + 1] > m->dest_off[t] && m->dest[m->dest_off[t]].port != 0;
}

int ft_route(const struct ft_model *m, struct sm_lfts *out, char *msg, size_t msglen)
{
	struct ft_run x = { .m = m };
	size_t ne = (size_t)m->up_off[m->nsw] + 1, ns = (size_t)m->nsw + 1;
	int rc = -ENOMEM;

	size_t cells = (size_t)m->nsw * ((size_t)out->top_lid + 1);
	x.col = malloc(cells ? cells : 1);
	if (x.col)
		memset(x.col, SM_LFT_NONE, cells);
	x.dstamp = calloc(ns, sizeof(*x.dstamp));
	x.rstamp = calloc(ns, sizeof(*x.rstamp));
	x.xstamp = calloc(ns, sizeof(*x.xstamp));
	x.vstamp = calloc(ns, sizeof(*x.vstamp));
	x.valley = malloc(ns * sizeof(*x.valley));
	x.rval = calloc(ns, 1);
	x.cand_head = malloc(ns * sizeof(*x.cand_head));
	x.cand_next = malloc(ne * sizeof(*x.cand_next));
	x.cand_port = malloc(ne);
	x.queue = malloc(ns * sizeof(*x.queue));
	x.disp = calloc(ne, sizeof(*x.disp));
	x.pload = calloc(m->nsw, sizeof(*x.pload));
	x.last = calloc(ne, sizeof(*x.last));
	x.first = calloc(ne, sizeof(*x.first));
	x.ex = malloc(ne * FT_EXN * sizeof(*x.ex));
	x.exn = calloc(ne, sizeof(*x.exn));
	x.ord = malloc(ns * sizeof(*x.ord));
	x.span = calloc(ns, sizeof(*x.span));
	x.up_owner = malloc(ne * sizeof(*x.up_owner));
	if (x.up_owner)
		for (uint32_t s = 0; s < m->nsw; s++)
			for (uint32_t e = m->up_off[s]; e < m->up_off[s + 1]; e++)
				x.up_owner[e] = s;
	x.rep = malloc(((size_t)m->n_dest + 1) * sizeof(*x.rep));
	if (x.rep)
		for (uint32_t i = 0; i < m->n_dest; i++)
			x.rep[i] = SM_NONE;
	if (!x.last || !x.first || !x.ex || !x.exn || !x.ord || !x.span || !x.up_owner || !x.rep || !x.dstamp || !x.rstamp || !x.rval || !x.cand_head || !x.cand_next || !x.cand_port ||
	    !x.queue || !x.disp || !x.pload) {
		snprintf(msg, msglen, "ftree: out of memory");
		goto out;
	}
	for (uint32_t s = 0; s < m->nsw; s++)
		x.ord[s] = UINT32_MAX / 2;
	for (uint32_t i = 0; i < m->n_tgt; i++) {
		uint32_t t = m->tgt_order[i];
		if (m->rank[t] != 0)
			continue;
		x.ord[t] = i;
		x.span[t] = 1;
		if (has_hosts(m, t))
			x.nleaf = i + 1;
	}
	/* upper switches: the first leaf below them and how many leaves they cover (ranks ascending) */
	for (uint32_t k = 0; k < m->nsw; k++) {
		uint32_t s = m->by_rank[k];
		if (m->rank[s] == 0 || m->rank[s] == FT_RANK_NONE)
			continue;
		for (uint32_t e = m->dn_off[s]; e < m->dn_off[s + 1]; e++) {
			uint32_t c = m->dn_peer[e];
			if (x.ord[c] < x.ord[s])
				x.ord[s] = x.ord[c];
			x.span[s] += x.span[c];
		}
	}
	x.nidx = m->n_hosts;
	uint64_t bad = 0;
	uint32_t bad_from = SM_NONE, bad_to = SM_NONE;
	for (uint32_t i = 0; i < m->n_tgt; i++) {
		uint32_t t = m->tgt_order[i];
		route_target(&x, t);
		if (m->rank[t] != 0 || !has_hosts(m, t))
			continue;
		/* every leaf must reach every other leaf of its component up then down */
		for (uint32_t s = 0; s < m->nsw; s++)
			if (m->rank[s] == 0 && s != t && m->comp[s] == m->comp[t] && has_hosts(m, s) && !reach(&x, s)) {
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
	transpose(&x, out);
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
	free(x.col);
	free(x.pload);
	free(x.dstamp);
	free(x.rstamp);
	free(x.xstamp);
	free(x.vstamp);
	free(x.valley);
	free(x.rval);
	free(x.cand_head);
	free(x.cand_next);
	free(x.cand_port);
	free(x.queue);
	free(x.disp);
	free(x.ex);
	free(x.exn);
	free(x.ord);
	free(x.span);
	free(x.up_owner);
	free(x.last);
	free(x.first);
	free(x.rep);
	return rc;
}
