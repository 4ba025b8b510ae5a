/* SPDX-License-Identifier: MIT */
#ifndef SMD_SM_CORE_H
#define SMD_SM_CORE_H
/*
 * DOC: the bring-up core (one plane, one bring-up)
 *
 * struct sm_core is what one bring-up of one plane works on: the transport
 * and transaction engine, the fabric being swept, its sweep tables
 * (tables.h, indexed like the fabric's nodes and ports, grown with them
 * during the sweep) and the counters of every phase. core.c holds what
 * every phase uses (request contexts, notes, driving the transactions,
 * clearing PortStateChange); the phases are in their own files (phases.h)
 * and bringup.c runs them in order. Calls go one way: bringup.c -> phases -> core.c.
 */
#include "sm/sm.h"
#include "mad/codec.h"
#include "sm/lft_writer.h"
#include "sm/mkey.h"
#include "sm/tables.h"

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
	SM_RQ_MFT_GET,         /* MulticastForwardingTable (mft.c): port = block | position << 9 */
	SM_RQ_MFT_SET,
	SM_RQ_PKEY_GET,        /* P_Key phase (pkey.c): node = its port entry, port = block */
	SM_RQ_PKEY_SET,
	SM_RQ_PORTCFG,         /* port configuration (portcfg.c): PortInfo, SL2VL, VLArb Gets and Sets */
	SM_RQ_SMINFO,          /* discovery of other SMs (smdisc.c): node, port = the IsSM port */
	SM_RQ_COUNT
};

struct sm_core;
struct sm_req;
struct sm_lft_delta;             /* routing/validate.h */

/* What handles the answer to a request (not called for a cancelled one). */
typedef void sm_req_fn(struct sm_core *c, const struct sm_req *rq, const struct sm_txn_result *r);

/* Context of one request (pooled; freed with the core). Its answer goes to c->on[kind]. */
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

	struct sm_sweep_tables tab;   /* path, SwitchInfo, PortInfo, LFT shadows, the SM's node (tables.h) */
	sm_req_fn *on[SM_RQ_COUNT];   /* the handler of each request kind (set by sm_core_req) */

	/* sweep */
	struct sm_probe *next;
	uint32_t n_next, cap_next;
	int changed;               /* inconsistency seen: sweep again */
	char why[256];             /* first reason */
	uint32_t unresponsive;
	/* answers lost during discovery (NodeInfo behind an up port, PortInfo, SwitchInfo): incomplete (sm.h) */
	uint32_t lost;
	char lost_why[192];        /* the first */
	uint32_t merged_nodes, merged_links;   /* kept from the state for what was not seen (merge.c) */

	/* programming */
	uint8_t *unconfigured;         /* per node: switch had no LID when swept (LFT never written) */
	struct sm_state *state;        /* NULL: stateless bring-up */
	uint32_t *trusted;             /* per node: index in the state's fabric whose shadow holds, SM_NONE if unknown */
	uint32_t lft_sw_trusted, lft_sw_unknown, psc_cleared;
	/* incremental sweep */
	int delta_fallback;            /* something it cannot patch: run a full sweep */
	char delta_why[192];
	uint32_t delta_links_down, delta_switches_read;
	uint8_t *delta_lost;           /* per node: SwitchInfo lost (maybe its path crossed a dead link) */
	uint8_t *delta_port;           /* per port of the state's fabric: DELTA_READ, DELTA_UP (delta.c) */
	uint32_t delta_ports;          /* ... its entries */
	uint8_t *delta_fresh;          /* per port of c->f after it: one end of a link that came up (or a new node's) */
	uint8_t *delta_dirty;          /* per node of c->f after it: a port of it read, or new (portcfg.c) */
	uint32_t delta_links_up, delta_nodes_new, delta_switches_gone;
	uint32_t delta_unlinks;        /* links it removed so far (a path may have crossed one) */
	int in_delta;                  /* the incremental sweep runs: traps are counted, not a restart */
	uint32_t late_traps;
	const struct sm_lfts *lfts;
	/*
	 * After a reroute (routing/engine.h reroute()): lft_prev, the state's
	 * tables it started from, and lft_changed, its per-LID map of what it
	 * changed ([top_lid + 1]); the program phase then compares only the
	 * blocks holding changed LIDs on switches whose shadow is lft_prev's
	 * row. NULL otherwise. lft_delta: the blocks that differ from
	 * lft_prev's, per switch, as the incremental validation found them
	 * (routing/validate.h; the program phase then compares nothing);
	 * NULL when it did not run.
	 */
	const struct sm_lfts *lft_prev;
	uint8_t *lft_changed;
	struct sm_lft_delta *lft_delta;
	struct sm_mfts *mfts;          /* computed by the MFT phase (mft.c), then moved into the snapshot */
	uint32_t set_errors;
	uint32_t lft_blocks_written, lft_blocks_read, lft_switches_written;
	uint32_t si_sets, pi_lid_sets, pi_state_sets;
	/* P_Key phase (pkey.c): its working set while it runs, and the tables it leaves for the snapshot */
	void *pkey_run;
	struct sm_pkey_tables *pkeys;
	uint32_t pkey_ports, pkey_blocks_read, pkey_blocks_written;
	int incremental_ok;            /* the incremental sweep sufficed: no port came up or bounced */

	struct sm_req_chunk *chunks;
	uint32_t sets_sent;        /* Sets submitted (none with cfg->read_only: refused) */
	void *pass;                /* a pass's own context (smdisc.c) */
	int err;                   /* first hard error in a callback (-ENOMEM...) */

	/* M_Key: LID ports read protected by a key we do not hold, and their violation counters */
	uint32_t mkey_foreign;
	uint64_t mkey_violations;
	uint32_t mkey_unkept;      /* LID ports whose Set answer did not show the key we set */
	struct sm_guid_map mkey_prev;  /* derived keys: SMA GUIDs reached with the previous secret */
	uint32_t mkey_rotated;     /* ports found holding the previous secret's key (set to the current) */
	struct sm_portcfg_run *pcr;    /* the port configuration phase's own (portcfg.c) */
};

