/* SPDX-License-Identifier: MIT */
/*
 * DOC: the bisection a plane's cabling keeps (metrics.h)
 *
 * The bisection of a network is the fewest links cut by some split of its
 * hosts into two halves (floor(N / 2) and the rest), every switch on
 * whichever side costs least. Finding the minimum is hard in general; this
 * finds a small cut and is exact in one part of it:
 *   - a few splits of the hosts by leaf, each filling the first half in one
 *     order and splitting at most one leaf: the canonical host order
 *     (sm_metrics_host_order(): on a complete tree, whole pods or runs of
 *     leaves), the leaves with the fewest switch links per host first, and
 *     (3 levels and more) the pods with the fewest links to the switches
 *     above them per host first, each pod's weakest leaves first;
 *   - for each split, the switches' sides are chosen optimally: the cut is
 *     a max flow (Dinic) from the first half's hosts to the second's over
 *     the switch links (each link 1 in either direction; a leaf takes as
 *     much from the source as it has first-half hosts, as much to the sink
 *     as it has second-half hosts: those are its host links).
 * The least cut found is an upper bound of the bisection (a real cut of
 * the fabric); on a complete fat tree without oversubscription it is
 * exactly floor(N / 2), the host links of one half, since such a tree
 * carries every permutation at full rate (so no split cuts fewer).
 *
 * Cost: one max flow per split over the plane's switches, O(E sqrt V) for
 * unit links; a few ms at 2,048 hosts. Pure: no globals, no logging.
 */
#include "config.h"
#include "routing/metrics.h"
#include "routing/metrics_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define RANK_NONE UINT32_MAX

struct bis {
	const struct sm_fabric *f;
	unsigned plane;
	uint32_t nsw, leaves;   /* switches of the plane, by rank (leaves first) */
	uint32_t *sw;           /* [nsw] node index */
	uint32_t *idx;          /* [n_nodes] index in sw, SM_NONE */
	uint32_t *rank;         /* [n_nodes] */
	uint32_t *hosts;        /* [nsw] hosts of a leaf (0 above) */
	uint32_t *up;           /* [nsw] links to the rank above */
	uint32_t *pod;          /* [nsw] pod (component of ranks 0 and 1) of a leaf, 0..npods */
	uint32_t npods;
	uint64_t n;             /* hosts of the plane */
	/* flow network: vertices 0..nsw-1 switches, nsw source, nsw + 1 sink */
	uint32_t nv, ne;
	uint32_t *head, *next, *to, *lvl, *it, *q, *stk;
	int32_t *cap, *cap0;
	uint32_t *src_e, *snk_e; /* [leaves] */
};

static void edge(struct bis *b, uint32_t a, uint32_t z, int32_t c, int32_t back)
{
	uint32_t e = b->ne;
	b->to[e] = z;
	b->cap0[e] = c;
	b->next[e] = b->head[a];
	b->head[a] = e;
	b->to[e + 1] = a;
	b->cap0[e + 1] = back;
	b->next[e + 1] = b->head[z];
	b->head[z] = e + 1;
	b->ne += 2;
}

/* One blocking flow's augmenting paths, depth first without recursion. */
static uint64_t push_all(struct bis *b)
{
	uint32_t src = b->nsw, snk = b->nsw + 1;
	uint64_t total = 0;

	for (;;) {
		uint32_t depth = 0, v = src;
		while (v != snk) {
			uint32_t e;
			for (e = b->it[v]; e != SM_NONE; e = b->next[e])
				if (b->cap[e] > 0 && b->lvl[b->to[e]] == b->lvl[v] + 1)
					break;
			b->it[v] = e;
			if (e == SM_NONE) {
				if (!depth)
					return total;
				b->lvl[v] = UINT32_MAX; /* dead end: never again in this phase */
				v = b->to[b->stk[--depth] ^ 1];
				continue;
			}
			b->stk[depth++] = e;
			v = b->to[e];
		}
		int32_t got = INT32_MAX;
		for (uint32_t i = 0; i < depth; i++)
			if (b->cap[b->stk[i]] < got)
				got = b->cap[b->stk[i]];
		for (uint32_t i = 0; i < depth; i++) {
			b->cap[b->stk[i]] -= got;
			b->cap[b->stk[i] ^ 1] += got;
		}
		total += (uint64_t)got;
	}
}

