/* SPDX-License-Identifier: MIT */
/*
 * planes_bench PREFIX PLANES LATENCY_US RUNS [FAIL_PLANE]
 *
 * Brings up 1 plane, then PLANES planes, of the mock fabrics PREFIX.0 ..
 * PREFIX.(PLANES-1) (e.g. from `smctl topo gen ... --planes 8 --split`)
 * with the multi-plane driver smd uses, RUNS times each (alternating),
 * and prints the median wall times and their ratio.
 *
 * LATENCY_US = 0: virtual time, the emulated switches answer at once and
 * the run is pure CPU (emulation + SM). LATENCY_US > 0: every answer is
 * held back that long in real time (a model of a switch management CPU
 * and the wire), which is what bounds a real SM and what concurrency
 * across planes overlaps.
 *
 * CPU: the process's CPU time (getrusage) of each run, and the share the
 * emulated switches took (the mock's cpu_account: thread CPU time inside
 * its send); the rest is the SM's own, printed per plane, which must not
 * grow with the number of planes.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "lib/clock.h"
#include "mock/mock.h"
#include "sm/multiplane.h"
#include "routing/registry.h"
#include "mad/fault.h"

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double plane_s[SM_MAX_PLANES];
static double sm_cpu_s;   /* of the last run: process CPU minus the emulator's */
static double emu_cpu_s;  /* of the last run: the emulated switches' */
static uint64_t smps;     /* of the last run: requests the mocks got */

static double proc_cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	       (double)ru.ru_stime.tv_usec / 1e6;
}

static double run(const char *prefix, unsigned n, unsigned latency_us, int fail_plane, unsigned *down)
{
	struct sm_mock *m[SM_MAX_PLANES] = { 0 };
	struct sm_mp_plane pl[SM_MAX_PLANES];
	struct sm_registry *reg = sm_registry_new("/nonexistent");
	struct sm_mock_cfg mc;
	struct sm_mp_cfg cfg;
	char err[512], path[4096];

	memset(pl, 0, sizeof(pl));
	bench_mock_cfg(&mc, latency_us);
	for (unsigned i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s.%u", prefix, i);
		if (sm_mock_load(path, &mc, &m[i], err, sizeof(err))) {
			fprintf(stderr, "%s\n", err);
			exit(1);
		}
		sm_mock_attach(m[i], sm_mock_default_port(m[i], 0), &pl[i].t);
		if ((int)i == fail_plane) {
			struct sm_transport *w;
			/* the wire to this plane dies after 2,000 MADs: mid-discovery */
			if (!sm_transport_lossy_wrap(pl[i].t, 2000, &w))
				pl[i].t = w;
		}
		pl[i].index = i;
		if (sm_chain_new(reg, "ftree,minhop", NULL, NULL, &pl[i].chain, err, sizeof(err))) {
			fprintf(stderr, "%s\n", err);
			exit(1);
		}
	}
	memset(&cfg, 0, sizeof(cfg));
	sm_cfg_default(&cfg.base);
	struct sm_plane_lids *lids = NULL;
	sm_plane_lids_open(NULL, 0, NULL, NULL, &lids, err, sizeof(err));
	cfg.lids = lids;
	double t0 = sm_mono_sec(), c0 = proc_cpu_s();
	*down = sm_multiplane_bringup(pl, n, &cfg);
	double t = sm_mono_sec() - t0, emu = 0;
	smps = 0;
	for (unsigned i = 0; i < n; i++) {
		struct sm_mock_stats ms;
		sm_mock_stats(m[i], &ms);
		emu += (double)ms.emu_cpu_ns / 1e9;
		smps += ms.requests;
	}
	emu_cpu_s = emu;
	sm_cpu_s = proc_cpu_s() - c0 - emu;
	for (unsigned i = 0; i < n; i++)
		plane_s[i] = pl[i].rc ? -1 : pl[i].end_s;
	for (unsigned i = 0; i < n; i++) {
		sm_chain_free(pl[i].chain);
		sm_transport_close(pl[i].t);
		sm_mock_free(m[i]);
	}
	sm_plane_lids_free(lids);
	sm_registry_free(reg);
	return t;
}

int main(int argc, char **argv)
{
	if (argc != 5 && argc != 6) {
		fprintf(stderr, "usage: planes_bench PREFIX PLANES LATENCY_US RUNS [FAIL_PLANE]\n");
		return 2;
	}
	int fail = argc == 6 ? atoi(argv[5]) : -1;
	unsigned n = (unsigned)atoi(argv[2]), lat = (unsigned)atoi(argv[3]), runs = (unsigned)atoi(argv[4]);
	if (n < 1 || n > SM_MAX_PLANES || runs < 1 || runs > 99)
		return 2;
	double one[99], all[99], cpu1[99], cpun[99], emu1[99], emun[99];
	uint64_t smps1 = 0, smpsn = 0;
	unsigned down = 0, d;
	for (unsigned r = 0; r < runs; r++) {
		one[r] = run(argv[1], 1, lat, -1, &d);
		cpu1[r] = sm_cpu_s;
		emu1[r] = emu_cpu_s;
		smps1 = smps;
		down += d;
		all[r] = run(argv[1], n, lat, -1, &d);
		cpun[r] = sm_cpu_s / n;
		emun[r] = emu_cpu_s / n;
		smpsn = smps / n;
		down += d;
	}
	if (fail >= 0) {
		double healthy_max = 0, with_fail_max = 0, t;
		for (unsigned i = 0; i < n; i++)
			healthy_max = plane_s[i] > healthy_max ? plane_s[i] : healthy_max;
		t = run(argv[1], n, lat, fail, &d);
		for (unsigned i = 0; i < n; i++)
			if ((int)i != fail && plane_s[i] > with_fail_max)
				with_fail_max = plane_s[i];
		printf("latency %u us, plane %d dies mid-sweep: %u of %u planes down; healthy planes up after %.3f s "
		       "(all healthy: %.3f s); the failed plane was given up (with its retry) after %.3f s\n",
		       lat, fail, d, n, with_fail_max, healthy_max, t);
		return d == 1 ? 0 : 1;
	}
	qsort(one, runs, sizeof(double), cmp_d);
	qsort(all, runs, sizeof(double), cmp_d);
	qsort(cpu1, runs, sizeof(double), cmp_d);
	qsort(cpun, runs, sizeof(double), cmp_d);
	qsort(emu1, runs, sizeof(double), cmp_d);
	qsort(emun, runs, sizeof(double), cmp_d);
	printf("latency %u us: 1 plane %.3f s, %u planes %.3f s (medians of %u), ratio %.2f; SM CPU per plane "
	       "(emulator's excluded) %.1f ms with 1 plane, %.1f ms with %u%s\n", lat, one[runs / 2], n,
	       all[runs / 2], runs, all[runs / 2] / one[runs / 2], cpu1[runs / 2] * 1e3, cpun[runs / 2] * 1e3, n,
	       down ? " (SOME PLANES FAILED)" : "");
	printf("  per plane: %" PRIu64 " SMPs with 1 plane, %" PRIu64 " with %u; emulated switches' CPU %.1f ms with 1 plane, "
	       "%.1f ms with %u\n", smps1, smpsn, n, emu1[runs / 2] * 1e3, emun[runs / 2] * 1e3, n);
	return down ? 1 : 0;
}
