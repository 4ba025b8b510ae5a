/* SPDX-License-Identifier: MIT */
/*
 * DOC: ftree model: ranks, up-slot tables and destinations of one plane
 *
 * See ftree_model.h for what the model holds. Everything here is O(ports)
 * apart from two sorts of switches by key; no per-LID allocation.
 */
#include "config.h"
#include "routing/ftree/model.h"
#include "routing/metrics.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is_endpoint(const struct sm_fabric *f, uint32_t n)
{
	return f->nodes[n].type == SM_NODE_CA || f->nodes[n].type == SM_NODE_ROUTER;
}

void ft_model_free(struct ft_model *m)
{
	if (!m)
		return;
	free(m->rank);
	free(m->by_rank);
	free(m->up_off);
	free(m->dn_off);
	free(m->up_port);
	free(m->dn_port);
	free(m->up_peer);
	free(m->dn_peer);
	free(m->slot_off);
	free(m->slot_port);
	free(m->slot_peer);
	free(m->dest);
	free(m->dest_off);
	free(m->tgt_order);
	free(m->comp);
	free(m->hlo);
	free(m->hhi);
	memset(m, 0, sizeof(*m));
}

static int check_adjacent_ranks(struct ft_model *m, char *msg, size_t msglen);

static int rank_switches(struct ft_model *m, uint32_t *queue, char *msg, size_t msglen)
{
	const struct sm_fabric *f = m->f;
	uint32_t qh = 0, qt = 0;

	for (uint32_t s = 0; s < m->nsw; s++) {
		uint32_t n = m->sw_node[s];
		m->rank[s] = FT_RANK_NONE;
		for (unsigned p = 1; p <= f->nodes[n].nports; p++) {
			const struct sm_port *pt = sm_port(f, n, p);
			if (pt->peer_node != SM_NONE && is_endpoint(f, pt->peer_node)) {
				m->rank[s] = 0;
				queue[qt++] = s;
				break;
			}
		}
	}
	if (!qt) {
		snprintf(msg, msglen, "ftree: no CA is cabled to a switch in this plane: nothing to route as a fat tree");
		return -ENOENT;
	}
	while (qh < qt) {
		uint32_t s = queue[qh++];
		uint32_t n = m->sw_node[s];
		for (unsigned p = 1; p <= f->nodes[n].nports; p++) {
			uint32_t q = ft_peer_slot(m, s, p);
			if (q == SM_NONE || m->rank[q] != FT_RANK_NONE)
				continue;
			if (m->rank[s] >= FT_MAX_RANK) {
				snprintf(msg, msglen,
					 "ftree: switch 0x%016" PRIx64 " is more than %u levels above the nearest CA: not a fat tree of at most %u levels",
					 f->nodes[m->sw_node[q]].guid, FT_MAX_RANK, FT_MAX_RANK + 1);
				return -EINVAL;
			}
			m->rank[q] = (uint8_t)(m->rank[s] + 1);
			if (m->rank[q] > m->h)
				m->h = m->rank[q];
			queue[qt++] = q;
		}
	}
	m->unranked = m->nsw - qt;
	return check_adjacent_ranks(m, msg, msglen);
}

/* A fat tree only has links between adjacent ranks. */
static int check_adjacent_ranks(struct ft_model *m, char *msg, size_t msglen)
{
	const struct sm_fabric *f = m->f;
	for (uint32_t s = 0; s < m->nsw; s++) {
		if (m->rank[s] == FT_RANK_NONE)
			continue;
		uint32_t n = m->sw_node[s];
		for (unsigned p = 1; p <= f->nodes[n].nports; p++) {
			uint32_t q = ft_peer_slot(m, s, p);
			if (q != SM_NONE && m->rank[q] == m->rank[s]) {
				snprintf(msg, msglen,
					 "ftree: switches 0x%016" PRIx64 " and 0x%016" PRIx64 " are linked but both at rank %u (CAs at different depths, or a ring): not a fat tree",
					 f->nodes[n].guid, f->nodes[m->sw_node[q]].guid, m->rank[s]);
				return -EINVAL;
			}
		}
	}
	return 0;
}

