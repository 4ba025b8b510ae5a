/* SPDX-License-Identifier: MIT */
/*
 * DOC: topology dump readers (ibnetdiscover text and ibsim net files)
 *
 * Both formats share one grammar, because ibsim's net format is a loose
 * superset of what ibnetdiscover prints:
 *
 *   vendid=0x2c9 / devid=0xcf08 / sysimgguid=0x... / switchguid=0xG(P) |
 *   caguid=0xG | rtguid=0xG                       attributes of the next node
 *   Switch 36 "S-<guid>"  # "desc" enhanced port 0 lid 5 lmc 0
 *   Ca|Hca 2 "H-<guid>"   # "desc"                node header (Rt = router)
 *   [p](portguid) "peer"[q](peerguid)  # ...     one line per linked port
 *
 * What differs is how the gaps are filled, and that is what `mode` selects:
 *  - IBND (real ibnetdiscover output): every node has its GUID line, every
 *    port line its "# ... lid N 4xHDR" comment (a missing one means a
 *    truncated file); port GUIDs come from the "(hex)" fields; width and
 *    speed are the active values printed.
 *  - IBSIM: what ibsim (ibsim/sim_net.c) would simulate from the same file:
 *    GUIDs are allocated from per-type bases (switches from 0x200000 in
 *    steps of 1, CAs from 0x100000 in steps of nports+1, "switchguid=" etc.
 *    move the base), CA port GUIDs are node GUID + port number, the system
 *    image GUID defaults to the node GUID, vendid= applies to one node but
 *    devid= sticks; widths and speeds are enabled masks (defaults, width=/
 *    speed=/extspeed= lines, w=/s=/e= port options, "4xQDR" text) and the
 *    active value of a link is the best rate both ends enable.
 * SM_TOPO_AUTO looks at the first 64 KiB: ibnetdiscover's signatures are a
 * switch header ending in "port 0 lid N lmc M" and a CA port line starting
 * "[p](portguid)"; with either the file is IBND, else IBSIM (ibsim net
 * files, including ours, may carry GUID lines but never those).
 *
 * Data flow: lines come from a fixed 64 KiB block reader (no line may
 * exceed SM_TOPO_MAX_LINE; NUL and control bytes mean "binary"). Nodes go
 * straight into a private scratch fabric as their headers are read (so
 * duplicate GUIDs and LIDs are caught on their own line); port lines are
 * kept as records naming their peer by id. At EOF the peers are resolved,
 * each link must be listed identically by both ends, links are made, and
 * the scratch fabric is appended to the caller's in one all-or-nothing step
 * (sm_fabric_append). Any error frees the scratch state: the caller's
 * fabric never sees a partial load. sm_topo_parse() stops before the
 * append and sm_topo_commit() does it, so several dumps can be read in
 * parallel threads (each parse owns all its state) and appended in order.
 *
 * A dump carries no port state: linked ports and switch port 0 are loaded
 * ACTIVE with physical state LinkUp, unlinked ones stay DOWN.
 */
#include "config.h"
#include "model/topo.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define RD_BLOCK 65536

enum { MODE_AUTO = SM_TOPO_AUTO, MODE_IBND = SM_TOPO_IBND, MODE_IBSIM = SM_TOPO_IBSIM };

/* Pending per-node attributes (the lines before a node header). */
enum {
	PEND_VENDID = 1, PEND_DEVID = 2, PEND_SYSIMG = 4, PEND_GUID = 8,
};

struct rd_node {
	uint32_t name;        /* offset of the node id in the name arena */
	uint32_t line;
	uint32_t first_port;  /* its port records are ports[first_port ..] */
	uint32_t n_lines;
	uint8_t wena, sena, eena, mena; /* ibsim enabled-rate defaults */
};

struct rd_port {
	uint32_t node;        /* scratch fabric node index */
	uint32_t line;
	uint32_t peer_name;   /* arena offset */
	uint32_t peer_node;   /* resolved at EOF */
	uint64_t peer_guid;   /* "(hex)" after the peer, 0 if absent */
	uint8_t num, peer_port;
	uint8_t width, speed, flags;    /* active values (IBND) */
	uint8_t wena, sena, eena, mena; /* enabled masks (IBSIM) */
};

struct rd {
	const char *name;
	FILE *in;
	struct sm_topo_err *err;
	int mode;
	unsigned plane;
	struct sm_fabric *fab;   /* scratch */

	/* block reader */
	char *buf;
	size_t start, end;
	bool eof;
	unsigned line;
	bool unterminated;       /* last line had no '\n' */

	struct rd_node *nodes;   /* parallel to fab->nodes */
	uint32_t cap_nodes;
	struct rd_port *ports;
	uint32_t n_ports, cap_ports;
	uint32_t *portmap;       /* fabric port index -> port record, SM_NONE */
	uint32_t cap_portmap;
	char *arena;
	size_t arena_len, arena_cap;
	uint32_t *ht;            /* node id hash: node index or SM_NONE */
	uint32_t ht_cap;

	int64_t cur;             /* node taking port lines, -1 none */
	uint32_t *spare_lid_map; /* a recycled plane LID table (SM_LID_SPACE entries) */

	/* attributes for the next node */
	unsigned pend, pend_line;
	uint64_t guid_base[4], abs_base[4];
	bool guid_given[4];
	uint64_t port0_guid, sysimg;
	uint32_t vendid;
	uint16_t devid;
	uint8_t netwidth, netspeed, netspeedext;
};

