/* SPDX-License-Identifier: MIT */
/*
 * Incremental validation after a reroute (routing/validate_incr.c): on a
 * 3-level fat tree that loses links, the incremental check gives the full
 * check's verdict (and its failure counts) while walking only the LIDs
 * that changed or crossed a removed link; it finds the destinations left
 * broken (old routes kept on the degraded tree, a column edited into a
 * black hole or a loop); it falls back to the full check when a link is
 * added or the numbering differs. The walks start only at changed entries
 * and at entries over a lost cable: loops and black holes reached from
 * them through unchanged entries are found too.
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

/* The small tree routed (f0, l0), and again after aggregation switch 20 lost a core link (f1, l1). */
struct lost {
	struct sm_fabric *f0, *f1;
	struct sm_lfts *l0, *l1;
};

static void lost_core_link(struct lost *x)
{
	x->f0 = fx_ftree_small_3level();
	x->l0 = fx_ftree_route(x->f0);
	x->f1 = copy(x->f0);
	sm_fabric_unlink(x->f1, 20, port_to(x->f1, 20, 32, 48));
	x->l1 = fx_ftree_route(x->f1);
}

static void lost_free(struct lost *x)
{
	sm_lfts_free(x->l1);
	sm_lfts_free(x->l0);
	sm_fabric_free(x->f1);
	sm_fabric_free(x->f0);
}

/* A rerouted table edited into a black hole, then a loop, at one switch for one host LID. */
static void test_edited_column(void **state)
{
	(void)state;
	struct lost t;
	lost_core_link(&t);
	struct sm_fabric *f0 = t.f0, *f1 = t.f1;
	struct sm_lfts *l0 = t.l0, *l1 = t.l1;
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
	lost_free(&t);
}

/*
 * The walks start only at changed entries and at entries over a lost
 * cable (validate_incr.c): a loop closed through an unchanged entry, an
 * entry changed to a lost cable's port, and one over a lost cable left
 * unchanged are all found, with the full check's counts.
 */
static void test_failures_found_from_starts(void **state)
{
	(void)state;
	struct lost t;
	lost_core_link(&t);
	struct sm_fabric *f0 = t.f0, *f1 = t.f1;
	struct sm_lfts *l0 = t.l0, *l1 = t.l1;
	uint16_t lid = sm_port(f1, 48 + 63, 1)->lid;  /* the last host, in pod 3 */
	struct sm_validation v;
	struct sm_validate_prev prev = { .f = f0, .l = l0 };
	uint32_t n = 0;

	/* a leaf whose (unchanged) entry goes up to an aggregation switch; that one's changed to go back down */
	uint32_t leaf = SM_NONE;
	for (uint32_t x = 0; x < 12 && leaf == SM_NONE; x++)
		if (sm_lfts_get(l1, x, lid) == sm_lfts_get(l0, x, lid))
			leaf = x;
	assert_int_not_equal(leaf, SM_NONE);
	unsigned up = sm_lfts_get(l1, leaf, lid);
	uint32_t agg = sm_port(f1, leaf, up)->peer_node;
	assert_true(agg >= 16 && agg < 32);
	struct sm_lfts *bad = sm_lfts_dup(l1);
	assert_non_null(bad);
	sm_lfts_set(bad, agg, lid, sm_port(f1, leaf, up)->peer_port);
	assert_int_not_equal(sm_lfts_get(bad, agg, lid), sm_lfts_get(l0, agg, lid));
	assert_int_equal(both(f1, bad, f0, l0, &n), 0);
	assert_int_equal(sm_validate_incremental(f1, 0, bad, &prev, 0, &v), 0);
	assert_true(v.rechecked > 0);
	assert_true(v.loops > 0);
	sm_lfts_free(bad);

	/* a lost leaf uplink: one leaf's entry changed to name it */
	struct sm_fabric *f2 = copy(f0);
	unsigned dead = port_to(f2, 0, 16, 32);
	sm_fabric_unlink(f2, 0, dead);
	struct sm_lfts *l2 = fx_ftree_route(f2);
	bad = sm_lfts_dup(l2);
	assert_non_null(bad);
	assert_int_not_equal(sm_lfts_get(l0, 0, lid), dead);
	sm_lfts_set(bad, 0, lid, (uint8_t)dead);
	assert_int_equal(both(f2, bad, f0, l0, &n), 0);
	assert_int_equal(sm_validate_incremental(f2, 0, bad, &prev, 0, &v), 0);
	assert_true(v.black_holes > 0);
	assert_int_equal(v.example.dlid, lid);
	sm_lfts_free(bad);

	/* the same lost uplink, the rerouted tables keeping one old entry over it (unchanged) */
	uint16_t lid2 = 0;
	for (uint32_t h = 16; h < 64 && !lid2; h++) {
		uint16_t x = sm_port(f0, 48 + h, 1)->lid;
		if (sm_lfts_get(l0, 0, x) == dead)
			lid2 = x;
	}
	assert_int_not_equal(lid2, 0);
	bad = sm_lfts_dup(l2);
	assert_non_null(bad);
	sm_lfts_set(bad, 0, lid2, (uint8_t)dead);
	assert_int_equal(sm_lfts_get(bad, 0, lid2), sm_lfts_get(l0, 0, lid2));
	assert_int_equal(both(f2, bad, f0, l0, &n), 0);
	assert_int_equal(sm_validate_incremental(f2, 0, bad, &prev, 0, &v), 0);
	assert_true(v.black_holes > 0);
	/* and the rerouted tables themselves pass, walked from fewer switches than the full check walks */
	assert_int_equal(both(f2, l2, f0, l0, &n), 1);
	assert_int_equal(sm_validate_incremental(f2, 0, l2, &prev, 0, &v), 0);
	assert_true(v.walks > 0);
	assert_true(v.walks < (uint64_t)v.rechecked * l2->n_switches);
	sm_lfts_free(bad);
	sm_lfts_free(l2);
	sm_fabric_free(f2);
	lost_free(&t);
}

