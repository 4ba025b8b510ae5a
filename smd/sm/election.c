/* SPDX-License-Identifier: MIT */
/*
 * DOC: election state machine (see election.h)
 *
 * Behaviour follows IBA 14.4 as OpenSM's osm_sm_state_mgr.c and
 * osm_sminfo_rcv.c implement it (read for facts, written anew): legal Set
 * modifiers by sender state, a master that finds a better SM hands over,
 * a standby that loses its master takes over. Differences: a miss is
 * retried at once rather than after a full polling period, so a dead
 * master is noticed in one poll interval plus `retries` round trips; an
 * answer is taken whenever it comes (as OpenSM's "master is alive"), so a
 * slow master is not a dead one. OpenSM stands by as soon as it has sent
 * HANDOVER; we stand by when it is acknowledged and meanwhile program
 * nothing, so an unanswered HANDOVER leaves the subnet its master.
 */
#include "sm/election.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

const char *sm_elect_state_name(uint8_t state)
{
	static const char *const n[] = { "notactive", "discovering", "standby", "master" };
	return state < 4 ? n[state] : "?";
}

void sm_elect_init(struct sm_elect *e, const struct sm_elect_cfg *cfg)
{
	memset(e, 0, sizeof(*e));
	e->cfg = *cfg;
	e->cfg.priority &= 0x0F;
	if (!e->cfg.retries)
		e->cfg.retries = 1;
	e->state = SM_SMSTATE_DISCOVERING;
}

/*
 * Damping: a peer whose value (state, or Set modifier) changes more than
 * SM_ELECT_FLAP_MAX times in SM_ELECT_FLAP_WINDOW_US is ignored for
 * SM_ELECT_DAMP_US. Returns -EBUSY while damped.
 */
static int flap(struct sm_elect *e, uint64_t guid, uint8_t value, uint64_t now)
{
	if (guid == e->flap_guid && now < e->damp_until_us) {
		e->damped++;
		snprintf(e->why, sizeof(e->why), "SM 0x%016" PRIx64 " damped (flapping)", guid);
		return -EBUSY;
	}
	if (guid != e->flap_guid) {
		e->flap_guid = guid;
		e->flap_state = value;
		e->flap_start_us = now;
		e->flap_count = 0;
		e->damp_until_us = 0;
		return 0;
	}
	if (value == e->flap_state)
		return 0;
	e->flap_state = value;
	if (now - e->flap_start_us > SM_ELECT_FLAP_WINDOW_US) {
		e->flap_start_us = now;
		e->flap_count = 1;
		return 0;
	}
	if (++e->flap_count > SM_ELECT_FLAP_MAX) {
		e->damp_until_us = now + SM_ELECT_DAMP_US;
		e->flap_count = 0;
		e->damped++;
		snprintf(e->why, sizeof(e->why),
			 "SM 0x%016" PRIx64 " changed %u times within %u ms: ignored for %u s", guid,
			 SM_ELECT_FLAP_MAX + 1, SM_ELECT_FLAP_WINDOW_US / 1000, SM_ELECT_DAMP_US / 1000000);
		return -EBUSY;
	}
	return 0;
}

/* Checks common to SMInfo read and SMInfo Set: key, GUID, ranges, damping. */
static int admissible(struct sm_elect *e, uint64_t guid, uint64_t key, uint8_t state, uint8_t prio,
		      uint8_t flapval, uint64_t now)
{
	if (guid == e->cfg.guid) {
		e->refused_guid++;
		snprintf(e->why, sizeof(e->why), "an SM claims our GUID 0x%016" PRIx64, guid);
		return -EEXIST;
	}
	if (e->cfg.sm_key && key != e->cfg.sm_key) {
		e->refused_key++;
		snprintf(e->why, sizeof(e->why), "SM 0x%016" PRIx64 " has another SM_Key: ignored", guid);
		return -EACCES;
	}
	if (state > SM_SMSTATE_MASTER || prio > 15 || !guid) {
		e->refused_illegal++;
		snprintf(e->why, sizeof(e->why), "SM 0x%016" PRIx64 ": impossible state %u / priority %u",
			 guid, state, prio);
		return -EINVAL;
	}
	return flap(e, guid, flapval, now);
}

/* The silence after which a poll or a HANDOVER counts as unanswered. */
static uint64_t timeout_us(const struct sm_elect *e)
{
	uint64_t floor = (uint64_t)e->cfg.poll_timeout_ms * 1000u, t = 2 * e->rtt_us;

	return t < floor ? floor : t > 2 * floor ? 2 * floor : t;   /* a silent master: 2 s at most */
}

