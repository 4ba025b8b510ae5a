/* SPDX-License-Identifier: MIT */
#ifndef SMD_SA_QUERY_H
#define SMD_SA_QUERY_H
/*
 * DOC: answering one SA request (no I/O, no threads)
 *
 * sm_sa_query() takes one decoded request and the plane as the SA sees it
 * (struct sm_sa_ctx: the immutable snapshot of the last sweep, who we are,
 * and the SA's own mutable tables) and produces the records of the answer
 * or a MAD status. It never sends: the server (server.h) puts the answer
 * on the wire, in one MAD or with RMPP. Being a pure function of its
 * inputs makes it the unit the tests, the fuzzer and the benchmark drive.
 *
 * One handler per attribute (handlers.h); the dispatcher checks what is
 * common (class version, method allowed for the attribute, the SM_Key
 * rules) and calls it. Each handler decodes the request record from
 * req->data, matches it under req->hdr.comp_mask with the IBA comparison
 * rules, and appends matching records to ans (sm_sa_ans_add). Get answers
 * exactly one record: none is NO_RECORDS, more than one TOO_MANY_RECORDS.
 *
 * Thread rules: handlers read ctx->snap freely (immutable); ctx->dyn is
 * owned by the thread that runs the server and handlers may change it
 * (Set/Delete of ServiceRecord, InformInfo, MCMemberRecord).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mad/gsi.h"
#include "sa/sa_mad.h"

struct sm_snapshot;
struct sm_sa_dyn;     /* the SA's mutable tables (services, subscriptions, groups): dyn.h */

/* Another SM of the subnet, as the election last read its SMInfo (SMInfoRecord lists it). */
#define SM_SA_MAX_PEERS 8
struct sm_sa_peer {
	uint64_t port_guid;
	uint64_t sm_key;           /* as it answered; shown to a trusted requester only */
	uint32_t act_count;
	uint16_t lid;              /* where it answered; the snapshot's LID of its port wins */
	uint8_t priority;
	uint8_t state;
};

/* The SM this SA belongs to, for SMInfoRecord, ClassPortInfo and the SM_Key rules. */
struct sm_sa_self {
	uint64_t port_guid;
	uint64_t sm_key;           /* 0: none configured */
	uint32_t act_count;
	uint8_t priority;
	uint8_t state;             /* SMInfo state: 3 master */
	uint8_t resp_time_value;   /* ClassPortInfo RespTimeValue */
	uint8_t subnet_timeout;    /* PortInfo SubnetTimeout used for PacketLifeTime */
	uint8_t n_peers;           /* the other SMs the election knows (SMInfoRecord), at most SM_SA_MAX_PEERS */
	struct sm_sa_peer peers[SM_SA_MAX_PEERS];
};

struct sm_sa_ctx {
	const struct sm_snapshot *snap;  /* NULL before the first sweep: every query gets NO_RECORDS/BUSY */
	const struct sm_sa_self *self;
	struct sm_sa_dyn *dyn;           /* may be NULL in unit tests of static records */
	uint64_t now_us;                 /* for leases (sm_mono_us or the transport's clock) */
	/*
	 * Optional: per port index of snap's fabric, the rate code (low byte)
	 * and MTU code (high byte) a path takes from that port, as
	 * sm_sa_port_rm_build() (path.h) made them for snap; NULL: computed
	 * per query. The server builds it once per snapshot.
	 */
	const uint16_t *port_rm;
};

/* A decoded request: header, its payload (the request record) and who sent it. */
struct sm_sa_req {
	struct sm_sa_hdr hdr;
	const uint8_t *data;       /* request record (after the 56-byte header) */
	size_t len;                /* its length: 200 for one MAD, more for a reassembled GetMulti */
	struct sm_gsi_addr from;
	bool trusted;              /* the request carried our SM_Key (sm_key != 0 and equal) */
};

/* The answer: status, and records of rec_size bytes each (rec_size a multiple of 8). */
struct sm_sa_ans {
	uint16_t status;
	uint16_t rec_size;
	size_t n;                  /* records in buf */
	uint8_t *buf;              /* n * rec_size bytes, owned by the answer (grown by sm_sa_ans_add) */
	size_t cap;                /* bytes allocated at buf (the answer is reused for any record size) */
	size_t max_records;        /* 0 = no limit; beyond it a handler stops with NO_RESOURCES */
};

/* Space for one more record of ans->rec_size bytes (zeroed), or NULL on ENOMEM. */
uint8_t *sm_sa_ans_add(struct sm_sa_ans *ans);
void sm_sa_ans_reset(struct sm_sa_ans *ans);   /* n = 0, status = 0; keeps buf for reuse */
void sm_sa_ans_free(struct sm_sa_ans *ans);

/*
 * Answer req into ans (reset first). Returns 0 when ans holds the answer
 * (records, or a status to send back), -ENOMEM when it could not be built
 * (the caller answers NO_RESOURCES). Every request gets an answer: an
 * attribute or method we do not serve is METHOD_ATTR_UNSUPP, a bad class
 * version BAD_VERSION.
 */
int sm_sa_query(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req, struct sm_sa_ans *ans);

/* One attribute's handler (handlers.h lists them). */
typedef int (*sm_sa_handler_fn)(const struct sm_sa_ctx *ctx, const struct sm_sa_req *req,
				 struct sm_sa_ans *ans);

#endif
