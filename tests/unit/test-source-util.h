/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What the sources' unit tests (test-source-*.c) all do: create a source
 * from a spec, check what it enumerates and start it at a format it
 * offers. Header-only, since each test is a program of its own.
 */

#include <errno.h>
#include <poll.h>

#include <glib.h>

#include "v4l2cuse/source.h"

/* @spec as a source, or the test fails with the source's message. */
static inline struct v4l2cuse_source *
ts_make(const char *spec)
{
	struct v4l2cuse_source *src = NULL;
	g_autofree char *error = NULL;

	if (v4l2cuse_source_create(spec, &src, &error) < 0)
		g_error("%s: %s", spec, error);
	return src;
}

/* The source's @index-th format is @fourcc. */
static inline void
ts_assert_format(struct v4l2cuse_source *src, unsigned int index, uint32_t fourcc)
{
	uint32_t f;

	g_assert_cmpint(src->ops->enum_format(src, index, &f), ==, 0);
	g_assert_cmphex(f, ==, fourcc);
}

/* Its @index-th size of @fourcc is @w x @h. */
static inline void
ts_assert_size(struct v4l2cuse_source *src, uint32_t fourcc, unsigned int index, uint32_t w,
	       uint32_t h)
{
	uint32_t rw, rh;

	g_assert_cmpint(src->ops->enum_framesize(src, fourcc, index, &rw, &rh), ==, 0);
	g_assert_cmpuint(rw, ==, w);
	g_assert_cmpuint(rh, ==, h);
}

/* Its @index-th interval of @fourcc at @w x @h is @num/@den seconds. */
static inline void
ts_assert_interval(struct v4l2cuse_source *src, uint32_t fourcc, uint32_t w, uint32_t h,
		   unsigned int index, uint32_t num, uint32_t den)
{
	struct v4l2_fract iv;

	g_assert_cmpint(src->ops->enum_frameinterval(src, fourcc, w, h, index, &iv), ==, 0);
	g_assert_cmpuint(iv.numerator, ==, num);
	g_assert_cmpuint(iv.denominator, ==, den);
}

/*
 * Negotiate @fourcc at @w x @h, which the source must offer as they are,
 * and start it at @num/@den seconds per frame; the negotiated format.
 */
static inline struct v4l2_pix_format
ts_start(struct v4l2cuse_source *src, uint32_t fourcc, uint32_t w, uint32_t h, uint32_t num,
	 uint32_t den)
{
	struct v4l2_pix_format pix = { .pixelformat = fourcc, .width = w, .height = h };
	struct v4l2_fract iv = { num, den };

	g_assert_cmpint(v4l2cuse_source_negotiate(src, &pix), ==, 0);
	g_assert_cmpuint(pix.pixelformat, ==, fourcc);
	g_assert_cmpuint(pix.width, ==, w);
	g_assert_cmpuint(pix.height, ==, h);
	g_assert_cmpint(src->ops->start(src, &pix, &iv), ==, 0);
	return pix;
}

/*
 * produce() into @f until it answers anything but -EAGAIN, waiting on the
 * source's wake fd in between, for at most @timeout_ms: its answer, or
 * -ETIMEDOUT. Every -EAGAIN is counted in *@ret_waits if not NULL.
 */
static inline int
ts_produce_wait(struct v4l2cuse_source *src, struct v4l2cuse_frame *f, int timeout_ms,
		unsigned int *ret_waits)
{
	gint64 end = g_get_monotonic_time() + (gint64)timeout_ms * 1000;
	struct pollfd p = { .fd = v4l2cuse_source_wake_fd(src), .events = POLLIN };
	int r;

	while ((r = src->ops->produce(src, f)) == -EAGAIN) {
		gint64 left = end - g_get_monotonic_time();

		if (left <= 0)
			return -ETIMEDOUT;
		if (ret_waits)
			(*ret_waits)++;
		if (p.fd >= 0)
			poll(&p, 1, (int)(left / 1000) + 1);
	}
	return r;
}
