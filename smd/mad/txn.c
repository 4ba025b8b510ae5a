/* SPDX-License-Identifier: MIT */
/*
 * DOC: SMP transactions (implementation)
 *
 * Owns: a pool of request records (array, index-linked, grows by doubling;
 * indices are stable, pointers are not across a submit), destination
 * buckets, a FIFO of buckets that may send, a TID ring and a timeout heap.
 *
 *  - Destination buckets: a request's destination key hashes to one of
 *    NBUCKETS buckets; each keeps a FIFO of waiting requests and the number
 *    on the wire. Two destinations sharing a bucket share its limit, which
 *    only makes the limit stricter, never looser.
 *  - Ready FIFO: buckets with waiting requests and room under per_dest.
 *    dispatch() pops a bucket, sends its head request and re-queues the
 *    bucket at the tail while it has more and room: round-robin over
 *    destinations, FIFO within one, O(1) per send.
 *  - TID ring: TIDs are a 32-bit counter assigned at the first send;
 *    ring[tid % TID_RING] remembers what became of the request (in flight,
 *    answered, gave up) so late and duplicate answers are told apart from
 *    unknown ones. A TID whose ring slot is still in flight is skipped.
 *    Only the low 32 bits are compared: the kernel's umad layer owns the
 *    high 32 bits of the TID of a request.
 *  - Timeout heap: (deadline, request, generation) with lazy deletion: a
 *    completed or re-sent request bumps its generation, stale heap entries
 *    are skipped when they surface.
 *
 * Invariants: outstanding == sum of bucket.out <= cfg.window; bucket.out <=
 * cfg.per_dest; a request is in exactly one of: free list, a bucket's
 * waiting FIFO, in flight; its callback runs once, after its record was
 * released (the callback sees copies), so callbacks may submit freely.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mad/txn.h"
#include "lib/mix.h"
#include "lib/clock.h"

#define NONE UINT32_MAX
#define NBUCKETS 4096u
#define TID_RING 65536u
#define DRAIN_MAX 256           /* MADs handled per round before looking at timers again */
#define TICK_EVERY 16           /* MADs of one drain that share a clock reading */

enum req_state { R_FREE, R_WAITING, R_INFLIGHT };
enum tid_fate { T_FREE, T_INFLIGHT, T_ANSWERED, T_GAVEUP };

struct req {
	struct sm_smp smp;
	sm_txn_cb cb;
	void *ctx;
	uint64_t sent_us;          /* time of the latest send */
	uint64_t ans_first;        /* e->st.completed at the first send */
	uint64_t ans_sent;         /* ... at the latest send */
	uint32_t next;             /* free list / bucket FIFO link */
	uint32_t tid;
	uint32_t bucket;
	uint32_t gen;
	uint32_t timeout_ms;       /* current try */
	uint16_t dlid;
	uint8_t state;
	uint8_t slot;              /* attribute stats slot */
	uint8_t tries;
	uint8_t max_tries;
	uint8_t fixed;             /* retries given by the submitter: never adapted */
	uint8_t fixed_to;          /* timeout given by the submitter: never adapted */
	int last_err;              /* send error of the latest try, 0 if it went out */
};

struct bucket {
	uint32_t head, tail;       /* waiting FIFO */
	uint16_t out;              /* on the wire */
	uint8_t in_ready;
};

struct tid_ent {
	uint32_t tid;
	uint32_t req;
	uint8_t fate;
};

struct tmo {
	uint64_t deadline;
	uint32_t req;
	uint32_t gen;
};

struct sm_txn {
	struct sm_transport *t;
	struct sm_txn_cfg cfg;
	struct req *reqs;
	uint32_t n_reqs, cap_reqs, free_head;
	struct bucket *buckets;
	uint32_t *ready;           /* ring of bucket indices, NBUCKETS entries */
	uint32_t ready_head, ready_len;
	struct tid_ent *tids;
	uint32_t next_tid;
	struct tmo *heap;
	uint32_t heap_len, heap_cap;
	uint32_t outstanding;      /* in flight */
	uint32_t waiting;          /* queued, not yet sent */
	int completed_round;
	sm_txn_unsolicited_cb unsol_cb;
	void *unsol_ctx;
	struct sm_txn_stats st;
	double loss;               /* EWMA of "try lost" (1) vs "try answered" (0) */
	double srtt_us, rttvar_us; /* first-try round trips (Karn), 0 = no sample yet */
	uint64_t loss_n;           /* tries that went into it */
	uint64_t last_ans_us;      /* when a request last completed with an answer, 0 = never */
	uint64_t now_us;           /* the latest clock reading (tick): see "Clock" below */
	struct sm_check_book book;
};

