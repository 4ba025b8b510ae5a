/* SPDX-License-Identifier: MIT */
/*
 * DOC: the daemon's status snapshot and its JSON (daemon.h)
 */
#include "daemon/daemon_priv.h"
#include "lib/clock.h"
#include "lib/json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* sm_cfg.phase of every plane: where each bring-up is, for smctl's progress lines (plane threads). */
void dmn_plane_phase(void *arg, unsigned plane, unsigned ph)
{
	struct smd_dmn *d = arg;

	if (plane >= SM_MAX_PLANES)
		return;
	pthread_mutex_lock(&d->mu);
	d->st.planes[plane].phase = (int)ph;
	pthread_mutex_unlock(&d->mu);
}

/* Results of the cycle that just ended into the dmn_snapshot (d->mu held). */
void dmn_snapshot(struct smd_dmn *d, double secs, const char *lids_err)
{
	struct smd_dmn_status *st = &d->st;
	struct smd_dmn_sweep sw;
	unsigned standby = 0, escalated = 0, mft_only = 0;

	memset(&sw, 0, sizeof(sw));
	st->planes_up = st->planes_incomplete = 0;
	st->switches = st->cas = st->lids = 0;
	st->lft_blocks_written = st->portinfo_sets = 0;
	st->engine[0] = '\0';
	for (unsigned i = 0; i < d->n; i++) {
		const struct sm_mp_plane *p = &d->planes[i];
		struct smd_dmn_plane *sp = &st->planes[i];
		if (p->skip) {
			standby++;   /* another SM masters it: left as it was (its role says standby) */
			continue;
		}
		sp->swept = 1;
		sp->rc = p->rc;
		snprintf(sp->err, sizeof(sp->err), "%s", p->rc ? p->err : "");
		/* a multicast cycle leaves the planes whose groups did not change alone (multiplane.h) */
		if (p->heavy || p->light_ran || !d->mc_only) {
			sp->last_heavy = p->heavy;
			sp->light = p->light;
		}
		sw.smps += p->light.smps;
		if (p->mft_ran) {   /* the MFT-only pass (its SMPs; a heavy bring-up after it counts its own) */
			mft_only += !p->heavy && !p->mft_rc;
			sw.smps += p->mft.txn.sent;
			sp->smps_total += p->mft.txn.sent;
			sw.mft_blocks_written += p->mft.blocks_written;
			sp->mft_blocks_total += p->mft.blocks_written;
		}
		if (p->light_ran && p->light_rc && !sw.change[0] && p->light.why[0])
			snprintf(sw.change, sizeof(sw.change), "plane %u: %s", i, p->light.why);
		/* who we are in the plane (status "sm"); a plane nobody else can manage (mock) is ours */
		if (p->t && p->t->info.port_guid)
			sp->role.guid = p->t->info.port_guid;
		if (!sp->role.elected) {
			sp->role.state = p->rc ? SM_SMSTATE_DISCOVERING : SM_SMSTATE_MASTER;
			sp->role.priority = (uint8_t)d->cur->conf->sm_priority;
		}
		if (p->heavy) {
			if (!p->rc)
				sp->role.lid = p->sum.sm_lid;
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
			sw.portcfg_sets += p->sum.portcfg_pi_sets + p->sum.sl2vl_sets + p->sum.vlarb_sets;
			sw.pkey_blocks_written += p->sum.pkey_blocks_written;
			sw.mft_blocks_written += p->sum.mft.blocks_written;
			sp->portcfg_sets_total += p->sum.portcfg_pi_sets + p->sum.sl2vl_sets + p->sum.vlarb_sets;
			sp->pkey_blocks_total += p->sum.pkey_blocks_written;
			sp->mft_blocks_total += p->sum.mft.blocks_written;
			escalated += p->light_ran;
		} else if (p->light_ran && !p->rc) {
			sw.planes_light++;
		}
		/* per-plane totals for smctl metrics: every SMP of the cycle, light and heavy parts */
		sp->smps_total += p->light.smps + (p->heavy ? p->sum.txn.sent : 0);
		dmn_metrics_cycle(sp, p);
		if (p->heavy) {
			sp->lft_blocks_total += p->sum.lft_blocks_written;
			sp->portinfo_sets_total += p->sum.portinfo_lid_sets + p->sum.portinfo_state_sets;
		}
		if (p->rc) {
			sp->cycles_failed++;
			continue;
		}
		/* programmed, but from a sweep that lost answers: not up until a complete one (sm.h) */
		if (p->heavy && sp->sum.incomplete)
			st->incomplete_sweeps++;
		if (sp->sum.incomplete)
			st->planes_incomplete++;
		else
			st->planes_up++;
		sp->cycles_up += !sp->sum.incomplete;
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
	/* planes another SM masters are fine as they are: up if every plane we master is (and complete) */
	st->planes_standby = standby;
	st->last = st->planes_up + standby == d->n && st->planes_up ? SMD_ST_UP :
		   st->planes_up || st->planes_incomplete ? SMD_ST_DEGRADED : SMD_ST_DOWN;
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
	st->cycles++;

	sw.seq = st->cycles;
	snprintf(sw.kind, sizeof(sw.kind), "%s", sw.planes_heavy ? "heavy" : d->mc_only && mft_only ? "multicast" : "light");
	snprintf(sw.reason, sizeof(sw.reason), "%s", st->last_reason);
	sw.escalated = d->light && escalated;   /* not the incomplete planes swept heavy by every cycle */
	sw.planes_up = st->planes_up;
	sw.seconds = secs;
	sw.end_us = st->last_end_us;
	if (sw.planes_heavy)
		st->heavy_sweeps++;
	else if (!strcmp(sw.kind, "multicast"))
		st->mcast_cycles++;
	else
		st->light_sweeps++;
	st->escalations += (uint64_t)sw.escalated;
	st->smps_total += sw.smps;
	st->lft_blocks_written_total += sw.lft_blocks_written;
	st->lft_blocks_read_total += sw.lft_blocks_read;
	st->portinfo_sets_total += sw.portinfo_sets;
	st->portcfg_sets_total += sw.portcfg_sets;
	st->pkey_blocks_written_total += sw.pkey_blocks_written;
	st->mft_blocks_written_total += sw.mft_blocks_written;
	if (st->n_history == SMD_DMN_HISTORY)
		memmove(&st->history[0], &st->history[1], (SMD_DMN_HISTORY - 1) * sizeof(st->history[0]));
	else
		st->n_history++;
	st->history[st->n_history - 1] = sw;
}

void smd_dmn_status(struct smd_dmn *d, struct smd_dmn_status *st)
{
	pthread_mutex_lock(&d->mu);
	*st = d->st;
	st->requested = d->requested;
	dmn_sa_status(d, st);
	pthread_mutex_unlock(&d->mu);
}

void smd_dmn_status_line(const struct smd_dmn_status *st, char *buf, size_t len)
{
	if (!st->cycles) {
		snprintf(buf, len, "starting: first sweep of %u plane%s", st->n_planes, st->n_planes == 1 ? "" : "s");
		return;
	}
	int n = snprintf(buf, len, "%u/%u planes up, %u switches, %u CAs, last sweep %.2f s (%llu sweeps)",
			 st->planes_up, st->n_planes, st->switches, st->cas, st->last_sweep_s,
			 (unsigned long long)smd_dmn_sweeps(st));

	/* planes programmed from a sweep that lost answers (not up) */
	for (unsigned i = 0; i < st->n_planes && n >= 0 && (size_t)n < len; i++)
		if (!st->planes[i].rc && st->planes[i].sum.incomplete &&
		    !(st->planes[i].role.elected && (st->planes[i].role.state & 3u) != 3u))
			n += snprintf(buf + n, len - (size_t)n, "; plane%u INCOMPLETE (%u lost: %s)", i,
				      st->planes[i].sum.incomplete, st->planes[i].sum.incomplete_why);

	/* the role in each elected plane (a mock plane is not elected: always master, not said) */
	for (unsigned i = 0; i < st->n_planes && n >= 0 && (size_t)n < len; i++) {
		static const char *const names[] = { "notactive", "discovering", "standby", "master" };
		const struct smd_dmn_plane *p = &st->planes[i];

		if (!p->role.elected)
			continue;
		if ((p->role.state & 3u) == 3u || !p->role.master_guid)
			n += snprintf(buf + n, len - (size_t)n, "; plane%u %s", i, names[p->role.state & 3u]);
		else
			n += snprintf(buf + n, len - (size_t)n, "; plane%u %s, master 0x%016llx LID %u", i,
				      names[p->role.state & 3u], (unsigned long long)p->role.master_guid,
				      p->role.master_lid);
	}
}

/* A plane's master/standby role (daemon/ha.c): only for elected planes, so mock replies keep their shape. */
static void dmn_role_fields(struct sm_json *j, const struct smd_dmn_plane *p)
{
	static const char *const names[] = { "notactive", "discovering", "standby", "master" };
	char guid[24], own[24];

	snprintf(guid, sizeof(guid), "0x%016llx", (unsigned long long)p->role.master_guid);
	snprintf(own, sizeof(own), "0x%016llx", (unsigned long long)p->role.guid);
	sm_json_str(j, "role", names[p->role.state & 3]);
	sm_json_bool(j, "elected", p->role.elected);
	sm_json_str(j, "guid", p->role.guid ? own : NULL);
	sm_json_uint(j, "lid", p->role.lid);
	sm_json_uint(j, "priority", p->role.priority);
	sm_json_str(j, "master_guid", p->role.master_guid ? guid : NULL);
	SM_JSON_UINTS(j, { "master_lid", p->role.master_lid }, { "master_priority", p->role.master_priority },
		      { "takeovers", p->role.takeovers }, { "handovers", p->role.handovers },
		      { "refused", p->role.refused }, { "damped", p->role.damped });
}

void smd_dmn_status_json(struct sm_json *j, const struct smd_dmn_status *st)
{
	uint64_t now = sm_mono_us();

	sm_json_str(j, "state", smd_dmn_state_name(st->state));
	sm_json_str(j, "last_result", st->cycles ? smd_dmn_state_name(st->last) : NULL);
	SM_JSON_UINTS(j, { "planes", st->n_planes }, { "planes_up", st->planes_up }, { "switches", st->switches },
		      { "cas", st->cas }, { "lids", st->lids }, { "sweeps", smd_dmn_sweeps(st) },
		      { "mcast_cycles", st->mcast_cycles });
	/* planes whose last heavy sweep lost answers, and when the next heavy sweep of them is due */
	sm_json_uint(j, "planes_incomplete", st->planes_incomplete);
	sm_json_uint(j, "incomplete_sweeps", st->incomplete_sweeps);
	if (st->redo_due_us)
		sm_json_double(j, "incomplete_retry_s", st->redo_due_us > now ? (double)(st->redo_due_us - now) / 1e6 : 0.0);
	else
		sm_json_null(j, "incomplete_retry_s");
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
	/*
	 * This SM in each plane: GUID, LID, priority, role; on elected planes
	 * (umad, ibsim) the master's too. A mock plane has no other SM: master
	 * once up, "elected": false.
	 */
	{
		sm_json_arr_begin(j, "sm");
		for (unsigned i = 0; i < st->n_planes; i++) {
			sm_json_obj_begin(j, NULL);
			sm_json_uint(j, "plane", i);
			dmn_role_fields(j, &st->planes[i]);
			sm_json_obj_end(j);
		}
		sm_json_arr_end(j);
	}
	SM_JSON_UINTS(j, { "light_sweeps", st->light_sweeps }, { "heavy_sweeps", st->heavy_sweeps },
		      { "escalations", st->escalations }, { "smps_total", st->smps_total },
		      { "lft_blocks_written_total", st->lft_blocks_written_total },
		      { "lft_blocks_read_total", st->lft_blocks_read_total },
		      { "portinfo_sets_total", st->portinfo_sets_total },
		      { "portcfg_sets_total", st->portcfg_sets_total },
		      { "pkey_blocks_written_total", st->pkey_blocks_written_total },
		      { "mft_blocks_written_total", st->mft_blocks_written_total });
	if (st->n_history)
		smd_dmn_sweep_json(j, "last_sweep", &st->history[st->n_history - 1]);
	else
		sm_json_null(j, "last_sweep");
	sm_json_arr_begin(j, "sweep_history");
	for (unsigned i = 0; i < st->n_history; i++)
		smd_dmn_sweep_json(j, NULL, &st->history[i]);
	sm_json_arr_end(j);
	smd_dmn_sa_json(j, st);
}

void smd_dmn_sa_json(struct sm_json *j, const struct smd_dmn_status *st)
{
	char lb[16];

	sm_json_arr_begin(j, "sa");
	for (unsigned i = 0; i < st->n_planes && i < SM_MAX_PLANES; i++) {
		const struct smd_dmn_sa *s = &st->sa[i];
		const struct sm_sa_stats *c = &s->stats;
		sm_json_obj_begin(j, NULL);
		sm_json_uint(j, "plane", i);
		sm_json_bool(j, "open", s->open);
		sm_json_str(j, "error", s->err[0] ? s->err : NULL);
		SM_JSON_UINTS(j, { "received", c->received }, { "answered", c->answered }, { "dropped", c->dropped },
			      { "rmpp_sent", c->rmpp_sent }, { "rmpp_aborted", c->rmpp_aborted },
			      { "reports_sent", c->reports_sent }, { "reports_acked", c->reports_acked },
			      { "reports_given_up", c->reports_given_up }, { "mc_groups", s->mc_groups },
			      { "mc_members", s->mc_members });
		sm_json_double(j, "cpu_s", (double)c->cpu_ns / 1e9);
		sm_json_obj_begin(j, "by_attr");
		for (unsigned k = 0; k < SM_SA_STATS_ATTRS; k++)
			if (c->by_attr[k].n)
				sm_json_uint(j, smd_dmn_sa_attr_label(c->by_attr[k].attr_id, lb), c->by_attr[k].n);
		sm_json_obj_end(j);
		sm_json_obj_begin(j, "by_status");
		for (unsigned k = 0; k < sizeof(c->by_status) / sizeof(c->by_status[0]); k++)
			if (c->by_status[k].n)
				sm_json_uint(j, smd_dmn_sa_status_label(c->by_status[k].status, lb), c->by_status[k].n);
		sm_json_obj_end(j);
		sm_json_obj_end(j);
	}
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
	SM_JSON_UINTS(j, { "planes_light", sw->planes_light }, { "planes_heavy", sw->planes_heavy },
		      { "planes_incremental", sw->planes_incremental }, { "planes_up", sw->planes_up });
	sm_json_double(j, "seconds", sw->seconds);
	sm_json_double(j, "age_s", now > sw->end_us ? (double)(now - sw->end_us) / 1e6 : 0.0);
	SM_JSON_UINTS(j, { "smps", sw->smps }, { "lft_blocks_written", sw->lft_blocks_written },
		      { "lft_blocks_read", sw->lft_blocks_read }, { "portinfo_sets", sw->portinfo_sets },
		      { "switchinfo_sets", sw->switchinfo_sets }, { "portcfg_sets", sw->portcfg_sets },
		      { "pkey_blocks_written", sw->pkey_blocks_written }, { "mft_blocks_written", sw->mft_blocks_written });
	sm_json_obj_end(j);
}

void smd_dmn_planes_json(struct sm_json *j, const struct smd_dmn_status *st)
{
	sm_json_uint(j, "sweeps", smd_dmn_sweeps(st));
	sm_json_arr_begin(j, "planes");
	for (unsigned i = 0; i < st->n_planes; i++) {
		const struct smd_dmn_plane *p = &st->planes[i];
		const struct sm_summary *s = &p->sum;
		sm_json_obj_begin(j, NULL);
		sm_json_uint(j, "index", i);
		sm_json_str(j, "spec", p->spec);
		bool standby = p->role.elected && (p->role.state & 3u) != 3u;   /* another SM masters it */
		sm_json_str(j, "state", standby ? "standby" : !p->swept ? "not swept" : p->rc ? "failed" :
			    s->incomplete ? "incomplete" : "up");
		sm_json_str(j, "error", p->swept && p->rc ? p->err : NULL);
		SM_JSON_UINTS(j, { "attempts", p->attempts }, { "cycles_up", p->cycles_up },
			      { "cycles_failed", p->cycles_failed }, { "switches", s->counts.switches },
			      { "cas", s->counts.cas }, { "lids", s->counts.lids }, { "active_ports", s->active_ports },
			      { "link_ports", s->link_ports }, { "sweeps", s->sweeps }, { "smps_sent", s->txn.sent },
			      { "lft_blocks_written", s->lft_blocks_written },
			      { "portinfo_sets", s->portinfo_lid_sets + s->portinfo_state_sets },
			      { "sm_lid", s->sm_lid });
		/* the last bring-up's port configuration and P_Key tables (as --once --json has them) */
		sm_json_obj_begin(j, "portcfg");
		SM_JSON_UINTS(j, { "portinfo_sets", s->portcfg_pi_sets }, { "sl2vl_gets", s->sl2vl_gets },
			      { "sl2vl_sets", s->sl2vl_sets }, { "vlarb_gets", s->vlarb_gets }, { "vlarb_sets", s->vlarb_sets },
			      { "tables_trusted", s->tables_trusted }, { "pkey_ports", s->pkey_ports },
			      { "pkey_blocks_read", s->pkey_blocks_read }, { "pkey_blocks_written", s->pkey_blocks_written });
		sm_json_obj_end(j);
		sm_json_str(j, "engine", s->engine);
		sm_json_double(j, "seconds", p->seconds);
		sm_json_str(j, "last_kind", !p->swept ? NULL : p->last_heavy ? "heavy" : "light");
		sm_json_uint(j, "light_smps", p->light.smps);
		sm_json_str(j, "light_change", p->light.why[0] ? p->light.why : NULL);
		sm_json_uint(j, "lft_blocks_read", s->lft_blocks_read);
		sm_json_uint(j, "lft_switches_trusted", s->lft_switches_trusted);
		/* the last heavy sweep lost answers: how many, the first, and what was kept from the one before */
		sm_json_uint(j, "incomplete", s->incomplete);
		sm_json_str(j, "incomplete_why", s->incomplete ? s->incomplete_why : NULL);
		SM_JSON_UINTS(j, { "merged_nodes", s->merged_nodes }, { "merged_links", s->merged_links });
		if (p->role.elected) {
			sm_json_obj_begin(j, "sm");
			dmn_role_fields(j, p);
			sm_json_obj_end(j);
		}
		sm_json_obj_end(j);
	}
	sm_json_arr_end(j);
	if (st->lids_open) {
		sm_json_obj_begin(j, "plane_lids");
		SM_JSON_UINTS(j, { "keys", st->plane_lids.keys }, { "from_table", st->plane_lids.from_table },
			      { "inherited", st->plane_lids.inherited }, { "fresh", st->plane_lids.fresh },
			      { "conflicts", st->plane_lids.conflicts });
		sm_json_obj_end(j);
	}
	if (st->health_ok)
		sm_planes_health_json(j, "health", &st->health);
	else
		sm_json_null(j, "health");
	sm_json_str(j, "health_error", st->health_err[0] ? st->health_err : NULL);
}
