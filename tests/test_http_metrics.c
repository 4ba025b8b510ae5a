/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the metrics endpoint (smd/ctl/http.c) and of the SMP-loss
 * and M_Key metrics (smd/daemon/cmd_metrics.c):
 *  - listen addresses: good and bad forms;
 *  - a listener on a private loop at 127.0.0.1:0 answers GET /metrics with
 *    the body function's text, 404 another path, 500 with the reason when
 *    the body fails; freed with a connection open;
 *  - cycles summed per plane: lost = retried + timed out per attribute,
 *    light and heavy parts, dropped answers by reason, rejected by check;
 *    M_Key gauges only from full discoveries (an incremental sweep keeps
 *    them) and absent before one; counters past 2^32 rendered whole, other
 *    values with 6 digits below 10^6 and in whole units above.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "ctl/ctl.h"
#include "ctl/http.h"
#include "daemon/cmd.h"
#include "daemon/daemon_priv.h"
#include "lib/clock.h"
#include "lib/json.h"
#include "lib/loop.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void test_addr_parse(void **state)
{
	static const char *const good[] = { "127.0.0.1:9684", "0.0.0.0:0", "[::1]:9684", "[::]:65535" };
	static const char *const bad[] = { "", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:-1",
					   "127.0.0.1:9x", "localhost:9684", ":9684", "::1:9684", "[::1]", "[::1]9684",
					   "[127.0.0.1]:1", "1.2.3:4", "[zz]:1",
					   "0123456789012345678901234567890123456789012345678901234567890123:1" };
	struct sockaddr_storage ss;
	char err[200];

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		assert_int_equal(smd_http_addr_parse(good[i], &ss, err, sizeof(err)), 0);
	assert_int_equal(smd_http_addr_parse("10.1.2.3:80", &ss, err, sizeof(err)), 0);
	assert_int_equal(ss.ss_family, AF_INET);
	assert_int_equal(ntohs(((struct sockaddr_in *)&ss)->sin_port), 80);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(smd_http_addr_parse(bad[i], &ss, err, sizeof(err)), -EINVAL);
		assert_true(err[0]);
	}
	assert_int_equal(smd_http_addr_parse(NULL, NULL, err, sizeof(err)), -EINVAL);
}

static int body_fails;

static int body(void *arg, FILE *out, char *err, size_t errlen)
{
	(void)arg;
	if (body_fails) {
		snprintf(err, errlen, "no status yet");
		return -EAGAIN;
	}
	fputs("# HELP x_total X\n# TYPE x_total counter\nx_total 1\n", out);
	return 0;
}

/* One request over TCP, the loop dispatched until the answer is complete (connection closed). */
static void request(struct sm_loop *l, unsigned port, const char *req, char *resp, size_t len)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	size_t got = 0;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(write(fd, req, strlen(req)), (ssize_t)strlen(req));
	for (int64_t end = sm_mono_ms() + 5000; sm_mono_ms() < end;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		sm_loop_dispatch(l, 10);
		if (poll(&p, 1, 0) == 1) {
			ssize_t n = read(fd, resp + got, len - 1 - got);
			if (n <= 0)
				break;
			got += (size_t)n;
		}
	}
	resp[got] = '\0';
	close(fd);
}

static void test_listener(void **state)
{
	struct sm_loop *l;
	struct smd_http *h;
	char err[256] = "", resp[4096];
	unsigned port;
	int fd;

	(void)state;
	assert_int_equal(sm_loop_new(&l), 0);
	assert_int_equal(smd_http_open(l, "127.0.0.1:0", body, NULL, &h, err, sizeof(err)), 0);
	assert_int_equal(sscanf(smd_http_bound(h), "127.0.0.1:%u", &port), 1);
	assert_true(port > 0);
	assert_string_equal(smd_http_addr(h), "127.0.0.1:0");

	request(l, port, "GET /metrics HTTP/1.0\r\n\r\n", resp, sizeof(resp));
	assert_non_null(strstr(resp, "HTTP/1.0 200") ? resp : strstr(resp, "HTTP/1.1 200"));
	assert_non_null(strstr(resp, "Content-Type: text/plain; version=0.0.4; charset=utf-8"));
	assert_non_null(strstr(resp, "\r\n\r\n# HELP x_total X\n# TYPE x_total counter\nx_total 1\n"));
	request(l, port, "GET /other HTTP/1.0\r\n\r\n", resp, sizeof(resp));
	assert_non_null(strstr(resp, " 404 "));
	request(l, port, "DELETE /metrics HTTP/1.0\r\n\r\n", resp, sizeof(resp));
	assert_non_null(strstr(resp, " 405 "));
	assert_non_null(strstr(resp, "Allow: GET, HEAD"));
	body_fails = 1;
	request(l, port, "GET /metrics HTTP/1.0\r\n\r\n", resp, sizeof(resp));
	assert_non_null(strstr(resp, " 500 "));
	assert_non_null(strstr(resp, "smd could not make its metrics: no status yet"));
	body_fails = 0;
	assert_int_equal(smd_http_stats(h)->metrics_ok, 1);
	assert_int_equal(smd_http_stats(h)->failed, 1);
	assert_int_equal(smd_http_stats(h)->refused, 2);
	assert_int_equal(smd_http_stats(h)->requests, 4);

	/* the same address twice: the second is refused with the reason */
	char addr[SMD_HTTP_ADDR_MAX];
	struct smd_http *h2 = NULL;
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", port);
	assert_int_equal(smd_http_open(l, addr, body, NULL, &h2, err, sizeof(err)), -EADDRINUSE);
	assert_null(h2);
	assert_non_null(strstr(err, "Address already in use"));

	/* freed with a half-sent request open */
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(write(fd, "GET /me", 7), 7);
	sm_loop_dispatch(l, 50);
	smd_http_free(h);
	close(fd);
	smd_http_free(NULL);
	sm_loop_free(l);
}

