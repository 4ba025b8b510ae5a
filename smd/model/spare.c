/* SPDX-License-Identifier: MIT */
/*
 * DOC: spare blocks (spare.h): a few freed large blocks, kept by size.
 */
#include "model/spare.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static struct {
	pthread_mutex_t mu;
	void *p[SM_SPARE_SLOTS];
	size_t n[SM_SPARE_SLOTS];
	uint64_t age[SM_SPARE_SLOTS];
	uint64_t clock;
} spare = { .mu = PTHREAD_MUTEX_INITIALIZER };

static void *take(size_t n)
{
	void *p = NULL;
	if (n < SM_SPARE_MIN)
		return NULL;
	pthread_mutex_lock(&spare.mu);
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
