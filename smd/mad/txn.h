/* SPDX-License-Identifier: MIT */
#ifndef SMD_TXN_H
#define SMD_TXN_H
/*
 * DOC: SMP transactions
 *
 * An asynchronous request/response engine over one transport (one plane).
 * The caller submits SMP requests, each with a completion callback and a
 * context pointer; the engine assigns TIDs, sends while a global window and
 * a per-destination limit allow, matches responses by TID, retries on
 * timeout with exponential backoff, and calls the callback exactly once per
 * request: with the validated response, or with an error after the last
 * retry.
 *
 * Data flow: sm_txn_submit() queues; sm_txn_run() (until everything
 * completed) or sm_txn_poll() (one round: what is ready now, for an event
 * loop polling sm_txn_fd()) send from the queues, receive, match, retire.
 * Callbacks run inside run/poll and may submit more requests (a BFS sweep
 * does exactly that).
 *
 * Flow control: at most cfg.window requests are on the wire at once, and
 * at most cfg.per_dest to one destination, so no switch management CPU is
 * flooded. The destination key is the DR path (its hop count and ports) or
 * the DLID for LID-routed requests, unless the submitter gives one (e.g.
 * the node index). Requests to one destination are sent in submit order;
 * destinations are served round-robin.
 *
 * Trust: a response is delivered only if it decodes, its TID is
 * outstanding and sm_check_response() (sm_check.h) accepts it: header,
 * path and a payload that can be true. Everything else is counted (late:
 * the request already gave up; duplicate: already answered; mismatched:
 * TID in flight but the response is wrong; unknown: a TID never sent;
 * malformed: does not decode; and per kind in stats.rejected) and dropped;
 * the request then times out and is retried like a lost one. Retries
 * reuse the TID, so an answer to an earlier try completes the request and
 * the later answer counts as duplicate.
 *
 * Loss adapts the retries: while other requests keep being answered (one
 * answered since the request was first sent, or within its timeout before
 * it, so a lone follow-up request qualifies too), a
 * lost try is a drop, not an overloaded fabric, so the timeout is not
 * backed off and a request may get up to cfg.adaptive_max retries (as many
 * as the measured loss rate needs for a residual loss below 1e-7 per
 * request). When nothing answers at all (a dead plane), the plain
 * cfg.retries with backoff apply, so giving up stays fast. On a lossy
 * fabric (more than 2% of tries lost) the first-try timeout also follows
 * the measured round trip (smoothed RTT + 4 deviations of first tries,
 * Karn's rule, at least cfg.min_timeout_ms, at most cfg.timeout_ms): a
 * lost try then holds its window slot for a few RTTs, not 100 ms.
 *
 * Unsolicited MADs (Trap, and Get/Set addressed to the SM itself) go to
 * the handler set with sm_txn_set_unsolicited(); without one they are
 * counted and dropped.
 *
 * Time comes from the transport (sm_transport_now_us), so a mock fabric on
 * virtual time or a test's fake clock drive timeouts without sleeping.
 *
 * Not thread-safe: one engine is driven by one thread. Several engines (one
 * per plane) can live in one process.
 */
#include <stdatomic.h>
#include <stdint.h>

#include "mad/codec.h"
#include "mad/check.h"
#include "mad/transport.h"

struct sm_txn;

struct sm_txn_cfg {
	unsigned window;          /* max requests on the wire, default 32 (OpenSM: 4) */
	unsigned per_dest;        /* max on the wire per destination, default 4 */
	unsigned timeout_ms;      /* first try, default 100 */
	unsigned max_timeout_ms;  /* backoff cap, default 1000 */
	unsigned retries;         /* extra tries after the first, default 3 */
	unsigned backoff;         /* timeout multiplier per retry, default 2 (1 = constant) */
	unsigned adaptive_max;    /* retries a request may get on a lossy but answering fabric,
				   * default 24; 0 (or <= retries) disables the adaptation */
	unsigned min_timeout_ms;  /* floor of the measured timeout used on a lossy fabric,
				   * default 10; 0 = always timeout_ms */
	/*
	 * Stop flag of the caller (NULL: none). Once it reads non-zero,
	 * sm_txn_run() and sm_txn_poll() complete every request with
	 * -ECANCELED and return -ECANCELED; with a flag, no wait for a MAD
	 * lasts over SM_TXN_STOP_POLL_MS, so a stop is seen that soon.
	 */
	const atomic_int *stop;
};
#define SM_TXN_STOP_POLL_MS 100
/* Fill cfg with the defaults above. */
void sm_txn_cfg_default(struct sm_txn_cfg *cfg);

