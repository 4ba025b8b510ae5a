/* SPDX-License-Identifier: MIT */
#ifndef SMD_MAD_H
#define SMD_MAD_H
/*
 * DOC: SMP codecs
 *
 * Encoding and decoding of subnet management packets (SMPs): the 256-byte
 * MAD of management class 0x81 (directed route) or 0x01 (LID routed), and
 * the attributes the SM needs: NodeInfo, NodeDescription, PortInfo,
 * SwitchInfo, LinearForwardingTable, SMInfo and Notice (traps).
 *
 * Data flow: the SM core fills a host-order struct sm_smp (usually with
 * sm_smp_init_dr()/sm_smp_init_lid() and an attribute encoder writing
 * smp.data), sm_smp_encode() turns it into wire bytes for a transport;
 * bytes from a transport go through sm_smp_decode() and then the attribute
 * decoder matching smp.attr_id.
 *
 * Every struct here is host order and owned by the caller; nothing
 * allocates. Wire layouts follow the IBA spec (vol. 1, ch. 14) as written
 * down in iba/ib_types.h and infiniband/umad_sm.h; mad.c static_asserts the
 * sizes and offsets it relies on.
 *
 * Decoders treat input as untrusted: a short buffer or an impossible value
 * returns -EBADMSG (or -EPROTO for a well-formed MAD that is not what was
 * asked for) and fills struct sm_mad_err with the name of the offending
 * field. Decoders never read past `len`.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/fabric.h"

#define SM_MAD_SIZE 256          /* every SMP is exactly one 256-byte MAD */
#define SM_SMP_DATA_SIZE 64      /* SMP attribute payload */
#define SM_SMP_DATA_OFF 64       /* offset of the payload in the MAD */
#define SM_DR_MAX_HOPS 63        /* initial/return path arrays are 64 bytes, entry 0 unused */
/* Also defined, identically, by sm_lft.h (SM core): keep the token sequences equal. */
#ifndef SM_LFT_BLOCK
#define SM_LFT_BLOCK 64          /* LFT entries per LinearForwardingTable block */
#endif
#ifndef SM_LFT_MAX_BLOCKS
#define SM_LFT_MAX_BLOCKS (SM_LID_SPACE / SM_LFT_BLOCK)  /* 768 blocks cover the LID space */
#endif
#define SM_PERMISSIVE_LID 0xFFFF
#define SM_LFT_NO_PORT 0xFF      /* LFT entry: unreachable */

enum sm_mad_class {
	SM_CLASS_SMI = 0x01,     /* LID-routed SMP */
	SM_CLASS_SMI_DR = 0x81,  /* directed-route SMP */
};

enum sm_mad_method {
	SM_METHOD_GET = 0x01,
	SM_METHOD_SET = 0x02,
	SM_METHOD_TRAP = 0x05,
	SM_METHOD_TRAP_REPRESS = 0x07,
	SM_METHOD_GET_RESP = 0x81,
};

enum sm_attr_id {
	SM_ATTR_NOTICE = 0x0002,
	SM_ATTR_NODE_DESC = 0x0010,
	SM_ATTR_NODE_INFO = 0x0011,
	SM_ATTR_SWITCH_INFO = 0x0012,
	SM_ATTR_PORT_INFO = 0x0015,
	SM_ATTR_PKEY_TABLE = 0x0016,
	SM_ATTR_SL2VL = 0x0017,          /* SLtoVLMappingTable (codec_qos.c) */
	SM_ATTR_VLARB = 0x0018,          /* VLArbitrationTable (codec_qos.c) */
	SM_ATTR_LFT = 0x0019,
	SM_ATTR_MFT = 0x001B,
	SM_ATTR_SM_INFO = 0x0020,
};

/*
 * MAD status (the 15 low bits; for DR SMPs bit 15 is the D bit and is kept
 * apart in struct sm_smp). Bits 2-4 carry a code.
 */
#define SM_MAD_STATUS_BUSY 0x0001
#define SM_MAD_STATUS_REDIRECT 0x0002
#define SM_MAD_STATUS_BAD_VERSION (1 << 2)
#define SM_MAD_STATUS_METHOD_UNSUPP (2 << 2)
#define SM_MAD_STATUS_ATTR_UNSUPP (3 << 2)    /* method/attribute combination not supported */
#define SM_MAD_STATUS_INVALID_FIELD (7 << 2)  /* invalid value in attribute or modifier */
#define SM_MAD_STATUS_CODE_MASK 0x001C
#define SM_SMP_DIRECTION 0x8000               /* D bit in the wire status field */

