/* SPDX-License-Identifier: MIT */
/*
 * DOC: partitions, OpenSM's partitions.conf grammar (partitions.h)
 *
 * The grammar is OpenSM's (doc/partition-config.txt, osm_prtn_config.c),
 * read for its facts: `#` starts a comment; a definition
 *   [Name][=PKey][,flag[=value]]* : [member|mgid line][,member]* ;
 * may span lines (it ends at `;`), and a line may hold several. The header
 * and its `:` are on one line. Flags: ipoib, mtu, rate, sl, scope, Q_Key,
 * TClass, FlowLabel, defmember, indx0, each recognised by a prefix as OpenSM
 * does (`m` is mtu, `limi` is limited). Members: a port GUID, ALL, ALL_CAS,
 * ALL_SWITCHES, ALL_ROUTERS, SELF or NONE (also by prefix), `=full`,
 * `=limited` or `=both`. `mgid=GID[,flag]*` takes the rest of its line.
 *
 * Semantics as OpenSM's: the default partition (0x7fff, "Default") exists
 * first with ALL=limited, SELF=full (ALL=full, SELF=full and its IPoIB
 * group without a file); definitions with the same P_Key merge (first name
 * kept); a definition without P_Key joins the partition of that name or gets
 * the next free P_Key from 1; a port's membership is the last member line
 * that names it.
 *
 * Where smd is stricter: what OpenSM only warns about and skips (an unknown
 * flag or membership word, a value out of range, a bad mgid, an IP group
 * whose P_Key, rate or MTU disagrees with its partition, a P_Key above
 * 0xffff) is an error "NAME:LINE: message" here, so nothing of a file is
 * silently left out. Library code: nothing is logged.
 */
#include "model/partitions_priv.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PART_MAX_BYTES (16u << 20)
#define DEFAULT_PKEY 0x7fff
#define IPOIB_QKEY 0x0B1B

int pp_fail(struct pp_ctx *c, const char *fmt, ...)
{
	char msg[320];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (c->err && c->errlen)
		snprintf(c->err, c->errlen, "%s:%u: %s", c->name, c->line, msg);
	return -EINVAL;
}

char *pp_trim(char *s)
{
	while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
		s++;
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n'))
		s[--n] = '\0';
	return s;
}

/* Grow *v (n elements of sz) so one more fits: capacity doubles at powers of two. */
static int grow(void **v, size_t n, size_t sz)
{
	if (n && (n & (n - 1)))
		return 0;
	size_t cap = n ? n * 2 : 4;
	void *p = realloc(*v, cap * sz);
	if (!p)
		return -ENOMEM;
	*v = p;
	return 0;
}

void sm_partitions_free(struct sm_partitions *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++) {
		free(p->v[i].members);
		free(p->v[i].mgroups);
	}
	free(p->v);
	free(p);
}

static struct sm_partition *find_pkey(struct sm_partitions *ps, uint16_t pkey)
{
	for (size_t i = 0; i < ps->n; i++)
		if (ps->v[i].pkey == pkey)
			return &ps->v[i];
	return NULL;
}

static struct sm_partition *add_part(struct sm_partitions *ps, const char *name, uint16_t pkey, unsigned line)
{
	if (grow((void **)&ps->v, ps->n, sizeof(*ps->v)))
		return NULL;
	struct sm_partition *p = &ps->v[ps->n++];
	memset(p, 0, sizeof(*p));
	if (name && *name)
		snprintf(p->name, sizeof(p->name), "%s", name);
	else
		snprintf(p->name, sizeof(p->name), "%04x", pkey);
	p->pkey = pkey;
	p->defmember = SM_PART_LIMITED;
	p->line = line;
	return p;
}

static int add_member(struct sm_partition *p, enum sm_part_who who, uint64_t guid, enum sm_part_membership m,
		      unsigned line, bool indx0)
{
	if (grow((void **)&p->members, p->n_members, sizeof(*p->members)))
		return -ENOMEM;
	p->members[p->n_members++] = (struct sm_part_member){
		.who = who, .guid = guid, .m = m, .line = line, .indx0 = indx0,
	};
	return 0;
}

static bool mgid_taken(const struct sm_partitions *ps, const uint8_t mgid[16])
{
	for (size_t i = 0; i < ps->n; i++)
		for (size_t k = 0; k < ps->v[i].n_mgroups; k++)
			if (!memcmp(ps->v[i].mgroups[k].mgid, mgid, 16))
				return true;
	return false;
}

