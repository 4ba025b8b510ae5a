/* SPDX-License-Identifier: MIT */
/*
 * DOC: mock fabric (implementation)
 *
 * Owns: a copy of the topology (struct sm_fabric, same node/port indices as
 * the source), per-port SMA state (struct mport, indexed like f->ports),
 * per-node switch state (struct mnode: LFT, LinearFDBTop, PortStateChange),
 * and the attachments (one per transport handed out), each with a FIFO of
 * answers ready to be received and a FIFO of answers held back (delay
 * fault; one delay value, so release times are in FIFO order).
 *
 * Data flow: transport send() -> decode the request -> faults (drop) ->
 * route (DR walk over the copied links, or LID walk over the emulated LFTs)
 * -> the SMA handler of the target node computes the answer -> route the
 * answer back -> faults (corrupt/delay) -> queue at the attachment the
 * answer reaches. recv() pops from the queues, advancing virtual time when
 * nothing is ready instead of sleeping.
 *
 * Invariants: the link structure of the copy never changes after creation
 * (link down/up events only change phys state, so a link comes back to the
 * same peer); a port forwards only while its phys state is LinkUp; every
 * answer is computed from the state at the time of the request.
 *
 * Corruption is always detectable by a careful receiver (length, versions,
 * class, method, attribute, TID or D bit): on a real link the ICRC/VCRC
 * drop corrupt packets, so silently wrong payloads are not a fault a real
 * fabric produces.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mad/codec.h"
#include "lib/err.h"
#include "lib/clock.h"
#include "mock/mock.h"

#define NONE UINT32_MAX
#define PHYS_POLLING 2
#define PHYS_LINKUP 5
#define MAX_LID_HOPS 64
#define SM_MOCK_IDLE_POLL_US 1000
#define PORT_CAP_IS_SM 0x00000002u
#define PORT_CAP_HAS_TRAP 0x00000008u
#define PORT_CAP_SM_DISABLED 0x00000400u

struct mport {
	uint64_t gid_prefix;
	uint64_t mkey;
	uint32_t sets;
	uint16_t lid;
	uint16_t sm_lid;
	uint8_t lmc;
	uint8_t state;
	uint8_t phys;
	uint8_t sm_sl;
	uint8_t subnet_timeout;
	uint8_t link_event_down;   /* taken down by sm_mock_link_down */
	/* M_Key state (switches: port 0's; CAs: per port), see the M_Key block */
	uint8_t mkey_prot;         /* M_KeyProtectBits */
	uint16_t mkey_lease;       /* M_KeyLeasePeriod, seconds */
	uint16_t mkey_violations;  /* M_KeyViolations (saturates) */
	uint64_t lease_end;        /* lease timer deadline (mock time), 0 = not running */
};

struct mnode {
	uint8_t *lft;              /* lft_len entries, grown on Set */
	uint32_t lft_len;
	uint32_t blocks_set;
	uint16_t lft_cap;
	uint16_t lft_top;
	uint8_t psc;               /* SwitchInfo.PortStateChange */
	uint8_t life;              /* SwitchInfo.LifeTimeValue */
	uint8_t hostile;           /* enum sm_mock_hostile */
	uint32_t hostile_arg;
	uint32_t hostile_n;        /* answers given while hostile */
	uint32_t flip_n;           /* NodeInfo answers given while TYPE_FLIP */
};

struct qent {
	uint64_t release;
	uint16_t len;
	uint16_t slid;
	uint8_t mad[SM_MAD_SIZE];
};

struct mqueue {
	struct qent *e;
	uint32_t head, len, cap;   /* ring */
};

struct attach {
	struct sm_transport t;     /* first: the transport handed out */
	struct sm_mock *m;
	uint32_t port;             /* port index */
	uint32_t node;
	struct mqueue ready;
	struct mqueue delayed;
	int open;
};

struct sm_mock {
	struct sm_fabric *f;
	struct mport *ports;
	struct mnode *nodes;
	struct attach **att;
	uint32_t n_att, cap_att;
	struct sm_mock_cfg cfg;
	uint64_t rng;
	uint64_t vnow;             /* virtual time, us */
	uint64_t real0;            /* CLOCK_MONOTONIC at creation (real_time mode) */
	uint64_t trap_tid;
	int lose_answer;           /* the drop fault hit the answer of the request being handled */
	struct sm_mock_stats st;
};

