/* SPDX-License-Identifier: MIT */
#ifndef SMD_SM_PHASES_H
#define SMD_SM_PHASES_H
/*
 * DOC: the phases of a bring-up (sm.h), each in its own file, run in order
 * by bringup.c over one struct sm_core (core.h)
 *
 *   sweep.c     heavy sweep (discover)
 *   delta.c     incremental sweep (discover, from the state)
 *   merge.c     an incomplete heavy sweep completed from the state
 *   lids.c      LIDs assigned, saved, set
 *   program.c   LFT blocks read back where needed, then written
 *   mft.c       MFT blocks of the group set (cfg.mcast) read back where needed, then written
 *   pkey.c      P_Key tables (partitions), changed blocks only
 *   portcfg.c   port configuration: PortInfo fields, SL2VL, VLArb tables
 *   activate.c  ports to ARMED, then ACTIVE
 *   set.c       the Sets lids.c, program.c and activate.c send, and their answers
 *
 * Each returns 0 or -errno with a message in err. They call core.c and
 * set.c, never bringup.c or each other (the orchestration is bringup.c's alone).
 */
#include "sm/core.h"

static inline int sm_port_up(const struct sm_port_info *pi)
{
	return pi->port_state >= SM_PORT_INIT;
}

/* One heavy sweep into c->f (empty fabric). 0, or -errno for hard failures. */
int sm_sweep_once(struct sm_core *c, char *err, size_t errlen);
/*
 * The heavy sweep's pieces, for the incremental sweep: a PortInfo as read
 * into the tables and the fabric's port (a switch port up with no peer is
 * queued to be explored); the BFS from the queued ports over c->f (nodes
 * already known are linked, new ones added and read as the heavy sweep
 * does; c->changed and c->lost as there); a PortInfo Get of port p of node
 * n with the heavy sweep's handler. 0 or -errno.
 */
void sm_sweep_take_pi(struct sm_core *c, uint32_t node, unsigned port, const struct sm_port_info *pi);
int sm_sweep_explore(struct sm_core *c);
int sm_sweep_get_pi(struct sm_core *c, uint32_t node, unsigned port);
/*
 * Incremental sweep from c->state (valid, with sweep tables): c->f becomes
 * the state's fabric patched with what changed: SwitchInfo of every known
 * switch; PortInfo of every port of the switches that flag PortStateChange
 * (cleared); links whose port went DOWN removed, nodes no longer reachable
 * left out (a switch every link of which went down among them); ports that
 * came up (or bounced: INIT where they were ACTIVE) explored as the heavy
 * sweep would, from there only (a returning link, host or switch);
 * renumbered, with c->delta_fresh marking the ends of the links that came
 * up. Returns 0, 1 when only a full sweep can tell (c->delta_why: a switch
 * silent along a path that holds or reset, a port in another state, an
 * answer lost or a contradiction while exploring, the state not matching),
 * or -errno.
 */
int sm_sweep_delta(struct sm_core *c, char *err, size_t errlen);
/*
 * merge.c: after a heavy sweep that lost answers, what it could not see is
 * kept from c->state (see there); *keep (caller frees, NULL when nothing
 * was merged) says which nodes of c->f to keep when renumbering. 0 or -errno.
 */
int sm_sweep_merge(struct sm_core *c, uint8_t **keep, char *err, size_t errlen);
/* Does DR path p, walked over c->f's links from the SM's node, still lead to node n? */
int sm_sweep_path_holds(const struct sm_core *c, const struct sm_dr_path *p, uint32_t n);
/*
 * Give every node whose DR path no longer holds a new one (BFS over c->f,
 * forwarding through switches and the SM's own port). Returns how many of
 * them have count[n] set (all when count is NULL), or -ENOMEM; reached (may
 * be NULL) gets 1 for every node the BFS reached.
 */
int sm_sweep_repath(struct sm_core *c, const uint8_t *count, uint8_t *reached);
/* Every node the BFS reaches by a shorter path (or whose path no longer holds) gets that one: how many, or -ENOMEM. */
int sm_sweep_shorten_paths(struct sm_core *c);
int sm_phase_lids(struct sm_core *c, struct sm_summary *sum, char *err, size_t errlen);
int sm_phase_program(struct sm_core *c, char *err, size_t errlen);
int sm_phase_activate(struct sm_core *c, struct sm_summary *sum, char *err, size_t errlen);
/* MFTs of cfg.mcast (mft.h; nothing without it), after the LFTs; sum->mft. */
int sm_phase_mft(struct sm_core *c, struct sm_summary *sum, char *err, size_t errlen);
/* The MFTs computed (if any) move into snap. */
void sm_mft_publish(struct sm_core *c, struct sm_snapshot *snap);
/*
 * portcfg.c: NeighborMTU, OperationalVLs, HOQLife, VLStallCount, VLHighLimit,
 * partition enforcement, link width/speed enabled (PortInfo), SL2VL and
 * VLArbitration tables, on every port whose values differ from cfg.portcfg.
 * Runs after program and before activate (the ARMED Sets carry what it set).
 */
int sm_phase_portcfg(struct sm_core *c, struct sm_summary *sum, char *err, size_t errlen);

/*
 * P_Key tables (pkey.c), with cfg.partitions: read what each managed port
 * holds, write only the blocks that differ; the tables end in c->pkeys.
 */
int sm_phase_pkeys(struct sm_core *c, char *err, size_t errlen);

/* set.c: the DR path to address port p of node n by (a CA port through its own link). */
void sm_set_port_path(const struct sm_core *c, uint32_t n, unsigned p, struct sm_dr_path *out);
/* set.c: a Set of attr (PortInfo goes by the port's own link, see there); answers update the tables. */
int sm_set_submit(struct sm_core *c, uint16_t attr, uint32_t mod, uint32_t node, const uint8_t *data,
		  uint8_t kind, uint16_t port, uint8_t aux);
int sm_set_lft_get(struct sm_core *c, uint32_t node, uint16_t block);
/* The answer to a PortInfo Set into the sweep tables (0), or counted as a failed Set and noted (-EBADMSG). */
int sm_set_take_pi(struct sm_core *c, uint32_t node, unsigned port, const uint8_t *data, struct sm_port_info *pi);
/* The M_Key fields every PortInfo Set carries (all 0 without keys). */
void sm_set_keys(const struct sm_core *c, uint32_t n, unsigned p, struct sm_port_info_set *s);
/* Does port info cp hold the M_Key fields we want? (Always, without keys.) */
int sm_set_keys_ok(const struct sm_core *c, uint32_t n, unsigned p, const struct sm_port_info *cp);

#endif
