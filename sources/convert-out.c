/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The converter's last stages (convert-private.h): the intermediate scaled
 * to the target size and packed as the target format.
 *
 * libyuv scales (ScalePlane, bilinear; ARGB split into planes for it) and
 * packs: Y'CbCr 4:2:x to the packed, semi-planar
 * and planar targets and, with the picture's matrix and range
 * (*ToRGB*Matrix with its YuvConstants), to every R'G'B' target; ARGB and
 * grey to the R'G'B' ones. A Y'CbCr picture whose colorimetry is not the
 * target's goes through convert-ycc.c first (grey: its luma only); MJPEG
 * through convert-jpeg.c.
 */

#include "config.h"

#include <errno.h>
#include <string.h>

#include <glib.h>
#include <libyuv.h>

#include "util/macros.h"
#include "v4l2cuse/format.h"
#include "convert-private.h"
#include "pack.h"

/*
 * Bilinear. libyuv 1857's box filter rounds down (a flat 10 comes out 9)
 * and its ARGB scaler both blends with weights that sum to 127/128 (white
 * darkens) and asserts on some box ratios, so R'G'B' is scaled per plane.
 */
#define CV_FILTER	kFilterBilinear

void
v4l2cuse_convert_scale(struct v4l2cuse_convert *cv, const struct cv_pic *in, uint32_t w, uint32_t h,
		       struct cv_pic *out)
{
	uint8_t *buf;

	switch (in->kind) {
	case CV_ARGB: {
		size_t sn = (size_t)in->w * in->h, dn = (size_t)w * h;
		uint8_t *sp = v4l2cuse_convert_buf(cv, CV_BUF_PLANES, sn * 3);

		buf = v4l2cuse_convert_buf(cv, CV_BUF_SCALE, dn * 7);
		SplitARGBPlane(in->p[0], (int)in->stride[0], sp, (int)in->w, sp + sn, (int)in->w,
			       sp + 2 * sn, (int)in->w, NULL, 0, (int)in->w, (int)in->h);
		for (unsigned int i = 0; i < 3; i++)
			ScalePlane(sp + i * sn, (int)in->w, (int)in->w, (int)in->h,
				   buf + (4 + i) * dn, (int)w, (int)w, (int)h, CV_FILTER);
		MergeARGBPlane(buf + 4 * dn, (int)w, buf + 5 * dn, (int)w, buf + 6 * dn, (int)w,
			       NULL, 0, buf, (int)w * 4, (int)w, (int)h);
		*out = (struct cv_pic){
			.kind = CV_ARGB, .w = w, .h = h, .p = { buf }, .stride = { (size_t)w * 4 },
		};
		break;
	}
	case CV_GREY:
		buf = v4l2cuse_convert_buf(cv, CV_BUF_SCALE, (size_t)w * h);
		ScalePlane(in->p[0], (int)in->stride[0], (int)in->w, (int)in->h, buf, (int)w,
			   (int)w, (int)h, CV_FILTER);
		*out = (struct cv_pic){
			.kind = CV_GREY, .w = w, .h = h, .p = { buf }, .stride = { w },
		};
		break;
	case CV_YUV: {
		uint32_t sch = (in->h + in->vs) >> in->vs, dch = (h + in->vs) >> in->vs;

		buf = v4l2cuse_convert_buf(cv, CV_BUF_SCALE, (size_t)w * h + (size_t)w * dch);
		v4l2cuse_convert_pic_yuv(out, w, h, in->vs, in->ycc, buf);
		for (unsigned int i = 0; i < 3; i++)
			ScalePlane(in->p[i], (int)in->stride[i], (int)(i ? in->w / 2 : in->w),
				   (int)(i ? sch : in->h), (uint8_t *)out->p[i], (int)out->stride[i],
				   (int)(i ? w / 2 : w), (int)(i ? dch : h), CV_FILTER);
		break;
	}
	}
}

void
v4l2cuse_convert_copy_plane(uint8_t *dst, size_t dstride, const uint8_t *src, size_t sstride,
			    size_t row_bytes, uint32_t rows)
{
	if (dstride == sstride && dstride == row_bytes) {
		memcpy(dst, src, row_bytes * rows);
		return;
	}
	for (uint32_t y = 0; y < rows; y++)
		memcpy(dst + dstride * y, src + sstride * y, row_bytes);
}

