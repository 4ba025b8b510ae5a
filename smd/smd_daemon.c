/* SPDX-License-Identifier: MIT */
/*
 * DOC: smd -f (the daemon program)
 *
 * Foreground only (systemd Type=notify runs it; no fork, no pid file):
 * reads the config, opens the control socket (ctl.h) first, so a second
 * smd on the same socket fails before touching the fabric, then starts the
 * sweep core (daemon.h). The main thread runs the one event loop
 * (lib/loop.h) that owns every fd and timer: signals, the watchdog, and
 * the daemon core's (cycle completions, the sweep interval, the trap
 * hold-off, the idle planes' MAD fds). The control socket server only
 * offers a poll call (ctl.h), so the loop is embedded in it: the server
 * polls its own fds plus the loop's fd, then the loop runs what is due.
 *
 * Signals are blocked in every thread and delivered by the loop: SIGTERM /
 * SIGINT stop (STOPPING=1; a running cycle is cut short within about
 * 100 ms, keeping what the planes had; the LID table is saved,
 * transports closed, exit 0, all within a second), SIGHUP reloads the
 * config file (a bad file is logged with FILE:LINE and changes nothing).
 *
 * systemd (sd_notify; every message is a no-op without NOTIFY_SOCKET):
 *  - READY=1 once the first cycle has completed, whatever its result: a
 *    fabric that is down at boot (cable, switch power) must not make
 *    systemd kill and restart the one process that will bring it up when
 *    it appears. STATUS= then says "down: 0/1 planes up ..." and smctl
 *    status tells the same.
 *  - STATUS="STATE: N/M planes up, ..., last sweep S s (K sweeps)" after
 *    every cycle, "reloading FILE" during a reload.
 *  - WATCHDOG=1 every WATCHDOG_USEC/2 (sd_watchdog_enabled), sent from this
 *    poll loop, so a wedged loop stops the pings. A wedged worker stops
 *    them too: a cycle running longer than sweep_stall_limit (default
 *    600 s, far above any healthy cycle: every SMP has a timeout and a
 *    plane that stops answering is given up) is logged once (SMD-0524) and
 *    the pings stop, so systemd restarts smd (LIDs are kept: the table is
 *    saved after every cycle and read back at start). The cycle is watched
 *    from here, on the status snapshot: the worker is not touched.
 *  - RELOADING=1 with MONOTONIC_USEC= on SIGHUP or reload, READY=1 once the new file
 *    is applied or refused (only after the first READY=1).
 *  - STOPPING=1 on SIGTERM/SIGINT.
 */
#include "config.h"
#include "lib/clock.h"
#include "config/options.h"
#include "lib/log.h"
#include "ctl/ctl.h"
#include "ctl/http.h"
#include "daemon/cmd.h"
#include "daemon/daemon.h"
#include "daemon/reload.h"
#include "lib/json.h"
#include "config/smdconf.h"
#include "lib/privdrop.h"
#include "lib/loop.h"
#include "mad/transport.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#define NOTE_SET 512

/*
 * One failure line that may repeat every cycle: logged when it starts or
 * changes (another text), then at most once per log_repeat_interval with
 * "(repeated K times)"; the lines between go to debug.
 */
struct repeat {
	uint64_t hash;       /* of the text last logged; 0: no failure running */
	uint64_t logged_us;  /* when it was last logged */
	unsigned held;       /* repeats not logged since */
	unsigned cycles;     /* cycles it has lasted */
};

struct dctx {
	const struct smd_opts *o;
	struct smd_dmn *d;
	uint64_t seen_sweeps;
	int ready;                   /* READY=1 sent */
	/* watchdog: the cycle seen running (sweeps count) and since when */
	uint64_t wd_sweeps, wd_since_us;
	int wd_wedged;               /* SMD-0524 logged, pings stopped */
	unsigned stall_limit;        /* sweep_stall_limit of the running config, s (0: never) */
	/*
	 * Plane notes (from plane threads). Every cycle of a healthy fabric
	 * repeats the same notes (e.g. the engine's summary): a note already
	 * given in the previous cycle goes to debug, so the journal shows
	 * changes, not a line per plane every sweep_interval.
	 */
	pthread_mutex_t note_mu;
	uint64_t prev[NOTE_SET], cur[NOTE_SET];
	unsigned n_prev, n_cur;
	/* a failure that repeats every cycle (a plane that stays down): log_repeat_interval */
	struct repeat plane_rep[SM_MAX_PLANES], sweep_rep;
	unsigned incomplete_run[SM_MAX_PLANES];   /* heavy sweeps in a row that lost answers (SMD-0560/0561) */
	unsigned repeat_s;
	/* privilege drop after the first cycle (smd/lib/privdrop.h); copies: conf goes to the daemon */
	char *user, *group, *state_dir;
	const char *sock;
	int drop_failed;
	struct sm_loop *loop;
	struct smd_ctl_server *srv;
	struct sm_loop_src *wd;      /* watchdog timer, NULL without WATCHDOG_USEC */
	uint64_t wd_period;
	int status;                  /* exit status once the loop quits */
	uint64_t t_stop;
	/* metrics over HTTP (metrics_listen; ctl/http.h): the listener and the address it was asked for */
	struct smd_http *http;
	char *metrics_addr;
	/* reloads (daemon/reload.h): the file is read and parsed off the loop; the last outcome */
	struct smd_reload *rl;
	const char *rl_via;          /* "SIGHUP" or "control socket": who asked last */
	int rl_rc;
	char rl_err[1100], rl_notes[256];
};

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

