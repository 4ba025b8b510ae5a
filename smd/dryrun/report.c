/* SPDX-License-Identifier: MIT */
/*
 * DOC: dry-run JSON report; layout in report.h and smd.yaml(5). The text
 * report (report_text.c) walks struct sm_dr_run in the same order, so a
 * field added to one is easy to add to the other. Keys are only added.
 */
#include "dryrun/report.h"
#include "lib/json.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

/* The metrics' own CDG check if it ran, else the one validation did on the accepted routes. */
static int credit_loop(const struct sm_dr_plane *p)
{
	return p->m.credit_loop >= 0 ? p->m.credit_loop : p->route.val.credit_loop;
}

static void json_endpoint(struct sm_json *j, const char *key, const struct sm_dr_endpoint *e)
{
	char g[24];

	snprintf(g, sizeof(g), "0x%016" PRIx64, e->guid);
	sm_json_obj_begin(j, key);
	sm_json_str(j, "guid", g);
	sm_json_uint(j, "port", e->port);
	sm_json_uint(j, "lid", e->lid);
	sm_json_str(j, "desc", e->desc);
	sm_json_obj_end(j);
}

static void json_str_or_null(struct sm_json *j, const char *key, const char *s)
{
	if (s && s[0])
		sm_json_str(j, key, s);
	else
		sm_json_null(j, key);
}

/* Hops as the text report and validation count them: switch-to-switch links only. */
static void json_switch_hops(struct sm_json *j, const struct sm_route_metrics *m)
{
	sm_json_obj_begin(j, "switch_hops");
	if (m->pairs > m->unreachable) {
		sm_json_uint(j, "min", m->hops_min >= 2 ? m->hops_min - 2 : 0);
		sm_json_double(j, "avg", m->hops_avg >= 2 ? m->hops_avg - 2 : 0);
		sm_json_uint(j, "max", m->hops_max >= 2 ? m->hops_max - 2 : 0);
	} else {
		sm_json_null(j, "min");
		sm_json_null(j, "avg");
		sm_json_null(j, "max");
	}
	sm_json_obj_end(j);
}

/* How routes spread: edge forwarding index, shift and random permutations (metrics and reference). */
static void json_spread(struct sm_json *j, const struct sm_dr_run *r, const struct sm_route_metrics *m,
			double ebb_bound)
{
	sm_json_obj_begin(j, "edge_forwarding_index");
	sm_json_uint(j, "max", m->efi_max);
	sm_json_double(j, "max_over_mean", m->efi_max_over_mean);
	sm_json_obj_end(j);
	sm_json_uint(j, "shift_max_congestion", m->shift_max_congestion);
	if (m->shift_evaluated && m->shift_evaluated + 1 < m->hosts)
		sm_json_uint(j, "shifts_evaluated", m->shift_evaluated); /* a sample (routing/metrics.h) */
	sm_json_obj_begin(j, "random_permutations");
	sm_json_uint(j, "count", r->n_random);
	sm_json_uint(j, "seed", r->seed);
	sm_json_double(j, "max_congestion_mean", m->rand_max_congestion_mean);
	sm_json_uint(j, "max_congestion", m->rand_max_congestion);
	sm_json_double(j, "ebb", m->ebb);
	if (ebb_bound > 0) /* what no destination routing can expect on this cabling (routing/metrics_ebb.c) */
		sm_json_double(j, "ebb_bound", ebb_bound);
	sm_json_obj_end(j);
}

