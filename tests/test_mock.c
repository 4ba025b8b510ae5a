/* SPDX-License-Identifier: MIT */
/*
 * Mock fabric tests: DR walk to every node through the transaction engine,
 * PortInfo state machine, LID/LMC/SM LID storage, SwitchInfo and LFT Get/Set,
 * LID-routed SMPs over programmed LFTs, fault injection shares, traps.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mad/codec.h"
#include "mock/mock.h"
#include "fixture/mock_fabric.h"
#include "mad/txn.h"

struct one {
	int done;
	int status;
	uint16_t mad_status;
	struct sm_smp resp;
};

static void one_cb(struct sm_txn *e, const struct sm_txn_result *r, void *ctx)
{
	struct one *o = ctx;

	(void)e;
	o->done++;
	o->status = r->status;
	o->mad_status = r->mad_status;
	if (r->resp)
		o->resp = *r->resp;
}

/* Run one request to completion; returns the txn status (0 = answered). */
static int sync_req(struct sm_txn *e, const struct sm_smp *req, uint16_t dlid, struct one *o)
{
	memset(o, 0, sizeof(*o));
	assert_int_equal(sm_txn_submit(e, req, dlid, one_cb, o), 0);
	assert_int_equal(sm_txn_run(e), 0);
	assert_int_equal(o->done, 1);
	return o->status;
}

/* The same without retries: one try, the txn status (-ETIMEDOUT when nothing came back). */
static int once_req(struct sm_txn *e, const struct sm_smp *req, uint16_t dlid, struct one *o)
{
	struct sm_txn_req_opts opts = { .retries = SM_TXN_NO_RETRY };
	memset(o, 0, sizeof(*o));
	assert_int_equal(sm_txn_submit_opts(e, req, dlid, &opts, one_cb, o), 0);
	assert_int_equal(sm_txn_run(e), 0);
	return o->status;
}

struct env {
	struct sm_fabric *f;
	struct sm_mock *m;
	struct sm_transport *t;
	struct sm_txn *e;
};

static void env_open(struct env *v, const struct sm_mock_cfg *cfg)
{
	char err[256];
	struct sm_txn_cfg tc;

	v->f = two_switch();
	assert_non_null(v->f);
	assert_int_equal(sm_mock_new(v->f, cfg, &v->m, err, sizeof(err)), 0);
	assert_int_equal(sm_mock_default_port(v->m, 0), sm_port_index(v->f, TF_H1, 1));
	assert_int_equal(sm_mock_attach(v->m, sm_port_index(v->f, TF_H1, 1), &v->t), 0);
	sm_txn_cfg_default(&tc);
	v->e = sm_txn_new(v->t, &tc);
	assert_non_null(v->e);
}

static void env_close(struct env *v)
{
	sm_txn_free(v->e);
	sm_transport_close(v->t);
	sm_mock_free(v->m);
	sm_fabric_free(v->f);
}

/* cmocka set-up and tear-down: env_open() with the default mock configuration */
static int env_setup(void **state)
{
	struct env *v = malloc(sizeof(*v));
	assert_non_null(v);
	env_open(v, NULL);
	*state = v;
	return 0;
}

static int env_teardown(void **state)
{
	env_close(*state);
	free(*state);
	return 0;
}

#define ENV_TEST(t) cmocka_unit_test_setup_teardown(t, env_setup, env_teardown)

/* ---- BFS discovery through txn + mock ---- */

struct bfs {
	struct sm_txn *e;
	uint64_t guids[16];
	struct sm_dr_path paths[16];
	uint8_t types[16], nports[16], inport[16];
	unsigned n;
	unsigned errors;
};

struct probe {
	struct bfs *b;
	struct sm_dr_path path;
	unsigned from;     /* node index in bfs (port info probe) */
};

static struct probe probes[256];
static unsigned n_probes;

static void ni_cb(struct sm_txn *e, const struct sm_txn_result *r, void *ctx);

static void pi_cb(struct sm_txn *e, const struct sm_txn_result *r, void *ctx)
{
	struct probe *pr = ctx;
	struct sm_port_info pi;
	struct sm_smp req;
	struct probe *np;

	if (r->status || r->mad_status || sm_port_info_decode(r->resp->data, &pi, NULL)) {
		pr->b->errors++;
		return;
	}
	/* follow up ports that are physically up, but not the one we came in by */
	if (pi.phys_state != 5 || (pr->from && r->req->attr_mod == pr->b->inport[pr->from]))
		return;
	np = &probes[n_probes++];
	np->b = pr->b;
	np->path = pr->path;
	assert_int_equal(sm_dr_path_push(&np->path, (uint8_t)r->req->attr_mod), 0);
	sm_smp_init_dr(&req, SM_METHOD_GET, SM_ATTR_NODE_INFO, 0, &np->path);
	assert_int_equal(sm_txn_submit(e, &req, 0, ni_cb, np), 0);
}

