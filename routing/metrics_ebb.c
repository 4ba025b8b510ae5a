/* SPDX-License-Identifier: MIT */
/*
 * DOC: the random-permutation EBB a plane's cabling allows (metrics.h)
 *
 * The EBB of metrics.c: in a random permutation every host i sends one
 * flow to P(i) (none when P(i) = i), a flow's share is 1 / (most flows on
 * a switch link of its route), and EBB is the mean share. This bounds its
 * expected value for every destination routing (LFTs: a switch forwards by
 * destination only), whatever the engine, from the leaves' links alone.
 *
 * Leaf S (h_S hosts, u_S switch links). Its flows that leave S take their
 * first switch link by S's LFT entry for the destination: the N - h_S
 * destinations off S fall into at most u_S classes, one per link. The
 * flows on one link share at most 1 between them (each gets 1 / (flows on
 * it) at most), so S's leaving flows share at most the number of classes
 * that the permutation's h_S destinations of S's hosts hit. Those are a
 * uniform random h_S-subset of the N hosts, so a class of m destinations
 * is hit with probability g(m) = 1 - C(N - m, h_S) / C(N, h_S), concave in
 * m: the expected number hit is at most u_S g evaluated on the balanced
 * split (classes of floor or ceil((N - h_S) / u_S)), c_S below. The same
 * holds into a leaf T: its entering flows share at most d_T, its switch
 * links. A flow within a leaf has no switch link (share 1); each flow gets
 * at most 1.
 *
 * Per permutation the shares are then a feasible flow of a transport
 * problem (source leaf S: at most its classes hit; destination leaf T: at
 * most d_T; pair S, T: at most its flows), whose value is concave and
 * nondecreasing in those limits: the expected EBB is at most that problem
 * solved with expected limits (c_S, d_T, h_S h_T / N flows from S to T),
 * plus the expected flows within leaves, over the N - 1 expected flows.
 * Leaves with the same (hosts, links) are merged into one node (the
 * problem is symmetric in them, so the merged one has the same value),
 * which keeps the max flow tiny whatever the tree's size (a fabric with
 * more than SM_EBB_BOUND_KINDS kinds of leaves gets no bound: 0).
 *
 * It counts only the first and last switch link of a route: on a complete
 * 2-level tree it is within a fraction of a percent of what ftree
 * reaches (the collisions are on leaf uplinks), on 3 levels it misses the
 * collisions above the leaves and is loose; on a degraded tree it misses
 * that a flow can collide at both ends. Up to the sampling noise of the
 * measured EBB (a mean over 100 permutations) and the ratio of means
 * (shares over flows per permutation, flows N minus fixed points), no
 * destination routing's EBB exceeds it. Pure: no globals, no logging.
 */
#include "config.h"
#include "routing/metrics.h"
#include "routing/metrics_priv.h"

#include <errno.h>
#include <float.h>
#include <stdlib.h>
#include <string.h>

#define EPS 1e-12
#define SM_EBB_BOUND_KINDS 64 /* leaf kinds (hosts, links) a bound is computed for; a fat tree has a few */

/* Probability that a class of m of n hosts misses a uniform h-subset: C(n - m, h) / C(n, h). */
static double miss(uint64_t n, uint64_t m, uint64_t h)
{
	double p = 1.0;
	for (uint64_t j = 0; j < h; j++) {
		if (n < m + j + 1)
			return 0.0;
		p *= (double)(n - m - j) / (double)(n - j);
	}
	return p;
}

/* Expected classes hit, at most: u classes splitting the n - h off-leaf destinations evenly. */
static double classes_hit(uint64_t n, uint64_t h, uint64_t u)
{
	if (!u || n <= h)
		return 0.0;
	uint64_t q = (n - h) / u, r = (n - h) % u;
	return (double)r * (1.0 - miss(n, q + 1, h)) + (double)(u - r) * (1.0 - miss(n, q, h));
}

struct kind {
	uint32_t hosts, links, count;
};

/* Dense max flow (Edmonds-Karp) on a small graph: cap[v * nv + w]. */
static double max_flow(double *cap, uint32_t nv, uint32_t s, uint32_t t, uint32_t *prev, uint32_t *queue)
{
	double total = 0;
	for (;;) {
		for (uint32_t v = 0; v < nv; v++)
			prev[v] = UINT32_MAX;
		prev[s] = s;
		uint32_t qh = 0, qt = 0;
		queue[qt++] = s;
		while (qh < qt && prev[t] == UINT32_MAX) {
			uint32_t v = queue[qh++];
			for (uint32_t w = 0; w < nv; w++)
				if (prev[w] == UINT32_MAX && cap[(size_t)v * nv + w] > EPS) {
					prev[w] = v;
					queue[qt++] = w;
				}
		}
		if (prev[t] == UINT32_MAX)
			return total;
		double push = DBL_MAX;
		for (uint32_t w = t; w != s; w = prev[w])
			if (cap[(size_t)prev[w] * nv + w] < push)
				push = cap[(size_t)prev[w] * nv + w];
		for (uint32_t w = t; w != s; w = prev[w]) {
			cap[(size_t)prev[w] * nv + w] -= push;
			cap[(size_t)w * nv + prev[w]] += push;
		}
		total += push;
	}
}

