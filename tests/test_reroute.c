/* SPDX-License-Identifier: MIT */
/*
 * Incremental routing (routing/engine.h reroute(), routing/ftree/reroute.c,
 * the chain in routing/registry.c): after cables are lost, ftree starts
 * from the previous routes and routes again only the destination switches
 * whose routes crossed a lost cable.
 *
 *  - on a complete tree minus one link (leaf-agg, agg-core; 2 and 3
 *    levels) the result equals a cold ftree run on the degraded tree (byte
 *    for byte), and only the entries of the LIDs it reports changed differ
 *    from before;
 *  - on 2,048-host trees its worst shift congestion and EBB are a cold
 *    run's; from a tree degraded already (a second link, or 3% of links
 *    gone) it declines: the routes other destinations moved are not known;
 *  - 10% of the links lost at once: it declines where a cold run's repair
 *    pass (routing/ftree/repair.c) would run, else gives a cold run's;
 *  - a host that loses its cable: only its LIDs' entries change (cleared),
 *    and the result is a cold run's on the fabric without the cable and on
 *    the fabric without the host's node (stable host indices, ftree
 *    model.h), also with a switch link lost in the same sweep;
 *  - through the chain, a host gone from the fabric (renumbered without
 *    it, routing/reroute_nodes.h) is rerouted in the previous numbering,
 *    validated incrementally, laid out for the new fabric, a cold run's;
 *    not when its LID was the top one (the tables would shrink); and when
 *    it comes back, only its column is routed (validated incrementally),
 *    the tables before it went;
 *  - it declines (-EAGAIN, the chain routes in full) when a cable
 *    appeared (the chain does not even ask), and the chain validates the
 *    result against the previous routes (incremental check).
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "routing/engine.h"
#include "fx_ftree.h"
#include "routing/metrics.h"
#include "routing/registry.h"
#include "routing/reroute.h"
#include "routing/reroute_nodes.h"
#include "routing/validate.h"

static struct sm_fabric *copy(const struct sm_fabric *f)
{
	struct sm_fabric *g = sm_fabric_new();
	assert_non_null(g);
	assert_int_equal(sm_fabric_append(g, f, NULL), 0);
	return g;
}

static struct sm_fabric *tree(unsigned levels, unsigned radix, unsigned hosts)
{
	struct ftb_shape s;
	if (levels == 2)
		ftb_shape_2level(&s, radix, hosts);
	else
		ftb_shape_3level(&s, radix, hosts);
	struct sm_fabric *f = sm_fabric_new();
	assert_non_null(f);
	assert_int_equal(ftb_build(f, 0, &s, 0), 0);
	return f;
}

/* The k-th switch-switch link of f (counted from one end), as (node, port). */
static int nth_link(const struct sm_fabric *f, unsigned k, uint32_t *node, unsigned *port)
{
	for (uint32_t n = 0; n < f->n_nodes; n++) {
		if (f->nodes[n].type != SM_NODE_SWITCH)
			continue;
		for (unsigned p = 1; p <= f->nodes[n].nports; p++) {
			const struct sm_port *pt = sm_port(f, n, p);
			if (pt->peer_node == SM_NONE || pt->peer_node < n ||
			    f->nodes[pt->peer_node].type != SM_NODE_SWITCH || k--)
				continue;
			*node = n;
			*port = p;
			return 1;
		}
	}
	return 0;
}

/*
 * ftree's reroute() of f from (pf, pl): its rc; *out the tables (NULL
 * unless 0), *lids the LIDs it marked changed.
 */
static int reroute_with(void *st, const struct sm_fabric *f, const struct sm_fabric *pf, const struct sm_lfts *pl,
			struct sm_lfts **out, uint8_t **changed)
{
	struct sm_reroute rr = { .prev_fabric = pf, .prev = pl };
	assert_true(sm_reroute_same_numbering(f, pf, 0, NULL, pl));
	assert_int_equal(sm_reroute_removed(f, pf, (uint32_t **)&rr.removed, &rr.n_removed), 1);
	rr.changed = calloc((size_t)pl->top_lid + 1, 1);
	assert_non_null(rr.changed);
	struct sm_lfts *l = sm_lfts_dup(pl);
	assert_non_null(l);
	assert_non_null(sm_engine_reroute(&sm_engine_ftree));
	struct sm_route_ctx ctx = { .fabric = f, .plane = 0, .out = l, .reroute = &rr };
	int rc = sm_engine_ftree.reroute(st, &ctx);
	free((void *)rr.removed);
	if (rc) {
		sm_lfts_free(l);
		free(rr.changed);
		l = NULL;
		rr.changed = NULL;
	}
	*out = l;
	*changed = rr.changed;
	return rc;
}

