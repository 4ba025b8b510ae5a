/* SPDX-License-Identifier: MIT */
/*
 * DOC: control socket (protocol in ctl.h)
 *
 * Owns: the listening socket, every client connection (a fixed array of
 * SMD_CTL_MAX_CLIENTS slots, each with a bounded input buffer and one
 * pending output buffer), and the JSON reader used on both sides.
 *
 * Data flow: poll -> accept (non-blocking) -> read into the slot's buffer
 * -> for each complete line: parse, handle (or park until woken) -> reply
 * appended to the slot's output -> written as the socket accepts it. While
 * a slot has a reply pending or is parked, its further input is not read,
 * so one client never holds more than one request in progress and a
 * pipelining client cannot grow our buffers.
 *
 * Invariants: a slot's deadline is set whenever it waits on its peer
 * (request incomplete, reply not yet taken); a parked slot has no deadline
 * (the daemon's cycle decides), but a parked peer that hangs up is freed.
 * Nothing here logs: errors go to the peer or to the caller.
 */
#include "ctl/ctl.h"
#include "lib/clock.h"
#include "lib/json.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* JSON reader                                                          */

struct jp {
	const char *s;
	size_t len, pos;
	char *err;
	size_t errlen;
};

static int jp_fail(struct jp *p, const char *what)
{
	if (p->err && p->errlen)
		snprintf(p->err, p->errlen, "offset %zu: %s", p->pos, what);
	return -EINVAL;
}

static void jp_ws(struct jp *p)
{
	while (p->pos < p->len && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' || p->s[p->pos] == '\n' ||
				   p->s[p->pos] == '\r'))
		p->pos++;
}

void smd_jv_free(struct smd_jv *v)
{
	while (v) {
		struct smd_jv *next = v->next;
		smd_jv_free(v->child);
		free(v->key);
		free(v->str);
		free(v);
		v = next;
	}
}

static int hex4(const char *s, unsigned *out)
{
	unsigned v = 0;
	for (int i = 0; i < 4; i++) {
		char c = s[i];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return -1;
	}
	*out = v;
	return 0;
}

