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
		"\n"
		"Ask the running smd (--socket PATH, default /run/smd/smd.sock; exit 0 ok, 1 failed, 2 usage):\n"
		"  status | planes | version | metrics  state, per-plane results, versions, Prometheus metrics\n"
		"  nodes | links [--plane N]            the fabric as last brought up, per plane\n"
		"  route SRC DST [--plane N]            path hop by hop through the programmed LFTs\n"
		"  lft SWITCH [--plane N]               a switch's LFT as programmed (dump_lfts format)\n"
		"  dump topology [--plane N]            the fabric in ibnetdiscover format\n"
		"  resweep [--heavy|--reread] [--no-wait] [--timeout SEC]\n"
		"                                       run a sweep cycle now and wait for it (alias: sweep):\n"
		"                                       light; --heavy rediscovers and reroutes; --reread also\n"
		"                                       reads every LFT block back\n"
		"  engine set NAME[,NAME...]            route with this engine chain from the next sweep on\n"
		"  profile load FILE | profile clear    route with a traffic profile from now on (hotpath, planes)\n"
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
	if (!strcmp(cmd, "profile"))
		return smctl_profile_cmd(&g, argc - i - 1, argv + i + 1);
	static const char *const daemon_cmds[] = { "status", "planes", "sweep", "resweep", "version", "nodes",
						   "links", "route", "lft", "dump", "metrics", "engine" };
	for (size_t k = 0; k < sizeof(daemon_cmds) / sizeof(daemon_cmds[0]); k++)
		if (!strcmp(cmd, daemon_cmds[k]))
			return smctl_daemon_cmd(&g, argc - i, argv + i);   /* smd/smctl_cmds.c */
	fprintf(stderr, "smctl: unknown command '%s'\n", cmd);
	usage(stderr);
	return 2;
}
