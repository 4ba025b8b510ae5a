/* SPDX-License-Identifier: MIT */
/*
 * DOC: handlers of the SA's static records (handlers.h), part 1:
 * ClassPortInfo, NodeRecord, PortInfoRecord, LinkRecord, SwitchInfoRecord,
 * SMInfoRecord. The tables (LFT, MFT, GUIDInfo, P_Key, SL2VL, VLArb) are in
 * static_tables.c.
 *
 * Every answer comes from the snapshot of the last sweep (ctx->snap): the
 * fabric with its LIDs, and the NodeInfo, SwitchInfo and PortInfo the sweep
 * read (snapshot.h). Records are produced in LID order (handlers.h, struct
 * sm_sa_walk; OpenSM walks its node table, on x86 in the order of the node
 * GUIDs' bytes reversed). A request that names a
 * LID, a node GUID or a port GUID is answered by an O(1) lookup; only a
 * request that names none of them walks the plane.
 *
 * Where OpenSM checks that the requester shares a partition with the port
 * described, we do not: until partitions exist every port is in the
 * default partition. Secrets: a PortInfoRecord's M_Key and an
 * SMInfoRecord's SM_Key are 0 unless the requester is trusted (it sent our
 * SM_Key), and a component mask on them compares what the requester sees.
 */
#include "sa/handlers.h"
#include "sa/records.h"
#include "mad/codec.h"
#include "model/lfts.h"

#include <string.h>

#define SA_DEFAULT_RESP_TIME 16   /* OpenSM's with its default 200 ms transaction timeout */

/*
 * ClassPortInfo: OpenSM's capability bits minus what we do not serve:
 * Get/Set(Notice), alias GUIDs (GUIDInfo Set), MulticastFDBTop, and until
 * the multicast issue multicast ServiceRecords and send-only full members.
 * UD multicast and MultiPathRecord are advertised when their attributes
 * are served (MCMemberRecord, MultiPathRecord in the dispatcher's table).
 * No redirection: RedirectQP 1 and the QP1 Q_Key, as OpenSM answers.
 */
int sm_sa_h_class_port_info(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans)
{
	uint8_t rec[SM_SA_CPI_SIZE];
	struct sm_sa_cpi c = {
		.cap_mask = (uint16_t)(SM_SA_CAP_PI_CAPMASK_MATCH |
				       (sm_sa_served(SM_SA_ATTR_MCMEMBER_RECORD) ? SM_SA_CAP_UD_MCAST : 0) |
				       (sm_sa_served(SM_SA_ATTR_MULTIPATH_RECORD) ? SM_SA_CAP_MULTIPATH : 0)),
		.cap_mask2 = SM_SA_CAP2_FULL_PORTINFO_REC | SM_SA_CAP2_EXT_SPEEDS | SM_SA_CAP2_PI_CAPMASK2_MATCH |
			     SM_SA_CAP2_LINK_WIDTH_2X | SM_SA_CAP2_LINK_SPEED_HDR,
		.resp_time_value = ctx->self && ctx->self->resp_time_value ? ctx->self->resp_time_value
									 : SA_DEFAULT_RESP_TIME,
		.redir_qp = 1,
		.redir_qkey = SM_SA_QKEY,
		.trap_qkey = SM_SA_QKEY,
	};
	sm_sa_cpi_encode(&c, rec);
	return sm_sa_emit_rc(sm_sa_emit(ans, req, rec));
}


bool sm_sa_port_known(const struct sm_snapshot *s, uint32_t n, unsigned p)
{
	const struct sm_fabric *f = s->fabric;
	const struct sm_node *nd = &f->nodes[n];
	if (p > nd->nports)
		return false;
	uint32_t idx = nd->port0 + p;
	if (nd->type != SM_NODE_SWITCH && (p == 0 || !f->ports[idx].guid))
		return false;
	return !s->pi || sm_sa_pi(s, idx) != NULL;
}

