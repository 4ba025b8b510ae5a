/* SPDX-License-Identifier: MIT */
/*
 * DOC: small hand-built fabrics for the routing tests (header-only)
 *
 * Every builder returns a fabric with LIDs assigned: switches first (port 0),
 * then endpoint ports in node order, LIDs consecutive (each LMC range
 * aligned as IB requires). Switch GUIDs are 0x1000 + i, CA node GUIDs
 * 0x100000 + i with port GUIDs node GUID + port. Builders abort the test on
 * any fabric error (fixtures must not silently differ from what a test
 * assumes).
 */
#ifndef SMD_TEST_ROUTE_FIX_H
#define SMD_TEST_ROUTE_FIX_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/fabric.h"
#include "routing/engine.h"

struct fix {
	struct sm_fabric *f;
	uint32_t sw[512];
	unsigned n_sw;
	uint32_t ca[4096];
	unsigned n_ca;
	uint16_t next_lid;
};

static inline void fix_check(int ok)
{
	if (!ok)
		abort();
}

static inline void fix_init(struct fix *x)
{
	memset(x, 0, sizeof(*x));
	x->f = sm_fabric_new();
	fix_check(x->f != NULL);
	x->next_lid = 1;
}

static inline uint32_t fix_switch(struct fix *x, unsigned nports, unsigned plane)
{
	int64_t n = sm_fabric_add_node(x->f, SM_NODE_SWITCH, 0x1000 + x->n_sw + 0x10000 * plane, nports, plane, 0);
	fix_check(n >= 0);
	char d[32];
	snprintf(d, sizeof(d), "S%u", x->n_sw);
	sm_fabric_set_desc(x->f, (uint32_t)n, d);
	x->sw[x->n_sw++] = (uint32_t)n;
	return (uint32_t)n;
}

static inline uint32_t fix_ca(struct fix *x, unsigned nports, unsigned plane)
{
	uint64_t guid = 0x100000 + (uint64_t)x->n_ca * 0x100 + 0x10000000ull * plane;
	int64_t n = sm_fabric_add_node(x->f, SM_NODE_CA, guid, nports, plane, 0);
	fix_check(n >= 0);
	for (unsigned p = 1; p <= nports; p++)
		fix_check(sm_fabric_set_port_guid(x->f, (uint32_t)n, p, guid + p) == 0);
	char d[32];
	snprintf(d, sizeof(d), "H%u", x->n_ca);
	sm_fabric_set_desc(x->f, (uint32_t)n, d);
	x->ca[x->n_ca++] = (uint32_t)n;
	return (uint32_t)n;
}

static inline void fix_link(struct fix *x, uint32_t a, unsigned pa, uint32_t b, unsigned pb)
{
	fix_check(sm_fabric_link(x->f, a, pa, b, pb) == 0);
}

/* Assign LIDs to every switch and every linked endpoint port; lmc for endpoint ports. */
static inline void fix_lids(struct fix *x, uint8_t lmc)
{
	struct sm_fabric *f = x->f;
	for (uint32_t n = 0; n < f->n_nodes; n++)
		if (f->nodes[n].type == SM_NODE_SWITCH)
			fix_check(sm_fabric_set_lid(f, n, 0, x->next_lid++, 0) == 0);
	for (uint32_t n = 0; n < f->n_nodes; n++) {
		if (f->nodes[n].type == SM_NODE_SWITCH)
			continue;
		for (unsigned p = 1; p <= f->nodes[n].nports; p++) {
			if (sm_port(f, n, p)->peer_node == SM_NONE)
				continue;
			unsigned step = 1u << lmc;
			uint16_t lid = (uint16_t)((x->next_lid + step - 1) & ~(step - 1));
			fix_check(sm_fabric_set_lid(f, n, p, lid, lmc) == 0);
			x->next_lid = (uint16_t)(lid + step);
		}
	}
}

/* h hosts on ports 1..h of switch s. */
static inline void fix_hosts(struct fix *x, uint32_t s, unsigned h, unsigned plane)
{
	for (unsigned i = 0; i < h; i++)
		fix_link(x, s, 1 + i, fix_ca(x, 1, plane), 1);
}

/*
 * n switches, h hosts each on ports 1..h; switch i port h+1 -> switch i+1
 * port h+2 (and the last one back to the first when ring).
 */
static inline void fix_chain(struct fix *x, unsigned n, unsigned h, int ring)
{
	unsigned base = x->n_sw;
	for (unsigned i = 0; i < n; i++)
		fix_switch(x, h + 2, 0);
	for (unsigned i = 0; i < n; i++)
		fix_hosts(x, x->sw[base + i], h, 0);
	for (unsigned i = 0; i + 1 < n; i++)
		fix_link(x, x->sw[base + i], h + 1, x->sw[base + i + 1], h + 2);
	if (ring && n > 2)
		fix_link(x, x->sw[base + n - 1], h + 1, x->sw[base], h + 2);
}

/*
 * 2-level fat tree on `plane`: `leaves` leaves with h hosts (ports 1..h),
 * `spines` spines, `par` parallel cables between every leaf and spine.
 * Leaf port h + 1 + k*par + j goes to spine k, spine port 1 + l*par + j to leaf l.
 */