void sm_txn_cfg_default(struct sm_txn_cfg *cfg)
{
	cfg->window = 32;
	cfg->per_dest = 4;
	cfg->timeout_ms = 100;
	cfg->max_timeout_ms = 1000;
	cfg->retries = 3;
	cfg->backoff = 2;
	cfg->adaptive_max = 24;
	cfg->min_timeout_ms = 10;
	cfg->stop = NULL;
}

unsigned sm_txn_attr_slot(uint16_t attr_id)
{
	switch (attr_id) {
	case SM_ATTR_NODE_INFO: return SM_TXN_A_NODE_INFO;
	case SM_ATTR_NODE_DESC: return SM_TXN_A_NODE_DESC;
	case SM_ATTR_PORT_INFO: return SM_TXN_A_PORT_INFO;
	case SM_ATTR_SWITCH_INFO: return SM_TXN_A_SWITCH_INFO;
	case SM_ATTR_LFT: return SM_TXN_A_LFT;
	case SM_ATTR_SM_INFO: return SM_TXN_A_SM_INFO;
	case SM_ATTR_NOTICE: return SM_TXN_A_NOTICE;
	default: return SM_TXN_A_OTHER;
	}
}

const char *sm_txn_attr_slot_name(unsigned slot)
{
	static const char *const names[SM_TXN_A_COUNT] = {
		"NodeInfo", "NodeDescription", "PortInfo", "SwitchInfo",
		"LinearForwardingTable", "SMInfo", "Notice", "Other",
	};
	return slot < SM_TXN_A_COUNT ? names[slot] : "Other";
}

uint64_t sm_transport_now_us(struct sm_transport *t)
{
	return t->ops->now_us ? t->ops->now_us(t) : sm_mono_us();
}

void sm_transport_close(struct sm_transport *t)
{
	if (t && t->ops && t->ops->close)
		t->ops->close(t);
}

struct sm_txn *sm_txn_new(struct sm_transport *t, const struct sm_txn_cfg *cfg)
{
	struct sm_txn *e;

	if (!t || !t->ops || !t->ops->send || !t->ops->recv)
		return NULL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	if (cfg)
		e->cfg = *cfg;
	else
		sm_txn_cfg_default(&e->cfg);
	if (e->cfg.window == 0 || e->cfg.per_dest == 0 || e->cfg.timeout_ms == 0 ||
	    e->cfg.window >= TID_RING / 2 || e->cfg.retries > 100)
		goto fail;
	if (e->cfg.backoff == 0)
		e->cfg.backoff = 1;
	if (e->cfg.max_timeout_ms < e->cfg.timeout_ms)
		e->cfg.max_timeout_ms = e->cfg.timeout_ms;
	if (e->cfg.adaptive_max > 100)
		e->cfg.adaptive_max = 100;
	if (e->cfg.per_dest > 0xFFFF)
		e->cfg.per_dest = 0xFFFF;
	e->t = t;
	sm_check_book_init(&e->book);
	e->free_head = NONE;
	e->next_tid = 1;
	e->buckets = calloc(NBUCKETS, sizeof(*e->buckets));
	e->ready = calloc(NBUCKETS, sizeof(*e->ready));
	e->tids = calloc(TID_RING, sizeof(*e->tids));
	if (!e->buckets || !e->ready || !e->tids)
		goto fail;
	for (unsigned i = 0; i < NBUCKETS; i++)
		e->buckets[i].head = e->buckets[i].tail = NONE;
	return e;
fail:
	free(e->buckets);
	free(e->ready);
	free(e->tids);
	free(e);
	return NULL;
}

struct sm_transport *sm_txn_transport(const struct sm_txn *e)
{
	return e->t;
}

