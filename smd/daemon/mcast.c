/* SPDX-License-Identifier: MIT */
/*
 * DOC: the daemon's multicast groups (issue 14): from each plane's SA to
 * its bring-ups
 *
 * Every plane starts with the groups of the partitions (the configured
 * file's, else the default partition's: the IPoIB broadcast groups and
 * `mgid=` groups; sm_sa_mc_start_set, what an SA configured with them
 * holds), so the first bring-up programs them, also before the plane has
 * an SA. A reload of the partitions changes the groups of the SAs
 * already made (dmn_mc_reconfig: the broadcast and mgid= groups of new
 * partitions made, those of removed ones deleted with trap 67); an SA
 * made later starts from the newest file. A plane's SA (sa.c) gets the same groups when it is made and
 * tells us after every MCMemberRecord Set/Delete it answered (cfg
 * mc_changed); a bring-up that succeeded removes the ports it no longer
 * found from the groups (dmn_mc_published, after the snapshot went to the
 * SA). Either way mc_sync() sends the queued traps 66/67 through the SA
 * (sm_sa_notice: issuer the SM's LID) and, when the groups changed, makes
 * the new set the plane's newest (d->mcast, under d->mu) and asks for a
 * "multicast" cycle after trap_holdoff_ms (a burst of joins shares it).
 * dmn_mc_cycle_begin() marks the planes whose set is newer than the one
 * their MFTs were last programmed with (mft_due): a multicast cycle runs
 * only the MFT-only pass on them (sm_mft_update: the MFT blocks that
 * differ, no sweep, no LFT or PortInfo traffic; a new snapshot with the
 * MFTs goes to the SA), the other planes are left alone; an interval
 * cycle runs it after a light sweep that saw nothing; a heavy bring-up
 * programs the set itself. Without a valid state (or when the pass fails)
 * the plane goes heavy. Either way its MFTs follow within one cycle.
 *
 * Generations grow across SAs: an SA made again (its plane failed and
 * came back) starts from the plane's last generation, and its table (the
 * partitions' groups again, members lost: hosts join again when the SM
 * changes) is taken at once.
 *
 * Threads: everything here runs on the loop's thread with the worker
 * idle, except dmn_mc_cycle_begin/end (the worker, during its cycle) and
 * the reads of d->mcast under d->mu (status).
 */
#include "daemon/daemon_priv.h"
#include "lib/clock.h"
#include "model/partitions.h"
#include "sa/dyn.h"
#include "sa/server.h"
#include "sm/mcast.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The partitions whose groups the planes have: the configured file's, else the default. */
static const struct sm_partitions *partitions(const struct smd_dmn *d, const struct smd_conf *conf)
{
	return conf->partitions ? conf->partitions : d->parts;
}

static void notice(void *arg, const uint8_t n[64])
{
	sm_sa_notice(arg, n);
}

/* Plane i's SA changed its groups (or may have): traps out, the new set in, a cycle asked for. */
static void mc_sync(struct smd_dmn *d, unsigned i)
{
	struct sm_mc_set *set, *old;

	if (!d->sa[i])
		return;
	set = sm_sa_dyn_mc_take(sm_sa_dyn(d->sa[i]), i, d->mc_sm_lid[i], &d->mc_seen[i], notice, d->sa[i]);
	if (!set)
		return;
	pthread_mutex_lock(&d->mu);
	old = d->mcast[i];
	d->mcast[i] = set;
	d->mc_fresh[i] = 0;
	if (!d->mc_due_us)
		d->mc_due_us = sm_mono_us() + (uint64_t)d->cur->conf->trap_holdoff_ms * 1000u;
	pthread_mutex_unlock(&d->mu);
	sm_mc_set_unref(old);
	(void)!write(d->wake[1], "m", 1);   /* the loop arms the timer (daemon.c on_wake, schedule) */
}

static void mc_changed(void *arg, struct sm_sa *sa)
{
	struct dmn_note *nc = arg;

	(void)sa;
	mc_sync(nc->d, nc->plane);
}

void dmn_mc_sa_cfg(struct smd_dmn *d, unsigned i, struct sm_sa_cfg *cfg)
{
	cfg->mc_changed = mc_changed;
	cfg->mc_arg = &d->note_ctx[i];
}

