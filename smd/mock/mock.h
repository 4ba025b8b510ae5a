/* SPDX-License-Identifier: MIT */
#ifndef SMD_MOCK_H
#define SMD_MOCK_H
/*
 * DOC: mock fabric
 *
 * An in-process emulation of a fabric's subnet management agents (SMAs),
 * built from a struct sm_fabric (a generated fabric or a loaded dump). It
 * owns a private copy of the topology plus per-port SMA state (LID, LMC, SM
 * LID, subnet prefix, M_Key, PortState) and per-switch state (LFT blocks,
 * LinearFDBTop, PortStateChange), and answers SMPs like devices do:
 *   - directed route: forwards hop by hop along the initial path (hop
 *     pointer, return path filled in), drops an SMP whose path leads out of
 *     a bad or unconnected port, answers with the D bit set;
 *   - LID routed: forwards using the switches' emulated LFTs (as programmed
 *     by the SM); the reply is routed by the LFTs too, to the SM port's LID
 *     (no LID or no route either way: dropped);
 *   - Get/Set NodeInfo, NodeDescription, PortInfo (state machine: link up
 *     -> INIT, Set ARMED only from INIT/ARMED, Set ACTIVE only from
 *     ARMED/ACTIVE, invalid transitions answer status 0x1C and change
 *     nothing), SwitchInfo (LinearFDBCap/Top, PortStateChange), LFT blocks,
 *     SMInfo (answers "attribute unsupported": no other SM in the mock).
 *
 * Node and port indices are those of the fabric it was built from, so tests
 * read back state with the same indices (sm_mock_port_state(),
 * sm_mock_lft_get()...).
 *
 * The SM attaches with sm_mock_attach(): one transport per attachment, each
 * at a CA port (several, e.g. one per plane, may share one mock). Requests
 * are answered synchronously into the transport's receive queue: O(hops) per
 * MAD, no threads.
 *
 * Time: by default the mock runs on virtual time (microseconds starting at
 * 0): recv with a timeout and nothing ready advances the clock instead of
 * sleeping (to the timeout, or to the next held-back answer), and a
 * non-blocking recv (timeout 0) that finds nothing advances it by 1 ms, so
 * a loop polling several engines with timeout 0 still reaches their
 * deadlines. The transport's now_us reports it, so retries and delayed
 * answers cost no wall time. cfg.real_time switches to CLOCK_MONOTONIC.
 *
 * Faults (seeded, deterministic for a seed and a request sequence): a share
 * (parts per million) of requests is dropped (half of these on the way
 * back: the SMA acted on the request, its answer is lost), answered late by
 * delay_us, or
 * answered corrupted (truncated, wrong base or class version, wrong
 * attribute id, TID, method or D bit, chosen at random; never a silently wrong
 * payload: real links drop those on the CRC). Link down/up events change
 * port states on both ends, set SwitchInfo.PortStateChange and send a
 * Trap 128 (LID routed over the emulated LFTs, Notice attribute) from each
 * affected switch that has a LID and knows its SM LID to the attachment
 * holding that SM LID; one trap per event, no re-send until repressed.
 *
 * Hostile nodes (sm_mock_set_hostile()): a node whose SMA lies in one
 * chosen way in every answer it gives (wrong attribute, modifier, method,
 * hop fields or status, truncated MADs, impossible NodeInfo contents, a
 * type that flips, another node's GUIDs), to test that the SM drops and
 * counts what cannot be true and brings the rest of the fabric up.
 *
 * M_Key (IBA 14.2.4): every SMP is checked against the addressed SMA's
 * M_Key (switch port 0, CA arrival port); a wrong key gets Gets at protect
 * bits 1 a zeroed PortInfo.M_Key, and Gets at 2-3 and all Sets dropped
 * with M_KeyViolations counted; the lease period clears the protect bits
 * after a violation that no right key followed (details in mock_mkey.c).
 *
 * Not emulated: Trap 256 (bad M_Key), DR SMPs
 * with a LID-routed part (DrSLID/DrDLID not permissive: dropped), SMInfo,
 * P_Keys, multicast, VL arbitration.
 *
 * Separate mocks share no state: one thread per mock is fine.
 *
 * Not thread-safe. Functions return 0 or a negative errno and never log.
 *
 * Files (the state they share is struct sm_mock in mock_priv.h):
 *   mock.c       construction (a private copy of the fabric, fresh or kept
 *                SMA state), free, state read-back (also the transport's
 *                port info) and LFT poke, stats, the clock;
 *   mock_sma.c   the SMA: Get/Set NodeInfo, NodeDescription, PortInfo
 *                (PortState machine), SwitchInfo, LFT; hostile nodes;
 *   mock_mkey.c  M_Key checking and the lease timer;
 *   mock_pkey.c  P_KeyTable Get/Set, tables as ibsim's (0xFFFF at index 0);
 *   mock_qos.c   port configuration: the PortInfo fields the portcfg phase
 *                writes, SL2VL (optimised programming) and VLArb tables;
 *   mock_fwd.c   forwarding: the DR walk, LID routing over the emulated
 *                LFTs (requests, answers, traps), link down/up and the
 *                port states they change;
 *   mock_ops.c   the transport (send/recv/now/close, attach), the
 *                faults and their RNG, the delay (latency) model and the
 *                virtual time it lets pass, Trap 128;
 *   load.c       sm_mock_load(): a mock from a dump file;
 *   admin.c      rehearsal: the fault seed, whole switches down and up.
 */
