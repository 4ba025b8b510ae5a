/* SPDX-License-Identifier: MIT */
/*
 * The election state machine (smd/sm/election.c, issue 15) on an injected
 * clock: discovery ends MASTER or STANDBY by priority then GUID; a standby
 * polls, retries a miss at once and takes over after `retries` misses;
 * a master hands over to a better SM; SubnSet(SMInfo) legality; bad input
 * (wrong SM_Key, our own GUID, impossible state, a flapping peer) refused
 * or damped and counted.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "sm/election.h"

#define OURS 0x0002c90000000010ull
#define MS 1000ull

static void init(struct sm_elect *e, uint8_t prio, uint64_t key)
{
	struct sm_elect_cfg c = { .guid = OURS, .sm_key = key, .priority = prio, .poll_ms = 500,
				  .poll_timeout_ms = 200, .retries = 3 };
	sm_elect_init(e, &c);
}

static struct sm_elect_peer peer(uint64_t guid, uint8_t prio, uint8_t state, uint16_t lid)
{
	struct sm_elect_peer p = { .guid = guid, .priority = prio, .state = state, .lid = lid };
	return p;
}

static void better_order(void **st)
{
	(void)st;
	assert_true(sm_elect_better(5, 9, 4, 1));
	assert_true(sm_elect_better(5, 1, 5, 9));    /* same priority: lower GUID */
	assert_false(sm_elect_better(5, 9, 5, 1));
	assert_false(sm_elect_better(5, 1, 5, 1));
}

static void discovery(void **st)
{
	struct sm_elect e;
	(void)st;
	/* alone: master */
	init(&e, 5, 0);
	assert_int_equal(e.state, SM_SMSTATE_DISCOVERING);
	assert_int_equal(sm_elect_discovered(&e, 0), SM_EL_TAKEOVER);
	assert_int_equal(e.state, SM_SMSTATE_MASTER);
	/* a lower-priority master exists: it is master, we stand by (it will hand over) */
	init(&e, 5, 0);
	struct sm_elect_peer m = peer(0x99, 1, SM_SMSTATE_MASTER, 7);
	assert_int_equal(sm_elect_peer_seen(&e, &m, 0), SM_EL_NONE);
	assert_int_equal(sm_elect_discovered(&e, 0), SM_EL_STANDBY);
	assert_int_equal(e.state, SM_SMSTATE_STANDBY);
	assert_int_equal(e.master.lid, 7);
	/* a lower standby: ignored, we are master */
	init(&e, 5, 0);
	struct sm_elect_peer s = peer(0x01, 4, SM_SMSTATE_STANDBY, 3);
	sm_elect_peer_seen(&e, &s, 0);
	assert_int_equal(sm_elect_discovered(&e, 0), SM_EL_TAKEOVER);
	/* a better discovering SM: we wait for it (standby) */
	init(&e, 5, 0);
	s = peer(0x01, 5, SM_SMSTATE_DISCOVERING, 3);   /* same priority, lower GUID */
	sm_elect_peer_seen(&e, &s, 0);
	assert_int_equal(sm_elect_discovered(&e, 0), SM_EL_STANDBY);
	assert_int_equal(e.master.guid, 0x01);
	/* ... found before it had a LID: discover again (the daemon sweeps), then it is master */
	s.lid = 0;
	init(&e, 5, 0);
	sm_elect_peer_seen(&e, &s, 0);
	assert_int_equal(sm_elect_discovered(&e, 0), SM_EL_STANDBY);
	sm_elect_rediscover(&e);
	assert_int_equal(e.state, SM_SMSTATE_DISCOVERING);
	assert_int_equal(e.master.guid, 0);
	s = peer(0x01, 5, SM_SMSTATE_MASTER, 3);
	sm_elect_peer_seen(&e, &s, 0);
	assert_int_equal(sm_elect_discovered(&e, 0), SM_EL_STANDBY);
	assert_int_equal(e.master.lid, 3);
	/* never from MASTER */
	init(&e, 5, 0);
	sm_elect_discovered(&e, 0);
	sm_elect_rediscover(&e);
	assert_int_equal(e.state, SM_SMSTATE_MASTER);
}

