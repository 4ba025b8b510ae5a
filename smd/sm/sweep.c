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
 */
#include "sm/sm_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static void sweep_cb(struct sm_txn *e, const struct sm_txn_result *r, void *ctx);

static int submit_get(struct sm_core *c, uint16_t attr, uint32_t mod, const struct sm_dr_path *p,
		      uint8_t kind, uint32_t node, uint16_t port)
{
	struct sm_req *rq = sm_core_req(c, kind, node, port);
	struct sm_smp smp;
	if (!rq)
		return -ENOMEM;
	sm_smp_init_dr(&smp, SM_METHOD_GET, attr, mod, p);
	smp.mkey = sm_core_mkey(c);
	return sm_txn_submit(c->txn, &smp, SM_PERMISSIVE_LID, sweep_cb, rq);
}

/*
 * IBA: SwitchInfo.PortStateChange is cleared by writing 1 to it. It is
 * cleared as soon as this sweep has read it set, so the light sweep only
 * sees changes that happen after this heavy sweep looked (a change in
 * between also sends a trap 128, which makes this sweep run again).
 * Everything else is written back as read.
 */
static int clear_psc(struct sm_core *c, uint32_t node, const struct sm_switch_info *si)
{
	struct sm_req *rq = sm_core_req(c, SM_RQ_SI_CLEAR, node, 0);
	struct sm_switch_info w = *si;
	struct sm_smp smp;
	if (!rq)
		return -ENOMEM;
	w.port_state_change = 1;
	sm_smp_init_dr(&smp, SM_METHOD_SET, SM_ATTR_SWITCH_INFO, 0, &c->path[node]);
	smp.mkey = sm_core_mkey(c);
	sm_switch_info_encode(&w, smp.data);
	c->psc_cleared++;
	return sm_txn_submit(c->txn, &smp, SM_PERMISSIVE_LID, sweep_cb, rq);
}

