/* SPDX-License-Identifier: MIT */
/*
 * DOC: the long-running SM (see daemon.h)
 *
 * Two threads and who owns what:
 *  - The loop's thread (the caller's, running cfg.loop, or whoever calls
 *    smd_dmn_drain()) decides when a cycle runs: schedule() looks at the
 *    requests, the sweep_interval timer and the trap hold-off timer. It
 *    owns the loop sources (the wake pipe, the two timers, the idle planes'
 *    MAD watches) and, between cycles, the planes: it reads the MADs that
 *    arrive on their transports (SMInfo, traps).
 *  - The worker waits on d->cv for a cycle (never on an fd), runs it and
 *    reports back: done = 1 and a byte on the wake pipe. From the moment
 *    the loop sets go (in_worker = 1, the MAD watches removed first) until
 *    the loop takes done back (in_worker = 0), the worker owns the
 *    transports, mocks, the sm_mp_plane array, the states, cap[] and cur.
 *    The loop's thread touches them only while in_worker is 0; nobody
 *    else touches them before the worker is joined.
 * d->mu guards the snapshot (d->st), the request counter, the due times,
 * the flags above (stop, go, done, in_worker, running) and the pending
 * reconfiguration. Other threads (control-socket handlers, tests) change
 * that state under mu and write a byte to the wake pipe so the loop looks
 * again. The pending reconfiguration is built outside the lock and handed
 * over by pointer, so a chain another thread uses is never freed, and a
 * reload never waits for a sweep. Stopping: d->stop under mu for the
 * worker, d->stopping (atomic) for the transaction engines of a running
 * cycle (txn.h cfg.stop), which then end within SM_TXN_STOP_POLL_MS.
 */
#include "daemon/daemon_priv.h"
#include "lib/clock.h"
#include "mad/ibsim_client.h"
#include "model/hosts.h"
#include "lib/json.h"
#include "mad/codec.h"
#include "lib/loop.h"
#include "mock/open.h"
#include "daemon/ha.h"
#include "sm/multiplane.h"
#include "sm/state.h"
#include "routing/registry.h"
#include "config/smdconf.h"
#include "routing/engine.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void smd_dmn_set_profile(struct smd_dmn *d, const char *path)
{
	pthread_mutex_lock(&d->mu);
	snprintf(d->profile, sizeof(d->profile), "%s", path ? path : "");
	pthread_mutex_unlock(&d->mu);
}

void smd_dmn_socket_group(struct smd_dmn *d, char *buf, size_t len)
{
	pthread_mutex_lock(&d->mu);
	/* the current generation's config is never freed while we hold mu (see reconfigure) */
	const struct smd_conf *c = d->pending ? d->pending->conf : d->cur->conf;
	snprintf(buf, len, "%s", c->socket_group ? c->socket_group : "");
	pthread_mutex_unlock(&d->mu);
}

int smd_dmn_conf_print(struct smd_dmn *d, FILE *out, unsigned flags)
{
	pthread_mutex_lock(&d->mu);
	int rc = smd_conf_print(out, d->pending ? d->pending->conf : d->cur->conf, flags);
	pthread_mutex_unlock(&d->mu);
	return rc;
}

void smd_dmn_get_profile(struct smd_dmn *d, char *buf, size_t len)
{
	pthread_mutex_lock(&d->mu);
	snprintf(buf, len, "%s", d->profile);
	pthread_mutex_unlock(&d->mu);
}

/* Plane notes get the plane's index in front: the caller's callback sees one stream from all threads. */
static void plane_note(void *arg, const char *msg)
{
	struct dmn_note *nc = arg;
	char buf[1024];

	snprintf(buf, sizeof(buf), "plane %u: %s", nc->plane, msg);
	nc->d->note(nc->d->note_arg, buf);
}

static void gen_free(struct dmn_gen *g)
{
	if (!g)
		return;
	for (unsigned i = 0; i < SM_MAX_PLANES; i++)
		sm_chain_free(g->chains[i]);
	smd_conf_free(g->conf);
	free(g);
}

/* Chains for n planes from conf; conf is only borrowed (err: caller keeps it). */
static int gen_new(struct sm_registry *reg, struct smd_conf *conf, unsigned n, struct dmn_gen **out,
		   char *err, size_t errlen)
{
	char spec[SMD_CONF_MAX_CHAIN * (SMD_CONF_NAME_MAX + 2)];
	struct dmn_gen *g = calloc(1, sizeof(*g));
	char cerr[512] = "";
	int rc;

	if (!g) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	smd_conf_chain_str(conf, spec, sizeof(spec));
	for (unsigned i = 0; i < n; i++) {
		rc = sm_chain_new(reg, spec, conf->doc, conf->engines_map, &g->chains[i], cerr, sizeof(cerr));
		if (rc) {
			smd_conf_chain_error(conf, spec, cerr, sizeof(cerr));
			snprintf(err, errlen, "routing: %s", cerr[0] ? cerr : strerror(-rc));
			gen_free(g);   /* conf not yet set: not freed */
			return rc;
		}
	}
	g->conf = conf;
	*out = g;
	return 0;
}

