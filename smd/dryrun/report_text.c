/* SPDX-License-Identifier: MIT */
/*
 * DOC: the dry-run's human report (layout in report.h and smd.yaml(5))
 *
 * A report a reader understands without the source: every route-quality
 * figure is one row "figure, measured, good, what it means", where good is
 * the value this tree's shape reaches when complete (reference.h) or the
 * best its own cabling allows. Hops count switch-to-switch links
 * everywhere (host cables are not counted), as validation does.
 *
 * Each plane's section is first built as a list of lines. With several
 * planes, a line every plane has is printed once under "same in all N
 * planes", and a plane's section holds only its other lines; a heading
 * goes with the lines under it. Times never compare equal, so they are
 * summed up as ranges instead.
 */
#include "dryrun/report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct tline {
	char *s;
	unsigned grp;               /* index of the heading this line is under (0: none) */
	int heading;
};

struct tlines {
	struct tline *v;
	unsigned n, cap, grp;
	int oom;
};

static void tl_vadd(struct tlines *t, int heading, const char *fmt, va_list ap)
{
	char *s = NULL;

	if (t->oom)
		return;
	if (t->n == t->cap) {
		unsigned cap = t->cap ? 2 * t->cap : 32;
		struct tline *v = realloc(t->v, cap * sizeof(*v));
		if (!v) {
			t->oom = 1;
			return;
		}
		t->v = v;
		t->cap = cap;
	}
	if (vasprintf(&s, fmt, ap) < 0) {
		t->oom = 1;
		return;
	}
	if (heading)
		t->grp++;
	t->v[t->n++] = (struct tline){ .s = s, .grp = heading ? t->grp : 0, .heading = heading };
}

__attribute__((format(printf, 2, 3))) static void tl_add(struct tlines *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	tl_vadd(t, 0, fmt, ap);
	va_end(ap);
	if (!t->oom && t->n && !t->v[t->n - 1].heading)
		t->v[t->n - 1].grp = t->grp;
}

/* A heading: the lines that follow belong to it until the next heading or end_group. */
__attribute__((format(printf, 2, 3))) static void tl_heading(struct tlines *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	tl_vadd(t, 1, fmt, ap);
	va_end(ap);
}

static void tl_end_group(struct tlines *t)
{
	t->grp++;
}

static void tl_free(struct tlines *t)
{
	for (unsigned i = 0; i < t->n; i++)
		free(t->v[i].s);
	free(t->v);
	memset(t, 0, sizeof(*t));
}

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0.0;
}

/* The metrics' own CDG check if it ran, else the one validation did on the accepted routes. */
static int credit_loop(const struct sm_dr_plane *p)
{
	return p->m.credit_loop >= 0 ? p->m.credit_loop : p->route.val.credit_loop;
}

static const char *loop_word(int c)
{
	return c < 0 ? "not checked" : c ? "CYCLE FOUND" : "none";
}

static void endpoint_str(char *buf, size_t len, const struct sm_dr_endpoint *e)
{
	snprintf(buf, len, "'%s' port %u (guid 0x%016" PRIx64 ", LID %u)", e->desc, e->port, e->guid, e->lid);
}

/* Switch-to-switch links of a route counted with its two host links (metrics.h) */
static unsigned sw_hops(unsigned h)
{
	return h >= 2 ? h - 2 : 0;
}

static void hops_str(char *buf, size_t len, const struct sm_route_metrics *m)
{
	if (m->pairs > m->unreachable)
		snprintf(buf, len, "%u/%.2f/%u", sw_hops(m->hops_min), m->hops_avg >= 2 ? m->hops_avg - 2 : 0,
			 sw_hops(m->hops_max));
	else
		snprintf(buf, len, "-");
}

#define ROW "    %-18s %-12s %-12s %s"

