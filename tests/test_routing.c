/* SPDX-License-Identifier: MIT */
/* Unit tests for the engine registry, the chain, minhop and updn (routing/). */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <string.h>
#include <cmocka.h>
#include <yaml.h>

#include "routing/registry.h"
#include "routing/validate.h"
#include "fixture/route_fix.h"

/* ---- helpers ---- */

static struct sm_lfts *route_with(const struct sm_engine_ops *ops, const struct sm_fabric *f, unsigned plane,
				  yaml_document_t *doc, yaml_node_t *cfg, int expect_rc, char *msg)
{
	void *st = NULL;
	char err[256] = "";
	assert_int_equal(ops->init(&st, doc, cfg, err, sizeof(err)), 0);
	struct sm_lfts *l = sm_lfts_new(f, plane);
	assert_non_null(l);
	struct sm_route_ctx ctx = { .fabric = f, .plane = plane, .out = l };
	int rc = ops->route(st, &ctx);
	if (msg)
		strcpy(msg, ctx.msg);
	ops->free(st);
	assert_int_equal(rc, expect_rc);
	if (rc) {
		sm_lfts_free(l);
		return NULL;
	}
	return l;
}

static void validate(const struct sm_fabric *f, unsigned plane, const struct sm_lfts *l, struct sm_validation *v)
{
	assert_int_equal(sm_validate(f, plane, l, 0, v), 0);
}

/* Parse YAML text into doc; returns the root node. */
static yaml_node_t *load_yaml(yaml_document_t *doc, const char *text)
{
	yaml_parser_t p;
	assert_true(yaml_parser_initialize(&p));
	yaml_parser_set_input_string(&p, (const unsigned char *)text, strlen(text));
	assert_true(yaml_parser_load(&p, doc));
	yaml_parser_delete(&p);
	yaml_node_t *root = yaml_document_get_root_node(doc);
	assert_non_null(root);
	return root;
}

struct load {
	uint32_t *cnt;       /* [n_ports] flows per egress port */
};

static void count_hop(void *arg, uint32_t port)
{
	((struct load *)arg)->cnt[port]++;
}

/* Worst congestion over all shift permutations of the plane's hosts. */
static unsigned shift_congestion(const struct sm_fabric *f, const struct sm_lfts *l, unsigned plane)
{
	uint32_t hosts[512];
	unsigned n = fix_host_ports(f, plane, hosts, 512), worst = 0;
	struct load ld = { calloc(f->n_ports, sizeof(uint32_t)) };
	assert_non_null(ld.cnt);
	for (unsigned k = 1; k < n; k++) {
		memset(ld.cnt, 0, f->n_ports * sizeof(uint32_t));
		for (unsigned i = 0; i < n; i++)
			assert_true(fix_walk(f, l, hosts[i], f->ports[hosts[(i + k) % n]].lid, count_hop, &ld) >= 0);
		for (uint32_t p = 0; p < f->n_ports; p++)
			if (ld.cnt[p] > worst)
				worst = ld.cnt[p];
	}
	free(ld.cnt);
	return worst;
}

/* CA LIDs (not switch LIDs) routed out of port p of switch node n. */
static unsigned ca_routes_on(const struct sm_fabric *f, const struct sm_lfts *l, uint32_t n, unsigned p)
{
	unsigned c = 0;
	for (uint32_t lid = 1; lid <= l->top_lid; lid++) {
		uint32_t pi = f->planes[l->plane].lid_map[lid];
		if (pi != SM_NONE && f->nodes[f->ports[pi].node].type == SM_NODE_CA && sm_lfts_get(l, n, (uint16_t)lid) == p)
			c++;
	}
	return c;
}

/* ---- registry ---- */

static void test_builtins(void **state)
{
	(void)state;
	char err[300];
	const struct sm_engine_ops *const *b = sm_engine_builtins();
	unsigned n = 0;
	for (; b[n]; n++)
		assert_int_equal(sm_engine_check_ops(b[n], err, sizeof(err)), 0);
	assert_true(n >= 3);
	assert_ptr_equal(sm_engine_builtin("ftree"), &sm_engine_ftree);
	assert_ptr_equal(sm_engine_builtin("minhop"), &sm_engine_minhop);
	assert_ptr_equal(sm_engine_builtin("updn"), &sm_engine_updn);
	assert_null(sm_engine_builtin("nope"));

	struct sm_registry *r = sm_registry_new("/nonexistent-smd-plugins");
	assert_non_null(r);
	const struct sm_engine_ops *ops;
	assert_int_equal(sm_registry_find(r, "minhop", &ops, err, sizeof(err)), 0);
	assert_ptr_equal(ops, &sm_engine_minhop);
	assert_int_equal(sm_registry_find(r, "bogus", &ops, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "unknown engine 'bogus'"));
	assert_non_null(strstr(err, "minhop"));
	assert_non_null(strstr(err, "/nonexistent-smd-plugins/bogus.so"));
	assert_int_equal(sm_registry_find(r, "../etc/x", &ops, err, sizeof(err)), -ENOENT);
	assert_null(strstr(err, ".so"));  /* never turned into a path */
	sm_registry_free(r);
	sm_registry_free(NULL);
}