static void mp_cfg_from(struct sm_mp_cfg *mp, const struct smd_conf *conf, struct smd_dmn *d)
{
	memset(mp, 0, sizeof(*mp));
	sm_cfg_default(&mp->base);
	mp->base.lmc = (unsigned)conf->lmc;
	mp->base.subnet_prefix = conf->subnet_prefix;
	mp->base.subnet_timeout = (uint8_t)conf->subnet_timeout;
	mp->base.portcfg = &conf->portcfg;
	if (conf->mad.window)
		mp->base.txn.window = conf->mad.window;
	if (conf->mad.per_switch_window)
		mp->base.txn.per_dest = conf->mad.per_switch_window;
	if (conf->mad.timeout_ms)
		mp->base.txn.timeout_ms = conf->mad.timeout_ms;
	mp->base.txn.retries = conf->mad.retries;
	mp->retries = 1;
	/*
	 * The shared LID table is asked through our own hook, so mp->lids stays NULL: with
	 * it set, sm_multiplane_bringup() would install its own hook instead.
	 * The hook replaces the per-plane guid2lid file (sm.h), as with mp->lids.
	 */
	mp->base.state_dir = NULL;
	mp->base.guid2lid = NULL;
	mp->base.lid_want = dmn_capture_want;
	mp->base.lid_want_arg = d;
	mp->base.published = dmn_publish_view;   /* views and plane health hold its snapshots */
	mp->base.published_arg = d;
	mp->base.cycle = d->st.cycles + 1;
	mp->base.phase = dmn_plane_phase;
	mp->base.phase_arg = d;
	mp->base.trap = dmn_sa_trap;   /* traps 128 during a cycle are Reported too */
	mp->base.trap_arg = d;
	mp->base.keys = sm_keys_active(&d->keys) || d->keys.sm_key ? &d->keys : NULL;
	mp->base.txn.stop = &d->stopping;   /* smd_dmn_free() cuts a running cycle short */
	/* cycles run only as master (daemon/ha.c): SMInfo answered during one says so */
	mp->base.sminfo_state = SM_SMSTATE_MASTER;
	mp->base.sminfo_priority = (uint8_t)conf->sm_priority;
	mp->base.neighbours = d->nbr_on ? &d->nbr : NULL;
	mp->base.partitions = conf->partitions;   /* loaded with the config: a reload brings the new file */
}

#define SMD_REDO_FIRST_MS 1000u
#define SMD_REDO_MAX_MS 30000u

/*
 * After a cycle (mu held, dmn_snapshot done): every cycle sweeps a plane
 * whose last heavy sweep lost answers heavy again (run_cycle), and one is
 * due 1 s later, then 2 s, 4 s ... 30 s after each attempt that is still
 * incomplete, whatever the interval, until one is complete.
 */
static void redo_schedule(struct smd_dmn *d)
{
	int any = 0, retried = 0;

	for (unsigned i = 0; i < d->n; i++) {
		int inc = !d->planes[i].skip && !d->planes[i].rc && d->st.planes[i].sum.incomplete;
		any |= inc;
		retried |= inc && d->planes[i].heavy;
	}
	if (!any) {
		d->st.redo_wait_ms = 0;
		d->st.redo_due_us = 0;
		return;
	}
	if (d->st.redo_due_us && !retried)
		return;
	d->st.redo_wait_ms = !d->st.redo_wait_ms ? SMD_REDO_FIRST_MS :
		d->st.redo_wait_ms * 2 > SMD_REDO_MAX_MS ? SMD_REDO_MAX_MS : d->st.redo_wait_ms * 2;
	d->st.redo_due_us = sm_mono_us() + (uint64_t)d->st.redo_wait_ms * 1000u;
}

