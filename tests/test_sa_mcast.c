/* SPDX-License-Identifier: MIT */
/*
 * tests/test_sa_mcast: the SA's multicast groups (smd/sa/mcgroup.c) and
 * MCMemberRecord (smd/sa/mcmember.c): create, join, leave, query, MLIDs
 * reused (100,000 send-only create/leave cycles use one MLID), the IPoIB
 * broadcast group of the default partition, traps 66/67, pruning, the set
 * handed to the SM, and hostile requests (right status, nothing kept).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mad/codec.h"
#include "model/fabric.h"
#include "model/partitions.h"
#include "sa/dyn.h"
#include "sa/query.h"
#include "sa/records.h"
#include "sm/mcast.h"
#include "sm/snapshot.h"

#define PREFIX 0xfe80000000000000ull
#define B(x) (1ull << (x))
#define JOIN_CM (B(0) | B(1) | B(16))
#define CREATE_CM (JOIN_CM | B(2) | B(6) | B(7) | B(12) | B(13))
#define MTU_CM (B(4) | B(5))
#define RATE_CM (B(8) | B(9))
#define SMKEY 0x5eCull

static const uint8_t BCAST[16] = { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff };

/*
 * Switch 0x100 (LID 1), CAs with port GUIDs 0x11 (LID 5), 0x21 (LID 6),
 * 0x31 (LID 7). PortInfo: 4x SDR (10 Gb/s), MTUCap 2048; 0x31 is 1x SDR
 * with MTU 512 (it carries no group of the defaults).
 */
static const struct sm_snapshot *snap_make(void)
{
	struct sm_fabric *f = sm_fabric_new();
	int64_t sw, ca;

	assert_non_null(f);
	sw = sm_fabric_add_node(f, SM_NODE_SWITCH, 0x100, 8, 0, 0);
	assert_true(sw >= 0);
	assert_int_equal(sm_fabric_set_lid(f, (uint32_t)sw, 0, 1, 0), 0);
	for (unsigned i = 0; i < 3; i++) {
		uint64_t g = 0x10 * (i + 1);
		ca = sm_fabric_add_node(f, SM_NODE_CA, g, 1, 0, 0);
		assert_true(ca >= 0);
		assert_int_equal(sm_fabric_set_port_guid(f, (uint32_t)ca, 1, g + 1), 0);
		assert_int_equal(sm_fabric_link(f, (uint32_t)sw, i + 1, (uint32_t)ca, 1), 0);
		assert_int_equal(sm_fabric_set_lid(f, (uint32_t)ca, 1, (uint16_t)(5 + i), 0), 0);
		sm_fabric_port_checked(f, (uint32_t)ca, 1)->state = SM_PORT_ACTIVE;
	}
	uint32_t n = f->n_ports;
	struct sm_port_info *pi = calloc(n, sizeof(*pi));
	uint8_t *ok = calloc(n, 1);
	assert_true(pi && ok);
	for (uint32_t i = 0; i < n; i++) {
		bool slow = f->ports[i].guid == 0x31;
		pi[i].link_width_active = slow ? 1 : 2;
		pi[i].link_speed_active = 1;
		pi[i].mtu_cap = slow ? 2 : 4;
		ok[i] = 1;
	}
	struct sm_snapshot *s = sm_snapshot_new(0, f, NULL);
	assert_non_null(s);
	s->pi = pi, s->pi_ok = ok, s->attr_ports = n;
	s->sm_lid = 5;
	s->sm_port = sm_fabric_find_port(f, 0x11);
	s->subnet_prefix = PREFIX;
	s->up = true;
	return s;
}

static const struct sm_snapshot *snap;
static struct sm_sa_ans ans;

static int setup(void **st)
{
	(void)st;
	snap = snap_make();
	return 0;
}

static int teardown(void **st)
{
	(void)st;
	sm_snapshot_unref(snap);
	sm_sa_ans_free(&ans);
	return 0;
}

static uint16_t mq(struct sm_sa_dyn *d, uint8_t method, uint64_t cm, const uint8_t *rec, uint16_t lid, bool trusted)
{
	struct sm_sa_self self = { .port_guid = 0x11, .sm_key = SMKEY, .subnet_timeout = 18 };
	struct sm_sa_ctx ctx = { .snap = snap, .self = &self, .dyn = d };
	uint8_t data[SM_SA_DATA_SIZE] = { 0 };
	struct sm_sa_req r = { .data = data, .len = SM_SA_DATA_SIZE };

	memcpy(data, rec, SM_SA_MCMEMBER_REC_SIZE);
	r.hdr = (struct sm_sa_hdr){ .base_version = 1, .mgmt_class = 3, .class_version = 2, .method = method,
				    .attr_id = SM_SA_ATTR_MCMEMBER_RECORD, .comp_mask = cm,
				    .sm_key = trusted ? SMKEY : 0 };
	r.from.lid = lid;
	r.from.qpn = 1;
	assert_int_equal(sm_sa_query(&ctx, &r, &ans), 0);
	return ans.status;
}

