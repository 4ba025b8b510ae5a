/* SPDX-License-Identifier: MIT */
#ifndef SMD_CTL_H
#define SMD_CTL_H
/*
 * DOC: smd control protocol (the contract between smd and smctl)
 *
 * Transport: a Unix stream socket (config `socket`, --socket PATH; default
 * /run/smd/smd.sock), mode 0660, so access is granted by the socket's group.
 *
 * Requests: one JSON object per line (at most SMD_CTL_MAX_REQ bytes with
 * the newline; SMD_CTL_MAX_BIG_REQ for a profile with content). A client may send several lines on one connection; each is
 * answered in order. A request that ends at EOF without a newline is still
 * answered. Requests are flat objects: every value is a string, number,
 * boolean or null (nested objects/arrays are refused).
 *     {"version":1,"cmd":"status"}
 * Members: "cmd" (required, string); "version" (optional number; only 1 is
 * accepted, a missing version means 1); command arguments (below). Unknown
 * members are ignored, so later clients may send optional arguments.
 *
 * Replies: one JSON object on one line, ending with "\n":
 *     {"version":1,"ok":true,"cmd":"status",...}      success
 *     {"version":1,"ok":false,"error":"text"}         failure
 * A reply's members are stable: new members may be added, existing ones are
 * never renamed or removed within protocol version 1.
 *
 * Commands (version 1; smd_ctl_cmds below is their table: smctl words and
 * help, request members, flags, for the daemon and smctl alike):
 *   status   state ("starting": the first cycle has not completed;
 *            "sweeping": a later cycle is running; "up": every plane came up
 *            in the last cycle; "degraded": some did; "down": none did),
 *            planes, planes_up, switches, cas, lids (sums over the planes of
 *            the last cycle), sweeps (sweeps completed: light and heavy
 *            cycles), mcast_cycles (multicast cycles completed, MFT-only
 *            passes; not sweeps; sweep_history's seq and a sweep's "target"
 *            count sweeps + mcast_cycles), last_reason (of
 *            the last completed cycle: "start", "request", "interval",
 *            "trap"), traps, last_trap,
 *            engine (engine
 *            that routed plane 0 last, or the configured chain before the
 *            first cycle), chain, sweep_interval, last_sweep_s,
 *            last_sweep_age_s, uptime_s, pid, lid_table_error,
 *            sweep_running_s and sweep_phases (per plane: the sm_phase_name
 *            its bring-up is in, null none; both null between cycles),
 *            and the sweep kinds and
 *            counters of daemon.h (light_sweeps, heavy_sweeps, ...).
 *   planes   "planes": array of {index, spec, state ("up", "failed",
 *            "not swept"), error (when failed), attempts, switches, cas,
 *            lids, active_ports, link_ports, sweeps, smps_sent,
 *            lft_blocks_written, portinfo_sets, engine, seconds}; plus
 *            "plane_lids" (shared LID table counters) when the table is open;
 *            "health" (hosts.h sm_planes_health_json of the last cycle's
 *            fabrics, null with "health_error" when not computed).
 *   sweep    run a cycle (smctl resweep; smctl sweep is the same).
 *            Arguments: "kind" ("light": one SwitchInfo per known switch,
 *            a plane that shows a change is brought up heavy in the same
 *            cycle; "heavy": rediscover, reroute, reprogram what differs;
 *            "reread": heavy and every LFT block read back first; default
 *            "heavy", what "sweep" meant before kinds existed); "wait"
 *            (bool, default true): the reply comes when a cycle that
 *            started after the request has completed, with "kind", "ran"
 *            ("light"/"heavy": what that cycle did), "escalated", "sweeps",
 *            "result", "planes_up", "failed", "standby" (planes another SM
 *            masters), "seconds",
 *            "lft_blocks_written", "portinfo_sets"; with "wait": false it
 *            comes at once with "queued": true and "target".
 *   version  "smd" (package version), "protocol" (1).
 *   profile  "path" (absolute; "" clears), or "content" (the profile's text,
 *            at most SMD_CTL_MAX_CONTENT bytes; the request may then be
 *            longer than SMD_CTL_MAX_REQ, see there) with "name" (for
 *            messages): see smd/daemon/cmd_profile.c; replies as sweep.
 *   reload   re-read the config file exactly as SIGHUP does (same log lines,
 *            RELOADING=1/READY=1 to systemd) and answer with the outcome:
 *            "source" (the file), "notes" (keys that need a restart, "" none);
 *            an error reply "FILE:LINE: ...; the running configuration is
 *            kept" when the file is refused, or when smd runs without -c.
 *   config   "source", "text": the running config (the one the next cycle
 *            uses) as smd.yaml text (smd_conf_print; fixed keys hidden).
 * Fabric commands (smd/daemon/cmd_fabric.c), answered from each plane's view (the
 * fabric and LFTs of its last successful bring-up, daemon.h). Optional
 * "plane" (number) restricts them to one plane. The reply has "planes":
 * one entry per plane {"plane", "cycle" (the sweep the view is from), ...}
 * or {"plane", "error"} for a plane that has not come up. GUIDs are
 * strings "0x%016x".
 *   nodes    entry "nodes": [{type, guid, sysimg_guid, lid, ports, links,
 *            desc, port_lids (CAs)}], switches first, then CAs, routers,
 *            each by GUID.
 *   links    entry "links": [{a, b, state, peer_state, width, speed}], each
 *            link once; a/b = {type, guid, port_guid, port, lid, desc}.
 *   route    "src", "dst" (strings: a LID, "lid:N", a GUID, "guid:G", a
 *            node description, a CA's host name; smd/daemon/cmd.h
 *            smd_ctl_find_port). Entry: "result" (smd_route_result_name:
 *            "ok", "no route", "loop", "dead end", "bad port", "wrong
 *            destination", "source not linked", "destination has no LID",
 *            or "not in plane"/"error" with "error"), "dlid", "src", "dst",
 *            "hops": [{guid, lid, desc, in_port, out_port (null: no
 *            entry)}], "arrived" (wrong destination). Reply totals "routed",
 *            "broken". Error reply when no plane has both ends.
 *   lft      "switch" (as route's names, switches only). Entry: guid, lid,
 *            desc, top_lid, "ports" (egress port of LIDs 0..top_lid, 255
 *            none), "text" (dump_lfts format, lftfile.h). Error reply when
 *            no plane has the switch.
 *   dump     "what": "topology" (the default). Entry "text": the plane in
 *            ibnetdiscover format (topo.h sm_topo_write_ibnd).
 * Other commands (smd/daemon/cmd.c):
 *   metrics  "metrics": [{name, type ("counter"/"gauge"), help, samples:
 *            [{labels: {name: value}, value}]}]; smctl renders the
 *            Prometheus text format (smd_metrics_render).
 *   engine   "action": "set" (the default), "chain": "a,b": the config is
 *            re-read as on SIGHUP with this routing_engine and applied
 *            through smd_dmn_reconfigure (a bad chain: error reply, the
 *            running one kept); then a heavy sweep; the reply is as sweep
 *            plus "chain" and "engine".
 *
 * Access (auth.c): on accept the peer's credentials (SO_PEERCRED) are
 * checked; only root, the daemon's user and members of the configured
 * socket_group are served. Others get {"ok":false,"error":"permission
 * denied: ..."} and the connection is closed (ops.access_note logs it).
 *
 * Robustness (requests are untrusted): a line longer than SMD_CTL_MAX_REQ,
 * bad JSON, a non-object, a nested value, a missing/unknown cmd or an
 * unsupported version get an error reply; an overlong line also closes the
 * connection. A client that does not complete a request within
 * SMD_CTL_TIMEOUT_MS, or does not read its reply in that time, is dropped.
 * At most SMD_CTL_MAX_CLIENTS connections are served, at most
 * SMD_CTL_MAX_PER_UID of one uid other than root, and the last
 * SMD_CTL_ROOT_SLOTS only to root; one more is answered
 * {"ok":false,"error":"too many clients..."} and closed. No client can block
 * the daemon: sockets are non-blocking and served from one poll loop.
 */
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/json.h"