static void test_chain_parse(void **state)
{
	(void)state;
	char err[300], desc[64];
	struct sm_registry *r = sm_registry_new("/nonexistent-smd-plugins");
	struct sm_chain *c;
	assert_int_equal(sm_chain_new(r, " updn ,minhop", NULL, NULL, &c, err, sizeof(err)), 0);
	assert_int_equal(c->n, 2);
	sm_chain_describe(c, desc, sizeof(desc));
	assert_string_equal(desc, "updn,minhop");
	sm_chain_free(c);
	assert_int_equal(sm_chain_new(r, "minhop,,updn", NULL, NULL, &c, err, sizeof(err)), -EINVAL);
	assert_null(c);
	assert_non_null(strstr(err, "empty engine name"));
	assert_int_equal(sm_chain_new(r, "", NULL, NULL, &c, err, sizeof(err)), -EINVAL);
	assert_int_equal(sm_chain_new(r, "minhop,minhop", NULL, NULL, &c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "listed twice"));
	assert_int_equal(sm_chain_new(r, "minhop,fancy", NULL, NULL, &c, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "unknown engine 'fancy'"));
	assert_int_equal(sm_chain_new(r, "a,b,c,d,e,f,g,h,i", NULL, NULL, &c, err, sizeof(err)), -ENOENT);
	sm_chain_free(NULL);
	sm_registry_free(r);
}

/* ---- minhop ---- */

static void test_minhop_line(void **state)
{
	(void)state;
	struct fix x;
	fix_init(&x);
	fix_chain(&x, 3, 2, 0);  /* S0 - S1 - S2, 2 hosts each; east = port 3, west = port 4 */
	fix_lids(&x, 0);
	struct sm_lfts *l = route_with(&sm_engine_minhop, x.f, 0, NULL, NULL, 0, NULL);
	struct sm_validation v;
	validate(x.f, 0, l, &v);
	assert_true(sm_validate_ok(&v, 0));
	assert_int_equal(v.hosts, 6);
	assert_int_equal(v.lids, 9);
	assert_int_equal(v.pairs, 6 * 5);
	assert_int_equal(v.reachable, 30);
	assert_int_equal(v.sw_pairs, 3 * 8);
	assert_int_equal(v.sw_unreachable, 0);
	assert_int_equal(v.max_hops, 2);
	assert_int_equal(v.credit_loop, 0);
	/* the hosts of S2 are east of S0 and S1; S0's own hosts leave by their ports */
	uint16_t h4 = sm_port(x.f, x.ca[4], 1)->lid, h0 = sm_port(x.f, x.ca[0], 1)->lid;
	assert_int_equal(sm_lfts_get(l, x.sw[0], h4), 3);
	assert_int_equal(sm_lfts_get(l, x.sw[1], h4), 3);
	assert_int_equal(sm_lfts_get(l, x.sw[2], h4), 1);
	assert_int_equal(sm_lfts_get(l, x.sw[2], h0), 4);
	assert_int_equal(sm_lfts_get(l, x.sw[1], sm_port(x.f, x.sw[1], 0)->lid), 0);
	sm_lfts_free(l);
	sm_fabric_free(x.f);
}

static void test_minhop_fat_tree_balance(void **state)
{
	(void)state;
	struct fix x;
	fix_init(&x);
	fix_fat_tree(&x, 8, 4, 4, 1, 0);  /* 8 leaves x 4 hosts, 4 spines */
	fix_lids(&x, 0);
	struct sm_lfts *l = route_with(&sm_engine_minhop, x.f, 0, NULL, NULL, 0, NULL);
	struct sm_validation v;
	validate(x.f, 0, l, &v);
	assert_true(sm_validate_ok(&v, 0));
	assert_int_equal(v.max_hops, 2);
	/* every leaf uplink carries the same number of CA routes: 28 remote hosts / 4 uplinks */
	for (unsigned leaf = 0; leaf < 8; leaf++)
		for (unsigned k = 0; k < 4; k++)
			assert_int_equal(ca_routes_on(x.f, l, x.sw[leaf], 4 + 1 + k), 7);
	/* switch LIDs are balanced among themselves too: 11 remote switches over 4 uplinks */
	for (unsigned leaf = 0; leaf < 8; leaf++) {
		unsigned mn = 99, mx = 0;
		for (unsigned k = 0; k < 4; k++) {
			unsigned c = 0;
			for (unsigned s = 0; s < x.n_sw; s++)
				c += sm_lfts_get(l, x.sw[leaf], sm_port(x.f, x.sw[s], 0)->lid) == 5 + k;
			mn = c < mn ? c : mn;
			mx = c > mx ? c : mx;
		}
		assert_true(mx - mn <= 1);
	}
	/* balanced and aligned: every shift permutation is congestion-free */
	assert_int_equal(shift_congestion(x.f, l, 0), 1);
	sm_lfts_free(l);
	sm_fabric_free(x.f);
}

/* Counting the sources a cable carries, not LIDs: a 3-level tree stays congestion-free too. */
static void test_three_level_tree(void **state)
{
	(void)state;
	struct fix x;
	fix_init(&x);
	fix_fat_tree3(&x, 4, 4);  /* 4 pods x 4 leaves x 4 hosts = 64 hosts, 16 cores */
	fix_lids(&x, 0);
	for (int e = 0; e < 2; e++) {
		struct sm_lfts *l = route_with(e ? &sm_engine_updn : &sm_engine_minhop, x.f, 0, NULL, NULL, 0, NULL);
		struct sm_validation v;
		validate(x.f, 0, l, &v);
		assert_true(sm_validate_ok(&v, 0));
		assert_int_equal(v.max_hops, 4);
		assert_int_equal(v.credit_loop, 0);
		assert_int_equal(shift_congestion(x.f, l, 0), 1);
		sm_lfts_free(l);
	}
	sm_fabric_free(x.f);
}