bool
v4l2cuse_convert_is_rgb_target(const struct v4l2cuse_format_info *oi)
{
	return !oi->yuv && !oi->compressed && oi->fourcc != V4L2_PIX_FMT_GREY;
}

/* --- R'G'B' targets ----------------------------------------------------- */

typedef int (*cv_yuv_to_rgb_fn)(const uint8_t *y, int ys, const uint8_t *u, int us,
				const uint8_t *v, int vs, uint8_t *dst, int ds,
				const struct YuvConstants *k, int w, int h);
typedef int (*cv_argb_to_rgb_fn)(const uint8_t *src, int ss, uint8_t *dst, int ds, int w, int h);

/*
 * How libyuv writes each R'G'B' target. libyuv names formats by their
 * 32-bit word, V4L2 by bytes in memory: V4L2's RGB3 (R, G, B) is libyuv's
 * RAW, BGR3 its RGB24, XR24 (B, G, R, X) its ARGB, BX24 (X, R, G, B) its
 * BGRA. The Y'CbCr functions write only some of them directly; @swap: the
 * layout with R and B exchanged, made by exchanging Cb and Cr and taking
 * the mirrored constants (kYvu*), as libyuv itself does.
 */
static const struct {
	uint32_t fourcc;
	bool swap;
	cv_yuv_to_rgb_fn from_i420, from_i422;
	cv_argb_to_rgb_fn from_argb;
} cv_rgb_targets[] = {
	{ V4L2_PIX_FMT_RGB24, true, I420ToRGB24Matrix, I422ToRGB24Matrix, ARGBToRAW },
	{ V4L2_PIX_FMT_BGR24, false, I420ToRGB24Matrix, I422ToRGB24Matrix, ARGBToRGB24 },
	{ V4L2_PIX_FMT_XBGR32, false, I420ToARGBMatrix, I422ToARGBMatrix, ARGBCopy },
	{ V4L2_PIX_FMT_XRGB32, true, I420ToRGBAMatrix, I422ToRGBAMatrix, ARGBToBGRA },
	{ V4L2_PIX_FMT_RGB565, false, I420ToRGB565Matrix, I422ToRGB565Matrix, ARGBToRGB565 },
};

/* libyuv's constants for Y'CbCr -> R'G'B' in @ycc (@swap: the kYvu* mirror). */
static const struct YuvConstants *
cv_yuv_constants(struct cv_ycc ycc, bool swap)
{
	if (ycc.bt709)
		return ycc.full ? (swap ? &kYvuF709Constants : &kYuvF709Constants)
				: (swap ? &kYvuH709Constants : &kYuvH709Constants);
	return ycc.full ? (swap ? &kYvuJPEGConstants : &kYuvJPEGConstants)
			: (swap ? &kYvuI601Constants : &kYuvI601Constants);
}

static int
cv_pack_rgb(struct v4l2cuse_convert *cv, const struct cv_pic *pic, uint32_t fourcc, uint8_t *dst)
{
	int ds = (int)(pic->w * v4l2cuse_format_lookup(fourcc)->bpp[0] / 8);
	size_t i = 0;

	while (cv_rgb_targets[i].fourcc != fourcc)
		if (++i == G_N_ELEMENTS(cv_rgb_targets))
			return -EINVAL;
	switch (pic->kind) {
	case CV_YUV: {
		bool swap = cv_rgb_targets[i].swap;
		cv_yuv_to_rgb_fn fn = pic->vs ? cv_rgb_targets[i].from_i420
					      : cv_rgb_targets[i].from_i422;
		struct cv_pic t;

		/*
		 * libyuv keeps the Cb -> B' coefficient in a signed byte
		 * (x64): limited-range BT.709's 2.112 (135) is clamped to 128,
		 * which puts saturated blues up to 12 levels off (measured:
		 * B' 11 for 0). Full-range BT.709's 1.856 (119) fits, so
		 * limited-range BT.709 is expanded to full range first.
		 */
		if (pic->ycc.bt709 && !pic->ycc.full)
			v4l2cuse_convert_ycc_pic(cv, pic, CV_YCC_709_FULL, false, &t);
		else
			t = *pic;
		fn(t.p[0], (int)t.stride[0], t.p[1 + swap], (int)t.stride[1 + swap],
		   t.p[2 - swap], (int)t.stride[2 - swap], dst, ds,
		   cv_yuv_constants(t.ycc, swap), (int)t.w, (int)t.h);
		return 0;
	}
	case CV_GREY: {
		uint8_t *argb = v4l2cuse_convert_buf(cv, CV_BUF_OUT, (size_t)pic->w * pic->h * 4);

		J400ToARGB(pic->p[0], (int)pic->stride[0], argb, (int)pic->w * 4, (int)pic->w,
			   (int)pic->h);
		cv_rgb_targets[i].from_argb(argb, (int)pic->w * 4, dst, ds, (int)pic->w,
					    (int)pic->h);
		return 0;
	}
	case CV_ARGB:
		cv_rgb_targets[i].from_argb(pic->p[0], (int)pic->stride[0], dst, ds, (int)pic->w,
					    (int)pic->h);
		return 0;
	}
	return -EINVAL;
}

