/* SPDX-License-Identifier: MIT */
/*
 * A link or a switch that comes back (issue 17), on the mock backend, with
 * the incremental sweep (sm_cfg.incremental) and ftree,minhop:
 *   - a switch-switch link, a host link, a whole spine, a whole leaf (with
 *     its hosts) and, on a 3-level tree, a middle switch go down and come
 *     back; both events are taken incrementally (no full discovery);
 *   - after the return the LFTs every switch holds equal those of a cold
 *     bring-up of the whole fabric (a new mock, no state) and those of the
 *     first bring-up: the routes the loss moved went back, nothing else;
 *   - exactly the LFT blocks that differ from what a switch held are
 *     written (a returning switch: read back first, it was not in the
 *     state); no CA pair is a black hole at any step;
 *   - a full heavy sweep afterwards writes and sets nothing;
 *   - a link that went down and up between two sweeps (it reads INIT where
 *     it was ACTIVE) is explored again and activated, nothing rerouted.
 * The SMPs of each step are printed beside a full sweep's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mock/mock.h"
#include "model/gen.h"
#include "model/lfts.h"
#include "sm/sm.h"
#include "sm/snapshot.h"
#include "sm/state.h"
#include "fixture/fixture.h"

static void note(void *arg, const char *msg)
{
	(void)arg;
	if (getenv("LINKBACK_DEBUG"))
		print_message("note: %s\n", msg);
}

/* One bring-up over t with the env's state directory; state NULL: stateless. */
static void bringup(struct fx_env *e, struct sm_transport *t, struct sm_state *st, int incremental,
		    struct sm_summary *sum)
{
	struct sm_cfg cfg;
	char err[1024] = "";
	fx_cfg(e, &cfg);
	cfg.incremental = incremental;
	cfg.note = note;
	int rc = sm_bringup_state(t, e->chain, &cfg, st, sum, NULL, err, sizeof(err));
	if (rc)
		fail_msg("bring-up failed (%d): %s", rc, err);
}

/* LFTs of every switch of mock m: [node][lid], up to top. */
static uint8_t *snap_lfts(const struct sm_mock *m, uint16_t top)
{
	const struct sm_fabric *mf = sm_mock_fabric(m);
	uint8_t *t = malloc((size_t)mf->n_nodes * (top + 1u));
	assert_non_null(t);
	for (uint32_t n = 0; n < mf->n_nodes; n++)
		for (unsigned l = 0; l <= top; l++)
			t[(size_t)n * (top + 1u) + l] = mf->nodes[n].type == SM_NODE_SWITCH ?
				sm_mock_lft_get(m, n, (uint16_t)l) : SM_LFT_NONE;
	return t;
}

/* Blocks (switch, 64 LIDs) and entries where a and b differ; per switch blocks into per_sw (may be NULL). */
static unsigned lft_diff(const struct sm_fabric *mf, const uint8_t *a, const uint8_t *b, uint16_t top,
			 unsigned *entries, unsigned *per_sw)
{
	unsigned blocks = 0;
	*entries = 0;
	for (uint32_t n = 0; n < mf->n_nodes; n++) {
		unsigned nb = 0;
		for (unsigned blk = 0; blk * 64u <= top; blk++) {
			int d = 0;
			for (unsigned l = blk * 64u; l < blk * 64u + 64 && l <= top; l++) {
				size_t i = (size_t)n * (top + 1u) + l;
				if (a[i] != b[i]) {
					d = 1;
					(*entries)++;
				}
			}
			nb += (unsigned)d;
		}
		if (per_sw)
			per_sw[n] = nb;
		blocks += nb;
	}
	return blocks;
}

/*
 * Every switch of the mock holds the SM's tables (the state's snapshot):
 * a block the program phase skipped although it changed shows here.
 */
