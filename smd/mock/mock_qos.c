/* SPDX-License-Identifier: MIT */
/*
 * DOC: mock fabric, port configuration and QoS tables
 *
 * What the SMA keeps beyond LIDs and states: the PortInfo fields the port
 * configuration phase writes (NeighborMTU, OperationalVLs, HOQLife,
 * VLStallCount, VLHighLimit, partition enforcement, LinkWidth/Speed
 * enabled), the SL2VL tables (per input/output port pair on switches) and
 * the VLArbitration blocks of every port. Allocated at the first access, so
 * a mock nobody configures costs nothing.
 *
 * As reset hardware: NeighborMTU 4096 (MTUCap), OperationalVLs VL0-7 (the
 * VLCap), HOQLife 16, VLStallCount 0, VLHighLimit 0, enforcement off, every
 * SL on VL0, VLArb tables zero. Switches announce optimised SL2VL
 * programming (attribute modifier bits 16: every output port, 17: every
 * input port) unless cfg.no_opt_sl2vl, and inbound and outbound partition
 * enforcement. A Set of OperationalVLs above VLCap, of a VLArb block beyond
 * the port's caps or of a port beyond the switch is refused (status 0x1C).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mock/mock_priv.h"

#define VL_CAP 4
#define MTU_CAP 5
#define ARB_CAP 8           /* VLArbitrationHigh/LowCap */

struct mqport {
	uint8_t set;             /* 1: fields below hold what was written */
	uint8_t neighbor_mtu, op_vls, hoq, vl_stall, vl_high, enf_in, enf_out, lwe, lse;
};

struct mock_qos {
	struct mqport *pi;       /* per port index */
	uint8_t **sl2vl;         /* per node: (nports+1)^2 tables of 8 bytes (switches), nports+1 (CAs) */
	uint8_t *vlarb;          /* per port index: 4 blocks of 64 bytes */
	struct sm_mock_qos_stats st;
};

static struct mock_qos *qos(struct sm_mock *m)
{
	if (m->qos)
		return m->qos;
	m->qos = calloc(1, sizeof(*m->qos));
	if (!m->qos)
		return NULL;
	m->qos->pi = calloc(m->f->n_ports, sizeof(*m->qos->pi));
	m->qos->sl2vl = calloc(m->f->n_nodes, sizeof(*m->qos->sl2vl));
	m->qos->vlarb = calloc(m->f->n_ports, 4 * SM_SMP_DATA_SIZE);
	if (!m->qos->pi || !m->qos->sl2vl || !m->qos->vlarb) {
		mock_qos_free(m);
		return NULL;
	}
	return m->qos;
}

void mock_qos_free(struct sm_mock *m)
{
	if (!m->qos)
		return;
	if (m->qos->sl2vl)
		for (uint32_t n = 0; n < m->f->n_nodes; n++)
			free(m->qos->sl2vl[n]);
	free(m->qos->sl2vl);
	free(m->qos->pi);
	free(m->qos->vlarb);
	free(m->qos);
	m->qos = NULL;
}

void mock_qos_fill_pi(const struct sm_mock *m, uint32_t idx, struct sm_port_info *pi)
{
	const struct mqport *q = m->qos ? &m->qos->pi[idx] : NULL;

	pi->mtu_cap = MTU_CAP;
	pi->vl_cap = VL_CAP;
	pi->vl_arb_high_cap = ARB_CAP;
	pi->vl_arb_low_cap = ARB_CAP;
	pi->cap_mask |= SM_CAP_HAS_SL_MAP;
	if (!q || !q->set) {
		pi->neighbor_mtu = MTU_CAP;
		pi->operational_vls = VL_CAP;
		pi->hoq_life = 16;
		return;
	}
	pi->neighbor_mtu = q->neighbor_mtu;
	pi->operational_vls = q->op_vls;
	pi->hoq_life = q->hoq;
	pi->vl_stall_count = q->vl_stall;
	pi->vl_high_limit = q->vl_high;
	pi->part_enf_in = q->enf_in;
	pi->part_enf_out = q->enf_out;
	if (q->lwe)
		pi->link_width_enabled = q->lwe;
	if (q->lse)
		pi->link_speed_enabled = q->lse;
}

uint16_t mock_qos_set_pi(struct sm_mock *m, uint32_t n, unsigned p, const struct sm_port_info *req)
{
	const struct sm_node *nd = &m->f->nodes[n];
	uint32_t idx = nd->port0 + p;
	struct mock_qos *q;
	struct mqport *mp;
	struct sm_port_info cur;

	if (req->operational_vls > VL_CAP || req->neighbor_mtu > MTU_CAP)
		return SM_MAD_STATUS_INVALID_FIELD;
	q = qos(m);
	if (!q)
		return SM_MAD_STATUS_BUSY;
	mp = &q->pi[idx];
	memset(&cur, 0, sizeof(cur));
	mock_qos_fill_pi(m, idx, &cur);
	mp->neighbor_mtu = req->neighbor_mtu ? req->neighbor_mtu : cur.neighbor_mtu;
	mp->op_vls = req->operational_vls ? req->operational_vls : cur.operational_vls;   /* 0: no change */
	mp->hoq = req->hoq_life;
	mp->vl_stall = req->vl_stall_count;
	mp->vl_high = req->vl_high_limit;
	if (nd->type == SM_NODE_SWITCH && p) {
		mp->enf_in = req->part_enf_in;
		mp->enf_out = req->part_enf_out;
	}
	if (req->link_width_enabled)
		mp->lwe = req->link_width_enabled == 255 ? 0x03 : req->link_width_enabled;
	if (req->link_speed_enabled)
		mp->lse = req->link_speed_enabled == 15 ? 0x01 : req->link_speed_enabled;
	mp->set = 1;
	q->st.pi_sets++;
	return 0;
}