/* Where the shift-congestion bound comes from: the tightest cut (routing/metrics_bound.c). */
static void bound_line(struct tlines *t, const struct sm_dr_plane *p)
{
	const struct sm_shift_bound *c = &p->shape.cut;
	const char *pad = "";

	if (c->level == 1 && c->units == 1)
		tl_add(t, "    %-44s no routing does better here: leaf '%s' has %u hosts on %u uplinks", pad,
		       p->tight_leaf, c->hosts, c->links);
	else if (c->level == 1)
		tl_add(t, "    %-44s no routing does better here: the %u leaves '%s' .. '%s' have %u hosts and %u links out",
		       pad, c->units, p->tight_leaf, p->tight_last, c->hosts, c->links);
	else
		tl_add(t, "    %-44s no routing does better here: the %u subtree(s) of level %u from leaf '%s' to the one of '%s'"
		       "\n    %-44s have %u hosts and %u links out", pad, c->units, c->level, p->tight_leaf, p->tight_last,
		       pad, c->hosts, c->links);
}

static void quality_rows(struct tlines *t, const struct sm_dr_run *r, const struct sm_dr_plane *p)
{
	const struct sm_route_metrics *m = &p->m, *ref = p->have_ref ? &p->ref : NULL;
	const struct sm_dr_shape *sh = &p->shape;
	char a[48], b[48];

	if (ref)
		tl_heading(t, "  route quality: measured, and good = this tree complete (every switch link cabled) "
			   "routed by ftree;\n  hops count switch-to-switch links; %u random permutations, seed %" PRIu64
			   ", for both\n" ROW, r->n_random, r->seed, "figure", "measured", "good", "what it means");
	else
		tl_heading(t, "  route quality: measured, and good where this fabric allows one (no complete-tree "
			   "reference: %s);\n  hops count switch-to-switch links; %u random permutations, seed %" PRIu64
			   "\n" ROW, p->ref_why[0] ? p->ref_why : sh->why, r->n_random, r->seed, "figure", "measured",
			   "good", "what it means");
	snprintf(a, sizeof(a), "%" PRIu64, m->unreachable);
	snprintf(b, sizeof(b), "of %" PRIu64, m->pairs);
	tl_add(t, ROW " (%.2f%% %s host pairs)", "unreachable pairs", a, "0", "host pairs with no route",
	       pct(m->unreachable, m->pairs), b);
	snprintf(a, sizeof(a), "%" PRIu64, m->loops);
	tl_add(t, ROW, "looping routes", a, "0", "host pairs whose route comes back on itself and never arrives");
	tl_add(t, ROW, "credit loops", loop_word(credit_loop(p)), "none",
	       "a cycle of buffer dependencies, which can deadlock the fabric");
	hops_str(a, sizeof(a), m);
	if (ref)
		hops_str(b, sizeof(b), ref);
	tl_add(t, ROW, "hops min/avg/max", a, ref ? b : "-", "switch-to-switch links on a host-to-host route");
	if (m->pairs > m->unreachable) {
		snprintf(a, sizeof(a), "%.2f%%", 100.0 * m->minimal_share);
		tl_add(t, ROW, "shortest routes", a, "100%", "host pairs routed over a shortest path of the cabling");
	}
	snprintf(a, sizeof(a), "%" PRIu64, m->efi_max);
	snprintf(b, sizeof(b), "%" PRIu64, ref ? ref->efi_max : 0);
	tl_add(t, ROW, "busiest link", a, ref ? b : "-",
	       "routes (one per host pair) through the busiest switch-to-switch link");
	snprintf(a, sizeof(a), "%.3f", m->efi_max_over_mean);
	snprintf(b, sizeof(b), "%.3f", ref ? ref->efi_max_over_mean : 1.0);
	tl_add(t, ROW, "busiest / average", a, b, "1.000 = routes spread evenly over the switch links");
	/* good shift congestion: the complete tree's, or what this cabling forces if that is more */
	unsigned good = ref ? ref->shift_max_congestion : 0;
	if (sh->shift_bound > good)
		good = sh->shift_bound;
	snprintf(a, sizeof(a), "%u", m->shift_max_congestion);
	snprintf(b, sizeof(b), "%u", good);
	tl_add(t, ROW, "shift congestion", a, good ? b : "-",
	       "most flows on one link when every host i sends to host i+k, worst k");
	if (m->shift_evaluated && m->shift_evaluated + 1 < m->hosts) {
		snprintf(a, sizeof(a), "%u of %u", m->shift_evaluated, m->hosts - 1);
		tl_add(t, ROW, "shifts evaluated", a, "-", "evenly spaced: N^2 flows in all (routing/metrics.h)");
	}
	if (sh->shift_bound > 1 && (!ref || sh->shift_bound > ref->shift_max_congestion))
		bound_line(t, p);
	if (sh->cut.updown > sh->shift_bound && sh->cut.ud_from != SM_NONE && sh->cut.ud_level >= 2)
		tl_add(t, "    %-44s no up/down routing (ftree, updn) does better than %u: one shift sends the %u hosts\n"
		       "    %-44s of the subtree of leaf '%s' into that of '%s', joined by %u link-disjoint up/down paths",
		       "", sh->cut.updown, sh->cut.ud_hosts, "", p->ud_from, p->ud_to, sh->cut.ud_paths);
	else if (sh->cut.updown > sh->shift_bound && sh->cut.ud_from != SM_NONE)
		tl_add(t, "    %-44s no up/down routing (ftree, updn) does better than %u: leaves '%s' and '%s'\n"
		       "    %-44s (%u hosts) are joined by %u link-disjoint up/down paths", "", sh->cut.updown, p->ud_from,
		       p->ud_to, "", sh->cut.ud_hosts, sh->cut.ud_paths);
	snprintf(a, sizeof(a), "%.3f", m->rand_max_congestion_mean);
	snprintf(b, sizeof(b), "%.3f", ref ? ref->rand_max_congestion_mean : 0);
	tl_add(t, ROW, "random congestion", a, ref ? b : "-",
	       "most flows on one link in a random permutation (host i sends to host P(i)), mean");
	snprintf(a, sizeof(a), "%.4f", m->ebb);
	snprintf(b, sizeof(b), "%.4f", ref ? ref->ebb : 0);
	tl_add(t, ROW "\n    %-44s %s", "EBB", a, ref ? b : "-",
	       "effective bisection bandwidth: the share of its bandwidth a flow gets (1 / flows on the",
	       "", "busiest link of its route), mean over those permutations; 1.0 on a fat tree needs adaptive routing");
	if (sh->ebb_bound > 0)
		tl_add(t, "    %-44s no destination routing can expect more than %.4f on this cabling (what the\n"
		       "    %-44s leaves' links allow: routing/metrics_ebb.c)", "", sh->ebb_bound, "");
	if (p->have_load && p->n_flows) {
		snprintf(a, sizeof(a), p->load_after < 0 ? "n/a" : "%g", p->load_after);
		snprintf(b, sizeof(b), "%g", p->load_bound);
		char was[96] = "the chain could not route the plane without the profile";
		if (p->load_before >= 0)
			snprintf(was, sizeof(was), "%g with routes made without the profile", p->load_before);
		tl_add(t, ROW "\n    %-44s (%zu flows of weight %g; %s)", "hot-flow max load", a, b,
		       "most profile weight on one link; good = the busiest host's own link, which no routing avoids",
		       "", p->n_flows, p->flow_weight, was);
	}
	tl_end_group(t);
}

