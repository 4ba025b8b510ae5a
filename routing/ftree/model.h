/* SPDX-License-Identifier: MIT */
#ifndef SMD_FTREE_MODEL_H
#define SMD_FTREE_MODEL_H
/*
 * DOC: ftree internal model (private to routing/ftree*.c)
 *
 * ftree_model.c turns one plane of a fabric into the fat-tree view the
 * algorithm (ftree_route.c) needs, all in flat arrays indexed by LFT slot:
 *
 *  - rank: 0 for leaves (switches with CAs), BFS upward from the leaves.
 *    Every switch-switch link must join ranks r and r+1, else the plane
 *    is not a fat tree.
 *  - up-slot table: for a switch at rank r, the "potential parents" are
 *    the rank r+1 switches of its connected component in the bipartite
 *    graph rank r <-> rank r+1 (a pod at the leaf level, a core group at the
 *    aggregation level, all spines in a 2-level tree), sorted by a key
 *    inherited top-down so that sibling switches order their parents the
 *    same way. Slot j = (parent j / m, j-th parallel link) where m is the
 *    widest parallel bundle in the component. A slot whose link is missing
 *    holds port 0: this is what lets a degraded tree keep the ideal
 *    assignment of a full one and move only the displaced routes.
 *  - destinations: every LID of the plane (CA/router ports with their LMC
 *    range, switch port 0), grouped by destination switch (the leaf a CA
 *    is cabled to, or the switch itself), with an index idx: hosts in
 *    the canonical host order of sm_metrics_host_order() (metrics.h: pods
 *    contiguous, leaves by GUID, hosts by leaf port), the same order that
 *    defines the evaluator's shift permutations. The index is stable: a
 *    host's idx is its leaf's position x the nominal hosts per leaf + its
 *    leaf port's rank among the ports that carry a host on any leaf, so
 *    a host that goes away leaves its slot empty and every other host
 *    keeps its index and its routes (on a complete tree this is its
 *    position in the canonical order). When the leaves' host ports are
 *    not one common set (more ports carry hosts than any leaf has), the
 *    idx is the position in the canonical order. Switch LIDs follow the
 *    index space (n_idx), switches by GUID.
 *
 * Invariant: nothing in the model or the routes depends on node indices,
 * slot numbers or LID values. Every order is by rank, GUID, port number or
 * the canonical host order (parents in up-slot tables, switches within a
 * rank in by_rank, destinations), so a fabric loaded from a dump and the
 * same fabric as the SM sweeps it (BFS order, other LIDs) route alike.
 */
#include <stdint.h>
#include "routing/engine.h"

#define FT_RANK_NONE 0xff
#define FT_MAX_RANK 3          /* 4 switch levels at most */

struct ft_dest {
	uint16_t lid;
	uint8_t port;      /* egress at the destination switch: CA port, or 0 for the switch itself */
	uint8_t pad;
	uint32_t idx;      /* spreading index */
};

struct ft_model {
	const struct sm_fabric *f;
	uint32_t nsw;
	const uint32_t *sw_node;     /* [nsw] from the LFTs */
	const uint32_t *slot_of_node;
	uint32_t n_nodes;
	uint8_t *rank;               /* [nsw] */
	uint8_t h;                   /* highest rank */
	uint32_t *by_rank;           /* [nsw] slots by ascending rank (unranked last), then GUID */
	/* switch-switch ports by direction, CSR: port numbers */
	uint32_t *up_off, *dn_off;   /* [nsw+1] */
	uint8_t *up_port, *dn_port;
	uint32_t *up_peer, *dn_peer; /* peer slot of each listed port */
	/* up-slot table */
	uint32_t *slot_off;          /* [nsw+1] */
	uint8_t *slot_port;          /* port number or 0 (missing link) */
	uint32_t *slot_peer;         /* parent slot behind slot_port, SM_NONE when missing */
	uint32_t div[FT_MAX_RANK + 2]; /* idx divisor per rank: product of nominal slot counts below (capped) */
	/* destinations grouped by destination switch (CSR over slots, in routing order) */
	uint32_t n_dest;
	struct ft_dest *dest;
	uint32_t *dest_off;          /* [nsw+1] dests of switch slot s: dest[dest_off[s] .. dest_off[s+1]) */
	uint32_t *tgt_order;         /* [n_tgt] destination switch slots in routing order */
	uint32_t n_tgt;
	uint32_t n_hosts;            /* endpoint ports with a LID */
	uint32_t n_idx;              /* host index space: leaves x nominal hosts per leaf (stable) or n_hosts */
	uint32_t *hlo, *hhi;         /* [nsw] host indices below a switch lie in [hlo, hhi); hlo == hhi none */
	uint32_t *comp;              /* [nsw] connected component (switch graph) */
	uint32_t unranked;           /* switches not connected to any leaf */
};

/* Optional configuration (YAML `ftree: {roots: [GUID, ...]}`). */
struct ft_stash;

struct ft_config {
	uint64_t *roots;             /* switch node GUIDs of the top rank, any plane */
	uint32_t n_roots;
	struct ft_stash *stash;      /* the last model built, for reroute() (stash.c); may be NULL */
};

/*
 * Build the model; 0, or a negative errno with a message in msg. With
 * roots (cfg may be NULL), ranks come from the roots downward instead of
 * from the CAs upward: rank = depth of the leaves - BFS depth from the
 * roots, so a leaf whose CAs are all gone still ranks as a leaf.
 */
int ft_model_build(struct ft_model *m, const struct sm_fabric *f, unsigned plane,
		   const struct sm_lfts *out, const struct ft_config *cfg, char *msg, size_t msglen);
void ft_model_free(struct ft_model *m);

static inline uint32_t ft_peer_slot(const struct ft_model *m, uint32_t s, unsigned port)
{
	const struct sm_port *pt = sm_port(m->f, m->sw_node[s], port);
	return pt->peer_node == SM_NONE || pt->peer_node >= m->n_nodes ? SM_NONE
									  : m->slot_of_node[pt->peer_node];
}

/* Route every destination of the model into out; 0 or negative errno + msg. */
int ft_route(const struct ft_model *m, struct sm_lfts *out, char *msg, size_t msglen);

/* The engine's reroute() hook (reroute.c; state: struct ft_config or NULL). */
int ft_reroute_plane(void *state, struct sm_route_ctx *ctx);

/* stash.c: the model of the fabric and plane routed last (cfg NULL or without a stash: none kept). */
struct ft_stash *ft_stash_new(void);
void ft_stash_free(struct ft_stash *s);   /* accepts NULL */
/* Keep m, built for f's plane, in place of the one kept (m is taken: zeroed, or freed). */
void ft_stash_put(const struct ft_config *cfg, unsigned plane, const struct sm_fabric *f, struct ft_model *m);
/* 1 and *m the kept model when it was built for a fabric equal to f (laid out as l), else 0. */
int ft_stash_take(const struct ft_config *cfg, unsigned plane, const struct sm_fabric *f, const struct sm_lfts *l,
		  struct ft_model *m);

#endif
