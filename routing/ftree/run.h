/* SPDX-License-Identifier: MIT */
#ifndef SMD_FTREE_RUN_H
#define SMD_FTREE_RUN_H
/*
 * DOC: ftree routing state of one ft_route() call (private to route.c and displace.c)
 *
 * route.c walks the destination switches and fills the LFT entries;
 * displace.c chooses the up port of a route whose ideal slot cannot be
 * used, and keeps, per directed switch link, the shift windows in which
 * such moved routes load it (see there).
 */
#include <stdint.h>
#include "routing/ftree/model.h"

/*
 * Entry for LID lid of the switch whose handle is c (x->col + slot): the
 * LFT rows (struct sm_lfts, row s at s * nl), so the handle c of slot s
 * is s bytes past x->col and its row starts s * (nl - 1) bytes further.
 */
#define COL(c, lid) ((c)[(size_t)((c) - x->col) * (x->nl - 1) + (lid)])

#define FT_CHAIN (FT_MAX_RANK + 2) /* switches of a destination's ideal chain, T first */

/* A cyclic interval of shifts [start, start + len) mod N in which one moved route loads a link. */
struct ft_iv {
	uint32_t start, len;
};

/* The intervals of one link in one direction (contiguous: scanned for every candidate path). */
struct ft_ivec {
	struct ft_iv *v;
	uint32_t n, cap;
};

/* One hop of a route (displace.c): the switch behind a port and the interval slot of that direction. */
struct ft_hop {
	uint32_t nx;           /* peer slot, SM_NONE: no ranked switch-switch link of the model */
	uint32_t iv;           /* x->iv slot: 2 * up link, + 1 going down */
};

#define FT_PATH (2 * FT_MAX_RANK + 2) /* links of a route from a switch to T, at most */

/* The path from one switch on toward T's destination di (displace.c, suffix()). */
struct ft_sfx {
	uint32_t gen, di;      /* valid while gen == x->gen, for destination di */
	int32_t n;             /* links in v, -1: a hop is not routed */
	uint32_t busy;         /* other hosts whose ideal down links v takes (x->owner; 0 without it) */
	uint32_t v[FT_PATH - 1];
};

/* The busy count and last link of the path from one switch toward T's destination di (displace.c). */
struct ft_sbusy {
	uint32_t gen, di, busy, last;
};

#define FT_OWNERS 0xfffffffeu /* x->owner: more than one host */
#define FT_SBUSY 64 /* destinations of one destination switch kept per switch (by di mod FT_SBUSY) */

struct ft_groups; /* route.c: switches whose rows for T are copies of one */

struct ft_run {
	const struct ft_model *m;
	struct ft_groups *grp;
	uint32_t gen;
	uint32_t *dstamp;      /* [nsw] == gen: in D */
	uint32_t *rstamp;      /* [nsw] == gen: R known, value in rval */
	int rcomplete;         /* R was computed for every switch (mark_reach_set): unmarked means no */
	uint32_t *xstamp;      /* [nsw] == gen: no up/down path, but a detour down (route_detour) */
	uint32_t *vstamp;      /* [nsw] == gen: routed by a valley (route_valleys) */
	uint32_t *valley;      /* [nsw] switches left for route_valleys, ascending rank */
	uint32_t nvalley;
	uint8_t *rval;
	uint32_t *cand_head;   /* [nsw] first down candidate of a D switch */
	uint32_t *cand_next;   /* [up links] */
	uint8_t *cand_port;
	uint32_t *queue;       /* [nsw] BFS queue; queue[0 .. n_down) is D of the current T */
	uint32_t n_down;
	uint32_t n_ranked;     /* by_rank[0 .. n_ranked) have a rank */
	uint32_t *hleaf;       /* [nsw] leaves with hosts */
	uint32_t n_hleaf;
	uint32_t t;            /* destination switch being routed */
	uint32_t nidx;         /* host indices 0..nidx-1 (shift permutations wrap there) */
	uint8_t *col;          /* the LFTs being filled (out->ports, row-major), see COL */
	size_t nl;             /* LIDs per row: top_lid + 1 */
	uint8_t cands[256];
	uint32_t run;          /* d0[0 .. run) of T have consecutive LIDs and indices (a leaf's hosts) */
	uint64_t displaced;
	/* displace.c */
	uint32_t *disp;        /* [up links] moved routes taken by each up port */
	uint32_t *link_of;     /* [fabric ports] up-link index of a switch port on either end, SM_NONE */
	uint32_t *hop_off;     /* [nsw + 1] hop[hop_off[s] + p]: port p (0 .. nports) of switch s */
	struct ft_hop *hop;
	struct ft_ivec *iv;    /* [2 * up links] intervals per link: [2e] upward, [2e + 1] downward */
	uint64_t *oit;         /* [4 * nsw] slots of the children that lead to s (displace.c, on_ideal) */
	uint16_t *oit_u;       /* [nsw] their common slot count + 1; 0: none in common */
	struct ft_sfx *sfx;    /* [nsw] path from each switch toward the destination last asked */
	uint64_t *ivmask;      /* [2 * up links] buckets of bw shifts that some interval of x->iv[] meets */
	uint32_t bw;           /* shifts per bucket (bit b: shifts [b * bw, b * bw + bw)): nidx / 64 + 1 */
	int oom;               /* an interval list could not grow: routes stay valid, spreading degrades */
	unsigned stack;        /* most recorded intervals of one list covering one shift (repair.c's trigger) */
	uint32_t *chain;       /* [dests of T * FT_CHAIN] ideal chain above T per destination, see displace.c */
	uint32_t *rep;         /* [n_dest] the down link (x->iv slot) into T the first moved route of a destination took */
	uint32_t *sticky;      /* [up slots] the up link that last replaced a missing slot */
	uint16_t *hcnt;        /* [up links] 2 levels: a leaf's hosts coming down each of its links (spread.c) */
	uint32_t *pre_q, *pre_i; /* [n_dest] 2 levels: preset hosts (rep): switch they come in by, index */
	uint32_t npre, plen;   /* plen: most hosts of a leaf (the shifts of one moved route) */
	uint64_t *near;        /* [dests of T * nw] switches a preset host near each destination comes in by */
	uint32_t nw;           /* words of a switch bit set */
	uint32_t *tl, *tlst;   /* [nsw] 2 levels: T's link to switch q while tlst[q] == tlgen (ft_tlinks) */
	uint32_t tlgen;
	uint32_t *cstamp;      /* [nsw] == gen: cmask holds T's destinations (d0 index < 64) whose */
	uint64_t *cmask;       /* route at this switch is a conflict its children should route around */
	uint32_t *owner;       /* [2 * up links] host index whose ideal chain takes a down link (3 levels, degraded) */
	struct ft_sbusy *sbusy; /* [nsw * FT_SBUSY] busy count and last link of a switch's path per destination */
};

