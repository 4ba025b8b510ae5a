/* SPDX-License-Identifier: MIT */
/*
 * RMPP (smd/sa/rmpp.h) at its edges: a sender and a receiver wired back to
 * back carry 0 bytes, exactly 200, 201, and a large message through windows
 * of 1, 2 and 16 segments, byte for byte; PayloadLength in the first and
 * last segment; a lost ACK is recovered by the timeout, retries run out into
 * an ABORT TMR; ABORT and STOP from the other side end a transfer; a
 * duplicate segment is ACKed again, one out of order is dropped, one beyond
 * the window aborts (S2B), a missing FIRST aborts (BAD_SEG), a bad last
 * PayloadLength aborts (BAD_LEN), a message over the bound is STOPped
 * (RESX); an ACK for a segment never sent aborts the sender.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "sa/rmpp.h"
#include "sa/sa_mad.h"

static struct sm_sa_hdr resp_hdr(void)
{
	struct sm_sa_hdr h = {
		.base_version = 1, .mgmt_class = SM_CLASS_SA, .class_version = 2,
		.method = SM_SA_GET_TABLE_RESP, .tid = 0x1234, .attr_id = SM_SA_ATTR_PATH_RECORD,
		.attr_offset = 8,
	};
	return h;
}

/* An ACK from the client: segment seg, NewWindowLast nwl, RRespTime rtime. */
static struct sm_sa_hdr ack_of(uint32_t seg, uint32_t nwl, uint8_t rtime)
{
	struct sm_sa_hdr a = resp_hdr();

	a.method = SM_SA_GET_TABLE;
	a.rmpp_version = 1;
	a.rmpp_type = SM_RMPP_TYPE_ACK;
	a.rmpp_data1 = seg;
	a.rmpp_data2 = nwl;
	a.rmpp_resp_time = rtime;
	return a;
}

static uint8_t *pattern(size_t n)
{
	uint8_t *p = malloc(n ? n : 1);

	assert_non_null(p);
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 7 + i / 251);
	return p;
}

static void dec(const uint8_t *mad, struct sm_sa_hdr *h)
{
	assert_int_equal(sm_sa_hdr_decode(mad, SM_SA_MAD_SIZE, h), 0);
}

/* Carry len bytes sender -> receiver with a receiver window; drop the ACK numbered drop_ack (1-based, 0 none). */
static void carry(size_t len, uint32_t window, unsigned drop_ack)
{
	uint8_t *data = pattern(len);
	struct sm_sa_hdr hdr = resp_hdr(), h;
	struct sm_rmpp_send s;
	struct sm_rmpp_recv r;
	uint8_t mad[SM_SA_MAD_SIZE], out[SM_SA_MAD_SIZE];
	uint64_t now = 1000;
	unsigned acks = 0, sent_segs = 0;
	bool done = false, sent;

	sm_rmpp_send_init(&s, &hdr, data, len, 100, 3);
	sm_rmpp_recv_init(&r, 1 << 20, window, 1000000, now);
	assert_int_equal(s.nseg, sm_rmpp_nseg(len));
	for (int guard = 0; guard < 100000 && !s.finished; guard++) {
		enum sm_rmpp_act a = sm_rmpp_send_next(&s, now, mad);

		if (a == SM_RMPP_IDLE) {   /* window full or an ACK lost: time passes */
			now += 150;
			assert_int_equal(sm_rmpp_send_timeout(&s, now), SM_RMPP_IDLE);
			continue;
		}
		assert_int_equal(a, SM_RMPP_SEND);
		sent_segs++;
		dec(mad, &h);
		assert_int_equal(h.rmpp_type, SM_RMPP_TYPE_DATA);
		assert_true(h.rmpp_flags & SM_RMPP_FLAG_ACTIVE);
		assert_int_equal(h.method, SM_SA_GET_TABLE_RESP);
		assert_int_equal(h.attr_offset, 8);
		if (h.rmpp_data1 == 1)
			assert_int_equal(h.rmpp_data2, len + 20 * s.nseg);
		if (h.rmpp_data1 == s.nseg)
			assert_int_equal(h.rmpp_data2, 20 + (len - (s.nseg - 1) * 200));
		else if (h.rmpp_data1 != 1)
			assert_int_equal(h.rmpp_data2, 0);
		enum sm_rmpp_act ra = sm_rmpp_recv_input(&r, &h, mad, sizeof(mad), now, out, &sent);

		assert_true(ra == SM_RMPP_IDLE || ra == SM_RMPP_DONE);
		if (ra == SM_RMPP_DONE)
			done = true;
		if (!sent)
			continue;
		struct sm_sa_hdr ack;

		dec(out, &ack);
		assert_int_equal(ack.rmpp_type, SM_RMPP_TYPE_ACK);
		assert_int_equal(ack.method, SM_SA_GET_TABLE);   /* the R bit flipped */
		if (++acks == drop_ack)
			continue;
		enum sm_rmpp_act sa = sm_rmpp_send_input(&s, &ack, now);

		assert_true(sa == (ack.rmpp_data1 == s.nseg ? SM_RMPP_DONE : SM_RMPP_IDLE));
	}
	assert_true(done);
	if (drop_ack)
		assert_true(sent_segs > s.nseg);
	assert_true(s.finished);
	assert_int_equal(s.end_status, 0);
	assert_int_equal(sm_rmpp_send_next(&s, now, mad), SM_RMPP_DONE);
	assert_int_equal(r.len, len);
	if (len)
		assert_memory_equal(r.buf, data, len);
	assert_true(sent_segs >= s.nseg);
	sm_rmpp_recv_free(&r);
	free(data);
}

