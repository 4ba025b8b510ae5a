/* SPDX-License-Identifier: MIT */
/*
 * DOC: route-quality evaluator (API and definitions: metrics.h, FIELD.md)
 *
 * Owns nothing beyond one call: every array is allocated in
 * sm_metrics_compute() and freed before it returns.
 *
 * Data flow:
 *  1. hosts = CA ports with a base LID in the plane, in the canonical host
 *     order of sm_metrics_host_order() (below; independent of node indices
 *     and LIDs); each host's leaf = the switch its port is cabled to.
 *  2. Directed switch-to-switch links get compact ids (link_of_port[] maps
 *     an egress port index to its id), so per-pattern counters are small
 *     arrays that stay in cache.
 *  3. Per destination host, the LFT column for its LID is a functional
 *     graph over switches (one egress port each). It is resolved once with
 *     memoisation (delivered / black hole / loop, hop count), then flows
 *     from all sources are accumulated from the farthest switch inward, so
 *     the edge forwarding index over all N*(N-1) pairs costs O(N * switches)
 *     instead of O(N^2 * hops). The same pass stores, for every
 *     (source leaf, destination host), its path as a list of link ids
 *     (the path cache) unless that would exceed PATH_CACHE_MAX entries.
 *  4. Shift and random permutations then only add counters along cached
 *     paths; without a cache they walk the LFTs hop by hop.
 *
 * Conventions: congestion counts only switch-to-switch directed links (a
 * host link carries exactly one flow of a permutation); the EBB share of a
 * flow is 1 / (most flows on any switch link of its path), 1 when the path
 * has no switch link, 0 when the flow is not routed; a random permutation's
 * fixed points (host to itself) are not flows. The edge forwarding index is
 * over directed switch-to-switch links; its mean is over all of them,
 * including unused ones. sm_metrics_max_load() counts host links too.
 * The credit-loop flag comes from the validation code (sm_cdg_check).
 */
#include "config.h"
#include "lib/clock.h"
#include "routing/metrics.h"
#include "routing/metrics_priv.h"
#include "routing/validate.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


#define PATH_CACHE_MAX (48u << 20) /* link ids (4 bytes each) kept in the path cache */
#define ST_UNKNOWN 0
#define ST_BUSY 1
#define ST_DELIVERED 2
#define ST_BLACKHOLE 3
#define ST_LOOP 4

struct mx {
	const struct sm_fabric *f;
	const struct sm_lfts *l;
	uint32_t nh;             /* hosts */
	uint32_t *h_port;        /* [nh] CA port index */
	uint16_t *h_lid;         /* [nh] base LID */
	uint32_t *h_slot;        /* [nh] LFT slot of the host's switch, SM_NONE if not cabled to one */
	uint32_t *h_src;         /* [nh] index of the host's switch among source switches */
	uint32_t nsw;            /* switches (LFT slots) */
	uint32_t *hosts_at;      /* [nsw] hosts cabled to each switch */
	uint32_t nsrc;           /* switches with at least one host */
	uint32_t *src_sw;        /* [nsrc] their slots, ascending */
	uint32_t *vis;           /* [nsw] switches resolve_dest() reached for the current destination */
	uint32_t nvis;
	uint32_t *link_of_port;  /* [f->n_ports] compact switch-link id of an egress port, SM_NONE */
	uint32_t nlinks;
	uint32_t *adj_off, *adj; /* CSR switch adjacency (slots) for shortest distances */
	/* per-destination resolution scratch */
	uint8_t *st;             /* [nsw] ST_* */
	uint16_t *hops;          /* [nsw] switch links to the destination's switch */
	uint32_t *next;          /* [nsw] next slot, SM_NONE when the next hop delivers */
	uint32_t *nlink;         /* [nsw] link id of the hop, SM_NONE for the final host link */
	uint32_t *stack, *order, *flow;
	uint8_t *dist;           /* [nsw] BFS distances to the current destination switch */
	uint32_t dist_of;        /* slot the distances are for, SM_NONE none */
	uint32_t *bfs;
	/* path cache */
	uint32_t *pc_off;        /* [nsrc*nh + 1] offsets into pc_links; SM_NONE = not routed */
	uint8_t *pc_len;         /* [nsrc*nh] */
	uint32_t *pc_links;
	size_t pc_n;
	uint32_t walk_buf[256];
};

static void mx_free(struct mx *m)
{
	free(m->h_port);
	free(m->h_lid);
	free(m->h_slot);
	free(m->h_src);
	free(m->hosts_at);
	free(m->src_sw);
	free(m->vis);
	free(m->link_of_port);
	free(m->adj_off);
	free(m->adj);
	free(m->st);
	free(m->hops);
	free(m->next);
	free(m->nlink);
	free(m->stack);
	free(m->order);
	free(m->flow);
	free(m->dist);
	free(m->bfs);
	free(m->pc_off);
	free(m->pc_len);
	free(m->pc_links);
}

