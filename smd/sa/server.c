/* SPDX-License-Identifier: MIT */
/*
 * DOC: the per-plane SA server (server.h)
 *
 * Data flow, all on the loop's thread: on_readable() reads up to
 * READ_BATCH MADs; each is decoded and either (a) an RMPP ACK/STOP/ABORT
 * for one of our transfers, (b) a segment of a multi-segment request
 * (reassembled, answered when whole), (c) a ReportResp, or (d) a request,
 * queued on its requester's slot. serve() then answers round robin over
 * the requesters with something queued, SERVE_BATCH per callback (sends held: gsi.h); if work
 * is left the kick timer (due now) brings us back after the loop has run
 * its other sources. Every timed thing (RMPP resends and idle reassemblies,
 * Report retries, leases, sends that said -EAGAIN) hangs off one timer,
 * rearmed at the earliest due time.
 *
 * Other threads: sm_sa_publish(), sm_sa_set_self(), sm_sa_notice() leave
 * their input under sa->lock and write the eventfd; on_wake() takes it on
 * the loop thread. sm_sa_stats() copies sa->pub_stats (under the lock),
 * refreshed at the end of every callback. So the snapshot in use (sa->snap)
 * is only touched by the loop thread and a query keeps its reference until
 * the batch ends.
 */
#include "sa/server_priv.h"
#include "sa/dyn.h"
#include "sa/path.h"
#include "sa/records.h"
#include "sa/rmpp.h"
#include "sa/sa_mad.h"
#include "lib/clock.h"
#include "lib/loop.h"
#include "model/fabric.h"
#include "sm/snapshot.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

/* ---- counters ---- */

/* Count key in a table of {key, n}: its entry or the first unused one (a full table drops new keys). */
#define COUNT_IN(tab, field, key)                                                         \
	do {                                                                              \
		for (size_t i_ = 0; i_ < sizeof(tab) / sizeof((tab)[0]); i_++)           \
			if (!(tab)[i_].n || (tab)[i_].field == (key)) {                   \
				(tab)[i_].field = (key), (tab)[i_].n++;                   \
				break;                                                    \
			}                                                                 \
	} while (0)

static void count_attr(struct sm_sa *sa, uint16_t attr) { COUNT_IN(sa->st.by_attr, attr_id, attr); }
static void count_status(struct sm_sa *sa, uint16_t status) { COUNT_IN(sa->st.by_status, status, status); }

uint64_t sm_sa_thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void publish_stats(struct sm_sa *sa)
{
	pthread_mutex_lock(&sa->lock);
	sa->pub_stats = sa->st;
	pthread_mutex_unlock(&sa->lock);
}

/* ---- sending, with -EAGAIN retried from the timer ---- */

static void send_mad(struct sm_sa *sa, const uint8_t *mad, size_t len, const struct sm_gsi_addr *to)
{
	int rc = sa->retry_n ? -EAGAIN : sm_gsi_send(sa->gsi, mad, len, to);   /* keep the order */

	if (rc != -EAGAIN && rc != -ENOBUFS) {
		if (rc < 0)
			sa->st.dropped++;
		return;
	}
	if (sa->retry_n == MAX_RETRY_Q || sa->retry_bytes + len > MAX_RETRY_BYTES) {
		sa->st.dropped++;
		return;
	}
	struct retry *r = &sa->retryq[(sa->retry_head + sa->retry_n) % MAX_RETRY_Q];

	r->mad = malloc(len);
	if (!r->mad) {
		sa->st.dropped++;
		return;
	}
	memcpy(r->mad, mad, len);
	r->len = len;
	r->to = *to;
	sa->retry_n++;
	sa->retry_bytes += len;
	sa->st.send_retried++;
	uint64_t due = sm_mono_us() + RETRY_US, cur = sa->timer ? sm_loop_timer_due(sa->timer) : 0;

	if (sa->timer && (!cur || cur > due))
		sm_loop_timer_set(sa->timer, due);
}

static void flush_retries(struct sm_sa *sa)
{
	while (sa->retry_n) {
		struct retry *r = &sa->retryq[sa->retry_head];
		int rc = sm_gsi_send(sa->gsi, r->mad, r->len, &r->to);

		if (rc == -EAGAIN || rc == -ENOBUFS)
			return;
		if (rc < 0)
			sa->st.dropped++;
		free(r->mad);
		r->mad = NULL;
		sa->retry_bytes -= r->len;
		sa->retry_head = (sa->retry_head + 1) % MAX_RETRY_Q;
		sa->retry_n--;
	}
}

/* ---- RMPP transfers out ---- */

static void rearm(struct sm_sa *sa);

static void xfer_end(struct sm_sa *sa, struct xfer *x, bool ok)
{
	if (ok)
		sa->st.rmpp_sent++;
	else
		sa->st.rmpp_aborted++;
	sa->send_bytes -= x->st.len;
	free(x->buf);
	memset(x, 0, sizeof(*x));
}

/* Send what the window allows; end the transfer when it is over. */
static void xfer_pump(struct sm_sa *sa, struct xfer *x, uint64_t now)
{
	uint8_t mad[SM_SA_MAD_SIZE];

	for (;;) {
		enum sm_rmpp_act a = sm_rmpp_send_next(&x->st, now, mad);

		if (a == SM_RMPP_SEND) {
			send_mad(sa, mad, sizeof(mad), &x->to);
			continue;
		}
		if (a != SM_RMPP_IDLE)
			xfer_end(sa, x, a == SM_RMPP_DONE);
		return;
	}
}

static bool same_peer(const struct sm_gsi_addr *a, const struct sm_gsi_addr *b)
{
	return a->lid == b->lid && a->qpn == b->qpn && (!a->grh || !b->grh || !memcmp(a->gid, b->gid, 16));
}

static struct xfer *xfer_find(struct sm_sa *sa, const struct sm_gsi_addr *from, uint64_t tid)
{
	for (size_t i = 0; i < MAX_SENDS; i++)
		if (sa->sends[i].used && sa->sends[i].tid == tid && same_peer(&sa->sends[i].to, from))
			return &sa->sends[i];
	return NULL;
}

/* ---- answering ---- */

/* A free transfer slot for len more bytes (the same request again, retried by the client, restarts its own). */
static struct xfer *xfer_slot(struct sm_sa *sa, const struct sm_sa_req *req, size_t len)
{
	struct xfer *x = xfer_find(sa, &req->from, req->hdr.tid);

	if (x)
		xfer_end(sa, x, false);
	for (size_t i = 0; i < MAX_SENDS && !x; i++)
		if (!sa->sends[i].used)
			x = &sa->sends[i];
	return x && sa->send_bytes + len <= MAX_SEND_BYTES ? x : NULL;
}

static void answer_hdr(const struct sm_sa_req *req, const struct sm_sa_ans *ans, size_t len, struct sm_sa_hdr *h)
{
	sm_sa_hdr_response(&req->hdr, h, ans->status);
	if (h->attr_id == SM_SA_ATTR_MULTIPATH_RECORD)
		h->attr_id = SM_SA_ATTR_PATH_RECORD;   /* o15-0.2.7 */
	h->attr_offset = len && ans->rec_size ? (uint16_t)(ans->rec_size / 8) : 0;
}

uint8_t *sm_sa_whole_msg(const struct sm_sa_req *req, const struct sm_sa_ans *ans, size_t *mlen)
{
	size_t len = ans->n * ans->rec_size;
	struct sm_sa_hdr h;

	if (len > SM_GSI_MAX_MSG - SM_SA_HDR_SIZE)
		return NULL;
	answer_hdr(req, ans, len, &h);
	return sm_rmpp_whole(&h, ans->buf, len, mlen);
}

void sm_sa_send_whole(struct sm_sa *sa, const struct sm_sa_req *req, const uint8_t *m, size_t mlen)
{
	count_status(sa, SM_SA_STATUS_OK);
	sa->st.answered++;
	send_mad(sa, m, mlen, &req->from);
}

