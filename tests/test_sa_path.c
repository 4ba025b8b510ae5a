/* SPDX-License-Identifier: MIT */
/*
 * PathRecord and MultiPathRecord (smd/sa/path.h) on a hand-built fabric
 * whose LFTs are set by hand, so every expected field is checked by hand:
 *
 *   S1 (0x100, LID 20) == two links (ports 1, 2) == S2 (0x200, LID 21)
 *   S1 p3: A  (port 0xA01, LIDs 1-2, LMC 1)   S2 p3: B (0xB01, LIDs 4-5, LMC 1)
 *   S1 p4: C  (0xC01, LID 6, 1x SDR)          S2 p4: D (0xD01, LID 7)
 *   S1 p5: G  (0x601, LIDs 10-11, LMC 1)      S2 p6: H (0x701, LID 12)
 *   every other link 4x EDR (rate code 16, 100 Gb/s); MTU 4096.
 *   S2 has no LFT entry for LID 11 (G's second LID): G(11) -> S2 side is
 *   carried, the way back is not (not reversible). No switch has an entry
 *   for LID 12: nothing reaches H.
 *
 * Also: golden bytes of both layouts, the rate table, selectors, NumbPath,
 * Reversible, the query forms (SGID/DGID, SLID/DLID, DGID only), the APM
 * form of MultiPathRecord, and hostile requests (truncated, other subnet,
 * LIDs out of range, mask bits past the record, GID counts past the data).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "model/fabric.h"
#include "model/gen.h"
#include "mad/codec.h"
#include "model/lfts.h"
#include "sa/dyn.h"
#include "sa/path.h"
#include "sa/query.h"
#include "sm/snapshot.h"
#include "fixture/fixture.h"

/* The port GUID holding `lid` in a snapshot's plane. */
static uint64_t lid_owner(const struct sm_snapshot *sn, uint16_t lid)
{
	const struct sm_fabric *f = sn->fabric;
	uint32_t p = sm_fabric_find_lid(f, sn->plane, lid);
	assert_true(p != SM_NONE);
	return f->ports[p].guid;
}

#define PREFIX 0xFE80000000000000ULL
#define PG(x) ((uint64_t)(x))
#define BIT(b) (1ULL << (b))
#define CM_PAIR_GID (BIT(SM_PR_CM_SGID) | BIT(SM_PR_CM_DGID))
#define CM_PAIR_LID (BIT(SM_PR_CM_SLID) | BIT(SM_PR_CM_DLID))

enum { A = 0xA01, B = 0xB01, C = 0xC01, D = 0xD01, G = 0x601, H = 0x701 };

static struct sm_snapshot *snap;
static struct sm_sa_self self = { .port_guid = 0x100, .subnet_timeout = 18 };
static struct sm_sa_ctx ctx;
static struct sm_sa_ans ans;

static uint32_t add_ca(struct sm_fabric *f, uint64_t port_guid, uint32_t sw, unsigned swp, uint16_t lid,
		       uint8_t lmc, uint8_t width, uint8_t speed, uint8_t flags)
{
	int64_t n = sm_fabric_add_node(f, SM_NODE_CA, port_guid - 1, 1, 0, 0);
	assert_true(n >= 0);
	assert_int_equal(sm_fabric_set_port_guid(f, (uint32_t)n, 1, port_guid), 0);
	assert_int_equal(sm_fabric_link(f, (uint32_t)n, 1, sw, swp), 0);
	assert_int_equal(sm_fabric_set_lid(f, (uint32_t)n, 1, lid, lmc), 0);
	struct sm_port *a = sm_port(f, (uint32_t)n, 1), *b = sm_port(f, sw, swp);
	a->width = b->width = width, a->speed = b->speed = speed, a->flags = b->flags = flags;
	a->state = b->state = SM_PORT_ACTIVE;
	return (uint32_t)n;
}

static void sw_link(struct sm_fabric *f, uint32_t a, unsigned pa, uint32_t b, unsigned pb)
{
	assert_int_equal(sm_fabric_link(f, a, pa, b, pb), 0);
	struct sm_port *x = sm_port(f, a, pa), *y = sm_port(f, b, pb);
	x->width = y->width = 2, x->speed = y->speed = 2, x->flags = y->flags = SM_PORT_F_EXT_SPEED;
	x->state = y->state = SM_PORT_ACTIVE;
}

static int setup(void **st)
{
	(void)st;
	struct sm_fabric *f = sm_fabric_new();
	assert_non_null(f);
	int64_t s1 = sm_fabric_add_node(f, SM_NODE_SWITCH, 0x100, 8, 0, 0);
	int64_t s2 = sm_fabric_add_node(f, SM_NODE_SWITCH, 0x200, 8, 0, 0);
	assert_true(s1 >= 0 && s2 >= 0);
	assert_int_equal(sm_fabric_set_lid(f, (uint32_t)s1, 0, 20, 0), 0);
	assert_int_equal(sm_fabric_set_lid(f, (uint32_t)s2, 0, 21, 0), 0);
	sw_link(f, (uint32_t)s1, 1, (uint32_t)s2, 1);
	sw_link(f, (uint32_t)s1, 2, (uint32_t)s2, 2);
	const uint8_t EXT = SM_PORT_F_EXT_SPEED;
	add_ca(f, A, (uint32_t)s1, 3, 1, 1, 2, 2, EXT);
	add_ca(f, B, (uint32_t)s2, 3, 4, 1, 2, 2, EXT);
	add_ca(f, C, (uint32_t)s1, 4, 6, 0, 1, 1, 0);      /* 1x SDR */
	add_ca(f, D, (uint32_t)s2, 4, 7, 0, 2, 2, EXT);
	add_ca(f, G, (uint32_t)s1, 5, 10, 1, 2, 2, EXT);
	add_ca(f, H, (uint32_t)s2, 6, 12, 0, 2, 2, EXT);

	struct sm_lfts *l = sm_lfts_new(f, 0);
	assert_non_null(l);
	static const uint8_t t1[][2] = { { 1, 3 }, { 2, 3 }, { 4, 1 }, { 5, 2 }, { 6, 4 }, { 7, 1 },
					 { 10, 5 }, { 11, 5 }, { 20, 0 }, { 21, 1 } };
	static const uint8_t t2[][2] = { { 1, 1 }, { 2, 2 }, { 4, 3 }, { 5, 3 }, { 6, 1 }, { 7, 4 },
					 { 10, 1 }, { 20, 1 }, { 21, 0 } };
	for (size_t i = 0; i < sizeof(t1) / sizeof(t1[0]); i++)
		sm_lfts_set(l, (uint32_t)s1, t1[i][0], t1[i][1]);
	for (size_t i = 0; i < sizeof(t2) / sizeof(t2[0]); i++)
		sm_lfts_set(l, (uint32_t)s2, t2[i][0], t2[i][1]);
	snap = sm_snapshot_new(0, f, l);
	assert_non_null(snap);
	snap->subnet_prefix = PREFIX;
	snap->up = true;
	ctx = (struct sm_sa_ctx){ .snap = snap, .self = &self };
	return 0;
}

static int teardown(void **st)
{
	(void)st;
	sm_snapshot_unref(snap);
	sm_sa_ans_free(&ans);
	return 0;
}

/* ---- requests ---- */

static void gid(uint8_t g[16], uint64_t prefix, uint64_t guid)
{
	for (int i = 0; i < 8; i++)
		g[i] = (uint8_t)(prefix >> (56 - 8 * i)), g[8 + i] = (uint8_t)(guid >> (56 - 8 * i));
}

