/* SPDX-License-Identifier: MIT */
/*
 * DOC: ftree: a repair pass over the moved routes of a degraded tree
 *
 * displace.c places each moved route greedily, destination switch by
 * destination switch, without the later destinations' shifts: where the
 * moved routes of two destination leaves meet on one link in the same
 * shifts (an aggregation-core link near a pod boundary, session 7), a link
 * can end two above the bound. This pass runs after every destination is
 * routed, and only when displace.c's own record of the moved routes (the
 * shift intervals per link, x->iv) says some link may carry more than
 * FT_REPAIR_ABOVE flows in one shift (1 ideal + the most intervals that
 * cover one shift of a link, x->stack).
 *
 * It then counts every link's exact load per shift from the tables (each
 * source leaf's path toward each host; sources of one leaf take one path,
 * so a path loads a cyclic interval of shifts), and while the worst load M
 * is above FT_REPAIR_ABOVE it clears the cells (link, shift) at M one by
 * one: for a flow through such a cell, one up entry on its way there (at
 * its leaf or a switch above, toward its destination LID) is pointed at
 * another parent whose own route to the destination leaf is up then down.
 * That moves the routes of every source leaf passing that switch; the move
 * is taken only if no cell it adds to reaches M, and the least loaded such
 * move wins (then the fewest cells added; first found on ties). So the
 * count of cells at M only falls; when one cannot be cleared, every entry
 * changed at this level is put back and the pass stops. Routes stay up
 * then down (free of credit loops), switch LIDs are untouched.
 *
 * FT_REPAIR_ABOVE is 3: bound + 1 where the bound is 2, what one missing
 * link forces on the trees we generate (BENCHMARKS.md, "Degraded fat
 * trees"); the pass does not compute the tree's bound itself
 * (routing/metrics_bound.c costs as much as the repair).
 *
 * Cost: nothing on a complete tree or when the intervals stay low (the
 * trigger is displace.c's deepest overlap, x->stack, kept as it places
 * each route); when it runs, a byte per (directed link, shift) (trees
 * above FT_REPAIR_CELLS cells are left alone), N x leaves path walks and
 * N^2 x path increments to count the loads, plus N path walks per cell
 * cleared (2,048-host 3-level trees: 40-50 ms more where it runs).
 *
 * Once triggered, it depends on the model and the tables alone; the
 * trigger on the placement's state. reroute.c, which places only a few
 * destinations again, declines (the loader routes in full) when the
 * trigger fires on its run (ft_repair_wanted) rather than repeat it.
 */
#include "config.h"
#include "routing/ftree/run.h"

#include <stdlib.h>
#include <string.h>

#define FT_REPAIR_ABOVE 3
#define FT_REPAIR_CELLS ((size_t)64 << 20) /* directed links x shifts counted at most */

int ft_repair_wanted(const struct ft_run *x)
{
	const struct ft_model *m = x->m;
	size_t ns = 2 * (size_t)m->up_off[m->nsw];
	if (!x->displaced || x->nidx < 2 || ns * x->nidx > FT_REPAIR_CELLS)
		return 0; /* nothing moved, or too large to count (ft_repair) */
	/* 1 ideal flow + the recorded intervals covering one shift of a link (displace.c keeps the most) */
	return x->oom || x->stack >= FT_REPAIR_ABOVE;
}

struct rp {
	struct ft_run *x;
	const struct ft_model *m;
	uint32_t n;        /* hosts: shifts 0 .. n - 1 */
	uint8_t *load;     /* [slot * n + shift] flows on directed link slot in that shift */
	uint16_t *lid_of;  /* [host index] its (first) LID */
	uint32_t *t_of;    /* [host index] its leaf */
	uint32_t *jn;      /* journal: switch, LID, old port (3 words per entry) */
	uint32_t njn, jcap;
	uint8_t *aff;      /* [n_hleaf] leaf passes the switch being moved */
	uint8_t *rowmax;   /* [slot] most loaded cell of the link when max_load ran */
	uint64_t moved;
};

