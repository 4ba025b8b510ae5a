/* SPDX-License-Identifier: MIT */
/*
 * DOC: SA record wire formats and component-mask matching (records.h).
 */
#include "sa/records.h"
#include "sa/sa_mad.h"

uint64_t sm_sa_bits_get(const uint8_t *rec, unsigned off, unsigned nbits)
{
	uint64_t v = 0;
	if ((off & 7) == 0 && (nbits & 7) == 0) {
		for (unsigned i = 0; i < nbits / 8; i++)
			v = v << 8 | rec[off / 8 + i];
		return v;
	}
	for (unsigned i = 0; i < nbits; i++) {
		unsigned b = off + i;
		v = v << 1 | ((rec[b / 8] >> (7 - b % 8)) & 1);
	}
	return v;
}

void sm_sa_bits_put(uint8_t *rec, unsigned off, unsigned nbits, uint64_t v)
{
	for (unsigned i = 0; i < nbits; i++) {
		unsigned b = off + nbits - 1 - i;
		uint8_t m = (uint8_t)(1u << (7 - b % 8));
		if (v >> i & 1)
			rec[b / 8] |= m;
		else
			rec[b / 8] &= (uint8_t)~m;
	}
}

bool sm_sa_match(const struct sm_sa_field *fields, size_t n, uint64_t mask, const uint8_t *req,
		 const uint8_t *cand)
{
	for (size_t i = 0; i < n && mask; i++) {
		const struct sm_sa_field *f = &fields[i];
		if (!sm_sa_cm(mask, f->bit))
			continue;
		if (f->nbits > 64) {   /* byte string, byte-aligned */
			if (memcmp(req + f->off / 8, cand + f->off / 8, f->nbits / 8))
				return false;
		} else if (sm_sa_bits_get(req, f->off, f->nbits) != sm_sa_bits_get(cand, f->off, f->nbits)) {
			return false;
		}
	}
	return true;
}

void sm_sa_cpi_encode(const struct sm_sa_cpi *c, uint8_t rec[SM_SA_CPI_SIZE])
{
	memset(rec, 0, SM_SA_CPI_SIZE);
	rec[0] = 1;                           /* BaseVersion */
	rec[1] = SM_SA_CLASS_VERSION;         /* ClassVersion */
	sm_sa_put16(rec + 2, c->cap_mask);
	sm_sa_put32(rec + 4, (c->cap_mask2 & 0x07ffffffu) << 5 | (c->resp_time_value & 0x1f));
	/* 8: RedirectGID, 24: RedirectTC/SL/FL, 28: RedirectLID, 30: RedirectP_Key (all 0: no redirection) */
	sm_sa_put32(rec + 32, c->redir_qp & 0x00ffffffu);
	sm_sa_put32(rec + 36, c->redir_qkey);
	/* 40: TrapGID, 56: TrapTC/SL/FL, 60: TrapLID, 62: TrapP_Key, 64: TrapHL/TrapQP (all 0) */
	sm_sa_put32(rec + 68, c->trap_qkey);
}

/* ---- the static records ---- */

#include "mad/codec.h"

#include <assert.h>

#define NFIELDS(a) (sizeof(a) / sizeof((a)[0]))

static_assert(SM_SA_NODE_REC_SIZE >= 4 + 40 + 64, "NodeRecord: LID, reserved, NodeInfo, NodeDescription");
static_assert(SM_SA_PORTINFO_REC_SIZE >= 4 + 64, "PortInfoRecord: LID, port, options, PortInfo");
static_assert(SM_SA_SWITCHINFO_REC_SIZE >= 4 + 20, "SwitchInfoRecord: LID, reserved, SwitchInfo");
static_assert(SM_SA_SMINFO_REC_SIZE >= 25, "SMInfoRecord: LID, reserved, SMInfo");
static_assert(SM_SA_LFT_REC_SIZE == 8 + 64 && SM_SA_MFT_REC_SIZE == 8 + 64 && SM_SA_GUIDINFO_REC_SIZE == 8 + 64 &&
		      SM_SA_PKEY_REC_SIZE == 8 + 64 && SM_SA_VLARB_REC_SIZE == 8 + 64 && SM_SA_SL2VL_REC_SIZE == 8 + 8,
	      "8-byte record header + 64 or 8 bytes of table");
