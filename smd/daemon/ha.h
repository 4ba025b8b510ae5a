/* SPDX-License-Identifier: MIT */
#ifndef SMD_DAEMON_HA_H
#define SMD_DAEMON_HA_H
/*
 * DOC: the daemon's master/standby roles (issue 15), see ha.c
 *
 * Everything here runs on the loop's thread. The hooks daemon.c calls:
 * dmn_ha_new() before the first cycle (opens the elected planes' ports
 * and starts discovery), dmn_ha_may_cycle() in schedule() (mu held: a
 * standby runs no cycle), dmn_ha_mad() for every MAD read between cycles
 * (1: consumed), dmn_ha_free().
 */
#include <stdbool.h>
#include <stdint.h>

struct smd_dmn;
struct smd_conf;
struct sm_smp;
struct sm_mad_addr;

int dmn_ha_new(struct smd_dmn *d, const struct smd_conf *conf);
void dmn_ha_free(struct smd_dmn *d);
/* A cycle ended (loop thread, worker idle): a master asks the other SMs its sweep saw (IsSM ports). */
void dmn_ha_cycle_done(struct smd_dmn *d);
/*
 * A discovery thread owns the plane's port (no MAD watch, nothing sent by
 * the loop): dmn_ha_port_busy. The loop's wake pipe got a byte: collect
 * finished discoveries and decide (dmn_ha_wake; true when one ended: the
 * caller watches the plane's MADs again).
 */
bool dmn_ha_port_busy(const struct smd_dmn *d, unsigned plane);
bool dmn_ha_wake(struct smd_dmn *d);
/* Does any plane run cycles (master, or not elected)? */
bool dmn_ha_may_cycle(const struct smd_dmn *d);
/* Does this plane (master, or not elected: mock)? A cycle leaves the others out (sm_mp_plane.skip). */
bool dmn_ha_plane_may_cycle(const struct smd_dmn *d, unsigned plane);
int dmn_ha_mad(struct smd_dmn *d, unsigned plane, const struct sm_smp *smp, const struct sm_mad_addr *from,
	       uint64_t sweeps);

/* Plane i's role for status: state (enum sm_sm_state; 3 when not elected), master GUID/LID/priority. */
struct dmn_ha_role {
	bool elected;
	uint8_t state;
	uint8_t priority;
	uint64_t master_guid;
	uint16_t master_lid;
	uint8_t master_priority;
	uint64_t guid;            /* ours in the plane */
	uint16_t lid;
};
void dmn_ha_role(const struct smd_dmn *d, unsigned plane, struct dmn_ha_role *r);

/*
 * The other SMs of the plane whose SMInfo the election read (polls, probes
 * of IsSM ports and of SMs that poll us), as they last answered; at most
 * max into out. Loop thread.
 */
#define DMN_HA_MAX_PEERS 8
struct sm_elect_peer;
unsigned dmn_ha_peers(const struct smd_dmn *d, unsigned plane, struct sm_elect_peer *out, unsigned max);

#endif
