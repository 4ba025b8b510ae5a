/* SPDX-License-Identifier: MIT */
#ifndef SMD_MAD_GSI_H
#define SMD_MAD_GSI_H
/*
 * DOC: GSI endpoints (QP1 services such as the SA)
 *
 * A struct sm_gsi is where the MADs of one management class (the SA: 0x03)
 * arrive at one local port and where the answers leave. It is separate from
 * the SMP transport (transport.h) so that a sweep never reads an SA request
 * and a query storm never reads an SMP answer: each has its own fd and its
 * own reader. Implementations:
 *   - umad (umad.c): a second libibumad handle on the plane's port with an
 *     agent for the class registered as a server with rmpp_version 1, so on
 *     real hardware the kernel segments and reassembles RMPP
 *     (SM_GSI_KERNEL_RMPP): send() takes the whole message. Under umad2sim
 *     a client gets the first 224 bytes of any MAD (its receiver's buffer
 *     also holds the 64-byte umad header; its limit, not ours).
 *   - ibsim (ibsim.c): ibsim hands every QP0/QP1 request for a port to that
 *     port's one SM client, so the SMP transport and the GSI share one
 *     socket; whoever reads it passes the other's MADs on (see ibsim.c).
 *     SM_GSI_KERNEL_RMPP: the endpoint takes a whole message and sends its
 *     first segment, all that ibsim's clients (umad2sim's, which have no
 *     RMPP and never ACK) take of it; only single-MAD requests arrive.
 *     It reads up to 32 packets per system call (recvmmsg) and, between
 *     hold(true) and hold(false), sends single MADs together (sendmmsg).
 *   - mock (smd/mock): an in-process queue; tests and benchmarks play the
 *     hosts with sm_mock_gsi_inject()/sm_mock_gsi_take() (mock.h). The SA
 *     segments RMPP itself (no SM_GSI_KERNEL_RMPP).
 *
 * Every MAD here is untrusted input for its reader. Thread rules: one
 * reader (recv) at a time; send() may be called from any thread.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sm_transport;

#define SM_GSI_MAD_SIZE 256
/* Shortest message a GSI send() accepts: the common MAD and RMPP headers (the kernel's minimum). */
#define SM_GSI_MIN_MSG 36
/* Largest message a GSI send() accepts (whole RMPP payloads, SA header included once per segment). */
#define SM_GSI_MAX_MSG (64u << 20)

/* Where a GSI MAD came from / goes to (host order). */
struct sm_gsi_addr {
	uint16_t lid;          /* remote LID */
	uint8_t sl;
	uint32_t qpn;          /* remote QP (1 for a GSI request's sender, usually) */
	uint32_t qkey;         /* 0x80010000 for QP1 */
	uint16_t pkey_index;
	bool grh;              /* a GRH came with it (gid valid) */
	uint8_t gid[16];       /* remote GID, network order */
};

enum sm_gsi_flags {
	SM_GSI_KERNEL_RMPP = 1u << 0,   /* send() takes whole RMPP messages; recv() returns reassembled ones */
};

struct sm_gsi;

#define SM_GSI_OPS_VERSION 1

struct sm_gsi_ops {
	size_t size;            /* sizeof(struct sm_gsi_ops) */
	unsigned version;       /* SM_GSI_OPS_VERSION */
	const char *name;
	/*
	 * Send len bytes: SM_GSI_MIN_MSG..256 for one MAD (a shorter one is
	 * padded on the wire; its length tells a receiver where the records end),
	 * whole messages up to SM_GSI_MAX_MSG with SM_GSI_KERNEL_RMPP: an RMPP
	 * message (RMPP header active) as the SA header once and exactly its
	 * payload, not padded (the kernel pads the last segment and takes
	 * PayloadLength from len). 0, -EAGAIN/-ENOBUFS, -errno.
	 */
	int (*send)(struct sm_gsi *g, const uint8_t *mad, size_t len, const struct sm_gsi_addr *to);
	/*
	 * Receive one MAD (or one reassembled message) without blocking into buf
	 * of cap bytes: 0 with *len set, -EAGAIN when nothing is waiting,
	 * -EMSGSIZE when it did not fit (it is dropped), other -errno.
	 */
	int (*recv)(struct sm_gsi *g, uint8_t *buf, size_t cap, size_t *len, struct sm_gsi_addr *from);
	/*
	 * Polls readable when recv would not return -EAGAIN, or -1 (then poll
	 * recv). A reader reads until recv says -EAGAIN before it waits on the
	 * fd again: what one system call read ahead (ibsim's recvmmsg) is not
	 * signalled on the fd, and a recv may say -EAGAIN while the fd is
	 * readable (then it comes back at once).
	 */
	int (*fd)(struct sm_gsi *g);
	void (*close)(struct sm_gsi *g);   /* frees g */
	/*
	 * Optional (NULL, or an older ops without it: every send goes at once).
	 * hold(g, true): the single-MAD sends that follow may be held and go
	 * out together (one system call for many); hold(g, false) sends what
	 * is held and stops holding: the number of held MADs that could not be
	 * sent (>= 0; already counted by no one), or -errno. A reader that
	 * answers a batch of requests holds around the batch. Reader's thread.
	 */
	int (*hold)(struct sm_gsi *g, bool on);
};

struct sm_gsi {
	const struct sm_gsi_ops *ops;
	unsigned flags;         /* enum sm_gsi_flags */
	uint8_t mgmt_class;
	void *priv;
};

static inline int sm_gsi_send(struct sm_gsi *g, const uint8_t *mad, size_t len, const struct sm_gsi_addr *to)
{
	return g->ops->send(g, mad, len, to);
}

static inline int sm_gsi_recv(struct sm_gsi *g, uint8_t *buf, size_t cap, size_t *len, struct sm_gsi_addr *from)
{
	return g->ops->recv(g, buf, cap, len, from);
}

static inline int sm_gsi_fd(struct sm_gsi *g)
{
	return g->ops->fd ? g->ops->fd(g) : -1;
}

static inline int sm_gsi_hold(struct sm_gsi *g, bool on)
{
	const struct sm_gsi_ops *o = g->ops;
	return o->size >= offsetof(struct sm_gsi_ops, hold) + sizeof(o->hold) && o->hold ? o->hold(g, on) : 0;
}

static inline void sm_gsi_close(struct sm_gsi *g)
{
	if (g)
		g->ops->close(g);
}

/*
 * Open the GSI endpoint for mgmt_class on the port transport t is bound to
 * (t stays usable and must outlive the endpoint). -EOPNOTSUPP when the
 * transport has none, with a message in err.
 */
int sm_transport_gsi_open(struct sm_transport *t, uint8_t mgmt_class, struct sm_gsi **out, char *err,
			  size_t errlen);

#endif