static void shape_line(struct tlines *t, const struct sm_dr_plane *p)
{
	const struct sm_dr_shape *sh = &p->shape;

	if (!sh->found) {
		tl_add(t, "  shape: %s", sh->why[0] ? sh->why : "unknown");
		return;
	}
	char missing[96] = "every switch link of the complete tree present";
	if (sh->sw_links_full > p->counts.sw_links)
		snprintf(missing, sizeof(missing), "%u of the complete tree's %u switch links missing",
			 sh->sw_links_full - p->counts.sw_links, sh->sw_links_full);
	tl_add(t, "  shape: %u-level fat tree, radix %u, %u leaves of up to %u hosts and %u uplinks; %s", sh->levels,
	       sh->radix, sh->leaves, sh->down, sh->up, missing);
	if (sh->sw_links_full > p->counts.sw_links && sh->bis_complete)
		tl_add(t, "  bisection: %llu of the complete tree's %llu links (%.4f; halves of %u hosts split by %s, from %s);\n"
		       "    switch links left at the thinnest level %.4f",
		       (unsigned long long)sh->bis.links, (unsigned long long)sh->bis_complete, sh->bisection_cut_left,
		       sh->bis.hosts, sh->bis.how, p->bis_leaf[0] ? p->bis_leaf : "-", sh->bisection_left);
}