static const struct sm_transport_ops mock_ops;

/* ---- small helpers ---- */

static uint64_t rng_next(struct sm_mock *m)
{
	/* xorshift64*: deterministic for a seed, good enough for fault shares */
	uint64_t x = m->rng;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	m->rng = x;
	return x * 0x2545F4914F6CDD1DULL;
}

static int roll(struct sm_mock *m, uint32_t ppm)
{
	if (!ppm)
		return 0;
	return (rng_next(m) >> 11) % 1000000u < ppm;
}

uint64_t sm_mock_now_us(const struct sm_mock *m)
{
	return m->cfg.real_time ? sm_mono_us() - m->real0 : m->vnow;
}

void sm_mock_advance_us(struct sm_mock *m, uint64_t us)
{
	if (!m->cfg.real_time)
		m->vnow += us;
}

void sm_mock_cfg_default(struct sm_mock_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->seed = 1;
	cfg->lft_cap = 0xC000;
}

static int q_push(struct mqueue *q, const uint8_t *mad, size_t len, uint16_t slid, uint64_t release)
{
	struct qent *e;

	if (q->len == q->cap) {
		uint32_t nc = q->cap ? q->cap * 2 : 64;
		struct qent *ne = malloc((size_t)nc * sizeof(*ne));
		if (!ne)
			return -ENOMEM;
		for (uint32_t i = 0; i < q->len; i++)
			ne[i] = q->e[(q->head + i) % q->cap];
		free(q->e);
		q->e = ne;
		q->head = 0;
		q->cap = nc;
	}
	e = &q->e[(q->head + q->len) % q->cap];
	e->release = release;
	e->len = (uint16_t)len;
	e->slid = slid;
	memcpy(e->mad, mad, len);
	q->len++;
	return 0;
}

static const struct qent *q_front(const struct mqueue *q)
{
	return q->len ? &q->e[q->head] : NULL;
}

static void q_pop(struct mqueue *q)
{
	q->head = (q->head + 1) % q->cap;
	q->len--;
}

/* ---- construction ---- */

static int copy_fabric(const struct sm_fabric *src, struct sm_fabric **out)
{
	struct sm_fabric *f = sm_fabric_new();
	int rc = -ENOMEM;

	if (!f)
		return -ENOMEM;
	if (sm_fabric_reserve(f, src->n_nodes, src->n_ports) < 0)
		goto fail;
	for (unsigned p = 0; p < src->n_planes; p++) {
		rc = sm_fabric_add_plane(f, p, src->planes[p].name);
		if (rc < 0)
			goto fail;
		f->planes[p].subnet_prefix = src->planes[p].subnet_prefix;
		f->planes[p].sm_lid = src->planes[p].sm_lid;
		f->planes[p].sm_port = src->planes[p].sm_port;
	}
	for (uint32_t n = 0; n < src->n_nodes; n++) {
		const struct sm_node *sn = &src->nodes[n];
		const struct sm_port *sp0 = &src->ports[sn->port0];
		int64_t idx = sm_fabric_add_node(f, sn->type, sn->guid, sn->nports, sn->plane,
						 sn->type == SM_NODE_SWITCH ? sp0->guid : 0);
		struct sm_node *dn;

		if (idx < 0) {
			rc = (int)idx;
			goto fail;
		}
		if ((uint32_t)idx != n) {
			rc = -EINVAL;
			goto fail;
		}
		dn = &f->nodes[n];
		dn->sysimg_guid = sn->sysimg_guid;
		dn->vendor_id = sn->vendor_id;
		dn->device_id = sn->device_id;
		dn->revision = sn->revision;
		dn->lft_cap = sn->lft_cap;
		dn->flags = sn->flags;
		sm_fabric_set_desc(f, n, sn->desc);
		for (unsigned p = 0; p <= sn->nports; p++) {
			const struct sm_port *sp = &src->ports[sn->port0 + p];
			struct sm_port *dp = &f->ports[dn->port0 + p];
			if (sn->type != SM_NODE_SWITCH && p > 0 && sp->guid) {
				rc = sm_fabric_set_port_guid(f, n, p, sp->guid);
				if (rc < 0)
					goto fail;
			}
			dp->width = sp->width;
			dp->speed = sp->speed;
			dp->flags = sp->flags;
			dp->lid = sp->lid;
			dp->lmc = sp->lmc;
			dp->state = sp->state;
			dp->phys_state = sp->phys_state;
		}
	}
	for (uint32_t n = 0; n < src->n_nodes; n++) {
		const struct sm_node *sn = &src->nodes[n];
		for (unsigned p = 1; p <= sn->nports; p++) {
			const struct sm_port *sp = &src->ports[sn->port0 + p];
			if (sp->peer_node == SM_NONE)
				continue;
			if (sp->peer_node < n || (sp->peer_node == n && sp->peer_port < p))
				continue;
			rc = sm_fabric_link(f, n, p, sp->peer_node, sp->peer_port);
			if (rc < 0)
				goto fail;
		}
	}
	*out = f;
	return 0;
fail:
	sm_fabric_free(f);
	return rc;
}

