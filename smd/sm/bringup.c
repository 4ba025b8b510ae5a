/* SPDX-License-Identifier: MIT */
/*
 * DOC: SM core orchestration
 *
 * sm_bringup() runs the phases described in sm.h over one struct sm_core
 * (core.h): sweep (sweep.c, or delta.c from the state; repeated while the
 * fabric changes under it), LIDs (lids.c), route (here: the engine chain),
 * program (program.c), activate (activate.c). Each phase submits all its
 * SMPs and then drives the transaction engine until they are answered, so a
 * phase costs about (SMPs / window) round trips. Every Set is decided from
 * what the sweep read, so nothing already right is written again.
 *
 * At the end, the swept fabric and the LFTs are moved into one snapshot
 * (snapshot.h), handed to cfg.published and, when the program phase ran,
 * kept by the state together with the sweep tables (state.h). This file is
 * the only one that calls the phases; they call core.c, never back.
 */
#include "sm/phases.h"
#include "sm/state.h"
#include "lib/clock.h"
#include "routing/registry.h"
#include "model/profile.h"
#include "sm/sminfo.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void sm_cfg_default(struct sm_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->subnet_prefix = 0xfe80000000000000ULL;
	cfg->subnet_timeout = 18;
	cfg->sweep_retries = 3;
	cfg->read_lfts = true;
	cfg->dead_after = 64;
	sm_txn_cfg_default(&cfg->txn);
}

const char *sm_phase_name(unsigned ph)
{
	static const char *const names[SM_PH_COUNT] = { "discover", "lids", "route", "program", "activate" };
	return ph < SM_PH_COUNT ? names[ph] : "?";
}

static void on_unsolicited(struct sm_txn *e, const struct sm_smp *smp, const struct sm_mad_addr *from,
			   void *ctx)
{
	struct sm_core *c = ctx;
	unsigned num;
	struct sm_smp resp;
	struct sm_sminfo_self self = {
		.guid = c->t->info.port_guid, .sm_key = c->cfg->keys ? c->cfg->keys->sm_key : 0,
		.state = c->cfg->sminfo_state ? c->cfg->sminfo_state : SM_SMSTATE_DISCOVERING,
		.priority = c->cfg->sminfo_priority,
	};
	/* SMInfo asked of us while we sweep (smd/sm/sminfo.h) */
	if (sm_sminfo_answer(smp, &self, &resp) == 1) {
		(void)sm_txn_send_raw(e, &resp, smp->mgmt_class == SM_CLASS_SMI_DR ? SM_PERMISSIVE_LID :
				      (from ? from->slid : 0));
		return;
	}
	if (smp->method != SM_METHOD_TRAP)
		return;
	if (c->cfg->trap)
		c->cfg->trap(c->cfg->trap_arg, c->cfg->plane, smp, from ? from->slid : 0);
	/* only a link state change (trap 128) changes what the sweep sees */
	if (sm_trap_wants_sweep(smp, &num) && c->in_delta) {
		/*
		 * The incremental sweep reads every switch's PortStateChange: a
		 * change it read is in its result, one that came after stays
		 * flagged. Its caller sweeps again (sum.late_traps) instead of
		 * starting over from a state that no longer says what was cleared.
		 */
		c->late_traps++;
		return;
	}
	if (!sm_trap_wants_sweep(smp, &num)) {
		sm_core_note(c, "trap %u from LID %u during the sweep (no topology change)", num,
			     from ? from->slid : 0);
		return;
	}
	sm_core_changed(c, "trap %s from LID %u during the sweep", sm_attr_name(smp->attr_id),
			from ? from->slid : 0);
}

/* The progress hook (sm_cfg.phase), if any. */
static void phase_start(const struct sm_core *c, unsigned ph)
{
	if (c->cfg->phase)
		c->cfg->phase(c->cfg->phase_arg, c->plane, ph);
}

static double since(uint64_t t0)
{
	return (double)(sm_mono_us() - t0) / 1e6;
}

int sm_bringup(struct sm_transport *t, struct sm_chain *chain, const struct sm_cfg *cfg,
	       struct sm_summary *sum, struct sm_fabric **fabric_out, char *err, size_t errlen)
{
	return sm_bringup_state(t, chain, cfg, NULL, sum, fabric_out, err, errlen);
}