static struct sm_sa_path_rec pr(uint64_t sguid, uint64_t dguid)
{
	struct sm_sa_path_rec r = { 0 };
	gid(r.sgid, PREFIX, sguid);
	gid(r.dgid, PREFIX, dguid);
	return r;
}

/* Answer a PathRecord request (method, mask, record) from requester LID `from`. */
static uint16_t ask_from(uint8_t method, uint64_t mask, const struct sm_sa_path_rec *r, uint16_t from)
{
	uint8_t buf[SM_SA_DATA_SIZE] = { 0 };
	sm_sa_path_rec_encode(r, buf);
	struct sm_sa_req req = { .data = buf, .len = sizeof(buf) };
	req.hdr.method = method, req.hdr.comp_mask = mask, req.hdr.attr_id = SM_SA_ATTR_PATH_RECORD;
	req.hdr.class_version = SM_SA_CLASS_VERSION, req.from.lid = from;
	assert_int_equal(sm_sa_query(&ctx, &req, &ans), 0);
	return ans.status;
}

static uint16_t ask(uint8_t method, uint64_t mask, const struct sm_sa_path_rec *r)
{
	return ask_from(method, mask, r, 1);
}

static struct sm_sa_path_rec got(size_t i)
{
	struct sm_sa_path_rec r;
	assert_true(i < ans.n);
	assert_int_equal(ans.rec_size, SM_SA_PATH_REC_SIZE);
	sm_sa_path_rec_decode(ans.buf + i * SM_SA_PATH_REC_SIZE, &r);
	return r;
}

static uint64_t guid_of(const uint8_t g[16])
{
	uint64_t v = 0;
	for (int i = 8; i < 16; i++)
		v = v << 8 | g[i];
	return v;
}

static void expect(const struct sm_sa_path_rec *r, uint64_t sg, uint64_t dg, uint16_t slid, uint16_t dlid,
		   uint8_t rate, uint8_t plt, bool rev, uint8_t pref)
{
	assert_int_equal(guid_of(r->sgid), sg);
	assert_int_equal(guid_of(r->dgid), dg);
	assert_int_equal(r->sgid[0], 0xFE);
	assert_int_equal(r->dgid[1], 0x80);
	assert_int_equal(r->slid, slid);
	assert_int_equal(r->dlid, dlid);
	assert_int_equal(r->p.mtu_sel, 2);
	assert_int_equal(r->p.mtu, 5);
	assert_int_equal(r->p.rate_sel, 2);
	assert_int_equal(r->p.rate, rate);
	assert_int_equal(r->p.plt_sel, 2);
	assert_int_equal(r->p.plt, plt);
	assert_int_equal(r->p.reversible, rev);
	assert_int_equal(r->p.numb_path, 0);
	assert_int_equal(r->p.pkey, 0xFFFF);
	assert_int_equal(r->p.sl, 0);
	assert_int_equal(r->p.hop_limit, 0);
	assert_int_equal(r->preference, pref);
}

/* ---- wire ---- */

static void test_wire_golden(void **st)
{
	(void)st;
	struct sm_sa_path_rec r = {
		.service_id = 0x0102030405060708ULL, .dlid = 0x1234, .slid = 0x5678, .preference = 7,
		.p = { .raw = true, .flow_label = 0xABCDE, .hop_limit = 0x3F, .tclass = 0x42, .reversible = true,
		       .numb_path = 0x11, .pkey = 0xFFFF, .qos_class = 0xABC, .sl = 0xD, .mtu_sel = 2, .mtu = 4,
		       .rate_sel = 1, .rate = 16, .plt_sel = 3, .plt = 18 },
	};
	gid(r.dgid, PREFIX, 0x1111111111111111ULL);
	gid(r.sgid, 0xFEC0000000000000ULL, 0x2222222222222222ULL);
	static const uint8_t want[64] = {
		1, 2, 3, 4, 5, 6, 7, 8,
		0xFE, 0x80, 0, 0, 0, 0, 0, 0, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11,
		0xFE, 0xC0, 0, 0, 0, 0, 0, 0, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22,
		0x12, 0x34, 0x56, 0x78,
		0x8A, 0xBC, 0xDE, 0x3F,           /* raw | flow label | hop limit */
		0x42, 0x91, 0xFF, 0xFF,           /* tclass, reversible | numb_path, pkey */
		0xAB, 0xCD,                       /* qos class | sl */
		0x84, 0x50, 0xD2, 7,              /* mtu, rate, plt, preference */
		0, 0, 0, 0, 0, 0,
	};
	uint8_t b[64];
	memset(b, 0xEE, sizeof(b));
	sm_sa_path_rec_encode(&r, b);
	assert_memory_equal(b, want, 64);
	struct sm_sa_path_rec d;
	sm_sa_path_rec_decode(want, &d);
	assert_memory_equal(&d.sgid, &r.sgid, 16);
	assert_true(d.service_id == r.service_id && d.p.flow_label == r.p.flow_label && d.p.qos_class == r.p.qos_class);
	assert_true(d.p.raw && d.p.reversible && d.p.numb_path == 0x11 && d.p.plt_sel == 3 && d.p.rate == 16);

	struct sm_sa_mpath_rec m = {
		.p = { .raw = false, .flow_label = 1, .hop_limit = 2, .tclass = 3, .reversible = true, .numb_path = 4,
		       .pkey = 0x8001, .qos_class = 1, .sl = 2, .mtu_sel = 1, .mtu = 3, .rate_sel = 2, .rate = 7,
		       .plt_sel = 0, .plt = 9 },
		.service_id = 0xAA00000000000055ULL, .indep_sel = 1, .sgid_count = 2,
		.dgid_count = 3,
	};
	static const uint8_t mwant[24] = {
		0, 0, 1, 2, 3, 0x84, 0x80, 0x01, 0x00, 0x12, 0x43, 0x87, 0x09, 0xAA, 0x40, 2, 3,
		0, 0, 0, 0, 0, 0, 0x55,
	};
	uint8_t mb[24];
	sm_sa_mpath_rec_encode(&m, mb);
	assert_memory_equal(mb, mwant, 24);
	struct sm_sa_mpath_rec md;
	sm_sa_mpath_rec_decode(mwant, &md);
	assert_true(md.service_id == m.service_id && md.indep_sel == 1 && md.sgid_count == 2 &&
		    md.dgid_count == 3 && md.p.mtu_sel == 1 && md.p.pkey == 0x8001 && md.p.reversible);
}

