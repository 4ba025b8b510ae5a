/* SPDX-License-Identifier: MIT */
/*
 * DOC: the daemon's side of metrics and engine set, and the entry point for
 * every command of cmd.h (the fabric ones live in cmd_fabric.c).
 *
 * metrics: the daemon sends the values as structured JSON (name, type,
 * help, samples with labels) and smctl renders the Prometheus text
 * exposition format (smd_metrics_render, smd/ctl/metrics.c), so --json users
 * get numbers and nobody parses exposition text. Counters ("_total") count
 * since the daemon started; "last sweep" values are gauges.
 *
 * engine set: cmd_engine.c (the config read off the loop, then the reload
 * path and a sweep).
 */
#include "config.h"
#include "lib/clock.h"
#include "daemon/cmd.h"
#include "ctl/ctl.h"
#include "daemon/daemon.h"
#include "lib/json.h"
#include "config/options.h"
#include "config/smdconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


/* Ours: the commands the table (ctl.h) marks SMD_CTL_CMD_DAEMON. */
int smd_ctl_daemon_has(const char *cmd)
{
	const struct smd_ctl_cmd *c = smd_ctl_cmd_find(cmd);

	return c && !strcmp(c->name, cmd) && (c->flags & SMD_CTL_CMD_DAEMON);
}

/* ------------------------------------------------------------------ */
/* metrics                                                              */

static void m_begin(struct sm_json *j, const char *name, const char *type, const char *help)
{
	smd_metric_begin(j, name, type, help);
}

static void m_end(struct sm_json *j)
{
	smd_metric_end(j);
}

static void sample(struct sm_json *j, const char *lk, const char *lv, double v)
{
	if (lk)
		smd_metric_sample(j, v, lk, lv, NULL);
	else
		smd_metric_sample(j, v, NULL);
}

static void metric1(struct sm_json *j, const char *name, const char *type, const char *help, double v)
{
	m_begin(j, name, type, help);
	sample(j, NULL, NULL, v);
	m_end(j);
}

enum pf { PF_UP, PF_SWITCHES, PF_CAS, PF_LIDS, PF_ACTIVE, PF_LINKP, PF_CYC_UP, PF_CYC_FAIL, PF_SMPS_T,
	  PF_BLOCKS_T, PF_PI_T, PF_SMPS, PF_BLOCKS, PF_PI, PF_SECS, PF_INCOMPLETE, PF_PORTCFG_T, PF_PKEY_T, PF_MFT_T };

static double plane_field(const struct smd_dmn_plane *p, enum pf f)
{
	int up = p->swept && !p->rc;
	switch (f) {
	case PF_UP: return up && !p->sum.incomplete;   /* up only after a complete sweep */
	case PF_INCOMPLETE: return up ? p->sum.incomplete : 0;
	case PF_SWITCHES: return up ? p->sum.counts.switches : 0;
	case PF_CAS: return up ? p->sum.counts.cas : 0;
	case PF_LIDS: return up ? p->sum.counts.lids : 0;
	case PF_ACTIVE: return up ? p->sum.active_ports : 0;
	case PF_LINKP: return up ? p->sum.link_ports : 0;
	case PF_CYC_UP: return (double)p->cycles_up;
	case PF_CYC_FAIL: return (double)p->cycles_failed;
	case PF_SMPS_T: return (double)p->smps_total;
	case PF_BLOCKS_T: return (double)p->lft_blocks_total;
	case PF_PI_T: return (double)p->portinfo_sets_total;
	case PF_PORTCFG_T: return (double)p->portcfg_sets_total;
	case PF_PKEY_T: return (double)p->pkey_blocks_total;
	case PF_MFT_T: return (double)p->mft_blocks_total;
	case PF_SMPS: return (double)p->sum.txn.sent;
	case PF_BLOCKS: return p->sum.lft_blocks_written;
	case PF_PI: return (double)p->sum.portinfo_lid_sets + p->sum.portinfo_state_sets;
	case PF_SECS: return p->seconds;
	}
	return 0;
}

static void sample2(struct sm_json *j, unsigned plane, const char *lk, const char *lv, double v)
{
	char pl[16];

	smd_metric_plane_name(plane, pl, sizeof(pl));
	smd_metric_sample(j, v, "plane", pl, lk, lv, NULL);
}

