/* SPDX-License-Identifier: MIT */
/*
 * GSI endpoints (mad/gsi.h) where they can be tested without a simulator:
 * the mock's (smd/mock/gsi.c: hosts -> SA and back, eventfds, the limits,
 * the mock freed before its endpoint, another thread playing the hosts)
 * and sm_transport_gsi_open() on an ops struct that ends before gsi_open.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "mad/gsi.h"
#include "mock/mock.h"
#include "fixture/mock_fabric.h"

struct env {
	struct sm_fabric *f;
	struct sm_mock *m;
	struct sm_transport *t;
	struct sm_gsi *g;
};

static void up(struct env *v)
{
	char err[256];

	memset(v, 0, sizeof(*v));
	v->f = two_switch();
	assert_int_equal(sm_mock_new(v->f, NULL, &v->m, err, sizeof(err)), 0);
	assert_int_equal(sm_mock_attach(v->m, sm_mock_default_port(v->m, 0), &v->t), 0);
	assert_int_equal(sm_transport_gsi_open(v->t, 0x03, &v->g, err, sizeof(err)), 0);
}

static void down(struct env *v)
{
	sm_gsi_close(v->g);
	sm_transport_close(v->t);
	sm_mock_free(v->m);
	sm_fabric_free(v->f);
}

static int readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1;
}

static void test_round_trip(void **st)
{
	struct env v;
	uint8_t mad[256], buf[512];
	struct sm_gsi_addr from;
	size_t len;
	uint16_t lid;

	(void)st;
	up(&v);
	assert_int_equal(v.g->mgmt_class, 0x03);
	assert_int_equal(v.g->flags & SM_GSI_KERNEL_RMPP, 0);
	assert_true(sm_gsi_fd(v.g) >= 0);
	assert_false(readable(sm_gsi_fd(v.g)));
	assert_int_equal(sm_gsi_recv(v.g, buf, sizeof(buf), &len, &from), -EAGAIN);
	assert_int_equal(sm_mock_gsi_take(v.m, buf, sizeof(buf), &len, &lid), -EAGAIN);

	memset(mad, 0, sizeof(mad));
	mad[0] = 1, mad[1] = 3, mad[2] = 2, mad[3] = 1, mad[15] = 7;
	assert_int_equal(sm_mock_gsi_inject(v.m, 9, mad, sizeof(mad)), 0);
	mad[15] = 8;
	assert_int_equal(sm_mock_gsi_inject(v.m, 10, mad, sizeof(mad)), 0);
	assert_true(readable(sm_gsi_fd(v.g)));
	assert_int_equal(sm_gsi_recv(v.g, buf, sizeof(buf), &len, &from), 0);
	assert_int_equal(len, 256);
	assert_int_equal(buf[15], 7);
	assert_int_equal(from.lid, 9);
	assert_int_equal(from.qpn, 1);
	assert_int_equal(from.qkey, 0x80010000u);
	assert_true(readable(sm_gsi_fd(v.g)));
	assert_int_equal(sm_gsi_recv(v.g, buf, sizeof(buf), &len, &from), 0);
	assert_int_equal(buf[15], 8);
	assert_false(readable(sm_gsi_fd(v.g)));   /* drained: the eventfd is clear again */

	/* the SA's answers, in order; a whole message longer than a MAD too */
	int tfd = sm_mock_gsi_take_fd(v.m);
	assert_true(tfd >= 0);
	assert_false(readable(tfd));
	buf[3] = 0x81;
	assert_int_equal(sm_gsi_send(v.g, buf, 256, &from), 0);
	uint8_t *big = calloc(1, 1000);
	big[999] = 0x5a;
	assert_int_equal(sm_gsi_send(v.g, big, 1000, &from), 0);
	assert_int_equal(sm_gsi_send(v.g, big, 20, &from), -EINVAL);   /* shorter than the MAD and RMPP headers */
	assert_true(readable(tfd));
	assert_int_equal(sm_mock_gsi_take(v.m, mad, sizeof(mad), &len, &lid), 0);
	assert_int_equal(mad[3], 0x81);
	assert_int_equal(lid, 10);
	assert_int_equal(sm_mock_gsi_take(v.m, mad, sizeof(mad), &len, &lid), -EMSGSIZE);   /* kept */
	assert_int_equal(sm_mock_gsi_take(v.m, big, 1000, &len, &lid), 0);
	assert_int_equal(len, 1000);
	assert_int_equal(big[999], 0x5a);
	assert_false(readable(tfd));
	free(big);

	/* bad injections; one endpoint per port */
	assert_int_equal(sm_mock_gsi_inject(v.m, 9, mad, 10), -EINVAL);
	struct sm_gsi *g2;
	char err[128];
	assert_int_equal(sm_transport_gsi_open(v.t, 0x03, &g2, err, sizeof(err)), -EBUSY);
	down(&v);
}

