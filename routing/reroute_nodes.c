/* SPDX-License-Identifier: MIT */
/*
 * DOC: a reroute after hosts went away (reroute_nodes.h)
 *
 * sm_reroute_renumber() matches the nodes of the two fabrics by GUID, in
 * order; f must hold no node pf lacks, lose only endpoints of the plane,
 * keep every LID and the plane's top LID, and every cable of f must be one
 * of pf. The copy of pf then loses the cables f lacks (those of the nodes
 * that went away included). Cost: one copy of pf and one pass over both
 * fabrics' ports, O(nodes + ports); 40,960 hosts: ~45 k nodes.
 */
#include "config.h"
#include "routing/reroute_nodes.h"

#include <errno.h>
#include <stdlib.h>

static int is_endpoint(const struct sm_node *nd)
{
	return nd->type == SM_NODE_CA || nd->type == SM_NODE_ROUTER;
}

/* map[pf node] = f node or SM_NONE, inv[f node] = pf node; 1 when f is pf minus endpoints, in order. */
static int match_nodes(const struct sm_fabric *f, const struct sm_fabric *pf, unsigned plane, uint32_t *map,
		       uint32_t *inv)
{
	uint32_t next = 0;
	for (uint32_t n = 0; n < pf->n_nodes; n++) {
		const struct sm_node *a = &pf->nodes[n];
		uint32_t k = sm_fabric_find_node(f, a->guid);
		map[n] = k;
		if (k == SM_NONE) {
			if (!is_endpoint(a) || a->plane != plane)
				return 0;
			continue;
		}
		const struct sm_node *b = &f->nodes[k];
		if (k != next++ || b->type != a->type || b->plane != a->plane || b->nports != a->nports)
			return 0;
		inv[k] = n;
	}
	return next == f->n_nodes;
}

/* Every port of f as in pf (LIDs; a cable, or none where pf's went); 1 when so. */
static int match_ports(const struct sm_fabric *f, const struct sm_fabric *pf, const uint32_t *map,
		       const uint32_t *inv)
{
	for (uint32_t n = 0; n < pf->n_nodes; n++) {
		if (map[n] == SM_NONE)
			continue;
		for (unsigned p = 0; p <= pf->nodes[n].nports; p++) {
			const struct sm_port *a = sm_port(pf, n, p), *b = sm_port(f, map[n], p);
			if (a->lid != b->lid || a->lmc != b->lmc)
				return 0;
			if (b->peer_node != SM_NONE &&
			    (b->peer_node >= f->n_nodes || inv[b->peer_node] != a->peer_node || b->peer_port != a->peer_port))
				return 0; /* a cable appeared or moved */
		}
	}
	return 1;
}

int sm_reroute_renumber(const struct sm_fabric *f, const struct sm_fabric *pf, unsigned plane,
			struct sm_fabric **fp)
{
	*fp = NULL;
	if (f->n_nodes >= pf->n_nodes || plane >= f->n_planes || plane >= pf->n_planes ||
	    f->planes[plane].max_lid != pf->planes[plane].max_lid || f->n_planes != pf->n_planes)
		return 0;
	uint32_t *map = malloc(((size_t)pf->n_nodes + 1) * sizeof(*map));
	uint32_t *inv = malloc(((size_t)f->n_nodes + 1) * sizeof(*inv));
	int rc = -ENOMEM;
	if (!map || !inv)
		goto out;
	rc = match_nodes(f, pf, plane, map, inv) && match_ports(f, pf, map, inv);
	if (rc <= 0)
		goto out;
	struct sm_fabric *g = sm_fabric_new();
	if (!g || sm_fabric_append(g, pf, NULL)) {
		sm_fabric_free(g);
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t n = 0; n < pf->n_nodes; n++)
		for (unsigned p = 1; p <= pf->nodes[n].nports; p++)
			if (sm_port(g, n, p)->peer_node != SM_NONE &&
			    (map[n] == SM_NONE || sm_port(f, map[n], p)->peer_node == SM_NONE))
				sm_fabric_unlink(g, n, p);
	*fp = g;
	rc = 1;
out:
	free(map);
	free(inv);
	return rc;
}

int sm_reroute_relayout(struct sm_lfts *l, const struct sm_fabric *f, unsigned plane)
{
	uint32_t ns = 0;
	for (uint32_t n = 0; n < f->n_nodes; n++)
		ns += f->nodes[n].type == SM_NODE_SWITCH && f->nodes[n].plane == plane;
	if (ns != l->n_switches)
		return -EINVAL;
	uint32_t *sw = malloc(((size_t)ns + 1) * sizeof(*sw));
	uint32_t *slot = malloc(((size_t)f->n_nodes + 1) * sizeof(*slot));
	if (!sw || !slot) {
		free(sw);
		free(slot);
		return -ENOMEM;
	}
	for (uint32_t n = 0, s = 0; n < f->n_nodes; n++) {
		slot[n] = SM_NONE;
		if (f->nodes[n].type == SM_NODE_SWITCH && f->nodes[n].plane == plane) {
			slot[n] = s;
			sw[s++] = n;
		}
	}
	free(l->sw_node);
	free(l->slot_of_node);
	l->sw_node = sw;
	l->slot_of_node = slot;
	l->n_nodes = f->n_nodes;
	return 0;
}
