/* SPDX-License-Identifier: MIT */
#ifndef SMD_PLANELID_H
#define SMD_PLANELID_H
/*
 * DOC: plane-consistent LIDs
 *
 * In a multi-plane fabric the NIC of host H gets the same LID in every
 * plane, so software addresses a host identically on any plane. One
 * sm_plane_lids object is shared by the bring-up threads of all planes
 * (a mutex guards it); each plane asks it for the LIDs of its ports just
 * before its own LID phase, so a slow or dead plane never holds the
 * others back.
 *
 * Keys: a CA port is keyed by its host: the system image GUID when the
 * NIC reports one, else a hash of the host name in its node description
 * (text before the first space, tagged with bit 63 set), else its port
 * GUID. Host LIDs are unique over all planes and never used by a switch
 * of any plane; a switch LID is unique within its plane.
 *
 * One policy for every mode: smd --once (one plane or several) and the
 * daemon all assign LIDs here, so either can follow the other, in any
 * order, without a LID changing (tests/lid_policy.sh).
 *
 * Order: each plane takes its hosts in host-key order (the same order in
 * every plane), then its switches in GUID order: on a cold fabric host
 * LIDs are 1, 2, ... This, not OpenSM's port GUID order, is what makes a
 * host's LID independent of which plane asks first. A host key seen for
 * the first time takes, if aligned and free across the planes: the LID
 * the seed gives its port GUID, else the LID its port already holds
 * (inherited from a previous SM), else the lowest free aligned range of
 * 2^LMC LIDs. A switch takes its seed LID, else its current LID, if no
 * host and no other switch of its plane holds it, else the lowest such
 * LID; a plane's switch LIDs are recomputed on each call. Inherited and
 * fresh LIDs avoid the seed's LIDs of other ports (OpenSM keeps the LIDs
 * of absent GUIDs reserved too). Conflicts (an inherited LID held
 * elsewhere, two ports of one host in one plane) are resolved by these
 * rules, counted and reported through the note callback.
 *
 * Files: STATE_DIR/plane-lids (guid2lid format with host keys for GUIDs)
 * is the host table; STATE_DIR/guid2lid (OpenSM's format) holds every
 * port's LID, all planes together (planes are separate LID spaces, so a
 * LID may appear twice), and is the seed of the next start, or
 * sm_plane_lids_seed() replaces it by another file (--guid2lid FILE).
 * Both are written by sm_plane_lids_save() when they changed.
 *
 * Determinism: when all planes see the same hosts, host LIDs do not depend
 * on which plane asks first. When planes differ (a NIC missing in one
 * plane), the order planes finish discovery can change which host gets
 * which fresh LID on a first start; the tables are persisted, so every
 * later start reproduces it.
 */
#include <stddef.h>
#include <stdint.h>
#include "model/fabric.h"
#include "sm/lidmgr.h"

struct sm_plane_lids;

struct sm_plane_lids_stats {
	uint32_t keys;          /* hosts and switches in the table */
	uint32_t from_table;    /* ports given their key's existing LID */
	uint32_t inherited;     /* new keys that kept the LID the port held */
	uint32_t fresh;         /* new keys given a fresh LID */
	uint32_t from_seed;     /* new keys and switches given their guid2lid LID */
	uint32_t sw_kept;       /* switches that kept the LID they held */
	uint32_t sw_fresh;      /* switches given a fresh LID */
	uint32_t moved;         /* ports given another LID than the one they held */
	uint32_t conflicts;     /* inherited LIDs refused, duplicate NICs in one plane */
};

/*
 * Open the shared table. state_dir NULL: nothing persisted. An existing
 * STATE_DIR/plane-lids file is loaded, and STATE_DIR/guid2lid as the seed
 * (bad content in either: -EINVAL, message in err). lmc 0..7 applies to CA ports; switches always use one LID.
 */
int sm_plane_lids_open(const char *state_dir, unsigned lmc, sm_note_fn *note, void *note_arg,
		       struct sm_plane_lids **out, char *err, size_t errlen);
void sm_plane_lids_free(struct sm_plane_lids *pl);  /* accepts NULL */

/*
 * Seed the table from a guid2lid file (OpenSM's format: port GUID, first
 * and last LID), replacing the seed sm_plane_lids_open() read from
 * STATE_DIR/guid2lid; the file's LIDs are then written there. -ENOENT if
 * the file is missing, -EINVAL with "FILE:LINE: reason" on bad content.
 */
int sm_plane_lids_seed(struct sm_plane_lids *pl, const char *path, char *err, size_t errlen);

/* Persist the tables (atomic writes) if they changed. 0 or -errno with err. */
int sm_plane_lids_save(struct sm_plane_lids *pl, char *err, size_t errlen);

/*
 * A daemon's save, with back-off: after a failed write (ENOSPC, EIO...)
 * the next attempt is due 1 s later, then 2, 4, ... at most 60 s; a call
 * before that does not write and returns the last error again (so a log
 * does not repeat an attempt that was not made). sv tells what happened.
 * 0 (saved, or nothing to save), or -errno with err (this attempt's or the
 * last one's).
 */
#define SM_PLANE_LIDS_BACKOFF_MAX_MS 60000u
struct sm_plane_lids_save {
	int tried;            /* this call wrote (or tried to) */
	uint32_t failures;    /* consecutive failed attempts (0: the tables are on disk) */
	uint32_t recovered;   /* this call saved after that many failed attempts, 0 none */
	uint64_t failing_ms;  /* recovered: how long the saves had been failing */
	uint64_t next_ms;     /* failures: when the next attempt is due */
};
int sm_plane_lids_save_backoff(struct sm_plane_lids *pl, uint64_t now_ms, struct sm_plane_lids_save *sv,
			       char *err, size_t errlen);

/*
 * Fill want[port index] with the LID every LID-bearing port of `plane` of
 * f must get (switch port 0, CA/router ports with a GUID); other entries
 * are left alone. cur (may be NULL) holds the LIDs ports have now.
 * Thread-safe. 0, -ENOSPC (LID space exhausted), -ENOMEM.
 */
int sm_plane_lids_want(struct sm_plane_lids *pl, const struct sm_fabric *f, unsigned plane,
		       const uint16_t *cur, uint16_t *want);

/* The key a port is identified by (see DOC). */
uint64_t sm_plane_lids_key(const struct sm_fabric *f, uint32_t port_index);

void sm_plane_lids_stats(struct sm_plane_lids *pl, struct sm_plane_lids_stats *st);

#endif
