/* SPDX-License-Identifier: MIT */
/*
 * The SA server (smd/sa/server.h) end to end over an in-process GSI of our
 * own (struct sm_gsi_ops below: a queue in, a list of what was sent, a
 * send that can say -EAGAIN): Get and its errors (class version,
 * attribute, method, truncated, responses and garbage dropped and
 * counted); ServiceRecord Set then GetTable through RMPP (the test is the
 * client: it ACKs and reassembles with rmpp.h) and with kernel RMPP (one
 * whole message); a 0-record GetTable as one RMPP segment; a GetMulti
 * reassembled; out-of-sequence segments; sends that say -EAGAIN retried
 * from the timer; fair share (a flooder gets BUSY beyond its share and a
 * quiet host is answered in the first round); Reports 64/65 from snapshot
 * diffs, acked by one subscriber and given up (and unsubscribed) for one
 * that never answers; a trap 128 handed in by sm_sa_notice; traps 66/67
 * and the multicast sets handed on (a group created, a port gone); a table
 * of more than 4,096 records built off the loop. Leases and the
 * handlers' rules with an injected clock straight through sm_sa_query.
 * Everything runs under ASan in CI: no leak on any path.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/loop.h"
#include "mad/gsi.h"
#include "model/fabric.h"
#include "sa/dyn.h"
#include "sa/records.h"
#include "sa/rmpp.h"
#include "sa/sa_mad.h"
#include "sa/server.h"
#include "sm/snapshot.h"
#include "sm/mcast.h"
#include "model/partitions.h"

/* ---- a fake GSI ---- */

#define FQ 4096
struct fmad {
	uint8_t *mad;
	size_t len;
	struct sm_gsi_addr addr;
};
struct fake {
	struct fmad in[FQ];
	unsigned in_head, in_n;
	struct fmad *out;
	size_t out_n, out_cap;
	int eagain;        /* the next sends that say -EAGAIN */
};

static int f_send(struct sm_gsi *g, const uint8_t *mad, size_t len, const struct sm_gsi_addr *to)
{
	struct fake *f = g->priv;

	if (f->eagain > 0) {
		f->eagain--;
		return -EAGAIN;
	}
	if (f->out_n == f->out_cap) {
		f->out_cap = f->out_cap ? f->out_cap * 2 : 64;
		f->out = realloc(f->out, f->out_cap * sizeof(*f->out));
		assert_non_null(f->out);
	}
	f->out[f->out_n].mad = malloc(len);
	memcpy(f->out[f->out_n].mad, mad, len);
	f->out[f->out_n].len = len;
	f->out[f->out_n].addr = *to;
	f->out_n++;
	return 0;
}

static int f_recv(struct sm_gsi *g, uint8_t *buf, size_t cap, size_t *len, struct sm_gsi_addr *from)
{
	struct fake *f = g->priv;
	struct fmad *m;

	if (!f->in_n)
		return -EAGAIN;
	m = &f->in[f->in_head];
	f->in_head = (f->in_head + 1) % FQ;
	f->in_n--;
	if (m->len > cap) {
		free(m->mad);
		return -EMSGSIZE;
	}
	memcpy(buf, m->mad, m->len);
	*len = m->len;
	*from = m->addr;
	free(m->mad);
	return 0;
}

static void f_close(struct sm_gsi *g)
{
	free(g);
}

static const struct sm_gsi_ops fake_ops = {
	.size = sizeof(struct sm_gsi_ops), .version = SM_GSI_OPS_VERSION, .name = "fake",
	.send = f_send, .recv = f_recv, .close = f_close,
};

static void inject(struct fake *f, const uint8_t *mad, size_t len, uint16_t lid)
{
	struct fmad *m = &f->in[(f->in_head + f->in_n) % FQ];

	assert_true(f->in_n < FQ);
	m->mad = malloc(len);
	memcpy(m->mad, mad, len);
	m->len = len;
	memset(&m->addr, 0, sizeof(m->addr));
	m->addr.lid = lid;
	m->addr.qpn = 1;
	m->addr.qkey = SM_SA_QKEY;
	f->in_n++;
}

static void out_clear(struct fake *f)
{
	for (size_t i = 0; i < f->out_n; i++)
		free(f->out[i].mad);
	f->out_n = 0;
}

/* ---- fixture: a loop, an SA on the fake, a snapshot ---- */

struct fx {
	struct sm_loop *l;
	struct sm_sa *sa;
	struct fake f;
};

/* Multicast for the next fx_up (test_multicast): who is told of changes. */
static struct {
	void (*fn)(void *arg, struct sm_sa *sa);
	void *arg;
} fx_mc;

static void fx_up(struct fx *x, unsigned flags, unsigned report_ms)
{
	struct sm_gsi *g = calloc(1, sizeof(*g));
	struct sm_sa_cfg cfg = {
		.plane = 0, .self = { .port_guid = 0x11, .sm_key = 0x5eC, .state = 3, .priority = 1 },
		.report_timeout_ms = report_ms, .report_retries = 2, .rmpp_timeout_ms = 5, .rmpp_retries = 2,
		.mc_changed = fx_mc.fn, .mc_arg = fx_mc.arg,
	};
	char err[256];

	memset(x, 0, sizeof(*x));
	g->ops = &fake_ops;
	g->flags = flags;
	g->mgmt_class = SM_CLASS_SA;
	g->priv = &x->f;
	assert_int_equal(sm_loop_new(&x->l), 0);
	assert_int_equal(sm_sa_new(&cfg, g, x->l, &x->sa, err, sizeof(err)), 0);
}

static void fx_down(struct fx *x)
{
	sm_sa_free(x->sa);
	sm_loop_free(x->l);
	out_clear(&x->f);
	free(x->f.out);
	while (x->f.in_n) {
		free(x->f.in[x->f.in_head].mad);
		x->f.in_head = (x->f.in_head + 1) % FQ;
		x->f.in_n--;
	}
}

/* Run the loop until the fake's input is drained and ms have passed. */
static void spin(struct fx *x, unsigned ms)
{
	uint64_t end = sm_mono_us() + ms * 1000u;

	do
		sm_loop_dispatch(x->l, 1);
	while (x->f.in_n || sm_mono_us() < end);
}

