/* SPDX-License-Identifier: MIT */
/*
 * DOC: reroute_bench: incremental routing against a full reroute (issue 17, "the next scale")
 *
 *   reroute_bench [--levels 2|3] [--radix K] [--hosts N] [--remove FRAC] [--seed S]
 *                 [--steps N] [--link K] [--metrics] [--engine CHAIN]
 *
 * Builds a fat tree with bench/ftbuild (FRAC of its switch links removed
 * first, seeded), routes it cold, then N times removes one more switch
 * link (a seeded pick, or the K-th counted from the lowest node: on a
 * 3-level tree of L leaves x U uplinks, K = L x U is the first
 * aggregation switch's first core link) and routes the result twice through the engine
 * chain as the SM does after an incremental sweep: in full (new tables,
 * full validation) and incrementally (the chain's reroute_from and prev:
 * the engine's reroute() from the previous routes, validation of the
 * LIDs it changed only; before it, as the daemon's idle worker does, the
 * previous routes copied into the spare table: prepare_cpu_s, not in the
 * reroute's). Per step, one line: CPU of each (this thread:
 * routing, validation), LIDs/entries/64-LID blocks/switches changed against
 * the previous routes, entries where the two results differ, and with
 * --metrics the worst shift congestion and EBB of both (20 random
 * permutations). The incremental result is the next step's previous.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "ftbuild.h"
#include "routing/metrics.h"
#include "routing/validate.h"

struct diff {
	uint64_t entries, blocks, switches;
};

static struct diff lft_diff(const struct sm_lfts *a, const struct sm_lfts *b)
{
	struct diff d = { 0 };
	for (uint32_t s = 0; s < a->n_switches; s++) {
		const uint8_t *ra = sm_lfts_row(a, s), *rb = sm_lfts_row(b, s);
		uint64_t bl = 0;
		for (uint32_t b0 = 0; b0 <= a->top_lid; b0 += 64) {
			uint32_t n = a->top_lid + 1 - b0 < 64 ? a->top_lid + 1 - b0 : 64, e = 0;
			if (!memcmp(ra + b0, rb + b0, n))
				continue;
			for (uint32_t k = 0; k < n; k++)
				e += ra[b0 + k] != rb[b0 + k];
			d.entries += e;
			bl++;
		}
		d.blocks += bl;
		d.switches += bl > 0;
	}
	return d;
}

/*
 * A remaining switch-switch link, as (node, port): the link-th (counted
 * from the lower node index; ftbuild numbers leaves, then aggregation
 * switches, then cores) when link >= 0, else one picked by the seed.
 */
static int pick(const struct sm_fabric *f, uint64_t seed, int64_t link, uint32_t *node, unsigned *port)
{
	uint64_t n = 0;
	for (int pass = 0; pass < 2; pass++) {
		uint64_t k = pass ? (link >= 0 ? (uint64_t)link : sm_mix64(seed) % n) : 0, i = 0;
		for (uint32_t a = 0; a < f->n_nodes; a++) {
			if (f->nodes[a].type != SM_NODE_SWITCH)
				continue;
			for (unsigned p = 1; p <= f->nodes[a].nports; p++) {
				const struct sm_port *pt = sm_port(f, a, p);
				if (pt->peer_node == SM_NONE || pt->peer_node < a ||
				    f->nodes[pt->peer_node].type != SM_NODE_SWITCH)
					continue;
				if (pass && i == k) {
					*node = a;
					*port = p;
					return 0;
				}
				i++;
			}
		}
		n = i;
		if (!n || (link >= 0 && (uint64_t)link >= n))
			return -1;
	}
	return -1;
}

static void quality(const struct sm_fabric *f, const struct sm_lfts *l, unsigned *shift, double *ebb)
{
	struct sm_route_metrics m;
	struct sm_metrics_opts o = { .n_random = 20, .seed = 1, .skip_cdg = 1 };
	*shift = 0;
	*ebb = 0;
	if (!sm_metrics_compute(f, 0, l, &o, &m)) {
		*shift = m.shift_max_congestion;
		*ebb = m.ebb;
	}
}

