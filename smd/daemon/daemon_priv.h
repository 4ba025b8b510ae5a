/* SPDX-License-Identifier: MIT */
#ifndef SMD_DAEMON_PRIV_H
#define SMD_DAEMON_PRIV_H
/*
 * DOC: the daemon's private state, shared by its files (daemon.c: lifecycle and
 * the worker's cycle; view.c: the per-plane views and plane health; status.c:
 * the status snapshot and its JSON). See daemon.c for the locking rules.
 */
#include "daemon/daemon.h"
#include "config/smdconf.h"
#include "sm/multiplane.h"
#include "sm/mkey.h"
#include "sm/neighbours.h"
#include "mad/open.h"
#include "sm/snapshot.h"
#include "routing/registry.h"

#include <pthread.h>
#include <stdatomic.h>

struct dmn_gen {                     /* a config and the chains built from it */
	struct smd_conf *conf;
	struct sm_chain *chains[SM_MAX_PLANES];
	int keys_new;                    /* a reload's new M_Keys (derived secrets), d->keys from its cycle on */
	struct sm_keys keys;
};

struct dmn_view {                    /* struct smd_view plus the snapshot it shows */
	struct smd_view pub;
	atomic_uint refs;
	const struct sm_snapshot *snap;  /* one reference; pub.fabric and pub.lfts are its */
};

struct dmn_note {
	struct smd_dmn *d;
	unsigned plane;
};

struct smd_dmn {
	pthread_mutex_t mu;
	pthread_cond_t cv;           /* loop -> worker: go or stop */
	pthread_t worker;
	int worker_started;
	int stop;
	atomic_int stopping;         /* = stop, read lock-free by the transaction engines (txn.h cfg.stop) */
	int go;                      /* the loop told the worker to run the cycle it prepared */
	int done;                    /* the worker finished a cycle the loop has not taken back yet */
	int in_worker;               /* from go to the loop taking done: the worker owns the planes */
	int running;                 /* a cycle is in progress */
	uint64_t requested;          /* run cycles until st.cycles reaches this */
	uint64_t next_due_us;        /* periodic cycle, 0 = none */
	uint64_t trap_due_us;        /* cycle asked for by a trap (after a short hold-off), 0 = none */
	int want_heavy;              /* the next cycle is heavy (request, trap) */
	int want_reread;             /* ... and forgets the LFTs the states remember */
	/*
	 * Planes another SM mastered (ha.c): their LIDs are kept as that SM
	 * assigned them instead of aligned with the other planes (view.c
	 * dmn_capture_want), so taking one over moves no LID.
	 */
	bool adopted[SM_MAX_PLANES];
	struct dmn_gen *pending;     /* handed over by reconfigure, swapped in by the worker */
	struct smd_dmn_status st;

	/* the worker's during a cycle (in_worker), the loop thread's between cycles */
	struct dmn_gen *cur;
	const char *reason;          /* why the running cycle runs (static string) */
	int light;                   /* the running cycle is a light one */
	int incremental;             /* ... may sweep incrementally (light, trap) */
	int mc_only;                 /* ... is for multicast groups alone (mcast.c: the MFT-only pass) */
	struct sm_state *states[SM_MAX_PLANES];  /* per plane, across cycles (sm.h) */
	struct sm_registry *reg;
	struct sm_plane_lids *lids;
	struct sm_keys keys;         /* M_Key/SM_Key, decided at start, derived secrets on reloads (smd/sm/mkey.h) */
	/* derived M_Keys at protect bits 2-3 (sm/neighbours.h): the worker's during a cycle, changed under mu */
	struct sm_nbr nbr;
	int nbr_on;
	char nbr_path[4200];
	unsigned n;
	struct sm_mp_plane planes[SM_MAX_PLANES];
	struct sm_plane_port ports[SM_MAX_PLANES];    /* planes[i].t and what is behind it (mad/open.h) */
	const struct sm_snapshot *cap[SM_MAX_PLANES];  /* this cycle's snapshot per plane, for health (plane threads) */
	sm_note_fn *note;
	void *note_arg;
	struct dmn_note note_ctx[SM_MAX_PLANES];

	struct dmn_view *views[SM_MAX_PLANES];  /* last successful bring-up per plane (d->mu) */
	int wake[2];                 /* pipe: worker and other threads -> the loop ("look at the state") */

	/* the loop thread's only (loop.h) */
	struct sm_loop *loop;        /* cfg.loop, or own_loop */
	struct sm_loop *own_loop;    /* cfg.loop NULL: made here, run by smd_dmn_drain() */
	struct sm_loop_src *src_wake, *src_interval, *src_trap;
	struct sm_loop_src *src_mad[SM_MAX_PLANES];   /* idle planes' MAD fds; NULL: not watched */
	void (*done_fn)(void *arg);  /* cfg.cycle_done */
	void *done_arg;
	struct dmn_ha *ha;           /* master/standby per plane (daemon/ha.c), the loop thread's */
	char profile[4096];          /* traffic profile for the engines, "" none (d->mu); see daemon_profile.c */