/* Run the loop until n answers in all were sent (at most 10 s). */
static void spin_answered(struct fx *x, uint64_t n)
{
	struct sm_sa_stats s;
	uint64_t end = sm_mono_us() + 10000000u;

	do {
		sm_loop_dispatch(x->l, 1);
		sm_sa_stats(x->sa, &s);
	} while (s.answered < n && sm_mono_us() < end);
}

/* Run the loop until n MADs were sent (at most 10 s). */
static void spin_out(struct fx *x, size_t n)
{
	uint64_t end = sm_mono_us() + 10000000u;

	while (x->f.out_n < n && sm_mono_us() < end)
		sm_loop_dispatch(x->l, 1);
}

/* A one-port CA of node GUID guid (port GUID guid + 1) at lid, active: its node index. */
static uint32_t add_ca(struct sm_fabric *f, uint64_t guid, uint16_t lid)
{
	int64_t ca = sm_fabric_add_node(f, SM_NODE_CA, guid, 1, 0, 0);

	assert_true(ca >= 0);
	assert_int_equal(sm_fabric_set_port_guid(f, (uint32_t)ca, 1, guid + 1), 0);
	assert_int_equal(sm_fabric_set_lid(f, (uint32_t)ca, 1, lid, 0), 0);
	sm_fabric_port_checked(f, (uint32_t)ca, 1)->state = SM_PORT_ACTIVE;
	return (uint32_t)ca;
}

/* f's snapshot, answering as the master at sm_lid. */
static const struct sm_snapshot *snap_of(struct sm_fabric *f, uint16_t sm_lid)
{
	struct sm_snapshot *s = sm_snapshot_new(0, f, NULL);

	assert_non_null(s);
	s->sm_lid = sm_lid;
	s->subnet_prefix = 0xfe80000000000000ull;
	s->up = true;
	return s;
}

/* A fabric: switch 0x100, CAs 0x10 (LID 5), 0x20 (LID 6), and 0x30 (LID 7) unless without_30. */
static const struct sm_snapshot *snap_make(bool without_30)
{
	struct sm_fabric *f = sm_fabric_new();
	int64_t sw;
	uint64_t guids[] = { 0x10, 0x20, 0x30 };

	assert_non_null(f);
	sw = sm_fabric_add_node(f, SM_NODE_SWITCH, 0x100, 8, 0, 0);
	assert_true(sw >= 0);
	assert_int_equal(sm_fabric_set_lid(f, (uint32_t)sw, 0, 1, 0), 0);
	for (unsigned i = 0; i < (without_30 ? 2u : 3u); i++) {
		uint32_t ca = add_ca(f, guids[i], (uint16_t)(5 + i));
		assert_int_equal(sm_fabric_link(f, (uint32_t)sw, i + 1, ca, 1), 0);
	}
	return snap_of(f, 5);
}

static void publish(struct fx *x, bool without_30)
{
	const struct sm_snapshot *s = snap_make(without_30);

	sm_sa_publish(x->sa, s);
	sm_snapshot_unref(s);
	spin(x, 0);
}

/* ---- building requests ---- */

static void req(uint8_t mad[SM_SA_MAD_SIZE], uint8_t method, uint16_t attr, uint64_t tid, uint64_t cm)
{
	struct sm_sa_hdr h = {
		.base_version = 1, .mgmt_class = SM_CLASS_SA, .class_version = SM_SA_CLASS_VERSION,
		.method = method, .tid = tid, .attr_id = attr, .comp_mask = cm,
	};
	memset(mad, 0, SM_SA_MAD_SIZE);
	sm_sa_hdr_encode(&h, mad);
}

static struct sm_sa_hdr out_hdr(struct fx *x, size_t i)
{
	struct sm_sa_hdr h;

	assert_true(i < x->f.out_n);
	assert_int_equal(sm_sa_hdr_decode(x->f.out[i].mad, x->f.out[i].len, &h), 0);
	return h;
}

static uint64_t stat_status(const struct sm_sa_stats *st, uint16_t status)
{
	for (size_t i = 0; i < sizeof(st->by_status) / sizeof(st->by_status[0]); i++)
		if (st->by_status[i].n && st->by_status[i].status == status)
			return st->by_status[i].n;
	return 0;
}

/* A ServiceRecord: ID id, GID of port 0x11, name. */
static void service_rec(uint8_t *d, uint64_t id, uint32_t lease)
{
	memset(d, 0, SM_SA_DATA_SIZE);
	sm_sa_put64(d, id);
	sm_sa_gid_make(d + 8, 0xfe80000000000000ull, 0x11);
	sm_sa_put16(d + 24, 0xFFFF);
	sm_sa_put32(d + 28, lease);
	memset(d + 32, 0xAB, 16);   /* ServiceKey */
	snprintf((char *)d + 48, 64, "svc-%llu", (unsigned long long)id);
}

/* ---- tests ---- */