static void test_rates(void **st)
{
	(void)st;
	assert_int_equal(sm_sa_rate_of(2, 2, SM_PORT_F_EXT_SPEED), 16);   /* 4x EDR: 100 */
	assert_int_equal(sm_sa_rate_of(2, 8, SM_PORT_F_EXT_SPEED), 21);   /* 4x NDR: 400 */
	assert_int_equal(sm_sa_rate_of(2, 4, SM_PORT_F_EXT_SPEED), 17);   /* 4x HDR: 200 */
	assert_int_equal(sm_sa_rate_of(2, 1, SM_PORT_F_EXT_SPEED), 12);   /* 4x FDR: 56 */
	assert_int_equal(sm_sa_rate_of(2, 4, 0), 7);                      /* 4x QDR: 40 */
	assert_int_equal(sm_sa_rate_of(2, 4, SM_PORT_F_FDR10), 7);        /* FDR10 as PortInfo says: QDR */
	assert_int_equal(sm_sa_rate_of(1, 1, 0), 2);                      /* 1x SDR */
	assert_int_equal(sm_sa_rate_of(8, 1, 0), 4);                      /* 12x SDR: 30 */
	assert_int_equal(sm_sa_rate_of(16, 4, SM_PORT_F_EXT_SPEED), 16);  /* 2x HDR: 100 */
	assert_int_equal(sm_sa_rate_of(0, 1, 0), 0);
	assert_int_equal(sm_sa_rate_of(2, 3, 0), 0);
	/* order by bandwidth, not by code: 25 (EDR 1x) > 30 (SDR 12x), 50 > 60 */
	assert_true(sm_sa_rate_cmp(15, 4) > 0);
	assert_true(sm_sa_rate_cmp(20, 8) > 0);
	assert_true(sm_sa_rate_cmp(2, 24) < 0);
	assert_int_equal(sm_sa_rate_cmp(7, 7), 0);
	assert_int_equal(sm_sa_rate_prev(16), 10);   /* below 100 (125 signalled): 120 (12x QDR) */
	assert_int_equal(sm_sa_rate_prev(2), 0);
}

/* ---- PathRecord ---- */

static void test_get_pair(void **st)
{
	(void)st;
	struct sm_sa_path_rec r = pr(A, B);
	assert_int_equal(ask(SM_SA_GET, CM_PAIR_GID, &r), 0);
	assert_int_equal(ans.n, 1);
	struct sm_sa_path_rec a = got(0);
	expect(&a, A, B, 1, 4, 16, 18, true, 0);
	/* the same by LIDs */
	r = (struct sm_sa_path_rec){ .slid = 2, .dlid = 5 };
	assert_int_equal(ask(SM_SA_GET, CM_PAIR_LID, &r), 0);
	a = got(0);
	expect(&a, A, B, 2, 5, 16, 18, true, 0);
	/* the slowest link: C is 1x SDR */
	r = pr(A, C);
	assert_int_equal(ask(SM_SA_GET, CM_PAIR_GID, &r), 0);
	a = got(0);
	expect(&a, A, C, 1, 6, 2, 18, true, 0);
	/* a switch at the end: its port 0, LID 21 */
	r = pr(A, 0x200);
	assert_int_equal(ask(SM_SA_GET, CM_PAIR_GID, &r), 0);
	a = got(0);
	expect(&a, A, 0x200, 1, 21, 16, 18, true, 0);
	/* switch to switch, and a switch to itself */
	r = pr(0x100, 0x200);
	assert_int_equal(ask(SM_SA_GET, CM_PAIR_GID, &r), 0);
	a = got(0);
	expect(&a, 0x100, 0x200, 20, 21, 16, 18, true, 0);
	r = pr(0x100, 0x100);
	assert_int_equal(ask(SM_SA_GET, CM_PAIR_GID, &r), 0);
	a = got(0);
	expect(&a, 0x100, 0x100, 20, 20, 2, 0, true, 0);   /* port 0 knows no width: 2.5 Gb/s */
	/* loopback: PacketLifeTime 0 */
	r = pr(B, B);
	assert_int_equal(ask(SM_SA_GET, CM_PAIR_GID, &r), 0);
	a = got(0);
	expect(&a, B, B, 4, 4, 16, 0, true, 0);
	/* the link-local prefix is ours too, and answers carry the subnet prefix */
	r = pr(A, B);
	gid(r.sgid, 0xFE80000000000000ULL, A);
	assert_int_equal(ask(SM_SA_GET, CM_PAIR_GID, &r), 0);
	/* DGID only: the source is the requester (LID 7: D) */
	r = pr(0, B);
	assert_int_equal(ask_from(SM_SA_GET, BIT(SM_PR_CM_DGID), &r, 7), 0);
	a = got(0);
	expect(&a, D, B, 7, 4, 16, 18, true, 0);
	/* DLID only, requester by an LMC LID of A */
	r = (struct sm_sa_path_rec){ .dlid = 6 };
	assert_int_equal(ask_from(SM_SA_GET, BIT(SM_PR_CM_DLID), &r, 2), 0);
	a = got(0);
	expect(&a, A, C, 1, 6, 2, 18, true, 0);
}

static void test_not_carried(void **st)
{
	(void)st;
	/* no LFT entry for LID 12: no path to H, from anyone */
	struct sm_sa_path_rec r = pr(A, H);
	assert_int_equal(ask(SM_SA_GET, CM_PAIR_GID, &r), SM_SA_STATUS_NO_RECORDS);
	assert_int_equal(ask(SM_SA_GET_TABLE, CM_PAIR_GID, &r), 0);
	assert_int_equal(ans.n, 0);
	/* from H: carried, but not back */
	r = pr(H, A);
	assert_int_equal(ask(SM_SA_GET, CM_PAIR_GID, &r), 0);
	struct sm_sa_path_rec a = got(0);
	expect(&a, H, A, 12, 1, 16, 18, false, 0);
	/* ... and refused when Reversible is asked for */
	r.p.reversible = true;
	assert_int_equal(ask(SM_SA_GET, CM_PAIR_GID | BIT(SM_PR_CM_REVERSIBLE), &r), SM_SA_STATUS_NO_RECORDS);
	/* Reversible 0 under the mask is "don't care" */
	r.p.reversible = false;
	assert_int_equal(ask(SM_SA_GET, CM_PAIR_GID | BIT(SM_PR_CM_REVERSIBLE), &r), 0);

	/* LFTs gone wrong: a loop, an unlinked port, a port the switch does not have */
	struct sm_lfts *l = (struct sm_lfts *)snap->lfts;
	uint32_t s1 = sm_fabric_find_node(snap->fabric, 0x100), s2 = sm_fabric_find_node(snap->fabric, 0x200);
	static const uint8_t wrong[][2] = { { 1, 2 }, { 7, SM_LFT_NONE }, { 200, SM_LFT_NONE } };
	for (size_t i = 0; i < sizeof(wrong) / sizeof(wrong[0]); i++) {
		sm_lfts_set(l, s1, 12, wrong[i][0]);
		sm_lfts_set(l, s2, 12, wrong[i][1]);
		r = pr(A, H);
		assert_int_equal(ask(SM_SA_GET, CM_PAIR_GID, &r), SM_SA_STATUS_NO_RECORDS);
		/* the whole plane still answers: 11 x 11 LID pairs less 10 to LID 12 (H's own loopback
		 * stays) and 5 to LID 11 from the LIDs behind S2 (B 2, D, H, S2) */
		assert_int_equal(ask(SM_SA_GET_TABLE, 0, &r), 0);
		assert_int_equal(ans.n, 106);
	}
	sm_lfts_set(l, s1, 12, SM_LFT_NONE);
	sm_lfts_set(l, s2, 12, SM_LFT_NONE);
	/* an LFT delivering LID 12 to the wrong CA */
	sm_lfts_set(l, s1, 12, 4);
	r = pr(A, H);
	assert_int_equal(ask(SM_SA_GET, CM_PAIR_GID, &r), SM_SA_STATUS_NO_RECORDS);
	sm_lfts_set(l, s1, 12, SM_LFT_NONE);
}

