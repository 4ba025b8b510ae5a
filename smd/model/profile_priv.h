/* SPDX-License-Identifier: MIT */
#ifndef SMD_PROFILE_PRIV_H
#define SMD_PROFILE_PRIV_H
/*
 * DOC: traffic profile loader, private
 *
 * The parse context shared by the loader's files and the calls between them:
 *   profile.c           entry points: read, pre-scan, detect the format,
 *                       merge and sort the flows, the warning text;
 *   profile_ep.c        the endpoint index and resolver (description, host
 *                       name, GUID, LID, rail) and the flow model (one matrix
 *                       entry expanded over planes; weights); the messages;
 *   profile_matrix.c    traffic matrices: text lines and YAML;
 *   profile_counters.c  counter snapshots (smd's form, perfquery output)
 *                       into link heat and gravity-model flows.
 * Nothing here is for use outside smd/model/profile*.c.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "model/profile.h"

struct ep_index;

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

/* profile_ep.c: message "NAME:LINE: ..." (no line: "NAME: ..."); returns rc. */
__attribute__((format(printf, 4, 5)))
int pf_err(struct pctx *c, int rc, unsigned line, const char *fmt, ...);

/* Lines of an in-memory file. */
struct lines {
	const char *p, *end;
	unsigned no;
};

/* Next line (without the newline, trailing \r stripped). false at end. */
static inline bool next_line(struct lines *l, const char **s, size_t *len)
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

/* profile_ep.c */
struct ep_index *pf_ep_index_new(const struct sm_fabric *f);
void pf_ep_index_free(struct ep_index *x);
bool pf_all_digits(const char *s);
bool pf_parse_guid(const char *s, uint64_t *g);
bool pf_parse_uint(const char *s, unsigned long max, unsigned long *v);
int pf_push_flow(struct pctx *c, uint32_t s, uint32_t d, double w);
void pf_note_unknown(struct pctx *c, unsigned line, const char *tok, double w);
int pf_add_entry(struct pctx *c, unsigned line, const char *stok, const char *dtok, double w);
int pf_parse_weight(struct pctx *c, unsigned line, const char *s, double *w);

/* profile_matrix.c */
int pf_split(struct pctx *c, unsigned line, const char *s, size_t len, unsigned max);
int pf_parse_text(struct pctx *c, const char *buf, size_t len);
int pf_parse_yaml(struct pctx *c, const char *buf, size_t len);

/* profile_counters.c: c->p->format says which form. */
int pf_parse_counters(struct pctx *c, const char *buf, size_t len);

#endif
