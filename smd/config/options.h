/* SPDX-License-Identifier: MIT */
#ifndef SMD_OPTIONS_H
#define SMD_OPTIONS_H
/*
 * DOC: smd command line
 *
 * smd.c parses argv into struct smd_opts and dispatches to one mode:
 *   smd --once ...        smd_once()     (smd/smd_once.c)
 *   smd [-f] ...          smd_daemon()   (smd/smd_daemon.c)
 *   smd --dry-run ...     smd_dry_run()  (smd/smd_dryrun.c)
 *   smd --check-config, --print-config, --print-defaults  (smd/smd_config.c)
 * Each returns the process exit status: 0 success, 1 bad input or failed
 * operation, 2 usage.
 */
#include "model/fabric.h"
#include "lib/err.h"

enum smd_mode { SMD_MODE_DAEMON = 0, SMD_MODE_ONCE, SMD_MODE_DRY_RUN, SMD_MODE_CHECK_CONFIG, SMD_MODE_PRINT_CONFIG,
		SMD_MODE_PRINT_DEFAULTS };

struct smd_opts {
	enum smd_mode mode;
	const char *config;          /* -c FILE */
	const char *backend;         /* --backend umad|mock|ibsim, NULL = umad */
	const char *topology;        /* --topology DUMP (mock) */
	const char *planes[SM_MAX_PLANES]; /* --plane SPEC, repeatable */
	unsigned n_planes;
	const char *dumps[SM_MAX_PLANES];  /* -t DUMP (dry-run), repeatable */
	unsigned n_dumps;
	const char *engines;         /* -R ENGINE[,ENGINE] */
	const char *profile;         /* --profile FILE */
	const char *lfts_out;        /* --lfts-out FILE */
	const char *lfts_format;     /* --lfts-format dump|compact, NULL = dump */
	const char *report;          /* --report FILE|- */
	int json;                    /* --json */
	const char *socket;          /* --socket PATH */
	const char *state_dir;       /* --state-dir DIR (guid2lid etc.) */
	const char *guid2lid;        /* --guid2lid FILE (read OpenSM's file) */
	const char *partitions;      /* --partitions FILE (OpenSM's partitions.conf or the YAML form) */
	int lmc;                     /* --lmc N, -1 = config/default */
	int verbose;                 /* -v, repeatable */
	int quiet;                   /* -q */
	unsigned seed;               /* --seed N (metrics, fault injection) */
	unsigned mcast_groups;       /* --mcast-groups N (dry-run: synthetic multicast groups per plane) */
};

int smd_once(const struct smd_opts *o);
struct smd_conf;
int smd_once_planes(const struct smd_opts *o, struct smd_conf *conf);  /* several planes */
struct sm_plane_lids;
/* smd/smd_once.c: the LID table of sm/planelid.h, seeded by guid2lid_file; 0 or 1 (logged) */
int smd_once_lids_open(const struct smd_conf *conf, sm_note_fn *note, void *note_arg,
		       struct sm_plane_lids **out);
struct sm_mc_set;
/*
 * smd/smd_once.c: the multicast groups a bring-up of plane `plane` starts
 * with (the partitions' IPoIB broadcast groups, as the daemon's SA starts
 * with them; sa/dyn.h sm_sa_mc_start_set); 0 or 1 (logged)
 */
int smd_once_mcast(const struct smd_conf *conf, unsigned plane, uint8_t subnet_timeout, struct sm_mc_set **out);
/* smd/smd_once.c: lock STATE_DIR for the life of the process (lib/statelock.h); 0 or 1 (logged) */
int smd_state_lock_take(const char *state_dir);
int smd_daemon(const struct smd_opts *o);
int smd_dry_run(const struct smd_opts *o);
int smd_check_config(const struct smd_opts *o);
int smd_print_config(const struct smd_opts *o, int defaults);

#endif
