/* SPDX-License-Identifier: MIT */
#ifndef SMD_SA_RMPP_H
#define SMD_SA_RMPP_H
/*
 * DOC: RMPP for the SA (IBA vol. 1, 13.6), as two pure state machines
 *
 * The sender cuts one SA answer (its records, n bytes) into 256-byte DATA
 * segments: each repeats the 56-byte SA header and carries 200 bytes of
 * the records (the last one zero-padded). PayloadLength (data2) is set in
 * the first segment (n + 20 bytes per segment: the SA part of the header
 * counts as payload, as the kernel and OpenSM count it) and in the last
 * (its own share: 20 + the bytes of records in it); 0 in the others. The
 * receiver's ACKs move the window (ACK seg = last received in order,
 * data2 = NewWindowLast); the first window is segment 1 alone. When no ACK
 * comes for a window within the timeout (the caller's, or longer when an
 * ACK's RRespTime asks for more) the sender goes back to the first
 * segment not acknowledged, up to max_retries times, then gives up and
 * asks for an ABORT (status TMR). A STOP or ABORT from the receiver ends
 * the transfer. An ACK of the last segment completes it.
 *
 * The receiver reassembles a multi-segment request (a GetMulti
 * MultiPathRecord): segment 1 must carry FIRST, segments must come in
 * order; a duplicate (seg <= the last one in order) is answered by the
 * ACK again (the sender lost it); one ahead of order but in the window is
 * dropped (the sender resends it after its timeout); one beyond the window
 * gets ABORT S2B. It ACKs at the end of each window and at the last
 * segment, stops (STOP, status RESX) a message larger than its bound, and
 * says when it has been idle too long (the caller drops it).
 *
 * Neither machine reads a clock or does I/O: the caller passes now_us and
 * sends the 256-byte MADs they write. Lengths and counts are bounded by
 * the caller's limits; nothing here trusts a field of a received MAD.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sa/sa_mad.h"

#define SM_RMPP_VERSION 1
#define SM_RMPP_SEG_PAYLOAD 220          /* SA part of the header (20) + 200 bytes of data */
#define SM_RMPP_SA_HDR_PART (SM_SA_HDR_SIZE - 36)
#define SM_RMPP_RESP_TIME_NONE 0x1F      /* RRespTime: no time given */
#define SM_RMPP_MAX_WINDOW 64            /* segments sent ahead of the last ACK, whatever the receiver grants */
#define SM_RMPP_MAX_WAIT_US 8000000u     /* an ACK's RRespTime above 21 (8.6 s) counts as this */

/* RMPP status (IBA table 183) */
#define SM_RMPP_STATUS_OK 0
#define SM_RMPP_STATUS_RESX 1            /* resources exhausted (STOP) */
#define SM_RMPP_STATUS_T2L 118           /* total time too long */
#define SM_RMPP_STATUS_BAD_LEN 119       /* inconsistent last and payload length */
#define SM_RMPP_STATUS_BAD_SEG 120       /* inconsistent first and segment number */
#define SM_RMPP_STATUS_BADT 121          /* bad RMPP type */
#define SM_RMPP_STATUS_W2S 122           /* NewWindowLast too small */
#define SM_RMPP_STATUS_S2B 123           /* segment number too big */
#define SM_RMPP_STATUS_BAD_STATUS 124
#define SM_RMPP_STATUS_UNV 125           /* unsupported version */
#define SM_RMPP_STATUS_TMR 126           /* too many retries */
#define SM_RMPP_STATUS_UNSPEC 127

/* Segments needed for n bytes of records (at least one, also for n = 0). */
static inline uint32_t sm_rmpp_nseg(size_t n)
{
	return n == 0 ? 1u : (uint32_t)((n + SM_SA_DATA_SIZE - 1) / SM_SA_DATA_SIZE);
}

/* What a machine wants its caller to do next. */
enum sm_rmpp_act {
	SM_RMPP_IDLE = 0,     /* nothing to send now (wait for input or the timer) */
	SM_RMPP_SEND,         /* a MAD was written: send it */
	SM_RMPP_DONE,         /* transfer complete (sender: last ACKed; receiver: message whole) */
	SM_RMPP_FAILED,       /* ended (ABORT/STOP received or sent, retries out): free it */
};

/* ---- sender ---- */

struct sm_rmpp_send {
	struct sm_sa_hdr hdr;   /* the response header repeated in each segment */
	const uint8_t *data;    /* the records; not owned, must outlive the sender */
	size_t len;
	uint32_t nseg;
	uint32_t last_ack;      /* segments acknowledged in order (0..nseg) */
	uint32_t next;          /* next segment to send (1..nseg+1) */
	uint32_t sent_max;      /* highest segment sent so far */
	uint32_t win_last;      /* send up to this segment */
	uint64_t timeout_us;    /* per window: base_timeout_us, or longer when an ACK's RRespTime asks */
	uint64_t base_timeout_us;
	uint64_t due_us;        /* resend when now >= due_us (0: not armed) */
	unsigned retries, max_retries;
	uint8_t end_status;     /* why it failed (ABORT/STOP status received or sent) */
	bool abort_pending;     /* an ABORT is to be written by the next sm_rmpp_send_next */
	bool finished;
};

