/* SPDX-License-Identifier: MIT */
/*
 * DOC: activate phase (sm.h "activate")
 *
 * Set PortInfo ARMED on every link port in INIT (switch external ports and
 * CA ports, the SM's own included), then ACTIVE on every ARMED port, and
 * count the link ports that end ACTIVE.
 */
#include "sm/phases.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Ports that must end ACTIVE: linked switch ports (and port 0 if not yet active), reached CA ports. */
static int link_port(const struct sm_core *c, uint32_t n, unsigned p)
{
	const struct sm_node *nd = &c->f->nodes[n];
	uint32_t idx = nd->port0 + p;
	if (!c->tab.pi_ok[idx])
		return 0;
	if (p == 0)
		return nd->type == SM_NODE_SWITCH && c->tab.pi[idx].port_state >= SM_PORT_INIT &&
		       c->tab.pi[idx].port_state < SM_PORT_ACTIVE;
	return c->f->ports[idx].peer_node != SM_NONE && c->tab.pi[idx].port_state >= SM_PORT_INIT;
}

static int set_state_round(struct sm_core *c, uint8_t from, uint8_t to)
{
	const struct sm_fabric *f = c->f;
	int rc = 0;
	for (uint32_t n = 0; n < f->n_nodes && !rc; n++) {
		const struct sm_node *nd = &f->nodes[n];
		for (unsigned p = 0; p <= nd->nports && !rc; p++) {
			uint32_t idx = nd->port0 + p;
			if (!link_port(c, n, p) || c->tab.pi[idx].port_state != from)
				continue;
			struct sm_port_info_set s = {
				.lid = c->tab.pi[idx].lid, .lmc = c->tab.pi[idx].lmc,
				.sm_lid = c->tab.pi[idx].master_sm_lid, .sm_sl = c->tab.pi[idx].master_sm_sl,
				.gid_prefix = c->tab.pi[idx].gid_prefix, .port_state = to,
				.subnet_timeout = c->tab.pi[idx].subnet_timeout,
			};
			sm_set_keys(c, n, p, &s);
			struct sm_port_info out;
			uint8_t data[SM_SMP_DATA_SIZE];
			sm_port_info_prepare_set(&out, &c->tab.pi[idx], &s);
			sm_port_info_encode(&out, data);
			rc = sm_set_submit(c, SM_ATTR_PORT_INFO, p, n, data, SM_RQ_PI_SET_STATE, (uint16_t)p, to);
			c->pi_state_sets++;
		}
		/* in slices (sm_core_throttle): an answer changes only its own port's state, behind the loop */
		if (!rc)
			rc = sm_core_throttle(c);
	}
	if (!rc)
		rc = sm_core_run(c);
	return rc;
}

/* The link ports and those ACTIVE into sum; 1 if a port that must end ACTIVE is INIT or ARMED. */
static int count_ports(const struct sm_core *c, struct sm_summary *sum)
{
	const struct sm_fabric *f = c->f;
	int pending = 0;
	sum->link_ports = sum->active_ports = 0;
	for (uint32_t n = 0; n < f->n_nodes; n++) {
		const struct sm_node *nd = &f->nodes[n];
		for (unsigned p = 0; p <= nd->nports; p++) {
			uint32_t idx = nd->port0 + p;
			if (!pending && link_port(c, n, p) && (c->tab.pi[idx].port_state == SM_PORT_INIT ||
								c->tab.pi[idx].port_state == SM_PORT_ARMED))
				pending = 1;
			if (!p || f->ports[idx].peer_node == SM_NONE || !c->tab.pi_ok[idx])
				continue;
			sum->link_ports++;
			if (c->tab.pi[idx].port_state == SM_PORT_ACTIVE)
				sum->active_ports++;
		}
	}
	return pending;
}

int sm_phase_activate(struct sm_core *c, struct sm_summary *sum, char *err, size_t errlen)
{
	int rc;
	/* nothing to arm or activate (a reroute): one pass over the ports instead of three */
	if (!count_ports(c, sum)) {
		rc = sm_core_run(c);   /* nothing queued: what the rounds' runs would return */
	} else {
		rc = set_state_round(c, SM_PORT_INIT, SM_PORT_ARMED);
		if (!rc)
			rc = set_state_round(c, SM_PORT_ARMED, SM_PORT_ACTIVE);
		if (!rc)
			count_ports(c, sum);
	}
	if (rc) {
		sum->link_ports = sum->active_ports = 0;
		snprintf(err, errlen, "activating ports failed: %s", strerror(-rc));
		return rc;
	}
	return 0;
}