static void ni_cb(struct sm_txn *e, const struct sm_txn_result *r, void *ctx)
{
	struct probe *pr = ctx;
	struct bfs *b = pr->b;
	struct sm_node_info ni;
	unsigned idx;

	if (r->status || r->mad_status || sm_node_info_decode(r->resp->data, &ni, NULL)) {
		b->errors++;
		return;
	}
	for (unsigned i = 0; i < b->n; i++)
		if (b->guids[i] == ni.node_guid)
			return;   /* seen (parallel link or back edge) */
	idx = b->n++;
	b->guids[idx] = ni.node_guid;
	b->paths[idx] = pr->path;
	b->types[idx] = ni.node_type;
	b->nports[idx] = ni.num_ports;
	b->inport[idx] = ni.local_port_num;
	if (ni.node_type != SM_NODE_SWITCH && idx != 0)
		return;
	for (unsigned p = 1; p <= ni.num_ports; p++) {
		struct sm_smp req;
		struct probe *np = &probes[n_probes++];
		np->b = b;
		np->path = pr->path;
		np->from = idx;
		sm_smp_init_dr(&req, SM_METHOD_GET, SM_ATTR_PORT_INFO, p, &pr->path);
		assert_int_equal(sm_txn_submit(e, &req, 0, pi_cb, np), 0);
	}
}

static void test_dr_walk_all(void **state)
{
	struct env *v = *state;
	struct bfs b;
	struct sm_smp req;
	const struct sm_txn_stats *st;

	memset(&b, 0, sizeof(b));
	b.e = v->e;
	n_probes = 0;
	probes[n_probes].b = &b;
	memset(&probes[n_probes].path, 0, sizeof(probes[0].path));
	sm_smp_init_dr(&req, SM_METHOD_GET, SM_ATTR_NODE_INFO, 0, &probes[n_probes].path);
	assert_int_equal(sm_txn_submit(v->e, &req, 0, ni_cb, &probes[n_probes]), 0);
	n_probes++;
	assert_int_equal(sm_txn_run(v->e), 0);
	assert_int_equal(b.errors, 0);
	assert_int_equal(b.n, TF_NODES);
	/* every node of the model was reached, with the right type and port count */
	for (unsigned n = 0; n < TF_NODES; n++) {
		unsigned i;
		for (i = 0; i < b.n; i++)
			if (b.guids[i] == v->f->nodes[n].guid)
				break;
		assert_true(i < b.n);
		assert_int_equal(b.types[i], v->f->nodes[n].type);
		assert_int_equal(b.nports[i], v->f->nodes[n].nports);
	}
	/* SM node first at hop 0; S1 next at path 0,1 entered by port 3 */
	assert_int_equal(b.guids[0], 0x3000);
	assert_int_equal(b.paths[0].cnt, 0);
	assert_int_equal(b.guids[1], 0x1000);
	assert_int_equal(b.inport[1], 3);
	{
		/* H3 is 3 hops away: 0,1,1|2,3 */
		unsigned i;
		for (i = 0; i < b.n && b.guids[i] != 0x3020; i++)
			;
		assert_int_equal(b.paths[i].cnt, 3);
		assert_int_equal(b.paths[i].hops[1], 1);
		assert_int_equal(b.paths[i].hops[3], 3);
	}
	st = sm_txn_stats(v->e);
	assert_int_equal(st->timed_out, 0);
	assert_int_equal(st->malformed, 0);
	assert_true(st->max_per_dest <= 4);
}

static void test_dr_bad_path_dropped(void **state)
{
	struct env *v = *state;
	struct sm_smp req;
	struct sm_dr_path p;
	struct one o;
	struct sm_mock_stats ms;

	/* out of S1 port 5: unconnected */
	memset(&p, 0, sizeof(p));
	sm_dr_path_push(&p, 1);
	sm_dr_path_push(&p, 5);
	sm_smp_init_dr(&req, SM_METHOD_GET, SM_ATTR_NODE_INFO, 0, &p);
	assert_int_equal(once_req(v->e, &req, 0, &o), -ETIMEDOUT);
	/* first hop must be the SM's own port */
	memset(&p, 0, sizeof(p));
	sm_dr_path_push(&p, 2);
	sm_smp_init_dr(&req, SM_METHOD_GET, SM_ATTR_NODE_INFO, 0, &p);
	assert_int_equal(once_req(v->e, &req, 0, &o), -ETIMEDOUT);
	/* a CA does not forward: 0,1,3,1 goes S1 -> H1 -> beyond */
	memset(&p, 0, sizeof(p));
	sm_dr_path_push(&p, 1);
	sm_dr_path_push(&p, 3);
	sm_dr_path_push(&p, 1);
	sm_smp_init_dr(&req, SM_METHOD_GET, SM_ATTR_NODE_INFO, 0, &p);
	assert_int_equal(once_req(v->e, &req, 0, &o), -ETIMEDOUT);
	sm_mock_stats(v->m, &ms);
	assert_int_equal(ms.dr_dropped, 3);
}

