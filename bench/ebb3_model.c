/* SPDX-License-Identifier: MIT */
/*
 * DOC: ebb3_model: where a routing's EBB is lost on a degraded fat tree of 3 levels
 *
 * ebb3_model TOPO LFTS [--perms N] [--seed S] [--ideal TOPO0 LFTS0] [--decoupled] [--shift]
 * TOPO: a fat tree (ibnetdiscover dump, e.g. `smctl topo gen fat-tree
 * --levels 3 --remove-links 0.03`); LFTS: a dump_lfts text of it (smd
 * --dry-run --lfts-out). The flows of N random permutations (seed S, the
 * canonical host order of metrics.h: seed 0 and 100 permutations give the
 * report's `ebb` exactly) are walked through the tables and each switch
 * link is put in a level by the ranks of its ends: leaf-agg up (LA),
 * agg-core up (AC), core-agg down (CA), agg-leaf down (AL). Printed:
 *  - the EBB (a flow's share: 1 / the most flows on a switch link of its
 *    path, metrics.c), and the EBB counting only one level's links, or
 *    every level but one: where the shares are lost;
 *  - with --ideal (the complete tree of the same shape and its tables,
 *    e.g. the generator's tree with --remove-links 0): for every (source
 *    leaf, destination host) whether the route is the complete tree's
 *    (ideal), or moved because a link of the ideal path is missing
 *    (forced, by the level of the first missing link), or moved though
 *    the ideal path is whole (chosen, by the level of the first hop that
 *    differs); in source hosts, and the EBB of the flows of each kind;
 *  - with --decoupled, the same for a model that is not a routing (see
 *    decoupled()) instead of the tables: each level balanced on its own;
 *  - with --shift, the worst load of any link over all N - 1 shift
 *    permutations (the report's shift congestion), per level, and the
 *    first (shift, link) pairs where it is met.
 * BENCHMARKS.md "Session 9, ebb3".
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/mix.h"
#include "model/fabric.h"
#include "model/lft_file.h"
#include "model/lfts.h"
#include "model/topo.h"
#include "routing/metrics.h"

#define MAXP 8      /* links of a path kept */
#define NLV 5       /* LA, AC, CA, AL, other */

static const char *const lvname[NLV] = { "LA up", "AC up", "CA down", "AL down", "other" };

struct net {
	struct sm_fabric *f;
	struct sm_lfts *l;
	uint32_t n;          /* hosts, canonical order */
	uint32_t *hport;     /* [n] CA port index */
	uint32_t *hleaf;     /* [n] leaf node */
	uint8_t *rank;       /* [nodes] 0 leaf, 1, 2, ...; 0xff: not a switch */
};

static int net_load(struct net *t, const char *topo, const char *lfts)
{
	struct sm_topo_err te = { { 0 }, 0 };
	struct sm_lftfile *lf = NULL;
	char err[256];
	uint32_t matched = 0;

	memset(t, 0, sizeof(*t));
	t->f = sm_fabric_new();
	if (!t->f)
		return -ENOMEM;
	if (sm_topo_load(t->f, topo, SM_TOPO_AUTO, 0, &te)) {
		fprintf(stderr, "ebb3_model: %s\n", te.msg);
		return -EINVAL;
	}
	const struct sm_fabric *f = t->f;
	t->l = sm_lfts_new(f, 0);
	if (!t->l)
		return -ENOMEM;
	if (sm_lftfile_load(lfts, &lf, err, sizeof(err)) || sm_lftfile_apply(lf, f, t->l, &matched, err, sizeof(err))) {
		fprintf(stderr, "ebb3_model: %s\n", err);
		sm_lftfile_free(lf);
		return -EINVAL;
	}
	sm_lftfile_free(lf);
	uint32_t nca = 0;
	for (uint32_t v = 0; v < f->n_nodes; v++)
		nca += f->nodes[v].type != SM_NODE_SWITCH ? f->nodes[v].nports : 0;
	t->hport = malloc(((size_t)nca + 1) * sizeof(*t->hport));
	t->hleaf = malloc(((size_t)nca + 1) * sizeof(*t->hleaf));
	t->rank = malloc((size_t)f->n_nodes + 1);
	uint32_t *q = malloc(((size_t)f->n_nodes + 1) * sizeof(*q));
	if (!t->hport || !t->hleaf || !t->rank || !q) {
		free(q);
		return -ENOMEM;
	}
	for (uint32_t v = 0; v < f->n_nodes; v++)
		for (unsigned p = 1; f->nodes[v].type == SM_NODE_CA && !f->nodes[v].plane && p <= f->nodes[v].nports; p++)
			if (sm_port(f, v, p)->lid)
				t->hport[t->n++] = sm_port_index(f, v, p);
	int rc = sm_metrics_host_order(f, 0, t->hport, t->n);
	if (rc) {
		free(q);
		return rc;
	}
	memset(t->rank, 0xff, f->n_nodes);
	uint32_t qh = 0, qt = 0;
	for (uint32_t i = 0; i < t->n; i++) {
		uint32_t leaf = f->ports[t->hport[i]].peer_node;
		t->hleaf[i] = leaf;
		if (leaf != SM_NONE && t->rank[leaf] == 0xff) {
			t->rank[leaf] = 0;
			q[qt++] = leaf;
		}
	}
	while (qh < qt) {
		uint32_t v = q[qh++];
		for (unsigned p = 1; p <= f->nodes[v].nports; p++) {
			uint32_t w = sm_port(f, v, p)->peer_node;
			if (w != SM_NONE && f->nodes[w].type == SM_NODE_SWITCH && t->rank[w] == 0xff) {
				t->rank[w] = (uint8_t)(t->rank[v] + 1);
				q[qt++] = w;
			}
		}
	}
	free(q);
	return 0;
}

