/* SPDX-License-Identifier: MIT */
/*
 * DOC: ibsim transport
 *
 * struct sm_transport over ibsim's own client protocol (ibsim_client.c).
 * One instance per plane; several may attach to one simulator. Packets the
 * simulator marks as dropped are not delivered: the transaction engine's
 * timeout and retry handle them exactly like a MAD lost on a real wire.
 *
 * The GSI endpoint (mad/gsi.h, ibsim_gsi_open) shares the socket: ibsim
 * hands every QP0 and QP1 request for a port to that port's one IsSM
 * client (its find_client()), so the SA's requests arrive where the
 * sweep's SMP answers do. Two readers, one socket: the SMP side (the
 * worker during a cycle, the loop between cycles) and the GSI side (the
 * SA, on the loop). Whoever reads a packet that is the other's puts it on
 * the other's queue (struct side: a ring under mu) and writes the other's
 * eventfd; each side's pollable fd is an epoll fd holding its own eventfd
 * and the socket, except that while a GSI endpoint is open the SMP side's
 * leaves the socket to the GSI reader (a worker in recv() polls the socket
 * directly), so the loop does not wake twice per SA request. A sweep
 * therefore never consumes an SA request, and an SA request is read (by
 * the SA itself) while the worker routes and reads nothing. Sends from both sides go through send_mu, so they never
 * interleave with each other (a datagram is one send anyway; the lock
 * keeps the TID bookkeeping of the client whole). SMPs (classes 0x01,
 * 0x81) are the SMP side's; every other class the GSI side's, which keeps
 * its own class and drops the rest (counted in stray). The GSI side takes
 * whole RMPP messages (SM_GSI_KERNEL_RMPP) and sends what umad2sim's
 * clients can take of one, its first segment (send_rmpp()).
 */
#include "mad/ibsim_client.h"
#include "mad/transport.h"
#include "mad/gsi.h"
#include "mad/codec.h"
#include "lib/be.h"
#include "lib/clock.h"
#include "lib/err.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define SIDE_QUEUE_MAX 4096   /* packets held for a side that is not reading; more are dropped */

enum { SIDE_SMP, SIDE_GSI };

struct side {
	struct sm_ibsim_pkt *q;   /* ring */
	uint32_t head, len, cap;
	int efd;                  /* readable while the other side's reader left packets here (signalled) */
	bool signalled;           /* efd written and not yet read back */
	bool drained;             /* GSI: its last recvmmsg emptied the socket (see take()) */
	int epfd;                 /* the side's pollable fd: efd, and the socket unless another reader has it */
	uint64_t dropped;         /* queue full */
};

struct ibsim_gsi;

struct ibsim_port {
	struct sm_transport t;    /* first */
	struct sm_ibsim *c;
	pthread_mutex_t mu;       /* sides, gsi */
	pthread_mutex_t send_mu;
	struct side side[2];
	struct ibsim_gsi *gsi;    /* open endpoint, or NULL (mu) */
	uint64_t stray;           /* GSI-side packets nobody takes */
};

struct ibsim_gsi {
	struct sm_gsi g;          /* first */
	struct ibsim_port *p;
	uint16_t tid_hi;          /* top TID bits of our last request (Report): ibsim overwrites them */
	bool holding;             /* hold(true): single MADs wait in held[] (send_mu) */
	unsigned n_held;
	unsigned failed;          /* held MADs a flush could not send, until hold(false) reports them */
	struct sm_ibsim_out held[SM_IBSIM_RECV_BATCH];
};

static int side_of(const struct sm_ibsim_pkt *k)
{
	return k->mad[1] == SM_CLASS_SMI || k->mad[1] == SM_CLASS_SMI_DR ? SIDE_SMP : SIDE_GSI;
}

/*
 * Queue k for side s (mu held). signal: the other side's reader queues it,
 * so s's reader must be woken (efd); the GSI side's own extras of a
 * recvmmsg batch are not signalled: its reader reads until -EAGAIN (gsi.h),
 * and an eventfd write and read per batch were two system calls per wake-up.
 */
