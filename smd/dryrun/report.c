/* SPDX-License-Identifier: MIT */
/*
 * DOC: dry-run report writers (text and JSON); layout in report.h and
 * smd.yaml(5). Both walk struct sm_dr_run in the same order, so a field
 * added to one is easy to add to the other.
 */
#include "dryrun/report.h"
#include "lib/json.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0.0;
}

/* The metrics' own CDG check if it ran, else the one validation did on the accepted routes. */
static int credit_loop(const struct sm_dr_plane *p)
{
	return p->m.credit_loop >= 0 ? p->m.credit_loop : p->route.val.credit_loop;
}

/* A max link load, or "n/a" when it could not be computed (negative). */
static void load_str(char *buf, size_t len, double load)
{
	if (load < 0)
		snprintf(buf, len, "n/a");
	else
		snprintf(buf, len, "%g", load);
}

static void text_endpoint(FILE *o, const struct sm_dr_endpoint *e)
{
	fprintf(o, "'%s' port %u (guid 0x%016" PRIx64 ", LID %u)", e->desc, e->port, e->guid, e->lid);
}

static void text_plane(FILE *o, const struct sm_dr_run *r, const struct sm_dr_plane *p)
{
	const struct sm_plane_result *res = &p->route;
	const struct sm_route_metrics *m = &p->m;

	fprintf(o, "plane %u (%s): %s\n", p->plane, p->name, p->dump);
	fprintf(o, "  fabric: %u nodes (%u switches, %u CAs, %u routers), %u links (%u switch-switch)\n",
		p->counts.nodes, p->counts.switches, p->counts.cas, p->counts.routers, p->counts.links,
		p->counts.sw_links);
	fprintf(o, "  LIDs: %u ports kept their LID from the dump, %u ports got a LID from smd (%u LIDs)\n",
		p->lid_ports_kept, p->lid_ports_assigned, p->lids_assigned);
	for (unsigned i = 0; i < p->n_lid_examples; i++) {
		fprintf(o, "    assigned: ");
		text_endpoint(o, &p->lid_examples[i]);
		fputc('\n', o);
	}
	if (p->lid_ports_assigned > p->n_lid_examples)
		fprintf(o, "    ... and %u more\n", p->lid_ports_assigned - p->n_lid_examples);
	if (p->parts > 1 || p->disconnected_pairs) {
		fprintf(o, "  connectivity: %u hosts in %u disconnected parts: %" PRIu64
			" host pairs cannot be joined by any routing\n",
			p->hosts, p->parts, p->disconnected_pairs);
	}

	if (res->n_attempts || p->routed) {
		for (unsigned i = 0; i < res->n_attempts; i++) {
			const struct sm_chain_attempt *a = &res->attempts[i];
			if ((int)i == res->engine_index)
				continue;
			fprintf(o, "  fallback: %s passed over after %.2f ms: %s\n",
				a->engine ? a->engine : "?", a->seconds * 1e3, a->why);
		}
	}
	if (!p->routed) {
		fprintf(o, "  routing: FAILED, no engine of the chain (%s) routed this plane\n", r->chain);
		return;
	}
	fprintf(o, "  routing: %s in %.2f ms (validation %.2f ms, all attempts %.2f ms)\n",
		res->engine ? res->engine : "?", res->route_seconds * 1e3,
		res->validate_seconds * 1e3, res->total_seconds * 1e3);
	if (res->notes[0])
		fprintf(o, "  engine notes: %s\n", res->notes);
	if (res->val.msg[0])
		fprintf(o, "  validation: %s\n", res->val.msg);
	if (!p->have_metrics)
		return;
	fprintf(o, "  reachability: %u hosts, %" PRIu64 " pairs, %" PRIu64 " unreachable (%.2f%%), %"
		PRIu64 " loops\n", m->hosts, m->pairs, m->unreachable, pct(m->unreachable, m->pairs),
		m->loops);
	if (m->pairs > m->unreachable)
		fprintf(o, "  hops: min %u, avg %.3f, max %u; minimal paths %.2f%%\n", m->hops_min,
			m->hops_avg, m->hops_max, 100.0 * m->minimal_share);
	fprintf(o, "  edge forwarding index: max %" PRIu64 ", max/mean %.3f\n", m->efi_max,
		m->efi_max_over_mean);
	fprintf(o, "  shift permutations: worst congestion %u\n", m->shift_max_congestion);
	fprintf(o, "  random permutations (%u, seed %" PRIu64 "): max congestion mean %.3f, EBB %.4f\n",
		r->n_random, r->seed, m->rand_max_congestion_mean, m->ebb);
	fprintf(o, "  credit loops: %s\n",
		credit_loop(p) < 0 ? "not checked" : credit_loop(p) ? "CYCLE FOUND" : "none");
	fprintf(o, "  metrics time: %.2f ms\n", m->seconds * 1e3);
	if (p->have_load) {
		char before[32], after[32];
		load_str(before, sizeof(before), p->load_before);
		load_str(after, sizeof(after), p->load_after);
		fprintf(o, "  profile: %zu flows (weight %g), max link load %s without the profile, %s with it\n",
			p->n_flows, p->flow_weight, before, after);
	}
}

