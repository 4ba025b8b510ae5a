/* SPDX-License-Identifier: MIT */
/*
 * DOC: fabric generator implementation
 *
 * Data flow: parameters -> shape (sm_gen_fat_tree_shape: validation and
 * sizes) -> an abstract switch graph shared by all planes (struct tree: the
 * switch-switch links as port pairs plus a CSR adjacency) -> per plane, the
 * fault draw marks switches and links dead (struct plane_faults) -> the
 * live part is added to the sm_fabric.
 *
 * Faults keep the plane's switch graph connected: a candidate removal is
 * undone when a breadth-first search can no longer reach around it. The
 * search stops as soon as it finds the other end, which in a fat tree is a
 * few hops away, so a 3% removal on a 5,120-switch tree stays cheap.
 *
 * Invariants: nothing in f is touched until every parameter has been checked;
 * the PRNG stream of a plane depends only on (seed, plane), so a plane's
 * faults do not change when other planes are added.
 */
#include "config.h"
#include "lib/err.h"
#include "model/gen.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PHYS_POLLING 2
#define PHYS_LINKUP 5
#define WIDTH_4X 2
#define SPEED_EXT_NDR 8

void sm_gen_params_init(struct sm_gen_params *p)
{
	memset(p, 0, sizeof(*p));
	p->radix = 64;
	p->planes = 1;
	p->oversub_down = 1;
	p->oversub_up = 1;
	p->fault_plane = -1;
	p->seed = 1;
}

static unsigned gcd(unsigned a, unsigned b)
{
	while (b) {
		unsigned t = a % b;
		a = b;
		b = t;
	}
	return a;
}

static unsigned div_up(unsigned a, unsigned b)
{
	return a / b + (a % b != 0);
}

int sm_gen_fat_tree_shape(const struct sm_gen_params *p, struct sm_gen_shape *s,
			  char *err, size_t errlen)
{
	memset(s, 0, sizeof(*s));
	if (p->radix < 2 || p->radix > SM_MAX_PORTS)
		return sm_errf_rc(-EINVAL, err, errlen, "radix %u out of range (2..%u)", p->radix,
			    SM_MAX_PORTS);
	if (p->levels != 0 && p->levels != 2 && p->levels != 3)
		return sm_errf_rc(-EINVAL, err, errlen, "levels %u not supported (2 or 3)", p->levels);
	if (p->planes < 1 || p->planes > SM_MAX_PLANES)
		return sm_errf_rc(-EINVAL, err, errlen, "planes %u out of range (1..%u)", p->planes,
			    SM_MAX_PLANES);
	if (!p->oversub_down || !p->oversub_up)
		return sm_errf_rc(-EINVAL, err, errlen, "oversubscription %u:%u: both sides must be > 0",
			    p->oversub_down, p->oversub_up);
	if (p->oversub_down < p->oversub_up)
		return sm_errf_rc(-EINVAL, err, errlen,
			    "oversubscription %u:%u has fewer hosts than uplinks (want A:B with A >= B)",
			    p->oversub_down, p->oversub_up);
	if (!(p->remove_links >= 0.0 && p->remove_links <= 1.0))
		return sm_errf_rc(-EINVAL, err, errlen, "link removal fraction %g out of range (0..1)",
			    p->remove_links);
	if (p->fault_plane < -1 || p->fault_plane >= (int)p->planes)
		return sm_errf_rc(-EINVAL, err, errlen, "fault plane %d out of range (0..%u)",
			    p->fault_plane, p->planes - 1);

	unsigned g = gcd(p->oversub_down, p->oversub_up);
	unsigned a = p->oversub_down / g, b = p->oversub_up / g;
	unsigned k = p->radix;
	if (a > k || b > k || a + b > k)
		return sm_errf_rc(-EINVAL, err, errlen,
			    "oversubscription %u:%u does not fit a radix-%u leaf", a, b, k);
	unsigned m = k / (a + b);
	s->radix = k;
	s->down = a * m;
	s->up = b * m;
	unsigned h = k / 2;

	/* all products below stay far under 2^32: k <= 254 */
	unsigned max2 = k * s->down;
	unsigned max3 = k * h * s->down;
	unsigned levels = p->levels;
	if (!levels)
		levels = p->hosts <= max2 ? 2 : 3;
	s->levels = levels;
	s->max_hosts = levels == 2 ? max2 : max3;
	if (levels == 3 && h < 1)
		return sm_errf_rc(-EINVAL, err, errlen, "radix %u is too small for 3 levels (at least 2)", k);
	if (p->hosts > s->max_hosts)
		return sm_errf_rc(-ERANGE, err, errlen,
			    "%u hosts do not fit a %u-level fat tree of radix %u%s (at most %u)%s",
			    p->hosts, levels, k, (a != 1 || b != 1) ? " with this oversubscription" : "",
			    s->max_hosts, levels == 2 ? "; use 3 levels" : "");
	s->hosts = p->hosts ? p->hosts : s->max_hosts;
	s->leaves = div_up(s->hosts, s->down);
	if (levels == 2) {
		s->spines = s->up;
		s->switches = s->leaves + s->spines;
		s->sw_links = s->leaves * s->up;
	} else {
		s->leaves_per_pod = h;
		s->pods = div_up(s->leaves, h);
		s->aggs = s->pods * s->up;
		s->cores = s->up * h;
		s->switches = s->leaves + s->aggs + s->cores;
		s->sw_links = s->leaves * s->up + s->aggs * h;
	}
	s->lids = s->hosts + s->switches;

	uint64_t nodes = (uint64_t)p->planes * (s->hosts + s->switches);
	if (nodes > SM_GEN_MAX_NODES)
		return sm_errf_rc(-ERANGE, err, errlen,
			    "fabric would have %llu nodes, more than the generator's limit of %u",
			    (unsigned long long)nodes, SM_GEN_MAX_NODES);
	if (!p->no_lids && s->lids > SM_UNICAST_LID_MAX)
		return sm_errf_rc(-ERANGE, err, errlen,
			    "fabric needs %u LIDs per plane, more than the %u unicast LIDs; generate it without LIDs",
			    s->lids, SM_UNICAST_LID_MAX);
	if (p->remove_nics >= s->hosts)
		return sm_errf_rc(-EINVAL, err, errlen,
			    "cannot remove %u NICs: a plane has %u hosts and keeps at least one",
			    p->remove_nics, s->hosts);
	if (p->remove_switches > s->switches - s->leaves)
		return sm_errf_rc(-EINVAL, err, errlen,
			    "cannot remove %u switches: the tree has only %u non-leaf switches per plane",
			    p->remove_switches, s->switches - s->leaves);
	return 0;
}

