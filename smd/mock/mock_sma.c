/* SPDX-License-Identifier: MIT */
/*
 * DOC: mock fabric, the SMA
 *
 * What one node's subnet management agent answers: Get/Set NodeInfo,
 * NodeDescription, PortInfo (with the PortState machine), SwitchInfo, LFT
 * blocks; everything else "attribute unsupported" (SMInfo included: no
 * other SM lives in the mock). mock_sma() checks the M_Key first
 * (mock_mkey.c) and computes the answer in place from the state at the
 * time of the request. Hostile nodes: mock_hostile_apply() spoils an
 * answer after it is computed, one way per mode.
 */
#include <errno.h>
#include <string.h>

#include "mock/mock_priv.h"

#define PORT_CAP_IS_SM 0x00000002u
#define PORT_CAP_HAS_TRAP 0x00000008u

static void fill_port_info(const struct sm_mock *m, uint32_t n, unsigned p, unsigned inp,
			   struct sm_port_info *pi)
{
	const struct sm_node *nd = &m->f->nodes[n];
	uint32_t idx = nd->port0 + p;
	const struct sm_port *fp = &m->f->ports[idx];
	const struct mport *mp = &m->ports[idx];
	const struct mport *lp = lid_port(m, n, p);
	int sw = nd->type == SM_NODE_SWITCH;

	memset(pi, 0, sizeof(*pi));
	pi->mkey = lp->mkey;
	pi->mkey_prot_bits = lp->mkey_prot;
	pi->mkey_lease_period = lp->mkey_lease;
	pi->mkey_violations = lp->mkey_violations;
	pi->gid_prefix = lp->gid_prefix;
	pi->lid = lp->lid;
	pi->lmc = lp->lmc;
	pi->master_sm_lid = lp->sm_lid;
	pi->master_sm_sl = lp->sm_sl;
	pi->cap_mask = PORT_CAP_HAS_TRAP;
	if (!sw && attachment_at(m, idx))
		pi->cap_mask |= PORT_CAP_IS_SM;
	pi->local_port_num = (uint8_t)(sw ? inp : p);
	pi->link_width_supported = 0x03;          /* 1x, 4x */
	pi->link_width_enabled = 0x03;
	pi->link_width_active = fp->width ? fp->width : 0x02;
	pi->link_speed_supported = 0x01;
	pi->link_speed_enabled = 0x01;
	pi->link_speed_active = 0x01;
	if (fp->flags & SM_PORT_F_EXT_SPEED) {
		pi->link_speed_ext_active = fp->speed & 0x0F;
		pi->link_speed_ext_supported = fp->speed & 0x0F;
		pi->link_speed_ext_enabled = fp->speed & 0x1F;
	}
	pi->port_state = mp->state;
	pi->phys_state = mp->phys;
	pi->link_down_def_state = PHYS_POLLING;
	mock_qos_fill_pi(m, idx, pi);             /* MTU, VLs, HOQ... (mock_qos.c) */
	pi->guid_cap = sw ? 0 : 1;
	pi->subnet_timeout = lp->subnet_timeout;
	pi->resp_time_value = 8;
}