void sm_sa_send_answer(struct sm_sa *sa, const struct sm_sa_req *req, struct sm_sa_ans *ans)
{
	struct sm_sa_hdr h;
	uint8_t mad[SM_SA_MAD_SIZE];
	bool table = req->hdr.method == SM_SA_GET_TABLE || req->hdr.method == SM_SA_GET_MULTI;
	bool segmented = table && ans->status == SM_SA_STATUS_OK && !(sa->gsi->flags & SM_GSI_KERNEL_RMPP);
	size_t len = ans->status == SM_SA_STATUS_OK ? ans->n * ans->rec_size : 0;
	uint64_t now = sm_mono_us();
	struct xfer *x = NULL;

	if ((!table && len > SM_SA_DATA_SIZE) || len > SM_GSI_MAX_MSG - SM_SA_HDR_SIZE ||
	    (segmented && len > SM_SA_DATA_SIZE && !(x = xfer_slot(sa, req, len)))) {
		/* no room to send it (a Get's one record always fits: records are at most 200 bytes) */
		struct sm_sa_ans none = { .status = SM_SA_STATUS_NO_RESOURCES };

		sm_sa_send_answer(sa, req, &none);
		return;
	}
	answer_hdr(req, ans, len, &h);
	count_status(sa, ans->status);
	sa->st.answered++;
	if (!table || ans->status != SM_SA_STATUS_OK) {
		memset(mad, 0, sizeof(mad));
		sm_sa_hdr_encode(&h, mad);
		if (len)
			memcpy(mad + SM_SA_HDR_SIZE, ans->buf, len);
		send_mad(sa, mad, sizeof(mad), &req->from);
		return;
	}
	if (!segmented) {
		/* the kernel segments: the whole message */
		size_t mlen;
		uint8_t *m = sm_sa_whole_msg(req, ans, &mlen);

		if (m)
			send_mad(sa, m, mlen, &req->from);
		else
			sa->st.dropped++;
		free(m);
		return;
	}
	if (!x) {
		/* one segment: sent without waiting for its ACK (a lost one is a lost answer: the client retries) */
		struct sm_rmpp_send one;

		sm_rmpp_send_init(&one, &h, ans->buf, len, 1, 0);
		sm_rmpp_send_next(&one, now, mad);
		/* as long as its records, as OpenSM sends it: a receiver counts records from the length */
		send_mad(sa, mad, SM_SA_HDR_SIZE + len, &req->from);
		return;
	}
	x->used = true;
	x->to = req->from;
	x->tid = req->hdr.tid;
	x->buf = ans->buf;     /* the records move to the transfer */
	ans->buf = NULL;
	ans->cap = ans->n = 0;
	sa->send_bytes += len;
	sm_rmpp_send_init(&x->st, &h, x->buf, len, (uint64_t)sa->cfg.rmpp_timeout_ms * 1000u,
			  sa->cfg.rmpp_retries);
	xfer_pump(sa, x, now);
	rearm(sa);
}

static void answer(struct sm_sa *sa, const struct sm_sa_hdr *h, const uint8_t *data, size_t len,
		   const struct sm_gsi_addr *from)
{
	struct sm_sa_req req = { .hdr = *h, .data = data, .len = len, .from = *from };
	struct sm_sa_ctx ctx = { .snap = sa->snap, .self = &sa->self, .dyn = sa->dyn, .now_us = sm_mono_us(),
				 .port_rm = sa->port_rm };
	bool table = h->method == SM_SA_GET_TABLE || h->method == SM_SA_GET_MULTI;

	req.trusted = sa->self.sm_key && h->sm_key == sa->self.sm_key;
	/* a table tried here up to SM_SA_LOOP_RECORDS; a larger one is built off the loop (server_table.c) */
	sa->ans.max_records = table ? SM_SA_LOOP_RECORDS : MAX_RECORDS;
	count_attr(sa, h->attr_id);
	int rc = sm_sa_query(&ctx, &req, &sa->ans);

	if (!rc && table && sa->ans.status == SM_SA_STATUS_NO_RESOURCES && !sm_sa_table_offload(sa, &req)) {
		sa->ans.max_records = MAX_RECORDS;   /* answered here after all */
		rc = sm_sa_query(&ctx, &req, &sa->ans);
	} else if (!rc && table && sa->ans.status == SM_SA_STATUS_NO_RESOURCES) {
		return;   /* the table thread has it (or it was answered BUSY) */
	}
	if (rc < 0) {
		sa->ans.status = SM_SA_STATUS_NO_RESOURCES;
		sa->ans.n = 0;
	}
	sm_sa_send_answer(sa, &req, &sa->ans);
	if (ctx.dyn && (h->method == SM_SA_SET || h->method == SM_SA_DELETE)) {
		rearm(sa);   /* a lease may have been added */
		if (h->attr_id == SM_SA_ATTR_MCMEMBER_RECORD && sa->cfg.mc_changed)
			sa->cfg.mc_changed(sa->cfg.mc_arg, sa);   /* the groups may have changed */
	}
}

/* ---- fair share ---- */

static uint32_t slot_of(const struct sm_gsi_addr *a)
{
	uint64_t k = a->lid;

	if (a->grh)
		k = sm_sa_get64(a->gid) * 0x9E3779B97F4A7C15ull ^ sm_sa_get64(a->gid + 8);
	k *= 0x9E3779B97F4A7C15ull;
	return (uint32_t)(k >> 40) & (N_SLOTS - 1);
}

static void busy(struct sm_sa *sa, const struct sm_sa_hdr *h, const struct sm_gsi_addr *from)
{
	struct sm_sa_req req = { .hdr = *h, .from = *from };
	struct sm_sa_ans a = { .status = SM_SA_STATUS_BUSY };

	sa->st.over_share++;
	count_attr(sa, h->attr_id);
	sm_sa_send_answer(sa, &req, &a);
}

