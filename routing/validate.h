/* SPDX-License-Identifier: MIT */
#ifndef SMD_VALIDATE_H
#define SMD_VALIDATE_H
/*
 * DOC: route validation
 *
 * Checks one plane's LFTs against the fabric before they are used:
 *  - every endpoint port (CA or router port with a LID) reaches every
 *    endpoint LID of the plane (whole LMC ranges): `pairs`, a failure is
 *    fatal;
 *  - no loop, no black hole (SM_LFT_NONE, a port out of range or with no
 *    peer, port 0 at the wrong switch, or delivery to the wrong endpoint);
 *  - switch LIDs (management destinations) from every endpoint and every
 *    switch: `sw_pairs`. A loop there is fatal; an unrouted pair is only
 *    counted, and fatal with SM_VALIDATE_STRICT_SWITCHES: up/down engines
 *    (updn, ftree) cannot route some of them without breaking their
 *    deadlock freedom (on a degraded 2-level tree, a leaf that lost its
 *    cable to spine k has no up-then-down path to spine k's LID);
 *  - the channel-dependency graph is acyclic (no credit loop).
 *
 * Routes are destination based, so for one destination LID the routes of all
 * switches form a functional graph (each switch has one next hop). The walk
 * resolves every switch once per LID (memoised, iterative), so a plane costs
 * O(LIDs x switches) rather than O(hosts^2 x hops), and loops are found
 * exactly, without a hop limit.
 *
 * Pairs in different physical parts of the plane (no cable path at all)
 * are counted as `disconnected`, not as failures: routing cannot fix them.
 *
 * CDG: vertices are directed switch-to-switch links; an edge a -> b exists
 * when some route from an endpoint to an endpoint LID uses b right after a
 * (data traffic; with SM_VALIDATE_CDG_SWITCH_LIDS routes to switch LIDs
 * count too. minhop's routes to the LID of a spine a leaf lost its cable
 * to turn down then up and can close a cycle of management-only
 * dependencies on a degraded fat tree). Only
 * switches that carry endpoint traffic to the LID contribute (a switch on
 * no endpoint's path to a LID adds no dependency). Edges are kept as a
 * bitset per link over the ports of the next switch (deduplicated, a few
 * bits per link), and cycles are found with Kahn's algorithm (no
 * recursion); one cycle is then extracted by walking back over the
 * remaining vertices.
 */
#include <stddef.h>
#include <stdint.h>
#include "model/fabric.h"
#include "routing/engine.h"

#define SM_VALIDATE_NO_CDG 0x1           /* skip the credit-loop check */
#define SM_VALIDATE_ALLOW_CREDIT_LOOP 0x2 /* report a credit loop but do not fail on it */
#define SM_VALIDATE_STRICT_SWITCHES 0x4  /* fail when a switch LID is unrouted from anywhere */
#define SM_VALIDATE_CDG_SWITCH_LIDS 0x8  /* CDG: add endpoint routes to switch LIDs too */

#define SM_VALIDATE_CYCLE_MAX 16

enum sm_route_fault {
	SM_FAULT_NONE = 0,
	SM_FAULT_BLACK_HOLE,     /* SM_LFT_NONE / bad or unconnected port / wrong delivery */
	SM_FAULT_LOOP,
};

struct sm_validation {
	uint32_t hosts;          /* endpoint ports with a LID */
	uint32_t switches;
	uint32_t lids;           /* destination LIDs checked (LMC ranges included) */
	uint32_t sw_lids;        /* of those, switch LIDs */
	uint64_t pairs;          /* (endpoint port, endpoint LID) pairs, own LIDs excluded */
	uint64_t reachable;
	uint64_t unreachable;    /* failed pairs within one physical part = loops + black_holes */
	uint64_t loops;
	uint64_t black_holes;
	uint64_t disconnected;   /* pairs in different physical parts (not counted as failures) */
	uint64_t sw_pairs;       /* (endpoint port or switch, switch LID) pairs */
	uint64_t sw_unreachable; /* of those, failed within one part */
	uint64_t sw_loops;       /* of those, looping (always fatal) */
	unsigned max_hops;       /* most switch-to-switch links on a working endpoint route */
	int credit_loop;         /* 1 cycle, 0 none, -1 not checked */
	/* first failure seen (kind SM_FAULT_NONE if none) */
	struct {
		enum sm_route_fault kind;
		uint32_t src_port;   /* fabric port index of the source (endpoint or switch port 0) */
		uint16_t dlid;
		uint32_t at_node;    /* node where the walk failed */
		uint8_t at_port;     /* its LFT entry there */
	} example;
	unsigned cycle_len;      /* links in cycle[] (a prefix if the cycle is longer) */
	uint32_t cycle[SM_VALIDATE_CYCLE_MAX]; /* egress port indices of one CDG cycle, in order */
	uint32_t rechecked;      /* incremental: destination LIDs walked (0: a full validation) */
	uint32_t walks;          /* incremental: switches the walks started from (changed or lost-cable entries) */
	double seconds;
	char msg[512];           /* one-line summary: "ok: ..." or the first problem */
};