static void test_lmc_numbpath(void **st)
{
	(void)st;
	struct sm_sa_path_rec r = pr(A, B), a;
	/* GetTable: every LID pair, equal offsets first */
	assert_int_equal(ask(SM_SA_GET_TABLE, CM_PAIR_GID, &r), 0);
	assert_int_equal(ans.n, 4);
	static const uint16_t want[4][3] = { { 1, 4, 0 }, { 2, 5, 0 }, { 1, 5, 2 }, { 2, 4, 2 } };
	for (int i = 0; i < 4; i++) {
		a = got((size_t)i);
		expect(&a, A, B, want[i][0], want[i][1], 16, 18, true, (uint8_t)want[i][2]);
	}
	/* NumbPath */
	r.p.numb_path = 2;
	assert_int_equal(ask(SM_SA_GET_TABLE, CM_PAIR_GID | BIT(SM_PR_CM_NUMB_PATH), &r), 0);
	assert_int_equal(ans.n, 2);
	r.p.numb_path = 0;
	assert_int_equal(ask(SM_SA_GET_TABLE, CM_PAIR_GID | BIT(SM_PR_CM_NUMB_PATH), &r), 0);
	assert_int_equal(ans.n, 0);
	/* Get is one path whatever NumbPath says (IBA 1.2 erratum) */
	r.p.numb_path = 4;
	assert_int_equal(ask(SM_SA_GET, CM_PAIR_GID | BIT(SM_PR_CM_NUMB_PATH), &r), 0);
	assert_int_equal(ans.n, 1);
	/* a fixed DLID of the range */
	r.dlid = 5;
	assert_int_equal(ask(SM_SA_GET_TABLE, CM_PAIR_GID | BIT(SM_PR_CM_DLID), &r), 0);
	assert_int_equal(ans.n, 2);
	a = got(0);
	expect(&a, A, B, 1, 5, 16, 18, true, 0);
	/* G's LID 11 is carried out but not back */
	r = pr(G, D);
	assert_int_equal(ask(SM_SA_GET_TABLE, CM_PAIR_GID, &r), 0);
	assert_int_equal(ans.n, 2);
	a = got(0);
	expect(&a, G, D, 10, 7, 16, 18, true, 0);
	a = got(1);
	expect(&a, G, D, 11, 7, 16, 18, false, 2);
	r.p.reversible = true;
	assert_int_equal(ask(SM_SA_GET_TABLE, CM_PAIR_GID | BIT(SM_PR_CM_REVERSIBLE), &r), 0);
	assert_int_equal(ans.n, 1);
}

static void test_tables(void **st)
{
	(void)st;
	/* one source, every destination: A,A 4 + B 4 + C 2 + D 2 + G 4 + H 0 + S1 2 + S2 2 */
	struct sm_sa_path_rec r = pr(A, 0);
	assert_int_equal(ask(SM_SA_GET_TABLE, BIT(SM_PR_CM_SGID), &r), 0);
	assert_int_equal(ans.n, 20);
	for (size_t i = 0; i < ans.n; i++) {
		struct sm_sa_path_rec a = got(i);
		assert_int_equal(guid_of(a.sgid), A);
		assert_true(a.slid == 1 || a.slid == 2);
		assert_true(a.dlid != 12);
	}
	/* every destination, by SLID */
	r = (struct sm_sa_path_rec){ .slid = 6 };
	assert_int_equal(ask(SM_SA_GET_TABLE, BIT(SM_PR_CM_SLID), &r), 0);
	assert_int_equal(ans.n, 10);      /* C to A 2, B 2, C 1, D 1, G 2, S1 1, S2 1 */
	/* every source to one destination */
	r = pr(0, D);
	assert_int_equal(ask(SM_SA_GET_TABLE, BIT(SM_PR_CM_DGID), &r), 0);
	assert_int_equal(ans.n, 11);      /* A 2, B 2, C 1, D 1, G 2, H 1, S1 1, S2 1 */
}

/* One selector case: (selector, value) asked, the status, and the value answered. */
struct sel_case {
	uint8_t sel, v;
	uint16_t status;
	uint8_t out;
};
enum { SEL_MTU, SEL_RATE, SEL_PLT };

static void sel_cases(int which, const struct sel_case *c, size_t n)
{
	static const unsigned bit[] = { SM_PR_CM_MTU_SEL, SM_PR_CM_RATE_SEL, SM_PR_CM_PLT_SEL };
	uint64_t mask = CM_PAIR_GID | BIT(bit[which]) | BIT(bit[which] + 1);

	for (size_t i = 0; i < n; i++) {
		struct sm_sa_path_rec r = pr(A, B);
		uint8_t *sel = which == SEL_MTU ? &r.p.mtu_sel : which == SEL_RATE ? &r.p.rate_sel : &r.p.plt_sel;
		uint8_t *v = which == SEL_MTU ? &r.p.mtu : which == SEL_RATE ? &r.p.rate : &r.p.plt;
		*sel = c[i].sel, *v = c[i].v;
		assert_int_equal(ask(SM_SA_GET, mask, &r), c[i].status);
		if (c[i].status)
			continue;
		struct sm_sa_path_rec a = got(0);
		assert_int_equal(which == SEL_MTU ? a.p.mtu : which == SEL_RATE ? a.p.rate : a.p.plt, c[i].out);
	}
}

static void test_selectors(void **st)
{
	(void)st;
	struct sm_sa_path_rec r = pr(A, B), a;
	static const struct sel_case mtu[] = {
		{ 0, 5, SM_SA_STATUS_NO_RECORDS, 0 }, { 0, 4, 0, 5 }, { 1, 5, 0, 4 }, { 1, 1, SM_SA_STATUS_NO_RECORDS, 0 },
		{ 2, 3, 0, 3 }, { 2, 5, 0, 5 }, { 3, 1, 0, 5 },
	};
	sel_cases(SEL_MTU, mtu, sizeof(mtu) / sizeof(mtu[0]));
	/* the selector alone, or the value alone, is ignored */
	r.p.mtu_sel = 0, r.p.mtu = 5;
	assert_int_equal(ask(SM_SA_GET, CM_PAIR_GID | BIT(SM_PR_CM_MTU), &r), 0);
	assert_int_equal(ask(SM_SA_GET, CM_PAIR_GID | BIT(SM_PR_CM_MTU_SEL), &r), 0);
	r.p.mtu = 0;
	static const struct sel_case rate[] = {
		{ 0, 16, SM_SA_STATUS_NO_RECORDS, 0 }, { 0, 4, 0, 16 }, /* 100 > 30 */
		{ 1, 16, 0, 10 }, { 1, 2, SM_SA_STATUS_NO_RECORDS, 0 }, { 1, 21, 0, 16 },
		{ 2, 16, 0, 16 }, { 2, 7, SM_SA_STATUS_NO_RECORDS, 0 }, { 3, 2, 0, 16 },
	};
	sel_cases(SEL_RATE, rate, sizeof(rate) / sizeof(rate[0]));
	static const struct sel_case plt[] = {
		{ 0, 18, SM_SA_STATUS_NO_RECORDS, 0 }, { 0, 17, 0, 18 }, { 1, 18, 0, 17 },
		{ 1, 1, SM_SA_STATUS_NO_RECORDS, 0 }, { 2, 10, 0, 10 }, { 2, 19, SM_SA_STATUS_NO_RECORDS, 0 },
		{ 3, 0, 0, 18 },
	};
	sel_cases(SEL_PLT, plt, sizeof(plt) / sizeof(plt[0]));
	/* SL and P_Key: as asked; a P_Key of another partition is no path */
	r.p.sl = 3, r.p.pkey = 0x7FFF;
	assert_int_equal(ask(SM_SA_GET, CM_PAIR_GID | BIT(SM_PR_CM_SL) | BIT(SM_PR_CM_PKEY), &r), 0);
	a = got(0);
	assert_int_equal(a.p.sl, 3);
	assert_int_equal(a.p.pkey, 0x7FFF);
	r.p.pkey = 0x8001;
	assert_int_equal(ask(SM_SA_GET, CM_PAIR_GID | BIT(SM_PR_CM_PKEY), &r), SM_SA_STATUS_NO_RECORDS);
	/* raw traffic: no P_Key */
	r.p.raw = true;
	assert_int_equal(ask(SM_SA_GET, CM_PAIR_GID | BIT(SM_PR_CM_RAW) | BIT(SM_PR_CM_PKEY), &r), 0);
	assert_int_equal(got(0).p.pkey, 0);
	/* the rdma_cm query: SGID, DGID, P_Key, NumbPath 1, Reversible 1, ServiceID, TClass */
	r = pr(A, B);
	r.p.pkey = 0xFFFF, r.p.numb_path = 1, r.p.reversible = true, r.service_id = 0x0000000001060000ULL | 4791;
	r.p.tclass = 0x20;
	assert_int_equal(ask(SM_SA_GET, CM_PAIR_GID | BIT(SM_PR_CM_PKEY) | BIT(SM_PR_CM_NUMB_PATH) |
					 BIT(SM_PR_CM_REVERSIBLE) | BIT(SM_PR_CM_SERVICE_ID_MSB) |
					 BIT(SM_PR_CM_SERVICE_ID_LSB) | BIT(SM_PR_CM_TCLASS), &r), 0);
	a = got(0);
	expect(&a, A, B, 1, 4, 16, 18, true, 0);
	assert_int_equal(a.p.tclass, 0);
	assert_int_equal(a.service_id, 0);
}

