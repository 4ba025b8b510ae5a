/* SPDX-License-Identifier: MIT */
/*
 * DOC: "planes" — plane-aware hybrid static routing for multi-plane fat trees
 *
 * Input: all planes of a fabric at once (route_planes), each plane a fat
 * tree, and optionally a traffic profile. Per plane:
 *   1. static routes: the ftree engine's LFTs (shift-permutation
 *      congestion-free on a full tree, degraded trees kept as fat trees);
 *   2. decorrelation: plane p relabels the upper switches seen from each
 *      leaf by a rotation of r(p) positions, r(p) = (p mod k) * stride +
 *      (p div k) mod stride, k = S / stride, S upper switches, stride
 *      S / 8 by default: planes 0-7 are S/8 apart, planes 8 and up fall
 *      in between, all distinct while p < S. It depends on the plane
 *      index alone, so a dry-run and the live SM route a plane alike. The destination that
 *      ftree sends up to upper switch number i from a leaf goes to upper
 *      switch number (i + r(p)) mod S instead. A uniform relabelling of the
 *      upper switches maps every link's flow set onto another link's, so
 *      every congestion property of ftree is kept, while the same host pair
 *      rides a different spine index in every plane: one failure pattern
 *      (a spine position, a cabling batch) no longer hits the same pairs in
 *      every plane. On a degraded tree an entry is rotated only when the
 *      new upper switch is cabled to the leaf and its own route delivers
 *      the destination without coming back (walked hop by hop); otherwise
 *      ftree's entry stays;
 *   3. hot flows: with a profile, the plane's share of it (the profile
 *      loader already maps cross-plane traffic — rail i to rail j rides
 *      plane j after the in-host hop — onto the destination plane) is
 *      pinned with the hot-path algorithm (hotpath.h) on top of 2.
 * Only entries of endpoint LIDs are rotated or pinned; switch LIDs keep
 * ftree's routes. Every route stays up*-then-down*, so no credit loop can
 * appear; the chain validates the result anyway.
 *
 * Options (YAML subtree `planes:`): decorrelate (bool, default true),
 * stride (int, 0 = auto), pin (bool, default true), top_k, share (as the
 * hotpath engine).
 */
#include "routing/engine.h"
#include "routing/graph.h"
#include "routing/hotpath/hotpath.h"
#include "routing/metrics.h"
#include "routing/builtin.h"
#include "routing/util.h"
#include "model/profile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

extern const struct sm_engine_ops sm_engine_ftree;

struct planes_state {
	int decorrelate;
	unsigned stride;
	int pin;
	struct sm_hotpath_opts hp;
	void *ftree_state;
};

struct planes_stats {
	unsigned rotation;        /* positions */
	unsigned uppers;          /* upper switches in the rotation list */
	uint64_t rotated;         /* entries moved */
	uint64_t kept;            /* up entries kept (rotation target unusable) */
	int per_leaf;             /* rotation over each leaf's own upper list (3-level trees) */
	int reverted;             /* rotation undone: it would have cost quality (degraded plane) */
	int pinned;               /* hot flows of the profile pinned */
};

static int parse_uint(yaml_node_t *v, unsigned long max, unsigned long *out)
{
	char *end;
	if (!v || v->type != YAML_SCALAR_NODE)
		return -EINVAL;
	errno = 0;
	unsigned long x = strtoul((const char *)v->data.scalar.value, &end, 10);
	if (errno || *end || end == (char *)v->data.scalar.value || x > max)
		return -EINVAL;
	*out = x;
	return 0;
}

static int parse_bool(yaml_node_t *v, int *out)
{
	if (!v || v->type != YAML_SCALAR_NODE)
		return -EINVAL;
	const char *s = (const char *)v->data.scalar.value;
	if (!strcmp(s, "true") || !strcmp(s, "yes") || !strcmp(s, "on") || !strcmp(s, "1"))
		*out = 1;
	else if (!strcmp(s, "false") || !strcmp(s, "no") || !strcmp(s, "off") || !strcmp(s, "0"))
		*out = 0;
	else
		return -EINVAL;
	return 0;
}

