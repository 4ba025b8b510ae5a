/* SPDX-License-Identifier: MIT */
/* Port configuration (smd/sm/portcfg.c): codecs of the QoS tables, the opensm.conf QoS syntax,
 * and bring-ups on the mock that configure every port once and then write nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "mad/codec.h"
#include "mock/mock.h"
#include "sm/portcfg.h"
#include "sm/sm.h"
#include "sm/state.h"
#include "fixture/fixture.h"

static void test_sl2vl_golden(void **state)
{
	(void)state;
	struct sm_sl2vl t, back;
	uint8_t d[SM_SMP_DATA_SIZE], want[SM_SMP_DATA_SIZE] = {
		0x01, 0x23, 0x45, 0x67, 0x01, 0x23, 0x45, 0x6F,
	};
	for (unsigned sl = 0; sl < 16; sl++)
		t.vl[sl] = (uint8_t)(sl & 7);
	t.vl[15] = 15;
	memset(d, 0xAA, sizeof(d));
	sm_sl2vl_encode(&t, d);
	assert_memory_equal(d, want, sizeof(d));   /* reserved bytes written 0 */
	sm_sl2vl_decode(d, &back);
	assert_memory_equal(&back, &t, sizeof(t));
	assert_int_equal(sm_sl2vl_mod(3, 7), 0x0307);
	assert_string_equal(sm_attr_name(SM_ATTR_SL2VL), "SLtoVLMappingTable");
}

static void test_vlarb_golden(void **state)
{
	(void)state;
	struct sm_vlarb_block b, back;
	uint8_t d[SM_SMP_DATA_SIZE];
	memset(&b, 0, sizeof(b));
	b.vl[0] = 1;
	b.weight[0] = 4;
	b.vl[31] = 14;
	b.weight[31] = 255;
	sm_vlarb_encode(&b, d);
	assert_int_equal(d[0], 0x01);
	assert_int_equal(d[1], 0x04);
	assert_int_equal(d[62], 0x0E);
	assert_int_equal(d[63], 0xFF);
	d[2] = 0xF3;   /* reserved high bits are ignored */
	sm_vlarb_decode(d, &back);
	assert_int_equal(back.vl[1], 3);
	back.vl[1] = 0;
	assert_memory_equal(&back, &b, sizeof(b));
	assert_int_equal(sm_vlarb_mod(SM_VLARB_HIGH_0, 5), 0x00030005);
	assert_string_equal(sm_attr_name(SM_ATTR_VLARB), "VLArbitrationTable");
}

static void test_qos_syntax(void **state)
{
	(void)state;
	uint8_t t[16], vl[SM_QOS_VLARB_MAX], w[SM_QOS_VLARB_MAX];
	char msg[160];

	assert_int_equal(sm_qos_parse_sl2vl(SM_QOS_DEFAULT_SL2VL, t, msg, sizeof(msg)), 0);
	assert_int_equal(t[14], 14);
	assert_int_equal(t[15], 7);
	assert_int_equal(sm_qos_parse_sl2vl("0,1,2", t, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "3 VLs given"));
	assert_int_equal(sm_qos_parse_sl2vl("0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,16", t, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "SL 15"));
	assert_int_equal(sm_qos_parse_sl2vl("0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,7,1", t, msg, sizeof(msg)), -EINVAL);
	assert_int_equal(sm_qos_parse_vlarb(SM_QOS_DEFAULT_VLARB_LOW, vl, w, msg, sizeof(msg)), 0);
	assert_int_equal(vl[1], 1);
	assert_int_equal(w[1], 4);
	assert_int_equal(w[15], 0);   /* entries not given: 0:0 */
	assert_int_equal(sm_qos_parse_vlarb("0:4, 1:256", vl, w, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "entry 2"));
	assert_int_equal(sm_qos_parse_vlarb("15:1", vl, w, msg, sizeof(msg)), -EINVAL);
	assert_int_equal(sm_qos_parse_vlarb("1:1,", vl, w, msg, sizeof(msg)), -EINVAL);
	assert_int_equal(sm_qos_parse_vlarb("", vl, w, msg, sizeof(msg)), -EINVAL);
	assert_int_equal(sm_part_enforce_parse("both"), SM_PART_ENF_BOTH);
	assert_int_equal(sm_part_enforce_parse("off"), SM_PART_ENF_OFF);
	assert_int_equal(sm_part_enforce_parse("BOTH"), -1);
	assert_string_equal(sm_part_enforce_name(SM_PART_ENF_IN), "in");
}