static void plane_lines(struct tlines *t, const struct sm_dr_run *r, const struct sm_dr_plane *p)
{
	const struct sm_plane_result *res = &p->route;
	char e[SM_DESC_MAX + 96], e2[SM_DESC_MAX + 96];

	tl_add(t, "  fabric: %u nodes (%u switches, %u CAs, %u routers), %u links (%u switch-switch)",
	       p->counts.nodes, p->counts.switches, p->counts.cas, p->counts.routers, p->counts.links,
	       p->counts.sw_links);
	if (p->have_metrics)
		shape_line(t, p);
	tl_heading(t, "  LIDs: %u ports kept their LID from the dump, %u ports got a LID from smd (%u LIDs)",
		   p->lid_ports_kept, p->lid_ports_assigned, p->lids_assigned);
	for (unsigned i = 0; i < p->n_lid_examples; i++) {
		endpoint_str(e, sizeof(e), &p->lid_examples[i]);
		tl_add(t, "    assigned: %s", e);
	}
	if (p->lid_ports_assigned > p->n_lid_examples)
		tl_add(t, "    ... and %u more", p->lid_ports_assigned - p->n_lid_examples);
	tl_end_group(t);
	if (p->parts > 1 || p->disconnected_pairs) {
		tl_heading(t, "  connectivity: %u hosts in %u disconnected parts: %" PRIu64
			   " host pairs cannot be joined by any routing", p->hosts, p->parts, p->disconnected_pairs);
		for (unsigned i = 0; i < p->n_pair_examples; i++) {
			endpoint_str(e, sizeof(e), &p->pair_examples[i][0]);
			endpoint_str(e2, sizeof(e2), &p->pair_examples[i][1]);
			tl_add(t, "    no cable path: %s -> %s", e, e2);
		}
		tl_end_group(t);
	}
	for (unsigned i = 0; i < res->n_attempts; i++) {
		const struct sm_chain_attempt *a = &res->attempts[i];
		if ((int)i != res->engine_index)
			tl_add(t, "  fallback: %s passed over: %s", a->engine ? a->engine : "?", a->why);
	}
	if (!p->routed) {
		tl_add(t, "  routing: FAILED, no engine of the chain (%s) routed this plane", r->chain);
		return;
	}
	tl_add(t, "  routing: %s", res->engine ? res->engine : "?");
	if (res->notes[0])
		tl_add(t, "  engine notes: %s", res->notes);
	if (res->val.msg[0])
		tl_add(t, "  validation: %s", res->val.msg);
	if (p->have_metrics)
		quality_rows(t, r, p);
	char mc[8][200];
	for (unsigned i = 0, n = sm_dr_mcast_text(&p->mc, mc, 8); i < n; i++)
		tl_add(t, "%s", mc[i]);
}

/* One plane's times (never equal between planes, so kept out of the comparison). */
static void plane_times(FILE *o, const struct sm_dr_plane *p)
{
	const struct sm_plane_result *res = &p->route;

	fprintf(o, "  time: routing %.2f ms, validation %.2f ms, every engine tried %.2f ms", res->route_seconds * 1e3,
		res->validate_seconds * 1e3, res->total_seconds * 1e3);
	if (p->have_metrics)
		fprintf(o, ", metrics %.2f ms", p->m.seconds * 1e3);
	fputc('\n', o);
}

