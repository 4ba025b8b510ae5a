/* SPDX-License-Identifier: MIT */
/*
 * DOC: hot-path model: switch levels and up-ports (internal.h)
 *
 * Levels by BFS from the leaves (switches with a CA): leaf 0, then one more
 * per hop; an up-port leads to a switch one level higher. Used by both the
 * placement (pin.c) and the colouring (colour.c), which call this file and
 * never each other's.
 */
#include "routing/hotpath/internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Does port p of switch node n (slot s) lead one level up? (Levels must be set.) */
static bool up_port(const struct hp *h, uint32_t s, uint32_t n, unsigned p)
{
	const struct sm_port *pt = sm_port(h->f, n, p);
	uint32_t t = pt->peer_node == SM_NONE ? SM_NONE : slot_of(h, pt->peer_node);
	return t != SM_NONE && h->level[s] != HP_LVL_NONE && h->level[t] == h->level[s] + 1;
}

int hp_build_levels(struct hp *h)
{
	const struct sm_fabric *f = h->f;
	uint32_t *q = malloc(((size_t)h->n_sw + 1) * sizeof(*q));
	h->level = malloc((size_t)h->n_sw + 1);
	h->up_off = calloc((size_t)h->n_sw + 2, sizeof(*h->up_off));
	if (!q || !h->level || !h->up_off) {
		free(q);
		return -ENOMEM;
	}
	memset(h->level, HP_LVL_NONE, h->n_sw + 1);
	uint32_t qh = 0, qt = 0;
	for (uint32_t s = 0; s < h->n_sw; s++) {
		uint32_t n = h->out->sw_node[s];
		for (unsigned p = 1; p <= f->nodes[n].nports; p++) {
			const struct sm_port *pt = sm_port(f, n, p);
			if (pt->peer_node != SM_NONE && f->nodes[pt->peer_node].type != SM_NODE_SWITCH) {
				h->level[s] = 0;
				q[qt++] = s;
				break;
			}
		}
	}
	while (qh < qt) {
		uint32_t s = q[qh++], n = h->out->sw_node[s];
		for (unsigned p = 1; p <= f->nodes[n].nports; p++) {
			const struct sm_port *pt = sm_port(f, n, p);
			if (pt->peer_node == SM_NONE)
				continue;
			uint32_t t = slot_of(h, pt->peer_node);
			if (t != SM_NONE && h->level[t] == HP_LVL_NONE) {
				h->level[t] = (uint8_t)(h->level[s] + 1 < HP_LVL_NONE ? h->level[s] + 1 : HP_LVL_NONE - 1);
				q[qt++] = t;
			}
		}
	}
	free(q);
	h->max_level = 0;
	size_t nup = 0;
	for (uint32_t s = 0; s < h->n_sw; s++) {
		if (h->level[s] != HP_LVL_NONE && h->level[s] > h->max_level)
			h->max_level = h->level[s];
		uint32_t n = h->out->sw_node[s];
		for (unsigned p = 1; p <= f->nodes[n].nports; p++)
			nup += up_port(h, s, n, p);
	}
	h->up = malloc(nup + 1);
	if (!h->up)
		return -ENOMEM;
	size_t k = 0;
	for (uint32_t s = 0; s < h->n_sw; s++) {
		h->up_off[s] = (uint32_t)k;
		uint32_t n = h->out->sw_node[s];
		for (unsigned p = 1; p <= f->nodes[n].nports; p++)
			if (up_port(h, s, n, p))
				h->up[k++] = (uint8_t)p;
	}
	h->up_off[h->n_sw] = (uint32_t)k;
	return 0;
}

bool hp_is_up(const struct hp *h, uint32_t node, uint16_t lid)
{
	uint32_t s = slot_of(h, node);
	uint8_t e = sm_lfts_get(h->base, node, lid);
	if (s == SM_NONE || e == SM_LFT_NONE || e == 0 || e > h->f->nodes[node].nports)
		return false;
	return up_port(h, s, node, e);
}