static void enqueue(struct sm_sa *sa, const struct sm_sa_hdr *h, const uint8_t *mad,
		    const struct sm_gsi_addr *from)
{
	uint32_t i = slot_of(from);
	struct slot *s = &sa->slots[i];
	struct msg *m = sa->free_msgs;

	if ((s->queued >= sa->cfg.max_inflight_per_requester && sa->queued >= CONTENDED) || sa->queued >= MAX_QUEUED) {
		busy(sa, h, from);
		return;
	}
	if (m)
		sa->free_msgs = m->next;
	else if (!(m = malloc(sizeof(*m)))) {
		busy(sa, h, from);
		return;
	}
	m->next = NULL;
	m->from = *from;
	memcpy(m->mad, mad, SM_SA_MAD_SIZE);
	if (s->tail)
		s->tail->next = m;
	else
		s->head = m;
	s->tail = m;
	s->queued++;
	sa->queued++;
	if (!s->in_ring) {
		s->in_ring = true;
		sa->ring[(sa->ring_head + sa->ring_n++) % N_SLOTS] = i;
	}
}

/* Answer up to max queued requests, one per requester per turn. */
static void serve(struct sm_sa *sa, unsigned max)
{
	for (unsigned k = 0; k < max && sa->ring_n; k++) {
		uint32_t i = sa->ring[sa->ring_head];
		struct slot *s = &sa->slots[i];
		struct msg *m = s->head;
		struct sm_sa_hdr h;

		sa->ring_head = (sa->ring_head + 1) % N_SLOTS;
		sa->ring_n--;
		s->head = m->next;
		if (!s->head)
			s->tail = NULL;
		s->queued--;
		sa->queued--;
		if (s->queued)
			sa->ring[(sa->ring_head + sa->ring_n++) % N_SLOTS] = i;
		else
			s->in_ring = false;
		sm_sa_hdr_decode(m->mad, SM_SA_MAD_SIZE, &h);   /* checked when queued */
		answer(sa, &h, m->mad + SM_SA_HDR_SIZE, SM_SA_DATA_SIZE, &m->from);
		m->next = sa->free_msgs;
		sa->free_msgs = m;
	}
}

/* ---- reading ---- */

static void report_acked(struct sm_sa *sa, const struct sm_sa_hdr *h, const struct sm_gsi_addr *from);

static void on_rmpp_segment(struct sm_sa *sa, const struct sm_sa_hdr *h, const uint8_t *mad, size_t len,
			    const struct sm_gsi_addr *from)
{
	struct rxfer *r = NULL, *free_r = NULL;
	uint8_t out[SM_SA_MAD_SIZE];
	bool sent;
	uint64_t now = sm_mono_us();

	for (size_t i = 0; i < MAX_RECVS; i++) {
		if (!sa->recvs[i].used) {
			free_r = free_r ? free_r : &sa->recvs[i];
			continue;
		}
		if (sa->recvs[i].tid == h->tid && same_peer(&sa->recvs[i].from, from))
			r = &sa->recvs[i];
	}
	if (!r) {
		if (h->rmpp_type != SM_RMPP_TYPE_DATA || h->rmpp_data1 != 1) {
			sa->st.dropped++;   /* a segment of nothing we know (or its ABORT) */
			return;
		}
		if (!free_r) {
			sm_rmpp_control(h, SM_RMPP_TYPE_STOP, SM_RMPP_STATUS_RESX, 0, 0, out);
			send_mad(sa, out, sizeof(out), from);
			sa->st.rmpp_refused++;
			return;
		}
		r = free_r;
		r->used = true;
		r->from = *from;
		r->tid = h->tid;
		sm_rmpp_recv_init(&r->st, MAX_RECV_LEN, RECV_WINDOW, RECV_IDLE_US, now);
	}
	enum sm_rmpp_act a = sm_rmpp_recv_input(&r->st, h, mad, len, now, out, &sent);

	if (sent)
		send_mad(sa, out, sizeof(out), from);
	if (a == SM_RMPP_DONE) {
		struct sm_sa_hdr first = r->st.hdr;

		sa->st.rmpp_received++;
		first.rmpp_type = 0;
		first.rmpp_flags = 0;
		answer(sa, &first, r->st.buf, r->st.len, from);
	} else if (a == SM_RMPP_FAILED) {
		sa->st.rmpp_refused++;
	}
	if (a == SM_RMPP_DONE || a == SM_RMPP_FAILED) {
		sm_rmpp_recv_free(&r->st);
		memset(r, 0, sizeof(*r));
	}
	rearm(sa);
}

