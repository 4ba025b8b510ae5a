/* SPDX-License-Identifier: MIT */
/*
 * DOC: smd configuration parser
 *
 * libyaml loads the whole file into a document (so engine subtrees can be
 * handed to engines later); this module then walks the top-level mapping
 * with a table of known keys. Each handler checks the node's type and
 * range and stores the value into the new struct. The first error stops
 * the walk; the partly filled struct is freed by the caller of walk().
 *
 * Scalars: integers must be plain (unquoted) decimal; strings may be plain
 * or quoted. A plain `~`, `null` or empty value is "no value" and is only
 * accepted where the key allows it (engines.NAME).
 */
#include "config/smdconf.h"
#include "config/options.h"
#include "lib/log.h"
#include "ctl/ctl.h"

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

#define SMD_DEFAULT_SOCKET "/run/smd/smd.sock"

struct walk {
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
static int fail(struct walk *w, const yaml_node_t *n, const char *fmt, ...)
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
static int get_str(struct walk *w, const char *key, yaml_node_t *v, char **out)
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

static int get_uint(struct walk *w, const char *key, yaml_node_t *v, unsigned long min,
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

static int valid_engine_name(const char *s, size_t len)
{
	if (!len || len > SMD_CONF_NAME_MAX)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '-')
			return 0;
	return 1;
}

/* Append one engine name [s, s+len) to the chain being built in names/n. */
static int chain_add(char names[][SMD_CONF_NAME_MAX + 1], unsigned *n, const char *s, size_t len,
		     char *msg, size_t msglen)
{
	while (len && isspace((unsigned char)*s)) {
		s++;
		len--;
	}
	while (len && isspace((unsigned char)s[len - 1]))
		len--;
	if (!len) {
		snprintf(msg, msglen, "empty engine name");
		return -EINVAL;
	}
	if (!valid_engine_name(s, len)) {
		snprintf(msg, msglen, "bad engine name '%.*s' (letters, digits, '_' and '-', at most %d)",
			 (int)(len > 64 ? 64 : len), s, SMD_CONF_NAME_MAX);
		return -EINVAL;
	}
	for (unsigned i = 0; i < *n; i++)
		if (strlen(names[i]) == len && !memcmp(names[i], s, len)) {
			snprintf(msg, msglen, "engine '%.*s' listed twice", (int)len, s);
			return -EINVAL;
		}
	if (*n >= SMD_CONF_MAX_CHAIN) {
		snprintf(msg, msglen, "more than %d engines in the chain", SMD_CONF_MAX_CHAIN);
		return -EINVAL;
	}
	memcpy(names[*n], s, len);
	names[*n][len] = '\0';
	(*n)++;
	return 0;
}

static int chain_parse(const char *str, char names[][SMD_CONF_NAME_MAX + 1], unsigned *n,
		       char *msg, size_t msglen)
{
	const char *p = str;
	int rc;

	*n = 0;
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		rc = chain_add(names, n, p, len, msg, msglen);
		if (rc)
			return rc;
		if (!comma)
			return 0;
		p = comma + 1;
	}
}

