/* SPDX-License-Identifier: MIT */
/*
 * DOC: hot-path pinning: model, greedy placement, local improvement, entry point
 *
 * sm_hotpath_pin() builds struct hp (internal.h: levels and up-ports from
 * model.c, the plane's flows, hot LIDs), loads the unpinned flows on their
 * base routes, colours (colour.c) or places the pinned flows greedily, runs
 * the local min-max improvement, then reports (evaluator and LFT diff).
 */
#include "routing/hotpath/internal.h"
#include "lib/clock.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void sm_hotpath_opts_init(struct sm_hotpath_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->share = 1.0;
	o->improve_rounds = 100000;
}

/* ---- greedy: best path for one flow ---- */

struct cand {
	double max, sum;
	unsigned changes;
	unsigned len;
	uint32_t path[HP_MAXHOPS];
	unsigned nch;
	uint32_t ch_node[HP_MAXHOPS];
	uint8_t ch_port[HP_MAXHOPS];
	uint16_t dlid;
};

static bool better(const struct cand *a, const struct cand *b)
{
	if (a->max < b->max - HP_EPS)
		return true;
	if (a->max > b->max + HP_EPS)
		return false;
	if (a->sum < b->sum - HP_EPS)
		return true;
	if (a->sum > b->sum + HP_EPS)
		return false;
	return a->changes < b->changes;
}

struct dfs {
	struct hp *h;
	const struct hflow *fl;
	uint16_t dlid;
	uint32_t dnode;
	uint8_t dport;
	struct cand cur, best;
	bool found;
};

/*
 * Candidate paths of one flow from switch `node`. Choices are made only
 * while the path still goes up; once it has gone down every hop must go
 * strictly down (so a candidate is up*-down* and cannot come back to a
 * switch whose entry it changes). Degraded trees where the base itself
 * turns down-up keep the base path (no candidate survives).
 */
static void dfs(struct dfs *d, uint32_t node, bool down)
{
	struct hp *h = d->h;
	const struct sm_fabric *f = h->f;
	if (d->cur.len >= HP_MAXHOPS || f->nodes[node].type != SM_NODE_SWITCH)
		return;
	uint32_t s = slot_of(h, node);
	uint32_t hot = h->hot_of_lid[d->dlid];
	if (s == SM_NONE || h->level[s] == HP_LVL_NONE)
		return;
	bool choose = !down && hp_is_up(h, node, d->dlid) && !*dec(h, hot, s);
	unsigned nopt = choose ? h->up_off[s + 1] - h->up_off[s] : 1;
	uint8_t basee = sm_lfts_get(h->base, node, d->dlid);
	for (unsigned i = 0; i < nopt; i++) {
		uint8_t e = choose ? h->up[h->up_off[s] + i] : sm_lfts_get(h->out, node, d->dlid);
		if (e == SM_LFT_NONE || e == 0 || e > f->nodes[node].nports)
			return;
		uint32_t pi = sm_port_index(f, node, e);
		const struct sm_port *pt = &f->ports[pi];
		if (pt->peer_node == SM_NONE)
			continue;
		double nl = h->load[pi] + d->fl->w;
		/* loads only grow along a path: prune on (max, sum) already worse than the best */
		if (d->found && (nl > d->best.max + HP_EPS ||
				 (fmax(d->cur.max, nl) >= d->best.max - HP_EPS && d->cur.sum + nl > d->best.sum + HP_EPS)))
			continue;
		struct cand save = d->cur;
		d->cur.path[d->cur.len++] = pi;
		d->cur.max = fmax(d->cur.max, nl);
		d->cur.sum += nl;
		if (choose) {
			d->cur.ch_node[d->cur.nch] = node;
			d->cur.ch_port[d->cur.nch++] = e;
			if (e != basee)
				d->cur.changes++;
		}
		if (f->nodes[pt->peer_node].type != SM_NODE_SWITCH) {
			if (pt->peer_node == d->dnode && pt->peer_port == d->dport &&
			    (!d->found || better(&d->cur, &d->best))) {
				d->best = d->cur;
				d->found = true;
			}
		} else {
			uint32_t t = slot_of(h, pt->peer_node);
			bool hop_down = t != SM_NONE && h->level[t] < h->level[s];
			if (t != SM_NONE && (!down || hop_down))
				dfs(d, pt->peer_node, down || hop_down);
		}
		d->cur = save;
	}
}

