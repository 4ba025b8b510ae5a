/* SPDX-License-Identifier: MIT */
#ifndef SMD_SA_RECORDS_H
#define SMD_SA_RECORDS_H
/*
 * DOC: SA record wire formats and component-mask matching (IBA vol. 1, 15.2.5)
 *
 * Every record here is handled in wire form: a handler encodes a candidate
 * record from the snapshot into a buffer of the record's size, and
 * sm_sa_match() compares it with the request record field by field under
 * the component mask, using the record's field table (struct sm_sa_field:
 * mask bit -> bit offset and width in the wire record). The IBA comparison
 * rule for a set bit is equality of the field; mask bits that name no
 * field (reserved fields, bits past the last component) are ignored, as
 * OpenSM does. Records whose rules are not plain equality (PortInfoRecord's
 * CapabilityMask with the enhanced mask, PathRecord selectors) check those
 * fields themselves and leave them out of the table (or clear the bit).
 *
 * Sizes are the IBA record lengths rounded up to 8 bytes (the SA's
 * AttributeOffset is in 8-byte words); offsets are pinned by static_assert
 * in records.c and by golden bytes in tests/test_sa_records.c, against the
 * layouts of OpenSM's include/iba/ib_types.h.
 *
 * Also here for every SA handler: big-endian load/store and the GID, GUID
 * and LID comparison helpers. Nothing allocates; nothing logs.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lib/be.h"

/* ---- big-endian load / store: lib/be.h under the SA's names ---- */
#define sm_sa_get16 sm_be_get16
#define sm_sa_get32 sm_be_get32
#define sm_sa_get64 sm_be_get64
#define sm_sa_put16 sm_be_put16
#define sm_sa_put32 sm_be_put32
#define sm_sa_put64 sm_be_put64

/* ---- component mask: single fields ---- */

/* Bit `bit` of the component mask is set. */
static inline bool sm_sa_cm(uint64_t mask, unsigned bit)
{
	return bit < 64 && (mask >> bit & 1);
}
/* The field under mask bit `bit` matches: the bit is clear, or want == have. */
static inline bool sm_sa_cm_eq(uint64_t mask, unsigned bit, uint64_t want, uint64_t have)
{
	return !sm_sa_cm(mask, bit) || want == have;
}
/* Same for an n-byte field (GIDs, NodeDescription, key arrays). */
static inline bool sm_sa_cm_bytes(uint64_t mask, unsigned bit, const void *want, const void *have, size_t n)
{
	return !sm_sa_cm(mask, bit) || memcmp(want, have, n) == 0;
}
static inline bool sm_sa_cm_gid(uint64_t mask, unsigned bit, const uint8_t want[16], const uint8_t have[16])
{
	return sm_sa_cm_bytes(mask, bit, want, have, 16);
}
/* A GUID as it sits in a record (8 bytes, big-endian) against a host-order one. */
static inline bool sm_sa_cm_guid(uint64_t mask, unsigned bit, const uint8_t *want_wire, uint64_t have)
{
	return !sm_sa_cm(mask, bit) || sm_sa_get64(want_wire) == have;
}
/* A LID as it sits in a record (2 bytes, big-endian) against a host-order one. */
static inline bool sm_sa_cm_lid(uint64_t mask, unsigned bit, const uint8_t *want_wire, uint16_t have)
{
	return !sm_sa_cm(mask, bit) || sm_sa_get16(want_wire) == have;
}

/* A GID from subnet prefix and GUID (host order in, network order out). */
static inline void sm_sa_gid_make(uint8_t gid[16], uint64_t prefix, uint64_t guid)
{
	sm_sa_put64(gid, prefix);
	sm_sa_put64(gid + 8, guid);
}
static inline uint64_t sm_sa_gid_prefix(const uint8_t gid[16])
{
	return sm_sa_get64(gid);
}
static inline uint64_t sm_sa_gid_guid(const uint8_t gid[16])
{
	return sm_sa_get64(gid + 8);
}

/*
 * PathRecord-style selectors (IBA 15.2.5.16): 0 greater than, 1 less than,
 * 2 exactly, 3 largest available. `have` and `want` must be on an ordered
 * scale (for rates, map the IBA rate code to its bandwidth first).
 */