static void test_get_and_errors(void **st)
{
	struct fx x;
	uint8_t mad[SM_SA_MAD_SIZE];
	struct sm_sa_stats s;

	(void)st;
	fx_up(&x, 0, 0);
	req(mad, SM_SA_GET, SM_SA_ATTR_CLASS_PORT_INFO, 1, 0);
	inject(&x.f, mad, sizeof(mad), 9);
	req(mad, SM_SA_GET, SM_SA_ATTR_CLASS_PORT_INFO, 2, 0);
	mad[2] = 1;                                           /* class version 1 */
	inject(&x.f, mad, sizeof(mad), 9);
	req(mad, SM_SA_GET, 0x7777, 3, 0);                    /* no such attribute */
	inject(&x.f, mad, sizeof(mad), 9);
	req(mad, 0x13, SM_SA_ATTR_NODE_RECORD, 4, 0);         /* GetTraceTable */
	inject(&x.f, mad, sizeof(mad), 9);
	req(mad, SM_SA_GET, SM_SA_ATTR_NODE_RECORD, 5, 0);    /* truncated */
	inject(&x.f, mad, 100, 9);
	req(mad, SM_SA_GET_RESP, SM_SA_ATTR_NODE_RECORD, 6, 0);   /* a response: dropped */
	inject(&x.f, mad, sizeof(mad), 9);
	mad[1] = 0x04;                                        /* not the SA class: dropped */
	inject(&x.f, mad, sizeof(mad), 9);
	inject(&x.f, mad, 20, 9);                             /* shorter than a header: dropped */
	spin(&x, 5);
	assert_int_equal(x.f.out_n, 5);
	static const uint16_t want[] = { SM_SA_STATUS_OK, SM_SA_STATUS_BAD_VERSION, SM_SA_STATUS_METHOD_ATTR_UNSUPP,
					 SM_SA_STATUS_METHOD_UNSUPP, SM_SA_STATUS_REQ_INVALID };
	for (size_t i = 0; i < 5; i++) {
		struct sm_sa_hdr h = out_hdr(&x, i);

		/* the truncated one is answered as it is read, the others from the requester's queue */
		assert_true(h.tid >= 1 && h.tid <= 5);
		assert_int_equal(h.status, want[h.tid - 1]);
		assert_int_equal(h.sm_key, 0);
		assert_int_equal(x.f.out[i].addr.lid, 9);
	}
	assert_int_equal(out_hdr(&x, 1).tid, 1);
	assert_int_equal(out_hdr(&x, 1).method, SM_SA_GET_RESP);
	assert_int_equal(out_hdr(&x, 1).attr_offset, 72 / 8);
	sm_sa_stats(x.sa, &s);
	assert_int_equal(s.received, 8);
	assert_int_equal(s.answered, 5);
	assert_int_equal(s.dropped, 3);
	assert_int_equal(stat_status(&s, SM_SA_STATUS_OK), 1);
	assert_true(s.cpu_ns > 0);
	fx_down(&x);
}

/* Register n services from LID 6 and drain the answers. */
static void register_services(struct fx *x, unsigned n)
{
	uint8_t mad[SM_SA_MAD_SIZE];

	for (unsigned i = 0; i < n; i++) {
		req(mad, SM_SA_SET, SM_SA_ATTR_SERVICE_RECORD, 100 + i, 0x1F);   /* ID, GID, P_Key, lease */
		service_rec(mad + SM_SA_HDR_SIZE, 1000 + i, SM_SA_LEASE_INFINITE);
		inject(&x->f, mad, sizeof(mad), 6);
	}
	spin(x, 0);
	for (size_t i = 0; i < n; i++) {
		struct sm_sa_hdr h = out_hdr(x, i);

		assert_int_equal(h.status, 0);
		assert_int_equal(h.method, SM_SA_GET_RESP);
		/* ServiceKey not given back to an untrusted requester */
		for (int k = 0; k < 16; k++)
			assert_int_equal(x->f.out[i].mad[SM_SA_HDR_SIZE + 32 + k], 0);
	}
	out_clear(&x->f);
}

static void test_gettable_rmpp(void **st)
{
	struct fx x;
	uint8_t mad[SM_SA_MAD_SIZE], ack[SM_SA_MAD_SIZE];
	struct sm_rmpp_recv r;
	struct sm_sa_stats s;
	bool sent;

	(void)st;
	fx_up(&x, 0, 0);
	publish(&x, false);
	/* 0 records: one segment, FIRST|LAST, PayloadLength 20, attr_offset 0 */
	req(mad, SM_SA_GET_TABLE, SM_SA_ATTR_SERVICE_RECORD, 50, 0);
	inject(&x.f, mad, sizeof(mad), 9);
	spin(&x, 0);
	assert_int_equal(x.f.out_n, 1);
	struct sm_sa_hdr h = out_hdr(&x, 0);

	assert_int_equal(h.method, SM_SA_GET_TABLE_RESP);
	assert_int_equal(h.status, 0);
	assert_int_equal(h.attr_offset, 0);
	assert_int_equal(h.rmpp_type, SM_RMPP_TYPE_DATA);
	assert_int_equal(h.rmpp_flags, SM_RMPP_FLAG_ACTIVE | SM_RMPP_FLAG_FIRST | SM_RMPP_FLAG_LAST);
	assert_int_equal(h.rmpp_data2, 20);
	out_clear(&x.f);

	register_services(&x, 10);
	req(mad, SM_SA_GET_TABLE, SM_SA_ATTR_SERVICE_RECORD, 51, 0);
	inject(&x.f, mad, sizeof(mad), 9);
	spin(&x, 0);
	/* the client: reassemble, ACK each window back */
	sm_rmpp_recv_init(&r, 1 << 20, 4, 1000000, 0);
	enum sm_rmpp_act a = SM_RMPP_IDLE;

	for (int round = 0; round < 100 && a != SM_RMPP_DONE; round++) {
		for (size_t i = 0; i < x.f.out_n && a != SM_RMPP_DONE; i++) {
			h = out_hdr(&x, i);
			assert_int_equal(h.attr_offset, SM_SA_SERVICE_REC_SIZE / 8);
			a = sm_rmpp_recv_input(&r, &h, x.f.out[i].mad, x.f.out[i].len, 0, ack, &sent);
			if (sent)
				inject(&x.f, ack, sizeof(ack), 9);
		}
		out_clear(&x.f);
		spin(&x, 1);
	}
	assert_int_equal(a, SM_RMPP_DONE);
	assert_int_equal(r.len, 10 * SM_SA_SERVICE_REC_SIZE);
	for (int i = 0; i < 10; i++)
		assert_int_equal(sm_sa_get64(r.buf + i * SM_SA_SERVICE_REC_SIZE) - 1000 < 10, 1);
	sm_rmpp_recv_free(&r);
	spin(&x, 2);
	sm_sa_stats(x.sa, &s);
	assert_int_equal(s.rmpp_sent, 1);
	assert_int_equal(s.rmpp_aborted, 0);

	/* a client that never ACKs: resent, then ABORTed (TMR) */
	out_clear(&x.f);
	req(mad, SM_SA_GET_TABLE, SM_SA_ATTR_SERVICE_RECORD, 52, 0);
	inject(&x.f, mad, sizeof(mad), 9);
	spin_out(&x, 4);
	spin(&x, 20);
	assert_int_equal(x.f.out_n, 4);   /* segment 1 three times, then the ABORT */
	h = out_hdr(&x, 3);
	assert_int_equal(h.rmpp_type, SM_RMPP_TYPE_ABORT);
	assert_int_equal(h.rmpp_status, SM_RMPP_STATUS_TMR);
	sm_sa_stats(x.sa, &s);
	assert_int_equal(s.rmpp_aborted, 1);

	/* 64 transfers at once at most: the 65th GetTable is NO_RESOURCES, answered in one MAD */
	out_clear(&x.f);
	for (unsigned i = 0; i < 65; i++) {
		req(mad, SM_SA_GET_TABLE, SM_SA_ATTR_SERVICE_RECORD, 300 + i, 0);
		inject(&x.f, mad, sizeof(mad), (uint16_t)(20 + i));
	}
	spin_answered(&x, s.answered + 65);
	size_t busy = 0;

	for (size_t i = 0; i < x.f.out_n; i++) {
		h = out_hdr(&x, i);
		if (h.status == SM_SA_STATUS_NO_RESOURCES) {
			assert_int_equal(h.rmpp_type, 0);
			busy++;
		}
	}
	assert_int_equal(busy, 1);
	fx_down(&x);
}