static void side_push(struct ibsim_port *p, int s, const struct sm_ibsim_pkt *k, bool signal)
{
	struct side *d = &p->side[s];

	if (s == SIDE_GSI && (!p->gsi || k->mad[1] != p->gsi->g.mgmt_class)) {
		p->stray++;
		return;
	}
	if (d->len == d->cap) {
		uint32_t nc = d->cap ? d->cap * 2 : 16;
		struct sm_ibsim_pkt *nq;
		if (nc > SIDE_QUEUE_MAX || !(nq = malloc((size_t)nc * sizeof(*nq)))) {
			d->dropped++;
			return;
		}
		for (uint32_t i = 0; i < d->len; i++)
			nq[i] = d->q[(d->head + i) % d->cap];
		free(d->q);
		d->q = nq;
		d->head = 0;
		d->cap = nc;
	}
	d->q[(d->head + d->len) % d->cap] = *k;
	d->len++;
	if ((signal || s == SIDE_SMP) && !d->signalled) {
		(void)!eventfd_write(d->efd, 1);
		d->signalled = true;
	}
}

/* Take the oldest packet queued for side s: 1 taken, 0 none (mu held). */
static int side_pop(struct ibsim_port *p, int s, struct sm_ibsim_pkt *k)
{
	struct side *d = &p->side[s];
	eventfd_t v;

	if (!d->len)
		return 0;
	*k = d->q[d->head];
	d->head = (d->head + 1) % d->cap;
	if (--d->len == 0 && d->signalled) {
		(void)eventfd_read(d->efd, &v);
		d->signalled = false;
	}
	return 1;
}

/*
 * One packet for side s without waiting: from its queue, else from the
 * socket, up to SM_IBSIM_RECV_BATCH packets per system call (recvmmsg):
 * the first for s is returned, the others go to their side's queue in
 * order (the other side's reader is woken by its eventfd). 0, -EAGAIN,
 * -errno.
 */
static int take(struct ibsim_port *p, int s, struct sm_ibsim_pkt *k)
{
	struct sm_ibsim_pkt ks[SM_IBSIM_RECV_BATCH];
	int rc;

	pthread_mutex_lock(&p->mu);
	rc = side_pop(p, s, k);
	/*
	 * The GSI reader reads until -EAGAIN: when its last recvmmsg came back
	 * short, the socket was empty then, and asking again only to hear
	 * -EAGAIN was a system call per wake-up. What arrived meanwhile keeps
	 * the socket readable: the loop comes back for it.
	 */
	bool drained = !rc && s == SIDE_GSI && p->side[s].drained;
	if (!rc)
		p->side[s].drained = false;
	pthread_mutex_unlock(&p->mu);
	if (rc)
		return 0;
	if (drained)
		return -EAGAIN;
	for (int n = 0; n < 4; n++) {   /* bounded: a flood for the other side cannot keep us here */
		int got = sm_ibsim_recv_pkts(p->c, ks, SM_IBSIM_RECV_BATCH), found = 0;
		if (got < 0)
			return got;
		pthread_mutex_lock(&p->mu);
		for (int i = 0; i < got; i++) {
			if (!found && side_of(&ks[i]) == s) {
				*k = ks[i];
				found = 1;
			} else {
				side_push(p, side_of(&ks[i]), &ks[i], side_of(&ks[i]) != s);
			}
		}
		if (found && got < SM_IBSIM_RECV_BATCH)
			p->side[s].drained = true;
		pthread_mutex_unlock(&p->mu);
		if (found)
			return 0;
	}
	return -EAGAIN;
}

static int side_init(struct side *d, int sockfd)
{
	struct epoll_event ev = { .events = EPOLLIN };

	d->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	d->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (d->efd < 0 || d->epfd < 0)
		return -errno;
	ev.data.fd = sockfd;
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, sockfd, &ev) < 0)
		return -errno;
	ev.data.fd = d->efd;
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, d->efd, &ev) < 0)
		return -errno;
	return 0;
}

static void side_fini(struct side *d)
{
	if (d->efd >= 0)
		close(d->efd);
	if (d->epfd >= 0)
		close(d->epfd);
	free(d->q);
}

static struct ibsim_port *port_of(struct sm_transport *t)
{
	return (struct ibsim_port *)t;
}

static int ibsim_t_send(struct sm_transport *t, const uint8_t *mad, size_t len, uint16_t dlid,
			unsigned resp_timeout_ms)
{
	struct ibsim_port *p = port_of(t);
	uint8_t buf[SM_IBSIM_MAD_SIZE];
	int rc;

	(void)resp_timeout_ms;
	if (len > sizeof(buf))
		return -EINVAL;
	memset(buf, 0, sizeof(buf));
	memcpy(buf, mad, len);
	pthread_mutex_lock(&p->send_mu);
	rc = sm_ibsim_send(p->c, buf, dlid, 0);
	pthread_mutex_unlock(&p->send_mu);
	return rc;
}