static void test_minhop_parallel_links(void **state)
{
	(void)state;
	struct fix x;
	fix_init(&x);
	fix_fat_tree(&x, 2, 1, 6, 3, 0);  /* 2 leaves, one spine, 3 cables each */
	fix_lids(&x, 0);
	struct sm_lfts *l = route_with(&sm_engine_minhop, x.f, 0, NULL, NULL, 0, NULL);
	struct sm_validation v;
	validate(x.f, 0, l, &v);
	assert_true(sm_validate_ok(&v, 0));
	for (unsigned leaf = 0; leaf < 2; leaf++)
		for (unsigned j = 0; j < 3; j++)
			assert_int_equal(ca_routes_on(x.f, l, x.sw[leaf], 7 + j), 2);
	/* spine: each leaf's 6 hosts over its 3 cables */
	for (unsigned p = 1; p <= 6; p++)
		assert_int_equal(ca_routes_on(x.f, l, x.sw[2], p), 2);
	sm_lfts_free(l);
	sm_fabric_free(x.f);
}

static void test_minhop_multiport_ca_lmc(void **state)
{
	(void)state;
	struct fix x;
	fix_init(&x);
	/* a dual-port CA cabled to two switches a and b, both under c */
	uint32_t a = fix_switch(&x, 8, 0), b = fix_switch(&x, 8, 0), c = fix_switch(&x, 8, 0);
	fix_link(&x, a, 5, c, 5);
	fix_link(&x, b, 5, c, 6);
	uint32_t dual = fix_ca(&x, 2, 0);
	fix_link(&x, dual, 1, a, 1);
	fix_link(&x, dual, 2, b, 1);
	fix_link(&x, fix_ca(&x, 1, 0), 1, a, 2);
	fix_link(&x, fix_ca(&x, 1, 0), 1, b, 2);
	fix_link(&x, fix_ca(&x, 1, 0), 1, c, 1);
	fix_lids(&x, 2);  /* LMC 2: four LIDs per CA port */
	struct sm_lfts *l = route_with(&sm_engine_minhop, x.f, 0, NULL, NULL, 0, NULL);
	struct sm_validation v;
	validate(x.f, 0, l, &v);
	assert_true(sm_validate_ok(&v, 0));
	assert_int_equal(v.hosts, 5);
	assert_int_equal(v.lids, 3 + 5 * 4);
	/* source port, endpoint LIDs of other ports: 5 sources x (20 - own 4) */
	assert_int_equal(v.pairs, 5 * 16);
	assert_int_equal(v.reachable, v.pairs);
	/* each LID of the dual CA's port 2 is delivered by b port 1 */
	uint16_t base = sm_port(x.f, dual, 2)->lid;
	for (unsigned i = 0; i < 4; i++)
		assert_int_equal(sm_lfts_get(l, b, (uint16_t)(base + i)), 1);
	sm_lfts_free(l);
	sm_fabric_free(x.f);
}

static void test_lmc_spreads_over_uplinks(void **state)
{
	(void)state;
	struct fix x;
	fix_init(&x);
	fix_fat_tree(&x, 2, 4, 1, 1, 0);
	fix_lids(&x, 2);
	struct sm_lfts *l = route_with(&sm_engine_minhop, x.f, 0, NULL, NULL, 0, NULL);
	uint16_t base = sm_port(x.f, x.ca[1], 1)->lid;
	uint8_t seen[16] = { 0 };
	for (unsigned i = 0; i < 4; i++)
		seen[sm_lfts_get(l, x.sw[0], (uint16_t)(base + i))]++;
	for (unsigned p = 2; p <= 5; p++)
		assert_int_equal(seen[p], 1);  /* the 4 LIDs of one port take the 4 spines */
	sm_lfts_free(l);
	sm_fabric_free(x.f);
}

/* With LMC, base LIDs stay spread (shift-free) and each port's LIDs leave a leaf by distinct spines. */
static void test_lmc_fat_tree(void **state)
{
	(void)state;
	struct fix x;
	fix_init(&x);
	fix_fat_tree(&x, 4, 4, 4, 1, 0);
	fix_lids(&x, 1);
	for (int e = 0; e < 2; e++) {
		struct sm_lfts *l = route_with(e ? &sm_engine_updn : &sm_engine_minhop, x.f, 0, NULL, NULL, 0, NULL);
		assert_int_equal(shift_congestion(x.f, l, 0), 1);
		for (unsigned h = 4; h < 16; h++) {
			uint16_t lid = sm_port(x.f, x.ca[h], 1)->lid;
			assert_int_not_equal(sm_lfts_get(l, x.sw[0], lid), sm_lfts_get(l, x.sw[0], (uint16_t)(lid + 1)));
		}
		struct sm_validation v;
		validate(x.f, 0, l, &v);
		assert_true(sm_validate_ok(&v, 0));
		sm_lfts_free(l);
	}
	sm_fabric_free(x.f);
}

