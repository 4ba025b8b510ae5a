/* SPDX-License-Identifier: MIT */
/*
 * DOC: MulticastForwardingTable codec (codec.h): 32 big-endian 16-bit
 * port masks, one per MLID of the block; every value is valid.
 */
#include "mad/codec.h"
#include "lib/be.h"

#include <assert.h>

static_assert(sizeof(((struct sm_mft_block *)0)->mask) == SM_SMP_DATA_SIZE, "MFT block fills the SMP data");

int sm_mft_block_decode(const uint8_t d[SM_SMP_DATA_SIZE], struct sm_mft_block *b, struct sm_mad_err *err)
{
	(void)err;
	for (unsigned i = 0; i < SM_MFT_BLOCK_MLIDS; i++)
		b->mask[i] = sm_be_get16(d + 2 * i);
	return 0;
}

void sm_mft_block_encode(const struct sm_mft_block *b, uint8_t d[SM_SMP_DATA_SIZE])
{
	for (unsigned i = 0; i < SM_MFT_BLOCK_MLIDS; i++)
		sm_be_put16(d + 2 * i, b->mask[i]);
}