static void test_errors(void **st)
{
	(void)st;
	struct sm_sa_path_rec r = pr(A, B);
	/* a selector pair with an MTU or rate that does not exist */
	r.p.mtu_sel = 2, r.p.mtu = 6;
	assert_int_equal(ask(SM_SA_GET, CM_PAIR_GID | BIT(SM_PR_CM_MTU_SEL) | BIT(SM_PR_CM_MTU), &r),
			 SM_SA_STATUS_REQ_INVALID);
	r.p.mtu = 0;
	assert_int_equal(ask(SM_SA_GET, CM_PAIR_GID | BIT(SM_PR_CM_MTU_SEL) | BIT(SM_PR_CM_MTU), &r),
			 SM_SA_STATUS_REQ_INVALID);
	r.p.rate_sel = 2, r.p.rate = 1;
	assert_int_equal(ask(SM_SA_GET, CM_PAIR_GID | BIT(SM_PR_CM_RATE_SEL) | BIT(SM_PR_CM_RATE), &r),
			 SM_SA_STATUS_REQ_INVALID);
	r.p.rate = 25;
	assert_int_equal(ask(SM_SA_GET, CM_PAIR_GID | BIT(SM_PR_CM_RATE_SEL) | BIT(SM_PR_CM_RATE), &r),
			 SM_SA_STATUS_REQ_INVALID);
	/* half a ServiceID */
	r = pr(A, B);
	assert_int_equal(ask(SM_SA_GET, CM_PAIR_GID | BIT(SM_PR_CM_SERVICE_ID_LSB), &r),
			 SM_SA_STATUS_INSUFFICIENT_COMPONENTS);
	/* GIDs of another subnet, of nobody, a multicast SGID */
	gid(r.sgid, 0xFEC0000000000001ULL, A);
	assert_int_equal(ask(SM_SA_GET, CM_PAIR_GID, &r), SM_SA_STATUS_INVALID_GID);
	assert_int_equal(ask(SM_SA_GET_TABLE, CM_PAIR_GID, &r), SM_SA_STATUS_INVALID_GID);
	r = pr(A, 0x12345);
	assert_int_equal(ask(SM_SA_GET, CM_PAIR_GID, &r), SM_SA_STATUS_INVALID_GID);
	r = pr(A, B);
	gid(r.dgid, 0x2000000000000000ULL, B);
	assert_int_equal(ask(SM_SA_GET, CM_PAIR_GID, &r), SM_SA_STATUS_INVALID_GID);
	r = pr(A, B);
	r.sgid[0] = 0xFF;
	assert_int_equal(ask(SM_SA_GET, CM_PAIR_GID, &r), SM_SA_STATUS_INVALID_GID);
	/* a multicast DGID: no group here */
	r = pr(A, B);
	r.dgid[0] = 0xFF, r.dgid[1] = 0x12;
	assert_int_equal(ask(SM_SA_GET, CM_PAIR_GID, &r), SM_SA_STATUS_NO_RECORDS);
	/* LIDs nobody holds, out of the unicast range, 0 */
	static const uint16_t bad[] = { 0, 3, 13, 0xBFFF, 0xC000, 0xC001, 0xFFFF };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = (struct sm_sa_path_rec){ .slid = bad[i], .dlid = 4 };
		assert_int_equal(ask(SM_SA_GET, CM_PAIR_LID, &r), SM_SA_STATUS_NO_RECORDS);
		assert_int_equal(ask(SM_SA_GET_TABLE, CM_PAIR_LID, &r), 0);
		assert_int_equal(ans.n, 0);
		r = (struct sm_sa_path_rec){ .slid = 1, .dlid = bad[i] };
		assert_int_equal(ask(SM_SA_GET, CM_PAIR_LID, &r), SM_SA_STATUS_NO_RECORDS);
	}
	/* SGID and SLID of different ports */
	r = pr(A, B);
	r.slid = 4;
	assert_int_equal(ask(SM_SA_GET, CM_PAIR_GID | BIT(SM_PR_CM_SLID), &r), SM_SA_STATUS_REQ_INVALID);
	r.slid = 2;           /* A's second LID: the same port */
	assert_int_equal(ask(SM_SA_GET, CM_PAIR_GID | BIT(SM_PR_CM_SLID), &r), 0);
	assert_int_equal(got(0).slid, 2);
	r = pr(A, B);
	r.dlid = 6;
	assert_int_equal(ask(SM_SA_GET, CM_PAIR_GID | BIT(SM_PR_CM_DLID), &r), SM_SA_STATUS_REQ_INVALID);
	/* mask bits past the record are ignored */
	r = pr(A, B);
	assert_int_equal(ask(SM_SA_GET, CM_PAIR_GID | ~((1ULL << 23) - 1), &r), 0);
	struct sm_sa_path_rec a = got(0);
	expect(&a, A, B, 1, 4, 16, 18, true, 0);
	/* truncated: less than a record */
	uint8_t buf[SM_SA_PATH_REC_SIZE] = { 0 };
	sm_sa_path_rec_encode(&r, buf);
	struct sm_sa_req req = { .data = buf, .len = SM_SA_PATH_REC_SIZE - 1 };
	req.hdr.method = SM_SA_GET, req.hdr.comp_mask = CM_PAIR_GID, req.hdr.class_version = 2;
	req.hdr.attr_id = SM_SA_ATTR_PATH_RECORD;
	sm_sa_ans_reset(&ans);
	assert_int_equal(sm_sa_h_path(&ctx, &req, &ans), 0);
	assert_int_equal(ans.status, SM_SA_STATUS_REQ_INVALID);
	req.data = NULL;
	sm_sa_ans_reset(&ans);
	assert_int_equal(sm_sa_h_path(&ctx, &req, &ans), 0);
	assert_int_equal(ans.status, SM_SA_STATUS_REQ_INVALID);
	req.data = buf;
	assert_int_equal(sm_sa_query(&ctx, &req, &ans), 0);
	assert_int_equal(ans.status, SM_SA_STATUS_REQ_INVALID);
	/* no snapshot yet */
	struct sm_sa_ctx none = { .self = &self };
	req.len = sizeof(buf);
	sm_sa_ans_reset(&ans);
	assert_int_equal(sm_sa_h_path(&none, &req, &ans), 0);
	assert_int_equal(ans.status, SM_SA_STATUS_BUSY);
	assert_int_equal(sm_sa_query(&none, &req, &ans), 0);
	assert_int_equal(ans.status, SM_SA_STATUS_BUSY);
	/* methods PathRecord does not take, and GetMulti for a MultiPathRecord only */
	static const uint8_t bad_methods[] = { SM_SA_SET, SM_SA_DELETE, SM_SA_GET_MULTI };
	for (size_t i = 0; i < sizeof(bad_methods); i++) {
		req.hdr.method = bad_methods[i], req.hdr.attr_id = SM_SA_ATTR_PATH_RECORD;
		assert_int_equal(sm_sa_query(&ctx, &req, &ans), 0);
		assert_int_equal(ans.status, SM_SA_STATUS_METHOD_ATTR_UNSUPP);
		req.hdr.method = i ? SM_SA_GET_TABLE : SM_SA_GET, req.hdr.attr_id = SM_SA_ATTR_MULTIPATH_RECORD;
		assert_int_equal(sm_sa_query(&ctx, &req, &ans), 0);
		assert_int_equal(ans.status, SM_SA_STATUS_METHOD_ATTR_UNSUPP);
	}
}

