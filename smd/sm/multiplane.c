/* SPDX-License-Identifier: MIT */
/*
 * DOC: multi-plane bring-up (see multiplane.h)
 *
 * Threads: one per plane with a transport. Each runs sm_bringup() up to
 * 1 + retries times and records its result in its own sm_mp_plane; the
 * caller's arrays are never touched by two threads. The summary struct of
 * a plane holds the last attempt.
 */
#include "sm/multiplane.h"
#include "lib/clock.h"
#include "lib/json.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

struct worker {
	struct sm_mp_plane *pl;
	const struct sm_mp_cfg *cfg;
	uint64_t t0;
	pthread_t tid;
	int started;
};

static int want_hook(void *arg, const struct sm_fabric *f, unsigned plane, const uint16_t *cur,
		     uint16_t *want)
{
	return sm_plane_lids_want(arg, f, plane, cur, want);
}

static void *plane_main(void *arg)
{
	struct worker *w = arg;
	struct sm_mp_plane *pl = w->pl;
	struct sm_cfg cfg = w->cfg->base;

	cfg.plane = pl->index;
	cfg.mcast = pl->mcast;
	if (pl->note) {
		cfg.note = pl->note;
		cfg.note_arg = pl->note_arg;
	}
	if (w->cfg->lids) {
		cfg.lid_want = want_hook;
		cfg.lid_want_arg = w->cfg->lids;
		cfg.state_dir = NULL;   /* the shared table is the persistent record */
		cfg.guid2lid = NULL;
	}
	pl->start_s = (double)(sm_mono_us() - w->t0) / 1e6;
	pl->heavy = 0;
	pl->light_ran = 0;
	pl->light_rc = 0;
	memset(&pl->light, 0, sizeof(pl->light));
	if (w->cfg->light && !pl->force_heavy) {
		pl->err[0] = '\0';
		pl->light_ran = 1;
		pl->light_rc = sm_light_sweep(pl->t, &cfg, pl->state, &pl->light, pl->err, sizeof(pl->err));
		if (pl->light_rc == 0) {
			pl->rc = 0;
			pl->end_s = (double)(sm_mono_us() - w->t0) / 1e6;
			return NULL;
		}
		/* a change, no state, or a failed light sweep: the heavy one finds out */
	}
	pl->heavy = 1;
	for (pl->attempts = 0; pl->attempts <= w->cfg->retries; ) {
		pl->attempts++;
		pl->err[0] = '\0';
		pl->rc = sm_bringup_state(pl->t, pl->chain, &cfg, pl->state, &pl->sum, NULL, pl->err,
					  sizeof(pl->err));
		if (!pl->rc || (cfg.txn.stop && atomic_load(cfg.txn.stop)))
			break;   /* up, or the caller is stopping: no retry */
	}
	pl->end_s = (double)(sm_mono_us() - w->t0) / 1e6;
	return NULL;
}

unsigned sm_multiplane_bringup(struct sm_mp_plane *planes, unsigned n, const struct sm_mp_cfg *cfg)
{
	struct worker w[SM_MAX_PLANES];
	uint64_t t0 = sm_mono_us();
	unsigned down = 0;

	if (n > SM_MAX_PLANES)
		n = SM_MAX_PLANES;
	memset(w, 0, sizeof(w));
	for (unsigned i = 0; i < n; i++) {
		w[i].pl = &planes[i];
		w[i].cfg = cfg;
		w[i].t0 = t0;
		planes[i].heavy = planes[i].light_ran = 0;
		if (planes[i].skip)
			continue;
		if (!planes[i].t) {
			planes[i].rc = -ENODEV;
			snprintf(planes[i].err, sizeof(planes[i].err), "%s",
				 planes[i].open_err[0] ? planes[i].open_err : "no transport");
			continue;
		}
		if (!planes[i].chain) {
			planes[i].rc = -EINVAL;
			snprintf(planes[i].err, sizeof(planes[i].err), "no routing chain");
			continue;
		}
		if (pthread_create(&w[i].tid, NULL, plane_main, &w[i]) == 0) {
			w[i].started = 1;
		} else {
			/* no thread: run it here, the others are already going */
			plane_main(&w[i]);
		}
	}
	for (unsigned i = 0; i < n; i++)
		if (w[i].started)
			pthread_join(w[i].tid, NULL);
	for (unsigned i = 0; i < n; i++)
		down += !planes[i].skip && planes[i].rc != 0;
	return down;
}

/* A plane whose heavy bring-up lost answers or Sets (sm.h "incomplete"): not up, as the daemon says. */
static bool incomplete(const struct sm_mp_plane *p)
{
	return p->heavy && p->sum.incomplete;
}

void sm_multiplane_print(FILE *out, const struct sm_mp_plane *planes, unsigned n, double wall_s,
			 struct sm_plane_lids *lids)
{
	unsigned up = 0;
	uint64_t smps = 0, blocks = 0;