/* One group per scope of fl (default 2), each MGID with its scope nibble; a group already declared is kept. */
static int add_mgroups(struct pp_ctx *c, struct sm_partition *p, const uint8_t mgid[16], const struct pp_flags *fl,
		       bool ipoib)
{
	unsigned mask = fl->scope_mask ? fl->scope_mask : 1u << 2;

	for (unsigned scope = 0; scope < 16; scope++) {
		if (!(mask & (1u << scope)))
			continue;
		struct sm_part_mgroup g = {
			.ipoib = ipoib, .mtu = (uint8_t)fl->mtu, .rate = (uint8_t)fl->rate, .sl = (uint8_t)fl->sl,
			.scope = (uint8_t)scope, .qkey = fl->qkey, .tclass = fl->tclass, .flow_label = fl->flow_label,
			.hop_limit = scope == 2 ? 0 : 0xFF, .line = c->line,
		};
		memcpy(g.mgid, mgid, 16);
		g.mgid[1] = (uint8_t)((g.mgid[1] & 0xF0) | scope);
		if (mgid_taken(c->ps, g.mgid))
			continue;
		if (grow((void **)&p->mgroups, p->n_mgroups, sizeof(*p->mgroups)))
			return -ENOMEM;
		p->mgroups[p->n_mgroups++] = g;
	}
	return 0;
}

/* The IPoIB broadcast MGID of P_Key pkey: ff12:401b:<0x8000|pkey>::ffff:ffff (scope set later). */
static void ipoib_mgid(uint16_t pkey, uint8_t mgid[16])
{
	static const uint8_t bc[16] = { 0xff, 0x12, 0x40, 0x1b, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff };
	memcpy(mgid, bc, 16);
	mgid[4] = (uint8_t)((0x8000 | pkey) >> 8);
	mgid[5] = (uint8_t)pkey;
}

int pp_init(struct pp_ctx *c, const char *name, bool file, char *err, size_t errlen)
{
	memset(c, 0, sizeof(*c));
	c->name = name;
	c->err = err;
	c->errlen = errlen;
	c->ps = calloc(1, sizeof(*c->ps));
	if (!c->ps)
		return -ENOMEM;
	snprintf(c->ps->file, sizeof(c->ps->file), "%s", name);
	struct sm_partition *p = add_part(c->ps, "Default", DEFAULT_PKEY, 0);
	if (!p || add_member(p, SM_PART_WHO_ALL, 0, file ? SM_PART_LIMITED : SM_PART_FULL, 0, false) ||
	    add_member(p, SM_PART_WHO_SELF, 0, SM_PART_FULL, 0, false))
		return -ENOMEM;
	return 0;
}

/* Is s a non-empty prefix of word (OpenSM's strncmp(s, word, strlen(s)))? Empty s matches too, as there. */
static bool prefix(const char *s, const char *word)
{
	return !strncmp(s, word, strlen(s));
}

/* A number (C notation: 0x.., 0.., decimal) <= max, the whole text. */
static int num(struct pp_ctx *c, const char *what, const char *s, unsigned long long max, unsigned long long *out)
{
	char *end;

	if (!s || !*s)
		return pp_fail(c, "%s needs a value", what);
	if (*s == '-' || *s == '+' || isspace((unsigned char)*s))
		return pp_fail(c, "%s: '%s' is not a number", what, s);
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (*end || errno)
		return pp_fail(c, "%s: '%s' is not a number", what, s);
	if (v > max)
		return pp_fail(c, "%s: %s is out of range (0-%llu)", what, s, max);
	*out = v;
	return 0;
}

static int membership(struct pp_ctx *c, const char *s, enum sm_part_membership *m)
{
	if (!*s)
		return pp_fail(c, "empty membership (full, limited or both)");
	if (prefix(s, "full"))
		*m = SM_PART_FULL;
	else if (prefix(s, "both"))
		*m = SM_PART_BOTH;
	else if (prefix(s, "limited"))
		*m = SM_PART_LIMITED;
	else
		return pp_fail(c, "unknown membership '%s' (full, limited or both)", s);
	return 0;
}

