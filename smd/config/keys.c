/* SPDX-License-Identifier: MIT */
/*
 * DOC: the smd.yaml keys: their descriptor table and the YAML walk (keys.h)
 *
 * libyaml has loaded the whole file into a document (smdconf.c, so engine
 * subtrees can be handed to engines later); this module walks the
 * top-level mapping with the table of keys. An integer, boolean or string
 * key is parsed from its descriptor alone (type, range, field); the others
 * name a parser. The first error stops the walk; the partly filled struct
 * is freed by the caller. Defaults are the table's too: smd_conf_new()
 * feeds each `def` through the same parser, as a plain scalar.
 *
 * Scalars: integers must be plain (unquoted) decimal; strings may be plain
 * or quoted. A plain `~`, `null` or empty value is "no value" and is only
 * accepted where the key allows it (engines.NAME).
 */
#include "config/keys.h"
#include "config/smdconf.h"
#include "lib/log.h"
#include "ctl/ctl.h"
#include "ctl/http.h"
#include "model/partitions.h"

#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#ifndef SMD_PLUGINDIR
#define SMD_PLUGINDIR "/usr/local/lib/smd/plugins"
#endif
#ifndef SMD_LOCALSTATEDIR
#define SMD_LOCALSTATEDIR "/var"
#endif
#define STR_(x) #x
#define STR(x) STR_(x)

struct smd_conf_walk {
	const char *name;        /* file name for messages */
	yaml_document_t *doc;
	struct smd_conf *c;
	char *err;
	size_t errlen;
};

static unsigned node_line(const yaml_node_t *n)
{
	return n ? (unsigned)n->start_mark.line + 1 : 0;
}

__attribute__((format(printf, 3, 4)))
static int fail(struct smd_conf_walk *w, const yaml_node_t *n, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (w->err && w->errlen)
		snprintf(w->err, w->errlen, "%s:%u: %s", w->name, node_line(n), msg);
	return -EINVAL;
}

static const char *scalar(const yaml_node_t *n)
{
	return (const char *)n->data.scalar.value;
}