static void go_standby(struct sm_elect *e, const struct sm_elect_peer *m, uint64_t now)
{
	e->state = SM_SMSTATE_STANDBY;
	e->master = *m;
	e->handover.guid = e->handed.guid = 0;
	e->ho_deadline_us = 0;
	e->misses = 0;
	e->poll_deadline_us = 0;
	e->rtt_us = 0;
	e->poll_due_us = now + (uint64_t)e->cfg.poll_ms * 1000u;
	e->split = false;
}

static int go_master(struct sm_elect *e, const char *why)
{
	snprintf(e->why, sizeof(e->why), "%s", why);
	e->state = SM_SMSTATE_MASTER;
	e->master.guid = 0;
	e->handover.guid = e->handed.guid = 0;
	e->ho_deadline_us = 0;
	e->poll_deadline_us = 0;
	e->misses = 0;
	return SM_EL_TAKEOVER;
}

int sm_elect_peer_seen(struct sm_elect *e, const struct sm_elect_peer *p, uint64_t now_us)
{
	bool better = sm_elect_better(p->priority, p->guid, e->cfg.priority, e->cfg.guid);
	int rc = admissible(e, p->guid, p->sm_key, p->state, p->priority, p->state, now_us);

	if (rc)
		return rc;
	switch (e->state) {
	case SM_SMSTATE_DISCOVERING:
		/* a master wins over a better non-master; among non-masters the best */
		if (p->state == SM_SMSTATE_MASTER) {
			if (e->master.state != SM_SMSTATE_MASTER || p->guid == e->master.guid)
				e->master = *p;
		} else if (better && (p->state == SM_SMSTATE_DISCOVERING || p->state == SM_SMSTATE_STANDBY) &&
			   e->master.state != SM_SMSTATE_MASTER &&
			   (!e->master.guid || sm_elect_better(p->priority, p->guid, e->master.priority,
							       e->master.guid))) {
			e->master = *p;
		}
		return SM_EL_NONE;
	case SM_SMSTATE_STANDBY:
		if (p->state == SM_SMSTATE_MASTER ||
		    (p->guid == e->master.guid && better && p->state != SM_SMSTATE_NOT_ACTIVE)) {
			e->master = *p;   /* alive (or a new master took over from ours) */
			e->misses = 0;
		}
		return SM_EL_NONE;
	case SM_SMSTATE_MASTER:
		if (better && p->state != SM_SMSTATE_NOT_ACTIVE) {
			if (e->handover.guid)
				return SM_EL_NONE;   /* one handover at a time */
			e->handover = e->handed = *p;
			e->ho_tries = 1;
			e->handover_tries++;
			e->ho_deadline_us = now_us + timeout_us(e);
			snprintf(e->why, sizeof(e->why), "better SM 0x%016" PRIx64 " (priority %u): handing over",
				 p->guid, p->priority);
			return SM_EL_HANDOVER;
		}
		if (p->state == SM_SMSTATE_MASTER && !e->split) {
			e->split = true;
			snprintf(e->why, sizeof(e->why),
				 "another master 0x%016" PRIx64 " (priority %u, LID %u): it should hand over to us%s",
				 p->guid, p->priority, p->lid, p->sm_key && p->sm_key != e->cfg.sm_key ?
				 "; it has another SM_Key, so it ignores us: set the same sm_key" : "");
		}
		return SM_EL_NONE;
	default:
		return SM_EL_NONE;
	}
}

void sm_elect_rediscover(struct sm_elect *e)
{
	if (e->state == SM_SMSTATE_MASTER)
		return;
	e->state = SM_SMSTATE_DISCOVERING;
	memset(&e->master, 0, sizeof(e->master));
	e->poll_deadline_us = 0;
	e->misses = 0;
}

int sm_elect_discovered(struct sm_elect *e, uint64_t now_us)
{
	if (e->state != SM_SMSTATE_DISCOVERING)
		return SM_EL_NONE;
	if (e->master.guid) {
		go_standby(e, &e->master, now_us);
		snprintf(e->why, sizeof(e->why), "standby: master 0x%016" PRIx64 " at LID %u (priority %u)",
			 e->master.guid, e->master.lid, e->master.priority);
		return SM_EL_STANDBY;
	}
	return go_master(e, "master: no other master and no better SM found");
}

static int miss(struct sm_elect *e, uint64_t now)
{
	e->poll_deadline_us = 0;
	e->poll_misses++;
	if (++e->misses >= e->cfg.retries) {
		char why[160];
		snprintf(why, sizeof(why), "master 0x%016" PRIx64 " at LID %u did not answer %u polls: taking over",
			 e->master.guid, e->master.lid, e->misses);
		e->takeovers++;
		return go_master(e, why);
	}
	e->poll_due_us = now;   /* retry at once */
	return SM_EL_NONE;
}

