/* SPDX-License-Identifier: MIT */
#ifndef SMD_SM_H
#define SMD_SM_H
/*
 * DOC: SM core (one plane)
 *
 * Brings one subnet up over one transport, in phases:
 *   discover  heavy sweep: level-synchronous BFS over directed-route paths
 *             from the SM's port (sweep.c). Per node one NodeInfo per
 *             link end reached, one NodeDescription, SwitchInfo (switches),
 *             PortInfo of every switch port / reached CA port; a port is
 *             probed (NodeInfo through it) only if it is up and its peer is
 *             still unknown after the previous level, so a link costs one
 *             NodeInfo. Inconsistencies (a port linked twice, a node that
 *             changed type, a probe lost behind a port that then went down,
 *             a trap) restart the sweep, at most cfg.sweep_retries times.
 *             PortStateChange read set is cleared at once (Set SwitchInfo
 *             writing 1). With cfg.incremental and a valid struct sm_state
 *             (below), the sweep is first tried incrementally: the state's
 *             fabric patched with what the switches that flag
 *             PortStateChange show, what came up explored (delta.c). A full sweep that lost answers is
 *             incomplete (struct sm_summary.incomplete): what it could not
 *             see is kept from the state (merge.c), never dropped.
 *   lids      sm_lidmgr_assign() (persisted file, then fabric LIDs, then
 *             fresh), the table saved atomically in cfg.state_dir, then
 *             Set PortInfo (LID, LMC, SM LID, subnet prefix) on every
 *             switch port 0 and CA port whose values differ.
 *   route     the engine chain (routing/registry.h), validated.
 *   program   per switch: SwitchInfo LinearFDBTop, then only the LFT blocks
 *             that differ (lft_writer.h). Blocks of a switch that was
 *             configured before (port 0 has a LID) are read back first, unless a
 *             struct sm_state (below) still knows them; a switch without a
 *             LID has never been programmed, so it is written without
 *             reading.
 *   mft       with cfg.mcast (issue 14, mft.h): one spanning tree per
 *             group, MFT blocks written where they differ from what the
 *             switches hold (shadows as for LFTs); timed with program.
 *   activate  Set PortInfo ARMED on every link port in INIT (switch
 *             external ports and CA ports, the SM's own included), then
 *             ACTIVE on every ARMED port.
 * Everything within a phase is submitted at once to the transaction engine,
 * which keeps cfg.txn.window SMPs in flight (cfg.txn.per_dest per node).
 *
 * A second run on a configured fabric keeps every LID (they come back from
 * the file or the fabric), writes no LFT block and sets no PortInfo.
 *
 * Library code: nothing is logged; notes (LID conflicts, unresponsive
 * ports, sweep retries) go to the note callback, errors to err.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/fabric.h"
#include "sm/lidmgr.h"
#include "mad/txn.h"

struct sm_chain;
struct sm_lfts;
struct sm_keys;
struct sm_snapshot;
struct sm_mc_set;
struct sm_partitions;
struct sm_portcfg;
struct sm_nbr;

struct sm_cfg {
	unsigned plane;              /* plane index the fabric is built into */
	unsigned lmc;                /* 0..7 */
	uint64_t subnet_prefix;      /* default 0xfe80000000000000 */
	uint8_t subnet_timeout;      /* PortInfo.SubnetTimeout, default 18 (as OpenSM) */
	const char *state_dir;       /* guid2lid is kept here; NULL: do not persist */
	const char *guid2lid;        /* read LIDs from this file (OpenSM's) instead of state_dir's */
	unsigned sweep_retries;      /* extra heavy sweeps when the fabric changes, default 3 */
	bool read_lfts;              /* read back LFT blocks of configured switches (default true) */
	/*
	 * With a valid state (sm_bringup_state): sweep incrementally (see
	 * sm_state): SwitchInfo of every known switch, PortInfo only at switches
	 * that flag PortStateChange, links that went down removed (a switch
	 * every link of which went down left out), ports that came up explored
	 * from there only (a link, host or switch that comes back, phases.h);
	 * anything else (a switch silent along a path that holds or reset, an
	 * answer lost while exploring) falls back to the full sweep. Routing
	 * then runs on the patched fabric as on a swept one, so the LFTs are
	 * those of a full sweep, and only the blocks that differ are written.
	 * Default false (the daemon sets it for sweeps caused by traps and
	 * light sweeps).
	 */
	bool incremental;
	/*
	 * After an incremental sweep that only removed links, the new routes
	 * are validated incrementally against the state's (only the destination
	 * LIDs whose routes changed or crossed a removed link, no credit-loop
	 * check: routing/validate_incr.c); heavy sweeps validate in full. True:
	 * always in full.
	 */
	bool validate_full;
	/*
	 * After an incremental sweep that only removed links, an engine with a
	 * reroute() hook (ftree) changes only the destinations whose routes
	 * crossed them, from the state's routes (routing/engine.h). True: route
	 * in full every time (to compare).
	 */
	bool route_full;
	/*
	 * With a state, a cycle ends by giving freed memory back to the system
	 * (state.h sm_state_give_back(): spare blocks aged, malloc_trim).
	 * True: the caller does it itself once idle (the daemon's worker, after
	 * every plane's cycle), out of the path from a trap to programmed LFTs.
	 */
	bool defer_give_back;
	/*
	 * A plane that stops answering is given up fast: when this many SMPs in
	 * a row are lost (retries exhausted) with no answer at all in between,
	 * the phase fails with -ETIMEDOUT instead of timing out every request
	 * that is left. Default 64; 0 disables.
	 */
	unsigned dead_after;
	/*
	 * Traffic profile (smd/model/profile.h) for the routing engines (hotpath,
	 * planes). Resolved against each swept fabric anew, so port indices are
	 * always this sweep's. A profile that does not load fails the route
	 * phase with its FILE:LINE message; one none of whose endpoints is in
	 * this plane is noted and the plane routed without it. NULL: none.
	 */
	const char *profile_path;
	struct sm_txn_cfg txn;
	/*
	 * Multi-plane (smd/sm/planelid.h): fill want[port index] with the LID each
	 * LID-bearing port of the plane must get, given the LIDs they hold now
	 * (cur). The LID manager then keeps those (they win over the fabric's
	 * LIDs); with this hook the per-plane guid2lid file is not used. NULL: off.
	 */
	int (*lid_want)(void *arg, const struct sm_fabric *f, unsigned plane, const uint16_t *cur,
			uint16_t *want);
	void *lid_want_arg;
	/*
	 * Called once at the end of every bring-up that got as far as the LID
	 * phase, with the plane's snapshot (snapshot.h): the discovered fabric
	 * with its LIDs and, if routing ran, the LFTs as programmed; snap->up
	 * says whether the bring-up succeeded. The snapshot is immutable; take a
	 * reference (sm_snapshot_ref) to keep it past the call. From the
	 * plane's thread. NULL: off.
	 */
	void (*published)(void *arg, const struct sm_snapshot *snap);
	void *published_arg;
	uint64_t cycle;              /* stamped on the snapshot (struct sm_snapshot.cycle); caller-defined */
	/*
	 * Progress (smctl): called as each phase of a bring-up starts, with
	 * its enum sm_phase value, from the plane's thread. NULL: off.
	 */
	void (*phase)(void *arg, unsigned plane, unsigned phase);
	void *phase_arg;
	/*
	 * A trap (SubnTrap) that came in during a sweep, heavy or light, with
	 * the LID it came from: the daemon hands trap 128 to the plane's SA,
	 * which Reports it to subscribers. From the plane's thread. NULL: off.
	 */
	void (*trap)(void *arg, unsigned plane, const struct sm_smp *smp, uint16_t slid);
	void *trap_arg;
	sm_note_fn *note;            /* notes for the log; may be NULL */
	void *note_arg;
	/*
	 * M_Key (smd/sm/mkey.h): keys->mkey goes into every SMP header; every
	 * PortInfo Set writes keys->set_mkey, protect bits and lease, and a
	 * LID port whose M_Key fields differ is Set. NULL: M_Key 0 everywhere
	 * (and M_Key fields are not compared). Not owned.
	 */
	const struct sm_keys *keys;
	/*
	 * What SMInfo asked of us during the sweep says (sm/sminfo.h): a daemon
	 * sweeps only as master, and a standby polling it must not read
	 * DISCOVERING then (it would take over during a long sweep). 0: the
	 * default, DISCOVERING, priority 0.
	 */
	uint8_t sminfo_state;
	uint8_t sminfo_priority;
	/*
	 * Multicast (sm/mcast.h, issue 14): the group set to program. The MFTs
	 * are computed from it and the swept fabric, and only the blocks that
	 * differ from what the switches hold are written (mft.c); the snapshot
	 * carries them. Not owned: the caller holds a reference for the
	 * bring-up. NULL: MFTs are left as they are (nothing read or written).
	 */
	const struct sm_mc_set *mcast;
	/*
	 * Partitions (model/partitions.h): with a set, the P_Key phase (after
	 * program) writes the P_Key tables of CA and router ports, switch port
	 * 0 and switch ports facing a CA or router, changed blocks only, and the
	 * snapshot carries them. NULL: P_Key tables are left alone (the
	 * programs always give a set: without a file, sm_partitions_default()). Not owned.
	 */
	const struct sm_partitions *partitions;
	/* Port configuration (sm/portcfg.h); NULL: its defaults. Not owned. */
	const struct sm_portcfg *portcfg;
	/*
	 * Derived M_Keys at protect bits 2-3 (sm/neighbours.h): the GUID behind
	 * a port when the state does not know it (an SM that restarted). NULL:
	 * none. Not owned; not changed during the bring-up.
	 */
	const struct sm_nbr *neighbours;
	/*
	 * Read-only sweep (sm_discover_sms): PortStateChange is left set,
	 * nothing at all is written. Default false.
	 */
	bool read_only;
};
void sm_cfg_default(struct sm_cfg *cfg);