static void run_cycle(struct smd_dmn *d)
{
	struct sm_mp_cfg mp;
	char err[512] = "", lerr[256] = "";
	uint64_t t0 = sm_mono_us();
	const struct sm_snapshot *prev[SM_MAX_PLANES];
	int any_heavy = 0;

	/* a plane that could not be opened gets another chance every cycle */
	for (unsigned i = 0; i < d->n; i++) {
		struct sm_mp_plane *p = &d->planes[i];
		if (p->t)
			continue;
		err[0] = '\0';
		if (sm_transport_open_spec(p->name, sm_backends, &d->ports[i], err, sizeof(err)))
			snprintf(p->open_err, sizeof(p->open_err), "%s", err[0] ? err : "cannot open");
		else
			p->open_err[0] = '\0';
		p->t = d->ports[i].t;
	}
	dmn_mock_conf_apply(d);   /* smd.yaml mock: (cmd_fault.c) */
	for (unsigned i = 0; i < d->n; i++) {
		d->planes[i].chain = d->cur->chains[i];
		d->planes[i].state = d->states[i];
		/*
		 * An incomplete plane is swept heavy by every cycle (the interval's
		 * too, so the repair after a loss waits at most sweep_interval),
		 * and by the back-off timer's in between (redo_schedule).
		 */
		d->planes[i].force_heavy = d->st.planes[i].sum.incomplete && !d->planes[i].rc && !d->planes[i].skip;
		/* the published hook of a heavy bring-up fills cap[i] anew */
		prev[i] = d->cap[i];
		d->cap[i] = NULL;
	}
	mp_cfg_from(&mp, d->cur->conf, d);
	mp.light = d->light != 0;
	mp.mc_only = d->mc_only != 0;   /* only the planes whose groups changed, MFTs only */
	/* light cycles that escalate and trap cycles patch the known fabric when they can */
	mp.base.incremental = d->incremental && d->cur->conf->incremental_sweep;
	mp.base.defer_give_back = true;   /* the worker gives memory back once idle (worker_main) */
	char profile[4096];
	smd_dmn_get_profile(d, profile, sizeof(profile));
	mp.base.profile_path = profile[0] ? profile : NULL;
	dmn_mc_cycle_begin(d);   /* a plane with newer multicast groups gets its MFTs programmed */
	sm_multiplane_bringup(d->planes, d->n, &mp);
	dmn_mc_cycle_end(d);
	for (unsigned i = 0; i < d->n; i++) {
		/* the MFT-only pass published a snapshot of the same fabric with the new MFTs */
		if (d->planes[i].heavy || (d->planes[i].mft_ran && d->cap[i])) {
			any_heavy |= d->planes[i].heavy;   /* MFTs alone change no plane health */
			sm_snapshot_unref(prev[i]);
		} else {
			sm_snapshot_unref(d->cap[i]);
			d->cap[i] = prev[i];
		}
	}
	/* derived M_Keys at protect bits 2-3: what a restart needs to reach the ports (sm/neighbours.h) */
	for (unsigned i = 0; i < d->n && d->nbr_on; i++) {
		const struct sm_snapshot *cs = d->cap[i];
		char nerr[512];
		if (!d->planes[i].heavy || d->planes[i].rc || !cs || !cs->complete)
			continue;
		pthread_mutex_lock(&d->mu);
		int nrc = sm_nbr_update(&d->nbr, cs->fabric, d->nbr_path, nerr, sizeof(nerr));
		pthread_mutex_unlock(&d->mu);
		if (nrc && d->note) {
			char msg[600];
			snprintf(msg, sizeof(msg), "plane %u: neighbour table not saved: %s", i, nerr);
			d->note(d->note_arg, msg);
		}
	}
	struct sm_planes_health *ph = NULL;
	char herr[128] = "";
	int stopping = atomic_load(&d->stopping);
	if (any_heavy) {
		/* plane health is for status answers: none are given once stopping (a large fabric takes a while) */
		ph = stopping ? NULL : calloc(1, sizeof(*ph));
		if (ph)
			dmn_cycle_health(d, ph, herr, sizeof(herr));
		else
			snprintf(herr, sizeof(herr), "%s", stopping ? "stopping" : "out of memory");
	}
	/* every cycle, heavy or not: a failed save is retried with back-off (sm/planelid.h) */
	struct sm_plane_lids_save sv = { 0 };
	if (d->lids && sm_plane_lids_save_backoff(d->lids, (uint64_t)sm_mono_ms(), &sv, lerr, sizeof(lerr)) &&
	    !lerr[0])
		snprintf(lerr, sizeof(lerr), "cannot save");
	double secs = (double)(sm_mono_us() - t0) / 1e6;
	int again = 0;
	for (unsigned i = 0; i < d->n; i++)
		again |= d->planes[i].heavy && d->planes[i].sum.late_traps;
	pthread_mutex_lock(&d->mu);
	dmn_snapshot(d, secs, lerr);
	redo_schedule(d);
	d->st.lids_save = sv;
	if (again && !d->trap_due_us) {
		/* traps came during an incremental sweep: another one at once sees what they said */
		d->trap_due_us = sm_mono_us();
		snprintf(d->st.last_trap, sizeof(d->st.last_trap), "trap 128 during the last sweep");
	}
	if (any_heavy) {
		d->st.health_ok = !herr[0];
		snprintf(d->st.health_err, sizeof(d->st.health_err), "%s", herr);
		if (ph && !herr[0])
			d->st.health = *ph;
	}
	pthread_mutex_unlock(&d->mu);
	free(ph);
	/*
	 * A failed plane's port is reopened by the next cycle, so a restarted
	 * ibsim or a reset HCA is picked up. A mock plane keeps its transport:
	 * reopening would reload the dump and forget the emulated state.
	 * A cycle cut short by a stop failed every plane it had not finished:
	 * their ports are closed once, by smd_dmn_free().
	 */
	for (unsigned i = 0; i < d->n && !stopping; i++) {
		struct sm_mp_plane *p = &d->planes[i];
		/* a plane with an SA: closed by the loop after its SA (sa.c) */
		if (p->rc && p->t && !p->skip && !sm_plane_port_keep_open(&d->ports[i]) && !d->sa[i]) {
			sm_plane_port_close(&d->ports[i]);
			p->t = NULL;
		}
	}
}

/* Tell the loop to look at the state again (any thread, mu held or not). */
static void kick(struct smd_dmn *d)
{
	/* best effort: a full pipe wakes the loop just as well */
	(void)!write(d->wake[1], "k", 1);
}

