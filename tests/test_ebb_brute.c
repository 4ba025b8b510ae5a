/* SPDX-License-Identifier: MIT */
/*
 * The EBB bound (sm_metrics_ebb_bound, routing/metrics_ebb.c) against every
 * destination routing of tiny 2-level trees, complete and degraded.
 *
 * A destination routing of a 2-level tree sends a flow from leaf S to host
 * t (on leaf T != S) up to one spine x that S and T both reach, chosen by
 * (S, t) alone: that is what a leaf's LFT entry for t is, and an up/down
 * route has no other choice (the spine's entry for t is its link to T).
 * The test enumerates every such routing and every permutation of the N
 * hosts, and computes the routing's EBB exactly as metrics.c does (a
 * flow's share = 1 / the most flows on its uplink or its downlink, 1 for a
 * flow within a leaf, fixed points send nothing) in its two forms: the
 * ratio of expectations E[shares] / E[flows] (= E[shares] / (N - 1)), which
 * is what the bound's argument bounds, and the mean over permutations of
 * shares / flows, which is what the report prints for 100 permutations.
 * The bound must be at least the best routing's first form; the second is
 * printed beside it (the difference is the "ratio of means" the bound's
 * comment leaves to sampling).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "model/fabric.h"
#include "routing/metrics.h"

#define NL 4 /* leaves at most */
#define NS 4 /* spines at most */
#define NH 8 /* hosts at most (8! permutations) */

struct tiny {
	unsigned nl, ns;
	unsigned hosts[NL];
	unsigned links[NL]; /* bit x: the leaf has a link to spine x */
};

/* Leaves, spines and hosts of t as a fabric (plane 0, host LIDs 1..N). */
static struct sm_fabric *build(const struct tiny *t)
{
	struct sm_fabric *f = sm_fabric_new();
	assert_non_null(f);
	assert_int_equal(sm_fabric_add_plane(f, 0, NULL), 0);
	uint32_t leaf[NL], spine[NS];
	uint16_t lid = 1;
	for (unsigned l = 0; l < t->nl; l++) {
		int64_t r = sm_fabric_add_node(f, SM_NODE_SWITCH, 0x100 + l, t->hosts[l] + t->ns, 0, 0);
		assert_true(r >= 0);
		leaf[l] = (uint32_t)r;
	}
	for (unsigned x = 0; x < t->ns; x++) {
		int64_t r = sm_fabric_add_node(f, SM_NODE_SWITCH, 0x200 + x, t->nl, 0, 0);
		assert_true(r >= 0);
		spine[x] = (uint32_t)r;
	}
	for (unsigned l = 0; l < t->nl; l++)
		for (unsigned x = 0; x < t->ns; x++)
			if (t->links[l] >> x & 1)
				assert_int_equal(sm_fabric_link(f, leaf[l], t->hosts[l] + 1 + x, spine[x], 1 + l), 0);
	for (unsigned l = 0; l < t->nl; l++)
		for (unsigned h = 0; h < t->hosts[l]; h++) {
			int64_t r = sm_fabric_add_node(f, SM_NODE_CA, 0x1000 + lid, 1, 0, 0);
			assert_true(r >= 0);
			uint32_t ca = (uint32_t)r;
			assert_int_equal(sm_fabric_set_port_guid(f, ca, 1, 0x2000 + lid), 0);
			assert_int_equal(sm_fabric_link(f, ca, 1, leaf[l], 1 + h), 0);
			assert_int_equal(sm_fabric_set_lid(f, ca, 1, lid++, 0), 0);
			sm_port(f, ca, 1)->state = SM_PORT_ACTIVE;
		}
	return f;
}

/* The cross-leaf flows of one permutation: entry (source leaf, destination host), and the leaves. */
struct flow {
	uint8_t entry, s, d;
};

struct perms {
	size_t n;
	struct flow *fl;     /* [n * NH] */
	uint8_t *ncross;     /* [n] cross-leaf flows */
	uint8_t *within;     /* [n] flows within a leaf */
};

/* Every permutation of the N hosts (lexicographic), as flows. */
static void all_perms(const struct tiny *t, unsigned n, const unsigned *leaf_of, struct perms *p)
{
	size_t total = 1;
	for (unsigned i = 2; i <= n; i++)
		total *= i;
	p->n = total;
	p->fl = malloc(total * NH * sizeof(*p->fl));
	p->ncross = malloc(total);
	p->within = malloc(total);
	assert_true(p->fl && p->ncross && p->within);
	unsigned a[NH];
	for (unsigned i = 0; i < n; i++)
		a[i] = i;
	for (size_t k = 0; k < total; k++) {
		unsigned nc = 0, nw = 0;
		for (unsigned i = 0; i < n; i++) {
			if (a[i] == i)
				continue;
			unsigned s = leaf_of[i], d = leaf_of[a[i]];
			if (s == d) {
				nw++;
				continue;
			}
			p->fl[k * NH + nc++] = (struct flow){ (uint8_t)(s * n + a[i]), (uint8_t)s, (uint8_t)d };
		}
		p->ncross[k] = (uint8_t)nc;
		p->within[k] = (uint8_t)nw;
		/* next permutation */
		int i = (int)n - 2;
		while (i >= 0 && a[i] > a[i + 1])
			i--;
		if (i < 0)
			break;
		int j = (int)n - 1;
		while (a[j] < a[i])
			j--;
		unsigned v = a[i];
		a[i] = a[j];
		a[j] = v;
		for (unsigned lo = (unsigned)i + 1, hi = n - 1; lo < hi; lo++, hi--) {
			v = a[lo];
			a[lo] = a[hi];
			a[hi] = v;
		}
	}
	(void)t;
}

