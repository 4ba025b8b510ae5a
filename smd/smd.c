/* SPDX-License-Identifier: MIT */
/* DOC: smd main: parse the command line (options.h) and run one mode. */
#include "config.h"
#include "config/keys.h"
#include "config/options.h"
#include "lib/log.h"

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
	OPT_ONCE = 256, OPT_DRY_RUN, OPT_BACKEND, OPT_TOPOLOGY, OPT_PLANE, OPT_PROFILE,
	OPT_LFTS_OUT, OPT_LFTS_FORMAT, OPT_REPORT, OPT_JSON, OPT_SOCKET, OPT_STATE_DIR, OPT_GUID2LID, OPT_PARTITIONS,
	OPT_LMC,
	OPT_SEED, OPT_VERSION, OPT_DUMP_CONFIG_KEYS, OPT_CHECK_CONFIG, OPT_PRINT_CONFIG, OPT_PRINT_DEFAULTS,
	OPT_MCAST_GROUPS,
};

static void usage(FILE *o)
{
	fprintf(o,
		"Usage: smd [-f] [-c FILE] [BACKEND OPTIONS]       run the subnet manager (foreground)\n"
		"       smd --once [-c FILE] [BACKEND OPTIONS]     bring the subnet up, print a summary, exit\n"
		"       smd --dry-run -t DUMP [-t DUMP ...] [-R ENGINE[,ENGINE]] [--profile FILE] [--partitions FILE]\n"
		"           [-c FILE] [--lfts-out FILE [--lfts-format dump|compact]] [--report FILE|-] [--json]\n"
		"       smd --check-config [-c FILE]                check the configuration, print FILE: ok\n"
		"       smd --print-config [-c FILE] | --print-defaults   the effective configuration as YAML\n"
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
		"  --partitions FILE           partitions (OpenSM's partitions.conf, or YAML; smd-partitions(5))\n"
		"  --lmc N                     LMC 0-7\n"
		"  --socket PATH               control socket (for smctl)\n"
		"  --seed N                    seed for random permutations / fault injection\n"
		"  --mcast-groups N            dry-run: N synthetic multicast groups per plane in the report\n"
		"  -v, --verbose  -q, --quiet  -h, --help  -V, --version\n");
}

/*
 * The long options. Those with `set` only store their argument (a path, a
 * name) in that field of struct smd_opts; main() handles the others.
 */
#define O(n, arg, v) .name = n, .has_arg = arg, .val = v
#define SET(field) .set = 1, .off = offsetof(struct smd_opts, field)
static const struct smd_opt {
	const char *name;
	int has_arg, val;
	int set;
	size_t off;
} opts[] = {
	{ O("once", no_argument, OPT_ONCE) },
	{ O("foreground", no_argument, 'f') },
	{ O("dry-run", no_argument, OPT_DRY_RUN) },
	{ O("check-config", no_argument, OPT_CHECK_CONFIG) },
	{ O("print-config", no_argument, OPT_PRINT_CONFIG) },
	{ O("print-defaults", no_argument, OPT_PRINT_DEFAULTS) },
	{ O("config", required_argument, 'c'), SET(config) },
	{ O("topo", required_argument, 't') },
	{ O("routing", required_argument, 'R'), SET(engines) },
	{ O("backend", required_argument, OPT_BACKEND) },
	{ O("topology", required_argument, OPT_TOPOLOGY), SET(topology) },
	{ O("plane", required_argument, OPT_PLANE) },
	{ O("profile", required_argument, OPT_PROFILE), SET(profile) },
	{ O("lfts-out", required_argument, OPT_LFTS_OUT), SET(lfts_out) },
	{ O("lfts-format", required_argument, OPT_LFTS_FORMAT), SET(lfts_format) },
	{ O("report", required_argument, OPT_REPORT), SET(report) },
	{ O("json", no_argument, OPT_JSON) },
	{ O("socket", required_argument, OPT_SOCKET), SET(socket) },
	{ O("state-dir", required_argument, OPT_STATE_DIR), SET(state_dir) },
	{ O("guid2lid", required_argument, OPT_GUID2LID), SET(guid2lid) },
	{ O("partitions", required_argument, OPT_PARTITIONS), SET(partitions) },
	{ O("lmc", required_argument, OPT_LMC) },
	{ O("seed", required_argument, OPT_SEED) },
	{ O("mcast-groups", required_argument, OPT_MCAST_GROUPS) },
	{ O("verbose", no_argument, 'v') },
	{ O("quiet", no_argument, 'q') },
	{ O("help", no_argument, 'h') },
	{ O("version", no_argument, OPT_VERSION) },
	/* not in usage(): the smd.yaml key table for tests/conf_keys.sh (config/keys.h) */
	{ O("dump-config-keys", no_argument, OPT_DUMP_CONFIG_KEYS) },
};
#define N_OPTS (sizeof(opts) / sizeof(opts[0]))

