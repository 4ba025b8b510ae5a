/* SPDX-License-Identifier: MIT */
#ifndef SMD_SA_PATH_H
#define SMD_SA_PATH_H
/*
 * DOC: PathRecord (0x35) and MultiPathRecord (0x3A), IBA vol. 1 15.2.5.16/.20
 *
 * Paths are answered from what smd programmed: the snapshot's fabric (LIDs,
 * links, widths and speeds) and its LFTs. A path from port S to LID D is
 * the walk S -> first switch -> LFT[D] -> ... -> the port holding D; a walk
 * that meets a missing LFT entry, an unlinked port, a CA that is not the
 * destination or more than 64 switches is no path, and so no record.
 * MTU and rate are the smallest along the walk; P_Key, SL and
 * PacketLifeTime follow OpenSM's osm_sa_path_record.c with QoS off and the
 * default partition (every port a full member of 0xFFFF).
 *
 * Files: path_wire.c (both record layouts, rate and MTU codes), path.c
 * (the walk, one source/destination pair's records, PathRecord),
 * path_multi.c (MultiPathRecord), path_mcast.c (a PathRecord to a
 * multicast group, from the SA's group table). Cost: a Get is two hash or
 * array look-ups and two walks (forward, and back for Reversible):
 * O(hops), no allocation beyond the answer buffer, which the caller reuses.
 *
 * Where the answers differ from OpenSM's (3.3.23, QoS off, default partition):
 *   - a Get without SGID/SLID is from the requester's port; OpenSM takes
 *     the first port, in GUID order, that has a path;
 *   - an SGID/DGID of another subnet or of no port is INVALID_GID (Get and
 *     GetTable); OpenSM computes that status but answers an empty list
 *     (NO_RECORDS for a Get). An off-subnet DGID is never routed (no routers);
 *   - a link's MTU is also bounded by NeighborMTU (smd does not set it;
 *     OpenSM sets it from MTUCap and reads MTUCap only); the egress port of
 *     a source switch counts too;
 *   - partitions (sa/pkey.h): both ends must share a P_Key in the tables
 *     the SM programmed (one at least a full member), and the requester a
 *     P_Key with each end, as OpenSM; a port with an empty table shares
 *     nothing (OpenSM: everything); without tables only 0xFFFF/0x7FFF; SL is the requested one or 0 (no QoS levels, no partition SL,
 *     no routing-engine SL); no Tavor MTU quirk, no max_rate option;
 *   - MultiPathRecord: the RMPP Active flag is not required in the request,
 *     every GID of a reassembled request is used (OpenSM: 11), the APM LID
 *     hash takes the source port's LMC (OpenSM: the subnet's);
 *   - records come in fabric (discovery) order, sources outer; OpenSM's are
 *     in GUID order, destinations outer for a whole-plane GetTable;
 *   - XDR (200 Gb/s lanes) has rate codes here; 8x/12x XDR answer 1200.
 *
 * Library rules: nothing logs; every request is untrusted.
 */
#include <stdbool.h>
#include <stdint.h>

#include "sa/query.h"

#define SM_SA_PATH_REC_SIZE 64
#define SM_SA_MPATH_REC_SIZE 24         /* fixed part; GIDs follow, 16 bytes each */
#define SM_SA_PATH_MAX_HOPS 64          /* switches on a path (OpenSM's MAX_HOPS) */
#define SM_SA_MPATH_MAX_PATHS 127       /* NumbPath when the request leaves it out */

/* PathRecord component mask bits (IBA table 210; OpenSM IB_PR_COMPMASK_*) */
enum sm_pr_cm {
	SM_PR_CM_SERVICE_ID_MSB = 0,
	SM_PR_CM_SERVICE_ID_LSB = 1,
	SM_PR_CM_DGID = 2,
	SM_PR_CM_SGID = 3,
	SM_PR_CM_DLID = 4,
	SM_PR_CM_SLID = 5,
	SM_PR_CM_RAW = 6,
	SM_PR_CM_FLOW_LABEL = 8,
	SM_PR_CM_HOP_LIMIT = 9,
	SM_PR_CM_TCLASS = 10,
	SM_PR_CM_REVERSIBLE = 11,
	SM_PR_CM_NUMB_PATH = 12,
	SM_PR_CM_PKEY = 13,
	SM_PR_CM_QOS_CLASS = 14,
	SM_PR_CM_SL = 15,
	SM_PR_CM_MTU_SEL = 16,
	SM_PR_CM_MTU = 17,
	SM_PR_CM_RATE_SEL = 18,
	SM_PR_CM_RATE = 19,
	SM_PR_CM_PLT_SEL = 20,
	SM_PR_CM_PLT = 21,
	SM_PR_CM_PREFERENCE = 22,
};