static int is_plain(const yaml_node_t *n)
{
	return n->type == YAML_SCALAR_NODE && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

static int is_null(const yaml_node_t *n)
{
	if (!is_plain(n))
		return 0;
	const char *s = scalar(n);
	return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
	       !strcmp(s, "NULL");
}

static const char *node_kind(const yaml_node_t *n)
{
	switch (n->type) {
	case YAML_MAPPING_NODE: return "a mapping";
	case YAML_SEQUENCE_NODE: return "a list";
	case YAML_SCALAR_NODE: return is_null(n) ? "an empty value" : "a scalar";
	default: return "nothing";
	}
}

/* Non-empty string value, no embedded NUL (libyaml allows "\0" escapes). */
static int get_str(struct smd_conf_walk *w, const char *key, yaml_node_t *v, char **out)
{
	if (v->type != YAML_SCALAR_NODE || is_null(v))
		return fail(w, v, "%s: expected a string, got %s", key, node_kind(v));
	if (strlen(scalar(v)) != v->data.scalar.length)
		return fail(w, v, "%s: string contains a NUL character", key);
	char *s = strdup(scalar(v));
	if (!s)
		return -ENOMEM;
	free(*out);
	*out = s;
	return 0;
}

static int get_uint(struct smd_conf_walk *w, const char *key, yaml_node_t *v, unsigned long min,
		    unsigned long max, unsigned long *out)
{
	const char *s;
	char *end;
	unsigned long val;

	if (!is_plain(v) || is_null(v))
		return fail(w, v, "%s: expected an integer %lu-%lu, got %s", key, min, max,
			    v->type == YAML_SCALAR_NODE && !is_null(v) ? "a quoted string" :
			    node_kind(v));
	s = scalar(v);
	errno = 0;
	val = strtoul(s, &end, 10);
	if (!isdigit((unsigned char)*s) || *end || errno)
		return fail(w, v, "%s: expected an integer %lu-%lu, got '%s'", key, min, max, s);
	if (val < min || val > max)
		return fail(w, v, "%s: %lu is out of range (%lu-%lu)", key, val, min, max);
	*out = val;
	return 0;
}

static int k_routing_engine(struct smd_conf_walk *w, const char *key, yaml_node_t *v)
{
	char names[SMD_CONF_MAX_CHAIN][SMD_CONF_NAME_MAX + 1];
	char msg[160];
	unsigned n = 0;
	int rc;

	if (v->type == YAML_SCALAR_NODE && !is_null(v)) {
		if (smd_conf_chain_parse(scalar(v), names, &n, msg, sizeof(msg)))
			return fail(w, v, "%s: %s", key, msg);
	} else if (v->type == YAML_SEQUENCE_NODE) {
		for (yaml_node_item_t *it = v->data.sequence.items.start;
		     it < v->data.sequence.items.top; it++) {
			yaml_node_t *e = yaml_document_get_node(w->doc, *it);
			if (!e || e->type != YAML_SCALAR_NODE || is_null(e))
				return fail(w, e ? e : v, "%s: list items must be engine names, got %s",
					    key, e ? node_kind(e) : "nothing");
			rc = smd_conf_chain_add(names, &n, scalar(e), strlen(scalar(e)), msg, sizeof(msg));
			if (rc)
				return fail(w, e, "%s: %s", key, msg);
		}
		if (!n)
			return fail(w, v, "%s: the list is empty", key);
	} else {
		return fail(w, v, "%s: expected an engine name, a comma-separated chain or a list, got %s",
			    key, node_kind(v));
	}
	memcpy(w->c->chain, names, sizeof(names));
	w->c->n_chain = n;
	w->c->chain_line = node_line(v);
	return 0;
}

static int k_log_level(struct smd_conf_walk *w, const char *key, yaml_node_t *v)
{
	int lvl;

	if (v->type != YAML_SCALAR_NODE || is_null(v))
		return fail(w, v, "%s: expected error, warning, notice, info or debug, got %s", key,
			    node_kind(v));
	lvl = smd_log_level_parse(scalar(v));
	if (lvl < 0)
		return fail(w, v, "%s: '%s' is not one of error, warning, notice, info, debug", key,
			    scalar(v));
	w->c->log_level = lvl;
	return 0;
}

/* "0xfe80000000000000" or "fe80:0000:0000:0000" (the GID prefix notation). */
static int parse_prefix(const char *s, uint64_t *out)
{
	char *end;

	if (!strncmp(s, "0x", 2) || !strncmp(s, "0X", 2)) {
		if (!isxdigit((unsigned char)s[2]) || strlen(s + 2) > 16)
			return -EINVAL;
		errno = 0;
		*out = strtoull(s + 2, &end, 16);
		return *end || errno ? -EINVAL : 0;
	}
	uint64_t v = 0;
	for (int g = 0; g < 4; g++) {
		unsigned long part;
		if (!isxdigit((unsigned char)*s))
			return -EINVAL;
		part = strtoul(s, &end, 16);
		if (end - s > 4 || part > 0xffff)
			return -EINVAL;
		v = (v << 16) | part;
		s = end;
		if (g < 3) {
			if (*s != ':')
				return -EINVAL;
			s++;
		}
	}
	if (*s)
		return -EINVAL;
	*out = v;
	return 0;
}

static int k_prefix(struct smd_conf_walk *w, const char *key, yaml_node_t *v)
{
	if (v->type != YAML_SCALAR_NODE || is_null(v))
		return fail(w, v, "%s: expected a 64-bit prefix such as 0xfe80000000000000, got %s",
			    key, node_kind(v));
	if (parse_prefix(scalar(v), &w->c->subnet_prefix))
		return fail(w, v, "%s: '%s' is not a 64-bit prefix (0xfe80000000000000 or fe80:0:0:0)",
			    key, scalar(v));
	return 0;
}

static int k_planes(struct smd_conf_walk *w, const char *key, yaml_node_t *v)
{
	struct smd_conf *c = w->c;
	struct smd_plane_spec ps;
	char msg[300];
	unsigned n = 0;

	if (v->type != YAML_SEQUENCE_NODE)
		return fail(w, v, "%s: expected a list of plane specs, got %s", key, node_kind(v));
	for (unsigned i = 0; i < c->n_planes; i++) {
		free(c->planes[i]);
		c->planes[i] = NULL;
	}
	c->n_planes = 0;
	for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top;
	     it++) {
		yaml_node_t *e = yaml_document_get_node(w->doc, *it);
		if (!e || e->type != YAML_SCALAR_NODE || is_null(e))
			return fail(w, e ? e : v, "%s: expected a plane spec string, got %s%s", key,
				    e ? node_kind(e) : "nothing",
				    e && e->type == YAML_MAPPING_NODE ?
				    " (a spec such as mock:FILE after '- ' must not have a blank after the colon)" : "");
		if (n >= SM_MAX_PLANES)
			return fail(w, e, "%s: at most %d planes", key, SM_MAX_PLANES);
		if (smd_plane_spec_parse(scalar(e), &ps, msg, sizeof(msg)))
			return fail(w, e, "%s: %s", key, msg);
		c->planes[n] = strdup(scalar(e));
		if (!c->planes[n])
			return -ENOMEM;
		c->n_planes = ++n;
	}
	return 0;
}

/* ---- security keys (issue 8): m_key*, sm_key, user, group ---- */

