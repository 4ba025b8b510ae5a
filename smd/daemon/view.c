/* SPDX-License-Identifier: MIT */
/*
 * DOC: per-plane views for control-socket readers, and plane health (daemon_priv.h)
 *
 * Both hold references to the SM's per-plane snapshots (smd/sm/snapshot.h),
 * which are immutable: nothing here copies a fabric or an LFT.
 */
#include "daemon/daemon_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The LID hook of every plane: the shared table's answer. (The plane's
 * fabric for plane health comes with its snapshot, dmn_publish_view.)
 */
int dmn_capture_want(void *arg, const struct sm_fabric *f, unsigned plane, const uint16_t *cur,
			uint16_t *want)
{
	struct smd_dmn *d = arg;
	bool adopted;

	pthread_mutex_lock(&d->mu);
	adopted = plane < SM_MAX_PLANES && d->adopted[plane];
	pthread_mutex_unlock(&d->mu);
	if (adopted) {
		if (want != cur)
			memcpy(want, cur, (size_t)f->n_ports * sizeof(*want));
		return 0;   /* the fabric's LIDs, as the SM we took the plane from set them */
	}
	return sm_plane_lids_want(d->lids, f, plane, cur, want);
}

void dmn_view_unref(struct dmn_view *v)
{
	if (!v || atomic_fetch_sub(&v->refs, 1) != 1)
		return;
	sm_snapshot_unref(v->snap);
	free(v);
}

void smd_dmn_view_put(const struct smd_view *v)
{
	/* pub is the first member of struct dmn_view */
	dmn_view_unref((struct dmn_view *)(uintptr_t)v);
}

int smd_dmn_view_get(struct smd_dmn *d, unsigned plane, const struct smd_view **out)
{
	struct dmn_view *v;

	*out = NULL;
	if (plane >= SM_MAX_PLANES)
		return -ENOENT;
	pthread_mutex_lock(&d->mu);
	v = d->views[plane];
	if (v)
		atomic_fetch_add(&v->refs, 1);
	pthread_mutex_unlock(&d->mu);
	if (!v)
		return -ENOENT;
	*out = &v->pub;
	return 0;
}

/*
 * The published hook of every plane (sm.h): the plane's snapshot, shared,
 * never copied. Every bring-up that got through its LID phase replaces the
 * plane's cap[] (plane health; a retried plane replaces its own); a
 * successful one also becomes the plane's view. From plane threads, each
 * writing only its own cap[plane]. A view that cannot be allocated (ENOMEM)
 * keeps the previous one, which is only stale, never wrong about its cycle.
 */
void dmn_publish_view(void *arg, const struct sm_snapshot *snap)
{
	struct smd_dmn *d = arg;
	unsigned plane = snap->plane;
	struct dmn_view *v, *old;

	if (plane >= SM_MAX_PLANES)
		return;
	sm_snapshot_unref(d->cap[plane]);
	d->cap[plane] = sm_snapshot_ref(snap);
	if (!snap->up || !snap->lfts || !(v = calloc(1, sizeof(*v))))
		return;
	atomic_init(&v->refs, 1);
	v->snap = sm_snapshot_ref(snap);
	v->pub.plane = plane;
	v->pub.fabric = snap->fabric;
	v->pub.lfts = snap->lfts;
	v->pub.made_us = snap->made_us;
	v->pub.cycle = snap->cycle;
	pthread_mutex_lock(&d->mu);
	old = d->views[plane];
	d->views[plane] = v;
	pthread_mutex_unlock(&d->mu);
	dmn_view_unref(old);
}

/*
 * Merge the planes' snapshots and compute plane health. A plane brought up
 * in this cycle contributes its new snapshot (none if it failed before its
 * LID phase: it counts as empty); one that only ran a light sweep, finding
 * nothing, keeps the snapshot of its last heavy sweep. The references are
 * kept for the next light cycle.
 */
void dmn_cycle_health(struct smd_dmn *d, struct sm_planes_health *ph, char *err, size_t errlen)
{
	struct sm_fabric *all = sm_fabric_new();
	int rc = all ? 0 : -ENOMEM, any = 0;

	for (unsigned i = 0; i < d->n; i++)
		any |= d->cap[i] != NULL;
	if (!any && !rc) {
		snprintf(err, errlen, "no plane was discovered in the last sweep");
		rc = -ENODATA;
	}

	for (unsigned i = 0; !rc && i < d->n; i++)
		rc = sm_fabric_add_plane(all, i, NULL);
	for (unsigned i = 0; !rc && i < d->n; i++)
		if (d->cap[i] && (rc = sm_fabric_append(all, d->cap[i]->fabric, NULL)) == -EEXIST)
			snprintf(err, errlen, "plane %u shares node or port GUIDs with another plane", i);
	if (!rc)
		rc = sm_planes_health(all, NULL, ph);
	if (rc && !err[0])
		snprintf(err, errlen, "%s", strerror(-rc));
	sm_fabric_free(all);
}
