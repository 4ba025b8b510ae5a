/* SPDX-License-Identifier: MIT */
/* Unit tests for the fabric model (smd/model/fabric.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <cmocka.h>

#include "fixture/fixture.h"
#include "model/fabric.h"

static void test_add_and_lookup(void **state)
{
	(void)state;
	struct sm_fabric *f = sm_fabric_new();
	assert_non_null(f);
	int64_t sw = sm_fabric_add_node(f, SM_NODE_SWITCH, 0x1000, 36, 0, 0);
	int64_t ca = sm_fabric_add_node(f, SM_NODE_CA, 0x2000, 2, 0, 0);
	assert_int_equal(sw, 0);
	assert_int_equal(ca, 1);
	assert_int_equal(sm_fabric_add_node(f, SM_NODE_CA, 0x2000, 1, 0, 0), -EEXIST);
	assert_int_equal(sm_fabric_add_node(f, SM_NODE_CA, 0, 1, 0, 0), -EINVAL);
	assert_int_equal(sm_fabric_add_node(f, SM_NODE_CA, 0x3000, 0, 0, 0), -EINVAL);
	assert_int_equal(sm_fabric_add_node(f, SM_NODE_CA, 0x3000, 255, 0, 0), -EINVAL);
	assert_int_equal(sm_fabric_add_node(f, SM_NODE_CA, 0x3000, 1, SM_MAX_PLANES, 0), -EINVAL);
	assert_int_equal(sm_fabric_set_port_guid(f, 1, 1, 0x2001), 0);
	assert_int_equal(sm_fabric_set_port_guid(f, 1, 2, 0x2001), -EEXIST);
	assert_int_equal(sm_fabric_set_port_guid(f, 1, 3, 0x2003), -EINVAL);
	assert_int_equal(sm_fabric_find_node(f, 0x1000), 0);
	assert_int_equal(sm_fabric_find_node(f, 0x2000), 1);
	assert_int_equal(sm_fabric_find_node(f, 0x9999), SM_NONE);
	assert_int_equal(sm_fabric_find_port(f, 0x1000), sm_port_index(f, 0, 0));
	assert_int_equal(sm_fabric_find_port(f, 0x2001), sm_port_index(f, 1, 1));
	assert_int_equal(sm_port(f, 0, 17)->guid, 0x1000);
	assert_null(sm_fabric_port_checked(f, 1, 0));
	assert_null(sm_fabric_port_checked(f, 1, 3));
	assert_non_null(sm_fabric_port_checked(f, 0, 0));
	sm_fabric_free(f);
	sm_fabric_free(NULL);
}

static void test_links(void **state)
{
	(void)state;
	struct sm_fabric *f = sm_fabric_new();
	sm_fabric_add_node(f, SM_NODE_SWITCH, 0x10, 8, 0, 0);
	sm_fabric_add_node(f, SM_NODE_SWITCH, 0x11, 8, 0, 0);
	sm_fabric_add_node(f, SM_NODE_CA, 0x20, 1, 0, 0);
	sm_fabric_add_node(f, SM_NODE_CA, 0x30, 1, 1, 0);
	assert_int_equal(sm_fabric_link(f, 0, 1, 2, 1), 0);
	assert_int_equal(sm_fabric_link(f, 0, 1, 2, 1), 0);        /* same pair: no-op */
	assert_int_equal(sm_fabric_link(f, 0, 1, 1, 1), -EBUSY);   /* already linked */
	assert_int_equal(sm_fabric_link(f, 0, 0, 1, 1), -EINVAL);  /* port 0 */
	assert_int_equal(sm_fabric_link(f, 0, 9, 1, 1), -EINVAL);  /* out of range */
	assert_int_equal(sm_fabric_link(f, 0, 2, 3, 1), -EINVAL);  /* cross plane */
	/* two parallel links between the switches */
	assert_int_equal(sm_fabric_link(f, 0, 3, 1, 3), 0);
	assert_int_equal(sm_fabric_link(f, 0, 4, 1, 4), 0);
	assert_int_equal(sm_port(f, 1, 4)->peer_node, 0);
	assert_int_equal(sm_port(f, 1, 4)->peer_port, 4);
	fx_expect_counts(f, -1, 4, 2, 2, 3, 2);
	assert_int_equal(f->n_planes, 2);
	fx_expect_counts(f, 1, 1, FX_ANY, FX_ANY, 0, FX_ANY);
	sm_fabric_unlink(f, 1, 3);
	assert_int_equal(sm_port(f, 0, 3)->peer_node, SM_NONE);
	fx_expect_counts(f, -1, FX_ANY, FX_ANY, FX_ANY, FX_ANY, 1);
	sm_fabric_free(f);
}