static uint32_t slot_of(const struct mx *m, uint32_t node)
{
	return node < m->l->n_nodes ? m->l->slot_of_node[node] : SM_NONE;
}

/*
 * Canonical host order (metrics.h). Leaves = switches of the plane with an
 * endpoint cabled to them; rank = switch-link distance from the nearest
 * leaf. Level r groups leaves by the connected component of the switch
 * graph restricted to ranks <= r + 1 (a pod at r = 0 on a 3-level tree,
 * the whole tree at the top), named by its smallest leaf GUID. Nested
 * groups sort outermost first, so pods (and every subtree) stay contiguous
 * whatever the GUIDs; inside a group leaves sort by GUID, hosts by the
 * leaf's port number, then port GUID. Nothing here reads a node index or
 * a LID, so two numberings of one fabric give the same order.
 */
#define HO_LEVELS 4

struct ho_key {
	uint64_t grp[HO_LEVELS]; /* outermost group first */
	uint64_t leaf;           /* leaf node GUID, UINT64_MAX when not cabled to a switch */
	uint64_t pguid;          /* the host port's GUID */
	uint32_t port;           /* fabric port index (last resort, keeps the sort total) */
	uint8_t lport;           /* the leaf's port number */
};

static int cmp_ho(const void *a, const void *b)
{
	const struct ho_key *x = a, *y = b;
	for (int i = 0; i < HO_LEVELS; i++)
		if (x->grp[i] != y->grp[i])
			return x->grp[i] < y->grp[i] ? -1 : 1;
	if (x->leaf != y->leaf)
		return x->leaf < y->leaf ? -1 : 1;
	if (x->lport != y->lport)
		return x->lport < y->lport ? -1 : 1;
	if (x->pguid != y->pguid)
		return x->pguid < y->pguid ? -1 : 1;
	return x->port < y->port ? -1 : x->port > y->port;
}

int sm_metrics_host_order(const struct sm_fabric *f, unsigned plane, uint32_t *ports, size_t n)
{
	if (n < 2)
		return 0;
	size_t nn = (size_t)f->n_nodes + 1;
	uint32_t *rank = malloc(nn * sizeof(*rank));
	uint32_t *queue = malloc(nn * sizeof(*queue));
	uint32_t *uf = malloc(nn * sizeof(*uf));
	uint64_t *gkey = malloc(nn * sizeof(*gkey));
	struct ho_key *k = calloc(n, sizeof(*k));
	int rc = -ENOMEM;
	if (!rank || !queue || !uf || !gkey || !k)
		goto out;

	/* ranks: BFS up from the leaves over switch-switch links */
	uint32_t qh = 0, qt = 0, h = 0;
	for (uint32_t s = 0; s < f->n_nodes; s++) {
		rank[s] = UINT32_MAX;
		uf[s] = s;
		if (!sm_mx_is_sw(f, s, plane))
			continue;
		for (unsigned p = 1; p <= f->nodes[s].nports; p++) {
			uint32_t q = sm_port(f, s, p)->peer_node;
			if (q < f->n_nodes && (f->nodes[q].type == SM_NODE_CA || f->nodes[q].type == SM_NODE_ROUTER)) {
				rank[s] = 0;
				queue[qt++] = s;
				break;
			}
		}
	}
	while (qh < qt) {
		uint32_t s = queue[qh++];
		for (unsigned p = 1; p <= f->nodes[s].nports; p++) {
			uint32_t q = sm_port(f, s, p)->peer_node;
			if (!sm_mx_is_sw(f, q, plane) || rank[q] != UINT32_MAX)
				continue;
			rank[q] = rank[s] + 1;
			if (rank[q] > h)
				h = rank[q];
			queue[qt++] = q;
		}
	}
	/* the leaves are queue[0 .. nleaf) */
	uint32_t nleaf = 0;
	while (nleaf < qt && rank[queue[nleaf]] == 0)
		nleaf++;
	uint32_t levels = h < HO_LEVELS ? h : HO_LEVELS;
	for (size_t i = 0; i < n; i++)
		for (int g = 0; g < HO_LEVELS; g++)
			k[i].grp[g] = 0;
	for (uint32_t r = 0; r < levels; r++) {
		/* links whose upper end is rank r + 1 (at the last level: every link left) */
		for (uint32_t i = 0; i < qt; i++) {
			uint32_t s = queue[i];
			for (unsigned p = 1; p <= f->nodes[s].nports; p++) {
				uint32_t q = sm_port(f, s, p)->peer_node;
				if (!sm_mx_is_sw(f, q, plane) || rank[q] == UINT32_MAX)
					continue;
				uint32_t top = rank[q] > rank[s] ? rank[q] : rank[s];
				if (top <= r + 1 || (r + 1 == levels && top > r + 1)) {
					uint32_t a = sm_mx_find(uf, s), b = sm_mx_find(uf, q);
					if (a != b)
						uf[a] = b;
				}
			}
		}
		for (uint32_t i = 0; i < nleaf; i++)
			gkey[sm_mx_find(uf, queue[i])] = UINT64_MAX;
		for (uint32_t i = 0; i < nleaf; i++) {
			uint32_t root = sm_mx_find(uf, queue[i]);
			if (f->nodes[queue[i]].guid < gkey[root])
				gkey[root] = f->nodes[queue[i]].guid;
		}
		for (size_t i = 0; i < n; i++) {
			const struct sm_port *pt = &f->ports[ports[i]];
			uint32_t leaf = pt->peer_node;
			k[i].grp[HO_LEVELS - 1 - r] = sm_mx_is_sw(f, leaf, plane) && rank[leaf] == 0
							   ? gkey[sm_mx_find(uf, leaf)] : UINT64_MAX;
		}
	}
	for (size_t i = 0; i < n; i++) {
		const struct sm_port *pt = &f->ports[ports[i]];
		uint32_t leaf = pt->peer_node;
		int cabled = sm_mx_is_sw(f, leaf, plane) && rank[leaf] == 0;
		k[i].leaf = cabled ? f->nodes[leaf].guid : UINT64_MAX;
		k[i].lport = cabled ? pt->peer_port : 0;
		k[i].pguid = pt->guid;
		k[i].port = ports[i];
		if (!cabled)
			for (int g = 0; g < HO_LEVELS; g++)
				k[i].grp[g] = UINT64_MAX;
	}
	qsort(k, n, sizeof(*k), cmp_ho);
	for (size_t i = 0; i < n; i++)
		ports[i] = k[i].port;
	rc = 0;
out:
	free(rank);
	free(queue);
	free(uf);
	free(gkey);
	free(k);
	return rc;
}

