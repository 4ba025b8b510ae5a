/* SPDX-License-Identifier: MIT */
/*
 * DOC: smctl profile load FILE | smctl profile clear
 *
 * Hands the running smd a traffic profile over the control socket and
 * waits for the sweep that applies it. The file's content is sent (at most
 * SMD_CTL_MAX_CONTENT bytes; a larger file is refused here), not its path:
 * under the shipped unit smd does not see the caller's /tmp or /home. The daemon checks the file
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

/* The whole file, at most SMD_CTL_MAX_CONTENT bytes, without NUL bytes; 0, or 1 after saying why. */
static int read_profile(const char *path, char **out, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0;

	if (!f) {
		fprintf(stderr, "smctl: %s: cannot open the profile: %m\n", path);
		return 1;
	}
	buf = malloc(SMD_CTL_MAX_CONTENT + 2);
	if (buf)
		n = fread(buf, 1, SMD_CTL_MAX_CONTENT + 1, f);
	int bad = !buf || ferror(f);
	fclose(f);
	if (bad || n > SMD_CTL_MAX_CONTENT || memchr(buf, '\0', n)) {
		if (!buf)
			fprintf(stderr, "smctl: out of memory\n");
		else if (bad)
			fprintf(stderr, "smctl: %s: cannot read the profile\n", path);
		else if (n > SMD_CTL_MAX_CONTENT)
			fprintf(stderr, "smctl: %s: larger than %u bytes, the limit of a profile sent to smd\n", path,
				SMD_CTL_MAX_CONTENT);
		else {
			const char *z = memchr(buf, '\0', n);
			unsigned line = 1;
			for (const char *q = buf; q < z; q++)
				line += *q == '\n';
			fprintf(stderr, "smctl: %s:%u: a NUL byte (a profile is text)\n", path, line);
		}
		free(buf);
		return 1;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
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
	char *content = NULL;
	size_t len = 0;
	if (!strcmp(argv[0], "load") && !realpath(argv[1], abs)) {
		fprintf(stderr, "smctl: %s: cannot open the profile: %m\n", argv[1]);
		return 1;
	}
	if (abs[0] && read_profile(abs, &content, &len))
		return 1;
	FILE *m = open_memstream(&req, &reqlen);
	if (!m) {
		free(content);
		fprintf(stderr, "smctl: out of memory\n");
		return 1;
	}
	/* SMD_CTL_BIG_PREFIX first: the daemon takes a line this long only when it begins so */
	fprintf(m, "%sprofile\"", SMD_CTL_BIG_PREFIX);
	if (content) {
		fputs(",\"name\":", m);
		sm_json_write_string(m, abs, strlen(abs));
		fputs(",\"content\":", m);
		sm_json_write_string(m, content, len);
	} else {
		fputs(",\"path\":\"\"", m);
	}
	fputc('}', m);
	free(content);
	if (fclose(m) || reqlen > SMD_CTL_MAX_BIG_REQ) {
		fprintf(stderr, "smctl: %s: %s\n", argv[1], reqlen > SMD_CTL_MAX_BIG_REQ ?
			"too large once encoded for the control socket" : "out of memory");
		free(req);
		return 1;
	}
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
