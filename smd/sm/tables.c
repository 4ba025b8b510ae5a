/* SPDX-License-Identifier: MIT */
/*
 * DOC: per-switch sweep tables (tables.h): allocation, growth, copy, move,
 * and the GUID-order renumbering of a swept fabric together with its tables.
 */
#include "sm/tables.h"
#include "sm/mft.h"
#include "model/spare.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void sm_sweep_tables_init(struct sm_sweep_tables *t)
{
	memset(t, 0, sizeof(*t));
	t->sm_node = SM_NONE;
}

static void free_shadows(struct sm_sweep_tables *t)
{
	for (uint32_t n = 0; t->shadow && n < t->n_shadow; n++)
		sm_lft_shadow_free(&t->shadow[n]);
	free(t->shadow);
	t->shadow = NULL;
	t->n_shadow = 0;
}

void sm_sweep_tables_free(struct sm_sweep_tables *t)
{
	sm_spare_give(t->path, (size_t)t->cap_nodes * sizeof(*t->path));
	sm_spare_give(t->ni, (size_t)t->cap_nodes * sizeof(*t->ni));
	sm_spare_give(t->si, (size_t)t->cap_nodes * sizeof(*t->si));
	sm_spare_give(t->si_ok, t->cap_nodes);
	sm_spare_give(t->pi, (size_t)t->cap_ports * sizeof(*t->pi));
	sm_spare_give(t->pi_ok, t->cap_ports);
	free(t->qos_ok);
	free_shadows(t);
	sm_mft_shadows_free(t->mshadow, t->n_mshadow);
	sm_sweep_tables_init(t);
}

void sm_sweep_tables_move(struct sm_sweep_tables *dst, struct sm_sweep_tables *src)
{
	sm_sweep_tables_free(dst);
	*dst = *src;
	sm_sweep_tables_init(src);
}

static int grow_arr(void **p, size_t elem, uint32_t old, uint32_t need)
{
	if (!*p)
		old = 0;   /* moved out (sm_snapshot_take_attrs): nothing to keep */
	/* new: the last sweep's array of this size if kept (spare.h) */
	void *q = *p ? realloc(*p, (size_t)need * elem) : sm_spare_take((size_t)need * elem);
	if (!q)
		return -ENOMEM;
	memset((char *)q + (size_t)old * elem, 0, (size_t)(need - old) * elem);
	*p = q;
	return 0;
}

/* Room for n_nodes nodes and n_ports ports (at least). */
static int tables_grow(struct sm_sweep_tables *t, uint32_t n_nodes, uint32_t n_ports)
{
	if (n_nodes > t->cap_nodes) {
		if (grow_arr((void **)&t->path, sizeof(*t->path), t->cap_nodes, n_nodes) ||
		    grow_arr((void **)&t->ni, sizeof(*t->ni), t->cap_nodes, n_nodes) ||
		    grow_arr((void **)&t->si, sizeof(*t->si), t->cap_nodes, n_nodes) ||
		    grow_arr((void **)&t->si_ok, sizeof(*t->si_ok), t->cap_nodes, n_nodes))
			return -ENOMEM;
		t->cap_nodes = n_nodes;
	}
	if (n_ports > t->cap_ports) {
		if (grow_arr((void **)&t->pi, sizeof(*t->pi), t->cap_ports, n_ports) ||
		    grow_arr((void **)&t->pi_ok, sizeof(*t->pi_ok), t->cap_ports, n_ports))
			return -ENOMEM;
		t->cap_ports = n_ports;
	}
	return 0;
}

/* A new array of cap elements, the first n copied from src (if any), the rest zero. */
static void *start_arr(const void *src, size_t elem, uint32_t n, uint32_t cap)
{
	char *p = sm_spare_take((size_t)cap * elem);
	if (!p)
		return NULL;
	size_t done = src ? (size_t)n * elem : 0;
	if (done)
		memcpy(p, src, done);
	memset(p + done, 0, (size_t)cap * elem - done);
	return p;
}

