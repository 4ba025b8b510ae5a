/* SPDX-License-Identifier: MIT */
/*
 * The election state machine (smd/sm/election.c, issue 15) on an injected
 * clock: discovery ends MASTER or STANDBY by priority then GUID; a standby
 * polls, retries a miss at once and takes over after `retries` misses;
 * a master hands over to a better SM and programs nothing until it is
 * acknowledged, however late (never two masters programming); late poll
 * answers keep a slow master (no takeover); SubnSet(SMInfo) legality; bad input
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
	assert_int_equal(sm_elect_handover_result(&e, 0x77, 0, 1 * MS), SM_EL_STANDBY);
	assert_int_equal(e.state, SM_SMSTATE_STANDBY);
	assert_int_equal(e.master.guid, 0x77);
	/* refused handover: stay master */
	init(&e, 5, 0);
	sm_elect_discovered(&e, 0);
	sm_elect_peer_seen(&e, &b, 0);
	assert_int_equal(sm_elect_handover_result(&e, 0x77, SM_MAD_STATUS_INVALID_FIELD, 0), SM_EL_NONE);
	assert_int_equal(e.state, SM_SMSTATE_MASTER);
	assert_false(sm_elect_programs(&e));   /* refused (a master mid-cycle): tried again on the timer */
	/* unanswered handover: sent again `retries` times, then we program again */
	uint64_t t = 0;
	int act, tries = 0;
	while ((act = sm_elect_tick(&e, t = sm_elect_next(&e), NULL)) == SM_EL_HANDOVER)
		tries++;
	assert_int_equal(act, SM_EL_RESUME);
	assert_int_equal(tries, 2);
	assert_int_equal(e.handover.guid, 0);
	assert_int_equal(e.state, SM_SMSTATE_MASTER);
	assert_true(sm_elect_programs(&e));
	/* an answer from another SM is no acknowledgement */
	assert_int_equal(sm_elect_handover_result(&e, 0x78, 0, t), SM_EL_NONE);
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

static void init_as(struct sm_elect *e, uint64_t guid, uint8_t prio)
{
	struct sm_elect_cfg c = { .guid = guid, .priority = prio, .poll_ms = 500, .poll_timeout_ms = 200,
				  .retries = 3 };
	sm_elect_init(e, &c);
}

static void one_master(const struct sm_elect *a, const struct sm_elect *b)
{
	assert_false(sm_elect_programs(a) && sm_elect_programs(b));
}

/*
 * Master A (priority 1) hands over to B (priority 9, its standby); B's
 * answers come late (after A's HANDOVER timer) or not at all, then as a
 * Set(ACKNOWLEDGE). After every event at most one of them programs.
 */
static void late_ack(void **st)
{
	struct sm_elect a, b;
	struct sm_sm_info a_in = { .guid = 0x10, .priority = 1, .state = SM_SMSTATE_MASTER };
	uint16_t status;
	(void)st;
	for (int lost = 0; lost < 2; lost++) {
		init_as(&a, 0x10, 1);
		init_as(&b, 0x77, 9);
		assert_int_equal(sm_elect_discovered(&a, 0), SM_EL_TAKEOVER);
		struct sm_elect_peer pa = peer(0x10, 1, SM_SMSTATE_MASTER, 1);
		sm_elect_peer_seen(&b, &pa, 0);
		assert_int_equal(sm_elect_discovered(&b, 0), SM_EL_STANDBY);
		one_master(&a, &b);
		struct sm_elect_peer pb = peer(0x77, 9, SM_SMSTATE_STANDBY, 12);
		assert_int_equal(sm_elect_peer_seen(&a, &pb, 0), SM_EL_HANDOVER);
		assert_int_equal(a.state, SM_SMSTATE_MASTER);   /* stays master... */
		assert_false(sm_elect_programs(&a));             /* ...but programs nothing */
		one_master(&a, &b);
		/* B takes the HANDOVER at 50 ms: master at once */
		assert_int_equal(sm_elect_set(&b, SM_SMINFO_HANDOVER, &a_in, 1, 50 * MS, &status), SM_EL_ACK);
		assert_true(sm_elect_programs(&b));
		one_master(&a, &b);
		/* its answer is late: A's timer sends the HANDOVER again, still not programming */
		uint64_t t = sm_elect_next(&a);
		assert_int_equal(t, 200 * MS);
		assert_int_equal(sm_elect_tick(&a, t, NULL), SM_EL_HANDOVER);
		one_master(&a, &b);
		/* B, master now, takes it again and answers again */
		assert_int_equal(sm_elect_set(&b, SM_SMINFO_HANDOVER, &a_in, 1, t + 10 * MS, &status), SM_EL_ACK);
		assert_int_equal(status, 0);
		one_master(&a, &b);
		if (!lost) {
			/* the first answer arrives at 350 ms, after its timer: honoured */
			assert_int_equal(sm_elect_handover_result(&a, 0x77, 0, 350 * MS), SM_EL_STANDBY);
			assert_int_equal(a.state, SM_SMSTATE_STANDBY);
			assert_int_equal(a.master.guid, 0x77);
			assert_int_equal(a.master.lid, 12);
			one_master(&a, &b);
			/* the second answer and B's ACKNOWLEDGE change nothing */
			assert_int_equal(sm_elect_handover_result(&a, 0x77, 0, 360 * MS), SM_EL_NONE);
			struct sm_sm_info b_ack = { .guid = 0x77, .priority = 9, .state = SM_SMSTATE_STANDBY };
			assert_int_equal(sm_elect_set(&a, SM_SMINFO_ACKNOWLEDGE, &b_ack, 12, 370 * MS, &status),
					 SM_EL_NONE);
			assert_int_equal(a.state, SM_SMSTATE_STANDBY);
			assert_int_equal(a.late_acks, 0);   /* acknowledged while we still waited */
			continue;
		}
		/* every answer lost but B's ACKNOWLEDGE (a Set of its own), which comes late too */
		struct sm_sm_info b_ack = { .guid = 0x77, .priority = 9, .state = SM_SMSTATE_STANDBY };
		assert_int_equal(sm_elect_set(&a, SM_SMINFO_ACKNOWLEDGE, &b_ack, 12, 390 * MS, &status),
				 SM_EL_STANDBY);
		assert_int_equal(status, 0);
		assert_int_equal(a.state, SM_SMSTATE_STANDBY);
		assert_int_equal(a.master.guid, 0x77);
		one_master(&a, &b);
		/* A polls B as its master from now on */
		assert_int_equal(sm_elect_tick(&a, sm_elect_next(&a), NULL), SM_EL_POLL);
	}
	/* nothing at all comes back (B gone): A programs again after its tries... */
	init_as(&a, 0x10, 1);
	sm_elect_discovered(&a, 0);
	struct sm_elect_peer pb = peer(0x77, 9, SM_SMSTATE_STANDBY, 12);
	sm_elect_peer_seen(&a, &pb, 0);
	int act;
	while ((act = sm_elect_tick(&a, sm_elect_next(&a), NULL)) == SM_EL_HANDOVER)
		;
	assert_int_equal(act, SM_EL_RESUME);
	assert_true(sm_elect_programs(&a));
	/* ...and an acknowledgement after that still makes it stand by */
	assert_int_equal(sm_elect_handover_result(&a, 0x77, 0, 5000 * MS), SM_EL_STANDBY);
	assert_int_equal(a.late_acks, 1);
	assert_int_equal(a.master.guid, 0x77);
}

