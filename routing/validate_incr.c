/* SPDX-License-Identifier: MIT */
/*
 * DOC: incremental validation after a reroute (sm_validate_incremental())
 *
 * Routes are destination based: whether the pairs toward one destination
 * LID are routed, and whether any walk toward it loops, depends only on
 * that LID's column of the LFTs (one entry per switch) and on where each
 * (switch, port) used by the column leads (the cables). The previous
 * tables L0 on the previous fabric F0 were accepted (validated in full, or
 * incrementally from such): for every LID, every counted walk (from a
 * switch with endpoints for an endpoint LID, from every switch for a
 * switch LID, within the destination's physical part) delivered, and none
 * toward a switch LID looped. The new fabric F1 is F0 minus cables (same
 * nodes, ports, LIDs: anything else falls back to the full check).
 *
 * The LIDs concerned (D, `rechecked`): those whose column may have changed
 * (the engine's reroute() account, prev->changed, or the tables compared),
 * those whose old column named a removed cable at its switch, and the LIDs
 * of an endpoint whose own cable was removed (all its pairs disconnected
 * now, nothing to walk). A LID outside D has the same column and no entry
 * over a lost cable, so every walk toward it is what it was: its verdict
 * holds.
 *
 * For d in D, the walks start only at the switches whose entry for d
 * changed (found block by block, below) and at those whose entry names
 * the port of a lost cable (the rows of the lost cables' own switches,
 * scanned for that port). Why that is enough: take a counted walk W from
 * switch s toward d in L1/F1.
 *  (a) W reaches a switch u whose entry changed, or whose entry names a
 *      lost cable: from u on, W is u's own walk, which is walked (each
 *      walk follows L1 through any switch until it delivers, ends in a
 *      hole or closes a loop), so a failure of W is found there.
 *  (b) Otherwise every entry on W is L0's and every cable it uses is in F1,
 *      hence unchanged (cables were only removed): W is s's walk in L0/F0
 *      step for step, including its end (a delivery, a hole, a loop). s
 *      was counted in F0 too (its part in F1 lies within its part in F0,
 *      it had at least the endpoints it has now, d's switch is the same
 *      unless d's cable was removed, and then nothing is counted), so W
 *      delivered in F0 and delivers now.
 * So "no walk from a start fails" means no counted failure toward d, and
 * a loop or black hole a walk finds is either a failure or (a start
 * outside d's part, a switch on no counted route) none: every LID where
 * some walk fails is then checked by the full per-destination walk
 * (sm_validate_run, those LIDs only), which gives the full check's counts
 * for it. The failure counts and the verdict are therefore the full
 * check's; switch-LID pairs the previous tables left unrouted (allowed
 * without SM_VALIDATE_STRICT_SWITCHES) are counted only on the LIDs
 * walked in full, as are pairs, reachable pairs and the longest route.
 * The full check also refuses a plane where nothing is reachable: with no
 * failure, a switch with two endpoints (one holding a LID of D or a low
 * LID) proves a reachable pair; without one the full check runs.
 *
 * One kind of cable that appeared is taken too (a host back,
 * reroute_nodes.h): an endpoint cabled again to a switch that has other
 * endpoints (sm_reroute_hosts_back()). It joins no switch parts; its
 * switch was counted before (it had endpoints), so (b) holds for every
 * other LID (an unchanged entry naming its port was a hole in L0, on no
 * counted walk); its own LIDs' columns changed on every switch (from
 * none), so every walk toward them is walked.
 *
 * Finding the changed entries: with prev->changed, only the blocks holding
 * a LID it marks are compared (memcmp per 64-entry block, switch by
 * switch); without it, every block. The blocks that differ are handed to
 * the program phase (prev->delta_out), which writes them without
 * comparing again.
 *
 * Not covered: the credit-loop (CDG) check needs the routes to every
 * destination, so an incremental result has credit_loop -1; the caller
 * runs the full validation on heavy sweeps (and whenever it falls back).
 *
 * Cost: the compared blocks (at 40k hosts after one lost link: 93 blocks
 * x 3,584 switches, ~40 MB read), one row per lost cable end, and the walks
 * from the changed entries (each switch at most once per LID): about
 * changed entries x path length, where the walk of every switch toward
 * every LID of D was 16 M steps.
 */
