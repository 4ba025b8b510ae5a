/* SPDX-License-Identifier: MIT */
/*
 * DOC: smctl lft --file / --diff: LFT files without a daemon (smd/smctl.h)
 *
 *   smctl lft --file FILE [SWITCH] [--format dump|compact]
 *       print the switches of an LFT file (dump_lfts/ibroute text or the
 *       compact form of smd --dry-run --lfts-format compact; told apart by
 *       the first line) in either form. SWITCH: a GUID, "lid N" / a LID, or
 *       a description. dump form: the destinations are not in the file, so
 *       each entry says "(node info not available fabric scan)" as
 *       dump_lfts does for a LID it cannot name.
 *   smctl lft --diff A B
 *       compare two LFT files switch by switch (by GUID): every entry that
 *       differs, switches only in one; exit 0 when the tables are the same,
 *       1 when they differ or a file does not read (diff(1)'s 0/1).
 * --json: {"switches":[...]} for --file (no entries), and for --diff the
 * counts with the differing entries.
 */
#include "smctl.h"
#include "lib/json.h"
#include "model/lft_file.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static int load(const char *path, struct sm_lftfile **lf)
{
	char err[1024] = "";
	int rc = sm_lftfile_load(path, lf, err, sizeof(err));

	if (rc)
		fprintf(stderr, "smctl: %s\n", err[0] ? err : strerror(-rc));
	return rc;
}

/* Does sw match what the user named (GUID, LID, "lid N", or the description)? */
static int named(const struct sm_lftfile_sw *sw, const char *what)
{
	char *end;
	unsigned long long v;

	if (!strncmp(what, "lid ", 4) || !strncmp(what, "Lid ", 4))
		what += 4;
	errno = 0;
	v = strtoull(what, &end, 0);
	if (!errno && end != what && !*end)
		return v == sw->guid || (v <= 0xffff && v && v == sw->lid);
	return !strcmp(what, sw->desc);
}

static void print_dump(FILE *o, const struct sm_lftfile_sw *sw)
{
	unsigned n = 0;

	fprintf(o, "Unicast lids [0x%x-0x%x] of switch Lid %u guid 0x%016" PRIx64 " (%s):\n", sw->first, sw->top,
		sw->lid, sw->guid, sw->desc);
	fputs("  Lid  Out   Destination\n       Port     Info \n", o);
	for (uint32_t lid = sw->first; lid <= sw->top; lid++) {
		if (sw->ports[lid] == SM_LFT_NONE)
			continue;
		fprintf(o, "0x%04x %03u : (node info not available fabric scan)\n", lid, sw->ports[lid]);
		n++;
	}
	fprintf(o, "%u valid lids dumped \n", n);
}

/* One switch in the compact form, against the switch printed before it (base). */
static void print_compact(FILE *o, const struct sm_lftfile_sw *sw, struct sm_lftc_base *base, char *buf)
{
	fwrite(buf, 1, sm_lftc_put_switch(buf, base, sw->guid, sw->lid, sw->top, sw->desc, sw->ports), o);
}

static int cmd_file(const struct smctl_global *g, const char *path, const char *which, const char *format)
{
	struct sm_lftfile *lf = NULL;
	int compact = format && !strcmp(format, "compact"), found = 0;

	if (format && !compact && strcmp(format, "dump")) {
		fprintf(stderr, "smctl: lft --format: '%s' is neither dump nor compact\n", format);
		return 2;
	}
	if (load(path, &lf))
		return 1;
	if (g->json) {
		struct sm_json j;
		sm_json_init(&j, stdout, 0);
		sm_json_obj_begin(&j, NULL);
		sm_json_str(&j, "file", path);
		sm_json_arr_begin(&j, "switches");
		for (uint32_t i = 0; i < lf->n_sw; i++) {
			const struct sm_lftfile_sw *sw = &lf->sw[i];
			char guid[24];
			if (which && !named(sw, which))
				continue;
			found++;
			snprintf(guid, sizeof(guid), "0x%016" PRIx64, sw->guid);
			sm_json_obj_begin(&j, NULL);
			sm_json_str(&j, "guid", guid);
			SM_JSON_UINTS(&j, { "lid", sw->lid }, { "top", sw->top }, { "entries", sw->n_entries },
				      { "line", sw->line });
			sm_json_str(&j, "desc", sw->desc);
			sm_json_obj_end(&j);
		}
		sm_json_arr_end(&j);
		sm_json_obj_end(&j);
		sm_json_finish(&j);
		putchar('\n');
	} else {
		struct sm_lftc_base *base = NULL;
		char *buf = NULL;

		if (compact && (!(base = malloc(sizeof(*base))) || !(buf = malloc(SM_LFTC_SW_MAX)))) {
			free(base);
			sm_lftfile_free(lf);
			fprintf(stderr, "smctl: %s\n", strerror(ENOMEM));
			return 1;
		}
		if (compact) {
			sm_lftc_base_init(base);
			printf(SM_LFTFILE_COMPACT_MAGIC " %d\n", SM_LFTFILE_COMPACT_VERSION);
		}
		for (uint32_t i = 0; i < lf->n_sw; i++) {
			if (which && !named(&lf->sw[i], which))
				continue;
			found++;
			if (compact)
				print_compact(stdout, &lf->sw[i], base, buf);
			else
				print_dump(stdout, &lf->sw[i]);
		}
		free(buf);
		free(base);
	}
	sm_lftfile_free(lf);
	if (which && !found) {
		fprintf(stderr, "smctl: %s: no switch '%s'\n", path, which);
		return 1;
	}
	return fflush(stdout) ? 1 : 0;
}

