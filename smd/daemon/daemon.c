/* SPDX-License-Identifier: MIT */
/*
 * DOC: the long-running SM (see daemon.h)
 *
 * Locking: d->mu guards the snapshot (d->st), the sweep request counter,
 * the pending reconfiguration and the stop flag. Everything else the worker
 * touches (transports, mocks, chains, the sm_mp_plane array, the current
 * config) belongs to the worker while it runs and is only touched by
 * others after it has been joined. The pending reconfiguration is built
 * outside the lock and handed over by pointer, so the worker never frees
 * a chain another thread uses, and a reload never waits for a sweep.
 */
#include "daemon/daemon.h"
#include "lib/clock.h"
#include "mad/ibsim_client.h"
#include "model/hosts.h"
#include "lib/json.h"
#include "mad/codec.h"
#include "mock/mock.h"
#include "sm/sminfo.h"
#include "sm/multiplane.h"
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

struct dmn_gen {                     /* a config and the chains built from it */
	struct smd_conf *conf;
	struct sm_chain *chains[SM_MAX_PLANES];
};

struct dmn_view {                    /* struct smd_view plus what owns it */
	struct smd_view pub;
	atomic_uint refs;
	struct sm_fabric *fabric;
	struct sm_lfts *lfts;
};

struct dmn_note {
	struct smd_dmn *d;
	unsigned plane;
};

struct smd_dmn {
	pthread_mutex_t mu;
	pthread_t worker;
	int worker_started;
	int stop;
	int running;                 /* a cycle is in progress */
	uint64_t requested;          /* run cycles until st.sweeps reaches this */
	uint64_t next_due_us;        /* periodic cycle, 0 = none */
	uint64_t trap_due_us;        /* cycle asked for by a trap (after a short hold-off), 0 = none */
	int want_heavy;              /* the next cycle is heavy (request, trap) */
	int want_reread;             /* ... and forgets the LFTs the states remember */
	int kick[2];                 /* pipe: anyone -> idle worker ("look at the state again") */
	struct dmn_gen *pending;     /* handed over by reconfigure, swapped in by the worker */
	struct smd_dmn_status st;

	/* worker-owned */
	struct dmn_gen *cur;
	const char *reason;          /* why the running cycle runs (static string) */
	int light;                   /* the running cycle is a light one */
	int incremental;             /* ... may sweep incrementally (light, trap) */
	struct sm_state *states[SM_MAX_PLANES];  /* per plane, across cycles (sm.h) */
	struct sm_registry *reg;
	struct sm_plane_lids *lids;
	struct sm_keys keys;         /* M_Key/SM_Key, decided once at start (smd/sm/mkey.h) */
	unsigned n;
	struct sm_mp_plane planes[SM_MAX_PLANES];
	struct sm_mock *mocks[SM_MAX_PLANES];
	struct sm_fabric *cap[SM_MAX_PLANES];   /* this cycle's discovered fabric per plane (plane threads) */
	uint8_t unwatched[SM_MAX_PLANES];       /* fd hung up with nothing to read: not polled until the next cycle */
	sm_note_fn *note;
	void *note_arg;
	struct dmn_note note_ctx[SM_MAX_PLANES];

	struct dmn_view *views[SM_MAX_PLANES];  /* last successful bring-up per plane (d->mu) */
	int wake[2];                 /* pipe: worker -> caller's poll loop */
	char profile[4096];          /* traffic profile for the engines, "" none (d->mu); see daemon_profile.c */
};

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

void smd_dmn_get_profile(struct smd_dmn *d, char *buf, size_t len)
{
	pthread_mutex_lock(&d->mu);
	snprintf(buf, len, "%s", d->profile);
	pthread_mutex_unlock(&d->mu);
}

const char *smd_dmn_state_name(enum smd_dmn_state st)
{
	switch (st) {
	case SMD_ST_STARTING: return "starting";
	case SMD_ST_SWEEPING: return "sweeping";
	case SMD_ST_UP: return "up";
	case SMD_ST_DEGRADED: return "degraded";
	default: return "down";
	}
}

/* Plane notes get the plane's index in front: the caller's callback sees one stream from all threads. */
static void plane_note(void *arg, const char *msg)
{
	struct dmn_note *nc = arg;
	char buf[1024];

	snprintf(buf, sizeof(buf), "plane %u: %s", nc->plane, msg);
	nc->d->note(nc->d->note_arg, buf);
}