static uint64_t max_flow(struct bis *b)
{
	uint32_t src = b->nsw, snk = b->nsw + 1;
	uint64_t total = 0;

	for (;;) {
		for (uint32_t v = 0; v < b->nv; v++)
			b->lvl[v] = UINT32_MAX;
		uint32_t qh = 0, qt = 0;
		b->lvl[src] = 0;
		b->q[qt++] = src;
		while (qh < qt) {
			uint32_t v = b->q[qh++];
			for (uint32_t e = b->head[v]; e != SM_NONE; e = b->next[e])
				if (b->cap[e] > 0 && b->lvl[b->to[e]] == UINT32_MAX) {
					b->lvl[b->to[e]] = b->lvl[v] + 1;
					b->q[qt++] = b->to[e];
				}
		}
		if (b->lvl[snk] == UINT32_MAX)
			return total;
		for (uint32_t v = 0; v < b->nv; v++)
			b->it[v] = b->head[v];
		total += push_all(b);
	}
}

/*
 * The cut of the split that fills the first half with the leaves in
 * order[0 ..) (the last one taken in part). *first: the first leaf.
 */
static uint64_t split_cut(struct bis *b, const uint32_t *order)
{
	uint64_t want = b->n / 2;

	memcpy(b->cap, b->cap0, b->ne * sizeof(*b->cap));
	for (uint32_t k = 0; k < b->leaves; k++) {
		uint32_t l = order[k], a = 0;
		if (want) {
			a = b->hosts[l] < want ? b->hosts[l] : (uint32_t)want;
			want -= a;
		}
		b->cap[b->src_e[l]] = (int32_t)a;
		b->cap[b->snk_e[l]] = (int32_t)(b->hosts[l] - a);
	}
	return max_flow(b);
}

/* Orders of the leaves (indices 0 .. leaves-1 into sw); sorted by a key with ties in host order. */
struct key {
	uint64_t num, den; /* links / hosts, compared as fractions */
	uint32_t major;    /* pod rank (or 0) */
	uint32_t pos;      /* host order */
	uint32_t leaf;
};

static int cmp_key(const void *x, const void *y)
{
	const struct key *a = x, *c = y;
	if (a->major != c->major)
		return a->major < c->major ? -1 : 1;
	uint64_t l = a->num * c->den, r = c->num * a->den; /* links and hosts of one leaf or pod: small */
	if (l != r)
		return l < r ? -1 : 1;
	return a->pos < c->pos ? -1 : a->pos > c->pos;
}

static int setup(struct bis *b, uint32_t *pos)
{
	const struct sm_fabric *f = b->f;
	uint32_t nn = f->n_nodes;

	/* hosts: endpoint ports with a LID cabled to a switch of the plane, in canonical order */
	uint32_t np, *hp;
	int rc = sm_mx_host_ports(f, b->plane, &hp, &np);
	if (rc)
		return rc;
	b->n = 0;
	for (uint32_t n = 0; n < nn; n++) {
		b->idx[n] = SM_NONE;
		b->rank[n] = RANK_NONE;
	}
	for (uint32_t i = 0; i < np; i++) {
		uint32_t l = f->ports[hp[i]].peer_node;
		if (!sm_mx_is_sw(f, l, b->plane))
			continue;
		b->n++;
		if (b->idx[l] == SM_NONE) {
			b->idx[l] = b->leaves;
			b->rank[l] = 0;
			pos[b->leaves] = i;
			b->hosts[b->leaves] = 0;
			b->sw[b->leaves++] = l;
		}
		b->hosts[b->idx[l]]++;
	}
	free(hp);
	/* the other switches by rank: breadth first from the leaves */
	uint32_t top;
	b->nsw = sm_mx_rank_up(f, b->plane, b->rank, b->sw, b->leaves, &top);
	for (uint32_t k = b->leaves; k < b->nsw; k++) {
		b->idx[b->sw[k]] = k;
		b->hosts[k] = 0;
	}
	return 0;
}

