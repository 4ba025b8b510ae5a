/* SPDX-License-Identifier: MIT */
/*
 * Incremental validation after a reroute (routing/validate_incr.c): on a
 * 3-level fat tree that loses links, the incremental check gives the full
 * check's verdict (and its failure counts) while walking only the LIDs
 * that changed or crossed a removed link; it finds the destinations left
 * broken (old routes kept on the degraded tree, a column edited into a
 * black hole or a loop); it falls back to the full check when a link is
 * added or the numbering differs.
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
#include "routing/validate.h"


static struct sm_fabric *copy(const struct sm_fabric *f)
{
	struct sm_fabric *g = sm_fabric_new();
	assert_non_null(g);
	assert_int_equal(sm_fabric_append(g, f, NULL), 0);
	return g;
}

/* The first port of switch n cabled to a node in [lo, hi). */
static unsigned port_to(const struct sm_fabric *f, uint32_t n, uint32_t lo, uint32_t hi)
{
	for (unsigned p = 1; p <= f->nodes[n].nports; p++) {
		uint32_t q = sm_port(f, n, p)->peer_node;
		if (q != SM_NONE && q >= lo && q < hi)
			return p;
	}
	fail_msg("node %u: no port to [%u, %u)", n, lo, hi);
	return 0;
}

/*
 * Full and incremental validation of l on f (prev: pf, pl); same verdict
 * and failure counts; returns the verdict, *rechecked the LIDs walked.
 */
static int both(const struct sm_fabric *f, const struct sm_lfts *l, const struct sm_fabric *pf,
		const struct sm_lfts *pl, uint32_t *rechecked)
{
	struct sm_validation full, inc;
	struct sm_validate_prev prev = { .f = pf, .l = pl };
	unsigned flags = SM_VALIDATE_NO_CDG;
	assert_int_equal(sm_validate(f, 0, l, flags, &full), 0);
	assert_int_equal(sm_validate_incremental(f, 0, l, &prev, flags, &inc), 0);
	int ok = sm_validate_ok(&full, flags);
	if (ok != sm_validate_ok(&inc, flags))
		fail_msg("verdicts differ: full '%s', incremental '%s'", full.msg, inc.msg);
	assert_int_equal(inc.unreachable, full.unreachable);
	assert_int_equal(inc.loops, full.loops);
	assert_int_equal(inc.black_holes, full.black_holes);
	assert_int_equal(inc.sw_loops, full.sw_loops);
	assert_int_equal(full.rechecked, 0);
	if (inc.rechecked)
		assert_int_equal(inc.credit_loop, -1);
	*rechecked = inc.rechecked;
	return ok;
}

/* One aggregation-core link fails and ftree reroutes: ok both ways, a few LIDs walked. */
static void test_reroute_ok(void **state)
{
	(void)state;
	struct sm_fabric *f0 = fx_ftree_small_3level();
	struct sm_lfts *l0 = fx_ftree_route(f0);
	uint32_t all = 0, n = 0;
	for (uint32_t agg = 16; agg < 32; agg += 5) {
		struct sm_fabric *f1 = copy(f0);
		sm_fabric_unlink(f1, agg, port_to(f1, agg, 32, 48));
		struct sm_lfts *l1 = fx_ftree_route(f1);
		assert_int_equal(both(f1, l1, f0, l0, &n), 1);
		struct sm_validation v;
		assert_int_equal(sm_validate(f1, 0, l1, 0, &v), 0);
		all = v.lids;
		assert_true(n > 0);
		assert_true(n < all);
		sm_lfts_free(l1);
		sm_fabric_free(f1);
	}
	/* nothing changed at all: nothing to walk, the previous verdict holds */
	struct sm_validation v;
	struct sm_validate_prev prev = { .f = f0, .l = l0 };
	assert_int_equal(sm_validate_incremental(f0, 0, l0, &prev, 0, &v), 0);
	assert_int_equal(v.lids, 0);
	assert_int_equal(sm_validate_ok(&v, 0), 1);
	sm_lfts_free(l0);
	sm_fabric_free(f0);
}