static void test_disconnected_island(void **state)
{
	(void)state;
	struct fix x;
	fix_init(&x);
	fix_chain(&x, 3, 2, 0);
	fix_chain(&x, 2, 1, 0);  /* a separate island */
	uint32_t lone = fix_ca(&x, 1, 0);  /* an uncabled CA keeps no LID */
	(void)lone;
	fix_lids(&x, 0);
	char msg[256];
	for (int e = 0; e < 2; e++) {
		const struct sm_engine_ops *ops = e ? &sm_engine_updn : &sm_engine_minhop;
		struct sm_lfts *l = route_with(ops, x.f, 0, NULL, NULL, 0, msg);
		assert_non_null(strstr(msg, "another physical part"));
		struct sm_validation v;
		validate(x.f, 0, l, &v);
		assert_true(sm_validate_ok(&v, 0));
		assert_int_equal(v.hosts, 8);
		assert_int_equal(v.unreachable, 0);
		/* 6 hosts x 2 hosts + 2 hosts x 6 */
		assert_int_equal(v.disconnected, 6 * 2 + 2 * 6);
		assert_int_equal(v.sw_unreachable, 0);
		/* no entry toward the other island */
		uint16_t far = sm_port(x.f, x.ca[7], 1)->lid;
		assert_int_equal(sm_lfts_get(l, x.sw[0], far), SM_LFT_NONE);
		sm_lfts_free(l);
	}
	sm_fabric_free(x.f);
}

static void test_no_switch(void **state)
{
	(void)state;
	struct fix x;
	fix_init(&x);
	uint32_t a = fix_ca(&x, 1, 0), b = fix_ca(&x, 1, 0);
	fix_link(&x, a, 1, b, 1);
	fix_lids(&x, 0);
	char msg[256];
	route_with(&sm_engine_minhop, x.f, 0, NULL, NULL, -ENODEV, msg);
	assert_non_null(strstr(msg, "no switch"));
	route_with(&sm_engine_updn, x.f, 0, NULL, NULL, -ENODEV, msg);
	sm_fabric_free(x.f);
}

/* ---- updn ---- */

static void test_ring_minhop_loops_updn_not(void **state)
{
	(void)state;
	for (unsigned n = 4; n <= 7; n++) {
		struct fix x;
		fix_init(&x);
		fix_chain(&x, n, 2, 1);
		fix_lids(&x, 0);
		struct sm_validation v;
		struct sm_lfts *l = route_with(&sm_engine_minhop, x.f, 0, NULL, NULL, 0, NULL);
		validate(x.f, 0, l, &v);
		assert_int_equal(v.unreachable, 0);
		assert_int_equal(v.credit_loop, 1);  /* shortest paths around a ring: a cycle */
		assert_true(v.cycle_len >= 3);
		assert_false(sm_validate_ok(&v, 0));
		assert_true(sm_validate_ok(&v, SM_VALIDATE_ALLOW_CREDIT_LOOP));
		sm_lfts_free(l);

		l = route_with(&sm_engine_updn, x.f, 0, NULL, NULL, 0, NULL);
		validate(x.f, 0, l, &v);
		assert_true(sm_validate_ok(&v, 0));
		assert_int_equal(v.credit_loop, 0);
		assert_int_equal(v.reachable, v.pairs);
		assert_int_equal(sm_cdg_check(x.f, 0, l, NULL), 0);
		sm_lfts_free(l);
		sm_fabric_free(x.f);
	}
}

static void test_mesh_updn(void **state)
{
	(void)state;
	struct fix x;
	fix_init(&x);
	fix_mesh(&x, 4, 3, 1);
	fix_lids(&x, 0);
	struct sm_validation v;
	struct sm_lfts *l = route_with(&sm_engine_minhop, x.f, 0, NULL, NULL, 0, NULL);
	validate(x.f, 0, l, &v);
	assert_int_equal(v.unreachable, 0);
	assert_int_equal(v.max_hops, 5);  /* corner to corner of a 4x3 mesh */
	assert_int_equal(v.credit_loop, 1);  /* balanced shortest paths turn every way on a mesh */
	sm_lfts_free(l);
	l = route_with(&sm_engine_updn, x.f, 0, NULL, NULL, 0, NULL);
	assert_int_equal(sm_validate(x.f, 0, l, SM_VALIDATE_CDG_SWITCH_LIDS, &v), 0);
	assert_true(sm_validate_ok(&v, 0));
	assert_int_equal(v.credit_loop, 0);
	sm_lfts_free(l);
	sm_fabric_free(x.f);
}

static void test_updn_fat_tree(void **state)
{
	(void)state;
	struct fix x;
	fix_init(&x);
	fix_fat_tree(&x, 8, 4, 4, 1, 0);
	fix_lids(&x, 0);
	char msg[256];
	struct sm_lfts *l = route_with(&sm_engine_updn, x.f, 0, NULL, NULL, 0, msg);
	if (!strstr(msg, "4 roots"))
		print_error("msg: %s\n", msg);
	assert_non_null(strstr(msg, "4 roots"));  /* the spines, found from where the CAs sit */
	struct sm_validation v;
	validate(x.f, 0, l, &v);
	assert_true(sm_validate_ok(&v, 0));
	assert_int_equal(v.max_hops, 2);
	assert_int_equal(v.credit_loop, 0);
	for (unsigned leaf = 0; leaf < 8; leaf++)
		for (unsigned k = 0; k < 4; k++)
			assert_int_equal(ca_routes_on(x.f, l, x.sw[leaf], 5 + k), 7);
	assert_int_equal(shift_congestion(x.f, l, 0), 1);
	sm_lfts_free(l);
	sm_fabric_free(x.f);
}