static size_t utf8_put(char *o, unsigned cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xC0 | (cp >> 6));
		o[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xE0 | (cp >> 12));
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		o[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	o[0] = (char)(0xF0 | (cp >> 18));
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
	o[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

/* A string literal at p->pos (the opening quote); *out malloc'ed. */
static int jp_string(struct jp *p, char **out)
{
	size_t start = ++p->pos, end = start;
	char *o, *w;

	/* find the closing quote first: the decoded text is never longer */
	while (end < p->len && p->s[end] != '"') {
		if (p->s[end] == '\\')
			end++;
		end++;
	}
	if (end >= p->len)
		return jp_fail(p, "unterminated string");
	o = malloc(end - start + 1);
	if (!o)
		return -ENOMEM;
	w = o;
	while (p->pos < end) {
		unsigned char c = (unsigned char)p->s[p->pos];
		if (c < 0x20) {
			free(o);
			return jp_fail(p, "control character in string");
		}
		if (c >= 0x80) {
			/* JSON text is UTF-8: invalid bytes would come back changed in replies */
			size_t n = sm_json_utf8_len((const unsigned char *)p->s + p->pos, end - p->pos);
			if (!n) {
				free(o);
				return jp_fail(p, "invalid UTF-8 in string");
			}
			memcpy(w, p->s + p->pos, n);
			w += n;
			p->pos += n;
			continue;
		}
		if (c != '\\') {
			*w++ = (char)c;
			p->pos++;
			continue;
		}
		p->pos++;
		c = (unsigned char)p->s[p->pos++];
		switch (c) {
		case '"': *w++ = '"'; break;
		case '\\': *w++ = '\\'; break;
		case '/': *w++ = '/'; break;
		case 'b': *w++ = '\b'; break;
		case 'f': *w++ = '\f'; break;
		case 'n': *w++ = '\n'; break;
		case 'r': *w++ = '\r'; break;
		case 't': *w++ = '\t'; break;
		case 'u': {
			unsigned cp, lo;
			if (p->pos + 4 > end || hex4(p->s + p->pos, &cp)) {
				free(o);
				return jp_fail(p, "bad \\u escape");
			}
			p->pos += 4;
			if (cp >= 0xD800 && cp <= 0xDBFF) {
				if (p->pos + 6 > end || p->s[p->pos] != '\\' || p->s[p->pos + 1] != 'u' ||
				    hex4(p->s + p->pos + 2, &lo) || lo < 0xDC00 || lo > 0xDFFF) {
					free(o);
					return jp_fail(p, "unpaired surrogate");
				}
				p->pos += 6;
				cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
			} else if (cp >= 0xDC00 && cp <= 0xDFFF) {
				free(o);
				return jp_fail(p, "unpaired surrogate");
			}
			if (cp == 0) {
				free(o);
				return jp_fail(p, "NUL in string");
			}
			/* \uXXXX is 6 input bytes, at most 4 output bytes: fits */
			w += utf8_put(w, cp);
			break;
		}
		default:
			free(o);
			return jp_fail(p, "bad escape in string");
		}
	}
	*w = '\0';
	p->pos = end + 1;
	*out = o;
	return 0;
}

static int jp_number(struct jp *p, double *out)
{
	size_t st = p->pos, i = p->pos;
	char tmp[64];

	if (i < p->len && p->s[i] == '-')
		i++;
	if (i >= p->len || p->s[i] < '0' || p->s[i] > '9')
		return jp_fail(p, "bad number");
	if (p->s[i] == '0')
		i++;
	else
		while (i < p->len && p->s[i] >= '0' && p->s[i] <= '9')
			i++;
	if (i < p->len && p->s[i] == '.') {
		i++;
		if (i >= p->len || p->s[i] < '0' || p->s[i] > '9')
			return jp_fail(p, "bad number");
		while (i < p->len && p->s[i] >= '0' && p->s[i] <= '9')
			i++;
	}
	if (i < p->len && (p->s[i] == 'e' || p->s[i] == 'E')) {
		i++;
		if (i < p->len && (p->s[i] == '+' || p->s[i] == '-'))
			i++;
		if (i >= p->len || p->s[i] < '0' || p->s[i] > '9')
			return jp_fail(p, "bad number");
		while (i < p->len && p->s[i] >= '0' && p->s[i] <= '9')
			i++;
	}
	if (i - st >= sizeof(tmp))
		return jp_fail(p, "number too long");
	memcpy(tmp, p->s + st, i - st);
	tmp[i - st] = '\0';
	*out = strtod(tmp, NULL);
	if (!isfinite(*out))
		return jp_fail(p, "number out of range");
	p->pos = i;
	return 0;
}

static int jp_lit(struct jp *p, const char *lit)
{
	size_t n = strlen(lit);
	if (p->len - p->pos < n || memcmp(p->s + p->pos, lit, n))
		return jp_fail(p, "unexpected character");
	p->pos += n;
	return 0;
}

static int jp_value(struct jp *p, struct smd_jv *v, int depth);

static int jp_container(struct jp *p, struct smd_jv *v, int depth)
{
	int obj = p->s[p->pos] == '{';
	char close = obj ? '}' : ']';
	struct smd_jv **tail = &v->child;
	int rc;

	if (depth >= SMD_JSON_MAX_DEPTH)
		return jp_fail(p, "nested too deep");
	v->type = obj ? SMD_J_OBJ : SMD_J_ARR;
	p->pos++;
	jp_ws(p);
	if (p->pos < p->len && p->s[p->pos] == close) {
		p->pos++;
		return 0;
	}
	for (;;) {
		struct smd_jv *k = calloc(1, sizeof(*k));
		if (!k)
			return -ENOMEM;
		*tail = k;
		tail = &k->next;
		v->n++;
		jp_ws(p);
		if (obj) {
			if (p->pos >= p->len || p->s[p->pos] != '"')
				return jp_fail(p, "expected a member name");
			if ((rc = jp_string(p, &k->key)))
				return rc;
			jp_ws(p);
			if (p->pos >= p->len || p->s[p->pos] != ':')
				return jp_fail(p, "expected ':'");
			p->pos++;
		}
		if ((rc = jp_value(p, k, depth + 1)))
			return rc;
		jp_ws(p);
		if (p->pos >= p->len)
			return jp_fail(p, "unterminated container");
		if (p->s[p->pos] == ',') {
			p->pos++;
			continue;
		}
		if (p->s[p->pos] == close) {
			p->pos++;
			return 0;
		}
		return jp_fail(p, obj ? "expected ',' or '}'" : "expected ',' or ']'");
	}
}

static int jp_value(struct jp *p, struct smd_jv *v, int depth)
{
	jp_ws(p);
	if (p->pos >= p->len)
		return jp_fail(p, "expected a value");
	switch (p->s[p->pos]) {
	case '{':
	case '[':
		return jp_container(p, v, depth);
	case '"':
		v->type = SMD_J_STR;
		return jp_string(p, &v->str);
	case 't':
		v->type = SMD_J_BOOL;
		v->boolean = 1;
		return jp_lit(p, "true");
	case 'f':
		v->type = SMD_J_BOOL;
		return jp_lit(p, "false");
	case 'n':
		v->type = SMD_J_NULL;
		return jp_lit(p, "null");
	default:
		v->type = SMD_J_NUM;
		return jp_number(p, &v->num);
	}
}

int smd_json_parse(const char *buf, size_t len, struct smd_jv **out, char *err, size_t errlen)
{
	struct jp p = { .s = buf, .len = len, .err = err, .errlen = errlen };
	struct smd_jv *v = calloc(1, sizeof(*v));
	int rc;

	if (!v)
		return -ENOMEM;
	if (memchr(buf, '\0', len)) {
		p.pos = (size_t)((const char *)memchr(buf, '\0', len) - buf);
		rc = jp_fail(&p, "NUL byte");
	} else {
		rc = jp_value(&p, v, 0);
	}
	if (!rc) {
		jp_ws(&p);
		if (p.pos != p.len)
			rc = jp_fail(&p, "trailing characters after the value");
	}
	if (rc) {
		if (rc == -ENOMEM && err && errlen)
			snprintf(err, errlen, "out of memory");
		smd_jv_free(v);
		return rc;
	}
	*out = v;
	return 0;
}

const struct smd_jv *smd_jv_get(const struct smd_jv *v, const char *key)
{
	if (!v || v->type != SMD_J_OBJ)
		return NULL;
	for (const struct smd_jv *k = v->child; k; k = k->next)
		if (k->key && !strcmp(k->key, key))
			return k;
	return NULL;
}

const char *smd_jv_str(const struct smd_jv *v, const char *key, const char *def)
{
	const struct smd_jv *m = smd_jv_get(v, key);
	return m && m->type == SMD_J_STR ? m->str : def;
}

double smd_jv_num(const struct smd_jv *v, const char *key, double def)
{
	const struct smd_jv *m = smd_jv_get(v, key);
	return m && m->type == SMD_J_NUM ? m->num : def;
}

int smd_jv_bool(const struct smd_jv *v, const char *key, int def)
{
	const struct smd_jv *m = smd_jv_get(v, key);
	return m && m->type == SMD_J_BOOL ? m->boolean : def;
}

int smd_ctl_parse_request(const char *buf, size_t len, struct smd_jv **out, const char **cmd,
			  char *err, size_t errlen)
{
	struct smd_jv *v = NULL;
	const struct smd_jv *m;
	char perr[160];
	int rc;

	if (len > SMD_CTL_MAX_REQ) {
		snprintf(err, errlen, "request longer than %u bytes", SMD_CTL_MAX_REQ);
		return -E2BIG;
	}
	rc = smd_json_parse(buf, len, &v, perr, sizeof(perr));
	if (rc) {
		snprintf(err, errlen, "bad JSON: %s", perr);
		return rc;
	}
	if (v->type != SMD_J_OBJ) {
		snprintf(err, errlen, "a request is a JSON object");
		goto bad;
	}
	for (m = v->child; m; m = m->next)
		if (m->type == SMD_J_OBJ || m->type == SMD_J_ARR) {
			snprintf(err, errlen, "member '%.40s': nested values are not accepted", m->key);
			goto bad;
		}
	m = smd_jv_get(v, "version");
	if (m && (m->type != SMD_J_NUM || m->num != SMD_CTL_VERSION)) {
		snprintf(err, errlen, "unsupported protocol version (this smd speaks %d)", SMD_CTL_VERSION);
		goto bad;
	}
	m = smd_jv_get(v, "cmd");
	if (!m || m->type != SMD_J_STR || !m->str[0]) {
		snprintf(err, errlen, "missing \"cmd\" (a string)");
		goto bad;
	}
	*cmd = m->str;
	*out = v;
	return 0;
bad:
	smd_jv_free(v);
	return -EINVAL;
}

/* ------------------------------------------------------------------ */
/* replies                                                              */

void smd_ctl_reply_begin(struct sm_json *j, const char *cmd)
{
	sm_json_obj_begin(j, NULL);
	sm_json_uint(j, "version", SMD_CTL_VERSION);
	sm_json_bool(j, "ok", 1);
	sm_json_str(j, "cmd", cmd);
}

char *smd_ctl_error_line(const char *msg, size_t *len)
{
	struct sm_json j;
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	if (!f)
		return NULL;
	sm_json_init(&j, f, 0);
	sm_json_obj_begin(&j, NULL);
	sm_json_uint(&j, "version", SMD_CTL_VERSION);
	sm_json_bool(&j, "ok", 0);
	sm_json_str(&j, "error", msg);
	sm_json_obj_end(&j);
	int rc = sm_json_finish(&j);   /* adds the newline */
	if (fclose(f) || rc) {
		free(buf);
		return NULL;
	}
	if (len)
		*len = n;
	return buf;
}

/* ------------------------------------------------------------------ */
/* server                                                               */

enum { SLOT_FREE = 0, SLOT_READ, SLOT_WRITE, SLOT_PARKED };

struct slot {
	int fd;
	int state;
	int close_after;        /* close once the output is written */
	int peer_eof;
	char in[SMD_CTL_MAX_REQ + 1];
	size_t in_len;
	char *out;
	size_t out_len, out_off;
	uint64_t deadline_us;   /* 0 = none */
	/* parked request */
	struct smd_jv *req;
	const char *cmd;
	uint64_t wait_for;
};

struct smd_ctl_server {
	int lfd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	dev_t dev;
	ino_t ino;
	const struct smd_ctl_ops *ops;
	void *arg;
	uint64_t woken;
	/* access (ctl_auth.c): the socket_group last applied, and its gid */
	char group[SMD_CTL_GROUP_MAX];
	int have_gid;
	gid_t gid;
	struct slot slot[SMD_CTL_MAX_CLIENTS];
};

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

static int fill_addr(struct sockaddr_un *sa, const char *path, char *err, size_t errlen)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (!path || !path[0] || strlen(path) >= sizeof(sa->sun_path)) {
		snprintf(err, errlen, "socket path '%s' is empty or longer than %zu bytes", path ? path : "",
			 sizeof(sa->sun_path) - 1);
		return -EINVAL;
	}
	memcpy(sa->sun_path, path, strlen(path));
	return 0;
}

/* Is something answering on path? 1 yes, 0 no (stale or absent). */
static int socket_alive(const struct sockaddr_un *sa)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int alive;

	if (fd < 0)
		return 0;
	alive = connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0;
	close(fd);
	return alive;
}

