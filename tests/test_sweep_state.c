/* SPDX-License-Identifier: MIT */
/*
 * The SM's memory across bring-ups (sm.h struct sm_state), light sweeps and
 * minimal churn, on the mock backend:
 *   - a heavy sweep of a configured fabric with a state reads no LFT block
 *     and writes none; without a state it reads them all back;
 *   - a light sweep costs one SMP per switch and finds nothing on a quiet
 *     fabric; a link taken down or brought up shows as PortStateChange, the
 *     heavy sweep clears it, and the next light sweep is quiet again;
 *   - a fabric whose switches all lost their LIDs and LFTs (a power cycle)
 *     is not trusted: every switch unknown, tables rewritten, right again;
 *   - one link failure under ftree,minhop changes only (switch, DLID)
 *     entries whose old route crossed that link, and exactly the blocks that
 *     differ are written; under minhop alone only the second holds (measured
 *     and printed, see the test);
 *   - the daemon core: a light request runs a light cycle recorded in the
 *     sweep history; a heavy request a heavy one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/daemon.h"
#include "mock/mock.h"
#include "routing/engine.h"
#include "sm/sm.h"
#include "config/smdconf.h"
#include "fixture/fixture.h"

/* A mock of `model` with the SM attached, the routing chain `chain` and an SM state (fixture.h). */
static void env_init(struct fx_env *e, struct sm_fabric *model, const char *chain)
{
	fx_env_init(e, model, NULL, chain, "state");
	assert_int_equal(sm_state_new(&e->state), 0);
}

static int g_incremental;   /* heavy(): sweep incrementally when the state allows */

static void note(void *arg, const char *msg)
{
	(void)arg;
	if (getenv("SWEEP_DEBUG"))
		print_message("note: %s\n", msg);
}

static void heavy(struct fx_env *e, struct sm_state *st, struct sm_summary *sum)
{
	struct sm_cfg cfg;
	char err[1024] = "";
	sm_cfg_default(&cfg);
	cfg.state_dir = e->dir;
	cfg.incremental = g_incremental;
	cfg.note = note;
	int rc = sm_bringup_state(e->t, e->chain, &cfg, st, sum, NULL, err, sizeof(err));
	if (rc)
		fail_msg("bring-up failed (%d): %s", rc, err);
}

static int light(struct fx_env *e, struct sm_light_summary *ls)
{
	struct sm_cfg cfg;
	char err[512] = "";
	sm_cfg_default(&cfg);
	int rc = sm_light_sweep(e->t, &cfg, e->state, ls, err, sizeof(err));
	if (rc < 0)
		fail_msg("light sweep failed (%d): %s", rc, err);
	return rc;
}

static unsigned n_switches(const struct sm_fabric *f)
{
	unsigned n = 0;
	for (uint32_t i = 0; i < f->n_nodes; i++)
		n += f->nodes[i].type == SM_NODE_SWITCH;
	return n;
}

/* The k-th switch-switch link end of the model (switch order, port order). */
static void pick_isl_k(const struct sm_fabric *f, unsigned k, uint32_t *n, unsigned *p)
{
	for (uint32_t i = 0; i < f->n_nodes; i++) {
		const struct sm_node *nd = &f->nodes[i];
		if (nd->type != SM_NODE_SWITCH)
			continue;
		for (unsigned q = 1; q <= nd->nports; q++) {
			const struct sm_port *pt = sm_port(f, i, q);
			if (pt->peer_node != SM_NONE && f->nodes[pt->peer_node].type == SM_NODE_SWITCH && !k--) {
				*n = i;
				*p = q;
				return;
			}
		}
	}
	fail_msg("no inter-switch link");
}

static void pick_isl(const struct sm_fabric *f, uint32_t *n, unsigned *p)
{
	pick_isl_k(f, 0, n, p);
}