/* Error detail filled by decoders (may be passed as NULL). */
struct sm_mad_err {
	const char *field;   /* static string: the wire field that was wrong, e.g. "PortInfo.LMC" */
	char msg[160];       /* full sentence, e.g. "PortInfo.LMC: value 9 out of range 0..7" */
};

/*
 * A directed-route path: hops[1..cnt] are the egress port numbers, hop 1
 * being the SM node's own port; hops[0] is unused (0). cnt 0 addresses the
 * SM's own node.
 */
struct sm_dr_path {
	uint8_t cnt;
	uint8_t hops[SM_DR_MAX_HOPS + 1];
};

/* Host-order view of a 256-byte SMP (both classes). */
struct sm_smp {
	uint8_t base_version;   /* 1 */
	uint8_t mgmt_class;     /* enum sm_mad_class */
	uint8_t class_version;  /* 1 */
	uint8_t method;         /* enum sm_mad_method */
	uint16_t status;        /* 15-bit status, D bit excluded */
	bool direction;         /* DR only: D bit, 1 on the way back */
	uint8_t hop_ptr;        /* DR only */
	uint8_t hop_cnt;        /* DR only, 0..SM_DR_MAX_HOPS */
	uint64_t tid;
	uint16_t attr_id;
	uint32_t attr_mod;
	uint64_t mkey;
	uint16_t dr_slid;       /* DR only; SM_PERMISSIVE_LID for a pure DR path */
	uint16_t dr_dlid;       /* DR only */
	uint8_t data[SM_SMP_DATA_SIZE];
	uint8_t initial_path[SM_DR_MAX_HOPS + 1];  /* DR only */
	uint8_t return_path[SM_DR_MAX_HOPS + 1];   /* DR only */
};

/* ---- whole-MAD codec ---- */

/*
 * Directed-route request to `path` (pure DR: DrSLID = DrDLID = permissive,
 * hop pointer 0, D bit 0, M_Key 0). Clears data. tid 0: the transaction
 * engine assigns one.
 */
void sm_smp_init_dr(struct sm_smp *smp, uint8_t method, uint16_t attr_id, uint32_t attr_mod,
		    const struct sm_dr_path *path);
/* LID-routed request (class 0x01). The destination LID is given to the transport. */
void sm_smp_init_lid(struct sm_smp *smp, uint8_t method, uint16_t attr_id, uint32_t attr_mod);

/* Encode to exactly SM_MAD_SIZE bytes. -EINVAL if hop_cnt/hop_ptr/class are out of range. */
int sm_smp_encode(const struct sm_smp *smp, uint8_t mad[SM_MAD_SIZE]);
/*
 * Decode and validate the header: len >= 256, base version 1, class 0x01
 * or 0x81, class version 1, hop count <= 63, hop pointer <= hop count + 1.
 * Returns 0 or -EBADMSG with err naming the field.
 */
int sm_smp_decode(const uint8_t *buf, size_t len, struct sm_smp *smp, struct sm_mad_err *err);

/*
 * Does `resp` answer `req`? Checks: GetResp method, same class, attribute
 * id and modifier, and for DR: D bit set, same hop count and same initial
 * path. TIDs are matched by the caller. Returns 0, or -EPROTO with err
 * naming the mismatching field. The MAD status is NOT checked here.
 */
int sm_smp_check_response(const struct sm_smp *req, const struct sm_smp *resp,
			  struct sm_mad_err *err);

/*
 * Build the response an SMA would send for request `req` (used by the mock
 * and tests): copies the request, sets GetResp, status, and for DR the D
 * bit and hop pointer. Data is left as in req (the responder overwrites it).
 */
void sm_smp_make_response(const struct sm_smp *req, struct sm_smp *resp, uint16_t status);

/* Path helpers. */
int sm_dr_path_push(struct sm_dr_path *p, uint8_t port);   /* -E2BIG beyond 63 hops */
bool sm_dr_path_equal(const struct sm_dr_path *a, const struct sm_dr_path *b);
/* "0,1,3" (libibmad / ibnetdiscover notation). Returns chars written like snprintf. */
int sm_dr_path_str(const struct sm_dr_path *p, char *buf, size_t len);
/* Parse "0,1,3" or "1,3"; -EINVAL on garbage, ports 1..254 only. */
int sm_dr_path_parse(const char *s, struct sm_dr_path *p);

