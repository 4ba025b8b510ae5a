/* SPDX-License-Identifier: MIT */
/*
 * DOC: MCMemberRecord (IBA 15.2.5.17): join, create, leave, query
 *
 * The group table is mcgroup.c's (dyn.h); this file decides what a
 * request may do, with OpenSM's rules (osm_sa_mcmember_record.c) where the
 * IBA leaves a choice:
 *  - Set (join, create when the MGID has no group) and Delete (leave) need
 *    MGID, PortGID and JoinState in the component mask, else
 *    INSUFFICIENT_COMPONENTS; an MTU or rate code out of range is
 *    REQ_INVALID; a PortGID of another subnet prefix INVALID_GID (the
 *    default prefix fe80:: stands for ours).
 *  - The port of PortGID must be in service in the snapshot; a requester
 *    joining another port (a proxy) must share a partition with it; the
 *    joining port must be a member of the group's partition (the P_Key
 *    tables as programmed, snapshot.h; without partitions configured every
 *    port is a full member of the default one); else REQ_INVALID.
 *  - Create: JoinState FullMember or SendOnlyFullMember, and Q_Key,
 *    TClass, P_Key, FlowLabel and SL in the mask (o15-0.2.3), else
 *    REQ_INVALID / INSUFFICIENT_COMPONENTS. MGID 0: the SA assigns
 *    ff1S:a01b:<subnet prefix>:<counter> (S the requested Scope, else
 *    link-local). A given MGID must start 0xFF, have a scope other than
 *    0 (reserved), no reserved flag bit, not the SA signature 0xA01B
 *    at link-local scope, and an IPoIB MGID other than a broadcast one
 *    needs its partition's broadcast group and agrees with it. MTU and rate
 *    are chosen under their selectors within what the joining port
 *    carries, else REQ_INVALID. No MLID or table space: NO_RESOURCES.
 *  - Join of an existing group: the named components agree with the group
 *    (Q_Key, P_Key base with one full, TClass, SL, FlowLabel, HopLimit,
 *    MTU and rate selectors), the port carries the group's MTU and rate;
 *    else REQ_INVALID. JoinState bits add up (o15-0.1.11).
 *  - Leave: the member exists, the JoinState bits asked are a non-empty
 *    subset of its own, and the requester is the port itself (or, for a
 *    proxy join, a member of the group's partition); else REQ_INVALID.
 *  - Get/GetTable: the groups of the requester's partitions that match;
 *    a trusted requester (our SM_Key) gets one record per member, anyone
 *    else one per group with PortGID, JoinState and ProxyJoin zero.
 */
#include "sa/dyn.h"
#include "sa/handlers.h"
#include "sa/path_priv.h"
#include "sa/records.h"
#include "model/partitions.h"
#include "sa/pkey.h"
#include "sm/snapshot.h"

#include <string.h>

enum {
	CM_MGID = 0, CM_PORT_GID, CM_QKEY, CM_MLID, CM_MTU_SEL, CM_MTU, CM_TCLASS, CM_PKEY, CM_RATE_SEL, CM_RATE,
	CM_PLT_SEL, CM_PLT, CM_SL, CM_FLOW, CM_HOP, CM_SCOPE, CM_JOIN_STATE, CM_PROXY,
};
#define B(x) (1ull << (x))
#define JOIN_MASK (B(CM_MGID) | B(CM_PORT_GID) | B(CM_JOIN_STATE))
#define CREATE_MASK (JOIN_MASK | B(CM_QKEY) | B(CM_TCLASS) | B(CM_PKEY) | B(CM_FLOW) | B(CM_SL))
#define PREFIX_DEFAULT 0xFE80000000000000ull
#define MTU_FALLBACK 4       /* 2048, when the port's is unknown */
#define RATE_FALLBACK 3      /* 10 Gb/s */