static void test_no_readback(void **unused)
{
	(void)unused;
	struct fx_env e;
	struct sm_summary sum;
	struct sm_light_summary ls;
	env_init(&e, fx_gen_tree(32, 8), "ftree,minhop");
	unsigned sw = n_switches(e.model);

	assert_int_equal(light(&e, &ls), 1);        /* no state yet: must escalate */
	assert_string_not_equal(ls.why, "");
	heavy(&e, e.state, &sum);
	assert_true(sum.lft_blocks_written > 0);
	assert_int_equal(sum.lft_blocks_read, 0);  /* fresh switches have no LID: nothing worth reading */
	assert_true(sm_state_valid(e.state));
	assert_int_equal(sm_state_switches(e.state), sw);

	/* with the state: nothing read, nothing written, every switch trusted */
	heavy(&e, e.state, &sum);
	assert_int_equal(sum.lft_blocks_read, 0);
	assert_int_equal(sum.lft_blocks_written, 0);
	assert_int_equal(sum.portinfo_lid_sets + sum.portinfo_state_sets, 0);
	assert_int_equal(sum.lft_switches_trusted, sw);
	assert_int_equal(sum.lft_switches_unknown, 0);

	/* stateless, as before: every block of every switch read back, none written */
	heavy(&e, NULL, &sum);
	assert_int_equal(sum.lft_blocks_written, 0);
	assert_true(sum.lft_blocks_read >= sw);

	/* quiet fabric: one SwitchInfo per switch and the samples (PortInfo, LFT blocks), nothing seen */
	assert_int_equal(light(&e, &ls), 0);
	assert_int_equal(ls.switches, sw);
	assert_true(ls.ports_read > 0 && ls.lft_blocks_read > 0);
	assert_int_equal(ls.smps, sw + ls.ports_read + ls.lft_blocks_read);
	assert_int_equal(ls.changed, 0);
	assert_int_equal(ls.lft_blocks_drift + ls.foreign_ports + ls.missing_peers, 0);
	fx_env_free(&e);
}

static void test_light_link_events(void **unused)
{
	(void)unused;
	struct fx_env e;
	struct sm_summary sum;
	struct sm_light_summary ls;
	uint32_t n;
	unsigned p;
	env_init(&e, fx_gen_tree(32, 8), "ftree,minhop");
	heavy(&e, e.state, &sum);
	assert_int_equal(light(&e, &ls), 0);

	pick_isl(e.model, &n, &p);
	assert_int_equal(sm_mock_link_down(e.mock, n, p), 0);
	assert_int_equal(light(&e, &ls), 1);
	/* both ends flag PortStateChange; their traps 128 may arrive first */
	if (!strstr(ls.why, "PortStateChange") && !strstr(ls.why, "trap"))
		fail_msg("light sweep: %s", ls.why);
	assert_true(ls.changed >= 2);
	heavy(&e, e.state, &sum);
	assert_int_equal(sum.psc_cleared >= 2, 1);
	assert_true(sum.lft_blocks_written > 0);   /* routes over the link moved */
	assert_int_equal(sum.lft_blocks_read, 0);
	assert_int_equal(light(&e, &ls), 0);        /* cleared: quiet again */

	assert_int_equal(sm_mock_link_up(e.mock, n, p), 0);
	assert_int_equal(light(&e, &ls), 1);
	heavy(&e, e.state, &sum);
	assert_int_equal(sum.lft_blocks_read, 0);
	assert_true(sum.portinfo_state_sets >= 2);  /* the link's two ends activated */
	assert_int_equal(light(&e, &ls), 0);
	fx_env_free(&e);
}

