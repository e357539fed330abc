/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Frame conversion: input -> intermediate -> scale -> pack (convert.h).
 *
 * Buffers: every intermediate lives in one of a few scratch buffers owned
 * by struct cv and grown on demand (bounded by V4L2CUSE_MAX_* since every
 * size is checked first), so a steady stream allocates nothing per frame.
 */

#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>
#include <jpeglib.h>
#include <libv4l-plugin.h>
#include <libv4lconvert.h>

#include "util/macros.h"
#include "v4l2cuse/format.h"
#include "convert.h"
#include "jpeg.h"
#include "pack.h"

/* --- input formats ------------------------------------------------------ */

/*
 * Every format of format.c is an input. Y'CbCr goes through a 4:2:x
 * intermediate, so its widths must be even; the rest of the layout is
 * format.c's. 0 if bad.
 */
static size_t
cv_layout(const struct v4l2cuse_format_info *f, uint32_t w, uint32_t h, uint32_t bpl,
	  size_t off[3], size_t stride[3])
{
	if (!f || (f->yuv && (w & 1)))
		return 0;
	return v4l2cuse_format_frame_size(f, w, h, bpl, off, stride);
}

/* Chroma planes of @f have height >> cv_vs(f) lines. */
static unsigned int
cv_vs(const struct v4l2cuse_format_info *f)
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
static bool
cv_v4l_reads(uint32_t fourcc)
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
cv_input_supported(uint32_t fourcc)
{
	return v4l2cuse_format_lookup(fourcc) != NULL;
}

size_t
cv_input_size(uint32_t fourcc, uint32_t width, uint32_t height, uint32_t bytesperline)
{
	return cv_layout(v4l2cuse_format_lookup(fourcc), width, height, bytesperline, NULL, NULL);
}

/* --- state -------------------------------------------------------------- */

enum {
	CV_BUF_DEC,	/* decoded JPEG (RGB24), libv4lconvert RGB output */
	CV_BUF_CANON,	/* the intermediate */
	CV_BUF_TMP,	/* a repacked input for libv4lconvert */
	CV_BUF_SCALE,	/* the scaled intermediate */
	CV_BUF_XMAP,	/* scaler column tables */
	CV_BUF_LUMA,	/* Y'CbCr input with its luma expanded for libv4lconvert, GREY */
	CV_N_BUFS
};

struct cv {
	struct v4lconvert_data *v4l;
	struct {
		uint8_t *p;
		size_t size;
	} bufs[CV_N_BUFS];
	bool strict_jpeg;
	int quality;

	struct jpeg_decompress_struct dinfo;
	struct v4l2cuse_jpeg_err derr;
	bool dinfo_init;
	struct jpeg_compress_struct cinfo;
	struct v4l2cuse_jpeg_err cerr;
	struct v4l2cuse_jpeg_dest cdest;
	bool cinfo_init;
};

/* An intermediate picture; planes may point into the input. */
enum cv_kind {
	CV_YUV,		/* Y, Cb, Cr planes; chroma w/2 x h >> vs */
	CV_RGB,		/* one plane, 3 bytes per pixel */
	CV_GREY,	/* one plane, full-range luma */
};

struct cv_pic {
	enum cv_kind kind;
	uint32_t w, h;
	unsigned int vs;
	const uint8_t *p[3];
	size_t stride[3];
};

static uint8_t *
cv_buf(struct cv *cv, unsigned int i, size_t size)
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

struct cv *
cv_new(void)
{
	struct cv *cv = g_new0(struct cv, 1);

	cv->quality = 85;
	cv->v4l = v4lconvert_create_with_dev_ops(-1, NULL, &cv_fake_dev_ops);
	if (!cv->v4l)
		g_error("libv4lconvert: cannot create a converter");	/* OOM only */
	return cv;
}

void
cv_free(struct cv *cv)
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
cv_set_strict_jpeg(struct cv *cv, bool strict)
{
	cv->strict_jpeg = strict;
}

void
cv_set_jpeg_quality(struct cv *cv, int quality)
{
	cv->quality = CLAMP_VAL(quality, 1, 100);
}

/* --- libjpeg ------------------------------------------------------------ */

static struct jpeg_decompress_struct *
cv_dinfo(struct cv *cv)
{
	if (!cv->dinfo_init) {
		cv->dinfo.err = v4l2cuse_jpeg_err_init(&cv->derr);
		jpeg_create_decompress(&cv->dinfo);
		cv->dinfo_init = true;
	}
	return &cv->dinfo;
}

