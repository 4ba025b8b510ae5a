/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the ftree engine (routing/ftree*.c), judged by the
 * evaluator (routing/metrics.c) and by direct LFT inspection.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <yaml.h>

#include "routing/engine.h"
#include "mock/mock.h"
#include "routing/registry.h"
#include "sm/sm.h"
#include "ftbuild.h"
#include "routing/metrics.h"
#include "routing/validate.h"

extern const struct sm_engine_ops sm_engine_ftree;

static int route(struct sm_fabric *f, unsigned plane, struct sm_lfts **out, char *msg)
{
	void *st = NULL;
	char err[256];
	assert_int_equal(sm_engine_ftree.init(&st, NULL, NULL, err, sizeof(err)), 0);
	*out = sm_lfts_new(f, plane);
	assert_non_null(*out);
	struct sm_route_ctx ctx = { .fabric = f, .plane = plane, .out = *out };
	int rc = sm_engine_ftree.route(st, &ctx);
	if (msg)
		memcpy(msg, ctx.msg, sizeof(ctx.msg));
	sm_engine_ftree.free(st);
	return rc;
}

/* The project's validator must accept the routes: all pairs, all switch LIDs, no credit loop. */
static void check_valid(const struct sm_fabric *f, const struct sm_lfts *l)
{
	struct sm_validation v;
	assert_int_equal(sm_validate(f, 0, l, 0, &v), 0);
	if (!sm_validate_ok(&v, 0))
		fail_msg("validation: %s", v.msg);
	assert_int_equal(v.credit_loop, 0);
	assert_int_equal(v.sw_unreachable, 0);
}

static void check_full(const struct ftb_shape *s, int even_links)
{
	struct sm_fabric *f = sm_fabric_new();
	struct sm_lfts *l;
	struct sm_route_metrics m;
	struct sm_metrics_opts o = { .n_random = 30, .seed = 11 };
	assert_int_equal(ftb_build(f, 0, s, 0), 0);
	assert_int_equal(route(f, 0, &l, NULL), 0);
	assert_int_equal(sm_metrics_compute(f, 0, l, &o, &m), 0);
	assert_int_equal(m.unreachable, 0);
	assert_int_equal(m.loops, 0);
	assert_true(m.minimal_share > 0.999999);
	assert_int_equal(m.shift_max_congestion, 1);
	assert_int_equal(m.credit_loop, 0);
	check_valid(f, l);
	/* on a 2-level tree every switch link carries the same number of routes */
	if (even_links)
		assert_true(m.efi_max_over_mean < 1.0001);
	sm_lfts_free(l);
	sm_fabric_free(f);
}

static void test_full_2level(void **state)
{
	(void)state;
	struct ftb_shape s;
	ftb_shape_2level(&s, 8, 16);
	check_full(&s, 1);
	ftb_shape_2level(&s, 16, 128);
	check_full(&s, 1);
	/* parallel links: 4 spines, 2 links per leaf-spine pair, 8 hosts per leaf */
	s = (struct ftb_shape){ .levels = 2, .leaves = 6, .hosts = 8, .up = 4, .width = 2 };
	check_full(&s, 1);
}

static void test_full_3level(void **state)
{
	(void)state;
	struct ftb_shape s;
	ftb_shape_3level(&s, 8, 64);   /* 4 pods x 4 leaves x 4 hosts, 16 cores */
	check_full(&s, 0);
	ftb_shape_3level(&s, 8, 32);   /* half the pods: cores half used */
	check_full(&s, 0);
}

