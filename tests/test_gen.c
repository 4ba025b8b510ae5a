/* SPDX-License-Identifier: MIT */
/* Unit tests for the fabric generator (smd/model/gen.c): structure, planes, LIDs, faults, refusals. */
#include "config.h"

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

#include "fixture/fixture.h"
#include "model/gen.h"
#include "model/topo.h"

static char err[256];

static struct sm_fabric *gen(const struct sm_gen_params *p)
{
	struct sm_fabric *f = sm_fabric_new();
	assert_non_null(f);
	int rc = sm_gen_fat_tree(p, f, err, sizeof(err));
	if (rc)
		fprintf(stderr, "generator failed: %d %s\n", rc, err);
	assert_int_equal(rc, 0);
	return f;
}

static struct sm_gen_params params(unsigned radix, unsigned hosts)
{
	struct sm_gen_params p;
	sm_gen_params_init(&p);
	p.radix = radix;
	p.hosts = hosts;
	return p;
}

static void check_shape(const struct sm_gen_params *p, struct sm_gen_shape *s)
{
	int rc = sm_gen_fat_tree_shape(p, s, err, sizeof(err));
	if (rc)
		fprintf(stderr, "shape failed: %s\n", err);
	assert_int_equal(rc, 0);
}

/* Number of linked ports of node n whose peer has the given type. */
static unsigned degree_to(const struct sm_fabric *f, uint32_t n, enum sm_node_type type)
{
	unsigned d = 0;
	for (unsigned p = 1; p <= f->nodes[n].nports; p++) {
		const struct sm_port *pt = sm_port(f, n, p);
		if (pt->peer_node != SM_NONE && f->nodes[pt->peer_node].type == type)
			d++;
	}
	return d;
}

/* BFS over links from node `from`; returns how many CAs it reaches and checks planes never mix. */
static uint32_t reach_cas(const struct sm_fabric *f, uint32_t from)
{
	uint8_t *seen = calloc(f->n_nodes, 1);
	uint32_t *q = calloc(f->n_nodes, sizeof(*q));
	uint32_t head = 0, tail = 0, cas = 0;
	assert_non_null(seen);
	assert_non_null(q);
	seen[from] = 1;
	q[tail++] = from;
	while (head < tail) {
		uint32_t x = q[head++];
		if (f->nodes[x].type == SM_NODE_CA)
			cas++;
		assert_int_equal(f->nodes[x].plane, f->nodes[from].plane);
		for (unsigned p = 1; p <= f->nodes[x].nports; p++) {
			const struct sm_port *pt = sm_port(f, x, p);
			if (pt->peer_node == SM_NONE || seen[pt->peer_node])
				continue;
			/* links are symmetric */
			const struct sm_port *back = sm_port(f, pt->peer_node, pt->peer_port);
			assert_int_equal(back->peer_node, x);
			assert_int_equal(back->peer_port, p);
			seen[pt->peer_node] = 1;
			q[tail++] = pt->peer_node;
		}
	}
	free(seen);
	free(q);
	return cas;
}

static void check_common(const struct sm_fabric *f, const struct sm_gen_params *p,
			 const struct sm_gen_shape *s);

/* Shape, generate and run the common checks. */
static struct sm_fabric *gen_ok(const struct sm_gen_params *p, struct sm_gen_shape *s)
{
	check_shape(p, s);
	struct sm_fabric *f = gen(p);
	check_common(f, p, s);
	return f;
}

/* Switch-switch links of one plane. */
static uint32_t sw_links(const struct sm_fabric *f, int plane)
{
	struct sm_fabric_counts c;
	sm_fabric_count(f, plane, &c);
	return c.sw_links;
}

static uint32_t find_desc(const struct sm_fabric *f, const char *desc)
{
	for (uint32_t n = 0; n < f->n_nodes; n++)
		if (!strcmp(f->nodes[n].desc, desc))
			return n;
	return SM_NONE;
}

/* Node of host h's NIC in plane pl, by its description; SM_NONE if absent. */
static uint32_t find_nic(const struct sm_fabric *f, unsigned h, unsigned pl)
{
	char name[32];
	snprintf(name, sizeof(name), "host%05u mlx5_%u", h, pl);
	return find_desc(f, name);
}

static int is_prefix(const char *s, const char *pre)
{
	return !strncmp(s, pre, strlen(pre));
}

