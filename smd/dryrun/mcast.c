/* SPDX-License-Identifier: MIT */
/*
 * DOC: the dry-run's multicast section (mcast.h): synthetic groups, their
 * trees, the flooding check, root spread and the blocks a cold start writes.
 */
#include "dryrun/mcast.h"
#include "lib/clock.h"
#include "lib/mix.h"
#include "routing/graph.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SYNTH_SHARE 8   /* group i >= 1: one host in eight */

int sm_mcast_synthetic(const struct sm_fabric *f, unsigned plane, unsigned n, struct sm_mcast_group **gout,
		       struct sm_mcast_member **mout)
{
	uint32_t n_ca = 0;
	*gout = NULL;
	*mout = NULL;
	if (n > 0xFFFF - SM_MCAST_MLID_FIRST)   /* MLIDs 0xC000..0xFFFE */
		return -EINVAL;
	for (uint32_t p = 0; p < f->n_ports; p++) {
		const struct sm_node *nd = &f->nodes[f->ports[p].node];
		n_ca += nd->plane == plane && nd->type != SM_NODE_SWITCH && f->ports[p].num && f->ports[p].guid;
	}
	struct sm_mcast_group *g = calloc((size_t)n + 1, sizeof(*g));
	/* group 0 has every port, the others about 1/8 each (bounded by a share of 1/4 to be safe) */
	size_t cap = n_ca + (size_t)(n ? n - 1 : 0) * (n_ca / 4 + 2) + 1;
	struct sm_mcast_member *m = malloc(cap * sizeof(*m));
	size_t k = 0;
	if (!g || !m) {
		free(g);
		free(m);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < n; i++) {
		g[i].mlid = (uint16_t)(SM_MCAST_MLID_FIRST + i);
		g[i].m = m + k;
		for (uint32_t p = 0; p < f->n_ports && k < cap; p++) {
			const struct sm_port *pt = &f->ports[p];
			const struct sm_node *nd = &f->nodes[pt->node];
			if (nd->plane != plane || nd->type == SM_NODE_SWITCH || !pt->num || !pt->guid)
				continue;
			if (i && sm_mix64(pt->guid ^ (uint64_t)i << 44) % SYNTH_SHARE)
				continue;
			if (i && g[i].n >= n_ca / 4 + 2)
				break;
			m[k++] = (struct sm_mcast_member){ .port = p, .recv = !i || g[i].n > 0 };
			g[i].n++;
		}
	}
	*gout = g;
	*mout = m;
	return 0;
}

int sm_mcast_ipoib(const struct sm_fabric *f, unsigned plane, const struct sm_partitions *ps,
		   struct sm_mcast_group **gout, struct sm_mcast_member **mout, unsigned *nout)
{
	unsigned ng = 0;
	size_t k = 0, cap = 1;
	for (size_t i = 0; i < ps->n; i++)
		ng += ps->v[i].ipoib;
	for (uint32_t p = 0; p < f->n_ports; p++)
		cap += f->ports[p].num != 0;
	cap *= ng ? ng : 1;
	struct sm_mcast_group *g = calloc((size_t)ng + 1, sizeof(*g));
	struct sm_mcast_member *m = malloc(cap * sizeof(*m));
	*gout = NULL;
	*mout = NULL;
	*nout = 0;
	if (!g || !m || ng > 0xFFFF - SM_MCAST_MLID_FIRST) {
		free(g);
		free(m);
		return !g || !m ? -ENOMEM : -EINVAL;
	}
	for (size_t i = 0, j = 0; i < ps->n; i++) {
		if (!ps->v[i].ipoib)
			continue;
		g[j].mlid = (uint16_t)(SM_MCAST_MLID_FIRST + j);
		g[j].m = m + k;
		for (uint32_t p = 0; p < f->n_ports; p++) {
			const struct sm_node *nd = &f->nodes[f->ports[p].node];
			if (nd->plane != plane || nd->type == SM_NODE_SWITCH || !f->ports[p].num ||
			    sm_partition_port(&ps->v[i], f, p, SM_NONE) == SM_PART_NONE)
				continue;
			m[k++] = (struct sm_mcast_member){ .port = p, .recv = 1 };
			g[j].n++;
		}
		j++;
	}
	*gout = g;
	*mout = m;
	*nout = ng;
	return 0;
}

