/* SPDX-License-Identifier: MIT */
#ifndef SMD_DAEMON_H
#define SMD_DAEMON_H
/*
 * DOC: the long-running SM (core of `smd -f`)
 *
 * Owns: one transport per plane (opened by the first cycle, in the worker,
 * and kept open; a plane whose transport could not be opened, or whose
 * cycle failed, is (re)opened at the start of the next cycle, except mock
 * planes, whose transport is their fabric), the mocks behind mock: planes, one routing chain per plane, the
 * shared plane-consistent LID table (planelid.h, persisted in state_dir
 * after every cycle), the running config, and a worker thread that runs
 * sweep cycles.
 *
 * A cycle is one sm_multiplane_bringup() over all planes, light or heavy.
 * Each plane keeps a struct sm_state (sm.h) across cycles: the fabric, DR
 * paths, LIDs and the LFT blocks as programmed, so a heavy cycle of a
 * configured fabric reads no LFT block back (only switches that are new or
 * rebooted are read) and writes only the blocks whose entries change; a
 * changed fabric is repaired.
 *   light  every sweep_interval seconds (0: never), and on
 *          smd_dmn_request_sweep_kind(SMD_SWEEP_LIGHT) (smctl resweep):
 *          one SwitchInfo per known switch (PortStateChange, LinearFDBTop);
 *          a plane where that shows a change (or
 *          that has no valid state: never up, failed last time) is brought
 *          up heavy in the same cycle ("escalated").
 *   heavy  the first cycle, after a trap 128, after a reload swapped in new
 *          chains, on smd_dmn_request_sweep() and
 *          smd_dmn_request_sweep_kind(SMD_SWEEP_HEAVY / SMD_SWEEP_REREAD):
 *          every plane rediscovered, rerouted (engines keep their state, so
 *          ftree moves only displaced routes) and reprogrammed where needed.
 * Between cycles the loop (cfg.loop, lib/loop.h) watches every plane's
 * transport fd (a umad fd under umad2sim is checked every 50 ms, see
 * loop.h), answers SMInfo and represses every trap, and a link state change (trap 128) starts a heavy
 * cycle trap_holdoff_ms (config, default 10) later (both ends of a link
 * trap; one cycle then sees the whole change). Trap and light-escalated
 * cycles sweep incrementally (sm_cfg.incremental: only the switches that
 * flag PortStateChange are read port by port); traps that arrive during an
 * incremental sweep start another cycle at once.
 *
 * Threads: the loop's thread decides when a cycle runs (requests, the
 * sweep_interval timer, the trap hold-off timer) and tells the worker,
 * which runs it and reports back through a pipe the loop watches
 * (cfg.cycle_done is then called on the loop's thread). Everybody reads a
 * snapshot (smd_dmn_status) copied under a mutex, so status answers never
 * wait for a sweep.
 *
 * Reconfiguration (BIRD-style): the caller parses and validates a new
 * config, smd_dmn_reconfigure() builds new chains from it (failure: the old
 * config stays, nothing changes) and hands them to the worker, which swaps
 * them in at the start of its next cycle. Planes, socket and state_dir are
 * fixed for the daemon's life (a change is reported in err, the rest
 * applies).
 *
 * Plane health: each heavy bring-up's snapshot of its plane (smd/sm/snapshot.h,
 * the one copy of the discovered fabric that the state and the views share)
 * is held by reference (see smd_dmn_status.health); after a cycle in which
 * some plane was brought up, the snapshots' fabrics are merged and
 * sm_planes_health() runs. A reference is kept until its plane's next heavy
 * bring-up (a light-only plane contributes its last one).
 *
 * Library code: nothing is logged. Notes of the planes go to the note
 * callback given at creation (called from plane threads).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "model/fabric.h"
#include "sm/sm.h"
#include "sm/planelid.h"
#include "model/hosts.h"
#include "sa/server.h"

struct smd_conf;
struct smd_dmn;

#define SMD_DMN_TRAP_HOLDOFF_MS 10    /* default of the trap_holdoff_ms key (SMD_CONF_TRAP_HOLDOFF_MS) */

enum smd_dmn_state { SMD_ST_STARTING, SMD_ST_SWEEPING, SMD_ST_UP, SMD_ST_DEGRADED, SMD_ST_DOWN };
const char *smd_dmn_state_name(enum smd_dmn_state st);