static int set_port(struct sm_txn *e, const struct sm_dr_path *p, unsigned port,
		    const struct sm_port_info_set *s, struct one *o)
{
	struct sm_smp req;
	struct sm_port_info cur, pi;

	sm_smp_init_dr(&req, SM_METHOD_GET, SM_ATTR_PORT_INFO, port, p);
	if (sync_req(e, &req, 0, o) || o->mad_status)
		return -EIO;
	assert_int_equal(sm_port_info_decode(o->resp.data, &cur, NULL), 0);
	sm_port_info_prepare_set(&pi, &cur, s);
	sm_smp_init_dr(&req, SM_METHOD_SET, SM_ATTR_PORT_INFO, port, p);
	sm_port_info_encode(&pi, req.data);
	return sync_req(e, &req, 0, o);
}

static void test_port_state_machine(void **state)
{
	struct env *v = *state;
	struct sm_dr_path p;
	struct sm_port_info_set s = { .lid = 7, .lmc = 2, .sm_lid = 1, .gid_prefix = 0xfe80000000000000ULL };
	struct sm_mock_port_state ps;
	struct sm_port_info pi;
	struct one o;
	uint32_t h2;

	memset(&p, 0, sizeof(p));
	sm_dr_path_push(&p, 1);
	sm_dr_path_push(&p, 4);   /* H2 */
	h2 = sm_port_index(v->f, TF_H2, 1);
	assert_int_equal(sm_mock_port_state(v->m, h2, &ps), 0);
	assert_int_equal(ps.state, SM_PORT_INIT);
	assert_int_equal(ps.phys_state, 5);
	assert_int_equal(ps.lid, 0);

	/* ACTIVE straight from INIT is refused, nothing changes */
	s.port_state = SM_PORT_ACTIVE;
	assert_int_equal(set_port(v->e, &p, 0, &s, &o), 0);
	assert_int_equal(o.mad_status, SM_MAD_STATUS_INVALID_FIELD);
	assert_int_equal(sm_mock_port_state(v->m, h2, &ps), 0);
	assert_int_equal(ps.state, SM_PORT_INIT);
	assert_int_equal(ps.lid, 0);

	/* no state change, LID/LMC/SM LID stored */
	s.port_state = 0;
	assert_int_equal(set_port(v->e, &p, 0, &s, &o), 0);
	assert_int_equal(o.mad_status, 0);
	assert_int_equal(sm_port_info_decode(o.resp.data, &pi, NULL), 0);
	assert_int_equal(pi.lid, 7);
	assert_int_equal(pi.lmc, 2);
	assert_int_equal(pi.master_sm_lid, 1);
	assert_int_equal(pi.port_state, SM_PORT_INIT);
	assert_int_equal(pi.local_port_num, 1);

	s.port_state = SM_PORT_ARMED;
	assert_int_equal(set_port(v->e, &p, 0, &s, &o), 0);
	assert_int_equal(o.mad_status, 0);
	assert_int_equal(sm_mock_port_state(v->m, h2, &ps), 0);
	assert_int_equal(ps.state, SM_PORT_ARMED);
	s.port_state = SM_PORT_ACTIVE;
	assert_int_equal(set_port(v->e, &p, 0, &s, &o), 0);
	assert_int_equal(o.mad_status, 0);
	assert_int_equal(sm_mock_port_state(v->m, h2, &ps), 0);
	assert_int_equal(ps.state, SM_PORT_ACTIVE);
	assert_int_equal(ps.lid, 7);
	assert_int_equal(ps.lmc, 2);
	assert_int_equal(ps.sm_lid, 1);
	assert_int_equal(ps.gid_prefix, 0xfe80000000000000ULL);
	/* ARMED from ACTIVE is refused */
	s.port_state = SM_PORT_ARMED;
	assert_int_equal(set_port(v->e, &p, 0, &s, &o), 0);
	assert_int_equal(o.mad_status, SM_MAD_STATUS_INVALID_FIELD);
	/* INIT can never be set */
	s.port_state = SM_PORT_INIT;
	assert_int_equal(set_port(v->e, &p, 0, &s, &o), 0);
	assert_int_equal(o.mad_status, SM_MAD_STATUS_INVALID_FIELD);
	/* DOWN retrains a connected link: back to INIT */
	s.port_state = SM_PORT_DOWN;
	assert_int_equal(set_port(v->e, &p, 0, &s, &o), 0);
	assert_int_equal(o.mad_status, 0);
	assert_int_equal(sm_mock_port_state(v->m, h2, &ps), 0);
	assert_int_equal(ps.state, SM_PORT_INIT);

	/* switch external port: state only, the LID lives on port 0 */
	memset(&p, 0, sizeof(p));
	sm_dr_path_push(&p, 1);
	s.port_state = SM_PORT_ARMED;
	s.lid = 99;
	assert_int_equal(set_port(v->e, &p, 4, &s, &o), 0);
	assert_int_equal(o.mad_status, 0);
	assert_int_equal(sm_mock_port_state(v->m, sm_port_index(v->f, TF_S1, 4), &ps), 0);
	assert_int_equal(ps.state, SM_PORT_ARMED);
	assert_int_equal(ps.lid, 0);
	s.port_state = 0;
	assert_int_equal(set_port(v->e, &p, 0, &s, &o), 0);
	assert_int_equal(sm_mock_port_state(v->m, sm_port_index(v->f, TF_S1, 0), &ps), 0);
	assert_int_equal(ps.lid, 99);
	/* PortInfo of a switch port beyond NumPorts */
	{
		struct sm_smp req;
		sm_smp_init_dr(&req, SM_METHOD_GET, SM_ATTR_PORT_INFO, 9, &p);
		assert_int_equal(sync_req(v->e, &req, 0, &o), 0);
		assert_int_equal(o.mad_status, SM_MAD_STATUS_INVALID_FIELD);
	}
	/* unconnected port 2 of H4 is DOWN / Polling */
	assert_int_equal(sm_mock_port_state(v->m, sm_port_index(v->f, TF_H4, 2), &ps), 0);
	assert_int_equal(ps.state, SM_PORT_DOWN);
	assert_int_equal(ps.phys_state, 2);
}

