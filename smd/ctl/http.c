/* SPDX-License-Identifier: MIT */
/*
 * DOC: the metrics endpoint over HTTP, on libmicrohttpd (http.h)
 *
 * Owns: one MHD daemon in external-polling epoll mode, the io source of
 * its epoll fd and its timeout timer on the caller's loop. Every loop
 * callback runs MHD_run() and re-arms the timer from MHD_get_timeout() (0:
 * MHD has work left that no fd will announce, run again at once).
 *
 * Why libmicrohttpd: the listener faces the network, where a hand-written
 * HTTP parser is a liability; libmicrohttpd is packaged by Debian
 * (libmicrohttpd12, security-supported), small, C, and has the external
 * polling mode an event loop needs. Its limits (connections, per-address
 * connections, per-connection memory, idle timeout) are set here, so a
 * peer that sends a huge request line or opens connections and stays
 * silent costs a bounded amount and is closed.
 *
 * The listen address is bound once here first, by us, so a refusal names
 * the real reason (address in use, not on this host, permission), which
 * MHD_start_daemon() does not tell; MHD then binds it itself.
 */
#include "ctl/http.h"
#include "lib/clock.h"
#include "lib/err.h"
#include "lib/loop.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if MHD_VERSION < 0x00097002
typedef int MHD_Result_t;        /* before 0.9.70 handlers returned int */
#else
typedef enum MHD_Result MHD_Result_t;
#endif

struct smd_http {
	struct MHD_Daemon *mhd;
	struct sm_loop_src *io, *timer;
	smd_http_body_fn *body;
	void *arg;
	char addr[SMD_HTTP_ADDR_MAX], bound[SMD_HTTP_ADDR_MAX];
	struct smd_http_stats stats;
};

int smd_http_addr_parse(const char *s, struct sockaddr_storage *ss, char *err, size_t errlen)
{
	char host[SMD_HTTP_ADDR_MAX];
	const char *port;
	struct sockaddr_storage tmp;
	unsigned long p;
	char *end;

	if (!ss)
		ss = &tmp;
	memset(ss, 0, sizeof(*ss));
	if (!s || !*s || strlen(s) >= SMD_HTTP_ADDR_MAX)
		return sm_errf_rc(-EINVAL, err, errlen, "expected ADDRESS:PORT of 1-%d characters",
				  SMD_HTTP_ADDR_MAX - 1);
	if (s[0] == '[') {
		const char *close = strchr(s, ']');
		if (!close || close[1] != ':')
			return sm_errf_rc(-EINVAL, err, errlen, "'%s': an IPv6 address is written [ADDRESS]:PORT", s);
		snprintf(host, sizeof(host), "%.*s", (int)(close - s - 1), s + 1);
		port = close + 2;
	} else {
		const char *colon = strrchr(s, ':');
		if (!colon)
			return sm_errf_rc(-EINVAL, err, errlen, "'%s': expected ADDRESS:PORT, e.g. 127.0.0.1:9684", s);
		if (strchr(s, ':') != colon)
			return sm_errf_rc(-EINVAL, err, errlen, "'%s': an IPv6 address is written [ADDRESS]:PORT", s);
		snprintf(host, sizeof(host), "%.*s", (int)(colon - s), s);
		port = colon + 1;
	}
	errno = 0;
	p = strtoul(port, &end, 10);
	if (*port < '0' || *port > '9' || *end || errno || p > 65535)
		return sm_errf_rc(-EINVAL, err, errlen, "'%s': the port must be a number 0-65535", s);
	if (s[0] == '[') {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
		if (inet_pton(AF_INET6, host, &a->sin6_addr) != 1)
			return sm_errf_rc(-EINVAL, err, errlen, "'%s': '%s' is not an IPv6 address (no names: write the address)",
					  s, host);
		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)p);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;
		if (!host[0])
			return sm_errf_rc(-EINVAL, err, errlen,
					  "'%s': write the address to listen on (0.0.0.0:%lu for every IPv4 address)", s, p);
		if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
			return sm_errf_rc(-EINVAL, err, errlen, "'%s': '%s' is not an IPv4 address (no names: write the address)",
					  s, host);
		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)p);
	}
	return 0;
}

