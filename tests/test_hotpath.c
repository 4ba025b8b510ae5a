/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for hot-path pinning (routing/hotpath/pin.c).
 *
 * The base routing here is the test's own min-hop up/down routing (every
 * minimal path of a fat tree is up*-down*), so these tests exercise the
 * pinning alone; the engine tests at the end wrap the real ftree.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "model/fabric.h"
#include "model/gen.h"
#include "routing/engine.h"
#include "routing/hotpath/hotpath.h"
#include "routing/metrics.h"
#include "routing/registry.h"
#include "routing/validate.h"
#include "model/profile.h"
#include <yaml.h>

#include "fixture/fixture.h"

static uint64_t rng_state;
static uint64_t rnd(void)
{
	/* splitmix64: seeded, reproducible */
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static struct sm_fabric *gen(unsigned radix, unsigned levels, unsigned hosts, int no_lids)
{
	struct sm_gen_params p;
	fx_gen_params(&p, hosts, radix, levels, 1);
	p.no_lids = no_lids;
	return fx_gen(&p);
}

/* CA ports of plane 0 with a LID, in fabric order. */
static uint32_t hosts_of(const struct sm_fabric *f, uint32_t *out)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < f->n_nodes; i++)
		if (f->nodes[i].type == SM_NODE_CA && f->nodes[i].plane == 0 && sm_port(f, i, 1)->lid)
			out[n++] = sm_port_index(f, i, 1);
	return n;
}

/* Test base routing: BFS from the destination's switch, next hop picked by LID among the minimal ones. */
/*
 * Breadth-first over switch-switch links from the switch slots in q[0..qt)
 * (their dist set): every switch reached gets dist = hops + its start's.
 * q has room for every switch.
 */
static void bfs_switches(const struct sm_fabric *f, const struct sm_lfts *l, int *dist, uint32_t *q, uint32_t qt)
{
	uint32_t qh = 0;
	while (qh < qt) {
		uint32_t s = q[qh++], n = l->sw_node[s];
		for (unsigned p = 1; p <= f->nodes[n].nports; p++) {
			const struct sm_port *pt = sm_port(f, n, p);
			if (pt->peer_node == SM_NONE || f->nodes[pt->peer_node].type != SM_NODE_SWITCH)
				continue;
			uint32_t t = l->slot_of_node[pt->peer_node];
			if (dist[t] < 0) {
				dist[t] = dist[s] + 1;
				q[qt++] = t;
			}
		}
	}
}

static struct sm_lfts *base_routes(const struct sm_fabric *f)
{
	struct sm_lfts *l = sm_lfts_new(f, 0);
	assert_non_null(l);
	uint32_t ns = l->n_switches;
	int *dist = malloc(ns * sizeof(int));
	uint32_t *q = malloc(ns * sizeof(uint32_t));
	for (uint32_t lid = 1; lid <= l->top_lid; lid++) {
		uint32_t pi = sm_fabric_find_lid(f, 0, (uint16_t)lid);
		if (pi == SM_NONE)
			continue;
		const struct sm_port *dp = &f->ports[pi];
		uint32_t dsw;
		uint8_t last;
		if (f->nodes[dp->node].type == SM_NODE_SWITCH) {
			dsw = dp->node;
			last = 0;
		} else {
			dsw = dp->peer_node;
			last = dp->peer_port;
		}
		for (uint32_t s = 0; s < ns; s++)
			dist[s] = -1;
		dist[l->slot_of_node[dsw]] = 0;
		q[0] = l->slot_of_node[dsw];
		sm_lfts_set(l, dsw, (uint16_t)lid, last);
		bfs_switches(f, l, dist, q, 1);
		for (uint32_t s = 0; s < ns; s++) {
			uint32_t n = l->sw_node[s];
			if (n == dsw || dist[s] < 0)
				continue;
			unsigned cand[SM_MAX_PORTS], nc = 0;
			for (unsigned p = 1; p <= f->nodes[n].nports; p++) {
				const struct sm_port *pt = sm_port(f, n, p);
				if (pt->peer_node == SM_NONE || f->nodes[pt->peer_node].type != SM_NODE_SWITCH)
					continue;
				if (dist[l->slot_of_node[pt->peer_node]] == dist[s] - 1)
					cand[nc++] = p;
			}
			assert_true(nc > 0);
			sm_lfts_set(l, n, (uint16_t)lid, (uint8_t)cand[lid % nc]);
		}
	}
	free(dist);
	free(q);
	return l;
}

