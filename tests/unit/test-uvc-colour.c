/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The uvc source's colorimetry against a fake camera (fake-camera.h):
 *
 *  - at the camera's own format and size the device reports what the
 *    camera reports at that size, whatever the size (an SD size labelled
 *    BT.709, an HD one labelled BT.601), and switching size switches it;
 *  - a camera that reports DEFAULT gets the kernel's defaults for its
 *    height: SMPTE 170M / BT.601 below 720 lines, Rec. 709 / BT.709 from
 *    720 on, limited range, 709 transfer function; one that reports only
 *    sRGB (a UVC webcam) the defaults of sRGB: BT.601 at every size;
 *  - the camera's frames are read in that colorimetry: its YUYV converted
 *    to R'G'B' decodes with the camera's matrix and range (pixels against
 *    the formula, within 2), and re-encoded to another Y'CbCr format they
 *    keep their colour;
 *  - converted formats report format.c's colorimetry, not the camera's.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>
#include <linux/videodev2.h>

#include "v4l2cuse/source.h"
#include "colour-ref.h"
#include "fake-camera.h"
#include "test-source-util.h"
#include "test-main.h"

/* A saturated orange: BT.601 and BT.709, limited and full range, differ by 9..13 in R'. */
#define CAM_Y	120
#define CAM_CB	90
#define CAM_CR	190

#define LIM	V4L2_QUANTIZATION_LIM_RANGE
#define FULL	V4L2_QUANTIZATION_FULL_RANGE

/* The camera's own label decides, not the size. */
static const struct fake_camera_mode labelled_modes[] = {
	{ 640, 480, V4L2_COLORSPACE_SMPTE170M, V4L2_YCBCR_ENC_601, LIM, V4L2_XFER_FUNC_709 },
	{ 1280, 720, V4L2_COLORSPACE_REC709, V4L2_YCBCR_ENC_709, LIM, V4L2_XFER_FUNC_709 },
	{ 320, 240, V4L2_COLORSPACE_REC709, V4L2_YCBCR_ENC_709, LIM, V4L2_XFER_FUNC_709 },
	{ 1920, 1080, V4L2_COLORSPACE_SMPTE170M, V4L2_YCBCR_ENC_601, LIM, V4L2_XFER_FUNC_709 },
};

/* DEFAULT everywhere (as many UVC cameras answer): SD and HD sizes. */
static const struct fake_camera_mode default_modes[] = {
	{ 640, 480 }, { 720, 576 }, { 1280, 720 }, { 1920, 1080 },
};

/* sRGB and nothing more (what uvcvideo reports): BT.601 at every size. */
static const struct fake_camera_mode srgb_modes[] = {
	{ 640, 480, V4L2_COLORSPACE_SRGB }, { 1280, 720, V4L2_COLORSPACE_SRGB },
};

static const struct fake_camera_mode full_modes[] = {
	{ 640, 480, V4L2_COLORSPACE_SMPTE170M, V4L2_YCBCR_ENC_601, FULL, V4L2_XFER_FUNC_709 },
	{ 1280, 720, V4L2_COLORSPACE_REC709, V4L2_YCBCR_ENC_709, FULL, V4L2_XFER_FUNC_709 },
};

#define CAMERA(m) { .modes = (m), .n_modes = G_N_ELEMENTS(m), \
		    .y = CAM_Y, .cb = CAM_CB, .cr = CAM_CR }

/*
 * The uvc source on @cam, installed as /fake/camera; camera_close() undoes
 * both. Kept open, so that start() streams at once (on demand the camera
 * opens off the thread: test-source-uvc.c).
 */
static struct v4l2cuse_source *
camera_open(const struct fake_camera *cam)
{
	fake_camera_install(cam);
	return ts_make("uvc:/fake/camera,keep_open=1");
}

static void
camera_close(struct v4l2cuse_source *src)
{
	v4l2cuse_source_destroy(src);
	fake_camera_remove();
}

/* --- the reference (colour-ref.h) -------------------------------------- */

/* The camera's colour as R'G'B' in @bt709 and @full. */
static void
cam_rgb(bool bt709, bool full, double rgb[3])
{
	const double ycc[3] = { CAM_Y, CAM_CB, CAM_CR };

	ref_ycc_to_rgb_range(bt709, full, ycc, rgb);
}

static double
max_diff(const double a[3], const double b[3])
{
	return MAX(MAX(fabs(a[0] - b[0]), fabs(a[1] - b[1])), fabs(a[2] - b[2]));
}

