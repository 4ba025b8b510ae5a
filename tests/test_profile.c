/* SPDX-License-Identifier: MIT */
/* Unit tests for the traffic profile loader (smd/model/profile.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "model/fabric.h"
#include "model/gen.h"
#include "model/profile.h"
#include "model/topo.h"
#include "fixture/fixture.h"

/* 8 hosts (4 leaves x 2), 2 spines, 2 planes; host i has LID i+1 in each plane. */
static int setup(void **state)
{
	struct sm_gen_params p;
	fx_gen_params(&p, 0, 4, 2, 2);
	*state = fx_gen(&p);
	return 0;
}

static int teardown(void **state)
{
	sm_fabric_free(*state);
	return 0;
}

/* Port index of host h's NIC in plane pl. */
static uint32_t host_port(const struct sm_fabric *f, unsigned h, unsigned pl)
{
	return sm_fabric_find_port(f, sm_gen_guid(SM_GEN_GUID_CA_PORT, pl, h));
}

static double find_flow(const struct sm_profile *p, uint32_t s, uint32_t d)
{
	for (size_t i = 0; i < p->n_flows; i++)
		if (p->flows[i].src == s && p->flows[i].dst == d)
			return p->flows[i].weight;
	return -1;
}

static const char *data_path(const char *name)
{
	static char buf[1024];
	const char *top = getenv("top_srcdir");
	snprintf(buf, sizeof(buf), "%s/tests/data/profile/%s", top ? top : "..", name);
	return buf;
}

static struct sm_profile *parse_ok(const struct sm_fabric *f, const char *text)
{
	struct sm_profile *p = NULL;
	char err[512];
	int rc = sm_profile_parse(f, "t", text, strlen(text), NULL, &p, err, sizeof(err));
	if (rc)
		fprintf(stderr, "unexpected error: %s\n", err);
	assert_int_equal(rc, 0);
	assert_non_null(p);
	return p;
}

/* Expect an error whose message starts with "t:LINE:" and contains what. */
static void parse_bad(const struct sm_fabric *f, const char *text, size_t len, int want_rc, unsigned line,
		      const char *what)
{
	struct sm_profile *p = (struct sm_profile *)1;
	char err[512], pre[32];
	int rc = sm_profile_parse(f, "t", text, len, NULL, &p, err, sizeof(err));
	if (rc != want_rc || (what && !strstr(err, what)))
		fprintf(stderr, "got rc %d, message '%s' (wanted %d, '%s')\n", rc, err, want_rc, what ? what : "");
	assert_int_equal(rc, want_rc);
	assert_null(p);
	if (line) {
		snprintf(pre, sizeof(pre), "t:%u: ", line);
		assert_true(!strncmp(err, pre, strlen(pre)));
	}
	if (what)
		assert_non_null(strstr(err, what));
}

static void test_text_file(void **state)
{
	const struct sm_fabric *f = *state;
	struct sm_profile *p = NULL;
	char err[512], warn[1024];
	int rc = sm_profile_load(f, data_path("matrix-small.txt"), NULL, &p, err, sizeof(err));
	if (rc)
		fprintf(stderr, "%s\n", err);
	assert_int_equal(rc, 0);
	assert_int_equal(p->format, SM_PROFILE_FMT_TEXT);
	assert_int_equal(p->kind, SM_PROFILE_MATRIX);
	assert_int_equal(p->stats.entries, 7);
	assert_int_equal(p->stats.merged, 1);
	assert_int_equal(p->stats.unknown, 1);
	assert_true(fabs(p->stats.unknown_weight - 4) < 1e-9);
	assert_int_equal(p->stats.first_unknown_line, 9);
	assert_string_equal(p->stats.first_unknown, "host00099");
	assert_true(fabs(p->stats.total_weight - 33.5) < 1e-9);
	assert_int_equal(p->n_flows, 7);
	/* heaviest first: descriptions merged 10 + 2 */
	assert_int_equal(p->flows[0].src, host_port(f, 0, 0));
	assert_int_equal(p->flows[0].dst, host_port(f, 5, 0));
	assert_true(fabs(p->flows[0].weight - 12) < 1e-9);
	assert_true(fabs(find_flow(p, host_port(f, 1, 0), host_port(f, 6, 0)) - 5.5) < 1e-9);
	assert_true(fabs(find_flow(p, host_port(f, 2, 1), host_port(f, 7, 1)) - 3) < 1e-9);
	/* bare host names: split over both planes */
	assert_true(fabs(find_flow(p, host_port(f, 3, 0), host_port(f, 4, 0)) - 4) < 1e-9);
	assert_true(fabs(find_flow(p, host_port(f, 3, 1), host_port(f, 4, 1)) - 4) < 1e-9);
	/* bare LIDs 7 -> 3: host 6 -> host 2 in each plane */
	assert_true(fabs(find_flow(p, host_port(f, 6, 1), host_port(f, 2, 1)) - 0.5) < 1e-9);
	for (size_t i = 1; i < p->n_flows; i++)
		assert_true(p->flows[i - 1].weight >= p->flows[i].weight);
	assert_int_equal(sm_profile_warning(p, warn, sizeof(warn)), 1);
	assert_non_null(strstr(warn, "1 entries with unknown endpoints dropped (weight 4"));
	assert_non_null(strstr(warn, "'host00099' at line 9"));
	char small[16];
	assert_int_equal(sm_profile_warning(p, small, sizeof(small)), 1);
	assert_int_equal(strlen(small), sizeof(small) - 1);
	sm_profile_free(p);
	sm_profile_free(NULL);
}