/* A multicast group flag (OpenSM's parse_group_flag, same order): 1 taken, 0 not a group flag, <0 error. */
static int group_flag(struct pp_ctx *c, struct pp_flags *fl, const char *flag, const char *val)
{
	unsigned long long v;
	int rc;

	if (!*flag)
		return pp_fail(c, "empty flag");
	if (prefix(flag, "mtu")) {
		if ((rc = num(c, "mtu", val, 5, &v)) || (!v && (rc = pp_fail(c, "mtu: 0 is not an MTU code (1-5)"))))
			return rc;
		fl->mtu = (unsigned)v;
	} else if (prefix(flag, "rate")) {
		if ((rc = num(c, "rate", val, 24, &v)) || (v < 2 && (rc = pp_fail(c, "rate: %s is not a rate code (2-24)", val))))
			return rc;
		fl->rate = (unsigned)v;
	} else if (prefix(flag, "scope")) {
		if ((rc = num(c, "scope", val, 15, &v)) || (!v && (rc = pp_fail(c, "scope: 0 is reserved (1-15)"))))
			return rc;
		fl->scope_mask |= 1u << v;
	} else if (prefix(flag, "Q_Key")) {
		if ((rc = num(c, "Q_Key", val, 0xFFFFFFFFu, &v)))
			return rc;
		fl->qkey = (uint32_t)v;
	} else if (prefix(flag, "TClass")) {
		if ((rc = num(c, "TClass", val, 255, &v)))
			return rc;
		fl->tclass = (uint8_t)v;
	} else if (prefix(flag, "sl")) {
		if ((rc = num(c, "sl", val, 15, &v)))
			return rc;
		fl->sl = (unsigned)v;
	} else if (prefix(flag, "FlowLabel")) {
		if ((rc = num(c, "FlowLabel", val, 0xFFFFF, &v)))
			return rc;
		fl->flow_label = (uint32_t)v;
	} else {
		return 0;
	}
	return 1;
}

int pp_def_begin(struct pp_ctx *c, const char *name, const char *id, char *const *flag, char *const *val,
		 unsigned nflags)
{
	struct sm_partitions *ps = c->ps;
	unsigned long long v = 0;
	bool ipoib = false;
	int rc;

	c->fl = (struct pp_flags){ .mtu = 4, .rate = 3 };
	c->defm = SM_PART_LIMITED;
	c->indx0 = false;
	for (unsigned i = 0; i < nflags; i++) {
		rc = group_flag(c, &c->fl, flag[i], val[i]);
		if (rc < 0)
			return rc;
		if (rc)
			continue;
		if (prefix(flag[i], "ipoib")) {
			ipoib = true;
		} else if (prefix(flag[i], "defmember")) {
			if (!val[i])
				return pp_fail(c, "defmember needs a value (full, limited or both)");
			if ((rc = membership(c, val[i], &c->defm)))
				return rc;
		} else if (!strcmp(flag[i], "indx0")) {
			c->indx0 = true;
		} else {
			return pp_fail(c, "unknown partition flag '%s'", flag[i]);
		}
	}
	if (!id && name && isdigit((unsigned char)*name)) {
		id = name;
		name = NULL;
	}
	if (id && (rc = num(c, "P_Key", id, 0xFFFF, &v)))
		return rc;
	uint16_t pkey = (uint16_t)(v & 0x7FFF);
	struct sm_partition *p = NULL;
	if (!pkey) {
		if (name && *name)
			for (size_t i = 0; i < ps->n && !p; i++)
				if (!strncmp(ps->v[i].name, name, sizeof(ps->v[i].name) - 1))
					p = &ps->v[i];
		while (!p && c->gen < DEFAULT_PKEY - 1) {
			pkey = ++c->gen;
			if (find_pkey(ps, pkey))
				pkey = 0;
			else
				break;
		}
		if (!p && !pkey)
			return pp_fail(c, "no P_Key left to give to partition '%s'", name ? name : "");
	}
	if (!p)
		p = find_pkey(ps, pkey);
	if (!p && !(p = add_part(ps, name, pkey, c->line)))
		return -ENOMEM;
	c->cur = (size_t)(p - ps->v);
	c->in_def = 1;
	if (ipoib) {
		uint8_t mgid[16];
		struct pp_flags bf = c->fl;
		if (!bf.qkey)
			bf.qkey = IPOIB_QKEY;
		p->ipoib = true;
		ipoib_mgid(p->pkey, mgid);
		if ((rc = add_mgroups(c, p, mgid, &bf, true)))
			return rc;
	}
	return 0;
}

