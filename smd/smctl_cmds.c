/* SPDX-License-Identifier: MIT */
/*
 * DOC: smctl commands that talk to a running smd over the control socket
 * (protocol: ctl.h): status, planes, version, sweep/resweep, nodes, links,
 * route, lft, dump topology, metrics, engine.
 *
 * Each builds one request, reads one reply line; --json prints that line
 * as it came (the documented contract), otherwise it is rendered as text
 * (metrics: Prometheus text format). A sweep that has waited longer than
 * PROGRESS_MS prints progress lines to stderr, from status requests on a
 * second connection (the state of the daemon and how long the cycle has
 * been running), while the first connection waits for the sweep's reply.
 * Exit: 0 ok, 1 no daemon / error reply / failed operation (a sweep that
 * left planes down, a broken route, nothing found), 2 usage.
 */
#include "config.h"
#include "ctl/ctl.h"
#include "lib/json.h"
#include "smctl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROGRESS_MS 1000

static void cmd_usage(FILE *o)
{
	fprintf(o,
		"Usage: smctl [--socket PATH] [--json] status|planes|version|metrics\n"
		"       smctl [--socket PATH] [--json] resweep|sweep [--heavy|--reread] [--no-wait] [--timeout SEC]\n"
		"       smctl [--socket PATH] [--json] nodes|links [--plane N]\n"
		"       smctl [--socket PATH] [--json] route SRC DST [--plane N]\n"
		"       smctl [--socket PATH] [--json] lft SWITCH [--plane N]\n"
		"       smctl [--socket PATH] [--json] dump topology [--plane N]\n"
		"       smctl [--socket PATH] [--json] engine set NAME[,NAME...]\n"
		"SRC, DST, SWITCH: a LID, a GUID, a node description or a host name (lid:N, guid:G force one)\n");
}

static unsigned long long num(const struct smd_jv *v, const char *key)
{
	double d = smd_jv_num(v, key, 0);
	return d > 0 ? (unsigned long long)d : 0;
}

static const struct smd_jv *arr_of(const struct smd_jv *r, const char *key);

/* A plane's master/standby role (status "sm" entries, planes' "sm" member). */
static void print_role(const struct smd_jv *p, unsigned long long plane)
{
	printf("SM         plane %llu: %s, GUID %s, LID %llu, priority %llu", plane, smd_jv_str(p, "role", "?"),
	       smd_jv_str(p, "guid", "unknown"), num(p, "lid"), num(p, "priority"));
	if (!smd_jv_bool(p, "elected", 1)) {
		printf(" (no election: no other SM can reach this plane)\n");
		return;
	}
	printf("; master %s LID %llu priority %llu", smd_jv_str(p, "master_guid", "none"), num(p, "master_lid"),
	       num(p, "master_priority"));
	if (num(p, "takeovers") || num(p, "handovers") || num(p, "refused") || num(p, "damped"))
		printf(" (%llu takeovers, %llu handovers, %llu refused, %llu damped)", num(p, "takeovers"),
		       num(p, "handovers"), num(p, "refused"), num(p, "damped"));
	printf("\n");
}


