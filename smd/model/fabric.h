/* SPDX-License-Identifier: MIT */
#ifndef SMD_FABRIC_H
#define SMD_FABRIC_H
/*
 * DOC: fabric model
 *
 * One struct sm_fabric owns every node, port and link of one or more planes
 * (separate subnets). Everything is kept in flat arrays indexed by small
 * integers, so a 16,384-host, 768-switch fabric is a handful of contiguous
 * allocations (a few tens of MB at most), and engines can walk it without
 * chasing pointers.
 *
 * Nodes: f->nodes[0 .. n_nodes-1]. Each node owns nports+1 consecutive
 * entries of f->ports starting at node->port0 (port 0 first, even for CAs
 * where port 0 does not exist on the wire; its guid is 0 there). So the
 * port with number p of node n is f->ports[f->nodes[n].port0 + p], O(1).
 *
 * Links are symmetric: port a has peer (node, portnum) = b and b has a.
 * sm_fabric_link() sets both sides; an unconnected port has peer_node ==
 * SM_NONE.
 *
 * Lookup by node GUID and port GUID is an open-addressing hash (O(1)); by
 * LID it is a per-plane array of 0xC000 port indices (O(1)), with every LID
 * of an LMC range mapped. GUIDs must be unique across all planes.
 *
 * Invariants: indices never change once assigned (nodes are never removed
 * from a fabric; a new sweep builds a new fabric), but for
 * sm_fabric_renumber(), the sweep's GUID-order renumbering in place.
 * Functions return 0 or a negative errno; they never log.
 */
#include "lib/mix.h"
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SM_NONE UINT32_MAX
#define SM_MAX_PLANES 16
#define SM_MAX_PORTS 254           /* ports per node, 1..254 (255 is reserved) */
#define SM_UNICAST_LID_MAX 0xBFFF  /* highest unicast LID */
#define SM_LID_SPACE 0xC000
#define SM_DESC_MAX 64             /* NodeDescription is 64 bytes on the wire */

enum sm_node_type {
	SM_NODE_UNKNOWN = 0,
	SM_NODE_CA = 1,     /* values match IB NodeInfo.NodeType */
	SM_NODE_SWITCH = 2,
	SM_NODE_ROUTER = 3,
};

/* IB PortInfo.PortState values */
enum sm_port_state {
	SM_PORT_NOP = 0,
	SM_PORT_DOWN = 1,
	SM_PORT_INIT = 2,
	SM_PORT_ARMED = 3,
	SM_PORT_ACTIVE = 4,
};

struct sm_port {
	uint64_t guid;       /* port GUID; for a switch, every port carries the port-0 GUID */
	uint32_t node;       /* owning node index */
	uint32_t peer_node;  /* SM_NONE when unconnected */
	uint16_t lid;        /* base LID (0 = none); for a switch only port 0 has one */
	uint8_t num;         /* port number */
	uint8_t peer_port;   /* peer's port number (valid when peer_node != SM_NONE) */
	uint8_t lmc;         /* 0..7 */
	uint8_t state;       /* enum sm_port_state */
	uint8_t phys_state;  /* IB PortPhysicalState (5 = LinkUp) */
	uint8_t width;       /* LinkWidthActive encoding (1=1x 2=4x 4=8x 8=12x 16=2x), 0 unknown */
	uint8_t speed;       /* LinkSpeedActive / extended encoding as in ibnetdiscover, 0 unknown */
	uint8_t flags;       /* SM_PORT_F_* */
};

#define SM_PORT_F_EXT_SPEED 0x01 /* speed is an extended speed (FDR/EDR/HDR/NDR) */
#define SM_PORT_F_FDR10 0x02     /* Mellanox FDR10 (speed holds the base QDR value 4) */
#define SM_PORT_F_ISSM 0x04      /* PortInfo.CapabilityMask IsSM: an SM runs behind it (sweeps only) */

struct sm_node {
	uint64_t guid;
	uint64_t sysimg_guid;
	uint32_t port0;      /* index of this node's port 0 in f->ports */
	uint32_t vendor_id;  /* 24 bits */
	uint16_t device_id;
	uint8_t type;        /* enum sm_node_type */
	uint8_t nports;      /* number of physical ports (1..254) */
	uint8_t plane;       /* plane (subnet) index, 0..SM_MAX_PLANES-1 */
	uint8_t flags;       /* SM_NODE_F_* */
	uint16_t lft_cap;    /* switch LinearFDBCap, 0 unknown */
	uint32_t revision;
	char desc[SM_DESC_MAX + 1]; /* NUL-terminated NodeDescription */
};