/*
 * A loaded master answers every poll, but 450 ms late (beyond the 200 ms
 * poll timer): late answers show it alive, no takeover in 30 s. Then it
 * dies: an error answer (ibsim's 110) takes over at once; silence after
 * our grown timer.
 */
static int run_slow(struct sm_elect *e, uint64_t *t, uint64_t until, uint64_t delay, bool dead)
{
	struct sm_elect_peer m = peer(0x99, 8, SM_SMSTATE_MASTER, 7);
	uint64_t due[64];
	unsigned id[64], head = 0, tail = 0, sent = 0;

	while (*t < until) {
		uint64_t next = sm_elect_next(e);
		int act = SM_EL_NONE;
		if (head < tail && due[head % 64] <= next) {   /* an answer comes first */
			*t = due[head % 64];
			unsigned k = id[head++ % 64];
			if (dead)
				act = sm_elect_poll_result(e, NULL, 110, *t);
			else if (k == sent && e->poll_deadline_us)
				act = sm_elect_poll_result(e, &m, 0, *t);
			else
				act = sm_elect_poll_late(e, &m, 0, *t);
		} else {
			*t = next;
			act = sm_elect_tick(e, *t, NULL);
			if (act == SM_EL_POLL && tail - head < 64) {
				due[tail % 64] = *t + (dead ? 0 : delay);
				id[tail++ % 64] = ++sent;
			}
		}
		if (act == SM_EL_TAKEOVER)
			return act;
		assert_int_equal(e->state, SM_SMSTATE_STANDBY);
	}
	return SM_EL_NONE;
}

static void slow_polls(void **st)
{
	struct sm_elect e;
	uint64_t t = 0;
	(void)st;
	init(&e, 5, 0);
	struct sm_elect_peer m = peer(0x99, 8, SM_SMSTATE_MASTER, 7);
	sm_elect_peer_seen(&e, &m, 0);
	sm_elect_discovered(&e, 0);
	assert_int_equal(run_slow(&e, &t, 30000 * MS, 450 * MS, false), SM_EL_NONE);
	assert_int_equal(e.takeovers, 0);
	assert_true(e.late_answers > 0);
	assert_true(e.poll_misses > 0);   /* the timer did run out: the late answers saved it */
	/* dead: error answers take over at once (3 polls at the same instant) */
	uint64_t t0 = t;
	assert_int_equal(run_slow(&e, &t, t + 10000 * MS, 0, true), SM_EL_TAKEOVER);
	assert_true(t - t0 <= 500 * MS + 4 * 200 * MS);
	/* silent: after three of our timers, grown with the round trip but at most 2 x 200 ms */
	init(&e, 5, 0);
	sm_elect_peer_seen(&e, &m, 0);
	sm_elect_discovered(&e, 0);
	t = 0;
	assert_int_equal(run_slow(&e, &t, 20000 * MS, 450 * MS, false), SM_EL_NONE);
	t0 = t;
	int act = SM_EL_NONE;
	while (act != SM_EL_TAKEOVER && t < t0 + 10000 * MS) {
		t = sm_elect_next(&e) > t ? sm_elect_next(&e) : t;
		act = sm_elect_tick(&e, t, NULL);
	}
	assert_int_equal(act, SM_EL_TAKEOVER);
	assert_true(t - t0 <= 500 * MS + 3 * 2 * 200 * MS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(better_order), cmocka_unit_test(discovery),
		cmocka_unit_test(poll_and_takeover), cmocka_unit_test(handover),
		cmocka_unit_test(sets), cmocka_unit_test(bad_input),
		cmocka_unit_test(late_ack), cmocka_unit_test(slow_polls),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
