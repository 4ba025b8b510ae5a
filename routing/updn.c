/* SPDX-License-Identifier: MIT */
/*
 * DOC: updn engine: up* / down* routing, credit-loop free by construction
 *
 * Ranks: BFS hop count from the root switches. Switches are totally
 * ordered by (rank, GUID); a link s->t goes "up" when t comes before s in
 * that order, "down" otherwise. A legal route is some up links followed by
 * some down links, never down then up. Any cycle of channels would need a
 * down link followed by an up link somewhere, so the channel-dependency
 * graph of legal routes is acyclic whatever the roots (tests check it with
 * the validator's CDG check on rings and meshes where minhop has loops).
 *
 * LFTs are per destination, not per arrival direction, so for destination
 * switch d the routes must agree: the set D of switches with an all-down
 * path to d route down inside D (shortest all-down path); every other
 * switch routes up to the neighbour with the shortest legal distance
 * (processed in rank order, roots first, so that distance is final). A
 * route thus climbs until it enters D and then only descends. Among
 * equal-distance links the shared balancer picks (graph.h).
 *
 * Switches without endpoints may have no legal route to some LID (with
 * several roots, spine to spine needs down-then-up), and on a degraded
 * tree a leaf may have none to the LID of a spine it lost its cable to:
 * such a leaf's entry stays SM_LFT_NONE (a management destination; the
 * validator counts it without failing). No endpoint route
 * passes through such a switch toward that LID, so its entry carries only
 * traffic the switch sources itself (management); it gets a plain shortest
 * path so that every switch still reaches every LID, adding no endpoint
 * channel dependency.
 *
 * Roots: configured by GUID (YAML `roots: [0x..., ...]`), else per physical
 * part the switches farthest from any endpoint (the top of a fat tree). If
 * those roots cannot give every switch with endpoints a legal route to
 * every LID (several roots on a mesh, or every switch has endpoints, e.g.
 * a ring), the part uses a single root instead: the most central
 * candidate (least BFS eccentricity, lowest GUID on ties). Configured roots that leave pairs
 * unroutable are an error, so the chain can fall back.
 */
#include "config.h"
#include "routing/util.h"
#include "routing/cand.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define UPDN_MAX_ROOTS 1024
#define CENTER_TRIES 256

struct updn_cfg {
	unsigned n_roots;
	uint64_t roots[UPDN_MAX_ROOTS];
	unsigned long line[UPDN_MAX_ROOTS];
};

static int parse_guid(yaml_node_t *n, uint64_t *out)
{
	if (!n || n->type != YAML_SCALAR_NODE || !n->data.scalar.length)
		return -EINVAL;
	const char *s = (const char *)n->data.scalar.value;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || *end || !v || s[0] == '-')
		return -EINVAL;
	*out = v;
	return 0;
}

static int updn_init(void **state, yaml_document_t *doc, yaml_node_t *node, char *err, size_t errlen)
{
	static const char *const known[] = { "roots", NULL };
	*state = NULL;
	int rc = sm_yaml_check_keys(doc, node, "updn", known, err, errlen);
	if (rc)
		return rc;
	struct updn_cfg *c = calloc(1, sizeof(*c));
	if (!c) {
		snprintf(err, errlen, "updn: out of memory");
		return -ENOMEM;
	}
	yaml_node_t *r = sm_yaml_map_get(doc, node, "roots");
	if (r) {
		yaml_node_item_t *it = NULL, *end = NULL;
		if (r->type == YAML_SEQUENCE_NODE) {
			it = r->data.sequence.items.start;
			end = r->data.sequence.items.top;
		}
		if (r->type == YAML_SCALAR_NODE) {
			/* one GUID given without brackets */
			rc = parse_guid(r, &c->roots[0]);
			c->line[0] = sm_yaml_line(r);
			c->n_roots = 1;
		} else if (r->type != YAML_SEQUENCE_NODE) {
			rc = -EINVAL;
		}
		if (rc) {
			snprintf(err, errlen, "updn: config line %lu: roots must be a list of switch GUIDs",
				 sm_yaml_line(r));
			free(c);
			return -EINVAL;
		}
		for (; it && it < end; it++) {
			yaml_node_t *g = yaml_document_get_node(doc, *it);
			if (c->n_roots == UPDN_MAX_ROOTS) {
				snprintf(err, errlen, "updn: config line %lu: more than %d roots",
					 sm_yaml_line(g), UPDN_MAX_ROOTS);
				free(c);
				return -EINVAL;
			}
			if (parse_guid(g, &c->roots[c->n_roots])) {
				snprintf(err, errlen, "updn: config line %lu: '%s' is not a GUID (e.g. 0x0002c90300001234)",
					 sm_yaml_line(g ? g : r),
					 g && g->type == YAML_SCALAR_NODE ? (const char *)g->data.scalar.value : "?");
				free(c);
				return -EINVAL;
			}
			c->line[c->n_roots++] = sm_yaml_line(g);
		}
		if (!c->n_roots) {
			snprintf(err, errlen, "updn: config line %lu: roots is an empty list", sm_yaml_line(r));
			free(c);
			return -EINVAL;
		}
	}
	*state = c;
	return 0;
}

