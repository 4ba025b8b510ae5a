/* SPDX-License-Identifier: MIT */
/*
 * DOC: paths from the programmed LFTs, and the PathRecord handler (path.h)
 *
 * The walk (sm_pr_walk) follows what the switches were told: from a CA
 * port over its link to the first switch, then LFT[DLID] out of every
 * switch, until the port that holds DLID (a CA port reached over a link,
 * or port 0 of the switch whose LFT says 0). MTU is the smallest MTUCap
 * and rate the slowest link of every port passed, the ends included (as
 * OpenSM walks it); hops count the switches after the source.
 *
 * Request forms (IBA 15.2.5.16, in OpenSM's order of checks): the rate and
 * MTU of a selector pair must be valid codes (REQ_INVALID); ServiceID is
 * both halves or none (INSUFFICIENT_COMPONENTS); an SGID or DGID neither
 * link-local nor of our prefix, or of an unknown port, is INVALID_GID; an
 * SLID or DLID nobody holds is no record; an SGID and SLID (DGID and DLID)
 * of different ports are REQ_INVALID. A missing source is the requester
 * for Get (the form ibacm and a DGID-only query use) and every port for
 * GetTable; a missing destination is every port. Get answers the first
 * path (NumbPath 1, the IBA 1.2 erratum); GetTable honours NumbPath per
 * port pair. Fields the SA does not choose on (TClass, FlowLabel,
 * HopLimit, QoSClass, ServiceID, Preference) are accepted and ignored, as
 * OpenSM does for unicast paths; so are mask bits past the last component.
 */
#include "sa/path.h"
#include "sa/path_priv.h"
#include "sa/pkey.h"

#include "sm/snapshot.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#define PREFIX_LINK_LOCAL 0xFE80000000000000ULL
/* PortInfo CapabilityMask / CapabilityMask2 bits (IBA 14.2.5.6) */
#define PORT_CAP_EXT_SPEEDS 0x00004000u
#define PORT_CAP_CAP_MASK2 0x00008000u
#define PORT_CAP2_WIDTH_2X 0x0010
#define PORT_CAP2_SPEED_HDR 0x0020
#define PORT_CAP2_SPEED_NDR 0x0400
#define DEFAULT_PLT 18                   /* OpenSM's default subnet_timeout */

bool sm_pr_env_init(const struct sm_sa_ctx *ctx, struct sm_pr_env *e)
{
	const struct sm_snapshot *s = ctx ? ctx->snap : NULL;

	if (!s || !s->fabric || s->plane >= s->fabric->n_planes)
		return false;
	e->f = s->fabric;
	e->plane = s->plane;
	e->l = s->lfts && s->lfts->plane == s->plane ? s->lfts : NULL;
	e->lid_map = e->f->planes[s->plane].lid_map;
	e->prefix = s->subnet_prefix ? s->subnet_prefix : PREFIX_LINK_LOCAL;
	e->plt = ctx->self && ctx->self->subnet_timeout ? ctx->self->subnet_timeout & 0x1F : DEFAULT_PLT;
	e->pi = s->pi && s->pi_ok ? s->pi : NULL;
	e->pi_ok = s->pi_ok;
	e->n_pi = e->pi ? (s->attr_ports < e->f->n_ports ? s->attr_ports : e->f->n_ports) : 0;
	e->rm = ctx->port_rm;
	e->pk = s->pkeys;
	e->req = SM_NONE;
	return true;
}

static bool in_plane(const struct sm_pr_env *e, uint32_t port)
{
	return e->f->nodes[e->f->ports[port].node].plane == e->plane;
}

uint32_t sm_pr_port_by_lid(const struct sm_pr_env *e, uint16_t lid)
{
	if (!lid || lid > SM_UNICAST_LID_MAX || !e->lid_map)
		return SM_NONE;
	uint32_t p = e->lid_map[lid];      /* the plane's own map: only its ports */
	return p < e->f->n_ports ? p : SM_NONE;
}

