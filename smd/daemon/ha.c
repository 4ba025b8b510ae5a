/* SPDX-License-Identifier: MIT */
/*
 * DOC: master/standby roles of the daemon's planes (see ha.h)
 *
 * One election (sm/election.h) per plane whose transport is a real or
 * simulated port (umad, ibsim); mock planes are always master. Owned by
 * the loop's thread; a MAD is sent only on a port the worker does not
 * own (no cycle running, or a standby plane the cycle left out).
 *
 * Discovery (IBA 14.4): before the first cycle the plane's port is
 * opened and a thread of its own runs sm_discover_sms() on it (sm.h: a
 * read-only sweep, then SMInfo by directed route from every IsSM port);
 * meanwhile the loop leaves the port alone (no MAD watch, nothing sent)
 * and no cycle runs on the plane (it is not master). The SMs found go to
 * the election, which decides MASTER or STANDBY before smd writes
 * anything. A standby whose master has no LID yet (both started on a
 * fresh fabric) discovers again instead of polling LID 0; so does a
 * plane a master sent DISCOVER. Standby: the plane is left out of the cycles (schedule()
 * asks dmn_ha_plane_may_cycle and sets sm_mp_plane.skip), its port stays
 * the loop's, and the master is polled on a loop timer (sm_elect_tick);
 * when every plane stands by, no cycle runs at all. A plane that stood by
 * is adopted (d->adopted): taking it over keeps the LIDs its master set. Takeover: a heavy
 * cycle, which keeps the LIDs it reads and writes only what differs.
 * Master: an SM that polls us by LID, sends trap 144, holds an IsSM port
 * the last heavy sweep saw, or is the SM LID the light sweep found on our
 * ports (another master programming them), is asked for its SMInfo (at
 * most once per SM_HA_PROBE_GAP_US per LID); a better one gets a
 * HANDOVER, and once it acknowledges we stand by (as OpenSM does: a master
 * that finds a better SM hands over; one that gets a HANDOVER as master
 * stays master and sweeps). Until then the plane runs no cycle
 * (sm_elect_programs); the HANDOVER is sent again on the election's timer.
 *
 * Our requests carry TIDs prefix | seq in their low 32 bits (the kernel
 * owns the high 32 bits under umad); answers are matched on them. Any
 * answer to any of our polls or HANDOVERs counts, however late: a late
 * poll answer shows a slow master alive, a late acknowledgement still
 * makes us stand by.
 */
#include "daemon/ha.h"
#include "daemon/daemon_priv.h"
#include "lib/clock.h"
#include "lib/loop.h"
#include "mock/open.h"
#include "mad/codec.h"
#include "mad/transport.h"
#include "sm/election.h"
#include "sm/sminfo.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SM_HA_PROBE_GAP_US 2000000u
#define SM_HA_TID 0x5e1f0000u         /* polls, acknowledge */
#define SM_HA_TID_PROBE 0x5e1e0000u   /* "who are you": discovery, trap 144, IsSM ports */
#define SM_HA_TID_HO 0x5e1d0000u      /* HANDOVER */
#define SM_HA_TID_MASK 0xFFFF0000u

struct ha_plane {
	struct smd_dmn *d;
	unsigned i;
	bool on;
	struct sm_elect el;
	struct sm_loop_src *timer;
	uint32_t poll_tid, ho_tid;
	uint16_t probe_lid;
	uint64_t probe_us;
	/* a trap 144 may come before its SM answers SMInfo: asked again a few times */
	uint16_t reprobe_lid;
	unsigned reprobe_left;
	uint64_t reprobe_us;
	/* the other SMs whose SMInfo we read (their last answer), for the SA's SMInfoRecord */
	struct sm_elect_peer peers[DMN_HA_MAX_PEERS];
	unsigned n_peers;
	/* discovery (sm_discover_sms) on a thread of its own; the port is its until the loop joins it */
	pthread_t disc_th;
	bool disc_running;
	atomic_int disc_done;
	struct sm_keys disc_keys;    /* a copy: a reload may change d->keys meanwhile */
	struct sm_nbr disc_nbr;      /* ... and a cycle d->nbr */
	struct sm_elect_peer found[DMN_HA_MAX_PEERS];
	unsigned n_found;
	struct sm_discovery disc;
	int disc_rc;
	char disc_err[256];
};

