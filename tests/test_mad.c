/* SPDX-License-Identifier: MIT */
/*
 * SMP codec tests. Every expected byte vector below is written by hand from
 * the IBA spec layouts (vol. 1 ch. 14: SMP format 14.2.1.1 (LID routed) /
 * 14.2.1.2 (directed route), NodeInfo, NodeDescription, PortInfo,
 * SwitchInfo, LinearForwardingTable, SMInfo, Notice), never produced by
 * the encoder under test: decode(vector) must give the fields, encode(fields)
 * must give the vector, and decode(encode(x)) == x.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mad/codec.h"

/* Place bytes at an offset of a zeroed vector (keeps vectors readable). */
static void put(uint8_t *v, size_t off, const uint8_t *bytes, size_t n)
{
	memcpy(v + off, bytes, n);
}
#define PUT(v, off, ...)                                                          \
	do {                                                                      \
		static const uint8_t b_[] = { __VA_ARGS__ };                      \
		put(v, off, b_, sizeof(b_));                                      \
	} while (0)

/* ---- whole SMP ---- */

static void test_dr_get_golden(void **state)
{
	uint8_t want[SM_MAD_SIZE] = { 0 }, got[SM_MAD_SIZE];
	struct sm_smp smp, dec;
	struct sm_dr_path path = { 0 };

	(void)state;
	/* Get NodeInfo along 0,1,3 (two hops), TID 0x0102030405060708 */
	PUT(want, 0, 0x01, 0x81, 0x01, 0x01);          /* base ver, class DR, class ver, Get */
	PUT(want, 4, 0x00, 0x00);                      /* D=0, status 0 */
	PUT(want, 6, 0x00, 0x02);                      /* hop pointer 0, hop count 2 */
	PUT(want, 8, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08); /* TID */
	PUT(want, 16, 0x00, 0x11, 0x00, 0x00);         /* attr NodeInfo, reserved */
	PUT(want, 20, 0x00, 0x00, 0x00, 0x00);         /* attribute modifier */
	/* 24..31 M_Key 0 */
	PUT(want, 32, 0xFF, 0xFF, 0xFF, 0xFF);         /* DrSLID, DrDLID permissive */
	PUT(want, 128 + 1, 0x01, 0x03);                /* initial path[1..2] */

	sm_dr_path_push(&path, 1);
	sm_dr_path_push(&path, 3);
	sm_smp_init_dr(&smp, SM_METHOD_GET, SM_ATTR_NODE_INFO, 0, &path);
	smp.tid = 0x0102030405060708ULL;
	assert_int_equal(sm_smp_encode(&smp, got), 0);
	assert_memory_equal(got, want, SM_MAD_SIZE);

	assert_int_equal(sm_smp_decode(want, sizeof(want), &dec, NULL), 0);
	assert_int_equal(dec.mgmt_class, SM_CLASS_SMI_DR);
	assert_int_equal(dec.method, SM_METHOD_GET);
	assert_int_equal(dec.hop_cnt, 2);
	assert_int_equal(dec.hop_ptr, 0);
	assert_false(dec.direction);
	assert_int_equal(dec.tid, 0x0102030405060708ULL);
	assert_int_equal(dec.attr_id, SM_ATTR_NODE_INFO);
	assert_int_equal(dec.dr_slid, 0xFFFF);
	assert_int_equal(dec.dr_dlid, 0xFFFF);
	assert_int_equal(dec.initial_path[1], 1);
	assert_int_equal(dec.initial_path[2], 3);
	assert_memory_equal(&dec, &smp, sizeof(smp));
}

static void test_dr_resp_golden(void **state)
{
	uint8_t v[SM_MAD_SIZE] = { 0 }, got[SM_MAD_SIZE];
	struct sm_smp dec, req, resp;
	struct sm_dr_path path = { 0 };

	(void)state;
	/* GetResp PortInfo port 9, D bit set, status 0x001C, came back over 0,4 */
	PUT(v, 0, 0x01, 0x81, 0x01, 0x81);
	PUT(v, 4, 0x80, 0x1C);                         /* D | invalid attribute value */
	PUT(v, 6, 0x01, 0x01);                         /* hop pointer 1, hop count 1 */
	PUT(v, 8, 0x00, 0x00, 0x00, 0x00, 0xDE, 0xAD, 0xBE, 0xEF);
	PUT(v, 16, 0x00, 0x15, 0x00, 0x00, 0x00, 0x00, 0x00, 0x09);
	PUT(v, 24, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88);  /* M_Key */
	PUT(v, 32, 0xFF, 0xFF, 0xFF, 0xFF);
	PUT(v, 128 + 1, 0x04);                         /* initial path */
	PUT(v, 192 + 1, 0x07);                         /* return path */
	assert_int_equal(sm_smp_decode(v, sizeof(v), &dec, NULL), 0);
	assert_true(dec.direction);
	assert_int_equal(dec.status, 0x001C);
	assert_int_equal(dec.method, SM_METHOD_GET_RESP);
	assert_int_equal(dec.hop_ptr, 1);
	assert_int_equal(dec.tid, 0xDEADBEEF);
	assert_int_equal(dec.attr_id, SM_ATTR_PORT_INFO);
	assert_int_equal(dec.attr_mod, 9);
	assert_int_equal(dec.mkey, 0x1122334455667788ULL);
	assert_int_equal(dec.return_path[1], 7);
	assert_int_equal(sm_smp_encode(&dec, got), 0);
	assert_memory_equal(got, v, SM_MAD_SIZE);

	/* it answers the matching request; not others */
	sm_dr_path_push(&path, 4);
	sm_smp_init_dr(&req, SM_METHOD_GET, SM_ATTR_PORT_INFO, 9, &path);
	assert_int_equal(sm_smp_check_response(&req, &dec, NULL), 0);
	sm_smp_make_response(&req, &resp, 0x1C);
	assert_true(resp.direction);
	assert_int_equal(resp.method, SM_METHOD_GET_RESP);
	assert_int_equal(resp.hop_ptr, 1);
	assert_int_equal(sm_smp_check_response(&req, &resp, NULL), 0);
}

