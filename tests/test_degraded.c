/* SPDX-License-Identifier: MIT */
/*
 * Degraded fat trees (issue 17): the shift-congestion bounds a tree's
 * missing links impose (sm_metrics_shift_bound, routing/metrics_bound.c:
 * the cut bound for any routing, the up/down bound for ftree's kind) on
 * hand-built trees, and ftree reaching them on generated trees
 * (deterministic seeds): equal to the bound at 1% and 3% of the switch
 * links or switches removed, at most one above the up/down bound at 10%.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "routing/engine.h"
#include "fx_ftree.h"
#include "model/gen.h"
#include "routing/metrics.h"
#include "routing/validate.h"


static struct sm_shift_bound bound_of(const struct sm_fabric *f)
{
	struct sm_shift_bound b;
	assert_int_equal(sm_metrics_shift_bound(f, 0, &b), 0);
	return b;
}

/* Unlink the switch-switch ports of node n that lead to nodes in [lo, hi), at most k of them. */
static unsigned unlink_to(struct sm_fabric *f, uint32_t n, uint32_t lo, uint32_t hi, unsigned k)
{
	unsigned done = 0;
	for (unsigned p = 1; p <= f->nodes[n].nports && done < k; p++) {
		uint32_t q = sm_port(f, n, p)->peer_node;
		if (q != SM_NONE && q >= lo && q < hi && f->nodes[q].type == SM_NODE_SWITCH) {
			sm_fabric_unlink(f, n, p);
			done++;
		}
	}
	return done;
}

/* 2 levels, 4 leaves x 4 hosts, 4 spines (nodes: leaves 0-3, spines 4-7). */
static void test_bound_2level(void **state)
{
	(void)state;
	struct ftb_shape s;
	ftb_shape_2level(&s, 8, 16);
	struct sm_fabric *f = sm_fabric_new();
	assert_int_equal(ftb_build(f, 0, &s, 0), 0);
	struct sm_shift_bound b = bound_of(f);
	assert_int_equal(b.bound, 1); /* complete: nothing forces more than 1 */
	assert_int_equal(b.leaf, SM_NONE);

	/* leaf 1 loses one of its 4 uplinks: its 4 hosts share 3 links in the shifts that send them all away */
	assert_int_equal(unlink_to(f, 1, 4, 8, 1), 1);
	b = bound_of(f);
	assert_int_equal(b.bound, 2);
	assert_int_equal(b.level, 1);
	assert_int_equal(b.units, 1);
	assert_int_equal(b.leaf, 1);
	assert_int_equal(b.hosts, 4);
	assert_int_equal(b.links, 3);

	/* then two more: 4 hosts on 1 uplink */
	assert_int_equal(unlink_to(f, 1, 4, 8, 2), 2);
	b = bound_of(f);
	assert_int_equal(b.bound, 4);
	assert_int_equal(b.leaf, 1);
	assert_int_equal(b.links, 1);
	sm_fabric_free(f);
}

/*
 * 3 levels, 4 pods x 4 leaves x 4 hosts, 4 aggregation switches per pod,
 * 4 cores per group (nodes: leaves 0-15, aggs 16-31, cores 32-47). Pod 0
 * loses core links only: every leaf keeps its 4 uplinks, but the pod's 16
 * hosts leave it (shifts 16..48) through what its aggregation switches have.
 */
static void test_bound_3level_pod(void **state)
{
	(void)state;
	struct sm_fabric *f = fx_ftree_small_3level();
	assert_int_equal(bound_of(f).bound, 1);

	assert_int_equal(unlink_to(f, 16, 32, 48, 4), 4);  /* agg 0 of pod 0: no core link left */
	assert_int_equal(unlink_to(f, 17, 32, 48, 2), 2);  /* agg 1: 2 of 4 */
	struct sm_shift_bound b = bound_of(f);
	assert_int_equal(b.bound, 2);   /* 16 hosts, 10 links out of the pod */
	assert_int_equal(b.hosts, 16);
	assert_int_equal(b.links, 10);
	assert_int_equal(b.leaf, 0);

	assert_int_equal(unlink_to(f, 18, 32, 48, 4), 4);  /* agg 2 too: 6 links for 16 hosts */
	b = bound_of(f);
	assert_int_equal(b.bound, 3);
	assert_int_equal(b.hosts, 16);
	assert_int_equal(b.links, 6);
	sm_fabric_free(f);
}

/*
 * The bounds are lower bounds: no routing ftree makes on random degraded
 * small trees beats the cut bound, nor (ftree routes up/down) the up/down one.
 */
