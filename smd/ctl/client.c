/* SPDX-License-Identifier: MIT */
/*
 * DOC: the control socket's client side (ctl.h smd_ctl_call): one request
 * line out, one reply line back, within a deadline, with an optional
 * progress tick while a long sweep runs. Used by smctl.
 */
#include "ctl/ctl.h"
#include "ctl/ctl_priv.h"
#include "lib/clock.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

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

	if ((rc = smd_ctl_fill_addr(&sa, path, err, errlen)))
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
		if (rc == -EACCES || rc == -EPERM)
			/* the socket is there and smd may well be running: this user may not use it */
			snprintf(err, errlen, "cannot connect to %s: permission denied (the control socket is for root "
				 "and the members of smd.yaml's socket_group)", path);
		else
			snprintf(err, errlen, "cannot connect to %s: %s (is smd running?)", path, strerror(-rc));
		close(fd);
		return rc;
	}
	if ((rc = smd_ctl_set_nonblock(fd)))
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