uint32_t sm_mx_rank_up(const struct sm_fabric *f, unsigned plane, uint32_t *rank, uint32_t *sw, uint32_t leaves,
		       uint32_t *top)
{
	uint32_t qh = 0, qt = leaves;

	*top = 0;
	while (qh < qt) {
		uint32_t s = sw[qh++];
		for (unsigned p = 1; p <= f->nodes[s].nports; p++) {
			uint32_t q = sm_port(f, s, p)->peer_node;
			if (!sm_mx_is_sw(f, q, plane) || rank[q] != UINT32_MAX)
				continue;
			rank[q] = rank[s] + 1;
			if (rank[q] > *top)
				*top = rank[q];
			sw[qt++] = q;
		}
	}
	return qt;
}

int sm_mx_host_ports(const struct sm_fabric *f, unsigned plane, uint32_t **ports, uint32_t *n)
{
	uint32_t np = 0;

	for (int pass = 0; pass < 2; pass++) {
		if (pass && !(*ports = malloc(((size_t)np + 1) * sizeof(**ports))))
			return -ENOMEM;
		np = 0;
		for (uint32_t v = 0; v < f->n_nodes; v++)
			if ((f->nodes[v].type == SM_NODE_CA || f->nodes[v].type == SM_NODE_ROUTER) &&
			    f->nodes[v].plane == plane)
				for (unsigned p = 1; p <= f->nodes[v].nports; p++)
					if (sm_port(f, v, p)->lid) {
						if (pass)
							(*ports)[np] = sm_port_index(f, v, p);
						np++;
					}
	}
	int rc = sm_metrics_host_order(f, plane, *ports, np);
	if (rc) {
		free(*ports);
		*ports = NULL;
		return rc;
	}
	*n = np;
	return 0;
}

/* The CA ports of plane with a LID, in fabric order, into out (NULL: only counted). Returns how many. */
static uint32_t host_ports(const struct sm_fabric *f, unsigned plane, uint32_t *out)
{
	uint32_t h = 0;
	for (uint32_t n = 0; n < f->n_nodes; n++) {
		const struct sm_node *nd = &f->nodes[n];
		if (nd->type != SM_NODE_CA || nd->plane != plane)
			continue;
		for (unsigned p = 1; p <= nd->nports; p++) {
			if (!sm_port(f, n, p)->lid)
				continue;
			if (out)
				out[h] = sm_port_index(f, n, p);
			h++;
		}
	}
	return h;
}

