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
#include <string.h>

#include "sa/handlers.h"
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
		1, 2, 0x22, 0x00,                 /* UD multicast, PortInfo CapabilityMask match */
		0, 0, 0, 0,                       /* CapabilityMask2, RespTimeValue: below */
		[32] = 0, 0, 0, 1, 0x80, 0x01, 0, 0,
		[68] = 0x80, 0x01, 0, 0,
	};
	/* CapabilityMask2 = FullPortInfoRec(6) ExtSpeeds(7) CapMask2Match(10) Width2x(13) HDR(15), RespTime 16 */
	uint32_t w = (1u << 6 | 1u << 7 | 1u << 10 | 1u << 13 | 1u << 15) << 5 | 16;
	uint8_t g[72];
	memcpy(g, gold, sizeof(g));
	sm_sa_put32(g + 4, w);
	assert_memory_equal(a.buf, g, 72);
	sm_sa_ans_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hdr_roundtrip),
		cmocka_unit_test(test_hdr_response),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_common_checks),
		cmocka_unit_test(test_class_port_info),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
