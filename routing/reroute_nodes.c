/* SPDX-License-Identifier: MIT */
/*
 * DOC: a reroute after hosts went away or came back (reroute_nodes.h)
 *
 * renumber() matches the nodes of a smaller and a larger fabric by GUID,
 * in order: the smaller must hold no node the larger lacks, miss only
 * endpoints of the plane, keep every LID and the plane's top LID, and each
 * of its cables must be one of the larger's. The copy of the larger then
 * loses the cables the smaller lacks (those of the missing nodes
 * included): the smaller fabric in the larger one's numbering. Cost: one
 * copy of a fabric and one pass over both fabrics' ports, O(nodes +
 * ports); 40,960 hosts: ~45 k nodes, 9 ms.
 */
#include "config.h"
#include "routing/reroute_nodes.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int is_endpoint(const struct sm_node *nd)
{
	return nd->type == SM_NODE_CA || nd->type == SM_NODE_ROUTER;
}

/* map[big node] = small node or SM_NONE, inv[small node] = big node; 1 when small is big minus endpoints, in order. */
static int match_nodes(const struct sm_fabric *small, const struct sm_fabric *big, unsigned plane, uint32_t *map,
		       uint32_t *inv)
{
	/*
	 * One walk of both in step, no GUID lookup: a node of big that is not
	 * small's next is taken as missing; a node of small met out of order
	 * (or one big lacks) is never reached, so next falls short: 0, as a
	 * lookup would find.
	 */
	uint32_t next = 0;
	for (uint32_t n = 0; n < big->n_nodes; n++) {
		const struct sm_node *a = &big->nodes[n];
		uint32_t k = next < small->n_nodes && small->nodes[next].guid == a->guid ? next : SM_NONE;
		map[n] = k;
		if (k == SM_NONE) {
			if (!is_endpoint(a) || a->plane != plane)
				return 0;
			continue;
		}
		const struct sm_node *b = &small->nodes[k];
		next++;
		if (b->type != a->type || b->plane != a->plane || b->nports != a->nports)
			return 0;
		inv[k] = n;
	}
	return next == small->n_nodes;
}

/*
 * Every port of small as in big (LIDs; a cable, or none where big has
 * one); with !lost_ok, every cable of big between nodes small holds is
 * small's too. 1 when so.
 */
static int match_ports(const struct sm_fabric *small, const struct sm_fabric *big, const uint32_t *map,
		       const uint32_t *inv, int lost_ok)
{
	for (uint32_t n = 0; n < big->n_nodes; n++) {
		if (map[n] == SM_NONE)
			continue;
		for (unsigned p = 0; p <= big->nodes[n].nports; p++) {
			const struct sm_port *a = sm_port(big, n, p), *b = sm_port(small, map[n], p);
			if (a->lid != b->lid || a->lmc != b->lmc)
				return 0;
			if (b->peer_node != SM_NONE &&
			    (b->peer_node >= small->n_nodes || inv[b->peer_node] != a->peer_node || b->peer_port != a->peer_port))
				return 0; /* a cable the larger fabric lacks */
			if (!lost_ok && b->peer_node == SM_NONE && a->peer_node != SM_NONE && map[a->peer_node] != SM_NONE)
				return 0;
		}
	}
	return 1;
}

/* small in big's numbering (*out) as the DOC says: 1, 0 (not so), -ENOMEM. */
static int renumber(const struct sm_fabric *small, const struct sm_fabric *big, unsigned plane, int lost_ok,
		    struct sm_fabric **out)
{
	*out = NULL;
	if (small->n_nodes >= big->n_nodes || plane >= small->n_planes || small->n_planes != big->n_planes ||
	    small->planes[plane].max_lid != big->planes[plane].max_lid)
		return 0;
	uint32_t *map = malloc(((size_t)big->n_nodes + 1) * sizeof(*map));
	uint32_t *inv = malloc(((size_t)small->n_nodes + 1) * sizeof(*inv));
	int rc = -ENOMEM;
	if (!map || !inv)
		goto out;
	rc = match_nodes(small, big, plane, map, inv) && match_ports(small, big, map, inv, lost_ok);
	if (rc <= 0)
		goto out;
	struct sm_fabric *g = sm_fabric_new();
	if (!g || sm_fabric_append(g, big, NULL)) {
		sm_fabric_free(g);
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t n = 0; n < big->n_nodes; n++)
		for (unsigned p = 1; p <= big->nodes[n].nports; p++)
			if (sm_port(g, n, p)->peer_node != SM_NONE &&
			    (map[n] == SM_NONE || sm_port(small, map[n], p)->peer_node == SM_NONE))
				sm_fabric_unlink(g, n, p);
	*out = g;
	rc = 1;
out:
	free(map);
	free(inv);
	return rc;
}

