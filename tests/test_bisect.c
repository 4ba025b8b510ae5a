/* SPDX-License-Identifier: MIT */
/*
 * The bisection of a plane (sm_metrics_bisection, routing/metrics_bisect.c),
 * which the dry-run report scales the EBB target by: exactly half the hosts
 * on complete trees without oversubscription, never below the true
 * minimum (it is a real cut: checked against every split of tiny degraded
 * trees), equal to it where the weakest leaves make it, and below the
 * share of links left when the missing links gather on a few leaves.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fx_ftree.h"
#include "model/gen.h"
#include "routing/metrics.h"

static struct sm_bisection bis_of(const struct sm_fabric *f)
{
	struct sm_bisection b;
	assert_int_equal(sm_metrics_bisection(f, 0, &b), 0);
	assert_non_null(b.how);
	assert_int_not_equal(b.first_leaf, SM_NONE);
	return b;
}

/*
 * The true bisection of a plane with at most 24 switches: every side of
 * every switch; given those, a host on its leaf's side costs nothing, and
 * the first half takes floor(N / 2) hosts, the surplus or shortfall moved
 * across one host link each.
 */
static uint64_t brute_bisection(const struct sm_fabric *f)
{
	uint32_t sw[24], ns = 0, hosts[24] = { 0 }, n = 0;
	int32_t idx[1024];

	assert_true(f->n_nodes <= 1024);
	for (uint32_t v = 0; v < f->n_nodes; v++) {
		idx[v] = -1;
		if (f->nodes[v].type == SM_NODE_SWITCH) {
			assert_true(ns < 24);
			idx[v] = (int32_t)ns;
			sw[ns++] = v;
		}
	}
	for (uint32_t v = 0; v < f->n_nodes; v++) {
		if (f->nodes[v].type == SM_NODE_SWITCH)
			continue;
		for (unsigned p = 1; p <= f->nodes[v].nports; p++) {
			uint32_t q = sm_port(f, v, p)->peer_node;
			if (q != SM_NONE && sm_port(f, v, p)->lid && idx[q] >= 0) {
				hosts[idx[q]]++;
				n++;
			}
		}
	}
	uint64_t best = UINT64_MAX;
	for (uint32_t m = 0; m < (1u << ns); m++) {
		uint64_t cut = 0, in = 0;
		for (uint32_t i = 0; i < ns; i++) {
			if (m >> i & 1)
				in += hosts[i];
			for (unsigned p = 1; p <= f->nodes[sw[i]].nports; p++) {
				uint32_t q = sm_port(f, sw[i], p)->peer_node;
				if (q != SM_NONE && idx[q] > (int32_t)i && ((m >> i) & 1) != ((m >> idx[q]) & 1))
					cut++;
			}
		}
		cut += in > n / 2 ? in - n / 2 : n / 2 - in;
		if (cut < best)
			best = cut;
	}
	return best;
}

static void test_complete(void **state)
{
	(void)state;
	struct ftb_shape s;
	ftb_shape_2level(&s, 8, 16);
	struct sm_fabric *f = sm_fabric_new();
	assert_int_equal(ftb_build(f, 0, &s, 0), 0);
	struct sm_bisection b = bis_of(f);
	assert_int_equal(b.hosts, 8);
	assert_int_equal(b.links, 8);
	assert_int_equal(brute_bisection(f), 8);
	sm_fabric_free(f);

	f = fx_ftree_small_3level();
	b = bis_of(f);
	assert_int_equal(b.hosts, 32);
	assert_int_equal(b.links, 32);
	sm_fabric_free(f);

	/* generated: 2 and 3 levels, full and partly filled */
	const unsigned cases[][3] = { { 2, 32, 512 }, { 2, 64, 2048 }, { 3, 16, 512 }, { 3, 32, 2048 }, { 3, 16, 333 } };
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sm_gen_params gp;
		char err[256];
		sm_gen_params_init(&gp);
		gp.levels = cases[i][0];
		gp.radix = cases[i][1];
		gp.hosts = cases[i][2];
		f = sm_fabric_new();
		assert_int_equal(sm_gen_fat_tree(&gp, f, err, sizeof(err)), 0);
		b = bis_of(f);
		if (b.hosts != gp.hosts / 2 || b.links != gp.hosts / 2)
			fail_msg("%u levels radix %u, %u hosts: cut %llu for halves of %u", gp.levels, gp.radix, gp.hosts,
				 (unsigned long long)b.links, b.hosts);
		sm_fabric_free(f);
	}
}

/* Tiny degraded trees: the cut found is a real one (never below the true bisection), and here the least. */
static void test_against_brute(void **state)
{
	(void)state;
	unsigned exact = 0, trees = 0;
	for (uint64_t seed = 1; seed <= 24; seed++) {
		struct ftb_shape s;
		if (seed & 1)
			ftb_shape_2level(&s, 8, 16);  /* 4 leaves x 4 hosts, 4 spines */
		else
			ftb_shape_3level(&s, 4, 16);  /* 4 pods x 2 leaves x 2 hosts, 8 aggregation, 4 cores */
		struct sm_fabric *f = sm_fabric_new();
		assert_int_equal(ftb_build(f, 0, &s, 0), 0);
		assert_true(ftb_remove_links(f, 0, seed % 3 == 0 ? 0.25 : 0.15, seed) > 0);
		struct sm_bisection b = bis_of(f);
		uint64_t t = brute_bisection(f);
		if (b.links < t)
			fail_msg("seed %llu: cut %llu below the true bisection %llu", (unsigned long long)seed,
				 (unsigned long long)b.links, (unsigned long long)t);
		exact += b.links == t;
		trees++;
		sm_fabric_free(f);
	}
	print_message("bisection: the least cut on %u of %u tiny degraded trees\n", exact, trees);
	assert_true(exact * 4 >= trees * 3);
}

/*
 * Leaves 1 and 3 of 4 lose 2 of their 4 uplinks each: 4 of 16 links gone
 * (75% left), but the half made of leaves 1 and 3 keeps 4 of its 8 links
 * (the host order's halves, leaves 0 and 1 against 2 and 3, keep more).
 */
static void test_weak_half(void **state)
{
	(void)state;
	struct ftb_shape s;
	ftb_shape_2level(&s, 8, 16);
	struct sm_fabric *f = sm_fabric_new();
	assert_int_equal(ftb_build(f, 0, &s, 0), 0);
	for (uint32_t l = 1; l < 4; l += 2) {
		unsigned done = 0;
		for (unsigned p = 1; p <= f->nodes[l].nports && done < 2; p++) {
			uint32_t q = sm_port(f, l, p)->peer_node;
			if (q != SM_NONE && f->nodes[q].type == SM_NODE_SWITCH) {
				sm_fabric_unlink(f, l, p);
				done++;
			}
		}
		assert_int_equal(done, 2);
	}
	struct sm_bisection b = bis_of(f);
	assert_int_equal(b.links, 4);
	assert_int_equal(brute_bisection(f), 4);
	assert_string_equal(b.how, "weakest leaves");
	sm_fabric_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_complete),
		cmocka_unit_test(test_against_brute),
		cmocka_unit_test(test_weak_half),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
