/* SPDX-License-Identifier: MIT */
/*
 * Transaction engine tests over a scripted fake transport with a fake
 * clock (no sleeping, no timed assertions): TID matching, retries with
 * backoff, give-up, late/duplicate/mismatched/malformed/unknown answers
 * counted and dropped, window and per-destination limits as seen by the
 * transport, unsolicited MADs, callbacks that submit, cancel, errors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mad/codec.h"
#include "mad/transport.h"
#include "mad/txn.h"

#define QMAX 8192
#define LOGMAX 8192

struct qmad {
	uint8_t mad[SM_MAD_SIZE];
	size_t len;
	uint64_t at;
	uint16_t slid;
	int dest;          /* destination it answers for (-1 none) */
};

struct fake {
	struct sm_transport t;
	uint64_t now;                /* fake clock, us */
	struct qmad q[QMAX];
	unsigned qn;
	/* script */
	unsigned drop_first;         /* drop the first N sends of every TID */
	unsigned drop_mod;           /* drop the first send of TIDs that are multiples of this */
	int drop_all;
	uint64_t delay_us;           /* answer after this long */
	int dup;                     /* answer twice */
	int wrong_mod_first;         /* first answer carries a wrong attribute modifier */
	int short_first;             /* first answer truncated */
	uint16_t status;             /* MAD status of answers */
	int send_rc, recv_rc;
	/* observations */
	unsigned sends;
	uint32_t log_tid[LOGMAX];
	uint64_t log_at[LOGMAX];
	unsigned inflight, max_inflight;
	unsigned dest_inflight[256], max_dest_inflight;
	unsigned recv_calls;
};

static unsigned sends_of(const struct fake *f, uint32_t tid)
{
	unsigned n = 0;

	for (unsigned i = 0; i < f->sends && i < LOGMAX; i++)
		n += f->log_tid[i] == tid;
	return n;
}

static void enqueue(struct fake *f, const struct sm_smp *s, size_t len, uint64_t at, int dest)
{
	struct qmad *q;

	assert_true(f->qn < QMAX);
	q = &f->q[f->qn++];
	assert_int_equal(sm_smp_encode(s, q->mad), 0);
	q->len = len;
	q->at = at;
	q->slid = 0;
	q->dest = dest;
	if (dest >= 0) {
		f->inflight++;
		f->dest_inflight[dest]++;
		if (f->inflight > f->max_inflight)
			f->max_inflight = f->inflight;
		if (f->dest_inflight[dest] > f->max_dest_inflight)
			f->max_dest_inflight = f->dest_inflight[dest];
	}
}

static int fake_send(struct sm_transport *t, const uint8_t *mad, size_t len, uint16_t dlid,
		     unsigned resp_timeout_ms)
{
	struct fake *f = (struct fake *)t;
	struct sm_smp req, resp;
	unsigned nth;
	int dest;

	(void)dlid;
	(void)resp_timeout_ms;
	if (f->send_rc)
		return f->send_rc;
	assert_int_equal(len, SM_MAD_SIZE);
	assert_int_equal(sm_smp_decode(mad, len, &req, NULL), 0);
	assert_true((uint32_t)req.tid != 0);
	if (f->sends < LOGMAX) {
		f->log_tid[f->sends] = (uint32_t)req.tid;
		f->log_at[f->sends] = f->now;
	}
	f->sends++;
	nth = f->drop_first || f->drop_mod || f->short_first || f->wrong_mod_first ?
		      sends_of(f, (uint32_t)req.tid) : 1;
	if (f->drop_all || nth <= f->drop_first ||
	    (f->drop_mod && nth == 1 && (uint32_t)req.tid % f->drop_mod == 0))
		return 0;
	dest = req.mgmt_class == SM_CLASS_SMI_DR ? req.initial_path[req.hop_cnt] : dlid & 0xFF;
	sm_smp_make_response(&req, &resp, f->status);
	if (req.attr_id == SM_ATTR_NODE_INFO) {
		/* the engine checks payloads: answer with a NodeInfo that can be true */
		struct sm_node_info ni = { .node_type = SM_NODE_CA, .num_ports = 1, .node_guid = 0x10,
					   .port_guid = 0x11, .local_port_num = 1 };
		sm_node_info_encode(&ni, resp.data);
	}
	resp.data[0] = (uint8_t)req.attr_mod;   /* lets callbacks check what they got */
	if (f->short_first && nth == 1) {
		enqueue(f, &resp, 100, f->now + f->delay_us, -1);
		return 0;
	}
	if (f->wrong_mod_first && nth == 1) {
		resp.attr_mod ^= 0x40;
		enqueue(f, &resp, SM_MAD_SIZE, f->now + f->delay_us, -1);
		return 0;
	}
	enqueue(f, &resp, SM_MAD_SIZE, f->now + f->delay_us, dest);
	if (f->dup)
		enqueue(f, &resp, SM_MAD_SIZE, f->now + f->delay_us + 1, -1);
	return 0;
}

