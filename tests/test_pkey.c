/* SPDX-License-Identifier: MIT */
/*
 * The P_Key phase (smd/sm/pkey.c) on the mock (smd/mock/mock_pkey.c): the
 * tables laid out as OpenSM lays them (kept indexes, default at 0, OpenSM's
 * partition order), switch ports facing CAs packed, switch-switch ports
 * untouched; a second bring-up writes nothing; a changed partitions set
 * writes only the blocks that change; the snapshot carries what was
 * programmed; a small PartitionCap leaves P_Keys out, never writes past it;
 * the SA's PathRecord answers a requester only when it shares a P_Key with
 * both ends (as OpenSM).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture/fixture.h"
#include "fixture/mock_fabric.h"
#include "model/partitions.h"
#include "mad/codec.h"
#include "mock/mock.h"
#include "sm/sm.h"
#include "sm/snapshot.h"
#include "sa/path.h"
#include "sa/pkey.h"
#include "sa/query.h"

static struct sm_partitions *parts(const char *text)
{
	struct sm_partitions *p = NULL;
	char err[512] = "";
	if (sm_partitions_parse(text, strlen(text), "t.conf", &p, err, sizeof(err)))
		fail_msg("%s", err);
	return p;
}

/* Port index of the port with GUID g (CA) in the mock's model, or switch node guid's port p. */
static uint32_t ca_port(const struct fx_env *e, uint64_t g)
{
	uint32_t i = sm_fabric_find_port(e->model, g);
	assert_int_not_equal(i, SM_NONE);
	return i;
}

static uint32_t sw_port(const struct fx_env *e, uint64_t g, unsigned p)
{
	uint32_t n = sm_fabric_find_node(e->model, g);
	assert_int_not_equal(n, SM_NONE);
	return sm_port_index(e->model, n, p);
}

static void expect_table(struct fx_env *e, uint32_t pi, const uint16_t *want, unsigned n)
{
	uint16_t t[128];
	int cap = sm_mock_pkeys(e->mock, pi, t, 128);
	assert_true(cap > 0);
	for (unsigned i = 0; i < (unsigned)cap; i++) {
		uint16_t w = i < n ? want[i] : 0;
		if (t[i] != w)
			fail_msg("port index %u entry %u: 0x%04x, want 0x%04x", pi, i, t[i], w);
	}
}

static const struct sm_snapshot *last_snap;
static void keep_snap(void *arg, const struct sm_snapshot *s)
{
	(void)arg;
	sm_snapshot_unref(last_snap);
	last_snap = sm_snapshot_ref(s);
}

