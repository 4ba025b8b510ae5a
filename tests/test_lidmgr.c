/* SPDX-License-Identifier: MIT */
/* Tests of the LID manager: file parsing (ours and OpenSM's), assignment rules, LMC, persistence. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sm/lidmgr.h"
#include "sm/planelid.h"
#include "lib/statefile.h"
#include "fixture/fixture.h"

static int load_str(struct sm_lidmgr *m, const char *text, char *err, size_t errlen)
{
	FILE *in = fmemopen((void *)text, strlen(text), "r");
	assert_non_null(in);
	int rc = sm_lidmgr_load_stream(m, in, "g2l", err, errlen);
	fclose(in);
	return rc;
}

static uint16_t lid_of(const struct sm_fabric *f, uint64_t port_guid)
{
	uint32_t p = sm_fabric_find_port(f, port_guid);
	assert_int_not_equal(p, SM_NONE);
	return f->ports[p].lid;
}

static unsigned n_notes;
static char last_note[256];
static void note_cb(void *arg, const char *msg)
{
	(void)arg;
	n_notes++;
	snprintf(last_note, sizeof(last_note), "%s", msg);
}

static void test_parse_opensm(void **state)
{
	(void)state;
	struct sm_lidmgr m;
	char err[256] = "";
	sm_lidmgr_init(&m);
	/* OpenSM writes "0x%016" PRIx64 " 0x%04x 0x%04x"; decimal is accepted too */
	const char *txt = "# comment\n"
			  "0x0002c90300000011 0x0004 0x0007\n"
			  "\n"
			  "0x0000000000000100 1 1   # trailing comment\r\n"
			  "0x200\t0x0002\t0x0002\n";
	assert_int_equal(load_str(&m, txt, err, sizeof(err)), 0);
	assert_int_equal(m.n, 3);
	uint16_t a = 0, b = 0;
	assert_true(sm_lidmgr_lookup(&m, 0x0002c90300000011ULL, &a, &b));
	assert_int_equal(a, 4);
	assert_int_equal(b, 7);
	assert_true(sm_lidmgr_lookup(&m, 0x100, &a, &b));
	assert_int_equal(a, 1);
	assert_false(sm_lidmgr_lookup(&m, 0x999, &a, &b));
	sm_lidmgr_clear(&m);
}

static void expect_bad(const char *txt, const char *needle)
{
	struct sm_lidmgr m;
	char err[256] = "";
	sm_lidmgr_init(&m);
	assert_int_equal(load_str(&m, txt, err, sizeof(err)), -EINVAL);
	if (!strstr(err, needle))
		fail_msg("error '%s' lacks '%s'", err, needle);
	assert_int_equal(m.n, 0);
	sm_lidmgr_clear(&m);
}

/*
 * An empty file, a file of zeros, a damaged sealed file are refused (issue 18:
 * a file of zeros was once read as an empty table and the fabric renumbered);
 * a sealed empty table is an empty table.
 */
static void test_parse_empty(void **state)
{
	(void)state;
	struct sm_lidmgr m;
	char err[256];
	FILE *in = fopen("/dev/null", "r");
	assert_non_null(in);
	sm_lidmgr_init(&m);
	assert_int_equal(sm_lidmgr_load_stream(&m, in, "empty", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "empty:1: no entries and no smd-state header"));
	assert_int_equal(m.n, 0);
	fclose(in);
	expect_bad("# only a comment\n\n", "no entries");
	/* a sealed empty table: the CRC-32 of nothing is 0 */
	assert_int_equal(load_str(&m, "# smd-state v1 crc32=00000000\n", err, sizeof(err)), 0);
	assert_int_equal(m.n, 0);
	assert_false(m.legacy);
	sm_lidmgr_clear(&m);
}