static void switches_hold_state(const struct fx_env *e, const char *when)
{
	const struct sm_fabric *mf = sm_mock_fabric(e->mock), *sf = sm_state_fabric(e->state);
	const struct sm_lfts *l = e->state->snap->lfts;
	assert_non_null(sf);
	assert_non_null(l);
	for (uint32_t n = 0; n < mf->n_nodes; n++) {
		if (mf->nodes[n].type != SM_NODE_SWITCH)
			continue;
		uint32_t sn = 0;
		while (sn < sf->n_nodes && sf->nodes[sn].guid != mf->nodes[n].guid)
			sn++;
		if (sn == sf->n_nodes || l->slot_of_node[sn] == SM_NONE)
			continue;   /* gone from the SM's view (a switch taken down) */
		const uint8_t *row = sm_lfts_row(l, l->slot_of_node[sn]);
		for (unsigned lid = 1; lid <= l->top_lid; lid++)
			if (sm_mock_lft_get(e->mock, n, (uint16_t)lid) != row[lid])
				fail_msg("%s: switch %s holds port %u for LID %u, the SM computed %u", when,
					 mf->nodes[n].desc, sm_mock_lft_get(e->mock, n, (uint16_t)lid), lid, row[lid]);
	}
}

/* Switch level: 0 for a switch with a CA behind a port, else 1 + the lowest level of a neighbour. */
static unsigned sw_level(const struct sm_fabric *f, uint32_t n)
{
	unsigned best = 99;
	for (unsigned p = 1; p <= f->nodes[n].nports; p++) {
		uint32_t pn = sm_port(f, n, p)->peer_node;
		if (pn == SM_NONE)
			continue;
		if (f->nodes[pn].type != SM_NODE_SWITCH)
			return 0;
	}
	for (unsigned p = 1; p <= f->nodes[n].nports && best; p++) {
		uint32_t pn = sm_port(f, n, p)->peer_node;
		if (pn == SM_NONE)
			continue;
		int leaf = 0;
		for (unsigned q = 1; q <= f->nodes[pn].nports && !leaf; q++) {
			uint32_t qn = sm_port(f, pn, q)->peer_node;
			leaf = qn != SM_NONE && f->nodes[qn].type != SM_NODE_SWITCH;
		}
		if (leaf)
			best = 0;
	}
	return best == 0 ? 1 : 2;
}

/* The last switch of the model at level lvl (0 leaf, 1 above the leaves, 2 above those). */
static uint32_t pick_switch(const struct sm_fabric *f, unsigned lvl)
{
	for (uint32_t n = f->n_nodes; n-- > 0;)
		if (f->nodes[n].type == SM_NODE_SWITCH && sw_level(f, n) == lvl)
			return n;
	fail_msg("no switch at level %u", lvl);
	return SM_NONE;
}

enum what { W_ISL, W_HOST, W_SPINE, W_LEAF, W_MIDDLE, W_HOST0 };
static const char *const what_name[] = { "switch link", "host link", "top switch", "leaf switch (and its hosts)",
					  "middle switch", "first host's link" };

struct lb_result {
	uint64_t smps_cold, smps_down, smps_up, smps_full;
	unsigned blocks_down, blocks_up, entries_down, entries_up, links_up;
	unsigned rerouted;   /* the loss was routed by the engine's reroute() (program.c compares its blocks only) */
	unsigned rerouted_up;
	unsigned renumbered; /* a switch's node index in the SM's fabric moved with the loss */
};

/* The SM's node index of every switch of the mock (SM_NONE: not in its view), [mock nodes]. */
static uint32_t *switch_indices(const struct fx_env *e)
{
	const struct sm_fabric *mf = sm_mock_fabric(e->mock), *sf = sm_state_fabric(e->state);
	uint32_t *ix = calloc(mf->n_nodes, sizeof(*ix));
	assert_non_null(ix);
	for (uint32_t n = 0; n < mf->n_nodes; n++) {
		ix[n] = SM_NONE;
		for (uint32_t k = 0; k < sf->n_nodes && mf->nodes[n].type == SM_NODE_SWITCH; k++)
			if (sf->nodes[k].guid == mf->nodes[n].guid)
				ix[n] = k;
	}
	return ix;
}

static void event(struct fx_env *e, enum what w, int up, uint32_t n, unsigned p)
{
	unsigned links;
	switch (w) {
	case W_ISL:
	case W_HOST:
	case W_HOST0:
		assert_int_equal(up ? sm_mock_link_up(e->mock, n, p) : sm_mock_link_down(e->mock, n, p), 0);
		break;
	default:
		assert_int_equal(up ? sm_mock_switch_up(e->mock, n, &links) : sm_mock_switch_down(e->mock, n, &links), 0);
		assert_true(links > 0);
		break;
	}
}