/* A leaf lost its cable to a spine: updn keeps the spines as roots, endpoint pairs stay minimal. */
static void test_updn_degraded_fat_tree(void **state)
{
	(void)state;
	struct fix x;
	fix_init(&x);
	fix_fat_tree(&x, 8, 4, 4, 1, 0);
	sm_fabric_unlink(x.f, x.sw[0], 4 + 1 + 2);  /* leaf 0 <-> spine 2 */
	fix_lids(&x, 0);
	char msg[256];
	struct sm_lfts *l = route_with(&sm_engine_updn, x.f, 0, NULL, NULL, 0, msg);
	assert_non_null(strstr(msg, "4 roots"));
	struct sm_validation v;
	validate(x.f, 0, l, &v);
	assert_true(sm_validate_ok(&v, 0));
	assert_int_equal(v.credit_loop, 0);
	assert_int_equal(v.max_hops, 2);
	/* leaf 0 and its 4 hosts cannot reach spine 2's LID without going down then up */
	assert_int_equal(v.sw_unreachable, 5);
	assert_false(sm_validate_ok(&v, SM_VALIDATE_STRICT_SWITCHES));
	/* updn's routes to switch LIDs are legal too: no cycle with them either */
	assert_int_equal(sm_validate(x.f, 0, l, SM_VALIDATE_CDG_SWITCH_LIDS, &v), 0);
	assert_int_equal(v.credit_loop, 0);
	/* minhop does route those, with a down-up turn */
	sm_lfts_free(l);
	l = route_with(&sm_engine_minhop, x.f, 0, NULL, NULL, 0, msg);
	validate(x.f, 0, l, &v);
	assert_int_equal(v.sw_unreachable, 0);
	assert_true(sm_validate_ok(&v, SM_VALIDATE_STRICT_SWITCHES));
	sm_lfts_free(l);
	sm_fabric_free(x.f);
}

static void test_updn_config(void **state)
{
	(void)state;
	struct fix x;
	fix_init(&x);
	fix_chain(&x, 4, 1, 0);  /* a line S0..S3 */
	fix_lids(&x, 0);
	yaml_document_t doc;
	char err[300], msg[256];
	void *st;

	/* one configured root: everything routable, the root is S1 */
	yaml_node_t *root = load_yaml(&doc, "updn:\n  roots: [0x1001]\n");
	yaml_node_t *cfg = sm_yaml_map_get(&doc, root, "updn");
	assert_non_null(cfg);
	struct sm_lfts *l = route_with(&sm_engine_updn, x.f, 0, &doc, cfg, 0, msg);
	assert_non_null(strstr(msg, "1 configured"));
	struct sm_validation v;
	validate(x.f, 0, l, &v);
	assert_true(sm_validate_ok(&v, 0));
	sm_lfts_free(l);
	yaml_document_delete(&doc);

	/* two roots at both ends of a line leave S3 -> S1 without a legal route */
	root = load_yaml(&doc, "updn:\n  roots:\n    - 0x1000\n    - 0x1003\n");
	cfg = sm_yaml_map_get(&doc, root, "updn");
	route_with(&sm_engine_updn, x.f, 0, &doc, cfg, -EINVAL, msg);
	assert_non_null(strstr(msg, "configured roots leave"));
	yaml_document_delete(&doc);

	/* a GUID that is not in the fabric names its line */
	root = load_yaml(&doc, "updn:\n  roots:\n    - 0x1001\n    - 0xdead\n");
	cfg = sm_yaml_map_get(&doc, root, "updn");
	route_with(&sm_engine_updn, x.f, 0, &doc, cfg, -EINVAL, msg);
	assert_non_null(strstr(msg, "config line 4"));
	assert_non_null(strstr(msg, "0x000000000000dead"));
	yaml_document_delete(&doc);

	/* parse errors name the line */
	root = load_yaml(&doc, "updn:\n  roots: [0x1001,\n          zzz]\n");
	cfg = sm_yaml_map_get(&doc, root, "updn");
	assert_int_equal(sm_engine_updn.init(&st, &doc, cfg, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "config line 3"));
	assert_non_null(strstr(err, "zzz"));
	yaml_document_delete(&doc);

	root = load_yaml(&doc, "updn:\n  roots: []\n");
	assert_int_equal(sm_engine_updn.init(&st, &doc, sm_yaml_map_get(&doc, root, "updn"), err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "empty"));
	yaml_document_delete(&doc);

	root = load_yaml(&doc, "updn:\n  root: 0x1001\n");
	assert_int_equal(sm_engine_updn.init(&st, &doc, sm_yaml_map_get(&doc, root, "updn"), err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "config line 2: unknown option 'root' (known: roots)"));
	yaml_document_delete(&doc);

	root = load_yaml(&doc, "minhop:\n  balance: yes\n");
	assert_int_equal(sm_engine_minhop.init(&st, &doc, sm_yaml_map_get(&doc, root, "minhop"), err,
					       sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "minhop: config line 2"));
	yaml_document_delete(&doc);

	root = load_yaml(&doc, "updn: [1, 2]\n");
	assert_int_equal(sm_engine_updn.init(&st, &doc, sm_yaml_map_get(&doc, root, "updn"), err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "config line 1: expected a mapping"));
	yaml_document_delete(&doc);
	sm_fabric_free(x.f);
}

/* Seeded random topologies: irregular graphs, parallel cables, islands, multi-port CAs. */
static uint64_t rnd_state;

static unsigned rnd(unsigned n)
{
	rnd_state = rnd_state * 6364136223846793005ull + 1442695040888963407ull;
	return (unsigned)((rnd_state >> 33) % n);
}

