/* SPDX-License-Identifier: MIT */
#ifndef SMD_LIB_CLOCK_H
#define SMD_LIB_CLOCK_H
/*
 * DOC: the one monotonic clock (CLOCK_MONOTONIC), in the three units callers use.
 * A transport may have its own time (virtual time on the mock): see
 * sm_transport_now_us() in mad/transport.h.
 */
#include <stdint.h>
#include <time.h>

static inline uint64_t sm_mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static inline int64_t sm_mono_ms(void)
{
	return (int64_t)(sm_mono_us() / 1000u);
}

static inline double sm_mono_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif
