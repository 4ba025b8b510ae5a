/* SPDX-License-Identifier: MIT */
/*
 * DOC: P_Key phase (phases.h; issue 14 partitions)
 *
 * With cfg.partitions, after the program phase: the P_Key table of every
 * end port (CA and router ports with a link, every switch's port 0) and of
 * every switch port facing a CA or router (for partition enforcement; the
 * PortInfo enforcement bits are the port configuration's) is read, the
 * table it should hold is computed, and only the blocks that differ are
 * written. The tables as acknowledged end in c->pkeys for the snapshot
 * (the SA answers P_KeyTableRecord and partition membership from them).
 *
 * Layout, as OpenSM 3.3 lays tables out (osm_pkey_mgr.c with its defaults
 * keep_pkey_indexes, no allow_both_pkeys), so a fabric moves from OpenSM
 * to smd without a P_Key changing index:
 *   - an end port's entries are its partitions', full member bit set for
 *     full (and both) members; a P_Key the port already holds stays at its
 *     index, except that index 0 is the default partition's (0x7fff);
 *   - the others follow the highest index kept, in OpenSM's partition
 *     order (its map keyed by the P_Key in network byte order: 0x0100
 *     before 0x0001 on little-endian hosts); the default P_Key goes to 0;
 *     past the port's PartitionCap a free entry from index 1 is taken, or
 *     the P_Key is left out (noted);
 *   - a switch port facing a CA gets the CA port's entries packed from
 *     index 0, a limited entry left out where the CA also holds the full
 *     one, cut at the switch's PartitionEnforcementCap (noted).
 * Blocks past what a port needs are cleared when they hold something.
 * A port whose table could not be read is left alone.
 *
 * Cost: per managed port ceil(cap / 32) Gets (cap bounded to 1024
 * entries), then one Set per differing block: a second bring-up with the
 * same partitions writes nothing. After an incremental sweep (sm.h) no
 * table is read: the state's snapshot says what each port holds. Not implemented: OpenSM's indx0 flag
 * (parsed, not applied) and allow_both_pkeys (both = full).
 */
#include "sm/phases.h"
#include "sm/snapshot.h"
#include "sm/state.h"
#include "model/partitions.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define PK_MAX_BLOCKS 32u
#define PK_DEFAULT 0x7fff

struct pk_port {
	uint32_t idx;          /* port index in c->f */
	uint32_t node;
	uint8_t num;
	uint32_t faces;        /* switch external port: the entry of the end port it faces; SM_NONE else */
	unsigned cap, nblocks;
	uint16_t *cur;         /* as read, then as acknowledged */
	uint16_t *want;
	unsigned read_ok;      /* blocks read */
	bool done;             /* want computed */
};

struct pk_run {
	struct pk_port *v;
	uint32_t n;
	uint16_t *mem;
};

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void block_decode(const uint8_t *d, uint16_t *out)
{
	for (unsigned i = 0; i < 32; i++)
		out[i] = be16(d + 2 * i);
}

static int submit(struct sm_core *c, uint8_t method, uint32_t e, unsigned b, const uint16_t *blk);

static void on_answer(struct sm_core *c, const struct sm_req *rq, const struct sm_txn_result *r)
{
	struct pk_run *run = c->pkey_run;
	struct pk_port *pp = &run->v[rq->node];

	if (r->status || r->mad_status) {
		if (rq->kind == SM_RQ_PKEY_SET)
			c->set_errors++;
		sm_core_note(c, "%s P_KeyTable on node 0x%016" PRIx64 " (%s) port %u block %u: %s",
			     rq->kind == SM_RQ_PKEY_SET ? "Set" : "Get", c->f->nodes[pp->node].guid,
			     c->f->nodes[pp->node].desc, pp->num, rq->port,
			     r->status ? strerror(-r->status) : "error status");
		return;
	}
	/* a Set's answer carries what the port now holds, like a Get */
	block_decode(r->resp->data, pp->cur + 32u * rq->port);
	for (unsigned i = 32u * rq->port; i < 32u * (rq->port + 1u); i++)
		if (i >= pp->cap)
			pp->cur[i] = 0;
	if (rq->kind == SM_RQ_PKEY_GET)
		pp->read_ok++;
}