int
cv_jpeg_size(const uint8_t *data, size_t size, uint32_t *ret_width, uint32_t *ret_height)
{
	struct jpeg_decompress_struct d;
	struct v4l2cuse_jpeg_err e;
	uint32_t w, h;

	if (!data || size < 4 || data[0] != 0xff || data[1] != 0xd8)
		return -EBADMSG;
	d.err = v4l2cuse_jpeg_err_init(&e);
	jpeg_create_decompress(&d);
	if (setjmp(e.jb)) {
		jpeg_destroy_decompress(&d);
		return -EBADMSG;
	}
	jpeg_mem_src(&d, data, (unsigned long)size);
	jpeg_read_header(&d, TRUE);
	w = d.image_width;
	h = d.image_height;
	jpeg_destroy_decompress(&d);
	if (w == 0 || h == 0)
		return -EBADMSG;
	if (w > V4L2CUSE_MAX_WIDTH || h > V4L2CUSE_MAX_HEIGHT)
		return -EOVERFLOW;
	*ret_width = w;
	*ret_height = h;
	return 0;
}

/* Decode a JPEG to tight RGB24 in CV_BUF_DEC. */
static int
cv_jpeg_decode(struct cv *cv, const uint8_t *data, size_t size, struct cv_pic *pic)
{
	struct jpeg_decompress_struct *d = cv_dinfo(cv);
	uint8_t *volatile out = NULL;
	size_t stride;

	if (!data || size < 4 || data[0] != 0xff || data[1] != 0xd8)
		return -EBADMSG;
	cv->derr.warnings = 0;
	if (setjmp(cv->derr.jb)) {
		jpeg_abort_decompress(d);
		return -EBADMSG;
	}
	jpeg_mem_src(d, data, (unsigned long)size);
	jpeg_read_header(d, TRUE);
	if (d->image_width == 0 || d->image_height == 0 ||
	    d->image_width > V4L2CUSE_MAX_WIDTH || d->image_height > V4L2CUSE_MAX_HEIGHT) {
		jpeg_abort_decompress(d);
		return -EBADMSG;
	}
	d->out_color_space = JCS_RGB;
	jpeg_start_decompress(d);
	if (d->output_components != 3) {
		jpeg_abort_decompress(d);
		return -EBADMSG;
	}
	stride = (size_t)d->output_width * 3;
	out = cv_buf(cv, CV_BUF_DEC, stride * d->output_height);
	while (d->output_scanline < d->output_height) {
		JSAMPROW row = out + stride * d->output_scanline;

		jpeg_read_scanlines(d, &row, 1);
	}
	jpeg_finish_decompress(d);
	if (cv->strict_jpeg && cv->derr.warnings)
		return -EBADMSG;
	*pic = (struct cv_pic){
		.kind = CV_RGB, .w = d->output_width, .h = d->output_height,
		.p = { out }, .stride = { stride },
	};
	return 0;
}

/* Encode tight-or-strided RGB24 into @dst; lowers the quality until it fits. */
static int
cv_jpeg_encode(struct cv *cv, const struct cv_pic *pic, uint8_t *dst, size_t dst_len,
	       uint32_t *ret_len)
{
	struct jpeg_compress_struct *c = &cv->cinfo;

	if (!cv->cinfo_init) {
		c->err = v4l2cuse_jpeg_err_init(&cv->cerr);
		jpeg_create_compress(c);
		v4l2cuse_jpeg_dest_attach(&cv->cdest, c);
		cv->cinfo_init = true;
	}
	for (int q = cv->quality; q; q = v4l2cuse_jpeg_lower_quality(q)) {
		if (setjmp(cv->cerr.jb)) {
			jpeg_abort_compress(c);
			return -EIO;
		}
		v4l2cuse_jpeg_dest_set(&cv->cdest, dst, dst_len, false);
		c->image_width = pic->w;
		c->image_height = pic->h;
		c->input_components = 3;
		c->in_color_space = JCS_RGB;
		jpeg_set_defaults(c);
		jpeg_set_quality(c, q, TRUE);
		jpeg_start_compress(c, TRUE);
		while (c->next_scanline < c->image_height) {
			JSAMPROW row = (JSAMPROW)(pic->p[0] + pic->stride[0] * c->next_scanline);

			jpeg_write_scanlines(c, &row, 1);
		}
		jpeg_finish_compress(c);
		if (!cv->cdest.overflow) {
			*ret_len = (uint32_t)cv->cdest.len;
			return 0;
		}
	}
	return -ENOSPC;
}