enum sm_phase { SM_PH_DISCOVER, SM_PH_LIDS, SM_PH_ROUTE, SM_PH_PROGRAM, SM_PH_ACTIVATE, SM_PH_COUNT };
const char *sm_phase_name(unsigned ph);

/* What programming MFTs did (a bring-up's, or sm_mft_update()'s). */
struct sm_mft_summary {
	uint32_t groups;             /* groups of the set that got a tree */
	uint32_t blocks_written, blocks_read, switches_written;
	uint32_t top_sets;           /* SwitchInfo Sets of MulticastFDBTop */
	uint32_t over_cap;           /* switches whose MulticastFDBCap is below the highest MLID */
	uint32_t set_errors;
	uint64_t missing;            /* members not in the fabric (or not reachable) */
	double compute_s, program_s;
	struct sm_txn_stats txn;     /* sm_mft_update()'s SMPs (a bring-up counts them in sm_summary.txn) */
};

struct sm_summary {
	struct sm_fabric_counts counts;
	struct sm_lidmgr_stats lids;
	unsigned sweeps;             /* heavy sweeps run (1 = consistent at once) */
	uint32_t unresponsive;       /* up ports whose neighbour never answered */
	uint16_t sm_lid;
	uint16_t top_lid;
	const char *engine;          /* engine that routed (static string) */
	uint32_t profile_flows;      /* flows of the profile resolved in this fabric (0: none) */
	struct sm_txn_stats txn;     /* SMP counters, by attribute too */
	uint32_t lft_blocks_written, lft_blocks_read, lft_switches_written;
	uint32_t switchinfo_sets;
	uint32_t portinfo_lid_sets;  /* Set PortInfo for LID/SM LID/prefix */
	uint32_t portinfo_state_sets;/* Set PortInfo for ARMED/ACTIVE */
	/* port configuration (portcfg.c) */
	uint32_t portcfg_pi_sets;    /* Set PortInfo for MTU, VLs, HOQ, enforcement... */
	uint32_t sl2vl_gets, sl2vl_sets, vlarb_gets, vlarb_sets;
	uint32_t tables_trusted;     /* switch ports whose tables the state vouches for: not read */
	uint32_t link_ports;         /* ports that should be ACTIVE */
	uint32_t active_ports;       /* ... that are ACTIVE at the end */
	uint32_t set_errors;         /* Sets answered with a bad status or lost */
	uint32_t mkey_foreign;       /* LID ports protected by an M_Key smd does not hold */
	uint64_t mkey_violations;    /* sum of the M_KeyViolations counters read from those ports */
	uint32_t mkey_rotated;       /* derived keys: ports found holding the previous key (re-keyed) */
	/* with a struct sm_state (sm_bringup_state) */
	uint32_t lft_switches_trusted;  /* switches whose LFT shadow came from the state (not read) */
	uint32_t lft_switches_unknown;  /* switches new, rebooted or changed since the state: read back */
	uint32_t psc_cleared;        /* SwitchInfo Sets clearing PortStateChange */
	uint32_t incremental;        /* 1: the incremental sweep sufficed (no full discovery) */
	uint32_t delta_links_down;   /* ... links it removed */
	uint32_t delta_switches_read;/* ... switches whose ports it read */
	uint32_t delta_links_up;     /* ... links that came up (or back) that it explored */
	uint32_t delta_nodes_new;    /* ... nodes it found behind them (a switch or host that came back) */
	uint32_t delta_switches_gone;/* ... switches it left out: every link to them went down */
	uint32_t late_traps;         /* ... traps 128 that came during it: sweep again (they may be newer) */
	uint32_t validate_rechecked; /* incremental validation: destination LIDs walked again (0: in full) */
	uint32_t route_incremental;  /* 1: the engine rerouted from the state's routes (engine.h reroute()) */
	uint32_t route_lids;         /* then: the LIDs whose column it changed */
	double route_s;              /* the accepted engine's routing time */
	double route_cpu_s;          /* ... and its thread's CPU time */
	double validate_s;           /* validation of the accepted routes */
	/*
	 * Incomplete: answers were lost (a NodeInfo behind a port that reads up,
	 * a PortInfo or SwitchInfo that never came, the fabric still changing
	 * after cfg.sweep_retries sweeps) or Sets failed, so the swept fabric may
	 * lack nodes and links that are there. With a state (sm_bringup_state),
	 * what the sweep could not see is kept from the state's fabric (merged_*):
	 * a node, link or LID the last sweep had is dropped only when a PortInfo
	 * read in this sweep shows the link down. The bring-up still returns 0
	 * (the tables are programmed for everything known); the caller sweeps
	 * again (the daemon: heavy, with back-off) until one is complete.
	 */
	uint32_t incomplete;         /* answers lost + Sets failed; 0: complete */
	char incomplete_why[192];    /* the first loss */
	uint32_t merged_nodes, merged_links;
	uint32_t state_errors;       /* state files (guid2lid) that could not be written */
	uint32_t pkey_ports;         /* ports whose P_Key table is managed (0: no partitions configured) */
	uint32_t pkey_blocks_read, pkey_blocks_written;
	char state_err[512];         /* the first such error, naming the file */
	struct sm_mft_summary mft;   /* with cfg.mcast */
	double phase_s[SM_PH_COUNT];
	double total_s;
};

