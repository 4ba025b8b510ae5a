/* SPDX-License-Identifier: MIT */
/*
 * mft_bench [--hosts N] [--radix K] [--levels L] [--groups G]: multicast on
 * a generated fat tree behind the mock (bench/mft.sh, BENCHMARKS.md).
 *
 * G synthetic groups (dryrun/mcast.h: group 0 every host, the others one
 * host in eight): the trees alone (sm_mc_route, best of 5), then a cold
 * bring-up with them against one without (MFT blocks, SMPs, time), a second
 * bring-up with the state (no block), one group joining and one member
 * leaving through the MFT-only pass (blocks of that group only). One line
 * of key=value per step. Times: wall (CPU-bound, the mock emulating every
 * switch in the same thread) and the mock's virtual fabric time.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "dryrun/mcast.h"
#include "lib/clock.h"
#include "mock/mock.h"
#include "model/gen.h"
#include "routing/registry.h"
#include "sm/mcast.h"
#include "sm/mft.h"
#include "sm/sm.h"

struct env {
	struct sm_mock *m;
	struct sm_transport *t;
	struct sm_state *st;
};

static int env_new(const struct sm_fabric *model, struct env *e)
{
	char err[256];
	memset(e, 0, sizeof(*e));
	if (sm_mock_new(model, NULL, &e->m, err, sizeof(err)) || sm_mock_attach(e->m, sm_mock_default_port(e->m, 0), &e->t) ||
	    sm_state_new(&e->st)) {
		fprintf(stderr, "mft_bench: mock: %s\n", err);
		return 1;
	}
	return 0;
}

static void env_free(struct env *e)
{
	sm_state_free(e->st);
	sm_transport_close(e->t);
	sm_mock_free(e->m);
}

static int bringup(struct env *e, struct sm_chain *chain, const struct sm_mc_set *set, const char *step,
		   struct sm_fabric **f, struct sm_summary *sum)
{
	struct sm_cfg cfg;
	char err[1024];
	sm_cfg_default(&cfg);
	cfg.mcast = set;
	uint64_t v0 = sm_mock_now_us(e->m);
	if (sm_bringup_state(e->t, chain, &cfg, e->st, sum, f, err, sizeof(err))) {
		fprintf(stderr, "mft_bench: %s: %s\n", step, err);
		return 1;
	}
	printf("step=%s wall_s=%.3f fabric_s=%.3f smps=%" PRIu64 " mft_groups=%u mft_blocks_written=%u "
	       "mft_blocks_read=%u mft_switches_written=%u mft_compute_s=%.4f mft_program_s=%.4f lft_blocks=%u\n",
	       step, sum->total_s, (double)(sm_mock_now_us(e->m) - v0) / 1e6, sum->txn.sent, sum->mft.groups,
	       sum->mft.blocks_written, sum->mft.blocks_read, sum->mft.switches_written, sum->mft.compute_s,
	       sum->mft.program_s, sum->lft_blocks_written);
	return 0;
}

static int pass(struct env *e, const struct sm_mc_set *set, const char *step)
{
	struct sm_cfg cfg;
	struct sm_mft_summary ms;
	char err[1024];
	sm_cfg_default(&cfg);
	cfg.mcast = set;
	uint64_t v0 = sm_mock_now_us(e->m), w0 = sm_mono_us();
	if (sm_mft_update(e->t, &cfg, e->st, &ms, err, sizeof(err))) {
		fprintf(stderr, "mft_bench: %s: %s\n", step, err);
		return 1;
	}
	printf("step=%s wall_s=%.4f fabric_s=%.4f mft_groups=%u mft_blocks_written=%u mft_blocks_read=%u "
	       "mft_switches_written=%u mft_compute_s=%.4f\n", step, (double)(sm_mono_us() - w0) / 1e6,
	       (double)(sm_mock_now_us(e->m) - v0) / 1e6, ms.groups, ms.blocks_written, ms.blocks_read,
	       ms.switches_written, ms.compute_s);
	return 0;
}

/* The synthetic groups of f as a set; drop: the last member of group 1 left. */
static struct sm_mc_set *make_set(const struct sm_fabric *f, unsigned n, uint64_t gen, int drop)
{
	struct sm_mcast_group *g;
	struct sm_mcast_member *m;
	if (sm_mcast_synthetic(f, 0, n, &g, &m))
		return NULL;
	if (drop && n > 1 && g[1].n)
		g[1].n--;
	struct sm_mc_set *s = sm_mc_set_from_groups(f, 0, gen, g, n);
	free(g);
	free(m);
	return s;
}

