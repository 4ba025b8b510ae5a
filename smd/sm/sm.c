/* SPDX-License-Identifier: MIT */
/*
 * DOC: SM core orchestration
 *
 * sm_bringup() runs the phases described in sm.h over one struct sm_core:
 * sweep (sm_sweep.c, repeated while the fabric changes under it), LIDs,
 * route, program, activate. Each phase submits all its SMPs and then drives
 * the transaction engine until they are answered, so a phase costs about
 * (SMPs / window) round trips. Every Set is decided from what the sweep
 * read, so nothing already right is written again.
 */
#include "sm/sm_priv.h"
#include "lib/clock.h"
#include "routing/registry.h"
#include "model/profile.h"
#include "sm/sminfo.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
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

struct sm_req *sm_core_req(struct sm_core *c, uint8_t kind, uint32_t node, uint16_t port)
{
	struct sm_req_chunk *k = c->chunks;
	if (!k || k->used == sizeof(k->r) / sizeof(k->r[0])) {
		k = malloc(sizeof(*k));
		if (!k)
			return NULL;
		k->used = 0;
		k->next = c->chunks;
		c->chunks = k;
	}
	struct sm_req *rq = &k->r[k->used++];
	*rq = (struct sm_req){ .c = c, .node = node, .port = port, .kind = kind };
	return rq;
}

static int grow_arr(void **p, size_t elem, uint32_t old, uint32_t need)
{
	void *q = realloc(*p, (size_t)need * elem);
	if (!q)
		return -ENOMEM;
	memset((char *)q + (size_t)old * elem, 0, (size_t)(need - old) * elem);
	*p = q;
	return 0;
}

/* Keep the side tables as large as the fabric's arrays. */
int sm_core_grow(struct sm_core *c)
{
	const struct sm_fabric *f = c->f;
	if (f->n_nodes > c->cap_nodes) {
		uint32_t need = f->cap_nodes > f->n_nodes ? f->cap_nodes : f->n_nodes;
		if (grow_arr((void **)&c->path, sizeof(*c->path), c->cap_nodes, need) ||
		    grow_arr((void **)&c->si, sizeof(*c->si), c->cap_nodes, need) ||
		    grow_arr((void **)&c->si_ok, sizeof(*c->si_ok), c->cap_nodes, need))
			return -ENOMEM;
		c->cap_nodes = need;
	}
	if (f->n_ports > c->cap_ports) {
		uint32_t need = f->cap_ports > f->n_ports ? f->cap_ports : f->n_ports;
		if (grow_arr((void **)&c->pi, sizeof(*c->pi), c->cap_ports, need) ||
		    grow_arr((void **)&c->pi_ok, sizeof(*c->pi_ok), c->cap_ports, need))
			return -ENOMEM;
		c->cap_ports = need;
	}
	return 0;
}

void sm_core_note(struct sm_core *c, const char *fmt, ...)
{
	char buf[640];
	va_list ap;
	if (!c->cfg->note)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	c->cfg->note(c->cfg->note_arg, buf);
}

void sm_core_changed(struct sm_core *c, const char *fmt, ...)
{
	va_list ap;
	if (c->changed++)
		return;
	va_start(ap, fmt);
	vsnprintf(c->why, sizeof(c->why), fmt, ap);
	va_end(ap);
}

static void free_sweep_state(struct sm_core *c)
{
	free(c->path);
	free(c->si);
	free(c->si_ok);
	free(c->pi);
	free(c->pi_ok);
	free(c->next);
	c->path = NULL;
	c->si = NULL;
	c->si_ok = NULL;
	c->pi = NULL;
	c->pi_ok = NULL;
	c->next = NULL;
	c->cap_nodes = c->cap_ports = c->n_next = c->cap_next = 0;
	free(c->unconfigured);
	c->unconfigured = NULL;
	free(c->trusted);
	c->trusted = NULL;
	free(c->delta_lost);
	c->delta_lost = NULL;
	if (c->shadow) {
		for (uint32_t n = 0; n < c->n_shadow; n++)
			sm_lft_shadow_free(&c->shadow[n]);
		free(c->shadow);
		c->shadow = NULL;
		c->n_shadow = 0;
	}
	sm_fabric_free(c->f);
	c->f = NULL;
}

static void free_reqs(struct sm_core *c)
{
	while (c->chunks) {
		struct sm_req_chunk *k = c->chunks;
		c->chunks = k->next;
		free(k);
	}
}

int sm_trap_wants_sweep(const struct sm_smp *smp, unsigned *trap_num)
{
	struct sm_notice n;
	struct sm_mad_err me;
	int decoded;

	if (trap_num)
		*trap_num = 0;
	if (smp->method != SM_METHOD_TRAP)
		return 0;
	decoded = smp->attr_id == SM_ATTR_NOTICE && !sm_notice_decode(smp->data, &n, &me);
	if (decoded && trap_num)
		*trap_num = n.trap_num;
	return !(decoded && n.is_generic && n.trap_num != 128);
}

