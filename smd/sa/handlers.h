/* SPDX-License-Identifier: MIT */
#ifndef SMD_SA_HANDLERS_H
#define SMD_SA_HANDLERS_H
/*
 * DOC: the SA's attribute handlers (one per attribute, called by sm_sa_query)
 *
 * When a handler runs, the dispatcher (query.c) has already checked the
 * class version, that the method is allowed for the attribute, the SM_Key
 * rule, that ctx->snap is there (for the attributes that need it) and that
 * req->len holds at least one request record. ans is reset with rec_size set
 * to the attribute's record size. A handler appends matching records with
 * sm_sa_emit() and may set ans->status; the dispatcher then applies the Get
 * rule (0 records NO_RECORDS, more than one TOO_MANY_RECORDS).
 *
 * Handlers of static records are in static.c (this helper's), PathRecord
 * and MultiPathRecord in path.c (sa/path.h), ServiceRecord, InformInfo and
 * MCMemberRecord in service.c/inform.c/mcmember.c (sa/dyn.h).
 */
#include "sa/query.h"

/*
 * Append the record rec (ans->rec_size bytes). 0: go on; 1: stop (the
 * answer is complete: a Get already has two records, or ans->max_records
 * was reached and ans->status is NO_RESOURCES); -ENOMEM.
 */
int sm_sa_emit(struct sm_sa_ans *ans, const struct sm_sa_req *req, const uint8_t *rec);
/* sm_sa_emit's result as a handler's return: 1 (stop) is not an error. */
static inline int sm_sa_emit_rc(int rc)
{
	return rc < 0 ? rc : 0;
}

/* The requester may see secrets (M_Key, SM_Key): it sent our SM_Key, and we have one. */
bool sm_sa_trusted(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req);

/* static.c */
int sm_sa_h_class_port_info(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans);
int sm_sa_h_node(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans);
int sm_sa_h_portinfo(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans);
int sm_sa_h_link(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans);
int sm_sa_h_switchinfo(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans);
int sm_sa_h_lft(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans);
int sm_sa_h_mft(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans);
int sm_sa_h_sminfo(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans);
int sm_sa_h_guidinfo(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans);
int sm_sa_h_pkey(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans);
int sm_sa_h_sl2vl(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans);
int sm_sa_h_vlarb(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans);

#endif