/* Discover, again while the fabric changes under the sweep; c->f is then canonical. */
static int discover(struct sm_core *c, struct sm_summary *sum, char *err, size_t errlen)
{
	const struct sm_cfg *cfg = c->cfg;
	/* an incomplete state lacks what only a full sweep finds */
	int delta = cfg->incremental && sm_state_valid(c->state) && c->state->complete && c->state->snap->pi;
	uint8_t *keep = NULL;
	int rc;

	for (;;) {
		c->changed = 0;
		c->unresponsive = 0;
		c->lost = 0;
		c->lost_why[0] = '\0';
		c->mkey_foreign = 0;
		c->mkey_violations = 0;
		c->why[0] = '\0';
		sum->sweeps++;
		if (delta) {
			c->in_delta = 1;
			rc = sm_sweep_delta(c, err, errlen);
			c->in_delta = 0;
			if (rc < 0)
				return rc;
			if (rc == 0 && !c->changed) {
				sum->incremental = c->incremental_ok = 1;
				sum->delta_links_down = c->delta_links_down;
				sum->delta_switches_read = c->delta_switches_read;
				sum->delta_links_up = c->delta_links_up;
				sum->delta_nodes_new = c->delta_nodes_new;
				sum->delta_switches_gone = c->delta_switches_gone;
				sum->late_traps = c->late_traps;
				break;
			}
			/* what it cannot patch, or a change while it looked: a full sweep sees everything */
			sm_core_note(c, "incremental sweep: %s; sweeping in full", rc ? c->delta_why : c->why);
			delta = 0;
			sm_core_reset(c);
			continue;
		}
		c->f = sm_fabric_new();
		if (!c->f || sm_fabric_add_plane(c->f, c->plane, NULL)) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		rc = sm_sweep_once(c, err, errlen);
		if (rc)
			return rc;
		if (!c->changed)
			break;
		if (sum->sweeps > cfg->sweep_retries) {
			sm_core_note(c, "the fabric kept changing during %u sweeps (last: %s); using the last one",
				     sum->sweeps, c->why);
			break;
		}
		sm_core_note(c, "sweep %u saw the fabric change (%s); sweeping again", sum->sweeps, c->why);
		sm_core_reset(c);
	}
	sum->unresponsive = c->unresponsive;
	sum->mkey_foreign = c->mkey_foreign;
	sum->mkey_violations = c->mkey_violations;
	if (c->mkey_foreign > 8)
		sm_core_note(c, "%u ports in all are protected by an M_Key smd does not hold", c->mkey_foreign);
	if (!sum->incremental && (c->lost || c->changed)) {
		/* answers lost (or the fabric still moving): keep what the state knew and this sweep missed */
		sum->incomplete = c->lost ? c->lost : 1;
		snprintf(sum->incomplete_why, sizeof(sum->incomplete_why), "%s", c->lost ? c->lost_why : c->why);
		rc = sm_sweep_merge(c, &keep, err, errlen);
		if (rc)
			return rc;
		sum->merged_nodes = c->merged_nodes;
		sum->merged_links = c->merged_links;
		sm_core_note(c, "sweep incomplete (%u answer%s lost; first: %s): %u node%s and %u link%s kept from "
			     "the last sweep", c->lost, c->lost == 1 ? "" : "s", sum->incomplete_why, c->merged_nodes,
			     c->merged_nodes == 1 ? "" : "s", c->merged_links, c->merged_links == 1 ? "" : "s");
	}
	rc = sum->incremental ? 0 : sm_sweep_tables_canonicalize(&c->f, c->plane, &c->tab, keep);
	free(keep);
	if (rc)
		snprintf(err, errlen, "cannot renumber the swept fabric: %s", strerror(-rc));
	return rc;
}

