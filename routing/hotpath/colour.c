/* SPDX-License-Identifier: MIT */
/*
 * DOC: hot-path pinning: Konig edge colouring for permutation-like profiles
 *
 * Owns nothing beyond one call: builds (switch, destination LID) units
 * from the pinned flows, edge-colours the bipartite multigraph of source x
 * destination switches with the up-link classes as colours, and writes the
 * colours as LFT entries (marking the units decided). Conditions and the
 * 2/3-level construction: see hp_colour() and hotpath.h.
 */
#include "routing/hotpath/internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- colouring (2 and 3 levels) ---- */

/*
 * Edge-colour a bipartite multigraph with nc colours (Konig: enough when
 * every vertex has degree <= nc). Edge e joins left el[e] (< nl) and right
 * er[e] (< nr); col[e] gets its colour. For each edge: a colour al free at
 * its left end and be free at its right end; if al is taken at the right
 * end, the al/be alternating path from there is flipped (it cannot reach
 * the left end in a bipartite graph), which frees al. O(edges x path).
 * 0, -ERANGE (a degree exceeds nc), -ENOMEM.
 */
static int kempe(uint32_t nl, uint32_t nr, size_t ne, const uint32_t *el, const uint32_t *er, uint32_t nc,
		 int32_t *col)
{
	size_t nv = (size_t)nl + nr;
	int32_t *at = malloc((nv * nc + 1) * sizeof(*at));
	int32_t *path = malloc((ne + 1) * sizeof(*path));
	int rc = 0;
	if (!at || !path) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nv * nc; i++)
		at[i] = -1;
#define AT(v, c) at[(size_t)(v) * nc + (c)]
	for (size_t e = 0; e < ne; e++) {
		uint32_t va = el[e], vb = nl + er[e], al = 0, be = 0;
		while (al < nc && AT(va, al) >= 0)
			al++;
		while (be < nc && AT(vb, be) >= 0)
			be++;
		if (al == nc || be == nc) {
			rc = -ERANGE;
			goto out;
		}
		if (AT(vb, al) >= 0) {
			uint32_t v = vb, c = al;
			size_t plen = 0;
			while (AT(v, c) >= 0) {
				int32_t x = AT(v, c);
				if (plen == ne) { /* cannot happen on a simple alternating path */
					rc = -ERANGE;
					goto out;
				}
				path[plen++] = x;
				v = v == el[x] ? nl + er[x] : el[x];
				c = c == al ? be : al;
			}
			for (size_t i = 0; i < plen; i++) {
				int32_t x = path[i];
				AT(el[x], col[x]) = -1;
				AT(nl + er[x], col[x]) = -1;
			}
			for (size_t i = 0; i < plen; i++) {
				int32_t x = path[i];
				col[x] = col[x] == (int32_t)al ? (int32_t)be : (int32_t)al;
				AT(el[x], col[x]) = x;
				AT(nl + er[x], col[x]) = x;
			}
		}
		col[e] = (int32_t)al;
		AT(va, al) = (int32_t)e;
		AT(vb, al) = (int32_t)e;
	}
#undef AT
out:
	free(at);
	free(path);
	return rc;
}

struct unit {
	uint32_t a, b;           /* vertices: source side, destination side (switch slots) */
	uint16_t lid;
	double w;
	unsigned nlids;          /* LIDs of the destination available to split the unit */
	unsigned flows;
};

static int cmp_unit(const void *x, const void *y)
{
	const struct unit *a = x, *b = y;
	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	return a->lid < b->lid ? -1 : a->lid > b->lid;
}

/* Merge the units of one (a, lid) (their flows share one LFT entry); returns the new count. */
static size_t merge_units(struct unit *u, size_t nu)
{
	if (!nu)
		return 0;
	qsort(u, nu, sizeof(*u), cmp_unit);
	size_t o = 0;
	for (size_t i = 1; i < nu; i++) {
		if (u[i].a == u[o].a && u[i].lid == u[o].lid) {
			u[o].w += u[i].w;
			u[o].flows += u[i].flows;
		} else {
			u[++o] = u[i];
		}
	}
	return o + 1;
}