static void test_lft_and_switch_info(void **state)
{
	struct env *v = *state;
	struct sm_dr_path p;
	struct sm_smp req;
	struct sm_lft_block blk, got;
	struct sm_switch_info si;
	struct one o;

	memset(&p, 0, sizeof(p));
	sm_dr_path_push(&p, 1);
	sm_dr_path_push(&p, 1);   /* S2 via the first parallel link */

	sm_smp_init_dr(&req, SM_METHOD_GET, SM_ATTR_SWITCH_INFO, 0, &p);
	assert_int_equal(sync_req(v->e, &req, 0, &o), 0);
	assert_int_equal(o.mad_status, 0);
	assert_int_equal(sm_switch_info_decode(o.resp.data, &si, NULL), 0);
	assert_int_equal(si.lft_cap, 0xC000);
	assert_int_equal(si.lft_top, 0);

	si.lft_top = 130;
	sm_smp_init_dr(&req, SM_METHOD_SET, SM_ATTR_SWITCH_INFO, 0, &p);
	sm_switch_info_encode(&si, req.data);
	assert_int_equal(sync_req(v->e, &req, 0, &o), 0);
	assert_int_equal(sm_mock_lft_top(v->m, TF_S2), 130);

	for (unsigned i = 0; i < SM_LFT_BLOCK; i++)
		blk.port[i] = (uint8_t)(i % 9);
	sm_smp_init_dr(&req, SM_METHOD_SET, SM_ATTR_LFT, 2, &p);
	sm_lft_block_encode(&blk, req.data);
	assert_int_equal(sync_req(v->e, &req, 0, &o), 0);
	assert_int_equal(o.mad_status, 0);
	assert_int_equal(sm_mock_lft_get(v->m, TF_S2, 128), 0);
	assert_int_equal(sm_mock_lft_get(v->m, TF_S2, 130), 2);
	assert_int_equal(sm_mock_lft_get(v->m, TF_S2, 191), 63 % 9);
	assert_int_equal(sm_mock_lft_get(v->m, TF_S2, 5), SM_LFT_NO_PORT);   /* block 0 never set */
	assert_int_equal(sm_mock_lft_get(v->m, TF_S1, 130), SM_LFT_NO_PORT); /* other switch */
	assert_int_equal(sm_mock_lft_blocks_set(v->m, TF_S2), 1);

	sm_smp_init_dr(&req, SM_METHOD_GET, SM_ATTR_LFT, 2, &p);
	assert_int_equal(sync_req(v->e, &req, 0, &o), 0);
	assert_int_equal(sm_lft_block_decode(o.resp.data, &got, NULL), 0);
	assert_memory_equal(got.port, blk.port, SM_LFT_BLOCK);
	sm_smp_init_dr(&req, SM_METHOD_GET, SM_ATTR_LFT, 0, &p);
	assert_int_equal(sync_req(v->e, &req, 0, &o), 0);
	assert_int_equal(o.resp.data[0], SM_LFT_NO_PORT);
	/* block beyond LinearFDBCap, LFT on a CA, SMInfo: error statuses */
	sm_smp_init_dr(&req, SM_METHOD_GET, SM_ATTR_LFT, SM_LFT_MAX_BLOCKS, &p);
	assert_int_equal(sync_req(v->e, &req, 0, &o), 0);
	assert_int_equal(o.mad_status, SM_MAD_STATUS_INVALID_FIELD);
	memset(&p, 0, sizeof(p));
	sm_smp_init_dr(&req, SM_METHOD_GET, SM_ATTR_LFT, 0, &p);
	assert_int_equal(sync_req(v->e, &req, 0, &o), 0);
	assert_int_equal(o.mad_status, SM_MAD_STATUS_ATTR_UNSUPP);
	sm_smp_init_dr(&req, SM_METHOD_GET, SM_ATTR_SM_INFO, 0, &p);
	assert_int_equal(sync_req(v->e, &req, 0, &o), 0);
	assert_int_equal(o.mad_status, SM_MAD_STATUS_ATTR_UNSUPP);
	/* NodeDescription */
	sm_dr_path_push(&p, 1);
	sm_smp_init_dr(&req, SM_METHOD_GET, SM_ATTR_NODE_DESC, 0, &p);
	assert_int_equal(sync_req(v->e, &req, 0, &o), 0);
	assert_string_equal((const char *)o.resp.data, "S1 switch");
}