/* Switch level: 0 for switches with CAs, else 1 + min level of neighbours (BFS). */
static void levels_of(const struct sm_fabric *f, const struct sm_lfts *l, int *lvl)
{
	uint32_t ns = l->n_switches, *q = malloc(ns * sizeof(uint32_t)), qt = 0;
	for (uint32_t s = 0; s < ns; s++) {
		lvl[s] = -1;
		uint32_t n = l->sw_node[s];
		for (unsigned p = 1; p <= f->nodes[n].nports; p++) {
			const struct sm_port *pt = sm_port(f, n, p);
			if (pt->peer_node != SM_NONE && f->nodes[pt->peer_node].type == SM_NODE_CA) {
				lvl[s] = 0;
				q[qt++] = s;
				break;
			}
		}
	}
	bfs_switches(f, l, lvl, q, qt);
	free(q);
}

/* Switch-LID pairs sm_validate found unreachable in the last check_routes() (pinning never touches them). */
static uint64_t last_sw_unreachable;

/*
 * Every CA reaches every CA LID (whole LMC range) and every route goes up
 * then down (so the CDG is acyclic): the properties pinning must keep.
 */
static void check_routes(const struct sm_fabric *f, const struct sm_lfts *l)
{
	uint32_t *h = malloc(f->n_ports * sizeof(uint32_t));
	int *lvl = malloc(l->n_switches * sizeof(int));
	uint32_t nh = hosts_of(f, h);
	levels_of(f, l, lvl);
	for (uint32_t i = 0; i < nh; i++)
		for (uint32_t j = 0; j < nh; j++) {
			if (i == j)
				continue;
			const struct sm_port *dp = &f->ports[h[j]];
			for (unsigned k = 0; k < (1u << dp->lmc); k++) {
				uint16_t dlid = (uint16_t)(dp->lid + k);
				uint32_t node = f->ports[h[i]].peer_node;
				int prev = -1, down = 0, hops = 0, ok = 0;
				while (hops++ < 16) {
					int lv = lvl[l->slot_of_node[node]];
					if (prev >= 0 && lv < prev)
						down = 1;
					else if (prev >= 0 && lv > prev && down)
						fail_msg("route %u -> lid %u goes up after down", i, dlid);
					prev = lv;
					uint8_t e = sm_lfts_get(l, node, dlid);
					assert_true(e != SM_LFT_NONE && e >= 1 && e <= f->nodes[node].nports);
					const struct sm_port *pt = sm_port(f, node, e);
					assert_true(pt->peer_node != SM_NONE);
					if (f->nodes[pt->peer_node].type == SM_NODE_CA) {
						ok = pt->peer_node == dp->node && pt->peer_port == dp->num;
						break;
					}
					node = pt->peer_node;
				}
				if (!ok)
					fail_msg("route %u -> lid %u does not arrive", i, dlid);
			}
		}
	free(h);
	free(lvl);
	/* and the project's validator agrees: reachability, no loop, no credit loop */
	struct sm_validation v;
	assert_int_equal(sm_validate(f, 0, l, 0, &v), 0);
	if (v.unreachable || v.credit_loop)
		fail_msg("sm_validate: %s", v.msg);
	last_sw_unreachable = v.sw_unreachable;
}

/* Random permutation of the hosts as flows of weight w (fixed points dropped). */
static size_t perm_flows(const uint32_t *h, uint32_t nh, double w, struct sm_flow *out)
{
	uint32_t *p = malloc(nh * sizeof(uint32_t));
	for (uint32_t i = 0; i < nh; i++)
		p[i] = i;
	for (uint32_t i = nh - 1; i > 0; i--) {
		uint32_t j = (uint32_t)(rnd() % (i + 1)), t = p[i];
		p[i] = p[j];
		p[j] = t;
	}
	size_t n = 0;
	for (uint32_t i = 0; i < nh; i++)
		if (p[i] != i)
			out[n++] = (struct sm_flow){ h[i], h[p[i]], w };
	free(p);
	return n;
}

/* A pinning's LFTs route every pair (check_routes); then its report and LFTs are released. */
static void routes_done(const struct sm_fabric *f, struct sm_lfts *out, struct sm_hotpath_report *r)
{
	check_routes(f, out);
	sm_hotpath_report_clear(r);
	sm_lfts_free(out);
}

/* A generated fabric and its ftree routes, per test (cmocka set-up and tear-down). */
struct tree {
	struct sm_fabric *f;
	struct sm_lfts *base;
};

static int tree_new(void **state, unsigned radix, unsigned levels, unsigned hosts)
{
	struct tree *t = malloc(sizeof(*t));
	assert_non_null(t);
	t->f = gen(radix, levels, hosts, 0);
	t->base = base_routes(t->f);
	*state = t;
	return 0;
}

