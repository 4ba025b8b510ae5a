/* SPDX-License-Identifier: MIT */
/* Tests of the SM core: LFT block diff (pure), then bring-up on the mock backend. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "sm_lft.h"

static void test_lft_block_padding(void **state)
{
	(void)state;
	uint8_t row[70], blk[SM_LFT_BLOCK];
	for (unsigned i = 0; i < sizeof(row); i++)
		row[i] = (uint8_t)(i % 7);
	sm_lft_block(row, 69, 0, blk);
	assert_memory_equal(blk, row, 64);
	sm_lft_block(row, 69, 1, blk);
	assert_memory_equal(blk, row + 64, 6);
	for (unsigned i = 6; i < 64; i++)
		assert_int_equal(blk[i], SM_LFT_NONE);
	sm_lft_block(row, 69, 2, blk);
	for (unsigned i = 0; i < 64; i++)
		assert_int_equal(blk[i], SM_LFT_NONE);
	assert_int_equal(sm_lft_nblocks(0), 1);
	assert_int_equal(sm_lft_nblocks(63), 1);
	assert_int_equal(sm_lft_nblocks(64), 2);
	assert_int_equal(sm_lft_nblocks(0xbfff), SM_LFT_MAX_BLOCKS);
}

static void test_lft_diff(void **state)
{
	(void)state;
	struct sm_lft_shadow s;
	uint16_t top = 200, out[SM_LFT_MAX_BLOCKS];
	uint8_t row[201], blk[SM_LFT_BLOCK];
	for (unsigned i = 0; i <= top; i++)
		row[i] = (uint8_t)(1 + i % 5);
	sm_lft_shadow_init(&s);
	/* nothing known: every block is written, nothing is worth reading at top 0 beyond block 0 */
	assert_int_equal(sm_lft_diff(row, top, &s, out), 4);
	assert_int_equal(out[3], 3);
	assert_int_equal(sm_lft_blocks_to_read(top, &s, out), 1);
	assert_int_equal(out[0], 0);
	/* the switch's top covers 3 blocks: read them */
	s.top = 150;
	assert_int_equal(sm_lft_blocks_to_read(top, &s, out), 3);
	/* store what the switch holds: blocks 0..3 equal, then change one entry in block 2 */
	for (unsigned b = 0; b < 4; b++) {
		sm_lft_block(row, top, b, blk);
		assert_int_equal(sm_lft_shadow_store(&s, b, blk), 0);
	}
	assert_int_equal(sm_lft_blocks_to_read(top, &s, out), 0);
	assert_int_equal(sm_lft_diff(row, top, &s, out), 0);
	row[130] = 9;
	assert_int_equal(sm_lft_diff(row, top, &s, out), 1);
	assert_int_equal(out[0], 2);
	/* a stale entry above the new top in the last block must be cleared too */
	s.ent[3 * 64 + 20] = 4;   /* LID 212 > top 200 */
	row[130] = (uint8_t)(1 + 130 % 5);
	assert_int_equal(sm_lft_diff(row, top, &s, out), 1);
	assert_int_equal(out[0], 3);
	/* forgetting makes everything unknown again */
	sm_lft_shadow_forget(&s);
	assert_int_equal(sm_lft_diff(row, top, &s, out), 4);
	assert_int_equal(sm_lft_shadow_reserve(&s, SM_LFT_MAX_BLOCKS + 1), -22);
	sm_lft_shadow_free(&s);
	sm_lft_shadow_free(NULL);
}

int main(void)
{
	const struct CMUnitTest lft[] = {
		cmocka_unit_test(test_lft_block_padding),
		cmocka_unit_test(test_lft_diff),
	};
	return cmocka_run_group_tests_name("lft_diff", lft, NULL, NULL);
}
