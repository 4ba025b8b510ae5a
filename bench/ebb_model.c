/* SPDX-License-Identifier: MIT */
/*
 * DOC: ebb_model: what destination routings reach on a degraded 2-level tree
 *
 * ebb_model TOPO [--perms N] [--seed S] [--lfts FILE]
 * TOPO: a 2-level fat tree (ibnetdiscover dump, e.g. `smctl topo gen
 * fat-tree --levels 2 --remove-links 0.10`). Not smd's routing: three model
 * routings of the leaf-spine-leaf paths, judged by the random-permutation
 * EBB of metrics.c (a flow's share = 1 / the most flows on its uplink or its
 * downlink; the mean over flows, fixed points excluded), on the same N
 * permutations (BENCHMARKS.md "Session 8, ebb"):
 *  - rotation: destination host i of its leaf goes by spine i mod spines,
 *    the next spine both leaves reach if that one is missing (ftree's ideal
 *    slot and a sticky replacement, the routing smd's ftree starts from);
 *  - balanced: destination leaf T spreads its hosts over the spines it
 *    keeps (host i by the i-th of them mod d_T); a source leaf without that
 *    spine takes the common spine with the least (4 x hosts of T already
 *    on it + replacements toward the same host + own routes on it);
 *  - decoupled: not a routing; each source leaf's destinations in u_S
 *    balanced classes, each destination leaf's hosts on d_T links, the two
 *    labels independent (a flow's uplink class need not be the spine of its
 *    downlink). What the leaf links allow if one spine did not have to
 *    serve both ends: the forced sharing at each end, and nothing else.
 * With --lfts FILE (a dump_lfts text of the same tree, e.g. smd --dry-run
 * --lfts-out), the leaves' tables of that file are judged the same way
 * ("lfts"). For each it prints the EBB and the EBB counting only the
 * uplink (up) or only the downlink (down) loads.
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

struct tree {
	uint32_t nl, ns, n;   /* leaves, spines, hosts */
	uint32_t *hosts;      /* per leaf */
	uint32_t *first;      /* first host of a leaf */
	uint32_t *leaf;       /* leaf of a host */
	uint32_t *idx;        /* host's index in its leaf */
	uint8_t *adj;         /* adj[l * ns + x]: leaf l has a link to spine x */
	uint32_t *dlinks;     /* spines per leaf */
	uint32_t *node;       /* fabric node of a leaf */
	uint16_t *lid;        /* LID of a host */
	uint32_t *spine_of;   /* [fabric nodes] spine index or UINT32_MAX */
};