static void make_parent(const char *path)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return;
	*slash = '\0';
	(void)mkdir(dir, 0755);   /* EEXIST is fine; any other failure shows at bind */
}

int smd_ctl_server_open(const char *path, const struct smd_ctl_ops *ops, void *arg,
			struct smd_ctl_server **out, char *err, size_t errlen)
{
	struct smd_ctl_server *s;
	struct sockaddr_un sa;
	struct stat st;
	int rc;

	if ((rc = fill_addr(&sa, path, err, errlen)))
		return rc;
	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	s->ops = ops;
	s->arg = arg;
	snprintf(s->path, sizeof(s->path), "%s", path);
	for (unsigned i = 0; i < SMD_CTL_MAX_CLIENTS; i++)
		s->slot[i].fd = -1;
	s->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s->lfd < 0) {
		rc = -errno;
		snprintf(err, errlen, "socket: %s", strerror(errno));
		goto fail;
	}
	make_parent(path);
	mode_t old = umask(0117);   /* the socket file is created 0660 */
	rc = bind(s->lfd, (struct sockaddr *)&sa, sizeof(sa));
	if (rc < 0 && errno == EADDRINUSE) {
		if (socket_alive(&sa)) {
			umask(old);
			snprintf(err, errlen, "%s: another smd is answering on this socket", path);
			rc = -EADDRINUSE;
			goto fail;
		}
		/* stale: left by a daemon that died; only a socket file is removed */
		if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
			unlink(path);
		rc = bind(s->lfd, (struct sockaddr *)&sa, sizeof(sa));
	}
	umask(old);
	if (rc < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: bind: %s", path, strerror(errno));
		goto fail;
	}
	if (chmod(path, 0660) < 0 || listen(s->lfd, 64) < 0 || stat(path, &st) < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		unlink(path);
		goto fail;
	}
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	*out = s;
	return 0;