static void no_black_holes(const struct fx_env *e, const char *when)
{
	unsigned pairs, holes = fx_mock_black_holes(e->mock, &pairs);
	if (holes)
		fail_msg("%s: %u of %u CA pairs are black holes", when, holes, pairs);
}

static void scenario(unsigned hosts, unsigned radix, unsigned levels, enum what w, struct lb_result *res)
{
	struct fx_env e;
	struct sm_summary sum;
	struct sm_gen_params gp;
	uint32_t n = SM_NONE;
	unsigned p = 0;
	char err[256];

	fx_gen_params(&gp, hosts, radix, levels, 1);
	gp.no_lids = 1;
	struct sm_fabric *model = fx_gen(&gp);
	if (w == W_HOST0) {
		/* CAs before the switches in GUID order (as in the 40k dump), so losing one renumbers the switches */
		for (uint32_t k = 0; k < model->n_nodes; k++) {
			struct sm_node *nd = &model->nodes[k];
			if (nd->type != SM_NODE_CA)
				continue;
			nd->guid &= ~(0xfULL << 36);
			assert_int_equal(sm_guid_map_put(&model->node_by_guid, nd->guid, k), 0);
		}
	}
	fx_env_init(&e, model, NULL, "ftree,minhop", "linkback");
	assert_int_equal(sm_state_new(&e.state), 0);
	memset(res, 0, sizeof(*res));

	bringup(&e, e.t, e.state, 1, &sum);              /* no state yet: full */
	assert_int_equal(sum.incremental, 0);
	res->smps_cold = sum.txn.sent;
	uint16_t top = sum.top_lid;
	const struct sm_fabric *mf = sm_mock_fabric(e.mock);
	uint8_t *l0 = snap_lfts(e.mock, top);

	switch (w) {
	case W_ISL:   /* a leaf's last uplink */
		n = pick_switch(e.model, 0);
		for (p = e.model->nodes[n].nports; p > 0; p--) {
			uint32_t pn = sm_port(e.model, n, p)->peer_node;
			if (pn != SM_NONE && e.model->nodes[pn].type == SM_NODE_SWITCH)
				break;
		}
		break;
	case W_HOST:  /* the last CA */
		for (n = e.model->n_nodes; n-- > 0;)
			if (e.model->nodes[n].type == SM_NODE_CA)
				break;
		p = 1;
		break;
	case W_HOST0: /* the first CA but the SM's own (the first): the SM's fabric is renumbered without it */
		n = 0;
		for (unsigned k = 0; n < e.model->n_nodes; n++)
			if (e.model->nodes[n].type == SM_NODE_CA && k++ == 1)
				break;
		p = 1;
		break;
	case W_SPINE:
		n = pick_switch(e.model, levels - 1);
		break;
	case W_LEAF:
		n = pick_switch(e.model, 0);
		break;
	case W_MIDDLE:
		n = pick_switch(e.model, 1);
		break;
	}

	/* down */
	uint32_t *ix0 = switch_indices(&e);
	uint32_t *set_c = calloc(mf->n_nodes, sizeof(*set_c));
	unsigned *differ_d = calloc(mf->n_nodes, sizeof(*differ_d));
	assert_non_null(set_c);
	assert_non_null(differ_d);
	for (uint32_t s = 0; s < mf->n_nodes; s++)
		set_c[s] = sm_mock_lft_blocks_set(e.mock, s);
	event(&e, w, 0, n, p);
	bringup(&e, e.t, e.state, 1, &sum);
	if (!sum.incremental)
		fail_msg("%s down: not taken incrementally", what_name[w]);
	res->smps_down = sum.txn.sent;
	if (w != W_HOST && w != W_HOST0 && w != W_LEAF)
		no_black_holes(&e, "after the loss");
	switches_hold_state(&e, "after the loss");
	res->rerouted = sum.route_incremental;
	uint8_t *l1 = snap_lfts(e.mock, top);
	res->blocks_down = lft_diff(mf, l0, l1, top, &res->entries_down, differ_d);
	assert_true(res->entries_down > 0);
	uint32_t *ix1 = switch_indices(&e);
	for (uint32_t s = 0; s < mf->n_nodes; s++)
		res->renumbered |= ix0[s] != ix1[s] && ix0[s] != SM_NONE && ix1[s] != SM_NONE;
	/* a host lost: exactly the blocks that differ from what each switch held are written */
	for (uint32_t s = 0; s < mf->n_nodes && (w == W_HOST || w == W_HOST0); s++)
		if (sm_mock_lft_blocks_set(e.mock, s) - set_c[s] != differ_d[s])
			fail_msg("%s down: switch %u (%s): %u blocks written, %u differ", what_name[w], s,
				 mf->nodes[s].desc, sm_mock_lft_blocks_set(e.mock, s) - set_c[s], differ_d[s]);
	free(ix0);
	free(ix1);
	free(set_c);
	free(differ_d);

	/* up */
	uint32_t *set0 = calloc(mf->n_nodes, sizeof(*set0));
	unsigned *differ = calloc(mf->n_nodes, sizeof(*differ));
	assert_non_null(set0);
	assert_non_null(differ);
	for (uint32_t s = 0; s < mf->n_nodes; s++)
		set0[s] = sm_mock_lft_blocks_set(e.mock, s);
	event(&e, w, 1, n, p);
	bringup(&e, e.t, e.state, 1, &sum);
	if (!sum.incremental)
		fail_msg("%s back: not taken incrementally", what_name[w]);
	assert_int_equal(sum.top_lid, top);
	res->smps_up = sum.txn.sent;
	res->links_up = sum.delta_links_up;
	res->rerouted_up = sum.route_incremental;
	assert_true(sum.delta_links_up > 0);
	no_black_holes(&e, "after the return");
	switches_hold_state(&e, "after the return");
	uint8_t *l2 = snap_lfts(e.mock, top);
	res->blocks_up = lft_diff(mf, l1, l2, top, &res->entries_up, differ);
	/* exactly the blocks that differ from what each switch held are written */
	for (uint32_t s = 0; s < mf->n_nodes; s++)
		if (sm_mock_lft_blocks_set(e.mock, s) - set0[s] != differ[s])
			fail_msg("%s back: switch %u (%s): %u blocks written, %u differ", what_name[w], s,
				 mf->nodes[s].desc, sm_mock_lft_blocks_set(e.mock, s) - set0[s], differ[s]);
	/* the routes went back: the tables of the first bring-up */
	unsigned ent;
	if (lft_diff(mf, l0, l2, top, &ent, NULL))
		fail_msg("%s back: %u LFT entries differ from the first bring-up's", what_name[w], ent);

	/* ... which are those of a cold bring-up of the restored fabric: a new mock, no state */
	struct sm_mock *cold;
	struct sm_transport *ct;
	assert_int_equal(sm_mock_new(e.model, NULL, &cold, err, sizeof(err)), 0);
	assert_int_equal(sm_mock_attach(cold, sm_mock_default_port(cold, 0), &ct), 0);
	struct sm_summary csum;
	bringup(&e, ct, NULL, 0, &csum);
	assert_int_equal(csum.top_lid, top);
	uint8_t *lc = snap_lfts(cold, top);
	if (lft_diff(mf, lc, l2, top, &ent, NULL))
		fail_msg("%s back: %u LFT entries differ from a cold routing of the restored fabric", what_name[w],
			 ent);
	sm_transport_close(ct);
	sm_mock_free(cold);

	/* a full sweep agrees: nothing written, nothing set */
	bringup(&e, e.t, e.state, 0, &sum);
	assert_int_equal(sum.incremental, 0);
	assert_int_equal(sum.lft_blocks_written, 0);
	assert_int_equal(sum.portinfo_lid_sets + sum.portinfo_state_sets, 0);
	res->smps_full = sum.txn.sent;

	print_message("%u hosts, %u levels, %s: down %u blocks / %u entries, %llu SMPs; back (%u links) %u blocks "
		      "/ %u entries, %llu SMPs; cold %llu SMPs, warm full sweep %llu SMPs\n", hosts, levels,
		      what_name[w], res->blocks_down, res->entries_down, (unsigned long long)res->smps_down,
		      res->links_up, res->blocks_up, res->entries_up, (unsigned long long)res->smps_up,
		      (unsigned long long)res->smps_cold, (unsigned long long)res->smps_full);
	free(l0);
	free(l1);
	free(l2);
	free(lc);
	free(set0);
	free(differ);
	fx_env_free(&e);
}