#define SMD_CTL_VERSION 1
#define SMD_CTL_DEFAULT_SOCKET "/run/smd/smd.sock"   /* as smd.yaml(5) `socket` */
#define SMD_CTL_MAX_REQ 4096
/*
 * A command flagged SMD_CTL_CMD_BIG_REQ (profile, with "content") may send
 * a longer line, up to SMD_CTL_MAX_BIG_REQ, provided the line begins
 * exactly with SMD_CTL_BIG_PREFIX and the command's name (smctl writes it
 * so): the server must know before the line ends that it may grow.
 * SMD_CTL_MAX_CONTENT bounds the content itself (after JSON unescaping).
 */
#define SMD_CTL_MAX_CONTENT (4u << 20)
#define SMD_CTL_MAX_BIG_REQ (2 * SMD_CTL_MAX_CONTENT + SMD_CTL_MAX_REQ)
#define SMD_CTL_BIG_PREFIX "{\"version\":1,\"cmd\":\""
#define SMD_CTL_MAX_CLIENTS 32
#define SMD_CTL_MAX_PER_UID 8     /* connections of one non-root uid */
#define SMD_CTL_ROOT_SLOTS 2      /* of SMD_CTL_MAX_CLIENTS, kept for root */
#define SMD_CTL_TIMEOUT_MS 5000
#define SMD_CTL_RECHECK_MS 20     /* a resume that said "not yet" is called again after this */
#define SMD_CTL_MAX_REPLY (64u << 20)  /* what the client helper accepts (dump, lft of big fabrics) */
#define SMD_CTL_GROUP_MAX 64           /* socket_group name */