static void on_mad(struct sm_sa *sa, const uint8_t *mad, size_t len, const struct sm_gsi_addr *from)
{
	struct sm_sa_hdr h;

	sa->st.received++;
	if (sm_sa_hdr_decode(mad, len, &h) < 0) {
		sa->st.dropped++;
		return;
	}
	if (h.method & SM_SA_RESP) {
		if (h.method == SM_SA_REPORT_RESP)
			report_acked(sa, &h, from);
		else
			sa->st.dropped++;
		return;
	}
	if (len > SM_SA_MAD_SIZE) {
		/* a whole message the kernel reassembled (GetMulti): its SA data follows the header */
		if (!(sa->gsi->flags & SM_GSI_KERNEL_RMPP) || len - SM_SA_HDR_SIZE > MAX_RECV_LEN) {
			sa->st.dropped++;
			return;
		}
		sa->st.rmpp_received++;
		answer(sa, &h, mad + SM_SA_HDR_SIZE, len - SM_SA_HDR_SIZE, from);
		return;
	}
	if (len < SM_SA_MAD_SIZE) {
		struct sm_sa_ans a = { .status = SM_SA_STATUS_REQ_INVALID };
		struct sm_sa_req req = { .hdr = h, .from = *from };

		count_attr(sa, h.attr_id);
		sm_sa_send_answer(sa, &req, &a);   /* truncated: answered, never read past len */
		return;
	}
	if ((h.rmpp_flags & SM_RMPP_FLAG_ACTIVE) && !(sa->gsi->flags & SM_GSI_KERNEL_RMPP)) {
		if (h.rmpp_type == SM_RMPP_TYPE_DATA) {
			on_rmpp_segment(sa, &h, mad, len, from);
			return;
		}
		struct xfer *x = xfer_find(sa, from, h.tid);

		if (!x) {
			struct rxfer *r = NULL;

			for (size_t i = 0; i < MAX_RECVS && !r; i++)
				if (sa->recvs[i].used && sa->recvs[i].tid == h.tid &&
				    same_peer(&sa->recvs[i].from, from))
					r = &sa->recvs[i];
			if (r)
				on_rmpp_segment(sa, &h, mad, len, from);   /* the sender's ABORT/STOP */
			else
				sa->st.dropped++;   /* e.g. the ACK of a one-segment answer */
			return;
		}
		sm_rmpp_send_input(&x->st, &h, sm_mono_us());
		xfer_pump(sa, x, sm_mono_us());
		rearm(sa);
		return;
	}
	enqueue(sa, &h, mad, from);
}

static void kick(struct sm_sa *sa)
{
	if (sa->kick)
		sm_loop_timer_set(sa->kick, 1);   /* due at once, after the loop's other sources */
}

static void run(struct sm_sa *sa)
{
	/*
	 * The thread's CPU clock is a system call (no vDSO): two per batch were
	 * a fifth of the loop's calls under ibsim. Timed every CPU_SAMPLE-th
	 * batch, counted as CPU_SAMPLE batches.
	 */
	bool timed = (sa->runs++ % CPU_SAMPLE) == 0;
	uint64_t cpu0 = timed ? sm_sa_thread_cpu_ns() : 0;
	bool more = false;
	unsigned n;

	for (n = 0; n < READ_BATCH && sa->queued < MAX_QUEUED; n++) {
		struct sm_gsi_addr from;
		size_t len = 0;
		int rc = sm_gsi_recv(sa->gsi, sa->rbuf, sa->rcap, &len, &from);

		if (rc == -EAGAIN)
			break;
		if (rc < 0) {
			sa->st.dropped++;   /* -EMSGSIZE (dropped by the transport) or an error */
			if (rc != -EMSGSIZE)
				break;
			continue;
		}
		on_mad(sa, sa->rbuf, len, &from);
	}
	more = n == READ_BATCH || sa->queued >= MAX_QUEUED;
	(void)sm_gsi_hold(sa->gsi, true);   /* the batch's answers leave together (sendmmsg under ibsim) */
	serve(sa, SERVE_BATCH);
	int lost = sm_gsi_hold(sa->gsi, false);
	sa->st.dropped += lost > 0 ? (uint64_t)lost : 0;
	if (sa->ring_n)
		more = true;
	if (more)
		kick(sa);
	if (timed) {
		uint64_t d = sm_sa_thread_cpu_ns() - cpu0;

		/* less the clock's own cost, which the sample holds once and the others not at all */
		sa->st.cpu_ns += (d > sa->clock_ns ? d - sa->clock_ns : 0) * CPU_SAMPLE;
	}
	publish_stats(sa);
}

static void on_readable(struct sm_loop_src *s, int fd, unsigned revents, void *arg)
{
	(void)s;
	(void)fd;
	(void)revents;
	run(arg);
}

static void on_kick(struct sm_loop_src *s, void *arg)
{
	struct sm_sa *sa = arg;

	(void)s;
	run(sa);
	if (!sa->io && !sm_loop_timer_due(sa->kick))
		sm_loop_timer_set(sa->kick, sm_mono_us() + POLL_US);   /* no fd: poll recv */
}

/* ---- Reports ---- */

