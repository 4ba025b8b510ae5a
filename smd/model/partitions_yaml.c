/* SPDX-License-Identifier: MIT */
/*
 * DOC: partitions, the YAML form (smd-partitions(5))
 *
 *   partitions:
 *     - name: Default
 *       pkey: 0x7fff
 *       ipoib: true                 # and mtu, rate, sl, scope (one or a list), qkey, tclass, flow_label
 *       defmember: full             # full, limited or both
 *       indx0: false
 *       members: [ALL, SELF=full, 0x0002c903000e0b72=limited]
 *       mgroups:
 *         - {mgid: "ff12:401b::0707", sl: 1}
 *
 * Each entry is one definition of the text grammar, fed through the same
 * calls (partitions_priv.h), so the rules and messages are the same; keys
 * are exact (no prefixes) and unknown keys are refused. Lines are the
 * YAML nodes'.
 */
#include "model/partitions_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

struct yctx {
	struct pp_ctx *c;
	yaml_document_t *doc;
};

static unsigned yline(const yaml_node_t *n)
{
	return (unsigned)n->start_mark.line + 1;
}

static const char *yscalar(struct yctx *y, yaml_node_t *n, const char *what)
{
	y->c->line = yline(n);
	if (n->type != YAML_SCALAR_NODE) {
		pp_fail(y->c, "%s: expected a scalar", what);
		return NULL;
	}
	if (strlen((const char *)n->data.scalar.value) != n->data.scalar.length) {
		pp_fail(y->c, "%s: NUL character", what);
		return NULL;
	}
	return (const char *)n->data.scalar.value;
}

/* YAML key -> OpenSM flag name (group and partition flags). */
static const char *flag_name(const char *key)
{
	static const char *const map[][2] = {
		{ "mtu", "mtu" }, { "rate", "rate" }, { "sl", "sl" }, { "scope", "scope" }, { "qkey", "Q_Key" },
		{ "tclass", "TClass" }, { "flow_label", "FlowLabel" }, { "defmember", "defmember" },
	};
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(key, map[i][0]))
			return map[i][1];
	return NULL;
}

static bool ytrue(const char *s, int *v)
{
	if (!strcmp(s, "true") || !strcmp(s, "yes"))
		*v = 1;
	else if (!strcmp(s, "false") || !strcmp(s, "no"))
		*v = 0;
	else
		return false;
	return true;
}

/* Flags of a mapping (every key but those in skip) into flag/val; n in, count out. */
struct yflags {
	char *flag[32], *val[32];
	unsigned n;
};

static int add_flag(struct yctx *y, struct yflags *f, const char *flag, const char *val)
{
	if (f->n == 32)
		return pp_fail(y->c, "too many flags");
	f->flag[f->n] = (char *)flag;
	f->val[f->n++] = (char *)val;
	return 0;
}

static int entry_flags(struct yctx *y, const char *key, yaml_node_t *v, struct yflags *f, bool group)
{
	const char *name = flag_name(key);
	int b;

	if (!group && (!strcmp(key, "ipoib") || !strcmp(key, "indx0"))) {
		const char *s = yscalar(y, v, key);
		if (!s)
			return -EINVAL;
		if (!ytrue(s, &b))
			return pp_fail(y->c, "%s: expected true or false", key);
		return b ? add_flag(y, f, !strcmp(key, "ipoib") ? "ipoib" : "indx0", NULL) : 0;
	}
	if (!name || (group && !strcmp(name, "defmember")))
		return pp_fail(y->c, "unknown key '%s'", key);
	if (!strcmp(key, "scope") && v->type == YAML_SEQUENCE_NODE) {
		for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
			const char *s = yscalar(y, yaml_document_get_node(y->doc, *it), key);
			if (!s || add_flag(y, f, name, s))
				return -EINVAL;
		}
		return 0;
	}
	const char *s = yscalar(y, v, key);
	return s ? add_flag(y, f, name, s) : -EINVAL;
}

static int members(struct yctx *y, yaml_node_t *v)
{
	y->c->line = yline(v);
	if (v->type != YAML_SEQUENCE_NODE)
		return pp_fail(y->c, "members: expected a list");
	for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
		const char *s = yscalar(y, yaml_document_get_node(y->doc, *it), "members");
		if (!s)
			return -EINVAL;
		char *dup = strdup(s);
		if (!dup)
			return -ENOMEM;
		char *eq = strchr(dup, '='), *m = NULL;
		if (eq) {
			*eq = '\0';
			m = pp_trim(eq + 1);
		}
		int rc = pp_member(y->c, pp_trim(dup), m);
		free(dup);
		if (rc)
			return rc;
	}
	return 0;
}

