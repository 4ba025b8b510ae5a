/* SPDX-License-Identifier: MIT */
/*
 * DOC: multicast spanning trees (routing/mcast.h): root choice, branches,
 * forwarding masks. Hop counts come from BFS rows of the switch graph
 * (routing/graph.h), computed once per switch that needs one (a member's
 * switch or a root) and shared by every group.
 */
#include "routing/mcast.h"
#include "routing/graph.h"
#include "lib/mix.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mc_memb {
	uint32_t slot;      /* switch the member is cabled to (or is) */
	uint8_t port;       /* that switch's port toward it (0: the switch itself) */
	uint8_t recv;
	uint8_t ca;         /* 1: one hop beyond the switch */
};

struct mc_ctx {
	const struct sm_fabric *f;
	const struct sm_graph *g;
	struct sm_mfts *out;
	uint16_t **dist;    /* [n_sw] BFS rows, NULL until needed */
	uint32_t *queue;    /* [n_sw] BFS scratch */
	/* per group scratch, by slot: stamps say "set in the current group" */
	uint32_t stamp;
	uint32_t *mstamp;   /* member switch */
	uint8_t *hasca;     /* ... with a CA member behind it */
	uint32_t *tstamp;   /* in the tree */
	uint32_t *bstamp;   /* a receiver at or below it */
	uint32_t *plink;    /* adj index toward the parent (tree switches but the root) */
	uint16_t *ecc;      /* largest hop count to a member */
	uint32_t *msw;      /* member switches */
	uint32_t *tree;     /* tree switches */
	uint32_t *cand;
	struct mc_memb *memb;
	uint32_t cap_memb;
};

static const uint16_t *dist_row(struct mc_ctx *c, uint32_t slot)
{
	if (!c->dist[slot]) {
		c->dist[slot] = malloc((size_t)c->g->n_sw * sizeof(uint16_t));
		if (!c->dist[slot])
			return NULL;
		sm_graph_bfs(c->g, slot, c->dist[slot], c->queue);
	}
	return c->dist[slot];
}