static int fake_recv(struct sm_transport *t, uint8_t *buf, size_t cap, size_t *len,
		     struct sm_mad_addr *from, int timeout_ms)
{
	struct fake *f = (struct fake *)t;
	uint64_t deadline = timeout_ms < 0 ? UINT64_MAX : f->now + (uint64_t)timeout_ms * 1000;
	unsigned best = QMAX;

	f->recv_calls++;
	if (f->recv_rc)
		return f->recv_rc;
	for (unsigned i = 0; i < f->qn; i++)
		if (best == QMAX || f->q[i].at <= f->q[best].at)   /* ties: newest first */
			best = i;
	if (best == QMAX || f->q[best].at > deadline) {
		if (timeout_ms > 0)
			f->now = deadline;
		return -ETIMEDOUT;
	}
	if (f->q[best].at > f->now)
		f->now = f->q[best].at;   /* "wait" for it */
	assert_true(cap >= f->q[best].len);
	memcpy(buf, f->q[best].mad, f->q[best].len);
	*len = f->q[best].len;
	if (from)
		from->slid = f->q[best].slid;
	if (f->q[best].dest >= 0) {
		f->inflight--;
		f->dest_inflight[f->q[best].dest]--;
	}
	f->q[best] = f->q[--f->qn];
	return 0;
}

static uint64_t fake_now(struct sm_transport *t)
{
	return ((struct fake *)t)->now;
}

static const struct sm_transport_ops fake_ops = {
	.size = sizeof(struct sm_transport_ops),
	.version = SM_TRANSPORT_OPS_VERSION,
	.name = "fake",
	.send = fake_send,
	.recv = fake_recv,
	.now_us = fake_now,
};

static struct fake *fake_new(void)
{
	struct fake *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->t.ops = &fake_ops;
	f->now = 1000000;
	return f;
}

struct res {
	int calls;
	int status;
	uint16_t mad_status;
	unsigned tries;
	uint32_t mod_seen;
	uint32_t mod_req;
};

static void res_cb(struct sm_txn *e, const struct sm_txn_result *r, void *ctx)
{
	struct res *x = ctx;

	(void)e;
	x->calls++;
	x->status = r->status;
	x->mad_status = r->mad_status;
	x->tries = r->tries;
	x->mod_req = r->req->attr_mod;
	if (r->resp) {
		x->mod_seen = r->resp->data[0];
		assert_int_equal((uint32_t)r->resp->tid, (uint32_t)r->req->tid);
	}
}

static void dr_get(struct sm_smp *s, unsigned dest, uint16_t attr, uint32_t mod)
{
	struct sm_dr_path p = { 0 };

	sm_dr_path_push(&p, 1);
	sm_dr_path_push(&p, (uint8_t)dest);
	sm_smp_init_dr(s, SM_METHOD_GET, attr, mod, &p);
}

static void test_tid_matching(void **state)
{
	struct fake *f = fake_new();
	struct sm_txn *e = sm_txn_new(&f->t, NULL);
	struct res r[20];
	struct sm_smp s;

	(void)state;
	memset(r, 0, sizeof(r));
	/* answers arrive in reverse order of sending */
	for (unsigned i = 0; i < 20; i++) {
		dr_get(&s, 1 + i % 5, SM_ATTR_PORT_INFO, i);
		assert_int_equal(sm_txn_submit(e, &s, 0, res_cb, &r[i]), 0);
	}
	f->delay_us = 0;
	assert_int_equal(sm_txn_pending(e), 20);
	assert_int_equal(sm_txn_run(e), 0);
	for (unsigned i = 0; i < 20; i++) {
		assert_int_equal(r[i].calls, 1);
		assert_int_equal(r[i].status, 0);
		assert_int_equal(r[i].mod_seen, i);
		assert_int_equal(r[i].tries, 1);
	}
	/* TIDs are distinct */
	for (unsigned i = 0; i < f->sends; i++)
		for (unsigned j = i + 1; j < f->sends; j++)
			assert_true(f->log_tid[i] != f->log_tid[j]);
	assert_int_equal(sm_txn_stats(e)->completed, 20);
	assert_int_equal(sm_txn_stats(e)->sent, 20);
	assert_int_equal(sm_txn_stats(e)->received, 20);
	assert_int_equal(sm_txn_stats(e)->attr[SM_TXN_A_PORT_INFO].sent, 20);
	assert_int_equal(sm_txn_stats(e)->attr[SM_TXN_A_PORT_INFO].completed, 20);
	assert_int_equal(sm_txn_pending(e), 0);
	sm_txn_free(e);
	free(f);
}

