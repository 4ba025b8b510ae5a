/* SPDX-License-Identifier: MIT */
/*
 * DOC: ServiceRecord (IBA 15.2.5.14): Get/GetTable under the component
 * mask, Set (register or renew, with a lease), Delete. Rules in dyn.h.
 * Layout: ServiceID 0, ServiceGID 8, ServiceP_Key 24, ServiceLease 28,
 * ServiceKey 32, ServiceName 48, ServiceData8 112, Data16 128, Data32 144,
 * Data64 160 (176 bytes).
 */
#include "sa/dyn.h"
#include "sa/handlers.h"
#include "sa/records.h"

#include <string.h>

#define SR_CM_SID 0
#define SR_CM_SGID 1
#define SR_CM_SPKEY 2
#define SR_CM_SLEASE 4
#define SR_KEY_OFF 32

static const struct sm_sa_field sr_fields[] = {
	SM_SA_F(0, 0, 0, 64), SM_SA_F(1, 8, 0, 128), SM_SA_F(2, 24, 0, 16), SM_SA_F(4, 28, 0, 32),
	SM_SA_F(5, 32, 0, 128), SM_SA_F(6, 48, 0, 512),
	/* ServiceData8[0..15]: bits 7-22 */
	SM_SA_F(7, 112, 0, 8), SM_SA_F(8, 113, 0, 8), SM_SA_F(9, 114, 0, 8), SM_SA_F(10, 115, 0, 8),
	SM_SA_F(11, 116, 0, 8), SM_SA_F(12, 117, 0, 8), SM_SA_F(13, 118, 0, 8), SM_SA_F(14, 119, 0, 8),
	SM_SA_F(15, 120, 0, 8), SM_SA_F(16, 121, 0, 8), SM_SA_F(17, 122, 0, 8), SM_SA_F(18, 123, 0, 8),
	SM_SA_F(19, 124, 0, 8), SM_SA_F(20, 125, 0, 8), SM_SA_F(21, 126, 0, 8), SM_SA_F(22, 127, 0, 8),
	/* ServiceData16[0..7]: bits 23-30 */
	SM_SA_F(23, 128, 0, 16), SM_SA_F(24, 130, 0, 16), SM_SA_F(25, 132, 0, 16), SM_SA_F(26, 134, 0, 16),
	SM_SA_F(27, 136, 0, 16), SM_SA_F(28, 138, 0, 16), SM_SA_F(29, 140, 0, 16), SM_SA_F(30, 142, 0, 16),
	/* ServiceData32[0..3]: bits 31-34; ServiceData64[0..1]: bits 35-36 */
	SM_SA_F(31, 144, 0, 32), SM_SA_F(32, 148, 0, 32), SM_SA_F(33, 152, 0, 32), SM_SA_F(34, 156, 0, 32),
	SM_SA_F(35, 160, 0, 64), SM_SA_F(36, 168, 0, 64),
};

/* The identity of a record: ServiceID, ServiceGID, ServiceP_Key (OpenSM's osm_svcr_get_by_rid). */
static struct sm_sa_svc *find_rid(struct sm_sa_dyn *d, const uint8_t *rec)
{
	for (size_t i = 0; i < d->n_svcs; i++)
		if (!memcmp(d->svcs[i].rec, rec, 26))
			return &d->svcs[i];
	return NULL;
}

static int emit_sr(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans,
		   const uint8_t *rec)
{
	uint8_t out[SM_SA_SERVICE_REC_SIZE];

	memcpy(out, rec, sizeof(out));
	if (!sm_sa_trusted(ctx, req))
		memset(out + SR_KEY_OFF, 0, 16);   /* ServiceKey: only to a trusted requester */
	return sm_sa_emit_rc(sm_sa_emit(ans, req, out));
}

/* Who may change the record: a trusted requester, or the port that registered it. */
static bool may_change(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, const struct sm_sa_svc *s)
{
	return sm_sa_trusted(ctx, req) || s->owner_lid == req->from.lid;
}