/*
 * Bring the subnet behind transport t up. On success returns 0 and, if
 * fabric_out is not NULL, the discovered fabric with its LIDs (caller
 * frees). On failure a negative errno and a message in err; sum is filled
 * as far as the run got.
 */
int sm_bringup(struct sm_transport *t, struct sm_chain *chain, const struct sm_cfg *cfg,
	       struct sm_summary *sum, struct sm_fabric **fabric_out, char *err, size_t errlen);

/*
 * DOC: state across bring-ups (the daemon's per-plane memory)
 *
 * A struct sm_state remembers, per plane, what the last heavy sweep found
 * and programmed: the fabric (GUIDs, links, LIDs: a reference to that
 * bring-up's snapshot, snapshot.h, not a copy), the sweep tables (tables.h:
 * DR path of every node, SwitchInfo, PortInfo) and, per switch, the LFT
 * shadow (blocks known to be on the switch, LinearFDBTop). sm_bringup_state() uses it so that a heavy sweep of a
 * configured fabric reads no LFT block back: a switch's shadow is trusted
 * when the switch is known by GUID, its port 0 still has the LID we gave it
 * and its LinearFDBTop is what we left. Anything else (a new switch, one
 * that rebooted: LID 0 / top 0, one another SM reprogrammed: other LID or
 * top) is unknown and read back (cfg.read_lfts) or rewritten. Blocks are
 * then written only where the new tables differ from the shadow.
 *
 * Limitation (stated): LFT entries changed behind our back without the
 * switch's LID or top changing (e.g. an admin's ibroute tool writing one
 * block) are not seen; sm_state_forget() (smctl resweep --heavy) makes
 * every switch unknown again.
 *
 * The state is updated by every bring-up that reached the program phase
 * (the shadow then mirrors what the switches acknowledged, even if the
 * bring-up failed later); it is marked valid only by a successful one.
 * sm_light_sweep() needs a valid state.
 *
 * Not thread-safe: one state per plane, used by that plane's thread.
 */
