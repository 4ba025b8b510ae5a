/* SPDX-License-Identifier: MIT */
/* Unit tests for route validation (routing/validate.c) on deliberately broken LFTs. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <string.h>
#include <cmocka.h>

#include "routing/registry.h"
#include "routing/validate.h"
#include "fixture/route_fix.h"

/* S0 - S1 - S2 line with 2 hosts each (ports 1-2), east = port 3, west = port 4; minhop routes. */
static struct sm_lfts *line_routed(struct fix *x)
{
	fix_init(x);
	fix_chain(x, 3, 2, 0);
	fix_lids(x, 0);
	void *st;
	char err[128];
	assert_int_equal(sm_engine_minhop.init(&st, NULL, NULL, err, sizeof(err)), 0);
	struct sm_lfts *l = sm_lfts_new(x->f, 0);
	struct sm_route_ctx ctx = { .fabric = x->f, .plane = 0, .out = l };
	assert_int_equal(sm_engine_minhop.route(st, &ctx), 0);
	sm_engine_minhop.free(st);
	return l;
}

static uint16_t host_lid(const struct fix *x, unsigned h)
{
	return sm_port(x->f, x->ca[h], 1)->lid;
}

static void test_good(void **state)
{
	(void)state;
	struct fix x;
	struct sm_lfts *l = line_routed(&x);
	struct sm_validation v;
	assert_int_equal(sm_validate(x.f, 0, l, 0, &v), 0);
	assert_true(sm_validate_ok(&v, 0));
	assert_int_equal(v.switches, 3);
	assert_int_equal(v.sw_lids, 3);
	assert_int_equal(v.sw_pairs, 3 * (6 + 2));
	assert_int_equal(v.sw_unreachable, 0);
	assert_int_equal(v.example.kind, SM_FAULT_NONE);
	assert_int_equal(strncmp(v.msg, "ok:", 3), 0);
	/* the CDG check alone agrees */
	assert_int_equal(sm_cdg_check(x.f, 0, l, NULL), 0);
	/* skipping the CDG reports it as not checked */
	assert_int_equal(sm_validate(x.f, 0, l, SM_VALIDATE_NO_CDG, &v), 0);
	assert_int_equal(v.credit_loop, -1);
	assert_true(sm_validate_ok(&v, SM_VALIDATE_NO_CDG));
	sm_lfts_free(l);
	sm_fabric_free(x.f);
}

static void test_black_hole(void **state)
{
	(void)state;
	struct fix x;
	struct sm_lfts *l = line_routed(&x);
	struct sm_validation v;
	/* S1 loses its entry for host 4 (on S2): hosts of S0 and S1 cannot reach it */
	sm_lfts_set(l, x.sw[1], host_lid(&x, 4), SM_LFT_NONE);
	assert_int_equal(sm_validate(x.f, 0, l, 0, &v), 0);
	assert_false(sm_validate_ok(&v, 0));
	assert_int_equal(v.black_holes, 4);
	assert_int_equal(v.loops, 0);
	assert_int_equal(v.unreachable, 4);
	assert_int_equal(v.example.kind, SM_FAULT_BLACK_HOLE);
	assert_int_equal(v.example.dlid, host_lid(&x, 4));
	assert_int_equal(v.example.at_node, x.sw[1]);
	assert_int_equal(v.example.at_port, SM_LFT_NONE);
	assert_non_null(strstr(v.msg, "black hole at 'S1'"));
	assert_non_null(strstr(v.msg, "4 of 30 endpoint pairs"));
	sm_lfts_free(l);
	sm_fabric_free(x.f);
}

