/* SPDX-License-Identifier: MIT */
/*
 * DOC: traffic profile loader (formats and model: see profile.h)
 *
 * Data flow: the whole file is read into memory (capped), pre-scanned once
 * for binary bytes and over-long lines (so every later stage can assume
 * printable text and report FILE:LINE), the format is detected, then the
 * format's parser feeds (src, dst, weight) entries through one resolver
 * (struct ep_index: sorted arrays of the fabric's CA ports by description,
 * host name and system image GUID, binary-searched) into a growing flow
 * array. Finally flows are merged by (src, dst) and sorted heaviest first.
 *
 * Invariants: every flow in the output has src != dst, both CA ports with a
 * LID in the same plane, and a finite weight > 0.
 *
 * Files: this one (entry points, detection, merge); the endpoint index and
 * flow model in profile_ep.c, matrices in profile_matrix.c, counters in
 * profile_counters.c; their shared context in profile_priv.h.
 */
#include "model/profile_priv.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

/* ---- detection, merge, entry points ---- */

static enum sm_profile_format detect(const char *buf, size_t len)
{
	struct lines l = { buf, buf + len, 0 };
	const char *s;
	size_t n;
	while (next_line(&l, &s, &n)) {
		size_t b = 0;
		while (b < n && (s[b] == ' ' || s[b] == '\t'))
			b++;
		s += b;
		n -= b;
		if (!n)
			continue;
		if ((n >= 17 && !strncmp(s, "# Port counters: ", 17)) ||
		    (n >= 26 && !strncmp(s, "# Port extended counters: ", 26)))
			return SM_PROFILE_FMT_PERFQUERY;
		if (s[0] == '#')
			continue;
		if ((n >= 3 && !strncmp(s, "---", 3)) || (n >= 5 && !strncmp(s, "%YAML", 5)))
			return SM_PROFILE_FMT_YAML;
		if (n >= 8 && !strncmp(s, "counters", 8) && (n == 8 || s[8] == ' ' || s[8] == '\t'))
			return SM_PROFILE_FMT_COUNTERS;
		if (n > 5 && !strncmp(s, "plane", 5) && (s[5] == ' ' || s[5] == '\t'))
			return SM_PROFILE_FMT_PERFQUERY;
		/* "key:" at the start of the line with nothing or a space after: YAML mapping */
		size_t i = 0;
		while (i < n && (isalnum((unsigned char)s[i]) || s[i] == '_'))
			i++;
		if (i > 0 && i < n && s[i] == ':' && (i + 1 == n || s[i + 1] == ' ' || s[i + 1] == '\t')) {
			static const char *const keys[] = { "name", "source", "description", "unit", "window", "flows" };
			for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
				if (strlen(keys[k]) == i && !strncmp(s, keys[k], i))
					return SM_PROFILE_FMT_YAML;
		}
		return SM_PROFILE_FMT_TEXT;
	}
	return SM_PROFILE_FMT_TEXT;
}

/* Binary bytes and line lengths, once for every format. */
static int prescan(struct pctx *c, const char *buf, size_t len)
{
	unsigned line = 1;
	size_t col = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)buf[i];
		if (ch == '\n') {
			line++;
			col = 0;
			continue;
		}
		if (++col > SM_PROFILE_MAX_LINE)
			return pf_err(c, -EINVAL, line, "line longer than %d bytes", SM_PROFILE_MAX_LINE);
		if ((ch < 0x20 && ch != '\t' && ch != '\r') || ch == 0x7f)
			return pf_err(c, -EINVAL, line, "binary data (byte 0x%02x): not a profile", ch);
	}
	return 0;
}

static int cmp_pair(const void *a, const void *b)
{
	const struct sm_flow *x = a, *y = b;
	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	return x->dst < y->dst ? -1 : x->dst > y->dst;
}

static int cmp_weight(const void *a, const void *b)
{
	const struct sm_flow *x = a, *y = b;
	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	return cmp_pair(a, b);
}