static int k_routing_engine(struct walk *w, const char *key, yaml_node_t *v)
{
	char names[SMD_CONF_MAX_CHAIN][SMD_CONF_NAME_MAX + 1];
	char msg[160];
	unsigned n = 0;
	int rc;

	if (v->type == YAML_SCALAR_NODE && !is_null(v)) {
		if (chain_parse(scalar(v), names, &n, msg, sizeof(msg)))
			return fail(w, v, "%s: %s", key, msg);
	} else if (v->type == YAML_SEQUENCE_NODE) {
		for (yaml_node_item_t *it = v->data.sequence.items.start;
		     it < v->data.sequence.items.top; it++) {
			yaml_node_t *e = yaml_document_get_node(w->doc, *it);
			if (!e || e->type != YAML_SCALAR_NODE || is_null(e))
				return fail(w, e ? e : v, "%s: list items must be engine names, got %s",
					    key, e ? node_kind(e) : "nothing");
			rc = chain_add(names, &n, scalar(e), strlen(scalar(e)), msg, sizeof(msg));
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

static int k_plugin_dir(struct walk *w, const char *key, yaml_node_t *v)
{
	return get_str(w, key, v, &w->c->plugin_dir);
}

static int k_state_dir(struct walk *w, const char *key, yaml_node_t *v)
{
	return get_str(w, key, v, &w->c->state_dir);
}

static int k_guid2lid(struct walk *w, const char *key, yaml_node_t *v)
{
	return get_str(w, key, v, &w->c->guid2lid_file);
}

static int k_socket(struct walk *w, const char *key, yaml_node_t *v)
{
	int rc = get_str(w, key, v, &w->c->socket);
	/* sockaddr_un.sun_path is 108 bytes including the NUL */
	if (!rc && strlen(w->c->socket) > 107)
		return fail(w, v, "%s: path longer than 107 bytes (the limit of a unix socket)", key);
	return rc;
}

/* ---- socket_group (control socket access, s2-ctl) ---- */
static int k_socket_group(struct walk *w, const char *key, yaml_node_t *v)
{
	gid_t gid;
	int rc = get_str(w, key, v, &w->c->socket_group);

	if (rc)
		return rc;
	if (!w->c->socket_group[0] || strlen(w->c->socket_group) >= SMD_CTL_GROUP_MAX)
		return fail(w, v, "%s: a group name of 1-%d characters", key, SMD_CTL_GROUP_MAX - 1);
	if (smd_ctl_group_gid(w->c->socket_group, &gid))
		return fail(w, v, "%s: no such group '%s'", key, w->c->socket_group);
	return 0;
}
/* ---- end socket_group ---- */

static int k_lmc(struct walk *w, const char *key, yaml_node_t *v)
{
	unsigned long val;
	int rc = get_uint(w, key, v, 0, 7, &val);
	if (!rc)
		w->c->lmc = (int)val;
	return rc;
}

static int k_sweep(struct walk *w, const char *key, yaml_node_t *v)
{
	unsigned long val;
	int rc = get_uint(w, key, v, 0, 86400, &val);
	if (!rc)
		w->c->sweep_interval = (unsigned)val;
	return rc;
}

/* systemd block (daemon.c): a sweep cycle running longer is taken as a wedged worker */
static int k_stall(struct walk *w, const char *key, yaml_node_t *v)
{
	unsigned long val;
	int rc = get_uint(w, key, v, 0, 86400, &val);
	if (!rc)
		w->c->sweep_stall_limit = (unsigned)val;
	return rc;
}

static int k_trap_holdoff(struct walk *w, const char *key, yaml_node_t *v)
{
	unsigned long val;
	int rc = get_uint(w, key, v, 0, 10000, &val);
	if (!rc)
		w->c->trap_holdoff_ms = (unsigned)val;
	return rc;
}

static int k_incremental(struct walk *w, const char *key, yaml_node_t *v)
{
	if (!is_plain(v) || is_null(v) || (strcmp(scalar(v), "true") && strcmp(scalar(v), "false")))
		return fail(w, v, "%s: expected true or false, got %s", key,
			    v->type == YAML_SCALAR_NODE && !is_null(v) ? scalar(v) : node_kind(v));
	w->c->incremental_sweep = !strcmp(scalar(v), "true");
	return 0;
}

static int k_log_level(struct walk *w, const char *key, yaml_node_t *v)
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

static int k_prefix(struct walk *w, const char *key, yaml_node_t *v)
{
	if (v->type != YAML_SCALAR_NODE || is_null(v))
		return fail(w, v, "%s: expected a 64-bit prefix such as 0xfe80000000000000, got %s",
			    key, node_kind(v));
	if (parse_prefix(scalar(v), &w->c->subnet_prefix))
		return fail(w, v, "%s: '%s' is not a 64-bit prefix (0xfe80000000000000 or fe80:0:0:0)",
			    key, scalar(v));
	return 0;
}

static int k_planes(struct walk *w, const char *key, yaml_node_t *v)
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
static int get_key(struct walk *w, const char *key, yaml_node_t *v, uint8_t *mode, uint64_t *val)
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
	errno = 0;
	*val = strtoull(s, &end, 0);
	if (!isdigit((unsigned char)*s) || *end || errno)
		return fail(w, v, "%s: '%s' is not none, random or a 64-bit number", key, s);
	if (!*val)
		return fail(w, v, "%s: 0 is no key (write none)", key);
	*mode = SM_KEY_FIXED;
	return 0;
}

static int k_mkey(struct walk *w, const char *key, yaml_node_t *v)
{
	return get_key(w, key, v, &w->c->keys.mkey_mode, &w->c->keys.mkey);
}

static int k_mkey_prot(struct walk *w, const char *key, yaml_node_t *v)
{
	unsigned long val;
	int rc = get_uint(w, key, v, 0, 3, &val);
	if (!rc)
		w->c->keys.protect_bits = (uint8_t)val;
	return rc;
}

static int k_mkey_lease(struct walk *w, const char *key, yaml_node_t *v)
{
	unsigned long val;
	int rc = get_uint(w, key, v, 0, 65535, &val);
	if (!rc)
		w->c->keys.lease_period = (uint16_t)val;
	return rc;
}

static int k_sm_key(struct walk *w, const char *key, yaml_node_t *v)
{
	return get_key(w, key, v, &w->c->keys.smkey_mode, &w->c->keys.sm_key);
}

static int k_user(struct walk *w, const char *key, yaml_node_t *v)
{
	int rc = get_str(w, key, v, &w->c->user);
	if (!rc && !getpwnam(w->c->user))
		return fail(w, v, "%s: no such user '%s'", key, w->c->user);
	return rc;
}

static int k_group(struct walk *w, const char *key, yaml_node_t *v)
{
	int rc = get_str(w, key, v, &w->c->group);
	if (!rc && !getgrnam(w->c->group))
		return fail(w, v, "%s: no such group '%s'", key, w->c->group);
	return rc;
}

struct key_def {
	const char *key;
	int (*fn)(struct walk *w, const char *key, yaml_node_t *v);
};

/* Walk a mapping with the given key table; duplicate and unknown keys are errors. */
static int walk_map(struct walk *w, yaml_node_t *map, const char *prefix,
		    const struct key_def *defs, size_t n_defs)
{
	unsigned seen_line[32] = { 0 };
	char full[96];
	int rc;

	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *k = yaml_document_get_node(w->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(w->doc, p->value);
		size_t i;

		if (!k || !v || k->type != YAML_SCALAR_NODE)
			return fail(w, k ? k : map, "keys must be plain names");
		for (i = 0; i < n_defs; i++)
			if (!strcmp(defs[i].key, scalar(k)))
				break;
		snprintf(full, sizeof(full), "%s%.60s", prefix, scalar(k));
		if (i == n_defs)
			return fail(w, k, "unknown key '%s' (see smd.yaml(5))", full);
		if (seen_line[i])
			return fail(w, k, "duplicate key '%s' (first at line %u)", full, seen_line[i]);
		seen_line[i] = node_line(k);
		rc = defs[i].fn(w, full, v);
		if (rc)
			return rc;
	}
	return 0;
}

static int k_mad_uint(struct walk *w, const char *key, yaml_node_t *v, unsigned long min,
		      unsigned long max, unsigned *out)
{
	unsigned long val;
	int rc = get_uint(w, key, v, min, max, &val);
	if (!rc)
		*out = (unsigned)val;
	return rc;
}

static int k_mad_window(struct walk *w, const char *key, yaml_node_t *v)
{
	return k_mad_uint(w, key, v, 1, 4096, &w->c->mad.window);
}

static int k_mad_psw(struct walk *w, const char *key, yaml_node_t *v)
{
	return k_mad_uint(w, key, v, 1, 256, &w->c->mad.per_switch_window);
}

static int k_mad_timeout(struct walk *w, const char *key, yaml_node_t *v)
{
	return k_mad_uint(w, key, v, 1, 60000, &w->c->mad.timeout_ms);
}

static int k_mad_retries(struct walk *w, const char *key, yaml_node_t *v)
{
	return k_mad_uint(w, key, v, 0, 100, &w->c->mad.retries);
}

/* The value under `key` in a mapping, NULL if absent. */
static yaml_node_t *map_get(struct walk *w, yaml_node_t *map, const char *key)
{
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *k = yaml_document_get_node(w->doc, p->key);
		if (k && k->type == YAML_SCALAR_NODE && !strcmp(scalar(k), key))
			return yaml_document_get_node(w->doc, p->value);
	}
	return NULL;
}

static int k_mad(struct walk *w, const char *key, yaml_node_t *v)
{
	static const struct key_def defs[] = {
		{ "window", k_mad_window },
		{ "per_switch_window", k_mad_psw },
		{ "timeout_ms", k_mad_timeout },
		{ "retries", k_mad_retries },
	};
	int rc;

	if (v->type != YAML_MAPPING_NODE)
		return fail(w, v, "%s: expected a mapping (window, per_switch_window, timeout_ms, retries), got %s",
			    key, node_kind(v));
	unsigned psw_default = w->c->mad.per_switch_window;
	rc = walk_map(w, v, "mad.", defs, sizeof(defs) / sizeof(defs[0]));
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

static int k_engines(struct walk *w, const char *key, yaml_node_t *v)
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
		if (!valid_engine_name(scalar(k), strlen(scalar(k))))
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

static const struct key_def top_keys[] = {
	{ "routing_engine", k_routing_engine },
	{ "plugin_dir", k_plugin_dir },
	{ "engines", k_engines },
	{ "lmc", k_lmc },
	{ "state_dir", k_state_dir },
	{ "guid2lid_file", k_guid2lid },
	{ "planes", k_planes },
	{ "socket", k_socket },
	{ "socket_group", k_socket_group },
	{ "sweep_interval", k_sweep },
	{ "trap_holdoff_ms", k_trap_holdoff },
	{ "incremental_sweep", k_incremental },
	{ "sweep_stall_limit", k_stall },
	{ "mad", k_mad },
	{ "log_level", k_log_level },
	{ "subnet_prefix", k_prefix },
	/* security (issue 8) */
	{ "m_key", k_mkey },
	{ "m_key_protect_bits", k_mkey_prot },
	{ "m_key_lease_period", k_mkey_lease },
	{ "sm_key", k_sm_key },
	{ "user", k_user },
	{ "group", k_group },
};

struct smd_conf *smd_conf_new(void)
{
	struct smd_conf *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->source = strdup("(defaults)");
	c->plugin_dir = strdup(SMD_PLUGINDIR);
	c->state_dir = strdup(SMD_LOCALSTATEDIR "/lib/smd");
	c->socket = strdup(SMD_DEFAULT_SOCKET);
	if (!c->source || !c->plugin_dir || !c->state_dir || !c->socket) {
		smd_conf_free(c);
		return NULL;
	}
	snprintf(c->chain[0], sizeof(c->chain[0]), "ftree");
	snprintf(c->chain[1], sizeof(c->chain[1]), "minhop");
	c->n_chain = 2;
	c->lmc = 0;
	c->sweep_interval = 10;
	c->trap_holdoff_ms = SMD_CONF_TRAP_HOLDOFF_MS;
	c->incremental_sweep = 1;
	c->sweep_stall_limit = 600;
	c->mad.window = 64;
	c->mad.per_switch_window = 4;
	c->mad.timeout_ms = 200;
	c->mad.retries = 3;
	c->log_level = SM_LOG_NOTICE;
	c->subnet_prefix = 0xfe80000000000000ULL;
	return c;
}

void smd_conf_free(struct smd_conf *c)
{
	if (!c)
		return;
	free(c->source);
	free(c->plugin_dir);
	free(c->state_dir);
	free(c->guid2lid_file);
	free(c->socket);
	free(c->user);
	free(c->group);
	free(c->socket_group);
	for (unsigned i = 0; i < c->n_planes; i++)
		free(c->planes[i]);
	if (c->doc) {
		yaml_document_delete(c->doc);
		free(c->doc);
	}
	free(c);
}

const struct smd_conf_engine *smd_conf_engine(const struct smd_conf *c, const char *name)
{
	for (unsigned i = 0; i < c->n_engines; i++)
		if (!strcmp(c->engines[i].name, name))
			return &c->engines[i];
	return NULL;
}

static int yaml_fail(const char *name, const yaml_parser_t *p, char *err, size_t errlen)
{
	const yaml_mark_t *m = &p->problem_mark;

	if (p->error == YAML_MEMORY_ERROR)
		return -ENOMEM;
	if (p->error == YAML_READER_ERROR)
		snprintf(err, errlen, "%s:%zu: %s", name, p->mark.line + 1,
			 p->problem ? p->problem : "cannot read the file");
	else
		snprintf(err, errlen, "%s:%zu: %s%s%s", name, m->line + 1,
			 p->problem ? p->problem : "YAML syntax error",
			 p->context ? " " : "", p->context ? p->context : "");
	return -EINVAL;
}

int smd_conf_load_stream(FILE *in, const char *name, struct smd_conf **out, char *err, size_t errlen)
{
	yaml_parser_t parser;
	yaml_document_t extra;
	struct smd_conf *c;
	yaml_node_t *root;
	char dummy[1];
	int rc;

	if (!err || !errlen) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	err[0] = '\0';
	c = smd_conf_new();
	if (!c)
		return -ENOMEM;
	free(c->source);
	c->source = strdup(name);
	c->doc = calloc(1, sizeof(*c->doc));
	if (!c->source || !c->doc) {
		free(c->doc);
		c->doc = NULL;
		smd_conf_free(c);
		return -ENOMEM;
	}
	if (!yaml_parser_initialize(&parser)) {
		free(c->doc);
		c->doc = NULL;
		smd_conf_free(c);
		return -ENOMEM;
	}
	yaml_parser_set_input_file(&parser, in);
	if (!yaml_parser_load(&parser, c->doc)) {
		rc = yaml_fail(name, &parser, err, errlen);
		free(c->doc);       /* libyaml leaves no document on failure */
		c->doc = NULL;
		goto out;
	}
	/* A second document would be silently ignored otherwise. */
	if (!yaml_parser_load(&parser, &extra)) {
		rc = yaml_fail(name, &parser, err, errlen);
		goto out;
	}
	root = yaml_document_get_root_node(&extra);
	if (root) {
		snprintf(err, errlen, "%s:%u: only one YAML document is allowed", name, node_line(root));
		yaml_document_delete(&extra);
		rc = -EINVAL;
		goto out;
	}
	yaml_document_delete(&extra);

	root = yaml_document_get_root_node(c->doc);
	rc = 0;
	if (root && !is_null(root)) {
		struct walk w = { .name = name, .doc = c->doc, .c = c, .err = err, .errlen = errlen };
		if (root->type != YAML_MAPPING_NODE)
			rc = fail(&w, root, "the top level must be a mapping of keys, got %s",
				  node_kind(root));
		else
			rc = walk_map(&w, root, "", top_keys, sizeof(top_keys) / sizeof(top_keys[0]));
	}
out:
	yaml_parser_delete(&parser);
	if (rc) {
		if (rc == -ENOMEM && !err[0])
			snprintf(err, errlen, "%s: out of memory", name);
		smd_conf_free(c);
		return rc;
	}
	*out = c;
	return 0;
}

int smd_conf_load(const char *path, struct smd_conf **out, char *err, size_t errlen)
{
	FILE *in = fopen(path, "r");
	int rc;

	if (!in) {
		rc = -errno;
		if (err && errlen)
			snprintf(err, errlen, "%s: %s", path, strerror(-rc));
		return rc;
	}
	rc = smd_conf_load_stream(in, path, out, err, errlen);
	fclose(in);
	return rc;
}

int smd_conf_set_chain(struct smd_conf *c, const char *chain, char *err, size_t errlen)
{
	char names[SMD_CONF_MAX_CHAIN][SMD_CONF_NAME_MAX + 1];
	char msg[160];
	unsigned n;

	if (chain_parse(chain, names, &n, msg, sizeof(msg))) {
		if (err && errlen)
			snprintf(err, errlen, "%s", msg);
		return -EINVAL;
	}
	memcpy(c->chain, names, sizeof(names));
	c->n_chain = n;
	c->chain_line = 0;
	return 0;
}

void smd_conf_chain_error(const struct smd_conf *c, const char *chain, char *err, size_t errlen)
{
	char msg[1024], cur[SMD_CONF_MAX_CHAIN * (SMD_CONF_NAME_MAX + 1)];
	unsigned long line = 0;
	int k = 0;

	if (!c || !c->doc || !c->source || !err || !errlen)
		return;
	snprintf(msg, sizeof(msg), "%s", err);
	/* "ENGINE: config line N: text" (sm_yaml_check_keys, most engines) or "ENGINE: line N: text" */
	const char *colon = strchr(msg, ':');
	if (colon && (sscanf(colon, ": config line %lu: %n", &line, &k) == 1 ||
		      sscanf(colon, ": line %lu: %n", &line, &k) == 1) && k > 0 && line) {
		snprintf(err, errlen, "%s:%lu: %.*s: %s", c->source, line, (int)(colon - msg), msg, colon + k);
		return;
	}
	smd_conf_chain_str(c, cur, sizeof(cur));
	if (c->chain_line && chain && !strcmp(chain, cur))
		snprintf(err, errlen, "%s:%u: routing_engine %s: %s", c->source, c->chain_line, chain, msg);
}

void smd_conf_chain_str(const struct smd_conf *c, char *buf, size_t len)
{
	size_t off = 0;

	if (!len)
		return;
	buf[0] = '\0';
	for (unsigned i = 0; i < c->n_chain && off < len; i++) {
		int n = snprintf(buf + off, len - off, "%s%s", i ? "," : "", c->chain[i]);
		if (n < 0)
			break;
		off += (size_t)n;
	}
}

static int replace_str(char **dst, const char *src)
{
	char *s = strdup(src);
	if (!s)
		return -ENOMEM;
	free(*dst);
	*dst = s;
	return 0;
}

int smd_conf_apply_opts(struct smd_conf *c, const struct smd_opts *o, char *err, size_t errlen)
{
	struct smd_plane_spec ps;
	char msg[300];
	int rc;

	if (o->engines) {
		rc = smd_conf_set_chain(c, o->engines, msg, sizeof(msg));
		if (rc) {
			snprintf(err, errlen, "-R %s: %s", o->engines, msg);
			return rc;
		}
	}
	if (o->lmc >= 0) {
		if (o->lmc > 7) {
			snprintf(err, errlen, "--lmc %d: must be 0-7", o->lmc);
			return -EINVAL;
		}
		c->lmc = o->lmc;
	}
	if (o->state_dir && (rc = replace_str(&c->state_dir, o->state_dir)))
		return rc;
	if (o->guid2lid && (rc = replace_str(&c->guid2lid_file, o->guid2lid)))
		return rc;
	if (o->socket) {
		if (strlen(o->socket) > 107) {
			snprintf(err, errlen, "--socket: path longer than 107 bytes");
			return -EINVAL;
		}
		if ((rc = replace_str(&c->socket, o->socket)))
			return rc;
	}
	if (o->n_planes) {
		char *planes[SM_MAX_PLANES] = { NULL };
		if (o->n_planes > SM_MAX_PLANES) {
			snprintf(err, errlen, "at most %d --plane options", SM_MAX_PLANES);
			return -EINVAL;
		}
		for (unsigned i = 0; i < o->n_planes; i++) {
			if (smd_plane_spec_parse(o->planes[i], &ps, msg, sizeof(msg))) {
				snprintf(err, errlen, "--plane %s: %s", o->planes[i], msg);
				rc = -EINVAL;
			} else {
				planes[i] = strdup(o->planes[i]);
				rc = planes[i] ? 0 : -ENOMEM;
			}
			if (rc) {
				for (unsigned k = 0; k < i; k++)
					free(planes[k]);
				return rc;
			}
		}
		for (unsigned i = 0; i < c->n_planes; i++)
			free(c->planes[i]);
		memcpy(c->planes, planes, sizeof(planes));
		c->n_planes = o->n_planes;
	}
	if (o->quiet)
		c->log_level = SM_LOG_WARN;
	else if (o->verbose)
		c->log_level = SM_LOG_NOTICE + o->verbose > SM_LOG_DEBUG ? SM_LOG_DEBUG :
			       SM_LOG_NOTICE + o->verbose;
	return 0;
}

int smd_plane_spec_parse(const char *spec, struct smd_plane_spec *ps, char *err, size_t errlen)
{
	const char *colon = strchr(spec, ':');
	const char *arg;

	memset(ps, 0, sizeof(*ps));
	if (!colon) {
		snprintf(err, errlen, "'%.64s' is not a plane spec (umad:CA:PORT, mock:FILE or ibsim:NODE)",
			 spec);
		return -EINVAL;
	}
	arg = colon + 1;
	if (!strncmp(spec, "umad:", 5)) {
		const char *c2 = strrchr(arg, ':');
		char *end;
		unsigned long port;

		ps->kind = SMD_PLANE_UMAD;
		if (!c2 || c2 == arg) {
			snprintf(err, errlen, "'%.64s': expected umad:CA:PORT, e.g. umad:mlx5_0:1", spec);
			return -EINVAL;
		}
		errno = 0;
		port = strtoul(c2 + 1, &end, 10);
		if (!isdigit((unsigned char)c2[1]) || *end || errno || port < 1 || port > SM_MAX_PORTS) {
			snprintf(err, errlen, "'%.64s': port must be 1-%d", spec, SM_MAX_PORTS);
			return -EINVAL;
		}
		if ((size_t)(c2 - arg) >= sizeof(ps->arg)) {
			snprintf(err, errlen, "'%.64s...': CA name too long", spec);
			return -EINVAL;
		}
		memcpy(ps->arg, arg, (size_t)(c2 - arg));
		ps->port = (unsigned)port;
		return 0;
	}
	if (!strncmp(spec, "mock:", 5))
		ps->kind = SMD_PLANE_MOCK;
	else if (!strncmp(spec, "ibsim:", 6))
		ps->kind = SMD_PLANE_IBSIM;
	else {
		snprintf(err, errlen, "'%.64s': unknown plane kind '%.*s' (umad, mock or ibsim)", spec,
			 (int)(colon - spec > 16 ? 16 : colon - spec), spec);
		return -EINVAL;
	}
	if (!*arg) {
		snprintf(err, errlen, "'%.64s': missing %s after the colon", spec,
			 ps->kind == SMD_PLANE_MOCK ? "a dump file" : "a node id");
		return -EINVAL;
	}
	if (strlen(arg) >= sizeof(ps->arg)) {
		snprintf(err, errlen, "'%.64s...': argument too long", spec);
		return -EINVAL;
	}
	snprintf(ps->arg, sizeof(ps->arg), "%s", arg);
	return 0;
}

static const struct {
	const char *name;
	int level;
} level_names[] = {
	{ "error", SM_LOG_ERR }, { "err", SM_LOG_ERR },
	{ "warning", SM_LOG_WARN }, { "warn", SM_LOG_WARN },
	{ "notice", SM_LOG_NOTICE }, { "info", SM_LOG_INFO }, { "debug", SM_LOG_DEBUG },
};

int smd_log_level_parse(const char *name)
{
	for (size_t i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++)
		if (!strcmp(level_names[i].name, name))
			return level_names[i].level;
	return -1;
}

const char *smd_log_level_name(int level)
{
	for (size_t i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++)
		if (level_names[i].level == level)
			return level_names[i].name;
	return "unknown";
}