struct dmn_ha {
	struct ha_plane p[SM_MAX_PLANES];
	uint32_t seq;
	struct sm_txn_cfg txn;       /* the config's MAD settings, for discovery */
};

static void ha_note(struct ha_plane *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void ha_note(struct ha_plane *h, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!h->d->note)
		return;
	int n = snprintf(msg, sizeof(msg), "plane %u: election: ", h->i);
	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
	va_end(ap);
	h->d->note(h->d->note_arg, msg);
}

static struct sm_transport *ha_t(struct ha_plane *h)
{
	return h->d->planes[h->i].t;
}

static void self_of(struct ha_plane *h, uint64_t sweeps, struct sm_sminfo_self *s)
{
	memset(s, 0, sizeof(*s));
	s->guid = h->el.cfg.guid;
	s->sm_key = h->d->keys.sm_key;
	s->act_count = (uint32_t)sweeps;
	s->priority = h->el.cfg.priority;
	s->state = h->el.state;
	s->mkey_auth = 1;   /* as OpenSM: the key to an asker our M_Key authenticates (sm/sminfo.h) */
	/* derived keys: our own port's key, which a peer SM with the same secret sends us */
	s->mkey = sm_keys_send(&h->d->keys, s->guid, 0);
}

/* Send an SMInfo request to lid; returns its TID's low 32 bits (0: not sent). */
static uint32_t ha_send_tid(struct ha_plane *h, uint32_t prefix, uint8_t method, uint32_t mod, uint16_t lid,
			    uint8_t state)
{
	struct sm_transport *t = ha_t(h);
	struct sm_sminfo_self self;
	struct sm_smp req;
	uint8_t out[SM_MAD_SIZE];
	int busy;

	pthread_mutex_lock(&h->d->mu);
	busy = h->d->in_worker && !h->d->planes[h->i].skip;   /* a plane the cycle left out is ours */
	uint64_t sweeps = h->d->st.cycles;
	pthread_mutex_unlock(&h->d->mu);
	if (busy || !t || !lid || h->disc_running)
		return 0;
	struct dmn_ha *ha = h->d->ha;
	uint32_t tid = prefix | (++ha->seq & 0xFFFFu);
	self_of(h, sweeps, &self);
	self.state = state;
	sm_sminfo_request(&req, method, mod, &self, tid);
	if (sm_smp_encode(&req, out) || sm_transport_send(t, out, SM_MAD_SIZE, lid, 200))
		return 0;
	return tid;
}

static uint32_t ha_send(struct ha_plane *h, uint8_t method, uint32_t mod, uint16_t lid, uint8_t state)
{
	return ha_send_tid(h, SM_HA_TID, method, mod, lid, state);
}

static void start_discovery(struct ha_plane *h);
static void refused(struct ha_plane *h, int rc);

static void arm(struct ha_plane *h)
{
	uint64_t next = 0;

	if (h->el.state != SM_SMSTATE_DISCOVERING)   /* discovering: the discovery thread ends it */
		next = sm_elect_next(&h->el);
	if (h->reprobe_left && (!next || h->reprobe_us < next))
		next = h->reprobe_us;
	sm_loop_timer_set(h->timer, next);
}

/* The role as status shows it (d->st, under mu). */
static void publish(struct ha_plane *h)
{
	struct dmn_ha_role r;

	dmn_ha_role(h->d, h->i, &r);
	pthread_mutex_lock(&h->d->mu);
	struct smd_dmn_plane *sp = &h->d->st.planes[h->i];
	sp->role.elected = r.elected;
	sp->role.state = r.state;
	sp->role.priority = r.priority;
	sp->role.master_priority = r.master_priority;
	sp->role.master_lid = r.master_lid;
	sp->role.master_guid = r.master_guid;
	if (r.guid)
		sp->role.guid = r.guid;
	sp->role.lid = r.lid;
	sp->role.takeovers = h->el.takeovers;
	sp->role.handovers = h->el.handovers;
	sp->role.refused = h->el.refused_key + h->el.refused_guid + h->el.refused_illegal;
	sp->role.damped = h->el.damped;
	pthread_mutex_unlock(&h->d->mu);
	dmn_sa_self_changed(h->d, h->i);
}

