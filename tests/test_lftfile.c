/* SPDX-License-Identifier: MIT */
/*
 * Tests of the LFT file reader/writer against real dump_lfts output.
 *
 * Fixtures (tests/data/dryrun/README): ft8.net run under ibsim, routed by
 * OpenSM 3.3.23 (minhop), dumped with dump_lfts (LMC 0 and LMC 1). The
 * fabric is rebuilt here from the net file's shape, with the LIDs the
 * dump names; the fixture's LFTs are loaded into it, written back by our
 * writer, and the result must equal the fixture byte for byte except the
 * switch header's port id ("DR path ..." there, "Lid N" here) and
 * dump_lfts' trailing warning lines.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/lft_file.h"

static const char *srcdir(void)
{
	const char *t = getenv("top_srcdir");
	return t ? t : "..";
}

static char *slurp(const char *name, size_t *len)
{
	char path[1024];
	FILE *in;
	char *buf;
	long n;

	snprintf(path, sizeof(path), "%s/tests/data/dryrun/%s", srcdir(), name);
	in = fopen(path, "r");
	assert_non_null(in);
	assert_int_equal(fseek(in, 0, SEEK_END), 0);
	n = ftell(in);
	assert_true(n >= 0);
	rewind(in);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, in), (size_t)n);
	buf[n] = '\0';
	fclose(in);
	*len = (size_t)n;
	return buf;
}

static struct sm_lftfile *read_str(const char *text, char *err, size_t errlen, int *rc)
{
	struct sm_lftfile *lf = NULL;
	FILE *in = fmemopen((void *)text, strlen(text), "r");
	assert_non_null(in);
	*rc = sm_lftfile_read(in, "x.lfts", &lf, err, errlen);
	fclose(in);
	return lf;
}

static struct sm_lftfile *read_fixture(const char *name)
{
	char path[1024], err[512] = "";
	struct sm_lftfile *lf = NULL;

	snprintf(path, sizeof(path), "%s/tests/data/dryrun/%s", srcdir(), name);
	if (sm_lftfile_load(path, &lf, err, sizeof(err)))
		fail_msg("%s", err);
	return lf;
}

/* ft8: H1..H8 (guid 0x100000 + 2(k-1), port guid +1), L1..L4 = 0x200000.., S1, S2 = 0x200004/5. */
static struct sm_fabric *build_ft8(void)
{
	struct sm_fabric *f = sm_fabric_new();
	uint32_t h[8], l[4], s[2];
	char d[16];

	assert_non_null(f);
	for (int k = 0; k < 8; k++) {
		int64_t n = sm_fabric_add_node(f, SM_NODE_CA, 0x100000 + 2 * (uint64_t)k, 1, 0, 0);
		assert_true(n >= 0);
		h[k] = (uint32_t)n;
		assert_int_equal(sm_fabric_set_port_guid(f, h[k], 1, 0x100001 + 2 * (uint64_t)k), 0);
		snprintf(d, sizeof(d), "H%d", k + 1);
		sm_fabric_set_desc(f, h[k], d);
	}
	for (int k = 0; k < 6; k++) {
		int64_t n = sm_fabric_add_node(f, SM_NODE_SWITCH, 0x200000 + (uint64_t)k, 8, 0, 0);
		assert_true(n >= 0);
		if (k < 4)
			l[k] = (uint32_t)n;
		else
			s[k - 4] = (uint32_t)n;
		if (k < 4)
			snprintf(d, sizeof(d), "L%d", k + 1);
		else
			snprintf(d, sizeof(d), "S%d", k - 3);
		sm_fabric_set_desc(f, (uint32_t)n, d);
	}
	for (int k = 0; k < 4; k++) {
		assert_int_equal(sm_fabric_link(f, h[2 * k], 1, l[k], 1), 0);
		assert_int_equal(sm_fabric_link(f, h[2 * k + 1], 1, l[k], 2), 0);
		assert_int_equal(sm_fabric_link(f, l[k], 3, s[0], (unsigned)k + 1), 0);
		assert_int_equal(sm_fabric_link(f, l[k], 4, s[1], (unsigned)k + 1), 0);
	}
	return f;
}

