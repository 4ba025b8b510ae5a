/* SPDX-License-Identifier: MIT */
/*
 * DOC: discovery of other SMs before the election decides (see sm.h)
 *
 * One struct sm_core with cfg->read_only: sm_core_submit() refuses every
 * Set, so the sweep (sweep.c) reads NodeInfo, NodeDescription, SwitchInfo
 * and PortInfo and writes nothing (PortStateChange stays set for the
 * master). Then one SubnGet(SMInfo) per IsSM port other than ours, by
 * directed route (LIDs may not be assigned yet): a CA or router port
 * through its own link (the path of the switch it hangs off plus that
 * switch's port), switch port 0 along the switch's path. A port without
 * an SM behind it costs the transaction engine's retries.
 * OpenSM does the same inside its heavy sweep (osm_port_info_rcv asks an
 * IsSM port for SMInfo); its state manager then elects (read for facts).
 */
#include "sm/core.h"
#include "sm/phases.h"
#include "sm/election.h"
#include "sm/sminfo.h"
#include "lib/clock.h"

#include <errno.h>
#include <string.h>

struct disc {
	struct sm_elect_peer *out;
	unsigned max, n;
	uint32_t answered;
};

/* SMInfo asked of us while we look: DISCOVERING (or what cfg says); anything else waits. */
static void on_unsolicited(struct sm_txn *e, const struct sm_smp *smp, const struct sm_mad_addr *from, void *ctx)
{
	const struct sm_core *c = ctx;
	struct sm_smp resp;
	struct sm_sminfo_self self = {
		.guid = c->t->info.port_guid, .sm_key = c->cfg->keys ? c->cfg->keys->sm_key : 0,
		.state = c->cfg->sminfo_state, .priority = c->cfg->sminfo_priority,
	};

	if (sm_sminfo_answer(smp, &self, &resp) == 1)
		(void)sm_txn_send_raw(e, &resp, smp->mgmt_class == SM_CLASS_SMI_DR ? SM_PERMISSIVE_LID :
				      (from ? from->slid : 0));
}

static void on_sminfo(struct sm_core *c, const struct sm_req *rq, const struct sm_txn_result *r)
{
	struct disc *d = c->pass;
	struct sm_sm_info si;
	uint32_t idx = sm_port_index(c->f, rq->node, rq->port);

	if (r->status || r->mad_status || sm_sm_info_decode(r->resp->data, &si, NULL))
		return;
	d->answered++;
	if (d->n == d->max)
		return;
	d->out[d->n++] = (struct sm_elect_peer){
		.guid = si.guid, .sm_key = si.sm_key, .act_count = si.act_count, .priority = si.priority,
		.state = si.state, .lid = c->tab.pi_ok[idx] ? c->tab.pi[idx].lid : 0,
	};
}

/* The DR path to port p of node n (the SMA that answers for it). */
static int port_path(const struct sm_core *c, uint32_t n, unsigned p, struct sm_dr_path *out)
{
	const struct sm_port *pt = sm_port(c->f, n, p);

	*out = c->tab.path[n];
	if (c->f->nodes[n].type == SM_NODE_SWITCH)
		return 0;
	if (pt->peer_node == SM_NONE)
		return -ENOENT;
	*out = c->tab.path[pt->peer_node];
	return sm_dr_path_push(out, pt->peer_port);
}

static int ask(struct sm_core *c, uint32_t *issm)
{
	struct sm_sm_info self = {
		.guid = c->t->info.port_guid, .sm_key = c->cfg->keys ? c->cfg->keys->sm_key : 0,
		.priority = c->cfg->sminfo_priority & 0x0F, .state = c->cfg->sminfo_state & 0x0F,
	};
	int rc = 0;

	for (uint32_t k = 0; k < c->f->n_ports && !rc; k++) {
		const struct sm_port *pt = &c->f->ports[k];
		struct sm_dr_path p;
		struct sm_smp smp;

		if (!(pt->flags & SM_PORT_F_ISSM) || !pt->guid || pt->guid == c->t->info.port_guid ||
		    (c->f->nodes[pt->node].type == SM_NODE_SWITCH && pt->num) || port_path(c, pt->node, pt->num, &p))
			continue;
		(*issm)++;
		struct sm_req *rq = sm_core_req(c, SM_RQ_SMINFO, pt->node, pt->num, on_sminfo);
		if (!rq)
			return -ENOMEM;
		sm_smp_init_dr(&smp, SM_METHOD_GET, SM_ATTR_SM_INFO, 0, &p);
		smp.mkey = sm_core_mkey_guid(c, pt->guid);   /* the answering port's own key */
		sm_sm_info_encode(&self, smp.data);            /* our SM_Key: an SM with it shows its own */
		rc = sm_core_submit(c, rq, &smp);
	}
	return rc ? rc : sm_core_run(c);
}

