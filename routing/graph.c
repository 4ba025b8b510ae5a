/* SPDX-License-Identifier: MIT */
/*
 * DOC: switch graph and balancer (see graph.h)
 *
 * sm_graph_build() makes a few passes over the fabric arrays: count the
 * switches and their switch links, fill the CSR adjacency (then sort each
 * switch's list by neighbour and port), label the physical parts with a BFS,
 * collect endpoint ports and destination LIDs. All arrays are sized from
 * counts first, so the build is O(nodes + ports + LIDs) with no regrowth.
 */
#include "config.h"
#include "routing/graph.h"

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
	uint64_t *cnt[2];        /* [adj index] routed sources per link, by destination type */
	uint32_t most;           /* most destinations delivered at one switch */
	uint32_t *inflow;        /* [n_sw * most] sources arriving at each switch, per destination */
	uint32_t *w;             /* [most] sources carried by the switch being decided */
	uint32_t *rank;          /* [most] alignment rank of each LID delivered at the destination */
	uint8_t *pinned;         /* [most] */
};

struct sm_balancer *sm_balancer_new(const struct sm_graph *g)
{
	struct sm_balancer *b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->g = g;
	size_t n = (size_t)g->adj_off[g->n_sw] + 1;
	b->cnt[0] = calloc(n, sizeof(uint64_t));
	b->cnt[1] = calloc(n, sizeof(uint64_t));
	b->most = 1;
	for (uint32_t s = 0; s < g->n_sw; s++)
		if (g->dest_off[s + 1] - g->dest_off[s] > b->most)
			b->most = g->dest_off[s + 1] - g->dest_off[s];
	b->pinned = calloc(b->most, 1);
	b->w = calloc(b->most, sizeof(uint32_t));
	b->rank = calloc(b->most, sizeof(uint32_t));
	b->inflow = calloc(((size_t)g->n_sw + 1) * b->most, sizeof(uint32_t));
	if (!b->cnt[0] || !b->cnt[1] || !b->pinned || !b->w || !b->rank || !b->inflow) {
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
	free(b->pinned);
	free(b->w);
	free(b->rank);
	free(b->inflow);
	free(b);
}

uint64_t sm_balancer_count(const struct sm_balancer *b, uint32_t link, int is_switch)
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

/*
 * The LIDs of one type delivered at one destination switch, seen from one
 * switch: how many carry traffic through it (m), the rank of the current
 * one among all of that type, and how many carrying ones each candidate
 * already got (cnt[i]).
 */
struct batch {
	uint32_t m, rank;
	uint16_t *cnt;
};

/*
 * Alignment: the candidate neighbours are numbered by slot from the lowest
 * one (by slot, not by position in the list, so a missing cable in the
 * middle does not shift the others), and a destination of rank r prefers
 * neighbour r modulo their span; key = distance from that neighbour.
 */
static uint32_t pick(struct sm_balancer *b, const uint32_t *cand, unsigned n, int is_switch, int parallel,
		     struct batch *bt, uint32_t w)
{
	const struct sm_graph *g = b->g;
	const uint64_t *ct = b->cnt[is_switch ? 1 : 0], *co = b->cnt[is_switch ? 0 : 1];
	if (!parallel) {
		/*
		 * One cable per neighbour. First spread the batch evenly over
		 * the candidates. Then, when the batch covers them all (a leaf
		 * of a fat tree seen from another leaf), prefer the aligned
		 * neighbour (see pin_aligned); a smaller batch goes to the
		 * cable carrying the fewest sources, alignment deciding ties.
		 */
		int aligned = bt->m >= n;
		uint32_t base = g->adj[cand[0]].peer, span = g->adj[cand[n - 1]].peer - base + 1;
		uint32_t rs = span - bt->rank % span;
		unsigned best = 0;
		uint32_t bkey = UINT32_MAX;  /* computed when a tie needs it */
		for (unsigned i = 1; i < n; i++) {
			uint32_t a = cand[i], z = cand[best];
			int better;
			if (w && bt->cnt[i] != bt->cnt[best]) {
				better = bt->cnt[i] < bt->cnt[best];
				if (better)
					bkey = UINT32_MAX;
			} else if ((!aligned || !w) && ct[a] != ct[z]) {
				better = ct[a] < ct[z];
				if (better)
					bkey = UINT32_MAX;
			} else {
				uint32_t key = (g->adj[a].peer - base + rs) % span;
				if (bkey == UINT32_MAX)
					bkey = (g->adj[z].peer - base + rs) % span;
				better = key < bkey;
				if (better)
					bkey = key;
			}
			if (better)
				best = i;
		}
		if (w)
			bt->cnt[best]++;
		b->cnt[is_switch ? 1 : 0][cand[best]] += w;
		return cand[best];
	}
	/*
	 * Parallel cables: candidates arrive sorted, so the cables to one
	 * neighbour are consecutive. Pick the neighbour with the fewest
	 * sources per cable, then its least used cable (the other type's
	 * load breaks ties between parallel cables only).
	 */
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
	uint32_t best = cand[best_lo];
	for (unsigned i = best_lo + 1; i < best_hi; i++) {
		uint32_t c = cand[i];
		if (ct[c] < ct[best] || (ct[c] == ct[best] && co[c] < co[best]))
			best = c;
	}
	b->cnt[is_switch ? 1 : 0][best] += w;
	return best;
}

uint32_t sm_balancer_pick(struct sm_balancer *b, uint32_t s, const uint32_t *cand, unsigned n,
			  int is_switch)
{
	(void)s;
	uint16_t cnt[SM_MAX_PORTS + 1] = { 0 };
	struct batch bt = { .m = 1, .rank = 0, .cnt = cnt };
	return pick(b, cand, n > SM_MAX_PORTS ? SM_MAX_PORTS : n, is_switch, has_parallel(b->g, cand, n), &bt,
		    1);
}

/*
 * When the carrying batch covers every candidate (m >= n), first give each
 * carrying destination its aligned neighbour if that is a candidate with
 * room left (an even share); the others then fill the gaps (pick).
 * Without this pass a missing cable would push every later rank one
 * neighbour further, and switches with different gaps would disagree.
 */
static void pin_aligned(const struct sm_graph *g, struct sm_balancer *b, uint32_t s, const uint32_t *c,
			unsigned n, uint32_t k0, uint32_t k1, const uint32_t *w, struct batch *bt,
			struct sm_lfts *l)
{
	uint32_t base = g->adj[c[0]].peer, span = g->adj[c[n - 1]].peer - base + 1;
	for (uint32_t k = k0; k < k1; k++) {
		const struct sm_graph_dest *dst = &g->dests[g->dest_idx[k]];
		struct batch *t = &bt[dst->is_switch];
		uint32_t r = b->rank[k - k0];
		if (dst->lid > l->top_lid || t->m < n || !w[k - k0])
			continue;
		/* candidates are sorted by neighbour: binary search for the aligned one */
		uint32_t want = base + r % span;
		unsigned lo = 0, hi = n;
		while (lo < hi) {
			unsigned mid = (lo + hi) / 2;
			if (g->adj[c[mid]].peer < want)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == n || g->adj[c[lo]].peer != want || t->cnt[lo] >= t->m / n)
			continue;
		t->cnt[lo]++;
		b->cnt[dst->is_switch][c[lo]] += w[k - k0];
		sm_lfts_row(l, s)[dst->lid] = g->adj[c[lo]].port;
		b->pinned[k - k0] = 1;
		b->inflow[(size_t)g->adj[c[lo]].peer * b->most + (k - k0)] += w[k - k0];
	}
}

/*
 * Alignment ranks of the LIDs delivered at d. Endpoint LID number k of
 * port j (of P endpoint ports at d, LMC ranges of 2^lmc LIDs) gets rank
 * k*P + (j + k*step) mod P with step = P / 2^lmc: the base LIDs take ranks
 * 0..P-1 (spread over all neighbours, as the hosts' main traffic uses
 * them), and the other LIDs of one port are shifted by `step` each, so
 * that a port's LMC paths leave by different neighbours. Switch LIDs are
 * ranked in LID order.
 */
static void set_ranks(const struct sm_graph *g, struct sm_balancer *b, uint32_t d)
{
	const struct sm_fabric *f = g->f;
	uint32_t k0 = g->dest_off[d], k1 = g->dest_off[d + 1], P = 0, j = 0, sw = 0, last = SM_NONE;
	for (uint32_t k = k0; k < k1; k++) {
		const struct sm_graph_dest *dst = &g->dests[g->dest_idx[k]];
		if (!dst->is_switch && dst->port != last) {
			P++;
			last = dst->port;
		}
	}
	last = SM_NONE;
	for (uint32_t k = k0; k < k1; k++) {
		const struct sm_graph_dest *dst = &g->dests[g->dest_idx[k]];
		if (dst->is_switch) {
			b->rank[k - k0] = sw++;
			continue;
		}
		if (last != SM_NONE && dst->port != last)
			j++;
		last = dst->port;
		const struct sm_port *pp = &f->ports[dst->port];
		uint32_t off = (uint32_t)(dst->lid - pp->lid), lids = 1u << pp->lmc;
		uint32_t step = P / lids ? P / lids : 1;
		b->rank[k - k0] = off * P + (j + off * step) % P;
	}
}

/* Endpoint sources at switch s for a destination (its own port excluded). */
static uint32_t sources_at(const struct sm_graph *g, uint32_t s, const struct sm_graph_dest *dst)
{
	uint32_t n = g->host_off[s + 1] - g->host_off[s];
	return !dst->is_switch && dst->sw == s && n ? n - 1 : n;
}

uint64_t sm_graph_assign(const struct sm_graph *g, struct sm_balancer *b, uint32_t d,
			 const uint32_t *cand_off, const uint32_t *cand, const uint32_t *order,
			 uint32_t n_order, struct sm_lfts *l)
{
	/*
	 * Switches from the farthest to the nearest: when s decides, every
	 * switch routing through it has decided, so the number of sources it
	 * carries for each destination (its weight) is known. Counting
	 * sources rather than LIDs per cable balances the traffic a cable
	 * really carries: an entry no endpoint route uses weighs nothing.
	 */
	uint64_t set = 0;
	uint32_t k0 = g->dest_off[d], k1 = g->dest_off[d + 1], nd = k1 - k0;
	uint32_t *w = b->w;
	uint8_t *drow = sm_lfts_row(l, d);
	for (uint32_t k = k0; k < k1; k++) {
		const struct sm_graph_dest *dst = &g->dests[g->dest_idx[k]];
		if (dst->lid <= l->top_lid)
			drow[dst->lid] = dst->out_port;
	}
	set_ranks(g, b, d);
	for (uint32_t o = 0; o < n_order; o++)
		memset(&b->inflow[(size_t)order[o] * b->most], 0, nd * sizeof(uint32_t));
	for (uint32_t o = 0; o < n_order; o++) {
		uint32_t s = order[o];
		uint8_t *row = sm_lfts_row(l, s);
		const uint32_t *c = &cand[cand_off[s]];
		unsigned n = cand_off[s + 1] - cand_off[s];
		if (s == d || !n)
			continue;
		uint32_t *in = &b->inflow[(size_t)s * b->most];
		uint32_t m[2] = { 0, 0 };
		for (uint32_t k = k0; k < k1; k++) {
			const struct sm_graph_dest *dst = &g->dests[g->dest_idx[k]];
			w[k - k0] = in[k - k0] + sources_at(g, s, dst);
			m[dst->is_switch] += w[k - k0] > 0;
		}
		int par = has_parallel(g, c, n);
		uint16_t bcnt[2][SM_MAX_PORTS + 1];
		struct batch bt[2] = { { .m = m[0], .cnt = bcnt[0] }, { .m = m[1], .cnt = bcnt[1] } };
		memset(bcnt, 0, sizeof(bcnt));
		memset(b->pinned, 0, nd);
		if (!par && n > 1)
			pin_aligned(g, b, s, c, n, k0, k1, w, bt, l);
		for (uint32_t k = k0; k < k1; k++) {
			const struct sm_graph_dest *dst = &g->dests[g->dest_idx[k]];
			struct batch *t = &bt[dst->is_switch];
			if (dst->lid > l->top_lid || b->pinned[k - k0]) {
				set += dst->lid <= l->top_lid;
				continue;
			}
			t->rank = b->rank[k - k0];
			uint32_t i = c[0];
			if (n > 1 && !w[k - k0])
				i = c[t->rank % n];  /* carries no endpoint traffic: any candidate, spread by rank */
			else if (n > 1)
				i = pick(b, c, n, dst->is_switch, par, t, w[k - k0]);
			else
				b->cnt[dst->is_switch ? 1 : 0][i] += w[k - k0];
			row[dst->lid] = g->adj[i].port;
			b->inflow[(size_t)g->adj[i].peer * b->most + (k - k0)] += w[k - k0];
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

void sm_graph_order_far_first(const struct sm_graph *g, const uint16_t *dist, uint32_t *order, uint32_t *tmp)
{
	/* counting sort on distance, SM_GRAPH_INF first, then decreasing */
	uint32_t top = 0;
	for (uint32_t s = 0; s < g->n_sw; s++)
		if (dist[s] != SM_GRAPH_INF && dist[s] > top)
			top = dist[s];
	/* bucket b: 0 = INF, 1 + (top - dist) otherwise; top < n_sw */
	memset(tmp, 0, ((size_t)top + 3) * sizeof(*tmp));
	for (uint32_t s = 0; s < g->n_sw; s++)
		tmp[1 + (dist[s] == SM_GRAPH_INF ? 0 : 1 + top - dist[s])]++;
	for (uint32_t i = 1; i < top + 3; i++)
		tmp[i] += tmp[i - 1];
	for (uint32_t s = 0; s < g->n_sw; s++)
		order[tmp[dist[s] == SM_GRAPH_INF ? 0 : 1 + top - dist[s]]++] = s;
}
