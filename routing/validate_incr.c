/* SPDX-License-Identifier: MIT */
/*
 * DOC: incremental validation after a reroute (sm_validate_incremental())
 *
 * Routes are destination based: whether the pairs toward one destination
 * LID are routed, and whether any walk toward it loops, depends only on
 * that LID's column of the LFTs (one entry per switch) and on where each
 * (switch, port) used by the column leads (the cables). So after a reroute
 * that only removed links, the destinations walked again are:
 *
 *   1. every LID whose column changed on any switch (old and new LFTs
 *      compared entry by entry, a 64-byte block at a time; or, after an
 *      engine's reroute(), the LIDs it says it changed: prev->changed);
 *   2. every LID whose old column used a removed link at any switch (the
 *      entry at switch s is the port p of a removed cable (s, p)), whether
 *      or not an endpoint's walk reaches s: a superset of the destinations
 *      whose paths crossed the lost link;
 *   3. the LIDs of an endpoint port whose own cable was removed; none of
 *      them is walked (every pair toward a port without a cable is
 *      disconnected, as the full check counts it: nothing to walk).
 *
 * Why that is enough for "every pair still routed, no loop": take a LID
 * in none of the sets. Its column is the same at every switch and no entry
 * of it names a removed cable; every other cable is unchanged (only
 * removals are accepted, see below), so every switch's next hop toward it
 * is exactly what it was, and so are the walks from every switch: a walk
 * that delivered still delivers (so its source and the destination are
 * still in one part), one that looped still loops, and its endpoint is
 * where it was (3). Sources only went away (a host whose cable was removed
 * is a source of no pair), which cannot turn a routed pair into a failing
 * one, and a pair counted as disconnected before stays so (removing cables
 * joins no parts). The previous LFTs were accepted, so that destination
 * keeps its accepted verdict; the set walked again is judged afresh by the
 * same walk as the full validation, so a broken one is found.
 *
 * One kind of cable that appeared is taken too: an endpoint cabled again
 * to a switch that has other endpoints (a host back, reroute_nodes.h).
 * It joins no switch parts; as a source it sends as its switch's other
 * endpoints do, whose pairs were accepted; as a destination its LIDs'
 * columns changed (set 1).
 *
 * Anything else falls back to the full sm_validate(): another node or port
 * count, a node or LID that differs, another cable that appeared or moved (it
 * can join parts: pairs that were disconnected must now be routed), other
 * switch slots or top LID. However many LIDs changed, walking
 * them costs no more than the full check's walks (one pass over both LFTs
 * more, and no CDG).
 *
 * Not covered: the credit-loop (CDG) check needs the routes to every
 * destination, so an incremental result has credit_loop -1; the caller
 * runs the full validation on heavy sweeps (and whenever it falls back).
 *
 * Cost: one pass over both LFTs (memcmp per block) plus the walks of the
 * changed LIDs: O(switches x top LID / 64 + changed LIDs x switches).
 */
#include "config.h"
#include "lib/clock.h"
#include "routing/reroute.h"
#include "routing/reroute_nodes.h"
#include "routing/validate.h"
#include "routing/validate_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Set 1: LIDs whose column changed on some switch. */
static void mark_changed_columns(const struct sm_lfts *l, const struct sm_lfts *pl, uint8_t *mask)
{
	size_t n = (size_t)l->top_lid + 1;
	for (uint32_t s = 0; s < l->n_switches; s++) {
		const uint8_t *a = sm_lfts_row(l, s), *b = sm_lfts_row(pl, s);
		for (size_t b0 = 0; b0 < n; b0 += 64) {
			size_t len = n - b0 < 64 ? n - b0 : 64;
			if (!memcmp(a + b0, b + b0, len))
				continue;
			for (size_t k = b0; k < b0 + len; k++)
				mask[k] |= a[k] != b[k];
		}
	}
}

/* Sets 2 and 3 for the removed cable at port index i. */
static void mark_removed(const struct sm_fabric *pf, unsigned plane, const struct sm_lfts *pl, uint32_t i,
			     uint8_t *mask)
{
	const struct sm_port *pp = &pf->ports[i];
	const struct sm_node *nd = &pf->nodes[pp->node];
	if (nd->plane != plane)
		return;
	if (nd->type == SM_NODE_SWITCH) {
		uint32_t s = pp->node < pl->n_nodes ? pl->slot_of_node[pp->node] : SM_NONE;
		if (s == SM_NONE)
			return;
		const uint8_t *row = sm_lfts_row(pl, s);
		for (uint32_t lid = 1; lid <= pl->top_lid; lid++)
			mask[lid] |= row[lid] == pp->num;
		return;
	}
	for (uint32_t k = 0; pp->lid && k < (1u << pp->lmc) && pp->lid + k <= SM_UNICAST_LID_MAX; k++)
		mask[pp->lid + k] = 1;
}

