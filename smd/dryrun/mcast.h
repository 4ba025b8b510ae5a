/* SPDX-License-Identifier: MIT */
#ifndef SMD_DRYRUN_MCAST_H
#define SMD_DRYRUN_MCAST_H
/*
 * DOC: the dry-run's multicast section (issue 14)
 *
 * With `--mcast-groups N`, every plane gets N synthetic groups (without
 * it, `--partitions FILE` gives the IPoIB broadcast groups): group 0 holds
 * every CA port of the plane (the shape of IPoIB's broadcast group), group
 * i >= 1 about one host in eight, drawn by a hash of (i, port GUID), its
 * first member send-only; MLIDs 0xC000 + i. The trees are computed as the
 * SM would (routing/mcast.h) and checked by flooding; the report shows the
 * groups, tree depth, how the roots spread over the spines (the switches
 * farthest from the leaves) and the MFT blocks a cold start writes.
 */
#include <stdint.h>

#include "lib/json.h"
#include "model/fabric.h"
#include "model/partitions.h"
#include "routing/mcast.h"

struct sm_dr_mcast {
	int have;
	int ipoib;                   /* the groups are the partitions' IPoIB broadcast groups (--partitions) */
	uint32_t groups, trees;      /* groups given, groups that got a tree */
	uint64_t members, skipped;
	uint32_t depth_max;
	double depth_mean;
	uint32_t roots;              /* distinct root switches */
	uint32_t spines;             /* switches of the top rank */
	uint32_t spine_min, spine_max;   /* groups rooted at each spine */
	uint32_t off_spine;          /* trees rooted below the spines (groups inside a leaf or pod) */
	uint64_t unreached, extra, loops;   /* the flooding check (all 0 when right) */
	uint64_t blocks;             /* MFT (block, position) Sets a cold start writes */
	double route_s, verify_s;
};

/*
 * n synthetic groups over plane `plane` of f (see DOC): *g (n entries) and
 * their members *m, both the caller's to free. 0 or -ENOMEM.
 */
int sm_mcast_synthetic(const struct sm_fabric *f, unsigned plane, unsigned n, struct sm_mcast_group **g,
		       struct sm_mcast_member **m);

/*
 * The IPoIB broadcast group of every partition with the ipoib flag, as the
 * SA creates them at start: every CA/router port of the plane that is a
 * member (full or limited) joins it and receives; MLIDs 0xC000 on in file
 * order. *g, *m, *n as sm_mcast_synthetic(). 0 or -ENOMEM.
 */
int sm_mcast_ipoib(const struct sm_fabric *f, unsigned plane, const struct sm_partitions *ps,
		   struct sm_mcast_group **g, struct sm_mcast_member **m, unsigned *n);

/*
 * Route n synthetic groups on the plane (ps NULL), or the IPoIB broadcast
 * groups of ps, check and measure them. 0 or -errno with err.
 */
int sm_dr_mcast_plane(const struct sm_fabric *f, unsigned plane, unsigned n, const struct sm_partitions *ps,
		      struct sm_dr_mcast *out, char *err, size_t errlen);
/* The report's lines (text, indented) into lines[max]; returns the count. */
unsigned sm_dr_mcast_text(const struct sm_dr_mcast *mc, char (*lines)[200], unsigned max);
/* The report's "multicast" object. */
void sm_dr_mcast_json(struct sm_json *j, const struct sm_dr_mcast *mc);

#endif