static void updn_free(void *state)
{
	free(state);
}

struct ord_key;

struct updn {
	const struct sm_graph *g;
	const struct sm_fabric *f;
	uint16_t *rank;
	uint32_t *ord;           /* slots in (rank, guid) order */
	uint32_t *pos;           /* position of each slot in ord: the total order */
	uint16_t *ddist;         /* all-down distance to d */
	uint16_t *dist;          /* legal distance to d */
	uint16_t *plain;         /* hop count to d ignoring directions */
	uint32_t *queue;
	uint8_t *is_root;
	struct ord_key *keys;
	uint64_t fallback;       /* (switch, LID) entries given shortest paths: no legal route, no endpoint */
	uint64_t unreached_sw;   /* (switch, switch LID) entries without a legal route, left unrouted */
};

struct ord_key {
	uint16_t rank;
	uint32_t slot;
	uint64_t guid;
};

static int ord_cmp(const void *a, const void *b)
{
	const struct ord_key *x = a, *y = b;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->guid < y->guid ? -1 : x->guid > y->guid;
}

/* Ranks by multi-source BFS from the roots, then the total order. */
static void set_ranks(struct updn *u)
{
	const struct sm_graph *g = u->g;
	uint32_t head = 0, tail = 0;
	for (uint32_t s = 0; s < g->n_sw; s++) {
		u->rank[s] = SM_GRAPH_INF;
		if (u->is_root[s]) {
			u->rank[s] = 0;
			u->queue[tail++] = s;
		}
	}
	while (head < tail) {
		uint32_t x = u->queue[head++];
		for (uint32_t i = g->adj_off[x]; i < g->adj_off[x + 1]; i++) {
			uint32_t y = g->adj[i].peer;
			if (u->rank[y] == SM_GRAPH_INF) {
				u->rank[y] = (uint16_t)(u->rank[x] + 1);
				u->queue[tail++] = y;
			}
		}
	}
	for (uint32_t s = 0; s < g->n_sw; s++) {
		u->keys[s].rank = u->rank[s];
		u->keys[s].slot = s;
		u->keys[s].guid = u->f->nodes[g->sw_node[s]].guid;
	}
	qsort(u->keys, g->n_sw, sizeof(*u->keys), ord_cmp);
	for (uint32_t k = 0; k < g->n_sw; k++) {
		u->ord[k] = u->keys[k].slot;
		u->pos[u->ord[k]] = k;
	}
}

/*
 * Distances to destination switch d; returns how many switches with
 * endpoints in d's part have no legal route to it (switches without
 * endpoints may lack one: see updn_route).
 */
static uint32_t distances(struct updn *u, uint32_t d)
{
	const struct sm_graph *g = u->g;
	for (uint32_t s = 0; s < g->n_sw; s++)
		u->ddist[s] = u->dist[s] = SM_GRAPH_INF;
	/* all-down distances: walk from d against down links, i.e. to earlier switches */
	uint32_t head = 0, tail = 0;
	u->ddist[d] = 0;
	u->queue[tail++] = d;
	while (head < tail) {
		uint32_t x = u->queue[head++];
		for (uint32_t i = g->adj_off[x]; i < g->adj_off[x + 1]; i++) {
			uint32_t y = g->adj[i].peer;
			if (u->pos[y] < u->pos[x] && u->ddist[y] == SM_GRAPH_INF) {
				u->ddist[y] = (uint16_t)(u->ddist[x] + 1);
				u->queue[tail++] = y;
			}
		}
	}
	uint32_t missing = 0;
	for (uint32_t k = 0; k < g->n_sw; k++) {
		uint32_t s = u->ord[k];
		if (u->ddist[s] != SM_GRAPH_INF) {
			u->dist[s] = u->ddist[s];
		} else {
			for (uint32_t i = g->adj_off[s]; i < g->adj_off[s + 1]; i++) {
				uint32_t t = g->adj[i].peer;
				if (u->pos[t] < u->pos[s] && u->dist[t] != SM_GRAPH_INF &&
				    u->dist[t] + 1 < u->dist[s])
					u->dist[s] = (uint16_t)(u->dist[t] + 1);
			}
		}
		if (u->dist[s] == SM_GRAPH_INF && g->comp[s] == g->comp[d] &&
		    g->host_off[s + 1] > g->host_off[s])
			missing++;
	}
	return missing;
}

