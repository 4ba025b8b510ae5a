/* SPDX-License-Identifier: MIT */
#ifndef SMD_CTL_DAEMON_H
#define SMD_CTL_DAEMON_H
/*
 * DOC: the daemon's side of the smctl commands that read the fabric or
 * change the running SM (nodes, links, route, lft, dump, metrics, engine);
 * requests and replies are documented in ctl.h. smd/smd_daemon.c's request
 * dispatch hands these commands here.
 *
 * The fabric commands read the per-plane views (daemon.h smd_dmn_view_get):
 * the fabric and LFTs of each plane's last successful bring-up, so they
 * answer from the main thread while the worker sweeps, and what they show
 * is what was programmed (each plane entry carries the "cycle" it is from).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "routing/engine.h"
#include "model/fabric.h"

struct smd_dmn;
struct smd_opts;
struct smd_jv;
struct sm_json;

/* Is cmd one of ours? */
int smd_ctl_daemon_has(const char *cmd);

/*
 * Answer one of our commands (as struct smd_ctl_ops.handle). o: the
 * daemon's command line (engine set re-reads its config file and options).
 */
int smd_ctl_daemon_request(struct smd_dmn *d, const struct smd_opts *o, const char *cmd,
			   const struct smd_jv *req, struct sm_json *j, uint64_t *wait_for, char *err,
			   size_t errlen);

/*
 * Metrics (cmd_metrics.c): the SMP-loss and M_Key metrics of a "metrics"
 * reply, appended to the others; and the whole reply as Prometheus text
 * (the same text smctl metrics prints), for the HTTP endpoint (ctl/http.h).
 */
struct smd_dmn_status;
void smd_dmn_metrics_more(struct sm_json *j, const struct smd_dmn_status *st);
int smd_dmn_metrics_text(struct smd_dmn *d, FILE *out, char *err, size_t errlen);

/*
 * link, switch, faults (cmd_fault.c): rehearsing failures on mock planes.
 * Parked (SMD_CTL_WAIT) while a cycle runs; resume applies it once the
 * worker is idle (or says "not yet" again).
 */
enum smd_ctl_cmd_id;
int smd_dmn_fault_request(struct smd_dmn *d, enum smd_ctl_cmd_id id, const struct smd_jv *req, struct sm_json *j,
			  uint64_t *wait_for, char *err, size_t errlen);
int smd_dmn_fault_resume(struct smd_dmn *d, enum smd_ctl_cmd_id id, const struct smd_jv *req, struct sm_json *j,
			 char *err, size_t errlen);

/*
 * engine set (cmd_engine.c): the config file and command line read off the
 * loop with the new chain, then applied (smd_dmn_reconfigure) and a sweep;
 * parked (SMD_CTL_WAIT) until then. resume: SMD_CTL_WAIT (not yet), 0 (the
 * sweep that applies it is done: reply as sweep), or -errno with err.
 */
int smd_dmn_engine_request(struct smd_dmn *d, const struct smd_opts *o, const struct smd_jv *req,
			   uint64_t *wait_for, char *err, size_t errlen);
int smd_dmn_engine_resume(struct smd_dmn *d, const struct smd_jv *req, char *err, size_t errlen);

/* nodes, links, route, lft, dump (cmd_fabric.c); as smd_ctl_daemon_request. */
int smd_ctl_fabric_request(struct smd_dmn *d, const char *cmd, const struct smd_jv *req, struct sm_json *j,
			   char *err, size_t errlen);

/* ---- route walking (pure; exported for tests) ---- */
enum smd_route_result {
	SMD_ROUTE_OK = 0,
	SMD_ROUTE_NOT_LINKED,   /* the source port has no link */
	SMD_ROUTE_NO_LID,       /* the destination has no LID */
	SMD_ROUTE_NO_ENTRY,     /* a switch has no LFT entry for the DLID (black hole) */
	SMD_ROUTE_BAD_PORT,     /* an entry names a port the switch does not have */
	SMD_ROUTE_DEAD_END,     /* an entry leads out of a port with no link */
	SMD_ROUTE_LOOP,         /* the path comes back to a switch it went through */
	SMD_ROUTE_WRONG_DEST,   /* the path ends at a node that does not own the DLID */
};
const char *smd_route_result_name(enum smd_route_result r);

struct smd_route_hop {
	uint32_t node;      /* a switch */
	uint8_t in_port;    /* 0 when the source is this switch */
	uint8_t out_port;   /* SM_LFT_NONE when the LFT has no entry */
};

/*
 * Follow l's LFTs from src (a port index: a CA port, or a switch's port 0)
 * to the LID of dst (a port index) hop by hop. hops[] gets every switch
 * visited (at most max_hops; a longer path is reported as a loop, which it
 * must be once it exceeds the switch count). *end gets the port index the
 * path arrived at (SM_NONE if it did not arrive anywhere). Never loops:
 * a switch visited twice ends the walk.
 */
enum smd_route_result smd_route_walk(const struct sm_fabric *f, const struct sm_lfts *l, uint32_t src,
				     uint32_t dst, struct smd_route_hop *hops, unsigned max_hops,
				     unsigned *n_hops, uint32_t *end);

/*
 * Find an endpoint in one plane: "lid:N" / "guid:G", a number (<= 0xBFFF a
 * LID, else a port GUID, then a node GUID), an exact node description, or a
 * host name (the description's first word, CAs only). A CA found by node
 * GUID, description or host name is its first port with a LID; a switch is
 * its port 0. want_switch: only switches match. 0 and *port (index),
 * -ENOENT (not in this plane) or -EINVAL (ambiguous, bad), with a message.
 */
int smd_ctl_find_port(const struct sm_fabric *f, unsigned plane, const char *what, int want_switch,
		      uint32_t *port, char *err, size_t errlen);

#endif