/* ---- the commands (proto.c): one table for the daemon and smctl ---- */
enum smd_ctl_cmd_id {
	SMD_CMD_STATUS, SMD_CMD_PLANES, SMD_CMD_VERSION, SMD_CMD_METRICS, SMD_CMD_NODES, SMD_CMD_LINKS,
	SMD_CMD_ROUTE, SMD_CMD_LFT, SMD_CMD_DUMP, SMD_CMD_SWEEP, SMD_CMD_ENGINE, SMD_CMD_PROFILE,
	SMD_CMD_RELOAD, SMD_CMD_CONFIG, SMD_CMD_LINK, SMD_CMD_SWITCH, SMD_CMD_FAULTS,
	SMD_CMD_N
};

enum {
	SMD_CTL_CMD_PLANE = 1 << 0,      /* takes "plane" (smctl --plane N) */
	SMD_CTL_CMD_PLANE_DATA = 1 << 1, /* per-plane data: with --json, smctl exits 1 when no plane has any */
	SMD_CTL_CMD_WAITS = 1 << 2,      /* the reply comes after a sweep cycle (smctl: no timeout, progress) */
	SMD_CTL_CMD_SWEEP_OPTS = 1 << 3, /* smctl: --heavy, --reread, --no-wait, --timeout */
	SMD_CTL_CMD_DAEMON = 1 << 4,     /* answered by smd/daemon/cmd.c (smd_ctl_daemon_request) */
	SMD_CTL_CMD_OWN_WORDS = 1 << 5,  /* smctl reads its words itself (smctl_profile.c) */
	SMD_CTL_CMD_BIG_REQ = 1 << 6,    /* its request may be up to SMD_CTL_MAX_BIG_REQ (see there) */
};

struct smd_ctl_cmd {
	const char *name;          /* the request's "cmd", and smctl's word for it */
	const char *alias;         /* another smctl word for it, or NULL */
	unsigned flags;            /* SMD_CTL_CMD_* */
	const char *args[2];       /* the request members smctl's words after the name fill, in order */
	const char *args_missing;  /* smctl's complaint when words are missing */
	const char *word0;         /* the only value the first word may have, or NULL */
	const char *word0_wrong;   /* smctl's complaint when it has another */
	const char *help;          /* smctl usage lines (NULL: under the entry before) */
};