/* Give every port a LID over DR and program both switches' LFTs. */
static void program_lids(struct env *v)
{
	struct sm_port_info_set s = { .sm_lid = 3, .gid_prefix = 0xfe80000000000000ULL };
	struct sm_dr_path s1, s2, p;
	struct one o;
	/* LIDs: S1=1 S2=2 H1=3 H2=4 H3=5 H4=6 */
	static const uint8_t s1_lft[7] = { 255, 0, 1, 3, 4, 1, 2 };
	static const uint8_t s2_lft[7] = { 255, 1, 0, 2, 1, 3, 4 };

	memset(&s1, 0, sizeof(s1));
	sm_dr_path_push(&s1, 1);
	s2 = s1;
	sm_dr_path_push(&s2, 1);
	s.lid = 1;
	assert_int_equal(set_port(v->e, &s1, 0, &s, &o), 0);
	s.lid = 2;
	assert_int_equal(set_port(v->e, &s2, 0, &s, &o), 0);
	memset(&p, 0, sizeof(p));
	s.lid = 3;
	assert_int_equal(set_port(v->e, &p, 0, &s, &o), 0);
	p = s1;
	sm_dr_path_push(&p, 4);
	s.lid = 4;
	assert_int_equal(set_port(v->e, &p, 0, &s, &o), 0);
	p = s2;
	sm_dr_path_push(&p, 3);
	s.lid = 5;
	assert_int_equal(set_port(v->e, &p, 0, &s, &o), 0);
	p = s2;
	sm_dr_path_push(&p, 4);
	s.lid = 6;
	assert_int_equal(set_port(v->e, &p, 0, &s, &o), 0);
	assert_int_equal(v->t->info.lid, 3);
	{
		struct sm_smp req;
		struct sm_lft_block b;

		memset(&b, 0xFF, sizeof(b));
		memcpy(b.port, s1_lft, sizeof(s1_lft));
		sm_smp_init_dr(&req, SM_METHOD_SET, SM_ATTR_LFT, 0, &s1);
		sm_lft_block_encode(&b, req.data);
		assert_int_equal(sync_req(v->e, &req, 0, &o), 0);
		memset(&b, 0xFF, sizeof(b));
		memcpy(b.port, s2_lft, sizeof(s2_lft));
		sm_smp_init_dr(&req, SM_METHOD_SET, SM_ATTR_LFT, 0, &s2);
		sm_lft_block_encode(&b, req.data);
		assert_int_equal(sync_req(v->e, &req, 0, &o), 0);
	}
}

static void test_lid_routed(void **state)
{
	struct env *v = *state;
	struct sm_smp req;
	struct sm_node_info ni;
	struct one o;
	struct sm_mock_stats ms;

	/* no LIDs yet: a LID-routed SMP goes nowhere */
	sm_smp_init_lid(&req, SM_METHOD_GET, SM_ATTR_NODE_INFO, 0);
	assert_int_equal(once_req(v->e, &req, 5, &o), -ETIMEDOUT);

	program_lids(v);
	/* H3 (LID 5) three hops away, and each switch */
	assert_int_equal(sync_req(v->e, &req, 5, &o), 0);
	assert_int_equal(sm_node_info_decode(o.resp.data, &ni, NULL), 0);
	assert_int_equal(ni.node_guid, 0x3020);
	assert_int_equal(ni.local_port_num, 1);
	assert_int_equal(sync_req(v->e, &req, 2, &o), 0);
	assert_int_equal(sm_node_info_decode(o.resp.data, &ni, NULL), 0);
	assert_int_equal(ni.node_guid, 0x2000);
	assert_int_equal(ni.local_port_num, 0);   /* LID-routed to a switch: port 0, like ibsim */
	assert_int_equal(sync_req(v->e, &req, 1, &o), 0);
	assert_int_equal(sm_node_info_decode(o.resp.data, &ni, NULL), 0);
	assert_int_equal(ni.node_guid, 0x1000);
	/* an unassigned LID is black-holed */
	assert_int_equal(once_req(v->e, &req, 40, &o), -ETIMEDOUT);
	/* break S2's route back to the SM (LID 3): the answer is lost */
	assert_int_equal(sm_mock_lft_poke(v->m, TF_S2, 3, 7), 0);
	assert_int_equal(once_req(v->e, &req, 5, &o), -ETIMEDOUT);
	sm_mock_stats(v->m, &ms);
	assert_int_equal(ms.lid_dropped, 3);
}

struct trapctx {
	int n;
	struct sm_smp last;
	uint16_t slid;
};

static void trap_cb(struct sm_txn *e, const struct sm_smp *smp, const struct sm_mad_addr *from,
		    void *ctx)
{
	struct trapctx *tc = ctx;
	struct sm_smp rep;

	tc->n++;
	tc->last = *smp;
	tc->slid = from->slid;
	sm_smp_make_trap_repress(smp, &rep);
	assert_int_equal(sm_txn_send_raw(e, &rep, from->slid), 0);
}