static void net_free(struct net *t)
{
	sm_lfts_free(t->l);
	sm_fabric_free(t->f);
	free(t->hport);
	free(t->hleaf);
	free(t->rank);
}

static int level_of(const struct net *t, uint32_t a, uint32_t b)
{
	if (t->rank[b] == t->rank[a] + 1)
		return t->rank[a] == 0 ? 0 : t->rank[a] == 1 ? 1 : 4;
	if (t->rank[a] == t->rank[b] + 1)
		return t->rank[b] == 0 ? 3 : t->rank[b] == 1 ? 2 : 4;
	return 4;
}

/* The path from leaf s to host h: egress port indices of switch links, -1 if not delivered. */
static int walk(const struct net *t, uint32_t s, uint32_t h, uint32_t *pi)
{
	const struct sm_fabric *f = t->f;
	uint16_t lid = f->ports[t->hport[h]].lid;
	int n = 0;
	for (uint32_t v = s; n <= MAXP;) {
		uint8_t p = sm_lfts_get(t->l, v, lid);
		if (!p || p > f->nodes[v].nports)
			return -1;
		const struct sm_port *pt = sm_port(f, v, p);
		if (pt->peer_node == SM_NONE)
			return -1;
		if (f->nodes[pt->peer_node].type != SM_NODE_SWITCH)
			return sm_port_index(f, pt->peer_node, pt->peer_port) == t->hport[h] ? n : -1;
		if (n == MAXP)
			return -1;
		pi[n++] = sm_port_index(f, v, p);
		v = pt->peer_node;
	}
	return -1;
}


/*
 * Not a routing: each level's links balanced alone, the labels of one flow
 * independent of each other (its agg-core link need not be on the plane
 * of its leaf uplink, nor its core-agg link on the plane of its agg-leaf
 * link). Source leaf S: its destinations in balanced classes over its
 * uplinks; agg A: its destinations outside the pod over its core links;
 * pod P: its hosts over the core-agg links into P; leaf T: its hosts over
 * its agg links. What the cabling forces at each level alone (--decoupled).
 */
