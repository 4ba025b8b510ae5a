/* SPDX-License-Identifier: MIT */
#ifndef SMD_SMCTL_H
#define SMD_SMCTL_H
/* DOC: smctl subcommands. Each takes the words after its name and returns an exit status (0/1/2). */
#include "ctl/ctl.h"

struct smctl_global {
	const char *socket;  /* --socket PATH */
	int json;            /* --json */
};
int smctl_topo_gen(const struct smctl_global *g, int argc, char **argv);  /* smd/smctl_gen.c */
int smctl_topo_cmd(const struct smctl_global *g, int argc, char **argv);  /* smd/smctl_topo.c: info, convert */
/* smd/smctl_lftfile.c: lft --file FILE [SWITCH] [--format dump|compact], lft --diff A B (no daemon) */
int smctl_lft_offline(const struct smctl_global *g, int argc, char **argv);
int smctl_profile_cmd(const struct smctl_global *g, int argc, char **argv);  /* smd/smctl_profile.c */
/* link, switch, faults: rehearsing failures on mock planes (smd/smctl_fault.c) */
int smctl_fault_cmd(const struct smctl_global *g, const struct smd_ctl_cmd *dc, int argc, char **argv);
/*
 * Send one request line to the daemon at sock (timeout_ms and tick as
 * smd_ctl_call_ex; smd/smctl_cmds.c) and read its reply: 0 with *reply
 * (malloc'ed) and *r (the reply object), or 1 after saying why on stderr.
 */
int smctl_ask(const char *sock, const char *req, int timeout_ms, smd_ctl_tick_fn *tick, void *tick_arg,
	      char **reply, struct smd_jv **r);
#endif
