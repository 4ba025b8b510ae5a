/* SPDX-License-Identifier: MIT */
/*
 * DOC: smctl link, switch, faults: rehearsing failures on mock planes
 *
 *   smctl link down|up NODE PORT [--plane N] [--wait] [--timeout SEC]
 *   smctl switch down|up SWITCH [--plane N] [--wait] [--timeout SEC]
 *   smctl faults [--loss PCT] [--corrupt PCT] [--delay PCT] [--delay-ms MS]
 *                [--seed N] [--plane N]
 *
 * The daemon does the work (smd/daemon/cmd_fault.c) and refuses planes
 * that are not mock planes. --wait: when a trap reached smd, wait for the
 * sweep it causes (status polled until "sweeps" passes the reply's) and
 * say how it went. Exit 0 done, 1 refused or failed, 2 usage.
 */
#include "config.h"
#include "smctl.h"
#include "ctl/ctl.h"
#include "lib/json.h"
#include "lib/clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void usage(FILE *o)
{
	fprintf(o, "Usage: smctl [--socket PATH] [--json] link down|up NODE PORT [--plane N] [--wait] [--timeout SEC]\n"
		   "       smctl [--socket PATH] [--json] switch down|up SWITCH [--plane N] [--wait] [--timeout SEC]\n"
		   "       smctl [--socket PATH] [--json] faults [--loss PCT] [--corrupt PCT] [--delay PCT]\n"
		   "                                     [--delay-ms MS] [--seed N] [--plane N]\n"
		   "Mock planes only: PCT as 25%% or 0.5%%; NODE, SWITCH as for route.\n");
}

static void req_str(FILE *m, const char *key, const char *val)
{
	fprintf(m, ",\"%s\":", key);
	sm_json_write_string(m, val, strlen(val));
}

/* A whole number lo..hi; 0, or 2 after saying why. */
static int num_arg(const char *opt, const char *s, unsigned long lo, unsigned long hi, unsigned long *out)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (!s[0] || *end || s[0] == '-' || v < lo || v > hi) {
		fprintf(stderr, "smctl: %s takes a number %lu-%lu\n", opt, lo, hi);
		return 2;
	}
	*out = v;
	return 0;
}

/* After a link or switch event: wait for the sweep its trap causes. The exit status. */
static int wait_sweep(const char *sock, const struct smd_jv *r, int timeout_ms, int json)
{
	double before = smd_jv_num(r, "sweeps", 0);
	int64_t end = sm_mono_ms() + timeout_ms;

	if (!smd_jv_bool(r, "sweep_due", 0)) {
		if (!json)
			printf("no trap reached smd (no route from the switches yet?): the next light sweep sees it\n");
		return 0;
	}
	for (;;) {
		char *reply = NULL;
		struct smd_jv *s = NULL;
		if (smctl_ask(sock, "{\"version\":1,\"cmd\":\"status\"}", 5000, NULL, NULL, &reply, &s))
			return 1;
		double sweeps = smd_jv_num(s, "sweeps", 0);
		if (sweeps > before && strcmp(smd_jv_str(s, "state", ""), "sweeping")) {
			if (json)
				printf("%s\n", reply);
			else
				printf("sweep %.0f (%s): %s, %.0f switches, %.0f CAs, %.0f LIDs\n", sweeps,
				       smd_jv_str(s, "last_reason", "?"), smd_jv_str(s, "state", "?"),
				       smd_jv_num(s, "switches", 0), smd_jv_num(s, "cas", 0), smd_jv_num(s, "lids", 0));
			int up = !strcmp(smd_jv_str(s, "state", ""), "up");
			free(reply);
			smd_jv_free(s);
			return up ? 0 : 1;
		}
		free(reply);
		smd_jv_free(s);
		if (sm_mono_ms() > end) {
			fprintf(stderr, "smctl: no sweep after the trap within %d ms\n", timeout_ms);
			return 1;
		}
		nanosleep(&(struct timespec){ 0, 50 * 1000 * 1000 }, NULL);
	}
}

static void print_faults(const struct smd_jv *r)
{
	const struct smd_jv *pl = smd_jv_get(r, "planes");

	for (const struct smd_jv *p = pl && pl->type == SMD_J_ARR ? pl->child : NULL; p; p = p->next) {
		printf("plane %.0f (%s): loss %s, corrupt %s, delay %s (%.0f ms), seed %.0f; "
		       "%.0f SMPs, %.0f lost, %.0f corrupted, %.0f delayed, %.0f traps sent (%.0f lost)\n",
		       smd_jv_num(p, "plane", 0), smd_jv_str(p, "spec", "?"), smd_jv_str(p, "loss", "?"),
		       smd_jv_str(p, "corrupt", "?"), smd_jv_str(p, "delay", "?"), smd_jv_num(p, "delay_ms", 0),
		       smd_jv_num(p, "seed", 0), smd_jv_num(p, "requests", 0), smd_jv_num(p, "lost", 0),
		       smd_jv_num(p, "corrupted", 0), smd_jv_num(p, "delayed", 0), smd_jv_num(p, "traps_sent", 0),
		       smd_jv_num(p, "traps_lost", 0));
	}
}