/* Every switch lost its LID and LFT (a fresh mock of the same fabric): nothing is trusted. */
static void test_power_cycle(void **unused)
{
	(void)unused;
	struct fx_env e;
	struct sm_summary sum;
	char err[256];
	env_init(&e, fx_gen_tree(32, 8), "ftree,minhop");
	unsigned sw = n_switches(e.model);
	heavy(&e, e.state, &sum);
	uint32_t written = sum.lft_blocks_written;

	sm_transport_close(e.t);
	sm_mock_free(e.mock);
	assert_int_equal(sm_mock_new(e.model, NULL, &e.mock, err, sizeof(err)), 0);
	assert_int_equal(sm_mock_attach(e.mock, sm_mock_default_port(e.mock, 0), &e.t), 0);
	struct sm_light_summary ls;
	assert_int_equal(light(&e, &ls), 1);         /* LinearFDBTop 0 where we left more */
	heavy(&e, e.state, &sum);
	assert_int_equal(sum.lft_switches_trusted, 0);
	assert_int_equal(sum.lft_switches_unknown, sw);
	assert_int_equal(sum.lft_blocks_written, written);
	/* the tables are whole again */
	const struct sm_fabric *mf = sm_mock_fabric(e.mock);
	for (uint32_t s = 0; s < mf->n_nodes; s++) {
		if (mf->nodes[s].type != SM_NODE_SWITCH)
			continue;
		for (uint32_t c = 0; c < mf->n_nodes; c++) {
			if (mf->nodes[c].type != SM_NODE_CA)
				continue;
			struct sm_mock_port_state ps;
			assert_int_equal(sm_mock_port_state(e.mock, mf->nodes[c].port0 + 1, &ps), 0);
			assert_int_not_equal(sm_mock_lft_get(e.mock, s, ps.lid), SM_LFT_NONE);
		}
	}
	fx_env_free(&e);
}

/* LFTs of every switch as the mock holds them: [node][lid], up to top. */
static uint8_t *snap_lfts(struct fx_env *e, uint16_t top)
{
	const struct sm_fabric *mf = sm_mock_fabric(e->mock);
	uint8_t *t = malloc((size_t)mf->n_nodes * (top + 1u));
	assert_non_null(t);
	for (uint32_t n = 0; n < mf->n_nodes; n++)
		for (unsigned l = 0; l <= top; l++)
			t[(size_t)n * (top + 1u) + l] = mf->nodes[n].type == SM_NODE_SWITCH ?
				sm_mock_lft_get(e->mock, n, (uint16_t)l) : SM_LFT_NONE;
	return t;
}

/* Does the route from switch s to dlid under LFTs t (over the model's links) cross link (a,pa)-(b,pb)? */
static int crosses(const struct sm_fabric *f, const uint8_t *t, uint16_t top, uint32_t s, uint16_t dlid,
		   uint32_t a, unsigned pa, uint32_t b, unsigned pb)
{
	uint32_t x = s;
	for (int hop = 0; hop < 64; hop++) {
		if (f->nodes[x].type != SM_NODE_SWITCH)
			return 0;
		unsigned port = t[(size_t)x * (top + 1u) + dlid];
		if (port == 0 || port == SM_LFT_NONE || port > f->nodes[x].nports)
			return 0;
		if ((x == a && port == pa) || (x == b && port == pb))
			return 1;
		const struct sm_port *pt = sm_port(f, x, port);
		if (pt->peer_node == SM_NONE)
			return 0;
		x = pt->peer_node;
	}
	return 0;
}

struct churn {
	unsigned changed, foreign;      /* CA DLID entries changed; ... whose old route did not cross the link */
	unsigned sw_changed, sw_foreign;/* the same for switch LIDs (management traffic) */
	unsigned sw_foreign_elsewhere;  /* ... on a switch other than the failed link's two ends */
	unsigned blocks_differ, blocks_written;
	const char *engine;
};

