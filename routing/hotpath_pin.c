/* SPDX-License-Identifier: MIT */
/*
 * DOC: hot-path pinning algorithm (model and invariants: see hotpath.h)
 *
 * Owns nothing beyond one call: struct hp holds the plane's switch levels,
 * up-port lists, per-link loads (indexed by fabric port index of the egress
 * port), the flows of the plane with their current paths, and the decided
 * (switch, hot LID) units. The output LFT `out` is the single source of
 * truth for routes: a flow's path is always the walk of `out`, and a
 * decision is just an `out` entry plus its bit in `decided`.
 *
 * Invariant: hp->load[p] == sum of the weights of flows whose stored path
 * contains egress port p, at every point between operations.
 */
#include "hotpath.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define HP_MAXHOPS 16
#define HP_LVL_NONE 0xff
#define HP_EPS 1e-9

struct hflow {
	uint32_t src, dst;       /* CA port indices */
	double w;
	uint16_t base_lid;
	uint16_t dlid;           /* current DLID */
	uint8_t nlids;           /* 2^lmc */
	uint8_t pinned;
	uint8_t len;             /* path length, 0 = no working route */
	uint32_t in;             /* index in rep->flow (this plane's flows, caller order) */
	uint32_t path[HP_MAXHOPS];
};

struct hp {
	const struct sm_fabric *f;
	unsigned plane;
	const struct sm_lfts *base;
	struct sm_lfts *out;
	uint32_t n_sw;
	uint8_t *level;          /* [n_sw] */
	uint32_t *up_off;        /* [n_sw+1] */
	uint8_t *up;             /* up-port numbers */
	double *load;            /* [f->n_ports] */
	struct hflow *fl;
	size_t n;
	uint32_t *hot_of_lid;    /* [top_lid+1] */
	uint32_t n_hot;
	uint16_t *hot_lid;       /* [n_hot] */
	uint8_t *decided;        /* [n_hot * n_sw] */
	/* flows by hot LID (CSR over pinned flows, by current dlid) */
	uint32_t *byl_off, *byl;
	double host_bound;
	unsigned max_level;
};

static inline unsigned flow_plane(const struct sm_fabric *f, const struct sm_flow *x)
{
	return f->nodes[f->ports[x->src].node].plane;
}

static inline uint32_t slot_of(const struct hp *h, uint32_t node)
{
	return node < h->out->n_nodes ? h->out->slot_of_node[node] : SM_NONE;
}

static inline uint8_t *dec(const struct hp *h, uint32_t hot, uint32_t slot)
{
	return &h->decided[(size_t)hot * h->n_sw + slot];
}

void sm_hotpath_opts_init(struct sm_hotpath_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->share = 1.0;
	o->improve_rounds = 100000;
}

/* ---- walking ---- */

/* Walk src -> dst with dlid through l; fills path (egress port indices). Returns length or 0. */
static unsigned walk(const struct sm_fabric *f, const struct sm_lfts *l, uint32_t src, uint32_t dst,
		     uint16_t dlid, uint32_t *path)
{
	const struct sm_port *sp = &f->ports[src];
	unsigned n = 0;
	if (sp->peer_node == SM_NONE)
		return 0;
	path[n++] = src;
	uint32_t node = sp->peer_node;
	uint32_t dnode = f->ports[dst].node;
	uint8_t dport = f->ports[dst].num;
	while (n < HP_MAXHOPS) {
		if (f->nodes[node].type != SM_NODE_SWITCH)
			return 0;
		uint8_t e = sm_lfts_get(l, node, dlid);
		if (e == SM_LFT_NONE || e == 0 || e > f->nodes[node].nports)
			return 0;
		uint32_t pi = sm_port_index(f, node, e);
		const struct sm_port *pt = &f->ports[pi];
		if (pt->peer_node == SM_NONE)
			return 0;
		path[n++] = pi;
		if (f->nodes[pt->peer_node].type != SM_NODE_SWITCH)
			return (pt->peer_node == dnode && pt->peer_port == dport) ? n : 0;
		node = pt->peer_node;
	}
	return 0;
}