/* Checks every generated fabric must pass, whatever its parameters. */
static void check_common(const struct sm_fabric *f, const struct sm_gen_params *p,
			 const struct sm_gen_shape *s)
{
	assert_int_equal(f->n_planes, p->planes);
	for (unsigned pl = 0; pl < p->planes; pl++) {
		int faulty = p->fault_plane < 0 || (unsigned)p->fault_plane == pl;
		uint32_t nics = s->hosts - (faulty ? p->remove_nics : 0);
		struct sm_fabric_counts c;
		sm_fabric_count(f, (int)pl, &c);
		assert_int_equal(c.cas, nics);
		assert_int_equal(c.routers, 0);
		/* every NIC has its host link */
		assert_int_equal(c.links - c.sw_links, nics);
		if (!p->no_lids)
			assert_int_equal(c.lids, nics + c.switches);
		else
			assert_int_equal(c.lids, 0);
		/* every NIC of the plane reaches every other */
		uint32_t first = SM_NONE;
		for (uint32_t n = 0; n < f->n_nodes && first == SM_NONE; n++)
			if (f->nodes[n].plane == pl && f->nodes[n].type == SM_NODE_CA)
				first = n;
		assert_int_not_equal(first, SM_NONE);
		assert_int_equal(reach_cas(f, first), nics);
	}
	for (uint32_t n = 0; n < f->n_nodes; n++) {
		const struct sm_node *nd = &f->nodes[n];
		assert_int_not_equal(nd->guid, 0);
		assert_int_not_equal(nd->sysimg_guid, 0);
		assert_int_equal(sm_fabric_find_node(f, nd->guid), n);
		if (nd->type == SM_NODE_CA) {
			assert_int_equal(nd->nports, 1);
			const struct sm_port *pt = sm_port(f, n, 1);
			assert_int_not_equal(pt->guid, 0);
			assert_int_equal(sm_fabric_find_port(f, pt->guid), sm_port_index(f, n, 1));
			assert_int_equal(pt->state, SM_PORT_ACTIVE);
			assert_int_equal(degree_to(f, n, SM_NODE_SWITCH), 1);
		} else {
			assert_int_equal(nd->type, SM_NODE_SWITCH);
			assert_int_equal(nd->nports, s->radix);
			assert_int_equal(nd->sysimg_guid, nd->guid);
		}
	}
}

static void test_shape_canonical(void **state)
{
	(void)state;
	struct sm_gen_params p = params(64, 2048);
	struct sm_gen_shape s;
	check_shape(&p, &s);
	assert_int_equal(s.levels, 2);
	assert_int_equal(s.down, 32);
	assert_int_equal(s.up, 32);
	assert_int_equal(s.leaves, 64);
	assert_int_equal(s.spines, 32);
	assert_int_equal(s.switches, 96);
	assert_int_equal(s.sw_links, 2048);
	assert_int_equal(s.max_hosts, 2048);

	/* 3 levels: radix 32 full is 8,192 hosts, radix 64 full 65,536 */
	p = params(32, 0);
	p.levels = 3;
	check_shape(&p, &s);
	assert_int_equal(s.hosts, 8192);
	assert_int_equal(s.pods, 32);
	assert_int_equal(s.leaves, 512);
	assert_int_equal(s.aggs, 512);
	assert_int_equal(s.cores, 256);
	assert_int_equal(s.switches, 1280);

	p = params(64, 0);
	p.levels = 3;
	p.no_lids = 1;
	check_shape(&p, &s);
	assert_int_equal(s.hosts, 65536);
	assert_int_equal(s.switches, 5120);
	assert_int_equal(s.sw_links, 2048 * 32 * 2);
	/* ... which does not fit the unicast LID space */
	p.no_lids = 0;
	assert_int_equal(sm_gen_fat_tree_shape(&p, &s, err, sizeof(err)), -ERANGE);
	assert_non_null(strstr(err, "LIDs"));

	/* 32k hosts at radix 64: half the pods; auto levels picks 3 */
	p = params(64, 32768);
	check_shape(&p, &s);
	assert_int_equal(s.levels, 3);
	assert_int_equal(s.leaves, 1024);
	assert_int_equal(s.pods, 32);
	assert_int_equal(s.aggs, 1024);
	assert_int_equal(s.cores, 1024);
	assert_true(s.lids <= SM_UNICAST_LID_MAX);
}

static void test_two_level_full(void **state)
{
	(void)state;
	struct sm_gen_params p = params(8, 0);
	struct sm_gen_shape s;
	check_shape(&p, &s);
	assert_int_equal(s.hosts, 32);
	struct sm_fabric *f = gen(&p);
	check_common(f, &p, &s);
	fx_expect_counts(f, -1, FX_ANY, 12, 32, 64, 32);
	unsigned leaves = 0, spines = 0;
	for (uint32_t n = 0; n < f->n_nodes; n++) {
		const struct sm_node *nd = &f->nodes[n];
		if (nd->type != SM_NODE_SWITCH)
			continue;
		if (is_prefix(nd->desc, "p0-leaf")) {
			leaves++;
			assert_int_equal(degree_to(f, n, SM_NODE_CA), 4);
			assert_int_equal(degree_to(f, n, SM_NODE_SWITCH), 4);
			/* hosts on ports 1..4, uplinks on 5..8 */
			assert_int_equal(f->nodes[sm_port(f, n, 1)->peer_node].type, SM_NODE_CA);
			assert_int_equal(f->nodes[sm_port(f, n, 5)->peer_node].type, SM_NODE_SWITCH);
		} else {
			assert_true(is_prefix(nd->desc, "p0-spine"));
			spines++;
			assert_int_equal(degree_to(f, n, SM_NODE_CA), 0);
			assert_int_equal(degree_to(f, n, SM_NODE_SWITCH), 8);
		}
	}
	assert_int_equal(leaves, 8);
	assert_int_equal(spines, 4);
	/* host 5 sits on leaf 1, port 2 */
	uint32_t h5 = find_desc(f, "host00005 mlx5_0");
	assert_int_not_equal(h5, SM_NONE);
	const struct sm_port *pt = sm_port(f, h5, 1);
	assert_string_equal(f->nodes[pt->peer_node].desc, "p0-leaf00001");
	assert_int_equal(pt->peer_port, 2);
	assert_int_equal(pt->lid, 6);
	assert_int_equal(pt->guid, sm_gen_ca_port_guid(0, 5));
	sm_fabric_free(f);
}

