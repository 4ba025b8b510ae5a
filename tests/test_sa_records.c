/* SPDX-License-Identifier: MIT */
/*
 * SA record wire formats (smd/sa/records.c): golden bytes for every record
 * against the layouts of OpenSM's include/iba/ib_types.h, the bit-field
 * helpers and component-mask matching with the IBA rules.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "mad/codec.h"
#include "sa/records.h"

static void test_bits(void **st)
{
	(void)st;
	uint8_t r[8] = { 0 };
	sm_sa_bits_put(r, 4, 4, 0xf);        /* low nibble of byte 0 */
	sm_sa_bits_put(r, 8, 16, 0xabcd);
	sm_sa_bits_put(r, 24, 3, 5);         /* top 3 bits of byte 3 */
	sm_sa_bits_put(r, 61, 3, 0xff);      /* masked to 3 bits */
	static const uint8_t g[8] = { 0x0f, 0xab, 0xcd, 0xa0, 0, 0, 0, 0x07 };
	assert_memory_equal(r, g, 8);
	assert_int_equal(sm_sa_bits_get(r, 4, 4), 0xf);
	assert_int_equal(sm_sa_bits_get(r, 8, 16), 0xabcd);
	assert_int_equal(sm_sa_bits_get(r, 24, 3), 5);
	assert_int_equal(sm_sa_bits_get(r, 0, 64), 0x0fabcda000000007ull);
	sm_sa_bits_put(r, 8, 16, 0);
	assert_int_equal(sm_sa_bits_get(r, 0, 32), 0x0f0000a0);
}

static void test_match(void **st)
{
	(void)st;
	static const struct sm_sa_field f[] = {
		SM_SA_F(0, 0, 0, 16),    /* a LID */
		SM_SA_F(2, 2, 4, 4),     /* a nibble */
		SM_SA_F(3, 4, 0, 128),   /* 16 bytes */
	};
	uint8_t a[20] = { 0 }, b[20] = { 0 };
	a[0] = 1; b[0] = 2;
	assert_true(sm_sa_match(f, 3, 0, a, b));
	assert_false(sm_sa_match(f, 3, 1, a, b));
	b[0] = 1;
	assert_true(sm_sa_match(f, 3, 1, a, b));
	a[2] = 0xf3; b[2] = 0x03;            /* only the low nibble is the field */
	assert_true(sm_sa_match(f, 3, 1u << 2, a, b));
	b[2] = 0x04;
	assert_false(sm_sa_match(f, 3, 1u << 2, a, b));
	b[2] = 0x03;
	a[19] = 1;
	assert_false(sm_sa_match(f, 3, 1u << 3, a, b));
	/* bits naming no field (1: reserved, 40, 63) are ignored */
	assert_true(sm_sa_match(f, 3, 1u << 1 | 1ull << 40 | 1ull << 63, a, b));
	/* helpers */
	uint8_t lid[2] = { 0x12, 0x34 };
	assert_true(sm_sa_cm_lid(0, 0, lid, 7));
	assert_true(sm_sa_cm_lid(1, 0, lid, 0x1234));
	assert_false(sm_sa_cm_lid(1, 0, lid, 0x1235));
	uint8_t gid[16];
	sm_sa_gid_make(gid, 0xfe80000000000000ull, 0x0002c90300000001ull);
	assert_int_equal(gid[0], 0xfe);
	assert_int_equal(gid[15], 0x01);
	assert_int_equal(sm_sa_gid_guid(gid), 0x0002c90300000001ull);
	assert_int_equal(sm_sa_gid_prefix(gid), 0xfe80000000000000ull);
	assert_true(sm_sa_cm_guid(1u << 5, 5, gid + 8, 0x0002c90300000001ull));
	assert_false(sm_sa_cm(1ull << 63, 64));
	assert_true(sm_sa_sel_ok(SM_SA_SEL_GT, 3, 4));
	assert_false(sm_sa_sel_ok(SM_SA_SEL_GT, 4, 4));
	assert_true(sm_sa_sel_ok(SM_SA_SEL_LT, 5, 4));
	assert_true(sm_sa_sel_ok(SM_SA_SEL_EQ, 4, 4));
	assert_true(sm_sa_sel_ok(SM_SA_SEL_MAX, 9, 4));
}

