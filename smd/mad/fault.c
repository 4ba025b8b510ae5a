/* SPDX-License-Identifier: MIT */
/*
 * DOC: fault-injection transport wrapper
 *
 * Wraps any transport and silently loses every MAD sent after the first
 * `budget` ones: the wire to that plane dies mid-sweep. Used by the tests
 * and the multi-plane benchmark to show that a dying plane fails alone.
 * Everything else (receive, clock, fd) goes to the wrapped transport,
 * which the wrapper owns and closes.
 */
#include "mad/transport.h"
#include "mad/fault.h"

#include <errno.h>
#include <stdlib.h>

struct lossy {
	struct sm_transport *inner;
	unsigned long budget;
};

static int lossy_send(struct sm_transport *t, const uint8_t *mad, size_t len, uint16_t dlid,
		      unsigned to)
{
	struct lossy *d = t->priv;
	if (!d->budget)
		return 0;   /* lost on the wire */
	d->budget--;
	return sm_transport_send(d->inner, mad, len, dlid, to);
}

static int lossy_recv(struct sm_transport *t, uint8_t *buf, size_t cap, size_t *len,
		      struct sm_mad_addr *from, int timeout_ms)
{
	struct lossy *d = t->priv;
	return sm_transport_recv(d->inner, buf, cap, len, from, timeout_ms);
}

static int lossy_fd(struct sm_transport *t)
{
	struct lossy *d = t->priv;
	return sm_transport_fd(d->inner);
}

static uint64_t lossy_now(struct sm_transport *t)
{
	struct lossy *d = t->priv;
	return sm_transport_now_us(d->inner);
}

static void lossy_close(struct sm_transport *t)
{
	struct lossy *d;
	if (!t)
		return;
	d = t->priv;
	sm_transport_close(d->inner);
	free(d);
	free(t);
}

static const struct sm_transport_ops lossy_ops = {
	.size = sizeof(struct sm_transport_ops),
	.version = SM_TRANSPORT_OPS_VERSION,
	.name = "lossy",
	.send = lossy_send,
	.recv = lossy_recv,
	.fd = lossy_fd,
	.now_us = lossy_now,
	.close = lossy_close,
};

int sm_transport_lossy_wrap(struct sm_transport *inner, unsigned long budget, struct sm_transport **out)
{
	struct sm_transport *t = calloc(1, sizeof(*t));
	struct lossy *d = calloc(1, sizeof(*d));

	if (!t || !d) {
		free(t);
		free(d);
		return -ENOMEM;
	}
	d->inner = inner;
	d->budget = budget;
	t->ops = &lossy_ops;
	t->priv = d;
	t->info = inner->info;
	*out = t;
	return 0;
}