/* The engine chain over c->f, with the traffic profile if any: *lfts (caller frees). */
static int route(struct sm_core *c, struct sm_chain *chain, struct sm_summary *sum, struct sm_lfts **lfts,
		 char *err, size_t errlen)
{
	const struct sm_cfg *cfg = c->cfg;
	struct sm_plane_result res;
	struct sm_profile *prof = NULL;
	int rc;

	if (cfg->profile_path) {
		char perr[512] = "";
		rc = sm_profile_load(c->f, cfg->profile_path, NULL, &prof, perr, sizeof(perr));
		if (rc == -ENOENT && access(cfg->profile_path, R_OK) == 0) {
			/* readable, but none of its endpoints is in this plane: route without it */
			sm_core_note(c, "profile: %s", perr[0] ? perr : "no flow in this plane");
			prof = NULL;
		} else if (rc) {
			snprintf(err, errlen, "profile: %s", perr[0] ? perr : strerror(-rc));
			return rc;
		} else {
			char warn[512];
			if (sm_profile_warning(prof, warn, sizeof(warn)))
				sm_core_note(c, "profile: %s", warn);
			sum->profile_flows = (uint32_t)prof->n_flows;
		}
	}
	/*
	 * A reroute after an incremental sweep: the state's routes were
	 * accepted on the state's fabric, so only what changed is walked again
	 * (validate_incr.c says why that suffices; it falls back to the full
	 * check when links were added or too much changed).
	 */
	const struct sm_snapshot *ps = c->incremental_ok && sm_state_valid(c->state) ? c->state->snap : NULL;
	struct sm_validate_prev prev = { .f = ps ? ps->fabric : NULL, .l = ps ? ps->lfts : NULL,
					 .delta_out = &c->lft_delta };
	if (prev.f && prev.l && !cfg->validate_full)
		chain->prev = &prev;
	/* and the engine may start from them (engine.h reroute(): only what crossed a lost link moves) */
	free(c->lft_changed);
	c->lft_changed = NULL;
	c->lft_prev = NULL;
	sm_lft_delta_free(c->lft_delta);
	c->lft_delta = NULL;
	if (prev.f && prev.l && !cfg->route_full) {
		chain->reroute_from = &prev;
		chain->reroute_changed = &c->lft_changed;
	}
	rc = sm_route_chain(chain, c->f, c->plane, prof, lfts, &res);
	chain->prev = NULL;
	chain->reroute_from = NULL;
	chain->reroute_changed = NULL;
	if (c->lft_changed) {
		c->lft_prev = prev.l;   /* the state's snapshot holds it until the program phase ends */
	} else {
		sm_lft_delta_free(c->lft_delta);   /* not of the tables accepted */
		c->lft_delta = NULL;
	}
	sum->validate_rechecked = res.val.rechecked;
	sum->validate_s = res.validate_seconds;
	sum->route_incremental = (uint32_t)res.rerouted;
	sum->route_lids = res.reroute_lids;
	sum->route_s = res.route_seconds;
	sum->route_cpu_s = res.route_cpu_seconds;
	if (res.reroute_why[0])
		sm_core_note(c, "routing: in full: %s", res.reroute_why);
	sm_profile_free(prof);
	if (rc) {
		char buf[1024];
		sm_plane_result_format(&res, buf, sizeof(buf));
		snprintf(err, errlen, "routing failed: %s", buf);
		return rc;
	}
	for (unsigned i = 0; i < res.n_attempts; i++)
		if (res.attempts[i].rc)
			sm_core_note(c, "routing: %s passed over: %s", res.attempts[i].engine, res.attempts[i].why);
	if (res.notes[0])
		sm_core_note(c, "routing: %s: %s", res.engine, res.notes);
	sum->engine = res.engine;
	sum->top_lid = (*lfts)->top_lid;
	return 0;
}

/* Every link port ACTIVE, and the ports' LIDs and keys as configured? */
static int check_up(const struct sm_core *c, const struct sm_summary *sum, char *err, size_t errlen)
{
	if (sum->active_ports != sum->link_ports) {
		char why[160] = "";
		if (c->mkey_foreign)
			snprintf(why, sizeof(why), "; %u ports are protected by an M_Key smd does not hold: "
				 "they refuse its Sets", c->mkey_foreign);
		snprintf(err, errlen, "%u of %u link ports are not ACTIVE (%u Sets failed%s)",
			 sum->link_ports - sum->active_ports, sum->link_ports, c->set_errors, why);
		return -EIO;
	}
	if (c->mkey_foreign && c->set_errors) {
		/* up, but not as configured: those ports' LIDs/keys could not be set */
		snprintf(err, errlen, "%u ports are protected by an M_Key smd does not hold: they refuse its "
			 "Sets (%u failed); check m_key and STATE_DIR/keys", c->mkey_foreign, c->set_errors);
		return -EACCES;
	}
	return 0;
}