static void merge_sort(struct pctx *c)
{
	if (!c->n)
		return;
	qsort(c->fl, c->n, sizeof(*c->fl), cmp_pair);
	size_t o = 0;
	for (size_t i = 1; i < c->n; i++) {
		if (c->fl[i].src == c->fl[o].src && c->fl[i].dst == c->fl[o].dst) {
			c->fl[o].weight += c->fl[i].weight;
			c->p->stats.merged++;
		} else {
			c->fl[++o] = c->fl[i];
		}
	}
	c->n = o + 1;
	qsort(c->fl, c->n, sizeof(*c->fl), cmp_weight);
	for (size_t i = 0; i < c->n; i++)
		c->p->stats.kept_weight += c->fl[i].weight;
}

const char *sm_profile_format_str(enum sm_profile_format fmt)
{
	switch (fmt) {
	case SM_PROFILE_FMT_TEXT: return "text";
	case SM_PROFILE_FMT_YAML: return "yaml";
	case SM_PROFILE_FMT_COUNTERS: return "counters";
	case SM_PROFILE_FMT_PERFQUERY: return "perfquery";
	default: return "auto";
	}
}

int sm_profile_parse(const struct sm_fabric *f, const char *name, const char *buf, size_t len,
		     const struct sm_profile_opts *o, struct sm_profile **out, char *err, size_t errlen)
{
	struct pctx *c = calloc(1, sizeof(*c));
	int rc;
	*out = NULL;
	if (err && errlen)
		err[0] = 0;
	if (!c)
		return -ENOMEM;
	c->f = f;
	c->name = name ? name : "profile";
	c->err = err;
	c->errlen = errlen;
	c->max_flows = o && o->max_flows ? o->max_flows : SM_PROFILE_DEFAULT_MAX_FLOWS;
	c->p = calloc(1, sizeof(*c->p));
	c->idx = pf_ep_index_new(f);
	if (!c->p || !c->idx) {
		rc = pf_err(c, -ENOMEM, 0, "out of memory");
		goto fail;
	}
	struct sm_profile *p = c->p;
	snprintf(p->path, sizeof(p->path), "%s", c->name);
	if (len > SM_PROFILE_MAX_BYTES) {
		rc = pf_err(c, -EFBIG, 0, "larger than %u MiB", SM_PROFILE_MAX_BYTES >> 20);
		goto fail;
	}
	if ((rc = prescan(c, buf, len)))
		goto fail;
	p->format = o && o->format ? o->format : detect(buf, len);
	switch (p->format) {
	case SM_PROFILE_FMT_TEXT:
		p->kind = SM_PROFILE_MATRIX;
		rc = pf_parse_text(c, buf, len);
		break;
	case SM_PROFILE_FMT_YAML:
		p->kind = SM_PROFILE_MATRIX;
		rc = pf_parse_yaml(c, buf, len);
		break;
	case SM_PROFILE_FMT_COUNTERS:
	case SM_PROFILE_FMT_PERFQUERY:
		p->kind = SM_PROFILE_COUNTERS;
		rc = pf_parse_counters(c, buf, len);
		break;
	default:
		rc = pf_err(c, -EINVAL, 0, "unknown profile format %d", (int)p->format);
	}
	if (rc)
		goto fail;
	merge_sort(c);
	if (!c->n) {
		const struct sm_profile_stats *st = &p->stats;
		if (p->kind == SM_PROFILE_COUNTERS)
			rc = pf_err(c, -ENOENT, 0, "no host traffic in the counters (%llu ports with two readings, %llu reset)",
				  (unsigned long long)st->counter_ports, (unsigned long long)st->counter_reset);
		else if (!st->entries)
			rc = pf_err(c, -EINVAL, 0, "no flows in the profile");
		else if (st->unknown)
			rc = pf_err(c, -ENOENT, st->first_unknown_line,
				  "no flow resolved: %llu of %llu entries name unknown endpoints (first: '%s')",
				  (unsigned long long)st->unknown, (unsigned long long)st->entries, st->first_unknown);
		else
			rc = pf_err(c, -ENOENT, 0, "no usable flow (%llu entries: %llu zero weight, %llu self, %llu without a common plane)",
				  (unsigned long long)st->entries, (unsigned long long)st->zero,
				  (unsigned long long)st->self, (unsigned long long)st->no_plane);
		goto fail;
	}
	p->flows = c->fl;
	p->n_flows = c->n;
	c->fl = NULL;
	*out = p;
	c->p = NULL;
	rc = 0;
fail:
	free(c->fl);
	sm_profile_free(c->p);
	pf_ep_index_free(c->idx);
	free(c);
	return rc;
}