/* Give every port the LID the dump names for it: "0xLID NNN : (TYPE portguid 0xG: 'D')". */
static void set_lids_from_dump(struct sm_fabric *f, const char *text, unsigned ca_lmc)
{
	const char *p = text;

	while ((p = strstr(p, "\n0x"))) {
		unsigned lid;
		uint64_t guid;
		const char *g;

		p++;
		assert_int_equal(sscanf(p, "0x%x", &lid), 1);
		g = strstr(p, "portguid 0x");
		const char *eol = strchr(p, '\n');
		if (!g || (eol && g > eol) || strstr(p, "(path #") == strchr(p, '(')) {
			continue;
		}
		assert_int_equal(sscanf(g, "portguid 0x%" SCNx64, &guid), 1);
		uint32_t pi = sm_fabric_find_port(f, guid);
		assert_true(pi != SM_NONE);
		struct sm_port *pt = &f->ports[pi];
		int is_sw = f->nodes[pt->node].type == SM_NODE_SWITCH;
		if (pt->lid == lid)
			continue;
		assert_int_equal(sm_fabric_set_lid(f, pt->node, pt->num, (uint16_t)lid,
						   is_sw ? 0 : (uint8_t)ca_lmc), 0);
	}
}

/* Drop the trailing "*** WARNING" block and turn "DR path ..." headers into "Lid N" ones. */
static char *normalise_dump(const char *text, const struct sm_fabric *f)
{
	size_t cap = strlen(text) + 4096, len = 0;
	char *out = malloc(cap);
	const char *p = text;

	assert_non_null(out);
	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t n = eol ? (size_t)(eol - p + 1) : strlen(p);
		if (!strncmp(p, "Unicast lids", 12)) {
			const char *of = strstr(p, " of switch ");
			const char *g = strstr(p, " guid 0x");
			uint64_t guid;
			assert_non_null(of);
			assert_non_null(g);
			assert_int_equal(sscanf(g, " guid 0x%" SCNx64, &guid), 1);
			uint32_t node = sm_fabric_find_node(f, guid);
			assert_true(node != SM_NONE);
			len += (size_t)snprintf(out + len, cap - len, "%.*s of switch Lid %u%.*s",
						(int)(of - p), p, sm_port(f, node, 0)->lid,
						(int)(n - (size_t)(g - p)), g);
		} else if (!strncmp(p, "\n", 1) || !strncmp(p, "*** WARNING", 11)) {
			/* dump_lfts' trailer: blank lines and the warning */
		} else {
			memcpy(out + len, p, n);
			len += n;
		}
		p += n;
	}
	out[len] = '\0';
	return out;
}

static void golden_round_trip(const char *fixture, unsigned ca_lmc, uint16_t want_top)
{
	size_t len;
	char *text = slurp(fixture, &len);
	struct sm_fabric *f = build_ft8();
	struct sm_lftfile *lf = read_fixture(fixture);
	struct sm_lfts *l;
	uint32_t matched = 0;
	char err[512] = "";
	char *buf = NULL;
	size_t blen = 0;

	set_lids_from_dump(f, text, ca_lmc);
	l = sm_lfts_new(f, 0);
	assert_non_null(l);
	assert_int_equal(l->top_lid, want_top);
	assert_int_equal(sm_lftfile_apply(lf, f, l, &matched, err, sizeof(err)), 0);
	assert_int_equal(matched, 6);

	FILE *out = open_memstream(&buf, &blen);
	assert_non_null(out);
	/* the fixture lists switches in dump_fts' discovery order: write in that order */
	for (uint32_t i = 0; i < lf->n_sw; i++) {
		struct sm_lfts one = *l;
		uint32_t node = sm_fabric_find_node(f, lf->sw[i].guid);
		uint32_t slot = l->slot_of_node[node];
		one.n_switches = 1;
		one.sw_node = &l->sw_node[slot];
		one.ports = sm_lfts_row(l, slot);
		assert_int_equal(sm_lftfile_write(out, f, &one, NULL), 0);
	}
	fclose(out);

	char *want = normalise_dump(text, f);
	if (strcmp(buf, want)) {
		fprintf(stderr, "--- ours\n%s--- dump_lfts (normalised)\n%s", buf, want);
		fail_msg("%s: our writer differs from dump_lfts", fixture);
	}
	free(want);
	free(buf);
	sm_lfts_free(l);
	sm_lftfile_free(lf);
	sm_fabric_free(f);
	free(text);
}

