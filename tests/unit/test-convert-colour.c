/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sources/convert.c's colour: BT.601 for SD and BT.709 for HD, checked
 * against reference formulas, across every path and at a camera's sizes.
 */

#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "v4l2cuse/format.h"
#include "convert.h"
#include "colour-ref.h"
#include "convert-util.h"
#include "jpeg.h"
#include "test-main.h"

/* --- colour: BT.601 for SD, BT.709 for HD -------------------------------- */

static const uint8_t colours[][3] = {
	{ 255, 0, 0 }, { 0, 255, 0 }, { 0, 0, 255 }, { 255, 255, 0 }, { 0, 255, 255 },
	{ 255, 0, 255 }, { 200, 100, 50 }, { 60, 200, 120 }, { 255, 255, 255 }, { 0, 0, 0 },
	{ 128, 128, 128 },
};

/* A flat @rgb picture of @w x @h as RGB24. */
static uint8_t *
make_flat_rgb(uint32_t w, uint32_t h, const uint8_t rgb[3])
{
	uint8_t *p = g_malloc((size_t)w * h * 3);

	for (size_t i = 0; i < (size_t)w * h; i++)
		memcpy(p + 3 * i, rgb, 3);
	return p;
}

/*
 * A flat colour to YUYV at 640x480 gives BT.601 values, at 1280x720 BT.709
 * (what format.c reports for those sizes), and back to the colour; the two
 * matrices differ by far more than the tolerance for these colours.
 */
V4L2CUSE_TEST("/convert/colour-matrix", test_colour_matrix)
{
	static const struct {
		uint32_t w, h;
		bool bt709;
	} sizes[] = { { 640, 480, false }, { 720, 576, false }, { 1280, 720, true } };
	struct v4l2cuse_convert *cv = v4l2cuse_convert_new();

	for (size_t s = 0; s < G_N_ELEMENTS(sizes); s++) {
		uint32_t w = sizes[s].w, h = sizes[s].h;
		struct v4l2_pix_format yuyv = pix_of(V4L2_PIX_FMT_YUYV, w, h);
		struct v4l2_pix_format rgb24 = pix_of(V4L2_PIX_FMT_RGB24, w, h);

		g_assert_cmpuint(yuyv.ycbcr_enc, ==,
				 sizes[s].bt709 ? V4L2_YCBCR_ENC_709 : V4L2_YCBCR_ENC_601);
		for (size_t c = 0; c < G_N_ELEMENTS(colours); c++) {
			const double in[3] = { colours[c][0], colours[c][1], colours[c][2] };
			g_autofree uint8_t *rgb = make_flat_rgb(w, h, colours[c]);
			g_autofree uint8_t *y = NULL, *back = NULL;
			double want[3], other[3], ycc_back[3], rgb_back[3];
			/* the middle pixel pair */
			const uint8_t *px = NULL;

			ref_rgb_to_ycc(sizes[s].bt709, in, want);
			ref_rgb_to_ycc(!sizes[s].bt709, in, other);
			y = convert_new(cv, V4L2_PIX_FMT_RGB24, w, h, rgb, rgb24.sizeimage, &yuyv,
					NULL);
			px = y + ((size_t)(h / 2) * w + w / 2) * 2;
			g_test_message("%ux%u (%u %u %u): Y'CbCr %u %u %u, want %.1f %.1f %.1f", w,
				       h, colours[c][0], colours[c][1], colours[c][2], px[0], px[1],
				       px[3], want[0], want[1], want[2]);
			g_assert_cmpfloat(fabs(px[0] - want[0]), <=, 1.5);
			g_assert_cmpfloat(fabs(px[2] - want[0]), <=, 1.5);
			g_assert_cmpfloat(fabs(px[1] - want[1]), <=, 1.5);
			g_assert_cmpfloat(fabs(px[3] - want[2]), <=, 1.5);
			/* the tolerance tells the matrices apart (not for greys) */
			if (colours[c][0] != colours[c][1] || colours[c][1] != colours[c][2])
				g_assert_true(fabs(want[0] - other[0]) > 3 ||
					      fabs(want[1] - other[1]) > 3 ||
					      fabs(want[2] - other[2]) > 3);

			/*
			 * Back: the reference of the 8-bit samples within 2, the
			 * colour within 5 (a step of Cb is 2 steps of B').
			 */
			ycc_back[0] = px[0];
			ycc_back[1] = px[1];
			ycc_back[2] = px[3];
			ref_ycc_to_rgb(sizes[s].bt709, ycc_back, rgb_back);
			back = convert_new(cv, V4L2_PIX_FMT_YUYV, w, h, y, yuyv.sizeimage, &rgb24,
					   NULL);
			px = back + ((size_t)(h / 2) * w + w / 2) * 3;
			for (unsigned int i = 0; i < 3; i++) {
				g_assert_cmpfloat(fabs(px[i] - rgb_back[i]), <=, 2.5);
				g_assert_cmpint(abs(px[i] - colours[c][i]), <=, 5);
			}
		}
	}
	v4l2cuse_convert_free(cv);
}