int pp_member(struct pp_ctx *c, const char *who, const char *m)
{
	struct sm_partition *p = &c->ps->v[c->cur];
	enum sm_part_membership mm = c->defm;
	enum sm_part_who w;
	uint64_t guid = 0;
	int rc;

	if (!*who || prefix(who, "NONE"))
		return 0;
	if (m && (rc = membership(c, m, &mm)))
		return rc;
	if (prefix(who, "ALL"))
		w = SM_PART_WHO_ALL;
	else if (prefix(who, "ALL_CAS"))
		w = SM_PART_WHO_ALL_CAS;
	else if (prefix(who, "ALL_SWITCHES"))
		w = SM_PART_WHO_ALL_SWITCHES;
	else if (prefix(who, "ALL_ROUTERS"))
		w = SM_PART_WHO_ALL_ROUTERS;
	else if (prefix(who, "SELF"))
		w = SM_PART_WHO_SELF;
	else {
		unsigned long long v;
		if (num(c, "port GUID", who, UINT64_MAX, &v) || !v)
			return pp_fail(c, "bad port GUID '%s'", who);
		w = SM_PART_WHO_GUID;
		guid = v;
	}
	return add_member(p, w, guid, mm, c->line, c->indx0);
}

int pp_mgroup(struct pp_ctx *c, const char *mgid_s, char *const *flag, char *const *val, unsigned nflags)
{
	struct sm_partition *p = &c->ps->v[c->cur];
	struct pp_flags fl = c->fl;
	uint8_t mgid[16];
	int rc;

	fl.tclass = 0;                 /* OpenSM: a group inherits every flag of its partition but TClass */
	if (!mgid_s || inet_pton(AF_INET6, mgid_s, mgid) != 1)
		return pp_fail(c, "mgid '%s' is not a GID", mgid_s ? mgid_s : "");
	if (mgid[0] != 0xff)
		return pp_fail(c, "mgid %s is not a multicast GID", mgid_s);
	for (unsigned i = 0; i < nflags; i++) {
		rc = group_flag(c, &fl, flag[i], val[i]);
		if (rc < 0)
			return rc;
		if (!rc)
			return pp_fail(c, "unknown multicast group flag '%s'", flag[i]);
	}
	bool ip = (mgid[2] == 0x40 || mgid[2] == 0x60) && mgid[3] == 0x1b;
	if (ip) {
		uint16_t mp = (uint16_t)(mgid[4] << 8 | mgid[5]);
		if (mp && mp != (0x8000 | p->pkey))
			return pp_fail(c, "IP group %s: P_Key 0x%04x is not its partition's (0x%04x)", mgid_s, mp,
				       0x8000 | p->pkey);
		if (fl.rate != c->fl.rate || fl.mtu != c->fl.mtu)
			return pp_fail(c, "IP group %s: rate %u and mtu %u must be the partition's (%u and %u)",
				       mgid_s, fl.rate, fl.mtu, c->fl.rate, c->fl.mtu);
		mgid[4] = (uint8_t)((0x8000 | p->pkey) >> 8);
		mgid[5] = (uint8_t)p->pkey;
		if (!fl.qkey)
			fl.qkey = IPOIB_QKEY;
	}
	return add_mgroups(c, p, mgid, &fl, false);
}

void pp_def_end(struct pp_ctx *c)
{
	c->in_def = 0;
}

/* Split s at commas into at most max pieces (in place); the count. */
static unsigned split(char *s, char **out, unsigned max)
{
	unsigned n = 0;
	for (;;) {
		char *q = strchr(s, ',');
		if (q)
			*q = '\0';
		if (n < max)
			out[n++] = s;
		if (!q)
			return n;
		s = q + 1;
	}
}

/* "name[=value]": name trimmed, value trimmed or NULL. */
static void name_value(char *s, char **name, char **val)
{
	char *q = strchr(s, '=');
	*val = NULL;
	if (q) {
		*q = '\0';
		*val = pp_trim(q + 1);
	}
	*name = pp_trim(s);
}

static unsigned commas(const char *s)
{
	unsigned n = 1;
	for (; *s; s++)
		n += *s == ',';
	return n;
}