fail:
	if (s->lfd >= 0)
		close(s->lfd);
	free(s);
	return rc;
}

static void slot_free(struct slot *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->out);
	smd_jv_free(c->req);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

/* Queue a reply (takes buf). NULL buf (ENOMEM): the connection is closed. */
static void slot_reply(struct slot *c, char *buf, size_t len, int close_after)
{
	if (!buf) {
		slot_free(c);
		return;
	}
	free(c->out);
	c->out = buf;
	c->out_len = len;
	c->out_off = 0;
	c->state = SLOT_WRITE;
	c->close_after |= close_after;
	c->deadline_us = sm_mono_us() + SMD_CTL_TIMEOUT_MS * 1000u;
}

static void slot_error(struct slot *c, const char *msg, int close_after)
{
	size_t n = 0;
	char *buf = smd_ctl_error_line(msg, &n);
	slot_reply(c, buf, n, close_after);
}

/* Run the handler (or resume) and queue its reply. */
static void run_handler(struct smd_ctl_server *s, struct slot *c, int resume)
{
	char err[512] = "";
	char *buf = NULL;
	size_t n = 0;
	struct sm_json j;
	uint64_t wait_for = 0;
	int rc;
	FILE *f = open_memstream(&buf, &n);

	if (!f) {
		slot_free(c);
		return;
	}
	sm_json_init(&j, f, 0);
	smd_ctl_reply_begin(&j, c->cmd);
	if (resume)
		rc = s->ops->resume(s->arg, c->cmd, c->req, &j, err, sizeof(err));
	else
		rc = s->ops->handle(s->arg, c->cmd, c->req, &j, &wait_for, err, sizeof(err));
	if (rc == SMD_CTL_WAIT && !resume) {
		fclose(f);
		free(buf);
		if (wait_for <= s->woken) {
			run_handler(s, c, 1);
			return;
		}
		c->state = SLOT_PARKED;
		c->wait_for = wait_for;
		c->deadline_us = 0;
		return;
	}
	sm_json_obj_end(&j);
	int jrc = sm_json_finish(&j);
	if (fclose(f) || jrc) {
		free(buf);
		slot_free(c);
		return;
	}
	smd_jv_free(c->req);
	c->req = NULL;
	c->cmd = NULL;
	if (rc) {
		free(buf);
		slot_error(c, err[0] ? err : strerror(rc < 0 ? -rc : EIO), 0);
		return;
	}
	slot_reply(c, buf, n, 0);
}

