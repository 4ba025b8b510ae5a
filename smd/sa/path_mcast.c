/* SPDX-License-Identifier: MIT */
/*
 * DOC: PathRecord to a multicast group (a multicast DGID), as OpenSM answers it
 *
 * The group is the one whose MGID is the DGID in the SA's group table
 * (dyn.h, mcgroup.c);
 * there is no path to walk, the answer is the group's own parameters. The
 * request must agree with the group where it names a component: DLID is
 * the MLID, SGID/SLID a member's port, P_Key, SL, FlowLabel, HopLimit and
 * TClass the group's, and a GetTable's NumbPath not 0. The record is the
 * request with DGID = MGID, DLID = MLID, the group's TClass, P_Key, SL,
 * FlowLabel and HopLimit (255 outside link-local scope), MTU, rate and
 * PacketLifeTime under the selector "exactly", NumbPath 1.
 * MCMemberRecord: MGID 0, PortGID 16, MLID 36, MTU 38, TClass 39, P_Key 40,
 * Rate 42, PacketLifeTime 43, SL/FlowLabel/HopLimit 44.
 */
#include "sa/dyn.h"
#include "sa/handlers.h"
#include "sa/path.h"
#include "sa/path_priv.h"

#include <string.h>

/* The record of group mgid (as dyn.h keeps it) if guid is 0 or one of its members, else NULL. */
static const uint8_t *member(const struct sm_sa_dyn *d, const uint8_t mgid[16], uint64_t guid)
{
	const struct sm_sa_mcg *g = sm_sa_mc_find(d, mgid);

	return g && (!guid || sm_sa_mc_member(g, guid)) ? g->rec : NULL;
}

int sm_pr_mcast(const struct sm_sa_ctx *ctx, const struct sm_pr_env *e, const struct sm_sa_req *req,
		struct sm_sa_ans *ans)
{
	const struct sm_sa_dyn *d = ctx->dyn;
	const uint8_t *q = req->data;
	uint64_t cm = req->hdr.comp_mask;
	struct sm_sa_path_rec r;

	sm_sa_path_rec_decode(q, &r);
	const uint8_t *g = d ? member(d, r.dgid, 0) : NULL;
	if (!g)
		return 0;
	uint32_t sfh = sm_sa_get32(g + 44);
	uint8_t sl = (uint8_t)(sfh >> 28), hop = (uint8_t)sfh;
	uint32_t flow = sfh >> 8 & 0xFFFFF;
	if (sm_sa_cm(cm, SM_PR_CM_DLID) && r.dlid != sm_sa_get16(g + 36))
		return 0;
	if (sm_sa_cm(cm, SM_PR_CM_SGID) && !member(d, r.dgid, sm_sa_get64(r.sgid + 8)))
		return 0;
	if (sm_sa_cm(cm, SM_PR_CM_SLID)) {
		uint32_t p = sm_pr_port_by_lid(e, r.slid);
		if (p == SM_NONE || !e->f->ports[p].guid || !member(d, r.dgid, e->f->ports[p].guid))
			return 0;
	}
	if ((sm_sa_cm(cm, SM_PR_CM_PKEY) && r.p.pkey != sm_sa_get16(g + 40)) ||
	    (sm_sa_cm(cm, SM_PR_CM_SL) && r.p.sl != sl) ||
	    (sm_sa_cm(cm, SM_PR_CM_NUMB_PATH) && req->hdr.method != SM_SA_GET && !r.p.numb_path) ||
	    (sm_sa_cm(cm, SM_PR_CM_FLOW_LABEL) && r.p.flow_label != flow) ||
	    (sm_sa_cm(cm, SM_PR_CM_HOP_LIMIT) && r.p.hop_limit != hop) ||
	    (sm_sa_cm(cm, SM_PR_CM_TCLASS) && r.p.tclass != g[39]))
		return 0;
	r.dlid = sm_sa_get16(g + 36);
	r.p = (struct sm_sa_path_parms){
		.flow_label = flow, .hop_limit = (r.dgid[1] & 0xF) == 2 ? hop : 0xFF, .tclass = g[39],
		.numb_path = 1, .pkey = sm_sa_get16(g + 40), .sl = sl,
		.mtu_sel = 2, .mtu = g[38] & 0x3F, .rate_sel = 2, .rate = g[42] & 0x3F, .plt_sel = 2, .plt = g[43] & 0x3F,
	};
	uint8_t rec[SM_SA_PATH_REC_SIZE];
	sm_sa_path_rec_encode(&r, rec);
	return sm_sa_emit_rc(sm_sa_emit(ans, req, rec));
}
