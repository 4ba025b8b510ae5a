/* SPDX-License-Identifier: MIT */
/*
 * DOC: a small JSON reader (json.h): one value into a tree of struct smd_jv
 *
 * Used for control-socket requests (smd/ctl) and by smctl to read replies.
 * Strict RFC 8259: one value, surrounding whitespace allowed, nesting at
 * most SMD_JSON_MAX_DEPTH, strings decoded to UTF-8 (an escaped NUL is
 * refused, so every string is a C string). Errors name the byte offset.
 */
#include "lib/json.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct jp {
	const char *s;
	size_t len, pos;
	char *err;
	size_t errlen;
};

static int jp_fail(struct jp *p, const char *what)
{
	if (p->err && p->errlen)
		snprintf(p->err, p->errlen, "offset %zu: %s", p->pos, what);
	return -EINVAL;
}

static void jp_ws(struct jp *p)
{
	while (p->pos < p->len && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' || p->s[p->pos] == '\n' ||
				   p->s[p->pos] == '\r'))
		p->pos++;
}

void smd_jv_free(struct smd_jv *v)
{
	while (v) {
		struct smd_jv *next = v->next;
		smd_jv_free(v->child);
		free(v->key);
		free(v->str);
		free(v);
		v = next;
	}
}

static int hex4(const char *s, unsigned *out)
{
	unsigned v = 0;
	for (int i = 0; i < 4; i++) {
		char c = s[i];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return -1;
	}
	*out = v;
	return 0;
}

