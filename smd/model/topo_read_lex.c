/* SPDX-License-Identifier: MIT */
/*
 * DOC: topology dump readers, lines and storage
 *
 * What the grammar (topo_read_parse.c) stands on: the 64 KiB block line reader
 * (no line over SM_TOPO_MAX_LINE), SM_TOPO_AUTO's sniffing of the first
 * block, the "FILE:LINE: what" error message, growable arrays, the arena
 * of node ids and their hash table, and the link rate names the writers
 * share.
 */
#include "config.h"
#include "model/topo_read_priv.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>

int rd_fail(struct rd *r, unsigned line, int rc, const char *fmt, ...)
{
	va_list ap;

	if (!r->err)
		return rc;
	r->err->line = line;
	int n = snprintf(r->err->msg, sizeof(r->err->msg), "%s:%u: ", r->name, line);
	if (n < 0 || (size_t)n >= sizeof(r->err->msg))
		return rc;
	va_start(ap, fmt);
	vsnprintf(r->err->msg + n, sizeof(r->err->msg) - (size_t)n, fmt, ap);
	va_end(ap);
	return rc;
}

/* ---- line reader ---- */

/* 1 = a line in *out (NUL-terminated, no '\n'), 0 = EOF, < 0 = error. */
int rd_next_line(struct rd *r, char **out, size_t *len)
{
	for (;;) {
		char *s = r->buf + r->start;
		char *nl = memchr(s, '\n', r->end - r->start);
		size_t l;

		if (nl || (r->eof && r->end > r->start)) {
			l = nl ? (size_t)(nl - s) : r->end - r->start;
			r->line++;
			if (l > SM_TOPO_MAX_LINE)
				return rd_fail(r, r->line, -EINVAL, "line longer than %d bytes",
					    SM_TOPO_MAX_LINE);
			s[l] = '\0';
			r->start += l + (nl ? 1 : 0);
			r->unterminated = !nl;
			*out = s;
			*len = l;
			return 1;
		}
		if (r->eof)
			return 0;
		if (r->end - r->start > SM_TOPO_MAX_LINE)
			return rd_fail(r, r->line + 1, -EINVAL, "line longer than %d bytes",
				    SM_TOPO_MAX_LINE);
		memmove(r->buf, r->buf + r->start, r->end - r->start);
		r->end -= r->start;
		r->start = 0;
		/* keep one byte for the terminating NUL of an unterminated last line */
		size_t got = fread(r->buf + r->end, 1, RD_BLOCK - 1 - r->end, r->in);
		r->end += got;
		if (got == 0) {
			if (ferror(r->in))
				return rd_fail(r, r->line, -EIO, "read error: %s", strerror(errno));
			r->eof = true;
		}
	}
}

static int set_mode(struct rd *r, int mode)
{
	if (r->mode == MODE_AUTO)
		r->mode = mode;
	return 0;
}

/* SM_TOPO_AUTO: fill the first block and look for ibnetdiscover's signatures. */
int rd_sniff(struct rd *r)
{
	while (!r->eof && r->end < RD_BLOCK - 1) {
		size_t got = fread(r->buf + r->end, 1, RD_BLOCK - 1 - r->end, r->in);
		r->end += got;
		if (!got) {
			if (ferror(r->in))
				return rd_fail(r, 0, -EIO, "read error: %s", strerror(errno));
			r->eof = true;
		}
	}
	const char *s = r->buf, *end = r->buf + r->end;
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t l = nl ? (size_t)(nl - s) : (size_t)(end - s);
		if (l > 6 && !memcmp(s, "Switch", 6)) {
			for (size_t i = 6; i + 11 <= l; i++)
				if (!memcmp(s + i, " port 0 lid", 11))
					return set_mode(r, MODE_IBND);
		} else if (l > 3 && s[0] == '[') {
			size_t i = 1;
			while (i < l && isdigit((unsigned char)s[i]))
				i++;
			if (i > 1 && i + 1 < l && s[i] == ']' && s[i + 1] == '(')
				return set_mode(r, MODE_IBND);
		}
		s += l + 1;
	}
	return set_mode(r, MODE_IBSIM);
}

/* ---- error messages ---- */

int rd_num_fail(struct rd *r, int how, const char *what, uint64_t max)
{
	if (how == -2)
		return rd_fail(r, r->line, -EINVAL, "%s out of range (max %llu)", what,
			    (unsigned long long)max);
	return rd_fail(r, r->line, -EINVAL, "expected %s", what);
}

int rd_guid_fail(struct rd *r, int how, const char *what)
{
	if (how == -2)
		return rd_fail(r, r->line, -EINVAL, "%s has more than 16 hex digits", what);
	return rd_fail(r, r->line, -EINVAL, "expected %s (hex)", what);
}

/* ---- rate names (shared with the writers) ---- */

static const struct {
	const char *s;
	uint8_t len, speed, flags;
} speeds[] = {
	{ "SDR", 3, 1, 0 }, { "DDR", 3, 2, 0 }, { "QDR", 3, 4, 0 },
	{ "FDR10", 5, 4, SM_PORT_F_FDR10 },
	{ "FDR", 3, 1, SM_PORT_F_EXT_SPEED }, { "EDR", 3, 2, SM_PORT_F_EXT_SPEED },
	{ "HDR", 3, 4, SM_PORT_F_EXT_SPEED }, { "NDR", 3, 8, SM_PORT_F_EXT_SPEED },
	{ "XDR", 3, 16, SM_PORT_F_EXT_SPEED },
};