extern const struct smd_ctl_cmd smd_ctl_cmds[SMD_CMD_N];
/* The command named (or aliased) word, NULL if none. Its id is c - smd_ctl_cmds. */
const struct smd_ctl_cmd *smd_ctl_cmd_find(const char *word);
unsigned smd_ctl_cmd_n_args(const struct smd_ctl_cmd *c);
/*
 * The longest request line accepted for a line that begins with buf[0..len)
 * (SMD_CTL_MAX_BIG_REQ when it begins with SMD_CTL_BIG_PREFIX and the name
 * of a SMD_CTL_CMD_BIG_REQ command, else SMD_CTL_MAX_REQ).
 */
size_t smd_ctl_max_request(const char *buf, size_t len);

/*
 * Validate one request line: a flat object with a string "cmd" and an
 * accepted version. 0 with *out (the object) and *cmd (points into it), or
 * -EINVAL / -E2BIG / -ENOMEM with a message for the error reply.
 */
int smd_ctl_parse_request(const char *buf, size_t len, struct smd_jv **out, const char **cmd,
			  char *err, size_t errlen);

/* ---- replies ---- */
struct sm_json;
/* Start a success reply: opens the object and writes version, ok, cmd. */
void smd_ctl_reply_begin(struct sm_json *j, const char *cmd);
/* A complete error reply line into a malloc'ed buffer (NULL on ENOMEM). */
char *smd_ctl_error_line(const char *msg, size_t *len);

/* ---- server ---- */
struct smd_ctl_server;

/* What a handler returns besides 0 / -errno: the reply waits for an event. */
#define SMD_CTL_WAIT 1

struct smd_ctl_ops {
	/*
	 * Answer req (cmd already validated). Write the reply's members into j
	 * (smd_ctl_reply_begin() already called, the object is closed by the
	 * server) and return 0; or return a negative errno with a message in
	 * err (error reply); or return SMD_CTL_WAIT with *wait_for set: the
	 * server parks the connection until smd_ctl_server_wake() is called with
	 * a value >= *wait_for, then calls resume().
	 */
	int (*handle)(void *arg, const char *cmd, const struct smd_jv *req, struct sm_json *j,
		      uint64_t *wait_for, char *err, size_t errlen);
	int (*resume)(void *arg, const char *cmd, const struct smd_jv *req, struct sm_json *j,
		      char *err, size_t errlen);
	/* resume may also return SMD_CTL_WAIT ("not yet", e.g. a check running off the loop): it is
	 * called again after SMD_CTL_RECHECK_MS or at the next wake, whichever comes first */
	/*
	 * Optional: the group (name or number; "" none) whose members may use
	 * the socket besides root and the daemon's own user. Asked at every poll
	 * round, so a reload applies; when it changes the socket file is given
	 * that group (chown). NULL: root and the daemon's user only.
	 */
	void (*socket_group)(void *arg, char *name, size_t len);
	/* Optional: access events for the log (a refused peer with its uid/pid, a group that cannot be applied). */
	void (*access_note)(void *arg, const char *msg);
};

/* ---- access (auth.c) ---- */
struct smd_ctl_peer {
	pid_t pid;
	uid_t uid;
	gid_t gid;
};
/*
 * May this peer (SO_PEERCRED) use the socket? 1 yes: uid 0, uid == self,
 * or (with have_group) a member of group `gid`: the peer's gid, a
 * supplementary group of the peer process (/proc/PID/status "Groups:",
 * used when its "Uid:" matches the peer's uid), else of the peer's user
 * (getgrouplist). 0 no, with the reason in why (group_name names the group).
 */
int smd_ctl_peer_allowed(const struct smd_ctl_peer *p, uid_t self, int have_group, gid_t gid,
			 const char *group_name, char *why, size_t whylen);
