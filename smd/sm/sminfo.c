/* SPDX-License-Identifier: MIT */
/*
 * DOC: SMInfo answers and requests (see sminfo.h)
 *
 * The request's payload is untrusted: a Get normally carries zeros, a Set
 * the asker's SMInfo. A Get looks only at its SM_Key field (a payload that
 * does not decode counts as "no key"); a Set whose payload does not decode
 * (reserved state) is refused with "invalid field".
 */
#include "sm/sminfo.h"
#include "sm/election.h"

#include <string.h>

int sm_sminfo_handle(const struct sm_smp *req, const struct sm_sminfo_self *self, struct sm_elect *el,
		     uint16_t slid, uint64_t now_us, struct sm_smp *resp, int *act)
{
	struct sm_sm_info in, out;
	uint16_t status = 0;
	int bad;

	*act = 0;
	if (req->attr_id != SM_ATTR_SM_INFO ||
	    (req->method != SM_METHOD_GET && req->method != SM_METHOD_SET) ||
	    (req->mgmt_class != SM_CLASS_SMI && req->mgmt_class != SM_CLASS_SMI_DR))
		return 0;
	bad = sm_sm_info_decode(req->data, &in, NULL);
	if (bad)
		memset(&in, 0, sizeof(in));
	if (req->method == SM_METHOD_SET) {
		if (!el)
			status = SM_MAD_STATUS_ATTR_UNSUPP;   /* no election here: nobody makes us stand down */
		else if (bad)
			status = SM_MAD_STATUS_INVALID_FIELD;
		else
			*act = sm_elect_set(el, req->attr_mod, &in, slid, now_us, &status);
	}
	memset(&out, 0, sizeof(out));
	out.guid = self->guid;
	if (self->sm_key && (in.sm_key == self->sm_key || (self->mkey_auth && req->mkey == self->mkey)))
		out.sm_key = self->sm_key;
	out.act_count = self->act_count;
	out.priority = (el ? el->cfg.priority : self->priority) & 0x0F;
	out.state = (el ? el->state : self->state) & 0x0F;
	sm_smp_make_response(req, resp, status);
	resp->hop_ptr = req->hop_ptr;   /* as received (see sminfo.h) */
	memset(resp->data, 0, sizeof(resp->data));
	sm_sm_info_encode(&out, resp->data);
	return 1;
}

int sm_sminfo_answer(const struct sm_smp *req, const struct sm_sminfo_self *self, struct sm_smp *resp)
{
	int act;

	return sm_sminfo_handle(req, self, NULL, 0, 0, resp, &act);
}

void sm_sminfo_request(struct sm_smp *req, uint8_t method, uint32_t mod, const struct sm_sminfo_self *self,
		       uint64_t tid)
{
	struct sm_sm_info si = {
		.guid = self->guid, .sm_key = self->sm_key, .act_count = self->act_count,
		.priority = self->priority & 0x0F, .state = self->state & 0x0F,
	};

	sm_smp_init_lid(req, method, SM_ATTR_SM_INFO, mod);
	req->tid = tid;
	req->mkey = self->mkey;   /* so that the peer may authenticate us and show its key */
	sm_sm_info_encode(&si, req->data);
}