static bool units_colourable(const struct unit *u, size_t nu, bool use_lmc, char *note, size_t notelen)
{
	for (size_t i = 0; i < nu; i++)
		if (use_lmc && u[i].flows > 1 && u[i].nlids > 1) {
			snprintf(note, notelen, "exact placement impossible: LMC LIDs can split flows sharing a (switch, destination); greedy placement used");
			return false;
		}
	for (size_t i = 1; i < nu; i++)
		if (fabs(u[i].w - u[0].w) > HP_EPS * fmax(1, u[0].w)) {
			snprintf(note, notelen, "exact placement needs equal weights per (leaf, destination); greedy placement used");
			return false;
		}
	return true;
}

/*
 * Colour the units u[0..nu) (vertices: switch slots) with nc colours and
 * set out[a][lid] = port_of[a * nc + colour] for each. Vertex ids are
 * compacted first. Returns 1 applied, 0 degree too high (note), <0 errno.
 */
static int colour_units(struct hp *h, struct unit *u, size_t nu, uint32_t nc, const uint8_t *port_of, char *note,
			size_t notelen)
{
	uint32_t *lmap = malloc(((size_t)h->n_sw + 1) * sizeof(uint32_t));
	uint32_t *rmap = malloc(((size_t)h->n_sw + 1) * sizeof(uint32_t));
	uint32_t *el = malloc((nu + 1) * sizeof(uint32_t)), *er = malloc((nu + 1) * sizeof(uint32_t));
	int32_t *col = malloc((nu + 1) * sizeof(int32_t));
	int rc = 0;
	if (!lmap || !rmap || !el || !er || !col) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t s = 0; s < h->n_sw; s++)
		lmap[s] = rmap[s] = SM_NONE;
	uint32_t nl = 0, nr = 0;
	for (size_t i = 0; i < nu; i++) {
		if (lmap[u[i].a] == SM_NONE)
			lmap[u[i].a] = nl++;
		if (rmap[u[i].b] == SM_NONE)
			rmap[u[i].b] = nr++;
		el[i] = lmap[u[i].a];
		er[i] = rmap[u[i].b];
	}
	rc = kempe(nl, nr, nu, el, er, nc, col);
	if (rc == -ERANGE) {
		snprintf(note, notelen, "exact placement impossible: a switch has more (switch, destination) units than up-links; greedy placement used");
		rc = 0;
		goto out;
	}
	if (rc)
		goto out;
	for (size_t i = 0; i < nu; i++) {
		uint32_t node = h->out->sw_node[u[i].a];
		sm_lfts_set(h->out, node, u[i].lid, port_of[(size_t)u[i].a * nc + (uint32_t)col[i]]);
		*dec(h, h->hot_of_lid[u[i].lid], u[i].a) = 1;
	}
	rc = 1;
out:
	free(lmap);
	free(rmap);
	free(el);
	free(er);
	free(col);
	return rc;
}

/* Slot of the switch behind port e of the switch in slot s (SM_NONE if none). */
static uint32_t peer_slot(const struct hp *h, uint32_t s, uint8_t e)
{
	const struct sm_port *pt = sm_port(h->f, h->out->sw_node[s], e);
	return pt->peer_node == SM_NONE ? SM_NONE : slot_of(h, pt->peer_node);
}

