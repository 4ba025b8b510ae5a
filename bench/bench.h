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

/*
 * Options "--NAME VALUE" (unsigned) and "--NAME" (a flag: *v = 1) into the
 * table's variables. 0, or 2 with a message on stderr (the exit status).
 */
struct bench_opt {
	const char *name;            /* with the dashes */
	unsigned *v;
	int flag;                    /* takes no value */
};
static inline int bench_parse(int argc, char **argv, const struct bench_opt *o, size_t n, const char *prog)
{
	for (int i = 1; i < argc; i++) {
		size_t k = 0;
		while (k < n && strcmp(argv[i], o[k].name))
			k++;
		if (k == n) {
			fprintf(stderr, "%s: unknown option %s\n", prog, argv[i]);
			return 2;
		}
		if (o[k].flag) {
			*o[k].v = 1;
			continue;
		}
		if (i + 1 >= argc) {
			fprintf(stderr, "%s: %s needs a value\n", prog, argv[i]);
			return 2;
		}
		*o[k].v = (unsigned)strtoul(argv[++i], NULL, 0);
	}
	return 0;
}

#endif