void sm_sa_walk_init(struct sm_sa_walk *w, const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, int lid_bit)
{
	*w = (struct sm_sa_walk){ .s = ctx->snap, .f = ctx->snap->fabric, .q = req->data,
				  .mask = req->hdr.comp_mask, .n = SM_NONE, .last = ctx->snap->fabric->n_nodes,
				  .lid_next = 1 };
	if (lid_bit >= 0 && sm_sa_cm(w->mask, (unsigned)lid_bit))
		sm_sa_walk_lid(w, sm_sa_get16(w->q));
}

void sm_sa_walk_lid(struct sm_sa_walk *w, uint16_t lid)
{
	uint32_t idx = sm_sa_port_by_lid(w->s, lid);
	w->by_lid = true;
	w->lid = lid;
	sm_sa_walk_node(w, idx == SM_NONE ? SM_NONE : w->f->ports[idx].node);
}

void sm_sa_walk_node(struct sm_sa_walk *w, uint32_t n)
{
	w->next = n == SM_NONE ? 0 : n;
	w->last = n == SM_NONE ? 0 : n + 1;
	w->lid_next = 0;
}

/* Node n's lowest base LID (switch: port 0's; CA/router: its ports'), 0 when it has none. */
static uint16_t first_lid(const struct sm_fabric *f, uint32_t n)
{
	const struct sm_node *nd = &f->nodes[n];
	if (nd->type == SM_NODE_SWITCH)
		return f->ports[nd->port0].lid;
	uint16_t low = 0;
	for (unsigned p = 1; p <= nd->nports; p++) {
		uint16_t l = f->ports[nd->port0 + p].lid;
		if (l && (!low || l < low))
			low = l;
	}
	return low;
}

const struct sm_node *sm_sa_walk_next(struct sm_sa_walk *w)
{
	const struct sm_plane *pl = w->s->plane < w->f->n_planes ? &w->f->planes[w->s->plane] : NULL;

	/* a whole-plane walk: the LIDs in order first (the plane's map holds only its own ports) */
	while (w->lid_next && pl && pl->lid_map && w->lid_next <= pl->max_lid) {
		uint16_t lid = (uint16_t)w->lid_next++;
		uint32_t p = pl->lid_map[lid];
		if (p >= w->f->n_ports || w->f->ports[p].lid != lid || first_lid(w->f, w->f->ports[p].node) != lid)
			continue;
		w->n = w->f->ports[p].node;
		return &w->f->nodes[w->n];
	}
	bool rest = w->lid_next != 0;   /* then the nodes the LIDs did not reach */
	while (w->next < w->last) {
		w->n = w->next++;
		if (w->f->nodes[w->n].plane == w->s->plane && (!rest || !first_lid(w->f, w->n)))
			return &w->f->nodes[w->n];
	}
	return NULL;
}

/* NodeInfo of node n as the sweep read it, or as the fabric model has it. */
static void node_info(const struct sm_snapshot *s, uint32_t n, struct sm_node_info *ni)
{
	const struct sm_node *nd = &s->fabric->nodes[n];
	if (s->ni && n < s->attr_nodes && s->ni[n].node_guid == nd->guid) {
		*ni = s->ni[n];
		return;
	}
	*ni = (struct sm_node_info){
		.base_version = 1, .class_version = 1, .node_type = nd->type, .num_ports = nd->nports,
		.sys_guid = nd->sysimg_guid, .node_guid = nd->guid, .device_id = nd->device_id,
		.revision = nd->revision, .vendor_id = nd->vendor_id,
	};
}

/* The LID range of the port that carries node n's port p: base LID and LMC. */
static uint16_t lid_range(const struct sm_fabric *f, uint32_t n, unsigned p, uint8_t *lmc)
{
	const struct sm_port *pt = sm_sa_lid_port(f, n, p);
	*lmc = pt->lmc;
	return pt->lid;
}

/*
 * NodeRecord: one per CA port and one per switch (port 0), LID = the
 * port's base LID, NodeInfo with that port's GUID and number, as OpenSM
 * answers. NodeDescription compares as a string (up to its first NUL).
 */