/* What the callback gets. Pointers are valid only during the callback. */
struct sm_txn_result {
	int status;                   /* 0: response received (check mad_status!),
				       * -ETIMEDOUT: no valid answer after all tries,
				       * -ECANCELED: engine freed / sm_txn_cancel_all(),
				       * other -errno: could not send (e.g. transport gone) */
	uint16_t mad_status;          /* resp->status (D bit excluded), 0 = success */
	unsigned tries;               /* sends made for this request (1 = no retry) */
	const struct sm_smp *req;     /* the request as sent (TID filled) */
	const struct sm_smp *resp;    /* NULL unless status == 0 */
	uint64_t rtt_us;              /* first send of the answered try to response */
};

typedef void (*sm_txn_cb)(struct sm_txn *e, const struct sm_txn_result *r, void *ctx);

/* Handler for unsolicited MADs (method not GetResp): traps, requests to us. */
typedef void (*sm_txn_unsolicited_cb)(struct sm_txn *e, const struct sm_smp *smp,
				      const struct sm_mad_addr *from, void *ctx);

/*
 * Attribute slots of the per-attribute counters: index with
 * sm_txn_attr_slot(attr_id); the last slot collects everything else.
 */
enum sm_txn_attr_slot {
	SM_TXN_A_NODE_INFO, SM_TXN_A_NODE_DESC, SM_TXN_A_PORT_INFO, SM_TXN_A_SWITCH_INFO,
	SM_TXN_A_LFT, SM_TXN_A_SM_INFO, SM_TXN_A_NOTICE, SM_TXN_A_OTHER,
	SM_TXN_A_COUNT
};
unsigned sm_txn_attr_slot(uint16_t attr_id);
const char *sm_txn_attr_slot_name(unsigned slot);   /* "NodeInfo", ... "Other" */

struct sm_txn_attr_stats {
	uint64_t sent;        /* MADs put on the wire, retries included */
	uint64_t completed;   /* requests answered */
	uint64_t retried;     /* re-sends */
	uint64_t timed_out;   /* requests that gave up */
};

struct sm_txn_stats {
	uint64_t submitted;     /* requests accepted by sm_txn_submit */
	uint64_t sent;          /* MADs sent (first tries + retries + raw sends) */
	uint64_t received;      /* MADs received, whatever they were */
	uint64_t completed;     /* requests answered (callback with status 0) */
	uint64_t mad_errors;    /* ... of which the MAD status was not 0 */
	uint64_t retried;       /* re-sends after a timeout */
	uint64_t timed_out;     /* requests that gave up: lost */
	uint64_t send_errors;   /* transport send failures (counted as a try) */
	uint64_t late;          /* responses for requests that already gave up */
	uint64_t duplicate;     /* second answers for requests already answered */
	uint64_t mismatched;    /* TID in flight but wrong attribute/path/method */
	uint64_t unknown_tid;   /* TIDs we never sent (or long forgotten) */
	uint64_t malformed;     /* did not decode */
	uint64_t unsolicited;   /* traps and requests handed to the unsolicited handler */
	uint64_t unsolicited_dropped; /* ... when no handler was set */
	uint64_t canceled;
	uint64_t rejected[SM_CHK_COUNT]; /* answers dropped, by kind (sm_check.h); [0] unused */
	uint64_t adaptive_retries;  /* re-sends beyond cfg.retries (lossy fabric) */
	unsigned max_outstanding;   /* highest number on the wire seen */
	unsigned max_per_dest;      /* highest number on the wire to one destination seen */
	struct sm_txn_attr_stats attr[SM_TXN_A_COUNT];
};