static int planes_init(void **state, yaml_document_t *doc, yaml_node_t *node, char *err, size_t errlen)
{
	static const char *const known[] = { "decorrelate", "stride", "pin", "top_k", "share", NULL };
	struct planes_state *s = calloc(1, sizeof(*s));
	int rc;

	if (!s)
		return -ENOMEM;
	s->decorrelate = 1;
	s->pin = 1;
	sm_hotpath_opts_init(&s->hp);
	if (node) {
		rc = sm_yaml_check_keys(doc, node, "planes", known, err, errlen);
		if (rc)
			goto fail;
		yaml_node_t *v;
		unsigned long x;
		rc = -EINVAL;
		if ((v = sm_yaml_map_get(doc, node, "decorrelate")) && parse_bool(v, &s->decorrelate)) {
			snprintf(err, errlen, "planes: config line %lu: decorrelate must be true or false",
				 (unsigned long)v->start_mark.line + 1);
			goto fail;
		}
		if ((v = sm_yaml_map_get(doc, node, "pin")) && parse_bool(v, &s->pin)) {
			snprintf(err, errlen, "planes: config line %lu: pin must be true or false",
				 (unsigned long)v->start_mark.line + 1);
			goto fail;
		}
		if ((v = sm_yaml_map_get(doc, node, "stride"))) {
			if (parse_uint(v, 4096, &x)) {
				snprintf(err, errlen, "planes: config line %lu: stride must be an integer 0-4096",
					 (unsigned long)v->start_mark.line + 1);
				goto fail;
			}
			s->stride = (unsigned)x;
		}
		if ((v = sm_yaml_map_get(doc, node, "top_k"))) {
			if (parse_uint(v, 100000000, &x)) {
				snprintf(err, errlen, "planes: config line %lu: top_k must be a non-negative integer",
					 (unsigned long)v->start_mark.line + 1);
				goto fail;
			}
			s->hp.top_k = (unsigned)x;
		}
		if ((v = sm_yaml_map_get(doc, node, "share"))) {
			char *end;
			double d = v->type == YAML_SCALAR_NODE ? strtod((const char *)v->data.scalar.value, &end) : -1;
			if (v->type != YAML_SCALAR_NODE || *end || !(d > 0 && d <= 1)) {
				snprintf(err, errlen, "planes: config line %lu: share must be a number in (0, 1]",
					 (unsigned long)v->start_mark.line + 1);
				goto fail;
			}
			s->hp.share = d;
		}
	}
	rc = sm_engine_ftree.init(&s->ftree_state, NULL, NULL, err, errlen);
	if (rc)
		goto fail;
	*state = s;
	return 0;
fail:
	free(s);
	return rc;
}

static void planes_free(void *state)
{
	struct planes_state *s = state;
	if (!s)
		return;
	sm_engine_ftree.free(s->ftree_state);
	free(s);
}

/*
 * Does the route to `lid` from switch `start` deliver to dst_port along an
 * up*-then-down* path (by switch level: distance from the nearest leaf)?
 * Entered from a leaf going up, so an up hop after a down hop, a lateral
 * hop, or a visit to `avoid` (the leaf we came from) disqualifies it.
 */
static int delivers(const struct sm_fabric *f, const struct sm_lfts *l, const uint16_t *level,
		    uint32_t start, uint32_t avoid, uint16_t lid, uint32_t dst_port)
{
	uint32_t n = start;
	int down = 0;
	for (unsigned hop = 0; hop < 16; hop++) {
		if (n == avoid)
			return 0;
		uint8_t p = sm_lfts_get(l, n, lid);
		if (p == SM_LFT_NONE || p == 0 || p > f->nodes[n].nports)
			return 0;
		const struct sm_port *pt = sm_port(f, n, p);
		if (pt->peer_node == SM_NONE)
			return 0;
		uint32_t next = pt->peer_node;
		if (f->nodes[next].type != SM_NODE_SWITCH)
			return sm_port_index(f, next, pt->peer_port) == dst_port;
		uint16_t a = level[l->slot_of_node[n]], b = level[l->slot_of_node[next]];
		if (b > a && down)
			return 0;
		if (b == a)
			return 0;
		if (b < a)
			down = 1;
		n = next;
	}
	return 0;
}

