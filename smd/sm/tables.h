/* SPDX-License-Identifier: MIT */
#ifndef SMD_SM_TABLES_H
#define SMD_SM_TABLES_H
/*
 * DOC: per-switch sweep tables
 *
 * What a sweep learns about each node and port beyond the fabric model: the
 * directed-route path it reached a node by, its SwitchInfo and PortInfo as
 * read (with an "answered" flag each) and, once the program phase ran, the
 * LFT shadow of every switch (lft_writer.h). Indexed like the fabric the
 * tables go with: node arrays by node index, port arrays by port index.
 *
 * One struct serves the bring-up core (struct sm_core, filled by the sweep)
 * and the persistent per-plane state (struct sm_state, state.h): at the end
 * of a bring-up the attributes as read (ni, si, pi and their flags) are
 * moved into the plane's snapshot (sm_snapshot_take_attrs, for the SA) and
 * the rest (paths, shadows) into the state, not copied; an incremental sweep
 * starts from a copy of both. The tables own their arrays;
 * sm_sweep_tables_free() is the only place they are freed (NULL arrays are
 * fine: a state's tables have no ni/si/pi).
 *
 * Not thread-safe: one owner at a time (the plane's thread).
 */
#include <stdint.h>

#include "model/fabric.h"
#include "mad/codec.h"
#include "sm/lft_writer.h"

struct sm_mft_shadow;

struct sm_sweep_tables {
	/* per node (cap_nodes entries) */
	struct sm_dr_path *path;
	struct sm_node_info *ni;         /* NodeInfo as first read (the SA's NodeRecord) */
	struct sm_switch_info *si;
	uint8_t *si_ok;
	uint32_t cap_nodes;
	/* per port (cap_ports entries) */
	struct sm_port_info *pi;
	uint8_t *pi_ok;
	uint32_t cap_ports;
	/* per node (n_shadow entries, switches only): from the program phase on, NULL before */
	struct sm_lft_shadow *shadow;
	uint32_t n_shadow;
	/* per node (n_mshadow entries, switches only): the MFT shadows (mft.h), NULL until multicast is programmed */
	struct sm_mft_shadow *mshadow;
	uint32_t n_mshadow;
	/*
	 * per port (the fabric's n_ports entries): 1 where the port configuration
	 * phase (portcfg.c) left the SL2VL and VLArb tables as qos_sig's settings
	 * want them; NULL: not known (no heavy sweep with QoS yet)
	 */
	uint8_t *qos_ok;
	uint64_t qos_sig;
	/*
	 * of the PortInfo settings (portcfg.c) the last port configuration
	 * left every port it configured at, every Set answered as asked; 0:
	 * not known. An incremental sweep then configures only the ports
	 * near what it read (c->delta_dirty).
	 */
	uint64_t pi_sig;
	/* the SM's own node and port */
	uint32_t sm_node;                /* SM_NONE: not found (yet) */
	uint8_t sm_portnum;
};

/*
 * The capacity the tables of n nodes (step SM_TABLES_NODE_STEP) or n ports
 * (SM_TABLES_PORT_STEP) get when a sweep starts or renumbers them: n + 1
 * and room for a few more, rounded up, so that a host gone or back (n - 1,
 * n + 1) keeps the sizes of the arrays the last sweep gave back (spare.h:
 * kept for a request of exactly their size; otherwise ~20 ms of fresh pages
 * at 40k hosts) and a host back needs no growth on the way.
 */
#define SM_TABLES_NODE_STEP 1024u
#define SM_TABLES_PORT_STEP 8192u
static inline uint32_t sm_sweep_tables_cap(uint32_t n, uint32_t step)
{
	return (n + step / 16 + step) / step * step;
}

void sm_sweep_tables_init(struct sm_sweep_tables *t);
/* Free every array (shadows included) and init again. Accepts an initialised empty struct. */
void sm_sweep_tables_free(struct sm_sweep_tables *t);
/* Free dst, then move src's arrays into it; src is left empty. */
void sm_sweep_tables_move(struct sm_sweep_tables *dst, struct sm_sweep_tables *src);
/*
 * t (emptied first) with arrays of cap_nodes and cap_ports entries: the
 * first n_nodes / n_ports entries of path, ni, si, si_ok, pi and pi_ok
 * copied from src where src has the array, every other entry zero; and
 * src's SM node and port: what growing t and sm_sweep_tables_copy()
 * give, without clearing what is copied over (30 MB at 40k hosts), in
 * arrays of the sizes the spare ones have (spare.h). 0 or -ENOMEM (t
 * empty), -EINVAL if n exceeds cap.
 */
int sm_sweep_tables_start(struct sm_sweep_tables *t, const struct sm_sweep_tables *src, uint32_t n_nodes,
			  uint32_t n_ports, uint32_t cap_nodes, uint32_t cap_ports);
/* Grow (zero-filled) so every node and port of f has an entry; sized by f's capacity. 0 or -ENOMEM. */
int sm_sweep_tables_fit(struct sm_sweep_tables *t, const struct sm_fabric *f);
/*
 * The path, NodeInfo, SwitchInfo and PortInfo entries of src's first n_nodes
 * nodes and n_ports ports into dst (already fitted to them), and the SM's
 * node/port. Arrays src does not hold (NULL) are left as they are. Shadows
 * are not copied.
 */
void sm_sweep_tables_copy(struct sm_sweep_tables *dst, const struct sm_sweep_tables *src, uint32_t n_nodes,
			  uint32_t n_ports);
/* One empty LFT shadow per node of f (replacing any). 0 or -ENOMEM. */
int sm_sweep_tables_add_shadows(struct sm_sweep_tables *t, const struct sm_fabric *f);

/*
 * Renumber *f and t in node-GUID order (plane `plane` of *f): *f is
 * replaced by the new fabric, t remapped to it (shadows are not: call
 * before the program phase); in place (*f the same object, the same
 * result) when the nodes kept are in GUID order already but for a few
 * after them (those the sweep appended: a host back, or none: a host
 * gone). keep (per node, may be NULL = all): nodes
 * with 0 are left out, with their links. The result carries no LIDs.
 * 0 or -errno (*f and t unchanged).
 */
int sm_sweep_tables_canonicalize(struct sm_fabric **f, unsigned plane, struct sm_sweep_tables *t,
				 const uint8_t *keep);

#endif