/* A peer SM answered SMInfo (with our SM_Key, or none): remembered, the oldest making room. */
static void remember(struct ha_plane *h, const struct sm_elect_peer *p)
{
	unsigned k = 0;

	if (!p->guid || p->guid == h->el.cfg.guid)
		return;
	while (k < h->n_peers && h->peers[k].guid != p->guid)
		k++;
	if (k == DMN_HA_MAX_PEERS) {
		memmove(h->peers, h->peers + 1, sizeof(h->peers) - sizeof(h->peers[0]));
		k--;
	} else if (k == h->n_peers) {
		h->n_peers++;
	}
	h->peers[k] = *p;
	dmn_sa_self_changed(h->d, h->i);
}

/* Do what the election said. */
static void apply(struct ha_plane *h, int act)
{
	struct smd_dmn *d = h->d;

	switch (act) {
	case SM_EL_POLL:
		if (!h->el.master.lid) {
			/* found before it had a LID (a fresh fabric): look again, it may be master by now */
			sm_elect_rediscover(&h->el);
			break;
		}
		h->poll_tid = ha_send(h, SM_METHOD_GET, 0, h->el.master.lid, h->el.state);
		break;
	case SM_EL_HANDOVER:
		/* not sent (the port busy): the election's timer sends it again */
		ha_note(h, "%s", h->el.why);
		h->ho_tid = ha_send_tid(h, SM_HA_TID_HO, SM_METHOD_SET, SM_SMINFO_HANDOVER, h->el.handover.lid,
					SM_SMSTATE_MASTER);
		break;
	case SM_EL_RESUME:
		ha_note(h, "%s", h->el.why);
		h->ho_tid = 0;
		(void)smd_dmn_request_sweep_kind(d, SMD_SWEEP_HEAVY);
		break;
	case SM_EL_ACK:
		/* the old master stands by once it has our answer; ACKNOWLEDGE as the standby we were */
		(void)ha_send(h, SM_METHOD_SET, SM_SMINFO_ACKNOWLEDGE, h->el.ack_lid, SM_SMSTATE_STANDBY);
		/* fall through */
	case SM_EL_TAKEOVER:
		ha_note(h, "%s", h->el.why);
		pthread_mutex_lock(&d->mu);
		bool adopted = d->adopted[h->i] && d->n > 1;
		pthread_mutex_unlock(&d->mu);
		if (adopted)
			ha_note(h, "keeping the LIDs the previous master assigned (not aligned with the other planes)");
		(void)smd_dmn_request_sweep_kind(d, SMD_SWEEP_HEAVY);
		break;
	case SM_EL_STANDBY:
		ha_note(h, "%s", h->el.why);
		pthread_mutex_lock(&d->mu);
		d->adopted[h->i] = true;   /* another SM masters it: taking it back keeps its LIDs */
		if (!dmn_ha_may_cycle(d))
			d->next_due_us = d->trap_due_us = 0;   /* a standby programs nothing */
		pthread_mutex_unlock(&d->mu);
		break;
	default:
		break;
	}
	if (h->el.state == SM_SMSTATE_DISCOVERING && !h->disc_running)
		start_discovery(h);   /* DISCOVER from a master, or a master without a LID */
	arm(h);
	publish(h);
}

static void end_discovery(struct ha_plane *h)
{
	apply(h, sm_elect_discovered(&h->el, sm_mono_us()));
}

static void *disc_main(void *arg)
{
	struct ha_plane *h = arg;
	struct smd_dmn *d = h->d;
	struct sm_cfg cfg;

	sm_cfg_default(&cfg);
	cfg.plane = d->planes[h->i].index;
	cfg.txn = d->ha->txn;
	cfg.txn.stop = &d->stopping;
	cfg.keys = sm_keys_active(&h->disc_keys) || h->disc_keys.sm_key ? &h->disc_keys : NULL;
	cfg.neighbours = &h->disc_nbr;
	cfg.sminfo_state = SM_SMSTATE_DISCOVERING;
	cfg.sminfo_priority = h->el.cfg.priority;
	h->disc_err[0] = '\0';
	h->disc_rc = sm_discover_sms(d->planes[h->i].t, &cfg, h->found, DMN_HA_MAX_PEERS, &h->n_found, &h->disc,
				     h->disc_err, sizeof(h->disc_err));
	atomic_store(&h->disc_done, 1);
	(void)!write(d->wake[1], "h", 1);   /* the loop joins us (dmn_ha_wake) */
	return NULL;
}

