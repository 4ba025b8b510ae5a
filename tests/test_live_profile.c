/* SPDX-License-Identifier: MIT */
/*
 * A traffic profile on a live (mock) fabric: bring the fabric up with
 * ftree, then again with the same fabric and a random-permutation profile
 * through the hotpath engine. The second run must rewrite only LFT blocks
 * that change, and the LFTs the emulated switches end up holding must
 * carry the permutation with max link load 1 (plain ftree: more).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "model/gen.h"
#include "mock/mock.h"
#include "sm/sm.h"
#include "routing/registry.h"
#include "routing/metrics.h"

/* the LFTs the mock's switches hold, as a table over the swept fabric (which has the LIDs) */
static struct sm_lfts *mock_lfts(struct sm_mock *m, const struct sm_fabric *swept)
{
	const struct sm_fabric *mf = sm_mock_fabric(m);
	struct sm_lfts *l = sm_lfts_new(swept, 0);
	assert_non_null(l);
	for (uint32_t s = 0; s < l->n_switches; s++) {
		uint32_t mn = sm_fabric_find_node(mf, swept->nodes[l->sw_node[s]].guid);
		assert_int_not_equal(mn, SM_NONE);
		for (unsigned lid = 0; lid <= l->top_lid; lid++)
			sm_lfts_row(l, s)[lid] = sm_mock_lft_get(m, mn, (uint16_t)lid);
	}
	return l;
}

static void test_profile_live(void **state)
{
	(void)state;
	struct sm_gen_params p;
	char err[512];
	struct sm_fabric *f = sm_fabric_new();
	sm_gen_params_init(&p);
	p.hosts = 128;
	p.radix = 16;
	assert_int_equal(sm_gen_fat_tree(&p, f, err, sizeof(err)), 0);
	struct sm_mock *m = NULL;
	struct sm_mock_cfg mc;
	sm_mock_cfg_default(&mc);
	assert_int_equal(sm_mock_new(f, &mc, &m, err, sizeof(err)), 0);
	struct sm_transport *t = NULL;
	assert_int_equal(sm_mock_attach(m, sm_mock_default_port(m, 0), &t), 0);
	struct sm_registry *r = sm_registry_new("/nonexistent-smd-plugins");
	struct sm_chain *c1 = NULL, *c2 = NULL;
	assert_int_equal(sm_chain_new(r, "ftree", NULL, NULL, &c1, err, sizeof(err)), 0);
	assert_int_equal(sm_chain_new(r, "hotpath,ftree", NULL, NULL, &c2, err, sizeof(err)), 0);
	struct sm_cfg cfg;
	struct sm_summary s1, s2;
	sm_cfg_default(&cfg);
	struct sm_fabric *swept = NULL;
	assert_int_equal(sm_bringup(t, c1, &cfg, &s1, &swept, err, sizeof(err)), 0);

	/* a random permutation over the hosts, by node description, written as a profile */
	char path[] = "/tmp/smd-live-profile-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *out = fdopen(fd, "w");
	uint32_t hosts[256], n = 0;
	for (uint32_t i = 0; i < swept->n_nodes; i++)
		if (swept->nodes[i].type == SM_NODE_CA)
			hosts[n++] = i;
	assert_int_equal(n, 128);
	uint32_t perm[256];
	for (uint32_t i = 0; i < n; i++)
		perm[i] = i;
	srand(7);
	for (uint32_t i = n - 1; i > 0; i--) {
		uint32_t j = (uint32_t)rand() % (i + 1), x = perm[i];
		perm[i] = perm[j];
		perm[j] = x;
	}
	for (uint32_t i = 0; i < n; i++)
		if (perm[i] != i)
			fprintf(out, "\"%s\" \"%s\" 1\n", swept->nodes[hosts[i]].desc, swept->nodes[hosts[perm[i]]].desc);
	fclose(out);

	/* max link load of that permutation under what the switches hold after plain ftree */
	struct sm_flow fl[256];
	size_t nf = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (perm[i] == i)
			continue;
		fl[nf].src = sm_port_index(swept, hosts[i], 1);
		fl[nf].dst = sm_port_index(swept, hosts[perm[i]], 1);
		fl[nf++].weight = 1;
	}
	struct sm_lfts *before = mock_lfts(m, swept);
	double load_before = sm_metrics_max_load(swept, 0, before, fl, nf);

	/* live change: same fabric, now with the profile */
	cfg.profile_path = path;
	assert_int_equal(sm_bringup(t, c2, &cfg, &s2, NULL, err, sizeof(err)), 0);
	assert_string_equal(s2.engine, "hotpath");
	assert_int_equal(s2.profile_flows, nf);
	struct sm_lfts *after = mock_lfts(m, swept);
	double load_after = sm_metrics_max_load(swept, 0, after, fl, nf);
	print_message("max link load: ftree %.1f, hotpath %.1f\n", load_before, load_after);
	assert_true(load_before > 1.0);
	assert_true(load_after == 1.0);
	/* only the blocks that changed were written */
	uint32_t changed = 0;
	for (uint32_t sw = 0; sw < after->n_switches; sw++)
		for (unsigned b = 0; b * 64 <= after->top_lid; b++)
			if (memcmp(sm_lfts_row(before, sw) + b * 64, sm_lfts_row(after, sw) + b * 64,
				   (b * 64 + 64 <= (unsigned)after->top_lid + 1 ? 64 : after->top_lid + 1 - b * 64)))
				changed++;
	assert_true(changed > 0);
	assert_int_equal(s2.lft_blocks_written, changed);
	assert_int_equal(s2.portinfo_lid_sets, 0);
	assert_int_equal(s2.portinfo_state_sets, 0);

	/* a broken profile fails the route phase with its FILE:LINE and changes nothing */
	out = fopen(path, "w");
	fputs("\"host00000 mlx5_0\" \"host00001 mlx5_0\" -3\n", out);
	fclose(out);
	struct sm_summary s3;
	assert_int_not_equal(sm_bringup(t, c2, &cfg, &s3, NULL, err, sizeof(err)), 0);
	assert_non_null(strstr(err, ":1:"));
	assert_int_equal(s3.lft_blocks_written, 0);
	struct sm_lfts *still = mock_lfts(m, swept);
	assert_memory_equal(still->ports, after->ports, (size_t)after->n_switches * (after->top_lid + 1));

	unlink(path);
	sm_lfts_free(before);
	sm_lfts_free(after);
	sm_lfts_free(still);
	sm_fabric_free(swept);
	sm_chain_free(c1);
	sm_chain_free(c2);
	sm_registry_free(r);
	sm_transport_close(t);
	sm_mock_free(m);
	sm_fabric_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_profile_live),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