/* Each plane's SA (daemon/sa.c): whether it answers, requests, and answers by attribute and status. */
static void sa_metrics(struct sm_json *j, const struct smd_dmn_status *st)
{
	static const struct {
		const char *name, *type, *help;
	} per_plane[] = {
		{ "smd_sa_up", "gauge", "1 if the plane's SA answers" },
		{ "smd_sa_requests_total", "counter", "SA MADs received" },
		{ "smd_sa_answered_total", "counter", "SA requests answered (any status)" },
		{ "smd_sa_dropped_total", "counter", "SA MADs dropped (undecodable, not for us, over the fair share)" },
		{ "smd_sa_mc_groups", "gauge", "Multicast groups of the plane (the IPoIB broadcast groups included)" },
		{ "smd_sa_mc_members", "gauge", "Members of the plane's multicast groups" },
	};
	char lv[16];

	for (size_t m = 0; m < sizeof(per_plane) / sizeof(per_plane[0]); m++) {
		m_begin(j, per_plane[m].name, per_plane[m].type, per_plane[m].help);
		for (unsigned i = 0; i < st->n_planes; i++) {
			const struct smd_dmn_sa *s = &st->sa[i];
			double v[] = { s->open, (double)s->stats.received, (double)s->stats.answered,
				       (double)s->stats.dropped, (double)s->mc_groups, (double)s->mc_members };
			smd_metric_plane_name(i, lv, sizeof(lv));
			sample(j, "plane", lv, v[m]);
		}
		m_end(j);
	}
	m_begin(j, "smd_sa_queries_total", "counter", "SA requests by attribute");
	for (unsigned i = 0; i < st->n_planes; i++)
		for (unsigned k = 0; k < SM_SA_STATS_ATTRS; k++)
			if (st->sa[i].stats.by_attr[k].n)
				sample2(j, i, "attribute", smd_dmn_sa_attr_label(st->sa[i].stats.by_attr[k].attr_id, lv),
					(double)st->sa[i].stats.by_attr[k].n);
	m_end(j);
	m_begin(j, "smd_sa_answers_total", "counter", "SA answers by MAD status");
	for (unsigned i = 0; i < st->n_planes; i++)
		for (unsigned k = 0; k < sizeof(st->sa[i].stats.by_status) / sizeof(st->sa[i].stats.by_status[0]); k++)
			if (st->sa[i].stats.by_status[k].n)
				sample2(j, i, "status", smd_dmn_sa_status_label(st->sa[i].stats.by_status[k].status, lv),
					(double)st->sa[i].stats.by_status[k].n);
	m_end(j);
}

