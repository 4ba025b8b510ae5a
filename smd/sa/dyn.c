/* SPDX-License-Identifier: MIT */
/*
 * DOC: the SA's mutable tables (dyn.h): bounded arrays, removal by moving
 * the last entry into the hole (order is not part of any answer's
 * contract), leases in absolute sm_mono_us() times. Also the pure helpers
 * the server's events use: Notice building, the GUID diff of two
 * snapshots, LID to GID.
 */
#include "sa/dyn.h"
#include "sa/records.h"
#include "model/fabric.h"
#include "sm/snapshot.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int sm_sa_dyn_new(const struct sm_sa_dyn_limits *lim, struct sm_sa_dyn **out)
{
	struct sm_sa_dyn *d = calloc(1, sizeof(*d));

	*out = NULL;
	if (!d)
		return -ENOMEM;
	if (lim)
		d->lim = *lim;
	if (!d->lim.max_services)
		d->lim.max_services = 4096;
	if (!d->lim.max_subs)
		d->lim.max_subs = 1024;
	if (!d->lim.max_groups)
		d->lim.max_groups = 1024;
	if (d->lim.max_groups > SM_SA_MLID_COUNT)
		d->lim.max_groups = SM_SA_MLID_COUNT;
	if (!d->lim.max_members)
		d->lim.max_members = 65536;
	d->svcs = calloc(d->lim.max_services, sizeof(*d->svcs));
	d->subs = calloc(d->lim.max_subs, sizeof(*d->subs));
	d->groups = calloc(d->lim.max_groups, sizeof(*d->groups));
	if (!d->svcs || !d->subs || !d->groups) {
		sm_sa_dyn_free(d);
		return -ENOMEM;
	}
	*out = d;
	return 0;
}

void sm_sa_dyn_free(struct sm_sa_dyn *d)
{
	if (!d)
		return;
	free(d->svcs);
	free(d->subs);
	for (size_t i = 0; i < d->n_groups; i++)
		free(d->groups[i].m);
	free(d->groups);
	free(d);
}

unsigned sm_sa_dyn_expire(struct sm_sa_dyn *d, uint64_t now_us)
{
	unsigned n = 0;

	for (size_t i = 0; d && i < d->n_svcs;) {
		if (d->svcs[i].expires_us && d->svcs[i].expires_us <= now_us) {
			d->svcs[i] = d->svcs[--d->n_svcs];
			n++;
		} else {
			i++;
		}
	}
	return n;
}

uint64_t sm_sa_dyn_next_expiry(const struct sm_sa_dyn *d)
{
	uint64_t m = 0;

	for (size_t i = 0; d && i < d->n_svcs; i++)
		if (d->svcs[i].expires_us && (!m || d->svcs[i].expires_us < m))
			m = d->svcs[i].expires_us;
	return m;
}

size_t sm_sa_dyn_services(const struct sm_sa_dyn *d)
{
	return d ? d->n_svcs : 0;
}

size_t sm_sa_dyn_subs(const struct sm_sa_dyn *d)
{
	return d ? d->n_subs : 0;
}

/* Does subscription info (InformInfo, wire form) want notice? IBA 13.4.8.3. */
static bool sub_wants(const uint8_t *info, const uint8_t *notice)
{
	bool generic = notice[0] & 0x80;
	uint16_t trap = sm_sa_get16(notice + 4), lid = sm_sa_get16(notice + 6);
	uint16_t want_type = sm_sa_get16(info + 24), want_trap = sm_sa_get16(info + 26);
	uint16_t lid_lo = sm_sa_get16(info + 16), lid_hi = sm_sa_get16(info + 18);
	uint32_t want_prod = sm_sa_get32(info + 32) & 0xFFFFFF, prod = sm_sa_get32(notice) & 0xFFFFFF;

	if ((bool)info[22] != generic)
		return false;
	if (want_trap != 0xFFFF && want_trap != trap)   /* TrapNumber, or DeviceID for a vendor notice */
		return false;
	if (want_type != 0xFFFF && want_type != (notice[0] & 0x7F))
		return false;
	if (want_prod != 0xFFFFFF && want_prod != prod)
		return false;
	/* a GID in the subscription asks for that port only (64/65 carry the port's GID in DataDetails) */
	static const uint8_t zero[16];

	if (memcmp(info, zero, 16) && generic && (trap == SM_TRAP_GID_IN || trap == SM_TRAP_GID_OUT) &&
	    memcmp(info, notice + 16, 16))
		return false;
	/* the LID range names the issuer; the SM's own traps (64-67) are not filtered by it */
	if (lid_lo != 0xFFFF && !(generic && trap >= SM_TRAP_GID_IN && trap <= SM_TRAP_MC_DELETE))
		if (lid < lid_lo || lid > (lid_hi ? lid_hi : lid_lo))
			return false;
	return true;
}

