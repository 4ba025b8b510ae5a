/* SPDX-License-Identifier: MIT */
/*
 * DOC: port configuration phase (phases.h, settings in portcfg.h)
 *
 * After the LFTs and before activation, as OpenSM's link and QoS managers
 * do, every port that is up gets what cfg.portcfg says, and only where the
 * port holds something else:
 *
 *  1. PortInfo, compared with what the sweep read: NeighborMTU (smaller
 *     MTUCap of the two ends), OperationalVLs (smaller VLCap, capped by
 *     max_op_vls), HOQLife and VLStallCount of switch ports (leaf values
 *     towards CAs and routers), VLHighLimit (QoS), partition enforcement on
 *     switch ports facing CAs and routers, and the forced link width/speed.
 *     One Set per port that differs; the answer goes into the sweep tables,
 *     so the ARMED Set of the activate phase carries the same values.
 *  2. With QoS on, the tables are read, in the same round: VLArbitration
 *     blocks of every port (as many as its VLArbitration caps hold), the
 *     SL2VL table of every CA port and, per switch output port, one
 *     (input, output) pair. A VLArb block or a CA's SL2VL that differs is
 *     Set as soon as its Get answers. On a switch without optimised SL2VL
 *     programming (SwitchInfo), once every Get answered, the output port's
 *     table goes to every input port (one Set per pair, as OpenSM, but
 *     only for the output ports whose pair read differs), queued a port
 *     at a time (sm_core_throttle: 5.5 M Sets under ibsim at 16k hosts
 *     held 1.4 GB when the Get's answer queued them).
 *     Cold ports (PortState INIT: the link came up since an SM last
 *     activated it; after a reset its tables are the reset's) are not read:
 *     a Get costs what the Set costs, so their VLArb blocks and CA SL2VL are
 *     Set at once and an optimised switch's ports count as differing
 *     (round 3). A switch without optimised programming is still read (one
 *     Get per output port stands for nports + 1 Sets). On a cold 2,048-host
 *     plane this halves the phase's SMPs (49,728 to 24,864); a warm sweep
 *     (ports ACTIVE) reads as before and writes nothing that is right.
 *  3. Switches with optimised programming: if two or more ports that want
 *     the table most ports want differ, one Set for every input and output
 *     port (attribute modifier bits 16, 17), then one "every input port" Set
 *     per output port that wants another table (other OperationalVLs); else
 *     only the output ports that differ get theirs (a link that came back
 *     on a running switch: that port alone). OpenSM without
 *     use_optimized_slvl (its default) writes every pair, read or not: about
 *     (ports+1) x ports Sets per switch.
 *
 * Tables are masked as OpenSM masks them: a VL above the port's
 * OperationalVLs keeps its low bits (VL & (2^(OperationalVLs-1) - 1)),
 * SL2VL's VL15 stays 15.
 *
 * QoS is on by default where OpenSM has it off: with OperationalVLs at
 * VL0-7 (as both SMs set on the same fabric) and the tables as the reset
 * left them, the extra VLs carry nothing or whatever another SM wrote;
 * OpenSM's own qos_* defaults are a sound configuration, written once:
 * a second sweep reads them back and writes nothing. `qos: {enabled:
 * false}` leaves the tables and VLHighLimit alone, as OpenSM does.
 *
 * With the daemon's per-plane state, a heavy sweep reads nothing of a
 * switch port whose tables the last successful bring-up left right with
 * the same settings, when the switch is trusted as for its LFT blocks (same
 * GUID, its port 0 LID and LinearFDBTop as we left them: it did not reset)
 * and the port's OperationalVLs and caps are unchanged (c->tab.qos_ok,
 * handed to the state with the sweep tables). CA ports are always read.
 *
 * Limitation (stated): only one input port per switch output port is
 * read (reading every pair would cost what OpenSM's writing costs);
 * another SM writing a single pair behind our back is not seen (the same
 * limit as LFT blocks, and `smctl resweep --heavy` forgets the state).
 * An incremental sweep (sm.h) reads the tables of the ports of the links
 * that came up (c->delta_fresh) only: nothing else of a port changed; and
 * after a configuration that left every port settled (tables.h pi_sig,
 * same settings) it computes PortInfo only for the ports of the nodes it
 * read or added and of their peers (pi_settled; at 40k hosts the other
 * 315k ports cost ~5-8 ms and asked nothing).
 */