static int decoupled(const struct net *t, const uint32_t *leaves, uint32_t nleaf, uint32_t *path, int8_t *plen)
{
	const struct sm_fabric *f = t->f;
	uint32_t n = t->n, nn = f->n_nodes;
	uint32_t *pod = malloc(((size_t)nn + 1) * sizeof(*pod)), *q = malloc(((size_t)nn + 1) * sizeof(*q));
	uint32_t *pfirst = calloc((size_t)nn + 1, sizeof(*pfirst));
	uint32_t *lfirst = calloc((size_t)nn + 1, sizeof(*lfirst));
	uint32_t *lst = malloc(((size_t)f->n_ports + 1) * sizeof(*lst)), *off = calloc(4 * ((size_t)nn + 1), sizeof(*off));
	if (!pod || !q || !pfirst || !lfirst || !lst || !off) {
		free(pod), free(q), free(pfirst), free(lfirst), free(lst), free(off);
		return -ENOMEM;
	}
	/* pods: components over leaf-agg links */
	for (uint32_t v = 0; v < nn; v++)
		pod[v] = SM_NONE;
	for (uint32_t v = 0; v < nn; v++) {
		if (t->rank[v] != 0 || pod[v] != SM_NONE)
			continue;
		uint32_t qh = 0, qt = 0;
		pod[v] = v;
		q[qt++] = v;
		while (qh < qt) {
			uint32_t u = q[qh++];
			for (unsigned p = 1; p <= f->nodes[u].nports; p++) {
				uint32_t w = sm_port(f, u, p)->peer_node;
				if (w != SM_NONE && t->rank[w] <= 1 && t->rank[u] + t->rank[w] == 1 && pod[w] == SM_NONE) {
					pod[w] = v;
					q[qt++] = w;
				}
			}
		}
	}
	for (uint32_t h = n; h-- > 0;) {
		pfirst[pod[t->hleaf[h]]] = h;
		lfirst[t->hleaf[h]] = h;
	}
	/* link lists, CSR in off[4 * v + kind]: 0 leaf up, 1 agg up, 2 core-agg links into pod v, 3 agg links down into leaf v */
	uint32_t *cnt = off, total = 0;
	for (int pass = 0; pass < 2; pass++) {
		if (pass) {
			for (size_t i = 0, acc = 0; i < 4 * (size_t)nn; i++) {
				uint32_t c2 = cnt[i];
				cnt[i] = (uint32_t)acc;
				acc += c2;
			}
		}
		uint32_t *fill = pass ? calloc(4 * ((size_t)nn + 1), sizeof(*fill)) : NULL;
		if (pass && !fill)
			break;
		for (uint32_t v = 0; v < nn; v++)
			for (unsigned p = 1; t->rank[v] != 0xff && p <= f->nodes[v].nports; p++) {
				uint32_t w = sm_port(f, v, p)->peer_node;
				if (w == SM_NONE || t->rank[w] == 0xff)
					continue;
				size_t key;
				if (t->rank[v] == 0 && t->rank[w] == 1)
					key = 4 * (size_t)v;
				else if (t->rank[v] == 1 && t->rank[w] == 2)
					key = 4 * (size_t)v + 1;
				else if (t->rank[v] == 2 && t->rank[w] == 1)
					key = 4 * (size_t)pod[w] + 2;
				else if (t->rank[v] == 1 && t->rank[w] == 0)
					key = 4 * (size_t)w + 3;
				else
					continue;
				if (pass)
					lst[cnt[key] + fill[key]++] = sm_port_index(f, v, p);
				else {
					cnt[key]++;
					total++;
				}
			}
		if (pass) {
			for (size_t i = 0; i < 4 * (size_t)nn; i++)
				fill[i] += cnt[i]; /* end of each list */
			/* list of key: lst[cnt[key] .. fill[key]) */
			for (uint32_t s = 0; s < nleaf; s++)
				for (uint32_t h = 0; h < n; h++) {
					size_t k = (size_t)s * n + h;
					uint32_t S = leaves[s], T = t->hleaf[h];
					int len = 0;
					plen[k] = 0;
					if (S == T)
						continue;
					uint32_t *pp = path + k * MAXP;
					size_t a = 4 * (size_t)S, b = 4 * (size_t)T + 3;
					uint32_t nu = fill[a] - cnt[a], nd = fill[b] - cnt[b];
					if (!nu || !nd) {
						plen[k] = -1;
						continue;
					}
					uint32_t mix = (uint32_t)((h * 2654435761u) >> 7);
					pp[len++] = lst[cnt[a] + mix % nu];
					if (pod[S] != pod[T]) {
						uint32_t A = f->ports[pp[0]].peer_node;
						size_t c = 4 * (size_t)A + 1, e = 4 * (size_t)pod[T] + 2;
						uint32_t nc = fill[c] - cnt[c], ne = fill[e] - cnt[e];
						if (!nc || !ne) {
							plen[k] = -1;
							continue;
						}
						uint32_t mix2 = (uint32_t)((h * 40503u + 977u) % 65521u);
						pp[len++] = lst[cnt[c] + mix2 % nc];
						pp[len++] = lst[cnt[e] + (h - pfirst[pod[T]]) % ne];
					}
					pp[len++] = lst[cnt[b] + (h - lfirst[T]) % nd];
					plen[k] = (int8_t)len;
				}
			free(fill);
		}
	}
	(void)total;
	free(pod), free(q), free(pfirst), free(lfirst), free(lst), free(off);
	return 0;
}

/* kinds of a route against the ideal: 0 ideal, 1 .. NLV forced (level + 1), NLV + 1 .. chosen, 2 NLV + 1 unknown */
#define NKIND (2 * NLV + 2)

