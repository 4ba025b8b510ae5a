/* SPDX-License-Identifier: MIT */
#ifndef SMD_SA_DYN_H
#define SMD_SA_DYN_H
/*
 * DOC: the SA's mutable tables (ServiceRecords, InformInfo subscriptions,
 * multicast groups) and their handlers
 *
 * Owned by the thread that runs the server (server.h): the handlers
 * (service.c, inform.c, mcmember.c) change them from sm_sa_query, the
 * server expires leases and drops subscribers that never answer a Report.
 * Every table is bounded (struct sm_sa_dyn_limits): a Set beyond the bound
 * is NO_RESOURCES. Nothing here does I/O or reads a clock: times come in
 * ctx->now_us.
 *
 *  - ServiceRecord (IBA 15.2.5.14): Set registers or renews (identity:
 *    ServiceID, ServiceGID, ServiceP_Key, as OpenSM keys it) with a lease
 *    in seconds (0xFFFFFFFF or the lease bit clear: infinite); Get/GetTable
 *    match under the component mask; Delete removes the record of that
 *    identity. ServiceKey is answered as 0 unless the request was trusted.
 *    An untrusted requester may renew or delete only what it registered
 *    (from the same LID): else DENIED.
 *  - InformInfo (IBA 13.4.8.3, 15.2.5.12): Set subscribes (Subscribe 1) or
 *    unsubscribes (0) the requester's address; answered with the InformInfo
 *    (the QPN field set to the requester's QP on subscribe). Matching a
 *    Notice: IsGeneric, TrapNumber, Type, ProducerType (0xFFFF/0xFFFFFF:
 *    any), the LID range on the issuer (not for the SM's own 64-67), a
 *    non-zero GID on the port of a 64/65. Security traps
 *    (256-259) only for a trusted requester (C15-0.2-1.16). InformInfoRecord
 *    Get/GetTable lists them; the QPN is 0 unless trusted.
 *  - MCMemberRecord: answered from the group table, which the multicast
 *    issue fills (sm_sa_dyn_group_add). Until it does, a Set (create or
 *    join) is NO_RESOURCES: the SA cannot program a group's MFTs yet, and
 *    a client (IPoIB) retries a join after NO_RESOURCES; a Delete of a
 *    member that is not there is REQ_INVALID (as OpenSM).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mad/gsi.h"
#include "sa/query.h"

#define SM_SA_SERVICE_REC_SIZE 176
#define SM_SA_INFORM_INFO_SIZE 40      /* 36 + 4 pad */
#define SM_SA_INFORM_REC_SIZE 80
#define SM_SA_MCMEMBER_REC_SIZE 56     /* 52 + 4 pad */
#define SM_SA_NOTICE_SIZE 80

#define SM_SA_LEASE_INFINITE 0xFFFFFFFFu

/* Generic trap numbers the SA forwards (IBA 14.2.5.1). */
#define SM_TRAP_GID_IN 64
#define SM_TRAP_GID_OUT 65
#define SM_TRAP_MC_CREATE 66
#define SM_TRAP_MC_DELETE 67
#define SM_TRAP_LINK_STATE 128

struct sm_sa_dyn_limits {
	unsigned max_services;     /* 0 = default 4096 */
	unsigned max_subs;         /* 0 = default 1024 */
	unsigned max_groups;       /* 0 = default 1024 */
};

/* The tables, for the handlers (service.c, inform.c, mcmember.c) and dyn.c only. */
struct sm_sa_svc {
	uint8_t rec[SM_SA_SERVICE_REC_SIZE];
	uint64_t expires_us;       /* 0: infinite lease */
	uint16_t owner_lid;        /* who registered it */
};
struct sm_sa_sub {
	uint32_t id;
	uint8_t gid[16];           /* subscriber GID */
	uint8_t info[SM_SA_INFORM_INFO_SIZE];   /* InformInfo as answered (QPN set) */
	struct sm_gsi_addr to;     /* where its Reports go */
};
struct sm_sa_dyn {
	struct sm_sa_dyn_limits lim;
	struct sm_sa_svc *svcs;
	size_t n_svcs;
	struct sm_sa_sub *subs;
	size_t n_subs;
	uint32_t next_sub_id;
	uint8_t (*groups)[SM_SA_MCMEMBER_REC_SIZE];
	size_t n_groups;
};

int sm_sa_dyn_new(const struct sm_sa_dyn_limits *lim, struct sm_sa_dyn **out);
void sm_sa_dyn_free(struct sm_sa_dyn *d);   /* accepts NULL */

/* Drop services whose lease ended by now_us; the number dropped. */
unsigned sm_sa_dyn_expire(struct sm_sa_dyn *d, uint64_t now_us);
/* When the next lease ends (0: none). */
uint64_t sm_sa_dyn_next_expiry(const struct sm_sa_dyn *d);
size_t sm_sa_dyn_services(const struct sm_sa_dyn *d);
size_t sm_sa_dyn_subs(const struct sm_sa_dyn *d);

/* Where a Report for a subscription goes. */
struct sm_sa_report_dest {
	uint32_t sub_id;           /* for sm_sa_dyn_unsubscribe_id */
	struct sm_gsi_addr to;
};
/*
 * The subscriptions a Notice (80 bytes, wire form) matches: up to max of
 * them in out; the number of matches (may exceed max: the rest are not
 * written).
 */
size_t sm_sa_dyn_match(const struct sm_sa_dyn *d, const uint8_t notice[SM_SA_NOTICE_SIZE],
		       struct sm_sa_report_dest *out, size_t max);
/* A subscriber that never answered its Reports: drop its subscription. */
void sm_sa_dyn_unsubscribe_id(struct sm_sa_dyn *d, uint32_t sub_id);

/* A multicast group as the multicast issue will keep it (an MCMemberRecord per member). */
int sm_sa_dyn_group_add(struct sm_sa_dyn *d, const uint8_t member_rec[SM_SA_MCMEMBER_REC_SIZE]);
size_t sm_sa_dyn_groups(const struct sm_sa_dyn *d);

/* Build a generic Notice (wire form): trap, issuer LID/GID, data details (54 bytes or NULL). */
void sm_sa_notice_make(uint8_t notice[SM_SA_NOTICE_SIZE], uint8_t type, uint16_t trap, uint16_t issuer_lid,
		       const uint8_t issuer_gid[16], const uint8_t *details);

/* A Report(Notice) MAD of the SA (method Report, attribute Notice) with TID tid. */
void sm_sa_report_encode(uint64_t tid, const uint8_t notice[SM_SA_NOTICE_SIZE], uint8_t mad[256]);

/* The GIDs that came into / went out of service between two sorted GUID lists (port GUIDs). */
typedef void sm_sa_gid_change_fn(uint64_t guid, bool in, void *arg);
void sm_sa_guid_diff(const uint64_t *old, size_t n_old, const uint64_t *cur, size_t n_cur, sm_sa_gid_change_fn *fn,
		     void *arg);

struct sm_snapshot;
/* Port GUIDs of the CA and router ports in service in snap (active, with a LID), sorted; malloc'ed. */
int sm_sa_snap_port_guids(const struct sm_snapshot *snap, uint64_t **out, size_t *n);
/* The GID of the port holding LID lid in snap (all 0 when none). */
void sm_sa_snap_gid_of_lid(const struct sm_snapshot *snap, uint16_t lid, uint8_t gid[16]);

/* Handlers (the dispatcher's table in query.c). */
int sm_sa_h_service(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans);
int sm_sa_h_inform_info(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans);
int sm_sa_h_inform_info_record(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans);
int sm_sa_h_mcmember(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans);

#endif
