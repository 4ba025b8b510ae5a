/* SPDX-License-Identifier: MIT */
#ifndef SMD_METRICS_PRIV_H
#define SMD_METRICS_PRIV_H
/*
 * DOC: helpers shared by the evaluator's files (metrics.c, metrics_bound.c); not an API.
 */
#include <stdint.h>
#include "model/fabric.h"

/* Union-find root with path halving. */
static inline uint32_t sm_mx_find(uint32_t *par, uint32_t x)
{
	while (par[x] != x) {
		par[x] = par[par[x]];
		x = par[x];
	}
	return x;
}

/* Node n is a switch of the plane. */
static inline int sm_mx_is_sw(const struct sm_fabric *f, uint32_t n, unsigned plane)
{
	return n < f->n_nodes && f->nodes[n].type == SM_NODE_SWITCH && f->nodes[n].plane == plane;
}

#endif