	/* each plane's SA (sa.c): made and freed on the loop's thread, worker idle; d->mu for readers */
	struct sm_sa *sa[SM_MAX_PLANES];
	char sa_err[SM_MAX_PLANES][160];   /* why a plane has no SA, "" none */

	/* mock planes' fault injection as last applied from the config (cmd_fault.c; worker's during a cycle) */
	struct smd_conf_mock mock_applied[SM_MAX_PLANES];
	uint8_t mock_set[SM_MAX_PLANES];

	/*
	 * Multicast (mcast.c): the partitions the SAs start from (the default
	 * until the partitions file is read), each plane's newest group set
	 * (from the start, then from its SA; d->mu), and the generation its
	 * MFTs were last programmed with (the worker's). A newer set asks for a
	 * cycle (mc_due_us) that runs the MFT-only pass on that plane. The
	 * loop thread's: the SA's generation last taken, the SM's LID (issuer
	 * of traps 66/67), whether mcast[] is still the start set.
	 */
	struct sm_partitions *parts;
	struct sm_mc_set *mcast[SM_MAX_PLANES];
	uint64_t mc_ran_gen[SM_MAX_PLANES];
	uint64_t mc_seen[SM_MAX_PLANES];
	uint16_t mc_sm_lid[SM_MAX_PLANES];
	uint8_t mc_fresh[SM_MAX_PLANES];
	uint64_t mc_due_us;          /* a cycle for new sets, after trap_holdoff_ms (joins come in bursts); 0 none */
};

/* daemon.c: read the MADs waiting on plane i now, as if its fd were readable (loop thread, worker idle) */
void dmn_plane_mads(struct smd_dmn *d, unsigned i);
/* cmd_fault.c: the config's mock keys onto the open mock planes (worker, in run_cycle) */
void dmn_mock_conf_apply(struct smd_dmn *d);
/* view.c */
int dmn_capture_want(void *arg, const struct sm_fabric *f, unsigned plane, const uint16_t *cur,
		     uint16_t *want);
void dmn_publish_view(void *arg, const struct sm_snapshot *snap);
void dmn_view_unref(struct dmn_view *v);
void dmn_cycle_health(struct smd_dmn *d, struct sm_planes_health *ph, char *err, size_t errlen);
/* sa.c (loop thread, worker idle; dmn_sa_status: d->mu held) */
void dmn_sa_cycle_done(struct smd_dmn *d);
void dmn_sa_free_all(struct smd_dmn *d);
void dmn_sa_status(struct smd_dmn *d, struct smd_dmn_status *st);
/*
 * A trap the SM read (between cycles on the loop, during one from the
 * plane's thread: sm_cfg.trap; d->sa[] does not change while either runs):
 * a trap 128 goes to the plane's SA, which Reports it to its subscribers.
 */
void dmn_sa_trap(void *arg, unsigned plane, const struct sm_smp *smp, uint16_t slid);
/* The election's state or its table of other SMs changed: the plane's SA is told (SMInfoRecord). */
void dmn_sa_self_changed(struct smd_dmn *d, unsigned plane);
/* mcast.c: the start sets (smd_dmn_new), a cycle's sets taken and given back (worker), freed (free) */
int dmn_mc_start(struct smd_dmn *d, const struct smd_conf *conf, char *err, size_t errlen);
void dmn_mc_cycle_begin(struct smd_dmn *d);
void dmn_mc_cycle_end(struct smd_dmn *d);
void dmn_mc_free(struct smd_dmn *d);
/* ... and plane i's SA: its config, made, a snapshot published to it, status (loop thread; d->mu for status) */
struct sm_sa_cfg;
struct sm_sa;
void dmn_mc_sa_cfg(struct smd_dmn *d, unsigned i, struct sm_sa_cfg *cfg);
void dmn_mc_sa_opened(struct smd_dmn *d, unsigned i, struct sm_sa *sa);
void dmn_mc_published(struct smd_dmn *d, unsigned i);
/* A reload brought conf: the SAs' well-known groups follow its partitions (loop thread) */
void dmn_mc_reconfig(struct smd_dmn *d, const struct smd_conf *conf);
void dmn_mc_status(struct smd_dmn *d, unsigned i, struct smd_dmn_sa *s);
/* status.c */
void dmn_plane_phase(void *arg, unsigned plane, unsigned ph);
void dmn_snapshot(struct smd_dmn *d, double secs, const char *lids_err);
/* A cycle's part of a plane's metrics totals (cmd_metrics.c; under d->mu, from dmn_snapshot). */
void dmn_metrics_cycle(struct smd_dmn_plane *sp, const struct sm_mp_plane *p);

#endif