static int mx_init(struct mx *m, const struct sm_fabric *f, unsigned plane, const struct sm_lfts *l)
{
	memset(m, 0, sizeof(*m));
	m->f = f;
	m->l = l;
	m->nsw = l->n_switches;
	m->dist_of = SM_NONE;
	m->nh = host_ports(f, plane, NULL);
	size_t ns = (size_t)m->nsw + 1, nh = (size_t)m->nh + 1;
	m->h_port = malloc(nh * sizeof(*m->h_port));
	m->h_lid = malloc(nh * sizeof(*m->h_lid));
	m->h_slot = malloc(nh * sizeof(*m->h_slot));
	m->h_src = malloc(nh * sizeof(*m->h_src));
	m->hosts_at = calloc(ns, sizeof(*m->hosts_at));
	m->link_of_port = malloc(((size_t)f->n_ports + 1) * sizeof(*m->link_of_port));
	m->adj_off = calloc(ns + 1, sizeof(*m->adj_off));
	m->st = malloc(ns);
	m->hops = malloc(ns * sizeof(*m->hops));
	m->next = malloc(ns * sizeof(*m->next));
	m->nlink = malloc(ns * sizeof(*m->nlink));
	m->stack = malloc(ns * sizeof(*m->stack));
	m->order = malloc(ns * sizeof(*m->order));
	m->flow = malloc(ns * sizeof(*m->flow));
	m->dist = malloc(ns);
	m->bfs = malloc(ns * sizeof(*m->bfs));
	m->src_sw = malloc(ns * sizeof(*m->src_sw));
	m->vis = malloc(ns * sizeof(*m->vis));
	if (!m->src_sw || !m->vis || !m->h_port || !m->h_lid || !m->h_slot || !m->h_src || !m->hosts_at || !m->link_of_port ||
	    !m->adj_off || !m->st || !m->hops || !m->next || !m->nlink || !m->stack || !m->order ||
	    !m->flow || !m->dist || !m->bfs)
		return -ENOMEM;

	host_ports(f, plane, m->h_port);
	int rc = sm_metrics_host_order(f, plane, m->h_port, m->nh);
	if (rc)
		return rc;
	for (uint32_t h = 0; h < m->nh; h++) {
		const struct sm_port *pt = &f->ports[m->h_port[h]];
		m->h_lid[h] = pt->lid;
		m->h_slot[h] = pt->peer_node == SM_NONE ? SM_NONE : slot_of(m, pt->peer_node);
		if (m->h_slot[h] != SM_NONE)
			m->hosts_at[m->h_slot[h]]++;
	}
	/* source-switch numbering, reusing order[] as slot -> source index */
	for (uint32_t s = 0; s < m->nsw; s++) {
		m->order[s] = m->hosts_at[s] ? m->nsrc : SM_NONE;
		if (m->hosts_at[s])
			m->src_sw[m->nsrc++] = s;
	}
	for (uint32_t h = 0; h < m->nh; h++)
		m->h_src[h] = m->h_slot[h] == SM_NONE ? SM_NONE : m->order[m->h_slot[h]];

	/* compact ids of directed switch-switch links, and CSR adjacency */
	for (uint32_t i = 0; i < f->n_ports; i++)
		m->link_of_port[i] = SM_NONE;
	for (uint32_t s = 0; s < m->nsw; s++) {
		uint32_t n = l->sw_node[s];
		for (unsigned p = 1; p <= f->nodes[n].nports; p++) {
			const struct sm_port *pt = sm_port(f, n, p);
			if (pt->peer_node != SM_NONE && slot_of(m, pt->peer_node) != SM_NONE) {
				m->link_of_port[sm_port_index(f, n, p)] = m->nlinks++;
				m->adj_off[s + 1]++;
			}
		}
	}
	for (uint32_t s = 0; s < m->nsw; s++)
		m->adj_off[s + 1] += m->adj_off[s];
	m->adj = malloc(((size_t)m->nlinks + 1) * sizeof(*m->adj));
	if (!m->adj)
		return -ENOMEM;
	for (uint32_t s = 0; s < m->nsw; s++) {
		uint32_t n = l->sw_node[s], k = m->adj_off[s];
		for (unsigned p = 1; p <= f->nodes[n].nports; p++) {
			const struct sm_port *pt = sm_port(f, n, p);
			if (pt->peer_node != SM_NONE && slot_of(m, pt->peer_node) != SM_NONE)
				m->adj[k++] = slot_of(m, pt->peer_node);
		}
	}
	return 0;
}