static int delivers_endpoints(const struct sm_graph *g, uint32_t d)
{
	for (uint32_t k = g->dest_off[d]; k < g->dest_off[d + 1]; k++)
		if (!g->dests[g->dest_idx[k]].is_switch)
			return 1;
	return 0;
}

/*
 * Parts whose roots leave some endpoint pair without a legal route. Switch
 * LIDs do not count: with several roots a leaf that lost its cable to a
 * root cannot reach that root's LID legally, and no choice of roots that
 * keeps a fat tree's spines on top avoids it; those stay unrouted (the
 * validator reports them as management pairs).
 */
static void incomplete_parts(struct updn *u, uint8_t *bad)
{
	const struct sm_graph *g = u->g;
	/* one root reaches everything down its BFS tree: only parts with several roots can fail */
	memset(bad, 0, g->n_comp);
	for (uint32_t s = 0; s < g->n_sw; s++)
		if (u->is_root[s] && bad[g->comp[s]] < 2)
			bad[g->comp[s]]++;
	for (uint32_t c = 0; c < g->n_comp; c++)
		bad[c] = bad[c] < 2 ? 0 : 2;  /* 2: not checked yet */
	for (uint32_t d = 0; d < g->n_sw; d++)
		if (bad[g->comp[d]] == 2 && delivers_endpoints(g, d) && distances(u, d))
			bad[g->comp[d]] = 1;
	for (uint32_t c = 0; c < g->n_comp; c++)
		bad[c] = bad[c] == 1;
}

/* The candidate of part c with the least eccentricity (then lowest GUID) becomes its only root. */
static void single_root(struct updn *u, uint32_t c, const uint8_t *cand)
{
	const struct sm_graph *g = u->g;
	uint32_t best = SM_NONE, best_ecc = UINT32_MAX, tried = 0;
	for (uint32_t s = 0; s < g->n_sw; s++) {
		if (g->comp[s] != c || !cand[s] || tried == CENTER_TRIES)
			continue;
		tried++;
		sm_graph_bfs(g, s, u->dist, u->queue);
		uint32_t ecc = 0;
		for (uint32_t t = 0; t < g->n_sw; t++)
			if (u->dist[t] != SM_GRAPH_INF && u->dist[t] > ecc)
				ecc = u->dist[t];
		if (ecc < best_ecc || (ecc == best_ecc && u->f->nodes[g->sw_node[s]].guid <
							     u->f->nodes[g->sw_node[best]].guid)) {
			best = s;
			best_ecc = ecc;
		}
	}
	for (uint32_t s = 0; s < g->n_sw; s++)
		if (g->comp[s] == c)
			u->is_root[s] = s == best;
}

/*
 * Automatic roots: per part, the switches farthest from endpoints. Parts
 * where that is every switch, or where those roots leave pairs unroutable,
 * get one central root.
 */