static void test_retry_backoff(void **state)
{
	struct fake *f = fake_new();
	struct sm_txn_cfg cfg;
	struct sm_txn *e;
	struct res r = { 0 };
	struct sm_smp s;

	(void)state;
	sm_txn_cfg_default(&cfg);
	cfg.timeout_ms = 100;
	cfg.backoff = 2;
	cfg.max_timeout_ms = 300;
	cfg.retries = 4;
	e = sm_txn_new(&f->t, &cfg);
	f->drop_first = 3;   /* tries 1..3 lost, try 4 answered */
	dr_get(&s, 1, SM_ATTR_NODE_INFO, 0);
	assert_int_equal(sm_txn_submit(e, &s, 0, res_cb, &r), 0);
	assert_int_equal(sm_txn_run(e), 0);
	assert_int_equal(r.calls, 1);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.tries, 4);
	assert_int_equal(f->sends, 4);
	/* same TID for every try; gaps 100, 200, 300 (capped) ms of fake time */
	assert_int_equal(f->log_tid[0], f->log_tid[3]);
	assert_int_equal(f->log_at[1] - f->log_at[0], 100000);
	assert_int_equal(f->log_at[2] - f->log_at[1], 200000);
	assert_int_equal(f->log_at[3] - f->log_at[2], 300000);
	assert_int_equal(sm_txn_stats(e)->retried, 3);
	assert_int_equal(sm_txn_stats(e)->attr[SM_TXN_A_NODE_INFO].retried, 3);
	assert_int_equal(sm_txn_stats(e)->timed_out, 0);
	sm_txn_free(e);
	free(f);
}

/*
 * A lossy fabric (the first try of every third TID lost, answers after 2 ms): once enough
 * tries were seen, the first-try timeout follows the round trips (floor
 * min_timeout_ms 10) instead of 100 ms, and retries are not backed off
 * while others answer.
 */
static void test_adaptive_timeout(void **state)
{
	struct fake *f = fake_new();
	struct sm_txn_cfg cfg;
	struct sm_txn *e;
	struct sm_smp s;
	static struct res r[200];

	(void)state;
	memset(r, 0, sizeof(r));
	sm_txn_cfg_default(&cfg);
	cfg.window = 8;
	f->drop_mod = 3;
	f->delay_us = 2000;
	e = sm_txn_new(&f->t, &cfg);
	for (unsigned i = 0; i < 200; i++) {
		dr_get(&s, 1 + i % 9, SM_ATTR_PORT_INFO, i);
		assert_int_equal(sm_txn_submit(e, &s, 0, res_cb, &r[i]), 0);
	}
	assert_int_equal(sm_txn_run(e), 0);
	unsigned tries = 0;
	for (unsigned i = 0; i < 200; i++) {
		assert_int_equal(r[i].status, 0);
		tries += r[i].tries;
	}
	assert_int_equal(tries, 200 + 66);   /* TIDs 1..200: 66 multiples of 3 */
	assert_true(sm_txn_loss_estimate(e) > 0.1);
	/* the first lossy request waited the configured 100 ms, the last one 10 ms */
	uint32_t t0 = 3, tl = 0;
	for (unsigned i = 0; i < f->sends; i++)
		if (f->log_tid[i] % 3 == 0)
			tl = f->log_tid[i];
	uint64_t first[2] = { 0, 0 }, last[2] = { 0, 0 };
	unsigned nf = 0, nl = 0;
	for (unsigned i = 0; i < f->sends; i++) {
		if (f->log_tid[i] == t0 && nf < 2)
			first[nf++] = f->log_at[i];
		if (f->log_tid[i] == tl && nl < 2)
			last[nl++] = f->log_at[i];
	}
	assert_int_equal(nf, 2);
	assert_int_equal(nl, 2);
	assert_int_equal(first[1] - first[0], 100000);
	assert_int_equal(last[1] - last[0], 10000);
	sm_txn_free(e);

	/* off: every first try waits 100 ms */
	struct fake *g = fake_new();
	cfg.min_timeout_ms = 0;
	g->drop_mod = 3;
	g->delay_us = 2000;
	e = sm_txn_new(&g->t, &cfg);
	for (unsigned i = 0; i < 200; i++) {
		dr_get(&s, 1 + i % 9, SM_ATTR_PORT_INFO, i);
		assert_int_equal(sm_txn_submit(e, &s, 0, NULL, NULL), 0);
	}
	assert_int_equal(sm_txn_run(e), 0);
	for (unsigned i = 0; i < g->sends; i++)
		if (g->log_tid[i] % 3 == 0)
			tl = g->log_tid[i];
	nl = 0;
	for (unsigned i = 0; i < g->sends; i++)
		if (g->log_tid[i] == tl && nl < 2)
			last[nl++] = g->log_at[i];
	assert_int_equal(last[1] - last[0], 100000);
	sm_txn_free(e);
	free(f);
	free(g);
}