static void note_log(void *arg, const char *msg)
{
	struct dctx *c = arg;
	uint64_t h = fnv1a(msg);
	int seen = 0;

	pthread_mutex_lock(&c->note_mu);
	for (unsigned i = 0; i < c->n_prev && !seen; i++)
		seen = c->prev[i] == h;
	if (c->n_cur < NOTE_SET)
		c->cur[c->n_cur++] = h;
	pthread_mutex_unlock(&c->note_mu);
	if (seen)
		sm_debug("SMD-0501", "%s", msg);
	else
		sm_notice("SMD-0501", "%s", msg);
}

/*
 * Should this failure text be logged now? 1 with *held (repeats not
 * logged since the last time, 0 for a new text), else 0 (log it at debug).
 */
static int repeat_due(struct repeat *r, const char *text, unsigned interval_s, unsigned *held)
{
	uint64_t h = fnv1a(text) | 1, now = sm_mono_us();

	*held = 0;
	if (r->hash != h) {
		r->hash = h;
		r->held = 0;
		r->cycles = 1;
		r->logged_us = now;
		return 1;
	}
	r->cycles++;
	if (!interval_s || now - r->logged_us >= interval_s * 1000000ull) {
		*held = r->held;
		r->held = 0;
		r->logged_us = now;
		return 1;
	}
	r->held++;
	return 0;
}

/* The failure is over: the cycles it lasted (0: there was none). */
static unsigned repeat_end(struct repeat *r)
{
	unsigned n = r->hash ? r->cycles : 0;

	memset(r, 0, sizeof(*r));
	return n;
}

/* " (repeated K times)" or "" */
static const char *repeated(char *buf, size_t len, unsigned held)
{
	if (!held)
		return "";
	snprintf(buf, len, " (repeated %u time%s)", held, held == 1 ? "" : "s");
	return buf;
}

/* A cycle ended: its notes become the ones not to repeat. */
static void notes_rotate(struct dctx *c)
{
	pthread_mutex_lock(&c->note_mu);
	memcpy(c->prev, c->cur, sizeof(c->cur[0]) * c->n_cur);
	c->n_prev = c->n_cur;
	c->n_cur = 0;
	pthread_mutex_unlock(&c->note_mu);
}

/* The daemon's answer to a sweep request: queue a cycle, and park the request until it ends unless told not to wait. */
static int sweep_request(struct dctx *c, const struct smd_jv *req, struct sm_json *j, uint64_t *wait_for,
			 char *err, size_t errlen)
{
	static const struct { const char *word; enum smd_sweep_kind kind; } kinds[] = {
		{ "heavy", SMD_SWEEP_HEAVY }, { "light", SMD_SWEEP_LIGHT }, { "reread", SMD_SWEEP_REREAD },
	};
	const struct smd_jv *w = smd_jv_get(req, "wait"), *k = smd_jv_get(req, "kind");
	enum smd_sweep_kind kind = SMD_SWEEP_HEAVY;   /* what "sweep" meant before kinds existed */
	unsigned i = 0;

	if (w && w->type != SMD_J_BOOL) {
		snprintf(err, errlen, "sweep: \"wait\" must be true or false");
		return -EINVAL;
	}
	while (k && i < sizeof(kinds) / sizeof(kinds[0]) && (k->type != SMD_J_STR || strcmp(k->str, kinds[i].word)))
		i++;
	if (k && i == sizeof(kinds) / sizeof(kinds[0])) {
		snprintf(err, errlen, "sweep: \"kind\" must be \"light\", \"heavy\" or \"reread\"");
		return -EINVAL;
	}
	if (k)
		kind = kinds[i].kind;
	uint64_t target = smd_dmn_request_sweep_kind(c->d, kind);
	if (w && !w->boolean) {
		sm_json_bool(j, "queued", 1);
		sm_json_uint(j, "target", target);
		return 0;
	}
	*wait_for = target;
	return SMD_CTL_WAIT;
}

static int reload_request(struct dctx *c, uint64_t *wait_for, char *err, size_t errlen);
static int reload_resume(struct dctx *c, struct sm_json *j, char *err, size_t errlen);
static int config_request(struct dctx *c, struct sm_json *j, char *err, size_t errlen);

/* The command of a request, by the one command table (ctl/ctl.h); SMD_CMD_N when unknown. */
static enum smd_ctl_cmd_id cmd_id(const char *cmd)
{
	const struct smd_ctl_cmd *t = smd_ctl_cmd_find(cmd);
	/* aliases are smctl's words; on the wire only the names count */
	return t && !strcmp(t->name, cmd) ? (enum smd_ctl_cmd_id)(t - smd_ctl_cmds) : SMD_CMD_N;
}