/* A create/join record: mgid (NULL: 0), port, JoinState, IPoIB's Q_Key, P_Key 0xffff, SL 0. */
static void mrec(uint8_t rec[SM_SA_MCMEMBER_REC_SIZE], const uint8_t *mgid, uint64_t port, uint8_t join)
{
	memset(rec, 0, SM_SA_MCMEMBER_REC_SIZE);
	if (mgid)
		memcpy(rec, mgid, 16);
	sm_sa_gid_make(rec + 16, PREFIX, port);
	sm_sa_put32(rec + 32, 0x0B1B);
	rec[40] = rec[41] = 0xff;
	rec[48] = (uint8_t)(0x20 | join);
}

static void drain(struct sm_sa_dyn *d, uint16_t want0, uint16_t want1)
{
	struct sm_sa_mc_event ev[SM_SA_MC_EVENTS];
	unsigned n = sm_sa_dyn_mc_events(d, ev, SM_SA_MC_EVENTS);

	assert_int_equal(n, (want0 != 0) + (want1 != 0));
	if (want0)
		assert_int_equal(ev[0].trap, want0);
	if (want1)
		assert_int_equal(ev[1].trap, want1);
}

static void test_sendonly_cycles(void **st)
{
	(void)st;
	struct sm_sa_dyn *d;
	uint8_t rec[SM_SA_MCMEMBER_REC_SIZE], mgid[16];

	assert_int_equal(sm_sa_dyn_new(NULL, &d), 0);
	/* send-only full members create a group (MGID from the SA) and leave it: 100,000 times, one MLID */
	for (unsigned i = 0; i < 100000; i++) {
		mrec(rec, NULL, 0x11, SM_SA_MC_SENDONLY_FULL);
		assert_int_equal(mq(d, SM_SA_SET, CREATE_CM, rec, 5, false), 0);
		assert_int_equal(ans.n, 1);
		memcpy(mgid, ans.buf, 16);
		assert_true(mgid[0] == 0xff && mgid[1] == 0x12 && mgid[2] == 0xa0 && mgid[3] == 0x1b);
		assert_int_equal(sm_sa_get16(ans.buf + 36), 0xC000);
		assert_int_equal(ans.buf[48], 0x20 | SM_SA_MC_SENDONLY_FULL);
		mrec(rec, mgid, 0x11, SM_SA_MC_SENDONLY_FULL);
		assert_int_equal(mq(d, SM_SA_DELETE, JOIN_CM, rec, 5, false), 0);
		assert_int_equal(ans.buf[48] & 0xF, 0);
		drain(d, SM_TRAP_MC_CREATE, SM_TRAP_MC_DELETE);
	}
	assert_int_equal(sm_sa_dyn_groups(d), 0);
	assert_int_equal(sm_sa_dyn_mlids_used(d), 0);
	assert_int_equal(sm_sa_dyn_mc_members(d), 0);
	assert_int_equal(d->mc_created, 100000);
	assert_int_equal(d->mc_deleted, 100000);

	/* send-only non-members of a group with a full member: the group and its MLID stay */
	mrec(rec, NULL, 0x11, SM_SA_MC_FULL);
	assert_int_equal(mq(d, SM_SA_SET, CREATE_CM, rec, 5, false), 0);
	memcpy(mgid, ans.buf, 16);
	for (unsigned i = 0; i < 100000; i++) {
		mrec(rec, mgid, 0x21, SM_SA_MC_SENDONLY);
		assert_int_equal(mq(d, SM_SA_SET, JOIN_CM, rec, 6, false), 0);
		assert_int_equal(mq(d, SM_SA_DELETE, JOIN_CM, rec, 6, false), 0);
	}
	assert_int_equal(sm_sa_dyn_groups(d), 1);
	assert_int_equal(sm_sa_dyn_mlids_used(d), 1);
	assert_int_equal(sm_sa_dyn_mc_members(d), 1);
	sm_sa_dyn_free(d);
}