/* The same with an engine state of its own (nothing kept from an earlier routing). */
static int reroute(const struct sm_fabric *f, const struct sm_fabric *pf, const struct sm_lfts *pl,
		   struct sm_lfts **out, uint8_t **changed)
{
	void *st = NULL;
	char err[256];
	assert_int_equal(sm_engine_ftree.init(&st, NULL, NULL, err, sizeof(err)), 0);
	int rc = reroute_with(st, f, pf, pl, out, changed);
	sm_engine_ftree.free(st);
	return rc;
}

/* Entries of b that differ from a; every one in a LID marked in changed, and every marked LID differs somewhere. */
static uint64_t diff_within(const struct sm_lfts *a, const struct sm_lfts *b, const uint8_t *changed)
{
	uint64_t n = 0;
	assert_int_equal(a->n_switches, b->n_switches);
	assert_int_equal(a->top_lid, b->top_lid);
	uint8_t *seen = calloc((size_t)a->top_lid + 1, 1);
	assert_non_null(seen);
	for (uint32_t s = 0; s < a->n_switches; s++)
		for (uint32_t lid = 0; lid <= a->top_lid; lid++)
			if (sm_lfts_row(a, s)[lid] != sm_lfts_row(b, s)[lid]) {
				if (!changed[lid])
					fail_msg("switch slot %u LID %u changed but not reported", s, lid);
				seen[lid] = 1;
				n++;
			}
	for (uint32_t lid = 0; lid <= a->top_lid; lid++)
		if (changed[lid] && !seen[lid])
			fail_msg("LID %u reported changed but equal everywhere", lid);
	free(seen);
	return n;
}

static void assert_same_lfts(const struct sm_lfts *a, const struct sm_lfts *b)
{
	assert_int_equal(a->n_switches, b->n_switches);
	assert_int_equal(a->top_lid, b->top_lid);
	size_t n = (size_t)a->n_switches * ((size_t)a->top_lid + 1);
	for (size_t i = 0; i < n; i++)
		if (a->ports[i] != b->ports[i])
			fail_msg("entry %zu (switch slot %zu, LID %zu): %u vs cold %u", i, i / (a->top_lid + 1u),
				 i % (a->top_lid + 1u), a->ports[i], b->ports[i]);
}

/* Complete trees minus one link: the incremental result is the cold one, and only reported LIDs change. */
static void test_complete_minus_one(void **state)
{
	(void)state;
	static const unsigned shapes[][3] = { { 3, 8, 64 }, { 2, 16, 128 }, { 3, 16, 512 } };
	for (unsigned t = 0; t < sizeof(shapes) / sizeof(shapes[0]); t++) {
		struct sm_fabric *f0 = tree(shapes[t][0], shapes[t][1], shapes[t][2]);
		struct sm_lfts *l0 = fx_ftree_route(f0);
		uint32_t node;
		unsigned port;
		for (unsigned k = 0; nth_link(f0, k, &node, &port); k += 7) {
			struct sm_fabric *f1 = copy(f0);
			sm_fabric_unlink(f1, node, port);
			struct sm_lfts *cold = fx_ftree_route(f1), *inc = NULL;
			uint8_t *changed = NULL;
			assert_int_equal(reroute(f1, f0, l0, &inc, &changed), 0);
			assert_same_lfts(inc, cold);
			uint64_t n = diff_within(l0, inc, changed);
			assert_true(n > 0);
			/* and the incremental validation of it, from the engine's account, passes */
			struct sm_validation v;
			struct sm_validate_prev prev = { .f = f0, .l = l0, .changed = changed };
			assert_int_equal(sm_validate_incremental(f1, 0, inc, &prev, SM_VALIDATE_NO_CDG, &v), 0);
			assert_true(sm_validate_ok(&v, SM_VALIDATE_NO_CDG));
			assert_true(v.rechecked > 0);
			free(changed);
			sm_lfts_free(inc);
			sm_lfts_free(cold);
			sm_fabric_free(f1);
		}
		sm_lfts_free(l0);
		sm_fabric_free(f0);
	}
}

