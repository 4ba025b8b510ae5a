/* SPDX-License-Identifier: MIT */
/* Tests of the SM core: LFT block diff (pure), then bring-up on the mock backend. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/gen.h"
#include "mock/mock.h"
#include "routing/registry.h"
#include "sm/sm.h"
#include "sm/lft_writer.h"
#include "fixture/fixture.h"

static void test_lft_block_padding(void **state)
{
	(void)state;
	uint8_t row[70], blk[SM_LFT_BLOCK];
	for (unsigned i = 0; i < sizeof(row); i++)
		row[i] = (uint8_t)(i % 7);
	sm_lft_block(row, 69, 0, blk);
	assert_memory_equal(blk, row, 64);
	sm_lft_block(row, 69, 1, blk);
	assert_memory_equal(blk, row + 64, 6);
	for (unsigned i = 6; i < 64; i++)
		assert_int_equal(blk[i], SM_LFT_NONE);
	sm_lft_block(row, 69, 2, blk);
	for (unsigned i = 0; i < 64; i++)
		assert_int_equal(blk[i], SM_LFT_NONE);
	assert_int_equal(sm_lft_nblocks(0), 1);
	assert_int_equal(sm_lft_nblocks(63), 1);
	assert_int_equal(sm_lft_nblocks(64), 2);
	assert_int_equal(sm_lft_nblocks(0xbfff), SM_LFT_MAX_BLOCKS);
}

static void test_lft_diff(void **state)
{
	(void)state;
	struct sm_lft_shadow s;
	uint16_t top = 200, out[SM_LFT_MAX_BLOCKS];
	uint8_t row[201], blk[SM_LFT_BLOCK];
	for (unsigned i = 0; i <= top; i++)
		row[i] = (uint8_t)(1 + i % 5);
	sm_lft_shadow_init(&s);
	/* nothing known: every block is written, nothing is worth reading at top 0 beyond block 0 */
	assert_int_equal(sm_lft_diff(row, top, &s, out), 4);
	assert_int_equal(out[3], 3);
	assert_int_equal(sm_lft_blocks_to_read(top, &s, out), 1);
	assert_int_equal(out[0], 0);
	/* the switch's top covers 3 blocks: read them */
	s.top = 150;
	assert_int_equal(sm_lft_blocks_to_read(top, &s, out), 3);
	/* store what the switch holds: blocks 0..3 equal, then change one entry in block 2 */
	for (unsigned b = 0; b < 4; b++) {
		sm_lft_block(row, top, b, blk);
		assert_int_equal(sm_lft_shadow_store(&s, b, blk), 0);
	}
	assert_int_equal(sm_lft_blocks_to_read(top, &s, out), 0);
	assert_int_equal(sm_lft_diff(row, top, &s, out), 0);
	row[130] = 9;
	assert_int_equal(sm_lft_diff(row, top, &s, out), 1);
	assert_int_equal(out[0], 2);
	/* a stale entry above the new top in the last block must be cleared too */
	s.ent[3 * 64 + 20] = 4;   /* LID 212 > top 200 */
	row[130] = (uint8_t)(1 + 130 % 5);
	assert_int_equal(sm_lft_diff(row, top, &s, out), 1);
	assert_int_equal(out[0], 3);
	/* forgetting makes everything unknown again */
	sm_lft_shadow_forget(&s);
	assert_int_equal(sm_lft_diff(row, top, &s, out), 4);
	assert_int_equal(sm_lft_shadow_reserve(&s, SM_LFT_MAX_BLOCKS + 1), -22);
	sm_lft_shadow_free(&s);
	sm_lft_shadow_free(NULL);
}


/* ---- bring-up on the mock backend ---- */