static void churn_run(const char *chain, unsigned hosts, unsigned radix, unsigned k, struct churn *out)
{
	struct fx_env e;
	struct sm_summary sum;
	uint32_t a;
	unsigned pa;
	env_init(&e, fx_gen_tree(hosts, radix), chain);
	heavy(&e, e.state, &sum);
	uint16_t top = sum.top_lid;
	const struct sm_fabric *mf = sm_mock_fabric(e.mock);
	uint32_t nn = mf->n_nodes;
	uint8_t *before = snap_lfts(&e, top);
	uint32_t *set0 = calloc(nn, sizeof(*set0));
	assert_non_null(set0);
	for (uint32_t n = 0; n < nn; n++)
		set0[n] = sm_mock_lft_blocks_set(e.mock, n);

	/* a leaf-spine link */
	pick_isl_k(e.model, k, &a, &pa);
	uint8_t *is_ca = calloc(top + 1u, 1);
	assert_non_null(is_ca);
	for (uint32_t n = 0; n < nn; n++) {
		if (mf->nodes[n].type == SM_NODE_SWITCH)
			continue;
		for (unsigned q = 1; q <= mf->nodes[n].nports; q++) {
			struct sm_mock_port_state ps;
			if (!sm_mock_port_state(e.mock, mf->nodes[n].port0 + q, &ps) && ps.lid && ps.lid <= top)
				is_ca[ps.lid] = 1;
		}
	}
	const struct sm_port *ap = sm_port(e.model, a, pa);
	uint32_t b = ap->peer_node;
	unsigned pb = ap->peer_port;
	assert_int_equal(sm_mock_link_down(e.mock, a, pa), 0);
	heavy(&e, e.state, &sum);
	assert_int_equal(sum.top_lid, top);
	assert_int_equal(sum.lft_blocks_read, 0);
	uint8_t *after = snap_lfts(&e, top);

	memset(out, 0, sizeof(*out));
	out->engine = sum.engine;
	for (uint32_t n = 0; n < nn; n++) {
		if (mf->nodes[n].type != SM_NODE_SWITCH)
			continue;
		unsigned differ = 0;
		for (unsigned blk = 0; blk * 64u <= top; blk++) {
			int d = 0;
			for (unsigned l = blk * 64u; l < blk * 64u + 64 && l <= top; l++) {
				size_t i = (size_t)n * (top + 1u) + l;
				if (before[i] == after[i])
					continue;
				d = 1;
				int over = crosses(e.model, before, top, n, (uint16_t)l, a, pa, b, pb);
				if (!is_ca[l]) {
					out->sw_changed++;
					out->sw_foreign += !over;
					out->sw_foreign_elsewhere += !over && n != a && n != b;
					continue;
				}
				out->changed++;
				if (!over) {
					out->foreign++;
					if (getenv("CHURN_DEBUG"))
						print_message("foreign: switch %u (%s) lid %u: %u -> %u (link %u/%u-%u/%u)\n",
							      n, mf->nodes[n].desc, l, before[(size_t)n * (top + 1u) + l],
							      after[(size_t)n * (top + 1u) + l], a, pa, b, pb);
				}
			}
			differ += (unsigned)d;
		}
		unsigned wrote = sm_mock_lft_blocks_set(e.mock, n) - set0[n];
		/* exactly the blocks that differ, on every switch */
		if (wrote != differ)
			fail_msg("%s: switch %u: %u blocks written, %u differ", chain, n, wrote, differ);
		out->blocks_differ += differ;
		out->blocks_written += wrote;
	}
	assert_int_equal(out->blocks_written, sum.lft_blocks_written);
	free(before);
	free(after);
	free(set0);
	free(is_ca);
	fx_env_free(&e);
}

static void test_churn_ftree(void **unused)
{
	(void)unused;
	struct churn c;
	for (g_incremental = 0; g_incremental < 2; g_incremental++) {
	/* links: leaf 0's first uplink, one in the middle, the last leaf's last uplink (8 leaves x 8) */
	const unsigned ks[] = { 0, 27, 63 };
	for (unsigned i = 0; i < sizeof(ks) / sizeof(ks[0]); i++) {
		churn_run("ftree,minhop", 64, 16, ks[i], &c);
		assert_string_equal(c.engine, "ftree");
		assert_true(c.changed > 0);
		/* minimal churn: only CA routes that used the failed link moved */
		if (c.foreign)
			fail_msg("ftree: %u of %u changed CA entries did not route over the failed link",
				 c.foreign, c.changed);
		/*
		 * Switch LIDs (management only): a spine's route to another spine
		 * is a detour down, which ftree may re-pick on the spine that lost
		 * the link; nowhere else.
		 */
		assert_int_equal(c.sw_foreign_elsewhere, 0);
		print_message("ftree,minhop%s: link %u down: %u CA entries changed, all over the failed link; "
			      "%u switch-LID entries changed (%u not over it, on the link's ends); "
			      "%u blocks written = blocks that differ\n", g_incremental ? " (incremental)" : "",
			      ks[i], c.changed, c.sw_changed, c.sw_foreign, c.blocks_written);
	}
	}
	g_incremental = 0;
}

