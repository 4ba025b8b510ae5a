/* SPDX-License-Identifier: MIT */
/*
 * DOC: the SA's multicast group table (dyn.h), no MADs
 *
 * Groups sit in one array sorted by MGID (binary search; GetTable answers
 * in MGID order, as OpenSM's map does), each with its members sorted by
 * port GUID. MLIDs come from a bitmap over 0xC000..0xFFFE: the lowest free
 * one, freed when its group goes, so a group created and deleted any
 * number of times never uses more than one (OpenSM's send-only joins leak
 * them). The group is deleted when its last FullMember or
 * SendOnlyFullMember leaves (IBA o15-0.1.14 as OpenSM reads it: the
 * non-members go with it); a well-known group (declared by a partition)
 * only loses its members.
 *
 * Record layout (MCMemberRecord): MGID 0, PortGID 16, Q_Key 32, MLID 36,
 * MTU 38, TClass 39, P_Key 40, Rate 42, PacketLifeTime 43,
 * SL/FlowLabel/HopLimit 44, Scope/JoinState 48, ProxyJoin 49 (bit 7).
 */
#include "sa/dyn.h"
#include "sa/records.h"
#include "model/partitions.h"
#include "sm/mcast.h"
#include "sm/snapshot.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define REC_MLID 36
#define REC_SCOPE_STATE 48

static int mgid_cmp(const uint8_t *a, const uint8_t *b)
{
	return memcmp(a, b, 16);
}