/* 8 leaves x 4 hosts, 4 spines */
static int tree_32(void **state)
{
	return tree_new(state, 8, 2, 32);
}

/* 4 pods x 2 leaves x 2 hosts = 16 hosts */
static int tree_3level(void **state)
{
	return tree_new(state, 4, 3, 0);
}

/* the same 32 hosts with LMC 1: hosts LIDs 2, 4, ...; switches after */
static int tree_lmc(void **state)
{
	struct tree *t = malloc(sizeof(*t));
	assert_non_null(t);
	struct sm_fabric *f = t->f = gen(8, 2, 32, 1);
	uint16_t lid = 2;
	for (uint32_t i = 0; i < f->n_nodes; i++)
		if (f->nodes[i].type == SM_NODE_CA) {
			assert_int_equal(sm_fabric_set_lid(f, i, 1, lid, 1), 0);
			lid += 2;
		}
	for (uint32_t i = 0; i < f->n_nodes; i++)
		if (f->nodes[i].type == SM_NODE_SWITCH)
			assert_int_equal(sm_fabric_set_lid(f, i, 0, lid++, 0), 0);
	t->base = base_routes(f);
	*state = t;
	return 0;
}

static int tree_free(void **state)
{
	struct tree *t = *state;
	sm_lfts_free(t->base);
	sm_fabric_free(t->f);
	free(t);
	return 0;
}

static struct sm_fabric *tree_of(void **state, struct sm_lfts **base)
{
	struct tree *t = *state;
	*base = t->base;
	return t->f;
}

#define TREE_TEST(t, setup) cmocka_unit_test_setup_teardown(t, setup, tree_free)

/* Konig colouring reaches max load 1 on every permutation of a seeded set. */
static void test_colour_permutations(void **state)
{
	(void)state;
	/* radix 8: 8 leaves x 4 hosts, 4 spines; a half-full tree too */
	unsigned sizes[2] = { 32, 20 };
	for (unsigned z = 0; z < 2; z++) {
		struct sm_fabric *f = gen(8, 2, sizes[z], 0);
		struct sm_lfts *base = base_routes(f);
		check_routes(f, base);
		uint32_t h[64];
		uint32_t nh = hosts_of(f, h);
		assert_int_equal(nh, sizes[z]);
		struct sm_flow fl[64];
		unsigned worse = 0;
		rng_state = 42 + z;
		for (unsigned t = 0; t < 50; t++) {
			size_t n = perm_flows(h, nh, 1.0, fl);
			struct sm_lfts *out = sm_lfts_dup(base);
			struct sm_hotpath_report r;
			char err[256];
			assert_int_equal(sm_hotpath_pin(f, 0, base, fl, n, NULL, out, &r, err, sizeof(err)), 0);
			assert_string_equal(r.method, "colour");
			assert_int_equal(r.unroutable, 0);
			assert_int_equal(r.pinned, n);
			assert_true(fabs(r.max_load_after - 1.0) < 1e-12);
			assert_true(fabs(r.ebb_after - 1.0) < 1e-12);
			assert_true(r.max_load_before >= 1.0);
			if (r.max_load_before > 1)
				worse++;
			/* independent check through the evaluator with the reported DLIDs */
			double ml, hb, ebb;
			size_t bad;
			assert_int_equal(sm_hotpath_eval(f, 0, out, r.flow, r.dlid, r.n_flows, &ml, &hb, &ebb, &bad), 0);
			assert_int_equal(bad, 0);
			assert_true(fabs(ml - 1.0) < 1e-12);
			assert_true(fabs(hb - 1.0) < 1e-12);
			if (t % 10 == 0)
				check_routes(f, out);
			sm_hotpath_report_clear(&r);
			sm_lfts_free(out);
		}
		/* the base routing is oblivious: most random permutations congest it */
		assert_true(worse > 25);
		sm_lfts_free(base);
		sm_fabric_free(f);
	}
}