static void on_unsolicited(struct sm_txn *e, const struct sm_smp *smp, const struct sm_mad_addr *from,
			   void *ctx)
{
	struct sm_core *c = ctx;
	unsigned num;
	struct sm_smp resp;
	struct sm_sminfo_self self = {
		.guid = c->t->info.port_guid, .sm_key = c->cfg->keys ? c->cfg->keys->sm_key : 0,
		.state = SM_SMSTATE_DISCOVERING,
	};
	/* SMInfo asked of us while we sweep (smd/sm/sminfo.h) */
	if (sm_sminfo_answer(smp, &self, &resp) == 1) {
		(void)sm_txn_send_raw(e, &resp, smp->mgmt_class == SM_CLASS_SMI_DR ? SM_PERMISSIVE_LID :
				      (from ? from->slid : 0));
		return;
	}
	if (smp->method != SM_METHOD_TRAP)
		return;
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

/* ---- Set helpers ---- */

/*
 * The DR path to use for an SMP about port p of node n. A switch answers for
 * any of its ports whichever port the SMP came in by; a CA answers for the
 * port it arrives on (ibsim refuses a PortInfo Set for another port), so a
 * CA port is addressed through its own link: the peer's path plus the
 * peer's port (the peer is a switch, or the SM's own node).
 */
static void port_path(const struct sm_core *c, uint32_t n, unsigned p, struct sm_dr_path *out)
{
	const struct sm_node *nd = &c->f->nodes[n];
	const struct sm_port *pt = sm_port(c->f, n, p);
	*out = c->path[n];
	if (nd->type == SM_NODE_SWITCH || p == 0 || pt->peer_node == SM_NONE ||
	    (n == c->sm_node && p == c->sm_portnum))
		return;
	struct sm_dr_path q = c->path[pt->peer_node];
	if (sm_dr_path_push(&q, pt->peer_port) == 0)
		*out = q;
}

static void set_cb(struct sm_txn *e, const struct sm_txn_result *r, void *ctx);

static int submit_set(struct sm_core *c, uint16_t attr, uint32_t mod, uint32_t node, const uint8_t *data,
		      uint8_t kind, uint16_t port, uint8_t aux)
{
	struct sm_req *rq = sm_core_req(c, kind, node, port);
	struct sm_dr_path path;
	struct sm_smp smp;
	if (!rq)
		return -ENOMEM;
	rq->aux = aux;
	if (attr == SM_ATTR_PORT_INFO)
		port_path(c, node, port, &path);
	else
		path = c->path[node];
	sm_smp_init_dr(&smp, SM_METHOD_SET, attr, mod, &path);
	smp.mkey = sm_core_mkey(c);
	memcpy(smp.data, data, SM_SMP_DATA_SIZE);
	return sm_txn_submit(c->txn, &smp, SM_PERMISSIVE_LID, set_cb, rq);
}

static int submit_lft_get(struct sm_core *c, uint32_t node, uint16_t block)
{
	struct sm_req *rq = sm_core_req(c, SM_RQ_LFT_GET, node, block);
	struct sm_smp smp;
	if (!rq)
		return -ENOMEM;
	sm_smp_init_dr(&smp, SM_METHOD_GET, SM_ATTR_LFT, block, &c->path[node]);
	smp.mkey = sm_core_mkey(c);
	return sm_txn_submit(c->txn, &smp, SM_PERMISSIVE_LID, set_cb, rq);
}

static void set_cb(struct sm_txn *e, const struct sm_txn_result *r, void *ctx)
{
	struct sm_req *rq = ctx;
	struct sm_core *c = rq->c;
	struct sm_mad_err me;
	(void)e;

	if (r->status == -ECANCELED)
		return;
	if (rq->kind == SM_RQ_PI_SET_STATE && !r->status && r->mad_status && r->tries > 1 &&
	    !(rq->aux & 0x80)) {
		/*
		 * A retried state Set refused: the first try may have been applied
		 * and only its answer lost, and an SMA refuses the same transition
		 * twice (ibsim: ARMED -> ARMED). Read the port back before calling
		 * it a failure (aux 0x80: this is the read-back).
		 */
		struct sm_req *v = sm_core_req(c, SM_RQ_PI_SET_STATE, rq->node, rq->port);
		struct sm_dr_path path;
		struct sm_smp smp;
		if (v) {
			v->aux = rq->aux | 0x80;
			port_path(c, rq->node, rq->port, &path);
			sm_smp_init_dr(&smp, SM_METHOD_GET, SM_ATTR_PORT_INFO, rq->port, &path);
			smp.mkey = sm_core_mkey(c);
			if (!sm_txn_submit(c->txn, &smp, SM_PERMISSIVE_LID, set_cb, v))
				return;
		}
	}
	if (r->status || r->mad_status) {
		c->set_errors++;
		sm_core_note(c, "%s %s on node 0x%016" PRIx64 " (%s) %s %u: %s",
			     sm_method_name(r->req->method), sm_attr_name(r->req->attr_id),
			     c->f->nodes[rq->node].guid, c->f->nodes[rq->node].desc,
			     rq->kind == SM_RQ_LFT_GET || rq->kind == SM_RQ_LFT_SET ? "block" : "port", rq->port,
			     r->status ? strerror(-r->status) : "error status");
		return;
	}
	switch (rq->kind) {
	case SM_RQ_PI_SET_LID:
	case SM_RQ_PI_SET_STATE: {
		struct sm_port_info pi;
		uint32_t idx = sm_port_index(c->f, rq->node, rq->port);
		if (sm_port_info_decode(r->resp->data, &pi, &me)) {
			c->set_errors++;
			sm_core_note(c, "PortInfo Set on node 0x%016" PRIx64 " port %u: bad answer: %s",
				     c->f->nodes[rq->node].guid, rq->port, me.msg);
			break;
		}
		c->pi[idx] = pi;
		c->f->ports[idx].state = pi.port_state;
		if ((rq->aux & 0x80) && pi.port_state != (rq->aux & 0x7F)) {
			c->set_errors++;
			sm_core_note(c, "node 0x%016" PRIx64 " port %u reads %s after a refused Set to %s",
				     c->f->nodes[rq->node].guid, rq->port, sm_port_state_str(pi.port_state),
				     sm_port_state_str(rq->aux & 0x7F));
		}
		/* the answer shows what the port now holds: an SMA without M_Key support drops the key */
		if (rq->kind == SM_RQ_PI_SET_LID && c->cfg->keys && c->cfg->keys->set_mkey &&
		    pi.mkey != c->cfg->keys->set_mkey && !c->mkey_unkept++)
			sm_core_note(c, "node 0x%016" PRIx64 " (%s) port %u does not keep the M_Key it was set "
				     "(no M_Key support in its SMA?): it is not protected",
				     c->f->nodes[rq->node].guid, c->f->nodes[rq->node].desc, rq->port);
		break;
	}
	case SM_RQ_SI_SET: {
		struct sm_switch_info si;
		if (!sm_switch_info_decode(r->resp->data, &si, &me))
			c->si[rq->node] = si;
		if (c->shadow)
			c->shadow[rq->node].top = c->si[rq->node].lft_top;
		break;
	}
	case SM_RQ_LFT_GET:
	case SM_RQ_LFT_SET: {
		struct sm_lft_block b;
		if (sm_lft_block_decode(r->resp->data, &b, &me)) {
			c->set_errors++;
			break;
		}
		/* a Set's answer carries what the switch now holds, like a Get */
		if (sm_lft_shadow_store(&c->shadow[rq->node], rq->port, b.port) && !c->err)
			c->err = -ENOMEM;
		break;
	}
	default:
		break;
	}
}

int sm_core_run(struct sm_core *c)
{
	const struct sm_txn_stats *st = sm_txn_stats(c->txn);
	uint64_t rx = st->received, lost = st->timed_out;
	unsigned dead = c->cfg->dead_after;

	while (sm_txn_pending(c->txn)) {
		int rc = sm_txn_poll(c->txn, -1);
		if (rc < 0)
			return rc;
		if (st->received != rx) {
			rx = st->received;
			lost = st->timed_out;
		} else if (dead && st->timed_out - lost >= dead) {
			/* nothing has answered for `dead` lost SMPs: the plane is gone */
			sm_core_note(c, "%llu SMPs in a row lost with no answer: giving the plane up",
				     (unsigned long long)(st->timed_out - lost));
			sm_txn_cancel_all(c->txn);
			return -ETIMEDOUT;
		}
	}
	return c->err;
}

static int run(struct sm_core *c)
{
	return sm_core_run(c);
}

/* The M_Key fields every PortInfo Set carries (all 0 without keys). */
static void set_keys(const struct sm_core *c, struct sm_port_info_set *s)
{
	const struct sm_keys *k = c->cfg->keys;
	if (!k)
		return;
	s->mkey = k->set_mkey;
	s->mkey_prot_bits = k->protect_bits;
	s->mkey_lease_period = k->lease_period;
}

/* Does port info cp hold the M_Key fields we want? (Always, without keys.) */
static int keys_ok(const struct sm_core *c, const struct sm_port_info *cp)
{
	const struct sm_keys *k = c->cfg->keys;
	return !k || (cp->mkey == k->set_mkey && cp->mkey_prot_bits == k->protect_bits &&
		      cp->mkey_lease_period == k->lease_period);
}

/* Ports that carry a LID: switch port 0, reached CA/router ports. */
static int lid_port(const struct sm_core *c, uint32_t n, unsigned p)
{
	const struct sm_node *nd = &c->f->nodes[n];
	uint32_t idx = nd->port0 + p;
	if (nd->type == SM_NODE_SWITCH)
		return p == 0 && c->pi_ok[idx];
	return p >= 1 && c->f->ports[idx].guid && c->pi_ok[idx];
}

/*
 * Index in the state's fabric of switch n when what the state remembers of
 * its LFT still holds, else SM_NONE. Read before this bring-up set any LID:
 * a switch that rebooted comes back with LID 0 and LinearFDBTop 0; one that
 * another SM took over has other values.
 */
static uint32_t trusted_shadow(const struct sm_core *c, uint32_t n, uint16_t lid_read)
{
	const struct sm_state *st = c->state;
	const struct sm_node *nd = &c->f->nodes[n];
	if (!st || !st->f || nd->type != SM_NODE_SWITCH || !c->si_ok[n] || !lid_read)
		return SM_NONE;
	uint32_t o = sm_fabric_find_node(st->f, nd->guid);
	if (o == SM_NONE || o >= st->n_nodes || st->f->nodes[o].type != SM_NODE_SWITCH)
		return SM_NONE;
	const struct sm_lft_shadow *sh = &st->shadow[o];
	if (!sh->n_blocks || sh->top != c->si[n].lft_top ||
	    st->f->ports[st->f->nodes[o].port0].lid != lid_read)
		return SM_NONE;
	return o;
}

static int phase_lids(struct sm_core *c, struct sm_summary *sum, char *err, size_t errlen)
{
	const struct sm_cfg *cfg = c->cfg;
	struct sm_fabric *f = c->f;
	struct sm_lidmgr m;
	char path[4096], lerr[512];
	const char *in = NULL;
	int rc, have_file = 0;
	uint16_t *cur = NULL;

	sm_lidmgr_init(&m);
	path[0] = '\0';
	if (cfg->state_dir)
		snprintf(path, sizeof(path), "%s/guid2lid", cfg->state_dir);
	in = cfg->guid2lid ? cfg->guid2lid : (path[0] ? path : NULL);
	if (in) {
		rc = sm_lidmgr_load(&m, in, lerr, sizeof(lerr));
		if (rc == -ENOENT && !cfg->guid2lid) {
			rc = 0;   /* first start */
		} else if (rc) {
			snprintf(err, errlen, "%s", lerr);
			goto out;
		} else {
			have_file = 1;
		}
	}
	cur = calloc((size_t)f->n_ports + 1, sizeof(*cur));
	if (!cur) {
		rc = -ENOMEM;
		goto out;
	}
	c->unconfigured = calloc((size_t)f->n_nodes + 1, 1);
	c->trusted = malloc(((size_t)f->n_nodes + 1) * sizeof(*c->trusted));
	if (!c->unconfigured || !c->trusted) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < f->n_ports; i++)
		if (c->pi_ok[i])
			cur[i] = c->pi[i].lid;
	for (uint32_t n = 0; n < f->n_nodes; n++) {
		c->unconfigured[n] = f->nodes[n].type == SM_NODE_SWITCH && !cur[f->nodes[n].port0];
		c->trusted[n] = trusted_shadow(c, n, cur[f->nodes[n].port0]);
	}
	if (cfg->lid_want) {
		/* plane-consistent LIDs: the wanted LIDs stand in for the fabric's */
		rc = cfg->lid_want(cfg->lid_want_arg, f, c->plane, cur, cur);
		if (rc) {
			snprintf(err, errlen, "plane-consistent LID assignment failed: %s",
				 rc == -ENOSPC ? "LID space exhausted" : strerror(-rc));
			goto out;
		}
	}
	rc = sm_lidmgr_assign(&m, f, c->plane, cfg->lmc, cur, NULL, &sum->lids, cfg->note, cfg->note_arg);
	if (rc) {
		snprintf(err, errlen, "LID assignment failed: %s", rc == -ENOSPC ? "LID space exhausted" :
			 strerror(-rc));
		goto out;
	}
	if (path[0] && (m.dirty || !have_file || cfg->guid2lid)) {
		/*
		 * A state file that cannot be written (disk full, read-only) must
		 * not take the subnet down: the LIDs are assigned in memory and
		 * the previous file is intact. Report it; the caller decides.
		 */
		if (sm_lidmgr_save(&m, path, lerr, sizeof(lerr))) {
			sum->state_errors++;
			snprintf(sum->state_err, sizeof(sum->state_err), "%s", lerr);
			sm_core_note(c, "cannot save LIDs: %s", lerr);
		}
	}
	uint32_t smp_idx = sm_port_index(f, c->sm_node, c->sm_portnum);
	uint16_t sm_lid = f->ports[smp_idx].lid;
	f->planes[c->plane].sm_lid = sm_lid;
	f->planes[c->plane].sm_port = smp_idx;
	f->planes[c->plane].subnet_prefix = cfg->subnet_prefix;
	sum->sm_lid = sm_lid;

	for (uint32_t n = 0; n < f->n_nodes && !rc; n++) {
		const struct sm_node *nd = &f->nodes[n];
		for (unsigned p = 0; p <= nd->nports && !rc; p++) {
			if (!lid_port(c, n, p))
				continue;
			uint32_t idx = nd->port0 + p;
			const struct sm_port *pt = &f->ports[idx];
			const struct sm_port_info *cp = &c->pi[idx];
			/*
			 * SubnetTimeout goes out with every Set but is not compared:
			 * some SMAs (ibsim's) keep their own value, and re-setting
			 * every port on every run for it would defeat the point.
			 */
			if (cp->lid == pt->lid && cp->lmc == pt->lmc && cp->master_sm_lid == sm_lid &&
			    cp->gid_prefix == cfg->subnet_prefix && keys_ok(c, cp))
				continue;
			struct sm_port_info_set s = {
				.lid = pt->lid, .lmc = pt->lmc, .sm_lid = sm_lid,
				.gid_prefix = cfg->subnet_prefix, .subnet_timeout = cfg->subnet_timeout,
			};
			set_keys(c, &s);
			struct sm_port_info out;
			uint8_t data[SM_SMP_DATA_SIZE];
			sm_port_info_prepare_set(&out, cp, &s);
			sm_port_info_encode(&out, data);
			rc = submit_set(c, SM_ATTR_PORT_INFO, p, n, data, SM_RQ_PI_SET_LID, (uint16_t)p, 0);
			c->pi_lid_sets++;
		}
	}
	if (!rc)
		rc = run(c);
	if (rc)
		snprintf(err, errlen, "setting LIDs failed: %s", strerror(-rc));
out:
	free(cur);
	sm_lidmgr_clear(&m);
	return rc;
}