/* One hop of the LFT walk from switch slot s toward host dh. */
static int hop(const struct mx *m, uint32_t s, uint32_t dh, uint32_t *next, uint32_t *link)
{
	const struct sm_fabric *f = m->f;
	uint32_t n = m->l->sw_node[s];
	uint16_t lid = m->h_lid[dh];
	if (lid > m->l->top_lid)
		return ST_BLACKHOLE;
	uint8_t out = sm_lfts_row(m->l, s)[lid];
	if (out == 0 || out > f->nodes[n].nports)
		return ST_BLACKHOLE;
	uint32_t pi = sm_port_index(f, n, out);
	const struct sm_port *pt = &f->ports[pi];
	if (pt->peer_node == SM_NONE)
		return ST_BLACKHOLE;
	if (sm_port_index(f, pt->peer_node, pt->peer_port) == m->h_port[dh]) {
		*next = SM_NONE;
		*link = SM_NONE;
		return ST_DELIVERED;
	}
	uint32_t ps = slot_of(m, pt->peer_node);
	if (ps == SM_NONE)
		return ST_BLACKHOLE; /* delivered to the wrong end node */
	*next = ps;
	*link = m->link_of_port[pi];
	return ST_UNKNOWN;
}

/*
 * Resolve the route toward destination host dh of every switch a host's
 * traffic passes (memoised functional-graph walk from the switches with
 * hosts; vis[] lists them). Switches no host's route reaches carry no flow:
 * at 40k hosts, skipping them leaves ~1,400 of 3,584 walks per destination.
 */
static void resolve_dest(struct mx *m, uint32_t dh)
{
	memset(m->st, ST_UNKNOWN, m->nsw);
	m->nvis = 0;
	for (uint32_t i = 0; i < m->nsrc; i++) {
		uint32_t s0 = m->src_sw[i];
		if (m->st[s0] != ST_UNKNOWN)
			continue;
		uint32_t sp = 0, s = s0;
		int fin;
		for (;;) {
			m->st[s] = ST_BUSY;
			m->stack[sp++] = s;
			m->vis[m->nvis++] = s;
			int r = hop(m, s, dh, &m->next[s], &m->nlink[s]);
			if (r == ST_DELIVERED) {
				m->hops[s] = 0;
				fin = ST_DELIVERED;
				sp--;
				m->st[s] = ST_DELIVERED;
				break;
			}
			if (r == ST_BLACKHOLE) {
				fin = ST_BLACKHOLE;
				break;
			}
			uint32_t nx = m->next[s];
			if (m->st[nx] == ST_BUSY) {
				fin = ST_LOOP;
				break;
			}
			if (m->st[nx] != ST_UNKNOWN) {
				fin = m->st[nx];
				break;
			}
			s = nx;
		}
		/* unwind: the stack holds switches whose fate is the chain's end */
		while (sp) {
			uint32_t t = m->stack[--sp];
			m->st[t] = (uint8_t)fin;
			if (fin == ST_DELIVERED)
				m->hops[t] = (uint16_t)(m->hops[m->next[t]] + 1);
		}
	}
}

static void bfs_dist(struct mx *m, uint32_t t)
{
	if (m->dist_of == t)
		return;
	memset(m->dist, 0xff, m->nsw);
	uint32_t qh = 0, qt = 0;
	m->dist[t] = 0;
	m->bfs[qt++] = t;
	while (qh < qt) {
		uint32_t s = m->bfs[qh++];
		for (uint32_t k = m->adj_off[s]; k < m->adj_off[s + 1]; k++) {
			uint32_t v = m->adj[k];
			if (m->dist[v] == 0xff) {
				m->dist[v] = m->dist[s] < 0xfe ? (uint8_t)(m->dist[s] + 1) : 0xfe;
				m->bfs[qt++] = v;
			}
		}
	}
	m->dist_of = t;
}

/* Path of flow (src host sh -> dst host dh) as switch-link ids; -1 if not routed. */
static int path_walk(struct mx *m, uint32_t sh, uint32_t dh, const uint32_t **links);

static inline int path_of(struct mx *m, uint32_t sh, uint32_t dh, const uint32_t **links)
{
	uint32_t si = m->h_src[sh];
	if (si == SM_NONE)
		return -1;
	if (m->pc_off) {
		size_t k = (size_t)si * m->nh + dh;
		if (m->pc_off[k] == SM_NONE)
			return -1;
		*links = m->pc_links + m->pc_off[k];
		return m->pc_len[k];
	}
	return path_walk(m, sh, dh, links);
}

/* Uncached path: walk the LFTs hop by hop. */
static int path_walk(struct mx *m, uint32_t sh, uint32_t dh, const uint32_t **links)
{
	uint32_t s = m->h_slot[sh];
	int len = 0;
	for (;;) {
		uint32_t nx, lk;
		int r = hop(m, s, dh, &nx, &lk);
		if (r == ST_DELIVERED)
			break;
		if (r == ST_BLACKHOLE || len >= (int)(sizeof(m->walk_buf) / sizeof(m->walk_buf[0])))
			return -1;
		m->walk_buf[len++] = lk;
		s = nx;
	}
	*links = m->walk_buf;
	return len;
}


