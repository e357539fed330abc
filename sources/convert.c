/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Frame conversion: input -> intermediate -> scale -> pack (convert.h);
 * the stages live in convert-in.c, convert-out.c, convert-ycc.c and
 * convert-jpeg.c (convert-private.h), this file holds the converter itself.
 *
 * Buffers: every intermediate lives in one of a few scratch buffers owned
 * by struct v4l2cuse_convert and grown on demand (bounded by
 * V4L2CUSE_MAX_* since every size is checked first), so a steady stream
 * allocates nothing per frame. Each stage writes its own buffer, so a
 * picture of one stage stays valid while the next one runs.
 */

#include "config.h"

#include <errno.h>
#include <string.h>

#include <glib.h>

#include "util/macros.h"
#include "v4l2cuse/format.h"
#include "convert-private.h"

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

/* --- colorimetry -------------------------------------------------------- */

struct cv_ycc
v4l2cuse_convert_colorimetry(uint32_t fourcc, uint32_t height, uint32_t enc, uint32_t quant)
{
	struct v4l2_pix_format pix = { .pixelformat = fourcc, .width = 2, .height = height };

	v4l2cuse_format_colorimetry(&pix);
	if (enc)
		pix.ycbcr_enc = enc;
	if (quant)
		pix.quantization = quant;
	return (struct cv_ycc){
		.bt709 = pix.ycbcr_enc == V4L2_YCBCR_ENC_709 ||
			 pix.ycbcr_enc == V4L2_YCBCR_ENC_XV709,
		.full = pix.quantization == V4L2_QUANTIZATION_FULL_RANGE,
	};
}

/*
 * The Y'CbCr a target is written in: its own colorimetry where it has one
 * (a camera's label passed on at the camera's format), read as an input's
 * would be, else format.c's for its format and height.
 */
struct cv_ycc
v4l2cuse_convert_target_colorimetry(const struct v4l2_pix_format *out)
{
	struct v4l2cuse_image img = { 0 };

	v4l2cuse_convert_image_colorimetry(&img, out);
	return v4l2cuse_convert_colorimetry(out->pixelformat, out->height, img.ycbcr_enc,
					    img.quantization);
}

struct v4l2cuse_image
v4l2cuse_convert_image_of(const struct v4l2_pix_format *pix, const void *data, size_t bytesused)
{
	return (struct v4l2cuse_image){
		.fourcc = pix->pixelformat,
		.width = pix->width,
		.height = pix->height,
		.bytesperline = pix->bytesperline,
		.data = data,
		.size = pix->bytesperline ? pix->sizeimage : bytesused,
	};
}

