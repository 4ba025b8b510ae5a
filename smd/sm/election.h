/* SPDX-License-Identifier: MIT */
#ifndef SMD_ELECTION_H
#define SMD_ELECTION_H
/*
 * DOC: master/standby election of one subnet (IBA 14.4)
 *
 * A pure state machine: no MADs, no clock, no logging. The caller feeds it
 * what happened (a peer SM's SMInfo read, a SubnSet(SMInfo) received, a
 * poll answered or failed, the time passing) with the time in microseconds
 * of its own monotonic clock, and does what it is told (send a poll, take
 * over, hand over). Every refused input is counted and described in
 * e->why, for the caller to log.
 *
 * States (SMInfo.SMState): DISCOVERING until the caller says discovery is
 * done (sm_elect_discovered), then MASTER when no master and no better SM
 * was seen, else STANDBY. NOTACTIVE after a DISABLE from the master, left
 * only by a STANDBY from it. Better SM: higher priority, then lower GUID.
 *
 * A standby polls its master every poll_ms (sm_elect_tick returns
 * SM_EL_POLL; the caller sends SubnGet(SMInfo) to master.lid and reports
 * the outcome with sm_elect_poll_result). A dead master and a slow one
 * differ in what comes back: a dead one's port answers with an error
 * status at once (ibsim answers 110 for a dead client) or not at all; a
 * slow one answers late. So an error answer is a miss at once, silence is
 * a miss only after the poll's timer (poll_timeout_ms, grown to twice
 * the round trip the last answers took, at most 2 x poll_timeout_ms), and an answer that comes
 * after its timer (sm_elect_poll_late: a poll already counted as missed)
 * still shows the master alive and clears the misses. A miss is retried
 * at once; after `retries` misses in a row sm_elect_tick returns
 * SM_EL_TAKEOVER and the state is MASTER.
 *
 * A master that sees a better SM returns SM_EL_HANDOVER from
 * sm_elect_peer_seen: the caller sends SubnSet(SMInfo, HANDOVER) to it.
 * We stay MASTER, but program nothing (sm_elect_programs false), until
 * it acknowledges: the answer to one of our HANDOVERs
 * (sm_elect_handover_result) or a SubnSet(SMInfo, ACKNOWLEDGE) from it;
 * then we are STANDBY polling it. Unacknowledged within the poll timer,
 * the HANDOVER is sent again (SM_EL_HANDOVER from sm_elect_tick; a
 * refusal, e.g. a master mid-cycle, waits for the timer too), `retries`
 * times; with no answer at all we program again (SM_EL_RESUME). An
 * acknowledgement that comes later still makes us STANDBY. So at no time
 * do two SMs program the subnet: the one we hand over to is master from
 * the HANDOVER on, and we only after it stayed silent to every try. A
 * master that sees another master it does not hand over to reports a
 * split (e->split).
 *
 * Refused, never acted on: an SMInfo whose SM_Key is not ours when we have
 * one (IBA 14.4.1: such an SM is ignored); a peer claiming our own GUID; a
 * Set whose modifier is not legal from the sender's state (ACKNOWLEDGE
 * only from a standby, the others only from a master) or for our state; a
 * peer whose state changed more than SM_ELECT_FLAP_MAX times within
 * SM_ELECT_FLAP_WINDOW_US, ignored for SM_ELECT_DAMP_US (damped).
 */
#include <stdbool.h>
#include <stdint.h>

#include "mad/codec.h"

#define SM_ELECT_FLAP_MAX 4
#define SM_ELECT_FLAP_WINDOW_US 2000000u
#define SM_ELECT_DAMP_US 10000000u

struct sm_elect_cfg {
	uint64_t guid;            /* our SM port GUID */
	uint64_t sm_key;          /* 0: none (every SM_Key accepted) */
	uint8_t priority;         /* 0..15 */
	unsigned poll_ms;         /* standby: interval between polls of the master */
	unsigned poll_timeout_ms; /* one poll's (or HANDOVER's) own timer, at least */
	unsigned retries;         /* misses in a row before taking over (>= 1) */
};

/* Another SM as its SMInfo says. */
struct sm_elect_peer {
	uint64_t guid;
	uint64_t sm_key;
	uint32_t act_count;
	uint16_t lid;             /* where it answered (0: unknown) */
	uint8_t priority;
	uint8_t state;            /* enum sm_sm_state */
};

enum sm_elect_act {
	SM_EL_NONE = 0,
	SM_EL_POLL,       /* send SubnGet(SMInfo) to e->master.lid */
	SM_EL_TAKEOVER,   /* we are MASTER now: sweep and program (LIDs kept) */
	SM_EL_HANDOVER,   /* send SubnSet(SMInfo, HANDOVER) to e->handover.lid */
	SM_EL_STANDBY,    /* we stopped being master: stop programming, poll e->master */
	SM_EL_ACK,        /* a HANDOVER made us master: acknowledge to e->ack_lid, then sweep */
	SM_EL_RESUME,     /* our HANDOVER went unanswered: we program again (sweep) */
};

