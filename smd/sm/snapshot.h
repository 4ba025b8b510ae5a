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
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct sm_fabric;
struct sm_lfts;

struct sm_snapshot {
	unsigned plane;
	uint64_t cycle;                  /* sm_cfg.cycle of the bring-up that made it (caller-defined, 0 none) */
	uint64_t made_us;                /* sm_mono_us() when it was made */
	bool up;                         /* the bring-up succeeded: lfts are on the switches */
	uint16_t sm_lid;                 /* the SM port's LID in this plane */
	uint32_t sm_port;                /* its port index in fabric, SM_NONE unknown */
	uint64_t subnet_prefix;
	const struct sm_fabric *fabric;  /* as discovered, with the LIDs assigned; never NULL */
	const struct sm_lfts *lfts;      /* as computed and programmed; NULL if routing did not run */
	atomic_uint refs;                /* private: use ref/unref */
};

/*
 * A snapshot with one reference that owns fabric and lfts (lfts may be
 * NULL); NULL on ENOMEM, and then fabric and lfts are freed. Filled in by its
 * maker, which then publishes it and from then on does not write to it.
 */
struct sm_snapshot *sm_snapshot_new(unsigned plane, struct sm_fabric *fabric, struct sm_lfts *lfts);
/* Another reference to s (returned); NULL gives NULL. Thread-safe. */
const struct sm_snapshot *sm_snapshot_ref(const struct sm_snapshot *s);
/* Drop a reference; the last one frees. Accepts NULL. Thread-safe. */
void sm_snapshot_unref(const struct sm_snapshot *s);

#endif
