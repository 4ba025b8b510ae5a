/* SPDX-License-Identifier: MIT */
/*
 * DOC: heavy sweep (directed-route discovery)
 *
 * Level-synchronous BFS. Level 0 is the SM's own node (empty DR path).
 * Answers to a level's NodeInfo probes add nodes and links; each new node
 * gets its NodeDescription, SwitchInfo and PortInfo requests at once. A
 * switch port that is up and whose peer is unknown becomes a probe of the
 * next level; the list is filtered again when the level ends, because by
 * then the port's peer may have been found from the other side. All
 * requests of a level are in flight together (bounded by the txn window).
 *
 * Consistency: every fact is cross-checked as it arrives (a port already
 * linked elsewhere, a GUID that changed type or port count, an entry port
 * that reads DOWN, a probe lost behind a port that then reads DOWN, a
 * PortInfo/SwitchInfo lost from a node we just reached). Any of these marks
 * the sweep changed; sm_bringup() then runs a new one on a new fabric.
 * Answers that cannot be true never get here (the transaction engine drops
 * them, sm_check.h); contradictions between answers also flag the GUID, and
 * a GUID flagged again in a later sweep is ignored for the rest of the
 * bring-up (a duplicate GUID stays; a cable moved mid-sweep does not).
 *
 * The incremental sweep is in delta.c, the GUID-order renumbering in
 * tables.c.
 */
#include "sm/phases.h"
#include "model/spare.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static void on_answer(struct sm_core *c, const struct sm_req *rq, const struct sm_txn_result *r);

