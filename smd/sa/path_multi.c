/* SPDX-License-Identifier: MIT */
/*
 * DOC: the MultiPathRecord handler (path.h), IBA 15.2.5.20
 *
 * SubnAdmGetMulti carries SGIDCount source and DGIDCount destination GIDs
 * after the 24-byte record; a request longer than one MAD arrives
 * reassembled (req->len > 200) and every GID it holds is used (OpenSM
 * reads at most the 11 of the first MAD). The answer is PathRecords
 * (IBA o15-0.2.7: the server sends them under the PathRecord attribute).
 *
 * As OpenSM: both counts must be in the mask (else INSUFFICIENT_COMPONENTS),
 * a count of 0 is REQ_INVALID, a GID that is not ours, a multicast SGID or
 * an unknown port INVALID_GID; paths are taken pair by pair (sources
 * outer) until NumbPath (127 when left out) in all. Two sources, two
 * destinations and NumbPath 2 is the APM request: one path on each of
 * the two disjoint pairings, the pairing with the shorter paths, LIDs
 * picked at an offset hashed from the LIDs so that both directions and
 * any GID order give the same paths.
 */
#include "sa/path.h"
#include "sa/path_priv.h"

static uint64_t gid_guid(const uint8_t *gids, unsigned i)
{
	return sm_sa_get64(gids + 16 * i + 8);
}

/* One APM pairing: the first path from offset `off` of both LID ranges, or false. */
static bool apm_pair(const struct sm_pr_env *e, const struct sm_pr_want *w, uint32_t s, uint32_t d, unsigned off,
		     struct sm_pr_path *p)
{
	uint16_t slo, dlo;
	unsigned ns, nd;

	sm_pr_lids(e, s, &slo, &ns);
	sm_pr_lids(e, d, &dlo, &nd);
	if (!slo || !dlo)
		return false;
	unsigned so = off % ns, dof = off % nd, k = ns < nd ? ns : nd;
	for (unsigned i = 0; i < k; i++) {
		if (sm_pr_lid_pair(e, w, s, d, (uint16_t)(slo + so), (uint16_t)(dlo + dof), p))
			return true;
		so = (so + 1) % ns, dof = (dof + 1) % nd;
	}
	return false;
}

static int apm(const struct sm_pr_env *e, const struct sm_pr_want *w, const uint32_t port[4], struct sm_sa_ans *ans)
{
	uint32_t s[2] = { port[0], port[1] }, d[2] = { port[2], port[3] };
	const struct sm_port *pt = e->f->ports;

	/* order-independent: sources and destinations each by port GUID */
	if (pt[s[1]].guid < pt[s[0]].guid)
		s[0] = port[1], s[1] = port[0];
	if (pt[d[1]].guid < pt[d[0]].guid)
		d[0] = port[3], d[1] = port[2];
	unsigned a = pt[s[0]].lid, b = pt[d[0]].lid, lmc = pt[s[0]].lmc & 7;
	if (a > b) {
		unsigned t = a;
		a = b, b = t;
	}
	unsigned base = ((a >> lmc) << 4 | (b >> lmc)) % 103;

	struct sm_pr_path m[2][2];
	bool ok[2][2];
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 2; j++)
			ok[i][j] = apm_pair(e, w, s[i], d[j], base + (unsigned)i, &m[i][j]);
	/* the pairing whose shorter path is shorter (0 hops counts as none found), as OpenSM */
	unsigned mn[2] = { 0, 0 };
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < 2; i++) {
			int j = k ? 1 - i : i;
			if (!ok[i][j])
				continue;
			unsigned h = m[i][j].hops;
			mn[k] = mn[k] && mn[k] < h ? mn[k] : h;
		}
	int k = mn[0] <= mn[1] ? 0 : 1;
	for (int i = 0; i < 2; i++) {
		int j = k ? 1 - i : i;
		if (!ok[i][j])
			continue;
		int rc = sm_pr_emit(e, &m[i][j], 0, ans);
		if (rc)
			return rc < 0 ? rc : 0;
	}
	return 0;
}

static int set_status(struct sm_sa_ans *ans, uint16_t status)
{
	ans->status = status;
	return 0;
}

int sm_sa_h_multipath(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans)
{
	uint64_t cm = req->hdr.comp_mask;
	struct sm_sa_mpath_rec q;
	struct sm_pr_env e;
	uint16_t st;

	ans->rec_size = SM_SA_PATH_REC_SIZE;   /* the answer is PathRecords */
	if (!req->data || req->len < SM_SA_MPATH_REC_SIZE)
		return set_status(ans, SM_SA_STATUS_REQ_INVALID);
	sm_sa_mpath_rec_decode(req->data, &q);
	if (!sm_sa_cm(cm, SM_MPR_CM_SGID_COUNT) || !sm_sa_cm(cm, SM_MPR_CM_DGID_COUNT))
		return set_status(ans, SM_SA_STATUS_INSUFFICIENT_COMPONENTS);
	struct sm_pr_want w;
	sm_pr_want_init(&w, &q.p, cm >> SM_MPR_CM_RAW);
	if ((st = sm_pr_want_check(&w)))
		return set_status(ans, st);
	if (sm_sa_cm(cm, SM_MPR_CM_SERVICE_ID_MSB) != sm_sa_cm(cm, SM_MPR_CM_SERVICE_ID_LSB))
		return set_status(ans, SM_SA_STATUS_INSUFFICIENT_COMPONENTS);
	unsigned ns = q.sgid_count, nd = q.dgid_count;
	if (!ns || !nd || req->len < SM_SA_MPATH_REC_SIZE + 16 * (size_t)(ns + nd))
		return set_status(ans, SM_SA_STATUS_REQ_INVALID);   /* no GID, or fewer than counted */
	if (!sm_pr_env_init(ctx, &e))
		return set_status(ans, SM_SA_STATUS_BUSY);
	e.req = sm_pr_port_by_lid(&e, req->from.lid);

	/* every GID first, so that a bad one is an error whatever NumbPath stops at */
	const uint8_t *gids = req->data + SM_SA_MPATH_REC_SIZE;
	uint32_t apm_port[4];
	for (unsigned i = 0; i < ns + nd; i++) {
		uint32_t p;
		if ((st = sm_pr_port_by_gid(&e, gids + 16 * i, i < ns, &p)))
			return set_status(ans, st);
		if (i < 4)
			apm_port[i] = p;
	}
	if (ns == 2 && nd == 2 && q.p.numb_path == 2)
		return apm(&e, &w, apm_port, ans);

	unsigned max = sm_sa_cm(cm, SM_MPR_CM_NUMB_PATH) ? q.p.numb_path : SM_SA_MPATH_MAX_PATHS, total = 0;
	bool stop = false;
	for (unsigned i = 0; i < ns && total < max && !stop; i++) {
		uint32_t s = sm_fabric_find_port(e.f, gid_guid(gids, i));
		uint16_t slo;
		unsigned sn;
		sm_pr_lids(&e, s, &slo, &sn);
		for (unsigned j = 0; j < nd && total < max && !stop; j++) {
			uint32_t d = sm_fabric_find_port(e.f, gid_guid(gids, ns + j));
			uint16_t dlo;
			unsigned dn;
			sm_pr_lids(&e, d, &dlo, &dn);
			int rc = sm_pr_pair_paths(&e, &w, s, d, slo, sn, dlo, dn, max - total, ans, &stop);
			if (rc < 0)
				return rc;
			total += (unsigned)rc;
		}
	}
	return 0;
}