static void test_golden_lmc0(void **state)
{
	(void)state;
	golden_round_trip("ft8.dump_lfts", 0, 0xe);
}

static void test_golden_lmc1(void **state)
{
	(void)state;
	golden_round_trip("ft8-lmc1.dump_lfts", 1, 0x17);
}

/*
 * The writer formats a plane's first switch once and patches the port
 * digits of every switch whose printed lines are the same; the others take
 * the line-by-line path. Both must print what a switch written alone does
 * (LMC 1: the "path #k" lines depend on which lines are printed).
 */
static void test_template_matches_alone(void **state)
{
	const char *fixture = "ft8-lmc1.dump_lfts";
	size_t len;
	char *text = slurp(fixture, &len);
	struct sm_fabric *f = build_ft8();
	struct sm_lftfile *lf = read_fixture(fixture);
	struct sm_lfts *l;
	uint32_t matched = 0;
	char err[512] = "";
	char *whole = NULL, *alone = NULL;
	size_t wlen = 0, alen = 0;

	(void)state;
	set_lids_from_dump(f, text, 1);
	l = sm_lfts_new(f, 0);
	assert_non_null(l);
	assert_int_equal(sm_lftfile_apply(lf, f, l, &matched, err, sizeof(err)), 0);
	assert_true(l->n_switches >= 4);
	/* switch 2: a hole at an LMC range's base LID and one at its second LID; switch 3: a port out of range */
	for (uint32_t d = 1; d <= l->top_lid; d++)
		if (sm_lfts_row(l, 2)[d] != SM_LFT_NONE && d % 2 == 1) {
			sm_lfts_row(l, 2)[d] = SM_LFT_NONE;
			sm_lfts_row(l, 2)[d + 1 <= l->top_lid ? d + 1 : d] = SM_LFT_NONE;
			break;
		}
	sm_lfts_row(l, 3)[l->top_lid] = 200;

	FILE *out = open_memstream(&whole, &wlen);
	assert_int_equal(sm_lftfile_write(out, f, l, NULL), 0);
	fclose(out);
	out = open_memstream(&alone, &alen);
	for (uint32_t s = 0; s < l->n_switches; s++) {
		struct sm_lfts one = *l;
		one.n_switches = 1;
		one.sw_node = &l->sw_node[s];
		one.ports = sm_lfts_row(l, s);
		assert_int_equal(sm_lftfile_write(out, f, &one, NULL), 0);
	}
	fclose(out);
	assert_int_equal(wlen, alen);
	assert_string_equal(whole, alone);
	free(whole);
	free(alone);
	sm_lfts_free(l);
	sm_lftfile_free(lf);
	sm_fabric_free(f);
	free(text);
}

