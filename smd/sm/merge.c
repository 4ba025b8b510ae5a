/* SPDX-License-Identifier: MIT */
/*
 * DOC: an incomplete sweep, completed from the state (phases.h sm_sweep_merge)
 *
 * A heavy sweep that lost answers (sm.h "incomplete") found a subset of the
 * fabric: a node behind a lost NodeInfo, a link whose PortInfo never came,
 * a switch without SwitchInfo are missing or half known. Routing that
 * subset would program LFTs without the hosts it missed: black holes for
 * every pair that involves them. So what the sweep could not see is taken
 * from the state (the last bring-up's fabric, sweep tables and attributes):
 *   - every node of the state the sweep did not find, with its DR path,
 *     NodeInfo, SwitchInfo, PortInfo, description and port GUIDs;
 *   - for nodes both know, every PortInfo/SwitchInfo/description the sweep
 *     did not get;
 *   - every link of the state whose two ports the sweep left unlinked,
 *     unless a PortInfo read in this sweep shows one of its ports down:
 *     only a read confirms that a link is gone;
 *   - nodes then not reachable from the SM's node are left out, and a kept
 *     node whose remembered path no longer holds gets a new one (BFS).
 * The sweep's own answers always win: a port it saw linked elsewhere, a GUID
 * it found with another type or port count, keep what it found.
 *
 * Also here: path checks and re-pathing shared with the incremental sweep
 * (delta.c).
 */
#include "sm/phases.h"
#include "sm/state.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

int sm_sweep_path_holds(const struct sm_core *c, const struct sm_dr_path *p, uint32_t n)
{
	uint32_t x = c->tab.sm_node;
	for (unsigned i = 1; i <= p->cnt; i++) {
		const struct sm_port *pt = sm_fabric_port_checked(c->f, x, p->hops[i]);
		if (!pt || pt->peer_node == SM_NONE)
			return 0;
		x = pt->peer_node;
	}
	return x == n;
}

/* BFS from the SM's node over c->f: bp (shortest DR path of each node), seen (reached); -ENOMEM. */
static int bfs_paths(const struct sm_core *c, struct sm_dr_path *bp, uint8_t *seen)
{
	const struct sm_fabric *f = c->f;
	uint32_t *queue = malloc(((size_t)f->n_nodes + 1) * sizeof(*queue));
	uint32_t head = 0, tail = 0;

	if (!queue)
		return -ENOMEM;
	if (c->tab.sm_node < f->n_nodes) {
		seen[c->tab.sm_node] = 1;
		memset(&bp[c->tab.sm_node], 0, sizeof(bp[c->tab.sm_node]));   /* the empty path */
		queue[tail++] = c->tab.sm_node;
	}
	/* switches forward DR SMPs; of CAs only the SM's own node (hop 1 leaves by its port) */
	while (head < tail) {
		uint32_t n = queue[head++];
		const struct sm_node *nd = &f->nodes[n];
		for (unsigned p = 1; p <= nd->nports; p++) {
			if (nd->type != SM_NODE_SWITCH && !(n == c->tab.sm_node && p == c->tab.sm_portnum))
				continue;
			uint32_t pn = sm_port(f, n, p)->peer_node;
			if (pn == SM_NONE || seen[pn])
				continue;
			bp[pn] = bp[n];
			if (sm_dr_path_push(&bp[pn], (uint8_t)p))
				continue;
			seen[pn] = 1;
			queue[tail++] = pn;
		}
	}
	free(queue);
	return 0;
}

