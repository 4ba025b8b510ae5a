/* SPDX-License-Identifier: MIT */
/*
 * DOC: MCMemberRecord (IBA 15.2.5.17) from the group table of dyn.h, which
 * the multicast issue fills. Get/GetTable match under the component mask.
 * Set: a member already in the table is answered with its record (a join
 * repeated); any other join or create is NO_RESOURCES until this SA can
 * program a group (MLID, MFTs). Delete removes the member of that MGID and
 * PortGID, REQ_INVALID when there is none (as OpenSM).
 * Layout: MGID 0, PortGID 16, Q_Key 32, MLID 36, MTU 38, TClass 39,
 * P_Key 40, Rate 42, PacketLifeTime 43, SL/FlowLabel/HopLimit 44,
 * Scope/JoinState 48, ProxyJoin 49 (52 bytes + 4 pad).
 */
#include "sa/dyn.h"
#include "sa/handlers.h"
#include "sa/records.h"

#include <string.h>

static const struct sm_sa_field mcm_fields[] = {
	SM_SA_F(0, 0, 0, 128), SM_SA_F(1, 16, 0, 128), SM_SA_F(2, 32, 0, 32), SM_SA_F(3, 36, 0, 16),
	SM_SA_F(4, 38, 0, 2), SM_SA_F(5, 38, 2, 6), SM_SA_F(6, 39, 0, 8), SM_SA_F(7, 40, 0, 16),
	SM_SA_F(8, 42, 0, 2), SM_SA_F(9, 42, 2, 6), SM_SA_F(10, 43, 0, 2), SM_SA_F(11, 43, 2, 6),
	SM_SA_F(12, 44, 0, 4), SM_SA_F(13, 44, 4, 20), SM_SA_F(14, 47, 0, 8), SM_SA_F(15, 48, 0, 4),
	SM_SA_F(16, 48, 4, 4), SM_SA_F(17, 49, 0, 1),
};

static uint8_t (*find_member(struct sm_sa_dyn *d, const uint8_t *req))[SM_SA_MCMEMBER_REC_SIZE]
{
	for (size_t i = 0; i < d->n_groups; i++)
		if (!memcmp(d->groups[i], req, 32))   /* MGID and PortGID */
			return &d->groups[i];
	return NULL;
}

int sm_sa_h_mcmember(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans)
{
	struct sm_sa_dyn *d = ctx->dyn;

	if (!d) {
		ans->status = SM_SA_STATUS_NO_RESOURCES;
		return 0;
	}
	if (req->hdr.method == SM_SA_SET || req->hdr.method == SM_SA_DELETE) {
		uint8_t (*m)[SM_SA_MCMEMBER_REC_SIZE] = find_member(d, req->data);
		uint8_t rec[SM_SA_MCMEMBER_REC_SIZE];

		if (!m) {
			ans->status = req->hdr.method == SM_SA_SET ? SM_SA_STATUS_NO_RESOURCES : SM_SA_STATUS_REQ_INVALID;
			return 0;
		}
		memcpy(rec, *m, sizeof(rec));
		if (req->hdr.method == SM_SA_DELETE)
			memcpy(*m, d->groups[--d->n_groups], sizeof(rec));
		return sm_sa_emit_rc(sm_sa_emit(ans, req, rec));
	}
	for (size_t i = 0; i < d->n_groups; i++) {
		if (!sm_sa_match(mcm_fields, sizeof(mcm_fields) / sizeof(mcm_fields[0]), req->hdr.comp_mask, req->data,
				 d->groups[i]))
			continue;
		int rc = sm_sa_emit(ans, req, d->groups[i]);

		if (rc)
			return sm_sa_emit_rc(rc);
	}
	return 0;
}