/* --- grey --------------------------------------------------------------- */

/* Full-range BT.601 luma (format.c's GREY). */
static void
cv_pack_grey(struct v4l2cuse_convert *cv, const struct cv_pic *pic, uint8_t *dst)
{
	switch (pic->kind) {
	case CV_YUV:
		if (!cv_ycc_equal(pic->ycc, CV_YCC_JFIF)) {
			v4l2cuse_convert_ycc_lines(cv, pic, CV_YCC_JFIF, 0, pic->h, true,
						   (uint8_t *[3]){ dst },
						   (const size_t[3]){ pic->w });
			break;
		}
		/* fall through - the luma is grey already */
	case CV_GREY:
		v4l2cuse_convert_copy_plane(dst, pic->w, pic->p[0], pic->stride[0], pic->w, pic->h);
		break;
	case CV_ARGB:
		ARGBToJ400(pic->p[0], (int)pic->stride[0], dst, (int)pic->w, (int)pic->w,
			   (int)pic->h);
		break;
	}
}

/* --- Y'CbCr targets ----------------------------------------------------- */

/* @in: lines [y0, y0 + in->h) of a frame of @out's height. */
static int
cv_pack_yuv(struct v4l2cuse_convert *cv, const struct cv_pic *in,
	    const struct v4l2cuse_format_info *oi, const struct v4l2_pix_format *out,
	    uint32_t y0, uint8_t *dst)
{
	struct cv_ycc ycc = v4l2cuse_convert_target_colorimetry(out);
	uint32_t height = out->height;
	uint32_t fourcc = oi->fourcc;
	size_t off[3] = { 0 }, stride[3] = { 0 };
	uint8_t *d[3] = { NULL };
	struct cv_pic t;
	int w = (int)in->w, h = (int)in->h;
	/* Cr first: libyuv writes NV21 itself, the others with Cb and Cr exchanged. */
	bool swap = v4l2cuse_pack_cr_first(fourcc) && fourcc != V4L2_PIX_FMT_NV21;
	unsigned int u = 1 + swap, v = 2 - swap;

	if (in->kind != CV_YUV || (in->vs == 0 && oi->vdiv > 1))
		return -EINVAL;
	if (v4l2cuse_format_frame_size(oi, in->w, height, 0, off, stride) == 0)
		return -EINVAL;
	/* The target's own planes only (the others' offsets are not set). */
	for (unsigned int i = 0; i < oi->n_planes; i++)
		d[i] = dst + off[i] + stride[i] * (i ? y0 / oi->vdiv : y0);

	if (oi->n_planes == 3 && !cv_ycc_equal(in->ycc, ycc)) {
		/* YU12, YV12: the transform writes the target's planes. */
		uint8_t *planes[3] = { d[0], d[u], d[v] };
		const size_t strides[3] = { stride[0], stride[u], stride[v] };

		v4l2cuse_convert_ycc_lines(cv, in, ycc, 0, in->h, false, planes, strides);
		return 0;
	}
	v4l2cuse_convert_ycc_pic(cv, in, ycc, false, &t);
	switch (fourcc) {
	case V4L2_PIX_FMT_YUYV:
	case V4L2_PIX_FMT_YVYU:
	case V4L2_PIX_FMT_UYVY:
		(fourcc == V4L2_PIX_FMT_UYVY ? (t.vs ? I420ToUYVY : I422ToUYVY)
					     : (t.vs ? I420ToYUY2 : I422ToYUY2))(
			t.p[0], (int)t.stride[0], t.p[u], (int)t.stride[u], t.p[v],
			(int)t.stride[v], d[0], (int)stride[0], w, h);
		break;
	case V4L2_PIX_FMT_NV12:
		I420ToNV12(t.p[0], (int)t.stride[0], t.p[1], (int)t.stride[1], t.p[2],
			   (int)t.stride[2], d[0], (int)stride[0], d[1], (int)stride[1], w, h);
		break;
	case V4L2_PIX_FMT_NV21:
		I420ToNV21(t.p[0], (int)t.stride[0], t.p[1], (int)t.stride[1], t.p[2],
			   (int)t.stride[2], d[0], (int)stride[0], d[1], (int)stride[1], w, h);
		break;
	case V4L2_PIX_FMT_YUV420:
	case V4L2_PIX_FMT_YVU420:
		I420Copy(t.p[0], (int)t.stride[0], t.p[1], (int)t.stride[1], t.p[2],
			 (int)t.stride[2], d[0], (int)stride[0], d[u], (int)stride[u], d[v],
			 (int)stride[v], w, h);
		break;
	default:
		return -EINVAL;
	}
	return 0;
}