/* Paths replaced by the BFS's: where they no longer hold, and with shorten where the BFS's is shorter. */
static int repath(struct sm_core *c, const uint8_t *count, uint8_t *reached, int shorten)
{
	const struct sm_fabric *f = c->f;
	/* bp[n] is read only where seen[n]: set by the BFS first (no 2.9 MB clear at 40k hosts) */
	struct sm_dr_path *bp = malloc(((size_t)f->n_nodes + 1) * sizeof(*bp));
	uint8_t *seen = calloc((size_t)f->n_nodes + 1, 1);
	int moved = 0;

	if (!bp || !seen || bfs_paths(c, bp, seen)) {
		moved = -ENOMEM;
		goto out;
	}
	for (uint32_t n = 0; n < f->n_nodes; n++) {
		if (reached)
			reached[n] = seen[n];
		if (!seen[n])
			continue;
		if (shorten ? c->tab.path[n].cnt <= bp[n].cnt && sm_sweep_path_holds(c, &c->tab.path[n], n) :
			      sm_sweep_path_holds(c, &c->tab.path[n], n))
			continue;
		c->tab.path[n] = bp[n];
		if (!count || count[n])
			moved++;
	}
out:
	free(bp);
	free(seen);
	return moved;
}

int sm_sweep_repath(struct sm_core *c, const uint8_t *count, uint8_t *reached)
{
	return repath(c, count, reached, 0);
}

int sm_sweep_shorten_paths(struct sm_core *c)
{
	return repath(c, NULL, NULL, 1);
}

/* Node o of the state (sf, st) into c->f: index, or -errno; -EEXIST when a GUID of it is taken. */
static int64_t add_node(struct sm_core *c, const struct sm_fabric *sf, const struct sm_state *st, uint32_t o)
{
	const struct sm_node *on = &sf->nodes[o];
	int64_t n = sm_fabric_add_node(c->f, (enum sm_node_type)on->type, on->guid, on->nports, c->plane,
				       on->type == SM_NODE_SWITCH ? sf->ports[on->port0].guid : 0);
	if (n < 0)
		return n;
	int rc = sm_core_grow(c);
	if (rc)
		return rc;
	struct sm_node *nd = &c->f->nodes[n];
	nd->sysimg_guid = on->sysimg_guid;
	nd->vendor_id = on->vendor_id;
	nd->device_id = on->device_id;
	nd->revision = on->revision;
	nd->lft_cap = on->lft_cap;
	nd->flags = on->flags;
	c->tab.path[n] = st->tab.path[o];
	c->tab.ni[n] = st->snap->ni[o];
	return n;
}

/* What the sweep did not read of node n, from the state's node o (same GUID, type and ports). */
static void fill_node(struct sm_core *c, uint32_t n, const struct sm_fabric *sf, const struct sm_snapshot *ss,
		      uint32_t o)
{
	struct sm_fabric *f = c->f;
	const struct sm_node *on = &sf->nodes[o];

	if (!c->tab.si_ok[n] && ss->si_ok[o]) {
		c->tab.si[n] = ss->si[o];
		c->tab.si_ok[n] = 1;
		f->nodes[n].lft_cap = on->lft_cap;
		f->nodes[n].flags |= on->flags;
	}
	if (!f->nodes[n].desc[0] && on->desc[0])
		sm_fabric_set_desc(f, n, on->desc);
	for (unsigned p = 0; p <= on->nports; p++) {
		uint32_t idx = sm_port_index(f, n, p), oidx = on->port0 + p;
		const struct sm_port *op = &sf->ports[oidx];
		struct sm_port *pt = &f->ports[idx];
		if (on->type != SM_NODE_SWITCH && p && op->guid && !pt->guid)
			(void)sm_fabric_set_port_guid(f, n, p, op->guid);   /* taken: the sweep's owner wins */
		if (c->tab.pi_ok[idx] || !ss->pi_ok[oidx])
			continue;
		c->tab.pi[idx] = ss->pi[oidx];
		c->tab.pi_ok[idx] = 1;
		pt->state = op->state;
		pt->phys_state = op->phys_state;
		pt->width = op->width;
		pt->speed = op->speed;
		pt->flags = op->flags;
	}
}

