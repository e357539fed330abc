/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Format math: descriptions, bytesperline, sizeimage, rounding, overflow,
 * colorimetry (sources/format.c).
 */

#include "config.h"

#include <errno.h>
#include <string.h>

#include <glib.h>

#include "v4l2cuse/format.h"
#include "test-main.h"

struct expect {
	uint32_t fourcc;
	const char *description;
	unsigned int bpl_num;		/* bytesperline = width * num / 2 */
	unsigned int size_num;		/* sizeimage = width * height * num / 4 */
};

/* v4l-utils 1.22.1 utils/common/v4l2-pix-formats.h */
static const struct expect expects[] = {
	{ V4L2_PIX_FMT_YUYV, "YUYV 4:2:2", 4, 8 },
	{ V4L2_PIX_FMT_UYVY, "UYVY 4:2:2", 4, 8 },
	{ V4L2_PIX_FMT_YVYU, "YVYU 4:2:2", 4, 8 },
	{ V4L2_PIX_FMT_NV12, "Y/CbCr 4:2:0", 2, 6 },
	{ V4L2_PIX_FMT_NV21, "Y/CrCb 4:2:0", 2, 6 },
	{ V4L2_PIX_FMT_YUV420, "Planar YUV 4:2:0", 2, 6 },
	{ V4L2_PIX_FMT_YVU420, "Planar YVU 4:2:0", 2, 6 },
	{ V4L2_PIX_FMT_RGB24, "24-bit RGB 8-8-8", 6, 12 },
	{ V4L2_PIX_FMT_BGR24, "24-bit BGR 8-8-8", 6, 12 },
	{ V4L2_PIX_FMT_XRGB32, "32-bit XRGB 8-8-8-8", 8, 16 },
	{ V4L2_PIX_FMT_XBGR32, "32-bit BGRX 8-8-8-8", 8, 16 },
	{ V4L2_PIX_FMT_RGB565, "16-bit RGB 5-6-5", 4, 8 },
	{ V4L2_PIX_FMT_GREY, "8-bit Greyscale", 2, 4 },
	{ V4L2_PIX_FMT_MJPEG, "Motion-JPEG", 0, 0 },
};

static const struct expect *
find_expect(uint32_t fourcc)
{
	for (size_t i = 0; i < G_N_ELEMENTS(expects); i++) {
		if (expects[i].fourcc == fourcc)
			return &expects[i];
	}
	return NULL;
}

V4L2CUSE_TEST("/fmt/descriptions", test_descriptions)
{
	unsigned int n = 0;

	for (unsigned int i = 0; v4l2cuse_format_by_index(i); i++, n++) {
		const struct v4l2cuse_format_info *info = v4l2cuse_format_by_index(i);
		const struct expect *e = find_expect(info->fourcc);

		g_assert_nonnull(e);
		g_assert_cmpstr(info->description, ==, e->description);
		g_assert_true(v4l2cuse_format_info(info->fourcc) == info);
		g_assert_cmpint(info->compressed, ==, info->fourcc == V4L2_PIX_FMT_MJPEG);
		/* descriptions fit v4l2_fmtdesc.description with a NUL */
		g_assert_cmpuint(strlen(info->description), <, 32);
		for (unsigned int j = 0; j < i; j++)
			g_assert_cmpuint(v4l2cuse_format_by_index(j)->fourcc, !=, info->fourcc);
	}
	g_assert_cmpuint(n, ==, G_N_ELEMENTS(expects));
	g_assert_null(v4l2cuse_format_info(V4L2_PIX_FMT_H264));
	g_assert_null(v4l2cuse_format_info(0));
}

