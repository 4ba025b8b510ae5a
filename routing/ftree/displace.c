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
 * direction (x->iv), and the parent chosen is the one whose path has the
 * fewest intervals overlapping the new one at any single shift on its worst
 * link, then in total, then the up port with the fewest moved routes
 * (which spreads them for random permutations), rotating from the ideal
 * slot. A worst link with no overlap keeps the worst shift congestion at
 * 2, which is what one missing link forces; each overlap costs one more.
 *
 * On a degraded tree of 3 levels, the overlaps tie most candidates, and
 * what a random permutation then sees is whether the moved route comes
 * down links that already carry other hosts (each down link on some
 * host's ideal chain carries that host, x->owner): a link whose own host
 * was moved away (its leaf lost the link below) is idle, and a route that
 * comes down it shares nothing; one host met on two links (its core-agg
 * and agg-leaf links: a moved host that follows another host of its leaf)
 * is one sharing, not two. So there the fewest other hosts met count
 * next, before the way into T other sources take (rep) or the sticky
 * replacement. ftree, 50 trees per row (bench/degraded.sh, 3 levels,
 * 1/3/5/10% of the links): EBB higher on all 200; worst tree / target
 * 0.9970 -> 0.9998 (3%), 0.9855 -> 0.9899 (5%), 0.9626 -> 0.9695 (10%);
 * no row's worst shift congestion higher (BENCHMARKS.md "Session 9, ebb3").
 * The count of a parent's path is kept per destination (path_busy),
 * so the candidates' bounds include it exactly. Two levels: unchanged.
 *
 * A switch above the leaves that is not on d's ideal up-tree (no child
 * sends d to it ideally) still chooses its port for d this way, for the
 * children that will move d onto it, but records nothing: those children
 * record their own intervals along the whole path.
 *
 * Cost: per moved route, O(up ports) for the candidates' bounds, plus
 * O(path length x intervals on a link) for each candidate scored; most
 * candidates are never scored (their bound cannot win, or their first
 * link already loses), most lists are skipped by their bucket mask, and
 * a parent's path is walked once per destination (ft_sfx). Nothing at
 * all on a complete tree. Every shortcut keeps the choice exactly.
 */
#include "config.h"
#include "routing/ftree/run.h"

#include <stdlib.h>
#include <string.h>

#define FT_PIECES 96                  /* overlapping intervals measured exactly; more are counted */