static void test_isl(void **unused)
{
	(void)unused;
	struct lb_result r;
	scenario(64, 16, 2, W_ISL, &r);
	assert_int_equal(r.links_up, 1);
	assert_int_equal(r.rerouted, 1);
	assert_int_equal(r.blocks_up, r.blocks_down);
	assert_int_equal(r.entries_up, r.entries_down);
	assert_true(r.smps_up * 4 < r.smps_full);
}

static void test_host(void **unused)
{
	(void)unused;
	struct lb_result r;
	scenario(64, 16, 2, W_HOST, &r);
	assert_int_equal(r.links_up, 1);
	assert_true(r.smps_up * 4 < r.smps_full);
}

/*
 * The first host goes and comes back: the SM's fabric is renumbered (the
 * switches move down one index), the reroute maps it back, and the
 * program phase finds each switch's previous row by its slot; a block it
 * skipped would leave a switch holding other tables than computed.
 */
static void test_host_renumbered(void **unused)
{
	(void)unused;
	struct lb_result r;
	scenario(64, 16, 2, W_HOST0, &r);
	assert_int_equal(r.links_up, 1);
	assert_int_equal(r.renumbered, 1);
	assert_int_equal(r.rerouted, 1);
	assert_int_equal(r.rerouted_up, 1);
	assert_true(r.smps_up * 4 < r.smps_full);
}