static void test_give_up_then_late(void **state)
{
	struct fake *f = fake_new();
	struct sm_txn_cfg cfg;
	struct sm_txn *e;
	struct res r = { 0 }, r2 = { 0 };
	struct sm_smp s, resp;
	struct sm_txn_req_opts opts = { .timeout_ms = 10, .retries = SM_TXN_NO_RETRY };

	(void)state;
	sm_txn_cfg_default(&cfg);
	cfg.retries = 2;
	e = sm_txn_new(&f->t, &cfg);
	f->drop_all = 1;
	dr_get(&s, 1, SM_ATTR_SWITCH_INFO, 0);
	assert_int_equal(sm_txn_submit(e, &s, 0, res_cb, &r), 0);
	assert_int_equal(sm_txn_run(e), 0);
	assert_int_equal(r.calls, 1);
	assert_int_equal(r.status, -ETIMEDOUT);
	assert_int_equal(r.tries, 3);
	assert_int_equal(f->sends, 3);
	assert_int_equal(sm_txn_stats(e)->timed_out, 1);
	assert_int_equal(sm_txn_stats(e)->attr[SM_TXN_A_SWITCH_INFO].timed_out, 1);
	/* the answer shows up after all: counted late, not delivered */
	s.tid = f->log_tid[0];
	sm_smp_make_response(&s, &resp, 0);
	enqueue(f, &resp, SM_MAD_SIZE, f->now, -1);
	/* per-request options: one try, 10 ms */
	dr_get(&s, 2, SM_ATTR_SWITCH_INFO, 0);
	assert_int_equal(sm_txn_submit_opts(e, &s, 0, &opts, res_cb, &r2), 0);
	assert_int_equal(sm_txn_run(e), 0);
	assert_int_equal(r.calls, 1);
	assert_int_equal(r2.calls, 1);
	assert_int_equal(r2.tries, 1);
	assert_int_equal(r2.status, -ETIMEDOUT);
	assert_int_equal(sm_txn_stats(e)->late, 1);
	assert_int_equal(sm_txn_stats(e)->completed, 0);
	sm_txn_free(e);
	free(f);
}