/* Index of the group of mgid, or where it would go (*found false). */
static size_t group_pos(const struct sm_sa_dyn *d, const uint8_t mgid[16], bool *found)
{
	size_t lo = 0, hi = d->n_groups;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = mgid_cmp(d->groups[mid].rec, mgid);

		if (!c) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

struct sm_sa_mcg *sm_sa_mc_find(const struct sm_sa_dyn *d, const uint8_t mgid[16])
{
	bool found;
	size_t i;

	if (!d)
		return NULL;
	i = group_pos(d, mgid, &found);
	return found ? &d->groups[i] : NULL;
}

static size_t member_pos(const struct sm_sa_mcg *g, uint64_t guid, bool *found)
{
	size_t lo = 0, hi = g->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (g->m[mid].guid == guid) {
			*found = true;
			return mid;
		}
		if (g->m[mid].guid < guid)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

struct sm_sa_mcm *sm_sa_mc_member(const struct sm_sa_mcg *g, uint64_t guid)
{
	bool found;
	size_t i = member_pos(g, guid, &found);

	return found ? &g->m[i] : NULL;
}

void sm_sa_mc_record(const struct sm_sa_mcg *g, const struct sm_sa_mcm *m, uint64_t prefix,
		     uint8_t rec[SM_SA_MCMEMBER_REC_SIZE])
{
	memcpy(rec, g->rec, SM_SA_MCMEMBER_REC_SIZE);
	if (!m)
		return;
	sm_sa_gid_make(rec + 16, prefix, m->guid);
	rec[REC_SCOPE_STATE] = (uint8_t)((rec[REC_SCOPE_STATE] & 0xF0) | (m->join & 0x0F));
	rec[49] = m->proxy ? 0x80 : 0;
}

size_t sm_sa_dyn_groups(const struct sm_sa_dyn *d)
{
	return d ? d->n_groups : 0;
}

size_t sm_sa_dyn_mc_members(const struct sm_sa_dyn *d)
{
	return d ? d->n_members : 0;
}

size_t sm_sa_dyn_mlids_used(const struct sm_sa_dyn *d)
{
	size_t n = 0;

	for (size_t i = 0; d && i < sizeof(d->mlid_used) / sizeof(d->mlid_used[0]); i++)
		n += (size_t)__builtin_popcountll(d->mlid_used[i]);
	return n;
}

/* ---- MLIDs ---- */

static bool mlid_taken(const struct sm_sa_dyn *d, unsigned i)
{
	return d->mlid_used[i / 64] >> (i % 64) & 1;
}

static uint16_t mlid_alloc(struct sm_sa_dyn *d, uint16_t want)
{
	unsigned i;

	if (want >= SM_MLID_FIRST && want <= SM_MLID_LAST && !mlid_taken(d, want - SM_MLID_FIRST)) {
		i = want - SM_MLID_FIRST;
	} else {
		for (i = 0; i < SM_SA_MLID_COUNT / 64 + 1; i++)
			if (~d->mlid_used[i])
				break;
		if (i > SM_SA_MLID_COUNT / 64)
			return 0;
		i = i * 64 + (unsigned)__builtin_ctzll(~d->mlid_used[i]);
		if (i >= SM_SA_MLID_COUNT)
			return 0;
	}
	d->mlid_used[i / 64] |= 1ull << (i % 64);
	return (uint16_t)(SM_MLID_FIRST + i);
}

static void mlid_free(struct sm_sa_dyn *d, uint16_t mlid)
{
	if (mlid >= SM_MLID_FIRST && mlid <= SM_MLID_LAST) {
		unsigned i = mlid - SM_MLID_FIRST;
		d->mlid_used[i / 64] &= ~(1ull << (i % 64));
	}
}

/* ---- events ---- */

static void event(struct sm_sa_dyn *d, uint16_t trap, const uint8_t mgid[16])
{
	if (d->n_mc_ev >= SM_SA_MC_EVENTS) {
		d->mc_ev_lost++;
		return;
	}
	d->mc_ev[d->n_mc_ev].trap = trap;
	memcpy(d->mc_ev[d->n_mc_ev].mgid, mgid, 16);
	d->n_mc_ev++;
}

unsigned sm_sa_dyn_mc_events(struct sm_sa_dyn *d, struct sm_sa_mc_event *out, unsigned max)
{
	unsigned n = d->n_mc_ev < max ? d->n_mc_ev : max;

	memcpy(out, d->mc_ev, n * sizeof(*out));
	memmove(d->mc_ev, d->mc_ev + n, (d->n_mc_ev - n) * sizeof(*out));
	d->n_mc_ev -= n;
	return n;
}

struct sm_mc_set *sm_sa_dyn_mc_take(struct sm_sa_dyn *d, unsigned plane, uint16_t sm_lid, uint64_t *seen,
				    void (*notice)(void *arg, const uint8_t n[64]), void *arg)
{
	struct sm_sa_mc_event ev[16];
	struct sm_mc_set *s;
	unsigned n;

	while ((n = sm_sa_dyn_mc_events(d, ev, 16)))
		for (unsigned i = 0; i < n && notice; i++) {
			uint8_t nt[SM_SA_NOTICE_SIZE], details[54] = { 0 };

			memcpy(details + 6, ev[i].mgid, 16);   /* DataDetails of 64-67: the GID at byte 6 */
			sm_sa_notice_make(nt, 3, ev[i].trap, sm_lid, NULL, details);
			notice(arg, nt);
		}
	if (d->mc_gen == *seen || !(s = sm_sa_dyn_mc_set(d, plane)))
		return NULL;
	*seen = s->gen;
	return s;
}

/* ---- groups and members ---- */

int sm_sa_mc_create(struct sm_sa_dyn *d, const uint8_t rec[SM_SA_MCMEMBER_REC_SIZE], uint16_t mlid,
		    struct sm_sa_mcg **out)
{
	bool found;
	size_t i = group_pos(d, rec, &found);

	*out = NULL;
	if (found)
		return -EEXIST;
	if (d->n_groups >= d->lim.max_groups)
		return -ENOSPC;
	mlid = mlid_alloc(d, mlid);
	if (!mlid)
		return -ENOSPC;
	memmove(&d->groups[i + 1], &d->groups[i], (d->n_groups - i) * sizeof(*d->groups));
	d->n_groups++;
	struct sm_sa_mcg *g = &d->groups[i];
	memset(g, 0, sizeof(*g));
	memcpy(g->rec, rec, SM_SA_MCMEMBER_REC_SIZE);
	memset(g->rec + 16, 0, 16);            /* PortGID */
	sm_sa_put16(g->rec + REC_MLID, mlid);
	g->rec[49] = 0;                        /* ProxyJoin */
	d->mc_gen++;
	d->mc_created++;
	*out = g;
	return 0;
}

static void group_delete(struct sm_sa_dyn *d, struct sm_sa_mcg *g)
{
	size_t i = (size_t)(g - d->groups);

	mlid_free(d, sm_sa_get16(g->rec + REC_MLID));
	d->n_members -= g->n;
	free(g->m);
	memmove(&d->groups[i], &d->groups[i + 1], (d->n_groups - i - 1) * sizeof(*d->groups));
	d->n_groups--;
	d->mc_gen++;
	d->mc_deleted++;
}

void sm_sa_mc_drop(struct sm_sa_dyn *d, struct sm_sa_mcg *g)
{
	if (!g->n && !g->well_known)
		group_delete(d, g);
}

int sm_sa_mc_join(struct sm_sa_dyn *d, struct sm_sa_mcg *g, uint64_t guid, uint8_t join, bool proxy)
{
	bool found;
	size_t i = member_pos(g, guid, &found);
	uint8_t before = found ? g->m[i].join : 0;

	join &= 0x0F;
	if (!found) {
		if (d->n_members >= d->lim.max_members)
			return -ENOSPC;
		if (g->n == g->cap) {
			size_t cap = g->cap ? g->cap * 2 : 4;
			struct sm_sa_mcm *m = realloc(g->m, cap * sizeof(*m));

			if (!m)
				return -ENOMEM;
			g->m = m;
			g->cap = cap;
		}
		memmove(&g->m[i + 1], &g->m[i], (g->n - i) * sizeof(*g->m));
		g->n++;
		d->n_members++;
		g->m[i] = (struct sm_sa_mcm){ .guid = guid, .proxy = proxy };
	}
	g->m[i].join = (uint8_t)(before | join);
	if (g->m[i].join != before)
		d->mc_gen++;
	if ((join & SM_SA_MC_FULLISH) && !(before & SM_SA_MC_FULLISH) && ++g->fullish == 1)
		event(d, SM_TRAP_MC_CREATE, g->rec);
	return 0;
}

static void member_remove(struct sm_sa_dyn *d, struct sm_sa_mcg *g, size_t i)
{
	memmove(&g->m[i], &g->m[i + 1], (g->n - i - 1) * sizeof(*g->m));
	g->n--;
	d->n_members--;
	d->mc_gen++;
}

/* No full-ish member left: trap 67, the members go, the group too unless well known. true: deleted. */
static bool group_empty(struct sm_sa_dyn *d, struct sm_sa_mcg *g)
{
	event(d, SM_TRAP_MC_DELETE, g->rec);
	d->n_members -= g->n;
	if (g->n)
		d->mc_gen++;
	g->n = 0;
	g->fullish = 0;
	if (g->well_known)
		return false;
	group_delete(d, g);
	return true;
}

bool sm_sa_mc_leave(struct sm_sa_dyn *d, struct sm_sa_mcg *g, uint64_t guid, uint8_t join, uint8_t *left)
{
	bool found;
	size_t i = member_pos(g, guid, &found);

	*left = 0;
	if (!found)
		return false;
	uint8_t had = g->m[i].join, now = (uint8_t)(had & ~join);
	bool others_full = g->fullish > ((had & SM_SA_MC_FULLISH) ? 1u : 0u);

	if ((now & SM_SA_MC_FULL) || (now && others_full)) {
		g->m[i].join = now;
		*left = now;
		if (now != had)
			d->mc_gen++;
	} else {
		member_remove(d, g, i);
		now = 0;
	}
	if ((had & SM_SA_MC_FULLISH) && !(now & SM_SA_MC_FULLISH) && --g->fullish == 0)
		return group_empty(d, g);
	return false;
}

size_t sm_sa_mc_prune(struct sm_sa_dyn *d, const uint64_t *cur, size_t n_cur)
{
	size_t removed = 0;

	for (size_t gi = 0; d && gi < d->n_groups;) {
		struct sm_sa_mcg *g = &d->groups[gi];
		bool deleted = false;

		for (size_t i = 0; i < g->n && !deleted;) {
			uint64_t guid = g->m[i].guid;
			size_t lo = 0, hi = n_cur;

			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;
				if (cur[mid] < guid)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo < n_cur && cur[lo] == guid) {
				i++;
				continue;
			}
			uint8_t had = g->m[i].join;
			member_remove(d, g, i);
			removed++;
			if ((had & SM_SA_MC_FULLISH) && --g->fullish == 0) {
				size_t n = g->n;
				deleted = group_empty(d, g);
				removed += n;
				if (!deleted)
					break;
			}
		}
		if (!deleted)
			gi++;
	}
	return removed;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

size_t sm_sa_mc_prune_snap(struct sm_sa_dyn *d, const struct sm_snapshot *snap)
{
	const struct sm_fabric *f = snap->fabric;
	uint64_t *g;
	size_t k = 0, n;

	if (!d || !d->n_members)
		return 0;
	g = malloc(((size_t)f->n_ports + 1) * sizeof(*g));
	if (!g)
		return 0;   /* out of memory: pruned with the next snapshot */
	for (uint32_t i = 0; i < f->n_ports; i++) {
		const struct sm_port *p = &f->ports[i];
		const struct sm_node *nd = &f->nodes[p->node];

		if (nd->plane != snap->plane || !p->guid || !p->lid)
			continue;
		if (nd->type == SM_NODE_SWITCH ? p->num == 0 : p->state == SM_PORT_ACTIVE)
			g[k++] = p->guid;
	}
	qsort(g, k, sizeof(*g), cmp_u64);
	n = sm_sa_mc_prune(d, g, k);
	free(g);
	return n;
}

int sm_sa_dyn_group_add(struct sm_sa_dyn *d, const uint8_t member_rec[SM_SA_MCMEMBER_REC_SIZE])
{
	struct sm_sa_mcg *g = sm_sa_mc_find(d, member_rec);
	uint8_t join = member_rec[REC_SCOPE_STATE] & 0x0F;
	int rc;

	if (!g && (rc = sm_sa_mc_create(d, member_rec, sm_sa_get16(member_rec + REC_MLID), &g)))
		return rc;
	rc = sm_sa_mc_join(d, g, sm_sa_gid_guid(member_rec + 16), join ? join : SM_SA_MC_FULL, false);
	if (rc)
		sm_sa_mc_drop(d, g);
	return rc;
}

/* ---- well-known groups and the set handed to the SM ---- */

/* The group record a partition's `ipoib`/`mgid=` group declares (OpenSM's parameters). */
static void mgroup_rec(const struct sm_partition *p, const struct sm_part_mgroup *mg, uint8_t subnet_timeout,
		       uint8_t rec[SM_SA_MCMEMBER_REC_SIZE])
{
	uint8_t scope = mg->scope ? mg->scope & 0xF : 2;
	uint8_t hop = scope == 2 ? 0 : 0xFF;

	memset(rec, 0, SM_SA_MCMEMBER_REC_SIZE);
	memcpy(rec, mg->mgid, 16);
	rec[1] = (uint8_t)((rec[1] & 0xF0) | scope);
	sm_sa_put32(rec + 32, mg->qkey);
	rec[38] = (uint8_t)(2 << 6 | (mg->mtu & 0x3F));
	rec[39] = mg->tclass;
	sm_sa_put16(rec + 40, (uint16_t)(p->pkey | 0x8000));
	rec[42] = (uint8_t)(2 << 6 | (mg->rate & 0x3F));
	rec[43] = (uint8_t)(2 << 6 | (subnet_timeout & 0x3F));
	sm_sa_put32(rec + 44, (uint32_t)(mg->sl & 0xF) << 28 | (mg->flow_label & 0xFFFFF) << 8 | hop);
	rec[REC_SCOPE_STATE] = (uint8_t)(scope << 4 | SM_SA_MC_FULL);
}

/* Does a partition of parts declare the group of MGID mgid (as stored: scope nibble set)? */
static bool declared(const struct sm_partitions *parts, const uint8_t mgid[16])
{
	uint8_t rec[SM_SA_MCMEMBER_REC_SIZE];

	for (size_t i = 0; parts && i < parts->n; i++)
		for (size_t k = 0; k < parts->v[i].n_mgroups; k++) {
			mgroup_rec(&parts->v[i], &parts->v[i].mgroups[k], 18, rec);
			if (!mgid_cmp(rec, mgid))
				return true;
		}
	return false;
}

/* Every group parts declares, made where missing, marked well known; *made counts the new ones. */
static int config_groups(struct sm_sa_dyn *d, const struct sm_partitions *parts, uint8_t subnet_timeout,
			 size_t *made)
{
	if (!subnet_timeout)
		subnet_timeout = 18;   /* OpenSM's default */
	for (size_t i = 0; parts && i < parts->n; i++) {
		const struct sm_partition *p = &parts->v[i];

		for (size_t k = 0; k < p->n_mgroups; k++) {
			uint8_t rec[SM_SA_MCMEMBER_REC_SIZE];
			struct sm_sa_mcg *g;
			int rc;

			mgroup_rec(p, &p->mgroups[k], subnet_timeout, rec);
			g = sm_sa_mc_find(d, rec);
			if (!g) {
				if ((rc = sm_sa_mc_create(d, rec, 0, &g)))
					return rc;
				(*made)++;
			}
			g->well_known = true;
		}
	}
	return 0;
}

int sm_sa_dyn_mc_config(struct sm_sa_dyn *d, const struct sm_partitions *parts, uint8_t subnet_timeout)
{
	uint64_t gen0 = d->mc_gen;
	size_t made = 0;
	int rc = config_groups(d, parts, subnet_timeout, &made);

	if (rc)
		return rc;
	d->mc_gen = gen0 + 1;   /* one change: a fresh table's first set is gen 1 */
	return 0;
}

int sm_sa_dyn_mc_reconfig(struct sm_sa_dyn *d, const struct sm_partitions *parts, uint8_t subnet_timeout,
			  size_t *made, size_t *deleted)
{
	*made = *deleted = 0;
	/* first the groups no partition declares any more: their MLIDs are free for the new ones */
	for (size_t i = 0; i < d->n_groups;) {
		struct sm_sa_mcg *g = &d->groups[i];

		if (!g->well_known || declared(parts, g->rec)) {
			i++;
			continue;
		}
		event(d, SM_TRAP_MC_DELETE, g->rec);
		group_delete(d, g);   /* its members with it */
		(*deleted)++;
	}
	return config_groups(d, parts, subnet_timeout, made);
}

static int cmp_mlid(const void *a, const void *b)
{
	const struct sm_mc_group *x = a, *y = b;

	return (x->mlid > y->mlid) - (x->mlid < y->mlid);
}

struct sm_mc_set *sm_sa_dyn_mc_set(const struct sm_sa_dyn *d, unsigned plane)
{
	struct sm_mc_set *s = sm_mc_set_new(plane, d->mc_gen);

	if (!s)
		return NULL;
	s->groups = calloc(d->n_groups ? d->n_groups : 1, sizeof(*s->groups));
	if (!s->groups)
		goto fail;
	for (size_t i = 0; i < d->n_groups; i++) {
		const struct sm_sa_mcg *g = &d->groups[i];
		struct sm_mc_group *o = &s->groups[s->n_groups++];
		uint32_t sfh = sm_sa_get32(g->rec + 44);

		o->mlid = sm_sa_get16(g->rec + REC_MLID);
		memcpy(o->mgid, g->rec, 16);
		o->pkey = sm_sa_get16(g->rec + 40);
		o->mtu = g->rec[38] & 0x3F;
		o->rate = g->rec[42] & 0x3F;
		o->sl = (uint8_t)(sfh >> 28);
		o->scope = g->rec[REC_SCOPE_STATE] >> 4;
		if (!g->n)
			continue;
		o->members = calloc(g->n, sizeof(*o->members));
		if (!o->members)
			goto fail;
		for (size_t k = 0; k < g->n; k++)
			o->members[k] = (struct sm_mc_member){ .port_guid = g->m[k].guid, .join_state = g->m[k].join };
		o->n_members = g->n;
	}
	qsort(s->groups, s->n_groups, sizeof(*s->groups), cmp_mlid);
	return s;
fail:
	sm_mc_set_unref(s);
	return NULL;
}

int sm_sa_mc_start_set(const struct sm_partitions *parts, uint8_t subnet_timeout, unsigned plane,
		       struct sm_mc_set **out)
{
	struct sm_sa_dyn *d;
	int rc = sm_sa_dyn_new(NULL, &d);

	*out = NULL;
	if (rc)
		return rc;
	rc = sm_sa_dyn_mc_config(d, parts, subnet_timeout);
	if (!rc) {
		*out = sm_sa_dyn_mc_set(d, plane);
		rc = *out ? 0 : -ENOMEM;
	}
	sm_sa_dyn_free(d);
	return rc;
}