int smd_plane_open(const char *spec, struct sm_transport **t, struct sm_mock **mock, char *err,
		   size_t errlen)
{
	int rc;

	*t = NULL;
	*mock = NULL;
	if (!strncmp(spec, "mock:", 5)) {
		if (!spec[5]) {
			snprintf(err, errlen, "'%s': missing a dump file after the colon", spec);
			return -EINVAL;
		}
		rc = sm_mock_load(spec + 5, NULL, mock, err, errlen);
		if (rc)
			return rc;
		uint32_t port = sm_mock_default_port(*mock, 0);
		if (port == SM_NONE) {
			snprintf(err, errlen, "%s: no CA port with its link up to attach the SM to", spec + 5);
			rc = -ENODEV;
		} else if ((rc = sm_mock_attach(*mock, port, t))) {
			snprintf(err, errlen, "cannot attach to the mock fabric: %s", strerror(-rc));
		}
		if (rc) {
			sm_mock_free(*mock);
			*mock = NULL;
		}
		return rc;
	}
	if (!strcmp(spec, "ibsim") || !strncmp(spec, "ibsim:", 6)) {
		const char *node = spec[5] == ':' && spec[6] ? spec + 6 : NULL;
		return sm_ibsim_transport_open(NULL, node, t, err, errlen);
	}
	return sm_transport_open(spec, t, err, errlen);
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

/*
 * The LID hook of every plane: the shared table's answer, plus a copy of
 * the plane's fabric for plane health. Called from plane threads; each
 * writes only its own cap[plane]. A retried plane replaces its copy.
 */
static int capture_want(void *arg, const struct sm_fabric *f, unsigned plane, const uint16_t *cur,
			uint16_t *want)
{
	struct smd_dmn *d = arg;
	int rc = sm_plane_lids_want(d->lids, f, plane, cur, want);
	struct sm_fabric *copy;

	if (rc || plane >= SM_MAX_PLANES)
		return rc;
	copy = sm_fabric_new();
	if (copy && sm_fabric_append(copy, f, NULL)) {
		sm_fabric_free(copy);
		copy = NULL;   /* no health this cycle; the bring-up itself goes on */
	}
	sm_fabric_free(d->cap[plane]);
	d->cap[plane] = copy;
	return 0;
}

static void view_unref(struct dmn_view *v)
{
	if (!v || atomic_fetch_sub(&v->refs, 1) != 1)
		return;
	sm_fabric_free(v->fabric);
	sm_lfts_free(v->lfts);
	free(v);
}

void smd_dmn_view_put(const struct smd_view *v)
{
	/* pub is the first member of struct dmn_view */
	view_unref((struct dmn_view *)(uintptr_t)v);
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
 * The routed hook of every plane (sm.h): copy the fabric and LFTs into a new
 * view and publish it. From plane threads; a copy that fails (ENOMEM) keeps
 * the previous view, which is only stale, never wrong about its own cycle.
 */
static void publish_view(void *arg, unsigned plane, const struct sm_fabric *f, const struct sm_lfts *lfts)
{
	struct smd_dmn *d = arg;
	struct dmn_view *v, *old;

	if (plane >= SM_MAX_PLANES || !(v = calloc(1, sizeof(*v))))
		return;
	atomic_init(&v->refs, 1);
	v->fabric = sm_fabric_new();
	if (!v->fabric || sm_fabric_append(v->fabric, f, NULL) || !(v->lfts = sm_lfts_dup(lfts))) {
		sm_fabric_free(v->fabric);
		free(v);
		return;
	}
	v->pub.plane = plane;
	v->pub.fabric = v->fabric;
	v->pub.lfts = v->lfts;
	v->pub.made_us = sm_mono_us();
	pthread_mutex_lock(&d->mu);
	v->pub.cycle = d->st.sweeps + 1;
	old = d->views[plane];
	d->views[plane] = v;
	pthread_mutex_unlock(&d->mu);
	view_unref(old);
}

/*
 * Merge the planes' copies and compute plane health. A plane brought up in
 * this cycle contributes its new copy (none if it failed before its LID
 * phase: it counts as empty); one that only ran a light sweep, finding
 * nothing, keeps the copy of its last heavy sweep. The copies are kept for
 * the next light cycle.
 */
static void cycle_health(struct smd_dmn *d, struct sm_planes_health *ph, char *err, size_t errlen)
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
		if (d->cap[i] && (rc = sm_fabric_append(all, d->cap[i], NULL)) == -EEXIST)
			snprintf(err, errlen, "plane %u shares node or port GUIDs with another plane", i);
	if (!rc)
		rc = sm_planes_health(all, NULL, ph);
	if (rc && !err[0])
		snprintf(err, errlen, "%s", strerror(-rc));
	sm_fabric_free(all);
}

/* sm_cfg.phase of every plane: where each bring-up is, for smctl's progress lines (plane threads). */
static void plane_phase(void *arg, unsigned plane, unsigned ph)
{
	struct smd_dmn *d = arg;

	if (plane >= SM_MAX_PLANES)
		return;
	pthread_mutex_lock(&d->mu);
	d->st.planes[plane].phase = (int)ph;
	pthread_mutex_unlock(&d->mu);
}

static void mp_cfg_from(struct sm_mp_cfg *mp, const struct smd_conf *conf, struct smd_dmn *d)
{
	memset(mp, 0, sizeof(*mp));
	sm_cfg_default(&mp->base);
	mp->base.lmc = (unsigned)conf->lmc;
	mp->base.subnet_prefix = conf->subnet_prefix;
	if (conf->mad.window)
		mp->base.txn.window = conf->mad.window;
	if (conf->mad.per_switch_window)
		mp->base.txn.per_dest = conf->mad.per_switch_window;
	if (conf->mad.timeout_ms)
		mp->base.txn.timeout_ms = conf->mad.timeout_ms;
	mp->base.txn.retries = conf->mad.retries;
	mp->retries = 1;
	/*
	 * The shared LID table is asked through our own hook (it also copies
	 * each plane's fabric for plane health), so mp->lids stays NULL: with
	 * it set, sm_multiplane_bringup() would install its own hook instead.
	 * The hook replaces the per-plane guid2lid file (sm.h), as with mp->lids.
	 */
	mp->base.state_dir = NULL;
	mp->base.guid2lid = NULL;
	mp->base.lid_want = capture_want;
	mp->base.lid_want_arg = d;
	mp->base.routed = publish_view;
	mp->base.routed_arg = d;
	mp->base.phase = plane_phase;
	mp->base.phase_arg = d;
	mp->base.keys = sm_keys_active(&d->keys) || d->keys.sm_key ? &d->keys : NULL;
}

/* Results of the cycle that just ended into the snapshot (d->mu held). */
static void snapshot(struct smd_dmn *d, double secs, const char *lids_err)
{
	struct smd_dmn_status *st = &d->st;
	struct smd_dmn_sweep sw;

	memset(&sw, 0, sizeof(sw));
	st->planes_up = 0;
	st->switches = st->cas = st->lids = 0;
	st->lft_blocks_written = st->portinfo_sets = 0;
	st->engine[0] = '\0';
	for (unsigned i = 0; i < d->n; i++) {
		const struct sm_mp_plane *p = &d->planes[i];
		struct smd_dmn_plane *sp = &st->planes[i];
		sp->swept = 1;
		sp->rc = p->rc;
		snprintf(sp->err, sizeof(sp->err), "%s", p->rc ? p->err : "");
		sp->last_heavy = p->heavy;
		sp->light = p->light;
		sw.smps += p->light.smps;
		if (p->light_ran && p->light_rc && !sw.change[0] && p->light.why[0])
			snprintf(sw.change, sizeof(sw.change), "plane %u: %s", i, p->light.why);
		if (p->heavy) {
			/* a light-only plane keeps the summary of its last bring-up */
			sp->attempts = p->attempts;
			sp->sum = p->sum;
			sp->seconds = p->end_s - p->start_s;
			sw.planes_heavy++;
			sw.planes_incremental += p->sum.incremental != 0;
			sw.smps += p->sum.txn.sent;
			sw.lft_blocks_written += p->sum.lft_blocks_written;
			sw.lft_blocks_read += p->sum.lft_blocks_read;
			sw.portinfo_sets += p->sum.portinfo_lid_sets + p->sum.portinfo_state_sets;
			sw.switchinfo_sets += p->sum.switchinfo_sets + p->sum.psc_cleared;
		} else if (p->light_ran && !p->rc) {
			sw.planes_light++;
		}
		/* per-plane totals for smctl metrics: every SMP of the cycle, light and heavy parts */
		sp->smps_total += p->light.smps + (p->heavy ? p->sum.txn.sent : 0);
		if (p->heavy) {
			sp->lft_blocks_total += p->sum.lft_blocks_written;
			sp->portinfo_sets_total += p->sum.portinfo_lid_sets + p->sum.portinfo_state_sets;
		}
		if (p->rc) {
			sp->cycles_failed++;
			continue;
		}
		sp->cycles_up++;
		st->planes_up++;
		st->switches += sp->sum.counts.switches;
		st->cas += sp->sum.counts.cas;
		st->lids += sp->sum.counts.lids;
		if (p->heavy) {
			st->lft_blocks_written += p->sum.lft_blocks_written;
			st->portinfo_sets += p->sum.portinfo_lid_sets + p->sum.portinfo_state_sets;
		}
		if (!st->engine[0] && sp->sum.engine)
			snprintf(st->engine, sizeof(st->engine), "%s", sp->sum.engine);
	}
	st->last = st->planes_up == d->n && d->n ? SMD_ST_UP : st->planes_up ? SMD_ST_DEGRADED : SMD_ST_DOWN;
	st->state = st->last;
	st->last_sweep_s = secs;
	st->last_end_us = sm_mono_us();
	st->cycle_start_us = 0;
	for (unsigned i = 0; i < SM_MAX_PLANES; i++)
		st->planes[i].phase = -1;
	snprintf(st->last_reason, sizeof(st->last_reason), "%s", d->reason ? d->reason : "");
	if (d->lids) {
		sm_plane_lids_stats(d->lids, &st->plane_lids);
		st->lids_open = 1;
	}
	snprintf(st->lids_err, sizeof(st->lids_err), "%s", lids_err);
	st->sweeps++;

	sw.seq = st->sweeps;
	snprintf(sw.kind, sizeof(sw.kind), "%s", sw.planes_heavy ? "heavy" : "light");
	snprintf(sw.reason, sizeof(sw.reason), "%s", st->last_reason);
	sw.escalated = d->light && sw.planes_heavy;
	sw.planes_up = st->planes_up;
	sw.seconds = secs;
	sw.end_us = st->last_end_us;
	if (sw.planes_heavy)
		st->heavy_sweeps++;
	else
		st->light_sweeps++;
	st->escalations += (uint64_t)sw.escalated;
	st->smps_total += sw.smps;
	st->lft_blocks_written_total += sw.lft_blocks_written;
	st->lft_blocks_read_total += sw.lft_blocks_read;
	st->portinfo_sets_total += sw.portinfo_sets;
	if (st->n_history == SMD_DMN_HISTORY)
		memmove(&st->history[0], &st->history[1], (SMD_DMN_HISTORY - 1) * sizeof(st->history[0]));
	else
		st->n_history++;
	st->history[st->n_history - 1] = sw;
}

static void run_cycle(struct smd_dmn *d)
{
	struct sm_mp_cfg mp;
	char err[512] = "", lerr[256] = "";
	uint64_t t0 = sm_mono_us();
	struct sm_fabric *prev[SM_MAX_PLANES];
	int any_heavy = 0;

	/* a plane that could not be opened gets another chance every cycle */
	for (unsigned i = 0; i < d->n; i++) {
		struct sm_mp_plane *p = &d->planes[i];
		if (p->t)
			continue;
		err[0] = '\0';
		if (smd_plane_open(p->name, &p->t, &d->mocks[i], err, sizeof(err)))
			snprintf(p->open_err, sizeof(p->open_err), "%s", err[0] ? err : "cannot open");
		else
			p->open_err[0] = '\0';
	}
	for (unsigned i = 0; i < d->n; i++) {
		d->planes[i].chain = d->cur->chains[i];
		d->planes[i].state = d->states[i];
		d->planes[i].force_heavy = 0;
		/* the LID hook of a heavy bring-up fills cap[i] anew */
		prev[i] = d->cap[i];
		d->cap[i] = NULL;
	}
	mp_cfg_from(&mp, d->cur->conf, d);
	mp.light = d->light != 0;
	/* light cycles that escalate and trap cycles patch the known fabric when they can */
	mp.base.incremental = d->incremental && d->cur->conf->incremental_sweep;
	char profile[4096];
	smd_dmn_get_profile(d, profile, sizeof(profile));
	mp.base.profile_path = profile[0] ? profile : NULL;
	sm_multiplane_bringup(d->planes, d->n, &mp);
	for (unsigned i = 0; i < d->n; i++) {
		if (d->planes[i].heavy) {
			any_heavy = 1;
			sm_fabric_free(prev[i]);
		} else {
			sm_fabric_free(d->cap[i]);
			d->cap[i] = prev[i];
		}
	}
	struct sm_planes_health *ph = NULL;
	char herr[128] = "";
	if (any_heavy) {
		ph = calloc(1, sizeof(*ph));
		if (ph)
			cycle_health(d, ph, herr, sizeof(herr));
		else
			snprintf(herr, sizeof(herr), "out of memory");
		if (d->lids) {
			int rc = sm_plane_lids_save(d->lids, lerr, sizeof(lerr));
			if (rc && !lerr[0])
				snprintf(lerr, sizeof(lerr), "%s", strerror(-rc));
		}
	} else {
		/* nothing was rediscovered: the last health and LID table stand */
		pthread_mutex_lock(&d->mu);
		snprintf(lerr, sizeof(lerr), "%s", d->st.lids_err);
		pthread_mutex_unlock(&d->mu);
	}
	double secs = (double)(sm_mono_us() - t0) / 1e6;
	int again = 0;
	for (unsigned i = 0; i < d->n; i++)
		again |= d->planes[i].heavy && d->planes[i].sum.late_traps;
	pthread_mutex_lock(&d->mu);
	snapshot(d, secs, lerr);
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
	 */
	for (unsigned i = 0; i < d->n; i++) {
		struct sm_mp_plane *p = &d->planes[i];
		d->unwatched[i] = 0;
		if (p->rc && p->t && !d->mocks[i]) {
			sm_transport_close(p->t);
			p->t = NULL;
		}
	}
}

/* Tell an idle worker to look at the state again (mu held or not). */
static void kick(struct smd_dmn *d)
{
	/* best effort: a full pipe wakes the worker just as well */
	(void)!write(d->kick[1], "k", 1);
}

/*
 * Unsolicited MADs that arrived on plane i's transport between cycles
 * (worker only). Every trap is repressed (as during a sweep, sm.c), so its
 * sender stops repeating it; a link state change (trap 128) or a trap that
 * does not decode asks for a cycle. Anything else (a late answer of the
 * last cycle) is dropped: the next cycle asks again anyway.
 * Returns 1 when a cycle is wanted, with a description in why; *nmads
 * counts what was read.
 */
static int idle_mads(struct smd_dmn *d, unsigned i, unsigned *nmads, unsigned *ntraps, char *why,
		     size_t whylen)
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
		/* SMInfo asked of us (smd/sm/sminfo.h): master once a cycle has brought the plane up */
		struct sm_sminfo_self self = {
			.guid = t->info.port_guid, .sm_key = d->keys.sm_key, .act_count = (uint32_t)d->st.sweeps,
			.state = d->st.sweeps && !d->planes[i].rc ? SM_SMSTATE_MASTER : SM_SMSTATE_DISCOVERING,
		};
		if (sm_sminfo_answer(&smp, &self, &rep) == 1) {
			if (!sm_smp_encode(&rep, out))
				(void)sm_transport_send(t, out, SM_MAD_SIZE, smp.mgmt_class == SM_CLASS_SMI_DR ?
							SM_PERMISSIVE_LID : from.slid, 0);
			continue;
		}
		if (smp.method != SM_METHOD_TRAP)
			continue;
		sm_smp_make_trap_repress(&smp, &rep);
		if (!sm_smp_encode(&rep, out))
			(void)sm_transport_send(t, out, SM_MAD_SIZE, from.slid, 0);
		(*ntraps)++;
		unsigned num;
		if (!sm_trap_wants_sweep(&smp, &num))
			continue;
		want = 1;
		if (num)
			snprintf(why, whylen, "plane %u: trap %u from LID %u", i, num, from.slid);
		else
			snprintf(why, whylen, "plane %u: undecodable trap from LID %u", i, from.slid);
	}
	return want;
}