static void t_tables(void **state)
{
	(void)state;
	struct fx_env e;
	struct sm_cfg cfg;
	struct sm_summary sum;
	fx_env_init(&e, fx_hand_built(), NULL, NULL, "pkey");
	struct sm_partitions *p1 = parts("Default=0x7fff: ALL=full;\n"
					 "Storage=0x0100: 0x2001=full, 0x3001;\n"
					 "Compute=0x2: ALL_CAS=limited;\n"
					 "Mgmt=0x1: ALL_SWITCHES=full, SELF=full;\n");
	fx_cfg(&e, &cfg);
	cfg.partitions = p1;
	cfg.published = keep_snap;
	sm_fabric_free(fx_bringup(&e, NULL, &cfg, &sum));
	assert_true(sum.pkey_ports > 0);
	assert_true(sum.pkey_blocks_written > 0);
	uint32_t smp = e.sm_port;
	/* OpenSM's order: 0x0100 before 0x0001 before 0x0002 (its map key is the P_Key in network order) */
	expect_table(&e, ca_port(&e, 0x2001), (const uint16_t[]){ 0xffff, 0x8100, 0x0002 }, 3);
	expect_table(&e, ca_port(&e, 0x3001), (const uint16_t[]){ 0xffff, 0x0100, 0x0002 }, 3);
	if (smp != ca_port(&e, 0x2001) && smp != ca_port(&e, 0x3001)) {
		uint16_t t[128];
		assert_true(sm_mock_pkeys(e.mock, smp, t, 128) > 0);
		assert_int_equal(t[0], 0xffff);
		assert_int_equal(t[1], 0x8001);
		assert_int_equal(t[2], 0x0002);
	}
	expect_table(&e, sw_port(&e, 0x100, 0), (const uint16_t[]){ 0xffff, 0x8001 }, 2);
	/* sw1 port 2 faces CA port 0x2001: its entries packed */
	expect_table(&e, sw_port(&e, 0x100, 2), (const uint16_t[]){ 0xffff, 0x8100, 0x0002 }, 3);
	/* switch-switch ports: left as they were */
	expect_table(&e, sw_port(&e, 0x100, 3), (const uint16_t[]){ 0xffff }, 1);
	/* the snapshot carries what was programmed */
	assert_non_null(last_snap);
	unsigned n = 0;
	uint32_t si = sm_fabric_find_port(last_snap->fabric, 0x2001);
	const uint16_t *tab = sm_snapshot_pkeys(last_snap, si, &n);
	assert_non_null(tab);
	assert_int_equal(n, 128);
	assert_int_equal(tab[1], 0x8100);
	/* the SA's membership (sa/pkey.c): 0x2001 full and 0x3001 limited in 0x0100, both limited in 0x0002 */
	uint32_t sb = sm_fabric_find_port(last_snap->fabric, 0x3001);
	uint16_t pk = 0;
	assert_true(sm_sa_pkey_shared(last_snap->pkeys, si, sb, false, 0, &pk));
	assert_int_equal(pk, 0x8100);   /* OpenSM's order: 0x0100 first */
	assert_true(sm_sa_pkey_shared(last_snap->pkeys, sb, si, false, 0, &pk));
	assert_int_equal(pk, 0x0100);   /* as the source holds it */
	assert_false(sm_sa_pkey_shared(last_snap->pkeys, si, sb, true, 0x0002, &pk));
	assert_true(sm_sa_pkey_shared(last_snap->pkeys, si, sb, true, 0xffff, &pk));
	assert_false(sm_sa_pkey_shared(last_snap->pkeys, si, sb, true, 0x0005, &pk));
	assert_false(sm_sa_pkey_shared(last_snap->pkeys, si, sb, true, 0x8000, &pk));
	/* without tables: the default partition only */
	assert_true(sm_sa_pkey_shared(NULL, si, sb, false, 0, &pk));
	assert_int_equal(pk, 0xffff);
	assert_false(sm_sa_pkey_shared(NULL, si, sb, true, 0x8001, &pk));

	/* the same again: nothing written */
	sm_fabric_free(fx_bringup(&e, NULL, &cfg, &sum));
	assert_int_equal(sum.pkey_blocks_written, 0);
	uint64_t sets0;
	struct sm_mock_stats st;
	sm_mock_stats(e.mock, &st);
	sets0 = st.pkey_sets;

	/* Storage removed: its two CAs and the two switch ports facing them, one block each */
	struct sm_partitions *p2 = parts("Default=0x7fff: ALL=full;\nCompute=0x2: ALL_CAS=limited;\n"
					 "Mgmt=0x1: ALL_SWITCHES=full, SELF=full;\n");
	cfg.partitions = p2;
	sm_fabric_free(fx_bringup(&e, NULL, &cfg, &sum));
	assert_int_equal(sum.pkey_blocks_written, 4);
	sm_mock_stats(e.mock, &st);
	assert_int_equal(st.pkey_sets - sets0, 4);
	/* the kept P_Key stays at its index; the switch port is packed again */
	expect_table(&e, ca_port(&e, 0x2001), (const uint16_t[]){ 0xffff, 0, 0x0002 }, 3);
	expect_table(&e, sw_port(&e, 0x100, 2), (const uint16_t[]){ 0xffff, 0x0002 }, 2);
	/* a new partition goes after the highest index kept */
	struct sm_partitions *p3 = parts("Default=0x7fff: ALL=full;\nCompute=0x2: ALL_CAS=limited;\n"
					 "Mgmt=0x1: ALL_SWITCHES=full, SELF=full;\nX=0x7: 0x2001=full;\n");
	cfg.partitions = p3;
	sm_fabric_free(fx_bringup(&e, NULL, &cfg, &sum));
	expect_table(&e, ca_port(&e, 0x2001), (const uint16_t[]){ 0xffff, 0, 0x0002, 0x8007 }, 4);
	assert_int_equal(sum.pkey_blocks_written, 2);

	/* no partitions: nothing read or written, nothing carried */
	cfg.partitions = NULL;
	sm_fabric_free(fx_bringup(&e, NULL, &cfg, &sum));
	assert_int_equal(sum.pkey_ports, 0);
	assert_null(last_snap->pkeys);
	sm_snapshot_unref(last_snap);
	last_snap = NULL;
	sm_partitions_free(p1);
	sm_partitions_free(p2);
	sm_partitions_free(p3);
	fx_env_free(&e);
}