/*
 * Unsolicited MADs that arrived on plane i's transport between cycles (the
 * loop's thread; the worker is idle). SMInfo asked of us is answered; every
 * trap is repressed (as during a sweep, sm.c), so its sender stops
 * repeating it; a link state change (trap 128) or a trap that does not
 * decode asks for a cycle. Anything else (a late answer of the last cycle)
 * is dropped: the next cycle asks again anyway. Returns 1 when a cycle is
 * wanted, with a description in why; *nmads counts what was read.
 */
static int idle_mads(struct smd_dmn *d, unsigned i, uint64_t sweeps, unsigned *nmads, unsigned *ntraps,
		     char *why, size_t whylen)
{
	struct sm_transport *t = d->planes[i].t;
	uint8_t buf[SM_MAD_SIZE + 64], out[SM_MAD_SIZE];
	int want = 0;

	for (int k = 0; k < 256; k++) {   /* bounded: a babbling port cannot keep us here */
		struct sm_mad_addr from = { 0 };
		struct sm_smp smp, rep;
		struct sm_mad_err me;
		size_t len = 0;

		if (sm_transport_recv(t, buf, sizeof(buf), &len, &from, 0))
			break;
		(*nmads)++;
		if (sm_smp_decode(buf, len, &smp, &me))
			continue;
		/* SMInfo asked of us, answers to our SMInfo requests, trap 144 (daemon/ha.h) */
		if (dmn_ha_mad(d, i, &smp, &from, sweeps))
			continue;
		if (smp.method != SM_METHOD_TRAP)
			continue;
		sm_smp_make_trap_repress(&smp, &rep);
		if (!sm_smp_encode(&rep, out))
			(void)sm_transport_send(t, out, SM_MAD_SIZE, from.slid, 0);
		(*ntraps)++;
		unsigned num;
		if (!sm_trap_wants_sweep(&smp, &num) || !dmn_ha_plane_may_cycle(d, i))
			continue;   /* a standby plane's traps are for its master */
		dmn_sa_trap(d, i, &smp, from.slid);
		want = 1;
		if (num)
			snprintf(why, whylen, "plane %u: trap %u from LID %u", i, num, from.slid);
		else
			snprintf(why, whylen, "plane %u: undecodable trap from LID %u", i, from.slid);
	}
	return want;
}

static void schedule(struct smd_dmn *d);

/* Read plane i's waiting MADs (loop thread, worker idle); 1 when a trap asks for a cycle. */
static int plane_mads(struct smd_dmn *d, unsigned i, struct sm_loop_src *s, unsigned revents)
{
	unsigned got = 0, ntraps = 0;
	char why[128] = "";

	if (dmn_ha_port_busy(d, i))
		return 0;   /* its discovery thread reads it */
	pthread_mutex_lock(&d->mu);
	uint64_t sweeps = d->st.cycles;
	pthread_mutex_unlock(&d->mu);
	int trap = idle_mads(d, i, sweeps, &got, &ntraps, why, sizeof(why));
	/* an fd that stays ready with nothing to read would spin the loop: not watched until the next cycle */
	if (!got && (revents & (POLLERR | POLLHUP | POLLNVAL))) {
		sm_loop_remove(s);
		d->src_mad[i] = NULL;
	}
	pthread_mutex_lock(&d->mu);
	d->st.traps += ntraps;
	if (trap) {
		snprintf(d->st.last_trap, sizeof(d->st.last_trap), "%s", why);
		/* both ends of a link report it: give the burst a moment, then one cycle sees it all */
		if (!d->trap_due_us)
			d->trap_due_us = sm_mono_us() + (uint64_t)d->cur->conf->trap_holdoff_ms * 1000u;
	}
	pthread_mutex_unlock(&d->mu);
	return trap;
}

/* A plane's MAD fd is readable between cycles (loop thread). */
static void on_mad(struct sm_loop_src *s, int fd, unsigned revents, void *arg)
{
	struct dmn_note *nc = arg;

	(void)fd;
	if (plane_mads(nc->d, nc->plane, s, revents))
		schedule(nc->d);
}

void dmn_plane_mads(struct smd_dmn *d, unsigned i)
{
	/* the loop schedules the cycle: the caller may still be using the planes */
	if (plane_mads(d, i, NULL, 0))
		kick(d);
}

/*
 * Watch the MAD fd of every open plane (loop thread, worker idle; with
 * skipped_only, the planes a running cycle left out). Mock transports have no fd.
 */
static void watch_planes(struct smd_dmn *d, bool skipped_only)
{
	for (unsigned i = 0; i < d->n; i++) {
		int fd = d->planes[i].t ? sm_transport_fd(d->planes[i].t) : -1;
		if (fd < 0 || d->src_mad[i] || dmn_ha_port_busy(d, i) || (skipped_only && !d->planes[i].skip))
			continue;
		if (sm_loop_io_add(d->loop, fd, on_mad, &d->note_ctx[i], &d->src_mad[i]))
			d->src_mad[i] = NULL;   /* out of memory: traps wait for the next cycle */
	}
}

static void watch_mads(struct smd_dmn *d)
{
	watch_planes(d, false);
}

