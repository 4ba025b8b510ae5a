/* SPDX-License-Identifier: MIT */
#ifndef SMD_ROUTING_MCAST_H
#define SMD_ROUTING_MCAST_H
/*
 * DOC: multicast spanning trees (issue 14), pure
 *
 * Input: a read-only fabric, one plane, groups whose members are fabric
 * port indices (a CA/router port, or a switch's port 0) with a flag saying
 * whether the member receives (full or non member) or only sends. Output:
 * the port masks of every switch for every MLID (struct sm_mfts), and per
 * group its root switch and tree depth. No MADs, no globals, no logging.
 *
 * One tree per group, built on the switch graph:
 *   - root: among the switches whose largest hop count to a member is the
 *     least (OpenSM's choice, osm_mcast_mgr.c: a member behind a switch
 *     counts one hop more), the ((mlid - 0xC000) mod count)-th in node
 *     order. On a fat tree every group that spans more than one leaf (or
 *     pod) has all spines (cores) as candidates, so groups spread over
 *     them round robin; OpenSM takes the first one for every group. The
 *     choice depends on nothing but the group and the fabric, so adding a
 *     group never moves another one's tree (only its own blocks change).
 *   - branches: from each member's switch (node order) toward the root
 *     along a shortest path, stopping at a switch already in the tree; among
 *     the equal next hops (parallel cables included) a hash of (mlid,
 *     switch) picks one, so groups spread over the uplinks too. Every tree
 *     switch but the root has exactly one parent, nearer the root: a tree.
 *   - forwarding: a tree switch forwards up to its parent, down to a child
 *     only when a receiver lies below it, and out of a member's port only
 *     when the member receives: send-only members get a path into the tree,
 *     the tree does not forward to them (OpenSM forwards to every member).
 *     A switch never sends a packet back out of the port it came in by, so
 *     forwarding over tree edges has no loop and every sender reaches every
 *     receiver.
 * A group with fewer than two members in the plane, or no receiver, gets
 * no entries (as OpenSM). Members unreachable from the root's part of the
 * fabric are skipped and counted.
 */
#include <stddef.h>
#include <stdint.h>

#include "model/fabric.h"

#define SM_MCAST_MLID_FIRST 0xC000u
#define SM_MCAST_BLOCK_MLIDS 32     /* MLIDs per MulticastForwardingTable block */

/*
 * The MFTs of one plane: for every switch node n (row[n] != SM_NONE) and
 * MLID m in [0xC000, 0xC000 + n_mlids), the port mask (bit p: port p, port
 * 0 included) in mask[row[n] * n_mlids + (m - 0xC000)] (256 bits). Per MLID
 * the root switch (node index, SM_NONE: no tree) and the tree depth (hops
 * from the root to the farthest member, its own link included).
 */
struct sm_mfts {
	uint32_t n_nodes;           /* entries of row[] (the fabric's nodes) */
	uint32_t *row;              /* [n_nodes] row of a switch of the plane, SM_NONE otherwise */
	uint32_t n_rows;            /* switches of the plane */
	uint32_t *row_node;         /* [n_rows] node index of each row (node order) */
	uint32_t n_mlids;
	uint64_t (*mask)[4];        /* [n_rows * n_mlids] */
	uint32_t *root;             /* [n_mlids] */
	uint8_t *depth;             /* [n_mlids] */
	uint32_t n_groups;          /* groups that got a tree */
	uint64_t skipped;           /* members not cabled to a switch of the plane, or unreachable */
};

/* The mask of switch node n for MLID mlid, NULL when none is kept. */
static inline const uint64_t *sm_mfts_mask(const struct sm_mfts *m, uint32_t n, uint16_t mlid)
{
	if (!m || n >= m->n_nodes || m->row[n] == SM_NONE || mlid < SM_MCAST_MLID_FIRST ||
	    (uint32_t)(mlid - SM_MCAST_MLID_FIRST) >= m->n_mlids)
		return NULL;
	return m->mask[(size_t)m->row[n] * m->n_mlids + (mlid - SM_MCAST_MLID_FIRST)];
}

struct sm_mcast_member {
	uint32_t port;              /* fabric port index: CA/router port, or switch port 0 */
	uint8_t recv;               /* 1: full or non member (receives), 0: send-only */
};

struct sm_mcast_group {
	uint16_t mlid;              /* 0xC000..0xFFFE */
	const struct sm_mcast_member *m;
	uint32_t n;
	uint8_t keep;               /* sm_mcast_route_from(): the same as in prev: its tree is copied */
};

/*
 * Trees for groups g[0..n) (any order; one group per MLID, a repeated MLID
 * is -EINVAL) over plane `plane` of f. *out: caller frees (sm_mfts_free).
 * 0, or -ENOMEM / -EINVAL with a message in err.
 */
int sm_mcast_route(const struct sm_fabric *f, unsigned plane, const struct sm_mcast_group *g, size_t n,
		   struct sm_mfts **out, char *err, size_t errlen);
/*
 * The same, reusing prev (MFTs computed over the same fabric: same nodes,
 * same links) for the groups flagged keep: a tree depends only on its group
 * and the fabric, so copying it gives what routing it again would. prev
 * NULL or of another shape: every group is routed.
 */
int sm_mcast_route_from(const struct sm_fabric *f, unsigned plane, const struct sm_mcast_group *g, size_t n,
			const struct sm_mfts *prev, struct sm_mfts **out, char *err, size_t errlen);
void sm_mfts_free(struct sm_mfts *m);   /* accepts NULL */

/* Groups per root switch: counts[row] (n_rows entries, caller's); returns the number of roots used. */
uint32_t sm_mfts_root_counts(const struct sm_mfts *m, uint32_t *counts);

/*
 * Check MFTs m against groups g[0..n) by flooding (routing/mcast_verify.c):
 * from every member in the plane, a packet to the group's MLID enters its
 * switch (by the member's port, or port 0 for a switch member) and each
 * switch sends it out of every port of its mask but the one it came in
 * by. Counted: receivers a sender does not reach (itself excepted),
 * deliveries to ports that are not receivers or more than once, switches
 * a packet enters twice (a loop; that flood stops there), and per group the
 * largest number of switch hops a packet took. m may come from anywhere
 * (a read-back), as long as its rows cover the plane's switches.
 */
struct sm_mcast_verdict {
	uint64_t floods;            /* senders flooded */
	uint64_t unreached;         /* (sender, receiver) pairs not delivered */
	uint64_t extra;             /* deliveries to non-receivers or repeated */
	uint64_t loops;             /* switches entered twice by one packet */
	uint32_t max_hops;
	uint16_t first_bad_mlid;    /* 0: none */
};
int sm_mcast_verify(const struct sm_fabric *f, unsigned plane, const struct sm_mfts *m,
		    const struct sm_mcast_group *g, size_t n, struct sm_mcast_verdict *v);

#endif