static int ibsim_t_recv(struct sm_transport *t, uint8_t *buf, size_t cap, size_t *len,
			struct sm_mad_addr *from, int timeout_ms)
{
	struct ibsim_port *p = port_of(t);
	uint64_t end = timeout_ms > 0 ? sm_mono_us() + (uint64_t)timeout_ms * 1000u : 0;
	struct sm_ibsim_pkt k;
	int rc;

	if (cap < SM_IBSIM_MAD_SIZE)
		return -EINVAL;
	for (;;) {
		rc = take(p, SIDE_SMP, &k);
		if (rc == 0 && k.status)   /* dropped by the simulator: like a lost MAD */
			continue;
		if (rc == 0)
			break;
		if (rc != -EAGAIN)
			return rc;
		int wait = timeout_ms;
		if (timeout_ms > 0) {
			uint64_t now = sm_mono_us();
			if (now >= end)
				return -ETIMEDOUT;
			wait = (int)((end - now + 999) / 1000);
		}
		if (timeout_ms == 0)
			return -ETIMEDOUT;
		/* the socket itself: the SMP side's epfd leaves it to the GSI reader while one is open */
		struct pollfd pf[2] = { { .fd = sm_ibsim_fd(p->c), .events = POLLIN },
					{ .fd = p->side[SIDE_SMP].efd, .events = POLLIN } };
		rc = poll(pf, 2, wait);
		if (rc < 0 && errno != EINTR)
			return -errno;
	}
	sm_ibsim_restore_tid(p->c, &k);
	memcpy(buf, k.mad, SM_IBSIM_MAD_SIZE);
	*len = SM_IBSIM_MAD_SIZE;
	if (from) {
		from->slid = k.slid;
		from->sl = 0;
	}
	return 0;
}

static int ibsim_t_fd(struct sm_transport *t)
{
	return port_of(t)->side[SIDE_SMP].epfd;
}

static void ibsim_t_close(struct sm_transport *t)
{
	struct ibsim_port *p = port_of(t);

	if (!p)
		return;
	sm_ibsim_close(p->c);
	side_fini(&p->side[SIDE_SMP]);
	side_fini(&p->side[SIDE_GSI]);
	pthread_mutex_destroy(&p->mu);
	pthread_mutex_destroy(&p->send_mu);
	free(p);
}

/* ---- the GSI endpoint on the shared socket ---- */

/*
 * The length a MAD goes out with: 256, but the last (or only) segment of
 * an RMPP message is as long as its PayloadLength says, as the kernel sends
 * it. umad2sim passes the length on to its client, and saquery counts
 * records from it: a padded segment would read as empty records.
 */
static size_t wire_len(const uint8_t *mad)
{
	uint32_t pay = sm_be_get32(mad + 32);

	if (mad[25] != 1 || (mad[26] & 0x05) != 0x05)   /* not an active DATA segment marked last */
		return SM_GSI_MAD_SIZE;
	return pay <= SM_GSI_MAD_SIZE - 36 ? 36 + pay : SM_GSI_MAD_SIZE;
}


/*
 * An RMPP message (the SA header once, then its data) goes out as what
 * ibsim's clients can take: its first segment, as the kernel would put it
 * on the wire (200 bytes of data, segment 1, FIRST, and LAST with its
 * PayloadLength when it is the only one). ibsim's clients are umad2sim's,
 * which has no RMPP: it hands its client the first segment as the whole
 * answer and never ACKs, so further segments would only arrive as stray
 * answers to a finished request (osmtest logs and drops them). OpenSM
 * under umad2sim gives exactly this. Ask for one record at a time there.
 * The SA's own sender (sa/rmpp.h) is for transports that carry ACKs.
 */
static int send_rmpp(struct ibsim_port *p, const uint8_t *mad, size_t len, const struct sm_gsi_addr *to)
{
	size_t data = len - 56, nseg = data ? (data + 199) / 200 : 1, n = data < 200 ? data : 200;
	uint8_t seg[SM_GSI_MAD_SIZE];

	memset(seg, 0, sizeof(seg));
	memcpy(seg, mad, 56);
	seg[25] = 1;   /* DATA */
	seg[26] = (uint8_t)((mad[26] & 0xf8) | 0x01 | 0x02 | (nseg == 1 ? 0x04 : 0));
	sm_be_put32(seg + 28, 1);
	sm_be_put32(seg + 32, (uint32_t)(nseg == 1 ? n + 20 : data + 20 * nseg));
	if (n)
		memcpy(seg + 56, mad + 56, n);
	return sm_ibsim_send_pkt(p->c, seg, wire_len(seg), to->lid, to->qpn, 1);
}