/* The spines: switches farthest (in switch hops) from every switch that has a CA. */
static void spines_of(const struct sm_graph *g, uint8_t *is_spine, uint32_t *n_spines)
{
	uint16_t *d = malloc(((size_t)g->n_sw + 1) * sizeof(*d));
	uint32_t *q = malloc(((size_t)g->n_sw + 1) * sizeof(*q));
	uint32_t head = 0, tail = 0;
	uint16_t far = 0;
	*n_spines = 0;
	memset(is_spine, 0, g->n_sw);
	if (!d || !q)
		goto out;
	for (uint32_t s = 0; s < g->n_sw; s++) {
		d[s] = g->host_off[s + 1] > g->host_off[s] ? 0 : SM_GRAPH_INF;
		if (!d[s])
			q[tail++] = s;
	}
	while (head < tail) {
		uint32_t u = q[head++];
		for (uint32_t a = g->adj_off[u]; a < g->adj_off[u + 1]; a++)
			if (d[g->adj[a].peer] == SM_GRAPH_INF) {
				d[g->adj[a].peer] = (uint16_t)(d[u] + 1);
				q[tail++] = g->adj[a].peer;
			}
	}
	for (uint32_t s = 0; s < g->n_sw; s++)
		if (d[s] != SM_GRAPH_INF && d[s] > far)
			far = d[s];
	for (uint32_t s = 0; s < g->n_sw && far; s++)
		if (d[s] == far) {
			is_spine[s] = 1;
			(*n_spines)++;
		}
out:
	free(d);
	free(q);
}

/* Roots over the spines, depth, cold-start blocks. */
static int measure(const struct sm_fabric *f, unsigned plane, const struct sm_mfts *mf, struct sm_dr_mcast *out)
{
	struct sm_graph *g = NULL;
	int rc = sm_graph_build(f, plane, &g);
	uint8_t *spine = g ? malloc((size_t)g->n_sw + 1) : NULL;
	uint32_t *cnt = malloc(((size_t)mf->n_rows + 1) * sizeof(*cnt));
	uint64_t depth_sum = 0;

	if (!rc && (!spine || !cnt))
		rc = -ENOMEM;
	if (rc)
		goto out;
	spines_of(g, spine, &out->spines);
	out->roots = sm_mfts_root_counts(mf, cnt);
	out->spine_min = UINT32_MAX;
	for (uint32_t r = 0; r < mf->n_rows; r++) {
		/* graph slots and MFT rows are both the plane's switches in node order */
		if (spine[r]) {
			out->spine_min = cnt[r] < out->spine_min ? cnt[r] : out->spine_min;
			out->spine_max = cnt[r] > out->spine_max ? cnt[r] : out->spine_max;
		} else {
			out->off_spine += cnt[r];
		}
		const struct sm_node *nd = &f->nodes[mf->row_node[r]];
		out->blocks += (uint64_t)((mf->n_mlids + SM_MCAST_BLOCK_MLIDS - 1) / SM_MCAST_BLOCK_MLIDS) * (nd->nports / 16u + 1);
	}
	if (!out->spines)
		out->spine_min = 0;
	for (uint32_t i = 0; i < mf->n_mlids; i++)
		if (mf->root[i] != SM_NONE) {
			depth_sum += mf->depth[i];
			out->depth_max = mf->depth[i] > out->depth_max ? mf->depth[i] : out->depth_max;
		}
	out->depth_mean = mf->n_groups ? (double)depth_sum / mf->n_groups : 0;
out:
	free(spine);
	free(cnt);
	sm_graph_free(g);
	return rc;
}

