/* SPDX-License-Identifier: MIT */
/* DOC: fat-tree builder (see ftbuild.h). */
#include "config.h"
#include "bench.h"
#include "ftbuild.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#define G_SW 0x10000ull
#define G_CA 0x1000000ull
#define G_CAPORT 0x2000000ull

void ftb_shape_2level(struct ftb_shape *s, unsigned radix, unsigned hosts)
{
	*s = (struct ftb_shape){ .levels = 2, .hosts = radix / 2, .up = radix / 2, .width = 1 };
	s->leaves = (hosts + s->hosts - 1) / s->hosts;
}

void ftb_shape_3level(struct ftb_shape *s, unsigned radix, unsigned hosts)
{
	unsigned h = radix / 2;
	*s = (struct ftb_shape){ .levels = 3, .hosts = h, .leaves = h, .up = h, .width = 1, .core_up = h };
	s->pods = (hosts + h * h - 1) / (h * h);
}

uint32_t ftb_node(const struct sm_fabric *f, uint64_t guid)
{
	return sm_fabric_find_node(f, guid);
}

int ftb_build(struct sm_fabric *f, unsigned plane, const struct ftb_shape *s, uint64_t guid_base)
{
	unsigned w = s->width ? s->width : 1;
	unsigned pods = s->levels == 3 ? s->pods : 1;
	unsigned nleaf = pods * s->leaves, nmid = pods * s->up;
	unsigned ncore = s->levels == 3 ? s->up * s->core_up : 0;
	unsigned leaf_ports = s->hosts + s->up * w;
	unsigned mid_ports = s->levels == 3 ? s->leaves * w + s->core_up : nleaf * w;
	unsigned core_ports = pods;
	uint16_t lid = 1;
	int64_t r;
	int rc;

	if ((s->levels != 2 && s->levels != 3) || !s->leaves || !s->up || leaf_ports > SM_MAX_PORTS ||
	    mid_ports > SM_MAX_PORTS || core_ports > SM_MAX_PORTS)
		return -EINVAL;
	rc = sm_fabric_add_plane(f, plane, NULL);
	if (rc)
		return rc;
	uint32_t first = f->n_nodes;
	/* switches: leaves, mid (spines / aggregation), cores */
	for (unsigned i = 0; i < nleaf + nmid + ncore; i++) {
		unsigned np = i < nleaf ? leaf_ports : i < nleaf + nmid ? mid_ports : core_ports;
		r = sm_fabric_add_node(f, SM_NODE_SWITCH, guid_base + G_SW + i, np, plane, 0);
		if (r < 0)
			return (int)r;
		f->nodes[r].lft_cap = 0xc000;
		rc = sm_fabric_set_lid(f, (uint32_t)r, 0, lid++, 0);
		if (rc)
			return rc;
	}
	/* leaf <-> mid */
	for (unsigned p = 0; p < pods; p++)
		for (unsigned l = 0; l < s->leaves; l++)
			for (unsigned j = 0; j < s->up; j++)
				for (unsigned k = 0; k < w; k++) {
					uint32_t leaf = first + p * s->leaves + l;
					uint32_t mid = first + nleaf + p * s->up + j;
					rc = sm_fabric_link(f, leaf, s->hosts + 1 + j * w + k, mid, 1 + l * w + k);
					if (rc)
						return rc;
				}
	/* mid <-> core: aggregation j of pod p to core group j */
	for (unsigned p = 0; p < pods && ncore; p++)
		for (unsigned j = 0; j < s->up; j++)
			for (unsigned c = 0; c < s->core_up; c++) {
				uint32_t mid = first + nleaf + p * s->up + j;
				uint32_t core = first + nleaf + nmid + j * s->core_up + c;
				rc = sm_fabric_link(f, mid, s->leaves * w + 1 + c, core, 1 + p);
				if (rc)
					return rc;
			}
	/* CAs, leaf by leaf */
	for (unsigned l = 0; l < nleaf; l++)
		for (unsigned h = 0; h < s->hosts; h++) {
			unsigned i = l * s->hosts + h;
			r = sm_fabric_add_node(f, SM_NODE_CA, guid_base + G_CA + i, 1, plane, 0);
			if (r < 0)
				return (int)r;
			uint32_t ca = (uint32_t)r;
			if ((rc = sm_fabric_set_port_guid(f, ca, 1, guid_base + G_CAPORT + i)) ||
			    (rc = sm_fabric_link(f, ca, 1, first + l, 1 + h)) ||
			    (rc = sm_fabric_set_lid(f, ca, 1, lid, (uint8_t)s->lmc)))
				return rc;
			sm_port(f, ca, 1)->state = SM_PORT_ACTIVE;
			lid = (uint16_t)(lid + (1u << s->lmc));
		}
	return 0;
}

int ftb_remove_links(struct sm_fabric *f, unsigned plane, double frac, uint64_t seed)
{
	size_t n = 0;
	uint32_t *lk = malloc(((size_t)f->n_ports + 1) * sizeof(*lk));
	if (!lk)
		return -ENOMEM;
	/* one entry per undirected switch-switch link: the lower (node, port) side */
	for (uint32_t i = 0; i < f->n_ports; i++) {
		const struct sm_port *pt = &f->ports[i];
		if (pt->peer_node == SM_NONE || pt->num == 0 || f->nodes[pt->node].plane != plane ||
		    f->nodes[pt->node].type != SM_NODE_SWITCH || f->nodes[pt->peer_node].type != SM_NODE_SWITCH)
			continue;
		if (sm_port_index(f, pt->peer_node, pt->peer_port) < i)
			continue;
		lk[n++] = i;
	}
	size_t k = (size_t)llround(frac * (double)n);
	for (size_t i = 0; i < k; i++) {
		size_t j = i + (size_t)(sm_splitmix64(&seed) % (n - i));
		uint32_t t = lk[i];
		lk[i] = lk[j];
		lk[j] = t;
		sm_fabric_unlink(f, f->ports[lk[i]].node, f->ports[lk[i]].num);
	}
	free(lk);
	return (int)k;
}
