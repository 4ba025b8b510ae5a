/* SPDX-License-Identifier: MIT */
/* DOC: LFT tables: allocation of the dense per-plane table (model/lfts.h). */
#include "model/lfts.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/*
 * The table of a 40k-host plane is 160 MB and ftree writes it row by row,
 * one short run per switch per destination switch: in 4 KB pages that is a
 * TLB miss per run and 40,000 page faults; in 2 MB pages, where the kernel
 * gives them for the asking (transparent huge pages in "madvise" mode), 80
 * faults and a TLB that covers the whole table. Freed with free().
 *
 * One freed table of 2 MB or more is kept for the next table of the same
 * size (a plane's next routing): faulting in and clearing 160 MB of fresh
 * pages cost 0.2-0.4 s of CPU at 40k hosts, more than an incremental
 * reroute's own work. Tables of a plane come and go one after the other
 * (the new one is made while the previous snapshot holds the old), so one
 * spare is enough; it is given back at the next free of another size.
 *
 * A reroute starts from a copy of the state's tables (sm_lfts_dup()):
 * 160 MB copied, 11-20 ms of CPU at 40k hosts, in the path of the
 * reroute. sm_lfts_prepare() makes that copy ahead, in the SM's idle time
 * after a cycle: the spare becomes a copy of the given table (of_ports,
 * while that table lives: it is forgotten when that table is freed), and
 * sm_lfts_dup() of that table takes it as it is. Only the chain's
 * starting tables are prepared (the state's, immutable in its snapshot):
 * a table written after its sm_lfts_prepare() must not be duplicated, the
 * copy would be stale (sm_lfts_prepare() says so).
 */
static struct {
	pthread_mutex_t mu;
	void *p;
	size_t n;
	const uint8_t *of_ports; /* p holds a copy of this live table's ports (sm_lfts_prepare) */
} spare = { PTHREAD_MUTEX_INITIALIZER, NULL, 0, NULL };

/* The spare if it has n bytes (taken: the caller owns it), else NULL; *copy_of: what it holds a copy of. */
static void *take_spare(size_t n, const uint8_t **copy_of)
{
	void *p = NULL;
	pthread_mutex_lock(&spare.mu);
	if (spare.p && spare.n == n) {
		p = spare.p;
		*copy_of = spare.of_ports;
		spare.p = NULL;
		spare.of_ports = NULL;
	}
	pthread_mutex_unlock(&spare.mu);
	return p;
}

/* n bytes of table; *copy_of (may be NULL): the live table's ports they are a copy of, if any. */
static uint8_t *alloc_ports(size_t n, const uint8_t **copy_of)
{
	const uint8_t *of = NULL;
	const size_t huge = (size_t)2 << 20;
	if (copy_of)
		*copy_of = NULL;
	if (n < huge)
		return malloc(n ? n : 1);
	void *p = take_spare(n, &of);
	if (p) {
		if (copy_of)
			*copy_of = of;
		return p;
	}
	size_t sz = (n + huge - 1) / huge * huge;
	if (posix_memalign(&p, huge, sz))
		return NULL;
#ifdef MADV_HUGEPAGE
	(void)madvise(p, sz, MADV_HUGEPAGE); /* a hint: 4 KB pages work too */
#endif
	return p;
}

struct sm_lfts *sm_lfts_new(const struct sm_fabric *f, unsigned plane)
{
	struct sm_lfts *l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->plane = plane;
	l->top_lid = plane < SM_MAX_PLANES ? f->planes[plane].max_lid : 0;
	l->n_nodes = f->n_nodes;
	l->slot_of_node = malloc(((size_t)f->n_nodes + 1) * sizeof(*l->slot_of_node));
	if (!l->slot_of_node)
		goto fail;
	for (uint32_t n = 0; n < f->n_nodes; n++) {
		l->slot_of_node[n] = SM_NONE;
		if (f->nodes[n].type == SM_NODE_SWITCH && f->nodes[n].plane == plane)
			l->n_switches++;
	}
	l->sw_node = malloc(((size_t)l->n_switches + 1) * sizeof(*l->sw_node));
	if (!l->sw_node)
		goto fail;
	uint32_t s = 0;
	for (uint32_t n = 0; n < f->n_nodes; n++)
		if (f->nodes[n].type == SM_NODE_SWITCH && f->nodes[n].plane == plane) {
			l->slot_of_node[n] = s;
			l->sw_node[s++] = n;
		}
	size_t sz = (size_t)l->n_switches * ((size_t)l->top_lid + 1);
	l->ports = alloc_ports(sz, NULL);
	if (!l->ports)
		goto fail;
	memset(l->ports, SM_LFT_NONE, sz);
	return l;
fail:
	sm_lfts_free(l);
	return NULL;
}

/* Free a table of n bytes, or keep it as the spare (alloc_ports()). */
static void free_ports(uint8_t *p, size_t n)
{
	void *old = p;
	if (p && n >= ((size_t)2 << 20)) {
		pthread_mutex_lock(&spare.mu);
		if (spare.of_ports == p) { /* the spare was a copy of this one: keep it, content and all */
			spare.of_ports = NULL;
		} else {
			old = spare.p;
			spare.p = p;
			spare.n = n;
			spare.of_ports = NULL;
		}
		pthread_mutex_unlock(&spare.mu);
	}
	free(old);
}

void sm_lfts_free(struct sm_lfts *l)
{
	if (!l)
		return;
	free(l->sw_node);
	free(l->slot_of_node);
	free_ports(l->ports, (size_t)l->n_switches * ((size_t)l->top_lid + 1));
	free(l);
}

struct sm_lfts *sm_lfts_dup(const struct sm_lfts *l)
{
	struct sm_lfts *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	*d = *l;
	size_t sz = (size_t)l->n_switches * ((size_t)l->top_lid + 1);
	d->sw_node = malloc(((size_t)l->n_switches + 1) * sizeof(*d->sw_node));
	d->slot_of_node = malloc(((size_t)l->n_nodes + 1) * sizeof(*d->slot_of_node));
	const uint8_t *copy_of;
	d->ports = alloc_ports(sz, &copy_of);
	if (!d->sw_node || !d->slot_of_node || !d->ports) {
		sm_lfts_free(d);
		return NULL;
	}
	memcpy(d->sw_node, l->sw_node, (size_t)l->n_switches * sizeof(*d->sw_node));
	memcpy(d->slot_of_node, l->slot_of_node, (size_t)l->n_nodes * sizeof(*d->slot_of_node));
	if (copy_of != l->ports)
		memcpy(d->ports, l->ports, sz);
	return d;
}

int sm_lfts_prepare(const struct sm_lfts *l)
{
	size_t sz = (size_t)l->n_switches * ((size_t)l->top_lid + 1);
	const uint8_t *of = NULL;
	pthread_mutex_lock(&spare.mu);
	/* the copy of another live table (another plane's) stays: one spare, one copy per cycle at most */
	int busy = spare.p && spare.n == sz && spare.of_ports && spare.of_ports != l->ports;
	pthread_mutex_unlock(&spare.mu);
	if (busy)
		return -EBUSY;
	uint8_t *p = take_spare(sz, &of);
	if (!p)
		return -ENOENT;
	if (of != l->ports)
		memcpy(p, l->ports, sz);
	pthread_mutex_lock(&spare.mu);
	void *old = spare.p;
	spare.p = p;  /* a table of another size freed meanwhile gives way: this one is wanted next */
	spare.n = sz;
	spare.of_ports = l->ports;
	pthread_mutex_unlock(&spare.mu);
	free(old);
	return 0;
}