static int build(struct bis *b)
{
	const struct sm_fabric *f = b->f;
	size_t links = 0;

	for (uint32_t k = 0; k < b->nsw; k++)
		links += f->nodes[b->sw[k]].nports;
	b->nv = b->nsw + 2;
	size_t me = links + 4 * (size_t)b->leaves + 2; /* each link seen from both ends: one arc pair */
	b->head = malloc(b->nv * sizeof(*b->head));
	b->lvl = malloc(b->nv * sizeof(*b->lvl));
	b->it = malloc(b->nv * sizeof(*b->it));
	b->q = malloc(b->nv * sizeof(*b->q));
	b->stk = malloc(b->nv * sizeof(*b->stk));
	b->next = malloc(me * sizeof(*b->next));
	b->to = malloc(me * sizeof(*b->to));
	b->cap = malloc(me * sizeof(*b->cap));
	b->cap0 = malloc(me * sizeof(*b->cap0));
	b->src_e = malloc(((size_t)b->leaves + 1) * sizeof(*b->src_e));
	b->snk_e = malloc(((size_t)b->leaves + 1) * sizeof(*b->snk_e));
	b->up = calloc((size_t)b->nsw + 1, sizeof(*b->up));
	b->pod = malloc(((size_t)b->nsw + 1) * sizeof(*b->pod));
	if (!b->head || !b->lvl || !b->it || !b->q || !b->stk || !b->next || !b->to || !b->cap || !b->cap0 ||
	    !b->src_e || !b->snk_e || !b->up || !b->pod)
		return -ENOMEM;
	for (uint32_t v = 0; v < b->nv; v++)
		b->head[v] = SM_NONE;
	for (uint32_t k = 0; k < b->nsw; k++) {
		uint32_t s = b->sw[k];
		for (unsigned p = 1; p <= f->nodes[s].nports; p++) {
			const struct sm_port *pt = sm_port(f, s, p);
			uint32_t q = pt->peer_node;
			if (!sm_mx_is_sw(f, q, b->plane) || b->idx[q] == SM_NONE)
				continue;
			if (b->rank[q] > b->rank[s])
				b->up[k]++;
			/* each cable once: from its lower node index (or lower port of a switch to itself) */
			if (q < s || (q == s && pt->peer_port <= p))
				continue;
			edge(b, k, b->idx[q], 1, 1);
		}
	}
	for (uint32_t k = 0; k < b->leaves; k++) {
		b->src_e[k] = b->ne;
		edge(b, b->nsw, k, 0, 0);
		b->snk_e[k] = b->ne;
		edge(b, k, b->nsw + 1, 0, 0);
	}
	return 0;
}

/* Pods: components of the ranks 0 and 1 switches; b->pod[leaf], b->npods. */
static void pods(struct bis *b, uint32_t *par)
{
	const struct sm_fabric *f = b->f;

	for (uint32_t k = 0; k < b->nsw; k++)
		par[k] = k;
	for (uint32_t k = 0; k < b->nsw; k++) {
		uint32_t s = b->sw[k];
		if (b->rank[s] > 1)
			continue;
		for (unsigned p = 1; p <= f->nodes[s].nports; p++) {
			uint32_t q = sm_port(f, s, p)->peer_node;
			if (!sm_mx_is_sw(f, q, b->plane) || b->idx[q] == SM_NONE || b->rank[q] > 1)
				continue;
			uint32_t x = sm_mx_find(par, k), y = sm_mx_find(par, b->idx[q]);
			if (x != y)
				par[x] = y;
		}
	}
	b->npods = 0;
	for (uint32_t k = 0; k < b->nsw; k++)
		b->pod[k] = SM_NONE;
	for (uint32_t k = 0; k < b->leaves; k++) {
		uint32_t r = sm_mx_find(par, k);
		if (b->pod[r] == SM_NONE)
			b->pod[r] = b->npods++;
		b->pod[k] = b->pod[r];
	}
}

static void consider(struct sm_bisection *out, uint64_t cut, const char *how, const struct bis *b,
		     const uint32_t *order)
{
	if (out->how && cut >= out->links)
		return;
	out->links = cut;
	out->how = how;
	out->first_leaf = b->sw[order[0]];
}