/* MultiPathRecord component mask bits (IBA table 215; OpenSM IB_MPR_COMPMASK_*) */
enum sm_mpr_cm {
	SM_MPR_CM_RAW = 0,
	SM_MPR_CM_FLOW_LABEL = 2,
	SM_MPR_CM_HOP_LIMIT = 3,
	SM_MPR_CM_TCLASS = 4,
	SM_MPR_CM_REVERSIBLE = 5,
	SM_MPR_CM_NUMB_PATH = 6,
	SM_MPR_CM_PKEY = 7,
	SM_MPR_CM_QOS_CLASS = 8,
	SM_MPR_CM_SL = 9,
	SM_MPR_CM_MTU_SEL = 10,
	SM_MPR_CM_MTU = 11,
	SM_MPR_CM_RATE_SEL = 12,
	SM_MPR_CM_RATE = 13,
	SM_MPR_CM_PLT_SEL = 14,
	SM_MPR_CM_PLT = 15,
	SM_MPR_CM_SERVICE_ID_MSB = 16,
	SM_MPR_CM_INDEP_SEL = 17,
	SM_MPR_CM_SGID_COUNT = 19,
	SM_MPR_CM_DGID_COUNT = 20,
	SM_MPR_CM_SERVICE_ID_LSB = 21,
};

/* MTU codes (1 = 256 .. 5 = 4096) and PathRecord rate codes (2 = 2.5 Gb/s .. 24 = 1200 Gb/s). */
#define SM_SA_MTU_MIN 1
#define SM_SA_MTU_MAX 5
#define SM_SA_RATE_MIN 2
#define SM_SA_RATE_MAX 24

/*
 * What PathRecord and MultiPathRecord share, laid out the same in both
 * (from PathRecord byte 44, MultiPathRecord byte 0): RawTraffic|FlowLabel|
 * HopLimit, TClass, Reversible|NumbPath, P_Key, QoSClass|SL, MTU, rate and
 * PacketLifeTime with their selectors.
 */
struct sm_sa_path_parms {
	bool raw;
	uint32_t flow_label;           /* 20 bits */
	uint8_t hop_limit;
	uint8_t tclass;
	bool reversible;
	uint8_t numb_path;             /* 7 bits */
	uint16_t pkey;
	uint16_t qos_class;            /* 12 bits */
	uint8_t sl;                    /* 4 bits */
	uint8_t mtu_sel, mtu;          /* 2 + 6 bits */
	uint8_t rate_sel, rate;
	uint8_t plt_sel, plt;
};

/* A PathRecord in host order. */
struct sm_sa_path_rec {
	uint64_t service_id;
	uint8_t dgid[16], sgid[16];    /* network order */
	uint16_t dlid, slid;
	struct sm_sa_path_parms p;
	uint8_t preference;
};

/* The fixed part of a MultiPathRecord (GIDs are read from the request in place). */
struct sm_sa_mpath_rec {
	struct sm_sa_path_parms p;
	uint64_t service_id;           /* 8 MSB at byte 13, 56 LSB at 17..23 */
	uint8_t indep_sel;             /* 2 bits */
	uint8_t sgid_count, dgid_count;
};

void sm_sa_path_rec_decode(const uint8_t rec[SM_SA_PATH_REC_SIZE], struct sm_sa_path_rec *r);
void sm_sa_path_rec_encode(const struct sm_sa_path_rec *r, uint8_t rec[SM_SA_PATH_REC_SIZE]);
void sm_sa_mpath_rec_decode(const uint8_t rec[SM_SA_MPATH_REC_SIZE], struct sm_sa_mpath_rec *r);
void sm_sa_mpath_rec_encode(const struct sm_sa_mpath_rec *r, uint8_t rec[SM_SA_MPATH_REC_SIZE]);

/*
 * PathRecord rate code of a port's active width and speed (fabric.h
 * encodings, SM_PORT_F_* flags), 0 when width or speed is unknown.
 */
uint8_t sm_sa_rate_of(uint8_t width, uint8_t speed, uint8_t flags);
/* Order of rate codes by bandwidth: <0, 0, >0 (codes outside 2..24 rank lowest). */
int sm_sa_rate_cmp(uint8_t a, uint8_t b);
/* The next lower rate code than `rate`, 0 when none. */
uint8_t sm_sa_rate_prev(uint8_t rate);

/*
 * Every port's rate and MTU codes for paths (query.h sm_sa_ctx.port_rm),
 * malloc'ed, n_ports entries; NULL without a plane to answer from or
 * memory. Freed by the caller.
 */
struct sm_snapshot;
uint16_t *sm_sa_port_rm_build(const struct sm_snapshot *s);

/* Handlers (query.h sm_sa_handler_fn): PathRecord by Get/GetTable, MultiPathRecord by GetMulti. */
int sm_sa_h_path(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans);
int sm_sa_h_multipath(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans);

#endif