static int kind_add(struct kind **k, uint32_t *nk, uint32_t *ak, uint32_t hosts, uint32_t links)
{
	for (uint32_t i = 0; i < *nk; i++)
		if ((*k)[i].hosts == hosts && (*k)[i].links == links) {
			(*k)[i].count++;
			return 0;
		}
	if (*nk == *ak) {
		uint32_t na = *ak ? 2 * *ak : 16;
		struct kind *n = realloc(*k, na * sizeof(*n));
		if (!n)
			return -ENOMEM;
		*k = n;
		*ak = na;
	}
	(*k)[(*nk)++] = (struct kind){ hosts, links, 1 };
	return 0;
}

/* Hosts (CA ports with a LID) per switch of the plane into hosts[]; returns N. */
static uint64_t count_hosts(const struct sm_fabric *f, unsigned plane, uint32_t *hosts)
{
	uint64_t n = 0;
	for (uint32_t v = 0; v < f->n_nodes; v++) {
		const struct sm_node *nd = &f->nodes[v];
		if (nd->type != SM_NODE_CA || nd->plane != plane)
			continue;
		for (unsigned p = 1; p <= nd->nports; p++) {
			const struct sm_port *pt = sm_port(f, v, p);
			if (!pt->lid)
				continue;
			n++;
			if (sm_mx_is_sw(f, pt->peer_node, plane))
				hosts[pt->peer_node]++;
		}
	}
	return n;
}

int sm_metrics_ebb_bound(const struct sm_fabric *f, unsigned plane, double *bound)
{
	*bound = 0;
	uint32_t *hosts = calloc((size_t)f->n_nodes + 1, sizeof(*hosts));
	if (!hosts)
		return -ENOMEM;
	uint64_t n = count_hosts(f, plane, hosts);
	struct kind *k = NULL;
	uint32_t nk = 0, ak = 0;
	int rc = 0;
	for (uint32_t v = 0; v < f->n_nodes && !rc; v++) {
		if (!hosts[v])
			continue;
		uint32_t links = 0;
		for (unsigned p = 1; p <= f->nodes[v].nports; p++) {
			uint32_t q = sm_port(f, v, p)->peer_node;
			links += q != v && sm_mx_is_sw(f, q, plane);
		}
		rc = kind_add(&k, &nk, &ak, hosts[v], links);
	}
	free(hosts);
	if (!rc && nk > SM_EBB_BOUND_KINDS) {
		free(k); /* an odd fabric: the dense max flow would cost nk^2 per step; unknown */
		return 0;
	}
	if (rc || n < 2) {
		free(k);
		if (!rc)
			*bound = n ? 1.0 : 0.0;
		return rc;
	}
	/* nodes: source 0, sink 1, kind i as a sender 2 + i and as a receiver 2 + nk + i */
	uint32_t nv = 2 + 2 * nk;
	double *cap = calloc((size_t)nv * nv, sizeof(*cap));
	uint32_t *prev = malloc(nv * sizeof(*prev)), *queue = malloc(nv * sizeof(*queue));
	if (!cap || !prev || !queue) {
		rc = -ENOMEM;
		goto out;
	}
	double dn = (double)n, within = 0, across = 0;
	for (uint32_t i = 0; i < nk; i++) {
		double c = k[i].count, h = k[i].hosts;
		cap[2 + i] = c * classes_hit(n, k[i].hosts, k[i].links);
		cap[(size_t)(2 + nk + i) * nv + 1] = c * k[i].links;
		within += c * h * (h - 1) / dn;
		for (uint32_t j = 0; j < nk; j++) {
			double pairs = i == j ? c * (c - 1) : c * k[j].count;
			double flows = pairs * h * k[j].hosts / dn;
			cap[(size_t)(2 + i) * nv + 2 + nk + j] = flows;
			across += flows;
		}
	}
	/* flows of hosts on no switch (expected N - 1 in all) are counted at share 1 */
	double other = dn - 1 - within - across;
	if (other < 0)
		other = 0;
	double b = (within + other + max_flow(cap, nv, 0, 1, prev, queue)) / (dn - 1);
	*bound = b > 1.0 ? 1.0 : b;
out:
	free(cap);
	free(prev);
	free(queue);
	free(k);
	return rc;
}