static void test_kernel_rmpp_and_eagain(void **st)
{
	struct fx x;
	uint8_t mad[SM_SA_MAD_SIZE];
	struct sm_sa_stats s;

	(void)st;
	fx_up(&x, SM_GSI_KERNEL_RMPP, 0);
	publish(&x, false);
	register_services(&x, 3);
	x.f.eagain = 3;   /* the answer waits in the retry queue, sent from the timer */
	req(mad, SM_SA_GET_TABLE, SM_SA_ATTR_SERVICE_RECORD, 60, 0);
	inject(&x.f, mad, sizeof(mad), 9);
	spin_out(&x, 1);
	assert_int_equal(x.f.out_n, 1);
	assert_int_equal(x.f.out[0].len, SM_SA_HDR_SIZE + 3 * SM_SA_SERVICE_REC_SIZE);
	struct sm_sa_hdr h = out_hdr(&x, 0);

	assert_int_equal(h.rmpp_flags & SM_RMPP_FLAG_ACTIVE, SM_RMPP_FLAG_ACTIVE);
	assert_int_equal(h.method, SM_SA_GET_TABLE_RESP);
	sm_sa_stats(x.sa, &s);
	assert_true(s.send_retried >= 1);
	/* a whole message larger than the bound: dropped and counted */
	uint8_t *big = calloc(1, 40000);

	req(big, SM_SA_GET_MULTI, SM_SA_ATTR_MULTIPATH_RECORD, 61, 0);
	inject(&x.f, big, 40000, 9);
	free(big);
	spin(&x, 0);
	sm_sa_stats(x.sa, &s);
	assert_true(s.dropped >= 1);
	fx_down(&x);
}

static void test_rmpp_request_hostile(void **st)
{
	struct fx x;
	uint8_t mad[SM_SA_MAD_SIZE];
	struct sm_sa_hdr h;
	struct sm_sa_stats s;

	(void)st;
	fx_up(&x, 0, 0);
	publish(&x, false);
	/* segment 2 of nothing: dropped */
	h = (struct sm_sa_hdr){ .base_version = 1, .mgmt_class = 3, .class_version = 2, .method = SM_SA_GET_MULTI,
				.tid = 70, .attr_id = SM_SA_ATTR_MULTIPATH_RECORD, .rmpp_version = 1,
				.rmpp_type = SM_RMPP_TYPE_DATA, .rmpp_flags = SM_RMPP_FLAG_ACTIVE, .rmpp_data1 = 2 };
	memset(mad, 0, sizeof(mad));
	sm_sa_hdr_encode(&h, mad);
	inject(&x.f, mad, sizeof(mad), 9);
	/* a two-segment GetMulti: first, then 3 (out of order: dropped), then 2 LAST */
	h.tid = 71;
	h.rmpp_data1 = 1;
	h.rmpp_flags = SM_RMPP_FLAG_ACTIVE | SM_RMPP_FLAG_FIRST;
	h.rmpp_data2 = 2 * 220;
	sm_sa_hdr_encode(&h, mad);
	inject(&x.f, mad, sizeof(mad), 9);
	h.rmpp_data1 = 3;
	h.rmpp_flags = SM_RMPP_FLAG_ACTIVE;
	h.rmpp_data2 = 0;
	sm_sa_hdr_encode(&h, mad);
	inject(&x.f, mad, sizeof(mad), 9);
	h.rmpp_data1 = 2;
	h.rmpp_flags = SM_RMPP_FLAG_ACTIVE | SM_RMPP_FLAG_LAST;
	h.rmpp_data2 = 220;
	sm_sa_hdr_encode(&h, mad);
	inject(&x.f, mad, sizeof(mad), 9);
	spin(&x, 2);
	sm_sa_stats(x.sa, &s);
	assert_int_equal(s.rmpp_received, 1);
	/* ACK of segment 1, ACK of 2 (last), and an answer to the GetMulti */
	bool answered = false;

	for (size_t i = 0; i < x.f.out_n; i++) {
		h = out_hdr(&x, i);
		if (h.rmpp_type == SM_RMPP_TYPE_ACK)
			assert_int_equal(h.method, SM_SA_GET_MULTI_RESP);
		else if (h.tid == 71)
			answered = true;
	}
	assert_true(answered);
	assert_true(s.dropped >= 1);
	fx_down(&x);
}