int main(int argc, char **argv)
{
	unsigned levels = 3, radix = 32, hosts = 2048, steps = 5, with_metrics = 0;
	double remove = 0;
	uint64_t seed = 1;
	int64_t link = -1;
	const char *engine = "ftree,minhop";
	for (int i = 1; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(o, "--metrics")) {
			with_metrics = 1;
			continue;
		}
		if (!v) {
			fprintf(stderr, "reroute_bench: %s needs a value\n", o);
			return 2;
		}
		i++;
		if (!strcmp(o, "--levels"))
			levels = (unsigned)atoi(v);
		else if (!strcmp(o, "--radix"))
			radix = (unsigned)atoi(v);
		else if (!strcmp(o, "--hosts"))
			hosts = (unsigned)atoi(v);
		else if (!strcmp(o, "--remove"))
			remove = atof(v);
		else if (!strcmp(o, "--seed"))
			seed = strtoull(v, NULL, 0);
		else if (!strcmp(o, "--steps"))
			steps = (unsigned)atoi(v);
		else if (!strcmp(o, "--link"))
			link = strtoll(v, NULL, 0);
		else if (!strcmp(o, "--engine"))
			engine = v;
		else {
			fprintf(stderr, "usage: reroute_bench [--levels 2|3] [--radix K] [--hosts N] [--remove FRAC] "
					"[--seed S] [--steps N] [--link K] [--metrics] [--engine CHAIN]\n");
			return 2;
		}
	}
	struct ftb_shape sh;
	if (levels == 2)
		ftb_shape_2level(&sh, radix, hosts);
	else
		ftb_shape_3level(&sh, radix, hosts);
	struct sm_fabric *f = sm_fabric_new();
	char err[512];
	struct sm_registry *reg = sm_registry_new(NULL);
	struct sm_chain *c = NULL;
	/* the full reroute on a chain of its own: the SM's chain keeps the model of what it routed last (ftree) */
	struct sm_chain *c_full = NULL;
	if (!f || ftb_build(f, 0, &sh, 0) || !reg || sm_chain_new(reg, engine, NULL, NULL, &c, err, sizeof(err)) ||
	    sm_chain_new(reg, engine, NULL, NULL, &c_full, err, sizeof(err))) {
		fprintf(stderr, "reroute_bench: cannot build the tree or the chain %s\n", err);
		return 1;
	}
	if (remove > 0 && ftb_remove_links(f, 0, remove, seed) < 0)
		return 1;
	struct sm_plane_result res;
	struct sm_lfts *prev = NULL;
	double c0 = bench_cpu_sec();
	if (sm_route_chain(c, f, 0, NULL, &prev, &res)) {
		fprintf(stderr, "reroute_bench: the first routing failed\n");
		return 1;
	}
	printf("levels=%u radix=%u hosts=%u remove=%.3f seed=%" PRIu64 " switches=%u top_lid=%u cold_cpu_s=%.3f\n",
	       levels, radix, hosts, remove, seed, prev->n_switches, prev->top_lid, bench_cpu_sec() - c0);
	for (unsigned k = 0; k < steps; k++) {
		uint32_t node;
		unsigned port;
		struct sm_fabric *g = sm_fabric_new();
		if (!g || sm_fabric_append(g, f, NULL) || pick(g, seed * 1000 + k, link, &node, &port))
			return 1;
		sm_fabric_unlink(g, node, port);
		struct sm_validate_prev pv = { .f = f, .l = prev };
		struct sm_lfts *full = NULL, *inc = NULL;
		struct sm_plane_result rf, ri;
		c->prev = NULL;
		c->reroute_from = NULL;
		double cf = bench_cpu_sec();
		int rcf = sm_route_chain(c_full, g, 0, NULL, &full, &rf);
		cf = bench_cpu_sec() - cf;
		/*
		 * As the daemon between cycles: the spare table (a freed one of this
		 * size; here made and freed) becomes a copy of the previous routes,
		 * so the reroute does not copy them (model/lfts.h sm_lfts_prepare()).
		 */
		double cp = bench_cpu_sec();
		sm_lfts_free(sm_lfts_new(g, 0));
		int prc = sm_lfts_prepare(prev);
		cp = bench_cpu_sec() - cp;
		c->prev = &pv;
		c->reroute_from = &pv;
		double ci = bench_cpu_sec();
		int rci = sm_route_chain(c, g, 0, NULL, &inc, &ri);
		ci = bench_cpu_sec() - ci;
		c->prev = NULL;
		c->reroute_from = NULL;
		if (rcf || rci) {
			fprintf(stderr, "reroute_bench: step %u: routing failed (%d, %d)\n", k, rcf, rci);
			return 1;
		}
		struct diff df = lft_diff(prev, full), di = lft_diff(prev, inc), dx = lft_diff(full, inc);
		printf("step=%u link=0x%016" PRIx64 "/%u prepare_rc=%d prepare_cpu_s=%.4f "
		       "full_cpu_s=%.4f full_route_s=%.4f full_validate_s=%.4f full_route_cpu_s=%.4f "
		       "incr_cpu_s=%.4f incr_route_s=%.4f incr_route_cpu_s=%.4f incr_validate_s=%.4f "
		       "rerouted=%d lids=%u "
		       "full_entries=%" PRIu64 " full_blocks=%" PRIu64 " full_switches=%" PRIu64 " incr_entries=%" PRIu64
		       " incr_blocks=%" PRIu64 " incr_switches=%" PRIu64 " incr_vs_full_entries=%" PRIu64,
		       k, f->nodes[node].guid, port, prc, cp, cf, rf.route_seconds, rf.validate_seconds, rf.route_cpu_seconds, ci,
		       ri.route_seconds, ri.route_cpu_seconds, ri.validate_seconds, ri.rerouted, ri.reroute_lids, df.entries, df.blocks, df.switches, di.entries,
		       di.blocks, di.switches, dx.entries);
		if (!ri.rerouted)
			printf(" why=\"%s\"", ri.reroute_why);
		else
			printf(" notes=\"%s\"", ri.notes);
		if (with_metrics) {
			unsigned sf, si;
			double ef, ei;
			quality(g, full, &sf, &ef);
			quality(g, inc, &si, &ei);
			printf(" full_shift=%u full_ebb=%.4f incr_shift=%u incr_ebb=%.4f", sf, ef, si, ei);
		}
		printf("\n");
		fflush(stdout);
		sm_lfts_free(full);
		sm_lfts_free(prev);
		sm_fabric_free(f);
		prev = inc;
		f = g;
	}
	sm_lfts_free(prev);
	sm_fabric_free(f);
	sm_chain_free(c);
	sm_chain_free(c_full);
	sm_registry_free(reg);
	return 0;
}
