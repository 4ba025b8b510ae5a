/* SPDX-License-Identifier: MIT */
/*
 * The SA dispatcher (smd/sa/query.c): the checks every attribute shares
 * (class version, methods, SM_Key, unknown attributes, the Get rule), the
 * SA header codec (sa_mad.c), and the static records answered end to end
 * from a snapshot of a swept mock fabric.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fixture/fixture.h"
#include "mad/codec.h"
#include "model/fabric.h"
#include "model/lfts.h"
#include "sa/handlers.h"
#include "sm/sm.h"
#include "sm/snapshot.h"
#include "sa/query.h"
#include "sa/records.h"
#include "sa/sa_mad.h"

static const struct sm_sa_self self = {
	.port_guid = 0x0002c90300000001ull, .sm_key = 0x1122334455667788ull, .priority = 1, .state = 3,
};

/* A request of attr/method with a zeroed record of 200 bytes (or `data`). */
static struct sm_sa_req mkreq(uint16_t attr, uint8_t method, uint64_t mask, const uint8_t *data)
{
	static uint8_t zero[SM_SA_DATA_SIZE];
	struct sm_sa_req r = {
		.hdr = { .base_version = 1, .mgmt_class = SM_CLASS_SA, .class_version = 2, .method = method,
			 .tid = 42, .attr_id = attr, .comp_mask = mask },
		.data = data ? data : zero,
		.len = SM_SA_DATA_SIZE,
	};
	return r;
}

static void test_hdr_roundtrip(void **st)
{
	(void)st;
	uint8_t b[SM_SA_MAD_SIZE] = { 0 };
	struct sm_sa_hdr h = {
		.base_version = 1, .mgmt_class = 3, .class_version = 2, .method = SM_SA_GET_TABLE,
		.status = 0x0300, .class_specific = 0x1234, .tid = 0x0102030405060708ull, .attr_id = 0x35,
		.attr_mod = 0xa0b0c0d0, .rmpp_version = 1, .rmpp_type = 1, .rmpp_resp_time = 0x1f,
		.rmpp_flags = 7, .rmpp_status = 9, .rmpp_data1 = 5, .rmpp_data2 = 600,
		.sm_key = 0x1112131415161718ull, .attr_offset = 8, .comp_mask = 0x8000000000000003ull,
	};
	sm_sa_hdr_encode(&h, b);
	static const uint8_t gold[SM_SA_HDR_SIZE] = {
		1, 3, 2, 0x12, 0x03, 0x00, 0x12, 0x34, 1, 2, 3, 4, 5, 6, 7, 8,
		0x00, 0x35, 0, 0, 0xa0, 0xb0, 0xc0, 0xd0,
		1, 1, 0xff, 9, 0, 0, 0, 5, 0, 0, 0x02, 0x58,
		0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0, 8, 0, 0,
		0x80, 0, 0, 0, 0, 0, 0, 3,
	};
	assert_memory_equal(b, gold, sizeof(gold));
	struct sm_sa_hdr d;
	assert_int_equal(sm_sa_hdr_decode(b, sizeof(b), &d), 0);
	assert_int_equal(d.tid, h.tid);
	assert_int_equal(d.comp_mask, h.comp_mask);
	assert_int_equal(d.rmpp_resp_time, 0x1f);
	assert_int_equal(d.rmpp_flags, 7);
	uint8_t b2[SM_SA_HDR_SIZE];
	sm_sa_hdr_encode(&d, b2);
	assert_memory_equal(b2, gold, sizeof(gold));
	assert_int_equal(sm_sa_hdr_decode(b, SM_SA_HDR_SIZE - 1, &d), -EBADMSG);
	b[1] = 0x81;
	assert_int_equal(sm_sa_hdr_decode(b, sizeof(b), &d), -EBADMSG);
	b[1] = 3;
	b[0] = 2;
	assert_int_equal(sm_sa_hdr_decode(b, sizeof(b), &d), -EBADMSG);
	assert_int_equal(sm_sa_hdr_decode(NULL, 256, &d), -EBADMSG);
}

static void test_hdr_response(void **st)
{
	(void)st;
	struct sm_sa_hdr req = { .base_version = 1, .mgmt_class = 3, .class_version = 2, .method = SM_SA_SET,
				 .tid = 7, .attr_id = 0x31, .attr_mod = 9, .sm_key = 5, .comp_mask = 3 };
	struct sm_sa_hdr r;
	sm_sa_hdr_response(&req, &r, SM_SA_STATUS_NO_RECORDS);
	assert_int_equal(r.method, SM_SA_GET_RESP);   /* Set is answered by GetResp (IBA 15.2.2) */
	assert_int_equal(r.status, SM_SA_STATUS_NO_RECORDS);
	assert_int_equal(r.tid, 7);
	assert_int_equal(r.attr_id, 0x31);
	assert_int_equal(r.attr_mod, 9);
	assert_int_equal(r.sm_key, 0);                /* C15-0.1.5 */
	req.method = SM_SA_GET_TABLE;
	sm_sa_hdr_response(&req, &r, 0);
	assert_int_equal(r.method, SM_SA_GET_TABLE_RESP);
	req.method = SM_SA_REPORT;
	sm_sa_hdr_response(&req, &r, 0);
	assert_int_equal(r.method, SM_SA_REPORT_RESP);
	req.method = SM_SA_DELETE;
	sm_sa_hdr_response(&req, &r, 0);
	assert_int_equal(r.method, SM_SA_DELETE_RESP);
}