static void test_trap_on_link_down(void **state)
{
	struct env *v = *state;
	struct trapctx tc = { 0 };
	struct sm_notice nt;
	struct sm_mock_port_state ps;
	struct sm_mock_stats ms;
	struct sm_smp req;
	struct sm_switch_info si;
	struct sm_dr_path p;
	struct one o;

	/* before LIDs are set nobody knows where the SM is: no trap */
	assert_int_equal(sm_mock_link_down(v->m, TF_S2, 4), 0);
	assert_int_equal(sm_mock_link_up(v->m, TF_S2, 4), 0);
	sm_mock_stats(v->m, &ms);
	assert_int_equal(ms.traps_sent, 0);
	program_lids(v);
	sm_txn_set_unsolicited(v->e, trap_cb, &tc);
	assert_int_equal(sm_mock_link_down(v->m, TF_S2, 4), 0);
	assert_int_equal(sm_mock_link_down(v->m, TF_S2, 4), -ENOTCONN);
	assert_int_equal(sm_mock_port_state(v->m, sm_port_index(v->f, TF_H4, 1), &ps), 0);
	assert_int_equal(ps.state, SM_PORT_DOWN);
	assert_int_equal(ps.phys_state, 2);
	/* pump the engine: the trap arrives as an unsolicited MAD */
	assert_true(sm_txn_poll(v->e, 0) >= 0);
	assert_int_equal(tc.n, 1);
	assert_int_equal(tc.last.method, SM_METHOD_TRAP);
	assert_int_equal(tc.last.mgmt_class, SM_CLASS_SMI);
	assert_int_equal(tc.last.attr_id, SM_ATTR_NOTICE);
	assert_int_equal(tc.slid, 2);
	assert_int_equal(sm_notice_decode(tc.last.data, &nt, NULL), 0);
	assert_int_equal(nt.trap_num, SM_TRAP_LINK_STATE_CHANGE);
	assert_int_equal(nt.lid_addr, 2);
	assert_int_equal(nt.issuer_lid, 2);
	sm_mock_stats(v->m, &ms);
	assert_int_equal(ms.traps_sent, 1);
	assert_int_equal(ms.trap_represses, 1);
	/* S2 flags PortStateChange; DR to H4 no longer works */
	memset(&p, 0, sizeof(p));
	sm_dr_path_push(&p, 1);
	sm_dr_path_push(&p, 1);
	sm_smp_init_dr(&req, SM_METHOD_GET, SM_ATTR_SWITCH_INFO, 0, &p);
	assert_int_equal(sync_req(v->e, &req, 0, &o), 0);
	assert_int_equal(sm_switch_info_decode(o.resp.data, &si, NULL), 0);
	assert_int_equal(si.port_state_change, 1);
	{
		struct sm_dr_path h4 = p;
		sm_dr_path_push(&h4, 4);
		sm_smp_init_dr(&req, SM_METHOD_GET, SM_ATTR_NODE_INFO, 0, &h4);
		assert_int_equal(once_req(v->e, &req, 0, &o), -ETIMEDOUT);
	}
	/* link up: INIT again, a second trap */
	assert_int_equal(sm_mock_link_up(v->m, TF_S2, 4), 0);
	assert_int_equal(sm_mock_link_up(v->m, TF_S2, 4), -ENOENT);
	assert_true(sm_txn_poll(v->e, 0) >= 0);
	assert_int_equal(tc.n, 2);
	assert_int_equal(sm_mock_port_state(v->m, sm_port_index(v->f, TF_H4, 1), &ps), 0);
	assert_int_equal(ps.state, SM_PORT_INIT);
	assert_int_equal(ps.phys_state, 5);
	/* a link between two switches: both raise a trap, but S2 routes LID 3
	 * (the SM) over that very link, so its trap is lost on the way */
	assert_int_equal(sm_mock_link_down(v->m, TF_S1, 2), 0);
	assert_true(sm_txn_poll(v->e, 0) >= 0);
	assert_int_equal(tc.n, 3);
	assert_int_equal(tc.slid, 1);
	sm_mock_stats(v->m, &ms);
	assert_int_equal(ms.traps_sent, 3);
	assert_int_equal(ms.traps_lost, 1);
	/* reroute S2 to the SM over port 1: the next event's trap arrives */
	assert_int_equal(sm_mock_lft_poke(v->m, TF_S2, 3, 1), 0);
	assert_int_equal(sm_mock_link_up(v->m, TF_S1, 2), 0);
	assert_true(sm_txn_poll(v->e, 0) >= 0);
	assert_int_equal(tc.n, 5);
}

/* Many Gets with no retry: the drop share is honoured roughly, and every
 * drop is a timeout. */