/* The metrics text of a status, as the daemon sends and smctl renders it. */
static char *render(const struct smd_dmn_status *st)
{
	char *buf = NULL, *text = NULL, err[256];
	size_t len = 0, tlen = 0;
	FILE *m = open_memstream(&buf, &len);
	struct sm_json j;
	struct smd_jv *v;

	sm_json_init(&j, m, 0);
	sm_json_obj_begin(&j, NULL);
	sm_json_arr_begin(&j, "metrics");
	smd_dmn_metrics_more(&j, st);
	sm_json_arr_end(&j);
	sm_json_obj_end(&j);
	assert_int_equal(sm_json_finish(&j), 0);
	fclose(m);
	assert_int_equal(smd_json_parse(buf, len, &v, err, sizeof(err)), 0);
	m = open_memstream(&text, &tlen);
	assert_int_equal(smd_metrics_render(m, v, err, sizeof(err)), 0);
	fclose(m);
	smd_jv_free(v);
	free(buf);
	return text;
}

static void has(const char *text, const char *line)
{
	char want[256];

	snprintf(want, sizeof(want), "\n%s\n", line);
	if (!strstr(text, want))
		fail_msg("no line '%s' in:\n%s", line, text);
}

static void test_loss_and_mkey(void **state)
{
	struct smd_dmn_status *st = calloc(1, sizeof(*st));
	struct sm_mp_plane *p = calloc(1, sizeof(*p));
	char *text;

	(void)state;
	st->n_planes = 2;
	p->light_ran = 1;
	p->light.txn.attr[SM_TXN_A_SWITCH_INFO].retried = 2;
	p->light.txn.attr[SM_TXN_A_SWITCH_INFO].timed_out = 1;
	p->light.txn.send_errors = 1;
	p->heavy = 1;
	p->sum.txn.attr[SM_TXN_A_NODE_INFO].retried = 3;
	p->sum.txn.attr[SM_TXN_A_NODE_INFO].timed_out = 1;
	p->sum.txn.late = 2;
	p->sum.txn.rejected[SM_CHK_ATTR] = 1;
	p->sum.txn.send_errors = 3000000000u;
	p->sum.counts.switches = 2;
	p->sum.mkey_foreign = 3;
	p->sum.mkey_violations = 7;
	dmn_metrics_cycle(&st->planes[0], p);
	dmn_metrics_cycle(&st->planes[0], p);
	/* an incremental sweep read only some ports: the M_Key gauges stay */
	p->sum.incremental = 1;
	p->sum.mkey_foreign = 0;
	p->sum.mkey_violations = 0;
	dmn_metrics_cycle(&st->planes[0], p);
	/* plane 1: a light sweep only, never a full discovery */
	p->heavy = 0;
	dmn_metrics_cycle(&st->planes[1], p);

	text = render(st);
	has(text, "smd_smps_lost_total{plane=\"plane0\",attribute=\"NodeInfo\"} 12");
	has(text, "smd_smps_retried_total{plane=\"plane0\",attribute=\"NodeInfo\"} 9");
	has(text, "smd_smps_timed_out_total{plane=\"plane0\",attribute=\"NodeInfo\"} 3");
	has(text, "smd_smps_lost_total{plane=\"plane0\",attribute=\"SwitchInfo\"} 9");
	has(text, "smd_smps_lost_total{plane=\"plane1\",attribute=\"SwitchInfo\"} 3");
	has(text, "smd_smps_lost_total{plane=\"plane1\",attribute=\"NodeInfo\"} 0");
	has(text, "smd_smp_send_errors_total{plane=\"plane0\"} 9000000003");
	has(text, "smd_smp_answers_dropped_total{plane=\"plane0\",reason=\"late\"} 6");
	has(text, "smd_smp_answers_rejected_total{plane=\"plane0\",check=\"attr\"} 3");
	has(text, "# TYPE smd_mkey_foreign_ports gauge");
	has(text, "smd_mkey_foreign_ports{plane=\"plane0\"} 3");
	has(text, "smd_mkey_violations{plane=\"plane0\"} 7");
	assert_null(strstr(text, "smd_mkey_foreign_ports{plane=\"plane1\"}"));
	assert_null(strstr(text, "smd_mkey_violations{plane=\"plane1\"}"));
	free(text);

	/* non-integral values: 6 digits below 10^6, whole seconds above */
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	struct sm_json j;
	sm_json_init(&j, m, 0);
	sm_json_obj_begin(&j, NULL);
	smd_metric_value(&j, 1.25);
	smd_metric_value(&j, 1234567.8);
	sm_json_obj_end(&j);
	fclose(m);
	assert_string_equal(buf, "{\"value\":1.25,\"value\":1234568}");
	free(buf);
	free(p);
	free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_addr_parse),
		cmocka_unit_test(test_listener),
		cmocka_unit_test(test_loss_and_mkey),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