static const struct {
	const char *s;
	uint8_t len, width;
} widths[] = {
	{ "1x", 2, 1 }, { "4x", 2, 2 }, { "8x", 2, 4 }, { "12x", 3, 8 }, { "2x", 2, 16 },
};

const char *sm_topo_width_str(unsigned width)
{
	for (size_t i = 0; i < sizeof(widths) / sizeof(widths[0]); i++)
		if (widths[i].width == width)
			return widths[i].s;
	return "??";
}

const char *sm_topo_speed_str(unsigned speed, unsigned flags)
{
	flags &= SM_PORT_F_EXT_SPEED | SM_PORT_F_FDR10;
	for (size_t i = 0; i < sizeof(speeds) / sizeof(speeds[0]); i++)
		if (speeds[i].speed == speed && speeds[i].flags == flags)
			return speeds[i].s;
	return "???";
}

int sm_topo_parse_rate(const char *tok, size_t len, uint8_t *width, uint8_t *speed, uint8_t *flags)
{
	size_t wl;

	*width = *speed = *flags = 0;
	if (len >= 2 && tok[0] == '?' && tok[1] == '?') {
		wl = 2;
	} else {
		size_t i;
		for (i = 0; i < sizeof(widths) / sizeof(widths[0]); i++) {
			size_t l = widths[i].len, k = 0;
			while (k < l && k < len && tok[k] == widths[i].s[k])
				k++;
			if (k == l) {
				*width = widths[i].width;
				break;
			}
		}
		if (i == sizeof(widths) / sizeof(widths[0]))
			return -EINVAL;
		wl = widths[i].len;
	}
	tok += wl;
	len -= wl;
	if (len == 3 && !memcmp(tok, "???", 3))
		return 0;
	for (size_t i = 0; i < sizeof(speeds) / sizeof(speeds[0]); i++) {
		size_t k = 0;
		if (speeds[i].len != len)
			continue;
		while (k < len && tok[k] == speeds[i].s[k])
			k++;
		if (k == len) {
			*speed = speeds[i].speed;
			*flags = speeds[i].flags;
			return 0;
		}
	}
	return -EINVAL;
}

/* ---- growable storage ---- */

int rd_grow(void **p, uint32_t *cap, uint32_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	uint32_t nc = *cap ? *cap : 256;
	while (nc < need) {
		if (nc > UINT32_MAX / 2)
			return -ENOMEM;
		nc *= 2;
	}
	void *q = realloc(*p, (size_t)nc * elem);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = nc;
	return 0;
}

int rd_arena_add(struct rd *r, const char *s, size_t len, uint32_t *off)
{
	if (r->arena_len + len + 1 > r->arena_cap) {
		size_t nc = r->arena_cap ? r->arena_cap * 2 : 65536;
		while (nc < r->arena_len + len + 1)
			nc *= 2;
		if (nc > UINT32_MAX)
			return -ENOMEM;
		char *a = realloc(r->arena, nc);
		if (!a)
			return -ENOMEM;
		r->arena = a;
		r->arena_cap = nc;
	}
	memcpy(r->arena + r->arena_len, s, len);
	r->arena[r->arena_len + len] = '\0';
	*off = (uint32_t)r->arena_len;
	r->arena_len += len + 1;
	return 0;
}

/* Node ids are ~18 bytes: hash them 8 bytes at a time (multiply-xorshift). */
static uint32_t name_hash(const char *s, size_t len)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ len, w;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		memcpy(&w, s + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	if (i < len) {
		w = 0;
		memcpy(&w, s + i, len - i);
		h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
	}
	h ^= h >> 29;
	return (uint32_t)h;
}

uint32_t rd_name_find(const struct rd *r, const char *s, size_t len)
{
	if (!r->ht_cap)
		return SM_NONE;
	uint32_t h = name_hash(s, len) & (r->ht_cap - 1);
	while (r->ht[h] != SM_NONE) {
		const char *n = r->arena + r->nodes[r->ht[h]].name;
		if (!strncmp(n, s, len) && n[len] == '\0')
			return r->ht[h];
		h = (h + 1) & (r->ht_cap - 1);
	}
	return SM_NONE;
}

int rd_name_insert(struct rd *r, uint32_t node)
{
	const char *n = r->arena + r->nodes[node].name;

	if ((r->fab->n_nodes + 1) * 2 > r->ht_cap) {
		uint32_t nc = r->ht_cap ? r->ht_cap * 2 : 1024;
		uint32_t *t = malloc((size_t)nc * sizeof(*t));
		if (!t)
			return -ENOMEM;
		memset(t, 0xff, (size_t)nc * sizeof(*t));
		for (uint32_t i = 0; i < r->ht_cap; i++) {
			if (r->ht[i] == SM_NONE)
				continue;
			const char *m = r->arena + r->nodes[r->ht[i]].name;
			uint32_t h = name_hash(m, strlen(m)) & (nc - 1);
			while (t[h] != SM_NONE)
				h = (h + 1) & (nc - 1);
			t[h] = r->ht[i];
		}
		free(r->ht);
		r->ht = t;
		r->ht_cap = nc;
	}
	uint32_t h = name_hash(n, strlen(n)) & (r->ht_cap - 1);
	while (r->ht[h] != SM_NONE)
		h = (h + 1) & (r->ht_cap - 1);
	r->ht[h] = node;
	return 0;
}