uint16_t sm_pr_port_by_gid(const struct sm_pr_env *e, const uint8_t gid[16], bool is_src, uint32_t *port)
{
	uint64_t prefix = sm_sa_get64(gid);

	if ((prefix & 0xFFC0000000000000ULL) != PREFIX_LINK_LOCAL && prefix != e->prefix)
		return SM_SA_STATUS_INVALID_GID;
	if (is_src && gid[0] == 0xFF)
		return SM_SA_STATUS_INVALID_GID;
	uint32_t p = sm_fabric_find_port(e->f, sm_sa_get64(gid + 8));
	if (p == SM_NONE || p >= e->f->n_ports || !in_plane(e, p))
		return SM_SA_STATUS_INVALID_GID;
	*port = p;
	return SM_SA_STATUS_OK;
}

/*
 * Rate and MTU of a port. From its PortInfo when the snapshot carries it,
 * as OpenSM reads it: LinkSpeedExtActive counts only under HasExtendedSpeeds
 * (a switch's external ports under port 0's), an unknown width is 1x; MTU
 * is MTUCap, or NeighborMTU on a linked port when that is smaller.
 * Otherwise from the fabric model (width and speed, MTU unknown: 0).
 */
static void port_rate_mtu_of(const struct sm_pr_env *e, uint32_t port, uint8_t *rate, uint8_t *mtu)
{
	const struct sm_port *pt = &e->f->ports[port];

	if (!e->pi || port >= e->n_pi || !e->pi_ok[port]) {
		bool ext = pt->flags & SM_PORT_F_EXT_SPEED;
		*rate = sm_pr_rate(pt->width, ext ? 0 : pt->speed, ext ? pt->speed : 0);
		*mtu = 0;
		return;
	}
	const struct sm_port_info *pi = &e->pi[port];
	const struct sm_node *nd = &e->f->nodes[pt->node];
	uint32_t caps = pi->cap_mask, p0 = nd->port0;
	if (nd->type == SM_NODE_SWITCH && pt->num)
		caps = p0 < e->n_pi && e->pi_ok[p0] ? e->pi[p0].cap_mask : 0;
	uint8_t width = pi->link_width_active < 32 && sm_pr_width_col[pi->link_width_active] ? pi->link_width_active : 1;
	*rate = sm_pr_rate(width, pi->link_speed_active, caps & PORT_CAP_EXT_SPEEDS ? pi->link_speed_ext_active : 0);
	uint8_t m = pi->mtu_cap >= SM_SA_MTU_MIN && pi->mtu_cap <= SM_SA_MTU_MAX ? pi->mtu_cap : 0;
	/* smd does not set NeighborMTU (OpenSM sets it to the link's smaller MTUCap): the link runs at it */
	if (pt->num && pi->neighbor_mtu >= SM_SA_MTU_MIN && pi->neighbor_mtu < (m ? m : SM_SA_MTU_MAX + 1))
		m = pi->neighbor_mtu;
	*mtu = m;
}

/* The same from the per-snapshot table when the server made one (most of a Get's time otherwise). */
static inline void port_rate_mtu(const struct sm_pr_env *e, uint32_t port, uint8_t *rate, uint8_t *mtu)
{
	if (e->rm) {
		*rate = (uint8_t)e->rm[port];
		*mtu = (uint8_t)(e->rm[port] >> 8);
		return;
	}
	port_rate_mtu_of(e, port, rate, mtu);
}

void sm_pr_port_rate_mtu(const struct sm_pr_env *e, uint32_t port, uint8_t *rate, uint8_t *mtu)
{
	port_rate_mtu(e, port, rate, mtu);
}

uint16_t *sm_sa_port_rm_build(const struct sm_snapshot *s)
{
	struct sm_sa_ctx ctx = { .snap = s };
	struct sm_pr_env e;

	if (!sm_pr_env_init(&ctx, &e))
		return NULL;
	uint16_t *t = malloc((e.f->n_ports ? e.f->n_ports : 1) * sizeof(*t));
	for (uint32_t i = 0; t && i < e.f->n_ports; i++) {
		uint8_t r, m;
		port_rate_mtu_of(&e, i, &r, &m);
		t[i] = (uint16_t)(m << 8 | r);
	}
	return t;
}