static void test_cross_plane(void **state)
{
	const struct sm_fabric *f = *state;
	/* destination on plane 1 is specific: the source host's plane-1 NIC sends */
	struct sm_profile *p = parse_ok(f, "\"host00000 mlx5_0\" \"host00003 mlx5_1\" 2\n"
					   "host00001 \"host00002 mlx5_0\" 1\n"
					   "host00004:1 5:0 1\n");
	assert_int_equal(p->n_flows, 2);
	assert_true(fabs(find_flow(p, host_port(f, 0, 1), host_port(f, 3, 1)) - 2) < 1e-9);
	assert_true(fabs(find_flow(p, host_port(f, 1, 0), host_port(f, 2, 0)) - 1) < 1e-9);
	/* host00004:1 -> LID 5 on plane 0 = host 4 itself: plane of dst wins, src host's plane-0 NIC */
	assert_int_equal(p->stats.self, 1);
	sm_profile_free(p);
}

static void test_text_bad(void **state)
{
	const struct sm_fabric *f = *state;
	char buf[8192];
	#define BAD(text, line, what) parse_bad(f, text, strlen(text), -EINVAL, line, what)
	BAD("host00000 host00001 1\n# c\nhost00001 host00002 -3\n", 3, "negative weight");
	BAD("\n\nhost00000 host00001 nan\n", 3, "not finite");
	BAD("host00000 host00001 inf\n", 1, "not finite");
	BAD("host00000 host00001 1e30\n", 1, "too large");
	BAD("host00000 host00001 1e400\n", 1, "not finite");
	BAD("host00000 host00001 12abc\n", 1, "bad weight");
	BAD("host00000 host00001\n", 1, "got 2 fields");
	BAD("host00000 host00001 1 2\n", 1, "too many fields");
	BAD("\"host00000 mlx5_0 host00001 1\n", 1, "unterminated quote");
	BAD("\"host00000 mlx5_0\"x host00001 1\n", 1, "after closing quote");
	BAD("0xZZ host00001 1\n", 1, "bad GUID");
	BAD("0x123456789abcdef01 host00001 1\n", 1, "bad GUID");
	BAD("99999 host00001 1\n", 1, "bad LID");
	BAD("0 host00001 1\n", 1, "bad LID");
	BAD("host00000:99 host00001 1\n", 1, "bad rail");
	BAD("# only comments\n\n", 0, "no flows");
	parse_bad(f, "host00000 host00001 1\n\x00\x01zz\n", 27, -EINVAL, 2, "binary data");
	parse_bad(f, "a\x1b[0m b 1\n", 10, -EINVAL, 1, "binary data");
	/* a buffer ending in "plane" (no newline): detect() read one byte past it (fuzz_profile) */
	char *pl = malloc(5);
	assert_non_null(pl);
	memcpy(pl, "plane", 5);
	struct sm_profile *pp = NULL;
	char perr[256];
	assert_true(sm_profile_parse(f, "mem", pl, 5, NULL, &pp, perr, sizeof(perr)) < 0);
	assert_null(pp);
	free(pl);
	memset(buf, 'a', sizeof(buf));
	memcpy(buf, "h h 1\nh h 1\n", 12);
	parse_bad(f, buf, sizeof(buf), -EINVAL, 3, "line longer than");
	/* nothing resolves: an error, with the first unknown endpoint */
	parse_bad(f, "nohost host00001 1\nhost00001 nohost2 2\n", 39, -ENOENT, 1, "'nohost'");
	/* a zero-weight line is not a flow: nothing usable */
	parse_bad(f, "host00000 host00001 0\n", 22, -ENOENT, 0, "1 zero weight");
	parse_bad(f, "host00000 host00000 5\n", 22, -ENOENT, 0, "self");
#undef BAD
}