/* --- libv4lconvert ------------------------------------------------------ */

static const uint8_t *cv_luma_lut(void);

/*
 * libv4lconvert's Y'CbCr -> RGB uses BT.601 limited-range chroma
 * coefficients but takes Y' as it is (16 stays 16), while its RGB -> Y'CbCr
 * produces limited range: frames would come out with grey blacks and dull
 * whites. A copy of the input with Y' mapped to full range first (the
 * GREY mapping) makes the pair consistent.
 */
static const uint8_t *
cv_expand_luma(struct cv *cv, const struct v4l2cuse_format_info *f, uint32_t w, uint32_t h, uint32_t bpl,
	       const uint8_t *data)
{
	const uint8_t *lut = cv_luma_lut();
	size_t off[3], stride[3], total = cv_layout(f, w, h, bpl, off, stride);
	uint8_t *t = cv_buf(cv, CV_BUF_LUMA, total);
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

/* @in (a raw format libv4lconvert takes) to RGB24/BGR24/YU12/YV12, same size. */
static int
cv_v4l(struct cv *cv, uint32_t fourcc, uint32_t w, uint32_t h, uint32_t bpl,
       const uint8_t *data, size_t size, uint32_t dst_fourcc, uint8_t *dst, size_t dst_len)
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

/* --- to the intermediate ------------------------------------------------- */

static void
cv_pic_yuv(struct cv_pic *pic, uint32_t w, uint32_t h, unsigned int vs, uint8_t *buf)
{
	size_t ysize = (size_t)w * h, csize = (size_t)(w / 2) * (h >> vs);

	*pic = (struct cv_pic){
		.kind = CV_YUV, .w = w, .h = h, .vs = vs,
		.p = { buf, buf + ysize, buf + ysize + csize },
		.stride = { w, w / 2, w / 2 },
	};
}

/* Y'CbCr with any vs from planar or semi-planar input (no libraries needed). */
static bool
cv_yuv_direct(struct cv *cv, const struct v4l2cuse_format_info *f, const struct cv_image *in,
	      const size_t off[3], const size_t stride[3], bool need420, struct cv_pic *pic)
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

		*pic = (struct cv_pic){
			.kind = CV_YUV, .w = w, .h = h, .vs = cv_vs(f),
			.p = { base + off[0], base + off[swap ? 2 : 1], base + off[swap ? 1 : 2] },
			.stride = { stride[0], stride[1], stride[2] },
		};
		if (cv_vs(f) == 1 || !need420)
			return true;
		/* 4:2:2 -> 4:2:0: average line pairs. */
		cb = cv_buf(cv, CV_BUF_CANON, (size_t)cw * (h / 2) * 2);
		cr = cb + (size_t)cw * (h / 2);
		for (unsigned int c = 0; c < 2; c++) {
			const uint8_t *src = pic->p[1 + c];
			uint8_t *dst = c ? cr : cb;

			for (uint32_t y = 0; y < h / 2; y++) {
				const uint8_t *a = src + pic->stride[1 + c] * 2 * y;
				const uint8_t *b = a + pic->stride[1 + c];

				for (uint32_t x = 0; x < cw; x++)
					dst[(size_t)y * cw + x] = (uint8_t)((a[x] + b[x] + 1) >> 1);
			}
		}
		pic->vs = 1;
		pic->p[1] = cb;
		pic->p[2] = cr;
		pic->stride[1] = pic->stride[2] = cw;
		return true;
	}
	case V4L2CUSE_PIX_FMT_YUV444P:
		vs = need420 ? 1 : 0;
		cb = cv_buf(cv, CV_BUF_CANON, (size_t)cw * (h >> vs) * 2);
		cr = cb + (size_t)cw * (h >> vs);
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
		*pic = (struct cv_pic){
			.kind = CV_YUV, .w = w, .h = h, .vs = vs,
			.p = { base + off[0], cb, cr }, .stride = { stride[0], cw, cw },
		};
		return true;
	case V4L2_PIX_FMT_NV12:
	case V4L2_PIX_FMT_NV21:
	case V4L2_PIX_FMT_NV16:
	case V4L2_PIX_FMT_NV61: {
		unsigned int step = cv_vs(f) == 0 && need420 ? 2 : 1;
		uint8_t *avg;

		vs = cv_vs(f) ? 1 : (need420 ? 1 : 0);
		cb = cv_buf(cv, CV_BUF_CANON, (size_t)cw * (h >> vs) * 2);
		cr = cb + (size_t)cw * (h >> vs);
		avg = step == 2 ? cv_buf(cv, CV_BUF_TMP, w) : NULL;
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
		*pic = (struct cv_pic){
			.kind = CV_YUV, .w = w, .h = h, .vs = vs,
			.p = { base + off[0], cb, cr }, .stride = { stride[0], cw, cw },
		};
		return true;
	}
	case V4L2_PIX_FMT_YUYV:
	case V4L2_PIX_FMT_UYVY:
	case V4L2_PIX_FMT_YVYU:
		if (need420)
			return false;	/* libv4lconvert does this one */
		cv_pic_yuv(pic, w, h, 0, cv_buf(cv, CV_BUF_CANON, (size_t)w * h * 2));
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