void sm_txn_set_unsolicited(struct sm_txn *e, sm_txn_unsolicited_cb cb, void *ctx)
{
	e->unsol_cb = cb;
	e->unsol_ctx = ctx;
}

const struct sm_txn_stats *sm_txn_stats(const struct sm_txn *e)
{
	return &e->st;
}

void sm_txn_stats_reset(struct sm_txn *e)
{
	memset(&e->st, 0, sizeof(e->st));
}

double sm_txn_loss_estimate(const struct sm_txn *e)
{
	return e->loss;
}

void sm_txn_reject(struct sm_txn *e, unsigned kind)
{
	if (kind > SM_CHK_OK && kind < SM_CHK_COUNT)
		e->st.rejected[kind]++;
}

int sm_txn_flag_guid(struct sm_txn *e, uint64_t guid, unsigned kind)
{
	sm_txn_reject(e, kind);
	return sm_check_book_flag(&e->book, guid, kind);
}

unsigned sm_txn_suspect(const struct sm_txn *e, uint64_t guid)
{
	return sm_check_book_suspect(&e->book, guid);
}

/* One try's fate into the loss estimate (weight 1/128: follows a change within a few hundred tries). */
static void loss_note(struct sm_txn *e, int lost)
{
	e->loss += ((lost ? 1.0 : 0.0) - e->loss) / 128.0;
	e->loss_n++;
}

/* A first try answered after rtt_us: into the smoothed RTT (RFC 6298 weights). */
static void rtt_note(struct sm_txn *e, uint64_t rtt_us)
{
	double r = (double)rtt_us;
	if (e->srtt_us <= 0.0) {
		e->srtt_us = r > 1.0 ? r : 1.0;
		e->rttvar_us = r / 2;
		return;
	}
	double d = r > e->srtt_us ? r - e->srtt_us : e->srtt_us - r;
	e->rttvar_us += (d - e->rttvar_us) / 4;
	e->srtt_us += (r - e->srtt_us) / 8;
}

/* First-try timeout: cfg.timeout_ms, or on a lossy fabric what the round trips say. */
static uint32_t first_timeout_ms(const struct sm_txn *e, uint32_t dflt)
{
	if (!e->cfg.min_timeout_ms || e->loss_n < 32 || e->loss < 0.02 || e->srtt_us <= 0.0)
		return dflt;
	double ms = (e->srtt_us + 4 * e->rttvar_us) / 1000.0;
	if (ms < e->cfg.min_timeout_ms)
		ms = e->cfg.min_timeout_ms;
	return ms < dflt ? (uint32_t)ms : dflt;
}

/*
 * Tries request r may have in all. Beyond cfg.retries only while the
 * fabric answers others (something completed since r was first sent, or
 * within its first timeout before: see send_try) and
 * the loss is a share, not everything: then as many tries as take the
 * chance of losing every one below 1e-7, at most cfg.adaptive_max + 1.
 */
static unsigned tries_allowed(const struct sm_txn *e, const struct req *r)
{
	unsigned cap = e->cfg.adaptive_max + 1, k = 0;
	double p = 1.0;

	if (r->fixed || cap <= r->max_tries || e->st.completed <= r->ans_first ||
	    (r->last_err && r->last_err != -EAGAIN && r->last_err != -ENOBUFS))
		return r->max_tries;
	if (e->loss_n < 32)
		return cap;          /* too early to measure: assume the worst */
	if (e->loss > 0.85)
		return r->max_tries; /* mostly silence: not random drops */
	while (p > 1e-7 && k < cap) {
		p *= e->loss;
		k++;
	}
	return k > r->max_tries ? k : r->max_tries;
}

unsigned sm_txn_pending(const struct sm_txn *e)
{
	return e->outstanding + e->waiting;
}

int sm_txn_fd(const struct sm_txn *e)
{
	return sm_transport_fd(e->t);
}

/* ---- helpers ---- */

/*
 * Clock: reading it was about 5 times per SMP (a fifth of the transaction
 * layer's CPU on a VM). Now a round reads it once before it sends, once
 * after the first answer of a drain and every TICK_EVERY answers after
 * that, or once when nothing came; sends of one burst and answers of one
 * drain share a reading. Deadlines and round trips are then off by the CPU
 * time of a burst or of TICK_EVERY callbacks (microseconds), against
 * timeouts of milliseconds.
 */
