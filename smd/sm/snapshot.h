/* SPDX-License-Identifier: MIT */
#ifndef SMD_SM_SNAPSHOT_H
#define SMD_SM_SNAPSHOT_H
/*
 * DOC: per-plane snapshot (one immutable copy of what a bring-up found)
 *
 * At the end of every bring-up that got as far as assigning LIDs, the SM
 * core moves the plane's swept fabric (with its LIDs) and, when routing ran,
 * the LFTs as programmed into one struct sm_snapshot and publishes it
 * through sm_cfg.published. It is the only long-lived copy of a plane's
 * fabric: the persistent state (sm.h, struct sm_state) keeps a reference to
 * the last one that reached the program phase, and the daemon's views
 * (smctl nodes, links, route, lft, dump) and plane health take references
 * to it instead of copying. The SA (issue 13) is meant to answer queries
 * from it the same way.
 *
 * Invariants:
 *   - Immutable once published: nobody writes to fabric, lfts or any field.
 *     A reader needs no lock, only its reference.
 *   - Reference-counted with C11 atomics: sm_snapshot_ref()/unref() may be
 *     called from any thread; the last unref frees fabric and lfts. So a
 *     reader (a control-socket handler, an SA thread) can hold a snapshot
 *     while the next sweep runs and publishes the next one.
 *   - fabric holds exactly one plane, `plane`, numbered in node-GUID order.
 *     Its plane record names no SM port (as the copies the daemon kept
 *     before, so smctl's dumps are unchanged): the SM's LID and port are
 *     sm_lid and sm_port here.
 *
 * Cost: the fabric is moved out of the bring-up, not copied (a copy is
 * made only when the bring-up's caller also asked for the fabric).
 *
 * What the sweep read, for the SA (issue 13): NodeInfo per node, SwitchInfo
 * per switch and PortInfo per port as last read or acknowledged by a Set,
 * indexed like fabric, moved out of the bring-up's sweep tables
 * (sm_snapshot_take_attrs), not copied. They are NULL in a snapshot whose
 * maker had none (tests building one by hand); si_ok/pi_ok say which entries
 * were read (a CA port the sweep never reached through has none). The
 * incremental sweep starts from them (sm_snapshot_copy_attrs). Not read by
 * the sweep, so not here: SL2VL and VLArbitration tables, GUIDInfo blocks
 * beyond the port GUID. MFTs are not read either: mfts holds what smd
 * computed and programmed (the SA's MFTRecord).
 *
 * P_Key tables (issue 14): with partitions configured, the P_Key phase
 * (pkey.c) leaves each table it manages as the ports acknowledged it
 * (CA and router ports, switch port 0, switch ports facing them), moved
 * into `pkeys` (sm_snapshot_take_pkeys); NULL when no partitions were
 * configured (every port then counts as a full member of the default
 * partition, 0xFFFF).
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct sm_fabric;
struct sm_lfts;
struct sm_node_info;
struct sm_switch_info;
struct sm_port_info;
struct sm_sweep_tables;
struct sm_mfts;
struct sm_mc_set;

/* P_Key tables per port index: entries tab[at[i]] .. tab[at[i + 1] - 1] (a multiple of 32; none: not managed). */
struct sm_pkey_tables {
	uint16_t *tab;
	uint32_t *at;                    /* n_ports + 1 entries */
	uint32_t n_ports;
};
void sm_pkey_tables_free(struct sm_pkey_tables *t);   /* accepts NULL */

struct sm_snapshot {
	unsigned plane;
	uint64_t cycle;                  /* sm_cfg.cycle of the bring-up that made it (caller-defined, 0 none) */
	uint64_t made_us;                /* sm_mono_us() when it was made */
	bool up;                         /* the bring-up succeeded: lfts are on the switches */
	bool complete;                   /* nothing lost: no node or link kept from an older sweep (sm.h) */
	uint16_t sm_lid;                 /* the SM port's LID in this plane */
	uint32_t sm_port;                /* its port index in fabric, SM_NONE unknown */
	uint64_t subnet_prefix;
	const struct sm_fabric *fabric;  /* as discovered, with the LIDs assigned; never NULL */
	const struct sm_lfts *lfts;      /* as computed and programmed; NULL if routing did not run */
	/* the attributes as read (see above); NULL when not carried */
	const struct sm_node_info *ni;   /* per node */
	const struct sm_switch_info *si; /* per node; valid where si_ok[n] */
	const uint8_t *si_ok;
	const struct sm_port_info *pi;   /* per port index; valid where pi_ok[i] */
	const uint8_t *pi_ok;
	uint32_t attr_nodes, attr_ports; /* entries in ni/si and pi (>= the fabric's counts) */
	/* multicast (issue 14): the MFTs as programmed (routing/mcast.h), NULL when no group set was given */
	const struct sm_mfts *mfts;
	uint64_t mc_gen;                 /* gen of the group set they come from */
	const struct sm_mc_set *mc;      /* that set (a reference, released with the snapshot), NULL with mfts */
	const struct sm_pkey_tables *pkeys;  /* P_Key tables as programmed (see above); NULL: not managed */
	atomic_uint refs;                /* private: use ref/unref */
};

/*
 * A snapshot with one reference that owns fabric and lfts (lfts may be
 * NULL); NULL on ENOMEM, and then fabric and lfts are freed. Filled in by its
 * maker, which then publishes it and from then on does not write to it.
 */
struct sm_snapshot *sm_snapshot_new(unsigned plane, struct sm_fabric *fabric, struct sm_lfts *lfts);
/*
 * Before publishing: move t's NodeInfo, SwitchInfo and PortInfo arrays (indexed
 * like s->fabric) into s, which frees them with itself; t keeps the rest
 * and has NULL there (its capacities stay, for its paths).
 */
void sm_snapshot_take_attrs(struct sm_snapshot *s, struct sm_sweep_tables *t);
/* Before publishing: move *pk into s (*pk becomes NULL). */
void sm_snapshot_take_pkeys(struct sm_snapshot *s, struct sm_pkey_tables **pk);
/* Port index i's P_Key entries in s (*n of them, a multiple of 32), NULL when none are known. */
const uint16_t *sm_snapshot_pkeys(const struct sm_snapshot *s, uint32_t i, unsigned *n);
/*
 * t's ni, si, si_ok, pi and pi_ok point at s's (read only, never to be
 * freed through t: t is a view, e.g. a source of sm_sweep_tables_start()),
 * or NULL when s holds fewer than n_nodes / n_ports entries.
 */
void sm_snapshot_attrs_view(const struct sm_snapshot *s, struct sm_sweep_tables *t, uint32_t n_nodes,
			    uint32_t n_ports);
/* The reverse for a new sweep: copy s's first n_nodes/n_ports entries into t (fitted). No-op without them. */
void sm_snapshot_copy_attrs(const struct sm_snapshot *s, struct sm_sweep_tables *t, uint32_t n_nodes,
			    uint32_t n_ports);
/* Another reference to s (returned); NULL gives NULL. Thread-safe. */
const struct sm_snapshot *sm_snapshot_ref(const struct sm_snapshot *s);
/* Drop a reference; the last one frees. Accepts NULL. Thread-safe. */
void sm_snapshot_unref(const struct sm_snapshot *s);

#endif