static void metrics(const struct sm_fabric *f, const struct sm_lfts *l, struct sm_route_metrics *m)
{
	struct sm_metrics_opts o = { .n_random = 4, .seed = 1, .skip_cdg = 1 };
	assert_int_equal(sm_metrics_compute(f, 0, l, &o, m), 0);
	assert_int_equal(m->unreachable, 0);
	assert_int_equal(m->loops, 0);
}

/*
 * 2,048-host trees (2 and 3 levels): one link lost from the complete tree,
 * rerouted incrementally, has a cold run's worst shift congestion and EBB;
 * a second link from there, or one from a tree 3% degraded, is declined
 * (the moved routes of other destinations are not known): routed in full.
 */
static void test_degraded_quality(void **state)
{
	(void)state;
	static const unsigned shapes[][3] = { { 2, 64, 2048 }, { 3, 32, 2048 } };
	for (unsigned t = 0; t < sizeof(shapes) / sizeof(shapes[0]); t++)
		for (unsigned k = 5; k < 4000; k += 331) {
			struct sm_fabric *f0 = tree(shapes[t][0], shapes[t][1], shapes[t][2]);
			uint32_t node;
			unsigned port;
			if (!nth_link(f0, k + 17, &node, &port)) { /* 2 levels: 2,048 links, 3 levels: 4,096 */
				sm_fabric_free(f0);
				break;
			}
			struct sm_lfts *l0 = fx_ftree_route(f0);
			assert_true(nth_link(f0, k, &node, &port));
			struct sm_fabric *f1 = copy(f0);
			sm_fabric_unlink(f1, node, port);
			struct sm_lfts *cold = fx_ftree_route(f1), *inc = NULL;
			uint8_t *changed = NULL;
			assert_int_equal(reroute(f1, f0, l0, &inc, &changed), 0);
			diff_within(l0, inc, changed);
			assert_same_lfts(inc, cold);
			struct sm_route_metrics mc, mi;
			metrics(f1, cold, &mc);
			metrics(f1, inc, &mi);
			print_message("levels %u link %u: worst shift cold %u incremental %u, EBB cold %.4f incremental "
				      "%.4f\n", shapes[t][0], k, mc.shift_max_congestion, mi.shift_max_congestion, mc.ebb,
				      mi.ebb);
			assert_int_equal(mi.shift_max_congestion, mc.shift_max_congestion);
			assert_true(mi.ebb >= 0.999 * mc.ebb && mi.ebb <= 1.001 * mc.ebb);
			/* a second link: from a degraded tree, declined */
			assert_true(nth_link(f1, k + 17, &node, &port));
			struct sm_fabric *f2 = copy(f1);
			sm_fabric_unlink(f2, node, port);
			struct sm_lfts *inc2 = NULL;
			uint8_t *changed2 = NULL;
			assert_int_equal(reroute(f2, f1, inc, &inc2, &changed2), -EAGAIN);
			free(changed);
			sm_lfts_free(inc);
			sm_lfts_free(cold);
			sm_fabric_free(f2);
			sm_fabric_free(f1);
			sm_lfts_free(l0);
			sm_fabric_free(f0);
		}
	/* 3% of the links gone, then one more: declined too */
	struct sm_fabric *f0 = tree(3, 32, 2048);
	assert_true(ftb_remove_links(f0, 0, 0.03, 2) > 0);
	struct sm_lfts *l0 = fx_ftree_route(f0), *inc = NULL;
	uint32_t node;
	unsigned port;
	assert_true(nth_link(f0, 50, &node, &port));
	struct sm_fabric *f1 = copy(f0);
	sm_fabric_unlink(f1, node, port);
	uint8_t *changed = NULL;
	assert_int_equal(reroute(f1, f0, l0, &inc, &changed), -EAGAIN);
	sm_fabric_free(f1);
	sm_lfts_free(l0);
	sm_fabric_free(f0);
}

/*
 * Many links lost at once from a complete 3-level tree (10%): where a cold
 * run's repair pass (routing/ftree/repair.c) would change the moved
 * routes, reroute() declines; whatever it returns is a cold run's.
 */