static int tree_of(const struct sm_fabric *f, struct tree *t)
{
	uint32_t *li = malloc((size_t)f->n_nodes * sizeof(*li)), *si = malloc((size_t)f->n_nodes * sizeof(*si));
	if (!li || !si)
		goto nomem;
	memset(t, 0, sizeof(*t));
	for (uint32_t v = 0; v < f->n_nodes; v++) {
		li[v] = si[v] = UINT32_MAX;
		if (f->nodes[v].type != SM_NODE_SWITCH || f->nodes[v].plane)
			continue;
		unsigned h = 0;
		for (unsigned p = 1; p <= f->nodes[v].nports; p++) {
			uint32_t q = sm_port(f, v, p)->peer_node;
			h += q != SM_NONE && f->nodes[q].type == SM_NODE_CA;
		}
		if (h)
			li[v] = t->nl++;
		else
			si[v] = t->ns++;
	}
	t->hosts = calloc(t->nl, sizeof(*t->hosts));
	t->first = calloc(t->nl, sizeof(*t->first));
	t->dlinks = calloc(t->nl, sizeof(*t->dlinks));
	t->adj = calloc((size_t)t->nl * t->ns + 1, 1);
	t->node = calloc((size_t)t->nl + 1, sizeof(*t->node));
	if (!t->hosts || !t->first || !t->dlinks || !t->adj || !t->node)
		goto nomem;
	for (uint32_t v = 0; v < f->n_nodes; v++) {
		if (li[v] == UINT32_MAX)
			continue;
		t->node[li[v]] = v;
		for (unsigned p = 1; p <= f->nodes[v].nports; p++) {
			uint32_t q = sm_port(f, v, p)->peer_node;
			if (q == SM_NONE)
				continue;
			if (f->nodes[q].type == SM_NODE_CA)
				t->hosts[li[v]]++;
			else if (si[q] != UINT32_MAX)
				t->adj[(size_t)li[v] * t->ns + si[q]] = 1;
			else {
				fprintf(stderr, "ebb_model: a leaf-leaf link: not a 2-level tree\n");
				free(li);
				free(si);
				return -EINVAL;
			}
		}
	}
	for (uint32_t l = 0; l < t->nl; l++) {
		t->first[l] = t->n;
		t->n += t->hosts[l];
		for (uint32_t x = 0; x < t->ns; x++)
			t->dlinks[l] += t->adj[(size_t)l * t->ns + x];
	}
	t->leaf = malloc(((size_t)t->n + 1) * sizeof(*t->leaf));
	t->idx = malloc(((size_t)t->n + 1) * sizeof(*t->idx));
	t->lid = malloc(((size_t)t->n + 1) * sizeof(*t->lid));
	if (!t->leaf || !t->idx || !t->lid)
		goto nomem;
	for (uint32_t l = 0, i = 0; l < t->nl; l++) {
		i = 0;
		for (unsigned p = 1; p <= f->nodes[t->node[l]].nports; p++) {
			const struct sm_port *pt = sm_port(f, t->node[l], p);
			if (pt->peer_node == SM_NONE || f->nodes[pt->peer_node].type != SM_NODE_CA)
				continue;
			t->leaf[t->first[l] + i] = l;
			t->idx[t->first[l] + i] = i;
			t->lid[t->first[l] + i] = sm_port(f, pt->peer_node, pt->peer_port)->lid;
			i++;
		}
	}
	free(li);
	t->spine_of = si;
	return 0;
nomem:
	free(li);
	free(si);
	return -ENOMEM;
}

static int ok(const struct tree *t, uint32_t s, uint32_t d, uint32_t x)
{
	return t->adj[(size_t)s * t->ns + x] && t->adj[(size_t)d * t->ns + x];
}

/* up[s * n + h]: uplink class of leaf s toward host h; dn[s * n + h]: the downlink label into h's leaf */
struct routing {
	uint16_t *up, *dn;
};

static void route_rotation(const struct tree *t, struct routing *r)
{
	for (uint32_t s = 0; s < t->nl; s++)
		for (uint32_t h = 0; h < t->n; h++) {
			uint32_t d = t->leaf[h], x = t->idx[h] % t->ns;
			if (d == s || !t->dlinks[s])
				continue;
			for (uint32_t k = 0; k < t->ns && !ok(t, s, d, x); k++)
				x = (x + 1) % t->ns;
			r->up[(size_t)s * t->n + h] = r->dn[(size_t)s * t->n + h] = (uint16_t)x;
		}
}

