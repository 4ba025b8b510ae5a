/* SPDX-License-Identifier: MIT */
/*
 * The daemon core's per-plane views (daemon.h smd_dmn_view_get): none
 * before the first cycle, then the swept fabric with its LIDs and the LFTs
 * that were programmed; a view held across a cycle stays valid and the
 * next cycle publishes a new one.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/daemon.h"
#include "routing/engine.h"
#include "config/smdconf.h"
#include "fixture/fixture.h"

static char state[64];

static void views(void **unused)
{
	(void)unused;
	const struct smd_view *v = NULL, *v2 = NULL;
	struct smd_dmn *d = fx_daemon_net4("/tmp/smd-view-XXXXXX", state, sizeof(state));

	fx_wait_sweeps(d, 1, NULL);
	assert_int_equal(smd_dmn_view_get(d, 1, &v), -ENOENT);   /* no such plane */
	assert_int_equal(smd_dmn_view_get(d, 0, &v), 0);
	assert_int_equal(v->plane, 0);
	assert_int_equal(v->cycle, 1);
	struct sm_fabric_counts c;
	sm_fabric_count(v->fabric, 0, &c);
	assert_true(c.switches > 0 && c.cas > 0);
	/* every LID-bearing CA port is routed by every switch */
	unsigned checked = 0;
	for (uint32_t n = 0; n < v->fabric->n_nodes; n++) {
		const struct sm_node *nd = sm_node(v->fabric, n);
		if (nd->type != SM_NODE_SWITCH)
			continue;
		for (uint32_t m = 0; m < v->fabric->n_nodes; m++) {
			const struct sm_node *ca = sm_node(v->fabric, m);
			if (ca->type != SM_NODE_CA)
				continue;
			for (unsigned p = 1; p <= ca->nports; p++) {
				uint16_t lid = sm_port(v->fabric, m, p)->lid;
				if (!lid)
					continue;
				assert_int_not_equal(sm_lfts_get(v->lfts, n, lid), SM_LFT_NONE);
				checked++;
			}
		}
	}
	assert_true(checked > 0);

	/* held across the next cycle: still valid; the new cycle has its own */
	smd_dmn_request_sweep(d);
	fx_wait_sweeps(d, 2, NULL);
	assert_int_equal(smd_dmn_view_get(d, 0, &v2), 0);
	assert_ptr_not_equal(v, v2);
	assert_int_equal(v2->cycle, 2);
	sm_fabric_count(v->fabric, 0, &c);
	assert_true(c.switches > 0);
	smd_dmn_view_put(v);
	smd_dmn_free(d);            /* v2 outlives the daemon */
	sm_fabric_count(v2->fabric, 0, &c);
	assert_true(c.cas > 0);
	smd_dmn_view_put(v2);
	smd_dmn_view_put(NULL);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", state);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(views) };
	return cmocka_run_group_tests(tests, NULL, NULL);
}