/* OpenSM's default SL2VL masked for VL0-7 (OperationalVLs 4) */
static const uint8_t sl2vl_vl07[16] = { 0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7 };

static void check_tables(const struct fx_env *e)
{
	const struct sm_fabric *f = sm_mock_fabric(e->mock);
	uint8_t vl[16];
	for (uint32_t n = 0; n < f->n_nodes; n++) {
		const struct sm_node *nd = &f->nodes[n];
		for (unsigned out = 1; out <= nd->nports; out++) {
			if (f->ports[nd->port0 + out].peer_node == SM_NONE)
				continue;
			if (nd->type != SM_NODE_SWITCH) {
				assert_int_equal(sm_mock_sl2vl(e->mock, n, 0, out, vl), 0);
				assert_memory_equal(vl, sl2vl_vl07, 16);
				continue;
			}
			for (unsigned in = 0; in <= nd->nports; in++) {
				assert_int_equal(sm_mock_sl2vl(e->mock, n, in, out, vl), 0);
				if (memcmp(vl, sl2vl_vl07, 16))
					fail_msg("%s (%u -> %u): SL 15 on VL %u", nd->desc, in, out, vl[15]);
			}
		}
	}
}

static void run_twice(const struct sm_mock_cfg *mc, unsigned want_sl2vl_sets)
{
	struct fx_env e;
	struct sm_cfg cfg;
	struct sm_summary sum, sum2;
	struct sm_mock_qos_stats q1, q2;
	struct sm_mock_stats ms1, ms2;

	fx_env_init(&e, fx_hand_built(), mc, NULL, "portcfg");
	fx_cfg(&e, &cfg);
	sm_fabric_free(fx_bringup(&e, NULL, &cfg, &sum));
	/* every switch port facing a switch or a CA gets HOQ and VL stall, leaf ports enforcement */
	assert_true(sum.portcfg_pi_sets > 0);
	assert_int_equal(sum.sl2vl_sets, want_sl2vl_sets);
	assert_true(sum.vlarb_sets > 0);
	assert_int_equal(sum.set_errors, 0);
	assert_int_equal(sum.active_ports, sum.link_ports);
	check_tables(&e);
	sm_mock_qos_stats(e.mock, &q1);
	sm_mock_stats(e.mock, &ms1);
	assert_int_equal(q1.sl2vl_sets, want_sl2vl_sets);
	/* cold ports (INIT) are written unread; only a switch without optimised SL2VL is read */
	assert_int_equal(sum.vlarb_gets, 0);
	if (!mc || !mc->no_opt_sl2vl)
		assert_int_equal(sum.sl2vl_gets, 0);

	/* the second run reads the tables back and writes nothing at all */
	sm_fabric_free(fx_bringup(&e, NULL, &cfg, &sum2));
	assert_int_equal(sum2.portcfg_pi_sets, 0);
	assert_int_equal(sum2.sl2vl_sets, 0);
	assert_int_equal(sum2.vlarb_sets, 0);
	assert_true(sum2.sl2vl_gets >= sum.sl2vl_gets);   /* one per CA port and switch output port */
	assert_true(sum2.sl2vl_gets > 0 && sum2.sl2vl_gets <= sum2.link_ports);
	assert_int_equal(sum2.vlarb_gets, sum.vlarb_sets);   /* every block written cold is read warm */
	sm_mock_qos_stats(e.mock, &q2);
	sm_mock_stats(e.mock, &ms2);
	assert_int_equal(q2.pi_sets, q1.pi_sets);
	assert_int_equal(q2.sl2vl_sets, q1.sl2vl_sets);
	assert_int_equal(q2.vlarb_sets, q1.vlarb_sets);
	assert_int_equal(ms2.sets, ms1.sets);
	fx_env_free(&e);
}

