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
 * Threads: everything runs on the loop's thread except sm_sa_publish() and
 * sm_sa_stats(), which any thread may call (the worker publishes the
 * snapshot at the end of a sweep; the control socket reads the counters).
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
	unsigned report_timeout_ms;    /* 0 = default */
};

/* Counters (cumulative since sm_sa_new). */
#define SM_SA_STATS_ATTRS 24
struct sm_sa_stats {
	uint64_t received, answered, dropped;   /* dropped: undecodable, not for us, over fair share */
	uint64_t rmpp_sent, rmpp_aborted;
	uint64_t reports_sent, reports_acked, reports_given_up;
	struct { uint16_t attr_id; uint64_t n; } by_attr[SM_SA_STATS_ATTRS];
	struct { uint16_t status; uint64_t n; } by_status[16];
	uint64_t cpu_ns;               /* thread CPU time spent answering */
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
void sm_sa_free(struct sm_sa *sa);   /* loop thread; accepts NULL */

#endif