enum sm_sa_selector { SM_SA_SEL_GT = 0, SM_SA_SEL_LT = 1, SM_SA_SEL_EQ = 2, SM_SA_SEL_MAX = 3 };
static inline bool sm_sa_sel_ok(unsigned sel, unsigned want, unsigned have)
{
	switch (sel & 3) {
	case SM_SA_SEL_GT: return have > want;
	case SM_SA_SEL_LT: return have < want;
	case SM_SA_SEL_EQ: return have == want;
	default: return true;
	}
}

/* ---- component mask: whole records by field table ---- */

/* One component: mask bit, position in the wire record in bits from byte 0's MSB, width in bits. */
struct sm_sa_field {
	uint8_t bit;
	uint16_t off;          /* bit offset (byte offset * 8 + bit within, MSB first) */
	uint16_t nbits;        /* 1..64 for a number, or a multiple of 8 for a byte string */
};
/* Build a table entry for a field at byte offset `byte`, `nbits` wide, starting `shift` bits into the byte. */
#define SM_SA_F(b, byte, shift, nbits) { (b), (uint16_t)((byte) * 8 + (shift)), (nbits) }

/* Value of the bit field [off, off + nbits) of rec (nbits <= 64). */
uint64_t sm_sa_bits_get(const uint8_t *rec, unsigned off, unsigned nbits);
/* Store v into that bit field of rec. */
void sm_sa_bits_put(uint8_t *rec, unsigned off, unsigned nbits, uint64_t v);

/*
 * cand matches req under mask: every field of fields[0..n-1] whose bit is
 * set is equal in both (wire form). Bits without a field are ignored.
 */
bool sm_sa_match(const struct sm_sa_field *fields, size_t n, uint64_t mask, const uint8_t *req,
		 const uint8_t *cand);

/* A LID wanted by the request: *lid set and true when the LID bit is set. */
static inline bool sm_sa_want_lid(uint64_t mask, unsigned bit, const uint8_t *req, size_t off, uint16_t *lid)
{
	if (!sm_sa_cm(mask, bit))
		return false;
	*lid = sm_sa_get16(req + off);
	return true;
}

/* ---- record sizes (bytes on the wire, AttributeOffset * 8) ---- */
#define SM_SA_CPI_SIZE 72
#define SM_SA_NODE_REC_SIZE 112         /* 108 + 4 pad */
#define SM_SA_PORTINFO_REC_SIZE 72      /* 68 + 4 pad */
#define SM_SA_LINK_REC_SIZE 8
#define SM_SA_SWITCHINFO_REC_SIZE 24
#define SM_SA_LFT_REC_SIZE 72
#define SM_SA_MFT_REC_SIZE 72
#define SM_SA_SMINFO_REC_SIZE 32        /* 25 + 7 pad */
#define SM_SA_GUIDINFO_REC_SIZE 72
#define SM_SA_PKEY_REC_SIZE 72
#define SM_SA_SL2VL_REC_SIZE 16
#define SM_SA_VLARB_REC_SIZE 72

/* ---- ClassPortInfo (IBA 13.4.8.1) as the SA fills it ---- */
/* CapabilityMask bits (IBA table 195) */
#define SM_SA_CAP_SUBN_TRAP 0x0001
#define SM_SA_CAP_GET_SET_NOTICE 0x0002
#define SM_SA_CAP_OPT_RECS 0x0100
#define SM_SA_CAP_UD_MCAST 0x0200
#define SM_SA_CAP_MULTIPATH 0x0400
#define SM_SA_CAP_REINIT 0x0800
#define SM_SA_CAP_PI_CAPMASK_MATCH 0x2000
/* CapabilityMask2 bits (27 bits) */
#define SM_SA_CAP2_QOS (1u << 1)
#define SM_SA_CAP2_REVERSE_PATH_PKEY (1u << 2)
#define SM_SA_CAP2_MCAST_TOP (1u << 3)
#define SM_SA_CAP2_HIERARCHY (1u << 4)
#define SM_SA_CAP2_ALIAS_GUIDS (1u << 5)
#define SM_SA_CAP2_FULL_PORTINFO_REC (1u << 6)
#define SM_SA_CAP2_EXT_SPEEDS (1u << 7)
#define SM_SA_CAP2_MCAST_SERVICE_RECS (1u << 8)
#define SM_SA_CAP2_PI_CAPMASK2_MATCH (1u << 10)
#define SM_SA_CAP2_SEND_ONLY_FULL_MEMBER (1u << 12)
#define SM_SA_CAP2_LINK_WIDTH_2X (1u << 13)
#define SM_SA_CAP2_LINK_SPEED_HDR (1u << 15)

