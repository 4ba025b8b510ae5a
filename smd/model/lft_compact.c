/* SPDX-License-Identifier: MIT */
/*
 * DOC: the compact LFT form's writer (format in lft_file.h)
 *
 * Version 2 writes, per switch, only the blocks that differ from the
 * previous switch's (struct sm_lftc_base): on a fat tree 98.5% of a
 * 40,960-host plane's 2.5 M blocks equal the previous switch's, so a plane
 * is ~5 MB instead of version 1's 332 MB, and the writer's cost is one
 * 64-byte compare per block instead of hex-encoding 160 M entries and
 * copying them into the page cache.
 */
#include "model/lft_file.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define LFTC_BLOCK 64

void sm_lftc_base_init(struct sm_lftc_base *b)
{
	b->written = false;
	b->top = 0;
	memset(b->row, SM_LFT_NONE, sizeof(b->row));
}

char *sm_lft_put_u(char *p, uint32_t v)
{
	char t[12];
	int n = 0;

	do
		t[n++] = (char)('0' + v % 10);
	while ((v /= 10));
	while (n)
		*p++ = t[--n];
	return p;
}

size_t sm_lftc_put_switch(char *buf, struct sm_lftc_base *base, uint64_t guid, unsigned lid, uint32_t top,
			  const char *desc, const uint8_t *row)
{
	static const char hex[] = "0123456789abcdef";
	char *p = buf;
	size_t i;

	if (top > SM_UNICAST_LID_MAX)
		top = SM_UNICAST_LID_MAX;
	p += snprintf(p, 96, "switch 0x%016" PRIx64 " lid %u top 0x%x desc ", guid, lid, top);
	for (i = 0; desc[i] && i < SM_DESC_MAX; i++)   /* one line, whatever the switch calls itself */
		*p++ = (unsigned char)desc[i] < 0x20 || desc[i] == 0x7f ? '?' : desc[i];
	*p++ = '\n';
	/* the base's entries above this switch's top are not in its table: none */
	if (base->top > top)
		memset(base->row + top + 1, SM_LFT_NONE, base->top - top);
	base->top = top;
	for (uint32_t first = 0; first <= top; first += LFTC_BLOCK) {
		uint32_t n = top - first + 1 < LFTC_BLOCK ? top - first + 1 : LFTC_BLOCK;

		if (!memcmp(row + first, base->row + first, n))
			continue;
		p = sm_lft_put_u(p, first / LFTC_BLOCK);
		*p++ = ' ';
		for (uint32_t e = 0; e < n; e++) {
			uint8_t v = row[first + e];
			*p++ = hex[v >> 4];
			*p++ = hex[v & 15];
		}
		*p++ = '\n';
		memcpy(base->row + first, row + first, n);
	}
	return (size_t)(p - buf);
}

int sm_lftfile_write_compact(FILE *out, const struct sm_fabric *f, const struct sm_lfts *l, const char *comment,
			     struct sm_lftc_base *base)
{
	struct sm_lftc_base *own = NULL;
	char *buf;
	size_t len = 0, cap = 4 * SM_LFTC_SW_MAX;
	int rc = 0;

	if (!base) {
		if (!(own = malloc(sizeof(*own))))
			return -ENOMEM;
		sm_lftc_base_init(own);
		base = own;
	}
	if (!(buf = malloc(cap))) {
		free(own);
		return -ENOMEM;
	}
	if (!base->written)
		len += (size_t)snprintf(buf, cap, SM_LFTFILE_COMPACT_MAGIC " %d\n", SM_LFTFILE_COMPACT_VERSION);
	if (comment) {
		size_t n = strnlen(comment, SM_LFTC_SW_MAX);
		buf[len++] = '#';
		buf[len++] = ' ';
		memcpy(buf + len, comment, n);
		len += n;
		buf[len++] = '\n';
	}
	base->written = true;
	for (uint32_t s = 0; s < l->n_switches && !rc; s++) {
		uint32_t node = l->sw_node[s];
		const struct sm_node *sw = &f->nodes[node];

		if (cap - len < SM_LFTC_SW_MAX) {
			if (fwrite(buf, 1, len, out) != len)
				rc = -EIO;
			len = 0;
		}
		len += sm_lftc_put_switch(buf + len, base, sw->guid, sm_port(f, node, 0)->lid, l->top_lid, sw->desc,
					  sm_lfts_row(l, s));
	}
	if (!rc && len && fwrite(buf, 1, len, out) != len)
		rc = -EIO;
	free(buf);
	free(own);
	if (!rc && (fflush(out) || ferror(out)))
		return -EIO;
	return rc;
}