static int mgroups(struct yctx *y, yaml_node_t *v)
{
	y->c->line = yline(v);
	if (v->type != YAML_SEQUENCE_NODE)
		return pp_fail(y->c, "mgroups: expected a list");
	for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
		yaml_node_t *g = yaml_document_get_node(y->doc, *it);
		struct yflags f = { .n = 0 };
		const char *mgid = NULL;
		y->c->line = yline(g);
		if (g->type != YAML_MAPPING_NODE)
			return pp_fail(y->c, "mgroups: each entry is a mapping with mgid");
		unsigned gl = yline(g);
		for (yaml_node_pair_t *pr = g->data.mapping.pairs.start; pr < g->data.mapping.pairs.top; pr++) {
			const char *k = yscalar(y, yaml_document_get_node(y->doc, pr->key), "key");
			yaml_node_t *val = yaml_document_get_node(y->doc, pr->value);
			if (!k)
				return -EINVAL;
			if (!strcmp(k, "mgid")) {
				if (!(mgid = yscalar(y, val, k)))
					return -EINVAL;
			} else if (entry_flags(y, k, val, &f, true)) {
				return -EINVAL;
			}
		}
		y->c->line = gl;
		if (!mgid)
			return pp_fail(y->c, "mgroups: entry without mgid");
		int rc = pp_mgroup(y->c, mgid, f.flag, f.val, f.n);
		if (rc)
			return rc;
	}
	return 0;
}

static int entry(struct yctx *y, yaml_node_t *e)
{
	const char *name = NULL, *pkey = NULL;
	yaml_node_t *mem = NULL, *mg = NULL;
	struct yflags f = { .n = 0 };

	y->c->line = yline(e);
	if (e->type != YAML_MAPPING_NODE)
		return pp_fail(y->c, "partitions: each entry is a mapping (name, pkey, members...)");
	unsigned el = yline(e);
	for (yaml_node_pair_t *pr = e->data.mapping.pairs.start; pr < e->data.mapping.pairs.top; pr++) {
		const char *k = yscalar(y, yaml_document_get_node(y->doc, pr->key), "key");
		yaml_node_t *v = yaml_document_get_node(y->doc, pr->value);
		if (!k)
			return -EINVAL;
		if (!strcmp(k, "name")) {
			if (!(name = yscalar(y, v, k)))
				return -EINVAL;
		} else if (!strcmp(k, "pkey")) {
			if (!(pkey = yscalar(y, v, k)))
				return -EINVAL;
		} else if (!strcmp(k, "members")) {
			mem = v;
		} else if (!strcmp(k, "mgroups")) {
			mg = v;
		} else if (entry_flags(y, k, v, &f, false)) {
			return -EINVAL;
		}
	}
	y->c->line = el;
	int rc = pp_def_begin(y->c, name ? name : "", pkey, f.flag, f.val, f.n);
	if (!rc && mem)
		rc = members(y, mem);
	if (!rc && mg)
		rc = mgroups(y, mg);
	pp_def_end(y->c);
	return rc;
}

int pp_parse_yaml(struct pp_ctx *c, const char *text, size_t len)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	struct yctx y = { .c = c, .doc = &doc };
	int rc = 0;

	if (!yaml_parser_initialize(&parser))
		return -ENOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		c->line = (unsigned)parser.problem_mark.line + 1;
		rc = pp_fail(c, "YAML: %s", parser.problem ? parser.problem : "syntax error");
		yaml_parser_delete(&parser);
		return rc;
	}
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	c->line = 1;
	if (!root || root->type != YAML_MAPPING_NODE) {
		rc = pp_fail(c, "expected a mapping with a partitions: list");
		goto out;
	}
	for (yaml_node_pair_t *pr = root->data.mapping.pairs.start; pr < root->data.mapping.pairs.top && !rc; pr++) {
		const char *k = yscalar(&y, yaml_document_get_node(&doc, pr->key), "key");
		yaml_node_t *v = yaml_document_get_node(&doc, pr->value);
		if (!k) {
			rc = -EINVAL;
		} else if (strcmp(k, "partitions")) {
			rc = pp_fail(c, "unknown key '%s' (expected partitions)", k);
		} else if (v->type != YAML_SEQUENCE_NODE) {
			c->line = yline(v);
			rc = pp_fail(c, "partitions: expected a list");
		} else {
			for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top && !rc; it++)
				rc = entry(&y, yaml_document_get_node(&doc, *it));
		}
	}
out:
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return rc;
}