struct perm_acc {
	uint32_t *cnt, *stamp;
	uint32_t gen;
};

/* Load the flows i -> dst[i] (SM_NONE = no flow); return the max congestion, and EBB via *ebb. */
static unsigned perm_eval(struct mx *m, struct perm_acc *a, const uint32_t *dst, double *ebb)
{
	unsigned maxc = 0;
	a->gen++;
	for (uint32_t i = 0; i < m->nh; i++) {
		if (dst[i] == SM_NONE)
			continue;
		const uint32_t *lk;
		int n = path_of(m, i, dst[i], &lk);
		for (int k = 0; k < n; k++) {
			uint32_t id = lk[k];
			if (a->stamp[id] != a->gen) {
				a->stamp[id] = a->gen;
				a->cnt[id] = 0;
			}
			if (++a->cnt[id] > maxc)
				maxc = a->cnt[id];
		}
	}
	if (!ebb)
		return maxc;
	double sum = 0;
	uint64_t flows = 0;
	for (uint32_t i = 0; i < m->nh; i++) {
		if (dst[i] == SM_NONE)
			continue;
		flows++;
		const uint32_t *lk;
		int n = path_of(m, i, dst[i], &lk);
		if (n < 0)
			continue;
		uint32_t worst = 1;
		for (int k = 0; k < n; k++)
			if (a->cnt[lk[k]] > worst)
				worst = a->cnt[lk[k]];
		sum += 1.0 / worst;
	}
	*ebb = flows ? sum / (double)flows : 1.0;
	return maxc;
}

static int all_pairs(struct mx *m, struct sm_route_metrics *r, uint64_t *efi)
{
	uint64_t routed = 0, hops_sum = 0, minimal = 0;
	unsigned hmin = UINT32_MAX, hmax = 0;
	uint32_t *bucket_n = calloc((size_t)m->nsw + 2, sizeof(*bucket_n));
	if (!bucket_n)
		return -ENOMEM;
	size_t pc_used = 0;
	uint32_t used = m->nsw; /* bucket_n[0 .. used + 2) may be set (cleared per destination) */

	for (uint32_t dh = 0; dh < m->nh; dh++) {
		uint32_t t = m->h_slot[dh];
		uint64_t others = m->nh - 1;
		if (t == SM_NONE) {
			r->unreachable += others;
			if (m->pc_off)
				for (uint32_t si = 0; si < m->nsrc; si++)
					m->pc_off[(size_t)si * m->nh + dh] = SM_NONE;
			continue;
		}
		resolve_dest(m, dh);
		bfs_dist(m, t);
		/* hosts not cabled to a switch never reach anyone */
		uint64_t counted = 0;
		uint16_t maxh = 0;
		for (uint32_t k = 0; k < m->nvis; k++)
			m->flow[m->vis[k]] = 0;
		for (uint32_t i = 0; i < m->nsrc; i++) {
			uint32_t s = m->src_sw[i];
			uint64_t c = m->hosts_at[s] - (s == t ? 1u : 0u);
			m->flow[s] = (uint32_t)c;
			if (!c)
				continue;
			counted += c;
			if (m->st[s] == ST_DELIVERED) {
				unsigned hp = m->hops[s] + 2u;
				routed += c;
				hops_sum += c * hp;
				if (hp < hmin)
					hmin = hp;
				if (hp > hmax)
					hmax = hp;
				if (m->dist[s] != 0xff && m->hops[s] == m->dist[s])
					minimal += c;
			} else if (m->st[s] == ST_LOOP) {
				r->loops += c;
			} else {
				r->unreachable += c;
			}
		}
		r->unreachable += others - counted;
		/* edge forwarding: accumulate flows from the farthest switch inward (counting sort by hops) */
		memset(bucket_n, 0, ((size_t)used + 2) * sizeof(*bucket_n));
		for (uint32_t k = 0; k < m->nvis; k++) {
			uint32_t s = m->vis[k];
			if (m->st[s] == ST_DELIVERED) {
				bucket_n[m->hops[s] + 1]++;
				if (m->hops[s] > maxh)
					maxh = m->hops[s];
			}
		}
		used = maxh;
		for (uint32_t b = 1; b <= (uint32_t)maxh + 1; b++)
			bucket_n[b] += bucket_n[b - 1];
		for (uint32_t k = 0; k < m->nvis; k++) {
			uint32_t s = m->vis[k];
			if (m->st[s] == ST_DELIVERED)
				m->order[bucket_n[m->hops[s]]++] = s;
		}
		uint32_t nd = bucket_n[maxh];
		for (uint32_t k = nd; k-- > 0;) {
			uint32_t s = m->order[k];
			if (m->next[s] == SM_NONE || !m->flow[s])
				continue;
			efi[m->nlink[s]] += m->flow[s];
			m->flow[m->next[s]] += m->flow[s];
		}
		/* path cache: the (source switch, destination) link sequences */
		if (m->pc_off) {
			for (uint32_t s = 0, si = 0; s < m->nsw; s++) {
				if (!m->hosts_at[s])
					continue;
				size_t k = (size_t)si++ * m->nh + dh;
				if (m->st[s] != ST_DELIVERED) {
					m->pc_off[k] = SM_NONE;
					continue;
				}
				m->pc_off[k] = (uint32_t)pc_used;
				m->pc_len[k] = (uint8_t)m->hops[s];
				for (uint32_t x = s; m->next[x] != SM_NONE; x = m->next[x])
					m->pc_links[pc_used++] = m->nlink[x];
			}
		}
	}
	free(bucket_n);
	r->pairs = (uint64_t)m->nh * (m->nh ? m->nh - 1 : 0);
	r->hops_min = routed ? hmin : 0;
	r->hops_max = hmax;
	r->hops_avg = routed ? (double)hops_sum / (double)routed : 0;
	r->minimal_share = routed ? (double)minimal / (double)routed : 0;
	return 0;
}