/* none | random | a non-zero 64-bit number (0x hex or decimal) */
static int get_key(struct smd_conf_walk *w, const char *key, yaml_node_t *v, uint8_t *mode, uint64_t *val)
{
	const char *s;
	char *end;

	if (v->type != YAML_SCALAR_NODE || is_null(v))
		return fail(w, v, "%s: expected none, random or a 64-bit key such as 0x0123456789abcdef, got %s",
			    key, node_kind(v));
	s = scalar(v);
	if (!strcmp(s, "none")) {
		*mode = SM_KEY_NONE;
		*val = 0;
		return 0;
	}
	if (!strcmp(s, "random")) {
		*mode = SM_KEY_RANDOM;
		*val = 0;
		return 0;
	}
	if (!strcmp(s, "derived") && !strcmp(key, "m_key")) {
		*mode = SM_KEY_DERIVED;   /* per-port keys from m_key_secret_file (smd/sm/mkey.h) */
		*val = 0;
		return 0;
	}
	errno = 0;
	*val = strtoull(s, &end, 0);
	if (!isdigit((unsigned char)*s) || *end || errno)
		return fail(w, v, "%s: '%s' is not none, random or a 64-bit number", key, s);
	if (!*val)
		return fail(w, v, "%s: 0 is no key (write none)", key);
	*mode = SM_KEY_FIXED;
	return 0;
}

static int k_mkey(struct smd_conf_walk *w, const char *key, yaml_node_t *v)
{
	return get_key(w, key, v, &w->c->keys.mkey_mode, &w->c->keys.mkey);
}

static int k_mkey_secret(struct smd_conf_walk *w, const char *key, yaml_node_t *v)
{
	if (v->type != YAML_SCALAR_NODE || is_null(v) || !*scalar(v))
		return fail(w, v, "%s: expected a file name, got %s", key, node_kind(v));
	if (strlen(scalar(v)) >= sizeof(w->c->keys.secret_file))
		return fail(w, v, "%s: file name too long", key);
	strcpy(w->c->keys.secret_file, scalar(v));
	return 0;
}

static int k_sm_key(struct smd_conf_walk *w, const char *key, yaml_node_t *v)
{
	return get_key(w, key, v, &w->c->keys.smkey_mode, &w->c->keys.sm_key);
}

/* ---- fault injection on mock planes (mock.*) ---- */