static void test_spine(void **unused)
{
	(void)unused;
	struct lb_result r;
	scenario(64, 16, 2, W_SPINE, &r);
	assert_true(r.links_up >= 2);
	assert_true(r.smps_up * 2 < r.smps_full);
}

static void test_leaf(void **unused)
{
	(void)unused;
	struct lb_result r;
	scenario(64, 16, 2, W_LEAF, &r);
	assert_true(r.smps_up * 2 < r.smps_full);
}

static void test_three_levels(void **unused)
{
	(void)unused;
	struct lb_result r;
	scenario(128, 8, 3, W_MIDDLE, &r);
	scenario(128, 8, 3, W_SPINE, &r);
	scenario(128, 8, 3, W_ISL, &r);
}

/* Down and up again before the next sweep: a bounce. */
static void test_bounce(void **unused)
{
	(void)unused;
	struct fx_env e;
	struct sm_summary sum;
	fx_env_init(&e, fx_gen_tree(64, 16), NULL, "ftree,minhop", "linkback");
	assert_int_equal(sm_state_new(&e.state), 0);
	bringup(&e, e.t, e.state, 1, &sum);
	uint32_t sw = pick_switch(e.model, 0), ca = SM_NONE;
	unsigned p = e.model->nodes[sw].nports;   /* the leaf's last port: an uplink */
	for (uint32_t n = e.model->n_nodes; n-- > 0 && ca == SM_NONE;)
		if (e.model->nodes[n].type == SM_NODE_CA)
			ca = n;
	assert_int_equal(sm_mock_link_down(e.mock, sw, p), 0);
	assert_int_equal(sm_mock_link_up(e.mock, sw, p), 0);
	assert_int_equal(sm_mock_link_down(e.mock, ca, 1), 0);
	assert_int_equal(sm_mock_link_up(e.mock, ca, 1), 0);
	bringup(&e, e.t, e.state, 1, &sum);
	assert_int_equal(sum.incremental, 1);
	assert_int_equal(sum.delta_links_up, 2);
	assert_int_equal(sum.lft_blocks_written, 0);
	assert_int_equal(sum.portinfo_state_sets, 8);   /* both ends of both links: ARMED, then ACTIVE */
	assert_int_equal(sum.active_ports, sum.link_ports);
	no_black_holes(&e, "after the bounce");
	bringup(&e, e.t, e.state, 0, &sum);            /* a full sweep agrees */
	assert_int_equal(sum.lft_blocks_written + sum.portinfo_lid_sets + sum.portinfo_state_sets, 0);
	fx_env_free(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_isl),
		cmocka_unit_test(test_host),
		cmocka_unit_test(test_host_renumbered),
		cmocka_unit_test(test_spine),
		cmocka_unit_test(test_leaf),
		cmocka_unit_test(test_three_levels),
		cmocka_unit_test(test_bounce),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
