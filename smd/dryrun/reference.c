/* SPDX-License-Identifier: MIT */
/*
 * DOC: the reference tree of a plane (see reference.h)
 *
 * Shape: leaves are the switches with CA/router ports cabled to them;
 * ranks are switch-link distances from the nearest leaf (breadth first);
 * a fat tree has every switch link between ranks r and r+1, levels = the
 * highest rank + 1 (2 or 3 for the generator). Candidate complete trees, in
 * order: radix k (the most ports on a switch) with d:u leaves (d host ports,
 * u uplinks, the largest found); a partly filled 1:1 leaf (u:u) when
 * d < u; radix d+u. The first whose generated shape has u uplinks, at least
 * d host ports, as many leaves and as many levels is the reference.
 */
#include "dryrun/reference.h"
#include "model/gen.h"
#include "routing/builtin.h"
#include "lib/err.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int is_endpoint(const struct sm_fabric *f, uint32_t n)
{
	return f->nodes[n].type == SM_NODE_CA || f->nodes[n].type == SM_NODE_ROUTER;
}

/* Host ports and switch links of switch n. */
static void switch_ports(const struct sm_fabric *f, uint32_t n, unsigned *hosts, unsigned *links)
{
	const struct sm_node *nd = &f->nodes[n];

	*hosts = *links = 0;
	for (unsigned p = 1; p <= nd->nports; p++) {
		uint32_t peer = f->ports[nd->port0 + p].peer_node;
		if (peer == SM_NONE)
			continue;
		if (f->nodes[peer].type == SM_NODE_SWITCH)
			(*links)++;
		else if (is_endpoint(f, peer))
			(*hosts)++;
	}
}

/* Ranks from the leaves; 0 when every link joins adjacent ranks, else -EINVAL (not a tree). */
static int rank_switches(const struct sm_fabric *f, unsigned plane, uint32_t *rank, uint32_t *queue,
			 unsigned *levels)
{
	uint32_t head = 0, tail = 0, top = 0;

	for (uint32_t n = 0; n < f->n_nodes; n++) {
		unsigned h, l;
		rank[n] = SM_NONE;
		if (f->nodes[n].plane != plane || f->nodes[n].type != SM_NODE_SWITCH)
			continue;
		switch_ports(f, n, &h, &l);
		if (h) {
			rank[n] = 0;
			queue[tail++] = n;
		}
	}
	while (head < tail) {
		uint32_t n = queue[head++];
		const struct sm_node *nd = &f->nodes[n];
		for (unsigned p = 1; p <= nd->nports; p++) {
			uint32_t peer = f->ports[nd->port0 + p].peer_node;
			if (peer == SM_NONE || f->nodes[peer].type != SM_NODE_SWITCH)
				continue;
			if (rank[peer] == SM_NONE) {
				rank[peer] = rank[n] + 1;
				if (rank[peer] > top)
					top = rank[peer];
				queue[tail++] = peer;
			} else if (rank[peer] == rank[n]) {
				return -EINVAL;
			}
		}
	}
	*levels = top + 1;
	return 0;
}

/*
 * Switches of ranks 1 and 2 (per_rank), and the most rank-1 switches in
 * one pod (a component of the ranks 0 and 1 switches): the uplinks a leaf
 * of the complete tree has when every leaf is cabled once to each switch
 * above it in its pod. par: scratch of n_nodes + 1. 0 or -ENOMEM.
 */
static int parents_per_pod(const struct sm_fabric *f, unsigned plane, const uint32_t *rank, uint32_t *par,
			   unsigned per_rank[3], unsigned *most)
{
	uint32_t *cnt = calloc((size_t)f->n_nodes + 1, sizeof(*cnt));

	if (!cnt)
		return -ENOMEM;
	for (uint32_t n = 0; n < f->n_nodes; n++)
		par[n] = n;
	for (uint32_t n = 0; n < f->n_nodes; n++) {
		if (rank[n] == SM_NONE || rank[n] > 1 || f->nodes[n].plane != plane)
			continue;
		for (unsigned p = 1; p <= f->nodes[n].nports; p++) {
			uint32_t q = f->ports[f->nodes[n].port0 + p].peer_node;
			if (q == SM_NONE || rank[q] == SM_NONE || rank[q] > 1)
				continue;
			uint32_t x = n, y = q;
			while (par[x] != x)
				x = par[x] = par[par[x]];
			while (par[y] != y)
				y = par[y] = par[par[y]];
			if (x != y)
				par[x] = y;
		}
	}
	*most = 0;
	for (uint32_t n = 0; n < f->n_nodes; n++) {
		if (rank[n] == SM_NONE || rank[n] < 1 || rank[n] > 2 || f->nodes[n].plane != plane)
			continue;
		per_rank[rank[n]]++;
		if (rank[n] != 1)
			continue;
		uint32_t x = n;
		while (par[x] != x)
			x = par[x] = par[par[x]];
		if (++cnt[x] > *most)
			*most = cnt[x];
	}
	free(cnt);
	return 0;
}