static void ideal_init(struct ft_run *x);
static int owner_init(struct ft_run *x);

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
	x->iv = calloc(2 * ne, sizeof(*x->iv));
	x->ivmask = calloc(2 * ne, sizeof(*x->ivmask));
	x->sfx = calloc((size_t)m->nsw + 1, sizeof(*x->sfx));
	x->oit = calloc(4 * ((size_t)m->nsw + 1), sizeof(*x->oit));
	x->oit_u = calloc((size_t)m->nsw + 1, sizeof(*x->oit_u));
	x->link_of = malloc(((size_t)f->n_ports + 1) * sizeof(*x->link_of));
	size_t nh = 1;
	for (uint32_t s = 0; s < m->nsw; s++)
		nh += (size_t)f->nodes[m->sw_node[s]].nports + 1;
	x->hop_off = calloc((size_t)m->nsw + 1, sizeof(*x->hop_off));
	x->hop = malloc(nh * sizeof(*x->hop));
	x->chain = malloc((size_t)maxd * FT_CHAIN * sizeof(*x->chain));
	x->cstamp = calloc((size_t)m->nsw + 1, sizeof(*x->cstamp));
	x->rep = malloc(((size_t)m->n_dest + 1) * sizeof(*x->rep));
	x->sticky = malloc(((size_t)m->slot_off[m->nsw] + 1) * sizeof(*x->sticky));
	if (x->sticky)
		for (uint32_t i = 0; i < m->slot_off[m->nsw]; i++)
			x->sticky[i] = SM_NONE;
	if (x->rep)
		for (uint32_t i = 0; i < m->n_dest; i++)
			x->rep[i] = SM_NONE;
	x->cmask = calloc((size_t)m->nsw + 1, sizeof(*x->cmask));
	if (m->h == 1) { /* spread.c's 2-level preferences for moved routes */
		x->hcnt = calloc(ne, sizeof(*x->hcnt));
		x->nw = m->nsw / 64 + 1;
		x->near = calloc((size_t)maxd * x->nw + 1, sizeof(*x->near));
		x->pre_q = malloc(((size_t)m->n_dest + 1) * sizeof(*x->pre_q));
		x->pre_i = malloc(((size_t)m->n_dest + 1) * sizeof(*x->pre_i));
		x->tl = calloc((size_t)m->nsw + 1, sizeof(*x->tl));
		x->tlst = calloc((size_t)m->nsw + 1, sizeof(*x->tlst));
		if (!x->hcnt || !x->near || !x->pre_q || !x->pre_i || !x->tl || !x->tlst)
			return -1;
	}
	x->bw = m->n_idx / 64 + 1; /* x->nidx is n_idx */
	if (!x->disp || !x->iv || !x->ivmask || !x->sfx || !x->oit || !x->oit_u || !x->link_of || !x->hop_off || !x->hop || !x->chain || !x->cstamp || !x->cmask || !x->rep || !x->sticky)
		return -1;
	for (uint32_t i = 0; i < f->n_ports; i++)
		x->link_of[i] = SM_NONE;
	for (uint32_t s = 0; s < m->nsw; s++)
		for (uint32_t e = m->up_off[s]; e < m->up_off[s + 1]; e++) {
			const struct sm_port *pt = sm_port(f, m->sw_node[s], m->up_port[e]);
			x->link_of[sm_port_index(f, m->sw_node[s], m->up_port[e])] = e;
			x->link_of[sm_port_index(f, pt->peer_node, pt->peer_port)] = e;
		}
	/* the hops of path_links, one load each: port p of s leads to switch nx over interval slot iv */
	for (uint32_t s = 0; s < m->nsw; s++) {
		uint32_t node = m->sw_node[s], np = f->nodes[node].nports;
		x->hop_off[s + 1] = x->hop_off[s] + np + 1;
		struct ft_hop *h = x->hop + x->hop_off[s];
		for (uint32_t p = 0; p <= np; p++) {
			uint32_t nx = p ? ft_peer_slot(m, s, p) : SM_NONE, l = x->link_of[sm_port_index(f, node, p)];
			h[p] = (struct ft_hop){ SM_NONE, 0 };
			if (nx == SM_NONE || l == SM_NONE || m->rank[nx] == FT_RANK_NONE)
				continue;
			h[p].nx = nx;
			h[p].iv = 2 * l + (m->rank[nx] > m->rank[s] ? 0 : 1);
		}
	}
	ideal_init(x);
	ft_rep_preset(x);
	return owner_init(x);
}

/*
 * The down links that some host's ideal chain takes (x->owner, per x->iv
 * slot, odd slots only: the index of that host, FT_OWNERS when several,
 * SM_NONE when none): such a link carries that host's flows from every
 * source, and a moved route that comes down it shares it. Three levels
 * and a degraded tree only (NULL otherwise).
 */
static int owner_init(struct ft_run *x)
{
	const struct ft_model *m = x->m;
	size_t ne = (size_t)m->up_off[m->nsw] + 1;
	int degraded = 0;
	x->owner = NULL;
	if (m->h != 2)
		return 0;
	for (uint32_t i = 0; i < m->slot_off[m->nsw] && !degraded; i++)
		degraded = !m->slot_port[i];
	if (!degraded)
		return 0;
	x->owner = malloc(2 * ne * sizeof(*x->owner));
	x->sbusy = calloc(((size_t)m->nsw + 1) * FT_SBUSY, sizeof(*x->sbusy));
	if (!x->owner || !x->sbusy)
		return -1;
	for (size_t i = 0; i < 2 * ne; i++)
		x->owner[i] = SM_NONE;
	for (uint32_t t = 0; t < m->nsw; t++) {
		if (m->rank[t] != 0 || !ft_has_hosts(m, t))
			continue;
		for (uint32_t i = m->dest_off[t]; i < m->dest_off[t + 1] && m->dest[i].port; i++) {
			for (uint32_t cur = t; cur != SM_NONE && m->rank[cur] < m->h;) {
				uint32_t so = m->slot_off[cur], u = m->slot_off[cur + 1] - so;
				if (!u)
					break;
				uint32_t jj = so + m->dest[i].idx / m->div[m->rank[cur]] % u, nx = m->slot_peer[jj];
				if (nx == SM_NONE)
					break;
				for (uint32_t e = m->up_off[cur]; e < m->up_off[cur + 1]; e++)
					if (m->up_port[e] == m->slot_port[jj]) {
						uint32_t *o = &x->owner[2 * e + 1];
						*o = *o == SM_NONE || *o == m->dest[i].idx ? m->dest[i].idx : FT_OWNERS;
						break;
					}
				cur = nx;
			}
		}
	}
	return 0;
}