/*
 * indx0 (OpenSM's osm_pkey_mgr.c): the flagged P_Key takes index 0 of its member ports, the default
 * P_Key moves after the highest index kept; the switch port facing the CA follows; a later line of
 * the same P_Key without the flag clears it; dropping the flag moves the default back to 0.
 */
static void t_indx0(void **state)
{
	(void)state;
	struct fx_env e;
	struct sm_cfg cfg;
	struct sm_summary sum;
	fx_env_init(&e, fx_hand_built(), NULL, NULL, "pkeyidx0");
	struct sm_partitions *p0 = parts("Default=0x7fff: ALL=full;\nStorage=0x0100: 0x2001=full, 0x3001;\n");
	fx_cfg(&e, &cfg);
	cfg.partitions = p0;
	sm_fabric_free(fx_bringup(&e, NULL, &cfg, &sum));
	expect_table(&e, ca_port(&e, 0x2001), (const uint16_t[]){ 0xffff, 0x8100 }, 2);
	struct sm_partitions *p1 = parts("Default=0x7fff: ALL=full;\nStorage=0x0100, indx0: 0x2001=full, 0x3001;\n"
					 "Compute=0x2: ALL_CAS=limited;\n");
	uint32_t p2001 = ca_port(&e, 0x2001), p3001 = ca_port(&e, 0x3001);
	assert_int_equal(sm_partitions_port_indx0(p1, e.model, p2001, SM_NONE), 0x8100);
	assert_int_equal(sm_partitions_port_indx0(p1, e.model, p3001, SM_NONE), 0x0100);
	assert_int_equal(sm_partitions_port_indx0(p1, e.model, sw_port(&e, 0x100, 0), SM_NONE), 0);
	assert_int_equal(sm_partitions_port_indx0(p1, e.model, sw_port(&e, 0x100, 2), SM_NONE), 0);
	cfg.partitions = p1;
	sm_fabric_free(fx_bringup(&e, NULL, &cfg, &sum));
	/*
	 * 0x0100 was at 1, the default at 0: both move (OpenSM clears both indexes), then every P_Key
	 * placed in OpenSM's partition order (0x0100, 0x0002, 0x7fff): 0x0100 at 0, the others after it
	 */
	expect_table(&e, p2001, (const uint16_t[]){ 0x8100, 0x0002, 0xffff }, 3);
	expect_table(&e, p3001, (const uint16_t[]){ 0x0100, 0x0002, 0xffff }, 3);
	expect_table(&e, sw_port(&e, 0x100, 2), (const uint16_t[]){ 0x8100, 0x0002, 0xffff }, 3);
	/* a port not in Storage keeps the default at 0 */
	expect_table(&e, sw_port(&e, 0x100, 0), (const uint16_t[]){ 0xffff }, 1);
	sm_fabric_free(fx_bringup(&e, NULL, &cfg, &sum));
	assert_int_equal(sum.pkey_blocks_written, 0);
	/* the same P_Key again without the flag, later in the file: cleared for the ports it names */
	struct sm_partitions *p2 = parts("Default=0x7fff: ALL=full;\nStorage=0x0100, indx0: 0x2001=full, 0x3001;\n"
					 "Compute=0x2: ALL_CAS=limited;\nStorage=0x0100: 0x3001;\n");
	assert_int_equal(sm_partitions_port_indx0(p2, e.model, p2001, SM_NONE), 0x8100);
	assert_int_equal(sm_partitions_port_indx0(p2, e.model, p3001, SM_NONE), 0);
	sm_partitions_free(p2);
	/* the flag dropped: the default back to 0, 0x0100 moved off it */
	cfg.partitions = p0;
	sm_fabric_free(fx_bringup(&e, NULL, &cfg, &sum));
	expect_table(&e, p2001, (const uint16_t[]){ 0xffff, 0x8100 }, 2);
	sm_partitions_free(p0);
	sm_partitions_free(p1);
	fx_env_free(&e);
}

