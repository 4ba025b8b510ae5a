/* SPDX-License-Identifier: MIT */
#ifndef SMD_MODEL_SPARE_H
#define SMD_MODEL_SPARE_H
/*
 * DOC: spare blocks: large arrays kept from one sweep to the next
 *
 * An incremental sweep of an unchanged node set makes the same arrays as
 * the last one (the fabric's nodes and ports, its GUID maps, the sweep
 * tables, the snapshot's attributes), a few MB to 30 MB each at 40k
 * hosts, while the snapshot before holds arrays of the same sizes; freed
 * after the sweep and given back (malloc_trim), they came back as fresh
 * pages, faulted in and cleared: a quarter of the SM's CPU of a reroute.
 * So a freed block of 1 MB or more, of a size asked for in this sweep or
 * the last (sm_spare_age() counts them), is kept here (up to
 * SM_SPARE_SLOTS, the oldest given back first) for the next request of
 * exactly its size;
 * sm_spare_drop() gives them all back (before a full sweep, whose arrays
 * grow otherwise), sm_spare_age() those older than the last sweep. Blocks are plain malloc() blocks: realloc() and free()
 * work on what sm_spare_take() returns. Thread-safe (a snapshot may be
 * let go on any thread).
 */
#include <stddef.h>

#define SM_SPARE_MIN ((size_t)1 << 20)
#define SM_SPARE_SLOTS 16

/* A kept block of exactly n bytes (contents undefined), else malloc(n). NULL: out of memory. */
void *sm_spare_take(size_t n);
/* The same, zero-filled. */
void *sm_spare_take_zero(size_t n);
/* Keep p (a malloc() block of n bytes) if it is large enough, else free it. NULL is fine. */
void sm_spare_give(void *p, size_t n);
/* Free every kept block. */
void sm_spare_drop(void);
/*
 * The end of a sweep (sm_state_give_back: of a bring-up, or of the daemon's
 * whole cycle once idle): free the blocks kept before the
 * last call that no sweep has taken since, so that what is kept is at most
 * one sweep's arrays (a fabric read and freed once is not kept for good).
 */
void sm_spare_age(void);
#endif