static void place_greedy(struct hp *h, struct hflow *fl, bool use_lmc)
{
	struct dfs d = { .h = h, .fl = fl };
	d.dnode = h->f->ports[fl->dst].node;
	d.dport = h->f->ports[fl->dst].num;
	struct cand best;
	bool any = false;
	unsigned nl = use_lmc ? fl->nlids : 1;
	const struct sm_port *sp = &h->f->ports[fl->src];
	for (unsigned k = 0; k < nl && sp->peer_node != SM_NONE; k++) {
		d.dlid = (uint16_t)(fl->base_lid + k);
		if (d.dlid > h->out->top_lid || h->hot_of_lid[d.dlid] == SM_NONE)
			continue;
		memset(&d.cur, 0, sizeof(d.cur));
		d.found = false;
		d.cur.path[d.cur.len++] = fl->src;
		d.cur.max = h->load[fl->src] + fl->w;
		d.cur.sum = d.cur.max;
		d.cur.dlid = d.dlid;
		dfs(&d, sp->peer_node, false);
		if (d.found && (!any || better(&d.best, &best))) {
			best = d.best;
			any = true;
		}
	}
	if (!any) {
		hp_reroute(h, fl);
		hp_add_path(h, fl, 1);
		return;
	}
	for (unsigned i = 0; i < best.nch; i++) {
		sm_lfts_set(h->out, best.ch_node[i], best.dlid, best.ch_port[i]);
		*dec(h, h->hot_of_lid[best.dlid], slot_of(h, best.ch_node[i])) = 1;
	}
	fl->dlid = best.dlid;
	fl->len = (uint8_t)best.len;
	memcpy(fl->path, best.path, best.len * sizeof(best.path[0]));
	hp_add_path(h, fl, 1);
}

/* ---- local improvement ---- */

/* The flow has a route and it goes up, then only down (levels of the switches it crosses). */
static bool updown(const struct hp *h, const struct hflow *fl)
{
	if (!fl->len)
		return false;
	bool down = false;
	unsigned prev = HP_LVL_NONE;
	for (unsigned i = 1; i < fl->len; i++) {
		uint32_t s = slot_of(h, h->f->ports[fl->path[i]].node);
		unsigned lv = s == SM_NONE ? HP_LVL_NONE : h->level[s];
		if (lv == HP_LVL_NONE)
			return false;
		if (prev != HP_LVL_NONE) {
			if (lv < prev)
				down = true;
			else if (down || lv == prev)
				return false;
		}
		prev = lv;
	}
	return true;
}

/*
 * Set (node, lid) to port e and reroute its flows; returns the new max
 * over the links they use, or HUGE_VAL if a flow lost its route or its
 * up*-down* shape (the caller then undoes the change).
 */
static double unit_set(struct hp *h, uint32_t node, uint16_t lid, uint8_t e)
{
	uint32_t hot = h->hot_of_lid[lid];
	double mx = 0;
	for (uint32_t k = h->byl_off[hot]; k < h->byl_off[hot + 1]; k++) {
		struct hflow *fl = &h->fl[h->byl[k]];
		hp_add_path(h, fl, -1);
	}
	sm_lfts_set(h->out, node, lid, e);
	for (uint32_t k = h->byl_off[hot]; k < h->byl_off[hot + 1]; k++) {
		struct hflow *fl = &h->fl[h->byl[k]];
		hp_reroute(h, fl);
		hp_add_path(h, fl, 1);
	}
	for (uint32_t k = h->byl_off[hot]; k < h->byl_off[hot + 1]; k++) {
		const struct hflow *fl = &h->fl[h->byl[k]];
		if (!updown(h, fl))
			return HUGE_VAL; /* never accepted: the caller undoes it */
		for (unsigned i = 1; i < fl->len; i++)
			mx = fmax(mx, h->load[fl->path[i]]);
	}
	return mx;
}

