/* SPDX-License-Identifier: MIT */
/* DOC: LFT shadow and block diff (see sm_lft.h). */
#include "sm/lft_writer.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void sm_lft_shadow_init(struct sm_lft_shadow *s)
{
	memset(s, 0, sizeof(*s));
}

void sm_lft_shadow_free(struct sm_lft_shadow *s)
{
	if (!s)
		return;
	free(s->ent);
	free(s->known);
	memset(s, 0, sizeof(*s));
}

int sm_lft_shadow_own(struct sm_lft_shadow *s)
{
	if (s->ent || !s->row)
		return 0;
	uint8_t *e = malloc((size_t)(s->n_blocks ? s->n_blocks : 1) * SM_LFT_BLOCK);
	if (!e)
		return -ENOMEM;
	/* the blocks of row[0..row_top] end to end: the row, then SM_LFT_NONE */
	size_t all = (size_t)s->n_blocks * SM_LFT_BLOCK, len = (size_t)s->row_top + 1 < all ? (size_t)s->row_top + 1 : all;
	memcpy(e, s->row, len);
	memset(e + len, SM_LFT_NONE, all - len);
	s->ent = e;
	s->row = NULL;
	return 0;
}

void sm_lft_shadow_get(const struct sm_lft_shadow *s, unsigned b, uint8_t out[SM_LFT_BLOCK])
{
	if (s->ent)
		memcpy(out, s->ent + (size_t)b * SM_LFT_BLOCK, SM_LFT_BLOCK);
	else if (s->row)
		sm_lft_block(s->row, s->row_top, b, out);
	else
		memset(out, SM_LFT_NONE, SM_LFT_BLOCK);
}

static int shares_row(const struct sm_lft_shadow *s, const uint8_t *row, uint16_t top);

/* s holds row[0..top] (padded with SM_LFT_NONE to the end of its last block), every block known? */
static int holds_row(const struct sm_lft_shadow *s, const uint8_t *row, uint16_t top)
{
	uint8_t want[SM_LFT_BLOCK], have[SM_LFT_BLOCK];
	if (s->n_blocks != sm_lft_nblocks(top) || memchr(s->known, 0, s->n_blocks))
		return 0;
	if (s->ent) {
		/* a copy of its own: the row as it is, then SM_LFT_NONE */
		if (memcmp(s->ent, row, (size_t)top + 1))
			return 0;
		for (size_t i = (size_t)top + 1; i < (size_t)s->n_blocks * SM_LFT_BLOCK; i++)
			if (s->ent[i] != SM_LFT_NONE)
				return 0;
		return 1;
	}
	for (unsigned b = 0; b < s->n_blocks; b++) {
		sm_lft_block(row, top, b, want);
		sm_lft_shadow_get(s, b, have);
		if (memcmp(want, have, SM_LFT_BLOCK))
			return 0;
	}
	return 1;
}

int sm_lft_shadow_share(struct sm_lft_shadow *s, const uint8_t *row, uint16_t top)
{
	if (shares_row(s, row, top))
		return 1;   /* already (sm_lft_shadow_retarget) */
	if (!holds_row(s, row, top))
		return 0;
	free(s->ent);
	s->ent = NULL;
	s->row = row;
	s->row_top = top;
	return 1;
}

int sm_lft_shadow_reserve(struct sm_lft_shadow *s, unsigned n_blocks)
{
	if (n_blocks > SM_LFT_MAX_BLOCKS)
		return -EINVAL;
	if (n_blocks <= s->n_blocks)
		return 0;
	int rc = sm_lft_shadow_own(s);
	if (rc)
		return rc;
	uint8_t *e = realloc(s->ent, (size_t)n_blocks * SM_LFT_BLOCK);
	if (!e)
		return -ENOMEM;
	s->ent = e;
	uint8_t *k = realloc(s->known, n_blocks);
	if (!k)
		return -ENOMEM;
	s->known = k;
	memset(s->ent + (size_t)s->n_blocks * SM_LFT_BLOCK, SM_LFT_NONE,
	       (size_t)(n_blocks - s->n_blocks) * SM_LFT_BLOCK);
	memset(s->known + s->n_blocks, 0, n_blocks - s->n_blocks);
	s->n_blocks = (uint16_t)n_blocks;
	return 0;
}

int sm_lft_shadow_store(struct sm_lft_shadow *s, unsigned b, const uint8_t *data)
{
	if (!s->ent && s->row && b < s->n_blocks) {
		/* shared, and the row holds data there (sm_lft_shadow_retarget): only known now, no copy */
		uint8_t have[SM_LFT_BLOCK];
		sm_lft_block(s->row, s->row_top, b, have);
		if (!memcmp(have, data, SM_LFT_BLOCK)) {
			s->known[b] = 1;
			return 0;
		}
	}
	int rc = sm_lft_shadow_reserve(s, b + 1);
	if (!rc)
		rc = sm_lft_shadow_own(s);
	if (rc)
		return rc;
	memcpy(s->ent + (size_t)b * SM_LFT_BLOCK, data, SM_LFT_BLOCK);
	s->known[b] = 1;
	return 0;
}