static inline void constrain(const struct sm_pr_env *e, uint32_t port, struct sm_pr_hop_parms *p)
{
	uint8_t r, m;

	sm_pr_port_rate_mtu(e, port, &r, &m);
	if (r && sm_pr_rate_bw[r] < p->bw)
		p->bw = sm_pr_rate_bw[r], p->rate = r;
	if (m && m < p->mtu)
		p->mtu = m;
}

/*
 * OpenSM's ib_path_rate_2x_hdr_fixups(): a rate that only 2x or HDR/NDR
 * links give is lowered to one an end port without those in CapabilityMask2
 * knows (older clients cannot use the newer codes). Only with its PortInfo.
 */
static uint8_t rate_fixup(const struct sm_pr_env *e, uint32_t port, uint8_t rate)
{
	if (rate < 19 || !e->pi || port >= e->n_pi || !e->pi_ok[port])
		return rate;
	const struct sm_port_info *pi = &e->pi[port];
	uint16_t c2 = pi->cap_mask & PORT_CAP_CAP_MASK2 ? pi->cap_mask2 : 0;
	switch (rate) {
	case 19:                       /* 28 Gb/s: 2x FDR only */
		return c2 & PORT_CAP2_WIDTH_2X ? rate : pi->cap_mask & PORT_CAP_EXT_SPEEDS ? 15 : 6;
	case 20:                       /* 50: 2x EDR or 1x HDR */
		return c2 & (PORT_CAP2_WIDTH_2X | PORT_CAP2_SPEED_HDR) ? rate : 7;
	case 21:                       /* 400, 600: HDR or NDR */
	case 22:
		return c2 & (PORT_CAP2_SPEED_HDR | PORT_CAP2_SPEED_NDR) ? rate : 18;
	default:                       /* 800, 1200: NDR */
		if (c2 & PORT_CAP2_SPEED_NDR)
			return rate;
		return pi->cap_mask & PORT_CAP_CAP_MASK2 && !(c2 & PORT_CAP2_SPEED_HDR) ? 18 : 22;
	}
}

int sm_pr_walk(const struct sm_pr_env *e, uint32_t s, uint32_t d, uint16_t dlid, struct sm_pr_hop_parms *p)
{
	const struct sm_fabric *f = e->f;
	const struct sm_port *sp = &f->ports[s];
	uint32_t node = sp->node;
	unsigned in = 0;

	p->mtu = SM_SA_MTU_MAX, p->rate = 0, p->hops = 0, p->bw = UINT32_MAX;
	constrain(e, s, p);
	if (s == d)
		goto done;             /* loopback: no switch involved */
	if (f->nodes[node].type != SM_NODE_SWITCH) {
		if (sp->peer_node == SM_NONE)
			return -1;
		node = sp->peer_node, in = sp->peer_port;
		if (sm_port_index(f, node, in) == d)
			goto arrived;  /* back to back */
	}
	if (!e->l)
		return -1;
	for (unsigned sw = 0; sw <= SM_SA_PATH_MAX_HOPS; sw++) {
		const struct sm_node *nd = &f->nodes[node];
		if (nd->type != SM_NODE_SWITCH)
			return -1;     /* a CA that does not hold dlid */
		if (in)
			constrain(e, sm_port_index(f, node, in), p);
		uint8_t out = sm_lfts_get(e->l, node, dlid);
		if (out == SM_LFT_NONE || out > nd->nports)
			return -1;
		if (node != sp->node)
			p->hops++;
		uint32_t oi = sm_port_index(f, node, out);
		if (out == 0) {
			if (oi != d)
				return -1;
			goto arrived;
		}
		constrain(e, oi, p);
		const struct sm_port *op = &f->ports[oi];
		if (op->peer_node == SM_NONE)
			return -1;
		node = op->peer_node, in = op->peer_port;
		if (sm_port_index(f, node, in) == d)
			goto arrived;
	}
	return -1;                     /* more than SM_SA_PATH_MAX_HOPS switches, or a loop */
arrived:
	constrain(e, d, p);
done:
	if (!p->rate)
		p->rate = SM_SA_RATE_MIN;  /* no port knew its width and speed */
	return 0;
}