/* Every field of a table compares its own bits only: flipping its last bit breaks the match, flipping the next bit does not. */
static void fields_own_bits(const struct sm_sa_field *fields, size_t n, const uint8_t *r, size_t size)
{
	uint8_t q[128];
	assert_true(size <= sizeof(q));
	for (size_t i = 0; i < n; i++) {
		const struct sm_sa_field *f = &fields[i];
		memcpy(q, r, size);
		assert_true(sm_sa_match(fields, n, 1ull << f->bit, q, r));
		unsigned b = f->off + f->nbits - 1;
		assert_true(b < size * 8);
		q[b / 8] ^= (uint8_t)(0x80 >> (b % 8));
		assert_false(sm_sa_match(fields, n, 1ull << f->bit, q, r));
		unsigned o = f->off + f->nbits < size * 8 ? f->off + f->nbits : f->off - 1;
		memcpy(q, r, size);
		q[o / 8] ^= (uint8_t)(0x80 >> (o % 8));
		assert_true(sm_sa_match(fields, n, 1ull << f->bit, q, r));
	}
}

/* ---- golden bytes: offsets of IBA vol. 1 15.2.5 (OpenSM include/iba/ib_types.h layouts) ---- */

static void test_node_record(void **st)
{
	(void)st;
	struct sm_node_info ni = {
		.base_version = 1, .class_version = 1, .node_type = 2, .num_ports = 36,
		.sys_guid = 0x1111111111111111ull, .node_guid = 0x2222222222222222ull,
		.port_guid = 0x3333333333333333ull, .partition_cap = 0x40, .device_id = 0xbd36,
		.revision = 0xa0, .local_port_num = 0, .vendor_id = 0x0002c9,
	};
	uint8_t r[SM_SA_NODE_REC_SIZE];
	memset(r, 0xee, sizeof(r));
	sm_sa_node_rec_encode(r, 0x0102, &ni, "abc");
	uint8_t g[SM_SA_NODE_REC_SIZE] = {
		0x01, 0x02, 0, 0,                           /* LID, reserved */
		1, 1, 2, 36,                                /* Base/ClassVersion, NodeType, NumPorts */
		0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, /* SystemImageGUID */
		0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22, /* NodeGUID */
		0x33, 0x33, 0x33, 0x33, 0x33, 0x33, 0x33, 0x33, /* PortGUID */
		0x00, 0x40, 0xbd, 0x36,                     /* PartitionCap, DeviceID */
		0, 0, 0, 0xa0,                              /* Revision */
		0, 0x00, 0x02, 0xc9,                        /* LocalPortNum, VendorID */
		'a', 'b', 'c',                              /* NodeDescription (44..107), pad to 112 */
	};
	assert_memory_equal(r, g, sizeof(g));
	/* fields by table: NodeGUID is bit 7 at byte 16 */
	uint8_t q[SM_SA_NODE_REC_SIZE] = { 0 };
	memcpy(q + 16, g + 16, 8);
	assert_true(sm_sa_match(sm_sa_node_fields, sm_sa_node_nfields, 1u << 7, q, r));
	assert_false(sm_sa_match(sm_sa_node_fields, sm_sa_node_nfields, 1u << 7 | 1u << 6, q, r));
	q[43] = 0xc9;
	q[42] = 0x02;
	assert_true(sm_sa_match(sm_sa_node_fields, sm_sa_node_nfields, 1u << 13, q, r));   /* VendorID, 24 bits */
	fields_own_bits(sm_sa_node_fields, sm_sa_node_nfields, r, sizeof(r));
}