/* all: every plane; else the planes a cycle takes (a standby plane's port stays the loop's) */
static void unwatch_mads(struct smd_dmn *d, bool all)
{
	for (unsigned i = 0; i < SM_MAX_PLANES; i++) {
		if (!all && i < d->n && d->planes[i].skip)
			continue;
		sm_loop_remove(d->src_mad[i]);
		d->src_mad[i] = NULL;
	}
}

/*
 * Prepare the cycle the loop decided on and hand it to the worker (loop
 * thread, mu held, worker idle). Returns the generation a reload replaced,
 * to free outside the lock.
 */
static struct dmn_gen *cycle_begin(struct smd_dmn *d, const char *reason)
{
	/*
	 * Heavy: the first cycle, a trap (due or not yet: this cycle sees
	 * whatever it reported), a heavy request, new chains. Otherwise
	 * (interval, light request) light, escalating per plane.
	 */
	int heavy = !d->st.cycles || d->trap_due_us || d->want_heavy;
	/* an explicit heavy request, the first cycle and new chains sweep in full */
	int incremental = !d->want_heavy && d->st.cycles;
	struct dmn_gen *old = NULL;

	if (d->want_reread)
		for (unsigned i = 0; i < d->n; i++)
			sm_state_forget(d->states[i]);
	d->want_heavy = d->want_reread = 0;
	d->trap_due_us = 0;
	d->mc_due_us = 0;   /* this cycle takes the newest sets */
	/* every cycle sweeps the incomplete planes heavy: the back-off starts again from its end */
	d->st.redo_due_us = 0;
	d->reason = reason;   /* published with the cycle's results (dmn_snapshot) */
	if (d->pending) {
		old = d->cur;
		d->cur = d->pending;
		d->pending = NULL;
		if (d->cur->keys_new)
			d->keys = d->cur->keys;   /* rotated secrets: this heavy cycle re-keys the ports */
		d->st.sweep_interval = d->cur->conf->sweep_interval;
		smd_conf_chain_str(d->cur->conf, d->st.chain, sizeof(d->st.chain));
		heavy = 1;   /* new engines (or their config): reroute */
		incremental = 0;
	}
	d->light = !heavy;
	d->incremental = incremental;
	d->mc_only = !heavy && reason && !strcmp(reason, "multicast");
	d->running = 1;
	d->st.cycle_start_us = sm_mono_us();
	for (unsigned i = 0; i < SM_MAX_PLANES; i++)
		d->st.planes[i].phase = -1;
	if (d->st.cycles)
		d->st.state = SMD_ST_SWEEPING;
	d->in_worker = 1;
	d->go = 1;
	pthread_cond_signal(&d->cv);
	return old;
}

/*
 * Start a cycle if one is due (a request, the interval, a trap after its
 * hold-off) and the worker is idle; else arm the timers for what comes
 * next. Loop thread.
 */
static void schedule(struct smd_dmn *d)
{
	struct dmn_gen *old = NULL;
	const char *reason = NULL;
	uint64_t now = sm_mono_us();

	pthread_mutex_lock(&d->mu);
	if (!d->in_worker && !d->stop) {
		if (d->requested > d->st.cycles)
			reason = d->st.cycles ? "request" : "start";
		else if (d->next_due_us && now >= d->next_due_us)
			reason = "interval";
		else if (d->trap_due_us && now >= d->trap_due_us)
			reason = "trap";
		else if (d->st.redo_due_us && now >= d->st.redo_due_us)
			reason = "incomplete";
		else if (d->mc_due_us && now >= d->mc_due_us)
			reason = "multicast";   /* light: only the planes whose groups changed go heavy */
	}
	if (reason && !dmn_ha_may_cycle(d)) {
		/* a standby programs nothing (daemon/ha.c); its own timer polls the master */
		reason = NULL;
		d->next_due_us = d->trap_due_us = d->st.redo_due_us = d->mc_due_us = 0;
	}
	if (reason) {
		/*
		 * Planes another SM masters are left out (each plane is its own
		 * subnet, with its own election): their ports stay the loop's,
		 * which polls their masters while the worker runs the others.
		 */
		for (unsigned i = 0; i < d->n; i++)
			d->planes[i].skip = !dmn_ha_plane_may_cycle(d, i);
		unwatch_mads(d, false);   /* the transports are the worker's until it reports back */
		old = cycle_begin(d, reason);
	}
	/* during a cycle too: a due time that passes meanwhile is looked at when the cycle ends */
	sm_loop_timer_set(d->src_interval, d->next_due_us);
	/* the trap timer also wakes the heavy sweep of incomplete planes: whichever is first */
	uint64_t due = d->trap_due_us;
	if (d->st.redo_due_us && (!due || d->st.redo_due_us < due))
		due = d->st.redo_due_us;
	if (d->mc_due_us && (!due || d->mc_due_us < due))   /* and the multicast hold-off */
		due = d->mc_due_us;
	sm_loop_timer_set(d->src_trap, due);
	pthread_mutex_unlock(&d->mu);
	gen_free(old);
}

static void on_timer(struct sm_loop_src *s, void *arg)
{
	(void)s;
	schedule(arg);
}