static void add_path(struct hp *h, const struct hflow *fl, double sign)
{
	for (unsigned i = 0; i < fl->len; i++)
		h->load[fl->path[i]] += sign * fl->w;
}

static void reroute(struct hp *h, struct hflow *fl)
{
	fl->len = (uint8_t)walk(h->f, h->out, fl->src, fl->dst, fl->dlid, fl->path);
}

/* ---- evaluator ---- */

static double host_bound_of(const struct sm_fabric *f, const struct sm_flow *flows, size_t n, unsigned plane,
			    double *tmp_s, double *tmp_r)
{
	double b = 0;
	for (size_t i = 0; i < n; i++) {
		if (flow_plane(f, &flows[i]) != plane)
			continue;
		tmp_s[flows[i].src] += flows[i].weight;
		tmp_r[flows[i].dst] += flows[i].weight;
	}
	for (size_t i = 0; i < n; i++) {
		if (flow_plane(f, &flows[i]) != plane)
			continue;
		b = fmax(b, fmax(tmp_s[flows[i].src], tmp_r[flows[i].dst]));
	}
	return b;
}

int sm_hotpath_eval(const struct sm_fabric *f, unsigned plane, const struct sm_lfts *l,
		    const struct sm_flow *flows, const uint16_t *dlids, size_t n_flows, double *max_load,
		    double *host_bound, double *ebb, size_t *unroutable)
{
	double *load = calloc((size_t)f->n_ports + 1, sizeof(double));
	double *ts = calloc((size_t)f->n_ports + 1, sizeof(double));
	double *tr = calloc((size_t)f->n_ports + 1, sizeof(double));
	uint32_t(*paths)[HP_MAXHOPS] = calloc(n_flows + 1, sizeof(*paths));
	uint8_t *lens = calloc(n_flows + 1, 1);
	int rc = 0;
	if (!load || !ts || !tr || !paths || !lens) {
		rc = -ENOMEM;
		goto out;
	}
	size_t bad = 0, cnt = 0;
	for (size_t i = 0; i < n_flows; i++) {
		if (flow_plane(f, &flows[i]) != plane)
			continue;
		uint16_t d = dlids ? dlids[i] : f->ports[flows[i].dst].lid;
		lens[i] = (uint8_t)walk(f, l, flows[i].src, flows[i].dst, d, paths[i]);
		if (!lens[i])
			bad++;
		for (unsigned k = 0; k < lens[i]; k++)
			load[paths[i][k]] += flows[i].weight;
	}
	double mx = 0;
	for (uint32_t p = 0; p < f->n_ports; p++)
		mx = fmax(mx, load[p]);
	double hb = host_bound_of(f, flows, n_flows, plane, ts, tr);
	double sum = 0;
	for (size_t i = 0; i < n_flows; i++) {
		if (flow_plane(f, &flows[i]) != plane)
			continue;
		cnt++;
		if (!lens[i])
			continue;
		double worst = 0;
		for (unsigned k = 0; k < lens[i]; k++)
			worst = fmax(worst, load[paths[i][k]]);
		sum += worst > 0 ? fmin(1.0, hb / worst) : 1.0;
	}
	if (max_load)
		*max_load = mx;
	if (host_bound)
		*host_bound = hb;
	if (ebb)
		*ebb = cnt ? sum / (double)cnt : 0;
	if (unroutable)
		*unroutable = bad;
out:
	free(load);
	free(ts);
	free(tr);
	free(paths);
	free(lens);
	return rc;
}

/* ---- model building ---- */

