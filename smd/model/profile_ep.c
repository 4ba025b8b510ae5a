/* SPDX-License-Identifier: MIT */
/*
 * DOC: traffic profiles, endpoints and flows
 *
 * The endpoint index (struct ep_index: the fabric's CA ports with a LID,
 * sorted by description, host name and system image GUID, binary-searched)
 * and the resolver of one endpoint token into its port per plane; the flow
 * model: one matrix entry resolved at both ends, given its plane (the
 * destination's if specific, else the source's, else split evenly over the
 * planes both hosts reach) and pushed; weights checked.
 */
#include "model/profile_priv.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- errors ---- */

int pf_err(struct pctx *c, int rc, unsigned line, const char *fmt, ...)
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

void pf_ep_index_free(struct ep_index *x)
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

struct ep_index *pf_ep_index_new(const struct sm_fabric *f)
{
	struct ep_index *x = calloc(1, sizeof(*x));
	if (!x)
		return NULL;
	x->e = calloc((size_t)f->n_nodes + 1, sizeof(*x->e));
	x->by_desc = calloc((size_t)f->n_nodes + 1, sizeof(uint32_t));
	x->by_host = calloc((size_t)f->n_nodes + 1, sizeof(uint32_t));
	x->by_sys = calloc((size_t)f->n_nodes + 1, sizeof(uint32_t));
	if (!x->e || !x->by_desc || !x->by_host || !x->by_sys) {
		pf_ep_index_free(x);
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

bool pf_all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* Parse a GUID "0x..." strictly. */
bool pf_parse_guid(const char *s, uint64_t *g)
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

bool pf_parse_uint(const char *s, unsigned long max, unsigned long *v)
{
	if (!pf_all_digits(s) || strlen(s) > 12)
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
		return pf_err(c, -EINVAL, line, "empty endpoint");
	uint64_t g;
	if (tok[0] == '0' && (tok[1] == 'x' || tok[1] == 'X')) {
		if (!pf_parse_guid(tok, &g))
			return pf_err(c, -EINVAL, line, "bad GUID '%.40s'", tok);
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
	if (pf_all_digits(tok)) {
		/* plain LID */
	} else if (colon && colon != tok && pf_all_digits(colon + 1)) {
		/* a description containing ':' wins over host:rail */
		size_t i = lb_str(x, x->by_desc, false, tok);
		if (!(i < x->n && !strcmp(x->e[x->by_desc[i]].desc, tok))) {
			if (!pf_parse_uint(colon + 1, SM_MAX_PLANES - 1, &v))
				return pf_err(c, -EINVAL, line, "bad rail in '%.60s' (0..%d)", tok, SM_MAX_PLANES - 1);
			rail = (int)v;
			base[colon - tok] = 0;
		}
	}
	if (pf_all_digits(base)) {
		if (!pf_parse_uint(base, SM_UNICAST_LID_MAX, &v) || v == 0)
			return pf_err(c, -EINVAL, line, "bad LID '%.40s' (1..%u)", base, SM_UNICAST_LID_MAX);
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

int pf_push_flow(struct pctx *c, uint32_t s, uint32_t d, double w)
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

void pf_note_unknown(struct pctx *c, unsigned line, const char *tok, double w)
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
int pf_add_entry(struct pctx *c, unsigned line, const char *stok, const char *dtok, double w)
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
		pf_note_unknown(c, line, ep_empty(&s) ? stok : dtok, w);
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
		if (pf_push_flow(c, sp, dp, w / np))
			return pf_err(c, -ENOMEM, 0, "out of memory");
	}
	return 0;
}

int pf_parse_weight(struct pctx *c, unsigned line, const char *s, double *w)
{
	char *end;
	if (!*s)
		return pf_err(c, -EINVAL, line, "missing weight");
	errno = 0;
	double v = strtod(s, &end);
	if (*end || end == s)
		return pf_err(c, -EINVAL, line, "bad weight '%.40s' (a decimal number)", s);
	if (isnan(v) || isinf(v) || errno == ERANGE)
		return pf_err(c, -EINVAL, line, "weight '%.40s' is not finite", s);
	if (v < 0)
		return pf_err(c, -EINVAL, line, "negative weight '%.40s'", s);
	if (v > SM_PROFILE_MAX_WEIGHT)
		return pf_err(c, -EINVAL, line, "weight '%.40s' too large (max %g)", s, SM_PROFILE_MAX_WEIGHT);
	*w = v;
	return 0;
}