/*
 * Size the path cache: one pass over destinations summing hop counts.
 * Cheap next to the main pass, and avoids guessing the average path length.
 */
static int cache_alloc(struct mx *m)
{
	size_t total = 0, pairs = (size_t)m->nsrc * m->nh;
	if (!pairs || pairs > PATH_CACHE_MAX)
		return 0;
	for (uint32_t dh = 0; dh < m->nh; dh++) {
		if (m->h_slot[dh] == SM_NONE)
			continue;
		resolve_dest(m, dh);
		for (uint32_t s = 0; s < m->nsw; s++)
			if (m->hosts_at[s] && m->st[s] == ST_DELIVERED) {
				if (m->hops[s] > 255)
					return 0; /* pc_len is a byte: absurd path lengths go uncached */
				total += m->hops[s];
			}
		if (total > PATH_CACHE_MAX)
			return 0;
	}
	m->pc_off = malloc(pairs * sizeof(*m->pc_off));
	m->pc_len = malloc(pairs);
	m->pc_links = malloc((total + 1) * sizeof(*m->pc_links));
	if (!m->pc_off || !m->pc_len || !m->pc_links) {
		/* no cache is slower but still correct */
		free(m->pc_off);
		free(m->pc_len);
		free(m->pc_links);
		m->pc_off = NULL;
		m->pc_len = NULL;
		m->pc_links = NULL;
	}
	return 0;
}