/* level[s] = switch-link distance from the nearest leaf (switch with endpoints). */
static void leaf_levels(const struct sm_graph *g, uint16_t *level, uint32_t *queue)
{
	uint32_t head = 0, tail = 0;
	for (uint32_t s = 0; s < g->n_sw; s++) {
		level[s] = SM_GRAPH_INF;
		if (g->host_off[s + 1] > g->host_off[s])
			level[s] = 0, queue[tail++] = s;
	}
	while (head < tail) {
		uint32_t s = queue[head++];
		for (uint32_t e = g->adj_off[s]; e < g->adj_off[s + 1]; e++) {
			uint32_t u = g->adj[e].peer;
			if (level[u] == SM_GRAPH_INF) {
				level[u] = (uint16_t)(level[s] + 1);
				queue[tail++] = u;
			}
		}
	}
}

/*
 * Rotate the upper switches of every leaf by `rot` positions (see DOC).
 * The rotation list is the set of all upper neighbours of leaves when every
 * leaf sees (nearly) all of them (2-level trees), else each leaf's own list.
 */
static int rotate_plane(const struct sm_fabric *f, unsigned plane, struct sm_lfts *l, unsigned nplanes,
			unsigned stride, struct planes_stats *st, char *msg, size_t msglen)
{
	struct sm_graph *g = NULL;
	uint32_t *upper_idx = NULL, *uppers = NULL, *list = NULL, *pos_of = NULL, *lstart = NULL, *lcnt = NULL;
	uint16_t *level = NULL;
	int8_t *memo = NULL;
	uint32_t *tgt = NULL;    /* [upper slot]: its rotation target, for the current leaf */     /* [upper slot][dest]: -1 unknown, 0/1 delivers up-then-down */
	int rc = sm_graph_build(f, plane, &g);
	if (rc)
		return rc;
	uint32_t n = g->n_sw;
	upper_idx = malloc(((size_t)n + 1) * sizeof(*upper_idx));
	uppers = malloc(((size_t)n + 1) * sizeof(*uppers));
	list = malloc(((size_t)n + 1) * sizeof(*list));
	pos_of = malloc(((size_t)n + 1) * sizeof(*pos_of));
	lstart = calloc((size_t)n + 1, sizeof(*lstart));
	lcnt = calloc((size_t)n + 1, sizeof(*lcnt));
	level = malloc(((size_t)n + 1) * sizeof(*level));
	memo = malloc((size_t)n * g->n_dests + 1);
	tgt = malloc(((size_t)n + 1) * sizeof(*tgt));
	if (!upper_idx || !uppers || !list || !pos_of || !lstart || !lcnt || !level || !memo || !tgt) {
		rc = -ENOMEM;
		goto out;
	}
#define IS_LEAF(s) (g->host_off[(s) + 1] > g->host_off[(s)])
	for (uint32_t s = 0; s < n; s++)
		upper_idx[s] = pos_of[s] = SM_NONE;
	uint32_t n_up = 0, max_deg = 0;
	for (uint32_t s = 0; s < n; s++) {
		if (!IS_LEAF(s))
			continue;
		uint32_t deg = 0, last = SM_NONE;
		for (uint32_t e = g->adj_off[s]; e < g->adj_off[s + 1]; e++) {
			uint32_t u = g->adj[e].peer;
			if (IS_LEAF(u) || u == last)
				continue;
			last = u;
			deg++;
			if (upper_idx[u] == SM_NONE)
				upper_idx[u] = 0, uppers[n_up++] = u;
		}
		if (deg > max_deg)
			max_deg = deg;
	}
	/* uppers[] in slot order: stable numbering */
	uint32_t k = 0;
	for (uint32_t s = 0; s < n; s++)
		if (upper_idx[s] != SM_NONE)
			uppers[k] = s, upper_idx[s] = k++;
	memset(st, 0, sizeof(*st));
	if (n_up < 2)
		goto out;  /* nothing to rotate */
	/* 2-level-like when the best leaf reaches at least 3/4 of all uppers */
	st->per_leaf = (uint64_t)max_deg * 4 < (uint64_t)n_up * 3;
	unsigned S = st->per_leaf ? max_deg : n_up;
	/*
	 * r(p) depends on the plane index only (dry-run and live bring-up route
	 * a plane identically): the first 8 planes are spaced S/8 apart, later
	 * ones fall in between, all distinct while p < S.
	 */
	unsigned strd = stride ? stride % S : (S >= 8 ? S / 8 : 1);
	if (!strd)
		strd = 1;
	unsigned slots = S / strd ? S / strd : 1;
	(void)nplanes;
	st->uppers = S;
	st->rotation = (unsigned)(((plane % slots) * strd + (plane / slots) % strd) % S);
	if (!st->rotation)
		goto out;
	leaf_levels(g, level, list);
	memset(memo, 0xff, (size_t)n * g->n_dests);
	for (uint32_t s = 0; s < n; s++) {
		if (!IS_LEAF(s))
			continue;
		uint32_t leaf = g->sw_node[s];
		/* this leaf's links grouped by neighbour (adj is sorted by neighbour slot) */
		uint32_t m = 0;
		for (uint32_t e = g->adj_off[s]; e < g->adj_off[s + 1]; e++) {
			uint32_t u = g->adj[e].peer;
			if (IS_LEAF(u))
				continue;
			if (lcnt[u]++ == 0)
				lstart[u] = e;
			if (st->per_leaf && lcnt[u] == 1)
				pos_of[u] = m, list[m++] = u;
		}
		if (!st->per_leaf) {
			memcpy(list, uppers, (size_t)n_up * sizeof(*list));
			m = n_up;
			for (uint32_t i = 0; i < m; i++)
				pos_of[list[i]] = i;
		}
		/* each upper switch's rotation target, once per leaf (no division per entry) */
		for (uint32_t i = 0; i < m; i++)
			tgt[list[i]] = list[(i + st->rotation) % m];
		for (uint32_t di = 0; m >= 2 && di < g->n_dests; di++) {
			const struct sm_graph_dest *d = &g->dests[di];
			if (d->is_switch || d->sw == SM_NONE || d->sw == s)
				continue;
			uint8_t p = sm_lfts_get(l, leaf, d->lid);
			if (p == SM_LFT_NONE || p == 0)
				continue;
			const struct sm_port *pt = sm_port(f, leaf, p);
			if (pt->peer_node == SM_NONE || f->nodes[pt->peer_node].type != SM_NODE_SWITCH)
				continue;
			uint32_t us = l->slot_of_node[pt->peer_node];
			if (us == SM_NONE || !lcnt[us] || pos_of[us] == SM_NONE)
				continue;
			uint32_t ts = tgt[us];
			/* parallel-link index of the current link, reused toward the target */
			unsigned par = 0;
			if (lcnt[us] > 1)
				for (uint32_t e = lstart[us]; e < lstart[us] + lcnt[us]; e++)
					if (g->adj[e].port < p)
						par++;
			uint8_t tport = !lcnt[ts] ? 0 : g->adj[lstart[ts] + (par < lcnt[ts] ? par : par % lcnt[ts])].port;
			/*
			 * Whether ts delivers d up-then-down does not depend on the leaf
			 * asking: such a path cannot pass through a leaf other than d's
			 * (from level 0 only delivery is left), so the walk is memoized.
			 */
			int8_t *mm = &memo[(size_t)ts * g->n_dests + di];
			if (*mm < 0)
				*mm = (int8_t)delivers(f, l, level, g->sw_node[ts], SM_NONE, d->lid, d->port);
			if (!tport || !*mm) {
				st->kept++;
				continue;
			}
			if (tport != p) {
				sm_lfts_set(l, leaf, d->lid, tport);
				st->rotated++;
			}
		}
		/* reset this leaf's tables */
		for (uint32_t e = g->adj_off[s]; e < g->adj_off[s + 1]; e++)
			lcnt[g->adj[e].peer] = 0;
		for (uint32_t i = 0; i < m; i++)
			pos_of[list[i]] = SM_NONE;
	}
#undef IS_LEAF
out:
	(void)msg;
	(void)msglen;
	free(upper_idx);
	free(uppers);
	free(list);
	free(pos_of);
	free(lstart);
	free(lcnt);
	free(level);
	free(memo);
	free(tgt);
	sm_graph_free(g);
	return rc;
}

