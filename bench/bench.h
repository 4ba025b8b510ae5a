/* SPDX-License-Identifier: MIT */
#ifndef SMD_BENCH_BENCH_H
#define SMD_BENCH_BENCH_H
/*
 * DOC: what the benchmark programs share (header-only). Wall time is
 * lib/clock.h's sm_mono_sec(); here: this thread's CPU time (the machine is
 * shared, so wall time alone says little), the seeded mixer of lib/mix.h and the
 * generator parameters every benchmark sets from its options.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/mix.h"
#include "mock/mock.h"
#include "model/gen.h"
#include "routing/registry.h"

static inline double bench_cpu_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}


/*
 * The mock of the bring-up benchmarks: the emulated SMAs' CPU counted apart
 * from the SM's (cpu_account); with LATENCY_US, every answer that late in
 * real time; 0: virtual time, answers at once.
 */
static inline void bench_mock_cfg(struct sm_mock_cfg *mc, unsigned latency_us)
{
	sm_mock_cfg_default(mc);
	mc->cpu_account = true;
	if (latency_us) {
		mc->real_time = true;
		mc->delay_ppm = 1000000;
		mc->delay_us = latency_us;
	}
}

/* A fresh state directory /tmp/smd-NAME-bench-XXXXXX for the SM in dir[64]; 1 if none could be made. */
static inline int bench_state_dir(char dir[64], const char *name)
{
	snprintf(dir, 64, "/tmp/smd-%s-bench-XXXXXX", name);
	return !mkdtemp(dir);
}

/* Remove what the SM keeps in a bench_state_dir() (guid2lid, state) and the directory. */
static inline void bench_state_dir_rm(const char *dir)
{
	static const char *const files[] = { "guid2lid", "state" };
	char p[128];

	for (unsigned i = 0; i < 2; i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, files[i]);
		unlink(p);
	}
	rmdir(dir);
}

/* sm_gen_params_init() and the options every benchmark takes. */
static inline void bench_gen_params(struct sm_gen_params *gp, unsigned hosts, unsigned radix, unsigned levels,
				    unsigned planes, double remove, uint64_t seed)
{
	sm_gen_params_init(gp);
	gp->hosts = hosts, gp->radix = radix, gp->levels = levels, gp->planes = planes;
	gp->remove_links = remove, gp->seed = seed;
}

/* --hosts, --radix, --levels: the generated tree's options (bench_fat_tree); 1 when OPT is one (set to V) */
static inline int bench_tree_opt(const char *opt, unsigned v, unsigned *hosts, unsigned *radix, unsigned *levels)
{
	unsigned *to = !strcmp(opt, "--hosts") ? hosts : !strcmp(opt, "--radix") ? radix :
		       !strcmp(opt, "--levels") ? levels : NULL;

	if (to)
		*to = v;
	return to != NULL;
}

/* A generated fat tree without LIDs (what the mock benchmarks bring up); NULL: PROG: the reason on stderr. */
static inline struct sm_fabric *bench_fat_tree(const char *prog, unsigned hosts, unsigned radix, unsigned levels)
{
	struct sm_gen_params gp;
	struct sm_fabric *f = sm_fabric_new();
	char err[512] = "out of memory";

	sm_gen_params_init(&gp);
	gp.hosts = hosts, gp.radix = radix, gp.levels = levels;
	gp.no_lids = 1;
	if (!f || sm_gen_fat_tree(&gp, f, err, sizeof(err))) {
		fprintf(stderr, "%s: gen: %s\n", prog, err);
		sm_fabric_free(f);
		return NULL;
	}
	return f;
}

/* The built-in engines' registry and the chain SPEC; 1: PROG: the reason on stderr (free both either way). */
static inline int bench_chain(const char *prog, const char *spec, struct sm_registry **reg, struct sm_chain **chain)
{
	char err[512] = "out of memory";

	*chain = NULL;
	*reg = sm_registry_new(NULL);
	if (!*reg || sm_chain_new(*reg, spec, NULL, NULL, chain, err, sizeof(err))) {
		fprintf(stderr, "%s: chain: %s\n", prog, err);
		return 1;
	}
	return 0;
}

#endif