/* 3-level trees: two-stage colouring (leaf -> agg class, then agg -> core) also reaches 1. */
static void test_colour_three_level(void **state)
{
	(void)state;
	unsigned radix[2] = { 4, 8 }, hosts[2] = { 16, 96 };
	for (unsigned z = 0; z < 2; z++) {
		struct sm_fabric *f = gen(radix[z], 3, hosts[z], 0);
		struct sm_lfts *base = base_routes(f);
		uint32_t *h = malloc(hosts[z] * sizeof(*h));
		struct sm_flow *fl = malloc(hosts[z] * sizeof(*fl));
		uint32_t nh = hosts_of(f, h);
		assert_int_equal(nh, hosts[z]);
		rng_state = 500 + z;
		for (unsigned t = 0; t < 20; t++) {
			size_t n = perm_flows(h, nh, 1.0, fl);
			struct sm_lfts *out = sm_lfts_dup(base);
			struct sm_hotpath_report r;
			assert_int_equal(sm_hotpath_pin(f, 0, base, fl, n, NULL, out, &r, NULL, 0), 0);
			if (strcmp(r.method, "colour") || r.note[0])
				fail_msg("method %s, note '%s'", r.method, r.note);
			assert_int_equal(r.levels, 3);
			assert_int_equal(r.unroutable, 0);
			assert_true(fabs(r.max_load_after - 1.0) < 1e-12);
			assert_true(fabs(sm_metrics_max_load(f, 0, out, fl, n) - 1.0) < 1e-12);
			if (t % 5 == 0) {
				check_routes(f, out);
				assert_int_equal(last_sw_unreachable, 0);
			}
			sm_hotpath_report_clear(&r);
			sm_lfts_free(out);
		}
		free(h);
		free(fl);
		sm_lfts_free(base);
		sm_fabric_free(f);
	}
}

/* Greedy + improvement on permutations (colouring off): never worse than the base, at most 2. */
static void test_greedy_permutations(void **state)
{
	struct sm_lfts *base;
	struct sm_fabric *f = tree_of(state, &base);
	uint32_t h[64];
	uint32_t nh = hosts_of(f, h);
	struct sm_flow fl[64];
	struct sm_hotpath_opts o;
	sm_hotpath_opts_init(&o);
	o.method = SM_HOTPATH_GREEDY;
	rng_state = 7;
	unsigned at_one = 0;
	for (unsigned t = 0; t < 30; t++) {
		size_t n = perm_flows(h, nh, 1.0, fl);
		struct sm_lfts *out = sm_lfts_dup(base);
		struct sm_hotpath_report r;
		assert_int_equal(sm_hotpath_pin(f, 0, base, fl, n, &o, out, &r, NULL, 0), 0);
		assert_string_equal(r.method, "greedy");
		assert_true(r.max_load_after <= r.max_load_before + 1e-12);
		assert_true(r.max_load_after <= 2.0);
		if (r.max_load_after < 1.0 + 1e-12)
			at_one++;
		routes_done(f, out, &r);
	}
	/* colouring is exact; greedy + local search is not (4 spines, 4-regular multigraph: tight) */
	fprintf(stderr, "greedy: %u of 30 at max load 1\n", at_one);
	assert_true(at_one >= 1);
}

/* Destinations outside the hot set keep every base entry; hot ones change only up-entries. */
static void test_unprofiled_unchanged(void **state)
{
	struct sm_lfts *base;
	struct sm_fabric *f = tree_of(state, &base);
	uint32_t h[64];
	uint32_t nh = hosts_of(f, h);
	struct sm_flow fl[64];
	rng_state = 99;
	size_t n = perm_flows(h, nh, 1.0, fl);
	/* make weights distinct so top_k picks a known set */
	for (size_t i = 0; i < n; i++)
		fl[i].weight = 1.0 + (double)(n - i);
	struct sm_hotpath_opts o;
	sm_hotpath_opts_init(&o);
	o.top_k = 5;
	struct sm_lfts *out = sm_lfts_dup(base);
	struct sm_hotpath_report r;
	assert_int_equal(sm_hotpath_pin(f, 0, base, fl, n, &o, out, &r, NULL, 0), 0);
	assert_int_equal(r.hot_dests, 5);
	assert_int_equal(r.pinned, 5);
	uint8_t hot[0x10000] = { 0 };
	for (size_t i = 0; i < 5; i++)
		hot[f->ports[fl[i].dst].lid] = 1;
	int *lvl = malloc(out->n_switches * sizeof(int));
	levels_of(f, out, lvl);
	uint64_t diff = 0;
	for (uint32_t s = 0; s < out->n_switches; s++)
		for (uint32_t lid = 0; lid <= out->top_lid; lid++) {
			uint8_t a = sm_lfts_row(base, s)[lid], b = sm_lfts_row(out, s)[lid];
			if (a == b)
				continue;
			diff++;
			assert_true(hot[lid]);
			/* both old and new entries are up-ports */
			uint32_t n0 = out->sw_node[s];
			const struct sm_port *pa = sm_port(f, n0, a), *pb = sm_port(f, n0, b);
			assert_int_equal(lvl[out->slot_of_node[pa->peer_node]], lvl[s] + 1);
			assert_int_equal(lvl[out->slot_of_node[pb->peer_node]], lvl[s] + 1);
		}
	assert_int_equal(diff, r.lft_changed);
	assert_true(r.lft_blocks_changed <= r.lft_changed);
	for (size_t i = 0; i < r.n_flows; i++)
		assert_int_equal(r.is_pinned[i], hot[f->ports[r.flow[i].dst].lid]);
	check_routes(f, out);
	free(lvl);
	sm_hotpath_report_clear(&r);
	sm_lfts_free(out);
}