static int route_one(struct planes_state *s, const struct sm_fabric *f, const struct sm_profile *prof,
		     unsigned plane, struct sm_lfts *out, struct planes_stats *stp, char *msg, size_t msglen)
{
	struct sm_route_ctx fc;
	struct planes_stats st = { 0 };
	int rc;

	memset(&fc, 0, sizeof(fc));
	fc.fabric = f;
	fc.plane = plane;
	fc.out = out;
	rc = sm_engine_ftree.route(s->ftree_state, &fc);
	if (rc) {
		snprintf(msg, msglen, "plane %u: ftree: %.200s", plane, fc.msg[0] ? fc.msg : strerror(-rc));
		return rc;
	}
	const char *verdict = "";
	if (s->decorrelate) {
		struct sm_lfts *plain = sm_lfts_dup(out);
		if (!plain)
			return -ENOMEM;
		rc = rotate_plane(f, plane, out, f->n_planes, s->stride, &st, msg, msglen);
		if (rc) {
			sm_lfts_free(plain);
			snprintf(msg, msglen, "plane %u: decorrelation failed: %s", plane, strerror(-rc));
			return rc;
		}
		/*
		 * On a degraded plane some entries could not rotate, and mixing
		 * rotated and unrotated entries can stack routes that ftree had
		 * spread. Keep the rotation only if the worst shift permutation
		 * and the random-permutation EBB are no worse than plain ftree.
		 */
		if (st.kept) {
			struct sm_metrics_opts mo = { .n_random = 16, .seed = 1, .skip_cdg = 1 };
			struct sm_route_metrics a, b;
			rc = sm_metrics_compute(f, plane, plain, &mo, &a);
			if (!rc)
				rc = sm_metrics_compute(f, plane, out, &mo, &b);
			if (rc) {
				sm_lfts_free(plain);
				return rc;
			}
			if (b.shift_max_congestion > a.shift_max_congestion || b.ebb < a.ebb - 0.005 ||
			    b.unreachable > a.unreachable) {
				memcpy(out->ports, plain->ports,
				       (size_t)out->n_switches * ((size_t)out->top_lid + 1));
				verdict = "; shift undone: on this degraded plane it would cost quality";
				st.rotated = 0;
				st.reverted = 1;
			}
		}
		sm_lfts_free(plain);
	}
	*stp = st;
	int len = snprintf(msg, msglen, "plane %u: ftree's routes shifted by %u of %u upper switches%s: "
			   "%llu LFT entries changed from ftree's, %llu left as ftree's (no usable target)%s", plane,
			   st.rotation, st.uppers, st.per_leaf ? " (each leaf's own)" : "",
			   (unsigned long long)st.rotated, (unsigned long long)st.kept, verdict);
	if (len < 0 || (size_t)len >= msglen)
		len = (int)msglen - 1;
	if (!prof || !s->pin || !prof->n_flows)
		return 0;
	size_t n_plane = 0;
	for (size_t i = 0; i < prof->n_flows; i++)
		if (sm_profile_flow_plane(f, &prof->flows[i]) == plane)
			n_plane++;
	if (!n_plane)
		return 0;
	struct sm_lfts *base = sm_lfts_dup(out);
	struct sm_hotpath_report rep;
	char err[160] = "";
	if (!base)
		return -ENOMEM;
	memset(&rep, 0, sizeof(rep));
	rc = sm_hotpath_pin(f, plane, base, prof->flows, prof->n_flows, &s->hp, out, &rep, err, sizeof(err));
	if (!rc) {
		snprintf(msg + len, msglen - (size_t)len, "; %zu of %zu hot flows pinned, max link load %.3g -> %.3g",
			 rep.pinned, rep.flows, rep.max_load_before, rep.max_load_after);
		stp->pinned = rep.pinned > 0;
	}
	else
		snprintf(msg, msglen, "plane %u: hot-path pinning failed: %s", plane, err[0] ? err : strerror(-rc));
	sm_hotpath_report_clear(&rep);
	sm_lfts_free(base);
	return rc;
}