static int auto_roots(struct updn *u, uint8_t *only_auto_parts, unsigned *n_single)
{
	const struct sm_graph *g = u->g;
	uint16_t *cad = u->ddist;
	uint32_t head = 0, tail = 0;
	uint16_t *maxcad = malloc(((size_t)g->n_comp + 1) * sizeof(*maxcad));
	uint32_t *n_cand = calloc((size_t)g->n_comp + 1, sizeof(*n_cand));
	uint32_t *n_part = calloc((size_t)g->n_comp + 1, sizeof(*n_part));
	uint8_t *cand = calloc((size_t)g->n_sw + 1, 1);
	uint8_t *bad = calloc((size_t)g->n_comp + 1, 1);
	int rc = -ENOMEM;
	if (!maxcad || !n_cand || !n_part || !cand || !bad)
		goto out;
	for (uint32_t s = 0; s < g->n_sw; s++) {
		cad[s] = SM_GRAPH_INF;
		if (g->host_off[s + 1] > g->host_off[s]) {
			cad[s] = 0;
			u->queue[tail++] = s;
		}
	}
	while (head < tail) {
		uint32_t x = u->queue[head++];
		for (uint32_t i = g->adj_off[x]; i < g->adj_off[x + 1]; i++) {
			uint32_t y = g->adj[i].peer;
			if (cad[y] == SM_GRAPH_INF) {
				cad[y] = (uint16_t)(cad[x] + 1);
				u->queue[tail++] = y;
			}
		}
	}
	for (uint32_t c = 0; c < g->n_comp; c++)
		maxcad[c] = 0;
	for (uint32_t s = 0; s < g->n_sw; s++)
		if (cad[s] != SM_GRAPH_INF && cad[s] > maxcad[g->comp[s]])
			maxcad[g->comp[s]] = cad[s];
	for (uint32_t s = 0; s < g->n_sw; s++) {
		uint32_t c = g->comp[s];
		n_part[c]++;
		/* a part without endpoints has cad INF everywhere: every switch is a candidate */
		cand[s] = cad[s] == SM_GRAPH_INF || cad[s] == maxcad[c];
		n_cand[c] += cand[s];
	}
	for (uint32_t s = 0; s < g->n_sw; s++)
		if (only_auto_parts[g->comp[s]])
			u->is_root[s] = cand[s];
	set_ranks(u);
	incomplete_parts(u, bad);
	*n_single = 0;
	for (uint32_t c = 0; c < g->n_comp; c++)
		if (only_auto_parts[c] && (bad[c] || (n_cand[c] == n_part[c] && n_part[c] > 1))) {
			single_root(u, c, cand);
			++*n_single;
		}
	if (*n_single)
		set_ranks(u);
	rc = 0;
out:
	free(maxcad);
	free(n_cand);
	free(n_part);
	free(cand);
	free(bad);
	return rc;
}

static int choose_roots(struct updn *u, const struct updn_cfg *cfg, char *msg, size_t len)
{
	const struct sm_graph *g = u->g;
	const struct sm_fabric *f = u->f;
	uint8_t *autop = malloc((size_t)g->n_comp + 1);
	if (!autop)
		return -ENOMEM;
	memset(autop, 1, (size_t)g->n_comp + 1);
	memset(u->is_root, 0, g->n_sw);
	unsigned here = 0;
	for (unsigned i = 0; cfg && i < cfg->n_roots; i++) {
		uint32_t n = sm_fabric_find_node(f, cfg->roots[i]);
		if (n == SM_NONE || f->nodes[n].type != SM_NODE_SWITCH) {
			snprintf(msg, len, "config line %lu: root 0x%016llx is not a switch of this fabric",
				 cfg->line[i], (unsigned long long)cfg->roots[i]);
			free(autop);
			return -EINVAL;
		}
		uint32_t s = g->slot_of_node[n];
		if (s == SM_NONE)
			continue;  /* a root of another plane */
		u->is_root[s] = 1;
		autop[g->comp[s]] = 0;
		here++;
	}
	unsigned n_single = 0;
	int rc = auto_roots(u, autop, &n_single);
	free(autop);
	if (rc)
		return rc;
	if (here) {
		uint8_t *bad = calloc((size_t)g->n_comp + 1, 1);
		if (!bad)
			return -ENOMEM;
		incomplete_parts(u, bad);
		uint32_t nbad = 0;
		for (uint32_t c = 0; c < g->n_comp; c++)
			nbad += bad[c];
		free(bad);
		if (nbad) {
			snprintf(msg, len, "the %u configured roots leave switches with endpoints without a "
				 "legal up* / down* route in %u physical part(s); add roots or drop the list", here, nbad);
			return -EINVAL;
		}
	}
	uint32_t nroots = 0;
	for (uint32_t s = 0; s < g->n_sw; s++)
		nroots += u->is_root[s];
	snprintf(msg, len, "%u roots (%u configured, %u parts with a single central root)", nroots, here,
		 n_single);
	return 0;
}

/*
 * Candidates toward d: legal (up* then down*) links one legal hop closer;
 * a switch with no legal route and no endpoint gets shortest paths (see
 * below). Counts what it cannot route in c->unreached and u->unreached_sw.
 */