void ft_displace_free(struct ft_run *x)
{
	free(x->disp);
	if (x->iv)
		for (size_t i = 0; i < 2 * ((size_t)x->m->up_off[x->m->nsw] + 1); i++)
			free(x->iv[i].v);
	free(x->link_of);
	free(x->hop_off);
	free(x->hop);
	free(x->chain);
	free(x->cstamp);
	free(x->rep);
	free(x->sticky);
	free(x->hcnt);
	free(x->near);
	free(x->pre_q);
	free(x->pre_i);
	free(x->tl);
	free(x->tlst);
	free(x->cmask);
	free(x->iv);
	free(x->ivmask);
	free(x->sfx);
	free(x->oit);
	free(x->oit_u);
	free(x->owner);
	free(x->sbusy);
}

void ft_chains(struct ft_run *x, uint32_t t, const struct ft_dest *d0, uint32_t nd)
{
	const struct ft_model *m = x->m;
	if (x->tl)
		ft_tlinks(x, t, d0, nd);
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
static int on_ideal_tree(const struct ft_model *m, uint32_t s, uint32_t idx);

/*
 * The same for a switch just above the leaves whose children all have U
 * up slots: idx is on it when the children's slot idx mod U leads to s,
 * one bit of x->oit (set up by ideal_init; oit_u[s] = U + 1, 0 = ask
 * on_ideal_tree).
 */
static int on_ideal(const struct ft_run *x, uint32_t s, uint32_t idx)
{
	const struct ft_model *m = x->m;
	if (m->rank[s] == 0)
		return 1;
	uint32_t u = x->oit_u[s];
	if (!u)
		return on_ideal_tree(m, s, idx);
	uint32_t r = u > 1 ? idx / m->div[0] % (u - 1) : 0;
	return u > 1 && (x->oit[4 * (size_t)s + r / 64] >> (r % 64) & 1);
}

static void ideal_init(struct ft_run *x)
{
	const struct ft_model *m = x->m;
	for (uint32_t s = 0; s < m->nsw; s++) {
		uint32_t u0 = 0, ok = m->rank[s] == 1;
		for (uint32_t e = m->dn_off[s]; e < m->dn_off[s + 1] && ok; e++) {
			uint32_t c = m->dn_peer[e], u = m->slot_off[c + 1] - m->slot_off[c];
			ok = m->rank[c] == 0 && (!u || !u0 || u == u0) && u <= 256;
			if (u)
				u0 = u;
		}
		if (!ok)
			continue;
		for (uint32_t e = m->dn_off[s]; e < m->dn_off[s + 1]; e++) {
			uint32_t c = m->dn_peer[e], so = m->slot_off[c];
			for (uint32_t jj = 0; jj < m->slot_off[c + 1] - so; jj++)
				if (m->slot_peer[so + jj] == s)
					x->oit[4 * (size_t)s + jj / 64] |= 1ull << (jj % 64);
		}
		x->oit_u[s] = (uint16_t)(u0 + 1);
	}
}

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

/*
 * The buckets of shifts (64 of x->bw shifts each) that the cyclic interval
 * [a, a + len) meets, as a bit mask: two intervals that share no bucket
 * share no shift.
 */
static uint64_t bucket_mask(const struct ft_run *x, uint32_t a, uint32_t len)
{
	uint32_t n = x->nidx ? x->nidx : 1;
	if (len >= n)
		return ~0ull;
	uint32_t b0 = a / x->bw, b1 = (uint32_t)(((uint64_t)a + len - 1) % n) / x->bw;
	if ((uint64_t)a + len <= n)
		return ((2ull << (b1 - b0)) - 1) << b0;
	return ~0ull << b0 | ((2ull << b1) - 1); /* wraps past shift n - 1 */
}

/* Insertion sort: the lists are short (at most 2 * FT_PIECES), and qsort's calls cost more than the sort. */
static void sort_u32(uint32_t *v, uint32_t n)
{
	for (uint32_t i = 1; i < n; i++) {
		uint32_t x = v[i], j = i;
		for (; j > 0 && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

/* depth() when at least two intervals meet [a, a + len): place them and sweep. */
static __attribute__((noinline)) unsigned depth_sweep(const struct ft_ivec *l, uint32_t n, uint32_t a, uint32_t len)
{
	uint32_t st[2 * FT_PIECES], en[2 * FT_PIECES], np = 0;
	unsigned extra = 0;

	for (uint32_t k = 0; k < l->n; k++) {
		const struct ft_iv *v = &l->v[k];
		uint32_t o = v->start >= a ? v->start - a : v->start + n - a;
		if (np + 2 > 2 * FT_PIECES) {
			extra++; /* too many to place: count it as overlapping everywhere */
			continue;
		}
		if (o < len) {
			st[np] = o;
			en[np++] = o + v->len < len ? o + v->len : len;
		}
		if (o + v->len > n) {
			st[np] = 0;
			en[np++] = o + v->len - n < len ? o + v->len - n : len;
		}
	}
	if (!np)
		return extra;
	sort_u32(st, np);
	sort_u32(en, np);
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

/* Most intervals of link slot's list covering one shift of [a, a + len) (cyclic mod n). */
static inline unsigned depth(const struct ft_run *x, uint32_t slot, uint32_t a, uint32_t len, uint64_t qmask)
{
	if (!(x->ivmask[slot] & qmask))
		return 0; /* no interval shares a bucket of shifts with [a, a + len) */
	const struct ft_ivec *l = &x->iv[slot];
	uint32_t n = x->nidx, hits = 0;
	/*
	 * Most lists have at most one interval meeting [a, a + len): count
	 * them first, without sorting. v meets it when v starts inside it or
	 * wraps past n onto a (v->len <= n: a list never holds more).
	 */
	for (uint32_t k = 0; k < l->n && hits <= 1; k++) {
		const struct ft_iv *v = &l->v[k];
		uint32_t o = v->start >= a ? v->start - a : v->start + n - a; /* v's start, from a */
		hits += (o < len) | (o > n - v->len);
	}
	return hits <= 1 ? hits : depth_sweep(l, n, a, len);
}

static void iv_add(struct ft_run *x, uint32_t slot, uint32_t a, uint32_t len)
{
	struct ft_ivec *l = &x->iv[slot];
	uint32_t n = x->nidx ? x->nidx : 1;

	x->ivmask[slot] |= bucket_mask(x, a, len);
	/*
	 * The leaves that move one destination onto one path have adjacent
	 * source ranges, so their shift intervals touch: extend the latest
	 * interval instead of adding one (same coverage, a short list).
	 */
	if (l->n && l->v[l->n - 1].len + len <= n) {
		struct ft_iv *v = &l->v[l->n - 1];
		if ((a + len) % n == v->start) {
			v->start = a;
			v->len += len;
			return;
		}
		if ((v->start + v->len) % n == a) {
			v->len += len;
			return;
		}
	}
	if (l->n == l->cap) {
		uint32_t cap = l->cap ? 2 * l->cap : 4;
		struct ft_iv *p = realloc(l->v, (size_t)cap * sizeof(*p));
		if (!p) {
			x->oom = 1;
			return;
		}
		l->v = p;
		l->cap = cap;
	}
	l->v[l->n++] = (struct ft_iv){ a, len };
}

/*
 * The links (as x->iv slots) a route toward T's destination d0[i] takes
 * from parent q on, leaving out the down links of its ideal chain: n = -1
 * when a hop is not routed. Kept per switch for the destination last
 * asked (the leaves of a pod all ask their parents about the same moved
 * destination): the entries on the way are those of q, of switches above
 * it and of T's ancestors, all written before any switch below q is
 * routed, so the path cannot change within one destination switch.
 */
static const struct ft_sfx *suffix(struct ft_run *x, uint32_t q, const struct ft_dest *d, uint32_t di,
				   const uint32_t *chain)
{
	const struct ft_model *m = x->m;
	struct ft_sfx *sf = &x->sfx[q];
	if (sf->gen == x->gen && sf->di == di)
		return sf;
	sf->gen = x->gen;
	sf->di = di;
	sf->n = -1;
	sf->busy = 0;
	int n = 0;
	for (uint32_t cur = q; cur != x->t;) {
		uint8_t p = COL(x->col + cur, d->lid);
		uint32_t ho = x->hop_off[cur];
		if (!p || p >= x->hop_off[cur + 1] - ho || n >= FT_PATH - 1) /* SM_LFT_NONE too: nports <= 254 */
			return sf;
		struct ft_hop h = x->hop[ho + p];
		if (h.nx == SM_NONE)
			return sf;
		if (!(h.iv & 1))
			sf->v[n++] = h.iv;
		else if (chain[m->rank[h.nx]] != h.nx || chain[m->rank[cur]] != cur)
			sf->v[n++] = h.iv;
		cur = h.nx;
	}
	sf->n = n;
	/* the other hosts whose ideal down links it takes: one host met twice (its CA and AL links) counts once */
	uint32_t met[FT_PATH];
	sf->busy = 0;
	for (int l = 0; x->owner && l < n; l++) {
		uint32_t o = sf->v[l] & 1 ? x->owner[sf->v[l]] : SM_NONE, k = 0;
		while (k < sf->busy && met[k] != o)
			k++;
		if (o != SM_NONE && (k == sf->busy || o == FT_OWNERS))
			met[sf->busy++] = o;
	}
	return sf;
}

/* The last link of a path from its suffix when it goes down into T's chain, else SM_NONE (for rep). */
static uint32_t sfx_last(const struct ft_sfx *sf)
{
	return sf->n > 0 && (sf->v[sf->n - 1] & 1) ? sf->v[sf->n - 1] : SM_NONE;
}

/*
 * The busy count and last link of suffix(q, ...), kept per switch for
 * FT_SBUSY destinations of T at once: a pod's leaves ask their parents
 * about each moved destination in turn, leaf after leaf, which the one
 * path suffix() keeps per switch would walk again every time.
 */
static const struct ft_sbusy *path_busy(struct ft_run *x, uint32_t q, const struct ft_dest *d, uint32_t di,
					const uint32_t *chain)
{
	struct ft_sbusy *sb = &x->sbusy[(size_t)q * FT_SBUSY + di % FT_SBUSY];
	if (sb->gen != x->gen || sb->di != di) {
		const struct ft_sfx *sf = suffix(x, q, d, di, chain);
		*sb = (struct ft_sbusy){ x->gen, di, sf->busy, sfx_last(sf) };
	}
	return sb;
}

/* One call of ft_displace: the moved route and the best candidate so far. */
struct ft_call {
	const struct ft_dest *d;
	const uint32_t *chain;
	uint32_t di, a, len, ideal, rep;
	uint32_t *sticky;       /* own: the slot's sticky replacement; NULL otherwise */
	uint32_t i;             /* d's index in d0 */
	int own2;               /* own on 2 levels, no rep: placed by ft_own_pref instead (spread.c) */
	uint64_t qmask;
	unsigned rp_shift, busy_shift; /* score bits of rep/sticky and of busy links (0: not counted) */
	uint64_t best_score;
	uint32_t best, best_k;  /* up link, its rotation position */
	int best_np;
	uint32_t best_path[FT_PATH];
};

/*
 * Score up link e (rotation position k, parent reaches T) and keep it if
 * it beats the best. The path is [2e] then the parent's suffix, less 2e
 * when e is the ideal link (its parent's own route was a conflict: it
 * already carries d). The first link is scored before the walk: most
 * losers lose on it.
 */
static void try_up(struct ft_run *x, struct ft_call *c, uint32_t k, uint32_t e)
{
	uint64_t spread = x->disp[e] > 0x7fffffff ? 0x7fffffff : x->disp[e];
	uint64_t worst = 0, sum = 0, best_worst = c->best_score >> 48;
	int first = e != c->ideal;
	if (first) {
		worst = sum = depth(x, 2 * e, c->a, c->len, c->qmask);
		if ((worst > 0xffff ? 0xffff : worst) > best_worst)
			return; /* its score is above the best whatever the rest of the path */
	}
	const struct ft_sfx *sf = suffix(x, x->m->up_peer[e], c->d, c->di, c->chain);
	if (sf->n < 0)
		worst = sum = 1;
	for (int l = 0; l < sf->n && worst <= best_worst; l++) {
		uint64_t dp = depth(x, sf->v[l], c->a, c->len, c->qmask);
		sum += dp;
		if (dp > worst)
			worst = dp;
	}
	/* the way into T other sources already take d (one down link per moved destination) */
	uint32_t last = sfx_last(sf);
	uint64_t rp = c->sticky ? *c->sticky != SM_NONE && e != *c->sticky : c->rep != SM_NONE && last != c->rep;
	uint64_t score = ((worst > 0xffff ? 0xffff : worst) << 48) + ((sum > 0xffff ? 0xffff : sum) << 32);
	if (x->hcnt) { /* 2 levels (spread.c): rp is 0 for own2 */
		score += rp << 31 | (uint64_t)ft_own_pref(x, c->i, e, last) << 24 | ft_own_tie(x, e) << 16 |
			 (spread > 0xffff ? 0xffff : spread);
	} else { /* busy_shift 0 (not 3 levels, or a complete tree): rp << 31, busy 0 */
		uint64_t busy = sf->busy > 3 ? 3 : sf->busy;
		if (c->busy_shift && spread > 0x0fffffff)
			spread = 0x0fffffff;
		score += (rp << c->rp_shift) + (busy << c->busy_shift) + spread;
	}
	if (score < c->best_score || (score == c->best_score && k < c->best_k)) {
		c->best_score = score;
		c->best = e;
		c->best_k = k;
		c->best_np = sf->n < 0 ? -1 : sf->n + first;
		if (first)
			c->best_path[0] = 2 * e;
		if (sf->n > 0)
			memcpy(c->best_path + first, sf->v, (size_t)sf->n * sizeof(*sf->v));
	}
}

uint8_t ft_displace(struct ft_run *x, uint32_t s, uint32_t j, const struct ft_dest *d0, uint32_t i)
{
	const struct ft_model *m = x->m;
	const struct ft_dest *d = &d0[i];
	uint32_t b = m->up_off[s], n = m->up_off[s + 1] - b, nidx = x->nidx ? x->nidx : 1;
	struct ft_call c = { .d = d, .chain = x->chain + (size_t)i * FT_CHAIN, .di = (uint32_t)(d - m->dest),
			     .best_score = UINT64_MAX, .best = SM_NONE, .ideal = SM_NONE };

	/* the shifts in which the sources below s send to d */
	uint32_t lo = m->hlo[s], hi = m->hhi[s] > lo ? m->hhi[s] : lo + 1;
	c.len = hi - lo >= nidx ? nidx : hi - lo;
	c.a = (d->idx % nidx + nidx - (hi - 1) % nidx) % nidx;
	c.qmask = bucket_mask(x, c.a, c.len);
	c.rep = x->rep[c.di];
	c.rp_shift = 31;
	if (x->owner) { /* 3 levels, degraded: busy down links count before rep and sticky */
		c.busy_shift = 30;
		c.rp_shift = 29;
	}
	uint32_t so = m->slot_off[s];
	/*
	 * A missing link of s itself moves every destination of slot j: the
	 * same replacement link each time (sticky) gives it one moved route
	 * per window of shifts; otherwise (the parent lost its way to T) all
	 * sources should take d into T by the same link (rep). On 2 levels
	 * neither sticks: rep (preset, spread.c) when d has one, else each
	 * route goes where it costs T least (ft_own_pref).
	 */
	int own = m->slot_off[s + 1] > so && !m->slot_port[so + j];
	c.own2 = own && x->hcnt && c.rep == SM_NONE;
	c.i = i;
	if (x->hcnt)
		own = 0; /* 2 levels: no sticky replacement; a preset host keeps its way into T (rep) */
	c.sticky = own ? &x->sticky[so + j] : NULL;
	if (m->slot_off[s + 1] > so && m->slot_peer[so + j] != SM_NONE)
		for (uint32_t e = b; e < b + n && c.ideal == SM_NONE; e++)
			if (m->up_port[e] == m->slot_port[so + j])
				c.ideal = e;

	/*
	 * The choice is the least score, first in rotation from slot j on
	 * ties. A candidate's score is at least its spread, plus the sticky
	 * preference (1 << 31) when it is not the sticky link: so the sticky
	 * link is scored alone first, and when it neither overlaps nor
	 * misses, no other can win. Otherwise the candidate of least bound
	 * is scored first and then the others in rotation whose bound can
	 * still win: most calls score one or a few paths instead of all.
	 */
	uint32_t j0 = j % n, sk = SM_NONE;
	if (c.sticky && *c.sticky != SM_NONE && *c.sticky - b < n && ft_reach(x, m->up_peer[*c.sticky])) {
		sk = (*c.sticky - b + n - j0) % n;
		try_up(x, &c, sk, *c.sticky);
		if (c.best_score < 1ull << c.rp_shift && (c.busy_shift < c.rp_shift || c.best_score < 1ull << c.busy_shift))
			goto chosen;
	}
	uint64_t keys[256];
	uint32_t nk = 0, mi = 0;
	for (uint32_t k = 0, e = b + j0; k < n; k++, e = e + 1 == b + n ? b : e + 1) {
		if (k == sk || !ft_reach(x, m->up_peer[e]))
			continue; /* scored already, or its parent does not reach T */
		uint64_t lb = x->disp[e] > 0x7fffffff ? 0x7fffffff : x->disp[e];
		if (x->hcnt) {
			lb = ft_own_bound(x, i, e, c.rep); /* own is 0 there */
		} else {
			if (c.busy_shift && lb > 0x0fffffff)
				lb = 0x0fffffff;
			if (c.sticky && *c.sticky != SM_NONE && e != *c.sticky)
				lb += 1ull << c.rp_shift;
			if (c.busy_shift) {
				/* with busy links every path is walked, once per parent and destination: exact busy and rep */
				const struct ft_sbusy *sb = path_busy(x, m->up_peer[e], d, c.di, c.chain);
				if (!c.sticky && c.rep != SM_NONE && sb->last != c.rep)
					lb += 1ull << c.rp_shift;
				lb += (uint64_t)(sb->busy > 3 ? 3 : sb->busy) << c.busy_shift;
			} else if (!c.sticky && c.rep != SM_NONE) {
				const struct ft_sfx *sf = &x->sfx[m->up_peer[e]];
				if (sf->gen == x->gen && sf->di == c.di && sfx_last(sf) != c.rep)
					lb += 1ull << c.rp_shift; /* its path, known already, does not end on rep */
			}
		}
		keys[nk] = lb << 8 | k;
		if (keys[nk] < keys[mi])
			mi = nk;
		nk++;
	}
	/* (bound, k) can beat (best_score, best_k) only while key <= thr (bounds stay below 1 << 33) */
	uint64_t thr = c.best_score >> 56 ? UINT64_MAX : c.best_score << 8 | c.best_k;
	for (uint32_t t = 0; t <= nk; t++) {
		uint32_t ki = t ? t - 1 : mi; /* the least bound first, then all in rotation */
		if ((t && ki == mi) || ki >= nk || keys[ki] > thr)
			continue;
		uint32_t k = (uint32_t)(keys[ki] & 0xff);
		try_up(x, &c, k, b + (j0 + k) % n);
		thr = c.best_score >> 56 ? UINT64_MAX : c.best_score << 8 | c.best_k;
	}
chosen:
	if (c.best == SM_NONE)
		return SM_LFT_NONE;
	int record = on_ideal(x, s, d->idx);
	if (record && m->rank[s] > 0 && c.best_score >> 48 && i < 64) {
		/*
		 * No parent takes the whole subtree's sources without stacking
		 * on a moved route: record nothing, and let the children below,
		 * whose sources are fewer, each move d on their own (route_up).
		 */
		if (x->cstamp[s] != x->gen) {
			x->cstamp[s] = x->gen;
			x->cmask[s] = 0;
		}
		x->cmask[s] |= 1ull << i;
	} else if (record) {
		/* the intervals of its worst link now meet at worst + 1 deep in some shift */
		if (c.best_np > 0 && (c.best_score >> 48) + 1 > x->stack)
			x->stack = (unsigned)(c.best_score >> 48) + 1;
		for (int l = 0; l < c.best_np; l++)
			iv_add(x, c.best_path[l], c.a, c.len);
		if (c.rep == SM_NONE && !c.own2 && c.best_np > 0 && (c.best_path[c.best_np - 1] & 1))
			x->rep[c.di] = c.best_path[c.best_np - 1];
		if (c.sticky)
			*c.sticky = c.best;
	}
	if (c.best != c.ideal) {
		x->disp[c.best]++;
		x->displaced++;
	}
	return m->up_port[c.best];
}
