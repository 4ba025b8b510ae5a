/* SPDX-License-Identifier: MIT */
/*
 * DOC: host grouping and plane health (see hosts.h)
 *
 * Grouping sorts the CA nodes by (system image GUID, host name) and takes
 * runs of equal keys as hosts, so it is O(n log n) with no hash table and
 * deterministic: hosts come out ordered by key.
 */
#include "model/hosts.h"
#include "lib/json.h"

#include <stddef.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct nic_key {
	uint64_t sysimg;     /* 0: group by name */
	const char *name;    /* host name (not NUL-terminated at name_len) */
	size_t name_len;
	uint32_t node;
};

static size_t host_name_len(const char *desc)
{
	size_t n = strcspn(desc, " \t");
	return n;
}

static int cmp_key(const void *a, const void *b)
{
	const struct nic_key *x = a, *y = b;
	if ((x->sysimg != 0) != (y->sysimg != 0))
		return x->sysimg ? -1 : 1;
	if (x->sysimg != y->sysimg)
		return x->sysimg < y->sysimg ? -1 : 1;
	size_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
	int c = memcmp(x->name, y->name, n);
	if (c)
		return c;
	if (x->name_len != y->name_len)
		return x->name_len < y->name_len ? -1 : 1;
	return x->node < y->node ? -1 : x->node > y->node;
}

static int same_host(const struct nic_key *x, const struct nic_key *y)
{
	if (x->sysimg || y->sysimg)
		return x->sysimg == y->sysimg;
	if (!x->name_len || !y->name_len)
		return 0;  /* no name: a host of its own */
	return x->name_len == y->name_len && !memcmp(x->name, y->name, x->name_len);
}

/* The NIC port of a CA node: its lowest-numbered linked port, SM_NONE if none. */
static uint32_t nic_port(const struct sm_fabric *f, uint32_t n)
{
	const struct sm_node *nd = &f->nodes[n];
	for (unsigned p = 1; p <= nd->nports; p++)
		if (f->ports[nd->port0 + p].peer_node != SM_NONE)
			return nd->port0 + p;
	return SM_NONE;
}

void sm_hosts_free(struct sm_hosts *h)
{
	if (!h)
		return;
	free(h->h);
	free(h->host_of_node);
	free(h);
}

int sm_hosts_build(const struct sm_fabric *f, struct sm_hosts **out)
{
	struct sm_hosts *hs = calloc(1, sizeof(*hs));
	struct nic_key *k = NULL;
	uint32_t n_ca = 0;

	*out = NULL;
	if (!hs)
		return -ENOMEM;
	hs->n_planes = f->n_planes;
	hs->host_of_node = malloc(((size_t)f->n_nodes + 1) * sizeof(*hs->host_of_node));
	k = malloc(((size_t)f->n_nodes + 1) * sizeof(*k));
	if (!hs->host_of_node || !k)
		goto nomem;
	for (uint32_t n = 0; n < f->n_nodes; n++) {
		hs->host_of_node[n] = SM_NONE;
		const struct sm_node *nd = &f->nodes[n];
		if (nd->type != SM_NODE_CA)
			continue;
		k[n_ca].sysimg = nd->sysimg_guid;
		k[n_ca].name = nd->desc;
		k[n_ca].name_len = host_name_len(nd->desc);
		k[n_ca].node = n;
		n_ca++;
	}
	qsort(k, n_ca, sizeof(*k), cmp_key);
	hs->h = calloc((size_t)n_ca + 1, sizeof(*hs->h));
	if (!hs->h)
		goto nomem;
	for (uint32_t i = 0; i < n_ca; i++) {
		if (i == 0 || !same_host(&k[i - 1], &k[i])) {
			struct sm_host *h = &hs->h[hs->n++];
			h->sysimg = k[i].sysimg;
			size_t l = k[i].name_len < SM_DESC_MAX ? k[i].name_len : SM_DESC_MAX;
			memcpy(h->name, k[i].name, l);
			h->name[l] = 0;
			for (unsigned p = 0; p < SM_MAX_PLANES; p++)
				h->nic[p] = SM_NONE;
		}
		struct sm_host *h = &hs->h[hs->n - 1];
		uint32_t node = k[i].node;
		unsigned pl = f->nodes[node].plane;
		hs->host_of_node[node] = hs->n - 1;
		uint32_t port = nic_port(f, node);
		if (port == SM_NONE)
			continue;
		if (h->nic[pl] == SM_NONE) {
			h->nic[pl] = port;
			h->n_nics++;
			hs->nics_per_plane[pl]++;
		} else if (h->extra_nics < UINT8_MAX) {
			h->extra_nics++;
		}
	}
	/* most common NIC count, then hosts that differ from it */
	uint32_t hist[SM_MAX_PLANES + 1] = { 0 };
	for (uint32_t i = 0; i < hs->n; i++)
		hist[hs->h[i].n_nics]++;
	for (unsigned c = 0; c <= SM_MAX_PLANES; c++)
		if (hist[c] > hist[hs->common_nics])
			hs->common_nics = (uint8_t)c;
	for (uint32_t i = 0; i < hs->n; i++)
		if (hs->h[i].n_nics != hs->common_nics)
			hs->uneven++;
	free(k);
	*out = hs;
	return 0;
nomem:
	free(k);
	sm_hosts_free(hs);
	return -ENOMEM;
}

