/* SPDX-License-Identifier: MIT */
/* DOC: streaming JSON emitter; see json.h for the contract. */
#include "lib/json.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

void sm_json_init(struct sm_json *j, FILE *out, int pretty)
{
	memset(j, 0, sizeof(*j));
	j->out = out;
	j->pretty = pretty;
}

size_t sm_json_utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* refuse overlong forms, surrogates and code points past U+10FFFF */
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

void sm_json_write_string(FILE *out, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;

	fputc('"', out);
	while (i < n) {
		unsigned char c = s[i];
		size_t len;

		switch (c) {
		case '"': fputs("\\\"", out); i++; continue;
		case '\\': fputs("\\\\", out); i++; continue;
		case '\n': fputs("\\n", out); i++; continue;
		case '\r': fputs("\\r", out); i++; continue;
		case '\t': fputs("\\t", out); i++; continue;
		case '\b': fputs("\\b", out); i++; continue;
		case '\f': fputs("\\f", out); i++; continue;
		default: break;
		}
		if (c < 0x20 || c == 0x7f) {
			fprintf(out, "\\u%04x", c);
			i++;
			continue;
		}
		len = sm_json_utf8_len(s + i, n - i);
		if (!len) {
			fputs("\\ufffd", out);
			i++;
			continue;
		}
		fwrite(s + i, 1, len, out);
		i += len;
	}
	fputc('"', out);
}

static void indent(struct sm_json *j)
{
	if (!j->pretty)
		return;
	fputc('\n', j->out);
	for (int i = 0; i < j->depth; i++)
		fputs("  ", j->out);
}

/* Separator, indentation and key for the next value; 0 if it may be written. */
static int begin_value(struct sm_json *j, const char *key)
{
	if (j->err)
		return j->err;
	if (j->depth == 0) {
		if (key || j->n_items[0]) {
			j->err = -EINVAL;   /* a key at top level, or a second top-level value */
			return j->err;
		}
		j->n_items[0] = 1;
		return 0;
	}
	if (!!key != !!j->is_obj[j->depth]) {
		j->err = -EINVAL;
		return j->err;
	}
	if (j->n_items[j->depth])
		fputc(',', j->out);
	j->n_items[j->depth] = 1;
	indent(j);
	if (key) {
		sm_json_write_string(j->out, key, strlen(key));
		fputs(j->pretty ? ": " : ":", j->out);
	}
	return 0;
}

static void open_container(struct sm_json *j, const char *key, int is_obj)
{
	if (begin_value(j, key))
		return;
	if (j->depth + 1 >= SM_JSON_MAX_DEPTH) {
		j->err = -EINVAL;
		return;
	}
	fputc(is_obj ? '{' : '[', j->out);
	j->depth++;
	j->is_obj[j->depth] = (unsigned char)is_obj;
	j->n_items[j->depth] = 0;
}

static void close_container(struct sm_json *j, int is_obj)
{
	if (j->err)
		return;
	if (j->depth == 0 || j->is_obj[j->depth] != is_obj) {
		j->err = -EINVAL;
		return;
	}
	int had_items = j->n_items[j->depth];
	j->depth--;
	if (had_items)
		indent(j);
	fputc(is_obj ? '}' : ']', j->out);
}

void sm_json_obj_begin(struct sm_json *j, const char *key)
{
	open_container(j, key, 1);
}

void sm_json_obj_end(struct sm_json *j)
{
	close_container(j, 1);
}

void sm_json_arr_begin(struct sm_json *j, const char *key)
{
	open_container(j, key, 0);
}

void sm_json_arr_end(struct sm_json *j)
{
	close_container(j, 0);
}

void sm_json_str(struct sm_json *j, const char *key, const char *val)
{
	if (begin_value(j, key))
		return;
	if (val)
		sm_json_write_string(j->out, val, strlen(val));
	else
		fputs("null", j->out);
}

void sm_json_int(struct sm_json *j, const char *key, int64_t val)
{
	if (!begin_value(j, key))
		fprintf(j->out, "%" PRId64, val);
}

void sm_json_uint(struct sm_json *j, const char *key, uint64_t val)
{
	if (!begin_value(j, key))
		fprintf(j->out, "%" PRIu64, val);
}

void sm_json_uints(struct sm_json *j, const struct sm_json_kv *kv, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sm_json_uint(j, kv[i].key, kv[i].val);
}

void sm_json_double(struct sm_json *j, const char *key, double val)
{
	if (begin_value(j, key))
		return;
	if (!isfinite(val)) {
		fputs("null", j->out);
		return;
	}
	/* %.6g may print "1e-07": valid JSON. It never prints "inf"/"nan" here. */
	fprintf(j->out, "%.6g", val);
}

void sm_json_bool(struct sm_json *j, const char *key, int val)
{
	if (!begin_value(j, key))
		fputs(val ? "true" : "false", j->out);
}

void sm_json_null(struct sm_json *j, const char *key)
{
	if (!begin_value(j, key))
		fputs("null", j->out);
}

int sm_json_finish(struct sm_json *j)
{
	if (!j->err && (j->depth != 0 || !j->n_items[0]))
		j->err = -EINVAL;
	if (j->err)
		return j->err;
	fputc('\n', j->out);
	if (fflush(j->out) || ferror(j->out))
		return -EIO;
	return 0;
}