static void test_duplicate_mismatched_malformed_unknown(void **state)
{
	struct fake *f = fake_new();
	struct sm_txn *e = sm_txn_new(&f->t, NULL);
	struct res r[3];
	struct sm_smp s, stray;
	const struct sm_txn_stats *st;

	(void)state;
	memset(r, 0, sizeof(r));
	f->dup = 1;
	dr_get(&s, 1, SM_ATTR_LFT, 5);
	assert_int_equal(sm_txn_submit(e, &s, 0, res_cb, &r[0]), 0);
	assert_int_equal(sm_txn_run(e), 0);
	assert_int_equal(r[0].calls, 1);
	assert_int_equal(r[0].status, 0);
	/* the duplicate comes 1 us later; wait for it */
	assert_true(sm_txn_poll(e, 1) >= 0);
	st = sm_txn_stats(e);
	assert_int_equal(st->duplicate, 1);
	f->dup = 0;

	/* first answer for the right TID but another block: dropped, retry answered */
	f->wrong_mod_first = 1;
	dr_get(&s, 1, SM_ATTR_LFT, 6);
	assert_int_equal(sm_txn_submit(e, &s, 0, res_cb, &r[1]), 0);
	assert_int_equal(sm_txn_run(e), 0);
	assert_int_equal(r[1].calls, 1);
	assert_int_equal(r[1].status, 0);
	assert_int_equal(r[1].tries, 2);
	assert_int_equal(r[1].mod_seen, 6);
	assert_int_equal(st->mismatched, 1);
	f->wrong_mod_first = 0;

	/* truncated first answer */
	f->short_first = 1;
	dr_get(&s, 1, SM_ATTR_LFT, 7);
	assert_int_equal(sm_txn_submit(e, &s, 0, res_cb, &r[2]), 0);
	assert_int_equal(sm_txn_run(e), 0);
	assert_int_equal(r[2].calls, 1);
	assert_int_equal(r[2].status, 0);
	assert_int_equal(r[2].tries, 2);
	assert_int_equal(st->malformed, 1);
	f->short_first = 0;

	/* a GetResp with a TID never sent */
	dr_get(&stray, 1, SM_ATTR_LFT, 7);
	stray.tid = 0xABCDEF;
	sm_smp_make_response(&stray, &stray, 0);
	enqueue(f, &stray, SM_MAD_SIZE, f->now, -1);
	stray.tid = 0;   /* and TID 0 */
	enqueue(f, &stray, SM_MAD_SIZE, f->now, -1);
	assert_true(sm_txn_poll(e, 0) >= 0);
	assert_int_equal(st->unknown_tid, 2);
	assert_int_equal(st->completed, 3);
	assert_int_equal(st->received, 2 + 2 + 2 + 2);
	sm_txn_free(e);
	free(f);
}

static void test_window_and_per_dest(void **state)
{
	struct fake *f = fake_new();
	struct sm_txn_cfg cfg;
	struct sm_txn *e;
	struct sm_smp s;
	static struct res r[400];

	(void)state;
	sm_txn_cfg_default(&cfg);
	cfg.window = 8;
	cfg.per_dest = 3;
	cfg.timeout_ms = 1000;
	e = sm_txn_new(&f->t, &cfg);
	f->delay_us = 5000;
	memset(r, 0, sizeof(r));
	/* 400 requests to 10 destinations, submitted destination by destination */
	for (unsigned i = 0; i < 400; i++) {
		dr_get(&s, 1 + i / 40, SM_ATTR_PORT_INFO, i);
		assert_int_equal(sm_txn_submit(e, &s, 0, res_cb, &r[i]), 0);
	}
	assert_int_equal(sm_txn_run(e), 0);
	for (unsigned i = 0; i < 400; i++) {
		assert_int_equal(r[i].calls, 1);
		assert_int_equal(r[i].status, 0);
	}
	/* seen from the wire: never more than 8 in flight, and the window was
	 * filled; ten destinations share it round-robin, at most 3 each */
	assert_int_equal(f->max_inflight, 8);
	assert_true(f->max_dest_inflight <= 3);
	assert_int_equal(sm_txn_stats(e)->max_outstanding, 8);
	assert_true(sm_txn_stats(e)->max_per_dest <= 3);
	assert_int_equal(sm_txn_stats(e)->retried, 0);
	sm_txn_free(e);

	/* two destinations: per_dest binds before the window (2 x 3 < 8) */
	memset(f, 0, sizeof(*f));
	f->t.ops = &fake_ops;
	f->delay_us = 5000;
	e = sm_txn_new(&f->t, &cfg);
	for (unsigned i = 0; i < 100; i++) {
		dr_get(&s, 1 + i % 2, SM_ATTR_PORT_INFO, i);
		assert_int_equal(sm_txn_submit(e, &s, 0, NULL, NULL), 0);
	}
	assert_int_equal(sm_txn_run(e), 0);
	assert_int_equal(f->max_inflight, 6);
	assert_int_equal(f->max_dest_inflight, 3);
	assert_int_equal(sm_txn_stats(e)->max_per_dest, 3);
	assert_int_equal(sm_txn_stats(e)->completed, 100);
	sm_txn_free(e);

	/* one destination only: per_dest is the limit */
	memset(f, 0, sizeof(*f));
	f->t.ops = &fake_ops;
	f->delay_us = 5000;
	cfg.window = 32;
	cfg.per_dest = 4;
	e = sm_txn_new(&f->t, &cfg);
	for (unsigned i = 0; i < 100; i++) {
		dr_get(&s, 9, SM_ATTR_LFT, i);
		assert_int_equal(sm_txn_submit(e, &s, 0, NULL, NULL), 0);
	}
	assert_int_equal(sm_txn_run(e), 0);
	assert_int_equal(f->max_inflight, 4);
	assert_int_equal(sm_txn_stats(e)->completed, 100);
	/* a caller-given destination key groups different paths */
	memset(f, 0, sizeof(*f));
	f->t.ops = &fake_ops;
	f->delay_us = 5000;
	sm_txn_stats_reset(e);
	for (unsigned i = 0; i < 100; i++) {
		struct sm_txn_req_opts o = { .dest_key = 77 };
		dr_get(&s, 1 + i % 50, SM_ATTR_LFT, i);
		assert_int_equal(sm_txn_submit_opts(e, &s, 0, &o, NULL, NULL), 0);
	}
	assert_int_equal(sm_txn_run(e), 0);
	assert_int_equal(f->max_inflight, 4);
	assert_int_equal(sm_txn_stats(e)->max_per_dest, 4);
	sm_txn_free(e);
	free(f);
}