static int submit(struct sm_core *c, uint8_t method, uint32_t e, unsigned b, const uint16_t *blk)
{
	struct pk_run *run = c->pkey_run;
	const struct pk_port *pp = &run->v[e];
	const struct sm_node *nd = &c->f->nodes[pp->node];
	uint8_t kind = method == SM_METHOD_SET ? SM_RQ_PKEY_SET : SM_RQ_PKEY_GET;
	struct sm_req *rq = sm_core_req(c, kind, e, (uint16_t)b, on_answer);
	struct sm_dr_path path;
	struct sm_smp smp;
	uint32_t mod = b;

	if (!rq)
		return -ENOMEM;
	if (nd->type == SM_NODE_SWITCH) {
		path = c->tab.path[pp->node];
		mod |= (uint32_t)pp->num << 16;
	} else {
		sm_set_port_path(c, pp->node, pp->num, &path);   /* a CA answers for the port it arrives on */
	}
	sm_smp_init_dr(&smp, method, SM_ATTR_PKEY_TABLE, mod, &path);
	smp.mkey = sm_core_mkey_at(c, pp->node, nd->type == SM_NODE_SWITCH ? 0 : pp->num);
	if (blk)
		for (unsigned i = 0; i < 32; i++) {
			smp.data[2 * i] = (uint8_t)(blk[i] >> 8);
			smp.data[2 * i + 1] = (uint8_t)blk[i];
		}
	return sm_core_submit(c, rq, &smp);
}

/* Entries a port can hold, 0 when it has no table smd manages. */
static unsigned port_cap(const struct sm_core *c, uint32_t n, unsigned p)
{
	const struct sm_node *nd = &c->f->nodes[n];
	if (nd->type == SM_NODE_SWITCH && p)
		return c->tab.si_ok && c->tab.si_ok[n] ? c->tab.si[n].part_enf_cap : 0;
	return c->tab.ni ? c->tab.ni[n].partition_cap : 0;
}

static int add_port(struct pk_run *run, uint32_t *cap_v, const struct sm_core *c, uint32_t n, unsigned p,
		    uint32_t faces)
{
	unsigned cap = port_cap(c, n, p);
	if (!cap)
		return 0;
	if (run->n == *cap_v) {
		uint32_t nc = *cap_v ? *cap_v * 2 : 64;
		struct pk_port *v = realloc(run->v, nc * sizeof(*v));
		if (!v)
			return -ENOMEM;
		run->v = v;
		*cap_v = nc;
	}
	unsigned nb = (cap + 31) / 32;
	if (nb > PK_MAX_BLOCKS) {
		nb = PK_MAX_BLOCKS;
		cap = PK_MAX_BLOCKS * 32;
	}
	run->v[run->n++] = (struct pk_port){
		.idx = sm_port_index(c->f, n, p), .node = n, .num = (uint8_t)p, .faces = faces, .cap = cap,
		.nblocks = nb,
	};
	return 0;
}

