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
 *     toward T), only that route moves (ft_displace(), displace.c): to the
 *     valid parent whose whole path to T loads no link in the same shifts
 *     as another moved route, where there is one. Switches that route up
 *     are visited from the top rank down, so the rest of a moved route's
 *     path is known when it is chosen.
 *  4. Switches with no up/down path to T get a management-only route:
 *     a detour down (route_detour) or, for a leaf toward a spine it lost,
 *     an up-down-up valley (route_valleys). No endpoint route passes a
 *     detour; valleys only carry endpoint traffic to switch LIDs.
 *  5. On a degraded tree whose moved routes may stack up, a repair pass
 *     (repair.c) then points a few up entries off the most loaded links.
 *
 * LFT entries are written straight into the rows of struct sm_lfts
 * (preallocated, all SM_LFT_NONE, see engine.h). A destination switch's
 * destinations have neighbouring LIDs on the trees we generate, so each
 * switch gets one short run of bytes per destination switch, and the next
 * destination switch continues the same cache line: the rows fill at
 * about streaming speed. (Sessions 5 and 6 routed into a column-major
 * scratch table and transposed it at the end; at 40k hosts that moved
 * 480 MB more than the 160 MB of LFT, and cost a third of the plane.)
 *
 * Switches with the same parents (a pod's leaves) route a destination
 * switch up alike unless a route of theirs is moved: one of them routes,
 * the others copy its bytes (struct ft_groups), rank by rank in slot order.
 *
 * Cost: O(ancestors + switches) per destination switch plus O(1) per LFT
 * entry, plus O(up ports x path x intervals on a link) per displaced route.
 */
#include "config.h"
#include "routing/ftree/run.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ft_reach_slow(struct ft_run *x, uint32_t s)
{
	const struct ft_model *m = x->m;
	if (x->rcomplete)
		return 0;
	int r = 0;
	for (uint32_t e = m->up_off[s]; e < m->up_off[s + 1] && !r; e++)
		r = ft_reach(x, m->up_peer[e]);
	x->rstamp[s] = x->gen;
	x->rval[s] = (uint8_t)r;
	return r;
}

static void mark_down_set(struct ft_run *x, uint32_t t)
{
	const struct ft_model *m = x->m;
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
			x->cand_next[e] = x->cand_head[p];
			x->cand_head[p] = e;
		}
	}
	x->n_down = qt; /* queue[0 .. n_down) stays D: mark_reach_set appends */
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
	uint32_t qh = 0, qt = x->n_down;
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
		if (ft_reach(x, m->up_peer[e]))
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
		if (x->xstamp[c] == x->gen || ft_reach(x, c)) {
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

/*
 * Short runs of row bytes (a leaf's hosts: 32 at radix 64), copied inline:
 * through libc's memcpy/memset each was a call and a size dispatch, 16% of
 * a 40k plane. Overlapping fixed-size moves cover any length.
 */
static inline void put_run(uint8_t *w, const uint8_t *src, uint32_t n)
{
	if (n >= 16) {
		for (uint32_t k = 0; k + 16 < n; k += 16)
			memcpy(w + k, src + k, 16);
		memcpy(w + n - 16, src + n - 16, 16);
	} else if (n >= 8) {
		uint64_t a, b;
		memcpy(&a, src, 8);
		memcpy(&b, src + n - 8, 8);
		memcpy(w, &a, 8);
		memcpy(w + n - 8, &b, 8);
	} else {
		for (uint32_t k = 0; k < n; k++)
			w[k] = src[k];
	}
}

static inline void fill_run(uint8_t *w, uint8_t v, uint32_t n)
{
	uint8_t p[16];
	memset(p, v, sizeof(p));
	if (n >= 16) {
		for (uint32_t k = 0; k + 16 < n; k += 16)
			memcpy(w + k, p, 16);
		memcpy(w + n - 16, p, 16);
	} else {
		put_run(w, p, n);
	}
}

/*
 * A leaf (one index per slot) routes T's run of hosts d0[0 .. x->run) up
 * through slots j, j + 1, ... mod u: when each of those slots leads to a
 * parent that reaches T with no conflict, the row bytes are the leaf's
 * slot ports rotated by j, copied in at most a few pieces. Returns 0, and
 * writes nothing, when some slot needs the entry-by-entry path of route_up.
 */
static int leaf_run(struct ft_run *x, uint8_t *row, const uint32_t *sp, const uint8_t *spt, uint32_t u,
		    const struct ft_dest *d0)
{
	const uint32_t n = x->run, j = d0[0].idx % u;
	for (uint32_t k = 0, jj = j; k < n && k < u; k++, jj = jj + 1 == u ? 0 : jj + 1) {
		uint32_t q = sp[jj];
		if (q == SM_NONE || !ft_reach(x, q) || x->cstamp[q] == x->gen)
			return 0;
	}
	uint8_t *w = row + d0[0].lid;
	uint32_t k = u - j < n ? u - j : n;
	put_run(w, spt + j, k);
	for (uint32_t c; k < n; k += c) {
		c = u < n - k ? u : n - k;
		put_run(w + k, spt, c);
	}
	return 1;
}

/*
 * Switch s routes T's destinations up: the ideal slot, or a displaced route
 * (displace.c). The slot (idx / dv) mod u is stepped, not divided, while
 * indices are consecutive (a leaf's hosts are): at 40k hosts this loop runs
 * 150 M times per plane, and two divisions per entry were a third of ftree.
 */
static int route_up(struct ft_run *x, uint32_t s, const struct ft_dest *d0, uint32_t nd)
{
	int moved = 0;
	const struct ft_model *m = x->m;
	uint8_t *col = x->col + s, *row = x->col + (size_t)s * x->nl;
	uint32_t so = m->slot_off[s], u = m->slot_off[s + 1] - so;
	uint32_t dv = m->div[m->rank[s]];
	/* above the leaves consecutive destinations share a slot: check each slot once */
	uint32_t j = 0, rem = 0;
	const uint32_t *sp = m->slot_peer + so;
	const uint8_t *spt = m->slot_port + so;
	uint32_t i0 = 0;
	if (dv == 1 && u && x->run > 1 && leaf_run(x, row, sp, spt, u, d0))
		i0 = x->run;
	for (uint32_t i = i0, e; i < nd; i = e) {
		if (i == i0 || d0[i].idx != d0[i - 1].idx + 1) {
			j = d0[i].idx / dv % u;
			rem = d0[i].idx % dv;
		}
		/* a segment: consecutive indices in one slot (up to dv of them) */
		for (e = i + 1; e < nd && e - i < dv - rem && d0[e].idx == d0[e - 1].idx + 1; e++)
			;
		uint32_t q = sp[j];
		int ok = q != SM_NONE && ft_reach(x, q);
		uint64_t cq = ok && x->cstamp[q] == x->gen ? x->cmask[q] : 0; /* ft_conflict of q */
		if (ok && !cq) {
			const uint8_t port = spt[j];
			if (e <= x->run) /* consecutive LIDs */
				fill_run(row + d0[i].lid, port, e - i);
			else
				for (uint32_t k = i; k < e; k++)
					row[d0[k].lid] = port;
		} else {
			for (uint32_t k = i; k < e; k++) {
				if (ok && !(k < 64 && (cq >> k & 1)))
					COL(col, d0[k].lid) = spt[j];
				else if (d0[k].port) {
					COL(col, d0[k].lid) = ft_displace(x, s, j, d0, k);
					moved = 1;
				} else { /* switch LIDs carry management traffic only: any valid parent will do */
					COL(col, d0[k].lid) = any_up(x, s, j);
				}
			}
		}
		rem += e - i;
		if (rem == dv) {
			rem = 0;
			j = j + 1 == u ? 0 : j + 1;
		}
	}
	return moved;
}

/*
 * Switches with the same rank, component and up ports (the same parents
 * behind the same ports, in the same order: a pod's leaves, the
 * aggregation switches of one index across pods) route T's destinations
 * up alike, as long as no route of theirs is moved (ft_displace() depends
 * on the switch and on the routes moved before it): route_up() reads only
 * the parents' state, which is final once the ranks above are routed. So
 * the first such switch of a group routes, and the others copy its row
 * bytes. At 40k hosts this skips 31 of every 32 slot checks.
 */
struct ft_groups {
	uint32_t *of;    /* [nsw] group of a switch */
	uint32_t *stamp; /* [groups] == gen: rep routed T up without moving a route */
	uint32_t *rep;
	/*
	 * The rows are written rank by rank in slot (memory) order, not in
	 * by_rank's GUID order: a row is 44 KB away from the next at 40k hosts,
	 * and only an ascending walk lets the hardware fetch the next rows'
	 * lines ahead. Copies and detours of one rank do not depend on each
	 * other (the moved routes do, and keep by_rank's order).
	 */
	uint32_t *todo;  /* [nsw] == gen: a copy pending (up pass) */
	uint32_t *det;   /* [nsw] == gen: no up/down path, a detour pending */
	uint32_t *slots; /* [n_ranked] ranked switches by rank, then slot */
	uint32_t roff[FT_MAX_RANK + 2]; /* slots of rank r: slots[roff[r] .. roff[r + 1]) */
};

static uint64_t group_hash(const struct ft_model *m, uint32_t s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	uint32_t so = m->slot_off[s], u = m->slot_off[s + 1] - so;
	h = (h ^ m->rank[s]) * 0x100000001b3ull;
	h = (h ^ m->comp[s]) * 0x100000001b3ull;
	for (uint32_t i = 0; i < u; i++)
		h = (h ^ m->slot_peer[so + i] ^ (uint64_t)m->slot_port[so + i] << 32) * 0x100000001b3ull;
	for (uint32_t e = m->up_off[s]; e < m->up_off[s + 1]; e++)
		h = (h ^ m->up_peer[e] ^ (uint64_t)m->up_port[e] << 40) * 0x100000001b3ull;
	return h;
}

static int group_same(const struct ft_model *m, uint32_t a, uint32_t b)
{
	uint32_t sa = m->slot_off[a], ua = m->slot_off[a + 1] - sa, sb = m->slot_off[b];
	uint32_t ea = m->up_off[a], na = m->up_off[a + 1] - ea, eb = m->up_off[b];
	return m->rank[a] == m->rank[b] && m->comp[a] == m->comp[b] && ua == m->slot_off[b + 1] - sb &&
	       na == m->up_off[b + 1] - eb &&
	       !memcmp(m->slot_peer + sa, m->slot_peer + sb, ua * sizeof(*m->slot_peer)) &&
	       !memcmp(m->slot_port + sa, m->slot_port + sb, ua) &&
	       !memcmp(m->up_peer + ea, m->up_peer + eb, na * sizeof(*m->up_peer)) &&
	       !memcmp(m->up_port + ea, m->up_port + eb, na);
}

struct hkey {
	uint64_t h;
	uint32_t s;
};

static int cmp_hkey(const void *a, const void *b)
{
	const struct hkey *x = a, *y = b;
	if (x->h != y->h)
		return x->h < y->h ? -1 : 1;
	return x->s < y->s ? -1 : x->s > y->s;
}

static int groups_build(struct ft_groups *g, const struct ft_model *m)
{
	size_t ns = (size_t)m->nsw + 1;
	struct hkey *k = malloc(ns * sizeof(*k));
	g->of = malloc(ns * sizeof(*g->of));
	g->stamp = calloc(ns, sizeof(*g->stamp));
	g->rep = malloc(ns * sizeof(*g->rep));
	g->todo = calloc(ns, sizeof(*g->todo));
	g->det = calloc(ns, sizeof(*g->det));
	g->slots = malloc(ns * sizeof(*g->slots));
	if (!k || !g->of || !g->stamp || !g->rep || !g->todo || !g->det || !g->slots) {
		free(k);
		return -ENOMEM;
	}
	memset(g->roff, 0, sizeof(g->roff));
	for (uint32_t s = 0; s < m->nsw; s++)
		if (m->rank[s] != FT_RANK_NONE)
			g->roff[m->rank[s] + 1]++;
	for (unsigned r = 0; r <= FT_MAX_RANK; r++)
		g->roff[r + 1] += g->roff[r];
	uint32_t cur[FT_MAX_RANK + 1];
	memcpy(cur, g->roff, sizeof(cur));
	for (uint32_t s = 0; s < m->nsw; s++)
		if (m->rank[s] != FT_RANK_NONE)
			g->slots[cur[m->rank[s]]++] = s;
	for (uint32_t s = 0; s < m->nsw; s++)
		k[s] = (struct hkey){ group_hash(m, s), s };
	qsort(k, m->nsw, sizeof(*k), cmp_hkey);
	uint32_t n = 0;
	for (uint32_t i = 0, b = 0; i < m->nsw; i++) {
		if (i && k[i].h != k[i - 1].h)
			b = n; /* groups of this hash start at b */
		uint32_t s = k[i].s, gi = b;
		while (gi < n && !group_same(m, g->rep[gi], s)) /* a hash collision: almost never a second pass */
			gi++;
		if (gi == n)
			g->rep[n++] = s;
		g->of[s] = gi;
	}
	free(k);
	return 0;
}

static void groups_free(struct ft_groups *g)
{
	free(g->of);
	free(g->stamp);
	free(g->rep);
	free(g->todo);
	free(g->det);
	free(g->slots);
}



/* Switch s routes T's destinations up as switch r of its group did. */
static void copy_up(struct ft_run *x, uint32_t r, uint32_t s, const struct ft_dest *d0, uint32_t nd)
{
	const uint8_t *from = x->col + (size_t)r * x->nl;
	uint8_t *row = x->col + (size_t)s * x->nl;
	uint32_t i = 0;
	if (x->run > 1) {
		put_run(row + d0[0].lid, from + d0[0].lid, x->run);
		i = x->run;
	}
	for (; i < nd; i++)
		row[d0[i].lid] = from[d0[i].lid];
}

/* The pending copies of rank r, in slot order. */
static void flush_copies(struct ft_run *x, struct ft_groups *grp, unsigned r, const struct ft_dest *d0, uint32_t nd)
{
	for (uint32_t i = grp->roff[r]; i < grp->roff[r + 1]; i++) {
		uint32_t s = grp->slots[i];
		if (grp->todo[s] == x->gen)
			copy_up(x, grp->rep[grp->of[s]], s, d0, nd);
	}
}

/*
 * Three passes over the switches: T and its ancestors (down), then the
 * switches that reach T from the top rank down (so that a displaced route
 * knows the rest of its path, displace.c), then the detours from the
 * bottom up (a detour goes down to a child routed before it).
 */
void ft_route_dests(struct ft_run *x, uint32_t t, const struct ft_dest *d0, uint32_t nd)
{
	const struct ft_model *m = x->m;
	struct ft_groups *grp = x->grp;

	x->gen++;
	x->t = t;
	x->rcomplete = 0;
	for (x->run = nd ? 1 : 0; x->run < nd; x->run++)
		if (d0[x->run].lid != d0[x->run - 1].lid + 1 || d0[x->run].idx != d0[x->run - 1].idx + 1)
			break;
	mark_down_set(x, t);
	if (m->rank[t] > 0)
		mark_reach_set(x);
	else
		ft_chains(x, t, d0, nd);
	for (uint32_t k = 0; k < x->n_down; k++) {
		uint32_t s = x->queue[k];
		unsigned r = m->rank[s];
		if (r == FT_RANK_NONE || m->comp[s] != m->comp[t])
			continue;
		uint8_t *row = x->col + (size_t)s * x->nl;
		if (s == t) {
			for (uint32_t i = 0; i < nd; i++)
				row[d0[i].lid] = d0[i].port;
			continue;
		}
		unsigned nc = 0;
		for (uint32_t e = x->cand_head[s]; e != SM_NONE && nc < sizeof(x->cands); e = x->cand_next[e])
			x->cands[nc++] = x->cand_port[e];
		uint32_t dv = r ? m->div[r - 1] : 1;
		if (nc == 1) {
			const uint8_t c0 = x->cands[0];
			if (nd)
				fill_run(row + d0[0].lid, c0, x->run);
			for (uint32_t i = x->run; i < nd; i++)
				row[d0[i].lid] = c0;
		} else {
			for (uint32_t i = 0; i < nd; i++)
				row[d0[i].lid] = x->cands[(d0[i].idx / dv) % nc];
		}
	}
	/* the up pass marks the switches without an up/down path, top down; detours go bottom up */
	uint32_t ncopy = 0, ndet = 0;
	unsigned cr = m->h;
	for (uint32_t k = x->n_ranked; k-- > 0;) {
		uint32_t s = m->by_rank[k];
		if (m->rank[s] != cr) {
			if (ncopy)
				flush_copies(x, grp, cr, d0, nd);
			ncopy = 0;
			cr = m->rank[s];
		}
		if (m->comp[s] != m->comp[t] || x->dstamp[s] == x->gen)
			continue;
		if (ft_reach(x, s)) {
			uint32_t g = grp->of[s];
			if (grp->stamp[g] == x->gen) {
				grp->todo[s] = x->gen;
				ncopy++;
			} else if (!route_up(x, s, d0, nd)) {
				grp->stamp[g] = x->gen;
				grp->rep[g] = s;
			}
		} else {
			grp->det[s] = x->gen;
			ndet++;
		}
	}
	if (ncopy)
		flush_copies(x, grp, cr, d0, nd);
	/* a detour goes down to a child routed before it: ranks ascending, each in slot order */
	for (uint32_t i = 0; ndet && i < x->n_ranked; i++) {
		uint32_t s = grp->slots[i];
		if (grp->det[s] == x->gen) {
			route_detour(x, x->col + s, s, d0, nd);
			ndet--;
		}
	}
	route_valleys(x, d0, nd);
}

int ft_run_init(struct ft_run *x, const struct ft_model *m, struct sm_lfts *out)
{
	size_t ne = (size_t)m->up_off[m->nsw] + 1, ns = (size_t)m->nsw + 1;

	memset(x, 0, sizeof(*x));
	x->m = m;
	x->col = out->ports;
	x->nl = (size_t)out->top_lid + 1;
	x->dstamp = calloc(ns, sizeof(*x->dstamp));
	x->rstamp = calloc(ns, sizeof(*x->rstamp));
	x->xstamp = calloc(ns, sizeof(*x->xstamp));
	x->vstamp = calloc(ns, sizeof(*x->vstamp));
	x->valley = malloc(ns * sizeof(*x->valley));
	x->rval = calloc(ns, 1);
	x->cand_head = malloc(ns * sizeof(*x->cand_head));
	x->cand_next = malloc(ne * sizeof(*x->cand_next));
	x->cand_port = malloc(ne);
	x->queue = malloc(ns * sizeof(*x->queue));
	x->hleaf = malloc(ns * sizeof(*x->hleaf));
	x->grp = calloc(1, sizeof(*x->grp));
	if (!x->dstamp || !x->rstamp || !x->xstamp || !x->vstamp || !x->valley || !x->rval || !x->cand_head ||
	    !x->cand_next || !x->cand_port || !x->queue || !x->hleaf || !x->grp || ft_displace_init(x) ||
	    groups_build(x->grp, m))
		return -ENOMEM;
	x->nidx = m->n_idx;
	/* the port on the parent's side of each up link, which leads down toward T in D (mark_down_set) */
	for (uint32_t s = 0; s < m->nsw; s++)
		for (uint32_t e = m->up_off[s]; e < m->up_off[s + 1]; e++)
			x->cand_port[e] = sm_port(m->f, m->sw_node[s], m->up_port[e])->peer_port;
	while (x->n_ranked < m->nsw && m->rank[m->by_rank[x->n_ranked]] != FT_RANK_NONE)
		x->n_ranked++; /* by_rank puts the unranked last */
	for (uint32_t s = 0; s < m->nsw; s++)
		if (m->rank[s] == 0 && ft_has_hosts(m, s))
			x->hleaf[x->n_hleaf++] = s;
	return 0;
}

void ft_run_free(struct ft_run *x)
{
	free(x->dstamp);
	free(x->rstamp);
	free(x->xstamp);
	free(x->vstamp);
	free(x->valley);
	free(x->rval);
	free(x->cand_head);
	free(x->cand_next);
	free(x->cand_port);
	free(x->queue);
	free(x->hleaf);
	ft_displace_free(x);
	if (x->grp)
		groups_free(x->grp);
	free(x->grp);
}

uint64_t ft_bad_pairs(struct ft_run *x, uint32_t t, uint32_t *bad_from)
{
	const struct ft_model *m = x->m;
	uint64_t bad = 0;
	if (m->rank[t] != 0 || !ft_has_hosts(m, t))
		return 0;
	/* every leaf must reach every other leaf of its component up then down */
	for (uint32_t k = 0; k < x->n_hleaf; k++) {
		uint32_t s = x->hleaf[k];
		if (s != t && m->comp[s] == m->comp[t] && !ft_reach(x, s)) {
			bad++;
			*bad_from = s;
		}
	}
	return bad;
}

int ft_route(const struct ft_model *m, struct sm_lfts *out, char *msg, size_t msglen)
{
	struct ft_run x;
	int rc = -ENOMEM;

	if (ft_run_init(&x, m, out)) {
		snprintf(msg, msglen, "ftree: out of memory");
		goto out;
	}
	uint64_t bad = 0;
	uint32_t bad_from = SM_NONE, bad_to = SM_NONE;
	for (uint32_t i = 0; i < m->n_tgt; i++) {
		uint32_t t = m->tgt_order[i];
		ft_route_dests(&x, t, m->dest + m->dest_off[t], m->dest_off[t + 1] - m->dest_off[t]);
		uint64_t b = ft_bad_pairs(&x, t, &bad_from);
		if (b) {
			bad += b;
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
	uint64_t repaired = ft_repair(&x);
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
	if (repaired && n > 0 && (size_t)n < msglen)
		n += snprintf(msg + n, msglen - (size_t)n, "; %" PRIu64 " entries changed to relieve the worst links (repair)", repaired);
	if (parts > 1 && n > 0 && (size_t)n < msglen)
		n += snprintf(msg + n, msglen - (size_t)n,
			      "; fabric split into %u disconnected parts: pairs across them are unreachable", parts);
	if (m->unranked && n > 0 && (size_t)n < msglen)
		snprintf(msg + n, msglen - (size_t)n, "; %u switches reach no CA and were left unrouted", m->unranked);
	rc = 0;
out:
	ft_run_free(&x);
	return rc;
}