/*
 * IPv6: MHD sets IPV6_V6ONLY; "[::]" (every address) is dual-stack, as a
 * Linux socket bound to :: is by default and as exporters' ":PORT" are.
 */
static unsigned v6_flags(const struct sockaddr_storage *ss)
{
	if (ss->ss_family != AF_INET6)
		return 0;
	return IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)ss)->sin6_addr) ? MHD_USE_DUAL_STACK :
	       MHD_USE_IPv6;
}

static socklen_t sa_len(const struct sockaddr_storage *ss)
{
	return ss->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
}

/* Can we bind it? The reason MHD_start_daemon() would not give. */
static int try_bind(const struct sockaddr_storage *ss, const char *addr, char *err, size_t errlen)
{
	int one = 1, rc = 0;
	int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return sm_errf_rc(-errno, err, errlen, "%s: socket: %s", addr, strerror(errno));
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));   /* as MHD does */
	if (bind(fd, (const struct sockaddr *)ss, sa_len(ss)) < 0) {
		rc = -errno;
		sm_errf(err, errlen, "%s: %s", addr, strerror(errno));
	}
	close(fd);
	return rc;
}

static MHD_Result_t reply(struct smd_http *h, struct MHD_Connection *c, unsigned status, const char *type,
			  char *text, size_t len)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
	MHD_Result_t ok;

	if (!r) {
		free(text);
		return MHD_NO;   /* MHD closes the connection */
	}
	(void)MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		(void)MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ok = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	h->stats.requests++;
	return ok;
}

static MHD_Result_t text_reply(struct smd_http *h, struct MHD_Connection *c, unsigned status, const char *msg)
{
	char *copy = strdup(msg);

	return copy ? reply(h, c, status, "text/plain; charset=utf-8", copy, strlen(copy)) : MHD_NO;
}

static MHD_Result_t metrics(struct smd_http *h, struct MHD_Connection *c)
{
	char *text = NULL, err[256] = "", msg[320];
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	int rc = m ? h->body(h->arg, m, err, sizeof(err)) : -ENOMEM;

	if (m && fclose(m) && !rc)
		rc = -ENOMEM;
	if (rc) {
		free(text);
		h->stats.failed++;
		snprintf(msg, sizeof(msg), "smd could not make its metrics: %s\n", err[0] ? err : strerror(-rc));
		return text_reply(h, c, MHD_HTTP_INTERNAL_SERVER_ERROR, msg);
	}
	h->stats.metrics_ok++;
	return reply(h, c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", text, len);
}

static MHD_Result_t on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
			       const char *version, const char *upload_data, size_t *upload_data_size,
			       void **con_cls)
{
	struct smd_http *h = cls;

	(void)version;
	(void)upload_data;
	(void)con_cls;
	/* a request body is never read: the answer is queued now and the connection closed after it */
	*upload_data_size = 0;
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD)) {
		h->stats.refused++;
		return text_reply(h, c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD\n");
	}
	if (!strcmp(url, SMD_HTTP_PATH))
		return metrics(h, c);
	if (!strcmp(url, "/"))
		return text_reply(h, c, MHD_HTTP_OK, "smd: the metrics are at " SMD_HTTP_PATH "\n");
	h->stats.refused++;
	return text_reply(h, c, MHD_HTTP_NOT_FOUND, "not found: the metrics are at " SMD_HTTP_PATH "\n");
}

/*
 * Let MHD do what is due, then wake up again when it says. MHD closes a
 * connection that timed out in one run (shutdown: the peer sees the end at
 * once) but frees it, and its per-address slot, only in the next run,
 * after that run's accepts: a peer that reconnects at once is refused for
 * a slot no longer used. So MHD runs again here while it says more is due
 * now (bounded: never a spin), not one loop iteration later. That shrinks
 * the window, it does not close it (strace at load 23: a Python client
 * reconnected 350 us after the shutdown, before the second run's accept);
 * only an address that had its whole per-address limit open is touched.
 */