size_t sm_sa_dyn_match(const struct sm_sa_dyn *d, const uint8_t notice[SM_SA_NOTICE_SIZE],
		       struct sm_sa_report_dest *out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; d && i < d->n_subs; i++) {
		if (!sub_wants(d->subs[i].info, notice))
			continue;
		if (n < max) {
			out[n].sub_id = d->subs[i].id;
			out[n].to = d->subs[i].to;
		}
		n++;
	}
	return n;
}

void sm_sa_dyn_unsubscribe_id(struct sm_sa_dyn *d, uint32_t sub_id)
{
	for (size_t i = 0; d && i < d->n_subs; i++)
		if (d->subs[i].id == sub_id) {
			d->subs[i] = d->subs[--d->n_subs];
			return;
		}
}

void sm_sa_notice_make(uint8_t notice[SM_SA_NOTICE_SIZE], uint8_t type, uint16_t trap, uint16_t issuer_lid,
		       const uint8_t issuer_gid[16], const uint8_t *details)
{
	memset(notice, 0, SM_SA_NOTICE_SIZE);
	sm_sa_put32(notice, 0x80000000u | (uint32_t)(type & 0x7F) << 24 | 4u);   /* generic, producer: class manager */
	sm_sa_put16(notice + 4, trap);
	sm_sa_put16(notice + 6, issuer_lid);
	if (details)
		memcpy(notice + 10, details, 54);
	if (issuer_gid)
		memcpy(notice + 64, issuer_gid, 16);
}

void sm_sa_report_encode(uint64_t tid, const uint8_t notice[SM_SA_NOTICE_SIZE], uint8_t mad[256])
{
	struct sm_sa_hdr h = {
		.base_version = 1, .mgmt_class = SM_CLASS_SA, .class_version = SM_SA_CLASS_VERSION,
		.method = SM_SA_REPORT, .tid = tid, .attr_id = SM_SA_ATTR_NOTICE,
	};

	memset(mad, 0, SM_SA_MAD_SIZE);
	sm_sa_hdr_encode(&h, mad);
	memcpy(mad + SM_SA_HDR_SIZE, notice, SM_SA_NOTICE_SIZE);
}

void sm_sa_guid_diff(const uint64_t *old, size_t n_old, const uint64_t *cur, size_t n_cur, sm_sa_gid_change_fn *fn,
		     void *arg)
{
	size_t i = 0, j = 0;

	while (i < n_old || j < n_cur) {
		if (j == n_cur || (i < n_old && old[i] < cur[j]))
			fn(old[i++], false, arg);
		else if (i == n_old || cur[j] < old[i])
			fn(cur[j++], true, arg);
		else
			i++, j++;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int sm_sa_snap_port_guids(const struct sm_snapshot *snap, uint64_t **out, size_t *n)
{
	const struct sm_fabric *f = snap->fabric;
	uint64_t *g = malloc(((size_t)f->n_ports + 1) * sizeof(*g));
	size_t k = 0;

	if (!g)
		return -ENOMEM;
	for (uint32_t i = 0; i < f->n_ports; i++) {
		const struct sm_port *p = &f->ports[i];
		uint8_t t = f->nodes[p->node].type;

		if ((t == SM_NODE_CA || t == SM_NODE_ROUTER) && p->guid && p->lid && p->state == SM_PORT_ACTIVE)
			g[k++] = p->guid;
	}
	qsort(g, k, sizeof(*g), cmp_u64);
	*out = g;
	*n = k;
	return 0;
}

void sm_sa_snap_gid_of_lid(const struct sm_snapshot *snap, uint16_t lid, uint8_t gid[16])
{
	uint32_t pi;

	memset(gid, 0, 16);
	if (!snap || !lid)
		return;
	pi = sm_fabric_find_lid(snap->fabric, snap->plane, lid);
	if (pi != SM_NONE)
		sm_sa_gid_make(gid, snap->subnet_prefix, snap->fabric->ports[pi].guid);
}
