/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The converter's first stage (convert-private.h): an input frame to the
 * intermediate at its own size, as the target wants it (struct cv_want).
 *
 * libyuv does the work: planar Y'CbCr is used in place, packed 4:2:2
 * unpacked (YUY2To*, UYVYTo*; YVYU is YUYV with its chroma planes
 * swapped), semi-planar chroma split (SplitUVPlane), chroma subsampled
 * further (ScalePlane), R'G'B' brought to ARGB and to BT.601 Y'CbCr
 * (ARGBToI42x, the J variants for full range). Ours (convert-ycc.c): R'G'B'
 * to BT.709 Y'CbCr, which libyuv lacks; JPEG goes through convert-jpeg.c.
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

/* Chroma lines of a picture of @h lines (4:2:0 with an odd height: one more). */
static uint32_t
cv_chroma_lines(uint32_t h, unsigned int vs)
{
	return (h + vs) >> vs;
}

void
v4l2cuse_convert_pic_yuv(struct cv_pic *pic, uint32_t w, uint32_t h, unsigned int vs,
			 struct cv_ycc ycc, uint8_t *buf)
{
	size_t ysize = (size_t)w * h, csize = (size_t)(w / 2) * cv_chroma_lines(h, vs);

	*pic = (struct cv_pic){
		.kind = CV_YUV, .w = w, .h = h, .vs = vs, .ycc = ycc,
		.p = { buf, buf + ysize, buf + ysize + csize },
		.stride = { w, w / 2, w / 2 },
	};
}

/*
 * A Y'CbCr picture whose luma stays where it is (@y, @y_stride) and whose
 * chroma (w / 2 x its lines) goes to tight planes in scratch buffer @buf.
 */
static void
cv_pic_chroma(struct v4l2cuse_convert *cv, unsigned int buf, struct cv_pic *pic, uint32_t w,
	      uint32_t h, unsigned int vs, struct cv_ycc ycc, const uint8_t *y, size_t y_stride)
{
	size_t cw = w / 2, csize = cw * cv_chroma_lines(h, vs);
	uint8_t *c = v4l2cuse_convert_buf(cv, buf, csize * 2);

	*pic = (struct cv_pic){
		.kind = CV_YUV, .w = w, .h = h, .vs = vs, .ycc = ycc,
		.p = { y, c, c + csize }, .stride = { y_stride, cw, cw },
	};
}

/*
 * Resample chroma planes (bilinear: exact halving averages line or column
 * pairs) into the chroma of @pic (already laid out by cv_pic_chroma()).
 */
static void
cv_chroma_resample(const struct cv_pic *pic, const uint8_t *const c[2], const size_t stride[2],
		   uint32_t sw, uint32_t sh)
{
	for (unsigned int i = 0; i < 2; i++)
		ScalePlane(c[i], (int)stride[i], (int)sw, (int)sh, (uint8_t *)pic->p[1 + i],
			   (int)pic->stride[1 + i], (int)(pic->w / 2),
			   (int)cv_chroma_lines(pic->h, pic->vs), kFilterBilinear);
}