static int build_levels(struct hp *h)
{
	const struct sm_fabric *f = h->f;
	uint32_t *q = malloc(((size_t)h->n_sw + 1) * sizeof(*q));
	h->level = malloc((size_t)h->n_sw + 1);
	h->up_off = calloc((size_t)h->n_sw + 2, sizeof(*h->up_off));
	if (!q || !h->level || !h->up_off) {
		free(q);
		return -ENOMEM;
	}
	memset(h->level, HP_LVL_NONE, h->n_sw + 1);
	uint32_t qh = 0, qt = 0;
	for (uint32_t s = 0; s < h->n_sw; s++) {
		uint32_t n = h->out->sw_node[s];
		for (unsigned p = 1; p <= f->nodes[n].nports; p++) {
			const struct sm_port *pt = sm_port(f, n, p);
			if (pt->peer_node != SM_NONE && f->nodes[pt->peer_node].type != SM_NODE_SWITCH) {
				h->level[s] = 0;
				q[qt++] = s;
				break;
			}
		}
	}
	while (qh < qt) {
		uint32_t s = q[qh++], n = h->out->sw_node[s];
		for (unsigned p = 1; p <= f->nodes[n].nports; p++) {
			const struct sm_port *pt = sm_port(f, n, p);
			if (pt->peer_node == SM_NONE)
				continue;
			uint32_t t = slot_of(h, pt->peer_node);
			if (t != SM_NONE && h->level[t] == HP_LVL_NONE) {
				h->level[t] = (uint8_t)(h->level[s] + 1 < HP_LVL_NONE ? h->level[s] + 1 : HP_LVL_NONE - 1);
				q[qt++] = t;
			}
		}
	}
	free(q);
	h->max_level = 0;
	size_t nup = 0;
	for (uint32_t s = 0; s < h->n_sw; s++) {
		if (h->level[s] != HP_LVL_NONE && h->level[s] > h->max_level)
			h->max_level = h->level[s];
		uint32_t n = h->out->sw_node[s];
		for (unsigned p = 1; p <= f->nodes[n].nports; p++) {
			const struct sm_port *pt = sm_port(f, n, p);
			uint32_t t = pt->peer_node == SM_NONE ? SM_NONE : slot_of(h, pt->peer_node);
			if (t != SM_NONE && h->level[s] != HP_LVL_NONE && h->level[t] == h->level[s] + 1)
				nup++;
		}
	}
	h->up = malloc(nup + 1);
	if (!h->up)
		return -ENOMEM;
	size_t k = 0;
	for (uint32_t s = 0; s < h->n_sw; s++) {
		h->up_off[s] = (uint32_t)k;
		uint32_t n = h->out->sw_node[s];
		for (unsigned p = 1; p <= f->nodes[n].nports; p++) {
			const struct sm_port *pt = sm_port(f, n, p);
			uint32_t t = pt->peer_node == SM_NONE ? SM_NONE : slot_of(h, pt->peer_node);
			if (t != SM_NONE && h->level[s] != HP_LVL_NONE && h->level[t] == h->level[s] + 1)
				h->up[k++] = (uint8_t)p;
		}
	}
	h->up_off[h->n_sw] = (uint32_t)k;
	return 0;
}

/* Is the base entry of (switch node, lid) an up-port? */
static bool is_up(const struct hp *h, uint32_t node, uint16_t lid)
{
	uint32_t s = slot_of(h, node);
	uint8_t e = sm_lfts_get(h->base, node, lid);
	if (s == SM_NONE || e == SM_LFT_NONE || e == 0 || e > h->f->nodes[node].nports)
		return false;
	const struct sm_port *pt = sm_port(h->f, node, e);
	uint32_t t = pt->peer_node == SM_NONE ? SM_NONE : slot_of(h, pt->peer_node);
	return t != SM_NONE && h->level[s] != HP_LVL_NONE && h->level[t] == h->level[s] + 1;
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
	bool choose = !down && is_up(h, node, d->dlid) && !*dec(h, hot, s);
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
		reroute(h, fl);
		add_path(h, fl, 1);
		return;
	}
	for (unsigned i = 0; i < best.nch; i++) {
		sm_lfts_set(h->out, best.ch_node[i], best.dlid, best.ch_port[i]);
		*dec(h, h->hot_of_lid[best.dlid], slot_of(h, best.ch_node[i])) = 1;
	}
	fl->dlid = best.dlid;
	fl->len = (uint8_t)best.len;
	memcpy(fl->path, best.path, best.len * sizeof(best.path[0]));
	add_path(h, fl, 1);
}