/*
 * The M_Key an SMP to port p of node n carries (the SMA's: a switch's port
 * 0): the single key, or the port's derived key, under the previous
 * secret if the port was found holding that (rotation).
 */
static inline uint64_t sm_core_mkey_guid(const struct sm_core *c, uint64_t guid)
{
	const struct sm_keys *k = c->cfg->keys;
	if (!k || !k->derived)
		return k ? k->mkey : 0;
	return sm_keys_send(k, guid, c->mkey_prev.count && sm_guid_map_get(&c->mkey_prev, guid) != SM_NONE);
}

static inline uint64_t sm_core_mkey_at(const struct sm_core *c, uint32_t n, unsigned p)
{
	return sm_core_mkey_guid(c, c->cfg->keys && c->cfg->keys->derived ? sm_keys_sma_guid(c->f, n, p) : 0);
}

/*
 * The GUID whose key a NodeInfo Get through port p of node n (n SM_NONE:
 * the SM's own node) needs: the SM's port, or the peer the last sweep of
 * this SM saw there (0: unknown; protect bits 2-3 then drop the Get).
 */
uint64_t sm_core_guid_behind(const struct sm_core *c, uint32_t n, unsigned p);

/*
 * Derived keys with a previous secret: the port with this GUID is reached
 * with the previous key from now on (and set to the current one). 1 if it
 * was not already, 0 if it was or there is no previous secret.
 */
int sm_core_mkey_use_prev(struct sm_core *c, uint64_t guid);

/* An empty core for one bring-up (or pass) over t, with its transaction engine. 0 or -EINVAL with err. */
int sm_core_init(struct sm_core *c, struct sm_transport *t, const struct sm_cfg *cfg, struct sm_state *state,
		 char *err, size_t errlen);
/* A request context; fn handles answers to requests of this kind (the same fn for every request of a kind). */
struct sm_req *sm_core_req(struct sm_core *c, uint8_t kind, uint32_t node, uint16_t port, sm_req_fn *fn);
/* Submit smp (directed route) for rq: rq->fn gets the answer. 0 or -errno. */
int sm_core_submit(struct sm_core *c, struct sm_req *rq, const struct sm_smp *smp);
/* Submit a Get of attr along DR path p; fn gets the answer. 0 or -errno. */
int sm_core_get(struct sm_core *c, uint16_t attr, uint32_t mod, const struct sm_dr_path *p, uint8_t kind,
		uint32_t node, uint16_t port, sm_req_fn *fn);
/*
 * IBA: SwitchInfo.PortStateChange is cleared by writing 1 to it. Everything
 * else of si (as read) is written back. The answer updates c->tab.si.
 */
int sm_core_clear_psc(struct sm_core *c, uint32_t node, const struct sm_switch_info *si);
/* Keep the sweep tables as large as the fabric's arrays. 0 or -ENOMEM. */
int sm_core_grow(struct sm_core *c);
/* Record the first hard error of a callback. */
void sm_core_fail(struct sm_core *c, int rc);
void sm_core_note(struct sm_core *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sm_core_changed(struct sm_core *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Drive the transactions to completion; -ETIMEDOUT when the plane stops answering (cfg.dead_after). */
int sm_core_run(struct sm_core *c);
/*
 * The same until at most `pending` requests are left (queued or in
 * flight). Returns c->err too, as sm_core_run().
 */
int sm_core_run_until(struct sm_core *c, unsigned pending);
/*
 * Bound what a phase that submits many requests keeps queued: with more
 * than SM_CORE_SLICE pending, drive them until half are left (as
 * sm_core_run; 0 or its error). The transaction records stay few and in
 * cache, and memory stays bounded (2.5 M LFT blocks at 40k hosts, 5.5 M
 * SL2VL Sets under ibsim at 16k). For the phases' own loops, never from an
 * answer's handler (it would run handlers inside a handler).
 */
#define SM_CORE_SLICE 2048u
int sm_core_throttle(struct sm_core *c);
/* Free what one sweep built (fabric, tables, per-node lists) and the request contexts. */
void sm_core_reset(struct sm_core *c);

#endif