static void test_lid_routed_golden(void **state)
{
	uint8_t v[SM_MAD_SIZE] = { 0 }, got[SM_MAD_SIZE];
	struct sm_smp smp, dec;

	(void)state;
	/* LID-routed Set LFT block 3: no DR fields on the wire (6,7,32..35 and paths reserved) */
	PUT(v, 0, 0x01, 0x01, 0x01, 0x02);
	PUT(v, 8, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x2A);
	PUT(v, 16, 0x00, 0x19, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03);
	PUT(v, 64, 0x01, 0x02, 0x03);                  /* data */
	sm_smp_init_lid(&smp, SM_METHOD_SET, SM_ATTR_LFT, 3);
	smp.tid = 42;
	smp.data[0] = 1;
	smp.data[1] = 2;
	smp.data[2] = 3;
	/* DR-only fields must not leak into a LID-routed MAD */
	smp.hop_cnt = 5;
	smp.dr_slid = 0x1234;
	smp.initial_path[1] = 9;
	assert_int_equal(sm_smp_encode(&smp, got), 0);
	assert_memory_equal(got, v, SM_MAD_SIZE);
	assert_int_equal(sm_smp_decode(v, sizeof(v), &dec, NULL), 0);
	assert_int_equal(dec.mgmt_class, SM_CLASS_SMI);
	assert_int_equal(dec.method, SM_METHOD_SET);
	assert_int_equal(dec.attr_mod, 3);
	assert_int_equal(dec.hop_cnt, 0);
	assert_int_equal(dec.data[2], 3);
	/* a LID-routed status keeps bit 15 as status, not as a D bit */
	PUT(v, 4, 0x80, 0x04);
	assert_int_equal(sm_smp_decode(v, sizeof(v), &dec, NULL), 0);
	assert_int_equal(dec.status, 0x8004);
	assert_false(dec.direction);
}

static void test_smp_malformed(void **state)
{
	uint8_t v[SM_MAD_SIZE] = { 0 };
	struct sm_smp dec;
	struct sm_mad_err err;

	(void)state;
	PUT(v, 0, 0x01, 0x81, 0x01, 0x81);
	assert_int_equal(sm_smp_decode(v, 255, &dec, &err), -EBADMSG);
	assert_string_equal(err.field, "MAD.length");
	assert_non_null(strstr(err.msg, "255"));
	assert_int_equal(sm_smp_decode(NULL, 0, &dec, &err), -EBADMSG);
	v[0] = 2;
	assert_int_equal(sm_smp_decode(v, sizeof(v), &dec, &err), -EBADMSG);
	assert_string_equal(err.field, "MAD.BaseVersion");
	v[0] = 1;
	v[1] = 0x04;   /* PerfMgt */
	assert_int_equal(sm_smp_decode(v, sizeof(v), &dec, &err), -EBADMSG);
	assert_string_equal(err.field, "MAD.MgmtClass");
	v[1] = 0x81;
	v[2] = 2;
	assert_int_equal(sm_smp_decode(v, sizeof(v), &dec, &err), -EBADMSG);
	assert_string_equal(err.field, "MAD.ClassVersion");
	v[2] = 1;
	v[7] = 64;
	assert_int_equal(sm_smp_decode(v, sizeof(v), &dec, &err), -EBADMSG);
	assert_string_equal(err.field, "SMP.HopCount");
	v[7] = 2;
	v[6] = 4;
	assert_int_equal(sm_smp_decode(v, sizeof(v), &dec, &err), -EBADMSG);
	assert_string_equal(err.field, "SMP.HopPointer");
	v[6] = 3;
	assert_int_equal(sm_smp_decode(v, sizeof(v), &dec, NULL), 0);   /* hop_cnt + 1 is legal */
	/* encoder refuses what it cannot represent */
	dec.hop_cnt = 64;
	assert_int_equal(sm_smp_encode(&dec, v), -EINVAL);
	dec.hop_cnt = 1;
	dec.mgmt_class = 3;
	assert_int_equal(sm_smp_encode(&dec, v), -EINVAL);
}

static void test_check_response(void **state)
{
	struct sm_smp req, resp;
	struct sm_mad_err err;
	struct sm_dr_path path = { 0 };

	(void)state;
	sm_dr_path_push(&path, 1);
	sm_dr_path_push(&path, 5);
	sm_smp_init_dr(&req, SM_METHOD_GET, SM_ATTR_LFT, 7, &path);
	sm_smp_make_response(&req, &resp, 0);
	assert_int_equal(sm_smp_check_response(&req, &resp, &err), 0);

	resp.method = SM_METHOD_GET;
	assert_int_equal(sm_smp_check_response(&req, &resp, &err), -EPROTO);
	assert_string_equal(err.field, "MAD.Method");
	sm_smp_make_response(&req, &resp, 0);
	resp.attr_id = SM_ATTR_PORT_INFO;
	assert_int_equal(sm_smp_check_response(&req, &resp, &err), -EPROTO);
	assert_string_equal(err.field, "MAD.AttributeID");
	sm_smp_make_response(&req, &resp, 0);
	resp.attr_mod = 8;
	assert_int_equal(sm_smp_check_response(&req, &resp, &err), -EPROTO);
	assert_string_equal(err.field, "MAD.AttributeModifier");
	sm_smp_make_response(&req, &resp, 0);
	resp.direction = false;
	assert_int_equal(sm_smp_check_response(&req, &resp, &err), -EPROTO);
	assert_string_equal(err.field, "SMP.D");
	sm_smp_make_response(&req, &resp, 0);
	resp.initial_path[2] = 6;
	assert_int_equal(sm_smp_check_response(&req, &resp, &err), -EPROTO);
	assert_string_equal(err.field, "SMP.InitialPath");
	sm_smp_make_response(&req, &resp, 0);
	resp.hop_cnt = 1;
	assert_int_equal(sm_smp_check_response(&req, &resp, &err), -EPROTO);
	assert_string_equal(err.field, "SMP.HopCount");
	sm_smp_make_response(&req, &resp, 0);
	resp.mgmt_class = SM_CLASS_SMI;
	assert_int_equal(sm_smp_check_response(&req, &resp, &err), -EPROTO);
	assert_string_equal(err.field, "MAD.MgmtClass");
}