/*
 * Wait (mu held on entry and exit, released meanwhile) until kicked, a
 * deadline passes, or a transport has something: traps between cycles.
 * Mock transports have no fd; they are not watched.
 */
static void idle_wait(struct smd_dmn *d)
{
	struct pollfd pf[SM_MAX_PLANES + 1];
	unsigned idx[SM_MAX_PLANES], n = 0;
	uint64_t now = sm_mono_us(), due = 0;
	int timeout = -1;

	for (unsigned i = 0; i < d->n; i++) {
		int fd = d->planes[i].t && !d->unwatched[i] ? sm_transport_fd(d->planes[i].t) : -1;
		if (fd < 0)
			continue;
		pf[n].fd = fd;
		pf[n].events = POLLIN;
		idx[n++] = i;
	}
	pf[n].fd = d->kick[0];
	pf[n].events = POLLIN;
	if (d->next_due_us)
		due = d->next_due_us;
	if (d->trap_due_us && (!due || d->trap_due_us < due))
		due = d->trap_due_us;
	if (due)
		timeout = due > now ? (int)((due - now) / 1000u) + 1 : 0;
	pthread_mutex_unlock(&d->mu);
	int rc = poll(pf, n + 1, timeout);
	char drain[64], why[128] = "";
	unsigned ntraps = 0;
	int trap = 0;
	while (read(d->kick[0], drain, sizeof(drain)) > 0)
		;
	for (unsigned k = 0; rc > 0 && k < n; k++) {
		unsigned got = 0;
		if (!(pf[k].revents & (POLLIN | POLLERR | POLLHUP)))
			continue;
		trap |= idle_mads(d, idx[k], &got, &ntraps, why, sizeof(why));
		/* an fd that stays ready with nothing to read would spin this loop */
		if (!got && (pf[k].revents & (POLLERR | POLLHUP)))
			d->unwatched[idx[k]] = 1;
	}
	pthread_mutex_lock(&d->mu);
	d->st.traps += ntraps;
	if (trap) {
		snprintf(d->st.last_trap, sizeof(d->st.last_trap), "%s", why);
		/* both ends of a link report it: give the burst a moment, then one cycle sees it all */
		if (!d->trap_due_us)
			d->trap_due_us = sm_mono_us() + (uint64_t)d->cur->conf->trap_holdoff_ms * 1000u;
	}
}

