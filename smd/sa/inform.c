/* SPDX-License-Identifier: MIT */
/*
 * DOC: InformInfo Set (subscribe/unsubscribe) and InformInfoRecord
 * Get/GetTable (IBA 13.4.8.3, 15.2.5.12). Rules in dyn.h; the Reports
 * themselves are sent and retried by the server.
 * InformInfo: GID 0, LIDRangeBegin 16, LIDRangeEnd 18, IsGeneric 22,
 * Subscribe 23, Type 24, TrapNumber/DeviceID 26, QPN(24)|RespTime(5) 28,
 * ProducerType/VendorID 33 (36 bytes). InformInfoRecord: SubscriberGID 0,
 * Enum 16, InformInfo 24 (80 bytes).
 */
#include "sa/dyn.h"
#include "sa/handlers.h"
#include "sa/records.h"

#include <string.h>

#define II_SIZE 36
#define II_QPN_OFF 28
#define SM_TRAP_SECURITY_FIRST 256   /* bad M_Key .. bad switch P_Key: security traps */
#define SM_TRAP_SECURITY_LAST 259

static const struct sm_sa_field iir_fields[] = {
	SM_SA_F(0, 0, 0, 128),   /* SubscriberGID */
	SM_SA_F(1, 16, 0, 16),   /* Enum */
};

/* Same subscription: subscriber, its QP, and every InformInfo field but Subscribe and QPN/RespTime. */
static struct sm_sa_sub *find_sub(struct sm_sa_dyn *d, const uint8_t gid[16], uint32_t qpn, const uint8_t *info)
{
	for (size_t i = 0; i < d->n_subs; i++) {
		struct sm_sa_sub *s = &d->subs[i];

		if (!memcmp(s->gid, gid, 16) && s->to.qpn == qpn && !memcmp(s->info, info, 23) &&
		    !memcmp(s->info + 24, info + 24, 4) && !memcmp(s->info + 32, info + 32, 4))
			return s;
	}
	return NULL;
}

int sm_sa_h_inform_info(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans)
{
	struct sm_sa_dyn *d = ctx->dyn;
	uint8_t info[SM_SA_INFORM_INFO_SIZE] = { 0 }, gid[16];
	uint16_t trap;

	if (!d) {
		ans->status = SM_SA_STATUS_NO_RESOURCES;
		return 0;
	}
	memcpy(info, req->data, II_SIZE);
	trap = sm_sa_get16(info + 26);
	if (info[23] > 1) {
		ans->status = SM_SA_STATUS_REQ_INVALID;   /* Subscribe values above 1 are undefined */
		return 0;
	}
	/* C15-0.2-1.16: security traps only for a trusted requester (OpenSM: REQ_INVALID) */
	if (info[22] && trap >= SM_TRAP_SECURITY_FIRST && trap <= SM_TRAP_SECURITY_LAST && !sm_sa_trusted(ctx, req)) {
		ans->status = SM_SA_STATUS_REQ_INVALID;
		return 0;
	}
	if (req->from.grh)
		memcpy(gid, req->from.gid, 16);
	else
		sm_sa_snap_gid_of_lid(ctx->snap, req->from.lid, gid);
	if (!sm_sa_gid_guid(gid)) {
		ans->status = SM_SA_STATUS_REQ_INVALID;   /* a requester we do not know */
		return 0;
	}
	struct sm_sa_sub *s = find_sub(d, gid, req->from.qpn, info);

	if (info[23]) {
		/* the QPN Reports go to is the requester's QP (kept in the answer, o13-13.1.1) */
		sm_sa_put32(info + II_QPN_OFF, (req->from.qpn & 0xFFFFFF) << 8 | (info[31] & 0x1F));
		if (!s) {
			if (d->n_subs >= d->lim.max_subs) {
				ans->status = SM_SA_STATUS_NO_RESOURCES;
				return 0;
			}
			s = &d->subs[d->n_subs++];
			s->id = ++d->next_sub_id;
		}
		memcpy(s->gid, gid, 16);
		memcpy(s->info, info, sizeof(info));
		s->to = req->from;
		s->to.qkey = SM_SA_QKEY;
	} else {
		if (!s) {
			ans->status = SM_SA_STATUS_REQ_INVALID;   /* no such subscription (as OpenSM) */
			return 0;
		}
		*s = d->subs[--d->n_subs];
	}
	return sm_sa_emit_rc(sm_sa_emit(ans, req, info));
}

int sm_sa_h_inform_info_record(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans)
{
	const struct sm_sa_dyn *d = ctx->dyn;
	bool trusted = sm_sa_trusted(ctx, req);

	for (size_t i = 0; d && i < d->n_subs; i++) {
		uint8_t rec[SM_SA_INFORM_REC_SIZE] = { 0 };

		memcpy(rec, d->subs[i].gid, 16);
		memcpy(rec + 24, d->subs[i].info, II_SIZE);
		if (!sm_sa_match(iir_fields, 2, req->hdr.comp_mask, req->data, rec))
			continue;
		if (!trusted)
			sm_sa_put32(rec + 24 + II_QPN_OFF, sm_sa_get32(rec + 24 + II_QPN_OFF) & 0x1F);   /* QPN: trusted only */
		int rc = sm_sa_emit(ans, req, rec);

		if (rc)
			return sm_sa_emit_rc(rc);
	}
	return 0;
}