struct smd_dmn_plane {
	char spec[280];
	int swept;              /* has been through at least one cycle */
	int rc;                 /* last cycle: 0 up, negative errno */
	char err[512];
	unsigned attempts;      /* last heavy cycle */
	uint64_t cycles_up, cycles_failed;
	struct sm_summary sum;  /* last heavy bring-up of the plane (sum.engine is a static string) */
	/* the plane's part of the last cycle */
	int last_heavy;         /* 1: brought up; 0: light sweep only, found nothing */
	struct sm_light_summary light;  /* its light sweep (zero if none ran) */
	double seconds;
	/* since the daemon started, all cycles, light and heavy parts (smctl metrics) */
	uint64_t smps_total, lft_blocks_total, portinfo_sets_total;
	uint64_t portcfg_sets_total, pkey_blocks_total, mft_blocks_total;   /* the same, smd_dmn_sweep's */
	int phase;              /* while a cycle runs: enum sm_phase its bring-up is in, -1 none (smctl progress) */
	/* metrics (daemon/cmd_metrics.c): every SMP transaction since the daemon started, light and
	 * heavy parts, and M_Key as the plane's last full discovery saw it (mkey_seen 0: none yet) */
	struct sm_txn_stats txn_total;
	int mkey_seen;
	uint32_t mkey_foreign;
	uint64_t mkey_violations;
	struct {                /* master/standby election (daemon/ha.c); elected 0: mock plane, always master */
		uint8_t elected, state, priority, master_priority;   /* state: enum sm_sm_state */
		uint16_t master_lid;
		uint64_t master_guid;
		unsigned long takeovers, handovers, refused, damped;
		uint64_t guid;      /* this SM's port GUID and LID in the plane (0: not known yet) */
		uint16_t lid;
	} role;
};

/*
 * What one cycle did (status "last_sweep", "sweep_history"; metrics).
 * Counters are sums over all planes of that cycle, light and heavy parts.
 */
#define SMD_DMN_HISTORY 16
struct smd_dmn_sweep {
	uint64_t seq;                 /* value of `cycles` once it completed (1 = first) */
	char kind[12];                /* "light": only light sweeps ran; "heavy": some plane was brought up;
	                               * "multicast": only MFT-only passes (groups changed) */
	char reason[16];              /* start, interval, request, trap (as last_reason) */
	int escalated;                /* asked for light, a change made it heavy */
	char change[192];             /* first change a light sweep saw ("plane 0: switch ..."), "" none */
	unsigned planes_light;        /* planes that ran only a light sweep (nothing changed) */
	unsigned planes_heavy;        /* planes brought up */
	unsigned planes_incremental;  /* ... of which by the incremental sweep (no full discovery) */
	unsigned planes_up;
	double seconds;               /* wall time of the cycle */
	uint64_t end_us;              /* monotonic time it ended */
	uint64_t smps;                /* SMPs sent (first tries and retries) */
	uint64_t lft_blocks_written;
	uint64_t lft_blocks_read;     /* read back (switches the state did not know) */
	uint64_t portinfo_sets;       /* LID/SM LID/prefix and ARMED/ACTIVE Sets */
	uint64_t switchinfo_sets;     /* LinearFDBTop Sets and PortStateChange clears */
	uint64_t portcfg_sets;        /* port configuration: PortInfo (MTU, VLs...), SL2VL and VLArb Sets */
	uint64_t pkey_blocks_written; /* P_Key table blocks written (partitions) */
	uint64_t mft_blocks_written;  /* MFT blocks written (bring-ups and MFT-only passes) */
};

/* A plane's SA (status "sa", metrics smd_sa_*). */
struct smd_dmn_sa {
	int open;                     /* answering */
	char err[160];                /* why not, "" none */
	struct sm_sa_stats stats;
	uint64_t mc_groups, mc_members;   /* multicast groups of the plane's newest set, their members */
};

