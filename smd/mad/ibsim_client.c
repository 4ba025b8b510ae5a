/* SPDX-License-Identifier: MIT */
/*
 * DOC: ibsim client protocol implementation (see ibsim_client.h)
 *
 * Owns two datagram sockets per attachment. Nothing here trusts the
 * simulator: short or wrong-sized datagrams are dropped, a control reply
 * with the wrong magic or type is an error.
 */
#include "mad/ibsim_client.h"
#include "lib/err.h"
#include "lib/clock.h"

#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define SIM_MAGIC 0xdeadbeefu
#define SIM_CTL_MAX_DATA 64

enum {
	SIM_CTL_ERROR = 0,
	SIM_CTL_CONNECT,
	SIM_CTL_DISCONNECT,
	SIM_CTL_GET_PORT,
	SIM_CTL_GET_VENDOR,
	SIM_CTL_GET_GID,
	SIM_CTL_GET_GUID,
	SIM_CTL_GET_NODEINFO,
	SIM_CTL_GET_PORTINFO,
	SIM_CTL_SET_ISSM,
	SIM_CTL_GET_PKEYS,
};

/* The simulator's wire structs, in host order as it uses them (same machine). */
struct sim_ctl_msg {
	uint32_t magic;
	uint32_t clientid;
	uint32_t type;
	uint32_t len;
	uint8_t data[SIM_CTL_MAX_DATA];
};

struct sim_client_info_msg {
	uint32_t id;
	uint32_t qp;
	uint32_t issm;
	char nodeid[32];
};

struct sim_request_msg {
	uint32_t dlid;
	uint32_t slid;
	uint32_t dqp;
	uint32_t sqp;
	uint32_t status;
	uint64_t length;
	uint8_t mad[SM_IBSIM_MAD_SIZE];
};

_Static_assert(sizeof(struct sim_ctl_msg) == 80, "sim_ctl layout");
_Static_assert(sizeof(struct sim_client_info_msg) == 44, "sim_client_info layout");
_Static_assert(sizeof(struct sim_client_info_msg) <= SIM_CTL_MAX_DATA, "fits ctl data");
_Static_assert(sizeof(struct sim_request_msg) == 288, "sim_request layout");

struct sm_ibsim {
	int fd_ctl, fd_data;
	uint32_t slot;          /* server's client slot */
	uint16_t tid_hi;        /* bits 48-63 of the TIDs we send, restored on receive */
	struct sm_ibsim_info info;
};

static socklen_t sim_name(struct sockaddr_un *a, const char *fmt, ...)
{
	va_list ap;
	int n;

	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	/* abstract namespace: leading NUL, name not NUL-terminated */
	va_start(ap, fmt);
	n = vsnprintf(a->sun_path + 1, sizeof(a->sun_path) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n > sizeof(a->sun_path) - 3)
		n = (int)sizeof(a->sun_path) - 3;
	/* ibsim (0.10, Debian 12) counts the terminating NUL in the address length */
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n + 1);
}

static int wait_fd(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int rc;

	do
		rc = poll(&p, 1, timeout_ms);
	while (rc < 0 && errno == EINTR);
	if (rc < 0)
		return -errno;
	return rc ? 0 : -ETIMEDOUT;
}

/* One control exchange; data (len bytes) is sent and replaced by the reply. */
static int sim_ctl(struct sm_ibsim *c, uint32_t type, void *data, uint32_t len, int timeout_ms)
{
	struct sim_ctl_msg m;
	ssize_t n;
	int rc;

	if (len > SIM_CTL_MAX_DATA)
		return -EINVAL;
	memset(&m, 0, sizeof(m));
	m.magic = SIM_MAGIC;
	m.clientid = c->slot;
	m.type = type;
	m.len = len;
	if (len)
		memcpy(m.data, data, len);
	if (send(c->fd_ctl, &m, sizeof(m), 0) != (ssize_t)sizeof(m))
		return errno ? -errno : -EIO;
	rc = wait_fd(c->fd_ctl, timeout_ms);
	if (rc)
		return rc;
	n = recv(c->fd_ctl, &m, sizeof(m), 0);
	if (n != (ssize_t)sizeof(m) || m.magic != SIM_MAGIC)
		return -EPROTO;
	if (m.type == SIM_CTL_ERROR)
		return -ECONNREFUSED;
	if (len)
		memcpy(data, m.data, len);
	return 0;
}

