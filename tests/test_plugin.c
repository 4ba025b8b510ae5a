/* SPDX-License-Identifier: MIT */
/*
 * Plugin loader tests: the example plugin plugins/ecmp.so routes valid LFTs;
 * broken plugins (plugins/bad_*.so) are refused with clear messages and
 * none of their hooks is called (they abort() if they are).
 * The build directory comes from $top_builddir (set by make check).
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <yaml.h>

#include "routing/registry.h"
#include "routing/validate.h"
#include "fixture/route_fix.h"

static char plugdir[4096];

static void plugin_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s.so", plugdir, name);
}

static int setup(void **state)
{
	(void)state;
	const char *b = getenv("top_builddir");
	snprintf(plugdir, sizeof(plugdir), "%s/plugins", b && *b ? b : ".");
	return 0;
}

static void test_load_ecmp(void **state)
{
	(void)state;
	char path[4200], err[400];
	plugin_path(path, sizeof(path), "ecmp");
	struct sm_registry *r = sm_registry_new(plugdir);
	const struct sm_engine_ops *ops;
	assert_int_equal(sm_engine_load_plugin(r, path, &ops, err, sizeof(err)), 0);
	assert_string_equal(ops->name, "ecmp");
	assert_int_equal(ops->abi_version, SM_ENGINE_ABI_VERSION);
	assert_int_equal(sm_engine_flags(ops), 0);   /* promises nothing: validated in full */
	/* a second copy of the same name is refused */
	assert_int_equal(sm_engine_load_plugin(r, path, NULL, err, sizeof(err)), -EEXIST);
	assert_non_null(strstr(err, "already taken by a loaded plugin"));
	/* found by name now */
	const struct sm_engine_ops *again;
	assert_int_equal(sm_registry_find(r, "ecmp", &again, err, sizeof(err)), 0);
	assert_ptr_equal(again, ops);
	sm_registry_free(r);
}

static void route_and_check(const char *spec, struct fix *x, const char *yaml_text)
{
	char err[400];
	struct sm_registry *r = sm_registry_new(plugdir);
	struct sm_chain *c;
	yaml_document_t doc;
	yaml_node_t *root = NULL;
	if (yaml_text) {
		yaml_parser_t p;
		assert_true(yaml_parser_initialize(&p));
		yaml_parser_set_input_string(&p, (const unsigned char *)yaml_text, strlen(yaml_text));
		assert_true(yaml_parser_load(&p, &doc));
		yaml_parser_delete(&p);
		root = yaml_document_get_root_node(&doc);
	}
	int rc = sm_chain_new(r, spec, yaml_text ? &doc : NULL, root, &c, err, sizeof(err));
	if (rc)
		print_error("%s\n", err);
	assert_int_equal(rc, 0);
	if (yaml_text)
		yaml_document_delete(&doc);
	struct sm_lfts *l;
	struct sm_plane_result res;
	assert_int_equal(sm_route_chain(c, x->f, 0, NULL, &l, &res), 0);
	assert_string_equal(res.engine, "ecmp");
	assert_true(sm_validate_ok(&res.val, 0));
	assert_int_equal(res.val.reachable, res.val.pairs);
	assert_int_equal(res.val.max_hops, 2);
	sm_lfts_free(l);
	sm_chain_free(c);
	sm_registry_free(r);
}

static void test_ecmp_routes_fat_tree(void **state)
{
	(void)state;
	struct fix x;
	fix_init(&x);
	fix_fat_tree(&x, 4, 4, 4, 2, 0);  /* parallel cables too */
	fix_lids(&x, 0);
	/* by name through the plugin directory, default and tuned hashes */
	route_and_check("ecmp", &x, NULL);
	route_and_check("ecmp", &x, "ecmp:\n  hash: mix\n  seed: 7\n  per_switch: true\n");
	sm_fabric_free(x.f);
}

