/* SPDX-License-Identifier: MIT */
#ifndef SMD_HOTPATH_H
#define SMD_HOTPATH_H
/*
 * DOC: hot-path pinning (engine "hotpath" = ftree + the profile's heavy flows pinned)
 *
 * Input: a plane, its base LFTs (plain ftree), the profile's flows of that
 * plane. Output: the base LFTs with some up-going entries changed so that
 * the heaviest flows see the least loaded paths, and a report.
 *
 * Model. Switch levels come from where the CAs sit (leaf = 0, then BFS
 * distance). An LFT entry (switch X, DLID d) is "up" when the base sends d
 * from X to a higher level. Only up entries are ever changed, and only to
 * another up-port: every route keeps its up*-then-down* shape, so no
 * credit loop can appear and every route still reaches its destination
 * (from any upper switch the base routes d down). Down entries, entries of
 * destinations that are not hot, and entries no pinned flow crosses keep
 * their base value, so unprofiled traffic keeps ftree's routes.
 *
 * Hot destinations: flows sorted heaviest first; destinations are taken in
 * that order until top_k flows or `share` of the plane's profile weight is
 * covered. Every profile flow to a hot destination is pinned (its
 * destination-based route is shared by all those flows anyway). With LMC >
 * 0 every LID of a hot destination is a separate choice, and each pinned
 * flow gets the DLID that suits it (reported in dlid[]).
 *
 * Algorithms.
 *  - colour (2- and 3-level trees, "permutation-like": every (source leaf,
 *    destination) unit carries the same weight, every leaf has one link to
 *    every spine (or agg class), and no switch has more units than up-links):
 *    the bipartite multigraph source leaf x destination leaf, one edge per
 *    unit, is edge-coloured with the spines as colours (Konig; alternating
 *    path recolouring). On 3 levels the colours are the agg classes (agg j
 *    of every pod, which share core group j), and a second colouring per
 *    class assigns the cores: source agg x destination agg. No two units
 *    then share a link, so max link load = the unit weight: 1 for a
 *    permutation.
 *  - greedy (any fat tree): flows heaviest first; each takes, among the
 *    up-port choices still free for its (switch, DLID) units (and its LMC
 *    LIDs), the path minimising (max link load after adding it, sum of
 *    loads, entries changed vs base); the choice is then fixed for the
 *    units it used.
 *  - improve (after both): while the busiest switch-switch link exceeds the
 *    host-link bound, move one decided unit whose flows cross that link to
 *    another up-port, or swap two units of one switch, when the result is
 *    strictly below the current maximum on every link touched. Stops at a
 *    local optimum or after `improve_rounds` moves.
 *
 * Loads are exact: every flow's path is the LFT walk, recomputed when a
 * unit it crosses changes; unpinned flows are background load on base routes.
 *
 * Profile EBB: a flow of weight w on a path whose busiest link carries L
 * gets min(1, B / L) of its demand, B = host-link bound (max over hosts of
 * weight sent or received: the capacity a host link must have anyway);
 * EBB = mean over flows. For a permutation (w = 1, B = 1) this is FIELD.md's
 * definition 1 / (most flows on a link of the path).
 *
 * Library code: no logging, 0 or negative errno with a message.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "model/fabric.h"
#include "routing/engine.h"
#include "routing/metrics.h"

enum sm_hotpath_method {
	SM_HOTPATH_AUTO = 0,   /* colour when the conditions hold, else greedy */
	SM_HOTPATH_COLOUR,     /* colour, greedy when the conditions do not hold (noted) */
	SM_HOTPATH_GREEDY,
};

struct sm_hotpath_opts {
	unsigned top_k;          /* pin destinations of the K heaviest flows; 0 = no limit */
	double share;            /* ... or enough to cover this share (0, 1] of the weight; default 1 */
	enum sm_hotpath_method method;
	unsigned improve_rounds; /* local improvement moves; default 100000; 0 in struct = default */
	int no_improve;          /* skip local improvement */
	int no_lmc;              /* use base LIDs only, even with LMC > 0 */
};