/* A complete line in c->in[0..len): handle it. */
static void slot_request(struct smd_ctl_server *s, struct slot *c, const char *line, size_t len)
{
	char err[256];
	int rc;

	rc = smd_ctl_parse_request(line, len, &c->req, &c->cmd, err, sizeof(err));
	if (rc) {
		slot_error(c, err, 0);
		return;
	}
	run_handler(s, c, 0);
}

/* Consume one line from the input buffer if there is one. */
static void slot_next(struct smd_ctl_server *s, struct slot *c)
{
	char *nl;

	while (c->state == SLOT_READ) {
		nl = memchr(c->in, '\n', c->in_len);
		if (!nl) {
			if (c->in_len > SMD_CTL_MAX_REQ) {
				char msg[80];
				snprintf(msg, sizeof(msg), "request longer than %u bytes", SMD_CTL_MAX_REQ);
				slot_error(c, msg, 1);
			} else if (c->peer_eof) {
				if (c->in_len) {
					size_t n = c->in_len;
					c->in_len = 0;
					c->close_after = 1;
					slot_request(s, c, c->in, n);
				} else {
					slot_free(c);
				}
			} else {
				c->deadline_us = c->in_len ? c->deadline_us : sm_mono_us() + SMD_CTL_TIMEOUT_MS * 1000u;
			}
			return;
		}
		size_t n = (size_t)(nl - c->in);
		char line[SMD_CTL_MAX_REQ + 1];
		memcpy(line, c->in, n);
		memmove(c->in, nl + 1, c->in_len - n - 1);
		c->in_len -= n + 1;
		if (n && line[n - 1] == '\r')
			n--;
		/* blank lines are keep-alives, not requests */
		size_t k = 0;
		while (k < n && (line[k] == ' ' || line[k] == '\t'))
			k++;
		if (k == n)
			continue;
		slot_request(s, c, line, n);
		if (c->state == SLOT_READ)
			c->deadline_us = sm_mono_us() + SMD_CTL_TIMEOUT_MS * 1000u;
	}
}

static void slot_read(struct smd_ctl_server *s, struct slot *c)
{
	size_t room = sizeof(c->in) - c->in_len;
	ssize_t r;

	if (!room) {
		slot_next(s, c);
		return;
	}
	r = read(c->fd, c->in + c->in_len, room);
	if (r < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			slot_free(c);
		return;
	}
	if (r == 0)
		c->peer_eof = 1;
	else if (!c->in_len)
		c->deadline_us = sm_mono_us() + SMD_CTL_TIMEOUT_MS * 1000u;
	c->in_len += (size_t)r;
	slot_next(s, c);
}

static void slot_write(struct smd_ctl_server *s, struct slot *c)
{
	while (c->out_off < c->out_len) {
		ssize_t w = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
		if (w < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			if (errno == EINTR)
				continue;
			slot_free(c);
			return;
		}
		c->out_off += (size_t)w;
	}
	free(c->out);
	c->out = NULL;
	c->out_len = c->out_off = 0;
	if (c->close_after) {
		slot_free(c);
		return;
	}
	c->state = SLOT_READ;
	c->deadline_us = sm_mono_us() + SMD_CTL_TIMEOUT_MS * 1000u;
	slot_next(s, c);   /* a pipelined request may already be buffered */
}