struct sm_state;
int sm_state_new(struct sm_state **out);            /* 0 or -ENOMEM */
void sm_state_free(struct sm_state *s);             /* accepts NULL */
/* Forget every shadow (next heavy sweep reads LFTs back) and invalidate. */
void sm_state_forget(struct sm_state *s);
bool sm_state_valid(const struct sm_state *s);
/* Switches the state knows (0 without a valid state). */
uint32_t sm_state_switches(const struct sm_state *s);

/* sm_bringup() with a state (NULL state: exactly sm_bringup()). */
int sm_bringup_state(struct sm_transport *t, struct sm_chain *chain, const struct sm_cfg *cfg,
		     struct sm_state *state, struct sm_summary *sum, struct sm_fabric **fabric_out,
		     char *err, size_t errlen);

/*
 * Light sweep: one Get SwitchInfo per switch the state knows, along its
 * remembered DR path. A change is: a switch
 * that does not answer (or answers badly), PortStateChange set (a port of it
 * went down or came up; the heavy sweep clears it, as IBA says, by writing
 * 1), LinearFDBTop other than what we left (reset or reprogrammed), a trap
 * 128 arriving meanwhile (the SM's own link down shows as switches that do
 * not answer).
 *
 * It also samples, round robin over light sweeps, what a heavy sweep would
 * find wrong (every sampled item within SM_LIGHT_ROUNDS light sweeps, at
 * least SM_LIGHT_MIN_SAMPLES of each per sweep):
 *   - PortInfo of every port the state read (switch ports, CA ports): a
 *     switch port up whose neighbour is not in the model (a sweep that
 *     missed it), a linked port down or no longer ACTIVE, a LID port whose
 *     LID or SM LID is not what we set;
 *   - every LFT block the state's shadows know, compared with what smd
 *     wrote (LFT drift: another SM, a tool).
 * A foreign SM LID is looked up in the model and asked for SMInfo (DR):
 * when it is a master better than us (sm_elect_better with
 * cfg.sminfo_priority and the transport's port GUID), nothing is repaired
 * and 0 returned: the election (daemon) decides, we do not fight it.
 * Otherwise a foreign SM LID or LFT drift makes the state forget its
 * shadows (sm_state_forget: the heavy sweep reads every block back and
 * rewrites what differs, and sets our SM LID again) and returns 1.
 * Nothing is written here.
 * Returns 1 when a heavy sweep is needed (why says the first reason; also
 * when the state is not valid), 0 when nothing changed, -errno on a hard
 * error (err).
 */