/* Only routes that used the removed link move; everything else keeps the full-tree entry. */
static void test_degraded_moves_only_displaced(void **state)
{
	(void)state;
	struct ftb_shape s;
	ftb_shape_2level(&s, 8, 16);  /* 4 leaves x 4 hosts, 4 spines; host idx = node order */
	struct sm_fabric *f = sm_fabric_new();
	struct sm_lfts *full, *deg;
	char msg[256];
	assert_int_equal(ftb_build(f, 0, &s, 0), 0);
	assert_int_equal(route(f, 0, &full, NULL), 0);
	/* leaf 0 (node 0) loses its link to spine 0 (port 5) */
	sm_fabric_unlink(f, 0, 5);
	assert_int_equal(route(f, 0, &deg, msg), 0);
	assert_non_null(strstr(msg, "moved"));
	unsigned changed = 0;
	for (uint32_t lf = 0; lf < 4; lf++)
		for (uint32_t h = 0; h < 16; h++) {
			uint16_t lid = (uint16_t)(9 + h); /* 8 switch LIDs first */
			uint8_t a = sm_lfts_get(full, lf, lid), b = sm_lfts_get(deg, lf, lid);
			assert_int_not_equal(b, SM_LFT_NONE);
			if (a != b) {
				changed++;
				/* the new port is a surviving uplink, never the dead one */
				assert_true(b >= 6 && b <= 8);
			}
		}
	/* leaf 0: remote hosts 4, 8, 12 used spine 0; leaves 1-3: host 0 was reached via spine 0 */
	assert_int_equal(changed, 6);
	struct sm_route_metrics m;
	struct sm_metrics_opts o = { .n_random = 10, .seed = 2 };
	assert_int_equal(sm_metrics_compute(f, 0, deg, &o, &m), 0);
	assert_int_equal(m.unreachable, 0);
	assert_int_equal(m.loops, 0);
	assert_true(m.shift_max_congestion <= 2);
	check_valid(f, deg);
	sm_lfts_free(full);
	sm_lfts_free(deg);
	sm_fabric_free(f);
}

static void test_degraded_random(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 5; seed++) {
		struct ftb_shape s;
		ftb_shape_3level(&s, 8, 64);
		struct sm_fabric *f = sm_fabric_new();
		struct sm_lfts *l;
		assert_int_equal(ftb_build(f, 0, &s, 0), 0);
		assert_true(ftb_remove_links(f, 0, 0.05, seed) > 0);
		assert_int_equal(route(f, 0, &l, NULL), 0);
		struct sm_route_metrics m;
		struct sm_metrics_opts o = { .n_random = 5, .seed = seed };
		assert_int_equal(sm_metrics_compute(f, 0, l, &o, &m), 0);
		assert_int_equal(m.unreachable, 0);
		assert_int_equal(m.loops, 0);
		assert_true(m.minimal_share > 0.999999);
		assert_int_equal(m.credit_loop, 0);
		check_valid(f, l);
		sm_lfts_free(l);
		sm_fabric_free(f);
	}
}

/* Every switch LID is reached from every leaf, and a switch delivers its own LID to port 0. */
static void test_switch_lids(void **state)
{
	(void)state;
	struct ftb_shape s;
	ftb_shape_3level(&s, 8, 64);
	struct sm_fabric *f = sm_fabric_new();
	struct sm_lfts *l;
	assert_int_equal(ftb_build(f, 0, &s, 0), 0);
	assert_int_equal(route(f, 0, &l, NULL), 0);
	for (uint32_t t = 0; t < l->n_switches; t++) {
		uint32_t tn = l->sw_node[t];
		uint16_t lid = sm_port(f, tn, 0)->lid;
		assert_int_equal(sm_lfts_get(l, tn, lid), 0);
		for (uint32_t src = 0; src < 16; src++) { /* the 16 leaves */
			uint32_t n = src;
			unsigned hops = 0;
			uint8_t p;
			while ((p = sm_lfts_get(l, n, lid)) != 0) {
				assert_int_not_equal(p, SM_LFT_NONE);
				n = sm_port(f, n, p)->peer_node;
				assert_true(++hops <= 6);
			}
			assert_int_equal(n, tn);
		}
	}
	sm_lfts_free(l);
	sm_fabric_free(f);
}

/* LMC 2: every LID of a range is routed, and a remote leaf spreads the 4 LIDs over 4 uplinks. */
static void test_lmc(void **state)
{
	(void)state;
	struct ftb_shape s;
	ftb_shape_2level(&s, 8, 16);
	s.lmc = 2;
	struct sm_fabric *f = sm_fabric_new();
	struct sm_lfts *l;
	assert_int_equal(ftb_build(f, 0, &s, 0), 0);
	assert_int_equal(route(f, 0, &l, NULL), 0);
	uint32_t ca = 8 + 4 * 2 + 1; /* a host of leaf 2 */
	uint16_t base = sm_port(f, ca, 1)->lid;
	unsigned used = 0;
	for (unsigned i = 0; i < 4; i++) {
		uint8_t p = sm_lfts_get(l, 0, (uint16_t)(base + i));
		assert_true(p >= 5 && p <= 8);
		used |= 1u << (p - 5);
		/* the destination leaf delivers every LID of the range to the CA */
		assert_int_equal(sm_lfts_get(l, 2, (uint16_t)(base + i)), sm_port(f, ca, 1)->peer_port);
	}
	assert_int_equal(used, 0xf);
	struct sm_route_metrics m;
	struct sm_metrics_opts o = { .n_random = 5, .seed = 2 };
	assert_int_equal(sm_metrics_compute(f, 0, l, &o, &m), 0);
	assert_int_equal(m.unreachable, 0);
	assert_int_equal(m.shift_max_congestion, 1);
	check_valid(f, l);
	sm_lfts_free(l);
	sm_fabric_free(f);
}