/*
 * Konig colouring for permutation-like profiles on 2- and 3-level trees.
 *
 * Level-1 switches fall into classes: on 2 levels each spine is a class; on
 * 3 levels aggs with the same set of cores above them form a class (agg j
 * of every pod). Stage 1 colours (source leaf, DLID) units with the
 * classes: the bipartite multigraph source leaf x destination leaf, so no
 * leaf up-link and no level-1 -> leaf down-link carries two units. On 3
 * levels, stage 2 colours, per class, the units that continue up, (agg,
 * DLID), with the class's cores: source agg x destination agg (the class's
 * agg in the destination's pod), so no agg -> core or core -> agg link
 * carries two. Every link then carries one unit: max load = unit weight.
 *
 * Returns 1 if stage 1 (and stage 2 where needed) was applied, 0 if the
 * conditions do not hold (note says why; units left undecided go to
 * greedy), negative errno on allocation failure.
 */
int hp_colour(struct hp *h, bool use_lmc, char *note, size_t notelen)
{
	const struct sm_fabric *f = h->f;
	if (h->max_level != 1 && h->max_level != 2) {
		snprintf(note, notelen, "exact placement needs a 2- or 3-level tree (found %u levels)", h->max_level + 1);
		return 0;
	}
	uint32_t ns = h->n_sw;
	uint32_t *cls = malloc(((size_t)ns + 1) * sizeof(*cls));      /* level 1: class; level 2: class */
	uint32_t *cidx = malloc(((size_t)ns + 1) * sizeof(*cidx));     /* level 2: index among its class's cores */
	uint32_t *ncore = calloc((size_t)ns + 1, sizeof(*ncore));      /* per class: cores */
	uint32_t *rep = malloc(((size_t)ns + 1) * sizeof(*rep));       /* per class: representative agg */
	uint8_t *port1 = NULL, *port2 = NULL;
	struct unit *u = NULL;
	int rc = 0;
	size_t nu = 0;
	if (!cls || !cidx || !ncore || !rep) {
		rc = -ENOMEM;
		goto out;
	}
	uint32_t ncls = 0, maxcore = 0;
	for (uint32_t s = 0; s < ns; s++)
		cls[s] = cidx[s] = SM_NONE;
	if (h->max_level == 1) {
		for (uint32_t s = 0; s < ns; s++)
			if (h->level[s] == 1)
				cls[s] = ncls++;
	} else {
		/* class of a core: the class of the first agg below it; aggs: the class of their first core */
		for (uint32_t s = 0; s < ns; s++) {
			if (h->level[s] != 1)
				continue;
			uint32_t c0 = SM_NONE;
			for (uint32_t k = h->up_off[s]; k < h->up_off[s + 1] && c0 == SM_NONE; k++)
				c0 = peer_slot(h, s, h->up[k]);
			if (c0 == SM_NONE) {
				snprintf(note, notelen, "exact placement impossible: an aggregation switch has no core link");
				goto out;
			}
			if (cls[c0] == SM_NONE) {
				cls[c0] = ncls;
				rep[ncls++] = s;
			}
			cls[s] = cls[c0];
			for (uint32_t k = h->up_off[s]; k < h->up_off[s + 1]; k++) {
				uint32_t c = peer_slot(h, s, h->up[k]);
				if (cls[c] == SM_NONE)
					cls[c] = cls[s];
				else if (cls[c] != cls[s]) {
					snprintf(note, notelen, "exact placement impossible: aggregation switches share cores unevenly");
					goto out;
				}
			}
		}
		for (uint32_t s = 0; s < ns; s++)
			if (h->level[s] == 2 && cls[s] != SM_NONE) {
				cidx[s] = ncore[cls[s]]++;
				if (ncore[cls[s]] > maxcore)
					maxcore = ncore[cls[s]];
			}
	}
	if (!ncls) {
		snprintf(note, notelen, "exact placement impossible: no level-1 switches");
		goto out;
	}
	/* port1[leaf * ncls + j]: the leaf's single up-port into class j; port2[agg * maxcore + c] likewise */
	port1 = calloc((size_t)ns * ncls + 1, 1);
	port2 = calloc((size_t)ns * (maxcore ? maxcore : 1) + 1, 1);
	u = calloc(h->n + 1, sizeof(*u));
	if (!port1 || !port2 || !u) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t s = 0; s < ns && !note[0]; s++) {
		if (h->level[s] != 0 && h->level[s] != 1)
			continue;
		bool leaf = h->level[s] == 0;
		if (!leaf && h->max_level != 2)
			continue;
		uint32_t want = leaf ? ncls : ncore[cls[s]];
		uint8_t *row = leaf ? &port1[(size_t)s * ncls] : &port2[(size_t)s * maxcore];
		uint32_t got = 0;
		for (uint32_t k = h->up_off[s]; k < h->up_off[s + 1]; k++) {
			uint32_t t = peer_slot(h, s, h->up[k]);
			uint32_t j = leaf ? cls[t] : cidx[t];
			if (j == SM_NONE || row[j]) {
				snprintf(note, notelen, "exact placement impossible: parallel or unclassified up-links; greedy placement used");
				break;
			}
			row[j] = h->up[k];
			got++;
		}
		if (!note[0] && got != want)
			snprintf(note, notelen, "exact placement impossible: a %s lacks a link to some %s; greedy placement used", leaf ? "leaf" : "agg",
				 leaf ? "spine/agg class" : "core of its class");
	}
	if (note[0])
		goto out;
	/* stage 1: (source leaf, LID) units of pinned flows between different leaves */
	for (size_t i = 0; i < h->n; i++) {
		const struct hflow *fl = &h->fl[i];
		if (!fl->pinned)
			continue;
		uint32_t a = slot_of(h, f->ports[fl->src].peer_node), b = slot_of(h, f->ports[fl->dst].peer_node);
		if (a == SM_NONE || b == SM_NONE || a == b || !hp_is_up(h, h->out->sw_node[a], fl->base_lid))
			continue;
		u[nu++] = (struct unit){ a, b, fl->base_lid, fl->w, fl->nlids, 1 };
	}
	nu = merge_units(u, nu);
	if (!units_colourable(u, nu, use_lmc, note, notelen))
		goto out;
	rc = colour_units(h, u, nu, ncls, port1, note, notelen);
	if (rc <= 0 || h->max_level != 2)
		goto out;
	/* stage 2: units continuing up from the chosen agg, per class */
	size_t n2 = 0;
	for (size_t i = 0; i < nu; i++) {
		uint32_t a = u[i].a, b = u[i].b;
		uint8_t e = sm_lfts_get(h->out, h->out->sw_node[a], u[i].lid);
		uint32_t agg = peer_slot(h, a, e);
		if (agg == SM_NONE || !hp_is_up(h, h->out->sw_node[agg], u[i].lid))
			continue;
		/* destination side: the agg of the same class above the destination leaf */
		uint32_t dagg = peer_slot(h, b, port1[(size_t)b * ncls + cls[agg]]);
		if (dagg == SM_NONE)
			continue;
		u[n2++] = (struct unit){ agg, dagg, u[i].lid, u[i].w, u[i].nlids, u[i].flows };
	}
	nu = merge_units(u, n2);
	if (!units_colourable(u, nu, use_lmc, note, notelen)) {
		rc = 1; /* stage 1 stays; greedy places the rest */
		goto out;
	}
	/* colour each class on its own: units sorted by source agg; group by class */
	struct unit *tmp = malloc((nu + 1) * sizeof(*tmp));
	if (!tmp) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t j = 0; j < ncls && rc > 0; j++) {
		size_t k = 0;
		for (size_t i = 0; i < nu; i++)
			if (cls[u[i].a] == j)
				tmp[k++] = u[i];
		if (!k)
			continue;
		int r2 = colour_units(h, tmp, k, ncore[j], port2, note, notelen);
		if (r2 < 0)
			rc = r2;
		/* r2 == 0: this class's agg units stay undecided, greedy places them */
	}
	free(tmp);
	if (rc > 0)
		rc = 1;
out:
	free(port1);
	free(port2);
	free(u);
	free(cls);
	free(cidx);
	free(ncore);
	free(rep);
	return rc;
}