/* A HANDOVER's timer ended: send it again, or after `retries` tries program again. */
static int handover_timeout(struct sm_elect *e, uint64_t now)
{
	if (e->ho_tries < e->cfg.retries) {
		e->ho_tries++;
		e->handover_tries++;
		e->ho_deadline_us = now + timeout_us(e);
		snprintf(e->why, sizeof(e->why), "SM 0x%016" PRIx64 " has not acknowledged our HANDOVER: sending it"
			 " again (try %u of %u)", e->handover.guid, e->ho_tries, e->cfg.retries);
		return SM_EL_HANDOVER;
	}
	snprintf(e->why, sizeof(e->why), "SM 0x%016" PRIx64 " did not answer our HANDOVER (%u tries): staying"
		 " master (a late acknowledgement still makes us standby)", e->handover.guid, e->ho_tries);
	e->handover.guid = 0;
	e->ho_deadline_us = 0;
	return SM_EL_RESUME;
}

uint64_t sm_elect_next(const struct sm_elect *e)
{
	if (e->state == SM_SMSTATE_MASTER)
		return e->handover.guid ? e->ho_deadline_us : 0;
	if (e->state != SM_SMSTATE_STANDBY || !e->master.guid)
		return 0;
	return e->poll_deadline_us ? e->poll_deadline_us : e->poll_due_us;
}

int sm_elect_tick(struct sm_elect *e, uint64_t now_us, uint64_t *next_us)
{
	int act = SM_EL_NONE;

	if (e->state == SM_SMSTATE_MASTER && e->handover.guid && now_us >= e->ho_deadline_us)
		act = handover_timeout(e, now_us);
	if (e->state == SM_SMSTATE_STANDBY && e->master.guid) {
		if (e->poll_deadline_us && now_us >= e->poll_deadline_us)
			act = miss(e, now_us);
		if (act == SM_EL_NONE && !e->poll_deadline_us && now_us >= e->poll_due_us) {
			e->polls++;
			e->poll_deadline_us = now_us + timeout_us(e);
			e->poll_due_us = now_us + (uint64_t)e->cfg.poll_ms * 1000u;
			if (!e->misses)
				e->poll_sent_us = now_us;   /* after misses: the first unanswered one's */
			act = SM_EL_POLL;
		}
	}
	if (next_us)
		*next_us = sm_elect_next(e);
	return act;
}

/* Our master answered as a master (or as the better SM we wait for): alive. */
static bool alive(const struct sm_elect *e, const struct sm_elect_peer *p)
{
	return p->state == SM_SMSTATE_MASTER ||
	       (p->guid == e->master.guid && p->state != SM_SMSTATE_NOT_ACTIVE &&
		sm_elect_better(p->priority, p->guid, e->cfg.priority, e->cfg.guid));
}

/* An answer in time or late: its round trip, counted from the first unanswered poll. */
static void heard(struct sm_elect *e, uint64_t now)
{
	uint64_t rtt = now > e->poll_sent_us ? now - e->poll_sent_us : 0;

	e->rtt_us -= e->rtt_us / 8;
	if (rtt > e->rtt_us)
		e->rtt_us = rtt;
	e->poll_sent_us = now;   /* the next unanswered one is newer than this */
}

int sm_elect_poll_result(struct sm_elect *e, const struct sm_elect_peer *p, uint16_t status,
			 uint64_t now_us)
{
	if (e->state != SM_SMSTATE_STANDBY || !e->poll_deadline_us)
		return sm_elect_poll_late(e, p, status, now_us);
	if (!p || status)
		return miss(e, now_us);
	e->poll_deadline_us = 0;
	if (sm_elect_peer_seen(e, p, now_us) < 0 || !alive(e, p))
		return miss(e, now_us);   /* refused, or our master stopped being one */
	heard(e, now_us);
	return SM_EL_NONE;
}

int sm_elect_poll_late(struct sm_elect *e, const struct sm_elect_peer *p, uint16_t status, uint64_t now_us)
{
	if (e->state != SM_SMSTATE_STANDBY || !p || status || p->guid != e->master.guid || !alive(e, p) ||
	    sm_elect_peer_seen(e, p, now_us) < 0)
		return SM_EL_NONE;   /* an error late is no news: the outstanding poll decides */
	e->late_answers++;
	e->misses = 0;
	heard(e, now_us);
	return SM_EL_NONE;
}

/* The SM we handed over to acknowledged (its answer, or its ACKNOWLEDGE): standby, polling it. */
static int acknowledged(struct sm_elect *e, const char *how, uint64_t now)
{
	struct sm_elect_peer m = e->handed;
	bool late = !e->handover.guid;

	m.state = SM_SMSTATE_MASTER;
	e->handovers++;
	e->late_acks += late;
	go_standby(e, &m, now);
	snprintf(e->why, sizeof(e->why), "handed over to 0x%016" PRIx64 " at LID %u (%s%s): standby", m.guid,
		 m.lid, how, late ? ", after we gave up waiting" : "");
	return SM_EL_STANDBY;
}