int sm_metrics_compute(const struct sm_fabric *f, unsigned plane, const struct sm_lfts *l,
		       const struct sm_metrics_opts *o, struct sm_route_metrics *r)
{
	static const struct sm_metrics_opts defaults = { 0 };
	double t0 = sm_mono_sec();
	struct mx m;
	uint64_t *efi = NULL;
	uint32_t *dst = NULL, *perm = NULL;
	struct perm_acc acc = { 0 };
	int rc;

	if (!f || !l || !r || plane >= SM_MAX_PLANES)
		return -EINVAL;
	if (!o)
		o = &defaults;
	memset(r, 0, sizeof(*r));
	r->credit_loop = -1;
	rc = mx_init(&m, f, plane, l);
	if (rc)
		goto out;
	r->hosts = m.nh;
	efi = calloc((size_t)m.nlinks + 1, sizeof(*efi));
	acc.cnt = calloc((size_t)m.nlinks + 1, sizeof(*acc.cnt));
	acc.stamp = calloc((size_t)m.nlinks + 1, sizeof(*acc.stamp));
	dst = malloc(((size_t)m.nh + 1) * sizeof(*dst));
	perm = malloc(((size_t)m.nh + 1) * sizeof(*perm));
	rc = -ENOMEM;
	if (!efi || !acc.cnt || !acc.stamp || !dst || !perm)
		goto out;
	rc = cache_alloc(&m);
	if (rc)
		goto out;
	rc = all_pairs(&m, r, efi);
	if (rc)
		goto out;
	uint64_t efi_sum = 0;
	for (uint32_t k = 0; k < m.nlinks; k++) {
		efi_sum += efi[k];
		if (efi[k] > r->efi_max)
			r->efi_max = efi[k];
	}
	r->efi_max_over_mean = efi_sum ? (double)r->efi_max / ((double)efi_sum / m.nlinks) : 0;

	if (!o->skip_shift && m.nh > 1) {
		unsigned worst = 0;
		/* all N-1 shifts are N^2 flows: above SM_METRICS_SHIFT_FLOWS, evenly spaced ones */
		uint32_t nk = m.nh - 1;
		uint64_t budget = m.pc_off ? SM_METRICS_SHIFT_FLOWS : SM_METRICS_SHIFT_FLOWS_WALK;
		if ((uint64_t)m.nh * nk > budget)
			nk = (uint32_t)(budget / m.nh);
		r->shift_evaluated = nk;
		for (uint32_t ki = 0; ki < nk; ki++) {
			uint32_t k = 1 + (uint32_t)((uint64_t)ki * (m.nh - 1) / nk);
			for (uint32_t i = 0, d = k; i < m.nh; i++, d = d + 1 == m.nh ? 0 : d + 1)
				dst[i] = d;
			unsigned c = perm_eval(&m, &acc, dst, NULL);
			if (c > worst)
				worst = c;
		}
		r->shift_max_congestion = worst;
	}

	unsigned nr = o->n_random ? o->n_random : 100;
	if (m.nh > 1) {
		uint64_t seed = o->seed;
		double ebb_sum = 0, maxc_sum = 0;
		for (unsigned p = 0; p < nr; p++) {
			for (uint32_t i = 0; i < m.nh; i++)
				perm[i] = i;
			for (uint32_t i = m.nh - 1; i > 0; i--) {
				uint32_t j = (uint32_t)(sm_splitmix64(&seed) % ((uint64_t)i + 1));
				uint32_t t = perm[i];
				perm[i] = perm[j];
				perm[j] = t;
			}
			for (uint32_t i = 0; i < m.nh; i++)
				dst[i] = perm[i] == i ? SM_NONE : perm[i];
			double e;
			maxc_sum += perm_eval(&m, &acc, dst, &e);
			ebb_sum += e;
		}
		r->ebb = ebb_sum / nr;
		r->rand_max_congestion_mean = maxc_sum / nr;
		r->rand_max_congestion = (unsigned)r->rand_max_congestion_mean;
		if ((double)r->rand_max_congestion < r->rand_max_congestion_mean)
			r->rand_max_congestion++;
	} else {
		r->ebb = m.nh ? 1.0 : 0.0;
	}
	if (!o->skip_cdg)
		r->credit_loop = sm_cdg_check(f, plane, l, NULL);
	if (r->credit_loop < 0)
		r->credit_loop = -1; /* the check itself failed (memory): reported as not checked */
	rc = 0;
out:
	free(efi);
	free(acc.cnt);
	free(acc.stamp);
	free(dst);
	free(perm);
	mx_free(&m);
	r->seconds = sm_mono_sec() - t0;
	return rc;
}

double sm_metrics_max_load(const struct sm_fabric *f, unsigned plane, const struct sm_lfts *l,
			   const struct sm_flow *flows, size_t n_flows)
{
	if (!f || !l || (n_flows && !flows) || plane >= SM_MAX_PLANES)
		return -EINVAL;
	double *load = calloc((size_t)f->n_ports + 1, sizeof(*load));
	if (!load)
		return -ENOMEM;
	double best = 0;
	for (size_t i = 0; i < n_flows; i++) {
		uint32_t sp = flows[i].src, dp = flows[i].dst;
		if (sp >= f->n_ports || dp >= f->n_ports || sp == dp) {
			free(load);
			return -EINVAL;
		}
		const struct sm_port *a = &f->ports[sp], *b = &f->ports[dp];
		if (f->nodes[a->node].type != SM_NODE_CA || f->nodes[b->node].type != SM_NODE_CA ||
		    f->nodes[a->node].plane != plane || f->nodes[b->node].plane != plane || !b->lid ||
		    !a->lid) {
			free(load);
			return -EINVAL;
		}
		/* walk once to check the route, then add the weight along it */
		double w = flows[i].weight;
		for (int pass = 0; pass < 2; pass++) {
			uint32_t link = sp, hopn = 0;
			int ok = 0;
			for (;;) {
				if (pass)
					load[link] += w;
				const struct sm_port *pt = &f->ports[link];
				if (pt->peer_node == SM_NONE)
					break;
				if (sm_port_index(f, pt->peer_node, pt->peer_port) == dp) {
					ok = 1;
					break;
				}
				uint32_t n = pt->peer_node;
				uint8_t out = sm_lfts_get(l, n, b->lid);
				if (out == SM_LFT_NONE || out == 0 || out > f->nodes[n].nports || ++hopn > 64)
					break;
				link = sm_port_index(f, n, out);
			}
			if (!ok)
				break; /* unrouted flows carry nothing */
		}
	}
	for (uint32_t k = 0; k < f->n_ports; k++)
		if (load[k] > best)
			best = load[k];
	free(load);
	return best;
}