/* The ports whose tables are managed: end ports first, then switch ports facing them. */
static int collect(struct pk_run *run, const struct sm_core *c)
{
	const struct sm_fabric *f = c->f;
	uint32_t cap_v = 0, *end_of = calloc(f->n_ports ? f->n_ports : 1, sizeof(*end_of));
	int rc = 0;

	if (!end_of)
		return -ENOMEM;
	for (uint32_t i = 0; i < f->n_ports; i++)
		end_of[i] = SM_NONE;
	uint32_t sm_idx = c->tab.sm_node != SM_NONE ? sm_port_index(f, c->tab.sm_node, c->tab.sm_portnum) : SM_NONE;
	for (uint32_t n = 0; n < f->n_nodes && !rc; n++) {
		const struct sm_node *nd = &f->nodes[n];
		if (nd->type == SM_NODE_SWITCH) {
			end_of[nd->port0] = run->n;
			rc = add_port(run, &cap_v, c, n, 0, SM_NONE);
			if (!rc && end_of[nd->port0] == run->n)
				end_of[nd->port0] = SM_NONE;
			continue;
		}
		for (unsigned p = 1; p <= nd->nports && !rc; p++) {
			uint32_t idx = sm_port_index(f, n, p);
			if (f->ports[idx].peer_node == SM_NONE && idx != sm_idx)
				continue;
			uint32_t e = run->n;
			rc = add_port(run, &cap_v, c, n, p, SM_NONE);
			if (!rc && run->n > e)
				end_of[idx] = e;
		}
	}
	for (uint32_t n = 0; n < f->n_nodes && !rc; n++) {
		const struct sm_node *nd = &f->nodes[n];
		if (nd->type != SM_NODE_SWITCH)
			continue;
		for (unsigned p = 1; p <= nd->nports && !rc; p++) {
			const struct sm_port *pt = sm_port(f, n, p);
			if (pt->peer_node == SM_NONE || f->nodes[pt->peer_node].type == SM_NODE_SWITCH)
				continue;
			uint32_t e = end_of[sm_port_index(f, pt->peer_node, pt->peer_port)];
			if (e != SM_NONE)
				rc = add_port(run, &cap_v, c, n, p, e);
		}
	}
	free(end_of);
	return rc;
}

/* OpenSM's partition order: its map's key is the P_Key in network byte order (read on a little-endian host). */
static uint16_t osm_order(uint16_t pkey)
{
	return (uint16_t)(pkey << 8 | pkey >> 8);
}

/* order[] entries are (OpenSM order key << 16 | partition index): P_Keys are unique, so are the keys */
static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* Where does cur hold base (full entry preferred, else the first)? -1 none. */
static int find_base(const uint16_t *cur, unsigned cap, uint16_t base)
{
	int at = -1;
	for (unsigned i = 0; i < cap; i++)
		if ((cur[i] & 0x7fff) == base && (cur[i] & 0x7fff) && (at < 0 || cur[i] > cur[at]))
			at = (int)i;
	return at;
}

/* The end port's table (see the DOC): want[cap] from cur and the wanted P_Keys d[nd] in OpenSM's order. */
static unsigned layout(struct sm_core *c, const struct pk_port *pp, const uint16_t *d, unsigned nd, uint16_t *want)
{
	unsigned last = 0, dropped = 0;   /* OpenSM's last_pkey_idx: highest index used + 1 */
	uint8_t *placed = calloc(nd ? nd : 1, 1);

	if (!placed)
		return 0;
	memset(want, 0, pp->nblocks * 32 * sizeof(*want));
	for (unsigned k = 0; k < nd; k++) {
		uint16_t base = d[k] & 0x7fff;
		int at = find_base(pp->cur, pp->cap, base);
		if (at < 0 || (at == 0) != (base == PK_DEFAULT))
			continue;
		want[at] = d[k];
		placed[k] = 1;
		if ((unsigned)at + 1 > last)
			last = (unsigned)at + 1;
	}
	for (unsigned k = 0; k < nd; k++) {
		if (placed[k])
			continue;
		unsigned at = (d[k] & 0x7fff) == PK_DEFAULT ? 0 : last ? last : 1;
		if (at >= pp->cap) {
			at = 1;
			while (at < pp->cap && (want[at] & 0x7fff))
				at++;
			if (at >= pp->cap || (d[k] & 0x7fff) == PK_DEFAULT) {
				dropped++;
				continue;
			}
		}
		want[at] = d[k];
		if (at + 1 > last)
			last = at + 1;
	}
	free(placed);
	if (dropped)
		sm_core_note(c, "node 0x%016" PRIx64 " (%s) port %u: P_Key table full (%u entries): %u P_Keys left out",
			     c->f->nodes[pp->node].guid, c->f->nodes[pp->node].desc, pp->num, pp->cap, dropped);
	return last;
}