static int probe(struct sm_core *c, uint32_t parent, uint8_t port)
{
	struct sm_dr_path p;
	memset(&p, 0, sizeof(p));
	if (parent != SM_NONE) {
		p = c->path[parent];
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

static void fail(struct sm_core *c, int rc)
{
	if (!c->err)
		c->err = rc;
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
	c->path[n] = *p;
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
	rc = submit_get(c, SM_ATTR_NODE_DESC, 0, p, SM_RQ_NODE_DESC, (uint32_t)n, 0);
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
			fail(c, r->status ? r->status : -EIO);
			return;
		}
		/* lost behind a port that read up: did the link go away? */
		struct sm_dr_path p = c->path[rq->node];
		rc = submit_get(c, SM_ATTR_PORT_INFO, rq->port, &p, SM_RQ_PORT_RECHECK, rq->node, rq->port);
		if (rc)
			fail(c, rc);
		return;
	}
	if (sm_node_info_decode(r->resp->data, &ni, &me)) {
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
		p = c->path[rq->node];
		sm_dr_path_push(&p, (uint8_t)rq->port);
	}
	uint32_t n = sm_fabric_find_node(f, ni.node_guid);
	if (n == SM_NONE) {
		rc = new_node(c, &ni, &p);
		if (rc) {
			fail(c, rc);
			return;
		}
		n = sm_fabric_find_node(f, ni.node_guid);
		if (n == SM_NONE)
			return; /* refused as inconsistent */
		if (rq->node == SM_NONE) {
			c->sm_node = n;
			c->sm_portnum = ni.local_port_num;
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
					fail(c, rc);
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

static int port_up(const struct sm_port_info *pi)
{
	return pi->port_state >= SM_PORT_INIT;
}

/*
 * A port whose SMA holds an M_Key (switch port 0, CA ports) that is not
 * ours: protect bits 0 show the other key, protect bits 1 hide it (read 0)
 * from a Get with a wrong key. Either way its Sets will be dropped. Counted
 * and noted (the first few), never fatal here.
 */
static void check_mkey(struct sm_core *c, const struct sm_node *nd, unsigned port,
		       const struct sm_port_info *pi)
{
	uint64_t ours = sm_core_mkey(c);

	c->mkey_violations += pi->mkey_violations;
	if (pi->mkey == ours || (!pi->mkey && !pi->mkey_prot_bits))
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
		sm_core_changed(c, "no PortInfo from node 0x%016" PRIx64 " port %u (%s)", nd->guid, rq->port,
				r->status ? "lost" : "error status");
		return;
	}
	if (sm_port_info_decode(r->resp->data, &pi, &me)) {
		sm_core_changed(c, "malformed PortInfo from node 0x%016" PRIx64 " port %u: %s", nd->guid,
				rq->port, me.msg);
		return;
	}
	uint32_t idx = sm_port_index(f, rq->node, rq->port);
	struct sm_port *pt = &f->ports[idx];
	if (rq->kind == SM_RQ_PORT_RECHECK) {
		if (!port_up(&pi))
			sm_core_changed(c, "link at node 0x%016" PRIx64 " port %u went down during the sweep",
					nd->guid, rq->port);
		else {
			c->unresponsive++;
			sm_core_note(c, "no answer behind node 0x%016" PRIx64 " port %u (port is up)", nd->guid,
				     rq->port);
		}
		return;
	}
	c->pi[idx] = pi;
	c->pi_ok[idx] = 1;
	if (rq->port == 0 || nd->type != SM_NODE_SWITCH)
		check_mkey(c, nd, rq->port, &pi);
	pt->state = pi.port_state;
	pt->phys_state = pi.phys_state;
	pt->width = pi.link_width_active;
	if (pi.link_speed_ext_active) {
		pt->speed = pi.link_speed_ext_active;
		pt->flags |= SM_PORT_F_EXT_SPEED;
	} else {
		pt->speed = pi.link_speed_active;
	}
	if (rq->port == 0)
		return;
	if (!port_up(&pi)) {
		if (pt->peer_node != SM_NONE)
			sm_core_changed(c, "node 0x%016" PRIx64 " port %u reads %s but was just reached through",
					nd->guid, rq->port, sm_port_state_str(pi.port_state));
		return;
	}
	/* switches forward DR SMPs; of CAs only the SM's own node (hop 1 leaves by its port) */
	if (pt->peer_node == SM_NONE && (nd->type == SM_NODE_SWITCH ||
					 (rq->node == c->sm_node && rq->port == c->sm_portnum))) {
		int rc = add_next(c, rq->node, (uint8_t)rq->port);
		if (rc)
			fail(c, rc);
	}
}

/* ---- incremental sweep ---- */

static void delta_fallback(struct sm_core *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void delta_fallback(struct sm_core *c, const char *fmt, ...)
{
	va_list ap;
	if (c->delta_fallback++)
		return;
	va_start(ap, fmt);
	vsnprintf(c->delta_why, sizeof(c->delta_why), fmt, ap);
	va_end(ap);
}

static void on_delta_si(struct sm_core *c, const struct sm_req *rq, const struct sm_txn_result *r)
{
	const struct sm_node *nd = &c->f->nodes[rq->node];
	struct sm_switch_info si;
	struct sm_mad_err me;
	int rc = 0;

	if (r->status || r->mad_status) {
		c->delta_lost[rq->node] = 1;   /* its path may cross the link that went down: see fix_paths() */
		return;
	}
	if (sm_switch_info_decode(r->resp->data, &si, &me)) {
		delta_fallback(c, "switch 0x%016" PRIx64 ": malformed SwitchInfo: %s", nd->guid, me.msg);
		return;
	}
	if (si.lft_top != c->si[rq->node].lft_top) {
		delta_fallback(c, "switch 0x%016" PRIx64 " LinearFDBTop %u, was %u (reset?)", nd->guid, si.lft_top,
			       c->si[rq->node].lft_top);
		return;
	}
	c->si[rq->node] = si;
	if (!si.port_state_change)
		return;
	/* something moved at this switch: clear the flag first, then look at every port */
	c->delta_switches_read++;
	rc = clear_psc(c, rq->node, &si);
	/* port 0 too: its LID (and so the switch's) is compared by the LID phase */
	for (unsigned p = 0; !rc && p <= nd->nports; p++)
		rc = submit_get(c, SM_ATTR_PORT_INFO, p, &c->path[rq->node], SM_RQ_DELTA_PI, rq->node, (uint16_t)p);
	if (rc)
		fail(c, rc);
}

/*
 * A port of a switch that flagged a change. Only a link that went away is
 * patched; a port that came up, bounced (INIT where it was ACTIVE) or
 * changed otherwise needs probing: the full sweep does that.
 */
static void on_delta_pi(struct sm_core *c, const struct sm_req *rq, const struct sm_txn_result *r)
{
	struct sm_fabric *f = c->f;
	const struct sm_node *nd = &f->nodes[rq->node];
	struct sm_port_info pi;
	struct sm_mad_err me;

	if (r->status || r->mad_status || sm_port_info_decode(r->resp->data, &pi, &me)) {
		delta_fallback(c, "no PortInfo from switch 0x%016" PRIx64 " port %u", nd->guid, rq->port);
		return;
	}
	uint32_t idx = sm_port_index(f, rq->node, rq->port);
	struct sm_port *pt = &f->ports[idx];
	const struct sm_port_info *old = &c->pi[idx];
	int was_up = c->pi_ok[idx] && port_up(old), up = port_up(&pi);

	if (rq->port == 0) {
		c->pi[idx] = pi;
		c->pi_ok[idx] = 1;
		return;
	}

	if (up && (!was_up || pi.port_state != old->port_state)) {
		delta_fallback(c, "switch 0x%016" PRIx64 " port %u is %s (was %s)", nd->guid, rq->port,
			       sm_port_state_str(pi.port_state),
			       c->pi_ok[idx] ? sm_port_state_str(old->port_state) : "unknown");
		return;
	}
	c->pi[idx] = pi;
	c->pi_ok[idx] = 1;
	pt->state = pi.port_state;
	pt->phys_state = pi.phys_state;
	if (!up && pt->peer_node != SM_NONE) {
		uint32_t pn = pt->peer_node;
		struct sm_port *pp = sm_port(f, pn, pt->peer_port);
		/* the far end is down too (a CA's port is not read: it falls out below) */
		pp->state = SM_PORT_DOWN;
		c->pi[pp - f->ports].port_state = SM_PORT_DOWN;
		sm_fabric_unlink(f, rq->node, rq->port);
		c->delta_links_down++;
	}
}

/* Does DR path p, walked over c->f's links from the SM's node, still lead to node n? */
static int path_holds(const struct sm_core *c, const struct sm_dr_path *p, uint32_t n)
{
	uint32_t x = c->sm_node;
	for (unsigned i = 1; i <= p->cnt; i++) {
		const struct sm_port *pt = sm_fabric_port_checked(c->f, x, p->hops[i]);
		if (!pt || pt->peer_node == SM_NONE)
			return 0;
		x = pt->peer_node;
	}
	return x == n;
}

/*
 * Give every node whose DR path crosses a link that went down a new path
 * (BFS over what is left, forwarding through switches and the SM's own
 * port). Returns how many lost switches got a new one (worth asking
 * again), or -ENOMEM.
 */
static int fix_paths(struct sm_core *c)
{
	const struct sm_fabric *f = c->f;
	struct sm_dr_path *bp = calloc((size_t)f->n_nodes + 1, sizeof(*bp));
	uint32_t *queue = malloc(((size_t)f->n_nodes + 1) * sizeof(*queue));
	uint8_t *seen = calloc((size_t)f->n_nodes + 1, 1);
	uint32_t head = 0, tail = 0;
	int retry = 0;

	if (!bp || !queue || !seen) {
		retry = -ENOMEM;
		goto out;
	}
	if (c->sm_node < f->n_nodes) {
		seen[c->sm_node] = 1;
		queue[tail++] = c->sm_node;
	}
	while (head < tail) {
		uint32_t n = queue[head++];
		const struct sm_node *nd = &f->nodes[n];
		for (unsigned p = 1; p <= nd->nports; p++) {
			if (nd->type != SM_NODE_SWITCH && !(n == c->sm_node && p == c->sm_portnum))
				continue;
			uint32_t pn = sm_port(f, n, p)->peer_node;
			if (pn == SM_NONE || seen[pn])
				continue;
			bp[pn] = bp[n];
			if (sm_dr_path_push(&bp[pn], (uint8_t)p))
				continue;
			seen[pn] = 1;
			queue[tail++] = pn;
		}
	}
	for (uint32_t n = 0; n < f->n_nodes; n++) {
		if (!seen[n] || path_holds(c, &c->path[n], n))
			continue;
		c->path[n] = bp[n];
		if (c->delta_lost[n])
			retry++;
	}
out:
	free(bp);
	free(queue);
	free(seen);
	return retry;
}

int sm_sweep_delta(struct sm_core *c, char *err, size_t errlen)
{
	const struct sm_state *st = c->state;
	uint8_t *keep = NULL;
	uint32_t *queue = NULL;
	int rc;

	c->delta_fallback = 0;
	c->delta_why[0] = '\0';
	c->f = sm_fabric_new();
	if (!c->f || sm_fabric_append(c->f, st->f, NULL) || (rc = sm_core_grow(c))) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	/* an append into an empty fabric keeps node and port indices: the side tables line up */
	if (c->f->n_nodes != st->n_nodes || c->f->n_ports != st->f->n_ports) {
		snprintf(c->delta_why, sizeof(c->delta_why), "the state does not match its fabric");
		return 1;
	}
	memcpy(c->path, st->path, (size_t)st->n_nodes * sizeof(*c->path));
	memcpy(c->si, st->si, (size_t)st->n_nodes * sizeof(*c->si));
	memcpy(c->si_ok, st->si_ok, st->n_nodes);
	memcpy(c->pi, st->pi, (size_t)st->f->n_ports * sizeof(*c->pi));
	memcpy(c->pi_ok, st->pi_ok, st->f->n_ports);
	c->sm_node = st->sm_node;
	c->sm_portnum = st->sm_portnum;

	c->delta_lost = calloc((size_t)c->f->n_nodes + 1, 1);
	if (!c->delta_lost) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	/*
	 * Level by level (DR hop count from the SM): a link that went down is
	 * found at its nearer end's level (that switch flags PortStateChange,
	 * its ports are read, the link removed) and the paths crossing it are
	 * replaced before the next level is asked, so no SMP is sent into a
	 * dead link. A switch still silent along a path that holds is gone or
	 * sick: the full sweep finds out.
	 */
	uint8_t *asked = calloc((size_t)c->f->n_nodes + 1, 1);
	if (!asked) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rc = 0;
	for (unsigned level = 0; level <= SM_DR_MAX_HOPS && !rc && !c->delta_fallback; level++) {
		unsigned n_asked = 0;
		for (uint32_t n = 0; n < c->f->n_nodes && !rc; n++) {
			if (c->f->nodes[n].type != SM_NODE_SWITCH || asked[n] || c->path[n].cnt != level)
				continue;
			asked[n] = 1;
			n_asked++;
			rc = submit_get(c, SM_ATTR_SWITCH_INFO, 0, &c->path[n], SM_RQ_DELTA_SI, n, 0);
		}
		if (!n_asked || rc)
			continue;
		rc = sm_core_run(c);
		if (rc || c->delta_fallback)
			break;
		int moved = fix_paths(c);
		if (moved < 0) {
			rc = moved;
			break;
		}
		for (uint32_t n = 0; n < c->f->n_nodes; n++) {
			if (!c->delta_lost[n])
				continue;
			if (!path_holds(c, &c->path[n], n) || c->path[n].cnt == level) {
				delta_fallback(c, "switch 0x%016" PRIx64 " did not answer SwitchInfo",
					       c->f->nodes[n].guid);
				break;
			}
			/* lost on a path that crossed a dead link: asked again at its new level */
			c->delta_lost[n] = 0;
			asked[n] = 0;
		}
	}
	for (uint32_t n = 0; n < c->f->n_nodes && !rc && !c->delta_fallback; n++)
		if (c->f->nodes[n].type == SM_NODE_SWITCH && !asked[n])
			delta_fallback(c, "switch 0x%016" PRIx64 " is no longer reachable", c->f->nodes[n].guid);
	free(asked);
	if (rc) {
		snprintf(err, errlen, "incremental sweep failed: %s", strerror(-rc));
		return rc;
	}
	if (c->delta_fallback)
		return 1;

	/* what the SM still reaches */
	const struct sm_fabric *f = c->f;
	keep = calloc((size_t)f->n_nodes + 1, 1);
	queue = malloc(((size_t)f->n_nodes + 1) * sizeof(*queue));
	if (!keep || !queue) {
		rc = -ENOMEM;
		goto out;
	}
	uint32_t head = 0, tail = 0;
	if (c->sm_node < f->n_nodes) {
		keep[c->sm_node] = 1;
		queue[tail++] = c->sm_node;
	}
	while (head < tail) {
		uint32_t n = queue[head++];
		for (unsigned p = 1; p <= f->nodes[n].nports; p++) {
			uint32_t pn = sm_port(f, n, p)->peer_node;
			if (pn != SM_NONE && !keep[pn]) {
				keep[pn] = 1;
				queue[tail++] = pn;
			}
		}
	}
	rc = sm_sweep_canonicalize(c, keep);
out:
	free(keep);
	free(queue);
	if (rc)
		snprintf(err, errlen, "incremental sweep: %s", strerror(-rc));
	return rc;
}

static void sweep_cb(struct sm_txn *e, const struct sm_txn_result *r, void *ctx)
{
	struct sm_req *rq = ctx;
	struct sm_core *c = rq->c;
	struct sm_mad_err me;
	(void)e;

	if (r->status == -ECANCELED)
		return;
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
			sm_core_changed(c, "no SwitchInfo from switch 0x%016" PRIx64, c->f->nodes[rq->node].guid);
			break;
		}
		if (sm_switch_info_decode(r->resp->data, &si, &me)) {
			sm_core_changed(c, "malformed SwitchInfo from 0x%016" PRIx64 ": %s",
					c->f->nodes[rq->node].guid, me.msg);
			break;
		}
		c->si[rq->node] = si;
		c->si_ok[rq->node] = 1;
		c->f->nodes[rq->node].lft_cap = si.lft_cap;
		if (si.enhanced_port0)
			c->f->nodes[rq->node].flags |= SM_NODE_F_ENHANCED_SP0;
		if (si.port_state_change) {
			int rc = clear_psc(c, rq->node, &si);
			if (rc)
				fail(c, rc);
		}
		break;
	}
	case SM_RQ_DELTA_SI:
		on_delta_si(c, rq, r);
		break;
	case SM_RQ_DELTA_PI:
		on_delta_pi(c, rq, r);
		break;
	case SM_RQ_SI_CLEAR: {
		struct sm_switch_info si;
		if (r->status || r->mad_status || sm_switch_info_decode(r->resp->data, &si, &me)) {
			sm_core_note(c, "switch 0x%016" PRIx64 ": clearing PortStateChange failed (%s)",
				     c->f->nodes[rq->node].guid, r->status ? "lost" : "error status or bad answer");
			break;
		}
		c->si[rq->node] = si;
		break;
	}
	default:
		break;
	}
}