static void report_send(struct sm_sa *sa, struct report *r, uint64_t now)
{
	uint8_t mad[SM_SA_MAD_SIZE];

	sm_sa_report_encode(r->tid, r->notice, mad);
	r->tries++;
	r->due_us = now + (uint64_t)sa->cfg.report_timeout_ms * 1000u;
	sa->st.reports_sent++;
	send_mad(sa, mad, sizeof(mad), &r->to);
}

static void report_acked(struct sm_sa *sa, const struct sm_sa_hdr *h, const struct sm_gsi_addr *from)
{
	for (size_t i = 0; i < MAX_REPORTS; i++) {
		struct report *r = &sa->reports[i];

		/* the low 32 bits: the kernel (and umad2sim) put their own in the high half of a request's TID */
		if (r->used && (uint32_t)r->tid == (uint32_t)h->tid && r->to.lid == from->lid) {
			sa->st.reports_acked++;
			memset(r, 0, sizeof(*r));
			return;
		}
	}
	sa->st.dropped++;   /* late (already given up) or never ours */
}

/* A Notice (80 bytes) to every matching subscription. */
static void forward_notice(struct sm_sa *sa, const uint8_t notice[SM_SA_NOTICE_SIZE])
{
	struct sm_sa_report_dest dests[64];
	size_t n = sm_sa_dyn_match(sa->dyn, notice, dests, 64), k = 0;
	uint64_t now = sm_mono_us();

	if (n > 64) {
		sa->st.reports_given_up += n - 64;
		n = 64;
	}
	for (size_t i = 0; i < MAX_REPORTS && k < n; i++) {
		struct report *r = &sa->reports[i];

		if (r->used)
			continue;
		r->used = true;
		r->sub_id = dests[k].sub_id;
		r->to = dests[k].to;
		r->tries = 0;
		r->tid = REPORT_TID_BASE | (uint32_t)++sa->report_tid;
		memcpy(r->notice, notice, SM_SA_NOTICE_SIZE);
		report_send(sa, r, now);
		k++;
	}
	sa->st.reports_given_up += n - k;   /* no room: given up at once */
}

/* ---- the one timer ---- */

static void due_min(uint64_t *m, uint64_t t)
{
	if (t && (!*m || t < *m))
		*m = t;
}

static void rearm(struct sm_sa *sa)
{
	uint64_t m = 0;

	for (size_t i = 0; i < MAX_SENDS; i++)
		if (sa->sends[i].used)
			due_min(&m, sm_rmpp_send_due(&sa->sends[i].st));
	for (size_t i = 0; i < MAX_RECVS; i++)
		if (sa->recvs[i].used)
			due_min(&m, sa->recvs[i].st.seen_us + sa->recvs[i].st.idle_us);
	for (size_t i = 0; i < MAX_REPORTS; i++)
		if (sa->reports[i].used)
			due_min(&m, sa->reports[i].due_us);
	due_min(&m, sm_sa_dyn_next_expiry(sa->dyn));
	if (sa->retry_n)
		due_min(&m, sm_mono_us() + RETRY_US);
	if (sa->timer)
		sm_loop_timer_set(sa->timer, m);
}

static void on_timer(struct sm_loop_src *s, void *arg)
{
	struct sm_sa *sa = arg;
	uint64_t now = sm_mono_us();

	(void)s;
	flush_retries(sa);
	for (size_t i = 0; i < MAX_SENDS; i++) {
		struct xfer *x = &sa->sends[i];

		if (!x->used || !sm_rmpp_send_due(&x->st) || now < sm_rmpp_send_due(&x->st))
			continue;
		sm_rmpp_send_timeout(&x->st, now);
		xfer_pump(sa, x, now);
	}
	for (size_t i = 0; i < MAX_RECVS; i++) {
		struct rxfer *r = &sa->recvs[i];

		if (r->used && sm_rmpp_recv_expired(&r->st, now)) {
			sa->st.rmpp_refused++;
			sm_rmpp_recv_free(&r->st);
			memset(r, 0, sizeof(*r));
		}
	}
	for (size_t i = 0; i < MAX_REPORTS; i++) {
		struct report *r = &sa->reports[i];

		if (!r->used || now < r->due_us)
			continue;
		if (r->tries > sa->cfg.report_retries) {
			sa->st.reports_given_up++;
			sm_sa_dyn_unsubscribe_id(sa->dyn, r->sub_id);
			memset(r, 0, sizeof(*r));
			continue;
		}
		report_send(sa, r, now);
	}
	sm_sa_dyn_expire(sa->dyn, now);
	rearm(sa);
	publish_stats(sa);
}

/* ---- events: snapshots, self, notices ---- */

struct gid_ev {
	struct sm_sa *sa;
	const struct sm_snapshot *snap;
};