/* Send what e holds (send_mu held); what does not go is counted in e->failed. */
static void flush_held(struct ibsim_gsi *e)
{
	if (!e->n_held)
		return;
	int n = sm_ibsim_send_pkts(e->p->c, e->held, e->n_held);
	e->failed += n < 0 ? e->n_held : e->n_held - (unsigned)n;
	e->n_held = 0;
}

static int ibsim_gsi_send(struct sm_gsi *g, const uint8_t *mad, size_t len, const struct sm_gsi_addr *to)
{
	struct ibsim_port *p = ((struct ibsim_gsi *)g)->p;
	int rmpp = len >= 56 && (mad[26] & 0x01);
	int rc;

	/* one MAD (a short one is padded; its length goes on the wire), or a whole RMPP message (send_rmpp()) */
	uint8_t pad[SM_GSI_MAD_SIZE];

	if (len < SM_GSI_MIN_MSG || (!rmpp && len > SM_GSI_MAD_SIZE) || len > SM_GSI_MAX_MSG || !to)
		return -EINVAL;
	size_t wlen = SM_GSI_MAD_SIZE;

	if (!rmpp && len < SM_GSI_MAD_SIZE) {
		memset(pad, 0, sizeof(pad));
		memcpy(pad, mad, len);
		mad = pad;
		wlen = len;
	}
	struct ibsim_gsi *e = (struct ibsim_gsi *)g;
	pthread_mutex_lock(&p->send_mu);
	if (!(mad[3] & 0x80))
		e->tid_hi = (uint16_t)(mad[8] << 8 | mad[9]);
	if (rmpp) {
		rc = send_rmpp(p, mad, len, to);
	} else if (e->holding) {
		struct sm_ibsim_out *o = &e->held[e->n_held++];
		memcpy(o->mad, mad, SM_GSI_MAD_SIZE);
		o->len = wlen < SM_GSI_MAD_SIZE ? wlen : wire_len(mad);
		o->dlid = to->lid, o->dqp = to->qpn, o->sqp = 1;
		rc = 0;
		if (e->n_held == SM_IBSIM_RECV_BATCH)
			flush_held(e);
	} else {
		rc = sm_ibsim_send_pkt(p->c, mad, wlen < SM_GSI_MAD_SIZE ? wlen : wire_len(mad), to->lid, to->qpn, 1);
	}
	pthread_mutex_unlock(&p->send_mu);
	return rc;
}

/* Hold single MADs and send them together (sendmmsg) when the reader's batch ends: gsi.h hold. */
static int ibsim_gsi_hold(struct sm_gsi *g, bool on)
{
	struct ibsim_gsi *e = (struct ibsim_gsi *)g;
	int rc = 0;

	pthread_mutex_lock(&e->p->send_mu);
	if (!on) {
		flush_held(e);
		rc = (int)e->failed;
		e->failed = 0;
	}
	e->holding = on;
	pthread_mutex_unlock(&e->p->send_mu);
	return rc;
}

static int ibsim_gsi_recv(struct sm_gsi *g, uint8_t *buf, size_t cap, size_t *len, struct sm_gsi_addr *from)
{
	struct ibsim_port *p = ((struct ibsim_gsi *)g)->p;
	struct sm_ibsim_pkt k;
	int rc;

	int n = 0;

	do
		rc = take(p, SIDE_GSI, &k);
	while (rc == 0 && (k.status || k.mad[1] != g->mgmt_class) && ++n < 64);   /* our dropped sends; strays */
	if (rc)
		return rc;
	if (n == 64)
		return -EAGAIN;
	if (cap < SM_GSI_MAD_SIZE)
		return -EMSGSIZE;
	if (k.mad[3] & 0x80) {   /* a ReportResp: our TID as we sent it */
		k.mad[8] = (uint8_t)(((struct ibsim_gsi *)g)->tid_hi >> 8);
		k.mad[9] = (uint8_t)((struct ibsim_gsi *)g)->tid_hi;
	}
	memcpy(buf, k.mad, SM_GSI_MAD_SIZE);
	*len = SM_GSI_MAD_SIZE;
	if (from) {
		memset(from, 0, sizeof(*from));
		from->lid = k.slid;
		from->qpn = k.sqp;
		from->qkey = 0x80010000u;
	}
	return 0;
}