int sm_sa_h_node(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans)
{
	struct sm_sa_walk w;
	uint8_t rec[SM_SA_NODE_REC_SIZE];

	sm_sa_walk_init(&w, ctx, req, SM_SA_NR_LID);
	const struct sm_fabric *f = w.f;
	const uint8_t *q = w.q;
	if (!w.by_lid && sm_sa_cm(w.mask, SM_SA_NR_NODEGUID)) {
		sm_sa_walk_node(&w, sm_fabric_find_node(f, sm_sa_get64(q + 4 + 12)));
	} else if (!w.by_lid && sm_sa_cm(w.mask, SM_SA_NR_PORTGUID)) {
		uint32_t idx = sm_fabric_find_port(f, sm_sa_get64(q + 4 + 20));
		sm_sa_walk_node(&w, idx == SM_NONE ? SM_NONE : f->ports[idx].node);
	}
	for (const struct sm_node *nd; (nd = sm_sa_walk_next(&w));) {
		uint32_t n = w.n;
		struct sm_node_info ni;
		node_info(w.s, n, &ni);
		unsigned p0 = nd->type == SM_NODE_SWITCH ? 0 : 1, p1 = nd->type == SM_NODE_SWITCH ? 0 : nd->nports;
		for (unsigned p = p0; p <= p1; p++) {
			if (!sm_sa_port_known(w.s, n, p))
				continue;
			uint8_t lmc;
			uint16_t base = lid_range(f, n, p, &lmc);
			if (w.by_lid && !sm_sa_lid_in(w.lid, base, lmc))
				continue;
			ni.port_guid = f->ports[nd->port0 + p].guid;
			ni.local_port_num = (uint8_t)p;
			sm_sa_node_rec_encode(rec, base, &ni, nd->desc);
			if (!sm_sa_match(sm_sa_node_fields, sm_sa_node_nfields, w.mask, q, rec))
				continue;
			if (sm_sa_cm(w.mask, SM_SA_NR_DESC) && strncmp((const char *)q + 44, (const char *)rec + 44, 64))
				continue;
			int rc = sm_sa_emit(ans, req, rec);
			if (rc)
				return sm_sa_emit_rc(rc);
		}
	}
	return 0;
}

/* PortInfo of port p of node n: as read, else what the fabric model knows. */
static void port_info(const struct sm_snapshot *s, uint32_t n, unsigned p, struct sm_port_info *pi)
{
	const struct sm_fabric *f = s->fabric;
	uint32_t idx = f->nodes[n].port0 + p;
	const struct sm_port_info *r = sm_sa_pi(s, idx);
	if (r) {
		*pi = *r;
		return;
	}
	const struct sm_port *pt = &f->ports[idx];
	const struct sm_port *lp = sm_sa_lid_port(f, n, p);
	memset(pi, 0, sizeof(*pi));
	pi->gid_prefix = s->subnet_prefix;
	pi->lid = lp->lid;
	pi->lmc = lp->lmc;
	pi->master_sm_lid = s->sm_lid;
	pi->local_port_num = (uint8_t)p;
	pi->port_state = pt->state;
	pi->phys_state = pt->phys_state;
	pi->link_width_active = pt->width;
	if (pt->flags & SM_PORT_F_EXT_SPEED)
		pi->link_speed_ext_active = pt->speed;
	else
		pi->link_speed_active = pt->speed;
}

/* CapabilityMask(2) under the enhanced mask (attribute modifier bit 31): every wanted bit set. */
static bool cap_ok(bool enhanced, uint32_t want, uint32_t have)
{
	return enhanced ? (want & have) == want : want == have;
}