static void test_edges(void **st)
{
	(void)st;
	static const size_t lens[] = { 0, 1, 199, 200, 201, 400, 401, 200 * 17, 200 * 64 + 3, 100000 };
	static const uint32_t wins[] = { 1, 2, 16, 64 };

	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
		for (size_t j = 0; j < sizeof(wins) / sizeof(wins[0]); j++)
			carry(lens[i], wins[j], 0);
	assert_int_equal(sm_rmpp_nseg(0), 1);
	assert_int_equal(sm_rmpp_nseg(200), 1);
	assert_int_equal(sm_rmpp_nseg(201), 2);
}

static void test_lost_ack(void **st)
{
	(void)st;
	carry(1000, 2, 1);    /* the first ACK lost */
	carry(1000, 2, 3);    /* the last ACK lost (5 segments, window 2: ACKs at 1, 3, 5) */
	carry(200, 16, 1);    /* one segment, its ACK lost */
}

static void test_retries_out(void **st)
{
	(void)st;
	uint8_t data[600] = { 0 }, mad[SM_SA_MAD_SIZE];
	struct sm_sa_hdr hdr = resp_hdr(), h;
	struct sm_rmpp_send s;
	uint64_t now = 0;
	int sends = 0;

	sm_rmpp_send_init(&s, &hdr, data, sizeof(data), 100, 2);
	for (;;) {
		enum sm_rmpp_act a = sm_rmpp_send_next(&s, now, mad);

		if (a == SM_RMPP_SEND) {
			dec(mad, &h);
			if (h.rmpp_type == SM_RMPP_TYPE_ABORT)
				break;
			assert_int_equal(h.rmpp_data1, 1);   /* never ACKed: segment 1 again and again */
			sends++;
			continue;
		}
		assert_int_equal(a, SM_RMPP_IDLE);
		assert_int_not_equal(sm_rmpp_send_due(&s), 0);
		assert_int_equal(sm_rmpp_send_timeout(&s, now + 50), SM_RMPP_IDLE);   /* not yet due */
		now += 100;
		sm_rmpp_send_timeout(&s, now);
	}
	assert_int_equal(sends, 3);   /* first send + 2 retries */
	assert_int_equal(h.rmpp_status, SM_RMPP_STATUS_TMR);
	assert_int_equal(h.method, SM_SA_GET_TABLE_RESP);
	assert_int_equal(sm_rmpp_send_next(&s, now, mad), SM_RMPP_FAILED);

	/* an ACK with RRespTime 10 (4.2 ms) stretches the 100 us wait; 0x1F leaves it */
	struct sm_sa_hdr ack = ack_of(1, 2, 10);

	sm_rmpp_send_init(&s, &hdr, data, sizeof(data), 100, 2);
	sm_rmpp_send_next(&s, 0, mad);
	assert_int_equal(sm_rmpp_send_input(&s, &ack, 0), SM_RMPP_IDLE);
	assert_int_equal(s.timeout_us, 4194);
	assert_int_equal(sm_rmpp_send_next(&s, 0, mad), SM_RMPP_SEND);
	assert_int_equal(sm_rmpp_send_due(&s), 4194);
	ack = ack_of(2, 3, 25);
	sm_rmpp_send_input(&s, &ack, 0);
	assert_int_equal(s.timeout_us, SM_RMPP_MAX_WAIT_US);
}