struct chain {
	unsigned left;
	unsigned done;
};

static void chain_cb(struct sm_txn *e, const struct sm_txn_result *r, void *ctx)
{
	struct chain *c = ctx;
	struct sm_smp s;

	assert_int_equal(r->status, 0);
	c->done++;
	if (c->left) {
		c->left--;
		/* two more per answer until the budget is spent: a BFS in miniature */
		for (int k = 0; k < 2; k++) {
			dr_get(&s, 1 + c->done % 7, SM_ATTR_NODE_INFO, c->done);
			assert_int_equal(sm_txn_submit(e, &s, 0, chain_cb, c), 0);
		}
	}
}

static void test_callbacks_submit(void **state)
{
	struct fake *f = fake_new();
	struct sm_txn *e = sm_txn_new(&f->t, NULL);
	struct chain c = { .left = 50 };
	struct sm_smp s;

	(void)state;
	dr_get(&s, 1, SM_ATTR_NODE_INFO, 0);
	assert_int_equal(sm_txn_submit(e, &s, 0, chain_cb, &c), 0);
	assert_int_equal(sm_txn_run(e), 0);
	assert_int_equal(c.done, 1 + 2 * 50);
	assert_int_equal(sm_txn_stats(e)->completed, 101);
	sm_txn_free(e);
	free(f);
}

struct unsol {
	int n;
	uint8_t method;
};

static void unsol_cb(struct sm_txn *e, const struct sm_smp *smp, const struct sm_mad_addr *from,
		     void *ctx)
{
	struct unsol *u = ctx;

	(void)e;
	(void)from;
	u->n++;
	u->method = smp->method;
}

static void test_unsolicited_and_poll(void **state)
{
	struct fake *f = fake_new();
	struct sm_txn *e = sm_txn_new(&f->t, NULL);
	struct sm_smp trap;
	struct sm_notice n;
	struct unsol u = { 0 };
	struct res r = { 0 };
	struct sm_smp s;

	(void)state;
	sm_smp_init_lid(&trap, SM_METHOD_TRAP, SM_ATTR_NOTICE, 0);
	trap.tid = 5;
	sm_notice_trap128(&n, 9);
	sm_notice_encode(&n, trap.data);
	enqueue(f, &trap, SM_MAD_SIZE, f->now, -1);
	assert_int_equal(sm_txn_poll(e, 0), 0);
	assert_int_equal(sm_txn_stats(e)->unsolicited_dropped, 1);
	sm_txn_set_unsolicited(e, unsol_cb, &u);
	enqueue(f, &trap, SM_MAD_SIZE, f->now, -1);
	assert_int_equal(sm_txn_poll(e, 0), 0);
	assert_int_equal(u.n, 1);
	assert_int_equal(u.method, SM_METHOD_TRAP);
	assert_int_equal(sm_txn_stats(e)->unsolicited, 1);
	assert_int_equal(sm_txn_next_timeout_ms(e), -1);

	/* poll-driven completion: one request, answered after 3 ms of fake time */
	f->delay_us = 3000;
	dr_get(&s, 1, SM_ATTR_NODE_INFO, 0);
	assert_int_equal(sm_txn_submit(e, &s, 0, res_cb, &r), 0);
	assert_int_equal(sm_txn_next_timeout_ms(e), 0);     /* something to send */
	assert_int_equal(sm_txn_poll(e, 0), 0);             /* sent, nothing back yet */
	assert_int_equal(sm_txn_next_timeout_ms(e), 100);
	assert_int_equal(sm_txn_poll(e, 1), 0);             /* 1 ms: still nothing */
	assert_int_equal(sm_txn_poll(e, -1), 1);            /* until the next deadline: answered */
	assert_int_equal(r.calls, 1);
	assert_int_equal(r.status, 0);
	assert_int_equal(sm_txn_pending(e), 0);
	sm_txn_free(e);
	free(f);
}