/*
 * Ranks from configured roots: BFS depth from the roots of this plane; all
 * switches with CAs must sit at the same depth H, rank = H - depth.
 */
static int rank_from_roots(struct ft_model *m, const struct ft_config *cfg, uint32_t *queue, char *msg,
			   size_t msglen)
{
	const struct sm_fabric *f = m->f;
	uint32_t qh = 0, qt = 0, leaf_depth = UINT32_MAX;
	uint32_t *depth = malloc((size_t)m->nsw * sizeof(*depth));
	int rc = 0;

	if (!depth)
		return -ENOMEM;
	for (uint32_t s = 0; s < m->nsw; s++)
		depth[s] = UINT32_MAX;
	for (uint32_t i = 0; i < cfg->n_roots; i++) {
		uint32_t n = sm_fabric_find_node(f, cfg->roots[i]);
		uint32_t s = n == SM_NONE || n >= m->n_nodes ? SM_NONE : m->slot_of_node[n];
		if (s != SM_NONE && depth[s] == UINT32_MAX) {
			depth[s] = 0;
			queue[qt++] = s;
		}
	}
	if (!qt) {
		snprintf(msg, msglen, "ftree: none of the %u configured roots is a switch of this plane", cfg->n_roots);
		rc = -ENOENT;
		goto out;
	}
	while (qh < qt) {
		uint32_t s = queue[qh++];
		for (unsigned p = 1; p <= f->nodes[m->sw_node[s]].nports; p++) {
			uint32_t q = ft_peer_slot(m, s, p);
			if (q != SM_NONE && depth[q] == UINT32_MAX) {
				depth[q] = depth[s] + 1;
				queue[qt++] = q;
			}
		}
	}
	for (uint32_t s = 0; s < m->nsw && !rc; s++) {
		uint32_t n = m->sw_node[s];
		for (unsigned p = 1; p <= f->nodes[n].nports; p++) {
			const struct sm_port *pt = sm_port(f, n, p);
			if (pt->peer_node == SM_NONE || !is_endpoint(f, pt->peer_node))
				continue;
			if (depth[s] == UINT32_MAX) {
				snprintf(msg, msglen, "ftree: switch 0x%016" PRIx64 " has CAs but no path from the configured roots",
					 f->nodes[n].guid);
				rc = -EINVAL;
			} else if (leaf_depth == UINT32_MAX) {
				leaf_depth = depth[s];
			} else if (depth[s] != leaf_depth) {
				snprintf(msg, msglen,
					 "ftree: CAs at different depths below the configured roots (switch 0x%016" PRIx64 " at %u, others at %u): not a fat tree",
					 f->nodes[n].guid, depth[s], leaf_depth);
				rc = -EINVAL;
			}
			break;
		}
	}
	if (!rc && leaf_depth == UINT32_MAX) {
		snprintf(msg, msglen, "ftree: no CA is cabled to a switch in this plane: nothing to route as a fat tree");
		rc = -ENOENT;
	}
	if (!rc && leaf_depth > FT_MAX_RANK) {
		snprintf(msg, msglen, "ftree: leaves are %u levels below the configured roots: more than %u levels", leaf_depth,
			 FT_MAX_RANK + 1);
		rc = -EINVAL;
	}
	for (uint32_t s = 0; s < m->nsw && !rc; s++) {
		if (depth[s] != UINT32_MAX && depth[s] > leaf_depth) {
			snprintf(msg, msglen, "ftree: switch 0x%016" PRIx64 " hangs below the leaves: not a fat tree",
				 f->nodes[m->sw_node[s]].guid);
			rc = -EINVAL;
		}
	}
	if (rc)
		goto out;
	m->h = (uint8_t)leaf_depth;
	m->unranked = 0;
	for (uint32_t s = 0; s < m->nsw; s++) {
		m->rank[s] = depth[s] == UINT32_MAX ? FT_RANK_NONE : (uint8_t)(leaf_depth - depth[s]);
		m->unranked += depth[s] == UINT32_MAX;
	}
	rc = check_adjacent_ranks(m, msg, msglen);
out:
	free(depth);
	return rc;
}