static int cv_to_rgb(struct cv *cv, const struct cv_image *in, struct cv_pic *pic);

/* Y'CbCr 4:2:0 (need420) or 4:2:x. */
static int
cv_to_yuv(struct cv *cv, const struct cv_image *in, bool need420, struct cv_pic *pic)
{
	const struct v4l2cuse_format_info *f = v4l2cuse_format_lookup(in->fourcc);
	size_t off[3], stride[3];
	struct cv_pic rgb;
	uint32_t w, h;
	uint8_t *buf;
	int r;

	if (f->compressed || (!f->yuv && !cv_v4l_reads(f->fourcc))) {
		/* JPEG, and RGB libv4lconvert does not read: through RGB24. */
		r = cv_to_rgb(cv, in, &rgb);
		if (r < 0)
			return r;
		/* Odd sizes lose their last column/row (4:2:0 needs even ones). */
		w = rgb.w & ~1u;
		h = rgb.h & ~1u;
		if (w == 0 || h == 0)
			return f->compressed ? -EBADMSG : -EINVAL;
		buf = cv_buf(cv, CV_BUF_CANON, (size_t)w * h * 3 / 2);
		r = cv_v4l(cv, V4L2_PIX_FMT_RGB24, w, h, (uint32_t)rgb.stride[0], rgb.p[0],
			   rgb.stride[0] * rgb.h, V4L2_PIX_FMT_YUV420, buf, (size_t)w * h * 3 / 2);
		if (r < 0)
			return r;
		cv_pic_yuv(pic, w, h, 1, buf);
		return 0;
	}
	cv_layout(f, in->width, in->height, in->bytesperline, off, stride);
	if (cv_yuv_direct(cv, f, in, off, stride, need420, pic))
		return 0;
	/* Single-plane RGB/grey of odd size: crop to even, like JPEGs. */
	w = in->width & ~1u;
	h = in->height & ~1u;
	if (w == 0 || h == 0)
		return -EINVAL;
	buf = cv_buf(cv, CV_BUF_CANON, (size_t)w * h * 3 / 2);
	r = cv_v4l(cv, in->fourcc, w, h, (uint32_t)stride[0], in->data, in->size,
		   V4L2_PIX_FMT_YUV420, buf, (size_t)w * h * 3 / 2);
	if (r < 0)
		return r;
	cv_pic_yuv(pic, w, h, 1, buf);
	return 0;
}

/* A Y'CbCr or grey picture in the tight layout of raw @fourcc. */
static void
cv_pack_yuv(const struct cv_pic *pic, uint32_t fourcc, uint8_t *dst);

/* A Y'CbCr picture to tight RGB24/BGR24 (libv4lconvert, via a tight YU12/YUYV). */
static int
cv_yuv_to_rgb(struct cv *cv, const struct cv_pic *yuv, uint32_t rgb_fourcc, uint8_t *out,
	      size_t out_len)
{
	uint32_t tmp_fourcc = yuv->vs ? V4L2_PIX_FMT_YUV420 : V4L2_PIX_FMT_YUYV;
	size_t tmp_size = yuv->vs ? (size_t)yuv->w * yuv->h * 3 / 2 : (size_t)yuv->w * yuv->h * 2;
	uint8_t *t = cv_buf(cv, CV_BUF_TMP, tmp_size);

	cv_pack_yuv(yuv, tmp_fourcc, t);
	return cv_v4l(cv, tmp_fourcc, yuv->w, yuv->h, 0, t, tmp_size, rgb_fourcc, out, out_len);
}