int main(int argc, char **argv)
{
	unsigned nperm = 100;
	uint64_t seed = 0;
	const char *itopo = NULL, *ilfts = NULL;
	static const struct option lo[] = { { "perms", 1, 0, 'P' }, { "seed", 1, 0, 's' }, { "ideal", 1, 0, 'i' }, { "decoupled", 0, 0, 'd' }, { "shift", 0, 0, 'S' }, { 0, 0, 0, 0 } };
	int dec = 0, shift = 0;
	int c;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (c == 'P')
			nperm = (unsigned)strtoul(optarg, NULL, 0);
		else if (c == 's')
			seed = strtoull(optarg, NULL, 0);
		else if (c == 'd')
			dec = 1;
		else if (c == 'S')
			shift = 1;
		else if (c == 'i' && optind < argc) {
			itopo = optarg;
			ilfts = argv[optind++];
		} else
			goto usage;
	}
	if (argc - optind != 2)
		goto usage;
	struct net t, id;
	uint32_t *leaf_ix = NULL, *leaves = NULL, *path = NULL, *lv = NULL, *perm = NULL, *cnt = NULL;
	int8_t *plen = NULL;
	uint8_t *kind = NULL;
	memset(&t, 0, sizeof(t));
	memset(&id, 0, sizeof(id));
	int status = 1;
	if (net_load(&t, argv[optind], argv[optind + 1]) || (itopo && net_load(&id, itopo, ilfts)))
		goto out;
	const struct sm_fabric *f = t.f;
	uint32_t n = t.n, nleaf = 0;
	leaf_ix = calloc((size_t)f->n_nodes + 1, sizeof(*leaf_ix));
	leaves = malloc(((size_t)n + 1) * sizeof(*leaves));
	if (!leaf_ix || !leaves)
		goto out;
	for (uint32_t v = 0; v < f->n_nodes; v++)
		leaf_ix[v] = SM_NONE;
	for (uint32_t i = 0; i < n; i++)
		if (leaf_ix[t.hleaf[i]] == SM_NONE) {
			leaf_ix[t.hleaf[i]] = nleaf;
			leaves[nleaf++] = t.hleaf[i];
		}
	/* paths[(leaf * n + h) * MAXP ..], plen: links (-1 not routed) */
	path = malloc(((size_t)nleaf * n * MAXP + 1) * sizeof(*path));
	plen = malloc((size_t)nleaf * n + 1);
	kind = calloc((size_t)nleaf * n + 1, 1);
	lv = malloc(((size_t)f->n_ports + 1) * sizeof(*lv));
	if (!path || !plen || !kind || !lv)
		goto out;
	for (uint32_t pi = 0; pi < f->n_ports; pi++) {
		const struct sm_port *pt = &f->ports[pi];
		lv[pi] = pt->peer_node == SM_NONE || f->nodes[pt->node].type != SM_NODE_SWITCH ||
				 f->nodes[pt->peer_node].type != SM_NODE_SWITCH
			 ? NLV - 1
			 : (uint32_t)level_of(&t, pt->node, pt->peer_node);
	}
	uint32_t unrouted = 0;
	for (uint32_t s = 0; s < nleaf; s++)
		for (uint32_t h = 0; h < n; h++) {
			size_t k = (size_t)s * n + h;
			int len = t.hleaf[h] == leaves[s] ? 0 : walk(&t, leaves[s], h, path + k * MAXP);
			plen[k] = (int8_t)len;
			unrouted += len < 0;
		}
	if (dec && decoupled(&t, leaves, nleaf, path, plen))
		goto out;
	/* routes against the ideal tables */
	double kind_hosts[NKIND] = { 0 };
	if (itopo) {
		uint32_t ipath[MAXP];
		for (uint32_t s = 0; s < nleaf; s++) {
			uint32_t s0 = sm_guid_map_get(&id.f->node_by_guid, f->nodes[leaves[s]].guid);
			uint32_t hs = 0;
			for (uint32_t h = 0; h < n; h++)
				hs += t.hleaf[h] == leaves[s];
			for (uint32_t h = 0; h < n; h++) {
				size_t k = (size_t)s * n + h;
				if (t.hleaf[h] == leaves[s] || plen[k] < 0)
					continue;
				uint32_t hp0 = sm_guid_map_get(&id.f->port_by_guid, f->ports[t.hport[h]].guid), h0 = SM_NONE;
				for (uint32_t j = 0; j < id.n && hp0 != SM_NONE; j++)
					if (id.hport[(h + j) % id.n] == hp0) {
						h0 = (h + j) % id.n;
						break;
					}
				int il = s0 == SM_NONE || h0 == SM_NONE ? -1 : walk(&id, s0, h0, ipath);
				uint8_t kd = NKIND - 1;
				if (il >= 0) {
					kd = 0;
					/* follow the ideal hops in the degraded fabric */
					for (int j = 0; j < il && kd == 0; j++) {
						const struct sm_port *ip = &id.f->ports[ipath[j]];
						uint64_t g = id.f->nodes[ip->node].guid;
						unsigned port = ipath[j] - id.f->nodes[ip->node].port0;
						uint32_t v = sm_guid_map_get(&f->node_by_guid, g);
						const struct sm_port *dp = v == SM_NONE ? NULL : sm_port(f, v, port);
						int lvl = level_of(&id, ip->node, ip->peer_node);
						if (!dp || dp->peer_node == SM_NONE ||
						    f->nodes[dp->peer_node].guid != id.f->nodes[ip->peer_node].guid)
							kd = (uint8_t)(1 + lvl); /* forced: the ideal link is missing */
					}
					if (kd == 0) {
						int same = il == plen[k];
						for (int j = 0; j < il && same; j++) {
							const struct sm_port *ip = &id.f->ports[ipath[j]];
							const struct sm_port *dp = &f->ports[path[k * MAXP + j]];
							if (f->nodes[dp->node].guid != id.f->nodes[ip->node].guid ||
							    path[k * MAXP + j] - f->nodes[dp->node].port0 != ipath[j] - id.f->nodes[ip->node].port0) {
								kd = (uint8_t)(1 + NLV + level_of(&id, ip->node, ip->peer_node));
								same = 0;
							}
						}
						if (same && il != plen[k])
							kd = NKIND - 1;
						else if (!same && kd == 0)
							kd = NKIND - 1;
					}
				}
				kind[k] = kd;
				kind_hosts[kd] += hs;
			}
		}
	}
	perm = malloc(((size_t)n + 1) * sizeof(*perm));
	cnt = calloc((size_t)f->n_ports + 1, sizeof(*cnt));
	if (!perm || !cnt)
		goto out;
	if (shift) {
		/* all N - 1 shifts (host i to host i + k): the worst load per level, then where it is met */
		uint32_t worst[NLV] = { 0 }, top = 0, shown = 0;
		for (int pass = 0; pass < 2; pass++)
			for (uint32_t k = 1; k < n; k++) {
				for (uint32_t i = 0; i < n; i++) {
					size_t q = (size_t)leaf_ix[t.hleaf[i]] * n + (i + k) % n;
					for (int j = 0; j < plen[q]; j++)
						cnt[path[q * MAXP + j]]++;
				}
				for (uint32_t i = 0; i < n; i++) {
					size_t q = (size_t)leaf_ix[t.hleaf[i]] * n + (i + k) % n;
					for (int j = 0; j < plen[q]; j++) {
						uint32_t pi = path[q * MAXP + j], c2 = cnt[pi];
						if (!pass && c2 > worst[lv[pi]])
							worst[lv[pi]] = c2;
						if (pass && c2 == top && top > 1 && shown++ < 12)
							printf("  shift %u: %u flows on %s port %u (%s), e.g. host %u to host %u\n", k, c2,
							       f->nodes[f->ports[pi].node].desc, pi - f->nodes[f->ports[pi].node].port0,
							       lvname[lv[pi]], i, (i + k) % n);
					}
				}
				for (uint32_t i = 0; i < n; i++) {
					size_t q = (size_t)leaf_ix[t.hleaf[i]] * n + (i + k) % n;
					for (int j = 0; j < plen[q]; j++)
						cnt[path[q * MAXP + j]] = 0;
				}
				if (!pass && k == n - 1) {
					for (int L = 0; L < NLV; L++)
						top = worst[L] > top ? worst[L] : top;
					printf("shift congestion %u: LA up %u, AC up %u, CA down %u, AL down %u; where it is met:\n", top,
					       worst[0], worst[1], worst[2], worst[3]);
				}
			}
	}
	/* sums: [0] all, [1 + L] only level L, [1 + NLV + L] all but level L */
	double sum[1 + 2 * NLV] = { 0 }, ksum[NKIND] = { 0 }, kflows[NKIND] = { 0 }, load_hist[NLV][8] = { { 0 } };
	for (unsigned pp = 0; pp < nperm; pp++) {
		for (uint32_t i = 0; i < n; i++)
			perm[i] = i;
		for (uint32_t i = n - 1; i > 0; i--) {
			uint32_t j = (uint32_t)(sm_splitmix64(&seed) % ((uint64_t)i + 1)), v = perm[i];
			perm[i] = perm[j];
			perm[j] = v;
		}
		for (uint32_t i = 0; i < n; i++) {
			size_t k = (size_t)leaf_ix[t.hleaf[i]] * n + perm[i];
			for (int j = 0; perm[i] != i && j < plen[k]; j++)
				cnt[path[k * MAXP + j]]++;
		}
		double ps[1 + 2 * NLV] = { 0 };
		uint32_t flows = 0;
		for (uint32_t i = 0; i < n; i++) {
			if (perm[i] == i)
				continue;
			flows++;
			size_t k = (size_t)leaf_ix[t.hleaf[i]] * n + perm[i];
			if (plen[k] < 0)
				continue;
			uint32_t w = 1, wl[NLV] = { 1, 1, 1, 1, 1 };
			for (int j = 0; j < plen[k]; j++) {
				uint32_t pi = path[k * MAXP + j], c2 = cnt[pi];
				if (c2 > w)
					w = c2;
				if (c2 > wl[lv[pi]])
					wl[lv[pi]] = c2;
				load_hist[lv[pi]][c2 < 7 ? c2 : 7]++;
			}
			ps[0] += 1.0 / w;
			for (int L = 0; L < NLV; L++) {
				uint32_t wo = 1;
				for (int M = 0; M < NLV; M++)
					if (M != L && wl[M] > wo)
						wo = wl[M];
				ps[1 + L] += 1.0 / wl[L];
				ps[1 + NLV + L] += 1.0 / wo;
			}
			ksum[kind[k]] += 1.0 / w;
			kflows[kind[k]]++;
		}
		for (int e = 0; e < 1 + 2 * NLV; e++)
			sum[e] += flows ? ps[e] / flows : 1.0;
		for (uint32_t i = 0; i < n; i++) {
			size_t k = (size_t)leaf_ix[t.hleaf[i]] * n + perm[i];
			for (int j = 0; perm[i] != i && j < plen[k]; j++)
				cnt[path[k * MAXP + j]] = 0;
		}
	}
	double np = nperm ? nperm : 1;
	printf("hosts %u, leaves %u, unrouted (leaf, host) %u; %u permutations\n", n, nleaf, unrouted, nperm);
	printf("ebb %.5f\n", sum[0] / np);
	for (int L = 0; L < NLV - 1; L++) {
		double fl = 0;
		for (int c2 = 1; c2 < 8; c2++)
			fl += load_hist[L][c2];
		printf("%-8s only %.5f  all but %.5f  flow-links at load 1/2/3/4+: %.3f %.3f %.3f %.3f\n", lvname[L],
		       sum[1 + L] / np, sum[1 + NLV + L] / np, fl ? load_hist[L][1] / fl : 0, fl ? load_hist[L][2] / fl : 0,
		       fl ? load_hist[L][3] / fl : 0, fl ? (fl - load_hist[L][1] - load_hist[L][2] - load_hist[L][3]) / fl : 0);
	}
	if (itopo) {
		double all = 0;
		for (int k = 0; k < NKIND; k++)
			all += kind_hosts[k];
		printf("routes (share of source-host x destination pairs, EBB of their flows):\n");
		for (int k = 0; k < NKIND; k++) {
			if (!kind_hosts[k] && !kflows[k])
				continue;
			const char *what = k == 0 ? "ideal" : k <= NLV ? "forced" : k < NKIND - 1 ? "chosen" : "unmatched";
			printf("  %-9s %-8s %.4f  ebb %.4f\n", what, k == 0 || k == NKIND - 1 ? "" : lvname[(k - 1) % NLV],
			       all ? kind_hosts[k] / all : 0, kflows[k] ? ksum[k] / kflows[k] : 0);
		}
	}
	status = 0;
out:
	free(leaf_ix);
	free(leaves);
	free(path);
	free(plen);
	free(kind);
	free(lv);
	free(perm);
	free(cnt);
	net_free(&t);
	net_free(&id);
	return status;
usage:
	fprintf(stderr, "usage: ebb3_model TOPO LFTS [--perms N] [--seed S] [--ideal TOPO0 LFTS0] [--decoupled] [--shift]\n");
	return 2;
}
