/* SPDX-License-Identifier: MIT */
#include "config.h"

/*
 * DOC: switch graph and balancer (see graph.h)
 *
 * sm_graph_build() makes a few passes over the fabric arrays: count the
 * switches and their switch links, fill the CSR adjacency (then sort each
 * switch's list by neighbour and port), label the physical parts with a BFS,
 * collect endpoint ports and destination LIDs. All arrays are sized from
 * counts first, so the build is O(nodes + ports + LIDs) with no regrowth.
 */
#include "graph.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is_endpoint(const struct sm_node *n)
{
	return n->type == SM_NODE_CA || n->type == SM_NODE_ROUTER;
}

static int link_cmp(const void *a, const void *b)
{
	const struct sm_graph_link *x = a, *y = b;
	if (x->peer != y->peer)
		return x->peer < y->peer ? -1 : 1;
	return (int)x->port - (int)y->port;
}

void sm_graph_free(struct sm_graph *g)
{
	if (!g)
		return;
	free(g->sw_node);
	free(g->slot_of_node);
	free(g->adj_off);
	free(g->adj);
	free(g->comp);
	free(g->hosts);
	free(g->host_off);
	free(g->host_idx);
	free(g->dests);
	free(g->dest_off);
	free(g->dest_idx);
	free(g);
}

/* Fill adjacency; the caller has allocated adj_off and adj from counts. */
static void fill_adj(struct sm_graph *g)
{
	const struct sm_fabric *f = g->f;
	uint32_t k = 0;
	for (uint32_t s = 0; s < g->n_sw; s++) {
		const struct sm_node *n = &f->nodes[g->sw_node[s]];
		g->adj_off[s] = k;
		for (unsigned p = 1; p <= n->nports; p++) {
			const struct sm_port *pp = &f->ports[n->port0 + p];
			if (pp->peer_node == SM_NONE)
				continue;
			uint32_t ps = g->slot_of_node[pp->peer_node];
			if (ps == SM_NONE || ps == s)
				continue;  /* endpoint, or a cable looping back to the same switch */
			g->adj[k].peer = ps;
			g->adj[k].port = (uint8_t)p;
			g->adj[k].peer_port = pp->peer_port;
			k++;
		}
		qsort(&g->adj[g->adj_off[s]], k - g->adj_off[s], sizeof(*g->adj), link_cmp);
	}
	g->adj_off[g->n_sw] = k;
}

static int label_parts(struct sm_graph *g)
{
	uint32_t *queue = malloc(((size_t)g->n_sw + 1) * sizeof(*queue));
	if (!queue)
		return -ENOMEM;
	for (uint32_t s = 0; s < g->n_sw; s++)
		g->comp[s] = SM_NONE;
	g->n_comp = 0;
	for (uint32_t s = 0; s < g->n_sw; s++) {
		if (g->comp[s] != SM_NONE)
			continue;
		uint32_t c = g->n_comp++, head = 0, tail = 0;
		g->comp[s] = c;
		queue[tail++] = s;
		while (head < tail) {
			uint32_t u = queue[head++];
			for (uint32_t i = g->adj_off[u]; i < g->adj_off[u + 1]; i++) {
				uint32_t v = g->adj[i].peer;
				if (g->comp[v] == SM_NONE) {
					g->comp[v] = c;
					queue[tail++] = v;
				}
			}
		}
	}
	free(queue);
	return 0;
}

/* Endpoint ports with a LID, cabled to a switch of the plane. */
static int collect_hosts(struct sm_graph *g)
{
	const struct sm_fabric *f = g->f;
	uint32_t n = 0;
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < f->n_nodes; i++) {
			const struct sm_node *nd = &f->nodes[i];
			if (nd->plane != g->plane || !is_endpoint(nd))
				continue;
			for (unsigned p = 1; p <= nd->nports; p++) {
				const struct sm_port *pp = &f->ports[nd->port0 + p];
				if (!pp->lid || pp->peer_node == SM_NONE)
					continue;
				uint32_t s = g->slot_of_node[pp->peer_node];
				if (s == SM_NONE)
					continue;
				if (pass) {
					g->hosts[n].port = nd->port0 + p;
					g->hosts[n].sw = s;
					g->hosts[n].sw_port = pp->peer_port;
					g->host_off[s + 1]++;
				}
				n++;
			}
		}
		if (!pass) {
			g->n_hosts = n;
			g->hosts = malloc(((size_t)n + 1) * sizeof(*g->hosts));
			g->host_idx = malloc(((size_t)n + 1) * sizeof(*g->host_idx));
			if (!g->hosts || !g->host_idx)
				return -ENOMEM;
			n = 0;
		}
	}
	for (uint32_t s = 0; s < g->n_sw; s++)
		g->host_off[s + 1] += g->host_off[s];
	uint32_t *fill = calloc((size_t)g->n_sw + 1, sizeof(*fill));
	if (!fill)
		return -ENOMEM;
	for (uint32_t h = 0; h < g->n_hosts; h++) {
		uint32_t s = g->hosts[h].sw;
		g->host_idx[g->host_off[s] + fill[s]++] = h;
	}
	free(fill);
	return 0;
}

