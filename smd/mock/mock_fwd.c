/* SPDX-License-Identifier: MIT */
/*
 * DOC: mock fabric, forwarding
 *
 * How a MAD travels through the emulated switches. Directed route: hop by
 * hop along the initial path from the SM's port, the return path filled
 * in; a path out of a bad, unconnected or down port drops it. LID routed:
 * by the switches' emulated LFTs, to the port holding the LID, and the
 * answer back to the SM port's LID the same way (no LID or no route: the
 * MAD is dropped). Port state under link events: both ends of a link go
 * DOWN/Polling or INIT/LinkUp, switches flag PortStateChange and send a
 * Trap 128 (mock_ops.c).
 */
#include <errno.h>
#include <string.h>

#include "mock/mock_priv.h"

#define MAX_LID_HOPS 64

/* ---- routing ---- */

/* Cross the link out of (n, p): (peer node, peer port) or -1 if it does not carry. */
static int cross(const struct sm_mock *m, uint32_t n, unsigned p, uint32_t *pn, unsigned *pp)
{
	const struct sm_node *nd = &m->f->nodes[n];
	const struct sm_port *fp;

	if (p < 1 || p > nd->nports)
		return -1;
	fp = &m->f->ports[nd->port0 + p];
	if (fp->peer_node == SM_NONE || m->ports[nd->port0 + p].phys != PHYS_LINKUP)
		return -1;
	if (m->ports[m->f->nodes[fp->peer_node].port0 + fp->peer_port].phys != PHYS_LINKUP)
		return -1;
	*pn = fp->peer_node;
	*pp = fp->peer_port;
	return 0;
}

/*
 * LID-route a packet leaving node n (a CA: by port `outp`; a switch: by its
 * LFT; outp 0 on a switch = start at the switch itself) to dlid. On success
 * (*dn, *dp) is the destination node and the port the packet is for.
 */
int mock_route_lid(const struct sm_mock *m, uint32_t n, unsigned outp, uint16_t dlid,
		     uint32_t *dn, unsigned *dp)
{
	for (unsigned hops = 0; hops <= MAX_LID_HOPS; hops++) {
		const struct sm_node *nd = &m->f->nodes[n];
		uint32_t pn;
		unsigned pp, e;

		if (nd->type == SM_NODE_SWITCH) {
			if (port_has_lid(m, n, 0, dlid)) {
				/* delivered to the management port 0: NodeInfo.LocalPortNum
				 * then reads 0, as ibsim answers too */
				*dn = n;
				*dp = 0;
				return 0;
			}
			e = dlid < m->nodes[n].lft_len ? m->nodes[n].lft[dlid] : SM_LFT_NO_PORT;
			if (e == 0 || e > nd->nports)
				return -1;
		} else {
			if (hops > 0) {
				/* arrived at a CA on port outp */
				if (port_has_lid(m, n, outp, dlid)) {
					*dn = n;
					*dp = outp;
					return 0;
				}
				return -1;
			}
			if (port_has_lid(m, n, outp, dlid)) {   /* loopback */
				*dn = n;
				*dp = outp;
				return 0;
			}
			e = outp;
		}
		if (cross(m, n, e, &pn, &pp) < 0)
			return -1;
		n = pn;
		outp = pp;
	}
	return -1;
}

struct attach *mock_attachment_with_lid(const struct sm_mock *m, uint16_t lid)
{
	for (uint32_t i = 0; i < m->n_att; i++) {
		struct attach *a = m->att[i];
		if (a && a->open && a->node < m->f->n_nodes &&
		    port_has_lid(m, a->node, m->f->ports[a->port].num, lid))
			return a;
	}
	return NULL;
}