static uint64_t be64_at(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

int sm_ibsim_open(const char *sockname, const char *node, int issm, int timeout_ms,
		  struct sm_ibsim **out, char *err, size_t errlen)
{
	static unsigned seq;
	struct sockaddr_un a;
	socklen_t alen;
	struct sim_client_info_msg ci;
	uint8_t buf[SIM_CTL_MAX_DATA];
	struct sm_ibsim *c;
	int rc;

	*out = NULL;
	if (!sockname)
		sockname = getenv("IBSIM_SOCKNAME");
	if (!sockname || !*sockname)
		sockname = "sim";
	if (node && strlen(node) >= sizeof(ci.nodeid)) {
		sm_errf(err, errlen, "ibsim node id '%s' is longer than %zu characters", node,
		       sizeof(ci.nodeid) - 1);
		return -EINVAL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->fd_ctl = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	c->fd_data = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (c->fd_ctl < 0 || c->fd_data < 0) {
		rc = -errno;
		sm_errf(err, errlen, "ibsim: socket: %s", strerror(errno));
		goto fail;
	}

	/* a client id unique among this simulator's clients */
	uint32_t id = ((uint32_t)getpid() << 4) | (seq++ & 15);
	alen = sim_name(&a, "%s:ctl%u", sockname, id);
	if (bind(c->fd_ctl, (struct sockaddr *)&a, alen) < 0) {
		rc = -errno;
		sm_errf(err, errlen, "ibsim: bind %s:ctl%u: %s", sockname, id, strerror(errno));
		goto fail;
	}
	alen = sim_name(&a, "%s:ctl", sockname);
	int64_t deadline = sm_mono_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	while (connect(c->fd_ctl, (struct sockaddr *)&a, alen) < 0) {
		if ((errno != ECONNREFUSED && errno != ENOENT) || sm_mono_ms() >= deadline) {
			rc = -errno;
			sm_errf(err, errlen, "ibsim: no simulator at socket '%s' (%s); is ibsim -s running with IBSIM_SOCKNAME=%s?",
			       sockname, strerror(errno), sockname);
			goto fail;
		}
		usleep(20000);
	}
	alen = sim_name(&a, "%s:in%u", sockname, id);
	if (bind(c->fd_data, (struct sockaddr *)&a, alen) < 0) {
		rc = -errno;
		sm_errf(err, errlen, "ibsim: bind %s:in%u: %s", sockname, id, strerror(errno));
		goto fail;
	}

	memset(&ci, 0, sizeof(ci));
	ci.id = id;
	ci.qp = 0;
	ci.issm = issm ? 1 : 0;
	if (node)
		memcpy(ci.nodeid, node, strlen(node));
	int wait = timeout_ms > 0 ? timeout_ms : 2000;
	rc = sim_ctl(c, SIM_CTL_CONNECT, &ci, sizeof(ci), wait);
	if (rc) {
		sm_errf(err, errlen,
		       rc == -ECONNREFUSED
			       ? "ibsim refused to attach at node '%s' (unknown node, 10 clients already, or an SM already there)"
			       : "ibsim: connect at node '%s' failed: %s",
		       node ? node : "(default)", strerror(-rc));
		goto fail;
	}
	if (ci.id >= 10) {
		rc = -EPROTO;
		sm_errf(err, errlen, "ibsim: bad client slot %u in connect reply", ci.id);
		goto fail;
	}
	c->slot = ci.id;
	memcpy(c->info.nodeid, ci.nodeid, sizeof(c->info.nodeid) - 1);
	alen = sim_name(&a, "%s:out%u", sockname, c->slot);
	if (connect(c->fd_data, (struct sockaddr *)&a, alen) < 0) {
		rc = -errno;
		sm_errf(err, errlen, "ibsim: connect data socket: %s", strerror(errno));
		goto fail;
	}

	/* NodeInfo (wire format) of the attach node */
	memset(buf, 0, sizeof(buf));
	rc = sim_ctl(c, SIM_CTL_GET_NODEINFO, buf, sizeof(buf), wait);
	if (rc) {
		sm_errf(err, errlen, "ibsim: GET_NODEINFO failed: %s", strerror(-rc));
		goto fail;
	}
	c->info.node_type = buf[2];
	c->info.num_ports = buf[3];
	c->info.node_guid = be64_at(buf + 12);
	c->info.port_guid = be64_at(buf + 20);
	c->info.local_port = buf[36];
	/* PortInfo (wire format) of the attach port: LID at 16, state low nibble of 32 */
	memset(buf, 0, sizeof(buf));
	rc = sim_ctl(c, SIM_CTL_GET_PORTINFO, buf, sizeof(buf), wait);
	if (rc) {
		sm_errf(err, errlen, "ibsim: GET_PORTINFO failed: %s", strerror(-rc));
		goto fail;
	}
	c->info.lid = (uint16_t)(buf[16] << 8 | buf[17]);
	c->info.state = buf[32] & 0x0f;
	*out = c;
	return 0;
fail:
	sm_ibsim_close(c);
	return rc ? rc : -EIO;
}

void sm_ibsim_close(struct sm_ibsim *c)
{
	if (!c)
		return;
	if (c->fd_ctl >= 0 && c->info.nodeid[0])
		(void)sim_ctl(c, SIM_CTL_DISCONNECT, NULL, 0, 500);
	if (c->fd_ctl >= 0)
		close(c->fd_ctl);
	if (c->fd_data >= 0)
		close(c->fd_data);
	free(c);
}

const struct sm_ibsim_info *sm_ibsim_info(const struct sm_ibsim *c)
{
	return &c->info;
}

int sm_ibsim_fd(const struct sm_ibsim *c)
{
	return c->fd_data;
}

static void fill_req(struct sim_request_msg *r, const uint8_t mad[SM_IBSIM_MAD_SIZE], size_t len, uint16_t dlid,
		     uint32_t dqp, uint32_t sqp)
{
	memset(r, 0, sizeof(*r));
	r->dlid = htobe16(dlid);
	r->slid = dlid == 0xffff ? htobe16(0xffff) : 0; /* 0: the simulator fills in our LID */
	r->dqp = htobe32(dqp);
	r->sqp = htobe32(sqp);
	r->length = htobe64(len);
	memcpy(r->mad, mad, SM_IBSIM_MAD_SIZE);
}

static int send_req(struct sm_ibsim *c, const uint8_t mad[SM_IBSIM_MAD_SIZE], size_t len, uint16_t dlid,
		    uint32_t dqp, uint32_t sqp)
{
	struct sim_request_msg r;

	fill_req(&r, mad, len, dlid, dqp, sqp);
	if (send(c->fd_data, &r, sizeof(r), 0) != (ssize_t)sizeof(r))
		return errno ? -errno : -EIO;
	return 0;
}

int sm_ibsim_send_pkts(struct sm_ibsim *c, const struct sm_ibsim_out *o, unsigned n)
{
	struct sim_request_msg r[SM_IBSIM_RECV_BATCH];
	struct mmsghdr mh[SM_IBSIM_RECV_BATCH];
	struct iovec iov[SM_IBSIM_RECV_BATCH];
	unsigned done = 0;

	while (done < n) {
		unsigned k = n - done < SM_IBSIM_RECV_BATCH ? n - done : SM_IBSIM_RECV_BATCH;
		memset(mh, 0, k * sizeof(mh[0]));
		for (unsigned i = 0; i < k; i++) {
			const struct sm_ibsim_out *p = &o[done + i];
			fill_req(&r[i], p->mad, p->len, p->dlid, p->dqp, p->sqp);
			iov[i] = (struct iovec){ .iov_base = &r[i], .iov_len = sizeof(r[i]) };
			mh[i].msg_hdr.msg_iov = &iov[i];
			mh[i].msg_hdr.msg_iovlen = 1;
		}
		int m = sendmmsg(c->fd_data, mh, k, 0);
		if (m < 0 && errno == EINTR)
			continue;
		if (m <= 0)
			return done ? (int)done : m < 0 ? -errno : -EIO;
		done += (unsigned)m;
	}
	return (int)done;
}

int sm_ibsim_send(struct sm_ibsim *c, const uint8_t mad[SM_IBSIM_MAD_SIZE], uint16_t dlid,
		  uint32_t dqp)
{
	if (!(mad[3] & 0x80))                  /* a request: remember our TID's top bits */
		c->tid_hi = (uint16_t)(mad[8] << 8 | mad[9]);
	return send_req(c, mad, SM_IBSIM_MAD_SIZE, dlid, dqp, 0);
}

int sm_ibsim_send_pkt(struct sm_ibsim *c, const uint8_t mad[SM_IBSIM_MAD_SIZE], size_t len, uint16_t dlid,
		      uint32_t dqp, uint32_t sqp)
{
	if (len > SM_IBSIM_MAD_SIZE)
		return -EINVAL;
	return send_req(c, mad, len, dlid, dqp, sqp);
}

int sm_ibsim_recv_pkt(struct sm_ibsim *c, struct sm_ibsim_pkt *p)
{
	struct sim_request_msg r;
	ssize_t n;

	do
		n = recv(c->fd_data, &r, sizeof(r), MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	if (n != (ssize_t)sizeof(r))
		return -EAGAIN;          /* wrong-sized datagram: not a simulator packet; dropped */
	p->dlid = be16toh((uint16_t)r.dlid);
	p->slid = be16toh((uint16_t)r.slid);
	p->dqp = be32toh(r.dqp);
	p->sqp = be32toh(r.sqp);
	p->status = be32toh(r.status);
	memcpy(p->mad, r.mad, SM_IBSIM_MAD_SIZE);
	return 0;
}

int sm_ibsim_recv_pkts(struct sm_ibsim *c, struct sm_ibsim_pkt *p, unsigned max)
{
	struct sim_request_msg r[SM_IBSIM_RECV_BATCH];
	struct mmsghdr mh[SM_IBSIM_RECV_BATCH];
	struct iovec iov[SM_IBSIM_RECV_BATCH];
	int n, k = 0;

	if (max > SM_IBSIM_RECV_BATCH)
		max = SM_IBSIM_RECV_BATCH;
	memset(mh, 0, max * sizeof(mh[0]));
	for (unsigned i = 0; i < max; i++) {
		iov[i] = (struct iovec){ .iov_base = &r[i], .iov_len = sizeof(r[i]) };
		mh[i].msg_hdr.msg_iov = &iov[i];
		mh[i].msg_hdr.msg_iovlen = 1;
	}
	do
		n = recvmmsg(c->fd_data, mh, max, MSG_DONTWAIT, NULL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	for (int i = 0; i < n; i++) {
		if (mh[i].msg_len != sizeof(r[i]))
			continue;        /* wrong-sized datagram: not a simulator packet; dropped */
		p[k].dlid = be16toh((uint16_t)r[i].dlid);
		p[k].slid = be16toh((uint16_t)r[i].slid);
		p[k].dqp = be32toh(r[i].dqp);
		p[k].sqp = be32toh(r[i].sqp);
		p[k].status = be32toh(r[i].status);
		memcpy(p[k].mad, r[i].mad, SM_IBSIM_MAD_SIZE);
		k++;
	}
	return k;
}

void sm_ibsim_restore_tid(const struct sm_ibsim *c, struct sm_ibsim_pkt *p)
{
	if ((p->mad[3] & 0x80) || p->status) {
		p->mad[8] = (uint8_t)(c->tid_hi >> 8);
		p->mad[9] = (uint8_t)c->tid_hi;
	}
}

int sm_ibsim_recv(struct sm_ibsim *c, uint8_t mad[SM_IBSIM_MAD_SIZE], int timeout_ms,
		  uint16_t *slid, uint32_t *status)
{
	struct sm_ibsim_pkt p;
	int rc;

	for (;;) {
		rc = wait_fd(c->fd_data, timeout_ms);
		if (rc)
			return rc;
		rc = sm_ibsim_recv_pkt(c, &p);
		if (rc == 0)
			break;
		if (rc != -EAGAIN)
			return rc;
		if (timeout_ms == 0)
			return -ETIMEDOUT;
	}
	sm_ibsim_restore_tid(c, &p);
	memcpy(mad, p.mad, SM_IBSIM_MAD_SIZE);
	if (slid)
		*slid = p.slid;
	if (status)
		*status = p.status;
	return p.status ? -EIO : 0;
}