/* More P_Keys than a switch's port 0 holds (8): the rest left out, nothing past the capacity. */
static void t_cap(void **state)
{
	(void)state;
	struct fx_env e;
	struct sm_cfg cfg;
	struct sm_summary sum;
	char text[1024];
	size_t o = (size_t)snprintf(text, sizeof(text), "Default=0x7fff: ALL=full;\n");
	for (unsigned k = 1; k <= 12; k++)
		o += (size_t)snprintf(text + o, sizeof(text) - o, "P%u=0x%x: ALL_SWITCHES=full;\n", k, k);
	fx_env_init(&e, fx_hand_built(), NULL, NULL, "pkeycap");
	struct sm_partitions *p = parts(text);
	fx_cfg(&e, &cfg);
	cfg.partitions = p;
	sm_fabric_free(fx_bringup(&e, NULL, &cfg, &sum));
	uint16_t t[8];
	assert_int_equal(sm_mock_pkeys(e.mock, sw_port(&e, 0x100, 0), t, 8), 8);
	assert_int_equal(t[0], 0xffff);
	for (unsigned i = 1; i < 8; i++)
		assert_true(t[i] & 0x8000);
	sm_partitions_free(p);
	fx_env_free(&e);
}

/* After an incremental sweep the tables come from the state: nothing read, nothing written, still carried. */
static void t_incremental(void **state)
{
	(void)state;
	struct fx_env e;
	struct sm_cfg cfg;
	struct sm_summary sum;
	char err[1024] = "";
	fx_env_init(&e, fx_hand_built(), NULL, NULL, "pkeyinc");
	assert_int_equal(sm_state_new(&e.state), 0);
	struct sm_partitions *p = parts("Default=0x7fff: ALL=full;\nX=0x9: 0x2001=full, 0x3001;\n");
	fx_cfg(&e, &cfg);
	cfg.partitions = p;
	cfg.incremental = true;
	cfg.published = keep_snap;
	assert_int_equal(sm_bringup_state(e.t, e.chain, &cfg, e.state, &sum, NULL, err, sizeof(err)), 0);
	assert_int_equal(sum.incremental, 0);
	assert_true(sum.pkey_blocks_read > 0 && sum.pkey_blocks_written > 0);
	assert_int_equal(sm_bringup_state(e.t, e.chain, &cfg, e.state, &sum, NULL, err, sizeof(err)), 0);
	assert_int_equal(sum.incremental, 1);
	assert_int_equal(sum.pkey_blocks_read, 0);
	assert_int_equal(sum.pkey_blocks_written, 0);
	unsigned n = 0;
	const uint16_t *t = sm_snapshot_pkeys(last_snap, sm_fabric_find_port(last_snap->fabric, 0x3001), &n);
	assert_non_null(t);
	assert_int_equal(t[1], 0x0009);
	/* a changed set after an incremental sweep: written from the state's tables, still no read */
	struct sm_partitions *p2 = parts("Default=0x7fff: ALL=full;\nX=0x9: 0x2001=full, 0x3001=full;\n");
	cfg.partitions = p2;
	assert_int_equal(sm_bringup_state(e.t, e.chain, &cfg, e.state, &sum, NULL, err, sizeof(err)), 0);
	assert_int_equal(sum.incremental, 1);
	assert_int_equal(sum.pkey_blocks_read, 0);
	assert_int_equal(sum.pkey_blocks_written, 2);   /* 0x3001 and the switch port facing it */
	expect_table(&e, ca_port(&e, 0x3001), (const uint16_t[]){ 0xffff, 0x8009 }, 2);
	sm_snapshot_unref(last_snap);
	last_snap = NULL;
	sm_partitions_free(p);
	sm_partitions_free(p2);
	fx_env_free(&e);
}

