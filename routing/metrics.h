/* SPDX-License-Identifier: MIT */
#ifndef SMD_METRICS_H
#define SMD_METRICS_H
/*
 * DOC: route-quality metrics (definitions in shared/docs/FIELD.md)
 *
 * Computed from a fabric plane and its LFTs by walking routes hop by hop;
 * the same evaluator serves the dry-run report, the tests and the
 * benchmarks. Hosts are the CA ports with a LID in the plane, in the
 * canonical host order of sm_metrics_host_order(); that order defines shift
 * permutations (host i sends to host i+k) and is the order ftree numbers
 * its destinations in, so "shift congestion 1" means the same thing for
 * every numbering of one fabric.
 *
 * Canonical host order: independent of node indices, LIDs and discovery
 * order (two dumps of one fabric, or the fabric as the SM sweeps it, give
 * the same order). Leaves are the switches with endpoints cabled to them,
 * ranks the switch-link distance from the nearest leaf. Leaves are grouped
 * hierarchically: at level r by the connected component of the switch
 * graph over ranks 0..r+1 (on a 3-level tree: pods, then the whole tree),
 * each group named by its smallest leaf node GUID, outermost group first;
 * so every pod (subtree) is a contiguous run of hosts whatever the GUIDs.
 * Within a group leaves sort by node GUID; hosts of a leaf by the leaf's
 * port number, then port GUID. Ports not cabled to a switch come last, by
 * port GUID. (Leaf GUID, not description or LID: it is the one stable,
 * unique key a swept fabric and every dump agree on.)
 */
#include <stdint.h>
#include "model/fabric.h"
#include "model/profile.h" /* struct sm_flow */
#include "routing/engine.h"

/*
 * The N-1 shift permutations are N^2 flows: 1.7 billion at 40,960 hosts
 * (hours of path walks). Above this many flows only evenly spaced shifts
 * are evaluated (shift_evaluated says how many; all of them up to 8,192
 * hosts): on a degraded tree the worst shift may then be missed. Without
 * the path cache (more than 48 M source-leaf x host pairs: above ~40k
 * hosts) every flow walks the LFTs, ~0.5 us each, and the budget is
 * SM_METRICS_SHIFT_FLOWS_WALK (204 shifts at 40,960 hosts, ~4 s).
 */
#define SM_METRICS_SHIFT_FLOWS (UINT64_C(1) << 26)
#define SM_METRICS_SHIFT_FLOWS_WALK (UINT64_C(1) << 23)

struct sm_metrics_opts {
	unsigned n_random;      /* random permutations for EBB (default 100 when 0) */
	uint64_t seed;          /* seed for the random permutations */
	int skip_shift;         /* skip the N-1 shift permutations (slow on huge planes) */
	int skip_cdg;           /* skip the credit-loop check */
};

struct sm_route_metrics {
	uint32_t hosts;              /* CA ports with LIDs */
	uint64_t pairs;              /* ordered host pairs checked */
	uint64_t unreachable;        /* pairs with no route (black hole / missing entry) */
	uint64_t loops;              /* pairs whose route loops (exceeds hop limit) */
	unsigned hops_min, hops_max; /* switch-to-switch links + 2 host links, over routed pairs */
	double hops_avg;
	double minimal_share;        /* share of routed pairs using a shortest path */
	uint64_t efi_max;            /* edge forwarding index: routes on the busiest directed link */
	double efi_max_over_mean;
	unsigned shift_max_congestion; /* worst over all shifts k=1..N-1 (0 if skipped) */
	uint32_t shift_evaluated;    /* shifts evaluated: N-1, or fewer evenly spaced (SM_METRICS_SHIFT_FLOWS) */
	unsigned rand_max_congestion;  /* mean over the random perms of their max congestion, rounded up */
	double rand_max_congestion_mean;
	double ebb;                  /* effective bisection bandwidth, mean over random perms */
	int credit_loop;             /* 1 if the channel-dependency graph has a cycle, 0 if not, -1 skipped */
	double seconds;              /* time spent computing these metrics */
};