int sm_dr_mcast_plane(const struct sm_fabric *f, unsigned plane, unsigned n, const struct sm_partitions *ps,
		      struct sm_dr_mcast *out, char *err, size_t errlen)
{
	struct sm_mcast_group *g = NULL;
	struct sm_mcast_member *m = NULL;
	struct sm_mfts *mf = NULL;
	struct sm_mcast_verdict v;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = ps ? sm_mcast_ipoib(f, plane, ps, &g, &m, &n) : sm_mcast_synthetic(f, plane, n, &g, &m);
	if (rc) {
		snprintf(err, errlen, "multicast: %s", rc == -EINVAL ? "too many groups" : "out of memory");
		return rc;
	}
	uint64_t t0 = sm_mono_us();
	rc = sm_mcast_route(f, plane, g, n, &mf, err, errlen);
	out->route_s = (double)(sm_mono_us() - t0) / 1e6;
	if (!rc) {
		t0 = sm_mono_us();
		rc = sm_mcast_verify(f, plane, mf, g, n, &v);
		out->verify_s = (double)(sm_mono_us() - t0) / 1e6;
		if (rc)
			snprintf(err, errlen, "multicast: out of memory");
	}
	if (!rc)
		rc = measure(f, plane, mf, out);
	if (!rc) {
		out->have = 1;
		out->ipoib = ps != NULL;
		out->groups = n;
		out->trees = mf->n_groups;
		out->skipped = mf->skipped;
		out->unreached = v.unreached;
		out->extra = v.extra;
		out->loops = v.loops;
		for (unsigned i = 0; i < n; i++)
			out->members += g[i].n;
	}
	sm_mfts_free(mf);
	free(g);
	free(m);
	return rc;
}

unsigned sm_dr_mcast_text(const struct sm_dr_mcast *mc, char (*l)[200], unsigned max)
{
	unsigned k = 0;
	if (!mc->have || max < 5)
		return 0;
	snprintf(l[k++], 200, "  multicast: %u %s, %llu member ports, %u trees", mc->groups,
		 mc->ipoib ? "IPoIB broadcast groups (--partitions)" : "synthetic groups (--mcast-groups)",
		 (unsigned long long)mc->members, mc->trees);
	snprintf(l[k++], 200, "    tree depth: max %u, mean %.2f hops (root switch to the farthest member)",
		 mc->depth_max, mc->depth_mean);
	snprintf(l[k++], 200, "    roots: %u switches; %u spines with %u to %u groups each (balanced when equal or one "
		 "apart), %u trees rooted below the spines", mc->roots, mc->spines, mc->spine_min, mc->spine_max,
		 mc->off_spine);
	snprintf(l[k++], 200, "    check (flooding every member): %llu receivers missed, %llu extra deliveries, %llu loops "
		 "(good: 0)", (unsigned long long)mc->unreached, (unsigned long long)mc->extra,
		 (unsigned long long)mc->loops);
	snprintf(l[k++], 200, "    MFT blocks a cold start writes: %llu (32 MLIDs x 16 ports each)",
		 (unsigned long long)mc->blocks);
	return k;
}

void sm_dr_mcast_json(struct sm_json *j, const struct sm_dr_mcast *mc)
{
	if (!mc->have)
		return;
	sm_json_obj_begin(j, "multicast");
	sm_json_str(j, "groups_from", mc->ipoib ? "partitions" : "synthetic");
	SM_JSON_UINTS(j, { "groups", mc->groups }, { "members", mc->members }, { "trees", mc->trees },
		      { "depth_max", mc->depth_max });
	sm_json_double(j, "depth_mean", mc->depth_mean);
	SM_JSON_UINTS(j, { "roots", mc->roots }, { "spines", mc->spines }, { "groups_per_spine_min", mc->spine_min },
		      { "groups_per_spine_max", mc->spine_max }, { "rooted_below_spines", mc->off_spine },
		      { "unreached", mc->unreached }, { "extra", mc->extra }, { "loops", mc->loops },
		      { "mft_blocks_cold", mc->blocks });
	sm_json_double(j, "seconds", mc->route_s);
	sm_json_obj_end(j);
}