/* The LID-routed SMInfo Get to the master our own port names (ask_named_master). */
struct named {
	struct disc *d;
	uint16_t lid;
};

static void on_named(struct sm_txn *e, const struct sm_txn_result *r, void *ctx)
{
	struct named *nm = ctx;
	struct disc *d = nm->d;
	struct sm_sm_info si;

	(void)e;
	if (r->status || r->mad_status || sm_sm_info_decode(r->resp->data, &si, NULL))
		return;
	d->answered++;
	if (d->n < d->max)
		d->out[d->n++] = (struct sm_elect_peer){
			.guid = si.guid, .sm_key = si.sm_key, .act_count = si.act_count, .priority = si.priority,
			.state = si.state, .lid = nm->lid,
		};
}

/*
 * No SM answered by directed route, but our own port is ACTIVE and names a
 * master SM LID that is not ours: some SM brought it up. Ask that LID (the
 * LFTs it programmed carry the Get) before the election may call us master.
 * This is how a standby finds a master whose ports it cannot read by
 * directed route: derived M_Keys at protect bits 2-3 and no neighbour table
 * (a standby that never was master knows no GUID behind its own link).
 */
static int ask_named_master(struct sm_core *c, struct disc *d)
{
	struct named nm = { .d = d };
	struct sm_sm_info self = {
		.guid = c->t->info.port_guid, .sm_key = c->cfg->keys ? c->cfg->keys->sm_key : 0,
		.priority = c->cfg->sminfo_priority & 0x0F, .state = c->cfg->sminfo_state & 0x0F,
	};
	struct sm_smp smp;
	int rc;

	(void)sm_transport_refresh(c->t);
	nm.lid = c->t->info.sm_lid;
	if (d->n || c->t->info.state != SM_PORT_ACTIVE || !nm.lid || nm.lid == c->t->info.lid ||
	    nm.lid >= 0xC000)
		return 0;
	sm_smp_init_lid(&smp, SM_METHOD_GET, SM_ATTR_SM_INFO, 0);
	sm_sm_info_encode(&self, smp.data);
	rc = sm_txn_submit(c->txn, &smp, nm.lid, on_named, &nm);
	if (rc)
		return rc;
	while (sm_txn_pending(c->txn)) {
		rc = sm_txn_poll(c->txn, -1);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int sm_discover_sms(struct sm_transport *t, const struct sm_cfg *cfg, struct sm_elect_peer *out, unsigned max,
		    unsigned *n, struct sm_discovery *dd, char *err, size_t errlen)
{
	struct sm_cfg rcfg = *cfg;
	struct sm_core core, *c = &core;
	struct disc d = { .out = out, .max = max };
	uint64_t t0 = sm_mono_us();
	int rc;

	memset(dd, 0, sizeof(*dd));
	*n = 0;
	rcfg.read_only = true;
	rc = sm_core_init(c, t, &rcfg, NULL, err, errlen);
	if (rc)
		return rc;
	sm_txn_set_unsolicited(c->txn, on_unsolicited, c);
	c->pass = &d;
	c->f = sm_fabric_new();
	if (!c->f || sm_fabric_add_plane(c->f, c->plane, NULL)) {
		snprintf(err, errlen, "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	rc = sm_sweep_once(c, err, errlen);
	if (!rc)
		rc = ask(c, &dd->issm_ports);
	if (!rc)
		rc = ask_named_master(c, &d);
	if (rc && !err[0])
		snprintf(err, errlen, "asking the SMs found: %s", strerror(-rc));
	dd->nodes = c->f ? c->f->n_nodes : 0;
out:
	dd->answered = d.answered;
	dd->smps = sm_txn_stats(c->txn)->sent;
	dd->sets = c->sets_sent;
	*n = d.n;
	sm_txn_free(c->txn);
	c->txn = NULL;
	sm_core_reset(c);
	dd->seconds = (double)(sm_mono_us() - t0) / 1e6;
	return rc;
}
