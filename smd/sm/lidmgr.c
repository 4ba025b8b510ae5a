/* SPDX-License-Identifier: MIT */
/*
 * DOC: LID manager implementation
 *
 * See lidmgr.h for the rules. The table is a GUID-sorted array (bsearch);
 * assignment uses one owner array of SM_LID_SPACE entries for the plane
 * being assigned (192 KB, freed on return), so every step is O(ports +
 * LID space) and a 16k-port plane is assigned in well under a millisecond.
 */
#include "sm/lidmgr.h"
#include "lib/err.h"
#include "lib/statefile.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define OWNER_FREE SM_NONE
#define OWNER_RESERVED (SM_NONE - 1)  /* held by a GUID absent from the fabric */
#define MAX_ENTRIES (1u << 22)

void sm_lidmgr_init(struct sm_lidmgr *m)
{
	memset(m, 0, sizeof(*m));
}

void sm_lidmgr_clear(struct sm_lidmgr *m)
{
	if (!m)
		return;
	free(m->e);
	memset(m, 0, sizeof(*m));
}

int sm_lidmgr_copy(struct sm_lidmgr *dst, const struct sm_lidmgr *src)
{
	sm_lidmgr_clear(dst);
	if (src->n) {
		dst->e = malloc((size_t)src->n * sizeof(*dst->e));
		if (!dst->e)
			return -ENOMEM;
		memcpy(dst->e, src->e, (size_t)src->n * sizeof(*dst->e));
	}
	dst->n = dst->cap = src->n;
	dst->dirty = src->dirty;
	dst->legacy = src->legacy;
	return 0;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct sm_lid_entry *x = a, *y = b;
	return x->guid < y->guid ? -1 : x->guid > y->guid;
}

static struct sm_lid_entry *find_entry(const struct sm_lidmgr *m, uint64_t guid)
{
	struct sm_lid_entry key = { .guid = guid };
	if (!m->n)
		return NULL;
	return bsearch(&key, m->e, m->n, sizeof(*m->e), cmp_entry);
}

int sm_lidmgr_lookup(const struct sm_lidmgr *m, uint64_t guid, uint16_t *first, uint16_t *last)
{
	const struct sm_lid_entry *e = find_entry(m, guid);
	if (!e)
		return 0;
	if (first)
		*first = e->first;
	if (last)
		*last = e->last;
	return 1;
}

int sm_lidmgr_add(struct sm_lidmgr *m, uint64_t guid, uint16_t first, uint16_t last)
{
	if (m->n == m->cap) {
		uint32_t nc = m->cap ? m->cap * 2 : 256;
		void *p = realloc(m->e, (size_t)nc * sizeof(*m->e));
		if (!p)
			return -ENOMEM;
		m->e = p;
		m->cap = nc;
	}
	m->e[m->n++] = (struct sm_lid_entry){ .guid = guid, .first = first, .last = last, .line = 0 };
	return 0;
}