static void test_fair_share(void **st)
{
	struct fx x;
	uint8_t mad[SM_SA_MAD_SIZE];
	struct sm_sa_stats s;

	(void)st;
	fx_up(&x, 0, 0);
	publish(&x, false);
	/* a burst with no contention: all answered, the quiet host in the first round */
	for (unsigned i = 0; i < 200; i++) {
		req(mad, SM_SA_GET, SM_SA_ATTR_CLASS_PORT_INFO, 1000 + i, 0);
		inject(&x.f, mad, sizeof(mad), 9);
	}
	req(mad, SM_SA_GET, SM_SA_ATTR_CLASS_PORT_INFO, 7, 0);
	inject(&x.f, mad, sizeof(mad), 10);
	spin_answered(&x, 201);
	sm_sa_stats(x.sa, &s);
	assert_int_equal(s.over_share, 0);
	assert_int_equal(s.answered, 201);
	assert_int_equal(x.f.out[1].addr.lid, 10);
	out_clear(&x.f);
	/* a flood: the excess is BUSY, the quiet host (behind 2,500 of it) answered OK long before the backlog */
	for (unsigned i = 0; i < 4000; i++) {
		req(mad, SM_SA_GET, SM_SA_ATTR_CLASS_PORT_INFO, 10000 + i, 0);
		inject(&x.f, mad, sizeof(mad), i == 2500 ? 10 : 9);
	}
	spin_answered(&x, 201 + 4000);
	sm_sa_stats(x.sa, &s);
	assert_int_equal(s.answered, 201 + 4000);
	assert_true(s.over_share > 0);
	assert_int_equal(stat_status(&s, SM_SA_STATUS_BUSY), s.over_share);
	size_t quiet = 0, ok_after = 0;

	for (size_t i = 0; i < x.f.out_n; i++) {
		struct sm_sa_hdr h = out_hdr(&x, i);

		if (x.f.out[i].addr.lid == 10) {
			assert_int_equal(h.status, SM_SA_STATUS_OK);
			quiet = i + 1;
		} else if (quiet && h.status == SM_SA_STATUS_OK) {
			ok_after++;
		}
	}
	assert_true(quiet);
	assert_true(ok_after >= 500);   /* it did not wait for the flooder's queue */
	fx_down(&x);
}

static void subscribe(struct fx *x, uint16_t lid, uint16_t trap)
{
	uint8_t mad[SM_SA_MAD_SIZE], *d = mad + SM_SA_HDR_SIZE;

	req(mad, SM_SA_SET, SM_SA_ATTR_INFORM_INFO, 200 + lid, 0);
	sm_sa_put16(d + 16, 0xFFFF);   /* every LID */
	d[22] = 1;                     /* generic */
	d[23] = 1;                     /* subscribe */
	sm_sa_put16(d + 24, 0xFFFF);
	sm_sa_put16(d + 26, trap);
	sm_sa_put32(d + 32, 0xFFFFFF);
	inject(&x->f, mad, sizeof(mad), lid);
	spin(x, 0);
	assert_int_equal(out_hdr(x, x->f.out_n - 1).status, 0);
	out_clear(&x->f);
}

static void test_reports(void **st)
{
	struct fx x;
	uint8_t mad[SM_SA_MAD_SIZE];
	struct sm_sa_stats s;

	(void)st;
	fx_up(&x, 0, 30);
	publish(&x, false);
	subscribe(&x, 5, SM_TRAP_GID_OUT);   /* answers its Reports */
	subscribe(&x, 6, 0xFFFF);            /* never answers */
	assert_int_equal(sm_sa_dyn_subs(sm_sa_dyn(x.sa)), 2);
	publish(&x, true);                   /* 0x31 leaves: trap 65 to both */
	assert_int_equal(x.f.out_n, 2);
	for (size_t i = 0; i < 2; i++) {
		struct sm_sa_hdr h = out_hdr(&x, i);
		const uint8_t *n = x.f.out[i].mad + SM_SA_HDR_SIZE;

		assert_int_equal(h.method, SM_SA_REPORT);
		assert_int_equal(h.attr_id, SM_SA_ATTR_NOTICE);
		assert_int_equal(sm_sa_get16(n + 4), SM_TRAP_GID_OUT);
		assert_int_equal(sm_sa_get64(n + 16 + 8), 0x31);   /* the GID in DataDetails */
		if (x.f.out[i].addr.lid == 5) {
			req(mad, SM_SA_REPORT_RESP, SM_SA_ATTR_NOTICE, h.tid, 0);
			inject(&x.f, mad, sizeof(mad), 5);
		}
	}
	spin(&x, 100);   /* LID 6: 2 retries of 30 ms, then given up */
	for (uint64_t end = sm_mono_us() + 10000000u; sm_mono_us() < end;) {
		sm_sa_stats(x.sa, &s);
		if (s.reports_given_up)
			break;
		sm_loop_dispatch(x.l, 1);
	}
	sm_sa_stats(x.sa, &s);
	assert_int_equal(s.reports_acked, 1);
	assert_int_equal(s.reports_given_up, 1);
	size_t to6 = 0;

	for (size_t i = 0; i < x.f.out_n; i++)
		to6 += x.f.out[i].addr.lid == 6 && out_hdr(&x, i).method == SM_SA_REPORT;
	assert_int_equal(to6, 1 + 2);   /* the first send and 2 retries */
	assert_int_equal(sm_sa_dyn_subs(sm_sa_dyn(x.sa)), 1);
	out_clear(&x.f);
	/* a trap 128 from the switch (LID 1): to its subscriber (the one of every trap was dropped) */
	uint8_t notice[64] = { 0x81, 0, 0, 2, 0, 128, 0, 1 };

	subscribe(&x, 5, SM_TRAP_LINK_STATE);
	sm_sa_notice(x.sa, notice);
	spin(&x, 0);
	assert_int_equal(x.f.out_n, 1);
	assert_int_equal(x.f.out[0].addr.lid, 5);
	assert_int_equal(sm_sa_get64(x.f.out[0].mad + SM_SA_HDR_SIZE + 64 + 8), 0x100);   /* IssuerGID filled */
	/* publish back: 0x31 in service again, nobody wants 64 */
	out_clear(&x.f);
	publish(&x, false);
	assert_int_equal(x.f.out_n, 0);
	fx_down(&x);
}

/* Multicast: traps 66/67 to subscribers and the new sets, as the daemon takes them (sm_sa_dyn_mc_take). */
struct mc_seen {
	struct sm_mc_set *last;
	uint64_t gen;
};

static void mc_notice(void *arg, const uint8_t n[64])
{
	sm_sa_notice(arg, n);
}

static void mc_take(struct mc_seen *m, struct sm_sa *sa)
{
	struct sm_mc_set *s = sm_sa_dyn_mc_take(sm_sa_dyn(sa), 0, 5, &m->gen, mc_notice, sa);   /* the SM: LID 5 */

	if (s) {
		sm_mc_set_unref(m->last);
		m->last = s;
	}
}