int sm_mock_new(const struct sm_fabric *src, const struct sm_mock_cfg *cfg, struct sm_mock **out,
		char *err, size_t errlen)
{
	struct sm_mock *m;
	int rc;

	*out = NULL;
	if (!src || src->n_nodes == 0) {
		sm_errf(err, errlen, "%s", "mock: empty fabric");
		return -EINVAL;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		goto nomem;
	if (cfg)
		m->cfg = *cfg;
	else
		sm_mock_cfg_default(&m->cfg);
	if (!m->cfg.lft_cap || m->cfg.lft_cap > SM_LID_SPACE)
		m->cfg.lft_cap = SM_LID_SPACE;
	if (m->cfg.delay_ppm && !m->cfg.delay_us)
		m->cfg.delay_us = 50000;
	m->rng = m->cfg.seed ? m->cfg.seed * 0x9E3779B97F4A7C15ULL : 0x9E3779B97F4A7C15ULL;
	m->real0 = sm_mono_us();
	m->trap_tid = 0x80000000u;
	rc = copy_fabric(src, &m->f);
	if (rc < 0) {
		free(m);
		if (rc == -ENOMEM)
			goto nomem;
		sm_errf(err, errlen, "%s", "mock: cannot copy the fabric model (inconsistent links or GUIDs)");
		return rc;
	}
	m->ports = calloc(m->f->n_ports, sizeof(*m->ports));
	m->nodes = calloc(m->f->n_nodes, sizeof(*m->nodes));
	if (!m->ports || !m->nodes) {
		sm_mock_free(m);
		goto nomem;
	}
	for (uint32_t n = 0; n < m->f->n_nodes; n++) {
		const struct sm_node *nd = &m->f->nodes[n];
		struct mnode *mn = &m->nodes[n];
		if (nd->type == SM_NODE_SWITCH) {
			mn->lft_cap = nd->lft_cap && nd->lft_cap <= SM_LID_SPACE ? nd->lft_cap : m->cfg.lft_cap;
			mn->life = 18;
		}
		for (unsigned p = 0; p <= nd->nports; p++) {
			const struct sm_port *fp = &m->f->ports[nd->port0 + p];
			struct mport *mp = &m->ports[nd->port0 + p];
			int up = p == 0 ? nd->type == SM_NODE_SWITCH : fp->peer_node != SM_NONE;

			mp->phys = up ? PHYS_LINKUP : PHYS_POLLING;
			mp->state = up ? SM_PORT_INIT : SM_PORT_DOWN;
			mp->gid_prefix = 0xfe80000000000000ULL;
			if (m->cfg.keep_state) {
				mp->lid = fp->lid;
				mp->lmc = fp->lmc;
				if (up && fp->state >= SM_PORT_INIT && fp->state <= SM_PORT_ACTIVE)
					mp->state = fp->state;
				if (m->f->planes[nd->plane].subnet_prefix)
					mp->gid_prefix = m->f->planes[nd->plane].subnet_prefix;
				mp->sm_lid = m->f->planes[nd->plane].sm_lid;
			}
		}
	}
	*out = m;
	return 0;
nomem:
	sm_errf(err, errlen, "%s", "mock: out of memory");
	return -ENOMEM;
}

void sm_mock_free(struct sm_mock *m)
{
	if (!m)
		return;
	for (uint32_t i = 0; i < m->n_att; i++) {
		struct attach *a = m->att[i];
		if (!a)
			continue;
		if (a->open) {
			/* still open: detach so a later close only frees it */
			a->m = NULL;
			continue;
		}
		free(a->ready.e);
		free(a->delayed.e);
		free(a);
	}
	free(m->att);
	if (m->nodes && m->f)
		for (uint32_t n = 0; n < m->f->n_nodes; n++)
			free(m->nodes[n].lft);
	free(m->nodes);
	free(m->ports);
	sm_fabric_free(m->f);
	free(m);
}

const struct sm_fabric *sm_mock_fabric(const struct sm_mock *m)
{
	return m->f;
}

uint32_t sm_mock_default_port(const struct sm_mock *m, unsigned plane)
{
	for (uint32_t n = 0; n < m->f->n_nodes; n++) {
		const struct sm_node *nd = &m->f->nodes[n];
		if (nd->plane != plane || nd->type == SM_NODE_SWITCH)
			continue;
		for (unsigned p = 1; p <= nd->nports; p++) {
			uint32_t pi = nd->port0 + p;
			if (m->f->ports[pi].peer_node != SM_NONE && m->ports[pi].phys == PHYS_LINKUP)
				return pi;
		}
	}
	return SM_NONE;
}

/* ---- state accessors ---- */

int sm_mock_port_state(const struct sm_mock *m, uint32_t pi, struct sm_mock_port_state *st)
{
	const struct mport *mp;

	if (pi >= m->f->n_ports)
		return -EINVAL;
	mp = &m->ports[pi];
	st->lid = mp->lid;
	st->lmc = mp->lmc;
	st->state = mp->state;
	st->phys_state = mp->phys;
	st->sm_lid = mp->sm_lid;
	st->sm_sl = mp->sm_sl;
	st->gid_prefix = mp->gid_prefix;
	st->mkey = mp->mkey;
	st->mkey_prot_bits = mp->mkey_prot;
	st->mkey_lease_period = mp->mkey_lease;
	st->mkey_violations = mp->mkey_violations;
	st->sets = mp->sets;
	return 0;
}

uint8_t sm_mock_lft_get(const struct sm_mock *m, uint32_t node, uint16_t lid)
{
	const struct mnode *mn;

	if (node >= m->f->n_nodes || m->f->nodes[node].type != SM_NODE_SWITCH)
		return SM_LFT_NO_PORT;
	mn = &m->nodes[node];
	return lid < mn->lft_len ? mn->lft[lid] : SM_LFT_NO_PORT;
}

uint16_t sm_mock_lft_top(const struct sm_mock *m, uint32_t node)
{
	if (node >= m->f->n_nodes || m->f->nodes[node].type != SM_NODE_SWITCH)
		return 0;
	return m->nodes[node].lft_top;
}

uint32_t sm_mock_lft_blocks_set(const struct sm_mock *m, uint32_t node)
{
	if (node >= m->f->n_nodes || m->f->nodes[node].type != SM_NODE_SWITCH)
		return 0;
	return m->nodes[node].blocks_set;
}

static int lft_grow(struct mnode *mn, uint32_t len)
{
	uint8_t *nl;

	if (len <= mn->lft_len)
		return 0;
	nl = realloc(mn->lft, len);
	if (!nl)
		return -ENOMEM;
	memset(nl + mn->lft_len, SM_LFT_NO_PORT, len - mn->lft_len);
	mn->lft = nl;
	mn->lft_len = len;
	return 0;
}

int sm_mock_lft_poke(struct sm_mock *m, uint32_t node, uint16_t lid, uint8_t port)
{
	struct mnode *mn;
	int rc;

	if (node >= m->f->n_nodes || m->f->nodes[node].type != SM_NODE_SWITCH ||
	    lid >= m->nodes[node].lft_cap)
		return -EINVAL;
	mn = &m->nodes[node];
	rc = lft_grow(mn, ((uint32_t)lid / SM_LFT_BLOCK + 1) * SM_LFT_BLOCK);
	if (rc < 0)
		return rc;
	mn->lft[lid] = port;
	return 0;
}

void sm_mock_stats(const struct sm_mock *m, struct sm_mock_stats *st)
{
	*st = m->st;
}

void sm_mock_set_faults(struct sm_mock *m, uint32_t drop_ppm, uint32_t corrupt_ppm,
			uint32_t delay_ppm, uint32_t delay_us)
{
	m->cfg.drop_ppm = drop_ppm;
	m->cfg.corrupt_ppm = corrupt_ppm;
	m->cfg.delay_ppm = delay_ppm;
	m->cfg.delay_us = delay_ppm && !delay_us ? 50000 : delay_us;
}

/* ---- SMA: answers of one node ---- */

static int mock_refresh(struct sm_transport *t);

static struct attach *attachment_at(const struct sm_mock *m, uint32_t pi)
{
	for (uint32_t i = 0; i < m->n_att; i++)
		if (m->att[i] && m->att[i]->open && m->att[i]->port == pi)
			return m->att[i];
	return NULL;
}


/* LID (base) and LMC a port answers for: switch external ports use port 0's. */
static const struct mport *lid_port(const struct sm_mock *m, uint32_t n, unsigned p)
{
	const struct sm_node *nd = &m->f->nodes[n];

	return &m->ports[nd->port0 + (nd->type == SM_NODE_SWITCH ? 0 : p)];
}

static int port_has_lid(const struct sm_mock *m, uint32_t n, unsigned p, uint16_t lid)
{
	const struct mport *mp = lid_port(m, n, p);

	return mp->lid && lid >= mp->lid && lid < mp->lid + (1u << mp->lmc);
}

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
	pi->neighbor_mtu = 5;                     /* 4096 */
	pi->mtu_cap = 5;
	pi->vl_cap = 4;                           /* VL0-7 */
	pi->operational_vls = 4;
	pi->vl_arb_high_cap = 8;
	pi->vl_arb_low_cap = 8;
	pi->hoq_life = 16;
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
	struct sm_switch_info si;

	if (nd->type != SM_NODE_SWITCH)
		return SM_MAD_STATUS_ATTR_UNSUPP;
	if (s->method == SM_METHOD_SET) {
		struct sm_switch_info req;
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
		if (lft_grow(mn, base + SM_LFT_BLOCK) < 0)
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

/* ---- M_Key checking (IBA 14.2.4) ----
 *
 * The SMA's key is port 0's on a switch and the arrival port's on a CA.
 * A key of 0 disables the check. An SMP whose M_Key differs:
 *   Get, protect bits 0: answered, PortInfo.M_Key shown;
 *   Get, protect bits 1: answered, PortInfo.M_Key reads 0;
 *   Get, protect bits 2 or 3, and every Set: dropped (no answer),
 *   M_KeyViolations counted, and the lease timer started if the lease
 *   period is not 0 and the timer is not running.
 * An SMP with the right key stops a running timer. When the timer runs
 * out (checked on the next SMP to the port: mock time only moves then),
 * the protect bits are cleared, so any SM can read the key (level 0) and
 * take the port over, as the lease is meant to allow. Not emulated: Trap
 * 256 (Bad M_Key) to the SM, and the difference between levels 2 and 3.
 */
#define SMA_DROP 0xFFFFu        /* sma(): no answer at all */

enum { MKEY_PASS, MKEY_HIDE, MKEY_FAIL };

static struct mport *mkey_port(struct sm_mock *m, uint32_t n, unsigned inp)
{
	const struct sm_node *nd = &m->f->nodes[n];
	return &m->ports[nd->port0 + (nd->type == SM_NODE_SWITCH ? 0 : inp)];
}

static int mkey_check(struct sm_mock *m, uint32_t n, unsigned inp, const struct sm_smp *s)
{
	struct mport *mp = mkey_port(m, n, inp);
	uint64_t now = sm_mock_now_us(m);

	if (mp->lease_end && now >= mp->lease_end) {
		mp->mkey_prot = 0;
		mp->lease_end = 0;
		m->st.mkey_leases_expired++;
	}
	if (!mp->mkey || s->mkey == mp->mkey) {
		mp->lease_end = 0;
		return MKEY_PASS;
	}
	if (s->method == SM_METHOD_GET && mp->mkey_prot < 2)
		return mp->mkey_prot ? MKEY_HIDE : MKEY_PASS;
	if (mp->mkey_violations < 0xFFFF)
		mp->mkey_violations++;
	m->st.mkey_violations++;
	if (mp->mkey_lease && !mp->lease_end)
		mp->lease_end = now + (uint64_t)mp->mkey_lease * 1000000u;
	return MKEY_FAIL;
}

int sm_mock_set_mkey(struct sm_mock *m, uint32_t port_index, uint64_t mkey, uint8_t prot_bits,
		     uint16_t lease_period)
{
	struct mport *mp;
	const struct sm_port *fp;

	if (port_index >= m->f->n_ports || prot_bits > 3)
		return -EINVAL;
	fp = &m->f->ports[port_index];
	if (fp->node >= m->f->n_nodes)
		return -EINVAL;
	mp = mkey_port(m, fp->node, fp->num);
	mp->mkey = mkey;
	mp->mkey_prot = prot_bits;
	mp->mkey_lease = lease_period;
	mp->lease_end = 0;
	return 0;
}

/* Compute the SMA's answer in place. Returns the MAD status, or SMA_DROP. */
static uint16_t sma(struct sm_mock *m, uint32_t n, unsigned inp, struct sm_smp *s)
{
	int mk;

	if (s->method != SM_METHOD_GET && s->method != SM_METHOD_SET) {
		m->st.bad_requests++;
		return SM_MAD_STATUS_METHOD_UNSUPP;
	}
	mk = mkey_check(m, n, inp, s);
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
	default:
		/* SMInfo included: no other SM lives in the mock */
		m->st.bad_requests++;
		return SM_MAD_STATUS_ATTR_UNSUPP;
	}
}

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
static int route_lid(const struct sm_mock *m, uint32_t n, unsigned outp, uint16_t dlid,
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

static struct attach *attachment_with_lid(const struct sm_mock *m, uint16_t lid)
{
	for (uint32_t i = 0; i < m->n_att; i++) {
		struct attach *a = m->att[i];
		if (a && a->open && a->node < m->f->n_nodes &&
		    port_has_lid(m, a->node, m->f->ports[a->port].num, lid))
			return a;
	}
	return NULL;
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
static void hostile_apply(struct sm_mock *m, uint32_t n, struct sm_smp *s, size_t *len)
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

/* Queue an answer at attachment a, applying corrupt/delay faults. */
static void deliver(struct sm_mock *m, struct attach *a, const struct sm_smp *resp, uint16_t slid,
		    int faults, size_t len)
{
	uint8_t wire[SM_MAD_SIZE];
	uint64_t release = 0;

	if (faults && m->lose_answer)
		return;
	if (sm_smp_encode(resp, wire) < 0)
		return;
	if (faults && roll(m, m->cfg.corrupt_ppm)) {
		m->st.fault_corrupted++;
		switch (rng_next(m) % 6) {
		case 0: len = 24 + rng_next(m) % 200; break;         /* truncated */
		case 1: wire[0] ^= 0x02; break;                      /* base version */
		case 2: wire[2] ^= 0x04; break;                      /* class version */
		case 3: wire[17] ^= 0x40; break;                     /* attribute id */
		case 4: wire[15] ^= 0x5A; wire[12] ^= 0x01; break;   /* TID */
		default:                                             /* method / D bit */
			if (resp->mgmt_class == SM_CLASS_SMI_DR)
				wire[4] ^= 0x80;
			else
				wire[3] ^= 0x80;
			break;
		}
	}
	if (faults && roll(m, m->cfg.delay_ppm)) {
		m->st.fault_delayed++;
		release = sm_mock_now_us(m) + m->cfg.delay_us;
		if (q_push(&a->delayed, wire, len, slid, release) == 0)
			m->st.answered++;
		return;
	}
	if (q_push(&a->ready, wire, len, slid, 0) == 0)
		m->st.answered++;
}

static void handle_dr(struct sm_mock *m, struct attach *a, struct sm_smp *s)
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
	status = sma(m, n, inp, s);
	if (status == SMA_DROP)
		return;
	sm_smp_make_response(s, s, status);
	s->hop_ptr = 0;   /* as it arrives back at the SM */
	size_t len = SM_MAD_SIZE;
	hostile_apply(m, n, s, &len);
	deliver(m, a, s, 0, 1, len);
}

static void handle_lid(struct sm_mock *m, struct attach *a, struct sm_smp *s, uint16_t dlid)
{
	unsigned smp_port = m->f->ports[a->port].num;
	const struct mport *sp = &m->ports[a->port];
	uint32_t dn, rn;
	unsigned dp, rp;
	uint16_t status;

	if (!sp->lid || route_lid(m, a->node, smp_port, dlid, &dn, &dp) < 0) {
		m->st.lid_dropped++;
		return;
	}
	if (s->method == SM_METHOD_TRAP_REPRESS) {
		m->st.trap_represses++;
		return;
	}
	status = sma(m, dn, dp, s);
	if (status == SMA_DROP)
		return;
	sm_smp_make_response(s, s, status);
	/* the answer travels back to the SM's LID */
	if (route_lid(m, dn, m->f->nodes[dn].type == SM_NODE_SWITCH ? 0 : dp, sp->lid, &rn, &rp) < 0 ||
	    m->f->nodes[rn].port0 + rp != a->port) {
		m->st.lid_dropped++;
		return;
	}
	size_t len = SM_MAD_SIZE;
	hostile_apply(m, dn, s, &len);
	deliver(m, a, s, lid_port(m, dn, dp)->lid, 1, len);
}

/* ---- transport ops ---- */

static int mock_send(struct sm_transport *t, const uint8_t *mad, size_t len, uint16_t dlid,
		     unsigned resp_timeout_ms)
{
	struct attach *a = (struct attach *)t;
	struct sm_mock *m = a->m;
	struct sm_smp s;

	(void)resp_timeout_ms;
	if (!m)
		return -ENODEV;
	m->st.requests++;
	if (sm_smp_decode(mad, len, &s, NULL) < 0) {
		m->st.bad_requests++;
		return 0;   /* a real fabric drops it silently */
	}
	if (s.method == SM_METHOD_GET_RESP) {
		m->st.bad_requests++;
		return 0;
	}
	if (roll(m, m->cfg.drop_ppm)) {
		m->st.fault_dropped++;
		/* half the losses hit the answer: the SMA did act on the request */
		if (!(rng_next(m) & 1))
			return 0;
		m->lose_answer = 1;
	}
	if (s.mgmt_class == SM_CLASS_SMI_DR)
		handle_dr(m, a, &s);
	else
		handle_lid(m, a, &s, dlid);
	m->lose_answer = 0;
	return 0;
}

static int mock_recv(struct sm_transport *t, uint8_t *buf, size_t cap, size_t *len,
		     struct sm_mad_addr *from, int timeout_ms)
{
	struct attach *a = (struct attach *)t;
	struct sm_mock *m = a->m;
	const struct qent *e;
	uint64_t now, deadline;

	if (!m)
		return -ENODEV;
	now = sm_mock_now_us(m);
	deadline = timeout_ms < 0 ? UINT64_MAX : now + (uint64_t)timeout_ms * 1000u;
	for (;;) {
		struct mqueue *q = NULL;

		if (a->ready.len) {
			q = &a->ready;
		} else if (a->delayed.len) {
			const struct qent *d = q_front(&a->delayed);
			if (d->release <= now) {
				q = &a->delayed;
			} else if (d->release <= deadline) {
				if (m->cfg.real_time) {
					struct timespec ts = { 0, (long)(d->release - now) * 1000L };
					if (d->release - now >= 1000000u) {
						ts.tv_sec = (time_t)((d->release - now) / 1000000u);
						ts.tv_nsec = (long)((d->release - now) % 1000000u) * 1000L;
					}
					nanosleep(&ts, NULL);
				} else {
					m->vnow = d->release;
				}
				now = sm_mock_now_us(m);
				continue;
			}
		}
		if (q) {
			e = q_front(q);
			if (cap < e->len)
				return -EMSGSIZE;
			memcpy(buf, e->mad, e->len);
			*len = e->len;
			if (from) {
				from->slid = e->slid;
				from->sl = 0;
			}
			q_pop(q);
			return 0;
		}
		/* nothing will arrive before the deadline */
		if (timeout_ms > 0) {
			if (m->cfg.real_time) {
				struct timespec ts = { timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000L };
				nanosleep(&ts, NULL);
			} else {
				m->vnow = deadline;
			}
		} else if (timeout_ms == 0 && !m->cfg.real_time) {
			/* an empty non-blocking poll lets a little virtual time pass, so a
			 * loop of polls (several planes, one thread) reaches its timeouts */
			m->vnow += SM_MOCK_IDLE_POLL_US;
		}
		return -ETIMEDOUT;
	}
}

static uint64_t mock_now(struct sm_transport *t)
{
	struct attach *a = (struct attach *)t;

	return a->m ? sm_mock_now_us(a->m) : 0;
}

static int mock_refresh(struct sm_transport *t)
{
	struct attach *a = (struct attach *)t;
	const struct mport *mp;

	if (!a->m)
		return -ENODEV;
	mp = &a->m->ports[a->port];
	t->info.lid = mp->lid;
	t->info.lmc = mp->lmc;
	t->info.sm_lid = mp->sm_lid;
	t->info.state = mp->state;
	t->info.phys_state = mp->phys;
	t->info.gid_prefix = mp->gid_prefix;
	return 0;
}

static void mock_close(struct sm_transport *t)
{
	struct attach *a = (struct attach *)t;

	a->open = 0;
	if (!a->m) {
		/* the mock is gone already */
		free(a->ready.e);
		free(a->delayed.e);
		free(a);
		return;
	}
	a->ready.len = 0;
	a->delayed.len = 0;
}

static const struct sm_transport_ops mock_ops = {
	.size = sizeof(struct sm_transport_ops),
	.version = SM_TRANSPORT_OPS_VERSION,
	.name = "mock",
	.send = mock_send,
	.recv = mock_recv,
	.fd = NULL,
	.now_us = mock_now,
	.refresh = mock_refresh,
	.close = mock_close,
};

int sm_mock_attach(struct sm_mock *m, uint32_t pi, struct sm_transport **out)
{
	const struct sm_port *fp;
	const struct sm_node *nd;
	struct attach *a = NULL;

	*out = NULL;
	if (pi >= m->f->n_ports)
		return -EINVAL;
	fp = &m->f->ports[pi];
	nd = &m->f->nodes[fp->node];
	if (nd->type == SM_NODE_SWITCH || fp->num == 0)
		return -EINVAL;
	for (uint32_t i = 0; i < m->n_att; i++) {
		if (m->att[i]->port != pi)
			continue;
		if (m->att[i]->open)
			return -EBUSY;
		a = m->att[i];   /* reuse a closed attachment */
	}
	if (!a) {
		if (m->n_att == m->cap_att) {
			uint32_t nc = m->cap_att ? m->cap_att * 2 : 4;
			struct attach **na = realloc(m->att, (size_t)nc * sizeof(*na));
			if (!na)
				return -ENOMEM;
			m->att = na;
			m->cap_att = nc;
		}
		a = calloc(1, sizeof(*a));
		if (!a)
			return -ENOMEM;
		m->att[m->n_att++] = a;
	}
	a->m = m;
	a->port = pi;
	a->node = fp->node;
	a->open = 1;
	a->t.ops = &mock_ops;
	a->t.priv = a;
	memset(&a->t.info, 0, sizeof(a->t.info));
	snprintf(a->t.info.ca_name, sizeof(a->t.info.ca_name), "mock");
	a->t.info.port_num = fp->num;
	a->t.info.port_guid = fp->guid;
	a->t.info.node_guid = nd->guid;
	mock_refresh(&a->t);
	*out = &a->t;
	return 0;
}

/* ---- link events ---- */

static void send_trap128(struct sm_mock *m, uint32_t sw)
{
	const struct mport *p0 = &m->ports[m->f->nodes[sw].port0];
	struct attach *a;
	struct sm_smp s;
	struct sm_notice nt;

	uint32_t dn;
	unsigned dp;

	if (!p0->lid || !p0->sm_lid)
		return;
	/* the trap travels like any LID-routed packet: no route, no trap */
	a = attachment_with_lid(m, p0->sm_lid);
	if (!a || route_lid(m, sw, 0, p0->sm_lid, &dn, &dp) < 0 ||
	    m->f->nodes[dn].port0 + dp != a->port) {
		m->st.traps_lost++;
		return;
	}
	sm_smp_init_lid(&s, SM_METHOD_TRAP, SM_ATTR_NOTICE, 0);
	s.tid = m->trap_tid++;
	sm_notice_trap128(&nt, p0->lid);
	sm_notice_encode(&nt, s.data);
	m->st.traps_sent++;
	deliver(m, a, &s, p0->lid, 0, SM_MAD_SIZE);
}

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
			send_trap128(m, en);
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