int smd_conf_percent_parse(const char *s, uint32_t *ppm)
{
	uint64_t v = 0;
	unsigned dec = 0;
	int digits = 0, dot = 0;

	if (!strcmp(s, "0")) {
		*ppm = 0;
		return 0;
	}
	for (; isdigit((unsigned char)*s) || (*s == '.' && !dot); s++) {
		if (*s == '.') {
			dot = 1;
			continue;
		}
		if (dot && ++dec > 4)
			return -EINVAL;
		if (++digits > 7)
			return -EINVAL;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	if (!digits || strcmp(s, "%"))
		return -EINVAL;
	for (; dec < 4; dec++)
		v *= 10;
	/* v counts 1/10000 of a percent: parts per million */
	if (v > 1000000)
		return -EINVAL;
	*ppm = (uint32_t)v;
	return 0;
}

void smd_conf_percent_str(uint32_t ppm, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%u.%04u", ppm / 10000u, ppm % 10000u);

	/* drop trailing zeros and a bare dot: 25.0000 -> 25 */
	while (n > 0 && (size_t)n < len && buf[n - 1] == '0')
		buf[--n] = '\0';
	if (n > 0 && (size_t)n < len && buf[n - 1] == '.')
		buf[--n] = '\0';
	snprintf(buf + n, len - (size_t)n, "%%");
}

static int k_share(struct smd_conf_walk *w, const char *key, yaml_node_t *v, uint32_t *out)
{
	if (!is_plain(v) || is_null(v) || smd_conf_percent_parse(scalar(v), out))
		return fail(w, v, "%s: expected a percentage 0%%-100%% such as 25%% or 0.5%%, got %s", key,
			    is_plain(v) && !is_null(v) ? scalar(v) : node_kind(v));
	return 0;
}

static int k_mock_loss(struct smd_conf_walk *w, const char *key, yaml_node_t *v)
{
	return k_share(w, key, v, &w->c->mock.loss_ppm);
}

static int k_mock_corrupt(struct smd_conf_walk *w, const char *key, yaml_node_t *v)
{
	return k_share(w, key, v, &w->c->mock.corrupt_ppm);
}

static int k_mock_delay(struct smd_conf_walk *w, const char *key, yaml_node_t *v)
{
	return k_share(w, key, v, &w->c->mock.delay_ppm);
}

/* ---- checks of string keys, after the value is stored ---- */

static int k_socket(struct smd_conf_walk *w, const char *key, yaml_node_t *v)
{
	/* sockaddr_un.sun_path is 108 bytes including the NUL */
	if (strlen(w->c->socket) > 107)
		return fail(w, v, "%s: path longer than 107 bytes (the limit of a unix socket)", key);
	return 0;
}

/*
 * partition_config_file: loaded with the config (so a reload with a bad
 * partitions file keeps the running config); its own errors name it.
 */
static int k_partitions(struct smd_conf_walk *w, const char *key, yaml_node_t *v)
{
	struct sm_partitions *ps = NULL;
	char perr[400] = "";
	int rc = sm_partitions_load(w->c->partition_config_file, &ps, perr, sizeof(perr));
	if (rc == -ENOMEM)
		return rc;
	if (rc)
		return fail(w, v, "%s: %s", key, perr);
	sm_partitions_free(w->c->partitions);
	w->c->partitions = ps;
	return 0;
}

/* socket_group (control socket access, s2-ctl) */
static int k_socket_group(struct smd_conf_walk *w, const char *key, yaml_node_t *v)
{
	gid_t gid;

	if (!w->c->socket_group[0] || strlen(w->c->socket_group) >= SMD_CTL_GROUP_MAX)
		return fail(w, v, "%s: a group name of 1-%d characters", key, SMD_CTL_GROUP_MAX - 1);
	if (smd_ctl_group_gid(w->c->socket_group, &gid))
		return fail(w, v, "%s: no such group '%s'", key, w->c->socket_group);
	return 0;
}

static int k_user(struct smd_conf_walk *w, const char *key, yaml_node_t *v)
{
	return getpwnam(w->c->user) ? 0 : fail(w, v, "%s: no such user '%s'", key, w->c->user);
}

static int k_group(struct smd_conf_walk *w, const char *key, yaml_node_t *v)
{
	return getgrnam(w->c->group) ? 0 : fail(w, v, "%s: no such group '%s'", key, w->c->group);
}

/* metrics_listen: the address is checked here, so --check-config names FILE:LINE */
static int k_metrics_listen(struct smd_conf_walk *w, const char *key, yaml_node_t *v)
{
	char msg[200];

	if (smd_http_addr_parse(w->c->metrics_listen, NULL, msg, sizeof(msg)))
		return fail(w, v, "%s: %s", key, msg);
	return 0;
}

/* ---- the walk ---- */

static void store_uint(void *field, size_t size, unsigned long val)
{
	switch (size) {
	case 1: *(uint8_t *)field = (uint8_t)val; break;
	case 2: *(uint16_t *)field = (uint16_t)val; break;
	default: *(unsigned *)field = (unsigned)val; break;
	}
}

/* Parse v as the value of key d (named `full` in messages) into w->c. */
static int parse_key(struct smd_conf_walk *w, const struct smd_conf_key *d, const char *full, yaml_node_t *v)
{
	char *field = (char *)w->c + d->off;
	unsigned long val = 0;
	int rc;

	switch (d->kind) {
	case SMD_KEY_UINT:
		rc = get_uint(w, full, v, d->min, d->max, &val);
		if (!rc)
			store_uint(field, d->size, val);
		return rc;
	case SMD_KEY_BOOL:
		if (!is_plain(v) || is_null(v) || (strcmp(scalar(v), "true") && strcmp(scalar(v), "false")))
			return fail(w, v, "%s: expected true or false, got %s", full,
				    v->type == YAML_SCALAR_NODE && !is_null(v) ? scalar(v) : node_kind(v));
		*(int *)field = !strcmp(scalar(v), "true");
		return 0;
	case SMD_KEY_STR:
		rc = get_str(w, full, v, (char **)(void *)field);
		return rc || !d->parse ? rc : d->parse(w, full, v);
	default:
		return d->parse(w, full, v);
	}
}

#define MAX_KEYS 128

/* Walk a mapping whose keys are the table's "PREFIX*"; duplicate and unknown keys are errors. */
static int walk_map(struct smd_conf_walk *w, yaml_node_t *map, const char *prefix)
{
	unsigned seen_line[MAX_KEYS] = { 0 };
	size_t plen = strlen(prefix);
	char full[96];
	int rc;

	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *k = yaml_document_get_node(w->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(w->doc, p->value);
		size_t i;

		if (!k || !v || k->type != YAML_SCALAR_NODE)
			return fail(w, k ? k : map, "keys must be plain names");
		for (i = 0; i < smd_conf_n_keys; i++) {
			const char *name = smd_conf_keys[i].name;
			if (!strncmp(name, prefix, plen) && !strchr(name + plen, '.') &&
			    !strcmp(name + plen, scalar(k)))
				break;
		}
		snprintf(full, sizeof(full), "%s%.60s", prefix, scalar(k));
		if (i == smd_conf_n_keys)
			return fail(w, k, "unknown key '%s' (see smd.yaml(5))", full);
		if (seen_line[i])
			return fail(w, k, "duplicate key '%s' (first at line %u)", full, seen_line[i]);
		seen_line[i] = node_line(k);
		rc = parse_key(w, &smd_conf_keys[i], full, v);
		if (rc)
			return rc;
	}
	return 0;
}

/* The value under `key` in a mapping, NULL if absent. */
static yaml_node_t *map_get(struct smd_conf_walk *w, yaml_node_t *map, const char *key)
{
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *k = yaml_document_get_node(w->doc, p->key);
		if (k && k->type == YAML_SCALAR_NODE && !strcmp(scalar(k), key))
			return yaml_document_get_node(w->doc, p->value);
	}
	return NULL;
}

/* ---- port configuration (sm/portcfg.h) ---- */

