/* SPDX-License-Identifier: MIT */
/*
 * DOC: plane-consistent LIDs (see planelid.h)
 *
 * Owns a key -> (LID, LMC) map and a bitmap of LIDs taken over all
 * planes, both under one mutex. The persisted form reuses the guid2lid
 * reader and atomic writer of the LID manager (the key stands in for the
 * GUID).
 */
#include "sm/planelid.h"
#include "lib/err.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sm_plane_lids {
	pthread_mutex_t mu;
	struct sm_guid_map map;          /* key -> lid | lmc << 16 */
	uint64_t *keys;                  /* insertion order, for saving */
	uint32_t n_keys, cap_keys;
	uint8_t used[SM_LID_SPACE];      /* 1 = taken by a host key */
	uint8_t sw_count[SM_LID_SPACE];  /* planes using the LID for a switch */
	uint8_t *sw_used[SM_MAX_PLANES]; /* per plane: LID used by a switch (lazily allocated) */
	uint64_t *sw_guid[SM_MAX_PLANES]; /* per plane: the switch a LID was given to, 0 none (kept when it is absent) */
	struct sm_lidmgr ports;          /* port GUID -> LID: the guid2lid seed, updated by each want */
	uint8_t *seeded;                 /* LIDs of the seed (SM_LID_SPACE), NULL: no seed */
	int ports_dirty;
	char g2l_path[4096];             /* STATE_DIR/guid2lid */
	unsigned lmc;
	int dirty;
	char path[4096];
	sm_note_fn *note;
	void *note_arg;
	struct sm_plane_lids_stats st;
	/* sm_plane_lids_save_backoff(): failed attempts in a row, since when, next one due */
	uint32_t save_fails;
	uint64_t save_fail_since_ms, save_next_ms;
	char save_err[1024];
};