static int phase_program(struct sm_core *c, char *err, size_t errlen)
{
	const struct sm_lfts *l = c->lfts;
	struct sm_fabric *f = c->f;
	uint16_t *blocks = NULL;
	int rc = 0;

	c->shadow = calloc((size_t)f->n_nodes + 1, sizeof(*c->shadow));
	c->n_shadow = c->shadow ? f->n_nodes : 0;
	blocks = malloc(SM_LFT_MAX_BLOCKS * sizeof(*blocks));
	if (!c->shadow || !blocks) {
		rc = -ENOMEM;
		goto out;
	}
	/* read back what configured switches hold, so only differences are written */
	for (uint32_t s = 0; s < l->n_switches && !rc; s++) {
		uint32_t n = l->sw_node[s];
		struct sm_lft_shadow *sh = &c->shadow[n];
		sm_lft_shadow_init(sh);
		if (!c->si_ok[n])
			continue;
		if (c->trusted && c->trusted[n] != SM_NONE) {
			/* what we wrote last time is still there: no read-back */
			*sh = c->state->shadow[c->trusted[n]];
			sm_lft_shadow_init(&c->state->shadow[c->trusted[n]]);
			c->lft_sw_trusted++;
		} else if (c->state && c->state->f) {
			c->lft_sw_unknown++;
		}
		sh->top = c->si[n].lft_top;
		/* a switch that had no LID has never been programmed by an SM: nothing to read */
		if (!c->cfg->read_lfts || c->unconfigured[n])
			continue;
		unsigned nb = sm_lft_blocks_to_read(l->top_lid, sh, blocks);
		for (unsigned i = 0; i < nb && !rc; i++) {
			rc = submit_lft_get(c, n, blocks[i]);
			c->lft_blocks_read++;
		}
	}
	if (!rc)
		rc = run(c);
	for (uint32_t s = 0; s < l->n_switches && !rc; s++) {
		uint32_t n = l->sw_node[s];
		const struct sm_node *nd = &f->nodes[n];
		if (!c->si_ok[n])
			continue;
		if (nd->lft_cap && (unsigned)l->top_lid >= nd->lft_cap) {
			c->set_errors++;
			sm_core_note(c, "switch 0x%016" PRIx64 " (%s): LinearFDBCap %u is below top LID %u; not programmed",
				     nd->guid, nd->desc, nd->lft_cap, l->top_lid);
			continue;
		}
		const uint8_t *row = sm_lfts_row(l, s);
		unsigned nb = sm_lft_diff(row, l->top_lid, &c->shadow[n], blocks);
		uint8_t data[SM_SMP_DATA_SIZE];
		for (unsigned i = 0; i < nb && !rc; i++) {
			struct sm_lft_block b;
			sm_lft_block(row, l->top_lid, blocks[i], b.port);
			sm_lft_block_encode(&b, data);
			rc = submit_set(c, SM_ATTR_LFT, blocks[i], n, data, SM_RQ_LFT_SET, blocks[i], 0);
			c->lft_blocks_written++;
		}
		if (nb)
			c->lft_switches_written++;
		if (!rc && c->si[n].lft_top != l->top_lid) {
			struct sm_switch_info si = c->si[n];
			si.lft_top = l->top_lid;
			si.port_state_change = 0;   /* write-1-to-clear: leave it */
			sm_switch_info_encode(&si, data);
			rc = submit_set(c, SM_ATTR_SWITCH_INFO, 0, n, data, SM_RQ_SI_SET, 0, 0);
			c->si_sets++;
		}
	}
	if (!rc)
		rc = run(c);
out:
	if (rc)
		snprintf(err, errlen, "programming LFTs failed: %s", strerror(-rc));
	free(blocks);
	return rc;
}

