/* SPDX-License-Identifier: MIT */
/*
 * DOC: engine "hotpath": ftree routes, then the profile's heavy flows pinned
 *
 * Owns its options (YAML subtree) and the state of the ftree engine it
 * wraps; keeps the last report of each plane for the caller (dry-run,
 * daemon) through sm_hotpath_last_report(). Data flow per plane:
 * sm_engine_ftree.route() fills ctx->out -> copy as base ->
 * sm_hotpath_pin() rewrites pinned up-entries of ctx->out -> ctx->msg gets
 * the one-line report. Without a profile the result is exactly ftree's.
 * The pinned LFTs are checked for credit loops (sm_cdg_check) and replaced
 * by the base if pinning introduced one.
 *
 * Config (all optional):
 *   hotpath:
 *     top_k: 10000          # pin destinations of the K heaviest flows (0 = all)
 *     share: 0.9            # ... or of the flows covering this share of the weight
 *     method: auto          # auto | colour | greedy
 *     improve: true         # local min-max improvement after colour/greedy
 *     improve_rounds: 100000
 *     lmc: true             # use every LID of an LMC range as a separate path
 *     ftree: { ... }        # passed to the ftree engine as its own subtree
 */
#include "routing/hotpath/hotpath.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "model/profile.h"
#include "routing/builtin.h" /* sm_engine_ftree */
#include "routing/validate.h"

struct hotpath_state {
	struct sm_hotpath_opts o;
	void *ftree;
	struct sm_hotpath_report rep[SM_MAX_PLANES];
	int have[SM_MAX_PLANES];
};

static int scalar(yaml_node_t *n, char *out, size_t len)
{
	if (!n || n->type != YAML_SCALAR_NODE || n->data.scalar.length >= len)
		return -EINVAL;
	memcpy(out, n->data.scalar.value, n->data.scalar.length);
	out[n->data.scalar.length] = 0;
	return 0;
}

static int parse_bool(const char *s, int *v)
{
	if (!strcmp(s, "true") || !strcmp(s, "yes") || !strcmp(s, "on") || !strcmp(s, "1"))
		*v = 1;
	else if (!strcmp(s, "false") || !strcmp(s, "no") || !strcmp(s, "off") || !strcmp(s, "0"))
		*v = 0;
	else
		return -EINVAL;
	return 0;
}

static int parse_opts(struct hotpath_state *st, yaml_document_t *doc, yaml_node_t *node, yaml_node_t **ftree,
		      char *err, size_t errlen)
{
	*ftree = NULL;
	if (!node)
		return 0;
	if (node->type == YAML_SCALAR_NODE && node->data.scalar.length == 0)
		return 0;
	if (node->type != YAML_MAPPING_NODE) {
		snprintf(err, errlen, "hotpath: config line %zu: expected a mapping", node->start_mark.line + 1);
		return -EINVAL;
	}
	for (yaml_node_pair_t *p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(doc, p->key), *v = yaml_document_get_node(doc, p->value);
		char key[32], val[64];
		size_t line = (k ? k->start_mark.line : 0) + 1;
		if (scalar(k, key, sizeof(key))) {
			snprintf(err, errlen, "hotpath: config line %zu: bad key", line);
			return -EINVAL;
		}
		if (!strcmp(key, "ftree")) {
			*ftree = v;
			continue;
		}
		if (scalar(v, val, sizeof(val))) {
			snprintf(err, errlen, "hotpath: config line %zu: %s: expected a scalar", line, key);
			return -EINVAL;
		}
		char *end;
		int b;
		if (!strcmp(key, "top_k")) {
			unsigned long x = strtoul(val, &end, 10);
			if (*end || end == val || val[0] == '-' || x > 100000000UL)
				goto bad;
			st->o.top_k = (unsigned)x;
		} else if (!strcmp(key, "share")) {
			double x = strtod(val, &end);
			if (*end || end == val || !(x > 0 && x <= 1))
				goto bad;
			st->o.share = x;
		} else if (!strcmp(key, "method")) {
			if (!strcmp(val, "auto"))
				st->o.method = SM_HOTPATH_AUTO;
			else if (!strcmp(val, "colour") || !strcmp(val, "color"))
				st->o.method = SM_HOTPATH_COLOUR;
			else if (!strcmp(val, "greedy"))
				st->o.method = SM_HOTPATH_GREEDY;
			else
				goto bad;
		} else if (!strcmp(key, "improve")) {
			if (parse_bool(val, &b))
				goto bad;
			st->o.no_improve = !b;
		} else if (!strcmp(key, "improve_rounds")) {
			unsigned long x = strtoul(val, &end, 10);
			if (*end || end == val || val[0] == '-' || x == 0 || x > 100000000UL)
				goto bad;
			st->o.improve_rounds = (unsigned)x;
		} else if (!strcmp(key, "lmc")) {
			if (parse_bool(val, &b))
				goto bad;
			st->o.no_lmc = !b;
		} else {
			snprintf(err, errlen,
				 "hotpath: config line %zu: unknown key '%s' (top_k, share, method, improve, improve_rounds, lmc, ftree)",
				 line, key);
			return -EINVAL;
		}
		continue;
bad:
		snprintf(err, errlen, "hotpath: config line %zu: bad value '%s' for %s", line, val, key);
		return -EINVAL;
	}
	return 0;
}

