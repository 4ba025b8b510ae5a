/* SPDX-License-Identifier: MIT */
/*
 * DOC: SMInfo answers (see sminfo.h)
 *
 * The request's payload is untrusted: a Get normally carries zeros, a Set
 * the asker's SMInfo. Only its SM_Key field is looked at (a payload that
 * does not decode counts as "no key").
 */
#include "sm/sminfo.h"

#include <string.h>

int sm_sminfo_answer(const struct sm_smp *req, const struct sm_sminfo_self *self, struct sm_smp *resp)
{
	struct sm_sm_info in, out;
	uint16_t status = 0;

	if (req->attr_id != SM_ATTR_SM_INFO ||
	    (req->method != SM_METHOD_GET && req->method != SM_METHOD_SET) ||
	    (req->mgmt_class != SM_CLASS_SMI && req->mgmt_class != SM_CLASS_SMI_DR))
		return 0;
	if (sm_sm_info_decode(req->data, &in, NULL))
		in.sm_key = 0;
	memset(&out, 0, sizeof(out));
	out.guid = self->guid;
	out.sm_key = self->sm_key && in.sm_key == self->sm_key ? self->sm_key : 0;
	out.act_count = self->act_count;
	out.priority = self->priority & 0x0F;
	out.state = self->state & 0x0F;
	if (req->method == SM_METHOD_SET)
		status = SM_MAD_STATUS_ATTR_UNSUPP;   /* no negotiation: nobody makes us stand down */
	sm_smp_make_response(req, resp, status);
	memset(resp->data, 0, sizeof(resp->data));
	sm_sm_info_encode(&out, resp->data);
	return 1;
}
