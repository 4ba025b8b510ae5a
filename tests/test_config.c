/* SPDX-License-Identifier: MIT */
/* Tests of the YAML config parser: a full good file, the shipped example, each error kind with its line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "config/smdconf.h"
#include "config/keys.h"
#include "config/options.h"
#include "lib/log.h"

static int load_str(const char *text, struct smd_conf **c, char *err, size_t errlen)
{
	FILE *in = fmemopen((void *)text, strlen(text), "r");
	assert_non_null(in);
	int rc = smd_conf_load_stream(in, "t.yaml", c, err, errlen);
	fclose(in);
	return rc;
}

static const char good[] =
	"# a full config\n"
	"routing_engine: [updn, minhop]\n"         /* 2 */
	"plugin_dir: /opt/smd/plugins\n"
	"engines:\n"
	"  ftree:\n"                                 /* 5 */
	"    root_guids: [0x10, 0x20]\n"
	"  minhop: ~\n"                              /* 7 */
	"lmc: 2\n"
	"state_dir: /var/lib/smd-test\n"
	"guid2lid_file: /etc/opensm/guid2lid\n"
	"planes:\n"
	"  - umad:mlx5_0:1\n"
	"  - \"mock:/tmp/plane 1.ibnd\"\n"
	"  - ibsim:H1\n"
	"socket: /run/smd-test.sock\n"
	"sweep_interval: 0\n"
	"mad:\n"
	"  window: 128\n"
	"  per_switch_window: 8\n"
	"  timeout_ms: 50\n"
	"  retries: 5\n"
	"log_level: debug\n"
	"subnet_prefix: fec0:0:0:1\n";

static void test_good(void **state)
{
	struct smd_conf *c = NULL;
	char err[512] = "";
	char buf[128];

	(void)state;
	assert_int_equal(load_str(good, &c, err, sizeof(err)), 0);
	assert_non_null(c);
	assert_int_equal(c->n_chain, 2);
	smd_conf_chain_str(c, buf, sizeof(buf));
	assert_string_equal(buf, "updn,minhop");
	assert_string_equal(c->plugin_dir, "/opt/smd/plugins");
	assert_int_equal(c->lmc, 2);
	assert_string_equal(c->state_dir, "/var/lib/smd-test");
	assert_string_equal(c->guid2lid_file, "/etc/opensm/guid2lid");
	assert_int_equal(c->n_planes, 3);
	assert_string_equal(c->planes[1], "mock:/tmp/plane 1.ibnd");
	assert_string_equal(c->socket, "/run/smd-test.sock");
	assert_int_equal(c->sweep_interval, 0);
	assert_int_equal(c->mad.window, 128);
	assert_int_equal(c->mad.per_switch_window, 8);
	assert_int_equal(c->mad.timeout_ms, 50);
	assert_int_equal(c->mad.retries, 5);
	assert_int_equal(c->log_level, SM_LOG_DEBUG);
	assert_true(c->subnet_prefix == 0xfec0000000000001ULL);

	/* engine subtrees are kept for the engines' init() */
	const struct smd_conf_engine *e = smd_conf_engine(c, "ftree");
	assert_non_null(e);
	assert_int_equal(e->line, 5);
	assert_non_null(e->node);
	assert_int_equal(e->node->type, YAML_MAPPING_NODE);
	e = smd_conf_engine(c, "minhop");
	assert_non_null(e);
	assert_null(e->node);
	assert_null(smd_conf_engine(c, "updn"));
	assert_non_null(c->engines_map);
	assert_int_equal(c->engines_map->type, YAML_MAPPING_NODE);
	smd_conf_free(c);
}