static void test_file_errors(void **state)
{
	const struct sm_fabric *f = *state;
	struct sm_profile *p = NULL;
	char err[512];
	assert_int_equal(sm_profile_load(f, data_path("bad-negative.txt"), NULL, &p, err, sizeof(err)), -EINVAL);
	assert_null(p);
	assert_non_null(strstr(err, "bad-negative.txt:2: negative weight"));
	assert_int_equal(sm_profile_load(f, data_path("bad-binary.bin"), NULL, &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "bad-binary.bin:2: binary data"));
	assert_int_equal(sm_profile_load(f, data_path("does-not-exist"), NULL, &p, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "does-not-exist"));
}

static void test_yaml(void **state)
{
	const struct sm_fabric *f = *state;
	struct sm_profile *p = NULL;
	char err[512];
	int rc = sm_profile_load(f, data_path("matrix-small.yaml"), NULL, &p, err, sizeof(err));
	if (rc)
		fprintf(stderr, "%s\n", err);
	assert_int_equal(rc, 0);
	assert_int_equal(p->format, SM_PROFILE_FMT_YAML);
	assert_string_equal(p->name, "allreduce-ring");
	assert_string_equal(p->source, "unit test");
	assert_string_equal(p->unit, "bytes");
	assert_string_equal(p->window_start, "2026-11-22T01:00:00Z");
	assert_true(fabs(p->window_seconds - 60) < 1e-9);
	assert_int_equal(p->n_flows, 2);
	assert_true(fabs(find_flow(p, host_port(f, 0, 0), host_port(f, 5, 0)) - 10) < 1e-9);
	assert_true(fabs(find_flow(p, host_port(f, 1, 0), host_port(f, 6, 0)) - 2.5) < 1e-9);
	assert_int_equal(p->stats.unknown, 1);
	assert_int_equal(p->stats.first_unknown_line, 10);
	sm_profile_free(p);

#define YBAD(text, line, what) parse_bad(f, text, strlen(text), -EINVAL, line, what)
	YBAD("name: x\nflows:\n  - {src: host00000, dst: host00001, weight: -1}\n", 3, "negative weight");
	YBAD("name: x\nflow:\n  - [a, b, 1]\n", 2, "unknown key 'flow'");
	YBAD("name: x\n", 1, "no 'flows'");
	YBAD("flows:\n  - [host00000, host00001]\n", 2, "expected [SRC, DST, WEIGHT]");
	YBAD("flows:\n  - {src: host00000, dst: host00001, wieght: 1}\n", 2, "unknown key 'wieght'");
	YBAD("flows:\n  - {src: host00000, dst: host00001}\n", 2, "needs src, dst and weight");
	YBAD("flows: 3\n", 1, "expected a list");
	YBAD("flows:\n  - [host00000, [x], 1]\n", 2, "dst: expected a scalar");
	YBAD("flows:\n  - [host00000, host00001, 1\n", 3, "YAML");
	YBAD("---\n- a\n", 2, "expected a mapping");
	YBAD("window: {secs: 3}\nflows: []\n", 1, "window: unknown key");
#undef YBAD
}