#define SM_NODE_F_ENHANCED_SP0 0x01 /* switch port 0 is enhanced */

struct sm_guid_map {
	uint64_t *keys;      /* 0 = empty slot */
	uint32_t *vals;
	uint32_t cap;        /* power of two */
	uint32_t count;
};

/*
 * The GUID hash map used by the fabric, usable on its own: keys are
 * non-zero 64-bit GUIDs, values 32-bit. A zeroed struct is an empty map.
 * get returns SM_NONE when absent; put returns -EEXIST for a present key,
 * -EINVAL for key 0, -ENOMEM.
 */
uint32_t sm_guid_map_get(const struct sm_guid_map *m, uint64_t key);
int sm_guid_map_put(struct sm_guid_map *m, uint64_t key, uint32_t val);
void sm_guid_map_free(struct sm_guid_map *m);  /* empties it */
/* Remove key (backward-shift deletion: no tombstones); absent keys are fine. */
void sm_guid_map_del(struct sm_guid_map *m, uint64_t key);

struct sm_plane {
	char name[32];       /* "plane0" or a user-given name */
	uint32_t *lid_map;   /* SM_LID_SPACE entries: port index or SM_NONE; NULL until a LID is set */
	uint16_t max_lid;    /* highest LID in use in this plane */
	uint16_t sm_lid;     /* LID of the SM port of this plane, 0 unknown */
	uint32_t sm_port;    /* port index of the local SM port, SM_NONE unknown */
	uint64_t subnet_prefix;
};

struct sm_fabric {
	struct sm_node *nodes;
	uint32_t n_nodes, cap_nodes;
	struct sm_port *ports;
	uint32_t n_ports, cap_ports;
	struct sm_guid_map node_by_guid;
	struct sm_guid_map port_by_guid;  /* CA/router port GUIDs and switch port-0 GUIDs */
	struct sm_plane planes[SM_MAX_PLANES];
	uint8_t n_planes;                 /* at least 1 */
};

struct sm_fabric_counts {
	uint32_t nodes, switches, cas, routers;
	uint32_t links;        /* undirected links */
	uint32_t sw_links;     /* undirected switch-switch links */
	uint32_t lids;         /* LIDs assigned (counting LMC ranges) */
};

struct sm_fabric *sm_fabric_new(void);
void sm_fabric_free(struct sm_fabric *f);     /* accepts NULL */

/* Reserve room so that large fabrics do not grow by doubling. Optional. */
int sm_fabric_reserve(struct sm_fabric *f, uint32_t nodes, uint32_t ports);

/*
 * Add a node. Returns its index (>= 0) or -EEXIST (GUID already present),
 * -EINVAL (bad type, guid 0, nports 0 or > SM_MAX_PORTS, plane out of range),
 * -ENOMEM. Ports start unconnected, DOWN, LID 0. For a CA/router, port GUIDs
 * are 0 until sm_fabric_set_port_guid(); for a switch, every port gets the
 * node's port-0 GUID given as port0_guid (0 = use node guid).
 */
int64_t sm_fabric_add_node(struct sm_fabric *f, enum sm_node_type type, uint64_t guid,
			   unsigned nports, unsigned plane, uint64_t port0_guid);

static inline struct sm_node *sm_node(const struct sm_fabric *f, uint32_t n)
{
	return &f->nodes[n];
}

/* Port number p (0..nports) of node n; caller guarantees range. */
static inline struct sm_port *sm_port(const struct sm_fabric *f, uint32_t n, unsigned p)
{
	return &f->ports[f->nodes[n].port0 + p];
}

static inline uint32_t sm_port_index(const struct sm_fabric *f, uint32_t n, unsigned p)
{
	return f->nodes[n].port0 + p;
}

/* Port p of node n, or NULL if p is out of range (0 allowed only for switches). */
struct sm_port *sm_fabric_port_checked(const struct sm_fabric *f, uint32_t n, unsigned p);

/* Set a CA/router port's GUID (indexed for lookup). -EEXIST on duplicates. */
int sm_fabric_set_port_guid(struct sm_fabric *f, uint32_t n, unsigned p, uint64_t guid);

/*
 * Connect (na,pa) <-> (nb,pb). -EINVAL for out-of-range ports, port 0, or
 * a cross-plane link; -EBUSY if either side is already linked elsewhere
 * (re-linking the same pair is a no-op returning 0).
 */
int sm_fabric_link(struct sm_fabric *f, uint32_t na, unsigned pa, uint32_t nb, unsigned pb);
/* Disconnect a port (and its peer). No-op if unconnected. */
void sm_fabric_unlink(struct sm_fabric *f, uint32_t n, unsigned p);

