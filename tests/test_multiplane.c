/* SPDX-License-Identifier: MIT */
/*
 * Multi-plane bring-up on mock planes: every plane up from one call, the
 * NIC of a host holds the same LID in every plane, LIDs persist across a
 * restart, and a plane whose transport dies mid-sweep fails alone (reported,
 * retried) while the others come up.
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

#include "model/gen.h"
#include "model/hosts.h"
#include "mock/mock.h"
#include "sm/multiplane.h"
#include "routing/registry.h"
#include "mad/fault.h"

#define NP 4

struct rig {
	struct sm_fabric *f;                 /* the generated multi-plane fabric */
	struct sm_mock *mock[NP];            /* one emulated fabric per plane (one thread each) */
	struct sm_mp_plane pl[NP];
	struct sm_registry *reg;
	struct sm_plane_lids *lids;
};

static void rig_up(struct rig *r, const char *state_dir, int dying_plane, unsigned budget)
{
	struct sm_gen_params p;
	char err[512];

	memset(r, 0, sizeof(*r));
	sm_gen_params_init(&p);
	p.hosts = 64;
	p.radix = 8;
	p.planes = NP;
	p.no_lids = 1;           /* a cold fabric: the SM assigns every LID */
	r->f = sm_fabric_new();
	assert_int_equal(sm_gen_fat_tree(&p, r->f, err, sizeof(err)), 0);
	/* planes differ: the first host's NIC in plane 0 is not cabled, so a per-plane
	 * assignment would shift every later host's LID in plane 0 */
	for (uint32_t n = 0; n < r->f->n_nodes; n++)
		if (r->f->nodes[n].type == SM_NODE_CA && r->f->nodes[n].plane == 0) {
			sm_fabric_unlink(r->f, n, 1);
			break;
		}
	r->reg = sm_registry_new("/nonexistent-smd-plugins");
	assert_non_null(r->reg);
	for (unsigned i = 0; i < NP; i++) {
		assert_int_equal(sm_mock_new(r->f, NULL, &r->mock[i], err, sizeof(err)), 0);
		uint32_t port = sm_mock_default_port(r->mock[i], i);
		assert_int_not_equal(port, SM_NONE);
		assert_int_equal(sm_mock_attach(r->mock[i], port, &r->pl[i].t), 0);
		if ((int)i == dying_plane) {
			struct sm_transport *w = NULL;
			assert_int_equal(sm_transport_lossy_wrap(r->pl[i].t, budget, &w), 0);
			r->pl[i].t = w;
		}
		r->pl[i].index = i;
		snprintf(r->pl[i].name, sizeof(r->pl[i].name), "mock-plane-%u", i);
		assert_int_equal(sm_chain_new(r->reg, "planes,minhop", NULL, NULL, &r->pl[i].chain, err, sizeof(err)), 0);
	}
	assert_int_equal(sm_plane_lids_open(state_dir, 0, NULL, NULL, &r->lids, err, sizeof(err)), 0);
}

static unsigned rig_run(struct rig *r)
{
	struct sm_mp_cfg cfg;
	memset(&cfg, 0, sizeof(cfg));
	sm_cfg_default(&cfg.base);
	cfg.base.txn.timeout_ms = 50;
	cfg.base.txn.retries = 2;
	cfg.retries = 1;
	cfg.lids = r->lids;
	return sm_multiplane_bringup(r->pl, NP, &cfg);
}

static void rig_down(struct rig *r)
{
	for (unsigned i = 0; i < NP; i++) {
		sm_chain_free(r->pl[i].chain);
		sm_transport_close(r->pl[i].t);
		sm_mock_free(r->mock[i]);
	}
	sm_plane_lids_free(r->lids);
	sm_registry_free(r->reg);
	sm_fabric_free(r->f);
}

/* LID the mock of plane p holds for a port of the generated fabric. */
static uint16_t mock_lid(struct rig *r, unsigned p, uint32_t port)
{
	struct sm_mock_port_state st;
	assert_int_equal(sm_mock_port_state(r->mock[p], port, &st), 0);
	return st.lid;
}

