/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>
#include <time.h>

/*
 * CLOCK_MONOTONIC in nanoseconds: the clock of V4L2 buffer timestamps
 * (V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC), of the frame schedules and of the
 * timerfds that pace them, so one reading compares with all of them.
 */
static inline uint64_t
v4l2cuse_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
