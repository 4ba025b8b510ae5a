/* SPDX-License-Identifier: MIT */
/*
 * DOC: the mock's multicast forwarding tables
 *
 * Every switch holds MulticastFDBCap (SM_MOCK_MFT_CAP) MLIDs from 0xC000,
 * all ports masked off until an SM writes them. MulticastForwardingTable
 * Get/Set work on one block (32 MLIDs) of one port position (16 ports), as
 * IBA 14.2.5.12 says: a block beyond the cap, a position beyond the
 * switch's ports or reserved modifier bits are INVALID_FIELD. MulticastFDBTop
 * is kept as written (the mock does not claim IsMulticastFDBTopSupported, as
 * ibsim, so an SM leaves it alone). Read back with sm_mock_mft_get(); the
 * tests flood those masks (routing/mcast.h) to check what an SM programmed.
 */
#include "mock/mock_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define POS_PER_MLID SM_MFT_POSITIONS

static int mft_grow(struct mnode *mn, uint32_t mlids)
{
	if (mlids <= mn->mft_mlids)
		return 0;
	uint16_t *p = realloc(mn->mft, (size_t)mlids * POS_PER_MLID * sizeof(*p));
	if (!p)
		return -ENOMEM;
	memset(p + (size_t)mn->mft_mlids * POS_PER_MLID, 0, (size_t)(mlids - mn->mft_mlids) * POS_PER_MLID * sizeof(*p));
	mn->mft = p;
	mn->mft_mlids = mlids;
	return 0;
}

uint16_t mock_mft(struct sm_mock *m, uint32_t n, struct sm_smp *s)
{
	const struct sm_node *nd = &m->f->nodes[n];
	struct mnode *mn = &m->nodes[n];
	uint32_t block = s->attr_mod & 0x1FF, pos = s->attr_mod >> 28;
	struct sm_mft_block b;

	if (nd->type != SM_NODE_SWITCH)
		return SM_MAD_STATUS_ATTR_UNSUPP;
	if (!sm_mft_mod_valid(s->attr_mod) || (block + 1) * SM_MFT_BLOCK_MLIDS > SM_MOCK_MFT_CAP ||
	    pos > nd->nports / 16u)
		return SM_MAD_STATUS_INVALID_FIELD;
	uint32_t first = block * SM_MFT_BLOCK_MLIDS;
	if (s->method == SM_METHOD_SET) {
		if (mft_grow(mn, first + SM_MFT_BLOCK_MLIDS))
			return SM_MAD_STATUS_BUSY;
		sm_mft_block_decode(s->data, &b, NULL);
		for (unsigned i = 0; i < SM_MFT_BLOCK_MLIDS; i++)
			mn->mft[(size_t)(first + i) * POS_PER_MLID + pos] = b.mask[i];
		mn->mft_blocks_set++;
		m->st.sets++;
	} else {
		m->st.gets++;
	}
	for (unsigned i = 0; i < SM_MFT_BLOCK_MLIDS; i++)
		b.mask[i] = first + i < mn->mft_mlids ? mn->mft[(size_t)(first + i) * POS_PER_MLID + pos] : 0;
	sm_mft_block_encode(&b, s->data);
	return 0;
}

void mock_mft_switch_info(struct sm_mock *m, uint32_t n, const struct sm_switch_info *set, struct sm_switch_info *si)
{
	struct mnode *mn = &m->nodes[n];
	if (set)
		mn->mft_top = set->mft_top;
	si->mft_cap = SM_MOCK_MFT_CAP;
	si->mft_top = mn->mft_top;
}

int sm_mock_mft_get(const struct sm_mock *m, uint32_t node, uint16_t mlid, uint64_t mask[4])
{
	memset(mask, 0, 4 * sizeof(*mask));
	if (node >= m->f->n_nodes || m->f->nodes[node].type != SM_NODE_SWITCH || mlid < 0xC000)
		return -EINVAL;
	const struct mnode *mn = &m->nodes[node];
	uint32_t off = mlid - 0xC000u;
	for (unsigned p = 0; off < mn->mft_mlids && p < POS_PER_MLID; p++)
		mask[p / 4] |= (uint64_t)mn->mft[(size_t)off * POS_PER_MLID + p] << (16 * (p % 4));
	return 0;
}

uint32_t sm_mock_mft_blocks_set(const struct sm_mock *m, uint32_t node)
{
	return node < m->f->n_nodes ? m->nodes[node].mft_blocks_set : 0;
}