static void pump(struct smd_http *h)
{
	MHD_UNSIGNED_LONG_LONG ms = 0;
	int more = 1;

	for (int i = 0; i < 4 && more; i++) {
		(void)MHD_run(h->mhd);
		more = MHD_get_timeout(h->mhd, &ms) == MHD_YES && ms == 0;
	}
	if (MHD_get_timeout(h->mhd, &ms) == MHD_YES)
		sm_loop_timer_set(h->timer, sm_mono_us() + (ms > 3600000u ? 3600000u : ms) * 1000u);
	else
		sm_loop_timer_set(h->timer, 0);
}

static void on_io(struct sm_loop_src *s, int fd, unsigned revents, void *arg)
{
	(void)s;
	(void)fd;
	(void)revents;
	pump(arg);
}

static void on_timer(struct sm_loop_src *s, void *arg)
{
	(void)s;
	pump(arg);
}

static void bound_text(struct smd_http *h, const struct sockaddr_storage *ss)
{
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(h->mhd, MHD_DAEMON_INFO_BIND_PORT);
	unsigned port = di ? di->port : 0;
	char host[INET6_ADDRSTRLEN] = "?";

	if (ss->ss_family == AF_INET6) {
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ss)->sin6_addr, host, sizeof(host));
		snprintf(h->bound, sizeof(h->bound), "[%s]:%u", host, port);
	} else {
		inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr, host, sizeof(host));
		snprintf(h->bound, sizeof(h->bound), "%s:%u", host, port);
	}
}

int smd_http_open(struct sm_loop *l, const char *addr, smd_http_body_fn *body, void *arg,
		  struct smd_http **out, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	struct smd_http *h;
	const union MHD_DaemonInfo *di;
	int rc;

	*out = NULL;
	if (!l || !body)
		return sm_errf_rc(-EINVAL, err, errlen, "metrics endpoint: no loop or no body function");
	if ((rc = smd_http_addr_parse(addr, &ss, err, errlen)) || (rc = try_bind(&ss, addr, err, errlen)))
		return rc;
	h = calloc(1, sizeof(*h));
	if (!h)
		return sm_errf_rc(-ENOMEM, err, errlen, "out of memory");
	h->body = body;
	h->arg = arg;
	snprintf(h->addr, sizeof(h->addr), "%s", addr);
	h->mhd = MHD_start_daemon(MHD_USE_EPOLL | v6_flags(&ss),
				  ntohs(((const struct sockaddr_in *)&ss)->sin_port), NULL, NULL, on_request, h,
				  MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
				  MHD_OPTION_CONNECTION_LIMIT, (unsigned)SMD_HTTP_MAX_CONN,
				  MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)SMD_HTTP_MAX_CONN_PER_IP,
				  MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)SMD_HTTP_CONN_MEMORY,
				  MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)SMD_HTTP_TIMEOUT_S,
				  MHD_OPTION_END);
	if (!h->mhd) {
		free(h);
		return sm_errf_rc(-EIO, err, errlen, "%s: libmicrohttpd could not start a listener there", addr);
	}
	di = MHD_get_daemon_info(h->mhd, MHD_DAEMON_INFO_EPOLL_FD);
	rc = di ? sm_loop_io_add(l, di->epoll_fd, on_io, h, &h->io) : -EIO;
	if (!rc)
		rc = sm_loop_timer_add(l, on_timer, h, &h->timer);
	if (rc) {
		smd_http_free(h);
		return sm_errf_rc(rc, err, errlen, "%s: cannot watch the listener: %s", addr, strerror(-rc));
	}
	bound_text(h, &ss);
	*out = h;
	return 0;
}

void smd_http_free(struct smd_http *h)
{
	if (!h)
		return;
	sm_loop_remove(h->io);
	sm_loop_remove(h->timer);
	if (h->mhd)
		MHD_stop_daemon(h->mhd);   /* closes the listener and every connection */
	free(h);
}

const char *smd_http_addr(const struct smd_http *h)
{
	return h ? h->addr : "";
}

const char *smd_http_bound(const struct smd_http *h)
{
	return h ? h->bound : "";
}

const struct smd_http_stats *smd_http_stats(const struct smd_http *h)
{
	static const struct smd_http_stats none;

	return h ? &h->stats : &none;
}