/* ---- MultiPathRecord ---- */

#define MPR_CM (BIT(SM_MPR_CM_SGID_COUNT) | BIT(SM_MPR_CM_DGID_COUNT))

/* GetMulti with ns source and nd destination port GUIDs (prefix ours), data `len` bytes (0: exact). */
static uint16_t ask_mpr(uint64_t mask, struct sm_sa_mpath_rec *m, const uint64_t *guids, unsigned ns, unsigned nd,
			size_t len)
{
	size_t need = SM_SA_MPATH_REC_SIZE + 16 * (size_t)(ns + nd);
	uint8_t *buf = calloc(1, need > SM_SA_DATA_SIZE ? need : SM_SA_DATA_SIZE);
	assert_non_null(buf);
	m->sgid_count = (uint8_t)ns, m->dgid_count = (uint8_t)nd;
	sm_sa_mpath_rec_encode(m, buf);
	for (unsigned i = 0; i < ns + nd; i++)
		gid(buf + SM_SA_MPATH_REC_SIZE + 16 * i, PREFIX, guids[i]);
	struct sm_sa_req req = { .data = buf, .len = len ? len : need < SM_SA_DATA_SIZE ? SM_SA_DATA_SIZE : need };
	req.hdr.method = SM_SA_GET_MULTI, req.hdr.comp_mask = mask, req.hdr.class_version = 2;
	req.hdr.attr_id = SM_SA_ATTR_MULTIPATH_RECORD, req.from.lid = 1;
	assert_int_equal(sm_sa_query(&ctx, &req, &ans), 0);
	free(buf);
	return ans.status;
}

static void test_multipath(void **st)
{
	(void)st;
	struct sm_sa_mpath_rec m = { 0 };
	struct sm_sa_path_rec a;
	uint64_t ab[] = { A, B };
	assert_int_equal(ask_mpr(MPR_CM, &m, ab, 1, 1, 0), 0);
	assert_int_equal(ans.n, 4);
	a = got(0);
	expect(&a, A, B, 1, 4, 16, 18, true, 0);
	a = got(3);
	expect(&a, A, B, 2, 4, 16, 18, true, 2);
	m.p.numb_path = 3;
	assert_int_equal(ask_mpr(MPR_CM | BIT(SM_MPR_CM_NUMB_PATH), &m, ab, 1, 1, 0), 0);
	assert_int_equal(ans.n, 3);
	/* NumbPath counts over every pair: A-B 4, A-D 2, C-B 2, C-D 1 */
	uint64_t acbd[] = { A, C, B, D };
	m.p.numb_path = 0;
	assert_int_equal(ask_mpr(MPR_CM, &m, acbd, 2, 2, 0), 0);
	assert_int_equal(ans.n, 9);
	m.p.numb_path = 5;
	assert_int_equal(ask_mpr(MPR_CM | BIT(SM_MPR_CM_NUMB_PATH), &m, acbd, 2, 2, 0), 0);
	assert_int_equal(ans.n, 5);
	/* selectors as in PathRecord */
	m.p.numb_path = 0, m.p.mtu_sel = 1, m.p.mtu = 4;
	assert_int_equal(ask_mpr(MPR_CM | BIT(SM_MPR_CM_MTU_SEL) | BIT(SM_MPR_CM_MTU), &m, ab, 1, 1, 0), 0);
	assert_int_equal(got(0).p.mtu, 3);
	m.p.mtu_sel = 0, m.p.mtu = 0;

	/* APM: sources G < A and destinations B < D by GUID, LID offset (4>>1<<4 | 10>>1) % 103 = 37 */
	uint64_t apm[] = { A, G, D, B };
	m.p.numb_path = 2;
	assert_int_equal(ask_mpr(MPR_CM | BIT(SM_MPR_CM_NUMB_PATH), &m, apm, 2, 2, 0), 0);
	assert_int_equal(ans.n, 2);
	a = got(0);
	expect(&a, G, B, 11, 5, 16, 18, false, 0);
	a = got(1);
	expect(&a, A, D, 1, 7, 16, 18, true, 0);
	/* reversible asked: G's LID 11 cannot be, the next offset is taken */
	m.p.reversible = true;
	assert_int_equal(ask_mpr(MPR_CM | BIT(SM_MPR_CM_NUMB_PATH) | BIT(SM_MPR_CM_REVERSIBLE), &m, apm, 2, 2, 0), 0);
	assert_int_equal(ans.n, 2);
	a = got(0);
	expect(&a, G, B, 10, 4, 16, 18, true, 0);
	m.p.reversible = false;

	/* a request longer than one MAD (reassembled): 1 source, 19 destinations */
	uint64_t many[20] = { A };
	static const uint64_t cyc[6] = { B, C, D, G, 0x100, 0x200 };   /* 4 + 2 + 2 + 4 + 2 + 2 paths */
	for (int i = 1; i < 20; i++)
		many[i] = cyc[(i - 1) % 6];
	m.p.numb_path = 127;
	assert_int_equal(ask_mpr(MPR_CM | BIT(SM_MPR_CM_NUMB_PATH), &m, many, 1, 19, 0), 0);
	assert_int_equal(ans.n, 3 * 16 + 4);

	/* errors */
	m.p.numb_path = 0;
	assert_int_equal(ask_mpr(BIT(SM_MPR_CM_SGID_COUNT), &m, ab, 1, 1, 0), SM_SA_STATUS_INSUFFICIENT_COMPONENTS);
	assert_int_equal(ask_mpr(MPR_CM | BIT(SM_MPR_CM_SERVICE_ID_MSB), &m, ab, 1, 1, 0),
			 SM_SA_STATUS_INSUFFICIENT_COMPONENTS);
	assert_int_equal(ask_mpr(MPR_CM, &m, ab, 0, 2, 0), SM_SA_STATUS_REQ_INVALID);
	assert_int_equal(ask_mpr(MPR_CM, &m, ab, 2, 0, 0), SM_SA_STATUS_REQ_INVALID);
	/* counts past the data: 19 GIDs said, one MAD carries 11 */
	assert_int_equal(ask_mpr(MPR_CM, &m, many, 1, 19, SM_SA_DATA_SIZE), SM_SA_STATUS_REQ_INVALID);
	assert_int_equal(ask_mpr(MPR_CM, &m, ab, 1, 1, SM_SA_MPATH_REC_SIZE + 16), SM_SA_STATUS_REQ_INVALID);
	assert_int_equal(ask_mpr(MPR_CM, &m, ab, 1, 1, SM_SA_MPATH_REC_SIZE - 1), SM_SA_STATUS_REQ_INVALID);
	uint64_t unknown[] = { A, 0x9999 };
	assert_int_equal(ask_mpr(MPR_CM, &m, unknown, 1, 1, 0), SM_SA_STATUS_INVALID_GID);
	m.p.rate_sel = 2, m.p.rate = 0;
	assert_int_equal(ask_mpr(MPR_CM | BIT(SM_MPR_CM_RATE_SEL) | BIT(SM_MPR_CM_RATE), &m, ab, 1, 1, 0),
			 SM_SA_STATUS_REQ_INVALID);
}

