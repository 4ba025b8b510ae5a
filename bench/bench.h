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
#include <time.h>

#include "lib/clock.h"
#include "lib/mix.h"
#include "model/gen.h"

static inline double bench_cpu_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}


/* sm_gen_params_init() and the options every benchmark takes. */
static inline void bench_gen_params(struct sm_gen_params *gp, unsigned hosts, unsigned radix, unsigned levels,
				    unsigned planes, double remove, uint64_t seed)
{
	sm_gen_params_init(gp);
	gp->hosts = hosts, gp->radix = radix, gp->levels = levels, gp->planes = planes;
	gp->remove_links = remove, gp->seed = seed;
}

#endif
