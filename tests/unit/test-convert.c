/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sources/convert.c: exact repacks, round trips through every target within
 * tolerance, scaling, JPEG in and out, and bad input. (Colour matrices:
 * test-convert-colour.c.)
 */

#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "v4l2cuse/format.h"
#include "convert.h"
#include "jpeg.h"
#include "convert-util.h"
#include "test-main.h"

static const uint32_t all_targets[] = {
	V4L2_PIX_FMT_YUYV, V4L2_PIX_FMT_UYVY, V4L2_PIX_FMT_YVYU, V4L2_PIX_FMT_NV12,
	V4L2_PIX_FMT_NV21, V4L2_PIX_FMT_YUV420, V4L2_PIX_FMT_YVU420, V4L2_PIX_FMT_RGB24,
	V4L2_PIX_FMT_BGR24, V4L2_PIX_FMT_XRGB32, V4L2_PIX_FMT_XBGR32, V4L2_PIX_FMT_RGB565,
	V4L2_PIX_FMT_GREY, V4L2_PIX_FMT_MJPEG,
};

static double
mean_abs_diff(const uint8_t *a, const uint8_t *b, size_t n, int *ret_max)
{
	uint64_t sum = 0;
	int max = 0;

	for (size_t i = 0; i < n; i++) {
		int d = abs((int)a[i] - (int)b[i]);

		sum += (uint64_t)d;
		max = MAX(max, d);
	}
	if (ret_max)
		*ret_max = max;
	return (double)sum / (double)n;
}

/* RGB -> every target -> RGB stays close. */
V4L2CUSE_TEST("/convert/round-trip", test_round_trip)
{
	const uint32_t w = 64, h = 48;
	g_autofree uint8_t *rgb = make_rgb(w, h);
	struct v4l2cuse_convert *cv = v4l2cuse_convert_new();

	for (size_t i = 0; i < G_N_ELEMENTS(all_targets); i++) {
		uint32_t f = all_targets[i], used;
		struct v4l2_pix_format mid = pix_of(f, w, h), back = pix_of(V4L2_PIX_FMT_RGB24, w, h);
		g_autofree uint8_t *m = NULL, *b = NULL;
		double mad;
		int max;

		if (f == V4L2_PIX_FMT_GREY)
			continue;	/* no colour to get back; see test_grey */
		m = convert_new(cv, V4L2_PIX_FMT_RGB24, w, h, rgb, (size_t)w * h * 3, &mid, &used);
		b = convert_new(cv, f, w, h, m, used, &back, NULL);
		mad = mean_abs_diff(rgb, b, (size_t)w * h * 3, &max);
		g_test_message("%.4s: mean |d| %.2f, max %d", (const char *)&f, mad, max);
		g_assert_cmpfloat(mad, <, 3.0);
		g_assert_cmpint(max, <=, 10);
	}
	v4l2cuse_convert_free(cv);
}

/* Y'CbCr repacks are exact: YU12 -> X -> YU12 is the identity. */
V4L2CUSE_TEST("/convert/yuv-exact", test_yuv_exact)
{
	static const uint32_t fmts[] = {
		V4L2_PIX_FMT_NV12, V4L2_PIX_FMT_NV21, V4L2_PIX_FMT_YVU420, V4L2_PIX_FMT_YUV420,
	};
	const uint32_t w = 32, h = 16;
	g_autofree uint8_t *src = make_yu12(w, h);
	struct v4l2_pix_format yu12 = pix_of(V4L2_PIX_FMT_YUV420, w, h);
	struct v4l2cuse_convert *cv = v4l2cuse_convert_new();

	for (size_t i = 0; i < G_N_ELEMENTS(fmts); i++) {
		struct v4l2_pix_format mid = pix_of(fmts[i], w, h);
		g_autofree uint8_t *m = convert_new(cv, V4L2_PIX_FMT_YUV420, w, h, src,
						    yu12.sizeimage, &mid, NULL);
		g_autofree uint8_t *b = convert_new(cv, fmts[i], w, h, m, mid.sizeimage, &yu12,
						    NULL);

		g_assert_cmpmem(b, yu12.sizeimage, src, yu12.sizeimage);
	}

	/* 4:2:0 -> YUYV repeats chroma lines: pixel (x, y) has chroma (x/2, y/2). */
	for (uint32_t f = 0; f < 3; f++) {
		static const uint32_t packed[] = {
			V4L2_PIX_FMT_YUYV, V4L2_PIX_FMT_UYVY, V4L2_PIX_FMT_YVYU,
		};
		static const unsigned int offs[3][4] = {	/* y0 y1 u v */
			{ 0, 2, 1, 3 }, { 1, 3, 0, 2 }, { 0, 2, 3, 1 },
		};
		struct v4l2_pix_format out = pix_of(packed[f], w, h);
		g_autofree uint8_t *d = convert_new(cv, V4L2_PIX_FMT_YUV420, w, h, src,
						    yu12.sizeimage, &out, NULL);
		const uint8_t *u = src + w * h, *v = u + w * h / 4;

		for (uint32_t y = 0; y < h; y++) {
			for (uint32_t x = 0; x < w; x += 2) {
				const uint8_t *px = d + (y * w + x) * 2;

				g_assert_cmpuint(px[offs[f][0]], ==, src[y * w + x]);
				g_assert_cmpuint(px[offs[f][1]], ==, src[y * w + x + 1]);
				g_assert_cmpuint(px[offs[f][2]], ==, u[(y / 2) * (w / 2) + x / 2]);
				g_assert_cmpuint(px[offs[f][3]], ==, v[(y / 2) * (w / 2) + x / 2]);
			}
		}
	}
	v4l2cuse_convert_free(cv);
}

