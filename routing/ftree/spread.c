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
 */
#include "config.h"
#include "routing/ftree/run.h"

#include <stdlib.h>

void ft_rep_preset(struct ft_run *x)
{
	const struct ft_model *m = x->m;
	if (m->h != 1)
		return;
	for (uint32_t t = 0; t < m->nsw; t++) {
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
			uint32_t best = 0;
			for (uint32_t e = 1; e < n; e++)
				if (cnt[e] < cnt[best])
					best = e;
			cnt[best]++;
			x->rep[i] = 2 * (b + best) + 1;
		}
	}
}
