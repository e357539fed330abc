/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Frame conversion: input -> intermediate -> scale -> pack (convert.h);
 * the stages live in convert-in.c, convert-out.c and convert-jpeg.c
 * (convert-private.h), this file holds the converter itself.
 *
 * Buffers: every intermediate lives in one of a few scratch buffers owned
 * by struct v4l2cuse_convert and grown on demand (bounded by
 * V4L2CUSE_MAX_* since every size is checked first), so a steady stream
 * allocates nothing per frame.
 */

#include "config.h"

#include <errno.h>
#include <string.h>

#include <glib.h>
#include <libv4l-plugin.h>
#include <libv4lconvert.h>

#include "util/macros.h"
#include "v4l2cuse/format.h"
#include "convert-private.h"
#include "pack.h"

/* --- input formats ------------------------------------------------------ */

/*
 * Every format of format.c is an input. Y'CbCr goes through a 4:2:x
 * intermediate, so its widths must be even; the rest of the layout is
 * format.c's. 0 if bad.
 */
size_t
v4l2cuse_convert_layout(const struct v4l2cuse_format_info *f, uint32_t w, uint32_t h, uint32_t bpl,
			size_t off[3], size_t stride[3])
{
	if (!f || (f->yuv && (w & 1)))
		return 0;
	return v4l2cuse_format_frame_size(f, w, h, bpl, off, stride);
}

/* Chroma planes of @f have height >> this many lines. */
unsigned int
v4l2cuse_convert_vs(const struct v4l2cuse_format_info *f)
{
	return f->vdiv > 1 ? 1 : 0;
}

/*
 * The raw formats libv4lconvert takes as a source (and does well); the
 * others are repacked first. A fact of the library, not of the formats:
 * libv4lconvert 1.22 reads RGB565 frames for Y'CbCr targets past their end,
 * with red and blue swapped, and ignores their bytesperline for RGB ones,
 * so RGB565 is unpacked to RGB24 by pack.c instead.
 */
bool
v4l2cuse_convert_v4l_reads(uint32_t fourcc)
{
	switch (fourcc) {
	case V4L2_PIX_FMT_YUYV:
	case V4L2_PIX_FMT_UYVY:
	case V4L2_PIX_FMT_YVYU:
	case V4L2_PIX_FMT_YUV420:
	case V4L2_PIX_FMT_YVU420:
	case V4L2_PIX_FMT_RGB24:
	case V4L2_PIX_FMT_BGR24:
	case V4L2_PIX_FMT_XRGB32:
	case V4L2_PIX_FMT_XBGR32:
	case V4L2_PIX_FMT_GREY:
		return true;
	default:
		return false;
	}
}

bool
v4l2cuse_convert_input_supported(uint32_t fourcc)
{
	return v4l2cuse_format_lookup(fourcc) != NULL;
}

size_t
v4l2cuse_convert_input_size(uint32_t fourcc, uint32_t width, uint32_t height, uint32_t bytesperline)
{
	return v4l2cuse_convert_layout(v4l2cuse_format_lookup(fourcc), width, height, bytesperline,
				       NULL, NULL);
}

/* --- state -------------------------------------------------------------- */

uint8_t *
v4l2cuse_convert_buf(struct v4l2cuse_convert *cv, unsigned int i, size_t size)
{
	if (cv->bufs[i].size < size) {
		g_free(cv->bufs[i].p);
		cv->bufs[i].p = g_malloc(size);
		cv->bufs[i].size = size;
	}
	return cv->bufs[i].p;
}

/*
 * libv4lconvert wants a device to ask for formats; a fake one with a YUYV
 * format keeps it from adding software-processing controls (and their
 * shared-memory segment) for a "device" it thinks needs conversion.
 */
static int
cv_fake_ioctl(void *priv, int fd, unsigned long request, void *arg)
{
	if (request == VIDIOC_ENUM_FMT) {
		struct v4l2_fmtdesc *f = arg;

		if (f->index == 0) {
			f->pixelformat = V4L2_PIX_FMT_YUYV;
			return 0;
		}
	}
	errno = EINVAL;
	return -1;
}

