/* SPDX-License-Identifier: MIT */
/*
 * DOC: state across bring-ups (sm.h, state.h): a snapshot reference and
 * the sweep tables of the last bring-up that reached the program phase.
 */
#include "sm/state.h"
#include "sm/mft.h"
#include "model/spare.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

int sm_state_new(struct sm_state **out)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	sm_sweep_tables_init(&(*out)->tab);
	sm_lidmgr_init(&(*out)->lid_file);
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
	free(s->lid_file_path);
	sm_lidmgr_clear(&s->lid_file);
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

/*
 * The shadows mirror the LFTs just programmed: where a switch's shadow
 * equals its row of snap's LFTs, the row stands for it (lft_writer.h,
 * sm_lft_shadow_share), which saves a copy of the plane's LFTs (160 MB at
 * 40k hosts). A shadow still sharing a row of the state's old snapshot
 * (taken over by the program phase and not rewritten) is re-shared or
 * takes a copy here, before that snapshot is let go; without memory for
 * the copy it is forgotten (the next sweep reads the switch back).
 */
static void share_shadows(struct sm_sweep_tables *tab, const struct sm_snapshot *snap)
{
	const struct sm_lfts *l = snap ? snap->lfts : NULL;
	for (uint32_t n = 0; tab && tab->shadow && n < tab->n_shadow; n++) {
		struct sm_lft_shadow *sh = &tab->shadow[n];
		uint32_t slot = l && n < l->n_nodes ? l->slot_of_node[n] : SM_NONE;
		if (slot != SM_NONE && sm_lft_shadow_share(sh, sm_lfts_row(l, slot), l->top_lid))
			continue;
		if (sm_lft_shadow_own(sh))
			sm_lft_shadow_free(sh);
	}
}

/*
 * Not under AddressSanitizer: its malloc replaces glibc's, so glibc's
 * malloc is first initialised by this malloc_trim() on a plane thread,
 * which then holds the main arena without counting itself in; when two
 * such threads end, glibc aborts ("malloc assertion failure in
 * __malloc_arena_thread_freeres", seen once in the 2-plane smd of
 * smctl_golden.sh under --enable-sanitizers). With glibc's own malloc the
 * main thread initialised it long before.
 */
#if defined(__SANITIZE_ADDRESS__)
#define SM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SM_ASAN 1
#endif
#endif

void sm_state_give_back(void)
{
	sm_spare_age();   /* spare blocks no sweep took since the last end (spare.h) */
#if defined(__GLIBC__) && !defined(SM_ASAN)
	malloc_trim(0);
#endif
}

static atomic_int give_back_due;

void sm_state_give_back_mark(void)
{
	atomic_store(&give_back_due, 1);
}

int sm_state_give_back_idle(void)
{
	if (!atomic_exchange(&give_back_due, 0))
		return 0;
	sm_state_give_back();
	return 1;
}

void sm_state_update(struct sm_state *s, const struct sm_snapshot *snap, struct sm_sweep_tables *tab, int valid)
{
	if (snap)
		share_shadows(tab, snap);   /* while the old snapshot is still held */
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
