/* SPDX-License-Identifier: MIT */
/*
 * DOC: per-plane snapshot (snapshot.h): allocation and reference counting.
 */
#include "sm/snapshot.h"
#include "lib/clock.h"
#include "model/fabric.h"
#include "model/lfts.h"
#include "sm/tables.h"
#include "sm/mcast.h"
#include "model/spare.h"

#include <stdint.h>
#include <stdlib.h>

struct sm_snapshot *sm_snapshot_new(unsigned plane, struct sm_fabric *fabric, struct sm_lfts *lfts)
{
	struct sm_snapshot *s = calloc(1, sizeof(*s));
	if (!s) {
		sm_fabric_free(fabric);
		sm_lfts_free(lfts);
		return NULL;
	}
	atomic_init(&s->refs, 1);
	s->plane = plane;
	s->sm_port = SM_NONE;
	s->made_us = sm_mono_us();
	s->fabric = fabric;
	s->lfts = lfts;
	return s;
}

const struct sm_snapshot *sm_snapshot_ref(const struct sm_snapshot *s)
{
	if (s)
		atomic_fetch_add_explicit(&((struct sm_snapshot *)(uintptr_t)s)->refs, 1, memory_order_relaxed);
	return s;
}

void sm_snapshot_unref(const struct sm_snapshot *cs)
{
	struct sm_snapshot *s = (struct sm_snapshot *)(uintptr_t)cs;
	if (!s || atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) != 1)
		return;
	sm_fabric_free((struct sm_fabric *)(uintptr_t)s->fabric);
	sm_lfts_free((struct sm_lfts *)(uintptr_t)s->lfts);
	/* the next sweep's tables take them (spare.h): attr_* are their sizes (take_attrs) */
	sm_spare_give((void *)(uintptr_t)s->ni, (size_t)s->attr_nodes * sizeof(*s->ni));
	sm_spare_give((void *)(uintptr_t)s->si, (size_t)s->attr_nodes * sizeof(*s->si));
	sm_spare_give((void *)(uintptr_t)s->si_ok, s->attr_nodes);
	sm_spare_give((void *)(uintptr_t)s->pi, (size_t)s->attr_ports * sizeof(*s->pi));
	sm_spare_give((void *)(uintptr_t)s->pi_ok, s->attr_ports);
	sm_mfts_free((struct sm_mfts *)(uintptr_t)s->mfts);
	sm_mc_set_unref((struct sm_mc_set *)(uintptr_t)s->mc);
	sm_pkey_tables_free((struct sm_pkey_tables *)(uintptr_t)s->pkeys);
	free(s);
}

void sm_pkey_tables_free(struct sm_pkey_tables *t)
{
	if (!t)
		return;
	free(t->tab);
	free(t->at);
	free(t);
}

void sm_snapshot_take_pkeys(struct sm_snapshot *s, struct sm_pkey_tables **pk)
{
	s->pkeys = *pk;
	*pk = NULL;
}

const uint16_t *sm_snapshot_pkeys(const struct sm_snapshot *s, uint32_t i, unsigned *n)
{
	const struct sm_pkey_tables *t = s ? s->pkeys : NULL;
	*n = 0;
	if (!t || i >= t->n_ports || t->at[i + 1] == t->at[i])
		return NULL;
	*n = t->at[i + 1] - t->at[i];
	return t->tab + t->at[i];
}

void sm_snapshot_take_attrs(struct sm_snapshot *s, struct sm_sweep_tables *t)
{
	s->ni = t->ni;
	s->si = t->si;
	s->si_ok = t->si_ok;
	s->pi = t->pi;
	s->pi_ok = t->pi_ok;
	s->attr_nodes = t->cap_nodes;
	s->attr_ports = t->cap_ports;
	t->ni = NULL;
	t->si = NULL;
	t->si_ok = NULL;
	t->pi = NULL;
	t->pi_ok = NULL;
}

void sm_snapshot_attrs_view(const struct sm_snapshot *s, struct sm_sweep_tables *t, uint32_t n_nodes,
			    uint32_t n_ports)
{
	int ok = s && n_nodes <= s->attr_nodes && n_ports <= s->attr_ports;
	t->ni = ok ? (struct sm_node_info *)(uintptr_t)s->ni : NULL;
	t->si = ok ? (struct sm_switch_info *)(uintptr_t)s->si : NULL;
	t->si_ok = ok ? (uint8_t *)(uintptr_t)s->si_ok : NULL;
	t->pi = ok ? (struct sm_port_info *)(uintptr_t)s->pi : NULL;
	t->pi_ok = ok ? (uint8_t *)(uintptr_t)s->pi_ok : NULL;
}

void sm_snapshot_copy_attrs(const struct sm_snapshot *s, struct sm_sweep_tables *t, uint32_t n_nodes,
			    uint32_t n_ports)
{
	struct sm_sweep_tables src;
	sm_sweep_tables_init(&src);
	if (!s || n_nodes > s->attr_nodes || n_ports > s->attr_ports)
		return;
	/* borrowed, read only: tables_copy copies what is not NULL */
	sm_snapshot_attrs_view(s, &src, n_nodes, n_ports);
	src.sm_node = t->sm_node;
	src.sm_portnum = t->sm_portnum;
	sm_sweep_tables_copy(t, &src, n_nodes, n_ports);
}