static bool path_has(const struct hflow *fl, uint32_t p)
{
	for (unsigned i = 0; i < fl->len; i++)
		if (fl->path[i] == p)
			return true;
	return false;
}

static int build_byl(struct hp *h)
{
	free(h->byl_off);
	free(h->byl);
	h->byl_off = calloc((size_t)h->n_hot + 2, sizeof(uint32_t));
	h->byl = malloc((h->n + 1) * sizeof(uint32_t));
	if (!h->byl_off || !h->byl)
		return -ENOMEM;
	for (size_t i = 0; i < h->n; i++)
		if (h->fl[i].pinned && h->hot_of_lid[h->fl[i].dlid] != SM_NONE)
			h->byl_off[h->hot_of_lid[h->fl[i].dlid] + 1]++;
	for (uint32_t i = 0; i < h->n_hot; i++)
		h->byl_off[i + 1] += h->byl_off[i];
	uint32_t *fill = calloc((size_t)h->n_hot + 1, sizeof(uint32_t));
	if (!fill)
		return -ENOMEM;
	for (size_t i = 0; i < h->n; i++)
		if (h->fl[i].pinned && h->hot_of_lid[h->fl[i].dlid] != SM_NONE) {
			uint32_t x = h->hot_of_lid[h->fl[i].dlid];
			h->byl[h->byl_off[x] + fill[x]++] = (uint32_t)i;
		}
	free(fill);
	return 0;
}

/* The busiest switch-to-switch link of the plane. */
static uint32_t busiest(const struct hp *h, double *mx)
{
	const struct sm_fabric *f = h->f;
	uint32_t best = SM_NONE;
	*mx = -1;
	for (uint32_t s = 0; s < h->n_sw; s++) {
		uint32_t n = h->out->sw_node[s];
		for (unsigned p = 1; p <= f->nodes[n].nports; p++) {
			uint32_t pi = sm_port_index(f, n, p);
			const struct sm_port *pt = &f->ports[pi];
			if (pt->peer_node == SM_NONE || f->nodes[pt->peer_node].type != SM_NODE_SWITCH)
				continue;
			if (h->load[pi] > *mx) {
				*mx = h->load[pi];
				best = pi;
			}
		}
	}
	return best;
}

/* Weight of the flows of unit (node, lid) that leave node by port e (they all do when e is its entry). */
static double unit_weight(const struct hp *h, uint32_t node, uint16_t lid, uint8_t e)
{
	uint32_t hot = h->hot_of_lid[lid], pi = sm_port_index(h->f, node, e);
	double w = 0;
	for (uint32_t k = h->byl_off[hot]; k < h->byl_off[hot + 1]; k++) {
		const struct hflow *fl = &h->fl[h->byl[k]];
		if (path_has(fl, pi))
			w += fl->w;
	}
	return w;
}

/*
 * Try moving (node, lid) to every other up-port; keep the first that stays
 * below M on every link its flows use. The pre-filter (the new up-link must
 * stay below M) is necessary, not sufficient: unit_set() decides.
 */
static bool try_move(struct hp *h, uint32_t node, uint16_t lid, double M)
{
	uint32_t s = slot_of(h, node);
	uint8_t old = sm_lfts_get(h->out, node, lid);
	double wu = unit_weight(h, node, lid, old);
	for (uint32_t k = h->up_off[s]; k < h->up_off[s + 1]; k++) {
		uint8_t e = h->up[k];
		if (e == old || h->load[sm_port_index(h->f, node, e)] + wu >= M - HP_EPS)
			continue;
		if (unit_set(h, node, lid, e) < M - HP_EPS)
			return true;
		unit_set(h, node, lid, old);
	}
	return false;
}