#define SM_LIGHT_ROUNDS 16
#define SM_LIGHT_MIN_SAMPLES 64
struct sm_light_summary {
	uint32_t switches;           /* SwitchInfo Gets sent */
	uint32_t changed;            /* switches that showed a change */
	uint64_t smps;               /* SMPs sent (retries included) */
	double seconds;
	char why[320];               /* first change seen, "" none */
	struct sm_txn_stats txn;     /* its SMP counters (retries, timeouts...; smd metrics) */
	/* the samples (see above) */
	uint32_t ports_read, lft_blocks_read;
	uint32_t missing_peers;      /* switch ports up whose neighbour is not in the model */
	uint32_t lft_blocks_drift, lft_switches_drift;   /* blocks read that differ from what smd wrote */
	uint32_t foreign_ports;      /* LID ports whose SM LID is not ours */
	uint16_t foreign_sm_lid;     /* the first such SM LID, 0 none */
	uint64_t foreign_sm_guid;    /* its port GUID (model, else its SMInfo), 0 unknown */
	char foreign_sm_desc[72];    /* its node's description, "" unknown */
	int foreign_sm_state;        /* its SMInfo state (enum sm_sm_state), -1 no answer */
	unsigned foreign_sm_priority;
	int foreign_master;          /* a master better than us: left to the election, nothing repaired */
	int repaired;                /* foreign SM or drift: shadows forgotten, the heavy sweep repairs */
};
int sm_light_sweep(struct sm_transport *t, const struct sm_cfg *cfg, struct sm_state *state,
		   struct sm_light_summary *ls, char *err, size_t errlen);