static void test_errors_and_cancel(void **state)
{
	struct fake *f = fake_new();
	struct sm_txn_cfg cfg;
	struct sm_txn *e;
	struct res r[3];
	struct sm_smp s;

	(void)state;
	memset(r, 0, sizeof(r));
	/* nonsense configs and requests are refused */
	sm_txn_cfg_default(&cfg);
	cfg.window = 0;
	assert_null(sm_txn_new(&f->t, &cfg));
	sm_txn_cfg_default(&cfg);
	cfg.retries = 1;
	e = sm_txn_new(&f->t, &cfg);
	assert_non_null(e);
	dr_get(&s, 1, SM_ATTR_NODE_INFO, 0);
	s.method = SM_METHOD_GET_RESP;
	assert_int_equal(sm_txn_submit(e, &s, 0, res_cb, &r[0]), -EINVAL);
	s.method = SM_METHOD_GET;
	s.hop_cnt = 64;
	assert_int_equal(sm_txn_submit(e, &s, 0, res_cb, &r[0]), -EINVAL);

	/* MAD status is passed through and counted */
	f->status = SM_MAD_STATUS_INVALID_FIELD;
	dr_get(&s, 1, SM_ATTR_PORT_INFO, 99);
	assert_int_equal(sm_txn_submit(e, &s, 0, res_cb, &r[0]), 0);
	assert_int_equal(sm_txn_run(e), 0);
	assert_int_equal(r[0].status, 0);
	assert_int_equal(r[0].mad_status, SM_MAD_STATUS_INVALID_FIELD);
	assert_int_equal(sm_txn_stats(e)->mad_errors, 1);
	f->status = 0;

	/* a transport that cannot send: every try fails, the error is reported */
	f->send_rc = -EIO;
	memset(&r[0], 0, sizeof(r[0]));
	assert_int_equal(sm_txn_submit(e, &s, 0, res_cb, &r[0]), 0);
	assert_int_equal(sm_txn_run(e), 0);
	assert_int_equal(r[0].calls, 1);
	assert_int_equal(r[0].status, -EIO);
	assert_int_equal(r[0].tries, 2);
	assert_int_equal(sm_txn_stats(e)->send_errors, 2);
	f->send_rc = 0;

	/* receive failing hard: run returns it, pending requests complete with it */
	f->recv_rc = -ENODEV;
	f->drop_all = 1;
	memset(r, 0, sizeof(r));
	assert_int_equal(sm_txn_submit(e, &s, 0, res_cb, &r[0]), 0);
	assert_int_equal(sm_txn_submit(e, &s, 0, res_cb, &r[1]), 0);
	assert_int_equal(sm_txn_run(e), -ENODEV);
	assert_int_equal(r[0].status, -ENODEV);
	assert_int_equal(r[1].status, -ENODEV);
	assert_int_equal(sm_txn_pending(e), 0);
	f->recv_rc = 0;

	/* free with work pending: callbacks run with -ECANCELED */
	memset(r, 0, sizeof(r));
	assert_int_equal(sm_txn_submit(e, &s, 0, res_cb, &r[0]), 0);
	assert_int_equal(sm_txn_submit(e, &s, 0, res_cb, &r[1]), 0);
	assert_true(sm_txn_poll(e, 0) >= 0);   /* both sent, none answered */
	assert_int_equal(sm_txn_submit(e, &s, 0, res_cb, &r[2]), 0);
	sm_txn_free(e);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(r[i].calls, 1);
		assert_int_equal(r[i].status, -ECANCELED);
	}
	sm_txn_free(NULL);
	free(f);
}

