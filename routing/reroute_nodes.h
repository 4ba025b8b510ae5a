/* SPDX-License-Identifier: MIT */
#ifndef SMD_ROUTING_REROUTE_NODES_H
#define SMD_ROUTING_REROUTE_NODES_H
/*
 * DOC: a reroute after hosts went away (reroute_nodes.c)
 *
 * A host that reboots loses its link; the sweep no longer finds it and
 * renumbers the fabric without it, so the fabric is not the previous one
 * minus cables in the same numbering (reroute.h) and would be routed and
 * validated in full. When the new fabric is the previous one minus
 * endpoint nodes and cables (every switch kept, in the same order, the
 * nodes left in the same order, every LID kept), it is written back into
 * the previous numbering: the nodes that went away stay as nodes without
 * cables (their LIDs reserved, as the LID store keeps them), so the
 * engine's reroute() and the incremental validation see a lost cable, and
 * the tables they accept are then laid out for the new fabric (the same
 * switch slots: only the node indices move).
 */
#include "model/fabric.h"
#include "model/lfts.h"

/*
 * f as pf minus cables in pf's numbering (*fp, sm_fabric_free), when f is
 * pf minus endpoint nodes and cables in plane as above: 1; 0 when not
 * (nothing allocated), -ENOMEM.
 */
int sm_reroute_renumber(const struct sm_fabric *f, const struct sm_fabric *pf, unsigned plane,
			struct sm_fabric **fp);

/* Lay l (switch slots of plane in another numbering, same order) out for f: 0, -EINVAL, -ENOMEM. */
int sm_reroute_relayout(struct sm_lfts *l, const struct sm_fabric *f, unsigned plane);

#endif