static int
cv_to_rgb(struct cv *cv, const struct cv_image *in, struct cv_pic *pic)
{
	const struct v4l2cuse_format_info *f = v4l2cuse_format_lookup(in->fourcc);
	size_t off[3], stride[3];
	size_t rgb_size = (size_t)in->width * in->height * 3;
	uint8_t *out;
	int r;

	if (f->compressed)
		return cv_jpeg_decode(cv, in->data, in->size, pic);
	cv_layout(f, in->width, in->height, in->bytesperline, off, stride);
	if (in->fourcc == V4L2_PIX_FMT_RGB24) {
		*pic = (struct cv_pic){
			.kind = CV_RGB, .w = in->width, .h = in->height,
			.p = { in->data }, .stride = { stride[0] },
		};
		return 0;
	}
	out = cv_buf(cv, CV_BUF_DEC, rgb_size);
	if (!f->yuv && !cv_v4l_reads(f->fourcc)) {
		for (uint32_t y = 0; y < in->height; y++)
			v4l2cuse_unpack_rgb_line(f->fourcc, in->data + stride[0] * y, in->width,
						 out + (size_t)in->width * 3 * y);
		r = 0;
	} else if (cv_v4l_reads(f->fourcc)) {
		r = cv_v4l(cv, in->fourcc, in->width, in->height, in->bytesperline, in->data,
			   in->size, V4L2_PIX_FMT_RGB24, out, rgb_size);
	} else {
		/* NV12/21, NV16/61, 422P, 4:4:4: repack for libv4lconvert. */
		struct cv_pic yuv;

		r = cv_to_yuv(cv, in, false, &yuv);
		if (r < 0)
			return r;
		r = cv_yuv_to_rgb(cv, &yuv, V4L2_PIX_FMT_RGB24, out, rgb_size);
	}
	if (r < 0)
		return r;
	*pic = (struct cv_pic){
		.kind = CV_RGB, .w = in->width, .h = in->height,
		.p = { out }, .stride = { (size_t)in->width * 3 },
	};
	return 0;
}

/* --- scaling ------------------------------------------------------------ */

/*
 * Bilinear, sample centres aligned ((x + 0.5) * sw / dw - 0.5), 8-bit
 * weights, separable: each output line first blends its two source lines
 * into a 16-bit line (vectorised by the compiler), then interpolates along
 * it. That line has one extra pixel (a copy of the last), so the right
 * neighbour can always be read.
 */
