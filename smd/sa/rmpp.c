/* SPDX-License-Identifier: MIT */
/*
 * DOC: RMPP sender and receiver state machines (see rmpp.h for the rules).
 *
 * Invariants of the sender: last_ack <= sent_max <= nseg, next <= win_last + 1
 * (after a timeout next goes back to last_ack + 1); once finished nothing more is written but a pending
 * ABORT. Of the receiver: len == last * 200 until the last segment, which
 * sets len from its PayloadLength; len <= max_len always.
 */
#include "sa/rmpp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void sm_rmpp_control(const struct sm_sa_hdr *h, uint8_t type, uint8_t status, uint32_t seg, uint32_t nwl,
		     uint8_t mad[SM_SA_MAD_SIZE])
{
	struct sm_sa_hdr c = *h;

	c.method = (uint8_t)(h->method ^ SM_SA_RESP);
	c.rmpp_version = SM_RMPP_VERSION;
	c.rmpp_type = type;
	c.rmpp_resp_time = SM_RMPP_RESP_TIME_NONE;
	c.rmpp_flags = SM_RMPP_FLAG_ACTIVE;
	c.rmpp_status = status;
	c.rmpp_data1 = seg;
	c.rmpp_data2 = nwl;
	memset(mad, 0, SM_SA_MAD_SIZE);
	sm_sa_hdr_encode(&c, mad);
}

/* ---- sender ---- */

void sm_rmpp_send_init(struct sm_rmpp_send *s, const struct sm_sa_hdr *hdr, const uint8_t *data, size_t len,
		       uint64_t timeout_us, unsigned max_retries)
{
	memset(s, 0, sizeof(*s));
	s->hdr = *hdr;
	s->data = data;
	s->len = len;
	s->nseg = sm_rmpp_nseg(len);
	s->next = 1;
	s->win_last = 1;
	s->timeout_us = s->base_timeout_us = timeout_us ? timeout_us : 1;
	s->max_retries = max_retries;
}

static void send_abort(struct sm_rmpp_send *s, uint8_t status, uint8_t mad[SM_SA_MAD_SIZE])
{
	struct sm_sa_hdr h = s->hdr;

	/* our ABORT goes in our direction: the response method (sm_rmpp_control flips it) */
	h.method = (uint8_t)(s->hdr.method ^ SM_SA_RESP);
	sm_rmpp_control(&h, SM_RMPP_TYPE_ABORT, status, 0, 0, mad);
}

enum sm_rmpp_act sm_rmpp_send_next(struct sm_rmpp_send *s, uint64_t now_us, uint8_t mad[SM_SA_MAD_SIZE])
{
	if (s->abort_pending) {
		s->abort_pending = false;
		send_abort(s, s->end_status, mad);
		return SM_RMPP_SEND;
	}
	if (s->finished)
		return s->last_ack == s->nseg && s->end_status == 0 ? SM_RMPP_DONE : SM_RMPP_FAILED;
	if (s->next > s->win_last || s->next > s->nseg)
		return SM_RMPP_IDLE;

	uint32_t seg = s->next++;

	if (seg > s->sent_max)
		s->sent_max = seg;
	struct sm_sa_hdr h = s->hdr;
	size_t off = (size_t)(seg - 1) * SM_SA_DATA_SIZE;
	size_t n = s->len > off ? s->len - off : 0;

	if (n > SM_SA_DATA_SIZE)
		n = SM_SA_DATA_SIZE;
	h.rmpp_version = SM_RMPP_VERSION;
	h.rmpp_type = SM_RMPP_TYPE_DATA;
	h.rmpp_resp_time = SM_RMPP_RESP_TIME_NONE;
	h.rmpp_flags = SM_RMPP_FLAG_ACTIVE;
	h.rmpp_status = 0;
	h.rmpp_data1 = seg;
	h.rmpp_data2 = 0;
	if (seg == 1) {
		h.rmpp_flags |= SM_RMPP_FLAG_FIRST;
		h.rmpp_data2 = (uint32_t)(s->len + (size_t)s->nseg * SM_RMPP_SA_HDR_PART);
	}
	if (seg == s->nseg) {
		h.rmpp_flags |= SM_RMPP_FLAG_LAST;
		h.rmpp_data2 = (uint32_t)(n + SM_RMPP_SA_HDR_PART);
	}
	memset(mad, 0, SM_SA_MAD_SIZE);
	sm_sa_hdr_encode(&h, mad);
	if (n)
		memcpy(mad + SM_SA_HDR_SIZE, s->data + off, n);
	/* the timer covers the window: armed when its last segment leaves */
	if (seg == s->win_last || seg == s->nseg)
		s->due_us = now_us + s->timeout_us;
	return SM_RMPP_SEND;
}

static enum sm_rmpp_act send_fail(struct sm_rmpp_send *s, uint8_t status, bool abort)
{
	s->finished = true;
	s->end_status = status ? status : SM_RMPP_STATUS_UNSPEC;
	s->abort_pending = abort;
	s->due_us = 0;
	return SM_RMPP_FAILED;
}