/* A group name or decimal gid to a gid: 0, or -ENOENT. */
int smd_ctl_group_gid(const char *name, gid_t *gid);

/*
 * Listen on path (mode 0660). A stale socket file (nobody answers on it) is
 * replaced; a live one is -EADDRINUSE ("another smd is running"). A missing
 * parent folder is created (one level, 0755).
 */
int smd_ctl_server_open(const char *path, const struct smd_ctl_ops *ops, void *arg,
			struct smd_ctl_server **out, char *err, size_t errlen);
/* Close every connection (parked ones get "daemon stopping") and unlink the socket if it is still ours. */
void smd_ctl_server_free(struct smd_ctl_server *s);  /* accepts NULL */

/*
 * One poll round: poll the server's sockets plus the caller's `extra` fds
 * (their revents are filled for the caller), serve what is ready, drop
 * clients past their deadline. Returns 0 or a negative errno from poll
 * (-EINTR is returned as 0).
 */
int smd_ctl_server_poll(struct smd_ctl_server *s, struct pollfd *extra, unsigned n_extra, int timeout_ms);
/* Resume parked connections whose wait_for <= value. */
void smd_ctl_server_wake(struct smd_ctl_server *s, uint64_t value);
unsigned smd_ctl_server_clients(const struct smd_ctl_server *s);
/* The uid (SO_PEERCRED) of the peer whose request is being handled or resumed; (uid_t)-1 outside. */
uid_t smd_ctl_server_peer_uid(const struct smd_ctl_server *s);

/* ---- client ---- */
/*
 * Send one request line (a newline is added if missing) to the daemon at
 * path and read one reply line. timeout_ms < 0: wait forever (sweep).
 * 0 and a malloc'ed NUL-terminated *reply; -ENOENT/-ECONNREFUSED (no
 * daemon), -ETIMEDOUT, -EPROTO (reply too long / cut), with a message.
 */
int smd_ctl_call(const char *path, const char *request, int timeout_ms, char **reply, char *err,
		 size_t errlen);
/*
 * The same; while no reply byte has come, tick(tick_arg, seconds waited)
 * is called every tick_ms (first after tick_ms), e.g. to print progress
 * of a long sweep. tick may be NULL.
 */
typedef void smd_ctl_tick_fn(void *arg, double waited_s);
int smd_ctl_call_ex(const char *path, const char *request, int timeout_ms, int tick_ms, smd_ctl_tick_fn *tick,
		    void *tick_arg, char **reply, char *err, size_t errlen);

/*
 * A "metrics" reply as Prometheus text exposition (metrics.c). 0,
 * -EPROTO (a malformed reply: bad name, type or label) with err, -EIO.
 */
#include <stdio.h>
int smd_metrics_render(FILE *out, const struct smd_jv *reply, char *err, size_t errlen);

/*
 * Building a "metrics" reply (metrics.c): one metric is begin, samples,
 * end. A sample's labels are NULL-terminated name/value pairs:
 * smd_metric_sample(j, 3, "plane", "plane0", NULL). Integral values are
 * sent whole (counters keep every digit). The plane label's value is
 * smd_metric_plane_name(): "plane0", "plane1", ...
 */
struct sm_json;
void smd_metric_begin(struct sm_json *j, const char *name, const char *type, const char *help);
void smd_metric_sample(struct sm_json *j, double v, ...) __attribute__((sentinel));
void smd_metric_value(struct sm_json *j, double v);
void smd_metric_end(struct sm_json *j);
void smd_metric_plane_name(unsigned plane, char *buf, size_t len);

/*
 * smctl status|planes|sweep|version (smd/smctl_cmds.c): argv holds the
 * command name and its words. Exit 0, 1 (failed: no daemon, error reply),
 * 2 (usage).
 */
struct smctl_global;
int smctl_daemon_cmd(const struct smctl_global *g, int argc, char **argv);

#endif