/* New engine over t (not owned; must outlive the engine). cfg NULL = defaults.
 * Returns NULL on allocation failure or nonsense cfg (window 0...). */
struct sm_txn *sm_txn_new(struct sm_transport *t, const struct sm_txn_cfg *cfg);
/* Cancels what is pending (callbacks run with -ECANCELED), frees. Accepts NULL. */
void sm_txn_free(struct sm_txn *e);

struct sm_transport *sm_txn_transport(const struct sm_txn *e);

/* Per-request options for sm_txn_submit_opts (zero fields = engine defaults). */
struct sm_txn_req_opts {
	uint64_t dest_key;      /* destination for per_dest accounting; 0 = derive from path/DLID */
	unsigned timeout_ms;    /* first-try timeout */
	unsigned retries;       /* 0 = default; use SM_TXN_NO_RETRY for none */
};
#define SM_TXN_NO_RETRY 0xFFFFFFFFu

/*
 * Queue a request. req is copied (its tid is ignored and assigned). dlid:
 * destination LID for LID-routed requests, ignored for DR (permissive).
 * cb may be NULL (fire and count). Returns 0, -EINVAL (not a Get/Set, bad
 * hop count), -ENOMEM.
 */
int sm_txn_submit(struct sm_txn *e, const struct sm_smp *req, uint16_t dlid, sm_txn_cb cb,
		  void *ctx);
int sm_txn_submit_opts(struct sm_txn *e, const struct sm_smp *req, uint16_t dlid,
		       const struct sm_txn_req_opts *opts, sm_txn_cb cb, void *ctx);

/*
 * Send a MAD that expects no response (TrapRepress, GetResp to a peer)
 * right away, outside the window. Returns the transport's result.
 */
int sm_txn_send_raw(struct sm_txn *e, const struct sm_smp *smp, uint16_t dlid);

void sm_txn_set_unsolicited(struct sm_txn *e, sm_txn_unsolicited_cb cb, void *ctx);

/*
 * Drive everything until no request is queued or outstanding (callbacks
 * may add more; they are driven too). Returns 0, or a negative errno if
 * the transport failed hard (-EIO...); requests then complete with that
 * error.
 */
int sm_txn_run(struct sm_txn *e);

/*
 * One round for an event loop: send what the limits allow, receive and
 * handle MADs for up to timeout_ms (0 = only what is ready, < 0 = until the
 * next deadline), expire timeouts. Returns the number of requests completed
 * in this round (>= 0) or a negative errno.
 */
int sm_txn_poll(struct sm_txn *e, int timeout_ms);

/* Requests queued or outstanding (0 = idle). */
unsigned sm_txn_pending(const struct sm_txn *e);
/* Milliseconds until the next timeout, -1 if nothing is outstanding (for poll()). */
int sm_txn_next_timeout_ms(const struct sm_txn *e);
/* The transport's fd for poll(), or -1. */
int sm_txn_fd(const struct sm_txn *e);

/* Complete every queued and outstanding request with -ECANCELED. */
void sm_txn_cancel_all(struct sm_txn *e);

const struct sm_txn_stats *sm_txn_stats(const struct sm_txn *e);

/* Measured share of tries lost (0..1, exponentially weighted), for reports. */
double sm_txn_loss_estimate(const struct sm_txn *e);

/*
 * Facts found wrong above the engine (the sweep: a GUID on two nodes, a
 * node changing type) are counted here too, so one set of counters tells
 * every rejected answer. sm_txn_reject() only counts; sm_txn_flag_guid()
 * also flags the GUID in the engine's book (sm_check.h) and returns how
 * often it was flagged (or -ENOMEM); sm_txn_suspect() is SM_CHK_OK or the
 * kind that made the GUID suspect. The book lives as long as the engine.
 */
void sm_txn_reject(struct sm_txn *e, unsigned kind);
int sm_txn_flag_guid(struct sm_txn *e, uint64_t guid, unsigned kind);
unsigned sm_txn_suspect(const struct sm_txn *e, uint64_t guid);
void sm_txn_stats_reset(struct sm_txn *e);

#endif
