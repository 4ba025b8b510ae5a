/* SPDX-License-Identifier: MIT */
/*
 * DOC: ecmp: example routing-engine plugin (shortest paths, hashed egress)
 *
 * A complete engine built as a shared object against routing/engine.h only:
 * it links nothing of smd and exports one symbol, `smd_engine` (see
 * plugins/plugin.map). Load it with `-R ecmp` when ecmp.so sits in the
 * plugin directory, or give its path to the loader.
 *
 * Routing: for every switch d that delivers some LID (its own LID, or the
 * LIDs of endpoint ports cabled to it), a BFS from d over switch-to-switch
 * cables gives each switch's hop count to d. At every other switch the
 * equal-cost egress ports toward d (ports cabled to a switch one hop
 * closer, parallel cables included, in port order) are the candidates, and
 * the LFT entry for a DLID is candidate number hash(DLID) mod count. Like
 * ECMP in IP routers, the choice is stateless: it needs no route counting,
 * and a DLID keeps its port across reroutes as long as the candidate set of
 * that switch is unchanged.
 *
 * Hashes (YAML `ecmp: {hash: lid|mix, seed: N, per_switch: true|false}`):
 *   lid  (default) DLID + seed, counted in ports (DLID >> LMC) so that
 *        consecutive ports take consecutive egress ports, which on a full
 *        fat tree spreads each leaf's hosts over all spines; the other
 *        LIDs of an LMC range are shifted to other egress ports;
 *   mix  a 64-bit mixer (splitmix64 finaliser) of DLID ^ seed, for LID
 *        layouts where consecutive LIDs are not spread evenly.
 * per_switch mixes the switch GUID in too, so that switches at different
 * levels do not make the same choice for one DLID (hash polarisation).
 *
 * The output is validated by smd like any engine's; unreachable LIDs stay
 * 255 and are reported in ctx->msg.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "routing/engine.h"

extern const struct sm_engine_ops smd_engine;

enum ecmp_hash { HASH_LID = 0, HASH_MIX };

struct ecmp_cfg {
	enum ecmp_hash hash;
	uint64_t seed;
	int per_switch;
};

static unsigned long line_of(const yaml_node_t *n)
{
	return (unsigned long)n->start_mark.line + 1;
}

static const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static int parse_opt(struct ecmp_cfg *c, const char *key, yaml_node_t *v, char *err, size_t errlen)
{
	const char *s = scalar(v);
	if (!strcmp(key, "hash")) {
		if (s && !strcmp(s, "lid"))
			c->hash = HASH_LID;
		else if (s && !strcmp(s, "mix"))
			c->hash = HASH_MIX;
		else
			goto bad;
		return 0;
	}
	if (!strcmp(key, "seed")) {
		char *end;
		if (!s || !*s || *s == '-')
			goto bad;
		errno = 0;
		c->seed = strtoull(s, &end, 0);
		if (errno || *end)
			goto bad;
		return 0;
	}
	if (!strcmp(key, "per_switch")) {
		if (s && (!strcmp(s, "true") || !strcmp(s, "yes")))
			c->per_switch = 1;
		else if (s && (!strcmp(s, "false") || !strcmp(s, "no")))
			c->per_switch = 0;
		else
			goto bad;
		return 0;
	}
	snprintf(err, errlen, "ecmp: config line %lu: unknown option '%s' (known: hash, seed, per_switch)",
		 line_of(v), key);
	return -EINVAL;
bad:
	snprintf(err, errlen, "ecmp: config line %lu: bad value for %s (hash: lid|mix, seed: integer, "
		 "per_switch: true|false)", line_of(v), key);
	return -EINVAL;
}

static int ecmp_init(void **state, yaml_document_t *doc, yaml_node_t *node, char *err, size_t errlen)
{
	*state = NULL;
	struct ecmp_cfg *c = calloc(1, sizeof(*c));
	if (!c) {
		snprintf(err, errlen, "ecmp: out of memory");
		return -ENOMEM;
	}
	if (node && !(node->type == YAML_SCALAR_NODE && !node->data.scalar.length)) {
		if (node->type != YAML_MAPPING_NODE) {
			snprintf(err, errlen, "ecmp: config line %lu: expected a mapping of options", line_of(node));
			free(c);
			return -EINVAL;
		}
		for (yaml_node_pair_t *p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top; p++) {
			const char *key = scalar(yaml_document_get_node(doc, p->key));
			yaml_node_t *v = yaml_document_get_node(doc, p->value);
			int rc = key && v ? parse_opt(c, key, v, err, errlen) : -EINVAL;
			if (rc) {
				if (!key || !v)
					snprintf(err, errlen, "ecmp: config line %lu: bad option", line_of(node));
				free(c);
				return rc;
			}
		}
	}
	*state = c;
	return 0;
}

static void ecmp_free(void *state)
{
	free(state);
}

static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static unsigned pick(const struct ecmp_cfg *c, uint16_t dlid, unsigned lmc, uint64_t sw_guid, unsigned n)
{
	uint64_t h;
	if (c->hash == HASH_LID) {
		/*
		 * With LMC, base LIDs are 2^lmc apart: count ports, not LIDs,
		 * so base LIDs still take consecutive ports, and shift a port's
		 * other LIDs by n / 2^lmc each so they leave by other ports.
		 */
		uint64_t off = dlid & ((1u << lmc) - 1), step = n >> lmc ? n >> lmc : 1;
		h = ((uint64_t)dlid >> lmc) + off * step + c->seed + (c->per_switch ? mix64(sw_guid) : 0);
	} else {
		h = mix64((uint64_t)dlid ^ c->seed ^ (c->per_switch ? mix64(sw_guid) : 0));
	}
	return (unsigned)(h % n);
}