static void set_bit(struct mc_ctx *c, uint32_t slot, uint32_t off, unsigned port)
{
	c->out->mask[(size_t)slot * c->out->n_mlids + off][port >> 6] |= 1ULL << (port & 63);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* The members of g that are in the plane, as (switch, port); skipped ones counted. */
static int collect(struct mc_ctx *c, unsigned plane, const struct sm_mcast_group *g, uint32_t *n_out,
		   uint32_t *n_recv)
{
	const struct sm_fabric *f = c->f;
	uint32_t k = 0, r = 0;

	if (g->n > c->cap_memb) {
		struct mc_memb *p = realloc(c->memb, g->n * sizeof(*p));
		if (!p)
			return -ENOMEM;
		c->memb = p;
		c->cap_memb = g->n;
	}
	for (uint32_t i = 0; i < g->n; i++) {
		uint32_t pi = g->m[i].port, slot = SM_NONE;
		uint8_t port = 0, ca = 0;
		if (pi < f->n_ports) {
			const struct sm_port *p = &f->ports[pi];
			const struct sm_node *nd = &f->nodes[p->node];
			if (nd->plane != plane) {
				slot = SM_NONE;
			} else if (nd->type == SM_NODE_SWITCH) {
				slot = p->num == 0 ? c->g->slot_of_node[p->node] : SM_NONE;
			} else if (p->peer_node != SM_NONE) {
				slot = c->g->slot_of_node[p->peer_node];
				port = p->peer_port;
				ca = 1;
			}
		}
		if (slot == SM_NONE) {
			c->out->skipped++;
			continue;
		}
		c->memb[k++] = (struct mc_memb){ .slot = slot, .port = port, .recv = g->m[i].recv ? 1 : 0, .ca = ca };
		r += g->m[i].recv ? 1 : 0;
	}
	*n_out = k;
	*n_recv = r;
	return 0;
}

/* Keep the members in the part of the fabric of the first one; the member switches into c->msw (sorted). */
static int member_switches(struct mc_ctx *c, uint32_t *n_memb, uint32_t *n_msw, uint32_t *n_recv)
{
	const uint16_t *d0 = dist_row(c, c->memb[0].slot);
	uint32_t k = 0, m = 0, r = 0;

	if (!d0)
		return -ENOMEM;
	for (uint32_t i = 0; i < *n_memb; i++) {
		struct mc_memb e = c->memb[i];
		if (d0[e.slot] == SM_GRAPH_INF) {
			c->out->skipped++;
			continue;
		}
		c->memb[k++] = e;
		r += e.recv;
		if (c->mstamp[e.slot] != c->stamp) {
			c->mstamp[e.slot] = c->stamp;
			c->hasca[e.slot] = 0;
			c->msw[m++] = e.slot;
		}
		c->hasca[e.slot] |= e.ca;
	}
	qsort(c->msw, m, sizeof(*c->msw), cmp_u32);
	*n_memb = k;
	*n_msw = m;
	*n_recv = r;
	return 0;
}

/* The root: the ((mlid - first) mod count)-th switch of least eccentricity. SM_NONE on ENOMEM. */
static uint32_t pick_root(struct mc_ctx *c, uint16_t mlid, uint32_t n_msw)
{
	uint32_t n_sw = c->g->n_sw, nc = 0;
	uint16_t best = SM_GRAPH_INF;

	memset(c->ecc, 0, n_sw * sizeof(*c->ecc));
	for (uint32_t i = 0; i < n_msw; i++) {
		const uint16_t *d = dist_row(c, c->msw[i]);
		uint16_t extra = c->hasca[c->msw[i]];
		if (!d)
			return SM_NONE;
		for (uint32_t s = 0; s < n_sw; s++) {
			uint16_t h = d[s] == SM_GRAPH_INF ? SM_GRAPH_INF : (uint16_t)(d[s] + extra);
			if (h > c->ecc[s])
				c->ecc[s] = h;
		}
	}
	for (uint32_t s = 0; s < n_sw; s++) {
		if (c->ecc[s] < best) {
			best = c->ecc[s];
			nc = 0;
		}
		if (c->ecc[s] == best && best != SM_GRAPH_INF)
			c->cand[nc++] = s;
	}
	/* members all in one part (member_switches): the first member's switch at least qualifies */
	return nc ? c->cand[(mlid - SM_MCAST_MLID_FIRST) % nc] : c->msw[0];
}

/* Branches from every member switch toward root; c->tree gets the tree switches. */
static uint32_t grow_tree(struct mc_ctx *c, uint16_t mlid, uint32_t root, const uint16_t *dr, uint32_t n_msw)
{
	const struct sm_graph *g = c->g;
	uint32_t nt = 0;

	c->tstamp[root] = c->stamp;
	c->tree[nt++] = root;
	for (uint32_t i = 0; i < n_msw; i++) {
		for (uint32_t cur = c->msw[i]; c->tstamp[cur] != c->stamp;) {
			uint32_t k = 0;
			c->tstamp[cur] = c->stamp;
			c->tree[nt++] = cur;
			for (uint32_t a = g->adj_off[cur]; a < g->adj_off[cur + 1]; a++)
				if (dr[g->adj[a].peer] + 1 == dr[cur])
					c->cand[k++] = a;
			/* dr[cur] > 0 and finite: some neighbour is one hop nearer the root */
			uint64_t h = sm_mix64(c->f->nodes[g->sw_node[cur]].guid ^ ((uint64_t)mlid << 48));
			c->plink[cur] = c->cand[h % k];
			cur = g->adj[c->plink[cur]].peer;
		}
	}
	return nt;
}

static int route_group(struct mc_ctx *c, unsigned plane, const struct sm_mcast_group *g)
{
	const struct sm_graph *gr = c->g;
	uint32_t off = g->mlid - SM_MCAST_MLID_FIRST, n_memb, n_recv, n_msw;
	int rc;

	c->stamp++;
	rc = collect(c, plane, g, &n_memb, &n_recv);
	if (rc || n_memb < 2 || !n_recv)
		return rc;
	rc = member_switches(c, &n_memb, &n_msw, &n_recv);
	if (rc || n_memb < 2 || !n_recv)
		return rc;
	uint32_t root = pick_root(c, g->mlid, n_msw);
	const uint16_t *dr = root != SM_NONE ? dist_row(c, root) : NULL;
	if (!dr)
		return -ENOMEM;
	uint32_t nt = grow_tree(c, g->mlid, root, dr, n_msw);
	unsigned depth = 0;
	for (uint32_t i = 0; i < n_memb; i++) {
		const struct mc_memb *e = &c->memb[i];
		if (dr[e->slot] + e->ca > depth)
			depth = dr[e->slot] + e->ca;
		if (!e->recv)
			continue;
		set_bit(c, e->slot, off, e->port);
		for (uint32_t s = e->slot; s != root && c->bstamp[s] != c->stamp; s = gr->adj[c->plink[s]].peer)
			c->bstamp[s] = c->stamp;
	}
	for (uint32_t i = 1; i < nt; i++) {
		uint32_t s = c->tree[i];
		const struct sm_graph_link *l = &gr->adj[c->plink[s]];
		set_bit(c, s, off, l->port);             /* up: everything below has a sender */
		if (c->bstamp[s] == c->stamp)
			set_bit(c, l->peer, off, l->peer_port);   /* down: only toward receivers */
	}
	c->out->root[off] = gr->sw_node[root];
	c->out->depth[off] = (uint8_t)(depth > 255 ? 255 : depth);
	c->out->n_groups++;
	return 0;
}

static struct sm_mfts *mfts_alloc(const struct sm_fabric *f, const struct sm_graph *g, uint32_t n_mlids)
{
	struct sm_mfts *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->n_nodes = f->n_nodes;
	m->n_rows = g->n_sw;
	m->n_mlids = n_mlids;
	m->row = malloc(((size_t)f->n_nodes + 1) * sizeof(*m->row));
	m->row_node = malloc(((size_t)g->n_sw + 1) * sizeof(*m->row_node));
	m->mask = calloc((size_t)g->n_sw * n_mlids + 1, sizeof(*m->mask));
	m->root = malloc(((size_t)n_mlids + 1) * sizeof(*m->root));
	m->depth = calloc((size_t)n_mlids + 1, 1);
	if (!m->row || !m->row_node || !m->mask || !m->root || !m->depth) {
		sm_mfts_free(m);
		return NULL;
	}
	for (uint32_t n = 0; n < f->n_nodes; n++)
		m->row[n] = g->slot_of_node[n];
	memcpy(m->row_node, g->sw_node, (size_t)g->n_sw * sizeof(*m->row_node));
	for (uint32_t i = 0; i < n_mlids; i++)
		m->root[i] = SM_NONE;
	return m;
}

static int ctx_init(struct mc_ctx *c, uint32_t n_sw)
{
	size_t n = (size_t)n_sw + 1;
	c->dist = calloc(n, sizeof(*c->dist));
	c->queue = malloc(n * sizeof(uint32_t));
	c->mstamp = calloc(n, sizeof(uint32_t));
	c->hasca = calloc(n, 1);
	c->tstamp = calloc(n, sizeof(uint32_t));
	c->bstamp = calloc(n, sizeof(uint32_t));
	c->plink = malloc(n * sizeof(uint32_t));
	c->ecc = malloc(n * sizeof(uint16_t));
	c->msw = malloc(n * sizeof(uint32_t));
	c->tree = malloc(n * sizeof(uint32_t));
	/* candidates: switches, or the links of one switch */
	c->cand = malloc((n > SM_MAX_PORTS + 1 ? n : SM_MAX_PORTS + 1) * sizeof(uint32_t));
	return c->dist && c->queue && c->mstamp && c->hasca && c->tstamp && c->bstamp && c->plink && c->ecc &&
	       c->msw && c->tree && c->cand ? 0 : -ENOMEM;
}

static void ctx_free(struct mc_ctx *c)
{
	for (uint32_t s = 0; c->dist && c->g && s < c->g->n_sw; s++)
		free(c->dist[s]);
	free(c->dist);
	free(c->queue);
	free(c->mstamp);
	free(c->hasca);
	free(c->tstamp);
	free(c->bstamp);
	free(c->plink);
	free(c->ecc);
	free(c->msw);
	free(c->tree);
	free(c->cand);
	free(c->memb);
}

/* Group g's tree as prev has it (same fabric). */
static void copy_group(struct sm_mfts *m, const struct sm_mfts *prev, uint16_t mlid)
{
	uint32_t off = mlid - SM_MCAST_MLID_FIRST;
	if (off >= prev->n_mlids)
		return;
	for (uint32_t r = 0; r < m->n_rows; r++)
		memcpy(m->mask[(size_t)r * m->n_mlids + off], prev->mask[(size_t)r * prev->n_mlids + off],
		       sizeof(m->mask[0]));
	m->root[off] = prev->root[off];
	m->depth[off] = prev->depth[off];
	m->n_groups += prev->root[off] != SM_NONE;
}

int sm_mcast_route(const struct sm_fabric *f, unsigned plane, const struct sm_mcast_group *g, size_t n,
		   struct sm_mfts **out, char *err, size_t errlen)
{
	return sm_mcast_route_from(f, plane, g, n, NULL, out, err, errlen);
}

int sm_mcast_route_from(const struct sm_fabric *f, unsigned plane, const struct sm_mcast_group *g, size_t n,
			const struct sm_mfts *prev, struct sm_mfts **out, char *err, size_t errlen)
{
	struct mc_ctx c = { .f = f };
	struct sm_graph *gr = NULL;
	uint32_t n_mlids = 0;
	uint8_t *seen = NULL;
	int rc;

	*out = NULL;
	for (size_t i = 0; i < n; i++) {
		if (g[i].mlid < SM_MCAST_MLID_FIRST || g[i].mlid == 0xFFFF) {
			snprintf(err, errlen, "multicast group %zu: MLID 0x%04x is not a multicast LID", i, g[i].mlid);
			return -EINVAL;
		}
		if ((uint32_t)(g[i].mlid - SM_MCAST_MLID_FIRST) + 1 > n_mlids)
			n_mlids = g[i].mlid - SM_MCAST_MLID_FIRST + 1u;
	}
	rc = sm_graph_build(f, plane, &gr);
	if (rc) {
		snprintf(err, errlen, "multicast: cannot build the switch graph of plane %u: %s", plane, strerror(-rc));
		return rc;
	}
	c.g = gr;
	c.out = mfts_alloc(f, gr, n_mlids);
	if (prev && (prev->n_nodes != f->n_nodes || prev->n_rows != gr->n_sw ||
		     memcmp(prev->row_node, gr->sw_node, (size_t)gr->n_sw * sizeof(*gr->sw_node))))
		prev = NULL;   /* another fabric: route everything */
	seen = calloc((size_t)n_mlids + 1, 1);
	rc = c.out && seen ? ctx_init(&c, gr->n_sw) : -ENOMEM;
	for (size_t i = 0; i < n && !rc; i++) {
		uint32_t off = g[i].mlid - SM_MCAST_MLID_FIRST;
		if (seen[off]++) {
			snprintf(err, errlen, "multicast: MLID 0x%04x given to two groups", g[i].mlid);
			rc = -EINVAL;
			break;
		}
		if (g[i].keep && prev)
			copy_group(c.out, prev, g[i].mlid);
		else
			rc = route_group(&c, plane, &g[i]);
	}
	if (rc == -ENOMEM)
		snprintf(err, errlen, "multicast: out of memory");
	if (!rc) {
		*out = c.out;
		c.out = NULL;
	}
	ctx_free(&c);
	sm_mfts_free(c.out);
	sm_graph_free(gr);
	free(seen);
	return rc;
}

void sm_mfts_free(struct sm_mfts *m)
{
	if (!m)
		return;
	free(m->row);
	free(m->row_node);
	free(m->mask);
	free(m->root);
	free(m->depth);
	free(m);
}

uint32_t sm_mfts_root_counts(const struct sm_mfts *m, uint32_t *counts)
{
	uint32_t used = 0;
	memset(counts, 0, (size_t)m->n_rows * sizeof(*counts));
	for (uint32_t i = 0; i < m->n_mlids; i++) {
		if (m->root[i] == SM_NONE || m->root[i] >= m->n_nodes || m->row[m->root[i]] == SM_NONE)
			continue;
		used += counts[m->row[m->root[i]]]++ == 0;
	}
	return used;
}