const char *sm_attr_name(uint16_t attr_id);      /* "NodeInfo", ..., "Unknown" */
const char *sm_method_name(uint8_t method);      /* "Get", "Set", "GetResp", "Trap", ... */

/* ---- attributes: decode from / encode to the 64-byte SMP data ---- */

struct sm_node_info {
	uint8_t base_version;
	uint8_t class_version;
	uint8_t node_type;       /* enum sm_node_type: 1 CA, 2 switch, 3 router */
	uint8_t num_ports;
	uint64_t sys_guid;
	uint64_t node_guid;
	uint64_t port_guid;
	uint16_t partition_cap;
	uint16_t device_id;
	uint32_t revision;
	uint8_t local_port_num;  /* port the SMP arrived on */
	uint32_t vendor_id;      /* 24 bits */
};
/* Rejects node type outside 1..3, 0 or > 254 ports, zero node/port GUID,
 * local port > num_ports. */
int sm_node_info_decode(const uint8_t data[SM_SMP_DATA_SIZE], struct sm_node_info *ni,
			struct sm_mad_err *err);
void sm_node_info_encode(const struct sm_node_info *ni, uint8_t data[SM_SMP_DATA_SIZE]);

/* NodeDescription: 64 bytes of text, NUL-padded. Decoded text is
 * NUL-terminated; bytes after the first NUL are ignored and control
 * characters become '?'. Never fails (err untouched), kept int for symmetry. */
struct sm_node_desc {
	char desc[SM_SMP_DATA_SIZE + 1];
};
int sm_node_desc_decode(const uint8_t data[SM_SMP_DATA_SIZE], struct sm_node_desc *nd,
			struct sm_mad_err *err);
void sm_node_desc_encode(const struct sm_node_desc *nd, uint8_t data[SM_SMP_DATA_SIZE]);

/* PortInfo, every field of the 64-byte attribute, sub-byte fields unpacked. */
struct sm_port_info {
	uint64_t mkey;
	uint64_t gid_prefix;            /* subnet prefix */
	uint16_t lid;
	uint16_t master_sm_lid;
	uint32_t cap_mask;             /* SM_CAP_IS_SM ... */
	uint16_t diag_code;
	uint16_t mkey_lease_period;
	uint8_t local_port_num;
	uint8_t link_width_enabled;     /* 0 on Set = no change */
	uint8_t link_width_supported;
	uint8_t link_width_active;
	uint8_t link_speed_supported;   /* 4 bits */
	uint8_t port_state;             /* 4 bits, enum sm_port_state; 0 on Set = no change */
	uint8_t phys_state;             /* 4 bits, 5 = LinkUp; 0 on Set = no change */
	uint8_t link_down_def_state;    /* 4 bits; 0 on Set = no change */
	uint8_t mkey_prot_bits;         /* 2 bits */
	uint8_t lmc;                    /* 3 bits */
	uint8_t link_speed_active;      /* 4 bits */
	uint8_t link_speed_enabled;     /* 4 bits; 0 on Set = no change */
	uint8_t neighbor_mtu;           /* 4 bits */
	uint8_t master_sm_sl;           /* 4 bits */
	uint8_t vl_cap;                 /* 4 bits */
	uint8_t init_type;              /* 4 bits */
	uint8_t vl_high_limit, vl_arb_high_cap, vl_arb_low_cap;
	uint8_t init_type_reply;        /* 4 bits */
	uint8_t mtu_cap;                /* 4 bits */
	uint8_t vl_stall_count;         /* 3 bits */
	uint8_t hoq_life;               /* 5 bits */
	uint8_t operational_vls;        /* 4 bits; 0 on Set = no change */
	uint8_t part_enf_in, part_enf_out, filter_raw_in, filter_raw_out;   /* 1 bit each */
	uint16_t mkey_violations, pkey_violations, qkey_violations;
	uint8_t guid_cap;
	uint8_t client_reregister;      /* 1 bit */
	uint8_t mcast_pkey_trap_suppr;  /* 2 bits */
	uint8_t subnet_timeout;         /* 5 bits */
	uint8_t resp_time_value;        /* 5 bits */
	uint8_t local_phy_errors;       /* 4 bits */
	uint8_t overrun_errors;         /* 4 bits */
	uint16_t max_credit_hint;
	uint32_t link_rt_latency;       /* 24 bits */
	uint16_t cap_mask2;
	uint8_t link_speed_ext_active;  /* 4 bits */
	uint8_t link_speed_ext_supported; /* 4 bits */
	uint8_t link_speed_ext_enabled; /* 5 bits; 0 on Set = no change */
};
/* Rejects port state > 4 (5..15 are reserved), phys state > 7. Reserved
 * bits are ignored. */