#include "config.h"
#include "lib/clock.h"
#include "routing/reroute.h"
#include "routing/reroute_nodes.h"
#include "routing/validate.h"
#include "routing/validate_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The LIDs of D, set 2 and 3 (DOC) for the removed cable at port index i (by the old tables). */
static void mark_removed(const struct sm_fabric *pf, unsigned plane, const struct sm_lfts *pl, uint32_t i,
			 uint8_t *mask)
{
	const struct sm_port *pp = &pf->ports[i];
	const struct sm_node *nd = &pf->nodes[pp->node];
	if (nd->plane != plane)
		return;
	if (nd->type == SM_NODE_SWITCH) {
		uint32_t s = pp->node < pl->n_nodes ? pl->slot_of_node[pp->node] : SM_NONE;
		if (s == SM_NONE)
			return;
		const uint8_t *row = sm_lfts_row(pl, s);
		for (uint32_t lid = 1; lid <= pl->top_lid; lid++)
			mask[lid] |= row[lid] == pp->num;
		return;
	}
	for (uint32_t k = 0; pp->lid && k < (1u << pp->lmc) && pp->lid + k <= SM_UNICAST_LID_MAX; k++)
		mask[pp->lid + k] = 1;
}

void sm_lft_delta_free(struct sm_lft_delta *d)
{
	if (!d)
		return;
	free(d->off);
	free(d->blk);
	free(d);
}

/* Walk starts: (LID, switch slot), grown as found, then grouped by LID. */
struct starts {
	uint32_t *lid, *slot;
	size_t n, cap;
};

static int add_start(struct starts *st, uint32_t lid, uint32_t slot)
{
	if (st->n == st->cap) {
		size_t cap = st->cap ? st->cap * 2 : 4096;
		uint32_t *a = realloc(st->lid, cap * sizeof(*a));
		if (!a)
			return -ENOMEM;
		st->lid = a;
		uint32_t *b = realloc(st->slot, cap * sizeof(*b));
		if (!b)
			return -ENOMEM;
		st->slot = b;
		st->cap = cap;
	}
	st->lid[st->n] = lid;
	st->slot[st->n++] = slot;
	return 0;
}

/*
 * Compare l with pl in the candidate blocks (cand[b], every block when
 * NULL): the blocks that differ into *dp, every differing entry a start and
 * its LID into mask.
 */
static int find_changed(const struct sm_lfts *l, const struct sm_lfts *pl, const uint8_t *cand,
			struct starts *st, uint8_t *mask, struct sm_lft_delta **dp)
{
	size_t n = (size_t)l->top_lid + 1, nb = (n + 63) / 64, cap = 1024;
	struct sm_lft_delta *d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->l = l;
	d->prev = pl;
	d->n_switches = l->n_switches;
	d->off = malloc(((size_t)l->n_switches + 1) * sizeof(*d->off));
	d->blk = malloc(cap * sizeof(*d->blk));
	if (!d->off || !d->blk)
		goto nomem;
	uint32_t nblk = 0;
	for (uint32_t s = 0; s < l->n_switches; s++) {
		const uint8_t *a = sm_lfts_row(l, s), *b = sm_lfts_row(pl, s);
		d->off[s] = nblk;
		for (size_t k = 0; k < nb; k++) {
			size_t b0 = k * 64, len = n - b0 < 64 ? n - b0 : 64;
			if ((cand && !cand[k]) || !memcmp(a + b0, b + b0, len))
				continue;
			if (nblk == cap) {
				uint16_t *g = realloc(d->blk, cap * 2 * sizeof(*g));
				if (!g)
					goto nomem;
				d->blk = g;
				cap *= 2;
			}
			d->blk[nblk++] = (uint16_t)k;
			for (size_t lid = b0; lid < b0 + len; lid++) {
				if (a[lid] == b[lid])
					continue;
				d->entries++;
				mask[lid] = 1;
				if (add_start(st, (uint32_t)lid, s))
					goto nomem;
			}
		}
	}
	d->off[l->n_switches] = nblk;
	*dp = d;
	return 0;
nomem:
	sm_lft_delta_free(d);
	return -ENOMEM;
}