static int route_balanced(const struct tree *t, struct routing *r)
{
	uint32_t *base = malloc(((size_t)t->n + 1) * sizeof(*base));
	uint32_t *own = calloc((size_t)t->nl * t->ns + 1, sizeof(*own));
	uint32_t *use = calloc((size_t)t->nl * t->ns + 1, sizeof(*use));
	uint32_t *rep = calloc((size_t)t->ns + 1, sizeof(*rep));
	if (!base || !own || !use || !rep) {
		free(base);
		free(own);
		free(use);
		free(rep);
		return -ENOMEM;
	}
	for (uint32_t d = 0; d < t->nl; d++)
		for (uint32_t i = 0, x = 0; i < t->hosts[d] && t->dlinks[d]; i++, x++) {
			while (!t->adj[(size_t)d * t->ns + x % t->ns])
				x++;
			base[t->first[d] + i] = x % t->ns;
			use[(size_t)d * t->ns + x % t->ns]++;
		}
	for (uint32_t s = 0; s < t->nl; s++)
		for (uint32_t h = 0; h < t->n; h++)
			if (t->leaf[h] != s && t->adj[(size_t)s * t->ns + base[h]])
				own[(size_t)s * t->ns + base[h]]++;
	for (uint32_t h = 0; h < t->n; h++) {
		uint32_t d = t->leaf[h];
		memset(rep, 0, t->ns * sizeof(*rep));
		for (uint32_t k = 0; k < t->nl; k++) {
			uint32_t s = (k + h) % t->nl, best = base[h];
			if (s == d)
				continue;
			if (!t->adj[(size_t)s * t->ns + base[h]]) {
				uint64_t bs = UINT64_MAX;
				for (uint32_t x = 0; x < t->ns; x++) {
					uint64_t sc = own[(size_t)s * t->ns + x] + 4 * (4 * (uint64_t)use[(size_t)d * t->ns + x] + rep[x]);
					if (ok(t, s, d, x) && sc < bs) {
						bs = sc;
						best = x;
					}
				}
				own[(size_t)s * t->ns + best]++;
				rep[best]++;
			}
			r->up[(size_t)s * t->n + h] = r->dn[(size_t)s * t->n + h] = (uint16_t)best;
		}
	}
	free(base);
	free(own);
	free(use);
	free(rep);
	return 0;
}

/* the leaves' entries of a table file: the spine behind the port toward each host (0 when none) */
static int route_lfts(const struct sm_fabric *f, const struct tree *t, const char *file, struct routing *r)
{
	struct sm_lftfile *lf = NULL;
	struct sm_lfts *l = sm_lfts_new(f, 0);
	char err[256];
	uint32_t matched = 0;
	int rc = -ENOMEM;
	if (!l)
		return rc;
	if (sm_lftfile_load(file, &lf, err, sizeof(err)) || sm_lftfile_apply(lf, f, l, &matched, err, sizeof(err))) {
		fprintf(stderr, "ebb_model: %s\n", err);
		rc = -EINVAL;
		goto out;
	}
	for (uint32_t s = 0; s < t->nl; s++)
		for (uint32_t h = 0; h < t->n; h++) {
			uint8_t p = sm_lfts_get(l, t->node[s], t->lid[h]);
			uint32_t q = p && p <= f->nodes[t->node[s]].nports ? sm_port(f, t->node[s], p)->peer_node : SM_NONE;
			uint32_t x = q == SM_NONE ? UINT32_MAX : t->spine_of[q];
			r->up[(size_t)s * t->n + h] = r->dn[(size_t)s * t->n + h] = x == UINT32_MAX ? 0 : (uint16_t)x;
		}
	rc = 0;
out:
	sm_lftfile_free(lf);
	sm_lfts_free(l);
	return rc;
}

static void route_decoupled(const struct tree *t, struct routing *r)
{
	for (uint32_t s = 0; s < t->nl; s++) {
		uint32_t c = 0, u = 0;
		for (uint32_t x = 0; x < t->ns; x++)
			u += t->adj[(size_t)s * t->ns + x];
		for (uint32_t h = 0; h < t->n; h++)
			if (t->leaf[h] != s && u) {
				uint32_t d = t->leaf[h];
				r->up[(size_t)s * t->n + h] = (uint16_t)(c++ % u);
				r->dn[(size_t)s * t->n + h] = t->dlinks[d] ? (uint16_t)(t->idx[h] % t->dlinks[d]) : 0;
			}
	}
}

/*
 * How consistent the routing is toward each destination host h: its modal
 * spine over the source leaves; a source leaf routing h elsewhere either
 * lacks that spine (forced) or not (free), counted in source hosts; and the
 * destination leaves' links carrying the modal spine of 2 or more hosts.
 */
