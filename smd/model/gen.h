/* SPDX-License-Identifier: MIT */
#ifndef SMD_GEN_H
#define SMD_GEN_H
/*
 * DOC: fabric generator
 *
 * Builds fat trees in memory (struct sm_fabric) for tests, benchmarks and
 * users; smd/model/topo.h writes them out as ibnetdiscover dumps or ibsim net files.
 *
 * Shape (radix k, oversubscription A:B reduced by their gcd, m = k / (A+B)):
 *  - a leaf has d = A*m host ports (1..d) and u = B*m uplinks (d+1..d+u);
 *    1:1 on an even radix gives d = u = k/2;
 *  - 2 levels: u spines; spine port i+1 goes to leaf i (at most k leaves);
 *    leaf uplink j goes to spine j. Full size k*d hosts (2,048 at k = 64).
 *  - 3 levels: pods of h = k/2 leaves and u aggregation switches; every leaf
 *    links to every agg of its pod (leaf port d+1+j -> agg j, agg port 1+i ->
 *    leaf i of the pod); agg j of every pod links to the h cores of group j
 *    (agg port h+1+c -> core j*h+c, core port 1+pod -> that agg); at most k
 *    pods, u*h cores. Full size k*h*d hosts (65,536 at k = 64).
 *  - A smaller --hosts fills leaves in order (host i on leaf i/d, port
 *    1 + i%d), and pods in order; spines/aggs/cores are all present, with
 *    unused ports left unconnected. Every switch has k ports.
 *  - levels 0 picks 2 when the hosts fit, else 3.
 *
 * Planes: the tree is repeated once per plane; each plane is its own
 * subnet (node->plane = p). Host i has one single-port CA per plane, all
 * sharing system image GUID sm_gen_sysimg_guid(i), named
 * "host%05u mlx5_%u" (host, plane). Switches are named "p%u-leaf%05u",
 * "p%u-spine%05u", "p%u-agg%05u", "p%u-core%05u" (plane, index in level).
 *
 * GUIDs (never 0, unique across planes and kinds): 0x0002c9 (OUI) << 40 |
 * kind << 36 | plane << 32 | field, kind from enum sm_gen_guid_kind.
 * Switch s of a plane (leaves first, then spines, or aggs then cores): field
 * s for its node, port and sysimg GUID. Host i's NIC: node GUID field 2*i
 * (kind 2), port GUID field i (kind 3); host i's sysimg GUID: kind 4,
 * plane 0, field i. ibsim cannot set CA port GUIDs (it derives them as
 * node GUID + port number, here kind 2 field 2*i+1), so under ibsim a NIC's
 * port GUID differs from the dump's but still collides with nothing.
 *
 * LIDs (unless no_lids): host i has LID i+1 in every plane (plane-consistent),
 * switch s has LID hosts+1+s in every plane; removed switches leave their
 * LID unused, so LIDs never depend on seed or removals. LMC 0. A fabric that
 * needs more than 0xBFFF LIDs per plane is refused unless no_lids is set.
 * shuffle_lids permutes those LIDs among a plane's hosts and switches with
 * a permutation drawn from (seed, plane): dumps whose LIDs are not
 * plane-consistent (as left by per-plane SMs), for testing LID resolution.
 *
 * Faults (per plane; only in plane fault_plane when it is >= 0), drawn from a
 * PRNG seeded by (seed, plane), so a seed gives the same fabric every time:
 *  - remove_switches: that many non-leaf switches are removed from each
 *    affected plane (leaves never are). Candidates are visited in random
 *    order and a switch whose removal would split the plane's switch graph
 *    is skipped; if fewer than asked can go, the generator fails.
 *  - remove_links: exactly round(fraction * switch-switch links left after
 *    switch removal) switch-switch links are removed from each affected
 *    plane. Links are visited in random order and a link whose removal
 *    would split the switch graph is kept (so every leaf keeps an uplink and
 *    every host still reaches every other); if the exact count cannot be
 *    removed that way, the generator fails. Host links are never removed.
 *  - remove_nics: that many hosts, drawn at random, have no NIC in each
 *    affected plane (the CA node is absent, as a NIC whose link is down is
 *    absent from a discovery): hosts whose NIC count differs across planes.
 *    Their LIDs stay unused in that plane. At least one host keeps its NIC.
 *  Switches are drawn first, then links, then NICs, from one stream, so
 *  asking for NIC removals does not move the other faults.
 *
 * Ports: linked ports are ACTIVE/LinkUp, 4x NDR; unlinked ones DOWN/Polling.
 * Vendor 0x02c9, device 0xd2f0 (switches) / 0x1021 (CAs).
 *
 * Library rules: no output, returns 0 or a negative errno with a message in
 * err. Every parameter is validated before f is touched; only -ENOMEM can
 * leave f partially filled (free it).
 */
#include <stddef.h>
#include <stdint.h>

#include "model/fabric.h"