/* Sweep read-only for other SMs (loop thread; the plane is not master, so no cycle takes its port). */
static void start_discovery(struct ha_plane *h)
{
	struct smd_dmn *d = h->d;

	h->poll_tid = h->ho_tid = 0;
	sm_loop_remove(d->src_mad[h->i]);   /* the port is the discovery's until it ends */
	d->src_mad[h->i] = NULL;
	pthread_mutex_lock(&d->mu);
	h->disc_keys = d->keys;
	if (sm_nbr_copy(&h->disc_nbr, &d->nbr))
		memset(&h->disc_nbr, 0, sizeof(h->disc_nbr));   /* out of memory: without it */
	pthread_mutex_unlock(&d->mu);
	atomic_store(&h->disc_done, 0);
	h->disc_running = true;
	if (pthread_create(&h->disc_th, NULL, disc_main, h)) {
		h->disc_running = false;
		ha_note(h, "cannot start the discovery thread: deciding without it");
		end_discovery(h);
	}
}

bool dmn_ha_port_busy(const struct smd_dmn *d, unsigned plane)
{
	return d->ha && plane < SM_MAX_PLANES && d->ha->p[plane].disc_running;
}

bool dmn_ha_wake(struct smd_dmn *d)
{
	bool any = false;

	for (unsigned i = 0; d->ha && i < d->n; i++) {
		struct ha_plane *h = &d->ha->p[i];
		if (!h->disc_running || !atomic_load(&h->disc_done))
			continue;
		pthread_join(h->disc_th, NULL);
		h->disc_running = false;
		sm_nbr_free(&h->disc_nbr);
		any = true;
		const struct sm_discovery *ds = &h->disc;
		if (h->disc_rc)
			ha_note(h, "discovery failed: %s; deciding on what it found", h->disc_err);
		ha_note(h, "discovery: %u nodes, %u other SM port%s, %u answered; %" PRIu64 " SMPs, %" PRIu64
			" Sets, %.3f s", ds->nodes, ds->issm_ports, ds->issm_ports == 1 ? "" : "s", ds->answered,
			ds->smps, ds->sets, ds->seconds);
		uint64_t now = sm_mono_us();
		for (unsigned k = 0; k < h->n_found; k++) {
			int act = sm_elect_peer_seen(&h->el, &h->found[k], now);
			if (act >= 0)
				remember(h, &h->found[k]);
			refused(h, act);
		}
		if (h->el.state == SM_SMSTATE_DISCOVERING)
			end_discovery(h);
		else
			publish(h);
	}
	return any;
}

static void on_timer(struct sm_loop_src *s, void *arg)
{
	struct ha_plane *h = arg;
	uint64_t now = sm_mono_us();

	(void)s;
	if (h->reprobe_left && now >= h->reprobe_us) {
		h->reprobe_left--;
		h->reprobe_us = now + 500000u;
		if (h->el.state == SM_SMSTATE_MASTER)
			(void)ha_send_tid(h, SM_HA_TID_PROBE, SM_METHOD_GET, 0, h->reprobe_lid, h->el.state);
	}
	if (h->el.state == SM_SMSTATE_DISCOVERING) {
		arm(h);
		return;
	}
	apply(h, sm_elect_tick(&h->el, now, NULL));
}

/* Ask lid for its SMInfo (discovery, or a master learning of another SM). */
static void probe(struct ha_plane *h, uint16_t lid)
{
	uint64_t now = sm_mono_us();

	if (!lid || (lid == h->probe_lid && now - h->probe_us < SM_HA_PROBE_GAP_US))
		return;
	h->probe_lid = lid;
	h->probe_us = now;
	(void)ha_send_tid(h, SM_HA_TID_PROBE, SM_METHOD_GET, 0, lid, h->el.state);
}

