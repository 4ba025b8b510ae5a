/* SPDX-License-Identifier: MIT */
/*
 * DOC: light sweep (see sm.h)
 *
 * Owns nothing beyond one call: a transaction engine on the plane's
 * transport and, all in flight together (cfg.txn window):
 *   - one Get SwitchInfo per switch of the state's fabric along the DR
 *     path the last heavy sweep used;
 *   - PortInfo samples: the next ports (round robin, the cursor kept in the
 *     state) of those the state read, a CA port through its own link (the
 *     switch's path plus the switch's port), a switch port through the switch;
 *   - LFT samples: the next blocks the state's shadows know.
 * Each answer is compared with what the state expects; the first difference
 * is kept as the reason. A foreign SM LID is then asked who it is (SMInfo
 * over the DR path of the port that holds it in the model) before anything
 * is decided (sm.h). Nothing is written: PortStateChange is left set for
 * the heavy sweep, which clears it when it reads it; repairs are the heavy
 * sweep's.
 *
 * Cost: one SMP per switch (plus retries of lost ones), plus the samples:
 * max(SM_LIGHT_MIN_SAMPLES, ports / SM_LIGHT_ROUNDS) PortInfo and as many
 * LFT blocks by the same rule, against a heavy sweep's NodeInfo +
 * NodeDescription + SwitchInfo + PortInfo per port.
 */
#include "sm/state.h"
#include "sm/mkey.h"
#include "sm/election.h"
#include "lib/clock.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

enum { LQ_SI, LQ_PI, LQ_LFT, LQ_SMINFO };

struct light {
	const struct sm_cfg *cfg;
	struct sm_state *st;
	const struct sm_fabric *f;
	struct sm_light_summary *ls;
	uint8_t *drift_sw;            /* per node: an LFT block of it differs */
	uint32_t first_drift_node;
	uint16_t first_drift_block;
};

struct light_req {
	struct light *l;
	uint32_t node;
	uint16_t arg;                 /* port, or LFT block */
	uint8_t kind;
};