static int bisect(struct bis *b, struct sm_bisection *out)
{
	uint32_t *pos = malloc(((size_t)b->f->n_nodes + 1) * sizeof(*pos));
	int rc = pos ? setup(b, pos) : -ENOMEM;
	if (rc || b->n < 2 || b->leaves < 1) {
		free(pos);
		return rc;
	}
	out->hosts = (uint32_t)(b->n / 2);
	rc = build(b);
	struct key *kk = rc ? NULL : malloc(((size_t)b->leaves + 1) * sizeof(*kk));
	uint32_t *order = rc ? NULL : malloc(((size_t)b->nsw + 1) * sizeof(*order));
	if (!kk || !order) {
		free(pos);
		free(kk);
		free(order);
		return -ENOMEM;
	}
	/* host order */
	for (uint32_t k = 0; k < b->leaves; k++)
		order[k] = k; /* setup() numbered the leaves in host order */
	consider(out, split_cut(b, order), "host order", b, order);
	/* weakest leaves first */
	for (uint32_t k = 0; k < b->leaves; k++)
		kk[k] = (struct key){ b->up[k], b->hosts[k], 0, pos[k], k };
	qsort(kk, b->leaves, sizeof(*kk), cmp_key);
	for (uint32_t k = 0; k < b->leaves; k++)
		order[k] = kk[k].leaf;
	consider(out, split_cut(b, order), "weakest leaves", b, order);
	/* weakest pods first (their links up over their hosts), each pod's weakest leaves first */
	pods(b, order);
	if (b->npods > 1) {
		uint64_t *pl = calloc((size_t)b->npods, sizeof(*pl)), *ph = calloc((size_t)b->npods, sizeof(*ph));
		struct key *pk = malloc((size_t)b->npods * sizeof(*pk));
		uint32_t *prank = malloc((size_t)b->npods * sizeof(*prank));
		if (!pl || !ph || !pk || !prank) {
			rc = -ENOMEM;
		} else {
			/* a pod's links up: those of its rank-1 switches (order[] holds the union-find roots) */
			for (uint32_t k = b->leaves; k < b->nsw; k++)
				if (b->rank[b->sw[k]] == 1) {
					uint32_t r = sm_mx_find(order, k);
					if (b->pod[r] != SM_NONE)
						pl[b->pod[r]] += b->up[k];
				}
			for (uint32_t k = 0; k < b->leaves; k++)
				ph[b->pod[k]] += b->hosts[k];
			for (uint32_t i = 0; i < b->npods; i++)
				pk[i] = (struct key){ pl[i], ph[i] ? ph[i] : 1, 0, i, i };
			qsort(pk, b->npods, sizeof(*pk), cmp_key);
			for (uint32_t i = 0; i < b->npods; i++)
				prank[pk[i].leaf] = i;
			for (uint32_t k = 0; k < b->leaves; k++)
				kk[k] = (struct key){ b->up[k], b->hosts[k], prank[b->pod[k]], pos[k], k };
			qsort(kk, b->leaves, sizeof(*kk), cmp_key);
			for (uint32_t k = 0; k < b->leaves; k++)
				order[k] = kk[k].leaf;
			consider(out, split_cut(b, order), "weakest pods", b, order);
		}
		free(pl);
		free(ph);
		free(pk);
		free(prank);
	}
	free(pos);
	free(kk);
	free(order);
	return rc;
}

int sm_metrics_bisection(const struct sm_fabric *f, unsigned plane, struct sm_bisection *out)
{
	struct bis b = { .f = f, .plane = plane };
	size_t nn = (size_t)f->n_nodes + 1;

	memset(out, 0, sizeof(*out));
	out->first_leaf = SM_NONE;
	b.sw = malloc(nn * sizeof(*b.sw));
	b.idx = malloc(nn * sizeof(*b.idx));
	b.rank = malloc(nn * sizeof(*b.rank));
	b.hosts = malloc(nn * sizeof(*b.hosts));
	int rc = b.sw && b.idx && b.rank && b.hosts ? bisect(&b, out) : -ENOMEM;
	free(b.sw);
	free(b.idx);
	free(b.rank);
	free(b.hosts);
	free(b.head);
	free(b.lvl);
	free(b.it);
	free(b.q);
	free(b.stk);
	free(b.next);
	free(b.to);
	free(b.cap);
	free(b.cap0);
	free(b.src_e);
	free(b.snk_e);
	free(b.up);
	free(b.pod);
	return rc;
}