static_assert(SM_SA_NODE_REC_SIZE % 8 == 0 && SM_SA_PORTINFO_REC_SIZE % 8 == 0 && SM_SA_SMINFO_REC_SIZE % 8 == 0 &&
		      SM_SA_SWITCHINFO_REC_SIZE % 8 == 0 && SM_SA_LINK_REC_SIZE % 8 == 0 && SM_SA_CPI_SIZE % 8 == 0,
	      "AttributeOffset is in 8-byte words");

void sm_sa_node_rec_encode(uint8_t rec[SM_SA_NODE_REC_SIZE], uint16_t lid, const struct sm_node_info *ni,
			   const char *desc)
{
	uint8_t d[SM_SMP_DATA_SIZE];
	memset(rec, 0, SM_SA_NODE_REC_SIZE);
	sm_sa_put16(rec, lid);
	sm_node_info_encode(ni, d);
	memcpy(rec + 4, d, 40);
	size_t n = strnlen(desc, 64);
	memcpy(rec + 44, desc, n);
}

const struct sm_sa_field sm_sa_node_fields[] = {
	SM_SA_F(2, 4, 0, 8),     /* BaseVersion */
	SM_SA_F(3, 5, 0, 8),     /* ClassVersion */
	SM_SA_F(4, 6, 0, 8),     /* NodeType */
	SM_SA_F(5, 7, 0, 8),     /* NumPorts */
	SM_SA_F(6, 8, 0, 64),    /* SystemImageGUID */
	SM_SA_F(7, 16, 0, 64),   /* NodeGUID */
	SM_SA_F(8, 24, 0, 64),   /* PortGUID */
	SM_SA_F(9, 32, 0, 16),   /* PartitionCap */
	SM_SA_F(10, 34, 0, 16),  /* DeviceID */
	SM_SA_F(11, 36, 0, 32),  /* Revision */
	SM_SA_F(12, 40, 0, 8),   /* LocalPortNum */
	SM_SA_F(13, 41, 0, 24),  /* VendorID */
};
const size_t sm_sa_node_nfields = NFIELDS(sm_sa_node_fields);

void sm_sa_portinfo_rec_encode(uint8_t rec[SM_SA_PORTINFO_REC_SIZE], uint16_t lid, uint8_t port_num, uint8_t options,
			       const struct sm_port_info *pi)
{
	uint8_t d[SM_SMP_DATA_SIZE];
	memset(rec, 0, SM_SA_PORTINFO_REC_SIZE);
	sm_sa_put16(rec, lid);
	rec[2] = port_num;
	rec[3] = options;
	sm_port_info_encode(pi, d);
	memcpy(rec + 4, d, 64);
}