static void changed(struct light *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void changed(struct light *l, const char *fmt, ...)
{
	va_list ap;
	if (l->ls->why[0])
		return;
	va_start(ap, fmt);
	vsnprintf(l->ls->why, sizeof(l->ls->why), fmt, ap);
	va_end(ap);
}

static void on_si(struct light *l, const struct sm_node *nd, uint32_t n, const struct sm_txn_result *r)
{
	const struct sm_lft_shadow *sh = &l->st->tab.shadow[n];
	struct sm_switch_info si;
	struct sm_mad_err me;

	if (r->status || r->mad_status) {
		l->ls->changed++;
		changed(l, "switch 0x%016" PRIx64 " (%s) did not answer SwitchInfo (%s)", nd->guid, nd->desc,
			r->status ? "lost" : "error status");
		return;
	}
	if (sm_switch_info_decode(r->resp->data, &si, &me)) {
		l->ls->changed++;
		changed(l, "switch 0x%016" PRIx64 " (%s): malformed SwitchInfo: %s", nd->guid, nd->desc, me.msg);
		return;
	}
	if (si.port_state_change) {
		l->ls->changed++;
		changed(l, "switch 0x%016" PRIx64 " (%s): PortStateChange", nd->guid, nd->desc);
	} else if (sh->n_blocks && si.lft_top != sh->top) {
		l->ls->changed++;
		changed(l, "switch 0x%016" PRIx64 " (%s): LinearFDBTop %u, expected %u (reset or reprogrammed?)",
			nd->guid, nd->desc, si.lft_top, sh->top);
	}
}

/* Ports that carry a LID: switch port 0, CA/router ports. */
static int lid_port(const struct sm_node *nd, unsigned p)
{
	return nd->type == SM_NODE_SWITCH ? p == 0 : p >= 1;
}

static void on_pi(struct light *l, const struct sm_node *nd, uint32_t n, unsigned p, const struct sm_txn_result *r)
{
	const struct sm_snapshot *ss = l->st->snap;
	uint32_t idx = sm_port_index(l->f, n, p);
	const struct sm_port *pt = &l->f->ports[idx];
	const struct sm_port_info *was = &ss->pi[idx];
	struct sm_port_info pi;
	struct sm_mad_err me;

	/* a lost sample says nothing: the switch's SwitchInfo tells whether it is still there */
	if (r->status || r->mad_status || sm_port_info_decode(r->resp->data, &pi, &me))
		return;
	int up = pi.port_state >= SM_PORT_INIT;
	if (nd->type == SM_NODE_SWITCH && p >= 1 && up && pt->peer_node == SM_NONE &&
	    !(l->st->complete && ss->pi_ok[idx] && was->port_state >= SM_PORT_INIT)) {
		/* up where the model has nobody: a heavy sweep that missed it (or a new link) */
		l->ls->missing_peers++;
		changed(l, "switch 0x%016" PRIx64 " (%s) port %u is %s but no neighbour behind it is in the model",
			nd->guid, nd->desc, p, sm_port_state_str(pi.port_state));
	} else if (p >= 1 && pt->peer_node != SM_NONE && pi.port_state != SM_PORT_ACTIVE &&
		   was->port_state == SM_PORT_ACTIVE) {
		changed(l, "node 0x%016" PRIx64 " (%s) port %u is %s, was ACTIVE", nd->guid, nd->desc, p,
			sm_port_state_str(pi.port_state));
	}
	if (!lid_port(nd, p) || !ss->sm_lid)
		return;
	if (pi.master_sm_lid && pi.master_sm_lid != ss->sm_lid) {
		if (!l->ls->foreign_ports++)
			l->ls->foreign_sm_lid = pi.master_sm_lid;
	} else if (!pi.master_sm_lid) {
		changed(l, "node 0x%016" PRIx64 " (%s) port %u has no SM LID (reset?)", nd->guid, nd->desc, p);
	} else if (pt->lid && pi.lid != pt->lid) {
		changed(l, "node 0x%016" PRIx64 " (%s) port %u has LID %u, we set %u", nd->guid, nd->desc, p,
			pi.lid, pt->lid);
	}
}

static void on_lft(struct light *l, uint32_t n, unsigned b, const struct sm_txn_result *r)
{
	const struct sm_lft_shadow *sh = &l->st->tab.shadow[n];
	struct sm_lft_block blk;
	struct sm_mad_err me;
	uint8_t have[SM_LFT_BLOCK];

	if (r->status || r->mad_status || sm_lft_block_decode(r->resp->data, &blk, &me) || b >= sh->n_blocks ||
	    !sh->known[b])
		return;
	sm_lft_shadow_get(sh, b, have);
	for (unsigned e = 0; e < SM_LFT_BLOCK; e++) {
		unsigned lid = b * SM_LFT_BLOCK + e;
		if (lid > sh->top || blk.port[e] == have[e])
			continue;
		if (!l->ls->lft_blocks_drift++) {
			l->first_drift_node = n;
			l->first_drift_block = (uint16_t)b;
		}
		l->ls->lft_switches_drift += !l->drift_sw[n];
		l->drift_sw[n] = 1;
		return;
	}
}

static void on_sminfo(struct light *l, const struct sm_txn_result *r)
{
	struct sm_sm_info si;
	struct sm_mad_err me;

	if (r->status || r->mad_status || sm_sm_info_decode(r->resp->data, &si, &me))
		return;
	l->ls->foreign_sm_state = si.state;
	l->ls->foreign_sm_priority = si.priority;
	if (si.guid)
		l->ls->foreign_sm_guid = si.guid;
}

static void light_cb(struct sm_txn *e, const struct sm_txn_result *r, void *ctx)
{
	struct light_req *rq = ctx;
	struct light *l = rq->l;
	const struct sm_node *nd = &l->f->nodes[rq->node];
	(void)e;

	if (r->status == -ECANCELED)
		return;
	switch (rq->kind) {
	case LQ_SI:
		on_si(l, nd, rq->node, r);
		break;
	case LQ_PI:
		on_pi(l, nd, rq->node, rq->arg, r);
		break;
	case LQ_LFT:
		on_lft(l, rq->node, rq->arg, r);
		break;
	default:
		on_sminfo(l, r);
		break;
	}
}

static void light_unsolicited(struct sm_txn *e, const struct sm_smp *smp, const struct sm_mad_addr *from,
			      void *ctx)
{
	struct light *l = ctx;
	unsigned num;
	(void)e;
	if (smp->method == SM_METHOD_TRAP && l->cfg->trap)
		l->cfg->trap(l->cfg->trap_arg, l->cfg->plane, smp, from ? from->slid : 0);
	if (!sm_trap_wants_sweep(smp, &num))
		return;
	l->ls->changed++;
	changed(l, "trap %u from LID %u during the light sweep", num, from ? from->slid : 0);
}

/*
 * The DR path for an SMP about port p of node n: a switch answers for any
 * of its ports; a CA for the port it arrives on, so through its own link
 * (the peer's path plus the peer's port), as set.c does.
 */
static void port_path(const struct sm_state *st, uint32_t n, unsigned p, struct sm_dr_path *out)
{
	const struct sm_fabric *f = sm_state_fabric(st);
	const struct sm_port *pt = sm_port(f, n, p);
	*out = st->tab.path[n];
	if (f->nodes[n].type == SM_NODE_SWITCH || p == 0 || pt->peer_node == SM_NONE ||
	    (n == st->tab.sm_node && p == st->tab.sm_portnum))
		return;
	struct sm_dr_path q = st->tab.path[pt->peer_node];
	if (sm_dr_path_push(&q, pt->peer_port) == 0)
		*out = q;
}

/* One Get for node n along p; reqs grows by one (room was counted). */
static int submit(struct sm_txn *txn, const struct sm_cfg *cfg, struct light_req *rq, uint16_t attr,
		  uint32_t mod, const struct sm_dr_path *p)
{
	struct sm_smp smp;
	sm_smp_init_dr(&smp, SM_METHOD_GET, attr, mod, p);
	/* as every SMP of the heavy sweep (sm_core_mkey_at); a Get: the previous secret is not needed
	 * below protect bits 2, and a port holding it is found by the next heavy sweep */
	smp.mkey = sm_keys_send(cfg->keys, sm_keys_sma_guid(rq->l->f, rq->node,
							   rq->kind == LQ_PI ? rq->arg : 0), 0);
	return sm_txn_submit(txn, &smp, SM_PERMISSIVE_LID, light_cb, rq);
}

/* Sampled port: read by the state and worth asking (a CA port only if linked: it is asked through its link). */
static int port_sampled(const struct sm_state *st, uint32_t idx)
{
	const struct sm_fabric *f = sm_state_fabric(st);
	const struct sm_port *pt = &f->ports[idx];
	if (!st->snap->pi_ok[idx])
		return 0;
	return f->nodes[pt->node].type == SM_NODE_SWITCH || (pt->num >= 1 && pt->peer_node != SM_NONE);
}

static uint32_t budget(uint64_t total)
{
	uint64_t b = (total + SM_LIGHT_ROUNDS - 1) / SM_LIGHT_ROUNDS;
	return (uint32_t)(b < SM_LIGHT_MIN_SAMPLES ? SM_LIGHT_MIN_SAMPLES : b);
}

/* The next PortInfo samples from the state's cursor into reqs[*nr...]. */
static int sample_ports(struct sm_txn *txn, const struct sm_cfg *cfg, struct light *l, struct light_req *reqs,
			uint32_t *nr, uint32_t max)
{
	struct sm_state *st = l->st;
	const struct sm_fabric *f = l->f;
	uint32_t total = 0, taken = 0;
	int rc = 0;

	if (!st->snap->pi_ok || st->snap->attr_ports < f->n_ports || !f->n_ports)
		return 0;
	for (uint32_t i = 0; i < f->n_ports; i++)
		total += (uint32_t)port_sampled(st, i);
	uint32_t want = budget(total);
	uint32_t i = st->pi_cursor % f->n_ports;
	for (uint32_t k = 0; k < f->n_ports && taken < want && taken < max && !rc; k++, i = (i + 1) % f->n_ports) {
		if (!port_sampled(st, i))
			continue;
		const struct sm_port *pt = &f->ports[i];
		struct sm_dr_path p;
		struct light_req *rq = &reqs[(*nr)++];
		*rq = (struct light_req){ .l = l, .node = pt->node, .arg = pt->num, .kind = LQ_PI };
		port_path(st, pt->node, pt->num, &p);
		rc = submit(txn, cfg, rq, SM_ATTR_PORT_INFO, pt->num, &p);
		taken++;
	}
	st->pi_cursor = i;
	l->ls->ports_read = taken;
	return rc;
}

/* The next LFT blocks the shadows know, from the state's cursor. */
static int sample_lfts(struct sm_txn *txn, const struct sm_cfg *cfg, struct light *l, struct light_req *reqs,
		       uint32_t *nr, uint32_t max)
{
	struct sm_state *st = l->st;
	uint32_t n_sh = st->tab.n_shadow < l->f->n_nodes ? st->tab.n_shadow : l->f->n_nodes;
	uint64_t total = 0;
	uint32_t taken = 0;
	int rc = 0;

	for (uint32_t n = 0; n < n_sh; n++)
		for (unsigned b = 0; b < st->tab.shadow[n].n_blocks; b++)
			total += st->tab.shadow[n].known[b];
	if (!total)
		return 0;
	uint32_t want = budget(total);
	uint32_t n = st->lft_cursor_node < n_sh ? st->lft_cursor_node : 0;
	unsigned b = st->lft_cursor_block;
	/* at most one pass over every (switch, block) */
	for (uint64_t seen = 0; seen < total && taken < want && taken < max && !rc;) {
		const struct sm_lft_shadow *sh = &st->tab.shadow[n];
		if (b >= sh->n_blocks) {
			n = (n + 1) % n_sh;
			b = 0;
			continue;
		}
		if (sh->known[b]) {
			struct light_req *rq = &reqs[(*nr)++];
			*rq = (struct light_req){ .l = l, .node = n, .arg = (uint16_t)b, .kind = LQ_LFT };
			rc = submit(txn, cfg, rq, SM_ATTR_LFT, b, &st->tab.path[n]);
			taken++;
			seen++;
		}
		b++;
	}
	st->lft_cursor_node = n;
	st->lft_cursor_block = (uint16_t)b;
	l->ls->lft_blocks_read = taken;
	return rc;
}

/* Who holds foreign_sm_lid: the model's port with that LID, and its SMInfo (one more round trip). */
static int ask_foreign(struct sm_txn *txn, const struct sm_cfg *cfg, struct light *l, struct light_req *rq)
{
	struct sm_light_summary *ls = l->ls;
	uint32_t idx = sm_fabric_find_lid(l->f, l->st->snap->plane, ls->foreign_sm_lid);
	struct sm_dr_path p;

	if (idx == SM_NONE || idx >= l->f->n_ports)
		return 0;
	const struct sm_port *pt = &l->f->ports[idx];
	ls->foreign_sm_guid = pt->guid;
	snprintf(ls->foreign_sm_desc, sizeof(ls->foreign_sm_desc), "%s", l->f->nodes[pt->node].desc);
	*rq = (struct light_req){ .l = l, .node = pt->node, .arg = pt->num, .kind = LQ_SMINFO };
	port_path(l->st, pt->node, pt->num, &p);
	/* a port without an SM behind it never answers: two tries, not the lossy-fabric adaptation */
	const struct sm_txn_req_opts o = { .retries = 1 };
	struct sm_smp smp;
	sm_smp_init_dr(&smp, SM_METHOD_GET, SM_ATTR_SM_INFO, 0, &p);
	smp.mkey = sm_keys_send(cfg->keys, pt->guid, 0);
	int rc = sm_txn_submit_opts(txn, &smp, SM_PERMISSIVE_LID, &o, light_cb, rq);
	return rc ? rc : sm_txn_run(txn);
}

/* After the samples: another SM, or tables that are not ours? Decide (sm.h) and say why. */
static void judge(struct sm_transport *t, const struct sm_cfg *cfg, struct light *l)
{
	struct sm_light_summary *ls = l->ls;
	char who[320] = "", lft[240] = "";

	if (ls->foreign_ports) {
		static const char *const names[] = { "not active", "discovering", "standby", "master" };
		char smi[64];
		if (ls->foreign_sm_state >= 0)
			snprintf(smi, sizeof(smi), "%s, priority %u", names[ls->foreign_sm_state & 3],
				 ls->foreign_sm_priority);
		else
			snprintf(smi, sizeof(smi), "no SMInfo answer");
		snprintf(who, sizeof(who), "SM LID %u on %u of %u ports read (port GUID 0x%016" PRIx64 " '%s': %s)",
			 ls->foreign_sm_lid, ls->foreign_ports, ls->ports_read, ls->foreign_sm_guid,
			 ls->foreign_sm_desc[0] ? ls->foreign_sm_desc : "not in the model", smi);
		ls->foreign_master = ls->foreign_sm_state == SM_SMSTATE_MASTER && ls->foreign_sm_guid &&
			sm_elect_better((uint8_t)ls->foreign_sm_priority, ls->foreign_sm_guid, cfg->sminfo_priority,
					t->info.port_guid);
	}
	if (ls->lft_blocks_drift) {
		const struct sm_node *nd = &l->f->nodes[l->first_drift_node];
		snprintf(lft, sizeof(lft), "%u of %u LFT blocks read differ from what smd wrote, on %u switch%s "
			 "(first: 0x%016" PRIx64 " '%.40s' block %u)", ls->lft_blocks_drift, ls->lft_blocks_read,
			 ls->lft_switches_drift, ls->lft_switches_drift == 1 ? "" : "es", nd->guid, nd->desc,
			 l->first_drift_block);
	}
	if (ls->foreign_master) {
		/* a better master: the election hands over to it; repairing would fight it */
		snprintf(ls->why, sizeof(ls->why), "another master, better than us: %s; left to the election", who);
		return;
	}
	if (!who[0] && !lft[0])
		return;
	/* what the shadows say may no longer be on the switches: the heavy sweep reads every block back */
	sm_state_forget(l->st);
	ls->repaired = 1;
	ls->changed++;
	snprintf(ls->why, sizeof(ls->why), "%s%s%s%s: repairing", who[0] ? "another SM: " : "", who,
		 who[0] && lft[0] ? "; " : "", lft);
}

int sm_light_sweep(struct sm_transport *t, const struct sm_cfg *cfg, struct sm_state *state,
		   struct sm_light_summary *ls, char *err, size_t errlen)
{
	uint64_t t0 = sm_mono_us();
	struct light l = { .cfg = cfg, .st = state, .ls = ls };
	struct light_req *reqs = NULL;
	struct sm_txn *txn = NULL;
	uint32_t nr = 0, max = 0;
	int rc = 0;

	memset(ls, 0, sizeof(*ls));
	ls->foreign_sm_state = -1;
	if (!sm_state_valid(state)) {
		snprintf(ls->why, sizeof(ls->why), "no state from a successful heavy sweep");
		return 1;
	}
	/*
	 * The SM's own port is not asked separately: with its link down no
	 * SwitchInfo comes back, which is a change (and transports differ in
	 * whether their local port state is live: ibsim's client has none).
	 */
	txn = sm_txn_new(t, &cfg->txn);
	const struct sm_fabric *f = sm_state_fabric(state);
	l.f = f;
	uint32_t n_nodes = f->n_nodes < state->tab.n_shadow ? f->n_nodes : state->tab.n_shadow;
	uint64_t blocks = 0;
	for (uint32_t n = 0; n < n_nodes; n++)
		blocks += state->tab.shadow[n].n_blocks;
	/* room: a SwitchInfo per node, the samples, one SMInfo */
	max = budget(f->n_ports) + budget(blocks);
	reqs = calloc((size_t)n_nodes + max + 2, sizeof(*reqs));
	l.drift_sw = calloc((size_t)n_nodes + 1, 1);
	if (!txn || !reqs || !l.drift_sw) {
		snprintf(err, errlen, "out of memory (or bad MAD window settings)");
		rc = -ENOMEM;
		goto out;
	}
	sm_txn_set_unsolicited(txn, light_unsolicited, &l);
	for (uint32_t n = 0; n < n_nodes && !rc; n++) {
		if (f->nodes[n].type != SM_NODE_SWITCH)
			continue;
		struct light_req *rq = &reqs[nr++];
		*rq = (struct light_req){ .l = &l, .node = n, .kind = LQ_SI };
		rc = submit(txn, cfg, rq, SM_ATTR_SWITCH_INFO, 0, &state->tab.path[n]);
		ls->switches++;
	}
	if (!rc)
		rc = sample_ports(txn, cfg, &l, reqs, &nr, budget(f->n_ports));
	if (!rc)
		rc = sample_lfts(txn, cfg, &l, reqs, &nr, budget(blocks));
	if (!rc)
		rc = sm_txn_run(txn);
	if (!rc && ls->foreign_sm_lid)
		rc = ask_foreign(txn, cfg, &l, &reqs[nr]);
	if (rc)
		snprintf(err, errlen, "light sweep failed: %s", strerror(-rc));
	else
		judge(t, cfg, &l);
	ls->smps = sm_txn_stats(txn)->sent;
	ls->txn = *sm_txn_stats(txn);
out:
	sm_txn_free(txn);
	free(reqs);
	free(l.drift_sw);
	ls->seconds = (double)(sm_mono_us() - t0) / 1e6;
	if (rc)
		return rc;
	if (ls->foreign_master)
		return 0;
	return ls->why[0] ? 1 : 0;
}