static uint64_t fnv64(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (size_t i = 0; i < n; i++) {
		h ^= (uint8_t)s[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

uint64_t sm_plane_lids_key(const struct sm_fabric *f, uint32_t port_index)
{
	const struct sm_port *pt = &f->ports[port_index];
	const struct sm_node *nd = &f->nodes[pt->node];

	if (nd->type == SM_NODE_SWITCH)
		return nd->guid;
	if (nd->sysimg_guid)
		return nd->sysimg_guid;
	size_t n = strcspn(nd->desc, " \t");
	if (n)
		return fnv64(nd->desc, n) | (1ULL << 63);
	return pt->guid;
}

static int add_key(struct sm_plane_lids *pl, uint64_t key, uint16_t lid, unsigned lmc)
{
	if (pl->n_keys == pl->cap_keys) {
		uint32_t nc = pl->cap_keys ? pl->cap_keys * 2 : 256;
		uint64_t *k = realloc(pl->keys, (size_t)nc * sizeof(*k));
		if (!k)
			return -ENOMEM;
		pl->keys = k;
		pl->cap_keys = nc;
	}
	int rc = sm_guid_map_put(&pl->map, key, (uint32_t)lid | (uint32_t)lmc << 16);
	if (rc)
		return rc;
	pl->keys[pl->n_keys++] = key;
	for (unsigned i = 0; i < (1u << lmc); i++)
		pl->used[lid + i] = 1;
	pl->st.keys++;
	return 0;
}

/* A LID a switch of some plane was given and keeps while it is absent (a spine down, a reset). */
static int sw_reserved(const struct sm_plane_lids *pl, unsigned lid)
{
	for (unsigned p = 0; p < SM_MAX_PLANES; p++)
		if (pl->sw_guid[p] && pl->sw_guid[p][lid])
			return 1;
	return 0;
}

/* Free for a host: no host and no switch of any plane on any LID of the range. */
static int range_free(const struct sm_plane_lids *pl, unsigned lid, unsigned lmc)
{
	unsigned span = 1u << lmc;
	if (!lid || lid % span || lid + span - 1 > SM_UNICAST_LID_MAX)
		return 0;
	for (unsigned i = 0; i < span; i++)
		if (pl->used[lid + i] || pl->sw_count[lid + i] || sw_reserved(pl, lid + i))
			return 0;
	return 1;
}

/* Free for switch `guid` of `plane`: no host anywhere, no other switch of this plane, present or not. */
static int sw_free(const struct sm_plane_lids *pl, unsigned plane, unsigned lid, uint64_t guid)
{
	return lid && lid <= SM_UNICAST_LID_MAX && !pl->used[lid] && !pl->sw_used[plane][lid] &&
	       (!pl->sw_guid[plane][lid] || pl->sw_guid[plane][lid] == guid);
}

/* No LID of the range is the seed's LID of another port ('own': this port's seed LID, 0 none). */
static int unseeded(const struct sm_plane_lids *pl, unsigned lid, unsigned span, unsigned own)
{
	if (!pl->seeded)
		return 1;
	for (unsigned i = 0; i < span && lid + i < SM_LID_SPACE; i++)
		if (pl->seeded[lid + i] && !(own && lid + i >= own && lid + i < own + span))
			return 0;
	return 1;
}

/*
 * *from: no range below it is free (0: unknown). Valid while LIDs are only
 * taken: one sm_plane_lids_want() call, until a switch moves off a LID.
 * Without it, giving N fresh hosts their LIDs scanned N^2/2 LIDs (2,048
 * hosts: a sixth of a plane's bring-up CPU).
 */
static uint16_t lowest_free(const struct sm_plane_lids *pl, unsigned lmc, unsigned *from)
{
	unsigned span = 1u << lmc;
	unsigned lid = *from > span ? *from - *from % span : span;
	for (; lid + span - 1 <= SM_UNICAST_LID_MAX; lid += span)
		if (range_free(pl, lid, lmc) && unseeded(pl, lid, span, 0)) {
			*from = lid;
			return (uint16_t)lid;
		}
	*from = lid;
	return 0;
}

static int cmp_port(const void *a, const void *b)
{
	const struct sm_lid_entry *x = a, *y = b;
	return x->guid < y->guid ? -1 : x->guid > y->guid;
}

/* The seed's LID of a port GUID, 0 if none. */
static uint16_t seed_of(const struct sm_plane_lids *pl, uint64_t guid)
{
	uint16_t first = 0;
	if (pl->seeded)
		(void)sm_lidmgr_lookup(&pl->ports, guid, &first, NULL);
	return first;
}

/*
 * The LID the port table gives a switch: the seed's, or the one it was
 * given earlier in this process's life (so a fabric reset while smd runs,
 * or a switch that comes back, gets its LID again). *from_seed: read from
 * the file.
 */
static uint16_t table_lid(const struct sm_plane_lids *pl, uint64_t guid, int *from_seed)
{
	struct sm_lid_entry key = { .guid = guid };
	const struct sm_lid_entry *e = pl->ports.n ? bsearch(&key, pl->ports.e, pl->ports.n, sizeof(key), cmp_port) : NULL;
	*from_seed = e && e->line && pl->seeded;
	return e ? e->first : 0;
}

/* Record the LID a port got in the port table; its first `sorted` entries are sorted by GUID. */
static int note_port(struct sm_plane_lids *pl, uint32_t sorted, uint64_t guid, uint16_t lid, unsigned span)
{
	struct sm_lidmgr *m = &pl->ports;
	struct sm_lid_entry key = { .guid = guid }, *e;
	uint16_t last = (uint16_t)(lid + span - 1);
	e = sorted ? bsearch(&key, m->e, sorted, sizeof(*m->e), cmp_port) : NULL;
	if (e) {
		if (e->first != lid || e->last != last) {
			e->first = lid;
			e->last = last;
			pl->ports_dirty = 1;
		}
		return 0;
	}
	int rc = sm_lidmgr_add(m, guid, lid, last);
	if (rc)
		return rc;
	pl->ports_dirty = 1;
	return 0;
}

static void sw_take(struct sm_plane_lids *pl, unsigned plane, unsigned lid)
{
	pl->sw_used[plane][lid] = 1;
	pl->sw_count[lid]++;
}

int sm_plane_lids_open(const char *state_dir, unsigned lmc, sm_note_fn *note_fn, void *note_arg,
		       struct sm_plane_lids **out, char *err, size_t errlen)
{
	struct sm_plane_lids *pl;
	struct sm_lidmgr m;
	int rc;

	*out = NULL;
	if (lmc > 7) {
		snprintf(err, errlen, "LMC %u out of range 0-7", lmc);
		return -EINVAL;
	}
	pl = calloc(1, sizeof(*pl));
	if (!pl)
		return -ENOMEM;
	pthread_mutex_init(&pl->mu, NULL);
	pl->lmc = lmc;
	pl->note = note_fn;
	pl->note_arg = note_arg;
	if (!state_dir) {
		*out = pl;
		return 0;
	}
	snprintf(pl->path, sizeof(pl->path), "%s/plane-lids", state_dir);
	sm_lidmgr_init(&m);
	rc = sm_lidmgr_load(&m, pl->path, err, errlen);
	if (rc == -ENOENT) {
		rc = 0;  /* first start */
	} else if (!rc) {
		int relmc = 0;
		/*
		 * Pass 0: keys written with this LMC (two of them on one LID: a bad file).
		 * Pass 1: keys written with another LMC keep their base LID if it is aligned
		 * and its new range free, else get a new one (their ranges may overlap).
		 */
		for (unsigned pass = 0; pass < 2 && !rc; pass++)
			for (uint32_t i = 0; i < m.n && !rc; i++) {
				const struct sm_lid_entry *e = &m.e[i];
				unsigned span = (unsigned)e->last - e->first + 1, l = 0;
				while ((1u << l) < span)
					l++;
				if ((l == lmc) != !pass)
					continue;
				if (pass) {
					relmc = 1;
					if (range_free(pl, e->first, lmc))
						rc = add_key(pl, e->guid, e->first, lmc);
					continue;
				}
				if (!range_free(pl, e->first, l)) {
					snprintf(err, errlen, "%s:%u: LID %u of key 0x%016llx is also held by another key",
						 pl->path, e->line, e->first, (unsigned long long)e->guid);
					rc = -EINVAL;
					break;
				}
				rc = add_key(pl, e->guid, e->first, l);
			}
		pl->st.keys = pl->n_keys;
		pl->dirty = m.legacy || relmc;   /* an unsealed file (an older smd's) is rewritten sealed */
	}
	sm_lidmgr_clear(&m);
	snprintf(pl->g2l_path, sizeof(pl->g2l_path), "%s/guid2lid", state_dir);
	if (!rc) {
		rc = sm_plane_lids_seed(pl, pl->g2l_path, err, errlen);
		if (rc == -ENOENT)
			rc = 0;   /* no guid2lid yet */
	}
	if (rc) {
		sm_plane_lids_free(pl);
		return rc;
	}
	*out = pl;
	return 0;
}

int sm_plane_lids_seed(struct sm_plane_lids *pl, const char *path, char *err, size_t errlen)
{
	struct sm_lidmgr m;
	int rc;

	sm_lidmgr_init(&m);
	rc = sm_lidmgr_load(&m, path, err, errlen);
	if (rc)
		return rc;
	if (!pl->seeded && !(pl->seeded = malloc(SM_LID_SPACE))) {
		sm_lidmgr_clear(&m);
		return -ENOMEM;
	}
	pthread_mutex_lock(&pl->mu);
	memset(pl->seeded, 0, SM_LID_SPACE);
	for (uint32_t i = 0; i < m.n; i++)
		for (unsigned l = m.e[i].first; l <= m.e[i].last; l++)
			pl->seeded[l] = 1;
	sm_lidmgr_clear(&pl->ports);
	pl->ports = m;
	/* a seed read from elsewhere (OpenSM's file) is written to STATE_DIR/guid2lid */
	pl->ports_dirty = strcmp(path, pl->g2l_path) != 0 || m.legacy;
	pthread_mutex_unlock(&pl->mu);
	return 0;
}

void sm_plane_lids_free(struct sm_plane_lids *pl)
{
	if (!pl)
		return;
	sm_guid_map_free(&pl->map);
	free(pl->keys);
	for (unsigned p = 0; p < SM_MAX_PLANES; p++) {
		free(pl->sw_used[p]);
		free(pl->sw_guid[p]);
	}
	sm_lidmgr_clear(&pl->ports);
	free(pl->seeded);
	pthread_mutex_destroy(&pl->mu);
	free(pl);
}

/* STATE_DIR/plane-lids from the key table. */
static int save_keys(struct sm_plane_lids *pl, char *err, size_t errlen)
{
	struct sm_lidmgr m;
	int rc;

	sm_lidmgr_init(&m);
	m.e = calloc((size_t)pl->n_keys + 1, sizeof(*m.e));
	if (!m.e) {
		sm_errf(err, errlen, "%s: out of memory", pl->path);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < pl->n_keys; i++) {
		uint32_t v = sm_guid_map_get(&pl->map, pl->keys[i]);
		m.e[i].guid = pl->keys[i];
		m.e[i].first = (uint16_t)(v & 0xffff);
		m.e[i].last = (uint16_t)((v & 0xffff) + (1u << (v >> 16)) - 1);
	}
	m.n = m.cap = pl->n_keys;
	rc = sm_lidmgr_save(&m, pl->path, err, errlen);
	sm_lidmgr_clear(&m);
	return rc;
}

int sm_plane_lids_save(struct sm_plane_lids *pl, char *err, size_t errlen)
{
	char e1[1024] = "", e2[1024] = "";
	int rc1 = 0, rc2 = 0;

	pthread_mutex_lock(&pl->mu);
	/* each file is written even when the other cannot be: both errors are reported */
	if (pl->path[0] && pl->dirty && !(rc1 = save_keys(pl, e1, sizeof(e1))))
		pl->dirty = 0;
	/* every port's LID, OpenSM's format: what the next start (any mode) seeds from */
	if (pl->path[0] && pl->ports_dirty && !(rc2 = sm_lidmgr_save(&pl->ports, pl->g2l_path, e2, sizeof(e2))))
		pl->ports_dirty = 0;
	pthread_mutex_unlock(&pl->mu);
	if (rc1 && rc2)
		sm_errf(err, errlen, "%s; %s", e1, e2);
	else if (rc1 || rc2)
		sm_errf(err, errlen, "%s", rc1 ? e1 : e2);
	return rc1 ? rc1 : rc2;
}

int sm_plane_lids_save_backoff(struct sm_plane_lids *pl, uint64_t now_ms, struct sm_plane_lids_save *sv,
			       char *err, size_t errlen)
{
	int rc;

	memset(sv, 0, sizeof(*sv));
	if (pl->save_fails && now_ms < pl->save_next_ms) {
		sv->failures = pl->save_fails;
		sv->next_ms = pl->save_next_ms;
		sm_errf(err, errlen, "%s", pl->save_err);
		return -EAGAIN;
	}
	sv->tried = 1;
	rc = sm_plane_lids_save(pl, err, errlen);
	if (!rc) {
		sv->recovered = pl->save_fails;
		sv->failing_ms = pl->save_fails ? now_ms - pl->save_fail_since_ms : 0;
		pl->save_fails = 0;
		return 0;
	}
	if (!pl->save_fails++)
		pl->save_fail_since_ms = now_ms;
	uint64_t wait = 1000ull << (pl->save_fails < 7 ? pl->save_fails - 1 : 6);
	pl->save_next_ms = now_ms + (wait < SM_PLANE_LIDS_BACKOFF_MAX_MS ? wait : SM_PLANE_LIDS_BACKOFF_MAX_MS);
	snprintf(pl->save_err, sizeof(pl->save_err), "%s", err && errlen && err[0] ? err : strerror(-rc));
	sv->failures = pl->save_fails;
	sv->next_ms = pl->save_next_ms;
	return rc;
}

struct want_port {
	uint64_t key;        /* host key (hosts) or node GUID (switches) */
	uint64_t guid;       /* port GUID: tie-break, deterministic */
	uint32_t port;
	uint8_t is_switch;
};

/* Hosts first, by key; then switches by GUID: the same order in every plane. */
static int cmp_want(const void *a, const void *b)
{
	const struct want_port *x = a, *y = b;
	if (x->is_switch != y->is_switch)
		return x->is_switch ? 1 : -1;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->guid != y->guid)
		return x->guid < y->guid ? -1 : 1;
	return x->port < y->port ? -1 : x->port > y->port;
}

static int want_host(struct sm_plane_lids *pl, unsigned plane, const struct want_port *w,
		     struct sm_guid_map *seen, uint16_t have, uint16_t *out, unsigned *from)
{
	uint64_t key = w->key;
	int rc;

	if (sm_guid_map_get(seen, key) != SM_NONE) {
		/* a second port of one host in this plane: it cannot share the host's LID */
		key = w->guid;
		pl->st.conflicts++;
		sm_notef(pl->note, pl->note_arg, "plane %u: host of port 0x%016llx has another port in this plane; it gets a LID of its own",
		     plane, (unsigned long long)w->guid);
	}
	uint32_t v = sm_guid_map_get(&pl->map, key);
	if (v != SM_NONE) {
		*out = (uint16_t)(v & 0xffff);
		pl->st.from_table++;
	} else {
		uint16_t lid, own = seed_of(pl, w->guid);
		if (own && range_free(pl, own, pl->lmc)) {
			lid = own;   /* the guid2lid seed: STATE_DIR/guid2lid or --guid2lid FILE */
			pl->st.from_seed++;
		} else if (have && range_free(pl, have, pl->lmc) && unseeded(pl, have, 1u << pl->lmc, own)) {
			lid = have;
			pl->st.inherited++;
		} else {
			if (have) {
				pl->st.conflicts++;
				sm_notef(pl->note, pl->note_arg, "plane %u: port 0x%016llx held LID %u, which another host or a switch holds across the planes; moving it",
				     plane, (unsigned long long)w->guid, have);
			}
			lid = lowest_free(pl, pl->lmc, from);
			if (!lid)
				return -ENOSPC;
			pl->st.fresh++;
		}
		rc = add_key(pl, key, lid, pl->lmc);
		if (rc)
			return rc;
		pl->dirty = 1;
		*out = lid;
	}
	if (sm_guid_map_get(seen, key) == SM_NONE)
		return sm_guid_map_put(seen, key, w->port);
	return 0;
}

int sm_plane_lids_want(struct sm_plane_lids *pl, const struct sm_fabric *f, unsigned plane,
		       const uint16_t *cur, uint16_t *want)
{
	struct want_port *w;
	struct sm_guid_map seen = { 0 };   /* host keys already given a port in this plane */
	unsigned from = 0;                 /* lowest_free() */
	uint32_t n = 0;
	int rc = 0;

	if (plane >= SM_MAX_PLANES)
		return -EINVAL;
	w = malloc(((size_t)f->n_ports + 1) * sizeof(*w));
	if (!w)
		return -ENOMEM;
	for (uint32_t i = 0; i < f->n_nodes; i++) {
		const struct sm_node *nd = &f->nodes[i];
		if (nd->plane != plane)
			continue;
		for (unsigned p = nd->type == SM_NODE_SWITCH ? 0 : 1; p <= nd->nports; p++) {
			uint32_t port = nd->port0 + p;
			if (!f->ports[port].guid)
				continue;
			w[n].key = sm_plane_lids_key(f, port);
			w[n].guid = f->ports[port].guid;
			w[n].port = port;
			w[n++].is_switch = nd->type == SM_NODE_SWITCH;
			if (nd->type == SM_NODE_SWITCH)
				break;  /* port 0 only */
		}
	}
	qsort(w, n, sizeof(*w), cmp_want);
	pthread_mutex_lock(&pl->mu);
	if ((!pl->sw_used[plane] && !(pl->sw_used[plane] = calloc(SM_LID_SPACE, 1))) ||
	    (!pl->sw_guid[plane] && !(pl->sw_guid[plane] = calloc(SM_LID_SPACE, sizeof(uint64_t))))) {
		rc = -ENOMEM;
		goto out;
	}
	/* this plane's switch LIDs are recomputed on every call (a sweep retry, a new sweep) */
	for (unsigned lid = 0; lid < SM_LID_SPACE; lid++)
		if (pl->sw_used[plane][lid]) {
			pl->sw_used[plane][lid] = 0;
			pl->sw_count[lid]--;
		}
	for (uint32_t i = 0; i < n && !rc; i++) {
		uint16_t have = cur ? cur[w[i].port] : 0;
		if (!w[i].is_switch) {
			rc = want_host(pl, plane, &w[i], &seen, have, &want[w[i].port], &from);
			continue;
		}
		int from_file;
		uint16_t own = table_lid(pl, w[i].guid, &from_file);
		int seeded = own && sw_free(pl, plane, own, w[i].guid);
		uint16_t lid = seeded ? own : have;
		if (seeded && (from_file || own != have))
			pl->st.from_seed++;
		else if (seeded)
			pl->st.sw_kept++;
		else if (!sw_free(pl, plane, lid, w[i].guid) || !unseeded(pl, lid, 1, own)) {
			if (lid) {
				pl->st.conflicts++;
				sm_notef(pl->note, pl->note_arg, "plane %u: switch 0x%016llx held LID %u, which a host or another switch holds; moving it",
				     plane, (unsigned long long)w[i].guid, lid);
			}
			pl->st.sw_fresh++;
			for (lid = 1; lid <= SM_UNICAST_LID_MAX &&
				      (!sw_free(pl, plane, lid, w[i].guid) || !unseeded(pl, lid, 1, 0)); lid++)
				;
			if (lid > SM_UNICAST_LID_MAX) {
				rc = -ENOSPC;
				break;
			}
		} else if (lid) {
			pl->st.sw_kept++;
		}
		sw_take(pl, plane, lid);
		if (own && own != lid && pl->sw_guid[plane][own] == w[i].guid) {
			pl->sw_guid[plane][own] = 0;   /* it moved: its old LID is free again */
			from = 0;
		}
		pl->sw_guid[plane][lid] = w[i].guid;
		want[w[i].port] = lid;
	}
	/* every port's LID into the port table (STATE_DIR/guid2lid) */
	uint32_t sorted = pl->ports.n;
	for (uint32_t i = 0; i < n && !rc; i++) {
		uint16_t lid = want[w[i].port], have = cur ? cur[w[i].port] : 0;
		if (have && have != lid)
			pl->st.moved++;
		rc = note_port(pl, sorted, w[i].guid, lid, w[i].is_switch ? 1 : 1u << pl->lmc);
	}
	if (pl->ports.n != sorted)
		qsort(pl->ports.e, pl->ports.n, sizeof(*pl->ports.e), cmp_port);
out:
	pthread_mutex_unlock(&pl->mu);
	sm_guid_map_free(&seen);
	free(w);
	return rc;
}

void sm_plane_lids_stats(struct sm_plane_lids *pl, struct sm_plane_lids_stats *st)
{
	pthread_mutex_lock(&pl->mu);
	*st = pl->st;
	pthread_mutex_unlock(&pl->mu);
}
