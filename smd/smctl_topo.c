/* SPDX-License-Identifier: MIT */
/*
 * DOC: smctl topo info | convert
 *
 *   smctl [--json] topo info DUMP [DUMP...] [--plane N] [--from auto|ibnd|ibsim] [--json]
 *     Loads each dump ("-" = standard input) into its own plane (N, N+1, ...; default 0) of one
 *     model and prints, per plane: nodes, switches, CAs, routers, links,
 *     switch-switch links, LIDs and the load time; then the model's memory
 *     and the total load time. --json prints one object:
 *       {"planes":[{"plane":0,"name":"plane0","file":"f","nodes":N,
 *         "switches":N,"cas":N,"routers":N,"links":N,"switch_links":N,
 *         "lids":N,"load_ms":X}, ...],
 *        "total":{"nodes":N,...,"lids":N},"memory_bytes":N,"load_ms":X}
 *   smctl topo convert DUMP -o FILE [--format ibnd|ibsim] [--from auto|ibnd|ibsim]
 *     Loads DUMP and writes it in the chosen format (default ibnd) to FILE
 *     ("-" = stdout) through a temporary file renamed into place, so a
 *     failed conversion never leaves a half-written FILE.
 *
 * Exit status: 0 done; 1 bad input or I/O error (the message names the
 * file and line); 2 usage error.
 */
#include "config.h"
#include "lib/clock.h"
#include "smctl.h"
#include "model/topo.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int usage(const char *msg)
{
	if (msg)
		fprintf(stderr, "smctl: topo %s\n", msg);
	fprintf(stderr,
		"Usage: smctl topo info DUMP [DUMP...] [--plane N] [--from auto|ibnd|ibsim] [--json]\n"
		"       smctl topo convert DUMP -o FILE [--format ibnd|ibsim] [--from auto|ibnd|ibsim]\n");
	return 2;
}

static int parse_fmt(const char *s, enum sm_topo_format *f, int allow_auto)
{
	if (allow_auto && !strcmp(s, "auto"))
		*f = SM_TOPO_AUTO;
	else if (!strcmp(s, "ibnd") || !strcmp(s, "ibnetdiscover"))
		*f = SM_TOPO_IBND;
	else if (!strcmp(s, "ibsim") || !strcmp(s, "net"))
		*f = SM_TOPO_IBSIM;
	else
		return -1;
	return 0;
}

/* "-" reads standard input (e.g. ibnetdiscover | smctl topo info -). */
static int load(struct sm_fabric *f, const char *path, enum sm_topo_format fmt, unsigned plane,
		struct sm_topo_err *err)
{
	if (!strcmp(path, "-"))
		return sm_topo_load_stream(f, stdin, "<stdin>", fmt, plane, err);
	return sm_topo_load(f, path, fmt, plane, err);
}

static void json_str(FILE *o, const char *s)
{
	fputc('"', o);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(o, "\\%c", c);
		else if (c < 0x20)
			fprintf(o, "\\u%04x", c);
		else
			fputc(c, o);
	}
	fputc('"', o);
}

static void print_counts_json(FILE *o, const struct sm_fabric_counts *c)
{
	fprintf(o, "\"nodes\":%u,\"switches\":%u,\"cas\":%u,\"routers\":%u,\"links\":%u,"
		"\"switch_links\":%u,\"lids\":%u", c->nodes, c->switches, c->cas, c->routers,
		c->links, c->sw_links, c->lids);
}