/* The blocks handed out (delta_out) are exactly those that differ, per switch. */
static void test_delta_blocks(void **state)
{
	(void)state;
	struct lost t;
	lost_core_link(&t);
	struct sm_fabric *f0 = t.f0, *f1 = t.f1;
	struct sm_lfts *l0 = t.l0, *l1 = t.l1;
	struct sm_lft_delta *d = NULL;
	struct sm_validate_prev prev = { .f = f0, .l = l0, .delta_out = &d };
	struct sm_validation v;
	assert_int_equal(sm_validate_incremental(f1, 0, l1, &prev, 0, &v), 0);
	assert_non_null(d);
	assert_ptr_equal(d->l, l1);
	assert_ptr_equal(d->prev, l0);
	size_t n = (size_t)l1->top_lid + 1;
	uint64_t entries = 0, blocks = 0;
	for (uint32_t s = 0; s < l1->n_switches; s++) {
		const uint8_t *a = sm_lfts_row(l1, s), *b = sm_lfts_row(l0, s);
		uint32_t i = d->off[s];
		for (size_t k = 0; k * 64 < n; k++) {
			size_t len = n - k * 64 < 64 ? n - k * 64 : 64;
			int differ = memcmp(a + k * 64, b + k * 64, len) != 0;
			for (size_t x = k * 64; x < k * 64 + len; x++)
				entries += a[x] != b[x];
			if (differ) {
				assert_true(i < d->off[s + 1]);
				assert_int_equal(d->blk[i], k);
				i++;
				blocks++;
			}
		}
		assert_int_equal(i, d->off[s + 1]);
	}
	assert_true(blocks > 0);
	assert_int_equal(d->entries, entries);
	/* a full check (here: a link that came back) hands out nothing, and frees what was there */
	assert_int_equal(sm_validate_incremental(f1, 0, l1, &(struct sm_validate_prev){ .f = f1, .l = l1,
		.delta_out = &d }, 0, &v), 0);
	assert_non_null(d);
	assert_int_equal(d->entries, 0);
	struct sm_validate_prev back = { .f = f1, .l = l1, .delta_out = &d };
	assert_int_equal(sm_validate_incremental(f0, 0, l0, &back, 0, &v), 0);
	assert_int_equal(v.rechecked, 0);
	assert_null(d);
	lost_free(&t);
}

/*
 * Random edits of the rerouted tables (one to three entries: any port,
 * SM_LFT_NONE, 0, the lost cable's), each checked both ways: the same
 * verdict and failure counts every time.
 */
static void test_random_edits(void **state)
{
	(void)state;
	struct lost t;
	lost_core_link(&t);
	uint32_t seed = 12345, n = 0, failed = 0;
	for (unsigned round = 0; round < 300; round++) {
		struct sm_lfts *bad = sm_lfts_dup(t.l1);
		assert_non_null(bad);
		unsigned edits = 1 + round % 3;
		for (unsigned k = 0; k < edits; k++) {
			seed = seed * 1103515245u + 12345u;
			uint32_t s = (seed >> 8) % bad->n_switches;
			seed = seed * 1103515245u + 12345u;
			uint16_t lid = (uint16_t)(1 + (seed >> 8) % bad->top_lid);
			seed = seed * 1103515245u + 12345u;
			unsigned r = (seed >> 8) % 12;
			uint8_t port = r == 0 ? SM_LFT_NONE : r == 1 ? 0 : (uint8_t)(r - 1);
			sm_lfts_row(bad, s)[lid] = port;
		}
		failed += !both(t.f1, bad, t.f0, t.l0, &n);
		sm_lfts_free(bad);
	}
	assert_true(failed > 0);   /* most edits break something, */
	assert_true(failed < 300); /* some land where nothing counts */
	lost_free(&t);
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
		cmocka_unit_test(test_failures_found_from_starts),
		cmocka_unit_test(test_delta_blocks),
		cmocka_unit_test(test_random_edits),
		cmocka_unit_test(test_fallback),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