static void *worker_main(void *arg)
{
	struct smd_dmn *d = arg;

	pthread_mutex_lock(&d->mu);
	for (;;) {
		const char *reason = d->st.sweeps ? "request" : "start";
		while (!d->stop && d->requested <= d->st.sweeps) {
			uint64_t now = sm_mono_us();
			if (d->next_due_us && now >= d->next_due_us) {
				reason = "interval";
				break;
			}
			if (d->trap_due_us && now >= d->trap_due_us) {
				reason = "trap";
				break;
			}
			idle_wait(d);   /* unlocks while it waits */
		}
		/*
		 * Heavy: the first cycle, a trap (due or not yet: this cycle sees
		 * whatever it reported), a heavy request, new chains. Otherwise
		 * (interval, light request) light, escalating per plane.
		 */
		int heavy = !d->st.sweeps || d->trap_due_us || d->want_heavy;
		/* an explicit heavy request, the first cycle and new chains sweep in full */
		int incremental = !d->want_heavy && d->st.sweeps;
		int reread = d->want_reread;
		d->want_heavy = d->want_reread = 0;
		d->trap_due_us = 0;
		d->reason = reason;   /* published with the cycle's results (snapshot) */
		if (d->stop)
			break;
		struct dmn_gen *old = NULL;
		if (d->pending) {
			old = d->cur;
			d->cur = d->pending;
			d->pending = NULL;
			d->st.sweep_interval = d->cur->conf->sweep_interval;
			smd_conf_chain_str(d->cur->conf, d->st.chain, sizeof(d->st.chain));
			heavy = 1;   /* new engines (or their config): reroute */
			incremental = 0;
		}
		d->light = !heavy;
		d->incremental = incremental;
		if (reread)
			for (unsigned i = 0; i < d->n; i++)
				sm_state_forget(d->states[i]);
		d->running = 1;
		d->st.cycle_start_us = sm_mono_us();
		for (unsigned i = 0; i < SM_MAX_PLANES; i++)
			d->st.planes[i].phase = -1;
		if (d->st.sweeps)
			d->st.state = SMD_ST_SWEEPING;
		pthread_mutex_unlock(&d->mu);

		gen_free(old);
		run_cycle(d);

		pthread_mutex_lock(&d->mu);
		d->running = 0;
		unsigned iv = d->cur->conf->sweep_interval;
		/* a reload may have changed the interval meanwhile: it applies from the next wait */
		if (d->pending)
			iv = d->pending->conf->sweep_interval;
		d->next_due_us = iv ? sm_mono_us() + (uint64_t)iv * 1000000u : 0;
		/* best effort: a full pipe already tells the caller to look */
		(void)!write(d->wake[1], "x", 1);
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
	d->wake[0] = d->wake[1] = d->kick[0] = d->kick[1] = -1;
	pthread_mutex_init(&d->mu, NULL);
	d->n = cfg->n_specs;
	d->note = cfg->note;
	d->note_arg = cfg->note_arg;
	d->st.n_planes = d->n;
	d->st.start_us = sm_mono_us();
	d->st.sweep_interval = conf->sweep_interval;
	smd_conf_chain_str(conf, d->st.chain, sizeof(d->st.chain));
	if (pipe2(d->wake, O_CLOEXEC | O_NONBLOCK) < 0 || pipe2(d->kick, O_CLOEXEC | O_NONBLOCK) < 0) {
		rc = -errno;
		snprintf(err, errlen, "pipe: %s", strerror(errno));
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
	rc = sm_plane_lids_open(conf->state_dir, (unsigned)conf->lmc, cfg->note, cfg->note_arg, &d->lids, lerr, sizeof(lerr));
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
	for (unsigned i = 0; i < d->n; i++) {
		struct sm_mp_plane *p = &d->planes[i];
		if ((rc = sm_state_new(&d->states[i]))) {
			snprintf(err, errlen, "out of memory");
			goto fail;
		}
		snprintf(p->name, sizeof(p->name), "%s", cfg->specs[i]);
		snprintf(d->st.planes[i].spec, sizeof(d->st.planes[i].spec), "%s", cfg->specs[i]);
		p->index = i;
		if (cfg->note) {
			d->note_ctx[i].d = d;
			d->note_ctx[i].plane = i;
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
		kick(d);
		pthread_mutex_unlock(&d->mu);
		pthread_join(d->worker, NULL);
	}
	if (d->lids)
		(void)sm_plane_lids_save(d->lids, err, sizeof(err));   /* saved after each cycle already */
	for (unsigned i = 0; i < d->n; i++) {
		sm_transport_close(d->planes[i].t);
		sm_mock_free(d->mocks[i]);
		sm_fabric_free(d->cap[i]);
		sm_state_free(d->states[i]);
	}
	for (unsigned i = 0; i < SM_MAX_PLANES; i++)
		view_unref(d->views[i]);   /* a reader still holding one keeps it alive */
	gen_free(d->pending);
	gen_free(d->cur);
	sm_plane_lids_free(d->lids);
	sm_registry_free(d->reg);
	for (int i = 0; i < 2; i++) {
		if (d->wake[i] >= 0)
			close(d->wake[i]);
		if (d->kick[i] >= 0)
			close(d->kick[i]);
	}
	pthread_mutex_destroy(&d->mu);
	free(d);
}

int smd_dmn_wake_fd(const struct smd_dmn *d)
{
	return d->wake[0];
}

void smd_dmn_drain(struct smd_dmn *d)
{
	char buf[64];
	while (read(d->wake[0], buf, sizeof(buf)) > 0)
		;
}

void smd_dmn_status(struct smd_dmn *d, struct smd_dmn_status *st)
{
	pthread_mutex_lock(&d->mu);
	*st = d->st;
	st->requested = d->requested;
	pthread_mutex_unlock(&d->mu);
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
	target = d->st.sweeps + (d->running ? 2 : 1);
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
	int planes_differ = conf->n_planes != cur->n_planes;
	for (unsigned i = 0; !planes_differ && i < conf->n_planes; i++)
		planes_differ = strcmp(conf->planes[i], cur->planes[i]) != 0;
	const struct { int differs; const char *what; } fixed[] = {
		{ planes_differ, "planes" },
		{ str_differs(conf->socket, cur->socket), "socket" },
		{ str_differs(conf->state_dir, cur->state_dir), "state_dir" },
		{ str_differs(conf->plugin_dir, cur->plugin_dir), "plugin_dir" },
		{ conf->lmc != cur->lmc, "lmc (the LID table keeps its LMC)" },
		{ conf->keys.mkey_mode != cur->keys.mkey_mode || conf->keys.mkey != cur->keys.mkey ||
		  conf->keys.protect_bits != cur->keys.protect_bits ||
		  conf->keys.lease_period != cur->keys.lease_period ||
		  conf->keys.smkey_mode != cur->keys.smkey_mode || conf->keys.sm_key != cur->keys.sm_key,
		  "m_key/sm_key settings" },
		{ str_differs(conf->user, cur->user) || str_differs(conf->group, cur->group), "user/group" },
	};
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		if (fixed[i].differs && off < notes_len)
			off += (size_t)snprintf(notes + off, notes_len - off, "%s%s", off ? ", " : "",
						fixed[i].what);
	old = d->pending;
	d->pending = g;
	/* a new interval counts from now, so shortening it takes effect at once */
	d->next_due_us = conf->sweep_interval && !d->running ?
		sm_mono_us() + (uint64_t)conf->sweep_interval * 1000000u : d->next_due_us;
	if (!conf->sweep_interval && !d->running)
		d->next_due_us = 0;
	kick(d);
	pthread_mutex_unlock(&d->mu);
	gen_free(old);   /* never swapped in: nobody used its chains */
	return 0;
}

void smd_dmn_status_line(const struct smd_dmn_status *st, char *buf, size_t len)
{
	if (!st->sweeps) {
		snprintf(buf, len, "starting: first sweep of %u plane%s", st->n_planes, st->n_planes == 1 ? "" : "s");
		return;
	}
	snprintf(buf, len, "%u/%u planes up, %u switches, %u CAs, last sweep %.2f s (%llu sweeps)",
		 st->planes_up, st->n_planes, st->switches, st->cas, st->last_sweep_s,
		 (unsigned long long)st->sweeps);
}

void smd_dmn_status_json(struct sm_json *j, const struct smd_dmn_status *st)
{
	uint64_t now = sm_mono_us();

	sm_json_str(j, "state", smd_dmn_state_name(st->state));
	sm_json_str(j, "last_result", st->sweeps ? smd_dmn_state_name(st->last) : NULL);
	sm_json_uint(j, "planes", st->n_planes);
	sm_json_uint(j, "planes_up", st->planes_up);
	sm_json_uint(j, "switches", st->switches);
	sm_json_uint(j, "cas", st->cas);
	sm_json_uint(j, "lids", st->lids);
	sm_json_uint(j, "sweeps", st->sweeps);
	sm_json_str(j, "last_reason", st->last_reason[0] ? st->last_reason : NULL);
	sm_json_uint(j, "traps", st->traps);
	sm_json_str(j, "last_trap", st->last_trap[0] ? st->last_trap : NULL);
	sm_json_str(j, "engine", st->engine[0] ? st->engine : st->chain);
	sm_json_str(j, "chain", st->chain);
	sm_json_uint(j, "sweep_interval", st->sweep_interval);
	sm_json_double(j, "last_sweep_s", st->last_sweep_s);
	if (st->last_end_us)
		sm_json_double(j, "last_sweep_age_s", (double)(now - st->last_end_us) / 1e6);
	else
		sm_json_null(j, "last_sweep_age_s");
	sm_json_uint(j, "lft_blocks_written", st->lft_blocks_written);
	sm_json_uint(j, "portinfo_sets", st->portinfo_sets);
	sm_json_double(j, "uptime_s", (double)(now - st->start_us) / 1e6);
	/* how long the running cycle has been going (smctl progress), null when idle */
	if (st->cycle_start_us)
		sm_json_double(j, "sweep_running_s", (double)(now - st->cycle_start_us) / 1e6);
	else
		sm_json_null(j, "sweep_running_s");
	if (st->cycle_start_us) {
		/* the phase each plane's bring-up is in (null: not in one: light sweep, waiting, done) */
		sm_json_arr_begin(j, "sweep_phases");
		for (unsigned i = 0; i < st->n_planes; i++)
			sm_json_str(j, NULL, st->planes[i].phase >= 0 ? sm_phase_name((unsigned)st->planes[i].phase) : NULL);
		sm_json_arr_end(j);
	} else {
		sm_json_null(j, "sweep_phases");
	}
	sm_json_str(j, "lid_table_error", st->lids_err[0] ? st->lids_err : NULL);
	sm_json_uint(j, "pid", (uint64_t)getpid());
	sm_json_uint(j, "light_sweeps", st->light_sweeps);
	sm_json_uint(j, "heavy_sweeps", st->heavy_sweeps);
	sm_json_uint(j, "escalations", st->escalations);
	sm_json_uint(j, "smps_total", st->smps_total);
	sm_json_uint(j, "lft_blocks_written_total", st->lft_blocks_written_total);
	sm_json_uint(j, "lft_blocks_read_total", st->lft_blocks_read_total);
	sm_json_uint(j, "portinfo_sets_total", st->portinfo_sets_total);
	if (st->n_history)
		smd_dmn_sweep_json(j, "last_sweep", &st->history[st->n_history - 1]);
	else
		sm_json_null(j, "last_sweep");
	sm_json_arr_begin(j, "sweep_history");
	for (unsigned i = 0; i < st->n_history; i++)
		smd_dmn_sweep_json(j, NULL, &st->history[i]);
	sm_json_arr_end(j);
}

void smd_dmn_sweep_json(struct sm_json *j, const char *name, const struct smd_dmn_sweep *sw)
{
	uint64_t now = sm_mono_us();

	sm_json_obj_begin(j, name);
	sm_json_uint(j, "seq", sw->seq);
	sm_json_str(j, "kind", sw->kind);
	sm_json_str(j, "reason", sw->reason);
	sm_json_bool(j, "escalated", sw->escalated);
	sm_json_str(j, "change", sw->change[0] ? sw->change : NULL);
	sm_json_uint(j, "planes_light", sw->planes_light);
	sm_json_uint(j, "planes_heavy", sw->planes_heavy);
	sm_json_uint(j, "planes_incremental", sw->planes_incremental);
	sm_json_uint(j, "planes_up", sw->planes_up);
	sm_json_double(j, "seconds", sw->seconds);
	sm_json_double(j, "age_s", now > sw->end_us ? (double)(now - sw->end_us) / 1e6 : 0.0);
	sm_json_uint(j, "smps", sw->smps);
	sm_json_uint(j, "lft_blocks_written", sw->lft_blocks_written);
	sm_json_uint(j, "lft_blocks_read", sw->lft_blocks_read);
	sm_json_uint(j, "portinfo_sets", sw->portinfo_sets);
	sm_json_uint(j, "switchinfo_sets", sw->switchinfo_sets);
	sm_json_obj_end(j);
}

void smd_dmn_planes_json(struct sm_json *j, const struct smd_dmn_status *st)
{
	sm_json_uint(j, "sweeps", st->sweeps);
	sm_json_arr_begin(j, "planes");
	for (unsigned i = 0; i < st->n_planes; i++) {
		const struct smd_dmn_plane *p = &st->planes[i];
		const struct sm_summary *s = &p->sum;
		sm_json_obj_begin(j, NULL);
		sm_json_uint(j, "index", i);
		sm_json_str(j, "spec", p->spec);
		sm_json_str(j, "state", !p->swept ? "not swept" : p->rc ? "failed" : "up");
		sm_json_str(j, "error", p->swept && p->rc ? p->err : NULL);
		sm_json_uint(j, "attempts", p->attempts);
		sm_json_uint(j, "cycles_up", p->cycles_up);
		sm_json_uint(j, "cycles_failed", p->cycles_failed);
		sm_json_uint(j, "switches", s->counts.switches);
		sm_json_uint(j, "cas", s->counts.cas);
		sm_json_uint(j, "lids", s->counts.lids);
		sm_json_uint(j, "active_ports", s->active_ports);
		sm_json_uint(j, "link_ports", s->link_ports);
		sm_json_uint(j, "sweeps", s->sweeps);
		sm_json_uint(j, "smps_sent", s->txn.sent);
		sm_json_uint(j, "lft_blocks_written", s->lft_blocks_written);
		sm_json_uint(j, "portinfo_sets", s->portinfo_lid_sets + s->portinfo_state_sets);
		sm_json_uint(j, "sm_lid", s->sm_lid);
		sm_json_str(j, "engine", s->engine);
		sm_json_double(j, "seconds", p->seconds);
		sm_json_str(j, "last_kind", !p->swept ? NULL : p->last_heavy ? "heavy" : "light");
		sm_json_uint(j, "light_smps", p->light.smps);
		sm_json_str(j, "light_change", p->light.why[0] ? p->light.why : NULL);
		sm_json_uint(j, "lft_blocks_read", s->lft_blocks_read);
		sm_json_uint(j, "lft_switches_trusted", s->lft_switches_trusted);
		sm_json_obj_end(j);
	}
	sm_json_arr_end(j);
	if (st->lids_open) {
		sm_json_obj_begin(j, "plane_lids");
		sm_json_uint(j, "keys", st->plane_lids.keys);
		sm_json_uint(j, "from_table", st->plane_lids.from_table);
		sm_json_uint(j, "inherited", st->plane_lids.inherited);
		sm_json_uint(j, "fresh", st->plane_lids.fresh);
		sm_json_uint(j, "conflicts", st->plane_lids.conflicts);
		sm_json_obj_end(j);
	}
	if (st->health_ok)
		sm_planes_health_json(j, "health", &st->health);
	else
		sm_json_null(j, "health");
	sm_json_str(j, "health_error", st->health_err[0] ? st->health_err : NULL);
}
