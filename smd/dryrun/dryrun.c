/* SPDX-License-Identifier: MIT */
/*
 * DOC: dry-run core; see dryrun_core.h for the steps and ownership.
 *
 * LIDs: a dry-run keeps every LID the dump holds (they are what the running
 * SM programmed, and what an LFT file must name), so it does not run the
 * persistent LID manager (smd/sm/lidmgr.c), which may move LIDs to honour a
 * guid2lid table. It only fills the gaps: the lowest free aligned range,
 * switches first, then CA/router ports, in node order (deterministic).
 *
 * Connected parts are found with a union-find over the plane's cables; they
 * tell a disconnected fabric (pairs no routing can join, reported as
 * unreachable pairs) from a routing failure (which validation rejects).
 *
 * Threads (one per CPU): dumps are parsed in parallel and appended in plane
 * order; LIDs, parts, routing with validation (registry.c) and metrics run
 * plane by plane in parallel, each job writing only its own plane's ports,
 * LID table and result. Results and errors are taken in plane order, so a
 * run gives what a sequential one would. With an LFT file asked for, planes
 * route in order on this thread instead and a writer thread writes each as
 * it is done (lfts_out.c), unless an engine routes planes jointly.
 */
#include "dryrun/dryrun.h"
#include "model/hosts.h"
#include "lib/clock.h"
#include "model/lft_file.h"
#include "model/profile.h"
#include "routing/registry.h"
#include "model/topo.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct sm_dryrun *sm_dryrun_new(void)
{
	struct sm_dryrun *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->f = sm_fabric_new();
	if (!d->f) {
		free(d);
		return NULL;
	}
	return d;
}

void sm_dryrun_free(struct sm_dryrun *d)
{
	if (!d)
		return;
	sm_dr_lftw_free(d);   /* before the tables it may be writing */
	for (unsigned i = 0; i < SM_MAX_PLANES; i++)
		sm_lfts_free(d->lfts[i]);
	sm_chain_free(d->chain);
	sm_registry_free(d->reg);
	sm_profile_free(d->profile);
	sm_fabric_free(d->f);
	free(d->run.parts);
	free(d);
}

struct load_job {
	const char *const *dumps;
	unsigned n, next;                 /* next dump to parse (under lock) */
	uint8_t done[SM_MAX_PLANES];      /* parse i finished (under lock) */
	struct sm_topo_parsed *parsed[SM_MAX_PLANES];
	struct sm_topo_parsed *pool[SM_MAX_PLANES];  /* committed, for reuse (under lock) */
	unsigned n_pool;
	struct sm_topo_err err[SM_MAX_PLANES];
	int rc[SM_MAX_PLANES];
	pthread_mutex_t lock;
	pthread_cond_t cond;
};

/* Worker: parse dumps in plane order until none is left. */
static void *load_worker(void *arg)
{
	struct load_job *j = arg;

	for (;;) {
		struct sm_topo_parsed *p = NULL;
		pthread_mutex_lock(&j->lock);
		unsigned i = j->next < j->n ? j->next++ : j->n;
		if (i < j->n && j->n_pool)
			p = j->pool[--j->n_pool];   /* parse into a committed dump's memory */
		pthread_mutex_unlock(&j->lock);
		if (i == j->n) {
			sm_topo_parsed_free(p);
			return NULL;
		}
		j->rc[i] = sm_topo_parse(j->dumps[i], SM_TOPO_AUTO, i, &p, &j->err[i]);
		j->parsed[i] = p;
		pthread_mutex_lock(&j->lock);
		j->done[i] = 1;
		pthread_cond_broadcast(&j->cond);
		pthread_mutex_unlock(&j->lock);
	}
}

