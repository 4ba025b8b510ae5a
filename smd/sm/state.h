/* SPDX-License-Identifier: MIT */
#ifndef SMD_SM_STATE_H
#define SMD_SM_STATE_H
/*
 * DOC: the daemon's per-plane memory across bring-ups (sm.h "state across
 * bring-ups"), as the phases see it
 *
 * The state holds no fabric of its own: it keeps a reference to the
 * snapshot (snapshot.h) of the last bring-up that reached the program phase,
 * and that bring-up's sweep tables (tables.h), indexed like the snapshot's
 * fabric and moved out of the core at its end. A switch's LFT shadow that
 * equals its row of the snapshot's LFTs shares that row instead of holding
 * a copy (lft_writer.h, sm_lft_shadow_share): the snapshot the state holds
 * keeps it alive.
 */
#include "sm/sm.h"
#include "sm/snapshot.h"
#include "sm/tables.h"
#include "sm/lidmgr.h"

#include <sys/stat.h>

struct sm_state {
	const struct sm_snapshot *snap;  /* NULL: nothing known */
	struct sm_sweep_tables tab;      /* indexed like snap->fabric; shadows per switch */
	uint32_t n_switches;
	int valid;                       /* the bring-up that made it succeeded */
	int complete;                    /* ... and its sweep lost nothing (snap->complete) */
	/* the light sweep's round-robin samples (light.c): next port index, next (switch, block) */
	uint32_t pi_cursor, lft_cursor_node;
	uint16_t lft_cursor_block;
	/*
	 * The LID file (STATE_DIR/guid2lid) as the LID phase last loaded it,
	 * with the file's identity then (device, inode, size, times): while
	 * the file is that one, the next LID phase copies this instead of
	 * parsing it again (44k lines at 40k hosts). lid_file_path NULL: none.
	 */
	char *lid_file_path;
	struct stat lid_file_st;
	struct sm_lidmgr lid_file;
};

/* The state's fabric, NULL if none. */
static inline const struct sm_fabric *sm_state_fabric(const struct sm_state *s)
{
	return s && s->snap ? s->snap->fabric : NULL;
}

/*
 * After a bring-up that reached the program phase: snap (a new reference,
 * taken here) and the core's tables (moved out of tab) become the state;
 * valid says whether the bring-up succeeded. NULL snap: the state is
 * dropped (tab is left to its owner).
 */
void sm_state_update(struct sm_state *s, const struct sm_snapshot *snap, struct sm_sweep_tables *tab, int valid);

/*
 * A bring-up frees much in small blocks (request contexts, the shadows now
 * shared, sweep scratch): at 40k hosts malloc kept ~200 MB of it free but
 * resident, which the next sweep's 160 MB tables (mapped on their own)
 * cannot reuse. The end of a bring-up with a state gives it back to the
 * system (malloc_trim with glibc; a few ms), and the spare blocks
 * (model/spare.h) no sweep took since the last end; with
 * cfg->defer_give_back (the daemon) the caller does it once idle, below.
 */
void sm_state_give_back(void);
/*
 * With cfg->defer_give_back (sm.h) a bring-up only marks the give-back due;
 * sm_state_give_back_idle() does it once if one is due (any thread, once
 * idle: the daemon's worker after a cycle). Returns 1 if it gave back.
 */
void sm_state_give_back_mark(void);
int sm_state_give_back_idle(void);

#endif
