/* SPDX-License-Identifier: MIT */
/*
 * DOC: the daemon's SAs (one per plane, smd/sa/server.h)
 *
 * A plane's SA is made on the loop's thread at the end of the first cycle
 * that opened the plane's transport (the worker opens transports), on a
 * GSI endpoint for class 0x03 opened on that transport (mad/gsi.h), and
 * watches its fd on the daemon's loop; from then on it answers on its own,
 * whatever the worker does. At the end of every cycle the plane's
 * snapshot (d->cap[i], the one the views and health are made from) is
 * published to it, with the SM's state and act count; a plane whose cycle
 * failed keeps answering from its last good snapshot. A failed plane's
 * port is closed by the loop here, after its SA (the endpoint must not
 * outlive its transport), instead of by the worker. d->sa[] changes only on
 * the loop's thread while the worker is idle, under d->mu, so a status
 * reader can take the counters (sm_sa_stats, any thread) under d->mu.
 * A transport without GSI endpoints (-EOPNOTSUPP) or an SA that cannot be
 * made leaves the plane without an SA (the reason in status, one note);
 * the SM itself is unaffected.
 *
 * Multicast (issue 14): every plane starts with the groups of the
 * partitions (the IPoIB broadcast groups: sm_sa_mc_start_set, the same an
 * SA configured with them holds), so the first bring-up programs them,
 * also before the plane has an SA. Each change of an SA's groups hands a
 * new set to mc_changed() here (loop thread): it becomes the plane's
 * newest set (d->mcast, under d->mu) and asks for a cycle after the trap
 * hold-off, so a burst of joins shares it ("multicast":
 * light, with that plane forced heavy by dmn_mc_cycle_begin, so its MFTs
 * are programmed within one cycle of the join).
 */
#include "daemon/daemon_priv.h"
#include "lib/clock.h"
#include "lib/loop.h"
#include "sa/sa_mad.h"
#include "sa/server.h"
#include "sa/dyn.h"
#include "model/partitions.h"
#include "sm/mcast.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Not a sweep, so its own note (no plane prefix from plane_note: added here). */
static void sa_note(struct smd_dmn *d, unsigned i, const char *what)
{
	char buf[256];

	if (!d->note)
		return;
	snprintf(buf, sizeof(buf), "plane %u: SA: %s", i, what);
	d->note(d->note_arg, buf);
}

static void sa_self(struct smd_dmn *d, unsigned i, uint64_t sweeps, struct sm_sa_self *self)
{
	struct sm_cfg c;

	sm_cfg_default(&c);
	memset(self, 0, sizeof(*self));
	self->port_guid = d->planes[i].t ? d->planes[i].t->info.port_guid : 0;
	self->sm_key = d->keys.sm_key;
	self->act_count = (uint32_t)sweeps;
	self->state = sweeps && !d->planes[i].rc ? 3 : 1;   /* SMInfo: master once the plane came up, else discovering */
	self->subnet_timeout = c.subnet_timeout;
}

/* An SA's groups changed (loop thread): the plane's newest set, and a cycle to program it. */
static void mc_changed(void *arg, struct sm_mc_set *set)
{
	struct dmn_note *nc = arg;
	struct smd_dmn *d = nc->d;
	struct sm_mc_set *old;

	pthread_mutex_lock(&d->mu);
	old = d->mcast[nc->plane];
	d->mcast[nc->plane] = set;
	/* the joins of a burst (IPoIB at boot) share one cycle */
	if (!d->mc_due_us)
		d->mc_due_us = sm_mono_us() + (uint64_t)d->cur->conf->trap_holdoff_ms * 1000u;
	pthread_mutex_unlock(&d->mu);
	sm_mc_set_unref(old);
	(void)!write(d->wake[1], "m", 1);   /* the loop arms the timer (daemon.c on_wake, schedule) */
}

int dmn_mc_start(struct smd_dmn *d, const struct smd_conf *conf, char *err, size_t errlen)
{
	struct sm_cfg c;
	int rc;

	(void)conf;   /* the partitions file, once it is read (issue 14): the default until then */
	sm_cfg_default(&c);
	if ((rc = sm_partitions_default(&d->parts))) {
		snprintf(err, errlen, "partitions: %s", strerror(-rc));
		return rc;
	}
	for (unsigned i = 0; i < d->n; i++)
		if ((rc = sm_sa_mc_start_set(d->parts, c.subnet_timeout, i, &d->mcast[i]))) {
			snprintf(err, errlen, "multicast groups of %s: %s", d->parts->file, strerror(-rc));
			return rc;
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
		if (s && s->gen != d->mc_ran_gen[i])
			d->planes[i].force_heavy = 1;
	}
}