static uint16_t do_port_info(struct sm_mock *m, uint32_t n, unsigned inp, struct sm_smp *s)
{
	const struct sm_node *nd = &m->f->nodes[n];
	int sw = nd->type == SM_NODE_SWITCH;
	unsigned p = s->attr_mod & 0xFF;
	struct sm_port_info pi;

	if (s->attr_mod > 0xFF)
		return SM_MAD_STATUS_INVALID_FIELD;
	if (!sw && p == 0)
		p = inp;
	if (p > nd->nports)
		return SM_MAD_STATUS_INVALID_FIELD;
	if (s->method == SM_METHOD_SET) {
		struct sm_port_info req;
		uint32_t idx = nd->port0 + p;
		struct mport *mp = &m->ports[idx];
		struct attach *a;
		uint8_t want, next;

		if (sm_port_info_decode(s->data, &req, NULL) < 0)
			return SM_MAD_STATUS_INVALID_FIELD;
		want = req.port_state;
		next = mp->state;
		switch (want) {
		case SM_PORT_NOP:
			break;
		case SM_PORT_DOWN:
			/* the link retrains: a connected port comes back to INIT */
			next = mp->phys == PHYS_LINKUP ? SM_PORT_INIT : SM_PORT_DOWN;
			break;
		case SM_PORT_ARMED:
		case SM_PORT_ACTIVE:
			/* ARMED only from INIT, ACTIVE only from ARMED (or a repeat, unless strict) */
			if (mp->phys != PHYS_LINKUP || (mp->state != want - 1 && mp->state != want) ||
			    (m->cfg.strict_states && mp->state == want)) {
				m->st.state_errors++;
				return SM_MAD_STATUS_INVALID_FIELD;
			}
			next = want;
			break;
		default:   /* INIT cannot be set */
			m->st.state_errors++;
			return SM_MAD_STATUS_INVALID_FIELD;
		}
		if (!sw || p == 0) {
			if (req.lid >= SM_LID_SPACE || req.lmc > 7)
				return SM_MAD_STATUS_INVALID_FIELD;
			mp->lid = req.lid;
			mp->lmc = req.lmc;
			mp->sm_lid = req.master_sm_lid;
			mp->sm_sl = req.master_sm_sl;
			mp->gid_prefix = req.gid_prefix;
			mp->mkey = req.mkey;
			mp->mkey_prot = req.mkey_prot_bits;
			mp->mkey_lease = req.mkey_lease_period;
			mp->subnet_timeout = req.subnet_timeout;
		}
		uint16_t st = mock_qos_set_pi(m, n, p, &req);
		if (st)
			return st;
		mp->state = next;
		mp->sets++;
		m->st.sets++;
		if (want == SM_PORT_DOWN && sw && p)
			m->nodes[n].psc = 1;
		/* the SM's own port: keep its transport info current */
		a = attachment_at(m, idx);
		if (a)
			mock_refresh(&a->t);
	} else {
		m->st.gets++;
	}
	fill_port_info(m, n, p, inp, &pi);
	sm_port_info_encode(&pi, s->data);
	return 0;
}

static uint16_t do_switch_info(struct sm_mock *m, uint32_t n, struct sm_smp *s)
{
	const struct sm_node *nd = &m->f->nodes[n];
	struct mnode *mn = &m->nodes[n];
	struct sm_switch_info si, req;

	if (nd->type != SM_NODE_SWITCH)
		return SM_MAD_STATUS_ATTR_UNSUPP;
	if (s->method == SM_METHOD_SET) {
		if (sm_switch_info_decode(s->data, &req, NULL) < 0 || req.lft_top >= SM_LID_SPACE)
			return SM_MAD_STATUS_INVALID_FIELD;
		mn->lft_top = req.lft_top;
		if (req.port_state_change)
			mn->psc = 0;   /* write 1 to clear */
		if (req.lifetime_value)
			mn->life = req.lifetime_value;
		m->st.sets++;
	} else {
		m->st.gets++;
	}
	memset(&si, 0, sizeof(si));
	si.lft_cap = mn->lft_cap;
	si.lft_top = mn->lft_top;
	si.lifetime_value = mn->life;
	si.port_state_change = mn->psc;
	si.enhanced_port0 = (nd->flags & SM_NODE_F_ENHANCED_SP0) ? 1 : 0;
	si.part_enf_cap = 32;
	mock_qos_fill_si(m, &si);
	mock_mft_switch_info(m, n, s->method == SM_METHOD_SET ? &req : NULL, &si);
	sm_switch_info_encode(&si, s->data);
	return 0;
}

