/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the route-quality evaluator (routing/metrics.c), on LFTs
 * written by hand for a 4-host tree where every number can be counted on
 * paper: 2 leaves (hosts on ports 1-2, spine 0 on port 3, spine 1 on
 * port 4) and 2 spines (leaf 0 on port 1, leaf 1 on port 2).
 * Hosts (node order) 0,1 on leaf 0 and 2,3 on leaf 1; LIDs: switches 1-4
 * (leaf0, leaf1, spine0, spine1), hosts 5-8.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <cmocka.h>

#include "routing/engine.h"
#include "ftbuild.h"
#include "routing/metrics.h"

struct tiny {
	struct sm_fabric *f;
	struct sm_lfts *l;
	uint32_t leaf[2], spine[2], host[4];
};

static void tiny_setup(struct tiny *t)
{
	struct ftb_shape s = { .levels = 2, .leaves = 2, .hosts = 2, .up = 2, .width = 1 };
	t->f = sm_fabric_new();
	assert_non_null(t->f);
	assert_int_equal(ftb_build(t->f, 0, &s, 0), 0);
	for (unsigned i = 0; i < 2; i++) {
		t->leaf[i] = i;
		t->spine[i] = 2 + i;
	}
	for (unsigned i = 0; i < 4; i++) {
		t->host[i] = 4 + i;
		assert_int_equal(sm_port(t->f, t->host[i], 1)->lid, 5 + i);
	}
	t->l = sm_lfts_new(t->f, 0);
	assert_non_null(t->l);
	/* good routes: host LIDs 5,7 via spine 0, 6,8 via spine 1 */
	for (unsigned lf = 0; lf < 2; lf++)
		for (unsigned h = 0; h < 4; h++) {
			uint16_t lid = (uint16_t)(5 + h);
			uint8_t port = h / 2 == lf ? (uint8_t)(1 + h % 2) : (uint8_t)(3 + h % 2);
			sm_lfts_set(t->l, t->leaf[lf], lid, port);
		}
	for (unsigned sp = 0; sp < 2; sp++)
		for (unsigned h = 0; h < 4; h++)
			sm_lfts_set(t->l, t->spine[sp], (uint16_t)(5 + h), (uint8_t)(1 + h / 2));
}

static void tiny_teardown(struct tiny *t)
{
	sm_lfts_free(t->l);
	sm_fabric_free(t->f);
}

static void test_good_routes(void **state)
{
	(void)state;
	struct tiny t;
	struct sm_route_metrics m;
	struct sm_metrics_opts o = { .n_random = 20, .seed = 7 };
	tiny_setup(&t);
	assert_int_equal(sm_metrics_compute(t.f, 0, t.l, &o, &m), 0);
	assert_int_equal(m.hosts, 4);
	assert_int_equal(m.pairs, 12);
	assert_int_equal(m.unreachable, 0);
	assert_int_equal(m.loops, 0);
	assert_int_equal(m.hops_min, 2);
	assert_int_equal(m.hops_max, 4);
	/* 4 same-leaf pairs of 2 hops, 8 cross pairs of 4 hops */
	assert_true(m.hops_avg > 40.0 / 12 - 1e-9 && m.hops_avg < 40.0 / 12 + 1e-9);
	assert_true(m.minimal_share > 0.999999);
	/* 8 cross pairs x 2 switch links over 8 directed switch links: 2 each */
	assert_int_equal(m.efi_max, 2);
	assert_true(m.efi_max_over_mean > 0.999 && m.efi_max_over_mean < 1.001);
	/* every spine downlink serves exactly one host: any permutation is congestion free */
	assert_int_equal(m.shift_max_congestion, 1);
	assert_int_equal(m.rand_max_congestion, 1);
	assert_true(m.ebb > 0.999999);
	assert_int_equal(m.credit_loop, 0);
	tiny_teardown(&t);
}

