/* SPDX-License-Identifier: MIT */
/*
 * DOC: what every phase of a bring-up uses (core.h)
 *
 * Request contexts (pooled in chunks, freed with the core), Gets along a DR
 * path, clearing PortStateChange, notes and the first reason for a new
 * sweep, driving the transaction engine until a phase's SMPs are answered,
 * and telling whether an unsolicited SMP calls for a sweep. Calls nothing in
 * the phases.
 */
#include "sm/core.h"
#include "sm/neighbours.h"
#include "routing/mcast.h"
#include "routing/validate.h"
#include "sm/snapshot.h"
#include "sm/state.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int sm_core_init(struct sm_core *c, struct sm_transport *t, const struct sm_cfg *cfg, struct sm_state *state,
		 char *err, size_t errlen)
{
	memset(c, 0, sizeof(*c));
	sm_sweep_tables_init(&c->tab);
	c->t = t;
	c->cfg = cfg;
	c->state = state;
	c->plane = cfg->plane;
	c->txn = sm_txn_new(t, &cfg->txn);
	if (!c->txn) {
		snprintf(err, errlen, "cannot create the transaction engine (bad window/limits?)");
		return -EINVAL;
	}
	return 0;
}

struct sm_req *sm_core_req(struct sm_core *c, uint8_t kind, uint32_t node, uint16_t port, sm_req_fn *fn)
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
	c->on[kind] = fn;   /* one handler per kind: kept out of the (many) requests */
	return rq;
}

uint64_t sm_core_guid_behind(const struct sm_core *c, uint32_t n, unsigned p)
{
	const struct sm_fabric *pf = sm_state_fabric(c->state);
	if (n == SM_NONE)
		return c->t->info.port_guid;
	uint32_t pn = pf && n < c->f->n_nodes ? sm_fabric_find_node(pf, c->f->nodes[n].guid) : SM_NONE;
	const struct sm_port *pp = pn != SM_NONE ? sm_fabric_port_checked(pf, pn, p) : NULL;
	if (pp && pp->peer_node != SM_NONE)
		return sm_keys_sma_guid(pf, pp->peer_node, pp->peer_port);
	/* a restarted SM: the table its last run saved (derived keys at protect bits 2-3) */
	return n < c->f->n_nodes ? sm_nbr_lookup(c->cfg->neighbours, c->f->nodes[n].guid, p) : 0;
}

int sm_core_mkey_use_prev(struct sm_core *c, uint64_t guid)
{
	const struct sm_keys *k = c->cfg->keys;
	if (!sm_keys_has_prev(k) || !guid || sm_guid_map_get(&c->mkey_prev, guid) != SM_NONE)
		return 0;
	if (sm_guid_map_put(&c->mkey_prev, guid, 1)) {
		sm_core_fail(c, -ENOMEM);
		return 0;
	}
	c->mkey_rotated++;
	return 1;
}

/* The GUID whose key rq's SMP carried. */
static uint64_t req_guid(const struct sm_core *c, const struct sm_req *rq, const struct sm_smp *smp)
{
	return smp->attr_id == SM_ATTR_NODE_INFO ? sm_core_guid_behind(c, rq->node, rq->port) :
						    sm_keys_sma_guid(c->f, rq->node, rq->port);
}

static void req_cb(struct sm_txn *e, const struct sm_txn_result *r, void *ctx)
{
	struct sm_req *rq = ctx;
	(void)e;
	if (r->status == -ETIMEDOUT && sm_core_mkey_use_prev(rq->c, req_guid(rq->c, rq, r->req))) {
		/* protect bits 2-3 drop every SMP with a wrong key: once more with the previous secret's */
		struct sm_smp smp = *r->req;
		smp.tid = 0;
		smp.mkey = sm_core_mkey_guid(rq->c, req_guid(rq->c, rq, r->req));
		if (!sm_core_submit(rq->c, rq, &smp))
			return;
	}
	if (r->status != -ECANCELED)
		rq->c->on[rq->kind](rq->c, rq, r);
}

int sm_core_submit(struct sm_core *c, struct sm_req *rq, const struct sm_smp *smp)
{
	if (smp->method == SM_METHOD_SET) {
		if (c->cfg->read_only)
			return -EPERM;   /* a discovery sweep writes nothing (sm_discover_sms) */
		c->sets_sent++;
	}
	return sm_txn_submit(c->txn, smp, SM_PERMISSIVE_LID, req_cb, rq);
}