static void test_fault_drop_share(void **state)
{
	struct env v;
	struct sm_mock_cfg mc;
	struct sm_smp req;
	struct sm_dr_path p;
	struct sm_mock_stats ms;
	const struct sm_txn_stats *st;
	struct sm_txn_req_opts opts = { .retries = SM_TXN_NO_RETRY };
	const unsigned N = 4000;

	(void)state;
	sm_mock_cfg_default(&mc);
	mc.seed = 42;
	mc.drop_ppm = 200000;   /* 20% */
	env_open(&v, &mc);
	memset(&p, 0, sizeof(p));
	sm_dr_path_push(&p, 1);
	for (unsigned i = 0; i < N; i++) {
		sm_smp_init_dr(&req, SM_METHOD_GET, SM_ATTR_PORT_INFO, 1 + i % 8, &p);
		assert_int_equal(sm_txn_submit_opts(v.e, &req, 0, &opts, NULL, NULL), 0);
	}
	assert_int_equal(sm_txn_run(v.e), 0);
	sm_mock_stats(v.m, &ms);
	st = sm_txn_stats(v.e);
	assert_int_equal(ms.requests, N);
	assert_true(ms.fault_dropped > N * 17 / 100 && ms.fault_dropped < N * 23 / 100);
	assert_int_equal(st->timed_out, ms.fault_dropped);
	assert_int_equal(st->completed, N - ms.fault_dropped);
	assert_true(st->max_outstanding <= 32);
	assert_true(st->max_per_dest <= 4);
	env_close(&v);
}

/* Corrupted answers are never delivered; retries recover the requests. */
static void test_fault_corrupt_and_delay(void **state)
{
	struct env v;
	struct sm_mock_cfg mc;
	struct sm_smp req;
	struct sm_dr_path p;
	struct sm_mock_stats ms;
	const struct sm_txn_stats *st;
	struct one o[400];
	unsigned ok = 0;

	(void)state;
	sm_mock_cfg_default(&mc);
	mc.seed = 7;
	mc.corrupt_ppm = 100000;
	mc.delay_ppm = 50000;
	mc.delay_us = 500000;    /* longer than the txn timeout: answers arrive late */
	env_open(&v, &mc);
	memset(&p, 0, sizeof(p));
	sm_dr_path_push(&p, 1);
	memset(o, 0, sizeof(o));
	for (unsigned i = 0; i < 400; i++) {
		sm_smp_init_dr(&req, SM_METHOD_GET, SM_ATTR_PORT_INFO, 1 + i % 8, &p);
		assert_int_equal(sm_txn_submit(v.e, &req, 0, one_cb, &o[i]), 0);
	}
	assert_int_equal(sm_txn_run(v.e), 0);
	for (unsigned i = 0; i < 400; i++) {
		struct sm_port_info pi;
		assert_int_equal(o[i].done, 1);
		if (o[i].status)
			continue;
		ok++;
		/* what was delivered is the right answer */
		assert_int_equal(sm_port_info_decode(o[i].resp.data, &pi, NULL), 0);
		assert_int_equal(o[i].resp.attr_id, SM_ATTR_PORT_INFO);
		assert_int_equal(o[i].resp.attr_mod, 1 + i % 8);
		assert_int_equal(pi.local_port_num, 3);   /* the port the SMP entered S1 by */
	}
	sm_mock_stats(v.m, &ms);
	st = sm_txn_stats(v.e);
	assert_true(ms.fault_corrupted > 0);
	assert_true(ms.fault_delayed > 0);
	assert_true(st->retried > 0);
	/* every corrupted MAD was caught by some check */
	assert_true(st->malformed + st->mismatched + st->unknown_tid + st->late + st->duplicate > 0);
	assert_true(ok >= 395);   /* 4 tries each: losing one needs 4 faults in a row */
	env_close(&v);
}

static void test_attach_errors(void **state)
{
	struct env *v = *state;
	struct sm_transport *t2;
	char err[128];
	struct sm_mock *m2;
	struct sm_fabric *empty = sm_fabric_new();

	assert_int_equal(sm_mock_attach(v->m, sm_port_index(v->f, TF_H1, 1), &t2), -EBUSY);
	assert_int_equal(sm_mock_attach(v->m, sm_port_index(v->f, TF_S1, 1), &t2), -EINVAL);
	assert_int_equal(sm_mock_attach(v->m, v->f->n_ports, &t2), -EINVAL);
	/* a second SM (another plane would work the same way) */
	assert_int_equal(sm_mock_attach(v->m, sm_port_index(v->f, TF_H3, 1), &t2), 0);
	assert_string_equal(t2->info.ca_name, "mock");
	assert_int_equal(t2->info.port_guid, 0x3021);
	sm_transport_close(t2);
	assert_int_equal(sm_mock_new(empty, NULL, &m2, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "empty"));
	sm_fabric_free(empty);
}

/* An event loop polling with timeout 0 still sees its timeouts expire. */
static void test_poll_loop_virtual_time(void **state)
{
	struct env v;
	struct sm_mock_cfg mc;
	struct sm_smp req;
	struct sm_dr_path p = { 0 };
	struct one o = { 0 };
	unsigned rounds = 0;

	(void)state;
	sm_mock_cfg_default(&mc);
	mc.drop_ppm = 1000000;
	env_open(&v, &mc);
	sm_smp_init_dr(&req, SM_METHOD_GET, SM_ATTR_NODE_INFO, 0, &p);
	assert_int_equal(sm_txn_submit(v.e, &req, 0, one_cb, &o), 0);
	while (sm_txn_pending(v.e) && rounds < 100000) {
		assert_true(sm_txn_poll(v.e, 0) >= 0);
		rounds++;
	}
	assert_int_equal(o.done, 1);
	assert_int_equal(o.status, -ETIMEDOUT);
	assert_true(sm_mock_now_us(v.m) >= (100 + 200 + 400 + 800) * 1000);
	env_close(&v);
}