/* Optimised SL2VL: one Set per switch (every pair), one per CA port (the hand-built fabric has 6). */
static void test_bringup_optimised(void **state)
{
	(void)state;
	run_twice(NULL, 2 + 6);
}

/* Without it: one Set per (input, output) pair of every linked output port, as OpenSM. */
static void test_bringup_pairs(void **state)
{
	(void)state;
	struct sm_mock_cfg mc;
	struct fx_env e;
	unsigned pairs = 0;

	sm_mock_cfg_default(&mc);
	mc.no_opt_sl2vl = true;
	fx_env_init(&e, fx_hand_built(), &mc, NULL, "portcfg-count");
	const struct sm_fabric *f = sm_mock_fabric(e.mock);
	for (uint32_t n = 0; n < f->n_nodes; n++)
		for (unsigned out = 1; out <= f->nodes[n].nports; out++)
			if (f->ports[f->nodes[n].port0 + out].peer_node != SM_NONE)
				pairs += f->nodes[n].type == SM_NODE_SWITCH ? f->nodes[n].nports + 1u : 1u;
	fx_env_free(&e);
	run_twice(&mc, pairs);
}

/* QoS off: the tables are neither read nor written, PortInfo still is. */
static void test_qos_off(void **state)
{
	(void)state;
	struct fx_env e;
	struct sm_cfg cfg;
	struct sm_summary sum;
	struct sm_portcfg pc;

	sm_portcfg_default(&pc);
	pc.qos = 0;
	pc.max_op_vls = 2;
	fx_env_init(&e, fx_hand_built(), NULL, NULL, "portcfg-off");
	fx_cfg(&e, &cfg);
	cfg.portcfg = &pc;
	sm_fabric_free(fx_bringup(&e, NULL, &cfg, &sum));
	assert_int_equal(sum.sl2vl_gets + sum.sl2vl_sets + sum.vlarb_gets + sum.vlarb_sets, 0);
	assert_true(sum.portcfg_pi_sets >= sum.link_ports);   /* OperationalVLs 2 everywhere */
	assert_int_equal(sum.set_errors, 0);
	assert_int_equal(sum.active_ports, sum.link_ports);
	sm_fabric_free(fx_bringup(&e, NULL, &cfg, &sum));
	assert_int_equal(sum.portcfg_pi_sets, 0);
	fx_env_free(&e);
}

/* VLHighLimit per class, held by the mock's SMA (ibsim keeps none): written once. */
static void test_high_limit(void **state)
{
	(void)state;
	struct fx_env e;
	struct sm_cfg cfg;
	struct sm_summary s1, s2;
	struct sm_portcfg pc;

	sm_portcfg_default(&pc);
	pc.level[SM_QOS_SWE].high_limit = 4;
	pc.level[SM_QOS_CA].high_limit = 2;
	fx_env_init(&e, fx_hand_built(), NULL, NULL, "portcfg-hl");
	fx_cfg(&e, &cfg);
	cfg.portcfg = &pc;
	sm_fabric_free(fx_bringup(&e, NULL, &cfg, &s1));
	/* every linked port: the switch ports' HOQ/stall and every CA port's limit */
	assert_int_equal(s1.portcfg_pi_sets, s1.link_ports);
	sm_fabric_free(fx_bringup(&e, NULL, &cfg, &s2));
	assert_int_equal(s2.portcfg_pi_sets, 0);
	pc.level[SM_QOS_CA].high_limit = 3;   /* a reload: the CA ports only */
	sm_fabric_free(fx_bringup(&e, NULL, &cfg, &s2));
	assert_int_equal(s2.portcfg_pi_sets, 6);
	fx_env_free(&e);
}