/* Append parse i to the fabric as soon as it is done, then free it. */
static int load_commit(struct sm_dryrun *d, struct load_job *j, unsigned i, char *err, size_t errlen)
{
	struct sm_topo_err *te = &j->err[i];
	struct sm_dr_plane *p = &d->run.planes[i];
	int rc;

	pthread_mutex_lock(&j->lock);
	while (!j->done[i])
		pthread_cond_wait(&j->cond, &j->lock);
	pthread_mutex_unlock(&j->lock);
	rc = sm_fabric_add_plane(d->f, i, NULL);
	if (rc) {
		snprintf(err, errlen, "plane %u: %s", i, strerror(-rc));
		return rc;
	}
	rc = j->rc[i];
	if (!rc)
		rc = sm_topo_commit(d->f, j->parsed[i], te);
	pthread_mutex_lock(&j->lock);
	if (j->parsed[i])
		j->pool[j->n_pool++] = j->parsed[i];
	j->parsed[i] = NULL;
	pthread_mutex_unlock(&j->lock);
	if (rc) {
		if (te->msg[0])
			snprintf(err, errlen, "%s", te->msg);
		else
			snprintf(err, errlen, "%s: %s", j->dumps[i], strerror(-rc));
		return rc;
	}
	p->plane = i;
	snprintf(p->dump, sizeof(p->dump), "%s", j->dumps[i]);
	snprintf(p->name, sizeof(p->name), "%s", d->f->planes[i].name);
	return 0;
}

/*
 * Fault in [p, p + len) for writing with one system call where Linux can
 * (5.14+): the fabric's arrays are written page after page while the dumps
 * are appended, and one fault per page costs more than appending. Only a
 * hint: errors are ignored.
 */
static void populate(void *p, size_t len)
{
#ifdef MADV_POPULATE_WRITE
	long pg = sysconf(_SC_PAGESIZE);
	uintptr_t a = (uintptr_t)p, b = a + len;

	if (pg <= 0 || !p)
		return;
	a = (a + (uintptr_t)pg - 1) & ~((uintptr_t)pg - 1);
	b &= ~((uintptr_t)pg - 1);
	if (b > a)
		(void)madvise((void *)a, b - a, MADV_POPULATE_WRITE);
#else
	(void)p;
	(void)len;
#endif
}

/* An empty GUID map with room for n keys (a zeroed map with a capacity is empty). */
static void presize_map(struct sm_guid_map *m, uint64_t n)
{
	uint32_t cap = 64;

	if (m->cap)
		return;
	while (cap < 2 * (n + 1) && cap < (1u << 24))
		cap *= 2;
	m->keys = malloc(cap * sizeof(*m->keys));
	m->vals = malloc(cap * sizeof(*m->vals));
	if (m->keys && m->vals) {
		populate(m->keys, cap * sizeof(*m->keys));
		populate(m->vals, cap * sizeof(*m->vals));
		memset(m->keys, 0, cap * sizeof(*m->keys));
	} else {
		free(m->keys);
		free(m->vals);
		m->keys = NULL;
		m->vals = NULL;
		return;
	}
	m->cap = cap;
}

/*
 * Room for what the dumps will add, guessed from their sizes (as the
 * parser does for each): the fabric then takes them without growing its
 * arrays and GUID maps once per dump. Only a guess: appending still grows
 * what it must.
 */
static void presize(struct sm_fabric *f, const char *const *dumps, unsigned n)
{
	uint64_t size = 0;
	struct stat st;

	for (unsigned i = 0; i < n; i++)
		if (!stat(dumps[i], &st) && S_ISREG(st.st_mode) && st.st_size > 0)
			size += (uint64_t)st.st_size;
	if (!size || f->n_nodes)
		return;
	if (size > (1u << 30))
		size = 1u << 30;
	/* about 400 bytes of ibnetdiscover text per node, 85 per port */
	if (sm_fabric_reserve(f, (uint32_t)(size / 256 + 16), (uint32_t)(size / 64 + 64)))
		return;
	populate(f->nodes, (size_t)f->cap_nodes * sizeof(*f->nodes));
	populate(f->ports, (size_t)f->cap_ports * sizeof(*f->ports));
	presize_map(&f->node_by_guid, size / 256);
	presize_map(&f->port_by_guid, size / 256);
}

/*
 * Dumps are parsed by one worker thread per CPU (reading text is most of
 * a dry-run's time) while this thread appends each to the fabric, in plane
 * order, as soon as it is parsed, and hands its memory back for the next
 * parse (so at most a few parsed dumps exist, and their pages are faulted
 * in once, not once per dump). The fabric and the first error reported are
 * those of loading the dumps one by one.
 */
