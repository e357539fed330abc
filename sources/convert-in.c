/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The converter's first stage (convert-private.h): an input frame to the
 * intermediate at its own size, planar Y'CbCr 4:2:x or RGB24. Planar and
 * semi-planar Y'CbCr and packed 4:2:2 are moved by our own code (pack.h's
 * unpackers, chroma averaged for 4:2:0), RGB and grey through
 * libv4lconvert, JPEG through libjpeg.
 */

#include "config.h"

#include <errno.h>
#include <string.h>

#include <glib.h>

#include "util/macros.h"
#include "v4l2cuse/format.h"
#include "convert-private.h"
#include "pack.h"

void
v4l2cuse_convert_pic_yuv(struct cv_pic *pic, uint32_t w, uint32_t h, unsigned int vs, uint8_t *buf)
{
	size_t ysize = (size_t)w * h, csize = (size_t)(w / 2) * (h >> vs);

	*pic = (struct cv_pic){
		.kind = CV_YUV, .w = w, .h = h, .vs = vs,
		.p = { buf, buf + ysize, buf + ysize + csize },
		.stride = { w, w / 2, w / 2 },
	};
}

/*
 * A Y'CbCr picture whose luma stays in the input (@y, @y_stride) and whose
 * chroma (@w / 2 x @h >> @vs) will be written to CV_BUF_CANON: *ret_cb, *ret_cr.
 */
static void
cv_pic_chroma(struct v4l2cuse_convert *cv, struct cv_pic *pic, uint32_t w, uint32_t h,
	      unsigned int vs, const uint8_t *y, size_t y_stride, uint8_t **ret_cb,
	      uint8_t **ret_cr)
{
	size_t cw = w / 2, csize = cw * (h >> vs);
	uint8_t *cb = v4l2cuse_convert_buf(cv, CV_BUF_CANON, csize * 2);

	*pic = (struct cv_pic){
		.kind = CV_YUV, .w = w, .h = h, .vs = vs,
		.p = { y, cb, cb + csize }, .stride = { y_stride, cw, cw },
	};
	*ret_cb = cb;
	*ret_cr = cb + csize;
}