static void test_not_a_fat_tree(void **state)
{
	(void)state;
	char msg[256];
	struct sm_lfts *l;
	/* a ring of 4 switches, one CA on each */
	struct sm_fabric *f = sm_fabric_new();
	for (unsigned i = 0; i < 4; i++) {
		assert_int_equal(sm_fabric_add_node(f, SM_NODE_SWITCH, 0x100 + i, 4, 0, 0), i);
		assert_int_equal(sm_fabric_set_lid(f, i, 0, (uint16_t)(1 + i), 0), 0);
	}
	for (unsigned i = 0; i < 4; i++) {
		assert_int_equal(sm_fabric_link(f, i, 1, (i + 1) % 4, 2), 0);
		assert_int_equal(sm_fabric_add_node(f, SM_NODE_CA, 0x200 + i, 1, 0, 0), 4 + i);
		assert_int_equal(sm_fabric_link(f, 4 + i, 1, i, 3), 0);
		assert_int_equal(sm_fabric_set_lid(f, 4 + i, 1, (uint16_t)(10 + i), 0), 0);
	}
	assert_int_equal(route(f, 0, &l, msg), -EINVAL);
	assert_non_null(strstr(msg, "not a fat tree"));
	sm_lfts_free(l);
	sm_fabric_free(f);

	/* a CA on a spine: CAs at different depths */
	struct ftb_shape s;
	ftb_shape_2level(&s, 8, 16);
	f = sm_fabric_new();
	assert_int_equal(ftb_build(f, 0, &s, 0), 0);
	sm_fabric_unlink(f, 4, 4);          /* spine 0 port 4 (was leaf 3) */
	sm_fabric_unlink(f, 8 + 15, 1);     /* last CA off its leaf */
	assert_int_equal(sm_fabric_link(f, 8 + 15, 1, 4, 4), 0);
	assert_int_equal(route(f, 0, &l, msg), -EINVAL);
	assert_non_null(strstr(msg, "different depths"));
	sm_lfts_free(l);
	sm_fabric_free(f);

	/* no CA at all */
	f = sm_fabric_new();
	assert_int_equal(sm_fabric_add_node(f, SM_NODE_SWITCH, 0x10, 4, 0, 0), 0);
	assert_int_equal(route(f, 0, &l, msg), -ENOENT);
	assert_non_null(strstr(msg, "no CA"));
	sm_lfts_free(l);
	sm_fabric_free(f);
}

/*
 * Leaf 0 keeps spine 1 only, leaf 1 keeps spine 0 only, leaf 2 keeps both:
 * leaf 0 reaches leaf 1 only down-then-up, so ftree refuses rather than
 * route with a turn that could close a credit loop.
 */
static void test_no_updown_path(void **state)
{
	(void)state;
	char msg[256];
	struct sm_lfts *l;
	struct ftb_shape s = { .levels = 2, .leaves = 3, .hosts = 2, .up = 2, .width = 1 };
	struct sm_fabric *f = sm_fabric_new();
	assert_int_equal(ftb_build(f, 0, &s, 0), 0);
	sm_fabric_unlink(f, 0, 3);
	sm_fabric_unlink(f, 1, 4);
	assert_int_equal(route(f, 0, &l, msg), -EHOSTUNREACH);
	assert_non_null(strstr(msg, "no up/down path"));
	sm_lfts_free(l);
	sm_fabric_free(f);

	/* two halves with no link between them: routed, the split is noted */
	f = sm_fabric_new();
	assert_int_equal(ftb_build(f, 0, &(struct ftb_shape){ .levels = 2, .leaves = 2, .hosts = 2, .up = 2 }, 0), 0);
	sm_fabric_unlink(f, 0, 3);
	sm_fabric_unlink(f, 1, 4);
	assert_int_equal(route(f, 0, &l, msg), 0);
	assert_non_null(strstr(msg, "2 disconnected parts"));
	sm_lfts_free(l);
	sm_fabric_free(f);
}

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/*
 * Random small fabrics (rings, meshes, trees with odd cabling, self-loops,
 * CAs anywhere): ftree either refuses with a message, or its routes pass
 * the validator (every connected pair reachable, no loop, no black hole,
 * no credit loop). Never a crash (this also runs under ASan in CI).
 */