/* The request as the rules read it. */
struct mcr {
	const struct sm_sa_ctx *ctx;
	struct sm_sa_dyn *d;
	struct sm_pr_env e;
	const uint8_t *q;        /* request record */
	uint64_t cm;
	uint64_t prefix;         /* ours */
	uint64_t guid;           /* PortGID's */
	uint32_t port, req_port; /* PortGID's port, the requester's (SM_NONE unknown) */
	uint8_t join;
};

static bool cm(const struct mcr *r, unsigned bit)
{
	return sm_sa_cm(r->cm, bit);
}

static unsigned sfh_sl(const uint8_t *rec) { return rec[44] >> 4; }
static uint32_t sfh_flow(const uint8_t *rec) { return sm_sa_get32(rec + 44) >> 8 & 0xFFFFF; }
static unsigned sfh_hop(const uint8_t *rec) { return rec[47]; }

/* ---- partitions: the P_Key tables as programmed (sa/pkey.h) ---- */

/* Port's membership of the partition of pkey (the membership bit ignored). */
static enum sm_part_membership member_of(const struct mcr *r, uint32_t port, uint16_t pkey)
{
	const uint16_t *t;
	unsigned n, m = SM_PART_NONE;

	if (port == SM_NONE)
		return SM_PART_NONE;
	if (!r->ctx->snap->pkeys)   /* no partitions configured: every port a full member of the default one */
		return (pkey & 0x7FFF) == 0x7FFF ? SM_PART_FULL : SM_PART_NONE;
	t = sm_snapshot_pkeys(r->ctx->snap, port, &n);
	for (unsigned i = 0; t && i < n; i++)
		if ((pkey & 0x7FFF) && (t[i] & 0x7FFF) == (pkey & 0x7FFF))
			m |= t[i] & 0x8000 ? SM_PART_FULL : SM_PART_LIMITED;
	return (enum sm_part_membership)m;
}

/* Two ports share a partition, one of them a full member of it (a proxy join). */
static bool share_pkey(const struct mcr *r, uint32_t a, uint32_t b)
{
	uint16_t any;

	return sm_sa_pkey_shared(r->ctx->snap->pkeys, a, b, false, 0, &any);
}

/* ---- the rules ---- */

/* The named Q_Key, P_Key, TClass, SL, FlowLabel, HopLimit agree with group record g. */
static bool other_fields_ok(const struct mcr *r, const uint8_t *g)
{
	const uint8_t *q = r->q;

	if (cm(r, CM_QKEY) && sm_sa_get32(q + 32) != sm_sa_get32(g + 32))
		return false;
	if (cm(r, CM_PKEY)) {
		uint16_t a = sm_sa_get16(q + 40), b = sm_sa_get16(g + 40);
		if (!((a | b) & 0x8000) || (a & 0x7FFF) != (b & 0x7FFF))
			return false;
	}
	return (!cm(r, CM_TCLASS) || q[39] == g[39]) && (!cm(r, CM_SL) || sfh_sl(q) == sfh_sl(g)) &&
	       (!cm(r, CM_FLOW) || sfh_flow(q) == sfh_flow(g)) && (!cm(r, CM_HOP) || sfh_hop(q) == sfh_hop(g));
}

/* The MTU and rate selectors of the request hold for group record g (PacketLifeTime ignored, as OpenSM). */
static bool selectors_ok(const struct mcr *r, const uint8_t *g)
{
	const uint8_t *q = r->q;

	if (cm(r, CM_MTU_SEL) && !sm_sa_sel_ok(q[38] >> 6, q[38] & 0x3F, g[38] & 0x3F))
		return false;
	if (cm(r, CM_RATE_SEL) && !sm_sa_sel_ok(q[42] >> 6, sm_pr_rate_bw[q[42] & 0x1F], sm_pr_rate_bw[g[42] & 0x1F]))
		return false;
	return true;
}