/* A receiver granting a window of 2^32 segments gets SM_RMPP_MAX_WINDOW at a time. */
static void test_window_cap(void **st)
{
	(void)st;
	static uint8_t data[200 * 300];
	uint8_t mad[SM_SA_MAD_SIZE];
	struct sm_sa_hdr hdr = resp_hdr(), ack = ack_of(1, 0xFFFFFFFF, SM_RMPP_RESP_TIME_NONE);
	struct sm_rmpp_send s;
	unsigned n = 0;

	sm_rmpp_send_init(&s, &hdr, data, sizeof(data), 100, 2);
	sm_rmpp_send_next(&s, 0, mad);
	assert_int_equal(sm_rmpp_send_input(&s, &ack, 0), SM_RMPP_IDLE);
	while (sm_rmpp_send_next(&s, 0, mad) == SM_RMPP_SEND)
		n++;
	assert_int_equal(n, SM_RMPP_MAX_WINDOW);
}

static void test_sender_abort_stop_badack(void **st)
{
	(void)st;
	uint8_t data[1000] = { 0 }, mad[SM_SA_MAD_SIZE];
	struct sm_sa_hdr hdr = resp_hdr(), c = resp_hdr(), h;
	struct sm_rmpp_send s;

	c.rmpp_version = 1;
	for (int t = 0; t < 4; t++) {
		sm_rmpp_send_init(&s, &hdr, data, sizeof(data), 100, 2);
		assert_int_equal(sm_rmpp_send_next(&s, 0, mad), SM_RMPP_SEND);
		c.rmpp_type = t == 0 ? SM_RMPP_TYPE_ABORT : t == 1 ? SM_RMPP_TYPE_STOP : SM_RMPP_TYPE_ACK;
		c.rmpp_status = t < 2 ? 1 : 0;
		c.rmpp_data1 = t == 2 ? 4 : 1;   /* t 2: an ACK for a segment never sent */
		c.rmpp_data2 = t == 3 ? 0 : 8;   /* t 3: NewWindowLast below the ACKed segment */
		assert_int_equal(sm_rmpp_send_input(&s, &c, 0), SM_RMPP_FAILED);
		if (t < 2) {
			assert_int_equal(sm_rmpp_send_next(&s, 0, mad), SM_RMPP_FAILED);   /* nothing more */
			continue;
		}
		assert_int_equal(sm_rmpp_send_next(&s, 0, mad), SM_RMPP_SEND);
		dec(mad, &h);
		assert_int_equal(h.rmpp_type, SM_RMPP_TYPE_ABORT);
		assert_int_equal(h.rmpp_status, t == 2 ? SM_RMPP_STATUS_S2B : SM_RMPP_STATUS_W2S);
		assert_int_equal(sm_rmpp_send_next(&s, 0, mad), SM_RMPP_FAILED);
	}
	/* a wrong RMPP version and a DATA where an ACK belongs */
	sm_rmpp_send_init(&s, &hdr, data, sizeof(data), 100, 2);
	sm_rmpp_send_next(&s, 0, mad);
	c.rmpp_version = 2;
	assert_int_equal(sm_rmpp_send_input(&s, &c, 0), SM_RMPP_FAILED);
	assert_int_equal(s.end_status, SM_RMPP_STATUS_UNV);
	sm_rmpp_send_init(&s, &hdr, data, sizeof(data), 100, 2);
	sm_rmpp_send_next(&s, 0, mad);
	c.rmpp_version = 1;
	c.rmpp_type = SM_RMPP_TYPE_DATA;
	assert_int_equal(sm_rmpp_send_input(&s, &c, 0), SM_RMPP_FAILED);
	assert_int_equal(s.end_status, SM_RMPP_STATUS_BADT);
}

