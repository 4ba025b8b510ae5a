/* SPDX-License-Identifier: MIT */
/*
 * DOC: handlers of the SA's static records (handlers.h), part 2: the
 * tables. LinearForwardingTableRecord, MulticastForwardingTableRecord,
 * GuidInfoRecord, P_KeyTableRecord, SLtoVLMappingTableRecord and
 * VLArbitrationTableRecord, from the snapshot of the last sweep (see
 * static.c for the rules all static records share).
 *
 * What the sweep does not read, the SM answers from what it knows, and
 * says so here:
 *   - LFTs: as computed and programmed (snapshot lfts), blocks 0 up to the
 *     plane's highest LID, as OpenSM; none before routing ran.
 *   - MFTs: as computed and programmed (snapshot mfts, sm/mcast.h),
 *     as OpenSM: per switch, blocks 0 up to the highest one with an entry
 *     on that switch, positions 0 .. NumPorts / 16; none for a switch no
 *     group's tree crosses, none before multicast is programmed.
 *   - GUIDInfo: block 0 holds the port GUID, every other entry 0 (no alias
 *     GUIDs); blocks = GUIDCap / 8 from the port's PortInfo.
 *   - P_Key tables: not read, not programmed: every port is in the default
 *     partition only, block 0 entry 0 = 0xFFFF (what ibsim and a fresh HCA
 *     hold, and what OpenSM programs by default). Blocks = PartitionCap
 *     (NodeInfo; SwitchInfo PartitionEnforcementCap for switch external
 *     ports) / 32. Trusted requesters only (IBA 15.4.1, as OpenSM):
 *     REQ_INVALID otherwise.
 *   - SL2VL and VLArbitration tables: not read by the sweep and never
 *     programmed (no QoS): records for every port with an all-zero table,
 *     as OpenSM answers with QoS off for a table it holds no copy of. The
 *     ports' real contents (ibsim: SLn -> VLn, its default arbitration) are
 *     not shown.
 */
#include "sa/handlers.h"
#include "sa/records.h"
#include "mad/codec.h"
#include "model/lfts.h"
#include "sm/mcast.h"   /* struct sm_mfts */

#include <string.h>

/* LFTRecord: per switch, blocks 0 .. top LID / 64 (or the one block asked), from the programmed LFTs. */
int sm_sa_h_lft(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans)
{
	const struct sm_lfts *l = ctx->snap->lfts;
	struct sm_sa_walk w;
	uint8_t rec[SM_SA_LFT_REC_SIZE], ports[SM_LFT_BLOCK];

	if (!l)
		return 0;
	uint32_t max_block = l->top_lid / SM_LFT_BLOCK, b0 = 0, b1 = max_block;
	sm_sa_walk_init(&w, ctx, req, SM_SA_LFTR_LID);
	if (sm_sa_cm(w.mask, SM_SA_LFTR_BLOCK)) {
		b0 = b1 = sm_sa_get16(w.q + 2);
		if (b0 > max_block)
			return 0;
	}
	for (const struct sm_node *nd; (nd = sm_sa_walk_next(&w));) {
		if (nd->type != SM_NODE_SWITCH || w.n >= l->n_nodes || l->slot_of_node[w.n] == SM_NONE)
			continue;
		const struct sm_port *p0 = &w.f->ports[nd->port0];
		if (w.by_lid && !sm_sa_lid_in(w.lid, p0->lid, p0->lmc))
			continue;
		const uint8_t *row = sm_lfts_row(l, l->slot_of_node[w.n]);
		for (uint32_t b = b0; b <= b1; b++) {
			for (uint32_t i = 0; i < SM_LFT_BLOCK; i++) {
				uint32_t lid = b * SM_LFT_BLOCK + i;
				ports[i] = lid <= l->top_lid ? row[lid] : SM_LFT_NONE;
			}
			sm_sa_lft_rec_encode(rec, p0->lid, (uint16_t)b, ports);
			int rc = sm_sa_emit(ans, req, rec);
			if (rc)
				return sm_sa_emit_rc(rc);
		}
	}
	return 0;
}

/* Highest MFT block with an entry on switch row r, -1 for none. */
static int mft_max_block(const struct sm_mfts *m, uint32_t r)
{
	for (uint32_t i = m->n_mlids; i-- > 0;) {
		const uint64_t *x = m->mask[(size_t)r * m->n_mlids + i];
		if (x[0] | x[1] | x[2] | x[3])
			return (int)(i / SM_MFT_BLOCK_MLIDS);
	}
	return -1;
}