static int consistency(const struct tree *t, const struct routing *r, double out[2], uint32_t *shared)
{
	uint32_t *cnt = calloc((size_t)t->ns + 1, sizeof(*cnt)), *mode = malloc(((size_t)t->n + 1) * sizeof(*mode));
	if (!cnt || !mode) {
		free(cnt);
		free(mode);
		return -ENOMEM;
	}
	double forced = 0, free_dev = 0, all = 0;
	for (uint32_t h = 0; h < t->n; h++) {
		uint32_t d = t->leaf[h], m = 0;
		memset(cnt, 0, t->ns * sizeof(*cnt));
		for (uint32_t s = 0; s < t->nl; s++)
			if (s != d)
				cnt[r->dn[(size_t)s * t->n + h]] += t->hosts[s];
		for (uint32_t x = 1; x < t->ns; x++)
			if (cnt[x] > cnt[m])
				m = x;
		mode[h] = m;
		for (uint32_t s = 0; s < t->nl; s++) {
			if (s == d)
				continue;
			all += t->hosts[s];
			if (r->dn[(size_t)s * t->n + h] != m) {
				if (t->adj[(size_t)s * t->ns + m])
					free_dev += t->hosts[s];
				else
					forced += t->hosts[s];
			}
		}
	}
	*shared = 0;
	for (uint32_t d = 0; d < t->nl; d++) {
		memset(cnt, 0, t->ns * sizeof(*cnt));
		for (uint32_t i = 0; i < t->hosts[d]; i++)
			cnt[mode[t->first[d] + i]]++;
		for (uint32_t x = 0; x < t->ns; x++)
			*shared += cnt[x] > 1 ? cnt[x] : 0;
	}
	out[0] = all ? forced / all : 0;
	out[1] = all ? free_dev / all : 0;
	free(cnt);
	free(mode);
	return 0;
}