/* ---- with the PortInfo the sweep read ---- */

#define CAP_EXT 0x4000u
#define CAP_CM2 0x8000u



static uint16_t rate_ab(void)
{
	struct sm_sa_path_rec r = pr(A, B);
	assert_int_equal(ask(SM_SA_GET, CM_PAIR_GID, &r), 0);
	return got(0).p.rate;
}

static void test_portinfo(void **st)
{
	(void)st;
	struct sm_snapshot *sn = snap;
	const struct sm_fabric *f = sn->fabric;
	uint32_t n = f->n_ports;
	struct sm_port_info *pi_all = calloc(n, sizeof(*pi_all));
	uint8_t *ok = calloc(n, 1);
	assert_true(pi_all && ok);
	for (uint32_t i = 0; i < n; i++) {
		const struct sm_port *pt = &f->ports[i];
		bool ext = pt->flags & SM_PORT_F_EXT_SPEED;
		pi_all[i].link_width_active = pt->width ? pt->width : 2;
		pi_all[i].link_speed_active = ext || !pt->speed ? 1 : pt->speed;
		pi_all[i].link_speed_ext_active = ext ? pt->speed : pt->speed ? 0 : 2;   /* switch port 0: 4x EDR */
		pi_all[i].cap_mask = ext || !pt->speed ? CAP_EXT : 0;
		pi_all[i].mtu_cap = 5;
		ok[i] = 1;
	}
	sn->pi = pi_all, sn->pi_ok = ok, sn->attr_ports = n;
	uint32_t a = sm_fabric_find_port(f, A), b = sm_fabric_find_port(f, B);
	uint32_t s1 = sm_fabric_find_node(f, 0x100), s2 = sm_fabric_find_node(f, 0x200);
	uint32_t s1p0 = sm_port_index(f, s1, 0), s2p3 = sm_port_index(f, s2, 3);

	assert_int_equal(rate_ab(), 16);
	/* MTU: the smallest MTUCap on the path */
	pi_all[s2p3].mtu_cap = 3;
	struct sm_sa_path_rec r = pr(A, B);
	assert_int_equal(ask(SM_SA_GET, CM_PAIR_GID, &r), 0);
	assert_int_equal(got(0).p.mtu, 3);
	r = pr(A, C);
	assert_int_equal(ask(SM_SA_GET, CM_PAIR_GID, &r), 0);
	assert_int_equal(got(0).p.mtu, 5);
	r = pr(A, B);
	r.p.mtu_sel = 2, r.p.mtu = 4;      /* exactly 2048: more than the path carries */
	assert_int_equal(ask(SM_SA_GET, CM_PAIR_GID | BIT(SM_PR_CM_MTU_SEL) | BIT(SM_PR_CM_MTU), &r),
			 SM_SA_STATUS_NO_RECORDS);
	pi_all[s2p3].mtu_cap = 5;
	/* NeighborMTU below MTUCap on a link: the link's (smd does not set NeighborMTU) */
	pi_all[s2p3].neighbor_mtu = 2;
	r = pr(A, B);
	assert_int_equal(ask(SM_SA_GET, CM_PAIR_GID, &r), 0);
	assert_int_equal(got(0).p.mtu, 2);
	pi_all[s2p3].neighbor_mtu = 0;
	/* LinkSpeedExtActive only under HasExtendedSpeeds: A's own, S1's external ports' from its port 0 */
	pi_all[a].cap_mask = 0;
	assert_int_equal(rate_ab(), 3);       /* 4x SDR */
	pi_all[a].cap_mask = CAP_EXT;
	pi_all[s1p0].cap_mask = 0;
	assert_int_equal(rate_ab(), 3);
	pi_all[s1p0].cap_mask = CAP_EXT;
	/* 4x NDR everywhere: 400 Gb/s only for ends that say NDR in CapabilityMask2 */
	for (uint32_t i = 0; i < n; i++)
		pi_all[i].link_speed_ext_active = 8, pi_all[i].link_speed_active = 1;
	pi_all[a].link_speed_ext_active = 8;
	assert_int_equal(rate_ab(), 18);      /* no CapabilityMask2: 300 */
	pi_all[a].cap_mask = CAP_EXT | CAP_CM2, pi_all[a].cap_mask2 = 0x0400;
	assert_int_equal(rate_ab(), 18);      /* B, the other end of a reversible path, does not */
	pi_all[b].cap_mask = CAP_EXT | CAP_CM2, pi_all[b].cap_mask2 = 0x0400;
	assert_int_equal(rate_ab(), 21);
	/* a port without PortInfo: the fabric model (4x EDR) */
	ok[a] = 0;
	assert_int_equal(rate_ab(), 16);

	sn->pi = NULL, sn->pi_ok = NULL, sn->attr_ports = 0;
	free(pi_all);
	free(ok);
}

/* ---- a multicast DGID: the group's record ---- */

static void add_member(struct sm_sa_dyn *dy, const uint8_t mgid[16], uint64_t port_guid, uint16_t mlid)
{
	uint8_t m[SM_SA_MCMEMBER_REC_SIZE] = { 0 };
	memcpy(m, mgid, 16);
	gid(m + 16, PREFIX, port_guid);
	m[36] = (uint8_t)(mlid >> 8), m[37] = (uint8_t)mlid;
	m[38] = 2 << 6 | 4;                /* MTU 2048 */
	m[39] = 0x10;                      /* TClass */
	m[40] = 0xFF, m[41] = 0xFF;        /* P_Key */
	m[42] = 2 << 6 | 3;                /* 10 Gb/s */
	m[43] = 2 << 6 | 18;
	m[44] = 0x30, m[45] = 0x12, m[46] = 0x34, m[47] = 0x01;   /* SL 3, FlowLabel 0x01234, HopLimit 1 */
	m[48] = 0x21;                      /* scope 2, full member */
	assert_int_equal(sm_sa_dyn_group_add(dy, m), 0);
}