/* ---- colouring (2 and 3 levels) ---- */

/*
 * Edge-colour a bipartite multigraph with nc colours (Konig: enough when
 * every vertex has degree <= nc). Edge e joins left el[e] (< nl) and right
 * er[e] (< nr); col[e] gets its colour. For each edge: a colour al free at
 * its left end and be free at its right end; if al is taken at the right
 * end, the al/be alternating path from there is flipped (it cannot reach
 * the left end in a bipartite graph), which frees al. O(edges x path).
 * 0, -ERANGE (a degree exceeds nc), -ENOMEM.
 */
static int kempe(uint32_t nl, uint32_t nr, size_t ne, const uint32_t *el, const uint32_t *er, uint32_t nc,
		 int32_t *col)
{
	size_t nv = (size_t)nl + nr;
	int32_t *at = malloc((nv * nc + 1) * sizeof(*at));
	int32_t *path = malloc((ne + 1) * sizeof(*path));
	int rc = 0;
	if (!at || !path) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nv * nc; i++)
		at[i] = -1;
#define AT(v, c) at[(size_t)(v) * nc + (c)]
	for (size_t e = 0; e < ne; e++) {
		uint32_t va = el[e], vb = nl + er[e], al = 0, be = 0;
		while (al < nc && AT(va, al) >= 0)
			al++;
		while (be < nc && AT(vb, be) >= 0)
			be++;
		if (al == nc || be == nc) {
			rc = -ERANGE;
			goto out;
		}
		if (AT(vb, al) >= 0) {
			uint32_t v = vb, c = al;
			size_t plen = 0;
			while (AT(v, c) >= 0) {
				int32_t x = AT(v, c);
				if (plen == ne) { /* cannot happen on a simple alternating path */
					rc = -ERANGE;
					goto out;
				}
				path[plen++] = x;
				v = v == el[x] ? nl + er[x] : el[x];
				c = c == al ? be : al;
			}
			for (size_t i = 0; i < plen; i++) {
				int32_t x = path[i];
				AT(el[x], col[x]) = -1;
				AT(nl + er[x], col[x]) = -1;
			}
			for (size_t i = 0; i < plen; i++) {
				int32_t x = path[i];
				col[x] = col[x] == (int32_t)al ? (int32_t)be : (int32_t)al;
				AT(el[x], col[x]) = x;
				AT(nl + er[x], col[x]) = x;
			}
		}
		col[e] = (int32_t)al;
		AT(va, al) = (int32_t)e;
		AT(vb, al) = (int32_t)e;
	}
#undef AT
out:
	free(at);
	free(path);
	return rc;
}

struct unit {
	uint32_t a, b;           /* vertices: source side, destination side (switch slots) */
	uint16_t lid;
	double w;
	unsigned nlids;          /* LIDs of the destination available to split the unit */
	unsigned flows;
};

static int cmp_unit(const void *x, const void *y)
{
	const struct unit *a = x, *b = y;
	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	return a->lid < b->lid ? -1 : a->lid > b->lid;
}

/* Merge the units of one (a, lid) (their flows share one LFT entry); returns the new count. */
static size_t merge_units(struct unit *u, size_t nu)
{
	if (!nu)
		return 0;
	qsort(u, nu, sizeof(*u), cmp_unit);
	size_t o = 0;
	for (size_t i = 1; i < nu; i++) {
		if (u[i].a == u[o].a && u[i].lid == u[o].lid) {
			u[o].w += u[i].w;
			u[o].flows += u[i].flows;
		} else {
			u[++o] = u[i];
		}
	}
	return o + 1;
}