#define SM_GEN_OUI 0x0002c9ULL
#define SM_GEN_MAX_NODES (1u << 21)   /* refuse fabrics larger than this (all planes) */
#define SM_GEN_VENDOR_ID 0x02c9
#define SM_GEN_SWITCH_DEVICE_ID 0xd2f0
#define SM_GEN_CA_DEVICE_ID 0x1021

enum sm_gen_guid_kind {
	SM_GEN_GUID_SWITCH = 1,   /* switch node GUID = port GUID = sysimg GUID */
	SM_GEN_GUID_CA = 2,       /* CA node GUID (index = host; field 2*host) */
	SM_GEN_GUID_CA_PORT = 3,  /* CA port 1 GUID (index = host) */
	SM_GEN_GUID_SYSIMG = 4,   /* host system image GUID (plane 0, index = host) */
};

enum sm_gen_level {
	SM_GEN_LEAF = 0,
	SM_GEN_SPINE = 1,  /* level 2 of a 2-level tree */
	SM_GEN_AGG = 2,    /* level 2 of a 3-level tree */
	SM_GEN_CORE = 3,   /* level 3 */
};

struct sm_gen_params {
	unsigned hosts;           /* 0 = full tree for radix/levels/oversub */
	unsigned radix;           /* switch ports, 2..SM_MAX_PORTS */
	unsigned levels;          /* 0 = auto, 2, or 3 */
	unsigned planes;          /* 1..SM_MAX_PLANES */
	unsigned oversub_down;    /* A of A:B (1:1 by default) */
	unsigned oversub_up;      /* B of A:B */
	double remove_links;      /* fraction 0..1 of switch-switch links, per plane */
	unsigned remove_switches; /* non-leaf switches per plane */
	unsigned remove_nics;     /* host NICs left out of each affected plane */
	int fault_plane;          /* -1: faults in every plane; else only this plane */
	uint64_t seed;
	int no_lids;              /* leave every LID 0 */
	int shuffle_lids;         /* per-plane random LIDs (same set, not plane-consistent) */
};

/* Dimensions of one plane, as computed from the parameters (before faults). */
struct sm_gen_shape {
	unsigned levels;
	unsigned hosts;           /* per plane */
	unsigned radix;
	unsigned down, up;        /* leaf host ports, leaf uplinks */
	unsigned leaves;
	unsigned spines;          /* 2 levels */
	unsigned pods;            /* 3 levels */
	unsigned leaves_per_pod;  /* 3 levels: k/2 */
	unsigned aggs;            /* 3 levels: pods * up */
	unsigned cores;           /* 3 levels: up * k/2 */
	unsigned switches;        /* leaves + spines or leaves + aggs + cores */
	unsigned sw_links;        /* switch-switch links of a full plane */
	unsigned max_hosts;       /* largest host count for this radix/levels/oversub */
	unsigned lids;            /* LIDs per plane: hosts + switches */
};

void sm_gen_params_init(struct sm_gen_params *p);

/* Validate p and compute the shape. 0 or -EINVAL / -ERANGE with a message. */
int sm_gen_fat_tree_shape(const struct sm_gen_params *p, struct sm_gen_shape *s,
			  char *err, size_t errlen);

/*
 * Build the fabric described by p into f, which must be empty (no nodes).
 * Plane p's nodes are added after plane p-1's; within a plane, CAs (in
 * host order) come before switches (in GUID index order). (The writers
 * put switches first, as ibnetdiscover does, whatever the model's order.)
 */
int sm_gen_fat_tree(const struct sm_gen_params *p, struct sm_fabric *f, char *err, size_t errlen);

/* GUID of generated object `index` (switch number or host) of a plane. */
static inline uint64_t sm_gen_guid(enum sm_gen_guid_kind kind, unsigned plane, uint32_t index)
{
	/* even fields, so that ibsim's node GUID + 1 port GUIDs hit no node GUID */
	uint64_t field = kind == SM_GEN_GUID_CA ? (uint64_t)index * 2 : index;
	return SM_GEN_OUI << 40 | (uint64_t)kind << 36 | (uint64_t)(plane & 0xf) << 32 |
	       (field & 0xffffffffULL);
}

static inline uint64_t sm_gen_switch_guid(unsigned plane, uint32_t s)
{
	return sm_gen_guid(SM_GEN_GUID_SWITCH, plane, s);
}

static inline uint64_t sm_gen_ca_guid(unsigned plane, uint32_t host)
{
	return sm_gen_guid(SM_GEN_GUID_CA, plane, host);
}

static inline uint64_t sm_gen_ca_port_guid(unsigned plane, uint32_t host)
{
	return sm_gen_guid(SM_GEN_GUID_CA_PORT, plane, host);
}

static inline uint64_t sm_gen_sysimg_guid(uint32_t host)
{
	return sm_gen_guid(SM_GEN_GUID_SYSIMG, 0, host);
}

/* Level of generated switch number s (GUID index) of a plane with shape sh. */
enum sm_gen_level sm_gen_switch_level(const struct sm_gen_shape *sh, uint32_t s);

#endif