/* A switch port facing end port ep: ep's entries packed, a limited one left out where ep holds the full one. */
static void packed(struct sm_core *c, const struct pk_port *sw, const struct pk_port *ep, uint16_t *want)
{
	unsigned k = 0, cut = 0;

	memset(want, 0, sw->nblocks * 32 * sizeof(*want));
	for (unsigned i = 0; i < ep->cap; i++) {
		uint16_t v = ep->want[i];
		if (!(v & 0x7fff))
			continue;
		if (!(v & 0x8000)) {
			bool full = false;
			for (unsigned j = 0; j < ep->cap && !full; j++)
				full = ep->want[j] == (v | 0x8000);
			if (full)
				continue;
		}
		if (k < sw->cap)
			want[k++] = v;
		else
			cut++;
	}
	if (cut)
		sm_core_note(c, "switch 0x%016" PRIx64 " (%s) port %u: %u P_Keys beyond its enforcement capacity (%u)",
			     c->f->nodes[sw->node].guid, c->f->nodes[sw->node].desc, sw->num, cut, sw->cap);
}

/*
 * After an incremental sweep a port is as the state's bring-up left it
 * unless its link came up since (c->delta_fresh, read): its table is what
 * that bring-up left, carried in the state's snapshot, and is not read again.
 */
static bool from_state(const struct sm_core *c, struct pk_port *pp)
{
	const struct sm_snapshot *s = c->incremental_ok && c->state ? c->state->snap : NULL;
	const struct sm_fabric *of = s && s->pkeys ? s->fabric : NULL;
	const struct sm_node *nd = &c->f->nodes[pp->node];
	uint32_t oi = SM_NONE;
	unsigned n = 0;

	if (!of || (c->delta_fresh && c->delta_fresh[pp->idx]))
		return false;
	if (nd->type == SM_NODE_SWITCH) {
		uint32_t on = sm_fabric_find_node(of, nd->guid);
		if (on != SM_NONE && pp->num <= of->nodes[on].nports)
			oi = sm_port_index(of, on, pp->num);
	} else {
		oi = sm_fabric_find_port(of, c->f->ports[pp->idx].guid);
	}
	const uint16_t *old = oi != SM_NONE ? sm_snapshot_pkeys(s, oi, &n) : NULL;
	if (!old || n != pp->nblocks * 32)
		return false;
	memcpy(pp->cur, old, n * sizeof(*old));
	pp->read_ok = pp->nblocks;
	return true;
}

/* The tables as acknowledged, per port index, for the snapshot. */
static int result(struct sm_core *c, const struct pk_run *run)
{
	struct sm_pkey_tables *t = calloc(1, sizeof(*t));
	size_t total = 0;

	if (!t)
		return -ENOMEM;
	t->n_ports = c->f->n_ports;
	t->at = calloc((size_t)t->n_ports + 1, sizeof(*t->at));
	uint32_t *len = calloc(t->n_ports ? t->n_ports : 1, sizeof(*len));
	for (uint32_t e = 0; e < run->n && len; e++)
		if (run->v[e].done)
			len[run->v[e].idx] = run->v[e].nblocks * 32;
	for (uint32_t i = 0; i < t->n_ports && len; i++)
		total += len[i];
	t->tab = malloc((total ? total : 1) * sizeof(*t->tab));
	if (!t->at || !len || !t->tab) {
		free(len);
		sm_pkey_tables_free(t);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < t->n_ports; i++)
		t->at[i + 1] = t->at[i] + len[i];
	for (uint32_t e = 0; e < run->n; e++)
		if (run->v[e].done)
			memcpy(t->tab + t->at[run->v[e].idx], run->v[e].cur, run->v[e].nblocks * 32 * sizeof(uint16_t));
	free(len);
	sm_pkey_tables_free(c->pkeys);
	c->pkeys = t;
	return 0;
}