static void access_note(struct smd_ctl_server *s, const char *msg)
{
	if (s->ops->access_note)
		s->ops->access_note(s->arg, msg);
}

/*
 * The configured socket_group changed (or is seen for the first time):
 * resolve it and give the socket file that group, so its members can
 * connect (mode 0660). A group that cannot be resolved or applied is
 * reported; its members are then refused (root and smd's user still pass).
 */
static void apply_group(struct smd_ctl_server *s)
{
	char name[SMD_CTL_GROUP_MAX] = "", msg[SMD_CTL_GROUP_MAX + 160];
	gid_t gid;

	if (!s->ops->socket_group)
		return;
	s->ops->socket_group(s->arg, name, sizeof(name));
	if (!strcmp(name, s->group))
		return;
	snprintf(s->group, sizeof(s->group), "%s", name);
	s->have_gid = 0;
	if (!name[0])
		return;
	if (smd_ctl_group_gid(name, &gid)) {
		snprintf(msg, sizeof(msg), "socket_group '%s': no such group; only root and smd's user may connect",
			 name);
		access_note(s, msg);
		return;
	}
	s->have_gid = 1;
	s->gid = gid;
	if (chown(s->path, (uid_t)-1, gid) < 0) {
		snprintf(msg, sizeof(msg), "%s: cannot give the socket group '%s' (gid %u): %s", s->path, name,
			 (unsigned)gid, strerror(errno));
		access_note(s, msg);
	}
}

/* Check the peer's credentials (SO_PEERCRED); 1 when refused (answered and noted), 0 to serve it. */
static int refuse_peer(struct smd_ctl_server *s, int fd)
{
	struct ucred uc;
	socklen_t ul = sizeof(uc);
	char why[256], msg[400];

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &ul) < 0 || ul != sizeof(uc)) {
		snprintf(why, sizeof(why), "peer credentials unavailable: %s", strerror(errno));
		uc.pid = 0;
		uc.uid = (uid_t)-1;
		uc.gid = (gid_t)-1;
	} else {
		struct smd_ctl_peer p = { .pid = uc.pid, .uid = uc.uid, .gid = uc.gid };
		if (smd_ctl_peer_allowed(&p, geteuid(), s->have_gid, s->gid, s->group, why, sizeof(why)))
			return 0;
	}
	size_t n = 0;
	snprintf(msg, sizeof(msg), "permission denied: %s", why);
	char *line = smd_ctl_error_line(msg, &n);
	/* best effort, never blocking: the socket buffer takes a short line */
	if (line)
		(void)!send(fd, line, n, MSG_NOSIGNAL | MSG_DONTWAIT);
	free(line);
	snprintf(msg, sizeof(msg), "refused a control connection from uid %d pid %d: %s", (int)uc.uid,
		 (int)uc.pid, why);
	access_note(s, msg);
	return 1;
}

static void do_accept(struct smd_ctl_server *s)
{
	for (;;) {
		int fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		unsigned i;

		if (fd < 0)
			return;
		for (i = 0; i < SMD_CTL_MAX_CLIENTS; i++)
			if (s->slot[i].state == SLOT_FREE)
				break;
		if (i == SMD_CTL_MAX_CLIENTS) {
			size_t n = 0;
			char *line = smd_ctl_error_line("too many clients", &n);
			/* best effort, never blocking: the socket buffer takes a short line */
			if (line)
				(void)!send(fd, line, n, MSG_NOSIGNAL | MSG_DONTWAIT);
			free(line);
			close(fd);
			continue;
		}
		if (refuse_peer(s, fd)) {
			close(fd);
			continue;
		}
		struct slot *c = &s->slot[i];
		memset(c, 0, sizeof(*c));
		c->fd = fd;
		c->state = SLOT_READ;
		c->deadline_us = sm_mono_us() + SMD_CTL_TIMEOUT_MS * 1000u;
	}
}

