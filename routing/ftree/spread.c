/* SPDX-License-Identifier: MIT */
/*
 * DOC: ftree: the way into a leaf for the hosts whose ideal parent it lost
 *
 * Host idx of leaf T comes down into T from its ideal parent, slot idx mod
 * U of T's up-slot table. When T lost that link, every source must bring
 * the host's flows down another of T's links, which already carries
 * another host's (T keeps fewer links than hosts): the host then shares a
 * link with that one. displace.c prefers, for all sources of a destination,
 * one such link (x->rep); this presets it, before any route is placed:
 * T's live link with the fewest hosts on it, ties to the first (lowest
 * port) one, so the hosts that must share a link do so on as few distinct
 * spines as possible: the flows that collide on those spines' downlinks
 * are then the ones that already meet in a larger class on the sources'
 * uplinks. Model (bench/ebb_model.c, 2 levels, 5% and 10% of the links
 * gone): EBB +0.0025 against each dead host taking the least-used link in
 * rotation. ftree, 50 trees per row (bench/degraded.sh): EBB higher on 199
 * of the 200 link-degraded trees, +0.0003 (1%) to +0.0011 (5%) in the
 * mean; the worst shift congestion one lower on one tree, higher on none
 * (BENCHMARKS.md "Session 8, ebb"). Ties to the last link instead: the
 * same EBB, but one tree one higher.
 * A leaf that kept every slot gets nothing (complete trees are unchanged).
 * Two levels only: on three it raised EBB on most degraded trees but
 * moved the worst shift congestion both ways (ties to the last link: 14
 * of 400 trees one higher, 10 one lower; to the first: 22 and 8), so it
 * is left out there.
 *
 * Session 9 (BENCHMARKS.md "Session 9, ebb2"), also 2 levels only:
 *  - Among T's least-used links, first the ones whose spine no preset host
 *    within a leaf's width of host indices (the shifts one moved route
 *    covers) takes already: the sources that reach both would otherwise
 *    carry the two moved routes up one uplink in the same shifts, and
 *    displace.c, which keeps the worst shift congestion first, would send
 *    one of them another way into T (off the way all other sources take:
 *    the host then shares a second link). Then the spine with the fewest
 *    leaves (its class on the sources' uplinks is the smallest), then the
 *    lowest port. Leaves in by_rank order (GUID): the result does not
 *    depend on node numbering.
 *  - The routes a leaf moves because it lost its own uplink j (every
 *    destination of slot j) no longer stick to one replacement: each goes,
 *    among the paths of least shift overlap, where it costs least:
 *    4 x T's hosts on its link into T (hcnt) + 4 when a preset host near
 *    it comes in by the same spine (x->near), then the spine with the
 *    fewest leaves, then the up port with the fewest moved routes
 *    (ft_own_pref, ft_own_tie). A host with a preset way (rep) keeps it,
 *    and when a source cannot take it, the others are ranked the same way.
 *    All sources of one destination then tend to come in by one link: a
 *    destination receives one flow per permutation, so its detours never
 *    meet each other (spreading them, as the "balanced" model does, cost
 *    0.0001-0.0015 of EBB on 12 trees).
 * Model trials that did not help (bench/ebb_model.c's routings on the
 * report's permutations): doubles on the spines of most leaves; a global
 * replacement spine per host index (shift-clean, but 0.0014-0.0043 less);
 * the model's "balanced" base (host i by the i-th live spine) is within
 * +-0.0015 of ideal slots (the model routings, blind to shifts, have
 * shift congestion 4-7 there; ftree 2).
 */
#include "config.h"
#include "routing/ftree/run.h"

#include <stdlib.h>
#include <string.h>

/* A moved route's cost (as 4 per host of T on its way in) for sharing an uplink with a preset host near it */
#define FT_CLASH_W 4

/* Cyclic distance of host indices a and b in [0, n). */
static uint32_t idx_dist(uint32_t a, uint32_t b, uint32_t n)
{
	uint32_t d = a > b ? a - b : b - a;
	return n && d > n - d ? n - d : d;
}

/*
 * Another preset host within len indices of idx takes spine q: the
 * sources that reach both would move the two routes onto one uplink in
 * overlapping shifts (displace.c), and one of them would go elsewhere.
 */
static int preset_clash(const uint32_t *pq, const uint32_t *pi, uint32_t np, uint32_t q, uint32_t idx, uint32_t len, uint32_t n)
{
	for (uint32_t k = 0; k < np; k++)
		if (pq[k] == q && idx_dist(pi[k], idx, n) < len)
			return 1;
	return 0;
}