static void test_churn_minhop(void **unused)
{
	(void)unused;
	struct churn c;
	churn_run("minhop", 64, 16, 0, &c);
	assert_string_equal(c.engine, "minhop");
	/*
	 * minhop recomputes every table and rebalances the ports; what holds for
	 * it is that only blocks that differ are written (checked in churn_run).
	 * How many changed entries did not use the link is printed, not asserted.
	 */
	print_message("minhop: one leaf uplink down: %u CA entries changed, %u of them did not route over the "
		      "failed link (+%u switch-LID entries); %u blocks written = blocks that differ\n", c.changed,
		      c.foreign, c.sw_changed, c.blocks_written);
}

/*
 * A reroute by an engine that is not up/down by construction (minhop here)
 * is validated in full even after an incremental sweep: the incremental
 * check cannot look for credit loops (routing/registry.c accept_output).
 */
static void test_incremental_minhop_full(void **unused)
{
	(void)unused;
	struct fx_env e;
	struct sm_summary sum;
	uint32_t n;
	unsigned p;
	env_init(&e, fx_gen_tree(32, 8), "minhop");
	g_incremental = 1;
	heavy(&e, e.state, &sum);
	heavy(&e, e.state, &sum);
	assert_int_equal(sum.incremental, 1);
	pick_isl(e.model, &n, &p);
	assert_int_equal(sm_mock_link_down(e.mock, n, p), 0);
	heavy(&e, e.state, &sum);
	assert_int_equal(sum.incremental, 1);
	assert_int_equal(sum.delta_links_down, 1);
	assert_int_equal(sum.validate_rechecked, 0);   /* the whole plane walked, credit loops checked */
	g_incremental = 0;
	fx_env_free(&e);
}

/*
 * The incremental sweep patches the known fabric: a switch link and a CA
 * link taken down are removed (the CA falls out), the result is what a full
 * sweep then finds (it writes and sets nothing more); links coming up are
 * explored from their ends (the CA comes back), as tests/test_linkback.c
 * shows in more detail.
 */
