/* SPDX-License-Identifier: MIT */
/*
 * DOC: spare blocks (spare.h): a few freed large blocks, kept by size.
 *
 * A block is kept only if a block of its size was asked for in this sweep
 * or the one before (sizes that come back: a fabric's, its tables'), so
 * arrays freed once (a file read, a heavy sweep's tables grown by
 * doubling) are freed at once; and only once a sweep has ended
 * (sm_spare_age()): a program that never sweeps with a state keeps none.
 */
#include "model/spare.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define WANTED 32

static struct {
	pthread_mutex_t mu;
	void *p[SM_SPARE_SLOTS];
	size_t n[SM_SPARE_SLOTS];
	uint64_t age[SM_SPARE_SLOTS];   /* when given: the oldest goes first */
	uint64_t gen[SM_SPARE_SLOTS];   /* generation it was given in */
	size_t want[WANTED];            /* sizes asked for (0: free entry) */
	uint64_t want_gen[WANTED];      /* ... last in that generation */
	uint64_t clock, generation;
} spare = { .mu = PTHREAD_MUTEX_INITIALIZER };

/* Under the lock: n was asked for now. */
static void wanted(size_t n)
{
	unsigned k = 0;
	for (unsigned i = 0; i < WANTED; i++) {
		if (spare.want[i] == n) {
			k = i;
			break;
		}
		if (!spare.want[i] || spare.want_gen[i] < spare.want_gen[k])
			k = i;   /* a free entry, else the stalest */
	}
	spare.want[k] = n;
	spare.want_gen[k] = spare.generation;
}

/* Under the lock: was n asked for in this generation or the one before (and is a sweep ending them)? */
static int is_wanted(size_t n)
{
	if (!spare.generation)
		return 0;   /* no sm_spare_age() yet: a program that does not sweep keeps nothing */
	for (unsigned i = 0; i < WANTED; i++)
		if (spare.want[i] == n && spare.want_gen[i] + 1 >= spare.generation)
			return 1;
	return 0;
}

static void *take(size_t n)
{
	void *p = NULL;
	if (n < SM_SPARE_MIN)
		return NULL;
	pthread_mutex_lock(&spare.mu);
	wanted(n);
	for (unsigned i = 0; i < SM_SPARE_SLOTS; i++) {
		if (spare.p[i] && spare.n[i] == n) {
			p = spare.p[i];
			spare.p[i] = NULL;
			break;
		}
	}
	pthread_mutex_unlock(&spare.mu);
	return p;
}

void *sm_spare_take(size_t n)
{
	void *p = take(n);
	return p ? p : malloc(n ? n : 1);
}

void *sm_spare_take_zero(size_t n)
{
	void *p = take(n);
	if (!p)
		return calloc(n ? n : 1, 1);
	memset(p, 0, n);
	return p;
}

void sm_spare_give(void *p, size_t n)
{
	void *old = p;
	if (p && n >= SM_SPARE_MIN) {
		unsigned k = 0;
		pthread_mutex_lock(&spare.mu);
		if (is_wanted(n)) {
			for (unsigned i = 0; i < SM_SPARE_SLOTS; i++) {
				if (!spare.p[i]) {
					k = i;
					break;
				}
				if (spare.age[i] < spare.age[k])
					k = i;
			}
			old = spare.p[k];
			spare.p[k] = p;
			spare.n[k] = n;
			spare.age[k] = ++spare.clock;
			spare.gen[k] = spare.generation;
		}
		pthread_mutex_unlock(&spare.mu);
	}
	free(old);
}

void sm_spare_drop(void)
{
	void *p[SM_SPARE_SLOTS];
	pthread_mutex_lock(&spare.mu);
	for (unsigned i = 0; i < SM_SPARE_SLOTS; i++) {
		p[i] = spare.p[i];
		spare.p[i] = NULL;
	}
	pthread_mutex_unlock(&spare.mu);
	for (unsigned i = 0; i < SM_SPARE_SLOTS; i++)
		free(p[i]);
}

void sm_spare_age(void)
{
	void *p[SM_SPARE_SLOTS] = { NULL };
	pthread_mutex_lock(&spare.mu);
	for (unsigned i = 0; i < SM_SPARE_SLOTS; i++) {
		if (spare.p[i] && spare.gen[i] < spare.generation) {
			p[i] = spare.p[i];
			spare.p[i] = NULL;
		}
	}
	spare.generation++;
	pthread_mutex_unlock(&spare.mu);
	for (unsigned i = 0; i < SM_SPARE_SLOTS; i++)
		free(p[i]);
}