/* Ports that must end ACTIVE: linked switch ports (and port 0 if not yet active), reached CA ports. */
static int link_port(const struct sm_core *c, uint32_t n, unsigned p)
{
	const struct sm_node *nd = &c->f->nodes[n];
	uint32_t idx = nd->port0 + p;
	if (!c->pi_ok[idx])
		return 0;
	if (p == 0)
		return nd->type == SM_NODE_SWITCH && c->pi[idx].port_state >= SM_PORT_INIT &&
		       c->pi[idx].port_state < SM_PORT_ACTIVE;
	return c->f->ports[idx].peer_node != SM_NONE && c->pi[idx].port_state >= SM_PORT_INIT;
}

static int set_state_round(struct sm_core *c, uint8_t from, uint8_t to)
{
	const struct sm_fabric *f = c->f;
	int rc = 0;
	for (uint32_t n = 0; n < f->n_nodes && !rc; n++) {
		const struct sm_node *nd = &f->nodes[n];
		for (unsigned p = 0; p <= nd->nports && !rc; p++) {
			uint32_t idx = nd->port0 + p;
			if (!link_port(c, n, p) || c->pi[idx].port_state != from)
				continue;
			struct sm_port_info_set s = {
				.lid = c->pi[idx].lid, .lmc = c->pi[idx].lmc,
				.sm_lid = c->pi[idx].master_sm_lid, .sm_sl = c->pi[idx].master_sm_sl,
				.gid_prefix = c->pi[idx].gid_prefix, .port_state = to,
				.subnet_timeout = c->pi[idx].subnet_timeout,
			};
			set_keys(c, &s);
			struct sm_port_info out;
			uint8_t data[SM_SMP_DATA_SIZE];
			sm_port_info_prepare_set(&out, &c->pi[idx], &s);
			sm_port_info_encode(&out, data);
			rc = submit_set(c, SM_ATTR_PORT_INFO, p, n, data, SM_RQ_PI_SET_STATE, (uint16_t)p, to);
			c->pi_state_sets++;
		}
	}
	if (!rc)
		rc = run(c);
	return rc;
}

