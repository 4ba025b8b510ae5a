/* SPDX-License-Identifier: MIT */
#ifndef SMD_NEIGHBOURS_H
#define SMD_NEIGHBOURS_H
/*
 * DOC: the neighbour table (derived M_Keys at protect bits 2-3)
 *
 * At M_KeyProtectBits 2 and 3 a port answers no Get, not even NodeInfo,
 * without its key; a derived key (sm/mkey.h) needs the port's GUID. An SM
 * that keeps running knows the GUID behind each port from its last sweep
 * (sm_core_guid_behind, the state's fabric); one that restarts does not.
 * The table remembers, for every link end a sweep saw (node GUID, port
 * number), the GUID whose key protects the SMA behind it (the peer's
 * sm_keys_sma_guid): saved in STATE_DIR/neighbours after complete heavy
 * sweeps, read at start, consulted when the state knows nothing. A link
 * recabled since then is found as a port that does not answer; the port's
 * lease (m_key_lease_period) is what frees it.
 *
 * What it does not solve: an SM that never swept the subnet as master (a
 * first start, or a standby that never was master) has no table; it
 * cannot see beyond its own node until the leases expire
 * (m_key_lease_period; 0: never), which sm_keys_open notes.
 *
 * File: sealed state file (lib/statefile.h), mode 0600, one line per
 * entry "0xNODEGUID PORT 0xSMAGUID", '#' comments. Library code: 0 or
 * -errno with a message.
 */
#include <stddef.h>
#include <stdint.h>

#include "model/fabric.h"
#include "sm/lidmgr.h"   /* sm_note_fn */

struct sm_nbr_entry {
	uint64_t node_guid;
	uint64_t sma_guid;
	uint8_t port;
};

struct sm_nbr {
	struct sm_nbr_entry *e;       /* sorted by (node_guid, port) */
	size_t n, cap;
};

/* Every linked port of plane's fabric f into t (replacing entries of the same link end). 1 changed, 0 not, -ENOMEM. */
int sm_nbr_add_fabric(struct sm_nbr *t, const struct sm_fabric *f);
/* The SMA GUID behind port `port` of node node_guid, 0 unknown. */
uint64_t sm_nbr_lookup(const struct sm_nbr *t, uint64_t node_guid, unsigned port);
int sm_nbr_copy(struct sm_nbr *dst, const struct sm_nbr *src);
int sm_nbr_save(const struct sm_nbr *t, const char *path, char *err, size_t errlen);
/* -ENOENT when absent; -EINVAL with FILE:LINE when damaged. */
int sm_nbr_load(struct sm_nbr *t, const char *path, char *err, size_t errlen);
void sm_nbr_free(struct sm_nbr *t);

/*
 * The programs' use: when k has derived keys at protect bits 2-3 and
 * state_dir is set, path gets STATE_DIR/neighbours and t what it holds
 * (absent: empty; damaged: noted, empty); returns 1 (keep the table), 0
 * when no table is needed.
 */
struct sm_keys;
int sm_nbr_open(const char *state_dir, const struct sm_keys *k, struct sm_nbr *t, char *path, size_t plen,
		sm_note_fn *note, void *note_arg);
/* A complete sweep's fabric into t, saved to path when it changed. 0 or -errno with err. */
int sm_nbr_update(struct sm_nbr *t, const struct sm_fabric *f, const char *path, char *err, size_t errlen);

#endif