static void random_fabric(struct fix *x, unsigned n_sw)
{
	fix_init(x);
	for (unsigned i = 0; i < n_sw; i++)
		fix_switch(x, 12, 0);
	uint8_t used[64][13] = { { 0 } };
	/* a random spanning chain of most switches, then extra cables (some parallel) */
	for (unsigned i = 1; i < n_sw; i++) {
		if (rnd(8) == 0)
			continue;  /* leaves an island now and then */
		unsigned j = rnd(i), pa = 1 + rnd(12), pb = 1 + rnd(12);
		if (used[i][pa] || used[j][pb])
			continue;
		used[i][pa] = used[j][pb] = 1;
		fix_link(x, x->sw[i], pa, x->sw[j], pb);
	}
	for (unsigned e = 0; e < n_sw; e++) {
		unsigned i = rnd(n_sw), j = rnd(n_sw), pa = 1 + rnd(12), pb = 1 + rnd(12);
		if (i == j || used[i][pa] || used[j][pb])
			continue;
		used[i][pa] = used[j][pb] = 1;
		fix_link(x, x->sw[i], pa, x->sw[j], pb);
	}
	for (unsigned h = 0; h < 2 * n_sw; h++) {
		unsigned np = 1 + (rnd(4) == 0);
		uint32_t ca = fix_ca(x, np, 0);
		for (unsigned p = 1; p <= np; p++) {
			unsigned i = rnd(n_sw), pa = 1 + rnd(12);
			if (!used[i][pa]) {
				used[i][pa] = 1;
				fix_link(x, ca, p, x->sw[i], pa);
			}
		}
	}
	fix_lids(x, (uint8_t)rnd(2));
}

/* Brute-force CDG for cross-checking the validator: every endpoint pair walked hop by hop. */
struct bf_cdg {
	const struct sm_fabric *f;
	uint8_t *edge;           /* [n_ports * n_ports] */
	uint32_t prev;
};

static void bf_hop(void *arg, uint32_t port)
{
	struct bf_cdg *c = arg;
	const struct sm_port *p = &c->f->ports[port];
	int sw_link = p->peer_node != SM_NONE && c->f->nodes[p->peer_node].type == SM_NODE_SWITCH;
	if (c->prev != SM_NONE && sw_link)
		c->edge[(size_t)c->prev * c->f->n_ports + port] = 1;
	c->prev = sw_link ? port : SM_NONE;
}

static int bf_dfs(const struct bf_cdg *c, uint32_t v, uint8_t *color)
{
	color[v] = 1;
	for (uint32_t w = 0; w < c->f->n_ports; w++) {
		if (!c->edge[(size_t)v * c->f->n_ports + w])
			continue;
		if (color[w] == 1 || (!color[w] && bf_dfs(c, w, color)))
			return 1;
	}
	color[v] = 2;
	return 0;
}

static int brute_force_credit_loop(const struct sm_fabric *f, const struct sm_lfts *l)
{
	uint32_t hosts[512];
	unsigned n = fix_host_ports(f, 0, hosts, 512);
	struct bf_cdg c = { f, calloc((size_t)f->n_ports * f->n_ports, 1), SM_NONE };
	uint8_t *color = calloc(f->n_ports, 1);
	assert_non_null(c.edge);
	assert_non_null(color);
	for (unsigned i = 0; i < n; i++)
		for (unsigned j = 0; j < n; j++) {
			if (i == j)
				continue;
			const struct sm_port *dp = &f->ports[hosts[j]];
			for (unsigned k = 0; k < (1u << dp->lmc); k++) {
				c.prev = SM_NONE;
				fix_walk(f, l, hosts[i], (uint16_t)(dp->lid + k), bf_hop, &c);
			}
		}
	int cyc = 0;
	for (uint32_t v = 0; v < f->n_ports && !cyc; v++)
		if (!color[v])
			cyc = bf_dfs(&c, v, color);
	free(c.edge);
	free(color);
	return cyc;
}

static void test_random_topologies(void **state)
{
	(void)state;
	rnd_state = 42;
	unsigned loops_seen = 0;
	for (unsigned iter = 0; iter < 40; iter++) {
		struct fix x;
		random_fabric(&x, 4 + rnd(20));
		struct sm_validation v;
		char msg[256];
		struct sm_lfts *l = route_with(&sm_engine_minhop, x.f, 0, NULL, NULL, 0, msg);
		validate(x.f, 0, l, &v);
		assert_int_equal(v.unreachable, 0);
		assert_int_equal(v.sw_unreachable, 0);
		assert_int_equal(v.reachable + v.disconnected, v.pairs);
		/* the validator's CDG verdict matches a brute-force one */
		assert_int_equal(v.credit_loop, brute_force_credit_loop(x.f, l));
		loops_seen += v.credit_loop;
		sm_lfts_free(l);
		l = route_with(&sm_engine_updn, x.f, 0, NULL, NULL, 0, msg);
		assert_int_equal(sm_validate(x.f, 0, l, SM_VALIDATE_CDG_SWITCH_LIDS, &v), 0);
		if (v.unreachable || v.credit_loop)
			print_error("iteration %u: %s (%s)\n", iter, v.msg, msg);
		assert_int_equal(v.unreachable, 0);
		assert_int_equal(v.credit_loop, 0);  /* up* / down*: never, whatever the graph */
		assert_int_equal(v.sw_loops, 0);
		assert_true(sm_validate_ok(&v, 0) || (v.pairs && !v.reachable));
		/* garbage LFTs: the validator counts, never crashes, and every pair is accounted for */
		for (size_t i = 0; i < (size_t)l->n_switches * (l->top_lid + 1u); i++)
			if (rnd(3) == 0)
				l->ports[i] = (uint8_t)(rnd(2) ? rnd(14) : rnd(256));
		assert_int_equal(sm_validate(x.f, 0, l, 0, &v), 0);
		assert_int_equal(v.reachable + v.unreachable + v.disconnected, v.pairs);
		assert_int_equal(v.credit_loop, brute_force_credit_loop(x.f, l));
		assert_int_equal(v.loops + v.black_holes, v.unreachable);
		sm_lfts_free(l);
		sm_fabric_free(x.f);
	}
	/* the sample has minhop credit loops, so both verdicts were exercised */
	assert_true(loops_seen > 0 && loops_seen < 40);
}