/* Y'CbCr with any vs from planar or semi-planar input (no libraries needed). */
static bool
cv_yuv_direct(struct v4l2cuse_convert *cv, const struct v4l2cuse_format_info *f,
	      const struct v4l2cuse_image *in, const size_t off[3], const size_t stride[3],
	      bool need420, struct cv_pic *pic)
{
	uint32_t w = in->width, h = in->height, cw = w / 2;
	const uint8_t *base = in->data;
	unsigned int vs;
	uint8_t *cb, *cr;

	switch (f->fourcc) {
	case V4L2_PIX_FMT_YUV420:
	case V4L2_PIX_FMT_YVU420:
	case V4L2_PIX_FMT_YUV422P: {
		bool swap = f->fourcc == V4L2_PIX_FMT_YVU420;
		const uint8_t *in_c[2] = { base + off[swap ? 2 : 1], base + off[swap ? 1 : 2] };

		if (v4l2cuse_convert_vs(f) == 1 || !need420) {
			*pic = (struct cv_pic){
				.kind = CV_YUV, .w = w, .h = h, .vs = v4l2cuse_convert_vs(f),
				.p = { base + off[0], in_c[0], in_c[1] },
				.stride = { stride[0], stride[1], stride[2] },
			};
			return true;
		}
		/* 4:2:2 -> 4:2:0: average line pairs. */
		cv_pic_chroma(cv, pic, w, h, 1, base + off[0], stride[0], &cb, &cr);
		for (unsigned int c = 0; c < 2; c++) {
			uint8_t *dst = c ? cr : cb;

			for (uint32_t y = 0; y < h / 2; y++) {
				const uint8_t *a = in_c[c] + stride[1 + c] * 2 * y;
				const uint8_t *b = a + stride[1 + c];

				for (uint32_t x = 0; x < cw; x++)
					dst[(size_t)y * cw + x] = (uint8_t)((a[x] + b[x] + 1) >> 1);
			}
		}
		return true;
	}
	case V4L2CUSE_PIX_FMT_YUV444P:
		vs = need420 ? 1 : 0;
		cv_pic_chroma(cv, pic, w, h, vs, base + off[0], stride[0], &cb, &cr);
		for (unsigned int c = 0; c < 2; c++) {
			uint8_t *dst = c ? cr : cb;

			for (uint32_t y = 0; y < h >> vs; y++) {
				const uint8_t *a = base + off[1 + c] + stride[1 + c] * (y << vs);
				const uint8_t *b = vs ? a + stride[1 + c] : a;

				for (uint32_t x = 0; x < cw; x++)
					dst[(size_t)y * cw + x] = (uint8_t)((a[2 * x] + a[2 * x + 1] +
									     b[2 * x] + b[2 * x + 1] + 2) >> 2);
			}
		}
		return true;
	case V4L2_PIX_FMT_NV12:
	case V4L2_PIX_FMT_NV21:
	case V4L2_PIX_FMT_NV16:
	case V4L2_PIX_FMT_NV61: {
		unsigned int step = v4l2cuse_convert_vs(f) == 0 && need420 ? 2 : 1;
		uint8_t *avg;

		vs = v4l2cuse_convert_vs(f) ? 1 : (need420 ? 1 : 0);
		cv_pic_chroma(cv, pic, w, h, vs, base + off[0], stride[0], &cb, &cr);
		avg = step == 2 ? v4l2cuse_convert_buf(cv, CV_BUF_TMP, w) : NULL;
		for (uint32_t y = 0; y < h >> vs; y++) {
			const uint8_t *a = base + off[1] + stride[1] * y * step;

			if (avg) {
				/* 4:2:2 -> 4:2:0: average line pairs. */
				for (uint32_t x = 0; x < w; x++)
					avg[x] = (uint8_t)((a[x] + a[stride[1] + x] + 1) >> 1);
				a = avg;
			}
			v4l2cuse_unpack_yuv_line(f->fourcc, a, w, NULL, cb + (size_t)y * cw,
						 cr + (size_t)y * cw);
		}
		return true;
	}
	case V4L2_PIX_FMT_YUYV:
	case V4L2_PIX_FMT_UYVY:
	case V4L2_PIX_FMT_YVYU:
		if (need420)
			return false;	/* libv4lconvert does this one */
		v4l2cuse_convert_pic_yuv(pic, w, h, 0,
					 v4l2cuse_convert_buf(cv, CV_BUF_CANON, (size_t)w * h * 2));
		for (uint32_t y = 0; y < h; y++)
			v4l2cuse_unpack_yuv_line(f->fourcc, base + stride[0] * y, w,
						 (uint8_t *)pic->p[0] + (size_t)w * y,
						 (uint8_t *)pic->p[1] + (size_t)cw * y,
						 (uint8_t *)pic->p[2] + (size_t)cw * y);
		return true;
	default:
		return false;
	}
}

int
v4l2cuse_convert_to_yuv(struct v4l2cuse_convert *cv, const struct v4l2cuse_image *in, bool need420,
			struct cv_pic *pic)
{
	const struct v4l2cuse_format_info *f = v4l2cuse_format_lookup(in->fourcc);
	size_t off[3], stride[3];
	struct cv_pic rgb;
	uint32_t w, h;
	uint8_t *buf;
	int r;