int sm_dryrun_load(struct sm_dryrun *d, const char *const *dumps, unsigned n, char *err,
		   size_t errlen)
{
	double t0 = sm_mono_sec();
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned want = cpus > 1 ? (unsigned)cpus : 1, n_th = 0, i;
	pthread_t th[SM_MAX_PLANES];
	struct load_job *j;
	int rc = 0;

	if (n == 0 || n > SM_MAX_PLANES) {
		snprintf(err, errlen, "need 1 to %d topology dumps, got %u", SM_MAX_PLANES, n);
		return -EINVAL;
	}
	j = calloc(1, sizeof(*j));
	if (!j) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	j->dumps = dumps;
	j->n = n;
	if (pthread_mutex_init(&j->lock, NULL)) {
		free(j);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (pthread_cond_init(&j->cond, NULL)) {
		pthread_mutex_destroy(&j->lock);
		free(j);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (want > n)
		want = n;
	for (i = 0; i < want; i++) {
		if (pthread_create(&th[n_th], NULL, load_worker, j))
			break;
		n_th++;
	}
	presize(d->f, dumps, n);
	if (!n_th)
		load_worker(j);  /* no thread at all: parse everything here first */
	for (i = 0; i < n && !rc; i++)
		rc = load_commit(d, j, i, err, errlen);
	for (i = 0; i < n_th; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < n; i++)
		sm_topo_parsed_free(j->parsed[i]);
	for (i = 0; i < j->n_pool; i++)
		sm_topo_parsed_free(j->pool[i]);
	pthread_cond_destroy(&j->cond);
	pthread_mutex_destroy(&j->lock);
	free(j);
	if (rc)
		return rc;
	d->run.n_planes = n;
	d->run.t.load = sm_mono_sec() - t0;
	return 0;
}

static void endpoint_of(const struct sm_fabric *f, uint32_t pi, struct sm_dr_endpoint *e)
{
	const struct sm_port *p = &f->ports[pi];

	e->guid = p->guid;
	e->lid = p->lid;
	e->port = p->num;
	snprintf(e->desc, sizeof(e->desc), "%s", f->nodes[p->node].desc);
}

/* Lowest free range of `span` LIDs aligned on span, at or after *cursor. */
static int find_free(const struct sm_fabric *f, unsigned plane, unsigned span, unsigned *cursor,
		     uint16_t *out)
{
	unsigned lid = (*cursor + span - 1) & ~(span - 1);

	while (lid + span - 1 <= SM_UNICAST_LID_MAX) {
		unsigned k;
		for (k = 0; k < span; k++)
			if (sm_fabric_find_lid(f, plane, (uint16_t)(lid + k)) != SM_NONE)
				break;
		if (k == span) {
			*out = (uint16_t)lid;
			*cursor = lid + span;
			return 0;
		}
		lid += span;
	}
	return -ENOSPC;
}

static int needs_lid(const struct sm_fabric *f, uint32_t n, unsigned p)
{
	const struct sm_node *nd = &f->nodes[n];
	const struct sm_port *pt = sm_port(f, n, p);

	if (nd->type == SM_NODE_SWITCH)
		return p == 0;
	return p >= 1 && pt->peer_node != SM_NONE;
}

static int assign_plane(struct sm_fabric *f, unsigned plane, unsigned lmc, struct sm_dr_plane *r,
			char *err, size_t errlen)
{
	unsigned cursor1 = 1, cursorN = 1;
	int rc;

	/* pass 0: switches, pass 1: CA/router ports */
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t n = 0; n < f->n_nodes; n++) {
			const struct sm_node *nd = &f->nodes[n];
			int is_sw = nd->type == SM_NODE_SWITCH;

			if (nd->plane != plane || is_sw != (pass == 0))
				continue;
			for (unsigned p = is_sw ? 0 : 1; p <= (is_sw ? 0u : nd->nports); p++) {
				struct sm_port *pt = sm_port(f, n, p);
				unsigned span = is_sw ? 1 : 1u << lmc;
				uint16_t lid;

				if (!needs_lid(f, n, p))
					continue;
				if (pt->lid) {
					r->lid_ports_kept++;
					continue;
				}
				rc = find_free(f, plane, span, span == 1 ? &cursor1 : &cursorN, &lid);
				if (rc) {
					snprintf(err, errlen, "plane %u: no free unicast LID left for '%s' port %u",
						 plane, nd->desc, p);
					return rc;
				}
				rc = sm_fabric_set_lid(f, n, p, lid, is_sw ? 0 : (uint8_t)lmc);
				if (rc) {
					snprintf(err, errlen, "plane %u: cannot give LID %u to '%s' port %u: %s",
						 plane, lid, nd->desc, p, strerror(-rc));
					return rc;
				}
				r->lid_ports_assigned++;
				r->lids_assigned += span;
				if (r->n_lid_examples < SM_DR_EXAMPLES)
					endpoint_of(f, sm_port_index(f, n, p),
						    &r->lid_examples[r->n_lid_examples++]);
			}
		}
	}
	return 0;
}

