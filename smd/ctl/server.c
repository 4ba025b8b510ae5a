/* SPDX-License-Identifier: MIT */
/*
 * DOC: the control socket's server side (protocol in ctl.h, framing in
 * proto.c, the client in client.c)
 *
 * Owns: the listening socket and every client connection (a fixed array of
 * SMD_CTL_MAX_CLIENTS slots, each with a bounded input buffer and one
 * pending output buffer).
 *
 * Data flow: poll -> accept (non-blocking) -> read into the slot's buffer
 * -> for each complete line: parse, handle (or park until woken) -> reply
 * appended to the slot's output -> written as the socket accepts it. While
 * a slot has a reply pending or is parked, its further input is not read,
 * so one client never holds more than one request in progress and a
 * pipelining client cannot grow our buffers.
 *
 * Admission (one peer must not lock the others out): a peer uid other than
 * root holds at most SMD_CTL_MAX_PER_UID connections, and the last
 * SMD_CTL_ROOT_SLOTS slots are root's, so an admin is served while users
 * flood. A slot whose peer hung up is freed before anyone is refused: every
 * poll round serves the connections before accepting new ones, and a full
 * table is first swept for peers that closed (recv MSG_PEEK says EOF).
 *
 * Invariants: a slot's deadline is set whenever it waits on its peer
 * (request incomplete, reply not yet taken); a parked slot has no deadline
 * (the daemon's cycle decides), but a parked peer that hangs up is freed.
 * Nothing here logs: errors go to the peer or to the caller.
 */
#include "ctl/ctl.h"
#include "ctl/ctl_priv.h"
#include "lib/clock.h"
#include "lib/json.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
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
/* server                                                               */

enum { SLOT_FREE = 0, SLOT_READ, SLOT_WRITE, SLOT_PARKED };