int ft_reach_slow(struct ft_run *x, uint32_t s);

/* route.c: the run's tables for model m writing into out (0 or -ENOMEM; ft_run_free either way). */
int ft_run_init(struct ft_run *x, const struct ft_model *m, struct sm_lfts *out);
void ft_run_free(struct ft_run *x);
/*
 * Route destinations d0[0 .. nd) of switch t (all of them: indices within
 * d0 matter) at every switch of t's component.
 */
void ft_route_dests(struct ft_run *x, uint32_t t, const struct ft_dest *d0, uint32_t nd);
/* After ft_route_dests(x, t, ...): leaves with hosts that have no up/down path to t (*bad_from: one). */
uint64_t ft_bad_pairs(struct ft_run *x, uint32_t t, uint32_t *bad_from);

/* Destination switch t has CA LIDs (they come first in its destination list). */
static inline int ft_has_hosts(const struct ft_model *m, uint32_t t)
{
	return m->dest_off[t + 1] > m->dest_off[t] && m->dest[m->dest_off[t]].port != 0;
}

/* Switch s has an up/down path to T (memoised per T; the common cases inline). */
static inline int ft_reach(struct ft_run *x, uint32_t s)
{
	if (x->dstamp[s] == x->gen)
		return 1;
	if (x->rstamp[s] == x->gen)
		return x->rval[s];
	return ft_reach_slow(x, s);
}

/* displace.c */
int ft_displace_init(struct ft_run *x);
/* spread.c: preset x->rep for the hosts whose leaf lost their ideal parent (and x->hcnt) */
void ft_rep_preset(struct ft_run *x);
/* spread.c: 2 levels, the cost of a moved route of a leaf's own lost uplink coming into T by last */
uint32_t ft_own_pref(const struct ft_run *x, uint32_t i, uint32_t e, uint32_t last);
/* spread.c: T's links by parent and the presets near T's destinations (once per destination switch t) */
void ft_tlinks(struct ft_run *x, uint32_t t, const struct ft_dest *d0, uint32_t nd);
/*
 * spread.c: at most try_up's score bits below 1 << 32 on 2 levels for up
 * link e toward T's destination i (rep: its preset way in), before the
 * path is known: exact when the parent has one link to T.
 */
uint64_t ft_own_bound(const struct ft_run *x, uint32_t i, uint32_t e, uint32_t rep);
/* spread.c: then the fewer leaves behind up link e's parent (below 256) */
static inline uint64_t ft_own_tie(const struct ft_run *x, uint32_t e)
{
	uint32_t q = x->m->up_peer[e], d = x->m->dn_off[q + 1] - x->m->dn_off[q];
	return d < 255 ? d : 255;
}
void ft_displace_free(struct ft_run *x);
/* The ideal chains of T's destinations d0[0 .. nd) (called once per destination switch). */
void ft_chains(struct ft_run *x, uint32_t t, const struct ft_dest *d0, uint32_t nd);
/*
 * Up port of switch s for T's destination i (d0[i]) whose ideal slot j
 * cannot be used (or leads to a conflict, ft_conflict); SM_LFT_NONE when
 * no parent reaches T.
 */
uint8_t ft_displace(struct ft_run *x, uint32_t s, uint32_t j, const struct ft_dest *d0, uint32_t i);

/* repair.c: after every destination is routed, a degraded tree's worst links relieved (see there). */
int ft_repair_wanted(const struct ft_run *x);
/* Entries changed (0: nothing to do, or the tree is too large to count). */
uint64_t ft_repair(struct ft_run *x);

/* Switch q's route for T's destination i is a conflict (displace.c) its children route around. */
static inline int ft_conflict(const struct ft_run *x, uint32_t q, uint32_t i)
{
	return x->cstamp[q] == x->gen && i < 64 && (x->cmask[q] >> i & 1);
}

#endif