static void sum_counters(const struct sm_core *c, struct sm_summary *sum)
{
	sum->lft_blocks_written = c->lft_blocks_written;
	sum->lft_blocks_read = c->lft_blocks_read;
	sum->lft_switches_written = c->lft_switches_written;
	sum->switchinfo_sets = c->si_sets;
	sum->portinfo_lid_sets = c->pi_lid_sets;
	sum->portinfo_state_sets = c->pi_state_sets;
	sum->set_errors = c->set_errors;
	sum->lft_switches_trusted = c->lft_sw_trusted;
	sum->lft_switches_unknown = c->lft_sw_unknown;
	sum->psc_cleared = c->psc_cleared;
	sum->pkey_ports = c->pkey_ports;
	sum->pkey_blocks_read = c->pkey_blocks_read;
	sum->pkey_blocks_written = c->pkey_blocks_written;
	sum->mkey_rotated = c->mkey_rotated;
	sum->txn = *sm_txn_stats(c->txn);
	/* a Set lost or refused: the switch or port may not hold what the tables say */
	if (c->set_errors && !sum->incomplete_why[0])
		snprintf(sum->incomplete_why, sizeof(sum->incomplete_why), "%u Set%s failed", c->set_errors,
			 c->set_errors == 1 ? "" : "s");
	sum->incomplete += c->set_errors;
}

/*
 * The end of a bring-up that got as far as the LID phase: c->f (or a copy
 * when the caller wants the fabric too) and lfts go into one snapshot,
 * published to cfg.published; a state keeps it and the sweep tables when
 * the program phase ran (the shadows then mirror what the switches
 * acknowledged, even if a later phase failed). On ENOMEM the state is
 * dropped (the next heavy sweep reads LFTs back) and nothing is published.
 */
static void publish(struct sm_core *c, struct sm_state *state, struct sm_lfts *lfts, int up,
		    uint32_t sum_incomplete, struct sm_fabric **fabric_out)
{
	const struct sm_cfg *cfg = c->cfg;
	struct sm_fabric *f = c->f;
	const struct sm_plane sm_pl = f->planes[c->plane];   /* the SM's LID and port, as the LID phase left them */
	struct sm_snapshot *snap;
	int programmed = c->tab.shadow != NULL;

	if (!cfg->published && !(state && programmed)) {
		sm_lfts_free(lfts);
		return;
	}
	if (fabric_out) {
		f = sm_fabric_new();
		if (f && sm_fabric_append(f, c->f, NULL)) {
			sm_fabric_free(f);
			f = NULL;
		}
	} else {
		c->f = NULL;
	}
	snap = f ? sm_snapshot_new(c->plane, f, lfts) : NULL;
	if (!snap) {
		if (!f)
			sm_lfts_free(lfts);
		if (state && programmed)
			sm_state_update(state, NULL, NULL, 0);
		return;
	}
	struct sm_plane *pl = &f->planes[c->plane];
	sm_snapshot_take_attrs(snap, &c->tab);   /* NodeInfo/SwitchInfo/PortInfo as read, for the SA */
	sm_mft_publish(c, snap);
	sm_snapshot_take_pkeys(snap, &c->pkeys);  /* P_Key tables as programmed (partitions) */
	snap->cycle = cfg->cycle;
	snap->up = up;
	snap->complete = up && !sum_incomplete;
	snap->sm_lid = sm_pl.sm_lid;
	snap->sm_port = sm_pl.sm_port;
	snap->subnet_prefix = sm_pl.subnet_prefix;
	/* the fabric as the copies kept before (see snapshot.h): no SM port in its plane record */
	pl->sm_lid = 0;
	pl->sm_port = SM_NONE;
	pl->subnet_prefix = 0xfe80000000000000ULL;
	if (state && programmed)
		sm_state_update(state, snap, &c->tab, up);
	/* from here on nobody writes to it */
	if (cfg->published)
		cfg->published(cfg->published_arg, snap);
	sm_snapshot_unref(snap);
}