static void test_random_fabrics(void **state)
{
	(void)state;
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	unsigned routed = 0, refused = 0;
	for (unsigned iter = 0; iter < 300; iter++) {
		struct sm_fabric *f = sm_fabric_new();
		unsigned nsw = 1 + rnd(&seed) % 10, nca = 1 + rnd(&seed) % 12, np = 3 + rnd(&seed) % 6;
		uint16_t lid = 1;
		for (unsigned i = 0; i < nsw; i++) {
			assert_int_equal(sm_fabric_add_node(f, SM_NODE_SWITCH, 0x100 + i, np, 0, 0), i);
			if (rnd(&seed) % 8)
				assert_int_equal(sm_fabric_set_lid(f, i, 0, lid++, 0), 0);
		}
		for (unsigned i = 0; i < nca; i++) {
			uint32_t n = nsw + i;
			assert_int_equal(sm_fabric_add_node(f, SM_NODE_CA, 0x1000 + i, 1 + rnd(&seed) % 2, 0, 0), n);
			for (unsigned p = 1; p <= f->nodes[n].nports; p++) {
				assert_int_equal(sm_fabric_set_port_guid(f, n, p, 0x10000 + i * 4 + p), 0);
				uint8_t lmc = (uint8_t)(rnd(&seed) % 4 == 0 ? 1 : 0);
				if (rnd(&seed) % 6) {
					assert_int_equal(sm_fabric_set_lid(f, n, p, lid, lmc), 0);
					lid = (uint16_t)(lid + (1u << lmc));
				}
			}
		}
		/* random cables: switch-switch (self-loops included), CA-switch, CA-CA */
		unsigned cables = rnd(&seed) % (nsw * np + nca * 2);
		for (unsigned c = 0; c < cables; c++) {
			uint32_t a = (uint32_t)(rnd(&seed) % (nsw + nca)), b = (uint32_t)(rnd(&seed) % (nsw + nca));
			unsigned pa = 1 + rnd(&seed) % f->nodes[a].nports, pb = 1 + rnd(&seed) % f->nodes[b].nports;
			(void)sm_fabric_link(f, a, pa, b, pb); /* busy ports just fail */
		}
		struct sm_lfts *l;
		char msg[256];
		int rc = route(f, 0, &l, msg);
		if (rc) {
			assert_true(rc < 0);
			assert_true(msg[0] != 0);
			refused++;
		} else {
			struct sm_validation v;
			assert_int_equal(sm_validate(f, 0, l, 0, &v), 0);
			if (v.unreachable || v.credit_loop == 1)
				fail_msg("iteration %u: ftree routed but validation says: %s", iter, v.msg);
			routed++;
		}
		sm_lfts_free(l);
		sm_fabric_free(f);
	}
	/* both outcomes are exercised */
	assert_true(routed > 20);
	assert_true(refused > 20);
}

/* Parse `src` (YAML with an `ftree:` mapping) and init the engine from its subtree. */
static int init_from(const char *src, void **st, char *err, size_t errlen)
{
	yaml_parser_t p;
	yaml_document_t doc;
	assert_true(yaml_parser_initialize(&p));
	yaml_parser_set_input_string(&p, (const unsigned char *)src, strlen(src));
	assert_true(yaml_parser_load(&p, &doc));
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	yaml_node_t *sub = yaml_document_get_node(&doc, root->data.mapping.pairs.start->value);
	int rc = sm_engine_ftree.init(st, &doc, sub, err, errlen);
	yaml_document_delete(&doc);
	yaml_parser_delete(&p);
	return rc;
}

