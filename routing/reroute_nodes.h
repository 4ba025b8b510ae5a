/* SPDX-License-Identifier: MIT */
#ifndef SMD_ROUTING_REROUTE_NODES_H
#define SMD_ROUTING_REROUTE_NODES_H
/*
 * DOC: a reroute after hosts went away or came back (reroute_nodes.c)
 *
 * A host that reboots loses its link; the sweep no longer finds it and
 * renumbers the fabric without it, and numbers it in again when it comes
 * back. Either way the fabric is not the previous one minus cables in the
 * same numbering (reroute.h) and would be routed and validated in full.
 *
 * Hosts gone: when the new fabric is the previous one minus endpoint nodes
 * and cables (every switch kept, the nodes left in the same order, every
 * LID and the top LID kept), it is written into the previous numbering
 * (fp): the nodes that went away stay as nodes without cables (their LIDs
 * reserved, as the LID store keeps them), so the engine's reroute() and
 * the incremental validation see lost cables, and the tables they accept
 * are then laid out for the new fabric (sm_reroute_relayout(): the same
 * switch slots, only node indices move).
 *
 * Hosts back: when the new fabric is the previous one plus endpoint nodes
 * and their cables (nothing else), the previous fabric is written into the
 * new numbering (pfp: the new nodes without cables) and the previous tables
 * laid out for it (prev, rows shared); the engine's reroute() starts from
 * them with no lost cable, and the incremental validation accepts cables
 * that join a new endpoint to a switch that had endpoints already
 * (sm_reroute_hosts_back()).
 */
#include "model/fabric.h"
#include "model/lfts.h"
#include "routing/validate.h"

struct sm_reroute_renum {
	struct sm_fabric *fp;           /* hosts gone: the new fabric in the previous numbering */
	struct sm_fabric *pfp;          /* hosts back: the previous fabric in the new numbering */
	struct sm_lfts prev;            /* hosts back: the previous tables laid out for it (rows not owned) */
	struct sm_validate_prev vprev;  /* hosts back: { pfp, &prev } */
};

/*
 * f against the previous fabric pf and its tables pl in plane: 1 with
 * rn->fp (hosts gone) or rn->pfp, rn->prev, rn->vprev (hosts back) set; 0
 * when neither applies (nothing held); -ENOMEM. sm_reroute_renum_end()
 * after either.
 */
int sm_reroute_renum_begin(struct sm_reroute_renum *rn, const struct sm_fabric *f, const struct sm_fabric *pf,
			   const struct sm_lfts *pl, unsigned plane);
void sm_reroute_renum_end(struct sm_reroute_renum *rn);

/* Lay l (switch slots of plane in another numbering, same order) out for f: 0, -EINVAL, -ENOMEM. */
int sm_reroute_relayout(struct sm_lfts *l, const struct sm_fabric *f, unsigned plane);

/*
 * f is pf (same numbering) plus cables, each joining an endpoint port that
 * had none to a switch port that had none, on a switch that has another
 * endpoint cabled in pf (its hosts' routes were checked): 1, else 0.
 */
int sm_reroute_hosts_back(const struct sm_fabric *f, const struct sm_fabric *pf, unsigned plane);

#endif