static bool units_colourable(const struct unit *u, size_t nu, bool use_lmc, char *note, size_t notelen)
{
	for (size_t i = 0; i < nu; i++)
		if (use_lmc && u[i].flows > 1 && u[i].nlids > 1) {
			snprintf(note, notelen, "colour: LMC LIDs can split flows sharing a (switch, destination); greedy used");
			return false;
		}
	for (size_t i = 1; i < nu; i++)
		if (fabs(u[i].w - u[0].w) > HP_EPS * fmax(1, u[0].w)) {
			snprintf(note, notelen, "colour needs equal weights per (leaf, destination); greedy used");
			return false;
		}
	return true;
}

/*
 * Colour the units u[0..nu) (vertices: switch slots) with nc colours and
 * set out[a][lid] = port_of[a * nc + colour] for each. Vertex ids are
 * compacted first. Returns 1 applied, 0 degree too high (note), <0 errno.
 */
static int colour_units(struct hp *h, struct unit *u, size_t nu, uint32_t nc, const uint8_t *port_of, char *note,
			size_t notelen)
{
	uint32_t *lmap = malloc(((size_t)h->n_sw + 1) * sizeof(uint32_t));
	uint32_t *rmap = malloc(((size_t)h->n_sw + 1) * sizeof(uint32_t));
	uint32_t *el = malloc((nu + 1) * sizeof(uint32_t)), *er = malloc((nu + 1) * sizeof(uint32_t));
	int32_t *col = malloc((nu + 1) * sizeof(int32_t));
	int rc = 0;
	if (!lmap || !rmap || !el || !er || !col) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t s = 0; s < h->n_sw; s++)
		lmap[s] = rmap[s] = SM_NONE;
	uint32_t nl = 0, nr = 0;
	for (size_t i = 0; i < nu; i++) {
		if (lmap[u[i].a] == SM_NONE)
			lmap[u[i].a] = nl++;
		if (rmap[u[i].b] == SM_NONE)
			rmap[u[i].b] = nr++;
		el[i] = lmap[u[i].a];
		er[i] = rmap[u[i].b];
	}
	rc = kempe(nl, nr, nu, el, er, nc, col);
	if (rc == -ERANGE) {
		snprintf(note, notelen, "colour: a switch has more (switch, destination) units than up-links; greedy used");
		rc = 0;
		goto out;
	}
	if (rc)
		goto out;
	for (size_t i = 0; i < nu; i++) {
		uint32_t node = h->out->sw_node[u[i].a];
		sm_lfts_set(h->out, node, u[i].lid, port_of[(size_t)u[i].a * nc + (uint32_t)col[i]]);
		*dec(h, h->hot_of_lid[u[i].lid], u[i].a) = 1;
	}
	rc = 1;
out:
	free(lmap);
	free(rmap);
	free(el);
	free(er);
	free(col);
	return rc;
}

/* Slot of the switch behind port e of the switch in slot s (SM_NONE if none). */
static uint32_t peer_slot(const struct hp *h, uint32_t s, uint8_t e)
{
	const struct sm_port *pt = sm_port(h->f, h->out->sw_node[s], e);
	return pt->peer_node == SM_NONE ? SM_NONE : slot_of(h, pt->peer_node);
}

/*
 * Konig colouring for permutation-like profiles on 2- and 3-level trees.
 *
 * Level-1 switches fall into classes: on 2 levels each spine is a class; on
 * 3 levels aggs with the same set of cores above them form a class (agg j
 * of every pod). Stage 1 colours (source leaf, DLID) units with the
 * classes: the bipartite multigraph source leaf x destination leaf, so no
 * leaf up-link and no level-1 -> leaf down-link carries two units. On 3
 * levels, stage 2 colours, per class, the units that continue up, (agg,
 * DLID), with the class's cores: source agg x destination agg (the class's
 * agg in the destination's pod), so no agg -> core or core -> agg link
 * carries two. Every link then carries one unit: max load = unit weight.
 *
 * Returns 1 if stage 1 (and stage 2 where needed) was applied, 0 if the
 * conditions do not hold (note says why; units left undecided go to
 * greedy), negative errno on allocation failure.
 */
