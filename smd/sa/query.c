/* SPDX-License-Identifier: MIT */
/*
 * DOC: the SA query dispatcher (query.h)
 *
 * One table, one line per attribute: which methods it takes, whether it
 * needs a snapshot, the size of its record and its handler. sm_sa_query()
 * applies, in this order, the checks every attribute shares:
 *   1. class version 2, else BAD_VERSION;
 *   2. a response (R bit) or a method the SA class never takes
 *      (Send, GetTraceTable, anything unknown): METHOD_UNSUPP;
 *   3. the SM_Key rule (IBA C15-0.1.5, as OpenSM applies it): a request's
 *      SM_Key is 0 or ours. OpenSM silently drops any other; we answer
 *      DENIED instead, so a client never hangs (umad2sim never times out);
 *   4. an attribute not in the table, or a method it does not take:
 *      METHOD_ATTR_UNSUPP;
 *   5. no snapshot yet (before the first sweep) for a fabric record: BUSY;
 *   6. request data shorter than the attribute's record: REQ_INVALID;
 * then calls the handler, and applies the Get rule: no record is
 * NO_RECORDS, more than one TOO_MANY_RECORDS (C15-0.1.30). A GetTable that
 * matches nothing is a success with no records (as OpenSM answers it).
 * Whenever ans->status is not OK, ans holds no records.
 */
#include "sa/query.h"
#include "sa/handlers.h"
#include "sa/records.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* the handlers of the path and dynamic records */
#include "sa/path.h"     /* sapath: sm_sa_h_path, sm_sa_h_multipath */
#include "sa/dyn.h"      /* saserv: sm_sa_h_service, sm_sa_h_inform_info, ... */

#define M(m) (1u << (m))
#define GETS (M(SM_SA_GET) | M(SM_SA_GET_TABLE))

struct sa_attr {
	uint16_t attr_id;
	uint32_t methods;     /* M(method) bits */
	bool needs_snap;      /* BUSY until the first snapshot */
	uint16_t rec_size;    /* record size (answer and minimum request data) */
	sm_sa_handler_fn fn;
};

static const struct sa_attr attrs[] = {
	{ SM_SA_ATTR_CLASS_PORT_INFO, M(SM_SA_GET), false, SM_SA_CPI_SIZE, sm_sa_h_class_port_info },
	{ SM_SA_ATTR_NODE_RECORD, GETS, true, SM_SA_NODE_REC_SIZE, sm_sa_h_node },
	{ SM_SA_ATTR_PORTINFO_RECORD, GETS, true, SM_SA_PORTINFO_REC_SIZE, sm_sa_h_portinfo },
	{ SM_SA_ATTR_LINK_RECORD, GETS, true, SM_SA_LINK_REC_SIZE, sm_sa_h_link },
	{ SM_SA_ATTR_SWITCHINFO_RECORD, GETS, true, SM_SA_SWITCHINFO_REC_SIZE, sm_sa_h_switchinfo },
	{ SM_SA_ATTR_LFT_RECORD, GETS, true, SM_SA_LFT_REC_SIZE, sm_sa_h_lft },
	{ SM_SA_ATTR_MFT_RECORD, GETS, true, SM_SA_MFT_REC_SIZE, sm_sa_h_mft },
	{ SM_SA_ATTR_SMINFO_RECORD, GETS, true, SM_SA_SMINFO_REC_SIZE, sm_sa_h_sminfo },
	{ SM_SA_ATTR_GUIDINFO_RECORD, GETS, true, SM_SA_GUIDINFO_REC_SIZE, sm_sa_h_guidinfo },
	{ SM_SA_ATTR_PKEY_TABLE_RECORD, GETS, true, SM_SA_PKEY_REC_SIZE, sm_sa_h_pkey },
	{ SM_SA_ATTR_SL2VL_RECORD, GETS, true, SM_SA_SL2VL_REC_SIZE, sm_sa_h_sl2vl },
	{ SM_SA_ATTR_VLARB_RECORD, GETS, true, SM_SA_VLARB_REC_SIZE, sm_sa_h_vlarb },
	{ SM_SA_ATTR_PATH_RECORD, GETS, true, SM_SA_PATH_REC_SIZE, sm_sa_h_path },
	/* GetMulti's request is a MultiPathRecord; its answer PathRecords (the handler sets rec_size) */
	{ SM_SA_ATTR_MULTIPATH_RECORD, M(SM_SA_GET_MULTI), true, SM_SA_MPATH_REC_SIZE, sm_sa_h_multipath },
	{ SM_SA_ATTR_SERVICE_RECORD, GETS | M(SM_SA_SET) | M(SM_SA_DELETE), true, SM_SA_SERVICE_REC_SIZE, sm_sa_h_service },
	{ SM_SA_ATTR_INFORM_INFO, M(SM_SA_SET), true, SM_SA_INFORM_INFO_SIZE, sm_sa_h_inform_info },
	{ SM_SA_ATTR_INFORM_INFO_RECORD, GETS, true, SM_SA_INFORM_REC_SIZE, sm_sa_h_inform_info_record },
	{ SM_SA_ATTR_MCMEMBER_RECORD, GETS | M(SM_SA_SET) | M(SM_SA_DELETE), true, SM_SA_MCMEMBER_REC_SIZE, sm_sa_h_mcmember },
	/* a new attribute: one line here, its handler declared in its module's header (included above) */
};