static void test_repair_declined(void **state)
{
	(void)state;
	struct sm_fabric *f0 = tree(3, 32, 2048);
	struct sm_lfts *l0 = fx_ftree_route(f0);
	unsigned declined = 0;
	for (uint64_t seed = 1; seed <= 6; seed++) {
		struct sm_fabric *f1 = copy(f0);
		assert_true(ftb_remove_links(f1, 0, 0.10, seed) > 0);
		struct sm_lfts *cold = fx_ftree_route(f1), *inc = NULL;
		uint8_t *changed = NULL;
		int rc = reroute(f1, f0, l0, &inc, &changed);
		if (rc == 0) {
			diff_within(l0, inc, changed);
			assert_same_lfts(inc, cold);
		} else {
			assert_int_equal(rc, -EAGAIN);
			declined++;
		}
		print_message("10%% links, seed %llu: %s\n", (unsigned long long)seed, rc ? "declined" : "rerouted");
		free(changed);
		sm_lfts_free(inc);
		sm_lfts_free(cold);
		sm_fabric_free(f1);
	}
	assert_true(declined > 0);
	sm_lfts_free(l0);
	sm_fabric_free(f0);
}

/* The first CA of f and its leaf port. */
static uint32_t first_ca(const struct sm_fabric *f)
{
	for (uint32_t n = 0; n < f->n_nodes; n++)
		if (f->nodes[n].type == SM_NODE_CA && sm_port(f, n, 1)->peer_node != SM_NONE)
			return n;
	fail_msg("no CA");
	return SM_NONE;
}

/* A host that loses its cable: its LIDs are cleared on every switch, nothing else moves. */
static void test_host_gone(void **state)
{
	(void)state;
	struct sm_fabric *f0 = fx_ftree_small_3level();
	struct sm_lfts *l0 = fx_ftree_route(f0);
	uint32_t ca = first_ca(f0) + 5;
	uint16_t lid = sm_port(f0, ca, 1)->lid;
	struct sm_fabric *f1 = copy(f0);
	sm_fabric_unlink(f1, ca, 1);
	struct sm_lfts *inc = NULL;
	uint8_t *changed = NULL;
	assert_int_equal(reroute(f1, f0, l0, &inc, &changed), 0);
	assert_int_equal(diff_within(l0, inc, changed), l0->n_switches);
	for (uint32_t l = 0; l <= l0->top_lid; l++)
		assert_int_equal(changed[l], l == lid);
	for (uint32_t s = 0; s < inc->n_switches; s++)
		assert_int_equal(sm_lfts_row(inc, s)[lid], SM_LFT_NONE);
	free(changed);
	sm_lfts_free(inc);

	/* and a switch link too: host indices are stable, so rerouted as a cold run would */
	uint32_t node;
	unsigned port;
	assert_true(nth_link(f1, 3, &node, &port));
	sm_fabric_unlink(f1, node, port);
	assert_int_equal(reroute(f1, f0, l0, &inc, &changed), 0);
	struct sm_lfts *cold = fx_ftree_route(f1);
	assert_same_lfts(inc, cold);
	diff_within(l0, inc, changed);
	assert_int_equal(changed[lid], 1);
	free(changed);
	sm_lfts_free(cold);
	sm_lfts_free(inc);
	sm_lfts_free(l0);
	sm_fabric_free(f1);
	sm_fabric_free(f0);
}

/* f without node drop, numbered as a sweep that no longer finds it would (the others in order). */
static struct sm_fabric *without_node(const struct sm_fabric *f, uint32_t drop)
{
	struct sm_fabric *g = sm_fabric_new();
	uint32_t *map = malloc(((size_t)f->n_nodes + 1) * sizeof(*map));
	assert_non_null(g);
	assert_non_null(map);
	for (unsigned pl = 1; pl < f->n_planes; pl++)
		assert_int_equal(sm_fabric_add_plane(g, pl, NULL), 0);
	for (uint32_t n = 0; n < f->n_nodes; n++) {
		const struct sm_node *nd = &f->nodes[n];
		map[n] = SM_NONE;
		if (n == drop)
			continue;
		int64_t k = sm_fabric_add_node(g, nd->type, nd->guid, nd->nports, nd->plane, sm_port(f, n, 0)->guid);
		assert_true(k >= 0);
		map[n] = (uint32_t)k;
		for (unsigned p = 1; nd->type != SM_NODE_SWITCH && p <= nd->nports; p++)
			assert_int_equal(sm_fabric_set_port_guid(g, map[n], p, sm_port(f, n, p)->guid), 0);
	}
	for (uint32_t n = 0; n < f->n_nodes; n++)
		for (unsigned p = 0; map[n] != SM_NONE && p <= f->nodes[n].nports; p++) {
			const struct sm_port *pt = sm_port(f, n, p);
			if (p && pt->peer_node != SM_NONE && pt->peer_node > n && map[pt->peer_node] != SM_NONE)
				assert_int_equal(sm_fabric_link(g, map[n], p, map[pt->peer_node], pt->peer_port), 0);
			if (pt->lid)
				assert_int_equal(sm_fabric_set_lid(g, map[n], p, pt->lid, pt->lmc), 0);
		}
	free(map);
	return g;
}