struct ecmp_run {
	const struct sm_fabric *f;
	struct sm_lfts *l;
	uint16_t *dist;
	uint32_t *queue;
	uint32_t *deliver;       /* [top_lid+1] slot delivering each LID, SM_NONE */
	uint8_t *out_port;       /* [top_lid+1] port at that slot */
	uint8_t *lmc;            /* [top_lid+1] LMC of the port owning the LID */
};

/* Switch slot across the cable of port p of switch node n, or SM_NONE. */
static uint32_t peer_slot(const struct ecmp_run *r, const struct sm_node *n, unsigned p)
{
	const struct sm_port *pp = &r->f->ports[n->port0 + p];
	if (pp->peer_node == SM_NONE)
		return SM_NONE;
	return r->l->slot_of_node[pp->peer_node];
}

static void bfs(struct ecmp_run *r, uint32_t src)
{
	const struct sm_lfts *l = r->l;
	uint32_t head = 0, tail = 0;
	for (uint32_t s = 0; s < l->n_switches; s++)
		r->dist[s] = UINT16_MAX;
	r->dist[src] = 0;
	r->queue[tail++] = src;
	while (head < tail) {
		uint32_t u = r->queue[head++];
		const struct sm_node *n = &r->f->nodes[l->sw_node[u]];
		for (unsigned p = 1; p <= n->nports; p++) {
			uint32_t v = peer_slot(r, n, p);
			if (v != SM_NONE && r->dist[v] == UINT16_MAX) {
				r->dist[v] = (uint16_t)(r->dist[u] + 1);
				r->queue[tail++] = v;
			}
		}
	}
}

/* Where each LID is delivered; returns how many LIDs have a delivering switch. */
static uint32_t find_deliveries(struct ecmp_run *r, unsigned plane, uint32_t *n_lids)
{
	const struct sm_plane *pl = &r->f->planes[plane];
	uint32_t routable = 0;
	*n_lids = 0;
	for (uint32_t lid = 0; lid <= r->l->top_lid; lid++) {
		r->deliver[lid] = SM_NONE;
		r->out_port[lid] = 0;
		r->lmc[lid] = 0;
		if (!lid || !pl->lid_map || pl->lid_map[lid] == SM_NONE)
			continue;
		++*n_lids;
		const struct sm_port *pp = &r->f->ports[pl->lid_map[lid]];
		uint32_t s = r->l->slot_of_node[pp->node];
		r->lmc[lid] = pp->lmc;
		if (s == SM_NONE && pp->peer_node != SM_NONE) {
			s = r->l->slot_of_node[pp->peer_node];
			r->out_port[lid] = pp->peer_port;
		}
		r->deliver[lid] = s;
		routable += s != SM_NONE;
	}
	return routable;
}

