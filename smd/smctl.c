/* SPDX-License-Identifier: MIT */
/* DOC: smctl main: global options, then a subcommand (smctl.h). */
#include "config.h"
#include "smctl.h"
#include "ctl/ctl.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *o)
{
	fprintf(o,
		"Usage: smctl [--socket PATH] [--json] COMMAND [ARGS]\n"
		"\n"
		"Commands:\n"
		"  topo gen fat-tree [OPTIONS] -o FILE   write a generated fat tree (see smctl(8))\n"
		"  topo info DUMP [DUMP...] [--plane N] [--from auto|ibnd|ibsim]\n"
		"                                        load dumps (one plane each), print a summary\n"
		"  topo convert DUMP -o FILE [--format ibnd|ibsim] [--from auto|ibnd|ibsim]\n"
		"  lft --file FILE [SWITCH] [--format dump|compact]\n"
		"                                        print an LFT file (dump_lfts text or compact)\n"
		"  lft --diff FILE_A FILE_B              compare two LFT files (exit 1 if they differ)\n"
		"\n"
		"Ask the running smd (--socket PATH, default /run/smd/smd.sock; exit 0 ok, 1 failed, 2 usage):\n");
	for (unsigned i = 0; i < SMD_CMD_N; i++)   /* the daemon's commands (ctl.h) */
		if (smd_ctl_cmds[i].help)
			fputs(smd_ctl_cmds[i].help, o);
	fprintf(o,
		"  help                                 this text\n"
		"SRC, DST, SWITCH: a LID, a port or node GUID, a node description or a host name.\n");
}

int main(int argc, char **argv)
{
	struct smctl_global g = { 0 };
	int i = 1;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--json")) {
			g.json = 1;
		} else if (!strcmp(argv[i], "--socket") && i + 1 < argc) {
			g.socket = argv[++i];
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "-V") || !strcmp(argv[i], "--version")) {
			printf("smctl %s\n", PACKAGE_VERSION);
			return 0;
		} else {
			fprintf(stderr, "smctl: unknown option '%s'\n", argv[i]);
			usage(stderr);
			return 2;
		}
	}
	if (i >= argc) {
		usage(stderr);
		return 2;
	}
	const char *cmd = argv[i];
	if (!strcmp(cmd, "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(cmd, "topo")) {
		if (i + 1 >= argc) {
			fprintf(stderr, "smctl: topo needs a subcommand (gen, info, convert)\n");
			return 2;
		}
		if (!strcmp(argv[i + 1], "gen"))
			return smctl_topo_gen(&g, argc - i - 2, argv + i + 2);
		return smctl_topo_cmd(&g, argc - i - 1, argv + i + 1);
	}
	if (!strcmp(cmd, "lft"))   /* an LFT file, not the daemon's tables */
		for (int k = i + 1; k < argc; k++)
			if (!strcmp(argv[k], "--file") || !strcmp(argv[k], "--diff"))
				return smctl_lft_offline(&g, argc - i - 1, argv + i + 1);
	const struct smd_ctl_cmd *dc = smd_ctl_cmd_find(cmd);
	if (dc && (dc->flags & SMD_CTL_CMD_OWN_WORDS) && dc == &smd_ctl_cmds[SMD_CMD_PROFILE])
		return smctl_profile_cmd(&g, argc - i - 1, argv + i + 1);   /* smd/smctl_profile.c */
	if (dc && (dc->flags & SMD_CTL_CMD_OWN_WORDS))
		return smctl_fault_cmd(&g, dc, argc - i - 1, argv + i + 1);   /* smd/smctl_fault.c */
	if (dc)
		return smctl_daemon_cmd(&g, argc - i, argv + i);   /* smd/smctl_cmds.c */
	fprintf(stderr, "smctl: unknown command '%s'\n", cmd);
	usage(stderr);
	return 2;
}