	fprintf(out, "%-4s %-32s %-6s %8s %8s %6s %6s %9s %8s %8s %s\n", "idx", "plane", "state",
		"switches", "cas", "lids", "sweeps", "smps", "blocks", "time_s", "engine");
	for (unsigned i = 0; i < n; i++) {
		const struct sm_mp_plane *p = &planes[i];
		const struct sm_summary *s = &p->sum;
		up += !p->rc && !incomplete(p);
		smps += s->txn.sent;
		blocks += s->lft_blocks_written;
		fprintf(out, "%-4u %-32.32s %-6s %8u %8u %6u %6u %9llu %8u %8.3f %s\n", p->index, p->name,
			p->rc ? "FAILED" : incomplete(p) ? "incomplete" : "up", s->counts.switches, s->counts.cas, s->counts.lids, s->sweeps,
			(unsigned long long)s->txn.sent, s->lft_blocks_written, p->end_s - p->start_s,
			s->engine ? s->engine : "-");
	}
	for (unsigned i = 0; i < n; i++)
		if (planes[i].rc)
			fprintf(out, "plane %u (%s) FAILED after %u attempt%s: %s\n", planes[i].index, planes[i].name,
				planes[i].attempts, planes[i].attempts == 1 ? "" : "s", planes[i].err);
		else if (incomplete(&planes[i]))
			fprintf(out, "plane %u (%s) INCOMPLETE: %u answers lost or Sets failed (first: %s)\n",
				planes[i].index, planes[i].name, planes[i].sum.incomplete, planes[i].sum.incomplete_why);
	if (lids) {
		struct sm_plane_lids_stats st;
		sm_plane_lids_stats(lids, &st);
		fprintf(out, "plane-consistent LIDs: %u hosts/switches in the table; %u ports from the table, %u kept their LID, %u fresh, %u conflicts resolved\n",
			st.keys, st.from_table, st.inherited, st.fresh, st.conflicts);
	}
	fprintf(out, "planes: %u of %u up; %llu SMPs, %llu LFT blocks written; wall time %.3f s\n", up, n,
		(unsigned long long)smps, (unsigned long long)blocks, wall_s);
}

void sm_multiplane_print_json(FILE *out, const struct sm_mp_plane *planes, unsigned n, double wall_s,
			      struct sm_plane_lids *lids)
{
	struct sm_json j;
	unsigned up = 0, n_inc = 0;

	sm_json_init(&j, out, 1);
	sm_json_obj_begin(&j, NULL);
	sm_json_arr_begin(&j, "planes");
	for (unsigned i = 0; i < n; i++) {
		const struct sm_mp_plane *p = &planes[i];
		const struct sm_summary *s = &p->sum;
		up += !p->rc && !incomplete(p);
		n_inc += !p->rc && incomplete(p);
		sm_json_obj_begin(&j, NULL);
		sm_json_uint(&j, "index", p->index);
		sm_json_str(&j, "spec", p->name);
		sm_json_str(&j, "state", p->rc ? "failed" : incomplete(p) ? "incomplete" : "up");
		if (!p->rc && incomplete(p))
			sm_json_uint(&j, "incomplete", p->sum.incomplete);
		sm_json_uint(&j, "attempts", p->attempts);
		if (p->rc)
			sm_json_str(&j, "error", p->err);
		sm_json_uint(&j, "switches", s->counts.switches);
		sm_json_uint(&j, "cas", s->counts.cas);
		sm_json_uint(&j, "lids", s->counts.lids);
		sm_json_uint(&j, "sweeps", s->sweeps);
		sm_json_uint(&j, "smps_sent", s->txn.sent);
		sm_json_uint(&j, "lft_blocks_written", s->lft_blocks_written);
		sm_json_uint(&j, "active_ports", s->active_ports);
		sm_json_uint(&j, "link_ports", s->link_ports);
		sm_json_str(&j, "engine", s->engine);
		sm_json_double(&j, "start_s", p->start_s);
		sm_json_double(&j, "seconds", p->end_s - p->start_s);
		sm_json_obj_end(&j);
	}
	sm_json_arr_end(&j);
	sm_json_uint(&j, "up", up);
	sm_json_uint(&j, "failed", n - up - n_inc);
	if (n_inc)
		sm_json_uint(&j, "incomplete", n_inc);
	if (lids) {
		struct sm_plane_lids_stats st;
		sm_plane_lids_stats(lids, &st);
		sm_json_obj_begin(&j, "plane_lids");
		sm_json_uint(&j, "keys", st.keys);
		sm_json_uint(&j, "from_table", st.from_table);
		sm_json_uint(&j, "inherited", st.inherited);
		sm_json_uint(&j, "fresh", st.fresh);
		sm_json_uint(&j, "conflicts", st.conflicts);
		sm_json_obj_end(&j);
	}
	sm_json_double(&j, "wall_s", wall_s);
	sm_json_obj_end(&j);
	sm_json_finish(&j);
	fputc('\n', out);
}