static int colour(struct hp *h, bool use_lmc, char *note, size_t notelen)
{
	const struct sm_fabric *f = h->f;
	if (h->max_level != 1 && h->max_level != 2) {
		snprintf(note, notelen, "colour needs a 2- or 3-level tree (found %u levels)", h->max_level + 1);
		return 0;
	}
	uint32_t ns = h->n_sw;
	uint32_t *cls = malloc(((size_t)ns + 1) * sizeof(*cls));      /* level 1: class; level 2: class */
	uint32_t *cidx = malloc(((size_t)ns + 1) * sizeof(*cidx));     /* level 2: index among its class's cores */
	uint32_t *ncore = calloc((size_t)ns + 1, sizeof(*ncore));      /* per class: cores */
	uint32_t *rep = malloc(((size_t)ns + 1) * sizeof(*rep));       /* per class: representative agg */
	uint8_t *port1 = NULL, *port2 = NULL;
	struct unit *u = NULL;
	int rc = 0;
	size_t nu = 0;
	if (!cls || !cidx || !ncore || !rep) {
		rc = -ENOMEM;
		goto out;
	}
	uint32_t ncls = 0, maxcore = 0;
	for (uint32_t s = 0; s < ns; s++)
		cls[s] = cidx[s] = SM_NONE;
	if (h->max_level == 1) {
		for (uint32_t s = 0; s < ns; s++)
			if (h->level[s] == 1)
				cls[s] = ncls++;
	} else {
		/* class of a core: the class of the first agg below it; aggs: the class of their first core */
		for (uint32_t s = 0; s < ns; s++) {
			if (h->level[s] != 1)
				continue;
			uint32_t c0 = SM_NONE;
			for (uint32_t k = h->up_off[s]; k < h->up_off[s + 1] && c0 == SM_NONE; k++)
				c0 = peer_slot(h, s, h->up[k]);
			if (c0 == SM_NONE) {
				snprintf(note, notelen, "colour: an aggregation switch has no core link");
				goto out;
			}
			if (cls[c0] == SM_NONE) {
				cls[c0] = ncls;
				rep[ncls++] = s;
			}
			cls[s] = cls[c0];
			for (uint32_t k = h->up_off[s]; k < h->up_off[s + 1]; k++) {
				uint32_t c = peer_slot(h, s, h->up[k]);
				if (cls[c] == SM_NONE)
					cls[c] = cls[s];
				else if (cls[c] != cls[s]) {
					snprintf(note, notelen, "colour: aggregation switches share cores unevenly");
					goto out;
				}
			}
		}
		for (uint32_t s = 0; s < ns; s++)
			if (h->level[s] == 2 && cls[s] != SM_NONE) {
				cidx[s] = ncore[cls[s]]++;
				if (ncore[cls[s]] > maxcore)
					maxcore = ncore[cls[s]];
			}
	}
	if (!ncls) {
		snprintf(note, notelen, "colour: no level-1 switches");
		goto out;
	}
	/* port1[leaf * ncls + j]: the leaf's single up-port into class j; port2[agg * maxcore + c] likewise */
	port1 = calloc((size_t)ns * ncls + 1, 1);
	port2 = calloc((size_t)ns * (maxcore ? maxcore : 1) + 1, 1);
	u = calloc(h->n + 1, sizeof(*u));
	if (!port1 || !port2 || !u) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t s = 0; s < ns && !note[0]; s++) {
		if (h->level[s] != 0 && h->level[s] != 1)
			continue;
		bool leaf = h->level[s] == 0;
		if (!leaf && h->max_level != 2)
			continue;
		uint32_t want = leaf ? ncls : ncore[cls[s]];
		uint8_t *row = leaf ? &port1[(size_t)s * ncls] : &port2[(size_t)s * maxcore];
		uint32_t got = 0;
		for (uint32_t k = h->up_off[s]; k < h->up_off[s + 1]; k++) {
			uint32_t t = peer_slot(h, s, h->up[k]);
			uint32_t j = leaf ? cls[t] : cidx[t];
			if (j == SM_NONE || row[j]) {
				snprintf(note, notelen, "colour: parallel or unclassified up-links; greedy used");
				break;
			}
			row[j] = h->up[k];
			got++;
		}
		if (!note[0] && got != want)
			snprintf(note, notelen, "colour: a %s lacks a link to some %s; greedy used", leaf ? "leaf" : "agg",
				 leaf ? "spine/agg class" : "core of its class");
	}
	if (note[0])
		goto out;
	/* stage 1: (source leaf, LID) units of pinned flows between different leaves */
	for (size_t i = 0; i < h->n; i++) {
		const struct hflow *fl = &h->fl[i];
		if (!fl->pinned)
			continue;
		uint32_t a = slot_of(h, f->ports[fl->src].peer_node), b = slot_of(h, f->ports[fl->dst].peer_node);
		if (a == SM_NONE || b == SM_NONE || a == b || !is_up(h, h->out->sw_node[a], fl->base_lid))
			continue;
		u[nu++] = (struct unit){ a, b, fl->base_lid, fl->w, fl->nlids, 1 };
	}
	nu = merge_units(u, nu);
	if (!units_colourable(u, nu, use_lmc, note, notelen))
		goto out;
	rc = colour_units(h, u, nu, ncls, port1, note, notelen);
	if (rc <= 0 || h->max_level != 2)
		goto out;
	/* stage 2: units continuing up from the chosen agg, per class */
	size_t n2 = 0;
	for (size_t i = 0; i < nu; i++) {
		uint32_t a = u[i].a, b = u[i].b;
		uint8_t e = sm_lfts_get(h->out, h->out->sw_node[a], u[i].lid);
		uint32_t agg = peer_slot(h, a, e);
		if (agg == SM_NONE || !is_up(h, h->out->sw_node[agg], u[i].lid))
			continue;
		/* destination side: the agg of the same class above the destination leaf */
		uint32_t dagg = peer_slot(h, b, port1[(size_t)b * ncls + cls[agg]]);
		if (dagg == SM_NONE)
			continue;
		u[n2++] = (struct unit){ agg, dagg, u[i].lid, u[i].w, u[i].nlids, u[i].flows };
	}
	nu = merge_units(u, n2);
	if (!units_colourable(u, nu, use_lmc, note, notelen)) {
		rc = 1; /* stage 1 stays; greedy places the rest */
		goto out;
	}
	/* colour each class on its own: units sorted by source agg; group by class */
	struct unit *tmp = malloc((nu + 1) * sizeof(*tmp));
	if (!tmp) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t j = 0; j < ncls && rc > 0; j++) {
		size_t k = 0;
		for (size_t i = 0; i < nu; i++)
			if (cls[u[i].a] == j)
				tmp[k++] = u[i];
		if (!k)
			continue;
		int r2 = colour_units(h, tmp, k, ncore[j], port2, note, notelen);
		if (r2 < 0)
			rc = r2;
		/* r2 == 0: this class's agg units stay undecided, greedy places them */
	}
	free(tmp);
	if (rc > 0)
		rc = 1;