static int planes_route(void *state, struct sm_route_ctx *ctx)
{
	if (!state || !ctx || !ctx->fabric || !ctx->out)
		return -EINVAL;
	ctx->msg[0] = 0;
	struct planes_stats st;
	return route_one(state, ctx->fabric, ctx->profile, ctx->plane, ctx->out, &st, ctx->msg, sizeof(ctx->msg));
}

struct planes_job {
	struct planes_state *s;
	struct sm_route_ctx *ctx;
	int rc[SM_MAX_PLANES];
	struct planes_stats st[SM_MAX_PLANES];
	char msg[SM_MAX_PLANES][256];
};

/* One plane of a joint call; planes share nothing but read-only state, so they run in parallel. */
static void planes_job_run(void *arg, unsigned i)
{
	struct planes_job *job = arg;
	job->rc[i] = route_one(job->s, job->ctx->fabric, job->ctx->profile, job->ctx->planes[i],
			       job->ctx->outs[i], &job->st[i], job->msg[i], sizeof(job->msg[i]));
}

/* Same outcome for planes i and j: one clause of the summary covers both. */
static int same_outcome(const struct planes_stats *a, const struct planes_stats *b)
{
	return a->rotated == b->rotated && a->reverted == b->reverted && a->pinned == b->pinned;
}