int sm_report_write_text(FILE *o, const struct sm_dr_run *r)
{
	unsigned routed = 0;

	for (unsigned i = 0; i < r->n_planes; i++)
		routed += r->planes[i].routed ? 1 : 0;
	fprintf(o, "smd dry-run: %u plane%s, chain %s%s%s%s%s\n", r->n_planes,
		r->n_planes == 1 ? "" : "s", r->chain, r->config[0] ? ", config " : "", r->config,
		r->profile[0] ? ", profile " : "", r->profile);
	for (unsigned i = 0; i < r->n_planes; i++)
		text_plane(o, r, &r->planes[i]);
	if (r->have_health)
		sm_planes_health_print(o, &r->health);
	fprintf(o, "summary: %u of %u planes routed; time: load %.1f ms, LIDs %.1f ms, routing %.1f ms, "
		"metrics %.1f ms, LFT file %.1f ms, total %.1f ms\n",
		routed, r->n_planes, r->t.load * 1e3, r->t.lids * 1e3, r->t.route * 1e3,
		r->t.metrics * 1e3, r->t.write * 1e3, r->t.total * 1e3);
	if (r->lfts_out[0])
		fprintf(o, "LFTs written to %s\n", r->lfts_out);
	if (fflush(o) || ferror(o))
		return -EIO;
	return 0;
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
		sm_json_obj_begin(j, "edge_forwarding_index");
		sm_json_uint(j, "max", m->efi_max);
		sm_json_double(j, "max_over_mean", m->efi_max_over_mean);
		sm_json_obj_end(j);
		sm_json_uint(j, "shift_max_congestion", m->shift_max_congestion);
		sm_json_obj_begin(j, "random_permutations");
		sm_json_uint(j, "count", r->n_random);
		sm_json_uint(j, "seed", r->seed);
		sm_json_double(j, "max_congestion_mean", m->rand_max_congestion_mean);
		sm_json_uint(j, "max_congestion", m->rand_max_congestion);
		sm_json_double(j, "ebb", m->ebb);
		sm_json_obj_end(j);
		if (credit_loop(p) < 0)
			sm_json_null(j, "credit_loop");
		else
			sm_json_bool(j, "credit_loop", credit_loop(p));
		sm_json_double(j, "seconds", m->seconds);
		sm_json_obj_end(j);
	} else {
		sm_json_null(j, "metrics");
	}

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
		sm_json_obj_end(j);
	} else {
		sm_json_null(j, "profile");
	}
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
	if (r->have_health)
		sm_planes_health_json(&j, "plane_health", &r->health);
	sm_json_obj_end(&j);
	return sm_json_finish(&j);
}