static void check_fabric(struct fx_env *e, const struct sm_fabric *f, unsigned lmc)
{
	const struct sm_fabric *mf = sm_mock_fabric(e->mock);
	struct sm_mock_port_state st;
	uint32_t linked = 0;

	/* every linked port of the mock is ACTIVE, every LID-bearing port has the SM's LID */
	for (uint32_t n = 0; n < mf->n_nodes; n++) {
		const struct sm_node *nd = &mf->nodes[n];
		uint32_t fn = sm_fabric_find_node(f, nd->guid);
		assert_int_not_equal(fn, SM_NONE);
		for (unsigned p = 0; p <= nd->nports; p++) {
			uint32_t idx = nd->port0 + p;
			if (p == 0 && nd->type != SM_NODE_SWITCH)
				continue;
			assert_int_equal(sm_mock_port_state(e->mock, idx, &st), 0);
			const struct sm_port *fp = sm_port(f, fn, p);
			if (p == 0 || nd->type != SM_NODE_SWITCH) {
				assert_int_equal(st.lid, fp->lid);
				assert_int_not_equal(st.lid, 0);
				assert_int_equal(st.lmc, nd->type == SM_NODE_SWITCH ? 0 : lmc);
				assert_int_equal(st.sm_lid, f->planes[0].sm_lid);
				assert_int_equal(st.gid_prefix, 0xfe80000000000000ULL);
			}
			/* a link taken down stays in the mock's model, physically down */
			if (p && mf->ports[idx].peer_node != SM_NONE && st.phys_state == 5) {
				linked++;
				if (st.state != SM_PORT_ACTIVE)
					fail_msg("node %s port %u is %s", nd->desc, p, sm_port_state_str(st.state));
				/* the SM's model has the same link */
				assert_int_equal(fp->peer_node,
						 sm_fabric_find_node(f, mf->nodes[mf->ports[idx].peer_node].guid));
				assert_int_equal(fp->peer_port, mf->ports[idx].peer_port);
			}
		}
	}
	assert_true(linked > 0);

	/* the LFTs in the mock are exactly what the routing engine computes */
	struct sm_lfts *l = NULL;
	struct sm_plane_result res;
	assert_int_equal(sm_route_chain(e->chain, f, 0, NULL, &l, &res), 0);
	for (uint32_t s = 0; s < l->n_switches; s++) {
		uint32_t fn = l->sw_node[s];
		uint32_t mn = sm_fabric_find_node(mf, f->nodes[fn].guid);
		assert_int_equal(sm_mock_lft_top(e->mock, mn), l->top_lid);
		const uint8_t *row = sm_lfts_row(l, s);
		for (unsigned lid = 0; lid <= l->top_lid; lid++)
			if (sm_mock_lft_get(e->mock, mn, (uint16_t)lid) != row[lid])
				fail_msg("switch %s LID %u: mock %u, routing %u", f->nodes[fn].desc, lid,
					 sm_mock_lft_get(e->mock, mn, (uint16_t)lid), row[lid]);
	}
	sm_lfts_free(l);
}

/*
 * After a reroute (lft_writer.h sm_lft_shadow_retarget): a shadow sharing
 * the old row moves to the new one with the blocks to write unknown; an
 * acknowledged Set of what the row holds only marks its block known (no
 * copy of the row), anything else takes a copy; a shadow that is not the
 * old row's is left alone.
 */
static void test_lft_retarget(void **state)
{
	(void)state;
	struct sm_lft_shadow s;
	uint16_t top = 200, out[SM_LFT_MAX_BLOCKS];
	uint8_t prev[201], row[201], blk[SM_LFT_BLOCK];
	for (unsigned i = 0; i <= top; i++)
		prev[i] = row[i] = (uint8_t)(1 + i % 5);
	row[70] = 7;   /* block 1 */
	row[199] = 8;  /* block 3 */
	sm_lft_shadow_init(&s);
	for (unsigned b = 0; b < 4; b++) {
		sm_lft_block(prev, top, b, blk);
		assert_int_equal(sm_lft_shadow_store(&s, b, blk), 0);
	}
	assert_int_equal(sm_lft_shadow_share(&s, prev, top), 1);
	assert_null(s.ent);
	uint8_t marks[4] = { 0, 1, 0, 1 };
	unsigned nb = sm_lft_diff_changed(row, top, &s, prev, marks, out);
	assert_int_equal(nb, 2);
	sm_lft_shadow_retarget(&s, prev, row, top, out, nb);
	assert_ptr_equal(s.row, row);
	assert_int_equal(s.known[1], 0);
	assert_int_equal(s.known[3], 0);
	assert_int_equal(sm_lft_blocks_to_read(top, &s, out), 0);   /* s.top 0: nothing worth reading */
	assert_int_equal(sm_lft_diff(row, top, &s, out), 2);
	/* block 1's Set acknowledged: known, still no copy; the shadow then holds row but block 3 */
	sm_lft_block(row, top, 1, blk);
	assert_int_equal(sm_lft_shadow_store(&s, 1, blk), 0);
	assert_null(s.ent);
	assert_int_equal(s.known[1], 1);
	assert_int_equal(sm_lft_shadow_share(&s, row, top), 0);   /* block 3 still unknown */
	sm_lft_block(row, top, 3, blk);
	assert_int_equal(sm_lft_shadow_store(&s, 3, blk), 0);
	assert_null(s.ent);
	assert_int_equal(sm_lft_shadow_share(&s, row, top), 1);
	assert_int_equal(sm_lft_diff(row, top, &s, out), 0);
	/* an answer that is not what the row holds: a copy of its own */
	blk[5] = 9;
	assert_int_equal(sm_lft_shadow_store(&s, 3, blk), 0);
	assert_non_null(s.ent);
	assert_null(s.row);
	assert_int_equal(sm_lft_diff(row, top, &s, out), 1);
	assert_int_equal(out[0], 3);
	/* not prev's shadow (a copy of its own): retarget leaves it */
	sm_lft_shadow_retarget(&s, prev, row, top, out, 1);
	assert_int_equal(s.known[3], 1);
	sm_lft_shadow_free(&s);
}

