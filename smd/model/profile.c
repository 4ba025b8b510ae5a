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
 */
#include "model/profile.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

/* ---- errors ---- */

struct pctx {
	const struct sm_fabric *f;
	const char *name;
	struct sm_profile *p;
	char *err;
	size_t errlen;
	/* flows being collected */
	struct sm_flow *fl;
	size_t n, cap;
	struct ep_index *idx;
	size_t max_flows;
	/* scratch for endpoints */
	char tok[5][SM_PROFILE_MAX_LINE + 1];
};

__attribute__((format(printf, 4, 5)))
static int perr(struct pctx *c, int rc, unsigned line, const char *fmt, ...)
{
	if (!c->err || !c->errlen)
		return rc;
	int k = line ? snprintf(c->err, c->errlen, "%s:%u: ", c->name, line)
		     : snprintf(c->err, c->errlen, "%s: ", c->name);
	if (k < 0 || (size_t)k >= c->errlen)
		return rc;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->err + k, c->errlen - (size_t)k, fmt, ap);
	va_end(ap);
	return rc;
}

/* ---- endpoint index ---- */

struct ca_ent {
	uint32_t node, port;
	uint8_t plane;
	uint64_t sysimg;
	const char *desc;
	char host[SM_DESC_MAX + 1];
};

struct ep_index {
	struct ca_ent *e;
	size_t n;
	uint32_t *by_desc, *by_host, *by_sys;
};

/* An endpoint resolved: its port per plane; plane >= 0 when it names one port. */
struct ep {
	int plane;
	uint32_t port[SM_MAX_PLANES];
};

static const struct ca_ent *g_sort_e; /* qsort has no context argument in C11 */

static int cmp_desc(const void *a, const void *b)
{
	const struct ca_ent *x = &g_sort_e[*(const uint32_t *)a], *y = &g_sort_e[*(const uint32_t *)b];
	int r = strcmp(x->desc, y->desc);
	return r ? r : (x->node < y->node ? -1 : x->node > y->node);
}

static int cmp_host(const void *a, const void *b)
{
	const struct ca_ent *x = &g_sort_e[*(const uint32_t *)a], *y = &g_sort_e[*(const uint32_t *)b];
	int r = strcmp(x->host, y->host);
	return r ? r : (x->node < y->node ? -1 : x->node > y->node);
}

static int cmp_sys(const void *a, const void *b)
{
	const struct ca_ent *x = &g_sort_e[*(const uint32_t *)a], *y = &g_sort_e[*(const uint32_t *)b];
	if (x->sysimg != y->sysimg)
		return x->sysimg < y->sysimg ? -1 : 1;
	return x->node < y->node ? -1 : x->node > y->node;
}

static void ep_index_free(struct ep_index *x)
{
	if (!x)
		return;
	free(x->e);
	free(x->by_desc);
	free(x->by_host);
	free(x->by_sys);
	free(x);
}

/* Endpoint port of a CA node: its first port with a LID (SM_NONE if none). */
static uint32_t ca_port(const struct sm_fabric *f, uint32_t n)
{
	const struct sm_node *nd = &f->nodes[n];
	for (unsigned p = 1; p <= nd->nports; p++)
		if (sm_port(f, n, p)->lid)
			return sm_port_index(f, n, p);
	return SM_NONE;
}

static struct ep_index *ep_index_new(const struct sm_fabric *f)
{
	struct ep_index *x = calloc(1, sizeof(*x));
	if (!x)
		return NULL;
	x->e = calloc((size_t)f->n_nodes + 1, sizeof(*x->e));
	x->by_desc = calloc((size_t)f->n_nodes + 1, sizeof(uint32_t));
	x->by_host = calloc((size_t)f->n_nodes + 1, sizeof(uint32_t));
	x->by_sys = calloc((size_t)f->n_nodes + 1, sizeof(uint32_t));
	if (!x->e || !x->by_desc || !x->by_host || !x->by_sys) {
		ep_index_free(x);
		return NULL;
	}
	for (uint32_t n = 0; n < f->n_nodes; n++) {
		const struct sm_node *nd = &f->nodes[n];
		if (nd->type != SM_NODE_CA)
			continue;
		uint32_t pi = ca_port(f, n);
		if (pi == SM_NONE)
			continue;
		struct ca_ent *e = &x->e[x->n];
		e->node = n;
		e->port = pi;
		e->plane = nd->plane;
		e->sysimg = nd->sysimg_guid;
		e->desc = nd->desc;
		size_t hl = strcspn(nd->desc, " \t");
		memcpy(e->host, nd->desc, hl);
		e->host[hl] = 0;
		x->by_desc[x->n] = x->by_host[x->n] = x->by_sys[x->n] = (uint32_t)x->n;
		x->n++;
	}
	g_sort_e = x->e;
	qsort(x->by_desc, x->n, sizeof(uint32_t), cmp_desc);
	qsort(x->by_host, x->n, sizeof(uint32_t), cmp_host);
	qsort(x->by_sys, x->n, sizeof(uint32_t), cmp_sys);
	g_sort_e = NULL;
	return x;
}