/*
 * Swap (node, lid) with another decided unit of the same switch on another
 * up-port. Both of node's up-links must end below M (u's link gets v - u,
 * v's link u - v): a necessary condition checked before any reroute.
 */
static bool try_swap(struct hp *h, uint32_t node, uint16_t lid, double M)
{
	uint32_t s = slot_of(h, node);
	uint8_t mine = sm_lfts_get(h->out, node, lid);
	double wu = unit_weight(h, node, lid, mine);
	double lp = h->load[sm_port_index(h->f, node, mine)];
	for (uint32_t x = 0; x < h->n_hot; x++) {
		uint16_t l2 = h->hot_lid[x];
		if (l2 == lid || !*dec(h, x, s) || h->byl_off[x] == h->byl_off[x + 1])
			continue;
		uint8_t other = sm_lfts_get(h->out, node, l2);
		if (other == mine)
			continue;
		double wv = unit_weight(h, node, l2, other);
		if (lp - wu + wv >= M - HP_EPS || h->load[sm_port_index(h->f, node, other)] + wu - wv >= M - HP_EPS)
			continue;
		unit_set(h, node, lid, other);
		double m2 = unit_set(h, node, l2, mine);
		/* the first unit's links may have changed with the second move: recheck both */
		double m = fmax(m2, unit_set(h, node, lid, other));
		if (m < M - HP_EPS)
			return true;
		unit_set(h, node, l2, other);
		unit_set(h, node, lid, mine);
	}
	return false;
}

/* CSR of pinned flow indices keyed by a switch slot (the source or destination leaf). */
struct fidx {
	uint32_t *off, *idx;
};

static int fidx_build(const struct hp *h, bool by_dst, struct fidx *x)
{
	x->off = calloc((size_t)h->n_sw + 2, sizeof(uint32_t));
	x->idx = malloc((h->n + 1) * sizeof(uint32_t));
	if (!x->off || !x->idx)
		return -ENOMEM;
	uint32_t *key = malloc((h->n + 1) * sizeof(uint32_t));
	if (!key)
		return -ENOMEM;
	for (size_t i = 0; i < h->n; i++) {
		const struct hflow *fl = &h->fl[i];
		uint32_t port = by_dst ? fl->dst : fl->src;
		key[i] = fl->pinned ? slot_of(h, h->f->ports[port].peer_node) : SM_NONE;
		if (key[i] != SM_NONE)
			x->off[key[i] + 1]++;
	}
	for (uint32_t s = 0; s < h->n_sw; s++)
		x->off[s + 1] += x->off[s];
	uint32_t *fill = calloc((size_t)h->n_sw + 1, sizeof(uint32_t));
	if (!fill) {
		free(key);
		return -ENOMEM;
	}
	for (size_t i = 0; i < h->n; i++)
		if (key[i] != SM_NONE)
			x->idx[x->off[key[i]] + fill[key[i]]++] = (uint32_t)i;
	free(fill);
	free(key);
	return 0;
}

/*
 * Local min-max improvement (see hotpath.h). The flows crossing the busiest
 * link L are found through the endpoint indexes when L is a leaf up-link
 * (up*-down* flows there start at that leaf) or a link down into a leaf
 * (they end there); other links are found by scanning every pinned flow.
 * Missing a transit flow of a down-up base route only weakens the search.
 */