/* ---- chain ---- */

static void test_chain_fallback_on_validation(void **state)
{
	(void)state;
	struct fix x;
	fix_init(&x);
	fix_chain(&x, 5, 2, 1);
	fix_lids(&x, 0);
	char err[300], text[1024];
	struct sm_registry *r = sm_registry_new("/nonexistent-smd-plugins");
	struct sm_chain *c;
	assert_int_equal(sm_chain_new(r, "minhop,updn", NULL, NULL, &c, err, sizeof(err)), 0);
	struct sm_lfts *l;
	struct sm_plane_result res;
	assert_int_equal(sm_route_chain(c, x.f, 0, NULL, &l, &res), 0);
	assert_non_null(l);
	assert_int_equal(res.rc, 0);
	assert_string_equal(res.engine, "updn");
	assert_int_equal(res.engine_index, 1);
	assert_int_equal(res.n_attempts, 2);
	assert_string_equal(res.attempts[0].engine, "minhop");
	assert_int_equal(res.attempts[0].rc, -EBADMSG);
	assert_non_null(strstr(res.attempts[0].why, "credit loop"));
	assert_int_equal(res.attempts[1].rc, 0);
	assert_int_equal(res.val.credit_loop, 0);
	assert_true(res.total_seconds >= res.route_seconds);
	sm_plane_result_format(&res, text, sizeof(text));
	assert_non_null(strstr(text, "routed by updn"));
	assert_non_null(strstr(text, "minhop passed over"));
	sm_lfts_free(l);

	/* minhop alone fails; allowed credit loops make it pass */
	sm_chain_free(c);
	assert_int_equal(sm_chain_new(r, "minhop", NULL, NULL, &c, err, sizeof(err)), 0);
	assert_int_equal(sm_route_chain(c, x.f, 0, NULL, &l, &res), -EBADMSG);
	assert_null(l);
	assert_null(res.engine);
	assert_int_equal(res.engine_index, -1);
	sm_plane_result_format(&res, text, sizeof(text));
	assert_non_null(strstr(text, "not routed"));
	c->flags = SM_VALIDATE_ALLOW_CREDIT_LOOP;
	assert_int_equal(sm_route_chain(c, x.f, 0, NULL, &l, &res), 0);
	assert_int_equal(res.val.credit_loop, 1);
	sm_lfts_free(l);
	assert_int_equal(sm_route_chain(c, x.f, 3, NULL, &l, &res), -EINVAL);  /* no such plane */
	sm_chain_free(c);
	sm_registry_free(r);
	sm_fabric_free(x.f);
}