static void mc_hook(void *arg, struct sm_sa *sa)
{
	mc_take(arg, sa);
}

static void test_multicast(void **st)
{
	struct fx x;
	struct sm_partitions *parts;
	struct mc_seen seen = { 0 };
	uint8_t mad[SM_SA_MAD_SIZE], *d = mad + SM_SA_HDR_SIZE, mgid[16];

	(void)st;
	assert_int_equal(sm_partitions_default(&parts), 0);
	fx_mc.fn = mc_hook, fx_mc.arg = &seen;
	fx_up(&x, 0, 10000);   /* no Report resent during the test, however slow (valgrind) */
	fx_mc.fn = NULL, fx_mc.arg = NULL;
	assert_int_equal(sm_sa_dyn_mc_config(sm_sa_dyn(x.sa), parts, 18), 0);
	seen.gen = sm_sa_dyn(x.sa)->mc_gen;
	assert_int_equal(sm_sa_dyn_groups(sm_sa_dyn(x.sa)), 1);   /* the broadcast group, from the start */
	publish(&x, false);
	subscribe(&x, 5, SM_TRAP_MC_CREATE);
	subscribe(&x, 6, SM_TRAP_MC_DELETE);
	/* 0x31 (LID 7) creates a group with an MGID of the SA's */
	req(mad, SM_SA_SET, SM_SA_ATTR_MCMEMBER_RECORD, 77, 0x130C7);   /* MGID PortGID Q_Key TClass P_Key SL Flow JoinState */
	sm_sa_put64(d + 16, 0xfe80000000000000ull);
	sm_sa_put64(d + 24, 0x31);
	d[40] = d[41] = 0xff;
	d[48] = 0x21;
	inject(&x.f, mad, sizeof(mad), 7);
	spin_out(&x, 2);
	assert_int_equal(x.f.out_n, 2);   /* the answer and a Report of trap 66 to LID 5 */
	for (size_t i = 0; i < 2; i++) {
		struct sm_sa_hdr h = out_hdr(&x, i);
		const uint8_t *p = x.f.out[i].mad + SM_SA_HDR_SIZE;

		if (h.method == SM_SA_GET_RESP) {
			assert_int_equal(h.status, 0);
			memcpy(mgid, p, 16);
			assert_int_equal(sm_sa_get16(p + 36), 0xC001);
		} else {
			assert_int_equal(h.method, SM_SA_REPORT);
			assert_int_equal(x.f.out[i].addr.lid, 5);
			assert_int_equal(sm_sa_get16(p + 4), SM_TRAP_MC_CREATE);
			assert_int_equal(sm_sa_get16(p + 6), 5);           /* issuer: the SM's LID */
			assert_int_equal(sm_sa_get64(p + 64 + 8), 0x11);   /* and its port's GID */
		}
	}
	assert_memory_equal(x.f.out[1].mad + SM_SA_HDR_SIZE + 16, mgid, 16);
	assert_non_null(seen.last);
	assert_true(seen.last->gen > 1 && seen.last->n_groups == 2 && seen.last->groups[1].n_members == 1);
	out_clear(&x.f);
	/* 0x31 leaves the fabric: its group goes, trap 67 to LID 6, a set with the broadcast group alone */
	const struct sm_snapshot *gone = snap_make(true);
	assert_int_equal(sm_sa_mc_prune_snap(sm_sa_dyn(x.sa), gone), 1);
	sm_snapshot_unref(gone);
	mc_take(&seen, x.sa);
	spin_out(&x, 1);
	assert_int_equal(x.f.out_n, 1);
	assert_int_equal(x.f.out[0].addr.lid, 6);
	assert_int_equal(sm_sa_get16(x.f.out[0].mad + SM_SA_HDR_SIZE + 4), SM_TRAP_MC_DELETE);
	assert_true(seen.last->n_groups == 1 && seen.last->groups[0].mlid == 0xC000);
	assert_int_equal(sm_sa_dyn_groups(sm_sa_dyn(x.sa)), 1);
	fx_down(&x);
	sm_mc_set_unref(seen.last);
	sm_partitions_free(parts);
}

/* Handlers straight through sm_sa_query with an injected clock. */
static int q(struct sm_sa_dyn *d, const struct sm_snapshot *snap, uint64_t now, uint8_t method, uint16_t attr,
	     uint64_t cm, const uint8_t *data, uint16_t lid, bool trusted, struct sm_sa_ans *ans)
{
	struct sm_sa_self self = { .port_guid = 0x11, .sm_key = 0x5eC };
	struct sm_sa_ctx ctx = { .snap = snap, .self = &self, .dyn = d, .now_us = now };
	struct sm_sa_req r = { .data = data, .len = SM_SA_DATA_SIZE, .trusted = trusted };

	r.hdr = (struct sm_sa_hdr){ .base_version = 1, .mgmt_class = 3, .class_version = 2, .method = method,
				    .attr_id = attr, .comp_mask = cm, .sm_key = trusted ? 0x5eC : 0 };
	r.from.lid = lid;
	r.from.qpn = 1;
	assert_int_equal(sm_sa_query(&ctx, &r, ans), 0);
	return ans->status;
}