static void test_dr_path_helpers(void **state)
{
	struct sm_dr_path p, q;
	char buf[64];

	(void)state;
	assert_int_equal(sm_dr_path_parse("0", &p), 0);
	assert_int_equal(p.cnt, 0);
	assert_int_equal(sm_dr_path_str(&p, buf, sizeof(buf)), 1);
	assert_string_equal(buf, "0");
	assert_int_equal(sm_dr_path_parse("0,1,18,3", &p), 0);
	assert_int_equal(p.cnt, 3);
	assert_int_equal(p.hops[2], 18);
	assert_int_equal(sm_dr_path_str(&p, buf, sizeof(buf)), 8);
	assert_string_equal(buf, "0,1,18,3");
	assert_int_equal(sm_dr_path_parse("1,18,3", &q), 0);
	assert_true(sm_dr_path_equal(&p, &q));
	/* truncation reports the full length, like snprintf */
	assert_int_equal(sm_dr_path_str(&p, buf, 4), 8);
	assert_string_equal(buf, "0,1");
	assert_int_equal(sm_dr_path_parse("", &p), -EINVAL);
	assert_int_equal(sm_dr_path_parse("0,", &p), -EINVAL);
	assert_int_equal(sm_dr_path_parse("0,255", &p), -EINVAL);
	assert_int_equal(sm_dr_path_parse("0,1,x", &p), -EINVAL);
	assert_int_equal(sm_dr_path_parse("0,1,0", &p), -EINVAL);
	assert_int_equal(sm_dr_path_parse("-1", &p), -EINVAL);
	memset(&p, 0, sizeof(p));
	for (int i = 0; i < SM_DR_MAX_HOPS; i++)
		assert_int_equal(sm_dr_path_push(&p, 1), 0);
	assert_int_equal(sm_dr_path_push(&p, 1), -E2BIG);
	assert_string_equal(sm_attr_name(SM_ATTR_LFT), "LinearForwardingTable");
	assert_string_equal(sm_method_name(SM_METHOD_TRAP_REPRESS), "TrapRepress");
}

/* ---- attributes ---- */

static void test_node_info_golden(void **state)
{
	uint8_t v[SM_SMP_DATA_SIZE] = { 0 }, got[SM_SMP_DATA_SIZE];
	struct sm_node_info ni, dec;
	struct sm_mad_err err;

	(void)state;
	PUT(v, 0, 0x01, 0x01, 0x02, 0x24);             /* base 1, class 1, switch, 36 ports */
	PUT(v, 4, 0x00, 0x02, 0xC9, 0x03, 0x00, 0xAA, 0xBB, 0xCC);   /* SystemImageGUID */
	PUT(v, 12, 0x00, 0x02, 0xC9, 0x03, 0x00, 0x11, 0x22, 0x33);  /* NodeGUID */
	PUT(v, 20, 0x00, 0x02, 0xC9, 0x03, 0x00, 0x11, 0x22, 0x34);  /* PortGUID */
	PUT(v, 28, 0x00, 0x08, 0xCF, 0x08);            /* PartitionCap 8, DeviceID 0xcf08 */
	PUT(v, 32, 0x00, 0x00, 0x00, 0xA0);            /* Revision */
	PUT(v, 36, 0x05, 0x00, 0x02, 0xC9);            /* LocalPortNum 5, VendorID 0x0002c9 */
	assert_int_equal(sm_node_info_decode(v, &dec, NULL), 0);
	memset(&ni, 0, sizeof(ni));
	ni.base_version = 1;
	ni.class_version = 1;
	ni.node_type = 2;
	ni.num_ports = 36;
	ni.sys_guid = 0x0002C90300AABBCCULL;
	ni.node_guid = 0x0002C90300112233ULL;
	ni.port_guid = 0x0002C90300112234ULL;
	ni.partition_cap = 8;
	ni.device_id = 0xCF08;
	ni.revision = 0xA0;
	ni.local_port_num = 5;
	ni.vendor_id = 0x0002C9;
	assert_memory_equal(&dec, &ni, sizeof(ni));
	sm_node_info_encode(&ni, got);
	assert_memory_equal(got, v, sizeof(v));

	/* untrusted values are refused, naming the field */
	v[2] = 7;
	assert_int_equal(sm_node_info_decode(v, &dec, &err), -EBADMSG);
	assert_string_equal(err.field, "NodeInfo.NodeType");
	v[2] = 1;
	v[3] = 0;
	assert_int_equal(sm_node_info_decode(v, &dec, &err), -EBADMSG);
	assert_string_equal(err.field, "NodeInfo.NumPorts");
	v[3] = 255;
	assert_int_equal(sm_node_info_decode(v, &dec, &err), -EBADMSG);
	assert_string_equal(err.field, "NodeInfo.NumPorts");
	v[3] = 2;
	assert_int_equal(sm_node_info_decode(v, &dec, &err), -EBADMSG);
	assert_string_equal(err.field, "NodeInfo.LocalPortNum");
	assert_non_null(strstr(err.msg, "5"));
	v[36] = 2;
	assert_int_equal(sm_node_info_decode(v, &dec, &err), 0);
	memset(v + 12, 0, 8);
	assert_int_equal(sm_node_info_decode(v, &dec, &err), -EBADMSG);
	assert_string_equal(err.field, "NodeInfo.NodeGUID");
	v[19] = 1;
	memset(v + 20, 0, 8);
	assert_int_equal(sm_node_info_decode(v, &dec, &err), -EBADMSG);
	assert_string_equal(err.field, "NodeInfo.PortGUID");
}

