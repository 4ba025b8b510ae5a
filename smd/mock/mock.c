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
 * This file: construction (the copy, the initial SMA state), free, the
 * read-back accessors; the other parts are listed in mock.h.
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
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/err.h"
#include "mock/mock_priv.h"

void sm_mock_cfg_default(struct sm_mock_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->seed = 1;
	cfg->lft_cap = 0xC000;
}

/* ---- virtual time (recv() in mock_ops.c moves it) ---- */

uint64_t sm_mock_now_us(const struct sm_mock *m)
{
	return m->cfg.real_time ? sm_mono_us() - m->real0 : m->vnow;
}

void sm_mock_advance_us(struct sm_mock *m, uint64_t us)
{
	if (!m->cfg.real_time)
		m->vnow += us;
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

/*
 * LFT arena: every switch's LFT at a fixed place in one anonymous mapping,
 * lft_cap bytes (rounded up to a block) reserved each. Untouched pages cost
 * nothing, a table grows in place (no realloc and copy per block Set), and
 * the mapping's resident size is the emulated fabric's LFT memory, which a
 * benchmark subtracts to see the SM's own: from inside (mincore), or from
 * outside as the Rss of the mapping /memfd:smd-mock-lft in smaps (a memfd
 * so that it has a name; shared memory, counted in VmRSS as RssShmem).
 */
static int lft_arena(struct sm_mock *m)
{
	size_t len = 0;
	for (uint32_t n = 0; n < m->f->n_nodes; n++)
		if (m->f->nodes[n].type == SM_NODE_SWITCH)
			len += ((size_t)m->nodes[n].lft_cap + SM_LFT_BLOCK - 1) / SM_LFT_BLOCK * SM_LFT_BLOCK;
	if (!len)
		return 0;
	/* a memfd's mapping shows its name in /proc/PID/smaps on any kernel (anonymous names need a config option) */
	void *a = MAP_FAILED;
	int fd = memfd_create("smd-mock-lft", MFD_CLOEXEC);
	if (fd >= 0) {
		if (!ftruncate(fd, (off_t)len))
			a = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
		close(fd);
	}
	if (a == MAP_FAILED)
		a = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (a == MAP_FAILED)
		return -ENOMEM;
	m->arena = a;
	m->arena_len = len;
	size_t at = 0;
	for (uint32_t n = 0; n < m->f->n_nodes; n++)
		if (m->f->nodes[n].type == SM_NODE_SWITCH) {
			m->nodes[n].lft = m->arena + at;
			at += ((size_t)m->nodes[n].lft_cap + SM_LFT_BLOCK - 1) / SM_LFT_BLOCK * SM_LFT_BLOCK;
		}
	return 0;
}

void sm_mock_lft_arena(const struct sm_mock *m, const void **base, size_t *len)
{
	*base = m->arena;
	*len = m->arena_len;
}

size_t sm_mock_lft_resident(const struct sm_mock *m)
{
	long pg = sysconf(_SC_PAGESIZE);
	size_t n_pages, res = 0;
	unsigned char vec[4096];
	if (!m->arena || pg <= 0)
		return 0;
	n_pages = (m->arena_len + (size_t)pg - 1) / (size_t)pg;
	for (size_t i = 0; i < n_pages; i += sizeof(vec)) {
		size_t k = n_pages - i < sizeof(vec) ? n_pages - i : sizeof(vec);
		size_t bytes = k * (size_t)pg;
		if (i * (size_t)pg + bytes > m->arena_len)
			bytes = m->arena_len - i * (size_t)pg;
		if (mincore(m->arena + i * (size_t)pg, bytes, vec))
			return 0;
		for (size_t j = 0; j < k; j++)
			res += vec[j] & 1;
	}
	return res * (size_t)pg;
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
	mock_rng_seed(m, m->cfg.seed);
	m->real0 = sm_mono_us();
	m->trap_tid = 0x80000000u;
	pthread_mutex_init(&m->gsi_mu, NULL);
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
	}
	if (lft_arena(m)) {
		sm_mock_free(m);
		goto nomem;
	}
	for (uint32_t n = 0; n < m->f->n_nodes; n++) {
		const struct sm_node *nd = &m->f->nodes[n];
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
	mock_gsi_detach_all(m);
	pthread_mutex_destroy(&m->gsi_mu);
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
			free(m->nodes[n].mft);
	if (m->arena)
		munmap(m->arena, m->arena_len);
	free(m->nodes);
	mock_qos_free(m);
	free(m->ports);
	mock_pkey_free(m);
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

int mock_lft_grow(struct mnode *mn, uint32_t len)
{
	if (len <= mn->lft_len)
		return 0;
	/* in place in the arena (lft_arena): its room is lft_cap, rounded up to a block */
	if (!mn->lft || len > ((uint32_t)mn->lft_cap + SM_LFT_BLOCK - 1) / SM_LFT_BLOCK * SM_LFT_BLOCK)
		return -EINVAL;
	memset(mn->lft + mn->lft_len, SM_LFT_NO_PORT, len - mn->lft_len);
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
	rc = mock_lft_grow(mn, ((uint32_t)lid / SM_LFT_BLOCK + 1) * SM_LFT_BLOCK);
	if (rc < 0)
		return rc;
	mn->lft[lid] = port;
	return 0;
}

void sm_mock_stats(const struct sm_mock *m, struct sm_mock_stats *st)
{
	*st = m->st;
}

/* Keep an attachment's transport info (LID, SM LID, states) current. */
int mock_refresh(struct sm_transport *t)
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
