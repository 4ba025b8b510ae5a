/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the GUID-order renumbering of a swept fabric and its sweep
 * tables (sm_sweep_tables_canonicalize, smd/sm/tables.c) when it is done in
 * place: a host gone (its node left out), a host back (a node the sweep
 * appended), both, a switch left out, a node moved to the tail. Every case
 * is compared, node by node, port by port, GUID by GUID and table entry by
 * table entry, with a fabric built from scratch in GUID order (what the
 * renumbering into a new fabric gives): a node or port the in-place moves
 * skip or misplace fails here. sm_guid_map_del apart.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "model/fabric.h"
#include "sm/tables.h"

static uint64_t rng = 0x9E3779B97F4A7C15ULL;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* A byte pattern of a node's (port == 0xFFFF) or a port's table entry, from its GUID alone. */
static void pattern(void *p, size_t n, uint64_t guid, unsigned port)
{
	uint8_t *b = p;
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)((guid * 31 + port * 7 + i * 13) >> 3);
}

static void fill_node(struct sm_sweep_tables *t, uint32_t n, uint64_t guid)
{
	pattern(&t->path[n], sizeof(t->path[n]), guid, 0xFFFF);
	pattern(&t->ni[n], sizeof(t->ni[n]), guid, 0xFFFE);
	pattern(&t->si[n], sizeof(t->si[n]), guid, 0xFFFD);
	t->si_ok[n] = (uint8_t)(guid | 1);
}

static void fill_port(struct sm_sweep_tables *t, uint32_t i, uint64_t guid, unsigned p)
{
	pattern(&t->pi[i], sizeof(t->pi[i]), guid, p);
	t->pi_ok[i] = (uint8_t)((guid >> 4) + p) | 1;
}

static int64_t add(struct sm_fabric *f, struct sm_sweep_tables *t, enum sm_node_type type, uint64_t guid,
		   unsigned nports)
{
	int64_t n = sm_fabric_add_node(f, type, guid, nports, 0, 0);
	assert_true(n >= 0);
	struct sm_node *nd = &f->nodes[n];
	nd->vendor_id = (uint32_t)(guid & 0xFFFFFF);
	nd->revision = (uint32_t)(guid >> 3);
	snprintf(nd->desc, sizeof(nd->desc), "node %llx", (unsigned long long)guid);
	for (unsigned p = 0; p <= nports; p++) {
		struct sm_port *pt = &f->ports[nd->port0 + p];
		pt->state = (uint8_t)(1 + (guid + p) % 4);
		pt->phys_state = 5;
		pt->width = (uint8_t)(1 + p % 3);
		pt->speed = (uint8_t)(guid % 7);
		if (type != SM_NODE_SWITCH && p)
			assert_int_equal(sm_fabric_set_port_guid(f, (uint32_t)n, p, guid + 0x100000 * p), 0);
	}
	assert_int_equal(sm_sweep_tables_fit(t, f), 0);
	fill_node(t, (uint32_t)n, guid);
	for (unsigned p = 0; p <= nports; p++)
		fill_port(t, nd->port0 + p, guid, p);
	return n;
}