/* PortInfo starts at byte 4 of the record: offsets below are 4 + the PortInfo offset. */
const struct sm_sa_field sm_sa_portinfo_fields[] = {
	SM_SA_F(1, 2, 0, 8),     /* PortNum */
	SM_SA_F(3, 4, 0, 64),    /* M_Key (as shown to the requester) */
	SM_SA_F(4, 12, 0, 64),   /* GidPrefix */
	SM_SA_F(5, 20, 0, 16),   /* LID */
	SM_SA_F(6, 22, 0, 16),   /* MasterSMLID */
	SM_SA_F(8, 28, 0, 16),   /* DiagCode */
	SM_SA_F(9, 30, 0, 16),   /* M_KeyLeasePeriod */
	SM_SA_F(10, 32, 0, 8),   /* LocalPortNum */
	SM_SA_F(11, 33, 0, 8),   /* LinkWidthEnabled */
	SM_SA_F(12, 34, 0, 8),   /* LinkWidthSupported */
	SM_SA_F(13, 35, 0, 8),   /* LinkWidthActive */
	SM_SA_F(14, 36, 0, 4),   /* LinkSpeedSupported */
	SM_SA_F(15, 36, 4, 4),   /* PortState */
	SM_SA_F(16, 37, 0, 4),   /* PortPhysicalState */
	SM_SA_F(17, 37, 4, 4),   /* LinkDownDefaultState */
	SM_SA_F(18, 38, 0, 2),   /* M_KeyProtectBits */
	SM_SA_F(20, 38, 5, 3),   /* LMC */
	SM_SA_F(21, 39, 0, 4),   /* LinkSpeedActive */
	SM_SA_F(22, 39, 4, 4),   /* LinkSpeedEnabled */
	SM_SA_F(23, 40, 0, 4),   /* NeighborMTU */
	SM_SA_F(24, 40, 4, 4),   /* MasterSMSL */
	SM_SA_F(25, 41, 0, 4),   /* VLCap */
	SM_SA_F(26, 41, 4, 4),   /* InitType */
	SM_SA_F(27, 42, 0, 8),   /* VLHighLimit */
	SM_SA_F(28, 43, 0, 8),   /* VLArbitrationHighCap */
	SM_SA_F(29, 44, 0, 8),   /* VLArbitrationLowCap */
	SM_SA_F(30, 45, 0, 4),   /* InitTypeReply */
	SM_SA_F(31, 45, 4, 4),   /* MTUCap */
	SM_SA_F(32, 46, 0, 3),   /* VLStallCount */
	SM_SA_F(33, 46, 3, 5),   /* HOQLife */
	SM_SA_F(34, 47, 0, 4),   /* OperationalVLs */
	SM_SA_F(35, 47, 4, 1),   /* PartitionEnforcementInbound */
	SM_SA_F(36, 47, 5, 1),   /* PartitionEnforcementOutbound */
	SM_SA_F(37, 47, 6, 1),   /* FilterRawInbound */
	SM_SA_F(38, 47, 7, 1),   /* FilterRawOutbound */
	SM_SA_F(39, 48, 0, 16),  /* M_KeyViolations */
	SM_SA_F(40, 50, 0, 16),  /* P_KeyViolations */
	SM_SA_F(41, 52, 0, 16),  /* Q_KeyViolations */
	SM_SA_F(42, 54, 0, 8),   /* GUIDCap */
	SM_SA_F(43, 55, 0, 1),   /* ClientReregister */
	SM_SA_F(44, 55, 1, 2),   /* MulticastPKeyTrapSuppressionEnabled */
	SM_SA_F(45, 55, 3, 5),   /* SubnetTimeOut */
	SM_SA_F(47, 56, 3, 5),   /* RespTimeValue */
	SM_SA_F(48, 57, 0, 4),   /* LocalPhyErrors */
	SM_SA_F(49, 57, 4, 4),   /* OverrunErrors */
	SM_SA_F(50, 58, 0, 16),  /* MaxCreditHint */
	SM_SA_F(52, 61, 0, 24),  /* LinkRoundTripLatency */
};
const size_t sm_sa_portinfo_nfields = NFIELDS(sm_sa_portinfo_fields);

void sm_sa_link_rec_encode(uint8_t rec[SM_SA_LINK_REC_SIZE], uint16_t from_lid, uint8_t from_port, uint8_t to_port,
			   uint16_t to_lid)
{
	memset(rec, 0, SM_SA_LINK_REC_SIZE);
	sm_sa_put16(rec, from_lid);
	rec[2] = from_port;
	rec[3] = to_port;
	sm_sa_put16(rec + 4, to_lid);
}

void sm_sa_switchinfo_rec_encode(uint8_t rec[SM_SA_SWITCHINFO_REC_SIZE], uint16_t lid,
				 const struct sm_switch_info *si)
{
	uint8_t d[SM_SMP_DATA_SIZE];
	memset(rec, 0, SM_SA_SWITCHINFO_REC_SIZE);
	sm_sa_put16(rec, lid);
	sm_switch_info_encode(si, d);
	memcpy(rec + 4, d, 20);
}

void sm_sa_lft_rec_encode(uint8_t rec[SM_SA_LFT_REC_SIZE], uint16_t lid, uint16_t block, const uint8_t ports[64])
{
	memset(rec, 0, SM_SA_LFT_REC_SIZE);
	sm_sa_put16(rec, lid);
	sm_sa_put16(rec + 2, block);
	memcpy(rec + 8, ports, 64);
}

void sm_sa_mft_rec_encode(uint8_t rec[SM_SA_MFT_REC_SIZE], uint16_t lid, uint8_t position, uint16_t block,
			  const uint16_t masks[32])
{
	memset(rec, 0, SM_SA_MFT_REC_SIZE);
	sm_sa_put16(rec, lid);
	sm_sa_put16(rec + 2, (uint16_t)((position & 0xf) << 12 | (block & 0x1ff)));
	for (unsigned i = 0; i < 32; i++)
		sm_sa_put16(rec + 8 + 2 * i, masks[i]);
}