/* Generator parameters of the complete tree; 0 when one candidate fits the shape. */
static int shape_params(const struct sm_dr_shape *s, struct sm_gen_params *gp, struct sm_gen_shape *gs)
{
	const unsigned cand[3][3] = {
		{ s->radix, s->down, s->up },
		{ s->radix, s->up, s->up },
		{ s->down + s->up, s->down, s->up },
	};
	char err[160];

	for (unsigned i = 0; i < 3; i++) {
		sm_gen_params_init(gp);
		gp->hosts = s->hosts;
		gp->radix = cand[i][0];
		gp->oversub_down = cand[i][1];
		gp->oversub_up = cand[i][2];
		gp->levels = s->levels;
		if (sm_gen_fat_tree_shape(gp, gs, err, sizeof(err)))
			continue;
		if (gs->up == s->up && gs->down >= s->down && gs->leaves == s->leaves && gs->levels == s->levels)
			return 0;
	}
	return -EINVAL;
}

int sm_dr_shape_find(const struct sm_fabric *f, unsigned plane, struct sm_dr_shape *s)
{
	uint32_t *rank, *queue;
	unsigned levels = 0;
	int rc, rc2;

	memset(s, 0, sizeof(*s));
	s->tight_leaf = SM_NONE;
	rank = malloc(((size_t)f->n_nodes + 1) * sizeof(*rank));
	queue = malloc(((size_t)f->n_nodes + 1) * sizeof(*queue));
	if (!rank || !queue) {
		free(rank);
		free(queue);
		return -ENOMEM;
	}
	rc = rank_switches(f, plane, rank, queue, &levels);
	unsigned per_rank[3] = { 0 }, parents = 0;
	if (!rc && parents_per_pod(f, plane, rank, queue, per_rank, &parents)) {
		free(rank);
		free(queue);
		return -ENOMEM;
	}
	for (uint32_t n = 0; n < f->n_nodes; n++) {
		unsigned h, l;
		if (f->nodes[n].plane != plane || f->nodes[n].type != SM_NODE_SWITCH)
			continue;
		if (f->nodes[n].nports > s->radix)
			s->radix = f->nodes[n].nports;
		switch_ports(f, n, &h, &l);
		if (!h)
			continue;
		s->leaves++;
		s->hosts += h;
		if (h > s->down)
			s->down = h;
		if (l > s->up)
			s->up = l;
	}
	/* links per level (rank r to r + 1), for the bisection left */
	unsigned lvl[4] = { 0 };
	for (uint32_t n = 0; !rc && n < f->n_nodes; n++) {
		if (rank[n] == SM_NONE || rank[n] >= 4)
			continue;
		for (unsigned p = 1; p <= f->nodes[n].nports; p++) {
			uint32_t q = f->ports[f->nodes[n].port0 + p].peer_node;
			if (q != SM_NONE && rank[q] == rank[n] + 1)
				lvl[rank[n]]++;
		}
	}
	/* shift bound: the tightest cut some shift sends a whole run of leaves or pods across */
	rc2 = sm_metrics_shift_bound(f, plane, &s->cut);
	if (rc2) {
		free(rank);
		free(queue);
		return rc2;
	}
	s->shift_bound = s->cut.bound;
	rc2 = sm_metrics_ebb_bound(f, plane, &s->ebb_bound);
	if (rc2) {
		free(rank);
		free(queue);
		return rc2;
	}
	if (s->cut.bound > 1) {
		s->tight_leaf = s->cut.leaf;
		s->tight_hosts = s->cut.hosts;
		s->tight_up = s->cut.links;
	}
	free(rank);
	free(queue);
	s->levels = levels;
	if (rc)
		snprintf(s->why, sizeof(s->why), "not a fat tree: switches linked within one level");
	else if (!s->leaves || s->hosts < 2)
		snprintf(s->why, sizeof(s->why), "fewer than 2 hosts");
	else if (levels != 2 && levels != 3)
		snprintf(s->why, sizeof(s->why), "%u switch levels (a reference is built for 2 or 3)", levels);
	else
		s->found = 1;
	if (s->found) {
		struct sm_gen_params gp;
		struct sm_gen_shape gs;
		/*
		 * No leaf kept every uplink (a 10%-degraded 32-uplink leaf keeps all
		 * 32 with probability 0.03): the most uplinks found understate the
		 * complete tree's. A leaf cabled once to each switch above it in its
		 * pod has as many uplinks as the pod has such switches; that tree is
		 * taken when it has exactly the plane's switches at ranks 1 and 2.
		 */
		if (parents > s->up) {
			unsigned was = s->up;
			s->up = parents;
			if (shape_params(s, &gp, &gs) ||
			    (s->levels == 2 ? gs.spines != per_rank[1] : gs.aggs != per_rank[1] || gs.cores != per_rank[2]))
				s->up = was;
		}
		if (shape_params(s, &gp, &gs)) {
			s->found = 0;
			snprintf(s->why, sizeof(s->why), "no complete %u-level fat tree has %u leaves of %u hosts, %u uplinks",
				 s->levels, s->leaves, s->down, s->up);
		} else {
			/* complete tree: leaves * up leaf links, the rest between aggregation and core */
			unsigned full[2] = { gs.leaves * gs.up, gs.sw_links - gs.leaves * gs.up };
			s->sw_links_full = gs.sw_links;
			s->bisection_left = 1.0;
			for (unsigned r = 0; r + 1 < s->levels && r < 2; r++)
				if (full[r] && (double)lvl[r] / full[r] < s->bisection_left)
					s->bisection_left = (double)lvl[r] / full[r];
			/*
			 * The complete tree without oversubscription (the generator's
			 * aggregation and core levels never are) carries every
			 * permutation at full rate, so its bisection is the host
			 * links of one half; an oversubscribed one is not computed.
			 */
			if (gs.down <= gs.up && s->hosts >= 2) {
				rc2 = sm_metrics_bisection(f, plane, &s->bis);
				if (rc2)
					return rc2;
				s->bis_complete = s->hosts / 2;
				if (s->bis.how && s->bis.hosts == s->bis_complete) {
					s->bisection_cut_left = (double)s->bis.links / (double)s->bis_complete;
					if (s->bisection_cut_left > 1.0)
						s->bisection_cut_left = 1.0;
				} else {
					s->bis_complete = 0;
				}
			}
		}
	}
	return 0;
}