static size_t utf8_put(char *o, unsigned cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xC0 | (cp >> 6));
		o[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xE0 | (cp >> 12));
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		o[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	o[0] = (char)(0xF0 | (cp >> 18));
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
	o[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

/* A string literal at p->pos (the opening quote); *out malloc'ed. */
static int jp_string(struct jp *p, char **out)
{
	size_t start = ++p->pos, end = start;
	char *o, *w;

	/* find the closing quote first: the decoded text is never longer */
	while (end < p->len && p->s[end] != '"') {
		if (p->s[end] == '\\')
			end++;
		end++;
	}
	if (end >= p->len)
		return jp_fail(p, "unterminated string");
	o = malloc(end - start + 1);
	if (!o)
		return -ENOMEM;
	w = o;
	while (p->pos < end) {
		unsigned char c = (unsigned char)p->s[p->pos];
		if (c < 0x20) {
			free(o);
			return jp_fail(p, "control character in string");
		}
		if (c >= 0x80) {
			/* JSON text is UTF-8: invalid bytes would come back changed in replies */
			size_t n = sm_json_utf8_len((const unsigned char *)p->s + p->pos, end - p->pos);
			if (!n) {
				free(o);
				return jp_fail(p, "invalid UTF-8 in string");
			}
			memcpy(w, p->s + p->pos, n);
			w += n;
			p->pos += n;
			continue;
		}
		if (c != '\\') {
			*w++ = (char)c;
			p->pos++;
			continue;
		}
		p->pos++;
		c = (unsigned char)p->s[p->pos++];
		switch (c) {
		case '"': *w++ = '"'; break;
		case '\\': *w++ = '\\'; break;
		case '/': *w++ = '/'; break;
		case 'b': *w++ = '\b'; break;
		case 'f': *w++ = '\f'; break;
		case 'n': *w++ = '\n'; break;
		case 'r': *w++ = '\r'; break;
		case 't': *w++ = '\t'; break;
		case 'u': {
			unsigned cp, lo;
			if (p->pos + 4 > end || hex4(p->s + p->pos, &cp)) {
				free(o);
				return jp_fail(p, "bad \\u escape");
			}
			p->pos += 4;
			if (cp >= 0xD800 && cp <= 0xDBFF) {
				if (p->pos + 6 > end || p->s[p->pos] != '\\' || p->s[p->pos + 1] != 'u' ||
				    hex4(p->s + p->pos + 2, &lo) || lo < 0xDC00 || lo > 0xDFFF) {
					free(o);
					return jp_fail(p, "unpaired surrogate");
				}
				p->pos += 6;
				cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
			} else if (cp >= 0xDC00 && cp <= 0xDFFF) {
				free(o);
				return jp_fail(p, "unpaired surrogate");
			}
			if (cp == 0) {
				free(o);
				return jp_fail(p, "NUL in string");
			}
			/* \uXXXX is 6 input bytes, at most 4 output bytes: fits */
			w += utf8_put(w, cp);
			break;
		}
		default:
			free(o);
			return jp_fail(p, "bad escape in string");
		}
	}
	*w = '\0';
	p->pos = end + 1;
	*out = o;
	return 0;
}

static int jp_number(struct jp *p, double *out)
{
	size_t st = p->pos, i = p->pos;
	char tmp[64];

	if (i < p->len && p->s[i] == '-')
		i++;
	if (i >= p->len || p->s[i] < '0' || p->s[i] > '9')
		return jp_fail(p, "bad number");
	if (p->s[i] == '0')
		i++;
	else
		while (i < p->len && p->s[i] >= '0' && p->s[i] <= '9')
			i++;
	if (i < p->len && p->s[i] == '.') {
		i++;
		if (i >= p->len || p->s[i] < '0' || p->s[i] > '9')
			return jp_fail(p, "bad number");
		while (i < p->len && p->s[i] >= '0' && p->s[i] <= '9')
			i++;
	}
	if (i < p->len && (p->s[i] == 'e' || p->s[i] == 'E')) {
		i++;
		if (i < p->len && (p->s[i] == '+' || p->s[i] == '-'))
			i++;
		if (i >= p->len || p->s[i] < '0' || p->s[i] > '9')
			return jp_fail(p, "bad number");
		while (i < p->len && p->s[i] >= '0' && p->s[i] <= '9')
			i++;
	}
	if (i - st >= sizeof(tmp))
		return jp_fail(p, "number too long");
	memcpy(tmp, p->s + st, i - st);
	tmp[i - st] = '\0';
	*out = strtod(tmp, NULL);
	if (!isfinite(*out))
		return jp_fail(p, "number out of range");
	p->pos = i;
	return 0;
}

static int jp_lit(struct jp *p, const char *lit)
{
	size_t n = strlen(lit);
	if (p->len - p->pos < n || memcmp(p->s + p->pos, lit, n))
		return jp_fail(p, "unexpected character");
	p->pos += n;
	return 0;
}

static int jp_value(struct jp *p, struct smd_jv *v, int depth);

static int jp_container(struct jp *p, struct smd_jv *v, int depth)
{
	int obj = p->s[p->pos] == '{';
	char close = obj ? '}' : ']';
	struct smd_jv **tail = &v->child;
	int rc;

	if (depth >= SMD_JSON_MAX_DEPTH)
		return jp_fail(p, "nested too deep");
	v->type = obj ? SMD_J_OBJ : SMD_J_ARR;
	p->pos++;
	jp_ws(p);
	if (p->pos < p->len && p->s[p->pos] == close) {
		p->pos++;
		return 0;
	}
	for (;;) {
		struct smd_jv *k = calloc(1, sizeof(*k));
		if (!k)
			return -ENOMEM;
		*tail = k;
		tail = &k->next;
		v->n++;
		jp_ws(p);
		if (obj) {
			if (p->pos >= p->len || p->s[p->pos] != '"')
				return jp_fail(p, "expected a member name");
			if ((rc = jp_string(p, &k->key)))
				return rc;
			jp_ws(p);
			if (p->pos >= p->len || p->s[p->pos] != ':')
				return jp_fail(p, "expected ':'");
			p->pos++;
		}
		if ((rc = jp_value(p, k, depth + 1)))
			return rc;
		jp_ws(p);
		if (p->pos >= p->len)
			return jp_fail(p, "unterminated container");
		if (p->s[p->pos] == ',') {
			p->pos++;
			continue;
		}
		if (p->s[p->pos] == close) {
			p->pos++;
			return 0;
		}
		return jp_fail(p, obj ? "expected ',' or '}'" : "expected ',' or ']'");
	}
}

static int jp_value(struct jp *p, struct smd_jv *v, int depth)
{
	jp_ws(p);
	if (p->pos >= p->len)
		return jp_fail(p, "expected a value");
	switch (p->s[p->pos]) {
	case '{':
	case '[':
		return jp_container(p, v, depth);
	case '"':
		v->type = SMD_J_STR;
		return jp_string(p, &v->str);
	case 't':
		v->type = SMD_J_BOOL;
		v->boolean = 1;
		return jp_lit(p, "true");
	case 'f':
		v->type = SMD_J_BOOL;
		return jp_lit(p, "false");
	case 'n':
		v->type = SMD_J_NULL;
		return jp_lit(p, "null");
	default:
		v->type = SMD_J_NUM;
		return jp_number(p, &v->num);
	}
}

int smd_json_parse(const char *buf, size_t len, struct smd_jv **out, char *err, size_t errlen)
{
	struct jp p = { .s = buf, .len = len, .err = err, .errlen = errlen };
	struct smd_jv *v = calloc(1, sizeof(*v));
	int rc;

	if (!v)
		return -ENOMEM;
	if (memchr(buf, '\0', len)) {
		p.pos = (size_t)((const char *)memchr(buf, '\0', len) - buf);
		rc = jp_fail(&p, "NUL byte");
	} else {
		rc = jp_value(&p, v, 0);
	}
	if (!rc) {
		jp_ws(&p);
		if (p.pos != p.len)
			rc = jp_fail(&p, "trailing characters after the value");
	}
	if (rc) {
		if (rc == -ENOMEM && err && errlen)
			snprintf(err, errlen, "out of memory");
		smd_jv_free(v);
		return rc;
	}
	*out = v;
	return 0;
}

const struct smd_jv *smd_jv_get(const struct smd_jv *v, const char *key)
{
	if (!v || v->type != SMD_J_OBJ)
		return NULL;
	for (const struct smd_jv *k = v->child; k; k = k->next)
		if (k->key && !strcmp(k->key, key))
			return k;
	return NULL;
}

const char *smd_jv_str(const struct smd_jv *v, const char *key, const char *def)
{
	const struct smd_jv *m = smd_jv_get(v, key);
	return m && m->type == SMD_J_STR ? m->str : def;
}

double smd_jv_num(const struct smd_jv *v, const char *key, double def)
{
	const struct smd_jv *m = smd_jv_get(v, key);
	return m && m->type == SMD_J_NUM ? m->num : def;
}

int smd_jv_bool(const struct smd_jv *v, const char *key, int def)
{
	const struct smd_jv *m = smd_jv_get(v, key);
	return m && m->type == SMD_J_BOOL ? m->boolean : def;
}
