/* SPDX-License-Identifier: MIT */
#ifndef SMD_TOPO_READ_PRIV_H
#define SMD_TOPO_READ_PRIV_H
/*
 * DOC: topology dump readers, private
 *
 * The reader state shared by the files of the dump reader (struct rd: one
 * parse of one dump), the lexing helpers every line goes through (inline:
 * they run for every byte of a dump) and the calls between the files:
 *   topo_read_lex.c    the block line reader, format sniffing, error
 *                      messages, growable arrays, the node id arena and
 *                      hash, rate names;
 *   topo_read_parse.c  the grammar: attribute lines, node headers, port
 *                      lines, the dispatch of one line;
 *   topo_read.c        the driver: parse a dump (sizing, recycling the
 *                      memory of an earlier parse), make the links at EOF,
 *                      commit into the caller's fabric; the public sm_topo_*
 *                      entry points.
 * Nothing here is for use outside smd/model/topo_read*.c.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "model/topo.h"

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

/* ---- small lexing helpers ---- */

static inline const char *skip_ws(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* Value of a hex digit, or -1. */
static inline int hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;  /* ASCII lower case; maps no non-letter into a..f */
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* 0 ok, -1 no digits, -2 too large. Decimal, or hex with 0x when base0. */
static inline int get_uint(const char **sp, bool base0, uint64_t max, uint64_t *v)
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
static inline int get_guid(const char **sp, uint64_t *v)
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

/* Quoted string at *sp ('"' expected): returns start, sets len, moves past. */
static inline const char *get_quoted(const char **sp, size_t *len)
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

static inline const char *node_name(const struct rd *r, uint32_t n)
{
	return r->arena + r->nodes[n].name;
}

/* topo_read_lex.c */
int rd_fail(struct rd *r, unsigned line, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
int rd_num_fail(struct rd *r, int how, const char *what, uint64_t max);
int rd_guid_fail(struct rd *r, int how, const char *what);
int rd_next_line(struct rd *r, char **out, size_t *len);
int rd_sniff(struct rd *r);
int rd_grow(void **p, uint32_t *cap, uint32_t need, size_t elem);
int rd_arena_add(struct rd *r, const char *s, size_t len, uint32_t *off);
uint32_t rd_name_find(const struct rd *r, const char *s, size_t len);
int rd_name_insert(struct rd *r, uint32_t node);

/* topo_read_parse.c: one line of a dump (NUL-terminated, len bytes, no '\n'). */
int rd_parse_line(struct rd *r, char *line, size_t len);

#endif
