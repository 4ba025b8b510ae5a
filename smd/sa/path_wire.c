/* SPDX-License-Identifier: MIT */
/*
 * DOC: PathRecord and MultiPathRecord wire layouts (path.h), rate and MTU codes
 *
 * PathRecord (64 bytes): ServiceID 0, DGID 8, SGID 24, DLID 40, SLID 42,
 * RawTraffic|FlowLabel|HopLimit 44 (1 + 3 reserved + 20 + 8 bits), TClass
 * 48, Reversible|NumbPath 49, P_Key 50, QoSClass|SL 52 (12 + 4 bits),
 * MTUSelector|MTU 54, RateSelector|Rate 55, PacketLifeTimeSelector|
 * PacketLifeTime 56 (2 + 6 bits each), Preference 57, reserved 58..63.
 *
 * MultiPathRecord (24 bytes + GIDs): RawTraffic|FlowLabel|HopLimit 0,
 * TClass 4, Reversible|NumbPath 5, P_Key 6, QoSClass|SL 8, MTU 10, Rate 11,
 * PacketLifeTime 12, ServiceID[63:56] 13, IndependenceSelector 14 (2 bits,
 * high), SGIDCount 15, DGIDCount 16, ServiceID[55:0] 17..23, then
 * SGIDCount + DGIDCount GIDs from 24.
 *
 * Offsets checked against OpenSM's ib_path_rec_t and ib_multipath_rec_t
 * (include/iba/ib_types.h) and pinned by golden bytes in tests/test_sa_path.c.
 */
#include "sa/path.h"
#include "sa/path_priv.h"

#include "model/fabric.h"

#include <string.h>

/* The shared block (path.h, struct sm_sa_path_parms): 13 bytes from b. */
static void parms_get(const uint8_t *b, struct sm_sa_path_parms *p)
{
	uint32_t v = sm_sa_get32(b);
	p->raw = v >> 31;
	p->flow_label = v >> 8 & 0xFFFFF;
	p->hop_limit = (uint8_t)v;
	p->tclass = b[4];
	p->reversible = b[5] >> 7;
	p->numb_path = b[5] & 0x7F;
	p->pkey = sm_sa_get16(b + 6);
	p->qos_class = sm_sa_get16(b + 8) >> 4;
	p->sl = b[9] & 0xF;
	p->mtu_sel = b[10] >> 6, p->mtu = b[10] & 0x3F;
	p->rate_sel = b[11] >> 6, p->rate = b[11] & 0x3F;
	p->plt_sel = b[12] >> 6, p->plt = b[12] & 0x3F;
}

static void parms_put(const struct sm_sa_path_parms *p, uint8_t *b)
{
	sm_sa_put32(b, (p->raw ? 1u << 31 : 0) | (p->flow_label & 0xFFFFF) << 8 | p->hop_limit);
	b[4] = p->tclass;
	b[5] = (uint8_t)((p->reversible ? 0x80 : 0) | (p->numb_path & 0x7F));
	sm_sa_put16(b + 6, p->pkey);
	sm_sa_put16(b + 8, (uint16_t)((p->qos_class & 0xFFF) << 4 | (p->sl & 0xF)));
	b[10] = (uint8_t)((p->mtu_sel & 3) << 6 | (p->mtu & 0x3F));
	b[11] = (uint8_t)((p->rate_sel & 3) << 6 | (p->rate & 0x3F));
	b[12] = (uint8_t)((p->plt_sel & 3) << 6 | (p->plt & 0x3F));
}

void sm_sa_path_rec_decode(const uint8_t rec[SM_SA_PATH_REC_SIZE], struct sm_sa_path_rec *r)
{
	r->service_id = sm_sa_get64(rec);
	memcpy(r->dgid, rec + 8, 16);
	memcpy(r->sgid, rec + 24, 16);
	r->dlid = sm_sa_get16(rec + 40);
	r->slid = sm_sa_get16(rec + 42);
	parms_get(rec + 44, &r->p);
	r->preference = rec[57];
}

void sm_sa_path_rec_encode(const struct sm_sa_path_rec *r, uint8_t rec[SM_SA_PATH_REC_SIZE])
{
	sm_sa_put64(rec, r->service_id);
	memcpy(rec + 8, r->dgid, 16);
	memcpy(rec + 24, r->sgid, 16);
	sm_sa_put16(rec + 40, r->dlid);
	sm_sa_put16(rec + 42, r->slid);
	parms_put(&r->p, rec + 44);
	rec[57] = r->preference;
	memset(rec + 58, 0, 6);
}