static void test_two_level_canonical(void **state)
{
	(void)state;
	struct sm_gen_params p = params(64, 2048);
	struct sm_gen_shape s;
	struct sm_fabric *f = gen_ok(&p, &s);
	fx_expect_counts(f, 0, FX_ANY, 96, FX_ANY, FX_ANY, 2048);
	for (uint32_t n = 0; n < f->n_nodes; n++)
		if (f->nodes[n].type == SM_NODE_SWITCH)
			assert_int_equal(degree_to(f, n, SM_NODE_SWITCH) + degree_to(f, n, SM_NODE_CA), 64);
	sm_fabric_free(f);
}

static void test_partial(void **state)
{
	(void)state;
	/* 13 hosts at radix 8: leaves of 4,4,4,1 hosts; all 4 spines */
	struct sm_gen_params p = params(8, 13);
	struct sm_gen_shape s;
	check_shape(&p, &s);
	assert_int_equal(s.leaves, 4);
	assert_int_equal(s.spines, 4);
	struct sm_fabric *f = gen(&p);
	check_common(f, &p, &s);
	fx_expect_counts(f, 0, FX_ANY, 8, FX_ANY, FX_ANY, 16);
	uint32_t l3 = find_desc(f, "p0-leaf00003");
	assert_int_not_equal(l3, SM_NONE);
	assert_int_equal(degree_to(f, l3, SM_NODE_CA), 1);
	assert_int_equal(degree_to(f, l3, SM_NODE_SWITCH), 4);
	uint32_t s0 = find_desc(f, "p0-spine00000");
	assert_int_equal(degree_to(f, s0, SM_NODE_SWITCH), 4);
	sm_fabric_free(f);

	/* a single host still makes a tree */
	p = params(8, 1);
	f = gen_ok(&p, &s);
	sm_fabric_free(f);
}

static void test_three_level(void **state)
{
	(void)state;
	struct sm_gen_params p = params(8, 0);
	p.levels = 3;
	struct sm_gen_shape s;
	check_shape(&p, &s);
	assert_int_equal(s.hosts, 128);
	assert_int_equal(s.pods, 8);
	assert_int_equal(s.leaves, 32);
	assert_int_equal(s.aggs, 32);
	assert_int_equal(s.cores, 16);
	struct sm_fabric *f = gen(&p);
	check_common(f, &p, &s);
	struct sm_fabric_counts c;
	fx_expect_counts(f, 0, FX_ANY, 80, FX_ANY, FX_ANY, 32 * 4 + 32 * 4);
	unsigned n_leaf = 0, n_agg = 0, n_core = 0;
	for (uint32_t n = 0; n < f->n_nodes; n++) {
		const struct sm_node *nd = &f->nodes[n];
		if (nd->type != SM_NODE_SWITCH)
			continue;
		unsigned ca = degree_to(f, n, SM_NODE_CA), sw = degree_to(f, n, SM_NODE_SWITCH);
		if (is_prefix(nd->desc, "p0-leaf")) {
			n_leaf++;
			assert_int_equal(ca, 4);
			assert_int_equal(sw, 4);
		} else if (is_prefix(nd->desc, "p0-agg")) {
			n_agg++;
			assert_int_equal(ca, 0);
			assert_int_equal(sw, 8);
			/* down to leaves on 1..4, up to cores on 5..8 */
			assert_true(is_prefix(f->nodes[sm_port(f, n, 1)->peer_node].desc, "p0-leaf"));
			assert_true(is_prefix(f->nodes[sm_port(f, n, 8)->peer_node].desc, "p0-core"));
		} else {
			assert_true(is_prefix(nd->desc, "p0-core"));
			n_core++;
			assert_int_equal(sw, 8); /* one link per pod */
		}
	}
	assert_int_equal(n_leaf, 32);
	assert_int_equal(n_agg, 32);
	assert_int_equal(n_core, 16);
	sm_fabric_free(f);

	/* partial: 40 hosts -> 10 leaves in 3 pods */
	p.hosts = 40;
	check_shape(&p, &s);
	assert_int_equal(s.leaves, 10);
	assert_int_equal(s.pods, 3);
	assert_int_equal(s.aggs, 12);
	assert_int_equal(s.cores, 16);
	f = gen_ok(&p, &s);
	assert_int_equal(sw_links(f, 0), 10 * 4 + 12 * 4);
	sm_fabric_free(f);

	/* radix 16 full: 1,024 hosts, 320 switches */
	p = params(16, 0);
	p.levels = 3;
	check_shape(&p, &s);
	assert_int_equal(s.hosts, 1024);
	f = gen_ok(&p, &s);
	sm_fabric_count(f, 0, &c);
	assert_int_equal(c.switches, 320);
	sm_fabric_free(f);
}