/* The formats that are only read share the table but are never offered. */
V4L2CUSE_TEST("/fmt/read-only", test_read_only)
{
	static const uint32_t read_only[] = {
		V4L2_PIX_FMT_NV16, V4L2_PIX_FMT_NV61, V4L2_PIX_FMT_YUV422P,
		V4L2CUSE_PIX_FMT_YUV444P, V4L2_PIX_FMT_JPEG,
	};
	const struct v4l2cuse_format_info *info;
	unsigned int n = 0, outputs = 0;
	size_t off[3], stride[3];

	for (unsigned int i = 0; (info = v4l2cuse_format_lookup_by_index(i)); i++, n++) {
		g_assert_true(v4l2cuse_format_lookup(info->fourcc) == info);
		g_assert_cmpint(info->output, ==, info->description != NULL);
		g_assert_cmpint(info->output, ==, v4l2cuse_format_info(info->fourcc) != NULL);
		g_assert_cmpint(v4l2cuse_format_in_set(info, V4L2CUSE_FORMATS_RAW), ==,
				!info->compressed);
		outputs += info->output;
	}
	g_assert_cmpuint(outputs, ==, G_N_ELEMENTS(expects));
	g_assert_cmpuint(n, ==, G_N_ELEMENTS(expects) + G_N_ELEMENTS(read_only));
	for (size_t i = 0; i < G_N_ELEMENTS(read_only); i++) {
		g_assert_nonnull(v4l2cuse_format_lookup(read_only[i]));
		g_assert_null(v4l2cuse_format_info(read_only[i]));
	}

	/* Layouts with padded lines, chroma lines scaled like V4L2 does. */
	info = v4l2cuse_format_lookup(V4L2_PIX_FMT_YUV422P);
	g_assert_cmpuint(v4l2cuse_format_frame_size(info, 4, 3, 8, off, stride), ==, 48);
	g_assert_cmpuint(off[1], ==, 24);
	g_assert_cmpuint(off[2], ==, 36);
	g_assert_cmpuint(stride[1], ==, 4);
	info = v4l2cuse_format_lookup(V4L2_PIX_FMT_NV16);
	g_assert_cmpuint(v4l2cuse_format_frame_size(info, 4, 3, 0, off, stride), ==, 24);
	g_assert_cmpuint(stride[1], ==, 4);
	g_assert_cmpuint(v4l2cuse_format_frame_size(info, 3, 3, 0, NULL, NULL), ==, 0);
	info = v4l2cuse_format_lookup(V4L2CUSE_PIX_FMT_YUV444P);
	g_assert_cmpuint(v4l2cuse_format_frame_size(info, 3, 3, 0, NULL, NULL), ==, 27);
	g_assert_cmpuint(v4l2cuse_format_frame_size(v4l2cuse_format_lookup(V4L2_PIX_FMT_NV12),
						    4, 3, 0, NULL, NULL), ==, 0);
	g_assert_cmpuint(v4l2cuse_format_frame_size(v4l2cuse_format_lookup(V4L2_PIX_FMT_JPEG),
						    4, 4, 0, NULL, NULL), ==, 0);
}

V4L2CUSE_TEST("/fmt/sizes", test_sizes)
{
	static const uint32_t sizes[][2] = {
		{ 320, 240 }, { 640, 480 }, { 1280, 720 }, { 1920, 1080 },
		{ 2, 2 }, { 16, 8 }, { 8192, 8192 }, { 176, 144 }, { 1366, 768 },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(expects); i++) {
		const struct expect *e = &expects[i];

		for (size_t s = 0; s < G_N_ELEMENTS(sizes); s++) {
			struct v4l2_pix_format pix;
			uint64_t w = sizes[s][0], h = sizes[s][1];

			memset(&pix, 0xff, sizeof(pix));
			pix.pixelformat = e->fourcc;
			pix.width = (uint32_t)w;
			pix.height = (uint32_t)h;
			g_assert_cmpint(v4l2cuse_format_fill(&pix), ==, 0);
			g_assert_cmpuint(pix.width, ==, w);
			g_assert_cmpuint(pix.height, ==, h);
			g_assert_cmpuint(pix.field, ==, V4L2_FIELD_NONE);
			g_assert_cmpuint(pix.priv, ==, V4L2_PIX_FMT_PRIV_MAGIC);
			g_assert_cmpuint(pix.flags, ==, 0);
			if (e->fourcc == V4L2_PIX_FMT_MJPEG) {
				g_assert_cmpuint(pix.bytesperline, ==, 0);
				g_assert_cmpuint(pix.sizeimage, ==,
						 w * h * 2 + V4L2CUSE_JPEG_HEADROOM);
			} else {
				g_assert_cmpuint(pix.bytesperline, ==, w * e->bpl_num / 2);
				g_assert_cmpuint(pix.sizeimage, ==, w * h * e->size_num / 4);
				g_assert_cmpuint(pix.bytesperline, >=, pix.width);
			}
		}
	}
}