/*
 * Hosts that go away one at a time (a node reboots) on 2- and 3-level
 * trees, LMC 0 and 1: the reroute changes only the lost host's LID column
 * (cleared on every switch), equals a cold run on the fabric without the
 * cable and on the fabric without the node (as the sweep finds it), and
 * the host coming back gets its old routes (a cold run on the complete
 * tree is the first one).
 */
static void test_hosts_gone(void **state)
{
	(void)state;
	static const unsigned shapes[][4] = { { 2, 16, 128, 0 }, { 3, 16, 512, 0 }, { 3, 8, 64, 1 } };
	for (unsigned t = 0; t < sizeof(shapes) / sizeof(shapes[0]); t++) {
		struct ftb_shape sh;
		if (shapes[t][0] == 2)
			ftb_shape_2level(&sh, shapes[t][1], shapes[t][2]);
		else
			ftb_shape_3level(&sh, shapes[t][1], shapes[t][2]);
		sh.lmc = shapes[t][3];
		struct sm_fabric *f0 = sm_fabric_new();
		assert_non_null(f0);
		assert_int_equal(ftb_build(f0, 0, &sh, 0), 0);
		struct sm_lfts *l0 = fx_ftree_route(f0);
		uint32_t ca0 = first_ca(f0), nca = 0;
		for (uint32_t n = ca0; n < f0->n_nodes; n++)
			nca += f0->nodes[n].type == SM_NODE_CA;
		for (uint32_t k = 0; k + 1 < nca; k += 13) {
			uint32_t ca = ca0 + k;
			const struct sm_port *hp = sm_port(f0, ca, 1);
			assert_int_equal(f0->nodes[ca].type, SM_NODE_CA);
			struct sm_fabric *f1 = copy(f0);
			sm_fabric_unlink(f1, ca, 1);
			struct sm_lfts *inc = NULL;
			uint8_t *changed = NULL;
			assert_int_equal(reroute(f1, f0, l0, &inc, &changed), 0);
			uint64_t n = diff_within(l0, inc, changed);
			assert_int_equal(n, (uint64_t)l0->n_switches << hp->lmc);
			for (uint32_t lid = 0; lid <= l0->top_lid; lid++)
				assert_int_equal(changed[lid], lid >= hp->lid && lid < hp->lid + (1u << hp->lmc));
			struct sm_lfts *cold = fx_ftree_route(f1);
			assert_same_lfts(inc, cold);
			sm_lfts_free(cold);
			struct sm_fabric *g = without_node(f0, ca);
			cold = fx_ftree_route(g);
			assert_same_lfts(inc, cold);
			sm_lfts_free(cold);
			sm_fabric_free(g);
			free(changed);
			sm_lfts_free(inc);
			sm_fabric_free(f1);
		}
		/* it comes back: the complete tree's routes, the same as before it went */
		struct sm_lfts *back = fx_ftree_route(f0);
		assert_same_lfts(back, l0);
		sm_lfts_free(back);
		sm_lfts_free(l0);
		sm_fabric_free(f0);
	}
}

/* The chain and its registry, the previous routes it was pointed at forgotten. */
static void chain_free(struct sm_chain *c, struct sm_registry *r)
{
	c->prev = NULL;
	c->reroute_from = NULL;
	sm_chain_free(c);
	sm_registry_free(r);
}

/* The chain from prev on f routes in full (res.reroute_why holds why) and gives want. */
static void chain_in_full(struct sm_chain *c, const struct sm_validate_prev *prev, const struct sm_fabric *f,
			  const struct sm_lfts *want, const char *why)
{
	struct sm_plane_result res;
	struct sm_lfts *out = NULL;
	c->prev = prev;
	c->reroute_from = prev;
	assert_int_equal(sm_route_chain(c, f, 0, NULL, &out, &res), 0);
	assert_int_equal(res.rerouted, 0);
	assert_non_null(strstr(res.reroute_why, why));
	assert_same_lfts(out, want);
	sm_lfts_free(out);
}