static uint32_t uf_find(uint32_t *parent, uint32_t x)
{
	while (parent[x] != x) {
		parent[x] = parent[parent[x]];
		x = parent[x];
	}
	return x;
}

/* Connected parts of the plane and the host pairs they separate. */
static int find_parts(const struct sm_fabric *f, unsigned plane, struct sm_dr_plane *r)
{
	uint32_t *parent = malloc(((size_t)f->n_nodes + 1) * sizeof(*parent));
	uint32_t *hosts = NULL, *size = NULL;
	uint32_t nh = 0;
	int rc = 0;

	if (!parent)
		return -ENOMEM;
	for (uint32_t n = 0; n < f->n_nodes; n++)
		parent[n] = n;
	for (uint32_t n = 0; n < f->n_nodes; n++) {
		if (f->nodes[n].plane != plane)
			continue;
		for (unsigned p = 1; p <= f->nodes[n].nports; p++) {
			const struct sm_port *pt = sm_port(f, n, p);
			if (pt->peer_node == SM_NONE)
				continue;
			uint32_t a = uf_find(parent, n), b = uf_find(parent, pt->peer_node);
			if (a != b)
				parent[a] = b;
		}
	}
	hosts = malloc(((size_t)f->n_ports + 1) * sizeof(*hosts));
	size = calloc((size_t)f->n_nodes + 1, sizeof(*size));
	if (!hosts || !size) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t n = 0; n < f->n_nodes; n++) {
		const struct sm_node *nd = &f->nodes[n];
		if (nd->plane != plane || nd->type == SM_NODE_SWITCH)
			continue;
		for (unsigned p = 1; p <= nd->nports; p++)
			if (sm_port(f, n, p)->lid)
				hosts[nh++] = sm_port_index(f, n, p);
	}
	r->hosts = nh;
	uint64_t same = 0;
	for (uint32_t i = 0; i < nh; i++) {
		uint32_t root = uf_find(parent, f->ports[hosts[i]].node);
		if (!size[root]++)
			r->parts++;
	}
	for (uint32_t n = 0; n < f->n_nodes; n++)
		same += (uint64_t)size[n] * size[n];
	r->disconnected_pairs = (uint64_t)nh * nh - same;
	for (uint32_t i = 0; i < nh && r->disconnected_pairs && r->n_pair_examples < SM_DR_EXAMPLES;
	     i++) {
		uint32_t ri = uf_find(parent, f->ports[hosts[i]].node);
		for (uint32_t j = 0; j < nh && r->n_pair_examples < SM_DR_EXAMPLES; j++) {
			if (uf_find(parent, f->ports[hosts[j]].node) == ri)
				continue;
			endpoint_of(f, hosts[i], &r->pair_examples[r->n_pair_examples][0]);
			endpoint_of(f, hosts[j], &r->pair_examples[r->n_pair_examples][1]);
			r->n_pair_examples++;
		}
	}
out:
	free(parent);
	free(hosts);
	free(size);
	return rc;
}

struct lids_job {
	struct sm_dryrun *d;
	unsigned lmc;
	int rc[SM_MAX_PLANES];
	char err[SM_MAX_PLANES][256];
};

/* One plane's LIDs and parts: it writes only its own ports and LID table. */
static void lids_one(void *arg, unsigned i)
{
	struct lids_job *j = arg;
	struct sm_dr_plane *p = &j->d->run.planes[i];

	j->rc[i] = assign_plane(j->d->f, i, j->lmc, p, j->err[i], sizeof(j->err[i]));
	if (j->rc[i])
		return;
	j->rc[i] = find_parts(j->d->f, i, p);
	if (j->rc[i]) {
		snprintf(j->err[i], sizeof(j->err[i]), "%s", strerror(-j->rc[i]));
		return;
	}
	sm_fabric_count(j->d->f, (int)i, &p->counts);
}