int sm_sweep_tables_start(struct sm_sweep_tables *t, const struct sm_sweep_tables *src, uint32_t n_nodes,
			  uint32_t n_ports, uint32_t cap_nodes, uint32_t cap_ports)
{
	int si = src->si && src->si_ok, pi = src->pi && src->pi_ok;   /* as sm_sweep_tables_copy() */
	sm_sweep_tables_free(t);
	if (n_nodes > cap_nodes || n_ports > cap_ports)
		return -EINVAL;
	t->path = start_arr(src->path, sizeof(*t->path), n_nodes, cap_nodes);
	t->ni = start_arr(src->ni, sizeof(*t->ni), n_nodes, cap_nodes);
	t->si = start_arr(si ? src->si : NULL, sizeof(*t->si), n_nodes, cap_nodes);
	t->si_ok = start_arr(si ? src->si_ok : NULL, 1, n_nodes, cap_nodes);
	t->pi = start_arr(pi ? src->pi : NULL, sizeof(*t->pi), n_ports, cap_ports);
	t->pi_ok = start_arr(pi ? src->pi_ok : NULL, 1, n_ports, cap_ports);
	t->cap_nodes = cap_nodes;
	t->cap_ports = cap_ports;
	if (!t->path || !t->ni || !t->si || !t->si_ok || !t->pi || !t->pi_ok) {
		sm_sweep_tables_free(t);
		return -ENOMEM;
	}
	t->sm_node = src->sm_node;
	t->sm_portnum = src->sm_portnum;
	return 0;
}

/* While the sweep adds nodes: as the fabric's arrays grow (by its capacity, not one at a time). */
int sm_sweep_tables_fit(struct sm_sweep_tables *t, const struct sm_fabric *f)
{
	return tables_grow(t, f->n_nodes > t->cap_nodes && f->cap_nodes > f->n_nodes ? f->cap_nodes : f->n_nodes,
			   f->n_ports > t->cap_ports && f->cap_ports > f->n_ports ? f->cap_ports : f->n_ports);
}

void sm_sweep_tables_copy(struct sm_sweep_tables *dst, const struct sm_sweep_tables *src, uint32_t n_nodes,
			  uint32_t n_ports)
{
	if (src->path)
		memcpy(dst->path, src->path, (size_t)n_nodes * sizeof(*dst->path));
	if (src->ni)
		memcpy(dst->ni, src->ni, (size_t)n_nodes * sizeof(*dst->ni));
	if (src->si && src->si_ok) {
		memcpy(dst->si, src->si, (size_t)n_nodes * sizeof(*dst->si));
		memcpy(dst->si_ok, src->si_ok, n_nodes);
	}
	if (src->pi && src->pi_ok) {
		memcpy(dst->pi, src->pi, (size_t)n_ports * sizeof(*dst->pi));
		memcpy(dst->pi_ok, src->pi_ok, n_ports);
	}
	dst->sm_node = src->sm_node;
	dst->sm_portnum = src->sm_portnum;
}

int sm_sweep_tables_add_shadows(struct sm_sweep_tables *t, const struct sm_fabric *f)
{
	free_shadows(t);
	t->shadow = calloc((size_t)f->n_nodes + 1, sizeof(*t->shadow));
	if (!t->shadow)
		return -ENOMEM;
	t->n_shadow = f->n_nodes;
	return 0;
}

static int cmp_node_guid(const void *a, const void *b, void *arg)
{
	const struct sm_fabric *f = arg;
	uint64_t x = f->nodes[*(const uint32_t *)a].guid, y = f->nodes[*(const uint32_t *)b].guid;
	return x < y ? -1 : x > y;
}