static inline uint8_t *entry(const struct rp *r, uint32_t s, uint32_t lid)
{
	return r->x->col + (size_t)s * r->x->nl + lid;
}

/*
 * The links (x->iv slots) from switch s to leaf t toward lid, and the
 * switches reached (sw[h + 1] after link h; sw may be NULL): their count,
 * -1 unless the path is up then down and reaches t.
 */
static int walk(const struct rp *r, uint32_t s, uint32_t lid, uint32_t t, uint32_t *v, uint32_t *sw)
{
	const struct ft_run *x = r->x;
	int n = 0, down = 0;
	if (sw)
		sw[0] = s;
	while (s != t) {
		uint8_t p = *entry(r, s, lid);
		uint32_t ho = x->hop_off[s];
		if (!p || p >= x->hop_off[s + 1] - ho || n >= FT_PATH)
			return -1;
		struct ft_hop h = x->hop[ho + p];
		if (h.nx == SM_NONE || (!(h.iv & 1) && down))
			return -1;
		down |= (int)(h.iv & 1);
		v[n++] = h.iv;
		s = h.nx;
		if (sw)
			sw[n] = s;
	}
	return n;
}

/* The shifts in which leaf l's hosts send to host index d: [*a, *a + len) mod n. */
static uint32_t leaf_shifts(const struct rp *r, uint32_t l, uint32_t d, uint32_t *a)
{
	const struct ft_model *m = r->m;
	uint32_t lo = m->hlo[l], hi = m->hhi[l];
	*a = (d + r->n - (hi - 1) % r->n) % r->n;
	return hi - lo;
}

static void add(struct rp *r, uint32_t slot, uint32_t a, uint32_t len, int delta)
{
	uint8_t *row = r->load + (size_t)slot * r->n;
	uint32_t k1 = r->n - a < len ? r->n - a : len; /* [a, a + k1), then [0, len - k1) past the wrap */
	for (uint32_t k = 0; k < k1; k++)
		row[a + k] = (uint8_t)(row[a + k] + delta);
	for (uint32_t k = 0; k < len - k1; k++)
		row[k] = (uint8_t)(row[k] + delta);
}

static void count_loads(struct rp *r)
{
	struct ft_run *x = r->x;
	uint32_t v[FT_PATH];
	memset(r->load, 0, (size_t)2 * r->m->up_off[r->m->nsw] * r->n);
	for (uint32_t d = 0; d < r->n; d++) {
		uint32_t t = r->t_of[d];
		if (t == SM_NONE)
			continue;
		for (uint32_t k = 0; k < x->n_hleaf; k++) {
			uint32_t l = x->hleaf[k], a;
			if (l == t)
				continue;
			int nv = walk(r, l, r->lid_of[d], t, v, NULL);
			uint32_t len = leaf_shifts(r, l, d, &a);
			for (int h = 0; h < nv; h++)
				add(r, v[h], a, len, 1);
		}
	}
}

/* The most loaded cell, and each link's (r->rowmax). */
static unsigned max_load(struct rp *r)
{
	size_t ns = 2 * (size_t)r->m->up_off[r->m->nsw];
	uint8_t mx = 0;
	for (size_t slot = 0; slot < ns; slot++) {
		const uint8_t *row = r->load + slot * r->n;
		uint8_t rm = 0;
		for (uint32_t k = 0; k < r->n; k++)
			rm = row[k] > rm ? row[k] : rm;
		r->rowmax[slot] = rm;
		mx = rm > mx ? rm : mx;
	}
	return mx;
}

static int in(const uint32_t *v, int n, uint32_t slot)
{
	for (int i = 0; i < n; i++)
		if (v[i] == slot)
			return 1;
	return 0;
}

/* A move: switch s's entry for host d's LID to up link e. */
struct move {
	uint32_t s, e, d;
	unsigned worst;   /* the most loaded cell it adds to, after */
	uint64_t cells;   /* cells it adds to */
};