int sm_phase_pkeys(struct sm_core *c, char *err, size_t errlen)
{
	const struct sm_partitions *ps = c->cfg->partitions;
	struct pk_run run = { 0 };
	uint32_t *order = NULL;
	uint16_t *d = NULL;
	size_t total = 0;
	int rc;

	if (!ps)
		return 0;
	if (ps->n > 0x8000) {
		snprintf(err, errlen, "P_Key tables: %zu partitions", ps->n);
		return -EINVAL;
	}
	rc = collect(&run, c);
	for (uint32_t e = 0; e < run.n; e++)
		total += run.v[e].nblocks * 32;
	if (!rc) {
		run.mem = calloc(total ? total * 2 : 1, sizeof(*run.mem));
		order = malloc((ps->n ? ps->n : 1) * sizeof(*order));
		d = malloc((ps->n ? ps->n : 1) * sizeof(*d));
		if (!run.mem || !order || !d)
			rc = -ENOMEM;
	}
	if (rc)
		goto out;
	for (uint32_t e = 0, off = 0; e < run.n; e++) {
		run.v[e].cur = run.mem + off;
		run.v[e].want = run.mem + total + off;
		off += run.v[e].nblocks * 32;
	}
	c->pkey_run = &run;
	c->pkey_ports = run.n;
	/* what each port holds */
	for (uint32_t e = 0; e < run.n && !rc; e++) {
		if (from_state(c, &run.v[e]))
			continue;
		for (unsigned b = 0; b < run.v[e].nblocks && !rc; b++) {
			rc = submit(c, SM_METHOD_GET, e, b, NULL);
			c->pkey_blocks_read++;
		}
	}
	if (!rc)
		rc = sm_core_run(c);
	if (rc)
		goto out;
	/* what each should hold */
	for (uint32_t i = 0; i < ps->n; i++)
		order[i] = (uint32_t)osm_order(ps->v[i].pkey) << 16 | (i & 0xFFFF);
	qsort(order, ps->n, sizeof(*order), cmp_u32);
	uint32_t sm_idx = c->tab.sm_node != SM_NONE ? sm_port_index(c->f, c->tab.sm_node, c->tab.sm_portnum) : SM_NONE;
	for (uint32_t e = 0; e < run.n; e++) {
		struct pk_port *pp = &run.v[e];
		if (pp->read_ok != pp->nblocks)
			continue;
		if (pp->faces != SM_NONE) {
			if (!run.v[pp->faces].done)
				continue;
			packed(c, pp, &run.v[pp->faces], pp->want);
		} else {
			unsigned nd = 0;
			for (uint32_t i = 0; i < ps->n; i++) {
				const struct sm_partition *part = &ps->v[order[i] & 0xFFFF];
				enum sm_part_membership m = sm_partition_port(part, c->f, pp->idx, sm_idx);
				if (m != SM_PART_NONE)
					d[nd++] = (uint16_t)(part->pkey | (m == SM_PART_LIMITED ? 0 : 0x8000));
			}
			layout(c, pp, d, nd, pp->want);
		}
		pp->done = true;
		for (unsigned b = 0; b < pp->nblocks && !rc; b++) {
			if (!memcmp(pp->cur + 32 * b, pp->want + 32 * b, 32 * sizeof(uint16_t)))
				continue;
			rc = submit(c, SM_METHOD_SET, e, b, pp->want + 32 * b);
			c->pkey_blocks_written++;
		}
	}
	if (!rc)
		rc = sm_core_run(c);
	if (!rc)
		rc = result(c, &run);
out:
	if (rc == -ENOMEM)
		snprintf(err, errlen, "P_Key tables: out of memory");
	else if (rc)
		snprintf(err, errlen, "P_Key tables: %s", strerror(-rc));
	c->pkey_run = NULL;
	free(run.v);
	free(run.mem);
	free(order);
	free(d);
	return rc;
}
