/* SPDX-License-Identifier: MIT */
/*
 * DOC: the control protocol's framing and vocabulary (ctl.h), shared by
 * the server (server.c, the daemon) and the client (client.c, smctl)
 *
 * A request line is checked here (one flat JSON object, a "cmd", version
 * 1), replies are begun here, and the table of commands says, for each
 * "cmd", what both sides need to know: its smctl words and help lines, the
 * request members those words fill, and whether its reply waits for a
 * sweep. Nothing here logs.
 */
#include "ctl/ctl.h"
#include "ctl/ctl_priv.h"
#include "lib/json.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

/* ---- requests ---- */

int smd_ctl_parse_request(const char *buf, size_t len, struct smd_jv **out, const char **cmd,
			  char *err, size_t errlen)
{
	struct smd_jv *v = NULL;
	const struct smd_jv *m;
	char perr[160];
	int rc;

	size_t max = smd_ctl_max_request(buf, len);

	if (len > max) {
		snprintf(err, errlen, "request longer than %zu bytes", max);
		return -E2BIG;
	}
	rc = smd_json_parse(buf, len, &v, perr, sizeof(perr));
	if (rc) {
		snprintf(err, errlen, "bad JSON: %s", perr);
		return rc;
	}
	if (v->type != SMD_J_OBJ) {
		snprintf(err, errlen, "a request is a JSON object");
		goto bad;
	}
	for (m = v->child; m; m = m->next)
		if (m->type == SMD_J_OBJ || m->type == SMD_J_ARR) {
			snprintf(err, errlen, "member '%.40s': nested values are not accepted", m->key);
			goto bad;
		}
	m = smd_jv_get(v, "version");
	if (m && (m->type != SMD_J_NUM || m->num != SMD_CTL_VERSION)) {
		snprintf(err, errlen, "unsupported protocol version (this smd speaks %d)", SMD_CTL_VERSION);
		goto bad;
	}
	m = smd_jv_get(v, "cmd");
	if (!m || m->type != SMD_J_STR || !m->str[0]) {
		snprintf(err, errlen, "missing \"cmd\" (a string)");
		goto bad;
	}
	*cmd = m->str;
	*out = v;
	return 0;
bad:
	smd_jv_free(v);
	return -EINVAL;
}

/* ---- replies ---- */

void smd_ctl_reply_begin(struct sm_json *j, const char *cmd)
{
	sm_json_obj_begin(j, NULL);
	sm_json_uint(j, "version", SMD_CTL_VERSION);
	sm_json_bool(j, "ok", 1);
	sm_json_str(j, "cmd", cmd);
}

char *smd_ctl_error_line(const char *msg, size_t *len)
{
	struct sm_json j;
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	if (!f)
		return NULL;
	sm_json_init(&j, f, 0);
	sm_json_obj_begin(&j, NULL);
	sm_json_uint(&j, "version", SMD_CTL_VERSION);
	sm_json_bool(&j, "ok", 0);
	sm_json_str(&j, "error", msg);
	sm_json_obj_end(&j);
	int rc = sm_json_finish(&j);   /* adds the newline */
	if (fclose(f) || rc) {
		free(buf);
		return NULL;
	}
	if (len)
		*len = n;
	return buf;
}

/* ---- sockets (both sides) ---- */

int smd_ctl_set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

int smd_ctl_fill_addr(struct sockaddr_un *sa, const char *path, char *err, size_t errlen)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (!path || !path[0] || strlen(path) >= sizeof(sa->sun_path)) {
		snprintf(err, errlen, "socket path '%s' is empty or longer than %zu bytes", path ? path : "",
			 sizeof(sa->sun_path) - 1);
		return -EINVAL;
	}
	memcpy(sa->sun_path, path, strlen(path));
	return 0;
}

/* ---- the commands ---- */

#define VIEW (SMD_CTL_CMD_PLANE | SMD_CTL_CMD_DAEMON)
#define FAULT (SMD_CTL_CMD_PLANE | SMD_CTL_CMD_DAEMON | SMD_CTL_CMD_OWN_WORDS)