static void test_handbuilt_twice(void **state)
{
	(void)state;
	struct fx_env e;
	struct sm_cfg cfg;
	struct sm_summary sum;
	fx_env_init(&e, fx_hand_built(), NULL, NULL, "sm");
	fx_cfg(&e, &cfg);
	struct sm_fabric *f = fx_bringup(&e, NULL, &cfg, &sum);
	assert_int_equal(sum.counts.switches, 2);
	assert_int_equal(sum.counts.cas, 4);
	assert_int_equal(sum.counts.links, 8);
	assert_int_equal(sum.counts.lids, 2 + 6);   /* 2 switches + 6 CA ports */
	assert_int_equal(sum.sweeps, 1);
	assert_int_equal(sum.lids.fresh, 8);
	assert_int_equal(sum.link_ports, 16);
	assert_int_equal(sum.active_ports, 16);
	assert_true(sum.lft_blocks_written >= 2);
	assert_int_equal(sum.lft_blocks_read, 0);   /* fresh switches: nothing worth reading */
	assert_int_equal(sum.txn.retried, 0);
	/* the dual-homed CA was discovered with both ports */
	uint32_t dn = sm_fabric_find_node(f, 0x2000);
	assert_int_not_equal(dn, SM_NONE);
	assert_int_equal(sm_port(f, dn, 1)->guid, 0x2001);
	assert_int_equal(sm_port(f, dn, 2)->guid, 0x2002);
	/* NodeInfo: one per link end reached plus the SM's own node, no more */
	assert_int_equal(sum.txn.attr[SM_TXN_A_NODE_INFO].sent, 1 + 8);
	check_fabric(&e, f, 0);

	/* a second run keeps every LID and writes nothing */
	struct sm_summary sum2;
	struct sm_fabric *g = fx_bringup(&e, NULL, &cfg, &sum2);
	assert_int_equal(sum2.lids.from_file, 8);
	assert_int_equal(sum2.lids.moved, 0);
	assert_int_equal(sum2.lft_blocks_written, 0);
	assert_true(sum2.lft_blocks_read > 0);
	assert_int_equal(sum2.portinfo_lid_sets, 0);
	assert_int_equal(sum2.portinfo_state_sets, 0);
	assert_int_equal(sum2.switchinfo_sets, 0);
	for (uint32_t i = 0; i < f->n_ports; i++) {
		uint32_t gi = sm_fabric_find_port(g, f->ports[i].guid);
		if (f->ports[i].lid && gi != SM_NONE)
			assert_int_equal(g->ports[gi].lid, f->ports[i].lid);
	}
	check_fabric(&e, g, 0);
	sm_fabric_free(g);

	/* the state file lost: LIDs come back from the fabric itself */
	char p[128];
	snprintf(p, sizeof(p), "%s/guid2lid", e.dir);
	assert_int_equal(unlink(p), 0);
	g = fx_bringup(&e, NULL, &cfg, &sum2);
	assert_int_equal(sum2.lids.from_fabric, 8);
	assert_int_equal(sum2.lids.fresh, 0);
	assert_int_equal(sum2.lft_blocks_written, 0);
	assert_int_equal(access(p, F_OK), 0);
	sm_fabric_free(g);
	sm_fabric_free(f);
	fx_env_free(&e);
}