static void test_leases_and_rules(void **st)
{
	struct sm_sa_dyn *d;
	struct sm_sa_ans a = { 0 };
	const struct sm_snapshot *snap = snap_make(false);
	uint8_t rec[SM_SA_DATA_SIZE];

	(void)st;
	assert_int_equal(sm_sa_dyn_new(NULL, &d), 0);
	service_rec(rec, 1, 2);   /* lease 2 s */
	assert_int_equal(q(d, snap, 0, SM_SA_SET, SM_SA_ATTR_SERVICE_RECORD, 0x13, rec, 6, false, &a), 0);
	service_rec(rec, 2, 0);   /* lease bit clear: infinite */
	assert_int_equal(q(d, snap, 0, SM_SA_SET, SM_SA_ATTR_SERVICE_RECORD, 0x03, rec, 6, false, &a), 0);
	assert_int_equal(sm_sa_get32(a.buf + 28), SM_SA_LEASE_INFINITE);
	assert_int_equal(sm_sa_dyn_next_expiry(d), 2000000);
	assert_int_equal(q(d, snap, 1000000, SM_SA_GET_TABLE, SM_SA_ATTR_SERVICE_RECORD, 0, rec, 9, false, &a), 0);
	assert_int_equal(a.n, 2);
	assert_int_equal(q(d, snap, 2000000, SM_SA_GET_TABLE, SM_SA_ATTR_SERVICE_RECORD, 0, rec, 9, false, &a), 0);
	assert_int_equal(a.n, 1);   /* lease over */
	/* Get by ServiceID; trusted sees the ServiceKey */
	service_rec(rec, 2, 0);
	assert_int_equal(q(d, snap, 0, SM_SA_GET, SM_SA_ATTR_SERVICE_RECORD, 0x1, rec, 9, true, &a), 0);
	assert_int_equal(a.buf[32], 0xAB);
	/* Set without ServiceGID: REQ_INVALID; another LID renewing or deleting: DENIED */
	assert_int_equal(q(d, snap, 0, SM_SA_SET, SM_SA_ATTR_SERVICE_RECORD, 0x1, rec, 6, false, &a),
			 SM_SA_STATUS_REQ_INVALID);
	assert_int_equal(q(d, snap, 0, SM_SA_SET, SM_SA_ATTR_SERVICE_RECORD, 0x3, rec, 7, false, &a),
			 SM_SA_STATUS_DENIED);
	assert_int_equal(q(d, snap, 0, SM_SA_DELETE, SM_SA_ATTR_SERVICE_RECORD, 0x3, rec, 7, false, &a),
			 SM_SA_STATUS_DENIED);
	assert_int_equal(q(d, snap, 0, SM_SA_DELETE, SM_SA_ATTR_SERVICE_RECORD, 0x3, rec, 6, false, &a), 0);
	assert_int_equal(q(d, snap, 0, SM_SA_DELETE, SM_SA_ATTR_SERVICE_RECORD, 0x3, rec, 6, false, &a),
			 SM_SA_STATUS_NO_RECORDS);
	/* InformInfo: bad Subscribe, security trap untrusted, unknown requester, unsubscribe of nothing */
	memset(rec, 0, sizeof(rec));
	rec[22] = 1;
	rec[23] = 2;
	assert_int_equal(q(d, snap, 0, SM_SA_SET, SM_SA_ATTR_INFORM_INFO, 0, rec, 6, false, &a), SM_SA_STATUS_REQ_INVALID);
	rec[23] = 1;
	sm_sa_put16(rec + 26, 256);
	assert_int_equal(q(d, snap, 0, SM_SA_SET, SM_SA_ATTR_INFORM_INFO, 0, rec, 6, false, &a), SM_SA_STATUS_REQ_INVALID);
	assert_int_equal(q(d, snap, 0, SM_SA_SET, SM_SA_ATTR_INFORM_INFO, 0, rec, 6, true, &a), 0);
	sm_sa_put16(rec + 26, 64);
	assert_int_equal(q(d, snap, 0, SM_SA_SET, SM_SA_ATTR_INFORM_INFO, 0, rec, 99, false, &a), SM_SA_STATUS_REQ_INVALID);
	rec[23] = 0;
	assert_int_equal(q(d, snap, 0, SM_SA_SET, SM_SA_ATTR_INFORM_INFO, 0, rec, 6, false, &a), SM_SA_STATUS_REQ_INVALID);
	/* a subscription to GID-out of one GID: only that GID's notice matches */
	{
		uint8_t info[SM_SA_DATA_SIZE] = { 0 }, nt[SM_SA_NOTICE_SIZE], det[54] = { 0 };
		struct sm_sa_report_dest dst[4];

		sm_sa_gid_make(info, 0xfe80000000000000ull, 0x21);
		sm_sa_put16(info + 16, 0xFFFF);
		info[22] = info[23] = 1;
		sm_sa_put16(info + 24, 0xFFFF);
		sm_sa_put16(info + 26, SM_TRAP_GID_OUT);
		sm_sa_put32(info + 32, 0xFFFFFF);
		assert_int_equal(q(d, snap, 0, SM_SA_SET, SM_SA_ATTR_INFORM_INFO, 0, info, 5, false, &a), 0);
		sm_sa_gid_make(det + 6, 0xfe80000000000000ull, 0x31);
		sm_sa_notice_make(nt, 3, SM_TRAP_GID_OUT, 5, NULL, det);
		size_t before = sm_sa_dyn_match(d, nt, dst, 4);

		sm_sa_gid_make(det + 6, 0xfe80000000000000ull, 0x21);
		sm_sa_notice_make(nt, 3, SM_TRAP_GID_OUT, 5, NULL, det);
		assert_int_equal(sm_sa_dyn_match(d, nt, dst, 4), before + 1);
		info[23] = 0;
		assert_int_equal(q(d, snap, 0, SM_SA_SET, SM_SA_ATTR_INFORM_INFO, 0, info, 5, false, &a), 0);
	}
	/* InformInfoRecord: QPN hidden from the untrusted */
	assert_int_equal(q(d, snap, 0, SM_SA_GET_TABLE, SM_SA_ATTR_INFORM_INFO_RECORD, 0, rec, 6, false, &a), 0);
	assert_int_equal(a.n, 1);
	assert_int_equal(sm_sa_get32(a.buf + 24 + 28) >> 8, 0);
	assert_int_equal(q(d, snap, 0, SM_SA_GET_TABLE, SM_SA_ATTR_INFORM_INFO_RECORD, 0, rec, 6, true, &a), 0);
	assert_int_equal(sm_sa_get32(a.buf + 24 + 28) >> 8, 1);
	/* MCMemberRecord: no groups yet; a join or leave without JoinState is short of components (test_sa_mcast) */
	memset(rec, 0, sizeof(rec));
	assert_int_equal(q(d, snap, 0, SM_SA_SET, SM_SA_ATTR_MCMEMBER_RECORD, 0x3, rec, 6, false, &a),
			 SM_SA_STATUS_INSUFFICIENT_COMPONENTS);
	assert_int_equal(q(d, snap, 0, SM_SA_DELETE, SM_SA_ATTR_MCMEMBER_RECORD, 0x3, rec, 6, false, &a),
			 SM_SA_STATUS_INSUFFICIENT_COMPONENTS);
	assert_int_equal(q(d, snap, 0, SM_SA_GET_TABLE, SM_SA_ATTR_MCMEMBER_RECORD, 0, rec, 6, false, &a), 0);
	assert_int_equal(a.n, 0);
	uint8_t m[SM_SA_MCMEMBER_REC_SIZE] = { 0xff, 0x12 };

	m[40] = m[41] = 0xff;   /* the default partition: the requester sees it */

	assert_int_equal(sm_sa_dyn_group_add(d, m), 0);
	assert_int_equal(q(d, snap, 0, SM_SA_GET, SM_SA_ATTR_MCMEMBER_RECORD, 0x1, m, 6, false, &a), 0);
	assert_int_equal(sm_sa_dyn_groups(d), 1);
	sm_sa_ans_free(&a);
	sm_sa_dyn_free(d);
	sm_snapshot_unref(snap);
}