#include "sm/phases.h"
#include "sm/portcfg.h"
#include "sm/state.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

enum { PC_PI_SET = 1, PC_SL2VL_GET, PC_SL2VL_SET, PC_VLARB_GET, PC_VLARB_SET };
#define PC_OP(aux) ((aux) & 0x0F)
#define PC_BLOCK(aux) ((aux) >> 4)
#define PC_AUX(op, block) ((uint8_t)((op) | (block) << 4))
#define PORT_CAP_HAS_EXT_SPEEDS 0x00004000u

struct sm_portcfg_run {
	const struct sm_portcfg *pc;
	struct sm_summary *sum;
	uint8_t *opvls;        /* per port index: OperationalVLs the tables are masked for; 0: not configured */
	uint8_t *sl2vl_diff;   /* per port index: switch output port whose pair read differs (rounds 2, 3) */
	uint64_t sig;          /* of the QoS settings (tables.h qos_sig) */
	uint64_t pi_sig;       /* of the PortInfo settings (tables.h pi_sig) */
	int pi_off;            /* a PortInfo Set failed or its answer holds other values: pi_sig not kept */
	unsigned notes;        /* failed Gets noted (at most a few) */
};

static int is_sw(const struct sm_core *c, uint32_t n)
{
	return c->f->nodes[n].type == SM_NODE_SWITCH;
}

static int esp0(const struct sm_core *c, uint32_t n)
{
	return is_sw(c, n) && c->tab.si_ok[n] && c->tab.si[n].enhanced_port0;
}

static int opt_sl2vl(const struct sm_core *c, uint32_t n)
{
	return c->tab.si_ok[n] && (c->tab.si[n].opt_sl2vl & 1);
}

/* Is port p of node n one to configure: read, up, and linked to a read port (or enhanced port 0)? */
static int cfg_port(const struct sm_core *c, uint32_t n, unsigned p)
{
	uint32_t idx = c->f->nodes[n].port0 + p;
	const struct sm_port *pt = &c->f->ports[idx];
	if (!c->tab.pi_ok[idx] || !sm_port_up(&c->tab.pi[idx]))
		return 0;
	if (p == 0)
		return esp0(c, n);
	return pt->peer_node != SM_NONE && c->tab.pi_ok[sm_port_index(c->f, pt->peer_node, pt->peer_port)];
}

static const struct sm_qos_level *level_of(const struct sm_core *c, uint32_t n, unsigned p)
{
	const struct sm_portcfg *pc = c->pcr->pc;
	if (!is_sw(c, n))
		return &pc->level[SM_QOS_CA];
	return &pc->level[p ? SM_QOS_SWE : SM_QOS_SW0];
}

static uint8_t vl_mask(uint8_t opvls)
{
	return opvls ? (uint8_t)((1u << (opvls - 1)) - 1) : 0;
}

static void want_sl2vl(const struct sm_qos_level *l, uint8_t opvls, struct sm_sl2vl *t)
{
	for (unsigned sl = 0; sl < 16; sl++)
		t->vl[sl] = l->sl2vl[sl] == 15 ? 15 : (uint8_t)(l->sl2vl[sl] & vl_mask(opvls));
}

/* Entries of VLArb block 1..4 a port holds (its caps: low 1-2, high 3-4). */
static unsigned vlarb_len(const struct sm_port_info *pi, unsigned block)
{
	unsigned cap = block <= SM_VLARB_LOW_1 ? pi->vl_arb_low_cap : pi->vl_arb_high_cap;
	if (block & 1)
		return cap < SM_VLARB_ENTRIES ? cap : SM_VLARB_ENTRIES;
	return cap > SM_VLARB_ENTRIES ? cap - SM_VLARB_ENTRIES : 0;
}

static void want_vlarb(const struct sm_qos_level *l, unsigned block, unsigned len, uint8_t opvls,
		       struct sm_vlarb_block *b)
{
	const uint8_t *v = block <= SM_VLARB_LOW_1 ? l->low_vl : l->high_vl;
	const uint8_t *w = block <= SM_VLARB_LOW_1 ? l->low_w : l->high_w;
	unsigned base = block & 1 ? 0 : SM_VLARB_ENTRIES;
	memset(b, 0, sizeof(*b));
	for (unsigned i = 0; i < len; i++) {
		b->vl[i] = v[base + i] & vl_mask(opvls);
		b->weight[i] = w[base + i];
	}
}