static uint64_t tick(struct sm_txn *e)
{
	return e->now_us = sm_transport_now_us(e->t);
}


static uint64_t dest_key(const struct sm_smp *smp, uint16_t dlid)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	if (smp->mgmt_class != SM_CLASS_SMI_DR)
		return 0x100000000ULL | dlid;
	h = (h ^ smp->hop_cnt) * 0x100000001b3ULL;
	for (unsigned i = 1; i <= smp->hop_cnt; i++)
		h = (h ^ smp->initial_path[i]) * 0x100000001b3ULL;
	return h | 1;   /* never 0 */
}

static void ready_push(struct sm_txn *e, uint32_t b)
{
	if (e->buckets[b].in_ready)
		return;
	e->buckets[b].in_ready = 1;
	e->ready[(e->ready_head + e->ready_len) % NBUCKETS] = b;
	e->ready_len++;
}

static uint32_t ready_pop(struct sm_txn *e)
{
	uint32_t b = e->ready[e->ready_head];

	e->ready_head = (e->ready_head + 1) % NBUCKETS;
	e->ready_len--;
	e->buckets[b].in_ready = 0;
	return b;
}

static int heap_push(struct sm_txn *e, uint64_t deadline, uint32_t r, uint32_t gen)
{
	uint32_t i;

	if (e->heap_len == e->heap_cap) {
		uint32_t nc = e->heap_cap ? e->heap_cap * 2 : 256;
		struct tmo *nh = realloc(e->heap, (size_t)nc * sizeof(*nh));
		if (!nh)
			return -ENOMEM;
		e->heap = nh;
		e->heap_cap = nc;
	}
	i = e->heap_len++;
	while (i > 0) {
		uint32_t p = (i - 1) / 2;
		if (e->heap[p].deadline <= deadline)
			break;
		e->heap[i] = e->heap[p];
		i = p;
	}
	e->heap[i] = (struct tmo){ deadline, r, gen };
	return 0;
}

static void heap_pop(struct sm_txn *e)
{
	struct tmo last = e->heap[--e->heap_len];
	uint32_t i = 0;

	for (;;) {
		uint32_t c = 2 * i + 1;
		if (c >= e->heap_len)
			break;
		if (c + 1 < e->heap_len && e->heap[c + 1].deadline < e->heap[c].deadline)
			c++;
		if (last.deadline <= e->heap[c].deadline)
			break;
		e->heap[i] = e->heap[c];
		i = c;
	}
	if (e->heap_len)
		e->heap[i] = last;
}

/* Drop stale heap tops so heap[0] (if any) is a live deadline. */
static void heap_clean(struct sm_txn *e)
{
	while (e->heap_len) {
		const struct tmo *t = &e->heap[0];
		const struct req *r = &e->reqs[t->req];
		if (r->state == R_INFLIGHT && r->gen == t->gen)
			return;
		heap_pop(e);
	}
}

static int next_timeout_at(const struct sm_txn *e, uint64_t now)
{
	const struct tmo *t = NULL;

	/* const: scan lazily without popping stale entries */
	for (uint32_t i = 0; i < e->heap_len; i++) {
		const struct req *r = &e->reqs[e->heap[i].req];
		if (r->state == R_INFLIGHT && r->gen == e->heap[i].gen &&
		    (!t || e->heap[i].deadline < t->deadline))
			t = &e->heap[i];
		if (i == 0 && t)
			break;   /* the top is live: it is the minimum */
	}
	if (!t)
		return e->waiting ? 0 : -1;
	if (t->deadline <= now)
		return 0;
	return (int)((t->deadline - now + 999) / 1000);
}

int sm_txn_next_timeout_ms(const struct sm_txn *e)
{
	return next_timeout_at(e, sm_transport_now_us(e->t));
}