static void test_bad_uplink(void **state)
{
	(void)state;
	struct tiny t;
	struct sm_route_metrics m;
	struct sm_metrics_opts o = { .n_random = 50, .seed = 3 };
	tiny_setup(&t);
	/* leaf 0 sends both remote hosts through spine 0: shift 2 puts 2 flows on leaf0->spine0 */
	sm_lfts_set(t.l, t.leaf[0], 8, 3);
	assert_int_equal(sm_metrics_compute(t.f, 0, t.l, &o, &m), 0);
	assert_int_equal(m.unreachable, 0);
	assert_int_equal(m.shift_max_congestion, 2);
	/* leaf0->spine0 carries hosts 0,1 to LIDs 7 and 8: 4 routes */
	assert_int_equal(m.efi_max, 4);
	assert_true(m.ebb < 1.0);
	assert_true(m.rand_max_congestion_mean > 1.0);

	/* the same shift as a weighted flow list: 0->2 (w 1) and 1->3 (w 0.5) share leaf0->spine0 */
	struct sm_flow fl[2] = {
		{ sm_port_index(t.f, t.host[0], 1), sm_port_index(t.f, t.host[2], 1), 1.0 },
		{ sm_port_index(t.f, t.host[1], 1), sm_port_index(t.f, t.host[3], 1), 0.5 },
	};
	double ml = sm_metrics_max_load(t.f, 0, t.l, fl, 2);
	assert_true(ml > 1.499 && ml < 1.501);
	sm_lfts_set(t.l, t.leaf[0], 8, 4); /* repaired: flows split, host links carry 1 */
	ml = sm_metrics_max_load(t.f, 0, t.l, fl, 2);
	assert_true(ml > 0.999 && ml < 1.001);
	/* bad input: a switch port as endpoint */
	fl[0].src = sm_port_index(t.f, t.leaf[0], 0);
	assert_true(sm_metrics_max_load(t.f, 0, t.l, fl, 2) < 0);
	tiny_teardown(&t);
}

static void test_black_hole_and_loop(void **state)
{
	(void)state;
	struct tiny t;
	struct sm_route_metrics m;
	struct sm_metrics_opts o = { .n_random = 5, .seed = 1, .skip_shift = 1 };
	tiny_setup(&t);
	/* black hole: spine 1 has no entry for LID 6 (host 1); hosts 2,3 route to it via spine 1 */
	sm_lfts_set(t.l, t.spine[1], 6, SM_LFT_NONE);
	/* loop: leaf 1 sends LID 5 to spine 0 and spine 0 sends it back to leaf 1 */
	sm_lfts_set(t.l, t.spine[0], 5, 2);
	assert_int_equal(sm_metrics_compute(t.f, 0, t.l, &o, &m), 0);
	assert_int_equal(m.unreachable, 2);
	assert_int_equal(m.loops, 2);
	assert_int_equal(m.shift_max_congestion, 0); /* skipped */
	assert_int_equal(m.hops_max, 4);
	tiny_teardown(&t);
}

static void test_empty_plane(void **state)
{
	(void)state;
	struct sm_fabric *f = sm_fabric_new();
	struct sm_route_metrics m;
	assert_int_equal(sm_fabric_add_node(f, SM_NODE_SWITCH, 0x10, 8, 0, 0), 0);
	struct sm_lfts *l = sm_lfts_new(f, 0);
	assert_int_equal(sm_metrics_compute(f, 0, l, NULL, &m), 0);
	assert_int_equal(m.hosts, 0);
	assert_int_equal(m.pairs, 0);
	assert_int_equal(sm_metrics_compute(f, SM_MAX_PLANES, l, NULL, &m), -EINVAL);
	sm_lfts_free(l);
	sm_fabric_free(f);
}

/*
 * A credit loop without a forwarding loop: 3 leaves, 2 spines, routed by
 * ftree, then four entries bent so that the dependencies
 * L0->S0 => S0->L1 => L1->S1 => S1->L0 => L0->S0 close a cycle.
 * Nodes: leaves 0-2, spines 3-4, CAs 5-10 (two per leaf); LIDs: switches
 * 1-5, CAs 6-11; leaf ports: CAs 1-2, S0 3, S1 4; spine port 1+leaf.
 */