static int collect_dests(struct sm_graph *g)
{
	const struct sm_fabric *f = g->f;
	const struct sm_plane *pl = &f->planes[g->plane];
	uint32_t n = 0;
	if (pl->lid_map)
		for (uint32_t lid = 1; lid <= pl->max_lid && lid <= SM_UNICAST_LID_MAX; lid++)
			if (pl->lid_map[lid] != SM_NONE)
				n++;
	g->n_dests = n;
	g->dests = malloc(((size_t)n + 1) * sizeof(*g->dests));
	g->dest_idx = malloc(((size_t)n + 1) * sizeof(*g->dest_idx));
	uint32_t *fill = calloc((size_t)g->n_sw + 1, sizeof(*fill));
	if (!g->dests || !g->dest_idx || !fill) {
		free(fill);
		return -ENOMEM;
	}
	n = 0;
	for (uint32_t lid = 1; pl->lid_map && lid <= pl->max_lid && lid <= SM_UNICAST_LID_MAX; lid++) {
		uint32_t pi = pl->lid_map[lid];
		if (pi == SM_NONE)
			continue;
		struct sm_graph_dest *d = &g->dests[n++];
		const struct sm_port *pp = &f->ports[pi];
		d->lid = (uint16_t)lid;
		d->port = pi;
		d->sw = SM_NONE;
		d->out_port = 0;
		d->is_switch = 0;
		uint32_t slot = g->slot_of_node[pp->node];
		if (slot != SM_NONE) {
			d->is_switch = 1;
			d->sw = slot;
		} else if (pp->peer_node != SM_NONE && g->slot_of_node[pp->peer_node] != SM_NONE) {
			d->sw = g->slot_of_node[pp->peer_node];
			d->out_port = pp->peer_port;
		}
		if (d->sw != SM_NONE)
			g->dest_off[d->sw + 1]++;
	}
	for (uint32_t s = 0; s < g->n_sw; s++)
		g->dest_off[s + 1] += g->dest_off[s];
	for (uint32_t i = 0; i < g->n_dests; i++) {
		uint32_t s = g->dests[i].sw;
		if (s != SM_NONE)
			g->dest_idx[g->dest_off[s] + fill[s]++] = i;
	}
	free(fill);
	return 0;
}

int sm_graph_build(const struct sm_fabric *f, unsigned plane, struct sm_graph **out)
{
	*out = NULL;
	if (plane >= SM_MAX_PLANES)
		return -EINVAL;
	struct sm_graph *g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->f = f;
	g->plane = plane;
	g->slot_of_node = malloc(((size_t)f->n_nodes + 1) * sizeof(*g->slot_of_node));
	if (!g->slot_of_node)
		goto nomem;
	size_t n_links = 0;
	for (uint32_t i = 0; i < f->n_nodes; i++) {
		const struct sm_node *n = &f->nodes[i];
		g->slot_of_node[i] = SM_NONE;
		if (n->type != SM_NODE_SWITCH || n->plane != plane)
			continue;
		g->slot_of_node[i] = g->n_sw++;
		if (n->nports > g->max_ports)
			g->max_ports = n->nports;
		for (unsigned p = 1; p <= n->nports; p++) {
			uint32_t peer = f->ports[n->port0 + p].peer_node;
			if (peer != SM_NONE && f->nodes[peer].type == SM_NODE_SWITCH)
				n_links++;
		}
	}
	g->sw_node = malloc(((size_t)g->n_sw + 1) * sizeof(*g->sw_node));
	g->adj_off = malloc(((size_t)g->n_sw + 1) * sizeof(*g->adj_off));
	g->adj = malloc((n_links + 1) * sizeof(*g->adj));
	g->comp = malloc(((size_t)g->n_sw + 1) * sizeof(*g->comp));
	g->host_off = calloc((size_t)g->n_sw + 2, sizeof(*g->host_off));
	g->dest_off = calloc((size_t)g->n_sw + 2, sizeof(*g->dest_off));
	if (!g->sw_node || !g->adj_off || !g->adj || !g->comp || !g->host_off || !g->dest_off)
		goto nomem;
	for (uint32_t i = 0; i < f->n_nodes; i++)
		if (g->slot_of_node[i] != SM_NONE)
			g->sw_node[g->slot_of_node[i]] = i;
	fill_adj(g);
	if (label_parts(g) || collect_hosts(g) || collect_dests(g))
		goto nomem;
	*out = g;
	return 0;
nomem:
	sm_graph_free(g);
	return -ENOMEM;
}

