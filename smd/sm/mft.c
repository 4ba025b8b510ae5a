/* SPDX-License-Identifier: MIT */
/*
 * DOC: MFT phase and MFT-only pass (mft.h)
 *
 * The trees come from sm_mc_route() (sm/mcast.h, routing/mcast.h) over the
 * fabric being brought up; each switch's shadow is taken from the state when
 * its LFT shadow is trusted, else read back (a configured switch) or left
 * unknown (written). Then every (block, position) in use, or known to hold
 * entries, is compared with the new tables and written where it differs;
 * MulticastFDBTop follows where supported. Answers (Get and Set alike show
 * what the switch now holds) update the shadow.
 */
#include "sm/phases.h"
#include "sm/state.h"
#include "sm/mft.h"
#include "sm/mcast.h"
#include "lib/clock.h"
#include "model/lfts.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define MFT_RQ(b, pos) ((uint16_t)((b) | (pos) << 9))

void sm_mft_shadows_free(struct sm_mft_shadow *s, uint32_t n)
{
	for (uint32_t i = 0; s && i < n; i++) {
		free(s[i].ent);
		free(s[i].known);
	}
	free(s);
}

static int shadow_reserve(struct sm_mft_shadow *s, unsigned nb, unsigned npos)
{
	if (s->npos != npos) {
		free(s->ent);
		free(s->known);
		memset(s, 0, sizeof(*s));
		s->npos = (uint8_t)npos;
	}
	if (nb <= s->n_blocks)
		return 0;
	size_t old = (size_t)s->n_blocks * npos, want = (size_t)nb * npos;
	uint16_t *e = realloc(s->ent, want * SM_MFT_BLOCK_MLIDS * sizeof(*e));
	if (!e)
		return -ENOMEM;
	s->ent = e;
	uint8_t *k = realloc(s->known, want);
	if (!k)
		return -ENOMEM;
	s->known = k;
	memset(e + old * SM_MFT_BLOCK_MLIDS, 0, (want - old) * SM_MFT_BLOCK_MLIDS * sizeof(*e));
	memset(k + old, 0, want - old);
	s->n_blocks = (uint16_t)nb;
	return 0;
}

static void on_mft(struct sm_core *c, const struct sm_req *rq, const struct sm_txn_result *r)
{
	const struct sm_node *nd = &c->f->nodes[rq->node];
	unsigned b = rq->port & 0x1FF, pos = rq->port >> 9;
	struct sm_mft_shadow *sh = &c->tab.mshadow[rq->node];
	struct sm_mft_block blk;

	if (r->status || r->mad_status) {
		c->set_errors++;
		sm_core_note(c, "%s MulticastForwardingTable on switch 0x%016" PRIx64 " (%s) block %u position %u: %s",
			     sm_method_name(r->req->method), nd->guid, nd->desc, b, pos,
			     r->status ? strerror(-r->status) : "error status");
		return;
	}
	sm_mft_block_decode(r->resp->data, &blk, NULL);
	if (shadow_reserve(sh, b + 1, nd->nports / 16u + 1)) {
		if (!c->err)
			c->err = -ENOMEM;
		return;
	}
	memcpy(sh->ent + ((size_t)b * sh->npos + pos) * SM_MFT_BLOCK_MLIDS, blk.mask, sizeof(blk.mask));
	sh->known[(size_t)b * sh->npos + pos] = 1;
}

static int mft_send(struct sm_core *c, uint8_t method, uint32_t n, unsigned b, unsigned pos,
		    const struct sm_mft_block *blk)
{
	struct sm_req *rq = sm_core_req(c, method == SM_METHOD_SET ? SM_RQ_MFT_SET : SM_RQ_MFT_GET, n,
					MFT_RQ(b, pos), on_mft);
	struct sm_smp smp;
	if (!rq)
		return -ENOMEM;
	sm_smp_init_dr(&smp, method, SM_ATTR_MFT, sm_mft_mod(b, pos), &c->tab.path[n]);
	smp.mkey = sm_core_mkey_at(c, n, 0);
	if (blk)
		sm_mft_block_encode(blk, smp.data);
	return sm_core_submit(c, rq, &smp);
}

/* Block b, position pos of row `row` of the new tables (0 beyond the MLIDs in use). */
static void want_block(const struct sm_mfts *m, uint32_t row, unsigned b, unsigned pos, struct sm_mft_block *out)
{
	for (unsigned i = 0; i < SM_MFT_BLOCK_MLIDS; i++) {
		uint32_t off = b * SM_MFT_BLOCK_MLIDS + i;
		out->mask[i] = off < m->n_mlids ?
			(uint16_t)(m->mask[(size_t)row * m->n_mlids + off][pos / 4] >> (16 * (pos % 4))) : 0;
	}
}

