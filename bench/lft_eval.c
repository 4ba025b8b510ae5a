/* SPDX-License-Identifier: MIT */
/*
 * DOC: lft_eval: evaluate someone else's routes with smd's evaluator
 *
 * lft_eval TOPO LFTS [--perms N] [--seed S] [--no-shift]
 * TOPO is an ibnetdiscover dump (with the LIDs the other SM assigned),
 * LFTS a dump_lfts / ibroute text file of the same subnet. Prints the
 * validator's verdict and the route metrics (metrics.h), the same lines
 * route_bench prints, so OpenSM's routes are judged exactly as ftree's.
 * Used by bench/routing.sh on OpenSM's tables read back from ibsim.
 */
#include "config.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/engine.h"
#include "model/lft_file.h"
#include "routing/metrics.h"
#include "model/topo.h"
#include "routing/validate.h"

int main(int argc, char **argv)
{
	struct sm_metrics_opts mo = { .n_random = 100, .seed = 1 };
	static const struct option lo[] = {
		{ "perms", 1, 0, 'P' }, { "seed", 1, 0, 's' }, { "no-shift", 0, 0, 'S' }, { 0, 0, 0, 0 }
	};
	int c;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'P': mo.n_random = (unsigned)strtoul(optarg, NULL, 0); break;
		case 's': mo.seed = strtoull(optarg, NULL, 0); break;
		case 'S': mo.skip_shift = 1; break;
		default:
			fprintf(stderr, "usage: lft_eval TOPO LFTS [--perms N] [--seed S] [--no-shift]\n");
			return 2;
		}
	}
	if (argc - optind != 2) {
		fprintf(stderr, "usage: lft_eval TOPO LFTS [--perms N] [--seed S] [--no-shift]\n");
		return 2;
	}
	struct sm_fabric *f = sm_fabric_new();
	struct sm_topo_err te = { { 0 }, 0 };
	struct sm_lftfile *lf = NULL;
	struct sm_lfts *l = NULL;
	char err[512];
	int status = 1;
	uint32_t matched = 0;

	if (!f)
		return 1;
	if (sm_topo_load(f, argv[optind], SM_TOPO_AUTO, 0, &te)) {
		fprintf(stderr, "lft_eval: %s\n", te.msg);
		goto out;
	}
	if (sm_lftfile_load(argv[optind + 1], &lf, err, sizeof(err))) {
		fprintf(stderr, "lft_eval: %s\n", err);
		goto out;
	}
	l = sm_lfts_new(f, 0);
	if (!l || sm_lftfile_apply(lf, f, l, &matched, err, sizeof(err))) {
		fprintf(stderr, "lft_eval: %s\n", l ? err : "out of memory");
		goto out;
	}
	printf("tables: %u of %u switches found in %s\n", matched, l->n_switches, argv[optind + 1]);
	struct sm_validation v;
	if (!sm_validate(f, 0, l, 0, &v))
		printf("validation: %s\n", v.msg);
	struct sm_route_metrics m;
	if (sm_metrics_compute(f, 0, l, &mo, &m)) {
		fprintf(stderr, "lft_eval: metrics failed\n");
		goto out;
	}
	printf("metrics: hosts %u pairs %" PRIu64 " unreachable %" PRIu64 " loops %" PRIu64
	       " hops %u/%.3f/%u minimal %.4f efi_max %" PRIu64 " efi_max/mean %.3f shift_max %u"
	       " rand_max %.2f ebb %.4f credit_loop %d\n",
	       m.hosts, m.pairs, m.unreachable, m.loops, m.hops_min, m.hops_avg, m.hops_max,
	       m.minimal_share, m.efi_max, m.efi_max_over_mean, m.shift_max_congestion,
	       m.rand_max_congestion_mean, m.ebb, m.credit_loop);
	status = 0;
out:
	sm_lfts_free(l);
	sm_lftfile_free(lf);
	sm_fabric_free(f);
	return status;
}