#include <stdbool.h>
#include <stdint.h>

#include "model/fabric.h"
#include "mad/transport.h"

struct sm_mock;

struct sm_mock_cfg {
	uint64_t seed;           /* fault-injection RNG seed */
	uint32_t drop_ppm;       /* requests dropped silently (parts per million) */
	uint32_t corrupt_ppm;    /* answers corrupted */
	uint32_t delay_ppm;      /* answers held back by delay_us */
	uint32_t delay_us;       /* default 50000 when delay_ppm is set and this is 0 */
	bool keep_state;         /* take LIDs/LMC/port states from the fabric model instead of
				  * a fresh fabric (all LIDs 0, linked ports INIT/LinkUp,
				  * unlinked ports DOWN/Polling) */
	bool real_time;          /* CLOCK_MONOTONIC instead of virtual time */
	bool strict_states;      /* refuse a repeated PortState Set (ARMED -> ARMED, ACTIVE ->
				  * ACTIVE) with status 0x1C, as ibsim does: a retried Set
				  * whose first answer was lost then fails */
	uint16_t lft_cap;        /* LinearFDBCap for switches whose model says 0; default 0xC000 */
	bool cpu_account;        /* count the CPU time the emulated SMAs take (stats.emu_cpu_ns), so a
				  * benchmark can tell the SM's own CPU apart from the emulator's */
	bool no_opt_sl2vl;       /* switches without optimised SL2VL programming (one Set per pair) */
};
void sm_mock_cfg_default(struct sm_mock_cfg *cfg);

/* Build from a fabric (copied; f may be freed afterwards). cfg NULL = defaults.
 * -EINVAL (empty fabric), -ENOMEM; err may be NULL. */
int sm_mock_new(const struct sm_fabric *f, const struct sm_mock_cfg *cfg, struct sm_mock **out,
		char *err, size_t errlen);
/* Build from a topology dump (sm_topo_load, format sniffed, into plane 0). */
int sm_mock_load(const char *path, const struct sm_mock_cfg *cfg, struct sm_mock **out,
		 char *err, size_t errlen);
/* Frees the mock. Transports attached to it must be closed first. Accepts NULL. */
void sm_mock_free(struct sm_mock *m);

/* The mock's copy of the topology (node/port numbering, GUIDs, links as
 * they are now, after link events). Port LID/state fields are NOT live:
 * use the accessors below. */
const struct sm_fabric *sm_mock_fabric(const struct sm_mock *m);

