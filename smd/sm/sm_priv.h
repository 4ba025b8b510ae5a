/* SPDX-License-Identifier: MIT */
#ifndef SMD_SM_PRIV_H
#define SMD_SM_PRIV_H
/*
 * DOC: SM core internals shared by sm.c (orchestration, LIDs, programming,
 * activation) and sm_sweep.c (discovery). One struct sm_core lives for one
 * bring-up of one plane. Per-node and per-port side tables are indexed like
 * the fabric's nodes and ports and grow with them during the sweep.
 */
#include "sm/sm.h"
#include "mad/codec.h"
#include "sm/lft_writer.h"
#include "sm/mkey.h"

enum sm_req_kind {
	SM_RQ_NODE_INFO = 1,   /* probe: node = parent (SM_NONE for the SM node), port = egress */
	SM_RQ_NODE_DESC,
	SM_RQ_PORT_INFO,
	SM_RQ_PORT_RECHECK,    /* PortInfo after a lost probe */
	SM_RQ_SWITCH_INFO,
	SM_RQ_PI_SET_LID,
	SM_RQ_PI_SET_STATE,
	SM_RQ_SI_SET,
	SM_RQ_LFT_GET,
	SM_RQ_LFT_SET,
	SM_RQ_SI_CLEAR,        /* Set SwitchInfo writing 1 to PortStateChange (during the sweep) */
	SM_RQ_DELTA_SI,        /* incremental sweep: SwitchInfo of a known switch */
	SM_RQ_DELTA_PI,        /* incremental sweep: PortInfo of a port of a switch that flagged a change */
};

/* The daemon's per-plane memory (sm.h "state across bring-ups"). */
struct sm_state {
	struct sm_fabric *f;           /* last fabric that reached the program phase (own copy) */
	struct sm_dr_path *path;       /* per node of f */
	struct sm_lft_shadow *shadow;  /* per node of f (switches; others empty) */
	uint32_t n_nodes;              /* entries of path and shadow */
	uint32_t n_switches;
	int valid;                     /* the bring-up that made it succeeded */
	/* for the incremental sweep: what the core knew at the end (indexed like f) */
	struct sm_port_info *pi;
	uint8_t *pi_ok;
	struct sm_switch_info *si;
	uint8_t *si_ok;
	uint32_t sm_node;
	uint8_t sm_portnum;
};

struct sm_core;

/* Context of one request (pooled; freed with the core). */
struct sm_req {
	struct sm_core *c;
	uint32_t node;
	uint16_t port;      /* port number, or LFT block */
	uint8_t kind;
	uint8_t aux;        /* e.g. wanted port state */
};

struct sm_req_chunk {
	struct sm_req_chunk *next;
	unsigned used;
	struct sm_req r[2048];
};

struct sm_probe {
	uint32_t node;
	uint8_t port;
};

struct sm_core {
	struct sm_transport *t;
	struct sm_txn *txn;
	const struct sm_cfg *cfg;
	struct sm_fabric *f;
	unsigned plane;

	/* per node */
	struct sm_dr_path *path;
	struct sm_switch_info *si;
	uint8_t *si_ok;
	uint32_t cap_nodes;
	/* per port */
	struct sm_port_info *pi;
	uint8_t *pi_ok;
	uint32_t cap_ports;

	/* sweep */
	struct sm_probe *next;
	uint32_t n_next, cap_next;
	int changed;               /* inconsistency seen: sweep again */
	char why[256];             /* first reason */
	uint32_t unresponsive;
	uint32_t sm_node;          /* node index of the SM's node */
	uint8_t sm_portnum;

	/* programming */
	struct sm_lft_shadow *shadow;  /* per node (switches) */
	uint32_t n_shadow;
	uint8_t *unconfigured;         /* per node: switch had no LID when swept (LFT never written) */
	struct sm_state *state;        /* NULL: stateless bring-up */
	uint32_t *trusted;             /* per node: index in state->f whose shadow holds, SM_NONE if unknown */
	uint32_t lft_sw_trusted, lft_sw_unknown, psc_cleared;
	/* incremental sweep */
	int delta_fallback;            /* something it cannot patch: run a full sweep */
	char delta_why[192];
	uint32_t delta_links_down, delta_switches_read;
	uint8_t *delta_lost;           /* per node: SwitchInfo lost (maybe its path crossed a dead link) */
	int in_delta;                  /* the incremental sweep runs: traps are counted, not a restart */
	uint32_t late_traps;
	const struct sm_lfts *lfts;
	uint32_t set_errors;
	uint32_t lft_blocks_written, lft_blocks_read, lft_switches_written;
	uint32_t si_sets, pi_lid_sets, pi_state_sets;

	struct sm_req_chunk *chunks;
	int err;                   /* first hard error in a callback (-ENOMEM...) */

	/* M_Key: LID ports read protected by a key we do not hold, and their violation counters */
	uint32_t mkey_foreign;
	uint64_t mkey_violations;
	uint32_t mkey_unkept;      /* LID ports whose Set answer did not show the key we set */
};

/* The M_Key every SMP carries (0 without keys). */
static inline uint64_t sm_core_mkey(const struct sm_core *c)
{
	return c->cfg->keys ? c->cfg->keys->mkey : 0;
}

struct sm_req *sm_core_req(struct sm_core *c, uint8_t kind, uint32_t node, uint16_t port);
int sm_core_grow(struct sm_core *c);
void sm_core_note(struct sm_core *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sm_core_changed(struct sm_core *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* One heavy sweep into c->f (empty fabric). 0, or -errno for hard failures. */
int sm_sweep_once(struct sm_core *c, char *err, size_t errlen);
/*
 * Renumber c->f (and the side tables) in node-GUID order: routing input
 * independent of timing. keep (per node, may be NULL = all): nodes with 0
 * are left out, with their links. The result carries no LIDs.
 */
int sm_sweep_canonicalize(struct sm_core *c, const uint8_t *keep);
/*
 * Incremental sweep from c->state (valid, with side tables): c->f becomes
 * the state's fabric patched with what changed: SwitchInfo of every known
 * switch; PortInfo of every port of the switches that flag PortStateChange
 * (cleared); links whose port went DOWN removed, nodes no longer reachable
 * left out; renumbered. Returns 0, 1 when only a full sweep can tell
 * (c->delta_why: a switch silent or reset, a port that came up or bounced,
 * the state not matching), or -errno.
 */
int sm_sweep_delta(struct sm_core *c, char *err, size_t errlen);

/* Drive the transactions to completion; -ETIMEDOUT when the plane stops answering (cfg.dead_after). */
int sm_core_run(struct sm_core *c);

#endif