V4L2CUSE_TEST("/fmt/planar-layout", test_planar_layout)
{
	struct v4l2_pix_format pix = { .pixelformat = V4L2_PIX_FMT_YUV420,
				       .width = 640, .height = 480 };
	const struct v4l2cuse_format_info *i420 = v4l2cuse_format_info(V4L2_PIX_FMT_YUV420);
	const struct v4l2cuse_format_info *nv12 = v4l2cuse_format_info(V4L2_PIX_FMT_NV12);

	g_assert_cmpint(v4l2cuse_format_fill(&pix), ==, 0);
	g_assert_cmpuint(pix.bytesperline, ==, 640);
	/* Y 640x480, then U and V 320x240 each */
	g_assert_cmpuint(pix.sizeimage, ==, 640 * 480 + 2 * 320 * 240);
	g_assert_cmpuint(i420->n_planes, ==, 3);
	g_assert_cmpuint(i420->bpp[1], ==, 4);
	g_assert_cmpuint(i420->vdiv, ==, 2);
	g_assert_cmpuint(nv12->n_planes, ==, 2);
	g_assert_cmpuint(nv12->bpp[1], ==, 8);
}

V4L2CUSE_TEST("/fmt/odd-sizes", test_odd_sizes)
{
	for (size_t i = 0; i < G_N_ELEMENTS(expects); i++) {
		const struct v4l2cuse_format_info *info = v4l2cuse_format_info(expects[i].fourcc);
		struct v4l2_pix_format pix = { .pixelformat = expects[i].fourcc,
					       .width = 641, .height = 481 };
		uint32_t ew = info->width_align == 2 ? 642 : 641;
		uint32_t eh = info->n_planes > 1 ? 482 : 481;

		g_assert_cmpint(v4l2cuse_format_fill(&pix), ==, 0);
		g_assert_cmpuint(pix.width, ==, ew);
		g_assert_cmpuint(pix.height, ==, eh);
		if (!info->compressed) {
			uint64_t size = (uint64_t)ew * info->bpp[0] / 8 * eh;

			for (unsigned int p = 1; p < info->n_planes; p++)
				size += (uint64_t)ew * info->bpp[p] / 8 * (eh / info->vdiv);
			g_assert_cmpuint(pix.bytesperline, ==, (uint64_t)ew * info->bpp[0] / 8);
			g_assert_cmpuint(pix.sizeimage, ==, size);
		}
	}

	/* an odd width at the maximum can't round past it */
	struct v4l2_pix_format pix = { .pixelformat = V4L2_PIX_FMT_YUYV,
				       .width = V4L2CUSE_MAX_WIDTH - 1, .height = 1 };

	g_assert_cmpint(v4l2cuse_format_fill(&pix), ==, 0);
	g_assert_cmpuint(pix.width, ==, V4L2CUSE_MAX_WIDTH);
	/* GREY and RGB keep odd sizes */
	pix = (struct v4l2_pix_format){ .pixelformat = V4L2_PIX_FMT_RGB24, .width = 3, .height = 1 };
	g_assert_cmpint(v4l2cuse_format_fill(&pix), ==, 0);
	g_assert_cmpuint(pix.bytesperline, ==, 9);
	g_assert_cmpuint(pix.sizeimage, ==, 9);
}

V4L2CUSE_TEST("/fmt/errors", test_errors)
{
	struct v4l2_pix_format pix, saved;

	memset(&pix, 0xab, sizeof(pix));
	pix.pixelformat = V4L2_PIX_FMT_SBGGR8;
	pix.width = 640;
	pix.height = 480;
	saved = pix;
	g_assert_cmpint(v4l2cuse_format_fill(&pix), ==, -EINVAL);
	g_assert_true(memcmp(&pix, &saved, sizeof(pix)) == 0);

	pix.pixelformat = V4L2_PIX_FMT_YUYV;
	pix.width = 0;
	g_assert_cmpint(v4l2cuse_format_fill(&pix), ==, -EINVAL);
	pix.width = 640;
	pix.height = 0;
	g_assert_cmpint(v4l2cuse_format_fill(&pix), ==, -EINVAL);

	pix.height = 480;
	pix.width = V4L2CUSE_MAX_WIDTH + 1;
	saved = pix;
	g_assert_cmpint(v4l2cuse_format_fill(&pix), ==, -EOVERFLOW);
	g_assert_true(memcmp(&pix, &saved, sizeof(pix)) == 0);
	pix.width = 0xffffffff;
	pix.height = 0xffffffff;
	g_assert_cmpint(v4l2cuse_format_fill(&pix), ==, -EOVERFLOW);
	pix.pixelformat = V4L2_PIX_FMT_MJPEG;
	g_assert_cmpint(v4l2cuse_format_fill(&pix), ==, -EOVERFLOW);
	pix.width = 640;
	pix.height = V4L2CUSE_MAX_HEIGHT + 1;
	g_assert_cmpint(v4l2cuse_format_fill(&pix), ==, -EOVERFLOW);

	/* the largest frame fits in 32 bits */
	pix.pixelformat = V4L2_PIX_FMT_XRGB32;
	pix.width = V4L2CUSE_MAX_WIDTH;
	pix.height = V4L2CUSE_MAX_HEIGHT;
	g_assert_cmpint(v4l2cuse_format_fill(&pix), ==, 0);
	g_assert_cmpuint(pix.sizeimage, ==, 8192u * 8192u * 4u);
}