static int route_with(void *st, struct sm_fabric *f, struct sm_lfts **out, char *msg)
{
	*out = sm_lfts_new(f, 0);
	assert_non_null(*out);
	struct sm_route_ctx ctx = { .fabric = f, .plane = 0, .out = *out };
	int rc = sm_engine_ftree.route(st, &ctx);
	memcpy(msg, ctx.msg, sizeof(ctx.msg));
	return rc;
}

/*
 * roots: a leaf whose CAs are all gone ranks above the spines when ranks
 * come from the CAs (3 levels); with the spines given as roots it stays a
 * leaf (2 levels). Both route every pair and every switch LID.
 */
static void test_roots(void **state)
{
	(void)state;
	struct ftb_shape s;
	ftb_shape_2level(&s, 8, 16);  /* leaves 0-3 (GUID 0x10000..), spines 4-7 (0x10004..) */
	struct sm_fabric *f = sm_fabric_new();
	struct sm_lfts *l;
	char msg[256], err[256];
	void *st = NULL;
	assert_int_equal(ftb_build(f, 0, &s, 0), 0);
	for (unsigned h = 0; h < 4; h++) {
		sm_fabric_unlink(f, 3, 1 + h); /* leaf 3 loses its 4 CAs (nodes 20-23) */
		assert_int_equal(sm_fabric_set_lid(f, 20 + h, 1, 0, 0), 0);
	}
	assert_int_equal(route(f, 0, &l, msg), 0);
	assert_non_null(strstr(msg, "3 levels"));
	check_valid(f, l);
	sm_lfts_free(l);

	assert_int_equal(init_from("ftree:\n  roots: [0x10004, 0x10005, 65542, 0x10007]\n", &st, err, sizeof(err)), 0);
	assert_non_null(st);
	assert_int_equal(route_with(st, f, &l, msg), 0);
	assert_non_null(strstr(msg, "2 levels"));
	check_valid(f, l);
	struct sm_route_metrics m;
	struct sm_metrics_opts o = { .n_random = 5, .seed = 1 };
	assert_int_equal(sm_metrics_compute(f, 0, l, &o, &m), 0);
	assert_int_equal(m.unreachable, 0);
	assert_int_equal(m.shift_max_congestion, 1);
	sm_lfts_free(l);
	sm_engine_ftree.free(st);

	/* a leaf as the only root: the other leaves sit 2 below it, its own CAs at 0 */
	assert_int_equal(init_from("ftree:\n  roots: [0x10000]\n", &st, err, sizeof(err)), 0);
	assert_int_equal(route_with(st, f, &l, msg), -EINVAL);
	assert_non_null(strstr(msg, "different depths"));
	sm_lfts_free(l);
	sm_engine_ftree.free(st);

	/* roots of another fabric */
	assert_int_equal(init_from("ftree:\n  roots: [0xdead]\n", &st, err, sizeof(err)), 0);
	assert_int_equal(route_with(st, f, &l, msg), -ENOENT);
	assert_non_null(strstr(msg, "none of the 1 configured roots"));
	sm_lfts_free(l);
	sm_engine_ftree.free(st);
	sm_fabric_free(f);

	/* bad configs name their line */
	assert_int_equal(init_from("ftree:\n  roots:\n    - 0x10\n    - nope\n", &st, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "line 4"));
	assert_non_null(strstr(err, "nope"));
	assert_int_equal(init_from("ftree:\n  roots: 5\n", &st, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "must be a list"));
	assert_int_equal(init_from("ftree:\n  roots: [0]\n", &st, err, sizeof(err)), -EINVAL);
	assert_null(st);
}

/* splitmix64 step, for seeded shuffles */
static uint64_t mix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/*
 * The same plane renumbered: nodes added in another order (seeded shuffle,
 * or BFS from the last CA as the SM core discovers it), links as in src,
 * LIDs shuffled (distinct, spread over 1..3N) or handed out in the new
 * node order (switches and CAs interleaved, as a sweep does).
 */
