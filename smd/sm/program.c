/* SPDX-License-Identifier: MIT */
/*
 * DOC: program phase (sm.h "program")
 *
 * Per switch: the LFT shadow comes from the state when the state still
 * holds (no read-back), else the blocks of a configured switch are read
 * back (cfg.read_lfts); then only the blocks that differ from the new
 * tables are written, and LinearFDBTop set where it differs. The shadows
 * end in c->tab (tables.h), mirroring what the switches acknowledged.
 * Requests are queued switch by switch, at most SM_CORE_SLICE at once
 * (sm_core_throttle): a cold bring-up at 40k hosts writes 2.5 M blocks.
 *
 * After a reroute, on a switch whose shadow is still the row of the tables
 * the reroute started from (c->lft_prev), the blocks to write are those
 * the incremental validation found different (c->lft_delta: nothing
 * compared), else those holding a LID of the engine's account that differ
 * (c->lft_changed); the shadow moves to the new row with those blocks
 * unknown until their Sets are acknowledged (sm_lft_shadow_retarget: no
 * copy of the row). So the phase costs what changed, not the 3,584
 * switches' rows (at 40k hosts, one lost link: 1,228 blocks on 1,095
 * switches, 48 -> 2.5 ms of CPU).
 */
#include "sm/phases.h"
#include "sm/state.h"
#include "routing/validate.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>


/*
 * The answers store blocks one by one (set.c); growing the shadow by one
 * block per answer reallocates it 696 times per switch at 44k LIDs (a
 * copy of the whole shadow each time it moves: quadratic). Size it for
 * the highest block asked for at once; a failed reservation only leaves
 * the growth to the answers.
 */
static void reserve_for(struct sm_lft_shadow *sh, const uint16_t *blocks, unsigned nb)
{
	unsigned hi = 0;
	for (unsigned i = 0; i < nb; i++)
		hi = blocks[i] + 1u > hi ? blocks[i] + 1u : hi;
	if (hi)
		(void)sm_lft_shadow_reserve(sh, hi);
}

int sm_phase_program(struct sm_core *c, char *err, size_t errlen)
{
	const struct sm_lfts *l = c->lfts;
	struct sm_fabric *f = c->f;
	uint16_t *blocks = NULL;
	uint8_t blk_changed[SM_LFT_MAX_BLOCKS];
	int rc = 0;

	rc = sm_sweep_tables_add_shadows(&c->tab, f);
	blocks = malloc(SM_LFT_MAX_BLOCKS * sizeof(*blocks));
	if (rc || !blocks) {
		rc = -ENOMEM;
		goto out;
	}
	/* read back what configured switches hold, so only differences are written */
	for (uint32_t s = 0; s < l->n_switches && !rc; s++) {
		uint32_t n = l->sw_node[s];
		struct sm_lft_shadow *sh = &c->tab.shadow[n];
		sm_lft_shadow_init(sh);
		if (!c->tab.si_ok[n])
			continue;
		if (c->trusted && c->trusted[n] != SM_NONE) {
			/* what we wrote last time is still there: no read-back */
			*sh = c->state->tab.shadow[c->trusted[n]];
			sm_lft_shadow_init(&c->state->tab.shadow[c->trusted[n]]);
			c->lft_sw_trusted++;
		} else if (sm_state_fabric(c->state)) {
			c->lft_sw_unknown++;
		}
		sh->top = c->tab.si[n].lft_top;
		/* a switch that had no LID has never been programmed by an SM: nothing to read */
		if (!c->cfg->read_lfts || c->unconfigured[n])
			continue;
		unsigned nb = sm_lft_blocks_to_read(l->top_lid, sh, blocks);
		reserve_for(sh, blocks, nb);
		for (unsigned i = 0; i < nb && !rc; i++) {
			rc = sm_set_lft_get(c, n, blocks[i]);
			c->lft_blocks_read++;
		}
		if (!rc)
			rc = sm_core_throttle(c);
	}
	if (!rc)
		rc = sm_core_run(c);
	/* after a reroute: on switches still holding the tables it started from, only its changed blocks */
	const struct sm_lfts *prev = c->lft_changed && c->lft_prev && c->lft_prev->top_lid == l->top_lid ?
		c->lft_prev : NULL;
	/* and where the incremental validation found them already, the blocks that differ (nothing compared) */
	const struct sm_lft_delta *dl = c->lft_delta;
	if (dl && !(prev && dl->l == l && dl->prev == prev && dl->changed == c->lft_changed &&
		    dl->n_switches == l->n_switches))
		dl = NULL;
	if (prev && !dl && !rc)
		sm_lft_blocks_changed(c->lft_changed, l->top_lid, blk_changed);
	for (uint32_t s = 0; s < l->n_switches && !rc; s++) {
		uint32_t n = l->sw_node[s];
		const struct sm_node *nd = &f->nodes[n];
		if (!c->tab.si_ok[n])
			continue;
		if (nd->lft_cap && (unsigned)l->top_lid >= nd->lft_cap) {
			c->set_errors++;
			sm_core_note(c, "switch 0x%016" PRIx64 " (%s): LinearFDBCap %u is below top LID %u; not programmed",
				     nd->guid, nd->desc, nd->lft_cap, l->top_lid);
			continue;
		}
		const uint8_t *row = sm_lfts_row(l, s);
		uint32_t ps = prev && n < prev->n_nodes ? prev->slot_of_node[n] : SM_NONE;
		const uint8_t *prow = ps != SM_NONE ? sm_lfts_row(prev, ps) : NULL;
		unsigned nb = dl ? sm_lft_diff_known(row, l->top_lid, &c->tab.shadow[n], prow, dl->blk + dl->off[s],
						     dl->off[s + 1] - dl->off[s], blocks) :
				   sm_lft_diff_changed(row, l->top_lid, &c->tab.shadow[n], prow,
						       prev ? blk_changed : NULL, blocks);
		if (prev)
			sm_lft_shadow_retarget(&c->tab.shadow[n], prow, row, l->top_lid, blocks, nb);
		reserve_for(&c->tab.shadow[n], blocks, nb);
		uint8_t data[SM_SMP_DATA_SIZE];
		for (unsigned i = 0; i < nb && !rc; i++) {
			struct sm_lft_block b;
			sm_lft_block(row, l->top_lid, blocks[i], b.port);
			sm_lft_block_encode(&b, data);
			rc = sm_set_submit(c, SM_ATTR_LFT, blocks[i], n, data, SM_RQ_LFT_SET, blocks[i], 0);
			c->lft_blocks_written++;
		}
		if (nb)
			c->lft_switches_written++;
		if (!rc)
			rc = sm_core_throttle(c);
		if (!rc && c->tab.si[n].lft_top != l->top_lid) {
			struct sm_switch_info si = c->tab.si[n];
			si.lft_top = l->top_lid;
			si.port_state_change = 0;   /* write-1-to-clear: leave it */
			sm_switch_info_encode(&si, data);
			rc = sm_set_submit(c, SM_ATTR_SWITCH_INFO, 0, n, data, SM_RQ_SI_SET, 0, 0);
			c->si_sets++;
		}
	}
	if (!rc)
		rc = sm_core_run(c);
out:
	if (rc)
		snprintf(err, errlen, "programming LFTs failed: %s", strerror(-rc));
	free(blocks);
	return rc;
}
