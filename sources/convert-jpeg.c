/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The converter's JPEG in and out (convert-private.h): libjpeg-turbo through
 * the sources' libjpeg glue (jpeg.h). Decoding gives RGB24, encoding takes
 * it.
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

int
v4l2cuse_convert_jpeg_decode(struct v4l2cuse_convert *cv, const uint8_t *data, size_t size,
			     struct cv_pic *pic)
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
	out = v4l2cuse_convert_buf(cv, CV_BUF_DEC, stride * d->output_height);
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

int
v4l2cuse_convert_jpeg_encode(struct v4l2cuse_convert *cv, const struct cv_pic *pic, uint8_t *dst,
			     size_t dst_len, uint32_t *ret_len)
{
	struct jpeg_compress_struct *c = &cv->cinfo;

	if (!cv->cinfo_init) {
		c->err = v4l2cuse_jpeg_err_init(&cv->cerr);
		jpeg_create_compress(c);
		v4l2cuse_jpeg_dest_attach(&cv->cdest, c);
		cv->cinfo_init = true;
	}
	for (int q = CV_JPEG_QUALITY; q; q = v4l2cuse_jpeg_lower_quality(q)) {
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
