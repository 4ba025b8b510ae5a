/* SPDX-License-Identifier: MIT */
/*
 * DOC: the mock's GSI endpoints (see mock.h, "GSI")
 *
 * Owns, per endpoint, two rings of MADs (in: hosts -> SA, out: SA ->
 * hosts) under the endpoint's lock, and two eventfds that are readable
 * while a ring holds something (the SA polls `in` through the endpoint's
 * fd, a test or benchmark polls `out` through sm_mock_gsi_take_fd()). A MAD
 * of up to 256 bytes is held in its ring slot; a longer one (a whole
 * message) in its own allocation. The mock finds its endpoints in
 * m->gsi[] under m->gsi_mu, the only mock state other threads touch: the
 * emulated fabric is the sweeping thread's alone.
 *
 * Lifetime: the endpoint is freed by its close(); a mock freed first
 * detaches it (e->m = NULL, inject/take no longer find it).
 */
#include "mock/mock_priv.h"
#include "mad/gsi.h"
#include "lib/err.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

struct gmsg {
	uint16_t lid;
	uint32_t len;
	uint8_t *big;                  /* len > SM_GSI_MAD_SIZE */
	uint8_t mad[SM_GSI_MAD_SIZE];
};

struct gring {
	struct gmsg *e;
	uint32_t head, len, cap;
	int efd;
};

struct mock_gsi {
	struct sm_gsi g;               /* first */
	struct sm_mock *m;             /* NULL: the mock is gone (m->gsi_mu) */
	uint32_t port;                 /* attachment port index */
	pthread_mutex_t mu;            /* in, out */
	struct gring in, out;
};

static int ring_push(struct gring *r, uint16_t lid, const uint8_t *mad, size_t len)
{
	struct gmsg *x;

	if (r->len >= SM_MOCK_GSI_QUEUE)
		return -ENOBUFS;
	if (r->len == r->cap) {
		uint32_t nc = r->cap ? r->cap * 2 : 64;
		struct gmsg *ne = malloc((size_t)nc * sizeof(*ne));
		if (!ne)
			return -ENOMEM;
		for (uint32_t i = 0; i < r->len; i++)
			ne[i] = r->e[(r->head + i) % r->cap];
		free(r->e);
		r->e = ne;
		r->head = 0;
		r->cap = nc;
	}
	x = &r->e[(r->head + r->len) % r->cap];
	x->lid = lid;
	x->len = (uint32_t)len;
	x->big = NULL;
	if (len > SM_GSI_MAD_SIZE) {
		x->big = malloc(len);
		if (!x->big)
			return -ENOMEM;
		memcpy(x->big, mad, len);
	} else {
		memcpy(x->mad, mad, len);
	}
	if (r->len++ == 0)
		(void)!eventfd_write(r->efd, 1);
	return 0;
}

/* Copy out the oldest MAD: 0, -EAGAIN (empty), -EMSGSIZE (kept, or dropped when drop_big). */
static int ring_pop(struct gring *r, uint8_t *buf, size_t cap, size_t *len, uint16_t *lid, int drop_big)
{
	struct gmsg *x;
	eventfd_t v;
	int rc = 0;

	if (!r->len)
		return -EAGAIN;
	x = &r->e[r->head];
	if (x->len > cap) {
		if (!drop_big)
			return -EMSGSIZE;
		rc = -EMSGSIZE;
	} else {
		memcpy(buf, x->big ? x->big : x->mad, x->len);
		*len = x->len;
		if (lid)
			*lid = x->lid;
	}
	free(x->big);
	r->head = (r->head + 1) % r->cap;
	if (--r->len == 0)
		(void)eventfd_read(r->efd, &v);
	return rc;
}

static void ring_fini(struct gring *r)
{
	for (uint32_t i = 0; i < r->len; i++)
		free(r->e[(r->head + i) % r->cap].big);
	free(r->e);
	if (r->efd >= 0)
		close(r->efd);
}

static int mock_gsi_send(struct sm_gsi *g, const uint8_t *mad, size_t len, const struct sm_gsi_addr *to)
{
	struct mock_gsi *e = (struct mock_gsi *)g;
	int rc;

	if (len < SM_GSI_MIN_MSG || len > SM_GSI_MAX_MSG || !to)
		return -EINVAL;
	pthread_mutex_lock(&e->mu);
	rc = ring_push(&e->out, to->lid, mad, len);
	pthread_mutex_unlock(&e->mu);
	return rc;
}

static int mock_gsi_recv(struct sm_gsi *g, uint8_t *buf, size_t cap, size_t *len, struct sm_gsi_addr *from)
{
	struct mock_gsi *e = (struct mock_gsi *)g;
	uint16_t lid = 0;
	int rc;

	pthread_mutex_lock(&e->mu);
	rc = ring_pop(&e->in, buf, cap, len, &lid, 1);
	pthread_mutex_unlock(&e->mu);
	if (rc == 0 && from) {
		memset(from, 0, sizeof(*from));
		from->lid = lid;
		from->qpn = 1;
		from->qkey = 0x80010000u;
	}
	return rc;
}

static int mock_gsi_fd(struct sm_gsi *g)
{
	return ((struct mock_gsi *)g)->in.efd;
}

static void mock_gsi_close(struct sm_gsi *g)
{
	struct mock_gsi *e = (struct mock_gsi *)g;
	struct sm_mock *m;

	if (!e)
		return;
	/* e->m turns NULL only under the mock's lock; the mock outlives its open endpoints (mock.h) */
	pthread_mutex_lock(&e->mu);
	m = e->m;
	pthread_mutex_unlock(&e->mu);
	if (m) {
		pthread_mutex_lock(&m->gsi_mu);
		for (unsigned i = 0; i < SM_MOCK_GSI_MAX; i++)
			if (m->gsi[i] == e)
				m->gsi[i] = NULL;
		e->m = NULL;
		pthread_mutex_unlock(&m->gsi_mu);
	}
	ring_fini(&e->in);
	ring_fini(&e->out);
	pthread_mutex_destroy(&e->mu);
	free(e);
}