static void test_multicast(void **st)
{
	(void)st;
	struct sm_sa_dyn *dy = NULL;
	assert_int_equal(sm_sa_dyn_new(NULL, &dy), 0);
	static const uint8_t bcast[16] = { 0xFF, 0x12, 0x40, 0x1B, 0xFF, 0xFF, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF };
	uint8_t global[16];
	memcpy(global, bcast, 16);
	global[1] = 0x1E;
	add_member(dy, bcast, A, 0xC001);
	add_member(dy, bcast, B, 0xC001);
	add_member(dy, global, A, 0xC002);
	struct sm_sa_path_rec r = { 0 }, a;
	memcpy(r.dgid, bcast, 16);
	const uint64_t DG = BIT(SM_PR_CM_DGID);
	/* no group table: no record */
	assert_int_equal(ask(SM_SA_GET, DG, &r), SM_SA_STATUS_NO_RECORDS);
	ctx.dyn = dy;
	assert_int_equal(ask(SM_SA_GET, DG, &r), 0);
	a = got(0);
	assert_memory_equal(a.dgid, bcast, 16);
	assert_int_equal(a.dlid, 0xC001);
	assert_true(a.p.mtu_sel == 2 && a.p.mtu == 4 && a.p.rate_sel == 2 && a.p.rate == 3 && a.p.plt == 18);
	assert_true(a.p.pkey == 0xFFFF && a.p.sl == 3 && a.p.tclass == 0x10 && a.p.numb_path == 1);
	assert_true(a.p.flow_label == 0x01234 && a.p.hop_limit == 1 && !a.p.reversible);
	/* the request agrees with the group or gets nothing */
	r = pr(A, 0);
	memcpy(r.dgid, bcast, 16);
	assert_int_equal(ask(SM_SA_GET, DG | BIT(SM_PR_CM_SGID), &r), 0);
	assert_int_equal(guid_of(got(0).sgid), A);
	r = pr(C, 0);
	memcpy(r.dgid, bcast, 16);
	assert_int_equal(ask(SM_SA_GET, DG | BIT(SM_PR_CM_SGID), &r), SM_SA_STATUS_NO_RECORDS);
	r.slid = 4;                    /* B's: a member */
	assert_int_equal(ask(SM_SA_GET, DG | BIT(SM_PR_CM_SLID), &r), 0);
	r.slid = 6;
	assert_int_equal(ask(SM_SA_GET, DG | BIT(SM_PR_CM_SLID), &r), SM_SA_STATUS_NO_RECORDS);
	r.dlid = 0xC002;
	assert_int_equal(ask(SM_SA_GET, DG | BIT(SM_PR_CM_DLID), &r), SM_SA_STATUS_NO_RECORDS);
	r.p.pkey = 0x7FFF;
	assert_int_equal(ask(SM_SA_GET, DG | BIT(SM_PR_CM_PKEY), &r), SM_SA_STATUS_NO_RECORDS);
	r.p.sl = 3, r.p.tclass = 0x10;
	assert_int_equal(ask(SM_SA_GET, DG | BIT(SM_PR_CM_SL) | BIT(SM_PR_CM_TCLASS), &r), 0);
	r.p.numb_path = 0;
	assert_int_equal(ask(SM_SA_GET_TABLE, DG | BIT(SM_PR_CM_NUMB_PATH), &r), 0);
	assert_int_equal(ans.n, 0);
	/* outside link-local scope: HopLimit 255 */
	memcpy(r.dgid, global, 16);
	assert_int_equal(ask(SM_SA_GET_TABLE, DG, &r), 0);
	assert_int_equal(ans.n, 1);
	assert_int_equal(got(0).p.hop_limit, 0xFF);
	assert_int_equal(got(0).dlid, 0xC002);
	/* a group nobody created */
	r.dgid[15] = 0x42;
	assert_int_equal(ask(SM_SA_GET, DG, &r), SM_SA_STATUS_NO_RECORDS);
	ctx.dyn = NULL;
	sm_sa_dyn_free(dy);
}

/* ---- from a bring-up on the mock: what the SM really programmed ---- */

static void keep_snap(void *arg, const struct sm_snapshot *sn)
{
	const struct sm_snapshot **out = arg;
	sm_snapshot_unref(*out);
	*out = sm_snapshot_ref(sn);
}

static void test_mock_bringup(void **st)
{
	(void)st;
	struct fx_env env;
	struct sm_cfg cfg;
	struct sm_summary sum;
	const struct sm_snapshot *sn = NULL;

	fx_env_init(&env, fx_gen_tree(16, 8), NULL, NULL, "sapath");
	fx_cfg(&env, &cfg);
	cfg.lmc = 1;
	cfg.published = keep_snap, cfg.published_arg = &sn;
	sm_fabric_free(fx_bringup(&env, NULL, &cfg, &sum));
	assert_non_null(sn);
	assert_true(sn->up && sn->lfts && sn->pi);
	struct sm_sa_ctx c = { .snap = sn, .self = &self };
	struct sm_sa_ctx saved = ctx;
	ctx = c;
	/* every LID pair of the plane is a path, both ways: 16 hosts x 2 LIDs + 8 switches */
	struct sm_sa_path_rec r = { 0 };
	assert_int_equal(ask(SM_SA_GET_TABLE, 0, &r), 0);
	assert_int_equal(ans.n, 40 * 40);
	for (size_t i = 0; i < ans.n; i++) {
		struct sm_sa_path_rec a = got(i);
		assert_true(a.p.reversible);
		assert_int_equal(a.p.mtu, 5);            /* the mock's MTUCap: 4096 */
		/* the mock reports LinkSpeedExtActive without HasExtendedSpeeds in its
		 * CapabilityMask: read as OpenSM reads it, 4x SDR */
		assert_int_equal(a.p.rate, 3);
		assert_int_equal(a.p.plt, a.slid == a.dlid || guid_of(a.sgid) == guid_of(a.dgid) ? 0 : 18);
		assert_int_equal(lid_owner(sn, a.slid), guid_of(a.sgid));
		assert_int_equal(lid_owner(sn, a.dlid), guid_of(a.dgid));
	}
	/* the server's per-snapshot rate/MTU table gives the same records, byte for byte */
	size_t bytes = ans.n * ans.rec_size;
	uint8_t *plain = malloc(bytes);
	assert_non_null(plain);
	memcpy(plain, ans.buf, bytes);
	uint16_t *rm = sm_sa_port_rm_build(sn);
	assert_non_null(rm);
	ctx.port_rm = rm;
	assert_int_equal(ask(SM_SA_GET_TABLE, 0, &r), 0);
	assert_int_equal(ans.n * ans.rec_size, bytes);
	assert_memory_equal(ans.buf, plain, bytes);
	ctx.port_rm = NULL;
	free(rm);
	free(plain);
	/* rdma_cm's Get between two hosts on different leaves */
	r = pr(sm_gen_ca_port_guid(0, 0), sm_gen_ca_port_guid(0, 15));
	assert_int_equal(ask(SM_SA_GET, CM_PAIR_GID, &r), 0);
	struct sm_sa_path_rec a = got(0);
	const struct sm_fabric *f = sn->fabric;
	assert_int_equal(a.slid, f->ports[sm_fabric_find_port(f, sm_gen_ca_port_guid(0, 0))].lid);
	assert_int_equal(a.dlid, f->ports[sm_fabric_find_port(f, sm_gen_ca_port_guid(0, 15))].lid);
	ctx = saved;
	sm_snapshot_unref(sn);
	fx_env_free(&env);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wire_golden),
		cmocka_unit_test(test_rates),
		cmocka_unit_test(test_get_pair),
		cmocka_unit_test(test_not_carried),
		cmocka_unit_test(test_lmc_numbpath),
		cmocka_unit_test(test_tables),
		cmocka_unit_test(test_selectors),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_multipath),
		cmocka_unit_test(test_portinfo),
		cmocka_unit_test(test_mock_bringup),
		cmocka_unit_test(test_multicast),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