static uint16_t do_lft(struct sm_mock *m, uint32_t n, struct sm_smp *s)
{
	struct mnode *mn = &m->nodes[n];
	uint32_t block = s->attr_mod;
	uint32_t base;

	if (m->f->nodes[n].type != SM_NODE_SWITCH)
		return SM_MAD_STATUS_ATTR_UNSUPP;
	if (!sm_lft_block_valid(block) || block * SM_LFT_BLOCK >= mn->lft_cap)
		return SM_MAD_STATUS_INVALID_FIELD;
	base = block * SM_LFT_BLOCK;
	if (s->method == SM_METHOD_SET) {
		if (mock_lft_grow(mn, base + SM_LFT_BLOCK) < 0)
			return SM_MAD_STATUS_BUSY;
		memcpy(mn->lft + base, s->data, SM_LFT_BLOCK);
		mn->blocks_set++;
		m->st.sets++;
	} else {
		m->st.gets++;
	}
	if (base < mn->lft_len)
		memcpy(s->data, mn->lft + base, SM_LFT_BLOCK);
	else
		memset(s->data, SM_LFT_NO_PORT, SM_LFT_BLOCK);
	return 0;
}

static uint16_t do_node_info(struct sm_mock *m, uint32_t n, unsigned inp, struct sm_smp *s)
{
	const struct sm_node *nd = &m->f->nodes[n];
	struct sm_node_info ni;

	if (s->method != SM_METHOD_GET)
		return SM_MAD_STATUS_ATTR_UNSUPP;
	m->st.gets++;
	memset(&ni, 0, sizeof(ni));
	ni.base_version = 1;
	ni.class_version = 1;
	ni.node_type = nd->type;
	ni.num_ports = nd->nports;
	ni.sys_guid = nd->sysimg_guid;
	ni.node_guid = nd->guid;
	ni.port_guid = m->f->ports[nd->port0 + (nd->type == SM_NODE_SWITCH ? 0 : inp)].guid;
	ni.partition_cap = nd->type == SM_NODE_SWITCH ? 8 : 128;
	ni.device_id = nd->device_id;
	ni.revision = nd->revision;
	ni.local_port_num = (uint8_t)inp;
	ni.vendor_id = nd->vendor_id;
	sm_node_info_encode(&ni, s->data);
	return 0;
}

static uint16_t do_node_desc(struct sm_mock *m, uint32_t n, struct sm_smp *s)
{
	struct sm_node_desc nd;

	if (s->method != SM_METHOD_GET)
		return SM_MAD_STATUS_ATTR_UNSUPP;
	m->st.gets++;
	memset(&nd, 0, sizeof(nd));
	memcpy(nd.desc, m->f->nodes[n].desc, SM_SMP_DATA_SIZE);
	sm_node_desc_encode(&nd, s->data);
	return 0;
}

/* Compute the SMA's answer in place. Returns the MAD status, or SMA_DROP. */
uint16_t mock_sma(struct sm_mock *m, uint32_t n, unsigned inp, struct sm_smp *s)
{
	int mk;

	if (s->method != SM_METHOD_GET && s->method != SM_METHOD_SET) {
		m->st.bad_requests++;
		return SM_MAD_STATUS_METHOD_UNSUPP;
	}
	mk = mock_mkey_check(m, n, inp, s);
	if (mk == MKEY_FAIL)
		return SMA_DROP;
	switch (s->attr_id) {
	case SM_ATTR_NODE_INFO: return do_node_info(m, n, inp, s);
	case SM_ATTR_NODE_DESC: return do_node_desc(m, n, s);
	case SM_ATTR_PORT_INFO: {
		uint16_t st = do_port_info(m, n, inp, s);
		if (mk == MKEY_HIDE)
			memset(s->data, 0, 8);   /* PortInfo.M_Key reads 0 */
		return st;
	}
	case SM_ATTR_SWITCH_INFO: return do_switch_info(m, n, s);
	case SM_ATTR_LFT: return do_lft(m, n, s);
	case SM_ATTR_PKEY_TABLE: return mock_pkey(m, n, inp, s);
	case SM_ATTR_SL2VL:
	case SM_ATTR_VLARB: return mock_qos_sma(m, n, inp, s);
	case SM_ATTR_MFT: return mock_mft(m, n, s);
	default:
		/* SMInfo included: no other SM lives in the mock */
		m->st.bad_requests++;
		return SM_MAD_STATUS_ATTR_UNSUPP;
	}
}