static void test_incremental(void **unused)
{
	(void)unused;
	struct fx_env e;
	struct sm_summary sum;
	uint32_t n;
	unsigned p;
	env_init(&e, fx_gen_tree(32, 8), "ftree,minhop");
	unsigned sw = n_switches(e.model);
	g_incremental = 1;
	heavy(&e, e.state, &sum);                    /* no state yet: full */
	assert_int_equal(sum.incremental, 0);
	heavy(&e, e.state, &sum);                    /* quiet: SwitchInfo only */
	assert_int_equal(sum.incremental, 1);
	assert_int_equal(sum.delta_switches_read, 0);
	assert_int_equal(sum.lft_blocks_written, 0);
	assert_int_equal(sum.txn.sent, sw);

	pick_isl(e.model, &n, &p);
	assert_int_equal(sm_mock_link_down(e.mock, n, p), 0);
	heavy(&e, e.state, &sum);
	assert_int_equal(sum.incremental, 1);
	assert_int_equal(sum.delta_links_down, 1);
	assert_int_equal(sum.delta_switches_read, 2);
	assert_true(sum.lft_blocks_written > 0);
	assert_int_equal(sum.counts.cas, 32);
	/* routes validated incrementally: the LIDs whose routes changed or crossed the link */
	assert_true(sum.validate_rechecked > 0);
	assert_true(sum.validate_rechecked < 32);
	uint64_t delta_sent = sum.txn.sent - sum.lft_blocks_written;
	g_incremental = 0;
	heavy(&e, e.state, &sum);                    /* a full sweep agrees */
	assert_int_equal(sum.lft_blocks_written, 0);
	assert_int_equal(sum.validate_rechecked, 0);  /* and validates in full */
	assert_int_equal(sum.portinfo_lid_sets + sum.portinfo_state_sets, 0);
	/* SwitchInfo each, two switches' ports (0 included), clears: far fewer than a full sweep */
	print_message("incremental sweep after a link down: %llu SMPs besides LFT blocks; full sweep: %llu\n",
		      (unsigned long long)delta_sent, (unsigned long long)sum.txn.sent);
	assert_true(delta_sent * 2 < sum.txn.sent);

	/* a host unplugged: its CA falls out of the fabric */
	const struct sm_fabric *mf = sm_mock_fabric(e.mock);
	uint32_t ca = SM_NONE;
	for (uint32_t i = mf->n_nodes; i-- > 0;)
		if (mf->nodes[i].type == SM_NODE_CA) {
			ca = i;
			break;
		}
	assert_int_equal(sm_mock_link_down(e.mock, ca, 1), 0);
	g_incremental = 1;
	heavy(&e, e.state, &sum);
	assert_int_equal(sum.incremental, 1);
	assert_int_equal(sum.counts.cas, 31);
	g_incremental = 0;
	heavy(&e, e.state, &sum);
	assert_int_equal(sum.counts.cas, 31);
	assert_int_equal(sum.lft_blocks_written, 0);

	/* links come back: explored from the ports that came up */
	assert_int_equal(sm_mock_link_up(e.mock, ca, 1), 0);
	assert_int_equal(sm_mock_link_up(e.mock, n, p), 0);
	g_incremental = 1;
	heavy(&e, e.state, &sum);
	assert_int_equal(sum.incremental, 1);
	assert_int_equal(sum.delta_links_up, 2);
	assert_int_equal(sum.delta_nodes_new, 1);
	assert_int_equal(sum.validate_rechecked, 0);  /* links came up: validated in full */
	assert_int_equal(sum.counts.cas, 32);
	assert_true(sum.portinfo_state_sets >= 4);
	g_incremental = 0;
	heavy(&e, e.state, &sum);
	assert_int_equal(sum.lft_blocks_written, 0);
	assert_int_equal(sum.portinfo_lid_sets + sum.portinfo_state_sets, 0);
	fx_env_free(&e);
}

/* ---- the daemon core: light and heavy cycles in the status ---- */

