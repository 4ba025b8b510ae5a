/* SPDX-License-Identifier: MIT */
#ifndef SMD_SIPHASH_H
#define SMD_SIPHASH_H
/*
 * DOC: SipHash-2-4 (Aumasson and Bernstein, "SipHash: a fast short-input
 * PRF", 2012), written from the paper's description: a keyed
 * pseudo-random function with a 128-bit key and a 64-bit output. smd uses
 * it to derive per-port M_Keys from a secret (smd/sm/mkey.h): without the
 * key, one output reveals nothing of another. Checked against the paper's
 * reference vectors (tests/test_siphash.c).
 */
#include <stddef.h>
#include <stdint.h>

/* SipHash-2-4 of len bytes at in under the 16-byte key k (k0 = bytes 0-7 little-endian). */
uint64_t sm_siphash24(const uint8_t k[16], const void *in, size_t len);

#endif
