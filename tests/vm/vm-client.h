/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Shared by the VM test clients (abuse-client.c, fault-client.c,
 * share-client.c): the time of a clock in seconds and an errno's name.
 */

#include <string.h>
#include <time.h>

/* @clock (CLOCK_MONOTONIC, CLOCK_REALTIME) now, in seconds. */
static inline double
vm_clock_seconds(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* "EINVAL" for EINVAL; "?" for a number glibc has no name for. */
static inline const char *
vm_errno_name(int err)
{
	const char *n = strerrorname_np(err);

	return n ? n : "?";
}
