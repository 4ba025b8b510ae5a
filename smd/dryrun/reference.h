/* SPDX-License-Identifier: MIT */
#ifndef SMD_DRYRUN_REFERENCE_H
#define SMD_DRYRUN_REFERENCE_H
/*
 * DOC: what a good value is for this tree (the report's reference column)
 *
 * A route metric means little without the value the same fabric shape can
 * reach: random-permutation EBB under destination routing is about 0.65
 * on a complete non-blocking fat tree, never 1.0. For each plane this finds
 *   - its fat-tree shape: levels, radix, host ports and uplinks per leaf
 *     (the largest found), hosts, leaves; "no shape" with the reason for a
 *     plane that is not a fat tree (switch links within one level, ...);
 *   - the reference: that shape built complete (every switch link cabled,
 *     model/gen.h), routed by ftree and measured with the same metrics and
 *     the same random permutations (seed, count) as the plane;
 *   - bounds that the plane's own cabling imposes on any routing: shift
 *     congestion is at least ceil(hosts / links) of the tightest cut
 *     around a run of leaves or pods that some shift sends entirely
 *     outside it (sm_metrics_shift_bound(), routing/metrics_bound.c; a
 *     single leaf gives ceil(hosts / uplinks));
 *   - the bisection left: the least, over the levels of the tree, share of
 *     the complete tree's switch links at that level still cabled;
 *   - the random-permutation EBB that no destination routing can expect to
 *     exceed on this cabling (sm_metrics_ebb_bound(), routing/metrics_ebb.c).
 * Pure functions of a read-only fabric; they never log.
 */
#include <stdint.h>
#include "model/fabric.h"
#include "routing/metrics.h"

struct sm_dr_shape {
	int found;                  /* a fat tree the generator can rebuild */
	char why[96];               /* when not found: the reason, for the report */
	unsigned levels, radix;
	unsigned down, up;          /* host ports and uplinks of a full leaf */
	unsigned hosts, leaves;     /* hosts cabled to a switch; switches with hosts */
	unsigned sw_links_full;     /* switch-switch links of the complete shape */
	unsigned shift_bound;       /* lower bound of shift congestion from this cabling, 0 unknown */
	uint32_t tight_leaf;        /* node index of the (first) leaf of the cut that sets it, SM_NONE */
	unsigned tight_hosts, tight_up; /* hosts behind that cut and its links */
	struct sm_shift_bound cut;  /* the whole cut (routing/metrics.h) */
	double bisection_left;      /* 0..1, 1 when complete (found shapes only): links left at the thinnest level */
	struct sm_bisection bis;    /* the least cut found between two halves of the hosts (routing/metrics.h) */
	uint64_t bis_complete;      /* the complete tree's bisection, 0 when not computed */
	double bisection_cut_left;  /* bis.links / bis_complete (at most 1), 0 when not computed */
	double ebb_bound;           /* EBB no destination routing can expect to exceed here, 0 unknown */
};

/* The shape of plane p and its cabling bound. 0 or -ENOMEM (shape.found says if it is a tree). */
int sm_dr_shape_find(const struct sm_fabric *f, unsigned plane, struct sm_dr_shape *s);

/*
 * Metrics of the complete tree of shape s routed by ftree, with o's random
 * permutations. 0, or a negative errno with a message in err (the shape
 * cannot be built or ftree refuses it).
 */
int sm_dr_reference(const struct sm_dr_shape *s, const struct sm_metrics_opts *o,
		    struct sm_route_metrics *ref, char *err, size_t errlen);

/* Same complete tree (so the same reference metrics) for both shapes. */
int sm_dr_shape_same(const struct sm_dr_shape *a, const struct sm_dr_shape *b);

#endif