/* 3-level tree: greedy never worsens and keeps up/down routes. */
static void test_three_level(void **state)
{
	struct sm_lfts *base;
	struct sm_fabric *f = tree_of(state, &base);
	check_routes(f, base);
	uint32_t h[64];
	uint32_t nh = hosts_of(f, h);
	assert_int_equal(nh, 16);
	struct sm_flow fl[64 * 4];
	rng_state = 3;
	for (unsigned t = 0; t < 10; t++) {
		size_t n = 0;
		for (unsigned k = 0; k < 3; k++) {
			size_t m = perm_flows(h, nh, 1.0 + k, fl + n);
			n += m;
		}
		struct sm_lfts *out = sm_lfts_dup(base);
		struct sm_hotpath_report r;
		char err[256];
		assert_int_equal(sm_hotpath_pin(f, 0, base, fl, n, NULL, out, &r, err, sizeof(err)), 0);
		assert_int_equal(r.levels, 3);
		assert_string_equal(r.method, "greedy");
		assert_int_equal(r.unroutable, 0);
		assert_true(r.max_load_after <= r.max_load_before + 1e-12);
		assert_true(r.max_load_after >= r.host_bound - 1e-12);
		routes_done(f, out, &r);
	}
}

/*
 * LMC 1: two hosts of one leaf send to one destination. Without LMC they
 * share the leaf's up-port for that DLID (load 2); with LMC each gets its
 * own DLID, so its own spine (load 1).
 */
static void test_lmc(void **state)
{
	struct sm_lfts *base;
	struct sm_fabric *f = tree_of(state, &base);
	check_routes(f, base);
	uint32_t h[64];
	uint32_t nh = hosts_of(f, h);
	assert_int_equal(nh, 32);
	/* hosts 0 and 1 sit on leaf 0; destination host 20 */
	struct sm_flow fl[2] = { { h[0], h[20], 1 }, { h[1], h[20], 1 } };
	for (int use_lmc = 0; use_lmc < 2; use_lmc++) {
		struct sm_hotpath_opts o;
		sm_hotpath_opts_init(&o);
		o.no_lmc = !use_lmc;
		struct sm_lfts *out = sm_lfts_dup(base);
		struct sm_hotpath_report r;
		assert_int_equal(sm_hotpath_pin(f, 0, base, fl, 2, &o, out, &r, NULL, 0), 0);
		assert_int_equal(r.hot_lids, use_lmc ? 2 : 1);
		/* host 20 receives weight 2 anyway: the bound; the switch links carry 1 or 2 */
		assert_true(fabs(r.host_bound - 2) < 1e-12);
		double ml_sw = 0;
		/* recompute per-link loads on switch-switch links with the reported DLIDs */
		for (int k = 0; k < 2; k++) {
			uint16_t d = r.dlid[k];
			assert_true(d == f->ports[h[20]].lid || (use_lmc && d == f->ports[h[20]].lid + 1));
		}
		if (use_lmc)
			assert_int_not_equal(r.dlid[0], r.dlid[1]);
		/* same leaf, same DLID => same up-port; different DLIDs => different spines after pinning */
		uint32_t leaf = f->ports[h[0]].peer_node;
		uint8_t p0 = sm_lfts_get(out, leaf, r.dlid[0]), p1 = sm_lfts_get(out, leaf, r.dlid[1]);
		if (use_lmc)
			assert_int_not_equal(p0, p1);
		else
			assert_int_equal(p0, p1);
		/* the DLID list names both flows with the DLID each must use */
		char *txt = NULL;
		size_t tl = 0;
		FILE *mem = open_memstream(&txt, &tl);
		assert_int_equal(sm_hotpath_write_dlids(f, &r, mem), 0);
		fclose(mem);
		char want[128];
		snprintf(want, sizeof(want), "\"host00000 mlx5_0\" \"host00020 mlx5_0\" 1 %u pinned\n", r.dlid[0]);
		if (!strstr(txt, want))
			fail_msg("'%s' not in:\n%s", want, txt);
		free(txt);
		ml_sw = use_lmc ? 1 : 2;
		(void)ml_sw;
		routes_done(f, out, &r);
	}
}