static void print_status(const struct smd_jv *r)
{
	const char *last = smd_jv_str(r, "last_result", NULL);
	const struct smd_jv *age = smd_jv_get(r, "last_sweep_age_s");
	unsigned long long iv = num(r, "sweep_interval");

	printf("state      %s", smd_jv_str(r, "state", "?"));
	if (last)
		printf(" (last sweep: %s)", last);
	printf("\nplanes     %llu/%llu up", num(r, "planes_up"), num(r, "planes"));
	if (num(r, "planes_incomplete")) {
		const struct smd_jv *retry = smd_jv_get(r, "incomplete_retry_s");
		printf(", %llu INCOMPLETE (answers lost: nothing the last complete sweep had is dropped", num(r, "planes_incomplete"));
		if (retry && retry->type == SMD_J_NUM)
			printf("; heavy sweep again in %.1f s", retry->num);
		printf(")");
	}
	printf("\n");
	printf("switches   %llu\nCAs        %llu\nLIDs       %llu\n", num(r, "switches"), num(r, "cas"),
	       num(r, "lids"));
	printf("sweeps     %llu", num(r, "sweeps"));
	if (age && age->type == SMD_J_NUM)
		printf(" (last took %.3f s, ended %.1f s ago)", smd_jv_num(r, "last_sweep_s", 0), age->num);
	if (iv)
		printf(", every %llu s\n", iv);
	else
		printf(", on request only\n");
	if (smd_jv_get(r, "heavy_sweeps")) {
		printf("kinds      %llu heavy, %llu light (%llu escalated to heavy)", num(r, "heavy_sweeps"),
		       num(r, "light_sweeps"), num(r, "escalations"));
		if (smd_jv_get(r, "mcast_cycles"))   /* not sweeps: MFT-only passes after group changes */
			printf("; %llu multicast cycles", num(r, "mcast_cycles"));
		printf("\n");
	}
	if (smd_jv_str(r, "last_reason", NULL))
		printf("last cause %s\n", smd_jv_str(r, "last_reason", ""));
	/* a cycle running now: for how long, and the phase each plane's bring-up is in */
	const struct smd_jv *run = smd_jv_get(r, "sweep_running_s");
	if (run && run->type == SMD_J_NUM) {
		unsigned k = 0, shown = 0;
		printf("sweeping   for %.1f s", run->num);
		for (const struct smd_jv *ph = arr_of(r, "sweep_phases"); ph; ph = ph->next, k++)
			if (ph->type == SMD_J_STR)
				printf("%s plane %u %s", shown++ ? "," : ":", k, ph->str);
		printf("\n");
	}
	if (num(r, "traps"))
		printf("traps      %llu between sweeps (last that asked for one: %s)\n", num(r, "traps"),
		       smd_jv_str(r, "last_trap", "none"));
	printf("engine     %s (chain %s)\n", smd_jv_str(r, "engine", "?"), smd_jv_str(r, "chain", "?"));
	if (smd_jv_str(r, "lid_table_error", NULL))
		printf("LID table  cannot be saved: %s\n", smd_jv_str(r, "lid_table_error", ""));
	printf("pid        %llu, up %.0f s\n", num(r, "pid"), smd_jv_num(r, "uptime_s", 0));
	for (const struct smd_jv *p = arr_of(r, "sm"); p; p = p->next)
		print_role(p, num(p, "plane"));
}

/* The "health" member (hosts.h sm_planes_health_json) as a table. */
static void print_health(const struct smd_jv *h, const char *herr)
{
	const struct smd_jv *pp = smd_jv_get(h, "per_plane");

	if (!h || h->type != SMD_J_OBJ) {
		printf("plane health: not available%s%s\n", herr ? ": " : "", herr ? herr : "");
		return;
	}
	printf("plane health (last sweep): %llu planes, %llu hosts (%llu with an uneven NIC count), %s\n",
	       num(h, "planes"), num(h, "hosts"), num(h, "uneven_hosts"),
	       smd_jv_bool(h, "asymmetric", 0) ? "ASYMMETRIC" : "symmetric");
	printf("  %-10s %8s %8s %6s %8s %8s %7s %9s %9s %6s\n", "plane", "switches", "sw-links", "nics",
	       "-switch", "-links", "no-nic", "share-min", "share-avg", "below");
	for (const struct smd_jv *p = pp && pp->type == SMD_J_ARR ? pp->child : NULL; p; p = p->next)
		printf("  %-10.10s %8llu %8llu %6llu %8llu %8llu %7llu %9.4f %9.4f %6llu\n", smd_jv_str(p, "name", "?"),
		       num(p, "switches"), num(p, "switch_links"), num(p, "nics"), num(p, "missing_switches"),
		       num(p, "missing_links"), num(p, "hosts_without_nic"), smd_jv_num(p, "share_min", 0),
		       smd_jv_num(p, "share_mean", 0), num(p, "hosts_below_fair"));
	printf("  (-switch/-links: fewer than the best plane; share: bandwidth share a plane offers a host;\n"
	       "   below: hosts under 90%% of the fair share)\n");
}