static const struct libv4l_dev_ops cv_fake_dev_ops = {
	.ioctl = cv_fake_ioctl,
};

struct v4l2cuse_convert *
v4l2cuse_convert_new(void)
{
	struct v4l2cuse_convert *cv = g_new0(struct v4l2cuse_convert, 1);

	cv->v4l = v4lconvert_create_with_dev_ops(-1, NULL, &cv_fake_dev_ops);
	if (!cv->v4l)
		g_error("libv4lconvert: cannot create a converter");	/* OOM only */
	return cv;
}

void
v4l2cuse_convert_free(struct v4l2cuse_convert *cv)
{
	if (!cv)
		return;
	if (cv->dinfo_init)
		jpeg_destroy_decompress(&cv->dinfo);
	if (cv->cinfo_init)
		jpeg_destroy_compress(&cv->cinfo);
	v4lconvert_destroy(cv->v4l);
	for (unsigned int i = 0; i < CV_N_BUFS; i++)
		g_free(cv->bufs[i].p);
	g_free(cv);
}

void
v4l2cuse_convert_set_strict_jpeg(struct v4l2cuse_convert *cv, bool strict)
{
	cv->strict_jpeg = strict;
}

/* --- libv4lconvert ------------------------------------------------------ */

/*
 * libv4lconvert's Y'CbCr -> RGB uses BT.601 limited-range chroma
 * coefficients but takes Y' as it is (16 stays 16), while its RGB -> Y'CbCr
 * produces limited range: frames would come out with grey blacks and dull
 * whites. A copy of the input with Y' mapped to full range first (the
 * GREY mapping) makes the pair consistent.
 */
static const uint8_t *
cv_expand_luma(struct v4l2cuse_convert *cv, const struct v4l2cuse_format_info *f, uint32_t w,
	       uint32_t h, uint32_t bpl, const uint8_t *data)
{
	const uint8_t *lut = v4l2cuse_convert_luma_lut();
	size_t off[3], stride[3], total = v4l2cuse_convert_layout(f, w, h, bpl, off, stride);
	uint8_t *t = v4l2cuse_convert_buf(cv, CV_BUF_LUMA, total);
	struct v4l2cuse_pack_order o;
	unsigned int first = 0, step = 1;

	memcpy(t, data, total);
	if (v4l2cuse_pack_422_order(f->fourcc, &o))
		first = o.y0, step = 2;		/* y1 = y0 + 2 */
	for (uint32_t y = 0; y < h; y++) {
		uint8_t *row = t + stride[0] * y;

		for (size_t x = first; x < (size_t)w * step; x += step)
			row[x] = lut[row[x]];
	}
	return t;
}

int
v4l2cuse_convert_v4l(struct v4l2cuse_convert *cv, uint32_t fourcc, uint32_t w, uint32_t h,
		     uint32_t bpl, const uint8_t *data, size_t size, uint32_t dst_fourcc,
		     uint8_t *dst, size_t dst_len)
{
	struct v4l2_format s = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	struct v4l2_format d = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	const struct v4l2cuse_format_info *f = v4l2cuse_format_lookup(fourcc);
	int r;

	if ((dst_fourcc == V4L2_PIX_FMT_RGB24 || dst_fourcc == V4L2_PIX_FMT_BGR24) && f->yuv)
		data = cv_expand_luma(cv, f, w, h, bpl, data);
	s.fmt.pix.width = d.fmt.pix.width = w;
	s.fmt.pix.height = d.fmt.pix.height = h;
	s.fmt.pix.field = d.fmt.pix.field = V4L2_FIELD_NONE;
	s.fmt.pix.pixelformat = fourcc;
	s.fmt.pix.bytesperline = bpl ? bpl : w * f->bpp[0] / 8;
	s.fmt.pix.sizeimage = (uint32_t)size;
	d.fmt.pix.pixelformat = dst_fourcc;
	d.fmt.pix.bytesperline = w * v4l2cuse_format_lookup(dst_fourcc)->bpp[0] / 8;
	d.fmt.pix.sizeimage = (uint32_t)dst_len;
	r = v4lconvert_convert(cv->v4l, &s, &d, (unsigned char *)data, (int)size, dst,
			       (int)dst_len);
	if (r < 0) {
		g_debug("libv4lconvert %.4s -> %.4s: %s", (const char *)&fourcc,
			(const char *)&dst_fourcc, v4lconvert_get_error_message(cv->v4l));
		return -EIO;
	}
	return 0;
}