/*
 * Y'CbCr across sizes and labels: a BT.601 frame (640x480 YUYV) scaled to
 * 1280x720 comes out in BT.709 values; a frame labelled BT.709 by the
 * caller (struct v4l2cuse_image) is read as such; MJPEG is JFIF's
 * full-range BT.601 whatever its size.
 */
V4L2CUSE_TEST("/convert/colour-across", test_colour_across)
{
	const uint8_t *rgb = colours[6];	/* 200, 100, 50 */
	const double in[3] = { rgb[0], rgb[1], rgb[2] };
	struct v4l2cuse_convert *cv = v4l2cuse_convert_new();
	struct v4l2_pix_format sd = pix_of(V4L2_PIX_FMT_YUYV, 640, 480);
	struct v4l2_pix_format hd = pix_of(V4L2_PIX_FMT_YUYV, 1280, 720);
	struct v4l2_pix_format sd_rgb = pix_of(V4L2_PIX_FMT_RGB24, 640, 480);
	struct v4l2_pix_format hd_mjpg = pix_of(V4L2_PIX_FMT_MJPEG, 1280, 720);
	g_autofree uint8_t *flat = make_flat_rgb(640, 480, rgb);
	g_autofree uint8_t *y601 = NULL, *y709 = NULL, *back = NULL, *jpg = NULL, *dec = NULL;
	g_autofree uint8_t *labelled = g_malloc(sd.sizeimage);
	double w601[3], w709[3];
	struct v4l2cuse_image img;
	const uint8_t *px;
	uint32_t used;

	ref_rgb_to_ycc(false, in, w601);
	ref_rgb_to_ycc(true, in, w709);
	y601 = convert_new(cv, V4L2_PIX_FMT_RGB24, 640, 480, flat, sd_rgb.sizeimage, &sd, NULL);
	y709 = convert_new(cv, V4L2_PIX_FMT_YUYV, 640, 480, y601, sd.sizeimage, &hd, NULL);
	px = y709 + ((size_t)360 * 1280 + 640) * 2;
	g_assert_cmpfloat(fabs(px[0] - w709[0]), <=, 2);
	g_assert_cmpfloat(fabs(px[1] - w709[1]), <=, 2);
	g_assert_cmpfloat(fabs(px[3] - w709[2]), <=, 2);

	/* 640x480 YUYV holding BT.709 values, labelled so: the colour comes back. */
	for (size_t i = 0; i < (size_t)640 * 480 / 2; i++) {
		labelled[4 * i] = labelled[4 * i + 2] = (uint8_t)lround(w709[0]);
		labelled[4 * i + 1] = (uint8_t)lround(w709[1]);
		labelled[4 * i + 3] = (uint8_t)lround(w709[2]);
	}
	img = (struct v4l2cuse_image){
		.fourcc = V4L2_PIX_FMT_YUYV, .width = 640, .height = 480, .data = labelled,
		.size = sd.sizeimage, .ycbcr_enc = V4L2_YCBCR_ENC_709,
		.quantization = V4L2_QUANTIZATION_LIM_RANGE,
	};
	back = g_malloc(sd_rgb.sizeimage);
	g_assert_cmpint(v4l2cuse_convert_frame(cv, &img, &sd_rgb, back, sd_rgb.sizeimage, &used),
			==, 0);
	for (unsigned int i = 0; i < 3; i++)
		g_assert_cmpint(abs(back[((size_t)240 * 640 + 320) * 3 + i] - rgb[i]), <=, 3);
	/* Unlabelled, the same bytes are BT.601 at this size: another colour. */
	img.ycbcr_enc = 0;
	img.quantization = 0;
	g_assert_cmpint(v4l2cuse_convert_frame(cv, &img, &sd_rgb, back, sd_rgb.sizeimage, &used),
			==, 0);
	g_assert_cmpint(abs(back[((size_t)240 * 640 + 320) * 3] - rgb[0]), >, 6);

	/* BT.709 YUYV to MJPEG: the JPEG holds full-range BT.601 samples. */
	jpg = convert_new(cv, V4L2_PIX_FMT_YUYV, 1280, 720, y709, hd.sizeimage, &hd_mjpg, &used);
	{
		struct jpeg_decompress_struct d;
		struct v4l2cuse_jpeg_err err;
		JSAMPROW row;
		double jf[3];
		double kr = 0.299, kb = 0.114;
		double yv = kr * in[0] + (1 - kr - kb) * in[1] + kb * in[2];

		jf[0] = yv;
		jf[1] = 128 + (in[2] - yv) / (2 * (1 - kb));
		jf[2] = 128 + (in[0] - yv) / (2 * (1 - kr));
		d.err = v4l2cuse_jpeg_err_init(&err);
		jpeg_create_decompress(&d);
		g_assert_cmpint(setjmp(err.jb), ==, 0);
		jpeg_mem_src(&d, jpg, used);
		jpeg_read_header(&d, TRUE);
		d.out_color_space = JCS_YCbCr;	/* the stored samples, no conversion */
		jpeg_start_decompress(&d);
		dec = g_malloc((size_t)d.output_width * 3);
		row = dec;
		while (d.output_scanline <= 360)
			jpeg_read_scanlines(&d, &row, 1);
		for (unsigned int i = 0; i < 3; i++)
			g_assert_cmpfloat(fabs(dec[640 * 3 + i] - jf[i]), <=, 3);
		jpeg_abort_decompress(&d);
		jpeg_destroy_decompress(&d);
	}
	v4l2cuse_convert_free(cv);
}