static void refused(struct ha_plane *h, int rc)
{
	if (rc < 0) {
		ha_note(h, "refused: %s", h->el.why);
		publish(h);
	}
}

/* An SMInfo answer to one of our requests. */
static void answer(struct ha_plane *h, const struct sm_smp *smp, const struct sm_mad_addr *from)
{
	uint32_t tid = (uint32_t)smp->tid;
	struct sm_sm_info si;
	struct sm_elect_peer p;
	uint64_t now = sm_mono_us();
	int dec = !sm_sm_info_decode(smp->data, &si, NULL), ok = dec && !smp->status;
	int act;

	if (ok) {
		memset(&p, 0, sizeof(p));
		p.guid = si.guid;
		p.sm_key = si.sm_key;
		p.act_count = si.act_count;
		p.priority = si.priority;
		p.state = si.state;
		p.lid = from->slid;
	}
	if ((tid & SM_HA_TID_MASK) == SM_HA_TID) {
		if (ok && !p.lid)
			p.lid = h->el.master.lid;
		uint8_t before = h->el.state;
		if (tid == h->poll_tid) {
			h->poll_tid = 0;
			act = sm_elect_poll_result(&h->el, ok ? &p : NULL, smp->status, now);
		} else {
			act = sm_elect_poll_late(&h->el, ok ? &p : NULL, smp->status, now);   /* slow, not dead */
		}
		if (ok && act >= 0)
			remember(h, &p);
		if (act == SM_EL_NONE && h->el.state == before && ok && h->el.misses)
			refused(h, -1);
		apply(h, act);
	} else if ((tid & SM_HA_TID_MASK) == SM_HA_TID_HO) {
		/* this HANDOVER's answer or an earlier one's: an acknowledgement whenever it comes */
		act = sm_elect_handover_result(&h->el, dec ? si.guid : h->el.handover.guid, smp->status, now);
		if (act == SM_EL_NONE && tid == h->ho_tid && h->el.handover.guid)
			ha_note(h, "%s", h->el.why);
		if (tid == h->ho_tid)
			h->ho_tid = 0;
		apply(h, act);
	} else if ((tid & SM_HA_TID_MASK) == SM_HA_TID_PROBE) {
		if (!ok) {
			if (h->el.state == SM_SMSTATE_DISCOVERING && !h->disc_running)
				end_discovery(h);
			return;
		}
		if (!p.lid)
			p.lid = h->probe_lid;
		if (p.lid == h->reprobe_lid)
			h->reprobe_left = 0;   /* it answers now */
		act = sm_elect_peer_seen(&h->el, &p, now);
		if (act >= 0)
			remember(h, &p);
		refused(h, act);
		if (h->el.split) {
			ha_note(h, "%s", h->el.why);
			h->el.split = false;
		}
		if (h->el.state == SM_SMSTATE_DISCOVERING && !h->disc_running)
			end_discovery(h);
		else if (act > 0)
			apply(h, act);
	}
}