/* The option that stores its argument, for getopt's value c; NULL if c is not one. */
static const struct smd_opt *set_opt(int c)
{
	for (size_t i = 0; i < N_OPTS; i++)
		if (opts[i].val == c && opts[i].set)
			return &opts[i];
	return NULL;
}

int main(int argc, char **argv)
{
	struct option lopts[N_OPTS + 1];
	const struct smd_opt *so;

	memset(lopts, 0, sizeof(lopts));
	for (size_t i = 0; i < N_OPTS; i++)
		lopts[i] = (struct option){ opts[i].name, opts[i].has_arg, NULL, opts[i].val };
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
		case OPT_CHECK_CONFIG: o.mode = SMD_MODE_CHECK_CONFIG; break;
		case OPT_PRINT_CONFIG: o.mode = SMD_MODE_PRINT_CONFIG; break;
		case OPT_PRINT_DEFAULTS: o.mode = SMD_MODE_PRINT_DEFAULTS; break;
		case 't':
			if (o.n_dumps >= SM_MAX_PLANES) {
				fprintf(stderr, "smd: at most %d -t dumps\n", SM_MAX_PLANES);
				return 2;
			}
			o.dumps[o.n_dumps++] = optarg;
			break;
		case OPT_BACKEND:
			if (strcmp(optarg, "umad") && strcmp(optarg, "mock") && strcmp(optarg, "ibsim")) {
				fprintf(stderr, "smd: unknown backend '%s' (umad, mock or ibsim)\n", optarg);
				return 2;
			}
			o.backend = optarg;
			break;
		case OPT_PLANE:
			if (o.n_planes >= SM_MAX_PLANES) {
				fprintf(stderr, "smd: at most %d --plane options\n", SM_MAX_PLANES);
				return 2;
			}
			o.planes[o.n_planes++] = optarg;
			break;
		case OPT_JSON: o.json = 1; break;
		case OPT_LMC:
			o.lmc = (int)strtol(optarg, &end, 10);
			if (*end || o.lmc < 0 || o.lmc > 7) {
				fprintf(stderr, "smd: --lmc must be 0-7\n");
				return 2;
			}
			break;
		case OPT_SEED: o.seed = (unsigned)strtoul(optarg, NULL, 0); break;
		case OPT_MCAST_GROUPS:
			o.mcast_groups = (unsigned)strtoul(optarg, &end, 0);
			if (*end || !*optarg || o.mcast_groups > 8192) {
				fprintf(stderr, "smd: --mcast-groups wants a number of groups, 0-8192\n");
				return 2;
			}
			break;
		case 'v': o.verbose++; break;
		case 'q': o.quiet = 1; break;
		case 'h': usage(stdout); return 0;
		case 'V':
		case OPT_VERSION: printf("smd %s\n", PACKAGE_VERSION); return 0;
		case OPT_DUMP_CONFIG_KEYS: smd_conf_keys_dump(stdout); return 0;
		default:
			if (!(so = set_opt(c))) {
				usage(stderr);
				return 2;
			}
			*(const char **)(void *)((char *)&o + so->off) = optarg;
			break;
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
	case SMD_MODE_CHECK_CONFIG: return smd_check_config(&o);
	case SMD_MODE_PRINT_CONFIG: return smd_print_config(&o, 0);
	case SMD_MODE_PRINT_DEFAULTS: return smd_print_config(&o, 1);
	default: return smd_daemon(&o);
	}
}