/* Starts at entries of l naming a removed cable's port at its switch (DOC: the lost cables' rows). */
static int dead_entries(const struct sm_fabric *f, unsigned plane, const struct sm_lfts *l, const uint32_t *gone,
			uint32_t n_gone, struct starts *st, uint8_t *mask)
{
	for (uint32_t k = 0; k < n_gone; k++) {
		const struct sm_port *pp = &f->ports[gone[k]];
		uint32_t s = pp->node < l->n_nodes ? l->slot_of_node[pp->node] : SM_NONE;
		if (s == SM_NONE || f->nodes[pp->node].plane != plane)
			continue;
		const uint8_t *row = sm_lfts_row(l, s);
		for (uint32_t lid = 1; lid <= l->top_lid; lid++) {
			if (row[lid] != pp->num)
				continue;
			mask[lid] = 1;
			if (add_start(st, lid, s))
				return -ENOMEM;
		}
	}
	return 0;
}

enum { W_ON_STACK = 1, W_OK, W_FAIL };

struct walker {
	const struct sm_fabric *f;
	const struct sm_lfts *l;
	uint32_t *stamp;   /* [n_switches]: the LID the state below is for */
	uint8_t *st;
	uint32_t *path;
};

/*
 * The walk from slot s toward lid (owned by fabric port `owner`, delivered
 * at slot dsw: a switch LID when is_sw): W_OK or W_FAIL (a hole or a loop),
 * as validate.c's step()/resolve() judge it; switches already resolved for
 * this LID are not walked again.
 */
static int walk(struct walker *w, uint32_t lid, uint32_t owner, uint32_t dsw, int is_sw, uint32_t s)
{
	const struct sm_fabric *f = w->f;
	const struct sm_lfts *l = w->l;
	uint32_t top = 0, u = s;
	int r;
	for (;;) {
		if (w->stamp[u] == lid) {
			r = w->st[u] == W_ON_STACK ? W_FAIL : w->st[u];
			break;
		}
		w->stamp[u] = lid;
		w->st[u] = W_ON_STACK;
		w->path[top++] = u;
		uint8_t e = sm_lfts_row(l, u)[lid];
		const struct sm_node *nd = &f->nodes[l->sw_node[u]];
		if (e == 0) {
			r = is_sw && u == dsw ? W_OK : W_FAIL;
			break;
		}
		if (e > nd->nports) {
			r = W_FAIL;   /* SM_LFT_NONE or a port the switch lacks */
			break;
		}
		const struct sm_port *pt = &f->ports[nd->port0 + e];
		uint32_t t = pt->peer_node == SM_NONE ? u : pt->peer_node < l->n_nodes ? l->slot_of_node[pt->peer_node] : SM_NONE;
		if (t == SM_NONE) {   /* an endpoint: right only if it owns the LID */
			r = !is_sw && sm_port_index(f, pt->peer_node, pt->peer_port) == owner ? W_OK : W_FAIL;
			break;
		}
		if (t == u) {
			r = W_FAIL;   /* no cable, or one back to the same switch */
			break;
		}
		u = t;
	}
	while (top)
		w->st[w->path[--top]] = (uint8_t)r;
	return r;
}

/* Group the starts by LID (counting sort): slots of LID x are by_lid[off[x] .. off[x+1]). */
static int group(const struct starts *st, uint32_t top, uint32_t **offp, uint32_t **byp)
{
	uint32_t *off = calloc((size_t)top + 2, sizeof(*off)), *by = malloc((st->n + 1) * sizeof(*by));
	if (!off || !by) {
		free(off);
		free(by);
		return -ENOMEM;
	}
	for (size_t i = 0; i < st->n; i++)
		off[st->lid[i] + 1]++;
	for (uint32_t x = 0; x <= top; x++)
		off[x + 1] += off[x];
	uint32_t *fill = calloc((size_t)top + 1, sizeof(*fill));
	if (!fill) {
		free(off);
		free(by);
		return -ENOMEM;
	}
	for (size_t i = 0; i < st->n; i++)
		by[off[st->lid[i]] + fill[st->lid[i]]++] = st->slot[i];
	free(fill);
	*offp = off;
	*byp = by;
	return 0;
}

/* The owner of lid and where it is delivered (validate.c's destination); 0 if no port holds it. */
static int dest_of(const struct sm_fabric *f, unsigned plane, const struct sm_lfts *l, uint32_t lid, uint32_t *owner,
		   uint32_t *dsw, int *is_sw)
{
	const struct sm_plane *pl = &f->planes[plane];
	if (!pl->lid_map || lid > pl->max_lid || pl->lid_map[lid] == SM_NONE)
		return 0;
	const struct sm_port *pp = &f->ports[*owner = pl->lid_map[lid]];
	uint32_t slot = pp->node < l->n_nodes ? l->slot_of_node[pp->node] : SM_NONE;
	*is_sw = slot != SM_NONE;
	*dsw = slot;
	if (slot == SM_NONE && pp->peer_node != SM_NONE && pp->peer_node < l->n_nodes)
		*dsw = l->slot_of_node[pp->peer_node];
	return 1;
}