/* A copy of the daemon's status (the caller frees it); NULL and err when out of memory. */
static struct smd_dmn_status *status_copy(struct dctx *c, char *err, size_t errlen)
{
	struct smd_dmn_status *st = malloc(sizeof(*st));

	if (st)
		smd_dmn_status(c->d, st);
	else
		snprintf(err, errlen, "out of memory");
	return st;
}

static int handle(void *arg, const char *cmd, const struct smd_jv *req, struct sm_json *j,
		  uint64_t *wait_for, char *err, size_t errlen)
{
	struct dctx *c = arg;
	struct smd_dmn_status *st;
	enum smd_ctl_cmd_id id = cmd_id(cmd);

	switch (id) {
	case SMD_CMD_VERSION:
		sm_json_str(j, "smd", PACKAGE_VERSION);
		sm_json_uint(j, "protocol", SMD_CTL_VERSION);
		return 0;
	case SMD_CMD_SWEEP:
		return sweep_request(c, req, j, wait_for, err, errlen);
	case SMD_CMD_PROFILE:
		return smd_dmn_profile_request(c->d, req, smd_ctl_server_peer_uid(c->srv), j, wait_for, err,
					       errlen);  /* daemon/cmd_profile.c */
	case SMD_CMD_RELOAD:
		return reload_request(c, wait_for, err, errlen);
	case SMD_CMD_CONFIG:
		return config_request(c, j, err, errlen);
	case SMD_CMD_STATUS:
	case SMD_CMD_PLANES:
		break;
	case SMD_CMD_N: {
		char list[256];
		size_t off = 0;
		for (unsigned i = 0; i < SMD_CMD_N && off < sizeof(list); i++)
			off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%s", i ? ", " : "",
						smd_ctl_cmds[i].name);
		snprintf(err, errlen, "unknown command '%.40s' (%s)", cmd, list);
		return -EINVAL;
	}
	default: {   /* SMD_CTL_CMD_DAEMON: nodes, links, route, lft, dump, metrics, engine (daemon/cmd.c) */
		int rc = smd_ctl_daemon_request(c->d, c->o, cmd, req, j, wait_for, err, errlen);
		if (id == SMD_CMD_ENGINE && rc != SMD_CTL_WAIT)   /* else when read (resume) */
			sm_notice("SMD-0531", "control socket: engine set %s: %s", smd_jv_str(req, "chain", "?"), err);
		return rc;
	}
	}
	st = status_copy(c, err, errlen);
	if (!st)
		return -ENOMEM;
	if (id == SMD_CMD_STATUS)
		smd_dmn_status_json(j, st);
	else
		smd_dmn_planes_json(j, st);
	free(st);
	return 0;
}

/* A sweep we parked has completed: report that cycle (the latest one). */
static int resume(void *arg, const char *cmd, const struct smd_jv *req, struct sm_json *j, char *err,
		  size_t errlen)
{
	struct dctx *c = arg;
	struct smd_dmn_status *st;

	enum smd_ctl_cmd_id fid = cmd_id(cmd);
	if (fid == SMD_CMD_LINK || fid == SMD_CMD_SWITCH || fid == SMD_CMD_FAULTS)   /* daemon/cmd_fault.c */
		return smd_dmn_fault_resume(c->d, fid, req, j, err, errlen);
	if (fid == SMD_CMD_RELOAD)   /* loaded off the loop (daemon/reload.h) */
		return reload_resume(c, j, err, errlen);
	if (fid == SMD_CMD_ENGINE) {   /* read off the loop, applied, then a sweep (daemon/cmd_engine.c) */
		int rc = smd_dmn_engine_resume(c->d, req, err, errlen);
		if (rc < 0)
			sm_notice("SMD-0531", "control socket: engine set %s: %s", smd_jv_str(req, "chain", "?"), err);
		else if (!rc)
			sm_notice("SMD-0531", "control socket: engine set %s: applied, rerouted", smd_jv_str(req, "chain", "?"));
		if (rc)
			return rc;
	}
	if (cmd_id(cmd) == SMD_CMD_PROFILE) {   /* checked off the loop, then a sweep (cmd_profile.c) */
		int rc = smd_dmn_profile_resume(c->d, req, err, errlen);
		if (rc)
			return rc;
	}
	st = status_copy(c, err, errlen);
	if (!st)
		return -ENOMEM;
	enum smd_ctl_cmd_id id = cmd_id(cmd);
	if (id == SMD_CMD_SWEEP) {
		sm_json_str(j, "kind", smd_jv_str(req, "kind", "heavy"));
		/* what the cycle that answers us did: a light one may have escalated */
		const struct smd_dmn_sweep *last = st->n_history ? &st->history[st->n_history - 1] : NULL;
		sm_json_str(j, "ran", last ? last->kind : NULL);
		sm_json_bool(j, "escalated", last && last->escalated);
	}
	if (id == SMD_CMD_ENGINE) {
		sm_json_str(j, "chain", st->chain);
		sm_json_str(j, "engine", st->engine[0] ? st->engine : NULL);
	}
	sm_json_uint(j, "sweeps", smd_dmn_sweeps(st));
	sm_json_str(j, "result", smd_dmn_state_name(st->last));
	sm_json_uint(j, "planes_up", st->planes_up);
	sm_json_uint(j, "failed", st->n_planes - st->planes_up - st->planes_standby);
	sm_json_uint(j, "standby", st->planes_standby);
	sm_json_double(j, "seconds", st->last_sweep_s);
	sm_json_uint(j, "lft_blocks_written", st->lft_blocks_written);
	sm_json_uint(j, "portinfo_sets", st->portinfo_sets);
	free(st);
	return 0;
}