const char *sm_mock_hostile_name(unsigned mode)
{
	static const char *const names[SM_MOCK_H_COUNT] = {
		"none", "wrong-attr", "wrong-mod", "bad-hopcnt", "bad-hopptr", "wrong-method",
		"bad-status", "truncated", "port-beyond", "ca-port0", "ports-255", "ports-0",
		"type-flip", "dup-guid", "guid-zero",
	};
	return mode < SM_MOCK_H_COUNT ? names[mode] : "?";
}

int sm_mock_set_hostile(struct sm_mock *m, uint32_t node, enum sm_mock_hostile mode, uint32_t arg)
{
	if (node >= m->f->n_nodes || (unsigned)mode >= SM_MOCK_H_COUNT)
		return -EINVAL;
	if (mode == SM_MOCK_H_DUP_GUID && (arg >= m->f->n_nodes || arg == node))
		return -EINVAL;
	m->nodes[node].hostile = (uint8_t)mode;
	m->nodes[node].hostile_arg = arg;
	m->nodes[node].hostile_n = 0;
	m->nodes[node].flip_n = 0;
	return 0;
}

/*
 * Spoil the answer node n computed (status already in it), as its hostile
 * mode says. *len may be cut. Honest nodes: untouched.
 */
void mock_hostile_apply(struct sm_mock *m, uint32_t n, struct sm_smp *s, size_t *len)
{
	struct mnode *mn = &m->nodes[n];
	const struct sm_fabric *f = m->f;
	int ni = s->attr_id == SM_ATTR_NODE_INFO && !s->status;

	if (mn->hostile == SM_MOCK_H_NONE)
		return;
	mn->hostile_n++;
	switch (mn->hostile) {
	case SM_MOCK_H_WRONG_ATTR:
		s->attr_id = s->attr_id == SM_ATTR_NODE_DESC ? SM_ATTR_NODE_INFO : SM_ATTR_NODE_DESC;
		break;
	case SM_MOCK_H_WRONG_MOD: s->attr_mod ^= 0x10; break;
	case SM_MOCK_H_BAD_HOPCNT:
		if (s->mgmt_class != SM_CLASS_SMI_DR || s->hop_cnt >= SM_DR_MAX_HOPS)
			return;
		s->hop_cnt++;
		break;
	case SM_MOCK_H_BAD_HOPPTR:
		if (s->mgmt_class != SM_CLASS_SMI_DR)
			return;
		s->hop_ptr = (uint8_t)(s->hop_cnt + 1);
		break;
	case SM_MOCK_H_WRONG_METHOD: s->method = SM_METHOD_SET; break;
	case SM_MOCK_H_BAD_STATUS: s->status = 5 << 2; break;   /* code 5: reserved */
	case SM_MOCK_H_TRUNCATED: *len = 100; break;
	case SM_MOCK_H_PORT_BEYOND:
		if (!ni)
			return;
		s->data[36] = (uint8_t)(s->data[3] + 1);
		break;
	case SM_MOCK_H_CA_PORT0:
		if (!ni)
			return;
		s->data[36] = 0;
		break;
	case SM_MOCK_H_PORTS_255:
		if (!ni)
			return;
		s->data[3] = 255;
		break;
	case SM_MOCK_H_PORTS_0:
		if (!ni)
			return;
		s->data[3] = 0;
		break;
	case SM_MOCK_H_TYPE_FLIP:
		if (!ni || (++mn->flip_n & 1))
			return;
		s->data[2] = s->data[2] == SM_NODE_SWITCH ? SM_NODE_CA : SM_NODE_SWITCH;
		break;
	case SM_MOCK_H_DUP_GUID: {
		if (!ni)
			return;
		struct sm_node_info x;
		const struct sm_node *o = &f->nodes[mn->hostile_arg];
		if (sm_node_info_decode(s->data, &x, NULL))
			return;
		x.node_guid = o->guid;
		x.sys_guid = o->sysimg_guid;
		x.port_guid = f->ports[o->port0 + (o->type == SM_NODE_SWITCH ? 0 : 1)].guid;
		sm_node_info_encode(&x, s->data);
		break;
	}
	case SM_MOCK_H_GUID_ZERO:
		if (!ni)
			return;
		memset(s->data + 12, 0, 8);
		break;
	default:
		return;
	}
	m->st.hostile++;
}