static uint32_t req_alloc(struct sm_txn *e)
{
	uint32_t i;

	if (e->free_head != NONE) {
		i = e->free_head;
		e->free_head = e->reqs[i].next;
		return i;
	}
	if (e->n_reqs == e->cap_reqs) {
		uint32_t nc = e->cap_reqs ? e->cap_reqs * 2 : 256;
		struct req *nr;
		if (nc <= e->cap_reqs || nc >= NONE / 2)
			return NONE;
		nr = realloc(e->reqs, (size_t)nc * sizeof(*nr));
		if (!nr)
			return NONE;
		e->reqs = nr;
		e->cap_reqs = nc;
	}
	i = e->n_reqs++;
	e->reqs[i].gen = 0;
	return i;
}

static void req_release(struct sm_txn *e, uint32_t i)
{
	struct req *r = &e->reqs[i];

	r->state = R_FREE;
	r->gen++;
	r->next = e->free_head;
	e->free_head = i;
}

int sm_txn_submit(struct sm_txn *e, const struct sm_smp *req, uint16_t dlid, sm_txn_cb cb,
		  void *ctx)
{
	return sm_txn_submit_opts(e, req, dlid, NULL, cb, ctx);
}

int sm_txn_submit_opts(struct sm_txn *e, const struct sm_smp *req, uint16_t dlid,
		       const struct sm_txn_req_opts *opts, sm_txn_cb cb, void *ctx)
{
	uint32_t i, b;
	struct req *r;
	uint64_t key;
	unsigned retries = e->cfg.retries;

	if (req->method != SM_METHOD_GET && req->method != SM_METHOD_SET)
		return -EINVAL;
	if (req->mgmt_class != SM_CLASS_SMI && req->mgmt_class != SM_CLASS_SMI_DR)
		return -EINVAL;
	if (req->mgmt_class == SM_CLASS_SMI_DR && req->hop_cnt > SM_DR_MAX_HOPS)
		return -EINVAL;
	if (opts && opts->retries)
		retries = opts->retries == SM_TXN_NO_RETRY ? 0 : opts->retries;
	if (retries > 100)
		retries = 100;
	i = req_alloc(e);
	if (i == NONE)
		return -ENOMEM;
	r = &e->reqs[i];
	r->smp = *req;
	r->smp.tid = 0;
	r->cb = cb;
	r->ctx = ctx;
	r->dlid = req->mgmt_class == SM_CLASS_SMI_DR ? SM_PERMISSIVE_LID : dlid;
	r->tid = 0;
	r->tries = 0;
	r->max_tries = (uint8_t)(retries + 1);
	r->fixed = opts && opts->retries;
	r->timeout_ms = opts && opts->timeout_ms ? opts->timeout_ms : e->cfg.timeout_ms;
	r->fixed_to = opts && opts->timeout_ms;
	r->slot = (uint8_t)sm_txn_attr_slot(req->attr_id);
	r->last_err = 0;
	r->state = R_WAITING;
	r->next = NONE;
	key = opts && opts->dest_key ? opts->dest_key : dest_key(req, dlid);
	b = (uint32_t)(sm_mix64(key) & (NBUCKETS - 1));
	r->bucket = b;
	if (e->buckets[b].tail == NONE)
		e->buckets[b].head = i;
	else
		e->reqs[e->buckets[b].tail].next = i;
	e->buckets[b].tail = i;
	if (e->buckets[b].out < e->cfg.per_dest)
		ready_push(e, b);
	e->waiting++;
	e->st.submitted++;
	return 0;
}

static uint32_t tid_alloc(struct sm_txn *e)
{
	for (;;) {
		uint32_t t = e->next_tid++;
		if (t == 0)
			continue;
		if (e->tids[t % TID_RING].fate != T_INFLIGHT)
			return t;
	}
}