int sm_core_get(struct sm_core *c, uint16_t attr, uint32_t mod, const struct sm_dr_path *p, uint8_t kind,
		uint32_t node, uint16_t port, sm_req_fn *fn)
{
	struct sm_req *rq = sm_core_req(c, kind, node, port, fn);
	struct sm_smp smp;
	if (!rq)
		return -ENOMEM;
	sm_smp_init_dr(&smp, SM_METHOD_GET, attr, mod, p);
	/* a NodeInfo Get goes to the node behind port `port` of `node` */
	smp.mkey = attr == SM_ATTR_NODE_INFO ? sm_core_mkey_guid(c, sm_core_guid_behind(c, node, port)) :
					       sm_core_mkey_at(c, node, port);
	return sm_core_submit(c, rq, &smp);
}

static void on_clear_psc(struct sm_core *c, const struct sm_req *rq, const struct sm_txn_result *r)
{
	struct sm_switch_info si;
	struct sm_mad_err me;

	if (r->status || r->mad_status || sm_switch_info_decode(r->resp->data, &si, &me)) {
		sm_core_note(c, "switch 0x%016" PRIx64 ": clearing PortStateChange failed (%s)",
			     c->f->nodes[rq->node].guid, r->status ? "lost" : "error status or bad answer");
		return;
	}
	c->tab.si[rq->node] = si;
}

/*
 * Cleared as soon as a sweep has read it set, so the light sweep only sees
 * changes that happen after the heavy sweep looked (a change in between also
 * sends a trap 128, which makes the sweep run again).
 */
int sm_core_clear_psc(struct sm_core *c, uint32_t node, const struct sm_switch_info *si)
{
	struct sm_req *rq = sm_core_req(c, SM_RQ_SI_CLEAR, node, 0, on_clear_psc);
	struct sm_switch_info w = *si;
	struct sm_smp smp;
	if (!rq)
		return -ENOMEM;
	w.port_state_change = 1;
	sm_smp_init_dr(&smp, SM_METHOD_SET, SM_ATTR_SWITCH_INFO, 0, &c->tab.path[node]);
	smp.mkey = sm_core_mkey_at(c, node, 0);
	sm_switch_info_encode(&w, smp.data);
	c->psc_cleared++;
	return sm_core_submit(c, rq, &smp);
}

int sm_core_grow(struct sm_core *c)
{
	return sm_sweep_tables_fit(&c->tab, c->f);
}

void sm_core_fail(struct sm_core *c, int rc)
{
	if (!c->err)
		c->err = rc;
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

int sm_core_run_until(struct sm_core *c, unsigned pending)
{
	const struct sm_txn_stats *st = sm_txn_stats(c->txn);
	uint64_t rx = st->received, lost = st->timed_out;
	unsigned dead = c->cfg->dead_after;

	while (sm_txn_pending(c->txn) > pending) {
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

int sm_core_run(struct sm_core *c)
{
	return sm_core_run_until(c, 0);
}

/*
 * Every queued request holds its whole SMP in the transaction engine
 * (about 300 bytes): a phase that queued all its Sets at once held 2.5 M
 * LFT blocks (700 MB) at 40k hosts, or 5.5 M SL2VL Sets under ibsim
 * (1.4 GB). Above SM_CORE_SLICE pending, run until half are left; the
 * window on the wire is far smaller, so the wire never waits, and the
 * request records stay few and in cache (a slice of 2,048 also cut the
 * SM's CPU per SMP: BENCHMARKS.md, smpcpu).
 */
int sm_core_throttle(struct sm_core *c)
{
	if (sm_txn_pending(c->txn) <= SM_CORE_SLICE)
		return 0;
	return sm_core_run_until(c, SM_CORE_SLICE / 2);
}

void sm_core_reset(struct sm_core *c)
{
	sm_sweep_tables_free(&c->tab);
	sm_guid_map_free(&c->mkey_prev);
	free(c->next);
	c->next = NULL;
	c->n_next = c->cap_next = 0;
	free(c->unconfigured);
	c->unconfigured = NULL;
	free(c->trusted);
	c->trusted = NULL;
	free(c->lft_changed);
	c->lft_changed = NULL;
	c->lft_prev = NULL;
	sm_lft_delta_free(c->lft_delta);
	c->lft_delta = NULL;
	free(c->delta_lost);
	c->delta_lost = NULL;
	free(c->delta_port);
	c->delta_port = NULL;
	c->delta_ports = 0;
	free(c->delta_fresh);
	c->delta_fresh = NULL;
	free(c->delta_dirty);
	c->delta_dirty = NULL;
	sm_pkey_tables_free(c->pkeys);
	c->pkeys = NULL;
	sm_fabric_free(c->f);
	c->f = NULL;
	sm_mfts_free(c->mfts);
	c->mfts = NULL;
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