static int build_dirs(struct ft_model *m)
{
	const struct sm_fabric *f = m->f;
	size_t nu = 0, nd = 0;

	m->up_off = calloc((size_t)m->nsw + 1, sizeof(*m->up_off));
	m->dn_off = calloc((size_t)m->nsw + 1, sizeof(*m->dn_off));
	if (!m->up_off || !m->dn_off)
		return -ENOMEM;
	for (int pass = 0; pass < 2; pass++) {
		nu = nd = 0;
		for (uint32_t s = 0; s < m->nsw; s++) {
			uint32_t n = m->sw_node[s];
			if (pass == 0) {
				m->up_off[s] = (uint32_t)nu;
				m->dn_off[s] = (uint32_t)nd;
			}
			if (m->rank[s] == FT_RANK_NONE)
				continue;
			for (unsigned p = 1; p <= f->nodes[n].nports; p++) {
				uint32_t q = ft_peer_slot(m, s, p);
				if (q == SM_NONE)
					continue;
				if (m->rank[q] > m->rank[s]) {
					if (pass) {
						m->up_port[nu] = (uint8_t)p;
						m->up_peer[nu] = q;
					}
					nu++;
				} else {
					if (pass) {
						m->dn_port[nd] = (uint8_t)p;
						m->dn_peer[nd] = q;
					}
					nd++;
				}
			}
		}
		if (pass == 0) {
			m->up_off[m->nsw] = (uint32_t)nu;
			m->dn_off[m->nsw] = (uint32_t)nd;
			m->up_port = malloc(nu + 1);
			m->dn_port = malloc(nd + 1);
			m->up_peer = malloc((nu + 1) * sizeof(*m->up_peer));
			m->dn_peer = malloc((nd + 1) * sizeof(*m->dn_peer));
			if (!m->up_port || !m->dn_port || !m->up_peer || !m->dn_peer)
				return -ENOMEM;
		}
	}
	return 0;
}

/* Connected components of the switch graph (reachability check of the router). */
static void components(struct ft_model *m, uint32_t *queue)
{
	for (uint32_t s = 0; s < m->nsw; s++)
		m->comp[s] = SM_NONE;
	for (uint32_t s0 = 0; s0 < m->nsw; s0++) {
		if (m->comp[s0] != SM_NONE)
			continue;
		uint32_t qh = 0, qt = 0;
		m->comp[s0] = s0;
		queue[qt++] = s0;
		while (qh < qt) {
			uint32_t s = queue[qh++];
			for (uint32_t k = m->up_off[s]; k < m->up_off[s + 1]; k++)
				if (m->comp[m->up_peer[k]] == SM_NONE) {
					m->comp[m->up_peer[k]] = s0;
					queue[qt++] = m->up_peer[k];
				}
			for (uint32_t k = m->dn_off[s]; k < m->dn_off[s + 1]; k++)
				if (m->comp[m->dn_peer[k]] == SM_NONE) {
					m->comp[m->dn_peer[k]] = s0;
					queue[qt++] = m->dn_peer[k];
				}
		}
	}
}

static uint32_t uf_find(uint32_t *par, uint32_t x)
{
	while (par[x] != x) {
		par[x] = par[par[x]];
		x = par[x];
	}
	return x;
}

/* Sort record: key, then node GUID, so that the order never depends on slot (node) numbering. */
struct keyed {
	uint64_t key;
	uint64_t guid;
	uint32_t slot;
};

static int cmp_keyed(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->guid != y->guid)
		return x->guid < y->guid ? -1 : 1;
	return x->slot < y->slot ? -1 : x->slot > y->slot;
}

static int cmp_pair(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;
	return *x < *y ? -1 : *x > *y;
}