static void test_oversub(void **state)
{
	(void)state;
	/* 2:1 at radix 12: 8 hosts down, 4 up per leaf; 4 spines; at most 96 hosts */
	struct sm_gen_params p = params(12, 0);
	p.oversub_down = 2;
	p.oversub_up = 1;
	struct sm_gen_shape s;
	check_shape(&p, &s);
	assert_int_equal(s.down, 8);
	assert_int_equal(s.up, 4);
	assert_int_equal(s.spines, 4);
	assert_int_equal(s.hosts, 96);
	struct sm_fabric *f = gen(&p);
	check_common(f, &p, &s);
	for (uint32_t n = 0; n < f->n_nodes; n++)
		if (is_prefix(f->nodes[n].desc, "p0-leaf")) {
			unsigned down = degree_to(f, n, SM_NODE_CA), up = degree_to(f, n, SM_NODE_SWITCH);
			assert_int_equal(down, 8);
			assert_int_equal(up, 4);
			assert_int_equal(down, 2 * up);
		}
	sm_fabric_free(f);

	/* 3:1 at radix 64 is 48:16; 4:2 reduces to 2:1, which at radix 64 leaves one port unused */
	p = params(64, 0);
	p.oversub_down = 3;
	p.oversub_up = 1;
	check_shape(&p, &s);
	assert_int_equal(s.down, 48);
	assert_int_equal(s.up, 16);
	p.oversub_down = 4;
	p.oversub_up = 2;
	check_shape(&p, &s);
	assert_int_equal(s.down, 42);
	assert_int_equal(s.up, 21);

	/* 3 levels with 2:1 leaves */
	p = params(12, 200);
	p.levels = 3;
	p.oversub_down = 2;
	p.oversub_up = 1;
	f = gen_ok(&p, &s);
	sm_fabric_free(f);
}

static void test_planes(void **state)
{
	(void)state;
	struct sm_gen_params p = params(8, 0);
	p.planes = 4;
	struct sm_gen_shape s;
	struct sm_fabric *f = gen_ok(&p, &s);
	struct sm_fabric_counts c;
	sm_fabric_count(f, -1, &c);
	assert_int_equal(c.cas, 4 * 32);
	assert_int_equal(c.switches, 4 * 12);
	for (unsigned pl = 0; pl < 4; pl++) {
		sm_fabric_count(f, (int)pl, &c);
		assert_int_equal(c.switches, 12);
		assert_int_equal(c.cas, 32);
		assert_int_equal(c.sw_links, 32);
	}
	/* NIC of host h on plane pl: name, sysimg shared, same LID in every plane */
	for (unsigned h = 0; h < 32; h++) {
		uint64_t sysimg = 0;
		uint16_t lid = 0;
		for (unsigned pl = 0; pl < 4; pl++) {
			uint32_t n = find_nic(f, h, pl);
			assert_int_not_equal(n, SM_NONE);
			assert_int_equal(f->nodes[n].plane, pl);
			assert_int_equal(f->nodes[n].type, SM_NODE_CA);
			if (!pl) {
				sysimg = f->nodes[n].sysimg_guid;
				lid = sm_port(f, n, 1)->lid;
			}
			assert_int_equal(f->nodes[n].sysimg_guid, sysimg);
			assert_int_equal(sm_port(f, n, 1)->lid, lid);
			assert_int_equal(sm_fabric_find_lid(f, pl, lid), sm_port_index(f, n, 1));
		}
		assert_int_not_equal(lid, 0);
	}
	/* LIDs unique within each plane: every LID maps back to its own port */
	for (uint32_t n = 0; n < f->n_nodes; n++) {
		const struct sm_node *nd = &f->nodes[n];
		unsigned p0 = nd->type == SM_NODE_SWITCH ? 0 : 1;
		uint16_t lid = sm_port(f, n, p0)->lid;
		assert_int_not_equal(lid, 0);
		assert_int_equal(sm_fabric_find_lid(f, nd->plane, lid), sm_port_index(f, n, p0));
	}
	/* different hosts, different sysimg */
	assert_int_not_equal(f->nodes[find_desc(f, "host00000 mlx5_0")].sysimg_guid,
			     f->nodes[find_desc(f, "host00001 mlx5_0")].sysimg_guid);
	/* switch names carry the plane */
	assert_int_not_equal(find_desc(f, "p3-spine00003"), SM_NONE);
	/* the model's first node is host 0's NIC (documented order) */
	assert_string_equal(f->nodes[0].desc, "host00000 mlx5_0");
	sm_fabric_free(f);
}

static void test_no_lids(void **state)
{
	(void)state;
	struct sm_gen_params p = params(8, 20);
	p.planes = 2;
	p.no_lids = 1;
	struct sm_gen_shape s;
	struct sm_fabric *f = gen_ok(&p, &s);
	for (uint32_t i = 0; i < f->n_ports; i++)
		assert_int_equal(f->ports[i].lid, 0);
	sm_fabric_free(f);
}