static void test_lids(void **state)
{
	(void)state;
	struct sm_fabric *f = sm_fabric_new();
	sm_fabric_add_node(f, SM_NODE_SWITCH, 0x10, 8, 0, 0);
	sm_fabric_add_node(f, SM_NODE_CA, 0x20, 2, 0, 0);
	sm_fabric_add_node(f, SM_NODE_CA, 0x30, 1, 1, 0);
	assert_int_equal(sm_fabric_set_lid(f, 0, 1, 5, 0), -EINVAL);   /* switch: port 0 only */
	assert_int_equal(sm_fabric_set_lid(f, 0, 0, 1, 0), 0);
	assert_int_equal(sm_fabric_set_lid(f, 1, 1, 4, 2), 0);         /* 4..7 */
	assert_int_equal(sm_fabric_set_lid(f, 1, 2, 6, 0), -EEXIST);
	assert_int_equal(sm_fabric_set_lid(f, 1, 2, 8, 0), 0);
	assert_int_equal(sm_fabric_set_lid(f, 2, 1, 4, 0), 0);         /* other plane: same LID ok */
	assert_int_equal(sm_fabric_set_lid(f, 1, 2, 0xBFFF, 1), -EINVAL);
	assert_int_equal(sm_fabric_set_lid(f, 1, 2, 9, 8), -EINVAL);
	assert_int_equal(sm_fabric_find_lid(f, 0, 1), sm_port_index(f, 0, 0));
	for (unsigned l = 4; l <= 7; l++)
		assert_int_equal(sm_fabric_find_lid(f, 0, l), sm_port_index(f, 1, 1));
	assert_int_equal(sm_fabric_find_lid(f, 1, 4), sm_port_index(f, 2, 1));
	assert_int_equal(sm_fabric_find_lid(f, 0, 9), SM_NONE);
	assert_int_equal(f->planes[0].max_lid, 8);
	/* moving a LID frees the old range */
	assert_int_equal(sm_fabric_set_lid(f, 1, 1, 20, 0), 0);
	assert_int_equal(sm_fabric_find_lid(f, 0, 5), SM_NONE);
	assert_int_equal(sm_fabric_find_lid(f, 0, 20), sm_port_index(f, 1, 1));
	struct sm_fabric_counts c;
	sm_fabric_count(f, 0, &c);
	assert_int_equal(c.lids, 3);
	assert_int_equal(sm_node_lid(f, 0, 5), 1);
	sm_fabric_free(f);
}

/* A 16,384-host, 768-switch fabric must fit in tens of MB. */
static void test_scale_memory(void **state)
{
	(void)state;
	struct sm_fabric *f = sm_fabric_new();
	uint64_t g = 1;
	for (unsigned pl = 0; pl < 8; pl++) {
		uint32_t base = f->n_nodes;
		for (unsigned s = 0; s < 96; s++)
			assert_true(sm_fabric_add_node(f, SM_NODE_SWITCH, g++, 64, pl, 0) >= 0);
		for (unsigned h = 0; h < 2048; h++) {
			int64_t n = sm_fabric_add_node(f, SM_NODE_CA, g++, 1, pl, 0);
			assert_true(n >= 0);
			assert_int_equal(sm_fabric_set_port_guid(f, (uint32_t)n, 1, g++), 0);
			assert_int_equal(sm_fabric_link(f, (uint32_t)n, 1, base + h / 32, 1 + h % 32), 0);
			assert_int_equal(sm_fabric_set_lid(f, (uint32_t)n, 1, (uint16_t)(h + 1), 0), 0);
		}
	}
	fx_expect_counts(f, -1, FX_ANY, 768, 16384, FX_ANY, FX_ANY);
	assert_true(sm_fabric_mem_bytes(f) < 40u * 1024 * 1024);
	sm_fabric_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_and_lookup),
		cmocka_unit_test(test_links),
		cmocka_unit_test(test_lids),
		cmocka_unit_test(test_scale_memory),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
