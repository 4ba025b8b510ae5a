/* SPDX-License-Identifier: MIT */
/*
 * DOC: route_bench: time the ftree engine and evaluate its routes
 *
 * Builds fat trees with the project generator (smd/model/gen.h, the same fabric
 * `smctl topo gen fat-tree` writes; --ftbuild uses bench/ftbuild.c
 * instead), P planes, optionally with a seeded share of switch-switch links
 * or some switches removed per plane,
 * routes every plane with sm_engine_ftree, and prints one line per plane
 * and a total: routing time (best of --repeat runs), the validator's verdict
 * (validate.h), metrics (metrics.h) and the process's peak RSS. Used by
 * bench/routing.sh.
 */
#include "config.h"
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "routing/engine.h"
#include "bench.h"
#include "ftbuild.h"
#include "model/gen.h"
#include "routing/metrics.h"
#include "routing/validate.h"

extern const struct sm_engine_ops sm_engine_ftree;

static void usage(void)
{
	fprintf(stderr,
		"usage: route_bench [--levels 2|3] [--radix K] [--hosts N] [--planes P] [--remove FRAC]\n"
		"                   [--remove-switches N] [--seed S] [--perms N] [--no-shift] [--no-metrics]\n"
		"                   [--repeat R] [--lmc L (ftbuild only)] [--ftbuild] [--no-validate]\n"
		"                   [--checksum]\n");
}

