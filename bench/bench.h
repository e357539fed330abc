/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What the benchmarks share: the clock (the daemon's, util/clock.h), this
 * thread's CPU time, memcpy()'s rate for a size, the system-wide busy CPU
 * from /proc/stat and the run time of every task from
 * /proc/PID/task/TID/schedstat, ioctl() restarted on EINTR, and the
 * measured window of v4l2-bench and v4l2-mmap-bench with its hook.
 *
 * The window hook: with V4L2_BENCH_HOOK set, `$V4L2_BENCH_HOOK start` runs
 * right before the measured window opens and `$V4L2_BENCH_HOOK end` right
 * after it closes (both outside it), so a script can sample what the tool
 * cannot see: the daemon's own CPU time and counters (bench/vm-mmap-bench.sh).
 */

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"

/* CLOCK_MONOTONIC in seconds, for rates and durations. */
static inline double
now_s(void)
{
	return v4l2cuse_now_ns() / 1e9;
}

/* This thread's CPU time in seconds (CLOCK_THREAD_CPUTIME_ID), for CPU cost per frame. */
static inline double
thread_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Copies of @size bytes per second, memcpy() for @seconds: the ceiling any
 * per-frame copy of that size is compared with.
 */
static inline double
memcpy_rate(size_t size, double seconds)
{
	uint8_t *a = malloc(size), *b = malloc(size);
	unsigned long n = 0;
	double t0, t;

	if (!a || !b)
		abort();
	memset(a, 0x5a, size);
	memset(b, 0, size);
	t0 = now_s();
	do {
		memcpy(b, a, size);
		a[n % size]++;		/* keep the copy from being elided */
		n++;
		t = now_s();
	} while (t - t0 < seconds);
	free(a);
	free(b);
	return n / (t - t0);
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

/*
 * The run time of every task of the system (the scheduler's
 * sum_exec_runtime, the first field of schedstat), in nanoseconds: kernel
 * threads (vivid's), the daemon and the app alike. /proc/stat's busy time
 * is sampled at the scheduler tick (4 ms on Debian's kernel), and a task
 * that wakes on a frame timer can run at the very moment of the tick every
 * time and be charged a whole tick per frame (or none); this one is exact
 * to the context switch. It misses tasks that end inside the window and,
 * with IRQ time accounting, interrupt time.
 */
static inline unsigned long long
task_runtime_ns(void)
{
	unsigned long long sum = 0;
	DIR *procs = opendir("/proc");
	struct dirent *p;

	if (!procs)
		return 0;
	while ((p = readdir(procs))) {
		char path[600];	/* two d_name (256 each) and the rest */
		DIR *tasks;
		struct dirent *t;

		if (p->d_name[0] < '0' || p->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/task", p->d_name);
		tasks = opendir(path);
		if (!tasks)
			continue;
		while ((t = readdir(tasks))) {
			unsigned long long ns;
			FILE *f;

			if (t->d_name[0] < '0' || t->d_name[0] > '9')
				continue;
			snprintf(path, sizeof(path), "/proc/%s/task/%s/schedstat", p->d_name,
				 t->d_name);
			f = fopen(path, "r");
			if (!f)
				continue;
			if (fscanf(f, "%llu", &ns) == 1)
				sum += ns;
			fclose(f);
		}
		closedir(tasks);
	}
	closedir(procs);
	return sum;
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

/*
 * The measured window of v4l2-bench and v4l2-mmap-bench: the clock,
 * /proc/stat and the tasks' run time are read at the start;
 * window_close() reads them again (then runs the hook "end") and leaves
 * the window's length and the CPU time spent in it, both ways. The tools
 * run the hook "start" before their warm-up, not here: the hook starts
 * processes (0.1-0.3 s each under TCG), the stream stalls meanwhile and
 * the frames that pile up in the queue would be dequeued at once in the
 * window, produced before it (a sequence gap, and a few frames too many).
 */
struct window {
	double t0, secs;
	unsigned long long busy0, runtime0;
	double busy_ms, task_ms;	/* after window_close() */
};

static inline void
window_open(struct window *w)
{
	unsigned long long total;

	cpu_jiffies(&w->busy0, &total);
	w->runtime0 = task_runtime_ns();
	w->t0 = now_s();
}

static inline double
window_elapsed(const struct window *w)
{
	return now_s() - w->t0;
}

static inline void
window_close(struct window *w)
{
	unsigned long long busy, total, runtime;

	w->secs = now_s() - w->t0;
	runtime = task_runtime_ns();
	cpu_jiffies(&busy, &total);
	w->busy_ms = (double)(busy - w->busy0) * 1000.0 / (double)sysconf(_SC_CLK_TCK);
	w->task_ms = (double)(runtime - w->runtime0) / 1e6;
	window_hook("end");
}