/* Control socket access (ctl_auth.c): the running config's socket_group, and who was refused. */
static void socket_group(void *arg, char *name, size_t len)
{
	struct dctx *c = arg;
	if (c->d)
		smd_dmn_socket_group(c->d, name, len);
	else
		name[0] = '\0';
}

/* At most ACCESS_NOTES_PER_MIN lines a minute: a peer hammering the socket must not flood the journal. */
#define ACCESS_NOTES_PER_MIN 20
static void access_note(void *arg, const char *msg)
{
	static uint64_t window_us;
	static unsigned in_window, suppressed;
	uint64_t now = sm_mono_us();

	(void)arg;
	if (now - window_us >= 60000000u) {
		if (suppressed)
			sm_warn("SMD-0530", "%u more control socket access notes in the last minute were not logged",
				suppressed);
		window_us = now;
		in_window = suppressed = 0;
	}
	if (in_window++ < ACCESS_NOTES_PER_MIN)
		sm_warn("SMD-0530", "%s", msg);
	else
		suppressed++;
}

static const struct smd_ctl_ops ctl_ops = {
	.handle = handle,
	.resume = resume,
	.socket_group = socket_group,
	.access_note = access_note,
};

/* Config file (or defaults) with the command line laid over it; the reason in err. */
static int load_conf(const struct smd_opts *o, struct smd_conf **out, char *err, size_t errlen)
{
	struct smd_conf *conf = NULL;
	int rc;

	if (o->config)
		rc = smd_conf_load(o->config, &conf, err, errlen);
	else
		rc = (conf = smd_conf_new()) ? 0 : -ENOMEM;
	if (!rc && (rc = smd_conf_apply_opts(conf, o, err, errlen))) {
		smd_conf_free(conf);
		conf = NULL;
	}
	if (rc) {
		sm_err("SMD-0502", "%s", err[0] ? err : strerror(-rc));
		return rc;
	}
	*out = conf;
	return 0;
}

/* The plane specs: --backend mock --topology DUMP is one mock plane; else the configured planes. */
static int plane_specs(const struct smd_opts *o, const struct smd_conf *conf, const char **specs,
		       unsigned *n, char *mockspec, size_t mocklen)
{
	*n = 0;
	if (o->backend && !strcmp(o->backend, "mock") && !o->n_planes) {
		if (!o->topology) {
			sm_err("SMD-0503", "--backend mock needs --topology DUMP (or --plane mock:DUMP)");
			return -EINVAL;
		}
		snprintf(mockspec, mocklen, "mock:%s", o->topology);
		specs[(*n)++] = mockspec;
		return 0;
	}
	for (unsigned i = 0; i < conf->n_planes; i++)
		specs[(*n)++] = conf->planes[i];
	if (!*n)
		specs[(*n)++] = o->backend && !strcmp(o->backend, "ibsim") ? "ibsim" : "umad";
	return 0;
}

/* "STATE: N/M planes up, ..." for STATUS= */
static void status_text(const struct smd_dmn_status *st, char *buf, size_t len)
{
	char line[1024];

	smd_dmn_status_line(st, line, sizeof(line));
	if (st->cycles)
		snprintf(buf, len, "%s: %s", smd_dmn_state_name(st->last), line);
	else
		snprintf(buf, len, "%s", line);
}

/* End of a reload: READY=1 again (systemd waits for it after RELOADING=1), STATUS= says how it went. */
static void reload_done(struct dctx *c, const char *what)
{
	struct smd_dmn_status *st;
	char line[1100];

	if (!c->ready)
		return;
	st = malloc(sizeof(*st));
	if (st) {
		smd_dmn_status(c->d, st);
		status_text(st, line, sizeof(line));
		free(st);
	} else {
		line[0] = '\0';
	}
	sd_notifyf(0, "READY=1\nSTATUS=%s; %s", what, line);
}

/* GET /metrics: the text smctl metrics prints (loop thread) */
static int metrics_body(void *arg, FILE *out, char *err, size_t errlen)
{
	struct dctx *c = arg;

	return smd_dmn_metrics_text(c->d, out, err, errlen);
}

/*
 * Serve metrics on addr (metrics_listen; NULL: stop). Takes addr (malloc'ed).
 * The same address as now with a listener running changes nothing; a
 * listener that could not start is tried again. Failing to listen is
 * logged, not fatal: the SM runs on without its metrics endpoint.
 */