static void test_broadcast_group(void **st)
{
	(void)st;
	struct sm_sa_dyn *d;
	struct sm_partitions *parts;
	uint8_t rec[SM_SA_MCMEMBER_REC_SIZE];

	assert_int_equal(sm_sa_dyn_new(NULL, &d), 0);
	assert_int_equal(sm_partitions_default(&parts), 0);
	assert_int_equal(sm_sa_dyn_mc_config(d, parts, 18), 0);
	assert_int_equal(sm_sa_dyn_groups(d), 1);
	const struct sm_sa_mcg *g = sm_sa_mc_find(d, BCAST);
	assert_non_null(g);
	/* OpenSM's defaults: Q_Key 0x0B1B, MLID 0xC000, MTU 2048, rate 10 Gb/s, PacketLifeTime 18, scope 2 */
	static const uint8_t want[SM_SA_MCMEMBER_REC_SIZE] = {
		0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff,
		[32] = 0, 0, 0x0b, 0x1b, 0xc0, 0x00, 0x84, 0, 0xff, 0xff, 0x83, 0x92, 0, 0, 0, 0, 0x21,
	};
	assert_memory_equal(g->rec, want, SM_SA_MCMEMBER_REC_SIZE);
	/* the start set matches the first set of an SA so configured */
	struct sm_mc_set *s0, *s1 = sm_sa_dyn_mc_set(d, 0);
	assert_int_equal(sm_sa_mc_start_set(parts, 18, 0, &s0), 0);
	assert_true(s0->gen == 1 && s1->gen == 1 && s0->n_groups == 1 && s1->n_groups == 1);
	assert_true(s0->groups[0].mlid == 0xC000 && !s0->groups[0].n_members && s0->groups[0].pkey == 0xffff);
	assert_true(s0->groups[0].mtu == 4 && s0->groups[0].rate == 3 && s0->groups[0].scope == 2);
	sm_mc_set_unref(s0);
	sm_mc_set_unref(s1);

	/* IPoIB joins as the kernel does: MGID, PortGID, P_Key, JoinState */
	mrec(rec, BCAST, 0x11, SM_SA_MC_FULL);
	assert_int_equal(mq(d, SM_SA_SET, JOIN_CM | B(7), rec, 5, false), 0);
	assert_int_equal(ans.buf[38], 0x84);
	assert_int_equal(ans.buf[42], 0x83);
	assert_int_equal(ans.buf[43], 0x80 | 18);
	assert_int_equal(ans.buf[48], 0x21);
	assert_int_equal(sm_sa_get64(ans.buf + 24), 0x11);
	drain(d, SM_TRAP_MC_CREATE, 0);
	mrec(rec, BCAST, 0x21, SM_SA_MC_NON);
	assert_int_equal(mq(d, SM_SA_SET, JOIN_CM, rec, 6, false), 0);
	/* joined again: the bits add up, no second trap */
	mrec(rec, BCAST, 0x21, SM_SA_MC_SENDONLY);
	assert_int_equal(mq(d, SM_SA_SET, JOIN_CM, rec, 6, false), 0);
	assert_int_equal(ans.buf[48], 0x20 | SM_SA_MC_NON | SM_SA_MC_SENDONLY);
	drain(d, 0, 0);
	/* the port of 0x31 cannot carry 2048 bytes at 10 Gb/s */
	mrec(rec, BCAST, 0x31, SM_SA_MC_FULL);
	assert_int_equal(mq(d, SM_SA_SET, JOIN_CM, rec, 7, false), SM_SA_STATUS_REQ_INVALID);

	/* GetTable: untrusted, one record per group without PortGID/JoinState; trusted, one per member */
	memset(rec, 0, sizeof(rec));
	assert_int_equal(mq(d, SM_SA_GET_TABLE, 0, rec, 7, false), 0);
	assert_int_equal(ans.n, 1);
	assert_int_equal(sm_sa_get64(ans.buf + 24), 0);
	assert_int_equal(ans.buf[48], 0x20);
	assert_int_equal(mq(d, SM_SA_GET_TABLE, 0, rec, 7, true), 0);
	assert_int_equal(ans.n, 2);
	assert_int_equal(sm_sa_get64(ans.buf + 24), 0x11);
	assert_int_equal(sm_sa_get64(ans.buf + SM_SA_MCMEMBER_REC_SIZE + 24), 0x21);
	/* by PortGID */
	sm_sa_gid_make(rec + 16, PREFIX, 0x21);
	assert_int_equal(mq(d, SM_SA_GET, B(1), rec, 7, true), 0);
	assert_int_equal(ans.buf[48], 0x26);
	/* by MLID, by a Q_Key that is not the group's */
	sm_sa_put16(rec + 36, 0xC000);
	assert_int_equal(mq(d, SM_SA_GET, B(3), rec, 7, false), 0);
	sm_sa_put32(rec + 32, 0x1234);
	assert_int_equal(mq(d, SM_SA_GET, B(3) | B(2), rec, 7, false), SM_SA_STATUS_NO_RECORDS);

	/* the full member leaves: trap 67, the non-member goes too, the well-known group stays */
	mrec(rec, BCAST, 0x11, SM_SA_MC_FULL);
	assert_int_equal(mq(d, SM_SA_DELETE, JOIN_CM, rec, 5, false), 0);
	drain(d, SM_TRAP_MC_DELETE, 0);
	assert_int_equal(sm_sa_dyn_groups(d), 1);
	assert_int_equal(sm_sa_dyn_mc_members(d), 0);
	assert_int_equal(sm_sa_get16(sm_sa_mc_find(d, BCAST)->rec + 36), 0xC000);
	sm_sa_dyn_free(d);
	sm_partitions_free(parts);
}