static void test_parse_damaged(void **state)
{
	(void)state;
	struct sm_lidmgr m;
	char err[256] = "", zeros[4096];
	FILE *in;

	/* the CRC-32 is zlib's (IEEE 802.3): its check value */
	assert_int_equal(sm_state_crc32("123456789", 9), 0xcbf43926u);
	/* a file of zeros (what a crash on some file systems leaves) */
	memset(zeros, 0, sizeof(zeros));
	in = fmemopen(zeros, sizeof(zeros), "r");
	assert_non_null(in);
	sm_lidmgr_init(&m);
	assert_int_equal(sm_lidmgr_load_stream(&m, in, "z", err, sizeof(err)), -EINVAL);
	fclose(in);
	assert_non_null(strstr(err, "z:1: NUL byte at offset 0"));
	/* zeros after valid lines, as a torn write leaves them */
	memcpy(zeros, "0x10 1 1\n", 9);
	in = fmemopen(zeros, sizeof(zeros), "r");
	assert_int_equal(sm_lidmgr_load_stream(&m, in, "z", err, sizeof(err)), -EINVAL);
	fclose(in);
	assert_non_null(strstr(err, "z:2: NUL byte at offset 9"));

	/* a sealed file written by us, then one bit flipped, a line dropped, a version from the future */
	char *text = NULL;
	size_t len = 0;
	sm_lidmgr_add(&m, 0x10, 1, 1);
	sm_lidmgr_add(&m, 0x20, 2, 2);
	FILE *out = open_memstream(&text, &len);
	assert_int_equal(sm_lidmgr_write_stream(&m, out), 0);
	fclose(out);
	assert_int_equal(strncmp(text, "# smd-state v1 crc32=", 21), 0);
	/* OpenSM's layout: header, blank line, each entry then a blank line (its parser needs them) */
	assert_non_null(strstr(text, "\n\n0x0000000000000010 0x0001 0x0001\n\n0x0000000000000020 0x0002 0x0002\n\n"));
	assert_int_equal(load_str(&m, text, err, sizeof(err)), 0);
	assert_int_equal(m.n, 2);
	assert_false(m.legacy);
	assert_false(m.dirty);
	char *bad = strdup(text);
	bad[len - 3] ^= 1;   /* the last LID: 0x0002 -> 0x0003 */
	expect_bad(bad, "1: checksum mismatch");
	free(bad);
	bad = strdup(text);
	char *second = strstr(bad, "0x0000000000000020");
	*second = '\0';
	expect_bad(bad, "checksum mismatch");
	free(bad);
	bad = strdup(text);
	bad[13] = '9';   /* v1 -> v9 */
	expect_bad(bad, "version 9");
	free(bad);
	expect_bad("# smd-state v1 crc32=zz\n0x10 1 1\n", "bad smd-state header");
	expect_bad("# smd-state v1 crc32=00000000", "without an end of line");
	free(text);

	/* random garbage */
	expect_bad("\x8f\x13\xe2 q\x01\x7f\n", "g2l:1:");
	sm_lidmgr_clear(&m);
}

/* An older smd's file or OpenSM's (no header) is read, flagged to be rewritten sealed. */
static void test_parse_legacy(void **state)
{
	(void)state;
	struct sm_lidmgr m;
	char err[256] = "";
	sm_lidmgr_init(&m);
	assert_int_equal(load_str(&m, "0x10 0x0001 0x0001\n0x20 0x0002 0x0002\n", err, sizeof(err)), 0);
	assert_int_equal(m.n, 2);
	assert_true(m.legacy);
	assert_true(m.dirty);
	sm_lidmgr_clear(&m);
}

static void test_parse_errors(void **state)
{
	(void)state;
	expect_bad("0x10 1 1\nhello 2 2\n", "g2l:2:");
	expect_bad("0x10 1\n", "g2l:1: expected");
	expect_bad("0x10 1 1 1\n", "g2l:1: expected");
	expect_bad("16 1 1\n", "hexadecimal");
	expect_bad("0x 1 1\n", "bad GUID");
	expect_bad("0x0 1 1\n", "bad GUID");
	expect_bad("0x10 0 0\n", "bad first LID");
	expect_bad("0x10 0xc000 0xc000\n", "bad first LID");
	expect_bad("0x10 5 4\n", "bad last LID");
	expect_bad("0x10 -1 1\n", "bad first LID");
	expect_bad("0x10 1x 2\n", "bad first LID");
	expect_bad("0x10 5 6\n", "aligned");     /* 2 LIDs not aligned on 2 */
	expect_bad("0x10 4 6\n", "aligned");     /* 3 LIDs */
	expect_bad("0x10 0x100 0x1ff\n", "aligned"); /* 256 LIDs > LMC 7 */
	expect_bad("0x10 1 1\n0x20 2 2\n0x10 3 3\n", "g2l:3: GUID 0x0000000000000010 is already listed at line 1");
	expect_bad("0xfffffffffffffffff 1 1\n", "bad GUID");
	char big[700];
	memset(big, ' ', sizeof(big));
	memcpy(big, "0x10 1 1", 8);
	big[sizeof(big) - 2] = '\n';
	big[sizeof(big) - 1] = '\0';
	expect_bad(big, "too long");
}