static struct sm_fabric *renumber(const struct sm_fabric *src, int bfs, uint64_t seed)
{
	uint32_t n = src->n_nodes;
	uint32_t *ord = malloc(n * sizeof(*ord)), *map = malloc(n * sizeof(*map));
	uint8_t *seen = calloc(n, 1);
	assert_true(ord && map && seen);
	if (bfs) {
		uint32_t qh = 0, qt = 0;
		ord[qt++] = n - 1;
		seen[n - 1] = 1;
		while (qh < qt) {
			uint32_t a = ord[qh++];
			for (unsigned p = 1; p <= src->nodes[a].nports; p++) {
				uint32_t b = sm_port(src, a, p)->peer_node;
				if (b != SM_NONE && !seen[b]) {
					seen[b] = 1;
					ord[qt++] = b;
				}
			}
		}
		for (uint32_t a = 0; a < n; a++) /* nodes cut off by removed links: last */
			if (!seen[a])
				ord[qt++] = a;
	} else {
		for (uint32_t a = 0; a < n; a++)
			ord[a] = a;
		for (uint32_t i = n - 1; i > 0; i--) {
			uint32_t j = (uint32_t)(mix64(&seed) % (i + 1)), t = ord[i];
			ord[i] = ord[j];
			ord[j] = t;
		}
	}
	struct sm_fabric *f = sm_fabric_new();
	assert_non_null(f);
	assert_int_equal(sm_fabric_add_plane(f, 0, NULL), 0);
	for (uint32_t i = 0; i < n; i++) {
		const struct sm_node *nd = &src->nodes[ord[i]];
		int64_t r = sm_fabric_add_node(f, nd->type, nd->guid, nd->nports, 0, 0);
		assert_true(r >= 0);
		map[ord[i]] = (uint32_t)r;
		f->nodes[r].lft_cap = nd->lft_cap;
		if (nd->type != SM_NODE_SWITCH)
			for (unsigned p = 1; p <= nd->nports; p++)
				assert_int_equal(sm_fabric_set_port_guid(f, (uint32_t)r, p, sm_port(src, ord[i], p)->guid), 0);
	}
	/* links, visiting ports in the new node order */
	for (uint32_t i = 0; i < n; i++)
		for (unsigned p = 1; p <= src->nodes[ord[i]].nports; p++) {
			const struct sm_port *pt = sm_port(src, ord[i], p);
			if (pt->peer_node != SM_NONE)
				assert_int_equal(sm_fabric_link(f, map[ord[i]], p, map[pt->peer_node], pt->peer_port), 0);
		}
	/* LIDs: one per LID-bearing port, either shuffled over 1..3N or in the new node order */
	uint32_t nl = 0;
	uint16_t *lids = malloc(3 * (size_t)n * sizeof(*lids) + 2);
	assert_non_null(lids);
	for (uint32_t i = 0; i < 3 * n; i++)
		lids[i] = (uint16_t)(i + 1);
	for (uint32_t i = 0; !bfs && i < 3 * n - 1; i++) {
		uint32_t j = i + (uint32_t)(mix64(&seed) % (3 * n - i)), t = lids[i];
		lids[i] = lids[j];
		lids[j] = (uint16_t)t;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint32_t a = ord[i];
		for (unsigned p = 0; p <= src->nodes[a].nports; p++) {
			const struct sm_port *pt = sm_port(src, a, p);
			if ((p == 0) != (src->nodes[a].type == SM_NODE_SWITCH) || !pt->lid)
				continue;
			assert_int_equal(sm_fabric_set_lid(f, map[a], p, lids[nl++], 0), 0);
			sm_port(f, map[a], p)->state = pt->state;
		}
	}
	free(lids);
	free(ord);
	free(map);
	free(seen);
	return f;
}

/*
 * a and b are one fabric numbered two ways: every switch must send every
 * destination port (by GUID) out of the same port in both.
 */
static void assert_same_routes(const struct sm_fabric *a, const struct sm_lfts *la, const struct sm_fabric *b,
			       const struct sm_lfts *lb)
{
	assert_int_equal(la->n_switches, lb->n_switches);
	for (uint32_t s = 0; s < la->n_switches; s++) {
		uint32_t na = la->sw_node[s];
		uint32_t nb = sm_fabric_find_node(b, a->nodes[na].guid);
		assert_int_not_equal(nb, SM_NONE);
		for (uint32_t d = 0; d < a->n_nodes; d++) {
			uint32_t db = sm_fabric_find_node(b, a->nodes[d].guid);
			for (unsigned p = 0; p <= a->nodes[d].nports; p++) {
				uint16_t lid = sm_port(a, d, p)->lid;
				if ((p == 0) != (a->nodes[d].type == SM_NODE_SWITCH) || !lid)
					continue;
				uint8_t ea = sm_lfts_get(la, na, lid), eb = sm_lfts_get(lb, nb, sm_port(b, db, p)->lid);
				if (ea != eb)
					fail_msg("switch 0x%llx to node 0x%llx port %u (LIDs %u, %u; top %u, %u): port %u in one numbering, %u in the other",
						 (unsigned long long)a->nodes[na].guid, (unsigned long long)a->nodes[d].guid, p,
						 lid, sm_port(b, db, p)->lid, la->top_lid, lb->top_lid, ea, eb);
			}
		}
	}
}