static int phase_activate(struct sm_core *c, struct sm_summary *sum, char *err, size_t errlen)
{
	int rc = set_state_round(c, SM_PORT_INIT, SM_PORT_ARMED);
	if (!rc)
		rc = set_state_round(c, SM_PORT_ARMED, SM_PORT_ACTIVE);
	if (rc) {
		snprintf(err, errlen, "activating ports failed: %s", strerror(-rc));
		return rc;
	}
	const struct sm_fabric *f = c->f;
	for (uint32_t n = 0; n < f->n_nodes; n++) {
		const struct sm_node *nd = &f->nodes[n];
		for (unsigned p = 1; p <= nd->nports; p++) {
			uint32_t idx = nd->port0 + p;
			if (!c->pi_ok[idx] || f->ports[idx].peer_node == SM_NONE)
				continue;
			sum->link_ports++;
			if (c->pi[idx].port_state == SM_PORT_ACTIVE)
				sum->active_ports++;
		}
	}
	return 0;
}

/* ---- state across bring-ups ---- */

int sm_state_new(struct sm_state **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

static void state_clear(struct sm_state *s)
{
	for (uint32_t n = 0; n < s->n_nodes; n++)
		sm_lft_shadow_free(&s->shadow[n]);
	free(s->shadow);
	free(s->path);
	free(s->pi);
	free(s->pi_ok);
	free(s->si);
	free(s->si_ok);
	sm_fabric_free(s->f);
	s->shadow = NULL;
	s->path = NULL;
	s->pi = NULL;
	s->pi_ok = NULL;
	s->si = NULL;
	s->si_ok = NULL;
	s->f = NULL;
	s->n_nodes = s->n_switches = 0;
	s->valid = 0;
}

void sm_state_free(struct sm_state *s)
{
	if (!s)
		return;
	state_clear(s);
	free(s);
}

void sm_state_forget(struct sm_state *s)
{
	if (!s)
		return;
	for (uint32_t n = 0; n < s->n_nodes; n++)
		sm_lft_shadow_free(&s->shadow[n]);
	s->valid = 0;
}

bool sm_state_valid(const struct sm_state *s)
{
	return s && s->valid && s->f;
}

uint32_t sm_state_switches(const struct sm_state *s)
{
	return sm_state_valid(s) ? s->n_switches : 0;
}

/*
 * After a bring-up that reached the program phase: the swept fabric, its
 * paths and the shadows (moved out of the core) become the new state. On
 * ENOMEM the state is dropped: the next heavy sweep reads LFTs back.
 */
static void state_update(struct sm_core *c, int ok)
{
	struct sm_state *st = c->state;
	struct sm_fabric *g = sm_fabric_new();
	const struct sm_fabric *f = c->f;

	state_clear(st);
	if (!g || sm_fabric_append(g, f, NULL)) {
		sm_fabric_free(g);
		return;
	}
	st->f = g;
	st->n_nodes = g->n_nodes;
	st->path = calloc((size_t)g->n_nodes + 1, sizeof(*st->path));
	st->shadow = calloc((size_t)g->n_nodes + 1, sizeof(*st->shadow));
	st->si = calloc((size_t)g->n_nodes + 1, sizeof(*st->si));
	st->si_ok = calloc((size_t)g->n_nodes + 1, 1);
	st->pi = calloc((size_t)g->n_ports + 1, sizeof(*st->pi));
	st->pi_ok = calloc((size_t)g->n_ports + 1, 1);
	if (!st->path || !st->shadow || !st->si || !st->si_ok || !st->pi || !st->pi_ok) {
		state_clear(st);
		return;
	}
	st->sm_node = SM_NONE;
	if (c->sm_node < f->n_nodes)
		st->sm_node = sm_fabric_find_node(g, f->nodes[c->sm_node].guid);
	st->sm_portnum = c->sm_portnum;
	for (uint32_t n = 0; n < f->n_nodes; n++) {
		uint32_t m = sm_fabric_find_node(g, f->nodes[n].guid);
		if (m == SM_NONE)
			continue;
		st->path[m] = c->path[n];
		st->si[m] = c->si[n];
		st->si_ok[m] = c->si_ok[n];
		for (unsigned p = 0; p <= f->nodes[n].nports; p++) {
			st->pi[g->nodes[m].port0 + p] = c->pi[f->nodes[n].port0 + p];
			st->pi_ok[g->nodes[m].port0 + p] = c->pi_ok[f->nodes[n].port0 + p];
		}
		if (f->nodes[n].type != SM_NODE_SWITCH)
			continue;
		st->n_switches++;
		if (n < c->n_shadow) {
			st->shadow[m] = c->shadow[n];
			sm_lft_shadow_init(&c->shadow[n]);
		}
	}
	st->valid = ok;
}

int sm_bringup(struct sm_transport *t, struct sm_chain *chain, const struct sm_cfg *cfg,
	       struct sm_summary *sum, struct sm_fabric **fabric_out, char *err, size_t errlen)
{
	return sm_bringup_state(t, chain, cfg, NULL, sum, fabric_out, err, errlen);
}

int sm_bringup_state(struct sm_transport *t, struct sm_chain *chain, const struct sm_cfg *cfg,
		     struct sm_state *state, struct sm_summary *sum, struct sm_fabric **fabric_out,
		     char *err, size_t errlen)
{
	struct sm_core core, *c = &core;
	struct sm_lfts *lfts = NULL;
	uint64_t t_all = sm_mono_us(), t0;
	int rc;

	memset(sum, 0, sizeof(*sum));
	memset(c, 0, sizeof(*c));
	if (fabric_out)
		*fabric_out = NULL;
	if (cfg->lmc > 7 || cfg->plane >= SM_MAX_PLANES) {
		snprintf(err, errlen, "bad configuration (LMC %u, plane %u)", cfg->lmc, cfg->plane);
		return -EINVAL;
	}
	c->t = t;
	c->cfg = cfg;
	c->state = state;
	c->plane = cfg->plane;
	c->txn = sm_txn_new(t, &cfg->txn);
	if (!c->txn) {
		snprintf(err, errlen, "cannot create the transaction engine (bad window/limits?)");
		return -EINVAL;
	}
	sm_txn_set_unsolicited(c->txn, on_unsolicited, c);

	/* discover, again while the fabric changes under the sweep */
	phase_start(c, SM_PH_DISCOVER);
	t0 = sm_mono_us();
	int delta = cfg->incremental && sm_state_valid(state) && state->pi;
	for (;;) {
		c->changed = 0;
		c->unresponsive = 0;
		c->mkey_foreign = 0;
		c->mkey_violations = 0;
		c->why[0] = '\0';
		sum->sweeps++;
		if (delta) {
			c->in_delta = 1;
			rc = sm_sweep_delta(c, err, errlen);
			c->in_delta = 0;
			if (rc < 0)
				goto out;
			if (rc == 0 && !c->changed) {
				sum->incremental = 1;
				sum->delta_links_down = c->delta_links_down;
				sum->delta_switches_read = c->delta_switches_read;
				sum->late_traps = c->late_traps;
				break;
			}
			/* what it cannot patch, or a change while it looked: a full sweep sees everything */
			sm_core_note(c, "incremental sweep: %s; sweeping in full", rc ? c->delta_why : c->why);
			delta = 0;
			free_sweep_state(c);
			free_reqs(c);
			continue;
		}
		c->f = sm_fabric_new();
		if (!c->f || sm_fabric_add_plane(c->f, c->plane, NULL)) {
			rc = -ENOMEM;
			snprintf(err, errlen, "out of memory");
			goto out;
		}
		rc = sm_sweep_once(c, err, errlen);
		if (rc)
			goto out;
		if (!c->changed)
			break;
		if (sum->sweeps > cfg->sweep_retries) {
			sm_core_note(c, "the fabric kept changing during %u sweeps (last: %s); using the last one",
				     sum->sweeps, c->why);
			break;
		}
		sm_core_note(c, "sweep %u saw the fabric change (%s); sweeping again", sum->sweeps, c->why);
		free_sweep_state(c);
		free_reqs(c);
	}
	sum->unresponsive = c->unresponsive;
	sum->mkey_foreign = c->mkey_foreign;
	sum->mkey_violations = c->mkey_violations;
	if (c->mkey_foreign > 8)
		sm_core_note(c, "%u ports in all are protected by an M_Key smd does not hold", c->mkey_foreign);
	rc = sum->incremental ? 0 : sm_sweep_canonicalize(c, NULL);
	if (rc) {
		snprintf(err, errlen, "cannot renumber the swept fabric: %s", strerror(-rc));
		goto out;
	}
	sum->phase_s[SM_PH_DISCOVER] = since(t0);

	phase_start(c, SM_PH_LIDS);
	t0 = sm_mono_us();
	rc = phase_lids(c, sum, err, errlen);
	sum->phase_s[SM_PH_LIDS] = since(t0);
	if (rc)
		goto out;
	sm_fabric_count(c->f, c->plane, &sum->counts);

	phase_start(c, SM_PH_ROUTE);
	t0 = sm_mono_us();
	struct sm_plane_result res;
	struct sm_profile *prof = NULL;
	if (cfg->profile_path) {
		char perr[512] = "";
		rc = sm_profile_load(c->f, cfg->profile_path, NULL, &prof, perr, sizeof(perr));
		if (rc == -ENOENT && access(cfg->profile_path, R_OK) == 0) {
			/* readable, but none of its endpoints is in this plane: route without it */
			sm_core_note(c, "profile: %s", perr[0] ? perr : "no flow in this plane");
			prof = NULL;
		} else if (rc) {
			snprintf(err, errlen, "profile: %s", perr[0] ? perr : strerror(-rc));
			goto out;
		} else {
			char warn[512];
			if (sm_profile_warning(prof, warn, sizeof(warn)))
				sm_core_note(c, "profile: %s", warn);
			sum->profile_flows = (uint32_t)prof->n_flows;
		}
	}
	rc = sm_route_chain(chain, c->f, c->plane, prof, &lfts, &res);
	sm_profile_free(prof);
	sum->phase_s[SM_PH_ROUTE] = since(t0);
	if (rc) {
		char buf[1024];
		sm_plane_result_format(&res, buf, sizeof(buf));
		snprintf(err, errlen, "routing failed: %s", buf);
		goto out;
	}
	for (unsigned i = 0; i < res.n_attempts; i++)
		if (res.attempts[i].rc)
			sm_core_note(c, "routing: %s passed over: %s", res.attempts[i].engine, res.attempts[i].why);
	if (res.notes[0])
		sm_core_note(c, "routing: %s: %s", res.engine, res.notes);
	sum->engine = res.engine;
	sum->top_lid = lfts->top_lid;
	c->lfts = lfts;

	phase_start(c, SM_PH_PROGRAM);
	t0 = sm_mono_us();
	rc = phase_program(c, err, errlen);
	sum->phase_s[SM_PH_PROGRAM] = since(t0);
	if (rc)
		goto out;

	phase_start(c, SM_PH_ACTIVATE);
	t0 = sm_mono_us();
	rc = phase_activate(c, sum, err, errlen);
	sum->phase_s[SM_PH_ACTIVATE] = since(t0);
	if (rc)
		goto out;
	if (sum->active_ports != sum->link_ports) {
		char why[160] = "";
		if (c->mkey_foreign)
			snprintf(why, sizeof(why), "; %u ports are protected by an M_Key smd does not hold: "
				 "they refuse its Sets", c->mkey_foreign);
		snprintf(err, errlen, "%u of %u link ports are not ACTIVE (%u Sets failed%s)",
			 sum->link_ports - sum->active_ports, sum->link_ports, c->set_errors, why);
		rc = -EIO;
	} else if (c->mkey_foreign && c->set_errors) {
		/* up, but not as configured: those ports' LIDs/keys could not be set */
		snprintf(err, errlen, "%u ports are protected by an M_Key smd does not hold: they refuse its "
			 "Sets (%u failed); check m_key and STATE_DIR/keys", c->mkey_foreign, c->set_errors);
		rc = -EACCES;
	}
out:
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
	sum->txn = *sm_txn_stats(c->txn);
	sm_txn_free(c->txn);
	c->txn = NULL;
	if (!rc && cfg->routed)
		cfg->routed(cfg->routed_arg, c->plane, c->f, lfts);
	sm_lfts_free(lfts);
	if (state && c->shadow)
		state_update(c, !rc);
	else if (state)
		state->valid = 0;   /* shadows still hold (nothing was written): only the light sweep waits */
	if (!rc && fabric_out) {
		*fabric_out = c->f;
		c->f = NULL;
	}
	free_sweep_state(c);
	free_reqs(c);
	sum->total_s = since(t_all);
	return rc;
}

/* ---- summary ---- */

void sm_summary_print(FILE *out, const struct sm_summary *s)
{
	const struct sm_txn_stats *x = &s->txn;
	fprintf(out, "fabric: %u nodes (%u switches, %u CAs%s), %u links, %u LIDs (top %u), SM LID %u\n",
		s->counts.nodes, s->counts.switches, s->counts.cas, s->counts.routers ? ", routers" : "",
		s->counts.links, s->counts.lids, s->top_lid, s->sm_lid);
	fprintf(out, "sweeps: %u%s; unresponsive ports: %u\n", s->sweeps,
		s->sweeps > 1 ? " (fabric changed during the sweep)" : "", s->unresponsive);
	fprintf(out, "lids: %u kept from file, %u kept from fabric, %u new, %u moved, %u conflicts\n",
		s->lids.from_file, s->lids.from_fabric, s->lids.fresh, s->lids.moved, s->lids.conflicts);
	fprintf(out, "routing: %s\n", s->engine ? s->engine : "-");
	fprintf(out, "smps: %" PRIu64 " sent, %" PRIu64 " retried, %" PRIu64 " lost, %" PRIu64
		" errors, %" PRIu64 " late, %" PRIu64 " dropped (malformed/mismatched/unknown); up to %u in flight\n",
		x->sent, x->retried, x->timed_out, x->mad_errors, x->late,
		x->malformed + x->mismatched + x->unknown_tid + x->duplicate, x->max_outstanding);
	if (x->adaptive_retries)
		fprintf(out, "  %" PRIu64 " of the retries beyond the configured count (lossy fabric)\n",
			x->adaptive_retries);
	fprintf(out, "rejected answers:");
	int any = 0;
	for (unsigned k = 1; k < SM_CHK_COUNT; k++)
		if (x->rejected[k]) {
			fprintf(out, "%s %s %" PRIu64, any ? "," : "", sm_check_kind_name(k), x->rejected[k]);
			any = 1;
		}
	fprintf(out, "%s\n", any ? "" : " none");
	for (unsigned a = 0; a < SM_TXN_A_COUNT; a++) {
		const struct sm_txn_attr_stats *as = &x->attr[a];
		if (!as->sent)
			continue;
		fprintf(out, "  %-22s %8" PRIu64 " sent %6" PRIu64 " retried %6" PRIu64 " lost\n",
			sm_txn_attr_slot_name(a), as->sent, as->retried, as->timed_out);
	}
	fprintf(out, "lft: %u blocks written (%u switches), %u blocks read, %u SwitchInfo sets\n",
		s->lft_blocks_written, s->lft_switches_written, s->lft_blocks_read, s->switchinfo_sets);
	if (s->lft_switches_trusted || s->lft_switches_unknown || s->psc_cleared)
		fprintf(out, "state: %u switches' LFTs known from the last sweep, %u unknown; %u PortStateChange cleared\n",
			s->lft_switches_trusted, s->lft_switches_unknown, s->psc_cleared);
	if (s->incremental)
		fprintf(out, "incremental sweep: ports of %u switches read, %u links removed\n",
			s->delta_switches_read, s->delta_links_down);
	fprintf(out, "portinfo: %u LID sets, %u state sets; %u/%u link ports ACTIVE; %u failed sets\n",
		s->portinfo_lid_sets, s->portinfo_state_sets, s->active_ports, s->link_ports, s->set_errors);
	if (s->mkey_foreign || s->mkey_violations)
		fprintf(out, "m_key: %u ports protected by an M_Key smd does not hold; %" PRIu64
			" M_Key violations counted by ports\n", s->mkey_foreign, s->mkey_violations);
	if (s->state_errors)
		fprintf(out, "state: NOT SAVED: %s\n", s->state_err);
	fprintf(out, "time:");
	for (unsigned p = 0; p < SM_PH_COUNT; p++)
		fprintf(out, " %s %.3f s,", sm_phase_name(p), s->phase_s[p]);
	fprintf(out, " total %.3f s\n", s->total_s);
}

void sm_summary_print_json(FILE *out, const struct sm_summary *s)
{
	const struct sm_txn_stats *x = &s->txn;
	fprintf(out, "{\"nodes\":%u,\"switches\":%u,\"cas\":%u,\"routers\":%u,\"links\":%u,\"lids\":%u,"
		"\"top_lid\":%u,\"sm_lid\":%u,\"sweeps\":%u,\"unresponsive\":%u,",
		s->counts.nodes, s->counts.switches, s->counts.cas, s->counts.routers, s->counts.links,
		s->counts.lids, s->top_lid, s->sm_lid, s->sweeps, s->unresponsive);
	fprintf(out, "\"lid_assign\":{\"from_file\":%u,\"from_fabric\":%u,\"new\":%u,\"moved\":%u,\"conflicts\":%u},",
		s->lids.from_file, s->lids.from_fabric, s->lids.fresh, s->lids.moved, s->lids.conflicts);
	fprintf(out, "\"engine\":\"%s\",", s->engine ? s->engine : "");
	fprintf(out, "\"smps\":{\"sent\":%" PRIu64 ",\"retried\":%" PRIu64 ",\"lost\":%" PRIu64
		",\"errors\":%" PRIu64 ",\"late\":%" PRIu64 ",\"dropped\":%" PRIu64 ",\"max_in_flight\":%u,",
		x->sent, x->retried, x->timed_out, x->mad_errors, x->late,
		x->malformed + x->mismatched + x->unknown_tid + x->duplicate, x->max_outstanding);
	fprintf(out, "\"adaptive_retries\":%" PRIu64 ",\"rejected\":{", x->adaptive_retries);
	for (unsigned k = 1; k < SM_CHK_COUNT; k++)
		fprintf(out, "%s\"%s\":%" PRIu64, k > 1 ? "," : "", sm_check_kind_name(k), x->rejected[k]);
	fprintf(out, "},\"by_attr\":{");
	int first = 1;
	for (unsigned a = 0; a < SM_TXN_A_COUNT; a++) {
		const struct sm_txn_attr_stats *as = &x->attr[a];
		if (!as->sent)
			continue;
		fprintf(out, "%s\"%s\":{\"sent\":%" PRIu64 ",\"retried\":%" PRIu64 ",\"lost\":%" PRIu64 "}",
			first ? "" : ",", sm_txn_attr_slot_name(a), as->sent, as->retried, as->timed_out);
		first = 0;
	}
	fprintf(out, "}},\"lft_blocks_written\":%u,\"lft_switches_written\":%u,\"lft_blocks_read\":%u,"
		"\"switchinfo_sets\":%u,\"portinfo_lid_sets\":%u,\"portinfo_state_sets\":%u,"
		"\"link_ports\":%u,\"active_ports\":%u,\"set_errors\":%u,\"state_errors\":%u,"
		"\"lft_switches_trusted\":%u,\"lft_switches_unknown\":%u,\"psc_cleared\":%u,"
		"\"incremental\":%u,\"delta_switches_read\":%u,\"delta_links_down\":%u,"
		"\"mkey_foreign\":%u,\"mkey_violations\":%" PRIu64 ",\"seconds\":{",
		s->lft_blocks_written, s->lft_switches_written, s->lft_blocks_read, s->switchinfo_sets,
		s->portinfo_lid_sets, s->portinfo_state_sets, s->link_ports, s->active_ports, s->set_errors,
		s->state_errors, s->lft_switches_trusted, s->lft_switches_unknown, s->psc_cleared,
		s->incremental, s->delta_switches_read, s->delta_links_down, s->mkey_foreign, s->mkey_violations);
	for (unsigned p = 0; p < SM_PH_COUNT; p++)
		fprintf(out, "\"%s\":%.6f,", sm_phase_name(p), s->phase_s[p]);
	fprintf(out, "\"total\":%.6f}}\n", s->total_s);
}