static void test_bound_below_measured(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 16; seed++) {
		struct ftb_shape s;
		if (seed & 1)
			ftb_shape_2level(&s, 8, 16);
		else
			ftb_shape_3level(&s, 8, 64);
		struct sm_fabric *f = sm_fabric_new();
		assert_int_equal(ftb_build(f, 0, &s, 0), 0);
		assert_true(ftb_remove_links(f, 0, 0.15, seed) > 0);
		struct sm_shift_bound b = bound_of(f);
		void *st = NULL;
		char err[256];
		assert_int_equal(sm_engine_ftree.init(&st, NULL, NULL, err, sizeof(err)), 0);
		struct sm_lfts *l = sm_lfts_new(f, 0);
		struct sm_route_ctx ctx = { .fabric = f, .plane = 0, .out = l };
		if (sm_engine_ftree.route(st, &ctx) == 0) {
			struct sm_route_metrics m;
			struct sm_metrics_opts o = { .n_random = 2, .seed = seed, .skip_cdg = 1 };
			assert_int_equal(sm_metrics_compute(f, 0, l, &o, &m), 0);
			if (!m.unreachable) {
				assert_true(m.shift_max_congestion >= b.bound);
				assert_true(b.updown >= b.bound);
				assert_true(m.shift_max_congestion >= b.updown);
			}
		}
		sm_engine_ftree.free(st);
		sm_lfts_free(l);
		sm_fabric_free(f);
	}
}

/*
 * Same 3-level shape; leaf 0 (pod 0) keeps the aggregation switches of
 * columns 2 and 3, leaf 4 (pod 1) those of columns 0, 1 and 3. Cuts allow
 * 2 (4 hosts on 2 uplinks), but an up/down path keeps its column from pod
 * to pod: the 4 flows a shift sends from leaf 0 to leaf 4 share column 3's
 * one path, so up/down routings cannot do better than 4, and ftree gets 4.
 */
static void test_bound_updown_columns(void **state)
{
	(void)state;
	struct sm_fabric *f = fx_ftree_small_3level();
	struct sm_shift_bound b = bound_of(f);
	assert_int_equal(b.updown, 1);
	assert_int_equal(b.ud_from, SM_NONE);

	assert_int_equal(unlink_to(f, 0, 16, 18, 2), 2); /* leaf 0: columns 0 and 1 gone */
	assert_int_equal(unlink_to(f, 4, 22, 23, 1), 1); /* leaf 4: column 2 gone */
	b = bound_of(f);
	assert_int_equal(b.bound, 2);
	assert_int_equal(b.updown, 4);
	assert_int_equal(b.ud_hosts, 4);
	assert_int_equal(b.ud_paths, 1);
	assert_true((b.ud_from == 0 && b.ud_to == 4) || (b.ud_from == 4 && b.ud_to == 0));

	struct sm_lfts *l = fx_ftree_route(f);
	struct sm_route_metrics m;
	struct sm_metrics_opts o = { .n_random = 1, .seed = 1, .skip_cdg = 1 };
	assert_int_equal(sm_metrics_compute(f, 0, l, &o, &m), 0);
	assert_int_equal(m.shift_max_congestion, 4);
	sm_lfts_free(l);
	sm_fabric_free(f);
}

/*
 * Two pods that lost different columns: generated 3-level tree, 38 of its
 * 384 upper switches removed, seed 42. No leaf pair is held to more than 2,
 * but pod 4 and pod 6 are joined by only 119 link-disjoint up/down paths
 * for the 256 flows of the shift that lines them up: 3. ftree reaches 4.
 */
static void test_bound_pod_pair(void **state)
{
	(void)state;
	struct sm_gen_params gp;
	char err[256];
	sm_gen_params_init(&gp);
	gp.hosts = 2048;
	gp.radix = 32;
	gp.levels = 3;
	gp.remove_switches = 38;
	gp.seed = 42;
	struct sm_fabric *f = sm_fabric_new();
	assert_int_equal(sm_gen_fat_tree(&gp, f, err, sizeof(err)), 0);
	struct sm_shift_bound b = bound_of(f);
	assert_int_equal(b.bound, 2);
	assert_int_equal(b.updown, 3);
	assert_int_equal(b.ud_level, 2);
	assert_int_equal(b.ud_hosts, 256);
	assert_int_equal(b.ud_paths, 119);
	assert_true(b.ud_from != SM_NONE && b.ud_to != SM_NONE);
	struct sm_lfts *l = fx_ftree_route(f);
	struct sm_route_metrics m;
	struct sm_metrics_opts o = { .n_random = 1, .seed = 1, .skip_cdg = 1 };
	assert_int_equal(sm_metrics_compute(f, 0, l, &o, &m), 0);
	assert_true(m.shift_max_congestion >= b.updown && m.shift_max_congestion <= b.updown + 1);
	sm_lfts_free(l);
	sm_fabric_free(f);
}