static int fail(struct rd *r, unsigned line, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(struct rd *r, unsigned line, int rc, const char *fmt, ...)
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
static int next_line(struct rd *r, char **out, size_t *len)
{
	for (;;) {
		char *s = r->buf + r->start;
		char *nl = memchr(s, '\n', r->end - r->start);
		size_t l;

		if (nl || (r->eof && r->end > r->start)) {
			l = nl ? (size_t)(nl - s) : r->end - r->start;
			r->line++;
			if (l > SM_TOPO_MAX_LINE)
				return fail(r, r->line, -EINVAL, "line longer than %d bytes",
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
			return fail(r, r->line + 1, -EINVAL, "line longer than %d bytes",
				    SM_TOPO_MAX_LINE);
		memmove(r->buf, r->buf + r->start, r->end - r->start);
		r->end -= r->start;
		r->start = 0;
		/* keep one byte for the terminating NUL of an unterminated last line */
		size_t got = fread(r->buf + r->end, 1, RD_BLOCK - 1 - r->end, r->in);
		r->end += got;
		if (got == 0) {
			if (ferror(r->in))
				return fail(r, r->line, -EIO, "read error: %s", strerror(errno));
			r->eof = true;
		}
	}
}

/* ---- small lexing helpers ---- */

static const char *skip_ws(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* Value of a hex digit, or -1. */
static int hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;  /* ASCII lower case; maps no non-letter into a..f */
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* 0 ok, -1 no digits, -2 too large. Decimal, or hex with 0x when base0. */
static int get_uint(const char **sp, bool base0, uint64_t max, uint64_t *v)
{
	const char *s = *sp;
	uint64_t x = 0;
	unsigned base = 10;
	bool any = false, big = false, small = max < (UINT64_MAX >> 5);

	if (base0 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && hexval((unsigned char)s[2]) >= 0) {
		base = 16;
		s += 2;
	}
	for (;; s++) {
		unsigned d;
		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = (unsigned)(*s - 'a' + 10);
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			d = (unsigned)(*s - 'A' + 10);
		else
			break;
		any = true;
		/* x * base + d > max, without a division per digit */
		uint64_t t;
		if (big)
			continue;
		if (small)
			t = x * base + d;  /* x <= max < 2^59: cannot wrap */
		else if (__builtin_mul_overflow(x, base, &t) || __builtin_add_overflow(t, d, &t)) {
			big = true;
			continue;
		}
		if (t > max)
			big = true;
		else
			x = t;
	}
	if (!any)
		return -1;
	*sp = s;
	if (big)
		return -2;
	*v = x;
	return 0;
}

/* GUID: optional 0x, 1..16 hex digits. 0 ok, -1 none, -2 too long. */
static int get_guid(const char **sp, uint64_t *v)
{
	const char *s = *sp;
	uint64_t x = 0;
	int n = 0, d;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && hexval((unsigned char)s[2]) >= 0)
		s += 2;
	for (; (d = hexval((unsigned char)*s)) >= 0; s++, n++)
		x = (x << 4) | (unsigned)d;
	if (!n)
		return -1;
	*sp = s;
	if (n > 16)
		return -2;
	*v = x;
	return 0;
}

static int num_fail(struct rd *r, int how, const char *what, uint64_t max)
{
	if (how == -2)
		return fail(r, r->line, -EINVAL, "%s out of range (max %llu)", what,
			    (unsigned long long)max);
	return fail(r, r->line, -EINVAL, "expected %s", what);
}

static int guid_fail(struct rd *r, int how, const char *what)
{
	if (how == -2)
		return fail(r, r->line, -EINVAL, "%s has more than 16 hex digits", what);
	return fail(r, r->line, -EINVAL, "expected %s (hex)", what);
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

static int grow(void **p, uint32_t *cap, uint32_t need, size_t elem)
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

static int arena_add(struct rd *r, const char *s, size_t len, uint32_t *off)
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

static uint32_t name_find(const struct rd *r, const char *s, size_t len)
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

static int name_insert(struct rd *r, uint32_t node)
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

/* Quoted string at *sp ('"' expected): returns start, sets len, moves past. */
static const char *get_quoted(const char **sp, size_t *len)
{
	const char *s = *sp;
	if (*s != '"')
		return NULL;
	const char *e = strchr(s + 1, '"');
	if (!e)
		return NULL;
	*len = (size_t)(e - s - 1);
	*sp = e + 1;
	return s + 1;
}

static const char *node_name(const struct rd *r, uint32_t n)
{
	return r->arena + r->nodes[n].name;
}

/* ---- attribute lines ---- */

static int set_mode(struct rd *r, int mode)
{
	if (r->mode == MODE_AUTO)
		r->mode = mode;
	return 0;
}

/* SM_TOPO_AUTO: fill the first block and look for ibnetdiscover's signatures. */
static int sniff(struct rd *r)
{
	while (!r->eof && r->end < RD_BLOCK - 1) {
		size_t got = fread(r->buf + r->end, 1, RD_BLOCK - 1 - r->end, r->in);
		r->end += got;
		if (!got) {
			if (ferror(r->in))
				return fail(r, 0, -EIO, "read error: %s", strerror(errno));
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

static int pend(struct rd *r, unsigned bit, const char *what)
{
	if (r->mode == MODE_IBND && (r->pend & bit))
		return fail(r, r->line, -EINVAL,
			    "second %s before a node header: the block started at line %u is truncated",
			    what, r->pend_line);
	if (!r->pend)
		r->pend_line = r->line;
	r->pend |= bit;
	return 0;
}

/* After the value of an attribute line only a comment may follow. */
static int attr_end(struct rd *r, const char *s, const char *kw)
{
	s = skip_ws(s);
	if (*s && *s != '#')
		return fail(r, r->line, -EINVAL, "unexpected text after %s value: '%.40s'", kw, s);
	return 0;
}

static int parse_attr(struct rd *r, const char *kw, size_t kwl, const char *s)
{
	uint64_t v;
	int rc, type = 0;

#define KW(x) (kwl == sizeof(x) - 1 && !memcmp(kw, x, kwl))
	if (KW("switchguid"))
		type = SM_NODE_SWITCH;
	else if (KW("caguid") || KW("hcaguids"))
		type = SM_NODE_CA;
	else if (KW("rtguid"))
		type = SM_NODE_ROUTER;

	if (type) {
		bool rel = false;
		if (*s == '+' && r->mode == MODE_IBSIM)
			rel = true;
		else if (*s != '=')
			return fail(r, r->line, -EINVAL, "expected '=' after %.*s", (int)kwl, kw);
		s++;
		if ((rc = get_guid(&s, &v)))
			return guid_fail(r, rc, "GUID");
		/* ibsim keeps an absolute base per type; "+N" is relative to it */
		if (!rel)
			r->abs_base[type] = v;
		r->guid_base[type] = r->abs_base[type] + (rel ? v : 0);
		r->guid_given[type] = true;
		r->port0_guid = 0;
		if (type == SM_NODE_SWITCH && *s == '(') {
			s++;
			if ((rc = get_guid(&s, &r->port0_guid)))
				return guid_fail(r, rc, "port 0 GUID");
			if (*s++ != ')')
				return fail(r, r->line, -EINVAL, "expected ')' after port 0 GUID");
		}
		if ((rc = pend(r, PEND_GUID, "GUID line")))
			return rc;
		return attr_end(r, s, "GUID");
	}
	if (*s != '=')
		return fail(r, r->line, -EINVAL, "expected '=' after %.*s", (int)kwl, kw);
	s++;
	if (KW("sysimgguid")) {
		if ((rc = get_guid(&s, &r->sysimg)))
			return guid_fail(r, rc, "system image GUID");
		if ((rc = pend(r, PEND_SYSIMG, "sysimgguid=")))
			return rc;
		return attr_end(r, s, "sysimgguid");
	}
	if (KW("vendid") || KW("devid")) {
		bool ven = KW("vendid");
		uint64_t lim = ven ? 0xffffff : 0xffff;
		if ((rc = get_uint(&s, true, lim, &v)))
			return num_fail(r, rc, ven ? "vendor id" : "device id", lim);
		if (ven)
			r->vendid = (uint32_t)v;
		else
			r->devid = (uint16_t)v;
		if ((rc = pend(r, ven ? PEND_VENDID : PEND_DEVID, ven ? "vendid=" : "devid=")))
			return rc;
		return attr_end(r, s, ven ? "vendid" : "devid");
	}
	/* ibsim-only defaults for the enabled link rates */
	uint64_t max = KW("width") ? 31 : KW("speed") ? 7 : 15;
	if (KW("width") || KW("speed") || KW("extspeed")) {
		if (r->mode == MODE_IBND)
			return fail(r, r->line, -EINVAL,
				    "'%.*s=' is an ibsim net-file keyword, not ibnetdiscover output",
				    (int)kwl, kw);
		if ((rc = get_uint(&s, true, max, &v)))
			return num_fail(r, rc, "value", max);
		if (!KW("extspeed") && v == 0)
			return fail(r, r->line, -EINVAL, "%.*s=0 enables nothing", (int)kwl, kw);
		if (KW("width"))
			r->netwidth = (uint8_t)v;
		else if (KW("speed"))
			r->netspeed = (uint8_t)v;
		else
			r->netspeedext = (uint8_t)v;
		return attr_end(r, s, "rate");
	}
#undef KW
	return fail(r, r->line, -EINVAL, "unknown keyword '%.*s'", (int)kwl, kw);
}

/* ---- node headers ---- */

/* Description in a header comment; *sp is just after '#'. */
static void header_desc(struct rd *r, const char **sp, char *desc)
{
	const char *s = skip_ws(*sp), *e;
	size_t len;

	if (*s == '"') {
		/* The closing quote is the last one on the line: descriptions may hold quotes. */
		e = strrchr(s + 1, '"');
		if (!e) {
			e = s + strlen(s);
			*sp = e;
		} else {
			*sp = e + 1;
		}
		s++;
	} else {
		/* ibsim accepts an unquoted description ending at these words */
		static const char *const ends[] = { " enhanced port ", " base port ", " lid ", " lmc " };
		e = s + strlen(s);
		for (size_t i = 0; i < 4; i++) {
			const char *x = strstr(s, ends[i]);
			if (x && x < e)
				e = x;
		}
		*sp = e;
	}
	len = (size_t)(e - s);
	if (len > SM_DESC_MAX)
		len = SM_DESC_MAX; /* node-name-map names can be longer than NodeDescription */
	memcpy(desc, s, len);
	desc[len] = '\0';
	(void)r;
}

/* "lid N" at *sp (after optional blanks); 0, 1 absent, < 0 error. */
static int get_lid_word(struct rd *r, const char **sp, const char *word, uint64_t max, uint64_t *v)
{
	const char *s = skip_ws(*sp);
	size_t wl = 0;
	int rc;

	/* word has no NUL before its end, so a short line stops the compare */
	while (word[wl] && s[wl] == word[wl])
		wl++;
	if (word[wl] || (s[wl] != ' ' && s[wl] != '\t'))
		return 1;
	s = skip_ws(s + wl);
	if ((rc = get_uint(&s, false, max, v)))
		return num_fail(r, rc, word, max);
	*sp = s;
	return 0;
}

static int set_lid(struct rd *r, uint32_t n, unsigned p, uint64_t lid, uint64_t lmc)
{
	int rc = sm_fabric_set_lid(r->fab, n, p, (uint16_t)lid, (uint8_t)lmc);

	if (rc == -EEXIST) {
		uint32_t o = SM_NONE;
		for (uint64_t l = lid; o == SM_NONE && l < lid + (1u << lmc); l++)
			o = sm_fabric_find_lid(r->fab, r->plane, (uint16_t)l);
		o = r->fab->ports[o].node;
		return fail(r, r->line, -EEXIST, "LID %llu (LMC %llu) overlaps the LIDs of \"%s\" (line %u)",
			    (unsigned long long)lid, (unsigned long long)lmc, node_name(r, o), r->nodes[o].line);
	}
	if (rc)
		return fail(r, r->line, -EINVAL, "LID %llu with LMC %llu is out of range",
			    (unsigned long long)lid, (unsigned long long)lmc);
	return 0;
}

static int parse_header(struct rd *r, int type, const char *s)
{
	uint64_t v, guid;
	size_t nlen;
	int rc;
	char desc[SM_DESC_MAX + 1] = "";
	uint64_t lid = 0, lmc = 0;
	bool has_lid = false, esp0 = false;
	unsigned hline = r->line;

	s = skip_ws(s);
	if ((rc = get_uint(&s, false, SM_MAX_PORTS, &v)))
		return num_fail(r, rc, "number of ports", SM_MAX_PORTS);
	if (v < 1)
		return fail(r, r->line, -EINVAL, "a node needs at least one port");
	unsigned nports = (unsigned)v;
	s = skip_ws(s);
	const char *name = get_quoted(&s, &nlen);
	if (!name)
		return fail(r, r->line, -EINVAL, "expected a quoted node id after the port count");
	if (!nlen)
		return fail(r, r->line, -EINVAL, "empty node id");
	s = skip_ws(s);
	if (*s == '#') {
		s++;
		header_desc(r, &s, desc);
		if (type == SM_NODE_SWITCH) {
			const char *t = skip_ws(s);
			if (!strncmp(t, "enhanced port 0", 15)) {
				esp0 = true;
				s = t + 15;
			} else if (!strncmp(t, "base port 0", 11)) {
				s = t + 11;
			}
			if ((rc = get_lid_word(r, &s, "lid", SM_UNICAST_LID_MAX, &lid)) < 0)
				return rc;
			has_lid = rc == 0;
			if (has_lid && (rc = get_lid_word(r, &s, "lmc", 7, &lmc)) < 0)
				return rc;
			if (has_lid && rc == 1 && r->mode == MODE_IBND)
				return fail(r, r->line, -EINVAL, "switch header has 'lid' but no 'lmc'");
		}
	} else if (*s) {
		return fail(r, r->line, -EINVAL, "unexpected text after node id: '%.40s'", s);
	}
	if (r->mode == MODE_IBND) {
		if (!r->guid_given[type] || !(r->pend & PEND_GUID))
			return fail(r, r->line, -EINVAL,
				    "%s header without its %s= line (truncated block, or an ibsim net file: use format ibsim)",
				    sm_node_type_str(type),
				    type == SM_NODE_SWITCH ? "switchguid" : type == SM_NODE_CA ? "caguid" : "rtguid");
		if (type == SM_NODE_SWITCH && !has_lid)
			return fail(r, r->line, -EINVAL,
				    "switch header lacks '# \"desc\" ... port 0 lid N lmc M'");
	}
	guid = r->guid_base[type];
	if (!guid)
		return fail(r, r->line, -EINVAL, "%s \"%.*s\" has GUID 0 (give it a %s= line)",
			    sm_node_type_str(type), (int)nlen, name,
			    type == SM_NODE_SWITCH ? "switchguid" : type == SM_NODE_CA ? "caguid" : "rtguid");
	uint32_t dup = name_find(r, name, nlen);
	if (dup != SM_NONE)
		return fail(r, r->line, -EEXIST, "node id \"%.*s\" already defined at line %u",
			    (int)nlen, name, r->nodes[dup].line);

	uint64_t port0 = (r->mode == MODE_IBND && type == SM_NODE_SWITCH) ? r->port0_guid : 0;
	int64_t n = sm_fabric_add_node(r->fab, (enum sm_node_type)type, guid, nports, r->plane, port0);
	if (n == -EEXIST) {
		uint32_t o = sm_fabric_find_node(r->fab, guid);
		if (o == SM_NONE) {
			uint32_t pi = sm_fabric_find_port(r->fab, port0 ? port0 : guid);
			o = pi == SM_NONE ? SM_NONE : r->fab->ports[pi].node;
		}
		return fail(r, r->line, -EEXIST, "duplicate GUID 0x%016llx (node \"%s\" at line %u)",
			    (unsigned long long)(port0 && sm_fabric_find_node(r->fab, guid) == SM_NONE ? port0 : guid),
			    o == SM_NONE ? "?" : node_name(r, o), o == SM_NONE ? 0 : r->nodes[o].line);
	}
	if (n < 0)
		return fail(r, r->line, (int)n, "cannot add node: %s", strerror((int)-n));
	if ((rc = grow((void **)&r->nodes, &r->cap_nodes, (uint32_t)n + 1, sizeof(*r->nodes))) ||
	    (rc = grow((void **)&r->portmap, &r->cap_portmap, r->fab->n_ports, sizeof(*r->portmap))))
		return fail(r, r->line, rc, "out of memory");
	struct rd_node *rn = &r->nodes[n];
	memset(rn, 0, sizeof(*rn));
	rn->line = hline;
	rn->first_port = r->n_ports;
	rn->wena = r->netwidth;
	rn->sena = r->netspeed;
	rn->eena = r->netspeedext;
	if ((rc = arena_add(r, name, nlen, &rn->name)) || (rc = name_insert(r, (uint32_t)n)))
		return fail(r, r->line, rc, "out of memory");
	for (uint32_t i = 0; i <= nports; i++)
		r->portmap[sm_port_index(r->fab, (uint32_t)n, i)] = SM_NONE;

	struct sm_node *nd = sm_node(r->fab, (uint32_t)n);
	nd->vendor_id = (r->pend & PEND_VENDID) ? r->vendid : 0;
	nd->device_id = (r->pend & PEND_DEVID) || r->mode == MODE_IBSIM ? r->devid : 0;
	nd->sysimg_guid = (r->pend & PEND_SYSIMG) ? r->sysimg : r->mode == MODE_IBSIM ? guid : 0;
	if (esp0)
		nd->flags |= SM_NODE_F_ENHANCED_SP0;
	if (type == SM_NODE_SWITCH) {
		/* port 0 is the switch's management port: always up (ibsim does the same) */
		sm_port(r->fab, (uint32_t)n, 0)->state = SM_PORT_ACTIVE;
		sm_port(r->fab, (uint32_t)n, 0)->phys_state = 5;
	}
	/* what sm_fabric_set_desc() does, without a printf per node */
	const char *dsrc = desc[0] || r->mode == MODE_IBND ? desc : r->arena + rn->name;
	size_t dl = strnlen(dsrc, SM_DESC_MAX);
	memcpy(nd->desc, dsrc, dl);
	nd->desc[dl] = '\0';
	if (has_lid && lid && (rc = set_lid(r, (uint32_t)n, 0, lid, lmc)))
		return rc;
	if (r->mode == MODE_IBSIM && type != SM_NODE_SWITCH) {
		for (unsigned p = 1; p <= nports; p++) {
			rc = sm_fabric_set_port_guid(r->fab, (uint32_t)n, p, guid + p);
			if (rc == -EEXIST)
				return fail(r, r->line, -EEXIST,
					    "port GUID 0x%016llx (node GUID + port %u) is already used",
					    (unsigned long long)(guid + p), p);
			if (rc)
				return fail(r, r->line, rc, "cannot set port GUID");
		}
	}
	/* ibsim's GUID allocation: the next node of this type continues from here */
	r->guid_base[type] = guid + (type == SM_NODE_SWITCH ? 1 : nports + 1u);
	r->guid_given[type] = false;
	r->pend = 0;
	r->vendid = 0;
	r->sysimg = 0;
	r->port0_guid = 0;
	if (r->mode == MODE_IBND)
		r->devid = 0;
	r->cur = n;
	return 0;
}

/* ---- port lines ---- */

/* ibsim: a "4xQDR" text sets enabled masks (sim_net.c semantics). */
static void ibsim_text_rate(struct rd_port *p, uint8_t width, uint8_t speed, uint8_t flags)
{
	switch (width) {
	case 8: p->wena = 11; break;   /* 12x -> 1x|4x|12x */
	case 4: p->wena = 4; break;    /* 8x */
	case 2: p->wena = 3; break;    /* 4x -> 1x|4x */
	case 1: p->wena = 1; break;
	case 16: p->wena = 16; break;
	default: break;
	}
	if (flags & SM_PORT_F_EXT_SPEED) {
		p->sena = 7;
		p->mena = 1;
		p->eena = (uint8_t)((speed << 1) - 1); /* FDR 1, EDR 3, HDR 7, NDR 15 */
	} else if (flags & SM_PORT_F_FDR10) {
		p->sena = 7;
		p->mena = 1;
	} else if (speed == 1) {
		p->sena = 1;
	} else if (speed == 2) {
		p->sena = 3;
	} else if (speed == 4) {
		p->sena = 7;
	}
}

/* The part after '#' of a port line. */
static int port_comment(struct rd *r, struct rd_port *p, int type, const char *c)
{
	uint64_t lid = 0, lmc = 0;
	bool has_lid = false;
	int rc;

	c = skip_ws(c);
	if (type != SM_NODE_SWITCH) {
		if ((rc = get_lid_word(r, &c, "lid", SM_UNICAST_LID_MAX, &lid)) < 0)
			return rc;
		if (rc == 0) {
			has_lid = true;
			if ((rc = get_lid_word(r, &c, "lmc", 7, &lmc)) < 0)
				return rc;
			if (rc == 1) {
				/* "# lid N 4xQDR": ibsim takes N as this port's LID */
				if (r->mode == MODE_IBND)
					return fail(r, r->line, -EINVAL, "CA port line has 'lid' but no 'lmc'");
				c = skip_ws(c);
				goto rate;
			}
		} else if (r->mode == MODE_IBND) {
			return fail(r, r->line, -EINVAL,
				    "CA port line lacks '# lid N lmc M' (truncated line?)");
		}
	}
	/* the peer's description, then " lid N RATE ..." after its last quote */
	const char *q = strrchr(c, '"');
	const char *t = q ? q + 1 : c;
	uint64_t plid;
	if ((rc = get_lid_word(r, &t, "lid", SM_UNICAST_LID_MAX, &plid)) < 0)
		return rc;
	if (rc == 1) {
		if (r->mode == MODE_IBND)
			return fail(r, r->line, -EINVAL,
				    "port line lacks the '\"peer desc\" lid N WIDTHxSPEED' comment (truncated line?)");
		goto lids; /* ibsim ignores it with a warning */
	}
	c = skip_ws(t);
rate:
	if (*c) {
		const char *e = c;
		uint8_t w, sp, fl;
		while (*e && *e != ' ' && *e != '\t')
			e++;
		if (sm_topo_parse_rate(c, (size_t)(e - c), &w, &sp, &fl)) {
			if (r->mode == MODE_IBND)
				return fail(r, r->line, -EINVAL, "unknown link rate '%.*s'",
					    (int)(e - c), c);
		} else if (r->mode == MODE_IBND) {
			p->width = w;
			p->speed = sp;
			p->flags = fl;
		} else {
			ibsim_text_rate(p, w, sp, fl);
		}
	} else if (r->mode == MODE_IBND) {
		return fail(r, r->line, -EINVAL, "port line lacks the link rate (e.g. 4xHDR)");
	}
lids:
	if (has_lid && lid && (rc = set_lid(r, p->node, p->num, lid, lmc)))
		return rc;
	return 0;
}

/* Optional "[ext N]" after a port number (ibnetdiscover -g). */
static int skip_ext(struct rd *r, const char **sp)
{
	const char *s = *sp;
	uint64_t v;

	if (s[0] != '[' || strncmp(s, "[ext ", 5))
		return 0;
	s += 5;
	if (get_uint(&s, false, 255, &v) || *s != ']')
		return fail(r, r->line, -EINVAL, "bad '[ext N]' port mapping");
	*sp = s + 1;
	return 0;
}

static int parse_port(struct rd *r, const char *s)
{
	uint32_t n = (uint32_t)r->cur;
	const struct sm_node *nd = sm_node(r->fab, n);
	struct rd_port *p;
	uint64_t v, guid = 0;
	size_t plen;
	int rc;

	if ((rc = grow((void **)&r->ports, &r->cap_ports, r->n_ports + 1, sizeof(*r->ports))))
		return fail(r, r->line, rc, "out of memory");
	p = &r->ports[r->n_ports];
	memset(p, 0, sizeof(*p));
	p->node = n;
	p->line = r->line;
	p->peer_node = SM_NONE;
	p->wena = r->nodes[n].wena;
	p->sena = r->nodes[n].sena;
	p->eena = r->nodes[n].eena;

	s++; /* '[' */
	if ((rc = get_uint(&s, false, 1000000, &v)) == -1)
		return fail(r, r->line, -EINVAL, "expected a port number after '['");
	if (rc == -2 || v < 1 || v > nd->nports)
		return fail(r, r->line, -EINVAL, "port %s%llu out of range 1..%u of \"%s\"",
			    rc == -2 ? ">" : "", rc == -2 ? 1000000ULL : (unsigned long long)v,
			    nd->nports, node_name(r, n));
	if (*s++ != ']')
		return fail(r, r->line, -EINVAL, "expected ']' after the port number");
	p->num = (uint8_t)v;
	uint32_t pi = sm_port_index(r->fab, n, p->num);
	if (r->portmap[pi] != SM_NONE)
		return fail(r, r->line, -EINVAL, "port %u of \"%s\" listed twice (first at line %u)",
			    p->num, node_name(r, n), r->ports[r->portmap[pi]].line);
	if ((rc = skip_ext(r, &s)))
		return rc;
	if (*s == '(') {
		s++;
		if ((rc = get_guid(&s, &guid)))
			return guid_fail(r, rc, "port GUID");
		if (*s++ != ')')
			return fail(r, r->line, -EINVAL, "expected ')' after the port GUID");
	}
	s = skip_ws(s);
	if (*s == '@')
		return fail(r, r->line, -EINVAL, "ibsim port aliases ('@') are not supported");
	const char *peer = get_quoted(&s, &plen);
	if (!peer)
		return fail(r, r->line, -EINVAL, "expected the quoted id of the peer node");
	if (!plen)
		return fail(r, r->line, -EINVAL, "empty peer node id");
	if (*s == '[') {
		s++;
		if ((rc = get_uint(&s, false, 1000000, &v)) == -1)
			return fail(r, r->line, -EINVAL, "expected the peer port number after '['");
		if (rc == -2 || v < 1 || v > SM_MAX_PORTS)
			return fail(r, r->line, -EINVAL, "peer port %llu out of range 1..%u",
				    rc == -2 ? 1000000ULL : (unsigned long long)v, SM_MAX_PORTS);
		if (*s++ != ']')
			return fail(r, r->line, -EINVAL, "expected ']' after the peer port number");
		p->peer_port = (uint8_t)v;
	} else if (r->mode == MODE_IBND) {
		return fail(r, r->line, -EINVAL, "expected '[port]' after the peer id");
	} else {
		p->peer_port = 1; /* ibsim's default */
	}
	if ((rc = skip_ext(r, &s)))
		return rc;
	s = skip_ws(s);
	if (*s == '(') {
		s++;
		if ((rc = get_guid(&s, &p->peer_guid)))
			return guid_fail(r, rc, "peer port GUID");
		if (*s++ != ')')
			return fail(r, r->line, -EINVAL, "expected ')' after the peer port GUID");
	}
	/* ibsim port options w=N s=N e=N, then the comment */
	for (;;) {
		s = skip_ws(s);
		if (!*s || *s == '#')
			break;
		char o = *s;
		if (r->mode == MODE_IBND || (o != 'w' && o != 's' && o != 'e') || s[1] != '=')
			return fail(r, r->line, -EINVAL, "unexpected text in port line: '%.40s'", s);
		s += 2;
		uint64_t max = o == 'w' ? 31 : o == 's' ? 7 : 15;
		if ((rc = get_uint(&s, true, max, &v)))
			return num_fail(r, rc, o == 'w' ? "w= width" : o == 's' ? "s= speed" : "e= speed", max);
		if (o == 'w') {
			if (!v)
				return fail(r, r->line, -EINVAL, "w=0 enables no width");
			p->wena = (uint8_t)v;
		} else if (o == 's') {
			p->sena = (uint8_t)(v ? v : 4); /* ibsim: 0 means QDR */
		} else {
			p->eena = (uint8_t)v;
		}
	}
	if (*s == '#') {
		/* ibsim reads neither LID nor rate from a router's port lines */
		if (!(r->mode == MODE_IBSIM && nd->type == SM_NODE_ROUTER) &&
		    (rc = port_comment(r, p, nd->type, s + 1)))
			return rc;
	} else if (r->mode == MODE_IBND) {
		return fail(r, r->line, -EINVAL,
			    "port line lacks its '# ... lid N WIDTHxSPEED' comment (truncated line?)");
	}
	if (r->mode == MODE_IBND && guid && nd->type != SM_NODE_SWITCH) {
		rc = sm_fabric_set_port_guid(r->fab, n, p->num, guid);
		if (rc == -EEXIST) {
			uint32_t o = r->fab->ports[sm_fabric_find_port(r->fab, guid)].node;
			return fail(r, r->line, -EEXIST, "duplicate port GUID 0x%016llx (node \"%s\" at line %u)",
				    (unsigned long long)guid, node_name(r, o), r->nodes[o].line);
		}
		if (rc)
			return fail(r, r->line, -EINVAL, "cannot set port GUID 0x%llx",
				    (unsigned long long)guid);
	}
	if ((rc = arena_add(r, peer, plen, &p->peer_name)))
		return fail(r, r->line, rc, "out of memory");
	r->portmap[pi] = r->n_ports;
	r->nodes[n].n_lines++;
	r->n_ports++;
	return 0;
}

/* ---- line dispatch ---- */

static int is_ports_report(const char *s)
{
	/* "CA     5  1 0x..." / "SW     1  3 0x..." (ibnetdiscover -p) */
	if ((strncmp(s, "CA ", 3) && strncmp(s, "SW ", 3) && strncmp(s, "RT ", 3)))
		return 0;
	s = skip_ws(s + 3);
	return isdigit((unsigned char)*s);
}

typedef unsigned char v16u8 __attribute__((vector_size(16)));

/*
 * Whether line holds a control byte other than tab, or DEL: 16 bytes at a
 * time (GCC vector extension: SSE2/NEON or plain code), as every byte of a
 * dump passes here; the caller finds which byte on the rare yes.
 */
static bool has_binary(const char *line, size_t len)
{
	v16u8 acc = { 0 };
	size_t i = 0;

	for (; i + 16 <= len; i += 16) {
		v16u8 v;
		memcpy(&v, line + i, 16);
		acc |= (v16u8)(((v < 0x20) & (v != 0x09)) | (v == 0x7f));
	}
	if (i < len) {
		v16u8 v;
		memset(&v, ' ', 16);  /* pad the tail with harmless blanks */
		memcpy(&v, line + i, len - i);
		acc |= (v16u8)(((v < 0x20) & (v != 0x09)) | (v == 0x7f));
	}
	uint64_t w[2];
	memcpy(w, &acc, 16);
	return (w[0] | w[1]) != 0;
}

static int parse_line(struct rd *r, char *line, size_t len)
{
	/* binary data: NUL or control bytes other than tab (and a final CR) */
	if (len && line[len - 1] == '\r')
		line[--len] = '\0';
	for (size_t i = has_binary(line, len) ? 0 : len; i < len; i++) {
		unsigned char c = (unsigned char)line[i];
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return fail(r, r->line, -EINVAL,
				    "binary data (byte 0x%02x at column %zu): not a text dump", c, i + 1);
	}
	const char *s = skip_ws(line);
	if (!*s) {
		r->cur = -1;
		return 0;
	}
	if (*s == '#')
		return 0;
	if (*s == '[') {
		if (r->cur < 0)
			return fail(r, r->line, -EINVAL, "port line outside a node block");
		return parse_port(r, s);
	}
	if (*s == '@')
		return fail(r, r->line, -EINVAL, "ibsim port aliases ('@') are not supported");
	r->cur = -1;
	if (is_ports_report(s))
		return fail(r, r->line, -EINVAL,
			    "this is an ibnetdiscover ports report (-p), not a topology dump");
	const char *kw = s;
	while (isalpha((unsigned char)*s) || *s == '_' || *s == '-')
		s++;
	size_t kwl = (size_t)(s - kw);
	if (!kwl)
		return fail(r, r->line, -EINVAL, "unexpected '%.20s'", kw);
#define KW(x) (kwl == sizeof(x) - 1 && !memcmp(kw, x, kwl))
	if (KW("Switch"))
		return parse_header(r, SM_NODE_SWITCH, s);
	if (KW("Ca") || KW("Hca"))
		return parse_header(r, SM_NODE_CA, s);
	if (KW("Rt"))
		return parse_header(r, SM_NODE_ROUTER, s);
	/* ibnetdiscover -g grouping lines carry nothing the model holds */
	if (KW("Chassis") || KW("Non-Chassis") || (KW("Hostname") && *s == ':'))
		return 0;
	if (KW("pdebug"))
		return 0; /* ibsim parser debugging */
	if (KW("include") || KW("do") || KW("module"))
		return fail(r, r->line, -ENOTSUP, "ibsim '%.*s' lines are not supported", (int)kwl, kw);
	if (*s == '=' || *s == '+')
		return parse_attr(r, kw, kwl, s);
#undef KW
	return fail(r, r->line, -EINVAL, "unknown keyword '%.*s'", (int)kwl, kw);
}

/* ---- links ---- */

static unsigned best_bit(unsigned mask, const unsigned *order, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (mask & order[i])
			return order[i];
	return 0;
}

static int make_links(struct rd *r)
{
	struct sm_fabric *f = r->fab;
	static const unsigned worder[] = { 8, 4, 2, 16, 1 };
	static const unsigned sorder[] = { 4, 2, 1 };
	static const unsigned eorder[] = { 8, 4, 2, 1 };
	int rc;

	for (uint32_t i = 0; i < r->n_ports; i++) {
		struct rd_port *p = &r->ports[i];
		const char *pn = r->arena + p->peer_name;
		uint32_t m = name_find(r, pn, strlen(pn));

		if (m == SM_NONE)
			return fail(r, p->line, -EINVAL, "peer \"%s\" is not a node of this file", pn);
		p->peer_node = m;
		if (p->peer_port > f->nodes[m].nports)
			return fail(r, p->line, -EINVAL, "peer port %u out of range 1..%u of \"%s\"",
				    p->peer_port, f->nodes[m].nports, pn);
	}
	for (uint32_t i = 0; i < r->n_ports; i++) {
		struct rd_port *p = &r->ports[i];
		const char *me = node_name(r, p->node), *pn = node_name(r, p->peer_node);
		uint32_t qi = r->portmap[sm_port_index(f, p->peer_node, p->peer_port)];

		if (p->peer_node == p->node && p->peer_port == p->num)
			return fail(r, p->line, -EINVAL, "port %u of \"%s\" is linked to itself", p->num, me);
		if (qi == SM_NONE)
			return fail(r, p->line, -EINVAL,
				    "link \"%s\"[%u] -> \"%s\"[%u] is not confirmed: \"%s\" (line %u) does not list port %u",
				    me, p->num, pn, p->peer_port, pn, r->nodes[p->peer_node].line, p->peer_port);
		struct rd_port *q = &r->ports[qi];
		if (q->peer_node != p->node || q->peer_port != p->num)
			return fail(r, p->line, -EINVAL,
				    "link \"%s\"[%u] -> \"%s\"[%u] contradicts line %u, which links it to \"%s\"[%u]",
				    me, p->num, pn, p->peer_port, q->line, node_name(r, q->peer_node), q->peer_port);
		if (qi < i)
			continue; /* the pair was done from the other end */
		if (r->mode == MODE_IBND) {
			/* the "(guid)" printed after a CA peer must be that port's GUID */
			const struct sm_port *pp = sm_port(f, q->node, q->num), *qp = sm_port(f, p->node, p->num);
			if (p->peer_guid && f->nodes[q->node].type != SM_NODE_SWITCH && pp->guid != p->peer_guid)
				return fail(r, p->line, -EINVAL,
					    "peer port GUID 0x%llx does not match \"%s\"[%u] (0x%llx, line %u)",
					    (unsigned long long)p->peer_guid, pn, q->num,
					    (unsigned long long)pp->guid, q->line);
			if (q->peer_guid && f->nodes[p->node].type != SM_NODE_SWITCH && qp->guid != q->peer_guid)
				return fail(r, q->line, -EINVAL,
					    "peer port GUID 0x%llx does not match \"%s\"[%u] (0x%llx, line %u)",
					    (unsigned long long)q->peer_guid, me, p->num,
					    (unsigned long long)qp->guid, p->line);
		}
		rc = sm_fabric_link(f, p->node, p->num, q->node, q->num);
		if (rc)
			return fail(r, p->line, rc, "cannot link \"%s\"[%u] to \"%s\"[%u]", me, p->num, pn, q->num);
		struct sm_port *a = sm_port(f, p->node, p->num), *b = sm_port(f, q->node, q->num);
		if (r->mode == MODE_IBND) {
			a->width = p->width, a->speed = p->speed, a->flags = p->flags;
			b->width = q->width, b->speed = q->speed, b->flags = q->flags;
		} else {
			unsigned w = best_bit(p->wena & q->wena, worder, 5);
			unsigned sp = best_bit(p->sena & q->sena, sorder, 3);
			unsigned e = best_bit(p->eena & q->eena, eorder, 4);
			if (!w || !sp)
				return fail(r, p->line, -EINVAL,
					    "\"%s\"[%u] and \"%s\"[%u] enable no common link %s",
					    me, p->num, pn, q->num, !w ? "width" : "speed");
			uint8_t fl = 0, speed = (uint8_t)sp;
			if (e)
				speed = (uint8_t)e, fl = SM_PORT_F_EXT_SPEED;
			else if ((p->mena & q->mena & 1) && sp == 4)
				fl = SM_PORT_F_FDR10;
			a->width = b->width = (uint8_t)w;
			a->speed = b->speed = speed;
			a->flags = b->flags = fl;
		}
		a->state = b->state = SM_PORT_ACTIVE;
		a->phys_state = b->phys_state = 5; /* LinkUp */
	}
	return 0;
}

static void rd_free(struct rd *r)
{
	free(r->spare_lid_map);
	sm_fabric_free(r->fab);
	free(r->buf);
	free(r->nodes);
	free(r->ports);
	free(r->portmap);
	free(r->arena);
	free(r->ht);
}

/*
 * Size the scratch arrays from the file size, so that they are not grown
 * (and copied, and their pages touched twice) dozens of times on a big
 * dump. Estimates err high (untouched capacity costs no memory) and are
 * capped; a failure here only means growing as needed.
 */
static void reserve(struct rd *r)
{
	struct stat st;

	if (fstat(fileno(r->in), &st) || !S_ISREG(st.st_mode) || st.st_size <= 0)
		return;
	uint64_t size = (uint64_t)st.st_size > (1u << 30) ? (1u << 30) : (uint64_t)st.st_size;
	uint32_t nodes = (uint32_t)(size / 128 + 16), ports = (uint32_t)(size / 32 + 64);
	uint32_t lines = (uint32_t)(size / 40 + 16);

	if (sm_fabric_reserve(r->fab, nodes, ports))
		return;
	if (grow((void **)&r->nodes, &r->cap_nodes, nodes, sizeof(*r->nodes)) ||
	    grow((void **)&r->portmap, &r->cap_portmap, ports, sizeof(*r->portmap)) ||
	    grow((void **)&r->ports, &r->cap_ports, lines, sizeof(*r->ports)))
		return;
	char *a = r->arena_cap ? NULL : malloc(size / 2 + 64);
	if (a) {
		r->arena = a;
		r->arena_cap = size / 2 + 64;
	}
}

/*
 * Empty r for another dump but keep its memory: a fresh scratch fabric and
 * arrays would fault their pages in again for every dump, which costs
 * more than parsing when several threads do it at once. The fabric is
 * reset field by field to what sm_fabric_new() gives, its arrays, GUID
 * maps (emptied) and one LID table kept.
 */
static void rd_recycle(struct rd *r)
{
	struct rd k = *r;
	struct sm_fabric *f = k.fab;

	memset(r, 0, sizeof(*r));
	if (!f)
		return;
	for (unsigned i = 0; i < SM_MAX_PLANES; i++) {
		if (f->planes[i].lid_map && !k.spare_lid_map)
			k.spare_lid_map = f->planes[i].lid_map;
		else
			free(f->planes[i].lid_map);
		memset(&f->planes[i], 0, sizeof(f->planes[i]));
		snprintf(f->planes[i].name, sizeof(f->planes[i].name), "plane%u", i);
		f->planes[i].sm_port = SM_NONE;
		f->planes[i].subnet_prefix = 0xfe80000000000000ULL;
	}
	struct sm_guid_map *maps[2] = { &f->node_by_guid, &f->port_by_guid };
	for (unsigned i = 0; i < 2; i++) {
		if (maps[i]->cap)
			memset(maps[i]->keys, 0, (size_t)maps[i]->cap * sizeof(*maps[i]->keys));
		maps[i]->count = 0;
	}
	f->n_nodes = 0;
	f->n_ports = 0;
	f->n_planes = 1;
	r->fab = f;
	r->buf = k.buf;
	r->nodes = k.nodes;
	r->cap_nodes = k.cap_nodes;
	r->ports = k.ports;
	r->cap_ports = k.cap_ports;
	r->portmap = k.portmap;
	r->cap_portmap = k.cap_portmap;
	r->arena = k.arena;
	r->arena_cap = k.arena_cap;
	r->ht = k.ht;
	r->ht_cap = k.ht_cap;
	if (r->ht_cap)
		memset(r->ht, 0xff, (size_t)r->ht_cap * sizeof(*r->ht));
	r->spare_lid_map = k.spare_lid_map;
}

/*
 * Read and check a whole dump into r's scratch fabric; no caller fabric is
 * touched, so several dumps can be parsed at once in different threads.
 */
static int rd_parse(struct rd *r, FILE *in, const char *name, enum sm_topo_format fmt,
		    unsigned plane, struct sm_topo_err *err)
{
	char *line = NULL;
	size_t len = 0;
	int rc;

	rd_recycle(r);  /* r: zeroed, or what an earlier parse left */
	r->name = name ? name : "<stream>";
	r->in = in;
	r->err = err;
	r->mode = fmt;
	r->plane = plane;
	r->cur = -1;
	r->guid_base[SM_NODE_CA] = r->abs_base[SM_NODE_CA] = 0x100000; /* ibsim's defaults */
	r->guid_base[SM_NODE_SWITCH] = r->abs_base[SM_NODE_SWITCH] = 0x200000;
	r->netwidth = 2;                          /* 4x */
	r->netspeed = 1;                          /* SDR */
	if (err) {
		err->msg[0] = '\0';
		err->line = 0;
	}
	if (fmt != SM_TOPO_AUTO && fmt != SM_TOPO_IBND && fmt != SM_TOPO_IBSIM)
		return fail(r, 0, -EINVAL, "unknown dump format %d", (int)fmt);
	if (plane >= SM_MAX_PLANES)
		return fail(r, 0, -EINVAL, "plane %u out of range 0..%d", plane, SM_MAX_PLANES - 1);
	if (!r->buf)
		r->buf = malloc(RD_BLOCK);
	if (!r->fab)
		r->fab = sm_fabric_new();
	if (!r->buf || !r->fab)
		return fail(r, 0, -ENOMEM, "out of memory");
	if (r->spare_lid_map) {
		/* what sm_fabric_set_lid() would allocate for the first LID */
		memset(r->spare_lid_map, 0xff, SM_LID_SPACE * sizeof(*r->spare_lid_map));
		r->fab->planes[plane].lid_map = r->spare_lid_map;
		r->spare_lid_map = NULL;
	}
	reserve(r);
	if (r->mode == MODE_AUTO && (rc = sniff(r)))
		return rc;
	while ((rc = next_line(r, &line, &len)) > 0) {
		if ((rc = parse_line(r, line, len)))
			return rc;
	}
	if (rc < 0)
		return rc;
	if (r->line == 0)
		return fail(r, 1, -ENODATA, "empty file");
	if (r->mode == MODE_IBND && r->pend)
		return fail(r, r->pend_line, -EINVAL,
			    "truncated block: no node header follows (end of file at line %u)", r->line);
	if (r->mode == MODE_IBND && r->unterminated)
		return fail(r, r->line, -EINVAL, "last line has no newline (truncated file?)");
	if (!r->fab->n_nodes)
		return fail(r, r->line, -ENODATA, "no nodes in file");
	if (!r->fab->planes[plane].max_lid && r->fab->planes[plane].lid_map) {
		/* no LID in the dump: leave the plane without a table, as a fresh fabric would */
		r->spare_lid_map = r->fab->planes[plane].lid_map;
		r->fab->planes[plane].lid_map = NULL;
	}
	return make_links(r);
}

/* Append r's scratch fabric to f, all or nothing. */
static int rd_commit(struct rd *r, struct sm_fabric *f, struct sm_topo_err *err)
{
	uint32_t conflict = 0;
	int rc;

	r->err = err;
	if (err) {
		err->msg[0] = '\0';
		err->line = 0;
	}
	rc = sm_fabric_append(f, r->fab, &conflict);
	if (rc == -EEXIST)
		rc = fail(r, r->nodes[conflict].line, rc,
			  "GUID of \"%s\" (0x%016llx or one of its ports) is already in the fabric",
			  node_name(r, conflict), (unsigned long long)r->fab->nodes[conflict].guid);
	else if (rc == -EADDRINUSE)
		rc = fail(r, r->nodes[conflict].line, rc,
			  "a LID of \"%s\" is already used in plane %u of the fabric",
			  node_name(r, conflict), r->plane);
	else if (rc)
		rc = fail(r, 0, rc, "cannot add to the fabric: %s", strerror(-rc));
	return rc;
}

int sm_topo_load_stream(struct sm_fabric *f, FILE *in, const char *name,
			enum sm_topo_format fmt, unsigned plane, struct sm_topo_err *err)
{
	struct rd r;
	int rc;

	memset(&r, 0, sizeof(r));
	rc = rd_parse(&r, in, name, fmt, plane, err);

	if (!rc)
		rc = rd_commit(&r, f, err);
	rd_free(&r);
	return rc;
}

struct sm_topo_parsed {
	struct rd r;
	char *name;
};

int sm_topo_parse(const char *path, enum sm_topo_format fmt, unsigned plane,
		  struct sm_topo_parsed **out, struct sm_topo_err *err)
{
	struct sm_topo_parsed *p = *out;
	FILE *in;
	int rc;

	*out = NULL;
	in = fopen(path, "r");
	if (!in) {
		rc = -errno;
		if (err) {
			err->line = 0;
			snprintf(err->msg, sizeof(err->msg), "%s:0: cannot open: %s", path, strerror(-rc));
		}
		sm_topo_parsed_free(p);
		return rc;
	}
	if (!p)
		p = calloc(1, sizeof(*p));
	if (p) {
		free(p->name);
		p->name = strdup(path);
	}
	if (!p || !p->name) {
		fclose(in);
		sm_topo_parsed_free(p);
		if (err) {
			err->line = 0;
			snprintf(err->msg, sizeof(err->msg), "%s:0: out of memory", path);
		}
		return -ENOMEM;
	}
	rc = rd_parse(&p->r, in, p->name, fmt, plane, err);
	fclose(in);
	p->r.in = NULL;
	if (rc) {
		sm_topo_parsed_free(p);
		return rc;
	}
	*out = p;
	return 0;
}

int sm_topo_commit(struct sm_fabric *f, struct sm_topo_parsed *p, struct sm_topo_err *err)
{
	return rd_commit(&p->r, f, err);
}

void sm_topo_parsed_free(struct sm_topo_parsed *p)
{
	if (!p)
		return;
	rd_free(&p->r);
	free(p->name);
	free(p);
}

int sm_topo_load(struct sm_fabric *f, const char *path, enum sm_topo_format fmt,
		 unsigned plane, struct sm_topo_err *err)
{
	struct sm_topo_parsed *p = NULL;
	int rc = sm_topo_parse(path, fmt, plane, &p, err);

	if (!rc)
		rc = sm_topo_commit(f, p, err);
	sm_topo_parsed_free(p);
	return rc;
}