static void metrics_listen(struct dctx *c, char *addr)
{
	char err[256] = "";
	int rc;

	if (c->http && addr && c->metrics_addr && !strcmp(addr, c->metrics_addr)) {
		free(addr);
		return;
	}
	if (c->http) {
		sm_notice("SMD-0547", "metrics over HTTP: no longer listening on %s", smd_http_bound(c->http));
		smd_http_free(c->http);
		c->http = NULL;
	}
	free(c->metrics_addr);
	c->metrics_addr = addr;
	if (!addr)
		return;
	rc = smd_http_open(c->loop, addr, metrics_body, c, &c->http, err, sizeof(err));
	if (rc)
		sm_err("SMD-0546", "metrics over HTTP: cannot listen: %s%s; no metrics endpoint until a reload", err,
		       rc == -EAFNOSUPPORT ? " (under systemd: the unit needs a drop-in, see smd(8), METRICS)" : "");
	else
		sm_notice("SMD-0545", "metrics over HTTP: http://%s%s", smd_http_bound(c->http), SMD_HTTP_PATH);
}

/*
 * Re-read the config file (SIGHUP, or the reload command: `via` says which):
 * the file is read and parsed off the loop (daemon/reload.h), reload_loaded()
 * applies it. 0 asked for; else a negative errno with the reason in err.
 */
static int reload(struct dctx *c, const char *via, char *err, size_t errlen)
{
	int rc;

	if (!c->o->config && !c->o->partitions) {
		sm_notice("SMD-0510", "%s: no config file (-c) to reload; nothing changed", via);
		snprintf(err, errlen, "smd runs without a config file (-c): nothing to reload");
		return -ENOENT;
	}
	const char *what = c->o->config ? c->o->config : c->o->partitions;
	sm_notice("SMD-0511", "%s: reloading %s", via, what);
	/* systemd ignores RELOADING=1 before READY=1 (the unit is still starting) */
	if (c->ready)
		sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%" PRIu64 "\nSTATUS=reloading %s",
			   sm_mono_us(), what);
	c->rl_via = via;
	if ((rc = smd_reload_start(c->rl))) {
		sm_err("SMD-0512", "reload failed: cannot start the configuration loader: %s; the running "
		       "configuration is kept", strerror(-rc));
		snprintf(err, errlen, "cannot start the configuration loader: %s; the running configuration is kept",
			 strerror(-rc));
		reload_done(c, "reload failed, running configuration kept");
	}
	return rc;
}

/*
 * The loader's outcome (loop thread): apply it, or keep the running
 * configuration. The outcome is kept for the reload requests waiting.
 */
static void reload_loaded(void *arg, struct smd_conf *conf, int rc, const char *lerr)
{
	struct dctx *c = arg;
	char cerr[1024] = "", *notes = c->rl_notes;
	size_t notes_len = sizeof(c->rl_notes);

	notes[0] = '\0';
	if (rc) {
		sm_err("SMD-0502", "%s", lerr);
		sm_err("SMD-0512", "reload failed; the running configuration is kept");
		snprintf(c->rl_err, sizeof(c->rl_err), "%s; the running configuration is kept", lerr);
		c->rl_rc = rc;
		reload_done(c, "reload failed, running configuration kept");
		return;
	}
	int level = conf->log_level;
	unsigned stall = conf->sweep_stall_limit, repeat_s = conf->log_repeat_interval;
	char *maddr = conf->metrics_listen ? strdup(conf->metrics_listen) : NULL;
	rc = conf->metrics_listen && !maddr ? -ENOMEM : 0;
	if (rc)
		snprintf(cerr, sizeof(cerr), "out of memory");
	else
		rc = smd_dmn_reconfigure(c->d, conf, notes, notes_len, cerr, sizeof(cerr));
	if (rc) {
		sm_err("SMD-0512", "reload failed: %s; the running configuration is kept", cerr);
		snprintf(c->rl_err, sizeof(c->rl_err), "%s; the running configuration is kept", cerr);
		c->rl_rc = rc;
		smd_conf_free(conf);
		free(maddr);
		reload_done(c, "reload failed, running configuration kept");
		return;
	}
	c->rl_rc = 0;
	metrics_listen(c, maddr);
	sm_log_set_level(level);
	c->stall_limit = stall;
	c->repeat_s = repeat_s;
	if (notes[0])
		sm_warn("SMD-0513", "reload: changes to %s need a restart; they are not applied", notes);
	sm_notice("SMD-0514", "configuration reloaded; it applies from the next sweep");
	reload_done(c, "configuration reloaded");
}

/* The reload command: parked until the load it asked for is applied or refused (reload_resume). */
static int reload_request(struct dctx *c, uint64_t *wait_for, char *err, size_t errlen)
{
	int rc = reload(c, "control socket", err, errlen);

	if (rc)
		return rc;
	*wait_for = 0;   /* resumed at once: "not yet" until the loader is done */
	return SMD_CTL_WAIT;
}

/* The outcome is the reply (smctl reload exits 1 on an error reply). */
static int reload_resume(struct dctx *c, struct sm_json *j, char *err, size_t errlen)
{
	if (smd_reload_busy(c->rl))
		return SMD_CTL_WAIT;
	if (c->rl_rc) {
		snprintf(err, errlen, "%s", c->rl_err);
		return c->rl_rc;
	}
	sm_json_str(j, "source", c->o->config);
	sm_json_str(j, "notes", c->rl_notes);
	return 0;
}