enum sm_gen_level sm_gen_switch_level(const struct sm_gen_shape *sh, uint32_t s)
{
	if (s < sh->leaves)
		return SM_GEN_LEAF;
	if (sh->levels == 2)
		return SM_GEN_SPINE;
	return s < sh->leaves + sh->aggs ? SM_GEN_AGG : SM_GEN_CORE;
}

/* The switch-switch links of a full plane, and their adjacency. */
struct link {
	uint32_t a, b;      /* switch indices, a is the lower level */
	uint8_t pa, pb;
};

struct tree {
	struct sm_gen_shape sh;
	struct link *links;
	uint32_t n_links;
	uint32_t *adj_off;  /* switches + 1 */
	uint32_t *adj;      /* link indices */
};

static void tree_free(struct tree *t)
{
	free(t->links);
	free(t->adj_off);
	free(t->adj);
}

static void add_link(struct tree *t, uint32_t a, unsigned pa, uint32_t b, unsigned pb)
{
	struct link *l = &t->links[t->n_links++];
	l->a = a;
	l->b = b;
	l->pa = (uint8_t)pa;
	l->pb = (uint8_t)pb;
}

static int tree_build(struct tree *t)
{
	const struct sm_gen_shape *s = &t->sh;
	unsigned d = s->down, u = s->up;

	t->links = calloc(s->sw_links ? s->sw_links : 1, sizeof(*t->links));
	t->adj_off = calloc((size_t)s->switches + 1, sizeof(*t->adj_off));
	t->adj = calloc(2 * (size_t)s->sw_links + 1, sizeof(*t->adj));
	if (!t->links || !t->adj_off || !t->adj)
		return -ENOMEM;
	if (s->levels == 2) {
		for (uint32_t i = 0; i < s->leaves; i++)
			for (unsigned j = 0; j < u; j++)
				add_link(t, i, d + 1 + j, s->leaves + j, i + 1);
	} else {
		unsigned h = s->leaves_per_pod;
		uint32_t agg0 = s->leaves, core0 = s->leaves + s->aggs;
		for (uint32_t i = 0; i < s->leaves; i++) {
			uint32_t pod = i / h;
			for (unsigned j = 0; j < u; j++)
				add_link(t, i, d + 1 + j, agg0 + pod * u + j, i % h + 1);
		}
		for (uint32_t pod = 0; pod < s->pods; pod++)
			for (unsigned j = 0; j < u; j++)
				for (unsigned c = 0; c < h; c++)
					add_link(t, agg0 + pod * u + j, h + 1 + c, core0 + j * h + c,
						 pod + 1);
	}
	/* CSR adjacency; link order keeps down-links before up-links at each switch */
	for (uint32_t l = 0; l < t->n_links; l++) {
		t->adj_off[t->links[l].a + 1]++;
		t->adj_off[t->links[l].b + 1]++;
	}
	for (uint32_t i = 0; i < s->switches; i++)
		t->adj_off[i + 1] += t->adj_off[i];
	uint32_t *fill = calloc(s->switches ? s->switches : 1, sizeof(*fill));
	if (!fill)
		return -ENOMEM;
	for (uint32_t l = 0; l < t->n_links; l++) {
		uint32_t a = t->links[l].a, b = t->links[l].b;
		t->adj[t->adj_off[a] + fill[a]++] = l;
		t->adj[t->adj_off[b] + fill[b]++] = l;
	}
	free(fill);
	return 0;
}

