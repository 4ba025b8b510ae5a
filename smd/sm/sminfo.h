/* SPDX-License-Identifier: MIT */
#ifndef SMD_SMINFO_H
#define SMD_SMINFO_H
/*
 * DOC: SMInfo on the wire (SM_Key, election)
 *
 * What smd says when another SM or a tool (infiniband-diags sminfo) asks
 * its port for SMInfo, and the SMInfo requests it sends itself.
 *
 * SubnGet(SMInfo) is answered with this SM's GUID (its port GUID),
 * ActCount, priority and state; the SM_Key field carries our SM_Key only
 * when the request carried the same key or (mkey_auth) the asker is
 * authenticated by M_Key, 0 otherwise (IBA 14.4.1: the key is not given
 * away to an unauthenticated asker). SubnSet(SMInfo)
 * (HANDOVER, ACKNOWLEDGE, DISABLE, STANDBY, DISCOVER) goes to the plane's
 * election (sm/election.h), which accepts or refuses it; without an
 * election (a one-shot run) it is refused with "attribute not supported".
 * Either way the answer carries our SMInfo after the Set.
 *
 * A directed-route answer keeps the hop pointer the request arrived with:
 * the kernel checks it (IBA C14-13: a returning SMP's pointer is hop count
 * + 1 at its start) and ibsim wants what it sent (0).
 */
#include <stdint.h>

#include "mad/codec.h"

struct sm_elect;

struct sm_sminfo_self {
	uint64_t guid;       /* the SM's port GUID */
	uint64_t sm_key;     /* 0: none */
	uint32_t act_count;
	uint8_t priority;    /* 0-15 */
	uint8_t state;       /* enum sm_sm_state */
	/*
	 * 0: the SM_Key goes only to an asker that sent it. 1: also to an
	 * asker authenticated by M_Key, i.e. whose SMP header M_Key is `mkey`
	 * (our ports' M_Key; 0 when they have none): what IBA 14.4.1 and
	 * OpenSM do, and OpenSM ignores an SM that answers with another key
	 * than its own (ERR 2F18), so elected planes need it to interoperate.
	 */
	uint8_t mkey_auth;
	uint64_t mkey;
};

/*
 * If req is a Get or Set of SMInfo, fill resp with the answer and return
 * 1; otherwise return 0 (not ours: the caller does what it did before).
 */
int sm_sminfo_answer(const struct sm_smp *req, const struct sm_sminfo_self *self, struct sm_smp *resp);

/*
 * The same with an election: a Set is handed to sm_elect_set() (slid: the
 * sender's LID, 0 for DR), *act gets its action (SM_EL_*, or -errno when
 * refused: e->why says why); self's state and priority are the election's.
 * el NULL: as sm_sminfo_answer(), *act = 0.
 */
int sm_sminfo_handle(const struct sm_smp *req, const struct sm_sminfo_self *self, struct sm_elect *el,
		     uint16_t slid, uint64_t now_us, struct sm_smp *resp, int *act);

/*
 * A LID-routed SMInfo request of ours: Get (mod 0) or Set with modifier
 * mod carrying self (our key included, so the peer answers with its key).
 */
void sm_sminfo_request(struct sm_smp *req, uint8_t method, uint32_t mod, const struct sm_sminfo_self *self,
		       uint64_t tid);

#endif
