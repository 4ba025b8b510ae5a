/* SPDX-License-Identifier: MIT */
/*
 * DOC: LFT file writer and reader (format in lftfile.h)
 *
 * The writer is on the dry-run's critical path (an 8-plane 16k-host fabric
 * is about 1.7 M entry lines), so it precomputes the destination text of
 * every LID of the plane once, then formats each line by copying bytes into
 * a 64 KiB buffer instead of calling printf per line. A switch whose
 * printed lines are the plane's template's gets only its port digits
 * patched in (4 bytes a line, from a table): the writer's own share of the
 * file is then small beside the kernel's copy into the page cache.
 */
#include "model/lft_file.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

/* ---------------------------------------------------------------- writer */

#define LFTC_BLOCK 64   /* LIDs per LinearForwardingTable block (the compact form's lines) */

/*
 * Output buffer: to a stream (64 KiB, flushed when full), or, with out
 * NULL, growing in memory (the per-plane template below). A stream with a
 * file descriptor (fd >= 0, the stream flushed first) is written with
 * writev, the buffer and a large block in one call (a switch's header and
 * its entry lines: one system call per switch instead of two); streams
 * without one (memory streams) through stdio.
 */
struct obuf {
	FILE *out;
	int fd;
	size_t len, cap;
	int err;
	char *buf;
};

/* The buffer, then s[0..n), to b->fd. */
static void ob_writev(struct obuf *b, const char *s, size_t n)
{
	struct iovec iov[2] = { { b->buf, b->len }, { (void *)s, n } };
	unsigned k = b->len ? 0 : 1;

	while (!b->err && k < 2) {
		ssize_t w = writev(b->fd, iov + k, (int)(2 - k));
		if (w < 0) {
			if (errno != EINTR)
				b->err = -EIO;
			continue;
		}
		size_t left = (size_t)w;
		while (k < 2 && left >= iov[k].iov_len)
			left -= iov[k++].iov_len;
		if (k < 2) {   /* a short write: the rest of this piece */
			iov[k].iov_base = (char *)iov[k].iov_base + left;
			iov[k].iov_len -= left;
		}
	}
}

static void ob_flush(struct obuf *b)
{
	if (b->out && b->len && !b->err) {
		if (b->fd >= 0)
			ob_writev(b, NULL, 0);
		else if (fwrite(b->buf, 1, b->len, b->out) != b->len)
			b->err = -EIO;
	}
	if (b->out)
		b->len = 0;
}

/* Start writing to out: through its descriptor if it has one. */
static int ob_open(struct obuf *b, FILE *out)
{
	b->out = out;
	b->fd = fileno(out);
	if (b->fd >= 0 && fflush(out))
		return -EIO;
	return 0;
}

static void ob_put(struct obuf *b, const char *s, size_t n)
{
	if (!n)
		return;   /* an empty template has no buffer at all */
	if (n > b->cap - b->len) {
		if (!b->out) {
			size_t nc = b->cap ? b->cap : 65536;
			while (nc - b->len < n)
				nc *= 2;
			char *nb = realloc(b->buf, nc);
			if (!nb) {
				b->err = -ENOMEM;
				return;
			}
			b->buf = nb;
			b->cap = nc;
		} else {
			if (n > b->cap && b->fd >= 0) {
				ob_writev(b, s, n);
				b->len = 0;
				return;
			}
			ob_flush(b);
			if (n > b->cap) {
				if (!b->err && fwrite(s, 1, n, b->out) != n)
					b->err = -EIO;
				return;
			}
		}
	}
	memcpy(b->buf + b->len, s, n);
	b->len += n;
}