static void test_portinfo_record(void **st)
{
	(void)st;
	struct sm_port_info pi = {
		.mkey = 0x0102030405060708ull, .gid_prefix = 0xfe80000000000000ull, .lid = 0x10,
		.master_sm_lid = 1, .cap_mask = 0x02514868, .mkey_lease_period = 3600, .local_port_num = 1,
		.link_width_enabled = 3, .link_width_supported = 3, .link_width_active = 2,
		.link_speed_supported = 7, .port_state = 4, .phys_state = 5, .link_down_def_state = 2,
		.mkey_prot_bits = 1, .lmc = 2, .link_speed_active = 1, .link_speed_enabled = 7,
		.neighbor_mtu = 5, .vl_cap = 4, .vl_arb_high_cap = 8, .vl_arb_low_cap = 8, .mtu_cap = 5,
		.vl_stall_count = 7, .hoq_life = 0x13, .operational_vls = 4, .part_enf_in = 1,
		.filter_raw_out = 1, .mkey_violations = 1, .pkey_violations = 2, .qkey_violations = 3,
		.guid_cap = 0x20, .client_reregister = 1, .subnet_timeout = 18, .resp_time_value = 0x14,
		.local_phy_errors = 8, .overrun_errors = 8, .max_credit_hint = 0x1234,
		.link_rt_latency = 0x0abcde, .cap_mask2 = 0x0010, .link_speed_ext_active = 1,
		.link_speed_ext_supported = 3, .link_speed_ext_enabled = 0x1f,
	};
	uint8_t r[SM_SA_PORTINFO_REC_SIZE];
	sm_sa_portinfo_rec_encode(r, 0x10, 1, 0x80, &pi);
	static const uint8_t g[SM_SA_PORTINFO_REC_SIZE] = {
		0x00, 0x10, 1, 0x80,                        /* LID, PortNum, Options */
		1, 2, 3, 4, 5, 6, 7, 8,                     /* M_Key */
		0xfe, 0x80, 0, 0, 0, 0, 0, 0,               /* GidPrefix */
		0x00, 0x10, 0x00, 0x01,                     /* LID, MasterSMLID */
		0x02, 0x51, 0x48, 0x68,                     /* CapabilityMask */
		0, 0, 0x0e, 0x10,                           /* DiagCode, M_KeyLeasePeriod */
		1, 3, 3, 2,                                 /* LocalPortNum, LinkWidth En/Sup/Act */
		0x74, 0x52, 0x42, 0x17,                     /* SpeedSup|State, Phys|DownDef, Prot|LMC, SpeedAct|En */
		0x50, 0x40, 0, 8, 8, 0x05, 0xf3, 0x49,      /* MTU|SMSL, VLCap|Init, VLHigh, ArbH, ArbL, ITR|MTUCap, Stall|HOQ, OpVLs|enf */
		0, 1, 0, 2, 0, 3,                           /* M_Key/P_Key/Q_Key violations */
		0x20, 0x92, 0x14, 0x88,                     /* GUIDCap, Rereg|Supp|SubnetTO, RespTime, Phy|Overrun */
		0x12, 0x34, 0, 0x0a, 0xbc, 0xde,            /* MaxCreditHint, reserved, LinkRoundTripLatency */
		0x00, 0x10, 0x13, 0x1f,                     /* CapabilityMask2, SpeedExt Act|Sup, ExtEnabled */
	};
	assert_memory_equal(r, g, sizeof(g));
	fields_own_bits(sm_sa_portinfo_fields, sm_sa_portinfo_nfields, r, sizeof(r));
}