static const struct sm_gsi_ops mock_gsi_ops = {
	.size = sizeof(struct sm_gsi_ops),
	.version = SM_GSI_OPS_VERSION,
	.name = "mock",
	.send = mock_gsi_send,
	.recv = mock_gsi_recv,
	.fd = mock_gsi_fd,
	.close = mock_gsi_close,
};

int mock_gsi_open(struct sm_transport *t, uint8_t mgmt_class, struct sm_gsi **out, char *err, size_t errlen)
{
	struct attach *a = (struct attach *)t;
	struct sm_mock *m = a->m;
	struct mock_gsi *e;
	unsigned slot = SM_MOCK_GSI_MAX;
	int rc = 0;

	*out = NULL;
	if (!m)
		return sm_errf_rc(-ENODEV, err, errlen, "mock: the fabric is gone");
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->in.efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	e->out.efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	pthread_mutex_init(&e->mu, NULL);
	e->g.ops = &mock_gsi_ops;
	e->g.mgmt_class = mgmt_class;
	e->g.priv = e;
	e->port = a->port;
	if (e->in.efd < 0 || e->out.efd < 0) {
		rc = sm_errf_rc(-errno, err, errlen, "mock: eventfd: %s", strerror(errno));
		goto fail;
	}
	pthread_mutex_lock(&m->gsi_mu);
	for (unsigned i = 0; i < SM_MOCK_GSI_MAX; i++) {
		if (m->gsi[i] && m->gsi[i]->port == a->port)
			rc = -EBUSY;
		else if (!m->gsi[i] && slot == SM_MOCK_GSI_MAX)
			slot = i;
	}
	if (!rc && slot < SM_MOCK_GSI_MAX) {
		m->gsi[slot] = e;
		e->m = m;
	}
	pthread_mutex_unlock(&m->gsi_mu);
	if (rc || slot == SM_MOCK_GSI_MAX) {
		rc = sm_errf_rc(rc ? rc : -ENOSPC, err, errlen, "mock: %s", rc ? "the port has a GSI endpoint already" :
				"too many GSI endpoints");
		goto fail;
	}
	*out = &e->g;
	return 0;
fail:
	mock_gsi_close(&e->g);
	return rc;
}

void mock_gsi_detach_all(struct sm_mock *m)
{
	pthread_mutex_lock(&m->gsi_mu);
	for (unsigned i = 0; i < SM_MOCK_GSI_MAX; i++) {
		struct mock_gsi *e = m->gsi[i];
		if (!e)
			continue;
		pthread_mutex_lock(&e->mu);
		e->m = NULL;
		pthread_mutex_unlock(&e->mu);
		m->gsi[i] = NULL;
	}
	pthread_mutex_unlock(&m->gsi_mu);
}

/* The endpoint at port pi (UINT32_MAX: the first), locked (e->mu), or NULL. m->gsi_mu is released. */
static struct mock_gsi *find_locked(struct sm_mock *m, uint32_t pi)
{
	struct mock_gsi *e = NULL;

	pthread_mutex_lock(&m->gsi_mu);
	for (unsigned i = 0; i < SM_MOCK_GSI_MAX && !e; i++)
		if (m->gsi[i] && (pi == UINT32_MAX || m->gsi[i]->port == pi))
			e = m->gsi[i];
	if (e)
		pthread_mutex_lock(&e->mu);   /* before gsi_mu goes: close() cannot free it meanwhile */
	pthread_mutex_unlock(&m->gsi_mu);
	return e;
}

int sm_mock_gsi_inject_at(struct sm_mock *m, uint32_t pi, uint16_t from_lid, const uint8_t *mad, size_t len)
{
	struct mock_gsi *e;
	int rc;

	if (!mad || len < 24 || len > SM_GSI_MAX_MSG)
		return -EINVAL;
	e = find_locked(m, pi);
	if (!e)
		return -ENODEV;
	rc = ring_push(&e->in, from_lid, mad, len);
	pthread_mutex_unlock(&e->mu);
	return rc;
}

int sm_mock_gsi_take_at(struct sm_mock *m, uint32_t pi, uint8_t *buf, size_t cap, size_t *len,
			uint16_t *to_lid)
{
	struct mock_gsi *e = find_locked(m, pi);
	int rc;

	if (!e)
		return -ENODEV;
	rc = ring_pop(&e->out, buf, cap, len, to_lid, 0);
	pthread_mutex_unlock(&e->mu);
	return rc;
}

int sm_mock_gsi_inject(struct sm_mock *m, uint16_t from_lid, const uint8_t *mad, size_t len)
{
	return sm_mock_gsi_inject_at(m, UINT32_MAX, from_lid, mad, len);
}

int sm_mock_gsi_take(struct sm_mock *m, uint8_t *buf, size_t cap, size_t *len, uint16_t *to_lid)
{
	return sm_mock_gsi_take_at(m, UINT32_MAX, buf, cap, len, to_lid);
}

int sm_mock_gsi_take_fd(struct sm_mock *m)
{
	struct mock_gsi *e = find_locked(m, UINT32_MAX);
	int fd;

	if (!e)
		return -ENODEV;
	fd = e->out.efd;
	pthread_mutex_unlock(&e->mu);
	return fd;
}