V4L2CUSE_TEST("/fmt/colorimetry", test_colorimetry)
{
	for (size_t i = 0; i < G_N_ELEMENTS(expects); i++) {
		const struct v4l2cuse_format_info *info = v4l2cuse_format_info(expects[i].fourcc);
		static const uint32_t heights[] = { 240, 480, 718, 720, 1080 };

		for (size_t h = 0; h < G_N_ELEMENTS(heights); h++) {
			struct v4l2_pix_format pix = { .pixelformat = info->fourcc, .width = 640,
						       .height = heights[h] };

			g_assert_cmpint(v4l2cuse_format_fill(&pix), ==, 0);
			g_assert_cmpuint(pix.colorspace, !=, V4L2_COLORSPACE_DEFAULT);
			g_assert_cmpuint(pix.ycbcr_enc, !=, V4L2_YCBCR_ENC_DEFAULT);
			g_assert_cmpuint(pix.quantization, !=, V4L2_QUANTIZATION_DEFAULT);
			g_assert_cmpuint(pix.xfer_func, !=, V4L2_XFER_FUNC_DEFAULT);
			if (info->compressed) {
				g_assert_cmpuint(pix.colorspace, ==, V4L2_COLORSPACE_JPEG);
				g_assert_cmpuint(pix.quantization, ==, V4L2_QUANTIZATION_FULL_RANGE);
			} else if (info->yuv && heights[h] >= 720) {
				g_assert_cmpuint(pix.colorspace, ==, V4L2_COLORSPACE_REC709);
				g_assert_cmpuint(pix.ycbcr_enc, ==, V4L2_YCBCR_ENC_709);
				g_assert_cmpuint(pix.quantization, ==, V4L2_QUANTIZATION_LIM_RANGE);
				g_assert_cmpuint(pix.xfer_func, ==, V4L2_XFER_FUNC_709);
			} else if (info->yuv) {
				g_assert_cmpuint(pix.colorspace, ==, V4L2_COLORSPACE_SMPTE170M);
				g_assert_cmpuint(pix.ycbcr_enc, ==, V4L2_YCBCR_ENC_601);
				g_assert_cmpuint(pix.quantization, ==, V4L2_QUANTIZATION_LIM_RANGE);
			} else {
				g_assert_cmpuint(pix.colorspace, ==, V4L2_COLORSPACE_SRGB);
				g_assert_cmpuint(pix.quantization, ==, V4L2_QUANTIZATION_FULL_RANGE);
				g_assert_cmpuint(pix.xfer_func, ==, V4L2_XFER_FUNC_SRGB);
			}
			/* v4l2-compliance: JPEG colorspace only for (M)JPEG */
			if (!info->compressed)
				g_assert_cmpuint(pix.colorspace, !=, V4L2_COLORSPACE_JPEG);
		}
	}
}

V4L2CUSE_TEST("/fmt/idempotent", test_idempotent)
{
	/* TRY(G) == G: filling a filled format changes nothing */
	for (unsigned int i = 0; v4l2cuse_format_by_index(i); i++) {
		struct v4l2_pix_format a, b;

		memset(&a, 0xff, sizeof(a));
		a.pixelformat = v4l2cuse_format_by_index(i)->fourcc;
		a.width = 1279;
		a.height = 719;
		g_assert_cmpint(v4l2cuse_format_fill(&a), ==, 0);
		b = a;
		g_assert_cmpint(v4l2cuse_format_fill(&b), ==, 0);
		g_assert_true(memcmp(&a, &b, sizeof(a)) == 0);
	}
}
