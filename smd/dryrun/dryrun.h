/* SPDX-License-Identifier: MIT */
#ifndef SMD_DRYRUN_CORE_H
#define SMD_DRYRUN_CORE_H
/*
 * DOC: dry-run core (library part of `smd --dry-run`)
 *
 * Data flow, one step per call so the program can log between them:
 *   sm_dryrun_load()     one topology dump per plane -> one fabric
 *   sm_dryrun_lids()     keep the dump's LIDs, give LID-less ports free ones
 *   sm_dryrun_route()    engine chain over all planes (registry.h), with
 *                        validation and fallback; optional traffic profile
 *   sm_dryrun_metrics()  route metrics of every routed plane
 *   sm_dryrun_write_lfts() dump_lfts-format (or compact, model/lft_file.h) file, plane by plane;
 *                        asked for before routing (sm_dryrun_lfts_request), it is written
 *                        while the planes route (lfts_out.c)
 * The result accumulates in d->run (report.h). Touches no fabric, needs no
 * privileges. Nothing here logs: errors are returned with a message, and
 * sm_dryrun_route() reports fallbacks through the result.
 *
 * Ownership: struct sm_dryrun owns the fabric, the registry, the chain,
 * the LFTs and the profile; engine names in d->run point into the
 * registry and stay valid until sm_dryrun_free().
 */
#include <stdbool.h>

#include "model/fabric.h"
#include "routing/engine.h"
#include "routing/metrics.h"
#include "dryrun/report.h"
#include "config/smdconf.h"

struct sm_registry;
struct sm_chain;
struct sm_profile;
struct sm_dr_lftw;

struct sm_dryrun {
	struct sm_fabric *f;
	struct sm_registry *reg;
	struct sm_chain *chain;
	struct sm_profile *profile;
	struct sm_lfts *lfts[SM_MAX_PLANES];
	struct sm_dr_run run;
	struct sm_dr_lftw *lw;   /* the LFT file's writer (lfts_out.c), NULL when not asked for */
	double lfts_cpu;         /* CPU seconds of writing the LFT file (its thread's, or the caller's) */
};

struct sm_partitions;
/* Resolve partitions against the loaded planes into d->run (parts, the file's name). 0 or -ENOMEM. */
int sm_dryrun_partitions(struct sm_dryrun *d, const struct sm_partitions *ps);

struct sm_dryrun *sm_dryrun_new(void);
void sm_dryrun_free(struct sm_dryrun *d);   /* accepts NULL */

/* Load dumps[i] as plane i. -EINVAL etc. with "FILE:LINE: ..." in err. */
int sm_dryrun_load(struct sm_dryrun *d, const char *const *dumps, unsigned n, char *err,
		   size_t errlen);

/*
 * Assign LIDs: every switch (port 0) and every connected CA/router port
 * without a LID gets the lowest free range (2^lmc LIDs aligned on 2^lmc for
 * CA/router ports, one for switches); LIDs from the dump are kept as they
 * are. Also finds the plane's connected parts. -ENOSPC when a plane runs
 * out of unicast LIDs.
 */
int sm_dryrun_lids(struct sm_dryrun *d, unsigned lmc, char *err, size_t errlen);

/*
 * Load a traffic profile against the fabric (after sm_dryrun_lids). Errors
 * as sm_profile_load(). warn (may be NULL) receives the loader's warning
 * about dropped entries, "" if none.
 */
int sm_dryrun_profile(struct sm_dryrun *d, const char *path, char *warn, size_t warnlen,
		      char *err, size_t errlen);

/*
 * Build the chain from c (routing_engine, plugin_dir, engines:) and route
 * every plane. Returns 0 when every plane routed, -EHOSTUNREACH when some
 * plane could not be routed by any engine (details in d->run), or an error
 * that stops the run (unknown engine, engine config error, -ENOMEM) with
 * the message in err.
 */
int sm_dryrun_route(struct sm_dryrun *d, const struct smd_conf *c, char *err, size_t errlen);

/* Metrics of every routed plane (n_random 0 = default, seed as given). */
int sm_dryrun_metrics(struct sm_dryrun *d, unsigned n_random, uint64_t seed);

/*
 * Ask, before sm_dryrun_route(), for the LFT file at path ("-" = stdout):
 * when the chain routes planes one by one and there is no profile, the
 * planes are then routed in order and each is written by a thread of its
 * own while the next ones route. 0, -EINVAL (asked twice, path too long)
 * or -ENOMEM. The file is finished (or written) by sm_dryrun_write_lfts().
 * release: nothing after routing needs the LFTs (no metrics): that thread
 * frees each plane's once it is written (8 planes of 40,960 hosts are
 * 1.3 GB of tables), leaving d->lfts[i] NULL.
 */
int sm_dryrun_lfts_request(struct sm_dryrun *d, const char *path, bool compact, bool release);

/*
 * Write the LFTs of all planes to path ("-" = stdout), or wait for the
 * writer sm_dryrun_lfts_request() started (same path and form). Either way
 * the same bytes; errors as "PATH: why" in err.
 */
int sm_dryrun_write_lfts(struct sm_dryrun *d, const char *path, bool compact, char *err, size_t errlen);

/* Between dryrun.c and lfts_out.c: start the writer (false: none, write after routing), */
bool sm_dr_lftw_start(struct sm_dryrun *d);
/* hand it planes [0, n_ready) (stop: no more will come), */
void sm_dr_lftw_post(struct sm_dryrun *d, unsigned n_ready, bool stop);
/* and free it (waits for the thread if it still runs). */
void sm_dr_lftw_free(struct sm_dryrun *d);


#endif