void ft_rep_preset(struct ft_run *x)
{
	const struct ft_model *m = x->m;
	if (m->h != 1)
		return;
	uint32_t len = 1, np = 0;
	for (uint32_t t = 0; t < m->nsw; t++)
		if (m->rank[t] == 0 && m->hhi[t] - m->hlo[t] > len)
			len = m->hhi[t] - m->hlo[t];
	x->plen = len;
	uint32_t *pq = x->pre_q, *pi = x->pre_i; /* the presets so far: switch q, host index */
	for (uint32_t r = 0; r < m->nsw; r++) { /* by rank, then GUID: the clash check is greedy */
		uint32_t t = m->by_rank[r];
		uint32_t so = m->slot_off[t], u = m->slot_off[t + 1] - so, b = m->up_off[t], n = m->up_off[t + 1] - b;
		if (m->rank[t] != 0 || !u || !n || n > 256 || !ft_has_hosts(m, t))
			continue;
		uint32_t cnt[256] = { 0 }, dead = 0;
		for (uint32_t i = m->dest_off[t]; i < m->dest_off[t + 1] && m->dest[i].port; i++) {
			uint32_t j = m->dest[i].idx / m->div[0] % u;
			if (!m->slot_port[so + j]) {
				dead++;
				continue;
			}
			for (uint32_t e = 0; e < n; e++)
				if (m->up_port[b + e] == m->slot_port[so + j]) {
					cnt[e]++;
					break;
				}
		}
		for (uint32_t i = m->dest_off[t]; dead && i < m->dest_off[t + 1] && m->dest[i].port; i++) {
			if (m->slot_port[so + m->dest[i].idx / m->div[0] % u])
				continue;
			uint32_t best = 0, clash = 1;
			for (uint32_t e = 0; e < n; e++) {
				int c = preset_clash(pq, pi, np, m->up_peer[b + e], m->dest[i].idx, len, m->n_idx);
				uint32_t q = m->up_peer[b + e], qb = m->up_peer[b + best];
				uint32_t dq = m->dn_off[q + 1] - m->dn_off[q], db = m->dn_off[qb + 1] - m->dn_off[qb];
				if (!e || cnt[e] < cnt[best] || (cnt[e] == cnt[best] && clash && !c) ||
				    (cnt[e] == cnt[best] && clash == (uint32_t)c && dq < db)) {
					best = e;
					clash = (uint32_t)c;
				}
			}
			cnt[best]++;
			x->rep[i] = 2 * (b + best) + 1;
			pq[np] = m->up_peer[b + best];
			pi[np++] = m->dest[i].idx;
		}
		for (uint32_t e = 0; e < n; e++)
			x->hcnt[b + e] = (uint16_t)cnt[e];
	}
	x->npre = np;
}

/* T's link (up-link index) of a path's last link into T (x->iv slot), or SM_NONE */
static uint32_t t_link(const struct ft_run *x, uint32_t last)
{
	const struct ft_model *m = x->m;
	if (last == SM_NONE || !(last & 1))
		return SM_NONE;
	uint32_t e = last >> 1;
	return e >= m->up_off[x->t] && e < m->up_off[x->t + 1] ? e : SM_NONE;
}

/* The cost of coming into T by its link l from switch q, for T's destination i. */
static uint32_t pref_l(const struct ft_run *x, uint32_t i, uint32_t q, uint32_t l)
{
	uint32_t v = 4u * x->hcnt[l];
	if (x->near[(size_t)i * x->nw + q / 64] >> (q % 64) & 1)
		v += FT_CLASH_W;
	return v < 127 ? v : 127;
}

uint32_t ft_own_pref(const struct ft_run *x, uint32_t i, uint32_t e, uint32_t last)
{
	uint32_t l = t_link(x, last);
	return l == SM_NONE ? 127 : pref_l(x, i, x->m->up_peer[e], l);
}

void ft_tlinks(struct ft_run *x, uint32_t t, const struct ft_dest *d0, uint32_t nd)
{
	const struct ft_model *m = x->m;
	uint32_t n = m->n_idx;
	x->tlgen++;
	for (uint32_t e = m->up_off[t]; e < m->up_off[t + 1]; e++) {
		uint32_t q = m->up_peer[e];
		x->tl[q] = x->tlst[q] == x->tlgen ? SM_NONE : e; /* two links to q: no bound from it */
		x->tlst[q] = x->tlgen;
	}
	/* near[i]: the switches a preset host within plen indices of d0[i] comes in by */
	memset(x->near, 0, (size_t)nd * x->nw * sizeof(*x->near));
	for (uint32_t i = 0; i < nd && d0[i].port; i++)
		for (uint32_t k = 0; d0[i].idx < n && k < x->npre; k++)
			if (x->pre_i[k] < n && idx_dist(x->pre_i[k], d0[i].idx, n) < x->plen)
				x->near[(size_t)i * x->nw + x->pre_q[k] / 64] |= 1ull << (x->pre_q[k] % 64);
}

uint64_t ft_own_bound(const struct ft_run *x, uint32_t i, uint32_t e, uint32_t rep)
{
	uint32_t q = x->m->up_peer[e], l = x->tlst[q] == x->tlgen ? x->tl[q] : SM_NONE;
	uint64_t b = ft_own_tie(x, e) << 16 | (x->disp[e] > 0xffff ? 0xffff : x->disp[e]);
	if (l == SM_NONE)
		return b;
	return b | (uint64_t)(rep != SM_NONE && 2 * l + 1 != rep) << 31 | (uint64_t)pref_l(x, i, q, l) << 24;
}