/*
 * The joint call's notes, in plain words and within ctx->msg (the log and
 * the report show it): what was done, then per run of planes with the same
 * outcome, "planes 1-7: 129024" LFT entries changed from ftree's.
 */
static void joint_summary(struct sm_route_ctx *ctx, const struct planes_job *job)
{
	size_t used = 0, len = sizeof(ctx->msg);
	int w = snprintf(ctx->msg, len, "ftree per plane, each plane shifted to other upper switches so planes "
			 "differ; LFT entries changed from ftree's:");
	used = w < 0 ? len : (size_t)w;
	for (unsigned i = 0; i < ctx->n_planes && used < len;) {
		unsigned j = i;
		while (j + 1 < ctx->n_planes && same_outcome(&job->st[j + 1], &job->st[i]))
			j++;
		char who[32];
		if (j == i)
			snprintf(who, sizeof(who), "plane %u", ctx->planes[i]);
		else
			snprintf(who, sizeof(who), "planes %u-%u", ctx->planes[i], ctx->planes[j]);
		w = snprintf(ctx->msg + used, len - used, "%s %s: %llu%s%s%s", i ? "," : "", who,
			     (unsigned long long)job->st[i].rotated, j > i ? " each" : "",
			     job->st[i].reverted ? " (shift undone: it cost quality)" : "",
			     job->st[i].pinned ? " + hot flows pinned" : "");
		used = w < 0 ? len : used + (size_t)w;
		i = j + 1;
	}
}

static int planes_route_planes(void *state, struct sm_route_ctx *ctx)
{
	struct planes_job *job;
	int rc = 0;

	if (!state || !ctx || !ctx->fabric || !ctx->outs || !ctx->planes || ctx->n_planes > SM_MAX_PLANES)
		return -EINVAL;
	job = calloc(1, sizeof(*job));
	if (!job)
		return -ENOMEM;
	job->s = state;
	job->ctx = ctx;
	ctx->msg[0] = 0;
	sm_parallel_for(ctx->n_planes, planes_job_run, job);
	for (unsigned i = 0; i < ctx->n_planes && !rc; i++)
		if (job->rc[i]) {
			snprintf(ctx->msg, sizeof(ctx->msg), "%s", job->msg[i]);
			rc = job->rc[i];
		}
	if (!rc)
		joint_summary(ctx, job);
	free(job);
	return rc;
}

/*
 * No SM_ENGINE_F_NO_CREDIT_LOOP although ftree's routes carry it: the
 * rotation and the pinning change them, and the pinning here has no
 * channel-dependency check (hotpath's has), so the chain checks in full.
 */
const struct sm_engine_ops sm_engine_planes = SM_ENGINE_OPS(
	.name = "planes",
	.description = "plane-aware hybrid static routing: ftree per plane, planes decorrelated by "
		       "rotating upper switches, profile hot flows pinned per plane",
	.init = planes_init,
	.route = planes_route,
	.route_planes = planes_route_planes,
	.free = planes_free);