/* A request segment as a client sends it (GetMulti). */
static void seg(uint8_t mad[SM_SA_MAD_SIZE], struct sm_sa_hdr *h, uint32_t n, uint8_t flags, uint32_t paylen)
{
	struct sm_sa_hdr x = {
		.base_version = 1, .mgmt_class = SM_CLASS_SA, .class_version = 2,
		.method = SM_SA_GET_MULTI, .tid = 9, .attr_id = SM_SA_ATTR_MULTIPATH_RECORD,
		.rmpp_version = 1, .rmpp_type = SM_RMPP_TYPE_DATA,
		.rmpp_flags = (uint8_t)(SM_RMPP_FLAG_ACTIVE | flags), .rmpp_data1 = n, .rmpp_data2 = paylen,
	};
	memset(mad, (int)n, SM_SA_MAD_SIZE);
	sm_sa_hdr_encode(&x, mad);
	*h = x;
}

static void test_receiver_hostile(void **st)
{
	(void)st;
	struct sm_rmpp_recv r;
	struct sm_sa_hdr h, a;
	uint8_t mad[SM_SA_MAD_SIZE], out[SM_SA_MAD_SIZE];
	bool sent;

	/* duplicate, out of order, beyond window */
	sm_rmpp_recv_init(&r, 10000, 2, 1000, 0);
	seg(mad, &h, 1, SM_RMPP_FLAG_FIRST, 4 * 220);
	assert_int_equal(sm_rmpp_recv_input(&r, &h, mad, sizeof(mad), 1, out, &sent), SM_RMPP_IDLE);
	assert_true(sent);
	dec(out, &a);
	assert_int_equal(a.rmpp_type, SM_RMPP_TYPE_ACK);
	assert_int_equal(a.method, SM_SA_GET_MULTI_RESP);
	assert_int_equal(a.rmpp_data1, 1);
	assert_int_equal(a.rmpp_data2, 3);
	seg(mad, &h, 1, SM_RMPP_FLAG_FIRST, 4 * 220);   /* duplicate: ACK again */
	assert_int_equal(sm_rmpp_recv_input(&r, &h, mad, sizeof(mad), 2, out, &sent), SM_RMPP_IDLE);
	assert_true(sent);
	seg(mad, &h, 3, 0, 0);                            /* ahead of order: dropped */
	assert_int_equal(sm_rmpp_recv_input(&r, &h, mad, sizeof(mad), 3, out, &sent), SM_RMPP_IDLE);
	assert_false(sent);
	assert_int_equal(r.last, 1);
	seg(mad, &h, 2, 0, 0);
	assert_int_equal(sm_rmpp_recv_input(&r, &h, mad, sizeof(mad), 3, out, &sent), SM_RMPP_IDLE);
	assert_false(sent);                               /* window ends at 3 */
	seg(mad, &h, 9, 0, 0);                            /* beyond the window */
	assert_int_equal(sm_rmpp_recv_input(&r, &h, mad, sizeof(mad), 4, out, &sent), SM_RMPP_FAILED);
	dec(out, &a);
	assert_int_equal(a.rmpp_type, SM_RMPP_TYPE_ABORT);
	assert_int_equal(a.rmpp_status, SM_RMPP_STATUS_S2B);
	assert_false(sm_rmpp_recv_expired(&r, 5));
	assert_true(sm_rmpp_recv_expired(&r, 5000));
	sm_rmpp_recv_free(&r);

	/* no FIRST on segment 1; FIRST on segment 2 */
	for (int t = 0; t < 2; t++) {
		sm_rmpp_recv_init(&r, 10000, 2, 1000, 0);
		seg(mad, &h, 1, t ? SM_RMPP_FLAG_FIRST : 0, 0);
		sm_rmpp_recv_input(&r, &h, mad, sizeof(mad), 1, out, &sent);
		if (t) {
			seg(mad, &h, 2, SM_RMPP_FLAG_FIRST, 0);
			assert_int_equal(sm_rmpp_recv_input(&r, &h, mad, sizeof(mad), 1, out, &sent), SM_RMPP_FAILED);
		}
		dec(out, &a);
		assert_int_equal(a.rmpp_type, SM_RMPP_TYPE_ABORT);
		assert_int_equal(a.rmpp_status, SM_RMPP_STATUS_BAD_SEG);
		sm_rmpp_recv_free(&r);
	}

	/* bad last PayloadLength; truncated segment; bad type; bad version */
	static const struct { uint32_t paylen; size_t len; uint8_t type, ver, status; } bad[] = {
		{ 221, SM_SA_MAD_SIZE, SM_RMPP_TYPE_DATA, 1, SM_RMPP_STATUS_BAD_LEN },
		{ 19, SM_SA_MAD_SIZE, SM_RMPP_TYPE_DATA, 1, SM_RMPP_STATUS_BAD_LEN },
		{ 100, 100, SM_RMPP_TYPE_DATA, 1, SM_RMPP_STATUS_BAD_LEN },
		{ 100, SM_SA_MAD_SIZE, SM_RMPP_TYPE_ACK, 1, SM_RMPP_STATUS_BADT },
		{ 100, SM_SA_MAD_SIZE, SM_RMPP_TYPE_DATA, 3, SM_RMPP_STATUS_UNV },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		sm_rmpp_recv_init(&r, 10000, 2, 1000, 0);
		seg(mad, &h, 1, SM_RMPP_FLAG_FIRST | SM_RMPP_FLAG_LAST, bad[i].paylen);
		h.rmpp_type = bad[i].type;
		h.rmpp_version = bad[i].ver;
		assert_int_equal(sm_rmpp_recv_input(&r, &h, mad, bad[i].len, 1, out, &sent), SM_RMPP_FAILED);
		assert_true(sent);
		dec(out, &a);
		assert_int_equal(a.rmpp_type, SM_RMPP_TYPE_ABORT);
		assert_int_equal(a.rmpp_status, bad[i].status);
		sm_rmpp_recv_free(&r);
	}

	/* over the bound: announced by the first PayloadLength, or found on the way */
	sm_rmpp_recv_init(&r, 1000, 16, 1000, 0);
	seg(mad, &h, 1, SM_RMPP_FLAG_FIRST, 100 * 220);
	assert_int_equal(sm_rmpp_recv_input(&r, &h, mad, sizeof(mad), 1, out, &sent), SM_RMPP_FAILED);
	dec(out, &a);
	assert_int_equal(a.rmpp_type, SM_RMPP_TYPE_STOP);
	assert_int_equal(a.rmpp_status, SM_RMPP_STATUS_RESX);
	sm_rmpp_recv_free(&r);
	sm_rmpp_recv_init(&r, 1000, 16, 1000, 0);
	enum sm_rmpp_act ra = SM_RMPP_IDLE;

	for (uint32_t n = 1; n <= 6 && ra == SM_RMPP_IDLE; n++) {
		seg(mad, &h, n, n == 1 ? SM_RMPP_FLAG_FIRST : 0, 0);
		ra = sm_rmpp_recv_input(&r, &h, mad, sizeof(mad), 1, out, &sent);
	}
	assert_int_equal(ra, SM_RMPP_FAILED);
	assert_true(r.len <= 1000);
	dec(out, &a);
	assert_int_equal(a.rmpp_type, SM_RMPP_TYPE_STOP);
	sm_rmpp_recv_free(&r);

	/* the sender aborts: nothing to send back */
	sm_rmpp_recv_init(&r, 1000, 16, 1000, 0);
	seg(mad, &h, 1, SM_RMPP_FLAG_FIRST, 0);
	sm_rmpp_recv_input(&r, &h, mad, sizeof(mad), 1, out, &sent);
	h.rmpp_type = SM_RMPP_TYPE_ABORT;
	assert_int_equal(sm_rmpp_recv_input(&r, &h, mad, sizeof(mad), 1, out, &sent), SM_RMPP_FAILED);
	assert_false(sent);
	sm_rmpp_recv_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_edges),
		cmocka_unit_test(test_lost_ack),
		cmocka_unit_test(test_retries_out),
		cmocka_unit_test(test_window_cap),
		cmocka_unit_test(test_sender_abort_stop_badack),
		cmocka_unit_test(test_receiver_hostile),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