static void on_portcfg(struct sm_core *c, const struct sm_req *rq, const struct sm_txn_result *r);

static int submit(struct sm_core *c, uint8_t method, uint16_t attr, uint32_t mod, uint32_t n, unsigned p,
		  uint16_t rq_port, uint8_t aux, const uint8_t *data)
{
	struct sm_req *rq = sm_core_req(c, SM_RQ_PORTCFG, n, rq_port, on_portcfg);
	struct sm_dr_path path;
	struct sm_smp smp;
	struct sm_summary *sum = c->pcr->sum;

	if (!rq)
		return -ENOMEM;
	rq->aux = aux;
	sm_set_port_path(c, n, p, &path);
	sm_smp_init_dr(&smp, method, attr, mod, &path);
	smp.mkey = sm_core_mkey_at(c, n, p);
	if (data)
		memcpy(smp.data, data, SM_SMP_DATA_SIZE);
	switch (PC_OP(aux)) {
	case PC_PI_SET: sum->portcfg_pi_sets++; break;
	case PC_SL2VL_GET: sum->sl2vl_gets++; break;
	case PC_SL2VL_SET: sum->sl2vl_sets++; break;
	case PC_VLARB_GET: sum->vlarb_gets++; break;
	default: sum->vlarb_sets++; break;
	}
	return sm_core_submit(c, rq, &smp);
}

/* SL2VL request of node n: rq->port carries input << 8 | output (switches), the port (CAs). */
static int sl2vl_submit(struct sm_core *c, uint8_t method, uint32_t n, unsigned in, unsigned out, uint32_t all,
			const struct sm_sl2vl *t)
{
	uint8_t data[SM_SMP_DATA_SIZE];
	int sw = is_sw(c, n);
	if (t)
		sm_sl2vl_encode(t, data);
	return submit(c, method, SM_ATTR_SL2VL, sw ? (sm_sl2vl_mod(in, out) | all) : 0, n, sw ? 0 : out,
		      (uint16_t)(sw ? in << 8 | out : out),
		      PC_AUX(method == SM_METHOD_GET ? PC_SL2VL_GET : PC_SL2VL_SET,
			     all & SM_SL2VL_ALL_OUT ? 2 : all ? 1 : 0), t ? data : NULL);
}

static int vlarb_submit(struct sm_core *c, uint8_t method, uint32_t n, unsigned p, unsigned block,
			const struct sm_vlarb_block *b)
{
	uint8_t data[SM_SMP_DATA_SIZE];
	if (b)
		sm_vlarb_encode(b, data);
	return submit(c, method, SM_ATTR_VLARB, sm_vlarb_mod(block, is_sw(c, n) ? p : 0), n, p, (uint16_t)p,
		      PC_AUX(method == SM_METHOD_GET ? PC_VLARB_GET : PC_VLARB_SET, block), b ? data : NULL);
}

/* What a forced LinkWidth/Speed(Ext)Enabled setting asks of a port: 0 nothing, else the value to hold. */
static uint8_t forced(uint8_t force, uint8_t all, uint8_t supported)
{
	if (!force)
		return 0;
	return force == all ? supported : force;
}

/*
 * The PortInfo fields port p of node n must hold, into w (a copy of what
 * it holds); *opvls gets the OperationalVLs its tables are masked for.
 */