static void print_planes(const struct smd_jv *r)
{
	const struct smd_jv *arr = smd_jv_get(r, "planes");
	const struct smd_jv *pl = smd_jv_get(r, "plane_lids");

	printf("%-4s %-32s %-9s %8s %6s %6s %11s %7s %7s %8s %s\n", "idx", "plane", "state", "switches",
	       "cas", "lids", "active/link", "blocks", "cycles", "time_s", "engine");
	for (const struct smd_jv *p = arr && arr->type == SMD_J_ARR ? arr->child : NULL; p; p = p->next) {
		char al[32];
		snprintf(al, sizeof(al), "%llu/%llu", num(p, "active_ports"), num(p, "link_ports"));
		printf("%-4llu %-32.32s %-9s %8llu %6llu %6llu %11s %7llu %3llu/%-3llu %8.3f %s\n", num(p, "index"),
		       smd_jv_str(p, "spec", "?"), smd_jv_str(p, "state", "?"), num(p, "switches"), num(p, "cas"),
		       num(p, "lids"), al, num(p, "lft_blocks_written"), num(p, "cycles_up"),
		       num(p, "cycles_up") + num(p, "cycles_failed"), smd_jv_num(p, "seconds", 0),
		       smd_jv_str(p, "engine", "-"));
	}
	for (const struct smd_jv *p = arr && arr->type == SMD_J_ARR ? arr->child : NULL; p; p = p->next)
		if (smd_jv_str(p, "error", NULL))
			printf("plane %llu (%s) failed after %llu attempt(s): %s\n", num(p, "index"),
			       smd_jv_str(p, "spec", "?"), num(p, "attempts"), smd_jv_str(p, "error", ""));
	for (const struct smd_jv *p = arr && arr->type == SMD_J_ARR ? arr->child : NULL; p; p = p->next)
		if (smd_jv_get(p, "sm"))
			print_role(smd_jv_get(p, "sm"), num(p, "index"));
	if (pl)
		printf("plane-consistent LIDs: %llu hosts/switches in the table, %llu fresh, %llu conflicts resolved\n",
		       num(pl, "keys"), num(pl, "fresh"), num(pl, "conflicts"));
	printf("(columns: blocks = LFT blocks written in the last sweep; cycles = sweeps up / swept)\n");
	print_health(smd_jv_get(r, "health"), smd_jv_str(r, "health_error", NULL));
}

static const struct smd_jv *arr_of(const struct smd_jv *r, const char *key)
{
	const struct smd_jv *a = smd_jv_get(r, key);
	return a && a->type == SMD_J_ARR ? a->child : NULL;
}

/*
 * The per-plane entries of a fabric reply: planes without data ("error")
 * are reported on stderr. Returns how many entries have data; *n_entries
 * gets all of them.
 */
static unsigned planes_with_data(const struct smd_jv *r, unsigned *n_entries)
{
	unsigned n = 0, all = 0;
	for (const struct smd_jv *p = arr_of(r, "planes"); p; p = p->next, all++) {
		if (smd_jv_get(p, "cycle"))
			n++;
		else
			fprintf(stderr, "smctl: plane %llu: %s\n", num(p, "plane"), smd_jv_str(p, "error", "no data"));
	}
	*n_entries = all;
	return n;
}

