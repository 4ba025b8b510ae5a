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
 * the SM itself is unaffected. Multicast: mcast.c.
 */
#include "daemon/daemon_priv.h"
#include "daemon/ha.h"
#include "lib/loop.h"
#include "sm/election.h"
#include "sa/sa_mad.h"
#include "sa/server.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	struct sm_elect_peer peers[SM_SA_MAX_PEERS];
	struct dmn_ha_role role;
	struct sm_cfg c;

	sm_cfg_default(&c);
	memset(self, 0, sizeof(*self));
	self->port_guid = d->planes[i].t ? d->planes[i].t->info.port_guid : 0;
	self->sm_key = d->keys.sm_key;
	self->act_count = (uint32_t)sweeps;
	self->state = sweeps && !d->planes[i].rc ? 3 : 1;   /* SMInfo: master once the plane came up, else discovering */
	self->subnet_timeout = c.subnet_timeout;
	/* an elected plane: the election's state and our priority, and the other SMs it knows */
	dmn_ha_role(d, i, &role);
	if (!role.elected)
		return;
	self->state = role.state;
	self->priority = role.priority;
	unsigned n = dmn_ha_peers(d, i, peers, SM_SA_MAX_PEERS);
	for (unsigned k = 0; k < n; k++)
		self->peers[k] = (struct sm_sa_peer){ .port_guid = peers[k].guid, .sm_key = peers[k].sm_key,
						      .act_count = peers[k].act_count, .lid = peers[k].lid,
						      .priority = peers[k].priority, .state = peers[k].state };
	self->n_peers = (uint8_t)n;
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
		dmn_mc_sa_cfg(d, i, &cfg);
		rc = sm_sa_new(&cfg, g, d->loop, &sa, err, sizeof(err));   /* takes g, also on failure */
	}
	if (!rc)
		dmn_mc_sa_opened(d, i, sa);
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
	uint64_t sweeps = d->st.cycles;
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
		dmn_mc_published(d, i);
	}
}

void dmn_sa_trap(void *arg, unsigned plane, const struct sm_smp *smp, uint16_t slid)
{
	struct smd_dmn *d = arg;
	unsigned num;

	(void)slid;
	/* a link state change: the SA forwards it to hosts that subscribed (InformInfo, trap 128) */
	if (plane < SM_MAX_PLANES && d->sa[plane] && sm_trap_wants_sweep(smp, &num) && num == 128)
		sm_sa_notice(d->sa[plane], smp->data);
}

void dmn_sa_self_changed(struct smd_dmn *d, unsigned plane)
{
	struct sm_sa_self self;

	if (plane >= SM_MAX_PLANES || plane >= d->n || !d->sa[plane])
		return;
	pthread_mutex_lock(&d->mu);
	uint64_t sweeps = d->st.cycles;
	pthread_mutex_unlock(&d->mu);
	sa_self(d, plane, sweeps, &self);
	sm_sa_set_self(d->sa[plane], &self);
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
		dmn_mc_status(d, i, s);
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
