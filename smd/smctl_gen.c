/* SPDX-License-Identifier: MIT */
/*
 * DOC: smctl topo gen
 *
 * Command-line front end of the fabric generator (gen.h): parses
 * `smctl topo gen fat-tree [OPTIONS] -o FILE`, builds the fabric with
 * sm_gen_fat_tree() and writes it with the topology writers (topo.h), one
 * file, or one file per plane with --split (FILE.0 .. FILE.P-1).
 *
 * Exit status: 0 done, 2 usage error (unknown option, missing value or
 * output, options that do not go together), 1 bad value (not a number, out
 * of range, a fabric the generator refuses) or a write error. A failed
 * write removes the partial file.
 *
 * A one-line summary goes to stdout (stderr when the fabric itself goes to
 * stdout with -o -); with smctl --json it is a JSON object instead.
 */
#include "config.h"
#include "smctl.h"
#include "model/gen.h"
#include "model/topo.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct gen_cli {
	struct sm_gen_params p;
	enum sm_topo_format fmt;
	const char *output;
	int split;
};

static void gen_usage(FILE *o)
{
	fprintf(o,
		"Usage: smctl topo gen fat-tree [OPTIONS] -o FILE\n"
		"\n"
		"  --hosts N            hosts per plane (default: the full tree)\n"
		"  --radix K            switch ports, 2..254 (default 64)\n"
		"  --levels 2|3         tree levels (default: 2 if the hosts fit, else 3)\n"
		"  --planes P           planes, one NIC per host in each, 1..16 (default 1)\n"
		"  --oversub A:B        leaf host ports : uplinks (default 1:1)\n"
		"  --remove-links F     remove this fraction (0..1) of switch-switch links per plane\n"
		"  --remove-switches N  remove N non-leaf switches per plane\n"
		"  --remove-nics N      leave N random hosts without their NIC in each plane\n"
		"  --fault-plane P      remove links/switches/NICs only in plane P\n"
		"  --seed S             seed of the removals (default 1)\n"
		"  --format ibnd|ibsim  ibnetdiscover dump (default) or ibsim net file\n"
		"  --no-lids            do not assign LIDs\n"
		"  --shuffle-lids       random LIDs per plane (not plane-consistent; seeded)\n"
		"  --split              one file per plane: FILE.0 .. FILE.P-1\n"
		"  -o, --output FILE    where to write ('-' for stdout)\n"
		"\n"
		"Multi-plane ibnetdiscover output needs --split (a dump holds one subnet);\n"
		"an ibsim net file holds all planes as separate subnets.\n");
}

/* Unsigned decimal integer <= max; 0 or -1 with a message. */
static int parse_uint(const char *opt, const char *s, unsigned long long max,
		      unsigned long long *out)
{
	char *end;

	errno = 0;
	if (!s[0] || s[0] == '-' || s[0] == '+' || s[0] == ' ')
		goto bad;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end || v > max)
		goto bad;
	*out = v;
	return 0;
bad:
	fprintf(stderr, "smctl topo gen: bad value for %s: '%s' (want an integer 0..%llu)\n",
		opt, s, max);
	return -1;
}

static int parse_uint32(const char *opt, const char *s, unsigned *out)
{
	unsigned long long v;
	if (parse_uint(opt, s, UINT_MAX, &v))
		return -1;
	*out = (unsigned)v;
	return 0;
}

static int parse_oversub(const char *s, struct sm_gen_params *p)
{
	const char *colon = strchr(s, ':');
	char a[32];

	if (!colon || (size_t)(colon - s) >= sizeof(a)) {
		fprintf(stderr, "smctl topo gen: bad value for --oversub: '%s' (want A:B, e.g. 2:1)\n", s);
		return -1;
	}
	memcpy(a, s, (size_t)(colon - s));
	a[colon - s] = '\0';
	if (parse_uint32("--oversub", a, &p->oversub_down) ||
	    parse_uint32("--oversub", colon + 1, &p->oversub_up))
		return -1;
	return 0;
}

static int parse_fraction(const char *s, double *out)
{
	char *end;

	errno = 0;
	double v = strtod(s, &end);
	if (!s[0] || errno || *end || !isfinite(v) || v < 0.0 || v > 1.0) {
		fprintf(stderr,
			"smctl topo gen: bad value for --remove-links: '%s' (want a fraction 0..1)\n", s);
		return -1;
	}
	*out = v;
	return 0;
}