int sm_dryrun_lids(struct sm_dryrun *d, unsigned lmc, char *err, size_t errlen)
{
	double t0 = sm_mono_sec();
	struct lids_job *j;

	if (lmc > 7) {
		snprintf(err, errlen, "LMC %u out of range 0-7", lmc);
		return -EINVAL;
	}
	j = calloc(1, sizeof(*j));
	if (!j) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	j->d = d;
	j->lmc = lmc;
	sm_parallel_for(d->run.n_planes, lids_one, j);
	for (unsigned i = 0; i < d->run.n_planes; i++) {
		int rc = j->rc[i];
		if (rc) {
			snprintf(err, errlen, "%s", j->err[i]);
			free(j);
			return rc;
		}
	}
	free(j);
	d->run.t.lids = sm_mono_sec() - t0;
	return 0;
}

int sm_dryrun_profile(struct sm_dryrun *d, const char *path, char *warn, size_t warnlen,
		      char *err, size_t errlen)
{
	double t0 = sm_mono_sec();
	int rc = sm_profile_load(d->f, path, NULL, &d->profile, err, errlen);

	if (rc)
		return rc;
	snprintf(d->run.profile, sizeof(d->run.profile), "%s", path);
	if (warn && warnlen && !sm_profile_warning(d->profile, warn, warnlen))
		warn[0] = '\0';
	d->run.t.profile = sm_mono_sec() - t0;
	return 0;
}

/*
 * Max link load of the profile's flows of plane p under l; -1 on error.
 * *bound: what no routing beats, the most weight one host sends or receives
 * (its own link carries all of it).
 */
static double plane_load(struct sm_dryrun *d, unsigned plane, const struct sm_lfts *l,
			 size_t *n_flows, double *weight, double *bound)
{
	const struct sm_profile *pr = d->profile;
	struct sm_flow *fl = malloc((pr->n_flows + 1) * sizeof(*fl));
	double *out = calloc((size_t)d->f->n_ports + 1, sizeof(*out));
	double *in = calloc((size_t)d->f->n_ports + 1, sizeof(*in));
	size_t n = 0;
	double w = 0, load, b = 0;

	if (!fl || !out || !in) {
		free(fl);
		free(out);
		free(in);
		return -1;
	}
	for (size_t i = 0; i < pr->n_flows; i++)
		if (sm_profile_flow_plane(d->f, &pr->flows[i]) == plane) {
			const struct sm_flow *x = &pr->flows[i];
			fl[n++] = *x;
			w += x->weight;
			if (x->src < d->f->n_ports && (out[x->src] += x->weight) > b)
				b = out[x->src];
			if (x->dst < d->f->n_ports && (in[x->dst] += x->weight) > b)
				b = in[x->dst];
		}
	load = n ? sm_metrics_max_load(d->f, plane, l, fl, n) : 0;
	free(fl);
	free(out);
	free(in);
	*n_flows = n;
	*weight = w;
	*bound = b;
	return load;
}

/* Does every engine of the chain route planes one by one (none routes them jointly)? */
static bool one_by_one(const struct sm_chain *c)
{
	for (unsigned i = 0; i < c->n; i++)
		if (c->e[i].ops->route_planes)
			return false;
	return true;
}

static void take_result(struct sm_dryrun *d, unsigned i, const struct sm_plane_result *res)
{
	struct sm_dr_plane *p = &d->run.planes[i];

	p->route = *res;
	p->routed = d->lfts[i] != NULL && res->rc == 0;
	if (!p->routed)
		d->run.all_routed = 0;
	if (p->routed && d->profile) {
		p->load_after = plane_load(d, i, d->lfts[i], &p->n_flows, &p->flow_weight, &p->load_bound);
		p->have_load = 1;
	}
}