/* The route from switch node s toward lid under l crosses the link at (a, pa). */
static int crosses(const struct sm_fabric *f, const struct sm_lfts *l, uint32_t s, uint16_t lid, uint32_t a,
		   unsigned pa, uint32_t b, unsigned pb)
{
	for (unsigned hops = 0; hops < 8 && f->nodes[s].type == SM_NODE_SWITCH; hops++) {
		uint8_t p = sm_lfts_get(l, s, lid);
		if (p == SM_LFT_NONE || p == 0)
			return 0;
		if ((s == a && p == pa) || (s == b && p == pb))
			return 1;
		s = sm_port(f, s, p)->peer_node;
		if (s == SM_NONE)
			return 0;
	}
	return 0;
}

/*
 * Minimal churn on a 3-level tree: one aggregation-core link fails and only
 * LFT entries whose full-tree route crossed it change.
 */
static void test_churn_3level(void **state)
{
	(void)state;
	struct ftb_shape s;
	ftb_shape_3level(&s, 8, 64);
	for (uint32_t agg = 16; agg < 32; agg += 5) {
		struct sm_fabric *f = sm_fabric_new();
		assert_int_equal(ftb_build(f, 0, &s, 0), 0);
		struct sm_lfts *full = fx_ftree_route(f);
		unsigned pa = 0;
		for (unsigned p = 1; p <= f->nodes[agg].nports && !pa; p++) {
			uint32_t q = sm_port(f, agg, p)->peer_node;
			if (q != SM_NONE && q >= 32 && q < 48)
				pa = p;
		}
		assert_true(pa > 0);
		uint32_t core = sm_port(f, agg, pa)->peer_node;
		unsigned pc = sm_port(f, agg, pa)->peer_port;
		sm_fabric_unlink(f, agg, pa);
		struct sm_lfts *deg = fx_ftree_route(f);
		unsigned changed = 0;
		for (uint32_t sw = 0; sw < 48; sw++)
			for (uint32_t n = 48; n < f->n_nodes; n++) {
				uint16_t lid = sm_port(f, n, 1)->lid;
				if (sm_lfts_get(full, sw, lid) == sm_lfts_get(deg, sw, lid))
					continue;
				changed++;
				if (!crosses(f, full, sw, lid, agg, pa, core, pc))
					fail_msg("agg %u: switch %u toward LID %u moved without using the failed link", agg, sw, lid);
			}
		assert_true(changed > 0);
		sm_lfts_free(full);
		sm_lfts_free(deg);
		sm_fabric_free(f);
	}
}

/* EBB of ftree's routes on f, over n permutations of seed 1. */
static double ftree_ebb(struct sm_fabric *f, unsigned n)
{
	struct sm_lfts *l = fx_ftree_route(f);
	struct sm_route_metrics m;
	struct sm_metrics_opts o = { .n_random = n, .seed = 1, .skip_shift = 1, .skip_cdg = 1 };
	assert_int_equal(sm_metrics_compute(f, 0, l, &o, &m), 0);
	sm_lfts_free(l);
	return m.ebb;
}

/*
 * The EBB bound (sm_metrics_ebb_bound, routing/metrics_ebb.c): never below
 * what ftree measures, close to it on a complete 2-level tree (the leaves'
 * uplinks are where its flows collide), lower when a leaf loses links, and
 * 1.0 when every host is on one leaf.
 */
static void test_ebb_bound(void **state)
{
	(void)state;
	struct ftb_shape s;
	ftb_shape_2level(&s, 8, 16);
	struct sm_fabric *f = sm_fabric_new();
	assert_int_equal(ftb_build(f, 0, &s, 0), 0);
	double full, deg, ebb = ftree_ebb(f, 4000);
	assert_int_equal(sm_metrics_ebb_bound(f, 0, &full), 0);
	if (ebb > full + 0.005 || ebb < full - 0.03)
		fail_msg("complete 2-level: ftree EBB %.4f, bound %.4f", ebb, full);
	assert_int_equal(unlink_to(f, 1, 4, 8, 2), 2);
	assert_int_equal(sm_metrics_ebb_bound(f, 0, &deg), 0);
	assert_true(deg < full - 0.01);
	ebb = ftree_ebb(f, 4000);
	if (ebb > deg + 0.005)
		fail_msg("leaf 1 with 2 of 4 uplinks: ftree EBB %.4f above the bound %.4f", ebb, deg);
	sm_fabric_free(f);

	/* generated trees: 2 and 3 levels, complete and 10% of the links removed */
	for (unsigned lv = 2; lv <= 3; lv++)
		for (int rm = 0; rm <= 1; rm++) {
			struct sm_gen_params gp;
			char err[256];
			sm_gen_params_init(&gp);
			gp.hosts = 512;
			gp.radix = lv == 2 ? 32 : 16;
			gp.levels = lv;
			gp.remove_links = rm ? 0.10 : 0;
			gp.seed = 3;
			f = sm_fabric_new();
			assert_int_equal(sm_gen_fat_tree(&gp, f, err, sizeof(err)), 0);
			double b;
			assert_int_equal(sm_metrics_ebb_bound(f, 0, &b), 0);
			ebb = ftree_ebb(f, 200);
			if (ebb > b + 0.005)
				fail_msg("%u levels, %d%% removed: ftree EBB %.4f above the bound %.4f", lv, rm * 10, ebb, b);
			sm_fabric_free(f);
		}

	/* every host on one leaf: no switch link to share */
	ftb_shape_2level(&s, 8, 4);
	f = sm_fabric_new();
	assert_int_equal(ftb_build(f, 0, &s, 0), 0);
	assert_int_equal(sm_metrics_ebb_bound(f, 0, &full), 0);
	assert_true(full > 0.999999);
	sm_fabric_free(f);
}

