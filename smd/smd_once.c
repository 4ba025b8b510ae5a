/* SPDX-License-Identifier: MIT */
/*
 * DOC: smd --once
 *
 * Reads the configuration (-c FILE, command-line options laid over it),
 * opens the transport (umad by default, or the mock fabric of --topology),
 * builds the routing chain, runs sm_bringup() for plane 0 and prints the
 * summary (text, or one JSON object with --json; nothing with -q).
 * Exit 0 when every link port is ACTIVE, 1 with a message otherwise.
 */
#include "config/options.h"
#include "lib/log.h"
#include "lib/statelock.h"
#include "sm/sm.h"
#include "sm/planelid.h"
#include "mock/open.h"
#include "routing/registry.h"
#include "config/smdconf.h"
#include "model/partitions.h"
#include "sa/dyn.h"
#include "sm/mcast.h"
#include "sm/neighbours.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define NOTE_CAP 50

struct note_ctx {
	unsigned n;
};

static void note_log(void *arg, const char *msg)
{
	struct note_ctx *nc = arg;
	if (nc->n++ < NOTE_CAP)
		sm_notice("SMD-0301", "%s", msg);
	else
		sm_debug("SMD-0301", "%s", msg);
}

static int want_lids(void *arg, const struct sm_fabric *f, unsigned plane, const uint16_t *cur,
		     uint16_t *want)
{
	return sm_plane_lids_want(arg, f, plane, cur, want);
}

/*
 * Every mode locks its state directory before reading a state file: a
 * second smd on it is refused (SMD-0805). A directory that cannot be
 * created or opened is reported (SMD-0806) and the run goes on: its saves
 * then fail and are reported as before. The fd is held until exit.
 */
int smd_state_lock_take(const char *state_dir)
{
	static int held = -1;
	char err[1024] = "";
	int fd;

	if (!state_dir || held >= 0)
		return 0;
	fd = sm_state_lock(state_dir, err, sizeof(err));
	if (fd == -EBUSY) {
		sm_err("SMD-0805", "%s", err);
		return 1;
	}
	if (fd < 0) {
		sm_warn("SMD-0806", "%s; running without the state directory lock", err);
		return 0;
	}
	held = fd;
	return 0;
}

/*
 * The LID table every mode shares (sm/planelid.h: hosts first, then
 * switches; STATE_DIR/plane-lids and STATE_DIR/guid2lid), seeded by
 * --guid2lid FILE / guid2lid_file when given. 0 or 1 with a message.
 */
int smd_once_lids_open(const struct smd_conf *conf, sm_note_fn *note, void *note_arg,
		       struct sm_plane_lids **out)
{
	char err[1024] = "";
	int rc = sm_plane_lids_open(conf->state_dir, (unsigned)conf->lmc, note, note_arg, out, err,
				    sizeof(err));
	if (!rc && conf->guid2lid_file)
		rc = sm_plane_lids_seed(*out, conf->guid2lid_file, err, sizeof(err));
	if (rc) {
		sm_err("SMD-0406", "LID table: %s", err[0] ? err : strerror(-rc));
		sm_plane_lids_free(*out);
		*out = NULL;
		return 1;
	}
	return 0;
}

int smd_once_mcast(const struct smd_conf *conf, unsigned plane, uint8_t subnet_timeout, struct sm_mc_set **out)
{
	struct sm_partitions *parts = NULL;
	int rc = 0;

	*out = NULL;
	if (!conf->partitions)   /* no partitions file: the default partition's broadcast group */
		rc = sm_partitions_default(&parts);
	if (!rc)
		rc = sm_sa_mc_start_set(conf->partitions ? conf->partitions : parts, subnet_timeout, plane, out);
	sm_partitions_free(parts);
	if (rc) {
		sm_err("SMD-0311", "multicast groups: %s", strerror(-rc));
		return 1;
	}
	return 0;
}