static void test_small_records(void **st)
{
	(void)st;
	uint8_t r[80];
	static const uint8_t link[8] = { 0x00, 0x01, 3, 7, 0x00, 0x02, 0, 0 };
	sm_sa_link_rec_encode(r, 1, 3, 7, 2);
	assert_memory_equal(r, link, 8);

	struct sm_switch_info si = {
		.lft_cap = 0xc000, .mft_cap = 0x200, .lft_top = 0x123, .default_mcast_primary_port = 0xff,
		.default_mcast_not_primary_port = 0xff, .lifetime_value = 0x13, .port_state_change = 1,
		.part_enf_cap = 0x20, .inbound_enf_cap = 1, .outbound_enf_cap = 1, .enhanced_port0 = 1,
		.mft_top = 0xc01f,
	};
	static const uint8_t swi[SM_SA_SWITCHINFO_REC_SIZE] = {
		0x00, 0x05, 0, 0,                               /* LID, reserved */
		0xc0, 0x00, 0x00, 0x00, 0x02, 0x00, 0x01, 0x23, /* LinearFDBCap, RandomFDBCap, MulticastFDBCap, LinearFDBTop */
		0, 0xff, 0xff, 0x9c,                            /* DefaultPort, mcast ports, LifeTime|PSC|OptSL2VL */
		0, 0, 0x00, 0x20,                               /* LIDsPerPort, PartitionEnforcementCap */
		0xc8, 0, 0xc0, 0x1f,                            /* In|Out|FRIn|FROut|EnhancedPort0, reserved, MulticastFDBTop */
	};
	sm_sa_switchinfo_rec_encode(r, 5, &si);
	assert_memory_equal(r, swi, sizeof(swi));

	uint8_t ports[64], g[72] = { 0x00, 0x11, 0x01, 0x02 };
	for (unsigned i = 0; i < 64; i++)
		ports[i] = g[8 + i] = (uint8_t)i;
	sm_sa_lft_rec_encode(r, 0x11, 0x102, ports);
	assert_memory_equal(r, g, 72);

	uint16_t masks[32];
	memset(g, 0, sizeof(g));
	g[1] = 0x11;
	g[2] = 0x31;   /* Position 3, reserved 3 bits, BlockNum 0x1ff */
	g[3] = 0xff;
	for (unsigned i = 0; i < 32; i++) {
		masks[i] = (uint16_t)(0x100 + i);
		g[8 + 2 * i] = 1;
		g[9 + 2 * i] = (uint8_t)i;
	}
	sm_sa_mft_rec_encode(r, 0x11, 3, 0x1ff, masks);
	assert_memory_equal(r, g, 72);

	static const uint8_t smi[SM_SA_SMINFO_REC_SIZE] = {
		0x00, 0x01, 0, 0,
		0x00, 0x02, 0xc9, 0x03, 0x00, 0x0a, 0x0b, 0x0c,     /* GUID */
		0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,     /* SM_Key */
		0x01, 0x02, 0x03, 0x04,                             /* ActCount */
		0xf3,                                               /* Priority | SMState */
	};
	sm_sa_sminfo_rec_encode(r, 1, 0x0002c903000a0b0cull, 0x1122334455667788ull, 0x01020304, 0xf, 3);
	assert_memory_equal(r, smi, sizeof(smi));
	fields_own_bits(sm_sa_sminfo_fields, sm_sa_sminfo_nfields, r, SM_SA_SMINFO_REC_SIZE);

	uint64_t guids[8];
	memset(g, 0, sizeof(g));
	g[1] = 0x10;
	g[2] = 2;
	for (unsigned i = 0; i < 8; i++) {
		guids[i] = 0xa0 + i;
		g[15 + 8 * i] = (uint8_t)(0xa0 + i);
	}
	sm_sa_guidinfo_rec_encode(r, 0x10, 2, guids);
	assert_memory_equal(r, g, 72);
	fields_own_bits(sm_sa_guidinfo_fields, sm_sa_guidinfo_nfields, r, 72);

	uint16_t pk[32];
	memset(g, 0, sizeof(g));
	g[1] = 0x10;
	g[3] = 3;
	g[4] = 7;
	for (unsigned i = 0; i < 32; i++) {
		pk[i] = (uint16_t)(0x8000 | i);
		g[8 + 2 * i] = 0x80;
		g[9 + 2 * i] = (uint8_t)i;
	}
	sm_sa_pkey_rec_encode(r, 0x10, 3, 7, pk);
	assert_memory_equal(r, g, 72);

	uint8_t vl[16];
	for (unsigned i = 0; i < 16; i++)
		vl[i] = (uint8_t)i;
	static const uint8_t slvl[16] = { 0, 0x10, 2, 5, 0, 0, 0, 0, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef };
	sm_sa_sl2vl_rec_encode(r, 0x10, 2, 5, vl);
	assert_memory_equal(r, slvl, 16);

	uint8_t arb[64];
	memset(g, 0, sizeof(g));
	g[1] = 0x10;
	g[2] = 3;
	g[3] = 4;
	for (unsigned i = 0; i < 32; i++) {
		arb[2 * i] = (uint8_t)(0x10 | (i & 0xf));   /* reserved bits set: dropped */
		arb[2 * i + 1] = (uint8_t)i;
		g[8 + 2 * i] = (uint8_t)(i & 0xf);
		g[9 + 2 * i] = (uint8_t)i;
	}
	sm_sa_vlarb_rec_encode(r, 0x10, 3, 4, arb);
	assert_memory_equal(r, g, 72);
}

static void test_cpi(void **st)
{
	(void)st;
	uint8_t r[SM_SA_CPI_SIZE];
	struct sm_sa_cpi c = { .cap_mask = 0x2202, .cap_mask2 = 0x07ffffff, .resp_time_value = 0x3f,
			       .redir_qp = 0xff000001, .redir_qkey = 0x80010000, .trap_qkey = 0x80010000 };
	sm_sa_cpi_encode(&c, r);
	static const uint8_t g[SM_SA_CPI_SIZE] = {
		1, 2, 0x22, 0x02, 0xff, 0xff, 0xff, 0xff,           /* cap2 all 27 bits | RespTime masked to 5 bits */
		[32] = 0, 0, 0, 1, 0x80, 0x01, 0, 0,                /* RedirectQP (24 bits), RedirectQ_Key */
		[68] = 0x80, 0x01, 0, 0,                            /* TrapQ_Key */
	};
	assert_memory_equal(r, g, sizeof(g));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bits),
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_node_record),
		cmocka_unit_test(test_portinfo_record),
		cmocka_unit_test(test_small_records),
		cmocka_unit_test(test_cpi),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
