/* SPDX-License-Identifier: MIT */
/*
 * DOC: the Prometheus text exposition format of a "metrics" reply (ctl.h)
 *
 * The daemon sends metrics as JSON (name, type, help, samples of labels and
 * a value); this renders them as Prometheus' text format 0.0.4: for each
 * metric a "# HELP name text" and a "# TYPE name counter|gauge" line, then
 * one "name{label=\"value\",...} number" line per sample. HELP text
 * escapes backslash and newline; label values escape backslash, double
 * quote and newline. Integral values print without a fraction. The reply
 * is untrusted: a metric or label name that is not [a-zA-Z_:][a-zA-Z0-9_:]*
 * (labels: no colon) is refused, so the output is always valid exposition
 * text.
 */
#include "ctl/ctl.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static int valid_name(const char *s, int colon_ok)
{
	if (!s || !s[0])
		return 0;
	for (const char *c = s; *c; c++) {
		int alpha = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || *c == '_' || (colon_ok && *c == ':');
		if (!alpha && !(c != s && *c >= '0' && *c <= '9'))
			return 0;
	}
	return 1;
}

static void escaped(FILE *out, const char *s, int quote)
{
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\\\", out);
		else if (*s == '\n')
			fputs("\\n", out);
		else if (quote && *s == '"')
			fputs("\\\"", out);
		else
			fputc(*s, out);
	}
}

static void number(FILE *out, double v)
{
	if (isnan(v))
		fputs("NaN", out);
	else if (isinf(v))
		fputs(v > 0 ? "+Inf" : "-Inf", out);
	else if (v == floor(v) && fabs(v) < 1e15)
		fprintf(out, "%.0f", v);
	else
		fprintf(out, "%.9g", v);
}

int smd_metrics_render(FILE *out, const struct smd_jv *reply, char *err, size_t errlen)
{
	const struct smd_jv *ms = smd_jv_get(reply, "metrics");

	if (!ms || ms->type != SMD_J_ARR) {
		snprintf(err, errlen, "reply has no \"metrics\" array");
		return -EPROTO;
	}
	for (const struct smd_jv *m = ms->child; m; m = m->next) {
		const char *name = smd_jv_str(m, "name", NULL), *type = smd_jv_str(m, "type", "untyped");
		const struct smd_jv *samples = smd_jv_get(m, "samples");
		if (!valid_name(name, 1)) {
			snprintf(err, errlen, "bad metric name '%.60s'", name ? name : "(none)");
			return -EPROTO;
		}
		if (strcmp(type, "counter") && strcmp(type, "gauge") && strcmp(type, "untyped")) {
			snprintf(err, errlen, "%s: bad type '%.20s'", name, type);
			return -EPROTO;
		}
		fprintf(out, "# HELP %s ", name);
		escaped(out, smd_jv_str(m, "help", ""), 0);
		fprintf(out, "\n# TYPE %s %s\n", name, type);
		for (const struct smd_jv *s = samples && samples->type == SMD_J_ARR ? samples->child : NULL; s;
		     s = s->next) {
			const struct smd_jv *labels = smd_jv_get(s, "labels"), *v = smd_jv_get(s, "value");
			fputs(name, out);
			if (labels && labels->type == SMD_J_OBJ && labels->n) {
				fputc('{', out);
				for (const struct smd_jv *l = labels->child; l; l = l->next) {
					if (!valid_name(l->key, 0) || l->type != SMD_J_STR) {
						snprintf(err, errlen, "%s: bad label '%.40s'", name, l->key);
						return -EPROTO;
					}
					fprintf(out, "%s%s=\"", l == labels->child ? "" : ",", l->key);
					escaped(out, l->str, 1);
					fputc('"', out);
				}
				fputc('}', out);
			}
			fputc(' ', out);
			number(out, v && v->type == SMD_J_NUM ? v->num : NAN);
			fputc('\n', out);
		}
	}
	return ferror(out) ? -EIO : 0;
}