/*
 * libyuv's SIMD paths against the reference formulas, pixel by pixel, on a
 * picture with every pixel different: R'G'B' -> YU12 (BT.601 at 640x480 is
 * libyuv's ARGBToI420, BT.709 at 1280x720 ours) and YU12 -> R'G'B'
 * (libyuv's I420ToRGB24Matrix with the constants of each matrix).
 */
V4L2CUSE_TEST("/convert/colour-reference", test_colour_reference)
{
	static const struct {
		uint32_t w, h;
		bool bt709;
	} sizes[] = { { 640, 480, false }, { 1280, 720, true } };
	struct v4l2cuse_convert *cv = v4l2cuse_convert_new();

	for (size_t s = 0; s < G_N_ELEMENTS(sizes); s++) {
		uint32_t w = sizes[s].w, h = sizes[s].h, cw = w / 2;
		bool bt709 = sizes[s].bt709;
		struct v4l2_pix_format yu12 = pix_of(V4L2_PIX_FMT_YUV420, w, h);
		struct v4l2_pix_format rgb24 = pix_of(V4L2_PIX_FMT_RGB24, w, h);
		g_autofree uint8_t *rgb = make_rgb(w, h);
		g_autofree uint8_t *ycc = NULL, *back = NULL, *src = make_yu12(w, h);
		int max_y = 0, max_c = 0, max_rgb = 0;

		/* R'G'B' -> Y'CbCr 4:2:0 (chroma from the mean of each 2x2 block) */
		ycc = convert_new(cv, V4L2_PIX_FMT_RGB24, w, h, rgb, rgb24.sizeimage, &yu12, NULL);
		for (uint32_t y = 0; y < h; y++) {
			for (uint32_t x = 0; x < w; x++) {
				const uint8_t *p = rgb + ((size_t)y * w + x) * 3;
				double in[3] = { p[0], p[1], p[2] }, want[3];

				ref_rgb_to_ycc(bt709, in, want);
				max_y = MAX(max_y, (int)lround(fabs(ycc[(size_t)y * w + x] - want[0])));
			}
		}
		for (uint32_t y = 0; y < h / 2; y++) {
			for (uint32_t x = 0; x < cw; x++) {
				double mean[3] = { 0 }, want[3];

				for (unsigned int k = 0; k < 4; k++) {
					const uint8_t *p = rgb + ((size_t)(2 * y + k / 2) * w +
								  2 * x + k % 2) * 3;

					for (unsigned int i = 0; i < 3; i++)
						mean[i] += p[i] / 4.0;
				}
				ref_rgb_to_ycc(bt709, mean, want);
				max_c = MAX(max_c, (int)lround(fabs(
					ycc[(size_t)w * h + (size_t)y * cw + x] - want[1])));
				max_c = MAX(max_c, (int)lround(fabs(
					ycc[(size_t)w * h * 5 / 4 + (size_t)y * cw + x] - want[2])));
			}
		}

		/* Y'CbCr 4:2:0 -> R'G'B' (each chroma sample for its 2x2 block) */
		back = convert_new(cv, V4L2_PIX_FMT_YUV420, w, h, src, yu12.sizeimage, &rgb24, NULL);
		for (uint32_t y = 0; y < h; y++) {
			for (uint32_t x = 0; x < w; x++) {
				size_t c = (size_t)(y / 2) * cw + x / 2;
				double in[3] = { src[(size_t)y * w + x], src[(size_t)w * h + c],
						 src[(size_t)w * h * 5 / 4 + c] }, want[3];
				const uint8_t *p = back + ((size_t)y * w + x) * 3;

				ref_ycc_to_rgb(bt709, in, want);
				for (unsigned int i = 0; i < 3; i++)
					max_rgb = MAX(max_rgb, (int)lround(fabs(p[i] - want[i])));
			}
		}
		g_test_message("%ux%u %s: max |d| Y' %d, CbCr %d, R'G'B' %d", w, h,
			       bt709 ? "BT.709" : "BT.601", max_y, max_c, max_rgb);
		g_assert_cmpint(max_y, <=, 1);
		g_assert_cmpint(max_c, <=, 2);
		g_assert_cmpint(max_rgb, <=, 2);
	}
	v4l2cuse_convert_free(cv);
}

