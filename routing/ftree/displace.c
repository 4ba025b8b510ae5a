/* SPDX-License-Identifier: MIT */
/*
 * DOC: ftree: where a route goes when its ideal slot cannot be used
 *
 * Shift k sends host i to host i + k (mod N, canonical order, metrics.h).
 * On a complete tree the ideal slots give every directed switch link at
 * most one flow per shift. On a degraded tree a route of destination d at
 * switch s whose ideal parent is missing or cannot reach d's leaf T is
 * moved to another parent q ("displaced"); every other route keeps its
 * ideal entry, so a lost link moves only the routes that used it.
 *
 * A moved route serves the sources below s, hosts [lo, hi) (a leaf's
 * hosts, a pod's), so it loads the links of its path in exactly the shifts
 * k = d - i, i in [lo, hi): a cyclic interval of hi - lo shifts. The links
 * of the path are s -> q, then q's own route for d (switches are routed
 * from the top down, so it is known), up and down to T; the down links on
 * d's ideal chain (T, T's ideal parent for d, its ideal parent, ...)
 * already carry d in every shift and gain nothing. Every other link of
 * the path gains this interval. Each link keeps its intervals, per
 * direction (iv_head), and the parent chosen is the one whose path has the
 * fewest intervals overlapping the new one at any single shift on its worst
 * link, then in total, then the up port with the fewest moved routes
 * (which spreads them for random permutations), rotating from the ideal
 * slot. A worst link with no overlap keeps the worst shift congestion at
 * 2, which is what one missing link forces; each overlap costs one more.
 *
 * A switch above the leaves that is not on d's ideal up-tree (no child
 * sends d to it ideally) still chooses its port for d this way, for the
 * children that will move d onto it, but records nothing: those children
 * record their own intervals along the whole path.
 *
 * Cost: per moved route, O(up ports x path length x intervals on a link);
 * nothing at all on a complete tree.
 */
#include "config.h"
#include "routing/ftree/run.h"

#include <stdlib.h>
#include <string.h>

#define FT_PATH (2 * FT_MAX_RANK + 2) /* links of a route from a switch to T, at most */
#define FT_PIECES 96                  /* overlapping intervals measured exactly; more are counted */

int ft_displace_init(struct ft_run *x)
{
	const struct ft_model *m = x->m;
	const struct sm_fabric *f = m->f;
	size_t ne = (size_t)m->up_off[m->nsw] + 1;
	uint32_t maxd = 1;

	for (uint32_t s = 0; s < m->nsw; s++)
		if (m->dest_off[s + 1] - m->dest_off[s] > maxd)
			maxd = m->dest_off[s + 1] - m->dest_off[s];
	x->disp = calloc(ne, sizeof(*x->disp));
	x->iv_head = malloc(2 * ne * sizeof(*x->iv_head));
	x->link_of = malloc(((size_t)f->n_ports + 1) * sizeof(*x->link_of));
	x->chain = malloc((size_t)maxd * FT_CHAIN * sizeof(*x->chain));
	if (!x->disp || !x->iv_head || !x->link_of || !x->chain)
		return -1;
	for (size_t i = 0; i < 2 * ne; i++)
		x->iv_head[i] = SM_NONE;
	for (uint32_t i = 0; i < f->n_ports; i++)
		x->link_of[i] = SM_NONE;
	for (uint32_t s = 0; s < m->nsw; s++)
		for (uint32_t e = m->up_off[s]; e < m->up_off[s + 1]; e++) {
			const struct sm_port *pt = sm_port(f, m->sw_node[s], m->up_port[e]);
			x->link_of[sm_port_index(f, m->sw_node[s], m->up_port[e])] = e;
			x->link_of[sm_port_index(f, pt->peer_node, pt->peer_port)] = e;
		}
	return 0;
}

void ft_displace_free(struct ft_run *x)
{
	free(x->disp);
	free(x->iv_head);
	free(x->link_of);
	free(x->chain);
	free(x->iv);
}

void ft_chains(struct ft_run *x, uint32_t t, const struct ft_dest *d0, uint32_t nd)
{
	const struct ft_model *m = x->m;
	for (uint32_t i = 0; i < nd; i++) {
		uint32_t *c = x->chain + (size_t)i * FT_CHAIN, cur = t;
		unsigned r = 0;
		c[r++] = t;
		while (r < FT_CHAIN && cur != SM_NONE) {
			uint32_t so = m->slot_off[cur], u = m->slot_off[cur + 1] - so;
			cur = u ? m->slot_peer[so + d0[i].idx / m->div[m->rank[cur]] % u] : SM_NONE;
			c[r++] = cur;
		}
		while (r < FT_CHAIN)
			c[r++] = SM_NONE;
	}
}