/*
 * A switch removed from a component (a pod that lost an aggregation
 * switch, a core group that lost a core) must leave a gap in its
 * children's up-slot tables, not shift the parents after it: otherwise the
 * children route by a different modulus than their siblings elsewhere and
 * the ideal routes of different pods collide above. So every component of
 * layer r gets the same number of columns: below the top, a parent's column
 * is its upper component (the core group it serves), numbered by key; at
 * the top, its position, and the most parents any component has. If two
 * parents of one component would share a column (not the shape of a fat
 * tree), positions stay as they were. kv holds the parents by key.
 */
static void align_columns(struct ft_model *m, int r, uint32_t *uf, const struct keyed *kv, uint32_t k,
			  uint32_t *ppos, uint32_t *npar)
{
	uint32_t n = m->nsw, ncol = 0;
	if (r + 1 >= m->h) {
		for (uint32_t i = 0; i < k; i++)
			if (npar[uf_find(uf, kv[i].slot)] > ncol)
				ncol = npar[uf_find(uf, kv[i].slot)];
		for (uint32_t i = 0; i < k; i++)
			npar[uf_find(uf, kv[i].slot)] = ncol;
		return;
	}
	uint32_t *up = malloc(((size_t)n + 1) * sizeof(*up));
	uint32_t *colid = malloc(((size_t)n + 1) * sizeof(*colid));
	uint64_t *pairs = malloc(((size_t)k + 1) * sizeof(*pairs));
	if (!up || !colid || !pairs)
		goto out; /* positions stay: still correct routes */
	for (uint32_t s = 0; s < n; s++) {
		up[s] = s;
		colid[s] = SM_NONE;
	}
	for (uint32_t s = 0; s < n; s++)
		if (m->rank[s] == r + 1)
			for (uint32_t e = m->up_off[s]; e < m->up_off[s + 1]; e++) {
				uint32_t a = uf_find(up, s), b = uf_find(up, m->up_peer[e]);
				if (a != b)
					up[a] = b;
			}
	for (uint32_t i = 0; i < k; i++) {
		uint32_t g = uf_find(up, kv[i].slot);
		if (colid[g] == SM_NONE)
			colid[g] = ncol++;
		pairs[i] = (uint64_t)uf_find(uf, kv[i].slot) << 32 | colid[g];
	}
	qsort(pairs, k, sizeof(*pairs), cmp_pair);
	for (uint32_t i = 1; i < k; i++)
		if (pairs[i] == pairs[i - 1])
			goto out;
	for (uint32_t i = 0; i < k; i++) {
		ppos[kv[i].slot] = colid[uf_find(up, kv[i].slot)];
		npar[uf_find(uf, kv[i].slot)] = ncol;
	}
out:
	free(up);
	free(colid);
	free(pairs);
}

/*
 * Up-slot tables. key[] orders parents the same way for all siblings:
 * top switches by node GUID, lower ranks by their smallest parent key
 * (then GUID), so a pod's aggregation switches sort by the core group they
 * serve. Never by slot: the tables must not depend on node numbering.
 */