static void want_pi(const struct sm_core *c, uint32_t n, unsigned p, struct sm_port_info *w, uint8_t *opvls)
{
	const struct sm_portcfg *pc = c->pcr->pc;
	uint32_t idx = c->f->nodes[n].port0 + p;
	const struct sm_port_info *cur = &c->tab.pi[idx];
	const struct sm_port *pt = &c->f->ports[idx];
	int sw = is_sw(c, n);

	*w = *cur;
	*opvls = cur->operational_vls ? cur->operational_vls : 1;
	if (p) {
		uint32_t pidx = sm_port_index(c->f, pt->peer_node, pt->peer_port);
		const struct sm_port_info *peer = &c->tab.pi[pidx];
		int peer_sw = c->f->nodes[pt->peer_node].type == SM_NODE_SWITCH;
		uint8_t mtu = cur->mtu_cap < peer->mtu_cap ? cur->mtu_cap : peer->mtu_cap;
		uint8_t vls = cur->vl_cap < peer->vl_cap ? cur->vl_cap : peer->vl_cap;
		uint32_t cap = sw ? c->tab.pi[c->f->nodes[n].port0].cap_mask : cur->cap_mask;
		uint32_t peer_cap = peer_sw ? c->tab.pi[c->f->nodes[pt->peer_node].port0].cap_mask : peer->cap_mask;

		w->neighbor_mtu = mtu ? mtu : 1;
		vls = vls ? vls : 1;
		*opvls = w->operational_vls = vls < pc->max_op_vls ? vls : pc->max_op_vls;
		if (sw) {
			w->hoq_life = peer_sw ? pc->hoq_life : pc->leaf_hoq_life;
			w->vl_stall_count = peer_sw ? pc->vl_stall : pc->leaf_vl_stall;
		} else if (c->f->nodes[n].type == SM_NODE_ROUTER) {
			w->hoq_life = pc->leaf_hoq_life;
		}
		if (sw && !peer_sw && c->tab.si_ok[n] && c->tab.si[n].part_enf_cap) {
			const struct sm_switch_info *si = &c->tab.si[n];
			int e = pc->part_enforce;
			if (si->inbound_enf_cap || e == SM_PART_ENF_OFF)
				w->part_enf_in = e == SM_PART_ENF_BOTH || e == SM_PART_ENF_IN;
			if (si->outbound_enf_cap || e == SM_PART_ENF_OFF)
				w->part_enf_out = e == SM_PART_ENF_BOTH || e == SM_PART_ENF_OUT;
		}
		uint8_t fw = forced(pc->force_link_width, 255, cur->link_width_supported);
		uint8_t fs = forced(pc->force_link_speed, 15, cur->link_speed_supported);
		uint8_t fe = forced(pc->force_link_speed_ext, 31, cur->link_speed_ext_supported);
		if (fw)
			w->link_width_enabled = fw;
		if (fs)
			w->link_speed_enabled = fs;
		if (fe && cur->link_speed_ext_supported && (cap & PORT_CAP_HAS_EXT_SPEEDS) &&
		    (peer_cap & PORT_CAP_HAS_EXT_SPEEDS))
			w->link_speed_ext_enabled = fe;
	}
	if (pc->qos)
		w->vl_high_limit = cur->vl_cap == 1 ? 0 : level_of(c, n, p)->high_limit;
}

static int pi_differs(const struct sm_port_info *a, const struct sm_port_info *b)
{
	return a->neighbor_mtu != b->neighbor_mtu || a->operational_vls != b->operational_vls ||
	       a->hoq_life != b->hoq_life || a->vl_stall_count != b->vl_stall_count ||
	       a->vl_high_limit != b->vl_high_limit || a->part_enf_in != b->part_enf_in ||
	       a->part_enf_out != b->part_enf_out || a->link_width_enabled != b->link_width_enabled ||
	       a->link_speed_enabled != b->link_speed_enabled ||
	       a->link_speed_ext_enabled != b->link_speed_ext_enabled;
}

static int pi_set(struct sm_core *c, uint32_t n, unsigned p, const struct sm_port_info *w)
{
	uint32_t idx = c->f->nodes[n].port0 + p;
	const struct sm_port_info *cur = &c->tab.pi[idx];
	int lid_port = !is_sw(c, n) || p == 0;
	struct sm_port_info_set s = {
		.lid = cur->lid, .lmc = cur->lmc, .sm_lid = cur->master_sm_lid, .sm_sl = cur->master_sm_sl,
		.gid_prefix = cur->gid_prefix,
		.subnet_timeout = lid_port ? c->cfg->subnet_timeout : cur->subnet_timeout,
	};
	struct sm_port_info out;
	uint8_t data[SM_SMP_DATA_SIZE];

	sm_set_keys(c, n, p, &s);
	sm_port_info_prepare_set(&out, cur, &s);
	out.neighbor_mtu = w->neighbor_mtu;
	out.operational_vls = w->operational_vls;
	out.hoq_life = w->hoq_life;
	out.vl_stall_count = w->vl_stall_count;
	out.vl_high_limit = w->vl_high_limit;
	out.part_enf_in = w->part_enf_in;
	out.part_enf_out = w->part_enf_out;
	/* "no change" (0) unless forced */
	out.link_width_enabled = w->link_width_enabled != cur->link_width_enabled ? w->link_width_enabled : 0;
	out.link_speed_enabled = w->link_speed_enabled != cur->link_speed_enabled ? w->link_speed_enabled : 0;
	out.link_speed_ext_enabled = w->link_speed_ext_enabled != cur->link_speed_ext_enabled ?
				     w->link_speed_ext_enabled : 0;
	sm_port_info_encode(&out, data);
	return submit(c, SM_METHOD_SET, SM_ATTR_PORT_INFO, p, n, p, (uint16_t)p, PC_AUX(PC_PI_SET, 0), data);
}