/* MFTRecord: per switch, the blocks in use and every position (see above), from the programmed MFTs. */
int sm_sa_h_mft(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans)
{
	const struct sm_mfts *m = ctx->snap->mfts;
	struct sm_sa_walk w;
	uint8_t rec[SM_SA_MFT_REC_SIZE];
	uint16_t masks[SM_MFT_BLOCK_MLIDS];

	if (!m)
		return 0;
	sm_sa_walk_init(&w, ctx, req, SM_SA_MFTR_LID);
	uint16_t pb = sm_sa_get16(w.q + 2);
	for (const struct sm_node *nd; (nd = sm_sa_walk_next(&w));) {
		if (nd->type != SM_NODE_SWITCH || w.n >= m->n_nodes || m->row[w.n] == SM_NONE)
			continue;
		const struct sm_port *p0 = &w.f->ports[nd->port0];
		if (w.by_lid && !sm_sa_lid_in(w.lid, p0->lid, p0->lmc))
			continue;
		uint32_t r = m->row[w.n];
		int max_block = mft_max_block(m, r);
		unsigned b0 = 0, b1 = (unsigned)max_block, q0 = 0, q1 = nd->nports / 16u;
		if (max_block < 0)
			continue;
		if (sm_sa_cm(w.mask, SM_SA_MFTR_BLOCK))
			b0 = b1 = pb & 0x1FF;
		if (sm_sa_cm(w.mask, SM_SA_MFTR_POSITION))
			q0 = q1 = pb >> 12;
		if (b1 > (unsigned)max_block || q1 > nd->nports / 16u)
			continue;
		for (unsigned b = b0; b <= b1; b++)
			for (unsigned q = q0; q <= q1; q++) {
				for (unsigned i = 0; i < SM_MFT_BLOCK_MLIDS; i++) {
					uint32_t off = b * SM_MFT_BLOCK_MLIDS + i;
					masks[i] = off < m->n_mlids ?
						(uint16_t)(m->mask[(size_t)r * m->n_mlids + off][q / 4] >> (16 * (q % 4))) : 0;
				}
				sm_sa_mft_rec_encode(rec, p0->lid, (uint8_t)q, (uint16_t)b, masks);
				int rc = sm_sa_emit(ans, req, rec);
				if (rc)
					return sm_sa_emit_rc(rc);
			}
	}
	return 0;
}

/* The ports of node n a per-port table record covers: a CA's port (the one named by LID, or each), a switch's 0..N. */
static void table_ports(const struct sm_sa_walk *w, int port_bit, unsigned port, unsigned *p0, unsigned *p1)
{
	const struct sm_node *nd = &w->f->nodes[w->n];
	*p0 = nd->type == SM_NODE_SWITCH ? 0 : 1;
	*p1 = nd->nports;
	if (nd->type != SM_NODE_SWITCH && w->by_lid)
		*p0 = *p1 = w->f->ports[sm_sa_port_by_lid(w->s, w->lid)].num;
	else if (nd->type == SM_NODE_SWITCH && port_bit >= 0 && sm_sa_cm(w->mask, (unsigned)port_bit))
		*p0 = *p1 = port;
}

/* GUIDInfoRecord: per CA port and per switch (port 0), GUIDCap / 8 blocks; block 0 entry 0 = the port GUID. */
int sm_sa_h_guidinfo(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans)
{
	struct sm_sa_walk w;
	uint8_t rec[SM_SA_GUIDINFO_REC_SIZE];

	sm_sa_walk_init(&w, ctx, req, SM_SA_GIR_LID);
	for (const struct sm_node *nd; (nd = sm_sa_walk_next(&w));) {
		unsigned p0, p1;
		table_ports(&w, -1, 0, &p0, &p1);
		if (nd->type == SM_NODE_SWITCH)
			p1 = 0;
		for (unsigned p = p0; p <= p1; p++) {
			if (!sm_sa_port_known(w.s, w.n, p))
				continue;
			const struct sm_port *lp = sm_sa_lid_port(w.f, w.n, p);
			if (w.by_lid && !sm_sa_lid_in(w.lid, lp->lid, lp->lmc))
				continue;
			const struct sm_port_info *pi = sm_sa_pi(w.s, nd->port0 + p);
			unsigned cap = pi ? pi->guid_cap : 1, nblocks = (cap + 7) / 8;
			for (unsigned b = 0; b < nblocks; b++) {
				uint64_t guids[8] = { b == 0 ? w.f->ports[nd->port0 + p].guid : 0 };
				sm_sa_guidinfo_rec_encode(rec, lp->lid, (uint8_t)b, guids);
				if (!sm_sa_match(sm_sa_guidinfo_fields, sm_sa_guidinfo_nfields, w.mask, w.q, rec))
					continue;
				int rc = sm_sa_emit(ans, req, rec);
				if (rc)
					return sm_sa_emit_rc(rc);
			}
		}
	}
	return 0;
}

/* P_Key blocks of port p of node n (see above): PartitionCap / 32, rounded up. */
static unsigned pkey_blocks(const struct sm_snapshot *s, uint32_t n, unsigned p)
{
	const struct sm_node *nd = &s->fabric->nodes[n];
	unsigned cap = 32;
	if (nd->type == SM_NODE_SWITCH && p) {
		if (s->si && n < s->attr_nodes && s->si_ok[n])
			cap = s->si[n].part_enf_cap;
	} else if (s->ni && n < s->attr_nodes && s->ni[n].node_guid == nd->guid) {
		cap = s->ni[n].partition_cap;
	}
	return (cap + 31) / 32;
}