/* The PortInfoRecord components compared by hand (see records.h). */
static bool pir_special_ok(const struct sm_sa_req *req, const uint8_t *cand, uint32_t ext_cap)
{
	const uint8_t *q = req->data;
	uint64_t mask = req->hdr.comp_mask;
	bool enh = req->hdr.attr_mod & 0x80000000u;
	if (sm_sa_cm(mask, SM_SA_PIR_CAPMASK) && !cap_ok(enh, sm_sa_get32(q + 24), sm_sa_get32(cand + 24)))
		return false;
	if (sm_sa_cm(mask, SM_SA_PIR_CAPMASK2) && !cap_ok(enh, sm_sa_get16(q + 64), sm_sa_get16(cand + 64)))
		return false;
	if (!(ext_cap & SM_SA_PI_CAP_HAS_EXT_SPEEDS))
		return true;   /* the LinkSpeedExt fields mean nothing on this port: not compared (as OpenSM) */
	if (sm_sa_cm(mask, SM_SA_PIR_SPDEXTACT) && (q[66] >> 4) != (cand[66] >> 4))
		return false;
	if (sm_sa_cm(mask, SM_SA_PIR_SPDEXTSUP) && (q[66] & 0xf) != (cand[66] & 0xf))
		return false;
	return !sm_sa_cm(mask, SM_SA_PIR_SPDEXTENA) || (q[67] & 0x1f) == (cand[67] & 0x1f);
}

/*
 * PortInfoRecord: every port of a switch (0..N) and every CA port the
 * sweep reached, LID = the node's base LID (a switch's port 0 LID), as
 * OpenSM answers; with a LID in the mask only the node holding that LID.
 * Unless the request sets Options bit 7, a port running an extended speed
 * also shows QDR (0x4) in LinkSpeedSupported/Enabled/Active, as OpenSM does
 * for old clients.
 */
int sm_sa_h_portinfo(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans)
{
	struct sm_sa_walk w;
	sm_sa_walk_init(&w, ctx, req, -1);
	const struct sm_snapshot *s = w.s;
	const struct sm_fabric *f = w.f;
	const uint8_t *q = w.q;
	uint64_t mask = w.mask;
	bool trusted = sm_sa_trusted(ctx, req);
	uint16_t want_lid = sm_sa_get16(q);
	uint8_t options = sm_sa_cm(mask, SM_SA_PIR_OPTIONS) ? q[3] : 0;
	uint64_t plain = mask & ~((1ull << SM_SA_PIR_CAPMASK) | (1ull << SM_SA_PIR_CAPMASK2) |
				  (1ull << SM_SA_PIR_SPDEXTACT) | (1ull << SM_SA_PIR_SPDEXTSUP) |
				  (1ull << SM_SA_PIR_SPDEXTENA));
	uint8_t rec[SM_SA_PORTINFO_REC_SIZE];

	if (sm_sa_cm(mask, SM_SA_PIR_LID) || sm_sa_cm(mask, SM_SA_PIR_BASELID))
		sm_sa_walk_lid(&w, want_lid);   /* OpenSM looks the node up by the record's LID for either bit */
	for (const struct sm_node *nd; (nd = sm_sa_walk_next(&w));) {
		uint32_t n = w.n;
		bool sw = nd->type == SM_NODE_SWITCH;
		unsigned p0 = 0, p1 = nd->nports;
		if (sm_sa_cm(mask, SM_SA_PIR_PORTNUM))
			p0 = p1 = q[2];
		struct sm_port_info pi0;
		port_info(s, n, 0, &pi0);
		for (unsigned p = p0; p <= p1; p++) {
			if (!sm_sa_port_known(s, n, p))
				continue;
			uint8_t lmc;
			uint16_t base = lid_range(f, n, p, &lmc);
			if (sw && !(nd->flags & SM_NODE_F_ENHANCED_SP0))
				lmc = 0;
			if (sm_sa_cm(mask, SM_SA_PIR_LID) && !sm_sa_lid_in(want_lid, base, lmc))
				continue;
			struct sm_port_info pi;
			port_info(s, n, p, &pi);
			if (!trusted)
				pi.mkey = 0;
			sm_sa_portinfo_rec_encode(rec, base, (uint8_t)p, options, &pi);
			uint32_t ext_cap = sw ? pi0.cap_mask : pi.cap_mask;
			if (!sm_sa_match(sm_sa_portinfo_fields, sm_sa_portinfo_nfields, plain, q, rec) ||
			    !pir_special_ok(req, rec, ext_cap))
				continue;
			if (!(options & 0x80) && (ext_cap & SM_SA_PI_CAP_HAS_EXT_SPEEDS) && pi.link_speed_ext_active) {
				pi.link_speed_supported |= 4;
				pi.link_speed_enabled |= 4;
				pi.link_speed_active |= 4;
				sm_sa_portinfo_rec_encode(rec, base, (uint8_t)p, options, &pi);
			}
			int rc = sm_sa_emit(ans, req, rec);
			if (rc)
				return sm_sa_emit_rc(rc);
		}
	}
	return 0;
}

