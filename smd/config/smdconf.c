/* SPDX-License-Identifier: MIT */
/*
 * DOC: smd configuration: loading, the command line over it, chains, plane
 * specs, log levels
 *
 * libyaml loads the whole file into a document (so engine subtrees can be
 * handed to engines later); keys.c then walks it with the table of keys,
 * which also holds the defaults smd_conf_new() starts from.
 */
#include "config/smdconf.h"
#include "model/partitions.h"
#include "config/keys.h"
#include "config/options.h"
#include "lib/err.h"
#include "lib/log.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

int smd_conf_valid_engine_name(const char *s, size_t len)
{
	if (!len || len > SMD_CONF_NAME_MAX)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '-')
			return 0;
	return 1;
}

/* Append one engine name [s, s+len) to the chain being built in names/n. */
int smd_conf_chain_add(char names[][SMD_CONF_NAME_MAX + 1], unsigned *n, const char *s, size_t len,
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
	if (!smd_conf_valid_engine_name(s, len)) {
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

int smd_conf_chain_parse(const char *str, char names[][SMD_CONF_NAME_MAX + 1], unsigned *n,
			 char *msg, size_t msglen)
{
	const char *p = str;
	int rc;

	*n = 0;
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		rc = smd_conf_chain_add(names, n, p, len, msg, msglen);
		if (rc)
			return rc;
		if (!comma)
			return 0;
		p = comma + 1;
	}
}

struct smd_conf *smd_conf_new(void)
{
	struct smd_conf *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->source = strdup("(defaults)");
	if (!c->source || smd_conf_set_defaults(c)) {
		smd_conf_free(c);
		return NULL;
	}
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
	free(c->partition_config_file);
	sm_partitions_free(c->partitions);
	free(c->socket);
	free(c->user);
	free(c->group);
	free(c->metrics_listen);
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

/*
 * Nesting deeper than SMD_CONF_MAX_DEPTH is refused before the document is
 * built: libyaml's cost grows with the depth (a 400 KB file nested 100,000
 * deep took 29 s, issue 18), and no smd.yaml needs more than a few levels.
 * The event parser stops at the first level too deep.
 */
static int depth_check(const unsigned char *buf, size_t len, const char *name, char *err, size_t errlen)
{
	yaml_parser_t p;
	yaml_event_t ev;
	int depth = 0, rc = 0;

	if (!yaml_parser_initialize(&p))
		return -ENOMEM;
	yaml_parser_set_input_string(&p, buf, len);
	for (;;) {
		if (!yaml_parser_parse(&p, &ev)) {
			rc = yaml_fail(name, &p, err, errlen);
			break;
		}
		yaml_event_type_t t = ev.type;
		size_t line = ev.start_mark.line + 1;
		yaml_event_delete(&ev);
		if (t == YAML_MAPPING_START_EVENT || t == YAML_SEQUENCE_START_EVENT) {
			if (++depth > SMD_CONF_MAX_DEPTH) {
				rc = sm_errf_rc(-EINVAL, err, errlen, "%s:%zu: nested deeper than %d levels", name, line,
						SMD_CONF_MAX_DEPTH);
				break;
			}
		} else if (t == YAML_MAPPING_END_EVENT || t == YAML_SEQUENCE_END_EVENT) {
			depth--;
		} else if (t == YAML_STREAM_END_EVENT) {
			break;
		}
	}
	yaml_parser_delete(&p);
	return rc;
}

static int load_buf(const unsigned char *buf, size_t len, const char *name, struct smd_conf **out, char *err,
		    size_t errlen)
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
	if ((rc = depth_check(buf, len, name, err, errlen)))
		return rc;
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
	yaml_parser_set_input_string(&parser, buf, len);
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
		snprintf(err, errlen, "%s:%u: only one YAML document is allowed", name,
			 (unsigned)root->start_mark.line + 1);
		yaml_document_delete(&extra);
		rc = -EINVAL;
		goto out;
	}
	yaml_document_delete(&extra);

	root = yaml_document_get_root_node(c->doc);
	rc = smd_conf_walk_doc(c, name, root, err, errlen);
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

/* At most SMD_CONF_MAX_BYTES of in (one more byte read tells a larger file) into a malloc'ed buffer. */
static int read_bounded(FILE *in, int fd, const char *name, unsigned char **out, size_t *len, char *err,
			size_t errlen)
{
	size_t cap = SMD_CONF_MAX_BYTES + 1, n = 0;
	unsigned char *b = malloc(cap);

	if (!b)
		return -ENOMEM;
	for (;;) {
		ssize_t r;
		if (in) {
			r = (ssize_t)fread(b + n, 1, cap - n, in);
			if (!r && ferror(in))
				r = -1;
		} else {
			r = read(fd, b + n, cap - n);
			if (r < 0 && errno == EINTR)
				continue;
		}
		if (r < 0) {
			free(b);
			return sm_errf_rc(-EIO, err, errlen, "%s: read error", name);
		}
		n += (size_t)r;
		if (!r || n == cap)
			break;
	}
	if (n > SMD_CONF_MAX_BYTES) {
		free(b);
		return sm_errf_rc(-EFBIG, err, errlen, "%s: larger than %u bytes, the limit of a configuration", name,
				  SMD_CONF_MAX_BYTES);
	}
	*out = b;
	*len = n;
	return 0;
}

int smd_conf_load_stream(FILE *in, const char *name, struct smd_conf **out, char *err, size_t errlen)
{
	unsigned char *buf = NULL;
	size_t len = 0;
	int rc = read_bounded(in, -1, name, &buf, &len, err, errlen);

	if (!rc)
		rc = load_buf(buf, len, name, out, err, errlen);
	free(buf);
	return rc;
}

int smd_conf_load(const char *path, struct smd_conf **out, char *err, size_t errlen)
{
	/* O_NONBLOCK: a FIFO or a device named as the config never blocks the open */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	unsigned char *buf = NULL;
	struct stat st;
	size_t len = 0;
	int rc;

	if (fd < 0)
		return sm_errf_rc(-errno, err, errlen, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return sm_errf_rc(-EINVAL, err, errlen, "%s: not a regular file", path);
	}
	if (st.st_size > (off_t)SMD_CONF_MAX_BYTES) {
		close(fd);
		return sm_errf_rc(-EFBIG, err, errlen, "%s: %lld bytes, larger than %u bytes, the limit of a configuration",
				  path, (long long)st.st_size, SMD_CONF_MAX_BYTES);
	}
	rc = read_bounded(NULL, fd, path, &buf, &len, err, errlen);
	close(fd);
	if (!rc)
		rc = load_buf(buf, len, path, out, err, errlen);
	free(buf);
	return rc;
}

int smd_conf_set_chain(struct smd_conf *c, const char *chain, char *err, size_t errlen)
{
	char names[SMD_CONF_MAX_CHAIN][SMD_CONF_NAME_MAX + 1];
	char msg[160];
	unsigned n;

	if (smd_conf_chain_parse(chain, names, &n, msg, sizeof(msg))) {
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
	if (o->seed)   /* --seed N: the mock planes' fault injection (mock.seed) */
		c->mock.seed = o->seed;
	if (o->state_dir && (rc = replace_str(&c->state_dir, o->state_dir)))
		return rc;
	if (o->guid2lid && (rc = replace_str(&c->guid2lid_file, o->guid2lid)))
		return rc;
	if (o->partitions) {
		struct sm_partitions *parts = NULL;
		if ((rc = sm_partitions_load(o->partitions, &parts, err, errlen)))
			return rc;
		if ((rc = replace_str(&c->partition_config_file, o->partitions))) {
			sm_partitions_free(parts);
			return rc;
		}
		sm_partitions_free(c->partitions);
		c->partitions = parts;
	}
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
	/* no partitions file: OpenSM's default partition (its P_Key in every port's table, its broadcast group) */
	if (!c->partitions && (rc = sm_partitions_default(&c->partitions))) {
		snprintf(err, errlen, "default partition: %s", strerror(-rc));
		return rc;
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