struct sm_sa_cpi {
	uint16_t cap_mask;
	uint32_t cap_mask2;       /* 27 bits */
	uint8_t resp_time_value;  /* 5 bits */
	uint32_t redir_qp, redir_qkey, trap_qkey;
};
void sm_sa_cpi_encode(const struct sm_sa_cpi *c, uint8_t rec[SM_SA_CPI_SIZE]);

/*
 * ---- the static records: encoders and field tables ----
 * Each encoder writes a whole record (zeroing it first) from host-order
 * values; the SMP attributes inside (NodeInfo, PortInfo, SwitchInfo) are
 * written with the SMP codecs of mad/codec.h, so both agree bit for bit.
 * Each table lists the components compared by plain equality; the ones
 * named "special" are matched by the handler (static.c) and are not in it.
 */
struct sm_node_info;
struct sm_port_info;
struct sm_switch_info;

/* NodeRecord (IBA 15.2.5.2): LID(0, special: within the LMC range), NodeInfo(2..13), NodeDescription(14, special: compared as a string) */
enum { SM_SA_NR_LID = 0, SM_SA_NR_PORTGUID = 8, SM_SA_NR_PORTNUM = 12, SM_SA_NR_NODEGUID = 7, SM_SA_NR_DESC = 14 };
void sm_sa_node_rec_encode(uint8_t rec[SM_SA_NODE_REC_SIZE], uint16_t lid, const struct sm_node_info *ni,
			   const char *desc);
extern const struct sm_sa_field sm_sa_node_fields[];
extern const size_t sm_sa_node_nfields;

/*
 * PortInfoRecord (IBA 15.2.5.3): LID(0, special), PortNum(1), Options(2,
 * not compared, as OpenSM), then PortInfo(3..57). Special: CapabilityMask(7)
 * and CapabilityMask2(53) (bitwise with the enhanced mask, attribute
 * modifier bit 31), LinkSpeedExt*(54, 55, 57) (compared only when the port
 * has extended speeds).
 */
enum {
	SM_SA_PIR_LID = 0, SM_SA_PIR_PORTNUM = 1, SM_SA_PIR_OPTIONS = 2, SM_SA_PIR_MKEY = 3, SM_SA_PIR_BASELID = 5,
	SM_SA_PIR_CAPMASK = 7, SM_SA_PIR_CAPMASK2 = 53, SM_SA_PIR_SPDEXTACT = 54, SM_SA_PIR_SPDEXTSUP = 55,
	SM_SA_PIR_SPDEXTENA = 57,
};
#define SM_SA_PI_CAP_HAS_EXT_SPEEDS 0x00004000u   /* PortInfo CapabilityMask.IsExtendedSpeedsSupported */
void sm_sa_portinfo_rec_encode(uint8_t rec[SM_SA_PORTINFO_REC_SIZE], uint16_t lid, uint8_t port_num, uint8_t options,
			       const struct sm_port_info *pi);
extern const struct sm_sa_field sm_sa_portinfo_fields[];
extern const size_t sm_sa_portinfo_nfields;

/* LinkRecord (IBA 15.2.5.13): FromLID(0), FromPort(1), ToPort(2), ToLID(3); LIDs special (LMC). */
enum { SM_SA_LR_FROM_LID = 0, SM_SA_LR_FROM_PORT = 1, SM_SA_LR_TO_PORT = 2, SM_SA_LR_TO_LID = 3 };
void sm_sa_link_rec_encode(uint8_t rec[SM_SA_LINK_REC_SIZE], uint16_t from_lid, uint8_t from_port, uint8_t to_port,
			   uint16_t to_lid);