/* min-max of one time over the planes, in ms */
static void time_range(FILE *o, const char *what, const struct sm_dr_run *r, int which)
{
	double lo = 0, hi = 0;
	int any = 0;

	for (unsigned i = 0; i < r->n_planes; i++) {
		const struct sm_dr_plane *p = &r->planes[i];
		double v = which == 0 ? p->route.route_seconds : which == 1 ? p->route.validate_seconds : p->m.seconds;
		if (!p->routed || (which == 2 && !p->have_metrics))
			continue;
		if (!any || v < lo)
			lo = v;
		if (!any || v > hi)
			hi = v;
		any = 1;
	}
	if (!any)
		return;
	if (hi - lo < 0.005e-3)
		fprintf(o, "%s %s %.2f ms", which ? "," : "", what, lo * 1e3);
	else
		fprintf(o, "%s %s %.2f-%.2f ms", which ? "," : "", what, lo * 1e3, hi * 1e3);
}

static int has_line(const struct tlines *t, const char *s)
{
	for (unsigned i = 0; i < t->n; i++)
		if (!t->v[i].heading && !strcmp(t->v[i].s, s))
			return 1;
	return 0;
}

/* The heading (text) line i of t is under, or NULL. */
static const char *heading_of(const struct tlines *t, unsigned i)
{
	if (!t->v[i].grp)
		return NULL;
	for (unsigned k = i; k-- > 0;)
		if (t->v[k].heading && t->v[k].grp == t->v[i].grp)
			return t->v[k].s;
	return NULL;
}

/*
 * Print the lines of t whose "common" flag is want; a heading is printed
 * before the first printed line under it (or alone when every line under it
 * is elsewhere but the heading itself is not common).
 */
static void print_lines(FILE *o, const struct tlines *t, const unsigned char *common, int want)
{
	unsigned shown_grp = 0;

	for (unsigned i = 0; i < t->n; i++) {
		const struct tline *l = &t->v[i];
		if (l->heading) {
			/* a heading with no line under it is printed where it belongs itself */
			int has_child = i + 1 < t->n && !t->v[i + 1].heading && t->v[i + 1].grp == l->grp;
			if (!has_child && common[i] == want) {
				fprintf(o, "%s\n", l->s);
				shown_grp = l->grp;
			}
			continue;
		}
		if (common[i] != want)
			continue;
		if (l->grp && l->grp != shown_grp) {
			const char *h = heading_of(t, i);
			if (h)
				fprintf(o, "%s\n", h);
			shown_grp = l->grp;
		}
		fprintf(o, "%s\n", l->s);
	}
}

/* "0-2, 4-7" from ascending plane indices */
static void plane_list(char *buf, size_t len, const unsigned *members, unsigned n)
{
	size_t used = 0;

	buf[0] = '\0';
	for (unsigned x = 0; x < n && used < len;) {
		unsigned y = x;
		int w;
		while (y + 1 < n && members[y + 1] == members[y] + 1)
			y++;
		if (y == x)
			w = snprintf(buf + used, len - used, "%s%u", x ? "," : "", members[x]);
		else
			w = snprintf(buf + used, len - used, "%s%u-%u", x ? "," : "", members[x], members[y]);
		used = w < 0 ? len : used + (size_t)w;
		x = y + 1;
	}
}

/* The lines of a and b that are not common are the same, in the same order. */
static int same_own(const struct tlines *a, const unsigned char *ca, const struct tlines *b,
		    const unsigned char *cb)
{
	unsigned i = 0, j = 0;

	for (;;) {
		while (i < a->n && (ca[i] || a->v[i].heading))
			i++;
		while (j < b->n && (cb[j] || b->v[j].heading))
			j++;
		if (i == a->n || j == b->n)
			return i == a->n && j == b->n;
		if (strcmp(a->v[i].s, b->v[j].s))
			return 0;
		i++;
		j++;
	}
}

