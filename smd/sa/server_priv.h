/* SPDX-License-Identifier: MIT */
#ifndef SMD_SA_SERVER_PRIV_H
#define SMD_SA_SERVER_PRIV_H
/*
 * The per-plane SA server's state, shared by its files: server.c (reading,
 * fair share, answering, RMPP, Reports, the API) and server_table.c (large
 * tables built off the loop). Nothing outside smd/sa/server*.c includes it.
 */
#include "sa/server.h"
#include "sa/dyn.h"
#include "sa/rmpp.h"
#include "sa/sa_mad.h"
#include "lib/loop.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define READ_BATCH 1024           /* reading is cheap: read ahead of answering, so round robin has choice */
#define SERVE_BATCH 256
#define CONTENDED (MAX_QUEUED / 8) /* from this many waiting, each requester is held to its share */
#define N_SLOTS 4096               /* requester table (power of two) */
#define MAX_QUEUED 8192            /* requests waiting, all requesters */
#define MAX_SENDS 64
#define MAX_SEND_BYTES (64u << 20)
#define MAX_RECVS 16
#define MAX_RECV_LEN 16384
#define RECV_WINDOW 16
#define MAX_RECORDS (1u << 20)     /* per answer: 64 MB of PathRecords, a handler stops there (NO_RESOURCES) */
#define RECV_IDLE_US 2000000u
#define MAX_RETRY_Q 512            /* sends waiting after -EAGAIN */
#define MAX_RETRY_BYTES (64u << 20)
#define RETRY_US 1000u
#define MAX_REPORTS 1024
#define MAX_NOTICES 64
#define POLL_US (SM_LOOP_POLL_MS * 1000u)
#define REPORT_TID_BASE 0x5A00000000000000ull
#define CPU_SAMPLE 8               /* st.cpu_ns: one batch in 8 timed */

struct msg {
	struct msg *next;
	struct sm_gsi_addr from;
	uint8_t mad[SM_SA_MAD_SIZE];
};

struct slot {
	struct msg *head, *tail;
	unsigned queued;
	bool in_ring;
};

struct xfer {                      /* one multi-segment answer going out */
	bool used;
	struct sm_gsi_addr to;
	uint64_t tid;
	uint8_t *buf;                  /* owned records */
	struct sm_rmpp_send st;
};

struct rxfer {                     /* one multi-segment request coming in */
	bool used;
	struct sm_gsi_addr from;
	uint64_t tid;
	struct sm_rmpp_recv st;
};

struct retry {                     /* a MAD whose send said -EAGAIN */
	struct sm_gsi_addr to;
	size_t len;
	uint8_t *mad;
};

struct report {
	bool used;
	uint32_t sub_id;
	unsigned tries;
	uint64_t tid, due_us;
	struct sm_gsi_addr to;
	uint8_t notice[SM_SA_NOTICE_SIZE];
};

struct sm_sa {
	struct sm_sa_cfg cfg;
	struct sm_gsi *gsi;
	struct sm_loop *loop;
	struct sm_loop_src *io, *wake_src, *kick, *timer;
	int wake_fd;

	/* loop thread only */
	const struct sm_snapshot *snap;
	uint16_t *port_rm;               /* sm_sa_port_rm_build(snap), or NULL */
	struct sm_sa_self self;
	struct sm_sa_dyn *dyn;
	struct sm_sa_ans ans;
	struct slot *slots;
	uint32_t *ring;                /* slots with something queued, FIFO */
	uint32_t ring_head, ring_n;
	struct msg *free_msgs;
	unsigned queued;
	struct xfer sends[MAX_SENDS];
	size_t send_bytes;
	struct rxfer recvs[MAX_RECVS];
	struct retry retryq[MAX_RETRY_Q];
	unsigned retry_head, retry_n;
	size_t retry_bytes;
	struct report reports[MAX_REPORTS];
	uint64_t report_tid;
	uint64_t *guids;               /* port GUIDs in service in snap, sorted */
	size_t n_guids;
	uint8_t *rbuf;                 /* recv buffer: a MAD, or a whole message with kernel RMPP */
	size_t rcap;
	struct sm_sa_stats st;
	uint64_t runs;                 /* batches (run()), for the CPU sample */
	uint64_t clock_ns;             /* the cost of a pair of thread CPU clock reads (measured at start) */

	struct sa_tables *tables;      /* large tables off the loop (server_table.c), NULL until the first */

	/* shared with other threads, under lock */
	pthread_mutex_t lock;
	const struct sm_snapshot *pending_snap;
	bool snap_pending, self_pending;
	struct sm_sa_self pending_self;
	uint8_t notices[MAX_NOTICES][64];
	unsigned n_notices;
	uint64_t notices_lost;
	struct sm_sa_stats pub_stats;
};

/* server.c */
uint64_t sm_sa_thread_cpu_ns(void);
/* Put ans on the wire as the answer to req (one MAD, RMPP, or NO_RESOURCES when it cannot go). Loop thread. */
void sm_sa_send_answer(struct sm_sa *sa, const struct sm_sa_req *req, struct sm_sa_ans *ans);
/* An OK table answer as one whole RMPP message (SM_GSI_KERNEL_RMPP), malloc'ed; NULL: no memory or too long. Any thread. */
uint8_t *sm_sa_whole_msg(const struct sm_sa_req *req, const struct sm_sa_ans *ans, size_t *mlen);
/* Send such a message, counted as an OK answer. Loop thread. */
void sm_sa_send_whole(struct sm_sa *sa, const struct sm_sa_req *req, const uint8_t *m, size_t mlen);

/*
 * server_table.c: a GetTable/GetMulti whose answer has more records than
 * SM_SA_LOOP_RECORDS is built on the SA's table thread, not on the loop
 * (a whole plane's PathRecords take 0.1 s and more); the loop sends it
 * when it is done. Loop thread, all three.
 *
 * sm_sa_table_offload(): after the loop's own try of req stopped at
 * SM_SA_LOOP_RECORDS (status NO_RESOURCES): true when the request was
 * taken (answered later, or BUSY now when SM_SA_MAX_TABLES wait), false
 * when it must be answered here (its attribute reads the SA's mutable
 * tables, or no thread could be started).
 */
#define SM_SA_LOOP_RECORDS 4096
#define SM_SA_MAX_TABLES 2
bool sm_sa_table_offload(struct sm_sa *sa, const struct sm_sa_req *req);
void sm_sa_table_done(struct sm_sa *sa);   /* send what the thread finished (on the wake eventfd) */
void sm_sa_table_free(struct sm_sa *sa);   /* joins the thread (after its current table) */

#endif
