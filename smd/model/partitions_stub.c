/* SPDX-License-Identifier: MIT */
/*
 * DOC: STAND-IN for part of model/partitions.h until the partitions parser
 * (helper `pkey`, issue 14) is merged: the built-in default set, its free
 * and per-port membership, enough for the SA's multicast groups. When the
 * real model/partitions.c lands, delete this file (and its line in
 * smd/model/subdir.am): the functions here are the same symbols.
 */
#include "model/partitions.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sm_partitions_default(struct sm_partitions **out)
{
	struct sm_partitions *p = calloc(1, sizeof(*p));
	struct sm_partition *d = calloc(1, sizeof(*d));
	struct sm_part_member *m = calloc(1, sizeof(*m));
	struct sm_part_mgroup *g = calloc(1, sizeof(*g));

	*out = NULL;
	if (!p || !d || !m || !g) {
		free(p), free(d), free(m), free(g);
		return -ENOMEM;
	}
	snprintf(p->file, sizeof(p->file), "(default)");
	snprintf(d->name, sizeof(d->name), "Default");
	d->pkey = 0x7fff;
	d->ipoib = true;
	d->defmember = SM_PART_LIMITED;
	m->who = SM_PART_WHO_ALL;
	m->m = SM_PART_FULL;
	d->members = m;
	d->n_members = 1;
	/* ff12:401b:ffff::ffff:ffff, OpenSM's defaults */
	static const uint8_t bcast[16] = { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff };
	memcpy(g->mgid, bcast, 16);
	g->ipoib = true;
	g->mtu = 4;
	g->rate = 3;
	g->scope = 2;
	g->qkey = 0x0B1B;
	d->mgroups = g;
	d->n_mgroups = 1;
	p->v = d;
	p->n = 1;
	*out = p;
	return 0;
}

void sm_partitions_free(struct sm_partitions *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++) {
		free(p->v[i].members);
		free(p->v[i].mgroups);
	}
	free(p->v);
	free(p);
}

enum sm_part_membership sm_partition_port(const struct sm_partition *part, const struct sm_fabric *f,
					  uint32_t port, uint32_t sm_port)
{
	const struct sm_port *pt = &f->ports[port];
	uint8_t type = f->nodes[pt->node].type;
	unsigned m = SM_PART_NONE;

	if (type == SM_NODE_SWITCH && pt->num)
		return SM_PART_NONE;
	for (size_t i = 0; i < part->n_members; i++) {
		const struct sm_part_member *pm = &part->members[i];
		bool hit = false;

		switch (pm->who) {
		case SM_PART_WHO_GUID: hit = pm->guid == pt->guid; break;
		case SM_PART_WHO_ALL: hit = true; break;
		case SM_PART_WHO_ALL_CAS: hit = type == SM_NODE_CA; break;
		case SM_PART_WHO_ALL_SWITCHES: hit = type == SM_NODE_SWITCH; break;
		case SM_PART_WHO_ALL_ROUTERS: hit = type == SM_NODE_ROUTER; break;
		case SM_PART_WHO_SELF: hit = port == sm_port; break;
		}
		if (hit)
			m |= (unsigned)pm->m;
	}
	return (enum sm_part_membership)m;
}
