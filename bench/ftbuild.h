/* SPDX-License-Identifier: MIT */
#ifndef SMD_BENCH_FTBUILD_H
#define SMD_BENCH_FTBUILD_H
/*
 * DOC: fat-tree builder for ftree/metrics tests and the routing benchmark
 *
 * Builds k-ary style fat trees straight into a fabric with the fabric API
 * (independent of the topology generator, so tests can make odd shapes:
 * parallel links, blocking trees, missing links). Node order: switches
 * (leaves, then aggregation/spines, then cores), then CAs leaf by leaf;
 * LIDs: switches 1..S, then CA ports, each CA LID range 2^lmc wide.
 *
 * 2 levels: `leaves` leaves with `hosts` CAs each and `up` spines; every
 *   leaf has `width` parallel links to every spine.
 * 3 levels: `pods` pods of `leaves` leaves and `up` aggregation switches
 *   (full bipartite, `width` links per pair); aggregation switch j of every
 *   pod links to the `core_up` cores of core group j (one link each).
 */
#include <stdint.h>
#include "model/fabric.h"

struct ftb_shape {
	unsigned levels;     /* 2 or 3 */
	unsigned pods;       /* 3 levels only */
	unsigned leaves;     /* 2 levels: total; 3 levels: per pod */
	unsigned hosts;      /* CAs per leaf */
	unsigned up;         /* leaf uplinks (spines, or aggregation switches per pod) */
	unsigned width;      /* parallel links per leaf-parent pair (0 = 1) */
	unsigned core_up;    /* 3 levels: cores per group (uplinks of an aggregation switch) */
	unsigned lmc;
};

/* Standard radix-k shapes: 2 levels, k/2 hosts per leaf, k/2 spines, hosts/(k/2) leaves. */
void ftb_shape_2level(struct ftb_shape *s, unsigned radix, unsigned hosts);
/* 3 levels: k/2 hosts per leaf, k/2 leaves and k/2 aggregation per pod, k/2 cores per group. */
void ftb_shape_3level(struct ftb_shape *s, unsigned radix, unsigned hosts);

/* Build one plane; guid_base must differ between planes. 0 or negative errno. */
int ftb_build(struct sm_fabric *f, unsigned plane, const struct ftb_shape *s, uint64_t guid_base);

/* Remove round(frac * switch-switch links) chosen by a seeded shuffle; returns how many (or -errno). */
int ftb_remove_links(struct sm_fabric *f, unsigned plane, double frac, uint64_t seed);

/* Index of node with GUID, or SM_NONE. */
uint32_t ftb_node(const struct sm_fabric *f, uint64_t guid);

#endif