static void test_names(void **st)
{
	(void)st;
	assert_string_equal(sm_sa_attr_name(SM_SA_ATTR_PATH_RECORD), "PathRecord");
	assert_string_equal(sm_sa_attr_name(0x7777), "Unknown");
	assert_string_equal(sm_sa_method_name(SM_SA_GET_TABLE), "GetTable");
	assert_string_equal(sm_sa_method_name(0x55), "Unknown");
	assert_string_equal(sm_sa_status_name(SM_SA_STATUS_NO_RECORDS), "NO_RECORDS");
	assert_string_equal(sm_sa_status_name(SM_SA_STATUS_DENIED), "DENIED");
	assert_string_equal(sm_sa_status_name(0xff00), "Unknown");
}

static uint16_t status_of(const struct sm_sa_ctx *ctx, struct sm_sa_req r)
{
	struct sm_sa_ans a = { 0 };
	assert_int_equal(sm_sa_query(ctx, &r, &a), 0);
	uint16_t s = a.status;
	if (s)
		assert_int_equal(a.n, 0);
	sm_sa_ans_free(&a);
	return s;
}

static void test_common_checks(void **st)
{
	(void)st;
	struct sm_sa_ctx ctx = { .self = &self };
	struct sm_sa_req r = mkreq(SM_SA_ATTR_CLASS_PORT_INFO, SM_SA_GET, 0, NULL);
	assert_int_equal(status_of(&ctx, r), SM_SA_STATUS_OK);
	r.hdr.class_version = 1;
	assert_int_equal(status_of(&ctx, r), SM_SA_STATUS_BAD_VERSION);
	r.hdr.class_version = 2;
	r.hdr.method = SM_SA_GET_TABLE;   /* ClassPortInfo is Get only */
	assert_int_equal(status_of(&ctx, r), SM_SA_STATUS_METHOD_ATTR_UNSUPP);
	r.hdr.method = SM_SA_GET_RESP;    /* a response is no request */
	assert_int_equal(status_of(&ctx, r), SM_SA_STATUS_METHOD_UNSUPP);
	r.hdr.method = 0x7f;
	assert_int_equal(status_of(&ctx, r), SM_SA_STATUS_METHOD_UNSUPP);
	r.hdr.method = SM_SA_GET;
	r.hdr.attr_id = 0x4242;
	assert_int_equal(status_of(&ctx, r), SM_SA_STATUS_METHOD_ATTR_UNSUPP);
	r.hdr.attr_id = SM_SA_ATTR_TRACE_RECORD;   /* not served */
	assert_int_equal(status_of(&ctx, r), SM_SA_STATUS_METHOD_ATTR_UNSUPP);
	/* SM_Key: 0 or ours; anything else is refused (OpenSM drops it) */
	r = mkreq(SM_SA_ATTR_CLASS_PORT_INFO, SM_SA_GET, 0, NULL);
	r.hdr.sm_key = self.sm_key;
	assert_int_equal(status_of(&ctx, r), SM_SA_STATUS_OK);
	assert_true(sm_sa_trusted(&ctx, &r));
	r.hdr.sm_key = 1;
	assert_int_equal(status_of(&ctx, r), SM_SA_STATUS_DENIED);
	assert_false(sm_sa_trusted(&ctx, &r));
	r.hdr.sm_key = 0;
	assert_false(sm_sa_trusted(&ctx, &r));
	/* no SM_Key of ours: nobody is trusted, a non-zero key is refused */
	struct sm_sa_self nokey = self;
	nokey.sm_key = 0;
	ctx.self = &nokey;
	assert_false(sm_sa_trusted(&ctx, &r));
	r.hdr.sm_key = 1;
	assert_int_equal(status_of(&ctx, r), SM_SA_STATUS_DENIED);
	ctx.self = &self;
	/* fabric records before the first snapshot */
	r = mkreq(SM_SA_ATTR_NODE_RECORD, SM_SA_GET_TABLE, 0, NULL);
	assert_int_equal(status_of(&ctx, r), SM_SA_STATUS_BUSY);
	r.hdr.method = SM_SA_SET;
	assert_int_equal(status_of(&ctx, r), SM_SA_STATUS_METHOD_ATTR_UNSUPP);
}