int sm_sweep_once(struct sm_core *c, char *err, size_t errlen)
{
	int rc;
	unsigned level = 0;

	c->sm_node = SM_NONE;
	c->n_next = 0;
	rc = probe(c, SM_NONE, 0);
	while (!rc) {
		rc = sm_core_run(c);
		if (rc)
			break;
		if (!c->n_next)
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
		level++;
		if (!submitted)
			break;
	}
	if (rc) {
		if (c->sm_node == SM_NONE)
			snprintf(err, errlen, "the SM's own node does not answer NodeInfo: %s%s", strerror(-rc),
				 rc == -ETIMEDOUT ? " (a port protected by an M_Key smd does not hold, with protect "
				 "bits 2 or 3, drops every SMP: check m_key and STATE_DIR/keys)" : "");
		else
			snprintf(err, errlen, "sweep failed at level %u: %s", level, strerror(-rc));
		return rc;
	}
	if (c->sm_node == SM_NONE) {
		snprintf(err, errlen, "the SM's own node did not answer");
		return -EHOSTUNREACH;
	}
	return 0;
}

static int cmp_node_guid(const void *a, const void *b, void *arg)
{
	const struct sm_fabric *f = arg;
	uint64_t x = f->nodes[*(const uint32_t *)a].guid, y = f->nodes[*(const uint32_t *)b].guid;
	return x < y ? -1 : x > y;
}

