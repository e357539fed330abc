/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The converter's JPEG in and out (convert-private.h): libjpeg-turbo through
 * the sources' libjpeg glue (jpeg.h).
 *
 * Decoding: the common 4:2:2 and 4:2:0 JPEGs of cameras decode as raw
 * data (jpeg_read_raw_data(): the DCT's planes, no upsampling or colour
 * conversion) when the target is Y'CbCr or grey; everything else, and
 * R'G'B' targets, through libjpeg's own upsampling and colour conversion
 * to ARGB. Encoding: raw data too, from the Y'CbCr intermediate taken to
 * JFIF's full-range BT.601 one MCU row at a time (convert-ycc.c) if it is
 * not that already.
 */

#include "config.h"

#include <errno.h>
#include <string.h>

#include <glib.h>

#include "util/macros.h"
#include "v4l2cuse/format.h"
#include "convert-private.h"

static struct jpeg_decompress_struct *
cv_dinfo(struct v4l2cuse_convert *cv)
{
	if (!cv->dinfo_init) {
		cv->dinfo.err = v4l2cuse_jpeg_err_init(&cv->derr);
		jpeg_create_decompress(&cv->dinfo);
		cv->dinfo_init = true;
	}
	return &cv->dinfo;
}

/* 3-component Y'CbCr with 2x1 or 2x2 luma per chroma sample; *ret_vs. */
static bool
cv_jpeg_is_42x(const struct jpeg_decompress_struct *d, unsigned int *ret_vs)
{
	const jpeg_component_info *c = d->comp_info;

	if (d->num_components != 3 || d->jpeg_color_space != JCS_YCbCr ||
	    c[0].h_samp_factor != 2 || (c[0].v_samp_factor != 1 && c[0].v_samp_factor != 2))
		return false;
	for (unsigned int i = 1; i < 3; i++) {
		if (c[i].h_samp_factor != 1 || c[i].v_samp_factor != 1)
			return false;
	}
	*ret_vs = (unsigned int)c[0].v_samp_factor - 1;
	return true;
}

/*
 * Raw data into CV_BUF_IN: planes as wide and high as the MCUs, cropped to
 * the picture (an even width; an even height for 4:2:0).
 */
static void
cv_jpeg_read_raw(struct v4l2cuse_convert *cv, struct jpeg_decompress_struct *d, unsigned int vs,
		 struct cv_pic *pic)
{
	unsigned int mcu = 8u << vs;
	size_t stride[3], lines[3], off[3], total = 0;
	JSAMPROW rows[3][16];
	JSAMPARRAY arrays[3] = { rows[0], rows[1], rows[2] };
	uint8_t *buf;

	for (unsigned int i = 0; i < 3; i++) {
		stride[i] = (size_t)d->comp_info[i].width_in_blocks * 8;
		lines[i] = (size_t)d->total_iMCU_rows * (i ? 8 : mcu);
		off[i] = total;
		total += stride[i] * lines[i];
	}
	buf = v4l2cuse_convert_buf(cv, CV_BUF_IN, total);
	while (d->output_scanline < d->output_height) {
		size_t row = d->output_scanline / mcu;

		for (unsigned int i = 0; i < 3; i++) {
			unsigned int n = i ? 8 : mcu;

			for (unsigned int l = 0; l < n; l++)
				rows[i][l] = buf + off[i] + stride[i] * (row * n + l);
		}
		jpeg_read_raw_data(d, arrays, mcu);
	}
	*pic = (struct cv_pic){
		.kind = CV_YUV, .w = d->output_width & ~1u,
		.h = vs ? d->output_height & ~1u : d->output_height, .vs = vs, .ycc = CV_YCC_JFIF,
		.p = { buf + off[0], buf + off[1], buf + off[2] },
		.stride = { stride[0], stride[1], stride[2] },
	};
}

