/* SPDX-License-Identifier: MIT */
/*
 * DOC: the neighbour table (see neighbours.h)
 *
 * A sorted array: lookups by binary search, a sweep merged in by
 * collecting its link ends, sorting them and merging the two runs (the
 * sweep wins for a link end both have). At most SM_NBR_FILE_MAX bytes are
 * read back.
 */
#include "sm/neighbours.h"
#include "sm/mkey.h"
#include "lib/err.h"
#include "lib/statefile.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SM_NBR_FILE_MAX (64u << 20)

static int cmp(const void *a, const void *b)
{
	const struct sm_nbr_entry *x = a, *y = b;

	if (x->node_guid != y->node_guid)
		return x->node_guid < y->node_guid ? -1 : 1;
	return (int)x->port - (int)y->port;
}

static int reserve(struct sm_nbr *t, size_t n)
{
	if (n <= t->cap)
		return 0;
	size_t cap = t->cap ? t->cap : 64;
	while (cap < n)
		cap *= 2;
	struct sm_nbr_entry *e = realloc(t->e, cap * sizeof(*e));
	if (!e)
		return -ENOMEM;
	t->e = e;
	t->cap = cap;
	return 0;
}

/* Merge sorted run a (na, no duplicates) into t, a winning on equal keys. 1 changed, 0 not, -ENOMEM. */
static int merge(struct sm_nbr *t, const struct sm_nbr_entry *a, size_t na)
{
	struct sm_nbr out = { 0 };
	size_t i = 0, j = 0;
	int changed = 0;

	if (reserve(&out, t->n + na + 1))
		return -ENOMEM;
	while (i < na || j < t->n) {
		int c = i == na ? 1 : j == t->n ? -1 : cmp(&a[i], &t->e[j]);
		if (c == 0) {
			changed |= a[i].sma_guid != t->e[j].sma_guid;
			out.e[out.n++] = a[i++];
			j++;
		} else if (c < 0) {
			changed = 1;
			out.e[out.n++] = a[i++];
		} else {
			out.e[out.n++] = t->e[j++];
		}
	}
	free(t->e);
	*t = out;
	return changed;
}

int sm_nbr_add_fabric(struct sm_nbr *t, const struct sm_fabric *f)
{
	struct sm_nbr_entry *a = malloc((f->n_ports + 1) * sizeof(*a));
	size_t n = 0;

	if (!a)
		return -ENOMEM;
	for (uint32_t k = 0; k < f->n_ports; k++) {
		const struct sm_port *pt = &f->ports[k];
		if (pt->peer_node == SM_NONE || pt->num == 0)
			continue;
		uint64_t g = sm_keys_sma_guid(f, pt->peer_node, pt->peer_port);
		if (g)
			a[n++] = (struct sm_nbr_entry){ .node_guid = f->nodes[pt->node].guid, .port = pt->num,
							.sma_guid = g };
	}
	qsort(a, n, sizeof(*a), cmp);
	size_t u = 0;   /* one entry per link end (a node in two planes' fabrics is not merged here) */
	for (size_t k = 0; k < n; k++)
		if (!u || cmp(&a[k], &a[u - 1]))
			a[u++] = a[k];
	int rc = merge(t, a, u);
	free(a);
	return rc;
}

uint64_t sm_nbr_lookup(const struct sm_nbr *t, uint64_t node_guid, unsigned port)
{
	struct sm_nbr_entry key = { .node_guid = node_guid, .port = (uint8_t)port };
	const struct sm_nbr_entry *e;

	if (!t || !t->n || port > 255)
		return 0;
	e = bsearch(&key, t->e, t->n, sizeof(*e), cmp);
	return e ? e->sma_guid : 0;
}

int sm_nbr_copy(struct sm_nbr *dst, const struct sm_nbr *src)
{
	memset(dst, 0, sizeof(*dst));
	if (!src->n)
		return 0;
	if (reserve(dst, src->n))
		return -ENOMEM;
	memcpy(dst->e, src->e, src->n * sizeof(*dst->e));
	dst->n = src->n;
	return 0;
}