static int print_nodes(const struct smd_jv *r)
{
	unsigned all, n = planes_with_data(r, &all);

	for (const struct smd_jv *p = arr_of(r, "planes"); p; p = p->next) {
		unsigned sw = 0, ca = 0, other = 0;
		if (!smd_jv_get(p, "cycle"))
			continue;
		for (const struct smd_jv *nd = arr_of(p, "nodes"); nd; nd = nd->next) {
			const char *t = smd_jv_str(nd, "type", "");
			sw += !strcmp(t, "Switch");
			ca += !strcmp(t, "Ca");
			other += strcmp(t, "Switch") && strcmp(t, "Ca");
		}
		printf("plane %llu (sweep %llu): %u switches, %u CAs", num(p, "plane"), num(p, "cycle"), sw, ca);
		if (other)
			printf(", %u other nodes", other);
		printf("\n  %-6s %-18s %5s %5s %5s  %s\n", "type", "guid", "lid", "ports", "links", "description");
		for (const struct smd_jv *nd = arr_of(p, "nodes"); nd; nd = nd->next) {
			printf("  %-6s %-18s %5llu %5llu %5llu  %s", smd_jv_str(nd, "type", "?"),
			       smd_jv_str(nd, "guid", "?"), num(nd, "lid"), num(nd, "ports"), num(nd, "links"),
			       smd_jv_str(nd, "desc", ""));
			/* a CA with several LID-bearing ports: the others too */
			unsigned k = 0, shown = 0;
			for (const struct smd_jv *l = arr_of(nd, "port_lids"); l; l = l->next) {
				k++;
				if (l->type == SMD_J_NUM && l->num > 0 && (unsigned long long)l->num != num(nd, "lid"))
					printf("%s port %u lid %.0f", shown++ ? "," : "  (also", k, l->num);
			}
			printf("%s\n", shown ? ")" : "");
		}
	}
	return n && n == all ? 0 : 1;
}

static void end_str(char *buf, size_t len, const struct smd_jv *e)
{
	snprintf(buf, len, "%s %s[%llu] lid %llu \"%s\"", smd_jv_str(e, "type", "?"), smd_jv_str(e, "guid", "?"),
		 num(e, "port"), num(e, "lid"), smd_jv_str(e, "desc", ""));
}

static int print_links(const struct smd_jv *r)
{
	unsigned all, n = planes_with_data(r, &all);
	char a[160], b[160];

	for (const struct smd_jv *p = arr_of(r, "planes"); p; p = p->next) {
		unsigned cnt = 0;
		if (!smd_jv_get(p, "cycle"))
			continue;
		for (const struct smd_jv *l = arr_of(p, "links"); l; l = l->next)
			cnt++;
		printf("plane %llu (sweep %llu): %u links\n", num(p, "plane"), num(p, "cycle"), cnt);
		for (const struct smd_jv *l = arr_of(p, "links"); l; l = l->next) {
			const char *st = smd_jv_str(l, "state", "?"), *ps = smd_jv_str(l, "peer_state", "?");
			end_str(a, sizeof(a), smd_jv_get(l, "a"));
			end_str(b, sizeof(b), smd_jv_get(l, "b"));
			printf("  %s <-> %s  %s%s  %s", a, b, smd_jv_str(l, "width", "?"), smd_jv_str(l, "speed", "?"), st);
			if (strcmp(st, ps))
				printf("/%s", ps);
			printf("\n");
		}
	}
	return n && n == all ? 0 : 1;
}

static char *lower_type(const char *t, char *buf, size_t len)
{
	snprintf(buf, len, "%s", !strcmp(t, "Ca") ? "ca" : !strcmp(t, "Switch") ? "switch" : !strcmp(t, "Router") ? "router" : t);
	return buf;
}