static void json_shape(struct sm_json *j, const struct sm_dr_plane *p)
{
	const struct sm_dr_shape *sh = &p->shape;

	sm_json_obj_begin(j, "shape");
	sm_json_bool(j, "fat_tree", sh->found);
	json_str_or_null(j, "why_not", sh->found ? NULL : sh->why);
	SM_JSON_UINTS(j, { "levels", sh->levels }, { "radix", sh->radix }, { "leaf_hosts", sh->down },
		      { "leaf_uplinks", sh->up }, { "hosts", sh->hosts }, { "leaves", sh->leaves },
		      { "switch_links_complete", sh->sw_links_full },
		      { "shift_congestion_bound", sh->shift_bound });
	json_str_or_null(j, "bound_leaf", sh->shift_bound ? p->tight_leaf : NULL);
	if (sh->shift_bound > 1) {
		/* the cut that sets the bound (routing/metrics.h), and what is left of the bisection */
		sm_json_obj_begin(j, "bound_cut");
		SM_JSON_UINTS(j, { "level", sh->cut.level }, { "units", sh->cut.units }, { "hosts", sh->cut.hosts },
			      { "links", sh->cut.links });
		json_str_or_null(j, "first_leaf", p->tight_leaf);
		json_str_or_null(j, "last_leaf", p->tight_last);
		sm_json_obj_end(j);
	}
	if (sh->cut.updown) {
		/* what up/down routings (ftree, updn) cannot beat: two leaves joined by few up/down paths */
		SM_JSON_UINTS(j, { "shift_congestion_bound_updown", sh->cut.updown });
		if (sh->cut.ud_from != SM_NONE) {
			sm_json_obj_begin(j, "bound_updown_pair");
			/* level 1: two leaves; 2: the subtrees (pods) whose first leaves these are */
			SM_JSON_UINTS(j, { "hosts", sh->cut.ud_hosts }, { "paths", sh->cut.ud_paths },
				      { "level", sh->cut.ud_level });
			json_str_or_null(j, "from_leaf", p->ud_from);
			json_str_or_null(j, "to_leaf", p->ud_to);
			sm_json_obj_end(j);
		}
	}
	if (sh->found)
		sm_json_double(j, "bisection_left", sh->bisection_left);
	if (sh->found && sh->bis_complete) {
		/* the least cut found between two halves of the hosts, against the complete tree's */
		sm_json_obj_begin(j, "bisection");
		sm_json_uint(j, "links", sh->bis.links);
		sm_json_uint(j, "complete", sh->bis_complete);
		sm_json_uint(j, "hosts", sh->bis.hosts);
		sm_json_double(j, "left", sh->bisection_cut_left);
		json_str_or_null(j, "split", sh->bis.how);
		json_str_or_null(j, "first_leaf", p->bis_leaf[0] ? p->bis_leaf : NULL);
		sm_json_obj_end(j);
	} else if (sh->found) {
		sm_json_str(j, "bisection", NULL); /* not computed: an oversubscribed tree */
	}
	json_str_or_null(j, "no_reference", p->have_ref ? NULL : p->ref_why[0] ? p->ref_why : sh->why);
	sm_json_obj_end(j);
}

/* The complete tree's figures, under the same keys as "metrics" (those a reference has). */
static void json_reference(struct sm_json *j, const struct sm_dr_run *r, const struct sm_route_metrics *m)
{
	sm_json_obj_begin(j, "reference");
	sm_json_str(j, "tree", "complete fat tree of this shape, routed by ftree");
	sm_json_obj_begin(j, "reachability");
	SM_JSON_UINTS(j, { "hosts", m->hosts }, { "pairs", m->pairs }, { "unreachable", m->unreachable },
		      { "loops", m->loops });
	sm_json_obj_end(j);
	json_switch_hops(j, m);
	sm_json_double(j, "minimal_share", m->minimal_share);
	json_spread(j, r, m, 0);
	sm_json_obj_end(j);
}

static void json_names(struct sm_json *j, const char *key, const char (*names)[SM_DESC_MAX + 1], uint32_t count)
{
	sm_json_arr_begin(j, key);
	for (unsigned e = 0; e < SM_HEALTH_EXAMPLES && e < count; e++)
		sm_json_str(j, NULL, names[e]);
	sm_json_arr_end(j);
}