/*
 * One tree, nodes added in other orders and LIDs shuffled: the routes are
 * the same (per GUID), so is the quality; a full tree stays shift
 * congestion-free with nothing moved, whatever the numbering.
 */
static void test_order_independent(void **state)
{
	(void)state;
	struct ftb_shape shapes[4];
	ftb_shape_2level(&shapes[0], 8, 32);
	shapes[1] = (struct ftb_shape){ .levels = 2, .leaves = 6, .hosts = 8, .up = 4, .width = 2 };
	ftb_shape_3level(&shapes[2], 8, 64);
	ftb_shape_2level(&shapes[3], 16, 128);
	for (unsigned si = 0; si < 4; si++)
		for (double frac = 0; frac < 0.06; frac += 0.05)
			for (uint64_t seed = 1; seed <= 3; seed++) {
				struct sm_fabric *f = sm_fabric_new();
				struct sm_lfts *l0, *l1;
				char m0[256], m1[256];
				assert_int_equal(ftb_build(f, 0, &shapes[si], 0), 0);
				if (frac > 0)
					assert_true(ftb_remove_links(f, 0, frac, seed) > 0);
				struct sm_fabric *g = renumber(f, seed == 3, seed * 7919);
				assert_int_equal(route(f, 0, &l0, m0), 0);
				assert_int_equal(route(g, 0, &l1, m1), 0);
				assert_string_equal(m0, m1);
				assert_same_routes(f, l0, g, l1);
				struct sm_route_metrics a, b;
				struct sm_metrics_opts o = { .n_random = 10, .seed = seed };
				assert_int_equal(sm_metrics_compute(f, 0, l0, &o, &a), 0);
				assert_int_equal(sm_metrics_compute(g, 0, l1, &o, &b), 0);
				assert_int_equal(a.shift_max_congestion, b.shift_max_congestion);
				assert_true(a.ebb == b.ebb);
				assert_int_equal(a.efi_max, b.efi_max);
				assert_int_equal(b.unreachable, 0);
				if (frac == 0) {
					assert_non_null(strstr(m1, "; 0 routes moved"));
					assert_int_equal(b.shift_max_congestion, 1);
				}
				check_valid(g, l1);
				sm_lfts_free(l0);
				sm_lfts_free(l1);
				sm_fabric_free(g);
				sm_fabric_free(f);
			}
}

/*
 * The fabric as the SM core sweeps it (mock transport, sm_bringup): its
 * node order and LIDs are the SM's, not the builder's. ftree on it must
 * route optimally, and the LFTs the SM programmed into the (mock)
 * switches must be as good.
 */