/* 0 or a negative errno (ENOMEM). Never fails for unreachable pairs: they are counted. */
int sm_metrics_compute(const struct sm_fabric *f, unsigned plane, const struct sm_lfts *l,
		       const struct sm_metrics_opts *o, struct sm_route_metrics *m);

/*
 * Sort ports[0..n) (fabric port indices of endpoint ports of the plane)
 * into the canonical host order above. 0 or -ENOMEM (ports untouched).
 */
int sm_metrics_host_order(const struct sm_fabric *f, unsigned plane, uint32_t *ports, size_t n);

/*
 * The lower bound of shift congestion (metrics.h's shift_max_congestion)
 * that a plane's cabling imposes on any routing, and the cut that sets it
 * (metrics_bound.c says how): a run of `units` consecutive subtrees at
 * `level` (1: leaves, 2: pods of a 3-level tree, ...), from the one whose
 * first leaf is `leaf` to the one whose first leaf is `last_leaf` (node
 * indices), holds `hosts` hosts that some shift sends all outside it
 * across a cut of `links` links. bound 0: fewer than 2 leaves, or links
 * within one rank (not a tree); 1: nothing missing forces more.
 */
struct sm_shift_bound {
	unsigned bound;
	unsigned level, units;
	uint32_t leaf, last_leaf;    /* SM_NONE when bound <= 1 */
	unsigned hosts, links;
	/*
	 * The bound for up/down routings (ftree, updn: every endpoint route
	 * climbs, then descends, which keeps them free of credit loops), at
	 * least `bound`: a shift sends min(hosts) flows from leaf ud_from to
	 * leaf ud_to, and only ud_paths link-disjoint up/down paths join them.
	 * 0 when not computed (more than SM_BOUND_UD_LEAVES leaves).
	 */
	unsigned updown;
	uint32_t ud_from, ud_to;     /* leaf node indices, SM_NONE when updown <= bound */
	unsigned ud_hosts, ud_paths;
	/*
	 * 1: ud_from and ud_to are the two leaves; 2 (or more): they are the
	 * first leaves of two subtrees at that level (pods of a 3-level tree)
	 * that one shift lines up host for host (ud_hosts flows at once), and
	 * ud_paths counts the link-disjoint up/down paths between their leaves.
	 */
	unsigned ud_level;
};

#define SM_BOUND_UD_LEAVES 256

/* 0 or -ENOMEM. */
int sm_metrics_shift_bound(const struct sm_fabric *f, unsigned plane, struct sm_shift_bound *b);

/*
 * Upper bound of the random-permutation EBB (sm_route_metrics.ebb) that
 * any destination routing (LFTs) can expect on plane's cabling: what the
 * leaves' switch links allow, metrics_ebb.c says how. 1.0 with fewer than
 * two hosts; *bound 0 (unknown) when the leaves come in more than 64
 * kinds (hosts, links). 0 or -ENOMEM.
 */
int sm_metrics_ebb_bound(const struct sm_fabric *f, unsigned plane, double *bound);

/*
 * The bisection of plane's cabling: the fewest links (switch and host
 * links) that some split of its hosts into floor(N / 2) and the rest cuts,
 * every switch on its cheaper side. `links` is the least cut found over a
 * few splits by leaf (metrics_bisect.c), an upper bound of the minimum,
 * exact on a complete fat tree without oversubscription (floor(N / 2)).
 * `how` names the split ("host order", "weakest leaves", "weakest pods";
 * NULL with fewer than two hosts), first_leaf a leaf of its first half.
 */
struct sm_bisection {
	uint64_t links;
	uint32_t hosts;       /* floor(N / 2) */
	const char *how;      /* static */
	uint32_t first_leaf;  /* node index, SM_NONE */
};

/* 0 or -ENOMEM. */
int sm_metrics_bisection(const struct sm_fabric *f, unsigned plane, struct sm_bisection *b);

/*
 * Max link load of a weighted flow list under the LFTs: flows[i] = (src port
 * index, dst port index, weight). Returns the largest weight summed on one
 * directed link (host links included), or a negative value on error.
 */
double sm_metrics_max_load(const struct sm_fabric *f, unsigned plane, const struct sm_lfts *l,
			   const struct sm_flow *flows, size_t n_flows);

#endif