static void test_defaults_and_empty(void **state)
{
	struct smd_conf *c = NULL;
	char err[512] = "";
	char buf[128];

	(void)state;
	assert_int_equal(load_str("", &c, err, sizeof(err)), 0);
	smd_conf_chain_str(c, buf, sizeof(buf));
	assert_string_equal(buf, SMD_CONF_DEFAULT_CHAIN);
	assert_int_equal(c->lmc, 0);
	assert_int_equal(c->mad.window, 64);
	assert_int_equal(c->mad.per_switch_window, 4);
	assert_int_equal(c->log_level, SM_LOG_NOTICE);
	assert_true(c->subnet_prefix == 0xfe80000000000000ULL);
	assert_null(c->guid2lid_file);
	assert_null(c->engines_map);
	smd_conf_free(c);

	/* comments only, and a chain given as a string with spaces */
	assert_int_equal(load_str("# nothing\n---\n", &c, err, sizeof(err)), 0);
	smd_conf_free(c);
	assert_int_equal(load_str("routing_engine: ' ftree , updn '\n", &c, err, sizeof(err)), 0);
	smd_conf_chain_str(c, buf, sizeof(buf));
	assert_string_equal(buf, "ftree,updn");
	smd_conf_free(c);

	/* a small window lowers the default per-switch limit instead of failing */
	assert_int_equal(load_str("mad: {window: 2}\n", &c, err, sizeof(err)), 0);
	assert_int_equal(c->mad.per_switch_window, 2);
	smd_conf_free(c);

	smd_conf_free(NULL);
}

/* The shipped, commented example must parse and hold the documented defaults. */
static void test_example_file(void **state)
{
	const char *top = getenv("top_srcdir");
	struct smd_conf *c = NULL, *d = smd_conf_new();
	char path[1024], err[512] = "";
	char a[128], b[128];

	(void)state;
	snprintf(path, sizeof(path), "%s/conf/smd.yaml", top ? top : "..");
	assert_int_equal(smd_conf_load(path, &c, err, sizeof(err)), 0);
	smd_conf_chain_str(c, a, sizeof(a));
	smd_conf_chain_str(d, b, sizeof(b));
	assert_string_equal(a, b);
	assert_int_equal(c->lmc, d->lmc);
	assert_int_equal(c->sweep_interval, d->sweep_interval);
	assert_int_equal(c->mad.window, d->mad.window);
	assert_int_equal(c->mad.per_switch_window, d->mad.per_switch_window);
	assert_int_equal(c->mad.timeout_ms, d->mad.timeout_ms);
	assert_int_equal(c->mad.retries, d->mad.retries);
	assert_int_equal(c->log_level, d->log_level);
	assert_true(c->subnet_prefix == d->subnet_prefix);
	smd_conf_free(c);
	smd_conf_free(d);
}

/*
 * The key table (config/keys.h): every default, written into a file as
 * the table gives it, loads into what smd_conf_new() holds, and each
 * integer key refuses one past its range with the range in the message.
 */
static void test_key_table(void **state)
{
	struct smd_conf *c = NULL, *d = smd_conf_new();
	char text[16384] = "", err[512] = "", a[128], b[128];
	size_t off = 0;
	char map[96] = "";   /* the mapping the last key went under, "qos.ca." */

	(void)state;
	assert_non_null(d);
	assert_true(smd_conf_n_keys >= 20);
	for (size_t i = 0; i < smd_conf_n_keys; i++) {
		const struct smd_conf_key *k = &smd_conf_keys[i];

		assert_non_null(k->doc);
		assert_true(k->def || k->shown);
		if (k->kind == SMD_KEY_UINT)
			assert_true(k->size == 1 || k->size == 2 || k->size == 4);
		if (!k->def)
			continue;
		/* "mad.window" goes under "mad:", "qos.ca.sl2vl" under "qos:" and "  ca:", each opened once */
		const char *start = k->name, *end;
		int depth = 0;
		for (; (end = strchr(start, '.')); start = end + 1, depth++)
			if (strncmp(map, k->name, (size_t)(end - k->name) + 1))
				off += (size_t)snprintf(text + off, sizeof(text) - off, "%*s%.*s:\n", 2 * depth, "",
							(int)(end - start), start);
		snprintf(map, sizeof(map), "%.*s", (int)(start - k->name), k->name);
		off += (size_t)snprintf(text + off, sizeof(text) - off, "%*s%s: %s\n", 2 * depth, "", start, k->def);
		assert_true(off < sizeof(text));
	}
	assert_int_equal(load_str(text, &c, err, sizeof(err)), 0);
	smd_conf_chain_str(c, a, sizeof(a));
	smd_conf_chain_str(d, b, sizeof(b));
	assert_string_equal(a, b);
	assert_string_equal(c->plugin_dir, d->plugin_dir);
	assert_string_equal(c->state_dir, d->state_dir);
	assert_string_equal(c->socket, d->socket);
	assert_int_equal(c->lmc, d->lmc);
	assert_int_equal(c->sweep_interval, d->sweep_interval);
	assert_int_equal(c->trap_holdoff_ms, SMD_CONF_TRAP_HOLDOFF_MS);
	assert_int_equal(c->trap_holdoff_ms, d->trap_holdoff_ms);
	assert_int_equal(c->incremental_sweep, 1);
	assert_int_equal(c->incremental_sweep, d->incremental_sweep);
	assert_int_equal(c->sweep_stall_limit, d->sweep_stall_limit);
	assert_memory_equal(&c->mad, &d->mad, sizeof(c->mad));
	assert_int_equal(c->log_level, d->log_level);
	assert_true(c->subnet_prefix == d->subnet_prefix);
	assert_memory_equal(&c->keys, &d->keys, sizeof(c->keys));
	assert_int_equal(d->chain_line, 0);
	smd_conf_free(c);
	smd_conf_free(d);

	for (size_t i = 0; i < smd_conf_n_keys; i++) {
		const struct smd_conf_key *k = &smd_conf_keys[i];
		const char *dot = strchr(k->name, '.');
		char want[96];

		if (k->kind != SMD_KEY_UINT)
			continue;
		/* each level of "qos.ca.high_limit" on its own line, the key on the last */
		size_t o = 0;
		int line = 1;
		const char *start = k->name;
		for (; dot; start = dot + 1, dot = strchr(start, '.'), line++)
			o += (size_t)snprintf(text + o, sizeof(text) - o, "%*s%.*s:\n", 2 * (line - 1), "",
					      (int)(dot - start), start);
		snprintf(text + o, sizeof(text) - o, "%*s%s: %lu\n", 2 * (line - 1), "", start, k->max + 1);
		assert_int_equal(load_str(text, &c, err, sizeof(err)), -EINVAL);
		snprintf(want, sizeof(want), "t.yaml:%d: %s: %lu is out of range (%lu-%lu)", line, k->name,
			 k->max + 1, k->min, k->max);
		assert_string_equal(err, want);
	}
}