static uint8_t entry(const struct sm_lftfile_sw *sw, uint32_t lid)
{
	return lid >= sw->first && lid <= sw->top ? sw->ports[lid] : SM_LFT_NONE;
}

static const char *port_str(uint8_t v, char buf[8])
{
	if (v == SM_LFT_NONE)
		return "none";
	snprintf(buf, 8, "%03u", v);
	return buf;
}

static int cmd_diff(const struct smctl_global *g, const char *pa, const char *pb)
{
	struct sm_lftfile *a = NULL, *b = NULL;
	unsigned long both = 0, sw_differ = 0, entries = 0, only_a = 0, only_b = 0;
	struct sm_json j;

	if (load(pa, &a) || load(pb, &b)) {
		sm_lftfile_free(a);
		return 1;
	}
	if (g->json) {
		sm_json_init(&j, stdout, 0);
		sm_json_obj_begin(&j, NULL);
		sm_json_arr_begin(&j, "switches");
	}
	for (uint32_t i = 0; i < a->n_sw; i++) {
		const struct sm_lftfile_sw *sa = &a->sw[i], *sb = sm_lftfile_find(b, sa->guid);
		uint32_t top = sa->top;
		unsigned long n = 0;

		if (!sb)
			continue;
		both++;
		if (sb->top > top)
			top = sb->top;
		for (uint32_t lid = 0; lid <= top; lid++) {
			uint8_t x = entry(sa, lid), y = entry(sb, lid);
			if (x == y)
				continue;
			if (!n++) {
				char guid[24];
				snprintf(guid, sizeof(guid), "0x%016" PRIx64, sa->guid);
				if (g->json) {
					sm_json_obj_begin(&j, NULL);
					sm_json_str(&j, "guid", guid);
					sm_json_str(&j, "desc", sa->desc);
					sm_json_arr_begin(&j, "entries");
				} else {
					printf("switch %s (%s):\n", guid, sa->desc);
				}
			}
			if (g->json) {
				sm_json_obj_begin(&j, NULL);
				SM_JSON_UINTS(&j, { "lid", lid }, { "a", x }, { "b", y });
				sm_json_obj_end(&j);
			} else {
				char px[8], py[8];
				printf("  0x%04x %s -> %s\n", lid, port_str(x, px), port_str(y, py));
			}
		}
		if (n) {
			sw_differ++;
			entries += n;
			if (g->json) {
				sm_json_arr_end(&j);
				sm_json_uint(&j, "differ", n);
				sm_json_obj_end(&j);
			}
		}
	}
	for (uint32_t i = 0; i < a->n_sw; i++)
		only_a += !sm_lftfile_find(b, a->sw[i].guid);
	for (uint32_t i = 0; i < b->n_sw; i++)
		only_b += !sm_lftfile_find(a, b->sw[i].guid);
	if (g->json) {
		sm_json_arr_end(&j);
		SM_JSON_UINTS(&j, { "switches_compared", both }, { "switches_differ", sw_differ },
			      { "entries_differ", entries }, { "only_in_a", only_a }, { "only_in_b", only_b });
		sm_json_bool(&j, "same", !sw_differ && !only_a && !only_b);
		sm_json_obj_end(&j);
		sm_json_finish(&j);
		putchar('\n');
	} else {
		printf("%lu switches compared, %lu differ in %lu entries; %lu only in %s, %lu only in %s\n", both,
		       sw_differ, entries, only_a, pa, only_b, pb);
	}
	sm_lftfile_free(a);
	sm_lftfile_free(b);
	return sw_differ || only_a || only_b;
}

int smctl_lft_offline(const struct smctl_global *gl, int argc, char **argv)
{
	struct smctl_global gg = *gl, *g = &gg;
	const char *file = NULL, *format = NULL, *which = NULL, *da = NULL, *db = NULL;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--file") && i + 1 < argc) {
			file = argv[++i];
		} else if (!strcmp(argv[i], "--format") && i + 1 < argc) {
			format = argv[++i];
		} else if (!strcmp(argv[i], "--diff") && i + 2 < argc) {
			da = argv[++i];
			db = argv[++i];
		} else if (!strcmp(argv[i], "--json")) {
			g->json = 1;
		} else if (argv[i][0] != '-' && !which) {
			which = argv[i];
		} else {
			fprintf(stderr, "smctl: lft: unexpected '%s'\n"
					"usage: smctl lft --file FILE [SWITCH] [--format dump|compact]\n"
					"       smctl lft --diff FILE_A FILE_B\n", argv[i]);
			return 2;
		}
	}
	if (!!file == !!da || (da && (which || format))) {
		fprintf(stderr, "usage: smctl lft --file FILE [SWITCH] [--format dump|compact]\n"
				"       smctl lft --diff FILE_A FILE_B\n");
		return 2;
	}
	return file ? cmd_file(g, file, which, format) : cmd_diff(g, da, db);
}
