/* SPDX-License-Identifier: MIT */
/*
 * DOC: partition membership for PathRecord and MultiPathRecord (pkey.h)
 *
 * Cost: a port's table is at most a few hundred entries; a query looks at
 * each of the two once per candidate P_Key (the default partition is first
 * in the table, so the common case is a few comparisons). Nothing is
 * allocated; every input comes from the snapshot, never from the request
 * except the P_Key asked for (and the requester's LID, which names a port
 * of the snapshot or none).
 */
#include "sa/pkey.h"
#include "sm/snapshot.h"

/* The entry of port i holding base (full preferred), 0 when it has none. */
static uint16_t held(const struct sm_pkey_tables *pk, uint32_t i, uint16_t base)
{
	uint16_t best = 0;
	if (i >= pk->n_ports)
		return 0;
	for (uint32_t k = pk->at[i]; k < pk->at[i + 1]; k++)
		if ((pk->tab[k] & 0x7FFF) == base && pk->tab[k] > best)
			best = pk->tab[k];
	return best;
}

static bool share(const struct sm_pkey_tables *pk, uint32_t a, uint32_t b, uint16_t base, uint16_t *ea)
{
	uint16_t x = held(pk, a, base), y = held(pk, b, base);
	*ea = x;
	return x && y && ((x | y) & 0x8000);
}

static uint16_t osm_order(uint16_t pkey)
{
	return (uint16_t)(pkey << 8 | pkey >> 8);
}

bool sm_sa_pkey_shared(const struct sm_pkey_tables *pk, uint32_t a, uint32_t b, bool want, uint16_t want_pkey,
		       uint16_t *out)
{
	uint16_t e;

	if (!pk) {
		/* no partitions configured: every port a full member of the default partition */
		*out = want ? want_pkey : 0xFFFF;
		return !want || (want_pkey & 0x7FFF) == 0x7FFF;
	}
	if (want) {
		*out = want_pkey;
		return (want_pkey & 0x7FFF) && share(pk, a, b, want_pkey & 0x7FFF, &e);
	}
	/* the first shared P_Key in OpenSM's order, among a's entries */
	bool found = false;
	uint16_t best = 0, best_key = 0;
	if (a >= pk->n_ports)
		return false;
	for (uint32_t k = pk->at[a]; k < pk->at[a + 1]; k++) {
		uint16_t base = pk->tab[k] & 0x7FFF;
		if (!base || (found && osm_order(base) >= best_key) || !share(pk, a, b, base, &e))
			continue;
		found = true;
		best = e;
		best_key = osm_order(base);
	}
	*out = best;
	return found;
}

/* Do ports a and b share a P_Key (both hold it, one at least full)? A port shares with itself. */
static bool share_any(const struct sm_pkey_tables *pk, uint32_t a, uint32_t b)
{
	uint16_t e;

	if (a == b)
		return true;
	if (a >= pk->n_ports)
		return false;
	for (uint32_t k = pk->at[a]; k < pk->at[a + 1]; k++)
		if ((pk->tab[k] & 0x7FFF) && share(pk, a, b, pk->tab[k] & 0x7FFF, &e))
			return true;
	return false;
}

bool sm_sa_pkey_requester(const struct sm_pkey_tables *pk, uint32_t req, uint32_t a, uint32_t b)
{
	if (!pk)
		return true;   /* no partitions configured: every port a full member of the default partition */
	return share_any(pk, req, a) && share_any(pk, req, b);
}
