/* SPDX-License-Identifier: MIT */
/*
 * Multicast trees (routing/mcast.h, sm/mcast.h) on generated fat trees:
 * every member reaches every receiver by flooding the MFTs, no loop, roots
 * balanced over the spines, send-only members not forwarded to, a group
 * added moves no other group's tree, degraded trees still work.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ftbuild.h"
#include "lib/mix.h"
#include "routing/mcast.h"
#include "sm/mcast.h"

struct grp {
	struct sm_mcast_group g[64];
	struct sm_mcast_member m[64][1024];
	size_t n;
};

/* The port index of every CA's port 1, in node order. */
static uint32_t ca_ports(const struct sm_fabric *f, uint32_t *out)
{
	uint32_t k = 0;
	for (uint32_t n = 0; n < f->n_nodes; n++)
		if (f->nodes[n].type == SM_NODE_CA)
			out[k++] = f->nodes[n].port0 + 1;
	return k;
}

/* Group i: every CA whose hash with i says so (1 in `every`), the first `sendonly` of them send-only. */
static void make_groups(const struct sm_fabric *f, struct grp *gs, size_t n, unsigned every, unsigned sendonly)
{
	static uint32_t cas[4096];
	uint32_t nc = ca_ports(f, cas);
	gs->n = n;
	for (size_t i = 0; i < n; i++) {
		struct sm_mcast_group *g = &gs->g[i];
		g->mlid = (uint16_t)(SM_MCAST_MLID_FIRST + i);
		g->m = gs->m[i];
		g->n = 0;
		for (uint32_t c = 0; c < nc && g->n < 1024; c++) {
			if (every > 1 && sm_mix64((uint64_t)i << 32 | c) % every)
				continue;
			gs->m[i][g->n] = (struct sm_mcast_member){ .port = cas[c], .recv = g->n >= sendonly };
			g->n++;
		}
	}
}

static void check_ok(const struct sm_fabric *f, const struct sm_mfts *m, const struct grp *gs)
{
	struct sm_mcast_verdict v;
	assert_int_equal(sm_mcast_verify(f, 0, m, gs->g, gs->n, &v), 0);
	if (v.unreached || v.extra || v.loops)
		fail_msg("MLID 0x%04x: %llu unreached, %llu extra, %llu loops", v.first_bad_mlid,
			 (unsigned long long)v.unreached, (unsigned long long)v.extra, (unsigned long long)v.loops);
	assert_true(v.floods > 0);
}

static struct sm_mfts *route(const struct sm_fabric *f, const struct grp *gs)
{
	struct sm_mfts *m;
	char err[256];
	int rc = sm_mcast_route(f, 0, gs->g, gs->n, &m, err, sizeof(err));
	if (rc)
		fail_msg("sm_mcast_route: %s", err);
	return m;
}

/* Roots are among switches [first, first + count) and each gets per groups (+-1). */
static void check_roots(const struct sm_mfts *m, uint32_t first, uint32_t count, uint32_t groups)
{
	uint32_t *cnt = calloc(m->n_rows, sizeof(*cnt));
	assert_int_equal(sm_mfts_root_counts(m, cnt), count < groups ? count : groups);
	for (uint32_t r = 0; r < m->n_rows; r++) {
		uint32_t n = m->row_node[r];
		if (n < first || n >= first + count) {
			assert_int_equal(cnt[r], 0);
			continue;
		}
		assert_true(cnt[r] >= groups / count && cnt[r] <= (groups + count - 1) / count);
	}
	free(cnt);
}

