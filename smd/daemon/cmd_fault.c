/* SPDX-License-Identifier: MIT */
/*
 * DOC: rehearsing failures on mock planes (smctl link, switch, faults; issue 18)
 *
 * A mock plane (mock:FILE) is an emulated fabric inside smd (smd/mock): an
 * admin can rehearse a failure on it without hardware or ibsim.
 *   link   {"action":"down"|"up","node":WHAT,"port":N[,"plane":N]}
 *          takes the cable at that node's port down (both ends DOWN/Polling)
 *          or back up (both ends INIT/LinkUp);
 *   switch {"action":"down"|"up","node":WHAT[,"plane":N]}
 *          every cable of the switch at once (sm_mock_switch_down);
 *   faults {["loss":"25%"][,"corrupt":..][,"delay":..][,"delay_ms":N]
 *          [,"seed":N][,"plane":N]} changes the fault injection of every
 *          mock plane (or one) until the next reload that changes smd.yaml's
 *          mock keys, and answers with each mock plane's settings and counters.
 * WHAT names a node as smctl route does (cmd.h smd_ctl_find_port), first
 * in the plane's view (what smctl nodes shows), else in the mock's own
 * fabric (a switch that is down is in no view any more).
 *
 * A link event makes the emulated switches send the Trap 128 a real fabric
 * sends, LID-routed to the SM over the programmed LFTs; the trap is read at
 * once through the daemon's own trap path (dmn_plane_mads: repressed, the
 * hold-off, then an incremental heavy sweep), as an fd-driven trap would be.
 * The reply says whether a trap reached smd ("sweep_due") and the "sweeps"
 * count before it, so smctl --wait can wait for the sweep that follows.
 *
 * The mock belongs to the worker while a cycle runs (daemon.c): a request
 * that comes then is parked and applied when the cycle ends (resume runs
 * from the cycle's completion, before the next cycle can start). Planes
 * that are not mock planes refuse, with the reason.
 *
 * The config's mock keys (smd.yaml(5) mock) are applied by the worker
 * (dmn_mock_conf_apply) when a mock plane opens and when a reload brings
 * other values.
 */
#include "daemon/daemon_priv.h"
#include "daemon/cmd.h"
#include "ctl/ctl.h"
#include "lib/err.h"
#include "lib/json.h"
#include "mock/mock.h"
#include "mock/open.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct sm_mock *plane_mock(struct smd_dmn *d, unsigned i)
{
	return d->ports[i].be == &sm_mock_backend ? d->ports[i].owner : NULL;
}

void dmn_mock_conf_apply(struct smd_dmn *d)
{
	const struct smd_conf_mock *c = &d->cur->conf->mock;

	for (unsigned i = 0; i < d->n; i++) {
		if (!plane_mock(d, i)) {
			d->mock_set[i] = 0;
			continue;
		}
		if (d->mock_set[i] && !memcmp(&d->mock_applied[i], c, sizeof(*c)))
			continue;
		sm_mock_port_faults(&d->ports[i], c->loss_ppm, c->corrupt_ppm, c->delay_ppm, c->delay_ms * 1000u, c->seed);
		d->mock_applied[i] = *c;
		d->mock_set[i] = 1;
	}
}

static int is_mock_spec(const char *spec)
{
	return !strncmp(spec, "mock:", 5);
}

/* The plane of the request: "plane", else the only mock plane. -EINVAL with the reason. */
static int req_plane(struct smd_dmn *d, const char *cmd, const struct smd_jv *req, unsigned *plane, char *err,
		     size_t errlen)
{
	const struct smd_jv *pl = smd_jv_get(req, "plane");
	unsigned n_mock = 0;

	if (pl && pl->type != SMD_J_NULL) {
		if (pl->type != SMD_J_NUM || pl->num < 0 || pl->num >= d->n || pl->num != (double)(unsigned)pl->num)
			return sm_errf_rc(-EINVAL, err, errlen, "%s: \"plane\": a plane index 0-%u", cmd, d->n - 1);
		*plane = (unsigned)pl->num;
	} else {
		for (unsigned i = 0; i < d->n; i++)
			if (is_mock_spec(d->planes[i].name) && !n_mock++)
				*plane = i;
		if (n_mock != 1 && d->n == 1)
			*plane = 0;
		else if (n_mock != 1)
			return sm_errf_rc(-EINVAL, err, errlen, "%s: %u mock planes: say which (--plane N)", cmd, n_mock);
	}
	if (!is_mock_spec(d->planes[*plane].name))
		return sm_errf_rc(-EOPNOTSUPP, err, errlen,
				  "%s: plane %u (%s) is not a mock plane: failures are rehearsed on mock planes "
				  "(mock:FILE) only, a real fabric's links are not smd's to pull", cmd, *plane,
				  d->planes[*plane].name);
	if (!plane_mock(d, *plane))
		return sm_errf_rc(-EAGAIN, err, errlen, "%s: plane %u is not open yet (its first sweep opens it)", cmd,
				  *plane);
	return 0;
}