static void test_credit_loop(void **state)
{
	(void)state;
	extern const struct sm_engine_ops sm_engine_ftree;
	struct ftb_shape s = { .levels = 2, .leaves = 3, .hosts = 2, .up = 2, .width = 1 };
	struct sm_fabric *f = sm_fabric_new();
	assert_int_equal(ftb_build(f, 0, &s, 0), 0);
	struct sm_lfts *l = sm_lfts_new(f, 0);
	struct sm_route_ctx ctx = { .fabric = f, .plane = 0, .out = l };
	assert_int_equal(sm_engine_ftree.route(NULL, &ctx), 0);
	struct sm_route_metrics m;
	struct sm_metrics_opts o = { .n_random = 2, .seed = 1 };
	assert_int_equal(sm_metrics_compute(f, 0, l, &o, &m), 0);
	assert_int_equal(m.credit_loop, 0);
	/* LID 8 (on L1): L0 -> S0 -> L1, and from L2: L2 -> S1 -> L0 -> S0 -> L1 */
	sm_lfts_set(l, 0, 8, 3);
	sm_lfts_set(l, 3, 8, 2);
	sm_lfts_set(l, 2, 8, 4);
	sm_lfts_set(l, 4, 8, 1);
	/* LID 10 (on L2): L0 -> S0 -> L1 -> S1 -> L2 */
	sm_lfts_set(l, 0, 10, 3);
	sm_lfts_set(l, 3, 10, 2);
	sm_lfts_set(l, 1, 10, 4);
	sm_lfts_set(l, 4, 10, 3);
	/* LID 6 (on L0): L1 -> S1 -> L0 */
	sm_lfts_set(l, 1, 6, 4);
	sm_lfts_set(l, 4, 6, 1);
	assert_int_equal(sm_metrics_compute(f, 0, l, &o, &m), 0);
	assert_int_equal(m.unreachable, 0);
	assert_int_equal(m.loops, 0);
	assert_int_equal(m.credit_loop, 1);
	o.skip_cdg = 1;
	assert_int_equal(sm_metrics_compute(f, 0, l, &o, &m), 0);
	assert_int_equal(m.credit_loop, -1);
	sm_lfts_free(l);
	sm_fabric_free(f);
}

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/*
 * Random fabrics with random LFT bytes (0, 255, ports out of range,
 * unconnected ports, loops): the evaluator never fails and its counts stay
 * consistent. Also runs under ASan in CI.
 */
static void test_random_tables(void **state)
{
	(void)state;
	uint64_t seed = 12345;
	for (unsigned iter = 0; iter < 200; iter++) {
		struct sm_fabric *f = sm_fabric_new();
		unsigned nsw = 1 + rnd(&seed) % 8, nca = rnd(&seed) % 10, np = 2 + rnd(&seed) % 6;
		uint16_t lid = 1;
		for (unsigned i = 0; i < nsw; i++) {
			assert_int_equal(sm_fabric_add_node(f, SM_NODE_SWITCH, 0x100 + i, np, 0, 0), i);
			assert_int_equal(sm_fabric_set_lid(f, i, 0, lid++, 0), 0);
		}
		for (unsigned i = 0; i < nca; i++) {
			assert_int_equal(sm_fabric_add_node(f, SM_NODE_CA, 0x1000 + i, 1, 0, 0), nsw + i);
			if (rnd(&seed) % 5)
				assert_int_equal(sm_fabric_set_lid(f, nsw + i, 1, lid++, 0), 0);
		}
		for (unsigned c = rnd(&seed) % (nsw * np + nca); c > 0; c--) {
			uint32_t a = (uint32_t)(rnd(&seed) % (nsw + nca)), b = (uint32_t)(rnd(&seed) % (nsw + nca));
			(void)sm_fabric_link(f, a, 1 + rnd(&seed) % f->nodes[a].nports, b, 1 + rnd(&seed) % f->nodes[b].nports);
		}
		struct sm_lfts *l = sm_lfts_new(f, 0);
		assert_non_null(l);
		for (uint32_t s = 0; s < l->n_switches; s++)
			for (uint32_t k = 0; k <= l->top_lid; k++) {
				uint64_t r = rnd(&seed) % 10;
				sm_lfts_row(l, s)[k] = r == 0 ? SM_LFT_NONE : r == 1 ? (uint8_t)(np + 1) : (uint8_t)(r % (np + 1));
			}
		struct sm_route_metrics m;
		struct sm_metrics_opts o = { .n_random = 3, .seed = iter };
		assert_int_equal(sm_metrics_compute(f, 0, l, &o, &m), 0);
		assert_true(m.unreachable + m.loops <= m.pairs);
		assert_true(m.ebb >= 0.0 && m.ebb <= 1.0);
		if (m.unreachable + m.loops < m.pairs)
			assert_true(m.hops_min >= 2 && m.hops_min <= m.hops_max);
		struct sm_flow fl[4];
		unsigned nf = 0;
		for (unsigned i = 0; i + 1 < nca && nf < 4; i += 2)
			if (sm_port(f, nsw + i, 1)->lid && sm_port(f, nsw + i + 1, 1)->lid)
				fl[nf++] = (struct sm_flow){ sm_port_index(f, nsw + i, 1), sm_port_index(f, nsw + i + 1, 1), 1.0 };
		assert_true(sm_metrics_max_load(f, 0, l, fl, nf) >= 0);
		sm_lfts_free(l);
		sm_fabric_free(f);
	}
}