/* Blocks of switch n to look at: those in use (within its cap), and beyond them any known to hold entries. */
static unsigned blocks_of(const struct sm_core *c, uint32_t n, unsigned nb_want, unsigned *nb_cap)
{
	const struct sm_mft_shadow *sh = &c->tab.mshadow[n];
	unsigned cap = c->tab.si[n].mft_cap / SM_MFT_BLOCK_MLIDS, nb = nb_want < cap ? nb_want : cap;
	*nb_cap = cap;
	for (unsigned b = nb; b < sh->n_blocks && b < cap; b++)
		for (unsigned p = 0; p < sh->npos; p++) {
			const uint16_t *e = sh->ent + ((size_t)b * sh->npos + p) * SM_MFT_BLOCK_MLIDS;
			for (unsigned i = 0; i < SM_MFT_BLOCK_MLIDS && sh->known[(size_t)b * sh->npos + p]; i++)
				if (e[i])
					nb = b + 1;
		}
	return nb;
}

/* Shadows into c->tab (from the state where trusted), read-back of unknown configured switches. */
static int take_shadows(struct sm_core *c, struct sm_mft_summary *ms, unsigned nb_want)
{
	struct sm_state *st = c->state;
	const struct sm_mfts *m = c->mfts;
	int rc = 0;

	sm_mft_shadows_free(c->tab.mshadow, c->tab.n_mshadow);
	c->tab.n_mshadow = 0;
	c->tab.mshadow = calloc((size_t)c->f->n_nodes + 1, sizeof(*c->tab.mshadow));
	if (!c->tab.mshadow)
		return -ENOMEM;
	c->tab.n_mshadow = c->f->n_nodes;
	for (uint32_t r = 0; r < m->n_rows && !rc; r++) {
		uint32_t n = m->row_node[r], t = c->trusted ? c->trusted[n] : SM_NONE;
		struct sm_mft_shadow *sh = &c->tab.mshadow[n];
		if (!c->tab.si_ok[n])
			continue;
		if (t != SM_NONE && st && t < st->tab.n_mshadow) {
			*sh = st->tab.mshadow[t];
			memset(&st->tab.mshadow[t], 0, sizeof(*sh));
			continue;
		}
		if (!c->cfg->read_lfts || (c->unconfigured && c->unconfigured[n]))
			continue;
		unsigned cap = c->tab.si[n].mft_cap / SM_MFT_BLOCK_MLIDS, npos = c->f->nodes[n].nports / 16u + 1;
		for (unsigned b = 0; b < nb_want && b < cap && !rc; b++)
			for (unsigned p = 0; p < npos && !rc; p++) {
				rc = mft_send(c, SM_METHOD_GET, n, b, p, NULL);
				ms->blocks_read++;
			}
	}
	return rc ? rc : sm_core_run(c);
}

/* MulticastFDBTop of switch n, where port 0 says it is supported. */
static int set_top(struct sm_core *c, uint32_t n, unsigned nb, struct sm_mft_summary *ms)
{
	uint32_t p0 = c->f->nodes[n].port0;
	uint16_t top = (uint16_t)(nb ? SM_MLID_FIRST + nb * SM_MFT_BLOCK_MLIDS - 1 : SM_MLID_FIRST - 1);
	uint8_t data[SM_SMP_DATA_SIZE];

	if (!c->tab.pi || !c->tab.pi_ok[p0] || !(c->tab.pi[p0].cap_mask & SM_PORT_CAP_MCAST_FDB_TOP) ||
	    c->tab.si[n].mft_top == top)
		return 0;
	struct sm_switch_info si = c->tab.si[n];
	si.mft_top = top;
	si.port_state_change = 0;   /* write-1-to-clear: leave it */
	sm_switch_info_encode(&si, data);
	ms->top_sets++;
	c->si_sets++;
	return sm_set_submit(c, SM_ATTR_SWITCH_INFO, 0, n, data, SM_RQ_SI_SET, 0, 0);
}

