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
 *  - MCMemberRecord (IBA 15.2.5.17): the group table (mcgroup.c) and its
 *    handler (mcmember.c), rules there. A group: its parameters as one
 *    record (PortGID 0), its MLID (from 0xC000, the lowest free, freed when
 *    the group goes), its members (port GUID, JoinState, ProxyJoin) sorted
 *    by GUID. Bounded: lim.max_groups groups, lim.max_members members over
 *    all groups (NO_RESOURCES beyond). Every change bumps mc_gen; changes
 *    that create or delete a group queue a Notice (traps 66/67) the
 *    server sends (sm_sa_dyn_mc_events). Groups a partition declares
 *    (sm_sa_dyn_mc_config: the IPoIB broadcast groups) are well known:
 *    they stay when their last member leaves.
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
#define SM_SA_MLID_COUNT (0xFFFE - 0xC000 + 1)   /* sm/mcast.h SM_MLID_FIRST..SM_MLID_LAST */

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
	unsigned max_members;      /* over all groups: 0 = default 65536 */
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
/* JoinState bits (IBA 15.2.5.17; sm/mcast.h has the first three) */
#define SM_SA_MC_FULL 0x1
#define SM_SA_MC_NON 0x2
#define SM_SA_MC_SENDONLY 0x4
#define SM_SA_MC_SENDONLY_FULL 0x8   /* IBA 1.3: creates a group, receives nothing */
#define SM_SA_MC_FULLISH (SM_SA_MC_FULL | SM_SA_MC_SENDONLY_FULL)

struct sm_sa_mcm {                 /* one member of a group */
	uint64_t guid;             /* port GUID */
	uint8_t join;              /* JoinState bits, never 0 */
	bool proxy;                /* joined by another port (ProxyJoin) */
};
struct sm_sa_mcg {                 /* one group */
	uint8_t rec[SM_SA_MCMEMBER_REC_SIZE];  /* its parameters as answered; PortGID, ProxyJoin 0 */
	bool well_known;           /* declared by a partition: kept without members */
	unsigned fullish;          /* members with FullMember or SendOnlyFullMember */
	struct sm_sa_mcm *m;       /* sorted by guid */
	size_t n, cap;
};
struct sm_sa_mc_event {            /* a Notice to send: trap 66/67 for an MGID */
	uint16_t trap;
	uint8_t mgid[16];
};
#define SM_SA_MC_EVENTS 256