void sm_lft_shadow_forget(struct sm_lft_shadow *s)
{
	if (s->known)
		memset(s->known, 0, s->n_blocks);
	s->top = 0;
}

void sm_lft_block(const uint8_t *row, uint16_t top, unsigned b, uint8_t out[SM_LFT_BLOCK])
{
	unsigned first = b * SM_LFT_BLOCK;
	unsigned n = 0;
	if (first <= top)
		n = (unsigned)top - first + 1 < SM_LFT_BLOCK ? (unsigned)top - first + 1 : SM_LFT_BLOCK;
	if (n)
		memcpy(out, row + first, n);
	memset(out + n, SM_LFT_NONE, SM_LFT_BLOCK - n);
}

unsigned sm_lft_blocks_to_read(uint16_t top, const struct sm_lft_shadow *s, uint16_t *out)
{
	unsigned nb = sm_lft_nblocks(top), c = 0;
	if (s->n_blocks >= nb && !memchr(s->known, 0, nb))
		return 0;   /* every block known (a trusted shadow): the common case, one scan */
	for (unsigned b = 0; b < nb; b++) {
		if (b < s->n_blocks && s->known[b])
			continue;
		if (b * SM_LFT_BLOCK > s->top)
			break;
		out[c++] = (uint16_t)b;
	}
	return c;
}

unsigned sm_lft_diff(const uint8_t *row, uint16_t top, const struct sm_lft_shadow *s, uint16_t *out)
{
	uint8_t blk[SM_LFT_BLOCK];
	unsigned nb = sm_lft_nblocks(top), c = 0;
	uint8_t have[SM_LFT_BLOCK];
	for (unsigned b = 0; b < nb; b++) {
		if (b < s->n_blocks && s->known[b]) {
			sm_lft_block(row, top, b, blk);
			sm_lft_shadow_get(s, b, have);
			if (!memcmp(blk, have, SM_LFT_BLOCK))
				continue;
		}
		out[c++] = (uint16_t)b;
	}
	return c;
}

/* s stands for row[0..top] itself: shared (no copy of its own) and every block known. */
static int shares_row(const struct sm_lft_shadow *s, const uint8_t *row, uint16_t top)
{
	return row && s->row == row && !s->ent && s->row_top == top && s->n_blocks == sm_lft_nblocks(top) &&
	       s->known && !memchr(s->known, 0, s->n_blocks);
}

unsigned sm_lft_diff_changed(const uint8_t *row, uint16_t top, const struct sm_lft_shadow *s, const uint8_t *prev,
			     const uint8_t *blk_changed, uint16_t *out)
{
	if (!blk_changed || !shares_row(s, prev, top))
		return sm_lft_diff(row, top, s, out);
	/* the switch holds prev: a marked block differs where row differs from prev (both end at top) */
	unsigned nb = sm_lft_nblocks(top), c = 0;
	for (unsigned b = 0; b < nb; b++) {
		unsigned first = b * SM_LFT_BLOCK;
		unsigned n = (unsigned)top - first + 1 < SM_LFT_BLOCK ? (unsigned)top - first + 1 : SM_LFT_BLOCK;
		if (blk_changed[b] && memcmp(row + first, prev + first, n))
			out[c++] = (uint16_t)b;
	}
	return c;
}

unsigned sm_lft_diff_known(const uint8_t *row, uint16_t top, const struct sm_lft_shadow *s, const uint8_t *prev,
			   const uint16_t *blk, unsigned n, uint16_t *out)
{
	if (!shares_row(s, prev, top))
		return sm_lft_diff(row, top, s, out);
	memcpy(out, blk, (size_t)n * sizeof(*out));
	return n;
}

void sm_lft_shadow_retarget(struct sm_lft_shadow *s, const uint8_t *prev, const uint8_t *row, uint16_t top,
			    const uint16_t *blocks, unsigned nb)
{
	if (!shares_row(s, prev, top))
		return;
	s->row = row;
	for (unsigned i = 0; i < nb; i++)
		if (blocks[i] < s->n_blocks)
			s->known[blocks[i]] = 0;
}

void sm_lft_blocks_changed(const uint8_t *changed, uint16_t top, uint8_t *blk_changed)
{
	memset(blk_changed, 0, sm_lft_nblocks(top));
	for (unsigned lid = 0; lid <= top; lid++)
		blk_changed[lid / SM_LFT_BLOCK] |= changed[lid];
}
