/* SPDX-License-Identifier: MIT */
/*
 * Tests of the dry-run core's own rules (LID gap filling, connected parts)
 * and of the report writers on a synthetic result with hostile strings.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dryrun/dryrun.h"
#include "dryrun/reference.h"
#include "dryrun/report.h"
#include "model/gen.h"

/* sw0 - sw1 cabled; CA a (2 ports: one on each switch), CA b on sw1, CA c on sw2 (alone), CA d unplugged. */
static struct sm_dryrun *small(void)
{
	struct sm_dryrun *d = sm_dryrun_new();
	struct sm_fabric *f;
	int64_t s0, s1, s2, a, b, c, x;

	assert_non_null(d);
	f = d->f;
	s0 = sm_fabric_add_node(f, SM_NODE_SWITCH, 0x100, 8, 0, 0);
	s1 = sm_fabric_add_node(f, SM_NODE_SWITCH, 0x200, 8, 0, 0);
	s2 = sm_fabric_add_node(f, SM_NODE_SWITCH, 0x300, 8, 0, 0);
	a = sm_fabric_add_node(f, SM_NODE_CA, 0x10, 2, 0, 0);
	b = sm_fabric_add_node(f, SM_NODE_CA, 0x20, 1, 0, 0);
	c = sm_fabric_add_node(f, SM_NODE_CA, 0x30, 1, 0, 0);
	x = sm_fabric_add_node(f, SM_NODE_CA, 0x40, 1, 0, 0);
	assert_true(s0 >= 0 && s1 >= 0 && s2 >= 0 && a >= 0 && b >= 0 && c >= 0 && x >= 0);
	assert_int_equal(sm_fabric_set_port_guid(f, (uint32_t)a, 1, 0x11), 0);
	assert_int_equal(sm_fabric_set_port_guid(f, (uint32_t)a, 2, 0x12), 0);
	assert_int_equal(sm_fabric_set_port_guid(f, (uint32_t)b, 1, 0x21), 0);
	assert_int_equal(sm_fabric_set_port_guid(f, (uint32_t)c, 1, 0x31), 0);
	assert_int_equal(sm_fabric_set_port_guid(f, (uint32_t)x, 1, 0x41), 0);
	assert_int_equal(sm_fabric_link(f, (uint32_t)s0, 1, (uint32_t)s1, 1), 0);
	assert_int_equal(sm_fabric_link(f, (uint32_t)s0, 2, (uint32_t)a, 1), 0);
	assert_int_equal(sm_fabric_link(f, (uint32_t)s1, 2, (uint32_t)a, 2), 0);
	assert_int_equal(sm_fabric_link(f, (uint32_t)s1, 3, (uint32_t)b, 1), 0);
	assert_int_equal(sm_fabric_link(f, (uint32_t)s2, 1, (uint32_t)c, 1), 0);
	sm_fabric_set_desc(f, (uint32_t)c, "lonely \"c\"\n\xff");
	d->run.n_planes = 1;
	return d;
}

static void test_lids_fill_gaps(void **state)
{
	struct sm_dryrun *d = small();
	struct sm_fabric *f = d->f;
	char err[256] = "";

	(void)state;
	/* the dump gave sw1 LID 1 and CA b LID 4: kept; lmc 1 ranges are aligned on 2 */
	assert_int_equal(sm_fabric_set_lid(f, 1, 0, 1, 0), 0);
	assert_int_equal(sm_fabric_set_lid(f, 4, 1, 4, 0), 0);
	assert_int_equal(sm_dryrun_lids(d, 1, err, sizeof(err)), 0);
	const struct sm_dr_plane *p = &d->run.planes[0];
	assert_int_equal(p->lid_ports_kept, 2);
	/* sw0, sw2, a.1, a.2, c.1 (d is unplugged: no LID) */
	assert_int_equal(p->lid_ports_assigned, 5);
	assert_int_equal(p->lids_assigned, 1 + 1 + 2 + 2 + 2);
	assert_int_equal(sm_port(f, 0, 0)->lid, 2);   /* switches first, lowest free */
	assert_int_equal(sm_port(f, 2, 0)->lid, 3);
	assert_int_equal(sm_port(f, 3, 1)->lid, 6);   /* 4 is taken (b), 5 is not aligned */
	assert_int_equal(sm_port(f, 3, 1)->lmc, 1);
	assert_int_equal(sm_port(f, 3, 2)->lid, 8);
	assert_int_equal(sm_port(f, 5, 1)->lid, 10);
	assert_int_equal(sm_port(f, 6, 1)->lid, 0);
	assert_int_equal(sm_port(f, 4, 1)->lid, 4);   /* kept as the dump had it */
	assert_int_equal(p->n_lid_examples, 5);
	assert_int_equal(p->lid_examples[0].guid, 0x100);
	assert_int_equal(p->lid_examples[0].lid, 2);

	/* connectivity: hosts a.1, a.2, b.1 in one part, c.1 alone: 2 x (3 x 1) pairs */
	assert_int_equal(p->hosts, 4);
	assert_int_equal(p->parts, 2);
	assert_int_equal(p->disconnected_pairs, 6);
	assert_int_equal(p->n_pair_examples, 6);
	sm_dryrun_free(d);
}