out:
	free(port1);
	free(port2);
	free(u);
	free(cls);
	free(cidx);
	free(ncore);
	free(rep);
	return rc;
}

/* ---- local improvement ---- */

struct undo {
	uint32_t node;
	uint16_t lid;
	uint8_t old;
};

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
		add_path(h, fl, -1);
	}
	sm_lfts_set(h->out, node, lid, e);
	for (uint32_t k = h->byl_off[hot]; k < h->byl_off[hot + 1]; k++) {
		struct hflow *fl = &h->fl[h->byl[k]];
		reroute(h, fl);
		add_path(h, fl, 1);
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

static unsigned improve(struct hp *h, unsigned rounds)
{
	unsigned moves = 0;
	uint32_t *cand_node = malloc(HP_MAXHOPS * (h->n + 1) * sizeof(uint32_t));
	uint16_t *cand_lid = malloc(HP_MAXHOPS * (h->n + 1) * sizeof(uint16_t));
	if (!cand_node || !cand_lid)
		goto out;
	while (moves < rounds) {
		double M;
		uint32_t L = busiest(h, &M);
		if (L == SM_NONE || M <= h->host_bound * (1 + 1e-9))
			break;
		/* decided units upstream of L on the paths of flows crossing L */
		size_t nc = 0;
		for (size_t i = 0; i < h->n; i++) {
			const struct hflow *fl = &h->fl[i];
			if (!fl->pinned || !path_has(fl, L))
				continue;
			uint32_t hot = h->hot_of_lid[fl->dlid];
			for (unsigned k = 1; k < fl->len; k++) {
				uint32_t node = h->f->ports[fl->path[k]].node;
				uint32_t s = slot_of(h, node);
				if (s != SM_NONE && *dec(h, hot, s)) {
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

void sm_hotpath_report_clear(struct sm_hotpath_report *r)
{
	if (!r)
		return;
	free(r->flow);
	free(r->dlid);
	free(r->is_pinned);
	memset(r, 0, sizeof(*r));
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int sm_hotpath_pin(const struct sm_fabric *f, unsigned plane, const struct sm_lfts *base,
		   const struct sm_flow *flows, size_t n_flows, const struct sm_hotpath_opts *o,
		   struct sm_lfts *out, struct sm_hotpath_report *rep, char *err, size_t errlen)
{
	struct sm_hotpath_opts def;
	struct hp hh, *h = &hh;
	struct sm_hotpath_report tmp;
	double t0 = now();
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
	if ((rc = build_levels(h)))
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
		h->host_bound = host_bound_of(f, rep->flow, h->n, plane, ts, tr);
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
			fl->len = (uint8_t)walk(f, out, fl->src, fl->dst, fl->dlid, fl->path);
			add_path(h, fl, 1);
		}
	}
	free(dst_hot);
	/* colouring or greedy */
	int coloured = 0;
	if (h->n_hot && o->method != SM_HOTPATH_GREEDY) {
		coloured = colour(h, !o->no_lmc, rep->note, sizeof(rep->note));
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
	rep->seconds = now() - t0;
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

void sm_hotpath_report_format(const struct sm_hotpath_report *r, char *buf, size_t len)
{
	snprintf(buf, len,
		 "hotpath plane%u: %s, %zu of %zu flows pinned (%u destinations, %u LIDs), max link load %.4g -> %.4g "
		 "(host-link bound %.4g), profile EBB %.3f -> %.3f, %llu LFT entries changed in %llu blocks%s%s",
		 r->plane, r->method, r->pinned, r->flows, r->hot_dests, r->hot_lids, r->max_load_before,
		 r->max_load_after, r->host_bound, r->ebb_before, r->ebb_after, (unsigned long long)r->lft_changed,
		 (unsigned long long)r->lft_blocks_changed, r->note[0] ? "; " : "", r->note);
}

static void put_endpoint(const struct sm_fabric *f, uint32_t port, FILE *out)
{
	const struct sm_node *n = &f->nodes[f->ports[port].node];
	if (!n->desc[0]) {
		fprintf(out, "0x%016llx", (unsigned long long)f->ports[port].guid);
		return;
	}
	fputc('"', out);
	for (const char *c = n->desc; *c; c++) {
		if (*c == '"' || *c == '\\')
			fputc('\\', out);
		fputc(*c, out);
	}
	fputc('"', out);
}

int sm_hotpath_write_dlids(const struct sm_fabric *f, const struct sm_hotpath_report *r, FILE *out)
{
	fprintf(out, "# hotpath plane%u: SRC DST WEIGHT DLID pinned|base\n", r->plane);
	for (size_t i = 0; i < r->n_flows; i++) {
		put_endpoint(f, r->flow[i].src, out);
		fputc(' ', out);
		put_endpoint(f, r->flow[i].dst, out);
		fprintf(out, " %.17g %u %s\n", r->flow[i].weight, r->dlid[i], r->is_pinned[i] ? "pinned" : "base");
	}
	return ferror(out) ? -EIO : 0;
}