/* Put request i on the wire (first try or retry) at time now. -ENOMEM: no timer, caller completes. */
static int send_try(struct sm_txn *e, uint32_t i, uint64_t now)
{
	struct req *r = &e->reqs[i];
	uint8_t wire[SM_MAD_SIZE];
	int rc;

	if (r->tries == 0) {
		r->tid = tid_alloc(e);
		r->smp.tid = r->tid;
		e->tids[r->tid % TID_RING] = (struct tid_ent){ r->tid, i, T_INFLIGHT };
		r->ans_first = e->st.completed;
		if (!r->fixed_to)
			r->timeout_ms = first_timeout_ms(e, e->cfg.timeout_ms);
		/*
		 * Sent within one timeout of the last answer (a callback's follow-up
		 * such as the read-back of a refused Set, or a round's last request
		 * with nothing else in flight): the fabric is answering, so count
		 * that answer as "since" this request, or a lone request on a lossy
		 * fabric gets only cfg.retries and is lost (ibsim Error 10%: about
		 * 37% of tries lost, 0.37^4 = 2% per lone request).
		 */
		if (e->last_ans_us && e->st.completed &&
		    now - e->last_ans_us <= (uint64_t)r->timeout_ms * 1000u)
			r->ans_first--;
	} else {
		/* back off only if nothing at all was answered meanwhile (overload, not a drop) */
		if (e->st.completed == r->ans_sent) {
			uint64_t to = (uint64_t)r->timeout_ms * e->cfg.backoff;
			r->timeout_ms = (uint32_t)(to > e->cfg.max_timeout_ms ? e->cfg.max_timeout_ms : to);
		}
		e->st.retried++;
		e->st.attr[r->slot].retried++;
		if (r->tries >= r->max_tries)
			e->st.adaptive_retries++;
	}
	r->ans_sent = e->st.completed;
	r->tries++;
	r->gen++;
	r->sent_us = now;
	rc = sm_smp_encode(&r->smp, wire);
	if (rc == 0)
		rc = sm_transport_send(e->t, wire, SM_MAD_SIZE, r->dlid, r->timeout_ms);
	r->last_err = rc;
	if (rc == 0) {
		e->st.sent++;
		e->st.attr[r->slot].sent++;
	} else {
		e->st.send_errors++;
	}
	/* Even a failed send waits for its timeout: a full transport needs time. */
	if (heap_push(e, r->sent_us + (uint64_t)r->timeout_ms * 1000u, i, r->gen) < 0)
		return -ENOMEM;
	return 0;
}

static void complete(struct sm_txn *e, uint32_t i, int rc, const struct sm_smp *resp);

/* Send what the window and the per-destination limits allow; fresh: read the clock first. */
static void dispatch(struct sm_txn *e, int fresh)
{
	if (fresh && e->outstanding < e->cfg.window && e->ready_len)
		tick(e);
	while (e->outstanding < e->cfg.window && e->ready_len) {
		uint32_t b = ready_pop(e);
		struct bucket *bk = &e->buckets[b];
		uint32_t i;

		if (bk->head == NONE || bk->out >= e->cfg.per_dest)
			continue;
		i = bk->head;
		bk->head = e->reqs[i].next;
		if (bk->head == NONE)
			bk->tail = NONE;
		e->reqs[i].state = R_INFLIGHT;
		e->waiting--;
		e->outstanding++;
		bk->out++;
		if (e->outstanding > e->st.max_outstanding)
			e->st.max_outstanding = e->outstanding;
		if (bk->out > e->st.max_per_dest)
			e->st.max_per_dest = bk->out;
		if (bk->head != NONE && bk->out < e->cfg.per_dest)
			ready_push(e, b);
		if (send_try(e, i, e->now_us) < 0)
			complete(e, i, -ENOMEM, NULL);
	}
}

/*
 * Retire in-flight or waiting request i with status rc (and resp when
 * rc == 0), then run its callback on copies.
 */
static void complete(struct sm_txn *e, uint32_t i, int rc, const struct sm_smp *resp)
{
	struct req *r = &e->reqs[i];
	struct sm_smp req_copy = r->smp;
	struct sm_txn_result res = { 0 };
	sm_txn_cb cb = r->cb;
	void *ctx = r->ctx;
	uint64_t now = e->now_us;

	res.status = rc;
	res.tries = r->tries;
	res.req = &req_copy;
	if (r->state == R_INFLIGHT) {
		struct bucket *bk = &e->buckets[r->bucket];
		bk->out--;
		e->outstanding--;
		if (bk->head != NONE && bk->out < e->cfg.per_dest)
			ready_push(e, r->bucket);
		e->tids[r->tid % TID_RING].fate = rc == 0 ? T_ANSWERED : T_GAVEUP;
	} else {
		e->waiting--;
	}
	if (rc == 0) {
		res.resp = resp;
		res.mad_status = resp->status;
		res.rtt_us = now >= r->sent_us ? now - r->sent_us : 0;
		loss_note(e, 0);
		e->last_ans_us = now ? now : 1;
		if (r->tries == 1)
			rtt_note(e, res.rtt_us);
		e->st.completed++;
		e->st.attr[r->slot].completed++;
		if (resp->status)
			e->st.mad_errors++;
	} else if (rc == -ECANCELED) {
		e->st.canceled++;
	} else {
		e->st.timed_out++;
		e->st.attr[r->slot].timed_out++;
	}
	req_release(e, i);
	e->completed_round++;
	if (cb)
		cb(e, &res, ctx);
}