/* Header text (before the ':'), in place. */
static int header(struct pp_ctx *c, char *s)
{
	unsigned max = commas(s);
	char **tok = calloc(max, sizeof(*tok) * 3);
	if (!tok)
		return -ENOMEM;
	char **flag = tok + max, **val = tok + 2 * max;
	unsigned n = split(s, tok, max);
	char *name, *id;
	name_value(tok[0], &name, &id);
	for (unsigned i = 1; i < n; i++)
		name_value(tok[i], &flag[i - 1], &val[i - 1]);
	int rc = id && !*id ? pp_fail(c, "empty P_Key after '='") : pp_def_begin(c, name, id, flag, val, n - 1);
	free(tok);
	return rc;
}

/* Members of one segment (up to ';' or the end of the line), in place. */
static int members(struct pp_ctx *c, char *s)
{
	while (s) {
		char *q = strchr(s, ','), *who, *m;
		if (q)
			*q++ = '\0';
		name_value(s, &who, &m);
		if (!strcmp(who, "mgid")) {
			/* the rest of the segment: flags of this group */
			unsigned max = q ? commas(q) : 1;
			char **tok = calloc(max, sizeof(*tok) * 3);
			if (!tok)
				return -ENOMEM;
			char **flag = tok + max, **val = tok + 2 * max;
			unsigned n = q ? split(q, tok, max) : 0, nf = 0;
			int rc = 0;
			for (unsigned i = 0; i < n && !rc; i++) {
				name_value(tok[i], &flag[nf], &val[nf]);
				if (*flag[nf] || val[nf])
					nf++;
			}
			rc = pp_mgroup(c, m, flag, val, nf);
			free(tok);
			return rc;
		}
		int rc = pp_member(c, who, m);
		if (rc)
			return rc;
		s = q;
	}
	return 0;
}

static int parse_line(struct pp_ctx *c, char *s)
{
	char *hash = strchr(s, '#');
	if (hash)
		*hash = '\0';
	while (s) {
		s = pp_trim(s);
		if (!*s)
			return 0;
		char *semi = strchr(s, ';'), *next = NULL;
		if (semi) {
			*semi = '\0';
			next = semi + 1;
		}
		if (!c->in_def) {
			char *colon = strchr(s, ':');
			if (!colon)
				return pp_fail(c, "no partition definition found (expected 'Name[=PKey][,flags]:')");
			*colon = '\0';
			int rc = header(c, s);
			if (rc)
				return rc;
			s = colon + 1;
		}
		int rc = members(c, s);
		if (rc)
			return rc;
		if (semi)
			pp_def_end(c);
		s = next;
	}
	return 0;
}

static int parse_text(struct pp_ctx *c, const char *text, size_t len)
{
	size_t i = 0;
	char *buf = NULL;
	size_t cap = 0;
	int rc = 0;

	while (i < len && !rc) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t n = nl ? (size_t)(nl - (text + i)) : len - i;
		c->line++;
		if (memchr(text + i, '\0', n)) {
			rc = pp_fail(c, "NUL byte in the file");
			break;
		}
		if (n + 1 > cap) {
			char *nb = realloc(buf, n + 1);
			if (!nb) {
				rc = -ENOMEM;
				break;
			}
			buf = nb;
			cap = n + 1;
		}
		memcpy(buf, text + i, n);
		buf[n] = '\0';
		rc = parse_line(c, buf);
		i += n + 1;
	}
	free(buf);
	return rc;
}

static bool is_yaml(const char *name, const char *text, size_t len)
{
	size_t n = strlen(name);
	if ((n > 5 && !strcmp(name + n - 5, ".yaml")) || (n > 4 && !strcmp(name + n - 4, ".yml")))
		return true;
	/* or it starts (after comments and blank lines) with "partitions:" */
	size_t i = 0;
	while (i < len) {
		while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n'))
			i++;
		if (i < len && text[i] == '#') {
			while (i < len && text[i] != '\n')
				i++;
			continue;
		}
		break;
	}
	return len - i >= 11 && !memcmp(text + i, "partitions:", 11);
}

int sm_partitions_parse(const char *text, size_t len, const char *name, struct sm_partitions **out, char *err,
			size_t errlen)
{
	struct pp_ctx c;
	int rc = pp_init(&c, name, true, err, errlen);

	if (!rc)
		rc = is_yaml(name, text, len) ? pp_parse_yaml(&c, text, len) : parse_text(&c, text, len);
	if (rc) {
		if (rc == -ENOMEM && err && errlen)
			snprintf(err, errlen, "%s: out of memory", name);
		sm_partitions_free(c.ps);
		return rc;
	}
	*out = c.ps;
	return 0;
}