static void on_gid_change(uint64_t guid, bool in, void *arg)
{
	struct gid_ev *e = arg;
	uint8_t notice[SM_SA_NOTICE_SIZE], details[54] = { 0 }, issuer[16];

	sm_sa_gid_make(details + 6, e->snap->subnet_prefix, guid);
	sm_sa_gid_make(issuer, e->snap->subnet_prefix, e->sa->self.port_guid);
	sm_sa_notice_make(notice, 3, in ? SM_TRAP_GID_IN : SM_TRAP_GID_OUT, e->snap->sm_lid, issuer, details);
	forward_notice(e->sa, notice);
}

static void install_snapshot(struct sm_sa *sa, const struct sm_snapshot *snap)
{
	uint64_t *g = NULL;
	size_t n = 0;

	if (snap && sm_sa_snap_port_guids(snap, &g, &n) == 0) {
		struct gid_ev e = { sa, snap };

		/* the first snapshot is the SA's start: nobody has subscribed before it */
		if (sa->snap && sm_sa_dyn_subs(sa->dyn))
			sm_sa_guid_diff(sa->guids, sa->n_guids, g, n, on_gid_change, &e);
		free(sa->guids);
		sa->guids = g;
		sa->n_guids = n;
	}
	sm_snapshot_unref(sa->snap);
	sa->snap = snap;
	free(sa->port_rm);
	sa->port_rm = snap ? sm_sa_port_rm_build(snap) : NULL;   /* NULL (no memory): paths compute it */
}

static void on_wake(struct sm_loop_src *s, int fd, unsigned revents, void *arg)
{
	struct sm_sa *sa = arg;
	uint64_t v;
	const struct sm_snapshot *snap = NULL;
	bool new_snap, new_self;
	uint8_t notices[MAX_NOTICES][64];
	unsigned n;

	(void)s;
	(void)revents;
	(void)!read(fd, &v, sizeof(v));
	pthread_mutex_lock(&sa->lock);
	new_snap = sa->snap_pending;
	snap = sa->pending_snap;
	sa->pending_snap = NULL;
	sa->snap_pending = false;
	new_self = sa->self_pending;
	if (new_self)
		sa->self = sa->pending_self;
	sa->self_pending = false;
	n = sa->n_notices;
	memcpy(notices, sa->notices, n * 64);
	sa->n_notices = 0;
	pthread_mutex_unlock(&sa->lock);
	if (new_snap)
		install_snapshot(sa, snap);
	sm_sa_table_done(sa);
	for (unsigned i = 0; i < n; i++) {
		uint8_t notice[SM_SA_NOTICE_SIZE];

		memcpy(notice, notices[i], 64);
		sm_sa_snap_gid_of_lid(sa->snap, sm_sa_get16(notices[i] + 6), notice + 64);
		forward_notice(sa, notice);
	}
	rearm(sa);
	publish_stats(sa);
}

static void wake(struct sm_sa *sa)
{
	uint64_t one = 1;

	(void)!write(sa->wake_fd, &one, sizeof(one));
}

/* ---- API ---- */

int sm_sa_new(const struct sm_sa_cfg *cfg, struct sm_gsi *gsi, struct sm_loop *loop, struct sm_sa **out,
	      char *err, size_t errlen)
{
	struct sm_sa *sa = calloc(1, sizeof(*sa));
	int rc = -ENOMEM, fd;

	*out = NULL;
	if (!sa) {
		sm_gsi_close(gsi);
		snprintf(err, errlen, "SA of plane %u: out of memory", cfg->plane);
		return -ENOMEM;
	}
	sa->cfg = *cfg;
	if (!sa->cfg.max_inflight_per_requester)
		sa->cfg.max_inflight_per_requester = 16;
	if (!sa->cfg.report_retries)
		sa->cfg.report_retries = 3;
	if (!sa->cfg.report_timeout_ms)
		sa->cfg.report_timeout_ms = 200;
	if (!sa->cfg.rmpp_timeout_ms)
		sa->cfg.rmpp_timeout_ms = 200;
	if (!sa->cfg.rmpp_retries)
		sa->cfg.rmpp_retries = 3;
	sa->self = cfg->self;
	sa->gsi = gsi;
	sa->clock_ns = UINT64_MAX;
	for (int i = 0; i < 8; i++) {   /* what reading the thread's CPU clock twice costs (run()) */
		uint64_t t0 = sm_sa_thread_cpu_ns(), t1 = sm_sa_thread_cpu_ns();

		if (t1 - t0 < sa->clock_ns)
			sa->clock_ns = t1 - t0;
	}
	sa->loop = loop;
	sa->wake_fd = -1;
	pthread_mutex_init(&sa->lock, NULL);
	sa->rcap = SM_SA_HDR_SIZE + MAX_RECV_LEN;
	sa->rbuf = malloc(sa->rcap);
	sa->slots = calloc(N_SLOTS, sizeof(*sa->slots));
	sa->ring = calloc(N_SLOTS, sizeof(*sa->ring));
	if (!sa->rbuf || !sa->slots || !sa->ring || sm_sa_dyn_new(NULL, &sa->dyn) < 0) {
		snprintf(err, errlen, "SA of plane %u: out of memory", cfg->plane);
		goto fail;
	}
	sa->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (sa->wake_fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "SA of plane %u: eventfd: %s", cfg->plane, strerror(-rc));
		goto fail;
	}
	fd = sm_gsi_fd(gsi);
	if ((fd >= 0 && (rc = sm_loop_io_add(loop, fd, on_readable, sa, &sa->io)) < 0) ||
	    (rc = sm_loop_io_add(loop, sa->wake_fd, on_wake, sa, &sa->wake_src)) < 0 ||
	    (rc = sm_loop_timer_add(loop, on_kick, sa, &sa->kick)) < 0 ||
	    (rc = sm_loop_timer_add(loop, on_timer, sa, &sa->timer)) < 0) {
		snprintf(err, errlen, "SA of plane %u: event loop: %s", cfg->plane, strerror(-rc));
		goto fail;
	}
	if (fd < 0)
		sm_loop_timer_set(sa->kick, sm_mono_us() + POLL_US);
	*out = sa;
	return 0;