/* SwitchInfoRecord (IBA 15.2.5.4): LID(0, special); the SwitchInfo components are not compared (as OpenSM). */
enum { SM_SA_SWIR_LID = 0 };
void sm_sa_switchinfo_rec_encode(uint8_t rec[SM_SA_SWITCHINFO_REC_SIZE], uint16_t lid,
				 const struct sm_switch_info *si);

/* LinearForwardingTableRecord (IBA 15.2.5.6): LID(0, special), BlockNum(1). */
enum { SM_SA_LFTR_LID = 0, SM_SA_LFTR_BLOCK = 1 };
void sm_sa_lft_rec_encode(uint8_t rec[SM_SA_LFT_REC_SIZE], uint16_t lid, uint16_t block, const uint8_t ports[64]);

/* MulticastForwardingTableRecord (IBA 15.2.5.8): LID(0), Position(1), BlockNum(3). */
enum { SM_SA_MFTR_LID = 0, SM_SA_MFTR_POSITION = 1, SM_SA_MFTR_BLOCK = 3 };
void sm_sa_mft_rec_encode(uint8_t rec[SM_SA_MFT_REC_SIZE], uint16_t lid, uint8_t position, uint16_t block,
			  const uint16_t masks[32]);

/* SMInfoRecord (IBA 15.2.5.9): LID(0, special), GUID(2), SM_Key(3), ActCount(4), Priority(5), SMState(6). */
enum { SM_SA_SMIR_LID = 0 };
void sm_sa_sminfo_rec_encode(uint8_t rec[SM_SA_SMINFO_REC_SIZE], uint16_t lid, uint64_t guid, uint64_t sm_key,
			     uint32_t act_count, uint8_t priority, uint8_t state);
extern const struct sm_sa_field sm_sa_sminfo_fields[];
extern const size_t sm_sa_sminfo_nfields;

/* GuidInfoRecord (IBA 15.2.5.18): LID(0, special), BlockNum(1), GUID0..7(4..11). */
enum { SM_SA_GIR_LID = 0, SM_SA_GIR_BLOCK = 1 };
void sm_sa_guidinfo_rec_encode(uint8_t rec[SM_SA_GUIDINFO_REC_SIZE], uint16_t lid, uint8_t block,
			       const uint64_t guids[8]);
extern const struct sm_sa_field sm_sa_guidinfo_fields[];
extern const size_t sm_sa_guidinfo_nfields;

/* P_KeyTableRecord (IBA 15.2.5.11): LID(0, special), BlockNum(1), PortNum(2). */
enum { SM_SA_PKR_LID = 0, SM_SA_PKR_BLOCK = 1, SM_SA_PKR_PORT = 2 };
void sm_sa_pkey_rec_encode(uint8_t rec[SM_SA_PKEY_REC_SIZE], uint16_t lid, uint16_t block, uint8_t port,
			   const uint16_t pkeys[32]);

/* SLtoVLMappingTableRecord (IBA 15.2.5.10): LID(0, special), InputPortNum(1), OutputPortNum(2). */
enum { SM_SA_SLVL_LID = 0, SM_SA_SLVL_IN = 1, SM_SA_SLVL_OUT = 2 };
void sm_sa_sl2vl_rec_encode(uint8_t rec[SM_SA_SL2VL_REC_SIZE], uint16_t lid, uint8_t in_port, uint8_t out_port,
			    const uint8_t vl_by_sl[16]);

/* VLArbitrationTableRecord (IBA 15.2.5.14): LID(0, special), OutputPortNum(1), BlockNum(2). */
enum { SM_SA_VLA_LID = 0, SM_SA_VLA_PORT = 1, SM_SA_VLA_BLOCK = 2 };
void sm_sa_vlarb_rec_encode(uint8_t rec[SM_SA_VLARB_REC_SIZE], uint16_t lid, uint8_t port, uint8_t block,
			    const uint8_t vl_weight[64]);

#endif
