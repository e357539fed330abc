/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What the benchmarks share: the clock (the daemon's, util/clock.h), the
 * system-wide busy CPU from /proc/stat, ioctl() restarted on EINTR, and the
 * window hook of v4l2-bench and v4l2-mmap-bench.
 *
 * The window hook: with V4L2_BENCH_HOOK set, `$V4L2_BENCH_HOOK start` runs
 * right before the measured window opens and `$V4L2_BENCH_HOOK end` right
 * after it closes (both outside it), so a script can sample what the tool
 * cannot see: the daemon's own CPU time and counters (bench/vm-mmap-bench.sh).
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <time.h>

#include "util/clock.h"

/* CLOCK_MONOTONIC in seconds, for rates and durations. */
static inline double
now_s(void)
{
	return v4l2cuse_now_ns() / 1e9;
}

/* Busy and total jiffies of all CPUs. */
static inline void
cpu_jiffies(unsigned long long *busy, unsigned long long *total)
{
	unsigned long long v[10] = { 0 };
	FILE *f = fopen("/proc/stat", "r");

	*busy = *total = 0;
	if (!f)
		return;
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
		   &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]) >= 8) {
		for (int i = 0; i < 8; i++)
			*total += v[i];
		*busy = *total - v[3] - v[4];	/* minus idle and iowait */
	}
	fclose(f);
}

static inline int
xioctl(int fd, unsigned long cmd, void *arg)
{
	int r;

	do
		r = ioctl(fd, cmd, arg);
	while (r < 0 && errno == EINTR);
	return r;
}

/* Run the window hook with @what ("start" or "end"), if there is one. */
static inline void
window_hook(const char *what)
{
	const char *hook = getenv("V4L2_BENCH_HOOK");
	char cmd[4096];

	if (!hook || !*hook)
		return;
	snprintf(cmd, sizeof(cmd), "%s %s", hook, what);
	if (system(cmd) != 0)
		fprintf(stderr, "window hook '%s' failed\n", cmd);
}