/*
 * Renumber the swept fabric in node-GUID order. BFS adds nodes in the order
 * answers arrive, which depends on timing and on the window; engines may
 * break ties by node index, so without this two runs over the same fabric
 * could route differently and rewrite LFT blocks for nothing.
 */
int sm_sweep_canonicalize(struct sm_core *c, const uint8_t *keep)
{
	struct sm_fabric *f = c->f, *g = NULL;
	uint32_t *order = NULL, *newidx = NULL;
	struct sm_dr_path *path = NULL;
	struct sm_switch_info *si = NULL;
	uint8_t *si_ok = NULL, *pi_ok = NULL;
	struct sm_port_info *pi = NULL;
	int rc = -ENOMEM;

	order = malloc(((size_t)f->n_nodes + 1) * sizeof(*order));
	newidx = malloc(((size_t)f->n_nodes + 1) * sizeof(*newidx));
	g = sm_fabric_new();
	if (!order || !newidx || !g)
		goto out;
	uint32_t nk = 0;
	for (uint32_t n = 0; n < f->n_nodes; n++) {
		newidx[n] = SM_NONE;
		if (!keep || keep[n])
			order[nk++] = n;
	}
	qsort_r(order, nk, sizeof(*order), cmp_node_guid, f);
	rc = sm_fabric_reserve(g, f->n_nodes, f->n_ports);
	if (!rc)
		rc = sm_fabric_add_plane(g, c->plane, f->planes[c->plane].name);
	for (uint32_t i = 0; i < nk && !rc; i++) {
		const struct sm_node *nd = &f->nodes[order[i]];
		int64_t n = sm_fabric_add_node(g, (enum sm_node_type)nd->type, nd->guid, nd->nports, nd->plane,
					       nd->type == SM_NODE_SWITCH ? f->ports[nd->port0].guid : 0);
		if (n < 0) {
			rc = (int)n;
			break;
		}
		newidx[order[i]] = (uint32_t)n;
		struct sm_node *m = &g->nodes[n];
		uint32_t port0 = m->port0;
		*m = *nd;
		m->port0 = port0;
		for (unsigned p = 0; p <= nd->nports && !rc; p++) {
			const struct sm_port *op = &f->ports[nd->port0 + p];
			struct sm_port *np = &g->ports[port0 + p];
			if (nd->type != SM_NODE_SWITCH && p && op->guid)
				rc = sm_fabric_set_port_guid(g, (uint32_t)n, p, op->guid);
			np->state = op->state;
			np->phys_state = op->phys_state;
			np->width = op->width;
			np->speed = op->speed;
			np->flags = op->flags;
		}
	}
	if (rc)
		goto out;
	for (uint32_t n = 0; n < f->n_nodes && !rc; n++) {
		const struct sm_node *nd = &f->nodes[n];
		if (newidx[n] == SM_NONE)
			continue;
		for (unsigned p = 1; p <= nd->nports && !rc; p++) {
			const struct sm_port *op = &f->ports[nd->port0 + p];
			if (op->peer_node != SM_NONE && newidx[op->peer_node] != SM_NONE)
				rc = sm_fabric_link(g, newidx[n], p, newidx[op->peer_node], op->peer_port);
		}
	}
	if (rc)
		goto out;
	rc = -ENOMEM;
	path = calloc((size_t)g->n_nodes + 1, sizeof(*path));
	si = calloc((size_t)g->n_nodes + 1, sizeof(*si));
	si_ok = calloc((size_t)g->n_nodes + 1, 1);
	pi = calloc((size_t)g->n_ports + 1, sizeof(*pi));
	pi_ok = calloc((size_t)g->n_ports + 1, 1);
	if (!path || !si || !si_ok || !pi || !pi_ok)
		goto out;
	for (uint32_t n = 0; n < f->n_nodes; n++) {
		uint32_t m = newidx[n];
		if (m == SM_NONE)
			continue;
		path[m] = c->path[n];
		si[m] = c->si[n];
		si_ok[m] = c->si_ok[n];
		for (unsigned p = 0; p <= f->nodes[n].nports; p++) {
			pi[g->nodes[m].port0 + p] = c->pi[f->nodes[n].port0 + p];
			pi_ok[g->nodes[m].port0 + p] = c->pi_ok[f->nodes[n].port0 + p];
		}
	}
	free(c->path);
	free(c->si);
	free(c->si_ok);
	free(c->pi);
	free(c->pi_ok);
	c->path = path;
	c->si = si;
	c->si_ok = si_ok;
	c->pi = pi;
	c->pi_ok = pi_ok;
	c->cap_nodes = g->n_nodes + 1;
	c->cap_ports = g->n_ports + 1;
	path = NULL;
	si = NULL;
	si_ok = NULL;
	pi = NULL;
	pi_ok = NULL;
	if (c->sm_node != SM_NONE)
		c->sm_node = newidx[c->sm_node];
	sm_fabric_free(c->f);
	c->f = g;
	g = NULL;
	rc = 0;
out:
	free(order);
	free(newidx);
	free(path);
	free(si);
	free(si_ok);
	free(pi);
	free(pi_ok);
	sm_fabric_free(g);
	return rc;
}