static uint32_t leaf_uplinks(const struct sm_fabric *f, uint32_t sw)
{
	const struct sm_node *nd = &f->nodes[sw];
	uint32_t up = 0;
	for (unsigned p = 1; p <= nd->nports; p++) {
		uint32_t peer = f->ports[nd->port0 + p].peer_node;
		if (peer != SM_NONE && f->nodes[peer].type == SM_NODE_SWITCH)
			up++;
	}
	return up;
}

/* Switch a NIC port is cabled to, SM_NONE if none or not a switch. */
/* Keep the first SM_HEALTH_EXAMPLES of a counted list: count is the count before this one. */
static void note_example(uint32_t *ex, uint32_t count, uint32_t what)
{
	if (count < SM_HEALTH_EXAMPLES)
		ex[count] = what;
}

static uint32_t nic_leaf(const struct sm_fabric *f, uint32_t port)
{
	if (port == SM_NONE)
		return SM_NONE;
	uint32_t peer = f->ports[port].peer_node;
	if (peer == SM_NONE || f->nodes[peer].type != SM_NODE_SWITCH)
		return SM_NONE;
	return peer;
}

int sm_planes_health(const struct sm_fabric *f, const struct sm_hosts *hosts,
		     struct sm_planes_health *ph)
{
	struct sm_hosts *own = NULL;
	uint32_t *up = NULL;
	int rc;

	memset(ph, 0, sizeof(*ph));
	if (!hosts) {
		rc = sm_hosts_build(f, &own);
		if (rc)
			return rc;
		hosts = own;
	}
	ph->n_planes = f->n_planes;
	ph->hosts = hosts->n;
	ph->uneven_hosts = hosts->uneven;
	up = calloc((size_t)f->n_nodes + 1, sizeof(*up));
	if (!up) {
		sm_hosts_free(own);
		return -ENOMEM;
	}
	for (unsigned p = 0; p < ph->n_planes; p++) {
		struct sm_plane_health *h = &ph->p[p];
		struct sm_fabric_counts c;
		sm_fabric_count(f, (int)p, &c);
		h->plane = p;
		snprintf(h->name, sizeof(h->name), "%s", f->planes[p].name);
		h->switches = c.switches;
		h->sw_links = c.sw_links;
		h->nics = hosts->nics_per_plane[p];
		h->leaf_uplinks_min = UINT32_MAX;
		h->share_min = 1.0;
		h->worst_host = SM_NONE;
		for (unsigned e = 0; e < SM_HEALTH_EXAMPLES; e++)
			h->ex_no_nic[e] = h->ex_below[e] = h->ex_thin_leaf[e] = SM_NONE;
	}
	/* leaves (switches with a NIC) and their uplinks; up_full over all planes */
	for (uint32_t i = 0; i < hosts->n; i++)
		for (unsigned p = 0; p < ph->n_planes; p++) {
			uint32_t leaf = nic_leaf(f, hosts->h[i].nic[p]);
			if (leaf == SM_NONE || up[leaf])
				continue;
			up[leaf] = leaf_uplinks(f, leaf) + 1;  /* +1: 0 means "not a leaf / not seen" */
			struct sm_plane_health *h = &ph->p[p];
			uint32_t u = up[leaf] - 1;
			h->leaves++;
			if (u < h->leaf_uplinks_min)
				h->leaf_uplinks_min = u;
			if (u > h->leaf_uplinks_max)
				h->leaf_uplinks_max = u;
			if (u > ph->up_full)
				ph->up_full = u;
		}
	uint32_t max_sw = 0, max_links = 0;
	for (unsigned p = 0; p < ph->n_planes; p++) {
		if (ph->p[p].switches > max_sw)
			max_sw = ph->p[p].switches;
		if (ph->p[p].sw_links > max_links)
			max_links = ph->p[p].sw_links;
	}
	double fair = ph->n_planes ? 1.0 / ph->n_planes : 1.0;
	double sum_share[SM_MAX_PLANES] = { 0 };
	for (uint32_t i = 0; i < hosts->n; i++) {
		double b[SM_MAX_PLANES] = { 0 }, tot = 0;
		for (unsigned p = 0; p < ph->n_planes; p++) {
			uint32_t leaf = nic_leaf(f, hosts->h[i].nic[p]);
			if (leaf == SM_NONE) {
				note_example(ph->p[p].ex_no_nic, ph->p[p].hosts_without_nic++, i);
				continue;
			}
			/* a host cabled straight to a switch with no uplinks (single switch) gets full share */
			b[p] = ph->up_full ? (double)(up[leaf] - 1) / ph->up_full : 1.0;
			tot += b[p];
		}
		for (unsigned p = 0; p < ph->n_planes; p++) {
			double s = tot > 0 ? b[p] / tot : 0;
			struct sm_plane_health *h = &ph->p[p];
			sum_share[p] += s;
			if (s < h->share_min) {
				h->share_min = s;
				h->worst_host = i;
			}
			if (s < 0.9 * fair)
				note_example(h->ex_below, h->hosts_below++, i);
		}
	}
	/* leaves short of uplinks, each once (after the shares: up[] is cleared as leaves are counted) */
	for (uint32_t i = 0; i < hosts->n; i++)
		for (unsigned p = 0; p < ph->n_planes; p++) {
			uint32_t leaf = nic_leaf(f, hosts->h[i].nic[p]);
			if (leaf == SM_NONE || !up[leaf] || up[leaf] - 1 >= ph->up_full)
				continue;
			note_example(ph->p[p].ex_thin_leaf, ph->p[p].thin_leaves++, leaf);
			up[leaf] = 0;  /* counted once; the shares are done with up[] */
		}
	for (unsigned p = 0; p < ph->n_planes; p++) {
		struct sm_plane_health *h = &ph->p[p];
		h->missing_switches = max_sw - h->switches;
		h->missing_links = max_links - h->sw_links;
		h->share_mean = hosts->n ? sum_share[p] / hosts->n : 0;
		if (!hosts->n)
			h->share_min = 0;
		if (h->leaf_uplinks_min == UINT32_MAX)
			h->leaf_uplinks_min = 0;
		if (h->missing_switches || h->missing_links || h->hosts_without_nic || h->hosts_below)
			ph->asymmetric = 1;
	}
	free(up);
	sm_hosts_free(own);
	return 0;
}