/* A PathRecord Get from sguid to dguid asked by LID from: its status, and the P_Key of the record. */
static uint16_t path_get(const struct sm_snapshot *sn, uint64_t sguid, uint64_t dguid, uint16_t from, uint16_t *pkey)
{
	struct sm_sa_self self = { 0 };
	struct sm_sa_ctx ctx = { .snap = sn, .self = &self };
	struct sm_sa_path_rec r = { 0 };
	struct sm_sa_ans ans = { 0 };
	uint8_t buf[SM_SA_DATA_SIZE] = { 0 };

	for (int i = 0; i < 8; i++) {
		r.sgid[i] = r.dgid[i] = (uint8_t)(0xFE80000000000000ULL >> (56 - 8 * i));
		r.sgid[8 + i] = (uint8_t)(sguid >> (56 - 8 * i));
		r.dgid[8 + i] = (uint8_t)(dguid >> (56 - 8 * i));
	}
	sm_sa_path_rec_encode(&r, buf);
	struct sm_sa_req req = { .data = buf, .len = sizeof(buf) };
	req.hdr.method = SM_METHOD_GET, req.hdr.attr_id = SM_SA_ATTR_PATH_RECORD;
	req.hdr.comp_mask = 1ULL << SM_PR_CM_SGID | 1ULL << SM_PR_CM_DGID;
	req.hdr.class_version = SM_SA_CLASS_VERSION, req.from.lid = from;
	assert_int_equal(sm_sa_query(&ctx, &req, &ans), 0);
	uint16_t st = ans.status;
	*pkey = 0;
	if (!st && ans.n) {
		sm_sa_path_rec_decode(ans.buf, &r);
		*pkey = r.p.pkey;
	}
	sm_sa_ans_free(&ans);
	return st;
}

/*
 * The requester (OpenSM's osm_port_share_pkey from the requester to each
 * end): 0x2001 and 0x3001 are full members of A; 0x4001 shares B with
 * 0x3001 but only a limited Default with 0x2001 (limited too): no path for
 * it; the SM's port (SELF, full in Default) and the ends themselves may.
 */
static void t_requester(void **state)
{
	(void)state;
	struct fx_env e;
	struct sm_cfg cfg;
	struct sm_summary sum;
	uint16_t pk;
	fx_env_init(&e, fx_hand_built(), NULL, NULL, "pkeyreq");
	struct sm_partitions *p = parts("A=0x10: 0x2001=full, 0x3001=full;\nB=0x20: 0x3001=full, 0x4001;\n");
	fx_cfg(&e, &cfg);
	cfg.partitions = p;
	cfg.published = keep_snap;
	sm_fabric_free(fx_bringup(&e, NULL, &cfg, &sum));
	assert_non_null(last_snap);
	const struct sm_fabric *f = last_snap->fabric;
	uint32_t a = sm_fabric_find_port(f, 0x2001), b = sm_fabric_find_port(f, 0x3001);
	uint32_t c = sm_fabric_find_port(f, 0x4001), sm = sm_fabric_find_port(f, e.model->ports[e.sm_port].guid);
	assert_true(a != SM_NONE && b != SM_NONE && c != SM_NONE && sm != SM_NONE);
	assert_true(sm != a && sm != b && sm != c);

	const struct sm_pkey_tables *t = last_snap->pkeys;
	assert_true(sm_sa_pkey_requester(t, a, a, b));
	assert_true(sm_sa_pkey_requester(t, b, a, b));
	assert_true(sm_sa_pkey_requester(t, sm, a, b));
	assert_false(sm_sa_pkey_requester(t, c, a, b));
	assert_true(sm_sa_pkey_requester(t, c, b, b));
	assert_true(sm_sa_pkey_requester(t, c, c, b));
	assert_false(sm_sa_pkey_requester(t, SM_NONE, a, b));
	assert_true(sm_sa_pkey_requester(NULL, c, a, b));   /* no tables: the default partition, everyone full */

	/* through the SA: the same pair, asked by each */
	assert_int_equal(path_get(last_snap, 0x2001, 0x3001, f->ports[a].lid, &pk), 0);
	assert_int_equal(pk, 0x8010);
	assert_int_equal(path_get(last_snap, 0x2001, 0x3001, f->ports[sm].lid, &pk), 0);
	assert_int_equal(path_get(last_snap, 0x2001, 0x3001, f->ports[c].lid, &pk), SM_SA_STATUS_NO_RECORDS);
	assert_int_equal(path_get(last_snap, 0x2001, 0x3001, 0xBFFF, &pk), SM_SA_STATUS_NO_RECORDS);
	assert_int_equal(path_get(last_snap, 0x4001, 0x3001, f->ports[c].lid, &pk), 0);
	assert_int_equal(pk, 0x0020);

	sm_snapshot_unref(last_snap);
	last_snap = NULL;
	sm_partitions_free(p);
	fx_env_free(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_tables), cmocka_unit_test(t_indx0),
		cmocka_unit_test(t_cap), cmocka_unit_test(t_incremental), cmocka_unit_test(t_requester),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