/*
 * A selector on an MTU or PacketLifeTime code, as OpenSM applies it: the
 * value is lowered to fit ("less than": the largest below; "exactly": the
 * one asked, when the path carries at least that) or the path is refused.
 */
static bool select_code(uint8_t sel, uint8_t want, uint8_t *v)
{
	switch (sel) {
	case 0:
		return *v > want;
	case 1:
		if (*v < want)
			return true;
		*v = (uint8_t)(want - 1);
		return want > 1;
	case 2:
		if (*v < want)
			return false;
		*v = want;
		return true;
	default:
		return true;
	}
}

/* The same for a rate, in bandwidth order; "exactly" is strict (OpenSM). */
static bool select_rate(uint8_t sel, uint8_t want, uint8_t *v)
{
	int c = sm_sa_rate_cmp(*v, want);

	switch (sel) {
	case 0:
		return c > 0;
	case 1:
		return c < 0 || (*v = sm_sa_rate_prev(want)) != 0;
	case 2:
		*v = want;
		return c == 0;
	default:
		return true;
	}
}

static bool apply(const struct sm_pr_want *w, uint8_t *mtu, uint8_t *rate, uint8_t *plt)
{
	return (!w->mtu || select_code(w->mtu_sel, w->mtu_v, mtu)) &&
	       (!w->rate || select_rate(w->rate_sel, w->rate_v, rate)) &&
	       (!w->plt || select_code(w->plt_sel, w->plt_v, plt));
}

bool sm_pr_lid_pair(const struct sm_pr_env *e, const struct sm_pr_want *w, uint32_t s, uint32_t d, uint16_t slid,
		    uint16_t dlid, struct sm_pr_path *out)
{
	struct sm_pr_hop_parms fw, bw;
	uint16_t pkey = 0;

	/* partitions (sa/pkey.c): both ends members of a P_Key, one at least full; the requester shares one with each */
	if ((!w->raw && !sm_sa_pkey_shared(e->pk, s, d, w->pkey, w->pkey_v, &pkey)) ||
	    !sm_sa_pkey_requester(e->pk, e->req, s, d))
		return false;
	if (sm_pr_walk(e, s, d, dlid, &fw))
		return false;
	uint8_t plt = s == d ? 0 : e->plt, rplt = plt;
	if (!apply(w, &fw.mtu, &fw.rate, &plt))
		return false;
	bool rev = !sm_pr_walk(e, d, s, slid, &bw) && apply(w, &bw.mtu, &bw.rate, &rplt);
	if (w->reversible && !rev)
		return false;
	fw.rate = rate_fixup(e, s, fw.rate);
	if (rev)
		fw.rate = rate_fixup(e, d, fw.rate);
	*out = (struct sm_pr_path){
		.s = s, .d = d, .slid = slid, .dlid = dlid, .mtu = fw.mtu, .rate = fw.rate, .plt = plt,
		.hops = fw.hops, .reversible = rev,
		.pkey = w->raw ? 0 : pkey,
		.sl = w->sl ? w->sl_v : 0,
	};
	return true;
}

int sm_pr_emit(const struct sm_pr_env *e, const struct sm_pr_path *p, uint8_t pref, struct sm_sa_ans *ans)
{
	if (ans->max_records && ans->n >= ans->max_records) {
		ans->status = SM_SA_STATUS_NO_RESOURCES;
		return 1;
	}
	uint8_t *r = sm_sa_ans_add(ans);    /* zeroed: ServiceID, HopLimit, TClass, QoSClass stay 0 */
	if (!r)
		return -ENOMEM;
	sm_sa_put64(r + 8, e->prefix);
	sm_sa_put64(r + 16, e->f->ports[p->d].guid);
	sm_sa_put64(r + 24, e->prefix);
	sm_sa_put64(r + 32, e->f->ports[p->s].guid);
	sm_sa_put16(r + 40, p->dlid);
	sm_sa_put16(r + 42, p->slid);
	r[49] = p->reversible ? 0x80 : 0;  /* NumbPath is undefined in answers: 0 */
	sm_sa_put16(r + 50, p->pkey);
	r[53] = p->sl & 0xF;
	r[54] = (uint8_t)(2 << 6 | p->mtu);   /* selectors "exactly" */
	r[55] = (uint8_t)(2 << 6 | p->rate);
	r[56] = (uint8_t)(2 << 6 | p->plt);
	r[57] = pref;
	return 0;
}