int
v4l2cuse_convert_jpeg_decode(struct v4l2cuse_convert *cv, const uint8_t *data, size_t size,
			     const struct cv_want *want, unsigned int argb_buf, struct cv_pic *pic)
{
	struct jpeg_decompress_struct *d = cv_dinfo(cv);
	uint8_t *volatile out = NULL;
	unsigned int vs = 0;
	size_t stride;
	bool rgb;

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
	rgb = want->rgb && (want->w == 0 || (want->w == d->image_width && want->h == d->image_height));
	if (!rgb && cv_jpeg_is_42x(d, &vs) && d->image_width > 1 &&
	    (vs == 0 || d->image_height > 1)) {
		d->raw_data_out = TRUE;
		d->out_color_space = JCS_YCbCr;
		jpeg_start_decompress(d);
		cv_jpeg_read_raw(cv, d, vs, pic);
	} else {
		/* libyuv's ARGB is B, G, R, A in memory. */
		d->out_color_space = JCS_EXT_BGRA;
		jpeg_start_decompress(d);
		stride = (size_t)d->output_width * 4;
		out = v4l2cuse_convert_buf(cv, argb_buf, stride * d->output_height);
		while (d->output_scanline < d->output_height) {
			JSAMPROW row = out + stride * d->output_scanline;

			jpeg_read_scanlines(d, &row, 1);
		}
		*pic = (struct cv_pic){
			.kind = CV_ARGB, .w = d->output_width, .h = d->output_height,
			.p = { out }, .stride = { stride },
		};
	}
	jpeg_finish_decompress(d);
	if (cv->strict_jpeg && cv->derr.warnings)
		return -EBADMSG;
	return 0;
}

int
v4l2cuse_convert_jpeg_encode(struct v4l2cuse_convert *cv, const struct cv_pic *pic, uint8_t *dst,
			     size_t dst_len, uint32_t *ret_len)
{
	struct jpeg_compress_struct *c = &cv->cinfo;
	bool xform = !cv_ycc_equal(pic->ycc, CV_YCC_JFIF);
	unsigned int mcu = 8u << pic->vs;
	size_t cw = pic->w / 2;
	uint8_t *strip[3] = { NULL };
	const size_t strip_stride[3] = { pic->w, cw, cw };

	if (!cv->cinfo_init) {
		c->err = v4l2cuse_jpeg_err_init(&cv->cerr);
		jpeg_create_compress(c);
		v4l2cuse_jpeg_dest_attach(&cv->cdest, c);
		cv->cinfo_init = true;
	}
	if (!cv->craw.pad[0] || cv->craw.width != pic->w || cv->craw.vs != pic->vs)
		v4l2cuse_jpeg_raw_init(&cv->craw, pic->w, pic->vs);
	if (xform) {
		/* One MCU row in JFIF's colorimetry at a time, while it is in the cache. */
		strip[0] = v4l2cuse_convert_buf(cv, CV_BUF_XFORM, (size_t)pic->w * mcu + cw * 16);
		strip[1] = strip[0] + (size_t)pic->w * mcu;
		strip[2] = strip[1] + cw * 8;
	}
	for (int q = CV_JPEG_QUALITY; q; q = v4l2cuse_jpeg_lower_quality(q)) {
		if (setjmp(cv->cerr.jb)) {
			jpeg_abort_compress(c);
			return -EIO;
		}
		v4l2cuse_jpeg_dest_set(&cv->cdest, dst, dst_len, false);
		v4l2cuse_jpeg_raw_start(&cv->craw, c, pic->h, q, false);
		while (c->next_scanline < pic->h) {
			uint32_t y = c->next_scanline, lines = MIN(mcu, pic->h - y);
			const uint8_t *p[3];

			if (xform) {
				v4l2cuse_convert_ycc_lines(cv, pic, CV_YCC_JFIF, y, y + lines, false,
							   strip, strip_stride);
				v4l2cuse_jpeg_raw_write(&cv->craw, c,
							(const uint8_t *const *)strip,
							strip_stride, lines);
				continue;
			}
			for (unsigned int i = 0; i < 3; i++)
				p[i] = pic->p[i] + pic->stride[i] * (i ? y >> pic->vs : y);
			v4l2cuse_jpeg_raw_write(&cv->craw, c, p, pic->stride, lines);
		}
		jpeg_finish_compress(c);
		if (!cv->cdest.overflow) {
			*ret_len = (uint32_t)cv->cdest.len;
			return 0;
		}
	}
	return -ENOSPC;
}