fail:
	sm_sa_free(sa);
	return rc;
}

void sm_sa_publish(struct sm_sa *sa, const struct sm_snapshot *s)
{
	const struct sm_snapshot *old;

	s = sm_snapshot_ref(s);
	pthread_mutex_lock(&sa->lock);
	old = sa->pending_snap;
	sa->pending_snap = s;
	sa->snap_pending = true;
	pthread_mutex_unlock(&sa->lock);
	sm_snapshot_unref(old);   /* published and replaced before the loop took it */
	wake(sa);
}

void sm_sa_set_self(struct sm_sa *sa, const struct sm_sa_self *self)
{
	pthread_mutex_lock(&sa->lock);
	sa->pending_self = *self;
	sa->self_pending = true;
	pthread_mutex_unlock(&sa->lock);
	wake(sa);
}

void sm_sa_notice(struct sm_sa *sa, const uint8_t notice[64])
{
	pthread_mutex_lock(&sa->lock);
	if (sa->n_notices < MAX_NOTICES)
		memcpy(sa->notices[sa->n_notices++], notice, 64);
	else
		sa->notices_lost++;   /* more than MAX_NOTICES between two turns of the loop */
	pthread_mutex_unlock(&sa->lock);
	wake(sa);
}

void sm_sa_stats(struct sm_sa *sa, struct sm_sa_stats *out)
{
	pthread_mutex_lock(&sa->lock);
	*out = sa->pub_stats;
	out->reports_given_up += sa->notices_lost;
	pthread_mutex_unlock(&sa->lock);
}

struct sm_sa_dyn *sm_sa_dyn(struct sm_sa *sa)
{
	return sa->dyn;
}

void sm_sa_free(struct sm_sa *sa)
{
	if (!sa)
		return;
	sm_sa_table_free(sa);   /* before anything it may still send through */
	sm_loop_remove(sa->io);
	sm_loop_remove(sa->wake_src);
	sm_loop_remove(sa->kick);
	sm_loop_remove(sa->timer);
	if (sa->wake_fd >= 0)
		close(sa->wake_fd);
	for (size_t i = 0; sa->slots && i < N_SLOTS; i++) {
		for (struct msg *m = sa->slots[i].head, *nx; m; m = nx) {
			nx = m->next;
			free(m);
		}
	}
	for (struct msg *m = sa->free_msgs, *nx; m; m = nx) {
		nx = m->next;
		free(m);
	}
	for (size_t i = 0; i < MAX_SENDS; i++)
		free(sa->sends[i].buf);
	for (size_t i = 0; i < MAX_RECVS; i++)
		sm_rmpp_recv_free(&sa->recvs[i].st);
	for (unsigned i = 0; i < sa->retry_n; i++)
		free(sa->retryq[(sa->retry_head + i) % MAX_RETRY_Q].mad);
	sm_snapshot_unref(sa->snap);
	free(sa->port_rm);
	sm_snapshot_unref(sa->pending_snap);
	sm_sa_ans_free(&sa->ans);
	sm_sa_dyn_free(sa->dyn);
	sm_gsi_close(sa->gsi);
	pthread_mutex_destroy(&sa->lock);
	free(sa->guids);
	free(sa->rbuf);
	free(sa->slots);
	free(sa->ring);
	free(sa);
}