/* With the daemon's state: switch ports' tables are not read again unless something changed. */
static void test_state_trust(void **state)
{
	(void)state;
	struct fx_env e;
	struct sm_cfg cfg;
	struct sm_summary s1, s2;
	struct sm_portcfg pc;
	struct sm_state *st = NULL;

	fx_env_init(&e, fx_hand_built(), NULL, NULL, "portcfg-state");
	fx_cfg(&e, &cfg);
	assert_int_equal(sm_state_new(&st), 0);
	sm_portcfg_default(&pc);
	cfg.portcfg = &pc;
	char err[512];
	assert_int_equal(sm_bringup_state(e.t, e.chain, &cfg, st, &s1, NULL, err, sizeof(err)), 0);
	assert_int_equal(s1.tables_trusted, 0);
	assert_true(s1.sl2vl_sets > 0);
	/* the next heavy sweep reads CA ports only */
	assert_int_equal(sm_bringup_state(e.t, e.chain, &cfg, st, &s2, NULL, err, sizeof(err)), 0);
	assert_true(s2.tables_trusted > 0);
	assert_true(s2.sl2vl_gets > 0);
	assert_int_equal(s2.sl2vl_sets + s2.vlarb_sets + s2.portcfg_pi_sets, 0);
	uint32_t ca_gets = s2.sl2vl_gets;
	/* forgotten (smctl resweep --heavy): read again, still nothing to write */
	sm_state_forget(st);
	assert_int_equal(sm_bringup_state(e.t, e.chain, &cfg, st, &s2, NULL, err, sizeof(err)), 0);
	assert_int_equal(s2.tables_trusted, 0);
	assert_true(s2.sl2vl_gets > ca_gets);
	assert_int_equal(s2.sl2vl_sets + s2.vlarb_sets, 0);
	/* a reload with another level: nothing is trusted, the switches' tables are rewritten */
	assert_int_equal(sm_bringup_state(e.t, e.chain, &cfg, st, &s2, NULL, err, sizeof(err)), 0);
	assert_true(s2.tables_trusted > 0);
	pc.level[SM_QOS_SWE].sl2vl[0] = 1;
	assert_int_equal(sm_bringup_state(e.t, e.chain, &cfg, st, &s2, NULL, err, sizeof(err)), 0);
	assert_int_equal(s2.tables_trusted, 0);
	assert_int_equal(s2.sl2vl_sets, 2);   /* one all-ports Set per switch; CAs unchanged */
	assert_int_equal(s2.set_errors, 0);
	sm_state_free(st);
	fx_env_free(&e);
}

/*
 * A link that came back on a running fabric: its two ports are in INIT, so
 * their tables are written unread (one SL2VL Set on the switch: that output
 * port's for every input port); every other port is read and left alone.
 */
static void test_link_back_cold(void **state)
{
	(void)state;
	struct fx_env e;
	struct sm_cfg cfg;
	struct sm_summary s1, s2;
	uint32_t ca = SM_NONE;

	fx_env_init(&e, fx_hand_built(), NULL, NULL, "portcfg-bounce");
	fx_cfg(&e, &cfg);
	sm_fabric_free(fx_bringup(&e, NULL, &cfg, &s1));
	assert_int_equal(s1.set_errors, 0);
	const struct sm_fabric *f = sm_mock_fabric(e.mock);
	for (uint32_t n = 0; n < f->n_nodes && ca == SM_NONE; n++)
		if (f->nodes[n].type == SM_NODE_CA && f->ports[f->nodes[n].port0 + 1].peer_node != SM_NONE &&
		    f->nodes[f->ports[f->nodes[n].port0 + 1].peer_node].type == SM_NODE_SWITCH)
			ca = n;
	assert_true(ca != SM_NONE);
	assert_int_equal(sm_mock_link_down(e.mock, ca, 1), 0);
	assert_int_equal(sm_mock_link_up(e.mock, ca, 1), 0);
	sm_fabric_free(fx_bringup(&e, NULL, &cfg, &s2));
	assert_int_equal(s2.set_errors, 0);
	assert_int_equal(s2.active_ports, s2.link_ports);
	assert_int_equal(s2.sl2vl_sets, 2);   /* the CA port's, the switch output port's */
	assert_true(s2.vlarb_sets > 0 && s2.vlarb_sets < s1.vlarb_sets);
	assert_true(s2.sl2vl_gets > 0);       /* the ports still ACTIVE are read */
	check_tables(&e);
	fx_env_free(&e);
}