int
v4l2cuse_convert_pack(struct v4l2cuse_convert *cv, const struct cv_pic *pic,
		      const struct v4l2_pix_format *out, uint32_t y0, uint8_t *dst, size_t dst_len,
		      uint32_t *ret_bytesused)
{
	const struct v4l2cuse_format_info *oi = v4l2cuse_format_lookup(out->pixelformat);

	*ret_bytesused = out->sizeimage;
	if (oi->compressed)
		return pic->kind == CV_YUV && y0 == 0
			       ? v4l2cuse_convert_jpeg_encode(cv, pic, dst,
							      MIN(dst_len, (size_t)out->sizeimage),
							      ret_bytesused)
			       : -EINVAL;
	if (v4l2cuse_convert_is_rgb_target(oi))
		return cv_pack_rgb(cv, pic, oi->fourcc,
				   dst + (size_t)y0 * pic->w * oi->bpp[0] / 8);
	if (oi->fourcc == V4L2_PIX_FMT_GREY) {
		cv_pack_grey(cv, pic, dst + (size_t)y0 * pic->w);
		return 0;
	}
	return cv_pack_yuv(cv, pic, oi, out, y0, dst);
}

/*
 * A picture (the frame's full height) packed in strips of CV_STRIP_LINES,
 * so that the packer's own steps (a colour transform, grey's ARGB) stay in
 * the cache between them.
 */
int
v4l2cuse_convert_pack_strips(struct v4l2cuse_convert *cv, const struct cv_pic *pic,
			     const struct v4l2_pix_format *out, uint8_t *dst, size_t dst_len,
			     uint32_t *ret_bytesused)
{
	if (v4l2cuse_format_lookup(out->pixelformat)->compressed || pic->h % 2)
		return v4l2cuse_convert_pack(cv, pic, out, 0, dst, dst_len, ret_bytesused);
	for (uint32_t y0 = 0; y0 < pic->h; y0 += CV_STRIP_LINES) {
		struct cv_pic strip = *pic;
		int r;

		strip.h = MIN(CV_STRIP_LINES, pic->h - y0);
		for (unsigned int i = 0; i < 3; i++)
			strip.p[i] = pic->p[i] ? pic->p[i] + pic->stride[i] *
							     (i && pic->kind == CV_YUV ? y0 >> pic->vs
										       : y0)
					       : NULL;
		r = v4l2cuse_convert_pack(cv, &strip, out, y0, dst, dst_len, ret_bytesused);
		if (r < 0)
			return r;
	}
	return 0;
}