/* The port carries the group's MTU and rate (unknown: assumed to). */
static bool port_carries(const struct mcr *r, uint32_t port, const uint8_t *g)
{
	uint8_t rate, mtu;

	sm_pr_port_rate_mtu(&r->e, port, &rate, &mtu);
	if (mtu && mtu < (g[38] & 0x3F))
		return false;
	return !rate || sm_sa_rate_cmp(rate, g[42] & 0x3F) >= 0;
}

/* MTU and rate codes in range where the request names them with their selector. */
static bool codes_ok(const struct mcr *r)
{
	const uint8_t *q = r->q;
	uint8_t mtu = q[38] & 0x3F, rate = q[42] & 0x3F;

	if (cm(r, CM_MTU_SEL) && cm(r, CM_MTU) && (mtu < SM_SA_MTU_MIN || mtu > SM_SA_MTU_MAX))
		return false;
	if (cm(r, CM_RATE_SEL) && cm(r, CM_RATE) &&
	    (rate < SM_SA_RATE_MIN || rate > SM_SA_RATE_MAX || !sm_pr_rate_bw[rate]))
		return false;
	return true;
}

/* A new group's MTU (code) under the request's selector and the port's MTU; 0: not realizable. */
static uint8_t choose_mtu(const struct mcr *r, uint8_t port_mtu)
{
	const uint8_t *q = r->q;
	unsigned sel = q[38] >> 6, want = q[38] & 0x3F, m = want;

	if (!cm(r, CM_MTU) || !cm(r, CM_MTU_SEL) || sel == SM_SA_SEL_MAX)
		return port_mtu ? port_mtu : MTU_FALLBACK;
	if (sel == SM_SA_SEL_GT) {
		if (port_mtu && want >= port_mtu)
			return 0;
		m = port_mtu ? port_mtu : want + 1;
	} else if (sel == SM_SA_SEL_LT) {
		m = port_mtu && want > port_mtu ? port_mtu : want - 1;
	} else if (port_mtu && want > port_mtu) {
		return 0;   /* exactly an MTU the port cannot carry */
	}
	return m >= SM_SA_MTU_MIN && m <= SM_SA_MTU_MAX ? (uint8_t)m : 0;
}

static uint8_t choose_rate(const struct mcr *r, uint8_t port_rate)
{
	const uint8_t *q = r->q;
	unsigned sel = q[42] >> 6;
	uint8_t want = q[42] & 0x3F, rate = want;

	if (!cm(r, CM_RATE) || !cm(r, CM_RATE_SEL) || sel == SM_SA_SEL_MAX)
		return port_rate ? port_rate : RATE_FALLBACK;
	if (sel == SM_SA_SEL_GT) {
		if (port_rate && sm_sa_rate_cmp(want, port_rate) >= 0)
			return 0;
		rate = port_rate;   /* the largest we can: the port's */
		if (!rate)
			return 0;
	} else if (sel == SM_SA_SEL_LT) {
		rate = port_rate && sm_sa_rate_cmp(want, port_rate) > 0 ? port_rate : sm_sa_rate_prev(want);
	} else if (port_rate && sm_sa_rate_cmp(want, port_rate) > 0) {
		return 0;
	}
	return rate >= SM_SA_RATE_MIN && rate <= SM_SA_RATE_MAX ? rate : 0;
}

/* A requested MGID a group may be created with (o15-0.1.5 as OpenSM applies it, plus the scope). */
static uint16_t mgid_status(const struct mcr *r, const uint8_t *mgid)
{
	uint16_t sig = sm_sa_get16(mgid + 2);
	unsigned scope = mgid[1] & 0xF;

	/* scope 0 is reserved (RFC 4291); 0xF too, but the IBA's compliance test (osmtest o15.0.1.6) creates one */
	if (mgid[0] != 0xFF || scope == 0)
		return SM_SA_STATUS_REQ_INVALID;
	if (sig == 0x401B || sig == 0x601B) {
		/* an IPoIB MGID: the partition's broadcast group must be there, and agree */
		uint8_t b[16] = { 0xFF, 0x10, 0x40, 0x1B, mgid[4], mgid[5], 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF };
		b[1] = (uint8_t)(0x10 | scope);
		if (!memcmp(b, mgid, 16))
			return 0;
		const struct sm_sa_mcg *bg = sm_sa_mc_find(r->d, b);
		return bg && other_fields_ok(r, bg->rec) ? 0 : SM_SA_STATUS_REQ_INVALID;
	}
	if (mgid[1] & 0xE0)
		return SM_SA_STATUS_REQ_INVALID;   /* reserved flags */
	if (sig == 0xA01B && scope == 2)
		return SM_SA_STATUS_REQ_INVALID;   /* SA-assigned signature at link-local scope: only we make those */
	return 0;
}

