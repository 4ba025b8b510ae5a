/* SPDX-License-Identifier: MIT */
/*
 * DOC: engine registry, plugin loader and chain (see registry.h)
 *
 * Owns: the built-in table (static), the list of dlopen()ed plugins (one
 * handle + descriptor each, freed by sm_registry_free) and, per chain, each
 * engine's init state. Data flow: name -> descriptor (built-in table, loaded
 * plugins, PLUGINDIR/NAME.so) -> init(config subtree) -> route() per plane
 * -> sm_validate() -> accepted LFTs or the next engine. The planes an
 * engine takes one by one are routed and validated in parallel
 * (sm_parallel_for, one thread per CPU; engines are pure, validation only
 * reads): each job writes only its own plane's result and LFT slot, and
 * results are gathered in plane order, so the outcome is that of a
 * sequential run.
 *
 * Invariant: every descriptor reachable from a registry passed
 * sm_engine_check_ops(); plugin names are unique and never shadow a
 * built-in.
 */
#include "config.h"
#include "lib/err.h"
#include "lib/clock.h"
#include "routing/registry.h"
#include "routing/reroute.h"
#include "routing/reroute_nodes.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>
#include <yaml.h>

#ifndef SMD_PLUGINDIR
#define SMD_PLUGINDIR "/usr/lib/smd/plugins"
#endif

static const struct sm_engine_ops *const builtins[] = {
	&sm_engine_minhop,
	&sm_engine_updn,
	&sm_engine_ftree,
	&sm_engine_planes,
	&sm_engine_hotpath,
	NULL,
};

struct plugin {
	void *handle;
	const struct sm_engine_ops *ops;
	char path[4200];
};

struct sm_registry {
	char plugindir[4096];
	struct plugin *plugins;
	unsigned n_plugins, cap_plugins;
};


const struct sm_engine_ops *const *sm_engine_builtins(void)
{
	return builtins;
}

const struct sm_engine_ops *sm_engine_builtin(const char *name)
{
	for (unsigned i = 0; builtins[i]; i++)
		if (!strcmp(builtins[i]->name, name))
			return builtins[i];
	return NULL;
}

struct sm_registry *sm_registry_new(const char *plugindir)
{
	struct sm_registry *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	snprintf(r->plugindir, sizeof(r->plugindir), "%s", plugindir ? plugindir : SMD_PLUGINDIR);
	return r;
}

void sm_registry_free(struct sm_registry *r)
{
	if (!r)
		return;
	for (unsigned i = 0; i < r->n_plugins; i++)
		dlclose(r->plugins[i].handle);
	free(r->plugins);
	free(r);
}

const char *sm_registry_plugindir(const struct sm_registry *r)
{
	return r->plugindir;
}

static int valid_name(const char *name)
{
	size_t n = strlen(name);
	if (!n || n > SM_ENGINE_NAME_MAX)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '-'))
			return 0;
	}
	return 1;
}

int sm_engine_check_ops(const struct sm_engine_ops *ops, char *err, size_t errlen)
{
	if (!ops) {
		sm_errf(err, errlen, "no engine descriptor");
		return -EINVAL;
	}
	if (ops->abi_version != SM_ENGINE_ABI_VERSION) {
		sm_errf(err, errlen, "engine ABI version %u, this smd needs %u",
		       (unsigned)ops->abi_version, SM_ENGINE_ABI_VERSION);
		return -EPROTO;
	}
	/* Read name and hooks only once size says they exist; later fields by sm_engine_flags(). */
	if (ops->size < SM_ENGINE_OPS_MIN_SIZE) {
		sm_errf(err, errlen, "engine descriptor is %u bytes, this smd needs at least %zu",
		       (unsigned)ops->size, SM_ENGINE_OPS_MIN_SIZE);
		return -EPROTO;
	}
	if (!ops->name || !valid_name(ops->name)) {
		sm_errf(err, errlen, "engine name is empty, longer than %d or not [A-Za-z0-9_-]",
		       SM_ENGINE_NAME_MAX);
		return -EINVAL;
	}
	if (!ops->init || !ops->free || (!ops->route && !ops->route_planes)) {
		sm_errf(err, errlen, "engine '%s' lacks a required hook (init, free, route or route_planes)",
		       ops->name);
		return -EINVAL;
	}
	return 0;
}

