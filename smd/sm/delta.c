/* SPDX-License-Identifier: MIT */
/*
 * DOC: incremental sweep (sm_sweep_delta(), phases.h)
 *
 * Starts from the state's fabric and sweep tables (a copy: the state stays
 * as it was until the bring-up ends) and asks, level by level of DR hop
 * count, SwitchInfo of every known switch; the ports of a switch that flags
 * PortStateChange are read (after clearing the flag). A link that went down
 * is removed and the paths that crossed it replaced; anything else (a port
 * that came up or bounced, a switch silent or reset) makes the caller run
 * the full sweep instead.
 */
#include "sm/phases.h"
#include "sm/state.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static void on_delta_pi(struct sm_core *c, const struct sm_req *rq, const struct sm_txn_result *r);

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
		c->delta_lost[rq->node] = 1;   /* its path may cross the link that went down: see sm_sweep_repath() */
		return;
	}
	if (sm_switch_info_decode(r->resp->data, &si, &me)) {
		delta_fallback(c, "switch 0x%016" PRIx64 ": malformed SwitchInfo: %s", nd->guid, me.msg);
		return;
	}
	if (si.lft_top != c->tab.si[rq->node].lft_top) {
		delta_fallback(c, "switch 0x%016" PRIx64 " LinearFDBTop %u, was %u (reset?)", nd->guid, si.lft_top,
			       c->tab.si[rq->node].lft_top);
		return;
	}
	c->tab.si[rq->node] = si;
	if (!si.port_state_change)
		return;
	/* something moved at this switch: clear the flag first, then look at every port */
	c->delta_switches_read++;
	rc = sm_core_clear_psc(c, rq->node, &si);
	/* port 0 too: its LID (and so the switch's) is compared by the LID phase */
	for (unsigned p = 0; !rc && p <= nd->nports; p++)
		rc = sm_core_get(c, SM_ATTR_PORT_INFO, p, &c->tab.path[rq->node], SM_RQ_DELTA_PI, rq->node, (uint16_t)p,
				 on_delta_pi);
	if (rc)
		sm_core_fail(c, rc);
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
	const struct sm_port_info *old = &c->tab.pi[idx];
	int was_up = c->tab.pi_ok[idx] && sm_port_up(old), up = sm_port_up(&pi);

	if (rq->port == 0) {
		c->tab.pi[idx] = pi;
		c->tab.pi_ok[idx] = 1;
		return;
	}

	if (up && (!was_up || pi.port_state != old->port_state)) {
		delta_fallback(c, "switch 0x%016" PRIx64 " port %u is %s (was %s)", nd->guid, rq->port,
			       sm_port_state_str(pi.port_state),
			       c->tab.pi_ok[idx] ? sm_port_state_str(old->port_state) : "unknown");
		return;
	}
	c->tab.pi[idx] = pi;
	c->tab.pi_ok[idx] = 1;
	pt->state = pi.port_state;
	pt->phys_state = pi.phys_state;
	if (!up && pt->peer_node != SM_NONE) {
		uint32_t pn = pt->peer_node;
		struct sm_port *pp = sm_port(f, pn, pt->peer_port);
		/* the far end is down too (a CA's port is not read: it falls out below) */
		pp->state = SM_PORT_DOWN;
		c->tab.pi[pp - f->ports].port_state = SM_PORT_DOWN;
		sm_fabric_unlink(f, rq->node, rq->port);
		c->delta_links_down++;
	}
}

int sm_sweep_delta(struct sm_core *c, char *err, size_t errlen)
{
	const struct sm_state *st = c->state;
	const struct sm_fabric *sf = sm_state_fabric(st);
	uint8_t *keep = NULL;
	uint32_t *queue = NULL;
	int rc;

	c->delta_fallback = 0;
	c->delta_why[0] = '\0';
	c->f = sm_fabric_new();
	if (!c->f || sm_fabric_append(c->f, sf, NULL) || (rc = sm_core_grow(c))) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	/* an append into an empty fabric keeps node and port indices: the side tables line up */
	if (c->f->n_nodes != sf->n_nodes || c->f->n_ports != sf->n_ports || st->tab.cap_nodes < sf->n_nodes ||
	    st->tab.cap_ports < sf->n_ports || !st->snap->pi || st->snap->attr_nodes < sf->n_nodes ||
	    st->snap->attr_ports < sf->n_ports) {
		snprintf(c->delta_why, sizeof(c->delta_why), "the state does not match its fabric");
		return 1;
	}
	sm_sweep_tables_copy(&c->tab, &st->tab, sf->n_nodes, sf->n_ports);
	sm_snapshot_copy_attrs(st->snap, &c->tab, sf->n_nodes, sf->n_ports);   /* NodeInfo, SwitchInfo, PortInfo */

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
			if (c->f->nodes[n].type != SM_NODE_SWITCH || asked[n] || c->tab.path[n].cnt != level)
				continue;
			asked[n] = 1;
			n_asked++;
			rc = sm_core_get(c, SM_ATTR_SWITCH_INFO, 0, &c->tab.path[n], SM_RQ_DELTA_SI, n, 0, on_delta_si);
		}
		if (!n_asked || rc)
			continue;
		rc = sm_core_run(c);
		if (rc || c->delta_fallback)
			break;
		int moved = sm_sweep_repath(c, c->delta_lost, NULL);
		if (moved < 0) {
			rc = moved;
			break;
		}
		for (uint32_t n = 0; n < c->f->n_nodes; n++) {
			if (!c->delta_lost[n])
				continue;
			if (!sm_sweep_path_holds(c, &c->tab.path[n], n) || c->tab.path[n].cnt == level) {
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
	if (c->tab.sm_node < f->n_nodes) {
		keep[c->tab.sm_node] = 1;
		queue[tail++] = c->tab.sm_node;
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
	rc = sm_sweep_tables_canonicalize(&c->f, c->plane, &c->tab, keep);
out:
	free(keep);
	free(queue);
	if (rc)
		snprintf(err, errlen, "incremental sweep: %s", strerror(-rc));
	return rc;
}