/* The wake pipe: a cycle ended, or another thread changed what is due (loop thread). */
static void on_wake(struct sm_loop_src *s, int fd, unsigned revents, void *arg)
{
	struct smd_dmn *d = arg;
	char buf[64];
	int done;

	(void)s;
	(void)revents;
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	pthread_mutex_lock(&d->mu);
	done = d->done;
	if (done)
		d->done = d->in_worker = 0;   /* the planes are the loop's again */
	int busy = d->in_worker;
	pthread_mutex_unlock(&d->mu);
	/* a discovery that ended gives its plane's port back (a plane a running cycle left out is the loop's) */
	if (dmn_ha_wake(d))
		watch_planes(d, busy);
	if (done) {
		dmn_sa_cycle_done(d);
		watch_mads(d);
		dmn_ha_cycle_done(d);
		if (d->done_fn)
			d->done_fn(d->done_arg);
	}
	schedule(d);
}

/*
 * After a cycle, idle (the loop has the planes back): each plane's tables
 * copied into the spare table ahead of a reroute (model/lfts.h
 * sm_lfts_prepare(): 160 MB, 11-20 ms at 40k hosts, out of the reroute's
 * path). A cycle due meanwhile starts that much later. One spare table:
 * of several planes of one size, the first one prepared keeps it while
 * its tables live (-EBUSY for the others: no copy made in vain).
 */
static void prepare_reroute(struct smd_dmn *d, const struct sm_snapshot **keep)
{
	for (unsigned i = 0; i < d->n; i++) {
		if (keep[i] && keep[i]->lfts && !atomic_load(&d->stopping))
			(void)sm_lfts_prepare(keep[i]->lfts);   /* -ENOENT: no spare (small tables), -EBUSY */
		sm_snapshot_unref(keep[i]);
	}
}

/* The worker: runs the cycles the loop hands it, nothing else; never waits on an fd. */
static void *worker_main(void *arg)
{
	struct smd_dmn *d = arg;

	pthread_mutex_lock(&d->mu);
	for (;;) {
		while (!d->stop && !d->go)
			pthread_cond_wait(&d->cv, &d->mu);
		if (d->stop)
			break;
		d->go = 0;
		pthread_mutex_unlock(&d->mu);

		run_cycle(d);
		const struct sm_snapshot *keep[SM_MAX_PLANES];
		for (unsigned i = 0; i < d->n; i++)   /* the worker's until done is set */
			keep[i] = d->cap[i] ? sm_snapshot_ref(d->cap[i]) : NULL;

		pthread_mutex_lock(&d->mu);
		d->running = 0;
		unsigned iv = d->cur->conf->sweep_interval;
		/* a reload may have changed the interval meanwhile: it applies from the next wait */
		if (d->pending)
			iv = d->pending->conf->sweep_interval;
		d->next_due_us = iv ? sm_mono_us() + (uint64_t)iv * 1000000u : 0;
		d->done = 1;
		kick(d);
		pthread_mutex_unlock(&d->mu);
		prepare_reroute(d, keep);
		/* freed memory back to the system (malloc_trim, spare blocks: state.h), out of the cycle */
		(void)sm_state_give_back_idle();
		pthread_mutex_lock(&d->mu);
	}
	pthread_mutex_unlock(&d->mu);
	return NULL;
}