/* One plane's route, in the shape of infiniband-diags' ibtracert. */
static void print_route(const struct smd_jv *p)
{
	const struct smd_jv *src = smd_jv_get(p, "src"), *dst = smd_jv_get(p, "dst");
	const char *res = smd_jv_str(p, "result", "?");
	char t[16];
	unsigned long long out;

	printf("plane %llu (sweep %llu): ", num(p, "plane"), num(p, "cycle"));
	if (!src || !dst) {
		printf("%s: %s\n", res, smd_jv_str(p, "error", ""));
		return;
	}
	printf("%s to lid %llu: %s\n", smd_jv_str(src, "desc", "?"), num(p, "dlid"), res);
	printf("  From %s {%s} portnum %llu lid %llu \"%s\"\n", lower_type(smd_jv_str(src, "type", "?"), t, sizeof(t)),
	       smd_jv_str(src, "guid", "?"), num(src, "port"), num(src, "lid"), smd_jv_str(src, "desc", ""));
	out = num(src, "port");
	const struct smd_jv *h = arr_of(p, "hops");
	/* a switch source is the first hop itself: its line is the From line */
	if (h && !strcmp(smd_jv_str(src, "type", ""), "Switch")) {
		const struct smd_jv *o = smd_jv_get(h, "out_port");
		out = o && o->type == SMD_J_NUM ? (unsigned long long)o->num : 255;
		h = h->next;
	}
	const struct smd_jv *last = NULL;
	for (; h; h = h->next) {
		printf("  [%llu] -> switch port {%s}[%llu] lid %llu \"%s\"\n", out, smd_jv_str(h, "guid", "?"),
		       num(h, "in_port"), num(h, "lid"), smd_jv_str(h, "desc", ""));
		const struct smd_jv *o = smd_jv_get(h, "out_port");
		out = o && o->type == SMD_J_NUM ? (unsigned long long)o->num : 255;
		last = h;
	}
	if (!strcmp(res, "ok")) {
		if (strcmp(smd_jv_str(dst, "type", ""), "Switch"))
			printf("  [%llu] -> %s port {%s}[%llu] lid %llu \"%s\"\n", out,
			       lower_type(smd_jv_str(dst, "type", "?"), t, sizeof(t)), smd_jv_str(dst, "port_guid", "?"),
			       num(dst, "port"), num(dst, "lid"), smd_jv_str(dst, "desc", ""));
		printf("  To %s {%s} portnum %llu lid %llu \"%s\"\n", lower_type(smd_jv_str(dst, "type", "?"), t, sizeof(t)),
		       smd_jv_str(dst, "guid", "?"), num(dst, "port"), num(dst, "lid"), smd_jv_str(dst, "desc", ""));
		return;
	}
	const struct smd_jv *arr = smd_jv_get(p, "arrived");
	if (arr)
		printf("  [%llu] -> %s {%s}[%llu] lid %llu \"%s\": not the destination\n", out,
		       lower_type(smd_jv_str(arr, "type", "?"), t, sizeof(t)), smd_jv_str(arr, "port_guid", "?"),
		       num(arr, "port"), num(arr, "lid"), smd_jv_str(arr, "desc", ""));
	else if (!strcmp(res, "no route") && last)
		printf("  ! switch {%s} has no LFT entry for lid %llu\n", smd_jv_str(last, "guid", "?"), num(p, "dlid"));
	else if (!strcmp(res, "loop") && last)
		printf("  [%llu] -> back to a switch already on the path: routing loop\n", out);
	else if (!strcmp(res, "dead end"))
		printf("  [%llu] -> port has no link\n", out);
	else
		printf("  ! %s\n", res);
}

static int print_routes(const struct smd_jv *r)
{
	for (const struct smd_jv *p = arr_of(r, "planes"); p; p = p->next) {
		if (!smd_jv_get(p, "cycle")) {
			fprintf(stderr, "smctl: plane %llu: %s\n", num(p, "plane"), smd_jv_str(p, "error", "no data"));
			continue;
		}
		print_route(p);
	}
	return num(r, "broken") || !num(r, "routed") ? 1 : 0;
}

/* lft and dump: the text of each plane; a "# plane N" line between planes when there are several. */
static int print_texts(const struct smd_jv *r, const char *cmd)
{
	unsigned all, n = planes_with_data(r, &all), shown = 0;

	for (const struct smd_jv *p = arr_of(r, "planes"); p; p = p->next) {
		const char *text = smd_jv_str(p, "text", NULL);
		if (!smd_jv_get(p, "cycle"))
			continue;
		if (!text) {
			if (!strcmp(cmd, "lft"))
				printf("# plane %llu: %s\n", num(p, "plane"), smd_jv_str(p, "error", "not found"));
			continue;
		}
		if (all > 1)
			printf("# plane %llu (sweep %llu)\n", num(p, "plane"), num(p, "cycle"));
		fputs(text, stdout);
		shown++;
	}
	return n && shown ? 0 : 1;
}

