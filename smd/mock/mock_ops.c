/* SPDX-License-Identifier: MIT */
/*
 * DOC: mock fabric, the transport
 *
 * The sm_transport ops handed out by sm_mock_attach(): send() decodes a
 * request, applies the drop fault and hands it to forwarding (mock_fwd.c);
 * answers come back through mock_deliver(), which applies the corrupt and
 * delay faults (the latency model: one delay value, so held-back answers
 * are released in FIFO order) and queues them at the attachment; recv()
 * pops them, moving virtual time on instead of sleeping. Also the fault
 * RNG (xorshift64*, deterministic for a seed), virtual time and Trap 128.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "lib/clock.h"
#include "mock/mock_priv.h"

#define SM_MOCK_IDLE_POLL_US 1000

/* ---- fault RNG, fault shares ---- */

static uint64_t rng_next(struct sm_mock *m)
{
	/* xorshift64*: deterministic for a seed, good enough for fault shares */
	uint64_t x = m->rng;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	m->rng = x;
	return x * 0x2545F4914F6CDD1DULL;
}

static int roll(struct sm_mock *m, uint32_t ppm)
{
	if (!ppm)
		return 0;
	return (rng_next(m) >> 11) % 1000000u < ppm;
}

void sm_mock_set_faults(struct sm_mock *m, uint32_t drop_ppm, uint32_t corrupt_ppm,
			uint32_t delay_ppm, uint32_t delay_us)
{
	m->cfg.drop_ppm = drop_ppm;
	m->cfg.corrupt_ppm = corrupt_ppm;
	m->cfg.delay_ppm = delay_ppm;
	m->cfg.delay_us = delay_ppm && !delay_us ? 50000 : delay_us;
}

/* ---- answer queues ---- */

static int q_push(struct mqueue *q, const uint8_t *mad, size_t len, uint16_t slid, uint64_t release)
{
	struct qent *e;

	if (q->len == q->cap) {
		uint32_t nc = q->cap ? q->cap * 2 : 64;
		struct qent *ne = malloc((size_t)nc * sizeof(*ne));
		if (!ne)
			return -ENOMEM;
		for (uint32_t i = 0; i < q->len; i++)
			ne[i] = q->e[(q->head + i) % q->cap];
		free(q->e);
		q->e = ne;
		q->head = 0;
		q->cap = nc;
	}
	e = &q->e[(q->head + q->len) % q->cap];
	e->release = release;
	e->len = (uint16_t)len;
	e->slid = slid;
	memcpy(e->mad, mad, len);
	q->len++;
	return 0;
}

static const struct qent *q_front(const struct mqueue *q)
{
	return q->len ? &q->e[q->head] : NULL;
}

static void q_pop(struct mqueue *q)
{
	q->head = (q->head + 1) % q->cap;
	q->len--;
}

/* Queue an answer at attachment a, applying corrupt/delay faults. */
void mock_deliver(struct sm_mock *m, struct attach *a, const struct sm_smp *resp, uint16_t slid,
		    int faults, size_t len)
{
	uint8_t wire[SM_MAD_SIZE];
	uint64_t release = 0;

	if (faults && m->lose_answer)
		return;
	if (sm_smp_encode(resp, wire) < 0)
		return;
	if (faults && roll(m, m->cfg.corrupt_ppm)) {
		m->st.fault_corrupted++;
		switch (rng_next(m) % 6) {
		case 0: len = 24 + rng_next(m) % 200; break;         /* truncated */
		case 1: wire[0] ^= 0x02; break;                      /* base version */
		case 2: wire[2] ^= 0x04; break;                      /* class version */
		case 3: wire[17] ^= 0x40; break;                     /* attribute id */
		case 4: wire[15] ^= 0x5A; wire[12] ^= 0x01; break;   /* TID */
		default:                                             /* method / D bit */
			if (resp->mgmt_class == SM_CLASS_SMI_DR)
				wire[4] ^= 0x80;
			else
				wire[3] ^= 0x80;
			break;
		}
	}
	if (faults && roll(m, m->cfg.delay_ppm)) {
		m->st.fault_delayed++;
		release = sm_mock_now_us(m) + m->cfg.delay_us;
		if (q_push(&a->delayed, wire, len, slid, release) == 0)
			m->st.answered++;
		return;
	}
	if (q_push(&a->ready, wire, len, slid, 0) == 0)
		m->st.answered++;
}