static void test_2level(void **state)
{
	(void)state;
	struct ftb_shape s;
	struct sm_fabric *f = sm_fabric_new();
	struct grp *gs = calloc(1, sizeof(*gs));
	ftb_shape_2level(&s, 8, 32);      /* 8 leaves of 4 hosts, 4 spines */
	assert_int_equal(ftb_build(f, 0, &s, 0), 0);
	make_groups(f, gs, 64, 1, 0);
	struct sm_mfts *m = route(f, gs);
	check_ok(f, m, gs);
	assert_int_equal(m->n_groups, 64);
	check_roots(m, s.leaves, s.up, 64);
	for (uint32_t i = 0; i < 64; i++)
		assert_int_equal(m->depth[i], 2);   /* CA - leaf - spine */
	/* the check sees a missing port and a loop: leaf 0 forwards to every spine for MLID 0xC000 */
	struct sm_mcast_verdict v;
	uint64_t *w = m->mask[(size_t)m->row[0] * m->n_mlids];
	uint64_t save = w[0];
	w[0] &= ~2ULL;                          /* leaf 0 port 1: its first host */
	assert_int_equal(sm_mcast_verify(f, 0, m, gs->g, 1, &v), 0);
	assert_true(v.unreached > 0);
	assert_int_equal(v.first_bad_mlid, 0xC000);
	w[0] = save;
	for (unsigned u = 0; u < s.up; u++) {
		w[0] |= 1ULL << (s.hosts + 1 + u);
		memcpy(m->mask[(size_t)m->row[s.leaves + u] * m->n_mlids], m->mask[(size_t)m->row[m->root[0]] * m->n_mlids], 32);
	}
	assert_int_equal(sm_mcast_verify(f, 0, m, gs->g, 1, &v), 0);
	assert_true(v.loops > 0 || v.extra > 0);
	sm_mfts_free(m);
	/* subsets of the hosts, some send-only */
	make_groups(f, gs, 64, 3, 2);
	m = route(f, gs);
	check_ok(f, m, gs);
	sm_mfts_free(m);
	free(gs);
	sm_fabric_free(f);
}

static void test_3level(void **state)
{
	(void)state;
	struct ftb_shape s;
	struct sm_fabric *f = sm_fabric_new();
	struct grp *gs = calloc(1, sizeof(*gs));
	ftb_shape_3level(&s, 8, 128);     /* 4 pods of 4 leaves and 4 aggs, 16 cores */
	assert_int_equal(ftb_build(f, 0, &s, 0), 0);
	make_groups(f, gs, 64, 1, 0);
	struct sm_mfts *m = route(f, gs);
	check_ok(f, m, gs);
	uint32_t leaves = s.pods * s.leaves, aggs = s.pods * s.up;
	check_roots(m, leaves + aggs, s.up * s.core_up, 64);
	sm_mfts_free(m);
	make_groups(f, gs, 64, 5, 1);
	m = route(f, gs);
	check_ok(f, m, gs);
	sm_mfts_free(m);
	/* degraded: a fifth of the switch links gone */
	assert_true(ftb_remove_links(f, 0, 0.2, 7) > 0);
	m = route(f, gs);
	check_ok(f, m, gs);
	sm_mfts_free(m);
	free(gs);
	sm_fabric_free(f);
}

/* Send-only members get a way in, but no packet out of their port. */
static void test_sendonly(void **state)
{
	(void)state;
	struct ftb_shape s;
	struct sm_fabric *f = sm_fabric_new();
	struct grp *gs = calloc(1, sizeof(*gs));
	ftb_shape_2level(&s, 8, 32);
	assert_int_equal(ftb_build(f, 0, &s, 0), 0);
	make_groups(f, gs, 1, 1, 31);         /* 31 send-only, 1 receiver */
	struct sm_mfts *m = route(f, gs);
	check_ok(f, m, gs);
	for (uint32_t i = 0; i < gs->g[0].n; i++) {
		const struct sm_port *p = &f->ports[gs->g[0].m[i].port];
		const uint64_t *mask = sm_mfts_mask(m, p->peer_node, SM_MCAST_MLID_FIRST);
		assert_non_null(mask);
		assert_int_equal(mask[p->peer_port >> 6] >> (p->peer_port & 63) & 1, gs->g[0].m[i].recv);
	}
	sm_mfts_free(m);
	/* only send-only members: nobody to deliver to, no entries */
	gs->m[0][31].recv = 0;
	m = route(f, gs);
	assert_int_equal(m->n_groups, 0);
	assert_int_equal(m->root[0], SM_NONE);
	sm_mfts_free(m);
	free(gs);
	sm_fabric_free(f);
}