struct sm_sa_dyn {
	struct sm_sa_dyn_limits lim;
	struct sm_sa_svc *svcs;
	size_t n_svcs;
	struct sm_sa_sub *subs;
	size_t n_subs;
	uint32_t next_sub_id;
	/* multicast (mcgroup.c) */
	struct sm_sa_mcg *groups;  /* sorted by MGID */
	size_t n_groups;
	size_t n_members;          /* over all groups */
	uint64_t mlid_used[(SM_SA_MLID_COUNT + 63) / 64];   /* bit i: MLID 0xC000 + i */
	uint32_t mgid_seq;         /* SA-assigned MGIDs */
	uint64_t mc_gen;           /* grows with every change of groups or members */
	struct sm_sa_mc_event mc_ev[SM_SA_MC_EVENTS];
	unsigned n_mc_ev;
	uint64_t mc_ev_lost;       /* events beyond SM_SA_MC_EVENTS before the server took them */
	uint64_t mc_created, mc_deleted;   /* counters */
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

/* ---- multicast groups (mcgroup.c) ---- */
struct sm_partitions;
struct sm_mc_set;

/*
 * Add member port guid to the group of a MCMemberRecord (wire form),
 * creating the group with the record's parameters and MLID (0: the lowest
 * free) if needed, without the checks of a join (tests, and a table filled
 * by hand). 0, -ENOSPC (bound or MLIDs exhausted), -ENOMEM.
 */
int sm_sa_dyn_group_add(struct sm_sa_dyn *d, const uint8_t member_rec[SM_SA_MCMEMBER_REC_SIZE]);
size_t sm_sa_dyn_groups(const struct sm_sa_dyn *d);
size_t sm_sa_dyn_mc_members(const struct sm_sa_dyn *d);
size_t sm_sa_dyn_mlids_used(const struct sm_sa_dyn *d);

/* The group of MGID mgid, or NULL. */
struct sm_sa_mcg *sm_sa_mc_find(const struct sm_sa_dyn *d, const uint8_t mgid[16]);
/* Member guid of g, or NULL. */
struct sm_sa_mcm *sm_sa_mc_member(const struct sm_sa_mcg *g, uint64_t guid);
/* The record of member m of g (m NULL: the group's own), PortGID made from prefix. */
void sm_sa_mc_record(const struct sm_sa_mcg *g, const struct sm_sa_mcm *m, uint64_t prefix,
		     uint8_t rec[SM_SA_MCMEMBER_REC_SIZE]);

/*
 * A new group with parameters rec (MGID, Q_Key, MTU, TClass, P_Key, rate,
 * PacketLifeTime, SL/FlowLabel/HopLimit, Scope), MLID mlid if free and in
 * range, else the lowest free. 0 and *out; -EEXIST (the MGID has a
 * group), -ENOSPC (max_groups, or no MLID), -ENOMEM.
 */
int sm_sa_mc_create(struct sm_sa_dyn *d, const uint8_t rec[SM_SA_MCMEMBER_REC_SIZE], uint16_t mlid,
		    struct sm_sa_mcg **out);
/*
 * Join: add the bits join to member guid of g (a new member if none).
 * 0, -ENOSPC (max_members), -ENOMEM. A first FullMember or SendOnlyFull
 * member queues trap 66.
 */
int sm_sa_mc_join(struct sm_sa_dyn *d, struct sm_sa_mcg *g, uint64_t guid, uint8_t join, bool proxy);
/*
 * Leave: clear the bits join of member guid of g (as OpenSM: a member that
 * keeps no FullMember bit and is the last full-ish one goes entirely).
 * When no full-ish member is left, trap 67 is queued and every member
 * goes; the group too unless well known. The member's JoinState after
 * the leave in *left (0: gone). Returns true when the group was deleted
 * (g is then invalid).
 */
bool sm_sa_mc_leave(struct sm_sa_dyn *d, struct sm_sa_mcg *g, uint64_t guid, uint8_t join, uint8_t *left);
/* Remove every port not in the sorted GUID list cur (out of service) from every group; members removed. */
size_t sm_sa_mc_prune(struct sm_sa_dyn *d, const uint64_t *cur, size_t n_cur);
struct sm_snapshot;
/* The same for the ports in service in snap: CA/router ports active with a LID, switches' port 0. */
size_t sm_sa_mc_prune_snap(struct sm_sa_dyn *d, const struct sm_snapshot *snap);
/* Delete g outright (a create whose join failed: no trap). */
void sm_sa_mc_drop(struct sm_sa_dyn *d, struct sm_sa_mcg *g);

/*
 * The well-known groups of parts (every partition's `ipoib` broadcast
 * group and `mgid=` groups) with OpenSM's parameters (P_Key with the
 * membership bit, PacketLifeTime = subnet_timeout, HopLimit 0 at
 * link-local scope else 0xFF), created in partition order (so the default
 * partition's broadcast group gets 0xC000). An existing group of the same
 * MGID becomes well known. 0 or -errno (-ENOSPC, -ENOMEM).
 */
int sm_sa_dyn_mc_config(struct sm_sa_dyn *d, const struct sm_partitions *parts, uint8_t subnet_timeout);
/*
 * A partitions reload: the well-known groups parts no longer declares are
 * deleted with their members (trap 67 queued, MLID freed), then those it
 * declares are made where missing (as sm_sa_dyn_mc_config; no trap 66: a
 * group is reported created when its first full member joins). Groups
 * hosts created are left alone. *made, *deleted: how many. 0 or -errno
 * (-ENOSPC, -ENOMEM: the groups made so far stay).
 */
int sm_sa_dyn_mc_reconfig(struct sm_sa_dyn *d, const struct sm_partitions *parts, uint8_t subnet_timeout,
			  size_t *made, size_t *deleted);
/* The groups as the SM programs them (sm/mcast.h), gen = mc_gen, for plane. NULL on ENOMEM. */
struct sm_mc_set *sm_sa_dyn_mc_set(const struct sm_sa_dyn *d, unsigned plane);
/*
 * The set of a fresh table configured with parts: what an SA starting with
 * those partitions hands out first (gen 1), for a bring-up with no SA yet
 * (--once, the daemon's first cycle). 0 or -errno.
 */
int sm_sa_mc_start_set(const struct sm_partitions *parts, uint8_t subnet_timeout, unsigned plane,
		       struct sm_mc_set **out);
/* Take the queued trap 66/67 events (at most max into out); the number taken. */
unsigned sm_sa_dyn_mc_events(struct sm_sa_dyn *d, struct sm_sa_mc_event *out, unsigned max);
/*
 * What changed since the last call, for the SA's owner (loop thread):
 * every queued trap 66/67 as a Notice issued by the SM at sm_lid (the 64
 * bytes of sm_sa_notice(), server.h) to notice(arg, n), then the new set
 * for plane when mc_gen moved past *seen (*seen updated), else NULL (also
 * on ENOMEM: the next change brings it).
 */
struct sm_mc_set *sm_sa_dyn_mc_take(struct sm_sa_dyn *d, unsigned plane, uint16_t sm_lid, uint64_t *seen,
				    void (*notice)(void *arg, const uint8_t n[64]), void *arg);

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
