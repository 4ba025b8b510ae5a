/* SPDX-License-Identifier: MIT */
/*
 * DOC: multicast group sets (sm/mcast.h): their life cycle, and the glue
 * from a set (members by port GUID) to the trees of routing/mcast.h
 * (members by port index of the swept fabric).
 */
#include "sm/mcast.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
		atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
	return s;
}

void sm_mc_set_unref(struct sm_mc_set *s)
{
	if (!s || atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) != 1)
		return;
	for (size_t i = 0; s->groups && i < s->n_groups; i++)
		free(s->groups[i].members);
	free(s->groups);
	free(s);
}

struct sm_mc_set *sm_mc_set_from_groups(const struct sm_fabric *f, unsigned plane, uint64_t gen,
					const struct sm_mcast_group *g, size_t n)
{
	struct sm_mc_set *s = sm_mc_set_new(plane, gen);

	if (!s || !(s->groups = calloc(n + 1, sizeof(*s->groups)))) {
		sm_mc_set_unref(s);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		struct sm_mc_group *sg = &s->groups[s->n_groups++];
		sg->mlid = g[i].mlid;
		if (!(sg->members = calloc((size_t)g[i].n + 1, sizeof(*sg->members)))) {
			sm_mc_set_unref(s);
			return NULL;
		}
		for (uint32_t j = 0; j < g[i].n; j++)
			sg->members[sg->n_members++] = (struct sm_mc_member){
				.port_guid = f->ports[g[i].m[j].port].guid,
				.join_state = g[i].m[j].recv ? SM_MC_FULL : SM_MC_SENDONLY,
			};
	}
	return s;
}

/* The group of MLID mlid in p (sorted by MLID), NULL if none. */
static const struct sm_mc_group *find_group(const struct sm_mc_set *p, uint16_t mlid)
{
	size_t lo = 0, hi = p->n_groups;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->groups[mid].mlid < mlid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < p->n_groups && p->groups[lo].mlid == mlid ? &p->groups[lo] : NULL;
}

static int same_group(const struct sm_mc_group *a, const struct sm_mc_group *b)
{
	return b && a->n_members == b->n_members &&
	       (!a->n_members || !memcmp(a->members, b->members, a->n_members * sizeof(*a->members)));
}

int sm_mc_route(const struct sm_fabric *f, const struct sm_mc_set *s, struct sm_mfts **out, size_t *missing,
		char *err, size_t errlen)
{
	return sm_mc_route_from(f, s, NULL, NULL, out, missing, err, errlen);
}

int sm_mc_route_from(const struct sm_fabric *f, const struct sm_mc_set *s, const struct sm_mc_set *prev_set,
		     const struct sm_mfts *prev_mfts, struct sm_mfts **out, size_t *missing, char *err, size_t errlen)
{
	struct sm_mcast_group *g = calloc(s->n_groups + 1, sizeof(*g));
	struct sm_mcast_member *m = NULL;
	size_t total = 0, k = 0, miss = 0;
	int rc;

	*out = NULL;
	for (size_t i = 0; i < s->n_groups; i++)
		total += s->groups[i].n_members;
	m = malloc((total + 1) * sizeof(*m));
	if (!g || !m) {
		free(g);
		free(m);
		snprintf(err, errlen, "multicast: out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < s->n_groups; i++) {
		const struct sm_mc_group *sg = &s->groups[i];
		g[i].mlid = sg->mlid;
		g[i].m = m + k;
		g[i].keep = prev_set && prev_mfts && prev_set->plane == s->plane && same_group(sg, find_group(prev_set, sg->mlid));
		for (size_t j = 0; j < sg->n_members; j++) {
			uint32_t pi = sm_fabric_find_port(f, sg->members[j].port_guid);
			if (pi == SM_NONE || f->nodes[f->ports[pi].node].plane != s->plane) {
				miss++;
				continue;
			}
			m[k++] = (struct sm_mcast_member){
				.port = pi, .recv = (sg->members[j].join_state & (SM_MC_FULL | SM_MC_NON)) != 0,
			};
			g[i].n++;
		}
	}
	rc = sm_mcast_route_from(f, s->plane, g, s->n_groups, prev_mfts, out, err, errlen);
	free(g);
	free(m);
	if (missing)
		*missing = miss;
	return rc;
}