/* g: the nodes of f listed in order[0..nk), with their ports and the links between them. */
static int renumber_fabric(const struct sm_fabric *f, unsigned plane, const uint32_t *order, uint32_t nk,
			   uint32_t *newidx, struct sm_fabric *g)
{
	int rc = sm_fabric_reserve(g, f->n_nodes, f->n_ports);
	if (!rc)
		rc = sm_fabric_add_plane(g, plane, f->planes[plane].name);
	for (uint32_t i = 0; i < nk && !rc; i++) {
		const struct sm_node *nd = &f->nodes[order[i]];
		int64_t n = sm_fabric_add_node(g, (enum sm_node_type)nd->type, nd->guid, nd->nports, nd->plane,
					       nd->type == SM_NODE_SWITCH ? f->ports[nd->port0].guid : 0);
		if (n < 0)
			return (int)n;
		newidx[order[i]] = (uint32_t)n;
		struct sm_node *m = &g->nodes[n];
		uint32_t port0 = m->port0;
		*m = *nd;
		m->port0 = port0;
		for (unsigned p = 0; p <= nd->nports && !rc; p++) {
			const struct sm_port *op = &f->ports[nd->port0 + p];
			struct sm_port *np = &g->ports[port0 + p];
			if (nd->type != SM_NODE_SWITCH && p && op->guid)
				rc = sm_fabric_set_port_guid(g, (uint32_t)n, p, op->guid);
			np->state = op->state;
			np->phys_state = op->phys_state;
			np->width = op->width;
			np->speed = op->speed;
			np->flags = op->flags;
		}
	}
	for (uint32_t n = 0; n < f->n_nodes && !rc; n++) {
		const struct sm_node *nd = &f->nodes[n];
		if (newidx[n] == SM_NONE)
			continue;
		for (unsigned p = 1; p <= nd->nports && !rc; p++) {
			const struct sm_port *op = &f->ports[nd->port0 + p];
			if (op->peer_node != SM_NONE && newidx[op->peer_node] != SM_NONE)
				rc = sm_fabric_link(g, newidx[n], p, newidx[op->peer_node], op->peer_port);
		}
	}
	return rc;
}

/* t's entries of f's nodes and ports, at their places in g. */
static int remap_tables(struct sm_sweep_tables *t, const struct sm_fabric *f, const struct sm_fabric *g,
			const uint32_t *newidx)
{
	struct sm_sweep_tables u;
	sm_sweep_tables_init(&u);
	if (tables_grow(&u, sm_sweep_tables_cap(g->n_nodes, SM_TABLES_NODE_STEP),
			sm_sweep_tables_cap(g->n_ports, SM_TABLES_PORT_STEP))) {
		sm_sweep_tables_free(&u);
		return -ENOMEM;
	}
	for (uint32_t n = 0; n < f->n_nodes; n++) {
		uint32_t m = newidx[n];
		if (m == SM_NONE)
			continue;
		u.path[m] = t->path[n];
		u.ni[m] = t->ni[n];
		u.si[m] = t->si[n];
		u.si_ok[m] = t->si_ok[n];
		for (unsigned p = 0; p <= f->nodes[n].nports; p++) {
			u.pi[g->nodes[m].port0 + p] = t->pi[f->nodes[n].port0 + p];
			u.pi_ok[g->nodes[m].port0 + p] = t->pi_ok[f->nodes[n].port0 + p];
		}
	}
	u.sm_node = t->sm_node != SM_NONE ? newidx[t->sm_node] : SM_NONE;
	u.sm_portnum = t->sm_portnum;
	sm_sweep_tables_move(t, &u);
	return 0;
}

/*
 * BFS adds nodes in the order answers arrive, which depends on timing and on
 * the window; engines may break ties by node index, so without this two runs
 * over the same fabric could route differently and rewrite LFT blocks for
 * nothing.
 */
/* Every node kept and already in GUID order: renumbering would give the same indices. */
static int in_order(const struct sm_fabric *f, const uint8_t *keep)
{
	for (uint32_t n = 0; n < f->n_nodes; n++)
		if ((keep && !keep[n]) || (n && f->nodes[n - 1].guid >= f->nodes[n].guid))
			return 0;
	return 1;
}

/*
 * What renumber_fabric() and remap_tables() give for the same order, in
 * place: the fabric loses its LIDs and plane records (sm_fabric_drop_lids),
 * the tables what remap_tables() does not carry over. An incremental sweep
 * that lost only links keeps the state's (GUID) order: 40k hosts, 12 ms of
 * faulting in a new fabric and new tables saved.
 */