/* Planar 4:2:2, 4:4:4 and NV16 into YUYV: exact, or exact averages. */
V4L2CUSE_TEST("/convert/planar-inputs", test_planar_inputs)
{
	const uint32_t w = 8, h = 4;
	struct v4l2_pix_format out = pix_of(V4L2_PIX_FMT_YUYV, w, h);
	uint8_t p422[8 * 4 * 2], p444[8 * 4 * 3], nv16[8 * 4 * 2];
	struct v4l2cuse_convert *cv = v4l2cuse_convert_new();

	for (uint32_t i = 0; i < w * h; i++)
		p422[i] = p444[i] = nv16[i] = (uint8_t)(50 + i);
	for (uint32_t y = 0; y < h; y++) {
		for (uint32_t x = 0; x < w / 2; x++) {
			uint8_t cb = (uint8_t)(100 + y * 10 + x), cr = (uint8_t)(200 - y * 10 - x);

			p422[w * h + y * (w / 2) + x] = cb;
			p422[w * h + w * h / 2 + y * (w / 2) + x] = cr;
			nv16[w * h + y * w + 2 * x] = cb;
			nv16[w * h + y * w + 2 * x + 1] = cr;
			/* 4:4:4: two samples whose average is cb / cr */
			p444[w * h + y * w + 2 * x] = (uint8_t)(cb - 3);
			p444[w * h + y * w + 2 * x + 1] = (uint8_t)(cb + 3);
			p444[2 * w * h + y * w + 2 * x] = (uint8_t)(cr + 5);
			p444[2 * w * h + y * w + 2 * x + 1] = (uint8_t)(cr - 5);
		}
	}
	{
		g_autofree uint8_t *a = convert_new(cv, V4L2_PIX_FMT_YUV422P, w, h, p422,
						    sizeof(p422), &out, NULL);
		g_autofree uint8_t *b = convert_new(cv, V4L2CUSE_PIX_FMT_YUV444P, w, h, p444, sizeof(p444),
						    &out, NULL);
		g_autofree uint8_t *c = convert_new(cv, V4L2_PIX_FMT_NV16, w, h, nv16,
						    sizeof(nv16), &out, NULL);

		g_assert_cmpmem(a, out.sizeimage, b, out.sizeimage);
		g_assert_cmpmem(a, out.sizeimage, c, out.sizeimage);
		for (uint32_t y = 0; y < h; y++) {
			for (uint32_t x = 0; x < w / 2; x++) {
				const uint8_t *px = a + (y * w + 2 * x) * 2;

				g_assert_cmpuint(px[0], ==, 50 + y * w + 2 * x);
				g_assert_cmpuint(px[1], ==, 100 + y * 10 + x);
				g_assert_cmpuint(px[2], ==, 50 + y * w + 2 * x + 1);
				g_assert_cmpuint(px[3], ==, 200 - y * 10 - x);
			}
		}
	}
	v4l2cuse_convert_free(cv);
}