int sm_dr_reference(const struct sm_dr_shape *s, const struct sm_metrics_opts *o,
		    struct sm_route_metrics *ref, char *err, size_t errlen)
{
	struct sm_gen_params gp;
	struct sm_gen_shape gs;
	struct sm_route_ctx ctx;
	struct sm_fabric *f = NULL;
	struct sm_lfts *l = NULL;
	void *ft = NULL;
	int rc;

	if (!s->found)
		return sm_errf_rc(-EINVAL, err, errlen, "%s", s->why);
	if (shape_params(s, &gp, &gs))
		return sm_errf_rc(-EINVAL, err, errlen, "no complete fat tree of this shape");
	f = sm_fabric_new();
	if (!f)
		return sm_errf_rc(-ENOMEM, err, errlen, "out of memory");
	rc = sm_gen_fat_tree(&gp, f, err, errlen);
	if (!rc) {
		l = sm_lfts_new(f, 0);
		rc = l ? 0 : sm_errf_rc(-ENOMEM, err, errlen, "out of memory");
	}
	if (!rc)
		rc = sm_engine_ftree.init(&ft, NULL, NULL, err, errlen);
	if (!rc) {
		memset(&ctx, 0, sizeof(ctx));
		ctx.fabric = f;
		ctx.plane = 0;
		ctx.out = l;
		rc = sm_engine_ftree.route(ft, &ctx);
		if (rc)
			sm_errf(err, errlen, "ftree on the complete tree: %s", ctx.msg);
	}
	if (!rc) {
		struct sm_metrics_opts mo = *o;
		mo.skip_cdg = 1;    /* ftree routes a complete tree up*-then-down*: no credit loop */
		rc = sm_metrics_compute(f, 0, l, &mo, ref);
		if (rc)
			sm_errf(err, errlen, "out of memory");
		ref->credit_loop = 0;
	}
	if (ft)
		sm_engine_ftree.free(ft);
	sm_lfts_free(l);
	sm_fabric_free(f);
	return rc;
}

int sm_dr_shape_same(const struct sm_dr_shape *a, const struct sm_dr_shape *b)
{
	return a->found && b->found && a->levels == b->levels && a->radix == b->radix && a->down == b->down &&
	       a->up == b->up && a->hosts == b->hosts && a->leaves == b->leaves;
}