/* The state's links between nodes both now have, where the sweep left both ends unlinked and saw neither down. */
static void merge_links(struct sm_core *c, const struct sm_fabric *sf, const uint32_t *map, const uint8_t *down,
			uint32_t n_read)
{
	struct sm_fabric *f = c->f;

	for (uint32_t o = 0; o < sf->n_nodes; o++) {
		const struct sm_node *on = &sf->nodes[o];
		if (map[o] == SM_NONE)
			continue;
		for (unsigned p = 1; p <= on->nports; p++) {
			const struct sm_port *op = &sf->ports[on->port0 + p];
			uint32_t o2 = op->peer_node;
			if (o2 == SM_NONE || map[o2] == SM_NONE || o2 < o || (o2 == o && op->peer_port < p))
				continue;   /* each link once */
			uint32_t ia = sm_port_index(f, map[o], p), ib = sm_port_index(f, map[o2], op->peer_port);
			if ((ia < n_read && down[ia]) || (ib < n_read && down[ib]))
				continue;   /* read down in this sweep: gone */
			if (f->ports[ia].peer_node != SM_NONE || f->ports[ib].peer_node != SM_NONE)
				continue;   /* the sweep saw these ports linked: what it saw wins */
			if (!sm_fabric_link(f, map[o], p, map[o2], op->peer_port))
				c->merged_links++;
		}
	}
}

int sm_sweep_merge(struct sm_core *c, uint8_t **keep_out, char *err, size_t errlen)
{
	const struct sm_state *st = c->state;
	const struct sm_fabric *sf = sm_state_fabric(st);
	const struct sm_snapshot *ss = st ? st->snap : NULL;
	uint32_t *map = NULL;
	uint8_t *down = NULL, *keep = NULL;
	int rc = 0;

	*keep_out = NULL;
	c->merged_nodes = c->merged_links = 0;
	if (!sf || !ss->ni || !ss->si || !ss->si_ok || !ss->pi || !ss->pi_ok || ss->attr_nodes < sf->n_nodes ||
	    ss->attr_ports < sf->n_ports || st->tab.cap_nodes < sf->n_nodes || !st->tab.path ||
	    c->tab.sm_node == SM_NONE)
		return 0;   /* nothing known to keep */
	uint32_t n_read = c->f->n_ports, n_found = c->f->n_nodes;
	map = malloc(((size_t)sf->n_nodes + 1) * sizeof(*map));
	down = calloc((size_t)n_read + 1, 1);
	if (!map || !down) {
		rc = -ENOMEM;
		goto out;
	}
	/* only a port read in this sweep confirms a link is gone */
	for (uint32_t i = 0; i < n_read; i++)
		down[i] = c->tab.pi_ok[i] && !sm_port_up(&c->tab.pi[i]);
	for (uint32_t o = 0; o < sf->n_nodes && !rc; o++) {
		const struct sm_node *on = &sf->nodes[o];
		uint32_t n = sm_fabric_find_node(c->f, on->guid);
		map[o] = SM_NONE;
		if (n == SM_NONE) {
			int64_t r = add_node(c, sf, st, o);
			if (r == -EEXIST || r == -EINVAL)
				continue;   /* a port GUID of it now belongs to another node: the sweep wins */
			if (r < 0) {
				rc = (int)r;
				break;
			}
			n = (uint32_t)r;
		} else if (c->f->nodes[n].type != on->type || c->f->nodes[n].nports != on->nports) {
			continue;
		}
		map[o] = n;
		fill_node(c, n, sf, ss, o);
	}
	if (rc)
		goto out;
	merge_links(c, sf, map, down, n_read);
	keep = calloc((size_t)c->f->n_nodes + 1, 1);
	if (!keep) {
		rc = -ENOMEM;
		goto out;
	}
	int moved = sm_sweep_repath(c, NULL, keep);
	if (moved < 0) {
		rc = moved;
		goto out;
	}
	for (uint32_t n = 0; n < c->f->n_nodes; n++) {
		if (n < n_found)
			keep[n] = 1;   /* what answered stays, reached by BFS or not (beyond 63 hops) */
		else
			c->merged_nodes += keep[n];
	}
	*keep_out = keep;
	keep = NULL;
out:
	if (rc)
		snprintf(err, errlen, "keeping what the sweep could not see: %s", strerror(-rc));
	free(map);
	free(down);
	free(keep);
	return rc;
}