int sm_port_info_decode(const uint8_t data[SM_SMP_DATA_SIZE], struct sm_port_info *pi,
			struct sm_mad_err *err);
/* Encodes every field; values wider than their bit field are masked. */
void sm_port_info_encode(const struct sm_port_info *pi, uint8_t data[SM_SMP_DATA_SIZE]);

/*
 * What an SM writes with PortInfo Set. Everything not listed is taken from
 * the port's current PortInfo (`cur`, from a Get) or set to "no change".
 */
struct sm_port_info_set {
	uint16_t lid;            /* base LID (ignored by switch external ports) */
	uint8_t lmc;             /* 0..7 */
	uint16_t sm_lid;         /* master SM LID */
	uint8_t sm_sl;           /* master SM SL */
	uint64_t gid_prefix;     /* subnet prefix, e.g. 0xfe80000000000000 */
	uint8_t port_state;      /* 0 = no change, SM_PORT_DOWN, SM_PORT_ARMED, SM_PORT_ACTIVE */
	uint8_t subnet_timeout;  /* 5 bits; OpenSM default 18 */
	uint8_t client_reregister; /* 1: ask the CA to re-register with the SA */
	uint64_t mkey;           /* M_Key the port is to hold (0: none) */
	uint8_t mkey_prot_bits;  /* M_KeyProtectBits 0..3 */
	uint16_t mkey_lease_period; /* seconds, 0: the lease never expires */
};
/*
 * Fill `out` for a PortInfo Set: copy `cur` (may be NULL: zero base), apply
 * `s` (M_Key, protect bits and lease included: a zeroed `s` clears them), and put "no change" (0) into
 * LinkWidthEnabled, LinkSpeedEnabled, LinkSpeedExtEnabled, PortPhysicalState
 * and LinkDownDefaultState so the Set touches nothing else. OperationalVLs
 * goes out as read (cur): writing back what the port holds changes nothing,
 * and an SMA that takes 0 literally instead of "no change" (ibsim's) would
 * otherwise lose the VLs the port configuration phase set.
 */
void sm_port_info_prepare_set(struct sm_port_info *out, const struct sm_port_info *cur,
			      const struct sm_port_info_set *s);

struct sm_switch_info {
	uint16_t lft_cap;            /* LinearFDBCap */
	uint16_t rft_cap;            /* RandomFDBCap */
	uint16_t mft_cap;            /* MulticastFDBCap */
	uint16_t lft_top;            /* LinearFDBTop */
	uint8_t default_port;
	uint8_t default_mcast_primary_port;
	uint8_t default_mcast_not_primary_port;
	uint8_t lifetime_value;      /* 5 bits */
	uint8_t port_state_change;   /* 1 bit; write 1 to clear */
	uint8_t opt_sl2vl;           /* 2 bits */
	uint16_t lids_per_port;
	uint16_t part_enf_cap;
	uint8_t inbound_enf_cap;     /* 1 bit each */
	uint8_t outbound_enf_cap;
	uint8_t filter_raw_in_cap;
	uint8_t filter_raw_out_cap;
	uint8_t enhanced_port0;
	uint16_t mft_top;            /* MulticastFDBTop */
};
/* Rejects LinearFDBCap > 0xC000. */
int sm_switch_info_decode(const uint8_t data[SM_SMP_DATA_SIZE], struct sm_switch_info *si,
			  struct sm_mad_err *err);
void sm_switch_info_encode(const struct sm_switch_info *si, uint8_t data[SM_SMP_DATA_SIZE]);

/* One LinearForwardingTable block: entries for LIDs block*64 .. block*64+63.
 * The block number travels in the attribute modifier. */