void sm_hotpath_opts_init(struct sm_hotpath_opts *o);

struct sm_hotpath_report {
	unsigned plane;
	unsigned levels;             /* switch levels found (2 or 3 for fat trees) */
	const char *method;          /* "colour", "greedy", "none" */
	size_t flows;                /* profile flows of this plane */
	size_t pinned;               /* flows whose routes the engine chose */
	uint32_t hot_dests;          /* destination ports pinned */
	uint32_t hot_lids;           /* their LIDs (more than hot_dests with LMC) */
	size_t unroutable;           /* flows with no working route (should be 0) */
	double total_weight, pinned_weight;
	double host_bound;           /* max over hosts of weight sent or received */
	double max_load_before, max_load_after;   /* incl. host links */
	double ebb_before, ebb_after;
	unsigned improve_moves;      /* successful local improvement moves and swaps */
	uint64_t lft_changed;        /* LFT entries that differ from the base */
	uint64_t lft_blocks_changed; /* 64-entry LFT blocks holding them (what a live change rewrites) */
	uint32_t lft_switches_changed;
	double seconds;
	char note[160];              /* e.g. why colour was not used */
	/* per plane flow (the input flows of this plane, in the order given): DLID to use */
	size_t n_flows;
	struct sm_flow *flow;
	uint16_t *dlid;
	uint8_t *is_pinned;
};

/*
 * Pin. base: the plane's plain ftree LFTs; out: same shape (usually a copy
 * of base; entries are overwritten where pinned). flows: any flows, those of
 * other planes are ignored. rep may be NULL; else it is filled and must be
 * released with sm_hotpath_report_clear(). Returns 0, -ENOMEM, or -EINVAL
 * (LFTs not of this plane/fabric, message in err).
 */
int sm_hotpath_pin(const struct sm_fabric *f, unsigned plane, const struct sm_lfts *base,
		   const struct sm_flow *flows, size_t n_flows, const struct sm_hotpath_opts *o,
		   struct sm_lfts *out, struct sm_hotpath_report *rep, char *err, size_t errlen);

void sm_hotpath_report_clear(struct sm_hotpath_report *r); /* frees arrays; accepts NULL */

/*
 * The DLID each flow of the report should use, one line per flow:
 *   "SRC DST WEIGHT DLID pinned|base"
 * SRC/DST as quoted node descriptions (port GUIDs when a description is
 * empty), so the lines read back as a profile if the last two fields are
 * cut. With LMC > 0 this is what hosts (or SA path records) must use for
 * the pinned paths. 0 or -EIO.
 */
int sm_hotpath_write_dlids(const struct sm_fabric *f, const struct sm_hotpath_report *r, FILE *out);

/* "hotpath plane0: ..." one line for logs and ctx->msg. */
void sm_hotpath_report_format(const struct sm_hotpath_report *r, char *buf, size_t len);

/*
 * Evaluator: walk every flow of `plane` through l (DLID dlids[i] when dlids
 * is non-NULL, else the destination's base LID), sum weights per directed
 * link (host links included). Outputs the max link load, the host-link
 * bound, the profile EBB (see DOC) and the number of flows whose walk
 * failed (loop, black hole, wrong delivery). Any output may be NULL.
 * 0 or -ENOMEM.
 */
int sm_hotpath_eval(const struct sm_fabric *f, unsigned plane, const struct sm_lfts *l,
		    const struct sm_flow *flows, const uint16_t *dlids, size_t n_flows, double *max_load,
		    double *host_bound, double *ebb, size_t *unroutable);

/* Engine descriptor ("hotpath"): routing/hotpath/hotpath.c. */
extern const struct sm_engine_ops sm_engine_hotpath;

/* The report of the last route() of `plane` by an engine state from sm_engine_hotpath.init, or NULL. */
const struct sm_hotpath_report *sm_hotpath_last_report(const void *state, unsigned plane);

#endif