void mock_qos_fill_si(const struct sm_mock *m, struct sm_switch_info *si)
{
	si->opt_sl2vl = m->cfg.no_opt_sl2vl ? 0 : 1;
	si->inbound_enf_cap = 1;
	si->outbound_enf_cap = 1;
}

static uint8_t *sl2vl_at(struct mock_qos *q, const struct sm_node *nd, uint32_t n, unsigned in, unsigned out)
{
	unsigned w = nd->nports + 1u;
	if (!q->sl2vl[n]) {
		q->sl2vl[n] = calloc(nd->type == SM_NODE_SWITCH ? (size_t)w * w : w, 8);
		if (!q->sl2vl[n])
			return NULL;
	}
	return q->sl2vl[n] + ((nd->type == SM_NODE_SWITCH ? (size_t)in * w : 0) + out) * 8;
}

static uint16_t do_sl2vl(struct sm_mock *m, uint32_t n, unsigned inp, struct sm_smp *s)
{
	const struct sm_node *nd = &m->f->nodes[n];
	struct mock_qos *q = qos(m);
	int sw = nd->type == SM_NODE_SWITCH, set = s->method == SM_METHOD_SET;
	unsigned in = (s->attr_mod >> 8) & 0xFF, out = s->attr_mod & 0xFF;
	unsigned in0 = in, in1 = in, out0 = out, out1 = out;
	uint8_t *t;

	if (!q)
		return SM_MAD_STATUS_BUSY;
	if (!sw) {
		in0 = in1 = 0;
		out0 = out1 = inp;   /* a CA answers for the port the SMP came in by */
	} else {
		if (s->attr_mod & ~0x3FFFFu || ((s->attr_mod & 0x30000u) && (!set || m->cfg.no_opt_sl2vl)))
			return SM_MAD_STATUS_INVALID_FIELD;
		if (s->attr_mod & SM_SL2VL_ALL_OUT) {
			out0 = 0;
			out1 = nd->nports;
		}
		if (s->attr_mod & SM_SL2VL_ALL_IN) {
			in0 = 0;
			in1 = nd->nports;
		}
		if (in1 > nd->nports || out1 > nd->nports)
			return SM_MAD_STATUS_INVALID_FIELD;
	}
	for (unsigned i = in0; i <= in1; i++)
		for (unsigned o = out0; o <= out1; o++) {
			t = sl2vl_at(q, nd, n, i, o);
			if (!t)
				return SM_MAD_STATUS_BUSY;
			if (set)
				memcpy(t, s->data, 8);
		}
	t = sl2vl_at(q, nd, n, in0, out0);
	memset(s->data, 0, SM_SMP_DATA_SIZE);
	memcpy(s->data, t, 8);
	if (set) {
		q->st.sl2vl_sets++;
		m->st.sets++;
	} else {
		q->st.sl2vl_gets++;
		m->st.gets++;
	}
	return 0;
}

static uint16_t do_vlarb(struct sm_mock *m, uint32_t n, unsigned inp, struct sm_smp *s)
{
	const struct sm_node *nd = &m->f->nodes[n];
	struct mock_qos *q = qos(m);
	unsigned block = s->attr_mod >> 16, p = nd->type == SM_NODE_SWITCH ? s->attr_mod & 0xFFFF : inp;
	unsigned len = block & 1 ? ARB_CAP : (ARB_CAP > 32 ? ARB_CAP - 32 : 0);
	uint8_t *b;

	if (!q)
		return SM_MAD_STATUS_BUSY;
	if (block < 1 || block > 4 || p > nd->nports || !len)
		return SM_MAD_STATUS_INVALID_FIELD;
	b = q->vlarb + ((size_t)(nd->port0 + p) * 4 + block - 1) * SM_SMP_DATA_SIZE;
	if (s->method == SM_METHOD_SET) {
		memcpy(b, s->data, 2 * len);
		q->st.vlarb_sets++;
		m->st.sets++;
	} else {
		q->st.vlarb_gets++;
		m->st.gets++;
	}
	memset(s->data, 0, SM_SMP_DATA_SIZE);
	memcpy(s->data, b, 2 * len);
	return 0;
}

uint16_t mock_qos_sma(struct sm_mock *m, uint32_t n, unsigned inp, struct sm_smp *s)
{
	return s->attr_id == SM_ATTR_SL2VL ? do_sl2vl(m, n, inp, s) : do_vlarb(m, n, inp, s);
}

void sm_mock_qos_stats(const struct sm_mock *m, struct sm_mock_qos_stats *st)
{
	if (m->qos)
		*st = m->qos->st;
	else
		memset(st, 0, sizeof(*st));
}

int sm_mock_sl2vl(const struct sm_mock *m, uint32_t node, unsigned in, unsigned out, uint8_t vl[16])
{
	const struct sm_node *nd;
	const uint8_t *t = NULL;
	unsigned w;

	if (node >= m->f->n_nodes)
		return -EINVAL;
	nd = &m->f->nodes[node];
	w = nd->nports + 1u;
	if (in > nd->nports || out > nd->nports)
		return -EINVAL;
	if (m->qos && m->qos->sl2vl[node])
		t = m->qos->sl2vl[node] + ((nd->type == SM_NODE_SWITCH ? (size_t)in * w : 0) + out) * 8;
	for (unsigned sl = 0; sl < 16; sl++)
		vl[sl] = t ? (uint8_t)(sl & 1 ? t[sl / 2] & 0x0F : t[sl / 2] >> 4) : 0;
	return 0;
}