/* ---- assignment on fx_small_fabric(): the table, the LIDs the fabric holds, the result ---- */

struct lt {
	struct sm_fabric *f;
	struct sm_lidmgr m;
	struct sm_lidmgr_stats st;
	uint16_t *cur;            /* LIDs the ports hold now (0: none) */
	char err[256];
};

/* A small fabric, its LID table loaded from file (may be NULL), no LID held yet. */
static void lt_init(struct lt *t, const char *file)
{
	memset(t, 0, sizeof(*t));
	t->f = fx_small_fabric();
	t->cur = calloc(t->f->n_ports, sizeof(*t->cur));
	assert_non_null(t->cur);
	sm_lidmgr_init(&t->m);
	if (file)
		assert_int_equal(load_str(&t->m, file, t->err, sizeof(t->err)), 0);
}

static void lt_hold(struct lt *t, uint64_t port_guid, uint16_t lid)
{
	t->cur[sm_fabric_find_port(t->f, port_guid)] = lid;
}

static void lt_assign(struct lt *t, uint8_t lmc)
{
	n_notes = 0;
	assert_int_equal(sm_lidmgr_assign(&t->m, t->f, 0, lmc, t->cur, NULL, &t->st, note_cb, NULL), 0);
}

static void lt_free(struct lt *t)
{
	free(t->cur);
	sm_lidmgr_clear(&t->m);
	sm_fabric_free(t->f);
}

struct glid {
	uint64_t guid;
	uint16_t lid;
};

/* Every port GUID of want[] holds its LID. */
#define EXPECT_LIDS(f, ...) expect_lids(f, (const struct glid[]){ __VA_ARGS__ }, \
					sizeof((const struct glid[]){ __VA_ARGS__ }) / sizeof(struct glid))
static void expect_lids(const struct sm_fabric *f, const struct glid *want, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (lid_of(f, want[i].guid) != want[i].lid)
			fail_msg("port 0x%" PRIx64 ": LID %u, want %u", want[i].guid, lid_of(f, want[i].guid),
				 want[i].lid);
}

static void test_fresh_assignment(void **state)
{
	(void)state;
	struct lt t;
	lt_init(&t, NULL);
	lt_assign(&t, 0);
	/* GUID order: 0x11 0x12 0x21 0x31 0x100 0x200 */
	EXPECT_LIDS(t.f, { 0x11, 1 }, { 0x12, 2 }, { 0x21, 3 }, { 0x31, 4 }, { 0x100, 5 }, { 0x200, 6 });
	assert_int_equal(t.st.ports, 6);
	assert_int_equal(t.st.fresh, 6);
	assert_int_equal(t.st.lids, 6);
	assert_int_equal(t.m.n, 6);
	assert_true(t.m.dirty);
	assert_int_equal(t.f->planes[0].max_lid, 6);
	lt_free(&t);
}

static void test_lmc_alignment(void **state)
{
	(void)state;
	struct lt t;
	lt_init(&t, NULL);
	lt_assign(&t, 2);
	/* CA ports get 4 LIDs aligned on 4; switches one LID in the holes */
	EXPECT_LIDS(t.f, { 0x11, 4 }, { 0x12, 8 }, { 0x21, 12 }, { 0x31, 16 }, { 0x100, 1 }, { 0x200, 2 });
	assert_int_equal(t.st.lids, 4 * 4 + 2);
	uint32_t p = sm_fabric_find_port(t.f, 0x21);
	assert_int_equal(t.f->ports[p].lmc, 2);
	assert_int_equal(sm_fabric_find_lid(t.f, 0, 15), p);
	uint16_t a, b;
	assert_true(sm_lidmgr_lookup(&t.m, 0x21, &a, &b));
	assert_int_equal(a, 12);
	assert_int_equal(b, 15);
	lt_free(&t);
}