/* The config command: the running config as smd.yaml text. */
static int config_request(struct dctx *c, struct sm_json *j, char *err, size_t errlen)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	int rc = m ? smd_dmn_conf_print(c->d, m, SMD_CONF_PRINT_HIDE_KEYS) : -ENOMEM;

	if (m && fclose(m) && !rc)
		rc = -ENOMEM;
	if (rc) {
		free(text);
		snprintf(err, errlen, "config: %s", strerror(-rc));
		return rc;
	}
	sm_json_str(j, "source", c->o->config ? c->o->config : "(defaults)");
	sm_json_str(j, "text", text);
	free(text);
	return 0;
}

/*
 * After the first cycle the transports are open (and the control socket
 * and state directory exist): nothing needs root any more, unless a plane
 * has to be reopened later (see smd(8), SECURITY).
 */
static void drop_root(struct dctx *c)
{
	char err[512] = "";
	if (!c->user && !c->group)
		return;
	if (smd_priv_drop(c->user, c->group, c->state_dir, c->sock, err, sizeof(err))) {
		sm_err("SMD-0804", "cannot drop privileges: %s; stopping", err);
		c->drop_failed = 1;
		return;
	}
	sm_notice("SMD-0803", "running as uid %u gid %u (%s%s%s) from now on", (unsigned)getuid(),
		  (unsigned)getgid(), c->user ? c->user : "", c->group ? ":" : "", c->group ? c->group : "");
}

/*
 * Planes whose heavy sweep lost answers (sm.h "incomplete"): each such sweep, and the first complete one;
 * and what the light sweep found another SM did.
 */
static void incomplete_log(struct dctx *c, const struct smd_dmn_status *st)
{
	uint64_t now = sm_mono_us();

	for (unsigned i = 0; i < st->n_planes; i++) {
		const struct smd_dmn_plane *p = &st->planes[i];
		if (p->role.elected && (p->role.state & 3u) != 3u)
			continue;   /* another SM masters it: no cycle ran on it */
		/* the light sweep saw another SM's LID or LFT blocks smd did not write (sm.h) */
		if (p->light.foreign_ports || p->light.lft_blocks_drift)
			sm_warn("SMD-0562", "plane %u (%s): %s", i, p->spec, p->light.why);
		if (p->rc || !p->last_heavy)
			continue;
		if (!p->sum.incomplete) {
			if (c->incomplete_run[i])
				sm_notice("SMD-0561", "plane %u (%s): complete sweep after %u incomplete one%s; "
					  "%u CAs, %u switches", i, p->spec, c->incomplete_run[i],
					  c->incomplete_run[i] == 1 ? "" : "s", p->sum.counts.cas, p->sum.counts.switches);
			c->incomplete_run[i] = 0;
			continue;
		}
		c->incomplete_run[i]++;
		sm_warn("SMD-0560", "plane %u (%s): sweep INCOMPLETE: %u answers lost or Sets failed (first: %s); "
			"%u nodes and %u links kept from the last sweep, nothing it had dropped; heavy sweep again "
			"in %.1f s", i, p->spec, p->sum.incomplete, p->sum.incomplete_why, p->sum.merged_nodes,
			p->sum.merged_links, st->redo_due_us > now ? (double)(st->redo_due_us - now) / 1e6 : 0.0);
	}
}

static void cycle_done(struct dctx *c, struct smd_ctl_server *srv)
{
	struct smd_dmn_status *st = malloc(sizeof(*st));
	char line[1100];

	if (!st)
		return;
	smd_dmn_status(c->d, st);
	if (st->cycles != c->seen_sweeps) {
		int first = c->seen_sweeps == 0;
		smd_dmn_status_line(st, line, sizeof(line));
		for (unsigned i = 0; i < st->n_planes; i++) {
			struct repeat *r = &c->plane_rep[i];
			char text[768], rep[40];
			unsigned held, down;
			if (!st->planes[i].rc) {
				if ((down = repeat_end(r)))
					sm_notice("SMD-0526", "plane %u (%s) is up again after %u failed sweep%s", i,
						  st->planes[i].spec, down, down == 1 ? "" : "s");
				continue;
			}
			snprintf(text, sizeof(text), "plane %u (%s) is not up: %s", i, st->planes[i].spec,
				 st->planes[i].err);
			if (repeat_due(r, text, c->repeat_s, &held))
				sm_err("SMD-0520", "%s%s", text, repeated(rep, sizeof(rep), held));
			else
				sm_debug("SMD-0520", "%s", text);
		}
		incomplete_log(c, st);
		/* once per attempt (back-off: 1 s, 2 s, ... 60 s), not every cycle; and the recovery */
		if (st->lids_err[0] && st->lids_save.tried)
			sm_err("SMD-0521", "cannot save plane-consistent LIDs: %s (failed %u time%s, retried in %.0f s)",
			       st->lids_err, st->lids_save.failures, st->lids_save.failures == 1 ? "" : "s",
			       (double)((int64_t)st->lids_save.next_ms - sm_mono_ms() > 0 ?
					(int64_t)st->lids_save.next_ms - sm_mono_ms() : 0) / 1e3);
		if (st->lids_save.recovered)
			sm_notice("SMD-0807", "plane-consistent LIDs saved after %u failed attempt%s over %.1f s",
				  st->lids_save.recovered, st->lids_save.recovered == 1 ? "" : "s",
				  (double)st->lids_save.failing_ms / 1e3);
		/* routine cycles that changed nothing are logged at info level only; a cycle that
		 * is not up as the one before was not, at most once per log_repeat_interval */
		char rep[40] = "", what[64];
		unsigned held = 0;
		int loud = first || st->lft_blocks_written || st->portinfo_sets;
		snprintf(what, sizeof(what), "%s %u/%u", smd_dmn_state_name(st->last), st->planes_up, st->n_planes);
		if (st->last != SMD_ST_UP)
			loud = repeat_due(&c->sweep_rep, what, c->repeat_s, &held) || loud;
		else
			loud = repeat_end(&c->sweep_rep) || loud;
		if (loud)
			sm_notice("SMD-0522", "sweep %llu (%s%s%s): %s, %llu LFT blocks and %llu PortInfo written%s",
				  (unsigned long long)st->cycles, st->last_reason,
				  strcmp(st->last_reason, "trap") ? "" : ": ",
				  strcmp(st->last_reason, "trap") ? "" : st->last_trap, line,
				  (unsigned long long)st->lft_blocks_written, (unsigned long long)st->portinfo_sets,
				  repeated(rep, sizeof(rep), held));
		else
			sm_info("SMD-0522", "sweep %llu (%s): %s", (unsigned long long)st->cycles, st->last_reason, line);
		if (first)
			drop_root(c);
		status_text(st, line, sizeof(line));
		sd_notifyf(0, "%sSTATUS=%s", first ? "READY=1\n" : "", line);
		c->ready = 1;
		c->seen_sweeps = st->cycles;
		notes_rotate(c);
	}
	smd_ctl_server_wake(srv, st->cycles);
	free(st);
}