int sm_sa_h_pkey(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans)
{
	struct sm_sa_walk w;
	uint8_t rec[SM_SA_PKEY_REC_SIZE];
	uint16_t dflt[32] = { 0xFFFF }, none[32] = { 0 };

	if (!sm_sa_trusted(ctx, req)) {
		ans->status = SM_SA_STATUS_REQ_INVALID;
		return 0;
	}
	sm_sa_walk_init(&w, ctx, req, SM_SA_PKR_LID);
	for (const struct sm_node *nd; (nd = sm_sa_walk_next(&w));) {
		(void)nd;
		unsigned p0, p1;
		table_ports(&w, SM_SA_PKR_PORT, w.q[4], &p0, &p1);
		for (unsigned p = p0; p <= p1; p++) {
			if (!sm_sa_port_known(w.s, w.n, p))
				continue;
			/* the table as programmed when partitions are configured (sm/pkey.c), else 0xFFFF alone */
			unsigned n_prog = 0;
			const uint16_t *prog = sm_snapshot_pkeys(w.s, w.f->nodes[w.n].port0 + p, &n_prog);
			unsigned nb = prog ? n_prog / 32 : pkey_blocks(w.s, w.n, p), b0 = 0, b1 = nb ? nb - 1 : 0;
			if (sm_sa_cm(w.mask, SM_SA_PKR_BLOCK))
				b0 = b1 = sm_sa_get16(w.q + 2);
			for (unsigned b = b0; b <= b1 && b < nb; b++) {
				sm_sa_pkey_rec_encode(rec, sm_sa_lid_port(w.f, w.n, p)->lid, (uint16_t)b, (uint8_t)p,
						      prog ? prog + 32 * b : b == 0 ? dflt : none);
				int rc = sm_sa_emit(ans, req, rec);
				if (rc)
					return sm_sa_emit_rc(rc);
			}
		}
	}
	return 0;
}

/* SL2VLRecord: per CA port one (ports 0/0), per switch every output x input port pair; tables not read (zero). */
int sm_sa_h_sl2vl(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans)
{
	struct sm_sa_walk w;
	uint8_t rec[SM_SA_SL2VL_REC_SIZE], vl[16] = { 0 };

	sm_sa_walk_init(&w, ctx, req, SM_SA_SLVL_LID);
	for (const struct sm_node *nd; (nd = sm_sa_walk_next(&w));) {
		bool sw = nd->type == SM_NODE_SWITCH;
		unsigned o0, o1, i0 = 0, i1 = sw ? nd->nports : 0;
		table_ports(&w, SM_SA_SLVL_OUT, w.q[3], &o0, &o1);
		if (sw && sm_sa_cm(w.mask, SM_SA_SLVL_IN))
			i0 = i1 = w.q[2];
		for (unsigned o = o0; o <= o1; o++) {
			if (!sm_sa_port_known(w.s, w.n, o))
				continue;
			for (unsigned i = i0; i <= i1; i++) {
				if (sw && !sm_sa_port_known(w.s, w.n, i))
					continue;
				sm_sa_sl2vl_rec_encode(rec, sm_sa_lid_port(w.f, w.n, o)->lid, sw ? (uint8_t)i : 0,
						       sw ? (uint8_t)o : 0, vl);
				int rc = sm_sa_emit(ans, req, rec);
				if (rc)
					return sm_sa_emit_rc(rc);
			}
		}
	}
	return 0;
}

/* VLArbRecord: per port, blocks 1..4 (low 0-31, low 32-63, high 0-31, high 32-63); tables not read (zero). */
int sm_sa_h_vlarb(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans)
{
	struct sm_sa_walk w;
	uint8_t rec[SM_SA_VLARB_REC_SIZE], tbl[64] = { 0 };

	sm_sa_walk_init(&w, ctx, req, SM_SA_VLA_LID);
	for (const struct sm_node *nd; (nd = sm_sa_walk_next(&w));) {
		(void)nd;
		unsigned p0, p1;
		table_ports(&w, SM_SA_VLA_PORT, w.q[2], &p0, &p1);
		for (unsigned p = p0; p <= p1; p++) {
			if (!sm_sa_port_known(w.s, w.n, p))
				continue;
			for (unsigned b = 1; b <= 4; b++) {
				if (sm_sa_cm(w.mask, SM_SA_VLA_BLOCK) && b != w.q[3])
					continue;
				sm_sa_vlarb_rec_encode(rec, sm_sa_lid_port(w.f, w.n, p)->lid, (uint8_t)p, (uint8_t)b, tbl);
				int rc = sm_sa_emit(ans, req, rec);
				if (rc)
					return sm_sa_emit_rc(rc);
			}
		}
	}
	return 0;
}
