/* SPDX-License-Identifier: MIT */
#ifndef SMD_SA_SERVER_H
#define SMD_SA_SERVER_H
/*
 * DOC: the per-plane SA server
 *
 * One struct sm_sa per plane. It owns that plane's GSI endpoint for class
 * 0x03 (mad/gsi.h), watches its fd and its timers (RMPP, Report retries,
 * lease expiry) on the loop it is given (lib/loop.h), answers every request
 * from the snapshot last published to it, and never blocks: a request is
 * read, answered (sm_sa_query) and sent, or queued behind its requester's
 * fair share.
 *
 * Fair share: everything waiting is read (up to 1,024 MADs per turn of
 * the loop, 8,192 held) into one queue per requester (by GID when a GRH
 * came, else by LID; a fixed table of 4,096 slots, two requesters hashing
 * to one slot share it) and answered round robin, one per requester per
 * turn, 256 per loop callback. So a host's answer waits for one round of
 * the hosts with something queued, never for a flooder's backlog. When
 * more than 1,024 requests wait, a requester with
 * max_inflight_per_requester already queued gets BUSY for the excess at
 * once: an answer costs one 256-byte send and no query, a client backs off
 * on BUSY (IBA 13.4.7), a dropped one would be retried at full rate after
 * its timeout anyway, and under umad2sim (no timeouts) a client never
 * answered hangs. Counted in over_share and by status.
 *
 * RMPP: a GetTable/GetMulti answer is an RMPP message (also with 0 or 1
 * record, as OpenSM sends it). With SM_GSI_KERNEL_RMPP the whole message
 * goes to send() at once; else an answer of one segment is sent without
 * waiting for its ACK, a longer one by the sender of rmpp.h (at most 64
 * transfers and 64 MB at once: beyond, NO_RESOURCES). A multi-segment
 * request (GetMulti) is reassembled by rmpp.h (at most 16 at once, 16 KB
 * each).
 *
 * Events: sm_sa_publish() diffs the CA/router port GUIDs in service of the
 * previous and the new snapshot into Notices 64/65; sm_sa_notice() hands
 * in a trap (128) seen by the SM. Each goes as a Report to every matching
 * subscription, resent every report_timeout_ms until a ReportResp, at most
 * report_retries times; then the subscription is dropped.
 *
 * Large tables: a GetTable/GetMulti of more than 4,096 records (a whole
 * plane's PathRecords) is built on the SA's own table thread, started at
 * the first one, so the loop keeps answering (status, other queries)
 * meanwhile; the loop sends it when done. At most 2 wait; more get BUSY
 * (server_table.c).
 *
 * Threads: everything runs on the loop's thread except sm_sa_publish() and
 * sm_sa_stats(), which any thread may call (the worker publishes the
 * snapshot at the end of a sweep; the control socket reads the counters),
 * and the building of large tables (above).
 */
#include <stddef.h>
#include <stdint.h>

#include "mad/gsi.h"
#include "sa/query.h"

struct sm_loop;
struct sm_snapshot;
struct sm_sa;

struct sm_sa_cfg {
	unsigned plane;
	struct sm_sa_self self;        /* copied; sm_sa_set_self() updates state/act_count later */
	unsigned max_inflight_per_requester;  /* fair share: 0 = default (16) */
	unsigned report_retries;       /* Report resends before a subscriber is given up: 0 = default */
	unsigned report_timeout_ms;    /* 0 = default (200 ms, as OpenSM's transaction_timeout) */
	unsigned rmpp_timeout_ms;      /* RMPP ACK wait: 0 = default (200 ms) */
	unsigned rmpp_retries;         /* 0 = default (3) */
	/*
	 * Multicast (issue 14): called on the loop's thread after an
	 * MCMemberRecord Set or Delete was answered (the groups may have
	 * changed: sa/dyn.h sm_sa_dyn_mc_take() on sm_sa_dyn(sa) says how).
	 * NULL: nobody is told.
	 */
	void (*mc_changed)(void *arg, struct sm_sa *sa);
	void *mc_arg;
};

/* Counters (cumulative since sm_sa_new). */
#define SM_SA_STATS_ATTRS 24
struct sm_sa_stats {
	uint64_t received, answered, dropped;   /* dropped: undecodable, not for us, no room to send */
	uint64_t over_share;                    /* answered BUSY: over the requester's fair share */
	uint64_t rmpp_sent, rmpp_aborted;       /* multi-segment answers completed / ended unACKed */
	uint64_t rmpp_received, rmpp_refused;   /* multi-segment requests reassembled / refused */
	uint64_t send_retried;                  /* a send that said -EAGAIN, retried from a timer */
	uint64_t reports_sent, reports_acked, reports_given_up;
	struct { uint16_t attr_id; uint64_t n; } by_attr[SM_SA_STATS_ATTRS];
	struct { uint16_t status; uint64_t n; } by_status[16];
	uint64_t cpu_ns;               /* thread CPU time spent answering (estimated: one batch in 8 is timed) */
};

/*
 * A new SA on gsi (taken over: freed with the SA), watching on loop.
 * 0 or -errno with a message in err.
 */
int sm_sa_new(const struct sm_sa_cfg *cfg, struct sm_gsi *gsi, struct sm_loop *loop, struct sm_sa **out,
	      char *err, size_t errlen);
/* Answer from s from now on (takes a reference; the previous one is dropped). Any thread. */
void sm_sa_publish(struct sm_sa *sa, const struct sm_snapshot *s);
/* The SM's state/act count/priority changed (master/standby). Any thread. */
void sm_sa_set_self(struct sm_sa *sa, const struct sm_sa_self *self);
void sm_sa_stats(struct sm_sa *sa, struct sm_sa_stats *out);   /* any thread */
/*
 * A Notice the SM saw (a trap 128 from a switch, ...): the 64 bytes of
 * an SMP Trap's data (Notice without IssuerGID). Forwarded as a Report to
 * the matching subscriptions. Any thread.
 */
void sm_sa_notice(struct sm_sa *sa, const uint8_t notice[64]);
/* The SA's mutable tables (the multicast issue adds groups). Loop thread. */
struct sm_sa_dyn *sm_sa_dyn(struct sm_sa *sa);
void sm_sa_free(struct sm_sa *sa);   /* loop thread; accepts NULL */

#endif
