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
 *
 * The daemon builds that reply with smd_metric_begin/_sample/_end (below),
 * one convention for every metric: names smd_*, counters end in _total,
 * every per-plane metric has the label plane="planeN" (the plane's name in
 * the fabric model, in `smctl planes` and in the dry-run report), and
 * integral values are sent whole.
 */
#include "ctl/ctl.h"
#include "lib/json.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
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

/* ------------------------------------------------------------------ */
/* building a "metrics" reply (the daemon's side, daemon/cmd*.c)        */

void smd_metric_begin(struct sm_json *j, const char *name, const char *type, const char *help)
{
	sm_json_obj_begin(j, NULL);
	sm_json_str(j, "name", name);
	sm_json_str(j, "type", type);
	sm_json_str(j, "help", help);
	sm_json_arr_begin(j, "samples");
}

void smd_metric_end(struct sm_json *j)
{
	sm_json_arr_end(j);
	sm_json_obj_end(j);
}

/*
 * A counter's value is an integer, and JSON numbers of sm_json_double()
 * keep 6 significant digits: a counter past 999,999 would stop moving in
 * steps below its 7th digit. Integral values up to 2^53 go out whole, and
 * so do other values from 10^6 on (rounded: an uptime of 12 days keeps its
 * seconds, where 6 digits would keep tens of them).
 */
void smd_metric_value(struct sm_json *j, double v)
{
	if (isfinite(v) && v >= 0 && (v == floor(v) || v >= 1e6) && v < 9007199254740992.0)
		sm_json_uint(j, "value", (uint64_t)llround(v));
	else
		sm_json_double(j, "value", v);
}

void smd_metric_sample(struct sm_json *j, double v, ...)
{
	va_list ap;
	const char *k;

	sm_json_obj_begin(j, NULL);
	sm_json_obj_begin(j, "labels");
	va_start(ap, v);
	while ((k = va_arg(ap, const char *))) {
		const char *val = va_arg(ap, const char *);
		sm_json_str(j, k, val);
	}
	va_end(ap);
	sm_json_obj_end(j);
	smd_metric_value(j, v);
	sm_json_obj_end(j);
}

void smd_metric_plane_name(unsigned plane, char *buf, size_t len)
{
	snprintf(buf, len, "plane%u", plane);
}