static void canonical_in_place(struct sm_fabric *f, unsigned plane, struct sm_sweep_tables *t)
{
	sm_fabric_drop_lids(f, plane);
	free(t->qos_ok);
	t->qos_ok = NULL;
	t->qos_sig = 0;
	t->pi_sig = 0;
	free_shadows(t);
	sm_mft_shadows_free(t->mshadow, t->n_mshadow);
	t->mshadow = NULL;
	t->n_mshadow = 0;
	if (t->sm_node != SM_NONE && t->sm_node >= f->n_nodes)
		t->sm_node = SM_NONE;
}

/* Nodes after the ordered ones that go through scratch at most (a few new hosts; else: a new fabric). */
#define RENUM_TAIL_MAX 256u

/*
 * The kept nodes of f are in GUID order up to n_ord, the few kept nodes after
 * it (tail[0..nt), the ones this sweep added) sorted by GUID: newidx and the
 * new port0 of every node, merging the two; the counts after.
 */
static void plan_merge(const struct sm_fabric *f, const uint8_t *keep, uint32_t n_ord, const uint32_t *tail,
		       uint32_t nt, uint32_t *newidx, uint32_t *port0, uint32_t *nn, uint32_t *np)
{
	uint32_t i = 0, j = 0, m = 0, q = 0;
	for (uint32_t n = 0; n < f->n_nodes; n++)
		newidx[n] = port0[n] = SM_NONE;
	for (;;) {
		while (i < n_ord && keep && !keep[i])
			i++;
		uint32_t n;
		if (i < n_ord && (j == nt || f->nodes[i].guid < f->nodes[tail[j]].guid))
			n = i++;
		else if (j < nt)
			n = tail[j++];
		else
			break;
		newidx[n] = m++;
		port0[n] = q;
		q += f->nodes[n].nports + 1u;
	}
	*nn = m;
	*np = q;
}

/*
 * What renumber_fabric() and remap_tables() give, in place, when the kept
 * nodes are in GUID order but for a few at the end (a host gone, a host back:
 * 40k hosts, a new fabric and new tables faulted in and filled cost ~25 ms).
 * 1: not that case (nothing changed); 0 or -ENOMEM.
 */
