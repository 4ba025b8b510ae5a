/* SPDX-License-Identifier: MIT */
/*
 * DOC: light sweep (see sm.h)
 *
 * Owns nothing beyond one call: a transaction engine on the plane's
 * transport, one Get SwitchInfo per switch of the state's fabric along the
 * DR path the last heavy sweep used, all in flight together (cfg.txn
 * window). Each answer is compared with what the state expects; the first
 * difference is kept as the reason. Nothing is written: PortStateChange is
 * left set for the heavy sweep, which clears it when it reads it.
 *
 * Cost: one SMP per switch (plus retries of lost ones), against a heavy
 * sweep's NodeInfo + NodeDescription + SwitchInfo + PortInfo per port.
 */
#include "sm/state.h"
#include "sm/mkey.h"
#include "lib/clock.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct light {
	const struct sm_cfg *cfg;
	struct sm_state *st;
	struct sm_light_summary *ls;
};

struct light_req {
	struct light *l;
	uint32_t node;
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

static void light_cb(struct sm_txn *e, const struct sm_txn_result *r, void *ctx)
{
	struct light_req *rq = ctx;
	struct light *l = rq->l;
	const struct sm_node *nd = &sm_state_fabric(l->st)->nodes[rq->node];
	const struct sm_lft_shadow *sh = &l->st->tab.shadow[rq->node];
	struct sm_switch_info si;
	struct sm_mad_err me;
	(void)e;

	if (r->status == -ECANCELED)
		return;
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

int sm_light_sweep(struct sm_transport *t, const struct sm_cfg *cfg, struct sm_state *state,
		   struct sm_light_summary *ls, char *err, size_t errlen)
{
	uint64_t t0 = sm_mono_us();
	struct light l = { .cfg = cfg, .st = state, .ls = ls };
	struct light_req *reqs = NULL;
	struct sm_txn *txn = NULL;
	int rc = 0;

	memset(ls, 0, sizeof(*ls));
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
	uint32_t n_nodes = f->n_nodes < state->tab.n_shadow ? f->n_nodes : state->tab.n_shadow;
	reqs = calloc((size_t)n_nodes + 1, sizeof(*reqs));
	if (!txn || !reqs) {
		snprintf(err, errlen, "out of memory (or bad MAD window settings)");
		rc = -ENOMEM;
		goto out;
	}
	sm_txn_set_unsolicited(txn, light_unsolicited, &l);
	for (uint32_t n = 0; n < n_nodes && !rc; n++) {
		struct sm_smp smp;
		if (f->nodes[n].type != SM_NODE_SWITCH)
			continue;
		reqs[n] = (struct light_req){ .l = &l, .node = n };
		sm_smp_init_dr(&smp, SM_METHOD_GET, SM_ATTR_SWITCH_INFO, 0, &state->tab.path[n]);
		smp.mkey = cfg->keys ? cfg->keys->mkey : 0;   /* as every SMP of the heavy sweep (sm_core_mkey) */
		rc = sm_txn_submit(txn, &smp, SM_PERMISSIVE_LID, light_cb, &reqs[n]);
		ls->switches++;
	}
	if (!rc)
		rc = sm_txn_run(txn);
	if (rc)
		snprintf(err, errlen, "light sweep failed: %s", strerror(-rc));
	ls->smps = sm_txn_stats(txn)->sent;
	ls->txn = *sm_txn_stats(txn);
out:
	sm_txn_free(txn);
	free(reqs);
	ls->seconds = (double)(sm_mono_us() - t0) / 1e6;
	if (rc)
		return rc;
	return ls->why[0] ? 1 : 0;
}
