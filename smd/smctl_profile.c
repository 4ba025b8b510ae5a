/* SPDX-License-Identifier: MIT */
/*
 * DOC: smctl profile load FILE | smctl profile clear
 *
 * Hands the running smd a traffic profile (absolute path) over the control
 * socket and waits for the sweep that applies it. The daemon checks the file
 * first; a bad one is refused with its FILE:LINE and the running profile
 * stays. Exit 0 applied, 1 refused or failed, 2 usage.
 */
#include "config.h"
#include "smctl.h"
#include "ctl/ctl.h"
#include "lib/json.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *o)
{
	fprintf(o, "Usage: smctl [--socket PATH] [--json] profile load FILE\n"
		   "       smctl [--socket PATH] [--json] profile clear\n");
}

int smctl_profile_cmd(const struct smctl_global *g, int argc, char **argv)
{
	const char *sock = g->socket ? g->socket : SMD_CTL_DEFAULT_SOCKET;
	char abs[PATH_MAX], *reply = NULL, *req = NULL;
	size_t reqlen = 0;
	struct smd_jv *r = NULL;
	int rc;

	if (argc < 1 || (!strcmp(argv[0], "load") && argc != 2) || (!strcmp(argv[0], "clear") && argc != 1) ||
	    (strcmp(argv[0], "load") && strcmp(argv[0], "clear"))) {
		usage(stderr);
		return 2;
	}
	abs[0] = '\0';
	if (!strcmp(argv[0], "load") && !realpath(argv[1], abs)) {
		fprintf(stderr, "smctl: %s: cannot open the profile: %m\n", argv[1]);
		return 1;
	}
	FILE *m = open_memstream(&req, &reqlen);
	if (!m) {
		fprintf(stderr, "smctl: out of memory\n");
		return 1;
	}
	fprintf(m, "{\"version\":%d,\"cmd\":\"profile\",\"path\":", SMD_CTL_VERSION);
	sm_json_write_string(m, abs, strlen(abs));
	fputc('}', m);
	fclose(m);
	rc = smctl_ask(sock, req, -1, NULL, NULL, &reply, &r);
	free(req);
	if (rc)
		return rc;
	int ok = smd_jv_bool(r, "ok", 0);
	if (g->json)
		printf("%s\n", reply);
	else if (ok)
		printf("profile %s; sweep %.0f: %s, %.0f planes up, %.0f failed, %.0f LFT blocks written, %.3f s\n",
		       abs[0] ? abs : "cleared", smd_jv_num(r, "sweeps", 0), smd_jv_str(r, "result", "?"),
		       smd_jv_num(r, "planes_up", 0), smd_jv_num(r, "failed", 0),
		       smd_jv_num(r, "lft_blocks_written", 0), smd_jv_num(r, "seconds", 0));
	if (!ok)
		fprintf(stderr, "smctl: smd: %s\n", smd_jv_str(r, "error", "request failed"));
	else if (smd_jv_num(r, "failed", 0) > 0)
		ok = 0;
	free(reply);
	smd_jv_free(r);
	return ok ? 0 : 1;
}
