/* SPDX-License-Identifier: MIT */
#ifndef SMD_CTL_HTTP_H
#define SMD_CTL_HTTP_H
/*
 * DOC: the metrics endpoint over HTTP (smd.yaml metrics_listen)
 *
 * What Prometheus scrapes: GET /metrics answers the same Prometheus text
 * as `smctl metrics` (the caller's body function writes it); GET / a line
 * pointing there; any other path 404, any other method 405. The HTTP
 * protocol itself (parsing, keep-alive, limits) is libmicrohttpd's, a
 * well-kept Debian library (libmicrohttpd12), not an HTTP parser of ours.
 *
 * It runs on the caller's event loop (lib/loop.h), not on a thread of its
 * own: libmicrohttpd's external-polling mode with epoll hands us one fd
 * (its epoll fd), watched as an io source, and a timer armed from
 * MHD_get_timeout() for its connection timeouts; both call MHD_run().
 * The body function therefore runs on the loop's thread, between the
 * loop's other callbacks.
 *
 * Limits (every peer is untrusted): at most SMD_HTTP_MAX_CONN connections,
 * SMD_HTTP_MAX_CONN_PER_IP from one address, SMD_HTTP_CONN_MEMORY bytes of
 * buffer per connection (a longer request line or header block is
 * answered with an error status and closed), and a connection idle for
 * SMD_HTTP_TIMEOUT_S seconds (a slowloris peer) is closed. Request bodies
 * are not read.
 *
 * Library code: nothing is logged; errors come back as -errno with a
 * message.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#define SMD_HTTP_MAX_CONN 16
#define SMD_HTTP_MAX_CONN_PER_IP 4
#define SMD_HTTP_CONN_MEMORY 8192
#define SMD_HTTP_TIMEOUT_S 10
#define SMD_HTTP_ADDR_MAX 64          /* "[ffff:...:ffff]:65535" and its NUL fit */
#define SMD_HTTP_PATH "/metrics"

struct sm_loop;
struct smd_http;

/*
 * Parse a listen address: "IPV4:PORT" or "[IPV6]:PORT", literal addresses
 * only (no name lookup), PORT 0-65535 (0: the kernel picks a free port).
 * 0 and *ss (may be NULL to only check), or -EINVAL with the reason.
 */
int smd_http_addr_parse(const char *s, struct sockaddr_storage *ss, char *err, size_t errlen);

/*
 * Write the body of GET /metrics to out (Prometheus text format 0.0.4).
 * 0, or -errno with a reason in err (the scraper gets 500 and the reason).
 */
typedef int smd_http_body_fn(void *arg, FILE *out, char *err, size_t errlen);

/* What the endpoint has served since it was opened (for its own metrics). */
struct smd_http_stats {
	uint64_t requests;       /* requests answered, any status */
	uint64_t metrics_ok;     /* GET /metrics answered 200 */
	uint64_t refused;        /* 404, 405 */
	uint64_t failed;         /* 500: the body could not be made */
};

/*
 * Listen on addr (smd_http_addr_parse) and serve on loop l. 0 and *out,
 * or -errno with the reason (address in use, not available...).
 */
int smd_http_open(struct sm_loop *l, const char *addr, smd_http_body_fn *body, void *arg,
		  struct smd_http **out, char *err, size_t errlen);
/* Stop listening, close every connection, take the sources off the loop. Accepts NULL. */
void smd_http_free(struct smd_http *h);

/* The address as configured, and as bound ("127.0.0.1:40123" when port 0 was asked for). */
const char *smd_http_addr(const struct smd_http *h);
const char *smd_http_bound(const struct smd_http *h);
const struct smd_http_stats *smd_http_stats(const struct smd_http *h);

#endif