static void test_bad_input(void **state)
{
	struct sm_lfts *base;
	struct sm_fabric *f = tree_of(state, &base);
	struct sm_lfts *other = sm_lfts_new(f, 0);
	other->plane = 1;
	char err[256] = "";
	assert_int_equal(sm_hotpath_pin(f, 0, base, NULL, 0, NULL, other, NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "do not match"));
	/* no flows: nothing pinned, LFTs untouched */
	struct sm_lfts *out = sm_lfts_dup(base);
	struct sm_hotpath_report r;
	assert_int_equal(sm_hotpath_pin(f, 0, base, NULL, 0, NULL, out, &r, NULL, 0), 0);
	assert_int_equal(r.pinned, 0);
	assert_int_equal(r.lft_changed, 0);
	/* garbage flows (bad ports, NaN/negative weights) are ignored, not a crash */
	struct sm_flow junk[3] = { { 0xffffff, 1, 1 }, { 1, 2, NAN }, { 1, 2, -1 } };
	sm_hotpath_report_clear(&r);
	assert_int_equal(sm_hotpath_pin(f, 0, base, junk, 3, NULL, out, &r, NULL, 0), 0);
	assert_int_equal(r.flows, 0);
	assert_int_equal(memcmp(out->ports, base->ports, (size_t)base->n_switches * (base->top_lid + 1u)), 0);
	char line[512];
	sm_hotpath_report_format(&r, line, sizeof(line));
	assert_non_null(strstr(line, "hotpath plane0: none, 0 of 0 flows pinned"));
	sm_hotpath_report_clear(&r);
	sm_hotpath_report_clear(NULL);
	sm_lfts_free(out);
	sm_lfts_free(other);
}


/* Init the hotpath engine from a YAML text (the engine's own subtree = the root). */
static int engine_init(const char *yaml_text, void **st, char *err, size_t errlen)
{
	yaml_parser_t p;
	yaml_document_t doc;
	yaml_parser_initialize(&p);
	yaml_parser_set_input_string(&p, (const unsigned char *)yaml_text, strlen(yaml_text));
	assert_true(yaml_parser_load(&p, &doc));
	int rc = sm_engine_hotpath.init(st, &doc, yaml_document_get_root_node(&doc), err, errlen);
	yaml_document_delete(&doc);
	yaml_parser_delete(&p);
	return rc;
}

static struct sm_lfts *engine_route(void *st, const struct sm_fabric *f, const struct sm_profile *prof, char *msg,
				    size_t msglen)
{
	struct sm_route_ctx ctx;
	memset(&ctx, 0, sizeof(ctx));
	ctx.fabric = f;
	ctx.profile = prof;
	ctx.plane = 0;
	ctx.out = sm_lfts_new(f, 0);
	assert_non_null(ctx.out);
	int rc = sm_engine_hotpath.route(st, &ctx);
	if (rc)
		fprintf(stderr, "route: %s\n", ctx.msg);
	assert_int_equal(rc, 0);
	snprintf(msg, msglen, "%s", ctx.msg);
	return ctx.out;
}

/* Plain ftree LFTs of plane 0 (the base the engine starts from). */
static struct sm_lfts *ftree_lfts(const struct sm_fabric *f)
{
	char err[256];
	void *fst = NULL;
	assert_int_equal(sm_engine_ftree.init(&fst, NULL, NULL, err, sizeof(err)), 0);
	struct sm_route_ctx c;
	memset(&c, 0, sizeof(c));
	c.fabric = f;
	c.out = sm_lfts_new(f, 0);
	assert_non_null(c.out);
	assert_int_equal(sm_engine_ftree.route(fst, &c), 0);
	sm_engine_ftree.free(fst);
	return c.out;
}