static void test_hostile(void **st)
{
	(void)st;
	struct sm_sa_dyn *d;
	struct sm_sa_dyn_limits lim = { .max_groups = 8, .max_members = 12 };
	uint8_t rec[SM_SA_MCMEMBER_REC_SIZE], mgid[16] = { 0xff, 0x15, 0x12, 0x34, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };

	assert_int_equal(sm_sa_dyn_new(&lim, &d), 0);
	/* MGIDs: not multicast, scope 0, reserved flags, the SA's signature at link-local scope */
	static const struct { uint8_t b0, b1, b2, b3; } bad[] = {
		{ 0xfe, 0x15, 0x12, 0x34 }, { 0xff, 0x10, 0x12, 0x34 }, { 0xff, 0x35, 0x12, 0x34 },
		{ 0xff, 0x12, 0xa0, 0x1b },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint8_t m[16];
		memcpy(m, mgid, 16);
		m[0] = bad[i].b0, m[1] = bad[i].b1, m[2] = bad[i].b2, m[3] = bad[i].b3;
		mrec(rec, m, 0x11, SM_SA_MC_FULL);
		assert_int_equal(mq(d, SM_SA_SET, CREATE_CM, rec, 5, false), SM_SA_STATUS_REQ_INVALID);
	}
	/* an IPoIB MGID of a partition whose broadcast group does not exist */
	uint8_t v6[16] = { 0xff, 0x12, 0x60, 0x1b, 0xff, 0xff, 0, 0, 0, 0, 0, 1, 0xff, 0, 0, 1 };
	mrec(rec, v6, 0x11, SM_SA_MC_FULL);
	assert_int_equal(mq(d, SM_SA_SET, CREATE_CM, rec, 5, false), SM_SA_STATUS_REQ_INVALID);
	/* components: no JoinState; a create without Q_Key; a create by a non-member or with no JoinState */
	mrec(rec, mgid, 0x11, SM_SA_MC_FULL);
	assert_int_equal(mq(d, SM_SA_SET, B(0) | B(1), rec, 5, false), SM_SA_STATUS_INSUFFICIENT_COMPONENTS);
	assert_int_equal(mq(d, SM_SA_DELETE, B(0) | B(1), rec, 5, false), SM_SA_STATUS_INSUFFICIENT_COMPONENTS);
	assert_int_equal(mq(d, SM_SA_SET, CREATE_CM & ~B(2), rec, 5, false), SM_SA_STATUS_INSUFFICIENT_COMPONENTS);
	mrec(rec, mgid, 0x11, SM_SA_MC_NON);
	assert_int_equal(mq(d, SM_SA_SET, CREATE_CM, rec, 5, false), SM_SA_STATUS_REQ_INVALID);
	mrec(rec, mgid, 0x11, 0);
	assert_int_equal(mq(d, SM_SA_SET, CREATE_CM, rec, 5, false), SM_SA_STATUS_REQ_INVALID);
	/* MTU and rate: out of range, more than the port carries */
	mrec(rec, mgid, 0x11, SM_SA_MC_FULL);
	rec[38] = 2 << 6 | 7;
	assert_int_equal(mq(d, SM_SA_SET, CREATE_CM | MTU_CM, rec, 5, false), SM_SA_STATUS_REQ_INVALID);
	rec[38] = 2 << 6 | 5;   /* exactly 4096: the port has 2048 */
	assert_int_equal(mq(d, SM_SA_SET, CREATE_CM | MTU_CM, rec, 5, false), SM_SA_STATUS_REQ_INVALID);
	rec[38] = 0 << 6 | 4;   /* more than 2048 */
	assert_int_equal(mq(d, SM_SA_SET, CREATE_CM | MTU_CM, rec, 5, false), SM_SA_STATUS_REQ_INVALID);
	rec[38] = 0;
	rec[42] = 2 << 6 | 6;   /* exactly 30 Gb/s: the port has 10 */
	assert_int_equal(mq(d, SM_SA_SET, CREATE_CM | RATE_CM, rec, 5, false), SM_SA_STATUS_REQ_INVALID);
	rec[42] = 2 << 6 | 1;
	assert_int_equal(mq(d, SM_SA_SET, CREATE_CM | RATE_CM, rec, 5, false), SM_SA_STATUS_REQ_INVALID);
	/* less than 4096: the port's 2048 */
	rec[42] = 0;
	rec[38] = 1 << 6 | 5;
	assert_int_equal(mq(d, SM_SA_SET, CREATE_CM | MTU_CM, rec, 5, false), 0);
	assert_int_equal(ans.buf[38], 0x84);
	/* a P_Key nobody is a member of (only the default partition) */
	memcpy(rec, mgid, 16);
	rec[15] = 0x77;
	sm_sa_put16(rec + 40, 0x8001);
	assert_int_equal(mq(d, SM_SA_SET, CREATE_CM, rec, 5, false), SM_SA_STATUS_REQ_INVALID);
	sm_sa_put16(rec + 40, 0x8000);
	assert_int_equal(mq(d, SM_SA_SET, CREATE_CM, rec, 5, false), SM_SA_STATUS_REQ_INVALID);
	/* PortGID: another subnet; a port we do not know */
	mrec(rec, mgid, 0x11, SM_SA_MC_FULL);
	rec[16] = 0xfd;
	assert_int_equal(mq(d, SM_SA_SET, JOIN_CM, rec, 5, false), SM_SA_STATUS_INVALID_GID);
	mrec(rec, mgid, 0x99, SM_SA_MC_FULL);
	assert_int_equal(mq(d, SM_SA_SET, CREATE_CM, rec, 5, false), SM_SA_STATUS_REQ_INVALID);
	/* a requester we do not know */
	mrec(rec, mgid, 0x11, SM_SA_MC_FULL);
	assert_int_equal(mq(d, SM_SA_SET, CREATE_CM, rec, 99, false), SM_SA_STATUS_REQ_INVALID);
	assert_int_equal(sm_sa_dyn_groups(d), 1);

	/* leaves: a group never joined, a member never joined, bits it does not have, another port's */
	uint8_t other[16];
	memcpy(other, mgid, 16);
	other[15] = 0x55;
	mrec(rec, other, 0x11, SM_SA_MC_FULL);
	assert_int_equal(mq(d, SM_SA_DELETE, JOIN_CM, rec, 5, false), SM_SA_STATUS_REQ_INVALID);
	mrec(rec, mgid, 0x21, SM_SA_MC_FULL);
	assert_int_equal(mq(d, SM_SA_DELETE, JOIN_CM, rec, 6, false), SM_SA_STATUS_REQ_INVALID);
	mrec(rec, mgid, 0x11, SM_SA_MC_FULL | SM_SA_MC_NON);
	assert_int_equal(mq(d, SM_SA_DELETE, JOIN_CM, rec, 5, false), SM_SA_STATUS_REQ_INVALID);
	mrec(rec, mgid, 0x11, SM_SA_MC_FULL);
	assert_int_equal(mq(d, SM_SA_DELETE, JOIN_CM, rec, 6, false), SM_SA_STATUS_REQ_INVALID);
	/* a join that disagrees with the group */
	mrec(rec, mgid, 0x21, SM_SA_MC_FULL);
	sm_sa_put32(rec + 32, 0x42);
	assert_int_equal(mq(d, SM_SA_SET, JOIN_CM | B(2), rec, 6, false), SM_SA_STATUS_REQ_INVALID);
	mrec(rec, mgid, 0x21, SM_SA_MC_FULL);
	rec[38] = 2 << 6 | 3;
	assert_int_equal(mq(d, SM_SA_SET, JOIN_CM | MTU_CM, rec, 6, false), SM_SA_STATUS_REQ_INVALID);
	assert_int_equal(sm_sa_dyn_mc_members(d), 1);

	/* a proxy join (0x21 for 0x31 is refused: 0x31 cannot carry the group) and its leave */
	mrec(rec, mgid, 0x31, SM_SA_MC_NON);
	assert_int_equal(mq(d, SM_SA_SET, JOIN_CM, rec, 6, false), SM_SA_STATUS_REQ_INVALID);
	mrec(rec, mgid, 0x21, SM_SA_MC_NON);
	assert_int_equal(mq(d, SM_SA_SET, JOIN_CM, rec, 5, false), 0);
	assert_int_equal(mq(d, SM_SA_GET, JOIN_CM, rec, 5, true), 0);
	assert_int_equal(ans.buf[49], 0x80);
	assert_int_equal(mq(d, SM_SA_DELETE, JOIN_CM, rec, 7, false), 0);   /* any port of the partition */

	/* a join storm: 8 groups at most, 12 members at most; nothing left behind */
	unsigned ok = 0, full = 0;
	for (unsigned i = 0; i < 64; i++) {
		mrec(rec, NULL, 0x11 + 0x10 * (i % 2), SM_SA_MC_FULL);
		uint16_t s = mq(d, SM_SA_SET, CREATE_CM, rec, (uint16_t)(5 + i % 2), false);
		assert_true(s == 0 || s == SM_SA_STATUS_NO_RESOURCES);
		ok += !s, full += s == SM_SA_STATUS_NO_RESOURCES;
	}
	assert_int_equal(ok, 7);
	assert_int_equal(sm_sa_dyn_groups(d), 8);
	assert_int_equal(sm_sa_dyn_mlids_used(d), 8);
	for (size_t i = 0; i < d->n_groups; i++)
		for (uint64_t p = 0x11; p <= 0x21; p += 0x10) {
			mrec(rec, d->groups[i].rec, p, SM_SA_MC_NON);
			uint16_t s = mq(d, SM_SA_SET, JOIN_CM, rec, p == 0x11 ? 5 : 6, false);
			assert_true(s == 0 || s == SM_SA_STATUS_NO_RESOURCES);
		}
	assert_int_equal(sm_sa_dyn_mc_members(d), 12);
	sm_sa_dyn_free(d);
}