void dmn_mc_cycle_end(struct smd_dmn *d)
{
	for (unsigned i = 0; i < d->n; i++) {
		struct sm_mc_set *s = d->planes[i].mcast;

		if (s && !d->planes[i].skip && d->planes[i].heavy && !d->planes[i].rc)
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

static void sa_set(struct smd_dmn *d, unsigned i, struct sm_sa *sa, const char *err)
{
	pthread_mutex_lock(&d->mu);
	d->sa[i] = sa;
	snprintf(d->sa_err[i], sizeof(d->sa_err[i]), "%s", err);
	pthread_mutex_unlock(&d->mu);
}

static void sa_open(struct smd_dmn *d, unsigned i, uint64_t sweeps)
{
	struct sm_sa_cfg cfg;
	struct sm_gsi *g = NULL;
	struct sm_sa *sa = NULL;
	char err[160] = "";
	int rc;

	rc = sm_transport_gsi_open(d->planes[i].t, SM_CLASS_SA, &g, err, sizeof(err));
	if (!rc) {
		memset(&cfg, 0, sizeof(cfg));
		cfg.plane = i;
		sa_self(d, i, sweeps, &cfg.self);
		cfg.partitions = d->parts;
		cfg.mc_changed = mc_changed;
		cfg.mc_arg = &d->note_ctx[i];
		rc = sm_sa_new(&cfg, g, d->loop, &sa, err, sizeof(err));   /* takes g, also on failure */
	}
	if (rc && !err[0])
		snprintf(err, sizeof(err), "%s", strerror(-rc));
	/* one note per new reason, not one per cycle */
	if (rc && strcmp(err, d->sa_err[i]))
		sa_note(d, i, err);
	else if (!rc)
		sa_note(d, i, "answering (class 0x03)");
	sa_set(d, i, rc ? NULL : sa, rc ? err : "");
}

static void sa_close(struct smd_dmn *d, unsigned i)
{
	struct sm_sa *sa = d->sa[i];

	sa_set(d, i, NULL, "");
	sm_sa_free(sa);
}

void dmn_sa_cycle_done(struct smd_dmn *d)
{
	pthread_mutex_lock(&d->mu);
	uint64_t sweeps = d->st.sweeps;
	int stop = d->stop;
	pthread_mutex_unlock(&d->mu);

	for (unsigned i = 0; i < d->n && !stop; i++) {
		struct sm_mp_plane *p = &d->planes[i];
		struct sm_sa_self self;

		if (p->rc && p->t && d->sa[i] && !sm_plane_port_keep_open(&d->ports[i])) {
			/* as run_cycle does for a plane without an SA: the next cycle reopens the port */
			sa_close(d, i);
			sm_plane_port_close(&d->ports[i]);
			p->t = NULL;
			continue;
		}
		if (!p->t)
			continue;
		if (!d->sa[i])
			sa_open(d, i, sweeps);
		if (!d->sa[i])
			continue;
		sa_self(d, i, sweeps, &self);
		sm_sa_set_self(d->sa[i], &self);
		if (d->cap[i])
			sm_sa_publish(d->sa[i], d->cap[i]);
	}
}

void dmn_sa_free_all(struct smd_dmn *d)
{
	for (unsigned i = 0; i < SM_MAX_PLANES; i++)
		if (d->sa[i])
			sa_close(d, i);
}

void dmn_sa_status(struct smd_dmn *d, struct smd_dmn_status *st)
{
	for (unsigned i = 0; i < d->n && i < SM_MAX_PLANES; i++) {
		struct smd_dmn_sa *s = &st->sa[i];
		memset(s, 0, sizeof(*s));
		s->open = d->sa[i] != NULL;
		snprintf(s->err, sizeof(s->err), "%s", d->sa_err[i]);
		if (d->sa[i])
			sm_sa_stats(d->sa[i], &s->stats);
		for (size_t g = 0; d->mcast[i] && g < d->mcast[i]->n_groups; g++) {
			s->mc_groups++;
			s->mc_members += d->mcast[i]->groups[g].n_members;
		}
	}
}

const char *smd_dmn_sa_attr_label(uint16_t attr_id, char *buf)
{
	if (strcmp(sm_sa_attr_name(attr_id), "Unknown"))
		return sm_sa_attr_name(attr_id);
	snprintf(buf, 8, "0x%04x", attr_id);
	return buf;
}

const char *smd_dmn_sa_status_label(uint16_t status, char *buf)
{
	if (status == SM_SA_STATUS_OK)
		return "OK";
	(void)buf;
	return sm_sa_status_name(status);
}
