/* SPDX-License-Identifier: MIT */
#ifndef SMD_SM_LFT_H
#define SMD_SM_LFT_H
/*
 * DOC: LFT shadow and block diff
 *
 * A switch's linear forwarding table is written in blocks of 64 entries
 * (Set LinearForwardingTable, attribute modifier = block number). smd keeps
 * a shadow of what each switch holds: the entries, and per block whether the
 * shadow is known to mirror the switch (read back with Get, or written by
 * us and acknowledged). Programming a new table writes exactly the blocks
 * that are unknown or differ, so a fabric that already holds the right
 * tables costs no LFT writes at all.
 *
 * The last block of a row is padded with SM_LFT_NONE beyond top: the switch
 * ignores entries above LinearFDBTop, but keeping them invalid means raising
 * the top later never exposes stale routes.
 */
#include <stdint.h>
#include "routing/engine.h"
#include "mad/codec.h"   /* SM_LFT_BLOCK (64 entries), SM_LFT_MAX_BLOCKS (768) */

struct sm_lft_shadow {
	uint8_t *ent;       /* n_blocks * 64 entries; NULL while `row` stands for them */
	uint8_t *known;     /* [n_blocks]: 1 if ent[] mirrors the switch for that block */
	uint16_t n_blocks;  /* allocated blocks */
	uint16_t top;       /* LinearFDBTop the switch holds (as last read or set) */
	/*
	 * Shared with the LFTs programmed (issue 17: at 40k hosts the shadows
	 * are 160 MB, a copy of the snapshot's LFTs): when ent is NULL and row
	 * is not, block b holds sm_lft_block(row, row_top, b). Set by
	 * sm_lft_shadow_share() for the state, whose snapshot owns the row; the
	 * first store or growth copies the row into ent (sm_lft_shadow_own).
	 */
	const uint8_t *row;
	uint16_t row_top;
};

void sm_lft_shadow_init(struct sm_lft_shadow *s);
void sm_lft_shadow_free(struct sm_lft_shadow *s);      /* accepts NULL */
/* Grow to at least n_blocks (<= SM_LFT_MAX_BLOCKS); new blocks unknown. */
int sm_lft_shadow_reserve(struct sm_lft_shadow *s, unsigned n_blocks);
/*
 * Record that block b of the switch holds data[64] (read back or written).
 * A shared shadow whose row holds data at b only marks it known.
 */
int sm_lft_shadow_store(struct sm_lft_shadow *s, unsigned b, const uint8_t *data);
/* Forget everything (the switch was reset or replaced). */
void sm_lft_shadow_forget(struct sm_lft_shadow *s);
/* Block b as the shadow holds it (b < n_blocks). */
void sm_lft_shadow_get(const struct sm_lft_shadow *s, unsigned b, uint8_t out[SM_LFT_BLOCK]);
/*
 * If every block of s is known and equal to row[0..top] (its last block
 * padded), drop s's copy and let row stand for it: 1. Else 0 (s unchanged).
 * The caller keeps row alive (and unchanged) as long as s uses it.
 */
int sm_lft_shadow_share(struct sm_lft_shadow *s, const uint8_t *row, uint16_t top);
/* A shared shadow takes a copy of its row (before the row goes away). 0 or -ENOMEM. */
int sm_lft_shadow_own(struct sm_lft_shadow *s);

/* Number of blocks a row up to `top` occupies. */
static inline unsigned sm_lft_nblocks(uint16_t top)
{
	return (unsigned)top / SM_LFT_BLOCK + 1;
}

/* Block b of a row with entries 0..top, padded with SM_LFT_NONE. */
void sm_lft_block(const uint8_t *row, uint16_t top, unsigned b, uint8_t out[SM_LFT_BLOCK]);

/*
 * Blocks worth reading before diffing: unknown blocks of the wanted range
 * that lie at or below the switch's current top (above it the switch's
 * content is meaningless, so we write without reading). Writes block
 * numbers to out (room for sm_lft_nblocks(top)); returns the count.
 */
unsigned sm_lft_blocks_to_read(uint16_t top, const struct sm_lft_shadow *s, uint16_t *out);

/*
 * Blocks to write so the switch holds row[0..top]: unknown or different.
 * Writes block numbers to out (room for sm_lft_nblocks(top)); returns the count.
 */
unsigned sm_lft_diff(const uint8_t *row, uint16_t top, const struct sm_lft_shadow *s, uint16_t *out);

/*
 * sm_lft_diff() after a reroute, when row differs from prev (the same
 * switch's row of the tables the reroute started from, same top) only in
 * the blocks marked in blk_changed ([sm_lft_nblocks(top)]): where s stands
 * for prev itself (shared, so every block known and equal), only those
 * blocks are compared; else (s read back, partly written, or a copy) all
 * of them, as sm_lft_diff(). The result is the same either way.
 */
unsigned sm_lft_diff_changed(const uint8_t *row, uint16_t top, const struct sm_lft_shadow *s, const uint8_t *prev,
			     const uint8_t *blk_changed, uint16_t *out);

/*
 * sm_lft_diff_changed() when the blocks in which row differs from prev are
 * known (blk[0..n), ascending, n <= sm_lft_nblocks(top): the incremental
 * validation's, routing/validate.h struct sm_lft_delta): where s stands
 * for prev, those blocks, nothing compared; else sm_lft_diff().
 */
unsigned sm_lft_diff_known(const uint8_t *row, uint16_t top, const struct sm_lft_shadow *s, const uint8_t *prev,
			   const uint16_t *blk, unsigned n, uint16_t *out);

/*
 * After sm_lft_diff_changed() (or sm_lft_diff_known()) gave the blocks to write (blocks[0..nb), nb
 * may be 0) on a switch whose shadow s stands for prev: row (equal to prev
 * but in those blocks) stands for it from now on, those blocks unknown
 * until their Sets are acknowledged. sm_lft_shadow_store() of a block the
 * row holds then only marks it known: the 1,095 switches a reroute at 40k
 * hosts writes took a 44 KB copy of their row each (and its page faults),
 * and the state update compared each copy with the new row again to share
 * it. A Set that fails leaves its block unknown (read back or written
 * again by the next sweep). Else (s not prev's) nothing.
 */
void sm_lft_shadow_retarget(struct sm_lft_shadow *s, const uint8_t *prev, const uint8_t *row, uint16_t top,
			    const uint16_t *blocks, unsigned nb);

/* blk_changed for sm_lft_diff_changed() from a per-LID map (changed[0..top]). */
void sm_lft_blocks_changed(const uint8_t *changed, uint16_t top, uint8_t *blk_changed);

#endif