/* A group added leaves every other group's masks as they were. */
static void test_stable(void **state)
{
	(void)state;
	struct ftb_shape s;
	struct sm_fabric *f = sm_fabric_new();
	struct grp *gs = calloc(1, sizeof(*gs));
	ftb_shape_3level(&s, 8, 100);
	assert_int_equal(ftb_build(f, 0, &s, 0), 0);
	make_groups(f, gs, 40, 4, 1);
	struct sm_mcast_group keep = gs->g[20];
	gs->g[20] = gs->g[39];
	gs->n = 39;
	struct sm_mfts *a = route(f, gs);
	gs->g[20] = keep;
	gs->n = 40;
	struct sm_mfts *b = route(f, gs);
	check_ok(f, b, gs);
	for (uint32_t r = 0; r < a->n_rows; r++)
		for (uint32_t i = 0; i < 39; i++)
			if (i != 20)
				assert_memory_equal(a->mask[r * a->n_mlids + i], b->mask[r * b->n_mlids + i], 32);
	sm_mfts_free(a);
	sm_mfts_free(b);
	free(gs);
	sm_fabric_free(f);
}

static void test_bad(void **state)
{
	(void)state;
	struct ftb_shape s;
	struct sm_fabric *f = sm_fabric_new();
	struct grp *gs = calloc(1, sizeof(*gs));
	struct sm_mfts *m = (struct sm_mfts *)1;
	char err[256];
	ftb_shape_2level(&s, 8, 16);
	assert_int_equal(ftb_build(f, 0, &s, 0), 0);
	make_groups(f, gs, 2, 1, 0);
	gs->g[1].mlid = gs->g[0].mlid;
	assert_int_equal(sm_mcast_route(f, 0, gs->g, 2, &m, err, sizeof(err)), -EINVAL);
	assert_null(m);
	assert_non_null(strstr(err, "two groups"));
	gs->g[1].mlid = 0xBFFF;
	assert_int_equal(sm_mcast_route(f, 0, gs->g, 2, &m, err, sizeof(err)), -EINVAL);
	gs->g[1].mlid = 0xFFFF;
	assert_int_equal(sm_mcast_route(f, 0, gs->g, 2, &m, err, sizeof(err)), -EINVAL);
	/* members that are not in the plane, or out of range: skipped */
	gs->g[1].mlid = 0xC001;
	gs->m[1][0].port = f->n_ports + 5;
	gs->m[1][1].port = f->nodes[0].port0 + 1;   /* a switch's external port is not a member */
	assert_int_equal(sm_mcast_route(f, 0, gs->g, 2, &m, err, sizeof(err)), 0);
	assert_int_equal(m->skipped, 2);
	sm_mfts_free(m);
	sm_mfts_free(NULL);
	free(gs);
	sm_fabric_free(f);
}

/* The SM's glue: members by port GUID, join states, refcounts. */
static void test_set(void **state)
{
	(void)state;
	struct ftb_shape s;
	struct sm_fabric *f = sm_fabric_new();
	ftb_shape_2level(&s, 8, 32);
	assert_int_equal(ftb_build(f, 0, &s, 0), 0);
	struct sm_mc_set *set = sm_mc_set_new(0, 7);
	assert_non_null(set);
	assert_int_equal(set->gen, 7);
	set->groups = calloc(2, sizeof(*set->groups));
	set->n_groups = 2;
	for (unsigned i = 0; i < 2; i++) {
		struct sm_mc_group *g = &set->groups[i];
		g->mlid = (uint16_t)(SM_MLID_FIRST + 5 * i);
		g->members = calloc(33, sizeof(*g->members));
		for (uint32_t n = 0; n < f->n_nodes; n++)
			if (f->nodes[n].type == SM_NODE_CA)
				g->members[g->n_members++] = (struct sm_mc_member){
					.port_guid = f->ports[f->nodes[n].port0 + 1].guid,
					.join_state = g->n_members % 4 ? SM_MC_FULL : SM_MC_SENDONLY,
				};
		g->members[g->n_members++] = (struct sm_mc_member){ .port_guid = 0x1234, .join_state = SM_MC_FULL };
	}
	assert_ptr_equal(sm_mc_set_ref(set), set);
	sm_mc_set_unref(set);
	struct sm_mfts *m;
	size_t missing = 0;
	char err[256];
	assert_int_equal(sm_mc_route(f, set, &m, &missing, err, sizeof(err)), 0);
	assert_int_equal(missing, 2);
	assert_int_equal(m->n_mlids, 6);
	assert_int_equal(m->n_groups, 2);
	assert_int_equal(m->root[1], SM_NONE);
	sm_mfts_free(m);
	sm_mc_set_unref(set);
	sm_mc_set_unref(NULL);
	sm_fabric_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_2level),
		cmocka_unit_test(test_3level),
		cmocka_unit_test(test_sendonly),
		cmocka_unit_test(test_stable),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_set),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