/* splitmix64: small, fast, and good enough to shuffle a link list */
struct rng {
	uint64_t s;
};

static uint64_t rng_next(struct rng *r)
{
	return sm_splitmix64(&r->s);
}

/* Uniform in [0, n), n > 0, without modulo bias. */
static uint32_t rng_below(struct rng *r, uint32_t n)
{
	uint64_t lim = UINT64_MAX - UINT64_MAX % n;
	uint64_t x;
	do
		x = rng_next(r);
	while (x >= lim);
	return (uint32_t)(x % n);
}

static void shuffle(struct rng *r, uint32_t *v, uint32_t n)
{
	for (uint32_t i = n; i > 1; i--) {
		uint32_t j = rng_below(r, i);
		uint32_t t = v[i - 1];
		v[i - 1] = v[j];
		v[j] = t;
	}
}

/* Fault maps of the plane being drawn or built, and BFS scratch. */
struct plane_faults {
	uint8_t *sw_dead;   /* points into the per-plane maps */
	uint8_t *link_dead;
	uint8_t *nic_dead;  /* per host */
	uint32_t *mark;     /* BFS visit stamp per switch */
	uint32_t stamp;
	uint32_t *queue;
	uint32_t *order;    /* shuffled candidates */
};

static void faults_free(struct plane_faults *pf)
{
	free(pf->mark);
	free(pf->queue);
	free(pf->order);
}

static int faults_alloc(struct plane_faults *pf, const struct tree *t)
{
	size_t ns = (size_t)t->sh.switches + 1, nl = (size_t)t->n_links + 1;
	size_t no = ns > nl ? ns : nl;

	if (no < (size_t)t->sh.hosts + 1)
		no = (size_t)t->sh.hosts + 1;
	pf->mark = calloc(ns, sizeof(*pf->mark));
	pf->queue = calloc(ns, sizeof(*pf->queue));
	pf->order = calloc(no, sizeof(*pf->order));
	if (!pf->mark || !pf->queue || !pf->order)
		return -ENOMEM;
	return 0;
}

/*
 * BFS over live switches and links from `from`. With target != SM_NONE,
 * returns 1 as soon as target is reached (0 if never); otherwise returns the
 * number of switches reached.
 */
static uint32_t bfs(const struct tree *t, struct plane_faults *pf, uint32_t from, uint32_t target)
{
	uint32_t head = 0, tail = 0, st = ++pf->stamp;

	if (st == 0) { /* wrapped: clear stamps */
		memset(pf->mark, 0, t->sh.switches * sizeof(*pf->mark));
		st = pf->stamp = 1;
	}
	pf->mark[from] = st;
	pf->queue[tail++] = from;
	while (head < tail) {
		uint32_t x = pf->queue[head++];
		for (uint32_t e = t->adj_off[x]; e < t->adj_off[x + 1]; e++) {
			uint32_t l = t->adj[e];
			if (pf->link_dead[l])
				continue;
			uint32_t y = t->links[l].a == x ? t->links[l].b : t->links[l].a;
			if (pf->sw_dead[y] || pf->mark[y] == st)
				continue;
			if (y == target)
				return 1;
			pf->mark[y] = st;
			pf->queue[tail++] = y;
		}
	}
	return target == SM_NONE ? tail : 0;
}