static void test_tree_lmc_and_opensm_file(void **state)
{
	(void)state;
	struct fx_env e;
	struct sm_cfg cfg;
	struct sm_summary sum;
	char g2l[128];
	fx_env_init(&e, fx_gen_tree(16, 8), NULL, NULL, "sm");
	/* an OpenSM guid2lid: host 3's port at LID 0x40 (aligned for LMC 2) */
	snprintf(g2l, sizeof(g2l), "%s/opensm-guid2lid", e.dir);
	FILE *o = fopen(g2l, "w");
	assert_non_null(o);
	fprintf(o, "0x%016llx 0x0040 0x0043\n",
		(unsigned long long)sm_gen_guid(SM_GEN_GUID_CA_PORT, 0, 3));
	fclose(o);
	fx_cfg(&e, &cfg);
	cfg.lmc = 2;
	cfg.guid2lid = g2l;
	struct sm_fabric *f = fx_bringup(&e, NULL, &cfg, &sum);
	assert_int_equal(sum.counts.cas, 16);
	assert_int_equal(sum.counts.switches, 4 + 4);
	assert_int_equal(sum.lids.from_file, 1);
	assert_int_equal(sum.counts.lids, 16 * 4 + 8);
	uint32_t pi = sm_fabric_find_port(f, sm_gen_guid(SM_GEN_GUID_CA_PORT, 0, 3));
	assert_int_equal(f->ports[pi].lid, 0x40);
	check_fabric(&e, f, 2);
	sm_fabric_free(f);
	unlink(g2l);
	fx_env_free(&e);
}

/* The answer order changes with the window; routing, and so the LFTs, must not. */
static void test_order_independent(void **state)
{
	(void)state;
	struct fx_env e;
	struct sm_cfg cfg;
	struct sm_summary sum;
	char err[512];
	fx_env_init(&e, fx_gen_tree(32, 8), NULL, NULL, "sm");
	sm_chain_free(e.chain);
	e.chain = NULL;
	if (sm_chain_new(e.reg, "ftree,minhop", NULL, NULL, &e.chain, err, sizeof(err)))
		fail_msg("chain: %s", err);
	fx_cfg(&e, &cfg);
	cfg.txn.window = 64;
	cfg.txn.per_dest = 8;
	struct sm_fabric *f = fx_bringup(&e, NULL, &cfg, &sum);
	assert_true(sum.lft_blocks_written > 0);
	sm_fabric_free(f);
	cfg.txn.window = 1;
	cfg.txn.per_dest = 1;
	f = fx_bringup(&e, NULL, &cfg, &sum);
	assert_int_equal(sum.lft_blocks_written, 0);
	assert_int_equal(sum.portinfo_lid_sets, 0);
	/* nodes come out in GUID order whatever the sweep order was */
	for (uint32_t n = 1; n < f->n_nodes; n++)
		assert_true(f->nodes[n - 1].guid < f->nodes[n].guid);
	check_fabric(&e, f, 0);
	sm_fabric_free(f);
	fx_env_free(&e);
}

static void test_drops_converge(void **state)
{
	(void)state;
	struct fx_env e;
	struct sm_cfg cfg;
	struct sm_summary sum;
	struct sm_mock_cfg mc;
	sm_mock_cfg_default(&mc);
	mc.seed = 42;
	mc.drop_ppm = 50000;     /* 5% of requests vanish */
	mc.corrupt_ppm = 10000;  /* 1% of answers are garbage */
	fx_env_init(&e, fx_gen_tree(32, 8), &mc, NULL, "sm");
	fx_cfg(&e, &cfg);
	cfg.txn.retries = 8;
	struct sm_fabric *f = fx_bringup(&e, NULL, &cfg, &sum);
	assert_true(sum.txn.retried > 0);
	assert_int_equal(sum.counts.cas, 32);
	/* the faults stop: check what the mock holds */
	sm_mock_set_faults(e.mock, 0, 0, 0, 0);
	check_fabric(&e, f, 0);
	sm_fabric_free(f);
	fx_env_free(&e);
}

