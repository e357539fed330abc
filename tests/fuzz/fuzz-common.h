/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Shared by the parser harnesses (fuzz-config.c, fuzz-source-spec.c,
 * fuzz-raw-options.c, fuzz-shim.c, fuzz-fastpath.c): an invariant check that
 * aborts (so libFuzzer saves the input as a crash), the check that a failure
 * comes with one readable line, silenced GLib messages (g_critical still
 * fatal), and the count of open fds (a run must not leak one).
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <glib.h>

#define fuzz_check(cond, ...)							\
	do {									\
		if (!(cond)) {							\
			fprintf(stderr, "%s:%d: invariant: ", __FILE__, __LINE__);	\
			fprintf(stderr, __VA_ARGS__);				\
			fputc('\n', stderr);					\
			abort();						\
		}								\
	} while (0)

/* r is 0, or -errno with exactly one non-empty line in @error. */
static inline void
fuzz_check_result(int r, const char *error)
{
	fuzz_check(r <= 0 && r > -4096, "result %d is not 0 or -errno", r);
	if (r == 0)
		return;
	fuzz_check(error && *error, "error %d without a message", r);
	fuzz_check(!strchr(error, '\n'), "message of more than one line: %s", error);
}

static void
fuzz_log_handler(const char *domain, GLogLevelFlags level, const char *msg, gpointer data)
{
	if (level & GPOINTER_TO_UINT(data)) {
		fprintf(stderr, "%s: %s\n", domain ? domain : "", msg);
		abort();
	}
}

/*
 * Messages are dropped (they would dominate the run time), but those of
 * @fatal (G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_ERROR at least) abort.
 */
static inline void
fuzz_quiet_glib(GLogLevelFlags fatal)
{
	fatal |= G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_ERROR;
	g_log_set_default_handler(fuzz_log_handler, GUINT_TO_POINTER(fatal));
}

/* Open fds of the process, for the check that a run leaks none. */
static inline unsigned int
fuzz_count_fds(void)
{
	GDir *d = g_dir_open("/proc/self/fd", 0, NULL);
	unsigned int n = 0;

	if (!d)
		abort();
	while (g_dir_read_name(d))
		n++;
	g_dir_close(d);
	return n;
}