static int planes_text(FILE *o, const struct sm_dr_run *r)
{
	struct tlines t[SM_MAX_PLANES];
	unsigned char *common[SM_MAX_PLANES] = { NULL };
	int rc = 0;

	memset(t, 0, sizeof(t));
	for (unsigned i = 0; i < r->n_planes; i++) {
		plane_lines(&t[i], r, &r->planes[i]);
		common[i] = calloc(t[i].n + 1, 1);
		if (t[i].oom || !common[i])
			rc = -ENOMEM;
	}
	if (rc)
		goto out;
	if (r->n_planes == 1) {
		const struct sm_dr_plane *p = &r->planes[0];
		fprintf(o, "plane %u (%s): %s\n", p->plane, p->name, p->dump);
		print_lines(o, &t[0], common[0], 0);
		if (p->routed)
			plane_times(o, p);
		goto out;
	}
	/* a line is common when every plane has it; a heading when its text is in every plane too */
	for (unsigned i = 0; i < r->n_planes; i++)
		for (unsigned k = 0; k < t[i].n; k++) {
			int all = 1;
			for (unsigned j = 0; j < r->n_planes && all; j++) {
				if (t[i].v[k].heading) {
					all = 0;
					for (unsigned x = 0; x < t[j].n && !all; x++)
						all = t[j].v[x].heading && !strcmp(t[j].v[x].s, t[i].v[k].s);
				} else {
					all = has_line(&t[j], t[i].v[k].s);
				}
			}
			common[i][k] = (unsigned char)all;
		}
	for (unsigned i = 0; i < r->n_planes; i++)
		fprintf(o, "plane %u (%s): %s\n", r->planes[i].plane, r->planes[i].name, r->planes[i].dump);
	fprintf(o, "same in all %u planes:\n", r->n_planes);
	print_lines(o, &t[0], common[0], 1);
	fprintf(o, "  time per plane:");
	time_range(o, "routing", r, 0);
	time_range(o, "validation", r, 1);
	time_range(o, "metrics", r, 2);
	fputc('\n', o);
	/* planes whose own lines are the same share one section */
	unsigned char done[SM_MAX_PLANES] = { 0 };
	for (unsigned i = 0; i < r->n_planes; i++) {
		int own = 0;
		for (unsigned k = 0; k < t[i].n && !own; k++)
			own = !common[i][k] && !t[i].v[k].heading;
		if (!own || done[i])
			continue;
		unsigned members[SM_MAX_PLANES], n = 0;
		for (unsigned j = i; j < r->n_planes; j++)
			if (!done[j] && same_own(&t[i], common[i], &t[j], common[j])) {
				done[j] = 1;
				members[n++] = j;
			}
		char who[96];
		plane_list(who, sizeof(who), members, n);
		fprintf(o, "%s %s:\n", n == 1 ? "only plane" : "planes", who);
		print_lines(o, &t[i], common[i], 0);
	}
out:
	for (unsigned i = 0; i < r->n_planes; i++) {
		tl_free(&t[i]);
		free(common[i]);
	}
	return rc;
}

/* "a, b, c and 5 more" from up to SM_HEALTH_EXAMPLES names of a count */
static void names_str(char *buf, size_t len, const char (*names)[SM_DESC_MAX + 1], uint32_t count)
{
	size_t used = 0;

	buf[0] = '\0';
	for (unsigned e = 0; e < SM_HEALTH_EXAMPLES && e < count && used < len; e++) {
		int w = snprintf(buf + used, len - used, "%s%s", e ? ", " : "", names[e][0] ? names[e] : "?");
		used = w < 0 ? len : used + (size_t)w;
	}
	if (count > SM_HEALTH_EXAMPLES && used < len)
		snprintf(buf + used, len - used, " and %u more", count - SM_HEALTH_EXAMPLES);
}

static void health_row(char *buf, size_t len, const struct sm_plane_health *h)
{
	snprintf(buf, len, "%8u %8u %6u %8u %8u %7u %9.4f %9.4f %6u", h->switches, h->sw_links, h->nics,
		 h->missing_switches, h->missing_links, h->hosts_without_nic, h->share_min, h->share_mean,
		 h->hosts_below);
}

