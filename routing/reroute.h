/* SPDX-License-Identifier: MIT */
#ifndef SMD_ROUTING_REROUTE_H
#define SMD_ROUTING_REROUTE_H
/*
 * DOC: what a reroute starts from (reroute.c)
 *
 * After an incremental sweep the SM holds the previous fabric and its
 * accepted LFTs. When the new fabric has the same numbering (nodes, ports,
 * LIDs) and only lost cables, both the incremental validation
 * (validate_incr.c) and an engine's reroute() (engine.h) work from the
 * list of ports whose cable is gone; anything else is routed and checked
 * in full.
 */
#include <stdint.h>
#include "model/fabric.h"
#include "model/lfts.h"

/*
 * Same nodes, ports and LIDs in the plane (numbering included) in f and
 * pf, and l (may be NULL) laid out as pl (switch slots, top LID).
 */
int sm_reroute_same_numbering(const struct sm_fabric *f, const struct sm_fabric *pf, unsigned plane,
			      const struct sm_lfts *l, const struct sm_lfts *pl);

/*
 * The ports of pf whose cable f lacks, both ends, ascending (*out, caller
 * frees; NULL when none). 1 when f is pf minus cables, 0 when a cable
 * appeared or moved, -ENOMEM. Assumes sm_reroute_same_numbering().
 */
int sm_reroute_removed(const struct sm_fabric *f, const struct sm_fabric *pf, uint32_t **out, uint32_t *n);

#endif
