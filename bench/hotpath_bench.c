/* SPDX-License-Identifier: MIT */
/*
 * DOC: hotpath_bench: pin a profile of random permutations on a generated fat tree
 *
 * Builds a fat tree with the generator (smd/model/gen.h), routes every plane with
 * sm_engine_ftree, writes a text traffic profile of --perms random
 * permutations of the hosts (by bare host name, so the loader splits each
 * flow over the planes) and loads it back with sm_profile_parse(), then
 * pins it plane by plane with sm_hotpath_pin(). Prints, per plane, max link
 * load before/after by our own evaluator and by sm_metrics_max_load(), the
 * host-link bound, profile EBB, flows pinned, LFT entries/blocks changed
 * and timings (pinning: best of --repeat). Used by bench/hotpath.sh.
 *
 * Weights of the permutations (--weights): equal (all 1), linear (perm i
 * has weight i+1), random (uniform in [1, 4), seeded).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "routing/engine.h"
#include "model/gen.h"
#include "routing/hotpath/hotpath.h"
#include "routing/metrics.h"
#include "model/profile.h"
#include "routing/registry.h"
#include "routing/validate.h"
#include "bench.h"

static uint64_t rng;

static void usage(void)
{
	fprintf(stderr, "usage: hotpath_bench [--hosts N] [--radix K] [--levels 2|3] [--planes P] [--perms M]\n"
			"                     [--weights equal|linear|random] [--seed S] [--top-k K] [--share X]\n"
			"                     [--method auto|colour|greedy] [--no-improve] [--repeat R]\n"
			"                     [--write-profile FILE] [--profile FILE] [--remove-links FRAC]\n");
}

int main(int argc, char **argv)
{
	unsigned hosts = 2048, radix = 64, levels = 2, planes = 1, perms = 1, repeat = 3;
	const char *weights = "equal", *write_profile = NULL, *read_profile = NULL;
	uint64_t seed = 1;
	double remove = 0;
	struct sm_hotpath_opts o;
	sm_hotpath_opts_init(&o);
	static const struct option lo[] = {
		{ "hosts", 1, 0, 'n' }, { "radix", 1, 0, 'k' }, { "levels", 1, 0, 'l' }, { "planes", 1, 0, 'p' },
		{ "perms", 1, 0, 'm' }, { "weights", 1, 0, 'w' }, { "seed", 1, 0, 's' }, { "top-k", 1, 0, 'K' },
		{ "share", 1, 0, 'S' }, { "method", 1, 0, 'M' }, { "no-improve", 0, 0, 'I' }, { "repeat", 1, 0, 'R' },
		{ "write-profile", 1, 0, 'W' }, { "profile", 1, 0, 'P' }, { "remove-links", 1, 0, 'r' },
		{ 0, 0, 0, 0 }
	};
	int c;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'n': hosts = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'k': radix = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'l': levels = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'p': planes = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'm': perms = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'w': weights = optarg; break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'K': o.top_k = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'S': o.share = strtod(optarg, NULL); break;
		case 'M':
			o.method = !strcmp(optarg, "greedy") ? SM_HOTPATH_GREEDY
				   : !strcmp(optarg, "colour") ? SM_HOTPATH_COLOUR : SM_HOTPATH_AUTO;
			break;
		case 'I': o.no_improve = 1; break;
		case 'R': repeat = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'W': write_profile = optarg; break;
		case 'P': read_profile = optarg; break;
		case 'r': remove = strtod(optarg, NULL); break;
		default: usage(); return 2;
		}
	}
	if (!repeat)
		repeat = 1;
	char err[512];
	struct sm_gen_params gp;
	bench_gen_params(&gp, hosts, radix, levels, planes, remove, seed);
	struct sm_fabric *f = sm_fabric_new();
	double t0 = sm_mono_sec();
	if (!f || sm_gen_fat_tree(&gp, f, err, sizeof(err))) {
		fprintf(stderr, "hotpath_bench: gen: %s\n", err);
		return 1;
	}
	double t_gen = sm_mono_sec() - t0;

	/* ftree per plane */
	struct sm_lfts *base[SM_MAX_PLANES] = { 0 };
	double t_ftree = 0;
	for (unsigned p = 0; p < planes; p++) {
		struct sm_route_ctx ctx;
		memset(&ctx, 0, sizeof(ctx));
		ctx.fabric = f;
		ctx.plane = p;
		ctx.out = base[p] = sm_lfts_new(f, p);
		t0 = sm_mono_sec();
		if (!ctx.out || sm_engine_ftree.route(NULL, &ctx)) {
			fprintf(stderr, "hotpath_bench: ftree plane %u: %s\n", p, ctx.msg);
			return 1;
		}
		t_ftree += sm_mono_sec() - t0;
	}

	/* profile text: perms random permutations by host name */
	char *text = NULL;
	size_t tlen = 0;
	if (!read_profile) {
		FILE *mem = open_memstream(&text, &tlen);
		uint32_t *pm = malloc(hosts * sizeof(*pm));
		rng = seed * 7919 + 17;
		fprintf(mem, "# hotpath_bench: %u random permutations of %u hosts, weights %s, seed %llu\n", perms, hosts,
			weights, (unsigned long long)seed);
		for (unsigned m = 0; m < perms; m++) {
			double w = !strcmp(weights, "linear") ? m + 1.0
				   : !strcmp(weights, "random") ? 1.0 + 3.0 * (double)(sm_splitmix64(&rng) >> 11) / 9007199254740992.0
								: 1.0;
			for (uint32_t i = 0; i < hosts; i++)
				pm[i] = i;
			for (uint32_t i = hosts - 1; i > 0; i--) {
				uint32_t j = (uint32_t)(sm_splitmix64(&rng) % (i + 1)), x = pm[i];
				pm[i] = pm[j];
				pm[j] = x;
			}
			for (uint32_t i = 0; i < hosts; i++)
				if (pm[i] != i)
					fprintf(mem, "host%05u host%05u %.6f\n", i, pm[i], w);
		}
		fclose(mem);
		free(pm);
		if (write_profile) {
			FILE *out = fopen(write_profile, "w");
			if (!out || fwrite(text, 1, tlen, out) != tlen || fclose(out)) {
				fprintf(stderr, "hotpath_bench: cannot write %s\n", write_profile);
				return 1;
			}
		}
	}
	struct sm_profile *prof = NULL;
	t0 = sm_mono_sec();
	int rc = read_profile ? sm_profile_load(f, read_profile, NULL, &prof, err, sizeof(err))
			      : sm_profile_parse(f, "bench-profile", text, tlen, NULL, &prof, err, sizeof(err));
	double t_load = sm_mono_sec() - t0;
	free(text);
	if (rc) {
		fprintf(stderr, "hotpath_bench: profile: %s\n", err);
		return 1;
	}
	printf("fabric: %u hosts x %u planes, radix %u, %u levels, %.1f%% switch links removed (gen %.3f s); "
	       "ftree %.1f ms (all planes)\n", hosts, planes, radix, levels, remove * 100, t_gen, t_ftree * 1e3);
	printf("profile: %zu flows (%zu entries, merged %llu) loaded in %.1f ms\n", prof->n_flows,
	       (size_t)prof->stats.entries, (unsigned long long)prof->stats.merged, t_load * 1e3);
	double t_pin_all = 0, t_pin_cpu = 0;
	int ok = 1;
	for (unsigned p = 0; p < planes; p++) {
		struct sm_hotpath_report r;
		struct sm_lfts *out = NULL;
		double best = 1e30, best_cpu = 1e30;
		for (unsigned k = 0; k < repeat; k++) {
			if (k)
				sm_hotpath_report_clear(&r);
			sm_lfts_free(out);
			out = sm_lfts_dup(base[p]);
			t0 = sm_mono_sec();
			double c0 = bench_cpu_sec();
			if (!out || sm_hotpath_pin(f, p, base[p], prof->flows, prof->n_flows, &o, out, &r, err, sizeof(err))) {
				fprintf(stderr, "hotpath_bench: pin plane %u: %s\n", p, err);
				return 1;
			}
			double t = sm_mono_sec() - t0, tc = bench_cpu_sec() - c0;
			best = t < best ? t : best;
			best_cpu = tc < best_cpu ? tc : best_cpu;
		}
		t_pin_all += best;
		t_pin_cpu += best_cpu;
		double mb = sm_metrics_max_load(f, p, base[p], r.flow, r.n_flows);
		double ma = sm_metrics_max_load(f, p, out, r.flow, r.n_flows);
		char line[640];
		sm_hotpath_report_format(&r, line, sizeof(line));
		printf("%s\n", line);
		printf("plane%u: flows %zu pinned %zu | max load before %.4g after %.4g (sm_metrics_max_load: %.4g -> %.4g) | "
		       "host bound %.4g | before/bound %.3f after/bound %.3f | EBB %.3f -> %.3f | LFT %llu entries, %llu blocks, "
		       "%u switches | moves %u | pin %.1f ms wall, %.1f ms CPU (best of %u)\n",
		       p, r.flows, r.pinned, r.max_load_before, r.max_load_after, mb, ma, r.host_bound,
		       r.max_load_before / r.host_bound, r.max_load_after / r.host_bound, r.ebb_before, r.ebb_after,
		       (unsigned long long)r.lft_changed, (unsigned long long)r.lft_blocks_changed, r.lft_switches_changed,
		       r.improve_moves, best * 1e3, best_cpu * 1e3, repeat);
		struct sm_validation vb, va;
		if (sm_validate(f, p, base[p], 0, &vb) || sm_validate(f, p, out, 0, &va)) {
			fprintf(stderr, "hotpath_bench: validation failed to run\n");
			return 1;
		}
		printf("plane%u: sm_validate ftree: %llu endpoint pairs unreachable, %llu switch pairs unreachable, credit loop %d"
		       " | hotpath: %llu, %llu, credit loop %d\n",
		       p, (unsigned long long)vb.unreachable, (unsigned long long)vb.sw_unreachable, vb.credit_loop,
		       (unsigned long long)va.unreachable, (unsigned long long)va.sw_unreachable, va.credit_loop);
		if (va.unreachable || va.credit_loop || va.sw_unreachable > vb.sw_unreachable)
			ok = 0;
		if (fabs(mb - r.max_load_before) > 1e-6 * mb || fabs(ma - r.max_load_after) > 1e-6 * ma || r.unroutable) {
			printf("plane%u: MISMATCH between evaluators or unroutable flows (%zu)\n", p, r.unroutable);
			ok = 0;
		}
		sm_hotpath_report_clear(&r);
		sm_lfts_free(out);
	}
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("total: pin %.1f ms wall, %.1f ms CPU over %u planes; peak RSS %.1f MB\n", t_pin_all * 1e3,
	       t_pin_cpu * 1e3, planes, ru.ru_maxrss / 1024.0);
	sm_profile_free(prof);
	for (unsigned p = 0; p < planes; p++)
		sm_lfts_free(base[p]);
	sm_fabric_free(f);
	return ok ? 0 : 1;
}
