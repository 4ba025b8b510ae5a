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
#include "dryrun/report.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lids_fill_gaps),
		cmocka_unit_test(test_lids_exhausted),
		cmocka_unit_test(test_report_writers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