static void health_text(FILE *o, const struct sm_dr_run *r)
{
	const struct sm_planes_health *ph = &r->health;
	double fair = ph->n_planes ? 1.0 / ph->n_planes : 1.0;

	fprintf(o, "planes compared: %u planes, %u hosts (%u with a NIC count unlike most hosts'), %s\n", ph->n_planes,
		ph->hosts, ph->uneven_hosts, ph->asymmetric ? "ASYMMETRIC" : "symmetric");
	if (!ph->asymmetric) {
		const struct sm_plane_health *h = &ph->p[0];
		fprintf(o, "  every plane: %u switches, %u switch links, %u NICs; nothing missing; every host gets the "
			"fair share %.4f of its bandwidth from each plane\n", h->switches, h->sw_links, h->nics, fair);
		return;
	}
	/* planes with the same row share it */
	unsigned char done[SM_MAX_PLANES] = { 0 };
	fprintf(o, "  %-14s %8s %8s %6s %8s %8s %7s %9s %9s %6s\n", "planes", "switches", "sw-links", "nics",
		"-switch", "-links", "no-nic", "share-min", "share-avg", "below");
	for (unsigned p = 0; p < ph->n_planes; p++) {
		const struct sm_plane_health *h = &ph->p[p];
		char row[160], who[96];
		unsigned members[SM_MAX_PLANES], n = 0;
		if (done[p])
			continue;
		health_row(row, sizeof(row), h);
		for (unsigned q = p; q < ph->n_planes; q++) {
			char other[160];
			health_row(other, sizeof(other), &ph->p[q]);
			if (!done[q] && !strcmp(row, other)) {
				done[q] = 1;
				members[n++] = q;
			}
		}
		plane_list(who, sizeof(who), members, n);
		fprintf(o, "  %-14s %s\n", who, row);
	}
	fprintf(o, "  (-switch/-links: fewer than the plane with the most; no-nic: hosts without a NIC in the plane;\n"
		"   share: bandwidth share a plane offers a host, its leaf's uplinks against a full leaf's %u;\n"
		"   fair = %.4f; below: hosts under 90%% of fair; the hosts and leaves counted are named below)\n",
		ph->up_full, fair);
	for (unsigned p = 0; p < ph->n_planes; p++) {
		const struct sm_plane_health *h = &ph->p[p];
		const struct sm_dr_health_names *nm = &r->health_names[p];
		char names[3 * (SM_DESC_MAX + 3) + 32];
		if (h->hosts_without_nic) {
			names_str(names, sizeof(names), nm->no_nic, h->hosts_without_nic);
			fprintf(o, "  plane %u: no NIC: %s\n", h->plane, names);
		}
		if (h->thin_leaves) {
			names_str(names, sizeof(names), nm->thin_leaf, h->thin_leaves);
			fprintf(o, "  plane %u: %u leaves with fewer than %u uplinks: %s\n", h->plane, h->thin_leaves,
				ph->up_full, names);
		}
		if (h->hosts_below) {
			names_str(names, sizeof(names), nm->below, h->hosts_below);
			fprintf(o, "  plane %u: below fair share: %s\n", h->plane, names);
		}
	}
}

int sm_report_write_text(FILE *o, const struct sm_dr_run *r)
{
	unsigned routed = 0;
	int rc;

	for (unsigned i = 0; i < r->n_planes; i++)
		routed += r->planes[i].routed ? 1 : 0;
	fprintf(o, "smd dry-run: %u plane%s, chain %s%s%s%s%s\n", r->n_planes, r->n_planes == 1 ? "" : "s",
		r->chain, r->config[0] ? ", config " : "", r->config, r->profile[0] ? ", profile " : "", r->profile);
	rc = planes_text(o, r);
	if (rc)
		return rc;
	if (r->have_health)
		health_text(o, r);
	sm_report_partitions_text(o, r);
	fprintf(o, "summary: %u of %u planes routed; time: load %.1f ms, LIDs %.1f ms, routing %.1f ms, "
		"metrics %.1f ms, LFT file %.1f ms, total %.1f ms\n",
		routed, r->n_planes, r->t.load * 1e3, r->t.lids * 1e3, r->t.route * 1e3, r->t.metrics * 1e3,
		r->t.write * 1e3, r->t.total * 1e3);
	if (r->lfts_out[0])
		fprintf(o, "LFTs written to %s\n", r->lfts_out);
	if (fflush(o) || ferror(o))
		return -EIO;
	return 0;
}