static void print_sweep(const struct smd_jv *r, const char *cmd)
{
	if (smd_jv_bool(r, "queued", 0)) {
		printf("%s queued\n", cmd);
		return;
	}
	if (!strcmp(cmd, "engine"))
		printf("engine chain %s: ", smd_jv_str(r, "chain", "?"));
	printf("sweep %llu", num(r, "sweeps"));
	if (smd_jv_str(r, "ran", NULL))
		printf(" (%s%s)", smd_jv_str(r, "ran", ""), smd_jv_bool(r, "escalated", 0) ? ", escalated from light" : "");
	printf(": %s, %llu/%llu planes up", smd_jv_str(r, "result", "?"), num(r, "planes_up"),
	       num(r, "planes_up") + num(r, "failed") + num(r, "standby"));
	if (num(r, "standby"))
		printf(" (%llu standby)", num(r, "standby"));
	printf(", %llu LFT blocks and %llu PortInfo written, %.3f s", num(r, "lft_blocks_written"),
	       num(r, "portinfo_sets"), smd_jv_num(r, "seconds", 0));
	if (!strcmp(cmd, "engine") && smd_jv_str(r, "engine", NULL))
		printf(", routed by %s", smd_jv_str(r, "engine", ""));
	printf("\n");
}

/* ---- progress of a sweep someone waits for ---- */
struct progress {
	const char *path;
	const char *what;
};

static void progress_tick(void *arg, double waited)
{
	const struct progress *pg = arg;
	char *reply = NULL, err[256];
	struct smd_jv *r = NULL;
	char req[64];

	snprintf(req, sizeof(req), "{\"version\":%d,\"cmd\":\"status\"}", SMD_CTL_VERSION);
	if (smd_ctl_call(pg->path, req, 2000, &reply, err, sizeof(err)) ||
	    smd_json_parse(reply, strlen(reply), &r, err, sizeof(err))) {
		fprintf(stderr, "smctl: %s: waiting, %.0f s\n", pg->what, waited);
	} else {
		const struct smd_jv *run = smd_jv_get(r, "sweep_running_s");
		fprintf(stderr, "smctl: %s: waiting %.0f s; daemon %s", pg->what, waited, smd_jv_str(r, "state", "?"));
		if (run && run->type == SMD_J_NUM) {
			const struct smd_jv *ph = smd_jv_get(r, "sweep_phases");
			unsigned k = 0, shown = 0, n = ph && ph->type == SMD_J_ARR ? ph->n : 0;
			fprintf(stderr, ", sweep %llu running for %.1f s", num(r, "sweeps") + 1, run->num);
			/* where each plane's bring-up is (planes in a light sweep or done have none) */
			for (const struct smd_jv *p = n ? ph->child : NULL; p; p = p->next, k++) {
				if (p->type != SMD_J_STR)
					continue;
				if (n == 1)
					fprintf(stderr, " (%s)", p->str);
				else
					fprintf(stderr, "%splane %u %s", shown ? ", " : " (", k, p->str);
				shown++;
			}
			if (shown && n > 1)
				fprintf(stderr, ")");
		} else {
			fprintf(stderr, ", between sweeps (%llu done)", num(r, "sweeps"));
		}
		if (num(r, "sweeps"))
			fprintf(stderr, ", the last took %.1f s", smd_jv_num(r, "last_sweep_s", 0));
		fprintf(stderr, "\n");
	}
	smd_jv_free(r);
	free(reply);
}

/* ---- argument parsing ---- */
struct args {
	const char *cmd;                /* the word given */
	const struct smd_ctl_cmd *dc;   /* its entry in the command table (ctl.h) */
	const char *path;
	int json, nowait, heavy, reread, plane;   /* plane -1: all */
	int timeout_ms;
	const char *pos[3];
	unsigned n_pos;
};