/* TIDs wrap through the ring without colliding with requests in flight. */
static void test_many_requests(void **state)
{
	struct fake *f = fake_new();
	struct sm_txn_cfg cfg;
	struct sm_txn *e;
	struct sm_smp s;

	(void)state;
	sm_txn_cfg_default(&cfg);
	cfg.window = 64;
	cfg.per_dest = 64;
	e = sm_txn_new(&f->t, &cfg);
	for (unsigned round = 0; round < 30; round++) {
		for (unsigned i = 0; i < 5000; i++) {
			dr_get(&s, 1 + i % 200, SM_ATTR_LFT, i);
			assert_int_equal(sm_txn_submit(e, &s, 0, NULL, NULL), 0);
		}
		f->sends = 0;   /* keep the fake's TID log small */
		assert_int_equal(sm_txn_run(e), 0);
	}
	assert_int_equal(sm_txn_stats(e)->completed, 150000);
	assert_int_equal(sm_txn_stats(e)->unknown_tid + sm_txn_stats(e)->mismatched, 0);
	sm_txn_free(e);
	free(f);
}

/* Garbage arriving among real answers: every request still completes once,
 * with its own answer, and every received MAD lands in exactly one counter. */
static void test_garbage_mixed_in(void **state)
{
	struct fake *f = fake_new();
	struct sm_txn *e = sm_txn_new(&f->t, NULL);
	static struct res r[300];
	uint64_t x = 0xC0FFEE;
	const struct sm_txn_stats *st;
	struct sm_smp s;

	(void)state;
	memset(r, 0, sizeof(r));
	f->delay_us = 2000;
	for (unsigned i = 0; i < 300; i++) {
		dr_get(&s, 1 + i % 9, SM_ATTR_PORT_INFO, i);
		assert_int_equal(sm_txn_submit(e, &s, 0, res_cb, &r[i]), 0);
	}
	for (unsigned round = 0; sm_txn_pending(e) && round < 100000; round++) {
		struct qmad *q;

		/* one piece of garbage per round, TIDs near the live ones */
		assert_true(f->qn < QMAX);
		q = &f->q[f->qn++];
		for (unsigned i = 0; i < SM_MAD_SIZE; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			q->mad[i] = (uint8_t)x;
		}
		q->mad[0] = 1;
		q->mad[1] = (x & 1) ? 0x81 : 0x01;
		q->mad[2] = 1;
		q->mad[3] = (x & 2) ? SM_METHOD_GET_RESP : (uint8_t)x;
		q->mad[7] &= 0x3F;   /* hop count */
		q->mad[6] = 0;
		memset(q->mad + 8, 0, 6);
		q->mad[14] = 0;
		q->mad[15] = (uint8_t)(x >> 8) % 64;   /* TID 0..63 */
		q->len = (x >> 20) % 5 ? SM_MAD_SIZE : (size_t)((x >> 24) % SM_MAD_SIZE);
		q->at = f->now + 500;   /* time moves on: real answers come due too */
		q->dest = -1;
		assert_true(sm_txn_poll(e, 1) >= 0);
	}
	for (unsigned i = 0; i < 300; i++) {
		assert_int_equal(r[i].calls, 1);
		assert_int_equal(r[i].status, 0);
		assert_int_equal(r[i].mod_seen, i & 0xFF);   /* the fake echoes the low byte */
		assert_int_equal(r[i].mod_req, i);
	}
	st = sm_txn_stats(e);
	assert_int_equal(st->received, st->completed + st->duplicate + st->late + st->mismatched +
						st->unknown_tid + st->malformed + st->unsolicited +
						st->unsolicited_dropped);
	assert_true(st->malformed > 0);
	assert_true(st->mismatched + st->unknown_tid + st->duplicate > 0);
	assert_true(st->unsolicited_dropped > 0);
	sm_txn_free(e);
	free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tid_matching),
		cmocka_unit_test(test_retry_backoff),
		cmocka_unit_test(test_adaptive_timeout),
		cmocka_unit_test(test_give_up_then_late),
		cmocka_unit_test(test_duplicate_mismatched_malformed_unknown),
		cmocka_unit_test(test_window_and_per_dest),
		cmocka_unit_test(test_callbacks_submit),
		cmocka_unit_test(test_unsolicited_and_poll),
		cmocka_unit_test(test_errors_and_cancel),
		cmocka_unit_test(test_many_requests),
		cmocka_unit_test(test_garbage_mixed_in),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
