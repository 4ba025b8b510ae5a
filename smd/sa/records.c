/* SPDX-License-Identifier: MIT */
/*
 * DOC: SA record wire formats and component-mask matching (records.h).
 */
#include "sa/records.h"
#include "sa/sa_mad.h"

uint64_t sm_sa_bits_get(const uint8_t *rec, unsigned off, unsigned nbits)
{
	uint64_t v = 0;
	if ((off & 7) == 0 && (nbits & 7) == 0) {
		for (unsigned i = 0; i < nbits / 8; i++)
			v = v << 8 | rec[off / 8 + i];
		return v;
	}
	for (unsigned i = 0; i < nbits; i++) {
		unsigned b = off + i;
		v = v << 1 | ((rec[b / 8] >> (7 - b % 8)) & 1);
	}
	return v;
}

void sm_sa_bits_put(uint8_t *rec, unsigned off, unsigned nbits, uint64_t v)
{
	for (unsigned i = 0; i < nbits; i++) {
		unsigned b = off + nbits - 1 - i;
		uint8_t m = (uint8_t)(1u << (7 - b % 8));
		if (v >> i & 1)
			rec[b / 8] |= m;
		else
			rec[b / 8] &= (uint8_t)~m;
	}
}

bool sm_sa_match(const struct sm_sa_field *fields, size_t n, uint64_t mask, const uint8_t *req,
		 const uint8_t *cand)
{
	for (size_t i = 0; i < n && mask; i++) {
		const struct sm_sa_field *f = &fields[i];
		if (!sm_sa_cm(mask, f->bit))
			continue;
		if (f->nbits > 64) {   /* byte string, byte-aligned */
			if (memcmp(req + f->off / 8, cand + f->off / 8, f->nbits / 8))
				return false;
		} else if (sm_sa_bits_get(req, f->off, f->nbits) != sm_sa_bits_get(cand, f->off, f->nbits)) {
			return false;
		}
	}
	return true;
}

void sm_sa_cpi_encode(const struct sm_sa_cpi *c, uint8_t rec[SM_SA_CPI_SIZE])
{
	memset(rec, 0, SM_SA_CPI_SIZE);
	rec[0] = 1;                           /* BaseVersion */
	rec[1] = SM_SA_CLASS_VERSION;         /* ClassVersion */
	sm_sa_put16(rec + 2, c->cap_mask);
	sm_sa_put32(rec + 4, (c->cap_mask2 & 0x07ffffffu) << 5 | (c->resp_time_value & 0x1f));
	/* 8: RedirectGID, 24: RedirectTC/SL/FL, 28: RedirectLID, 30: RedirectP_Key (all 0: no redirection) */
	sm_sa_put32(rec + 32, c->redir_qp & 0x00ffffffu);
	sm_sa_put32(rec + 36, c->redir_qkey);
	/* 40: TrapGID, 56: TrapTC/SL/FL, 60: TrapLID, 62: TrapP_Key, 64: TrapHL/TrapQP (all 0) */
	sm_sa_put32(rec + 68, c->trap_qkey);
}