/* Whom plane_health's counts are about: the first few hosts and leaves of each count. */
static void json_health_names(struct sm_json *j, const struct sm_dr_run *r)
{
	sm_json_arr_begin(j, "plane_health_names");
	for (unsigned p = 0; p < r->health.n_planes; p++) {
		const struct sm_plane_health *h = &r->health.p[p];
		const struct sm_dr_health_names *nm = &r->health_names[p];
		sm_json_obj_begin(j, NULL);
		sm_json_uint(j, "plane", h->plane);
		sm_json_str(j, "name", h->name);
		json_names(j, "hosts_without_nic", nm->no_nic, h->hosts_without_nic);
		json_names(j, "hosts_below_fair", nm->below, h->hosts_below);
		sm_json_uint(j, "leaves_short_of_uplinks", h->thin_leaves);
		json_names(j, "short_leaves", nm->thin_leaf, h->thin_leaves);
		sm_json_obj_end(j);
	}
	sm_json_arr_end(j);
}

static void json_plane(struct sm_json *j, const struct sm_dr_run *r, const struct sm_dr_plane *p)
{
	const struct sm_plane_result *res = &p->route;
	const struct sm_route_metrics *m = &p->m;

	sm_json_obj_begin(j, NULL);
	sm_json_uint(j, "plane", p->plane);
	sm_json_str(j, "name", p->name);
	sm_json_str(j, "dump", p->dump);

	sm_json_obj_begin(j, "fabric");
	SM_JSON_UINTS(j, { "nodes", p->counts.nodes }, { "switches", p->counts.switches }, { "cas", p->counts.cas },
		      { "routers", p->counts.routers }, { "links", p->counts.links },
		      { "switch_links", p->counts.sw_links });
	sm_json_obj_end(j);

	sm_json_obj_begin(j, "lids");
	SM_JSON_UINTS(j, { "ports_from_dump", p->lid_ports_kept }, { "ports_assigned", p->lid_ports_assigned },
		      { "lids_assigned", p->lids_assigned });
	sm_json_arr_begin(j, "examples");
	for (unsigned i = 0; i < p->n_lid_examples; i++)
		json_endpoint(j, NULL, &p->lid_examples[i]);
	sm_json_arr_end(j);
	sm_json_obj_end(j);

	sm_json_obj_begin(j, "connectivity");
	SM_JSON_UINTS(j, { "hosts", p->hosts }, { "parts", p->parts }, { "disconnected_pairs", p->disconnected_pairs });
	sm_json_arr_begin(j, "examples");
	for (unsigned i = 0; i < p->n_pair_examples; i++) {
		sm_json_obj_begin(j, NULL);
		json_endpoint(j, "src", &p->pair_examples[i][0]);
		json_endpoint(j, "dst", &p->pair_examples[i][1]);
		sm_json_obj_end(j);
	}
	sm_json_arr_end(j);
	sm_json_obj_end(j);

	sm_json_obj_begin(j, "routing");
	sm_json_bool(j, "routed", p->routed);
	json_str_or_null(j, "engine", p->routed ? res->engine : NULL);
	sm_json_double(j, "route_seconds", p->routed ? res->route_seconds : 0);
	sm_json_double(j, "validate_seconds", p->routed ? res->validate_seconds : 0);
	sm_json_double(j, "total_seconds", res->total_seconds);
	json_str_or_null(j, "notes", res->notes);
	json_str_or_null(j, "validation", res->val.msg);
	sm_json_arr_begin(j, "attempts");
	for (unsigned i = 0; i < res->n_attempts; i++) {
		const struct sm_chain_attempt *a = &res->attempts[i];
		sm_json_obj_begin(j, NULL);
		json_str_or_null(j, "engine", a->engine);
		sm_json_bool(j, "used", (int)i == res->engine_index);
		sm_json_int(j, "rc", a->rc);
		sm_json_double(j, "seconds", a->seconds);
		sm_json_double(j, "validate_seconds", a->validate_seconds);
		json_str_or_null(j, "reason", a->why);
		sm_json_obj_end(j);
	}
	sm_json_arr_end(j);
	sm_json_obj_end(j);

	if (p->have_metrics) {
		sm_json_obj_begin(j, "metrics");
		sm_json_obj_begin(j, "reachability");
		SM_JSON_UINTS(j, { "hosts", m->hosts }, { "pairs", m->pairs }, { "unreachable", m->unreachable },
			      { "loops", m->loops });
		sm_json_obj_end(j);
		sm_json_obj_begin(j, "hops");
		if (m->pairs > m->unreachable) {
			sm_json_uint(j, "min", m->hops_min);
			sm_json_double(j, "avg", m->hops_avg);
			sm_json_uint(j, "max", m->hops_max);
			sm_json_double(j, "minimal_share", m->minimal_share);
		} else {
			sm_json_null(j, "min");
			sm_json_null(j, "avg");
			sm_json_null(j, "max");
			sm_json_null(j, "minimal_share");
		}
		sm_json_obj_end(j);
		json_switch_hops(j, m);
		json_spread(j, r, m, p->shape.ebb_bound);
		if (credit_loop(p) < 0)
			sm_json_null(j, "credit_loop");
		else
			sm_json_bool(j, "credit_loop", credit_loop(p));
		sm_json_double(j, "seconds", m->seconds);
		sm_json_obj_end(j);
	} else {
		sm_json_null(j, "metrics");
	}
	if (p->have_metrics)
		json_shape(j, p);
	else
		sm_json_null(j, "shape");
	if (p->have_ref)
		json_reference(j, r, &p->ref);
	else
		sm_json_null(j, "reference");

	if (p->have_load) {
		sm_json_obj_begin(j, "profile");
		sm_json_uint(j, "flows", p->n_flows);
		sm_json_double(j, "weight", p->flow_weight);
		if (p->load_before >= 0)
			sm_json_double(j, "max_link_load_before", p->load_before);
		else
			sm_json_null(j, "max_link_load_before");
		if (p->load_after >= 0)
			sm_json_double(j, "max_link_load_after", p->load_after);
		else
			sm_json_null(j, "max_link_load_after");
		sm_json_double(j, "max_link_load_bound", p->load_bound);
		sm_json_obj_end(j);
	} else {
		sm_json_null(j, "profile");
	}
	sm_dr_mcast_json(j, &p->mc);   /* only with --mcast-groups */
	sm_json_obj_end(j);
}

