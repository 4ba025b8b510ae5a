/* SPDX-License-Identifier: MIT */
/*
 * DOC: SipHash-2-4 (see siphash.h). Two compression rounds per 8-byte
 * word, four finalisation rounds; the last word carries the length in its
 * top byte. All reads are little-endian whatever the host.
 */
#include "lib/siphash.h"

static uint64_t rotl(uint64_t x, unsigned b)
{
	return x << b | x >> (64 - b);
}

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

struct sip { uint64_t v0, v1, v2, v3; };

static void round_(struct sip *s)
{
	s->v0 += s->v1; s->v1 = rotl(s->v1, 13); s->v1 ^= s->v0; s->v0 = rotl(s->v0, 32);
	s->v2 += s->v3; s->v3 = rotl(s->v3, 16); s->v3 ^= s->v2;
	s->v0 += s->v3; s->v3 = rotl(s->v3, 21); s->v3 ^= s->v0;
	s->v2 += s->v1; s->v1 = rotl(s->v1, 17); s->v1 ^= s->v2; s->v2 = rotl(s->v2, 32);
}

static void word(struct sip *s, uint64_t m)
{
	s->v3 ^= m;
	round_(s);
	round_(s);
	s->v0 ^= m;
}

uint64_t sm_siphash24(const uint8_t k[16], const void *in, size_t len)
{
	const uint8_t *p = in;
	uint64_t k0 = le64(k), k1 = le64(k + 8), last = (uint64_t)(len & 0xff) << 56;
	struct sip s = { k0 ^ 0x736f6d6570736575ull, k1 ^ 0x646f72616e646f6dull,
			 k0 ^ 0x6c7967656e657261ull, k1 ^ 0x7465646279746573ull };
	size_t i;

	for (i = 0; i + 8 <= len; i += 8)
		word(&s, le64(p + i));
	for (size_t j = 0; i + j < len; j++)
		last |= (uint64_t)p[i + j] << (8 * j);
	word(&s, last);
	s.v2 ^= 0xff;
	for (int r = 0; r < 4; r++)
		round_(&s);
	return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}