int dmn_ha_mad(struct smd_dmn *d, unsigned plane, const struct sm_smp *smp, const struct sm_mad_addr *from,
	       uint64_t sweeps)
{
	struct ha_plane *h;
	struct sm_transport *t;
	struct sm_sminfo_self self;
	struct sm_smp rep;
	uint8_t out[SM_MAD_SIZE];
	int act;

	if (plane >= SM_MAX_PLANES)
		return 0;
	h = d->ha ? &d->ha->p[plane] : NULL;
	t = d->planes[plane].t;
	if (!h || !h->on) {
		/* not elected: master once a cycle has brought the plane up (as before issue 15) */
		memset(&self, 0, sizeof(self));
		self.guid = t->info.port_guid;
		self.sm_key = d->keys.sm_key;
		self.act_count = (uint32_t)sweeps;
		self.state = sweeps && !d->planes[plane].rc ? SM_SMSTATE_MASTER : SM_SMSTATE_DISCOVERING;
		if (sm_sminfo_answer(smp, &self, &rep) != 1)
			return 0;
		if (!sm_smp_encode(&rep, out))
			(void)sm_transport_send(t, out, SM_MAD_SIZE, smp->mgmt_class == SM_CLASS_SMI_DR ?
						SM_PERMISSIVE_LID : from->slid, 0);
		return 1;
	}
	if (smp->attr_id == SM_ATTR_SM_INFO && smp->method == SM_METHOD_GET_RESP &&
	    (((uint32_t)smp->tid & SM_HA_TID_MASK) == SM_HA_TID ||
	     ((uint32_t)smp->tid & SM_HA_TID_MASK) == SM_HA_TID_HO ||
	     ((uint32_t)smp->tid & SM_HA_TID_MASK) == SM_HA_TID_PROBE)) {
		answer(h, smp, from);
		return 1;
	}
	if (smp->method == SM_METHOD_TRAP) {
		/* trap 144 (an SM's priority or capability changed): who is it? */
		if (h->el.state == SM_SMSTATE_MASTER && from->slid) {
			probe(h, from->slid);
			h->reprobe_lid = from->slid;
			h->reprobe_left = 4;
			h->reprobe_us = sm_mono_us() + 500000u;
			arm(h);
		}
		return 0;   /* the caller represses it */
	}
	self_of(h, sweeps, &self);
	uint16_t slid = smp->mgmt_class == SM_CLASS_SMI_DR ? 0 : from->slid;
	if (sm_sminfo_handle(smp, &self, &h->el, slid, sm_mono_us(), &rep, &act) != 1)
		return 0;
	if (!sm_smp_encode(&rep, out))
		(void)sm_transport_send(t, out, SM_MAD_SIZE, smp->mgmt_class == SM_CLASS_SMI_DR ?
					SM_PERMISSIVE_LID : from->slid, 0);
	if (smp->method == SM_METHOD_SET) {
		if (act < 0)
			refused(h, act);
		else
			apply(h, act);
	} else if (h->el.state == SM_SMSTATE_MASTER && slid) {
		probe(h, slid);   /* an SM polling us: is it better than us? */
	}
	return 1;
}

int dmn_ha_new(struct smd_dmn *d, const struct smd_conf *conf)
{
	struct dmn_ha *ha = calloc(1, sizeof(*ha));
	int rc;

	if (!ha)
		return -ENOMEM;
	d->ha = ha;
	sm_txn_cfg_default(&ha->txn);
	if (conf->mad.window)
		ha->txn.window = conf->mad.window;
	if (conf->mad.per_switch_window)
		ha->txn.per_dest = conf->mad.per_switch_window;
	if (conf->mad.timeout_ms)
		ha->txn.timeout_ms = conf->mad.timeout_ms;
	ha->txn.retries = conf->mad.retries;
	for (unsigned i = 0; i < d->n; i++) {
		struct ha_plane *h = &ha->p[i];
		struct sm_mp_plane *p = &d->planes[i];
		char err[256];

		h->d = d;
		h->i = i;
		if (strncmp(p->name, "umad", 4) && strncmp(p->name, "ibsim", 5))
			continue;   /* mock and test backends: always master */
		if (!p->t && !sm_transport_open_spec(p->name, sm_backends, &d->ports[i], err, sizeof(err)))
			p->t = d->ports[i].t;
		if (!p->t)
			continue;   /* the cycle reports why; the plane is not elected */
		(void)sm_transport_refresh(p->t);
		if ((rc = sm_loop_timer_add(d->loop, on_timer, h, &h->timer)))
			return rc;
		struct sm_elect_cfg ec = {
			.guid = p->t->info.port_guid, .sm_key = d->keys.sm_key,
			.priority = (uint8_t)conf->sm_priority, .poll_ms = conf->sm_poll_interval_ms,
			/* the floor for silence (a dead master under ibsim answers an error at once) */
			.poll_timeout_ms = conf->sm_poll_interval_ms < 300 ? conf->sm_poll_interval_ms : 300,
			.retries = conf->sm_poll_retries,
		};
		sm_elect_init(&h->el, &ec);
		h->on = true;
		start_discovery(h);
	}
	return 0;
}

