/* SPDX-License-Identifier: MIT */
#ifndef SMD_LIB_BE_H
#define SMD_LIB_BE_H
/*
 * DOC: big-endian loads and stores (MAD wire fields)
 *
 * Every MAD field is big-endian at any alignment: these read and write one
 * byte at a time, so they never assume alignment or host order. The SMP
 * codecs (mad/codec.c), the SA records (sa/records.h) and the ibsim GSI all
 * use these.
 */
#include <stdint.h>

static inline uint16_t sm_be_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}
static inline uint32_t sm_be_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline uint64_t sm_be_get64(const uint8_t *p)
{
	return (uint64_t)sm_be_get32(p) << 32 | sm_be_get32(p + 4);
}
static inline void sm_be_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}
static inline void sm_be_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}
static inline void sm_be_put64(uint8_t *p, uint64_t v)
{
	sm_be_put32(p, (uint32_t)(v >> 32));
	sm_be_put32(p + 4, (uint32_t)v);
}

#endif