void
v4l2cuse_convert_image_colorimetry(struct v4l2cuse_image *img, const struct v4l2_pix_format *pix)
{
	uint32_t enc = pix->ycbcr_enc, quant = pix->quantization;

	if (!pix->colorspace)
		return;
	if (enc == V4L2_YCBCR_ENC_DEFAULT)
		enc = V4L2_MAP_YCBCR_ENC_DEFAULT(pix->colorspace);
	if (quant == V4L2_QUANTIZATION_DEFAULT)
		quant = V4L2_MAP_QUANTIZATION_DEFAULT(false, pix->colorspace, enc);
	img->ycbcr_enc = enc;
	img->quantization = quant;
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

struct v4l2cuse_convert *
v4l2cuse_convert_new(void)
{
	return g_new0(struct v4l2cuse_convert, 1);
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
	v4l2cuse_jpeg_raw_clear(&cv->craw);
	for (unsigned int i = 0; i < CV_N_BUFS; i++)
		g_free(cv->bufs[i].p);
	g_free(cv);
}

void
v4l2cuse_convert_set_strict_jpeg(struct v4l2cuse_convert *cv, bool strict)
{
	cv->strict_jpeg = strict;
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

/* A raw input whose samples are the target's already (a copy will do). */
static bool
cv_same_samples(const struct v4l2cuse_format_info *f, const struct v4l2cuse_image *in,
		const struct v4l2_pix_format *out)
{
	if (f->compressed || in->fourcc != out->pixelformat || in->width != out->width ||
	    in->height != out->height)
		return false;
	return !f->yuv ||
	       cv_ycc_equal(v4l2cuse_convert_colorimetry(in->fourcc, in->height, in->ycbcr_enc,
						 in->quantization),
			    v4l2cuse_convert_target_colorimetry(out));
}

/*
 * A raw frame to a raw target of its size (even width and height), input
 * and pack strip by strip (CV_STRIP_LINES).
 */
static int
cv_convert_strips(struct v4l2cuse_convert *cv, const struct v4l2cuse_image *in,
		  const struct cv_want *want, const struct v4l2_pix_format *out, uint8_t *dst,
		  size_t dst_len, uint32_t *ret_bytesused)
{
	for (uint32_t y0 = 0; y0 < out->height; y0 += CV_STRIP_LINES) {
		uint32_t lines = MIN(CV_STRIP_LINES, out->height - y0);
		struct cv_pic pic;
		int r;

		r = v4l2cuse_convert_input(cv, in, want, y0, lines, &pic);
		if (r < 0)
			return r;
		r = v4l2cuse_convert_pack(cv, &pic, out, y0, dst, dst_len, ret_bytesused);
		if (r < 0)
			return r;
	}
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
	struct cv_want want;
	int r;

	if (!oi || !dst || dst_len < out->sizeimage || w == 0 || h == 0 ||
	    w > V4L2CUSE_MAX_WIDTH || h > V4L2CUSE_MAX_HEIGHT ||
	    (oi->hdiv > 1 && (w & 1)) || (oi->n_planes > 1 && oi->vdiv > 1 && (h & 1)))
		return -EINVAL;
	r = cv_validate(in, &f);
	if (r < 0)
		return r;

	if (cv_same_samples(f, in, out))
		return cv_copy(f, in, out, dst, ret_bytesused);
	if (f->compressed && f_out == V4L2_PIX_FMT_MJPEG && in->size <= out->sizeimage) {
		uint32_t jw, jh;

		if (v4l2cuse_jpeg_size(in->data, in->size, &jw, &jh) == 0 && jw == w && jh == h) {
			memcpy(dst, in->data, in->size);
			*ret_bytesused = (uint32_t)in->size;
			return 0;
		}
	}

	want = (struct cv_want){
		.rgb = v4l2cuse_convert_is_rgb_target(oi),
		.yuv = !v4l2cuse_convert_is_rgb_target(oi) && f_out != V4L2_PIX_FMT_GREY,
		/* 4:2:0 targets; MJPEG from R'G'B' and grey, like libjpeg's default */
		.need420 = (oi->n_planes > 1 && oi->vdiv > 1) ||
			   (oi->compressed && !f->yuv && !f->compressed),
		.ycc = v4l2cuse_convert_target_colorimetry(out),
		.w = w, .h = h,
	};
	if (!f->compressed && !oi->compressed && in->width == w && in->height == h &&
	    w % 2 == 0 && h % 2 == 0 && !cv->whole_frames)
		return cv_convert_strips(cv, in, &want, out, dst, dst_len, ret_bytesused);
	r = v4l2cuse_convert_input(cv, in, &want, 0, in->height, &pic);
	if (r < 0)
		return r;
	if (pic.w != w || pic.h != h) {
		v4l2cuse_convert_scale(cv, &pic, w, h, &scaled);
		pic = scaled;
	}
	if (cv->whole_frames)
		return v4l2cuse_convert_pack(cv, &pic, out, 0, dst, dst_len, ret_bytesused);
	return v4l2cuse_convert_pack_strips(cv, &pic, out, dst, dst_len, ret_bytesused);
}

int
v4l2cuse_convert_to_rgb24(struct v4l2cuse_convert *cv, const struct v4l2cuse_image *in,
			  const uint8_t **ret_rgb, uint32_t *ret_width, uint32_t *ret_height)
{
	const struct v4l2cuse_format_info *f;
	const struct cv_want want = { .rgb = true };	/* packed as RGB24 below */
	struct v4l2_pix_format rgb;
	struct cv_pic pic;
	uint32_t used;
	uint8_t *buf;
	int r;

	r = cv_validate(in, &f);
	if (r < 0)
		return r;
	r = v4l2cuse_convert_input(cv, in, &want, 0, in->height, &pic);
	if (r < 0)
		return r;
	rgb = (struct v4l2_pix_format){
		.pixelformat = V4L2_PIX_FMT_RGB24, .width = pic.w, .height = pic.h,
		.bytesperline = pic.w * 3, .sizeimage = pic.w * pic.h * 3,
	};
	buf = v4l2cuse_convert_buf(cv, CV_BUF_STILL, rgb.sizeimage);
	r = v4l2cuse_convert_pack(cv, &pic, &rgb, 0, buf, rgb.sizeimage, &used);
	if (r < 0)
		return r;
	*ret_rgb = buf;
	*ret_width = pic.w;
	*ret_height = pic.h;
	return 0;
}