void dmn_mc_sa_opened(struct smd_dmn *d, unsigned i, struct sm_sa *sa)
{
	struct sm_sa_dyn *dyn = sm_sa_dyn(sa);
	struct sm_cfg c;
	char msg[400];
	int rc;

	sm_cfg_default(&c);
	/* the first SA's groups are the start set (gen 1); a later one's come after the plane's newest */
	pthread_mutex_lock(&d->mu);
	/* the newest config's partitions: a reload's before the worker swaps it in (never freed under mu) */
	const struct sm_partitions *parts = partitions(d, d->pending ? d->pending->conf : d->cur->conf);
	dyn->mc_gen = d->mc_fresh[i] || !d->mcast[i] ? 0 : d->mcast[i]->gen;
	pthread_mutex_unlock(&d->mu);
	rc = sm_sa_dyn_mc_config(dyn, parts, c.subnet_timeout);
	if (rc && d->note) {
		snprintf(msg, sizeof(msg), "plane %u: SA: multicast groups of %s: %s", i, parts->file,
			 rc == -ENOSPC ? "more than the SA holds" : strerror(-rc));
		d->note(d->note_arg, msg);
	}
	d->mc_seen[i] = d->mc_fresh[i] ? dyn->mc_gen : 0;
	mc_sync(d, i);
}

void dmn_mc_reconfig(struct smd_dmn *d, const struct smd_conf *conf)
{
	const struct sm_partitions *parts = partitions(d, conf);
	struct sm_cfg c;
	char msg[400];

	sm_cfg_default(&c);
	for (unsigned i = 0; i < d->n; i++) {
		size_t made = 0, deleted = 0;
		int rc;

		if (!d->sa[i])
			continue;   /* an SA made later starts from the newest config (dmn_mc_sa_opened) */
		rc = sm_sa_dyn_mc_reconfig(sm_sa_dyn(d->sa[i]), parts, c.subnet_timeout, &made, &deleted);
		if (d->note && (rc || made || deleted)) {
			if (rc)
				snprintf(msg, sizeof(msg), "plane %u: SA: multicast groups of %s: %s", i, parts->file,
					 rc == -ENOSPC ? "more than the SA holds" : strerror(-rc));
			else
				snprintf(msg, sizeof(msg), "plane %u: SA: partitions reloaded: %zu broadcast/mgid groups made, "
					 "%zu deleted", i, made, deleted);
			d->note(d->note_arg, msg);
		}
		mc_sync(d, i);   /* trap 67 of the groups deleted, the new set to program */
	}
}

void dmn_mc_published(struct smd_dmn *d, unsigned i)
{
	const struct sm_snapshot *s = d->cap[i];

	if (!d->sa[i] || !s)
		return;
	d->mc_sm_lid[i] = s->sm_lid;
	if (s->up)   /* a failed sweep may not have seen every port */
		sm_sa_mc_prune_snap(sm_sa_dyn(d->sa[i]), s);
	mc_sync(d, i);
}

void dmn_mc_status(struct smd_dmn *d, unsigned i, struct smd_dmn_sa *s)
{
	for (size_t g = 0; d->mcast[i] && g < d->mcast[i]->n_groups; g++) {
		s->mc_groups++;
		s->mc_members += d->mcast[i]->groups[g].n_members;
	}
}

int dmn_mc_start(struct smd_dmn *d, const struct smd_conf *conf, char *err, size_t errlen)
{
	struct sm_cfg c;
	int rc;

	sm_cfg_default(&c);
	if ((rc = sm_partitions_default(&d->parts))) {
		snprintf(err, errlen, "partitions: %s", strerror(-rc));
		return rc;
	}
	for (unsigned i = 0; i < d->n; i++) {
		if ((rc = sm_sa_mc_start_set(partitions(d, conf), c.subnet_timeout, i, &d->mcast[i]))) {
			snprintf(err, errlen, "multicast groups of %s: %s", partitions(d, conf)->file, strerror(-rc));
			return rc;
		}
		d->mc_fresh[i] = 1;
	}
	return 0;
}

void dmn_mc_cycle_begin(struct smd_dmn *d)
{
	for (unsigned i = 0; i < d->n; i++) {
		pthread_mutex_lock(&d->mu);
		struct sm_mc_set *s = sm_mc_set_ref(d->mcast[i]);
		pthread_mutex_unlock(&d->mu);
		d->planes[i].mcast = s;
		d->planes[i].mft_due = s && s->gen != d->mc_ran_gen[i];
	}
}

void dmn_mc_cycle_end(struct smd_dmn *d)
{
	for (unsigned i = 0; i < d->n; i++) {
		struct sm_mc_set *s = d->planes[i].mcast;

		const struct sm_mp_plane *p = &d->planes[i];
		if (s && !p->skip && !p->rc && (p->heavy || (p->mft_ran && !p->mft_rc)))
			d->mc_ran_gen[i] = s->gen;
		d->planes[i].mcast = NULL;
		sm_mc_set_unref(s);
	}
}

void dmn_mc_free(struct smd_dmn *d)
{
	for (unsigned i = 0; i < SM_MAX_PLANES; i++) {
		sm_mc_set_unref(d->mcast[i]);
		d->mcast[i] = NULL;
	}
	sm_partitions_free(d->parts);
	d->parts = NULL;
}