int sm_partitions_default(struct sm_partitions **out)
{
	struct pp_ctx c;
	int rc = pp_init(&c, "(default)", false, NULL, 0);

	if (!rc) {
		/* Default=0x7fff,ipoib : ALL=full, SELF=full ; */
		char *flag[1] = { (char *)"ipoib" }, *val[1] = { NULL };
		rc = pp_def_begin(&c, "Default", "0x7fff", flag, val, 1);
	}
	if (rc) {
		sm_partitions_free(c.ps);
		return -ENOMEM;
	}
	*out = c.ps;
	return 0;
}

int sm_partitions_load(const char *path, struct sm_partitions **out, char *err, size_t errlen)
{
	struct stat sb;
	FILE *fp = fopen(path, "rb");
	int rc;

	if (!fp) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return rc;
	}
	if (fstat(fileno(fp), &sb) || !S_ISREG(sb.st_mode)) {
		fclose(fp);
		snprintf(err, errlen, "%s: not a regular file", path);
		return -EINVAL;
	}
	if ((uint64_t)sb.st_size > PART_MAX_BYTES) {
		fclose(fp);
		snprintf(err, errlen, "%s: larger than %u MiB", path, PART_MAX_BYTES >> 20);
		return -EFBIG;
	}
	size_t len = (size_t)sb.st_size;
	char *buf = malloc(len + 1);
	if (!buf) {
		fclose(fp);
		return -ENOMEM;
	}
	size_t got = fread(buf, 1, len, fp);
	fclose(fp);
	if (got != len) {
		free(buf);
		snprintf(err, errlen, "%s: short read", path);
		return -EIO;
	}
	rc = sm_partitions_parse(buf, len, path, out, err, errlen);
	free(buf);
	return rc;
}

/* Does member line m name port index port of f (sm_port: SELF)? */
static bool names(const struct sm_part_member *m, const struct sm_fabric *f, uint32_t port, uint32_t sm_port)
{
	const struct sm_port *p = &f->ports[port];
	uint8_t type = f->nodes[p->node].type;

	switch (m->who) {
	case SM_PART_WHO_GUID: return p->guid == m->guid;
	case SM_PART_WHO_ALL: return true;
	case SM_PART_WHO_ALL_CAS: return type == SM_NODE_CA;
	case SM_PART_WHO_ALL_SWITCHES: return type == SM_NODE_SWITCH;
	case SM_PART_WHO_ALL_ROUTERS: return type == SM_NODE_ROUTER;
	case SM_PART_WHO_SELF: return port == sm_port;
	}
	return false;
}

enum sm_part_membership sm_partition_port(const struct sm_partition *part, const struct sm_fabric *f,
					  uint32_t port, uint32_t sm_port)
{
	const struct sm_port *p = &f->ports[port];
	const struct sm_node *nd = &f->nodes[p->node];
	enum sm_part_membership m = SM_PART_NONE;

	if (nd->type == SM_NODE_SWITCH ? p->num != 0 : p->num == 0)
		return SM_PART_NONE;   /* end ports only: switch port 0, CA and router ports */
	for (size_t i = 0; i < part->n_members; i++)
		if (names(&part->members[i], f, port, sm_port))
			m = part->members[i].m;
	return m;
}

uint16_t sm_partitions_port_indx0(const struct sm_partitions *ps, const struct sm_fabric *f, uint32_t port,
				  uint32_t sm_port)
{
	const struct sm_port *p = &f->ports[port];
	const struct sm_node *nd = &f->nodes[p->node];
	uint16_t at0 = 0;

	if (nd->type == SM_NODE_SWITCH ? p->num != 0 : p->num == 0)
		return 0;
	for (size_t i = 0; ps && i < ps->n; i++) {
		const struct sm_partition *part = &ps->v[i];
		for (size_t k = 0; k < part->n_members; k++) {
			const struct sm_part_member *m = &part->members[k];
			if (!names(m, f, port, sm_port))
				continue;
			if (m->indx0)
				at0 = (uint16_t)(part->pkey | (m->m == SM_PART_LIMITED ? 0 : 0x8000));
			else if ((at0 & 0x7fff) == part->pkey)
				at0 = 0;
		}
	}
	return at0;
}