/*
 * Best EBB over every destination routing of t: *ratio = max E[shares] /
 * (N - 1), *mean = max E[shares / flows]. Returns the number of routings.
 */
static unsigned long brute(const struct tiny *t, double *ratio, double *mean)
{
	unsigned n = 0, leaf_of[NH];
	for (unsigned l = 0; l < t->nl; l++)
		for (unsigned h = 0; h < t->hosts[l]; h++)
			leaf_of[n++] = l;
	/* per entry (S, t): the spines both leaves reach */
	uint8_t nch[NL * NH], ch[NL * NH][NS], pick[NL * NH];
	unsigned var[NL * NH], nvar = 0;
	unsigned long routings = 1;
	for (unsigned s = 0; s < t->nl; s++)
		for (unsigned h = 0; h < n; h++) {
			unsigned e = s * n + h, c = 0;
			for (unsigned x = 0; x < t->ns && leaf_of[h] != s; x++)
				if (t->links[s] >> x & 1 && t->links[leaf_of[h]] >> x & 1)
					ch[e][c++] = (uint8_t)x;
			assert_true(leaf_of[h] == s || c > 0); /* every pair of leaves has an up/down path */
			nch[e] = (uint8_t)c;
			pick[e] = 0;
			if (c > 1) {
				var[nvar++] = e;
				routings *= c;
			}
		}
	assert_true(routings <= 4096);
	struct perms p;
	all_perms(t, n, leaf_of, &p);
	*ratio = *mean = 0;
	for (unsigned long r = 0; r < routings; r++) {
		unsigned long q = r;
		for (unsigned v = 0; v < nvar; v++) {
			pick[var[v]] = (uint8_t)(q % nch[var[v]]);
			q /= nch[var[v]];
		}
		double sum = 0, msum = 0;
		for (size_t k = 0; k < p.n; k++) {
			uint8_t up[NL][NS] = { { 0 } }, dn[NL][NS] = { { 0 } };
			const struct flow *fl = p.fl + k * NH;
			for (unsigned i = 0; i < p.ncross[k]; i++) {
				unsigned x = ch[fl[i].entry][pick[fl[i].entry]];
				up[fl[i].s][x]++;
				dn[fl[i].d][x]++;
			}
			double sh = p.within[k];
			for (unsigned i = 0; i < p.ncross[k]; i++) {
				unsigned x = ch[fl[i].entry][pick[fl[i].entry]];
				unsigned a = up[fl[i].s][x], b = dn[fl[i].d][x];
				sh += 1.0 / (a > b ? a : b);
			}
			unsigned flows = p.ncross[k] + p.within[k];
			sum += sh;
			msum += flows ? sh / flows : 1.0;
		}
		double rr = sum / (double)p.n / (n - 1), mm = msum / (double)p.n;
		if (rr > *ratio)
			*ratio = rr;
		if (mm > *mean)
			*mean = mm;
	}
	free(p.fl);
	free(p.ncross);
	free(p.within);
	return routings;
}

static void check(const struct tiny *t, const char *what)
{
	struct sm_fabric *f = build(t);
	double bound, ratio, mean;
	assert_int_equal(sm_metrics_ebb_bound(f, 0, &bound), 0);
	unsigned long nr = brute(t, &ratio, &mean);
	print_message("%s: %lu routings, best EBB %.5f (E[shares]/E[flows]), %.5f (mean of ratios); bound %.5f\n", what,
		      nr, ratio, mean, bound);
	if (ratio > bound + 1e-9)
		fail_msg("%s: a routing reaches %.6f, above the bound %.6f", what, ratio, bound);
	sm_fabric_free(f);
}

static void test_complete(void **state)
{
	(void)state;
	const struct tiny t = { 3, 2, { 2, 2, 2 }, { 3, 3, 3 } };
	check(&t, "3 leaves x 2 hosts, 2 spines, complete");
}

static void test_degraded_even(void **state)
{
	(void)state;
	/* leaves 0, 1 keep spines 0-1; leaf 2 spines 1-3; leaf 3 spines 0, 2, 3 (6 of 16 links gone) */
	const struct tiny t = { 4, 4, { 2, 2, 2, 2 }, { 0x3, 0x3, 0xe, 0xd } };
	check(&t, "4 leaves x 2 hosts, 4 spines, 10 links");
}

static void test_degraded_uneven(void **state)
{
	(void)state;
	/* 3, 2, 2, 1 hosts; leaf 0 spines 0-2, leaf 1 0-1, leaf 2 1-2, leaf 3 1 and 3 */
	const struct tiny t = { 4, 4, { 3, 2, 2, 1 }, { 0x7, 0x3, 0x6, 0xa } };
	check(&t, "4 leaves x 3/2/2/1 hosts, 4 spines, 9 links");
}

static void test_degraded_four(void **state)
{
	(void)state;
	/* 4, 2, 2 hosts on 3 leaves; leaf 0 spines 0-2, leaf 1 spines 0-1, leaf 2 spines 1-2 */
	const struct tiny t = { 3, 3, { 4, 2, 2 }, { 0x7, 0x3, 0x6 } };
	check(&t, "3 leaves x 4/2/2 hosts, 3 spines, 7 links");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_complete),
		cmocka_unit_test(test_degraded_even),
		cmocka_unit_test(test_degraded_uneven),
		cmocka_unit_test(test_degraded_four),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