static const uint16_t *updn_cands(void *arg, const struct sm_graph *g, uint32_t d, struct sm_cand *c)
{
	struct updn *u = arg;
	uint32_t nd = g->dest_off[d + 1] - g->dest_off[d], k = 0;
	int have_plain = 0;

	distances(u, d);
	for (uint32_t s = 0; s < g->n_sw; s++) {
		c->cand_off[s] = k;
		if (u->dist[s] == SM_GRAPH_INF && g->comp[s] != g->comp[d]) {
			c->unreached += nd;
			continue;
		}
		if (u->dist[s] == SM_GRAPH_INF && g->host_off[s + 1] > g->host_off[s]) {
			/* only possible for a switch-LID-only d (see incomplete_parts) */
			u->unreached_sw += nd;
			continue;
		}
		if (u->dist[s] == SM_GRAPH_INF) {
			/*
			 * No legal route, and (checked when the roots were
			 * chosen) no endpoint on s: no legal route of anyone
			 * passes s toward d, so this entry only carries
			 * traffic sourced by the switch itself (management).
			 * Give it a shortest path so the switch still reaches
			 * every LID; it adds no endpoint dependency.
			 */
			if (!have_plain) {
				sm_graph_bfs(g, d, u->plain, u->queue);
				have_plain = 1;
			}
			for (uint32_t i = g->adj_off[s]; i < g->adj_off[s + 1]; i++)
				if (u->plain[g->adj[i].peer] + 1 == u->plain[s])
					c->cand[k++] = i;
			u->fallback += nd;
			continue;
		}
		int down = u->ddist[s] != SM_GRAPH_INF;
		for (uint32_t i = g->adj_off[s]; i < g->adj_off[s + 1]; i++) {
			uint32_t t = g->adj[i].peer;
			if (down ? (u->pos[t] > u->pos[s] && u->ddist[t] + 1 == u->ddist[s])
				 : (u->pos[t] < u->pos[s] && u->dist[t] + 1 == u->dist[s]))
				c->cand[k++] = i;
		}
	}
	c->cand_off[g->n_sw] = k;
	/* routes strictly decrease the legal distance; switch-only fallbacks (INF) carry nobody */
	return u->dist;
}

static int updn_route(void *state, struct sm_route_ctx *ctx)
{
	const struct updn_cfg *cfg = state;
	struct sm_graph *g;
	struct updn u = { 0 };
	char rootmsg[160] = "";
	int rc = sm_cand_graph(ctx, &g);
	if (rc)
		return rc;
	size_t n = (size_t)g->n_sw + 1;
	u.g = g;
	u.f = ctx->fabric;
	u.rank = malloc(n * sizeof(*u.rank));
	u.ord = malloc(n * sizeof(*u.ord));
	u.pos = malloc(n * sizeof(*u.pos));
	u.ddist = malloc(n * sizeof(*u.ddist));
	u.dist = malloc(n * sizeof(*u.dist));
	u.plain = malloc(n * sizeof(*u.plain));
	u.queue = malloc(n * sizeof(*u.queue));
	u.is_root = calloc(n, 1);
	u.keys = malloc(n * sizeof(*u.keys));
	if (!u.rank || !u.ord || !u.pos || !u.ddist || !u.dist || !u.plain || !u.queue || !u.is_root || !u.keys) {
		rc = -ENOMEM;
		goto out;
	}
	rc = choose_roots(&u, cfg, rootmsg, sizeof(rootmsg));
	if (rc) {
		snprintf(ctx->msg, sizeof(ctx->msg), "%s", rootmsg);
		goto out;
	}
	rc = sm_cand_route(g, ctx, updn_cands, &u);
	if (!rc && !ctx->msg[0])
		snprintf(ctx->msg, sizeof(ctx->msg),
			 "%s; %llu switch-only entries on shortest paths; %llu (switch, switch LID) entries "
			 "without a legal route left unrouted", rootmsg, (unsigned long long)u.fallback,
			 (unsigned long long)u.unreached_sw);
out:
	free(u.rank);
	free(u.ord);
	free(u.pos);
	free(u.ddist);
	free(u.dist);
	free(u.plain);
	free(u.queue);
	free(u.is_root);
	free(u.keys);
	sm_graph_free(g);
	return rc;
}

const struct sm_engine_ops sm_engine_updn = SM_ENGINE_OPS(
	.name = "updn",
	.description = "up* / down* on any topology: credit-loop free, minimal legal paths, balanced",
	.init = updn_init,
	.route = updn_route,
	.free = updn_free,
	.flags = SM_ENGINE_F_NO_CREDIT_LOOP);