static void test_file_then_fabric_then_fresh(void **state)
{
	(void)state;
	struct lt t;
	/* file: 0x21 -> 40, absent 0x999 -> 7; fabric: 0x21 holds 9 (file wins), 0x31 holds 7 (live beats absent) */
	lt_init(&t, "0x21 40 40\n0x999 7 7\n0x100 0x20 0x20\n");
	lt_hold(&t, 0x21, 9);
	lt_hold(&t, 0x31, 7);
	lt_assign(&t, 0);
	EXPECT_LIDS(t.f, { 0x21, 40 }, { 0x100, 32 }, { 0x31, 7 }, { 0x11, 1 }, { 0x12, 2 }, { 0x200, 3 });
	assert_int_equal(t.st.from_file, 2);
	assert_int_equal(t.st.from_fabric, 1);
	assert_int_equal(t.st.fresh, 3);
	assert_int_equal(t.st.moved, 1);        /* 0x21: 9 -> 40 */
	assert_true(t.st.conflicts >= 1);       /* 7 reserved for absent 0x999 */
	assert_true(n_notes >= 2);
	/* the absent entry is kept in the table */
	uint16_t a;
	assert_true(sm_lidmgr_lookup(&t.m, 0x999, &a, NULL));
	assert_int_equal(a, 7);
	assert_int_equal(t.m.n, 7);
	lt_free(&t);
}

static void test_absent_reservation_respected(void **state)
{
	(void)state;
	struct lt t;
	lt_init(&t, "0x999 1 1\n0x998 3 3\n");
	lt_assign(&t, 0);
	EXPECT_LIDS(t.f, { 0x11, 2 }, { 0x12, 4 }, { 0x21, 5 });
	lt_free(&t);
}

static void test_collisions_lowest_guid_wins(void **state)
{
	(void)state;
	struct lt t, u;
	/* file collision between two present GUIDs: 0x21 wins over 0x31 */
	lt_init(&t, "0x31 10 10\n0x21 10 10\n");
	/* fabric collision between 0x11 and 0x12 (both hold 20): 0x11 wins; 0x200 holds a misaligned-free 5 */
	lt_hold(&t, 0x11, 20);
	lt_hold(&t, 0x12, 20);
	lt_hold(&t, 0x31, 10);
	lt_assign(&t, 0);
	/* 0x31 and 0x12 lose: 0x12 -> 1, 0x31 -> 2 in GUID order */
	EXPECT_LIDS(t.f, { 0x21, 10 }, { 0x11, 20 }, { 0x31, 2 }, { 0x12, 1 });
	assert_int_equal(t.st.conflicts, 3); /* file 0x31, fabric 0x12, fabric 0x31 */
	/* deterministic: the same input gives the same result */
	lt_init(&u, "0x21 10 10\n0x31 10 10\n");
	memcpy(u.cur, t.cur, t.f->n_ports * sizeof(*u.cur));
	lt_assign(&u, 0);
	for (uint32_t i = 0; i < t.f->n_ports; i++)
		assert_int_equal(t.f->ports[i].lid, u.f->ports[i].lid);
	lt_free(&t);
	lt_free(&u);
}

static void test_lmc_change_keeps_aligned(void **state)
{
	(void)state;
	struct lt t;
	/* LMC 0 -> 1: LID 4 (aligned on 2) is kept as 4-5, LID 7 (odd) must move */
	lt_init(&t, "0x11 4 4\n0x12 7 7\n");
	lt_assign(&t, 1);
	EXPECT_LIDS(t.f, { 0x11, 4 });
	assert_int_not_equal(lid_of(t.f, 0x12), 7);
	assert_int_equal(lid_of(t.f, 0x12) % 2, 0);
	assert_non_null(strstr(last_note, "not aligned") ? last_note : NULL);
	uint16_t a, b;
	assert_true(sm_lidmgr_lookup(&t.m, 0x11, &a, &b));
	assert_int_equal(b, 5);
	lt_free(&t);
}

