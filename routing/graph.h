/* SPDX-License-Identifier: MIT */
#ifndef SMD_GRAPH_H
#define SMD_GRAPH_H
/*
 * DOC: switch graph of one plane (shared by the engines and the validator)
 *
 * Built once per plane from the read-only fabric: the switches of the plane
 * numbered by slot in the same order as sm_lfts_new() (fabric node order),
 * their switch-to-switch links in CSR form (adj[adj_off[s] .. adj_off[s+1]-1],
 * sorted by neighbour slot then port, so parallel links to one neighbour are
 * consecutive), the endpoint ports (CA/router ports) attached to each
 * switch, the physical parts (connected components over switch links) and
 * the destinations: every LID of the plane with the switch that delivers it
 * and the port it leaves by there (0 for the switch's own LIDs).
 *
 * The balancer keeps, per switch egress cable and destination type
 * (endpoint LID or switch LID), how many endpoint sources it routes, and
 * picks among equal-cost candidate cables (sm_graph_assign): the LIDs of
 * one destination switch that carry traffic through s are first spread
 * evenly over the candidates, aligned so that the r-th LID takes the r-th
 * neighbour when the batch covers them all (fat-tree leaves: every leaf
 * then agrees, which keeps shift permutations congestion-free), else
 * toward the cable carrying the fewest sources. Parallel cables: the
 * neighbour with the fewest sources per cable, then its least used cable.
 * Counting per type keeps endpoint routes even on every uplink although
 * switch LIDs are routed among them.
 *
 * Nothing here allocates per route: BFS takes caller scratch arrays.
 */
#include <stddef.h>
#include <stdint.h>
#include "model/fabric.h"
#include "routing/engine.h"

#define SM_GRAPH_INF UINT16_MAX

struct sm_graph_link {
	uint32_t peer;           /* neighbour's slot */
	uint8_t port;            /* our port number */
	uint8_t peer_port;       /* its port number */
};

struct sm_graph_host {
	uint32_t port;           /* fabric port index of the endpoint port */
	uint32_t sw;             /* slot of the switch it is cabled to */
	uint8_t sw_port;         /* that switch's port number */
};

struct sm_graph_dest {
	uint16_t lid;
	uint8_t is_switch;       /* 1 switch LID (deliver at port 0), 0 endpoint LID */
	uint8_t out_port;        /* port at `sw` that delivers: 0 or the port cabled to the endpoint */
	uint32_t port;           /* fabric port index owning the LID */
	uint32_t sw;             /* slot of the delivering switch, SM_NONE if unroutable */
};

struct sm_graph {
	const struct sm_fabric *f;
	unsigned plane;
	uint32_t n_sw;
	uint32_t *sw_node;       /* [n_sw] fabric node index of each slot */
	uint32_t *slot_of_node;  /* [f->n_nodes] slot or SM_NONE */
	uint32_t *adj_off;       /* [n_sw + 1] */
	struct sm_graph_link *adj;
	uint32_t *comp;          /* [n_sw] physical part of each switch */
	uint32_t n_comp;
	uint32_t n_hosts;        /* endpoint ports with a LID cabled to a switch of the plane */
	struct sm_graph_host *hosts;  /* fabric order (node index, port number) */
	uint32_t *host_off;      /* [n_sw + 1] hosts of switch s: host_idx[host_off[s] .. host_off[s+1]-1] */
	uint32_t *host_idx;      /* indices into hosts[] */
	uint32_t n_dests;        /* every LID of the plane, ascending */
	struct sm_graph_dest *dests;
	uint32_t *dest_off;      /* [n_sw + 1] destinations delivered at s: dest_idx[...] */
	uint32_t *dest_idx;      /* indices into dests[] */
	uint8_t max_ports;       /* largest nports over the plane's switches */
};

/* 0, -ENOMEM, or -EINVAL (plane out of range). */
int sm_graph_build(const struct sm_fabric *f, unsigned plane, struct sm_graph **out);
void sm_graph_free(struct sm_graph *g);  /* accepts NULL */

/*
 * Hop counts (switch-to-switch links) from slot src to every slot, SM_GRAPH_INF
 * if unreachable. dist and queue have n_sw entries (caller scratch).
 */
void sm_graph_bfs(const struct sm_graph *g, uint32_t src, uint16_t *dist, uint32_t *queue);

/* Balancer over the egress ports of one plane. */
struct sm_balancer;
struct sm_balancer *sm_balancer_new(const struct sm_graph *g);
void sm_balancer_free(struct sm_balancer *b);  /* accepts NULL */

/*
 * Pick one of n candidate links (indices into g->adj, all belonging to
 * switch s, sorted ascending) for a route to a destination of type
 * is_switch; records the choice and returns the chosen link index.
 */
uint32_t sm_balancer_pick(struct sm_balancer *b, uint32_t s, const uint32_t *cand, unsigned n,
			  int is_switch);

/* Endpoint sources routed over link i (index into adj) for one destination type. */
uint64_t sm_balancer_count(const struct sm_balancer *b, uint32_t link, int is_switch);

/*
 * Route every destination delivered at switch slot d: d's own entry is the
 * destination's out_port; the switches of `order` (n_order slots, farthest
 * from d first: every candidate of a switch must come later in the order
 * or be d) each get, for every LID, the balancer's pick among their
 * candidates (cand[cand_off[s] .. cand_off[s+1]-1], adj indices sorted
 * ascending). Picks are weighted by the endpoint sources that reach s for
 * that LID, so only routes that carry traffic load a cable. Slots of l
 * must be the graph's slots (true for sm_lfts_new() on the same plane).
 * Returns the entries set besides d's.
 */
uint64_t sm_graph_assign(const struct sm_graph *g, struct sm_balancer *b, uint32_t d,
			 const uint32_t *cand_off, const uint32_t *cand, const uint32_t *order,
			 uint32_t n_order, struct sm_lfts *l);

/*
 * All n_sw slots ordered for sm_graph_assign(): unreachable (SM_GRAPH_INF)
 * first, then by decreasing dist. tmp: n_sw + 3 entries of scratch.
 */
void sm_graph_order_far_first(const struct sm_graph *g, const uint16_t *dist, uint32_t *order, uint32_t *tmp);

/*
 * Engines' common epilogue: -ENETUNREACH with a message when the plane has
 * LIDs but none is routable; otherwise 0, with a note in msg when
 * `unreached` (switch, LID) entries stayed SM_LFT_NONE or LIDs sit on ports
 * not cabled to a switch.
 */
int sm_route_note_unreached(const struct sm_graph *g, uint64_t unreached, char *msg, size_t len);

#endif