static void test_class_port_info(void **st)
{
	(void)st;
	struct sm_sa_ctx ctx = { .self = &self };
	struct sm_sa_req r = mkreq(SM_SA_ATTR_CLASS_PORT_INFO, SM_SA_GET, 0, NULL);
	r.data = NULL;   /* ClassPortInfo needs no request record */
	r.len = 0;
	struct sm_sa_ans a = { 0 };
	assert_int_equal(sm_sa_query(&ctx, &r, &a), 0);
	assert_int_equal(a.status, 0);
	assert_int_equal(a.n, 1);
	assert_int_equal(a.rec_size, 72);
	static const uint8_t gold[72] = {
		1, 2, 0x20, 0x00,                 /* PortInfo CapabilityMask match (UD multicast, MultiPath: below) */
		0, 0, 0, 0,                       /* CapabilityMask2, RespTimeValue: below */
		[32] = 0, 0, 0, 1, 0x80, 0x01, 0, 0,
		[68] = 0x80, 0x01, 0, 0,
	};
	/* CapabilityMask2 = FullPortInfoRec(6) ExtSpeeds(7) CapMask2Match(10) Width2x(13) HDR(15), RespTime 16 */
	uint32_t w = (1u << 6 | 1u << 7 | 1u << 10 | 1u << 13 | 1u << 15) << 5 | 16;
	uint8_t g[72];
	memcpy(g, gold, sizeof(g));
	sm_sa_put32(g + 4, w);
	g[2] |= sm_sa_served(SM_SA_ATTR_MCMEMBER_RECORD) ? 0x02 : 0;
	g[2] |= sm_sa_served(SM_SA_ATTR_MULTIPATH_RECORD) ? 0x04 : 0;
	assert_memory_equal(a.buf, g, 72);
	sm_sa_ans_free(&a);
}

/* ---- end to end: a swept mock fabric (fx_hand_built), its snapshot, sm_sa_query ---- */

static void keep_snap(void *arg, const struct sm_snapshot *snap)
{
	const struct sm_snapshot **out = arg;
	sm_snapshot_unref(*out);
	*out = sm_snapshot_ref(snap);
}

struct e2e {
	struct fx_env env;
	const struct sm_snapshot *snap;
	struct sm_sa_self self;
	struct sm_sa_ctx ctx;
	struct sm_sa_ans ans;
};

static int e2e_setup(void **st)
{
	struct e2e *e = calloc(1, sizeof(*e));
	struct sm_cfg cfg;
	struct sm_summary sum;
	fx_env_init(&e->env, fx_hand_built(), NULL, NULL, "sa");
	fx_cfg(&e->env, &cfg);
	cfg.published = keep_snap;
	cfg.published_arg = &e->snap;
	sm_fabric_free(fx_bringup(&e->env, NULL, &cfg, &sum));
	assert_non_null(e->snap);
	assert_non_null(e->snap->pi);
	assert_non_null(e->snap->ni);
	e->self = self;
	e->self.port_guid = e->env.model->ports[e->env.sm_port].guid;
	e->ctx = (struct sm_sa_ctx){ .snap = e->snap, .self = &e->self };
	*st = e;
	return 0;
}

static int e2e_teardown(void **st)
{
	struct e2e *e = *st;
	sm_sa_ans_free(&e->ans);
	sm_snapshot_unref(e->snap);
	fx_env_free(&e->env);
	free(e);
	return 0;
}

/* Ask; the answer is in e->ans. */
static uint16_t ask(struct e2e *e, uint16_t attr, uint8_t method, uint64_t mask, const uint8_t *rec)
{
	struct sm_sa_req r = mkreq(attr, method, mask, rec);
	assert_int_equal(sm_sa_query(&e->ctx, &r, &e->ans), 0);
	return e->ans.status;
}

static uint16_t lid_of(const struct e2e *e, uint64_t port_guid)
{
	const struct sm_fabric *f = e->snap->fabric;
	uint32_t idx = sm_fabric_find_port(f, port_guid);
	assert_int_not_equal(idx, SM_NONE);
	return f->ports[idx].lid;
}

static const uint8_t *rec_at(const struct e2e *e, size_t i)
{
	assert_true(i < e->ans.n);
	return e->ans.buf + i * e->ans.rec_size;
}

