/* SPDX-License-Identifier: MIT */
/*
 * DOC: the shift-congestion lower bound a plane's cabling imposes (metrics.h)
 *
 * Shift k sends host i to host i + k (mod N) in the canonical host order of
 * sm_metrics_host_order(), where every subtree (a leaf, a pod, ...) is a
 * contiguous run of hosts. A run S of H consecutive hosts sends all H of
 * them outside S in every shift k with H <= k <= N - H (there is one when
 * 2H <= N), and receives H from outside in the same shifts. Every flow
 * leaving S crosses every edge cut around S, so whatever the routing
 * (minimal or not, up/down or not) some link of a cut of c links carries at
 * least ceil(H / c) flows of that shift. The bound is the largest such
 * value over the cuts below, and 1 when the plane has hosts on two leaves.
 *
 * Cuts, level by level (rank r = switch-link distance from the nearest
 * leaf; a "unit" at level r = a connected component of the switches of
 * ranks < r, so a leaf at r = 1 and a pod at r = 2 on a 3-level tree):
 * for a run S of consecutive units inside one component of ranks <= r,
 * each switch a of rank r joins the side that costs fewer links:
 * outside, cutting its x_a links from S; or inside, cutting its y_a
 * uplinks and its z_a links down to units outside S. The cut is
 * sum over a of min(x_a, y_a + z_a); on a complete 1:1 tree it equals the
 * hosts of S (bound 1), and each missing link lowers it by one where it
 * counts. Runs of one leaf give the familiar ceil(hosts / uplinks) of the
 * worst leaf; runs of leaves and pods catch switches above that lost links
 * (an aggregation switch with few core links, a spine with few leaves).
 *
 * Up/down routings (ftree, updn) are held to more: every endpoint route
 * climbs and then descends, so the min(H_S, H_T) flows a shift sends from
 * leaf S to leaf T (the shift that lines T's first host up with S's) use
 * only the up/down paths from S to T, and some link carries at least
 * ceil(min(H_S, H_T) / p) of them, p the most link-disjoint such paths
 * (a max flow in the graph of up links from S and down links to T). On a
 * 3-level tree whose aggregation switch j of every pod has core group j,
 * a path keeps its column j from S's pod to T's: S and T must share
 * columns, and two leaves that lost different uplinks share few. `updown`
 * is the largest of these over leaf pairs, and at least the cut bound.
 * Whole subtrees too: a pod P of a 3-level tree (a unit at level 2) is a
 * run of hosts, so the shift first(Q) - first(P) sends min(H_P, H_Q) of
 * them into pod Q at once, every leaf of P to its counterpart in Q, and
 * they share the up/down paths between the two pods' leaves: at least
 * ceil(min(H_P, H_Q) / p), p a max flow from P's leaves (each up to its
 * hosts) to Q's over states (switch, climbing or descending), one path per
 * link. Two pods that lost different columns are held to more than any
 * leaf pair of theirs (the trees where ftree was at the leaf-pair bound
 * plus 2 were of this kind).
 *
 * Cost: O(units^2 * switches of rank r) per component and level, runs
 * limited to one component of ranks <= r (a pod's leaves, a tree's pods);
 * per leaf pair, greedy paths until the pair cannot exceed the bound found
 * so far, and an exact augmenting search only when greedy paths fall short;
 * per pod pair, a max flow (Dinic) stopped at the paths that would not
 * raise the bound, on levels of at most SM_BOUND_UD_UNITS units. Pure: no
 * globals, no logging.
 */
#include "config.h"
#include "routing/metrics.h"
#include "routing/metrics_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define RANK_NONE UINT32_MAX
#define SM_BOUND_UD_UNITS 64 /* unit pairs are tried on levels of at most this many units (pods) */

struct bnd {
	const struct sm_fabric *f;
	unsigned plane;
	uint32_t *rank;     /* [n_nodes] RANK_NONE for non-switches and unranked switches */
	uint32_t *uf;       /* [n_nodes] union-find scratch */
	uint32_t *hosts;    /* [n_nodes] hosts (CA ports with a LID) cabled to a leaf */
	uint32_t *first;    /* [n_nodes] canonical position of the first host of a leaf */
	uint32_t *unit;     /* [n_nodes] unit (component root) of a switch at the current level */
	uint32_t *uidx;     /* [n_nodes] index of a unit root in units[] */
	uint32_t *x;        /* [n_nodes] links from the run into a rank-r switch */
	uint32_t *cnt;      /* [n_nodes] links from a rank-r switch down to units (all of them) */
	uint32_t *up;       /* [n_nodes] uplinks of a switch */
	uint32_t *touched;  /* rank-r switches with x > 0 */
	uint32_t nsw, h;
	uint32_t *sw;       /* [nsw] switches of the plane by rank */
	uint64_t n;         /* hosts of the plane (the shift modulus) */
};

