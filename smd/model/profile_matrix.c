/* SPDX-License-Identifier: MIT */
/*
 * DOC: traffic profiles, matrices
 *
 * A traffic matrix as text (`SRC DST WEIGHT` lines, quotes, # comments;
 * pf_split() also serves the counters form) or as YAML (metadata keys and a
 * `flows` list of mappings or [SRC, DST, WEIGHT] lists; unknown keys are
 * refused). Every entry goes to pf_add_entry().
 */
#include "model/profile_priv.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <yaml.h>

/* ---- text lines ---- */

/*
 * Split a line into up to max tokens (quotes, # comments). Returns the
 * token count, or -EINVAL (unterminated quote, too many fields).
 */
int pf_split(struct pctx *c, unsigned line, const char *s, size_t len, unsigned max)
{
	unsigned n = 0;
	size_t i = 0;
	for (;;) {
		while (i < len && (s[i] == ' ' || s[i] == '\t'))
			i++;
		if (i >= len || s[i] == '#')
			return (int)n;
		if (n == max)
			return pf_err(c, -EINVAL, line, "too many fields (expected %u)", max);
		char *o = c->tok[n];
		size_t k = 0;
		if (s[i] == '"') {
			i++;
			for (;;) {
				if (i >= len)
					return pf_err(c, -EINVAL, line, "unterminated quote");
				if (s[i] == '"') {
					i++;
					break;
				}
				if (s[i] == '\\' && i + 1 < len && (s[i + 1] == '"' || s[i + 1] == '\\'))
					i++;
				o[k++] = s[i++];
			}
			if (i < len && s[i] != ' ' && s[i] != '\t' && s[i] != '#')
				return pf_err(c, -EINVAL, line, "text after closing quote");
		} else {
			while (i < len && s[i] != ' ' && s[i] != '\t' && s[i] != '#')
				o[k++] = s[i++];
		}
		o[k] = 0;
		n++;
	}
}

int pf_parse_text(struct pctx *c, const char *buf, size_t len)
{
	struct lines l = { buf, buf + len, 0 };
	const char *s;
	size_t n;
	while (next_line(&l, &s, &n)) {
		int k = pf_split(c, l.no, s, n, 3);
		if (k < 0)
			return k;
		if (k == 0)
			continue;
		if (k != 3)
			return pf_err(c, -EINVAL, l.no, "expected 'SRC DST WEIGHT', got %d field%s", k,
				    k == 1 ? "" : "s");
		double w;
		int rc = pf_parse_weight(c, l.no, c->tok[2], &w);
		if (rc)
			return rc;
		if ((rc = pf_add_entry(c, l.no, c->tok[0], c->tok[1], w)))
			return rc;
	}
	c->p->stats.lines = l.no;
	return 0;
}

/* ---- YAML ---- */

static unsigned yline(const yaml_node_t *n)
{
	return (unsigned)n->start_mark.line + 1;
}

static int yscalar(struct pctx *c, yaml_node_t *n, const char *what, char *out, size_t outlen)
{
	if (!n || n->type != YAML_SCALAR_NODE)
		return pf_err(c, -EINVAL, n ? yline(n) : 0, "%s: expected a scalar", what);
	size_t l = n->data.scalar.length;
	if (l >= outlen)
		return pf_err(c, -EINVAL, yline(n), "%s: too long (max %zu)", what, outlen - 1);
	memcpy(out, n->data.scalar.value, l);
	out[l] = 0;
	if (memchr(out, 0, l))
		return pf_err(c, -EINVAL, yline(n), "%s: NUL byte", what);
	return 0;
}

/*
 * Which of keys[0..n-1] the key of mapping pair pr is (its value in *v), or
 * an error; an unknown key names the known ones: "WHAT: unknown key 'x'
 * (a, b, c)", WHAT "" at the top level.
 */
static int ykey(struct pctx *c, yaml_document_t *doc, const yaml_node_pair_t *pr, const char *what,
		const char *const *keys, unsigned n, yaml_node_t **v)
{
	yaml_node_t *k = yaml_document_get_node(doc, pr->key);
	char key[32], known[128] = "";
	size_t kl = 0;
	int rc = yscalar(c, k, "key", key, sizeof(key));

	*v = yaml_document_get_node(doc, pr->value);
	if (rc)
		return rc;
	for (unsigned i = 0; i < n; i++) {
		if (!strcmp(key, keys[i]))
			return (int)i;
		if (kl < sizeof(known))
			kl += (size_t)snprintf(known + kl, sizeof(known) - kl, "%s%s", i ? ", " : "", keys[i]);
	}
	return pf_err(c, -EINVAL, yline(k), "%s%sunknown key '%s' (%s)", what, *what ? ": " : "", key,
		      known);
}

