/* SPDX-License-Identifier: MIT */
#ifndef SMD_SMINFO_H
#define SMD_SMINFO_H
/*
 * DOC: answering SMInfo (SM_Key)
 *
 * What smd says when another SM or a tool (infiniband-diags sminfo) asks
 * its port for SMInfo. SubnGet(SMInfo) is answered with this SM's GUID
 * (its port GUID), ActCount, priority and state; the SM_Key field carries
 * our SM_Key only when the request carried the same key, 0 otherwise (IBA
 * 14.4.1: the key is not given away to an unauthenticated asker).
 * SubnSet(SMInfo) (handover, acknowledge, disable, standby, discover) is
 * refused with status "attribute not supported" whatever its key: smd does
 * not take part in master/standby negotiation, so no other SM can make it
 * stand down or hand over, authenticated or not.
 *
 * Not implemented: smd never sends SMInfo itself (it does not look for
 * other SMs), so SM_Key is never presented to anybody; polling a master,
 * priorities and handover are missing. Only transports that deliver
 * requests addressed to the SM reach this (ibsim's client protocol does;
 * the umad transport registers for traps only).
 */
#include <stdint.h>

#include "mad/codec.h"

struct sm_sminfo_self {
	uint64_t guid;       /* the SM's port GUID */
	uint64_t sm_key;     /* 0: none */
	uint32_t act_count;
	uint8_t priority;    /* 0-15 */
	uint8_t state;       /* enum sm_sm_state */
};

/*
 * If req is a Get or Set of SMInfo, fill resp with the answer and return
 * 1; otherwise return 0 (not ours: the caller does what it did before).
 */
int sm_sminfo_answer(const struct sm_smp *req, const struct sm_sminfo_self *self, struct sm_smp *resp);

#endif