static void test_e2e_node(void **st)
{
	struct e2e *e = *st;
	uint8_t q[SM_SA_DATA_SIZE] = { 0 };
	assert_int_equal(ask(e, SM_SA_ATTR_NODE_RECORD, SM_SA_GET_TABLE, 0, q), 0);
	assert_int_equal(e->ans.n, 8);              /* 2 switches + 6 CA ports */
	assert_int_equal(e->ans.rec_size, 112);
	/* LID order (here also node-GUID order): 0x100, 0x200, 0x1000, 0x2000 (p1, p2), 0x3000 (p1, p2), 0x4000 */
	static const uint64_t pg[8] = { 0x100, 0x200, 0x1001, 0x2001, 0x2002, 0x3001, 0x3002, 0x4001 };
	for (size_t i = 0; i < 8; i++) {
		const uint8_t *r = rec_at(e, i);
		if (i && pg[i] >> 8 != pg[i - 1] >> 8)
			assert_true(sm_sa_get16(r) > sm_sa_get16(rec_at(e, i - 1)));   /* a node where its lowest LID comes */
		assert_int_equal(sm_sa_get64(r + 4 + 20), pg[i]);            /* PortGUID */
		assert_int_equal(sm_sa_get16(r), lid_of(e, pg[i]));          /* LID */
		assert_int_equal(r[4 + 36], i < 2 ? 0 : (pg[i] & 0xf));     /* LocalPortNum */
		assert_int_equal(r[4 + 2], i < 2 ? SM_NODE_SWITCH : SM_NODE_CA);
	}
	assert_memory_equal(rec_at(e, 0) + 44, "sw1", 4);
	/* Get by LID */
	sm_sa_put16(q, lid_of(e, 0x4001));
	assert_int_equal(ask(e, SM_SA_ATTR_NODE_RECORD, SM_SA_GET, 1, q), 0);
	assert_int_equal(e->ans.n, 1);
	assert_int_equal(sm_sa_get64(rec_at(e, 0) + 4 + 12), 0x4000);
	/* a LID nobody holds */
	sm_sa_put16(q, 0xBFFE);
	assert_int_equal(ask(e, SM_SA_ATTR_NODE_RECORD, SM_SA_GET, 1, q), SM_SA_STATUS_NO_RECORDS);
	assert_int_equal(ask(e, SM_SA_ATTR_NODE_RECORD, SM_SA_GET_TABLE, 1, q), 0);
	assert_int_equal(e->ans.n, 0);
	/* Get without a mask: many records */
	assert_int_equal(ask(e, SM_SA_ATTR_NODE_RECORD, SM_SA_GET, 0, q), SM_SA_STATUS_TOO_MANY_RECORDS);
	/* NodeGUID of a 2-port CA: two records; with its PortGUID one */
	memset(q, 0, sizeof(q));
	sm_sa_put64(q + 4 + 12, 0x2000);
	assert_int_equal(ask(e, SM_SA_ATTR_NODE_RECORD, SM_SA_GET, 1u << 7, q), SM_SA_STATUS_TOO_MANY_RECORDS);
	sm_sa_put64(q + 4 + 20, 0x2002);
	assert_int_equal(ask(e, SM_SA_ATTR_NODE_RECORD, SM_SA_GET, 1u << 7 | 1u << 8, q), 0);
	assert_int_equal(rec_at(e, 0)[4 + 36], 2);
	/* NodeType switch, and mask bits naming no field (1: reserved, 40, 63) are ignored */
	memset(q, 0, sizeof(q));
	q[4 + 2] = SM_NODE_SWITCH;
	assert_int_equal(ask(e, SM_SA_ATTR_NODE_RECORD, SM_SA_GET_TABLE, 1u << 4 | 1u << 1 | 1ull << 40 | 1ull << 63, q),
			 0);
	assert_int_equal(e->ans.n, 2);
	/* NodeDescription compares as a string: bytes after the NUL do not count */
	memset(q, 0, sizeof(q));
	memcpy(q + 44, "sw2\0garbage", 11);
	assert_int_equal(ask(e, SM_SA_ATTR_NODE_RECORD, SM_SA_GET, 1u << 14, q), 0);
	assert_int_equal(sm_sa_get64(rec_at(e, 0) + 4 + 12), 0x200);
}

static void test_e2e_portinfo(void **st)
{
	struct e2e *e = *st;
	uint8_t q[SM_SA_DATA_SIZE] = { 0 };
	uint16_t sw1 = lid_of(e, 0x100);
	sm_sa_put16(q, sw1);
	assert_int_equal(ask(e, SM_SA_ATTR_PORTINFO_RECORD, SM_SA_GET_TABLE, 1, q), 0);
	assert_int_equal(e->ans.n, 9);              /* switch ports 0..8 */
	for (size_t i = 0; i < 9; i++) {
		assert_int_equal(sm_sa_get16(rec_at(e, i)), sw1);
		assert_int_equal(rec_at(e, i)[2], i);
	}
	/* port 0 carries the switch LID in its PortInfo */
	assert_int_equal(sm_sa_get16(rec_at(e, 0) + 4 + 16), sw1);
	q[2] = 3;
	assert_int_equal(ask(e, SM_SA_ATTR_PORTINFO_RECORD, SM_SA_GET, 1 | 2, q), 0);
	assert_int_equal(rec_at(e, 0)[2], 3);
	assert_int_equal(rec_at(e, 0)[4 + 32] & 0xf, SM_PORT_ACTIVE);   /* PortState of a linked port */
	/* PortState ACTIVE over the whole plane: 8 links x 2 ends + 2 switch ports 0 */
	memset(q, 0, sizeof(q));
	q[4 + 32] = SM_PORT_ACTIVE;
	assert_int_equal(ask(e, SM_SA_ATTR_PORTINFO_RECORD, SM_SA_GET_TABLE, 1u << 15, q), 0);
	assert_int_equal(e->ans.n, 16 + 2);
	/* every port: 18 switch ports + 6 CA ports, no M_Key shown to an untrusted requester */
	assert_int_equal(ask(e, SM_SA_ATTR_PORTINFO_RECORD, SM_SA_GET_TABLE, 0, q), 0);
	assert_int_equal(e->ans.n, 18 + 6);
	/* a port number past the node's ports */
	sm_sa_put16(q, sw1);
	q[2] = 9;
	assert_int_equal(ask(e, SM_SA_ATTR_PORTINFO_RECORD, SM_SA_GET, 1 | 2, q), SM_SA_STATUS_NO_RECORDS);
	/* CapabilityMask: plain is equality, the enhanced mask (attr mod bit 31) is "all these bits set" */
	memset(q, 0, sizeof(q));
	uint16_t h4 = lid_of(e, 0x4001);
	sm_sa_put16(q, h4);
	assert_int_equal(ask(e, SM_SA_ATTR_PORTINFO_RECORD, SM_SA_GET, 1, q), 0);
	uint32_t cap = sm_sa_get32(rec_at(e, 0) + 4 + 20);
	assert_int_not_equal(cap, 0);
	sm_sa_put32(q + 4 + 20, cap & (0u - cap));  /* its lowest bit only */
	struct sm_sa_req r = mkreq(SM_SA_ATTR_PORTINFO_RECORD, SM_SA_GET, 1 | 1u << 7, q);
	if ((cap & (0u - cap)) != cap) {
		assert_int_equal(sm_sa_query(&e->ctx, &r, &e->ans), 0);
		assert_int_equal(e->ans.status, SM_SA_STATUS_NO_RECORDS);
	}
	r.hdr.attr_mod = 0x80000000u;
	assert_int_equal(sm_sa_query(&e->ctx, &r, &e->ans), 0);
	assert_int_equal(e->ans.status, 0);
	assert_int_equal(e->ans.n, 1);
}