int main(int argc, char **argv)
{
	unsigned levels = 2, radix = 64, hosts = 2048, planes = 1, perms = 100, repeat = 5, lmc = 0;
	int no_shift = 0, no_metrics = 0, use_ftb = 0, no_validate = 0, checksum = 0;
	unsigned rm_sw = 0;
	double remove = 0;
	uint64_t seed = 1;
	static const struct option lo[] = {
		{ "levels", 1, 0, 'l' }, { "radix", 1, 0, 'k' }, { "hosts", 1, 0, 'n' },
		{ "planes", 1, 0, 'p' }, { "remove", 1, 0, 'r' }, { "seed", 1, 0, 's' },
		{ "perms", 1, 0, 'P' }, { "no-shift", 0, 0, 'S' }, { "no-metrics", 0, 0, 'M' },
		{ "repeat", 1, 0, 'R' }, { "lmc", 1, 0, 'L' }, { "ftbuild", 0, 0, 'F' },
		{ "remove-switches", 1, 0, 'W' }, { "no-validate", 0, 0, 'V' }, { "checksum", 0, 0, 'C' }, { 0, 0, 0, 0 }
	};
	int c;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'l': levels = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'k': radix = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'n': hosts = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'p': planes = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'r': remove = strtod(optarg, NULL); break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'P': perms = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'S': no_shift = 1; break;
		case 'M': no_metrics = 1; break;
		case 'R': repeat = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'L': lmc = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'F': use_ftb = 1; break;
		case 'V': no_validate = 1; break;
		case 'C': checksum = 1; break;
		case 'W': rm_sw = (unsigned)strtoul(optarg, NULL, 0); break;
		default: usage(); return 2;
		}
	}
	if (planes < 1 || planes > SM_MAX_PLANES || (levels != 2 && levels != 3) || !repeat || lmc > 7) {
		usage();
		return 2;
	}
	double t0 = sm_mono_sec();
	struct sm_fabric *f = sm_fabric_new();
	if (!f)
		return 1;
	if (use_ftb) {
		struct ftb_shape sh;
		if (levels == 2)
			ftb_shape_2level(&sh, radix, hosts);
		else
			ftb_shape_3level(&sh, radix, hosts);
		sh.lmc = lmc;
		for (unsigned p = 0; p < planes; p++) {
			int rc = ftb_build(f, p, &sh, (uint64_t)(p + 1) << 40);
			if (rc) {
				fprintf(stderr, "route_bench: build plane %u: %s\n", p, strerror(-rc));
				return 1;
			}
			if (remove > 0) {
				rc = ftb_remove_links(f, p, remove, seed + p);
				if (rc < 0)
					return 1;
				printf("plane %u: removed %d switch-switch links (%.1f%%, seed %" PRIu64 ")\n", p,
				       rc, remove * 100, seed + p);
			}
		}
	} else {
		struct sm_gen_params gp;
		char err[256];
		bench_gen_params(&gp, hosts, radix, levels, planes, remove, seed);
		gp.remove_switches = rm_sw;
		if (sm_gen_fat_tree(&gp, f, err, sizeof(err))) {
			fprintf(stderr, "route_bench: generator: %s\n", err);
			return 1;
		}
		if (remove > 0 || rm_sw)
			printf("generator: removed %.1f%% of switch-switch links and %u switches per plane, seed %" PRIu64
			       "\n", remove * 100, rm_sw, seed);
	}
	struct sm_fabric_counts cn;
	sm_fabric_count(f, -1, &cn);
	printf("fabric: %u planes, %u switches, %u CAs, %u switch links; built in %.1f ms\n", planes,
	       cn.switches, cn.cas, cn.sw_links, (sm_mono_sec() - t0) * 1e3);

	struct sm_lfts *out[SM_MAX_PLANES] = { 0 };
	double best_total = 1e30, best_plane[SM_MAX_PLANES], best_cpu = 1e30, best_pcpu[SM_MAX_PLANES];
	double best_acpu[SM_MAX_PLANES];
	for (unsigned p = 0; p < planes; p++)
		best_plane[p] = best_pcpu[p] = best_acpu[p] = 1e30;
	void *st = NULL;
	char err[256];
	if (sm_engine_ftree.init(&st, NULL, NULL, err, sizeof(err))) {
		fprintf(stderr, "route_bench: %s\n", err);
		return 1;
	}
	int status = 0, invalid = 0;
	for (unsigned rep = 0; rep < repeat; rep++) {
		double ta = sm_mono_sec(), ca = bench_cpu_sec();
		for (unsigned p = 0; p < planes; p++) {
			double tp = sm_mono_sec(), cp = bench_cpu_sec();
			sm_lfts_free(out[p]);
			out[p] = sm_lfts_new(f, p);
			double ac = bench_cpu_sec() - cp;
			if (ac < best_acpu[p])
				best_acpu[p] = ac;
			struct sm_route_ctx ctx = { .fabric = f, .plane = p, .out = out[p] };
			int rc = out[p] ? sm_engine_ftree.route(st, &ctx) : -ENOMEM;
			if (rc) {
				fprintf(stderr, "route_bench: plane %u: %s (%s)\n", p, ctx.msg, strerror(-rc));
				status = 1;
			} else if (rep == 0) {
				printf("plane %u: %s\n", p, ctx.msg);
			}
			double dt = sm_mono_sec() - tp, dc = bench_cpu_sec() - cp;
			if (dt < best_plane[p])
				best_plane[p] = dt;
			if (dc < best_pcpu[p])
				best_pcpu[p] = dc;
		}
		double dt = sm_mono_sec() - ta, dc = bench_cpu_sec() - ca;
		if (dt < best_total)
			best_total = dt;
		if (dc < best_cpu)
			best_cpu = dc;
	}
	sm_engine_ftree.free(st);
	for (unsigned p = 0; p < planes; p++)
		printf("plane %u: ftree routing %.2f ms wall, %.2f ms CPU (LFT alloc included, best of %u; the alloc alone %.2f ms CPU)\n",
		       p, best_plane[p] * 1e3, best_pcpu[p] * 1e3, repeat, best_acpu[p] * 1e3);
	for (unsigned p = 0; p < planes && checksum && !status; p++) {
		/* FNV-1a of the whole table: LFTs compared byte for byte across builds */
		uint64_t h = 0xcbf29ce484222325ull;
		size_t sz = (size_t)out[p]->n_switches * ((size_t)out[p]->top_lid + 1);
		for (size_t i = 0; i < sz; i++)
			h = (h ^ out[p]->ports[i]) * 0x100000001b3ull;
		printf("plane %u: LFT checksum %016" PRIx64 " (%zu entries)\n", p, h, sz);
	}
	printf("all planes: ftree routing %.2f ms wall, %.2f ms CPU (best of %u)\n", best_total * 1e3,
	       best_cpu * 1e3, repeat);

	for (unsigned p = 0; p < planes && !status && !no_validate; p++) {
		struct sm_validation v;
		if (sm_validate(f, p, out[p], 0, &v) || !sm_validate_ok(&v, 0))
			invalid = 1; /* still evaluated below, but the exit status says so */
		printf("plane %u validation (%.1f ms): %s\n", p, v.seconds * 1e3, v.msg);
		if (v.credit_loop == 1) {
			/* is the loop only among routes to switch LIDs? check the CA LIDs' routes alone */
			struct sm_lfts *ca = sm_lfts_dup(out[p]);
			if (!ca)
				return 1;
			for (uint32_t t = 0; t < ca->n_switches; t++) {
				const struct sm_port *p0 = sm_port(f, ca->sw_node[t], 0);
				for (unsigned i = 0; p0->lid && i < (1u << p0->lmc); i++)
					for (uint32_t s = 0; s < ca->n_switches; s++)
						if ((unsigned)p0->lid + i <= ca->top_lid)
							sm_lfts_row(ca, s)[p0->lid + i] = SM_LFT_NONE;
			}
			int cl = sm_cdg_check(f, p, ca, NULL);
			printf("plane %u: CDG of the routes to CA LIDs alone: %s\n", p,
			       cl == 0 ? "acyclic (the loop needs routes to switch LIDs)" : cl == 1 ? "cycle" : "error");
			sm_lfts_free(ca);
		}
	}
	for (unsigned p = 0; p < planes && !no_metrics && !status; p++) {
		struct sm_metrics_opts mo = { .n_random = perms, .seed = seed, .skip_shift = no_shift };
		struct sm_route_metrics m;
		double c0 = bench_cpu_sec();
		int rc = sm_metrics_compute(f, p, out[p], &mo, &m);
		double mc = bench_cpu_sec() - c0;
		if (rc) {
			fprintf(stderr, "route_bench: metrics: %s\n", strerror(-rc));
			status = 1;
			break;
		}
		printf("plane %u metrics: hosts %u pairs %" PRIu64 " unreachable %" PRIu64 " loops %" PRIu64
		       " hops %u/%.3f/%u minimal %.4f efi_max %" PRIu64 " efi_max/mean %.3f shift_max %u"
		       " rand_max %.2f ebb %.4f credit_loop %d (%.2f s wall, %.2f s CPU)\n",
		       p, m.hosts, m.pairs, m.unreachable, m.loops, m.hops_min, m.hops_avg, m.hops_max,
		       m.minimal_share, m.efi_max, m.efi_max_over_mean, m.shift_max_congestion,
		       m.rand_max_congestion_mean, m.ebb, m.credit_loop, m.seconds, mc);
	}
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("peak RSS: %.1f MB\n", (double)ru.ru_maxrss / 1024.0);
	for (unsigned p = 0; p < planes; p++)
		sm_lfts_free(out[p]);
	sm_fabric_free(f);
	return status || invalid;
}