static void
cv_scale_plane(struct cv *cv, const uint8_t *src, uint32_t sw, uint32_t sh, size_t sstride,
	       uint8_t *dst, uint32_t dw, uint32_t dh, size_t dstride, unsigned int ch)
{
	size_t srow = (size_t)sw * ch;
	uint32_t *xoff = (uint32_t *)cv_buf(cv, CV_BUF_XMAP,
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

static void
cv_scale(struct cv *cv, const struct cv_pic *in, uint32_t w, uint32_t h, bool luma_only,
	 struct cv_pic *out)
{
	uint8_t *buf;

	switch (in->kind) {
	case CV_RGB:
		buf = cv_buf(cv, CV_BUF_SCALE, (size_t)w * h * 3);
		cv_scale_plane(cv, in->p[0], in->w, in->h, in->stride[0], buf, w, h,
			       (size_t)w * 3, 3);
		*out = (struct cv_pic){
			.kind = CV_RGB, .w = w, .h = h, .p = { buf }, .stride = { (size_t)w * 3 },
		};
		break;
	case CV_GREY:
		buf = cv_buf(cv, CV_BUF_SCALE, (size_t)w * h);
		cv_scale_plane(cv, in->p[0], in->w, in->h, in->stride[0], buf, w, h, w, 1);
		*out = (struct cv_pic){
			.kind = CV_GREY, .w = w, .h = h, .p = { buf }, .stride = { w },
		};
		break;
	case CV_YUV:
		buf = cv_buf(cv, CV_BUF_SCALE, (size_t)w * h + (size_t)(w / 2) * (h >> in->vs) * 2);
		cv_pic_yuv(out, w, h, in->vs, buf);
		cv_scale_plane(cv, in->p[0], in->w, in->h, in->stride[0], buf, w, h, w, 1);
		if (luma_only || w < 2 || (h >> in->vs) == 0)
			break;
		for (unsigned int i = 1; i < 3; i++)
			cv_scale_plane(cv, in->p[i], in->w / 2, in->h >> in->vs, in->stride[i],
				       (uint8_t *)out->p[i], w / 2, h >> in->vs, w / 2, 1);
		break;
	}
}

/* --- packing ------------------------------------------------------------ */

static void
cv_copy_plane(uint8_t *dst, size_t dstride, const uint8_t *src, size_t sstride,
	      size_t row_bytes, uint32_t rows)
{
	if (dstride == sstride && dstride == row_bytes) {
		memcpy(dst, src, row_bytes * rows);
		return;
	}
	for (uint32_t y = 0; y < rows; y++)
		memcpy(dst + dstride * y, src + sstride * y, row_bytes);
}

static void
cv_pack_yuv(const struct cv_pic *pic, uint32_t fourcc, uint8_t *dst)
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

static const uint8_t *
cv_luma_lut(void)
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
cv_grey(struct cv *cv, const struct cv_pic *yuv, struct cv_pic *grey)
{
	const uint8_t *lut = cv_luma_lut();
	uint8_t *buf = cv_buf(cv, CV_BUF_LUMA, (size_t)yuv->w * yuv->h);

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

/* Targets made from the RGB24 intermediate: the RGB formats and MJPEG (convert.h). */
static bool
cv_is_rgb_target(const struct v4l2cuse_format_info *oi)
{
	return !oi->yuv && oi->fourcc != V4L2_PIX_FMT_GREY;
}

static int
cv_pack(struct cv *cv, const struct cv_pic *pic, const struct v4l2_pix_format *out,
	uint8_t *dst, size_t dst_len, uint32_t *ret_bytesused)
{
	const struct v4l2cuse_format_info *oi = v4l2cuse_format_info(out->pixelformat);
	struct cv_pic grey;

	*ret_bytesused = out->sizeimage;
	if (oi->compressed)
		return cv_jpeg_encode(cv, pic, dst, MIN(dst_len, (size_t)out->sizeimage),
				      ret_bytesused);
	if (cv_is_rgb_target(oi)) {
		cv_pack_rgb(pic, oi->fourcc, dst);
	} else if (oi->fourcc == V4L2_PIX_FMT_GREY && pic->kind == CV_YUV) {
		cv_grey(cv, pic, &grey);
		cv_pack_yuv(&grey, oi->fourcc, dst);
	} else {
		cv_pack_yuv(pic, oi->fourcc, dst);
	}
	return 0;
}

/* --- entry points ------------------------------------------------------- */

/* Same format and size: copy the planes to the unpadded target layout. */
static int
cv_copy(const struct v4l2cuse_format_info *f, const struct cv_image *in,
	const struct v4l2_pix_format *out, uint8_t *dst, uint32_t *ret_bytesused)
{
	size_t off[3], stride[3], doff[3], dstride[3];

	cv_layout(f, in->width, in->height, in->bytesperline, off, stride);
	if (cv_layout(f, out->width, out->height, 0, doff, dstride) > out->sizeimage)
		return -EINVAL;
	for (unsigned int i = 0; i < f->n_planes; i++)
		cv_copy_plane(dst + doff[i], dstride[i], in->data + off[i], stride[i], dstride[i],
			      i ? out->height >> cv_vs(f) : out->height);
	*ret_bytesused = out->sizeimage;
	return 0;
}

static int
cv_validate(const struct cv_image *in, const struct v4l2cuse_format_info **ret_f)
{
	const struct v4l2cuse_format_info *f = in ? v4l2cuse_format_lookup(in->fourcc) : NULL;

	size_t need;

	if (!f || !in->data)
		return -EINVAL;
	/* Raw frames must hold their layout; a JPEG's own header tells (decoding). */
	need = f->compressed ? 0 : cv_layout(f, in->width, in->height, in->bytesperline, NULL,
					      NULL);
	if ((!f->compressed && need == 0) || in->size < need)
		return -EINVAL;
	*ret_f = f;
	return 0;
}

int
cv_convert(struct cv *cv, const struct cv_image *in, const struct v4l2_pix_format *out,
	   void *dst, size_t dst_len, uint32_t *ret_bytesused)
{
	const struct v4l2cuse_format_info *oi = v4l2cuse_format_info(out->pixelformat);
	uint32_t f_out = out->pixelformat, w = out->width, h = out->height;
	const struct v4l2cuse_format_info *f;
	struct cv_pic pic, scaled;
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

		if (cv_jpeg_size(in->data, in->size, &jw, &jh) == 0 && jw == w && jh == h) {
			memcpy(dst, in->data, in->size);
			*ret_bytesused = (uint32_t)in->size;
			return 0;
		}
	}
	/* libv4lconvert straight into the target. */
	if (cv_v4l_reads(f->fourcc) && in->width == w && in->height == h &&
	    (f_out == V4L2_PIX_FMT_RGB24 || f_out == V4L2_PIX_FMT_BGR24 ||
	     f_out == V4L2_PIX_FMT_YUV420 || f_out == V4L2_PIX_FMT_YVU420)) {
		r = cv_v4l(cv, in->fourcc, w, h, in->bytesperline, in->data, in->size, f_out,
			   dst, out->sizeimage);
		if (r == 0)
			*ret_bytesused = out->sizeimage;
		return r;
	}

	if (cv_is_rgb_target(oi) && f->yuv &&
	    (in->width != w || in->height != h) && !(w & 1) && !(h & 1)) {
		/*
		 * Y'CbCr to RGB at another size: scale first (half the samples
		 * of RGB), then convert at the output size.
		 */
		r = cv_to_yuv(cv, in, false, &pic);
		if (r < 0)
			return r;
		cv_scale(cv, &pic, w, h, false, &scaled);
		if (f_out == V4L2_PIX_FMT_RGB24 || f_out == V4L2_PIX_FMT_BGR24) {
			r = cv_yuv_to_rgb(cv, &scaled, f_out, dst, out->sizeimage);
			if (r == 0)
				*ret_bytesused = out->sizeimage;
			return r;
		}
		r = cv_yuv_to_rgb(cv, &scaled, V4L2_PIX_FMT_RGB24,
				  cv_buf(cv, CV_BUF_DEC, (size_t)w * h * 3), (size_t)w * h * 3);
		if (r < 0)
			return r;
		pic = (struct cv_pic){
			.kind = CV_RGB, .w = w, .h = h,
			.p = { cv->bufs[CV_BUF_DEC].p }, .stride = { (size_t)w * 3 },
		};
		return cv_pack(cv, &pic, out, dst, dst_len, ret_bytesused);
	}
	if (cv_is_rgb_target(oi))
		r = cv_to_rgb(cv, in, &pic);
	else if (f_out == V4L2_PIX_FMT_GREY && in->fourcc == V4L2_PIX_FMT_GREY)
		r = 0, pic = (struct cv_pic){
			.kind = CV_GREY, .w = in->width, .h = in->height,
			.p = { in->data }, .stride = { in->bytesperline ? in->bytesperline : in->width },
		};
	else
		r = cv_to_yuv(cv, in, f_out == V4L2_PIX_FMT_YUV420 || f_out == V4L2_PIX_FMT_YVU420 ||
				  f_out == V4L2_PIX_FMT_NV12 || f_out == V4L2_PIX_FMT_NV21, &pic);
	if (r < 0)
		return r;
	if (pic.w != w || pic.h != h) {
		cv_scale(cv, &pic, w, h, f_out == V4L2_PIX_FMT_GREY, &scaled);
		pic = scaled;
	}
	return cv_pack(cv, &pic, out, dst, dst_len, ret_bytesused);
}

int
cv_to_rgb24(struct cv *cv, const struct cv_image *in, const uint8_t **ret_rgb,
	    uint32_t *ret_width, uint32_t *ret_height)
{
	const struct v4l2cuse_format_info *f;
	struct cv_pic pic;
	uint8_t *buf;
	int r;

	r = cv_validate(in, &f);
	if (r < 0)
		return r;
	r = cv_to_rgb(cv, in, &pic);
	if (r < 0)
		return r;
	if (pic.stride[0] != (size_t)pic.w * 3) {
		buf = cv_buf(cv, CV_BUF_SCALE, (size_t)pic.w * pic.h * 3);
		cv_copy_plane(buf, (size_t)pic.w * 3, pic.p[0], pic.stride[0], (size_t)pic.w * 3,
			      pic.h);
		pic.p[0] = buf;
	}
	*ret_rgb = pic.p[0];
	*ret_width = pic.w;
	*ret_height = pic.h;
	return 0;
}