static int ibsim_gsi_fd(struct sm_gsi *g)
{
	return ((struct ibsim_gsi *)g)->p->side[SIDE_GSI].epfd;
}

static void ibsim_gsi_close(struct sm_gsi *g)
{
	struct ibsim_gsi *e = (struct ibsim_gsi *)g;
	struct sm_ibsim_pkt k;

	if (!e)
		return;
	pthread_mutex_lock(&e->p->send_mu);
	flush_held(e);   /* answers already given go out */
	pthread_mutex_unlock(&e->p->send_mu);
	pthread_mutex_lock(&e->p->mu);
	e->p->gsi = NULL;
	while (side_pop(e->p, SIDE_GSI, &k))
		;
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = sm_ibsim_fd(e->p->c) };
	(void)epoll_ctl(e->p->side[SIDE_SMP].epfd, EPOLL_CTL_ADD, ev.data.fd, &ev);   /* the SMP side's again */
	pthread_mutex_unlock(&e->p->mu);
	free(e);
}

static const struct sm_gsi_ops ibsim_gsi_ops = {
	.size = sizeof(struct sm_gsi_ops),
	.version = SM_GSI_OPS_VERSION,
	.name = "ibsim",
	.send = ibsim_gsi_send,
	.recv = ibsim_gsi_recv,
	.fd = ibsim_gsi_fd,
	.close = ibsim_gsi_close,
	.hold = ibsim_gsi_hold,
};

static int ibsim_gsi_open(struct sm_transport *t, uint8_t mgmt_class, struct sm_gsi **out, char *err,
			  size_t errlen)
{
	struct ibsim_port *p = port_of(t);
	struct ibsim_gsi *e;

	*out = NULL;
	if (mgmt_class == SM_CLASS_SMI || mgmt_class == SM_CLASS_SMI_DR)
		return sm_errf_rc(-EINVAL, err, errlen, "ibsim: class 0x%02x is the SM's own (QP0)", mgmt_class);
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->p = p;
	e->g.ops = &ibsim_gsi_ops;
	e->g.flags = SM_GSI_KERNEL_RMPP;   /* see send_rmpp() */
	e->g.mgmt_class = mgmt_class;
	e->g.priv = e;
	pthread_mutex_lock(&p->mu);
	if (p->gsi) {
		pthread_mutex_unlock(&p->mu);
		free(e);
		return sm_errf_rc(-EBUSY, err, errlen, "ibsim: %s has a GSI endpoint already", t->info.ca_name);
	}
	p->gsi = e;
	/*
	 * The GSI reader (the SA, on the loop) reads the socket from now on and
	 * hands SMPs to the SMP side (efd): the SMP side's pollable fd, which
	 * the loop watches between cycles, no longer wakes for every SA request
	 * (an extra callback and recvmmsg per wake-up). A worker waiting in
	 * recv() polls the socket itself.
	 */
	(void)epoll_ctl(p->side[SIDE_SMP].epfd, EPOLL_CTL_DEL, sm_ibsim_fd(p->c), NULL);
	pthread_mutex_unlock(&p->mu);
	*out = &e->g;
	return 0;
}

/*
 * The attach port's GUID as its SMA reports it: a DR NodeInfo of hop 0.
 * ibsim's control protocol gives the node GUID for both (GET_GUID,
 * GET_GID, and the PortGUID field of GET_NODEINFO), which is not a CA
 * port's GUID (node GUID + port number there). 0 when no answer came in
 * timeout_ms (nothing else reads the socket yet).
 */
static uint64_t own_port_guid(struct ibsim_port *p, int timeout_ms)
{
	struct sm_dr_path path = { .cnt = 0 };
	struct sm_smp s, r;
	struct sm_node_info ni;
	uint8_t mad[SM_MAD_SIZE], in[SM_MAD_SIZE];
	size_t len;

	sm_smp_init_dr(&s, SM_METHOD_GET, SM_ATTR_NODE_INFO, 0, &path);
	s.tid = 0x5a5a0001;
	if (sm_smp_encode(&s, mad) || ibsim_t_send(&p->t, mad, SM_MAD_SIZE, SM_PERMISSIVE_LID, 0))
		return 0;
	uint64_t end = sm_mono_us() + (uint64_t)timeout_ms * 1000u;
	while (sm_mono_us() < end) {
		if (ibsim_t_recv(&p->t, in, sizeof(in), &len, NULL, 50))
			continue;
		if (!sm_smp_decode(in, len, &r, NULL) && r.tid == s.tid && r.method == SM_METHOD_GET_RESP &&
		    !sm_node_info_decode(r.data, &ni, NULL))
			return ni.port_guid;
	}
	return 0;
}