/* An MGID of the SA's own (OpenSM's scheme: ff1S:a01b, the subnet prefix, a counter). */
static bool assign_mgid(struct mcr *r, uint8_t mgid[16])
{
	uint8_t scope = cm(r, CM_SCOPE) && (r->q[48] >> 4) ? r->q[48] >> 4 : 2;

	for (unsigned i = 0; i < 1000; i++) {
		mgid[0] = 0xFF;
		mgid[1] = (uint8_t)(0x10 | scope);
		mgid[2] = 0xA0;
		mgid[3] = 0x1B;
		sm_sa_put64(mgid + 4, r->prefix);
		sm_sa_put32(mgid + 10, r->d->mgid_seq++);
		mgid[14] = mgid[15] = 0;
		if (!sm_sa_mc_find(r->d, mgid))
			return true;
	}
	return false;
}

/* Create the group the request names; 0 or the MAD status. */
static uint16_t create(struct mcr *r, struct sm_sa_mcg **out)
{
	uint8_t rec[SM_SA_MCMEMBER_REC_SIZE], port_rate, port_mtu;
	uint16_t st;

	if (!(r->join & SM_SA_MC_FULLISH))
		return SM_SA_STATUS_REQ_INVALID;   /* o15-0.1.9 */
	if ((r->cm & CREATE_MASK) != CREATE_MASK)
		return SM_SA_STATUS_INSUFFICIENT_COMPONENTS;
	memcpy(rec, r->q, sizeof(rec));
	static const uint8_t zero[16];
	if (!memcmp(rec, zero, 16)) {
		if (!assign_mgid(r, rec))
			return SM_SA_STATUS_NO_RESOURCES;
	} else if ((st = mgid_status(r, rec))) {
		return st;
	}
	sm_pr_port_rate_mtu(&r->e, r->port, &port_rate, &port_mtu);
	uint8_t mtu = choose_mtu(r, port_mtu), rate = choose_rate(r, port_rate);
	if (!mtu || !rate)
		return SM_SA_STATUS_REQ_INVALID;
	rec[38] = (uint8_t)(2 << 6 | mtu);
	rec[42] = (uint8_t)(2 << 6 | rate);
	rec[43] = (uint8_t)(2 << 6 | (cm(r, CM_PLT) && cm(r, CM_PLT_SEL) ? r->q[43] & 0x3F : r->e.plt));
	rec[48] = (uint8_t)((rec[1] & 0xF) << 4 | r->join);
	int rc = sm_sa_mc_create(r->d, rec, cm(r, CM_MLID) ? sm_sa_get16(r->q + 36) : 0, out);
	return rc ? SM_SA_STATUS_NO_RESOURCES : 0;
}

/* The requester may change member m (o15-0.2.1): itself, or for a proxy join one of the partition. */
static bool may_modify(const struct mcr *r, const struct sm_sa_mcg *g, const struct sm_sa_mcm *m)
{
	if (!m)
		return true;
	if (!m->proxy)
		return r->req_port != SM_NONE && r->e.f->ports[r->req_port].guid == m->guid;
	return member_of(r, r->req_port, sm_sa_get16(g->rec + 40)) != SM_PART_NONE;
}