static int remove_switches(const struct tree *t, struct plane_faults *pf, struct rng *r,
			   unsigned want, unsigned plane, char *err, size_t errlen)
{
	const struct sm_gen_shape *s = &t->sh;
	uint32_t nc = s->switches - s->leaves, alive = s->switches, done = 0;

	for (uint32_t i = 0; i < nc; i++)
		pf->order[i] = s->leaves + i;
	shuffle(r, pf->order, nc);
	for (uint32_t i = 0; i < nc && done < want; i++) {
		uint32_t sw = pf->order[i];
		pf->sw_dead[sw] = 1;
		/* leaf 0 is never removed, so it is a valid BFS root */
		if (bfs(t, pf, 0, SM_NONE) == alive - 1) {
			alive--;
			done++;
		} else {
			pf->sw_dead[sw] = 0;
		}
	}
	if (done < want)
		return sm_errf_rc(-ERANGE, err, errlen,
			    "plane %u: only %u of %u switches can be removed without splitting the fabric",
			    plane, done, want);
	return 0;
}

static int remove_links(const struct tree *t, struct plane_faults *pf, struct rng *r,
			double fraction, unsigned plane, char *err, size_t errlen)
{
	uint32_t n = 0, done = 0;

	for (uint32_t l = 0; l < t->n_links; l++) {
		if (pf->sw_dead[t->links[l].a] || pf->sw_dead[t->links[l].b])
			pf->link_dead[l] = 1;   /* gone with its switch; not counted */
		else
			pf->order[n++] = l;
	}
	uint32_t want = (uint32_t)floor(fraction * n + 0.5);
	shuffle(r, pf->order, n);
	for (uint32_t i = 0; i < n && done < want; i++) {
		uint32_t l = pf->order[i];
		pf->link_dead[l] = 1;
		if (bfs(t, pf, t->links[l].a, t->links[l].b))
			done++;
		else
			pf->link_dead[l] = 0;
	}
	if (done < want)
		return sm_errf_rc(-ERANGE, err, errlen,
			    "plane %u: only %u of %u switch links can be removed without splitting the fabric",
			    plane, done, want);
	return 0;
}

/* A NIC is a leaf of the graph: removing it never splits anything. */
static void remove_nics(const struct tree *t, struct plane_faults *pf, struct rng *r, unsigned want)
{
	uint32_t n = t->sh.hosts;

	for (uint32_t i = 0; i < n; i++)
		pf->order[i] = i;
	/* the first `want` picks of a Fisher-Yates shuffle, from the back */
	for (uint32_t i = 0; i < want; i++) {
		uint32_t j = rng_below(r, n - i);
		uint32_t tmp = pf->order[n - 1 - i];
		pf->order[n - 1 - i] = pf->order[j];
		pf->order[j] = tmp;
		pf->nic_dead[pf->order[n - 1 - i]] = 1;
	}
}

static void set_port_states(struct sm_fabric *f, uint32_t n)
{
	const struct sm_node *nd = sm_node(f, n);
	for (unsigned p = 1; p <= nd->nports; p++) {
		struct sm_port *pt = sm_port(f, n, p);
		if (pt->peer_node != SM_NONE) {
			pt->state = SM_PORT_ACTIVE;
			pt->phys_state = PHYS_LINKUP;
			pt->width = WIDTH_4X;
			pt->speed = SPEED_EXT_NDR;
			pt->flags |= SM_PORT_F_EXT_SPEED;
		} else {
			pt->state = SM_PORT_DOWN;
			pt->phys_state = PHYS_POLLING;
		}
	}
	if (nd->type == SM_NODE_SWITCH) {
		struct sm_port *p0 = sm_port(f, n, 0);
		p0->state = SM_PORT_ACTIVE;
		p0->phys_state = PHYS_LINKUP;
	}
}

static const char *level_name(enum sm_gen_level l)
{
	switch (l) {
	case SM_GEN_LEAF: return "leaf";
	case SM_GEN_SPINE: return "spine";
	case SM_GEN_AGG: return "agg";
	default: return "core";
	}
}

static uint32_t level_base(const struct sm_gen_shape *s, enum sm_gen_level l)
{
	switch (l) {
	case SM_GEN_LEAF: return 0;
	case SM_GEN_AGG:
	case SM_GEN_SPINE: return s->leaves;
	default: return s->leaves + s->aggs;
	}
}