static void test_e2e_link_switch_lft(void **st)
{
	struct e2e *e = *st;
	uint8_t q[SM_SA_DATA_SIZE] = { 0 };
	uint16_t sw1 = lid_of(e, 0x100), sw2 = lid_of(e, 0x200), h0 = lid_of(e, 0x1001);
	assert_int_equal(ask(e, SM_SA_ATTR_LINK_RECORD, SM_SA_GET_TABLE, 0, q), 0);
	assert_int_equal(e->ans.n, 16);
	sm_sa_put16(q, sw1);
	assert_int_equal(ask(e, SM_SA_ATTR_LINK_RECORD, SM_SA_GET_TABLE, 1, q), 0);
	assert_int_equal(e->ans.n, 4);              /* sw1 ports 1, 2, 3, 5 */
	q[2] = 3;
	assert_int_equal(ask(e, SM_SA_ATTR_LINK_RECORD, SM_SA_GET, 1 | 2, q), 0);
	static uint8_t want[8];
	sm_sa_link_rec_encode(want, sw1, 3, 3, sw2);
	assert_memory_equal(rec_at(e, 0), want, 8);
	/* by ToLID only: the links into H0 */
	memset(q, 0, sizeof(q));
	sm_sa_put16(q + 4, h0);
	assert_int_equal(ask(e, SM_SA_ATTR_LINK_RECORD, SM_SA_GET, 1u << 3, q), 0);
	sm_sa_link_rec_encode(want, sw1, 1, 1, h0);
	assert_memory_equal(rec_at(e, 0), want, 8);

	memset(q, 0, sizeof(q));
	assert_int_equal(ask(e, SM_SA_ATTR_SWITCHINFO_RECORD, SM_SA_GET_TABLE, 0, q), 0);
	assert_int_equal(e->ans.n, 2);
	sm_sa_put16(q, sw2);
	assert_int_equal(ask(e, SM_SA_ATTR_SWITCHINFO_RECORD, SM_SA_GET, 1, q), 0);
	assert_int_equal(sm_sa_get16(rec_at(e, 0)), sw2);
	assert_int_not_equal(sm_sa_get16(rec_at(e, 0) + 4), 0);     /* LinearFDBCap as read */
	sm_sa_put16(q, 0);
	assert_int_equal(ask(e, SM_SA_ATTR_SWITCHINFO_RECORD, SM_SA_GET, 1, q), SM_SA_STATUS_NO_RECORDS);

	/* LFT block 0 of sw1: H0 behind port 1, sw2 behind port 3 or 5, sw1 itself port 0 */
	memset(q, 0, sizeof(q));
	sm_sa_put16(q, sw1);
	assert_int_equal(ask(e, SM_SA_ATTR_LFT_RECORD, SM_SA_GET, 1 | 2, q), 0);
	const uint8_t *r = rec_at(e, 0);
	assert_int_equal(sm_sa_get16(r + 2), 0);
	assert_int_equal(r[8 + h0], 1);
	assert_int_equal(r[8 + sw1], 0);
	assert_true(r[8 + sw2] == 3 || r[8 + sw2] == 5);
	assert_int_equal(r[8 + 0], SM_LFT_NONE);
	assert_int_equal(ask(e, SM_SA_ATTR_LFT_RECORD, SM_SA_GET_TABLE, 0, q), 0);
	assert_int_equal(e->ans.n, 2);              /* every LID < 64: one block per switch */
	sm_sa_put16(q + 2, 1);
	assert_int_equal(ask(e, SM_SA_ATTR_LFT_RECORD, SM_SA_GET, 1 | 2, q), SM_SA_STATUS_NO_RECORDS);
	/* no multicast yet */
	assert_int_equal(ask(e, SM_SA_ATTR_MFT_RECORD, SM_SA_GET, 0, q), SM_SA_STATUS_NO_RECORDS);
	assert_int_equal(ask(e, SM_SA_ATTR_MFT_RECORD, SM_SA_GET_TABLE, 0, q), 0);
	assert_int_equal(e->ans.n, 0);
}