/* Mark the leaves whose path toward d passes switch s (r->aff); their count. */
static uint32_t affected(struct rp *r, uint32_t s, uint32_t d)
{
	struct ft_run *x = r->x;
	uint32_t t = r->t_of[d], v[FT_PATH], sw[FT_PATH + 1], na = 0;
	for (uint32_t k = 0; k < x->n_hleaf; k++) {
		uint32_t l = x->hleaf[k];
		r->aff[k] = 0;
		if (l == t)
			continue;
		if (l == s) {
			r->aff[k] = 1;
		} else if (r->m->rank[s] > 0) {
			int nv = walk(r, l, r->lid_of[d], t, v, sw);
			for (int h = 1; h <= nv && !r->aff[k]; h++)
				r->aff[k] = sw[h] == s;
		}
		na += r->aff[k];
	}
	return na;
}

/*
 * Score moving s's route toward d (old suffix o[0 .. no)) to up link e:
 * 0 and *mv filled when the new path avoids link hot and no cell it adds
 * to reaches M, else -1.
 */
static int score(struct rp *r, uint32_t s, uint32_t e, uint32_t d, const uint32_t *o, int no, uint32_t hot,
		 unsigned M, struct move *mv)
{
	struct ft_run *x = r->x;
	const struct ft_model *m = r->m;
	uint32_t t = r->t_of[d], nw[FT_PATH + 1];
	int nn = walk(r, m->up_peer[e], r->lid_of[d], t, nw + 1, NULL);
	if (nn < 0 || nn + 1 > FT_PATH)
		return -1;
	nw[0] = 2 * e;
	nn++;
	if (in(nw, nn, hot))
		return -1; /* the flow would still cross the cell */
	mv->s = s;
	mv->e = e;
	mv->d = d;
	mv->worst = 0;
	mv->cells = 0;
	for (int h = 0; h < nn; h++) {
		if (in(o, no, nw[h]))
			continue;
		const uint8_t *row = r->load + (size_t)nw[h] * r->n;
		for (uint32_t k = 0; k < x->n_hleaf; k++) {
			if (!r->aff[k])
				continue;
			uint32_t a, len = leaf_shifts(r, x->hleaf[k], d, &a);
			for (uint32_t i = 0, c = a; i < len; i++, c = c + 1 == r->n ? 0 : c + 1) {
				if (row[c] + 1u >= M)
					return -1;
				if (row[c] + 1u > mv->worst)
					mv->worst = row[c] + 1u;
			}
			mv->cells += len;
		}
	}
	return 0;
}

static int apply(struct rp *r, const struct move *mv)
{
	struct ft_run *x = r->x;
	const struct ft_model *m = r->m;
	uint32_t t = r->t_of[mv->d], lid = r->lid_of[mv->d], o[FT_PATH], nw[FT_PATH];
	if (r->njn + 3 > r->jcap) {
		uint32_t cap = r->jcap ? 2 * r->jcap : 192;
		uint32_t *p = realloc(r->jn, cap * sizeof(*p));
		if (!p)
			return -1;
		r->jn = p;
		r->jcap = cap;
	}
	uint8_t *en = entry(r, mv->s, lid);
	r->jn[r->njn++] = mv->s;
	r->jn[r->njn++] = lid;
	r->jn[r->njn++] = *en;
	int no = walk(r, mv->s, lid, t, o, NULL);
	*en = m->up_port[mv->e];
	int nn = walk(r, mv->s, lid, t, nw, NULL);
	for (uint32_t k = 0; k < x->n_hleaf; k++) {
		if (!r->aff[k])
			continue;
		uint32_t a, len = leaf_shifts(r, x->hleaf[k], mv->d, &a);
		for (int h = 0; h < no; h++)
			if (!in(nw, nn, o[h]))
				add(r, o[h], a, len, -1);
		for (int h = 0; h < nn; h++)
			if (!in(o, no, nw[h]))
				add(r, nw[h], a, len, 1);
	}
	r->moved++;
	return 0;
}