void sm_sa_sminfo_rec_encode(uint8_t rec[SM_SA_SMINFO_REC_SIZE], uint16_t lid, uint64_t guid, uint64_t sm_key,
			     uint32_t act_count, uint8_t priority, uint8_t state)
{
	memset(rec, 0, SM_SA_SMINFO_REC_SIZE);
	sm_sa_put16(rec, lid);
	sm_sa_put64(rec + 4, guid);
	sm_sa_put64(rec + 12, sm_key);
	sm_sa_put32(rec + 20, act_count);
	rec[24] = (uint8_t)((priority & 0xf) << 4 | (state & 0xf));
}

const struct sm_sa_field sm_sa_sminfo_fields[] = {
	SM_SA_F(2, 4, 0, 64),    /* GUID */
	SM_SA_F(3, 12, 0, 64),   /* SM_Key (as shown to the requester) */
	SM_SA_F(4, 20, 0, 32),   /* ActCount */
	SM_SA_F(5, 24, 0, 4),    /* Priority */
	SM_SA_F(6, 24, 4, 4),    /* SMState */
};
const size_t sm_sa_sminfo_nfields = NFIELDS(sm_sa_sminfo_fields);

void sm_sa_guidinfo_rec_encode(uint8_t rec[SM_SA_GUIDINFO_REC_SIZE], uint16_t lid, uint8_t block,
			       const uint64_t guids[8])
{
	memset(rec, 0, SM_SA_GUIDINFO_REC_SIZE);
	sm_sa_put16(rec, lid);
	rec[2] = block;
	for (unsigned i = 0; i < 8; i++)
		sm_sa_put64(rec + 8 + 8 * i, guids[i]);
}

const struct sm_sa_field sm_sa_guidinfo_fields[] = {
	SM_SA_F(1, 2, 0, 8),     /* BlockNum */
	SM_SA_F(4, 8, 0, 64),    /* GUID0 */
	SM_SA_F(5, 16, 0, 64),
	SM_SA_F(6, 24, 0, 64),
	SM_SA_F(7, 32, 0, 64),
	SM_SA_F(8, 40, 0, 64),
	SM_SA_F(9, 48, 0, 64),
	SM_SA_F(10, 56, 0, 64),
	SM_SA_F(11, 64, 0, 64),  /* GUID7 */
};
const size_t sm_sa_guidinfo_nfields = NFIELDS(sm_sa_guidinfo_fields);

void sm_sa_pkey_rec_encode(uint8_t rec[SM_SA_PKEY_REC_SIZE], uint16_t lid, uint16_t block, uint8_t port,
			   const uint16_t pkeys[32])
{
	memset(rec, 0, SM_SA_PKEY_REC_SIZE);
	sm_sa_put16(rec, lid);
	sm_sa_put16(rec + 2, block);
	rec[4] = port;
	for (unsigned i = 0; i < 32; i++)
		sm_sa_put16(rec + 8 + 2 * i, pkeys[i]);
}

void sm_sa_sl2vl_rec_encode(uint8_t rec[SM_SA_SL2VL_REC_SIZE], uint16_t lid, uint8_t in_port, uint8_t out_port,
			    const uint8_t vl_by_sl[16])
{
	memset(rec, 0, SM_SA_SL2VL_REC_SIZE);
	sm_sa_put16(rec, lid);
	rec[2] = in_port;
	rec[3] = out_port;
	for (unsigned sl = 0; sl < 16; sl++)
		rec[8 + sl / 2] |= (uint8_t)((vl_by_sl[sl] & 0xf) << (sl % 2 ? 0 : 4));
}

void sm_sa_vlarb_rec_encode(uint8_t rec[SM_SA_VLARB_REC_SIZE], uint16_t lid, uint8_t port, uint8_t block,
			    const uint8_t vl_weight[64])
{
	memset(rec, 0, SM_SA_VLARB_REC_SIZE);
	sm_sa_put16(rec, lid);
	rec[2] = port;
	rec[3] = block;
	for (unsigned i = 0; i < 32; i++) {
		rec[8 + 2 * i] = vl_weight[2 * i] & 0xf;   /* reserved(4) | VL(4) */
		rec[9 + 2 * i] = vl_weight[2 * i + 1];     /* Weight */
	}
}