static void test_e2e_sminfo_guid_pkey(void **st)
{
	struct e2e *e = *st;
	uint8_t q[SM_SA_DATA_SIZE] = { 0 };
	uint16_t me = lid_of(e, e->self.port_guid), h4 = lid_of(e, 0x4001);
	assert_int_equal(ask(e, SM_SA_ATTR_SMINFO_RECORD, SM_SA_GET, 0, q), 0);
	uint8_t want[SM_SA_SMINFO_REC_SIZE];
	sm_sa_sminfo_rec_encode(want, me, e->self.port_guid, 0, 0, 1, 3);
	assert_memory_equal(rec_at(e, 0), want, sizeof(want));
	/* the port is the snapshot's SM port, whatever GUID the caller put in self (the node's, say) */
	assert_int_not_equal(e->snap->sm_port, SM_NONE);
	uint64_t g = e->self.port_guid;
	e->self.port_guid = 0x1234;
	assert_int_equal(ask(e, SM_SA_ATTR_SMINFO_RECORD, SM_SA_GET, 0, q), 0);
	assert_memory_equal(rec_at(e, 0), want, sizeof(want));
	e->self.port_guid = g;
	sm_sa_put16(q, h4);
	assert_int_equal(ask(e, SM_SA_ATTR_SMINFO_RECORD, SM_SA_GET, 1, q), SM_SA_STATUS_NO_RECORDS);
	sm_sa_put16(q, me);
	assert_int_equal(ask(e, SM_SA_ATTR_SMINFO_RECORD, SM_SA_GET, 1, q), 0);
	/* the SM_Key only to a trusted requester */
	struct sm_sa_req r = mkreq(SM_SA_ATTR_SMINFO_RECORD, SM_SA_GET, 0, q);
	r.hdr.sm_key = self.sm_key;
	assert_int_equal(sm_sa_query(&e->ctx, &r, &e->ans), 0);
	assert_int_equal(sm_sa_get64(rec_at(e, 0) + 12), self.sm_key);
	/* probing the SM_Key with the mask finds nothing when untrusted */
	memset(q, 0, sizeof(q));
	sm_sa_put64(q + 12, self.sm_key);
	assert_int_equal(ask(e, SM_SA_ATTR_SMINFO_RECORD, SM_SA_GET, 1u << 3, q), SM_SA_STATUS_NO_RECORDS);

	/* the other SMs the election knows: listed after us at their port's LID; unknown ports are not */
	memset(q, 0, sizeof(q));
	e->self.peers[0] = (struct sm_sa_peer){ .port_guid = 0x4001, .sm_key = 0x77, .act_count = 9, .lid = 999,
						.priority = 5, .state = 2 };
	e->self.peers[1] = (struct sm_sa_peer){ .port_guid = 0xdead, .lid = 3, .state = 2 };
	e->self.n_peers = 2;
	assert_int_equal(ask(e, SM_SA_ATTR_SMINFO_RECORD, SM_SA_GET_TABLE, 0, q), 0);
	assert_int_equal(e->ans.n, 2);
	assert_memory_equal(rec_at(e, 0), want, sizeof(want));
	sm_sa_sminfo_rec_encode(want, h4, 0x4001, 0, 9, 5, 2);
	assert_memory_equal(rec_at(e, 1), want, sizeof(want));
	sm_sa_put16(q, h4);
	assert_int_equal(ask(e, SM_SA_ATTR_SMINFO_RECORD, SM_SA_GET, 1, q), 0);
	assert_memory_equal(rec_at(e, 0), want, sizeof(want));
	q[24] = 2;   /* SMState standby: the peer alone */
	assert_int_equal(ask(e, SM_SA_ATTR_SMINFO_RECORD, SM_SA_GET, 1u << 6, q), 0);
	assert_memory_equal(rec_at(e, 0), want, sizeof(want));
	e->self.n_peers = 0;

	memset(q, 0, sizeof(q));
	sm_sa_put16(q, h4);
	assert_int_equal(ask(e, SM_SA_ATTR_GUIDINFO_RECORD, SM_SA_GET, 1 | 2, q), 0);
	assert_int_equal(sm_sa_get64(rec_at(e, 0) + 8), 0x4001);
	assert_int_equal(sm_sa_get64(rec_at(e, 0) + 16), 0);

	/* P_Key tables: trusted requesters only */
	assert_int_equal(ask(e, SM_SA_ATTR_PKEY_TABLE_RECORD, SM_SA_GET, 1 | 2, q), SM_SA_STATUS_REQ_INVALID);
	r = mkreq(SM_SA_ATTR_PKEY_TABLE_RECORD, SM_SA_GET, 1 | 2, q);
	r.hdr.sm_key = self.sm_key;
	assert_int_equal(sm_sa_query(&e->ctx, &r, &e->ans), 0);
	assert_int_equal(e->ans.status, 0);
	assert_int_equal(sm_sa_get16(rec_at(e, 0)), h4);
	assert_int_equal(rec_at(e, 0)[4], 1);
	assert_int_equal(sm_sa_get16(rec_at(e, 0) + 8), 0xFFFF);
}