/* A padded input (bytesperline > width * bpp) is copied without the padding. */
V4L2CUSE_TEST("/convert/padded-copy", test_padded_copy)
{
	const uint32_t w = 6, h = 3, bpl = 16;
	uint8_t src[16 * 3];
	struct v4l2_pix_format out = pix_of(V4L2_PIX_FMT_YUYV, w, h);
	struct v4l2cuse_image in = {
		.fourcc = V4L2_PIX_FMT_YUYV, .width = w, .height = h, .bytesperline = bpl,
		.data = src, .size = sizeof(src),
	};
	uint8_t dst[6 * 3 * 2];
	uint32_t used;
	struct v4l2cuse_convert *cv = v4l2cuse_convert_new();

	for (unsigned int i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)i;
	g_assert_cmpint(v4l2cuse_convert_frame(cv, &in, &out, dst, sizeof(dst), &used), ==, 0);
	g_assert_cmpuint(used, ==, sizeof(dst));
	for (uint32_t y = 0; y < h; y++)
		g_assert_cmpmem(dst + y * w * 2, w * 2, src + y * bpl, w * 2);

	/* Too short for its size: refused, not read past. */
	in.size = sizeof(src) - 1;
	g_assert_cmpint(v4l2cuse_convert_frame(cv, &in, &out, dst, sizeof(dst), &used), ==,
			-EINVAL);
	v4l2cuse_convert_free(cv);
}

/* GREY is full-range luma: limited-range Y 16 -> 0, 235 -> 255. */
V4L2CUSE_TEST("/convert/grey", test_grey)
{
	const uint32_t w = 4, h = 2;
	uint8_t yu12[4 * 2 * 3 / 2] = { 16, 235, 126, 0, 255, 16, 235, 126, 128, 128, 128, 128 };
	uint8_t grey[8] = { 7, 8, 9, 10, 11, 12, 13, 14 };
	struct v4l2_pix_format out = pix_of(V4L2_PIX_FMT_GREY, w, h);
	struct v4l2cuse_convert *cv = v4l2cuse_convert_new();
	g_autofree uint8_t *a = convert_new(cv, V4L2_PIX_FMT_YUV420, w, h, yu12, sizeof(yu12),
					    &out, NULL);
	g_autofree uint8_t *b = convert_new(cv, V4L2_PIX_FMT_GREY, w, h, grey, sizeof(grey),
					    &out, NULL);
	struct v4l2_pix_format big = pix_of(V4L2_PIX_FMT_GREY, 8, 4);
	g_autofree uint8_t *c = NULL;

	g_assert_cmpuint(a[0], ==, 0);
	g_assert_cmpuint(a[1], ==, 255);
	g_assert_cmpuint(a[2], ==, 128);
	g_assert_cmpuint(a[3], ==, 0);
	g_assert_cmpuint(a[4], ==, 255);
	g_assert_cmpmem(b, 8, grey, 8);

	/* Scaled grey stays grey (no range mapping twice). */
	memset(grey, 77, sizeof(grey));
	c = convert_new(cv, V4L2_PIX_FMT_GREY, w, h, grey, sizeof(grey), &big, NULL);
	for (unsigned int i = 0; i < big.sizeimage; i++)
		g_assert_cmpuint(c[i], ==, 77);
	v4l2cuse_convert_free(cv);
}

/*
 * RGB565 ("rrrrrggg gggbbbbb", little endian) with padded lines: the same
 * pixels as the RGB24 it widens to (the top bits repeated into the low
 * ones, so full red is 255), for RGB and Y'CbCr targets alike (red stays
 * red; the padding, blue here, is never read).
 */
V4L2CUSE_TEST("/convert/rgb565", test_rgb565)
{
	static const uint32_t targets[] = {
		V4L2_PIX_FMT_RGB24, V4L2_PIX_FMT_BGR24, V4L2_PIX_FMT_YUYV, V4L2_PIX_FMT_NV12,
		V4L2_PIX_FMT_YUV420, V4L2_PIX_FMT_GREY,
	};
	const uint32_t w = 16, h = 8, bpl = 40;
	g_autofree uint8_t *in = g_malloc((size_t)bpl * h);
	g_autofree uint8_t *rgb = g_malloc((size_t)w * h * 3);
	struct v4l2cuse_convert *cv = v4l2cuse_convert_new();

	for (uint32_t y = 0; y < h; y++) {
		for (uint32_t x = 0; x < bpl / 2; x++) {
			in[y * bpl + 2 * x] = x < w ? 0x00 : 0x1f;
			in[y * bpl + 2 * x + 1] = x < w ? 0xf8 : 0x00;
		}
	}
	for (size_t i = 0; i < (size_t)w * h; i++) {
		rgb[3 * i] = 255;
		rgb[3 * i + 1] = 0;
		rgb[3 * i + 2] = 0;
	}
	for (size_t t = 0; t < G_N_ELEMENTS(targets); t++) {
		struct v4l2_pix_format out = pix_of(targets[t], w, h);
		struct v4l2cuse_image img = {
			.fourcc = V4L2_PIX_FMT_RGB565, .width = w, .height = h, .bytesperline = bpl,
			.data = in, .size = (size_t)bpl * h,
		};
		g_autofree uint8_t *want = convert_new(cv, V4L2_PIX_FMT_RGB24, w, h, rgb,
						       (size_t)w * h * 3, &out, NULL);
		g_autofree uint8_t *got = g_malloc0(out.sizeimage);
		uint32_t used = 0;

		g_assert_cmpint(v4l2cuse_convert_frame(cv, &img, &out, got, out.sizeimage, &used),
				==, 0);
		g_assert_cmpuint(used, ==, out.sizeimage);
		g_assert_cmpmem(got, used, want, out.sizeimage);
	}
	v4l2cuse_convert_free(cv);
}