static void test_shuffle_lids(void **state)
{
	(void)state;
	struct sm_gen_params p = params(8, 0);
	p.planes = 3;
	p.remove_links = 0.1;
	p.seed = 5;
	struct sm_gen_shape s;
	struct sm_fabric *plain = gen_ok(&p, &s);
	p.shuffle_lids = 1;
	struct sm_fabric *f = gen_ok(&p, &s);
	struct sm_fabric *again = gen(&p);
	/* same wiring, same removals; LIDs are a permutation of 1..hosts+switches */
	assert_int_equal(f->n_nodes, plain->n_nodes);
	for (uint32_t i = 0; i < f->n_ports; i++) {
		assert_int_equal(f->ports[i].peer_node, plain->ports[i].peer_node);
		assert_int_equal(f->ports[i].lid, again->ports[i].lid);
	}
	unsigned moved = 0, inconsistent = 0;
	for (unsigned pl = 0; pl < 3; pl++) {
		uint8_t seen[64] = { 0 };
		for (uint32_t n = 0; n < f->n_nodes; n++) {
			if (f->nodes[n].plane != pl)
				continue;
			unsigned p0 = f->nodes[n].type == SM_NODE_SWITCH ? 0 : 1;
			uint16_t lid = sm_port(f, n, p0)->lid;
			assert_true(lid >= 1 && lid <= s.lids);
			assert_false(seen[lid]);
			seen[lid] = 1;
			moved += lid != sm_port(plain, n, p0)->lid;
		}
	}
	for (unsigned h = 0; h < 32; h++)
		inconsistent += sm_port(f, find_nic(f, h, 0), 1)->lid != sm_port(f, find_nic(f, h, 1), 1)->lid;
	assert_true(moved > 0);
	assert_true(inconsistent > 0);
	sm_fabric_free(again);
	sm_fabric_free(f);
	sm_fabric_free(plain);
}

static void test_remove_nics(void **state)
{
	(void)state;
	struct sm_gen_params p = params(8, 0);
	p.planes = 2;
	p.fault_plane = 1;
	p.remove_links = 0.1;
	p.seed = 21;
	struct sm_gen_shape s;
	struct sm_fabric *plain = gen_ok(&p, &s);
	p.remove_nics = 3;
	struct sm_fabric *f = gen_ok(&p, &s);
	/* plane 0 untouched; plane 1 lacks 3 NICs, the others keep their LIDs */
	unsigned missing = 0;
	for (unsigned h = 0; h < 32; h++) {
		uint32_t n0 = find_nic(f, h, 0), n1 = find_nic(f, h, 1);
		assert_int_not_equal(n0, SM_NONE);
		if (n1 == SM_NONE) {
			missing++;
			assert_int_equal(sm_fabric_find_lid(f, 1, sm_port(f, n0, 1)->lid), SM_NONE);
			continue;
		}
		assert_int_equal(sm_port(f, n0, 1)->lid, sm_port(f, n1, 1)->lid);
		assert_int_equal(f->nodes[n0].sysimg_guid, f->nodes[n1].sysimg_guid);
	}
	assert_int_equal(missing, 3);
	/* the switch links removed are the same as without NIC removal */
	assert_int_equal(sw_links(f, 1), sw_links(plain, 1));
	for (uint32_t n = 0; n < plain->n_nodes; n++) {
		if (plain->nodes[n].type != SM_NODE_SWITCH)
			continue;
		uint32_t m = sm_fabric_find_node(f, plain->nodes[n].guid);
		assert_int_not_equal(m, SM_NONE);
		for (unsigned port = 1; port <= 8; port++) {
			const struct sm_port *a = sm_port(plain, n, port), *b = sm_port(f, m, port);
			if (a->peer_node == SM_NONE || plain->nodes[a->peer_node].type != SM_NODE_SWITCH)
				continue;
			assert_int_not_equal(b->peer_node, SM_NONE);
			assert_int_equal(plain->nodes[a->peer_node].guid, f->nodes[b->peer_node].guid);
		}
	}
	/* all but one NIC may go; not all */
	p.remove_nics = 31;
	sm_fabric_free(gen_ok(&p, &s));
	p.remove_nics = 32;
	assert_int_equal(sm_gen_fat_tree_shape(&p, &s, err, sizeof(err)), -EINVAL);
	sm_fabric_free(f);
	sm_fabric_free(plain);
}

/* peers of every port, to compare two fabrics generated with the same node order */
static int same_links(const struct sm_fabric *a, const struct sm_fabric *b)
{
	if (a->n_ports != b->n_ports || a->n_nodes != b->n_nodes)
		return 0;
	for (uint32_t i = 0; i < a->n_ports; i++)
		if (a->ports[i].peer_node != b->ports[i].peer_node ||
		    (a->ports[i].peer_node != SM_NONE && a->ports[i].peer_port != b->ports[i].peer_port))
			return 0;
	return 1;
}