/*
 * The snapshot of snap_make with P_Key tables as the P_Key phase leaves them
 * for partition 2 (0x11 full, 0x31 limited) beside the default partition
 * (0xFFFF), and 0x21 alone in partition 3.
 */
static const struct sm_snapshot *snap_pkeys(void)
{
	struct sm_snapshot *s = (struct sm_snapshot *)(uintptr_t)snap_make();
	struct sm_pkey_tables *pk = calloc(1, sizeof(*pk));
	uint32_t n = s->fabric->n_ports;

	assert_non_null(pk);
	pk->n_ports = n;
	pk->at = calloc(n + 1, sizeof(*pk->at));
	pk->tab = calloc((size_t)n * 32, sizeof(*pk->tab));
	assert_true(pk->at && pk->tab);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t g = s->fabric->ports[i].guid;
		uint16_t *t = pk->tab + pk->at[i];

		pk->at[i + 1] = pk->at[i];
		if (g != 0x11 && g != 0x21 && g != 0x31)
			continue;
		pk->at[i + 1] += 32;
		t[0] = g == 0x21 ? 0x8003 : 0xFFFF;
		t[1] = g == 0x11 ? 0x8002 : g == 0x31 ? 0x0002 : 0;
	}
	sm_snapshot_take_pkeys(s, &pk);
	return s;
}

