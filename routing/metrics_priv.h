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

/*
 * The plane's hosts (endpoint ports with a LID) in canonical order
 * (sm_metrics_host_order()): *ports malloc'd, *n of them. 0 or -ENOMEM.
 */
int sm_mx_host_ports(const struct sm_fabric *f, unsigned plane, uint32_t **ports, uint32_t *n);

/*
 * Ranks of the plane's switches up from the leaves in sw[0 .. leaves)
 * (rank 0; every other rank[] UINT32_MAX): breadth first over switch
 * links, sw[] doubling as the queue, so it ends sorted by rank. Returns
 * how many switches sw[] holds; *top the highest rank.
 */
uint32_t sm_mx_rank_up(const struct sm_fabric *f, unsigned plane, uint32_t *rank, uint32_t *sw, uint32_t leaves,
		       uint32_t *top);

#endif