/* First free port (>= 1) of switch n, or 0. */
static unsigned free_port(const struct sm_fabric *f, uint32_t n)
{
	for (unsigned p = 1; p <= f->nodes[n].nports; p++)
		if (f->ports[f->nodes[n].port0 + p].peer_node == SM_NONE)
			return p;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/*
 * A tree in GUID order: nsw switches (16 ports) in a line of links, ncas
 * CAs (1 or 2 ports) hung on them, some LIDs set; its tables filled.
 */
static struct sm_fabric *make(struct sm_sweep_tables *t, unsigned nsw, unsigned ncas)
{
	struct sm_fabric *f = sm_fabric_new();
	uint64_t *g = calloc(nsw + ncas, sizeof(*g));
	assert_non_null(f);
	assert_non_null(g);
	for (unsigned i = 0; i < nsw + ncas; i++)
		g[i] = (next_rand() >> 24 << 4) | 1;
	qsort(g, nsw + ncas, sizeof(*g), cmp_u64);
	/* which GUIDs are switches: every (nsw + ncas) / nsw-th */
	unsigned step = (nsw + ncas) / nsw, sws = 0;
	uint32_t *sw = calloc(nsw, sizeof(*sw));
	assert_non_null(sw);
	for (unsigned i = 0; i < nsw + ncas; i++) {
		int is_sw = sws < nsw && i % step == 0;
		int64_t n = add(f, t, is_sw ? SM_NODE_SWITCH : SM_NODE_CA, g[i], is_sw ? 16 : 1 + (unsigned)(g[i] >> 5) % 2);
		if (is_sw)
			sw[sws++] = (uint32_t)n;
	}
	for (unsigned s = 1; s < sws; s++)
		assert_int_equal(sm_fabric_link(f, sw[s - 1], 16, sw[s], 15), 0);
	unsigned k = 0;
	for (uint32_t n = 0; n < f->n_nodes; n++) {
		if (f->nodes[n].type == SM_NODE_SWITCH)
			continue;
		uint32_t s = sw[k++ % sws];
		unsigned p = free_port(f, s);
		assert_true(p > 0);
		assert_int_equal(sm_fabric_link(f, n, 1, s, p), 0);
		assert_int_equal(sm_fabric_set_lid(f, n, 1, (uint16_t)(n + 1), 0), 0);
	}
	t->sm_node = f->n_nodes - 1;
	free(g);
	free(sw);
	return f;
}

/* What the renumbering into a new fabric gives: the kept nodes of f added in GUID order, their links. */
static struct sm_fabric *expected(const struct sm_fabric *f, const uint8_t *keep)
{
	struct sm_fabric *g = sm_fabric_new();
	uint64_t *guids = calloc(f->n_nodes + 1, sizeof(*guids));
	uint32_t nk = 0;
	assert_non_null(g);
	assert_non_null(guids);
	for (uint32_t n = 0; n < f->n_nodes; n++)
		if (!keep || keep[n])
			guids[nk++] = f->nodes[n].guid;
	qsort(guids, nk, sizeof(*guids), cmp_u64);
	for (uint32_t i = 0; i < nk; i++) {
		const struct sm_node *nd = &f->nodes[sm_fabric_find_node(f, guids[i])];
		int64_t m = sm_fabric_add_node(g, (enum sm_node_type)nd->type, nd->guid, nd->nports, nd->plane,
					       nd->type == SM_NODE_SWITCH ? f->ports[nd->port0].guid : 0);
		assert_int_equal(m, i);
		uint32_t port0 = g->nodes[m].port0;
		g->nodes[m] = *nd;
		g->nodes[m].port0 = port0;
		for (unsigned p = 0; p <= nd->nports; p++) {
			const struct sm_port *op = &f->ports[nd->port0 + p];
			struct sm_port *np = &g->ports[port0 + p];
			if (nd->type != SM_NODE_SWITCH && p && op->guid)
				assert_int_equal(sm_fabric_set_port_guid(g, (uint32_t)m, p, op->guid), 0);
			np->state = op->state;
			np->phys_state = op->phys_state;
			np->width = op->width;
			np->speed = op->speed;
			np->flags = op->flags;
		}
	}
	for (uint32_t n = 0; n < f->n_nodes; n++) {
		if (keep && !keep[n])
			continue;
		for (unsigned p = 1; p <= f->nodes[n].nports; p++) {
			const struct sm_port *op = &f->ports[f->nodes[n].port0 + p];
			if (op->peer_node == SM_NONE || (keep && !keep[op->peer_node]))
				continue;
			assert_int_equal(sm_fabric_link(g, sm_fabric_find_node(g, f->nodes[n].guid), p,
							 sm_fabric_find_node(g, f->nodes[op->peer_node].guid), op->peer_port),
					 0);
		}
	}
	free(guids);
	return g;
}

static void same_fabric(const struct sm_fabric *a, const struct sm_fabric *b)
{
	assert_int_equal(a->n_nodes, b->n_nodes);
	assert_int_equal(a->n_ports, b->n_ports);
	assert_int_equal(a->n_planes, b->n_planes);
	assert_int_equal(a->node_by_guid.count, b->node_by_guid.count);
	assert_int_equal(a->port_by_guid.count, b->port_by_guid.count);
	for (uint32_t n = 0; n < a->n_nodes; n++) {
		const struct sm_node *x = &a->nodes[n], *y = &b->nodes[n];
		assert_true(x->guid == y->guid);
		assert_true(x->sysimg_guid == y->sysimg_guid);
		assert_int_equal(x->port0, y->port0);
		assert_int_equal(x->vendor_id, y->vendor_id);
		assert_int_equal(x->revision, y->revision);
		assert_int_equal(x->type, y->type);
		assert_int_equal(x->nports, y->nports);
		assert_int_equal(x->plane, y->plane);
		assert_string_equal(x->desc, y->desc);
		assert_int_equal(sm_fabric_find_node(a, x->guid), n);
	}
	for (uint32_t i = 0; i < a->n_ports; i++) {
		const struct sm_port *x = &a->ports[i], *y = &b->ports[i];
		assert_true(x->guid == y->guid);
		assert_int_equal(x->node, y->node);
		assert_int_equal(x->peer_node, y->peer_node);
		assert_int_equal(x->peer_port, y->peer_port);
		assert_int_equal(x->lid, y->lid);
		assert_int_equal(x->lmc, y->lmc);
		assert_int_equal(x->num, y->num);
		assert_int_equal(x->state, y->state);
		assert_int_equal(x->phys_state, y->phys_state);
		assert_int_equal(x->width, y->width);
		assert_int_equal(x->speed, y->speed);
		assert_int_equal(x->flags, y->flags);
		if (x->guid && (x->num == 0 || a->nodes[x->node].type != SM_NODE_SWITCH))
			assert_int_equal(sm_fabric_find_port(a, x->guid), sm_fabric_find_port(b, y->guid));
	}
	for (unsigned pl = 0; pl < SM_MAX_PLANES; pl++)
		assert_null(a->planes[pl].lid_map);
}

/* Every table entry of a's nodes and ports is the one filled for its GUID. */
static void same_tables(const struct sm_fabric *a, const struct sm_sweep_tables *t, uint64_t sm_guid)
{
	struct sm_sweep_tables w;
	sm_sweep_tables_init(&w);
	assert_int_equal(sm_sweep_tables_fit(&w, a), 0);
	for (uint32_t n = 0; n < a->n_nodes; n++) {
		const struct sm_node *nd = &a->nodes[n];
		fill_node(&w, n, nd->guid);
		assert_memory_equal(&t->path[n], &w.path[n], sizeof(w.path[n]));
		assert_memory_equal(&t->ni[n], &w.ni[n], sizeof(w.ni[n]));
		assert_memory_equal(&t->si[n], &w.si[n], sizeof(w.si[n]));
		assert_int_equal(t->si_ok[n], w.si_ok[n]);
		for (unsigned p = 0; p <= nd->nports; p++) {
			fill_port(&w, nd->port0 + p, nd->guid, p);
			assert_memory_equal(&t->pi[nd->port0 + p], &w.pi[nd->port0 + p], sizeof(w.pi[0]));
			assert_int_equal(t->pi_ok[nd->port0 + p], w.pi_ok[nd->port0 + p]);
		}
	}
	assert_true(t->cap_nodes > a->n_nodes && t->cap_ports > a->n_ports);
	assert_int_equal(t->si_ok[a->n_nodes], 0);
	assert_int_equal(t->pi_ok[a->n_ports], 0);
	assert_int_equal(t->sm_node, sm_fabric_find_node(a, sm_guid));
	sm_sweep_tables_free(&w);
}

/*
 * Renumber f with keep (NULL: all) and check it against the expected fabric;
 * in_place: the fabric must be the same object (the in-place path taken).
 */
static void check(struct sm_fabric **f, struct sm_sweep_tables *t, const uint8_t *keep, int in_place)
{
	struct sm_fabric *want = expected(*f, keep), *before = *f;
	uint64_t sm_guid = (*f)->nodes[t->sm_node].guid;
	assert_int_equal(sm_sweep_tables_canonicalize(f, 0, t, keep), 0);
	if (in_place)
		assert_ptr_equal(*f, before);
	same_fabric(*f, want);
	same_tables(*f, t, sm_guid);
	sm_fabric_free(want);
}

/* A CA the sweep did not find again (a host gone), at the front, in the middle, at the end. */
static void test_host_gone(void **state)
{
	(void)state;
	for (unsigned pos = 0; pos < 3; pos++) {
		struct sm_sweep_tables t;
		sm_sweep_tables_init(&t);
		struct sm_fabric *f = make(&t, 6, 60);
		uint8_t *keep = malloc(f->n_nodes);
		memset(keep, 1, f->n_nodes);
		uint32_t n = pos == 0 ? 0 : pos == 1 ? f->n_nodes / 2 : f->n_nodes - 2;
		while (f->nodes[n].type == SM_NODE_SWITCH)
			n++;
		keep[n] = 0;
		check(&f, &t, keep, 1);
		free(keep);
		sm_fabric_free(f);
		sm_sweep_tables_free(&t);
	}
}

/* New CAs appended by the sweep (a host back), their GUIDs anywhere in the order; also with one gone. */
static void test_host_back(void **state)
{
	(void)state;
	for (unsigned round = 0; round < 6; round++) {
		struct sm_sweep_tables t;
		sm_sweep_tables_init(&t);
		struct sm_fabric *f = make(&t, 5, 40);
		uint32_t old = f->n_nodes, nsw = 0;
		for (unsigned k = 0; k <= round % 3; k++) {
			uint64_t guid = round == 0 ? 2 : (next_rand() >> 24 << 4) | 9;   /* round 0: before every node */
			int64_t n = add(f, &t, SM_NODE_CA, guid, 2);
			while (f->nodes[nsw].type != SM_NODE_SWITCH || !free_port(f, nsw))
				nsw++;
			assert_int_equal(sm_fabric_link(f, (uint32_t)n, 2, nsw, free_port(f, nsw)), 0);
		}
		uint8_t *keep = NULL;
		if (round >= 3) {
			keep = malloc(f->n_nodes);
			memset(keep, 1, f->n_nodes);
			keep[old - 1 - round] = 0;   /* and one gone (a CA or a switch, its CAs unlinked) */
		}
		check(&f, &t, keep, 1);
		free(keep);
		sm_fabric_free(f);
		sm_sweep_tables_free(&t);
	}
}

/* A switch left out (with what hangs from it), a node out of order in the middle, nothing changed. */
static void test_other_orders(void **state)
{
	(void)state;
	struct sm_sweep_tables t;
	sm_sweep_tables_init(&t);
	struct sm_fabric *f = make(&t, 6, 50);
	uint8_t *keep = malloc(f->n_nodes);
	memset(keep, 1, f->n_nodes);
	uint32_t sw = f->n_nodes / 3;
	while (f->nodes[sw].type != SM_NODE_SWITCH)
		sw++;
	keep[sw] = 0;
	for (unsigned p = 1; p <= f->nodes[sw].nports; p++) {
		uint32_t pn = f->ports[f->nodes[sw].port0 + p].peer_node;
		if (pn != SM_NONE && f->nodes[pn].type == SM_NODE_CA)
			keep[pn] = 0;
	}
	check(&f, &t, keep, 1);
	check(&f, &t, NULL, 1);   /* in order already */
	/* a GUID lower than its neighbour's in the middle: the rest goes through scratch */
	f->nodes[f->n_nodes / 2].guid = 3;
	sm_guid_map_free(&f->node_by_guid);
	for (uint32_t n = 0; n < f->n_nodes; n++)
		assert_int_equal(sm_guid_map_put(&f->node_by_guid, f->nodes[n].guid, n), 0);
	for (uint32_t n = 0; n < f->n_nodes; n++)
		fill_node(&t, n, f->nodes[n].guid);
	for (uint32_t n = 0; n < f->n_nodes; n++)
		for (unsigned p = 0; p <= f->nodes[n].nports; p++)
			fill_port(&t, f->nodes[n].port0 + p, f->nodes[n].guid, p);
	check(&f, &t, NULL, 1);
	free(keep);
	sm_fabric_free(f);
	sm_sweep_tables_free(&t);
}

static void test_guid_map_del(void **state)
{
	(void)state;
	struct sm_guid_map m = { 0 };
	enum { N = 3000 };
	for (uint32_t i = 0; i < N; i++)
		assert_int_equal(sm_guid_map_put(&m, 1 + (uint64_t)i * 64, i), 0);   /* crowded */
	for (uint32_t i = 0; i < N; i += 3)
		sm_guid_map_del(&m, 1 + (uint64_t)i * 64);
	sm_guid_map_del(&m, 7);   /* absent */
	assert_int_equal(m.count, N - N / 3);
	for (uint32_t i = 0; i < N; i++)
		assert_int_equal(sm_guid_map_get(&m, 1 + (uint64_t)i * 64), i % 3 ? i : SM_NONE);
	sm_guid_map_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_host_gone),
		cmocka_unit_test(test_host_back),
		cmocka_unit_test(test_other_orders),
		cmocka_unit_test(test_guid_map_del),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