static int ecmp_route(void *state, struct sm_route_ctx *ctx)
{
	const struct ecmp_cfg *c = state;
	struct sm_lfts *l = ctx->out;
	struct ecmp_run r = { .f = ctx->fabric, .l = l };
	int rc = 0;
	if (!l->n_switches) {
		snprintf(ctx->msg, sizeof(ctx->msg), "plane %u has no switch", ctx->plane);
		return -ENODEV;
	}
	r.dist = malloc((size_t)l->n_switches * sizeof(*r.dist));
	r.queue = malloc((size_t)l->n_switches * sizeof(*r.queue));
	r.deliver = malloc(((size_t)l->top_lid + 1) * sizeof(*r.deliver));
	r.out_port = malloc((size_t)l->top_lid + 1);
	r.lmc = malloc((size_t)l->top_lid + 1);
	uint8_t *has = calloc(l->n_switches, 1);
	if (!r.dist || !r.queue || !r.deliver || !r.out_port || !r.lmc || !has) {
		snprintf(ctx->msg, sizeof(ctx->msg), "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	uint32_t n_lids, routable = find_deliveries(&r, ctx->plane, &n_lids);
	if (n_lids && !routable) {
		snprintf(ctx->msg, sizeof(ctx->msg), "no LID of plane %u is on a switch or cabled to one",
			 ctx->plane);
		rc = -ENETUNREACH;
		goto out;
	}
	for (uint32_t lid = 1; lid <= l->top_lid; lid++)
		if (r.deliver[lid] != SM_NONE)
			has[r.deliver[lid]] = 1;
	uint64_t unreached = 0;
	uint8_t cand[256];
	for (uint32_t d = 0; d < l->n_switches; d++) {
		if (!has[d])
			continue;
		bfs(&r, d);
		for (uint32_t s = 0; s < l->n_switches; s++) {
			const struct sm_node *n = &r.f->nodes[l->sw_node[s]];
			uint8_t *row = sm_lfts_row(l, s);
			unsigned nc = 0;
			if (s != d && r.dist[s] != UINT16_MAX)
				for (unsigned p = 1; p <= n->nports; p++) {
					uint32_t t = peer_slot(&r, n, p);
					if (t != SM_NONE && t != s && r.dist[t] + 1 == r.dist[s])
						cand[nc++] = (uint8_t)p;
				}
			for (uint32_t lid = 1; lid <= l->top_lid; lid++) {
				if (r.deliver[lid] != d)
					continue;
				if (s == d)
					row[lid] = r.out_port[lid];
				else if (nc)
					row[lid] = cand[pick(c, (uint16_t)lid, r.lmc[lid], n->guid, nc)];
				else
					unreached++;
			}
		}
	}
	if (unreached || routable < n_lids)
		snprintf(ctx->msg, sizeof(ctx->msg),
			 "%llu (switch, LID) entries unrouted (destination in another physical part); "
			 "%u LIDs not cabled to a switch", (unsigned long long)unreached, n_lids - routable);
out:
	free(r.dist);
	free(r.queue);
	free(r.deliver);
	free(r.out_port);
	free(r.lmc);
	free(has);
	return rc;
}

const struct sm_engine_ops smd_engine = {
	.size = sizeof(struct sm_engine_ops),
	.abi_version = SM_ENGINE_ABI_VERSION,
	.name = "ecmp",
	.description = "example plugin: shortest paths, egress port chosen by hashing the DLID among equal-cost ports",
	.init = ecmp_init,
	.route = ecmp_route,
	.free = ecmp_free,
	/*
	 * Capabilities (SM_ENGINE_F_*): none. Shortest paths may have credit
	 * loops, so smd validates every output in full, even after a reroute.
	 */
	.flags = 0,
};