/* Scaling: flat stays flat exactly, gradients stay gradients. */
V4L2CUSE_TEST("/convert/scale", test_scale)
{
	static const struct {
		uint32_t w, h;
	} sizes[] = { { 320, 240 }, { 64, 48 }, { 16, 8 }, { 2, 2 }, { 1000, 62 }, { 30, 200 } };
	const uint32_t w = 64, h = 48;
	g_autofree uint8_t *flat = g_malloc((size_t)w * h * 3);
	g_autofree uint8_t *ramp = g_malloc((size_t)w * h * 3);
	struct v4l2cuse_convert *cv = v4l2cuse_convert_new();

	for (uint32_t i = 0; i < w * h; i++) {
		flat[3 * i] = 10;
		flat[3 * i + 1] = 150;
		flat[3 * i + 2] = 250;
		ramp[3 * i] = ramp[3 * i + 1] = ramp[3 * i + 2] = (uint8_t)(i % w * 4);
	}
	for (size_t s = 0; s < G_N_ELEMENTS(sizes); s++) {
		struct v4l2_pix_format out = pix_of(V4L2_PIX_FMT_RGB24, sizes[s].w, sizes[s].h);
		g_autofree uint8_t *a = convert_new(cv, V4L2_PIX_FMT_RGB24, w, h, flat,
						    (size_t)w * h * 3, &out, NULL);
		g_autofree uint8_t *b = convert_new(cv, V4L2_PIX_FMT_RGB24, w, h, ramp,
						    (size_t)w * h * 3, &out, NULL);

		for (uint32_t i = 0; i < out.width * out.height; i++) {
			g_assert_cmpuint(a[3 * i], ==, 10);
			g_assert_cmpuint(a[3 * i + 1], ==, 150);
			g_assert_cmpuint(a[3 * i + 2], ==, 250);
		}
		/* Monotonic along every line, first column dark, last bright. */
		for (uint32_t y = 0; y < out.height; y++) {
			const uint8_t *row = b + (size_t)y * out.width * 3;

			for (uint32_t x = 1; x < out.width; x++)
				g_assert_cmpuint(row[3 * x], >=, row[3 * (x - 1)]);
			if (out.width > 2) {
				g_assert_cmpuint(row[0], <=, 40);
				g_assert_cmpuint(row[3 * (out.width - 1)], >=, 220);
			}
		}
	}

	/* Y'CbCr planes scale too: a flat YU12 frame to 4:2:0 and 4:2:2 targets. */
	{
		g_autofree uint8_t *yu = g_malloc((size_t)w * h * 3 / 2);
		struct v4l2_pix_format nv = pix_of(V4L2_PIX_FMT_NV12, 200, 100);
		struct v4l2_pix_format yuyv = pix_of(V4L2_PIX_FMT_YUYV, 30, 10);
		g_autofree uint8_t *a = NULL, *b = NULL;

		memset(yu, 90, (size_t)w * h);
		memset(yu + w * h, 60, (size_t)w * h / 4);
		memset(yu + w * h + w * h / 4, 190, (size_t)w * h / 4);
		a = convert_new(cv, V4L2_PIX_FMT_YUV420, w, h, yu, (size_t)w * h * 3 / 2, &nv, NULL);
		b = convert_new(cv, V4L2_PIX_FMT_YUV420, w, h, yu, (size_t)w * h * 3 / 2, &yuyv,
				NULL);
		for (uint32_t i = 0; i < 200 * 100; i++)
			g_assert_cmpuint(a[i], ==, 90);
		for (uint32_t i = 0; i < 200 * 50; i++)
			g_assert_cmpuint(a[200 * 100 + i], ==, i % 2 ? 190 : 60);
		for (uint32_t i = 0; i < 30 * 10; i += 2) {
			g_assert_cmpuint(b[2 * i], ==, 90);
			g_assert_cmpuint(b[2 * i + 1], ==, 60);
			g_assert_cmpuint(b[2 * i + 3], ==, 190);
		}

		/* Y'CbCr to RGB at another size scales before converting: same colour. */
		{
			struct v4l2_pix_format same = pix_of(V4L2_PIX_FMT_XBGR32, w, h);
			struct v4l2_pix_format other = pix_of(V4L2_PIX_FMT_XBGR32, 100, 60);
			g_autofree uint8_t *c = convert_new(cv, V4L2_PIX_FMT_YUV420, w, h, yu,
							    (size_t)w * h * 3 / 2, &same, NULL);
			g_autofree uint8_t *d = convert_new(cv, V4L2_PIX_FMT_YUV420, w, h, yu,
							    (size_t)w * h * 3 / 2, &other, NULL);

			for (uint32_t i = 0; i < 100 * 60; i++)
				g_assert_cmpmem(d + 4 * i, 4, c, 4);
		}
	}
	v4l2cuse_convert_free(cv);
}