static void poll_and_takeover(void **st)
{
	struct sm_elect e;
	uint64_t next, t = 0;
	(void)st;
	init(&e, 5, 0);
	struct sm_elect_peer m = peer(0x99, 8, SM_SMSTATE_MASTER, 7);
	sm_elect_peer_seen(&e, &m, t);
	sm_elect_discovered(&e, t);
	assert_int_equal(sm_elect_tick(&e, t, &next), SM_EL_NONE);
	assert_int_equal(next, 500 * MS);
	t = 500 * MS;
	assert_int_equal(sm_elect_tick(&e, t, &next), SM_EL_POLL);
	assert_int_equal(next, t + 200 * MS);
	/* answered: alive */
	assert_int_equal(sm_elect_poll_result(&e, &m, 0, t + 1 * MS), SM_EL_NONE);
	assert_int_equal(e.misses, 0);
	/* master dies: ibsim answers 110 at once; retried at once; 3rd miss takes over */
	t = 1000 * MS;
	assert_int_equal(sm_elect_tick(&e, t, NULL), SM_EL_POLL);
	assert_int_equal(sm_elect_poll_result(&e, NULL, 110, t), SM_EL_NONE);
	assert_int_equal(sm_elect_tick(&e, t, NULL), SM_EL_POLL);
	assert_int_equal(sm_elect_poll_result(&e, NULL, 110, t), SM_EL_NONE);
	assert_int_equal(sm_elect_tick(&e, t, NULL), SM_EL_POLL);
	assert_int_equal(sm_elect_poll_result(&e, NULL, 110, t), SM_EL_TAKEOVER);
	assert_int_equal(e.state, SM_SMSTATE_MASTER);
	assert_int_equal(e.takeovers, 1);
	/* silent master (umad2sim never times out): our own timer counts the misses */
	init(&e, 5, 0);
	sm_elect_peer_seen(&e, &m, 0);
	sm_elect_discovered(&e, 0);
	t = 500 * MS;
	int act = SM_EL_NONE, polls = 0;
	for (int i = 0; i < 20 && act != SM_EL_TAKEOVER; i++) {
		act = sm_elect_tick(&e, t, &next);
		polls += act == SM_EL_POLL;
		t = next;
	}
	assert_int_equal(act, SM_EL_TAKEOVER);
	assert_int_equal(polls, 3);
	assert_true(t <= 500 * MS + 3 * 200 * MS);
	/* a late answer after the takeover changes nothing */
	assert_int_equal(sm_elect_poll_result(&e, &m, 0, t), SM_EL_NONE);
	assert_int_equal(e.state, SM_SMSTATE_MASTER);
}

static void handover(void **st)
{
	struct sm_elect e;
	(void)st;
	init(&e, 5, 0);
	sm_elect_discovered(&e, 0);
	/* a better SM appears (standby of ours after trap 144): hand over to it */
	struct sm_elect_peer b = peer(0x77, 9, SM_SMSTATE_STANDBY, 12);
	assert_int_equal(sm_elect_peer_seen(&e, &b, 0), SM_EL_HANDOVER);
	assert_int_equal(e.handover.lid, 12);
	assert_int_equal(sm_elect_peer_seen(&e, &b, 0), SM_EL_NONE);   /* one at a time */
	assert_int_equal(e.state, SM_SMSTATE_MASTER);                   /* no gap without a master */
	assert_int_equal(sm_elect_handover_result(&e, 0, 1 * MS), SM_EL_STANDBY);
	assert_int_equal(e.state, SM_SMSTATE_STANDBY);
	assert_int_equal(e.master.guid, 0x77);
	/* refused handover: stay master */
	init(&e, 5, 0);
	sm_elect_discovered(&e, 0);
	sm_elect_peer_seen(&e, &b, 0);
	assert_int_equal(sm_elect_handover_result(&e, SM_MAD_STATUS_INVALID_FIELD, 0), SM_EL_NONE);
	assert_int_equal(e.state, SM_SMSTATE_MASTER);
	/* unanswered handover: our timer ends it */
	sm_elect_peer_seen(&e, &b, 10 * MS);
	sm_elect_tick(&e, 300 * MS, NULL);
	assert_int_equal(e.handover.guid, 0);
	assert_int_equal(e.state, SM_SMSTATE_MASTER);
	/* a worse master: split reported, we stay */
	struct sm_elect_peer w = peer(0x55, 1, SM_SMSTATE_MASTER, 3);
	w.sm_key = 1;   /* OpenSM's default key, ours none: it ignores us, and says so */
	assert_int_equal(sm_elect_peer_seen(&e, &w, 0), SM_EL_NONE);
	assert_true(e.split);
	assert_non_null(strstr(e.why, "set the same sm_key"));
}