enum sm_rmpp_act sm_rmpp_send_input(struct sm_rmpp_send *s, const struct sm_sa_hdr *h, uint64_t now_us)
{
	if (s->finished)
		return s->end_status == 0 ? SM_RMPP_DONE : SM_RMPP_FAILED;
	if (h->rmpp_version != SM_RMPP_VERSION)
		return send_fail(s, SM_RMPP_STATUS_UNV, true);
	switch (h->rmpp_type) {
	case SM_RMPP_TYPE_STOP:
	case SM_RMPP_TYPE_ABORT:
		return send_fail(s, h->rmpp_status, false);
	case SM_RMPP_TYPE_ACK:
		break;
	default:
		return send_fail(s, SM_RMPP_STATUS_BADT, true);
	}
	uint32_t seg = h->rmpp_data1, nwl = h->rmpp_data2;

	if (seg > s->nseg || seg > s->sent_max)
		return send_fail(s, SM_RMPP_STATUS_S2B, true);
	if (seg < s->last_ack)
		return SM_RMPP_IDLE;   /* an old ACK overtaken by a newer one */
	if (nwl < seg)
		return send_fail(s, SM_RMPP_STATUS_W2S, true);
	if (seg == s->nseg) {
		s->last_ack = seg;
		s->finished = true;
		s->due_us = 0;
		return SM_RMPP_DONE;
	}
	if (h->rmpp_resp_time < SM_RMPP_RESP_TIME_NONE) {
		/* the receiver says how long it takes to answer (4.096 us * 2^RRespTime): wait at least that */
		uint64_t t = h->rmpp_resp_time > 21 ? SM_RMPP_MAX_WAIT_US : (4096ull << h->rmpp_resp_time) / 1000u;

		s->timeout_us = t > s->base_timeout_us ? t : s->base_timeout_us;
	}
	if (seg > s->last_ack)
		s->retries = 0;   /* progress */
	s->last_ack = seg;
	if (nwl > s->nseg)
		nwl = s->nseg;
	if (nwl - seg > SM_RMPP_MAX_WINDOW)
		nwl = seg + SM_RMPP_MAX_WINDOW;   /* a huge window would send a whole answer in one go */
	if (nwl > s->win_last)
		s->win_last = nwl;
	if (s->next <= seg)
		s->next = seg + 1;
	/* more to send in the window: sm_rmpp_send_next arms the timer at its end */
	if (s->next <= s->win_last && s->next <= s->nseg)
		s->due_us = 0;
	else
		s->due_us = now_us + s->timeout_us;
	return SM_RMPP_IDLE;
}

enum sm_rmpp_act sm_rmpp_send_timeout(struct sm_rmpp_send *s, uint64_t now_us)
{
	if (s->finished)
		return s->end_status == 0 ? SM_RMPP_DONE : SM_RMPP_FAILED;
	if (!s->due_us || now_us < s->due_us)
		return SM_RMPP_IDLE;
	if (s->retries >= s->max_retries)
		return send_fail(s, SM_RMPP_STATUS_TMR, true);
	s->retries++;
	s->next = s->last_ack + 1;
	s->due_us = 0;
	return SM_RMPP_IDLE;
}

/* ---- receiver ---- */

void sm_rmpp_recv_init(struct sm_rmpp_recv *r, size_t max_len, uint32_t window, uint64_t idle_us,
		       uint64_t now_us)
{
	memset(r, 0, sizeof(*r));
	r->max_len = max_len;
	r->window = window ? window : 1;
	r->idle_us = idle_us;
	r->seen_us = now_us;
}

void sm_rmpp_recv_free(struct sm_rmpp_recv *r)
{
	if (!r)
		return;
	free(r->buf);
	r->buf = NULL;
	r->len = r->cap = 0;
}

static enum sm_rmpp_act recv_end(struct sm_rmpp_recv *r, const struct sm_sa_hdr *h, uint8_t type,
				 uint8_t status, uint8_t out[SM_SA_MAD_SIZE], bool *sent)
{
	r->finished = true;
	sm_rmpp_control(h, type, status, 0, 0, out);
	*sent = true;
	return SM_RMPP_FAILED;
}

static void recv_ack(struct sm_rmpp_recv *r, const struct sm_sa_hdr *h, uint8_t out[SM_SA_MAD_SIZE], bool *sent)
{
	sm_rmpp_control(h, SM_RMPP_TYPE_ACK, 0, r->last, r->win_last, out);
	*sent = true;
}

