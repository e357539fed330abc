/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libjpeg glue (jpeg.h).
 */

#include "config.h"

#include <errno.h>

#include <glib.h>

#include "util/macros.h"
#include "v4l2cuse/format.h"
#include "jpeg.h"

static void
jpeg_glue_error_exit(j_common_ptr c)
{
	struct v4l2cuse_jpeg_err *e = (struct v4l2cuse_jpeg_err *)c->err;

	longjmp(e->jb, 1);
}

static void
jpeg_glue_emit_message(j_common_ptr c, int level)
{
	struct v4l2cuse_jpeg_err *e = (struct v4l2cuse_jpeg_err *)c->err;

	if (level < 0)
		e->warnings++;
}

static void
jpeg_glue_output_message(j_common_ptr c)
{
}

struct jpeg_error_mgr *
v4l2cuse_jpeg_err_init(struct v4l2cuse_jpeg_err *e)
{
	jpeg_std_error(&e->pub);
	e->pub.error_exit = jpeg_glue_error_exit;
	e->pub.emit_message = jpeg_glue_emit_message;
	e->pub.output_message = jpeg_glue_output_message;
	e->warnings = 0;
	return &e->pub;
}

static void
jpeg_glue_init_destination(j_compress_ptr c)
{
	struct v4l2cuse_jpeg_dest *d = (struct v4l2cuse_jpeg_dest *)c->dest;

	d->pub.next_output_byte = d->buf;
	d->pub.free_in_buffer = d->size;
	d->overflow = false;
	d->len = 0;
}

static boolean
jpeg_glue_empty_output_buffer(j_compress_ptr c)
{
	struct v4l2cuse_jpeg_dest *d = (struct v4l2cuse_jpeg_dest *)c->dest;
	size_t old = d->size;

	if (!d->grow) {
		/* Out of room: note it and let the encoder finish into the spill area. */
		d->overflow = true;
		d->pub.next_output_byte = d->spill;
		d->pub.free_in_buffer = sizeof(d->spill);
		return TRUE;
	}
	d->size = MAX(2 * old, (size_t)4096);
	d->buf = g_realloc(d->buf, d->size);
	d->pub.next_output_byte = d->buf + old;
	d->pub.free_in_buffer = d->size - old;
	return TRUE;
}

static void
jpeg_glue_term_destination(j_compress_ptr c)
{
	struct v4l2cuse_jpeg_dest *d = (struct v4l2cuse_jpeg_dest *)c->dest;

	if (!d->overflow)
		d->len = d->size - d->pub.free_in_buffer;
}

void
v4l2cuse_jpeg_dest_attach(struct v4l2cuse_jpeg_dest *d, j_compress_ptr c)
{
	d->pub.init_destination = jpeg_glue_init_destination;
	d->pub.empty_output_buffer = jpeg_glue_empty_output_buffer;
	d->pub.term_destination = jpeg_glue_term_destination;
	c->dest = &d->pub;
}

void
v4l2cuse_jpeg_dest_set(struct v4l2cuse_jpeg_dest *d, uint8_t *buf, size_t size, bool grow)
{
	d->buf = buf;
	d->size = size;
	d->grow = grow;
	d->overflow = false;
	d->len = 0;
}

int
v4l2cuse_jpeg_lower_quality(int quality)
{
	if (quality <= V4L2CUSE_JPEG_MIN_QUALITY)
		return 0;
	return MAX(quality - 20, V4L2CUSE_JPEG_MIN_QUALITY);
}

int
v4l2cuse_jpeg_size(const uint8_t *data, size_t size, uint32_t *ret_width, uint32_t *ret_height)
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