static void test_e2e_qos_tables(void **st)
{
	struct e2e *e = *st;
	uint8_t q[SM_SA_DATA_SIZE] = { 0 };
	sm_sa_put16(q, lid_of(e, 0x100));
	assert_int_equal(ask(e, SM_SA_ATTR_SL2VL_RECORD, SM_SA_GET_TABLE, 1, q), 0);
	assert_int_equal(e->ans.n, 9 * 9);          /* every output x input port of an 8-port switch */
	q[2] = 4;
	q[3] = 7;
	assert_int_equal(ask(e, SM_SA_ATTR_SL2VL_RECORD, SM_SA_GET, 1 | 2 | 4, q), 0);
	assert_int_equal(rec_at(e, 0)[2], 4);
	assert_int_equal(rec_at(e, 0)[3], 7);
	memset(q, 0, sizeof(q));
	sm_sa_put16(q, lid_of(e, 0x3002));
	assert_int_equal(ask(e, SM_SA_ATTR_SL2VL_RECORD, SM_SA_GET, 1, q), 0);
	assert_int_equal(sm_sa_get16(rec_at(e, 0)), lid_of(e, 0x3002));
	assert_int_equal(ask(e, SM_SA_ATTR_VLARB_RECORD, SM_SA_GET_TABLE, 1, q), 0);
	assert_int_equal(e->ans.n, 4);              /* blocks 1..4 */
	assert_int_equal(rec_at(e, 0)[2], 2);       /* the port that holds the LID */
	q[3] = 3;
	assert_int_equal(ask(e, SM_SA_ATTR_VLARB_RECORD, SM_SA_GET, 1 | 4, q), 0);
	assert_int_equal(rec_at(e, 0)[3], 3);
	memset(q, 0, sizeof(q));
	assert_int_equal(ask(e, SM_SA_ATTR_VLARB_RECORD, SM_SA_GET_TABLE, 0, q), 0);
	assert_int_equal(e->ans.n, (18 + 6) * 4);
}

static void test_e2e_limits(void **st)
{
	struct e2e *e = *st;
	uint8_t q[SM_SA_DATA_SIZE] = { 0 };
	/* a short request record */
	struct sm_sa_req r = mkreq(SM_SA_ATTR_NODE_RECORD, SM_SA_GET_TABLE, 0, q);
	r.len = 100;
	assert_int_equal(sm_sa_query(&e->ctx, &r, &e->ans), 0);
	assert_int_equal(e->ans.status, SM_SA_STATUS_REQ_INVALID);
	r.data = NULL;
	r.len = 0;
	assert_int_equal(sm_sa_query(&e->ctx, &r, &e->ans), 0);
	assert_int_equal(e->ans.status, SM_SA_STATUS_REQ_INVALID);
	/* the answer limit */
	e->ans.max_records = 3;
	assert_int_equal(ask(e, SM_SA_ATTR_NODE_RECORD, SM_SA_GET_TABLE, 0, q), SM_SA_STATUS_NO_RESOURCES);
	assert_int_equal(e->ans.n, 0);
	e->ans.max_records = 0;
	/* a Set of a static record */
	assert_int_equal(ask(e, SM_SA_ATTR_PORTINFO_RECORD, SM_SA_SET, 0, q), SM_SA_STATUS_METHOD_ATTR_UNSUPP);
	assert_int_equal(ask(e, SM_SA_ATTR_GUIDINFO_RECORD, SM_SA_DELETE, 0, q), SM_SA_STATUS_METHOD_ATTR_UNSUPP);
}