/* Retry or give up what is due at e->now_us (a caller's tick). */
static void expire(struct sm_txn *e)
{
	uint64_t now = e->now_us;

	for (;;) {
		struct tmo t;
		struct req *r;

		heap_clean(e);
		if (!e->heap_len || e->heap[0].deadline > now)
			return;
		t = e->heap[0];
		heap_pop(e);
		r = &e->reqs[t.req];
		loss_note(e, 1);
		if (r->tries < r->max_tries || r->tries < tries_allowed(e, r)) {
			if (send_try(e, t.req, now) < 0)
				complete(e, t.req, -ENOMEM, NULL);
		} else {
			int rc = r->last_err && r->last_err != -EAGAIN && r->last_err != -ENOBUFS ?
					 r->last_err : -ETIMEDOUT;
			complete(e, t.req, rc, NULL);
		}
	}
}

static void handle_mad(struct sm_txn *e, const uint8_t *buf, size_t len,
		       const struct sm_mad_addr *from)
{
	struct sm_smp resp;
	struct sm_mad_err me;
	const struct tid_ent *te;
	unsigned kind;
	uint32_t tid;

	e->st.received++;
	me.field = NULL;
	if (sm_smp_decode(buf, len, &resp, &me) < 0) {
		e->st.malformed++;
		sm_txn_reject(e, sm_check_decode_fail(&me));
		return;
	}
	tid = (uint32_t)resp.tid;
	te = &e->tids[tid % TID_RING];
	if (resp.method != SM_METHOD_GET_RESP && resp.method != SM_METHOD_TRAP &&
	    resp.method != SM_METHOD_TRAP_REPRESS && tid && te->tid == tid && te->fate == T_INFLIGHT &&
	    (resp.mgmt_class != SM_CLASS_SMI_DR || resp.direction)) {
		/* an answer to our request, with a method no answer has */
		e->st.mismatched++;
		sm_txn_reject(e, SM_CHK_METHOD);
		return;
	}
	if (resp.method != SM_METHOD_GET_RESP) {
		if (e->unsol_cb) {
			e->st.unsolicited++;
			e->unsol_cb(e, &resp, from, e->unsol_ctx);
		} else {
			e->st.unsolicited_dropped++;
		}
		return;
	}
	if (tid == 0 || te->tid != tid || te->fate == T_FREE) {
		e->st.unknown_tid++;
		return;
	}
	if (te->fate == T_ANSWERED) {
		e->st.duplicate++;
		return;
	}
	if (te->fate == T_GAVEUP) {
		e->st.late++;
		return;
	}
	kind = sm_check_response(&e->reqs[te->req].smp, &resp, NULL);
	if (kind != SM_CHK_OK) {
		e->st.mismatched++;
		sm_txn_reject(e, kind);
		return;
	}
	complete(e, te->req, 0, &resp);
}

/*
 * Receive for up to timeout_ms (first MAD), then drain what is ready.
 * Returns 0 or a hard transport error; e->now_us is fresh (Clock above).
 */
static int receive(struct sm_txn *e, int timeout_ms)
{
	uint8_t buf[SM_MAD_SIZE + 64];
	int n;

	for (n = 0; n < DRAIN_MAX; n++) {
		struct sm_mad_addr from = { 0 };
		size_t len = 0;
		int rc = sm_transport_recv(e->t, buf, sizeof(buf), &len, &from, n ? 0 : timeout_ms);

		if (rc == -ETIMEDOUT || rc == -EAGAIN || rc == -EINTR)
			break;
		if (rc < 0)
			return rc;
		if (n % TICK_EVERY == 0)
			tick(e);
		handle_mad(e, buf, len, &from);
	}
	if (n == 0)
		tick(e);
	return 0;
}