static void test_swept_fabric(void **state)
{
	(void)state;
	struct ftb_shape s;
	ftb_shape_2level(&s, 16, 128);
	struct sm_fabric *model = sm_fabric_new();
	assert_int_equal(ftb_build(model, 0, &s, 0), 0);
	struct sm_mock *mock;
	struct sm_transport *t;
	char err[512] = "", dir[] = "/tmp/smd-test-ftree-XXXXXX", path[64];
	assert_int_equal(sm_mock_new(model, NULL, &mock, err, sizeof(err)), 0);
	assert_int_equal(sm_mock_attach(mock, sm_mock_default_port(mock, 0), &t), 0);
	struct sm_registry *reg = sm_registry_new(NULL);
	struct sm_chain *chain;
	assert_non_null(reg);
	if (sm_chain_new(reg, "ftree", NULL, NULL, &chain, err, sizeof(err)))
		fail_msg("chain: %s", err);
	assert_non_null(mkdtemp(dir));
	struct sm_cfg cfg;
	sm_cfg_default(&cfg);
	cfg.state_dir = dir;
	struct sm_summary sum;
	struct sm_fabric *f = NULL;
	if (sm_bringup(t, chain, &cfg, &sum, &f, err, sizeof(err)))
		fail_msg("bring-up: %s", err);
	snprintf(path, sizeof(path), "%s/guid2lid", dir);
	unlink(path);
	rmdir(dir);

	struct sm_route_metrics m;
	struct sm_metrics_opts o = { .n_random = 10, .seed = 5 };
	/* what the SM programmed */
	struct sm_lfts *prog = sm_lfts_new(f, 0);
	assert_non_null(prog);
	const struct sm_fabric *mf = sm_mock_fabric(mock);
	for (uint32_t sl = 0; sl < prog->n_switches; sl++) {
		uint32_t mn = sm_fabric_find_node(mf, f->nodes[prog->sw_node[sl]].guid);
		assert_int_not_equal(mn, SM_NONE);
		for (unsigned lid = 0; lid <= prog->top_lid; lid++)
			sm_lfts_row(prog, sl)[lid] = sm_mock_lft_get(mock, mn, (uint16_t)lid);
	}
	assert_int_equal(sm_metrics_compute(f, 0, prog, &o, &m), 0);
	assert_int_equal(m.unreachable, 0);
	assert_int_equal(m.shift_max_congestion, 1);
	/* ftree on the swept fabric, and on it renumbered in BFS order with other LIDs */
	struct sm_lfts *l, *lg;
	char msg[256], msg2[256];
	assert_int_equal(route(f, 0, &l, msg), 0);
	assert_non_null(strstr(msg, "; 0 routes moved"));
	assert_int_equal(sm_metrics_compute(f, 0, l, &o, &m), 0);
	assert_int_equal(m.shift_max_congestion, 1);
	double ebb = m.ebb;
	struct sm_fabric *g = renumber(f, 1, 0);
	assert_int_equal(route(g, 0, &lg, msg2), 0);
	assert_string_equal(msg, msg2);
	assert_same_routes(f, l, g, lg);
	assert_int_equal(sm_metrics_compute(g, 0, lg, &o, &m), 0);
	assert_int_equal(m.shift_max_congestion, 1);
	assert_true(m.ebb == ebb);
	sm_lfts_free(l);
	sm_lfts_free(lg);
	sm_lfts_free(prog);
	sm_fabric_free(g);
	sm_fabric_free(f);
	sm_chain_free(chain);
	sm_registry_free(reg);
	sm_transport_close(t);
	sm_mock_free(mock);
	sm_fabric_free(model);
}

static void test_init_options(void **state)
{
	(void)state;
	yaml_parser_t p;
	yaml_document_t doc;
	const char *src = "ftree:\n  bogus: 1\n";
	void *st = NULL;
	char err[256] = "";
	assert_true(yaml_parser_initialize(&p));
	yaml_parser_set_input_string(&p, (const unsigned char *)src, strlen(src));
	assert_true(yaml_parser_load(&p, &doc));
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	yaml_node_t *sub = yaml_document_get_node(&doc, root->data.mapping.pairs.start->value);
	assert_int_equal(sm_engine_ftree.init(&st, &doc, sub, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "line 2"));
	assert_non_null(strstr(err, "bogus"));
	yaml_document_delete(&doc);
	yaml_parser_delete(&p);
	assert_int_equal(sm_engine_ftree.abi_version, SM_ENGINE_ABI_VERSION);
	assert_int_equal(sm_engine_ftree.size, sizeof(struct sm_engine_ops));
	assert_string_equal(sm_engine_ftree.name, "ftree");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_2level),
		cmocka_unit_test(test_full_3level),
		cmocka_unit_test(test_degraded_moves_only_displaced),
		cmocka_unit_test(test_degraded_random),
		cmocka_unit_test(test_switch_lids),
		cmocka_unit_test(test_lmc),
		cmocka_unit_test(test_not_a_fat_tree),
		cmocka_unit_test(test_no_updown_path),
		cmocka_unit_test(test_random_fabrics),
		cmocka_unit_test(test_roots),
		cmocka_unit_test(test_init_options),
		cmocka_unit_test(test_order_independent),
		cmocka_unit_test(test_swept_fabric),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