static int write_diffs(struct sm_core *c, struct sm_mft_summary *ms, unsigned nb_want)
{
	const struct sm_mfts *m = c->mfts;
	struct sm_mft_block blk;
	int rc = 0;

	for (uint32_t r = 0; r < m->n_rows && !rc; r++) {
		uint32_t n = m->row_node[r], written = 0;
		if (!c->tab.si_ok[n])
			continue;
		unsigned cap, nb = blocks_of(c, n, nb_want, &cap), npos = c->f->nodes[n].nports / 16u + 1;
		struct sm_mft_shadow *sh = &c->tab.mshadow[n];
		if (nb_want > cap && !ms->over_cap++)
			sm_core_note(c, "switch 0x%016" PRIx64 " (%s): MulticastFDBCap %u is below the highest MLID 0x%04x; "
				     "the groups above are not programmed there", c->f->nodes[n].guid, c->f->nodes[n].desc,
				     c->tab.si[n].mft_cap, SM_MLID_FIRST + m->n_mlids - 1);
		for (unsigned b = 0; b < nb && !rc; b++)
			for (unsigned p = 0; p < npos && !rc; p++) {
				want_block(m, r, b, p, &blk);
				size_t k = (size_t)b * npos + p;
				if (sh->npos == npos && b < sh->n_blocks && sh->known[k] &&
				    !memcmp(sh->ent + k * SM_MFT_BLOCK_MLIDS, blk.mask, sizeof(blk.mask)))
					continue;
				rc = mft_send(c, SM_METHOD_SET, n, b, p, &blk);
				ms->blocks_written++;
				written = 1;
			}
		ms->switches_written += written;
		if (!rc)
			rc = set_top(c, n, nb < nb_want ? nb : nb_want, ms);
	}
	return rc ? rc : sm_core_run(c);
}

/*
 * Trees for cfg->mcast over c->f (reusing prev's trees of unchanged groups
 * when prev, a snapshot of this very fabric, is given), then the blocks that
 * differ written.
 */
static int mft_run(struct sm_core *c, const struct sm_snapshot *prev, struct sm_mft_summary *ms, char *err,
		   size_t errlen)
{
	const struct sm_mc_set *set = c->cfg->mcast;
	uint32_t errs0 = c->set_errors;
	uint64_t t0 = sm_mono_us();
	size_t missing = 0;
	int rc;

	sm_mfts_free(c->mfts);
	c->mfts = NULL;
	rc = sm_mc_route_from(c->f, set, prev ? prev->mc : NULL, prev ? prev->mfts : NULL, &c->mfts, &missing, err,
			      errlen);
	ms->compute_s = (double)(sm_mono_us() - t0) / 1e6;
	if (rc)
		return rc;
	ms->groups = c->mfts->n_groups;
	ms->missing = missing + c->mfts->skipped;
	if (ms->missing)
		sm_core_note(c, "multicast: %" PRIu64 " group members are not in plane %u (or not reachable): left out",
			     ms->missing, c->plane);
	t0 = sm_mono_us();
	unsigned nb_want = (c->mfts->n_mlids + SM_MFT_BLOCK_MLIDS - 1) / SM_MFT_BLOCK_MLIDS;
	rc = take_shadows(c, ms, nb_want);
	if (!rc)
		rc = write_diffs(c, ms, nb_want);
	if (!rc && c->err)
		rc = c->err;
	ms->program_s = (double)(sm_mono_us() - t0) / 1e6;
	ms->set_errors = c->set_errors - errs0;
	if (rc)
		snprintf(err, errlen, "programming MFTs failed: %s", strerror(-rc));
	return rc;
}

int sm_phase_mft(struct sm_core *c, struct sm_summary *sum, char *err, size_t errlen)
{
	return c->cfg->mcast ? mft_run(c, NULL, &sum->mft, err, errlen) : 0;
}

void sm_mft_publish(struct sm_core *c, struct sm_snapshot *snap)
{
	snap->mfts = c->mfts;
	snap->mc_gen = c->mfts && c->cfg->mcast ? c->cfg->mcast->gen : 0;
	snap->mc = c->mfts ? sm_mc_set_ref((struct sm_mc_set *)(uintptr_t)c->cfg->mcast) : NULL;
	c->mfts = NULL;
}

/* A copy of P_Key tables (the new snapshot carries the old one's); NULL in, NULL out. */
static int pkeys_dup(const struct sm_pkey_tables *t, struct sm_pkey_tables **out)
{
	*out = NULL;
	if (!t)
		return 0;
	struct sm_pkey_tables *d = calloc(1, sizeof(*d));
	size_t n_at = (size_t)t->n_ports + 1, n_tab = t->at[t->n_ports];
	if (d) {
		d->n_ports = t->n_ports;
		d->at = malloc(n_at * sizeof(*d->at));
		d->tab = malloc((n_tab + 1) * sizeof(*d->tab));
	}
	if (!d || !d->at || !d->tab) {
		sm_pkey_tables_free(d);
		return -ENOMEM;
	}
	memcpy(d->at, t->at, n_at * sizeof(*d->at));
	memcpy(d->tab, t->tab, n_tab * sizeof(*d->tab));
	*out = d;
	return 0;
}