/* The answer to a Set/Delete: the group's record as member guid has it now. */
static int answer(struct mcr *r, const struct sm_sa_req *req, struct sm_sa_ans *ans, const uint8_t *grec,
		  uint8_t join, bool proxy)
{
	uint8_t rec[SM_SA_MCMEMBER_REC_SIZE];

	memcpy(rec, grec, sizeof(rec));
	memcpy(rec + 16, r->q + 16, 16);   /* PortGID as asked (its prefix too) */
	rec[48] = (uint8_t)((rec[48] & 0xF0) | (join & 0xF));
	rec[49] = proxy ? 0x80 : 0;
	rec[38] = (uint8_t)(2 << 6 | (rec[38] & 0x3F));
	rec[42] = (uint8_t)(2 << 6 | (rec[42] & 0x3F));
	rec[43] = (uint8_t)(2 << 6 | (rec[43] & 0x3F));
	return sm_sa_emit_rc(sm_sa_emit(ans, req, rec));
}

static uint16_t join(struct mcr *r, const struct sm_sa_req *req, struct sm_sa_ans *ans, int *rc)
{
	struct sm_sa_mcg *g;
	bool created = false, proxy = r->port != r->req_port;
	uint16_t st;

	if (proxy && !share_pkey(r, r->port, r->req_port))
		return SM_SA_STATUS_REQ_INVALID;
	if (cm(r, CM_PKEY) && !(sm_sa_get16(r->q + 40) & 0x7FFF))
		return SM_SA_STATUS_REQ_INVALID;
	g = sm_sa_mc_find(r->d, r->q);
	if (!g) {
		if ((st = create(r, &g)))
			return st;
		created = true;
	} else if (!other_fields_ok(r, g->rec)) {
		return SM_SA_STATUS_REQ_INVALID;
	}
	st = SM_SA_STATUS_REQ_INVALID;
	struct sm_sa_mcm *m = sm_sa_mc_member(g, r->guid);
	if (!r->join || !selectors_ok(r, g->rec) || !port_carries(r, r->port, g->rec) ||
	    member_of(r, r->port, sm_sa_get16(g->rec + 40)) == SM_PART_NONE || !may_modify(r, g, m))
		goto undo;
	if (m)
		proxy = m->proxy;
	int jrc = sm_sa_mc_join(r->d, g, r->guid, r->join, proxy);
	if (jrc) {
		st = SM_SA_STATUS_NO_RESOURCES;
		goto undo;
	}
	m = sm_sa_mc_member(g, r->guid);
	*rc = answer(r, req, ans, g->rec, m->join, m->proxy);
	return 0;
undo:
	if (created)
		sm_sa_mc_drop(r->d, g);
	return st;
}

static uint16_t leave(struct mcr *r, const struct sm_sa_req *req, struct sm_sa_ans *ans, int *rc)
{
	struct sm_sa_mcg *g = sm_sa_mc_find(r->d, r->q);
	struct sm_sa_mcm *m = g ? sm_sa_mc_member(g, r->guid) : NULL;
	uint8_t grec[SM_SA_MCMEMBER_REC_SIZE], left;

	/* o15-0.1.14: a member, some of its bits and none it does not have, asked by itself (or its partition) */
	if (!m || !(r->join & m->join) || (r->join & ~m->join) || !may_modify(r, g, m))
		return SM_SA_STATUS_REQ_INVALID;
	bool proxy = m->proxy;
	/* answered with the request's record, JoinState as left and the group's scope (as OpenSM) */
	memcpy(grec, r->q, sizeof(grec));
	grec[48] = g->rec[48];
	sm_sa_mc_leave(r->d, g, r->guid, r->join, &left);
	*rc = answer(r, req, ans, grec, left, proxy);
	return 0;
}

/* ---- queries ---- */