/*
 * Default SM port in `plane`: the first CA port (fabric order) whose link is
 * up. Returns the port index (f->ports) or SM_NONE.
 */
uint32_t sm_mock_default_port(const struct sm_mock *m, unsigned plane);

/*
 * Attach an SM at CA port `port_index` (index into the fabric's ports) and
 * return a transport to it (t->info filled: ca_name "mock", port number,
 * port GUID, current LID/state). Close it with sm_transport_close().
 * -EINVAL if not a CA/router port, -EBUSY if already attached.
 */
int sm_mock_attach(struct sm_mock *m, uint32_t port_index, struct sm_transport **out);

/* ---- read back emulated state (tests, benchmarks) ---- */
struct sm_mock_port_state {
	uint16_t lid;
	uint8_t lmc;
	uint8_t state;        /* enum sm_port_state */
	uint8_t phys_state;   /* 5 LinkUp, 2 Polling, 3 Disabled */
	uint16_t sm_lid;
	uint8_t sm_sl;
	uint64_t gid_prefix;
	uint64_t mkey;
	uint32_t sets;        /* PortInfo Sets applied to this port */
	uint8_t mkey_prot_bits;     /* the SMA's (switches: port 0's) */
	uint16_t mkey_lease_period;
	uint16_t mkey_violations;
};
/* -EINVAL for a bad index. */
int sm_mock_port_state(const struct sm_mock *m, uint32_t port_index, struct sm_mock_port_state *st);
/* LFT entry of switch node `node` for `lid`: port, or SM_LFT_NO_PORT (also for
 * a non-switch or LID beyond what was written). */
uint8_t sm_mock_lft_get(const struct sm_mock *m, uint32_t node, uint16_t lid);
/* LinearFDBTop of switch `node` (0 for non-switch). */
uint16_t sm_mock_lft_top(const struct sm_mock *m, uint32_t node);
/* LFT blocks written by Set on switch `node` (0 for non-switch). */
uint32_t sm_mock_lft_blocks_set(const struct sm_mock *m, uint32_t node);
/*
 * Multicast (mock_mft.c): switches hold SM_MOCK_MFT_CAP MLIDs from 0xC000.
 * sm_mock_mft_get: the port mask (bit p: port p) switch `node` holds for
 * `mlid`, -EINVAL for a non-switch or a unicast LID. blocks_set: MFT blocks
 * (one position each) written by Set.
 */
#define SM_MOCK_MFT_CAP 4096
int sm_mock_mft_get(const struct sm_mock *m, uint32_t node, uint16_t mlid, uint64_t mask[4]);
uint32_t sm_mock_mft_blocks_set(const struct sm_mock *m, uint32_t node);
/* Set the M_Key state of the SMA port_index belongs to (a switch's: port 0),
 * as another SM would have left it. -EINVAL for a bad index/prot bits. */
int sm_mock_set_mkey(struct sm_mock *m, uint32_t port_index, uint64_t mkey, uint8_t prot_bits,
		     uint16_t lease_period);
/* Directly program an LFT entry (tests building a pre-routed fabric). */
int sm_mock_lft_poke(struct sm_mock *m, uint32_t node, uint16_t lid, uint8_t port);

/* ---- events and faults ---- */
/* Take the link at (node, port) down: both ends go DOWN/Polling, switches
 * flag PortStateChange and raise Trap 128. -ENOTCONN if not linked. */
int sm_mock_link_down(struct sm_mock *m, uint32_t node, unsigned port);
/* Bring a link taken down with sm_mock_link_down back: both ends INIT/LinkUp,
 * traps as above. -ENOENT if (node, port) was not taken down. */
int sm_mock_link_up(struct sm_mock *m, uint32_t node, unsigned port);
/* Change fault shares at run time (e.g. fail one plane mid-sweep). */
void sm_mock_set_faults(struct sm_mock *m, uint32_t drop_ppm, uint32_t corrupt_ppm,
			uint32_t delay_ppm, uint32_t delay_us);