int sm_nbr_save(const struct sm_nbr *t, const char *path, char *err, size_t errlen)
{
	static const char head[] = "# smd neighbours: node GUID, port, GUID of the SMA behind it (derived M_Keys)\n";
	size_t cap = SM_STATE_HDR_MAX + sizeof(head) + t->n * 48, off;
	char *buf = malloc(cap);
	int rc;

	if (!buf)
		return sm_errf_rc(-ENOMEM, err, errlen, "%s: out of memory", path);
	off = SM_STATE_HDR_MAX;
	memcpy(buf + off, head, sizeof(head) - 1);
	off += sizeof(head) - 1;
	for (size_t k = 0; k < t->n; k++)
		off += (size_t)snprintf(buf + off, cap - off, "0x%016" PRIx64 " %u 0x%016" PRIx64 "\n",
					t->e[k].node_guid, t->e[k].port, t->e[k].sma_guid);
	char hdr[SM_STATE_HDR_MAX];
	size_t hl = sm_state_header(hdr, buf + SM_STATE_HDR_MAX, off - SM_STATE_HDR_MAX);
	memcpy(buf + SM_STATE_HDR_MAX - hl, hdr, hl);
	rc = sm_state_write(path, buf + SM_STATE_HDR_MAX - hl, off - SM_STATE_HDR_MAX + hl, 0600, err, errlen);
	free(buf);
	return rc;
}

int sm_nbr_load(struct sm_nbr *t, const char *path, char *err, size_t errlen)
{
	size_t len = 0, off = 0;
	char *buf = NULL;
	unsigned ln = 0;
	int rc;

	memset(t, 0, sizeof(*t));
	rc = sm_state_read(path, SM_NBR_FILE_MAX, &buf, &len, err, errlen);
	if (rc)
		return rc;
	rc = sm_state_check(buf, len, path, &off, err, errlen);
	if (rc == 0)
		rc = sm_errf_rc(-EINVAL, err, errlen, "%s:1: no smd-state header", path);
	ln = 1;
	for (char *line = buf + off; rc >= 0 && line < buf + len;) {
		char *nl = memchr(line, '\n', (size_t)(buf + len - line));
		struct sm_nbr_entry e;
		unsigned port;
		int used = 0;

		ln++;
		if (nl)
			*nl = '\0';
		if (line[0] && line[0] != '#') {
			if (sscanf(line, "%" SCNx64 " %u %" SCNx64 "%n", &e.node_guid, &port, &e.sma_guid, &used) != 3 ||
			    line[used] || port < 1 || port > 254 || !e.sma_guid)
				rc = sm_errf_rc(-EINVAL, err, errlen, "%s:%u: not 'NODEGUID PORT SMAGUID'", path, ln);
			else if ((rc = reserve(t, t->n + 1)) == 0) {
				e.port = (uint8_t)port;
				t->e[t->n++] = e;
			}
		}
		line = nl ? nl + 1 : buf + len;
	}
	free(buf);
	if (rc >= 0) {
		qsort(t->e, t->n, sizeof(*t->e), cmp);
		return 0;
	}
	sm_nbr_free(t);
	return rc;
}

void sm_nbr_free(struct sm_nbr *t)
{
	if (!t)
		return;
	free(t->e);
	memset(t, 0, sizeof(*t));
}

int sm_nbr_open(const char *state_dir, const struct sm_keys *k, struct sm_nbr *t, char *path, size_t plen,
		sm_note_fn *note, void *note_arg)
{
	char err[512] = "";

	memset(t, 0, sizeof(*t));
	path[0] = '\0';
	if (!state_dir || !k || !k->derived || k->protect_bits < 2)
		return 0;
	if ((size_t)snprintf(path, plen, "%s/neighbours", state_dir) >= plen) {
		sm_notef(note, note_arg, "%s/neighbours: path too long: no neighbour table", state_dir);
		path[0] = '\0';
		return 0;
	}
	int rc = sm_nbr_load(t, path, err, sizeof(err));
	if (rc == -ENOENT)
		sm_notef(note, note_arg, "%s: none yet: ports protected at bits 2-3 that this SM has not swept "
			 "answer nothing until their lease expires", path);
	else if (rc)
		sm_notef(note, note_arg, "neighbour table refused: %s; starting without it", err);
	return 1;
}

int sm_nbr_update(struct sm_nbr *t, const struct sm_fabric *f, const char *path, char *err, size_t errlen)
{
	int rc = sm_nbr_add_fabric(t, f);

	if (rc < 0)
		return sm_errf_rc(rc, err, errlen, "%s: out of memory", path);
	return rc && path[0] ? sm_nbr_save(t, path, err, errlen) : 0;
}