/* The input port whose table stands for output port out of an optimised switch. */
static unsigned sample_in(unsigned out, unsigned nports)
{
	return nports <= 1 ? 1 : out % nports + 1;
}

/* FNV-1a of what decides the tables: a reload that changes a level makes every table unknown. */
static uint64_t qos_sig(const struct sm_portcfg *pc)
{
	const uint8_t *b = (const uint8_t *)pc->level;
	uint64_t h = 0xcbf29ce484222325ULL;
	for (size_t i = 0; i < sizeof(pc->level); i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

/* Of what want_pi() reads of the settings (never 0). */
static uint64_t pi_sig(const struct sm_portcfg *pc, uint64_t qos)
{
	const uint8_t v[] = { pc->max_op_vls, pc->hoq_life, pc->leaf_hoq_life, pc->vl_stall, pc->leaf_vl_stall,
			      pc->force_link_width, pc->force_link_speed, pc->force_link_speed_ext,
			      pc->part_enforce, (uint8_t)(pc->qos != 0) };
	uint64_t h = qos ^ 0xcbf29ce484222325ULL;
	for (size_t i = 0; i < sizeof(v); i++)
		h = (h ^ v[i]) * 0x100000001b3ULL;
	return h ? h : 1;
}

/*
 * An incremental sweep after a bring-up that left every port it configured
 * as these settings want (tables.h pi_sig): may port p of node n be left
 * alone? Yes when neither its node nor its peer's had a port read by this
 * sweep nor is new (c->delta_dirty): its PortInfo, its peer's, their
 * switches' port 0 (CapabilityMask) and SwitchInfo (delta.c falls back when
 * the capabilities read change) are what the last configuration saw and
 * left, so want_pi() would ask what it holds (a link's change is read at
 * both ends: either test alone would do; both are kept). tests/test_portcfg.c
 * test_incremental_settled: a port read is configured, other settings
 * configure every port.
 */
static int pi_settled(const struct sm_core *c, uint32_t n, unsigned p)
{
	const uint8_t *dirty = c->delta_dirty;
	if (dirty[n])
		return 0;
	uint32_t peer = c->f->ports[c->f->nodes[n].port0 + p].peer_node;
	return peer == SM_NONE || !dirty[peer];
}

/*
 * Did the last successful bring-up leave the tables of port p of switch n as
 * wanted (OperationalVLs opvls), the switch not reset since? (DOC above)
 */
static int tables_known(const struct sm_core *c, uint32_t n, unsigned p, uint8_t opvls)
{
	const struct sm_state *st = c->state;
	const struct sm_fabric *sf = sm_state_fabric(st);
	if (!sf || !st->valid || !st->tab.qos_ok || st->tab.qos_sig != c->pcr->sig || !is_sw(c, n) ||
	    !c->trusted || c->trusted[n] == SM_NONE || p > sf->nodes[c->trusted[n]].nports)
		return 0;
	uint32_t sidx = sf->nodes[c->trusted[n]].port0 + p;
	const struct sm_snapshot *sn = st->snap;
	if (!st->tab.qos_ok[sidx] || !sn->pi || sidx >= sn->attr_ports || !sn->pi_ok[sidx])
		return 0;
	const struct sm_port_info *old = &sn->pi[sidx], *cur = &c->tab.pi[c->f->nodes[n].port0 + p];
	return old->operational_vls == opvls && old->vl_cap == cur->vl_cap &&
	       old->vl_arb_low_cap == cur->vl_arb_low_cap && old->vl_arb_high_cap == cur->vl_arb_high_cap;
}

/*
 * Round 1 for port p of node n: its PortInfo Set if it differs, then its
 * tables: read, or written unread when the port is in INIT (DOC: cold).
 */
static int port_round1(struct sm_core *c, uint32_t n, unsigned p, int tables)
{
	const struct sm_node *nd = &c->f->nodes[n];
	uint32_t idx = nd->port0 + p;
	const struct sm_port_info *cur = &c->tab.pi[idx];
	struct sm_port_info w;
	int rc = 0, cold;

	want_pi(c, n, p, &w, &c->pcr->opvls[idx]);
	if (pi_differs(&w, cur))
		rc = pi_set(c, n, p, &w);
	if (rc || !tables)
		return rc;
	c->tab.qos_ok[idx] = 1;   /* until a Get or Set of its fails */
	if (tables_known(c, n, p, c->pcr->opvls[idx])) {
		c->pcr->sum->tables_trusted++;
		return 0;
	}
	cold = cur->port_state == SM_PORT_INIT;
	const struct sm_qos_level *l = level_of(c, n, p);
	uint8_t opvls = c->pcr->opvls[idx];
	if (cur->vl_cap != 1) {  /* one data VL: nothing to arbitrate (OpenSM alike) */
		for (unsigned b = SM_VLARB_LOW_0; b <= SM_VLARB_HIGH_1 && !rc; b++) {
			unsigned len = vlarb_len(cur, b);
			struct sm_vlarb_block want;
			if (!len)
				continue;
			if (cold)
				want_vlarb(l, b, len, opvls, &want);
			rc = vlarb_submit(c, cold ? SM_METHOD_SET : SM_METHOD_GET, n, p, b, cold ? &want : NULL);
		}
	}
	if (rc)
		return rc;
	if (!is_sw(c, n)) {
		struct sm_sl2vl want;
		if (!(cur->cap_mask & SM_CAP_HAS_SL_MAP))
			return 0;
		if (!cold)
			return sl2vl_submit(c, SM_METHOD_GET, n, 0, p, 0, NULL);
		want_sl2vl(l, opvls, &want);
		return sl2vl_submit(c, SM_METHOD_SET, n, 0, p, 0, &want);
	}
	if (!(c->tab.pi[nd->port0].cap_mask & SM_CAP_HAS_SL_MAP))
		return 0;
	if (cold && opt_sl2vl(c, n)) {
		c->pcr->sl2vl_diff[idx] = 1;   /* round 3 writes it (one Set for the whole switch when cold) */
		return 0;
	}
	/* a switch without optimised programming: one Get stands for the output port's nports + 1 Sets */
	return sl2vl_submit(c, SM_METHOD_GET, n, sample_in(p, nd->nports), p, 0, NULL);
}

static void note_failed(struct sm_core *c, const struct sm_req *rq, const struct sm_txn_result *r)
{
	if (c->pcr->notes++ < 8)
		sm_core_note(c, "%s %s on node 0x%016" PRIx64 " (%s), port %u: %s",
			     sm_method_name(r->req->method), sm_attr_name(r->req->attr_id),
			     c->f->nodes[rq->node].guid, c->f->nodes[rq->node].desc, rq->port & 0xFF,
			     r->status ? strerror(-r->status) : "error status");
}

static void on_portcfg(struct sm_core *c, const struct sm_req *rq, const struct sm_txn_result *r)
{
	unsigned op = PC_OP(rq->aux);
	int sw = is_sw(c, rq->node);
	unsigned out = rq->port & 0xFF;
	uint32_t idx = c->f->nodes[rq->node].port0 + out;
	int rc = 0;

	if (r->status || r->mad_status) {
		if (op == PC_PI_SET || op == PC_SL2VL_SET || op == PC_VLARB_SET)
			c->set_errors++;
		if (op == PC_PI_SET)
			c->pcr->pi_off = 1;
		note_failed(c, rq, r);
		if (c->tab.qos_ok && op == PC_SL2VL_SET && PC_BLOCK(rq->aux) == 2)   /* every port's */
			memset(c->tab.qos_ok + c->f->nodes[rq->node].port0, 0, c->f->nodes[rq->node].nports + 1u);
		else if (c->tab.qos_ok)
			c->tab.qos_ok[idx] = 0;
		return;
	}
	switch (op) {
	case PC_PI_SET: {
		struct sm_port_info pi, w;
		uint8_t opvls;
		(void)sm_set_take_pi(c, rq->node, out, r->resp->data, &pi);
		want_pi(c, rq->node, out, &w, &opvls);
		if (pi_differs(&w, &c->tab.pi[idx]))
			c->pcr->pi_off = 1;   /* asked again by the next sweep that looks at it: not settled */
		break;
	}
	case PC_SL2VL_GET: {
		struct sm_sl2vl got, want;
		sm_sl2vl_decode(r->resp->data, &got);
		want_sl2vl(level_of(c, rq->node, out), c->pcr->opvls[idx], &want);
		if (!memcmp(&got, &want, sizeof(got)))
			break;
		if (sw)   /* optimised: decided per switch (round 3); else one Set per pair (pair_sets) */
			c->pcr->sl2vl_diff[idx] = 1;
		else
			rc = sl2vl_submit(c, SM_METHOD_SET, rq->node, 0, out, 0, &want);
		break;
	}
	case PC_VLARB_GET: {
		struct sm_vlarb_block got, want;
		unsigned b = PC_BLOCK(rq->aux), len = vlarb_len(&c->tab.pi[idx], b);
		sm_vlarb_decode(r->resp->data, &got);
		want_vlarb(level_of(c, rq->node, out), b, len, c->pcr->opvls[idx], &want);
		if (memcmp(got.vl, want.vl, len) || memcmp(got.weight, want.weight, len))
			rc = vlarb_submit(c, SM_METHOD_SET, rq->node, out, b, &want);
		break;
	}
	default:
		break;
	}
	if (rc)
		sm_core_fail(c, rc);
}

/*
 * Round 3, one optimised switch: the table most configured output ports
 * want goes to every pair at once when one of those ports differs; then each
 * output port that wants another table gets it for every input port.
 * Tables are grouped by content in one pass (a switch holds one to a few
 * distinct tables): the most wanted is the group with the most ports, the
 * earliest port's on a tie.
 */
static int switch_sl2vl(struct sm_core *c, uint32_t n, int pass)
{
	const struct sm_node *nd = &c->f->nodes[n];
	uint8_t *opvls = c->pcr->opvls + nd->port0;
	const uint8_t *diff = c->pcr->sl2vl_diff + nd->port0;
	struct sm_sl2vl tab[SM_MAX_PORTS + 1];   /* distinct tables, in order of first port */
	unsigned count[SM_MAX_PORTS + 1];
	uint16_t of[SM_MAX_PORTS + 1];           /* port -> its table */
	unsigned ntab = 0, best = 0, differ = 0, common = 0;
	int all, rc = 0;

	/* no table read here differs: nothing to write, and the grouping below is not needed */
	for (unsigned p = 0; p <= nd->nports; p++)
		differ |= diff[p];
	if (!differ)
		return 0;
	/* a port round 1 left alone (pi_settled): the OperationalVLs it holds are the ones wanted */
	for (unsigned p = 0; p <= nd->nports; p++)
		if (!opvls[p] && cfg_port(c, n, p)) {
			uint8_t v = c->tab.pi[nd->port0 + p].operational_vls;
			opvls[p] = v ? v : 1;
		}
	for (unsigned p = 0; p <= nd->nports; p++) {
		struct sm_sl2vl t;
		unsigned k = 0;
		if (!opvls[p])
			continue;
		want_sl2vl(level_of(c, n, p), opvls[p], &t);
		while (k < ntab && memcmp(&tab[k], &t, sizeof(t)))
			k++;
		if (k == ntab) {
			tab[ntab] = t;
			count[ntab++] = 0;
		}
		count[k]++;
		of[p] = (uint16_t)k;
	}
	for (unsigned k = 1; k < ntab; k++)
		if (count[k] > count[best])
			best = k;
	if (!ntab)
		return 0;
	/* one differing port that wants the common table gets its own Set: the switch's others stay untouched */
	for (unsigned p = 0; p <= nd->nports; p++)
		common += opvls[p] && diff[p] && of[p] == best;
	all = common > 1;
	if (pass == 0)
		return all ? sl2vl_submit(c, SM_METHOD_SET, n, 0, 0, SM_SL2VL_ALL_IN | SM_SL2VL_ALL_OUT, &tab[best]) :
			     0;
	for (unsigned p = 0; p <= nd->nports && !rc; p++)
		if (opvls[p] && (all ? of[p] != best : diff[p]))
			rc = sl2vl_submit(c, SM_METHOD_SET, n, 0, p, SM_SL2VL_ALL_IN, &tab[of[p]]);
	return rc;
}

/*
 * Round 2, switches without optimised programming: each output port whose
 * pair read differs gets its table for every input port, one Set each,
 * queued from here rather than from the Get's answer, so that no more than
 * SM_CORE_SLICE wait at once (under ibsim at 16k hosts: 5.5 M Sets).
 */
static int pair_sets(struct sm_core *c)
{
	const struct sm_fabric *f = c->f;
	int rc = 0;
	for (uint32_t n = 0; n < f->n_nodes && !rc; n++) {
		if (!is_sw(c, n) || opt_sl2vl(c, n))
			continue;
		for (unsigned out = 0; out <= f->nodes[n].nports && !rc; out++) {
			uint32_t idx = f->nodes[n].port0 + out;
			struct sm_sl2vl want;
			if (!c->pcr->sl2vl_diff[idx])
				continue;
			want_sl2vl(level_of(c, n, out), c->pcr->opvls[idx], &want);
			for (unsigned in = 0; in <= f->nodes[n].nports && !rc; in++)
				rc = sl2vl_submit(c, SM_METHOD_SET, n, in, out, 0, &want);
			if (!rc)
				rc = sm_core_throttle(c);
		}
	}
	return rc;
}

int sm_phase_portcfg(struct sm_core *c, struct sm_summary *sum, char *err, size_t errlen)
{
	struct sm_portcfg dflt;
	struct sm_portcfg_run run = { .pc = c->cfg->portcfg, .sum = sum };
	const struct sm_fabric *f = c->f;
	int rc = 0, tables;

	if (!run.pc) {
		sm_portcfg_default(&dflt);
		run.pc = &dflt;
	}
	/* incremental: only the ports of links that came up (delta.c) have tables to check */
	const uint8_t *only = sum->incremental ? c->delta_fresh : NULL;
	tables = run.pc->qos && (!sum->incremental || only);
	run.sig = qos_sig(run.pc);
	run.pi_sig = pi_sig(run.pc, run.pc->qos ? run.sig : 0);
	/* incremental, after a configuration that settled every port with these settings: pi_settled() */
	const struct sm_state *st = c->state;
	int settled = sum->incremental && c->delta_dirty && st && st->valid && st->tab.pi_sig == run.pi_sig;
	run.opvls = calloc(f->n_ports ? f->n_ports : 1, 1);
	run.sl2vl_diff = calloc(f->n_ports ? f->n_ports : 1, 1);
	free(c->tab.qos_ok);
	c->tab.qos_ok = tables ? calloc(f->n_ports ? f->n_ports : 1, 1) : NULL;
	c->tab.qos_sig = run.sig;
	if (!run.opvls || !run.sl2vl_diff || (tables && !c->tab.qos_ok)) {
		rc = -ENOMEM;
		goto out;
	}
	c->pcr = &run;
	/* the answers that come in meanwhile change no capability want_pi() reads of a peer */
	for (uint32_t n = 0; n < f->n_nodes && !rc; n++) {
		for (unsigned p = 0; p <= f->nodes[n].nports && !rc; p++)
			if (!(settled && pi_settled(c, n, p)) && cfg_port(c, n, p))
				rc = port_round1(c, n, p, tables && (!only || only[f->nodes[n].port0 + p]));
		/* in slices: the window stays full, the request records few (core.h) */
		if (!rc)
			rc = sm_core_throttle(c);
	}
	if (!rc)
		rc = sm_core_run(c);
	if (!rc && tables)
		rc = pair_sets(c);
	if (!rc)
		rc = sm_core_run(c);
	for (int pass = 0; pass < 2 && tables && !rc; pass++) {
		for (uint32_t n = 0; n < f->n_nodes && !rc; n++)
			if (is_sw(c, n) && opt_sl2vl(c, n) && !(rc = switch_sl2vl(c, n, pass)))
				rc = sm_core_throttle(c);
		if (!rc)
			rc = sm_core_run(c);
	}
out:
	c->tab.pi_sig = !rc && !run.pi_off ? run.pi_sig : 0;
	c->pcr = NULL;
	free(run.opvls);
	free(run.sl2vl_diff);
	if (rc)
		snprintf(err, errlen, "configuring ports failed: %s", strerror(-rc));
	return rc;
}