/* A node of the mock's fabric named as smctl route names one: in the view first, then in the mock's own. */
static int find_node(struct smd_dmn *d, unsigned plane, const struct sm_fabric *mf, const char *what,
		     int want_switch, uint32_t *node, char *err, size_t errlen)
{
	const struct smd_view *v = NULL;
	uint32_t pi;
	int rc = -ENOENT;

	if (!smd_dmn_view_get(d, plane, &v)) {
		rc = smd_ctl_find_port(v->fabric, plane, what, want_switch, &pi, err, errlen);
		if (!rc) {
			uint64_t guid = v->fabric->nodes[v->fabric->ports[pi].node].guid;
			*node = sm_fabric_find_node(mf, guid);
			if (*node == SM_NONE)
				rc = sm_errf_rc(-ENOENT, err, errlen, "node 0x%016" PRIx64 " is not in the mock fabric", guid);
		}
		smd_dmn_view_put(v);
	}
	if (rc == -ENOENT && !smd_ctl_find_port(mf, 0, what, want_switch, &pi, err, errlen)) {
		*node = mf->ports[pi].node;
		rc = 0;
	}
	return rc;
}

static void mock_stats_json(struct sm_json *j, struct sm_mock *m)
{
	struct sm_mock_stats st;

	sm_mock_stats(m, &st);
	SM_JSON_UINTS(j, { "requests", st.requests }, { "answered", st.answered },
		      { "lost", st.fault_dropped }, { "corrupted", st.fault_corrupted },
		      { "delayed", st.fault_delayed }, { "traps_sent", st.traps_sent },
		      { "traps_lost", st.traps_lost });
}

static int share_arg(const struct smd_jv *req, const char *key, uint32_t *ppm, int *given, char *err,
		     size_t errlen)
{
	const struct smd_jv *v = smd_jv_get(req, key);

	if (!v || v->type == SMD_J_NULL)
		return 0;
	if (v->type != SMD_J_STR || smd_conf_percent_parse(v->str, ppm))
		return sm_errf_rc(-EINVAL, err, errlen, "faults: \"%s\": a percentage 0%%-100%% such as \"25%%\"", key);
	*given = 1;
	return 0;
}

static int uint_arg(const struct smd_jv *req, const char *key, double max, unsigned *out, int *given, char *err,
		    size_t errlen)
{
	const struct smd_jv *v = smd_jv_get(req, key);

	if (!v || v->type == SMD_J_NULL)
		return 0;
	if (v->type != SMD_J_NUM || v->num < 0 || v->num > max || v->num != (double)(unsigned)v->num)
		return sm_errf_rc(-EINVAL, err, errlen, "faults: \"%s\": an integer 0-%.0f", key, max);
	*out = (unsigned)v->num;
	*given = 1;
	return 0;
}