struct slot {
	int fd;
	int state;
	int close_after;        /* close once the output is written */
	int peer_eof;
	char *in;               /* malloc'ed, in_cap bytes: SMD_CTL_MAX_REQ + 1, more for a big request */
	size_t in_len, in_cap;
	char *out;
	size_t out_len, out_off;
	uint64_t deadline_us;   /* 0 = none */
	uid_t uid;              /* the peer's (SO_PEERCRED) */
	uint64_t recheck_us;    /* parked: resume again at this time (0 = only on a wake) */
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
	uid_t cur_uid;          /* the peer of the request in a handler, (uid_t)-1 */
	/* access (auth.c): the socket_group last applied, and its gid */
	char group[SMD_CTL_GROUP_MAX];
	int have_gid;
	gid_t gid;
	struct slot slot[SMD_CTL_MAX_CLIENTS];
};

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

	if ((rc = smd_ctl_fill_addr(&sa, path, err, errlen)))
		return rc;
	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	s->ops = ops;
	s->arg = arg;
	s->cur_uid = (uid_t)-1;
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
	free(c->in);
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
	s->cur_uid = c->uid;
	if (resume)
		rc = s->ops->resume(s->arg, c->cmd, c->req, &j, err, sizeof(err));
	else
		rc = s->ops->handle(s->arg, c->cmd, c->req, &j, &wait_for, err, sizeof(err));
	s->cur_uid = (uid_t)-1;
	if (rc == SMD_CTL_WAIT) {
		fclose(f);
		free(buf);
		if (!resume && wait_for <= s->woken) {
			run_handler(s, c, 1);
			return;
		}
		/* resume may say "not yet" (work running off the loop): ask again soon, or at the next wake */
		c->state = SLOT_PARKED;
		c->wait_for = resume ? s->woken + 1 : wait_for;
		c->recheck_us = resume ? sm_mono_us() + SMD_CTL_RECHECK_MS * 1000u : 0;
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
		nl = c->in_len ? memchr(c->in, '\n', c->in_len) : NULL;
		size_t max = smd_ctl_max_request(c->in, c->in_len);
		if (!nl) {
			if (c->in_len > max) {
				char msg[80];
				snprintf(msg, sizeof(msg), "request longer than %zu bytes", max);
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
		char small[SMD_CTL_MAX_REQ + 1], *line = n < sizeof(small) ? small : malloc(n + 1);
		if (!line) {
			slot_error(c, "out of memory", 1);
			return;
		}
		memcpy(line, c->in, n);
		memmove(c->in, nl + 1, c->in_len - n - 1);
		c->in_len -= n + 1;
		if (n && line[n - 1] == '\r')
			n--;
		/* blank lines are keep-alives, not requests */
		size_t k = 0;
		while (k < n && (line[k] == ' ' || line[k] == '\t'))
			k++;
		if (k < n)
			slot_request(s, c, line, n);
		if (line != small)
			free(line);
		if (k == n)
			continue;
		if (c->state == SLOT_READ)
			c->deadline_us = sm_mono_us() + SMD_CTL_TIMEOUT_MS * 1000u;
	}
}

static void slot_read(struct smd_ctl_server *s, struct slot *c)
{
	ssize_t r;

	/* room for one byte past the limit, so an overlong line is seen as such */
	size_t want = smd_ctl_max_request(c->in, c->in_len) + 1;
	if (c->in_cap < want && (c->in_len == c->in_cap || !c->in)) {
		size_t cap = c->in_cap ? c->in_cap * 2 : SMD_CTL_MAX_REQ + 1;
		char *p = realloc(c->in, cap < want ? cap : want);
		if (!p) {
			slot_error(c, "out of memory", 1);
			return;
		}
		c->in = p;
		c->in_cap = cap < want ? cap : want;
	}
	size_t room = c->in_cap - c->in_len;

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

/* Check the peer's credentials (SO_PEERCRED) into *uc; 1 when refused (answered and noted), 0 to serve it. */
static int refuse_peer(struct smd_ctl_server *s, int fd, struct ucred *ucp)
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
		*ucp = uc;
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

/* A slot whose peer has closed (not a half-close: that one still waits for its reply): free it now. */
static void slot_reap(struct slot *c)
{
	struct pollfd pf = { .fd = c->fd, .events = POLLIN };

	if (c->state == SLOT_FREE || c->state == SLOT_WRITE || (c->state == SLOT_READ && c->in_len))
		return;
	if (poll(&pf, 1, 0) == 1 && (pf.revents & (POLLHUP | POLLERR)))
		slot_free(c);
}

/* A free slot for a peer of this uid, or why not (NULL). */
static struct slot *slot_for(struct smd_ctl_server *s, uid_t uid, char *why, size_t whylen)
{
	for (int pass = 0; pass < 2; pass++) {
		struct slot *freeslot = NULL;
		unsigned used = 0, mine = 0;
		for (unsigned i = 0; i < SMD_CTL_MAX_CLIENTS; i++) {
			struct slot *c = &s->slot[i];
			if (pass && c->state != SLOT_FREE)
				slot_reap(c);
			if (c->state == SLOT_FREE) {
				freeslot = freeslot ? freeslot : c;
				continue;
			}
			used++;
			mine += c->uid == uid;
		}
		if (uid != 0 && mine >= SMD_CTL_MAX_PER_UID)
			snprintf(why, whylen, "too many clients of uid %u (at most %u each)", (unsigned)uid,
				 SMD_CTL_MAX_PER_UID);
		else if (uid != 0 && used >= SMD_CTL_MAX_CLIENTS - SMD_CTL_ROOT_SLOTS)
			snprintf(why, whylen, "too many clients (the last %u places are root's)", SMD_CTL_ROOT_SLOTS);
		else if (!freeslot)
			snprintf(why, whylen, "too many clients");
		else
			return freeslot;
	}
	return NULL;
}

static void do_accept(struct smd_ctl_server *s)
{
	for (;;) {
		int fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		struct ucred uc = { .pid = 0, .uid = (uid_t)-1, .gid = (gid_t)-1 };
		char why[128];

		if (fd < 0)
			return;
		if (refuse_peer(s, fd, &uc)) {
			close(fd);
			continue;
		}
		struct slot *c = slot_for(s, uc.uid, why, sizeof(why));
		if (!c) {
			size_t n = 0;
			char *line = smd_ctl_error_line(why, &n);
			/* best effort, never blocking: the socket buffer takes a short line */
			if (line)
				(void)!send(fd, line, n, MSG_NOSIGNAL | MSG_DONTWAIT);
			free(line);
			close(fd);
			continue;
		}
		memset(c, 0, sizeof(*c));
		c->fd = fd;
		c->uid = uc.uid;
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
		if (c->state == SLOT_PARKED && c->recheck_us && (!next || c->recheck_us < next))
			next = c->recheck_us;
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
			else if (c->recheck_us && now >= c->recheck_us)
				run_handler(s, c, 1);
			if (c->state != SLOT_WRITE)
				continue;
			slot_write(s, c);
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
	/* after serving the connections, so the slots of peers that hung up are free again */
	if (pf[ne].revents & POLLIN)
		do_accept(s);
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

uid_t smd_ctl_server_peer_uid(const struct smd_ctl_server *s)
{
	return s->cur_uid;
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