/* The state's fabric, tables and shadows into c, every switch trusted. */
static int core_from_state(struct sm_core *c, struct sm_state *state)
{
	const struct sm_snapshot *old = state->snap;
	c->f = sm_fabric_new();
	if (!c->f || sm_fabric_append(c->f, old->fabric, NULL))
		return -ENOMEM;
	sm_sweep_tables_move(&c->tab, &state->tab);
	/* the MFT shadows stay with the state: take_shadows() takes the trusted ones, as in a bring-up */
	state->tab.mshadow = c->tab.mshadow;
	state->tab.n_mshadow = c->tab.n_mshadow;
	c->tab.mshadow = NULL;
	c->tab.n_mshadow = 0;
	if (sm_sweep_tables_fit(&c->tab, c->f))
		return -ENOMEM;
	/* the attributes went to the snapshot (capacities stayed): room for them again */
	struct sm_sweep_tables *t = &c->tab;
	if (!t->ni && !t->si && !t->si_ok && !t->pi && !t->pi_ok) {
		t->ni = calloc(t->cap_nodes + 1, sizeof(*t->ni));
		t->si = calloc(t->cap_nodes + 1, sizeof(*t->si));
		t->si_ok = calloc(t->cap_nodes + 1, 1);
		t->pi = calloc(t->cap_ports + 1, sizeof(*t->pi));
		t->pi_ok = calloc(t->cap_ports + 1, 1);
		if (!t->ni || !t->si || !t->si_ok || !t->pi || !t->pi_ok)
			return -ENOMEM;
	}
	sm_snapshot_copy_attrs(old, &c->tab, c->f->n_nodes, c->f->n_ports);
	c->trusted = malloc(((size_t)c->f->n_nodes + 1) * sizeof(*c->trusted));
	if (!c->trusted || !c->tab.si || !c->tab.si_ok)
		return -ENOMEM;
	for (uint32_t n = 0; n < c->f->n_nodes; n++)
		c->trusted[n] = n;
	return 0;
}

int sm_mft_update(struct sm_transport *t, const struct sm_cfg *cfg, struct sm_state *state,
		  struct sm_mft_summary *ms, char *err, size_t errlen)
{
	struct sm_core core, *c = &core;
	int rc;

	memset(ms, 0, sizeof(*ms));
	if (!cfg->mcast)
		return 0;
	if (!sm_state_valid(state) || !state->snap->si) {
		snprintf(err, errlen, "no valid sweep of plane %u to program multicast on: sweep first", cfg->plane);
		return -ESTALE;
	}
	rc = sm_core_init(c, t, cfg, state, err, errlen);
	if (rc)
		return rc;
	const struct sm_snapshot *old = state->snap;
	rc = core_from_state(c, state);
	if (rc)
		snprintf(err, errlen, "out of memory");
	else
		rc = mft_run(c, old, ms, err, errlen);   /* c->f is a copy of old's fabric */
	/* the state gets its tables back (shadows as acknowledged) with a snapshot carrying the new MFTs */
	struct sm_lfts *lfts = old->lfts ? sm_lfts_dup(old->lfts) : NULL;
	struct sm_snapshot *snap = NULL;
	struct sm_pkey_tables *pk = NULL;
	if (c->f && (lfts || !old->lfts) && !pkeys_dup(old->pkeys, &pk)) {
		snap = sm_snapshot_new(c->plane, c->f, lfts);   /* frees both on failure */
		c->f = NULL;
	} else {
		sm_lfts_free(lfts);
	}
	if (snap) {
		sm_snapshot_take_attrs(snap, &c->tab);
		snap->cycle = cfg->cycle;
		snap->up = old->up;
		snap->sm_lid = old->sm_lid;
		snap->sm_port = old->sm_port;
		snap->subnet_prefix = old->subnet_prefix;
		sm_snapshot_take_pkeys(snap, &pk);   /* the partitions did not change */
		sm_mft_publish(c, snap);
		sm_state_update(state, snap, &c->tab, state->valid);
		if (cfg->published)
			cfg->published(cfg->published_arg, snap);
		sm_snapshot_unref(snap);
	} else {
		sm_state_forget(state);   /* what the tables knew is gone: the next sweep reads back */
		if (!rc) {
			snprintf(err, errlen, "out of memory");
			rc = -ENOMEM;
		}
	}
	sm_pkey_tables_free(pk);   /* NULL once the snapshot took it */
	if (c->txn)
		ms->txn = *sm_txn_stats(c->txn);
	sm_txn_free(c->txn);
	c->txn = NULL;
	sm_core_reset(c);
	return rc;
}