/*
 * Does an unsolicited SMP call for a (new) heavy sweep? A Trap with a
 * generic Notice 128 (link state change), or one that does not decode
 * (better one sweep too many): 1. Other traps (144: a capability mask, e.g.
 * a port claiming IsSM) and anything not a Trap: 0. *trap_num (may be NULL)
 * gets the trap number, 0 when unknown.
 */
struct sm_smp;
int sm_trap_wants_sweep(const struct sm_smp *smp, unsigned *trap_num);

/*
 * DOC: discovery of other SMs (IBA 14.4: an SM in DISCOVERING)
 *
 * Before an SM becomes master it sweeps the subnet and asks every port
 * whose CapabilityMask has IsSM for its SMInfo, so the election (the
 * daemon's, sm/election.h) can run before anything is written.
 * sm_discover_sms() is that sweep: one heavy sweep with cfg->read_only
 * (nothing written, PortStateChange left for the master to clear), then
 * SubnGet(SMInfo) by directed route to each IsSM port that is not ours
 * (a fresh fabric has no LIDs yet), with the M_Key of that port. SMInfo
 * asked of us meanwhile is answered as cfg->sminfo_state/priority say.
 * out gets up to max SMs that answered (lid: the port's LID as read, 0
 * none); *n how many; d the counters. 0, or -errno with err (the SM's own
 * port does not answer).
 */
struct sm_elect_peer;
struct sm_discovery {
	uint32_t nodes, issm_ports;  /* nodes swept; IsSM ports other than ours */
	uint32_t answered;           /* ... whose SMInfo came back */
	uint64_t smps, sets;         /* SMPs sent; of them Sets (0: read-only) */
	double seconds;
};
int sm_discover_sms(struct sm_transport *t, const struct sm_cfg *cfg, struct sm_elect_peer *out, unsigned max,
		    unsigned *n, struct sm_discovery *d, char *err, size_t errlen);

/* Human summary (several lines) or one JSON object. */
void sm_summary_print(FILE *out, const struct sm_summary *s);
void sm_summary_print_json(FILE *out, const struct sm_summary *s);

#endif