static int k_part_enforce(struct smd_conf_walk *w, const char *key, yaml_node_t *v)
{
	int e;
	if (!is_plain(v) || is_null(v) || (e = sm_part_enforce_parse(scalar(v))) < 0)
		return fail(w, v, "%s: expected both, in, out or off, got %s", key,
			    v->type == YAML_SCALAR_NODE && !is_null(v) ? scalar(v) : node_kind(v));
	w->c->portcfg.part_enforce = (uint8_t)e;
	return 0;
}

static int k_qos(struct smd_conf_walk *w, const char *key, yaml_node_t *v)
{
	if (v->type != YAML_MAPPING_NODE)
		return fail(w, v, "%s: expected a mapping (enabled, ca, sw0, swe), got %s", key, node_kind(v));
	return walk_map(w, v, "qos.");
}

/* The level of a "qos.CLASS.*" key. */
static struct sm_qos_level *qos_level(struct smd_conf_walk *w, const char *key)
{
	static const char *const cls[SM_QOS_CLASSES] = { "qos.ca.", "qos.sw0.", "qos.swe." };
	for (unsigned k = 0; k < SM_QOS_CLASSES; k++)
		if (!strncmp(key, cls[k], strlen(cls[k])))
			return &w->c->portcfg.level[k];
	return &w->c->portcfg.level[0];
}

static int k_qos_class(struct smd_conf_walk *w, const char *key, yaml_node_t *v)
{
	char prefix[16];
	if (v->type != YAML_MAPPING_NODE)
		return fail(w, v, "%s: expected a mapping (high_limit, sl2vl, vlarb_high, vlarb_low), got %s", key,
			    node_kind(v));
	snprintf(prefix, sizeof(prefix), "%s.", key);
	return walk_map(w, v, prefix);
}

static int k_qos_table(struct smd_conf_walk *w, const char *key, yaml_node_t *v)
{
	struct sm_qos_level *l = qos_level(w, key);
	const char *leaf = strrchr(key, '.') + 1;
	char msg[160];
	int rc;

	if (v->type != YAML_SCALAR_NODE || is_null(v))
		return fail(w, v, "%s: expected a string as in opensm.conf, got %s", key, node_kind(v));
	if (!strcmp(leaf, "sl2vl"))
		rc = sm_qos_parse_sl2vl(scalar(v), l->sl2vl, msg, sizeof(msg));
	else if (!strcmp(leaf, "vlarb_high"))
		rc = sm_qos_parse_vlarb(scalar(v), l->high_vl, l->high_w, msg, sizeof(msg));
	else
		rc = sm_qos_parse_vlarb(scalar(v), l->low_vl, l->low_w, msg, sizeof(msg));
	return rc ? fail(w, v, "%s: %s", key, msg) : 0;
}

static int k_mad(struct smd_conf_walk *w, const char *key, yaml_node_t *v)
{
	int rc;

	if (v->type != YAML_MAPPING_NODE)
		return fail(w, v, "%s: expected a mapping (window, per_switch_window, timeout_ms, retries), got %s",
			    key, node_kind(v));
	unsigned psw_default = w->c->mad.per_switch_window;
	rc = walk_map(w, v, "mad.");
	if (rc)
		return rc;
	if (w->c->mad.per_switch_window > w->c->mad.window) {
		/* a small window with the default per-switch limit just lowers that limit */
		yaml_node_t *psw = map_get(w, v, "per_switch_window");
		if (w->c->mad.per_switch_window == psw_default && !psw)
			w->c->mad.per_switch_window = w->c->mad.window;
		else
			return fail(w, psw ? psw : v, "mad.per_switch_window (%u) is larger than mad.window (%u)",
				    w->c->mad.per_switch_window, w->c->mad.window);
	}
	return 0;
}

static int k_mock(struct smd_conf_walk *w, const char *key, yaml_node_t *v)
{
	if (v->type != YAML_MAPPING_NODE)
		return fail(w, v, "%s: expected a mapping (loss, corrupt, delay, delay_ms, seed), got %s", key,
			    node_kind(v));
	return walk_map(w, v, "mock.");
}

static int k_engines(struct smd_conf_walk *w, const char *key, yaml_node_t *v)
{
	struct smd_conf *c = w->c;

	if (is_null(v))
		return 0;
	if (v->type != YAML_MAPPING_NODE)
		return fail(w, v, "%s: expected a mapping of engine name to its settings, got %s", key,
			    node_kind(v));
	for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(w->doc, p->key);
		yaml_node_t *e = yaml_document_get_node(w->doc, p->value);

		if (!k || !e || k->type != YAML_SCALAR_NODE)
			return fail(w, k ? k : v, "%s: keys must be engine names", key);
		if (!smd_conf_valid_engine_name(scalar(k), strlen(scalar(k))))
			return fail(w, k, "%s: bad engine name '%.64s'", key, scalar(k));
		if (smd_conf_engine(c, scalar(k)))
			return fail(w, k, "%s: duplicate engine '%s' (first at line %u)", key,
				    scalar(k), smd_conf_engine(c, scalar(k))->line);
		if (c->n_engines >= SMD_CONF_MAX_ENGINES)
			return fail(w, k, "%s: more than %d engines", key, SMD_CONF_MAX_ENGINES);
		/* a scalar that is not empty cannot be an engine's settings */
		if (e->type == YAML_SCALAR_NODE && !is_null(e))
			return fail(w, e, "%s.%s: expected a mapping of the engine's settings, got a scalar",
				    key, scalar(k));
		struct smd_conf_engine *ce = &c->engines[c->n_engines++];
		snprintf(ce->name, sizeof(ce->name), "%s", scalar(k));
		ce->node = is_null(e) ? NULL : e;
		ce->line = node_line(k);
	}
	c->engines_map = v;
	return 0;
}

