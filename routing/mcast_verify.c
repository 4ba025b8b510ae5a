/* SPDX-License-Identifier: MIT */
/*
 * DOC: multicast forwarding check by flooding (sm_mcast_verify(),
 * routing/mcast.h): the MFTs say nothing about groups, so every member is
 * made to send and the deliveries are compared with the receivers.
 */
#include "routing/mcast.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct vf_hop {
	uint32_t node;
	uint8_t in;
	uint32_t hops;
};

struct vf_ctx {
	const struct sm_fabric *f;
	const struct sm_mfts *m;
	uint32_t *rstamp;   /* [n_ports] receiver of the current group */
	uint32_t *dstamp;   /* [n_ports] delivered in the current flood */
	uint32_t *vstamp;   /* [n_nodes] entered in the current flood */
	uint32_t *sstamp;   /* [n_nodes] flooded from in the current group: */
	uint32_t *sgot;     /* ... receivers reached */
	uint64_t *sextra;   /* ... extra deliveries */
	struct vf_hop *q;   /* [n_nodes] */
	uint32_t gstamp, fstamp;
};

/* The switch a member sends into and the port it enters by; SM_NONE if not cabled to a switch of the plane. */
static uint32_t entry(const struct sm_fabric *f, unsigned plane, uint32_t pi, uint8_t *in)
{
	if (pi >= f->n_ports || f->nodes[f->ports[pi].node].plane != plane)
		return SM_NONE;
	const struct sm_port *p = &f->ports[pi];
	if (f->nodes[p->node].type == SM_NODE_SWITCH) {
		*in = 0;
		return p->num == 0 ? p->node : SM_NONE;
	}
	if (p->peer_node == SM_NONE || f->nodes[p->peer_node].type != SM_NODE_SWITCH)
		return SM_NONE;
	*in = p->peer_port;
	return p->peer_node;
}

static void deliver(struct vf_ctx *c, uint32_t pi, uint32_t *got, struct sm_mcast_verdict *v)
{
	if (c->rstamp[pi] != c->gstamp || c->dstamp[pi] == c->fstamp) {
		v->extra++;
		return;
	}
	c->dstamp[pi] = c->fstamp;
	(*got)++;
}

/* One packet from the member at port index src: receivers reached in *got. */
static void flood(struct vf_ctx *c, uint32_t sw, uint8_t in, uint16_t mlid, uint32_t *got,
		  struct sm_mcast_verdict *v)
{
	const struct sm_fabric *f = c->f;
	uint32_t head = 0, tail = 0;

	c->fstamp++;
	c->vstamp[sw] = c->fstamp;
	c->q[tail++] = (struct vf_hop){ sw, in, 0 };
	while (head < tail) {
		struct vf_hop h = c->q[head++];
		const uint64_t *mask = sm_mfts_mask(c->m, h.node, mlid);
		const struct sm_node *nd = &f->nodes[h.node];
		if (h.hops > v->max_hops)
			v->max_hops = h.hops;
		for (unsigned p = 0; mask && p <= nd->nports; p++) {
			if (p == h.in || !(mask[p >> 6] >> (p & 63) & 1))
				continue;
			const struct sm_port *pt = &f->ports[nd->port0 + p];
			if (p == 0) {
				deliver(c, nd->port0, got, v);
				continue;
			}
			if (pt->peer_node == SM_NONE)
				continue;
			const struct sm_node *pn = &f->nodes[pt->peer_node];
			if (pn->type != SM_NODE_SWITCH) {
				deliver(c, pn->port0 + pt->peer_port, got, v);
				continue;
			}
			if (c->vstamp[pt->peer_node] == c->fstamp) {
				v->loops++;
				continue;
			}
			c->vstamp[pt->peer_node] = c->fstamp;
			c->q[tail++] = (struct vf_hop){ pt->peer_node, pt->peer_port, h.hops + 1 };
		}
	}
}