static void test_partitions_and_prune(void **st)
{
	(void)st;
	struct sm_sa_dyn *d;
	const struct sm_snapshot *plain = snap;

	snap = snap_pkeys();
	struct sm_part_member mem[2] = { { .who = SM_PART_WHO_GUID, .guid = 0x11, .m = SM_PART_FULL },
					 { .who = SM_PART_WHO_GUID, .guid = 0x31, .m = SM_PART_LIMITED } };
	struct sm_part_mgroup mg = { .mgid = { 0xff, 0x12, 0x40, 0x1b, 0x80, 0x02, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff },
				     .ipoib = true, .mtu = 2, .rate = 2, .scope = 2, .qkey = 0x0B1B };
	struct sm_partition p = { .name = "p2", .pkey = 2, .ipoib = true, .defmember = SM_PART_LIMITED,
				  .members = mem, .n_members = 2, .mgroups = &mg, .n_mgroups = 1 };
	struct sm_partitions parts = { .file = "test", .v = &p, .n = 1 };
	uint8_t rec[SM_SA_MCMEMBER_REC_SIZE];

	assert_int_equal(sm_sa_dyn_new(NULL, &d), 0);
	assert_int_equal(sm_sa_dyn_mc_config(d, &parts, 18), 0);
	/* 0x21 is no member of partition 2: it cannot join its group nor see it */
	mrec(rec, mg.mgid, 0x21, SM_SA_MC_FULL);
	assert_int_equal(mq(d, SM_SA_SET, JOIN_CM, rec, 6, false), SM_SA_STATUS_REQ_INVALID);
	memset(rec, 0, sizeof(rec));
	assert_int_equal(mq(d, SM_SA_GET_TABLE, 0, rec, 6, false), 0);
	assert_int_equal(ans.n, 0);
	assert_int_equal(mq(d, SM_SA_GET_TABLE, 0, rec, 7, false), 0);
	assert_int_equal(ans.n, 1);
	/* nor join 0x11 to it by proxy: they share no partition */
	mrec(rec, mg.mgid, 0x11, SM_SA_MC_FULL);
	assert_int_equal(mq(d, SM_SA_SET, JOIN_CM, rec, 6, false), SM_SA_STATUS_REQ_INVALID);
	assert_int_equal(mq(d, SM_SA_SET, JOIN_CM, rec, 5, false), 0);
	mrec(rec, mg.mgid, 0x31, SM_SA_MC_FULL);   /* the group is 512 bytes at 2.5 Gb/s: 0x31 carries it */
	assert_int_equal(mq(d, SM_SA_SET, JOIN_CM, rec, 7, false), 0);
	drain(d, SM_TRAP_MC_CREATE, 0);

	/* ports out of service leave their groups: 0x11 first, then 0x31 (the last full member) */
	uint64_t gen = d->mc_gen;
	const uint64_t cur1[] = { 0x21, 0x31 }, cur2[] = { 0x21 };
	assert_int_equal(sm_sa_mc_prune(d, cur1, 2), 1);
	assert_true(d->mc_gen > gen);
	drain(d, 0, 0);
	assert_int_equal(sm_sa_mc_prune(d, cur2, 1), 1);
	drain(d, SM_TRAP_MC_DELETE, 0);
	assert_int_equal(sm_sa_dyn_groups(d), 1);   /* well known */
	assert_int_equal(sm_sa_dyn_mc_members(d), 0);
	sm_sa_dyn_free(d);
	sm_snapshot_unref(snap);
	snap = plain;
}