void sm_graph_bfs(const struct sm_graph *g, uint32_t src, uint16_t *dist, uint32_t *queue)
{
	for (uint32_t s = 0; s < g->n_sw; s++)
		dist[s] = SM_GRAPH_INF;
	uint32_t head = 0, tail = 0;
	dist[src] = 0;
	queue[tail++] = src;
	while (head < tail) {
		uint32_t u = queue[head++];
		uint16_t du = dist[u];
		for (uint32_t i = g->adj_off[u]; i < g->adj_off[u + 1]; i++) {
			uint32_t v = g->adj[i].peer;
			if (dist[v] == SM_GRAPH_INF) {
				dist[v] = (uint16_t)(du + 1);
				queue[tail++] = v;
			}
		}
	}
}

struct sm_balancer {
	const struct sm_graph *g;
	uint32_t *cnt[2];        /* [adj index] routes per link, by destination type */
};

struct sm_balancer *sm_balancer_new(const struct sm_graph *g)
{
	struct sm_balancer *b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->g = g;
	size_t n = (size_t)g->adj_off[g->n_sw] + 1;
	b->cnt[0] = calloc(n, sizeof(uint32_t));
	b->cnt[1] = calloc(n, sizeof(uint32_t));
	if (!b->cnt[0] || !b->cnt[1]) {
		sm_balancer_free(b);
		return NULL;
	}
	return b;
}

void sm_balancer_free(struct sm_balancer *b)
{
	if (!b)
		return;
	free(b->cnt[0]);
	free(b->cnt[1]);
	free(b);
}

uint32_t sm_balancer_count(const struct sm_balancer *b, uint32_t link, int is_switch)
{
	return b->cnt[is_switch ? 1 : 0][link];
}

/* a/na < b/nb without division. */
static int ratio_less(uint64_t a, uint64_t na, uint64_t b, uint64_t nb)
{
	return a * nb < b * na;
}

static int has_parallel(const struct sm_graph *g, const uint32_t *cand, unsigned n)
{
	for (unsigned i = 1; i < n; i++)
		if (g->adj[cand[i]].peer == g->adj[cand[i - 1]].peer)
			return 1;
	return 0;
}