/* The one plane's spec: --backend mock --topology DUMP, the configured plane, or the default umad port. */
static int open_transport(const struct smd_opts *o, const struct smd_conf *conf, struct sm_plane_port *port)
{
	char err[512] = "", spec[4200];
	int rc;

	if (o->backend && !strcmp(o->backend, "mock")) {
		if (!o->topology) {
			sm_err("SMD-0302", "--backend mock needs --topology DUMP");
			return -1;
		}
		snprintf(spec, sizeof(spec), "mock:%s", o->topology);
	} else if (o->backend && !strcmp(o->backend, "ibsim")) {
		sm_err("SMD-0305", "--once drives one plane: use the umad backend (under umad2sim for ibsim)");
		return -1;
	} else if (conf->n_planes > 1) {
		sm_err("SMD-0305", "--once brings up one plane; %u planes configured", conf->n_planes);
		return -1;
	} else {
		snprintf(spec, sizeof(spec), "%s", conf->n_planes ? conf->planes[0] : "umad");
	}
	rc = sm_transport_open_spec(spec, sm_backends, port, err, sizeof(err));
	if (rc) {
		sm_err("SMD-0306", "%s", err[0] ? err : strerror(-rc));
		return -1;
	}
	/* a mock plane: smd.yaml's mock keys and --seed (fault injection) */
	sm_mock_port_faults(port, conf->mock.loss_ppm, conf->mock.corrupt_ppm, conf->mock.delay_ppm,
			    conf->mock.delay_ms * 1000u, conf->mock.seed);
	return 0;
}