static void sets(void **st)
{
	struct sm_elect e;
	uint16_t status;
	struct sm_sm_info master = { .guid = 0x99, .priority = 8, .state = SM_SMSTATE_MASTER };
	struct sm_sm_info standby = { .guid = 0x99, .priority = 8, .state = SM_SMSTATE_STANDBY };
	(void)st;
	init(&e, 5, 0);
	struct sm_elect_peer m = peer(0x99, 8, SM_SMSTATE_MASTER, 7);
	sm_elect_peer_seen(&e, &m, 0);
	sm_elect_discovered(&e, 0);
	/* HANDOVER from a standby: illegal */
	assert_int_equal(sm_elect_set(&e, SM_SMINFO_HANDOVER, &standby, 7, 1 * 3000 * MS, &status), -EINVAL);
	assert_int_equal(status, SM_MAD_STATUS_INVALID_FIELD);
	/* DISABLE then STANDBY from the master */
	assert_int_equal(sm_elect_set(&e, SM_SMINFO_DISABLE, &master, 7, 2 * 3000 * MS, &status), SM_EL_NONE);
	assert_int_equal(e.state, SM_SMSTATE_NOT_ACTIVE);
	assert_int_equal(sm_elect_tick(&e, 7000 * MS, NULL), SM_EL_NONE);   /* no polls */
	assert_int_equal(sm_elect_set(&e, SM_SMINFO_HANDOVER, &master, 7, 3 * 3000 * MS, &status), -EINVAL);
	assert_int_equal(sm_elect_set(&e, SM_SMINFO_STANDBY, &master, 7, 4 * 3000 * MS, &status), SM_EL_STANDBY);
	assert_int_equal(e.state, SM_SMSTATE_STANDBY);
	/* HANDOVER: master, acknowledge to the sender */
	assert_int_equal(sm_elect_set(&e, SM_SMINFO_HANDOVER, &master, 7, 5 * 3000 * MS, &status), SM_EL_ACK);
	assert_int_equal(e.state, SM_SMSTATE_MASTER);
	assert_int_equal(e.ack_lid, 7);
	/* ACKNOWLEDGE only from a standby, and only to a standby */
	assert_int_equal(sm_elect_set(&e, SM_SMINFO_ACKNOWLEDGE, &standby, 7, 6 * 3000 * MS, &status), -EINVAL);
	/* unknown modifier */
	assert_int_equal(sm_elect_set(&e, 9, &master, 7, 7 * 3000 * MS, &status), -EINVAL);
	assert_true(e.refused_illegal >= 4);
}

static void bad_input(void **st)
{
	struct sm_elect e;
	uint16_t status;
	(void)st;
	init(&e, 5, 0x5eed);
	/* wrong SM_Key: ignored in discovery, refused as a Set */
	struct sm_elect_peer m = peer(0x99, 8, SM_SMSTATE_MASTER, 7);
	m.sm_key = 0xbad;
	assert_int_equal(sm_elect_peer_seen(&e, &m, 0), -EACCES);
	assert_int_equal(sm_elect_discovered(&e, 0), SM_EL_TAKEOVER);
	struct sm_sm_info in = { .guid = 0x99, .sm_key = 0xbad, .priority = 8, .state = SM_SMSTATE_MASTER };
	assert_int_equal(sm_elect_set(&e, SM_SMINFO_STANDBY, &in, 7, 0, &status), -EACCES);
	assert_int_not_equal(status, 0);
	assert_int_equal(e.refused_key, 2);
	/* our own GUID */
	m = peer(OURS, 15, SM_SMSTATE_MASTER, 7);
	m.sm_key = 0x5eed;
	assert_int_equal(sm_elect_peer_seen(&e, &m, 0), -EEXIST);
	assert_int_equal(e.state, SM_SMSTATE_MASTER);
	/* impossible state / priority */
	m = peer(0x98, 16, SM_SMSTATE_MASTER, 7);
	m.sm_key = 0x5eed;
	assert_int_equal(sm_elect_peer_seen(&e, &m, 0), -EINVAL);
	m = peer(0x98, 3, 7, 7);
	m.sm_key = 0x5eed;
	assert_int_equal(sm_elect_peer_seen(&e, &m, 0), -EINVAL);
	/* a peer toggling every 100 ms: damped after a few changes, never two masters */
	init(&e, 5, 0);
	sm_elect_discovered(&e, 0);
	int damped = 0;
	for (int i = 0; i < 20; i++) {
		struct sm_elect_peer f = peer(0x42, 1, i % 2 ? SM_SMSTATE_MASTER : SM_SMSTATE_STANDBY, 9);
		damped += sm_elect_peer_seen(&e, &f, (uint64_t)i * 100 * MS) == -EBUSY;
		assert_int_equal(e.state, SM_SMSTATE_MASTER);
	}
	assert_true(damped >= 10);
	assert_true(e.damped >= 10);
	/* after the damping time it is heard again */
	struct sm_elect_peer f = peer(0x42, 1, SM_SMSTATE_STANDBY, 9);
	assert_int_equal(sm_elect_peer_seen(&e, &f, 100000 * MS), SM_EL_NONE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(better_order), cmocka_unit_test(discovery),
		cmocka_unit_test(poll_and_takeover), cmocka_unit_test(handover),
		cmocka_unit_test(sets), cmocka_unit_test(bad_input),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