static int add(const struct sm_pr_env *e, const struct sm_pr_want *w, uint32_t s, uint32_t d, uint16_t slid,
	       uint16_t dlid, uint8_t pref, struct sm_sa_ans *ans, bool *stop)
{
	struct sm_pr_path p;

	if (!sm_pr_lid_pair(e, w, s, d, slid, dlid, &p))
		return 0;
	int rc = sm_pr_emit(e, &p, pref, ans);
	if (rc > 0)
		*stop = true;
	return rc < 0 ? rc : !rc;
}

int sm_pr_pair_paths(const struct sm_pr_env *e, const struct sm_pr_want *w, uint32_t s, uint32_t d, uint16_t slo,
		     unsigned ns, uint16_t dlo, unsigned nd, unsigned limit, struct sm_sa_ans *ans, bool *stop)
{
	unsigned got = 0, k = ns < nd ? ns : nd;
	int rc;

	if (!slo || !dlo)
		return 0;              /* a port without a LID has no path (OpenSM) */
	for (unsigned i = 0; i < k && got < limit && !*stop; i++) {
		if ((rc = add(e, w, s, d, (uint16_t)(slo + i), (uint16_t)(dlo + i), 0, ans, stop)) < 0)
			return rc;
		got += (unsigned)rc;
	}
	for (unsigned so = 0; so < ns && got < limit && !*stop; so++)
		for (unsigned dof = 0; dof < nd && got < limit && !*stop; dof++) {
			if (so == dof)
				continue;      /* given above, Preference 0 */
			if ((rc = add(e, w, s, d, (uint16_t)(slo + so), (uint16_t)(dlo + dof), 2, ans, stop)) < 0)
				return rc;
			got += (unsigned)rc;
		}
	return (int)got;
}

/* ---- PathRecord ---- */

/* Every port that can end a path, in fabric order: CA/router ports with a LID, switch port 0. */
static uint32_t next_endpoint(const struct sm_pr_env *e, uint32_t prev)
{
	const struct sm_fabric *f = e->f;

	for (uint32_t i = prev == SM_NONE ? 0 : prev + 1; i < f->n_ports; i++) {
		const struct sm_port *pt = &f->ports[i];
		const struct sm_node *nd = &f->nodes[pt->node];
		if (!pt->lid || nd->plane != e->plane)
			continue;
		if (nd->type == SM_NODE_SWITCH ? pt->num == 0 : pt->num != 0)
			return i;
	}
	return SM_NONE;
}

/* The ports one end of a request ranges over: `fixed`, or every endpoint when it is SM_NONE. */
static uint32_t end_next(const struct sm_pr_env *e, uint32_t fixed, uint32_t cur)
{
	if (fixed != SM_NONE)
		return cur == SM_NONE ? fixed : SM_NONE;
	return next_endpoint(e, cur);
}

/* The LIDs of one end: the port's LMC range, or the one LID the request names. */
static void end_lids(const struct sm_pr_env *e, uint32_t port, bool named, uint16_t lid, uint16_t *lo, unsigned *n)
{
	if (named)
		*lo = lid, *n = 1;
	else
		sm_pr_lids(e, port, lo, n);
}

static int set_status(struct sm_sa_ans *ans, uint16_t status)
{
	ans->status = status;
	return 0;
}