static void test_ecmp_hash_spreads(void **state)
{
	(void)state;
	struct fix x;
	fix_init(&x);
	fix_fat_tree(&x, 2, 4, 4, 1, 0);
	fix_lids(&x, 0);
	char err[400];
	struct sm_registry *r = sm_registry_new(plugdir);
	const struct sm_engine_ops *ops;
	assert_int_equal(sm_registry_find(r, "ecmp", &ops, err, sizeof(err)), 0);
	void *st;
	assert_int_equal(ops->init(&st, NULL, NULL, err, sizeof(err)), 0);
	struct sm_lfts *l = sm_lfts_new(x.f, 0);
	struct sm_route_ctx ctx = { .fabric = x.f, .plane = 0, .out = l };
	assert_int_equal(ops->route(st, &ctx), 0);
	ops->free(st);
	/* default hash = DLID: the 4 consecutive host LIDs of leaf 1 take the 4 spines from leaf 0 */
	unsigned seen[16] = { 0 };
	for (unsigned h = 4; h < 8; h++)
		seen[sm_lfts_get(l, x.sw[0], sm_port(x.f, x.ca[h], 1)->lid)]++;
	for (unsigned p = 5; p <= 8; p++)
		assert_int_equal(seen[p], 1);
	sm_lfts_free(l);
	sm_fabric_free(x.f);

	/* LMC 2: base LIDs still take the 4 spines, and each port's 4 LIDs take 4 different ones */
	fix_init(&x);
	fix_fat_tree(&x, 2, 4, 4, 1, 0);
	fix_lids(&x, 2);
	assert_int_equal(ops->init(&st, NULL, NULL, err, sizeof(err)), 0);
	l = sm_lfts_new(x.f, 0);
	struct sm_route_ctx ctx2 = { .fabric = x.f, .plane = 0, .out = l };
	assert_int_equal(ops->route(st, &ctx2), 0);
	ops->free(st);
	memset(seen, 0, sizeof(seen));
	for (unsigned h = 4; h < 8; h++) {
		uint16_t base = sm_port(x.f, x.ca[h], 1)->lid;
		seen[sm_lfts_get(l, x.sw[0], base)]++;
		unsigned mine[16] = { 0 };
		for (unsigned k = 0; k < 4; k++)
			mine[sm_lfts_get(l, x.sw[0], (uint16_t)(base + k))]++;
		for (unsigned p = 5; p <= 8; p++)
			assert_int_equal(mine[p], 1);
	}
	for (unsigned p = 5; p <= 8; p++)
		assert_int_equal(seen[p], 1);
	struct sm_validation v;
	assert_int_equal(sm_validate(x.f, 0, l, 0, &v), 0);
	assert_true(sm_validate_ok(&v, 0));
	sm_lfts_free(l);
	sm_registry_free(r);
	sm_fabric_free(x.f);
}

static void test_ecmp_config_errors(void **state)
{
	(void)state;
	char err[400];
	struct sm_registry *r = sm_registry_new(plugdir);
	struct sm_chain *c;
	yaml_document_t doc;
	yaml_parser_t p;
	const char *text = "ecmp:\n  seed: 3\n  hash: crc\n";
	assert_true(yaml_parser_initialize(&p));
	yaml_parser_set_input_string(&p, (const unsigned char *)text, strlen(text));
	assert_true(yaml_parser_load(&p, &doc));
	yaml_parser_delete(&p);
	assert_int_equal(sm_chain_new(r, "ecmp", &doc, yaml_document_get_root_node(&doc), &c, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "ecmp: config line 3: bad value for hash"));
	yaml_document_delete(&doc);
	sm_registry_free(r);
}

static void expect_refused(const char *name, int rc_expected, const char *why)
{
	char path[4200], err[400];
	plugin_path(path, sizeof(path), name);
	struct sm_registry *r = sm_registry_new(plugdir);
	const struct sm_engine_ops *ops = (const void *)1;
	assert_int_equal(sm_engine_load_plugin(r, path, &ops, err, sizeof(err)), rc_expected);
	assert_null(ops);
	assert_non_null(strstr(err, path));
	if (!strstr(err, why))
		print_error("message was: %s\n", err);
	assert_non_null(strstr(err, why));
	/* the same through the name lookup and a chain */
	struct sm_chain *c;
	assert_int_equal(sm_chain_new(r, name, NULL, NULL, &c, err, sizeof(err)), rc_expected);
	assert_null(c);
	sm_registry_free(r);
}