static const struct sm_engine_ops *find_loaded(const struct sm_registry *r, const char *name)
{
	for (unsigned i = 0; i < r->n_plugins; i++)
		if (!strcmp(r->plugins[i].ops->name, name))
			return r->plugins[i].ops;
	return NULL;
}

int sm_engine_load_plugin(struct sm_registry *r, const char *path,
			  const struct sm_engine_ops **out, char *err, size_t errlen)
{
	char why[300];
	int rc;
	if (out)
		*out = NULL;
	/*
	 * A bare "x.so" would make dlopen() search the library path: always
	 * name a file. RTLD_LOCAL: the plugin's one symbol must not leak into
	 * later lookups.
	 */
	char local[4096];
	if (!strchr(path, '/')) {
		snprintf(local, sizeof(local), "./%s", path);
		path = local;
	}
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();
		sm_errf(err, errlen, "%s: cannot load plugin: %s", path, e ? e : "unknown error");
		return -ENOENT;
	}
	dlerror();
	const struct sm_engine_ops *ops = dlsym(h, SM_ENGINE_SYMBOL);
	if (!ops) {
		sm_errf(err, errlen, "%s: not an smd engine plugin: symbol '%s' missing", path,
		       SM_ENGINE_SYMBOL);
		rc = -ENOEXEC;
		goto fail;
	}
	rc = sm_engine_check_ops(ops, why, sizeof(why));
	if (rc) {
		sm_errf(err, errlen, "%s: refused: %s", path, why);
		goto fail;
	}
	if (sm_engine_builtin(ops->name) || find_loaded(r, ops->name)) {
		sm_errf(err, errlen, "%s: refused: engine name '%s' is already taken by a %s engine", path,
		       ops->name, sm_engine_builtin(ops->name) ? "built-in" : "loaded plugin");
		rc = -EEXIST;
		goto fail;
	}
	if (r->n_plugins == r->cap_plugins) {
		unsigned cap = r->cap_plugins ? 2 * r->cap_plugins : 4;
		struct plugin *p = realloc(r->plugins, cap * sizeof(*p));
		if (!p) {
			rc = -ENOMEM;
			sm_errf(err, errlen, "%s: out of memory", path);
			goto fail;
		}
		r->plugins = p;
		r->cap_plugins = cap;
	}
	struct plugin *p = &r->plugins[r->n_plugins++];
	p->handle = h;
	p->ops = ops;
	snprintf(p->path, sizeof(p->path), "%s", path);
	if (out)
		*out = ops;
	return 0;
fail:
	dlclose(h);
	return rc;
}

static void builtin_list(char *buf, size_t len)
{
	size_t off = 0;
	buf[0] = 0;
	for (unsigned i = 0; builtins[i] && off < len; i++) {
		int n = snprintf(buf + off, len - off, "%s%s", i ? ", " : "", builtins[i]->name);
		if (n < 0)
			break;
		off += (size_t)n;
	}
}

int sm_registry_find(struct sm_registry *r, const char *name,
		     const struct sm_engine_ops **out, char *err, size_t errlen)
{
	*out = sm_engine_builtin(name);
	if (*out)
		return 0;
	*out = find_loaded(r, name);
	if (*out)
		return 0;
	char list[200];
	builtin_list(list, sizeof(list));
	if (!valid_name(name)) {
		sm_errf(err, errlen, "unknown engine '%s' (built-in: %s)", name, list);
		return -ENOENT;
	}
	char path[4200];
	snprintf(path, sizeof(path), "%s/%s.so", r->plugindir, name);
	FILE *fp = fopen(path, "rb");
	if (!fp) {
		sm_errf(err, errlen, "unknown engine '%s' (built-in: %s; no plugin %s)", name, list, path);
		return -ENOENT;
	}
	fclose(fp);
	const struct sm_engine_ops *ops;
	int rc = sm_engine_load_plugin(r, path, &ops, err, errlen);
	if (rc)
		return rc;
	if (strcmp(ops->name, name)) {
		/* Loaded under another name: keep it registered, but do not pretend. */
		sm_errf(err, errlen, "%s: plugin calls itself '%s', not '%s'", path, ops->name, name);
		return -EINVAL;
	}
	*out = ops;
	return 0;
}