/* ---- the table ---- */

#define F(field) .off = offsetof(struct smd_conf, field), .size = sizeof(((struct smd_conf *)0)->field)
#define UINT(field, lo, hi) .kind = SMD_KEY_UINT, .min = lo, .max = hi, F(field)

const struct smd_conf_key smd_conf_keys[] = {
	{ "routing_engine", SMD_KEY_OTHER, "string or list", .parse = k_routing_engine,
	  .def = SMD_CONF_DEFAULT_CHAIN, .doc = "The engine chain, tried in order for each plane." },
	{ "plugin_dir", SMD_KEY_STR, "string", F(plugin_dir), .def = SMD_PLUGINDIR,
	  .shown = "default set at build time, LIBDIR/smd/plugins",
	  .doc = "Directory searched for routing-engine plugins." },
	{ "engines", SMD_KEY_OTHER, "mapping", .parse = k_engines, .shown = "default empty",
	  .doc = "Settings of individual engines:" },
	{ "lmc", UINT(lmc, 0, 7), .def = "0",
	  .doc = "LID Mask Control: every CA and router port gets 2^lmc consecutive LIDs" },
	{ "state_dir", SMD_KEY_STR, "string", F(state_dir), .def = SMD_LOCALSTATEDIR "/lib/smd",
	  .shown = "default LOCALSTATEDIR/lib/smd",
	  .doc = "Directory of the state kept across restarts (the GUID-to-LID table)." },
	{ "guid2lid_file", SMD_KEY_STR, "string", F(guid2lid_file), .shown = "default state_dir/guid2lid",
	  .doc = "The GUID-to-LID table new ports take their LIDs from, in every mode" },
	{ "partition_config_file", SMD_KEY_STR, "string", F(partition_config_file), .parse = k_partitions,
	  .shown = "default none",
	  .doc = "The partitions file (OpenSM's key name): OpenSM's partitions.conf as it is, or the YAML form" },
	{ "planes", SMD_KEY_OTHER, "list of strings", .parse = k_planes, .shown = "default empty",
	  .doc = "The planes (separate subnets) this smd manages, one spec per plane" },
	{ "socket", SMD_KEY_STR, "string", F(socket), .parse = k_socket, .def = SMD_CTL_DEFAULT_SOCKET,
	  .doc = "The control socket smctl(8) talks to" },
	{ "socket_group", SMD_KEY_STR, "string", F(socket_group), .parse = k_socket_group,
	  .shown = "default: none",
	  .doc = "A group (name, or a number) whose members may use the control socket" },
	{ "sweep_interval", UINT(sweep_interval, 0, 86400), .def = "10",
	  .doc = "Seconds between light sweeps, which poll for changes that no trap announced." },
	{ "trap_holdoff_ms", UINT(trap_holdoff_ms, 0, 10000), .def = STR(SMD_CONF_TRAP_HOLDOFF_MS),
	  .doc = "Milliseconds between a trap 128 (a link went up or down) and the heavy sweep it starts" },
	/* master/standby election (smd/sm/election.h, smd/daemon/ha.c) */
	{ "sm_priority", UINT(sm_priority, 0, 15), .def = "1",
	  .doc = "This SM's priority in the master/standby election (0-15; higher wins, then the lower port GUID)" },
	{ "sm_poll_interval_ms", UINT(sm_poll_interval_ms, 50, 60000), .def = "500",
	  .doc = "Milliseconds between a standby's polls of the master's SMInfo" },
	{ "sm_poll_retries", UINT(sm_poll_retries, 1, 100), .def = "3",
	  .doc = "Polls of the master in a row that may go unanswered before a standby takes over" },
	{ "incremental_sweep", SMD_KEY_BOOL, "true or false", F(incremental_sweep), .def = "true",
	  .doc = "Sweeps caused by a trap, or by a light sweep that saw a change, patch the fabric" },
	/* systemd block (daemon.c): a sweep cycle running longer is taken as a wedged worker */
	{ "sweep_stall_limit", UINT(sweep_stall_limit, 0, 86400), .def = "600",
	  .doc = "Seconds one sweep cycle may run before smd takes its worker thread as wedged" },
	{ "mad", SMD_KEY_MAP, "mapping", .parse = k_mad, .shown = "",
	  .doc = "SMP transport tuning, with the keys:" },
	{ "mad.window", UINT(mad.window, 1, 4096), .def = "64",
	  .doc = "SMPs in flight at once over the whole SM" },
	{ "mad.per_switch_window", UINT(mad.per_switch_window, 1, 256), .def = "4",
	  .doc = "SMPs in flight towards one switch" },
	{ "mad.timeout_ms", UINT(mad.timeout_ms, 1, 60000), .def = "200",
	  .doc = "Milliseconds to wait for a response before retrying." },
	{ "mad.retries", UINT(mad.retries, 0, 100), .def = "3",
	  .doc = "Retries after the first attempt, each with a longer wait." },
	/* rehearsing failures (issue 18): the mock's fault injection (mock/mock.h) */
	{ "mock", SMD_KEY_MAP, "mapping", .parse = k_mock, .shown = "",
	  .doc = "Fault injection on mock planes" },
	{ "mock.loss", SMD_KEY_OTHER, "percentage", .parse = k_mock_loss, .def = "0%",
	  .doc = "The share of SMPs lost on the way" },
	{ "mock.corrupt", SMD_KEY_OTHER, "percentage", .parse = k_mock_corrupt, .def = "0%",
	  .doc = "The share of answers corrupted" },
	{ "mock.delay", SMD_KEY_OTHER, "percentage", .parse = k_mock_delay, .def = "0%",
	  .doc = "The share of answers held back by delay_ms" },
	{ "mock.delay_ms", UINT(mock.delay_ms, 1, 60000), .def = "50",
	  .doc = "Milliseconds a delayed answer is held back." },
	{ "mock.seed", UINT(mock.seed, 0, 4294967295UL), .def = "1",
	  .doc = "Seed of the fault injection's random numbers" },
	{ "log_level", SMD_KEY_OTHER, "string", .parse = k_log_level, .def = "notice",
	  .doc = "One of error, warning, notice, info, debug" },
	{ "log_repeat_interval", UINT(log_repeat_interval, 0, 86400), .unit = "seconds", .def = "600",
	  .doc = "A failure that stays the same from sweep to sweep" },
	{ "subnet_prefix", SMD_KEY_OTHER, "string", .parse = k_prefix, .def = "0xfe80000000000000",
	  .doc = "The 64-bit subnet prefix (upper half of every port GID) set on every port" },
	/* security (issue 8) */
	{ "m_key", SMD_KEY_OTHER, "string or number", .parse = k_mkey, .def = "none",
	  .doc = "The M_Key smd gives every port it configures" },
	{ "m_key_secret_file", SMD_KEY_OTHER, "string", .parse = k_mkey_secret, .shown = "default none",
	  .doc = "m_key: derived: the file holding the secret" },
	{ "m_key_protect_bits", UINT(keys.protect_bits, 0, 3), .def = "0",
	  .doc = "M_KeyProtectBits set with the key." },
	{ "m_key_lease_period", UINT(keys.lease_period, 0, 65535), .unit = "seconds", .def = "0",
	  .doc = "M_KeyLeasePeriod set with the key" },
	/* OpenSM's default SM_Key: SMs with different keys ignore each other (two masters) */
	{ "sm_key", SMD_KEY_OTHER, "string or number", .parse = k_sm_key, .def = "0x1",
	  .doc = "The SM_Key (SMInfo.SM_Key) of this SM" },
	{ "user", SMD_KEY_STR, "string", F(user), .parse = k_user, .shown = "default: none",
	  .doc = "The daemon (smd -f) switches to this user for good" },
	{ "group", SMD_KEY_STR, "string", F(group), .parse = k_group,
	  .shown = "default: the user's primary group",
	  .doc = "The group the daemon switches to (with or without user)." },
	/* metrics over HTTP (issue 16): off unless set */
	{ "metrics_listen", SMD_KEY_STR, "string", F(metrics_listen), .parse = k_metrics_listen,
	  .shown = "default: none",
	  .doc = "The address and port the daemon serves its metrics on, over HTTP" },
	/* port configuration (issue 14, sm/portcfg.h): OpenSM's option names and defaults */
	{ "subnet_timeout", UINT(subnet_timeout, 0, 31), .def = "18",
	  .doc = "PortInfo.SubnetTimeOut given to every CA port and switch port 0" },
	{ "max_op_vls", UINT(portcfg.max_op_vls, 1, 5), .def = "5",
	  .doc = "The most data VLs a port is given, in the PortInfo.OperationalVLs encoding" },
	{ "head_of_queue_lifetime", UINT(portcfg.hoq_life, 0, 31), .def = "18",
	  .doc = "PortInfo.HOQLife of switch ports linked to another switch" },
	{ "leaf_head_of_queue_lifetime", UINT(portcfg.leaf_hoq_life, 0, 31), .def = "16",
	  .doc = "PortInfo.HOQLife of switch ports linked to a CA or router, and of router ports" },
	{ "vl_stall_count", UINT(portcfg.vl_stall, 0, 7), .def = "7",
	  .doc = "PortInfo.VLStallCount of switch ports linked to another switch" },
	{ "leaf_vl_stall_count", UINT(portcfg.leaf_vl_stall, 0, 7), .def = "7",
	  .doc = "PortInfo.VLStallCount of switch ports linked to a CA or router" },
	{ "force_link_width", UINT(portcfg.force_link_width, 0, 255), .def = "0",
	  .doc = "PortInfo.LinkWidthEnabled of every linked port" },
	{ "force_link_speed", UINT(portcfg.force_link_speed, 0, 15), .def = "0",
	  .doc = "PortInfo.LinkSpeedEnabled of every linked port" },
	{ "force_link_speed_ext", UINT(portcfg.force_link_speed_ext, 0, 31), .def = "0",
	  .doc = "PortInfo.LinkSpeedExtEnabled of every linked port whose two ends support extended speeds" },
	{ "part_enforce", SMD_KEY_OTHER, "string", .parse = k_part_enforce, .def = "both",
	  .doc = "Partition enforcement on switch ports linked to a CA or router" },
	{ "qos", SMD_KEY_MAP, "mapping", .parse = k_qos, .shown = "",
	  .doc = "SL-to-VL mapping and VL arbitration, with the keys:" },
	{ "qos.enabled", SMD_KEY_BOOL, "true or false", F(portcfg.qos), .def = "true",
	  .doc = "Write the SL2VL and VLArbitration tables and PortInfo.VLHighLimit" },
#define QOS_CLASS(C, K, WHAT) \
	{ "qos." C, SMD_KEY_MAP, "mapping", .parse = k_qos_class, .shown = "", .doc = WHAT }, \
	{ "qos." C ".high_limit", UINT(portcfg.level[K].high_limit, 0, 255), .def = "0", \
	  .doc = "PortInfo.VLHighLimit" }, \
	{ "qos." C ".sl2vl", SMD_KEY_OTHER, "string", .parse = k_qos_table, .def = SM_QOS_DEFAULT_SL2VL, \
	  .doc = "The VL of each SL" }, \
	{ "qos." C ".vlarb_high", SMD_KEY_OTHER, "string", .parse = k_qos_table, \
	  .def = SM_QOS_DEFAULT_VLARB_HIGH, .doc = "The high-priority VL arbitration table" }, \
	{ "qos." C ".vlarb_low", SMD_KEY_OTHER, "string", .parse = k_qos_table, \
	  .def = SM_QOS_DEFAULT_VLARB_LOW, .doc = "The low-priority VL arbitration table" }
	QOS_CLASS("ca", SM_QOS_CA, "The QoS level of CA and router ports:"),
	QOS_CLASS("sw0", SM_QOS_SW0, "The QoS level of switch port 0 (enhanced port 0 only):"),
	QOS_CLASS("swe", SM_QOS_SWE, "The QoS level of switch external ports:"),
#undef QOS_CLASS
};
const size_t smd_conf_n_keys = sizeof(smd_conf_keys) / sizeof(smd_conf_keys[0]);
_Static_assert(sizeof(smd_conf_keys) / sizeof(smd_conf_keys[0]) <= MAX_KEYS, "raise MAX_KEYS");