static int build_slots(struct ft_model *m)
{
	uint32_t n = m->nsw;
	uint64_t *key = malloc(((size_t)n + 1) * sizeof(*key));
	struct keyed *kv = malloc(((size_t)n + 1) * sizeof(*kv));
	uint32_t *uf = malloc(((size_t)n + 1) * sizeof(*uf));
	uint32_t *ppos = malloc(((size_t)n + 1) * sizeof(*ppos));
	uint32_t *npar = calloc((size_t)n + 1, sizeof(*npar));   /* per component root */
	uint32_t *mult = calloc((size_t)n + 1, sizeof(*mult));   /* per component root */
	uint32_t *seen = calloc((size_t)n + 1, sizeof(*seen));
	uint32_t unom[FT_MAX_RANK + 2] = { 0 };
	int rc = -ENOMEM;

	m->slot_off = calloc((size_t)n + 1, sizeof(*m->slot_off));
	if (!key || !kv || !uf || !ppos || !npar || !mult || !seen || !m->slot_off)
		goto out;

	for (int r = m->h; r >= 0; r--) {
		uint32_t k = 0;
		for (uint32_t s = 0; s < n; s++) {
			if (m->rank[s] != r)
				continue;
			uint64_t best = UINT64_MAX;
			if (r < m->h)
				for (uint32_t e = m->up_off[s]; e < m->up_off[s + 1]; e++)
					if (key[m->up_peer[e]] < best)
						best = key[m->up_peer[e]];
			kv[k].key = r == m->h ? 0 : best;
			kv[k].guid = m->f->nodes[m->sw_node[s]].guid;
			kv[k].slot = s;
			k++;
		}
		qsort(kv, k, sizeof(*kv), cmp_keyed);
		for (uint32_t i = 0; i < k; i++)
			key[kv[i].slot] = i;
	}

	/*
	 * Per layer r <-> r+1: components (union-find over the children of rank
	 * r and their parents only, so layers never merge), parent positions,
	 * bundle width.
	 */
	for (int r = 0; r < m->h; r++) {
		for (uint32_t s = 0; s < n; s++)
			uf[s] = s;
		for (uint32_t s = 0; s < n; s++) {
			if (m->rank[s] != r)
				continue;
			for (uint32_t e = m->up_off[s]; e < m->up_off[s + 1]; e++) {
				uint32_t a = uf_find(uf, s), b = uf_find(uf, m->up_peer[e]);
				if (a != b)
					uf[a] = b;
			}
		}
		/* parents of this layer sorted by key: kv over rank r+1 */
		uint32_t k = 0;
		for (uint32_t s = 0; s < n; s++)
			if (m->rank[s] == r + 1) {
				kv[k].key = key[s];
				kv[k].guid = m->f->nodes[m->sw_node[s]].guid;
				kv[k].slot = s;
				k++;
			}
		qsort(kv, k, sizeof(*kv), cmp_keyed);
		for (uint32_t s = 0; s < n; s++)
			npar[s] = mult[s] = 0;
		for (uint32_t i = 0; i < k; i++) {
			uint32_t root = uf_find(uf, kv[i].slot);
			ppos[kv[i].slot] = npar[root]++;
		}
		align_columns(m, r, uf, kv, k, ppos, npar);
		for (uint32_t s = 0; s < n; s++) {
			if (m->rank[s] != r)
				continue;
			uint32_t root = uf_find(uf, s);
			for (uint32_t e = m->up_off[s]; e < m->up_off[s + 1]; e++)
				if (++seen[m->up_peer[e]] > mult[root])
					mult[root] = seen[m->up_peer[e]];
			for (uint32_t e = m->up_off[s]; e < m->up_off[s + 1]; e++)
				seen[m->up_peer[e]] = 0;
		}
		for (uint32_t s = 0; s < n; s++) {
			if (m->rank[s] != r || m->up_off[s] == m->up_off[s + 1])
				continue;
			uint32_t root = uf_find(uf, s);
			uint32_t u = npar[root] * mult[root];
			m->slot_off[s + 1] = u; /* counts first, prefix-summed below */
			if (u > unom[r])
				unom[r] = u;
		}
		/* first slot of each parent; a parent belongs to one layer only, so ppos stays valid */
		for (uint32_t i = 0; i < k; i++)
			ppos[kv[i].slot] *= mult[uf_find(uf, kv[i].slot)];
	}
	for (uint32_t s = 0; s < n; s++)
		m->slot_off[s + 1] += m->slot_off[s];
	m->slot_port = calloc((size_t)m->slot_off[n] + 1, 1);
	m->slot_peer = malloc(((size_t)m->slot_off[n] + 1) * sizeof(*m->slot_peer));
	if (!m->slot_port || !m->slot_peer)
		goto out;
	for (uint32_t i = 0; i < m->slot_off[n]; i++)
		m->slot_peer[i] = SM_NONE;
	for (uint32_t s = 0; s < n; s++) {
		if (m->slot_off[s] == m->slot_off[s + 1])
			continue;
		for (uint32_t e = m->up_off[s]; e < m->up_off[s + 1]; e++) {
			uint32_t p = m->up_peer[e];
			uint32_t j = ppos[p] + seen[p]++;
			if (m->slot_off[s] + j < m->slot_off[s + 1]) {
				m->slot_port[m->slot_off[s] + j] = m->up_port[e];
				m->slot_peer[m->slot_off[s] + j] = p;
			}
		}
		for (uint32_t e = m->up_off[s]; e < m->up_off[s + 1]; e++)
			seen[m->up_peer[e]] = 0;
	}
	m->div[0] = 1;
	for (int r = 0; r <= FT_MAX_RANK; r++) {
		uint64_t d = (uint64_t)m->div[r] * (unom[r] ? unom[r] : 1);
		m->div[r + 1] = d > UINT32_MAX ? UINT32_MAX : (uint32_t)d;
	}
	rc = 0;
out:
	free(key);
	free(kv);
	free(uf);
	free(ppos);
	free(npar);
	free(mult);
	free(seen);
	return rc;
}