/* --- the source ---------------------------------------------------------- */

static void
assert_colour(const struct v4l2_pix_format *pix, uint32_t cs, uint32_t enc, uint32_t quant,
	      uint32_t xfer)
{
	g_test_message("%.4s %ux%u: colorspace %u ycbcr_enc %u quantization %u xfer_func %u",
		       (const char *)&pix->pixelformat, pix->width, pix->height, pix->colorspace,
		       pix->ycbcr_enc, pix->quantization, pix->xfer_func);
	g_assert_cmpuint(pix->colorspace, ==, cs);
	g_assert_cmpuint(pix->ycbcr_enc, ==, enc);
	g_assert_cmpuint(pix->quantization, ==, quant);
	g_assert_cmpuint(pix->xfer_func, ==, xfer);
}

static struct v4l2_pix_format
negotiate(struct v4l2cuse_source *src, uint32_t fourcc, uint32_t w, uint32_t h)
{
	struct v4l2_pix_format pix = { .pixelformat = fourcc, .width = w, .height = h };

	g_assert_cmpint(v4l2cuse_source_negotiate(src, &pix), ==, 0);
	g_assert_cmpuint(pix.pixelformat, ==, fourcc);
	g_assert_cmpuint(pix.width, ==, w);
	g_assert_cmpuint(pix.height, ==, h);
	return pix;
}

/*
 * Stream @fourcc at @w x @h: one frame of the camera's into a buffer (to be
 * freed), @ret_pix its format. The camera must have been set to that size.
 */
static uint8_t *
grab(struct v4l2cuse_source *src, uint32_t fourcc, uint32_t w, uint32_t h,
     struct v4l2_pix_format *ret_pix)
{
	struct v4l2_pix_format pix = ts_start(src, fourcc, w, h, 1, 30);
	uint8_t *buf = g_malloc0(pix.sizeimage);
	struct v4l2cuse_frame f = { .data = buf, .length = pix.sizeimage, .fmt = &pix };
	uint32_t cw, ch;

	fake_camera_current(&cw, &ch);
	g_assert_cmpuint(cw, ==, w);
	g_assert_cmpuint(ch, ==, h);
	/* The fake has a buffer queued from STREAMON on: no waiting. */
	g_assert_cmpint(src->ops->produce(src, &f), ==, 0);
	g_assert_false(f.error);
	g_assert_cmpuint(f.bytesused, ==, pix.sizeimage);
	src->ops->stop(src);
	*ret_pix = pix;
	return buf;
}

/*
 * Every pixel of an R'G'B' frame (RGB3 or XR24) is @want within 2, and
 * @want is far from @other (or the test could not tell the two apart).
 */
static void
assert_rgb_frame(const uint8_t *buf, const struct v4l2_pix_format *pix, const double want[3],
		 const double other[3])
{
	bool rgb3 = pix->pixelformat == V4L2_PIX_FMT_RGB24;
	unsigned int bpp = rgb3 ? 3 : 4;

	g_assert_cmpfloat(max_diff(want, other), >, 6);
	for (uint32_t y = 0; y < pix->height; y++) {
		const uint8_t *line = buf + (size_t)y * pix->bytesperline;

		for (uint32_t x = 0; x < pix->width; x++) {
			const uint8_t *p = line + (size_t)x * bpp;
			double got[3] = { p[rgb3 ? 0 : 2], p[1], p[rgb3 ? 2 : 0] };

			if (max_diff(got, want) > 2)
				g_error("%.4s %ux%u at %u,%u: R'G'B' %g %g %g, want %.1f %.1f %.1f "
					"(the other matrix: %.1f %.1f %.1f)",
					(const char *)&pix->pixelformat, pix->width, pix->height, x,
					y, got[0], got[1], got[2], want[0], want[1], want[2],
					other[0], other[1], other[2]);
		}
	}
}

/* The camera's frames at @w x @h converted to RGB3 and XR24 decode as @bt709, @full. */
static void
assert_decodes_as(struct v4l2cuse_source *src, uint32_t w, uint32_t h, bool bt709, bool full)
{
	static const uint32_t formats[] = { V4L2_PIX_FMT_RGB24, V4L2_PIX_FMT_XBGR32 };
	double want[3], other_matrix[3], other_range[3];

	cam_rgb(bt709, full, want);
	cam_rgb(!bt709, full, other_matrix);
	cam_rgb(bt709, !full, other_range);
	for (size_t i = 0; i < G_N_ELEMENTS(formats); i++) {
		struct v4l2_pix_format pix;
		g_autofree uint8_t *buf = grab(src, formats[i], w, h, &pix);

		/* Converted: R'G'B' as format.c labels it, whatever the camera says. */
		assert_colour(&pix, V4L2_COLORSPACE_SRGB, V4L2_YCBCR_ENC_601, FULL,
			      V4L2_XFER_FUNC_SRGB);
		assert_rgb_frame(buf, &pix, want, other_matrix);
		assert_rgb_frame(buf, &pix, want, other_range);
	}
}

/* YUYV at the camera's size: the camera's label, when negotiated and when streamed. */
static void
assert_passthrough(struct v4l2cuse_source *src, const struct fake_camera_mode *m, uint32_t cs,
		   uint32_t enc, uint32_t quant, uint32_t xfer)
{
	struct v4l2_pix_format pix = negotiate(src, V4L2_PIX_FMT_YUYV, m->width, m->height);
	g_autofree uint8_t *buf = NULL;

	assert_colour(&pix, cs, enc, quant, xfer);
	buf = grab(src, V4L2_PIX_FMT_YUYV, m->width, m->height, &pix);
	assert_colour(&pix, cs, enc, quant, xfer);
}

/*
 * YUYV at the camera's size is the camera's frame as it is (uvc.c: "the
 * frame is the camera's (copied ...)"), also where the camera's label is
 * not format.c's for that size (an sRGB webcam at 720 lines and more, an SD
 * size labelled BT.709, full range): the converter writes a target in the
 * target's own colorimetry, which is the camera's here.
 */
static void
assert_copied(struct v4l2cuse_source *src, const struct fake_camera_mode *m)
{
	struct v4l2_pix_format pix;
	g_autofree uint8_t *buf = grab(src, V4L2_PIX_FMT_YUYV, m->width, m->height, &pix);

	g_assert_cmpuint(buf[0], ==, CAM_Y);
	g_assert_cmpuint(buf[1], ==, CAM_CB);
	g_assert_cmpuint(buf[2], ==, CAM_Y);
	g_assert_cmpuint(buf[3], ==, CAM_CR);
}

V4L2CUSE_TEST("/uvc-colour/per-size", test_per_size)
{
	static const struct fake_camera cam = CAMERA(labelled_modes);
	struct v4l2cuse_source *src = camera_open(&cam);

	/* Twice round: switching size back switches the colorimetry back. */
	for (unsigned int round = 0; round < 2; round++) {
		for (size_t i = 0; i < cam.n_modes; i++) {
			const struct fake_camera_mode *m = &cam.modes[i];

			assert_passthrough(src, m, m->colorspace, m->ycbcr_enc, m->quantization,
					   m->xfer_func);
		}
	}
	for (size_t i = 0; i < cam.n_modes; i++) {
		const struct fake_camera_mode *m = &cam.modes[i];

		assert_decodes_as(src, m->width, m->height, m->ycbcr_enc == V4L2_YCBCR_ENC_709,
				  false);
	}
	camera_close(src);
}

/* A camera, and the labels the uvc source must give its modes (in order). */
struct colour_case {
	struct fake_camera cam;
	const struct fake_camera_mode *want;
};

/* DEFAULT: V4L2_MAP_COLORSPACE_DEFAULT() (BT.709 from 720 lines) and the maps it leads to. */
static const struct fake_camera_mode default_want[] = {
	{ 640, 480, V4L2_COLORSPACE_SMPTE170M, V4L2_YCBCR_ENC_601, LIM, V4L2_XFER_FUNC_709 },
	{ 720, 576, V4L2_COLORSPACE_SMPTE170M, V4L2_YCBCR_ENC_601, LIM, V4L2_XFER_FUNC_709 },
	{ 1280, 720, V4L2_COLORSPACE_REC709, V4L2_YCBCR_ENC_709, LIM, V4L2_XFER_FUNC_709 },
	{ 1920, 1080, V4L2_COLORSPACE_REC709, V4L2_YCBCR_ENC_709, LIM, V4L2_XFER_FUNC_709 },
};

/* V4L2_MAP_YCBCR_ENC_DEFAULT(SRGB) is BT.601, whatever the height. */
static const struct fake_camera_mode srgb_want[] = {
	{ 640, 480, V4L2_COLORSPACE_SRGB, V4L2_YCBCR_ENC_601, LIM, V4L2_XFER_FUNC_SRGB },
	{ 1280, 720, V4L2_COLORSPACE_SRGB, V4L2_YCBCR_ENC_601, LIM, V4L2_XFER_FUNC_SRGB },
};

static const struct colour_case default_case = { CAMERA(default_modes), default_want };
static const struct colour_case srgb_case = { CAMERA(srgb_modes), srgb_want };
/* Complete labels, full range: passed through as they are. */
static const struct colour_case full_case = { CAMERA(full_modes), full_modes };

/* Each mode at YUYV: labelled as wanted, and its pixels decode by that label. */
static void
test_labels(gconstpointer data)
{
	const struct colour_case *c = data;
	struct v4l2cuse_source *src = camera_open(&c->cam);

	for (size_t i = 0; i < c->cam.n_modes; i++) {
		const struct fake_camera_mode *w = &c->want[i];

		assert_passthrough(src, &c->cam.modes[i], w->colorspace, w->ycbcr_enc,
				   w->quantization, w->xfer_func);
		assert_decodes_as(src, w->width, w->height, w->ycbcr_enc == V4L2_YCBCR_ENC_709,
				  w->quantization == FULL);
	}
	camera_close(src);
}

V4L2CUSE_TEST_DATA("/uvc-colour/default", test_labels, &default_case)
V4L2CUSE_TEST_DATA("/uvc-colour/srgb", test_labels, &srgb_case)
V4L2CUSE_TEST_DATA("/uvc-colour/full-range", test_labels, &full_case)

/*
 * A converted Y'CbCr format at the camera's size: format.c's label (BT.601
 * below 720 lines, BT.709 from 720 on, limited range) and the camera's
 * colour re-encoded into it, from whatever the camera said.
 */
V4L2CUSE_TEST("/uvc-colour/reencode", test_reencode)
{
	static const struct fake_camera cam = CAMERA(labelled_modes);
	struct v4l2cuse_source *src = camera_open(&cam);

	for (size_t i = 0; i < cam.n_modes; i++) {
		const struct fake_camera_mode *m = &cam.modes[i];
		bool cam709 = m->ycbcr_enc == V4L2_YCBCR_ENC_709, out709 = m->height >= 720;
		size_t luma = (size_t)m->width * m->height;
		double rgb[3], want[3];
		struct v4l2_pix_format pix;
		g_autofree uint8_t *buf = grab(src, V4L2_PIX_FMT_YUV420, m->width, m->height, &pix);

		assert_colour(&pix, out709 ? V4L2_COLORSPACE_REC709 : V4L2_COLORSPACE_SMPTE170M,
			      out709 ? V4L2_YCBCR_ENC_709 : V4L2_YCBCR_ENC_601, LIM,
			      V4L2_XFER_FUNC_709);
		cam_rgb(cam709, false, rgb);
		ref_rgb_to_ycc(out709, rgb, want);
		g_test_message("%ux%u: camera %s, Y'CbCr %u %u %u, want %.1f %.1f %.1f", m->width,
			       m->height, cam709 ? "BT.709" : "BT.601", buf[0], buf[luma],
			       buf[luma + luma / 4], want[0], want[1], want[2]);
		/* Where the labels differ the values must change, or this tests nothing. */
		if (cam709 != out709) {
			const double cam_ycc[3] = { CAM_Y, CAM_CB, CAM_CR };

			g_assert_cmpfloat(max_diff(want, cam_ycc), >, 4);
		}
		g_assert_cmpfloat(fabs(buf[0] - want[0]), <=, 1.5);
		g_assert_cmpfloat(fabs(buf[luma] - want[1]), <=, 1.5);
		g_assert_cmpfloat(fabs(buf[luma + luma / 4] - want[2]), <=, 1.5);
	}
	camera_close(src);
}

/* The camera's own format and size: its bytes, for every label. */
V4L2CUSE_TEST("/uvc-colour/copy", test_copy)
{
	static const struct fake_camera cams[] = {
		CAMERA(default_modes), CAMERA(labelled_modes), CAMERA(srgb_modes),
		CAMERA(full_modes),
	};

	for (size_t c = 0; c < G_N_ELEMENTS(cams); c++) {
		struct v4l2cuse_source *src = camera_open(&cams[c]);

		for (unsigned int i = 0; i < cams[c].n_modes; i++)
			assert_copied(src, &cams[c].modes[i]);
		camera_close(src);
	}
}