/* Returns 0, or the exit status (1 or 2) to stop with. */
static int parse_args(int argc, char **argv, struct gen_cli *c)
{
	int i;

	if (argc < 1) {
		fprintf(stderr, "smctl topo gen: which kind of fabric? (fat-tree)\n");
		gen_usage(stderr);
		return 2;
	}
	if (!strcmp(argv[0], "-h") || !strcmp(argv[0], "--help")) {
		gen_usage(stdout);
		return -1;
	}
	if (strcmp(argv[0], "fat-tree")) {
		fprintf(stderr, "smctl topo gen: unknown kind '%s' (known: fat-tree)\n", argv[0]);
		return 2;
	}
	for (i = 1; i < argc; i++) {
		const char *opt = argv[i], *val = NULL;
		char name[32];
		const char *eq = strchr(opt, '=');

		/* --opt=value as well as --opt value */
		if (!strncmp(opt, "--", 2) && eq && (size_t)(eq - opt) < sizeof(name)) {
			memcpy(name, opt, (size_t)(eq - opt));
			name[eq - opt] = '\0';
			opt = name;
			val = eq + 1;
		}
		if (!strcmp(opt, "-h") || !strcmp(opt, "--help")) {
			gen_usage(stdout);
			return -1;
		}
		int flag = !strcmp(opt, "--no-lids") || !strcmp(opt, "--split") ||
			   !strcmp(opt, "--shuffle-lids");
		if (flag) {
			if (val) {
				fprintf(stderr, "smctl topo gen: %s takes no value\n", opt);
				return 2;
			}
			if (!strcmp(opt, "--no-lids"))
				c->p.no_lids = 1;
			else if (!strcmp(opt, "--shuffle-lids"))
				c->p.shuffle_lids = 1;
			else
				c->split = 1;
			continue;
		}
		static const char *const known[] = {
			"--hosts", "--radix", "--levels", "--planes", "--oversub", "--remove-links",
			"--remove-switches", "--remove-nics", "--fault-plane", "--seed", "--format", "-o", "--output",
		};
		int ok = 0;
		for (size_t k = 0; k < sizeof(known) / sizeof(known[0]); k++)
			ok |= !strcmp(opt, known[k]);
		if (!ok) {
			fprintf(stderr, "smctl topo gen: unknown option '%s'\n", argv[i]);
			gen_usage(stderr);
			return 2;
		}
		if (!val) {
			if (i + 1 >= argc) {
				fprintf(stderr, "smctl topo gen: %s needs a value\n", opt);
				return 2;
			}
			val = argv[++i];
		}
		int rc = 0;
		unsigned long long v = 0;
		if (!strcmp(opt, "--hosts"))
			rc = parse_uint32(opt, val, &c->p.hosts);
		else if (!strcmp(opt, "--radix"))
			rc = parse_uint32(opt, val, &c->p.radix);
		else if (!strcmp(opt, "--levels"))
			rc = parse_uint32(opt, val, &c->p.levels);
		else if (!strcmp(opt, "--planes"))
			rc = parse_uint32(opt, val, &c->p.planes);
		else if (!strcmp(opt, "--oversub"))
			rc = parse_oversub(val, &c->p);
		else if (!strcmp(opt, "--remove-links"))
			rc = parse_fraction(val, &c->p.remove_links);
		else if (!strcmp(opt, "--remove-switches"))
			rc = parse_uint32(opt, val, &c->p.remove_switches);
		else if (!strcmp(opt, "--remove-nics"))
			rc = parse_uint32(opt, val, &c->p.remove_nics);
		else if (!strcmp(opt, "--fault-plane")) {
			rc = parse_uint(opt, val, SM_MAX_PLANES - 1, &v);
			c->p.fault_plane = (int)v;
		} else if (!strcmp(opt, "--seed")) {
			rc = parse_uint(opt, val, UINT64_MAX, &v);
			c->p.seed = v;
		} else if (!strcmp(opt, "--format")) {
			if (!strcmp(val, "ibnd") || !strcmp(val, "ibnetdiscover"))
				c->fmt = SM_TOPO_IBND;
			else if (!strcmp(val, "ibsim") || !strcmp(val, "net"))
				c->fmt = SM_TOPO_IBSIM;
			else {
				fprintf(stderr, "smctl topo gen: unknown format '%s' (ibnd or ibsim)\n", val);
				return 2;
			}
		} else
			c->output = val;
		if (rc)
			return 1;
	}
	if (!c->output) {
		fprintf(stderr, "smctl topo gen: no output file (-o FILE, or -o - for stdout)\n");
		return 2;
	}
	if (c->split && !strcmp(c->output, "-")) {
		fprintf(stderr, "smctl topo gen: --split writes FILE.0 .. FILE.P-1 and needs a file name\n");
		return 2;
	}
	if (c->p.planes > 1 && c->fmt == SM_TOPO_IBND && !c->split) {
		fprintf(stderr,
			"smctl topo gen: an ibnetdiscover dump holds one plane; with --planes %u add --split\n"
			"  (writes %s.0 .. %s.%u) or use --format ibsim\n",
			c->p.planes, c->output, c->output, c->p.planes - 1);
		return 2;
	}
	return 0;
}

