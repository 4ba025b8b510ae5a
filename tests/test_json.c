/* SPDX-License-Identifier: MIT */
/* Tests of the JSON emitter: structure, escaping of hostile strings, misuse detection. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"

struct membuf {
	char *buf;
	size_t len;
	FILE *f;
};

static void mb_open(struct membuf *m)
{
	m->buf = NULL;
	m->len = 0;
	m->f = open_memstream(&m->buf, &m->len);
	assert_non_null(m->f);
}

static void mb_close(struct membuf *m)
{
	fclose(m->f);
}

/* Write with emit() into a buffer; sm_json_finish() returns want_rc; on success the text is want. */
static void expect_json(int pretty, void (*emit)(struct sm_json *j), int want_rc, const char *want)
{
	struct membuf m;
	struct sm_json j;

	mb_open(&m);
	sm_json_init(&j, m.f, pretty);
	emit(&j);
	assert_int_equal(sm_json_finish(&j), want_rc);
	mb_close(&m);
	if (want)
		assert_string_equal(m.buf, want);
	free(m.buf);
}

static void emit_structure(struct sm_json *j)
{
	sm_json_obj_begin(j, NULL);
	sm_json_str(j, "a", "x");
	sm_json_int(j, "b", -3);
	sm_json_uint(j, "c", 18446744073709551615ULL);
	sm_json_double(j, "d", 0.5);
	sm_json_double(j, "e", NAN);
	sm_json_double(j, "f", INFINITY);
	sm_json_bool(j, "g", 1);
	sm_json_null(j, "h");
	sm_json_arr_begin(j, "i");
	sm_json_int(j, NULL, 1);
	sm_json_obj_begin(j, NULL);
	sm_json_obj_end(j);
	sm_json_arr_begin(j, NULL);
	sm_json_arr_end(j);
	sm_json_str(j, NULL, NULL);
	sm_json_arr_end(j);
	sm_json_obj_end(j);
}

static void test_structure(void **state)
{
	(void)state;
	expect_json(0, emit_structure, 0, "{\"a\":\"x\",\"b\":-3,\"c\":18446744073709551615,\"d\":0.5,"
					  "\"e\":null,\"f\":null,\"g\":true,\"h\":null,\"i\":[1,{},[],null]}\n");
}

static void emit_list(struct sm_json *j)
{
	sm_json_obj_begin(j, NULL);
	sm_json_arr_begin(j, "l");
	sm_json_int(j, NULL, 1);
	sm_json_int(j, NULL, 2);
	sm_json_arr_end(j);
	sm_json_obj_end(j);
}

static void test_pretty(void **state)
{
	(void)state;
	expect_json(1, emit_list, 0, "{\n  \"l\": [\n    1,\n    2\n  ]\n}\n");
}

static void test_escaping(void **state)
{
	/* quote, backslash, controls, DEL, valid UTF-8 (é, €, U+1F600) and invalid bytes */
	static const char in[] = "q\"b\\n\n\t\x01\x1f\x7f" "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"
				 "\xff\xc3(\xe2\x82\xed\xa0\x80\xc0\xaf";
	static const char want[] = "\"q\\\"b\\\\n\\n\\t\\u0001\\u001f\\u007f\xc3\xa9\xe2\x82\xac"
				   "\xf0\x9f\x98\x80\\ufffd\\ufffd(\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd"
				   "\\ufffd\\ufffd\"";
	struct membuf m;

	(void)state;
	mb_open(&m);
	sm_json_write_string(m.f, in, sizeof(in) - 1);
	mb_close(&m);
	assert_string_equal(m.buf, want);
	free(m.buf);

	/* an embedded NUL is escaped, not a terminator */
	mb_open(&m);
	sm_json_write_string(m.f, "a\0b", 3);
	mb_close(&m);
	assert_string_equal(m.buf, "\"a\\u0000b\"");
	free(m.buf);
}

/* ---- misuse: every case leaves the writer in error ---- */

static void emit_keyless(struct sm_json *j)
{
	sm_json_obj_begin(j, NULL);
	sm_json_int(j, NULL, 1);          /* no key inside an object */
}

static void emit_wrong_closer(struct sm_json *j)
{
	sm_json_arr_begin(j, NULL);
	sm_json_obj_end(j);               /* wrong closer */
}

static void emit_unclosed(struct sm_json *j)
{
	sm_json_obj_begin(j, NULL);       /* never closed */
}

static void emit_too_deep(struct sm_json *j)
{
	for (int i = 0; i < SM_JSON_MAX_DEPTH + 2; i++)
		sm_json_arr_begin(j, NULL);
	assert_int_equal(j->err, -EINVAL);
}

static void emit_nothing(struct sm_json *j)
{
	(void)j;                          /* nothing written */
}

static void test_misuse(void **state)
{
	static void (*const cases[])(struct sm_json *) = {
		emit_keyless, emit_wrong_closer, emit_unclosed, emit_too_deep, emit_nothing,
	};
	(void)state;
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect_json(0, cases[i], -EINVAL, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_structure),
		cmocka_unit_test(test_pretty),
		cmocka_unit_test(test_escaping),
		cmocka_unit_test(test_misuse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
