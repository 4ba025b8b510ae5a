/* SPDX-License-Identifier: MIT */
#ifndef SMD_LIB_MIX_H
#define SMD_LIB_MIX_H
/*
 * DOC: the one 64-bit mixer (the splitmix64 finaliser): hashing (GUID maps,
 * the transaction table; GUIDs are often sequential) and seeded random
 * sequences (sm_splitmix64: state += golden ratio, then mix).
 */
#include <stdint.h>

static inline uint64_t sm_mix64(uint64_t x)
{
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* Advance the seeded state *s and return its next value. */
static inline uint64_t sm_splitmix64(uint64_t *s)
{
	return sm_mix64(*s += 0x9e3779b97f4a7c15ULL);
}

#endif