static int build_plane(struct sm_fabric *f, const struct sm_gen_params *p, const struct tree *t,
		       const struct plane_faults *pf, unsigned plane, uint32_t *sw_node,
		       uint32_t *nic_node, const uint32_t *lid_of)
{
	const struct sm_gen_shape *s = &t->sh;
	char desc[SM_DESC_MAX + 1];
	uint32_t first = f->n_nodes;
	int64_t n;
	int rc;

	rc = sm_fabric_add_plane(f, plane, NULL);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < s->hosts; i++) {
		nic_node[i] = SM_NONE;
		if (pf->nic_dead[i])
			continue;
		n = sm_fabric_add_node(f, SM_NODE_CA, sm_gen_ca_guid(plane, i), 1,
				       plane, 0);
		if (n < 0)
			return (int)n;
		nic_node[i] = (uint32_t)n;
		rc = sm_fabric_set_port_guid(f, (uint32_t)n, 1,
					     sm_gen_ca_port_guid(plane, i));
		if (rc)
			return rc;
		struct sm_node *nd = sm_node(f, (uint32_t)n);
		nd->sysimg_guid = sm_gen_sysimg_guid(i);
		nd->vendor_id = SM_GEN_VENDOR_ID;
		nd->device_id = SM_GEN_CA_DEVICE_ID;
		snprintf(desc, sizeof(desc), "host%05u mlx5_%u", i, plane);
		sm_fabric_set_desc(f, (uint32_t)n, desc);
	}
	for (uint32_t sw = 0; sw < s->switches; sw++) {
		sw_node[sw] = SM_NONE;
		if (pf->sw_dead[sw])
			continue;
		uint64_t guid = sm_gen_switch_guid(plane, sw);
		n = sm_fabric_add_node(f, SM_NODE_SWITCH, guid, s->radix, plane, guid);
		if (n < 0)
			return (int)n;
		sw_node[sw] = (uint32_t)n;
		struct sm_node *nd = sm_node(f, (uint32_t)n);
		enum sm_gen_level lv = sm_gen_switch_level(s, sw);
		nd->sysimg_guid = guid;
		nd->vendor_id = SM_GEN_VENDOR_ID;
		nd->device_id = SM_GEN_SWITCH_DEVICE_ID;
		nd->flags |= SM_NODE_F_ENHANCED_SP0;
		nd->lft_cap = SM_LID_SPACE;
		snprintf(desc, sizeof(desc), "p%u-%s%05u", plane, level_name(lv),
			 sw - level_base(s, lv));
		sm_fabric_set_desc(f, (uint32_t)n, desc);
	}
	for (uint32_t i = 0; i < s->hosts; i++) {
		if (nic_node[i] == SM_NONE)
			continue;
		rc = sm_fabric_link(f, nic_node[i], 1, sw_node[i / s->down], 1 + i % s->down);
		if (rc)
			return rc;
	}
	for (uint32_t l = 0; l < t->n_links; l++) {
		const struct link *lk = &t->links[l];
		if (pf->link_dead[l] || pf->sw_dead[lk->a] || pf->sw_dead[lk->b])
			continue;
		rc = sm_fabric_link(f, sw_node[lk->a], lk->pa, sw_node[lk->b], lk->pb);
		if (rc)
			return rc;
	}
	for (uint32_t n2 = first; n2 < f->n_nodes; n2++)
		set_port_states(f, n2);
	if (p->no_lids)
		return 0;
	/* slot i < hosts is host i, slot hosts + s is switch s; LID = 1 + lid_of[slot] */
	for (uint32_t i = 0; i < s->hosts; i++) {
		if (nic_node[i] == SM_NONE)
			continue;
		rc = sm_fabric_set_lid(f, nic_node[i], 1, (uint16_t)(1 + lid_of[i]), 0);
		if (rc)
			return rc;
	}
	for (uint32_t sw = 0; sw < s->switches; sw++) {
		if (sw_node[sw] == SM_NONE)
			continue;
		rc = sm_fabric_set_lid(f, sw_node[sw], 0, (uint16_t)(1 + lid_of[s->hosts + sw]), 0);
		if (rc)
			return rc;
	}
	return 0;
}

/*
 * LID slots of a plane: the identity (plane-consistent LIDs), or with
 * shuffle_lids a permutation drawn from (seed, plane) on a stream of its
 * own, so shuffling never changes which links or switches are removed.
 */