int sm_profile_load(const struct sm_fabric *f, const char *path, const struct sm_profile_opts *o,
		    struct sm_profile **out, char *err, size_t errlen)
{
	*out = NULL;
	FILE *fp = fopen(path, "rb");
	if (!fp) {
		int e = errno;
		if (err && errlen)
			snprintf(err, errlen, "%s: %s", path, strerror(e));
		return -e;
	}
	struct stat sb;
	char *buf = NULL;
	int rc = 0;
	if (fstat(fileno(fp), &sb) == 0 && S_ISREG(sb.st_mode) && (uint64_t)sb.st_size > SM_PROFILE_MAX_BYTES) {
		if (err && errlen)
			snprintf(err, errlen, "%s: larger than %u MiB", path, SM_PROFILE_MAX_BYTES >> 20);
		fclose(fp);
		return -EFBIG;
	}
	/* read incrementally: also works for pipes, and stops at the cap */
	size_t len = 0, cap = 0;
	for (;;) {
		if (cap - len < 65536) {
			size_t nc = cap ? cap * 2 : 1 << 16;
			if (nc > (size_t)SM_PROFILE_MAX_BYTES + 65536)
				nc = (size_t)SM_PROFILE_MAX_BYTES + 65536;
			if (nc <= len + 1) {
				rc = -EFBIG;
				if (err && errlen)
					snprintf(err, errlen, "%s: larger than %u MiB", path, SM_PROFILE_MAX_BYTES >> 20);
				goto out;
			}
			char *nb = realloc(buf, nc);
			if (!nb) {
				rc = -ENOMEM;
				if (err && errlen)
					snprintf(err, errlen, "%s: out of memory", path);
				goto out;
			}
			buf = nb;
			cap = nc;
		}
		size_t got = fread(buf + len, 1, cap - len, fp);
		len += got;
		if (got == 0)
			break;
	}
	if (ferror(fp)) {
		rc = -EIO;
		if (err && errlen)
			snprintf(err, errlen, "%s: read error", path);
		goto out;
	}
	rc = sm_profile_parse(f, path, buf ? buf : "", len, o, out, err, errlen);
out:
	free(buf);
	fclose(fp);
	return rc;
}

void sm_profile_free(struct sm_profile *p)
{
	if (!p)
		return;
	free(p->flows);
	free(p->heat);
	free(p);
}

int sm_profile_warning(const struct sm_profile *p, char *buf, size_t len)
{
	const struct sm_profile_stats *st = &p->stats;
	double tot = st->total_weight > 0 ? st->total_weight : 1;
	int warn = 0;
	size_t k = 0;
	int w;
#define ADD(...)                                                        \
	do {                                                            \
		w = k < len ? snprintf(buf + k, len - k, __VA_ARGS__)     \
			    : snprintf(NULL, 0, __VA_ARGS__);            \
		if (w > 0)                                              \
			k += (size_t)w;                                 \
	} while (0)
	if (!len)
		return st->unknown || st->self || st->no_plane || st->counter_reset || st->gravity_capped;
	buf[0] = 0;
	ADD("%s: %s profile, %zu flows (weight %g)", p->path, sm_profile_format_str(p->format), p->n_flows,
	    st->kept_weight);
	if (st->unknown) {
		warn = 1;
		ADD("; %llu entries with unknown endpoints dropped (weight %g, %.1f%%), first '%s' at line %u",
		    (unsigned long long)st->unknown, st->unknown_weight, 100 * st->unknown_weight / tot,
		    st->first_unknown, st->first_unknown_line);
	}
	if (st->self) {
		warn = 1;
		ADD("; %llu self flows dropped (weight %g)", (unsigned long long)st->self, st->self_weight);
	}
	if (st->no_plane) {
		warn = 1;
		ADD("; %llu flows without a common plane dropped (weight %g)", (unsigned long long)st->no_plane,
		    st->no_plane_weight);
	}
	if (st->counter_reset) {
		warn = 1;
		ADD("; %llu ports skipped (counter reset or wrap)", (unsigned long long)st->counter_reset);
	}
	if (st->gravity_capped) {
		warn = 1;
		ADD("; gravity model capped: weight %g (%.1f%%) not turned into flows", st->gravity_capped_weight,
		    100 * st->gravity_capped_weight / tot);
	}
#undef ADD
	return warn;
}