static int faults(struct smd_dmn *d, const struct smd_jv *req, struct sm_json *j, char *err, size_t errlen)
{
	uint32_t loss = 0, corrupt = 0, delay = 0;
	unsigned delay_ms = 0, seed = 0, first = 0, last = d->n - 1;
	int gl = 0, gc = 0, gd = 0, gms = 0, gs = 0, rc;

	if ((rc = share_arg(req, "loss", &loss, &gl, err, errlen)) ||
	    (rc = share_arg(req, "corrupt", &corrupt, &gc, err, errlen)) ||
	    (rc = share_arg(req, "delay", &delay, &gd, err, errlen)) ||
	    (rc = uint_arg(req, "delay_ms", 60000, &delay_ms, &gms, err, errlen)) ||
	    (rc = uint_arg(req, "seed", 4294967295.0, &seed, &gs, err, errlen)))
		return rc;
	if (gms && !delay_ms)
		return sm_errf_rc(-EINVAL, err, errlen, "faults: \"delay_ms\": an integer 1-60000");
	const struct smd_jv *pl = smd_jv_get(req, "plane");
	if (pl && pl->type != SMD_J_NULL) {
		if ((rc = req_plane(d, "faults", req, &first, err, errlen)))
			return rc;
		last = first;
	}
	unsigned n = 0;
	sm_json_arr_begin(j, "planes");
	for (unsigned i = first; i <= last; i++) {
		struct sm_mock *m = plane_mock(d, i);
		struct sm_mock_cfg mc;
		char pct[32];
		if (!m)
			continue;
		sm_mock_get_cfg(m, &mc);
		if (gl || gc || gd || gms)
			sm_mock_set_faults(m, gl ? loss : mc.drop_ppm, gc ? corrupt : mc.corrupt_ppm,
					   gd ? delay : mc.delay_ppm, gms ? delay_ms * 1000u : mc.delay_us);
		if (gs)
			sm_mock_set_seed(m, seed);
		sm_mock_get_cfg(m, &mc);
		n++;
		sm_json_obj_begin(j, NULL);
		sm_json_uint(j, "plane", i);
		sm_json_str(j, "spec", d->planes[i].name);
		smd_conf_percent_str(mc.drop_ppm, pct, sizeof(pct));
		sm_json_str(j, "loss", pct);
		smd_conf_percent_str(mc.corrupt_ppm, pct, sizeof(pct));
		sm_json_str(j, "corrupt", pct);
		smd_conf_percent_str(mc.delay_ppm, pct, sizeof(pct));
		sm_json_str(j, "delay", pct);
		sm_json_uint(j, "delay_ms", mc.delay_us / 1000u);
		sm_json_uint(j, "seed", mc.seed);
		mock_stats_json(j, m);
		sm_json_obj_end(j);
	}
	sm_json_arr_end(j);
	if (!n)
		return sm_errf_rc(-EOPNOTSUPP, err, errlen, "faults: no mock plane is open (faults are rehearsed on "
				  "mock planes, mock:FILE, only)");
	if (gl || gc || gd || gms || gs) {
		char note[160];
		snprintf(note, sizeof(note), "rehearsal: fault injection changed on %u mock plane%s (smctl faults)", n,
			 n == 1 ? "" : "s");
		if (d->note)
			d->note(d->note_arg, note);
	}
	return j->err;
}

