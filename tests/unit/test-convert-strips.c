/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sources/convert.c's strips: a raw frame converted strip by strip
 * (CV_STRIP_LINES at a time, input to target) gives the same bytes as the
 * same frame converted whole, for every raw input and raw target, at sizes
 * below and above the BT.709 switch (720 lines), with a short last strip,
 * with the input's colorimetry given, and after scaling (packed in strips).
 */

#include "config.h"

#include <string.h>

#include <glib.h>

#include "v4l2cuse/format.h"
#include "convert-private.h"
#include "test-main.h"

static uint8_t *
random_frame(size_t size)
{
	uint8_t *p = g_malloc(size);

	for (size_t i = 0; i < size; i++)
		p[i] = (uint8_t)g_test_rand_int_range(0, 256);
	return p;
}

/* Convert @in to @fourcc at @ow x @oh twice, whole and in strips; compare. */
static void
check_pair(struct v4l2cuse_convert *cv, const struct v4l2cuse_image *in, uint32_t fourcc,
	   uint32_t ow, uint32_t oh)
{
	struct v4l2_pix_format out = { .pixelformat = fourcc, .width = ow, .height = oh };
	g_autofree uint8_t *whole = NULL, *strips = NULL;
	uint32_t used_whole = 0, used_strips = 0;

	g_assert_cmpint(v4l2cuse_format_fill(&out), ==, 0);
	whole = g_malloc0(out.sizeimage);
	strips = g_malloc0(out.sizeimage);
	cv->whole_frames = true;
	g_assert_cmpint(v4l2cuse_convert_frame(cv, in, &out, whole, out.sizeimage, &used_whole),
			==, 0);
	cv->whole_frames = false;
	g_assert_cmpint(v4l2cuse_convert_frame(cv, in, &out, strips, out.sizeimage, &used_strips),
			==, 0);
	g_assert_cmpuint(used_whole, ==, used_strips);
	if (memcmp(whole, strips, used_whole) != 0) {
		size_t i = 0;

		while (whole[i] == strips[i])
			i++;
		g_error("%.4s %ux%u -> %.4s %ux%u: byte %zu of %u differs (%u whole, %u strips)",
			(const char *)&in->fourcc, in->width, in->height, (const char *)&fourcc, ow,
			oh, i, used_whole, whole[i], strips[i]);
	}
}

static void
check_size(uint32_t w, uint32_t h, uint32_t ow, uint32_t oh, uint32_t enc, uint32_t quant)
{
	struct v4l2cuse_convert *cv = v4l2cuse_convert_new();
	const struct v4l2cuse_format_info *fi, *fo;
	unsigned int pairs = 0;

	for (unsigned int i = 0; (fi = v4l2cuse_format_lookup_by_index(i)); i++) {
		size_t size = v4l2cuse_convert_input_size(fi->fourcc, w, h, 0);
		g_autofree uint8_t *data = NULL;
		struct v4l2cuse_image in = {
			.fourcc = fi->fourcc, .width = w, .height = h, .size = size,
			.ycbcr_enc = fi->yuv ? enc : 0, .quantization = fi->yuv ? quant : 0,
		};

		if (fi->compressed)
			continue;
		g_assert_cmpuint(size, >, 0);
		data = random_frame(size);
		in.data = data;
		for (unsigned int o = 0; (fo = v4l2cuse_format_by_index(o)); o++) {
			if (fo->compressed)
				continue;
			check_pair(cv, &in, fo->fourcc, ow, oh);
			pairs++;
		}
	}
	g_test_message("%ux%u -> %ux%u: %u pairs identical", w, h, ow, oh, pairs);
	g_assert_cmpuint(pairs, >=, 200);
	v4l2cuse_convert_free(cv);
}

/* BT.601 sizes; 34 lines: two strips and a short one. */
V4L2CUSE_TEST("/convert-strips/small", test_small)
{
	check_size(64, 48, 64, 48, 0, 0);
	check_size(96, 34, 96, 34, 0, 0);
}

/* 720 lines and up: BT.709 Y'CbCr, decided by the frame's height, not the strip's. */
V4L2CUSE_TEST("/convert-strips/hd", test_hd)
{
	check_size(1280, 720, 1280, 720, 0, 0);
}

/* The input's colorimetry given (full-range BT.709, limited BT.601 at 720 lines). */
V4L2CUSE_TEST("/convert-strips/given-colorimetry", test_given_colorimetry)
{
	check_size(64, 48, 64, 48, V4L2_YCBCR_ENC_709, V4L2_QUANTIZATION_FULL_RANGE);
	check_size(320, 720, 320, 720, V4L2_YCBCR_ENC_601, V4L2_QUANTIZATION_LIM_RANGE);
}

/* Scaled frames: the scaler works on the whole picture, the packer in strips. */
V4L2CUSE_TEST("/convert-strips/scaled", test_scaled)
{
	check_size(64, 48, 40, 30, 0, 0);
	check_size(1280, 720, 960, 722, 0, 0);
}