/* MJPEG out decodes back; MJPEG in at the same size passes through. */
V4L2CUSE_TEST("/convert/jpeg", test_jpeg)
{
	const uint32_t w = 64, h = 48;
	g_autofree uint8_t *rgb = make_rgb(w, h);
	struct v4l2_pix_format mj = pix_of(V4L2_PIX_FMT_MJPEG, w, h);
	struct v4l2_pix_format mj_small = pix_of(V4L2_PIX_FMT_MJPEG, 32, 24);
	struct v4l2_pix_format back = pix_of(V4L2_PIX_FMT_RGB24, w, h);
	struct v4l2cuse_convert *cv = v4l2cuse_convert_new();
	g_autofree uint8_t *jpeg = NULL, *copy = NULL, *small = NULL, *dec = NULL;
	uint32_t used, used2, used3, jw = 0, jh = 0;
	struct v4l2cuse_image in;
	uint8_t *bad;

	jpeg = convert_new(cv, V4L2_PIX_FMT_RGB24, w, h, rgb, (size_t)w * h * 3, &mj, &used);
	g_assert_cmpuint(used, >, 100);
	g_assert_cmpuint(used, <, mj.sizeimage);
	g_assert_cmpuint(jpeg[0], ==, 0xff);
	g_assert_cmpuint(jpeg[1], ==, 0xd8);
	g_assert_cmpuint(jpeg[used - 2], ==, 0xff);
	g_assert_cmpuint(jpeg[used - 1], ==, 0xd9);
	g_assert_cmpint(v4l2cuse_jpeg_size(jpeg, used, &jw, &jh), ==, 0);
	g_assert_cmpuint(jw, ==, w);
	g_assert_cmpuint(jh, ==, h);

	copy = convert_new(cv, V4L2_PIX_FMT_MJPEG, w, h, jpeg, used, &mj, &used2);
	g_assert_cmpmem(copy, used2, jpeg, used);
	small = convert_new(cv, V4L2_PIX_FMT_MJPEG, w, h, jpeg, used, &mj_small, &used3);
	g_assert_cmpint(v4l2cuse_jpeg_size(small, used3, &jw, &jh), ==, 0);
	g_assert_cmpuint(jw, ==, 32);
	dec = convert_new(cv, V4L2_PIX_FMT_JPEG, w, h, jpeg, used, &back, NULL);
	g_assert_cmpfloat(mean_abs_diff(rgb, dec, (size_t)w * h * 3, NULL), <, 3.0);

	/* Garbage and truncation. */
	bad = g_memdup2(jpeg, used);
	memset(bad + 20, 0x55, 40);
	in = (struct v4l2cuse_image){
		.fourcc = V4L2_PIX_FMT_MJPEG, .width = w, .height = h, .data = bad, .size = 40
	};
	g_assert_cmpint(v4l2cuse_convert_frame(cv, &in, &back, dec, back.sizeimage, &used2), ==,
			-EBADMSG);
	in.data = jpeg;
	in.size = used - 50;
	v4l2cuse_convert_set_strict_jpeg(cv, true);
	g_assert_cmpint(v4l2cuse_convert_frame(cv, &in, &back, dec, back.sizeimage, &used2), ==,
			-EBADMSG);
	v4l2cuse_convert_set_strict_jpeg(cv, false);
	g_assert_cmpint(v4l2cuse_convert_frame(cv, &in, &back, dec, back.sizeimage, &used2), ==, 0);
	in.size = 3;
	g_assert_cmpint(v4l2cuse_convert_frame(cv, &in, &back, dec, back.sizeimage, &used2), ==,
			-EBADMSG);
	g_assert_cmpint(v4l2cuse_jpeg_size(bad, 30, &jw, &jh), ==, -EBADMSG);
	g_free(bad);

	/* A size that cannot fit. */
	g_assert_cmpint(
		v4l2cuse_convert_frame(cv,
				       &(struct v4l2cuse_image){ .fourcc = V4L2_PIX_FMT_RGB24,
								 .width = w,
								 .height = h,
								 .data = rgb,
								 .size = (size_t)w * h * 3 },
				       &mj, jpeg, 10, &used),
		==, -EINVAL);
	v4l2cuse_convert_free(cv);
}

