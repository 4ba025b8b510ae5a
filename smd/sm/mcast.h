/* SPDX-License-Identifier: MIT */
#ifndef SMD_SM_MCAST_H
#define SMD_SM_MCAST_H
/*
 * DOC: multicast groups as the SM programs them (issue 14)
 *
 * CONTRACT between the SA side (MCMemberRecord create/join/leave, MLID
 * allocation, the IPoIB broadcast groups; smd/sa) and the SM side (one
 * spanning tree per group, MFT blocks written where they changed;
 * smd/sm, routing/). Change it only if you must, and say so in the commit
 * message.
 *
 * The SA owns the group table (on the loop thread). Each change produces a
 * new struct sm_mc_set: immutable, refcounted, shared with the plane's
 * worker, which computes MFTs from the set it was handed and the fabric it
 * swept (members are named by port GUID, so a set survives a re-sweep that
 * renumbers ports). gen grows with every change: the worker programs only
 * when the set it last programmed is older, and a bring-up always programs
 * the newest set it was handed.
 */
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "model/fabric.h"
#include "routing/mcast.h"

#define SM_MLID_FIRST 0xC000u
#define SM_MLID_LAST 0xFFFEu        /* 0xFFFF is the permissive LID */
#define SM_MFT_BLOCK_LIDS 32        /* MulticastForwardingTable: 32 MLIDs x 16 ports per block */
#define SM_MFT_BLOCK_PORTS 16

/* JoinState bits (IBA 15.2.5.17). */
#define SM_MC_FULL 0x1
#define SM_MC_NON 0x2
#define SM_MC_SENDONLY 0x4

struct sm_mc_member {
	uint64_t port_guid;
	uint8_t join_state;         /* SM_MC_* bits, never 0 */
};

struct sm_mc_group {
	uint16_t mlid;              /* SM_MLID_FIRST..SM_MLID_LAST */
	uint8_t mgid[16];
	uint16_t pkey;              /* with the membership bit as joined */
	uint8_t mtu, rate, sl, scope;
	struct sm_mc_member *members;   /* sorted by port_guid */
	size_t n_members;
};

struct sm_mc_set {
	unsigned plane;
	uint64_t gen;
	struct sm_mc_group *groups; /* sorted by mlid */
	size_t n_groups;
	atomic_uint refs;           /* private */
};

/* An empty set with one reference (NULL on ENOMEM); its maker fills it, then never writes to it. */
struct sm_mc_set *sm_mc_set_new(unsigned plane, uint64_t gen);
struct sm_mc_set *sm_mc_set_ref(struct sm_mc_set *s);
void sm_mc_set_unref(struct sm_mc_set *s);   /* accepts NULL; frees groups and members at 0 */

/*
 * A set from groups whose members are port indices of f (routing/mcast.h):
 * members by port GUID, receivers FULL, the others SENDONLY (tests, the
 * benchmark, synthetic loads). NULL on ENOMEM.
 */
struct sm_mc_set *sm_mc_set_from_groups(const struct sm_fabric *f, unsigned plane, uint64_t gen,
					const struct sm_mcast_group *g, size_t n);

/*
 * The MFTs of one plane: struct sm_mfts (routing/mcast.h, where the trees
 * are computed): a port mask per switch and MLID, rows for the plane's
 * switches only (row[node]), the root and depth of each group's tree.
 * sm_mfts_free() accepts NULL.
 */
/*
 * One spanning tree per group over fabric f (plane s->plane): every member
 * reaches every other, no loop; on fat trees the groups' roots spread over
 * the spines. Members not in f are skipped (counted in *missing if not NULL).
 * 0 or -errno with a message in err.
 */
int sm_mc_route(const struct sm_fabric *f, const struct sm_mc_set *s, struct sm_mfts **out, size_t *missing,
		char *err, size_t errlen);
/*
 * The same when f is the fabric prev_mfts were computed over for prev_set
 * (the MFT-only pass): groups of s equal to prev_set's (same MLID, same
 * members in the same order) keep their trees, only the others are routed.
 */
int sm_mc_route_from(const struct sm_fabric *f, const struct sm_mc_set *s, const struct sm_mc_set *prev_set,
		     const struct sm_mfts *prev_mfts, struct sm_mfts **out, size_t *missing, char *err, size_t errlen);

#endif