static void test_node_desc_golden(void **state)
{
	uint8_t v[SM_SMP_DATA_SIZE] = { 0 }, got[SM_SMP_DATA_SIZE];
	struct sm_node_desc nd;

	(void)state;
	PUT(v, 0, 'l', 'e', 'a', 'f', '0', '1', ' ', 'H', 'C', 'A', '-', '1');
	assert_int_equal(sm_node_desc_decode(v, &nd, NULL), 0);
	assert_string_equal(nd.desc, "leaf01 HCA-1");
	sm_node_desc_encode(&nd, got);
	assert_memory_equal(got, v, sizeof(v));
	/* 64 bytes without a NUL: all kept, terminated; control bytes sanitised */
	memset(v, 'x', sizeof(v));
	v[3] = '\n';
	assert_int_equal(sm_node_desc_decode(v, &nd, NULL), 0);
	assert_int_equal(strlen(nd.desc), 64);
	assert_int_equal(nd.desc[3], '?');
	/* bytes after the first NUL are ignored */
	memset(v, 0, sizeof(v));
	PUT(v, 0, 'a', 0, 'b');
	assert_int_equal(sm_node_desc_decode(v, &nd, NULL), 0);
	assert_string_equal(nd.desc, "a");
	assert_int_equal(nd.desc[2], 0);
}

static void port_info_sample(struct sm_port_info *pi)
{
	memset(pi, 0, sizeof(*pi));
	pi->mkey = 0x0102030405060708ULL;
	pi->gid_prefix = 0xFE80000000000000ULL;
	pi->lid = 0x1234;
	pi->master_sm_lid = 0x0001;
	pi->cap_mask = 0x02510868;
	pi->diag_code = 0x0ABC;
	pi->mkey_lease_period = 0x00FF;
	pi->local_port_num = 7;
	pi->link_width_enabled = 0x03;
	pi->link_width_supported = 0x13;
	pi->link_width_active = 0x02;
	pi->link_speed_supported = 0x7;
	pi->port_state = SM_PORT_ARMED;
	pi->phys_state = 5;
	pi->link_down_def_state = 2;
	pi->mkey_prot_bits = 1;
	pi->lmc = 3;
	pi->link_speed_active = 0x4;
	pi->link_speed_enabled = 0x7;
	pi->neighbor_mtu = 5;
	pi->master_sm_sl = 0xA;
	pi->vl_cap = 4;
	pi->init_type = 0x1;
	pi->vl_high_limit = 0x20;
	pi->vl_arb_high_cap = 8;
	pi->vl_arb_low_cap = 9;
	pi->init_type_reply = 0x3;
	pi->mtu_cap = 5;
	pi->vl_stall_count = 7;
	pi->hoq_life = 0x13;
	pi->operational_vls = 4;
	pi->part_enf_in = 1;
	pi->part_enf_out = 0;
	pi->filter_raw_in = 1;
	pi->filter_raw_out = 1;
	pi->mkey_violations = 0x1111;
	pi->pkey_violations = 0x2222;
	pi->qkey_violations = 0x3333;
	pi->guid_cap = 32;
	pi->client_reregister = 1;
	pi->mcast_pkey_trap_suppr = 2;
	pi->subnet_timeout = 18;
	pi->resp_time_value = 0x11;
	pi->local_phy_errors = 0xC;
	pi->overrun_errors = 0x3;
	pi->max_credit_hint = 0x4567;
	pi->link_rt_latency = 0xABCDEF;
	pi->cap_mask2 = 0x0012;
	pi->link_speed_ext_active = 0x4;
	pi->link_speed_ext_supported = 0x6;
	pi->link_speed_ext_enabled = 0x1E;
}

