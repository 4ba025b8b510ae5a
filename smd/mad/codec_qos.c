/* SPDX-License-Identifier: MIT */
/*
 * DOC: SMP codecs for the QoS tables (codec.h)
 *
 * SLtoVLMappingTable (16 four-bit VLs in the first 8 bytes) and one block
 * of VLArbitrationTable (32 entries of VL and weight). Every bit pattern
 * decodes: the VLs are 4-bit fields and a weight is any byte, so these
 * decoders cannot fail; reserved bits are ignored and written as 0.
 */
#include "mad/codec.h"

#include <string.h>

void sm_sl2vl_decode(const uint8_t d[SM_SMP_DATA_SIZE], struct sm_sl2vl *t)
{
	for (unsigned sl = 0; sl < 16; sl++)
		t->vl[sl] = (uint8_t)(sl & 1 ? d[sl / 2] & 0x0F : d[sl / 2] >> 4);
}

void sm_sl2vl_encode(const struct sm_sl2vl *t, uint8_t d[SM_SMP_DATA_SIZE])
{
	memset(d, 0, SM_SMP_DATA_SIZE);
	for (unsigned sl = 0; sl < 16; sl++)
		d[sl / 2] |= (uint8_t)(sl & 1 ? t->vl[sl] & 0x0F : (t->vl[sl] & 0x0F) << 4);
}

void sm_vlarb_decode(const uint8_t d[SM_SMP_DATA_SIZE], struct sm_vlarb_block *b)
{
	for (unsigned i = 0; i < SM_VLARB_ENTRIES; i++) {
		b->vl[i] = d[2 * i] & 0x0F;
		b->weight[i] = d[2 * i + 1];
	}
}

void sm_vlarb_encode(const struct sm_vlarb_block *b, uint8_t d[SM_SMP_DATA_SIZE])
{
	for (unsigned i = 0; i < SM_VLARB_ENTRIES; i++) {
		d[2 * i] = b->vl[i] & 0x0F;
		d[2 * i + 1] = b->weight[i];
	}
}