/* Switch peer of port p of switch s in the plane, or SM_NONE. */
static uint32_t sw_peer(const struct bnd *b, uint32_t s, unsigned p)
{
	uint32_t q = sm_port(b->f, s, p)->peer_node;
	return sm_mx_is_sw(b->f, q, b->plane) && b->rank[q] != RANK_NONE ? q : SM_NONE;
}

struct unit {
	uint32_t root;
	uint32_t first;  /* canonical position of its first host */
	uint32_t hosts;
	uint32_t comp;   /* component over ranks <= r */
	uint32_t leaf;   /* its first leaf (node index) */
};

static int cmp_unit(const void *a, const void *b)
{
	const struct unit *x = a, *y = b;
	if (x->comp != y->comp)
		return x->comp < y->comp ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

static void consider(struct sm_shift_bound *out, uint64_t hosts, uint64_t links, unsigned level,
		     uint32_t leaf, uint32_t last_leaf, uint32_t units)
{
	if (!links)
		return;
	unsigned v = (unsigned)((hosts + links - 1) / links);
	/* the largest bound; among equal ones the tightest cut (most hosts per link), then the smallest */
	uint64_t a = hosts * out->links, b = (uint64_t)out->hosts * links;
	if (v > out->bound ||
	    (v == out->bound && v > 1 &&
	     (a > b || (a == b && (level < out->level || (level == out->level && units < out->units)))))) {
		out->bound = v;
		out->level = level;
		out->leaf = leaf;
		out->last_leaf = last_leaf;
		out->units = units;
		out->hosts = (unsigned)hosts;
		out->links = (unsigned)links;
	}
}

/*
 * Runs of consecutive units of one component at level r (u sorted by
 * component, then position); mem[moff[i] .. moff[i+1]) are the rank r-1
 * switches of unit u[i].
 */
static void level_runs(struct bnd *b, unsigned r, const struct unit *u, uint32_t nu, const uint32_t *moff,
		       const uint32_t *mem, struct sm_shift_bound *out)
{
	const struct sm_fabric *f = b->f;
	for (uint32_t c0 = 0; c0 < nu;) {
		uint32_t c1 = c0;
		uint64_t comp_hosts = 0;
		while (c1 < nu && u[c1].comp == u[c0].comp)
			comp_hosts += u[c1++].hosts;
		uint32_t len = c1 - c0;
		int wrap = comp_hosts == b->n; /* a component of every host: runs wrap around */
		uint32_t maxl = wrap ? len - 1 : len;
		for (uint32_t i = 0; i < len; i++) {
			uint64_t hs = 0;
			uint32_t nt = 0;
			for (uint32_t l = 0; l < maxl && (wrap || i + l < len); l++) {
				uint32_t ui = c0 + (i + l) % len;
				hs += u[ui].hosts;
				if (2 * hs > b->n)
					break;
				/* add the unit's links up into rank r */
				for (uint32_t k = moff[ui]; k < moff[ui + 1]; k++) {
					uint32_t s = mem[k];
					for (unsigned p = 1; p <= f->nodes[s].nports; p++) {
						uint32_t q = sw_peer(b, s, p);
						if (q == SM_NONE || b->rank[q] != r)
							continue;
						if (!b->x[q]++)
							b->touched[nt++] = q;
					}
				}
				uint64_t cut = 0;
				for (uint32_t t = 0; t < nt; t++) {
					uint32_t a = b->touched[t];
					uint64_t in = (uint64_t)b->up[a] + b->cnt[a] - b->x[a];
					cut += b->x[a] < in ? b->x[a] : in;
				}
				if (hs)
					consider(out, hs, cut, r, u[c0 + i].leaf, u[ui].leaf, l + 1);
			}
			for (uint32_t t = 0; t < nt; t++)
				b->x[b->touched[t]] = 0;
		}
		c0 = c1;
	}
}

/* Link-disjoint up/down paths between two leaves (see the DOC). */
struct ud {
	struct bnd *b;
	uint32_t t, tgen, vgen, pgen;
	uint32_t *anc;               /* [n_nodes] == tgen: T or an ancestor of T */
	uint32_t *vu, *vd;           /* [n_nodes] == vgen: visited going up / down (one search) */
	uint32_t *ust, *dst, *tst;   /* [n_ports], [n_ports], [n_nodes] == pgen: the value below is set */
	uint8_t *uu, *du;            /* [n_ports] link used upward (lower end's port) / downward (upper end's) */
	uint32_t *turn;              /* [n_nodes] paths that turn down there */
	uint32_t *q, *prev, *how, *via; /* [2 * n_nodes] exact search: states n * 2 + (0 up, 1 down) */
};

static unsigned used_up(const struct ud *u, uint32_t pi)
{
	return u->ust[pi] == u->pgen ? u->uu[pi] : 0;
}

static unsigned used_dn(const struct ud *u, uint32_t pi)
{
	return u->dst[pi] == u->pgen ? u->du[pi] : 0;
}

static void set_up(struct ud *u, uint32_t pi, uint8_t v)
{
	u->ust[pi] = u->pgen;
	u->uu[pi] = v;
}

static void set_dn(struct ud *u, uint32_t pi, uint8_t v)
{
	u->dst[pi] = u->pgen;
	u->du[pi] = v;
}

static uint32_t turns(const struct ud *u, uint32_t n)
{
	return u->tst[n] == u->pgen ? u->turn[n] : 0;
}

static void add_turn(struct ud *u, uint32_t n, int d)
{
	u->turn[n] = turns(u, n) + (uint32_t)d;
	u->tst[n] = u->pgen;
}

static int dfs_down(struct ud *u, uint32_t n)
{
	const struct bnd *b = u->b;
	if (n == u->t)
		return 1;
	u->vd[n] = u->vgen;
	for (unsigned p = 1; p <= b->f->nodes[n].nports; p++) {
		uint32_t m = sw_peer(b, n, p), pi = sm_port_index(b->f, n, p);
		if (m == SM_NONE || b->rank[m] + 1 != b->rank[n] || u->anc[m] != u->tgen || u->vd[m] == u->vgen ||
		    used_dn(u, pi))
			continue;
		if (dfs_down(u, m)) {
			set_dn(u, pi, 1);
			return 1;
		}
	}
	return 0;
}

/* One more path from n upward (turning as low as it can), without undoing any path found before. */
static int dfs_up(struct ud *u, uint32_t n)
{
	const struct bnd *b = u->b;
	u->vu[n] = u->vgen;
	if (u->anc[n] == u->tgen && u->vd[n] != u->vgen && dfs_down(u, n)) {
		add_turn(u, n, 1);
		return 1;
	}
	for (unsigned p = 1; p <= b->f->nodes[n].nports; p++) {
		uint32_t m = sw_peer(b, n, p), pi = sm_port_index(b->f, n, p);
		if (m == SM_NONE || b->rank[m] != b->rank[n] + 1 || u->vu[m] == u->vgen || used_up(u, pi))
			continue;
		if (dfs_up(u, m)) {
			set_up(u, pi, 1);
			return 1;
		}
	}
	return 0;
}

enum { UD_TURN = 1, UD_UNTURN, UD_UP, UD_UNUP, UD_DN, UD_UNDN };

static void ud_visit(struct ud *u, uint32_t *qt, uint32_t from, uint32_t to, uint32_t how, uint32_t pi)
{
	if (u->vu[to] == u->vgen) /* vu doubles as the visited stamp of states here */
		return;
	u->vu[to] = u->vgen;
	u->prev[to] = from;
	u->how[to] = how;
	u->via[to] = pi;
	u->q[(*qt)++] = to;
}

/*
 * One augmenting path in the residual graph (states n * 2 + phase), which
 * may undo parts of earlier paths: what the greedy search cannot. Here vu
 * is indexed by state (it has 2 * n_nodes entries).
 */
static int augment(struct ud *u, uint32_t s)
{
	const struct bnd *b = u->b;
	const struct sm_fabric *f = b->f;
	uint32_t qh = 0, qt = 0, goal = u->t * 2 + 1;

	u->vgen++;
	u->vu[s * 2] = u->vgen;
	u->q[qt++] = s * 2;
	while (qh < qt && u->vu[goal] != u->vgen) {
		uint32_t st = u->q[qh++], n = st / 2;
		if (!(st & 1)) {
			if (u->anc[n] == u->tgen)
				ud_visit(u, &qt, st, n * 2 + 1, UD_TURN, 0);
		} else if (turns(u, n)) {
			ud_visit(u, &qt, st, n * 2, UD_UNTURN, 0);
		}
		for (unsigned p = 1; p <= f->nodes[n].nports; p++) {
			uint32_t m = sw_peer(b, n, p);
			if (m == SM_NONE)
				continue;
			uint32_t pi = sm_port_index(f, n, p);
			uint32_t back = sm_port_index(f, m, sm_port(f, n, p)->peer_port);
			int up = b->rank[m] == b->rank[n] + 1, dn = b->rank[m] + 1 == b->rank[n];
			if (!(st & 1)) {
				if (up && !used_up(u, pi))
					ud_visit(u, &qt, st, m * 2, UD_UP, pi);
				else if (dn && used_up(u, back))
					ud_visit(u, &qt, st, m * 2, UD_UNUP, back);
			} else {
				if (dn && u->anc[m] == u->tgen && !used_dn(u, pi))
					ud_visit(u, &qt, st, m * 2 + 1, UD_DN, pi);
				else if (up && used_dn(u, back))
					ud_visit(u, &qt, st, m * 2 + 1, UD_UNDN, back);
			}
		}
	}
	if (u->vu[goal] != u->vgen)
		return 0;
	for (uint32_t st = goal; st != s * 2; st = u->prev[st]) {
		uint32_t pi = u->via[st];
		switch (u->how[st]) {
		case UD_TURN: add_turn(u, st / 2, 1); break;
		case UD_UNTURN: add_turn(u, st / 2, -1); break;
		case UD_UP: set_up(u, pi, 1); break;
		case UD_UNUP: set_up(u, pi, 0); break;
		case UD_DN: set_dn(u, pi, 1); break;
		default: set_dn(u, pi, 0); break;
		}
	}
	return 1;
}

/* Mark T and its ancestors (climbing any up link). */
static void mark_anc(struct ud *u, uint32_t t)
{
	const struct bnd *b = u->b;
	uint32_t qh = 0, qt = 0;
	u->t = t;
	u->tgen++;
	u->anc[t] = u->tgen;
	u->q[qt++] = t;
	while (qh < qt) {
		uint32_t n = u->q[qh++];
		for (unsigned p = 1; p <= b->f->nodes[n].nports; p++) {
			uint32_t m = sw_peer(b, n, p);
			if (m != SM_NONE && b->rank[m] == b->rank[n] + 1 && u->anc[m] != u->tgen) {
				u->anc[m] = u->tgen;
				u->q[qt++] = m;
			}
		}
	}
}

/* Up to `need` link-disjoint up/down paths from leaf s to u->t: greedy first, exact when it falls short. */
static unsigned ud_paths(struct ud *u, uint32_t s, unsigned need)
{
	unsigned n = 0;
	u->pgen++;
	while (n < need) {
		u->vgen++;
		if (!dfs_up(u, s))
			break;
		n++;
	}
	while (n < need && augment(u, s))
		n++;
	return n;
}

static int updown_bound(struct bnd *b, uint32_t leaves, struct sm_shift_bound *out)
{
	const struct sm_fabric *f = b->f;
	size_t nn = (size_t)f->n_nodes + 1, np = (size_t)f->n_ports + 1;
	struct ud u = { .b = b };
	int rc = -ENOMEM;

	out->updown = out->bound;
	out->ud_from = out->ud_to = SM_NONE;
	u.anc = calloc(nn, sizeof(*u.anc));
	u.vu = calloc(2 * nn, sizeof(*u.vu));
	u.vd = calloc(nn, sizeof(*u.vd));
	u.tst = calloc(nn, sizeof(*u.tst));
	u.turn = calloc(nn, sizeof(*u.turn));
	u.ust = calloc(np, sizeof(*u.ust));
	u.dst = calloc(np, sizeof(*u.dst));
	u.uu = calloc(np, 1);
	u.du = calloc(np, 1);
	u.q = malloc(2 * nn * sizeof(*u.q));
	u.prev = malloc(2 * nn * sizeof(*u.prev));
	u.how = malloc(2 * nn * sizeof(*u.how));
	u.via = malloc(2 * nn * sizeof(*u.via));
	if (u.anc && u.vu && u.vd && u.tst && u.turn && u.ust && u.dst && u.uu && u.du && u.q && u.prev && u.how &&
	    u.via) {
		for (uint32_t j = 0; j < leaves; j++) {
			uint32_t t = b->sw[j];
			mark_anc(&u, t);
			for (uint32_t i = 0; i < leaves; i++) {
				uint32_t s = b->sw[i];
				unsigned h = b->hosts[s] < b->hosts[t] ? b->hosts[s] : b->hosts[t];
				if (s == t || !h)
					continue;
				/* paths enough that this pair cannot raise the bound: need * updown >= h */
				unsigned need = (h + out->updown - 1) / out->updown;
				unsigned paths = ud_paths(&u, s, need);
				if (!paths || paths >= need)
					continue; /* no up/down path at all (the routing refuses it), or no more */
				out->updown = (h + paths - 1) / paths;
				out->ud_from = s;
				out->ud_to = t;
				out->ud_hosts = h;
				out->ud_paths = paths;
				out->ud_level = 1;
			}
		}
		rc = 0;
	}
	free(u.anc);
	free(u.vu);
	free(u.vd);
	free(u.tst);
	free(u.turn);
	free(u.ust);
	free(u.dst);
	free(u.uu);
	free(u.du);
	free(u.q);
	free(u.prev);
	free(u.how);
	free(u.via);
	return rc;
}

/*
 * Unit pairs (see the DOC): a max flow over states (switch, phase 0 up /
 * 1 down) from the leaves of one unit to the leaves of another, each leaf
 * limited to its hosts, each directed link to one path, turning anywhere.
 */
struct uf {
	uint32_t nv, ne, src, snk;
	uint32_t *head, *next, *to, *lvl, *it, *q, *state; /* state: [n_nodes] switch -> index in b->sw */
	int32_t *cap, *cap0;
	uint32_t *src_e, *snk_e;     /* [leaves] the edges from the source / into the sink */
};

static void uf_edge(struct uf *g, uint32_t a, uint32_t z, int32_t c)
{
	uint32_t e = g->ne;
	g->to[e] = z;
	g->cap0[e] = c;
	g->next[e] = g->head[a];
	g->head[a] = e;
	g->to[e + 1] = a;
	g->cap0[e + 1] = 0;
	g->next[e + 1] = g->head[z];
	g->head[z] = e + 1;
	g->ne += 2;
}

static void uf_free(struct uf *g)
{
	free(g->head);
	free(g->next);
	free(g->to);
	free(g->lvl);
	free(g->it);
	free(g->q);
	free(g->state);
	free(g->cap);
	free(g->cap0);
	free(g->src_e);
	free(g->snk_e);
}

static int uf_build(struct uf *g, const struct bnd *b, uint32_t leaves)
{
	const struct sm_fabric *f = b->f;
	size_t links = 0;
	for (uint32_t k = 0; k < b->nsw; k++)
		links += f->nodes[b->sw[k]].nports;
	g->nv = 2 * b->nsw + 2;
	g->src = g->nv - 2;
	g->snk = g->nv - 1;
	size_t me = 2 * (links + b->nsw + 2 * (size_t)leaves) + 2;
	g->head = malloc(g->nv * sizeof(*g->head));
	g->next = malloc(me * sizeof(*g->next));
	g->to = malloc(me * sizeof(*g->to));
	g->cap = malloc(me * sizeof(*g->cap));
	g->cap0 = malloc(me * sizeof(*g->cap0));
	g->lvl = malloc(g->nv * sizeof(*g->lvl));
	g->it = malloc(g->nv * sizeof(*g->it));
	g->q = malloc(g->nv * sizeof(*g->q));
	g->state = malloc(((size_t)f->n_nodes + 1) * sizeof(*g->state));
	g->src_e = malloc(((size_t)leaves + 1) * sizeof(*g->src_e));
	g->snk_e = malloc(((size_t)leaves + 1) * sizeof(*g->snk_e));
	if (!g->head || !g->next || !g->to || !g->cap || !g->cap0 || !g->lvl || !g->it || !g->q || !g->state ||
	    !g->src_e || !g->snk_e)
		return -ENOMEM;
	for (uint32_t v = 0; v < g->nv; v++)
		g->head[v] = SM_NONE;
	for (uint32_t k = 0; k < b->nsw; k++)
		g->state[b->sw[k]] = k;
	for (uint32_t k = 0; k < b->nsw; k++) {
		uint32_t s = b->sw[k];
		uf_edge(g, 2 * k, 2 * k + 1, INT32_MAX); /* turn */
		for (unsigned p = 1; p <= f->nodes[s].nports; p++) {
			uint32_t q = sw_peer(b, s, p);
			if (q == SM_NONE)
				continue;
			if (b->rank[q] == b->rank[s] + 1)
				uf_edge(g, 2 * k, 2 * g->state[q], 1);
			else if (b->rank[q] + 1 == b->rank[s])
				uf_edge(g, 2 * k + 1, 2 * g->state[q] + 1, 1);
		}
	}
	for (uint32_t k = 0; k < leaves; k++) { /* b->sw starts with the leaves */
		g->src_e[k] = g->ne;
		uf_edge(g, g->src, 2 * k, 0);
		g->snk_e[k] = g->ne;
		uf_edge(g, 2 * k + 1, g->snk, 0);
	}
	return 0;
}

static int32_t uf_push(struct uf *g, uint32_t v, int32_t lim)
{
	if (v == g->snk)
		return lim;
	for (; g->it[v] != SM_NONE; g->it[v] = g->next[g->it[v]]) {
		uint32_t e = g->it[v], w = g->to[e];
		if (g->cap[e] <= 0 || g->lvl[w] != g->lvl[v] + 1)
			continue;
		int32_t got = uf_push(g, w, lim < g->cap[e] ? lim : g->cap[e]);
		if (got) {
			g->cap[e] -= got;
			g->cap[e ^ 1] += got;
			return got;
		}
	}
	return 0;
}

/* Max flow (Dinic), at most lim. */
static uint32_t uf_flow(struct uf *g, uint32_t lim)
{
	uint32_t total = 0;
	while (total < lim) {
		for (uint32_t v = 0; v < g->nv; v++)
			g->lvl[v] = UINT32_MAX;
		uint32_t qh = 0, qt = 0;
		g->lvl[g->src] = 0;
		g->q[qt++] = g->src;
		while (qh < qt) {
			uint32_t v = g->q[qh++];
			for (uint32_t e = g->head[v]; e != SM_NONE; e = g->next[e])
				if (g->cap[e] > 0 && g->lvl[g->to[e]] == UINT32_MAX) {
					g->lvl[g->to[e]] = g->lvl[v] + 1;
					g->q[qt++] = g->to[e];
				}
		}
		if (g->lvl[g->snk] == UINT32_MAX)
			break;
		for (uint32_t v = 0; v < g->nv; v++)
			g->it[v] = g->head[v];
		int32_t got;
		while (total < lim && (got = uf_push(g, g->src, (int32_t)(lim - total))) > 0)
			total += (uint32_t)got;
	}
	return total;
}

/*
 * Pairs of units P != Q at level r >= 2 (u[0 .. nu), b->uidx of a leaf's
 * unit root gives its index): the shift first(Q) - first(P) sends
 * min(H_P, H_Q) hosts of P into Q at once, over the up/down paths between
 * their leaves. The largest ceil(flows / paths) goes into *pp.
 */
static int unit_pairs(struct bnd *b, struct uf *g, uint32_t leaves, const struct unit *u, uint32_t nu, unsigned r,
		      unsigned cut, struct sm_shift_bound *pp)
{
	if (nu < 2 || nu > SM_BOUND_UD_UNITS)
		return 0;
	if (!g->head) {
		int rc = uf_build(g, b, leaves);
		if (rc)
			return rc;
	}
	uint32_t *of = malloc(((size_t)leaves + 1) * sizeof(*of));
	if (!of)
		return -ENOMEM;
	for (uint32_t k = 0; k < leaves; k++)
		of[k] = b->uidx[b->unit[b->sw[k]]];
	for (uint32_t i = 0; i < nu; i++)
		for (uint32_t j = 0; j < nu; j++) {
			uint32_t h = u[i].hosts < u[j].hosts ? u[i].hosts : u[j].hosts;
			if (i == j || !h)
				continue;
			memcpy(g->cap, g->cap0, g->ne * sizeof(*g->cap));
			for (uint32_t k = 0; k < leaves; k++) {
				if (of[k] == i)
					g->cap[g->src_e[k]] = (int32_t)b->hosts[b->sw[k]];
				if (of[k] == j)
					g->cap[g->snk_e[k]] = (int32_t)b->hosts[b->sw[k]];
			}
			uint32_t have = pp->updown > cut ? pp->updown : cut > 1 ? cut : 1;
			uint32_t need = (h + have - 1) / have; /* paths enough that this pair cannot raise the bound */
			uint32_t paths = uf_flow(g, need);
			if (!paths || paths >= need)
				continue;
			pp->updown = (h + paths - 1) / paths;
			pp->ud_from = u[i].leaf;
			pp->ud_to = u[j].leaf;
			pp->ud_hosts = h;
			pp->ud_paths = paths;
			pp->ud_level = r;
		}
	free(of);
	return 0;
}

static int bound_compute(struct bnd *b, struct sm_shift_bound *out)
{
	const struct sm_fabric *f = b->f;
	uint32_t nn = f->n_nodes;

	/* hosts: CA/router ports with a LID, canonical order; the leaves' counts and first positions */
	uint32_t np, *hp;
	int rc = sm_mx_host_ports(f, b->plane, &hp, &np);
	if (rc)
		return rc;
	b->n = np;
	for (uint32_t n = 0; n < nn; n++) {
		b->rank[n] = RANK_NONE;
		b->hosts[n] = 0;
		b->first[n] = UINT32_MAX;
	}
	uint32_t leaves = 0;
	for (uint32_t i = 0; i < np; i++) {
		uint32_t l = f->ports[hp[i]].peer_node;
		if (!sm_mx_is_sw(f, l, b->plane))
			continue;
		if (!b->hosts[l]++) {
			b->first[l] = i;
			b->rank[l] = 0;
			b->sw[leaves++] = l;
		}
	}
	free(hp);
	/* ranks: BFS up from the leaves (b->sw ends sorted by rank) */
	b->nsw = sm_mx_rank_up(f, b->plane, b->rank, b->sw, leaves, &b->h);
	if (leaves >= 2)
		out->bound = 1;
	/* a link within one rank: not a tree; the cuts below would still hold, but say nothing */
	for (uint32_t k = 0; k < b->nsw; k++) {
		uint32_t s = b->sw[k];
		b->up[s] = 0;
		for (unsigned p = 1; p <= f->nodes[s].nports; p++) {
			uint32_t q = sw_peer(b, s, p);
			if (q == SM_NONE)
				continue;
			if (b->rank[q] == b->rank[s])
				return 0;
			b->up[s] += b->rank[q] > b->rank[s];
		}
	}
	struct uf g = { 0 };
	struct sm_shift_bound pp = { .updown = 0 }; /* the worst unit pair (level >= 2) */
	int urc = 0;
	struct unit *u = malloc(((size_t)leaves + 1) * sizeof(*u));
	uint32_t *moff = malloc(((size_t)leaves + 2) * sizeof(*moff));
	uint32_t *mem = malloc(((size_t)b->nsw + 1) * sizeof(*mem));
	if (!u || !moff || !mem) {
		free(u);
		free(moff);
		free(mem);
		return -ENOMEM;
	}
	for (unsigned r = 1; r <= b->h; r++) {
		/* units: components over ranks < r */
		for (uint32_t k = 0; k < b->nsw; k++)
			b->uf[b->sw[k]] = b->sw[k];
		for (uint32_t k = 0; k < b->nsw; k++) {
			uint32_t s = b->sw[k];
			if (b->rank[s] >= r)
				continue;
			for (unsigned p = 1; p <= f->nodes[s].nports; p++) {
				uint32_t q = sw_peer(b, s, p);
				if (q != SM_NONE && b->rank[q] < r) {
					uint32_t x = sm_mx_find(b->uf, s), y = sm_mx_find(b->uf, q);
					if (x != y)
						b->uf[x] = y;
				}
			}
		}
		uint32_t nu = 0;
		for (uint32_t k = 0; k < b->nsw; k++) {
			uint32_t s = b->sw[k];
			b->unit[s] = b->rank[s] < r ? sm_mx_find(b->uf, s) : SM_NONE;
		}
		for (uint32_t k = 0; k < leaves; k++) {
			uint32_t l = b->sw[k], root = b->unit[l];
			if (b->uidx[root] == SM_NONE || b->uidx[root] >= nu || u[b->uidx[root]].root != root) {
				b->uidx[root] = nu;
				u[nu++] = (struct unit){ root, b->first[l], 0, 0, l };
			}
			struct unit *un = &u[b->uidx[root]];
			un->hosts += b->hosts[l];
			if (b->first[l] < un->first) {
				un->first = b->first[l];
				un->leaf = l;
			}
		}
		/* components over ranks <= r: runs stay inside one */
		for (uint32_t k = 0; k < b->nsw; k++) {
			uint32_t s = b->sw[k];
			if (b->rank[s] != r)
				continue;
			b->cnt[s] = 0;
			for (unsigned p = 1; p <= f->nodes[s].nports; p++) {
				uint32_t q = sw_peer(b, s, p);
				if (q != SM_NONE && b->rank[q] < r) {
					b->cnt[s]++;
					uint32_t x = sm_mx_find(b->uf, s), y = sm_mx_find(b->uf, q);
					if (x != y)
						b->uf[x] = y;
				}
			}
		}
		for (uint32_t i = 0; i < nu; i++)
			u[i].comp = sm_mx_find(b->uf, u[i].root);
		qsort(u, nu, sizeof(*u), cmp_unit);
		/* members: the rank r-1 switches of each unit, CSR in unit order */
		for (uint32_t i = 0; i < nu; i++) {
			b->uidx[u[i].root] = i;
			moff[i + 1] = 0;
		}
		for (uint32_t k = 0; k < b->nsw; k++) {
			uint32_t s = b->sw[k];
			if (b->rank[s] + 1 == r)
				moff[b->uidx[b->unit[s]] + 1]++;
		}
		moff[0] = 0;
		for (uint32_t i = 0; i < nu; i++)
			moff[i + 1] += moff[i];
		for (uint32_t i = 0; i < nu; i++)
			b->x[i] = moff[i];
		for (uint32_t k = 0; k < b->nsw; k++) {
			uint32_t s = b->sw[k];
			if (b->rank[s] + 1 == r)
				mem[b->x[b->uidx[b->unit[s]]]++] = s;
		}
		for (uint32_t i = 0; i < nu; i++)
			b->x[i] = 0;
		level_runs(b, r, u, nu, moff, mem, out);
		if (r >= 2 && leaves <= SM_BOUND_UD_LEAVES && !urc)
			urc = unit_pairs(b, &g, leaves, u, nu, r, out->bound, &pp);
	}
	free(u);
	free(moff);
	free(mem);
	uf_free(&g);
	if (urc || leaves > SM_BOUND_UD_LEAVES)
		return urc;
	urc = updown_bound(b, leaves, out);
	if (!urc && pp.updown > out->updown) {
		out->updown = pp.updown;
		out->ud_from = pp.ud_from;
		out->ud_to = pp.ud_to;
		out->ud_hosts = pp.ud_hosts;
		out->ud_paths = pp.ud_paths;
		out->ud_level = pp.ud_level;
	}
	return urc;
}

int sm_metrics_shift_bound(const struct sm_fabric *f, unsigned plane, struct sm_shift_bound *out)
{
	struct bnd b = { .f = f, .plane = plane };
	size_t nn = (size_t)f->n_nodes + 1;

	memset(out, 0, sizeof(*out));
	out->leaf = out->last_leaf = out->ud_from = out->ud_to = SM_NONE;
	b.rank = malloc(nn * sizeof(*b.rank));
	b.uf = malloc(nn * sizeof(*b.uf));
	b.hosts = malloc(nn * sizeof(*b.hosts));
	b.first = malloc(nn * sizeof(*b.first));
	b.unit = malloc(nn * sizeof(*b.unit));
	b.uidx = malloc(nn * sizeof(*b.uidx));
	b.x = calloc(nn, sizeof(*b.x));
	b.cnt = calloc(nn, sizeof(*b.cnt));
	b.up = calloc(nn, sizeof(*b.up));
	b.touched = malloc(nn * sizeof(*b.touched));
	b.sw = malloc(nn * sizeof(*b.sw));
	int rc = -ENOMEM;
	if (b.rank && b.uf && b.hosts && b.first && b.unit && b.uidx && b.x && b.cnt && b.up && b.touched && b.sw) {
		for (size_t i = 0; i < nn; i++)
			b.uidx[i] = SM_NONE;
		rc = bound_compute(&b, out);
	}
	free(b.rank);
	free(b.uf);
	free(b.hosts);
	free(b.first);
	free(b.unit);
	free(b.uidx);
	free(b.x);
	free(b.cnt);
	free(b.up);
	free(b.touched);
	free(b.sw);
	return rc;
}