static void test_remove_links(void **state)
{
	(void)state;
	struct sm_gen_params p = params(64, 2048);
	p.remove_links = 0.03;
	p.seed = 42;
	struct sm_gen_shape s;
	struct sm_fabric *f = gen_ok(&p, &s);
	struct sm_fabric_counts c;
	fx_expect_counts(f, 0, FX_ANY, 96, FX_ANY, FX_ANY, 2048 - 61); /* round(0.03 * 2048) = 61 */
	for (uint32_t n = 0; n < f->n_nodes; n++)
		if (is_prefix(f->nodes[n].desc, "p0-leaf"))
			assert_true(degree_to(f, n, SM_NODE_SWITCH) >= 1);

	/* same seed, same fabric; another seed, another one */
	struct sm_fabric *g = gen(&p);
	assert_true(same_links(f, g));
	sm_fabric_free(g);
	p.seed = 43;
	g = gen(&p);
	sm_fabric_count(g, 0, &c);
	assert_int_equal(c.sw_links, 2048 - 61);
	assert_false(same_links(f, g));
	sm_fabric_free(g);
	sm_fabric_free(f);

	/* rounding: 0.1 of 32 links is 3.2 -> 3 */
	p = params(8, 0);
	p.remove_links = 0.1;
	check_shape(&p, &s);
	f = gen(&p);
	assert_int_equal(sw_links(f, 0), 32 - 3);
	check_common(f, &p, &s);
	sm_fabric_free(f);

	/* heavy removal on a small tree still keeps every host reachable */
	p.remove_links = 0.5;
	for (uint64_t seed = 1; seed <= 20; seed++) {
		p.seed = seed;
		f = gen(&p);
		assert_int_equal(sw_links(f, 0), 16);
		check_common(f, &p, &s);
		sm_fabric_free(f);
	}

	/* removing every link cannot keep the tree connected: refused, f untouched */
	p.remove_links = 1.0;
	f = sm_fabric_new();
	assert_int_equal(sm_gen_fat_tree(&p, f, err, sizeof(err)), -ERANGE);
	assert_non_null(strstr(err, "without splitting"));
	assert_int_equal(f->n_nodes, 0);
	sm_fabric_free(f);
}

static void test_remove_links_planes(void **state)
{
	(void)state;
	struct sm_gen_params p = params(16, 0);
	p.planes = 3;
	p.remove_links = 0.05; /* 128 links -> 6 per plane */
	p.seed = 7;
	struct sm_gen_shape s;
	struct sm_fabric *f = gen_ok(&p, &s);
	for (unsigned pl = 0; pl < 3; pl++) {
		assert_int_equal(sw_links(f, (int)pl), 128 - 6);
	}
	/* planes draw their own faults: compare the missing (leaf, uplink port) sets */
	unsigned differ = 0;
	uint32_t per_plane = f->n_nodes / 3;
	for (uint32_t n = 0; n < per_plane; n++) {
		if (f->nodes[n].type != SM_NODE_SWITCH)
			continue;
		for (unsigned port = 1; port <= 16; port++) {
			int l0 = sm_port(f, n, port)->peer_node != SM_NONE;
			int l1 = sm_port(f, n + per_plane, port)->peer_node != SM_NONE;
			differ += l0 != l1;
		}
	}
	assert_true(differ > 0);
	sm_fabric_free(f);

	/* fault_plane: only plane 1 is degraded */
	p.fault_plane = 1;
	f = gen_ok(&p, &s);
	assert_int_equal(sw_links(f, 0), 128);
	assert_int_equal(sw_links(f, 1), 122);
	assert_int_equal(sw_links(f, 2), 128);
	sm_fabric_free(f);
}

static void test_remove_switches(void **state)
{
	(void)state;
	struct sm_gen_params p = params(8, 0);
	p.remove_switches = 2;
	p.seed = 3;
	struct sm_gen_shape s;
	struct sm_fabric *f = gen_ok(&p, &s);
	struct sm_fabric_counts c;
	fx_expect_counts(f, 0, FX_ANY, 10, FX_ANY, FX_ANY, 16);
	/* leaves never go; LIDs stay those of the full tree (spine LIDs 41..44) */
	unsigned leaves = 0;
	for (uint32_t n = 0; n < f->n_nodes; n++) {
		if (is_prefix(f->nodes[n].desc, "p0-leaf"))
			leaves++;
		if (is_prefix(f->nodes[n].desc, "p0-spine")) {
			unsigned idx = (unsigned)atoi(f->nodes[n].desc + strlen("p0-spine"));
			assert_int_equal(sm_port(f, n, 0)->lid, 32 + 1 + 8 + idx);
			assert_int_equal(f->nodes[n].guid, sm_gen_guid(SM_GEN_GUID_SWITCH, 0, 8 + idx));
		}
	}
	assert_int_equal(leaves, 8);
	sm_fabric_free(f);

	/* every spine but one can go; the last cannot */
	p.remove_switches = 3;
	f = gen_ok(&p, &s);
	sm_fabric_free(f);
	p.remove_switches = 4;
	f = sm_fabric_new();
	assert_int_equal(sm_gen_fat_tree(&p, f, err, sizeof(err)), -ERANGE);
	assert_int_equal(f->n_nodes, 0);
	sm_fabric_free(f);

	/* 3 levels: switches and links together */
	p = params(8, 0);
	p.levels = 3;
	p.remove_switches = 5;
	p.remove_links = 0.03;
	p.seed = 11;
	f = gen_ok(&p, &s);
	sm_fabric_count(f, 0, &c);
	assert_int_equal(c.switches, 80 - 5);
	sm_fabric_free(f);
}