/* Raw Y'CbCr input: 4:2:0 (need420 or the input's), else 4:2:2. */
static int
cv_in_yuv(struct v4l2cuse_convert *cv, const struct v4l2cuse_format_info *f,
	  const struct v4l2cuse_image *in, const size_t off[3], const size_t stride[3],
	  bool need420, struct cv_ycc ycc, struct cv_pic *pic)
{
	uint32_t w = in->width, h = in->height, cw = w / 2;
	const uint8_t *base = in->data;
	unsigned int vs = need420 || f->vdiv > 1 ? 1 : 0;
	bool swap = v4l2cuse_pack_cr_first(f->fourcc);
	uint8_t *buf, *cb, *cr;

	switch (f->fourcc) {
	case V4L2_PIX_FMT_YUV420:
	case V4L2_PIX_FMT_YVU420:
	case V4L2_PIX_FMT_YUV422P:
	case V4L2CUSE_PIX_FMT_YUV444P: {
		const uint8_t *c[2] = { base + off[swap ? 2 : 1], base + off[swap ? 1 : 2] };
		const size_t cs[2] = { stride[1], stride[2] };

		if (f->hdiv == 2 && (f->vdiv == 2 || !need420)) {
			*pic = (struct cv_pic){
				.kind = CV_YUV, .w = w, .h = h, .vs = f->vdiv > 1, .ycc = ycc,
				.p = { base + off[0], c[0], c[1] },
				.stride = { stride[0], cs[0], cs[1] },
			};
			return 0;
		}
		/* 4:2:2 -> 4:2:0, 4:4:4 -> 4:2:x */
		cv_pic_chroma(cv, CV_BUF_IN, pic, w, h, vs, ycc, base + off[0], stride[0]);
		cv_chroma_resample(pic, c, cs, w / (f->hdiv == 2 ? 2 : 1), h);
		return 0;
	}
	case V4L2_PIX_FMT_NV12:
	case V4L2_PIX_FMT_NV21:
	case V4L2_PIX_FMT_NV16:
	case V4L2_PIX_FMT_NV61: {
		uint32_t ch = h / f->vdiv;

		if (vs && f->vdiv == 1) {
			/* NV16 -> 4:2:0: split at full height, then halve. */
			const uint8_t *c[2];
			size_t cs[2] = { cw, cw };

			buf = v4l2cuse_convert_buf(cv, CV_BUF_TMP, (size_t)cw * ch * 2);
			c[swap] = buf;
			c[!swap] = buf + (size_t)cw * ch;
			SplitUVPlane(base + off[1], (int)stride[1], buf, (int)cw,
				     buf + (size_t)cw * ch, (int)cw, (int)cw, (int)ch);
			cv_pic_chroma(cv, CV_BUF_IN, pic, w, h, 1, ycc, base + off[0], stride[0]);
			cv_chroma_resample(pic, c, cs, cw, ch);
			return 0;
		}
		cv_pic_chroma(cv, CV_BUF_IN, pic, w, h, vs, ycc, base + off[0], stride[0]);
		cb = (uint8_t *)pic->p[1 + swap];
		cr = (uint8_t *)pic->p[2 - swap];
		SplitUVPlane(base + off[1], (int)stride[1], cb, (int)cw, cr, (int)cw, (int)cw,
			     (int)ch);
		return 0;
	}
	case V4L2_PIX_FMT_YUYV:
	case V4L2_PIX_FMT_UYVY:
	case V4L2_PIX_FMT_YVYU: {
		bool uyvy = f->fourcc == V4L2_PIX_FMT_UYVY;

		buf = v4l2cuse_convert_buf(cv, CV_BUF_IN,
					   (size_t)w * h + (size_t)cw * cv_chroma_lines(h, vs) * 2);
		v4l2cuse_convert_pic_yuv(pic, w, h, vs, ycc, buf);
		cb = (uint8_t *)pic->p[1 + swap];
		cr = (uint8_t *)pic->p[2 - swap];
		if (vs)
			(uyvy ? UYVYToI420 : YUY2ToI420)(base + off[0], (int)stride[0], buf, (int)w, cb,
							 (int)cw, cr, (int)cw, (int)w, (int)h);
		else
			(uyvy ? UYVYToI422 : YUY2ToI422)(base + off[0], (int)stride[0], buf, (int)w, cb,
							 (int)cw, cr, (int)cw, (int)w, (int)h);
		return 0;
	}
	default:
		return -EINVAL;
	}
}

/* One of our R'G'B' layouts into ARGB (@dst, tight), 0xff in A. */
static void
cv_to_argb(uint32_t fourcc, const uint8_t *src, size_t stride, uint32_t w, uint32_t h,
	   uint8_t *dst)
{
	static const uint8_t opaque[V4L2CUSE_MAX_WIDTH] = { [0 ... V4L2CUSE_MAX_WIDTH - 1] = 0xff };
	int ds = (int)w * 4;

	switch (fourcc) {
	case V4L2_PIX_FMT_RGB24:	/* R, G, B bytes: libyuv's RAW */
		RAWToARGB(src, (int)stride, dst, ds, (int)w, (int)h);
		break;
	case V4L2_PIX_FMT_BGR24:	/* B, G, R: libyuv's RGB24 */
		RGB24ToARGB(src, (int)stride, dst, ds, (int)w, (int)h);
		break;
	case V4L2_PIX_FMT_RGB565:
		RGB565ToARGB(src, (int)stride, dst, ds, (int)w, (int)h);
		break;
	case V4L2_PIX_FMT_XRGB32:	/* X, R, G, B: libyuv's BGRA */
		BGRAToARGB(src, (int)stride, dst, ds, (int)w, (int)h);
		ARGBCopyYToAlpha(opaque, 0, dst, ds, (int)w, (int)h);
		break;
	case V4L2_PIX_FMT_XBGR32:	/* B, G, R, X: libyuv's ARGB */
		ARGBCopy(src, (int)stride, dst, ds, (int)w, (int)h);
		ARGBCopyYToAlpha(opaque, 0, dst, ds, (int)w, (int)h);
		break;
	}
}

/*
 * An ARGB picture to Y'CbCr in CV_BUF_IN, in @want's colorimetry (widths
 * cropped to even). libyuv for BT.601, ours for BT.709.
 */
static int
cv_argb_to_yuv(struct v4l2cuse_convert *cv, const struct cv_pic *argb, const struct cv_want *want,
	       struct cv_pic *pic)
{
	uint32_t w = argb->w & ~1u, h = argb->h, cw = w / 2;
	unsigned int vs = want->need420 ? 1 : 0;
	const uint8_t *s = argb->p[0];
	int ss = (int)argb->stride[0];
	uint8_t *y, *u, *v;