struct smd_dmn_status {
	enum smd_dmn_state state;     /* see ctl.h "status" */
	enum smd_dmn_state last;      /* result of the last completed cycle (STARTING before one) */
	uint64_t cycles;              /* cycles completed, sweeps and multicast cycles: what waits count */
	uint64_t mcast_cycles;        /* ... of which multicast cycles (kind "multicast": MFT-only passes) */
	char last_reason[16];         /* why the last completed cycle ran: start, request, interval, trap */
	uint64_t traps;               /* traps received between cycles (each repressed) */
	char last_trap[128];          /* the last one that asked for a cycle, "" none */
	uint64_t requested;           /* cycles asked for (internal, for waiting) */
	unsigned n_planes, planes_up;
	unsigned planes_standby;      /* planes another SM masters (left out of the last cycle) */
	uint32_t switches, cas, lids; /* sums over the planes of the last cycle */
	uint64_t lft_blocks_written;  /* last cycle, all planes */
	uint64_t portinfo_sets;       /* last cycle, all planes */
	char engine[32];              /* engine that routed the first plane that came up */
	char chain[256];
	unsigned sweep_interval;
	double last_sweep_s;          /* duration of the last cycle */
	uint64_t last_end_us;         /* monotonic time the last cycle ended, 0 none */
	uint64_t start_us;
	int lids_open;
	struct sm_plane_lids_stats plane_lids;
	char lids_err[256];           /* last failure saving the LID table, "" none */
	struct sm_plane_lids_save lids_save;   /* the last cycle's save (retried with back-off) */
	struct smd_dmn_plane planes[SM_MAX_PLANES];
	/*
	 * Plane health of the last cycle (hosts.h), computed on the fabrics as
	 * discovered in that cycle (a copy is taken at each plane's LID phase,
	 * the point where its topology is final). A plane not discovered in the
	 * cycle counts as empty. health_ok 0: not computed (health_err says why).
	 */
	int health_ok;
	char health_err[128];
	struct sm_planes_health health;
	/* sweeps by kind (since start; a light cycle that escalated counts as heavy; not the multicast cycles) */
	uint64_t light_sweeps, heavy_sweeps, escalations;
	/* totals since start, all cycles and planes */
	uint64_t smps_total, lft_blocks_written_total, lft_blocks_read_total, portinfo_sets_total;
	uint64_t portcfg_sets_total, pkey_blocks_written_total, mft_blocks_written_total;
	/* the last n_history cycles, oldest first; history[n_history - 1] is the last one */
	unsigned n_history;
	struct smd_dmn_sweep history[SMD_DMN_HISTORY];
	uint64_t cycle_start_us;      /* monotonic start of the running cycle, 0 when idle (smctl progress) */
	struct smd_dmn_sa sa[SM_MAX_PLANES];
	/*
	 * Planes whose last heavy sweep was incomplete (planes[i].sum.incomplete:
	 * answers lost, sm.h): not up; swept heavy by every cycle, and by one
	 * due after a back-off (redo_wait_ms, doubling from 1 s to 30 s),
	 * until one is complete.
	 */
	unsigned planes_incomplete;
	uint64_t incomplete_sweeps;   /* heavy plane sweeps that were incomplete, since start */
	uint64_t redo_due_us;         /* the next of those heavy sweeps, 0 none */
	uint32_t redo_wait_ms;
};

struct sm_loop;
struct smd_dmn_cfg {
	const char *const *specs;     /* plane specs (mock:DUMP, ibsim:NODE, umad[:CA[:PORT]]) */
	unsigned n_specs;
	sm_note_fn *note;             /* plane notes, called from plane threads; may be NULL */
	void *note_arg;
	/*
	 * The loop (lib/loop.h) the daemon's fds and timers join; the thread
	 * that runs it is the one that calls smd_dmn_new() and smd_dmn_free().
	 * NULL: the daemon makes its own, which smd_dmn_drain() runs.
	 */
	struct sm_loop *loop;
	void (*cycle_done)(void *arg);   /* on the loop's thread after each cycle; may be NULL */
	void *cycle_arg;
};

/*
 * Open planes, chains and the LID table; start the worker, which begins
 * the first cycle at once. On success the daemon owns conf (freed by
 * smd_dmn_free() or after a reconfigure replaced it); on failure the
 * caller still owns it. A plane that cannot be opened is not an error (it
 * is reported per plane and retried each cycle); a chain, LID-table or
 * thread error is: negative errno with err.
 */
int smd_dmn_new(struct smd_conf *conf, const struct smd_dmn_cfg *cfg, struct smd_dmn **out,
		char *err, size_t errlen);
/*
 * Stop the worker: a running cycle is cut short (its transactions end with
 * -ECANCELED within about 100 ms, txn.h cfg.stop; what the planes had is
 * kept, the LID table is saved whole), save the LID table, take the
 * daemon's sources off the loop, close everything. Accepts NULL.
 */
void smd_dmn_free(struct smd_dmn *d);

/*
 * Without cfg.loop: the fd of the daemon's own loop, readable when a cycle
 * completed or something else is due; smd_dmn_drain() runs what is due
 * without waiting. With cfg.loop, that loop's fd and one dispatch of it.
 */
int smd_dmn_wake_fd(const struct smd_dmn *d);
void smd_dmn_drain(struct smd_dmn *d);

void smd_dmn_status(struct smd_dmn *d, struct smd_dmn_status *st);

/* Sweeps completed (status "sweeps"): every cycle but the multicast ones. */
static inline uint64_t smd_dmn_sweeps(const struct smd_dmn_status *st)
{
	return st->cycles - st->mcast_cycles;
}