static int cmd_info(const struct smctl_global *g, int argc, char **argv)
{
	const char *files[SM_MAX_PLANES];
	double ms[SM_MAX_PLANES];
	unsigned nfiles = 0, base = 0;
	enum sm_topo_format fmt = SM_TOPO_AUTO;
	int json = g ? g->json : 0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--json")) {
			json = 1;
		} else if (!strcmp(a, "--plane") && i + 1 < argc) {
			char *end;
			unsigned long v = strtoul(argv[++i], &end, 10);
			if (*end || !*argv[i] || v >= SM_MAX_PLANES)
				return usage("info: --plane takes 0..15");
			base = (unsigned)v;
		} else if (!strcmp(a, "--from") && i + 1 < argc) {
			if (parse_fmt(argv[++i], &fmt, 1))
				return usage("info: --from takes auto, ibnd or ibsim");
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "smctl: topo info: unknown option or missing value '%s'\n", a);
			return usage(NULL);
		} else {
			if (nfiles >= SM_MAX_PLANES)
				return usage("info: at most 16 dumps (one per plane)");
			files[nfiles++] = a;
		}
	}
	if (!nfiles)
		return usage("info needs a DUMP");
	if (base + nfiles > SM_MAX_PLANES)
		return usage("info: --plane N plus the number of dumps exceeds 16 planes");

	struct sm_fabric *f = sm_fabric_new();
	if (!f) {
		fprintf(stderr, "smctl: out of memory\n");
		return 1;
	}
	double total = 0;
	for (unsigned i = 0; i < nfiles; i++) {
		struct sm_topo_err err;
		double t0 = (sm_mono_sec() * 1e3);
		int rc = load(f, files[i], fmt, base + i, &err);
		ms[i] = (sm_mono_sec() * 1e3) - t0;
		total += ms[i];
		if (rc) {
			fprintf(stderr, "smctl: %s\n", err.msg);
			sm_fabric_free(f);
			return 1;
		}
		sm_fabric_add_plane(f, base + i, NULL);
	}

	struct sm_fabric_counts c, all;
	size_t mem = sm_fabric_mem_bytes(f);
	sm_fabric_count(f, -1, &all);
	if (json) {
		printf("{\"planes\":[");
		for (unsigned i = 0; i < nfiles; i++) {
			sm_fabric_count(f, (int)(base + i), &c);
			printf("%s{\"plane\":%u,\"name\":", i ? "," : "", base + i);
			json_str(stdout, f->planes[base + i].name);
			printf(",\"file\":");
			json_str(stdout, files[i]);
			printf(",");
			print_counts_json(stdout, &c);
			printf(",\"load_ms\":%.3f}", ms[i]);
		}
		printf("],\"total\":{");
		print_counts_json(stdout, &all);
		printf("},\"memory_bytes\":%zu,\"load_ms\":%.3f}\n", mem, total);
	} else {
		for (unsigned i = 0; i < nfiles; i++) {
			sm_fabric_count(f, (int)(base + i), &c);
			printf("plane %u \"%s\": %s\n", base + i, f->planes[base + i].name, files[i]);
			printf("  nodes %u (switches %u, CAs %u, routers %u)\n", c.nodes, c.switches,
			       c.cas, c.routers);
			printf("  links %u (switch-switch %u), LIDs %u\n", c.links, c.sw_links, c.lids);
			printf("  load time %.1f ms\n", ms[i]);
		}
		if (nfiles > 1)
			printf("total: nodes %u (switches %u, CAs %u, routers %u), links %u "
			       "(switch-switch %u), LIDs %u\n", all.nodes, all.switches, all.cas,
			       all.routers, all.links, all.sw_links, all.lids);
		printf("model memory %.2f MiB, load time %.1f ms\n", (double)mem / (1024.0 * 1024.0),
		       total);
	}
	sm_fabric_free(f);
	return fflush(stdout) ? 1 : 0;
}

static int cmd_convert(int argc, char **argv)
{
	const char *in = NULL, *outp = NULL;
	enum sm_topo_format from = SM_TOPO_AUTO, to = SM_TOPO_IBND;
	struct sm_topo_err err;
	char *tmp = NULL;
	FILE *out;
	int rc;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-o") && i + 1 < argc) {
			outp = argv[++i];
		} else if (!strcmp(a, "--format") && i + 1 < argc) {
			if (parse_fmt(argv[++i], &to, 0))
				return usage("convert: --format takes ibnd or ibsim");
		} else if (!strcmp(a, "--from") && i + 1 < argc) {
			if (parse_fmt(argv[++i], &from, 1))
				return usage("convert: --from takes auto, ibnd or ibsim");
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "smctl: topo convert: unknown option or missing value '%s'\n", a);
			return usage(NULL);
		} else if (!in) {
			in = a;
		} else {
			return usage("convert takes one DUMP");
		}
	}
	if (!in || !outp)
		return usage("convert needs DUMP and -o FILE");

	struct sm_fabric *f = sm_fabric_new();
	if (!f) {
		fprintf(stderr, "smctl: out of memory\n");
		return 1;
	}
	rc = load(f, in, from, 0, &err);
	if (rc) {
		fprintf(stderr, "smctl: %s\n", err.msg);
		sm_fabric_free(f);
		return 1;
	}
	if (!strcmp(outp, "-")) {
		out = stdout;
	} else {
		size_t l = strlen(outp) + 16;
		tmp = malloc(l);
		if (!tmp) {
			sm_fabric_free(f);
			fprintf(stderr, "smctl: out of memory\n");
			return 1;
		}
		snprintf(tmp, l, "%s.tmp%ld", outp, (long)getpid());
		out = fopen(tmp, "w");
		if (!out) {
			fprintf(stderr, "smctl: %s: cannot create: %s\n", tmp, strerror(errno));
			free(tmp);
			sm_fabric_free(f);
			return 1;
		}
	}
	rc = to == SM_TOPO_IBSIM ? sm_topo_write_ibsim(f, 0, out) : sm_topo_write_ibnd(f, 0, out);
	sm_fabric_free(f);
	if (out != stdout) {
		if (fclose(out) && !rc)
			rc = -EIO;
		if (!rc && rename(tmp, outp))
			rc = -errno;
		if (rc)
			unlink(tmp);
	}
	if (rc)
		fprintf(stderr, "smctl: %s: write failed: %s\n", outp, strerror(-rc));
	free(tmp);
	return rc ? 1 : 0;
}

int smctl_topo_cmd(const struct smctl_global *g, int argc, char **argv)
{
	if (argc < 1)
		return usage("needs a subcommand");
	if (!strcmp(argv[0], "info"))
		return cmd_info(g, argc, argv);
	if (!strcmp(argv[0], "convert"))
		return cmd_convert(argc, argv);
	if (!strcmp(argv[0], "-h") || !strcmp(argv[0], "--help")) {
		usage(NULL);
		return 0;
	}
	fprintf(stderr, "smctl: unknown topo subcommand '%s'\n", argv[0]);
	return usage(NULL);
}