/* Through the chain: rerouted and validated incrementally; a cable that appeared routes in full. */
static void test_chain(void **state)
{
	(void)state;
	struct sm_fabric *f0 = fx_ftree_small_3level();
	struct sm_lfts *l0 = fx_ftree_route(f0);
	struct sm_registry *r = sm_registry_new(NULL);
	struct sm_chain *c = NULL;
	char err[256];
	assert_int_equal(sm_chain_new(r, "ftree,minhop", NULL, NULL, &c, err, sizeof(err)), 0);
	uint32_t node;
	unsigned port;
	assert_true(nth_link(f0, 20, &node, &port));
	struct sm_fabric *f1 = copy(f0);
	sm_fabric_unlink(f1, node, port);
	struct sm_validate_prev prev = { .f = f0, .l = l0 };
	c->prev = &prev;
	c->reroute_from = &prev;
	struct sm_plane_result res;
	struct sm_lfts *out = NULL, *cold = fx_ftree_route(f1);
	assert_int_equal(sm_route_chain(c, f1, 0, NULL, &out, &res), 0);
	assert_int_equal(res.rerouted, 1);
	assert_true(res.reroute_lids > 0);
	assert_true(res.val.rechecked > 0);
	assert_string_equal(res.engine, "ftree");
	assert_non_null(strstr(res.notes, "incremental"));
	assert_same_lfts(out, cold);
	sm_lfts_free(out);

	/* the reverse (the link comes back): a cable appeared, routed in full */
	struct sm_validate_prev back = { .f = f1, .l = cold };
	chain_in_full(c, &back, f0, l0, "cable appeared");
	c->prev = NULL;
	c->reroute_from = NULL;
	sm_lfts_free(cold);
	sm_chain_free(c);
	sm_registry_free(r);
	sm_lfts_free(l0);
	sm_fabric_free(f1);
	sm_fabric_free(f0);
}

/*
 * Through the chain, a host gone from the fabric (the sweep renumbers
 * without it): rerouted in the previous numbering and validated
 * incrementally (or in full), the tables laid out for the new fabric and
 * equal to a cold run's; with a switch cable lost as well, the same.
 */
