/* SPDX-License-Identifier: MIT */
/*
 * DOC: fabric model implementation
 *
 * See fabric.h for the layout. The GUID maps are linear-probing hash tables
 * keyed by the 64-bit GUID (0 marks an empty slot, which is why GUID 0 is
 * refused), grown at 50% load.
 */
#include "model/fabric.h"
#include "model/spare.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void sm_guid_map_free(struct sm_guid_map *m)
{
	sm_spare_give(m->keys, (size_t)m->cap * sizeof(*m->keys));
	sm_spare_give(m->vals, (size_t)m->cap * sizeof(*m->vals));
	memset(m, 0, sizeof(*m));
}

static int gmap_resize(struct sm_guid_map *m, uint32_t cap)
{
	struct sm_guid_map n = { .keys = sm_spare_take_zero((size_t)cap * sizeof(*n.keys)),
				 .vals = sm_spare_take_zero((size_t)cap * sizeof(*n.vals)), .cap = cap, .count = m->count };

	if (!n.keys || !n.vals) {
		sm_guid_map_free(&n);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < m->cap; i++) {
		if (!m->keys[i])
			continue;
		uint32_t h = (uint32_t)sm_mix64(m->keys[i]) & (cap - 1);
		while (n.keys[h])
			h = (h + 1) & (cap - 1);
		n.keys[h] = m->keys[i];
		n.vals[h] = m->vals[i];
	}
	sm_guid_map_free(m);
	*m = n;
	return 0;
}

uint32_t sm_guid_map_get(const struct sm_guid_map *m, uint64_t key)
{
	if (!m->cap || !key)
		return SM_NONE;
	uint32_t h = (uint32_t)sm_mix64(key) & (m->cap - 1);
	while (m->keys[h]) {
		if (m->keys[h] == key)
			return m->vals[h];
		h = (h + 1) & (m->cap - 1);
	}
	return SM_NONE;
}

int sm_guid_map_put(struct sm_guid_map *m, uint64_t key, uint32_t val)
{
	int rc;

	if (!key)
		return -EINVAL;
	if ((m->count + 1) * 2 > m->cap) {
		rc = gmap_resize(m, m->cap ? m->cap * 2 : 64);
		if (rc)
			return rc;
	}
	uint32_t h = (uint32_t)sm_mix64(key) & (m->cap - 1);
	while (m->keys[h]) {
		if (m->keys[h] == key)
			return -EEXIST;
		h = (h + 1) & (m->cap - 1);
	}
	m->keys[h] = key;
	m->vals[h] = val;
	m->count++;
	return 0;
}

void sm_guid_map_del(struct sm_guid_map *m, uint64_t key)
{
	if (!m->cap || !key)
		return;
	uint32_t mask = m->cap - 1, i = (uint32_t)sm_mix64(key) & mask;
	while (m->keys[i] && m->keys[i] != key)
		i = (i + 1) & mask;
	if (!m->keys[i])
		return;
	/* close the gap: an entry after it moves back unless its home lies in (i, j] */
	for (uint32_t j = (i + 1) & mask; m->keys[j]; j = (j + 1) & mask) {
		uint32_t k = (uint32_t)sm_mix64(m->keys[j]) & mask;
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		m->keys[i] = m->keys[j];
		m->vals[i] = m->vals[j];
		i = j;
	}
	m->keys[i] = 0;
	m->count--;
}

struct sm_fabric *sm_fabric_new(void)
{
	struct sm_fabric *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->n_planes = 1;
	for (unsigned i = 0; i < SM_MAX_PLANES; i++) {
		snprintf(f->planes[i].name, sizeof(f->planes[i].name), "plane%u", i);
		f->planes[i].sm_port = SM_NONE;
		f->planes[i].subnet_prefix = 0xfe80000000000000ULL;
	}
	return f;
}