/* Parse an unsigned number in C syntax (0x.., decimal); whole token or fail. */
static int parse_num(const char *tok, uint64_t max, uint64_t *out)
{
	char *end;
	if (!isdigit((unsigned char)tok[0]))
		return -EINVAL;
	errno = 0;
	unsigned long long v = strtoull(tok, &end, 0);
	if (errno || *end || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* Parse the entries of a file's body; `ln` is the number of lines before it (the header). */
static int parse_lines(struct sm_lidmgr *m, FILE *in, const char *name, unsigned ln, char *err,
		       size_t errlen)
{
	char line[512];
	int rc = 0;

	while (fgets(line, sizeof(line), in)) {
		ln++;
		size_t len = strlen(line);
		if (len == sizeof(line) - 1 && line[len - 1] != '\n' && !feof(in)) {
			sm_errf(err, errlen, "%s:%u: line too long", name, ln);
			return -EINVAL;
		}
		char *hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		char *tok[4], *save = NULL;
		unsigned nt = 0;
		for (char *t = strtok_r(line, " \t\r\n", &save); t; t = strtok_r(NULL, " \t\r\n", &save)) {
			if (nt == 4)
				break;
			tok[nt++] = t;
		}
		if (nt == 0)
			continue;
		if (nt != 3) {
			sm_errf(err, errlen, "%s:%u: expected '0xGUID FIRST_LID LAST_LID', got %u field%s",
			       name, ln, nt, nt == 1 ? "" : "s");
			return -EINVAL;
		}
		uint64_t guid, a, b;
		if (strncmp(tok[0], "0x", 2) && strncmp(tok[0], "0X", 2)) {
			sm_errf(err, errlen, "%s:%u: GUID '%.40s' must be hexadecimal (0x...)", name, ln, tok[0]);
			return -EINVAL;
		}
		if (parse_num(tok[0], UINT64_MAX, &guid) || !guid) {
			sm_errf(err, errlen, "%s:%u: bad GUID '%.40s'", name, ln, tok[0]);
			return -EINVAL;
		}
		if (parse_num(tok[1], SM_UNICAST_LID_MAX, &a) || !a) {
			sm_errf(err, errlen, "%s:%u: bad first LID '%.40s' (unicast LIDs are 1-0xbfff)",
			       name, ln, tok[1]);
			return -EINVAL;
		}
		if (parse_num(tok[2], SM_UNICAST_LID_MAX, &b) || b < a) {
			sm_errf(err, errlen, "%s:%u: bad last LID '%.40s' (1-0xbfff, not below the first)",
			       name, ln, tok[2]);
			return -EINVAL;
		}
		uint64_t span = b - a + 1;
		if (span > 128 || (span & (span - 1)) || (a & (span - 1))) {
			sm_errf(err, errlen,
			       "%s:%u: LID range 0x%04" PRIx64 "-0x%04" PRIx64
			       " is not 2^LMC LIDs (LMC 0-7) aligned on 2^LMC",
			       name, ln, a, b);
			return -EINVAL;
		}
		if (m->n >= MAX_ENTRIES) {
			sm_errf(err, errlen, "%s:%u: more than %u entries", name, ln, MAX_ENTRIES);
			return -EINVAL;
		}
		rc = sm_lidmgr_add(m, guid, (uint16_t)a, (uint16_t)b);
		if (rc) {
			sm_errf(err, errlen, "%s:%u: out of memory", name, ln);
			return rc;
		}
		m->e[m->n - 1].line = ln;
	}
	if (ferror(in)) {
		sm_errf(err, errlen, "%s: read error", name);
		return -EIO;
	}
	return 0;
}

/* The whole content of a file: sealed (checked), or an older/OpenSM file (legacy). */
static int load_buf(struct sm_lidmgr *m, const char *buf, size_t len, const char *name, char *err,
		    size_t errlen)
{
	size_t off = 0;
	int rc, sealed;

	sm_lidmgr_clear(m);
	sealed = sm_state_check(buf, len, name, &off, err, errlen);
	if (sealed < 0)
		return sealed;
	FILE *in = fmemopen((void *)(buf + off), len - off ? len - off : 1, "r");
	if (!in) {
		sm_errf(err, errlen, "%s: out of memory", name);
		return -ENOMEM;
	}
	if (len == off)
		(void)fgetc(in);   /* an empty body: fmemopen of 0 bytes is refused by some libcs */
	rc = parse_lines(m, in, name, sealed ? 1 : 0, err, errlen);
	fclose(in);
	if (rc)
		goto fail;
	if (!sealed && !m->n) {
		/* a file of zeros, or emptied: refuse it rather than renumber the fabric */
		sm_errf(err, errlen,
			"%s:1: no entries and no smd-state header: an empty or damaged LID table is refused "
			"(remove the file only if a renumbering is intended)", name);
		rc = -EINVAL;
		goto fail;
	}
	if (m->n)  /* qsort(NULL, 0, ...) is undefined (an empty file) */
		qsort(m->e, m->n, sizeof(*m->e), cmp_entry);
	for (uint32_t i = 1; i < m->n; i++)
		if (m->e[i].guid == m->e[i - 1].guid) {
			uint32_t l1 = m->e[i - 1].line, l2 = m->e[i].line;
			sm_errf(err, errlen, "%s:%u: GUID 0x%016" PRIx64 " is already listed at line %u",
			       name, l1 > l2 ? l1 : l2, m->e[i].guid, l1 > l2 ? l2 : l1);
			rc = -EINVAL;
			goto fail;
		}
	/* an unsealed file (an older smd's, OpenSM's) is rewritten sealed at the next save */
	m->legacy = !sealed;
	m->dirty = !sealed;
	return 0;
fail:
	sm_lidmgr_clear(m);
	return rc;
}

int sm_lidmgr_load_stream(struct sm_lidmgr *m, FILE *in, const char *name, char *err, size_t errlen)
{
	char *buf = NULL, chunk[8192];
	size_t len = 0, n;
	int rc;

	while ((n = fread(chunk, 1, sizeof(chunk), in)) > 0) {
		if (len + n > SM_LIDMGR_FILE_MAX) {
			free(buf);
			sm_lidmgr_clear(m);
			sm_errf(err, errlen, "%s:1: larger than a LID table can be", name);
			return -EINVAL;
		}
		char *nb = realloc(buf, len + n + 1);
		if (!nb) {
			free(buf);
			sm_lidmgr_clear(m);
			sm_errf(err, errlen, "%s: out of memory", name);
			return -ENOMEM;
		}
		buf = nb;
		memcpy(buf + len, chunk, n);
		len += n;
	}
	if (ferror(in)) {
		free(buf);
		sm_lidmgr_clear(m);
		sm_errf(err, errlen, "%s: read error", name);
		return -EIO;
	}
	rc = load_buf(m, buf ? buf : "", len, name, err, errlen);
	free(buf);
	return rc;
}

int sm_lidmgr_load(struct sm_lidmgr *m, const char *path, char *err, size_t errlen)
{
	char *buf;
	size_t len;
	int rc;

	sm_lidmgr_clear(m);
	rc = sm_state_read(path, SM_LIDMGR_FILE_MAX, &buf, &len, err, errlen);
	if (rc == -EFBIG)
		return -EINVAL;
	if (rc)
		return rc;
	rc = load_buf(m, buf, len, path, err, errlen);
	free(buf);
	return rc;
}

struct lid_port {
	uint64_t guid;
	uint32_t port;     /* port index */
	uint16_t span;
};

static int cmp_lid_port(const void *a, const void *b)
{
	const struct lid_port *x = a, *y = b;
	return x->guid < y->guid ? -1 : x->guid > y->guid;
}

/* Owner of the range [lid, lid+span) if uniform free; else the first non-free owner. */
static uint32_t range_owner(const uint32_t *owner, unsigned lid, unsigned span)
{
	for (unsigned i = 0; i < span; i++)
		if (owner[lid + i] != OWNER_FREE)
			return owner[lid + i];
	return OWNER_FREE;
}

static int range_ok(unsigned lid, unsigned span)
{
	return lid && !(lid & (span - 1)) && lid + span - 1 <= SM_UNICAST_LID_MAX;
}

static void claim(uint32_t *owner, unsigned lid, unsigned span, uint32_t who)
{
	for (unsigned i = 0; i < span; i++)
		owner[lid + i] = who;
}

static uint64_t owner_guid(const struct sm_fabric *f, uint32_t o)
{
	return o < f->n_ports ? f->ports[o].guid : 0;
}

/*
 * ent[i]: the index in m of lp[i]'s GUID, SM_NONE if absent; lp is sorted
 * by GUID. A walk of both when m is sorted too (as loaded and assigned),
 * else a search per port (entries added with sm_lidmgr_add).
 */
static void find_entries(const struct sm_lidmgr *m, const struct lid_port *lp, uint32_t np, uint32_t *ent)
{
	int sorted = 1;
	for (uint32_t k = 1; k < m->n && sorted; k++)
		sorted = m->e[k - 1].guid < m->e[k].guid;
	for (uint32_t i = 0, k = 0; i < np; i++) {
		if (!sorted) {
			const struct sm_lid_entry *e = find_entry(m, lp[i].guid);
			ent[i] = e ? (uint32_t)(e - m->e) : SM_NONE;
			continue;
		}
		while (k < m->n && m->e[k].guid < lp[i].guid)
			k++;
		ent[i] = k < m->n && m->e[k].guid == lp[i].guid ? k : SM_NONE;
	}
}

int sm_lidmgr_assign(struct sm_lidmgr *m, struct sm_fabric *f, unsigned plane, unsigned lmc,
		     const uint16_t *cur_lid, const uint8_t *cur_lmc,
		     struct sm_lidmgr_stats *st, sm_note_fn *note, void *note_arg)
{
	struct sm_lidmgr_stats s;
	struct lid_port *lp = NULL;
	uint16_t *lid_of = NULL;    /* per entry of lp: assigned base LID */
	uint32_t *owner = NULL, *ent = NULL;   /* ent: per entry of lp, its entry in m (SM_NONE: none) */
	uint8_t *hit = NULL;                   /* per entry of m: a port of lp has it */
	uint32_t np = 0;
	int rc = 0;

	memset(&s, 0, sizeof(s));
	if (lmc > 7 || plane >= SM_MAX_PLANES)
		return -EINVAL;
	(void)cur_lmc; /* the base LID is what we keep; the range is re-derived from lmc */

	/* collect LID-bearing ports of the plane and clear their LIDs in f */
	uint32_t cap = 0;
	for (uint32_t n = 0; n < f->n_nodes; n++)
		if (f->nodes[n].plane == plane)
			cap += f->nodes[n].type == SM_NODE_SWITCH ? 1 : f->nodes[n].nports;
	lp = malloc(((size_t)cap + 1) * sizeof(*lp));
	lid_of = calloc((size_t)cap + 1, sizeof(*lid_of));
	owner = malloc(SM_LID_SPACE * sizeof(*owner));
	if (!lp || !lid_of || !owner) {
		rc = -ENOMEM;
		goto out;
	}
	memset(owner, 0xff, SM_LID_SPACE * sizeof(*owner));
	for (uint32_t n = 0; n < f->n_nodes; n++) {
		const struct sm_node *nd = &f->nodes[n];
		if (nd->plane != plane)
			continue;
		unsigned p0 = nd->type == SM_NODE_SWITCH ? 0 : 1;
		unsigned p1 = nd->type == SM_NODE_SWITCH ? 0 : nd->nports;
		for (unsigned p = p0; p <= p1; p++) {
			struct sm_port *pt = sm_port(f, n, p);
			if (pt->lid)
				sm_fabric_set_lid(f, n, p, 0, 0);
			if (!pt->guid)
				continue;
			lp[np].guid = pt->guid;
			lp[np].port = sm_port_index(f, n, p);
			lp[np].span = nd->type == SM_NODE_SWITCH ? 1 : (uint16_t)(1u << lmc);
			np++;
		}
	}
	qsort(lp, np, sizeof(*lp), cmp_lid_port);
	s.ports = np;
	/* each port's entry of the table (both sorted by GUID: one walk, not a search per port) */
	ent = malloc(((size_t)np + 1) * sizeof(*ent));
	hit = calloc((size_t)m->n + 1, 1);
	if (!ent || !hit) {
		rc = -ENOMEM;
		goto out;
	}
	find_entries(m, lp, np, ent);

	/* 1. persisted LIDs */
	for (uint32_t i = 0; i < np; i++) {
		const struct sm_lid_entry *e = ent[i] != SM_NONE ? &m->e[ent[i]] : NULL;
		if (!e)
			continue;
		unsigned span = lp[i].span;
		if (!range_ok(e->first, span)) {
			sm_notef(note, note_arg,
			      "port 0x%016" PRIx64 ": persisted LID %u is not aligned for LMC %u; reassigning",
			      lp[i].guid, e->first, span == 1 ? 0 : lmc);
			s.conflicts++;
			continue;
		}
		uint32_t o = range_owner(owner, e->first, span);
		if (o != OWNER_FREE) {
			sm_notef(note, note_arg,
			      "port 0x%016" PRIx64 ": persisted LID %u collides with port 0x%016" PRIx64
			      " (lower GUID keeps it); reassigning",
			      lp[i].guid, e->first, owner_guid(f, o));
			s.conflicts++;
			continue;
		}
		claim(owner, e->first, span, lp[i].port);
		lid_of[i] = e->first;
		s.from_file++;
	}
	/* 2. LIDs already in the fabric */
	for (uint32_t i = 0; i < np && cur_lid; i++) {
		uint16_t cl = cur_lid[lp[i].port];
		unsigned span = lp[i].span;
		if (lid_of[i] || !cl)
			continue;
		if (!range_ok(cl, span)) {
			sm_notef(note, note_arg,
			      "port 0x%016" PRIx64 ": fabric LID %u is not aligned for LMC %u; reassigning",
			      lp[i].guid, cl, span == 1 ? 0 : lmc);
			s.conflicts++;
			continue;
		}
		uint32_t o = range_owner(owner, cl, span);
		if (o != OWNER_FREE) {
			sm_notef(note, note_arg,
			      "port 0x%016" PRIx64 ": fabric LID %u collides with port 0x%016" PRIx64
			      "; reassigning",
			      lp[i].guid, cl, owner_guid(f, o));
			s.conflicts++;
			continue;
		}
		claim(owner, cl, span, lp[i].port);
		lid_of[i] = cl;
		s.from_fabric++;
	}
	/* absent GUIDs keep their LIDs reserved; live holders win */
	for (uint32_t i = 0; i < np; i++)
		if (ent[i] != SM_NONE)
			hit[ent[i]] = 1;   /* a port of f: present */
	for (uint32_t k = 0; k < m->n; k++) {
		const struct sm_lid_entry *e = &m->e[k];
		if (hit[k] || sm_fabric_find_port(f, e->guid) != SM_NONE)
			continue;
		for (unsigned l = e->first; l <= e->last; l++) {
			if (owner[l] == OWNER_FREE)
				owner[l] = OWNER_RESERVED;
			else if (owner[l] != OWNER_RESERVED) {
				sm_notef(note, note_arg,
				      "LID %u reserved for absent port 0x%016" PRIx64
				      " is held by live port 0x%016" PRIx64 "; the live port keeps it",
				      l, e->guid, owner_guid(f, owner[l]));
				s.conflicts++;
				break;
			}
		}
	}
	/* 3. fresh LIDs: lowest free aligned range, one cursor per span */
	unsigned cursor[8] = { 1, 1, 1, 1, 1, 1, 1, 1 };
	for (uint32_t i = 0; i < np; i++) {
		if (lid_of[i])
			continue;
		unsigned span = lp[i].span;
		unsigned k = span == 1 ? 0 : lmc;
		unsigned l = (cursor[k] + span - 1) & ~(span - 1);
		while (l + span - 1 <= SM_UNICAST_LID_MAX && range_owner(owner, l, span) != OWNER_FREE)
			l += span;
		if (l + span - 1 > SM_UNICAST_LID_MAX) {
			rc = -ENOSPC;
			goto out;
		}
		cursor[k] = l + span;
		claim(owner, l, span, lp[i].port);
		lid_of[i] = (uint16_t)l;
		s.fresh++;
	}
	/* apply to the fabric and the table */
	uint32_t old_n = m->n;
	for (uint32_t i = 0; i < np; i++) {
		const struct sm_port *pt = &f->ports[lp[i].port];
		unsigned span = lp[i].span;
		uint8_t plmc = span == 1 ? 0 : (uint8_t)lmc;
		rc = sm_fabric_set_lid(f, pt->node, pt->num, lid_of[i], plmc);
		if (rc)
			goto out;
		s.lids += span;
		if (cur_lid && cur_lid[lp[i].port] && cur_lid[lp[i].port] != lid_of[i]) {
			s.moved++;
			sm_notef(note, note_arg, "port 0x%016" PRIx64 ": LID %u -> %u", lp[i].guid,
			      cur_lid[lp[i].port], lid_of[i]);
		}
		/* entries added below are past old_n: ent[] indexes the table as it was */
		struct sm_lid_entry *e = ent[i] != SM_NONE ? &m->e[ent[i]] : NULL;
		uint16_t last = (uint16_t)(lid_of[i] + span - 1);
		if (e) {
			if (e->first != lid_of[i] || e->last != last) {
				e->first = lid_of[i];
				e->last = last;
				m->dirty = 1;
			}
		} else {
			rc = sm_lidmgr_add(m, lp[i].guid, lid_of[i], last);
			if (rc)
				goto out;
			m->dirty = 1;
		}
	}
	if (m->n != old_n)
		qsort(m->e, m->n, sizeof(*m->e), cmp_entry);
out:
	if (st)
		*st = s;
	free(lp);
	free(lid_of);
	free(owner);
	free(ent);
	free(hit);
	return rc;
}

/* The sealed text of the table: header, a blank line, then OpenSM's layout (an entry, a blank line). */
static int table_text(const struct sm_lidmgr *m, char **text, size_t *tlen)
{
	char *body = NULL, hdr[SM_STATE_HDR_MAX];
	size_t blen = 0;
	FILE *out = open_memstream(&body, &blen);
	int rc = 0;

	*text = NULL;
	if (!out)
		return -ENOMEM;
	/* a blank line after the header: OpenSM's parser takes the header for a key, ended by it */
	if (fputc('\n', out) == EOF)
		rc = -ENOMEM;
	for (uint32_t i = 0; i < m->n && !rc; i++)
		if (fprintf(out, "0x%016" PRIx64 " 0x%04x 0x%04x\n\n", m->e[i].guid, m->e[i].first,
			    m->e[i].last) < 0)
			rc = -ENOMEM;
	if (fclose(out) && !rc)
		rc = -ENOMEM;
	if (rc) {
		free(body);
		return rc;
	}
	size_t hl = sm_state_header(hdr, body, blen);
	*text = malloc(hl + blen + 1);
	if (!*text) {
		free(body);
		return -ENOMEM;
	}
	memcpy(*text, hdr, hl);
	memcpy(*text + hl, body, blen);
	*tlen = hl + blen;
	free(body);
	return 0;
}

int sm_lidmgr_write_stream(const struct sm_lidmgr *m, FILE *out)
{
	char *text;
	size_t len;
	int rc = table_text(m, &text, &len);

	if (rc)
		return rc;
	if (fwrite(text, 1, len, out) != len)
		rc = -EIO;
	free(text);
	return rc;
}

int sm_lidmgr_save(const struct sm_lidmgr *m, const char *path, char *err, size_t errlen)
{
	char *buf = NULL;
	size_t len = 0;
	int rc = table_text(m, &buf, &len);

	if (rc)
		sm_errf(err, errlen, "%s: out of memory", path);
	else
		rc = sm_state_write(path, buf, len, 0644, err, errlen);
	free(buf);
	return rc;
}