/*
 * One watchdog period has passed: ping, unless the worker is stuck in one
 * cycle (the same cycle seen sweeping for longer than sweep_stall_limit).
 */
static void watchdog_tick(struct dctx *c)
{
	struct smd_dmn_status *st = malloc(sizeof(*st));
	uint64_t now = sm_mono_us();

	if (!st) {
		sd_notify(0, "WATCHDOG=1");   /* no memory is not a wedged loop */
		return;
	}
	smd_dmn_status(c->d, st);
	int was_wedged = c->wd_wedged;
	if (st->state != SMD_ST_SWEEPING || st->cycles != c->wd_sweeps || !c->wd_since_us) {
		c->wd_sweeps = st->cycles;
		c->wd_since_us = now;
		c->wd_wedged = 0;
	}
	if (st->state == SMD_ST_SWEEPING && c->stall_limit &&
	    now - c->wd_since_us > c->stall_limit * 1000000ull) {
		if (!c->wd_wedged)
			sm_err("SMD-0524", "sweep %llu has been running for over %u s (sweep_stall_limit): "
			       "the worker looks wedged; watchdog pings stop, so systemd restarts smd",
			       (unsigned long long)st->cycles + 1, c->stall_limit);
		c->wd_wedged = 1;
	} else {
		if (was_wedged)
			sm_notice("SMD-0525", "sweep %llu is over; watchdog pings resume",
				  (unsigned long long)st->cycles);
		sd_notify(0, "WATCHDOG=1");
	}
	free(st);
}

/* Loop callbacks (main thread). */
static void on_cycle(void *arg)
{
	struct dctx *c = arg;

	cycle_done(c, c->srv);
	if (c->drop_failed)
		sm_loop_quit(c->loop);
}

static void on_watchdog(struct sm_loop_src *s, void *arg)
{
	struct dctx *c = arg;

	watchdog_tick(c);
	sm_loop_timer_set(s, sm_mono_us() + c->wd_period);
}

static void on_signal(struct sm_loop_src *s, int signo, void *arg)
{
	struct dctx *c = arg;

	(void)s;
	if (signo == SIGHUP) {
		char err[1024] = "";
		reload(c, "SIGHUP", err, sizeof(err));   /* logged there, and when the load is done */
	} else if ((signo == SIGTERM || signo == SIGINT) && !sm_loop_quitting(c->loop)) {
		c->t_stop = sm_mono_us();
		sd_notify(0, "STOPPING=1");
		sm_notice("SMD-0516", "stopping");
		c->status = 0;
		sm_loop_quit(c->loop);
	}
	/* SIGPIPE: read and dropped (a peer that went away is seen by the write) */
}

