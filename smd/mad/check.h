/* SPDX-License-Identifier: MIT */
#ifndef SMD_SM_CHECK_H
#define SMD_SM_CHECK_H
/*
 * DOC: response validation (never trust an SMA)
 *
 * Every answer an SM gets back is untrusted input. This module decides
 * whether an answer may be used and, when not, which kind of lie or damage
 * it carries, so the transaction engine and the sweep can drop it and count
 * it per kind (struct sm_txn_stats.rejected, the --once summary and JSON).
 *
 * Two layers:
 *   - per answer (sm_check_decode_fail(), sm_check_response()): the MAD
 *     does not decode (short, wrong version/class, hop fields out of range),
 *     or decodes but does not answer the request (method, attribute ID or
 *     modifier, DR direction/hop count/hop pointer/path), carries an
 *     impossible status (reserved code, redirect, an error to a Get of an
 *     attribute every SMA must support), or a payload that cannot be true
 *     (NodeInfo with 0 or 255 ports, LocalPortNum beyond NumPorts, a CA
 *     answering on port 0, a GUID of 0, a bad node type; PortInfo,
 *     SwitchInfo, LFT blocks that do not decode). The engine drops such an
 *     answer and lets the request time out and be retried, so a transient
 *     fault costs one retry and a node that always lies ends up
 *     unresponsive, never in the fabric model.
 *   - across answers (struct sm_check_book): facts that are only wrong
 *     together, found by the sweep: a node whose type or port count changes,
 *     a GUID that shows up on two nodes. A first sighting may be the fabric
 *     changing under the sweep (a cable moved): the sweep runs again. A GUID
 *     flagged SM_CHECK_SUSPECT_AFTER times within one bring-up is suspect:
 *     the sweep then ignores every node answering with it.
 *
 * Data flow: bytes -> sm_smp_decode -> (fails) sm_check_decode_fail()
 *            -> TID match -> sm_check_response() -> the request's callback.
 *
 * Pure functions apart from the book (a small array owned by its user).
 * Nothing is logged; functions that can fail return 0 or a negative errno.
 */
#include <stddef.h>
#include <stdint.h>

#include "mad/codec.h"

enum sm_check_kind {
	SM_CHK_OK = 0,        /* acceptable (not a counter) */
	SM_CHK_TRUNCATED,     /* shorter than a MAD */
	SM_CHK_HEADER,        /* base/class version or class wrong: does not decode */
	SM_CHK_METHOD,        /* our TID, but not a GetResp */
	SM_CHK_ATTR,          /* attribute ID differs from the request's */
	SM_CHK_MOD,           /* attribute modifier differs */
	SM_CHK_HOPS,          /* DR: D bit, hop count, hop pointer or initial path wrong */
	SM_CHK_STATUS,        /* reserved status code, redirect, error to a mandatory Get */
	SM_CHK_NODE_TYPE,     /* NodeInfo type not CA/switch/router, or changed between answers */
	SM_CHK_NUM_PORTS,     /* NodeInfo NumPorts 0 or 255, or changed between answers */
	SM_CHK_PORT_NUM,      /* LocalPortNum beyond NumPorts, a CA/router on port 0 */
	SM_CHK_GUID_ZERO,     /* node, port or system image GUID 0 where one is required */
	SM_CHK_GUID_DUP,      /* a GUID already seen on another node or port */
	SM_CHK_PAYLOAD,       /* another attribute field out of range (PortInfo, SwitchInfo...) */
	SM_CHK_COUNT
};

/* Short stable name ("truncated", "attr", ... "payload"): JSON keys, summary. */
const char *sm_check_kind_name(unsigned kind);

/*
 * Kind of an answer that sm_smp_decode() refused, from its err->field:
 * SM_CHK_TRUNCATED, SM_CHK_HOPS or SM_CHK_HEADER.
 */
unsigned sm_check_decode_fail(const struct sm_mad_err *err);

/*
 * May `resp` (decoded, TID already matched) be used as the answer to `req`?
 * Returns SM_CHK_OK or the kind of the first problem, with err (may be
 * NULL) naming the field. A legitimate error status (a Set refused, a
 * PortInfo of a port that does not exist) is SM_CHK_OK: the caller sees
 * the status and does not use the payload.
 */
unsigned sm_check_response(const struct sm_smp *req, const struct sm_smp *resp,
			   struct sm_mad_err *err);

/* Payload checks alone (status 0 answers): used by sm_check_response(). */
unsigned sm_check_payload(const struct sm_smp *req, const struct sm_smp *resp,
			  struct sm_mad_err *err);

/* ---- across answers ---- */

#define SM_CHECK_SUSPECT_AFTER 2   /* flags before a GUID is ignored */
#define SM_CHECK_BOOK_MAX 4096     /* GUIDs remembered; more are not (counted still) */

struct sm_check_book {
	struct sm_check_ent {
		uint64_t guid;
		uint32_t flags;
		uint8_t kind;     /* kind of the first flag */
	} *ent;
	uint32_t n, cap;
};

void sm_check_book_init(struct sm_check_book *b);
void sm_check_book_clear(struct sm_check_book *b);  /* frees; accepts NULL */
/* Flag `guid` once more. Returns the number of flags it has now (>= 1), or
 * -ENOMEM (the book is full or allocation failed: the GUID stays trusted). */
int sm_check_book_flag(struct sm_check_book *b, uint64_t guid, unsigned kind);
/* Kind of the first flag if `guid` is suspect (flagged SM_CHECK_SUSPECT_AFTER
 * times), else SM_CHK_OK. guid 0 is never suspect (refused earlier). */
unsigned sm_check_book_suspect(const struct sm_check_book *b, uint64_t guid);

#endif