/* First position in sorted order whose key is >= k (lower bound). */
static size_t lb_str(const struct ep_index *x, const uint32_t *ord, bool host, const char *k)
{
	size_t lo = 0, hi = x->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct ca_ent *e = &x->e[ord[mid]];
		if (strcmp(host ? e->host : e->desc, k) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static size_t lb_sys(const struct ep_index *x, uint64_t k)
{
	size_t lo = 0, hi = x->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (x->e[x->by_sys[mid]].sysimg < k)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void ep_clear(struct ep *ep)
{
	ep->plane = -1;
	for (unsigned i = 0; i < SM_MAX_PLANES; i++)
		ep->port[i] = SM_NONE;
}

static bool ep_empty(const struct ep *ep)
{
	for (unsigned i = 0; i < SM_MAX_PLANES; i++)
		if (ep->port[i] != SM_NONE)
			return false;
	return true;
}

static void ep_add(struct ep *ep, const struct ca_ent *e)
{
	if (ep->port[e->plane] == SM_NONE)
		ep->port[e->plane] = e->port;
}

/* Add the host group of entry e: nodes with the same host name or system image. */
static void ep_add_group(const struct ep_index *x, struct ep *ep, const struct ca_ent *e)
{
	ep_add(ep, e);
	if (e->host[0])
		for (size_t i = lb_str(x, x->by_host, true, e->host);
		     i < x->n && !strcmp(x->e[x->by_host[i]].host, e->host); i++)
			ep_add(ep, &x->e[x->by_host[i]]);
	if (e->sysimg)
		for (size_t i = lb_sys(x, e->sysimg); i < x->n && x->e[x->by_sys[i]].sysimg == e->sysimg; i++)
			ep_add(ep, &x->e[x->by_sys[i]]);
}

static const struct ca_ent *ent_of_node(const struct ep_index *x, uint32_t node)
{
	/* by_sys order is by (sysimg, node); a linear scan is fine for GUID endpoints only */
	for (size_t i = 0; i < x->n; i++)
		if (x->e[i].node == node)
			return &x->e[i];
	return NULL;
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* Parse a GUID "0x..." strictly. */
static bool parse_guid(const char *s, uint64_t *g)
{
	if (s[0] != '0' || (s[1] != 'x' && s[1] != 'X') || !s[2] || strlen(s) > 18)
		return false;
	uint64_t v = 0;
	for (const char *q = s + 2; *q; q++) {
		int d;
		if (*q >= '0' && *q <= '9')
			d = *q - '0';
		else if (*q >= 'a' && *q <= 'f')
			d = *q - 'a' + 10;
		else if (*q >= 'A' && *q <= 'F')
			d = *q - 'A' + 10;
		else
			return false;
		v = (v << 4) | (uint64_t)d;
	}
	*g = v;
	return true;
}

static bool parse_uint(const char *s, unsigned long max, unsigned long *v)
{
	if (!all_digits(s) || strlen(s) > 12)
		return false;
	unsigned long x = strtoul(s, NULL, 10);
	if (x > max)
		return false;
	*v = x;
	return true;
}

/*
 * Resolve one endpoint token. Returns 0 (ep filled; empty if unknown) or
 * -EINVAL for malformed syntax (bad GUID/LID/rail), with the message.
 */
static int resolve(struct pctx *c, unsigned line, const char *tok, struct ep *ep)
{
	const struct sm_fabric *f = c->f;
	const struct ep_index *x = c->idx;
	ep_clear(ep);
	if (!*tok)
		return perr(c, -EINVAL, line, "empty endpoint");
	uint64_t g;
	if (tok[0] == '0' && (tok[1] == 'x' || tok[1] == 'X')) {
		if (!parse_guid(tok, &g))
			return perr(c, -EINVAL, line, "bad GUID '%.40s'", tok);
		uint32_t pi = sm_fabric_find_port(f, g);
		uint32_t node = SM_NONE;
		if (pi != SM_NONE && f->nodes[f->ports[pi].node].type == SM_NODE_CA && f->ports[pi].lid) {
			const struct ca_ent *e = ent_of_node(x, f->ports[pi].node);
			if (e)
				ep_add_group(x, ep, e);
			unsigned pl = f->nodes[f->ports[pi].node].plane;
			ep->port[pl] = pi;
			ep->plane = (int)pl;
			return 0;
		}
		if (pi == SM_NONE)
			node = sm_fabric_find_node(f, g);
		if (node != SM_NONE && f->nodes[node].type == SM_NODE_CA) {
			const struct ca_ent *e = ent_of_node(x, node);
			if (e) {
				ep_add_group(x, ep, e);
				ep->port[e->plane] = e->port;
				ep->plane = e->plane;
			}
		}
		return 0;
	}
	/* optional ":rail" suffix */
	int rail = -1;
	char base[SM_PROFILE_MAX_LINE + 1];
	snprintf(base, sizeof(base), "%s", tok);
	const char *colon = strrchr(tok, ':');
	unsigned long v;
	if (all_digits(tok)) {
		/* plain LID */
	} else if (colon && colon != tok && all_digits(colon + 1)) {
		/* a description containing ':' wins over host:rail */
		size_t i = lb_str(x, x->by_desc, false, tok);
		if (!(i < x->n && !strcmp(x->e[x->by_desc[i]].desc, tok))) {
			if (!parse_uint(colon + 1, SM_MAX_PLANES - 1, &v))
				return perr(c, -EINVAL, line, "bad rail in '%.60s' (0..%d)", tok, SM_MAX_PLANES - 1);
			rail = (int)v;
			base[colon - tok] = 0;
		}
	}
	if (all_digits(base)) {
		if (!parse_uint(base, SM_UNICAST_LID_MAX, &v) || v == 0)
			return perr(c, -EINVAL, line, "bad LID '%.40s' (1..%u)", base, SM_UNICAST_LID_MAX);
		for (unsigned pl = 0; pl < f->n_planes; pl++) {
			if (rail >= 0 && (unsigned)rail != pl)
				continue;
			uint32_t pi = sm_fabric_find_lid(f, pl, (uint16_t)v);
			if (pi != SM_NONE && f->nodes[f->ports[pi].node].type == SM_NODE_CA)
				ep->port[pl] = pi;
		}
		if (rail >= 0 || f->n_planes == 1)
			ep->plane = rail >= 0 ? rail : 0;
		return 0;
	}
	if (rail < 0) {
		/* full node description: one port, or one per plane if repeated across planes */
		size_t i = lb_str(x, x->by_desc, false, base), k = 0;
		const struct ca_ent *first = NULL;
		for (; i < x->n && !strcmp(x->e[x->by_desc[i]].desc, base); i++, k++) {
			const struct ca_ent *e = &x->e[x->by_desc[i]];
			if (!first)
				first = e;
			ep_add(ep, e);
		}
		if (k == 1) {
			ep_add_group(x, ep, first);
			ep->port[first->plane] = first->port;
			ep->plane = first->plane;
		}
		if (k)
			return 0;
	}
	/* host name (description prefix), extended by system image */
	for (size_t i = lb_str(x, x->by_host, true, base);
	     i < x->n && !strcmp(x->e[x->by_host[i]].host, base); i++)
		ep_add_group(x, ep, &x->e[x->by_host[i]]);
	if (rail >= 0) {
		/* keep the host's other NICs: a cross-plane flow may need them */
		if (ep->port[rail] == SM_NONE)
			ep_clear(ep);
		else
			ep->plane = rail;
	}
	return 0;
}

/* ---- flow collection ---- */

static int push_flow(struct pctx *c, uint32_t s, uint32_t d, double w)
{
	if (c->n == c->cap) {
		size_t nc = c->cap ? c->cap * 2 : 1024;
		struct sm_flow *nf = realloc(c->fl, nc * sizeof(*nf));
		if (!nf)
			return -ENOMEM;
		c->fl = nf;
		c->cap = nc;
	}
	c->fl[c->n++] = (struct sm_flow){ .src = s, .dst = d, .weight = w };
	return 0;
}

static void note_unknown(struct pctx *c, unsigned line, const char *tok, double w)
{
	struct sm_profile_stats *st = &c->p->stats;
	st->unknown++;
	st->unknown_weight += w;
	if (!st->first_unknown_line) {
		st->first_unknown_line = line ? line : 1;
		snprintf(st->first_unknown, sizeof(st->first_unknown), "%s", tok);
	}
}

/* One matrix entry: resolve both ends, expand over planes, push. */
static int add_entry(struct pctx *c, unsigned line, const char *stok, const char *dtok, double w)
{
	struct sm_profile_stats *st = &c->p->stats;
	struct ep s, d;
	int rc;
	st->entries++;
	st->total_weight += w;
	if ((rc = resolve(c, line, stok, &s)) || (rc = resolve(c, line, dtok, &d)))
		return rc;
	if (w == 0) {
		st->zero++;
		return 0;
	}
	if (ep_empty(&s) || ep_empty(&d)) {
		note_unknown(c, line, ep_empty(&s) ? stok : dtok, w);
		return 0;
	}
	int plane = d.plane >= 0 ? d.plane : s.plane;
	unsigned planes[SM_MAX_PLANES], np = 0;
	if (plane >= 0) {
		if (s.port[plane] != SM_NONE && d.port[plane] != SM_NONE)
			planes[np++] = (unsigned)plane;
	} else {
		for (unsigned pl = 0; pl < SM_MAX_PLANES; pl++)
			if (s.port[pl] != SM_NONE && d.port[pl] != SM_NONE)
				planes[np++] = pl;
	}
	if (!np) {
		st->no_plane++;
		st->no_plane_weight += w;
		return 0;
	}
	for (unsigned i = 0; i < np; i++) {
		uint32_t sp = s.port[planes[i]], dp = d.port[planes[i]];
		if (sp == dp) {
			st->self++;
			st->self_weight += w / np;
			continue;
		}
		if (push_flow(c, sp, dp, w / np))
			return perr(c, -ENOMEM, 0, "out of memory");
	}
	return 0;
}

static int parse_weight(struct pctx *c, unsigned line, const char *s, double *w)
{
	char *end;
	if (!*s)
		return perr(c, -EINVAL, line, "missing weight");
	errno = 0;
	double v = strtod(s, &end);
	if (*end || end == s)
		return perr(c, -EINVAL, line, "bad weight '%.40s' (a decimal number)", s);
	if (isnan(v) || isinf(v) || errno == ERANGE)
		return perr(c, -EINVAL, line, "weight '%.40s' is not finite", s);
	if (v < 0)
		return perr(c, -EINVAL, line, "negative weight '%.40s'", s);
	if (v > SM_PROFILE_MAX_WEIGHT)
		return perr(c, -EINVAL, line, "weight '%.40s' too large (max %g)", s, SM_PROFILE_MAX_WEIGHT);
	*w = v;
	return 0;
}

/* ---- text lines ---- */

struct lines {
	const char *p, *end;
	unsigned no;
};

/* Next line (without the newline, trailing \r stripped). false at end. */
static bool next_line(struct lines *l, const char **s, size_t *len)
{
	if (l->p >= l->end)
		return false;
	const char *nl = memchr(l->p, '\n', (size_t)(l->end - l->p));
	const char *e = nl ? nl : l->end;
	*s = l->p;
	*len = (size_t)(e - l->p);
	if (*len && (*s)[*len - 1] == '\r')
		(*len)--;
	l->p = nl ? nl + 1 : l->end;
	l->no++;
	return true;
}

/*
 * Split a line into up to max tokens (quotes, # comments). Returns the
 * token count, or -EINVAL (unterminated quote, too many fields).
 */
static int split(struct pctx *c, unsigned line, const char *s, size_t len, unsigned max)
{
	unsigned n = 0;
	size_t i = 0;
	for (;;) {
		while (i < len && (s[i] == ' ' || s[i] == '\t'))
			i++;
		if (i >= len || s[i] == '#')
			return (int)n;
		if (n == max)
			return perr(c, -EINVAL, line, "too many fields (expected %u)", max);
		char *o = c->tok[n];
		size_t k = 0;
		if (s[i] == '"') {
			i++;
			for (;;) {
				if (i >= len)
					return perr(c, -EINVAL, line, "unterminated quote");
				if (s[i] == '"') {
					i++;
					break;
				}
				if (s[i] == '\\' && i + 1 < len && (s[i + 1] == '"' || s[i + 1] == '\\'))
					i++;
				o[k++] = s[i++];
			}
			if (i < len && s[i] != ' ' && s[i] != '\t' && s[i] != '#')
				return perr(c, -EINVAL, line, "text after closing quote");
		} else {
			while (i < len && s[i] != ' ' && s[i] != '\t' && s[i] != '#')
				o[k++] = s[i++];
		}
		o[k] = 0;
		n++;
	}
}

static int parse_text(struct pctx *c, const char *buf, size_t len)
{
	struct lines l = { buf, buf + len, 0 };
	const char *s;
	size_t n;
	while (next_line(&l, &s, &n)) {
		int k = split(c, l.no, s, n, 3);
		if (k < 0)
			return k;
		if (k == 0)
			continue;
		if (k != 3)
			return perr(c, -EINVAL, l.no, "expected 'SRC DST WEIGHT', got %d field%s", k,
				    k == 1 ? "" : "s");
		double w;
		int rc = parse_weight(c, l.no, c->tok[2], &w);
		if (rc)
			return rc;
		if ((rc = add_entry(c, l.no, c->tok[0], c->tok[1], w)))
			return rc;
	}
	c->p->stats.lines = l.no;
	return 0;
}

/* ---- YAML ---- */

static unsigned yline(const yaml_node_t *n)
{
	return (unsigned)n->start_mark.line + 1;
}

static int yscalar(struct pctx *c, yaml_node_t *n, const char *what, char *out, size_t outlen)
{
	if (!n || n->type != YAML_SCALAR_NODE)
		return perr(c, -EINVAL, n ? yline(n) : 0, "%s: expected a scalar", what);
	size_t l = n->data.scalar.length;
	if (l >= outlen)
		return perr(c, -EINVAL, yline(n), "%s: too long (max %zu)", what, outlen - 1);
	memcpy(out, n->data.scalar.value, l);
	out[l] = 0;
	if (memchr(out, 0, l))
		return perr(c, -EINVAL, yline(n), "%s: NUL byte", what);
	return 0;
}

static int yaml_flow(struct pctx *c, yaml_document_t *doc, yaml_node_t *it)
{
	yaml_node_t *src = NULL, *dst = NULL, *wt = NULL;
	unsigned line = yline(it);
	if (it->type == YAML_SEQUENCE_NODE) {
		yaml_node_item_t *a = it->data.sequence.items.start, *b = it->data.sequence.items.top;
		if (b - a != 3)
			return perr(c, -EINVAL, line, "flow: expected [SRC, DST, WEIGHT]");
		src = yaml_document_get_node(doc, a[0]);
		dst = yaml_document_get_node(doc, a[1]);
		wt = yaml_document_get_node(doc, a[2]);
	} else if (it->type == YAML_MAPPING_NODE) {
		for (yaml_node_pair_t *pr = it->data.mapping.pairs.start; pr < it->data.mapping.pairs.top; pr++) {
			yaml_node_t *k = yaml_document_get_node(doc, pr->key);
			yaml_node_t *v = yaml_document_get_node(doc, pr->value);
			char key[32];
			int rc = yscalar(c, k, "key", key, sizeof(key));
			if (rc)
				return rc;
			if (!strcmp(key, "src"))
				src = v;
			else if (!strcmp(key, "dst"))
				dst = v;
			else if (!strcmp(key, "weight"))
				wt = v;
			else
				return perr(c, -EINVAL, yline(k), "flow: unknown key '%s' (src, dst, weight)", key);
		}
		if (!src || !dst || !wt)
			return perr(c, -EINVAL, line, "flow: needs src, dst and weight");
	} else {
		return perr(c, -EINVAL, line, "flow: expected a mapping or a [SRC, DST, WEIGHT] list");
	}
	int rc;
	if ((rc = yscalar(c, src, "src", c->tok[0], sizeof(c->tok[0]))) ||
	    (rc = yscalar(c, dst, "dst", c->tok[1], sizeof(c->tok[1]))) ||
	    (rc = yscalar(c, wt, "weight", c->tok[2], sizeof(c->tok[2]))))
		return rc;
	double w;
	if ((rc = parse_weight(c, yline(wt), c->tok[2], &w)))
		return rc;
	return add_entry(c, line, c->tok[0], c->tok[1], w);
}

static int yaml_window(struct pctx *c, yaml_document_t *doc, yaml_node_t *v)
{
	struct sm_profile *p = c->p;
	char tmp[64];
	if (v->type == YAML_SCALAR_NODE)
		return yscalar(c, v, "window", p->window_start, sizeof(p->window_start));
	if (v->type != YAML_MAPPING_NODE)
		return perr(c, -EINVAL, yline(v), "window: expected a mapping {start, end, seconds}");
	for (yaml_node_pair_t *pr = v->data.mapping.pairs.start; pr < v->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = yaml_document_get_node(doc, pr->key);
		yaml_node_t *x = yaml_document_get_node(doc, pr->value);
		char key[32];
		int rc = yscalar(c, k, "key", key, sizeof(key));
		if (rc)
			return rc;
		if (!strcmp(key, "start"))
			rc = yscalar(c, x, "window.start", p->window_start, sizeof(p->window_start));
		else if (!strcmp(key, "end"))
			rc = yscalar(c, x, "window.end", p->window_end, sizeof(p->window_end));
		else if (!strcmp(key, "seconds")) {
			rc = yscalar(c, x, "window.seconds", tmp, sizeof(tmp));
			if (!rc) {
				char *e;
				double s = strtod(tmp, &e);
				if (*e || e == tmp || !isfinite(s) || s < 0)
					return perr(c, -EINVAL, yline(x), "window.seconds: bad value '%s'", tmp);
				p->window_seconds = s;
			}
		} else
			return perr(c, -EINVAL, yline(k), "window: unknown key '%s' (start, end, seconds)", key);
		if (rc)
			return rc;
	}
	return 0;
}

static int parse_yaml(struct pctx *c, const char *buf, size_t len)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	int rc = 0;
	if (!yaml_parser_initialize(&parser))
		return perr(c, -ENOMEM, 0, "out of memory");
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	if (!yaml_parser_load(&parser, &doc)) {
		rc = perr(c, -EINVAL, (unsigned)parser.problem_mark.line + 1, "YAML: %s",
			  parser.problem ? parser.problem : "syntax error");
		yaml_parser_delete(&parser);
		return rc;
	}
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	struct sm_profile *p = c->p;
	bool have_flows = false;
	if (!root || root->type != YAML_MAPPING_NODE) {
		rc = perr(c, -EINVAL, root ? yline(root) : 0, "YAML profile: expected a mapping with 'flows'");
		goto out;
	}
	for (yaml_node_pair_t *pr = root->data.mapping.pairs.start; pr < root->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = yaml_document_get_node(&doc, pr->key);
		yaml_node_t *v = yaml_document_get_node(&doc, pr->value);
		char key[32];
		if ((rc = yscalar(c, k, "key", key, sizeof(key))))
			goto out;
		if (!strcmp(key, "name"))
			rc = yscalar(c, v, "name", p->name, sizeof(p->name));
		else if (!strcmp(key, "source"))
			rc = yscalar(c, v, "source", p->source, sizeof(p->source));
		else if (!strcmp(key, "description"))
			rc = yscalar(c, v, "description", p->description, sizeof(p->description));
		else if (!strcmp(key, "unit"))
			rc = yscalar(c, v, "unit", p->unit, sizeof(p->unit));
		else if (!strcmp(key, "window"))
			rc = yaml_window(c, &doc, v);
		else if (!strcmp(key, "flows")) {
			if (v->type != YAML_SEQUENCE_NODE) {
				rc = perr(c, -EINVAL, yline(v), "flows: expected a list");
				goto out;
			}
			have_flows = true;
			for (yaml_node_item_t *it = v->data.sequence.items.start;
			     !rc && it < v->data.sequence.items.top; it++)
				rc = yaml_flow(c, &doc, yaml_document_get_node(&doc, *it));
		} else
			rc = perr(c, -EINVAL, yline(k),
				  "unknown key '%s' (name, source, description, unit, window, flows)", key);
		if (rc)
			goto out;
	}
	if (!have_flows)
		rc = perr(c, -EINVAL, yline(root), "YAML profile has no 'flows' list");
out:
	c->p->stats.lines = (unsigned)parser.mark.line + 1;
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return rc;
}

/* ---- counters ---- */

struct reading {
	double v[2][2];  /* [reading][xmit, rcv] */
	uint8_t have;    /* bit 0: reading 1, bit 1: reading 2 */
};

static int counter_port(struct pctx *c, unsigned line, const char *id, unsigned plane, unsigned long port,
			uint32_t *pi)
{
	const struct sm_fabric *f = c->f;
	uint32_t node = SM_NONE;
	uint64_t g;
	unsigned long lid;
	*pi = SM_NONE;
	if (id[0] == '0' && (id[1] == 'x' || id[1] == 'X')) {
		if (!parse_guid(id, &g))
			return perr(c, -EINVAL, line, "bad GUID '%.40s'", id);
		uint32_t x = sm_fabric_find_port(f, g);
		node = x != SM_NONE ? f->ports[x].node : sm_fabric_find_node(f, g);
	} else {
		if (!parse_uint(id, SM_UNICAST_LID_MAX, &lid) || !lid)
			return perr(c, -EINVAL, line, "bad port id '%.40s' (GUID 0x... or LID)", id);
		uint32_t x = plane < f->n_planes ? sm_fabric_find_lid(f, plane, (uint16_t)lid) : SM_NONE;
		if (x != SM_NONE)
			node = f->ports[x].node;
	}
	if (node == SM_NONE) {
		note_unknown(c, line, id, 0);
		return 0;
	}
	if (port < 1 || port > f->nodes[node].nports)
		return perr(c, -EINVAL, line, "port %lu out of range for '%.40s' (1..%u)", port, id,
			    f->nodes[node].nports);
	*pi = sm_port_index(f, node, (unsigned)port);
	return 0;
}

static int store_reading(struct pctx *c, unsigned line, struct reading *r, uint32_t pi, int which,
			 double x, double rv)
{
	if (pi == SM_NONE)
		return 0;
	if (which < 0)
		which = (r[pi].have & 1) ? 1 : 0;
	if (r[pi].have & (1u << which))
		return perr(c, -EINVAL, line, "port counted twice in reading %d", which + 1);
	r[pi].have |= (uint8_t)(1u << which);
	r[pi].v[which][0] = x;
	r[pi].v[which][1] = rv;
	return 0;
}

static bool parse_counter(const char *s, double *v)
{
	if (!all_digits(s) || strlen(s) > 20)
		return false;
	errno = 0;
	unsigned long long x = strtoull(s, NULL, 10);
	if (errno)
		return false;
	*v = (double)x;
	return true;
}

static int parse_counters_simple(struct pctx *c, const char *buf, size_t len, struct reading *r)
{
	struct lines l = { buf, buf + len, 0 };
	const char *s;
	size_t n;
	int which = -1;
	unsigned plane = 0;
	bool magic = false;
	while (next_line(&l, &s, &n)) {
		int k = split(c, l.no, s, n, 4);
		if (k == 4) {
			if (!magic)
				return perr(c, -EINVAL, l.no, "expected 'counters v1'");
			if (which < 0)
				return perr(c, -EINVAL, l.no, "counter line before 'reading 1'");
			unsigned long port;
			double x, rv;
			if (!parse_uint(c->tok[1], 255, &port))
				return perr(c, -EINVAL, l.no, "bad port '%.20s'", c->tok[1]);
			if (!parse_counter(c->tok[2], &x) || !parse_counter(c->tok[3], &rv))
				return perr(c, -EINVAL, l.no, "bad counter value (unsigned decimal)");
			uint32_t pi;
			int rc = counter_port(c, l.no, c->tok[0], plane, port, &pi);
			if (rc || (rc = store_reading(c, l.no, r, pi, which, x, rv)))
				return rc;
			continue;
		}
		if (k < 0)
			return k;
		if (k == 0)
			continue;
		if (!magic) {
			if (k != 2 || strcmp(c->tok[0], "counters") || strcmp(c->tok[1], "v1"))
				return perr(c, -EINVAL, l.no, "expected 'counters v1'");
			magic = true;
			continue;
		}
		unsigned long v;
		if (k == 2 && !strcmp(c->tok[0], "reading")) {
			if (!parse_uint(c->tok[1], 2, &v) || v < 1)
				return perr(c, -EINVAL, l.no, "expected 'reading 1' or 'reading 2'");
			which = (int)v - 1;
		} else if (k == 2 && !strcmp(c->tok[0], "plane")) {
			if (!parse_uint(c->tok[1], SM_MAX_PLANES - 1, &v))
				return perr(c, -EINVAL, l.no, "bad plane '%.20s'", c->tok[1]);
			plane = (unsigned)v;
		} else if (k == 2 && !strcmp(c->tok[0], "interval")) {
			char *e;
			double sec = strtod(c->tok[1], &e);
			if (*e || !isfinite(sec) || sec <= 0)
				return perr(c, -EINVAL, l.no, "bad interval '%.20s'", c->tok[1]);
			c->p->window_seconds = sec;
		} else {
			return perr(c, -EINVAL, l.no, "expected GUID|LID PORT XMIT RCV, 'reading N', 'plane N' or 'interval S'");
		}
	}
	c->p->stats.lines = l.no;
	return 0;
}

/* "PortXmitData:........1234" -> value; returns true if the key matched */
static bool pq_field(const char *s, size_t n, const char *key, const char **val)
{
	size_t kl = strlen(key);
	if (n <= kl || strncmp(s, key, kl) || s[kl] != ':')
		return false;
	size_t i = kl + 1;
	while (i < n && s[i] == '.')
		i++;
	*val = s + i;
	return true;
}

static int parse_perfquery(struct pctx *c, const char *buf, size_t len, struct reading *r)
{
	struct lines l = { buf, buf + len, 0 };
	const char *s;
	size_t n;
	unsigned plane = 0;
	uint32_t cur = SM_NONE;
	bool in_block = false, have_x = false, have_r = false;
	unsigned block_line = 0;
	double x = 0, rv = 0;
	char tmp[64];
#define FLUSH()                                                                                   \
	do {                                                                                      \
		if (in_block) {                                                                   \
			if (!have_x || !have_r)                                                   \
				return perr(c, -EINVAL, block_line,                               \
					    "perfquery block without PortXmitData/PortRcvData");      \
			int frc = store_reading(c, block_line, r, cur, -1, x, rv);               \
			if (frc)                                                                  \
				return frc;                                                       \
		}                                                                                 \
		in_block = have_x = have_r = false;                                               \
	} while (0)
	while (next_line(&l, &s, &n)) {
		const char *v;
		unsigned lid, port;
		if (n >= sizeof(tmp) * 4)
			return perr(c, -EINVAL, l.no, "unexpected long line in perfquery output");
		char line[SM_PROFILE_MAX_LINE + 1];
		memcpy(line, s, n);
		line[n] = 0;
		if (sscanf(line, "# Port counters: Lid %u port %u", &lid, &port) == 2 ||
		    sscanf(line, "# Port extended counters: Lid %u port %u", &lid, &port) == 2) {
			FLUSH();
			in_block = true;
			block_line = l.no;
			if (port == 255)
				return perr(c, -EINVAL, l.no, "aggregated counters (port 255) cannot be used: query each port");
			snprintf(tmp, sizeof(tmp), "%u", lid);
			int rc = counter_port(c, l.no, tmp, plane, port, &cur);
			if (rc)
				return rc;
		} else if (pq_field(s, n, "PortXmitData", &v)) {
			snprintf(tmp, sizeof(tmp), "%.*s", (int)(s + n - v), v);
			if (!in_block || !parse_counter(tmp, &x))
				return perr(c, -EINVAL, l.no, "bad PortXmitData line");
			have_x = true;
		} else if (pq_field(s, n, "PortRcvData", &v)) {
			snprintf(tmp, sizeof(tmp), "%.*s", (int)(s + n - v), v);
			if (!in_block || !parse_counter(tmp, &rv))
				return perr(c, -EINVAL, l.no, "bad PortRcvData line");
			have_r = true;
		} else if (sscanf(line, "plane %u", &lid) == 1) {
			FLUSH();
			if (lid >= SM_MAX_PLANES)
				return perr(c, -EINVAL, l.no, "bad plane %u", lid);
			plane = lid;
		} else {
			/* other perfquery fields "Name:....value", comments and blanks */
			size_t i = 0;
			while (i < n && (isalnum((unsigned char)s[i]) || s[i] == '_'))
				i++;
			bool field = i > 0 && i < n && s[i] == ':';
			size_t b = strspn(line, " \t");
			if (!field && b < n && line[b] != '#')
				return perr(c, -EINVAL, l.no, "not perfquery output: '%.40s'", line);
		}
	}
	FLUSH();
#undef FLUSH
	c->p->stats.lines = l.no;
	return 0;
}

struct host_vol {
	uint32_t port;
	double v;
};

static int cmp_vol_desc(const void *a, const void *b)
{
	const struct host_vol *x = a, *y = b;
	if (x->v != y->v)
		return x->v > y->v ? -1 : 1;
	return x->port < y->port ? -1 : x->port > y->port;
}

/* Turn readings into heat and gravity-model flows. */
static int counters_finish(struct pctx *c, struct reading *r)
{
	const struct sm_fabric *f = c->f;
	struct sm_profile *p = c->p;
	struct sm_profile_stats *st = &p->stats;
	size_t nh = 0;
	for (uint32_t i = 0; i < f->n_ports; i++)
		if (r[i].have == 3)
			nh++;
		else if (r[i].have)
			st->counter_single++;
	p->heat = calloc(nh + 1, sizeof(*p->heat));
	struct host_vol *snd = calloc(nh + 1, sizeof(*snd)), *rcv = calloc(nh + 1, sizeof(*rcv));
	double *own_rcv = calloc((size_t)f->n_ports + 1, sizeof(double));
	int rc = 0;
	if (!p->heat || !snd || !rcv || !own_rcv) {
		rc = perr(c, -ENOMEM, 0, "out of memory");
		goto out;
	}
	for (unsigned pl = 0; pl < f->n_planes; pl++) {
		size_t ns = 0, nr = 0;
		double rsum = 0;
		for (uint32_t i = 0; i < f->n_ports; i++) {
			if (r[i].have != 3 || f->nodes[f->ports[i].node].plane != pl)
				continue;
			double dx = r[i].v[1][0] - r[i].v[0][0], dr = r[i].v[1][1] - r[i].v[0][1];
			if (dx < 0 || dr < 0) {
				st->counter_reset++;
				continue;
			}
			st->counter_ports++;
			p->heat[p->n_heat++] = (struct sm_profile_heat){ i, dx * 4, dr * 4 };
			const struct sm_port *pt = &f->ports[i];
			if (f->nodes[pt->node].type != SM_NODE_CA || !pt->lid)
				continue;
			if (dx > 0) {
				snd[ns++] = (struct host_vol){ i, dx * 4 };
				st->total_weight += dx * 4;
			}
			if (dr > 0) {
				rcv[nr++] = (struct host_vol){ i, dr * 4 };
				rsum += dr * 4;
			}
		}
		if (!ns)
			continue;
		qsort(snd, ns, sizeof(*snd), cmp_vol_desc);
		qsort(rcv, nr, sizeof(*rcv), cmp_vol_desc);
		/* cap senders x receivers at max_flows, keeping the heaviest of each */
		size_t ks = ns, kr = nr;
		if (nr && (double)ns * (double)nr > (double)c->max_flows) {
			double scale = sqrt((double)c->max_flows / ((double)ns * (double)nr));
			ks = (size_t)((double)ns * scale);
			ks = ks ? ks : 1;
			kr = c->max_flows / ks;
			kr = kr ? (kr > nr ? nr : kr) : 1;
		}
		for (size_t i = 0; i < nr; i++)
			own_rcv[rcv[i].port] = rcv[i].v;
		for (size_t a = 0; a < ns; a++) {
			double produced = 0;
			/* the sender's own receive volume is excluded from the denominator */
			double own = own_rcv[snd[a].port];
			for (size_t b = 0; a < ks && b < kr; b++) {
				if (rcv[b].port == snd[a].port)
					continue;
				double w = snd[a].v * rcv[b].v / (rsum - own);
				if (!(w > 0))
					continue;
				if (push_flow(c, snd[a].port, rcv[b].port, w)) {
					rc = perr(c, -ENOMEM, 0, "out of memory");
					goto out;
				}
				produced += w;
			}
			if (snd[a].v - produced > snd[a].v * 1e-9) {
				st->gravity_capped += a < ks ? (nr - kr) : nr;
				st->gravity_capped_weight += snd[a].v - produced;
			}
		}
	}
out:
	free(snd);
	free(rcv);
	free(own_rcv);
	return rc;
}

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
			return perr(c, -EINVAL, line, "line longer than %d bytes", SM_PROFILE_MAX_LINE);
		if ((ch < 0x20 && ch != '\t' && ch != '\r') || ch == 0x7f)
			return perr(c, -EINVAL, line, "binary data (byte 0x%02x): not a profile", ch);
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
	struct reading *r = NULL;
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
	c->idx = ep_index_new(f);
	if (!c->p || !c->idx) {
		rc = perr(c, -ENOMEM, 0, "out of memory");
		goto fail;
	}
	struct sm_profile *p = c->p;
	snprintf(p->path, sizeof(p->path), "%s", c->name);
	if (len > SM_PROFILE_MAX_BYTES) {
		rc = perr(c, -EFBIG, 0, "larger than %u MiB", SM_PROFILE_MAX_BYTES >> 20);
		goto fail;
	}
	if ((rc = prescan(c, buf, len)))
		goto fail;
	p->format = o && o->format ? o->format : detect(buf, len);
	switch (p->format) {
	case SM_PROFILE_FMT_TEXT:
		p->kind = SM_PROFILE_MATRIX;
		rc = parse_text(c, buf, len);
		break;
	case SM_PROFILE_FMT_YAML:
		p->kind = SM_PROFILE_MATRIX;
		rc = parse_yaml(c, buf, len);
		break;
	case SM_PROFILE_FMT_COUNTERS:
	case SM_PROFILE_FMT_PERFQUERY:
		p->kind = SM_PROFILE_COUNTERS;
		r = calloc((size_t)f->n_ports + 1, sizeof(*r));
		if (!r) {
			rc = perr(c, -ENOMEM, 0, "out of memory");
			break;
		}
		rc = p->format == SM_PROFILE_FMT_COUNTERS ? parse_counters_simple(c, buf, len, r)
							  : parse_perfquery(c, buf, len, r);
		if (!rc)
			rc = counters_finish(c, r);
		break;
	default:
		rc = perr(c, -EINVAL, 0, "unknown profile format %d", (int)p->format);
	}
	if (rc)
		goto fail;
	merge_sort(c);
	if (!c->n) {
		const struct sm_profile_stats *st = &p->stats;
		if (p->kind == SM_PROFILE_COUNTERS)
			rc = perr(c, -ENOENT, 0, "no host traffic in the counters (%llu ports with two readings, %llu reset)",
				  (unsigned long long)st->counter_ports, (unsigned long long)st->counter_reset);
		else if (!st->entries)
			rc = perr(c, -EINVAL, 0, "no flows in the profile");
		else if (st->unknown)
			rc = perr(c, -ENOENT, st->first_unknown_line,
				  "no flow resolved: %llu of %llu entries name unknown endpoints (first: '%s')",
				  (unsigned long long)st->unknown, (unsigned long long)st->entries, st->first_unknown);
		else
			rc = perr(c, -ENOENT, 0, "no usable flow (%llu entries: %llu zero weight, %llu self, %llu without a common plane)",
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
	free(r);
	free(c->fl);
	sm_profile_free(c->p);
	ep_index_free(c->idx);
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