V4L2CUSE_TEST("/convert/bad-args", test_bad_args)
{
	uint8_t buf[64 * 48 * 4] = { 0 };
	struct v4l2_pix_format out = pix_of(V4L2_PIX_FMT_YUYV, 64, 48);
	struct v4l2cuse_convert *cv = v4l2cuse_convert_new();
	struct v4l2cuse_image in = {
		.fourcc = v4l2_fourcc('A', 'B', 'C', 'D'), .width = 8, .height = 8,
		.data = buf, .size = sizeof(buf),
	};
	uint32_t used;
	int r;

	/* Unknown input, odd subsampled input, odd target width. */
	r = v4l2cuse_convert_frame(cv, &in, &out, buf, sizeof(buf), &used);
	g_assert_cmpint(r, ==, -EINVAL);
	in.fourcc = V4L2_PIX_FMT_YUYV;
	in.width = 7;
	r = v4l2cuse_convert_frame(cv, &in, &out, buf, sizeof(buf), &used);
	g_assert_cmpint(r, ==, -EINVAL);
	in.fourcc = V4L2_PIX_FMT_GREY;
	in.width = 8;
	out.width = 63;
	r = v4l2cuse_convert_frame(cv, &in, &out, buf, sizeof(buf), &used);
	g_assert_cmpint(r, ==, -EINVAL);
	g_assert_false(v4l2cuse_convert_input_supported(v4l2_fourcc('H', '2', '6', '4')));
	g_assert_true(v4l2cuse_convert_input_supported(V4L2_PIX_FMT_NV21));
	g_assert_cmpuint(v4l2cuse_convert_input_size(V4L2_PIX_FMT_YUV420, 4, 2, 0), ==, 12);
	g_assert_cmpuint(v4l2cuse_convert_input_size(V4L2_PIX_FMT_YUV420, 4, 2, 8), ==, 24);
	g_assert_cmpuint(v4l2cuse_convert_input_size(V4L2_PIX_FMT_YUYV, 4, 2, 4), ==, 0);
	g_assert_cmpuint(v4l2cuse_convert_input_size(V4L2_PIX_FMT_MJPEG, 4, 2, 0), ==, 0);
	g_assert_cmpuint(v4l2cuse_convert_input_size(V4L2_PIX_FMT_GREY, 9000, 2, 0), ==, 0);
	v4l2cuse_convert_free(cv);
}

/* Odd-sized RGB and grey input reach 4:2:0 targets (cropped, then scaled). */
V4L2CUSE_TEST("/convert/odd-sizes", test_odd_sizes)
{
	const uint32_t w = 33, h = 17;
	g_autofree uint8_t *rgb = g_malloc((size_t)w * h * 3);
	struct v4l2_pix_format out = pix_of(V4L2_PIX_FMT_NV12, 32, 16);
	struct v4l2cuse_convert *cv = v4l2cuse_convert_new();
	g_autofree uint8_t *d = NULL;

	memset(rgb, 200, (size_t)w * h * 3);
	d = convert_new(cv, V4L2_PIX_FMT_RGB24, w, h, rgb, (size_t)w * h * 3, &out, NULL);
	for (unsigned int i = 0; i < 32 * 16; i++)
		g_assert_cmpint(abs((int)d[i] - 188), <=, 2);	/* BT.601: 16 + 219 * 200 / 255 */
	v4l2cuse_convert_free(cv);
}