struct gen_case {
	unsigned levels, radix;
	double links;
	unsigned switches;
	uint64_t seed;
	unsigned slack;      /* measured may exceed the bound by this much */
};

/* Route a generated 2,048-host tree with ftree; measured worst shift congestion within slack of the bound. */
static void check_gen(const struct gen_case *c)
{
	struct sm_gen_params gp;
	char err[256];
	sm_gen_params_init(&gp);
	gp.hosts = 2048;
	gp.radix = c->radix;
	gp.levels = c->levels;
	gp.remove_links = c->links;
	gp.remove_switches = c->switches;
	gp.seed = c->seed;
	struct sm_fabric *f = sm_fabric_new();
	assert_int_equal(sm_gen_fat_tree(&gp, f, err, sizeof(err)), 0);
	struct sm_shift_bound b = bound_of(f);
	assert_true(b.bound >= 1);
	void *st = NULL;
	assert_int_equal(sm_engine_ftree.init(&st, NULL, NULL, err, sizeof(err)), 0);
	struct sm_lfts *l = sm_lfts_new(f, 0);
	struct sm_route_ctx ctx = { .fabric = f, .plane = 0, .out = l };
	assert_int_equal(sm_engine_ftree.route(st, &ctx), 0);
	struct sm_validation v;
	assert_int_equal(sm_validate(f, 0, l, 0, &v), 0);
	if (!sm_validate_ok(&v, 0))
		fail_msg("validation: %s", v.msg);
	assert_int_equal(v.credit_loop, 0);
	struct sm_route_metrics m;
	struct sm_metrics_opts o = { .n_random = 1, .seed = 1, .skip_cdg = 1 };
	assert_int_equal(sm_metrics_compute(f, 0, l, &o, &m), 0);
	assert_int_equal(m.unreachable, 0);
	assert_true(m.shift_max_congestion >= b.updown);
	if (m.shift_max_congestion > b.updown + c->slack)
		fail_msg("%u levels, %.0f%% links, %u switches removed, seed %llu: worst shift congestion %u, bound %u "
			 "(up/down %u)",
			 c->levels, c->links * 100, c->switches, (unsigned long long)c->seed, m.shift_max_congestion,
			 b.bound, b.updown);
	sm_engine_ftree.free(st);
	sm_lfts_free(l);
	sm_fabric_free(f);
}

static void test_ftree_reaches_bound(void **state)
{
	(void)state;
	static const struct gen_case cases[] = {
		{ 2, 64, 0.01, 0, 1, 0 },  { 2, 64, 0.03, 0, 2, 0 },  { 2, 64, 0.10, 0, 1, 1 },
		{ 3, 32, 0.01, 0, 1, 0 },  { 3, 32, 0.03, 0, 1, 0 },  { 3, 32, 0.03, 0, 3, 0 },
		{ 3, 32, 0, 12, 1, 0 },    { 3, 32, 0.10, 0, 2, 1 },  { 3, 32, 0.10, 0, 12, 1 },
		/* 10% of the upper switches, seed 9: 4 (ud + 2) before the repair pass (repair.c) */
		{ 3, 32, 0, 38, 9, 1 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_gen(&cases[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bound_2level),
		cmocka_unit_test(test_bound_3level_pod),
		cmocka_unit_test(test_bound_updown_columns),
		cmocka_unit_test(test_bound_pod_pair),
		cmocka_unit_test(test_bound_below_measured),
		cmocka_unit_test(test_ebb_bound),
		cmocka_unit_test(test_ftree_reaches_bound),
		cmocka_unit_test(test_churn_3level),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
