/* SPDX-License-Identifier: MIT */
/*
 * DOC: ftree on a small 3-level tree, for the routing tests (test_degraded,
 * test_validate_incr). Include after <cmocka.h>, with bench/ on the include
 * path (ftbuild.h).
 */
#ifndef SMD_TESTS_FX_FTREE_H
#define SMD_TESTS_FX_FTREE_H

#include "routing/engine.h"
#include "ftbuild.h"

extern const struct sm_engine_ops sm_engine_ftree;

/* 4 pods x 4 leaves x 4 hosts (leaves 0-15, aggs 16-31, cores 32-47, hosts from 48). */
static inline struct sm_fabric *fx_ftree_small_3level(void)
{
	struct ftb_shape s;
	ftb_shape_3level(&s, 8, 64);
	struct sm_fabric *f = sm_fabric_new();
	assert_non_null(f);
	assert_int_equal(ftb_build(f, 0, &s, 0), 0);
	return f;
}

/* ftree's tables for plane 0 of f (fails the test if ftree refuses). */
static inline struct sm_lfts *fx_ftree_route(const struct sm_fabric *f)
{
	void *st = NULL;
	char err[256];
	assert_int_equal(sm_engine_ftree.init(&st, NULL, NULL, err, sizeof(err)), 0);
	struct sm_lfts *l = sm_lfts_new(f, 0);
	assert_non_null(l);
	struct sm_route_ctx ctx = { .fabric = f, .plane = 0, .out = l };
	assert_int_equal(sm_engine_ftree.route(st, &ctx), 0);
	sm_engine_ftree.free(st);
	return l;
}

#endif