static inline void fix_fat_tree(struct fix *x, unsigned leaves, unsigned spines, unsigned h, unsigned par,
				unsigned plane)
{
	unsigned base = x->n_sw;
	for (unsigned l = 0; l < leaves; l++)
		fix_switch(x, h + spines * par, plane);
	for (unsigned k = 0; k < spines; k++)
		fix_switch(x, leaves * par, plane);
	for (unsigned l = 0; l < leaves; l++)
		fix_hosts(x, x->sw[base + l], h, plane);
	for (unsigned l = 0; l < leaves; l++)
		for (unsigned k = 0; k < spines; k++)
			for (unsigned j = 0; j < par; j++)
				fix_link(x, x->sw[base + l], h + 1 + k * par + j, x->sw[base + leaves + k],
					 1 + l * par + j);
}

/*
 * 3-level fat tree of half-radix k: `pods` pods of k leaves (k hosts each)
 * and k aggregation switches (every leaf to every one), aggregation switch
 * j of every pod to the k cores of group j. Leaf ports: hosts 1..k,
 * aggregation j at k+1+j; aggregation ports: leaf i at 1+i, core c of its
 * group at k+1+c; core ports: pod p at 1+p.
 */
static inline void fix_fat_tree3(struct fix *x, unsigned pods, unsigned k)
{
	unsigned base = x->n_sw;
	for (unsigned p = 0; p < pods; p++)
		for (unsigned i = 0; i < 2 * k; i++)
			fix_switch(x, 2 * k, 0);  /* leaves then aggregation of pod p */
	for (unsigned c = 0; c < k * k; c++)
		fix_switch(x, pods, 0);
	for (unsigned p = 0; p < pods; p++)
		for (unsigned i = 0; i < k; i++)
			fix_hosts(x, x->sw[base + p * 2 * k + i], k, 0);
	for (unsigned p = 0; p < pods; p++)
		for (unsigned j = 0; j < k; j++) {
			uint32_t agg = x->sw[base + p * 2 * k + k + j];
			for (unsigned i = 0; i < k; i++)
				fix_link(x, x->sw[base + p * 2 * k + i], k + 1 + j, agg, 1 + i);
			for (unsigned c = 0; c < k; c++)
				fix_link(x, agg, k + 1 + c, x->sw[base + pods * 2 * k + j * k + c], 1 + p);
		}
}

/* w x hgt 2-D mesh of switches (ports 1..h hosts, h+1 east, h+2 west, h+3 south, h+4 north). */
static inline void fix_mesh(struct fix *x, unsigned w, unsigned hgt, unsigned h)
{
	unsigned base = x->n_sw;
	for (unsigned i = 0; i < w * hgt; i++)
		fix_switch(x, h + 4, 0);
	for (unsigned i = 0; i < w * hgt; i++)
		fix_hosts(x, x->sw[base + i], h, 0);
	for (unsigned r = 0; r < hgt; r++)
		for (unsigned c = 0; c < w; c++) {
			uint32_t s = x->sw[base + r * w + c];
			if (c + 1 < w)
				fix_link(x, s, h + 1, x->sw[base + r * w + c + 1], h + 2);
			if (r + 1 < hgt)
				fix_link(x, s, h + 3, x->sw[base + (r + 1) * w + c], h + 4);
		}
}

/* Endpoint port indices with a LID in plane, fabric order. */
static inline unsigned fix_host_ports(const struct sm_fabric *f, unsigned plane, uint32_t *out, unsigned max)
{
	unsigned n = 0;
	for (uint32_t i = 0; i < f->n_nodes; i++) {
		const struct sm_node *nd = &f->nodes[i];
		if (nd->type == SM_NODE_SWITCH || nd->plane != plane)
			continue;
		for (unsigned p = 1; p <= nd->nports; p++)
			if (sm_port(f, i, p)->lid && n < max)
				out[n++] = sm_port_index(f, i, p);
	}
	return n;
}

/*
 * Walk the route from endpoint port src to dlid; calls hop(arg, egress
 * port index) for every switch egress. Returns the number of switch hops,
 * or -1 on a black hole / loop (more than 64 hops).
 */
static inline int fix_walk(const struct sm_fabric *f, const struct sm_lfts *l, uint32_t src, uint16_t dlid,
			   void (*hop)(void *, uint32_t), void *arg)
{
	const struct sm_port *sp = &f->ports[src];
	uint32_t node = sp->peer_node;
	for (int hops = 0; hops < 64 && node != SM_NONE; hops++) {
		if (f->nodes[node].type != SM_NODE_SWITCH)
			return f->ports[f->planes[l->plane].lid_map[dlid]].node == node ? hops : -1;
		uint8_t e = sm_lfts_get(l, node, dlid);
		if (e == SM_LFT_NONE || e == 0 || e > f->nodes[node].nports)
			return e == 0 && sm_port(f, node, 0)->lid == dlid ? hops : -1;
		if (hop)
			hop(arg, sm_port_index(f, node, e));
		node = sm_port(f, node, e)->peer_node;
	}
	return -1;
}

#endif
