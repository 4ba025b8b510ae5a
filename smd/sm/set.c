/* SPDX-License-Identifier: MIT */
/*
 * DOC: the Sets of the LID, program and activate phases (phases.h)
 *
 * Every Set is decided by its phase from what the sweep read; here it is
 * addressed, sent, and its answer (which shows what the SMA now holds)
 * written back into the sweep tables and the fabric, so the next phase
 * and the next bring-up work from what is really there.
 */
#include "sm/phases.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>


/*
 * The DR path to use for an SMP about port p of node n. A switch answers for
 * any of its ports whichever port the SMP came in by; a CA answers for the
 * port it arrives on (ibsim refuses a PortInfo Set for another port), so a
 * CA port is addressed through its own link: the peer's path plus the
 * peer's port (the peer is a switch, or the SM's own node).
 */
void sm_set_port_path(const struct sm_core *c, uint32_t n, unsigned p, struct sm_dr_path *out)
{
	const struct sm_node *nd = &c->f->nodes[n];
	const struct sm_port *pt = sm_port(c->f, n, p);
	*out = c->tab.path[n];
	if (nd->type == SM_NODE_SWITCH || p == 0 || pt->peer_node == SM_NONE ||
	    (n == c->tab.sm_node && p == c->tab.sm_portnum))
		return;
	struct sm_dr_path q = c->tab.path[pt->peer_node];
	if (sm_dr_path_push(&q, pt->peer_port) == 0)
		*out = q;
}

static void on_set(struct sm_core *c, const struct sm_req *rq, const struct sm_txn_result *r);

int sm_set_submit(struct sm_core *c, uint16_t attr, uint32_t mod, uint32_t node, const uint8_t *data,
		  uint8_t kind, uint16_t port, uint8_t aux)
{
	struct sm_req *rq = sm_core_req(c, kind, node, port, on_set);
	struct sm_dr_path path;
	struct sm_smp smp;
	if (!rq)
		return -ENOMEM;
	rq->aux = aux;
	if (attr == SM_ATTR_PORT_INFO)
		sm_set_port_path(c, node, port, &path);
	else
		path = c->tab.path[node];
	sm_smp_init_dr(&smp, SM_METHOD_SET, attr, mod, &path);
	smp.mkey = sm_core_mkey_at(c, node, attr == SM_ATTR_PORT_INFO ? port : 0);
	memcpy(smp.data, data, SM_SMP_DATA_SIZE);
	return sm_core_submit(c, rq, &smp);
}

int sm_set_lft_get(struct sm_core *c, uint32_t node, uint16_t block)
{
	return sm_core_get(c, SM_ATTR_LFT, block, &c->tab.path[node], SM_RQ_LFT_GET, node, block, on_set);
}

static void on_set(struct sm_core *c, const struct sm_req *rq, const struct sm_txn_result *r)
{
	struct sm_mad_err me;

	if (rq->kind == SM_RQ_PI_SET_STATE && !r->status && r->mad_status && r->tries > 1 &&
	    !(rq->aux & 0x80)) {
		/*
		 * A retried state Set refused: the first try may have been applied
		 * and only its answer lost, and an SMA refuses the same transition
		 * twice (ibsim: ARMED -> ARMED). Read the port back before calling
		 * it a failure (aux 0x80: this is the read-back).
		 */
		struct sm_req *v = sm_core_req(c, SM_RQ_PI_SET_STATE, rq->node, rq->port, on_set);
		struct sm_dr_path path;
		struct sm_smp smp;
		if (v) {
			v->aux = rq->aux | 0x80;
			sm_set_port_path(c, rq->node, rq->port, &path);
			sm_smp_init_dr(&smp, SM_METHOD_GET, SM_ATTR_PORT_INFO, rq->port, &path);
			smp.mkey = sm_core_mkey_at(c, rq->node, rq->port);
			if (!sm_core_submit(c, v, &smp))
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
		if (sm_set_take_pi(c, rq->node, rq->port, r->resp->data, &pi))
			break;
		c->f->ports[idx].state = pi.port_state;
		if ((rq->aux & 0x80) && pi.port_state != (rq->aux & 0x7F)) {
			c->set_errors++;
			sm_core_note(c, "node 0x%016" PRIx64 " port %u reads %s after a refused Set to %s",
				     c->f->nodes[rq->node].guid, rq->port, sm_port_state_str(pi.port_state),
				     sm_port_state_str(rq->aux & 0x7F));
		}
		/* the answer shows what the port now holds: an SMA without M_Key support drops the key */
		uint64_t want = sm_keys_set(c->cfg->keys, sm_keys_sma_guid(c->f, rq->node, rq->port));
		if (rq->kind == SM_RQ_PI_SET_LID && want && pi.mkey != want && !c->mkey_unkept++)
			sm_core_note(c, "node 0x%016" PRIx64 " (%s) port %u does not keep the M_Key it was set "
				     "(no M_Key support in its SMA?): it is not protected",
				     c->f->nodes[rq->node].guid, c->f->nodes[rq->node].desc, rq->port);
		break;
	}
	case SM_RQ_SI_SET: {
		struct sm_switch_info si;
		if (!sm_switch_info_decode(r->resp->data, &si, &me))
			c->tab.si[rq->node] = si;
		if (c->tab.shadow)
			c->tab.shadow[rq->node].top = c->tab.si[rq->node].lft_top;
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
		if (sm_lft_shadow_store(&c->tab.shadow[rq->node], rq->port, b.port) && !c->err)
			c->err = -ENOMEM;
		break;
	}
	default:
		break;
	}
}

int sm_set_take_pi(struct sm_core *c, uint32_t node, unsigned port, const uint8_t *data, struct sm_port_info *pi)
{
	struct sm_mad_err me;
	if (sm_port_info_decode(data, pi, &me)) {
		c->set_errors++;
		sm_core_note(c, "PortInfo Set on node 0x%016" PRIx64 " port %u: bad answer: %s",
			     c->f->nodes[node].guid, port, me.msg);
		return -EBADMSG;
	}
	c->tab.pi[sm_port_index(c->f, node, port)] = *pi;
	return 0;
}

/*
 * cfg->keys is also given for an SM_Key alone (SMInfo): PortInfo's M_Key
 * fields are managed only when M_Key is (sm_keys_active), so a port whose
 * SMA keeps its own lease period (ibsim's) is not rewritten every sweep.
 */
void sm_set_keys(const struct sm_core *c, uint32_t n, unsigned p, struct sm_port_info_set *s)
{
	const struct sm_keys *k = c->cfg->keys;
	if (!sm_keys_active(k))
		return;
	s->mkey = sm_keys_set(k, sm_keys_sma_guid(c->f, n, p));
	s->mkey_prot_bits = k->protect_bits;
	s->mkey_lease_period = k->lease_period;
}

int sm_set_keys_ok(const struct sm_core *c, uint32_t n, unsigned p, const struct sm_port_info *cp)
{
	const struct sm_keys *k = c->cfg->keys;
	return !sm_keys_active(k) || (cp->mkey == sm_keys_set(k, sm_keys_sma_guid(c->f, n, p)) && cp->mkey_prot_bits == k->protect_bits &&
		      cp->mkey_lease_period == k->lease_period);
}