/* A partitions reload: the removed partition's group goes (trap 67, MLID freed), the new one's comes. */
static void test_reconfig(void **st)
{
	(void)st;
	struct sm_sa_dyn *d;
	struct sm_partitions *p1, *p2, *bad;
	char err[256];
	uint8_t rec[SM_SA_MCMEMBER_REC_SIZE];
	size_t made, deleted;
	static const char f1[] = "Default=0x7fff, ipoib : ALL=full ;\nT=0x0002, ipoib : ALL=full ;\n";
	static const char f2[] = "Default=0x7fff, ipoib : ALL=full ;\nU=0x0003, ipoib : ALL=full ;\n";
	static const uint8_t t2[16] = { 0xff, 0x12, 0x40, 0x1b, 0x80, 0x02, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff };
	static const uint8_t t3[16] = { 0xff, 0x12, 0x40, 0x1b, 0x80, 0x03, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff };

	assert_int_equal(sm_partitions_parse(f1, sizeof(f1) - 1, "p1", &p1, err, sizeof(err)), 0);
	assert_int_equal(sm_partitions_parse(f2, sizeof(f2) - 1, "p2", &p2, err, sizeof(err)), 0);
	assert_int_not_equal(sm_partitions_parse("X=0xzz : ALL ;", 14, "bad", &bad, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "bad:1"));
	assert_int_equal(sm_sa_dyn_new(NULL, &d), 0);
	assert_int_equal(sm_sa_dyn_mc_config(d, p1, 18), 0);
	assert_int_equal(sm_sa_dyn_groups(d), 2);
	/* a host group and a member of T's group: the member goes with it, the host group stays */
	mrec(rec, NULL, 0x11, SM_SA_MC_FULL);
	sm_sa_put16(rec, 0xff15);
	rec[15] = 9;
	sm_sa_put16(rec + 36, 0);
	assert_int_equal(sm_sa_dyn_group_add(d, rec), 0);
	mrec(rec, t2, 0x11, SM_SA_MC_FULL);
	assert_int_equal(sm_sa_dyn_group_add(d, rec), 0);
	drain(d, SM_TRAP_MC_CREATE, SM_TRAP_MC_CREATE);
	uint16_t mlid2 = sm_sa_get16(sm_sa_mc_find(d, t2)->rec + 36);
	/* the same file again changes nothing */
	uint64_t gen = d->mc_gen;
	assert_int_equal(sm_sa_dyn_mc_reconfig(d, p1, 18, &made, &deleted), 0);
	assert_int_equal(made + deleted, 0);
	assert_int_equal(d->mc_gen, gen);
	drain(d, 0, 0);
	assert_int_equal(sm_sa_dyn_mc_reconfig(d, p2, 18, &made, &deleted), 0);
	assert_int_equal(made, 1);
	assert_int_equal(deleted, 1);
	assert_true(d->mc_gen > gen);
	drain(d, SM_TRAP_MC_DELETE, 0);
	assert_null(sm_sa_mc_find(d, t2));
	assert_non_null(sm_sa_mc_find(d, t3));
	assert_true(sm_sa_mc_find(d, t3)->well_known);
	assert_int_equal(sm_sa_dyn_groups(d), 3);
	assert_int_equal(sm_sa_dyn_mc_members(d), 1);   /* the host group's */
	/* the freed MLID is the new group's */
	assert_int_equal(sm_sa_get16(sm_sa_mc_find(d, t3)->rec + 36), mlid2);
	assert_int_equal(sm_sa_dyn_mlids_used(d), 3);
	sm_sa_dyn_free(d);
	sm_partitions_free(p1);
	sm_partitions_free(p2);
}