/* mean over nperm permutations of the EBB: [0] both ends, [1] uplinks only, [2] downlinks only */
static int evaluate(const struct tree *t, const struct routing *r, unsigned nperm, uint64_t seed, double out[3])
{
	uint32_t *perm = malloc(((size_t)t->n + 1) * sizeof(*perm));
	uint32_t *up = malloc(((size_t)t->nl * t->ns + 1) * sizeof(*up));
	uint32_t *dn = malloc(((size_t)t->nl * t->ns + 1) * sizeof(*dn));
	if (!perm || !up || !dn) {
		free(perm);
		free(up);
		free(dn);
		return -ENOMEM;
	}
	out[0] = out[1] = out[2] = 0;
	for (unsigned k = 0; k < nperm; k++) {
		for (uint32_t i = 0; i < t->n; i++)
			perm[i] = i;
		for (uint32_t i = t->n - 1; i > 0; i--) {
			uint32_t j = (uint32_t)(sm_splitmix64(&seed) % ((uint64_t)i + 1)), v = perm[i];
			perm[i] = perm[j];
			perm[j] = v;
		}
		memset(up, 0, (size_t)t->nl * t->ns * sizeof(*up));
		memset(dn, 0, (size_t)t->nl * t->ns * sizeof(*dn));
		for (uint32_t i = 0; i < t->n; i++) {
			uint32_t s = t->leaf[i], d = t->leaf[perm[i]];
			if (s == d)
				continue;
			up[(size_t)s * t->ns + r->up[(size_t)s * t->n + perm[i]]]++;
			dn[(size_t)d * t->ns + r->dn[(size_t)s * t->n + perm[i]]]++;
		}
		double sum[3] = { 0, 0, 0 };
		uint32_t flows = 0;
		for (uint32_t i = 0; i < t->n; i++) {
			uint32_t s = t->leaf[i], d = t->leaf[perm[i]];
			if (perm[i] == i)
				continue;
			flows++;
			if (s == d) {
				sum[0] += 1;
				sum[1] += 1;
				sum[2] += 1;
				continue;
			}
			uint32_t a = up[(size_t)s * t->ns + r->up[(size_t)s * t->n + perm[i]]];
			uint32_t b = dn[(size_t)d * t->ns + r->dn[(size_t)s * t->n + perm[i]]];
			sum[0] += 1.0 / (a > b ? a : b);
			sum[1] += 1.0 / a;
			sum[2] += 1.0 / b;
		}
		for (int e = 0; e < 3; e++)
			out[e] += flows ? sum[e] / flows : 1.0;
	}
	for (int e = 0; e < 3; e++)
		out[e] /= nperm ? nperm : 1;
	free(perm);
	free(up);
	free(dn);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned nperm = 100;
	uint64_t seed = 1;
	const char *lfts = NULL;
	static const struct option lo[] = {
		{ "perms", 1, 0, 'P' }, { "seed", 1, 0, 's' }, { "lfts", 1, 0, 'l' }, { 0, 0, 0, 0 }
	};
	int c;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (c == 'P')
			nperm = (unsigned)strtoul(optarg, NULL, 0);
		else if (c == 's')
			seed = strtoull(optarg, NULL, 0);
		else if (c == 'l')
			lfts = optarg;
		else
			goto usage;
	}
	if (argc - optind != 1)
		goto usage;
	struct sm_fabric *f = sm_fabric_new();
	struct sm_topo_err te = { { 0 }, 0 };
	struct tree t;
	struct routing r = { NULL, NULL };

	memset(&t, 0, sizeof(t));
	int status = 1;
	if (!f)
		return 1;
	if (sm_topo_load(f, argv[optind], SM_TOPO_AUTO, 0, &te)) {
		fprintf(stderr, "ebb_model: %s\n", te.msg);
		sm_fabric_free(f);
		return 1;
	}
	if (tree_of(f, &t))
		goto out;
	r.up = calloc((size_t)t.nl * t.n + 1, sizeof(*r.up));
	r.dn = calloc((size_t)t.nl * t.n + 1, sizeof(*r.dn));
	if (!r.up || !r.dn)
		goto out;
	uint32_t links = 0;
	for (uint32_t l = 0; l < t.nl; l++)
		links += t.dlinks[l];
	printf("tree: %u leaves, %u spines, %u hosts, %u leaf-spine links; %u permutations, seed %llu\n", t.nl, t.ns, t.n,
	       links, nperm, (unsigned long long)seed);
	static const char *const name[] = { "rotation", "balanced", "decoupled", "lfts" };
	for (int k = 0; k < (lfts ? 4 : 3); k++) {
		double e[3];
		if (k == 0)
			route_rotation(&t, &r);
		else if (k == 1 && route_balanced(&t, &r))
			goto out;
		else if (k == 2)
			route_decoupled(&t, &r);
		else if (k == 3) {
			memset(r.up, 0, ((size_t)t.nl * t.n + 1) * sizeof(*r.up));
			memset(r.dn, 0, ((size_t)t.nl * t.n + 1) * sizeof(*r.dn));
			if (route_lfts(f, &t, lfts, &r))
				goto out;
		}
		if (evaluate(&t, &r, nperm, seed, e))
			goto out;
		double dev[2] = { 0, 0 };
		uint32_t shared = 0;
		if (k != 2 && consistency(&t, &r, dev, &shared))
			goto out;
		printf("%-9s ebb %.4f up %.4f down %.4f", name[k], e[0], e[1], e[2]);
		if (k != 2)
			printf("  off the modal spine: forced %.4f free %.4f; hosts sharing a modal link %u", dev[0], dev[1], shared);
		printf("\n");
	}
	status = 0;
out:
	free(r.up);
	free(r.dn);
	free(t.hosts);
	free(t.first);
	free(t.leaf);
	free(t.idx);
	free(t.adj);
	free(t.dlinks);
	free(t.node);
	free(t.lid);
	free(t.spine_of);
	sm_fabric_free(f);
	return status;
usage:
	fprintf(stderr, "usage: ebb_model TOPO [--perms N] [--seed S] [--lfts FILE]\n");
	return 2;
}