int sm_elect_handover_result(struct sm_elect *e, uint64_t guid, uint16_t status, uint64_t now_us)
{
	if (e->state != SM_SMSTATE_MASTER || !e->handed.guid || guid != e->handed.guid)
		return SM_EL_NONE;
	if (!status)
		return acknowledged(e, "HANDOVER answered", now_us);
	if (e->handover.guid)
		snprintf(e->why, sizeof(e->why), "SM 0x%016" PRIx64 " refused our HANDOVER (status 0x%x): trying"
			 " again when its timer ends", guid, status);
	return SM_EL_NONE;
}

static int illegal(struct sm_elect *e, uint32_t mod, const struct sm_sm_info *in, uint16_t *status)
{
	e->refused_illegal++;
	snprintf(e->why, sizeof(e->why), "SMInfo Set modifier %u from SM 0x%016" PRIx64 " (%s) refused in state %s",
		 mod, in->guid, sm_elect_state_name(in->state), sm_elect_state_name(e->state));
	*status = SM_MAD_STATUS_INVALID_FIELD;
	return -EINVAL;
}

int sm_elect_set(struct sm_elect *e, uint32_t mod, const struct sm_sm_info *in, uint16_t slid,
		 uint64_t now_us, uint16_t *status)
{
	int rc = admissible(e, in->guid, in->sm_key, in->state, in->priority, (uint8_t)mod, now_us);

	*status = 0;
	if (rc) {
		*status = rc == -EBUSY ? SM_MAD_STATUS_BUSY : SM_MAD_STATUS_INVALID_FIELD;
		return rc;
	}
	/* IBA 14.4: ACKNOWLEDGE only from a standby; the others only from a master */
	if (mod == SM_SMINFO_ACKNOWLEDGE ? in->state != SM_SMSTATE_STANDBY :
	    (mod < SM_SMINFO_HANDOVER || mod > SM_SMINFO_DISCOVER || in->state != SM_SMSTATE_MASTER))
		return illegal(e, mod, in, status);
	struct sm_elect_peer from = {
		.guid = in->guid, .sm_key = in->sm_key, .act_count = in->act_count, .lid = slid,
		.priority = in->priority, .state = in->state,
	};
	switch (mod) {
	case SM_SMINFO_HANDOVER:
		if (e->state == SM_SMSTATE_NOT_ACTIVE)
			return illegal(e, mod, in, status);
		e->ack_lid = slid;
		if (e->state != SM_SMSTATE_MASTER)
			e->takeovers++;
		go_master(e, "HANDOVER received: master");
		snprintf(e->why, sizeof(e->why), "HANDOVER from 0x%016" PRIx64 " at LID %u: master", in->guid, slid);
		return SM_EL_ACK;
	case SM_SMINFO_ACKNOWLEDGE:
		if (e->state == SM_SMSTATE_MASTER && e->handed.guid == in->guid) {
			if (slid)
				e->handed.lid = slid;
			return acknowledged(e, "ACKNOWLEDGE", now_us);
		}
		if (e->state != SM_SMSTATE_STANDBY)
			return illegal(e, mod, in, status);
		return SM_EL_NONE;   /* the answer to our HANDOVER came first */
	case SM_SMINFO_DISABLE:
		if (e->state != SM_SMSTATE_STANDBY)
			return illegal(e, mod, in, status);
		e->state = SM_SMSTATE_NOT_ACTIVE;
		e->poll_deadline_us = 0;
		snprintf(e->why, sizeof(e->why), "DISABLE from master 0x%016" PRIx64 ": not active", in->guid);
		return SM_EL_NONE;
	case SM_SMINFO_STANDBY:
		if (e->state != SM_SMSTATE_NOT_ACTIVE && e->state != SM_SMSTATE_STANDBY)
			return illegal(e, mod, in, status);
		go_standby(e, &from, now_us);
		snprintf(e->why, sizeof(e->why), "STANDBY from master 0x%016" PRIx64 ": standby", in->guid);
		return SM_EL_STANDBY;
	default: /* SM_SMINFO_DISCOVER */
		if (e->state != SM_SMSTATE_STANDBY)
			return illegal(e, mod, in, status);
		e->state = SM_SMSTATE_DISCOVERING;
		e->master.guid = 0;
		e->poll_deadline_us = 0;
		snprintf(e->why, sizeof(e->why), "DISCOVER from master 0x%016" PRIx64 ": discovering", in->guid);
		return SM_EL_NONE;
	}
}