int smd_conf_set_defaults(struct smd_conf *c)
{
	struct smd_conf_walk w = { .name = "(defaults)", .c = c };

	for (size_t i = 0; i < smd_conf_n_keys; i++) {
		const struct smd_conf_key *d = &smd_conf_keys[i];
		yaml_node_t n = { .type = YAML_SCALAR_NODE };
		int rc;

		if (!d->def)
			continue;
		n.data.scalar.value = (yaml_char_t *)(uintptr_t)d->def;
		n.data.scalar.length = strlen(d->def);
		n.data.scalar.style = YAML_PLAIN_SCALAR_STYLE;
		rc = parse_key(&w, d, d->name, &n);
		if (rc)
			return rc;
	}
	c->chain_line = 0;   /* the chain is not from a file */
	return 0;
}

int smd_conf_walk_doc(struct smd_conf *c, const char *name, yaml_node_t *root, char *err, size_t errlen)
{
	struct smd_conf_walk w = { .name = name, .doc = c->doc, .c = c, .err = err, .errlen = errlen };

	if (!root || is_null(root))
		return 0;
	if (root->type != YAML_MAPPING_NODE)
		return fail(&w, root, "the top level must be a mapping of keys, got %s", node_kind(root));
	return walk_map(&w, root, "");
}

void smd_conf_keys_dump(FILE *out)
{
	for (size_t i = 0; i < smd_conf_n_keys; i++) {
		const struct smd_conf_key *d = &smd_conf_keys[i];
		char type[64];

		if (d->kind == SMD_KEY_UINT)
			snprintf(type, sizeof(type), "integer %lu-%lu%s%s", d->min, d->max, d->unit ? " " : "",
				 d->unit ? d->unit : "");
		else
			snprintf(type, sizeof(type), "%s", d->type);
		fprintf(out, "%s\t%s%s%s%s\t%s\t%s\n", d->name, type,
			d->shown && !d->shown[0] ? "" : "; ", d->shown ? "" : "default ",
			d->shown ? d->shown : d->def ? d->def : "-", d->def ? d->def : "-", d->doc);
	}
}