	if (w == 0)
		return -EINVAL;
	v4l2cuse_convert_pic_yuv(pic, w, h, vs, want->ycc,
				 v4l2cuse_convert_buf(cv, CV_BUF_IN,
						      (size_t)w * h +
							      (size_t)cw * cv_chroma_lines(h, vs) * 2));
	y = (uint8_t *)pic->p[0];
	u = (uint8_t *)pic->p[1];
	v = (uint8_t *)pic->p[2];
	if (want->ycc.bt709) {
		struct cv_pic a = *argb;

		a.w = w;
		v4l2cuse_convert_argb_to_ycc(&a, vs, want->ycc, pic);
	} else if (want->ycc.full) {
		(vs ? ARGBToJ420 : ARGBToJ422)(s, ss, y, (int)w, u, (int)cw, v, (int)cw, (int)w,
					       (int)h);
	} else {
		(vs ? ARGBToI420 : ARGBToI422)(s, ss, y, (int)w, u, (int)cw, v, (int)cw, (int)w,
					       (int)h);
	}
	return 0;
}

int
v4l2cuse_convert_input(struct v4l2cuse_convert *cv, const struct v4l2cuse_image *in,
		       const struct cv_want *want, uint32_t y0, uint32_t lines, struct cv_pic *pic)
{
	const struct v4l2cuse_format_info *f = v4l2cuse_format_lookup(in->fourcc);
	uint32_t w = in->width, h = lines;
	struct v4l2cuse_image rows = *in;
	size_t off[3], stride[3];
	struct cv_pic argb, dec;
	uint8_t *buf;
	int r;

	if (f->compressed) {
		r = v4l2cuse_convert_jpeg_decode(cv, in->data, in->size, want,
						 want->yuv ? CV_BUF_TMP : CV_BUF_IN, pic);
		if (r < 0)
			return r;
		dec = *pic;
		if (dec.kind == CV_ARGB)
			return want->yuv ? cv_argb_to_yuv(cv, &dec, want, pic) : 0;
		if (want->need420 && dec.vs == 0) {
			const uint8_t *c[2] = { dec.p[1], dec.p[2] };
			const size_t cs[2] = { dec.stride[1], dec.stride[2] };

			cv_pic_chroma(cv, CV_BUF_TMP, pic, dec.w, dec.h, 1, dec.ycc, dec.p[0],
				      dec.stride[0]);
			cv_chroma_resample(pic, c, cs, dec.w / 2, dec.h);
		}
		return 0;
	}
	/*
	 * Rows [y0, y0 + lines) as a picture of their own (y0 even: a 4:2:0
	 * chroma line belongs to one strip); the colorimetry is the whole
	 * frame's, as it depends on its height.
	 */
	v4l2cuse_convert_layout(f, w, in->height, in->bytesperline, off, stride);
	for (unsigned int i = 0; i < f->n_planes; i++)
		off[i] += stride[i] * (i ? y0 / f->vdiv : y0);
	rows.height = lines;
	if (f->yuv)
		return cv_in_yuv(cv, f, &rows, off, stride, want->need420,
				 v4l2cuse_convert_colorimetry(f->fourcc, in->height, in->ycbcr_enc,
							      in->quantization),
				 pic);
	/* One plane from here on. */
	rows.data = in->data + off[0];
	in = &rows;

	if (f->fourcc == V4L2_PIX_FMT_GREY) {
		*pic = (struct cv_pic){
			.kind = CV_GREY, .w = w, .h = h,
			.p = { in->data }, .stride = { stride[0] },
		};
		if (!want->yuv)
			return 0;
		/* Full-range BT.601 Y'CbCr with neutral chroma. */
		w &= ~1u;
		if (w == 0)
			return -EINVAL;
		cv_pic_chroma(cv, CV_BUF_IN, pic, w, h, want->need420, CV_YCC_JFIF, in->data,
			      stride[0]);
		SetPlane((uint8_t *)pic->p[1], (int)pic->stride[1], (int)(w / 2),
			 (int)cv_chroma_lines(h, pic->vs) * 2, 128);
		return 0;
	}

	/* R'G'B' */
	argb = (struct cv_pic){
		.kind = CV_ARGB, .w = w, .h = h, .p = { in->data }, .stride = { stride[0] },
	};
	if (f->fourcc != V4L2_PIX_FMT_XBGR32 || !want->yuv) {
		buf = v4l2cuse_convert_buf(cv, want->yuv ? CV_BUF_TMP : CV_BUF_IN, (size_t)w * h * 4);
		cv_to_argb(f->fourcc, in->data, stride[0], w, h, buf);
		argb.p[0] = buf;
		argb.stride[0] = (size_t)w * 4;
	}
	if (!want->yuv) {
		*pic = argb;
		return 0;
	}
	return cv_argb_to_yuv(cv, &argb, want, pic);
}