/* A shipped ibsim net file through the topology reader. */
static void test_load_dump(void **state)
{
	const char *net = "/usr/share/doc/ibsim-utils/net-examples/net.2sw2path4hca";
	struct sm_mock *m = NULL;
	struct sm_transport *t = NULL;
	struct sm_txn *e;
	struct sm_smp req;
	struct sm_dr_path p = { 0 };
	struct one o;
	char err[256];
	uint32_t port;

	(void)state;
	assert_true(sm_mock_load("/nonexistent/dump", NULL, &m, err, sizeof(err)) < 0);
	assert_null(m);
	assert_true(strlen(err) > 0);
	assert_int_equal(sm_mock_load(net, NULL, &m, err, sizeof(err)), 0);
	port = sm_mock_default_port(m, 0);
	assert_int_not_equal(port, SM_NONE);
	assert_int_equal(sm_mock_attach(m, port, &t), 0);
	e = sm_txn_new(t, NULL);
	assert_non_null(e);
	/* the first CA's neighbour is a switch called Switch1 or Switch2 */
	sm_dr_path_push(&p, t->info.port_num);
	sm_smp_init_dr(&req, SM_METHOD_GET, SM_ATTR_NODE_DESC, 0, &p);
	assert_int_equal(sync_req(e, &req, 0, &o), 0);
	assert_int_equal(o.mad_status, 0);
	assert_memory_equal(o.resp.data, "Switch", 6);
	sm_txn_free(e);
	sm_transport_close(t);
	sm_mock_free(m);
}

/* keep_state: LIDs and port states come from the model (a fabric some SM
 * configured before); the default is a fresh fabric. */
static void test_keep_state(void **state)
{
	struct sm_fabric *f = two_switch();
	struct sm_mock_cfg mc;
	struct sm_mock *m;
	struct sm_mock_port_state ps;
	char err[128];

	(void)state;
	assert_non_null(f);
	assert_int_equal(sm_fabric_set_lid(f, TF_S1, 0, 10, 0), 0);
	assert_int_equal(sm_fabric_set_lid(f, TF_H2, 1, 20, 1), 0);
	sm_port(f, TF_H2, 1)->state = SM_PORT_ACTIVE;
	sm_port(f, TF_H4, 2)->state = SM_PORT_ACTIVE;   /* unlinked: cannot be ACTIVE */
	f->planes[0].sm_lid = 10;
	f->planes[0].subnet_prefix = 0xfe80000000000123ULL;

	assert_int_equal(sm_mock_new(f, NULL, &m, err, sizeof(err)), 0);
	assert_int_equal(sm_mock_port_state(m, sm_port_index(f, TF_H2, 1), &ps), 0);
	assert_int_equal(ps.lid, 0);
	assert_int_equal(ps.state, SM_PORT_INIT);
	sm_mock_free(m);

	sm_mock_cfg_default(&mc);
	mc.keep_state = true;
	assert_int_equal(sm_mock_new(f, &mc, &m, err, sizeof(err)), 0);
	assert_int_equal(sm_mock_port_state(m, sm_port_index(f, TF_H2, 1), &ps), 0);
	assert_int_equal(ps.lid, 20);
	assert_int_equal(ps.lmc, 1);
	assert_int_equal(ps.state, SM_PORT_ACTIVE);
	assert_int_equal(ps.sm_lid, 10);
	assert_int_equal(ps.gid_prefix, 0xfe80000000000123ULL);
	assert_int_equal(sm_mock_port_state(m, sm_port_index(f, TF_S1, 0), &ps), 0);
	assert_int_equal(ps.lid, 10);
	assert_int_equal(sm_mock_port_state(m, sm_port_index(f, TF_H4, 2), &ps), 0);
	assert_int_equal(ps.state, SM_PORT_DOWN);
	assert_int_equal(sm_mock_port_state(m, f->n_ports, &ps), -EINVAL);
	/* the mock's copy keeps the model's numbering and GUIDs */
	assert_int_equal(sm_mock_fabric(m)->n_nodes, f->n_nodes);
	assert_int_equal(sm_mock_fabric(m)->nodes[TF_H3].guid, f->nodes[TF_H3].guid);
	sm_mock_free(m);
	sm_fabric_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		ENV_TEST(test_dr_walk_all),
		ENV_TEST(test_dr_bad_path_dropped),
		ENV_TEST(test_port_state_machine),
		ENV_TEST(test_lft_and_switch_info),
		ENV_TEST(test_lid_routed),
		ENV_TEST(test_trap_on_link_down),
		cmocka_unit_test(test_fault_drop_share),
		cmocka_unit_test(test_fault_corrupt_and_delay),
		ENV_TEST(test_attach_errors),
		cmocka_unit_test(test_poll_loop_virtual_time),
		cmocka_unit_test(test_load_dump),
		cmocka_unit_test(test_keep_state),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