static void test_chain_host_gone(void **state)
{
	(void)state;
	struct sm_fabric *f0 = tree(3, 16, 512);
	struct sm_lfts *l0 = fx_ftree_route(f0);
	struct sm_registry *r = sm_registry_new(NULL);
	struct sm_chain *c = NULL;
	char err[256];
	assert_int_equal(sm_chain_new(r, "ftree,minhop", NULL, NULL, &c, err, sizeof(err)), 0);
	struct sm_validate_prev prev = { .f = f0, .l = l0 };
	uint32_t ca = first_ca(f0) + 77;
	uint32_t lnode;
	unsigned lport;
	assert_true(nth_link(f0, 40, &lnode, &lport));
	for (int k = 0; k < 3; k++) {
		struct sm_fabric *g = without_node(f0, ca);
		if (k == 2)
			sm_fabric_unlink(g, sm_fabric_find_node(g, f0->nodes[lnode].guid), lport);
		c->prev = k == 1 ? NULL : &prev;
		c->reroute_from = &prev;
		struct sm_plane_result res;
		struct sm_lfts *out = NULL, *cold = fx_ftree_route(g);
		assert_int_equal(sm_route_chain(c, g, 0, NULL, &out, &res), 0);
		assert_int_equal(res.rerouted, 1);
		assert_true(res.reroute_lids >= 1);
		assert_true(k == 1 || res.val.rechecked > 0);
		assert_same_lfts(out, cold);
		assert_int_equal(out->n_nodes, g->n_nodes);
		for (uint32_t s = 0; s < out->n_switches; s++)
			assert_int_equal(out->sw_node[s], cold->sw_node[s]);
		for (uint32_t n = 0; n < g->n_nodes; n++)
			assert_int_equal(out->slot_of_node[n], cold->slot_of_node[n]);
		/* it comes back (the sweep numbers it in again): its column routed, the rest kept */
		struct sm_validate_prev gone = { .f = g, .l = out };
		c->prev = k == 1 ? NULL : &gone;
		c->reroute_from = &gone;
		struct sm_lfts *back = NULL, *want = k == 2 ? NULL : l0;
		if (k == 2) { /* the switch cable stays lost */
			struct sm_fabric *h = copy(f0);
			sm_fabric_unlink(h, lnode, lport);
			want = fx_ftree_route(h);
			assert_int_equal(sm_route_chain(c, h, 0, NULL, &back, &res), 0);
			sm_fabric_free(h);
		} else {
			assert_int_equal(sm_route_chain(c, f0, 0, NULL, &back, &res), 0);
		}
		/* from a tree with a switch cable lost, ftree declines (engine.h: degraded already) */
		assert_int_equal(res.rerouted, k != 2);
		assert_int_equal(res.reroute_lids, k != 2);
		assert_true(k != 0 || res.val.rechecked > 0);
		assert_true(k != 2 || strstr(res.reroute_why, "degraded already"));
		assert_same_lfts(back, want);
		assert_int_equal(back->n_nodes, f0->n_nodes);
		for (uint32_t n = 0; n < f0->n_nodes; n++)
			assert_int_equal(back->slot_of_node[n], want->slot_of_node[n]);
		if (want != l0)
			sm_lfts_free(want);
		sm_lfts_free(back);
		sm_lfts_free(out);
		sm_lfts_free(cold);
		sm_fabric_free(g);
	}
	/* the host with the top LID: the tables would shrink, routed in full */
	uint32_t last = SM_NONE;
	for (uint32_t n = 0; n < f0->n_nodes; n++)
		if (f0->nodes[n].type == SM_NODE_CA && sm_port(f0, n, 1)->lid == f0->planes[0].max_lid)
			last = n;
	assert_int_not_equal(last, SM_NONE);
	struct sm_fabric *g = without_node(f0, last);
	struct sm_lfts *cold = fx_ftree_route(g);
	chain_in_full(c, &prev, g, cold, "nodes, ports or LIDs changed");
	sm_lfts_free(cold);
	sm_fabric_free(g);
	chain_free(c, r);
	sm_lfts_free(l0);
	sm_fabric_free(f0);
}

/*
 * The model kept from the last routing (routing/ftree/stash.c): a reroute
 * from the fabric routed last takes it (an equal copy of that fabric
 * too), one from another fabric builds its own; the tables are the cold
 * run's either way.
 */
static void test_stash(void **state)
{
	(void)state;
	void *st = NULL;
	char err[256];
	assert_int_equal(sm_engine_ftree.init(&st, NULL, NULL, err, sizeof(err)), 0);
	struct sm_fabric *f0 = tree(3, 32, 2048);
	struct sm_lfts *l0 = sm_lfts_new(f0, 0);
	assert_non_null(l0);
	struct sm_route_ctx ctx = { .fabric = f0, .plane = 0, .out = l0 };
	assert_int_equal(sm_engine_ftree.route(st, &ctx), 0); /* keeps f0's model */
	struct sm_fabric *g0 = copy(f0); /* equal to f0: the kept model serves it */
	const unsigned links[] = { 5, 300, 2100, 7 };
	for (unsigned i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		uint32_t node;
		unsigned port;
		assert_true(nth_link(f0, links[i], &node, &port));
		struct sm_fabric *f1 = copy(f0);
		sm_fabric_unlink(f1, node, port);
		struct sm_lfts *cold = fx_ftree_route(f1), *inc = NULL;
		uint8_t *changed = NULL;
		/* 0: kept from route(); 1: f1-before's kept (another fabric); 2, 3: from g0, after a route() of f0 */
		if (i >= 2) {
			struct sm_lfts *again = sm_lfts_new(f0, 0);
			ctx = (struct sm_route_ctx){ .fabric = f0, .plane = 0, .out = again };
			assert_int_equal(sm_engine_ftree.route(st, &ctx), 0);
			assert_same_lfts(again, l0);
			sm_lfts_free(again);
		}
		assert_int_equal(reroute_with(st, f1, i >= 2 ? g0 : f0, l0, &inc, &changed), 0);
		assert_same_lfts(inc, cold);
		assert_true(diff_within(l0, inc, changed) > 0);
		free(changed);
		sm_lfts_free(inc);
		sm_lfts_free(cold);
		sm_fabric_free(f1);
	}
	sm_fabric_free(g0);
	sm_lfts_free(l0);
	sm_fabric_free(f0);
	sm_engine_ftree.free(st);
}