/* ---- rehearsal (admin.c): what smctl link/switch/faults change on a daemon's mock ---- */
/* Restart the fault RNG from seed (the same seed and requests: the same faults). */
void sm_mock_set_seed(struct sm_mock *m, uint64_t seed);
/* The running configuration (fault shares, seed). */
void sm_mock_get_cfg(const struct sm_mock *m, struct sm_mock_cfg *cfg);
/*
 * Every linked port of switch `node` down (as sm_mock_link_down, traps
 * included) / back up (the ports taken down and not yet brought back).
 * *links: how many changed. -EINVAL not a switch; -ENOTCONN (down) or
 * -ENOENT (up) when there was nothing to change.
 */
int sm_mock_switch_down(struct sm_mock *m, uint32_t node, unsigned *links);
int sm_mock_switch_up(struct sm_mock *m, uint32_t node, unsigned *links);

/* A node whose answers are wrong in one way (see DOC). */
enum sm_mock_hostile {
	SM_MOCK_H_NONE,
	SM_MOCK_H_WRONG_ATTR,    /* every answer carries another attribute ID */
	SM_MOCK_H_WRONG_MOD,     /* ... another attribute modifier */
	SM_MOCK_H_BAD_HOPCNT,    /* DR answers: hop count one more than asked */
	SM_MOCK_H_BAD_HOPPTR,    /* DR answers: hop pointer beyond the hop count */
	SM_MOCK_H_WRONG_METHOD,  /* answers with method Set instead of GetResp */
	SM_MOCK_H_BAD_STATUS,    /* status with a reserved code (5) */
	SM_MOCK_H_TRUNCATED,     /* answers cut to 100 bytes */
	SM_MOCK_H_PORT_BEYOND,   /* NodeInfo: LocalPortNum = NumPorts + 1 */
	SM_MOCK_H_CA_PORT0,      /* NodeInfo: LocalPortNum 0 (a CA: impossible) */
	SM_MOCK_H_PORTS_255,     /* NodeInfo: NumPorts 255 */
	SM_MOCK_H_PORTS_0,       /* NodeInfo: NumPorts 0 */
	SM_MOCK_H_TYPE_FLIP,     /* every second NodeInfo answer claims the other type (CA <-> switch) */
	SM_MOCK_H_DUP_GUID,      /* NodeInfo: node and port GUIDs of node `arg` (its port 1 / port 0) */
	SM_MOCK_H_GUID_ZERO,     /* NodeInfo: node GUID 0 */
	SM_MOCK_H_COUNT
};
const char *sm_mock_hostile_name(unsigned mode);
/* Make node `node` hostile (SM_MOCK_H_NONE: honest again). -EINVAL for a bad
 * node or mode, or DUP_GUID with a bad `arg`. Answers it spoiled are counted
 * in stats.hostile. */
/*
 * Port index port_index's P_Key table as its SMA holds it: up to max
 * entries into out; returns its capacity, or -EINVAL/-ENOMEM (mock_pkey.c).
 */
int sm_mock_pkeys(struct sm_mock *m, uint32_t port_index, uint16_t *out, unsigned max);
int sm_mock_set_hostile(struct sm_mock *m, uint32_t node, enum sm_mock_hostile mode, uint32_t arg);

/* Virtual (or real) time of the mock in microseconds; advance virtual time. */
uint64_t sm_mock_now_us(const struct sm_mock *m);
void sm_mock_advance_us(struct sm_mock *m, uint64_t us);