/* --- entry points ------------------------------------------------------- */

/* Same format and size: copy the planes to the unpadded target layout. */
static int
cv_copy(const struct v4l2cuse_format_info *f, const struct v4l2cuse_image *in,
	const struct v4l2_pix_format *out, uint8_t *dst, uint32_t *ret_bytesused)
{
	size_t off[3], stride[3], doff[3], dstride[3];

	v4l2cuse_convert_layout(f, in->width, in->height, in->bytesperline, off, stride);
	if (v4l2cuse_convert_layout(f, out->width, out->height, 0, doff, dstride) > out->sizeimage)
		return -EINVAL;
	for (unsigned int i = 0; i < f->n_planes; i++)
		v4l2cuse_convert_copy_plane(dst + doff[i], dstride[i], in->data + off[i], stride[i],
					    dstride[i], i ? out->height / f->vdiv : out->height);
	*ret_bytesused = out->sizeimage;
	return 0;
}

static int
cv_validate(const struct v4l2cuse_image *in, const struct v4l2cuse_format_info **ret_f)
{
	const struct v4l2cuse_format_info *f = in ? v4l2cuse_format_lookup(in->fourcc) : NULL;

	size_t need;

	if (!f || !in->data)
		return -EINVAL;
	/* Raw frames must hold their layout; a JPEG's own header tells (decoding). */
	need = f->compressed ? 0
			     : v4l2cuse_convert_layout(f, in->width, in->height, in->bytesperline,
						       NULL, NULL);
	if ((!f->compressed && need == 0) || in->size < need)
		return -EINVAL;
	*ret_f = f;
	return 0;
}

