/* SPDX-License-Identifier: MIT */
/*
 * DOC: smctl commands that talk to a running smd (status, planes, sweep,
 * version) over the control socket (protocol: ctl.h).
 *
 * Each sends one request, reads one reply line; --json prints that line as
 * it came (the documented contract), otherwise it is rendered as text.
 * Exit: 0 ok, 1 no daemon / error reply / bad reply, 2 usage.
 */
#include "config.h"
#include "ctl.h"
#include "smctl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void cmd_usage(FILE *o)
{
	fprintf(o,
		"Usage: smctl [--socket PATH] [--json] status|planes|version\n"
		"       smctl [--socket PATH] [--json] sweep [--no-wait] [--timeout SEC]\n");
}

static unsigned long long num(const struct smd_jv *v, const char *key)
{
	double d = smd_jv_num(v, key, 0);
	return d > 0 ? (unsigned long long)d : 0;
}

static void print_status(const struct smd_jv *r)
{
	const char *last = smd_jv_str(r, "last_result", NULL);
	const struct smd_jv *age = smd_jv_get(r, "last_sweep_age_s");
	unsigned long long iv = num(r, "sweep_interval");

	printf("state      %s", smd_jv_str(r, "state", "?"));
	if (last)
		printf(" (last sweep: %s)", last);
	printf("\nplanes     %llu/%llu up\n", num(r, "planes_up"), num(r, "planes"));
	printf("switches   %llu\nCAs        %llu\nLIDs       %llu\n", num(r, "switches"), num(r, "cas"),
	       num(r, "lids"));
	printf("sweeps     %llu", num(r, "sweeps"));
	if (age && age->type == SMD_J_NUM)
		printf(" (last took %.3f s, ended %.1f s ago)", smd_jv_num(r, "last_sweep_s", 0), age->num);
	if (iv)
		printf(", every %llu s\n", iv);
	else
		printf(", on request only\n");
	if (smd_jv_str(r, "last_reason", NULL))
		printf("last cause %s\n", smd_jv_str(r, "last_reason", ""));
	if (num(r, "traps"))
		printf("traps      %llu between sweeps (last that asked for one: %s)\n", num(r, "traps"),
		       smd_jv_str(r, "last_trap", "none"));
	printf("engine     %s (chain %s)\n", smd_jv_str(r, "engine", "?"), smd_jv_str(r, "chain", "?"));
	if (smd_jv_str(r, "lid_table_error", NULL))
		printf("LID table  cannot be saved: %s\n", smd_jv_str(r, "lid_table_error", ""));
	printf("pid        %llu, up %.0f s\n", num(r, "pid"), smd_jv_num(r, "uptime_s", 0));
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
	if (pl)
		printf("plane-consistent LIDs: %llu hosts/switches in the table, %llu fresh, %llu conflicts resolved\n",
		       num(pl, "keys"), num(pl, "fresh"), num(pl, "conflicts"));
	printf("(columns: blocks = LFT blocks written in the last sweep; cycles = sweeps up / swept)\n");
	print_health(smd_jv_get(r, "health"), smd_jv_str(r, "health_error", NULL));
}

int smctl_daemon_cmd(const struct smctl_global *g, int argc, char **argv)
{
	const char *cmd = argv[0];
	const char *path = g->socket ? g->socket : SMD_CTL_DEFAULT_SOCKET;
	int json = g->json, nowait = 0, timeout_ms = 5000, rc;
	char req[256], err[512] = "", *reply = NULL;
	struct smd_jv *r = NULL;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = 1;
		} else if (!strcmp(argv[i], "--socket") && i + 1 < argc) {
			path = argv[++i];
		} else if (!strcmp(argv[i], "--no-wait") && !strcmp(cmd, "sweep")) {
			nowait = 1;
		} else if (!strcmp(argv[i], "--timeout") && i + 1 < argc && !strcmp(cmd, "sweep")) {
			char *end;
			double s = strtod(argv[++i], &end);
			if (*end || s <= 0 || s > 86400) {
				fprintf(stderr, "smctl: --timeout takes seconds (0-86400)\n");
				return 2;
			}
			timeout_ms = (int)(s * 1000);
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			cmd_usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "smctl %s: unexpected argument '%s'\n", cmd, argv[i]);
			cmd_usage(stderr);
			return 2;
		}
	}
	if (!strcmp(cmd, "sweep")) {
		snprintf(req, sizeof(req), "{\"version\":%d,\"cmd\":\"sweep\",\"wait\":%s}", SMD_CTL_VERSION,
			 nowait ? "false" : "true");
		/* a sweep on a large fabric takes its time: wait unless --timeout was given */
		if (!nowait && timeout_ms == 5000)
			timeout_ms = -1;
	} else {
		snprintf(req, sizeof(req), "{\"version\":%d,\"cmd\":\"%s\"}", SMD_CTL_VERSION, cmd);
	}
	rc = smd_ctl_call(path, req, timeout_ms, &reply, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "smctl: %s\n", err);
		return 1;
	}
	rc = smd_json_parse(reply, strlen(reply), &r, err, sizeof(err));
	if (rc || r->type != SMD_J_OBJ) {
		fprintf(stderr, "smctl: %s: bad reply (%s)\n", path, rc ? err : "not an object");
		free(reply);
		smd_jv_free(r);
		return 1;
	}
	int ok = smd_jv_bool(r, "ok", 0);
	if (json) {
		printf("%s\n", reply);
	} else if (!ok) {
		/* printed below on stderr */
	} else if (!strcmp(cmd, "status")) {
		print_status(r);
	} else if (!strcmp(cmd, "planes")) {
		print_planes(r);
	} else if (!strcmp(cmd, "version")) {
		printf("smd %s (control protocol %llu), smctl %s\n", smd_jv_str(r, "smd", "?"), num(r, "protocol"),
		       PACKAGE_VERSION);
	} else if (smd_jv_bool(r, "queued", 0)) {
		printf("sweep queued\n");
	} else {
		printf("sweep %llu: %s, %llu/%llu planes up, %llu LFT blocks and %llu PortInfo written, %.3f s\n",
		       num(r, "sweeps"), smd_jv_str(r, "result", "?"), num(r, "planes_up"),
		       num(r, "planes_up") + num(r, "failed"), num(r, "lft_blocks_written"),
		       num(r, "portinfo_sets"), smd_jv_num(r, "seconds", 0));
	}
	if (!ok)
		fprintf(stderr, "smctl: smd: %s\n", smd_jv_str(r, "error", "request failed"));
	/* a sweep whose cycle left planes down is a failed operation */
	if (ok && !strcmp(cmd, "sweep") && !nowait && num(r, "failed"))
		ok = 0;
	free(reply);
	smd_jv_free(r);
	return ok ? 0 : 1;
}