int smd_once(const struct smd_opts *o)
{
	struct sm_plane_port port = { 0 };
	struct sm_registry *reg = NULL;
	struct sm_chain *chain = NULL;
	struct smd_conf *conf = NULL;
	struct sm_plane_lids *lids = NULL;
	struct sm_plane_lids_stats ls;
	struct sm_cfg cfg;
	struct sm_summary sum;
	struct sm_keys keys;
	struct sm_nbr nbr = { 0 };
	char lerr0[512];
	struct note_ctx nc = { 0 };
	struct sm_mc_set *mcast = NULL;
	char err[1024] = "";
	int status = 1, rc;

	if (o->config)
		rc = smd_conf_load(o->config, &conf, err, sizeof(err));
	else
		rc = (conf = smd_conf_new()) ? 0 : -ENOMEM;
	if (!rc)
		rc = smd_conf_apply_opts(conf, o, err, sizeof(err));
	if (rc) {
		sm_err("SMD-0307", "%s", err[0] ? err : strerror(-rc));
		goto out;
	}
	if (smd_state_lock_take(conf->state_dir))   /* before a state file is read or a port opened */
		goto out;
	if (conf->n_planes > 1 || (o->backend && !strcmp(o->backend, "ibsim")) ||
	    (conf->n_planes == 1 && !strncmp(conf->planes[0], "ibsim", 5))) {
		status = smd_once_planes(o, conf);   /* smd/smd_once_planes.c: one thread per plane */
		goto out;
	}
	/* the routing chain first: a bad engine or engine option is refused before any port is opened */
	reg = sm_registry_new(conf->plugin_dir);
	if (!reg) {
		sm_err("SMD-0308", "out of memory");
		goto out;
	}
	char spec[SMD_CONF_MAX_CHAIN * (SMD_CONF_NAME_MAX + 2)];
	smd_conf_chain_str(conf, spec, sizeof(spec));
	rc = sm_chain_new(reg, spec, conf->doc, conf->engines_map, &chain, err, sizeof(err));
	if (rc) {
		smd_conf_chain_error(conf, spec, err, sizeof(err));
		sm_err("SMD-0309", "routing: %s", err);
		goto out;
	}
	/* the keys are on disk before any port can be given one */
	rc = sm_keys_open(conf->state_dir, &conf->keys, &keys, note_log, &nc, err, sizeof(err));
	if (rc) {
		sm_err("SMD-0802", "keys: %s", err[0] ? err : strerror(-rc));
		goto out;
	}
	if (smd_once_lids_open(conf, note_log, &nc, &lids))
		goto out;
	if (open_transport(o, conf, &port))
		goto out;
	sm_cfg_default(&cfg);
	cfg.keys = sm_keys_active(&keys) || keys.sm_key ? &keys : NULL;
	cfg.lmc = (unsigned)conf->lmc;
	cfg.state_dir = NULL;   /* the shared table is the persistent record, as in the daemon */
	cfg.guid2lid = NULL;
	cfg.lid_want = want_lids;
	cfg.lid_want_arg = lids;
	cfg.subnet_prefix = conf->subnet_prefix;
	cfg.subnet_timeout = (uint8_t)conf->subnet_timeout;
	cfg.portcfg = &conf->portcfg;
	if (conf->mad.window)
		cfg.txn.window = conf->mad.window;
	if (conf->mad.per_switch_window)
		cfg.txn.per_dest = conf->mad.per_switch_window;
	if (conf->mad.timeout_ms)
		cfg.txn.timeout_ms = conf->mad.timeout_ms;
	cfg.txn.retries = conf->mad.retries;
	cfg.profile_path = o->profile;   /* resolved against the swept fabric */
	cfg.partitions = conf->partitions;
	cfg.note = note_log;
	cfg.note_arg = &nc;
	if (smd_once_mcast(conf, 0, cfg.subnet_timeout, &mcast))
		goto out;
	cfg.mcast = mcast;   /* the broadcast groups are programmed in this one bring-up */
	/* derived M_Keys at protect bits 2-3: the GUIDs behind the ports, as the last run saw them */
	char npath[4200];
	struct sm_fabric *swept = NULL;
	int nbr_on = sm_nbr_open(conf->state_dir, &keys, &nbr, npath, sizeof(npath), note_log, &nc);
	cfg.neighbours = nbr_on ? &nbr : NULL;
	rc = sm_bringup(port.t, chain, &cfg, &sum, nbr_on ? &swept : NULL, err, sizeof(err));
	if (swept && !sum.incomplete && sm_nbr_update(&nbr, swept, npath, lerr0, sizeof(lerr0)))
		sm_warn("SMD-0808", "neighbour table not saved: %s", lerr0);
	sm_fabric_free(swept);
	/* the LIDs are set once the LID phase ran, whatever failed after: save them */
	char lerr[1024] = "";
	if (sm_plane_lids_save(lids, lerr, sizeof(lerr))) {
		sum.state_errors++;
		snprintf(sum.state_err, sizeof(sum.state_err), "%s", lerr);
	}
	sm_plane_lids_stats(lids, &ls);
	sum.lids.from_file = ls.from_table + ls.from_seed;
	sum.lids.from_fabric = ls.inherited + ls.sw_kept;
	sum.lids.fresh = ls.fresh + ls.sw_fresh;
	sum.lids.moved = ls.moved;
	sum.lids.conflicts = ls.conflicts;
	if (nc.n > NOTE_CAP)
		sm_notice("SMD-0301", "%u more notes (use -v -v to see them)", nc.n - NOTE_CAP);
	if (o->json)
		sm_summary_print_json(stdout, &sum);
	else if (!o->quiet)
		sm_summary_print(stdout, &sum);
	fflush(stdout);
	if (rc) {
		sm_err("SMD-0310", "bring-up failed: %s", err);
		goto out;
	}
	if (sum.state_errors) {
		/* the subnet is up, but a restart would not find these LIDs */
		sm_err("SMD-0801", "state not saved: %s", sum.state_err);
		goto out;
	}
	if (sum.incomplete) {
		/* answers lost or Sets failed: what the sweep did not see kept its old LIDs and routes,
		 * a port may not hold what the tables say; the daemon would sweep again, --once says so */
		sm_err("SMD-0312", "bring-up incomplete: %u answer%s lost or Set%s failed (first: %s); run it again",
		       sum.incomplete, sum.incomplete == 1 ? "" : "s", sum.incomplete == 1 ? "" : "s",
		       sum.incomplete_why);
		goto out;
	}
	status = 0;
out:
	sm_nbr_free(&nbr);
	sm_mc_set_unref(mcast);
	sm_chain_free(chain);
	smd_conf_free(conf);
	sm_registry_free(reg);
	sm_plane_port_close(&port);
	sm_plane_lids_free(lids);
	return status;
}