static int renumber_in_place(struct sm_fabric *f, unsigned plane, struct sm_sweep_tables *t, const uint8_t *keep)
{
	uint32_t n_old = f->n_nodes, n_ord = 0, last = SM_NONE, nt = 0, tail[RENUM_TAIL_MAX], tail_ports = 0, q = 0;
	/* the moves rely on the ports laid out in node order, as the sweep adds them */
	for (uint32_t n = 0; n < n_old; n++) {
		if (f->nodes[n].port0 != q)
			return 1;
		q += f->nodes[n].nports + 1u;
	}
	if (q != f->n_ports)
		return 1;
	for (; n_ord < n_old; n_ord++) {
		if (keep && !keep[n_ord])
			continue;
		if (last != SM_NONE && f->nodes[last].guid >= f->nodes[n_ord].guid)
			break;
		last = n_ord;
	}
	for (uint32_t n = n_ord; n < n_old; n++) {
		if (keep && !keep[n])
			continue;
		if (nt == RENUM_TAIL_MAX)
			return 1;
		tail[nt++] = n;
		tail_ports += f->nodes[n].nports + 1u;
	}
	size_t elem = sizeof(struct sm_port_info);
	elem = sizeof(struct sm_port) > elem ? sizeof(struct sm_port) : elem;
	elem = sizeof(struct sm_node) > elem ? sizeof(struct sm_node) : elem;
	elem = sizeof(struct sm_dr_path) > elem ? sizeof(struct sm_dr_path) : elem;
	elem = sizeof(struct sm_node_info) > elem ? sizeof(struct sm_node_info) : elem;
	elem = sizeof(struct sm_switch_info) > elem ? sizeof(struct sm_switch_info) : elem;
	uint32_t *newidx = malloc(((size_t)n_old + 1) * 2 * sizeof(*newidx));
	uint32_t *scratch = malloc(((size_t)n_old + 1) * 2 * sizeof(*scratch) + ((size_t)nt + tail_ports) * elem);
	if (!newidx || !scratch || tables_grow(t, n_old + 1, f->n_ports + 1)) {
		free(newidx);
		free(scratch);
		return -ENOMEM;
	}
	uint32_t *port0 = newidx + n_old + 1, nn, np;
	qsort_r(tail, nt, sizeof(*tail), cmp_node_guid, f);
	plan_merge(f, keep, n_ord, tail, nt, newidx, port0, &nn, &np);
	/* the tables first, by the old layout; then the fabric (sm_fabric_renumber) */
	uint32_t *src = scratch, *len = scratch + n_old + 1;
	void *room = len + n_old + 1;
	for (uint32_t n = 0; n < n_old; n++) {
		src[n] = f->nodes[n].port0;
		len[n] = f->nodes[n].nports + 1u;
	}
	sm_move_blocks(t->path, sizeof(*t->path), NULL, newidx, NULL, n_old, n_ord, room);
	sm_move_blocks(t->ni, sizeof(*t->ni), NULL, newidx, NULL, n_old, n_ord, room);
	sm_move_blocks(t->si, sizeof(*t->si), NULL, newidx, NULL, n_old, n_ord, room);
	sm_move_blocks(t->si_ok, 1, NULL, newidx, NULL, n_old, n_ord, room);
	sm_move_blocks(t->pi, sizeof(*t->pi), src, port0, len, n_old, n_ord, room);
	sm_move_blocks(t->pi_ok, 1, src, port0, len, n_old, n_ord, room);
	/* as remap_tables(): nothing past the nodes and ports left */
	memset(t->path + nn, 0, (size_t)(t->cap_nodes - nn) * sizeof(*t->path));
	memset(t->ni + nn, 0, (size_t)(t->cap_nodes - nn) * sizeof(*t->ni));
	memset(t->si + nn, 0, (size_t)(t->cap_nodes - nn) * sizeof(*t->si));
	memset(t->si_ok + nn, 0, t->cap_nodes - nn);
	memset(t->pi + np, 0, (size_t)(t->cap_ports - np) * sizeof(*t->pi));
	memset(t->pi_ok + np, 0, t->cap_ports - np);
	if (t->sm_node != SM_NONE)
		t->sm_node = t->sm_node < n_old ? newidx[t->sm_node] : SM_NONE;
	sm_fabric_renumber(f, newidx, port0, n_ord, nn, np, scratch);
	canonical_in_place(f, plane, t);
	free(newidx);
	free(scratch);
	return 0;
}

int sm_sweep_tables_canonicalize(struct sm_fabric **fp, unsigned plane, struct sm_sweep_tables *t,
				 const uint8_t *keep)
{
	const struct sm_fabric *f = *fp;
	if (in_order(f, keep)) {
		if (tables_grow(t, f->n_nodes + 1, f->n_ports + 1))
			return -ENOMEM;
		canonical_in_place(*fp, plane, t);
		return 0;
	}
	int in_place = renumber_in_place(*fp, plane, t, keep);
	if (in_place <= 0)
		return in_place;
	uint32_t *order = malloc(((size_t)f->n_nodes + 1) * sizeof(*order));
	uint32_t *newidx = malloc(((size_t)f->n_nodes + 1) * sizeof(*newidx));
	struct sm_fabric *g = sm_fabric_new();
	int rc = -ENOMEM;

	if (!order || !newidx || !g)
		goto out;
	uint32_t nk = 0;
	for (uint32_t n = 0; n < f->n_nodes; n++) {
		newidx[n] = SM_NONE;
		if (!keep || keep[n])
			order[nk++] = n;
	}
	qsort_r(order, nk, sizeof(*order), cmp_node_guid, (void *)f);
	rc = renumber_fabric(f, plane, order, nk, newidx, g);
	if (!rc)
		rc = remap_tables(t, f, g, newidx);
	if (rc)
		goto out;
	sm_fabric_free(*fp);
	*fp = g;
	g = NULL;
out:
	free(order);
	free(newidx);
	sm_fabric_free(g);
	return rc;
}