struct bad_case {
	const char *text;
	const char *expect;   /* substring of the message, which starts with "t.yaml:LINE:" */
};

static void test_errors(void **state)
{
	static const struct bad_case cases[] = {
		/* unknown keys, top level and nested */
		{ "lmc: 1\nroutng_engine: minhop\n", "t.yaml:2: unknown key 'routng_engine'" },
		{ "mad:\n  window: 8\n  timeout: 10\n", "t.yaml:3: unknown key 'mad.timeout'" },
		/* port configuration (issue 14): every QoS string checked, the class named */
		{ "part_enforce: inbound\n", "t.yaml:1: part_enforce: expected both, in, out or off, got inbound" },
		{ "max_op_vls: 0\n", "t.yaml:1: max_op_vls: 0 is out of range (1-5)" },
		{ "qos: true\n", "t.yaml:1: qos: expected a mapping" },
		{ "qos:\n  enabled: yes\n", "t.yaml:2: qos.enabled: expected true or false, got yes" },
		{ "qos:\n  ca: 1\n", "t.yaml:2: qos.ca: expected a mapping" },
		{ "qos:\n  rtr:\n    high_limit: 1\n", "t.yaml:2: unknown key 'qos.rtr'" },
		{ "qos:\n  swe:\n    sl2vl: 0,1,2,3\n", "t.yaml:3: qos.swe.sl2vl: 4 VLs given, expected 16" },
		{ "qos:\n  sw0:\n    sl2vl: 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,99\n",
		  "t.yaml:3: qos.sw0.sl2vl: SL 15: VL out of range 0-15" },
		{ "qos:\n  ca:\n    vlarb_high: \"0:4,1:300\"\n",
		  "t.yaml:3: qos.ca.vlarb_high: entry 2: expected VL:WEIGHT with WEIGHT 0-255" },
		{ "qos:\n  ca:\n    vlarb_low: 15:4\n", "t.yaml:3: qos.ca.vlarb_low: entry 1: expected VL:WEIGHT with VL 0-14" },
		{ "qos:\n  ca:\n    vlarb_low: [1]\n", "t.yaml:3: qos.ca.vlarb_low: expected a string" },
		/* wrong types */
		{ "lmc: abc\n", "t.yaml:1: lmc: expected an integer 0-7, got 'abc'" },
		{ "lmc: \"3\"\n", "t.yaml:1: lmc: expected an integer 0-7, got a quoted string" },
		{ "\n\nlmc: [1]\n", "t.yaml:3: lmc: expected an integer 0-7, got a list" },
		{ "planes: umad:mlx5_0:1\n", "t.yaml:1: planes: expected a list" },
		{ "mad: 5\n", "t.yaml:1: mad: expected a mapping" },
		{ "plugin_dir:\n", "t.yaml:1: plugin_dir: expected a string, got an empty value" },
		{ "engines: [ftree]\n", "t.yaml:1: engines: expected a mapping" },
		{ "engines:\n  ftree: 3\n", "t.yaml:2: engines.ftree: expected a mapping" },
		{ "log_level: 7\n", "t.yaml:1: log_level: '7' is not one of" },
		{ "- a\n- b\n", "t.yaml:1: the top level must be a mapping" },
		/* out of range */
		{ "lmc: 8\n", "t.yaml:1: lmc: 8 is out of range (0-7)" },
		{ "sweep_interval: -1\n", "t.yaml:1: sweep_interval: expected an integer 0-86400, got '-1'" },
		{ "mad:\n  window: 0\n", "t.yaml:2: mad.window: 0 is out of range (1-4096)" },
		/* master/standby (issue 15): IBA priorities are 4 bits; a poll interval that floods or never polls */
		{ "sm_priority: 16\n", "t.yaml:1: sm_priority: 16 is out of range (0-15)" },
		{ "sm_poll_interval_ms: 10\n", "t.yaml:1: sm_poll_interval_ms: 10 is out of range (50-60000)" },
		{ "sm_poll_retries: 0\n", "t.yaml:1: sm_poll_retries: 0 is out of range (1-100)" },
		{ "mad:\n  retries: 101\n", "t.yaml:2: mad.retries: 101 is out of range (0-100)" },
		{ "lmc: 99999999999999999999999\n", "t.yaml:1: lmc: expected an integer" },
		{ "mad:\n  window: 4\n  per_switch_window: 8\n", "t.yaml:3: mad.per_switch_window (8) is larger than mad.window (4)" },
		{ "subnet_prefix: 0x1fe80000000000000\n", "t.yaml:1: subnet_prefix: '0x1fe80000000000000' is not a 64-bit prefix" },
		{ "subnet_prefix: fe80:0:0\n", "t.yaml:1: subnet_prefix:" },
		/* bad values */
		{ "planes:\n  - umad:mlx5_0:1\n  - umad:mlx5_1:0\n", "t.yaml:3: planes: 'umad:mlx5_1:0': port must be 1-254" },
		{ "planes:\n  - nfs:x\n", "t.yaml:2: planes: 'nfs:x': unknown plane kind 'nfs'" },
		{ "planes:\n  - 'mock:'\n", "t.yaml:2: planes: 'mock:': missing a dump file" },
		{ "planes:\n  - mock: /x\n", "t.yaml:2: planes: expected a plane spec string, got a mapping" },
		{ "routing_engine: 'ftree,,minhop'\n", "t.yaml:1: routing_engine: empty engine name" },
		{ "routing_engine: ftree,ftree\n", "t.yaml:1: routing_engine: engine 'ftree' listed twice" },
		{ "routing_engine:\n  - ftree\n  - mi/nhop\n", "t.yaml:3: routing_engine: bad engine name 'mi/nhop'" },
		{ "routing_engine: []\n", "t.yaml:1: routing_engine: the list is empty" },
		{ "socket: /aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n",
		  "t.yaml:1: socket: path longer than 107 bytes" },
		/* duplicates */
		{ "lmc: 1\nstate_dir: /x\nlmc: 2\n", "t.yaml:3: duplicate key 'lmc' (first at line 1)" },
		{ "engines:\n  ftree: {}\n  ftree: {}\n", "t.yaml:3: engines: duplicate engine 'ftree' (first at line 2)" },
		/* YAML syntax, several documents */
		{ "lmc: 1\nmad: [1, 2\n", "t.yaml:3:" },
		{ "lmc: 1\n  bad indent: 2\n", "t.yaml:2:" },
		{ "lmc: 1\n---\nlmc: 2\n", "t.yaml:3: only one YAML document is allowed" },
		{ "lmc: 1\n\tfoo: 1\n", "t.yaml:2:" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct smd_conf *c = (struct smd_conf *)0x1;   /* must stay untouched */
		char err[512] = "";
		int rc = load_str(cases[i].text, &c, err, sizeof(err));
		if (rc != -EINVAL || !strstr(err, cases[i].expect) || strncmp(err, "t.yaml:", 7))
			fail_msg("case %zu: rc %d, message '%s', expected '%s'", i, rc, err,
				 cases[i].expect);
		assert_ptr_equal(c, (struct smd_conf *)0x1);
	}
}

static void test_missing_file(void **state)
{
	struct smd_conf *c = NULL;
	char err[512] = "";

	(void)state;
	assert_int_equal(smd_conf_load("/nonexistent/smd.yaml", &c, err, sizeof(err)), -ENOENT);
	assert_null(c);
	assert_non_null(strstr(err, "/nonexistent/smd.yaml"));
}

/* Command-line options override the file; invalid option values are refused. */
static void test_apply_opts(void **state)
{
	struct smd_conf *c = NULL;
	struct smd_opts o;
	char err[512] = "";
	char buf[128];

	(void)state;
	assert_int_equal(load_str(good, &c, err, sizeof(err)), 0);
	memset(&o, 0, sizeof(o));
	o.lmc = -1;
	assert_int_equal(smd_conf_apply_opts(c, &o, err, sizeof(err)), 0);
	assert_int_equal(c->lmc, 2);                 /* nothing given: file wins */
	assert_int_equal(c->log_level, SM_LOG_DEBUG);

	o.engines = "ftree";
	o.lmc = 0;
	o.state_dir = "/tmp/s";
	o.socket = "/tmp/s.sock";
	o.planes[0] = "mock:/x.ibnd";
	o.n_planes = 1;
	o.quiet = 1;
	assert_int_equal(smd_conf_apply_opts(c, &o, err, sizeof(err)), 0);
	smd_conf_chain_str(c, buf, sizeof(buf));
	assert_string_equal(buf, "ftree");
	assert_int_equal(c->lmc, 0);
	assert_string_equal(c->state_dir, "/tmp/s");
	assert_string_equal(c->socket, "/tmp/s.sock");
	assert_int_equal(c->n_planes, 1);
	assert_string_equal(c->planes[0], "mock:/x.ibnd");
	assert_int_equal(c->log_level, SM_LOG_WARN);

	o.engines = "ftree,,x";
	assert_int_equal(smd_conf_apply_opts(c, &o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "-R ftree,,x: empty engine name"));
	o.engines = NULL;
	o.planes[0] = "umad:mlx5_0";
	assert_int_equal(smd_conf_apply_opts(c, &o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--plane umad:mlx5_0"));
	assert_string_equal(c->planes[0], "mock:/x.ibnd");  /* unchanged on error */
	smd_conf_free(c);
}

static void test_plane_spec(void **state)
{
	struct smd_plane_spec ps;
	char err[256];

	(void)state;
	assert_int_equal(smd_plane_spec_parse("umad:mlx5_0:1", &ps, err, sizeof(err)), 0);
	assert_int_equal(ps.kind, SMD_PLANE_UMAD);
	assert_string_equal(ps.arg, "mlx5_0");
	assert_int_equal(ps.port, 1);
	assert_int_equal(smd_plane_spec_parse("mock:/a:b.ibnd", &ps, err, sizeof(err)), 0);
	assert_int_equal(ps.kind, SMD_PLANE_MOCK);
	assert_string_equal(ps.arg, "/a:b.ibnd");
	assert_int_equal(smd_plane_spec_parse("ibsim:H 1", &ps, err, sizeof(err)), 0);
	assert_int_equal(ps.kind, SMD_PLANE_IBSIM);
	assert_string_equal(ps.arg, "H 1");
	assert_int_equal(smd_plane_spec_parse("umad::1", &ps, err, sizeof(err)), -EINVAL);
	assert_int_equal(smd_plane_spec_parse("umad:x:255", &ps, err, sizeof(err)), -EINVAL);
	assert_int_equal(smd_plane_spec_parse("umad:x:1a", &ps, err, sizeof(err)), -EINVAL);
	assert_int_equal(smd_plane_spec_parse("ibsim", &ps, err, sizeof(err)), -EINVAL);
	assert_int_equal(smd_log_level_parse("warning"), SM_LOG_WARN);
	assert_int_equal(smd_log_level_parse("loud"), -1);
	assert_string_equal(smd_log_level_name(SM_LOG_INFO), "info");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_defaults_and_empty),
		cmocka_unit_test(test_example_file),
		cmocka_unit_test(test_key_table),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_apply_opts),
		cmocka_unit_test(test_plane_spec),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