static int parse_args(const struct smctl_global *g, int argc, char **argv, struct args *a)
{
	const struct smd_ctl_cmd *dc = smd_ctl_cmd_find(argv[0]);
	int sweep = !!(dc->flags & SMD_CTL_CMD_SWEEP_OPTS);
	int planed = !!(dc->flags & SMD_CTL_CMD_PLANE);
	unsigned max_pos = smd_ctl_cmd_n_args(dc);

	memset(a, 0, sizeof(*a));
	a->cmd = argv[0];
	a->dc = dc;
	a->path = g->socket ? g->socket : SMD_CTL_DEFAULT_SOCKET;
	a->json = g->json;
	a->plane = -1;
	a->timeout_ms = -2;   /* not given */
	for (int i = 1; i < argc; i++) {
		char *end;
		if (!strcmp(argv[i], "--json")) {
			a->json = 1;
		} else if (!strcmp(argv[i], "--socket") && i + 1 < argc) {
			a->path = argv[++i];
		} else if (!strcmp(argv[i], "--no-wait") && sweep) {
			a->nowait = 1;
		} else if (!strcmp(argv[i], "--heavy") && sweep) {
			a->heavy = 1;
		} else if (!strcmp(argv[i], "--reread") && sweep) {
			a->reread = 1;
		} else if (!strcmp(argv[i], "--timeout") && i + 1 < argc && sweep) {
			double s = strtod(argv[++i], &end);
			if (*end || s <= 0 || s > 86400) {
				fprintf(stderr, "smctl: --timeout takes seconds (0-86400)\n");
				return 2;
			}
			a->timeout_ms = (int)(s * 1000);
		} else if (!strcmp(argv[i], "--plane") && i + 1 < argc && planed) {
			long v = strtol(argv[++i], &end, 10);
			if (*end || !argv[i][0] || v < 0 || v > 255) {
				fprintf(stderr, "smctl: --plane takes a plane index\n");
				return 2;
			}
			a->plane = (int)v;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			cmd_usage(stdout);
			return -1;
		} else if ((argv[i][0] != '-' || !argv[i][1]) && a->n_pos < max_pos) {
			a->pos[a->n_pos++] = argv[i];
		} else {
			fprintf(stderr, "smctl %s: unexpected argument '%s'\n", a->cmd, argv[i]);
			cmd_usage(stderr);
			return 2;
		}
	}
	if (a->n_pos != max_pos) {
		fprintf(stderr, "smctl %s: %s\n", a->cmd, dc->args_missing);
		cmd_usage(stderr);
		return 2;
	}
	if (dc->word0 && strcmp(a->pos[0], dc->word0)) {
		fprintf(stderr, "smctl %s: %s\n", a->cmd, dc->word0_wrong);
		return 2;
	}
	return 0;
}

/* A success reply as text; the exit status. */
static int print_reply(const struct args *a, enum smd_ctl_cmd_id id, const struct smd_jv *r)
{
	char err[512];

	switch (id) {
	case SMD_CMD_STATUS: print_status(r); return 0;
	case SMD_CMD_PLANES: print_planes(r); return 0;
	case SMD_CMD_VERSION:
		printf("smd %s (control protocol %llu), smctl %s\n", smd_jv_str(r, "smd", "?"), num(r, "protocol"),
		       PACKAGE_VERSION);
		return 0;
	case SMD_CMD_NODES: return print_nodes(r);
	case SMD_CMD_LINKS: return print_links(r);
	case SMD_CMD_ROUTE: return print_routes(r);
	case SMD_CMD_LFT:
	case SMD_CMD_DUMP: return print_texts(r, a->cmd);
	case SMD_CMD_RELOAD:
		printf("reloaded %s", smd_jv_str(r, "source", "?"));
		if (smd_jv_str(r, "notes", "")[0])
			printf("; changes to %s need a restart (not applied)", smd_jv_str(r, "notes", ""));
		printf("\n");
		return 0;
	case SMD_CMD_CONFIG:
		fputs(smd_jv_str(r, "text", ""), stdout);
		return 0;
	case SMD_CMD_METRICS:
		if (smd_metrics_render(stdout, r, err, sizeof(err))) {
			fprintf(stderr, "smctl: %s: bad metrics reply: %s\n", a->path, err);
			return 1;
		}
		return 0;
	default:
		print_sweep(r, a->cmd);
		/* a sweep whose cycle left planes down is a failed operation */
		return !a->nowait && num(r, "failed") ? 1 : 0;
	}
}