/*
 * The attach port's LID, SM LID and state from its own SMA (a DR PortInfo of
 * hop 0), as umad reads them from sysfs: the election's discovery asks the
 * SM that configured the port first (daemon/ha.c). Only before anything
 * else reads the port (answers that are not ours are dropped).
 */
static int ibsim_t_refresh(struct sm_transport *t)
{
	struct ibsim_port *p = port_of(t);
	struct sm_dr_path path = { .cnt = 0 };
	struct sm_smp s, r;
	struct sm_port_info pi;
	uint8_t mad[SM_MAD_SIZE], in[SM_MAD_SIZE];
	size_t len;
	int rc;

	sm_smp_init_dr(&s, SM_METHOD_GET, SM_ATTR_PORT_INFO, 0, &path);
	s.tid = 0x5a5a0002;
	if ((rc = sm_smp_encode(&s, mad)) || (rc = ibsim_t_send(t, mad, SM_MAD_SIZE, SM_PERMISSIVE_LID, 0)))
		return rc;
	uint64_t end = sm_mono_us() + 500000u;
	while (sm_mono_us() < end) {
		if (ibsim_t_recv(t, in, sizeof(in), &len, NULL, 50))
			continue;
		if (!sm_smp_decode(in, len, &r, NULL) && r.tid == s.tid && r.method == SM_METHOD_GET_RESP &&
		    !r.status && !sm_port_info_decode(r.data, &pi, NULL)) {
			p->t.info.lid = pi.lid;
			p->t.info.sm_lid = pi.master_sm_lid;
			p->t.info.state = pi.port_state;
			p->t.info.gid_prefix = pi.gid_prefix;
			return 0;
		}
	}
	return -ETIMEDOUT;
}

static const struct sm_transport_ops ibsim_ops = {
	.size = sizeof(struct sm_transport_ops),
	.version = SM_TRANSPORT_OPS_VERSION,
	.name = "ibsim",
	.send = ibsim_t_send,
	.recv = ibsim_t_recv,
	.fd = ibsim_t_fd,
	.refresh = ibsim_t_refresh,
	.close = ibsim_t_close,
	.gsi_open = ibsim_gsi_open,
};

int sm_ibsim_transport_open(const char *sockname, const char *node, struct sm_transport **out,
			    char *err, size_t errlen)
{
	struct sm_ibsim *c = NULL;
	struct ibsim_port *p;
	int rc;

	*out = NULL;
	rc = sm_ibsim_open(sockname, node && *node ? node : NULL, 1, 5000, &c, err, errlen);
	if (rc)
		return rc;
	p = calloc(1, sizeof(*p));
	if (!p) {
		sm_ibsim_close(c);
		return -ENOMEM;
	}
	p->c = c;
	pthread_mutex_init(&p->mu, NULL);
	pthread_mutex_init(&p->send_mu, NULL);
	for (int s = 0; s < 2; s++)
		p->side[s].efd = p->side[s].epfd = -1;
	for (int s = 0; s < 2; s++) {
		rc = side_init(&p->side[s], sm_ibsim_fd(c));
		if (rc) {
			sm_errf(err, errlen, "ibsim: eventfd/epoll: %s", strerror(-rc));
			ibsim_t_close(&p->t);
			return rc;
		}
	}
	const struct sm_ibsim_info *in = sm_ibsim_info(c);
	struct sm_transport *t = &p->t;
	t->ops = &ibsim_ops;
	t->priv = p;
	snprintf(t->info.ca_name, sizeof(t->info.ca_name), "ibsim:%s", in->nodeid);
	t->info.port_num = in->node_type == 2 ? 0 : in->local_port;
	t->info.port_guid = in->port_guid;
	t->info.node_guid = in->node_guid;
	t->info.lid = in->lid;
	t->info.state = in->state;
	t->info.phys_state = 5;
	t->info.gid_prefix = 0xfe80000000000000ULL;
	uint64_t pg = own_port_guid(p, 1000);
	if (pg)
		t->info.port_guid = pg;
	*out = t;
	return 0;
}
