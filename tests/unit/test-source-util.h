/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What the sources' unit tests (test-source-*.c) all do: create a source
 * from a spec and start it at a format it offers. Header-only, since each
 * test is a program of its own.
 */

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
