/* SPDX-License-Identifier: MIT */
#ifndef SMD_TRANSPORT_H
#define SMD_TRANSPORT_H
/*
 * DOC: MAD transports
 *
 * A transport moves whole 256-byte SMPs between the SM and one local port:
 * send one, receive one (with a timeout), expose a pollable fd when there is
 * one, and report what the local port is. Implementations:
 *   - umad (transport_umad.c): libibumad on a local CA port; the same code
 *     runs on real HCAs and under ibsim's umad2sim (LD_PRELOAD).
 *   - mock (mock.c): an in-process emulated fabric, see mock.h.
 * Tests build their own fake transports by filling struct sm_transport_ops.
 *
 * Several transports can be open at once in one process (one per plane);
 * nothing here is global except libibumad's own one-time umad_init().
 *
 * A transport is owned by whoever opened it and freed with
 * sm_transport_close() (accepts NULL). Functions return 0 or a negative
 * errno; open functions write a message into err (may be NULL).
 */
#include <stddef.h>
#include <stdint.h>

struct sm_transport;
struct sm_gsi;

/* Who sent a received MAD (only meaningful for LID-routed MADs, e.g. traps). */
struct sm_mad_addr {
	uint16_t slid;   /* source LID (0 if unknown) */
	uint8_t sl;
};

/* Local port the transport is bound to (refreshable with ops->refresh). */
struct sm_transport_info {
	char ca_name[64];     /* "mlx5_0", "mock" ... */
	uint8_t port_num;
	uint64_t port_guid;   /* host order */
	uint64_t node_guid;   /* host order, 0 if unknown */
	uint16_t lid;         /* current base LID, 0 before an SM assigned one */
	uint8_t lmc;
	uint16_t sm_lid;
	uint8_t state;        /* enum sm_port_state */
	uint8_t phys_state;   /* 5 = LinkUp */
	uint64_t gid_prefix;
};

#define SM_TRANSPORT_OPS_VERSION 1

struct sm_transport_ops {
	size_t size;            /* sizeof(struct sm_transport_ops) */
	unsigned version;       /* SM_TRANSPORT_OPS_VERSION */
	const char *name;       /* "umad", "mock", ... */
	/*
	 * Send one MAD of `len` bytes. dlid: destination LID for LID-routed
	 * MADs, SM_PERMISSIVE_LID (0xFFFF) for directed route. resp_timeout_ms:
	 * how long the sender will wait for a response (a hint: umad hands it to
	 * the kernel, which tracks the request; 0 for a MAD that expects no
	 * response, such as a GetResp or TrapRepress). Returns 0, -EAGAIN /
	 * -ENOBUFS when the transport is momentarily full, other -errno.
	 */
	int (*send)(struct sm_transport *t, const uint8_t *mad, size_t len, uint16_t dlid,
		    unsigned resp_timeout_ms);
	/*
	 * Receive one MAD into buf (cap >= SM_MAD_SIZE); *len gets its length
	 * (which may be short: the caller validates). timeout_ms: 0 polls,
	 * < 0 waits forever. Returns 0, -ETIMEDOUT when nothing arrived,
	 * other -errno. from may be NULL.
	 */
	int (*recv)(struct sm_transport *t, uint8_t *buf, size_t cap, size_t *len,
		    struct sm_mad_addr *from, int timeout_ms);
	/* A file descriptor that polls readable when recv would not block, or -1. May be NULL. */
	int (*fd)(struct sm_transport *t);
	/*
	 * Monotonic clock of this transport in microseconds. NULL = CLOCK_MONOTONIC.
	 * A mock fabric runs on virtual time so that timeouts cost nothing; the
	 * transaction engine always asks the transport for the time.
	 */
	uint64_t (*now_us)(struct sm_transport *t);
	/* Re-read the local port's state into t->info (LID, state...). May be NULL. */
	int (*refresh)(struct sm_transport *t);
	void (*close)(struct sm_transport *t);   /* frees t */
	/*
	 * Optional (check ops->size first: older ops end before it; see
	 * sm_transport_gsi_open() in mad/gsi.h): open the GSI endpoint for a
	 * management class on the same port. NULL: the transport has none.
	 */
	int (*gsi_open)(struct sm_transport *t, uint8_t mgmt_class, struct sm_gsi **out, char *err,
			size_t errlen);
};

struct sm_transport {
	const struct sm_transport_ops *ops;
	struct sm_transport_info info;
	void *priv;            /* implementation data */
};

static inline int sm_transport_send(struct sm_transport *t, const uint8_t *mad, size_t len,
				    uint16_t dlid, unsigned resp_timeout_ms)
{
	return t->ops->send(t, mad, len, dlid, resp_timeout_ms);
}

static inline int sm_transport_recv(struct sm_transport *t, uint8_t *buf, size_t cap, size_t *len,
				    struct sm_mad_addr *from, int timeout_ms)
{
	return t->ops->recv(t, buf, cap, len, from, timeout_ms);
}

static inline int sm_transport_fd(struct sm_transport *t)
{
	return t->ops->fd ? t->ops->fd(t) : -1;
}

/* Transport time (see ops->now_us). */
uint64_t sm_transport_now_us(struct sm_transport *t);

static inline int sm_transport_refresh(struct sm_transport *t)
{
	return t->ops->refresh ? t->ops->refresh(t) : 0;
}

void sm_transport_close(struct sm_transport *t);  /* accepts NULL */

/*
 * Open libibumad on CA `ca` port `port`. ca NULL (or "") and port 0: the
 * first port (CAs in umad_get_cas_names() order, ports ascending) whose
 * physical state is LinkUp — before any SM ran, ports are INIT, so ACTIVE
 * is not required. ca given and port 0: first LinkUp port of that CA.
 * Registers agents for SMI classes 0x81 and 0x01 (the latter also receiving
 * unsolicited Trap/TrapRepress) and holds the port's issm device open, so
 * the port advertises IsSM and traps reach it (under ibsim too); another SM
 * holding it makes the open fail (-EAGAIN) rather than wait. Errors:
 * -ENODEV (no CA / no usable port), -EINVAL (bad CA name / port), -EIO and
 * friends from libibumad, with a message in err.
 */
int sm_umad_open(const char *ca, unsigned port, struct sm_transport **out, char *err,
		 size_t errlen);

/*
 * Open a transport from a spec string: "umad" (default port), "umad:CA"
 * or "umad:CA:PORT". Mock fabrics are opened with mock.h instead (they
 * need a fabric). -EINVAL with a message for an unknown spec.
 */
int sm_transport_open(const char *spec, struct sm_transport **out, char *err, size_t errlen);

#endif