/*
 * A camera's colorimetry (its G_FMT): DEFAULT stands for the kernel's
 * default of the colorspace; a 1280x720 sRGB camera's YUYV is BT.601, not
 * the BT.709 format.c would assume at that size.
 */
V4L2CUSE_TEST("/convert/colour-camera", test_colour_camera)
{
	const uint8_t *rgb = colours[6];
	const double in[3] = { rgb[0], rgb[1], rgb[2] };
	struct v4l2_pix_format cam = pix_of(V4L2_PIX_FMT_YUYV, 1280, 720);
	struct v4l2_pix_format out = pix_of(V4L2_PIX_FMT_RGB24, 1280, 720);
	struct v4l2cuse_image img = { .fourcc = V4L2_PIX_FMT_YUYV, .width = 1280, .height = 720 };
	g_autofree uint8_t *yuyv = g_malloc(cam.sizeimage), *back = g_malloc(out.sizeimage);
	struct v4l2cuse_convert *cv = v4l2cuse_convert_new();
	double w601[3];
	uint32_t used;

	/* no colorspace: left alone */
	cam.colorspace = 0;
	v4l2cuse_convert_image_colorimetry(&img, &cam);
	g_assert_cmpuint(img.ycbcr_enc, ==, 0);
	g_assert_cmpuint(img.quantization, ==, 0);
	cam.colorspace = V4L2_COLORSPACE_REC709;
	cam.ycbcr_enc = V4L2_YCBCR_ENC_DEFAULT;
	cam.quantization = V4L2_QUANTIZATION_DEFAULT;
	v4l2cuse_convert_image_colorimetry(&img, &cam);
	g_assert_cmpuint(img.ycbcr_enc, ==, V4L2_YCBCR_ENC_709);
	g_assert_cmpuint(img.quantization, ==, V4L2_QUANTIZATION_LIM_RANGE);
	cam.colorspace = V4L2_COLORSPACE_SRGB;
	v4l2cuse_convert_image_colorimetry(&img, &cam);
	g_assert_cmpuint(img.ycbcr_enc, ==, V4L2_YCBCR_ENC_601);
	g_assert_cmpuint(img.quantization, ==, V4L2_QUANTIZATION_LIM_RANGE);

	ref_rgb_to_ycc(false, in, w601);
	for (size_t i = 0; i < (size_t)1280 * 720 / 2; i++) {
		yuyv[4 * i] = yuyv[4 * i + 2] = (uint8_t)lround(w601[0]);
		yuyv[4 * i + 1] = (uint8_t)lround(w601[1]);
		yuyv[4 * i + 3] = (uint8_t)lround(w601[2]);
	}
	img.data = yuyv;
	img.size = cam.sizeimage;
	g_assert_cmpint(v4l2cuse_convert_frame(cv, &img, &out, back, out.sizeimage, &used), ==, 0);
	for (unsigned int i = 0; i < 3; i++)
		g_assert_cmpint(abs(back[((size_t)360 * 1280 + 640) * 3 + i] - rgb[i]), <=, 3);
	v4l2cuse_convert_free(cv);
}