static void test_port_info_golden(void **state)
{
	uint8_t v[SM_SMP_DATA_SIZE] = { 0 }, got[SM_SMP_DATA_SIZE];
	struct sm_port_info pi, dec;
	struct sm_mad_err err;

	(void)state;
	PUT(v, 0, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08);  /* M_Key */
	PUT(v, 8, 0xFE, 0x80, 0, 0, 0, 0, 0, 0);                     /* GidPrefix */
	PUT(v, 16, 0x12, 0x34, 0x00, 0x01);                          /* LID, MasterSMLID */
	PUT(v, 20, 0x02, 0x51, 0x08, 0x68);                          /* CapabilityMask */
	PUT(v, 24, 0x0A, 0xBC, 0x00, 0xFF);                          /* DiagCode, LeasePeriod */
	PUT(v, 28, 0x07, 0x03, 0x13, 0x02);                          /* LocalPort, widths */
	PUT(v, 32, 0x73);        /* LinkSpeedSupported 7 | PortState 3 */
	PUT(v, 33, 0x52);        /* PortPhysicalState 5 | LinkDownDefaultState 2 */
	PUT(v, 34, 0x43);        /* M_KeyProtectBits 1 (bits 7-6) | reserved | LMC 3 */
	PUT(v, 35, 0x47);        /* LinkSpeedActive 4 | LinkSpeedEnabled 7 */
	PUT(v, 36, 0x5A);        /* NeighborMTU 5 | MasterSMSL 10 */
	PUT(v, 37, 0x41);        /* VLCap 4 | InitType 1 */
	PUT(v, 38, 0x20, 0x08, 0x09);                                /* VLHighLimit, arb caps */
	PUT(v, 41, 0x35);        /* InitTypeReply 3 | MTUCap 5 */
	PUT(v, 42, 0xF3);        /* VLStallCount 7 (7-5) | HOQLife 0x13 (4-0) */
	PUT(v, 43, 0x4B);        /* OperationalVLs 4 | PEI 1 PEO 0 FRI 1 FRO 1 */
	PUT(v, 44, 0x11, 0x11, 0x22, 0x22, 0x33, 0x33);              /* violations */
	PUT(v, 50, 0x20);        /* GUIDCap */
	PUT(v, 51, 0xD2);        /* ClientReregister 1 | McastPKeyTrapSuppr 2 | SubnetTimeOut 18 */
	PUT(v, 52, 0x11);        /* reserved | RespTimeValue 0x11 */
	PUT(v, 53, 0xC3);        /* LocalPhyErrors 12 | OverrunErrors 3 */
	PUT(v, 54, 0x45, 0x67);  /* MaxCreditHint */
	PUT(v, 56, 0x00, 0xAB, 0xCD, 0xEF);                          /* LinkRoundTripLatency */
	PUT(v, 60, 0x00, 0x12);  /* CapabilityMask2 */
	PUT(v, 62, 0x46);        /* LinkSpeedExtActive 4 | LinkSpeedExtSupported 6 */
	PUT(v, 63, 0x1E);        /* reserved | LinkSpeedExtEnabled 30 */
	port_info_sample(&pi);
	assert_int_equal(sm_port_info_decode(v, &dec, NULL), 0);
	assert_memory_equal(&dec, &pi, sizeof(pi));
	sm_port_info_encode(&pi, got);
	assert_memory_equal(got, v, sizeof(v));
	/* reserved bits set on the wire are ignored, not trusted into fields */
	v[34] |= 0x38;
	v[52] |= 0xE0;
	assert_int_equal(sm_port_info_decode(v, &dec, NULL), 0);
	assert_memory_equal(&dec, &pi, sizeof(pi));
	v[32] = 0x75;   /* PortState 5: reserved */
	assert_int_equal(sm_port_info_decode(v, &dec, &err), -EBADMSG);
	assert_string_equal(err.field, "PortInfo.PortState");
	v[32] = 0x74;
	v[33] = 0x92;   /* phys state 9 */
	assert_int_equal(sm_port_info_decode(v, &dec, &err), -EBADMSG);
	assert_string_equal(err.field, "PortInfo.PortPhysicalState");
}

static void test_port_info_set(void **state)
{
	uint8_t v[SM_SMP_DATA_SIZE] = { 0 }, got[SM_SMP_DATA_SIZE];
	struct sm_port_info cur, out;
	struct sm_port_info_set s = {
		.lid = 0x0012, .lmc = 2, .sm_lid = 0x0001, .sm_sl = 0,
		.gid_prefix = 0xFE80000000000001ULL, .port_state = SM_PORT_ACTIVE,
		.subnet_timeout = 18,
	};

	(void)state;
	port_info_sample(&cur);
	sm_port_info_prepare_set(&out, &cur, &s);
	sm_port_info_encode(&out, got);
	/* what the SMA must see: new LID/LMC/SM LID/prefix/state, M_Key 0,
	 * every "enable" and physical field 0 (no change), the rest as read */
	port_info_sample(&cur);
	sm_port_info_encode(&cur, v);  /* start from the sample's bytes (checked golden above) */
	PUT(v, 0, 0, 0, 0, 0, 0, 0, 0, 0);                           /* M_Key 0 */
	PUT(v, 8, 0xFE, 0x80, 0, 0, 0, 0, 0, 0x01);                  /* GidPrefix */
	PUT(v, 16, 0x00, 0x12, 0x00, 0x01);                          /* LID, MasterSMLID */
	PUT(v, 26, 0x00, 0x00);  /* M_KeyLeasePeriod 0 */
	PUT(v, 29, 0x00);        /* LinkWidthEnabled: no change */
	PUT(v, 32, 0x74);        /* speed supported as read | PortState ACTIVE */
	PUT(v, 33, 0x00);        /* PortPhysicalState, LinkDownDefault: no change */
	PUT(v, 34, 0x02);        /* M_KeyProtectBits 0 | LMC 2 */
	PUT(v, 35, 0x40);        /* LinkSpeedEnabled: no change */
	PUT(v, 36, 0x50);        /* MasterSMSL 0 */
	/* OperationalVLs: as read (byte 43 unchanged): ibsim takes 0 literally */
	PUT(v, 51, 0x52);        /* ClientReregister 0, suppr 2, SubnetTimeOut 18 */
	PUT(v, 63, 0x00);        /* LinkSpeedExtEnabled: no change */
	assert_memory_equal(got, v, sizeof(v));
	/* M_Key, protect bits and lease go out as asked */
	s.mkey = 0x0123456789ABCDEFULL;
	s.mkey_prot_bits = 3;
	s.mkey_lease_period = 0x0102;
	sm_port_info_prepare_set(&out, &cur, &s);
	sm_port_info_encode(&out, got);
	PUT(v, 0, 0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF);
	PUT(v, 26, 0x01, 0x02);
	PUT(v, 34, 0xC2);        /* M_KeyProtectBits 3 | LMC 2 */
	assert_memory_equal(got, v, sizeof(v));
	s.mkey = 0;
	s.mkey_prot_bits = 0;
	s.mkey_lease_period = 0;
	/* without a Get before: everything else zero */
	sm_port_info_prepare_set(&out, NULL, &s);
	assert_int_equal(out.lid, 0x12);
	assert_int_equal(out.cap_mask, 0);
	assert_int_equal(out.port_state, SM_PORT_ACTIVE);
}