static int yaml_flow(struct pctx *c, yaml_document_t *doc, yaml_node_t *it)
{
	static const char *const keys[] = { "src", "dst", "weight" };
	yaml_node_t *x[3] = { NULL, NULL, NULL };
	unsigned line = yline(it);
	int rc;
	if (it->type == YAML_SEQUENCE_NODE) {
		yaml_node_item_t *a = it->data.sequence.items.start, *b = it->data.sequence.items.top;
		if (b - a != 3)
			return pf_err(c, -EINVAL, line, "flow: expected [SRC, DST, WEIGHT]");
		for (unsigned i = 0; i < 3; i++)
			x[i] = yaml_document_get_node(doc, a[i]);
	} else if (it->type == YAML_MAPPING_NODE) {
		for (yaml_node_pair_t *pr = it->data.mapping.pairs.start; pr < it->data.mapping.pairs.top; pr++) {
			yaml_node_t *v;
			int i = ykey(c, doc, pr, "flow", keys, 3, &v);
			if (i < 0)
				return i;
			x[i] = v;
		}
		if (!x[0] || !x[1] || !x[2])
			return pf_err(c, -EINVAL, line, "flow: needs src, dst and weight");
	} else {
		return pf_err(c, -EINVAL, line, "flow: expected a mapping or a [SRC, DST, WEIGHT] list");
	}
	for (unsigned i = 0; i < 3; i++)
		if ((rc = yscalar(c, x[i], keys[i], c->tok[i], sizeof(c->tok[i]))))
			return rc;
	double w;
	if ((rc = pf_parse_weight(c, yline(x[2]), c->tok[2], &w)))
		return rc;
	return pf_add_entry(c, line, c->tok[0], c->tok[1], w);
}

static int yaml_window(struct pctx *c, yaml_document_t *doc, yaml_node_t *v)
{
	static const char *const keys[] = { "start", "end", "seconds" };
	struct sm_profile *p = c->p;
	char tmp[64];
	if (v->type == YAML_SCALAR_NODE)
		return yscalar(c, v, "window", p->window_start, sizeof(p->window_start));
	if (v->type != YAML_MAPPING_NODE)
		return pf_err(c, -EINVAL, yline(v), "window: expected a mapping {start, end, seconds}");
	for (yaml_node_pair_t *pr = v->data.mapping.pairs.start; pr < v->data.mapping.pairs.top; pr++) {
		yaml_node_t *x;
		int rc = ykey(c, doc, pr, "window", keys, 3, &x);
		if (rc < 0)
			return rc;
		if (rc == 0) {
			rc = yscalar(c, x, "window.start", p->window_start, sizeof(p->window_start));
		} else if (rc == 1) {
			rc = yscalar(c, x, "window.end", p->window_end, sizeof(p->window_end));
		} else {
			rc = yscalar(c, x, "window.seconds", tmp, sizeof(tmp));
			if (!rc) {
				char *e;
				double s = strtod(tmp, &e);
				if (*e || e == tmp || !isfinite(s) || s < 0)
					return pf_err(c, -EINVAL, yline(x), "window.seconds: bad value '%s'", tmp);
				p->window_seconds = s;
			}
		}
		if (rc)
			return rc;
	}
	return 0;
}

/*
 * Nesting depth, in one linear pass, before libyaml (whose scanner walks
 * every open flow level for each token: quadratic). Counted generously:
 * open brackets and braces, the indentation levels of the current line and
 * its leading "- " items; quotes and comments are skipped. A profile needs
 * about four levels.
 */