struct sm_lft_block {
	uint8_t port[SM_LFT_BLOCK];
};
int sm_lft_block_decode(const uint8_t data[SM_SMP_DATA_SIZE], struct sm_lft_block *b,
			struct sm_mad_err *err);
void sm_lft_block_encode(const struct sm_lft_block *b, uint8_t data[SM_SMP_DATA_SIZE]);
/* Attribute modifier check: block < SM_LFT_MAX_BLOCKS. */
static inline bool sm_lft_block_valid(uint32_t block)
{
	return block < SM_LFT_MAX_BLOCKS;
}

/*
 * One MulticastForwardingTable block (IBA 14.2.5.12, codec_mft.c): the port
 * masks of 32 MLIDs (0xC000 + block*32 ..) for 16 ports (position*16 ..
 * position*16 + 15; bit i = port position*16 + i). Attribute modifier:
 * block in bits 0-8, position in bits 28-31, the bits between reserved (0).
 */
#define SM_MFT_BLOCK_MLIDS 32
#define SM_MFT_MAX_BLOCKS 512      /* 16,384 MLIDs from 0xC000 */
#define SM_MFT_POSITIONS 16        /* 16 x 16 = 256 port bits */
#define SM_PORT_CAP_MCAST_FDB_TOP 0x40000000u   /* PortInfo.CapabilityMask.IsMulticastFDBTopSupported */
struct sm_mft_block {
	uint16_t mask[SM_MFT_BLOCK_MLIDS];
};
int sm_mft_block_decode(const uint8_t data[SM_SMP_DATA_SIZE], struct sm_mft_block *b, struct sm_mad_err *err);
void sm_mft_block_encode(const struct sm_mft_block *b, uint8_t data[SM_SMP_DATA_SIZE]);
static inline uint32_t sm_mft_mod(unsigned block, unsigned position)
{
	return (uint32_t)(position & 0xF) << 28 | (block & 0x1FF);
}
/* A modifier with reserved bits set is refused (as an SMA answers INVALID_FIELD). */
static inline bool sm_mft_mod_valid(uint32_t mod)
{
	return (mod & 0x0FFFFE00u) == 0;
}

enum sm_sm_state {
	SM_SMSTATE_NOT_ACTIVE = 0,
	SM_SMSTATE_DISCOVERING = 1,
	SM_SMSTATE_STANDBY = 2,
	SM_SMSTATE_MASTER = 3,
};
/* SMInfo Set attribute modifiers */
enum sm_sminfo_mod {
	SM_SMINFO_HANDOVER = 1,
	SM_SMINFO_ACKNOWLEDGE = 2,
	SM_SMINFO_DISABLE = 3,
	SM_SMINFO_STANDBY = 4,
	SM_SMINFO_DISCOVER = 5,
};
struct sm_sm_info {
	uint64_t guid;
	uint64_t sm_key;
	uint32_t act_count;
	uint8_t priority;   /* 4 bits */
	uint8_t state;      /* 4 bits, enum sm_sm_state */
};
/* Rejects state > 3. */
int sm_sm_info_decode(const uint8_t data[SM_SMP_DATA_SIZE], struct sm_sm_info *si,
		      struct sm_mad_err *err);
void sm_sm_info_encode(const struct sm_sm_info *si, uint8_t data[SM_SMP_DATA_SIZE]);

/*
 * Notice (attribute 0x0002, the payload of Trap and TrapRepress). In an SMP
 * only the first 64 bytes travel (IssuerGID does not fit and is absent).
 */