static void test_second_run_is_stable(void **state)
{
	(void)state;
	struct sm_fabric *f = fx_small_fabric();
	struct sm_lidmgr m;
	char path[] = "/tmp/smd-test-lidmgr-XXXXXX";
	char file[300], err[256];
	assert_non_null(mkdtemp(path));
	snprintf(file, sizeof(file), "%s/sub/guid2lid", path);
	sm_lidmgr_init(&m);
	assert_int_equal(sm_lidmgr_assign(&m, f, 0, 0, NULL, NULL, NULL, NULL, NULL), 0);
	/* the directory "sub" does not exist yet: save creates it */
	assert_int_equal(sm_lidmgr_save(&m, file, err, sizeof(err)), 0);

	/* restart: a fresh fabric, LIDs scrambled in the fabric, file wins */
	struct sm_fabric *g = fx_small_fabric();
	uint16_t *cur = calloc(g->n_ports, sizeof(*cur));
	assert_non_null(cur);
	for (uint32_t i = 0; i < g->n_ports; i++)
		cur[i] = (uint16_t)(100 + i);
	struct sm_lidmgr m2;
	struct sm_lidmgr_stats st;
	sm_lidmgr_init(&m2);
	assert_int_equal(sm_lidmgr_load(&m2, file, err, sizeof(err)), 0);
	assert_int_equal(m2.n, 6);
	assert_int_equal(sm_lidmgr_assign(&m2, g, 0, 0, cur, NULL, &st, NULL, NULL), 0);
	assert_int_equal(st.from_file, 6);
	assert_false(m2.dirty);
	assert_false(m2.legacy);
	for (uint32_t i = 0; i < f->n_ports; i++)
		assert_int_equal(f->ports[i].lid, g->ports[i].lid);

	/* the file is sealed, then OpenSM's format byte for byte (an entry, a blank line) */
	FILE *in = fopen(file, "r");
	char line[128];
	assert_non_null(in);
	assert_non_null(fgets(line, sizeof(line), in));
	assert_int_equal(strncmp(line, "# smd-state v1 crc32=", 21), 0);
	assert_int_equal(strlen(line), 30);
	assert_non_null(fgets(line, sizeof(line), in));
	assert_string_equal(line, "\n");
	assert_non_null(fgets(line, sizeof(line), in));
	assert_string_equal(line, "0x0000000000000011 0x0001 0x0001\n");
	assert_non_null(fgets(line, sizeof(line), in));
	assert_string_equal(line, "\n");
	fclose(in);
	/* no temp file left behind */
	char tmp[400];
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", file, (long)getpid());
	assert_int_not_equal(access(tmp, F_OK), 0);

	/* a missing file is -ENOENT (first start), not an error */
	snprintf(tmp, sizeof(tmp), "%s/none", path);
	assert_int_equal(sm_lidmgr_load(&m2, tmp, err, sizeof(err)), -ENOENT);
	assert_int_equal(m2.n, 0);

	unlink(file);
	snprintf(tmp, sizeof(tmp), "%s/sub", path);
	rmdir(tmp);
	rmdir(path);
	free(cur);
	sm_lidmgr_clear(&m);
	sm_lidmgr_clear(&m2);
	sm_fabric_free(f);
	sm_fabric_free(g);
}

static void test_two_planes_share_lids(void **state)
{
	(void)state;
	struct sm_fabric *f = sm_fabric_new();
	struct sm_lidmgr m;
	char err[256];
	assert_non_null(f);
	int64_t a = sm_fabric_add_node(f, SM_NODE_CA, 0xa0, 1, 0, 0);
	int64_t b = sm_fabric_add_node(f, SM_NODE_CA, 0xb0, 1, 1, 0);
	assert_true(a >= 0 && b >= 0);
	assert_int_equal(sm_fabric_set_port_guid(f, (uint32_t)a, 1, 0xa1), 0);
	assert_int_equal(sm_fabric_set_port_guid(f, (uint32_t)b, 1, 0xb1), 0);
	sm_lidmgr_init(&m);
	/* the same LID in two planes is legal */
	assert_int_equal(load_str(&m, "0xa1 9 9\n0xb1 9 9\n", err, sizeof(err)), 0);
	assert_int_equal(sm_lidmgr_assign(&m, f, 0, 0, NULL, NULL, NULL, NULL, NULL), 0);
	assert_int_equal(sm_lidmgr_assign(&m, f, 1, 0, NULL, NULL, NULL, NULL, NULL), 0);
	assert_int_equal(lid_of(f, 0xa1), 9);
	assert_int_equal(lid_of(f, 0xb1), 9);
	sm_lidmgr_clear(&m);
	sm_fabric_free(f);
}

