/* SPDX-License-Identifier: MIT */
#ifndef SMD_SM_MFT_H
#define SMD_SM_MFT_H
/*
 * DOC: MFT programming (issue 14): the shadow and the MFT-only pass
 *
 * A switch's MulticastForwardingTable is written in blocks of 32 MLIDs by
 * 16 ports (a block number and a port position per SMP, codec.h). As for
 * LFTs (lft_writer.h), smd keeps a shadow per switch of what it holds,
 * block by block and position by position, with a flag saying whether it
 * mirrors the switch (read back, or written by us and acknowledged); the
 * shadows live in the sweep tables (tables.h) and so in the state between
 * bring-ups. Programming writes exactly the (block, position) pairs that
 * are unknown or differ, including blocks known to hold entries above the
 * new highest MLID (cleared). A switch whose LFT shadow is trusted (same
 * switch, same LID, same LinearFDBTop: sm.h) has its MFT shadow trusted
 * too; an unknown switch that had a LID is read back (cfg.read_lfts),
 * one that had none is written. MulticastFDBTop is set, where port 0
 * claims IsMulticastFDBTopSupported, to the end of the last block in use
 * (0xBFFF for none), as OpenSM does. MLIDs beyond a switch's
 * MulticastFDBCap are not written (summary over_cap).
 *
 * Limitation (stated, as for LFTs): entries above the new highest block
 * on a switch smd does not know (an SM restart after the set shrank) are
 * not seen unless MulticastFDBTop hides them.
 */
#include "sm/sm.h"

struct sm_mft_shadow {
	uint16_t *ent;              /* [(block * npos + position) * 32 + i] */
	uint8_t *known;             /* [block * npos + position] */
	uint16_t n_blocks;          /* allocated blocks */
	uint8_t npos;               /* port positions of the switch: nports / 16 + 1 */
};

/* Free n shadows and the array (accepts NULL). */
void sm_mft_shadows_free(struct sm_mft_shadow *s, uint32_t n);

/*
 * The MFT-only pass: the group set cfg->mcast changed, the fabric did not.
 * From a valid state (the last bring-up's fabric, paths and shadows), the
 * MFTs of the new set are computed and only the blocks that differ written;
 * no sweep. The plane's snapshot is then replaced by one carrying the new
 * MFTs (published through cfg->published, kept by the state). A member's
 * link that went down meanwhile is only seen at the next sweep (the light
 * sweep sees its switch's PortStateChange, and the trees are recomputed
 * from the new fabric). 0; -ESTALE without a valid state (sweep first);
 * -errno with a message in err.
 */
int sm_mft_update(struct sm_transport *t, const struct sm_cfg *cfg, struct sm_state *state,
		  struct sm_mft_summary *ms, char *err, size_t errlen);

#endif