#define SM_TRAP_LINK_STATE_CHANGE 128
#define SM_TRAP_LOCAL_CHANGES 144
#define SM_NOTICE_DETAILS 54
struct sm_notice {
	uint8_t is_generic;       /* 1 bit */
	uint8_t type;             /* 7 bits: 0 fatal, 1 urgent, 2 security, 3 subnet mgmt, 4 info */
	uint32_t producer_type;   /* 24 bits (generic) or vendor id (vendor-specific) */
	uint16_t trap_num;        /* generic: trap number; vendor: device id */
	uint16_t issuer_lid;
	uint8_t toggle;           /* 1 bit */
	uint16_t count;           /* 15 bits */
	uint8_t details[SM_NOTICE_DETAILS];
	/* decoded details, valid for generic trap 128 and 144 */
	uint16_t lid_addr;        /* trap 128/144: LID of the reporting switch/port */
	/* trap 144 (local changes) only; encoded from these fields too */
	uint8_t other_local_changes; /* 1 bit: something else than the flags below */
	uint32_t new_cap_mask;    /* the port's new PortInfo.CapabilityMask */
	uint16_t change_flags;    /* SM_TRAP144_* */
	uint16_t new_cap_mask2;
};
/* Trap 144 ChangeFlags */
#define SM_TRAP144_NODE_DESC 0x0001
#define SM_TRAP144_LINK_WIDTH_ENABLE 0x0002
#define SM_TRAP144_LINK_SPEED_ENABLE 0x0004
#define SM_TRAP144_SM_PRIORITY 0x0008
#define SM_TRAP144_HIERARCHY_INFO 0x0010
#define SM_TRAP144_CAP_MASK2 0x0020
#define SM_CAP_IS_SM 0x00000002u   /* PortInfo.CapabilityMask.IsSM */
#define SM_CAP_HAS_SL_MAP 0x00000040u /* PortInfo.CapabilityMask.IsSLMappingSupported */
int sm_notice_decode(const uint8_t data[SM_SMP_DATA_SIZE], struct sm_notice *n,
		     struct sm_mad_err *err);
/* Encodes `details`; for trap 128 and 144 lid_addr is written over the
 * LIDADDR detail bytes (details[0..1] for 128, details[2..3] for 144). */
void sm_notice_encode(const struct sm_notice *n, uint8_t data[SM_SMP_DATA_SIZE]);
/* Fill a generic Trap 128 notice from a switch with LID `sw_lid`
 * (producer type 2 = switch, type 1 = urgent). */
void sm_notice_trap128(struct sm_notice *n, uint16_t sw_lid);
/*
 * Build the TrapRepress an SM sends back for a received Trap: same TID,
 * class, attribute and modifier, method TrapRepress, same notice data.
 * The caller sends it LID-routed to the trap's source LID.
 */
void sm_smp_make_trap_repress(const struct sm_smp *trap, struct sm_smp *repress);


/*
 * SLtoVLMappingTable (0x0017): the VL of each of the 16 SLs, 4 bits each
 * in the first 8 bytes. Attribute modifier on a switch: output port in
 * bits 0-7, input port in bits 8-15; with SwitchInfo.OptimizedSLtoVL-
 * MappingProgramming a Set may cover every input port (bit 17) and/or every
 * output port (bit 16) at once. CAs and routers ignore the modifier.
 */
#define SM_SL2VL_ALL_OUT 0x00010000u
#define SM_SL2VL_ALL_IN 0x00020000u
struct sm_sl2vl {
	uint8_t vl[16];          /* by SL, 0..15 (15: drop) */
};
static inline uint32_t sm_sl2vl_mod(unsigned in_port, unsigned out_port)
{
	return (in_port & 0xFF) << 8 | (out_port & 0xFF);
}
void sm_sl2vl_decode(const uint8_t data[SM_SMP_DATA_SIZE], struct sm_sl2vl *t);
void sm_sl2vl_encode(const struct sm_sl2vl *t, uint8_t data[SM_SMP_DATA_SIZE]);

/*
 * VLArbitrationTable (0x0018): one block of 32 (VL, weight) entries.
 * Attribute modifier: block in bits 16-31 (1, 2: low priority entries
 * 0-31, 32-63; 3, 4: high priority), port in bits 0-15 (switches).
 * A port holds PortInfo.VLArbitrationLowCap / HighCap entries.
 */
#define SM_VLARB_ENTRIES 32
enum sm_vlarb_blk { SM_VLARB_LOW_0 = 1, SM_VLARB_LOW_1, SM_VLARB_HIGH_0, SM_VLARB_HIGH_1 };
struct sm_vlarb_block {
	uint8_t vl[SM_VLARB_ENTRIES];       /* 4 bits */
	uint8_t weight[SM_VLARB_ENTRIES];
};
static inline uint32_t sm_vlarb_mod(unsigned block, unsigned port)
{
	return (block & 0xFFFF) << 16 | (port & 0xFFFF);
}
void sm_vlarb_decode(const uint8_t data[SM_SMP_DATA_SIZE], struct sm_vlarb_block *b);
void sm_vlarb_encode(const struct sm_vlarb_block *b, uint8_t data[SM_SMP_DATA_SIZE]);

#endif
