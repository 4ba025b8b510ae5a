/* SPDX-License-Identifier: MIT */
#ifndef SMD_HOSTS_H
#define SMD_HOSTS_H
/*
 * DOC: hosts and plane health (multi-plane fabrics)
 *
 * Groups the NICs (CA nodes) of a multi-plane fabric into hosts: by system
 * image GUID when the NIC reports one, else by the host name in its node
 * description (the text before the first space, as in "host0012 mlx5_3"),
 * else the NIC is a host of its own. Each host knows its NIC port in every
 * plane (SM_NONE where it has none).
 *
 * Plane health compares the planes with each other: what each plane lacks
 * against the best plane (switches, switch links, host NICs), and the
 * bandwidth share each plane offers each host. The model of offered
 * bandwidth is deliberately simple and stated: plane p offers host h
 *     b(h,p) = 0 if h has no linked NIC in p,
 *            = up(leaf) / up_full otherwise,
 * where up(leaf) counts the switch-switch links of the leaf the NIC is
 * cabled to and up_full is the largest such count over all leaves of all
 * planes (a full leaf). The share of p for h is b(h,p) / sum_q b(h,q);
 * on a healthy fabric every share is 1/P.
 *
 * Pure functions of a read-only fabric; they never log.
 */
#include <stdio.h>
#include <stdint.h>
#include "model/fabric.h"

struct sm_host {
	uint64_t sysimg;                 /* grouping key when non-zero */
	char name[SM_DESC_MAX + 1];      /* host name (from the first NIC's description) */
	uint32_t nic[SM_MAX_PLANES];     /* fabric port index of the host's NIC port in each plane */
	uint8_t n_nics;                  /* planes in which the host has a NIC */
	uint8_t extra_nics;              /* further NIC ports found in a plane already taken */
};

struct sm_hosts {
	struct sm_host *h;
	uint32_t n;
	uint32_t *host_of_node;          /* [f->n_nodes] host index of a CA node, SM_NONE otherwise */
	unsigned n_planes;
	uint32_t nics_per_plane[SM_MAX_PLANES];
	uint32_t uneven;                 /* hosts whose NIC count differs from the most common count */
	uint8_t common_nics;             /* the most common NIC count per host */
};

/* 0, -ENOMEM. */
int sm_hosts_build(const struct sm_fabric *f, struct sm_hosts **out);
void sm_hosts_free(struct sm_hosts *h);  /* accepts NULL */

#define SM_HEALTH_EXAMPLES 3

struct sm_plane_health {
	unsigned plane;
	char name[32];
	uint32_t switches, sw_links, nics;        /* what the plane has */
	uint32_t missing_switches;                /* vs the plane with the most */
	uint32_t missing_links;
	uint32_t hosts_without_nic;               /* hosts (of any plane) with no linked NIC here */
	uint32_t leaves;                          /* switches with NICs */
	uint32_t leaf_uplinks_min, leaf_uplinks_max;
	double share_min, share_mean;             /* bandwidth share this plane offers hosts */
	uint32_t hosts_below;                     /* hosts whose share here is < 90% of 1/P */
	uint64_t worst_host;                      /* index into hosts of the lowest share, SM_NONE */
	/* whom the counts are about (first few, SM_NONE-padded), for reports that name them */
	uint32_t ex_no_nic[SM_HEALTH_EXAMPLES];   /* host indices: hosts_without_nic */
	uint32_t ex_below[SM_HEALTH_EXAMPLES];    /* host indices: hosts_below */
	uint32_t thin_leaves;                     /* leaves with fewer uplinks than a full leaf (up_full) */
	uint32_t ex_thin_leaf[SM_HEALTH_EXAMPLES];/* node indices of such leaves */
};

struct sm_planes_health {
	unsigned n_planes;
	uint32_t hosts;
	uint32_t uneven_hosts;                    /* see sm_hosts.uneven */
	uint32_t up_full;
	struct sm_plane_health p[SM_MAX_PLANES];
	int asymmetric;                           /* any plane lacks anything another has */
};

/* 0, -ENOMEM. hosts may be NULL (built and freed inside). */
int sm_planes_health(const struct sm_fabric *f, const struct sm_hosts *hosts,
		     struct sm_planes_health *out);

/* JSON members, written by the caller's emitter (the dry-run prints its own text with names). */
struct sm_json;
void sm_planes_health_json(struct sm_json *j, const char *key, const struct sm_planes_health *ph);

#endif