/* Write plane (or all planes with plane < 0) to path; returns bytes written or -1. */
static long long write_one(const struct sm_fabric *f, const struct gen_cli *c, int plane,
			   const char *path)
{
	int to_stdout = !strcmp(path, "-");
	FILE *out = to_stdout ? stdout : fopen(path, "w");
	static char buf[1 << 20];
	int rc;

	if (!out) {
		fprintf(stderr, "smctl topo gen: cannot create %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!to_stdout)
		setvbuf(out, buf, _IOFBF, sizeof(buf));
	if (c->fmt == SM_TOPO_IBSIM)
		rc = sm_topo_write_ibsim(f, plane, out);
	else
		rc = sm_topo_write_ibnd(f, plane, out);
	if (!rc && fflush(out))
		rc = -errno;
	long long size = to_stdout ? 0 : ftell(out);
	if (!to_stdout && fclose(out) && !rc)
		rc = -errno;
	if (rc) {
		fprintf(stderr, "smctl topo gen: writing %s failed: %s\n", path, strerror(-rc));
		if (!to_stdout)
			remove(path);
		return -1;
	}
	return size;
}

/* ibsim's built-in limits (its sim.h): nodes, switches, ports */
#define IBSIM_DEF_NODES 2048
#define IBSIM_DEF_SWITCHES 256
#define IBSIM_DEF_PORTS 13312

/*
 * What one ibsim instance needs for the file(s) written: nodes, switches,
 * and ports the way ibsim counts them (a switch takes nports + 1 with port
 * 0, a CA nports). With --split, the largest plane.
 */
static void ibsim_needs(const struct sm_fabric *f, const struct gen_cli *c, unsigned need[3])
{
	unsigned per[SM_MAX_PLANES][3] = { { 0 } };

	for (uint32_t n = 0; n < f->n_nodes; n++) {
		const struct sm_node *nd = &f->nodes[n];
		unsigned pl = c->split ? nd->plane : 0;
		per[pl][0]++;
		per[pl][1] += nd->type == SM_NODE_SWITCH;
		per[pl][2] += nd->nports + (nd->type == SM_NODE_SWITCH);
	}
	need[0] = need[1] = need[2] = 0;
	for (unsigned pl = 0; pl < SM_MAX_PLANES; pl++)
		for (unsigned i = 0; i < 3; i++)
			if (per[pl][i] > need[i])
				need[i] = per[pl][i];
}

static void summary(const struct smctl_global *g, const struct gen_cli *c,
		    const struct sm_gen_shape *s, const struct sm_fabric *f, long long bytes,
		    unsigned files)
{
	FILE *o = strcmp(c->output, "-") ? stdout : stderr;
	struct sm_fabric_counts all;
	sm_fabric_count(f, -1, &all);
	/* links gone with removed switches count too */
	unsigned missing_links = c->p.planes * s->sw_links - all.sw_links;
	unsigned removed_sw = c->p.planes * s->switches - all.switches;
	unsigned removed_nics = c->p.planes * s->hosts - all.cas;
	const char *fmt = c->fmt == SM_TOPO_IBSIM ? "ibsim" : "ibnd";
	unsigned need[3];
	char ibsim_args[96] = "";

	ibsim_needs(f, c, need);
	if (c->fmt == SM_TOPO_IBSIM && (need[0] > IBSIM_DEF_NODES || need[1] > IBSIM_DEF_SWITCHES ||
					need[2] > IBSIM_DEF_PORTS))
		snprintf(ibsim_args, sizeof(ibsim_args), "-N %u -S %u -P %u", need[0], need[1],
			 need[2]);
	if (g && g->json) {
		fprintf(o,
			"{\"kind\":\"fat-tree\",\"levels\":%u,\"radix\":%u,\"planes\":%u,"
			"\"hosts\":%u,\"down\":%u,\"up\":%u,\"leaves\":%u,\"spines\":%u,"
			"\"pods\":%u,\"aggs\":%u,\"cores\":%u,\"switches\":%u,\"cas\":%u,"
			"\"links\":%u,\"switch_links\":%u,\"missing_switch_links\":%u,"
			"\"removed_switches\":%u,\"removed_nics\":%u,\"lids\":%s,\"format\":\"%s\",\"files\":%u,"
			"\"bytes\":%lld,\"ibsim_args\":\"%s\"}\n",
			s->levels, s->radix, c->p.planes, s->hosts, s->down, s->up, s->leaves,
			s->spines, s->pods, s->aggs, s->cores, all.switches, all.cas, all.links,
			all.sw_links, missing_links, removed_sw, removed_nics, c->p.no_lids ? "false" : "true", fmt,
			files, bytes, ibsim_args);
		return;
	}
	fprintf(o, "fat-tree: %u levels, radix %u, %u:%u leaves, %u host%s x %u plane%s: "
		   "%u switches, %u CAs, %u links (%u switch-switch, %u fewer than the full tree; "
		   "%u switches and %u NICs removed); %s, %u file%s, %lld bytes\n",
		s->levels, s->radix, s->down, s->up, s->hosts, s->hosts == 1 ? "" : "s",
		c->p.planes, c->p.planes == 1 ? "" : "s", all.switches, all.cas, all.links,
		all.sw_links, missing_links, removed_sw, removed_nics, fmt, files, files == 1 ? "" : "s", bytes);
	if (ibsim_args[0])
		fprintf(o, "note: more than ibsim's default limits; run it as ibsim %s ...\n",
			ibsim_args);
}

int smctl_topo_gen(const struct smctl_global *g, int argc, char **argv)
{
	struct gen_cli c = { .fmt = SM_TOPO_IBND };
	struct sm_gen_shape shape;
	char err[512];
	int rc;

	sm_gen_params_init(&c.p);
	rc = parse_args(argc, argv, &c);
	if (rc)
		return rc < 0 ? 0 : rc;
	if (sm_gen_fat_tree_shape(&c.p, &shape, err, sizeof(err))) {
		/* the library speaks of parameters; name the options that fix it */
		const char *hint = strstr(err, "without LIDs") ? " (--no-lids)" :
				   strstr(err, "use 3 levels") ? " (--levels 3)" : "";
		fprintf(stderr, "smctl topo gen: %s%s\n", err, hint);
		return 1;
	}
	struct sm_fabric *f = sm_fabric_new();
	if (!f) {
		fprintf(stderr, "smctl topo gen: out of memory\n");
		return 1;
	}
	rc = sm_gen_fat_tree(&c.p, f, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "smctl topo gen: %s\n", err);
		sm_fabric_free(f);
		return 1;
	}
	long long bytes = 0;
	unsigned files = 0;
	if (c.split) {
		size_t len = strlen(c.output) + 8;
		char *path = malloc(len);
		if (!path) {
			fprintf(stderr, "smctl topo gen: out of memory\n");
			sm_fabric_free(f);
			return 1;
		}
		for (unsigned pl = 0; pl < c.p.planes; pl++) {
			snprintf(path, len, "%s.%u", c.output, pl);
			long long b = write_one(f, &c, (int)pl, path);
			if (b < 0) {
				/* all planes or none: remove the ones already written */
				for (unsigned q = 0; q < pl; q++) {
					snprintf(path, len, "%s.%u", c.output, q);
					remove(path);
				}
				free(path);
				sm_fabric_free(f);
				return 1;
			}
			bytes += b;
			files++;
		}
		free(path);
	} else {
		bytes = write_one(f, &c, -1, c.output);
		if (bytes < 0) {
			sm_fabric_free(f);
			return 1;
		}
		files = 1;
	}
	summary(g, &c, &shape, f, bytes, files);
	sm_fabric_free(f);
	return 0;
}