	if (f->compressed || (!f->yuv && !v4l2cuse_convert_v4l_reads(f->fourcc))) {
		/* JPEG, and RGB libv4lconvert does not read: through RGB24. */
		r = v4l2cuse_convert_to_rgb(cv, in, &rgb);
		if (r < 0)
			return r;
		/* Odd sizes lose their last column/row (4:2:0 needs even ones). */
		w = rgb.w & ~1u;
		h = rgb.h & ~1u;
		if (w == 0 || h == 0)
			return f->compressed ? -EBADMSG : -EINVAL;
		buf = v4l2cuse_convert_buf(cv, CV_BUF_CANON, (size_t)w * h * 3 / 2);
		r = v4l2cuse_convert_v4l(cv, V4L2_PIX_FMT_RGB24, w, h, (uint32_t)rgb.stride[0],
					 rgb.p[0], rgb.stride[0] * rgb.h, V4L2_PIX_FMT_YUV420, buf,
					 (size_t)w * h * 3 / 2);
		if (r < 0)
			return r;
		v4l2cuse_convert_pic_yuv(pic, w, h, 1, buf);
		return 0;
	}
	v4l2cuse_convert_layout(f, in->width, in->height, in->bytesperline, off, stride);
	if (cv_yuv_direct(cv, f, in, off, stride, need420, pic))
		return 0;
	/* Single-plane RGB/grey of odd size: crop to even, like JPEGs. */
	w = in->width & ~1u;
	h = in->height & ~1u;
	if (w == 0 || h == 0)
		return -EINVAL;
	buf = v4l2cuse_convert_buf(cv, CV_BUF_CANON, (size_t)w * h * 3 / 2);
	r = v4l2cuse_convert_v4l(cv, in->fourcc, w, h, (uint32_t)stride[0], in->data, in->size,
				 V4L2_PIX_FMT_YUV420, buf, (size_t)w * h * 3 / 2);
	if (r < 0)
		return r;
	v4l2cuse_convert_pic_yuv(pic, w, h, 1, buf);
	return 0;
}

int
v4l2cuse_convert_yuv_to_rgb(struct v4l2cuse_convert *cv, const struct cv_pic *yuv,
			    uint32_t rgb_fourcc, uint8_t *out, size_t out_len)
{
	uint32_t tmp_fourcc = yuv->vs ? V4L2_PIX_FMT_YUV420 : V4L2_PIX_FMT_YUYV;
	size_t tmp_size = yuv->vs ? (size_t)yuv->w * yuv->h * 3 / 2 : (size_t)yuv->w * yuv->h * 2;
	uint8_t *t = v4l2cuse_convert_buf(cv, CV_BUF_TMP, tmp_size);

	v4l2cuse_convert_pack_yuv(yuv, tmp_fourcc, t);
	return v4l2cuse_convert_v4l(cv, tmp_fourcc, yuv->w, yuv->h, 0, t, tmp_size, rgb_fourcc, out,
				    out_len);
}

int
v4l2cuse_convert_to_rgb(struct v4l2cuse_convert *cv, const struct v4l2cuse_image *in,
			struct cv_pic *pic)
{
	const struct v4l2cuse_format_info *f = v4l2cuse_format_lookup(in->fourcc);
	size_t off[3], stride[3];
	size_t rgb_size = (size_t)in->width * in->height * 3;
	uint8_t *out;
	int r;

	if (f->compressed)
		return v4l2cuse_convert_jpeg_decode(cv, in->data, in->size, pic);
	v4l2cuse_convert_layout(f, in->width, in->height, in->bytesperline, off, stride);
	if (in->fourcc == V4L2_PIX_FMT_RGB24) {
		*pic = (struct cv_pic){
			.kind = CV_RGB, .w = in->width, .h = in->height,
			.p = { in->data }, .stride = { stride[0] },
		};
		return 0;
	}
	out = v4l2cuse_convert_buf(cv, CV_BUF_DEC, rgb_size);
	if (!f->yuv && !v4l2cuse_convert_v4l_reads(f->fourcc)) {
		for (uint32_t y = 0; y < in->height; y++)
			v4l2cuse_unpack_rgb_line(f->fourcc, in->data + stride[0] * y, in->width,
						 out + (size_t)in->width * 3 * y);
		r = 0;
	} else if (v4l2cuse_convert_v4l_reads(f->fourcc)) {
		r = v4l2cuse_convert_v4l(cv, in->fourcc, in->width, in->height, in->bytesperline,
					 in->data, in->size, V4L2_PIX_FMT_RGB24, out, rgb_size);
	} else {
		/* NV12/21, NV16/61, 422P, 4:4:4: repack for libv4lconvert. */
		struct cv_pic yuv;

		r = v4l2cuse_convert_to_yuv(cv, in, false, &yuv);
		if (r < 0)
			return r;
		r = v4l2cuse_convert_yuv_to_rgb(cv, &yuv, V4L2_PIX_FMT_RGB24, out, rgb_size);
	}
	if (r < 0)
		return r;
	*pic = (struct cv_pic){
		.kind = CV_RGB, .w = in->width, .h = in->height,
		.p = { out }, .stride = { (size_t)in->width * 3 },
	};
	return 0;
}
