/* SPDX-License-Identifier: MIT */
/*
 * DOC: handlers of the SA's static records (handlers.h): the ones answered
 * from the snapshot of the last sweep alone.
 */
#include "sa/handlers.h"
#include "sa/records.h"

#define SA_DEFAULT_RESP_TIME 16   /* OpenSM's with its default 200 ms transaction timeout */

/*
 * ClassPortInfo: OpenSM's capability bits minus what we do not serve
 * (Get/Set(Notice), alias GUIDs; multicast service records and
 * send-only full members wait for the multicast issue). No redirection:
 * RedirectQP 1 and the QP1 Q_Key, as OpenSM answers.
 */
int sm_sa_h_class_port_info(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans)
{
	uint8_t rec[SM_SA_CPI_SIZE];
	struct sm_sa_cpi c = {
		.cap_mask = SM_SA_CAP_UD_MCAST | SM_SA_CAP_PI_CAPMASK_MATCH,
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

/* Not yet served (filled in by the next commits): METHOD_ATTR_UNSUPP, as an unknown attribute. */
#define SA_STUB(name)                                                                                    \
	int name(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans)       \
	{                                                                                                \
		(void)ctx;                                                                               \
		(void)req;                                                                               \
		ans->status = SM_SA_STATUS_METHOD_ATTR_UNSUPP;                                           \
		return 0;                                                                                \
	}
SA_STUB(sm_sa_h_node)
SA_STUB(sm_sa_h_portinfo)
SA_STUB(sm_sa_h_link)
SA_STUB(sm_sa_h_switchinfo)
SA_STUB(sm_sa_h_lft)
SA_STUB(sm_sa_h_mft)
SA_STUB(sm_sa_h_sminfo)
SA_STUB(sm_sa_h_guidinfo)
SA_STUB(sm_sa_h_pkey)
SA_STUB(sm_sa_h_sl2vl)
SA_STUB(sm_sa_h_vlarb)