static void hp_free_state(void *state)
{
	struct hotpath_state *st = state;
	if (!st)
		return;
	if (st->ftree && sm_engine_ftree.free)
		sm_engine_ftree.free(st->ftree);
	for (unsigned i = 0; i < SM_MAX_PLANES; i++)
		sm_hotpath_report_clear(&st->rep[i]);
	free(st);
}

static int hp_init(void **state, yaml_document_t *doc, yaml_node_t *node, char *err, size_t errlen)
{
	struct hotpath_state *st = calloc(1, sizeof(*st));
	yaml_node_t *fnode = NULL;
	*state = NULL;
	if (!st) {
		snprintf(err, errlen, "hotpath: out of memory");
		return -ENOMEM;
	}
	sm_hotpath_opts_init(&st->o);
	int rc = parse_opts(st, doc, node, &fnode, err, errlen);
	if (!rc && sm_engine_ftree.init)
		rc = sm_engine_ftree.init(&st->ftree, doc, fnode, err, errlen);
	if (rc) {
		hp_free_state(st);
		return rc;
	}
	*state = st;
	return 0;
}

static int hp_route(void *state, struct sm_route_ctx *ctx)
{
	struct hotpath_state *st = state;
	int rc = sm_engine_ftree.route(st->ftree, ctx);
	if (rc)
		return rc;
	if (ctx->plane >= SM_MAX_PLANES)
		return 0;
	sm_hotpath_report_clear(&st->rep[ctx->plane]);
	st->have[ctx->plane] = 0;
	const struct sm_profile *p = ctx->profile;
	if (!p || !p->n_flows) {
		snprintf(ctx->msg, sizeof(ctx->msg), "hotpath: no profile, plain ftree routes");
		return 0;
	}
	struct sm_lfts *base = sm_lfts_dup(ctx->out);
	if (!base) {
		snprintf(ctx->msg, sizeof(ctx->msg), "hotpath: out of memory");
		return -ENOMEM;
	}
	char err[256] = "";
	struct sm_hotpath_report *rep = &st->rep[ctx->plane];
	rc = sm_hotpath_pin(ctx->fabric, ctx->plane, base, p->flows, p->n_flows, &st->o, ctx->out, rep, err,
			    sizeof(err));
	if (rc) {
		sm_lfts_free(base);
		snprintf(ctx->msg, sizeof(ctx->msg), "%s", err[0] ? err : "hotpath: pinning failed");
		return rc;
	}
	/*
	 * Pinning only swaps up-ports for up-ports on up*-down* paths, which
	 * cannot close a cycle on a tree; but a degraded tree whose base routes
	 * turn down-up can route transit traffic through a changed entry. Check
	 * the channel dependencies, and if pinning added a credit loop the base
	 * did not have, fall back to the base routes.
	 */
	if (rep->lft_changed && sm_cdg_check(ctx->fabric, ctx->plane, ctx->out, NULL) == 1 &&
	    sm_cdg_check(ctx->fabric, ctx->plane, base, NULL) == 0) {
		memcpy(ctx->out->ports, base->ports, (size_t)base->n_switches * ((size_t)base->top_lid + 1));
		snprintf(rep->note, sizeof(rep->note), "pinning reverted: it would have created a credit loop");
		rep->max_load_after = rep->max_load_before;
		rep->ebb_after = rep->ebb_before;
		rep->lft_changed = rep->lft_blocks_changed = 0;
		rep->lft_switches_changed = 0;
		rep->pinned = 0;
		for (size_t i = 0; i < rep->n_flows; i++) {
			rep->dlid[i] = ctx->fabric->ports[rep->flow[i].dst].lid;
			rep->is_pinned[i] = 0;
		}
	}
	sm_lfts_free(base);
	st->have[ctx->plane] = 1;
	sm_hotpath_report_format(rep, ctx->msg, sizeof(ctx->msg));
	return 0;
}

const struct sm_hotpath_report *sm_hotpath_last_report(const void *state, unsigned plane)
{
	const struct hotpath_state *st = state;
	if (!st || plane >= SM_MAX_PLANES || !st->have[plane])
		return NULL;
	return &st->rep[plane];
}

/*
 * No SM_ENGINE_F_NO_CREDIT_LOOP: the pinned routes keep ftree's promise only
 * when the check above runs (it is skipped if it cannot allocate), so the
 * chain checks in full.
 */
const struct sm_engine_ops sm_engine_hotpath = SM_ENGINE_OPS(
	.name = "hotpath",
	.description = "ftree with the traffic profile's heaviest flows pinned to least-loaded paths",
	.init = hp_init,
	.route = hp_route,
	.free = hp_free_state);
