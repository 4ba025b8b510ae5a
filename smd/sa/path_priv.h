/* SPDX-License-Identifier: MIT */
#ifndef SMD_SA_PATH_PRIV_H
#define SMD_SA_PATH_PRIV_H
/*
 * DOC: what path.c and path_multi.c share (private to smd/sa/path*.c)
 *
 * struct sm_pr_env is the plane as a path sees it, taken from the snapshot
 * once per request; struct sm_pr_want is what a request constrains
 * (selectors, P_Key, SL, reversibility), decoded from either record;
 * sm_pr_lid_pair() decides one SLID/DLID pair (forward walk, selectors,
 * reverse walk) and sm_pr_emit() appends its PathRecord to the answer.
 */
#include <stdbool.h>
#include <stdint.h>

#include "model/fabric.h"
#include "mad/codec.h"
#include "model/lfts.h"
#include "sa/path.h"
#include "sa/query.h"
#include "sa/records.h"

struct sm_pr_env {
	const struct sm_fabric *f;
	const struct sm_lfts *l;         /* NULL: routing did not run (only loopback paths) */
	const uint32_t *lid_map;         /* the plane's LID -> port index, NULL when no LIDs */
	unsigned plane;
	uint64_t prefix;                 /* subnet prefix of every GID we answer */
	uint8_t plt;                     /* PacketLifeTime of a non-loopback path */
	const struct sm_port_info *pi;   /* PortInfo as read, per port index (NULL: not carried) */
	const uint8_t *pi_ok;
	uint32_t n_pi;
	const uint16_t *rm;              /* ctx->port_rm: each port's rate | MTU << 8, or NULL */
	const struct sm_pkey_tables *pk; /* P_Key tables as programmed (sa/pkey.h); NULL: default partition only */
	uint32_t req;                    /* the requester's port (SM_NONE: unknown, or not a path query) */
};

/* Rate codes by lane speed and width (path_wire.c); a code's bandwidth, for ordering. */
extern const uint8_t sm_pr_speed_row[32], sm_pr_ext_row[32], sm_pr_width_col[32];
extern const uint8_t sm_pr_rate_code[9][6];
extern const uint32_t sm_pr_rate_bw[32];

/* Rate code of LinkWidthActive, LinkSpeedActive and LinkSpeedExtActive (0: not extended); 0 unknown. */
static inline uint8_t sm_pr_rate(uint8_t width, uint8_t speed, uint8_t ext)
{
	unsigned row = ext < 32 && sm_pr_ext_row[ext] ? sm_pr_ext_row[ext] : speed < 32 ? sm_pr_speed_row[speed] : 0;
	return sm_pr_rate_code[row][width < 32 ? sm_pr_width_col[width] : 0];
}

/* What the request asks of a path (selector pairs count only with both bits, as OpenSM). */
struct sm_pr_want {
	bool mtu, rate, plt, pkey, sl, raw, reversible;
	uint8_t mtu_sel, mtu_v, rate_sel, rate_v, plt_sel, plt_v, sl_v;
	uint16_t pkey_v;
};

/* One decided path: what goes into its record. */
struct sm_pr_path {
	uint32_t s, d;                   /* port indices */
	uint16_t slid, dlid;
	uint8_t mtu, rate, plt, hops;
	bool reversible;
	uint16_t pkey;
	uint8_t sl;
};

/* The plane of ctx->snap; false when there is none to answer from. */
bool sm_pr_env_init(const struct sm_sa_ctx *ctx, struct sm_pr_env *e);

/* Rate code and MTU code of a port as a path through it gets them (0: unknown); path.c. */
void sm_pr_port_rate_mtu(const struct sm_pr_env *e, uint32_t port, uint8_t *rate, uint8_t *mtu);

/* The port holding `lid` in the plane (CA/router port or switch port 0), SM_NONE if none. */
uint32_t sm_pr_port_by_lid(const struct sm_pr_env *e, uint16_t lid);

/*
 * The port of a GID: 0 and *port, or the SA status: INVALID_GID for a GID
 * neither link-local nor of our prefix, a multicast SGID (is_src), or an
 * unknown GUID.
 */
uint16_t sm_pr_port_by_gid(const struct sm_pr_env *e, const uint8_t gid[16], bool is_src, uint32_t *port);

/*
 * The path from port s to LID dlid, held by port d, as the LFTs carry it:
 * 0 with p->mtu, p->rate, p->hops set, or -1 when the LFTs do not carry it.
 */