static void test_daemon_kinds(void **unused)
{
	(void)unused;
	struct smd_dmn_status *st = malloc(sizeof(*st));
	char dir[64];

	assert_non_null(st);
	struct smd_dmn *d = fx_daemon_net4("/tmp/smd-sweepst-XXXXXX", dir, sizeof(dir));
	fx_wait_sweeps(d, 1, st);
	assert_int_equal(st->n_history, 1);
	assert_string_equal(st->history[0].kind, "heavy");
	assert_string_equal(st->history[0].reason, "start");
	assert_true(st->history[0].lft_blocks_written > 0);
	assert_int_equal(st->heavy_sweeps, 1);
	uint32_t sw = st->switches;
	assert_true(sw > 0);

	uint64_t target = smd_dmn_request_sweep_kind(d, SMD_SWEEP_LIGHT);
	fx_wait_sweeps(d, target, st);
	const struct smd_dmn_sweep *l = &st->history[st->n_history - 1];
	assert_string_equal(l->kind, "light");
	assert_string_equal(l->reason, "request");
	assert_int_equal(l->escalated, 0);
	assert_int_equal(l->planes_light, 1);
	/* a SwitchInfo per switch and the samples (PortInfo, LFT blocks): at most 64 of each here */
	assert_in_range(l->smps, sw + 2, sw + 2 * SM_LIGHT_MIN_SAMPLES);
	assert_int_equal(l->lft_blocks_written, 0);
	assert_int_equal(st->light_sweeps, 1);
	assert_int_equal(st->switches, sw);          /* a light cycle keeps the plane's counts */
	assert_int_equal(st->planes_up, 1);

	target = smd_dmn_request_sweep(d);
	fx_wait_sweeps(d, target, st);
	l = &st->history[st->n_history - 1];
	assert_string_equal(l->kind, "heavy");
	assert_int_equal(l->lft_blocks_read, 0);     /* the state knows every switch */
	assert_int_equal(l->lft_blocks_written, 0);
	assert_int_equal(st->heavy_sweeps, 2);

	target = smd_dmn_request_sweep_kind(d, SMD_SWEEP_REREAD);
	fx_wait_sweeps(d, target, st);
	l = &st->history[st->n_history - 1];
	assert_string_equal(l->kind, "heavy");
	assert_true(l->lft_blocks_read > 0);         /* forgotten: read back */
	assert_int_equal(l->lft_blocks_written, 0);

	/* the history keeps the last SMD_DMN_HISTORY cycles, oldest first */
	for (int k = 0; k < SMD_DMN_HISTORY + 2; k++) {
		target = smd_dmn_request_sweep_kind(d, SMD_SWEEP_LIGHT);
		fx_wait_sweeps(d, target, st);
	}
	assert_int_equal(st->n_history, SMD_DMN_HISTORY);
	assert_int_equal(st->history[SMD_DMN_HISTORY - 1].seq, st->cycles);
	assert_int_equal(st->history[0].seq, st->cycles - SMD_DMN_HISTORY + 1);
	smd_dmn_free(d);
	free(st);
	char p[128];
	snprintf(p, sizeof(p), "%s/plane-lids", dir);
	unlink(p);
	rmdir(dir);
}

/* The sweep keys of smd.yaml: defaults, values, FILE:LINE on a bad one. */
static void test_conf_keys(void **unused)
{
	(void)unused;
	struct smd_conf *c = smd_conf_new();
	char err[512] = "";
	assert_non_null(c);
	assert_int_equal(c->incremental_sweep, 1);
	assert_int_equal(c->trap_holdoff_ms, SMD_CONF_TRAP_HOLDOFF_MS);
	smd_conf_free(c);
	c = NULL;
	const char *good = "sweep_interval: 5\ntrap_holdoff_ms: 0\nincremental_sweep: false\n";
	FILE *in = fmemopen((void *)good, strlen(good), "r");
	assert_non_null(in);
	if (smd_conf_load_stream(in, "good.yaml", &c, err, sizeof(err)))
		fail_msg("%s", err);
	fclose(in);
	assert_int_equal(c->incremental_sweep, 0);
	assert_int_equal(c->trap_holdoff_ms, 0);
	smd_conf_free(c);
	c = NULL;
	const char *bad = "sweep_interval: 5\nincremental_sweep: sometimes\n";
	in = fmemopen((void *)bad, strlen(bad), "r");
	assert_non_null(in);
	assert_int_equal(smd_conf_load_stream(in, "bad.yaml", &c, err, sizeof(err)), -EINVAL);
	fclose(in);
	assert_null(c);
	assert_non_null(strstr(err, "bad.yaml:2: incremental_sweep"));
	const char *far = "trap_holdoff_ms: 10001\n";
	in = fmemopen((void *)far, strlen(far), "r");
	assert_non_null(in);
	assert_int_equal(smd_conf_load_stream(in, "far.yaml", &c, err, sizeof(err)), -EINVAL);
	fclose(in);
	assert_non_null(strstr(err, "far.yaml:1: trap_holdoff_ms"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_readback),
		cmocka_unit_test(test_light_link_events),
		cmocka_unit_test(test_power_cycle),
		cmocka_unit_test(test_churn_ftree),
		cmocka_unit_test(test_churn_minhop),
		cmocka_unit_test(test_incremental),
		cmocka_unit_test(test_incremental_minhop_full),
		cmocka_unit_test(test_daemon_kinds),
		cmocka_unit_test(test_conf_keys),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