static const struct sa_attr *find_attr(uint16_t id)
{
	for (size_t i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++)
		if (attrs[i].attr_id == id)
			return &attrs[i];
	return NULL;
}

bool sm_sa_served(uint16_t attr_id)
{
	return find_attr(attr_id) != NULL;
}

/* Methods an SA request may carry at all (IBA table 187). */
static bool sa_method_known(uint8_t m)
{
	switch (m) {
	case SM_SA_GET:
	case SM_SA_SET:
	case SM_SA_GET_TABLE:
	case SM_SA_GET_MULTI:
	case SM_SA_DELETE:
		return true;
	default:
		return false;
	}
}

bool sm_sa_trusted(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req)
{
	if (req->trusted)
		return true;
	return ctx->self && ctx->self->sm_key && req->hdr.sm_key == ctx->self->sm_key;
}

static bool sm_key_ok(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req)
{
	uint64_t ours = ctx->self ? ctx->self->sm_key : 0;
	return req->hdr.sm_key == 0 || req->hdr.sm_key == ours;
}

uint8_t *sm_sa_ans_add(struct sm_sa_ans *ans)
{
	size_t sz = ans->rec_size;
	if (!sz || ans->n >= SIZE_MAX / sz - 1)
		return NULL;
	size_t need = (ans->n + 1) * sz;   /* cap is in bytes: one answer is reused for records of any size */
	if (need > ans->cap) {
		size_t cap = ans->cap > SIZE_MAX / 2 ? need : ans->cap * 2;
		if (cap < need)
			cap = need;
		if (cap < 8 * sz)
			cap = 8 * sz;
		uint8_t *b = realloc(ans->buf, cap);
		if (!b)
			return NULL;
		ans->buf = b;
		ans->cap = cap;
	}
	uint8_t *p = ans->buf + ans->n * sz;
	memset(p, 0, sz);
	ans->n++;
	return p;
}

void sm_sa_ans_reset(struct sm_sa_ans *ans)
{
	ans->n = 0;
	ans->status = SM_SA_STATUS_OK;
}

void sm_sa_ans_free(struct sm_sa_ans *ans)
{
	if (!ans)
		return;
	free(ans->buf);
	ans->buf = NULL;
	ans->n = ans->cap = 0;
}

int sm_sa_emit(struct sm_sa_ans *ans, const struct sm_sa_req *req, const uint8_t *rec)
{
	if (ans->max_records && ans->n >= ans->max_records) {
		ans->status = SM_SA_STATUS_NO_RESOURCES;
		return 1;
	}
	uint8_t *p = sm_sa_ans_add(ans);
	if (!p)
		return -ENOMEM;
	memcpy(p, rec, ans->rec_size);
	return req->hdr.method == SM_SA_GET && ans->n > 1 ? 1 : 0;
}

static int answer(struct sm_sa_ans *ans, uint16_t status)
{
	ans->status = status;
	ans->n = 0;
	return 0;
}

int sm_sa_query(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans)
{
	sm_sa_ans_reset(ans);
	ans->rec_size = 0;
	if (req->hdr.class_version != SM_SA_CLASS_VERSION)
		return answer(ans, SM_SA_STATUS_BAD_VERSION);
	if (!sa_method_known(req->hdr.method))
		return answer(ans, SM_SA_STATUS_METHOD_UNSUPP);
	if (!sm_key_ok(ctx, req))
		return answer(ans, SM_SA_STATUS_DENIED);
	const struct sa_attr *a = find_attr(req->hdr.attr_id);
	if (!a || !(a->methods & M(req->hdr.method)))
		return answer(ans, SM_SA_STATUS_METHOD_ATTR_UNSUPP);
	if (a->needs_snap && !ctx->snap)
		return answer(ans, SM_SA_STATUS_BUSY);
	size_t need = a->rec_size < SM_SA_DATA_SIZE ? a->rec_size : SM_SA_DATA_SIZE;
	if (a->attr_id != SM_SA_ATTR_CLASS_PORT_INFO && (!req->data || req->len < need))
		return answer(ans, SM_SA_STATUS_REQ_INVALID);
	ans->rec_size = a->rec_size;
	int rc = a->fn(ctx, req, ans);
	if (rc < 0) {
		ans->n = 0;
		return rc;
	}
	if (ans->status != SM_SA_STATUS_OK)
		return answer(ans, ans->status);
	if (req->hdr.method == SM_SA_GET && ans->n != 1)
		return answer(ans, ans->n ? SM_SA_STATUS_TOO_MANY_RECORDS : SM_SA_STATUS_NO_RECORDS);
	return 0;
}