/* The switch slots of plane in f: *sw [ns], *slot [f->n_nodes]; 0, -EINVAL (not ns switches), -ENOMEM. */
static int layout(const struct sm_fabric *f, unsigned plane, uint32_t ns, uint32_t **sw, uint32_t **slot)
{
	uint32_t k = 0;
	for (uint32_t n = 0; n < f->n_nodes; n++)
		k += f->nodes[n].type == SM_NODE_SWITCH && f->nodes[n].plane == plane;
	if (k != ns)
		return -EINVAL;
	*sw = malloc(((size_t)ns + 1) * sizeof(**sw));
	*slot = malloc(((size_t)f->n_nodes + 1) * sizeof(**slot));
	if (!*sw || !*slot) {
		free(*sw);
		free(*slot);
		return -ENOMEM;
	}
	for (uint32_t n = 0, s = 0; n < f->n_nodes; n++) {
		(*slot)[n] = SM_NONE;
		if (f->nodes[n].type == SM_NODE_SWITCH && f->nodes[n].plane == plane) {
			(*slot)[n] = s;
			(*sw)[s++] = n;
		}
	}
	return 0;
}

int sm_reroute_relayout(struct sm_lfts *l, const struct sm_fabric *f, unsigned plane)
{
	uint32_t *sw, *slot;
	int rc = layout(f, plane, l->n_switches, &sw, &slot);
	if (rc)
		return rc;
	free(l->sw_node);
	free(l->slot_of_node);
	l->sw_node = sw;
	l->slot_of_node = slot;
	l->n_nodes = f->n_nodes;
	return 0;
}

int sm_reroute_renum_begin(struct sm_reroute_renum *rn, const struct sm_fabric *f, const struct sm_fabric *pf,
			   const struct sm_lfts *pl, unsigned plane)
{
	memset(rn, 0, sizeof(*rn));
	int rc = renumber(f, pf, plane, 1, &rn->fp);
	if (rc)
		return rc;
	rc = renumber(pf, f, plane, 0, &rn->pfp);
	if (rc <= 0)
		return rc;
	rn->prev = *pl;
	rc = layout(f, plane, pl->n_switches, &rn->prev.sw_node, &rn->prev.slot_of_node);
	if (rc) {
		sm_fabric_free(rn->pfp);
		memset(rn, 0, sizeof(*rn));
		return rc == -ENOMEM ? rc : 0;
	}
	rn->prev.n_nodes = f->n_nodes;
	rn->vprev.f = rn->pfp;
	rn->vprev.l = &rn->prev;
	return 1;
}

void sm_reroute_renum_end(struct sm_reroute_renum *rn)
{
	if (rn->pfp) {
		free(rn->prev.sw_node);
		free(rn->prev.slot_of_node);
	}
	sm_fabric_free(rn->fp);
	sm_fabric_free(rn->pfp);
	memset(rn, 0, sizeof(*rn));
}

/* Switch n of pf has an endpoint cabled to some port. */
static int hostful(const struct sm_fabric *pf, uint32_t n)
{
	for (unsigned p = 1; p <= pf->nodes[n].nports; p++) {
		uint32_t q = sm_port(pf, n, p)->peer_node;
		if (q != SM_NONE && q < pf->n_nodes && is_endpoint(&pf->nodes[q]))
			return 1;
	}
	return 0;
}

int sm_reroute_hosts_back(const struct sm_fabric *f, const struct sm_fabric *pf, unsigned plane)
{
	if (f->n_ports != pf->n_ports || f->n_nodes != pf->n_nodes)
		return 0;
	for (uint32_t i = 0; i < f->n_ports; i++) {
		const struct sm_port *a = &f->ports[i], *b = &pf->ports[i];
		if (a->peer_node == b->peer_node && (a->peer_node == SM_NONE || a->peer_port == b->peer_port))
			continue;
		if (b->peer_node != SM_NONE || a->peer_node >= f->n_nodes)
			return 0; /* a cable lost or moved */
		const struct sm_node *nd = &f->nodes[a->node], *pn = &f->nodes[a->peer_node];
		const struct sm_node *ep = is_endpoint(nd) ? nd : pn;
		uint32_t sw = is_endpoint(nd) ? a->peer_node : a->node;
		if (!is_endpoint(ep) || f->nodes[sw].type != SM_NODE_SWITCH || ep->plane != plane ||
		    f->nodes[sw].plane != plane || !hostful(pf, sw))
			return 0;
	}
	return 1;
}