static unsigned improve(struct hp *h, unsigned rounds)
{
	unsigned moves = 0;
	size_t cap = 4096, nc = 0;
	uint32_t *cand_node = malloc(cap * sizeof(uint32_t));
	uint16_t *cand_lid = malloc(cap * sizeof(uint16_t));
	struct fidx bysrc = { 0 }, bydst = { 0 };
	if (!cand_node || !cand_lid || fidx_build(h, false, &bysrc) || fidx_build(h, true, &bydst))
		goto out;
	while (moves < rounds) {
		double M;
		uint32_t L = busiest(h, &M);
		if (L == SM_NONE || M <= h->host_bound * (1 + 1e-9))
			break;
		uint32_t xs = slot_of(h, h->f->ports[L].node), ys = slot_of(h, h->f->ports[L].peer_node);
		const uint32_t *list = NULL;
		size_t nlist = h->n;
		if (xs != SM_NONE && h->level[xs] == 0) {
			list = &bysrc.idx[bysrc.off[xs]];
			nlist = bysrc.off[xs + 1] - bysrc.off[xs];
		} else if (ys != SM_NONE && h->level[ys] == 0) {
			list = &bydst.idx[bydst.off[ys]];
			nlist = bydst.off[ys + 1] - bydst.off[ys];
		}
		/* decided units upstream of L on the paths of flows crossing L */
		nc = 0;
		for (size_t j = 0; j < nlist; j++) {
			const struct hflow *fl = &h->fl[list ? list[j] : j];
			if (!fl->pinned || !path_has(fl, L))
				continue;
			uint32_t hot = h->hot_of_lid[fl->dlid];
			for (unsigned k = 1; k < fl->len; k++) {
				uint32_t node = h->f->ports[fl->path[k]].node;
				uint32_t s = slot_of(h, node);
				if (s != SM_NONE && *dec(h, hot, s)) {
					if (nc == cap) {
						uint32_t *a = realloc(cand_node, 2 * cap * sizeof(uint32_t));
						uint16_t *b = a ? realloc(cand_lid, 2 * cap * sizeof(uint16_t)) : NULL;
						if (a)
							cand_node = a;
						if (b)
							cand_lid = b;
						if (!a || !b)
							goto out;
						cap *= 2;
					}
					cand_node[nc] = node;
					cand_lid[nc++] = fl->dlid;
				}
				if (fl->path[k] == L)
					break;
			}
		}
		bool ok = false;
		for (size_t i = 0; i < nc && !ok; i++)
			ok = try_move(h, cand_node[i], cand_lid[i], M);
		for (size_t i = 0; i < nc && !ok; i++)
			ok = try_swap(h, cand_node[i], cand_lid[i], M);
		if (!ok)
			break;
		moves++;
	}
out:
	free(bysrc.off);
	free(bysrc.idx);
	free(bydst.off);
	free(bydst.idx);
	free(cand_node);
	free(cand_lid);
	return moves;
}

/* ---- entry point ---- */

static int cmp_flow_w(const void *a, const void *b)
{
	const struct hflow *x = a, *y = b;
	if (x->w != y->w)
		return x->w > y->w ? -1 : 1;
	if (x->dst != y->dst)
		return x->dst < y->dst ? -1 : 1;
	return x->src < y->src ? -1 : x->src > y->src;
}

static void hp_free(struct hp *h)
{
	free(h->level);
	free(h->up_off);
	free(h->up);
	free(h->load);
	free(h->fl);
	free(h->hot_of_lid);
	free(h->hot_lid);
	free(h->decided);
	free(h->byl_off);
	free(h->byl);
}