/*
 * The reroute's starting copy made ahead of time (model/lfts.c,
 * sm_lfts_prepare()): sm_lfts_dup() then gives the same bytes, and a copy
 * of a table that went is never taken for a newer one.
 */
static void test_prepare(void **state)
{
	(void)state;
	struct sm_fabric *f = tree(3, 64, 2048);
	struct sm_lfts *a = fx_ftree_route(f), *b = fx_ftree_route(f);
	assert_true((size_t)a->n_switches * ((size_t)a->top_lid + 1) >= ((size_t)2 << 20)); /* has a spare */
	b->ports[7] ^= 1;
	sm_lfts_free(b); /* the spare, holding other bytes */
	assert_int_equal(sm_lfts_prepare(a), 0);
	assert_int_equal(sm_lfts_prepare(a), 0); /* already a copy */
	struct sm_lfts *d = sm_lfts_dup(a);
	assert_same_lfts(d, a);
	sm_lfts_free(d);
	/* prepared, then a goes: the tables made after it (perhaps at its address) are copied in full */
	assert_int_equal(sm_lfts_prepare(a), 0);
	sm_lfts_free(a);
	struct sm_lfts *e = fx_ftree_route(f), *g = fx_ftree_route(f);
	g->ports[3] ^= 1;
	sm_lfts_free(e);
	d = sm_lfts_dup(g);
	assert_same_lfts(d, g);
	sm_lfts_free(d);
	/* a table written after the prepare of another: dup of the other is still right */
	struct sm_lfts *h = fx_ftree_route(f); /* takes the spare */
	e = fx_ftree_route(f);
	sm_lfts_free(h);
	assert_int_equal(sm_lfts_prepare(g), 0);
	assert_int_equal(sm_lfts_prepare(e), -EBUSY); /* one spare: g's copy stays */
	e->ports[11] ^= 1;
	d = sm_lfts_dup(e);
	assert_same_lfts(d, e);
	sm_lfts_free(d);
	d = sm_lfts_dup(g);
	assert_same_lfts(d, g);
	sm_lfts_free(d);
	sm_lfts_free(e);
	sm_lfts_free(g);
	sm_fabric_free(f);
}

/*
 * The incremental validation's one accepted kind of new cable
 * (sm_reroute_hosts_back()): an endpoint back at a switch with other
 * endpoints; not a switch cable, not a leaf that had no endpoint left.
 */
static void test_hosts_back(void **state)
{
	(void)state;
	struct sm_fabric *f0 = tree(2, 16, 128);
	uint32_t ca = first_ca(f0);
	uint32_t leaf = sm_port(f0, ca, 1)->peer_node;
	struct sm_fabric *f1 = copy(f0);
	sm_fabric_unlink(f1, ca, 1);
	assert_int_equal(sm_reroute_hosts_back(f0, f1, 0), 1);
	assert_int_equal(sm_reroute_hosts_back(f1, f0, 0), 0); /* that is a cable lost */
	uint32_t node;
	unsigned port;
	struct sm_fabric *f2 = copy(f1);
	assert_true(nth_link(f2, 3, &node, &port));
	sm_fabric_unlink(f2, node, port);
	assert_int_equal(sm_reroute_hosts_back(f0, f2, 0), 0);
	for (unsigned p = 1; p <= f1->nodes[leaf].nports; p++) {
		uint32_t q = sm_port(f1, leaf, p)->peer_node;
		if (q != SM_NONE && f1->nodes[q].type == SM_NODE_CA)
			sm_fabric_unlink(f1, leaf, p);
	}
	assert_int_equal(sm_reroute_hosts_back(f0, f1, 0), 0);
	sm_fabric_free(f2);
	sm_fabric_free(f1);
	sm_fabric_free(f0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_complete_minus_one),
		cmocka_unit_test(test_degraded_quality),
		cmocka_unit_test(test_repair_declined),
		cmocka_unit_test(test_host_gone),
		cmocka_unit_test(test_hosts_gone),
		cmocka_unit_test(test_chain),
		cmocka_unit_test(test_chain_host_gone),
		cmocka_unit_test(test_hosts_back),
		cmocka_unit_test(test_prepare),
		cmocka_unit_test(test_stash),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