struct sm_elect {
	struct sm_elect_cfg cfg;
	uint8_t state;                 /* enum sm_sm_state */
	struct sm_elect_peer master;   /* STANDBY: whom we poll (guid 0: none) */
	struct sm_elect_peer handover; /* MASTER: whom we sent HANDOVER, not acknowledged yet (guid 0: none) */
	struct sm_elect_peer handed;   /* MASTER: our last HANDOVER's target (a late acknowledgement counts) */
	uint64_t ho_deadline_us;       /* the outstanding HANDOVER's deadline */
	unsigned ho_tries;
	uint16_t ack_lid;              /* SM_EL_ACK: where the HANDOVER came from */
	uint64_t poll_due_us;          /* next poll */
	uint64_t poll_deadline_us;     /* outstanding poll's deadline (0: none) */
	uint64_t poll_sent_us;         /* the outstanding poll's (or, after misses, the first one's) */
	uint64_t rtt_us;               /* the master's answers' round trip (decaying maximum) */
	unsigned misses;
	bool split;                    /* a master saw another master and stays */
	/* flap damping: one peer watched at a time (the one that changes) */
	uint64_t flap_guid;
	uint8_t flap_state;
	uint64_t flap_start_us;
	unsigned flap_count;
	uint64_t damp_until_us;
	/* counters */
	unsigned long refused_key, refused_guid, refused_illegal, damped;
	unsigned long polls, poll_misses, takeovers, handovers;
	unsigned long late_answers, late_acks, handover_tries;
	char why[160];                 /* the last refusal or transition, for the log */
};

/* Better SM: higher priority, then lower GUID. */
static inline bool sm_elect_better(uint8_t pa, uint64_t ga, uint8_t pb, uint64_t gb)
{
	return pa != pb ? pa > pb : ga < gb;
}

const char *sm_elect_state_name(uint8_t state);

/* Master and not waiting for a HANDOVER's acknowledgement: the one that sweeps and programs. */
static inline bool sm_elect_programs(const struct sm_elect *e)
{
	return e->state == SM_SMSTATE_MASTER && !e->handover.guid;
}

/* DISCOVERING. cfg is copied; retries 0 counts as 1. */
void sm_elect_init(struct sm_elect *e, const struct sm_elect_cfg *cfg);

/*
 * A peer's SMInfo was read (during discovery, or a SubnGet answered
 * outside a poll). Returns the action, or a negative errno with e->why:
 * -EACCES wrong SM_Key, -EEXIST our GUID, -EBUSY damped, -EINVAL bad
 * state/priority.
 */
int sm_elect_peer_seen(struct sm_elect *e, const struct sm_elect_peer *p, uint64_t now_us);

/*
 * Back to DISCOVERING (a standby whose master has no LID to poll yet: the
 * caller sweeps again, then sm_elect_discovered). Not from MASTER.
 */
void sm_elect_rediscover(struct sm_elect *e);

/* Discovery finished: MASTER (SM_EL_TAKEOVER) or STANDBY (SM_EL_STANDBY). */
int sm_elect_discovered(struct sm_elect *e, uint64_t now_us);

/*
 * Time passed: SM_EL_POLL (a poll is now outstanding), SM_EL_HANDOVER
 * (send it again), SM_EL_RESUME, SM_EL_TAKEOVER or SM_EL_NONE. *next_us
 * (may be NULL) gets when to call again (0: no timer needed).
 */
int sm_elect_tick(struct sm_elect *e, uint64_t now_us, uint64_t *next_us);

/* When sm_elect_tick has something to do (0: nothing), without doing it. */
uint64_t sm_elect_next(const struct sm_elect *e);

/* The outstanding poll's outcome: p NULL or status != 0 is a miss. Returns an action. */
int sm_elect_poll_result(struct sm_elect *e, const struct sm_elect_peer *p, uint16_t status,
			 uint64_t now_us);

/*
 * The answer to an earlier poll, one already counted as missed: an answer
 * from our master (MASTER) clears the misses; anything else is ignored.
 * Returns SM_EL_NONE.
 */
int sm_elect_poll_late(struct sm_elect *e, const struct sm_elect_peer *p, uint16_t status, uint64_t now_us);

/*
 * One of our HANDOVERs (this one or an earlier) was answered by the SM
 * with `guid` (status 0: accepted, the acknowledgement; else refused: sent
 * again when its timer ends). Returns SM_EL_STANDBY or SM_EL_NONE.
 */
int sm_elect_handover_result(struct sm_elect *e, uint64_t guid, uint16_t status, uint64_t now_us);

/*
 * A SubnSet(SMInfo) with attribute modifier mod and payload in arrived from
 * slid. Returns the action (>= 0) and *status 0, or a negative errno with
 * *status the MAD status to answer with and e->why.
 */
int sm_elect_set(struct sm_elect *e, uint32_t mod, const struct sm_sm_info *in, uint16_t slid,
		 uint64_t now_us, uint16_t *status);

#endif