int smd_dmn_new(struct smd_conf *conf, const struct smd_dmn_cfg *cfg, struct smd_dmn **out,
		char *err, size_t errlen)
{
	struct smd_dmn *d;
	char lerr[512] = "";
	int rc;

	if (!cfg->n_specs || cfg->n_specs > SM_MAX_PLANES) {
		snprintf(err, errlen, "%u planes configured (1-%d allowed)", cfg->n_specs, SM_MAX_PLANES);
		return -EINVAL;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	d->wake[0] = d->wake[1] = -1;
	pthread_mutex_init(&d->mu, NULL);
	pthread_cond_init(&d->cv, NULL);
	d->n = cfg->n_specs;
	d->note = cfg->note;
	d->note_arg = cfg->note_arg;
	d->done_fn = cfg->cycle_done;
	d->done_arg = cfg->cycle_arg;
	d->st.n_planes = d->n;
	d->st.start_us = sm_mono_us();
	d->st.sweep_interval = conf->sweep_interval;
	smd_conf_chain_str(conf, d->st.chain, sizeof(d->st.chain));
	if (pipe2(d->wake, O_CLOEXEC | O_NONBLOCK) < 0) {
		rc = -errno;
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		goto fail;
	}
	d->loop = cfg->loop;
	if (!d->loop && (rc = sm_loop_new(&d->own_loop))) {
		snprintf(err, errlen, "event loop: %s", strerror(-rc));
		goto fail;
	}
	if (!d->loop)
		d->loop = d->own_loop;
	if ((rc = sm_loop_io_add(d->loop, d->wake[0], on_wake, d, &d->src_wake)) ||
	    (rc = sm_loop_timer_add(d->loop, on_timer, d, &d->src_interval)) ||
	    (rc = sm_loop_timer_add(d->loop, on_timer, d, &d->src_trap))) {
		snprintf(err, errlen, "event loop: %s", strerror(-rc));
		goto fail;
	}
	d->reg = sm_registry_new(conf->plugin_dir);
	if (!d->reg) {
		rc = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if ((rc = gen_new(d->reg, conf, d->n, &d->cur, err, errlen)))
		goto fail;
	if ((rc = dmn_mc_start(d, conf, err, errlen)))
		goto fail;
	rc = sm_plane_lids_open(conf->state_dir, (unsigned)conf->lmc, cfg->note, cfg->note_arg, &d->lids, lerr, sizeof(lerr));
	if (!rc && conf->guid2lid_file)   /* --guid2lid FILE: as --once reads it (sm/planelid.h) */
		rc = sm_plane_lids_seed(d->lids, conf->guid2lid_file, lerr, sizeof(lerr));
	if (rc) {
		snprintf(err, errlen, "plane-consistent LID table: %s", lerr[0] ? lerr : strerror(-rc));
		goto fail;
	}
	/* the keys are on disk before the first cycle can give a port one */
	rc = sm_keys_open(conf->state_dir, &conf->keys, &d->keys, cfg->note, cfg->note_arg, lerr, sizeof(lerr));
	if (rc) {
		snprintf(err, errlen, "keys: %s", lerr[0] ? lerr : strerror(-rc));
		goto fail;
	}
	d->nbr_on = sm_nbr_open(conf->state_dir, &d->keys, &d->nbr, d->nbr_path, sizeof(d->nbr_path), cfg->note,
				cfg->note_arg);
	for (unsigned i = 0; i < d->n; i++) {
		struct sm_mp_plane *p = &d->planes[i];
		if ((rc = sm_state_new(&d->states[i]))) {
			snprintf(err, errlen, "out of memory");
			goto fail;
		}
		snprintf(p->name, sizeof(p->name), "%s", cfg->specs[i]);
		snprintf(d->st.planes[i].spec, sizeof(d->st.planes[i].spec), "%s", cfg->specs[i]);
		p->index = i;
		d->note_ctx[i].d = d;   /* also the MAD watch's argument */
		d->note_ctx[i].plane = i;
		if (cfg->note) {
			p->note = plane_note;
			p->note_arg = &d->note_ctx[i];
		}
		/* transports are opened by the worker's first cycle: loading a large mock
		 * dump must not keep the caller from serving its socket meanwhile */
	}
	d->requested = 1;   /* the first cycle starts at once */
	if (pthread_create(&d->worker, NULL, worker_main, d)) {
		rc = -EAGAIN;
		snprintf(err, errlen, "cannot start the sweep thread");
		goto fail;
	}
	d->worker_started = 1;
	/* master/standby: the elected planes' ports open now, the first cycle waits for discovery */
	if ((rc = dmn_ha_new(d, conf))) {
		snprintf(err, errlen, "election: %s", strerror(-rc));
		goto fail;
	}
	watch_mads(d);
	schedule(d);   /* the first cycle, at once (unless discovery makes this plane a standby) */
	*out = d;
	return 0;
fail:
	if (d->cur)
		d->cur->conf = NULL;   /* the caller keeps conf on failure */
	smd_dmn_free(d);
	return rc;
}

void smd_dmn_free(struct smd_dmn *d)
{
	char err[256];

	if (!d)
		return;
	if (d->worker_started) {
		pthread_mutex_lock(&d->mu);
		d->stop = 1;
		atomic_store(&d->stopping, 1);   /* a running cycle's transactions end now */
		pthread_cond_signal(&d->cv);
		pthread_mutex_unlock(&d->mu);
		pthread_join(d->worker, NULL);
	}
	dmn_sa_free_all(d);   /* on the loop, before the transports they use */
	unwatch_mads(d, true);
	dmn_ha_free(d);
	sm_loop_remove(d->src_wake);
	sm_loop_remove(d->src_interval);
	sm_loop_remove(d->src_trap);
	sm_loop_free(d->own_loop);
	if (d->lids)
		(void)sm_plane_lids_save(d->lids, err, sizeof(err));   /* saved after each cycle already */
	for (unsigned i = 0; i < d->n; i++) {
		sm_plane_port_close(&d->ports[i]);
		d->planes[i].t = NULL;
		sm_snapshot_unref(d->cap[i]);
		sm_state_free(d->states[i]);
	}
	for (unsigned i = 0; i < SM_MAX_PLANES; i++)
		dmn_view_unref(d->views[i]);   /* a reader still holding one keeps it alive */
	gen_free(d->pending);
	gen_free(d->cur);
	dmn_mc_free(d);
	sm_nbr_free(&d->nbr);
	sm_plane_lids_free(d->lids);
	sm_registry_free(d->reg);
	for (int i = 0; i < 2; i++)
		if (d->wake[i] >= 0)
			close(d->wake[i]);
	pthread_cond_destroy(&d->cv);
	pthread_mutex_destroy(&d->mu);
	free(d);
}

int smd_dmn_wake_fd(const struct smd_dmn *d)
{
	return sm_loop_fd(d->loop);
}

void smd_dmn_drain(struct smd_dmn *d)
{
	(void)sm_loop_dispatch(d->loop, 0);
}

uint64_t smd_dmn_request_sweep(struct smd_dmn *d)
{
	return smd_dmn_request_sweep_kind(d, SMD_SWEEP_HEAVY);
}

uint64_t smd_dmn_request_sweep_kind(struct smd_dmn *d, enum smd_sweep_kind kind)
{
	uint64_t target;

	pthread_mutex_lock(&d->mu);
	/* a cycle already running may have passed discovery: the request needs the next one */
	target = d->st.cycles + (d->running ? 2 : 1);
	if (d->requested < target)
		d->requested = target;
	if (kind != SMD_SWEEP_LIGHT)
		d->want_heavy = 1;
	if (kind == SMD_SWEEP_REREAD)
		d->want_reread = 1;
	kick(d);
	pthread_mutex_unlock(&d->mu);
	return target;
}

static int str_differs(const char *a, const char *b)
{
	return (a == NULL) != (b == NULL) || (a && strcmp(a, b));
}

int smd_dmn_reconfigure(struct smd_dmn *d, struct smd_conf *conf, char *notes, size_t notes_len,
			char *err, size_t errlen)
{
	struct dmn_gen *g = NULL, *old;
	const struct smd_conf *cur;
	size_t off = 0;
	int rc;

	notes[0] = '\0';
	if ((rc = gen_new(d->reg, conf, d->n, &g, err, errlen)))
		return rc;
	pthread_mutex_lock(&d->mu);
	/* the current generation's config is read only by the worker, never freed while we hold mu */
	cur = d->pending ? d->pending->conf : d->cur->conf;
	/*
	 * M_Key: derived secrets are re-read by every reload (daemon/reload.c)
	 * and so is a move from a single key to derived keys; the keys apply
	 * from the next cycle, which is heavy and re-keys every port
	 * (sm/mkey.h). keys_rc: 1 new keys, 0 none, 2 not derived (restart), < 0 refused.
	 */
	char kerr[160] = "";
	int keys_rc = 2;
	if (conf->keys.mkey_mode == SM_KEY_DERIVED && conf->mkey_nsecrets) {
		const struct sm_keys *base = d->pending && d->pending->keys_new ? &d->pending->keys : &d->keys;
		keys_rc = sm_keys_reload(base, conf->keys.protect_bits, conf->keys.lease_period,
					 (const uint8_t (*)[16])conf->mkey_secret, conf->mkey_nsecrets, &g->keys,
					 kerr, sizeof(kerr));
		g->keys_new = keys_rc == 1;
	}
	int planes_differ = conf->n_planes != cur->n_planes;
	for (unsigned i = 0; !planes_differ && i < conf->n_planes; i++)
		planes_differ = strcmp(conf->planes[i], cur->planes[i]) != 0;
	const struct { int differs; const char *what; } fixed[] = {
		{ planes_differ, "planes" },
		{ str_differs(conf->socket, cur->socket), "socket" },
		{ str_differs(conf->state_dir, cur->state_dir), "state_dir" },
		{ str_differs(conf->guid2lid_file, cur->guid2lid_file), "guid2lid_file (read at start)" },
		{ str_differs(conf->plugin_dir, cur->plugin_dir), "plugin_dir" },
		{ conf->lmc != cur->lmc, "lmc (the LID table keeps its LMC)" },
		{ keys_rc < 0 || conf->keys.smkey_mode != cur->keys.smkey_mode || conf->keys.sm_key != cur->keys.sm_key ||
		  (keys_rc == 2 && (conf->keys.mkey_mode != cur->keys.mkey_mode || conf->keys.mkey != cur->keys.mkey ||
				    conf->keys.protect_bits != cur->keys.protect_bits ||
				    conf->keys.lease_period != cur->keys.lease_period)),
		  keys_rc < 0 ? kerr : "m_key/sm_key settings (only derived secrets are re-read)" },
		{ str_differs(conf->user, cur->user) || str_differs(conf->group, cur->group), "user/group" },
	};
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		if (fixed[i].differs && off < notes_len)
			off += (size_t)snprintf(notes + off, notes_len - off, "%s%s", off ? ", " : "",
						fixed[i].what);
	if (conf->partition_config_file || cur->partition_config_file || g->keys_new) {
		/* P_Key tables and M_Keys are written by heavy bring-ups: the next one applies the (re-read) file
		 * (without a file on either side both are the default partition: nothing to apply) */
		uint64_t target = d->st.cycles + (d->running ? 2 : 1);
		if (d->requested < target)
			d->requested = target;
		d->want_heavy = 1;
	}
	old = d->pending;
	d->pending = g;
	/* a new interval counts from now, so shortening it takes effect at once */
	d->next_due_us = conf->sweep_interval && !d->running ?
		sm_mono_us() + (uint64_t)conf->sweep_interval * 1000000u : d->next_due_us;
	if (!conf->sweep_interval && !d->running)
		d->next_due_us = 0;
	kick(d);
	int parts = conf->partition_config_file || cur->partition_config_file;
	pthread_mutex_unlock(&d->mu);
	gen_free(old);   /* never swapped in: nobody used its chains */
	if (parts)
		dmn_mc_reconfig(d, conf);   /* d->pending's: freed only by the loop thread, which we are */
	return 0;
}
