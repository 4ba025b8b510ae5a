/* SPDX-License-Identifier: MIT */
/* DOC: smd main: parse the command line (options.h) and run one mode. */
#include "config.h"
#include "config/keys.h"
#include "config/options.h"
#include "lib/log.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
	OPT_ONCE = 256, OPT_DRY_RUN, OPT_BACKEND, OPT_TOPOLOGY, OPT_PLANE, OPT_PROFILE,
	OPT_LFTS_OUT, OPT_REPORT, OPT_JSON, OPT_SOCKET, OPT_STATE_DIR, OPT_GUID2LID, OPT_LMC,
	OPT_SEED, OPT_VERSION, OPT_DUMP_CONFIG_KEYS,
};

static void usage(FILE *o)
{
	fprintf(o,
		"Usage: smd [-f] [-c FILE] [BACKEND OPTIONS]       run the subnet manager (foreground)\n"
		"       smd --once [-c FILE] [BACKEND OPTIONS]     bring the subnet up, print a summary, exit\n"
		"       smd --dry-run -t DUMP [-t DUMP ...] [-R ENGINE[,ENGINE]] [--profile FILE]\n"
		"           [-c FILE] [--lfts-out FILE] [--report FILE|-] [--json]\n"
		"\n"
		"Backend options:\n"
		"  --backend umad|mock|ibsim   MAD transport (default umad on the SM's default port)\n"
		"  --topology DUMP             fabric for the mock backend (ibnetdiscover or ibsim net file)\n"
		"  --plane SPEC                umad:CA:PORT, mock:DUMP or ibsim:NODE; repeat per plane\n"
		"Other options:\n"
		"  -c, --config FILE           YAML configuration (see smd.yaml(5))\n"
		"  -R, --routing ENGINES       engine chain, e.g. ftree,minhop (minhop updn ftree planes hotpath)\n"
		"  --state-dir DIR             where guid2lid and state are kept\n"
		"  --guid2lid FILE             read LIDs from this (OpenSM-format) guid2lid file\n"
		"  --lmc N                     LMC 0-7\n"
		"  --socket PATH               control socket (for smctl)\n"
		"  --seed N                    seed for random permutations / fault injection\n"
		"  -v, --verbose  -q, --quiet  -h, --help  -V, --version\n");
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "once", no_argument, NULL, OPT_ONCE },
		{ "foreground", no_argument, NULL, 'f' },
		{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
		{ "config", required_argument, NULL, 'c' },
		{ "topo", required_argument, NULL, 't' },
		{ "routing", required_argument, NULL, 'R' },
		{ "backend", required_argument, NULL, OPT_BACKEND },
		{ "topology", required_argument, NULL, OPT_TOPOLOGY },
		{ "plane", required_argument, NULL, OPT_PLANE },
		{ "profile", required_argument, NULL, OPT_PROFILE },
		{ "lfts-out", required_argument, NULL, OPT_LFTS_OUT },
		{ "report", required_argument, NULL, OPT_REPORT },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "socket", required_argument, NULL, OPT_SOCKET },
		{ "state-dir", required_argument, NULL, OPT_STATE_DIR },
		{ "guid2lid", required_argument, NULL, OPT_GUID2LID },
		{ "lmc", required_argument, NULL, OPT_LMC },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		/* not in usage(): the smd.yaml key table for tests/conf_keys.sh (config/keys.h) */
		{ "dump-config-keys", no_argument, NULL, OPT_DUMP_CONFIG_KEYS },
		{ NULL, 0, NULL, 0 },
	};
	struct smd_opts o;
	int c;
	char *end;

	memset(&o, 0, sizeof(o));
	o.lmc = -1;
	while ((c = getopt_long(argc, argv, "fc:t:R:vqhV", lopts, NULL)) != -1) {
		switch (c) {
		case OPT_ONCE: o.mode = SMD_MODE_ONCE; break;
		case 'f': o.mode = SMD_MODE_DAEMON; break;
		case OPT_DRY_RUN: o.mode = SMD_MODE_DRY_RUN; break;
		case 'c': o.config = optarg; break;
		case 't':
			if (o.n_dumps >= SM_MAX_PLANES) {
				fprintf(stderr, "smd: at most %d -t dumps\n", SM_MAX_PLANES);
				return 2;
			}
			o.dumps[o.n_dumps++] = optarg;
			break;
		case 'R': o.engines = optarg; break;
		case OPT_BACKEND:
			if (strcmp(optarg, "umad") && strcmp(optarg, "mock") && strcmp(optarg, "ibsim")) {
				fprintf(stderr, "smd: unknown backend '%s' (umad, mock or ibsim)\n", optarg);
				return 2;
			}
			o.backend = optarg;
			break;
		case OPT_TOPOLOGY: o.topology = optarg; break;
		case OPT_PLANE:
			if (o.n_planes >= SM_MAX_PLANES) {
				fprintf(stderr, "smd: at most %d --plane options\n", SM_MAX_PLANES);
				return 2;
			}
			o.planes[o.n_planes++] = optarg;
			break;
		case OPT_PROFILE: o.profile = optarg; break;
		case OPT_LFTS_OUT: o.lfts_out = optarg; break;
		case OPT_REPORT: o.report = optarg; break;
		case OPT_JSON: o.json = 1; break;
		case OPT_SOCKET: o.socket = optarg; break;
		case OPT_STATE_DIR: o.state_dir = optarg; break;
		case OPT_GUID2LID: o.guid2lid = optarg; break;
		case OPT_LMC:
			o.lmc = (int)strtol(optarg, &end, 10);
			if (*end || o.lmc < 0 || o.lmc > 7) {
				fprintf(stderr, "smd: --lmc must be 0-7\n");
				return 2;
			}
			break;
		case OPT_SEED: o.seed = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'v': o.verbose++; break;
		case 'q': o.quiet = 1; break;
		case 'h': usage(stdout); return 0;
		case 'V':
		case OPT_VERSION: printf("smd %s\n", PACKAGE_VERSION); return 0;
		case OPT_DUMP_CONFIG_KEYS: smd_conf_keys_dump(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "smd: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	sm_log_init("smd", o.quiet ? SM_LOG_WARN : SM_LOG_NOTICE + o.verbose);
	switch (o.mode) {
	case SMD_MODE_ONCE: return smd_once(&o);
	case SMD_MODE_DRY_RUN: return smd_dry_run(&o);
	default: return smd_daemon(&o);
	}
}