/* Random requests (attribute, method, mask, record, short data): always an answer, and a consistent one. */
static void test_e2e_random(void **st)
{
	struct e2e *e = *st;
	static const uint16_t attrs[] = { 0x01, 0x11, 0x12, 0x13, 0x14, 0x15, 0x17, 0x18, 0x20, 0x30, 0x33, 0x36,
					  0x35, 0x38, 0x3a, 0x31, 0xf3, 0x03, 0x7777 };
	static const uint8_t methods[] = { 1, 2, 3, 6, 0x12, 0x13, 0x14, 0x15, 0x81, 0x86, 0x92, 0x7f };
	uint64_t x = 0x9e3779b97f4a7c15ull;
	uint8_t q[SM_SA_DATA_SIZE];
	for (unsigned it = 0; it < 20000; it++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		struct sm_sa_req r = mkreq(attrs[x % (sizeof(attrs) / sizeof(attrs[0]))],
					   methods[(x >> 8) % sizeof(methods)], 0, q);
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		r.hdr.comp_mask = x & (x >> 3);           /* sparse masks */
		r.hdr.attr_mod = (uint32_t)(x >> 32) & 0x80000000u;
		r.hdr.sm_key = (x >> 40) % 3 == 0 ? self.sm_key : 0;
		r.hdr.class_version = (x >> 50) % 17 == 0 ? 1 : 2;
		r.len = (x >> 20) % 9 == 0 ? (x >> 24) % SM_SA_DATA_SIZE : SM_SA_DATA_SIZE;
		for (size_t i = 0; i < sizeof(q); i += 8) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			/* mostly small values so LIDs and ports hit the fabric */
			uint64_t v = (x & 3) ? x & 0x000f000f000f000full : x;
			memcpy(q + i, &v, 8);
		}
		e->ans.max_records = (x >> 60) == 0 ? 2 : 0;
		assert_int_equal(sm_sa_query(&e->ctx, &r, &e->ans), 0);
		if (e->ans.status)
			assert_int_equal(e->ans.n, 0);
		else if (r.hdr.method == SM_SA_GET)
			assert_int_equal(e->ans.n, 1);
		if (e->ans.n)
			assert_int_equal(e->ans.rec_size % 8, 0);
	}
	e->ans.max_records = 0;
}

/* A snapshot built by hand with an M_Key on a port: shown to a trusted requester only, never matched by probing. */
static void test_mkey_secret(void **st)
{
	(void)st;
	struct sm_fabric *f = fx_hand_built();
	assert_int_equal(sm_fabric_set_lid(f, sm_fabric_find_node(f, 0x4000), 1, 7, 0), 0);
	struct sm_snapshot *s = sm_snapshot_new(0, f, NULL);
	assert_non_null(s);
	struct sm_port_info *pi = calloc(f->cap_ports, sizeof(*pi));
	uint8_t *ok = calloc(f->cap_ports, 1);
	uint32_t idx = sm_fabric_find_port(f, 0x4001);
	pi[idx].lid = 7;
	pi[idx].mkey = 0xfeedfacecafebeefull;
	pi[idx].local_port_num = 1;
	ok[idx] = 1;
	s->pi = pi;
	s->pi_ok = ok;
	s->attr_ports = f->cap_ports;
	struct sm_sa_ctx ctx = { .snap = s, .self = &self };
	struct sm_sa_ans a = { 0 };
	uint8_t q[SM_SA_DATA_SIZE] = { 0 };
	sm_sa_put16(q, 7);
	struct sm_sa_req r = mkreq(SM_SA_ATTR_PORTINFO_RECORD, SM_SA_GET, 1, q);
	assert_int_equal(sm_sa_query(&ctx, &r, &a), 0);
	assert_int_equal(a.n, 1);
	assert_int_equal(sm_sa_get64(a.buf + 4), 0);
	r.hdr.sm_key = self.sm_key;
	assert_int_equal(sm_sa_query(&ctx, &r, &a), 0);
	assert_int_equal(sm_sa_get64(a.buf + 4), 0xfeedfacecafebeefull);
	/* probing with the M_Key component: only the trusted requester matches */
	sm_sa_put64(q + 4, 0xfeedfacecafebeefull);
	r.hdr.comp_mask = 1 | 1u << 3;
	assert_int_equal(sm_sa_query(&ctx, &r, &a), 0);
	assert_int_equal(a.n, 1);
	r.hdr.sm_key = 0;
	assert_int_equal(sm_sa_query(&ctx, &r, &a), 0);
	assert_int_equal(a.status, SM_SA_STATUS_NO_RECORDS);
	/* a CA port the sweep never read is not answered; a switch without PortInfo neither */
	memset(q, 0, sizeof(q));
	r = mkreq(SM_SA_ATTR_PORTINFO_RECORD, SM_SA_GET_TABLE, 0, q);
	assert_int_equal(sm_sa_query(&ctx, &r, &a), 0);
	assert_int_equal(a.n, 1);
	sm_sa_ans_free(&a);
	sm_snapshot_unref(s);
}

int main(void)
{
	const struct CMUnitTest e2e[] = {
		cmocka_unit_test(test_e2e_node),
		cmocka_unit_test(test_e2e_portinfo),
		cmocka_unit_test(test_e2e_link_switch_lft),
		cmocka_unit_test(test_e2e_sminfo_guid_pkey),
		cmocka_unit_test(test_e2e_qos_tables),
		cmocka_unit_test(test_e2e_limits),
		cmocka_unit_test(test_e2e_random),
	};
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hdr_roundtrip),
		cmocka_unit_test(test_hdr_response),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_common_checks),
		cmocka_unit_test(test_class_port_info),
		cmocka_unit_test(test_mkey_secret),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	return rc | cmocka_run_group_tests_name("end to end", e2e, e2e_setup, e2e_teardown);
}