int sm_hotpath_pin(const struct sm_fabric *f, unsigned plane, const struct sm_lfts *base,
		   const struct sm_flow *flows, size_t n_flows, const struct sm_hotpath_opts *o,
		   struct sm_lfts *out, struct sm_hotpath_report *rep, char *err, size_t errlen)
{
	struct sm_hotpath_opts def;
	struct hp hh, *h = &hh;
	struct sm_hotpath_report tmp;
	double t0 = sm_mono_sec();
	int rc = 0;
	if (!o) {
		sm_hotpath_opts_init(&def);
		o = &def;
	}
	if (!rep)
		rep = &tmp;
	memset(rep, 0, sizeof(*rep));
	memset(h, 0, sizeof(*h));
	rep->plane = plane;
	rep->method = "none";
	if (base->plane != plane || out->plane != plane || base->n_nodes != f->n_nodes ||
	    out->n_nodes != f->n_nodes || base->top_lid != out->top_lid || base->n_switches != out->n_switches) {
		if (err && errlen)
			snprintf(err, errlen, "hotpath: LFTs do not match plane %u of this fabric", plane);
		return -EINVAL;
	}
	h->f = f;
	h->plane = plane;
	h->base = base;
	h->out = out;
	h->n_sw = out->n_switches;
	if ((rc = hp_build_levels(h)))
		goto fail;
	rep->levels = h->max_level + 1;
	h->load = calloc((size_t)f->n_ports + 1, sizeof(double));
	h->fl = calloc(n_flows + 1, sizeof(*h->fl));
	h->hot_of_lid = malloc(((size_t)out->top_lid + 1) * sizeof(uint32_t));
	rep->flow = calloc(n_flows + 1, sizeof(*rep->flow));
	rep->dlid = calloc(n_flows + 1, sizeof(*rep->dlid));
	rep->is_pinned = calloc(n_flows + 1, 1);
	if (!h->load || !h->fl || !h->hot_of_lid || !rep->flow || !rep->dlid || !rep->is_pinned) {
		rc = -ENOMEM;
		goto fail;
	}
	for (uint32_t i = 0; i <= out->top_lid; i++)
		h->hot_of_lid[i] = SM_NONE;
	/* flows of this plane */
	for (size_t i = 0; i < n_flows; i++) {
		const struct sm_flow *x = &flows[i];
		if (x->src >= f->n_ports || x->dst >= f->n_ports || !(x->weight > 0) ||
		    flow_plane(f, x) != plane || f->nodes[f->ports[x->dst].node].plane != plane)
			continue;
		const struct sm_port *dp = &f->ports[x->dst];
		struct hflow *fl = &h->fl[h->n];
		fl->src = x->src;
		fl->dst = x->dst;
		fl->w = x->weight;
		fl->base_lid = dp->lid;
		fl->dlid = dp->lid;
		fl->nlids = (uint8_t)(1u << (dp->lmc > 7 ? 7 : dp->lmc));
		if (o->no_lmc)
			fl->nlids = 1;
		if (!dp->lid || (uint32_t)dp->lid + fl->nlids - 1 > out->top_lid)
			continue;
		fl->in = (uint32_t)h->n;
		rep->flow[h->n] = *x;
		h->n++;
	}
	rep->n_flows = h->n;
	rep->flows = h->n;
	{
		double *ts = calloc((size_t)f->n_ports + 1, sizeof(double)), *tr = calloc((size_t)f->n_ports + 1, sizeof(double));
		if (!ts || !tr) {
			free(ts);
			free(tr);
			rc = -ENOMEM;
			goto fail;
		}
		h->host_bound = hp_host_bound(f, rep->flow, h->n, plane, ts, tr);
		free(ts);
		free(tr);
	}
	rep->host_bound = h->host_bound;
	if ((rc = sm_hotpath_eval(f, plane, base, rep->flow, NULL, h->n, &rep->max_load_before, NULL,
				  &rep->ebb_before, NULL)))
		goto fail;
	/* hot destinations, heaviest flows first */
	struct hflow *sorted = h->fl;
	qsort(sorted, h->n, sizeof(*sorted), cmp_flow_w);
	double total = 0, acc = 0;
	for (size_t i = 0; i < h->n; i++)
		total += h->fl[i].w;
	rep->total_weight = total;
	double share = o->share > 0 && o->share <= 1 ? o->share : 1.0;
	size_t taken = 0;
	uint32_t n_hot_dst = 0;
	/* count hot LIDs first: mark by base LID range */
	uint8_t *dst_hot = calloc((size_t)f->n_ports + 1, 1);
	if (!dst_hot) {
		rc = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < h->n; i++) {
		if ((o->top_k && taken >= o->top_k) || acc >= share * total * (1 - 1e-12))
			break;
		taken++;
		acc += h->fl[i].w;
		if (!dst_hot[h->fl[i].dst]) {
			dst_hot[h->fl[i].dst] = 1;
			n_hot_dst++;
			for (unsigned k = 0; k < h->fl[i].nlids; k++)
				h->hot_of_lid[h->fl[i].base_lid + k] = h->n_hot++;
		}
	}
	rep->hot_dests = n_hot_dst;
	rep->hot_lids = h->n_hot;
	h->hot_lid = malloc(((size_t)h->n_hot + 1) * sizeof(uint16_t));
	h->decided = calloc((size_t)h->n_hot * h->n_sw + 1, 1);
	if (!h->hot_lid || !h->decided) {
		free(dst_hot);
		rc = -ENOMEM;
		goto fail;
	}
	for (uint32_t l = 0; l <= out->top_lid; l++)
		if (h->hot_of_lid[l] != SM_NONE)
			h->hot_lid[h->hot_of_lid[l]] = (uint16_t)l;
	for (size_t i = 0; i < h->n; i++) {
		struct hflow *fl = &h->fl[i];
		fl->pinned = dst_hot[fl->dst];
		if (fl->pinned) {
			rep->pinned++;
			rep->pinned_weight += fl->w;
		} else {
			/* background: base route */
			fl->len = (uint8_t)hp_walk(f, out, fl->src, fl->dst, fl->dlid, fl->path);
			hp_add_path(h, fl, 1);
		}
	}
	free(dst_hot);
	/* colouring or greedy */
	int coloured = 0;
	if (h->n_hot && o->method != SM_HOTPATH_GREEDY) {
		coloured = hp_colour(h, !o->no_lmc, rep->note, sizeof(rep->note));
		if (coloured < 0) {
			rc = coloured;
			goto fail;
		}
	}
	if (h->n_hot)
		rep->method = coloured ? "colour" : "greedy";
	for (size_t i = 0; i < h->n; i++) {
		struct hflow *fl = &h->fl[i];
		if (!fl->pinned)
			continue;
		/* after colouring, decided units leave one option: greedy only fills the rest */
		place_greedy(h, fl, !o->no_lmc && !coloured);
	}
	if (!o->no_improve && h->n_hot) {
		if ((rc = build_byl(h)))
			goto fail;
		rep->improve_moves = improve(h, o->improve_rounds ? o->improve_rounds : 100000);
	}
	/* report, in the caller's order of this plane's flows */
	for (size_t i = 0; i < h->n; i++) {
		const struct hflow *fl = &h->fl[i];
		rep->dlid[fl->in] = fl->dlid;
		rep->is_pinned[fl->in] = fl->pinned;
		if (!fl->len)
			rep->unroutable++;
	}
	if ((rc = sm_hotpath_eval(f, plane, out, rep->flow, rep->dlid, h->n, &rep->max_load_after, NULL,
				  &rep->ebb_after, NULL)))
		goto fail;
	/* LFT diff */
	size_t row = (size_t)out->top_lid + 1;
	for (uint32_t s = 0; s < out->n_switches; s++) {
		const uint8_t *a = sm_lfts_row(base, s), *b = sm_lfts_row(out, s);
		bool sw = false;
		for (size_t blk = 0; blk < row; blk += 64) {
			size_t end = blk + 64 < row ? blk + 64 : row;
			bool bd = false;
			for (size_t l = blk; l < end; l++)
				if (a[l] != b[l]) {
					rep->lft_changed++;
					bd = true;
				}
			if (bd) {
				rep->lft_blocks_changed++;
				sw = true;
			}
		}
		if (sw)
			rep->lft_switches_changed++;
	}
	rep->seconds = sm_mono_sec() - t0;
	hp_free(h);
	if (rep == &tmp)
		sm_hotpath_report_clear(&tmp);
	return 0;
fail:
	if (err && errlen && rc == -ENOMEM)
		snprintf(err, errlen, "hotpath: out of memory");
	hp_free(h);
	sm_hotpath_report_clear(rep);
	return rc;
}
