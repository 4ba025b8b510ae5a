/* SPDX-License-Identifier: MIT */
/*
 * DOC: state across bring-ups (sm.h, state.h): a snapshot reference and
 * the sweep tables of the last bring-up that reached the program phase.
 */
#include "sm/state.h"
#include "sm/mft.h"

#include <errno.h>
#include <stdlib.h>

int sm_state_new(struct sm_state **out)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	sm_sweep_tables_init(&(*out)->tab);
	return 0;
}

static void state_clear(struct sm_state *s)
{
	sm_sweep_tables_free(&s->tab);
	sm_snapshot_unref(s->snap);
	s->snap = NULL;
	s->n_switches = 0;
	s->valid = 0;
	s->complete = 0;   /* the light sweep's cursors stay: they are taken modulo the next fabric */
}

void sm_state_free(struct sm_state *s)
{
	if (!s)
		return;
	state_clear(s);
	free(s);
}

void sm_state_forget(struct sm_state *s)
{
	if (!s)
		return;
	for (uint32_t n = 0; s->tab.shadow && n < s->tab.n_shadow; n++)
		sm_lft_shadow_free(&s->tab.shadow[n]);
	sm_mft_shadows_free(s->tab.mshadow, s->tab.n_mshadow);
	s->tab.mshadow = NULL;
	s->tab.n_mshadow = 0;
	s->valid = 0;
}

bool sm_state_valid(const struct sm_state *s)
{
	return s && s->valid && s->snap;
}

uint32_t sm_state_switches(const struct sm_state *s)
{
	return sm_state_valid(s) ? s->n_switches : 0;
}

void sm_state_update(struct sm_state *s, const struct sm_snapshot *snap, struct sm_sweep_tables *tab, int valid)
{
	state_clear(s);
	if (!snap)
		return;
	const struct sm_fabric *f = snap->fabric;
	s->snap = sm_snapshot_ref(snap);
	sm_sweep_tables_move(&s->tab, tab);
	for (uint32_t n = 0; n < f->n_nodes; n++)
		s->n_switches += f->nodes[n].type == SM_NODE_SWITCH;
	s->valid = valid;
	s->complete = snap->complete;
}