/* Base LID of the node at the end of a link (its switch port 0 or its CA port) and its LMC. */
static uint16_t end_lid(const struct sm_fabric *f, uint32_t n, unsigned p, uint16_t *lmc_mask)
{
	uint8_t lmc;
	uint16_t base = lid_range(f, n, p, &lmc);
	*lmc_mask = (uint16_t)~((1u << lmc) - 1);
	return base;
}

/*
 * LinkRecord: one per direction of every link (from each connected port
 * 1..N to its peer), LIDs = the nodes' base LIDs; a requested LID matches
 * any LID of the node's LMC range. Narrowed by FromLID, else by ToLID.
 */
int sm_sa_h_link(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans)
{
	struct sm_sa_walk w;
	uint8_t rec[SM_SA_LINK_REC_SIZE];

	sm_sa_walk_init(&w, ctx, req, SM_SA_LR_FROM_LID);
	const struct sm_fabric *f = w.f;
	const uint8_t *q = w.q;
	uint64_t mask = w.mask;
	uint16_t from_lid = sm_sa_get16(q), to_lid = sm_sa_get16(q + 4);
	bool by_from = sm_sa_cm(mask, SM_SA_LR_FROM_LID), by_to = sm_sa_cm(mask, SM_SA_LR_TO_LID);
	bool reverse = !by_from && by_to;   /* walk the ToLID's node and its peers */
	if (reverse)
		sm_sa_walk_lid(&w, to_lid);
	for (const struct sm_node *nd; (nd = sm_sa_walk_next(&w));) {
		uint32_t n = w.n;
		for (unsigned p = 1; p <= nd->nports; p++) {
			const struct sm_port *pt = &f->ports[nd->port0 + p];
			if (pt->peer_node == SM_NONE)
				continue;
			uint32_t a = n, b = pt->peer_node;
			unsigned pa = p, pb = pt->peer_port;
			if (reverse) {
				a = pt->peer_node;
				b = n;
				pa = pt->peer_port;
				pb = p;
			}
			uint16_t ma, mb, la = end_lid(f, a, pa, &ma), lb = end_lid(f, b, pb, &mb);
			if ((sm_sa_cm(mask, SM_SA_LR_FROM_PORT) && q[2] != pa) ||
			    (sm_sa_cm(mask, SM_SA_LR_TO_PORT) && q[3] != pb) || (by_from && la != (from_lid & ma)) ||
			    (by_to && lb != (to_lid & mb)))
				continue;
			sm_sa_link_rec_encode(rec, la, (uint8_t)pa, (uint8_t)pb, lb);
			int rc = sm_sa_emit(ans, req, rec);
			if (rc)
				return sm_sa_emit_rc(rc);
		}
	}
	return 0;
}

/* SwitchInfo of switch n as read, else what the fabric model and the LFTs know. */
static void switch_info(const struct sm_snapshot *s, uint32_t n, struct sm_switch_info *si)
{
	if (s->si && n < s->attr_nodes && s->si_ok[n]) {
		*si = s->si[n];
		return;
	}
	memset(si, 0, sizeof(*si));
	si->lft_cap = s->fabric->nodes[n].lft_cap;
	si->lft_top = s->lfts ? s->lfts->top_lid : 0;
	si->enhanced_port0 = !!(s->fabric->nodes[n].flags & SM_NODE_F_ENHANCED_SP0);
}