int smd_ctl_server_poll(struct smd_ctl_server *s, struct pollfd *extra, unsigned n_extra, int timeout_ms)
{
	struct pollfd pf[1 + SMD_CTL_MAX_CLIENTS + 8];
	int map[SMD_CTL_MAX_CLIENTS];
	unsigned n = 0, ne = n_extra > 8 ? 8 : n_extra;
	uint64_t now = sm_mono_us(), next = 0;
	int rc;

	apply_group(s);
	for (unsigned i = 0; i < ne; i++) {
		pf[n] = extra[i];
		pf[n++].revents = 0;
	}
	pf[n].fd = s->lfd;
	pf[n].events = POLLIN;
	pf[n++].revents = 0;
	for (unsigned i = 0; i < SMD_CTL_MAX_CLIENTS; i++) {
		struct slot *c = &s->slot[i];
		map[i] = -1;
		if (c->state == SLOT_FREE)
			continue;
		if (c->deadline_us && (!next || c->deadline_us < next))
			next = c->deadline_us;
		map[i] = (int)n;
		pf[n].fd = c->fd;
		pf[n].events = c->state == SLOT_READ ? POLLIN : c->state == SLOT_WRITE ? POLLOUT : 0;
		pf[n++].revents = 0;
	}
	if (next) {
		int until = next > now ? (int)((next - now) / 1000u) + 1 : 0;
		if (timeout_ms < 0 || until < timeout_ms)
			timeout_ms = until;
	}
	rc = poll(pf, n, timeout_ms);
	if (rc < 0)
		return errno == EINTR ? 0 : -errno;
	for (unsigned i = 0; i < ne; i++)
		extra[i].revents = pf[i].revents;
	if (pf[ne].revents & POLLIN)
		do_accept(s);
	now = sm_mono_us();
	for (unsigned i = 0; i < SMD_CTL_MAX_CLIENTS; i++) {
		struct slot *c = &s->slot[i];
		short re;

		if (map[i] < 0 || c->state == SLOT_FREE)
			continue;
		re = pf[map[i]].revents;
		if (c->state == SLOT_PARKED) {
			if (re & (POLLHUP | POLLERR))
				slot_free(c);   /* gave up waiting */
			continue;
		}
		if (c->state == SLOT_READ && (re & (POLLIN | POLLHUP | POLLERR)))
			slot_read(s, c);
		else if (c->state == SLOT_WRITE && (re & (POLLOUT | POLLHUP | POLLERR)))
			slot_write(s, c);
		if (c->state != SLOT_FREE && c->state != SLOT_PARKED && c->deadline_us && now >= c->deadline_us) {
			if (c->state == SLOT_READ && c->in_len)
				slot_error(c, "request timed out", 1);
			else
				slot_free(c);
			/* a timed-out error reply gets one more deadline, then the slot is freed */
		}
	}
	return 0;
}

void smd_ctl_server_wake(struct smd_ctl_server *s, uint64_t value)
{
	if (value > s->woken)
		s->woken = value;
	for (unsigned i = 0; i < SMD_CTL_MAX_CLIENTS; i++) {
		struct slot *c = &s->slot[i];
		if (c->state == SLOT_PARKED && c->wait_for <= s->woken)
			run_handler(s, c, 1);
		/* try to send at once: most replies fit the socket buffer */
		if (c->state == SLOT_WRITE)
			slot_write(s, c);
	}
}

unsigned smd_ctl_server_clients(const struct smd_ctl_server *s)
{
	unsigned n = 0;
	for (unsigned i = 0; i < SMD_CTL_MAX_CLIENTS; i++)
		n += s->slot[i].state != SLOT_FREE;
	return n;
}

void smd_ctl_server_free(struct smd_ctl_server *s)
{
	struct stat st;

	if (!s)
		return;
	for (unsigned i = 0; i < SMD_CTL_MAX_CLIENTS; i++) {
		struct slot *c = &s->slot[i];
		if (c->state == SLOT_PARKED) {
			size_t n = 0;
			char *line = smd_ctl_error_line("daemon stopping", &n);
			if (line)
				(void)!send(c->fd, line, n, MSG_NOSIGNAL | MSG_DONTWAIT);
			free(line);
		}
		if (c->state != SLOT_FREE)
			slot_free(c);
	}
	/* unlink only our own socket: a new daemon may already have replaced it */
	if (stat(s->path, &st) == 0 && st.st_dev == s->dev && st.st_ino == s->ino)
		unlink(s->path);
	close(s->lfd);
	free(s);
}

/* ------------------------------------------------------------------ */
/* client                                                               */

struct tick {
	int every_ms;
	smd_ctl_tick_fn *fn;
	void *arg;
	uint64_t start, next;
};