/* Leaf slot of an endpoint port that is routed (has a LID, cabled to a switch of the plane). */
static uint32_t host_leaf(const struct ft_model *m, const struct sm_port *pt)
{
	if (!pt->lid || pt->peer_node == SM_NONE || pt->peer_node >= m->n_nodes)
		return SM_NONE;
	return m->slot_of_node[pt->peer_node];
}

/* Destination switch s enters the routing order (once) and counts the LIDs of port pt. */
static void add_target(struct ft_model *m, uint8_t *is_tgt, uint32_t s, const struct sm_port *pt, unsigned top_lid)
{
	if (!is_tgt[s]) {
		is_tgt[s] = 1;
		m->tgt_order[m->n_tgt++] = s;
	}
	for (unsigned k = 0; k < (1u << pt->lmc); k++)
		if ((unsigned)pt->lid + k <= top_lid)
			m->dest_off[s + 1]++;
}

/*
 * The stable host index of each canonical position i (model.h) into
 * idx[i]; returns the size of the index space. Hosts of one leaf are
 * contiguous in hp, by leaf port.
 */
static uint32_t host_indices(const struct ft_model *m, const uint32_t *hp, uint32_t nh, uint32_t *idx)
{
	const struct sm_fabric *f = m->f;
	uint8_t used[256] = { 0 };
	uint32_t prank[256], nominal = 0, cnt = 0, nports = 0, nleaf = 0, prev = SM_NONE;

	for (uint32_t i = 0; i < nh; i++) {
		const struct sm_port *pt = &f->ports[hp[i]];
		uint32_t s = host_leaf(m, pt);
		if (s != prev) {
			prev = s;
			cnt = 0;
			nleaf++;
		}
		if (++cnt > nominal)
			nominal = cnt;
		nports += !used[pt->peer_port];
		used[pt->peer_port] = 1;
	}
	if (nports != nominal) {
		/* leaves use different ports for their hosts: no common layout, canonical positions */
		for (uint32_t i = 0; i < nh; i++)
			idx[i] = i;
		return nh;
	}
	for (uint32_t p = 0, r = 0; p < 256; p++) {
		prank[p] = r;
		r += used[p];
	}
	prev = SM_NONE;
	for (uint32_t i = 0, leaf = 0; i < nh; i++) {
		const struct sm_port *pt = &f->ports[hp[i]];
		uint32_t s = host_leaf(m, pt);
		if (s != prev && prev != SM_NONE)
			leaf++;
		prev = s;
		idx[i] = leaf * nominal + prank[pt->peer_port];
	}
	return nleaf * nominal;
}