/* An answer that never came (or could not be used): the sweep is incomplete (sm.h), whatever follows. */
static void lost(struct sm_core *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void lost(struct sm_core *c, const char *fmt, ...)
{
	va_list ap;
	if (c->lost++)
		return;
	va_start(ap, fmt);
	vsnprintf(c->lost_why, sizeof(c->lost_why), fmt, ap);
	va_end(ap);
}

static int submit_get(struct sm_core *c, uint16_t attr, uint32_t mod, const struct sm_dr_path *p,
		      uint8_t kind, uint32_t node, uint16_t port)
{
	return sm_core_get(c, attr, mod, p, kind, node, port, on_answer);
}

static int probe(struct sm_core *c, uint32_t parent, uint8_t port)
{
	struct sm_dr_path p;
	memset(&p, 0, sizeof(p));
	if (parent != SM_NONE) {
		p = c->tab.path[parent];
		if (sm_dr_path_push(&p, port)) {
			sm_core_note(c, "port %u of node 0x%016" PRIx64 " is beyond 63 hops; not explored",
				     port, c->f->nodes[parent].guid);
			return 0;
		}
	}
	return submit_get(c, SM_ATTR_NODE_INFO, 0, &p, SM_RQ_NODE_INFO, parent, port);
}

static int add_next(struct sm_core *c, uint32_t node, uint8_t port)
{
	if (c->n_next == c->cap_next) {
		uint32_t nc = c->cap_next ? c->cap_next * 2 : 1024;
		void *p = realloc(c->next, (size_t)nc * sizeof(*c->next));
		if (!p)
			return -ENOMEM;
		c->next = p;
		c->cap_next = nc;
	}
	c->next[c->n_next++] = (struct sm_probe){ .node = node, .port = port };
	return 0;
}


/* A new node answered NodeInfo through path p: add it and ask for the rest. */
static int new_node(struct sm_core *c, const struct sm_node_info *ni, const struct sm_dr_path *p)
{
	struct sm_fabric *f = c->f;
	int64_t n = sm_fabric_add_node(f, (enum sm_node_type)ni->node_type, ni->node_guid, ni->num_ports,
				       c->plane, ni->node_type == SM_NODE_SWITCH ? ni->port_guid : 0);
	int rc;

	if (n == -EEXIST) {
		sm_txn_flag_guid(c->txn, ni->port_guid, SM_CHK_GUID_DUP);
		sm_core_changed(c, "node 0x%016" PRIx64 ": port GUID 0x%016" PRIx64 " already seen on another node",
				ni->node_guid, ni->port_guid);
		return 0;
	}
	if (n < 0)
		return (int)n;
	rc = sm_core_grow(c);
	if (rc)
		return rc;
	struct sm_node *nd = &f->nodes[n];
	nd->sysimg_guid = ni->sys_guid;
	nd->vendor_id = ni->vendor_id;
	nd->device_id = ni->device_id;
	nd->revision = ni->revision;
	c->tab.path[n] = *p;
	c->tab.ni[n] = *ni;
	if (ni->node_type != SM_NODE_SWITCH) {
		rc = sm_fabric_set_port_guid(f, (uint32_t)n, ni->local_port_num, ni->port_guid);
		if (rc == -EEXIST) {
			sm_txn_flag_guid(c->txn, ni->port_guid, SM_CHK_GUID_DUP);
			sm_core_changed(c, "CA port GUID 0x%016" PRIx64 " already seen on another node",
					ni->port_guid);
			return 0;
		}
		if (rc)
			return rc;
	}
	/* port: a CA's SMA answers for the port the Get arrives on (its M_Key) */
	rc = submit_get(c, SM_ATTR_NODE_DESC, 0, p, SM_RQ_NODE_DESC, (uint32_t)n,
			ni->node_type == SM_NODE_SWITCH ? 0 : ni->local_port_num);
	if (rc)
		return rc;
	if (ni->node_type == SM_NODE_SWITCH) {
		rc = submit_get(c, SM_ATTR_SWITCH_INFO, 0, p, SM_RQ_SWITCH_INFO, (uint32_t)n, 0);
		for (unsigned q = 0; !rc && q <= ni->num_ports; q++)
			rc = submit_get(c, SM_ATTR_PORT_INFO, q, p, SM_RQ_PORT_INFO, (uint32_t)n, (uint16_t)q);
		return rc;
	}
	return submit_get(c, SM_ATTR_PORT_INFO, ni->local_port_num, p, SM_RQ_PORT_INFO, (uint32_t)n,
			  ni->local_port_num);
}

static void on_node_info(struct sm_core *c, const struct sm_req *rq, const struct sm_txn_result *r)
{
	struct sm_fabric *f = c->f;
	struct sm_node_info ni;
	struct sm_mad_err me;
	int rc;

	if (r->status || r->mad_status) {
		if (rq->node == SM_NONE) {
			sm_core_fail(c, r->status ? r->status : -EIO);
			return;
		}
		/* lost behind a port that read up: did the link go away? */
		struct sm_dr_path p = c->tab.path[rq->node];
		rc = submit_get(c, SM_ATTR_PORT_INFO, rq->port, &p, SM_RQ_PORT_RECHECK, rq->node, rq->port);
		if (rc)
			sm_core_fail(c, rc);
		return;
	}
	if (sm_node_info_decode(r->resp->data, &ni, &me)) {
		lost(c, "malformed NodeInfo behind node %u port %u", rq->node, rq->port);
		sm_core_changed(c, "malformed NodeInfo behind node %u port %u: %s", rq->node, rq->port,
				me.msg);
		return;
	}
	if (ni.node_type != SM_NODE_SWITCH && ni.local_port_num == 0) {
		/* only a switch has a port 0; the answer cannot be trusted */
		sm_core_changed(c, "NodeInfo of CA 0x%016" PRIx64 " claims it arrived on port 0", ni.node_guid);
		return;
	}
	unsigned sus = sm_txn_suspect(c->txn, ni.node_guid);
	if (sus == SM_CHK_OK)
		sus = sm_txn_suspect(c->txn, ni.port_guid);
	if (sus != SM_CHK_OK && rq->node != SM_NONE) {
		sm_txn_reject(c->txn, sus);
		sm_core_note(c, "node 0x%016" PRIx64 " behind node %u port %u ignored: it contradicted itself (%s)",
			     ni.node_guid, rq->node, rq->port, sm_check_kind_name(sus));
		return;
	}
	struct sm_dr_path p;
	memset(&p, 0, sizeof(p));
	if (rq->node != SM_NONE) {
		p = c->tab.path[rq->node];
		sm_dr_path_push(&p, (uint8_t)rq->port);
	}
	uint32_t n = sm_fabric_find_node(f, ni.node_guid);
	if (n == SM_NONE) {
		rc = new_node(c, &ni, &p);
		if (rc) {
			sm_core_fail(c, rc);
			return;
		}
		n = sm_fabric_find_node(f, ni.node_guid);
		if (n == SM_NONE)
			return; /* refused as inconsistent */
		if (rq->node == SM_NONE) {
			c->tab.sm_node = n;
			c->tab.sm_portnum = ni.local_port_num;
		}
	} else {
		struct sm_node *nd = &f->nodes[n];
		if (nd->type != ni.node_type || nd->nports != ni.num_ports) {
			sm_txn_flag_guid(c->txn, ni.node_guid,
					 nd->type != ni.node_type ? SM_CHK_NODE_TYPE : SM_CHK_NUM_PORTS);
			sm_core_changed(c, "node 0x%016" PRIx64 " changed from %s/%u ports to %s/%u ports",
					ni.node_guid, sm_node_type_str((enum sm_node_type)nd->type), nd->nports,
					sm_node_type_str((enum sm_node_type)ni.node_type), ni.num_ports);
			return;
		}
		if (nd->type != SM_NODE_SWITCH) {
			struct sm_port *pt = sm_port(f, n, ni.local_port_num);
			if (!pt->guid) {
				/* a second port of a CA we know */
				rc = sm_fabric_set_port_guid(f, n, ni.local_port_num, ni.port_guid);
				if (rc == -EEXIST) {
					sm_txn_flag_guid(c->txn, ni.port_guid, SM_CHK_GUID_DUP);
					sm_core_changed(c, "CA port GUID 0x%016" PRIx64 " seen twice", ni.port_guid);
					return;
				}
				if (!rc)
					rc = submit_get(c, SM_ATTR_PORT_INFO, ni.local_port_num, &p,
							SM_RQ_PORT_INFO, n, ni.local_port_num);
				if (rc) {
					sm_core_fail(c, rc);
					return;
				}
			} else if (pt->guid != ni.port_guid) {
				sm_txn_flag_guid(c->txn, ni.node_guid, SM_CHK_GUID_DUP);
				sm_core_changed(c, "port %u of node 0x%016" PRIx64 " changed GUID",
						ni.local_port_num, ni.node_guid);
				return;
			}
		} else if (sm_port(f, n, 0)->guid != ni.port_guid) {
			sm_txn_flag_guid(c->txn, ni.node_guid, SM_CHK_GUID_DUP);
			sm_core_changed(c, "switch 0x%016" PRIx64 " changed port GUID", ni.node_guid);
			return;
		}
	}
	if (rq->node == SM_NONE)
		return;
	rc = sm_fabric_link(f, rq->node, rq->port, n, ni.local_port_num);
	if (rc == -EBUSY) {
		sm_txn_flag_guid(c->txn, ni.node_guid, SM_CHK_GUID_DUP);
		sm_core_changed(c, "port %u of node 0x%016" PRIx64 " found linked to two peers", rq->port,
				f->nodes[rq->node].guid);
	} else if (rc)
		sm_core_changed(c, "bad link node 0x%016" PRIx64 " port %u -> 0x%016" PRIx64 " port %u",
				f->nodes[rq->node].guid, rq->port, ni.node_guid, ni.local_port_num);
}


/*
 * A port whose SMA holds an M_Key (switch port 0, CA ports) that is not
 * ours: protect bits 0 show the other key, protect bits 1 hide it (read 0)
 * from a Get with a wrong key. Either way its Sets will be dropped. Counted
 * and noted (the first few), never fatal here.
 */
/*
 * Derived keys with a previous secret (rotation): a port that shows the
 * previous secret's key, or hides its key from the current one, is reached
 * with the previous key from now on; the configuration phases then set it
 * to the current key (sm_set_keys). 1 if the port was taken so.
 */
static int mkey_rotate(struct sm_core *c, uint32_t n, unsigned port, const struct sm_port_info *pi)
{
	const struct sm_keys *k = c->cfg->keys;
	uint64_t guid = sm_keys_sma_guid(c->f, n, port);

	if (!sm_keys_has_prev(k) || pi->mkey == sm_keys_send(k, guid, 0))
		return 0;
	if (pi->mkey != sm_keys_send(k, guid, 1) && (pi->mkey || !pi->mkey_prot_bits))
		return 0;
	return sm_core_mkey_use_prev(c, guid);
}

static void check_mkey(struct sm_core *c, uint32_t n, unsigned port, const struct sm_port_info *pi)
{
	const struct sm_node *nd = &c->f->nodes[n];
	uint64_t ours = sm_core_mkey_at(c, n, port);

	c->mkey_violations += pi->mkey_violations;
	if (pi->mkey == ours || (!pi->mkey && !pi->mkey_prot_bits) || mkey_rotate(c, n, port, pi))
		return;
	if (c->mkey_foreign++ < 8)
		sm_core_note(c, "node 0x%016" PRIx64 " (%s) port %u is protected by an M_Key smd does not "
			     "hold (protect bits %u, key %s, %u violations counted): its Sets will be refused",
			     nd->guid, nd->desc, port, pi->mkey_prot_bits, pi->mkey ? "shown" : "hidden",
			     pi->mkey_violations);
}

static void on_port_info(struct sm_core *c, const struct sm_req *rq, const struct sm_txn_result *r)
{
	struct sm_fabric *f = c->f;
	const struct sm_node *nd = &f->nodes[rq->node];
	struct sm_port_info pi;
	struct sm_mad_err me;

	if (r->status || r->mad_status) {
		lost(c, "no PortInfo from node 0x%016" PRIx64 " port %u", nd->guid, rq->port);
		sm_core_changed(c, "no PortInfo from node 0x%016" PRIx64 " port %u (%s)", nd->guid, rq->port,
				r->status ? "lost" : "error status");
		return;
	}
	if (sm_port_info_decode(r->resp->data, &pi, &me)) {
		lost(c, "malformed PortInfo from node 0x%016" PRIx64 " port %u", nd->guid, rq->port);
		sm_core_changed(c, "malformed PortInfo from node 0x%016" PRIx64 " port %u: %s", nd->guid,
				rq->port, me.msg);
		return;
	}
	if (rq->kind == SM_RQ_PORT_RECHECK) {
		if (!sm_port_up(&pi))
			sm_core_changed(c, "link at node 0x%016" PRIx64 " port %u went down during the sweep",
					nd->guid, rq->port);
		else {
			c->unresponsive++;
			lost(c, "no NodeInfo behind node 0x%016" PRIx64 " port %u (the port is up)", nd->guid,
			     rq->port);
			sm_core_note(c, "no answer behind node 0x%016" PRIx64 " port %u (port is up)", nd->guid,
				     rq->port);
		}
		return;
	}
	sm_sweep_take_pi(c, rq->node, rq->port, &pi);
}

void sm_sweep_take_pi(struct sm_core *c, uint32_t node, unsigned port, const struct sm_port_info *pi)
{
	struct sm_fabric *f = c->f;
	const struct sm_node *nd = &f->nodes[node];
	uint32_t idx = sm_port_index(f, node, port);
	struct sm_port *pt = &f->ports[idx];

	c->tab.pi[idx] = *pi;
	c->tab.pi_ok[idx] = 1;
	if (port == 0 || nd->type != SM_NODE_SWITCH)
		check_mkey(c, node, port, pi);
	pt->state = pi->port_state;
	pt->phys_state = pi->phys_state;
	pt->width = pi->link_width_active;
	/* another SM's port: the daemon's election asks it for SMInfo (daemon/ha.c) */
	if (pi->cap_mask & SM_CAP_IS_SM)
		pt->flags |= SM_PORT_F_ISSM;
	else
		pt->flags &= (uint8_t)~SM_PORT_F_ISSM;
	if (pi->link_speed_ext_active) {
		pt->speed = pi->link_speed_ext_active;
		pt->flags |= SM_PORT_F_EXT_SPEED;
	} else {
		pt->speed = pi->link_speed_active;
	}
	if (port == 0)
		return;
	if (!sm_port_up(pi)) {
		if (pt->peer_node != SM_NONE)
			sm_core_changed(c, "node 0x%016" PRIx64 " port %u reads %s but was just reached through",
					nd->guid, port, sm_port_state_str(pi->port_state));
		return;
	}
	/* switches forward DR SMPs; of CAs only the SM's own node (hop 1 leaves by its port) */
	if (pt->peer_node == SM_NONE && (nd->type == SM_NODE_SWITCH ||
					 (node == c->tab.sm_node && port == c->tab.sm_portnum))) {
		int rc = add_next(c, node, (uint8_t)port);
		if (rc)
			sm_core_fail(c, rc);
	}
}

static void on_answer(struct sm_core *c, const struct sm_req *rq, const struct sm_txn_result *r)
{
	struct sm_mad_err me;

	switch (rq->kind) {
	case SM_RQ_NODE_INFO:
		on_node_info(c, rq, r);
		break;
	case SM_RQ_PORT_INFO:
	case SM_RQ_PORT_RECHECK:
		on_port_info(c, rq, r);
		break;
	case SM_RQ_NODE_DESC: {
		struct sm_node_desc d;
		if (r->status || r->mad_status) {
			sm_core_note(c, "no NodeDescription from node 0x%016" PRIx64, c->f->nodes[rq->node].guid);
			break;
		}
		sm_node_desc_decode(r->resp->data, &d, &me);
		sm_fabric_set_desc(c->f, rq->node, d.desc);
		break;
	}
	case SM_RQ_SWITCH_INFO: {
		struct sm_switch_info si;
		if (r->status || r->mad_status) {
			lost(c, "no SwitchInfo from switch 0x%016" PRIx64, c->f->nodes[rq->node].guid);
			sm_core_changed(c, "no SwitchInfo from switch 0x%016" PRIx64, c->f->nodes[rq->node].guid);
			break;
		}
		if (sm_switch_info_decode(r->resp->data, &si, &me)) {
			lost(c, "malformed SwitchInfo from switch 0x%016" PRIx64, c->f->nodes[rq->node].guid);
			sm_core_changed(c, "malformed SwitchInfo from 0x%016" PRIx64 ": %s",
					c->f->nodes[rq->node].guid, me.msg);
			break;
		}
		c->tab.si[rq->node] = si;
		c->tab.si_ok[rq->node] = 1;
		c->f->nodes[rq->node].lft_cap = si.lft_cap;
		if (si.enhanced_port0)
			c->f->nodes[rq->node].flags |= SM_NODE_F_ENHANCED_SP0;
		if (si.port_state_change && !c->cfg->read_only) {
			int rc = sm_core_clear_psc(c, rq->node, &si);
			if (rc)
				sm_core_fail(c, rc);
		}
		break;
	}
	default:
		break;
	}
}

/* The BFS from the probes queued in c->next, level after level, until no port is left to explore. */
static int explore(struct sm_core *c, unsigned *level)
{
	int rc = 0;
	while (!rc) {
		rc = sm_core_run(c);
		if (rc || !c->n_next)
			break;
		/* the next level: ports whose peer nobody has found yet */
		uint32_t n = c->n_next, submitted = 0;
		struct sm_probe *list = c->next;
		c->next = NULL;
		c->n_next = c->cap_next = 0;
		for (uint32_t i = 0; i < n && !rc; i++) {
			if (sm_port(c->f, list[i].node, list[i].port)->peer_node != SM_NONE)
				continue;
			rc = probe(c, list[i].node, list[i].port);
			submitted++;
		}
		free(list);
		++*level;
		if (!submitted)
			break;
	}
	return rc;
}

int sm_sweep_explore(struct sm_core *c)
{
	unsigned level = 0;
	return explore(c, &level);
}

int sm_sweep_get_pi(struct sm_core *c, uint32_t node, unsigned port)
{
	struct sm_dr_path p;
	sm_set_port_path(c, node, port, &p);
	return submit_get(c, SM_ATTR_PORT_INFO, port, &p, SM_RQ_PORT_INFO, node, (uint16_t)port);
}

int sm_sweep_once(struct sm_core *c, char *err, size_t errlen)
{
	int rc;
	unsigned level = 0;

	c->tab.sm_node = SM_NONE;
	c->n_next = 0;
	sm_spare_drop();   /* a heavy sweep grows its arrays: what the last sweep left is not reused */
	rc = probe(c, SM_NONE, 0);
	if (!rc)
		rc = explore(c, &level);
	if (rc) {
		if (c->tab.sm_node == SM_NONE)
			snprintf(err, errlen, "the SM's own node does not answer NodeInfo: %s%s", strerror(-rc),
				 rc == -ETIMEDOUT ? " (a port protected by an M_Key smd does not hold, with protect "
				 "bits 2 or 3, drops every SMP: check m_key and STATE_DIR/keys)" : "");
		else
			snprintf(err, errlen, "sweep failed at level %u: %s", level, strerror(-rc));
		return rc;
	}
	if (c->tab.sm_node == SM_NONE) {
		snprintf(err, errlen, "the SM's own node did not answer");
		return -EHOSTUNREACH;
	}
	return 0;
}