static int wait_fd(int fd, short ev, uint64_t deadline, struct tick *tk)
{
	struct pollfd pf = { .fd = fd, .events = ev };
	int rc;

	for (;;) {
		uint64_t now = sm_mono_us();
		int to = -1, ticked = 0;
		if (deadline) {
			if (now >= deadline)
				return -ETIMEDOUT;
			to = (int)((deadline - now) / 1000u) + 1;
		}
		if (tk && tk->fn) {
			if (now >= tk->next) {
				tk->fn(tk->arg, (double)(now - tk->start) / 1e6);
				now = sm_mono_us();
				tk->next = now + (uint64_t)tk->every_ms * 1000u;
			}
			int tt = (int)((tk->next - now) / 1000u) + 1;
			if (to < 0 || tt < to) {
				to = tt;
				ticked = 1;
			}
		}
		do
			rc = poll(&pf, 1, to);
		while (rc < 0 && errno == EINTR);
		if (rc < 0)
			return -errno;
		if (rc)
			return 0;
		if (!ticked)
			return -ETIMEDOUT;
	}
}

/* After a failed read/write: 0 to try again (after waiting for the socket), or -errno. */
static int io_again(int fd, short ev, uint64_t deadline, struct tick *tk)
{
	if (errno == EINTR)
		return 0;
	if (errno == EAGAIN || errno == EWOULDBLOCK)
		return wait_fd(fd, ev, deadline, tk);
	return -errno;
}

int smd_ctl_call(const char *path, const char *request, int timeout_ms, char **reply, char *err,
		 size_t errlen)
{
	return smd_ctl_call_ex(path, request, timeout_ms, 0, NULL, NULL, reply, err, errlen);
}

int smd_ctl_call_ex(const char *path, const char *request, int timeout_ms, int tick_ms, smd_ctl_tick_fn *tick,
		    void *tick_arg, char **reply, char *err, size_t errlen)
{
	struct tick tk = { .every_ms = tick_ms > 0 ? tick_ms : 1000, .fn = tick, .arg = tick_arg };
	struct sockaddr_un sa;
	uint64_t deadline = timeout_ms >= 0 ? sm_mono_us() + (uint64_t)timeout_ms * 1000u : 0;
	size_t rlen = strlen(request), off = 0, cap = 0, len = 0;
	char *buf = NULL;
	int fd, rc;

	if ((rc = fill_addr(&sa, path, err, errlen)))
		return rc;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -errno;
	}
	if (timeout_ms >= 0) {
		/* a unix connect waits for room in a full backlog up to the send timeout */
		struct timeval tv = { .tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000 };
		(void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		rc = errno == EAGAIN || errno == EINPROGRESS ? -ETIMEDOUT : -errno;
		snprintf(err, errlen, "cannot connect to %s: %s (is smd running?)", path, strerror(-rc));
		close(fd);
		return rc;
	}
	if ((rc = set_nonblock(fd)))
		goto fail_msg;
	int need_nl = !rlen || request[rlen - 1] != '\n';
	while (off < rlen + (size_t)need_nl) {
		const char *p = off < rlen ? request + off : "\n";
		size_t n = off < rlen ? rlen - off : 1;
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0) {
			/* refused at accept (credentials): the daemon answered and closed; read its reply */
			if (errno == EPIPE || errno == ECONNRESET)
				break;
			if ((rc = io_again(fd, POLLOUT, deadline, NULL)))
				goto fail_msg;
			continue;
		}
		off += (size_t)w;
	}
	/* the first tick comes one interval after the request was sent */
	tk.start = sm_mono_us();
	tk.next = tk.start + (uint64_t)tk.every_ms * 1000u;
	for (;;) {
		if (len + 4096 + 1 > cap) {
			size_t ncap = cap ? cap * 2 : 8192;
			char *nb;
			if (ncap > SMD_CTL_MAX_REPLY + 8192) {
				rc = -EPROTO;
				snprintf(err, errlen, "%s: reply longer than %u bytes", path, SMD_CTL_MAX_REPLY);
				goto fail;
			}
			nb = realloc(buf, ncap);
			if (!nb) {
				rc = -ENOMEM;
				goto fail_msg;
			}
			buf = nb;
			cap = ncap;
		}
		ssize_t r = read(fd, buf + len, cap - len - 1);
		if (r < 0) {
			if ((rc = io_again(fd, POLLIN, deadline, len ? NULL : &tk)))
				goto fail_msg;
			continue;
		}
		if (r == 0) {
			rc = -EPROTO;
			snprintf(err, errlen, "%s: the daemon closed the connection without a complete reply", path);
			goto fail;
		}
		len += (size_t)r;
		buf[len] = '\0';
		char *nl = memchr(buf, '\n', len);
		if (nl) {
			*nl = '\0';
			break;
		}
	}
	close(fd);
	*reply = buf;
	return 0;
fail_msg:
	snprintf(err, errlen, "%s: %s", path, rc == -ETIMEDOUT ? "no reply in time" : strerror(-rc));
fail:
	free(buf);
	close(fd);
	return rc;
}
