/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What the converter's tests (test-convert.c, test-convert-colour.c)
 * share: formats, sample pictures and a conversion that must succeed.
 * Header-only, since each test is a program of its own.
 */

#include <stdint.h>
#include <glib.h>
#include <linux/videodev2.h>

#include "v4l2cuse/format.h"
#include "convert.h"

/* @fourcc at @w x @h with bytesperline and sizeimage filled in. */
static inline struct v4l2_pix_format
pix_of(uint32_t fourcc, uint32_t w, uint32_t h)
{
	struct v4l2_pix_format pix = { .pixelformat = fourcc, .width = w, .height = h };

	g_assert_cmpint(v4l2cuse_format_fill(&pix), ==, 0);
	return pix;
}

/* A smooth RGB picture: gradients with no sharp edges (kind to 4:2:0 and JPEG). */
static inline uint8_t *
make_rgb(uint32_t w, uint32_t h)
{
	uint8_t *p = g_malloc((size_t)w * h * 3);

	for (uint32_t y = 0; y < h; y++) {
		for (uint32_t x = 0; x < w; x++) {
			uint8_t *px = p + ((size_t)y * w + x) * 3;

			px[0] = (uint8_t)(40 + 160 * x / w);
			px[1] = (uint8_t)(200 - 150 * y / h);
			px[2] = (uint8_t)(60 + 80 * (x + y) / (w + h));
		}
	}
	return p;
}

/* A YU12 frame with distinct Y, Cb and Cr everywhere. */
static inline uint8_t *
make_yu12(uint32_t w, uint32_t h)
{
	uint8_t *p = g_malloc((size_t)w * h * 3 / 2);
	uint8_t *u = p + (size_t)w * h, *v = u + (size_t)w * h / 4;

	for (uint32_t i = 0; i < w * h; i++)
		p[i] = (uint8_t)(16 + i % 200);
	for (uint32_t i = 0; i < w * h / 4; i++) {
		u[i] = (uint8_t)(20 + i % 97);
		v[i] = (uint8_t)(120 + i % 101);
	}
	return p;
}

/* @data converted into a new buffer of @out (the test fails if it cannot be). */
static inline uint8_t *
convert_new(struct v4l2cuse_convert *cv, uint32_t in_fourcc, uint32_t in_w, uint32_t in_h,
	    const uint8_t *data, size_t size, const struct v4l2_pix_format *out,
	    uint32_t *ret_used)
{
	struct v4l2cuse_image in = {
		.fourcc = in_fourcc, .width = in_w, .height = in_h, .data = data, .size = size,
	};
	uint8_t *dst = g_malloc0(out->sizeimage);
	uint32_t used = 0;
	int r = v4l2cuse_convert_frame(cv, &in, out, dst, out->sizeimage, &used);

	if (r < 0)
		g_error("convert %.4s %ux%u -> %.4s %ux%u: %s", (const char *)&in_fourcc, in_w,
			in_h, (const char *)&out->pixelformat, out->width, out->height,
			g_strerror(-r));
	if (out->pixelformat != V4L2_PIX_FMT_MJPEG)
		g_assert_cmpuint(used, ==, out->sizeimage);
	if (ret_used)
		*ret_used = used;
	return dst;
}