struct sm_mock_stats {
	uint64_t requests;        /* MADs received from SMs */
	uint64_t answered;        /* responses queued */
	uint64_t dr_dropped;      /* DR path invalid (bad port, unconnected, link down) */
	uint64_t lid_dropped;     /* LID routed: no LID, no route, loop */
	uint64_t fault_dropped;
	uint64_t fault_corrupted;
	uint64_t fault_delayed;
	uint64_t bad_requests;    /* undecodable / not Get/Set / unknown attribute (answered with status) */
	uint64_t state_errors;    /* PortInfo Set with an invalid state transition */
	uint64_t traps_sent;
	uint64_t traps_lost;      /* no LID-routed path from the switch to the SM LID */
	uint64_t trap_represses;
	uint64_t gets, sets;
	uint64_t mkey_violations;   /* SMPs dropped for a wrong M_Key */
	uint64_t mkey_leases_expired;
	uint64_t hostile;         /* answers spoiled by a hostile node */
	uint64_t pkey_sets;       /* P_KeyTable blocks set (mock_pkey.c) */
	uint64_t emu_cpu_ns;      /* with cfg.cpu_account: thread CPU time spent answering requests
				   * (estimated from one request in 64, mock_ops.c) */
};
void sm_mock_stats(const struct sm_mock *m, struct sm_mock_stats *st);

/*
 * The emulator's memory apart from the SM's in the same process (issue 17):
 * the emulated switches' LFTs live in one mapping of their own
 * (/memfd:smd-mock-lft in /proc/PID/smaps).
 * Its address range and the bytes of it resident now (mincore). Safe to
 * call from any thread: the mapping does not move while the mock lives.
 */
void sm_mock_lft_arena(const struct sm_mock *m, const void **base, size_t *len);
size_t sm_mock_lft_resident(const struct sm_mock *m);

/* Port configuration and QoS tables (mock_qos.c): what was asked of the SMAs, and one SL2VL table. */
struct sm_mock_qos_stats {
	uint64_t pi_sets;         /* PortInfo Sets (all of them) */
	uint64_t sl2vl_gets, sl2vl_sets, vlarb_gets, vlarb_sets;
};
void sm_mock_qos_stats(const struct sm_mock *m, struct sm_mock_qos_stats *st);
/* The SL2VL table of node's (in, out) pair (CAs: out = the port). 0 or -EINVAL. */
int sm_mock_sl2vl(const struct sm_mock *m, uint32_t node, unsigned in, unsigned out, uint8_t vl[16]);

/*
 * ---- GSI (gsi.c): the hosts' side of an SA on a mock ----
 *
 * A mock transport's gsi_open (mad/gsi.h) opens an endpoint for a class at
 * its attachment's port: an in-process queue each way, guarded by its own
 * lock, so a test or benchmark thread plays the hosts while the SA reads on
 * its loop and a sweep runs on the mock (the emulated fabric is not
 * touched). The SA segments RMPP itself (no SM_GSI_KERNEL_RMPP). One
 * endpoint per attachment; at most SM_MOCK_GSI_MAX per mock.
 *
 * inject() plays a host at from_lid sending mad (len 24..SM_GSI_MAX_MSG
 * bytes, QP1) to the endpoint; take() returns what the SA sent (to_lid may
 * be NULL): 0, -EAGAIN when nothing is waiting, -EMSGSIZE when buf is too
 * small (the MAD stays queued), -ENODEV without an open endpoint, -ENOBUFS
 * when SM_MOCK_GSI_QUEUE MADs wait already. take_fd() polls readable while
 * something waits for take() (-ENODEV: no endpoint). The plain functions
 * use the first endpoint opened; the _at ones the one at port index pi.
 * Thread-safe with each other and with the endpoint.
 */
#define SM_MOCK_GSI_MAX 8
#define SM_MOCK_GSI_QUEUE 65536u
int sm_mock_gsi_inject(struct sm_mock *m, uint16_t from_lid, const uint8_t *mad, size_t len);
int sm_mock_gsi_take(struct sm_mock *m, uint8_t *buf, size_t cap, size_t *len, uint16_t *to_lid);
int sm_mock_gsi_take_fd(struct sm_mock *m);
int sm_mock_gsi_inject_at(struct sm_mock *m, uint32_t pi, uint16_t from_lid, const uint8_t *mad, size_t len);
int sm_mock_gsi_take_at(struct sm_mock *m, uint32_t pi, uint8_t *buf, size_t cap, size_t *len,
			uint16_t *to_lid);

#endif