/* A plane's JSON members after "plane" and "name", in order: uint32_t
 * counts, and the double shares. */
#define PH_U32(key, field) { key, offsetof(struct sm_plane_health, field), 0 }
#define PH_DBL(key, field) { key, offsetof(struct sm_plane_health, field), 1 }
static const struct {
	const char *key;
	size_t off;
	int dbl;
} plane_members[] = {
	PH_U32("switches", switches), PH_U32("switch_links", sw_links), PH_U32("nics", nics),
	PH_U32("missing_switches", missing_switches), PH_U32("missing_links", missing_links),
	PH_U32("hosts_without_nic", hosts_without_nic), PH_U32("leaves", leaves),
	PH_U32("leaf_uplinks_min", leaf_uplinks_min), PH_U32("leaf_uplinks_max", leaf_uplinks_max),
	PH_DBL("share_min", share_min), PH_DBL("share_mean", share_mean),
	PH_U32("hosts_below_fair", hosts_below),
};
#undef PH_U32
#undef PH_DBL

void sm_planes_health_json(struct sm_json *j, const char *key, const struct sm_planes_health *ph)
{
	sm_json_obj_begin(j, key);
	sm_json_uint(j, "planes", ph->n_planes);
	sm_json_uint(j, "hosts", ph->hosts);
	sm_json_uint(j, "uneven_hosts", ph->uneven_hosts);
	sm_json_bool(j, "asymmetric", ph->asymmetric);
	sm_json_uint(j, "leaf_uplinks_full", ph->up_full);
	sm_json_arr_begin(j, "per_plane");
	for (unsigned p = 0; p < ph->n_planes; p++) {
		const struct sm_plane_health *h = &ph->p[p];
		sm_json_obj_begin(j, NULL);
		sm_json_uint(j, "plane", h->plane);
		sm_json_str(j, "name", h->name);
		for (size_t i = 0; i < sizeof(plane_members) / sizeof(plane_members[0]); i++) {
			const char *at = (const char *)h + plane_members[i].off;
			uint32_t u;
			double d;
			if (plane_members[i].dbl) {
				memcpy(&d, at, sizeof(d));
				sm_json_double(j, plane_members[i].key, d);
			} else {
				memcpy(&u, at, sizeof(u));
				sm_json_uint(j, plane_members[i].key, u);
			}
		}
		sm_json_obj_end(j);
	}
	sm_json_arr_end(j);
	sm_json_obj_end(j);
}