void sm_sa_mpath_rec_decode(const uint8_t rec[SM_SA_MPATH_REC_SIZE], struct sm_sa_mpath_rec *r)
{
	parms_get(rec, &r->p);
	r->indep_sel = rec[14] >> 6;
	r->sgid_count = rec[15];
	r->dgid_count = rec[16];
	uint64_t lsb = 0;
	for (int i = 17; i < 24; i++)
		lsb = lsb << 8 | rec[i];
	r->service_id = (uint64_t)rec[13] << 56 | lsb;
}

void sm_sa_mpath_rec_encode(const struct sm_sa_mpath_rec *r, uint8_t rec[SM_SA_MPATH_REC_SIZE])
{
	parms_put(&r->p, rec);
	rec[13] = (uint8_t)(r->service_id >> 56);
	rec[14] = (uint8_t)((r->indep_sel & 3) << 6);
	rec[15] = r->sgid_count;
	rec[16] = r->dgid_count;
	for (int i = 23; i >= 17; i--)
		rec[i] = (uint8_t)(r->service_id >> (8 * (23 - i)));
}

/*
 * Rate codes (IBA table 214 and its extensions) by lane speed (row) and
 * width (column). Rows: unknown, SDR, DDR, QDR (FDR10 included: PortInfo
 * says QDR), FDR, EDR, HDR, NDR, XDR; columns: unknown, 1x, 2x, 4x, 8x,
 * 12x. XDR 8x and 12x have no code of their own: the largest, 1200 Gb/s,
 * stands for them.
 */
const uint8_t sm_pr_speed_row[32] = { [1] = 1, [2] = 2, [4] = 3 };
const uint8_t sm_pr_ext_row[32] = { [1] = 4, [2] = 5, [4] = 6, [8] = 7, [16] = 8 };
const uint8_t sm_pr_width_col[32] = { [1] = 1, [16] = 2, [2] = 3, [4] = 4, [8] = 5 };
const uint8_t sm_pr_rate_code[9][6] = {
	{ 0 },
	{ 0, 2, 5, 3, 6, 4 },          /* 2.5 Gb/s lanes: 2.5, 5, 10, 20, 30 */
	{ 0, 5, 3, 6, 7, 8 },          /* 5: 5, 10, 20, 40, 60 */
	{ 0, 3, 6, 7, 9, 10 },         /* 10: 10, 20, 40, 80, 120 */
	{ 0, 11, 19, 12, 13, 14 },     /* 14: 14, 28, 56, 112, 168 */
	{ 0, 15, 20, 16, 17, 18 },     /* 25: 25, 50, 100, 200, 300 */
	{ 0, 20, 16, 17, 21, 22 },     /* 50: 50, 100, 200, 400, 600 */
	{ 0, 16, 17, 21, 23, 24 },     /* 100: 100, 200, 400, 800, 1200 */
	{ 0, 17, 21, 23, 24, 24 },     /* 200: 200, 400, 800, 1600, 2400 */
};

/*
 * Bandwidth of each rate code in units of 10 Mb/s of 8b/10b-equivalent
 * signalling (64b/66b rates scaled by 10/8, as the IBA orders them: 25
 * Gb/s EDR 1x ranks above 30 Gb/s SDR 12x); 0 for codes that are none.
 */
const uint32_t sm_pr_rate_bw[32] = {
	0, 0, 250, 1000, 3000, 500, 2000, 4000, 6000, 8000, 12000, 1700, 6800, 13600, 20400,
	3125, 12500, 25000, 37500, 3500, 6250, 50000, 75000, 100000, 150000,
};

uint8_t sm_sa_rate_of(uint8_t width, uint8_t speed, uint8_t flags)
{
	return sm_pr_rate(width, flags & SM_PORT_F_EXT_SPEED ? 0 : speed, flags & SM_PORT_F_EXT_SPEED ? speed : 0);
}

int sm_sa_rate_cmp(uint8_t a, uint8_t b)
{
	uint32_t x = sm_pr_rate_bw[a & 31], y = sm_pr_rate_bw[b & 31];
	return x < y ? -1 : x > y;
}

uint8_t sm_sa_rate_prev(uint8_t rate)
{
	uint32_t have = sm_pr_rate_bw[rate & 31], best = 0;
	uint8_t code = 0;

	for (uint8_t c = SM_SA_RATE_MIN; c <= SM_SA_RATE_MAX; c++)
		if (sm_pr_rate_bw[c] < have && sm_pr_rate_bw[c] > best)
			best = sm_pr_rate_bw[c], code = c;
	return code;
}