/*
 * Start sending len bytes of records under hdr (a response header: method,
 * status, TID, attribute, attr_offset as they go on the wire). timeout_us
 * is the wait for an ACK, max_retries the resends of a window before it
 * gives up.
 */
void sm_rmpp_send_init(struct sm_rmpp_send *s, const struct sm_sa_hdr *hdr, const uint8_t *data, size_t len,
		       uint64_t timeout_us, unsigned max_retries);
/*
 * The next MAD to send now into mad (256 bytes): SM_RMPP_SEND when one was
 * written (call again for the next), SM_RMPP_IDLE when the window is full
 * or everything is out (wait for an ACK or the timer), SM_RMPP_DONE or
 * SM_RMPP_FAILED once ended.
 */
enum sm_rmpp_act sm_rmpp_send_next(struct sm_rmpp_send *s, uint64_t now_us, uint8_t mad[SM_SA_MAD_SIZE]);
/*
 * An RMPP MAD from the receiver for this transfer (ACK, STOP, ABORT; h is
 * its decoded header). SM_RMPP_DONE when the last segment is ACKed,
 * SM_RMPP_FAILED on STOP/ABORT or when the ACK is invalid (an ABORT is
 * then pending: sm_rmpp_send_next writes it), else SM_RMPP_IDLE (call
 * sm_rmpp_send_next to fill the new window).
 */
enum sm_rmpp_act sm_rmpp_send_input(struct sm_rmpp_send *s, const struct sm_sa_hdr *h, uint64_t now_us);
/* The timer fired at now_us: resend from the first unACKed segment, or give up (ABORT TMR pending). */
enum sm_rmpp_act sm_rmpp_send_timeout(struct sm_rmpp_send *s, uint64_t now_us);
static inline uint64_t sm_rmpp_send_due(const struct sm_rmpp_send *s)
{
	return s->due_us;
}

/* ---- receiver ---- */

struct sm_rmpp_recv {
	struct sm_sa_hdr hdr;   /* of the first segment (RMPP fields as received there) */
	uint8_t *buf;           /* the SA data so far (200 bytes per segment), owned */
	size_t len, cap, max_len;
	uint32_t last;          /* segments received in order */
	uint32_t win_last;      /* NewWindowLast we granted */
	uint32_t window;        /* segments per window */
	uint64_t idle_us;       /* give up after this long without a new segment */
	uint64_t seen_us;
	bool finished;
	bool complete;          /* finished with the whole message (duplicates are ACKed again) */
};

/* Ready for a message of at most max_len bytes of SA data, ACKing every window segments. */
void sm_rmpp_recv_init(struct sm_rmpp_recv *r, size_t max_len, uint32_t window, uint64_t idle_us,
		       uint64_t now_us);
/*
 * One segment from the sender (the first included), or its STOP/ABORT; h
 * is decoded from mad (len bytes). *sent says whether out holds a MAD to
 * send (an ACK, a STOP or an ABORT). SM_RMPP_DONE: the message is whole
 * (r->buf, r->len; the hdr of the first segment in r->hdr); SM_RMPP_FAILED:
 * it ended in error; else SM_RMPP_IDLE (wait for more). -ENOMEM is
 * SM_RMPP_FAILED with a STOP RESX in out.
 */
enum sm_rmpp_act sm_rmpp_recv_input(struct sm_rmpp_recv *r, const struct sm_sa_hdr *h, const uint8_t *mad,
				    size_t len, uint64_t now_us, uint8_t out[SM_SA_MAD_SIZE], bool *sent);
/* true when nothing came for idle_us: the caller drops it. */
static inline bool sm_rmpp_recv_expired(const struct sm_rmpp_recv *r, uint64_t now_us)
{
	return now_us - r->seen_us >= r->idle_us;
}
void sm_rmpp_recv_free(struct sm_rmpp_recv *r);   /* frees buf; r itself is the caller's */

/*
 * The whole message for a transport that segments itself (the kernel,
 * SM_GSI_KERNEL_RMPP): hdr with the RMPP header marked active (DATA), then
 * the len bytes of records, exactly (56 + len bytes, not padded to a MAD:
 * the kernel pads the last segment, and the receiver counts records from
 * the message length, as OpenSM sends them: saquery under umad2sim showed
 * padding as extra records); its size in *mlen. malloc'ed; NULL on ENOMEM.
 */
uint8_t *sm_rmpp_whole(const struct sm_sa_hdr *hdr, const uint8_t *data, size_t len, size_t *mlen);

/* An RMPP control MAD (ACK/STOP/ABORT) answering h: same TID/attr, method h's, our direction. */
void sm_rmpp_control(const struct sm_sa_hdr *h, uint8_t type, uint8_t status, uint32_t seg, uint32_t nwl,
		     uint8_t mad[SM_SA_MAD_SIZE]);

#endif