/*
 * Set the base LID and LMC of port p of node n (for switches, p must be 0).
 * Maps all 2^lmc LIDs in the plane's LID table. -EINVAL on bad LID/LMC,
 * -EEXIST if any LID of the range is held by another port. lid 0 clears.
 */
int sm_fabric_set_lid(struct sm_fabric *f, uint32_t n, unsigned p, uint16_t lid, uint8_t lmc);

uint32_t sm_fabric_find_node(const struct sm_fabric *f, uint64_t node_guid);  /* SM_NONE if absent */
uint32_t sm_fabric_find_port(const struct sm_fabric *f, uint64_t port_guid);  /* port index */
uint32_t sm_fabric_find_lid(const struct sm_fabric *f, unsigned plane, uint16_t lid); /* port index */

/* Ensure plane index exists (n_planes grows). -EINVAL if >= SM_MAX_PLANES. */
int sm_fabric_add_plane(struct sm_fabric *f, unsigned plane, const char *name);

void sm_fabric_set_desc(struct sm_fabric *f, uint32_t n, const char *desc);

/*
 * What a fabric rebuilt from f's nodes, ports and links alone holds, in
 * place: no LID on any port, no LID map, every plane record as
 * sm_fabric_new() makes it (plane `keep_name` keeps its name), n_planes as
 * its nodes and that plane need. Nodes, ports and links are untouched.
 */
void sm_fabric_drop_lids(struct sm_fabric *f, unsigned keep_name);

/*
 * Move n blocks of arr (elements of elem bytes) in place: block i, len[i]
 * elements (NULL: 1) at src[i] (NULL: i), goes to dst[i] (SM_NONE: it is
 * dropped, its place may be overwritten). The destinations do not overlap.
 * Blocks [0, n_ord) keep their order (src and dst both increasing among
 * those kept): moved down in increasing order, then up in decreasing
 * order, each at most once. Blocks from n_ord on go anywhere: they are
 * copied to scratch first (room for all their elements). Used by the
 * in-place renumbering of a fabric and of its sweep tables.
 */
void sm_move_blocks(void *arr, size_t elem, const uint32_t *src, const uint32_t *dst, const uint32_t *len,
		    uint32_t n, uint32_t n_ord, void *scratch);

/*
 * Renumber f's nodes in place: node i becomes newidx[i] (SM_NONE: dropped,
 * with its links and GUIDs), its ports start at port0[i] (the new port0,
 * per old node); n_nodes and n_ports after. The result holds what adding
 * the kept nodes in new-index order, their ports and the links between
 * them gives (LIDs apart: left as they were, see sm_fabric_drop_lids).
 * newidx must keep the order of nodes [0, n_ord) (sm_move_blocks); scratch
 * has room for the nodes and for the ports of nodes [n_ord, n_nodes).
 */
void sm_fabric_renumber(struct sm_fabric *f, const uint32_t *newidx, const uint32_t *port0, uint32_t n_ord,
			uint32_t n_nodes, uint32_t n_ports, void *scratch);

/* Counts over one plane, or over all planes with plane < 0. */
void sm_fabric_count(const struct sm_fabric *f, int plane, struct sm_fabric_counts *c);

/*
 * Append every node, port, link and LID of src to dst, all or nothing:
 * nodes keep their plane numbers, indices shift by dst's counts. Returns 0,
 * -EEXIST if a node or port GUID of src is already in dst, -EADDRINUSE if
 * a LID of src is taken in dst's plane (in both cases *conflict, if not
 * NULL, gets the src node index at fault), or -ENOMEM. On error dst is
 * unchanged.
 */
int sm_fabric_append(struct sm_fabric *dst, const struct sm_fabric *src, uint32_t *conflict);

/* Bytes held by the model (for memory reports). */
size_t sm_fabric_mem_bytes(const struct sm_fabric *f);

const char *sm_node_type_str(enum sm_node_type t); /* "Switch", "Ca", "Router", "Unknown" */
const char *sm_port_state_str(unsigned state);     /* "Down", "Initialize", "Armed", "Active", "NoChange" */

/* Endpoint LID of a CA port for routing: base LID (0 if none). */
static inline uint16_t sm_port_lid(const struct sm_fabric *f, uint32_t port_index)
{
	return f->ports[port_index].lid;
}

/* LID of a node as a destination: switch port 0 LID or the CA port's LID. */
uint16_t sm_node_lid(const struct sm_fabric *f, uint32_t n, unsigned p);

#endif