static void test_bad_params(void **state)
{
	(void)state;
	struct sm_gen_params p;
	struct sm_gen_shape s;
#define REFUSE(expr, code)                                                         \
	do {                                                                       \
		p = params(8, 0);                                                  \
		expr;                                                              \
		err[0] = 0;                                                        \
		assert_int_equal(sm_gen_fat_tree_shape(&p, &s, err, sizeof(err)), code); \
		assert_true(err[0] != 0);                                          \
		struct sm_fabric *f_ = sm_fabric_new();                            \
		assert_int_equal(sm_gen_fat_tree(&p, f_, err, sizeof(err)), code); \
		assert_int_equal(f_->n_nodes, 0);                                  \
		sm_fabric_free(f_);                                                \
	} while (0)
	REFUSE(p.radix = 0, -EINVAL);
	REFUSE(p.radix = 1, -EINVAL);
	REFUSE(p.radix = 255, -EINVAL);
	REFUSE(p.radix = 100000, -EINVAL);
	REFUSE(p.levels = 1, -EINVAL);
	REFUSE(p.levels = 4, -EINVAL);
	REFUSE(p.planes = 0, -EINVAL);
	REFUSE(p.planes = SM_MAX_PLANES + 1, -EINVAL);
	REFUSE((p.oversub_down = 0, p.oversub_up = 1), -EINVAL);
	REFUSE((p.oversub_down = 1, p.oversub_up = 0), -EINVAL);
	REFUSE((p.oversub_down = 1, p.oversub_up = 2), -EINVAL);
	REFUSE((p.oversub_down = 9, p.oversub_up = 1), -EINVAL);
	REFUSE(p.hosts = 1000000000, -ERANGE);
	REFUSE((p.hosts = 33, p.levels = 2), -ERANGE);
	REFUSE(p.remove_links = 1.5, -EINVAL);
	REFUSE(p.remove_links = -0.1, -EINVAL);
	REFUSE(p.remove_links = NAN, -EINVAL);
	REFUSE(p.remove_switches = 5, -EINVAL);
	REFUSE(p.remove_switches = 4000000000u, -EINVAL);
	REFUSE((p.planes = 2, p.fault_plane = 2), -EINVAL);
	REFUSE(p.fault_plane = -2, -EINVAL);
	/* radix 254, 3 levels full: 4 million hosts, over the node limit */
	REFUSE((p.radix = 254, p.levels = 3, p.no_lids = 1), -ERANGE);
	/* radix 128, 3 levels full, 4 planes: 2.18 million nodes */
	REFUSE((p.radix = 128, p.levels = 3, p.planes = 4, p.no_lids = 1), -ERANGE);
#undef REFUSE

	/* auto levels: 33 hosts at radix 8 need 3 levels */
	p = params(8, 33);
	check_shape(&p, &s);
	assert_int_equal(s.levels, 3);

	/* a fabric that is not empty is refused */
	p = params(8, 0);
	struct sm_fabric *f = sm_fabric_new();
	assert_true(sm_fabric_add_node(f, SM_NODE_CA, 1, 1, 0, 0) >= 0);
	assert_int_equal(sm_gen_fat_tree(&p, f, err, sizeof(err)), -EINVAL);
	assert_int_equal(sm_gen_fat_tree(NULL, f, err, sizeof(err)), -EINVAL);
	assert_int_equal(sm_gen_fat_tree(&p, NULL, NULL, 0), -EINVAL);
	sm_fabric_free(f);
}

/* Every small radix, both depths, several ratios and sizes: a valid tree or a clean refusal. */
static void test_sweep(void **state)
{
	(void)state;
	static const unsigned ratio[][2] = { { 1, 1 }, { 2, 1 }, { 3, 1 }, { 5, 3 } };
	unsigned built = 0;
	for (unsigned k = 2; k <= 14; k++)
		for (unsigned lv = 2; lv <= 3; lv++)
			for (unsigned r = 0; r < 4; r++)
				for (unsigned sz = 0; sz < 3; sz++) {
					struct sm_gen_params p = params(k, 0);
					struct sm_gen_shape s;
					p.levels = lv;
					p.oversub_down = ratio[r][0];
					p.oversub_up = ratio[r][1];
					p.planes = 2;
					p.seed = k * 100 + lv * 10 + r;
					if (sm_gen_fat_tree_shape(&p, &s, err, sizeof(err))) {
						/* only ratios that do not fit the radix are refused */
						assert_true(ratio[r][0] + ratio[r][1] > k);
						continue;
					}
					p.hosts = sz == 0 ? 1 : sz == 1 ? s.max_hosts / 3 + 1 : 0;
					p.remove_switches = sz == 2 && s.switches > s.leaves + 1;
					p.remove_links = sz == 2 ? 0.05 : 0;
					p.remove_nics = sz == 2 && s.hosts > 1;
					check_shape(&p, &s);
					struct sm_fabric *f = sm_fabric_new();
					int rc = sm_gen_fat_tree(&p, f, err, sizeof(err));
					if (rc) {
						/* a tiny tree may have no redundancy to remove */
						assert_int_equal(rc, -ERANGE);
						assert_int_equal(f->n_nodes, 0);
					} else {
						check_common(f, &p, &s);
						built++;
					}
					sm_fabric_free(f);
				}
	assert_true(built > 100);
}