int sm_dryrun_route(struct sm_dryrun *d, const struct smd_conf *c, char *err, size_t errlen)
{
	struct sm_plane_result *res = NULL;
	unsigned planes[SM_MAX_PLANES];
	unsigned n = d->run.n_planes;
	double t0 = sm_mono_sec();
	int rc;

	smd_conf_chain_str(c, d->run.chain, sizeof(d->run.chain));
	d->reg = sm_registry_new(c->plugin_dir);
	if (!d->reg) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rc = sm_chain_new(d->reg, d->run.chain, c->doc, c->engines_map, &d->chain, err, errlen);
	if (rc) {
		/* engines word their config errors by line only: name the file */
		smd_conf_chain_error(c, d->run.chain, err, errlen);
		return rc;
	}
	res = calloc(SM_MAX_PLANES, sizeof(*res));
	if (!res) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (unsigned i = 0; i < n; i++)
		planes[i] = i;

	if (d->profile) {
		/* "before": what the chain does without the profile */
		struct sm_lfts *base[SM_MAX_PLANES] = { NULL };
		rc = sm_route_chain_planes(d->chain, d->f, planes, n, NULL, base, res);
		for (unsigned i = 0; i < n; i++) {
			struct sm_dr_plane *p = &d->run.planes[i];
			/* negative = unknown: the chain could not route the plane without the profile */
			p->load_before = base[i] ? plane_load(d, i, base[i], &p->n_flows, &p->flow_weight,
									   &p->load_bound) : -1;
			sm_lfts_free(base[i]);
		}
		if (rc == -ENOMEM)
			goto nomem;
		memset(res, 0, SM_MAX_PLANES * sizeof(*res));
	}
	d->run.all_routed = 1;
	if (!d->profile && one_by_one(d->chain) && sm_dr_lftw_start(d)) {
		/*
		 * The LFT file's writer takes the planes as they are routed (lfts_out.c),
		 * routed a CPU's worth at a time (in parallel, as below): one at a time
		 * left a CPU idle, the writer needing little of it.
		 */
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);
		unsigned group = cpus > 1 ? (unsigned)cpus : 1;
		for (unsigned i = 0; i < n; i += group) {
			unsigned m = n - i < group ? n - i : group;
			rc = sm_route_chain_planes(d->chain, d->f, planes + i, m, NULL, &d->lfts[i], &res[i]);
			if (rc == -ENOMEM) {
				sm_dr_lftw_post(d, i, true);
				goto nomem;
			}
			for (unsigned k = i; k < i + m; k++)
				take_result(d, k, &res[k]);
			sm_dr_lftw_post(d, i + m, false);
		}
	} else {
		rc = sm_route_chain_planes(d->chain, d->f, planes, n, d->profile, d->lfts, res);
		if (rc == -ENOMEM)
			goto nomem;
		for (unsigned i = 0; i < n; i++)
			take_result(d, i, &res[i]);
	}
	free(res);
	d->run.t.route = sm_mono_sec() - t0;
	return d->run.all_routed ? 0 : -EHOSTUNREACH;
nomem:
	free(res);
	snprintf(err, errlen, "out of memory while routing");
	return -ENOMEM;
}

struct metrics_job {
	struct sm_dryrun *d;
	const struct sm_metrics_opts *o;
	unsigned n_refs;
	unsigned ref_plane[SM_MAX_PLANES];  /* job k < n_refs: the reference of this plane's shape */
	int rc[SM_MAX_PLANES];
};

/*
 * Job k < n_refs builds and measures one reference tree (as slow as a
 * plane's metrics: started first); the others are the planes' metrics.
 * Planes are independent: metrics only read the fabric and the LFTs.
 */
static void metrics_one(void *arg, unsigned k)
{
	struct metrics_job *job = arg;

	if (k < job->n_refs) {
		struct sm_dr_plane *p = &job->d->run.planes[job->ref_plane[k]];
		p->have_ref = !sm_dr_reference(&p->shape, job->o, &p->ref, p->ref_why, sizeof(p->ref_why));
		return;
	}
	unsigned i = k - job->n_refs;
	struct sm_dr_plane *p = &job->d->run.planes[i];
	if (!p->routed)
		return;
	job->rc[i] = sm_metrics_compute(job->d->f, i, job->d->lfts[i], job->o, &p->m);
	if (!job->rc[i])
		p->have_metrics = 1;
}