/*
 * Validate plane `plane` routed by `l`. 0 (see sm_validate_ok() for the
 * verdict) or -ENOMEM / -EINVAL (l is not for this plane / fabric).
 */
int sm_validate(const struct sm_fabric *f, unsigned plane, const struct sm_lfts *l,
		unsigned flags, struct sm_validation *v);

/*
 * Verdict: 1 when usable: no unreachable endpoint pair, no loop toward a
 * switch LID (no unrouted one either with SM_VALIDATE_STRICT_SWITCHES), no
 * credit loop (unless SM_VALIDATE_ALLOW_CREDIT_LOOP), and something is
 * reachable when there is anything to reach.
 */
int sm_validate_ok(const struct sm_validation *v, unsigned flags);

/*
 * The 64-LID blocks in which a table differs from the one it was rerouted
 * from, per switch slot (validate_incr.c finds them; the program phase
 * then writes them without comparing the rows again).
 */
struct sm_lft_delta {
	const struct sm_lfts *l, *prev;  /* the tables compared (identity: check before use) */
	const uint8_t *changed;          /* the per-LID account the comparison trusted (NULL: none) */
	uint32_t n_switches;             /* l's */
	uint32_t *off;                   /* [n_switches + 1]: blocks of slot s are blk[off[s] .. off[s+1]) */
	uint16_t *blk;                   /* ascending per slot */
	uint64_t entries;                /* entries that differ */
};

void sm_lft_delta_free(struct sm_lft_delta *d);  /* accepts NULL */

/*
 * Incremental validation after a reroute (validate_incr.c). prev: the
 * fabric and LFTs of the plane as last accepted (validated in full, or
 * incrementally from such), with the same node and port numbering.
 */
struct sm_validate_prev {
	const struct sm_fabric *f;
	const struct sm_lfts *l;
	/*
	 * Optional, [l->top_lid + 1]: the LIDs whose column may differ from
	 * l's (an engine's reroute() account, engine.h); NULL: the tables are
	 * compared. Only an engine the chain trusts for the incremental check
	 * (registry.c, accept_output) gets its account used.
	 */
	const uint8_t *changed;
	/*
	 * Optional: sm_validate_incremental() frees *delta_out and sets it to
	 * NULL, then, when the incremental check applied, to the blocks that
	 * differ between the tables it checked and l (the caller frees it).
	 */
	struct sm_lft_delta **delta_out;
};

/*
 * Like sm_validate(), but when f is prev->f minus links (same nodes, same
 * ports, same LIDs; links only removed), only the switches whose entry
 * changed (or names a lost cable) are walked, toward the LIDs concerned:
 * v->rechecked > 0 (those LIDs), the verdict and the failure counts are
 * the full check's; the other counts cover the LIDs found failing (walked
 * in full for them) only; no credit-loop check (credit_loop -1: it needs
 * every destination's routes). In every other case a full sm_validate()
 * (v->rechecked 0).
 */
int sm_validate_incremental(const struct sm_fabric *f, unsigned plane, const struct sm_lfts *l,
			    const struct sm_validate_prev *prev, unsigned flags, struct sm_validation *v);

/*
 * Credit-loop check alone (for metrics): 1 if the CDG has a cycle, 0 if
 * not, negative errno on error. v may be NULL; if given, only credit_loop,
 * cycle_len and cycle[] are written.
 */
int sm_cdg_check(const struct sm_fabric *f, unsigned plane, const struct sm_lfts *l,
		 struct sm_validation *v);

/* "S[12]->S[3] -> ..." text for v->cycle (node descriptions or GUIDs). */
void sm_validate_format_cycle(const struct sm_fabric *f, const struct sm_validation *v,
			      char *buf, size_t len);

#endif
