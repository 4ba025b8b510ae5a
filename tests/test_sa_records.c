/* SPDX-License-Identifier: MIT */
/*
 * SA record wire formats (smd/sa/records.c): golden bytes for every record
 * against the layouts of OpenSM's include/iba/ib_types.h, the bit-field
 * helpers and component-mask matching with the IBA rules.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "sa/records.h"

static void test_bits(void **st)
{
	(void)st;
	uint8_t r[8] = { 0 };
	sm_sa_bits_put(r, 4, 4, 0xf);        /* low nibble of byte 0 */
	sm_sa_bits_put(r, 8, 16, 0xabcd);
	sm_sa_bits_put(r, 24, 3, 5);         /* top 3 bits of byte 3 */
	sm_sa_bits_put(r, 61, 3, 0xff);      /* masked to 3 bits */
	static const uint8_t g[8] = { 0x0f, 0xab, 0xcd, 0xa0, 0, 0, 0, 0x07 };
	assert_memory_equal(r, g, 8);
	assert_int_equal(sm_sa_bits_get(r, 4, 4), 0xf);
	assert_int_equal(sm_sa_bits_get(r, 8, 16), 0xabcd);
	assert_int_equal(sm_sa_bits_get(r, 24, 3), 5);
	assert_int_equal(sm_sa_bits_get(r, 0, 64), 0x0fabcda000000007ull);
	sm_sa_bits_put(r, 8, 16, 0);
	assert_int_equal(sm_sa_bits_get(r, 0, 32), 0x0f0000a0);
}

static void test_match(void **st)
{
	(void)st;
	static const struct sm_sa_field f[] = {
		SM_SA_F(0, 0, 0, 16),    /* a LID */
		SM_SA_F(2, 2, 4, 4),     /* a nibble */
		SM_SA_F(3, 4, 0, 128),   /* 16 bytes */
	};
	uint8_t a[20] = { 0 }, b[20] = { 0 };
	a[0] = 1; b[0] = 2;
	assert_true(sm_sa_match(f, 3, 0, a, b));
	assert_false(sm_sa_match(f, 3, 1, a, b));
	b[0] = 1;
	assert_true(sm_sa_match(f, 3, 1, a, b));
	a[2] = 0xf3; b[2] = 0x03;            /* only the low nibble is the field */
	assert_true(sm_sa_match(f, 3, 1u << 2, a, b));
	b[2] = 0x04;
	assert_false(sm_sa_match(f, 3, 1u << 2, a, b));
	b[2] = 0x03;
	a[19] = 1;
	assert_false(sm_sa_match(f, 3, 1u << 3, a, b));
	/* bits naming no field (1: reserved, 40, 63) are ignored */
	assert_true(sm_sa_match(f, 3, 1u << 1 | 1ull << 40 | 1ull << 63, a, b));
	/* helpers */
	uint8_t lid[2] = { 0x12, 0x34 };
	assert_true(sm_sa_cm_lid(0, 0, lid, 7));
	assert_true(sm_sa_cm_lid(1, 0, lid, 0x1234));
	assert_false(sm_sa_cm_lid(1, 0, lid, 0x1235));
	uint8_t gid[16];
	sm_sa_gid_make(gid, 0xfe80000000000000ull, 0x0002c90300000001ull);
	assert_int_equal(gid[0], 0xfe);
	assert_int_equal(gid[15], 0x01);
	assert_int_equal(sm_sa_gid_guid(gid), 0x0002c90300000001ull);
	assert_int_equal(sm_sa_gid_prefix(gid), 0xfe80000000000000ull);
	assert_true(sm_sa_cm_guid(1u << 5, 5, gid + 8, 0x0002c90300000001ull));
	assert_false(sm_sa_cm(1ull << 63, 64));
	assert_true(sm_sa_sel_ok(SM_SA_SEL_GT, 3, 4));
	assert_false(sm_sa_sel_ok(SM_SA_SEL_GT, 4, 4));
	assert_true(sm_sa_sel_ok(SM_SA_SEL_LT, 5, 4));
	assert_true(sm_sa_sel_ok(SM_SA_SEL_EQ, 4, 4));
	assert_true(sm_sa_sel_ok(SM_SA_SEL_MAX, 9, 4));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bits),
		cmocka_unit_test(test_match),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