/*
 * Is lid an endpoint's, cabled to a switch with another endpoint port
 * holding a LID (DOC: then something is reachable)? -1 when lid is not an
 * endpoint LID routed at a switch (nothing looked at), else 1 or 0.
 */
static int shares_switch(const struct sm_fabric *f, unsigned plane, const struct sm_lfts *l, uint32_t lid)
{
	uint32_t owner, dsw;
	int is_sw;
	if (!dest_of(f, plane, l, lid, &owner, &dsw, &is_sw) || is_sw || dsw == SM_NONE)
		return -1;
	const struct sm_node *nd = &f->nodes[l->sw_node[dsw]];
	for (unsigned p = 1; p <= nd->nports; p++) {
		const struct sm_port *pt = &f->ports[nd->port0 + p];
		if (pt->peer_node == SM_NONE || pt->peer_node >= l->n_nodes || l->slot_of_node[pt->peer_node] != SM_NONE)
			continue;
		uint32_t q = sm_port_index(f, pt->peer_node, pt->peer_port);
		if (q != owner && f->ports[q].lid)
			return 1;
	}
	return 0;
}

/* Endpoint LIDs of D first, then any (at most 256 switches looked at); 0: the full check decides. */
static int something_reachable(const struct sm_fabric *f, unsigned plane, const struct sm_lfts *l,
			       const uint8_t *mask)
{
	unsigned tries = 0;
	for (int pass = 0; pass < 2; pass++)
		for (uint32_t lid = 1; lid <= l->top_lid && tries < 256; lid++) {
			if (pass == 0 && !mask[lid])
				continue;
			int r = shares_switch(f, plane, l, lid);
			if (r > 0)
				return 1;
			tries += r == 0;
		}
	return 0;
}

struct incr {
	uint8_t *mask;      /* D, by LID */
	uint8_t *failing;   /* LIDs some walk found failing, by LID */
	uint8_t *cand;      /* blocks holding a LID of prev->changed */
	uint32_t *gone, n_gone;
	struct starts st;
	uint32_t *off, *by;
	struct walker w;
	struct sm_lft_delta *delta;
};

static void incr_free(struct incr *x)
{
	free(x->mask);
	free(x->failing);
	free(x->cand);
	free(x->gone);
	free(x->st.lid);
	free(x->st.slot);
	free(x->off);
	free(x->by);
	free(x->w.stamp);
	free(x->w.st);
	free(x->w.path);
	sm_lft_delta_free(x->delta);
}

/*
 * The starts and D (DOC); 1 when the incremental check applies, 0 when the
 * full one must run, -ENOMEM.
 */
static int prepare(const struct sm_fabric *f, unsigned plane, const struct sm_lfts *l,
		   const struct sm_validate_prev *prev, struct incr *x)
{
	const struct sm_lfts *pl = prev->l;
	if (!sm_reroute_same_numbering(f, prev->f, plane, l, pl))
		return 0;
	int rc = sm_reroute_removed(f, prev->f, &x->gone, &x->n_gone);
	if (rc == 0)
		rc = sm_reroute_hosts_back(f, prev->f, plane); /* cables of endpoints only, at switches with endpoints */
	if (rc <= 0)
		return rc;
	size_t n = (size_t)l->top_lid + 1;
	x->mask = calloc((size_t)UINT16_MAX + 1, 1);   /* by LID, whatever top_lid is */
	x->failing = calloc((size_t)UINT16_MAX + 1, 1);
	x->w.stamp = malloc(((size_t)l->n_switches + 1) * sizeof(*x->w.stamp));
	x->w.st = malloc((size_t)l->n_switches + 1);
	x->w.path = malloc(((size_t)l->n_switches + 1) * sizeof(*x->w.path));
	if (!x->mask || !x->failing || !x->w.stamp || !x->w.st || !x->w.path)
		return -ENOMEM;
	for (uint32_t s = 0; s < l->n_switches; s++)
		x->w.stamp[s] = UINT32_MAX;   /* no LID */
	for (uint32_t k = 0; k < x->n_gone; k++)
		mark_removed(prev->f, plane, pl, x->gone[k], x->mask);
	if (prev->changed) {
		/* the engine's own account of what it changed (reroute(), engine.h): only its blocks compared */
		x->cand = calloc((n + 63) / 64, 1);
		if (!x->cand)
			return -ENOMEM;
		for (size_t lid = 0; lid < n; lid++) {
			x->mask[lid] |= prev->changed[lid];
			x->cand[lid / 64] |= prev->changed[lid];
		}
	}
	if (find_changed(l, pl, x->cand, &x->st, x->mask, &x->delta) ||
	    dead_entries(f, plane, l, x->gone, x->n_gone, &x->st, x->mask) ||
	    group(&x->st, l->top_lid, &x->off, &x->by))
		return -ENOMEM;
	x->delta->changed = prev->changed;
	return 1;
}