/* The engine = ftree + pinning: without a profile it is exactly ftree; with one, max load 1. */
static void test_engine_over_ftree(void **state)
{
	(void)state;
	struct sm_fabric *f = gen(8, 2, 32, 0);
	char err[256], msg[256];
	void *st = NULL;
	assert_int_equal(engine_init("{top_k: 0, share: 1, method: auto, improve: true, lmc: true, ftree: {}}", &st,
				     err, sizeof(err)), 0);
	assert_string_equal(sm_engine_hotpath.name, "hotpath");
	assert_int_equal(sm_engine_hotpath.abi_version, SM_ENGINE_ABI_VERSION);
	/* plain ftree for comparison */
	struct sm_lfts *ftl = ftree_lfts(f);
	struct sm_lfts *plain = engine_route(st, f, NULL, msg, sizeof(msg));
	assert_non_null(strstr(msg, "no profile"));
	assert_null(sm_hotpath_last_report(st, 0));
	assert_int_equal(memcmp(plain->ports, ftl->ports, (size_t)plain->n_switches * (plain->top_lid + 1u)), 0);
	check_routes(f, ftl);
	uint64_t ftree_sw_unreachable = last_sw_unreachable;

	uint32_t h[64];
	uint32_t nh = hosts_of(f, h);
	struct sm_flow fl[64];
	rng_state = 2026;
	unsigned improved = 0;
	for (unsigned t = 0; t < 20; t++) {
		struct sm_profile prof;
		memset(&prof, 0, sizeof(prof));
		prof.flows = fl;
		prof.n_flows = perm_flows(h, nh, 1.0, fl);
		struct sm_lfts *out = engine_route(st, f, &prof, msg, sizeof(msg));
		const struct sm_hotpath_report *r = sm_hotpath_last_report(st, 0);
		assert_non_null(r);
		assert_non_null(strstr(msg, "hotpath plane0: exact placement,"));
		/* the lead's evaluator agrees */
		double before = sm_metrics_max_load(f, 0, ftl, fl, prof.n_flows);
		double after = sm_metrics_max_load(f, 0, out, fl, prof.n_flows);
		assert_true(fabs(before - r->max_load_before) < 1e-9);
		assert_true(fabs(after - 1.0) < 1e-12);
		if (before > 1)
			improved++;
		check_routes(f, out);
		assert_int_equal(last_sw_unreachable, ftree_sw_unreachable);
		/* only hot-destination up-entries differ from ftree */
		uint64_t diff = 0;
		for (size_t i = 0; i < (size_t)out->n_switches * (out->top_lid + 1u); i++)
			diff += out->ports[i] != ftl->ports[i];
		assert_int_equal(diff, r->lft_changed);
		sm_lfts_free(out);
	}
	assert_true(improved > 10);
	sm_lfts_free(plain);
	sm_lfts_free(ftl);
	sm_engine_hotpath.free(st);
	sm_engine_hotpath.free(NULL);
	sm_fabric_free(f);
}

static void test_engine_options(void **state)
{
	(void)state;
	char err[256];
	void *st = NULL;
	assert_int_equal(engine_init("top_k: 10\nshare: 0.5\nmethod: greedy\nimprove_rounds: 7\n", &st, err, sizeof(err)), 0);
	sm_engine_hotpath.free(st);
	assert_int_equal(engine_init("top_k: 10\nbogus: 1\n", &st, err, sizeof(err)), -EINVAL);
	assert_null(st);
	assert_non_null(strstr(err, "config line 2: unknown key 'bogus'"));
	assert_int_equal(engine_init("share: 1.5\n", &st, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "bad value '1.5' for share"));
	assert_int_equal(engine_init("method: magic\n", &st, err, sizeof(err)), -EINVAL);
	assert_int_equal(engine_init("top_k: -1\n", &st, err, sizeof(err)), -EINVAL);
	assert_int_equal(engine_init("lmc: maybe\n", &st, err, sizeof(err)), -EINVAL);
	assert_int_equal(engine_init("[1, 2]\n", &st, err, sizeof(err)), -EINVAL);
	assert_int_equal(engine_init("ftree: {x: 1}\n", &st, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "ftree"));
}

/* share: destinations are taken heaviest first until the share of the weight is covered. */
static void test_share(void **state)
{
	struct sm_lfts *base;
	struct sm_fabric *f = tree_of(state, &base);
	uint32_t h[64];
	uint32_t nh = hosts_of(f, h);
	/* weights 8, 4, 2, 1, 1 (total 16) to distinct destinations */
	struct sm_flow fl[5] = { { h[0], h[20], 8 }, { h[1], h[21], 4 }, { h[2], h[22], 2 }, { h[3], h[23], 1 },
				 { h[4], h[24], 1 } };
	(void)nh;
	double shares[4] = { 0.5, 0.7, 0.8, 1.0 };
	unsigned want[4] = { 1, 2, 3, 5 };
	for (unsigned i = 0; i < 4; i++) {
		struct sm_hotpath_opts o;
		sm_hotpath_opts_init(&o);
		o.share = shares[i];
		struct sm_lfts *out = sm_lfts_dup(base);
		struct sm_hotpath_report r;
		assert_int_equal(sm_hotpath_pin(f, 0, base, fl, 5, &o, out, &r, NULL, 0), 0);
		assert_int_equal(r.hot_dests, want[i]);
		assert_int_equal(r.pinned, want[i]);
		assert_true(fabs(r.total_weight - 16) < 1e-12);
		sm_hotpath_report_clear(&r);
		sm_lfts_free(out);
	}
}