/* fx_pass hook: cuts a link the moment the sweep first crosses it. */
struct cut_ctx {
	struct sm_mock *mock;
	uint32_t leaf;        /* node the SM's port is linked to */
	int done;
	uint32_t cut_port;
	int garble;           /* instead of cutting: one CA's NodeInfo answer claims port 0 */
};

static void cut_recv(struct fx_pass *p, uint8_t *buf, size_t *len)
{
	struct cut_ctx *c = p->arg;
	struct sm_smp smp;
	if (c->done)
		return;
	if (c->garble) {
		if (!sm_smp_decode(buf, *len, &smp, NULL) && smp.method == SM_METHOD_GET_RESP &&
		    smp.attr_id == SM_ATTR_NODE_INFO && smp.hop_cnt >= 2 && buf[SM_SMP_DATA_OFF + 2] == SM_NODE_CA) {
			buf[SM_SMP_DATA_OFF + 36] = 0;   /* NodeInfo.LocalPortNum */
			c->done = 1;
		}
		return;
	}
	/* the first switch answering NodeInfo two hops out: cut the link the answer came through */
	struct sm_node_info ni;
	if (!sm_smp_decode(buf, *len, &smp, NULL) && smp.method == SM_METHOD_GET_RESP &&
	    smp.attr_id == SM_ATTR_NODE_INFO && smp.hop_cnt == 2 &&
	    !sm_node_info_decode(smp.data, &ni, NULL) && ni.node_type == SM_NODE_SWITCH) {
		c->cut_port = smp.initial_path[2];
		assert_int_equal(sm_mock_link_down(c->mock, c->leaf, c->cut_port), 0);
		c->done = 1;
	}
}

static void run_wrapped(int garble)
{
	struct fx_env e;
	struct sm_cfg cfg;
	struct sm_summary sum;
	struct cut_ctx cc;
	fx_env_init(&e, fx_gen_tree(16, 8), NULL, NULL, "sm");
	const struct sm_fabric *mf = sm_mock_fabric(e.mock);
	memset(&cc, 0, sizeof(cc));
	cc.mock = e.mock;
	cc.leaf = mf->ports[e.sm_port].peer_node;
	cc.garble = garble;
	struct fx_pass pass = { .inner = e.t, .on_recv = cut_recv, .arg = &cc };
	struct sm_transport *w = fx_pass_new(&pass);
	fx_cfg(&e, &cfg);
	struct sm_fabric *f = fx_bringup(&e, w, &cfg, &sum);
	assert_true(cc.done);
	if (!garble)
		assert_true(sum.sweeps >= 2);  /* detected, swept again */
	else   /* dropped by the engine (sm_check.h), counted, asked again */
		assert_int_equal(sum.txn.rejected[SM_CHK_PORT_NUM], 1);
	uint32_t leaf = sm_fabric_find_node(f, mf->nodes[cc.leaf].guid);
	if (!garble)
		assert_int_equal(sm_port(f, leaf, cc.cut_port)->peer_node, SM_NONE);
	else
		assert_int_equal(sum.counts.cas, 16);
	check_fabric(&e, f, 0);
	sm_fabric_free(f);
	sm_transport_close(w);
	fx_env_free(&e);
}

static void test_link_cut_mid_sweep(void **state)
{
	(void)state;
	run_wrapped(0);
}

/* An answer that cannot be true (a CA port 0) is not trusted: dropped, counted, asked again. */
static void test_bad_nodeinfo_sweeps_again(void **state)
{
	(void)state;
	run_wrapped(1);
}

int main(void)
{
	const struct CMUnitTest lft[] = {
		cmocka_unit_test(test_lft_block_padding),
		cmocka_unit_test(test_lft_diff),
		cmocka_unit_test(test_lft_retarget),
	};
	const struct CMUnitTest mock[] = {
		cmocka_unit_test(test_handbuilt_twice),
		cmocka_unit_test(test_tree_lmc_and_opensm_file),
		cmocka_unit_test(test_order_independent),
		cmocka_unit_test(test_drops_converge),
		cmocka_unit_test(test_link_cut_mid_sweep),
		cmocka_unit_test(test_bad_nodeinfo_sweeps_again),
	};
	int rc = cmocka_run_group_tests_name("lft_diff", lft, NULL, NULL);
	return rc | cmocka_run_group_tests_name("sm_mock", mock, NULL, NULL);
}