static void test_lids_exhausted(void **state)
{
	struct sm_dryrun *d = small();
	char err[256] = "";

	(void)state;
	/* fill the LID space but one LID: sw0 gets it, then nothing is left */
	for (unsigned lid = 1; lid < SM_UNICAST_LID_MAX; lid++) {
		int64_t n = sm_fabric_add_node(d->f, SM_NODE_CA, 0x100000 + lid, 1, 0, 0);
		assert_true(n >= 0);
		assert_int_equal(sm_fabric_set_lid(d->f, (uint32_t)n, 1, (uint16_t)lid, 0), 0);
	}
	assert_int_equal(sm_dryrun_lids(d, 0, err, sizeof(err)), -ENOSPC);
	assert_non_null(strstr(err, "no free unicast LID"));
	assert_int_equal(sm_port(d->f, 0, 0)->lid, SM_UNICAST_LID_MAX);
	sm_dryrun_free(d);

	d = small();
	assert_int_equal(sm_dryrun_lids(d, 8, err, sizeof(err)), -EINVAL);
	sm_dryrun_free(d);
}

/* Both renderings of a result whose strings hold quotes, newlines and invalid UTF-8. */
static void test_report_writers(void **state)
{
	struct sm_dryrun *d = small();
	char err[256] = "";
	char *buf = NULL;
	size_t len = 0;
	FILE *out;

	(void)state;
	assert_int_equal(sm_dryrun_lids(d, 0, err, sizeof(err)), 0);
	snprintf(d->run.chain, sizeof(d->run.chain), "ftree,minhop");
	snprintf(d->run.planes[0].dump, sizeof(d->run.planes[0].dump), "dump \"1\".ibnd");
	d->run.planes[0].route.n_attempts = 1;
	d->run.planes[0].route.engine_index = -1;
	d->run.planes[0].route.attempts[0].engine = "ftree";
	d->run.planes[0].route.attempts[0].rc = -EINVAL;
	snprintf(d->run.planes[0].route.attempts[0].why, sizeof(d->run.planes[0].route.attempts[0].why),
		 "not a fat tree: \"c\"\tis alone");

	out = open_memstream(&buf, &len);
	assert_int_equal(sm_report_write_json(out, &d->run), 0);
	fclose(out);
	assert_non_null(strstr(buf, "\"version\": 1"));
	assert_non_null(strstr(buf, "\"dump\": \"dump \\\"1\\\".ibnd\""));
	assert_non_null(strstr(buf, "\"desc\": \"lonely \\\"c\\\"\\n\\ufffd\""));
	assert_non_null(strstr(buf, "\"reason\": \"not a fat tree: \\\"c\\\"\\tis alone\""));
	assert_non_null(strstr(buf, "\"metrics\": null"));
	assert_non_null(strstr(buf, "\"routed\": false"));
	free(buf);

	buf = NULL;
	out = open_memstream(&buf, &len);
	assert_int_equal(sm_report_write_text(out, &d->run), 0);
	fclose(out);
	assert_non_null(strstr(buf, "fallback: ftree passed over"));
	assert_non_null(strstr(buf, "routing: FAILED"));
	assert_non_null(strstr(buf, "2 disconnected parts"));
	free(buf);
	sm_dryrun_free(d);
	sm_dryrun_free(NULL);
}

static struct sm_fabric *gen_tree(unsigned hosts, unsigned radix, double remove_links)
{
	struct sm_gen_params gp;
	struct sm_fabric *f = sm_fabric_new();
	char err[256] = "";

	assert_non_null(f);
	sm_gen_params_init(&gp);
	gp.hosts = hosts;
	gp.radix = radix;
	gp.remove_links = remove_links;
	gp.seed = 3;
	if (sm_gen_fat_tree(&gp, f, err, sizeof(err)))
		fail_msg("gen: %s", err);
	return f;
}

/*
 * The reference of a plane: its fat-tree shape, that shape built complete and
 * routed by ftree, and the shift-congestion bound of its own cabling. A full
 * non-blocking tree under destination routing has EBB well under 1.0.
 */