/* ---- chain ---- */

void sm_chain_free(struct sm_chain *c)
{
	if (!c)
		return;
	for (unsigned i = 0; i < c->n; i++)
		if (c->e[i].ops && c->e[i].ops->free)
			c->e[i].ops->free(c->e[i].state);
	free(c);
}

int sm_chain_new(struct sm_registry *r, const char *spec, yaml_document_t *doc,
		 yaml_node_t *config_map, struct sm_chain **out, char *err, size_t errlen)
{
	*out = NULL;
	if (!spec) {
		sm_errf(err, errlen, "no routing engine given");
		return -EINVAL;
	}
	struct sm_chain *c = calloc(1, sizeof(*c));
	if (!c) {
		sm_errf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	int rc = 0;
	const char *p = spec;
	for (;;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		while (len && (*p == ' ' || *p == '\t')) {
			p++;
			len--;
		}
		while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
			len--;
		if (!len) {
			sm_errf(err, errlen, "engine list '%s': empty engine name", spec);
			rc = -EINVAL;
			goto fail;
		}
		if (len > SM_ENGINE_NAME_MAX) {
			sm_errf(err, errlen, "engine list '%s': name '%.*s...' too long", spec,
			       SM_ENGINE_NAME_MAX, p);
			rc = -EINVAL;
			goto fail;
		}
		if (c->n == SM_CHAIN_MAX) {
			sm_errf(err, errlen, "engine list '%s': more than %d engines", spec, SM_CHAIN_MAX);
			rc = -EINVAL;
			goto fail;
		}
		char name[SM_ENGINE_NAME_MAX + 1];
		memcpy(name, p, len);
		name[len] = 0;
		const struct sm_engine_ops *ops;
		rc = sm_registry_find(r, name, &ops, err, errlen);
		if (rc)
			goto fail;
		for (unsigned i = 0; i < c->n; i++)
			if (c->e[i].ops == ops) {
				sm_errf(err, errlen, "engine list '%s': '%s' listed twice", spec, name);
				rc = -EINVAL;
				goto fail;
			}
		c->e[c->n++].ops = ops;
		if (!end)
			break;
		p = end + 1;
	}
	for (unsigned i = 0; i < c->n; i++) {
		const struct sm_engine_ops *ops = c->e[i].ops;
		yaml_node_t *sub = config_map ? sm_yaml_map_get(doc, config_map, ops->name) : NULL;
		char why[300] = "";
		rc = ops->init(&c->e[i].state, sub ? doc : NULL, sub, why, sizeof(why));
		if (rc) {
			c->e[i].state = NULL;
			/* engines whose init failed must not be freed: they own nothing */
			c->n = i;
			if (rc > 0)
				rc = -EINVAL;
			if (strncmp(why, ops->name, strlen(ops->name)))
				sm_errf(err, errlen, "%s: %s", ops->name, why[0] ? why : "init failed");
			else
				sm_errf(err, errlen, "%s", why);
			goto fail;
		}
	}
	*out = c;
	return 0;
fail:
	sm_chain_free(c);
	return rc;
}

void sm_chain_describe(const struct sm_chain *c, char *buf, size_t len)
{
	size_t off = 0;
	if (!len)
		return;
	buf[0] = 0;
	for (unsigned i = 0; c && i < c->n && off < len; i++) {
		int n = snprintf(buf + off, len - off, "%s%s", i ? "," : "", c->e[i].ops->name);
		if (n < 0)
			break;
		off += (size_t)n;
	}
}

static void result_init(struct sm_plane_result *res, unsigned plane)
{
	memset(res, 0, sizeof(*res));
	res->plane = plane;
	res->rc = -ENOENT;
	res->engine_index = -1;
	res->val.credit_loop = -1;
}

/* Validate an engine's output; 0 accepted, -EBADMSG refused (why filled). changed: reroute()'s account. */
static int accept_output(struct sm_chain *c, unsigned idx, const struct sm_fabric *f, unsigned plane,
			 const struct sm_lfts *l, struct sm_chain_attempt *a, struct sm_validation *v,
			 const uint8_t *changed)
{
	double t0 = sm_mono_sec();
	/*
	 * The incremental check walks only the LIDs a reroute may have changed
	 * and cannot look for credit loops (that needs every destination's
	 * routes). Only an engine that promises none (SM_ENGINE_F_NO_CREDIT_LOOP:
	 * ftree, updn) may skip it; any other (minhop as a fallback, a plugin)
	 * is checked in full.
	 */
	bool no_loop = sm_engine_flags(c->e[idx].ops) & SM_ENGINE_F_NO_CREDIT_LOOP;
	struct sm_validate_prev prev = c->prev ? *c->prev : (struct sm_validate_prev){ 0 };
	prev.changed = changed;
	int rc = c->prev && no_loop ? sm_validate_incremental(f, plane, l, &prev, c->flags, v)
				    : sm_validate(f, plane, l, c->flags, v);
	a->validate_seconds = sm_mono_sec() - t0;
	if (rc) {
		snprintf(a->why, sizeof(a->why), "validation could not run: %s", strerror(-rc));
		return rc;
	}
	if (!sm_validate_ok(v, c->flags)) {
		snprintf(a->why, sizeof(a->why), "output failed validation: %.280s", v->msg);
		return -EBADMSG;
	}
	return 0;
}

static double thread_cpu_sec(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/*
 * The engine's reroute() from c->reroute_from when f is that fabric minus
 * cables: 0 with *lp the tables and rr->changed filled, 1 when the engine
 * must route in full (res->reroute_why says why), a negative errno as from
 * route() (ctx->msg). When hosts went away or came back (reroute_nodes.h),
 * rn holds the fabrics in one numbering: the engine routes rn->fp (gone;
 * *lp laid out for it, sm_reroute_relayout() once accepted) or f from
 * rn->pfp (back, no cable lost).
 */
static int reroute(struct sm_chain *c, unsigned idx, struct sm_route_ctx *ctx, struct sm_lfts **lp,
		   struct sm_reroute *rr, struct sm_plane_result *res, struct sm_reroute_renum *rn)
{
	int (*hook)(void *, struct sm_route_ctx *) = sm_engine_reroute(c->e[idx].ops);
	const struct sm_validate_prev *p = c->reroute_from;
	const struct sm_fabric *f = ctx->fabric;
	if (!hook || !p || !p->f || !p->l || p->l->plane != ctx->plane)
		return 1;
	/* same nodes and plane LIDs: sm_lfts_new() would lay the tables out as p->l */
	if (!sm_reroute_same_numbering(f, p->f, ctx->plane, NULL, p->l)) {
		int k = sm_reroute_renum_begin(rn, f, p->f, p->l, ctx->plane);
		if (k <= 0) {
			snprintf(res->reroute_why, sizeof(res->reroute_why), "%s",
				 k ? strerror(-k) : "nodes, ports or LIDs changed");
			return k < 0 ? k : 1;
		}
		f = rn->fp ? rn->fp : f;
		p = rn->pfp ? &rn->vprev : p;
	}
	int rc = rn->pfp ? 1 : sm_reroute_removed(f, p->f, (uint32_t **)&rr->removed, &rr->n_removed);
	if (rc <= 0) {
		snprintf(res->reroute_why, sizeof(res->reroute_why), "%s", rc ? strerror(-rc) : "a cable appeared");
		return rc < 0 ? rc : 1;
	}
	rr->prev_fabric = p->f;
	rr->prev = p->l;
	rr->changed = calloc((size_t)p->l->top_lid + 1, 1);
	struct sm_lfts *l = rr->changed ? sm_lfts_dup(p->l) : NULL;
	if (!l)
		return -ENOMEM;
	ctx->out = l;
	ctx->outs = lp;
	ctx->reroute = rr;
	const struct sm_fabric *cf = ctx->fabric;
	ctx->fabric = f;
	rc = hook(c->e[idx].state, ctx);
	ctx->fabric = cf;
	ctx->reroute = NULL;
	if (rc == -EAGAIN) {
		ctx->msg[sizeof(ctx->msg) - 1] = 0;
		snprintf(res->reroute_why, sizeof(res->reroute_why), "%s", ctx->msg[0] ? ctx->msg : "the engine declined");
		ctx->msg[0] = 0;
		sm_lfts_free(l);
		free(rr->changed);
		rr->changed = NULL;
		return 1;
	}
	*lp = l;
	return rc;
}

/* One engine on one plane; the caller has filled a->engine. */
static int try_engine(struct sm_chain *c, unsigned idx, const struct sm_fabric *f, unsigned plane,
		      const struct sm_profile *profile, struct sm_lfts **out, struct sm_chain_attempt *a,
		      struct sm_plane_result *res)
{
	const struct sm_engine_ops *ops = c->e[idx].ops;
	struct sm_lfts *l = NULL;
	struct sm_route_ctx ctx = {
		.fabric = f, .profile = profile, .plane = plane,
		.n_planes = 1, .planes = &plane, .outs = &l,
	};
	struct sm_reroute rr = { 0 };
	struct sm_reroute_renum rn = { 0 }; /* hosts went away or came back */
	double t0 = sm_mono_sec(), c0 = thread_cpu_sec();
	int rc = reroute(c, idx, &ctx, &l, &rr, res, &rn);
	free((void *)rr.removed);
	if (rc == 0) {
		a->seconds = sm_mono_sec() - t0;
		a->cpu_seconds = thread_cpu_sec() - c0;
		ctx.msg[sizeof(ctx.msg) - 1] = 0;
		const struct sm_validate_prev *vp = c->prev;
		if (vp && rn.pfp)
			c->prev = &rn.vprev; /* validated against the previous fabric in f's numbering */
		rc = accept_output(c, idx, rn.fp ? rn.fp : f, plane, l, a, &res->val, rr.changed);
		c->prev = vp;
		if (!rc && rn.fp && sm_reroute_relayout(l, f, plane))
			rc = -ENOMEM; /* the tables for f: refused below, routed in full */
		int renumbered = rn.fp || rn.pfp;
		sm_reroute_renum_end(&rn);
		if (!rc) {
			res->rerouted = 1;
			for (uint32_t lid = 0; lid <= l->top_lid; lid++)
				res->reroute_lids += rr.changed[lid];
			/* the program phase finds the tables it started from by node index: not after a renumbering */
			if (c->reroute_changed && !renumbered)
				*c->reroute_changed = rr.changed;
			else
				free(rr.changed);
			snprintf(res->notes, sizeof(res->notes), "%s", ctx.msg);
			*out = l;
			return a->rc = 0;
		}
		/* correctness first: the incremental tables failed, route in full */
		snprintf(res->reroute_why, sizeof(res->reroute_why), "incremental result refused: %.200s", a->why);
		a->why[0] = 0;
		ctx.msg[0] = 0;
		rc = 1;
	}
	sm_reroute_renum_end(&rn);
	free(rr.changed);
	if (rc > 0) {
		sm_lfts_free(l);
		l = sm_lfts_new(f, plane);
		if (!l) {
			snprintf(a->why, sizeof(a->why), "out of memory");
			return a->rc = -ENOMEM;
		}
		ctx.out = l;
		ctx.outs = &l;
		rc = ops->route ? ops->route(c->e[idx].state, &ctx) : ops->route_planes(c->e[idx].state, &ctx);
	}
	a->seconds = sm_mono_sec() - t0;
	a->cpu_seconds = thread_cpu_sec() - c0;
	ctx.msg[sizeof(ctx.msg) - 1] = 0;
	if (rc) {
		if (rc > 0)
			rc = -EIO;  /* engines must return negative errnos; do not trust a stray value */
		snprintf(a->why, sizeof(a->why), "engine failed (%s): %s", strerror(-rc),
			 ctx.msg[0] ? ctx.msg : "no message");
		sm_lfts_free(l);
		return a->rc = rc;
	}
	rc = accept_output(c, idx, f, plane, l, a, &res->val, NULL);
	if (rc) {
		sm_lfts_free(l);
		return a->rc = rc;
	}
	snprintf(res->notes, sizeof(res->notes), "%s", ctx.msg);
	*out = l;
	return a->rc = 0;
}

static void result_accept(struct sm_plane_result *res, struct sm_chain *c, unsigned idx,
			  const struct sm_chain_attempt *a)
{
	res->rc = 0;
	res->engine_index = (int)idx;
	res->engine = c->e[idx].ops->name;
	res->route_seconds = a->seconds;
	res->route_cpu_seconds = a->cpu_seconds;
	res->validate_seconds = a->validate_seconds;
}

int sm_route_chain(struct sm_chain *c, const struct sm_fabric *f, unsigned plane,
		   const struct sm_profile *profile, struct sm_lfts **out, struct sm_plane_result *res)
{
	*out = NULL;
	result_init(res, plane);
	if (plane >= f->n_planes || plane >= SM_MAX_PLANES) {
		res->rc = -EINVAL;
		return -EINVAL;
	}
	double t0 = sm_mono_sec();
	int rc = -ENOENT;
	for (unsigned i = 0; i < c->n; i++) {
		struct sm_chain_attempt *a = &res->attempts[res->n_attempts++];
		a->engine = c->e[i].ops->name;
		rc = try_engine(c, i, f, plane, profile, out, a, res);
		if (!rc) {
			result_accept(res, c, i, a);
			break;
		}
		if (rc == -ENOMEM)
			break;
	}
	res->total_seconds = sm_mono_sec() - t0;
	res->rc = rc;
	return rc;
}

/* One engine over the planes still to route; job t touches only plane idx[t]'s slots. */
struct plane_jobs {
	struct sm_chain *c;
	unsigned engine;
	const struct sm_fabric *f;
	const struct sm_profile *profile;
	const unsigned *todo, *idx;
	struct sm_lfts **outs;       /* per chain plane */
	struct sm_plane_result *res;
	struct sm_lfts **ls;         /* route_planes() outputs, per job */
	int rc[SM_MAX_PLANES];       /* per job */
};

static void route_one(void *arg, unsigned t)
{
	struct plane_jobs *pj = arg;
	struct sm_plane_result *r = &pj->res[pj->idx[t]];
	struct sm_chain_attempt *a = &r->attempts[r->n_attempts++];

	a->engine = pj->c->e[pj->engine].ops->name;
	pj->rc[t] = try_engine(pj->c, pj->engine, pj->f, pj->todo[t], pj->profile, &pj->outs[pj->idx[t]],
			       a, r);
}

static void validate_one(void *arg, unsigned t)
{
	struct plane_jobs *pj = arg;
	struct sm_plane_result *r = &pj->res[pj->idx[t]];

	pj->rc[t] = accept_output(pj->c, pj->engine, pj->f, pj->todo[t], pj->ls[t],
				  &r->attempts[r->n_attempts - 1], &r->val, NULL);
}

int sm_route_chain_planes(struct sm_chain *c, const struct sm_fabric *f, const unsigned *planes,
			  unsigned n_planes, const struct sm_profile *profile, struct sm_lfts **outs,
			  struct sm_plane_result *res)
{
	uint8_t stop[SM_MAX_PLANES] = { 0 };  /* bad plane number or out of memory */
	if (n_planes > SM_MAX_PLANES)
		return -EINVAL;
	for (unsigned k = 0; k < n_planes; k++) {
		outs[k] = NULL;
		result_init(&res[k], planes[k]);
		if (planes[k] >= f->n_planes || planes[k] >= SM_MAX_PLANES) {
			res[k].rc = -EINVAL;
			stop[k] = 1;
		}
	}
	double t_all = sm_mono_sec();
	for (unsigned i = 0; i < c->n; i++) {
		const struct sm_engine_ops *ops = c->e[i].ops;
		unsigned todo[SM_MAX_PLANES], idx[SM_MAX_PLANES], n_todo = 0;
		for (unsigned k = 0; k < n_planes; k++)
			if (!outs[k] && !stop[k]) {
				todo[n_todo] = planes[k];
				idx[n_todo++] = k;
			}
		if (!n_todo)
			break;
		struct plane_jobs pj = {
			.c = c, .engine = i, .f = f, .profile = profile, .todo = todo, .idx = idx,
			.outs = outs, .res = res,
		};
		if (!ops->route_planes || n_todo == 1) {
			/* engines are pure (see registry.h): planes route and validate at once */
			sm_parallel_for(n_todo, route_one, &pj);
			for (unsigned t = 0; t < n_todo; t++) {
				struct sm_plane_result *r = &res[idx[t]];
				int rc = pj.rc[t];
				r->rc = rc;
				if (!rc)
					result_accept(r, c, i, &r->attempts[r->n_attempts - 1]);
				else if (rc == -ENOMEM)
					stop[idx[t]] = 1;
			}
			continue;
		}
		/* All remaining planes at once. */
		struct sm_lfts *ls[SM_MAX_PLANES] = { 0 };
		int rc = 0;
		for (unsigned t = 0; t < n_todo; t++)
			if (!(ls[t] = sm_lfts_new(f, todo[t])))
				rc = -ENOMEM;
		struct sm_route_ctx ctx = {
			.fabric = f, .profile = profile, .plane = todo[0], .out = ls[0],
			.n_planes = n_todo, .planes = todo, .outs = ls,
		};
		double t0 = sm_mono_sec();
		if (!rc) {
			rc = ops->route_planes(c->e[i].state, &ctx);
			if (rc > 0)
				rc = -EIO;
		}
		double secs = sm_mono_sec() - t0;
		ctx.msg[sizeof(ctx.msg) - 1] = 0;
		for (unsigned t = 0; t < n_todo; t++) {
			struct sm_plane_result *r = &res[idx[t]];
			struct sm_chain_attempt *a = &r->attempts[r->n_attempts++];
			a->engine = ops->name;
			a->seconds = secs / n_todo;  /* the engine ran the planes together */
		}
		pj.ls = ls;
		if (!rc)
			sm_parallel_for(n_todo, validate_one, &pj);
		for (unsigned t = 0; t < n_todo; t++) {
			struct sm_plane_result *r = &res[idx[t]];
			struct sm_chain_attempt *a = &r->attempts[r->n_attempts - 1];
			if (rc) {
				snprintf(a->why, sizeof(a->why), "engine failed (%s): %s", strerror(-rc),
					 ctx.msg[0] ? ctx.msg : "no message");
				r->rc = a->rc = rc;
				sm_lfts_free(ls[t]);
				continue;
			}
			int vr = pj.rc[t];
			r->rc = a->rc = vr;
			if (vr) {
				sm_lfts_free(ls[t]);
				continue;
			}
			snprintf(r->notes, sizeof(r->notes), "%s", ctx.msg);
			outs[idx[t]] = ls[t];
			result_accept(r, c, i, a);
		}
	}
	double total = sm_mono_sec() - t_all;
	int first = 0;
	for (unsigned k = 0; k < n_planes; k++) {
		double sum = 0;
		for (unsigned a = 0; a < res[k].n_attempts; a++)
			sum += res[k].attempts[a].seconds + res[k].attempts[a].validate_seconds;
		res[k].total_seconds = sum < total ? sum : total;
		if (res[k].rc && !first)
			first = res[k].rc;
	}
	return first;
}

void sm_plane_result_format(const struct sm_plane_result *res, char *buf, size_t len)
{
	size_t off = 0;
	int n;
	if (!len)
		return;
	buf[0] = 0;
#define OUT(...)                                                                  \
	do {                                                                      \
		if (off < len && (n = snprintf(buf + off, len - off, __VA_ARGS__)) > 0) \
			off += (size_t)n;                                         \
	} while (0)
	if (!res->rc)
		OUT("plane %u: routed by %s in %.1f ms (validated in %.1f ms)", res->plane, res->engine,
		    res->route_seconds * 1e3, res->validate_seconds * 1e3);
	else
		OUT("plane %u: not routed: every engine failed (%s)", res->plane, strerror(-res->rc));
	for (unsigned i = 0; i < res->n_attempts; i++) {
		const struct sm_chain_attempt *a = &res->attempts[i];
		if (!a->rc)
			continue;
		OUT("\n  %s passed over after %.1f ms: %s", a->engine, (a->seconds + a->validate_seconds) * 1e3,
		    a->why);
	}
	if (!res->rc && res->notes[0])
		OUT("\n  %s: %s", res->engine, res->notes);
#undef OUT
}