static void test_switch_info_golden(void **state)
{
	uint8_t v[SM_SMP_DATA_SIZE] = { 0 }, got[SM_SMP_DATA_SIZE];
	struct sm_switch_info si, dec;
	struct sm_mad_err err;

	(void)state;
	PUT(v, 0, 0xC0, 0x00, 0x00, 0x00, 0x04, 0x00, 0x08, 0x3F);  /* caps, LinearFDBTop 0x83f */
	PUT(v, 8, 0xFF, 0x00, 0xFF);                                 /* default ports */
	PUT(v, 11, 0x96);        /* LifeTimeValue 18 (7-3) | PortStateChange 1 | OptSL2VL 2 */
	PUT(v, 12, 0x00, 0x00, 0x00, 0x20);                          /* LIDsPerPort, PartEnfCap */
	PUT(v, 16, 0xA8);        /* In 1, Out 0, FRI 1, FRO 0, EnhancedPort0 1 */
	PUT(v, 18, 0xC0, 0x1F);  /* MulticastFDBTop */
	memset(&si, 0, sizeof(si));
	si.lft_cap = 0xC000;
	si.mft_cap = 0x0400;
	si.lft_top = 0x083F;
	si.default_port = 0xFF;
	si.default_mcast_not_primary_port = 0xFF;
	si.lifetime_value = 18;
	si.port_state_change = 1;
	si.opt_sl2vl = 2;
	si.part_enf_cap = 32;
	si.inbound_enf_cap = 1;
	si.filter_raw_in_cap = 1;
	si.enhanced_port0 = 1;
	si.mft_top = 0xC01F;
	assert_int_equal(sm_switch_info_decode(v, &dec, NULL), 0);
	assert_memory_equal(&dec, &si, sizeof(si));
	sm_switch_info_encode(&si, got);
	assert_memory_equal(got, v, sizeof(v));
	PUT(v, 0, 0xC0, 0x01);
	assert_int_equal(sm_switch_info_decode(v, &dec, &err), -EBADMSG);
	assert_string_equal(err.field, "SwitchInfo.LinearFDBCap");
}

static void test_lft_golden(void **state)
{
	uint8_t v[SM_SMP_DATA_SIZE], got[SM_SMP_DATA_SIZE];
	struct sm_lft_block b, dec;

	(void)state;
	/* entry i of the block is the egress port of LID block*64 + i, one byte each */
	for (unsigned i = 0; i < 64; i++)
		v[i] = (uint8_t)(i < 3 ? 0xFF : i % 37);
	for (unsigned i = 0; i < 64; i++)
		b.port[i] = v[i];
	assert_int_equal(sm_lft_block_decode(v, &dec, NULL), 0);
	assert_memory_equal(dec.port, v, 64);
	sm_lft_block_encode(&b, got);
	assert_memory_equal(got, v, 64);
	assert_true(sm_lft_block_valid(767));
	assert_false(sm_lft_block_valid(768));
	assert_int_equal(SM_LFT_MAX_BLOCKS, 768);
}

static void test_sm_info_golden(void **state)
{
	uint8_t v[SM_SMP_DATA_SIZE] = { 0 }, got[SM_SMP_DATA_SIZE];
	struct sm_sm_info si, dec;
	struct sm_mad_err err;

	(void)state;
	PUT(v, 0, 0x00, 0x02, 0xC9, 0x03, 0x00, 0x00, 0x00, 0x01);  /* GUID */
	PUT(v, 8, 0, 0, 0, 0, 0, 0, 0x12, 0x34);                    /* SM_Key */
	PUT(v, 16, 0x00, 0x00, 0x01, 0x00);                         /* ActCount 256 */
	PUT(v, 20, 0xF3);        /* Priority 15 | SMState MASTER */
	memset(&si, 0, sizeof(si));
	si.guid = 0x0002C90300000001ULL;
	si.sm_key = 0x1234;
	si.act_count = 256;
	si.priority = 15;
	si.state = SM_SMSTATE_MASTER;
	assert_int_equal(sm_sm_info_decode(v, &dec, NULL), 0);
	assert_memory_equal(&dec, &si, sizeof(si));
	sm_sm_info_encode(&si, got);
	assert_memory_equal(got, v, sizeof(v));
	v[20] = 0x04;
	assert_int_equal(sm_sm_info_decode(v, &dec, &err), -EBADMSG);
	assert_string_equal(err.field, "SMInfo.SMState");
}