static void ob_printf(struct obuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void ob_printf(struct obuf *b, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	ob_put(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

static const char *type_str(unsigned type)
{
	switch (type) {
	case SM_NODE_CA: return "Channel Adapter";
	case SM_NODE_SWITCH: return "Switch";
	case SM_NODE_ROUTER: return "Router";
	default: return NULL;
	}
}

/* "0x%04x %03u " for lid <= 0xffff, port <= 255: 11 bytes */
static void fmt_lid_port(char *p, unsigned lid, unsigned port)
{
	static const char hex[] = "0123456789abcdef";

	p[0] = '0';
	p[1] = 'x';
	p[2] = hex[(lid >> 12) & 15];
	p[3] = hex[(lid >> 8) & 15];
	p[4] = hex[(lid >> 4) & 15];
	p[5] = hex[lid & 15];
	p[6] = ' ';
	p[7] = (char)('0' + port / 100);
	p[8] = (char)('0' + port / 10 % 10);
	p[9] = (char)('0' + port % 10);
	p[10] = ' ';
}

/* x as 16 lower-case hex digits (%016x) at p; p + 16. */
static char *put_hex16(char *p, uint64_t x)
{
	static const char hex[] = "0123456789abcdef";

	for (int i = 15; i >= 0; i--, x >>= 4)
		p[i] = hex[x & 15];
	return p + 16;
}

/* s (NUL-terminated) at p; past it. */
static char *put_s(char *p, const char *s)
{
	size_t n = strlen(s);

	memcpy(p, s, n);
	return p + n;
}

struct lid_info {
	uint32_t off;      /* into text */
	uint16_t len;
	uint32_t port;     /* fabric port index or SM_NONE */
};

/* What every switch of a plane shares: the destination text of each LID. */
struct plane_text {
	const struct sm_fabric *f;
	struct lid_info *info;
	char *text;
	uint32_t top;
};

/*
 * The entry lines of one switch (row, nports). With digits non-NULL (the
 * template), the offset in b of each line's port digits is stored in
 * digits[lid] (lines not printed: UINT32_MAX). The number of lines.
 */
static unsigned emit_body(struct obuf *b, const struct plane_text *pt, const uint8_t *row, unsigned nports,
			  uint32_t *digits)
{
	static const char unknown[] = ": (node info not available fabric scan)";
	unsigned last_port_lid = 0, base_port_lid = 0, count = 0;
	uint64_t path_guid = 0;

	for (uint32_t lid = 0; lid <= pt->top; lid++) {
		unsigned port = row[lid];
		char line[160];

		if (digits)
			digits[lid] = UINT32_MAX;
		if (port > nports)
			continue;
		if (digits)
			digits[lid] = (uint32_t)b->len + 7;
		fmt_lid_port(line, lid, port);
		count++;
		if (lid <= last_port_lid) {
			/* dump_fts: later LIDs of an LMC range name the range */
			int n = snprintf(line + 11, sizeof(line) - 11, ": (path #%u out of %u: portguid 0x%016" PRIx64 ")\n",
					 lid - base_port_lid + 1, last_port_lid - base_port_lid + 1, path_guid);
			ob_put(b, line, 11 + (size_t)(n > 0 ? n : 0));
			continue;
		}
		ob_put(b, line, 11);
		if (lid == 0 || pt->info[lid].port == SM_NONE) {
			ob_put(b, unknown, sizeof(unknown) - 1);
		} else {
			const struct sm_port *p = &pt->f->ports[pt->info[lid].port];
			ob_put(b, pt->text + pt->info[lid].off, pt->info[lid].len);
			if (p->lmc > 0) {
				base_port_lid = p->lid;
				last_port_lid = p->lid + (1u << p->lmc) - 1;
				path_guid = p->guid;
			}
		}
		ob_put(b, "\n", 1);
	}
	return count;
}

/* The destination text of each LID of the plane, shared by every switch. */
static int plane_text_make(struct plane_text *pt, const struct sm_fabric *f, unsigned plane, uint32_t top)
{
	size_t text_len = 0, text_cap = 0;

	pt->f = f;
	pt->top = top;
	pt->text = NULL;
	pt->info = calloc((size_t)top + 1, sizeof(*pt->info));
	if (!pt->info)
		return -ENOMEM;
	for (uint32_t lid = 1; lid <= top; lid++) {
		uint32_t pi = sm_fabric_find_lid(f, plane, (uint16_t)lid);
		char tmp[SM_DESC_MAX + 128];
		int n;

		pt->info[lid].port = pi;
		if (pi == SM_NONE)
			continue;
		const struct sm_port *p = &f->ports[pi];
		const struct sm_node *nd = &f->nodes[p->node];
		const char *ts = type_str(nd->type);
		char tbuf[16];
		if (!ts) {
			snprintf(tbuf, sizeof(tbuf), "?(%d)?", nd->type);
			ts = tbuf;
		}
		/* ": (%s portguid 0x%016" PRIx64 ": '%s')" by hand: a plane is 2k of them */
		char *e = put_s(tmp, ": (");
		e = put_s(e, ts);
		e = put_s(e, " portguid 0x");
		e = put_hex16(e, p->guid);
		e = put_s(e, ": '");
		e = put_s(e, nd->desc);   /* at most SM_DESC_MAX: tmp has room */
		e = put_s(e, "')");
		n = (int)(e - tmp);
		if (text_len + (size_t)n > text_cap) {
			size_t nc = text_cap ? text_cap * 2 : 65536;
			while (nc < text_len + (size_t)n)
				nc *= 2;
			char *nt = realloc(pt->text, nc);
			if (!nt)
				return -ENOMEM;
			pt->text = nt;
			text_cap = nc;
		}
		memcpy(pt->text + text_len, tmp, (size_t)n);
		pt->info[lid].off = (uint32_t)text_len;
		pt->info[lid].len = (uint16_t)n;
		text_len += (size_t)n;
	}
	return 0;
}

/*
 * The per-plane template: the entry lines of a switch whose entries are
 * valid (port <= its port count) exactly where the first switch's are, so
 * that any such switch's lines are the template with its port digits put
 * in. dump_fts' LMC rule depends only on which lines are printed, so the
 * "path #k" lines are the same too. Other switches take the slow path.
 */
struct tmpl {
	struct obuf b;               /* in memory */
	uint32_t *digits;            /* [top+1] */
	uint8_t *valid;              /* [top+1] */
	unsigned count;
	uint32_t *line_lid;          /* [count]: the LID of each printed line */
	uint32_t *line_at;           /* [count]: its port digits' offset in b */
	char port_text[256][4];      /* "%03u " of each port number */
};

static int tmpl_make(struct tmpl *t, const struct plane_text *pt, const uint8_t *row, unsigned nports)
{
	memset(&t->b, 0, sizeof(t->b));
	t->digits = malloc(((size_t)pt->top + 1) * sizeof(*t->digits));
	t->valid = malloc((size_t)pt->top + 1);
	if (!t->digits || !t->valid)
		return -ENOMEM;
	for (uint32_t lid = 0; lid <= pt->top; lid++)
		t->valid[lid] = row[lid] <= nports;
	t->count = emit_body(&t->b, pt, row, nports, t->digits);
	if (t->b.err)
		return t->b.err;
	t->line_lid = malloc(((size_t)t->count + 1) * sizeof(*t->line_lid));
	t->line_at = malloc(((size_t)t->count + 1) * sizeof(*t->line_at));
	if (!t->line_lid || !t->line_at)
		return -ENOMEM;
	unsigned k = 0;
	for (uint32_t lid = 0; lid <= pt->top; lid++)
		if (t->digits[lid] != UINT32_MAX) {
			t->line_lid[k] = lid;
			t->line_at[k++] = t->digits[lid];
		}
	/* the digits are followed by a blank (fmt_lid_port): 4 bytes at once */
	for (unsigned p = 0; p < 256; p++) {
		t->port_text[p][0] = (char)('0' + p / 100);
		t->port_text[p][1] = (char)('0' + p / 10 % 10);
		t->port_text[p][2] = (char)('0' + p % 10);
		t->port_text[p][3] = ' ';
	}
	return 0;
}

/* Does this switch print the template's lines? */
static bool tmpl_fits(const struct tmpl *t, const uint8_t *row, unsigned nports, uint32_t top)
{
	unsigned differ = 0;   /* no early exit: the loop vectorizes, and most switches fit */

	for (uint32_t lid = 0; lid <= top; lid++)
		differ |= (unsigned)(row[lid] <= nports) ^ t->valid[lid];
	return !differ;
}

static void tmpl_fill(struct tmpl *t, const uint8_t *row)
{
	for (unsigned k = 0; k < t->count; k++)
		memcpy(t->b.buf + t->line_at[k], t->port_text[row[t->line_lid[k]]], 4);
}

/* The line before a switch's entries and the column heads; its length. */
static size_t switch_head(char *buf, const struct plane_text *pt, unsigned lid, const struct sm_node *sw)
{
	static const char cols[] = "  Lid  Out   Destination\n       Port     Info \n";
	char *e = put_s(buf, "Unicast lids [0x0-0x");

	/* "Unicast lids [0x0-0x%x] of switch Lid %u guid 0x%016" PRIx64 " (%s):\n" by hand */
	char hex[16];
	put_hex16(hex, pt->top);
	unsigned skip = 0;
	while (skip < 15 && hex[skip] == '0')
		skip++;
	memcpy(e, hex + skip, 16 - skip);
	e += 16 - skip;
	e = put_s(e, "] of switch Lid ");
	e = sm_lft_put_u(e, lid);
	e = put_s(e, " guid 0x");
	e = put_hex16(e, sw->guid);
	e = put_s(e, " (");
	e = put_s(e, sw->desc);
	e = put_s(e, "):\n");
	memcpy(e, cols, sizeof(cols) - 1);
	return (size_t)(e - buf) + sizeof(cols) - 1;
}

int sm_lftfile_write(FILE *out, const struct sm_fabric *f, const struct sm_lfts *l,
		     const char *comment)
{
	unsigned plane = l->plane;
	struct plane_text pt = { 0 };
	struct tmpl t = { 0 };
	struct obuf *b = NULL;
	bool have_tmpl = false;
	int rc = 0;

	if (plane >= SM_MAX_PLANES)
		return -EINVAL;
	b = calloc(1, sizeof(*b));
	if (!b || !(b->buf = malloc(65536))) {
		rc = -ENOMEM;
		goto out;
	}
	b->cap = 65536;
	if ((rc = ob_open(b, out)))
		goto out;
	rc = plane_text_make(&pt, f, plane, l->top_lid);
	if (rc)
		goto out;

	if (comment)
		ob_printf(b, "# %s\n", comment);
	for (uint32_t s = 0; s < l->n_switches && !b->err; s++) {
		uint32_t node = l->sw_node[s];
		const struct sm_node *sw = &f->nodes[node];
		const uint8_t *row = sm_lfts_row(l, s);
		unsigned count;

		char head[SM_DESC_MAX + 192];
		ob_put(b, head, switch_head(head, &pt, sm_port(f, node, 0)->lid, sw));
		if (!have_tmpl) {
			rc = tmpl_make(&t, &pt, row, sw->nports);
			if (rc)
				goto out;
			have_tmpl = true;
		}
		if (tmpl_fits(&t, row, sw->nports, pt.top)) {
			tmpl_fill(&t, row);
			ob_put(b, t.b.buf, t.b.len);
			count = t.count;
		} else {
			count = emit_body(b, &pt, row, sw->nports, NULL);
		}
		char tail[32];
		char *e = sm_lft_put_u(tail, count);
		e = put_s(e, " valid lids dumped \n");
		ob_put(b, tail, (size_t)(e - tail));
	}
	ob_flush(b);
	rc = b->err;
	if (!rc && (fflush(out) || ferror(out)))
		rc = -EIO;
out:
	free(pt.info);
	free(pt.text);
	free(t.b.buf);
	free(t.digits);
	free(t.valid);
	free(t.line_lid);
	free(t.line_at);
	if (b)
		free(b->buf);
	free(b);
	return rc;
}

/* ---------------------------------------------------------------- reader */

__attribute__((format(printf, 5, 6)))
static int rfail(char *err, size_t errlen, const char *name, unsigned line, const char *fmt, ...)
{
	char msg[300];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (err && errlen)
		snprintf(err, errlen, "%s:%u: %s", name, line, msg);
	return -EINVAL;
}

const struct sm_lftfile_sw *sm_lftfile_find(const struct sm_lftfile *lf, uint64_t guid)
{
	uint32_t i = sm_guid_map_get(&lf->idx, guid);

	return i == SM_NONE ? NULL : &lf->sw[i];
}

void sm_lftfile_free(struct sm_lftfile *lf)
{
	if (!lf)
		return;
	for (uint32_t i = 0; i < lf->n_sw; i++)
		free(lf->sw[i].ports);
	free(lf->sw);
	sm_guid_map_free(&lf->idx);
	free(lf);
}

static int parse_hex(const char **pp, uint64_t max, uint64_t *out)
{
	const char *p = *pp;
	uint64_t v = 0;
	int digits = 0;

	if (p[0] != '0' || (p[1] != 'x' && p[1] != 'X'))
		return -EINVAL;
	p += 2;
	while (isxdigit((unsigned char)*p)) {
		unsigned d = isdigit((unsigned char)*p) ? (unsigned)(*p - '0') :
			     (unsigned)(tolower((unsigned char)*p) - 'a' + 10);
		if (++digits > 16 || v > (max - d) / 16)
			return -ERANGE;
		v = v * 16 + d;
		p++;
	}
	if (!digits)
		return -EINVAL;
	*pp = p;
	*out = v;
	return 0;
}

/* "Unicast lids [0xA-0xB] of switch PORTID guid 0xG (DESC):" */
static int parse_header(const char *line, struct sm_lftfile_sw *sw, const char **why)
{
	const char *p = line + strlen("Unicast lids");
	uint64_t v;
	const char *g, *d, *e;

	while (*p == ' ')
		p++;
	if (*p++ != '[' || parse_hex(&p, SM_UNICAST_LID_MAX, &v)) {
		*why = "cannot parse the LID range";
		return -EINVAL;
	}
	sw->first = (uint16_t)v;
	if (*p++ != '-' || parse_hex(&p, SM_UNICAST_LID_MAX, &v) || *p != ']') {
		*why = "cannot parse the LID range";
		return -EINVAL;
	}
	sw->top = (uint16_t)v;
	if (sw->first > sw->top) {
		*why = "empty LID range";
		return -EINVAL;
	}
	g = strstr(p, " guid 0x");
	if (!g) {
		*why = "no switch guid";
		return -EINVAL;
	}
	const char *lidp = strstr(p, " of switch Lid ");
	sw->lid = 0;
	if (lidp && lidp < g) {
		char *end;
		unsigned long lid = strtoul(lidp + 15, &end, 10);
		if (end == lidp + 15 || lid > SM_UNICAST_LID_MAX) {
			*why = "bad switch LID";
			return -EINVAL;
		}
		sw->lid = (uint16_t)lid;
	}
	g += 6;
	if (parse_hex(&g, UINT64_MAX, &sw->guid) || !sw->guid) {
		*why = "cannot parse the switch guid";
		return -EINVAL;
	}
	sw->desc[0] = '\0';
	d = g;
	if (d[0] == ' ' && d[1] == '(') {
		d += 2;
		e = strrchr(d, ')');
		if (e && e[1] == ':') {
			size_t n = (size_t)(e - d);
			if (n > SM_DESC_MAX)
				n = SM_DESC_MAX;
			memcpy(sw->desc, d, n);
			sw->desc[n] = '\0';
		}
	}
	return 0;
}

static int starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* Append a parsed switch header (ports allocated here, all SM_LFT_NONE). */
static int add_sw(struct sm_lftfile *lf, struct sm_lftfile_sw *sw, unsigned lineno, const char *name, char *err,
		  size_t errlen)
{
	const struct sm_lftfile_sw *dup = sm_lftfile_find(lf, sw->guid);

	if (dup)
		return rfail(err, errlen, name, lineno, "switch 0x%016" PRIx64 " listed twice (first at line %u)",
			     sw->guid, dup->line);
	sw->line = lineno;
	sw->ports = malloc((size_t)sw->top + 1);
	if (!sw->ports)
		return -ENOMEM;
	memset(sw->ports, SM_LFT_NONE, (size_t)sw->top + 1);
	if (lf->n_sw == lf->cap_sw) {
		uint32_t nc = lf->cap_sw ? lf->cap_sw * 2 : 64;
		struct sm_lftfile_sw *ns = realloc(lf->sw, (size_t)nc * sizeof(*ns));
		if (!ns) {
			free(sw->ports);
			return -ENOMEM;
		}
		lf->sw = ns;
		lf->cap_sw = nc;
	}
	lf->sw[lf->n_sw++] = *sw;
	/* GUID 0 is not indexed (sm_lftfile_find() finds no switch 0) */
	return sw->guid ? sm_guid_map_put(&lf->idx, sw->guid, lf->n_sw - 1) : 0;
}

/* A compact switch's entries, when its last block is read. */
static void count_entries(struct sm_lftfile_sw *sw)
{
	sw->n_entries = 0;
	for (uint32_t lid = 0; lid <= sw->top; lid++)
		sw->n_entries += sw->ports[lid] != SM_LFT_NONE;
}

static int hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* "switch 0xGUID lid N top 0xTOP desc DESC" (compact format) */
static int parse_compact_header(const char *p, struct sm_lftfile_sw *sw, const char **why)
{
	uint64_t v;
	char *end;
	unsigned long lid;

	p += strlen("switch ");
	if (parse_hex(&p, UINT64_MAX, &sw->guid) || !sw->guid || strncmp(p, " lid ", 5)) {
		*why = "cannot parse the switch guid";
		return -EINVAL;
	}
	p += 5;
	lid = strtoul(p, &end, 10);
	if (end == p || !isdigit((unsigned char)*p) || lid > SM_UNICAST_LID_MAX || strncmp(end, " top ", 5)) {
		*why = "bad switch LID";
		return -EINVAL;
	}
	sw->lid = (uint16_t)lid;
	p = end + 5;
	if (parse_hex(&p, SM_UNICAST_LID_MAX, &v) || (*p && strncmp(p, " desc ", 6) && strcmp(p, " desc"))) {
		*why = "bad top LID";
		return -EINVAL;
	}
	sw->first = 0;
	sw->top = (uint16_t)v;
	sw->desc[0] = '\0';
	if (*p && p[5] == ' ')
		snprintf(sw->desc, sizeof(sw->desc), "%s", p + 6);
	return 0;
}

/*
 * "BLOCK HEX..." (compact format): 2 hex digits per LID from BLOCK*64, ff =
 * none. seen: the blocks of this switch listed so far (version 2, where a
 * block replaces the previous switch's); NULL in version 1, where a table
 * starts empty.
 */
static int parse_compact_block(const char *p, struct sm_lftfile_sw *cur, uint8_t *seen, const char **why)
{
	char *end;
	unsigned long blk = strtoul(p, &end, 10);
	uint32_t lid, n = 0;

	if (end == p || *end != ' ' || blk > SM_UNICAST_LID_MAX / LFTC_BLOCK) {
		*why = "cannot parse the block number";
		return -EINVAL;
	}
	lid = (uint32_t)blk * LFTC_BLOCK;
	if (lid > cur->top) {
		*why = "block above the switch's top LID";
		return -EINVAL;
	}
	if (seen && seen[blk]) {
		*why = "block listed twice";
		return -EINVAL;
	}
	if (seen)
		seen[blk] = 1;
	for (p = end + 1; p[0] && n < LFTC_BLOCK; p += 2, n++, lid++) {
		int hi = hexval(p[0]), lo = p[1] ? hexval(p[1]) : -1;
		if (hi < 0 || lo < 0) {
			*why = "entries are not pairs of hex digits";
			return -EINVAL;
		}
		if (lid > cur->top) {
			*why = "entries beyond the switch's top LID";
			return -EINVAL;
		}
		if (!seen && cur->ports[lid] != SM_LFT_NONE) {
			*why = "block listed twice";
			return -EINVAL;
		}
		cur->ports[lid] = (uint8_t)(hi * 16 + lo);
	}
	if (*p || !n) {
		*why = n ? "more than 64 entries in a block" : "a block without entries";
		return -EINVAL;
	}
	return 0;
}

int sm_lftfile_read(FILE *in, const char *name, struct sm_lftfile **out, char *err, size_t errlen)
{
	struct sm_lftfile *lf = calloc(1, sizeof(*lf));
	struct sm_lftfile_sw *cur = NULL;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	unsigned lineno = 0;
	int in_mcast = 0, compact = 0;   /* compact: the compact form's version */
	uint8_t seen[SM_UNICAST_LID_MAX / LFTC_BLOCK + 1];
	int rc = 0;

	if (!lf)
		return -ENOMEM;
	while ((len = getline(&line, &cap, in)) >= 0) {
		const char *p = line;
		lineno++;
		if (memchr(line, '\0', (size_t)len)) {
			rc = rfail(err, errlen, name, lineno, "NUL byte in line");
			goto out;
		}
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			continue;
		if (lineno == 1 && starts(p, SM_LFTFILE_COMPACT_MAGIC)) {
			if (!strcmp(p, SM_LFTFILE_COMPACT_MAGIC " 1"))
				compact = 1;
			else if (!strcmp(p, SM_LFTFILE_COMPACT_MAGIC " 2"))
				compact = 2;
			else {
				rc = rfail(err, errlen, name, lineno, "compact LFT format version not supported (want 1 or 2)");
				goto out;
			}
			continue;
		}
		if (*p == '#') {
			lf->n_comments++;
			continue;
		}
		if (compact) {
			struct sm_lftfile_sw sw;
			const char *why = "";

			if (starts(p, "switch ")) {
				memset(&sw, 0, sizeof(sw));
				if (parse_compact_header(p, &sw, &why)) {
					rc = rfail(err, errlen, name, lineno, "bad switch line: %s", why);
					goto out;
				}
				if (cur)
					count_entries(cur);
				rc = add_sw(lf, &sw, lineno, name, err, errlen);
				if (rc)
					goto out;
				cur = &lf->sw[lf->n_sw - 1];
				if (compact == 2 && lf->n_sw > 1) {   /* the delta base: the switch before */
					const struct sm_lftfile_sw *prev = cur - 1;
					memcpy(cur->ports, prev->ports, (size_t)(prev->top < cur->top ? prev->top : cur->top) + 1);
				}
				memset(seen, 0, sizeof(seen));
			} else if (!isdigit((unsigned char)*p)) {
				rc = rfail(err, errlen, name, lineno, "unexpected line (not the compact LFT format)");
				goto out;
			} else if (!cur) {
				rc = rfail(err, errlen, name, lineno, "LFT block before any 'switch' line");
				goto out;
			} else if (parse_compact_block(p, cur, compact == 2 ? seen : NULL, &why)) {
				rc = rfail(err, errlen, name, lineno, "bad block: %s", why);
				goto out;
			}
			continue;
		}
		if (starts(p, "Unicast lids")) {
			struct sm_lftfile_sw sw;
			const char *why = "";

			memset(&sw, 0, sizeof(sw));
			in_mcast = 0;
			if (parse_header(p, &sw, &why)) {
				rc = rfail(err, errlen, name, lineno, "bad switch header: %s", why);
				goto out;
			}
			rc = add_sw(lf, &sw, lineno, name, err, errlen);
			if (rc)
				goto out;
			cur = &lf->sw[lf->n_sw - 1];
			continue;
		}
		if (starts(p, "Multicast mlids")) {
			in_mcast = 1;
			cur = NULL;
			continue;
		}
		if (in_mcast)
			continue;
		if (starts(p, "0x")) {
			uint64_t lid;
			char *end;
			unsigned long port;

			if (!cur) {
				rc = rfail(err, errlen, name, lineno,
					   "LFT entry before any 'Unicast lids' switch header");
				goto out;
			}
			if (parse_hex(&p, 0xffff, &lid) || (*p != ' ' && *p != '\t')) {
				rc = rfail(err, errlen, name, lineno, "cannot parse the LID");
				goto out;
			}
			while (*p == ' ' || *p == '\t')
				p++;
			port = strtoul(p, &end, 10);
			if (end == p || !isdigit((unsigned char)*p) || (*end && *end != ' ' && *end != '\t') ||
			    port > 255) {
				rc = rfail(err, errlen, name, lineno, "cannot parse the port number");
				goto out;
			}
			if (lid < cur->first || lid > cur->top) {
				rc = rfail(err, errlen, name, lineno,
					   "LID 0x%04" PRIx64 " outside the switch's range [0x%x-0x%x]",
					   lid, cur->first, cur->top);
				goto out;
			}
			if (cur->ports[lid] != SM_LFT_NONE) {
				rc = rfail(err, errlen, name, lineno, "LID 0x%04" PRIx64 " listed twice",
					   lid);
				goto out;
			}
			cur->ports[lid] = (uint8_t)port;
			cur->n_entries++;
			continue;
		}
		/* the column headings, the footer and dump_lfts' trailing warning */
		if (starts(p, "Lid  Out") || starts(p, "Port     Info") || starts(p, "*** WARNING") ||
		    strstr(p, "lids dumped"))
			continue;
		rc = rfail(err, errlen, name, lineno, "unexpected line (not dump_lfts/ibroute output)");
		goto out;
	}
	if (ferror(in)) {
		rc = rfail(err, errlen, name, lineno, "read error");
		rc = -EIO;
	}
	if (compact && cur)
		count_entries(cur);
out:
	free(line);
	if (rc) {
		sm_lftfile_free(lf);
		return rc;
	}
	*out = lf;
	return 0;
}

int sm_lftfile_load(const char *path, struct sm_lftfile **out, char *err, size_t errlen)
{
	FILE *in = fopen(path, "r");
	int rc;

	if (!in) {
		rc = -errno;
		if (err && errlen)
			snprintf(err, errlen, "%s: %s", path, strerror(-rc));
		return rc;
	}
	rc = sm_lftfile_read(in, path, out, err, errlen);
	fclose(in);
	return rc;
}

int sm_lftfile_apply(const struct sm_lftfile *lf, const struct sm_fabric *f, struct sm_lfts *l,
		     uint32_t *matched, char *err, size_t errlen)
{
	uint32_t m = 0;

	for (uint32_t s = 0; s < l->n_switches; s++) {
		uint32_t node = l->sw_node[s];
		const struct sm_node *nd = &f->nodes[node];
		const struct sm_lftfile_sw *fs = sm_lftfile_find(lf, nd->guid);
		uint8_t *row = sm_lfts_row(l, s);

		if (!fs)
			continue;
		m++;
		for (uint32_t lid = fs->first; lid <= fs->top; lid++) {
			uint8_t port = fs->ports[lid];
			if (port == SM_LFT_NONE)
				continue;
			if (port > nd->nports) {
				if (err && errlen)
					snprintf(err, errlen,
						 "line %u: switch 0x%016" PRIx64 " has %u ports, LID 0x%04x routed to port %u",
						 fs->line, nd->guid, nd->nports, lid, port);
				return -EINVAL;
			}
			if (lid > l->top_lid) {
				if (err && errlen)
					snprintf(err, errlen,
						 "line %u: switch 0x%016" PRIx64 " routes LID 0x%04x, above the plane's top LID 0x%04x",
						 fs->line, nd->guid, lid, l->top_lid);
				return -EINVAL;
			}
			row[lid] = port;
		}
	}
	if (matched)
		*matched = m;
	return 0;
}