/*
 * The LIDs of endpoint ports without a cable (a host that went away, its
 * LID kept): sm_validate_run() walks nothing toward them, every pair is
 * disconnected whatever the tables say; walked alone they would make the
 * verdict "nothing reachable" (sm_validate_ok()). Not walked.
 */
static void unmark_uncabled(const struct sm_fabric *f, unsigned plane, uint8_t *mask)
{
	for (uint32_t n = 0; n < f->n_nodes; n++) {
		const struct sm_node *nd = &f->nodes[n];
		if (nd->plane != plane || (nd->type != SM_NODE_CA && nd->type != SM_NODE_ROUTER))
			continue;
		for (unsigned p = 1; p <= nd->nports; p++) {
			const struct sm_port *pt = sm_port(f, n, p);
			for (uint32_t k = 0; pt->lid && pt->peer_node == SM_NONE && k < (1u << pt->lmc) &&
					     pt->lid + k <= SM_UNICAST_LID_MAX; k++)
				mask[pt->lid + k] = 0;
		}
	}
}

/*
 * The LIDs to walk again into mask; 1 when the incremental check applies,
 * 0 when the full one must run.
 */
static int changed_lids(const struct sm_fabric *f, unsigned plane, const struct sm_lfts *l,
			const struct sm_validate_prev *prev, uint8_t *mask)
{
	const struct sm_fabric *pf = prev->f;
	const struct sm_lfts *pl = prev->l;
	uint32_t *gone = NULL, n_gone = 0;
	if (!sm_reroute_same_numbering(f, pf, plane, l, pl))
		return 0;
	int rc = sm_reroute_removed(f, pf, &gone, &n_gone);
	if (rc == 0)
		rc = sm_reroute_hosts_back(f, pf, plane); /* cables of endpoints only, at switches with endpoints */
	if (rc <= 0)
		return rc;
	for (uint32_t k = 0; k < n_gone; k++)
		mark_removed(pf, plane, pl, gone[k], mask);
	free(gone);
	if (prev->changed) /* the engine's own account of what it changed (reroute(), engine.h) */
		for (uint32_t lid = 0; lid <= l->top_lid; lid++)
			mask[lid] |= prev->changed[lid];
	else
		mark_changed_columns(l, pl, mask);
	unmark_uncabled(f, plane, mask);
	return 1;
}

int sm_validate_incremental(const struct sm_fabric *f, unsigned plane, const struct sm_lfts *l,
			    const struct sm_validate_prev *prev, unsigned flags, struct sm_validation *v)
{
	if (!prev || !prev->f || !prev->l || !l || plane >= SM_MAX_PLANES || prev->l->plane != plane ||
	    l->plane != plane)
		return sm_validate(f, plane, l, flags, v);
	double t0 = sm_mono_sec();
	uint8_t *mask = calloc((size_t)UINT16_MAX + 1, 1);  /* by LID, whatever top_lid is */
	if (!mask)
		return -ENOMEM;
	int rc = changed_lids(f, plane, l, prev, mask);
	if (rc <= 0) {
		free(mask);
		return rc < 0 ? rc : sm_validate(f, plane, l, flags, v);
	}
	memset(v, 0, sizeof(*v));
	v->credit_loop = -1;
	rc = sm_validate_run(f, plane, l, flags, v, 0, mask);
	free(mask);
	if (rc)
		return rc;
	if (v->pairs && !v->reachable)
		return sm_validate(f, plane, l, flags, v);  /* "nothing reachable" is a verdict on every LID */
	if (!v->rechecked)
		v->rechecked = 1;  /* nothing changed: still an incremental verdict (the previous one) */
	size_t len = strlen(v->msg);
	snprintf(v->msg + len, sizeof(v->msg) - len, " (incremental: %u LIDs whose routes changed)", v->lids);
	v->seconds = sm_mono_sec() - t0;
	return 0;
}