static void check_consistent(struct rig *r, uint16_t *host_lid_out)
{
	struct sm_hosts *h = NULL;
	assert_int_equal(sm_hosts_build(r->f, &h), 0);
	assert_int_equal(h->n, 64);
	unsigned partial = 0;
	for (uint32_t i = 0; i < h->n; i++) {
		uint16_t lid0 = 0;
		for (unsigned p = 0; p < NP; p++) {
			if (h->h[i].nic[p] == SM_NONE)
				continue;
			uint16_t l = mock_lid(r, p, h->h[i].nic[p]);
			assert_int_not_equal(l, 0);
			if (!lid0)
				lid0 = l;
			assert_int_equal(l, lid0);
		}
		partial += h->h[i].n_nics != NP;
		if (host_lid_out)
			host_lid_out[i] = lid0;
	}
	assert_int_equal(partial, 1);
	/* within each plane every LID (hosts and switches) is unique */
	for (unsigned p = 0; p < NP; p++) {
		static uint8_t seen[SM_LID_SPACE];
		memset(seen, 0, sizeof(seen));
		for (uint32_t n = 0; n < r->f->n_nodes; n++) {
			const struct sm_node *nd = &r->f->nodes[n];
			if (nd->plane != p || (nd->type == SM_NODE_CA && sm_port(r->f, n, 1)->peer_node == SM_NONE))
				continue;
			uint16_t lid = mock_lid(r, p, nd->type == SM_NODE_SWITCH ? nd->port0 : nd->port0 + 1);
			assert_int_not_equal(lid, 0);
			assert_int_equal(seen[lid], 0);
			seen[lid] = 1;
		}
	}
	sm_hosts_free(h);
}

static void test_all_planes_consistent_and_persisted(void **state)
{
	(void)state;
	char dir[] = "/tmp/smd-mp-XXXXXX";
	assert_non_null(mkdtemp(dir));
	struct rig r;
	uint16_t first[64], second[64];

	rig_up(&r, dir, -1, 0);
	assert_int_equal(rig_run(&r), 0);
	for (unsigned p = 0; p < NP; p++) {
		assert_int_equal(r.pl[p].rc, 0);
		assert_int_equal(r.pl[p].sum.active_ports, r.pl[p].sum.link_ports);
		assert_string_equal(r.pl[p].sum.engine, "planes");
	}
	check_consistent(&r, first);
	char err[256];
	assert_int_equal(sm_plane_lids_save(r.lids, err, sizeof(err)), 0);
	rig_down(&r);

	/* a restart on cold fabrics: the persisted table gives every host its LID back */
	rig_up(&r, dir, -1, 0);
	assert_int_equal(rig_run(&r), 0);
	check_consistent(&r, second);
	assert_memory_equal(first, second, sizeof(first));
	struct sm_plane_lids_stats st;
	sm_plane_lids_stats(r.lids, &st);
	assert_int_equal(st.fresh, 0);
	rig_down(&r);

	char path[512];
	snprintf(path, sizeof(path), "%s/plane-lids", dir);
	unlink(path);
	rmdir(dir);
}

static void test_plane_dies_mid_sweep(void **state)
{
	(void)state;
	struct rig r;
	/* plane 2 loses every MAD after its first 20 sends: mid-discovery */
	rig_up(&r, NULL, 2, 20);
	assert_int_equal(rig_run(&r), 1);
	for (unsigned p = 0; p < NP; p++) {
		if (p == 2) {
			assert_int_not_equal(r.pl[p].rc, 0);
			assert_int_equal(r.pl[p].attempts, 2);   /* reported and retried */
			assert_true(strlen(r.pl[p].err) > 0);
			continue;
		}
		assert_int_equal(r.pl[p].rc, 0);
		assert_int_equal(r.pl[p].sum.active_ports, r.pl[p].sum.link_ports);
	}
	rig_down(&r);
}

/* A damaged plane-lids file is refused with its FILE:LINE; nothing is half-loaded. */
static void test_plane_lids_bad_file(void **state)
{
	(void)state;
	char dir[] = "/tmp/smd-mpbad-XXXXXX", path[512], err[512] = "";
	struct sm_plane_lids *pl = (void *)1;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/plane-lids", dir);
	FILE *f = fopen(path, "w");
	fputs("0x0002c94000000001 0x0005 0x0005\n0x0002c94000000002 0x0005 0x0005\n", f);
	fclose(f);
	assert_int_equal(sm_plane_lids_open(dir, 0, NULL, NULL, &pl, err, sizeof(err)), -EINVAL);
	assert_null(pl);
	assert_non_null(strstr(err, "plane-lids:2:"));
	f = fopen(path, "w");
	fputs("0x0002c94000000001 banana 5\n", f);
	fclose(f);
	err[0] = 0;
	assert_int_equal(sm_plane_lids_open(dir, 0, NULL, NULL, &pl, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "plane-lids:1:"));
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_planes_consistent_and_persisted),
		cmocka_unit_test(test_plane_dies_mid_sweep),
		cmocka_unit_test(test_plane_lids_bad_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