/* Counter snapshots -> gravity flows -> the engine: a hot receiver's flows are spread, routes stay valid. */
static void test_engine_counters_profile(void **state)
{
	(void)state;
	struct sm_fabric *f = gen(8, 2, 32, 0);
	/* hosts 0..3 (leaf 0) each sent 1000 words, host 20 received 4000: all traffic to one host */
	const char *text = "counters v1\nreading 1\n1 1 0 0\n2 1 0 0\n3 1 0 0\n4 1 0 0\n21 1 0 0\n"
			   "reading 2\n1 1 1000 0\n2 1 1000 0\n3 1 1000 0\n4 1 1000 0\n21 1 0 4000\n";
	struct sm_profile *prof = NULL;
	char err[256], msg[256];
	assert_int_equal(sm_profile_parse(f, "counters", text, strlen(text), NULL, &prof, err, sizeof(err)), 0);
	assert_int_equal(prof->n_flows, 4);
	void *st = NULL;
	assert_int_equal(engine_init("lmc: false\n", &st, err, sizeof(err)), 0);
	struct sm_lfts *out = engine_route(st, f, prof, msg, sizeof(msg));
	const struct sm_hotpath_report *r = sm_hotpath_last_report(st, 0);
	assert_non_null(r);
	assert_int_equal(r->pinned, 4);
	/* four hosts of one leaf to one DLID share the leaf's up-port: 4 x 4000 B on it; the host link has it too */
	assert_true(fabs(r->max_load_after - r->host_bound) < 1e-6);
	check_routes(f, out);
	sm_lfts_free(out);
	sm_engine_hotpath.free(st);
	sm_profile_free(prof);
	sm_fabric_free(f);
}

/* Degraded trees (links removed): ftree + pinning still validates and never loads the profile more. */
static void test_engine_degraded(void **state)
{
	(void)state;
	double frac[3] = { 0.05, 0.1, 0.2 };
	for (unsigned z = 0; z < 3; z++) {
		struct sm_gen_params gp;
		char err[256], msg[256];
		sm_gen_params_init(&gp);
		gp.radix = 8;
		gp.levels = 2;
		gp.remove_links = frac[z];
		gp.seed = 11 + z;
		struct sm_fabric *f = sm_fabric_new();
		assert_int_equal(sm_gen_fat_tree(&gp, f, err, sizeof(err)), 0);
		void *st = NULL;
		assert_int_equal(engine_init("{}", &st, err, sizeof(err)), 0);
		struct sm_lfts *ftl = ftree_lfts(f);
		struct sm_validation vb;
		assert_int_equal(sm_validate(f, 0, ftl, 0, &vb), 0);
		uint32_t h[64];
		uint32_t nh = hosts_of(f, h);
		struct sm_flow fl[64 * 3];
		rng_state = 77 + z;
		for (unsigned t = 0; t < 5; t++) {
			struct sm_profile prof;
			memset(&prof, 0, sizeof(prof));
			prof.flows = fl;
			prof.n_flows = perm_flows(h, nh, 1.0, fl);
			prof.n_flows += perm_flows(h, nh, 2.0, fl + prof.n_flows);
			struct sm_lfts *out = engine_route(st, f, &prof, msg, sizeof(msg));
			const struct sm_hotpath_report *r = sm_hotpath_last_report(st, 0);
			assert_non_null(r);
			assert_int_equal(r->unroutable, 0);
			assert_true(r->max_load_after <= r->max_load_before + 1e-9);
			struct sm_validation v;
			assert_int_equal(sm_validate(f, 0, out, 0, &v), 0);
			assert_int_equal(v.unreachable, 0);
			assert_true(v.credit_loop <= vb.credit_loop);
			assert_int_equal(v.sw_unreachable, vb.sw_unreachable);
			sm_lfts_free(out);
		}
		sm_lfts_free(ftl);
		sm_engine_hotpath.free(st);
		sm_fabric_free(f);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_colour_permutations),
		cmocka_unit_test(test_colour_three_level),
		TREE_TEST(test_greedy_permutations, tree_32),
		TREE_TEST(test_unprofiled_unchanged, tree_32),
		TREE_TEST(test_three_level, tree_3level),
		TREE_TEST(test_lmc, tree_lmc),
		TREE_TEST(test_bad_input, tree_32),
		cmocka_unit_test(test_engine_over_ftree),
		cmocka_unit_test(test_engine_options),
		TREE_TEST(test_share, tree_32),
		cmocka_unit_test(test_engine_degraded),
		cmocka_unit_test(test_engine_counters_profile),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