static void plane_lids(const struct sm_gen_params *p, const struct sm_gen_shape *s,
		       unsigned plane, uint32_t *lid_of)
{
	for (uint32_t i = 0; i < s->lids; i++)
		lid_of[i] = i;
	if (!p->shuffle_lids)
		return;
	struct rng r = { p->seed ^ 0x1d5c0ffeeULL };
	r.s = rng_next(&r) ^ (0xbb67ae8584caa73bULL * (plane + 1));
	shuffle(&r, lid_of, s->lids);
}

int sm_gen_fat_tree(const struct sm_gen_params *p, struct sm_fabric *f, char *err, size_t errlen)
{
	struct tree t = { 0 };
	struct plane_faults pf = { 0 };
	uint32_t *sw_node = NULL, *nic_node, *lid_of;   /* one allocation */
	uint8_t *sw_dead = NULL, *link_dead, *nic_dead;  /* one allocation */
	int rc;

	if (err && errlen)
		err[0] = '\0';
	if (!p || !f)
		return sm_errf_rc(-EINVAL, err, errlen, "no parameters or no fabric");
	if (f->n_nodes)
		return sm_errf_rc(-EINVAL, err, errlen, "the fabric to generate into is not empty");
	rc = sm_gen_fat_tree_shape(p, &t.sh, err, errlen);
	if (rc)
		return rc;
	rc = tree_build(&t);
	if (!rc)
		rc = faults_alloc(&pf, &t);
	sw_node = calloc((size_t)t.sh.switches + 1 + t.sh.hosts + 1 + t.sh.lids + 1, sizeof(*sw_node));
	if (rc || !sw_node) {
		rc = sm_errf_rc(-ENOMEM, err, errlen, "out of memory");
		goto out;
	}
	nic_node = sw_node + t.sh.switches + 1;
	lid_of = nic_node + t.sh.hosts + 1;
	/*
	 * Draw every plane's faults before adding anything, so that a fault
	 * count that cannot be met leaves f untouched. Each plane keeps its own
	 * dead-switch and dead-link maps (a few MB at most).
	 */
	size_t ns = (size_t)t.sh.switches, nl = (size_t)t.n_links, nh = (size_t)t.sh.hosts;
	sw_dead = calloc(p->planes * (ns + nl + nh) + 1, 1);
	if (!sw_dead) {
		rc = sm_errf_rc(-ENOMEM, err, errlen, "out of memory");
		goto out;
	}
	link_dead = sw_dead + p->planes * ns;
	nic_dead = link_dead + p->planes * nl;
	for (unsigned pl = 0; pl < p->planes; pl++) {
		if (p->fault_plane >= 0 && (unsigned)p->fault_plane != pl)
			continue;
		struct rng r = { p->seed };
		r.s = rng_next(&r) ^ (0x6a09e667f3bcc909ULL * (pl + 1));
		pf.sw_dead = sw_dead + pl * ns;
		pf.link_dead = link_dead + pl * nl;
		pf.nic_dead = nic_dead + pl * nh;
		rc = remove_switches(&t, &pf, &r, p->remove_switches, pl, err, errlen);
		if (!rc)
			rc = remove_links(&t, &pf, &r, p->remove_links, pl, err, errlen);
		if (rc)
			goto out;
		/* drawn last, so adding NIC removals never moves the other faults */
		remove_nics(&t, &pf, &r, p->remove_nics);
	}
	uint64_t nodes = (uint64_t)p->planes * (t.sh.hosts + t.sh.switches);
	uint64_t ports = (uint64_t)p->planes * (2ULL * t.sh.hosts +
						 (uint64_t)t.sh.switches * (t.sh.radix + 1));
	if (ports > UINT32_MAX / 2 || sm_fabric_reserve(f, (uint32_t)nodes, (uint32_t)ports)) {
		rc = sm_errf_rc(-ENOMEM, err, errlen, "out of memory reserving %llu nodes",
			  (unsigned long long)nodes);
		goto out;
	}
	for (unsigned pl = 0; pl < p->planes; pl++) {
		pf.sw_dead = sw_dead + pl * ns;
		pf.link_dead = link_dead + pl * nl;
		pf.nic_dead = nic_dead + pl * nh;
		plane_lids(p, &t.sh, pl, lid_of);
		rc = build_plane(f, p, &t, &pf, pl, sw_node, nic_node, lid_of);
		if (rc) {
			sm_errf_rc(rc, err, errlen, "plane %u: building the fabric failed: %s", pl,
			     strerror(-rc));
			goto out;
		}
	}
	rc = 0;
out:
	free(sw_node);
	free(sw_dead);
	faults_free(&pf);
	tree_free(&t);
	return rc;
}