static void test_queue_bound_and_gone(void **st)
{
	struct env v;
	uint8_t mad[256] = { 1, 3, 2, 1 }, buf[256];
	size_t len;
	unsigned n = 0;
	int rc;

	(void)st;
	up(&v);
	while ((rc = sm_mock_gsi_inject(v.m, 1, mad, sizeof(mad))) == 0)
		n++;
	assert_int_equal(rc, -ENOBUFS);
	assert_int_equal(n, SM_MOCK_GSI_QUEUE);
	/* the endpoint closed: the hosts find nobody */
	sm_gsi_close(v.g);
	v.g = NULL;
	assert_int_equal(sm_mock_gsi_inject(v.m, 1, mad, sizeof(mad)), -ENODEV);
	assert_int_equal(sm_mock_gsi_take(v.m, buf, sizeof(buf), &len, NULL), -ENODEV);
	/* the mock freed before an endpoint: the endpoint is detached, closing it is safe */
	char err[128];
	assert_int_equal(sm_transport_gsi_open(v.t, 0x03, &v.g, err, sizeof(err)), 0);
	sm_transport_close(v.t);
	sm_mock_free(v.m);
	sm_gsi_close(v.g);
	sm_fabric_free(v.f);
}

static void *hosts(void *arg)
{
	struct sm_mock *m = arg;
	uint8_t mad[256] = { 1, 3, 2, 1 }, buf[256];
	size_t len;
	unsigned got = 0;

	for (unsigned i = 0; i < 20000; i++) {
		mad[15] = (uint8_t)i;
		while (sm_mock_gsi_inject(m, 5, mad, sizeof(mad)) == -ENOBUFS)
			;
	}
	while (got < 20000)
		if (sm_mock_gsi_take(m, buf, sizeof(buf), &len, NULL) == 0)
			got++;
	return NULL;
}

/* Another thread plays the hosts while this one is the SA: every request answered once. */
static void test_threads(void **st)
{
	struct env v;
	pthread_t th;
	uint8_t buf[256];
	struct sm_gsi_addr from;
	size_t len;
	unsigned answered = 0;

	(void)st;
	up(&v);
	assert_int_equal(pthread_create(&th, NULL, hosts, v.m), 0);
	while (answered < 20000) {
		struct pollfd p = { .fd = sm_gsi_fd(v.g), .events = POLLIN };
		(void)poll(&p, 1, 100);
		while (sm_gsi_recv(v.g, buf, sizeof(buf), &len, &from) == 0) {
			buf[3] |= 0x80;
			assert_int_equal(sm_gsi_send(v.g, buf, len, &from), 0);
			answered++;
		}
	}
	pthread_join(th, NULL);
	down(&v);
}

/* A transport whose ops end before gsi_open (built against an older transport.h). */
static int no_send(struct sm_transport *t, const uint8_t *m, size_t l, uint16_t d, unsigned r)
{
	(void)t, (void)m, (void)l, (void)d, (void)r;
	return 0;
}

static void test_old_ops(void **st)
{
	struct sm_transport_ops ops = { .size = offsetof(struct sm_transport_ops, gsi_open), .name = "old",
					.send = no_send };
	struct sm_transport t = { .ops = &ops };
	struct sm_gsi *g = (struct sm_gsi *)&t;
	char err[128] = "";

	(void)st;
	ops.gsi_open = (void *)1;   /* beyond size: must not be looked at */
	assert_int_equal(sm_transport_gsi_open(&t, 0x03, &g, err, sizeof(err)), -EOPNOTSUPP);
	assert_null(g);
	assert_non_null(strstr(err, "old"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_queue_bound_and_gone),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_old_ops),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