/* The walks of every LID of D from its starts; counts into v, failing LIDs into x->failing (returns how many). */
static uint32_t walk_all(const struct sm_fabric *f, unsigned plane, const struct sm_lfts *l, struct incr *x,
			 struct sm_validation *v)
{
	uint32_t n_failing = 0;
	x->w.f = f;
	x->w.l = l;
	for (uint32_t lid = 1; lid <= l->top_lid; lid++) {
		uint32_t owner, dsw;
		int is_sw;
		if (!x->mask[lid])
			continue;
		if (!dest_of(f, plane, l, lid, &owner, &dsw, &is_sw))
			continue;   /* no destination (validate.c walks only the LIDs in use) */
		v->rechecked++;
		v->lids++;
		if (dsw == SM_NONE)
			continue;   /* every pair disconnected: nothing can fail */
		v->sw_lids += (uint32_t)is_sw;
		for (uint32_t i = x->off[lid]; i < x->off[lid + 1]; i++) {
			v->walks++;
			if (walk(&x->w, lid, owner, dsw, is_sw, x->by[i]) != W_OK) {
				x->failing[lid] = 1;
				n_failing++;
				break;
			}
		}
	}
	return n_failing;
}

int sm_validate_incremental(const struct sm_fabric *f, unsigned plane, const struct sm_lfts *l,
			    const struct sm_validate_prev *prev, unsigned flags, struct sm_validation *v)
{
	if (prev && prev->delta_out) {
		sm_lft_delta_free(*prev->delta_out);
		*prev->delta_out = NULL;
	}
	if (!prev || !prev->f || !prev->l || !l || plane >= SM_MAX_PLANES || prev->l->plane != plane ||
	    l->plane != plane)
		return sm_validate(f, plane, l, flags, v);
	double t0 = sm_mono_sec();
	struct incr x;
	memset(&x, 0, sizeof(x));
	int rc = prepare(f, plane, l, prev, &x);
	if (rc <= 0) {
		incr_free(&x);
		return rc < 0 ? rc : sm_validate(f, plane, l, flags, v);
	}
	memset(v, 0, sizeof(*v));
	v->credit_loop = -1;
	uint32_t n_failing = walk_all(f, plane, l, &x, v);
	if (n_failing) {
		/* the LIDs some walk found failing, walked in full: the full check's counts for them */
		struct sm_validation sub;
		memset(&sub, 0, sizeof(sub));
		rc = sm_validate_run(f, plane, l, flags, &sub, 0, x.failing);
		if (rc) {
			incr_free(&x);
			return rc;
		}
		sub.lids = v->lids;
		sub.sw_lids = v->sw_lids;
		sub.rechecked = v->rechecked;
		sub.walks = v->walks;
		*v = sub;
	}
	if (sm_validate_ok(v, flags) && !something_reachable(f, plane, l, x.mask)) {
		incr_free(&x);
		return sm_validate(f, plane, l, flags, v);  /* "nothing reachable" is a verdict on every LID */
	}
	if (!v->rechecked)
		v->rechecked = 1;  /* nothing changed: still an incremental verdict (the previous one) */
	if (!n_failing)
		snprintf(v->msg, sizeof(v->msg), "ok: no loop or black hole");
	size_t len = strlen(v->msg);
	snprintf(v->msg + len, sizeof(v->msg) - len,
		 " (incremental: %u LIDs whose routes changed, %u walks from changed entries, %u LIDs walked in full)",
		 v->rechecked, v->walks, n_failing);
	if (prev->delta_out) {
		*prev->delta_out = x.delta;
		x.delta = NULL;
	}
	incr_free(&x);
	v->seconds = sm_mono_sec() - t0;
	return 0;
}