int
v4l2cuse_convert_frame(struct v4l2cuse_convert *cv, const struct v4l2cuse_image *in,
		       const struct v4l2_pix_format *out, void *dst, size_t dst_len,
		       uint32_t *ret_bytesused)
{
	const struct v4l2cuse_format_info *oi = v4l2cuse_format_info(out->pixelformat);
	uint32_t f_out = out->pixelformat, w = out->width, h = out->height;
	const struct v4l2cuse_format_info *f;
	struct cv_pic pic, scaled;
	uint8_t *buf;
	int r;

	if (!oi || !dst || dst_len < out->sizeimage || w == 0 || h == 0 ||
	    w > V4L2CUSE_MAX_WIDTH || h > V4L2CUSE_MAX_HEIGHT ||
	    (oi->hdiv > 1 && (w & 1)) || (oi->n_planes > 1 && oi->vdiv > 1 && (h & 1)))
		return -EINVAL;
	r = cv_validate(in, &f);
	if (r < 0)
		return r;

	/* Same format and size. */
	if (!f->compressed && in->fourcc == f_out && in->width == w && in->height == h)
		return cv_copy(f, in, out, dst, ret_bytesused);
	if (f->compressed && f_out == V4L2_PIX_FMT_MJPEG && in->size <= out->sizeimage) {
		uint32_t jw, jh;

		if (v4l2cuse_jpeg_size(in->data, in->size, &jw, &jh) == 0 && jw == w && jh == h) {
			memcpy(dst, in->data, in->size);
			*ret_bytesused = (uint32_t)in->size;
			return 0;
		}
	}
	/* libv4lconvert straight into the target. */
	if (v4l2cuse_convert_v4l_reads(f->fourcc) && in->width == w && in->height == h &&
	    (f_out == V4L2_PIX_FMT_RGB24 || f_out == V4L2_PIX_FMT_BGR24 ||
	     f_out == V4L2_PIX_FMT_YUV420 || f_out == V4L2_PIX_FMT_YVU420)) {
		r = v4l2cuse_convert_v4l(cv, in->fourcc, w, h, in->bytesperline, in->data, in->size,
					 f_out, dst, out->sizeimage);
		if (r == 0)
			*ret_bytesused = out->sizeimage;
		return r;
	}

	if (v4l2cuse_convert_is_rgb_target(oi) && f->yuv && (in->width != w || in->height != h) &&
	    !(w & 1) && !(h & 1)) {
		/*
		 * Y'CbCr to RGB at another size: scale first (half the samples
		 * of RGB), then convert at the output size.
		 */
		r = v4l2cuse_convert_to_yuv(cv, in, false, &pic);
		if (r < 0)
			return r;
		v4l2cuse_convert_scale(cv, &pic, w, h, false, &scaled);
		if (f_out == V4L2_PIX_FMT_RGB24 || f_out == V4L2_PIX_FMT_BGR24) {
			r = v4l2cuse_convert_yuv_to_rgb(cv, &scaled, f_out, dst, out->sizeimage);
			if (r == 0)
				*ret_bytesused = out->sizeimage;
			return r;
		}
		buf = v4l2cuse_convert_buf(cv, CV_BUF_DEC, (size_t)w * h * 3);
		r = v4l2cuse_convert_yuv_to_rgb(cv, &scaled, V4L2_PIX_FMT_RGB24, buf,
						(size_t)w * h * 3);
		if (r < 0)
			return r;
		pic = (struct cv_pic){
			.kind = CV_RGB, .w = w, .h = h,
			.p = { cv->bufs[CV_BUF_DEC].p }, .stride = { (size_t)w * 3 },
		};
		return v4l2cuse_convert_pack(cv, &pic, out, dst, dst_len, ret_bytesused);
	}
	if (v4l2cuse_convert_is_rgb_target(oi))
		r = v4l2cuse_convert_to_rgb(cv, in, &pic);
	else if (f_out == V4L2_PIX_FMT_GREY && in->fourcc == V4L2_PIX_FMT_GREY)
		r = 0, pic = (struct cv_pic){
			.kind = CV_GREY, .w = in->width, .h = in->height,
			.p = { in->data }, .stride = { in->bytesperline ? in->bytesperline : in->width },
		};
	else
		r = v4l2cuse_convert_to_yuv(cv, in, oi->vdiv > 1, &pic);	/* 4:2:0 targets */
	if (r < 0)
		return r;
	if (pic.w != w || pic.h != h) {
		v4l2cuse_convert_scale(cv, &pic, w, h, f_out == V4L2_PIX_FMT_GREY, &scaled);
		pic = scaled;
	}
	return v4l2cuse_convert_pack(cv, &pic, out, dst, dst_len, ret_bytesused);
}

int
v4l2cuse_convert_to_rgb24(struct v4l2cuse_convert *cv, const struct v4l2cuse_image *in,
			  const uint8_t **ret_rgb, uint32_t *ret_width, uint32_t *ret_height)
{
	const struct v4l2cuse_format_info *f;
	struct cv_pic pic;
	uint8_t *buf;
	int r;

	r = cv_validate(in, &f);
	if (r < 0)
		return r;
	r = v4l2cuse_convert_to_rgb(cv, in, &pic);
	if (r < 0)
		return r;
	if (pic.stride[0] != (size_t)pic.w * 3) {
		buf = v4l2cuse_convert_buf(cv, CV_BUF_SCALE, (size_t)pic.w * pic.h * 3);
		v4l2cuse_convert_copy_plane(buf, (size_t)pic.w * 3, pic.p[0], pic.stride[0],
					    (size_t)pic.w * 3, pic.h);
		pic.p[0] = buf;
	}
	*ret_rgb = pic.p[0];
	*ret_width = pic.w;
	*ret_height = pic.h;
	return 0;
}