struct sm_pr_hop_parms {
	uint8_t mtu, rate, hops;
	uint32_t bw;                     /* sm_pr_rate_bw[rate], while walking */
};
int sm_pr_walk(const struct sm_pr_env *e, uint32_t s, uint32_t d, uint16_t dlid, struct sm_pr_hop_parms *p);

/*
 * Decide the path slid -> dlid between ports s and d under w (forward walk,
 * selectors, P_Key, reverse walk): true with *out filled, false when it is
 * not a record.
 */
bool sm_pr_lid_pair(const struct sm_pr_env *e, const struct sm_pr_want *w, uint32_t s, uint32_t d, uint16_t slid,
		    uint16_t dlid, struct sm_pr_path *out);

/*
 * Append p's PathRecord (Preference pref, HopLimit 0) to ans: 0, 1 when
 * ans is full (status NO_RESOURCES set), -ENOMEM.
 */
int sm_pr_emit(const struct sm_pr_env *e, const struct sm_pr_path *p, uint8_t pref, struct sm_sa_ans *ans);

/*
 * Every path between ports s and d (in OpenSM's order: SLID/DLID pairs at
 * equal offsets first, Preference 0, then the others, Preference 2), LIDs
 * from [slo, slo + ns) and [dlo, dlo + nd), at most `limit` of them: the
 * number appended (>= 0), or -ENOMEM; *stop is set when ans is full.
 */
int sm_pr_pair_paths(const struct sm_pr_env *e, const struct sm_pr_want *w, uint32_t s, uint32_t d, uint16_t slo,
		     unsigned ns, uint16_t dlo, unsigned nd, unsigned limit, struct sm_sa_ans *ans, bool *stop);

/* A PathRecord request with a multicast DGID (checked by the caller): the group's record, if any (path_mcast.c). */
int sm_pr_mcast(const struct sm_sa_ctx *ctx, const struct sm_pr_env *e, const struct sm_sa_req *req,
		struct sm_sa_ans *ans);

/* The LID range of a port: base and 2^LMC. */
static inline void sm_pr_lids(const struct sm_pr_env *e, uint32_t port, uint16_t *lo, unsigned *n)
{
	*lo = e->f->ports[port].lid;
	*n = 1u << (e->f->ports[port].lmc & 7);
}

/*
 * The request's wants from the shared block of either record; `cm` is the
 * component mask shifted so that bit 0 is RawTraffic (both records list
 * the shared components in the same order from there: RawTraffic, 1
 * reserved, FlowLabel, HopLimit, TClass, Reversible, NumbPath, P_Key,
 * QoSClass, SL, MTUSelector, MTU, RateSelector, Rate, PLTSelector, PLT).
 */
static inline void sm_pr_want_init(struct sm_pr_want *w, const struct sm_sa_path_parms *q, uint64_t cm)
{
	*w = (struct sm_pr_want){
		.raw = sm_sa_cm(cm, 0) && q->raw,
		.reversible = sm_sa_cm(cm, 5) && q->reversible,
		.pkey = sm_sa_cm(cm, 7),
		.sl = sm_sa_cm(cm, 9),
		.mtu = sm_sa_cm(cm, 10) && sm_sa_cm(cm, 11),
		.rate = sm_sa_cm(cm, 12) && sm_sa_cm(cm, 13),
		.plt = sm_sa_cm(cm, 14) && sm_sa_cm(cm, 15),
		.mtu_sel = q->mtu_sel, .mtu_v = q->mtu, .rate_sel = q->rate_sel, .rate_v = q->rate,
		.plt_sel = q->plt_sel, .plt_v = q->plt, .sl_v = q->sl, .pkey_v = q->pkey,
	};
}

/* Check the selector values (OpenSM: REQ_INVALID for an MTU or rate out of range). */
static inline uint16_t sm_pr_want_check(const struct sm_pr_want *w)
{
	if (w->rate && (w->rate_v < SM_SA_RATE_MIN || w->rate_v > SM_SA_RATE_MAX))
		return SM_SA_STATUS_REQ_INVALID;
	if (w->mtu && (w->mtu_v < SM_SA_MTU_MIN || w->mtu_v > SM_SA_MTU_MAX))
		return SM_SA_STATUS_REQ_INVALID;
	return SM_SA_STATUS_OK;
}

#endif