int main(int argc, char **argv)
{
	unsigned hosts = 2048, radix = 64, levels = 2, groups = 1000;
	char err[512];
	for (int i = 1; i + 1 < argc; i += 2) {
		unsigned v = (unsigned)strtoul(argv[i + 1], NULL, 0);
		if (bench_tree_opt(argv[i], v, &hosts, &radix, &levels))
			continue;
		if (!strcmp(argv[i], "--groups"))
			groups = v;
		else {
			fprintf(stderr, "usage: mft_bench [--hosts N] [--radix K] [--levels L] [--groups G]\n");
			return 2;
		}
	}
	struct sm_fabric *model = bench_fat_tree("mft_bench", hosts, radix, levels);
	struct sm_registry *reg;
	struct sm_chain *chain;
	if (!model || bench_chain("mft_bench", "ftree,minhop", &reg, &chain))
		return 1;
	struct env a, b;
	struct sm_summary sum;
	struct sm_fabric *f = NULL;
	struct sm_mc_set *set = NULL, *more = NULL, *less = NULL;
	int rc = 1;
	if (env_new(model, &a) || env_new(model, &b))
		return 1;
	/* cold, without multicast: the baseline; its fabric names the members */
	if (bringup(&a, chain, NULL, "cold_no_mcast", &f, &sum))
		goto out;
	set = make_set(f, groups, 1, 0);
	more = make_set(f, groups + 1, 2, 0);
	less = make_set(f, groups + 1, 3, 1);
	if (!set || !more || !less)
		goto out;
	double best = 1e9;
	struct sm_mfts *mf = NULL;
	for (int k = 0; k < 5; k++) {
		uint64_t t0 = sm_mono_us();
		if (sm_mc_route(f, set, &mf, NULL, err, sizeof(err))) {
			fprintf(stderr, "mft_bench: %s\n", err);
			goto out;
		}
		double s = (double)(sm_mono_us() - t0) / 1e6;
		best = s < best ? s : best;
		if (k < 4)
			sm_mfts_free(mf);
	}
	uint32_t *cnt = calloc(mf->n_rows, sizeof(*cnt)), lo = UINT32_MAX, hi = 0;
	uint32_t roots = sm_mfts_root_counts(mf, cnt);
	for (uint32_t r = 0; r < mf->n_rows; r++)
		if (cnt[r]) {
			lo = cnt[r] < lo ? cnt[r] : lo;
			hi = cnt[r] > hi ? cnt[r] : hi;
		}
	printf("step=compute hosts=%u switches=%u groups=%u trees=%u seconds=%.4f roots=%u groups_per_root=%u..%u\n",
	       hosts, mf->n_rows, groups, mf->n_groups, best, roots, lo, hi);
	free(cnt);
	sm_mfts_free(mf);
	/* cold with multicast (another fresh mock), then again: nothing to write */
	if (bringup(&b, chain, set, "cold_mcast", NULL, &sum) || bringup(&b, chain, set, "again", NULL, &sum) ||
	    pass(&b, more, "join_one_group") || pass(&b, less, "leave_one_member") || pass(&b, less, "unchanged"))
		goto out;
	rc = 0;
out:
	sm_mc_set_unref(set);
	sm_mc_set_unref(more);
	sm_mc_set_unref(less);
	sm_fabric_free(f);
	sm_fabric_free(model);
	env_free(&a);
	env_free(&b);
	sm_chain_free(chain);
	sm_registry_free(reg);
	return rc;
}