static void test_bad_plugins(void **state)
{
	(void)state;
	expect_refused("bad_version", -EPROTO, "engine ABI version 2, this smd needs 1");
	expect_refused("bad_size", -EPROTO, "this smd needs at least");
	expect_refused("bad_nosym", -ENOEXEC, "symbol 'smd_engine' missing");
	expect_refused("bad_dup", -EEXIST, "'minhop' is already taken by a built-in");
	expect_refused("bad_hooks", -EINVAL, "lacks a required hook");
	expect_refused("bad_noname", -EINVAL, "engine name is empty");
	/* a descriptor built before the optional reroute hook existed loads, without it */
	{
		char e[400], path[4200];
		const struct sm_engine_ops *ops = NULL;
		struct sm_registry *r = sm_registry_new(plugdir);
		plugin_path(path, sizeof(path), "old_v1");
		assert_int_equal(sm_engine_load_plugin(r, path, &ops, e, sizeof(e)), 0);
		assert_int_equal(ops->size, offsetof(struct sm_engine_ops, reroute));
		assert_null(sm_engine_reroute(ops));
		sm_registry_free(r);
	}
	char err[400];
	struct sm_registry *r = sm_registry_new(plugdir);
	assert_int_equal(sm_engine_load_plugin(r, "/nonexistent/x.so", NULL, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/x.so: cannot load plugin"));
	/* a bare name is a file in the current directory, never a library-path search */
	assert_int_equal(sm_engine_load_plugin(r, "libc.so.6", NULL, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "./libc.so.6"));
	/* a file that is not a shared object */
	char path[4200];
	snprintf(path, sizeof(path), "%s/../config.h", plugdir);
	assert_int_equal(sm_engine_load_plugin(r, path, NULL, err, sizeof(err)), -ENOENT);
	sm_registry_free(r);
}

static int old_init(void **st, yaml_document_t *doc, yaml_node_t *node, char *err, size_t errlen)
{
	*st = NULL;
	return 0;
}

static int old_route(void *st, struct sm_route_ctx *ctx)
{
	return 0;
}

static void old_free(void *st)
{
}

/*
 * Capability flags: ftree and updn promise routes without credit loops;
 * minhop, planes and hotpath do not. A descriptor built before flags
 * existed (size ending at free) still loads, and its flags read as 0
 * whatever lies beyond its size.
 */
static void test_engine_flags(void **state)
{
	(void)state;
	static const char *const promise[] = { "ftree", "updn" };
	static const char *const none[] = { "minhop", "planes", "hotpath" };
	for (unsigned i = 0; i < 2; i++)
		assert_int_equal(sm_engine_flags(sm_engine_builtin(promise[i])), SM_ENGINE_F_NO_CREDIT_LOOP);
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(sm_engine_flags(sm_engine_builtin(none[i])), 0);
	struct sm_engine_ops old = {
		.size = SM_ENGINE_OPS_MIN_SIZE, .abi_version = SM_ENGINE_ABI_VERSION, .name = "old",
		.init = old_init, .route = old_route, .free = old_free,
		.flags = SM_ENGINE_F_NO_CREDIT_LOOP,   /* past its size: never read */
	};
	char err[200];
	assert_int_equal(sm_engine_check_ops(&old, err, sizeof(err)), 0);
	assert_int_equal(sm_engine_flags(&old), 0);
	assert_null(sm_engine_reroute(&old));
	old.size = sizeof(old);
	assert_int_equal(sm_engine_flags(&old), SM_ENGINE_F_NO_CREDIT_LOOP);
	old.size = SM_ENGINE_OPS_MIN_SIZE - 1;
	assert_int_equal(sm_engine_check_ops(&old, err, sizeof(err)), -EPROTO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_load_ecmp),
		cmocka_unit_test(test_ecmp_routes_fat_tree),
		cmocka_unit_test(test_ecmp_hash_spreads),
		cmocka_unit_test(test_ecmp_config_errors),
		cmocka_unit_test(test_bad_plugins),
		cmocka_unit_test(test_engine_flags),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
