/* SPDX-License-Identifier: MIT */
/*
 * DOC: per-plane snapshot (snapshot.h): allocation and reference counting.
 */
#include "sm/snapshot.h"
#include "lib/clock.h"
#include "model/fabric.h"
#include "model/lfts.h"

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
	free(s);
}
