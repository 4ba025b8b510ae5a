/* SPDX-License-Identifier: MIT */
#ifndef SMD_IBSIM_CLIENT_H
#define SMD_IBSIM_CLIENT_H
/*
 * DOC: ibsim client protocol
 *
 * Talks to an ibsim(1) simulator directly with its own client protocol, so
 * one process can attach at several nodes of one ibsim instance (one per
 * plane) — umad2sim exposes only one port per process.
 *
 * Wire facts (from ibsim's include/ibsim.h and its server, not copied):
 *  - Unix datagram sockets in the abstract namespace (address length
 *    counts a trailing NUL), names built from a
 *    base name (env IBSIM_SOCKNAME, default "sim"): the server listens on
 *    "<base>:ctl"; a client binds "<base>:ctl<ID>" for control and
 *    "<base>:in<ID>" for data, where ID is any number unique among the
 *    simulator's clients (we use pid * 16 + k).
 *  - Control messages are a fixed struct {magic 0xdeadbeef, clientid,
 *    type, len, data[64]} sent and answered in place; CONNECT carries
 *    {id, qp, issm, nodeid[32]} and returns the server's client slot;
 *    the data socket then connects to "<base>:out<slot>".
 *  - Data packets are a fixed struct {dlid, slid, dqp, sqp, status (all
 *    u32, LIDs as 16-bit big-endian values, QPs big-endian), length (u64
 *    big-endian), mad[256]}. A DR SMP is sent with dlid = slid = 0xffff.
 *    status != 0 (110) marks a MAD the simulator dropped.
 *  - The server overwrites bits 48-63 of a request's TID with its client
 *    slot; responses keep that, so the client restores them.
 *  - At most 10 clients per simulator.
 */
#include <stddef.h>
#include <stdint.h>

struct sm_ibsim;

#define SM_IBSIM_MAD_SIZE 256

struct sm_ibsim_info {
	char nodeid[32];        /* node the client is attached at */
	uint64_t node_guid;     /* from the attach node's NodeInfo */
	uint64_t port_guid;
	uint8_t node_type;      /* 1 CA, 2 switch */
	uint8_t num_ports;
	uint8_t local_port;     /* NodeInfo LocalPortNum of the attach port */
	uint16_t lid;           /* current LID of the attach port (0 before an SM ran) */
	uint8_t state;          /* PortState of the attach port */
};

/*
 * Attach at `node` (an ibsim node id or description; NULL = the
 * simulator's default node). sockname NULL = $IBSIM_SOCKNAME or "sim".
 * issm: set IsSM on the port (ibsim refuses a second SM on one node).
 * Waits up to timeout_ms for the simulator to answer. Returns 0 or a
 * negative errno with a message in err.
 */
int sm_ibsim_open(const char *sockname, const char *node, int issm, int timeout_ms,
		  struct sm_ibsim **out, char *err, size_t errlen);
void sm_ibsim_close(struct sm_ibsim *c);   /* accepts NULL */

const struct sm_ibsim_info *sm_ibsim_info(const struct sm_ibsim *c);
int sm_ibsim_fd(const struct sm_ibsim *c);  /* pollable data socket */

/* Send one MAD. dlid: 0xffff for directed route, else the destination LID. dqp: 0 for SMPs. */
int sm_ibsim_send(struct sm_ibsim *c, const uint8_t mad[SM_IBSIM_MAD_SIZE], uint16_t dlid,
		  uint32_t dqp);
/*
 * Receive one MAD, waiting up to timeout_ms (0 = do not wait, < 0 = forever).
 * Returns 0, -ETIMEDOUT, -EIO when the simulator marked the MAD dropped
 * (the buffer then holds the request as sent, status in *status), or
 * another negative errno. slid may be NULL.
 */
int sm_ibsim_recv(struct sm_ibsim *c, uint8_t mad[SM_IBSIM_MAD_SIZE], int timeout_ms,
		  uint16_t *slid, uint32_t *status);


/*
 * One packet as the simulator moves it (host order), for a transport that
 * shares the socket between readers (ibsim.c): no TID is touched here.
 */
struct sm_ibsim_pkt {
	uint16_t dlid, slid;
	uint32_t dqp, sqp;
	uint32_t status;        /* != 0: the simulator dropped our packet (it is the one we sent) */
	uint8_t mad[SM_IBSIM_MAD_SIZE];
};
/* Read one packet without waiting: 0, -EAGAIN (nothing, or a wrong-sized datagram dropped), -errno. */
int sm_ibsim_recv_pkt(struct sm_ibsim *c, struct sm_ibsim_pkt *p);
/*
 * Read up to max (at most SM_IBSIM_RECV_BATCH) packets that are waiting,
 * in one system call (recvmmsg), without waiting: how many (0: only
 * wrong-sized datagrams, dropped), -EAGAIN (nothing), -errno.
 */
#define SM_IBSIM_RECV_BATCH 32
int sm_ibsim_recv_pkts(struct sm_ibsim *c, struct sm_ibsim_pkt *p, unsigned max);
/*
 * Send one MAD from QP sqp to (dlid, dqp) as is: the TID is not remembered
 * (a GSI's own TIDs). len (<= 256) goes in the packet's length field, which
 * umad2sim hands its client as the MAD's length.
 */
int sm_ibsim_send_pkt(struct sm_ibsim *c, const uint8_t mad[SM_IBSIM_MAD_SIZE], size_t len, uint16_t dlid,
		      uint32_t dqp, uint32_t sqp);
/* One packet to send with sm_ibsim_send_pkts(): as sm_ibsim_send_pkt()'s arguments. */
struct sm_ibsim_out {
	uint8_t mad[SM_IBSIM_MAD_SIZE];
	size_t len;
	uint16_t dlid;
	uint32_t dqp, sqp;
};
/* Send n packets in as few system calls as the socket takes (sendmmsg): how many went, or -errno. */
int sm_ibsim_send_pkts(struct sm_ibsim *c, const struct sm_ibsim_out *o, unsigned n);
/* Restore our TID's top bits in a response or a dropped request of sm_ibsim_send()'s (see the DOC). */
void sm_ibsim_restore_tid(const struct sm_ibsim *c, struct sm_ibsim_pkt *p);

#endif

/*
 * A MAD transport (transport.h) over this protocol: spec "ibsim" or
 * "ibsim:NODE" (NODE = ibsim node id or description; default node when
 * omitted). The port is marked IsSM in the simulator. sockname NULL =
 * $IBSIM_SOCKNAME or "sim".
 */
struct sm_transport;
int sm_ibsim_transport_open(const char *sockname, const char *node, struct sm_transport **out,
			    char *err, size_t errlen);
