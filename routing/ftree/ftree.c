/* SPDX-License-Identifier: MIT */
/*
 * DOC: ftree routing engine (descriptor)
 *
 * Fat trees of 2 to 4 switch levels, ranks found from where the CAs sit,
 * or, with the optional config `roots: [GUID, ...]`, from those top
 * switches down (so leaves whose CAs are all gone still rank as leaves).
 * The model (ranks, up-slot tables, destinations) is built by
 * ftree_model.c, the LFTs are filled by ftree_route.c; this file is the
 * engine descriptor and its option parsing. The state is the parsed
 * config (read-only while routing) and the model each plane was routed
 * with last, which a reroute() takes instead of building it again
 * (stash.c).
 *
 * Destinations are indexed in the canonical host order of metrics.h
 * (pods contiguous, leaves by node GUID, hosts by leaf port), which is
 * also the order of the evaluator's shift permutations: the routes do not
 * depend on node numbering, discovery order or LID values, and a full tree
 * is shift-permutation congestion-free in that order.
 *
 * A plane that is not a fat tree (CAs at different depths, a ring, more
 * than 4 levels, leaves with no up/down path between them) is refused with
 * an error and a reason in ctx->msg, so the engine chain can fall back.
 */
#include "config.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "routing/engine.h"
#include "routing/ftree/model.h"

static void ftree_free(void *state)
{
	struct ft_config *c = state;
	if (!c)
		return;
	free(c->roots);
	ft_stash_free(c->stash);
	free(c);
}

static unsigned long line_of(const yaml_node_t *n)
{
	return (unsigned long)n->start_mark.line + 1;
}

/* roots: [GUID, ...] (hex 0x... or decimal) */
static int parse_roots(struct ft_config *c, yaml_document_t *doc, yaml_node_t *v, char *err, size_t errlen)
{
	if (v->type != YAML_SEQUENCE_NODE) {
		snprintf(err, errlen, "ftree: line %lu: roots must be a list of switch GUIDs", line_of(v));
		return -EINVAL;
	}
	size_t n = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
	c->roots = calloc(n + 1, sizeof(*c->roots));
	if (!c->roots) {
		snprintf(err, errlen, "ftree: out of memory");
		return -ENOMEM;
	}
	for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
		yaml_node_t *g = yaml_document_get_node(doc, *it);
		const char *txt = g && g->type == YAML_SCALAR_NODE ? (const char *)g->data.scalar.value : NULL;
		char *end = NULL;
		errno = 0;
		unsigned long long val = txt && *txt ? strtoull(txt, &end, 0) : 0;
		if (!txt || !end || *end || errno || !val || txt[0] == '-') {
			snprintf(err, errlen, "ftree: line %lu: roots: '%.40s' is not a GUID", g ? line_of(g) : line_of(v),
				 txt ? txt : "(not a scalar)");
			return -EINVAL;
		}
		c->roots[c->n_roots++] = val;
	}
	return 0;
}

static int ftree_init(void **state, yaml_document_t *doc, yaml_node_t *node, char *err, size_t errlen)
{
	*state = NULL;
	/* absent, or "ftree:" with an empty value: no options */
	int none = !node || (node->type == YAML_SCALAR_NODE && !node->data.scalar.length);
	if (!none && node->type != YAML_MAPPING_NODE) {
		snprintf(err, errlen, "ftree: line %lu: options must be a mapping", line_of(node));
		return -EINVAL;
	}
	struct ft_config *c = calloc(1, sizeof(*c));
	if (!c || !(c->stash = ft_stash_new())) {
		ftree_free(c);
		snprintf(err, errlen, "ftree: out of memory");
		return -ENOMEM;
	}
	for (yaml_node_pair_t *p = none ? NULL : node->data.mapping.pairs.start; p && p < node->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(doc, p->key);
		yaml_node_t *v = yaml_document_get_node(doc, p->value);
		int rc = -EINVAL;
		if (!k || k->type != YAML_SCALAR_NODE || !v)
			snprintf(err, errlen, "ftree: line %lu: option names must be scalars", line_of(node));
		else if (!strcmp((const char *)k->data.scalar.value, "roots") && !c->roots)
			rc = parse_roots(c, doc, v, err, errlen);
		else
			snprintf(err, errlen, "ftree: line %lu: unknown or repeated option '%.64s' (ftree knows: roots)",
				 line_of(k), (const char *)k->data.scalar.value);
		if (rc) {
			ftree_free(c);
			return rc;
		}
	}
	*state = c;
	return 0;
}

static int ftree_route_plane(void *state, struct sm_route_ctx *ctx)
{
	struct ft_model m;

	if (!ctx || !ctx->fabric || !ctx->out)
		return -EINVAL;
	ctx->msg[0] = 0;
	int rc = ft_model_build(&m, ctx->fabric, ctx->plane, ctx->out, state, ctx->msg, sizeof(ctx->msg));
	if (rc)
		return rc;
	rc = ft_route(&m, ctx->out, ctx->msg, sizeof(ctx->msg));
	ft_stash_put(state, ctx->plane, ctx->fabric, &m);   /* a reroute from these routes starts with it */
	return rc;
}

const struct sm_engine_ops sm_engine_ftree = SM_ENGINE_OPS(
	.name = "ftree",
	.description = "fat tree (2-4 levels): shift-permutation congestion-free on full trees, "
		       "degraded trees keep the ideal routes and move only the displaced ones",
	.init = ftree_init,
	.route = ftree_route_plane,
	.free = ftree_free,
	.flags = SM_ENGINE_F_NO_CREDIT_LOOP,
	.reroute = ft_reroute_plane);