static void test_chain_fallback_on_error(void **state)
{
	(void)state;
	struct fix x;
	fix_init(&x);
	fix_chain(&x, 4, 1, 0);
	fix_lids(&x, 0);
	yaml_document_t doc;
	yaml_node_t *root = load_yaml(&doc, "minhop:\nupdn:\n  roots: [0x1000, 0x1003]\n");
	char err[300];
	struct sm_registry *r = sm_registry_new(NULL);
	struct sm_chain *c;
	assert_int_equal(sm_chain_new(r, "updn,minhop", &doc, root, &c, err, sizeof(err)), 0);
	yaml_document_delete(&doc);  /* engines keep no pointer into the document */
	struct sm_lfts *l;
	struct sm_plane_result res;
	assert_int_equal(sm_route_chain(c, x.f, 0, NULL, &l, &res), 0);
	assert_string_equal(res.engine, "minhop");
	assert_int_equal(res.attempts[0].rc, -EINVAL);
	assert_non_null(strstr(res.attempts[0].why, "engine failed"));
	assert_non_null(strstr(res.attempts[0].why, "configured roots"));
	assert_true(res.val.reachable > 0);
	sm_lfts_free(l);
	sm_chain_free(c);

	/* a config error stops chain creation and names the line */
	root = load_yaml(&doc, "updn:\n  roots: [0x1000]\nminhop:\n  fast: true\n");
	assert_int_equal(sm_chain_new(r, "updn,minhop", &doc, root, &c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "minhop: config line 4: unknown option 'fast' (known: none)");
	yaml_document_delete(&doc);
	sm_registry_free(r);
	sm_fabric_free(x.f);
}

static void test_chain_planes(void **state)
{
	(void)state;
	struct fix x;
	fix_init(&x);
	fix_chain(&x, 5, 1, 1);  /* plane 0: a ring */
	fix_fat_tree(&x, 4, 2, 2, 1, 1);  /* plane 1: a fat tree */
	fix_lids(&x, 0);
	char err[300];
	struct sm_registry *r = sm_registry_new(NULL);
	struct sm_chain *c;
	assert_int_equal(sm_chain_new(r, "minhop,updn", NULL, NULL, &c, err, sizeof(err)), 0);
	unsigned planes[2] = { 0, 1 };
	struct sm_lfts *outs[2];
	struct sm_plane_result res[2];
	assert_int_equal(sm_route_chain_planes(c, x.f, planes, 2, NULL, outs, res), 0);
	assert_string_equal(res[0].engine, "updn");
	assert_string_equal(res[1].engine, "minhop");
	assert_int_equal(res[1].n_attempts, 1);
	assert_int_equal(outs[1]->plane, 1);
	sm_lfts_free(outs[0]);
	sm_lfts_free(outs[1]);
	sm_chain_free(c);
	sm_registry_free(r);
	sm_fabric_free(x.f);
}

/*
 * Test-local engines put straight into a chain (struct sm_chain is public):
 * "half" routes all planes at once with minhop but leaves odd planes empty,
 * so only those fall back; "broken" fails with a positive (invalid) code.
 */
static int local_init(void **st, yaml_document_t *doc, yaml_node_t *node, char *err, size_t len)
{
	*st = NULL;
	return 0;
}

static void local_free(void *st)
{
}

static int half_route_planes(void *st, struct sm_route_ctx *ctx)
{
	for (unsigned i = 0; i < ctx->n_planes; i++) {
		if (ctx->planes[i] % 2)
			continue;
		struct sm_route_ctx one = { .fabric = ctx->fabric, .plane = ctx->planes[i], .out = ctx->outs[i] };
		int rc = sm_engine_minhop.route(NULL, &one);
		if (rc)
			return rc;
	}
	snprintf(ctx->msg, sizeof(ctx->msg), "routed %u planes together", ctx->n_planes);
	return 0;
}

static int broken_route(void *st, struct sm_route_ctx *ctx)
{
	snprintf(ctx->msg, sizeof(ctx->msg), "broken on purpose");
	return 1;
}

static const struct sm_engine_ops half_ops = {
	.size = sizeof(struct sm_engine_ops), .abi_version = SM_ENGINE_ABI_VERSION, .name = "half",
	.init = local_init, .route_planes = half_route_planes, .free = local_free,
};
static const struct sm_engine_ops broken_ops = {
	.size = sizeof(struct sm_engine_ops), .abi_version = SM_ENGINE_ABI_VERSION, .name = "broken",
	.init = local_init, .route = broken_route, .free = local_free,
};

static void test_chain_route_planes(void **state)
{
	(void)state;
	struct fix x;
	fix_init(&x);
	for (unsigned p = 0; p < 4; p++)
		fix_fat_tree(&x, 2, 2, 2, 1, p);
	fix_lids(&x, 0);
	struct sm_chain *c = calloc(1, sizeof(*c));
	assert_non_null(c);
	c->n = 3;
	c->e[0].ops = &broken_ops;
	c->e[1].ops = &half_ops;
	c->e[2].ops = &sm_engine_updn;
	char err[128];
	assert_int_equal(sm_engine_check_ops(&half_ops, err, sizeof(err)), 0);
	assert_int_equal(sm_engine_updn.init(&c->e[2].state, NULL, NULL, err, sizeof(err)), 0);
	unsigned planes[4] = { 0, 1, 2, 3 };
	struct sm_lfts *outs[4];
	struct sm_plane_result res[4];
	assert_int_equal(sm_route_chain_planes(c, x.f, planes, 4, NULL, outs, res), 0);
	for (unsigned p = 0; p < 4; p++) {
		assert_non_null(outs[p]);
		assert_int_equal(outs[p]->plane, p);
		assert_string_equal(res[p].engine, p % 2 ? "updn" : "half");
		assert_int_equal(res[p].n_attempts, p % 2 ? 3 : 2);
		/* a positive return is not trusted as an errno */
		assert_int_equal(res[p].attempts[0].rc, -EIO);
		assert_non_null(strstr(res[p].attempts[0].why, "broken on purpose"));
		if (p % 2) {
			assert_int_equal(res[p].attempts[1].rc, -EBADMSG);
			assert_non_null(strstr(res[p].attempts[1].why, "failed validation"));
		} else {
			assert_string_equal(res[p].notes, "routed 4 planes together");
		}
		struct sm_validation v;
		validate(x.f, p, outs[p], &v);
		assert_true(sm_validate_ok(&v, 0));
		assert_int_equal(v.hosts, 4);
		sm_lfts_free(outs[p]);
	}
	/* the single-plane entry uses route_planes with a one-plane list */
	struct sm_lfts *l;
	assert_int_equal(sm_route_chain(c, x.f, 2, NULL, &l, &res[0]), 0);
	assert_string_equal(res[0].engine, "half");
	sm_lfts_free(l);
	sm_chain_free(c);
	sm_fabric_free(x.f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_builtins),
		cmocka_unit_test(test_chain_parse),
		cmocka_unit_test(test_minhop_line),
		cmocka_unit_test(test_minhop_fat_tree_balance),
		cmocka_unit_test(test_three_level_tree),
		cmocka_unit_test(test_minhop_parallel_links),
		cmocka_unit_test(test_minhop_multiport_ca_lmc),
		cmocka_unit_test(test_lmc_spreads_over_uplinks),
		cmocka_unit_test(test_lmc_fat_tree),
		cmocka_unit_test(test_disconnected_island),
		cmocka_unit_test(test_no_switch),
		cmocka_unit_test(test_ring_minhop_loops_updn_not),
		cmocka_unit_test(test_mesh_updn),
		cmocka_unit_test(test_updn_fat_tree),
		cmocka_unit_test(test_updn_degraded_fat_tree),
		cmocka_unit_test(test_updn_config),
		cmocka_unit_test(test_random_topologies),
		cmocka_unit_test(test_chain_fallback_on_validation),
		cmocka_unit_test(test_chain_fallback_on_error),
		cmocka_unit_test(test_chain_planes),
		cmocka_unit_test(test_chain_route_planes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