void mock_handle_dr(struct sm_mock *m, struct attach *a, struct sm_smp *s)
{
	uint32_t n = a->node;
	unsigned inp = m->f->ports[a->port].num;
	uint16_t status;

	if (s->dr_slid != SM_PERMISSIVE_LID || s->dr_dlid != SM_PERMISSIVE_LID || s->direction ||
	    s->hop_ptr != 0) {
		/* LID-routed DR segments are not emulated */
		m->st.dr_dropped++;
		return;
	}
	memset(s->return_path, 0, sizeof(s->return_path));
	for (unsigned h = 1; h <= s->hop_cnt; h++) {
		uint32_t pn;
		unsigned pp, out = s->initial_path[h];

		if (h == 1 && out != inp) {
			/* hop 1 leaves by the SM's own port, no other */
			m->st.dr_dropped++;
			return;
		}
		if (cross(m, n, out, &pn, &pp) < 0) {
			m->st.dr_dropped++;
			return;
		}
		/* only switches forward beyond themselves */
		if (h > 1 && m->f->nodes[n].type != SM_NODE_SWITCH) {
			m->st.dr_dropped++;
			return;
		}
		s->return_path[h] = (uint8_t)pp;
		n = pn;
		inp = pp;
	}
	status = mock_sma(m, n, inp, s);
	if (status == SMA_DROP)
		return;
	sm_smp_make_response(s, s, status);
	s->hop_ptr = 0;   /* as it arrives back at the SM */
	size_t len = SM_MAD_SIZE;
	mock_hostile_apply(m, n, s, &len);
	mock_deliver(m, a, s, 0, 1, len);
}

void mock_handle_lid(struct sm_mock *m, struct attach *a, struct sm_smp *s, uint16_t dlid)
{
	unsigned smp_port = m->f->ports[a->port].num;
	const struct mport *sp = &m->ports[a->port];
	uint32_t dn, rn;
	unsigned dp, rp;
	uint16_t status;

	if (!sp->lid || mock_route_lid(m, a->node, smp_port, dlid, &dn, &dp) < 0) {
		m->st.lid_dropped++;
		return;
	}
	if (s->method == SM_METHOD_TRAP_REPRESS) {
		m->st.trap_represses++;
		return;
	}
	status = mock_sma(m, dn, dp, s);
	if (status == SMA_DROP)
		return;
	sm_smp_make_response(s, s, status);
	/* the answer travels back to the SM's LID */
	if (mock_route_lid(m, dn, m->f->nodes[dn].type == SM_NODE_SWITCH ? 0 : dp, sp->lid, &rn, &rp) < 0 ||
	    m->f->nodes[rn].port0 + rp != a->port) {
		m->st.lid_dropped++;
		return;
	}
	size_t len = SM_MAD_SIZE;
	mock_hostile_apply(m, dn, s, &len);
	mock_deliver(m, a, s, lid_port(m, dn, dp)->lid, 1, len);
}

/* ---- link events ---- */

static void link_event(struct sm_mock *m, uint32_t n, unsigned p, uint32_t pn, unsigned pp, int up)
{
	uint32_t ends[2][2] = { { n, p }, { pn, pp } };

	for (int i = 0; i < 2; i++) {
		uint32_t en = ends[i][0];
		struct mport *mp = &m->ports[m->f->nodes[en].port0 + ends[i][1]];
		mp->phys = up ? PHYS_LINKUP : PHYS_POLLING;
		mp->state = up ? SM_PORT_INIT : SM_PORT_DOWN;
		mp->link_event_down = !up;
		if (m->f->nodes[en].type == SM_NODE_SWITCH)
			m->nodes[en].psc = 1;
		/* refresh attachment info */
		struct attach *a = attachment_at(m, m->f->nodes[en].port0 + ends[i][1]);
		if (a)
			mock_refresh(&a->t);
	}
	for (int i = 0; i < 2; i++) {
		uint32_t en = ends[i][0];
		if (m->f->nodes[en].type == SM_NODE_SWITCH && !(i == 1 && en == n))
			mock_send_trap128(m, en);
	}
}

int sm_mock_link_down(struct sm_mock *m, uint32_t n, unsigned p)
{
	const struct sm_port *fp;

	if (n >= m->f->n_nodes || p < 1 || p > m->f->nodes[n].nports)
		return -EINVAL;
	fp = &m->f->ports[m->f->nodes[n].port0 + p];
	if (fp->peer_node == SM_NONE || m->ports[m->f->nodes[n].port0 + p].phys != PHYS_LINKUP)
		return -ENOTCONN;
	link_event(m, n, p, fp->peer_node, fp->peer_port, 0);
	return 0;
}

int sm_mock_link_up(struct sm_mock *m, uint32_t n, unsigned p)
{
	const struct sm_port *fp;

	if (n >= m->f->n_nodes || p < 1 || p > m->f->nodes[n].nports)
		return -EINVAL;
	fp = &m->f->ports[m->f->nodes[n].port0 + p];
	if (fp->peer_node == SM_NONE || !m->ports[m->f->nodes[n].port0 + p].link_event_down)
		return -ENOENT;
	link_event(m, n, p, fp->peer_node, fp->peer_port, 1);
	return 0;
}