static void test_counters(void **state)
{
	const struct sm_fabric *f = *state;
	struct sm_profile *p = NULL;
	char err[512];
	int rc = sm_profile_load(f, data_path("counters-small.txt"), NULL, &p, err, sizeof(err));
	if (rc)
		fprintf(stderr, "%s\n", err);
	assert_int_equal(rc, 0);
	assert_int_equal(p->kind, SM_PROFILE_COUNTERS);
	assert_int_equal(p->format, SM_PROFILE_FMT_COUNTERS);
	assert_true(fabs(p->window_seconds - 10) < 1e-9);
	assert_int_equal(p->stats.counter_ports, 3);
	assert_int_equal(p->n_heat, 3);
	/* gravity: host0 sent 8000 B, host1 4000 B; host1 received 4000 B, host2 12000 B */
	assert_int_equal(p->n_flows, 3);
	assert_true(fabs(find_flow(p, host_port(f, 0, 0), host_port(f, 1, 0)) - 2000) < 1e-6);
	assert_true(fabs(find_flow(p, host_port(f, 0, 0), host_port(f, 2, 0)) - 6000) < 1e-6);
	assert_true(fabs(find_flow(p, host_port(f, 1, 0), host_port(f, 2, 0)) - 4000) < 1e-6);
	assert_true(fabs(p->stats.kept_weight - 12000) < 1e-6);
	sm_profile_free(p);

	rc = sm_profile_load(f, data_path("perfquery-small.txt"), NULL, &p, err, sizeof(err));
	if (rc)
		fprintf(stderr, "%s\n", err);
	assert_int_equal(rc, 0);
	assert_int_equal(p->format, SM_PROFILE_FMT_PERFQUERY);
	assert_int_equal(p->n_flows, 1);
	assert_true(fabs(find_flow(p, host_port(f, 0, 0), host_port(f, 1, 0)) - 4000) < 1e-6);
	sm_profile_free(p);

	/* a reset counter is skipped and counted; nothing else: error */
	const char *reset = "counters v1\nreading 1\n1 1 500 0\n2 1 0 0\nreading 2\n1 1 100 0\n2 1 0 10\n";
	parse_bad(f, reset, strlen(reset), -ENOENT, 0, "1 reset");
#define CBAD(text, line, what) parse_bad(f, text, strlen(text), -EINVAL, line, what)
	CBAD("counters v1\n1 1 5 5\n", 2, "before 'reading 1'");
	CBAD("counters v1\nreading 3\n", 2, "'reading 1' or 'reading 2'");
	CBAD("counters v1\nreading 1\n1 1 5 -5\n", 3, "bad counter value");
	CBAD("counters v1\nreading 1\n1 9 5 5\n", 3, "port 9 out of range");
	CBAD("counters v1\nreading 1\n1 1 5 5\n1 1 6 6\n", 4, "counted twice");
	CBAD("counters v1\nbogus\n", 2, "expected GUID|LID");
	CBAD("# Port counters: Lid 1 port 1 (CapMask: 0x1400)\nPortXmitData:.....12\n", 1, "without PortXmitData/PortRcvData");
	CBAD("# Port counters: Lid 1 port 1 (CapMask: 0x1400)\nPortXmitData:.....x\n", 2, "bad PortXmitData");
	CBAD("# Port counters: Lid 1 port 1 (CapMask: 0x1400)\nhello world\n", 2, "not perfquery output");
	CBAD("# Port counters: Lid 1 port 255 (CapMask: 0x1400)\n", 1, "port 255");
#undef CBAD
}

static void test_forced_format(void **state)
{
	const struct sm_fabric *f = *state;
	struct sm_profile_opts o = { .format = SM_PROFILE_FMT_TEXT };
	struct sm_profile *p = NULL;
	char err[256];
	/* "name: x" forced as text is three fields short */
	const char *t = "name: x\n";
	assert_int_equal(sm_profile_parse(f, "t", t, strlen(t), &o, &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "t:1: expected 'SRC DST WEIGHT'"));
	assert_string_equal(sm_profile_format_str(SM_PROFILE_FMT_YAML), "yaml");
}