void dmn_ha_cycle_done(struct smd_dmn *d)
{
	if (!d->ha)
		return;
	for (unsigned i = 0; i < d->n; i++) {
		struct ha_plane *h = &d->ha->p[i];
		const struct sm_snapshot *snap = d->cap[i];
		unsigned n = 0;

		if (h->on)
			publish(h);   /* our LID may be new */
		if (!h->on || h->el.state != SM_SMSTATE_MASTER)
			continue;
		/* another SM's LID on our ports (the light sweep): a master programming them too? */
		const struct sm_mp_plane *mp = &d->planes[i];
		if (mp->light_ran && mp->light.foreign_sm_lid) {
			if (mp->light.foreign_master)
				ha_note(h, "a better master holds our ports (%s): asking it for SMInfo", mp->light.why);
			probe(h, mp->light.foreign_sm_lid);
		}
		if (!snap)
			continue;
		/* other SMs' ports the sweep saw (IsSM): are they better than us? at most 16 a cycle */
		for (uint32_t k = 0; k < snap->fabric->n_ports && n < 16; k++) {
			const struct sm_port *pt = &snap->fabric->ports[k];
			if (!(pt->flags & SM_PORT_F_ISSM) || !pt->lid || pt->guid == h->el.cfg.guid ||
			    snap->fabric->nodes[pt->node].type == SM_NODE_SWITCH)
				continue;
			(void)ha_send_tid(h, SM_HA_TID_PROBE, SM_METHOD_GET, 0, pt->lid, h->el.state);
			n++;
		}
	}
}

void dmn_ha_free(struct smd_dmn *d)
{
	if (!d->ha)
		return;
	for (unsigned i = 0; i < SM_MAX_PLANES; i++) {
		if (d->ha->p[i].disc_running) {
			pthread_join(d->ha->p[i].disc_th, NULL);   /* d->stopping ends its transactions */
			sm_nbr_free(&d->ha->p[i].disc_nbr);
		}
		sm_loop_remove(d->ha->p[i].timer);
	}
	free(d->ha);
	d->ha = NULL;
}

bool dmn_ha_plane_may_cycle(const struct smd_dmn *d, unsigned plane)
{
	return !d->ha || plane >= SM_MAX_PLANES || !d->ha->p[plane].on ||
	       sm_elect_programs(&d->ha->p[plane].el);   /* not while our HANDOVER waits for its answer */
}

bool dmn_ha_may_cycle(const struct smd_dmn *d)
{
	for (unsigned i = 0; i < d->n; i++)
		if (dmn_ha_plane_may_cycle(d, i))
			return true;
	return false;
}

unsigned dmn_ha_peers(const struct smd_dmn *d, unsigned plane, struct sm_elect_peer *out, unsigned max)
{
	const struct ha_plane *h = d->ha && plane < SM_MAX_PLANES ? &d->ha->p[plane] : NULL;
	unsigned n = h && h->on ? h->n_peers : 0;

	n = n < max ? n : max;
	if (n)
		memcpy(out, h->peers, n * sizeof(*out));
	return n;
}

void dmn_ha_role(const struct smd_dmn *d, unsigned plane, struct dmn_ha_role *r)
{
	const struct ha_plane *h = d->ha && plane < SM_MAX_PLANES ? &d->ha->p[plane] : NULL;

	memset(r, 0, sizeof(*r));
	r->state = SM_SMSTATE_MASTER;
	if (!h || !h->on)
		return;
	r->elected = true;
	r->state = h->el.state;
	r->priority = h->el.cfg.priority;
	r->master_guid = h->el.state == SM_SMSTATE_MASTER ? h->el.cfg.guid : h->el.master.guid;
	/* our LID: as the last cycle assigned it (the port had none before), else the port's */
	const struct sm_snapshot *snap = h->d->cap[h->i];
	const struct sm_transport *t = h->d->planes[h->i].t;   /* NULL after a failed cycle */
	uint16_t own = snap && snap->sm_lid ? snap->sm_lid : t ? t->info.lid : 0;
	r->master_lid = h->el.state == SM_SMSTATE_MASTER ? own : h->el.master.lid;
	r->guid = h->el.cfg.guid;
	r->lid = own;
	r->master_priority = h->el.state == SM_SMSTATE_MASTER ? h->el.cfg.priority : h->el.master.priority;
}