static void test_bad_ports(void **state)
{
	(void)state;
	struct fix x;
	struct sm_lfts *l = line_routed(&x);
	struct sm_validation v;
	struct sm_lfts *orig = sm_lfts_dup(l);
	uint16_t h4 = host_lid(&x, 4), h0 = host_lid(&x, 0);

	/* a port with no cable (S0 port 4 is its unconnected west port) */
	sm_lfts_set(l, x.sw[0], h4, 4);
	assert_int_equal(sm_validate(x.f, 0, l, 0, &v), 0);
	assert_int_equal(v.black_holes, 2);
	/* a port number beyond the switch */
	sm_lfts_set(l, x.sw[0], h4, 9);
	assert_int_equal(sm_validate(x.f, 0, l, 0, &v), 0);
	assert_int_equal(v.black_holes, 2);
	/* delivery to the wrong host: S2 sends host 4's LID to host 5 */
	memcpy(l->ports, orig->ports, (size_t)l->n_switches * (l->top_lid + 1));
	sm_lfts_set(l, x.sw[2], h4, 2);
	assert_int_equal(sm_validate(x.f, 0, l, 0, &v), 0);
	assert_int_equal(v.black_holes, 5);  /* every other host */
	/* port 0 at a switch that does not own the LID */
	memcpy(l->ports, orig->ports, (size_t)l->n_switches * (l->top_lid + 1));
	sm_lfts_set(l, x.sw[1], h0, 0);
	assert_int_equal(sm_validate(x.f, 0, l, 0, &v), 0);
	assert_int_equal(v.black_holes, 4);  /* hosts of S1 and S2 */
	/* a switch LID unreachable from one switch */
	memcpy(l->ports, orig->ports, (size_t)l->n_switches * (l->top_lid + 1));
	uint16_t s2 = sm_port(x.f, x.sw[2], 0)->lid;
	sm_lfts_set(l, x.sw[0], s2, SM_LFT_NONE);
	assert_int_equal(sm_validate(x.f, 0, l, 0, &v), 0);
	assert_int_equal(v.sw_unreachable, 3);  /* from S0 and its two hosts */
	assert_int_equal(v.black_holes, 0);     /* endpoint pairs are all fine */
	assert_true(sm_validate_ok(&v, 0));
	assert_false(sm_validate_ok(&v, SM_VALIDATE_STRICT_SWITCHES));
	/* a loop toward a switch LID is always fatal */
	sm_lfts_set(l, x.sw[0], s2, 3);
	sm_lfts_set(l, x.sw[1], s2, 4);
	assert_int_equal(sm_validate(x.f, 0, l, 0, &v), 0);
	assert_int_equal(v.sw_loops, 6);  /* S0, S1 and their 4 hosts */
	assert_false(sm_validate_ok(&v, 0));
	assert_non_null(strstr(v.msg, "loops through"));
	sm_lfts_free(orig);
	sm_lfts_free(l);
	sm_fabric_free(x.f);
}

/* Spine-to-spine entries are switch-sourced only: reported, a failure only when strict. */
static void test_switch_pairs(void **state)
{
	(void)state;
	struct fix x;
	fix_init(&x);
	fix_fat_tree(&x, 2, 2, 2, 1, 0);  /* S0, S1 leaves; S2, S3 spines */
	fix_lids(&x, 0);
	void *st;
	char err[128];
	assert_int_equal(sm_engine_minhop.init(&st, NULL, NULL, err, sizeof(err)), 0);
	struct sm_lfts *l = sm_lfts_new(x.f, 0);
	struct sm_route_ctx ctx = { .fabric = x.f, .plane = 0, .out = l };
	assert_int_equal(sm_engine_minhop.route(st, &ctx), 0);
	sm_lfts_set(l, x.sw[2], sm_port(x.f, x.sw[3], 0)->lid, SM_LFT_NONE);
	struct sm_validation v;
	assert_int_equal(sm_validate(x.f, 0, l, 0, &v), 0);
	assert_int_equal(v.sw_unreachable, 1);
	assert_int_equal(v.unreachable, 0);
	assert_true(sm_validate_ok(&v, 0));
	assert_non_null(strstr(v.msg, "1 of 28 pairs to switch LIDs unrouted"));
	assert_int_equal(sm_validate(x.f, 0, l, SM_VALIDATE_STRICT_SWITCHES, &v), 0);
	assert_false(sm_validate_ok(&v, SM_VALIDATE_STRICT_SWITCHES));
	assert_non_null(strstr(v.msg, "black hole at 'S2'"));
	sm_lfts_free(l);
	sm_fabric_free(x.f);
}

static void test_loop(void **state)
{
	(void)state;
	struct fix x;
	struct sm_lfts *l = line_routed(&x);
	struct sm_validation v;
	/* S1 sends host 4's LID back west, S0 sends it east: a loop between S0 and S1 */
	sm_lfts_set(l, x.sw[1], host_lid(&x, 4), 4);
	assert_int_equal(sm_validate(x.f, 0, l, 0, &v), 0);
	assert_false(sm_validate_ok(&v, 0));
	assert_int_equal(v.loops, 4);
	assert_int_equal(v.black_holes, 0);
	assert_int_equal(v.example.kind, SM_FAULT_LOOP);
	assert_non_null(strstr(v.msg, "loops through"));
	/* the loop is also a cycle of the CDG */
	assert_int_equal(v.credit_loop, 1);
	sm_lfts_free(l);
	sm_fabric_free(x.f);
}