/* ---- transport ops ---- */

static int mock_send_one(struct sm_transport *t, const uint8_t *mad, size_t len, uint16_t dlid);

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * cfg.cpu_account: reading the thread CPU clock is a system call (1-2 us
 * on a VM, more than answering an SMP), so only one request in
 * CPU_SAMPLE is timed, picked by a hash of the request count (no period
 * for the SM's loops to alias with), its time less what the two clock
 * reads cost (the least of a few back-to-back pairs), times CPU_SAMPLE.
 */
#define CPU_SAMPLE 64

static uint64_t clock_pair_ns(void)
{
	static _Atomic uint64_t cost = UINT64_MAX;
	uint64_t c = cost;

	if (c == UINT64_MAX) {
		for (int i = 0; i < 8; i++) {
			uint64_t t0 = thread_cpu_ns(), d = thread_cpu_ns() - t0;
			c = d < c ? d : c;
		}
		cost = c;
	}
	return c;
}

static bool cpu_sampled(uint64_t n)
{
	n += 0x9e3779b97f4a7c15ull;   /* splitmix64's finalizer */
	n = (n ^ (n >> 30)) * 0xbf58476d1ce4e5b9ull;
	n = (n ^ (n >> 27)) * 0x94d049bb133111ebull;
	return ((n ^ (n >> 31)) % CPU_SAMPLE) == 0;
}

static int mock_send(struct sm_transport *t, const uint8_t *mad, size_t len, uint16_t dlid,
		     unsigned resp_timeout_ms)
{
	struct attach *a = (struct attach *)t;
	uint64_t t0, d, pair;
	int rc;

	(void)resp_timeout_ms;
	if (!a->m || !a->m->cfg.cpu_account || !cpu_sampled(a->m->st.requests))
		return mock_send_one(t, mad, len, dlid);
	pair = clock_pair_ns();
	t0 = thread_cpu_ns();
	rc = mock_send_one(t, mad, len, dlid);
	d = thread_cpu_ns() - t0;
	a->m->st.emu_cpu_ns += (d > pair ? d - pair : 0) * CPU_SAMPLE;
	return rc;
}

static int mock_send_one(struct sm_transport *t, const uint8_t *mad, size_t len, uint16_t dlid)
{
	struct attach *a = (struct attach *)t;
	struct sm_mock *m = a->m;
	struct sm_smp s;

	if (!m)
		return -ENODEV;
	m->st.requests++;
	if (sm_smp_decode(mad, len, &s, NULL) < 0) {
		m->st.bad_requests++;
		return 0;   /* a real fabric drops it silently */
	}
	if (s.method == SM_METHOD_GET_RESP) {
		m->st.bad_requests++;
		return 0;
	}
	if (roll(m, m->cfg.drop_ppm)) {
		m->st.fault_dropped++;
		/* half the losses hit the answer: the SMA did act on the request */
		if (!(rng_next(m) & 1))
			return 0;
		m->lose_answer = 1;
	}
	if (s.mgmt_class == SM_CLASS_SMI_DR)
		mock_handle_dr(m, a, &s);
	else
		mock_handle_lid(m, a, &s, dlid);
	m->lose_answer = 0;
	return 0;
}

/*
 * The latency model's short waits (an answer due within SPIN_WAIT_US) are
 * spent yielding the CPU, not sleeping: a timed sleep of a few us cost the
 * waiting thread 30-40 us of CPU on a VM (arming the timer, two context
 * switches), 40-50 ms per 2,048-host bring-up at 20 us, more than the SM's
 * own work; a yield lets another plane's thread run and costs nothing when
 * none waits. With cfg.cpu_account the wait counts as the emulator's (it
 * is the emulated wire's time, not the SM's).
 */
#define SPIN_WAIT_US 30

/* A timed sleep for the emulated wire: its CPU (timer, context switches) is the emulator's too. */
static void wait_sleep(struct sm_mock *m, const struct timespec *ts)
{
	uint64_t c0 = m->cfg.cpu_account ? thread_cpu_ns() : 0;

	nanosleep(ts, NULL);
	if (m->cfg.cpu_account)
		m->st.emu_cpu_ns += thread_cpu_ns() - c0;
}

static void wait_spin(struct sm_mock *m, uint64_t release)
{
	uint64_t c0 = m->cfg.cpu_account ? thread_cpu_ns() : 0;

	while (sm_mock_now_us(m) < release)
		sched_yield();
	if (m->cfg.cpu_account)
		m->st.emu_cpu_ns += thread_cpu_ns() - c0;
}

static int mock_recv(struct sm_transport *t, uint8_t *buf, size_t cap, size_t *len,
		     struct sm_mad_addr *from, int timeout_ms)
{
	struct attach *a = (struct attach *)t;
	struct sm_mock *m = a->m;
	const struct qent *e;
	uint64_t now, deadline = 0;
	bool fresh = false;

	if (!m)
		return -ENODEV;
	/*
	 * The clock is read only when the time decides: an answer due at or
	 * before the last reading is due now (time only moves on), so a drain
	 * of answers that came due together reads it once, not per answer.
	 */
	now = a->seen_us;
	for (;;) {
		struct mqueue *q = NULL;

		if (!fresh && !a->ready.len && (!a->delayed.len || q_front(&a->delayed)->release > now)) {
			now = a->seen_us = sm_mock_now_us(m);
			deadline = timeout_ms < 0 ? UINT64_MAX : now + (uint64_t)timeout_ms * 1000u;
			fresh = true;
		}
		if (a->ready.len) {
			q = &a->ready;
		} else if (a->delayed.len) {
			const struct qent *d = q_front(&a->delayed);
			if (d->release <= now) {
				q = &a->delayed;
			} else if (d->release <= deadline) {
				if (m->cfg.real_time && d->release - now <= SPIN_WAIT_US) {
					wait_spin(m, d->release);
				} else if (m->cfg.real_time) {
					static _Thread_local bool slack_set;
					struct timespec ts = { 0, (long)(d->release - now) * 1000L };
					/*
					 * The latency model holds answers for tens of us: with
					 * the default 50 us timer slack every wait would be
					 * 3-4 times what the model says (this thread only).
					 */
					if (!slack_set) {
						(void)prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
						slack_set = true;
					}
					if (d->release - now >= 1000000u) {
						ts.tv_sec = (time_t)((d->release - now) / 1000000u);
						ts.tv_nsec = (long)((d->release - now) % 1000000u) * 1000L;
					}
					wait_sleep(m, &ts);
				} else {
					m->vnow = d->release;
				}
				now = a->seen_us = sm_mock_now_us(m);
				continue;
			}
		}
		if (q) {
			e = q_front(q);
			if (cap < e->len)
				return -EMSGSIZE;
			memcpy(buf, e->mad, e->len);
			*len = e->len;
			if (from) {
				from->slid = e->slid;
				from->sl = 0;
			}
			q_pop(q);
			return 0;
		}
		/* nothing will arrive before the deadline */
		if (timeout_ms > 0) {
			if (m->cfg.real_time) {
				struct timespec ts = { timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000L };
				nanosleep(&ts, NULL);
			} else {
				m->vnow = deadline;
			}
		} else if (timeout_ms == 0 && !m->cfg.real_time) {
			/* an empty non-blocking poll lets a little virtual time pass, so a
			 * loop of polls (several planes, one thread) reaches its timeouts */
			m->vnow += SM_MOCK_IDLE_POLL_US;
		}
		return -ETIMEDOUT;
	}
}

static uint64_t mock_now(struct sm_transport *t)
{
	struct attach *a = (struct attach *)t;

	return a->m ? sm_mock_now_us(a->m) : 0;
}

static void mock_close(struct sm_transport *t)
{
	struct attach *a = (struct attach *)t;

	a->open = 0;
	if (!a->m) {
		/* the mock is gone already */
		free(a->ready.e);
		free(a->delayed.e);
		free(a);
		return;
	}
	a->ready.len = 0;
	a->delayed.len = 0;
}

static const struct sm_transport_ops mock_ops = {
	.size = sizeof(struct sm_transport_ops),
	.version = SM_TRANSPORT_OPS_VERSION,
	.name = "mock",
	.send = mock_send,
	.recv = mock_recv,
	.fd = NULL,
	.now_us = mock_now,
	.refresh = mock_refresh,
	.close = mock_close,
	.gsi_open = mock_gsi_open,
};

int sm_mock_attach(struct sm_mock *m, uint32_t pi, struct sm_transport **out)
{
	const struct sm_port *fp;
	const struct sm_node *nd;
	struct attach *a = NULL;

	*out = NULL;
	if (pi >= m->f->n_ports)
		return -EINVAL;
	fp = &m->f->ports[pi];
	nd = &m->f->nodes[fp->node];
	if (nd->type == SM_NODE_SWITCH || fp->num == 0)
		return -EINVAL;
	for (uint32_t i = 0; i < m->n_att; i++) {
		if (m->att[i]->port != pi)
			continue;
		if (m->att[i]->open)
			return -EBUSY;
		a = m->att[i];   /* reuse a closed attachment */
	}
	if (!a) {
		if (m->n_att == m->cap_att) {
			uint32_t nc = m->cap_att ? m->cap_att * 2 : 4;
			struct attach **na = realloc(m->att, (size_t)nc * sizeof(*na));
			if (!na)
				return -ENOMEM;
			m->att = na;
			m->cap_att = nc;
		}
		a = calloc(1, sizeof(*a));
		if (!a)
			return -ENOMEM;
		m->att[m->n_att++] = a;
	}
	a->m = m;
	a->port = pi;
	a->node = fp->node;
	a->open = 1;
	a->t.ops = &mock_ops;
	a->t.priv = a;
	memset(&a->t.info, 0, sizeof(a->t.info));
	snprintf(a->t.info.ca_name, sizeof(a->t.info.ca_name), "mock");
	a->t.info.port_num = fp->num;
	a->t.info.port_guid = fp->guid;
	a->t.info.node_guid = nd->guid;
	mock_refresh(&a->t);
	*out = &a->t;
	return 0;
}

/* ---- traps ---- */

void mock_send_trap128(struct sm_mock *m, uint32_t sw)
{
	const struct mport *p0 = &m->ports[m->f->nodes[sw].port0];
	struct attach *a;
	struct sm_smp s;
	struct sm_notice nt;

	uint32_t dn;
	unsigned dp;

	if (!p0->lid || !p0->sm_lid)
		return;
	/* the trap travels like any LID-routed packet: no route, no trap */
	a = mock_attachment_with_lid(m, p0->sm_lid);
	if (!a || mock_route_lid(m, sw, 0, p0->sm_lid, &dn, &dp) < 0 ||
	    m->f->nodes[dn].port0 + dp != a->port) {
		m->st.traps_lost++;
		return;
	}
	sm_smp_init_lid(&s, SM_METHOD_TRAP, SM_ATTR_NOTICE, 0);
	s.tid = m->trap_tid++;
	sm_notice_trap128(&nt, p0->lid);
	sm_notice_encode(&nt, s.data);
	m->st.traps_sent++;
	mock_deliver(m, a, &s, p0->lid, 0, SM_MAD_SIZE);
}