/* Take one flow off cell (slot, k) at load M: 0 done, -1 no move found. */
static int relieve(struct rp *r, uint32_t slot, uint32_t k, unsigned M)
{
	struct ft_run *x = r->x;
	const struct ft_model *m = r->m;
	uint32_t v[FT_PATH], sw[FT_PATH + 1], o[FT_PATH];
	struct move best = { .worst = ~0u }, mv;
	for (uint32_t q = 0; q < x->n_hleaf; q++) {
		uint32_t l = x->hleaf[q];
		for (uint32_t i = m->hlo[l]; i < m->hhi[l]; i++) {
			uint32_t d = (i + k) % r->n, t = r->t_of[d];
			if (t == SM_NONE || t == l)
				continue;
			int nv = walk(r, l, r->lid_of[d], t, v, sw), at = -1;
			for (int h = 0; h < nv && at < 0; h++)
				if (v[h] == slot)
					at = h;
			/* an up entry at or before the cell's link: switch sw[h] (link v[h] going up) */
			for (int h = 0; h <= at && !(v[h] & 1); h++) {
				uint32_t s = sw[h], cur = v[h] / 2;
				affected(r, s, d);
				int no = nv - h;
				memcpy(o, v + h, (size_t)no * sizeof(*o));
				for (uint32_t e = m->up_off[s]; e < m->up_off[s + 1]; e++) {
					if (e == cur || score(r, s, e, d, o, no, slot, M, &mv))
						continue;
					if (mv.worst < best.worst || (mv.worst == best.worst && mv.cells < best.cells))
						best = mv;
				}
			}
		}
	}
	if (best.worst == ~0u)
		return -1;
	affected(r, best.s, best.d);
	return apply(r, &best);
}

/* Clear every cell at load M; -1 when one cannot be. */
static int clear_level(struct rp *r, unsigned M)
{
	size_t ns = 2 * (size_t)r->m->up_off[r->m->nsw];
	for (size_t slot = 0; slot < ns; slot++)
		for (uint32_t k = 0; k < r->n && r->rowmax[slot] >= M; k++) /* moves add below M only */
			while (r->load[slot * r->n + k] >= M)
				if (relieve(r, (uint32_t)slot, k, M))
					return -1;
	return 0;
}

uint64_t ft_repair(struct ft_run *x)
{
	const struct ft_model *m = x->m;
	struct rp r = { .x = x, .m = m, .n = x->nidx };
	size_t cells = 2 * (size_t)m->up_off[m->nsw] * r.n;
	if (!ft_repair_wanted(x))
		return 0;
	r.load = malloc(cells);
	r.lid_of = calloc(r.n, sizeof(*r.lid_of));
	r.t_of = malloc(r.n * sizeof(*r.t_of));
	r.aff = calloc((size_t)x->n_hleaf + 1, 1);
	r.rowmax = malloc(cells / r.n);
	if (!r.load || !r.lid_of || !r.t_of || !r.aff || !r.rowmax)
		goto out;
	for (uint32_t i = 0; i < r.n; i++)
		r.t_of[i] = SM_NONE;
	for (uint32_t s = 0; s < m->nsw; s++)
		for (uint32_t i = m->dest_off[s]; i < m->dest_off[s + 1]; i++) {
			const struct ft_dest *d = &m->dest[i];
			if (d->port && d->idx < r.n && r.t_of[d->idx] == SM_NONE && m->rank[s] == 0) {
				r.t_of[d->idx] = s;
				r.lid_of[d->idx] = d->lid;
			}
		}
	count_loads(&r);
	for (unsigned M = max_load(&r); M > FT_REPAIR_ABOVE; M = max_load(&r)) {
		uint64_t before = r.moved;
		r.njn = 0;
		if (!clear_level(&r, M))
			continue;
		/* this level cannot be cleared: put its entries back */
		while (r.njn) {
			r.njn -= 3;
			*entry(&r, r.jn[r.njn], r.jn[r.njn + 1]) = (uint8_t)r.jn[r.njn + 2];
		}
		r.moved = before;
		break;
	}
out:
	free(r.load);
	free(r.lid_of);
	free(r.t_of);
	free(r.aff);
	free(r.rowmax);
	free(r.jn);
	return r.moved;
}
