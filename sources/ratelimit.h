/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Per-call-site log rate limiting: one message per interval, and the next
 * one that passes says how many were suppressed (libinput's ratelimit).
 */

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

struct v4l2cuse_ratelimit {
	int64_t last_us;		/* g_get_monotonic_time() of the last pass */
	unsigned int suppressed;	/* since then */
};

#define V4L2CUSE_RATELIMIT_INTERVAL_US	G_USEC_PER_SEC

/* True if a message may go out now; *ret_suppressed: how many did not. */
static inline bool
v4l2cuse_ratelimit_pass(struct v4l2cuse_ratelimit *rl, unsigned int *ret_suppressed)
{
	int64_t now = g_get_monotonic_time();

	if (rl->last_us && now - rl->last_us < V4L2CUSE_RATELIMIT_INTERVAL_US) {
		rl->suppressed++;
		return false;
	}
	rl->last_us = now;
	*ret_suppressed = rl->suppressed;
	rl->suppressed = 0;
	return true;
}