/* Mutated inputs: never a crash or a leak (ASan build), and every accepted flow is valid. */
static void test_fuzz(void **state)
{
	const struct sm_fabric *f = *state;
	static const char *const seeds[] = {
		"\"host00000 mlx5_0\" host00005:1 10 # c\n0x0002c93000000001 7 2.5\nhost00003 host00004 8\n",
		"name: x\nwindow: {seconds: 3}\nflows:\n  - {src: host00000, dst: \"host00001 mlx5_1\", weight: 1}\n  - [3, 4:1, 2]\n",
		"counters v1\nreading 1\n1 1 10 0\n2 1 0 0\nreading 2\n1 1 30 0\n2 1 0 20\n",
		"# Port counters: Lid 1 port 1 (CapMask: 0x1400)\nPortXmitData:....10\nPortRcvData:....0\n"
		"# Port counters: Lid 1 port 1 (CapMask: 0x1400)\nPortXmitData:....50\nPortRcvData:....9\n",
	};
	static const char alphabet[] = " \t\n\"#:0123456789xabcdefhost-.,[]{}e+\\";
	uint64_t x = 12345;
	char buf[512], err[256];
	for (unsigned it = 0; it < 4000; it++) {
		const char *sd = seeds[it % 4];
		size_t n = strlen(sd);
		memcpy(buf, sd, n);
		unsigned muts = 1 + (unsigned)(it % 5);
		for (unsigned m = 0; m < muts; m++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			size_t pos = (size_t)(x >> 33) % n;
			unsigned op = (unsigned)(x >> 20) % 3;
			char ch = alphabet[(x >> 40) % (sizeof(alphabet) - 1)];
			if (op == 0)
				buf[pos] = ch;
			else if (op == 1 && n + 1 < sizeof(buf)) {
				memmove(buf + pos + 1, buf + pos, n - pos);
				buf[pos] = ch;
				n++;
			} else if (n > 1) {
				memmove(buf + pos, buf + pos + 1, n - pos - 1);
				n--;
			}
		}
		struct sm_profile *p = NULL;
		int rc = sm_profile_parse(f, "fuzz", buf, n, NULL, &p, err, sizeof(err));
		if (rc) {
			assert_true(rc < 0);
			assert_null(p);
			assert_true(err[0] != 0);
			continue;
		}
		for (size_t i = 0; i < p->n_flows; i++) {
			assert_true(p->flows[i].src != p->flows[i].dst);
			assert_true(isfinite(p->flows[i].weight) && p->flows[i].weight > 0);
			assert_true(p->flows[i].src < f->n_ports && p->flows[i].dst < f->n_ports);
		}
		sm_profile_free(p);
	}
}

/* Real tools: an ibnetdiscover dump and perfquery -x output captured on ibsim (after opensm --once). */
static void test_perfquery_real(void **state)
{
	(void)state;
	struct sm_fabric *f = sm_fabric_new();
	struct sm_topo_err te;
	assert_int_equal(sm_topo_load(f, data_path("ibsim-2sw4hca.ibnd"), SM_TOPO_AUTO, 0, &te), 0);
	struct sm_profile *p = NULL;
	char err[512];
	int rc = sm_profile_load(f, data_path("perfquery-ibsim.txt"), NULL, &p, err, sizeof(err));
	if (rc)
		fprintf(stderr, "%s\n", err);
	assert_int_equal(rc, 0);
	assert_int_equal(p->format, SM_PROFILE_FMT_PERFQUERY);
	assert_int_equal(p->stats.counter_ports, 4);
	/* deltas (words): LID 2 and 5 sent/received 144, LID 4 and 6 216; bytes = 4 x words */
	assert_int_equal(p->n_flows, 12);
	assert_true(fabs(p->stats.kept_weight - 4 * (144 + 216 + 144 + 216)) < 1e-6);
	uint32_t l2 = sm_fabric_find_lid(f, 0, 2), l4 = sm_fabric_find_lid(f, 0, 4);
	/* gravity: 576 B from LID 2 spread over the others' receive volume (2880 - 576) */
	assert_true(fabs(find_flow(p, l2, l4) - 576.0 * 864.0 / 2304.0) < 1e-6);
	sm_profile_free(p);
	sm_fabric_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_file),
		cmocka_unit_test(test_cross_plane),
		cmocka_unit_test(test_text_bad),
		cmocka_unit_test(test_file_errors),
		cmocka_unit_test(test_yaml),
		cmocka_unit_test(test_counters),
		cmocka_unit_test(test_forced_format),
		cmocka_unit_test(test_fuzz),
		cmocka_unit_test(test_perfquery_real),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
