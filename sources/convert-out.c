/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The converter's last stages (convert-private.h): the intermediate scaled
 * to the target size (bilinear, per plane) and packed as the target format
 * (pack.h's packers; grey mapped to full range first; MJPEG encoded).
 */

#include "config.h"

#include <errno.h>
#include <string.h>

#include <glib.h>

#include "util/macros.h"
#include "v4l2cuse/format.h"
#include "convert-private.h"
#include "pack.h"

/*
 * Bilinear, sample centres aligned ((x + 0.5) * sw / dw - 0.5), 8-bit
 * weights, separable: each output line first blends its two source lines
 * into a 16-bit line (vectorised by the compiler), then interpolates along
 * it. That line has one extra pixel (a copy of the last), so the right
 * neighbour can always be read.
 */
static void
cv_scale_plane(struct v4l2cuse_convert *cv, const uint8_t *src, uint32_t sw, uint32_t sh,
	       size_t sstride, uint8_t *dst, uint32_t dw, uint32_t dh, size_t dstride,
	       unsigned int ch)
{
	size_t srow = (size_t)sw * ch;
	uint32_t *xoff = (uint32_t *)v4l2cuse_convert_buf(cv, CV_BUF_XMAP,
							  (size_t)dw * 6 + (srow + ch) * 2 + 16);
	uint16_t *xw = (uint16_t *)(xoff + dw);
	uint16_t *line = xw + dw + (dw & 1);

	for (uint32_t x = 0; x < dw; x++) {
		int64_t fx = (int64_t)(2 * (uint64_t)x + 1) * sw * 128 / dw - 128;
		uint32_t x0;

		fx = MAX(fx, 0);
		x0 = (uint32_t)(fx >> 8);
		xw[x] = (uint16_t)(fx & 255);
		if (x0 >= sw - 1) {
			x0 = sw - 1;
			xw[x] = 0;
		}
		xoff[x] = x0 * ch;
	}
	for (uint32_t y = 0; y < dh; y++) {
		int64_t fy = (int64_t)(2 * (uint64_t)y + 1) * sh * 128 / dh - 128;
		uint32_t y0, wy, wy0;
		const uint8_t *r0, *r1;
		uint8_t *d = dst + dstride * y;

		fy = MAX(fy, 0);
		y0 = (uint32_t)(fy >> 8);
		wy = (uint32_t)(fy & 255);
		if (y0 >= sh - 1) {
			y0 = sh - 1;
			wy = 0;
		}
		wy0 = 256 - wy;
		r0 = src + sstride * y0;
		r1 = wy ? r0 + sstride : r0;
		for (size_t i = 0; i < srow; i++)
			line[i] = (uint16_t)(r0[i] * wy0 + r1[i] * wy);
		for (unsigned int c = 0; c < ch; c++)
			line[srow + c] = line[srow - ch + c];
		if (ch == 1) {
			for (uint32_t x = 0; x < dw; x++) {
				const uint16_t *a = line + xoff[x];
				uint32_t w1 = xw[x];

				d[x] = (uint8_t)((a[0] * (256 - w1) + a[1] * w1 + 32768) >> 16);
			}
			continue;
		}
		for (uint32_t x = 0; x < dw; x++) {
			const uint16_t *a = line + xoff[x];
			uint32_t w1 = xw[x], w0 = 256 - w1;

			for (unsigned int c = 0; c < ch; c++)
				*d++ = (uint8_t)((a[c] * w0 + a[c + ch] * w1 + 32768) >> 16);
		}
	}
}

void
v4l2cuse_convert_scale(struct v4l2cuse_convert *cv, const struct cv_pic *in, uint32_t w, uint32_t h,
		       bool luma_only, struct cv_pic *out)
{
	uint8_t *buf;

	switch (in->kind) {
	case CV_RGB:
		buf = v4l2cuse_convert_buf(cv, CV_BUF_SCALE, (size_t)w * h * 3);
		cv_scale_plane(cv, in->p[0], in->w, in->h, in->stride[0], buf, w, h,
			       (size_t)w * 3, 3);
		*out = (struct cv_pic){
			.kind = CV_RGB, .w = w, .h = h, .p = { buf }, .stride = { (size_t)w * 3 },
		};
		break;
	case CV_GREY:
		buf = v4l2cuse_convert_buf(cv, CV_BUF_SCALE, (size_t)w * h);
		cv_scale_plane(cv, in->p[0], in->w, in->h, in->stride[0], buf, w, h, w, 1);
		*out = (struct cv_pic){
			.kind = CV_GREY, .w = w, .h = h, .p = { buf }, .stride = { w },
		};
		break;
	case CV_YUV:
		buf = v4l2cuse_convert_buf(cv, CV_BUF_SCALE,
					   (size_t)w * h + (size_t)(w / 2) * (h >> in->vs) * 2);
		v4l2cuse_convert_pic_yuv(out, w, h, in->vs, buf);
		cv_scale_plane(cv, in->p[0], in->w, in->h, in->stride[0], buf, w, h, w, 1);
		if (luma_only || w < 2 || (h >> in->vs) == 0)
			break;
		for (unsigned int i = 1; i < 3; i++)
			cv_scale_plane(cv, in->p[i], in->w / 2, in->h >> in->vs, in->stride[i],
				       (uint8_t *)out->p[i], w / 2, h >> in->vs, w / 2, 1);
		break;
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

void
v4l2cuse_convert_pack_yuv(const struct cv_pic *pic, uint32_t fourcc, uint8_t *dst)
{
	const struct v4l2cuse_format_info *fi = v4l2cuse_format_lookup(fourcc);
	unsigned int vsub = fi->n_planes > 1 ? fi->vdiv : 1;
	size_t off[3], stride[3];

	v4l2cuse_format_frame_size(fi, pic->w, pic->h, 0, off, stride);
	for (uint32_t y = 0; y < pic->h; y++) {
		const uint8_t *cb = NULL, *cr = NULL;
		uint8_t *d1 = NULL, *d2 = NULL;

		if (pic->kind == CV_YUV) {
			cb = pic->p[1] + pic->stride[1] * (y >> pic->vs);
			cr = pic->p[2] + pic->stride[2] * (y >> pic->vs);
		}
		if (fi->n_planes > 1 && y % vsub == 0) {
			d1 = dst + off[1] + stride[1] * (y / vsub);
			if (fi->n_planes > 2)
				d2 = dst + off[2] + stride[2] * (y / vsub);
		}
		v4l2cuse_pack_yuv_line(fourcc, pic->p[0] + pic->stride[0] * y, cb, cr, pic->w,
				       dst + stride[0] * y, d1, d2);
	}
}

/* An RGB24 picture in the tight layout of an RGB @fourcc. */
static void
cv_pack_rgb(const struct cv_pic *pic, uint32_t fourcc, uint8_t *dst)
{
	size_t bpl = (size_t)pic->w * v4l2cuse_format_lookup(fourcc)->bpp[0] / 8;

	for (uint32_t y = 0; y < pic->h; y++)
		v4l2cuse_pack_rgb_line(fourcc, pic->p[0] + pic->stride[0] * y, pic->w, dst + bpl * y);
}

const uint8_t *
v4l2cuse_convert_luma_lut(void)
{
	static uint8_t lut[256];
	static gsize done;

	if (g_once_init_enter(&done)) {
		for (int i = 0; i < 256; i++) {
			int v = ((i - 16) * 255 * 2 + 219) / (219 * 2);

			lut[i] = (uint8_t)CLAMP_VAL(i <= 16 ? 0 : v, 0, 255);
		}
		g_once_init_leave(&done, 1);
	}
	return lut;
}

/* The limited-range luma of a Y'CbCr picture as full-range grey (format.c's GREY). */
static void
cv_grey(struct v4l2cuse_convert *cv, const struct cv_pic *yuv, struct cv_pic *grey)
{
	const uint8_t *lut = v4l2cuse_convert_luma_lut();
	uint8_t *buf = v4l2cuse_convert_buf(cv, CV_BUF_LUMA, (size_t)yuv->w * yuv->h);

	for (uint32_t y = 0; y < yuv->h; y++) {
		const uint8_t *s = yuv->p[0] + yuv->stride[0] * y;
		uint8_t *d = buf + (size_t)yuv->w * y;

		for (uint32_t x = 0; x < yuv->w; x++)
			d[x] = lut[s[x]];
	}
	*grey = (struct cv_pic){
		.kind = CV_GREY, .w = yuv->w, .h = yuv->h, .p = { buf }, .stride = { yuv->w },
	};
}

bool
v4l2cuse_convert_is_rgb_target(const struct v4l2cuse_format_info *oi)
{
	return !oi->yuv && oi->fourcc != V4L2_PIX_FMT_GREY;
}

int
v4l2cuse_convert_pack(struct v4l2cuse_convert *cv, const struct cv_pic *pic,
		      const struct v4l2_pix_format *out, uint8_t *dst, size_t dst_len,
		      uint32_t *ret_bytesused)
{
	const struct v4l2cuse_format_info *oi = v4l2cuse_format_info(out->pixelformat);
	struct cv_pic grey;

	*ret_bytesused = out->sizeimage;
	if (oi->compressed)
		return v4l2cuse_convert_jpeg_encode(cv, pic, dst,
						    MIN(dst_len, (size_t)out->sizeimage),
						    ret_bytesused);
	if (v4l2cuse_convert_is_rgb_target(oi)) {
		cv_pack_rgb(pic, oi->fourcc, dst);
	} else if (oi->fourcc == V4L2_PIX_FMT_GREY && pic->kind == CV_YUV) {
		cv_grey(cv, pic, &grey);
		v4l2cuse_convert_pack_yuv(&grey, oi->fourcc, dst);
	} else {
		v4l2cuse_convert_pack_yuv(pic, oi->fourcc, dst);
	}
	return 0;
}