int smctl_ask(const char *sock, const char *req, int timeout_ms, smd_ctl_tick_fn *tick, void *tick_arg,
	      char **reply, struct smd_jv **r)
{
	char err[512] = "";
	int rc = smd_ctl_call_ex(sock, req, timeout_ms, PROGRESS_MS, tick, tick_arg, reply, err, sizeof(err));

	*r = NULL;
	if (rc) {
		fprintf(stderr, "smctl: %s\n", err);
		return 1;
	}
	rc = smd_json_parse(*reply, strlen(*reply), r, err, sizeof(err));
	if (rc || (*r)->type != SMD_J_OBJ) {
		fprintf(stderr, "smctl: %s: bad reply (%s)\n", sock, rc ? err : "not an object");
		free(*reply);
		*reply = NULL;
		smd_jv_free(*r);
		*r = NULL;
		return 1;
	}
	return 0;
}

/* Append ,"key":"value" (value JSON-escaped) to a memstream request. */
static void req_str(FILE *m, const char *key, const char *val)
{
	fprintf(m, ",\"%s\":", key);
	sm_json_write_string(m, val, strlen(val));
}

int smctl_daemon_cmd(const struct smctl_global *g, int argc, char **argv)
{
	struct args a;
	char *reply = NULL, *req = NULL;
	size_t req_len = 0;
	struct smd_jv *r = NULL;
	int rc, status = 0;

	if ((rc = parse_args(g, argc, argv, &a)))
		return rc < 0 ? 0 : rc;
	enum smd_ctl_cmd_id id = (enum smd_ctl_cmd_id)(a.dc - smd_ctl_cmds);
	int sweep = !!(a.dc->flags & SMD_CTL_CMD_SWEEP_OPTS);
	const char *wire = a.dc->name;
	FILE *m = open_memstream(&req, &req_len);
	if (!m) {
		fprintf(stderr, "smctl: out of memory\n");
		return 1;
	}
	fprintf(m, "{\"version\":%d,\"cmd\":\"%s\"", SMD_CTL_VERSION, wire);
	if (sweep)
		fprintf(m, ",\"wait\":%s,\"kind\":\"%s\"", a.nowait ? "false" : "true",
			a.reread ? "reread" : a.heavy ? "heavy" : "light");
	if (a.plane >= 0)
		fprintf(m, ",\"plane\":%d", a.plane);
	for (unsigned k = 0; k < a.n_pos; k++)
		req_str(m, a.dc->args[k], a.pos[k]);
	fputs("}", m);
	if (fclose(m)) {
		free(req);
		fprintf(stderr, "smctl: out of memory\n");
		return 1;
	}
	/* a sweep (and engine set, which sweeps) on a large fabric takes its time: wait unless --timeout says */
	int waits = (a.dc->flags & SMD_CTL_CMD_WAITS) && !a.nowait;
	int timeout = a.timeout_ms != -2 ? a.timeout_ms : waits ? -1 : 10000;
	struct progress pg = { .path = a.path, .what = sweep ? "sweep" : "engine set" };
	rc = smctl_ask(a.path, req, timeout, waits ? progress_tick : NULL, &pg, &reply, &r);
	free(req);
	if (rc)
		return rc;
	int ok = smd_jv_bool(r, "ok", 0);
	if (!ok) {
		if (a.json)
			printf("%s\n", reply);
		fprintf(stderr, "smctl: smd: %s\n", smd_jv_str(r, "error", "request failed"));
		status = 1;
	} else if (a.json) {
		printf("%s\n", reply);
		/* the exit status means the same with --json */
		if (id == SMD_CMD_ROUTE)
			status = num(r, "broken") || !num(r, "routed");
		else if (waits)
			status = num(r, "failed") ? 1 : 0;
	} else {
		status = print_reply(&a, id, r);
	}
	if (ok && a.json && (a.dc->flags & SMD_CTL_CMD_PLANE_DATA)) {
		unsigned all;
		status = planes_with_data(r, &all) ? 0 : 1;
	}
	free(reply);
	smd_jv_free(r);
	return status;
}