int smctl_fault_cmd(const struct smctl_global *g, const struct smd_ctl_cmd *dc, int argc, char **argv)
{
	const char *sock = g->socket ? g->socket : SMD_CTL_DEFAULT_SOCKET;
	enum smd_ctl_cmd_id id = (enum smd_ctl_cmd_id)(dc - smd_ctl_cmds);
	unsigned want = id == SMD_CMD_LINK ? 3 : id == SMD_CMD_SWITCH ? 2 : 0, n_pos = 0;
	const char *pos[3] = { NULL, NULL, NULL };
	char *req = NULL, *reply = NULL;
	size_t reqlen = 0;
	unsigned long v, timeout_ms = 60000;
	int wait = 0, rc;
	struct smd_jv *r = NULL;
	FILE *m = open_memstream(&req, &reqlen);

	if (!m) {
		fprintf(stderr, "smctl: out of memory\n");
		return 1;
	}
	fprintf(m, "{\"version\":1,\"cmd\":\"%s\"", dc->name);
	for (int i = 0; i < argc; i++) {
		const char *o = argv[i];
		static const char *const shares[] = { "--loss", "loss", "--corrupt", "corrupt", "--delay", "delay" };
		int known = 0;
		for (unsigned k = 0; k < 6 && id == SMD_CMD_FAULTS; k += 2)
			if (!strcmp(o, shares[k]) && i + 1 < argc) {
				req_str(m, shares[k + 1], argv[++i]);
				known = 1;
			}
		if (known)
			continue;
		if (!strcmp(o, "--plane") && i + 1 < argc) {
			if ((rc = num_arg(o, argv[++i], 0, 255, &v)))
				goto out;
			fprintf(m, ",\"plane\":%lu", v);
		} else if (!strcmp(o, "--delay-ms") && i + 1 < argc && id == SMD_CMD_FAULTS) {
			if ((rc = num_arg(o, argv[++i], 1, 60000, &v)))
				goto out;
			fprintf(m, ",\"delay_ms\":%lu", v);
		} else if (!strcmp(o, "--seed") && i + 1 < argc && id == SMD_CMD_FAULTS) {
			if ((rc = num_arg(o, argv[++i], 0, 4294967295UL, &v)))
				goto out;
			fprintf(m, ",\"seed\":%lu", v);
		} else if (!strcmp(o, "--wait") && id != SMD_CMD_FAULTS) {
			wait = 1;
		} else if (!strcmp(o, "--timeout") && i + 1 < argc && id != SMD_CMD_FAULTS) {
			if ((rc = num_arg(o, argv[++i], 1, 86400, &v)))
				goto out;
			timeout_ms = v * 1000;
		} else if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
			usage(stdout);
			rc = 0;
			goto out;
		} else if (o[0] != '-' && n_pos < want) {
			pos[n_pos++] = o;
		} else {
			fprintf(stderr, "smctl %s: unexpected argument '%s'\n", dc->name, o);
			usage(stderr);
			rc = 2;
			goto out;
		}
	}
	if (n_pos != want || (want && strcmp(pos[0], "down") && strcmp(pos[0], "up"))) {
		fprintf(stderr, "smctl %s: %s\n", dc->name, id == SMD_CMD_LINK ? "needs down|up NODE PORT" :
			"needs down|up SWITCH");
		usage(stderr);
		rc = 2;
		goto out;
	}
	if (want) {
		req_str(m, "action", pos[0]);
		req_str(m, "node", pos[1]);
	}
	if (id == SMD_CMD_LINK) {
		if ((rc = num_arg("PORT", pos[2], 1, 254, &v)))
			goto out;
		fprintf(m, ",\"port\":%lu", v);
	}
	fputc('}', m);
	if (fclose(m)) {
		m = NULL;
		fprintf(stderr, "smctl: out of memory\n");
		rc = 1;
		goto out;
	}
	m = NULL;
	/* parked while a sweep runs: no timeout, as for a sweep */
	rc = smctl_ask(sock, req, -1, NULL, NULL, &reply, &r);
	if (rc)
		goto out;
	int ok = smd_jv_bool(r, "ok", 0);
	if (!ok) {
		if (g->json)
			printf("%s\n", reply);
		fprintf(stderr, "smctl: smd: %s\n", smd_jv_str(r, "error", "request failed"));
		rc = 1;
		goto out;
	}
	if (g->json)
		printf("%s\n", reply);
	else if (id == SMD_CMD_FAULTS)
		print_faults(r);
	else
		printf("plane %.0f: %s %s%s%s %s: %.0f link%s, %.0f trap%s sent%s\n", smd_jv_num(r, "plane", 0),
		       dc->name, smd_jv_str(r, "guid", "?"), smd_jv_get(r, "port") ? " port " : "",
		       smd_jv_get(r, "port") ? pos[2] : "", pos[0], smd_jv_num(r, "links", 0),
		       smd_jv_num(r, "links", 0) == 1 ? "" : "s", smd_jv_num(r, "traps_sent", 0),
		       smd_jv_num(r, "traps_sent", 0) == 1 ? "" : "s",
		       smd_jv_bool(r, "sweep_due", 0) ? "; a trap sweep follows" : "");
	rc = wait && id != SMD_CMD_FAULTS ? wait_sweep(sock, r, (int)timeout_ms, g->json) : 0;
out:
	if (m)
		fclose(m);
	free(req);
	free(reply);
	smd_jv_free(r);
	return rc;
}