/* Some child of s sends destination idx to s by its ideal slot (and is itself on the ideal up-tree). */
static int on_ideal_tree(const struct ft_model *m, uint32_t s, uint32_t idx)
{
	if (m->rank[s] == 0)
		return 1;
	for (uint32_t e = m->dn_off[s]; e < m->dn_off[s + 1]; e++) {
		uint32_t c = m->dn_peer[e], so = m->slot_off[c], u = m->slot_off[c + 1] - so;
		if (u && m->slot_peer[so + idx / m->div[m->rank[c]] % u] == s && on_ideal_tree(m, c, idx))
			return 1;
	}
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* Most intervals of list head covering one shift of [a, a + len) (cyclic mod n). */
static unsigned depth(const struct ft_run *x, uint32_t head, uint32_t a, uint32_t len)
{
	uint32_t st[2 * FT_PIECES], en[2 * FT_PIECES], np = 0, n = x->nidx;
	unsigned extra = 0;

	for (uint32_t k = head; k != SM_NONE; k = x->iv[k].next) {
		const struct ft_iv *v = &x->iv[k];
		uint32_t o = (v->start + n - a) % n;
		int hit = 0;
		if (np + 2 > 2 * FT_PIECES) {
			extra++; /* too many to place: count it as overlapping everywhere */
			continue;
		}
		if (o < len) {
			st[np] = o;
			en[np++] = o + v->len < len ? o + v->len : len;
			hit = 1;
		}
		if (o + v->len > n) {
			st[np] = 0;
			en[np++] = o + v->len - n < len ? o + v->len - n : len;
			hit = 1;
		}
		(void)hit;
	}
	if (!np)
		return extra;
	qsort(st, np, sizeof(*st), cmp_u32);
	qsort(en, np, sizeof(*en), cmp_u32);
	unsigned cur = 0, best = 0;
	for (uint32_t i = 0, j = 0; i < np;) {
		if (st[i] < en[j]) {
			if (++cur > best)
				best = cur;
			i++;
		} else {
			cur--;
			j++;
		}
	}
	return best + extra;
}

static void iv_add(struct ft_run *x, uint32_t slot, uint32_t a, uint32_t len)
{
	if (x->n_iv == x->cap_iv) {
		uint32_t cap = x->cap_iv ? 2 * x->cap_iv : 4096;
		struct ft_iv *p = realloc(x->iv, (size_t)cap * sizeof(*p));
		if (!p) {
			x->oom = 1;
			return;
		}
		x->iv = p;
		x->cap_iv = cap;
	}
	x->iv[x->n_iv] = (struct ft_iv){ a, len, x->iv_head[slot] };
	x->iv_head[slot] = x->n_iv++;
}

/*
 * The links (as iv_head slots) a route toward T's destination i takes from
 * parent q on, after the up link e, leaving out the down links of its
 * ideal chain. Returns how many, or -1 when a hop is not routed yet.
 */
static int path_links(struct ft_run *x, uint32_t e, uint32_t q, const struct ft_dest *d, const uint32_t *chain,
		      uint32_t *out)
{
	const struct ft_model *m = x->m;
	const struct sm_fabric *f = m->f;
	int n = 0;
	uint32_t cur = q;

	out[n++] = 2 * e;
	while (cur != x->t) {
		uint8_t p = COL(x->col + cur, d->lid);
		uint32_t node = m->sw_node[cur];
		if (p == SM_LFT_NONE || !p || p > f->nodes[node].nports || n >= FT_PATH)
			return -1;
		uint32_t nx = ft_peer_slot(m, cur, p), l = x->link_of[sm_port_index(f, node, p)];
		if (nx == SM_NONE || l == SM_NONE || m->rank[nx] == FT_RANK_NONE)
			return -1;
		if (m->rank[nx] > m->rank[cur])
			out[n++] = 2 * l;
		else if (!(m->rank[nx] < FT_CHAIN - 1 && chain[m->rank[nx]] == nx && chain[m->rank[cur]] == cur))
			out[n++] = 2 * l + 1;
		cur = nx;
	}
	return n;
}

uint8_t ft_displace(struct ft_run *x, uint32_t s, uint32_t j, const struct ft_dest *d0, uint32_t i)
{
	const struct ft_model *m = x->m;
	const struct ft_dest *d = &d0[i];
	const uint32_t *chain = x->chain + (size_t)i * FT_CHAIN;
	uint32_t b = m->up_off[s], n = m->up_off[s + 1] - b, nidx = x->nidx ? x->nidx : 1;
	uint32_t best = SM_NONE, best_path[FT_PATH], path[FT_PATH];
	int best_np = 0;
	uint64_t best_score = UINT64_MAX;

	/* the shifts in which the sources below s send to d */
	uint32_t lo = m->hlo[s], hi = m->hhi[s] > lo ? m->hhi[s] : lo + 1;
	uint32_t len = hi - lo >= nidx ? nidx : hi - lo;
	uint32_t a = (d->idx % nidx + nidx - (hi - 1) % nidx) % nidx;
	int record = on_ideal_tree(m, s, d->idx);

	for (uint32_t k = 0, e = b + j % n; k < n; k++, e = e + 1 == b + n ? b : e + 1) {
		uint32_t q = m->up_peer[e];
		if (!ft_reach(x, q))
			continue;
		uint64_t spread = x->disp[e] > 0xffffff ? 0xffffff : x->disp[e];
		if (spread >= best_score)
			continue; /* even a path with no overlap would not win */
		int np = path_links(x, e, q, d, chain, path);
		uint64_t worst = np < 0, sum = np < 0;
		for (int l = 0; l < np; l++) {
			uint64_t dp = depth(x, x->iv_head[path[l]], a, len);
			sum += dp;
			if (dp > worst)
				worst = dp;
		}
		uint64_t score = ((worst > 0xffff ? 0xffff : worst) << 40) + ((sum > 0xffff ? 0xffff : sum) << 24) + spread;
		if (score < best_score) {
			best_score = score;
			best = e;
			best_np = np;
			if (np > 0)
				memcpy(best_path, path, (size_t)np * sizeof(*path));
		}
	}
	if (best == SM_NONE)
		return SM_LFT_NONE;
	if (record)
		for (int l = 0; l < best_np; l++)
			iv_add(x, best_path[l], a, len);
	x->disp[best]++;
	x->displaced++;
	return m->up_port[best];
}