/*
 * One flood per switch members send from (entering by no port: NO_PORT), not
 * one per member: a packet from the member behind port p of switch x takes
 * the same way except that it never leaves x by p, which is exactly the
 * delivery to the sender itself. So each sender's count is its switch's
 * minus what port p would have delivered (to the sender: counted as reached
 * if it receives, as extra if not); loops do not go through a member's port.
 */
#define NO_PORT 0xFF
static void verify_group(struct vf_ctx *c, unsigned plane, const struct sm_mcast_group *g, struct sm_mcast_verdict *v)
{
	const struct sm_fabric *f = c->f;
	uint32_t n_in = 0, n_recv = 0;
	uint8_t in;

	c->gstamp++;
	for (uint32_t i = 0; i < g->n; i++) {
		if (entry(f, plane, g->m[i].port, &in) == SM_NONE)
			continue;
		n_in++;
		if (g->m[i].recv && c->rstamp[g->m[i].port] != c->gstamp) {
			c->rstamp[g->m[i].port] = c->gstamp;
			n_recv++;
		}
	}
	if (n_in < 2 || !n_recv)
		return;
	uint64_t bad = v->unreached + v->extra + v->loops;
	for (uint32_t i = 0; i < g->n; i++) {
		uint32_t sw = entry(f, plane, g->m[i].port, &in);
		if (sw == SM_NONE)
			continue;
		if (c->sstamp[sw] != c->gstamp) {
			struct sm_mcast_verdict one = { 0 };
			uint32_t got = 0;
			c->sstamp[sw] = c->gstamp;
			flood(c, sw, NO_PORT, g->mlid, &got, &one);
			c->sgot[sw] = got;
			c->sextra[sw] = one.extra;
			v->loops += one.loops;
			if (one.max_hops > v->max_hops)
				v->max_hops = one.max_hops;
		}
		const uint64_t *mask = sm_mfts_mask(c->m, sw, g->mlid);
		int self = c->rstamp[g->m[i].port] == c->gstamp, out = mask && (mask[in >> 6] >> (in & 63) & 1);
		uint32_t got = c->sgot[sw] - (out && self);
		uint32_t want = n_recv - self;
		v->floods++;
		v->extra += c->sextra[sw] - (out && !self);
		if (got < want)
			v->unreached += want - got;
	}
	if (v->unreached + v->extra + v->loops != bad && !v->first_bad_mlid)
		v->first_bad_mlid = g->mlid;
}

int sm_mcast_verify(const struct sm_fabric *f, unsigned plane, const struct sm_mfts *m,
		    const struct sm_mcast_group *g, size_t n, struct sm_mcast_verdict *v)
{
	struct vf_ctx c = { .f = f, .m = m };
	int rc = 0;

	memset(v, 0, sizeof(*v));
	c.rstamp = calloc((size_t)f->n_ports + 1, sizeof(uint32_t));
	c.dstamp = calloc((size_t)f->n_ports + 1, sizeof(uint32_t));
	c.vstamp = calloc((size_t)f->n_nodes + 1, sizeof(uint32_t));
	c.q = malloc(((size_t)f->n_nodes + 1) * sizeof(*c.q));
	c.sstamp = calloc((size_t)f->n_nodes + 1, sizeof(uint32_t));
	c.sgot = calloc((size_t)f->n_nodes + 1, sizeof(uint32_t));
	c.sextra = calloc((size_t)f->n_nodes + 1, sizeof(uint64_t));
	if (!c.rstamp || !c.dstamp || !c.vstamp || !c.q || !c.sstamp || !c.sgot || !c.sextra)
		rc = -ENOMEM;
	for (size_t i = 0; i < n && !rc; i++)
		verify_group(&c, plane, &g[i], v);
	free(c.rstamp);
	free(c.dstamp);
	free(c.vstamp);
	free(c.q);
	free(c.sstamp);
	free(c.sgot);
	free(c.sextra);
	return rc;
}