/*
 * An incremental sweep configures only the ports near what it read (the
 * nodes a port of which it read or that it added, and their peers), after
 * a configuration that left every port as the same settings want
 * (tables.h pi_sig). A port it read that holds other values gets its Set;
 * other settings configure every port again; a skipped port fails here.
 */
static void test_incremental_settled(void **state)
{
	(void)state;
	struct fx_env e;
	struct sm_cfg cfg, other_cfg;
	struct sm_summary s;
	struct sm_portcfg pc, other;
	struct sm_state *st = NULL;
	char err[512];
	uint32_t ca = SM_NONE, cas = 0;

	fx_env_init(&e, fx_hand_built(), NULL, NULL, "portcfg-incr");
	fx_cfg(&e, &cfg);
	sm_portcfg_default(&pc);
	pc.level[SM_QOS_CA].high_limit = 2;
	cfg.portcfg = &pc;
	cfg.incremental = true;
	other_cfg = cfg;
	other = pc;
	other.level[SM_QOS_CA].high_limit = 5;
	other_cfg.portcfg = &other;
	other_cfg.incremental = false;
	assert_int_equal(sm_state_new(&st), 0);
	assert_int_equal(sm_bringup_state(e.t, e.chain, &cfg, st, &s, NULL, err, sizeof(err)), 0);
	assert_int_equal(s.incremental, 0);
	assert_true(s.portcfg_pi_sets > 0);
	assert_true(st->tab.pi_sig != 0);
	/* nothing changed: nothing configured */
	assert_int_equal(sm_bringup_state(e.t, e.chain, &cfg, st, &s, NULL, err, sizeof(err)), 0);
	assert_int_equal(s.incremental, 1);
	assert_int_equal(s.portcfg_pi_sets, 0);
	/* other settings (a reload): every CA port again, though nothing was read */
	pc.level[SM_QOS_CA].high_limit = 3;
	assert_int_equal(sm_bringup_state(e.t, e.chain, &cfg, st, &s, NULL, err, sizeof(err)), 0);
	assert_int_equal(s.incremental, 1);
	assert_int_equal(s.portcfg_pi_sets, 6);
	/* every CA port rewritten behind the state's back, then one CA's link bounces: that port is read, and set */
	sm_fabric_free(fx_bringup(&e, NULL, &other_cfg, &s));
	assert_int_equal(s.portcfg_pi_sets, 6);
	const struct sm_fabric *f = sm_mock_fabric(e.mock);
	for (uint32_t n = 0; n < f->n_nodes; n++)
		if (f->nodes[n].type == SM_NODE_CA && f->ports[f->nodes[n].port0 + 1].peer_node != SM_NONE &&
		    f->nodes[f->ports[f->nodes[n].port0 + 1].peer_node].type == SM_NODE_SWITCH && cas++ == 1)
			ca = n;
	assert_true(ca != SM_NONE);
	assert_int_equal(sm_mock_link_down(e.mock, ca, 1), 0);
	assert_int_equal(sm_mock_link_up(e.mock, ca, 1), 0);
	assert_int_equal(sm_bringup_state(e.t, e.chain, &cfg, st, &s, NULL, err, sizeof(err)), 0);
	assert_int_equal(s.incremental, 1);
	assert_int_equal(s.set_errors, 0);
	assert_int_equal(s.portcfg_pi_sets, 1);
	/* a heavy sweep reads every port: the five left as the other settings want */
	cfg.incremental = false;
	assert_int_equal(sm_bringup_state(e.t, e.chain, &cfg, st, &s, NULL, err, sizeof(err)), 0);
	assert_int_equal(s.portcfg_pi_sets, 5);
	sm_state_free(st);
	fx_env_free(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sl2vl_golden),
		cmocka_unit_test(test_vlarb_golden),
		cmocka_unit_test(test_qos_syntax),
		cmocka_unit_test(test_bringup_optimised),
		cmocka_unit_test(test_bringup_pairs),
		cmocka_unit_test(test_qos_off),
		cmocka_unit_test(test_high_limit),
		cmocka_unit_test(test_state_trust),
		cmocka_unit_test(test_link_back_cold),
		cmocka_unit_test(test_incremental_settled),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
