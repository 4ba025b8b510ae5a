/* SPDX-License-Identifier: MIT */
/*
 * DOC: STAND-IN for the struct sm_mc_set life cycle of sm/mcast.h until
 * helper `mft` (MFTs, issue 14) is merged: new, ref, unref. When the real
 * implementation lands, delete this file (and its line in
 * smd/sm/subdir.am): the functions here are the same symbols.
 */
#include "sm/mcast.h"

#include <stdlib.h>

struct sm_mc_set *sm_mc_set_new(unsigned plane, uint64_t gen)
{
	struct sm_mc_set *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->plane = plane;
	s->gen = gen;
	atomic_init(&s->refs, 1);
	return s;
}

struct sm_mc_set *sm_mc_set_ref(struct sm_mc_set *s)
{
	if (s)
		atomic_fetch_add(&s->refs, 1);
	return s;
}

void sm_mc_set_unref(struct sm_mc_set *s)
{
	if (!s || atomic_fetch_sub(&s->refs, 1) != 1)
		return;
	for (size_t i = 0; i < s->n_groups; i++)
		free(s->groups[i].members);
	free(s->groups);
	free(s);
}
