/* SPDX-License-Identifier: MIT */
#ifndef SMD_HOTPATH_INT_H
#define SMD_HOTPATH_INT_H
/*
 * DOC: hot-path pinning internals (shared by the files of routing/hotpath/ only)
 *
 * Calls go one way: hotpath.c (engine) -> pin.c -> colour.c -> model.c,
 * eval.c; colour.c and model.c never call pin.c.
 *
 * struct hp is the state of one sm_hotpath_pin() call: the plane's switch
 * levels, up-port lists, per-link loads (indexed by fabric port index of
 * the egress port), the flows of the plane with their current paths, and
 * the decided (switch, hot LID) units. The output LFT `out` is the single
 * source of truth for routes: a flow's path is always the walk of `out`,
 * and a decision is an `out` entry plus its bit in `decided`.
 *
 * Invariant: load[p] == sum of the weights of flows whose stored path
 * contains egress port p, between operations.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "routing/hotpath/hotpath.h"

#define HP_MAXHOPS 16
#define HP_LVL_NONE 0xff
#define HP_EPS 1e-9

struct hflow {
	uint32_t src, dst;       /* CA port indices */
	double w;
	uint16_t base_lid;
	uint16_t dlid;           /* current DLID */
	uint8_t nlids;           /* 2^lmc */
	uint8_t pinned;
	uint8_t len;             /* path length, 0 = no working route */
	uint32_t in;             /* index in rep->flow (this plane's flows, caller order) */
	uint32_t path[HP_MAXHOPS];
};

struct hp {
	const struct sm_fabric *f;
	unsigned plane;
	const struct sm_lfts *base;
	struct sm_lfts *out;
	uint32_t n_sw;
	uint8_t *level;          /* [n_sw] */
	uint32_t *up_off;        /* [n_sw+1] */
	uint8_t *up;             /* up-port numbers */
	double *load;            /* [f->n_ports] */
	struct hflow *fl;
	size_t n;
	uint32_t *hot_of_lid;    /* [top_lid+1] */
	uint32_t n_hot;
	uint16_t *hot_lid;       /* [n_hot] */
	uint8_t *decided;        /* [n_hot * n_sw] */
	/* flows by hot LID (CSR over pinned flows, by current dlid) */
	uint32_t *byl_off, *byl;
	double host_bound;
	unsigned max_level;
};

static inline unsigned flow_plane(const struct sm_fabric *f, const struct sm_flow *x)
{
	return f->nodes[f->ports[x->src].node].plane;
}

static inline uint32_t slot_of(const struct hp *h, uint32_t node)
{
	return node < h->out->n_nodes ? h->out->slot_of_node[node] : SM_NONE;
}

static inline uint8_t *dec(const struct hp *h, uint32_t hot, uint32_t slot)
{
	return &h->decided[(size_t)hot * h->n_sw + slot];
}

/* eval.c */
unsigned hp_walk(const struct sm_fabric *f, const struct sm_lfts *l, uint32_t src, uint32_t dst, uint16_t dlid,
		 uint32_t *path);
void hp_add_path(struct hp *h, const struct hflow *fl, double sign);
void hp_reroute(struct hp *h, struct hflow *fl);
double hp_host_bound(const struct sm_fabric *f, const struct sm_flow *flows, size_t n, unsigned plane,
		     double *tmp_s, double *tmp_r);
/* model.c: levels and up-ports of h->out's switches (0, -ENOMEM); is the base entry of (switch node, lid)
 * an up-port? */
int hp_build_levels(struct hp *h);
bool hp_is_up(const struct hp *h, uint32_t node, uint16_t lid);
/* colour.c: 1 applied, 0 conditions not met (note says why), <0 errno */
int hp_colour(struct hp *h, bool use_lmc, char *note, size_t notelen);

#endif
