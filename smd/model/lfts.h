/* SPDX-License-Identifier: MIT */
#ifndef SMD_MODEL_LFTS_H
#define SMD_MODEL_LFTS_H
/*
 * DOC: linear forwarding tables of one plane, as an engine computes them and
 * as the SM programs them (the engines' output, routing/engine.h).
 *
 * One dense table per plane: ports[slot * (top_lid + 1) + lid] = egress
 * port, SM_LFT_NONE when the switch has no route for that LID. Port 0 means
 * "deliver to this switch". Switch slots are the plane's switches in fabric
 * node order.
 */
#include <stddef.h>
#include <stdint.h>
#include "model/fabric.h"

#define SM_LFT_NONE 0xff

struct sm_lfts {
	unsigned plane;
	uint32_t n_switches;
	uint16_t top_lid;        /* highest LID with an entry; each row has top_lid+1 entries */
	uint32_t *sw_node;       /* [n_switches] fabric node index of each switch slot */
	uint32_t *slot_of_node;  /* [fabric n_nodes] switch slot or SM_NONE */
	uint32_t n_nodes;        /* size of slot_of_node */
	uint8_t *ports;          /* [n_switches * (top_lid+1)] */
};

/* Allocate LFTs for every switch of `plane`, rows sized by the plane's max LID, all SM_LFT_NONE. */
struct sm_lfts *sm_lfts_new(const struct sm_fabric *f, unsigned plane);
void sm_lfts_free(struct sm_lfts *l);  /* accepts NULL */
struct sm_lfts *sm_lfts_dup(const struct sm_lfts *l);
/*
 * Copy l into the spare table now (idle time), so that the next
 * sm_lfts_dup(l) (a reroute starting from l) copies nothing. l must not be
 * written after this while it lives (a state's tables). 0, -ENOENT: no
 * spare table of l's size (nothing freed yet; tables under 2 MB have none),
 * or -EBUSY: the spare is the copy of another live table (another plane's
 * of the same size: there is one spare, kept for the first one prepared).
 */
int sm_lfts_prepare(const struct sm_lfts *l);

static inline uint8_t *sm_lfts_row(const struct sm_lfts *l, uint32_t slot)
{
	return &l->ports[(size_t)slot * ((size_t)l->top_lid + 1)];
}

static inline uint8_t sm_lfts_get(const struct sm_lfts *l, uint32_t node, uint16_t lid)
{
	uint32_t s = node < l->n_nodes ? l->slot_of_node[node] : SM_NONE;
	if (s == SM_NONE || lid > l->top_lid)
		return SM_LFT_NONE;
	return sm_lfts_row(l, s)[lid];
}

static inline void sm_lfts_set(struct sm_lfts *l, uint32_t node, uint16_t lid, uint8_t port)
{
	uint32_t s = l->slot_of_node[node];
	sm_lfts_row(l, s)[lid] = port;
}

#endif