/* Ring of 4 switches routed clockwise only: every route works, the CDG has a cycle. */
static void test_credit_loop(void **state)
{
	(void)state;
	struct fix x;
	fix_init(&x);
	fix_chain(&x, 4, 1, 1);  /* host on port 1, clockwise = port 2 (to next), port 3 from previous */
	fix_lids(&x, 0);
	struct sm_lfts *l = sm_lfts_new(x.f, 0);
	for (unsigned s = 0; s < 4; s++)
		for (uint16_t lid = 1; lid <= l->top_lid; lid++) {
			uint32_t pi = x.f->planes[0].lid_map[lid];
			uint32_t owner = x.f->ports[pi].node;
			uint32_t at = x.f->nodes[owner].type == SM_NODE_SWITCH ? owner : x.f->ports[pi].peer_node;
			uint8_t e = at != x.sw[s] ? 2 : x.f->nodes[owner].type == SM_NODE_SWITCH ? 0 : 1;
			sm_lfts_set(l, x.sw[s], lid, e);
		}
	struct sm_validation v;
	assert_int_equal(sm_validate(x.f, 0, l, 0, &v), 0);
	assert_int_equal(v.unreachable, 0);
	assert_int_equal(v.max_hops, 3);
	assert_int_equal(v.credit_loop, 1);
	assert_int_equal(v.cycle_len, 4);
	for (unsigned i = 0; i < v.cycle_len; i++) {
		const struct sm_port *p = &x.f->ports[v.cycle[i]];
		assert_int_equal(p->num, 2);  /* every link of the cycle is a clockwise one */
		/* consecutive: each link starts where the previous one ends */
		const struct sm_port *n = &x.f->ports[v.cycle[(i + 1) % v.cycle_len]];
		assert_int_equal(p->peer_node, n->node);
	}
	assert_false(sm_validate_ok(&v, 0));
	assert_true(sm_validate_ok(&v, SM_VALIDATE_ALLOW_CREDIT_LOOP));
	assert_non_null(strstr(v.msg, "credit loop: 'S"));
	char cyc[256];
	sm_validate_format_cycle(x.f, &v, cyc, sizeof(cyc));
	assert_non_null(strstr(cyc, "[2] -> "));
	struct sm_validation w;
	assert_int_equal(sm_cdg_check(x.f, 0, l, &w), 1);
	assert_int_equal(w.cycle_len, 4);

	sm_lfts_free(l);
	sm_fabric_free(x.f);
}

static void test_mismatch(void **state)
{
	(void)state;
	struct fix x;
	struct sm_lfts *l = line_routed(&x);
	struct sm_validation v;
	l->plane = 1;
	assert_int_equal(sm_validate(x.f, 0, l, 0, &v), -EINVAL);
	l->plane = 0;
	l->n_nodes--;
	assert_int_equal(sm_validate(x.f, 0, l, 0, &v), -EINVAL);
	l->n_nodes++;
	assert_int_equal(sm_validate(x.f, 0, NULL, 0, &v), -EINVAL);
	sm_lfts_free(l);
	sm_fabric_free(x.f);
}

/* Two switches without a cable between them: no endpoint pair can be routed. */
static void test_nothing_reachable(void **state)
{
	(void)state;
	struct fix x;
	fix_init(&x);
	uint32_t a = fix_switch(&x, 4, 0), b = fix_switch(&x, 4, 0);
	fix_hosts(&x, a, 1, 0);
	fix_hosts(&x, b, 1, 0);
	fix_lids(&x, 0);
	struct sm_lfts *l = sm_lfts_new(x.f, 0);
	/* each switch delivers only its own host and LID */
	sm_lfts_set(l, a, sm_port(x.f, a, 0)->lid, 0);
	sm_lfts_set(l, b, sm_port(x.f, b, 0)->lid, 0);
	sm_lfts_set(l, a, host_lid(&x, 0), 1);
	sm_lfts_set(l, b, host_lid(&x, 1), 1);
	struct sm_validation v;
	assert_int_equal(sm_validate(x.f, 0, l, 0, &v), 0);
	/* the only endpoint pairs are across the parts: nothing to reach is a failure */
	assert_int_equal(v.pairs, 2);
	assert_int_equal(v.reachable, 0);
	assert_int_equal(v.disconnected, 2);
	assert_int_equal(v.unreachable, 0);
	assert_false(sm_validate_ok(&v, 0));
	assert_non_null(strstr(v.msg, "nothing reachable"));
	sm_lfts_free(l);
	sm_fabric_free(x.f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_black_hole),
		cmocka_unit_test(test_bad_ports),
		cmocka_unit_test(test_switch_pairs),
		cmocka_unit_test(test_loop),
		cmocka_unit_test(test_credit_loop),
		cmocka_unit_test(test_mismatch),
		cmocka_unit_test(test_nothing_reachable),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
