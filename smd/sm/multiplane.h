/* SPDX-License-Identifier: MIT */
#ifndef SMD_MULTIPLANE_H
#define SMD_MULTIPLANE_H
/*
 * DOC: multi-plane bring-up
 *
 * One smd process brings up every plane of a multi-plane fabric: one
 * thread per plane, each with its own transport, transaction engine,
 * routing chain and fabric, so a plane that is slow, faulty or gone never
 * stalls the others (fault isolation is the point of planes). The only
 * thing the planes share is the plane-consistent LID table
 * (planelid.h), asked under a mutex by each plane at its own LID phase.
 *
 * Light cycles (cfg.light): each plane thread first runs sm_light_sweep()
 * against the plane's state and brings the plane up (heavy) only when that
 * finds a change, finds no valid state, or fails; pl->heavy says which ran.
 * With a state (pl->state), heavy bring-ups use sm_bringup_state(): LFT
 * blocks are neither read back nor written where the state knows them.
 *
 * Multicast (issue 14): a plane whose group set changed (pl->mft_due,
 * its set in pl->mcast) gets the MFT-only pass (sm_mft_update, mft.h)
 * in a light cycle: after a light sweep that saw no change, or instead of
 * any sweep with cfg.mc_only (a cycle run for the groups alone: planes
 * without mft_due are then left as they are, results untouched). Without
 * a valid state, or when the pass fails, the plane is brought up heavy;
 * a heavy bring-up programs the set anyway.
 *
 * A plane whose bring-up fails is retried (cfg.retries times, on the same
 * transport, after the other planes are done or in parallel with the ones
 * still running); its failure is reported with the reason. A plane whose
 * transport could not even be opened is reported and skipped.
 */
#include <stdio.h>
#include "sm/sm.h"
#include "sm/planelid.h"

struct sm_chain;

struct sm_mp_plane {
	char name[280];                 /* the plane spec, for messages */
	unsigned index;                 /* plane index in the fabric model */
	struct sm_transport *t;         /* NULL: could not be opened (open_err says why) */
	char open_err[512];
	struct sm_chain *chain;         /* this plane's routing chain (one per plane: engines keep state) */
	sm_note_fn *note;               /* this plane's notes (NULL: the template's) */
	void *note_arg;
	struct sm_state *state;         /* the caller's memory of this plane across runs; NULL: none */
	int force_heavy;                /* with cfg.light: skip the light sweep for this plane */
	struct sm_mc_set *mcast;        /* its multicast groups (sm_cfg.mcast; the caller's reference), NULL none */
	int skip;                       /* not this run (a plane another SM masters): results untouched, not counted */
	int mft_due;                    /* mcast is newer than the MFTs programmed: see above */
	/* results */
	int heavy;                      /* a heavy bring-up ran (sum, attempts are its results) */
	int light_rc;                   /* light sweep (if light_ran): 1 change seen, 0 none, -errno */
	int light_ran;                  /* the light sweep ran (light holds its counters) */
	struct sm_light_summary light;
	int mft_ran;                    /* the MFT-only pass ran (mft holds its counters, mft_rc its result) */
	int mft_rc;
	struct sm_mft_summary mft;
	int rc;                         /* 0 up; negative errno */
	unsigned attempts;
	struct sm_summary sum;
	char err[1024];
	double start_s, end_s;          /* since the start of the run */
};

struct sm_mp_cfg {
	struct sm_cfg base;             /* template; plane, lid_want and persistence are set per plane */
	unsigned retries;               /* extra attempts for a failed plane (default 1) */
	struct sm_plane_lids *lids;     /* shared LID table; NULL: each plane on its own */
	bool light;                     /* light sweep first, heavy only where it sees a change */
	bool mc_only;                   /* with light: only the MFT-only pass of planes with mft_due */
};

/*
 * Bring every plane with a transport up (or light-sweep it, see above),
 * concurrently. Returns the number of planes not up. A plane that ran only
 * a light sweep and found nothing is up (rc 0) with sum and attempts
 * untouched.
 */
unsigned sm_multiplane_bringup(struct sm_mp_plane *planes, unsigned n, const struct sm_mp_cfg *cfg);

void sm_multiplane_print(FILE *out, const struct sm_mp_plane *planes, unsigned n, double wall_s,
			 struct sm_plane_lids *lids);
void sm_multiplane_print_json(FILE *out, const struct sm_mp_plane *planes, unsigned n, double wall_s,
			      struct sm_plane_lids *lids);

#endif