/*
 * Canonical host order: pods contiguous even when leaf GUIDs interleave
 * them, leaves by GUID inside a pod, hosts by leaf port, whatever the node
 * indices. 3 levels: 2 pods of 2 leaves (GUIDs 0x11, 0x13 | 0x12, 0x14)
 * and 2 aggregation switches, 2 cores; 2 hosts per leaf on ports 2 and 1,
 * added so that node order and port order disagree.
 */
static void test_host_order(void **state)
{
	(void)state;
	struct sm_fabric *f = sm_fabric_new();
	assert_non_null(f);
	assert_int_equal(sm_fabric_add_plane(f, 0, NULL), 0);
	static const uint64_t leaf_guid[4] = { 0x14, 0x11, 0x12, 0x13 }; /* pods: {0x11,0x13} {0x12,0x14} */
	static const unsigned leaf_pod[4] = { 1, 0, 1, 0 };
	uint32_t leaf[4], agg[2][2], core[2], host[4][2];
	for (unsigned i = 0; i < 2; i++) {
		core[i] = (uint32_t)sm_fabric_add_node(f, SM_NODE_SWITCH, 0x40 + i, 2, 0, 0);
		for (unsigned p = 0; p < 2; p++)
			agg[p][i] = (uint32_t)sm_fabric_add_node(f, SM_NODE_SWITCH, 0x30 + 2 * p + i, 3, 0, 0);
	}
	for (unsigned l = 0; l < 4; l++) {
		leaf[l] = (uint32_t)sm_fabric_add_node(f, SM_NODE_SWITCH, leaf_guid[l], 4, 0, 0);
		for (unsigned h = 0; h < 2; h++) {
			host[l][h] = (uint32_t)sm_fabric_add_node(f, SM_NODE_CA, 0x100 + 2 * l + h, 1, 0, 0);
			assert_int_equal(sm_fabric_set_port_guid(f, host[l][h], 1, 0x200 + 2 * l + h), 0);
			/* host h on leaf port 2 - h: node order is the reverse of port order */
			assert_int_equal(sm_fabric_link(f, host[l][h], 1, leaf[l], 2 - h), 0);
			assert_int_equal(sm_fabric_set_lid(f, host[l][h], 1, (uint16_t)(100 - 2 * l - h), 0), 0);
		}
		for (unsigned a = 0; a < 2; a++) {
			unsigned p = leaf_pod[l], slot = leaf_guid[l] == 0x11 || leaf_guid[l] == 0x12 ? 1 : 2;
			assert_int_equal(sm_fabric_link(f, leaf[l], 3 + a, agg[p][a], slot), 0);
		}
	}
	for (unsigned p = 0; p < 2; p++)
		for (unsigned a = 0; a < 2; a++)
			assert_int_equal(sm_fabric_link(f, agg[p][a], 3, core[a], 1 + p), 0);
	uint32_t ports[8], n = 0;
	for (uint32_t nd = 0; nd < f->n_nodes; nd++)
		if (f->nodes[nd].type == SM_NODE_CA)
			ports[n++] = sm_port_index(f, nd, 1);
	assert_int_equal(n, 8);
	assert_int_equal(sm_metrics_host_order(f, 0, ports, n), 0);
	/* expected: leaf 0x11 (pod 0), 0x13 (pod 0), 0x12 (pod 1), 0x14 (pod 1); per leaf port 1 then 2 */
	static const unsigned exp_leaf[4] = { 1, 3, 2, 0 }; /* indices into leaf_guid */
	for (unsigned i = 0; i < 8; i++) {
		unsigned l = exp_leaf[i / 2], h = 1 - i % 2; /* port 1 holds host 1 */
		if (ports[i] != sm_port_index(f, host[l][h], 1))
			fail_msg("position %u: port GUID 0x%llx, expected 0x%llx", i,
				 (unsigned long long)f->ports[ports[i]].guid, (unsigned long long)(0x200 + 2 * l + h));
	}
	sm_fabric_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_routes),
		cmocka_unit_test(test_bad_uplink),
		cmocka_unit_test(test_black_hole_and_loop),
		cmocka_unit_test(test_empty_plane),
		cmocka_unit_test(test_credit_loop),
		cmocka_unit_test(test_random_tables),
		cmocka_unit_test(test_host_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