enum sm_rmpp_act sm_rmpp_recv_input(struct sm_rmpp_recv *r, const struct sm_sa_hdr *h, const uint8_t *mad,
				    size_t len, uint64_t now_us, uint8_t out[SM_SA_MAD_SIZE], bool *sent)
{
	*sent = false;
	if (r->finished) {
		/* whole, and the sender resends: our last ACK was lost, say it again */
		if (r->complete && h->rmpp_type == SM_RMPP_TYPE_DATA && h->rmpp_data1 && h->rmpp_data1 <= r->last)
			recv_ack(r, h, out, sent);
		return r->complete ? SM_RMPP_IDLE : SM_RMPP_FAILED;
	}
	if (h->rmpp_type == SM_RMPP_TYPE_ABORT || h->rmpp_type == SM_RMPP_TYPE_STOP) {
		r->finished = true;
		return SM_RMPP_FAILED;
	}
	if (h->rmpp_version != SM_RMPP_VERSION)
		return recv_end(r, h, SM_RMPP_TYPE_ABORT, SM_RMPP_STATUS_UNV, out, sent);
	if (h->rmpp_type != SM_RMPP_TYPE_DATA)
		return recv_end(r, h, SM_RMPP_TYPE_ABORT, SM_RMPP_STATUS_BADT, out, sent);
	if (len < SM_SA_MAD_SIZE)
		return recv_end(r, h, SM_RMPP_TYPE_ABORT, SM_RMPP_STATUS_BAD_LEN, out, sent);

	uint32_t seg = h->rmpp_data1;
	bool first = h->rmpp_flags & SM_RMPP_FLAG_FIRST, last = h->rmpp_flags & SM_RMPP_FLAG_LAST;

	if ((seg == 1) != first)
		return recv_end(r, h, SM_RMPP_TYPE_ABORT, SM_RMPP_STATUS_BAD_SEG, out, sent);
	if (seg <= r->last) {   /* a duplicate: our ACK was lost, say it again */
		if (seg == 0)
			return recv_end(r, h, SM_RMPP_TYPE_ABORT, SM_RMPP_STATUS_BAD_SEG, out, sent);
		r->seen_us = now_us;
		recv_ack(r, h, out, sent);
		return SM_RMPP_IDLE;
	}
	if (r->last && seg > r->win_last)
		return recv_end(r, h, SM_RMPP_TYPE_ABORT, SM_RMPP_STATUS_S2B, out, sent);
	if (seg != r->last + 1)
		return SM_RMPP_IDLE;   /* ahead of order: dropped, resent after the sender's timeout */

	size_t n = SM_SA_DATA_SIZE;

	if (first) {
		r->hdr = *h;
		/* PayloadLength of the first segment announces the whole: refuse early what will not fit */
		if (h->rmpp_data2 && h->rmpp_data2 / SM_RMPP_SEG_PAYLOAD * SM_SA_DATA_SIZE > r->max_len)
			return recv_end(r, h, SM_RMPP_TYPE_STOP, SM_RMPP_STATUS_RESX, out, sent);
	}
	if (last) {
		if (h->rmpp_data2 < SM_RMPP_SA_HDR_PART || h->rmpp_data2 > SM_RMPP_SEG_PAYLOAD)
			return recv_end(r, h, SM_RMPP_TYPE_ABORT, SM_RMPP_STATUS_BAD_LEN, out, sent);
		n = h->rmpp_data2 - SM_RMPP_SA_HDR_PART;
	}
	if (r->len + n > r->max_len)
		return recv_end(r, h, SM_RMPP_TYPE_STOP, SM_RMPP_STATUS_RESX, out, sent);
	if (r->len + SM_SA_DATA_SIZE > r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 4 * SM_SA_DATA_SIZE;
		uint8_t *nb;

		if (cap > r->max_len)
			cap = r->max_len < r->len + SM_SA_DATA_SIZE ? r->len + SM_SA_DATA_SIZE : r->max_len;
		nb = realloc(r->buf, cap);
		if (!nb)
			return recv_end(r, h, SM_RMPP_TYPE_STOP, SM_RMPP_STATUS_RESX, out, sent);
		r->buf = nb;
		r->cap = cap;
	}
	memcpy(r->buf + r->len, mad + SM_SA_HDR_SIZE, n);
	r->len += n;
	r->last = seg;
	r->seen_us = now_us;
	if (first)
		r->win_last = 1;   /* the sender's first window is segment 1 alone: ACK it to open ours */
	if (last) {
		r->finished = r->complete = true;
		r->win_last = seg;
		recv_ack(r, h, out, sent);
		return SM_RMPP_DONE;
	}
	if (seg == r->win_last) {
		r->win_last = seg + r->window;
		recv_ack(r, h, out, sent);
	}
	return SM_RMPP_IDLE;
}

uint8_t *sm_rmpp_whole(const struct sm_sa_hdr *hdr, const uint8_t *data, size_t len, size_t *mlen)
{
	struct sm_sa_hdr h = *hdr;
	uint8_t *m;

	*mlen = SM_SA_HDR_SIZE + len;
	m = calloc(1, *mlen);
	if (!m)
		return NULL;
	h.rmpp_version = SM_RMPP_VERSION;
	h.rmpp_type = SM_RMPP_TYPE_DATA;
	h.rmpp_resp_time = SM_RMPP_RESP_TIME_NONE;
	h.rmpp_flags = SM_RMPP_FLAG_ACTIVE;
	h.rmpp_status = 0;
	h.rmpp_data1 = h.rmpp_data2 = 0;
	sm_sa_hdr_encode(&h, m);
	if (len)
		memcpy(m + SM_SA_HDR_SIZE, data, len);
	return m;
}