/* The old routes kept after a leaf-agg link fails: the LIDs routed over it are broken, and found. */
static void test_stale_routes_broken(void **state)
{
	(void)state;
	struct sm_fabric *f0 = fx_ftree_small_3level();
	struct sm_lfts *l0 = fx_ftree_route(f0);
	struct sm_fabric *f1 = copy(f0);
	sm_fabric_unlink(f1, 0, port_to(f1, 0, 16, 32));
	uint32_t n = 0;
	/* columns unchanged everywhere: only the removed-link set finds them */
	assert_int_equal(both(f1, l0, f0, l0, &n), 0);
	assert_true(n > 0);
	struct sm_validation v;
	struct sm_validate_prev prev = { .f = f0, .l = l0 };
	assert_int_equal(sm_validate_incremental(f1, 0, l0, &prev, 0, &v), 0);
	assert_true(v.black_holes > 0);
	sm_lfts_free(l0);
	sm_fabric_free(f1);
	sm_fabric_free(f0);
}

/* A rerouted table edited into a black hole, then a loop, at one switch for one host LID. */
static void test_edited_column(void **state)
{
	(void)state;
	struct sm_fabric *f0 = fx_ftree_small_3level();
	struct sm_lfts *l0 = fx_ftree_route(f0);
	struct sm_fabric *f1 = copy(f0);
	sm_fabric_unlink(f1, 20, port_to(f1, 20, 32, 48));
	struct sm_lfts *l1 = fx_ftree_route(f1);
	uint16_t lid = sm_port(f1, 48 + 63, 1)->lid;  /* the last host, in pod 3 */
	uint32_t n = 0;

	/* leaf 0 drops it */
	struct sm_lfts *bad = sm_lfts_dup(l1);
	assert_non_null(bad);
	sm_lfts_row(bad, bad->slot_of_node[0])[lid] = SM_LFT_NONE;
	assert_int_equal(both(f1, bad, f0, l0, &n), 0);

	/* leaf 0 sends it up to an aggregation switch that sends it back down to leaf 0 */
	sm_lfts_free(bad);
	bad = sm_lfts_dup(l1);
	assert_non_null(bad);
	unsigned up = port_to(f1, 0, 16, 32);
	uint32_t agg = sm_port(f1, 0, up)->peer_node;
	sm_lfts_row(bad, bad->slot_of_node[0])[lid] = (uint8_t)up;
	sm_lfts_row(bad, bad->slot_of_node[agg])[lid] = sm_port(f1, 0, up)->peer_port;
	assert_int_equal(both(f1, bad, f0, l0, &n), 0);
	struct sm_validation v;
	struct sm_validate_prev prev = { .f = f0, .l = l0 };
	assert_int_equal(sm_validate_incremental(f1, 0, bad, &prev, 0, &v), 0);
	assert_true(v.rechecked > 0);
	assert_true(v.loops > 0);
	sm_lfts_free(bad);
	sm_lfts_free(l1);
	sm_lfts_free(l0);
	sm_fabric_free(f1);
	sm_fabric_free(f0);
}

/* A link that came back, or another node numbering: the full check runs (rechecked 0). */
static void test_fallback(void **state)
{
	(void)state;
	struct sm_fabric *f0 = fx_ftree_small_3level();
	struct sm_fabric *f1 = copy(f0);
	sm_fabric_unlink(f1, 20, port_to(f1, 20, 32, 48));
	struct sm_lfts *l0 = fx_ftree_route(f0), *l1 = fx_ftree_route(f1);
	uint32_t n = 1;
	/* f1 -> f0: the link came back */
	assert_int_equal(both(f0, l0, f1, l1, &n), 1);
	assert_int_equal(n, 0);
	/* another fabric entirely (2 levels): full */
	struct ftb_shape s;
	ftb_shape_2level(&s, 8, 16);
	struct sm_fabric *f2 = sm_fabric_new();
	assert_int_equal(ftb_build(f2, 0, &s, 0), 0);
	struct sm_lfts *l2 = fx_ftree_route(f2);
	n = 1;
	assert_int_equal(both(f2, l2, f0, l0, &n), 1);
	assert_int_equal(n, 0);
	sm_lfts_free(l2);
	sm_fabric_free(f2);
	sm_lfts_free(l0);
	sm_lfts_free(l1);
	sm_fabric_free(f1);
	sm_fabric_free(f0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reroute_ok),
		cmocka_unit_test(test_stale_routes_broken),
		cmocka_unit_test(test_edited_column),
		cmocka_unit_test(test_fallback),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