static void fail_all(struct sm_txn *e, int rc)
{
	/*
	 * Waiting requests: each bucket's FIFO detached whole (unlinking them
	 * one by one was quadratic: seconds for the 500k LFT blocks a large
	 * fabric queues, when a stop cancels them). A callback may queue new
	 * ones meanwhile; they stay queued, properly linked.
	 */
	for (uint32_t b = 0; b < NBUCKETS; b++) {
		struct bucket *bk = &e->buckets[b];
		uint32_t i = bk->head;

		bk->head = bk->tail = NONE;
		while (i != NONE) {
			uint32_t next = e->reqs[i].next;
			complete(e, i, rc, NULL);
			i = next;
		}
	}
	for (uint32_t i = 0; i < e->n_reqs; i++)
		if (e->reqs[i].state == R_INFLIGHT)
			complete(e, i, rc, NULL);
}

void sm_txn_cancel_all(struct sm_txn *e)
{
	/* callbacks may submit again: loop until quiet, bounded */
	for (int round = 0; round < 16 && sm_txn_pending(e); round++)
		fail_all(e, -ECANCELED);
}

int sm_txn_send_raw(struct sm_txn *e, const struct sm_smp *smp, uint16_t dlid)
{
	uint8_t wire[SM_MAD_SIZE];
	int rc = sm_smp_encode(smp, wire);

	if (rc < 0)
		return rc;
	rc = sm_transport_send(e->t, wire, SM_MAD_SIZE,
			       smp->mgmt_class == SM_CLASS_SMI_DR ? SM_PERMISSIVE_LID : dlid, 0);
	if (rc == 0) {
		e->st.sent++;
		e->st.attr[sm_txn_attr_slot(smp->attr_id)].sent++;
	} else {
		e->st.send_errors++;
	}
	return rc;
}

/* The caller's stop flag (cfg.stop) is up: everything ends with -ECANCELED. */
static int stopped(struct sm_txn *e)
{
	if (!e->cfg.stop || !atomic_load(e->cfg.stop))
		return 0;
	sm_txn_cancel_all(e);
	return 1;
}

/* With a stop flag, no wait outlasts SM_TXN_STOP_POLL_MS. */
static int stop_cap(const struct sm_txn *e, int wait)
{
	if (e->cfg.stop && (wait < 0 || wait > SM_TXN_STOP_POLL_MS))
		return SM_TXN_STOP_POLL_MS;
	return wait;
}

int sm_txn_poll(struct sm_txn *e, int timeout_ms)
{
	int rc, wait;

	e->completed_round = 0;
	if (stopped(e))
		return -ECANCELED;
	tick(e);
	dispatch(e, 0);
	wait = timeout_ms;
	if (timeout_ms < 0 || timeout_ms > 0) {
		int next = next_timeout_at(e, e->now_us);
		if (timeout_ms < 0)
			wait = next;   /* -1 (forever) when nothing is in flight */
		else if (next >= 0 && next < timeout_ms)
			wait = next;
	}
	rc = receive(e, stop_cap(e, wait));
	if (rc < 0) {
		fail_all(e, rc);
		return rc;
	}
	expire(e);
	dispatch(e, 1);
	return e->completed_round;
}

int sm_txn_run(struct sm_txn *e)
{
	while (sm_txn_pending(e)) {
		int rc;

		if (stopped(e))
			return -ECANCELED;
		tick(e);
		dispatch(e, 0);
		rc = receive(e, stop_cap(e, next_timeout_at(e, e->now_us)));
		if (rc < 0) {
			fail_all(e, rc);
			return rc;
		}
		expire(e);
	}
	return 0;
}

void sm_txn_free(struct sm_txn *e)
{
	if (!e)
		return;
	sm_txn_cancel_all(e);
	free(e->reqs);
	free(e->buckets);
	free(e->ready);
	free(e->tids);
	free(e->heap);
	sm_check_book_clear(&e->book);
	free(e);
}