int sm_bringup_state(struct sm_transport *t, struct sm_chain *chain, const struct sm_cfg *cfg,
		     struct sm_state *state, struct sm_summary *sum, struct sm_fabric **fabric_out,
		     char *err, size_t errlen)
{
	struct sm_core core, *c = &core;
	struct sm_lfts *lfts = NULL;
	uint64_t t_all = sm_mono_us(), t0;
	int rc, lids_ran = 0;

	memset(sum, 0, sizeof(*sum));
	memset(c, 0, sizeof(*c));
	sm_sweep_tables_init(&c->tab);
	if (fabric_out)
		*fabric_out = NULL;
	if (cfg->lmc > 7 || cfg->plane >= SM_MAX_PLANES) {
		snprintf(err, errlen, "bad configuration (LMC %u, plane %u)", cfg->lmc, cfg->plane);
		return -EINVAL;
	}
	rc = sm_core_init(c, t, cfg, state, err, errlen);
	if (rc)
		return rc;
	sm_txn_set_unsolicited(c->txn, on_unsolicited, c);

	phase_start(c, SM_PH_DISCOVER);
	t0 = sm_mono_us();
	rc = discover(c, sum, err, errlen);
	sum->phase_s[SM_PH_DISCOVER] = since(t0);
	if (rc)
		goto out;

	phase_start(c, SM_PH_LIDS);
	t0 = sm_mono_us();
	rc = sm_phase_lids(c, sum, err, errlen);
	sum->phase_s[SM_PH_LIDS] = since(t0);
	lids_ran = 1;
	if (rc)
		goto out;
	sm_fabric_count(c->f, c->plane, &sum->counts);

	phase_start(c, SM_PH_ROUTE);
	t0 = sm_mono_us();
	rc = route(c, chain, sum, &lfts, err, errlen);
	sum->phase_s[SM_PH_ROUTE] = since(t0);
	if (rc)
		goto out;
	c->lfts = lfts;

	phase_start(c, SM_PH_PROGRAM);
	t0 = sm_mono_us();
	rc = sm_phase_program(c, err, errlen);
	rc = rc ? rc : sm_phase_mft(c, sum, err, errlen);
	if (!rc)
		rc = sm_phase_pkeys(c, err, errlen);
	rc = rc ? rc : sm_phase_portcfg(c, sum, err, errlen);
	sum->phase_s[SM_PH_PROGRAM] = since(t0);
	if (rc)
		goto out;

	phase_start(c, SM_PH_ACTIVATE);
	t0 = sm_mono_us();
	rc = sm_phase_activate(c, sum, err, errlen);
	sum->phase_s[SM_PH_ACTIVATE] = since(t0);
	if (!rc)
		rc = check_up(c, sum, err, errlen);
out:
	sum_counters(c, sum);
	if (c->mkey_rotated)
		sm_core_note(c, "M_Key: %u port%s reached with the previous key and given the current one (%u "
			     "Set%s did not keep it; %u port%s a key smd does not have)", c->mkey_rotated,
			     c->mkey_rotated == 1 ? "" : "s", c->mkey_unkept, c->mkey_unkept == 1 ? "" : "s",
			     c->mkey_foreign, c->mkey_foreign == 1 ? " holds" : "s hold");
	sm_txn_free(c->txn);
	c->txn = NULL;
	if (state && !c->tab.shadow)
		state->valid = 0;   /* shadows still hold (nothing was written): only the light sweep waits */
	if (lids_ran)
		publish(c, state, lfts, !rc, sum->incomplete, !rc ? fabric_out : NULL);
	else
		sm_lfts_free(lfts);
	if (!rc && fabric_out) {
		*fabric_out = c->f;
		c->f = NULL;
	}
	sm_core_reset(c);
	if (state && cfg->defer_give_back)
		sm_state_give_back_mark();   /* the caller gives back once idle */
	else if (state)
		sm_state_give_back();
	sum->total_s = since(t_all);
	return rc;
}
