/* SPDX-License-Identifier: MIT */
/*
 * DOC: the cables a reroute lost (reroute.h)
 *
 * Compares two fabrics of one numbering port by port: a port whose peer
 * is gone is a removed cable end; a peer that appeared or changed means
 * the fabric grew, which only a full routing and validation can judge.
 *
 * Cost: O(nodes + ports).
 */
#include "config.h"
#include "routing/reroute.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int sm_reroute_same_numbering(const struct sm_fabric *f, const struct sm_fabric *pf, unsigned plane,
			      const struct sm_lfts *l, const struct sm_lfts *pl)
{
	if (f->n_nodes != pf->n_nodes || f->n_ports != pf->n_ports || plane >= f->n_planes ||
	    plane >= pf->n_planes || f->planes[plane].max_lid != pf->planes[plane].max_lid)
		return 0;
	for (uint32_t n = 0; n < f->n_nodes; n++) {
		const struct sm_node *a = &f->nodes[n], *b = &pf->nodes[n];
		if (a->guid != b->guid || a->type != b->type || a->plane != b->plane || a->nports != b->nports ||
		    a->port0 != b->port0)
			return 0;
	}
	for (uint32_t i = 0; i < f->n_ports; i++)
		if (f->ports[i].lid != pf->ports[i].lid || f->ports[i].lmc != pf->ports[i].lmc)
			return 0;
	if (!l)
		return pl->n_nodes == pf->n_nodes;
	if (l->n_switches != pl->n_switches || l->top_lid != pl->top_lid || l->n_nodes != pl->n_nodes ||
	    pl->n_nodes != pf->n_nodes)
		return 0;
	return !memcmp(l->sw_node, pl->sw_node, (size_t)l->n_switches * sizeof(*l->sw_node));
}

static int removed(const struct sm_port *a, const struct sm_port *b)
{
	return a->peer_node != b->peer_node || (a->peer_node != SM_NONE && a->peer_port != b->peer_port);
}

int sm_reroute_removed(const struct sm_fabric *f, const struct sm_fabric *pf, uint32_t **out, uint32_t *n)
{
	uint32_t cnt = 0;
	*out = NULL;
	*n = 0;
	for (uint32_t i = 0; i < f->n_ports; i++) {
		if (!removed(&f->ports[i], &pf->ports[i]))
			continue;
		if (f->ports[i].peer_node != SM_NONE)
			return 0; /* a cable appeared or moved */
		cnt++;
	}
	if (!cnt)
		return 1;
	uint32_t *v = malloc(cnt * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (uint32_t i = 0; i < f->n_ports; i++)
		if (removed(&f->ports[i], &pf->ports[i]))
			v[(*n)++] = i;
	*out = v;
	return 1;
}