void sm_fabric_free(struct sm_fabric *f)
{
	if (!f)
		return;
	sm_spare_give(f->nodes, (size_t)f->cap_nodes * sizeof(*f->nodes));
	sm_spare_give(f->ports, (size_t)f->cap_ports * sizeof(*f->ports));
	sm_guid_map_free(&f->node_by_guid);
	sm_guid_map_free(&f->port_by_guid);
	for (unsigned i = 0; i < SM_MAX_PLANES; i++)
		free(f->planes[i].lid_map);
	free(f);
}

static int grow(void **arr, uint32_t *cap, uint32_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	uint32_t nc = *cap ? *cap : 64;
	while (nc < need) {
		if (nc > UINT32_MAX / 2)
			return -ENOMEM;
		nc *= 2;
	}
	/* a first array of a fabric as large as the last one's: its spare (spare.h) */
	void *p = *arr ? realloc(*arr, (size_t)nc * elem) : sm_spare_take((size_t)nc * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = nc;
	return 0;
}

int sm_fabric_reserve(struct sm_fabric *f, uint32_t nodes, uint32_t ports)
{
	int rc = grow((void **)&f->nodes, &f->cap_nodes, nodes, sizeof(*f->nodes));
	if (rc)
		return rc;
	return grow((void **)&f->ports, &f->cap_ports, ports, sizeof(*f->ports));
}

int sm_fabric_add_plane(struct sm_fabric *f, unsigned plane, const char *name)
{
	if (plane >= SM_MAX_PLANES)
		return -EINVAL;
	if (plane >= f->n_planes)
		f->n_planes = (uint8_t)(plane + 1);
	if (name)
		snprintf(f->planes[plane].name, sizeof(f->planes[plane].name), "%s", name);
	return 0;
}

int64_t sm_fabric_add_node(struct sm_fabric *f, enum sm_node_type type, uint64_t guid,
			   unsigned nports, unsigned plane, uint64_t port0_guid)
{
	int rc;

	if (type < SM_NODE_CA || type > SM_NODE_ROUTER || !guid || !nports ||
	    nports > SM_MAX_PORTS || plane >= SM_MAX_PLANES)
		return -EINVAL;
	if (sm_guid_map_get(&f->node_by_guid, guid) != SM_NONE)
		return -EEXIST;
	if (type == SM_NODE_SWITCH) {
		if (!port0_guid)
			port0_guid = guid;
		if (sm_guid_map_get(&f->port_by_guid, port0_guid) != SM_NONE)
			return -EEXIST;
	}
	if (f->n_nodes == SM_NONE - 1 || f->n_ports > UINT32_MAX - 256)
		return -ENOMEM;
	rc = grow((void **)&f->nodes, &f->cap_nodes, f->n_nodes + 1, sizeof(*f->nodes));
	if (rc)
		return rc;
	rc = grow((void **)&f->ports, &f->cap_ports, f->n_ports + nports + 1, sizeof(*f->ports));
	if (rc)
		return rc;

	uint32_t n = f->n_nodes;
	rc = sm_guid_map_put(&f->node_by_guid, guid, n);
	if (rc)
		return rc;
	if (type == SM_NODE_SWITCH) {
		rc = sm_guid_map_put(&f->port_by_guid, port0_guid, f->n_ports);
		if (rc)
			return rc; /* node map entry stays but n_nodes not bumped: remove it */
	}

	struct sm_node *nd = &f->nodes[n];
	memset(nd, 0, sizeof(*nd));
	nd->guid = guid;
	nd->type = (uint8_t)type;
	nd->nports = (uint8_t)nports;
	nd->plane = (uint8_t)plane;
	nd->port0 = f->n_ports;
	for (unsigned p = 0; p <= nports; p++) {
		struct sm_port *pt = &f->ports[f->n_ports + p];
		memset(pt, 0, sizeof(*pt));
		pt->node = n;
		pt->num = (uint8_t)p;
		pt->peer_node = SM_NONE;
		pt->state = SM_PORT_DOWN;
		if (type == SM_NODE_SWITCH)
			pt->guid = port0_guid;
	}
	f->n_ports += nports + 1;
	f->n_nodes++;
	if (plane >= f->n_planes)
		f->n_planes = (uint8_t)(plane + 1);
	return n;
}

struct sm_port *sm_fabric_port_checked(const struct sm_fabric *f, uint32_t n, unsigned p)
{
	if (n >= f->n_nodes)
		return NULL;
	const struct sm_node *nd = &f->nodes[n];
	if (p > nd->nports || (p == 0 && nd->type != SM_NODE_SWITCH))
		return NULL;
	return &f->ports[nd->port0 + p];
}

int sm_fabric_set_port_guid(struct sm_fabric *f, uint32_t n, unsigned p, uint64_t guid)
{
	struct sm_port *pt = sm_fabric_port_checked(f, n, p);
	int rc;

	if (!pt || !guid || f->nodes[n].type == SM_NODE_SWITCH)
		return -EINVAL;
	if (pt->guid == guid)
		return 0;
	if (pt->guid)
		return -EBUSY;
	rc = sm_guid_map_put(&f->port_by_guid, guid, (uint32_t)(pt - f->ports));
	if (rc)
		return rc;
	pt->guid = guid;
	return 0;
}

int sm_fabric_link(struct sm_fabric *f, uint32_t na, unsigned pa, uint32_t nb, unsigned pb)
{
	struct sm_port *a = sm_fabric_port_checked(f, na, pa);
	struct sm_port *b = sm_fabric_port_checked(f, nb, pb);

	if (!a || !b || pa == 0 || pb == 0 || (na == nb && pa == pb))
		return -EINVAL;
	if (f->nodes[na].plane != f->nodes[nb].plane)
		return -EINVAL;
	if (a->peer_node == nb && a->peer_port == pb && b->peer_node == na && b->peer_port == pa)
		return 0;
	if (a->peer_node != SM_NONE || b->peer_node != SM_NONE)
		return -EBUSY;
	a->peer_node = nb;
	a->peer_port = (uint8_t)pb;
	b->peer_node = na;
	b->peer_port = (uint8_t)pa;
	return 0;
}

void sm_fabric_unlink(struct sm_fabric *f, uint32_t n, unsigned p)
{
	struct sm_port *a = sm_fabric_port_checked(f, n, p);
	if (!a || a->peer_node == SM_NONE)
		return;
	struct sm_port *b = sm_fabric_port_checked(f, a->peer_node, a->peer_port);
	if (b && b->peer_node == n && b->peer_port == p)
		b->peer_node = SM_NONE, b->peer_port = 0;
	a->peer_node = SM_NONE;
	a->peer_port = 0;
}

int sm_fabric_set_lid(struct sm_fabric *f, uint32_t n, unsigned p, uint16_t lid, uint8_t lmc)
{
	struct sm_port *pt = sm_fabric_port_checked(f, n, p);

	if (!pt || lmc > 7)
		return -EINVAL;
	if (f->nodes[n].type == SM_NODE_SWITCH && p != 0)
		return -EINVAL;
	uint32_t pidx = (uint32_t)(pt - f->ports);
	unsigned plane = f->nodes[n].plane;
	struct sm_plane *pl = &f->planes[plane];
	unsigned span = 1u << lmc;

	if (lid) {
		if ((unsigned)lid + span - 1 > SM_UNICAST_LID_MAX)
			return -EINVAL;
		if (!pl->lid_map) {
			pl->lid_map = malloc(SM_LID_SPACE * sizeof(*pl->lid_map));
			if (!pl->lid_map)
				return -ENOMEM;
			memset(pl->lid_map, 0xff, SM_LID_SPACE * sizeof(*pl->lid_map));
		}
		for (unsigned i = 0; i < span; i++) {
			uint32_t o = pl->lid_map[lid + i];
			if (o != SM_NONE && o != pidx)
				return -EEXIST;
		}
	}
	/* clear the old range */
	if (pt->lid && pl->lid_map) {
		unsigned ospan = 1u << pt->lmc;
		for (unsigned i = 0; i < ospan && pt->lid + i < SM_LID_SPACE; i++)
			if (pl->lid_map[pt->lid + i] == pidx)
				pl->lid_map[pt->lid + i] = SM_NONE;
	}
	pt->lid = lid;
	pt->lmc = lmc;
	if (lid) {
		for (unsigned i = 0; i < span; i++)
			pl->lid_map[lid + i] = pidx;
		if (lid + span - 1 > pl->max_lid)
			pl->max_lid = (uint16_t)(lid + span - 1);
	}
	return 0;
}

uint32_t sm_fabric_find_node(const struct sm_fabric *f, uint64_t node_guid)
{
	return sm_guid_map_get(&f->node_by_guid, node_guid);
}

uint32_t sm_fabric_find_port(const struct sm_fabric *f, uint64_t port_guid)
{
	return sm_guid_map_get(&f->port_by_guid, port_guid);
}

uint32_t sm_fabric_find_lid(const struct sm_fabric *f, unsigned plane, uint16_t lid)
{
	if (plane >= SM_MAX_PLANES || !f->planes[plane].lid_map || lid >= SM_LID_SPACE)
		return SM_NONE;
	return f->planes[plane].lid_map[lid];
}

void sm_fabric_set_desc(struct sm_fabric *f, uint32_t n, const char *desc)
{
	snprintf(f->nodes[n].desc, sizeof(f->nodes[n].desc), "%s", desc ? desc : "");
}

void sm_fabric_count(const struct sm_fabric *f, int plane, struct sm_fabric_counts *c)
{
	memset(c, 0, sizeof(*c));
	for (uint32_t n = 0; n < f->n_nodes; n++) {
		const struct sm_node *nd = &f->nodes[n];
		if (plane >= 0 && nd->plane != plane)
			continue;
		c->nodes++;
		if (nd->type == SM_NODE_SWITCH)
			c->switches++;
		else if (nd->type == SM_NODE_CA)
			c->cas++;
		else
			c->routers++;
		for (unsigned p = 0; p <= nd->nports; p++) {
			const struct sm_port *pt = &f->ports[nd->port0 + p];
			if (pt->lid && (p == 0 || nd->type != SM_NODE_SWITCH))
				c->lids += 1u << pt->lmc;
			if (p == 0 || pt->peer_node == SM_NONE)
				continue;
			/* count each link once, from its lower (node, port) end */
			if (pt->peer_node < n || (pt->peer_node == n && pt->peer_port < p))
				continue;
			c->links++;
			if (nd->type == SM_NODE_SWITCH && f->nodes[pt->peer_node].type == SM_NODE_SWITCH)
				c->sw_links++;
		}
	}
}

void sm_fabric_drop_lids(struct sm_fabric *f, unsigned keep_name)
{
	unsigned np = keep_name + 1 > 1 ? keep_name + 1 : 1;
	for (uint32_t i = 0; i < f->n_ports; i++) {
		f->ports[i].lid = 0;
		f->ports[i].lmc = 0;
	}
	for (uint32_t n = 0; n < f->n_nodes; n++)
		if (f->nodes[n].plane + 1u > np)
			np = f->nodes[n].plane + 1u;
	for (unsigned i = 0; i < SM_MAX_PLANES; i++) {
		struct sm_plane *pl = &f->planes[i];
		char name[sizeof(pl->name)];
		memcpy(name, pl->name, sizeof(name));
		free(pl->lid_map);
		memset(pl, 0, sizeof(*pl));
		if (i == keep_name)
			memcpy(pl->name, name, sizeof(name));
		else
			snprintf(pl->name, sizeof(pl->name), "plane%u", i);
		pl->sm_port = SM_NONE;
		pl->subnet_prefix = 0xfe80000000000000ULL;
	}
	f->n_planes = (uint8_t)(np < SM_MAX_PLANES ? np : SM_MAX_PLANES);
}

void sm_move_blocks(void *arr, size_t elem, const uint32_t *src, const uint32_t *dst, const uint32_t *len,
		    uint32_t n, uint32_t n_ord, void *scratch)
{
#define MB_SRC(i) ((size_t)(src ? src[i] : (i)) * elem)
#define MB_LEN(i) ((size_t)(len ? len[i] : 1u) * elem)
	char *a = arr, *s = scratch;
	size_t off = 0;
	for (uint32_t i = n_ord; i < n; i++)
		if (dst[i] != SM_NONE) {
			memcpy(s + off, a + MB_SRC(i), MB_LEN(i));
			off += MB_LEN(i);
		}
	/* down first, lowest first: no block lands on a source not yet moved (DOC in fabric.h) */
	for (uint32_t i = 0; i < n_ord; i++)
		if (dst[i] != SM_NONE && (size_t)dst[i] * elem < MB_SRC(i))
			memmove(a + (size_t)dst[i] * elem, a + MB_SRC(i), MB_LEN(i));
	for (uint32_t i = n_ord; i-- > 0;)
		if (dst[i] != SM_NONE && (size_t)dst[i] * elem > MB_SRC(i))
			memmove(a + (size_t)dst[i] * elem, a + MB_SRC(i), MB_LEN(i));
	off = 0;
	for (uint32_t i = n_ord; i < n; i++)
		if (dst[i] != SM_NONE) {
			memcpy(a + (size_t)dst[i] * elem, s + off, MB_LEN(i));
			off += MB_LEN(i);
		}
#undef MB_SRC
#undef MB_LEN
}

void sm_fabric_renumber(struct sm_fabric *f, const uint32_t *newidx, const uint32_t *port0, uint32_t n_ord,
			uint32_t n_nodes, uint32_t n_ports, void *scratch)
{
	uint32_t n_old = f->n_nodes;
	/* the dropped nodes' GUIDs out of the maps, then every value to its new index */
	for (uint32_t n = 0; n < n_old; n++) {
		const struct sm_node *nd = &f->nodes[n];
		if (newidx[n] != SM_NONE)
			continue;
		sm_guid_map_del(&f->node_by_guid, nd->guid);
		for (unsigned p = 0; p <= nd->nports; p++)
			if (p == 0 || nd->type != SM_NODE_SWITCH)
				sm_guid_map_del(&f->port_by_guid, f->ports[nd->port0 + p].guid);
	}
	for (uint32_t i = 0; i < f->node_by_guid.cap; i++)
		if (f->node_by_guid.keys[i])
			f->node_by_guid.vals[i] = newidx[f->node_by_guid.vals[i]];
	for (uint32_t i = 0; i < f->port_by_guid.cap; i++) {
		uint32_t v = f->port_by_guid.vals[i], n;
		if (!f->port_by_guid.keys[i])
			continue;
		n = f->ports[v].node;
		f->port_by_guid.vals[i] = port0[n] + (v - f->nodes[n].port0);
	}
	/* the ports' owners and peers, where they are (a link to a dropped node goes) */
	for (uint32_t i = 0; i < f->n_ports; i++) {
		struct sm_port *pt = &f->ports[i];
		pt->node = newidx[pt->node];
		if (pt->peer_node == SM_NONE)
			continue;
		pt->peer_node = newidx[pt->peer_node];
		if (pt->peer_node == SM_NONE)
			pt->peer_port = 0;
	}
	uint32_t *src = scratch;   /* the old port0s, then room for the moves */
	uint32_t *len = src + n_old;
	for (uint32_t n = 0; n < n_old; n++) {
		src[n] = f->nodes[n].port0;
		len[n] = f->nodes[n].nports + 1u;
	}
	void *room = len + n_old;
	sm_move_blocks(f->ports, sizeof(*f->ports), src, port0, len, n_old, n_ord, room);
	for (uint32_t n = 0; n < n_old; n++)
		if (newidx[n] != SM_NONE)
			f->nodes[n].port0 = port0[n];
	sm_move_blocks(f->nodes, sizeof(*f->nodes), NULL, newidx, NULL, n_old, n_ord, room);
	f->n_nodes = n_nodes;
	f->n_ports = n_ports;
}

size_t sm_fabric_mem_bytes(const struct sm_fabric *f)
{
	size_t b = sizeof(*f);
	b += (size_t)f->cap_nodes * sizeof(*f->nodes);
	b += (size_t)f->cap_ports * sizeof(*f->ports);
	b += (size_t)f->node_by_guid.cap * (sizeof(uint64_t) + sizeof(uint32_t));
	b += (size_t)f->port_by_guid.cap * (sizeof(uint64_t) + sizeof(uint32_t));
	for (unsigned i = 0; i < SM_MAX_PLANES; i++)
		if (f->planes[i].lid_map)
			b += SM_LID_SPACE * sizeof(uint32_t);
	return b;
}

const char *sm_node_type_str(enum sm_node_type t)
{
	switch (t) {
	case SM_NODE_CA: return "Ca";
	case SM_NODE_SWITCH: return "Switch";
	case SM_NODE_ROUTER: return "Router";
	default: return "Unknown";
	}
}

const char *sm_port_state_str(unsigned state)
{
	static const char *const s[] = { "NoChange", "Down", "Initialize", "Armed", "Active" };
	return state < 5 ? s[state] : "Unknown";
}

uint16_t sm_node_lid(const struct sm_fabric *f, uint32_t n, unsigned p)
{
	const struct sm_node *nd = &f->nodes[n];
	if (nd->type == SM_NODE_SWITCH)
		return f->ports[nd->port0].lid;
	if (p == 0 || p > nd->nports)
		return 0;
	return f->ports[nd->port0 + p].lid;
}

/*
 * Everything that can fail (conflict checks, allocations) happens before
 * the first write to dst's visible state, so a failed append leaves dst
 * exactly as it was; growing arrays and GUID maps beforehand is harmless.
 */
int sm_fabric_append(struct sm_fabric *dst, const struct sm_fabric *src, uint32_t *conflict)
{
	uint32_t add_ports = 0, n, i;
	int rc;

	if (!src->n_nodes)
		return 0;
	if (dst->n_nodes > SM_NONE - 1 - src->n_nodes || dst->n_ports > UINT32_MAX - 256 - src->n_ports)
		return -ENOMEM;
	for (n = 0; n < src->n_nodes; n++) {
		const struct sm_node *nd = &src->nodes[n];
		const struct sm_port *pt = &src->ports[nd->port0];
		int dup = sm_guid_map_get(&dst->node_by_guid, nd->guid) != SM_NONE;

		for (unsigned p = 0; p <= nd->nports && !dup; p++) {
			if (nd->type == SM_NODE_SWITCH && p > 0)
				break;
			if (pt[p].guid && sm_guid_map_get(&dst->port_by_guid, pt[p].guid) != SM_NONE)
				dup = 1;
		}
		if (dup) {
			if (conflict)
				*conflict = n;
			return -EEXIST;
		}
		const uint32_t *lmap = dst->planes[nd->plane].lid_map;
		for (unsigned p = 0; p <= nd->nports && lmap; p++) {
			if (!pt[p].lid)
				continue;
			for (unsigned l = 0; l < (1u << pt[p].lmc); l++) {
				if (lmap[pt[p].lid + l] != SM_NONE) {
					if (conflict)
						*conflict = n;
					return -EADDRINUSE;
				}
			}
		}
	}
	/* reserve: arrays, GUID maps sized so no put below resizes, LID maps */
	rc = sm_fabric_reserve(dst, dst->n_nodes + src->n_nodes, dst->n_ports + src->n_ports);
	if (rc)
		return rc;
	struct sm_guid_map *maps[2] = { &dst->node_by_guid, &dst->port_by_guid };
	const struct sm_guid_map *smaps[2] = { &src->node_by_guid, &src->port_by_guid };
	for (i = 0; i < 2; i++) {
		uint64_t need = ((uint64_t)maps[i]->count + smaps[i]->count + 1) * 2;
		uint32_t cap = maps[i]->cap ? maps[i]->cap : 64;
		while (cap < need) {
			if (cap > UINT32_MAX / 2)
				return -ENOMEM;
			cap *= 2;
		}
		if (cap != maps[i]->cap && (rc = gmap_resize(maps[i], cap)))
			return rc;
	}
	/*
	 * Into an empty fabric with maps of the source's size: the source's
	 * maps as they are (indices do not shift), not 90k puts at 40k hosts.
	 * Not when src's node map holds more than its nodes (an add_node
	 * that failed half way leaves an entry).
	 */
	int copy_maps = !dst->n_nodes && !dst->n_ports && smaps[0]->count == src->n_nodes;
	for (i = 0; i < 2; i++)
		copy_maps = copy_maps && !maps[i]->count && maps[i]->cap == smaps[i]->cap;
	for (i = 0; i < 2 && copy_maps; i++) {
		memcpy(maps[i]->keys, smaps[i]->keys, (size_t)smaps[i]->cap * sizeof(*smaps[i]->keys));
		memcpy(maps[i]->vals, smaps[i]->vals, (size_t)smaps[i]->cap * sizeof(*smaps[i]->vals));
		maps[i]->count = smaps[i]->count;
	}
	for (i = 0; i < SM_MAX_PLANES; i++) {
		if (!src->planes[i].lid_map || dst->planes[i].lid_map)
			continue;
		dst->planes[i].lid_map = malloc(SM_LID_SPACE * sizeof(uint32_t));
		if (!dst->planes[i].lid_map)
			return -ENOMEM;
		memset(dst->planes[i].lid_map, 0xff, SM_LID_SPACE * sizeof(uint32_t));
	}

	/* commit: nothing below can fail */
	uint32_t nbase = dst->n_nodes, pbase = dst->n_ports;
	for (n = 0; n < src->n_nodes; n++) {
		struct sm_node *nd = &dst->nodes[nbase + n];
		*nd = src->nodes[n];
		nd->port0 += pbase;
		if (!copy_maps)
			(void)sm_guid_map_put(&dst->node_by_guid, nd->guid, nbase + n);
		add_ports += nd->nports + 1u;
		if (nd->plane >= dst->n_planes)
			dst->n_planes = (uint8_t)(nd->plane + 1);
	}
	for (i = 0; i < src->n_ports; i++) {
		struct sm_port *pt = &dst->ports[pbase + i];
		*pt = src->ports[i];
		pt->node += nbase;
		if (pt->peer_node != SM_NONE)
			pt->peer_node += nbase;
		const struct sm_node *nd = &dst->nodes[pt->node];
		if (!copy_maps && pt->guid && (nd->type != SM_NODE_SWITCH || pt->num == 0))
			(void)sm_guid_map_put(&dst->port_by_guid, pt->guid, pbase + i);
		if (pt->lid) {
			struct sm_plane *pl = &dst->planes[nd->plane];
			unsigned span = 1u << pt->lmc;
			for (unsigned l = 0; l < span; l++)
				pl->lid_map[pt->lid + l] = pbase + i;
			if (pt->lid + span - 1 > pl->max_lid)
				pl->max_lid = (uint16_t)(pt->lid + span - 1);
		}
	}
	dst->n_nodes += src->n_nodes;
	dst->n_ports += add_ports;
	return 0;
}