static uint32_t pick(struct sm_balancer *b, uint32_t s, const uint32_t *cand, unsigned n, int is_switch,
		     int parallel, uint32_t rank)
{
	const struct sm_graph *g = b->g;
	const uint32_t *ct = b->cnt[is_switch ? 1 : 0], *co = b->cnt[is_switch ? 0 : 1];
	/*
	 * Candidates arrive sorted, so links to one neighbour are consecutive.
	 * Neighbour load counts every link to that neighbour (all of them lead
	 * one hop closer if one does), normalised per link.
	 */
	if (!parallel) {
		/*
		 * One cable per neighbour: the least used cable. Ties go to the
		 * cable whose position among s's cables comes first counting
		 * from the destination's rank, so that every switch sends the
		 * r-th destination of a remote switch the same way when it can
		 * (on a fat tree: host r of every leaf over spine r, which keeps
		 * shift permutations free of congestion even where a few cables
		 * are missing and the counters of the leaves differ).
		 */
		uint32_t deg = g->adj_off[s + 1] - g->adj_off[s], off = deg ? rank % deg : 0;
		unsigned best = 0;
		uint32_t bkey = (cand[0] - g->adj_off[s] + deg - off) % (deg ? deg : 1);
		for (unsigned i = 1; i < n; i++) {
			uint32_t key = (cand[i] - g->adj_off[s] + deg - off) % deg;
			if (ct[cand[i]] < ct[cand[best]] || (ct[cand[i]] == ct[cand[best]] && key < bkey)) {
				best = i;
				bkey = key;
			}
		}
		b->cnt[is_switch ? 1 : 0][cand[best]]++;
		return cand[best];
	}
	unsigned best_lo = 0, best_hi = 0;
	uint64_t best_load = 0, best_links = 0;
	for (unsigned i = 0; i < n;) {
		unsigned j = i;
		uint64_t load = 0;
		while (j < n && g->adj[cand[j]].peer == g->adj[cand[i]].peer)
			load += ct[cand[j++]];
		uint64_t links = j - i;
		if (i == 0 || ratio_less(load, links, best_load, best_links)) {
			best_lo = i;
			best_hi = j;
			best_load = load;
			best_links = links;
		}
		i = j;
	}
	/*
	 * Ties go to the lowest index on purpose: on a full fat tree every leaf
	 * then sends host j of each remote leaf over the same spine, which makes
	 * shift permutations congestion-free. The other type's counts would
	 * break that alignment, so they only decide between parallel links.
	 */
	uint32_t best = cand[best_lo];
	for (unsigned i = best_lo + 1; i < best_hi; i++) {
		uint32_t c = cand[i];
		if (ct[c] < ct[best] || (ct[c] == ct[best] && co[c] < co[best]))
			best = c;
	}
	b->cnt[is_switch ? 1 : 0][best]++;
	return best;
}

uint32_t sm_balancer_pick(struct sm_balancer *b, uint32_t s, const uint32_t *cand, unsigned n,
			  int is_switch)
{
	(void)s;
	return pick(b, s, cand, n, is_switch, has_parallel(b->g, cand, n), 0);
}

uint64_t sm_graph_assign(const struct sm_graph *g, struct sm_balancer *b, uint32_t d,
			 const uint32_t *cand_off, const uint32_t *cand, struct sm_lfts *l)
{
	/*
	 * Switch by switch, LIDs inner: the balancer state of one switch is
	 * independent of the others, so this gives the same choices as LID by
	 * LID, with row-local writes and the candidate list examined once.
	 */
	uint64_t set = 0;
	uint32_t k0 = g->dest_off[d], k1 = g->dest_off[d + 1];
	for (uint32_t s = 0; s < g->n_sw; s++) {
		uint8_t *row = sm_lfts_row(l, s);
		const uint32_t *c = &cand[cand_off[s]];
		unsigned n = cand_off[s + 1] - cand_off[s];
		if (s == d) {
			for (uint32_t k = k0; k < k1; k++) {
				const struct sm_graph_dest *dst = &g->dests[g->dest_idx[k]];
				if (dst->lid <= l->top_lid)
					row[dst->lid] = dst->out_port;
			}
			continue;
		}
		if (!n)
			continue;
		int par = has_parallel(g, c, n);
		uint32_t rank[2] = { 0, 0 };
		for (uint32_t k = k0; k < k1; k++) {
			const struct sm_graph_dest *dst = &g->dests[g->dest_idx[k]];
			if (dst->lid > l->top_lid)
				continue;
			uint32_t r = rank[dst->is_switch]++;
			uint32_t i = n == 1 ? c[0] : pick(b, s, c, n, dst->is_switch, par, r);
			if (n == 1)
				b->cnt[dst->is_switch ? 1 : 0][i]++;
			row[dst->lid] = g->adj[i].port;
			set++;
		}
	}
	return set;
}

int sm_route_note_unreached(const struct sm_graph *g, uint64_t unreached, char *msg, size_t len)
{
	uint32_t unroutable = 0;
	for (uint32_t i = 0; i < g->n_dests; i++)
		if (g->dests[i].sw == SM_NONE)
			unroutable++;
	if (g->n_dests && unroutable == g->n_dests) {
		snprintf(msg, len, "none of the %u LIDs of the plane belongs to a switch or a port cabled to one",
			 g->n_dests);
		return -ENETUNREACH;
	}
	if (unreached || unroutable)
		snprintf(msg, len,
			 "%llu (switch, LID) entries left unrouted: destination in another physical part "
			 "(%u parts); %u LIDs on ports not cabled to a switch",
			 (unsigned long long)unreached, g->n_comp, unroutable);
	return 0;
}