static void test_notice_trap128_golden(void **state)
{
	uint8_t v[SM_SMP_DATA_SIZE] = { 0 }, got[SM_SMP_DATA_SIZE], mad[SM_MAD_SIZE];
	struct sm_notice n, dec;
	struct sm_smp trap, rep, back;
	struct sm_mad_err err;

	(void)state;
	/* generic (1) urgent (1), producer switch (2), trap 128, issuer LID 0x0021,
	 * toggle 1 count 5, details: LIDADDR 0x0021 */
	PUT(v, 0, 0x81, 0x00, 0x00, 0x02);
	PUT(v, 4, 0x00, 0x80, 0x00, 0x21);
	PUT(v, 8, 0x80, 0x05);
	PUT(v, 10, 0x00, 0x21);
	sm_notice_trap128(&n, 0x21);
	n.toggle = 1;
	n.count = 5;
	sm_notice_encode(&n, got);
	assert_memory_equal(got, v, sizeof(v));
	assert_int_equal(sm_notice_decode(v, &dec, NULL), 0);
	assert_int_equal(dec.is_generic, 1);
	assert_int_equal(dec.type, 1);
	assert_int_equal(dec.producer_type, 2);
	assert_int_equal(dec.trap_num, 128);
	assert_int_equal(dec.issuer_lid, 0x21);
	assert_int_equal(dec.toggle, 1);
	assert_int_equal(dec.count, 5);
	assert_int_equal(dec.lid_addr, 0x21);
	assert_memory_equal(&dec, &n, sizeof(n));
	/* generic informational trap 144 from a CA (capability mask change):
	 * DataDetails = reserved 16 bits, then LIDADDR */
	memset(v, 0, sizeof(v));
	PUT(v, 0, 0x84, 0x00, 0x00, 0x01);   /* generic, type 4; producer CA */
	PUT(v, 4, 0x00, 0x90, 0x00, 0x07);   /* trap 144, issuer LID 7 */
	PUT(v, 10, 0x00, 0x00, 0x00, 0x07);  /* reserved, LIDADDR 7 */
	PUT(v, 14, 0x00, 0x01);              /* reserved, OtherLocalChanges 1 */
	PUT(v, 16, 0x02, 0x51, 0x08, 0x6A);  /* NewCapabilityMask (IsSM among others) */
	PUT(v, 20, 0x00, 0x09);              /* ChangeFlags: SM priority, NodeDescription */
	PUT(v, 22, 0x00, 0x12);              /* CapabilityMask2 */
	assert_int_equal(sm_notice_decode(v, &dec, NULL), 0);
	assert_int_equal(dec.trap_num, SM_TRAP_LOCAL_CHANGES);
	assert_int_equal(dec.type, 4);
	assert_int_equal(dec.producer_type, 1);
	assert_int_equal(dec.lid_addr, 7);
	assert_int_equal(dec.other_local_changes, 1);
	assert_int_equal(dec.new_cap_mask, 0x0251086A);
	assert_int_equal(dec.change_flags, SM_TRAP144_SM_PRIORITY | SM_TRAP144_NODE_DESC);
	assert_int_equal(dec.new_cap_mask2, 0x12);
	{
		uint8_t got144[SM_SMP_DATA_SIZE];
		sm_notice_encode(&dec, got144);
		assert_memory_equal(got144, v, sizeof(v));
	}
	/* vendor-specific notice: VendorID and DeviceID in the same bytes, no LIDADDR */
	PUT(v, 0, 0x04, 0x00, 0x02, 0xC9, 0x12, 0x34);
	assert_int_equal(sm_notice_decode(v, &dec, NULL), 0);
	assert_int_equal(dec.is_generic, 0);
	assert_int_equal(dec.producer_type, 0x0002C9);
	assert_int_equal(dec.trap_num, 0x1234);
	assert_int_equal(dec.lid_addr, 0);
	PUT(v, 0, 0x85);   /* generic, type 5: reserved */
	assert_int_equal(sm_notice_decode(v, &dec, &err), -EBADMSG);
	assert_string_equal(err.field, "Notice.Type");

	/* Trap MAD and the TrapRepress reply: same TID/attr/mod, method 0x07 */
	sm_smp_init_lid(&trap, SM_METHOD_TRAP, SM_ATTR_NOTICE, 0);
	trap.tid = 0x77;
	sm_notice_encode(&n, trap.data);
	sm_smp_make_trap_repress(&trap, &rep);
	assert_int_equal(sm_smp_encode(&rep, mad), 0);
	assert_int_equal(mad[1], 0x01);
	assert_int_equal(mad[3], 0x07);
	assert_int_equal(mad[15], 0x77);
	assert_int_equal(mad[16], 0x00);
	assert_int_equal(mad[17], 0x02);
	assert_memory_equal(mad + 64, got, 10);
	assert_int_equal(sm_smp_decode(mad, sizeof(mad), &back, NULL), 0);
	assert_memory_equal(&back, &rep, sizeof(rep));
}