int sm_report_write_json(FILE *o, const struct sm_dr_run *r)
{
	struct sm_json j;

	sm_json_init(&j, o, 1);
	sm_json_obj_begin(&j, NULL);
	sm_json_uint(&j, "version", SM_DR_REPORT_VERSION);
	sm_json_str(&j, "chain", r->chain);
	json_str_or_null(&j, "config", r->config);
	json_str_or_null(&j, "profile", r->profile);
	json_str_or_null(&j, "lfts_out", r->lfts_out);
	sm_json_bool(&j, "all_routed", r->all_routed);
	sm_json_obj_begin(&j, "seconds");
	sm_json_double(&j, "load", r->t.load);
	sm_json_double(&j, "lids", r->t.lids);
	sm_json_double(&j, "profile", r->t.profile);
	sm_json_double(&j, "route", r->t.route);
	sm_json_double(&j, "metrics", r->t.metrics);
	sm_json_double(&j, "write", r->t.write);
	sm_json_double(&j, "total", r->t.total);
	sm_json_obj_end(&j);
	sm_json_arr_begin(&j, "planes");
	for (unsigned i = 0; i < r->n_planes; i++)
		json_plane(&j, r, &r->planes[i]);
	sm_json_arr_end(&j);
	if (r->have_health) {
		sm_planes_health_json(&j, "plane_health", &r->health);
		json_health_names(&j, r);
	}
	sm_report_partitions_json(&j, r);
	sm_json_obj_end(&j);
	return sm_json_finish(&j);
}