/* link or switch down/up, worker idle. */
static int event(struct smd_dmn *d, enum smd_ctl_cmd_id id, const struct smd_jv *req, struct sm_json *j, char *err,
		 size_t errlen)
{
	const char *cmd = id == SMD_CMD_LINK ? "link" : "switch";
	const char *action = smd_jv_str(req, "action", "");
	const char *what = smd_jv_str(req, "node", NULL);
	int up = !strcmp(action, "up");
	unsigned plane, port = 0, links = 1;
	uint32_t node;
	int rc;

	if (!up && strcmp(action, "down"))
		return sm_errf_rc(-EINVAL, err, errlen, "%s: \"action\" must be \"down\" or \"up\"", cmd);
	if (!what || !what[0] || strlen(what) > 256)
		return sm_errf_rc(-EINVAL, err, errlen, "%s: \"node\" (a string of 1-256 bytes) is required", cmd);
	if (id == SMD_CMD_LINK) {
		const struct smd_jv *p = smd_jv_get(req, "port");
		if (!p || p->type != SMD_J_NUM || p->num < 1 || p->num > 254 || p->num != (double)(unsigned)p->num)
			return sm_errf_rc(-EINVAL, err, errlen, "link: \"port\" (a port number 1-254) is required");
		port = (unsigned)p->num;
	}
	if ((rc = req_plane(d, cmd, req, &plane, err, errlen)))
		return rc;
	struct sm_mock *m = plane_mock(d, plane);
	const struct sm_fabric *mf = sm_mock_fabric(m);
	char ferr[256] = "";
	if ((rc = find_node(d, plane, mf, what, id == SMD_CMD_SWITCH, &node, ferr, sizeof(ferr))))
		return sm_errf_rc(rc, err, errlen, "%s: plane %u: %s", cmd, plane, ferr);
	const struct sm_node *nd = &mf->nodes[node];
	if (id == SMD_CMD_LINK && port > nd->nports)
		return sm_errf_rc(-EINVAL, err, errlen, "link: node 0x%016" PRIx64 " has ports 1-%u", nd->guid,
				  nd->nports);
	char where[96];
	int wl = snprintf(where, sizeof(where), "%s 0x%016" PRIx64, sm_node_type_str(nd->type), nd->guid);
	if (id == SMD_CMD_LINK)
		snprintf(where + wl, sizeof(where) - (size_t)wl, " port %u", port);
	struct sm_mock_stats before, after;
	sm_mock_stats(m, &before);
	if (id == SMD_CMD_LINK)
		rc = up ? sm_mock_link_up(m, node, port) : sm_mock_link_down(m, node, port);
	else
		rc = up ? sm_mock_switch_up(m, node, &links) : sm_mock_switch_down(m, node, &links);
	if (rc == -ENOTCONN)
		return sm_errf_rc(rc, err, errlen, "%s down: %s has no link up to take down", cmd, where);
	if (rc == -ENOENT)
		return sm_errf_rc(rc, err, errlen, "%s up: %s has no link taken down by smctl link/switch down", cmd,
				  where);
	if (rc)
		return sm_errf_rc(rc, err, errlen, "%s: %s: %s", cmd, where, strerror(-rc));
	sm_mock_stats(m, &after);
	pthread_mutex_lock(&d->mu);
	uint64_t sweeps = smd_dmn_sweeps(&d->st), traps0 = d->st.traps;
	pthread_mutex_unlock(&d->mu);

	char guid[24], note[240];
	snprintf(guid, sizeof(guid), "0x%016" PRIx64, nd->guid);
	sm_json_uint(j, "plane", plane);
	sm_json_str(j, "action", up ? "up" : "down");
	sm_json_str(j, "guid", guid);
	sm_json_str(j, "desc", nd->desc);
	if (id == SMD_CMD_LINK)
		sm_json_uint(j, "port", port);
	sm_json_uint(j, "links", links);
	sm_json_uint(j, "traps_sent", after.traps_sent - before.traps_sent);
	sm_json_uint(j, "traps_lost", after.traps_lost - before.traps_lost);
	sm_json_uint(j, "sweeps", sweeps);
	snprintf(note, sizeof(note), "rehearsal: %s %s %s: %u link%s, %" PRIu64 " trap%s sent (smctl)", cmd, where,
		 up ? "up" : "down", links, links == 1 ? "" : "s", after.traps_sent - before.traps_sent,
		 after.traps_sent - before.traps_sent == 1 ? "" : "s");
	if (d->note)
		d->note(d->note_arg, note);
	/* the traps the switches sent: read now, through the trap path a readable fd would take */
	dmn_plane_mads(d, plane);
	pthread_mutex_lock(&d->mu);
	int due = d->trap_due_us != 0 && d->st.traps > traps0;
	pthread_mutex_unlock(&d->mu);
	sm_json_bool(j, "sweep_due", due);
	return j->err;
}

/* Worker idle (the loop thread owns the planes)? */
static int idle(struct smd_dmn *d, uint64_t *running_ends)
{
	pthread_mutex_lock(&d->mu);
	int in = d->in_worker;
	*running_ends = d->st.cycles + 1;
	pthread_mutex_unlock(&d->mu);
	return !in;
}

static int fault_cmd(struct smd_dmn *d, enum smd_ctl_cmd_id id, const struct smd_jv *req, struct sm_json *j,
		     char *err, size_t errlen)
{
	return id == SMD_CMD_FAULTS ? faults(d, req, j, err, errlen) : event(d, id, req, j, err, errlen);
}

int smd_dmn_fault_request(struct smd_dmn *d, enum smd_ctl_cmd_id id, const struct smd_jv *req, struct sm_json *j,
			  uint64_t *wait_for, char *err, size_t errlen)
{
	if (!idle(d, wait_for))
		return SMD_CTL_WAIT;   /* applied when the running cycle ends (smd_dmn_fault_resume) */
	return fault_cmd(d, id, req, j, err, errlen);
}

int smd_dmn_fault_resume(struct smd_dmn *d, enum smd_ctl_cmd_id id, const struct smd_jv *req, struct sm_json *j,
			 char *err, size_t errlen)
{
	uint64_t ends;

	if (!idle(d, &ends))
		return SMD_CTL_WAIT;
	return fault_cmd(d, id, req, j, err, errlen);
}