static int yaml_depth(struct pctx *c, const char *buf, size_t len)
{
	unsigned indents[SM_PROFILE_MAX_DEPTH + 1], n_ind = 0, flow = 0, line = 1;
	char quote = 0;
	size_t i = 0;

	while (i < len) {
		size_t col = 0, dashes = 0;
		/* start of a line: outside flow and quotes, its indentation and leading "- " items */
		if (!flow && !quote) {
			while (i + col < len && buf[i + col] == ' ')
				col++;
			size_t k = i + col;
			while (k + 1 < len && buf[k] == '-' && (buf[k + 1] == ' ' || buf[k + 1] == '\t')) {
				dashes++;
				k += 2;
				while (k < len && (buf[k] == ' ' || buf[k] == '\t'))
					k++;
			}
			if (i + col < len && buf[i + col] != '\n' && buf[i + col] != '\r' && buf[i + col] != '#') {
				while (n_ind && indents[n_ind - 1] > col)
					n_ind--;
				if (!n_ind || indents[n_ind - 1] < col) {
					if (n_ind > SM_PROFILE_MAX_DEPTH)
						goto deep;
					indents[n_ind++] = (unsigned)col;
				}
			}
			if (n_ind + dashes > SM_PROFILE_MAX_DEPTH)
				goto deep;
		}
		for (i += col; i < len && buf[i] != '\n'; i++) {
			char ch = buf[i], prev = i ? buf[i - 1] : '\n';
			if (quote) {
				if (quote == '"' && ch == '\\')
					i++;
				else if (ch == quote)
					quote = 0;
				continue;
			}
			int boundary = prev == ' ' || prev == '\t' || prev == '\n' || prev == '[' || prev == '{' ||
				       prev == ',';
			if ((ch == '\'' || ch == '"') && boundary) {
				quote = ch;
			} else if (ch == '#' && (prev == ' ' || prev == '\t' || prev == '\n')) {
				while (i + 1 < len && buf[i + 1] != '\n')
					i++;
			} else if (ch == '[' || ch == '{') {
				if (++flow + n_ind + dashes > SM_PROFILE_MAX_DEPTH)
					goto deep;
			} else if ((ch == ']' || ch == '}') && flow) {
				flow--;
			}
		}
		i++;
		line++;
	}
	return 0;
deep:
	return pf_err(c, -EINVAL, line, "YAML nested deeper than %d levels", SM_PROFILE_MAX_DEPTH);
}

int pf_parse_yaml(struct pctx *c, const char *buf, size_t len)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	int rc = 0;
	if ((rc = yaml_depth(c, buf, len)))
		return rc;
	if (!yaml_parser_initialize(&parser))
		return pf_err(c, -ENOMEM, 0, "out of memory");
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	if (!yaml_parser_load(&parser, &doc)) {
		rc = pf_err(c, -EINVAL, (unsigned)parser.problem_mark.line + 1, "YAML: %s",
			  parser.problem ? parser.problem : "syntax error");
		yaml_parser_delete(&parser);
		return rc;
	}
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	struct sm_profile *p = c->p;
	bool have_flows = false;
	if (!root || root->type != YAML_MAPPING_NODE) {
		rc = pf_err(c, -EINVAL, root ? yline(root) : 0, "YAML profile: expected a mapping with 'flows'");
		goto out;
	}
	static const char *const keys[] = { "name", "source", "description", "unit", "window", "flows" };
	for (yaml_node_pair_t *pr = root->data.mapping.pairs.start; pr < root->data.mapping.pairs.top; pr++) {
		yaml_node_t *v;
		if ((rc = ykey(c, &doc, pr, "", keys, 6, &v)) < 0)
			goto out;
		switch (rc) {
		case 0: rc = yscalar(c, v, "name", p->name, sizeof(p->name)); break;
		case 1: rc = yscalar(c, v, "source", p->source, sizeof(p->source)); break;
		case 2: rc = yscalar(c, v, "description", p->description, sizeof(p->description)); break;
		case 3: rc = yscalar(c, v, "unit", p->unit, sizeof(p->unit)); break;
		case 4: rc = yaml_window(c, &doc, v); break;
		default:
			if (v->type != YAML_SEQUENCE_NODE) {
				rc = pf_err(c, -EINVAL, yline(v), "flows: expected a list");
				goto out;
			}
			have_flows = true;
			rc = 0;
			for (yaml_node_item_t *it = v->data.sequence.items.start;
			     !rc && it < v->data.sequence.items.top; it++)
				rc = yaml_flow(c, &doc, yaml_document_get_node(&doc, *it));
		}
		if (rc)
			goto out;
	}
	if (!have_flows)
		rc = pf_err(c, -EINVAL, yline(root), "YAML profile has no 'flows' list");
out:
	c->p->stats.lines = (unsigned)parser.mark.line + 1;
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return rc;
}