static void metrics(struct sm_json *j, const struct smd_dmn_status *st)
{
	static const struct {
		const char *name, *type, *help;
		enum pf f;
	} per_plane[] = {
		{ "smd_plane_up", "gauge", "1 if the plane came up in the last sweep", PF_UP },
		{ "smd_plane_incomplete", "gauge",
		  "Answers lost or Sets failed in the plane's last heavy sweep (0: complete)", PF_INCOMPLETE },
		{ "smd_plane_switches", "gauge", "Switches of the plane in its last sweep (0 when down)", PF_SWITCHES },
		{ "smd_plane_cas", "gauge", "Channel adapters of the plane in its last sweep (0 when down)", PF_CAS },
		{ "smd_plane_lids", "gauge", "LIDs assigned in the plane in its last sweep (0 when down)", PF_LIDS },
		{ "smd_plane_active_ports", "gauge", "Link ports ACTIVE at the end of the last sweep", PF_ACTIVE },
		{ "smd_plane_link_ports", "gauge", "Ports with a physical link in the last sweep", PF_LINKP },
		{ "smd_plane_sweeps_up_total", "counter", "Sweeps in which the plane came up", PF_CYC_UP },
		{ "smd_plane_sweeps_failed_total", "counter", "Sweeps in which the plane failed", PF_CYC_FAIL },
		{ "smd_smps_sent_total", "counter", "SMPs sent to the plane (light and heavy sweeps)", PF_SMPS_T },
		{ "smd_lft_blocks_written_total", "counter", "LFT blocks written (Set LinearForwardingTable)",
		  PF_BLOCKS_T },
		{ "smd_portinfo_sets_total", "counter", "PortInfo Sets (LID, SM LID, state)", PF_PI_T },
		{ "smd_portcfg_sets_total", "counter", "Port configuration Sets (PortInfo MTU/VLs/..., SL2VL, VLArb)",
		  PF_PORTCFG_T },
		{ "smd_pkey_blocks_written_total", "counter", "P_Key table blocks written (partitions)", PF_PKEY_T },
		{ "smd_mft_blocks_written_total", "counter", "MFT blocks written (multicast)", PF_MFT_T },
		{ "smd_last_sweep_smps_sent", "gauge", "SMPs sent in the plane's last heavy bring-up", PF_SMPS },
		{ "smd_last_sweep_lft_blocks_written", "gauge", "LFT blocks written in the plane's last heavy bring-up", PF_BLOCKS },
		{ "smd_last_sweep_portinfo_sets", "gauge", "PortInfo Sets in the plane's last heavy bring-up", PF_PI },
		{ "smd_plane_last_sweep_duration_seconds", "gauge", "Duration of the plane's last heavy bring-up", PF_SECS },
	};
	uint64_t now = sm_mono_us();
	char lv[16];

	sm_json_arr_begin(j, "metrics");
	m_begin(j, "smd_build_info", "gauge", "smd's version (always 1)");
	sample(j, "version", PACKAGE_VERSION, 1);
	m_end(j);
	metric1(j, "smd_uptime_seconds", "gauge", "Seconds since the daemon started",
		(double)(now - st->start_us) / 1e6);
	metric1(j, "smd_sweeps_total", "counter", "Sweep cycles completed (not the multicast cycles)",
		(double)smd_dmn_sweeps(st));
	metric1(j, "smd_mcast_cycles_total", "counter", "Multicast cycles completed (MFT-only passes)",
		(double)st->mcast_cycles);
	metric1(j, "smd_light_sweeps_total", "counter", "Cycles in which only light sweeps ran",
		(double)st->light_sweeps);
	metric1(j, "smd_heavy_sweeps_total", "counter", "Cycles in which some plane was brought up (heavy)",
		(double)st->heavy_sweeps);
	metric1(j, "smd_sweep_escalations_total", "counter", "Light sweeps that saw a change and went heavy",
		(double)st->escalations);
	metric1(j, "smd_sweeps_incomplete_total", "counter", "Heavy plane sweeps that lost answers (swept again)",
		(double)st->incomplete_sweeps);
	metric1(j, "smd_lft_blocks_read_total", "counter", "LFT blocks read back from switches, all planes",
		(double)st->lft_blocks_read_total);
	metric1(j, "smd_sweep_running", "gauge", "1 while a sweep cycle runs", st->cycle_start_us ? 1 : 0);
	metric1(j, "smd_last_sweep_duration_seconds", "gauge", "Duration of the last completed sweep cycle",
		st->last_sweep_s);
	if (st->last_end_us)
		metric1(j, "smd_last_sweep_age_seconds", "gauge", "Seconds since the last sweep cycle ended",
			(double)(now - st->last_end_us) / 1e6);
	metric1(j, "smd_traps_total", "counter", "Traps received between sweeps", (double)st->traps);
	metric1(j, "smd_planes", "gauge", "Planes (subnets) managed", st->n_planes);
	metric1(j, "smd_planes_up", "gauge", "Planes up in the last sweep", st->planes_up);
	m_begin(j, "smd_plane_info", "gauge", "Plane name, index and spec (always 1)");
	for (unsigned i = 0; i < st->n_planes; i++) {
		char idx[16];
		smd_metric_plane_name(i, lv, sizeof(lv));
		snprintf(idx, sizeof(idx), "%u", i);
		smd_metric_sample(j, 1, "plane", lv, "index", idx, "spec", st->planes[i].spec, NULL);
	}
	m_end(j);
	for (size_t m = 0; m < sizeof(per_plane) / sizeof(per_plane[0]); m++) {
		m_begin(j, per_plane[m].name, per_plane[m].type, per_plane[m].help);
		for (unsigned i = 0; i < st->n_planes; i++) {
			smd_metric_plane_name(i, lv, sizeof(lv));
			sample(j, "plane", lv, plane_field(&st->planes[i], per_plane[m].f));
		}
		m_end(j);
	}
	sa_metrics(j, st);
	smd_dmn_metrics_more(j, st);   /* cmd_metrics.c: SMP loss, M_Key */
	sm_json_arr_end(j);
}

int smd_ctl_daemon_request(struct smd_dmn *d, const struct smd_opts *o, const char *cmd,
			   const struct smd_jv *req, struct sm_json *j, uint64_t *wait_for, char *err,
			   size_t errlen)
{
	const struct smd_ctl_cmd *c = smd_ctl_cmd_find(cmd);
	enum smd_ctl_cmd_id id = c ? (enum smd_ctl_cmd_id)(c - smd_ctl_cmds) : SMD_CMD_N;

	if (id == SMD_CMD_ENGINE) {
		const char *action = smd_jv_str(req, "action", "set");
		if (strcmp(action, "set")) {
			snprintf(err, errlen, "engine: \"action\" can only be \"set\" (the running engine is in status)");
			return -EINVAL;
		}
		return smd_dmn_engine_request(d, o, req, wait_for, err, errlen);   /* cmd_engine.c */
	}
	if (id == SMD_CMD_METRICS) {
		struct smd_dmn_status *st = malloc(sizeof(*st));
		if (!st) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		smd_dmn_status(d, st);
		metrics(j, st);
		free(st);
		return j->err;
	}
	if (id == SMD_CMD_LINK || id == SMD_CMD_SWITCH || id == SMD_CMD_FAULTS)
		return smd_dmn_fault_request(d, id, req, j, wait_for, err, errlen);   /* cmd_fault.c */
	return smd_ctl_fabric_request(d, cmd, req, j, err, errlen);
}