/* Shapes of the routed planes; one reference job per distinct shape. 0 or -ENOMEM. */
static int shapes(struct sm_dryrun *d, struct metrics_job *job)
{
	for (unsigned i = 0; i < d->run.n_planes; i++) {
		struct sm_dr_plane *p = &d->run.planes[i];
		int rc, first = 1;
		if (!p->routed)
			continue;
		rc = sm_dr_shape_find(d->f, i, &p->shape);
		if (rc)
			return rc;
		if (p->shape.tight_leaf != SM_NONE)
			snprintf(p->tight_leaf, sizeof(p->tight_leaf), "%s", d->f->nodes[p->shape.tight_leaf].desc);
		if (p->shape.tight_leaf != SM_NONE && p->shape.cut.last_leaf != SM_NONE)
			snprintf(p->tight_last, sizeof(p->tight_last), "%s", d->f->nodes[p->shape.cut.last_leaf].desc);
		if (p->shape.bis_complete && p->shape.bis.first_leaf != SM_NONE)
			snprintf(p->bis_leaf, sizeof(p->bis_leaf), "%s", d->f->nodes[p->shape.bis.first_leaf].desc);
		if (p->shape.cut.ud_from != SM_NONE) {
			snprintf(p->ud_from, sizeof(p->ud_from), "%s", d->f->nodes[p->shape.cut.ud_from].desc);
			snprintf(p->ud_to, sizeof(p->ud_to), "%s", d->f->nodes[p->shape.cut.ud_to].desc);
		}
		for (unsigned j = 0; j < job->n_refs && first; j++)
			first = !sm_dr_shape_same(&d->run.planes[job->ref_plane[j]].shape, &p->shape);
		if (p->shape.found && first)
			job->ref_plane[job->n_refs++] = i;
	}
	return 0;
}

/* Planes of one shape share the reference their shape's job computed. */
static void share_references(struct sm_dr_run *run, const struct metrics_job *job)
{
	for (unsigned i = 0; i < run->n_planes; i++)
		for (unsigned k = 0; k < job->n_refs; k++) {
			const struct sm_dr_plane *src = &run->planes[job->ref_plane[k]];
			struct sm_dr_plane *p = &run->planes[i];
			if (p != src && sm_dr_shape_same(&src->shape, &p->shape)) {
				p->have_ref = src->have_ref;
				p->ref = src->ref;
				memcpy(p->ref_why, src->ref_why, sizeof(p->ref_why));
			}
		}
}

static void name_of(char *dst, const char *src)
{
	snprintf(dst, SM_DESC_MAX + 1, "%s", src);
}

/* Planes compared with each other, and the names of the hosts and leaves the counts are about. */
static int health(struct sm_dryrun *d)
{
	struct sm_hosts *hosts = NULL;
	int rc = sm_hosts_build(d->f, &hosts);

	if (!rc)
		rc = sm_planes_health(d->f, hosts, &d->run.health);
	d->run.have_health = !rc;
	for (unsigned p = 0; !rc && p < d->run.health.n_planes; p++) {
		const struct sm_plane_health *h = &d->run.health.p[p];
		struct sm_dr_health_names *nm = &d->run.health_names[p];
		for (unsigned e = 0; e < SM_HEALTH_EXAMPLES; e++) {
			if (h->ex_no_nic[e] != SM_NONE)
				name_of(nm->no_nic[e], hosts->h[h->ex_no_nic[e]].name);
			if (h->ex_below[e] != SM_NONE)
				name_of(nm->below[e], hosts->h[h->ex_below[e]].name);
			if (h->ex_thin_leaf[e] != SM_NONE)
				name_of(nm->thin_leaf[e], d->f->nodes[h->ex_thin_leaf[e]].desc);
		}
	}
	sm_hosts_free(hosts);
	return rc;
}

int sm_dryrun_metrics(struct sm_dryrun *d, unsigned n_random, uint64_t seed)
{
	double t0 = sm_mono_sec();
	struct sm_metrics_opts o;
	struct metrics_job job;
	int rc = 0;

	memset(&o, 0, sizeof(o));
	o.n_random = n_random;
	o.seed = seed;
	d->run.seed = seed;
	d->run.n_random = n_random ? n_random : 100;
	memset(&job, 0, sizeof(job));
	job.d = d;
	job.o = &o;
	rc = shapes(d, &job);
	if (!rc)
		sm_parallel_for(job.n_refs + d->run.n_planes, metrics_one, &job);
	for (unsigned i = 0; i < d->run.n_planes && !rc; i++)
		rc = job.rc[i];
	if (!rc)
		share_references(&d->run, &job);
	/* planes compared with each other: what each lacks, the share it offers hosts */
	if (!rc && d->run.n_planes > 1)
		rc = health(d);
	d->run.t.metrics = sm_mono_sec() - t0;
	return rc;
}