static int sr_set(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans)
{
	struct sm_sa_dyn *d = ctx->dyn;
	uint64_t cm = req->hdr.comp_mask;
	uint8_t rec[SM_SA_SERVICE_REC_SIZE];
	struct sm_sa_svc *s;

	if (!sm_sa_cm(cm, SR_CM_SID) || !sm_sa_cm(cm, SR_CM_SGID)) {
		ans->status = SM_SA_STATUS_REQ_INVALID;   /* as OpenSM: ServiceID and ServiceGID are required */
		return 0;
	}
	memcpy(rec, req->data, sizeof(rec));
	if (!sm_sa_cm(cm, SR_CM_SLEASE))
		sm_sa_put32(rec + 28, SM_SA_LEASE_INFINITE);
	if (!sm_sa_cm(cm, SR_CM_SPKEY))
		sm_sa_put16(rec + 24, 0xFFFF);
	s = find_rid(d, rec);
	if (s && !may_change(ctx, req, s)) {
		ans->status = SM_SA_STATUS_DENIED;
		return 0;
	}
	if (!s) {
		if (d->n_svcs >= d->lim.max_services) {
			ans->status = SM_SA_STATUS_NO_RESOURCES;
			return 0;
		}
		s = &d->svcs[d->n_svcs++];
		s->owner_lid = req->from.lid;
	}
	uint32_t lease = sm_sa_get32(rec + 28);

	memcpy(s->rec, rec, sizeof(rec));
	s->expires_us = lease == SM_SA_LEASE_INFINITE ? 0 : ctx->now_us + (uint64_t)lease * 1000000u;
	if (s->expires_us == 0 && lease != SM_SA_LEASE_INFINITE)
		s->expires_us = 1;   /* lease 0 at time 0: already over */
	return emit_sr(ctx, req, ans, s->rec);
}

static int sr_delete(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans)
{
	struct sm_sa_dyn *d = ctx->dyn;
	uint8_t rec[SM_SA_SERVICE_REC_SIZE], gone[SM_SA_SERVICE_REC_SIZE];
	struct sm_sa_svc *s;

	memcpy(rec, req->data, sizeof(rec));
	if (!sm_sa_cm(req->hdr.comp_mask, SR_CM_SPKEY))
		sm_sa_put16(rec + 24, 0xFFFF);
	s = find_rid(d, rec);
	if (!s) {
		ans->status = SM_SA_STATUS_NO_RECORDS;
		return 0;
	}
	if (!may_change(ctx, req, s)) {
		ans->status = SM_SA_STATUS_DENIED;
		return 0;
	}
	memcpy(gone, s->rec, sizeof(gone));
	*s = d->svcs[--d->n_svcs];
	return emit_sr(ctx, req, ans, gone);
}

int sm_sa_h_service(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans)
{
	struct sm_sa_dyn *d = ctx->dyn;

	if (!d) {
		ans->status = SM_SA_STATUS_NO_RESOURCES;
		return 0;
	}
	sm_sa_dyn_expire(d, ctx->now_us);   /* a lease over is over, whether the timer ran yet or not */
	if (req->hdr.method == SM_SA_SET)
		return sr_set(ctx, req, ans);
	if (req->hdr.method == SM_SA_DELETE)
		return sr_delete(ctx, req, ans);
	for (size_t i = 0; i < d->n_svcs; i++) {
		if (!sm_sa_match(sr_fields, sizeof(sr_fields) / sizeof(sr_fields[0]), req->hdr.comp_mask, req->data,
				 d->svcs[i].rec))
			continue;
		int rc = emit_sr(ctx, req, ans, d->svcs[i].rec);

		if (rc < 0 || ans->status || (req->hdr.method == SM_SA_GET && ans->n > 1))
			return rc;
	}
	return 0;
}