/* The fixture read into tables: headers, entries, the trailing warning ignored. */
static void test_read_fixture(void **state)
{
	struct sm_lftfile *lf;
	const struct sm_lftfile_sw *sw;

	(void)state;
	lf = read_fixture("ft8.dump_lfts");
	assert_int_equal(lf->n_sw, 6);
	sw = sm_lftfile_find(lf, 0x200003);    /* L4, first block */
	assert_non_null(sw);
	assert_string_equal(sw->desc, "L4");
	assert_int_equal(sw->lid, 0);           /* DR path header */
	assert_int_equal(sw->first, 0);
	assert_int_equal(sw->top, 0xe);
	assert_int_equal(sw->n_entries, 14);
	assert_int_equal(sw->line, 1);
	assert_int_equal(sw->ports[0], SM_LFT_NONE);
	assert_int_equal(sw->ports[6], 0);      /* itself */
	assert_int_equal(sw->ports[0xd], 1);    /* H7 */
	assert_int_equal(sw->ports[0xe], 2);    /* H8 */
	assert_int_equal(sw->ports[0x1], 3);
	assert_null(sm_lftfile_find(lf, 0x1234));
	sm_lftfile_free(lf);

	/* ibroute by LID: "Lid 6" header */
	lf = read_fixture("ft8.ibroute-lid6");
	assert_int_equal(lf->n_sw, 1);
	assert_int_equal(lf->sw[0].lid, 6);
	assert_int_equal(lf->sw[0].guid, 0x200003);
	sm_lftfile_free(lf);

	/* LMC 1: "path #2 out of 2" lines are entries too */
	lf = read_fixture("ft8-lmc1.dump_lfts");
	sw = sm_lftfile_find(lf, 0x200003);
	assert_non_null(sw);
	assert_int_equal(sw->top, 0x17);
	assert_int_equal(sw->n_entries, 22);
	assert_int_equal(sw->ports[0x17], 1);
	assert_int_equal(sw->ports[5], SM_LFT_NONE);
	sm_lftfile_free(lf);
}

/* Several planes in one file, separated by comments; read back equal. */
static void test_round_trip_planes(void **state)
{
	struct sm_fabric *f = build_ft8();
	struct sm_lfts *l;
	struct sm_lftfile *lf = NULL;
	char *buf = NULL;
	size_t blen = 0;
	char err[512] = "";
	unsigned lid = 1;

	(void)state;
	for (uint32_t n = 0; n < f->n_nodes; n++) {
		unsigned p = f->nodes[n].type == SM_NODE_SWITCH ? 0 : 1;
		assert_int_equal(sm_fabric_set_lid(f, n, p, (uint16_t)lid, 0), 0);
		lid++;
	}
	l = sm_lfts_new(f, 0);
	assert_non_null(l);
	/* an arbitrary pattern, including port 0 and holes */
	for (uint32_t s = 0; s < l->n_switches; s++)
		for (uint32_t d = 1; d <= l->top_lid; d++)
			sm_lfts_row(l, s)[d] = (d + s) % 3 == 0 ? SM_LFT_NONE : (uint8_t)((d * 7 + s) % 9);
	FILE *out = open_memstream(&buf, &blen);
	assert_int_equal(sm_lftfile_write(out, f, l, "smd dry-run: plane 0 (plane0)"), 0);
	fclose(out);
	assert_int_equal(strncmp(buf, "# smd dry-run: plane 0 (plane0)\n", 32), 0);

	lf = read_str(buf, err, sizeof(err), &(int){ 0 });
	assert_non_null(lf);
	assert_int_equal(lf->n_comments, 1);
	struct sm_lfts *back = sm_lfts_new(f, 0);
	uint32_t matched = 0;
	assert_int_equal(sm_lftfile_apply(lf, f, back, &matched, err, sizeof(err)), 0);
	assert_int_equal(matched, l->n_switches);
	for (uint32_t s = 0; s < l->n_switches; s++) {
		uint8_t *a = sm_lfts_row(l, s), *b = sm_lfts_row(back, s);
		for (uint32_t d = 0; d <= l->top_lid; d++) {
			/* ports above the switch's 8 are not printed (dump_fts rule) */
			uint8_t want = a[d] <= 8 ? a[d] : SM_LFT_NONE;
			assert_int_equal(b[d], want);
		}
	}
	sm_lfts_free(back);
	sm_lftfile_free(lf);
	sm_lfts_free(l);
	sm_fabric_free(f);
	free(buf);
}