static void test_set(void **st)
{
	(void)st;
	struct sm_sa_dyn *d;
	uint8_t rec[SM_SA_MCMEMBER_REC_SIZE], m1[16] = { 0xff, 0x15, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9 };
	uint8_t m2[16] = { 0xff, 0x15, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 };

	assert_int_equal(sm_sa_dyn_new(NULL, &d), 0);
	/* created in this order: m1 gets 0xC000, m2 0xC001, but m2 sorts first by MGID */
	mrec(rec, m1, 0x21, SM_SA_MC_FULL);
	assert_int_equal(mq(d, SM_SA_SET, CREATE_CM, rec, 6, false), 0);
	mrec(rec, m1, 0x11, SM_SA_MC_SENDONLY);
	assert_int_equal(mq(d, SM_SA_SET, JOIN_CM, rec, 5, false), 0);
	mrec(rec, m2, 0x11, SM_SA_MC_FULL);
	assert_int_equal(mq(d, SM_SA_SET, CREATE_CM | B(3), rec, 5, false), 0);   /* MLID 0: the lowest free */
	assert_memory_equal(d->groups[0].rec, m2, 16);
	struct sm_mc_set *s = sm_sa_dyn_mc_set(d, 3);
	assert_non_null(s);
	assert_true(s->plane == 3 && s->gen == d->mc_gen && s->n_groups == 2);
	assert_true(s->groups[0].mlid == 0xC000 && s->groups[1].mlid == 0xC001);
	assert_memory_equal(s->groups[0].mgid, m1, 16);
	assert_int_equal(s->groups[0].n_members, 2);
	assert_true(s->groups[0].members[0].port_guid == 0x11 && s->groups[0].members[0].join_state == SM_MC_SENDONLY);
	assert_true(s->groups[0].members[1].port_guid == 0x21 && s->groups[0].members[1].join_state == SM_MC_FULL);
	/* a requested free MLID is honoured */
	uint8_t m3[16] = { 0xff, 0x15, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3 };
	mrec(rec, m3, 0x11, SM_SA_MC_FULL);
	sm_sa_put16(rec + 36, 0xC123);
	assert_int_equal(mq(d, SM_SA_SET, CREATE_CM | B(3), rec, 5, false), 0);
	assert_int_equal(sm_sa_get16(ans.buf + 36), 0xC123);
	sm_mc_set_unref(s);
	sm_sa_dyn_free(d);
}

/* Random requests from every port: right statuses only, the table's counts stay consistent. */
static void test_random(void **st)
{
	(void)st;
	struct sm_sa_dyn *d;
	struct sm_sa_dyn_limits lim = { .max_groups = 16, .max_members = 40 };
	uint8_t rec[SM_SA_MCMEMBER_REC_SIZE];
	static const uint8_t methods[] = { SM_SA_SET, SM_SA_DELETE, SM_SA_GET, SM_SA_GET_TABLE };
	uint32_t x = 12345;

	assert_int_equal(sm_sa_dyn_new(&lim, &d), 0);
	for (unsigned i = 0; i < 50000; i++) {
		x = x * 1103515245u + 12345u;
		unsigned r = x >> 8;
		mrec(rec, NULL, 0x11 + 0x10 * (r % 4), (uint8_t)(r >> 2 & 0xF));
		rec[0] = 0xff, rec[1] = (uint8_t)(0x10 | (r >> 6 & 1 ? 2 : 5)), rec[15] = (uint8_t)(r >> 7 & 31);
		if (r >> 12 & 1)
			rec[38] = (uint8_t)(r >> 13);
		if (r >> 21 & 1)
			rec[42] = (uint8_t)(r >> 22);
		uint64_t cm = (r >> 3 & 1) ? CREATE_CM : JOIN_CM;
		if (r >> 4 & 1)
			cm |= MTU_CM | RATE_CM;
		uint16_t s = mq(d, methods[r >> 30 & 3], cm, rec, (uint16_t)(4 + (r >> 10 & 3)), r >> 11 & 1);
		assert_true(s == 0 || s == SM_SA_STATUS_REQ_INVALID || s == SM_SA_STATUS_NO_RESOURCES ||
			    s == SM_SA_STATUS_NO_RECORDS || s == SM_SA_STATUS_TOO_MANY_RECORDS ||
			    s == SM_SA_STATUS_INSUFFICIENT_COMPONENTS);
		size_t members = 0;
		for (size_t k = 0; k < d->n_groups; k++) {
			members += d->groups[k].n;
			assert_true(d->groups[k].fullish > 0);
		}
		assert_int_equal(members, sm_sa_dyn_mc_members(d));
		assert_int_equal(sm_sa_dyn_mlids_used(d), sm_sa_dyn_groups(d));
		struct sm_sa_mc_event ev[SM_SA_MC_EVENTS];
		sm_sa_dyn_mc_events(d, ev, SM_SA_MC_EVENTS);
	}
	sm_sa_dyn_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sendonly_cycles),
		cmocka_unit_test(test_broadcast_group),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_partitions_and_prune),
		cmocka_unit_test(test_reconfig),
		cmocka_unit_test(test_set),
		cmocka_unit_test(test_random),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