int smd_daemon(const struct smd_opts *o)
{
	struct dctx c = { .o = o, .note_mu = PTHREAD_MUTEX_INITIALIZER, .status = 1 };
	struct smd_conf *conf = NULL;
	const char *specs[SM_MAX_PLANES];
	char mockspec[300], err[1024] = "", sock[128];
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP, SIGPIPE };
	sigset_t mask, oldmask;
	unsigned n = 0;
	int masked = 0, rc;
	uint64_t wd_usec = 0;

	if (o->mode == SMD_MODE_DAEMON && (o->dumps[0] || o->lfts_out || o->report || o->profile))
		sm_warn("SMD-0504", "-t, --lfts-out, --report and --profile are for --dry-run; ignored");
	if (load_conf(o, &conf, err, sizeof(err)))
		return 1;
	if (o->config || o->verbose || o->quiet)
		sm_log_set_level(conf->log_level);
	if (plane_specs(o, conf, specs, &n, mockspec, sizeof(mockspec)))
		goto out;
	snprintf(sock, sizeof(sock), "%s", conf->socket);
	c.stall_limit = conf->sweep_stall_limit;
	c.repeat_s = conf->log_repeat_interval;

	/* before any thread exists, so every thread inherits the mask */
	sigemptyset(&mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(&mask, sigs[i]);
	pthread_sigmask(SIG_BLOCK, &mask, &oldmask);
	masked = 1;
	rc = sm_loop_new(&c.loop);
	for (size_t i = 0; !rc && i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sm_loop_src *src;
		rc = sm_loop_signal_add(c.loop, sigs[i], on_signal, &c, &src);
	}
	if (rc) {
		sm_err("SMD-0505", "event loop: %s", strerror(-rc));
		goto out;
	}
	if (smd_state_lock_take(conf->state_dir))   /* SMD-0805: another smd holds it */
		goto out;
	if ((rc = smd_reload_new(c.loop, o, reload_loaded, &c, &c.rl))) {
		sm_err("SMD-0505", "event loop: %s", strerror(-rc));
		goto out;
	}
	rc = smd_ctl_server_open(sock, &ctl_ops, &c, &c.srv, err, sizeof(err));
	if (rc) {
		sm_err("SMD-0506", "control socket: %s", err);
		goto out;
	}
	c.sock = sock;
	if ((conf->user && !(c.user = strdup(conf->user))) || (conf->group && !(c.group = strdup(conf->group))) ||
	    (conf->state_dir && !(c.state_dir = strdup(conf->state_dir)))) {
		sm_err("SMD-0507", "out of memory");
		goto out;
	}
	char *maddr = NULL;
	if (conf->metrics_listen && !(maddr = strdup(conf->metrics_listen))) {
		sm_err("SMD-0507", "out of memory");
		goto out;
	}
	struct smd_dmn_cfg dc = { .specs = specs, .n_specs = n, .note = note_log, .note_arg = &c,
				  .loop = c.loop, .cycle_done = on_cycle, .cycle_arg = &c };
	/* specs point into conf (or mockspec); the daemon copies them before conf can be replaced */
	rc = smd_dmn_new(conf, &dc, &c.d, err, sizeof(err));
	if (rc) {
		sm_err("SMD-0507", "%s", err);
		free(maddr);
		goto out;
	}
	conf = NULL;   /* owned by the daemon now */
	metrics_listen(&c, maddr);   /* before the privilege drop: a port below 1024 needs root */
	sm_notice("SMD-0508", "smd %s: %u plane%s, control socket %s", PACKAGE_VERSION, n, n == 1 ? "" : "s",
		  sock);
	for (unsigned i = 0; i < n; i++)
		sm_info("SMD-0509", "plane %u: %s", i, specs[i]);

	/* WATCHDOG_USEC set by systemd (WatchdogSec=): ping at half the period, from the loop */
	if (sd_watchdog_enabled(0, &wd_usec) > 0 && wd_usec) {
		c.wd_period = wd_usec / 2 ? wd_usec / 2 : 1;
		if ((rc = sm_loop_timer_add(c.loop, on_watchdog, &c, &c.wd))) {
			sm_err("SMD-0505", "event loop: %s", strerror(-rc));
			goto out;
		}
		sm_loop_timer_set(c.wd, sm_mono_us());
		sm_info("SMD-0523", "systemd watchdog: %.3f s, pinging every %.3f s", (double)wd_usec / 1e6,
			(double)c.wd_period / 1e6);
	}
	/* the control server's poll waits on its fds and the loop's; the loop then runs what is due */
	while (!sm_loop_quitting(c.loop)) {
		struct pollfd ext = { .fd = sm_loop_fd(c.loop), .events = POLLIN };
		rc = smd_ctl_server_poll(c.srv, &ext, 1, -1);
		if (!rc)
			rc = sm_loop_dispatch(c.loop, 0);
		if (rc < 0) {
			sm_err("SMD-0515", "poll: %s", strerror(-rc));
			c.status = 1;
			break;
		}
	}
out:
	smd_http_free(c.http);        /* its requests read the daemon: first */
	free(c.metrics_addr);
	smd_ctl_server_free(c.srv);   /* parked clients get "daemon stopping" */
	smd_reload_free(c.rl);        /* waits for a load in progress (bounded: one file of 1 MiB at most) */
	smd_dmn_free(c.d);            /* cuts a running cycle short, saves LIDs, closes transports */
	sm_loop_free(c.loop);
	smd_conf_free(conf);
	free(c.user);
	free(c.group);
	free(c.state_dir);
	if (masked)
		pthread_sigmask(SIG_SETMASK, &oldmask, NULL);
	if (c.status == 0)
		sm_notice("SMD-0517", "stopped (shutdown took %.2f s)", (double)(sm_mono_us() - c.t_stop) / 1e6);
	return c.status;
}
