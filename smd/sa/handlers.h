/* SPDX-License-Identifier: MIT */
#ifndef SMD_SA_HANDLERS_H
#define SMD_SA_HANDLERS_H
/*
 * DOC: the SA's attribute handlers (one per attribute, called by sm_sa_query)
 *
 * When a handler runs, the dispatcher (query.c) has already checked the
 * class version, that the method is allowed for the attribute, the SM_Key
 * rule, that ctx->snap is there (for the attributes that need it) and that
 * req->len holds at least one request record. ans is reset with rec_size set
 * to the attribute's record size. A handler appends matching records with
 * sm_sa_emit() and may set ans->status; the dispatcher then applies the Get
 * rule (0 records NO_RECORDS, more than one TOO_MANY_RECORDS).
 *
 * Handlers of static records are in static.c (this helper's), PathRecord
 * and MultiPathRecord in path.c (sa/path.h), ServiceRecord, InformInfo and
 * MCMemberRecord in service.c/inform.c/mcmember.c (sa/dyn.h).
 */
#include "mad/codec.h"
#include "model/fabric.h"
#include "sa/query.h"
#include "sm/snapshot.h"

/*
 * Append the record rec (ans->rec_size bytes). 0: go on; 1: stop (the
 * answer is complete: a Get already has two records, or ans->max_records
 * was reached and ans->status is NO_RESOURCES); -ENOMEM.
 */
int sm_sa_emit(struct sm_sa_ans *ans, const struct sm_sa_req *req, const uint8_t *rec);
/* sm_sa_emit's result as a handler's return: 1 (stop) is not an error. */
static inline int sm_sa_emit_rc(int rc)
{
	return rc < 0 ? rc : 0;
}

/* The dispatcher has a handler for attr_id (ClassPortInfo advertises what is served). */
bool sm_sa_served(uint16_t attr_id);

/* The requester may see secrets (M_Key, SM_Key): it sent our SM_Key, and we have one. */
bool sm_sa_trusted(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req);

/* ---- the snapshot as the static handlers read it (static.c, static_tables.c) ---- */

/* Port index of LID lid in the snapshot's plane (any LID of an LMC range), SM_NONE if none. */
static inline uint32_t sm_sa_port_by_lid(const struct sm_snapshot *s, uint16_t lid)
{
	return sm_fabric_find_lid(s->fabric, s->plane, lid);
}
/* The port that holds node n's LID for port p: a switch's port 0, a CA's port p. */
static inline const struct sm_port *sm_sa_lid_port(const struct sm_fabric *f, uint32_t n, unsigned p)
{
	const struct sm_node *nd = &f->nodes[n];
	return &f->ports[nd->port0 + (nd->type == SM_NODE_SWITCH ? 0 : p)];
}
/* lid is one of the 2^LMC LIDs starting at base (base 0: the port has none). */
static inline bool sm_sa_lid_in(uint16_t lid, uint16_t base, uint8_t lmc)
{
	return base && lid >= base && (uint32_t)lid <= (uint32_t)base + (1u << (lmc & 7)) - 1;
}
/* The PortInfo the sweep read for port index idx, or NULL. */
static inline const struct sm_port_info *sm_sa_pi(const struct sm_snapshot *s, uint32_t idx)
{
	return s->pi && idx < s->attr_ports && s->pi_ok[idx] ? &s->pi[idx] : NULL;
}
/*
 * Port p of node n exists for the SA: a switch's ports 0..N whose PortInfo
 * was read, a CA's ports that answered NodeInfo (port GUID known). A
 * snapshot without the sweep's attributes (built by hand) has every port.
 */
bool sm_sa_port_known(const struct sm_snapshot *s, uint32_t n, unsigned p);

/*
 * Walking the nodes of the snapshot's plane a request concerns: every node
 * in LID order (a node where its lowest base LID comes; nodes without a LID
 * last, in index order), or the one node named by a LID, GUID or port (an
 * O(1) lookup). LID order puts the lowest LIDs first, hosts under smd's
 * LID policy: a client that reads only the first MAD of a table (osmtest
 * under ibsim's umad2sim, whose stress flows need a CA there) gets a host,
 * as from OpenSM. Usage:
 *     struct sm_sa_walk w;
 *     sm_sa_walk_init(&w, ctx, req, LID_BIT);
 *     for (const struct sm_node *nd; (nd = sm_sa_walk_next(&w));) ... w.n is nd's index
 */
struct sm_sa_walk {
	const struct sm_snapshot *s;
	const struct sm_fabric *f;
	const uint8_t *q;          /* the request record */
	uint64_t mask;             /* its component mask */
	uint16_t lid;              /* the LID asked for (when by_lid) */
	bool by_lid;
	uint32_t n;                /* the node sm_sa_walk_next() returned last */
	uint32_t next, last;
	uint32_t lid_next;         /* a whole-plane walk: the next LID to look at, 0 once past the last */
};
/* Every node, or the one holding the LID at offset 0 of the record when lid_bit (>= 0) is in the mask. */
void sm_sa_walk_init(struct sm_sa_walk *w, const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, int lid_bit);
/* Narrow to the node holding lid (none if nobody does); sets by_lid. */
void sm_sa_walk_lid(struct sm_sa_walk *w, uint16_t lid);
/* Narrow to node n (SM_NONE: none). */
void sm_sa_walk_node(struct sm_sa_walk *w, uint32_t n);
/* The next node of the plane, NULL at the end. */
const struct sm_node *sm_sa_walk_next(struct sm_sa_walk *w);

/* static.c */
int sm_sa_h_class_port_info(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans);
int sm_sa_h_node(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans);
int sm_sa_h_portinfo(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans);
int sm_sa_h_link(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans);
int sm_sa_h_switchinfo(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans);
int sm_sa_h_lft(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans);
int sm_sa_h_mft(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans);
int sm_sa_h_sminfo(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans);
int sm_sa_h_guidinfo(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans);
int sm_sa_h_pkey(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans);
int sm_sa_h_sl2vl(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans);
int sm_sa_h_vlarb(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans);

#endif