static void test_exhaustion(void **state)
{
	(void)state;
	struct sm_fabric *f = sm_fabric_new();
	struct sm_lidmgr m;
	assert_non_null(f);
	/* 400 single-port CAs at LMC 7 need 400*128 LIDs > 49151 */
	for (unsigned i = 0; i < 400; i++) {
		int64_t n = sm_fabric_add_node(f, SM_NODE_CA, 0x1000 + i, 1, 0, 0);
		assert_true(n >= 0);
		assert_int_equal(sm_fabric_set_port_guid(f, (uint32_t)n, 1, 0x100000 + i), 0);
	}
	sm_lidmgr_init(&m);
	assert_int_equal(sm_lidmgr_assign(&m, f, 0, 7, NULL, NULL, NULL, NULL, NULL), -ENOSPC);
	assert_int_equal(sm_lidmgr_assign(&m, f, 0, 8, NULL, NULL, NULL, NULL, NULL), -EINVAL);
	sm_lidmgr_clear(&m);
	sm_lidmgr_clear(NULL);
	sm_fabric_free(f);
}

/*
 * Switch LIDs survive a fabric reset while smd runs and a switch that is
 * absent for a while (issue 18: after a reset, switches that had inherited
 * their LIDs were renumbered from scratch, and an absent switch's LID could
 * go to another port). Plane-consistent table, nothing on disk.
 */
static void test_switch_lids_stick(void **state)
{
	(void)state;
	struct sm_fabric *f = fx_small_fabric();
	struct sm_plane_lids *pl;
	char err[256] = "";
	uint16_t *cur = calloc(f->n_ports, sizeof(*cur));
	uint16_t *w1 = calloc(f->n_ports, sizeof(*w1));
	uint16_t *w2 = calloc(f->n_ports, sizeof(*w2));
	assert_non_null(cur);
	assert_non_null(w1);
	assert_non_null(w2);
	assert_int_equal(sm_plane_lids_open(NULL, 0, NULL, NULL, &pl, err, sizeof(err)), 0);
	/* the fabric holds another SM's LIDs: smd keeps them */
	for (uint32_t i = 0; i < f->n_ports; i++)
		cur[i] = (uint16_t)(200 - i);
	assert_int_equal(sm_plane_lids_want(pl, f, 0, cur, w1), 0);
	uint32_t sw1 = f->nodes[0].type == SM_NODE_SWITCH ? f->nodes[0].port0 : SM_NONE;
	assert_int_not_equal(sw1, SM_NONE);
	assert_int_equal(w1[sw1], cur[sw1]);
	/* the fabric is reset (every LID 0): the same LIDs again, switches included */
	memset(cur, 0, f->n_ports * sizeof(*cur));
	assert_int_equal(sm_plane_lids_want(pl, f, 0, cur, w2), 0);
	for (uint32_t i = 0; i < f->n_ports; i++)
		if (w1[i] != w2[i])
			fail_msg("port %u: LID %u before the reset, %u after", i, w1[i], w2[i]);
	/* the first switch is absent: nobody takes its LID; back: it gets it again */
	f->nodes[0].plane = 1;   /* not in plane 0's sweep */
	memset(w2, 0, f->n_ports * sizeof(*w2));
	assert_int_equal(sm_plane_lids_want(pl, f, 0, cur, w2), 0);
	for (uint32_t i = 0; i < f->n_ports; i++)
		assert_true(i == sw1 || w2[i] != w1[sw1]);
	f->nodes[0].plane = 0;
	assert_int_equal(sm_plane_lids_want(pl, f, 0, cur, w2), 0);
	assert_int_equal(w2[sw1], w1[sw1]);
	sm_plane_lids_free(pl);
	free(cur);
	free(w1);
	free(w2);
	sm_fabric_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_opensm),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_parse_empty),
		cmocka_unit_test(test_parse_damaged),
		cmocka_unit_test(test_parse_legacy),
		cmocka_unit_test(test_switch_lids_stick),
		cmocka_unit_test(test_fresh_assignment),
		cmocka_unit_test(test_lmc_alignment),
		cmocka_unit_test(test_file_then_fabric_then_fresh),
		cmocka_unit_test(test_absent_reservation_respected),
		cmocka_unit_test(test_collisions_lowest_guid_wins),
		cmocka_unit_test(test_lmc_change_keeps_aligned),
		cmocka_unit_test(test_second_run_is_stable),
		cmocka_unit_test(test_two_planes_share_lids),
		cmocka_unit_test(test_exhaustion),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