/* Resolve one end: by GID and/or LID; SM_NONE with no status when the request leaves it open. */
static uint16_t resolve_end(const struct sm_pr_env *e, uint64_t cm, unsigned gid_bit, unsigned lid_bit,
			    const uint8_t gid[16], uint16_t lid, bool is_src, uint32_t *port, bool *none)
{
	uint32_t by_gid = SM_NONE, by_lid = SM_NONE;

	if (sm_sa_cm(cm, gid_bit)) {
		uint16_t st = sm_pr_port_by_gid(e, gid, is_src, &by_gid);
		if (st)
			return st;
	}
	if (sm_sa_cm(cm, lid_bit) && (by_lid = sm_pr_port_by_lid(e, lid)) == SM_NONE)
		*none = true;  /* nobody holds the LID: no record */
	if (by_gid != SM_NONE && by_lid != SM_NONE && by_gid != by_lid)
		return SM_SA_STATUS_REQ_INVALID;
	*port = by_gid != SM_NONE ? by_gid : by_lid;
	return SM_SA_STATUS_OK;
}

int sm_sa_h_path(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans)
{
	uint64_t cm = req->hdr.comp_mask;
	bool get = req->hdr.method == SM_SA_GET, none = false, stop = false;
	struct sm_sa_path_rec q;
	struct sm_pr_want w;
	struct sm_pr_env e;
	uint32_t s = SM_NONE, d = SM_NONE;
	uint16_t st;

	ans->rec_size = SM_SA_PATH_REC_SIZE;
	if (!req->data || req->len < SM_SA_PATH_REC_SIZE)
		return set_status(ans, SM_SA_STATUS_REQ_INVALID);
	sm_sa_path_rec_decode(req->data, &q);
	sm_pr_want_init(&w, &q.p, cm >> SM_PR_CM_RAW);
	if ((st = sm_pr_want_check(&w)))
		return set_status(ans, st);
	if (sm_sa_cm(cm, SM_PR_CM_SERVICE_ID_MSB) != sm_sa_cm(cm, SM_PR_CM_SERVICE_ID_LSB))
		return set_status(ans, SM_SA_STATUS_INSUFFICIENT_COMPONENTS);
	if (!sm_pr_env_init(ctx, &e))
		return set_status(ans, SM_SA_STATUS_BUSY);
	e.req = sm_pr_port_by_lid(&e, req->from.lid);
	/* a multicast DGID asks for a group's path (path_mcast.c) */
	if (sm_sa_cm(cm, SM_PR_CM_DGID) && q.dgid[0] == 0xFF) {
		int rc = sm_pr_mcast(ctx, &e, req, ans);
		if (rc < 0)
			return rc;
		goto out;
	}
	if ((st = resolve_end(&e, cm, SM_PR_CM_SGID, SM_PR_CM_SLID, q.sgid, q.slid, true, &s, &none)) ||
	    (st = resolve_end(&e, cm, SM_PR_CM_DGID, SM_PR_CM_DLID, q.dgid, q.dlid, false, &d, &none)))
		return set_status(ans, st);
	if (none)
		goto out;
	if (s == SM_NONE && get && (s = e.req) == SM_NONE)
		goto out;              /* Get without a source: the requester's port */

	unsigned limit = get ? 1 : sm_sa_cm(cm, SM_PR_CM_NUMB_PATH) ? q.p.numb_path : UINT_MAX;
	for (uint32_t si = end_next(&e, s, SM_NONE); si != SM_NONE && !stop; si = end_next(&e, s, si)) {
		uint16_t slo, dlo;
		unsigned ns, nd;
		end_lids(&e, si, sm_sa_cm(cm, SM_PR_CM_SLID), q.slid, &slo, &ns);
		for (uint32_t di = end_next(&e, d, SM_NONE); di != SM_NONE && !stop; di = end_next(&e, d, di)) {
			end_lids(&e, di, sm_sa_cm(cm, SM_PR_CM_DLID), q.dlid, &dlo, &nd);
			int rc = sm_pr_pair_paths(&e, &w, si, di, slo, ns, dlo, nd, limit, ans, &stop);
			if (rc < 0)
				return rc;
			if (get && ans->n)
				stop = true;
		}
	}
out:
	if (get && !ans->n && !ans->status)
		ans->status = SM_SA_STATUS_NO_RECORDS;
	return 0;
}