const struct smd_ctl_cmd smd_ctl_cmds[SMD_CMD_N] = {
	[SMD_CMD_STATUS] = { "status", .help =
		"  status | planes | version | metrics  state, per-plane results, versions, Prometheus metrics\n" },
	[SMD_CMD_PLANES] = { "planes" },
	[SMD_CMD_VERSION] = { "version" },
	[SMD_CMD_METRICS] = { "metrics", .flags = SMD_CTL_CMD_DAEMON },
	[SMD_CMD_NODES] = { "nodes", .flags = VIEW | SMD_CTL_CMD_PLANE_DATA, .help =
		"  nodes | links [--plane N]            the fabric as last brought up, per plane\n" },
	[SMD_CMD_LINKS] = { "links", .flags = VIEW | SMD_CTL_CMD_PLANE_DATA },
	[SMD_CMD_ROUTE] = { "route", .flags = VIEW, .args = { "src", "dst" }, .args_missing = "needs SRC and DST",
		.help = "  route SRC DST [--plane N]            path hop by hop through the programmed LFTs\n" },
	[SMD_CMD_LFT] = { "lft", .flags = VIEW | SMD_CTL_CMD_PLANE_DATA, .args = { "switch" },
		.args_missing = "needs a SWITCH",
		.help = "  lft SWITCH [--plane N]               a switch's LFT as programmed (dump_lfts format)\n" },
	[SMD_CMD_DUMP] = { "dump", .flags = VIEW | SMD_CTL_CMD_PLANE_DATA, .args = { "what" },
		.args_missing = "needs what to dump: topology", .word0 = "topology",
		.word0_wrong = "only 'dump topology' exists",
		.help = "  dump topology [--plane N]            the fabric in ibnetdiscover format\n" },
	[SMD_CMD_SWEEP] = { "sweep", .alias = "resweep", .flags = SMD_CTL_CMD_SWEEP_OPTS | SMD_CTL_CMD_WAITS, .help =
		"  resweep [--heavy|--reread] [--no-wait] [--timeout SEC]\n"
		"                                       run a sweep cycle now and wait for it (alias: sweep):\n"
		"                                       light; --heavy rediscovers and reroutes; --reread also\n"
		"                                       reads every LFT block back\n" },
	[SMD_CMD_ENGINE] = { "engine", .flags = SMD_CTL_CMD_DAEMON | SMD_CTL_CMD_WAITS, .args = { "action", "chain" },
		.args_missing = "needs: set NAME[,NAME...]", .word0 = "set",
		.word0_wrong = "only 'engine set NAME[,NAME...]' exists (status shows the engine)",
		.help = "  engine set NAME[,NAME...]            route with this engine chain from the next sweep on\n" },
	[SMD_CMD_PROFILE] = { "profile", .flags = SMD_CTL_CMD_WAITS | SMD_CTL_CMD_OWN_WORDS | SMD_CTL_CMD_BIG_REQ, .help =
		"  profile load FILE | profile clear    route with a traffic profile from now on (hotpath, planes)\n" },
	[SMD_CMD_RELOAD] = { "reload", .help =
		"  reload                               re-read the config file; exit 1 if smd refused it\n" },
	[SMD_CMD_CONFIG] = { "config", .help =
		"  config                               the running configuration (smd.yaml text)\n" },
	/* rehearsing failures on mock planes (smd/daemon/cmd_fault.c, smd/smctl_fault.c) */
	[SMD_CMD_LINK] = { "link", .flags = FAULT, .help =
		"  link down|up NODE PORT [--plane N] [--wait]\n"
		"  switch down|up SWITCH [--plane N] [--wait]\n"
		"                                       mock planes: pull a cable (or all of a switch's) and\n"
		"                                       plug it back, with the traps a fabric sends\n" },
	[SMD_CMD_SWITCH] = { "switch", .flags = FAULT },
	[SMD_CMD_FAULTS] = { "faults", .flags = FAULT, .help =
		"  faults [--loss PCT] [--corrupt PCT] [--delay PCT] [--delay-ms MS] [--seed N] [--plane N]\n"
		"                                       mock planes: SMP loss, corruption, delay\n" },
};

const struct smd_ctl_cmd *smd_ctl_cmd_find(const char *word)
{
	for (unsigned i = 0; i < SMD_CMD_N; i++) {
		const struct smd_ctl_cmd *c = &smd_ctl_cmds[i];
		if (!strcmp(c->name, word) || (c->alias && !strcmp(c->alias, word)))
			return c;
	}
	return NULL;
}

unsigned smd_ctl_cmd_n_args(const struct smd_ctl_cmd *c)
{
	unsigned n = 0;

	while (n < sizeof(c->args) / sizeof(c->args[0]) && c->args[n])
		n++;
	return n;
}

size_t smd_ctl_max_request(const char *buf, size_t len)
{
	size_t p = strlen(SMD_CTL_BIG_PREFIX);

	if (len <= p || memcmp(buf, SMD_CTL_BIG_PREFIX, p))
		return SMD_CTL_MAX_REQ;
	for (unsigned i = 0; i < SMD_CMD_N; i++) {
		const struct smd_ctl_cmd *c = &smd_ctl_cmds[i];
		size_t n = strlen(c->name);
		if ((c->flags & SMD_CTL_CMD_BIG_REQ) && len > p + n && !memcmp(buf + p, c->name, n) &&
		    buf[p + n] == '"')
			return SMD_CTL_MAX_BIG_REQ;
	}
	return SMD_CTL_MAX_REQ;
}