static void test_bad_input(void **state)
{
	static const struct {
		const char *text;
		const char *expect;
	} cases[] = {
		{ "0x0001 001 : x\n", "x.lfts:1: LFT entry before any 'Unicast lids' switch header" },
		{ "Unicast lids [0x0-0x4] of switch Lid 2 (S):\n", "x.lfts:1: bad switch header: no switch guid" },
		{ "Unicast lids [0x5-0x4] of switch Lid 2 guid 0x1 (S):\n", "x.lfts:1: bad switch header: empty LID range" },
		{ "Unicast lids [0x0-0xc000] of switch Lid 2 guid 0x1 (S):\n", "x.lfts:1: bad switch header: cannot parse the LID range" },
		{ "Unicast lids [0x0-0x4] of switch Lid 2 guid 0xzz (S):\n", "x.lfts:1: bad switch header: cannot parse the switch guid" },
		{ "Unicast lids [0x0-0x4] of switch Lid 2 guid 0x1 (S):\n0x0005 001 : x\n", "x.lfts:2: LID 0x0005 outside" },
		{ "Unicast lids [0x0-0x4] of switch Lid 2 guid 0x1 (S):\n0x0001 1x : x\n", "x.lfts:2: cannot parse the port number" },
		{ "Unicast lids [0x0-0x4] of switch Lid 2 guid 0x1 (S):\n0x0001 256 : x\n", "x.lfts:2: cannot parse the port number" },
		{ "Unicast lids [0x0-0x4] of switch Lid 2 guid 0x1 (S):\n0x00g1 001 : x\n", "x.lfts:2: cannot parse the LID" },
		{ "Unicast lids [0x0-0x4] of switch Lid 2 guid 0x1 (S):\n0x0001 001\n0x0001 002\n", "x.lfts:3: LID 0x0001 listed twice" },
		{ "Unicast lids [0x0-0x4] of switch Lid 2 guid 0x1 (S):\n\nUnicast lids [0x0-0x4] of switch Lid 2 guid 0x1 (S):\n", "x.lfts:3: switch 0x0000000000000001 listed twice (first at line 1)" },
		{ "Unicast lids [0x0-0x4] of switch Lid 2 guid 0x1 (S):\ngarbage\n", "x.lfts:2: unexpected line" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char err[512] = "";
		int rc = 0;
		struct sm_lftfile *lf = read_str(cases[i].text, err, sizeof(err), &rc);
		if (rc != -EINVAL || lf || !strstr(err, cases[i].expect))
			fail_msg("case %zu: rc %d, '%s', expected '%s'", i, rc, err, cases[i].expect);
	}

	/* multicast sections are skipped, port 255 (ibroute -a) means no route */
	static const char ok[] =
		"Multicast mlids [0xc000-0xc001] of switch Lid 2 guid 0x1 (S):\n"
		"0xc000      xx\n"
		"Unicast lids [0x0-0x2] of switch Lid 2 guid 0x1 (S):\n"
		"0x0000 255 : (illegal port)\n"
		"0x0002 000 : (Switch portguid 0x0000000000000001: 'S')\n"
		"2 lids dumped \n";
	char err[512] = "";
	int rc = 0;
	struct sm_lftfile *lf = read_str(ok, err, sizeof(err), &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(lf->n_sw, 1);
	assert_int_equal(lf->sw[0].ports[0], SM_LFT_NONE);
	assert_int_equal(lf->sw[0].ports[2], 0);
	sm_lftfile_free(lf);

	/* apply refuses a port the switch does not have */
	struct sm_fabric *f = build_ft8();
	assert_int_equal(sm_fabric_set_lid(f, sm_fabric_find_node(f, 0x200000), 0, 1, 0), 0);
	struct sm_lfts *l = sm_lfts_new(f, 0);
	lf = read_str("Unicast lids [0x0-0x1] of switch Lid 1 guid 0x200000 (L1):\n0x0001 009 : x\n",
		      err, sizeof(err), &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(sm_lftfile_apply(lf, f, l, NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "has 8 ports"));
	sm_lftfile_free(lf);
	sm_lfts_free(l);
	sm_fabric_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_fixture),
		cmocka_unit_test(test_golden_lmc0),
		cmocka_unit_test(test_golden_lmc1),
		cmocka_unit_test(test_template_matches_alone),
		cmocka_unit_test(test_round_trip_planes),
		cmocka_unit_test(test_bad_input),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