/* SwitchInfoRecord: one per switch; only the LID is compared, as OpenSM (a LID of 0 matches nothing). */
int sm_sa_h_switchinfo(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans)
{
	struct sm_sa_walk w;
	uint8_t rec[SM_SA_SWITCHINFO_REC_SIZE];

	sm_sa_walk_init(&w, ctx, req, SM_SA_SWIR_LID);
	for (const struct sm_node *nd; (nd = sm_sa_walk_next(&w));) {
		if (nd->type != SM_NODE_SWITCH)
			continue;
		const struct sm_port *p0 = &w.f->ports[nd->port0];
		if (w.by_lid && !sm_sa_lid_in(w.lid, p0->lid, p0->lmc))
			continue;
		struct sm_switch_info si;
		switch_info(w.s, w.n, &si);
		sm_sa_switchinfo_rec_encode(rec, p0->lid, &si);
		int rc = sm_sa_emit(ans, req, rec);
		if (rc)
			return sm_sa_emit_rc(rc);
	}
	return 0;
}

/* One SM's record at port idx (SM_NONE: not in the snapshot, at `lid`): sm_sa_emit's result, 0 if not taken. */
static int sminfo_one(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, uint32_t idx, uint16_t lid,
		      const struct sm_sa_peer *p, struct sm_sa_ans *ans)
{
	const struct sm_snapshot *s = ctx->snap;
	const struct sm_fabric *f = s->fabric;
	uint8_t rec[SM_SA_SMINFO_REC_SIZE];
	uint16_t want_lid = 0;

	if (idx != SM_NONE)
		lid = sm_sa_lid_port(f, f->ports[idx].node, f->ports[idx].num)->lid;
	if (sm_sa_want_lid(req->hdr.comp_mask, SM_SA_SMIR_LID, req->data, 0, &want_lid)) {
		uint32_t at = sm_sa_port_by_lid(s, want_lid);
		if (at == SM_NONE || (idx != SM_NONE ? at != idx : want_lid != lid))
			return 0;
	}
	sm_sa_sminfo_rec_encode(rec, lid, idx != SM_NONE ? f->ports[idx].guid : p->port_guid,
				sm_sa_trusted(ctx, req) ? p->sm_key : 0, p->act_count, p->priority, p->state);
	if (!sm_sa_match(sm_sa_sminfo_fields, sm_sa_sminfo_nfields, req->hdr.comp_mask, req->data, rec))
		return 0;
	return sm_sa_emit(ans, req, rec);
}

/*
 * SMInfoRecord: this SM (ctx->self) at its port's LID, then every other
 * SM the election knows (self->peers) whose port is in the snapshot's
 * plane, as OpenSM lists its own and its table of remote SMs. Our port is
 * the one the snapshot names (sm_port: the port the sweep started from),
 * else the one with self->port_guid. A peer's state, priority and act
 * count are those of its last SMInfo read; a peer whose port left the
 * plane is not listed. The SM_Key is shown to a trusted requester only
 * (OpenSM never shows it).
 */
int sm_sa_h_sminfo(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans)
{
	const struct sm_snapshot *s = ctx->snap;
	const struct sm_fabric *f = s->fabric;
	const struct sm_sa_self *me = ctx->self;
	if (!me)
		return 0;
	uint32_t idx = s->sm_port < f->n_ports && f->ports[s->sm_port].guid ? s->sm_port
									  : sm_fabric_find_port(f, me->port_guid);
	struct sm_sa_peer mine = { .port_guid = me->port_guid, .sm_key = me->sm_key, .act_count = me->act_count,
				   .priority = me->priority, .state = me->state };
	int rc = sminfo_one(ctx, req, idx, s->sm_lid, &mine, ans);
	for (unsigned i = 0; !rc && i < me->n_peers && i < SM_SA_MAX_PEERS; i++) {
		const struct sm_sa_peer *p = &me->peers[i];
		uint32_t at = sm_fabric_find_port(f, p->port_guid);
		if (at == SM_NONE || at == idx || p->port_guid == me->port_guid ||
		    f->nodes[f->ports[at].node].plane != s->plane)
			continue;
		rc = sminfo_one(ctx, req, at, p->lid, p, ans);
	}
	return sm_sa_emit_rc(rc);
}