/* decode(encode(x)) == x for pseudo-random field values (masked to width). */
static void test_round_trips(void **state)
{
	uint64_t x = 0x9E3779B97F4A7C15ULL;

	(void)state;
	for (int it = 0; it < 200; it++) {
		uint8_t buf[SM_SMP_DATA_SIZE], raw[SM_SMP_DATA_SIZE], mad[SM_MAD_SIZE];
		struct sm_port_info pi, pi2;
		struct sm_switch_info si, si2;
		struct sm_smp s, s2;

		for (unsigned i = 0; i < sizeof(raw); i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			raw[i] = (uint8_t)x;
		}
		raw[32] = (uint8_t)((raw[32] & 0xF0) | (raw[32] % 5));   /* valid state */
		raw[33] = (uint8_t)((raw[33] & 0x7F));                   /* phys <= 7 */
		assert_int_equal(sm_port_info_decode(raw, &pi, NULL), 0);
		sm_port_info_encode(&pi, buf);
		assert_int_equal(sm_port_info_decode(buf, &pi2, NULL), 0);
		assert_memory_equal(&pi, &pi2, sizeof(pi));
		raw[0] &= 0xBF;   /* LinearFDBCap <= 0xC000 */
		assert_int_equal(sm_switch_info_decode(raw, &si, NULL), 0);
		sm_switch_info_encode(&si, buf);
		assert_int_equal(sm_switch_info_decode(buf, &si2, NULL), 0);
		assert_memory_equal(&si, &si2, sizeof(si));

		memset(&s, 0, sizeof(s));
		s.base_version = 1;
		s.mgmt_class = (it & 1) ? SM_CLASS_SMI_DR : SM_CLASS_SMI;
		s.class_version = 1;
		s.method = raw[1];
		s.status = (uint16_t)(raw[2] << 8 | raw[3]) & 0x7FFF;
		s.tid = x;
		s.attr_id = (uint16_t)(raw[4] << 8 | raw[5]);
		s.attr_mod = (uint32_t)raw[6] << 24 | raw[7];
		s.mkey = x * 3;
		memcpy(s.data, raw, sizeof(s.data));
		if (s.mgmt_class == SM_CLASS_SMI_DR) {
			s.direction = raw[8] & 1;
			s.hop_cnt = raw[9] % 64;
			s.hop_ptr = (uint8_t)(raw[10] % (s.hop_cnt + 2));
			s.dr_slid = (uint16_t)x;
			s.dr_dlid = (uint16_t)(x >> 16);
			memcpy(s.initial_path, raw, sizeof(s.initial_path));
			memcpy(s.return_path, buf, sizeof(s.return_path));
		}
		assert_int_equal(sm_smp_encode(&s, mad), 0);
		assert_int_equal(sm_smp_decode(mad, sizeof(mad), &s2, NULL), 0);
		assert_memory_equal(&s, &s2, sizeof(s));
	}
}

/* Garbage in: decoders never read past the buffer, never crash, and either
 * fail naming a field or give values within their documented ranges. */
static void test_decode_garbage(void **state)
{
	uint64_t x = 0x0123456789ABCDEFULL;
	unsigned failed = 0;

	(void)state;
	for (int it = 0; it < 20000; it++) {
		uint8_t buf[SM_MAD_SIZE];
		size_t len;
		struct sm_smp s;
		struct sm_mad_err err;
		struct sm_node_info ni;
		struct sm_node_desc nd;
		struct sm_port_info pi;
		struct sm_switch_info si;
		struct sm_sm_info smi;
		struct sm_notice n;
		struct sm_lft_block b;

		for (unsigned i = 0; i < sizeof(buf); i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			buf[i] = (uint8_t)x;
		}
		/* often a plausible header, so decoding goes deeper */
		if (it & 1) {
			buf[0] = 1;
			buf[1] = (it & 2) ? 0x81 : 0x01;
			buf[2] = 1;
		}
		len = (it % 7 == 0) ? (size_t)(x % SM_MAD_SIZE) : SM_MAD_SIZE;
		memset(&err, 0, sizeof(err));
		/* exactly len bytes on the heap: ASan catches a read past the end */
		uint8_t *exact = malloc(len ? len : 1);
		assert_non_null(exact);
		memcpy(exact, buf, len);
		int rc = sm_smp_decode(exact, len, &s, &err);
		free(exact);
		if (rc < 0) {
			assert_non_null(err.field);
			assert_true(strlen(err.msg) > 0);
			failed++;
		} else {
			assert_true(s.hop_cnt <= SM_DR_MAX_HOPS);
			assert_true(s.hop_ptr <= s.hop_cnt + 1);
		}
		if (sm_node_info_decode(buf + 64, &ni, &err) == 0) {
			assert_true(ni.node_type >= 1 && ni.node_type <= 3);
			assert_true(ni.num_ports >= 1 && ni.num_ports <= 254);
			assert_true(ni.local_port_num <= ni.num_ports);
		}
		assert_int_equal(sm_node_desc_decode(buf + 64, &nd, &err), 0);
		assert_true(strlen(nd.desc) <= 64);
		for (size_t i = 0; nd.desc[i]; i++)
			assert_true((unsigned char)nd.desc[i] >= 0x20 && nd.desc[i] != 0x7F);
		if (sm_port_info_decode(buf + 64, &pi, &err) == 0) {
			assert_true(pi.port_state <= 4);
			assert_true(pi.lmc <= 7);
		}
		if (sm_switch_info_decode(buf + 64, &si, &err) == 0)
			assert_true(si.lft_cap <= 0xC000);
		if (sm_sm_info_decode(buf + 64, &smi, &err) == 0)
			assert_true(smi.state <= 3);
		sm_notice_decode(buf + 64, &n, &err);
		assert_int_equal(sm_lft_block_decode(buf + 64, &b, &err), 0);
	}
	/* short lengths and bad headers did fail */
	assert_true(failed > 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dr_get_golden),
		cmocka_unit_test(test_dr_resp_golden),
		cmocka_unit_test(test_lid_routed_golden),
		cmocka_unit_test(test_smp_malformed),
		cmocka_unit_test(test_check_response),
		cmocka_unit_test(test_dr_path_helpers),
		cmocka_unit_test(test_node_info_golden),
		cmocka_unit_test(test_node_desc_golden),
		cmocka_unit_test(test_port_info_golden),
		cmocka_unit_test(test_port_info_set),
		cmocka_unit_test(test_switch_info_golden),
		cmocka_unit_test(test_lft_golden),
		cmocka_unit_test(test_sm_info_golden),
		cmocka_unit_test(test_notice_trap128_golden),
		cmocka_unit_test(test_round_trips),
		cmocka_unit_test(test_decode_garbage),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
