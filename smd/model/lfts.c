/* SPDX-License-Identifier: MIT */
/* DOC: LFT tables: allocation of the dense per-plane table (model/lfts.h). */
#include "model/lfts.h"

#include <stdlib.h>
#include <string.h>

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
	l->ports = malloc(sz ? sz : 1);
	if (!l->ports)
		goto fail;
	memset(l->ports, SM_LFT_NONE, sz);
	return l;
fail:
	sm_lfts_free(l);
	return NULL;
}

void sm_lfts_free(struct sm_lfts *l)
{
	if (!l)
		return;
	free(l->sw_node);
	free(l->slot_of_node);
	free(l->ports);
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
	d->ports = malloc(sz ? sz : 1);
	if (!d->sw_node || !d->slot_of_node || !d->ports) {
		sm_lfts_free(d);
		return NULL;
	}
	memcpy(d->sw_node, l->sw_node, (size_t)l->n_switches * sizeof(*d->sw_node));
	memcpy(d->slot_of_node, l->slot_of_node, (size_t)l->n_nodes * sizeof(*d->slot_of_node));
	memcpy(d->ports, l->ports, sz);
	return d;
}