static int build_dests(struct ft_model *m, unsigned plane, const struct sm_lfts *out)
{
	const struct sm_fabric *f = m->f;
	uint32_t n = m->nsw;
	uint32_t *hp = NULL;          /* host port indices, canonical order */
	uint32_t *hidx = NULL;        /* their stable indices */
	struct keyed *sorted = NULL;  /* switch slots by GUID */
	uint32_t *swpos = NULL;       /* [nsw] position of a switch in sorted */
	uint8_t *is_tgt = calloc((size_t)n + 1, 1);
	uint32_t *cur = calloc((size_t)n + 1, sizeof(*cur));
	int rc = -ENOMEM;
	uint32_t unom0 = m->div[1] / m->div[0];
	uint32_t nh = 0;

	m->dest_off = calloc((size_t)n + 1, sizeof(*m->dest_off));
	m->tgt_order = malloc(((size_t)n + 1) * sizeof(*m->tgt_order));
	m->hlo = calloc((size_t)n + 1, sizeof(*m->hlo));
	m->hhi = calloc((size_t)n + 1, sizeof(*m->hhi));
	if (!is_tgt || !cur || !m->dest_off || !m->tgt_order || !m->hlo || !m->hhi)
		goto out;

	/* routed endpoint ports: with a LID, cabled to a switch of the plane */
	for (int pass = 0; pass < 2; pass++) {
		nh = 0;
		for (uint32_t nd = 0; nd < f->n_nodes; nd++) {
			if (!is_endpoint(f, nd) || f->nodes[nd].plane != plane)
				continue;
			for (unsigned p = 1; p <= f->nodes[nd].nports; p++)
				if (host_leaf(m, sm_port(f, nd, p)) != SM_NONE) {
					if (pass)
						hp[nh] = sm_port_index(f, nd, p);
					nh++;
				}
		}
		if (!pass && !(hp = malloc(((size_t)nh + 1) * sizeof(*hp))))
			goto out;
	}
	/*
	 * Destination indices follow the canonical host order the evaluator uses
	 * for shift permutations (metrics.h): leaves grouped by pod, by GUID,
	 * hosts by leaf port. A leaf's hosts are contiguous in it, so leaves
	 * enter the routing order at their first host.
	 */
	rc = sm_metrics_host_order(f, plane, hp, nh);
	if (rc)
		goto out;
	rc = -ENOMEM;
	if (!(hidx = malloc(((size_t)nh + 1) * sizeof(*hidx))))
		goto out;
	m->n_idx = host_indices(m, hp, nh, hidx);
	for (uint32_t i = 0; i < nh; i++) {
		uint32_t s = host_leaf(m, &f->ports[hp[i]]);
		add_target(m, is_tgt, s, &f->ports[hp[i]], out->top_lid);
		if (m->hlo[s] == m->hhi[s])
			m->hlo[s] = hidx[i];
		m->hhi[s] = hidx[i] + 1;
	}
	m->n_hosts = nh;
	/* switch LIDs: the other destination switches by GUID */
	sorted = malloc(((size_t)n + 1) * sizeof(*sorted));
	swpos = malloc(((size_t)n + 1) * sizeof(*swpos));
	if (!sorted || !swpos)
		goto out;
	for (uint32_t s = 0; s < n; s++)
		sorted[s] = (struct keyed){ f->nodes[m->sw_node[s]].guid, 0, s };
	qsort(sorted, n, sizeof(*sorted), cmp_keyed);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t s = sorted[i].slot;
		const struct sm_port *pt = sm_port(f, m->sw_node[s], 0);
		swpos[s] = i;
		if (pt->lid)
			add_target(m, is_tgt, s, pt, out->top_lid);
	}
	for (uint32_t s = 0; s < n; s++)
		m->dest_off[s + 1] += m->dest_off[s];
	m->n_dest = m->dest_off[n];
	m->dest = malloc(((size_t)m->n_dest + 1) * sizeof(*m->dest));
	if (!m->dest)
		goto out;
	for (uint32_t s = 0; s < n; s++)
		cur[s] = m->dest_off[s];

	/* fill, hosts first (index = stable index of the canonical position) */
	for (uint32_t h = 0; h < nh; h++) {
		const struct sm_port *pt = &f->ports[hp[h]];
		uint32_t s = host_leaf(m, pt);
		/* spread the LIDs of an LMC range over different uplinks */
		uint32_t step = unom0 >> pt->lmc;
		if (!step)
			step = 1;
		for (unsigned i = 0; i < (1u << pt->lmc); i++) {
			if ((unsigned)pt->lid + i > out->top_lid)
				break;
			struct ft_dest *d = &m->dest[cur[s]++];
			d->lid = (uint16_t)(pt->lid + i);
			d->port = pt->peer_port;
			d->pad = 0;
			d->idx = hidx[h] + i * step;
		}
	}
	for (uint32_t s = 0; s < n; s++) {
		const struct sm_port *pt = sm_port(f, m->sw_node[s], 0);
		if (!pt->lid)
			continue;
		for (unsigned i = 0; i < (1u << pt->lmc); i++) {
			if ((unsigned)pt->lid + i > out->top_lid)
				break;
			struct ft_dest *d = &m->dest[cur[s]++];
			d->lid = (uint16_t)(pt->lid + i);
			d->port = 0;
			d->pad = 0;
			d->idx = m->n_idx + swpos[s] + i;
		}
	}
	rc = 0;