static void test_reference(void **state)
{
	struct sm_metrics_opts o = { .n_random = 20, .seed = 5 };
	struct sm_route_metrics ref;
	struct sm_dr_shape sh, sh2;
	char err[256] = "";

	(void)state;
	struct sm_fabric *f = gen_tree(32, 8, 0);  /* full 2-level radix 8: 8 leaves of 4 hosts, 4 uplinks */
	assert_int_equal(sm_dr_shape_find(f, 0, &sh), 0);
	assert_true(sh.found);
	assert_int_equal(sh.levels, 2);
	assert_int_equal(sh.radix, 8);
	assert_int_equal(sh.down, 4);
	assert_int_equal(sh.up, 4);
	assert_int_equal(sh.leaves, 8);
	assert_int_equal(sh.hosts, 32);
	assert_int_equal(sh.sw_links_full, 32);
	assert_int_equal(sh.shift_bound, 1);
	assert_int_equal(sm_dr_reference(&sh, &o, &ref, err, sizeof(err)), 0);
	assert_int_equal(ref.unreachable, 0);
	assert_int_equal(ref.shift_max_congestion, 1);
	assert_int_equal(ref.hops_max, 4);           /* 2 switch-to-switch links + 2 host links */
	assert_true(ref.ebb > 0.4 && ref.ebb < 0.9); /* destination routing: never 1.0 */
	assert_true(ref.efi_max_over_mean < 1.0001);
	sm_fabric_free(f);

	/* degraded: same shape and reference; a leaf short of uplinks forces shift congestion >= 2 */
	f = gen_tree(32, 8, 0.2);
	assert_int_equal(sm_dr_shape_find(f, 0, &sh2), 0);
	assert_true(sh2.found);
	assert_true(sm_dr_shape_same(&sh, &sh2));
	assert_true(sh2.shift_bound >= 2);
	assert_true(sh2.tight_leaf != SM_NONE && sh2.tight_up < 4 && sh2.tight_hosts == 4);
	assert_int_equal(sh2.shift_bound, (sh2.tight_hosts + sh2.tight_up - 1) / sh2.tight_up);
	sm_fabric_free(f);

	/*
	 * every leaf short of one uplink: the most uplinks found (3) would give
	 * an oversubscribed 4:3 reference; the 4 spines say 4 (the same tree)
	 */
	f = gen_tree(32, 8, 0);
	for (uint32_t n = 0, leaf = 0; n < f->n_nodes; n++) {
		unsigned hosts = 0, up = 0;
		if (f->nodes[n].type != SM_NODE_SWITCH)
			continue;
		for (unsigned p = 1; p <= f->nodes[n].nports; p++) {
			uint32_t q = sm_port(f, n, p)->peer_node;
			hosts += q != SM_NONE && f->nodes[q].type == SM_NODE_CA;
		}
		/* leaf i loses its uplink number i mod 4: each spine keeps 6 of its 8 links */
		for (unsigned p = 1; hosts && p <= f->nodes[n].nports; p++) {
			uint32_t q = sm_port(f, n, p)->peer_node;
			if (q != SM_NONE && f->nodes[q].type == SM_NODE_SWITCH && up++ == leaf % 4) {
				sm_fabric_unlink(f, n, p);
				break;
			}
		}
		leaf += hosts > 0;
	}
	assert_int_equal(sm_dr_shape_find(f, 0, &sh2), 0);
	assert_true(sh2.found);
	assert_int_equal(sh2.up, 4);
	assert_true(sm_dr_shape_same(&sh, &sh2));
	assert_int_equal(sh2.sw_links_full, 32);
	assert_true(sh2.bisection_left > 0.7499 && sh2.bisection_left < 0.7501); /* 24 of 32 links */
	assert_int_equal(sh2.bis_complete, 16);
	assert_true(sh2.bisection_cut_left > 0 && sh2.bisection_cut_left <= sh2.bisection_left);
	sm_fabric_free(f);

	/* 3 levels: 64 hosts on radix 8 */
	f = gen_tree(64, 8, 0);
	assert_int_equal(sm_dr_shape_find(f, 0, &sh), 0);
	assert_true(sh.found);
	assert_int_equal(sh.levels, 3);
	assert_int_equal(sm_dr_reference(&sh, &o, &ref, err, sizeof(err)), 0);
	assert_int_equal(ref.shift_max_congestion, 1);
	assert_int_equal(ref.hops_max, 6);
	sm_fabric_free(f);

	/* not a tree: leaves linked to each other; no reference, and it says why */
	struct sm_dryrun *d = small();
	assert_int_equal(sm_dr_shape_find(d->f, 0, &sh), 0);
	assert_false(sh.found);
	assert_non_null(strstr(sh.why, "not a fat tree"));
	assert_int_equal(sm_dr_reference(&sh, &o, &ref, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not a fat tree"));
	sm_dryrun_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lids_fill_gaps),
		cmocka_unit_test(test_lids_exhausted),
		cmocka_unit_test(test_report_writers),
		cmocka_unit_test(test_reference),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