/*
 * Ask for a cycle that starts after this call. Returns the value of
 * `cycles` at which that cycle will have completed.
 * smd_dmn_request_sweep() asks for a heavy one (SMD_SWEEP_HEAVY).
 * SMD_SWEEP_REREAD is heavy and also forgets the LFTs the planes' states
 * remember, so every LFT block is read back (`smctl resweep --heavy` after
 * someone else wrote LFTs). When requests of several kinds wait, the
 * heaviest wins.
 */
enum smd_sweep_kind { SMD_SWEEP_LIGHT, SMD_SWEEP_HEAVY, SMD_SWEEP_REREAD };
uint64_t smd_dmn_request_sweep(struct smd_dmn *d);
uint64_t smd_dmn_request_sweep_kind(struct smd_dmn *d, enum smd_sweep_kind kind);

/*
 * Use conf from the next cycle on: chains rebuilt, sweep interval, LMC,
 * subnet prefix and MAD settings. 0: taken over (the daemon owns conf;
 * notes lists what needs a restart, "" if nothing). -errno with err: the
 * caller still owns conf and nothing changed.
 */
int smd_dmn_reconfigure(struct smd_dmn *d, struct smd_conf *conf, char *notes, size_t notes_len,
			char *err, size_t errlen);

/*
 * One line for sd_notify STATUS= and the log: "2/2 planes up, 64 CAs,
 * last sweep 0.012 s".
 */
void smd_dmn_status_line(const struct smd_dmn_status *st, char *buf, size_t len);

struct sm_json;
/* Reply members of the "status" and "planes" commands (ctl.h). */
void smd_dmn_status_json(struct sm_json *j, const struct smd_dmn_status *st);
void smd_dmn_planes_json(struct sm_json *j, const struct smd_dmn_status *st);
/* The "sa" member of status: one object per plane (counters by attribute and status). */
void smd_dmn_sa_json(struct sm_json *j, const struct smd_dmn_status *st);
/* Names for SA counters: "PathRecord", "NO_RECORDS" ... (buf: at least 8 bytes, for unknown ones). */
const char *smd_dmn_sa_attr_label(uint16_t attr_id, char *buf);
const char *smd_dmn_sa_status_label(uint16_t status, char *buf);
/* One sweep record as a JSON object member `name` (NULL inside an array). */
void smd_dmn_sweep_json(struct sm_json *j, const char *name, const struct smd_dmn_sweep *sw);

/*
 * What one plane looked like after its last successful bring-up: the
 * discovered fabric with its LIDs and the LFTs as programmed (the SM's
 * snapshot of the plane, smd/sm/snapshot.h, shared, not copied). Read-only and
 * reference-counted, so the control socket can walk it while the worker
 * runs the next cycle (which publishes a new view; the old one lives until
 * its last reader puts it). For smctl nodes, links, route, lft, dump.
 */
struct sm_lfts;
struct smd_view {
	unsigned plane;
	uint64_t cycle;                  /* value of `cycles` once the cycle that made it completed */
	uint64_t made_us;                /* monotonic time it was published */
	const struct sm_fabric *fabric;  /* has exactly this plane */
	const struct sm_lfts *lfts;
};
/*
 * 0 and *out (release with smd_dmn_view_put), -ENOENT: the plane has not
 * come up yet (or plane >= planes). Thread-safe.
 */
int smd_dmn_view_get(struct smd_dmn *d, unsigned plane, const struct smd_view **out);
void smd_dmn_view_put(const struct smd_view *v);   /* accepts NULL */

/* The socket_group of the running (or pending) config into buf, "" none. Thread-safe (smctl access). */
void smd_dmn_socket_group(struct smd_dmn *d, char *buf, size_t len);
/* The running (or pending) config as smd.yaml text (smd_conf_print with flags). Thread-safe. */
int smd_dmn_conf_print(struct smd_dmn *d, FILE *out, unsigned flags);

/* Traffic profile used from the next cycle on ("" or NULL: none). Thread-safe. */
void smd_dmn_set_profile(struct smd_dmn *d, const char *path);
void smd_dmn_get_profile(struct smd_dmn *d, char *buf, size_t len);
/*
 * The control socket's "profile" request (cmd_profile.c); peer: the
 * requester's uid (only root and smd's user may name a path). It parks
 * (SMD_CTL_WAIT); smd_dmn_profile_resume() then says SMD_CTL_WAIT (not
 * yet), an error, or 0: answer with the sweep's result.
 */
struct smd_jv;
struct sm_json;
int smd_dmn_profile_request(struct smd_dmn *d, const struct smd_jv *req, uid_t peer, struct sm_json *j,
			    uint64_t *wait_for, char *err, size_t errlen);
int smd_dmn_profile_resume(struct smd_dmn *d, const struct smd_jv *req, char *err, size_t errlen);

#endif