out:
	free(sorted);
	free(swpos);
	free(hp);
	free(hidx);
	free(is_tgt);
	free(cur);
	return rc;
}

int ft_model_build(struct ft_model *m, const struct sm_fabric *f, unsigned plane,
		   const struct sm_lfts *out, const struct ft_config *cfg, char *msg, size_t msglen)
{
	uint32_t *queue = NULL;
	int rc;

	memset(m, 0, sizeof(*m));
	m->f = f;
	m->nsw = out->n_switches;
	m->sw_node = out->sw_node;
	m->slot_of_node = out->slot_of_node;
	m->n_nodes = out->n_nodes;
	if (!m->nsw) {
		snprintf(msg, msglen, "ftree: plane %u has no switch", plane);
		return -ENOENT;
	}
	m->rank = malloc(m->nsw);
	m->comp = malloc((size_t)m->nsw * sizeof(*m->comp));
	queue = malloc((size_t)m->nsw * sizeof(*queue));
	rc = -ENOMEM;
	if (!m->rank || !m->comp || !queue)
		goto fail;
	if (cfg && cfg->n_roots)
		rc = rank_from_roots(m, cfg, queue, msg, msglen);
	else
		rc = rank_switches(m, queue, msg, msglen);
	if (rc)
		goto fail;
	rc = build_dirs(m);
	if (rc)
		goto fail;
	components(m, queue);
	m->by_rank = malloc((size_t)m->nsw * sizeof(*m->by_rank));
	rc = -ENOMEM;
	if (!m->by_rank)
		goto fail;
	/* ranks ascending, then node GUID: routing decisions never depend on node numbering */
	struct keyed *kv = malloc((size_t)m->nsw * sizeof(*kv));
	if (!kv)
		goto fail;
	for (uint32_t s = 0; s < m->nsw; s++)
		kv[s] = (struct keyed){ m->rank[s], f->nodes[m->sw_node[s]].guid, s };
	qsort(kv, m->nsw, sizeof(*kv), cmp_keyed);
	for (uint32_t s = 0; s < m->nsw; s++)
		m->by_rank[s] = kv[s].slot;
	free(kv);
	rc = build_slots(m);
	if (rc)
		goto fail;
	rc = build_dests(m, plane, out);
	if (rc)
		goto fail;
	/* host ranges of the switches above the leaves (pods are contiguous in the canonical order) */
	for (uint32_t k = 0; k < m->nsw; k++) {
		uint32_t s = m->by_rank[k];
		if (m->rank[s] == 0 || m->rank[s] == FT_RANK_NONE)
			continue;
		for (uint32_t e = m->dn_off[s]; e < m->dn_off[s + 1]; e++) {
			uint32_t c = m->dn_peer[e];
			if (m->hlo[c] == m->hhi[c])
				continue;
			if (m->hlo[s] == m->hhi[s] || m->hlo[c] < m->hlo[s])
				m->hlo[s] = m->hlo[c];
			if (m->hhi[c] > m->hhi[s])
				m->hhi[s] = m->hhi[c];
		}
	}
	free(queue);
	return 0;
fail:
	if (rc == -ENOMEM)
		snprintf(msg, msglen, "ftree: out of memory");
	free(queue);
	ft_model_free(m);
	return rc;
}