/* Snapshots published from another thread while the loop answers: every answer OK, no leak, no race (TSan/ASan). */
static void *publisher(void *arg)
{
	struct fx *x = arg;

	for (int i = 0; i < 200; i++) {
		const struct sm_snapshot *s = snap_make(i & 1);

		sm_sa_publish(x->sa, s);
		sm_snapshot_unref(s);
	}
	return NULL;
}

/* A plane of n CAs (LIDs 10..), no switch: n NodeRecords in a whole table. */
static const struct sm_snapshot *snap_many(unsigned n)
{
	struct sm_fabric *f = sm_fabric_new();

	assert_non_null(f);
	for (unsigned i = 0; i < n; i++)
		(void)add_ca(f, 0x10000 + 2 * i, (uint16_t)(10 + i));
	return snap_of(f, 10);
}

/*
 * A table of more than 4,096 records is built off the loop (server_table.c):
 * a Get that came after it is answered first, the table whole and right
 * afterwards, and a third large table while two wait is answered BUSY.
 */
static void test_large_table_off_loop(void **st)
{
	struct fx x;
	uint8_t mad[SM_SA_MAD_SIZE];
	const unsigned n = 5000;

	(void)st;
	fx_up(&x, SM_GSI_KERNEL_RMPP, 0);
	const struct sm_snapshot *snap = snap_many(n);
	sm_sa_publish(x.sa, snap);
	sm_snapshot_unref(snap);
	spin(&x, 0);
	req(mad, SM_SA_GET_TABLE, SM_SA_ATTR_NODE_RECORD, 70, 0);
	inject(&x.f, mad, sizeof(mad), 11);
	req(mad, SM_SA_GET, SM_SA_ATTR_NODE_RECORD, 71, 1);   /* by LID */
	sm_sa_put16(mad + SM_SA_HDR_SIZE, 12);
	inject(&x.f, mad, sizeof(mad), 12);
	spin_out(&x, 2);
	assert_int_equal(x.f.out_n, 2);
	struct sm_sa_hdr h = out_hdr(&x, 0);
	assert_int_equal(h.tid, 71);
	assert_int_equal(h.status, SM_SA_STATUS_OK);
	h = out_hdr(&x, 1);
	assert_int_equal(h.tid, 70);
	assert_int_equal(h.status, SM_SA_STATUS_OK);
	assert_int_equal(h.method, SM_SA_GET_TABLE_RESP);
	assert_int_equal(x.f.out[1].len, SM_SA_HDR_SIZE + (size_t)n * SM_SA_NODE_REC_SIZE);
	out_clear(&x.f);
	/* three at once: two are taken, the third is told BUSY at once */
	for (uint64_t t = 80; t < 83; t++) {
		req(mad, SM_SA_GET_TABLE, SM_SA_ATTR_NODE_RECORD, t, 0);
		inject(&x.f, mad, sizeof(mad), 11);
	}
	spin_out(&x, 3);
	assert_int_equal(x.f.out_n, 3);
	h = out_hdr(&x, 0);
	assert_int_equal(h.tid, 82);
	assert_int_equal(h.status, SM_SA_STATUS_BUSY);
	assert_int_equal(out_hdr(&x, 1).tid, 80);
	assert_int_equal(out_hdr(&x, 2).tid, 81);
	assert_int_equal(out_hdr(&x, 2).status, SM_SA_STATUS_OK);
	/* freed with a table still being built: joined, nothing leaks */
	req(mad, SM_SA_GET_TABLE, SM_SA_ATTR_NODE_RECORD, 90, 0);
	inject(&x.f, mad, sizeof(mad), 11);
	spin(&x, 0);
	fx_down(&x);
}

static void test_publish_from_thread(void **st)
{
	struct fx x;
	uint8_t mad[SM_SA_MAD_SIZE];
	pthread_t t;
	struct sm_sa_stats s;

	(void)st;
	fx_up(&x, 0, 0);
	publish(&x, false);
	assert_int_equal(pthread_create(&t, NULL, publisher, &x), 0);
	for (unsigned i = 0; i < 2000; i++) {
		req(mad, SM_SA_GET_TABLE, SM_SA_ATTR_SERVICE_RECORD, i, 0);   /* BUSY if a snapshot went missing */
		inject(&x.f, mad, sizeof(mad), (uint16_t)(100 + i % 8));
		if (i % 100 == 99)
			spin_answered(&x, i + 1);
	}
	pthread_join(t, NULL);
	spin(&x, 1);
	sm_sa_stats(x.sa, &s);
	assert_int_equal(s.answered, 2000);
	assert_int_equal(stat_status(&s, SM_SA_STATUS_OK), 2000);
	fx_down(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_get_and_errors),
		cmocka_unit_test(test_gettable_rmpp),
		cmocka_unit_test(test_kernel_rmpp_and_eagain),
		cmocka_unit_test(test_rmpp_request_hostile),
		cmocka_unit_test(test_fair_share),
		cmocka_unit_test(test_reports),
		cmocka_unit_test(test_multicast),
		cmocka_unit_test(test_leases_and_rules),
		cmocka_unit_test(test_publish_from_thread),
		cmocka_unit_test(test_large_table_off_loop),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