static int query(struct mcr *r, const struct sm_sa_req *req, struct sm_sa_ans *ans)
{
	bool trusted = sm_sa_trusted(r->ctx, req);
	uint8_t mask = (uint8_t)((cm(r, CM_SCOPE) ? 0xF0 : 0) | (cm(r, CM_JOIN_STATE) ? 0x0F : 0));
	uint8_t rec[SM_SA_MCMEMBER_REC_SIZE];

	if (r->req_port == SM_NONE)
		return 0;   /* a requester we do not know sees no group */
	for (size_t i = 0; i < r->d->n_groups; i++) {
		const struct sm_sa_mcg *g = &r->d->groups[i];
		const uint8_t *gr = g->rec;

		if ((cm(r, CM_MGID) && memcmp(r->q, gr, 16)) || (cm(r, CM_MLID) && memcmp(r->q + 36, gr + 36, 2)) ||
		    member_of(r, r->req_port, sm_sa_get16(gr + 40)) == SM_PART_NONE || !other_fields_ok(r, gr) ||
		    (cm(r, CM_PROXY) && (r->q[49] & 0x80)) || !selectors_ok(r, gr))
			continue;
		const struct sm_sa_mcm *one = NULL;
		if (cm(r, CM_PORT_GID) && !(one = sm_sa_mc_member(g, r->guid)))
			continue;
		size_t n = trusted && !one ? g->n : 1;
		for (size_t k = 0; k < n; k++) {
			const struct sm_sa_mcm *m = trusted && !one ? &g->m[k] : one;

			sm_sa_mc_record(g, m, r->prefix, rec);
			if ((rec[48] & mask) != (r->q[48] & mask))
				continue;
			if (!trusted) {
				memset(rec + 16, 0, 16);
				rec[48] &= 0xF0;
				rec[49] = 0;
			}
			int rc = sm_sa_emit(ans, req, rec);
			if (rc)
				return sm_sa_emit_rc(rc);
		}
	}
	return 0;
}

int sm_sa_h_mcmember(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans)
{
	struct mcr r = { .ctx = ctx, .d = ctx->dyn, .q = req->data, .cm = req->hdr.comp_mask };
	bool change = req->hdr.method == SM_SA_SET || req->hdr.method == SM_SA_DELETE;
	uint16_t st;
	int rc = 0;

	if (!r.d || !sm_pr_env_init(ctx, &r.e)) {
		ans->status = r.d ? SM_SA_STATUS_BUSY : SM_SA_STATUS_NO_RESOURCES;
		return 0;
	}
	r.prefix = r.e.prefix;
	r.req_port = sm_pr_port_by_lid(&r.e, req->from.lid);
	r.join = r.q[48] & 0x0F;
	r.guid = sm_sa_gid_guid(r.q + 16);
	if (!codes_ok(&r)) {
		ans->status = SM_SA_STATUS_REQ_INVALID;
		return 0;
	}
	if (!change)
		return query(&r, req, ans);
	if ((r.cm & JOIN_MASK) != JOIN_MASK) {
		ans->status = SM_SA_STATUS_INSUFFICIENT_COMPONENTS;
		return 0;
	}
	uint64_t pfx = sm_sa_gid_prefix(r.q + 16);
	if (pfx != PREFIX_DEFAULT && pfx != r.prefix) {
		ans->status = SM_SA_STATUS_INVALID_GID;
		return 0;
	}
	r.port = sm_fabric_find_port(r.e.f, r.guid);
	/* the port joining is a CA or router port in service in this plane; the requester one we know */
	if (r.req_port == SM_NONE || r.port == SM_NONE || r.port >= r.e.f->n_ports || !r.guid ||
	    r.e.f->nodes[r.e.f->ports[r.port].node].plane != r.e.plane || !sm_port_lid(r.e.f, r.port)) {
		ans->status = SM_SA_STATUS_REQ_INVALID;
		return 0;
	}
	st = req->hdr.method == SM_SA_SET ? join(&r, req, ans, &rc) : leave(&r, req, ans, &rc);
	if (st)
		ans->status = st;
	return rc;
}