/* b holds the same nodes, ports, links and LIDs as a (matched by GUID). */
static void check_same_fabric(const struct sm_fabric *a, const struct sm_fabric *b, int ibnd)
{
	assert_int_equal(a->n_nodes, b->n_nodes);
	for (uint32_t n = 0; n < a->n_nodes; n++) {
		const struct sm_node *x = &a->nodes[n];
		uint32_t m = sm_fabric_find_node(b, x->guid);
		assert_int_not_equal(m, SM_NONE);
		const struct sm_node *y = &b->nodes[m];
		assert_int_equal(x->type, y->type);
		assert_int_equal(x->plane, y->plane);
		assert_int_equal(x->nports, y->nports);
		assert_int_equal(x->sysimg_guid, y->sysimg_guid);
		assert_int_equal(x->vendor_id, y->vendor_id);
		assert_int_equal(x->device_id, y->device_id);
		assert_string_equal(x->desc, y->desc);
		for (unsigned p = x->type == SM_NODE_SWITCH ? 0 : 1; p <= x->nports; p++) {
			const struct sm_port *pa = sm_port(a, n, p), *pb = sm_port(b, m, p);
			if (ibnd || x->type == SM_NODE_SWITCH)
				assert_int_equal(pa->guid, pb->guid);  /* ibsim cannot carry CA port GUIDs */
			if (ibnd)
				assert_int_equal(pa->lid, pb->lid);    /* net files carry no LIDs */
			if (pa->peer_node == SM_NONE) {
				assert_int_equal(pb->peer_node, SM_NONE);
				continue;
			}
			assert_int_not_equal(pb->peer_node, SM_NONE);
			assert_int_equal(a->nodes[pa->peer_node].guid, b->nodes[pb->peer_node].guid);
			assert_int_equal(pa->peer_port, pb->peer_port);
			assert_int_equal(pa->width, pb->width);
			assert_int_equal(pa->speed, pb->speed);
		}
	}
}

/* Write plane pl of f (all with pl < 0) in fmt and load it into plane `into` of g. */
static void reload(const struct sm_fabric *f, int pl, enum sm_topo_format fmt,
		   struct sm_fabric *g, unsigned into)
{
	struct sm_topo_err terr;
	FILE *t = tmpfile();
	assert_non_null(t);
	if (fmt == SM_TOPO_IBND)
		assert_int_equal(sm_topo_write_ibnd(f, pl, t), 0);
	else
		assert_int_equal(sm_topo_write_ibsim(f, pl, t), 0);
	rewind(t);
	int rc = sm_topo_load_stream(g, t, "generated", fmt, into, &terr);
	if (rc)
		fprintf(stderr, "%s\n", terr.msg);
	assert_int_equal(rc, 0);
	fclose(t);
}

/* What the writers make of a generated fabric loads back unchanged. */
static void test_roundtrip(void **state)
{
	(void)state;
	struct sm_gen_params p = params(8, 27);
	p.planes = 3;
	p.remove_links = 0.1;
	p.remove_switches = 1;
	p.seed = 77;
	struct sm_gen_shape s;
	struct sm_fabric *f = gen_ok(&p, &s);

	/* ibnetdiscover format, one dump per plane, loaded into that plane */
	struct sm_fabric *g = sm_fabric_new();
	assert_non_null(g);
	for (unsigned pl = 0; pl < p.planes; pl++)
		reload(f, (int)pl, SM_TOPO_IBND, g, pl);
	check_same_fabric(f, g, 1);
	sm_fabric_free(g);

	/* ibsim net format: a 3-level tree */
	p.planes = 1;
	p.levels = 3;
	p.hosts = 0;
	sm_fabric_free(f);
	f = gen_ok(&p, &s);
	g = sm_fabric_new();
	assert_non_null(g);
	reload(f, -1, SM_TOPO_IBSIM, g, 0);
	check_same_fabric(f, g, 0);
	sm_fabric_free(g);
	sm_fabric_free(f);
}

static void test_guids(void **state)
{
	(void)state;
	/* GUID kinds and planes never collide and are never 0 */
	assert_int_not_equal(sm_gen_guid(SM_GEN_GUID_SWITCH, 0, 0), 0);
	assert_int_not_equal(sm_gen_guid(SM_GEN_GUID_SWITCH, 0, 5), sm_gen_guid(SM_GEN_GUID_SWITCH, 1, 5));
	assert_int_not_equal(sm_gen_guid(SM_GEN_GUID_CA, 0, 5), sm_gen_ca_port_guid(0, 5));
	assert_int_equal(sm_gen_guid(SM_GEN_GUID_CA, 2, 7) >> 40, SM_GEN_OUI);
	assert_int_equal(sm_gen_guid(SM_GEN_GUID_SWITCH, 15, 0xffffffffu), 0x0002c91fffffffffULL);
	assert_int_equal(sm_gen_guid(SM_GEN_GUID_CA_PORT, 15, 0xffffffffu), 0x0002c93fffffffffULL);
	assert_int_equal(sm_gen_guid(SM_GEN_GUID_CA, 15, 0x7fffffffu), 0x0002c92ffffffffeULL);
	assert_int_equal(sm_gen_guid(SM_GEN_GUID_CA_PORT, 2, 7), sm_gen_ca_port_guid(2, 7));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shape_canonical),
		cmocka_unit_test(test_two_level_full),
		cmocka_unit_test(test_two_level_canonical),
		cmocka_unit_test(test_partial),
		cmocka_unit_test(test_three_level),
		cmocka_unit_test(test_oversub),
		cmocka_unit_test(test_planes),
		cmocka_unit_test(test_no_lids),
		cmocka_unit_test(test_shuffle_lids),
		cmocka_unit_test(test_remove_nics),
		cmocka_unit_test(test_remove_links),
		cmocka_unit_test(test_remove_links_planes),
		cmocka_unit_test(test_remove_switches),
		cmocka_unit_test(test_bad_params),
		cmocka_unit_test(test_sweep),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_guids),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
