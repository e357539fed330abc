/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libjpeg glue (jpeg.h).
 */

#include "config.h"

#include <errno.h>
#include <string.h>

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

void
v4l2cuse_jpeg_raw_init(struct v4l2cuse_jpeg_raw *r, uint32_t width, unsigned int vs)
{
	v4l2cuse_jpeg_raw_clear(r);
	r->width = width;
	r->vs = vs;
	r->pad_w[0] = (width + 15) / 16 * 16;
	r->pad_w[1] = r->pad_w[2] = r->pad_w[0] / 2;
	for (unsigned int p = 0; p < 3; p++)
		r->pad[p] = g_malloc0((size_t)r->pad_w[p] * (p ? 8 : 8u << vs));
}

void
v4l2cuse_jpeg_raw_clear(struct v4l2cuse_jpeg_raw *r)
{
	for (unsigned int p = 0; p < 3; p++)
		g_clear_pointer(&r->pad[p], g_free);
}

void
v4l2cuse_jpeg_raw_start(const struct v4l2cuse_jpeg_raw *r, j_compress_ptr c, uint32_t height,
			int quality, bool restart_rows)
{
	c->image_width = r->width;
	c->image_height = height;
	c->input_components = 3;
	c->in_color_space = JCS_YCbCr;
	jpeg_set_defaults(c);
	jpeg_set_colorspace(c, JCS_YCbCr);
	jpeg_set_quality(c, quality, TRUE);
	c->raw_data_in = TRUE;
	c->comp_info[0].h_samp_factor = 2;
	c->comp_info[0].v_samp_factor = 1 + (int)r->vs;
	for (unsigned int i = 1; i < 3; i++) {
		c->comp_info[i].h_samp_factor = 1;
		c->comp_info[i].v_samp_factor = 1;
	}
	c->restart_in_rows = restart_rows ? 1 : 0;
	c->dct_method = JDCT_ISLOW;
	c->optimize_coding = FALSE;
	jpeg_start_compress(c, TRUE);
}

void
v4l2cuse_jpeg_raw_write(struct v4l2cuse_jpeg_raw *r, j_compress_ptr c, const uint8_t *const p[3],
			const size_t stride[3], uint32_t lines)
{
	JSAMPROW rows[3][16];
	JSAMPARRAY arrays[3] = { rows[0], rows[1], rows[2] };

	for (unsigned int i = 0; i < 3; i++) {
		unsigned int vs = i ? r->vs : 0;
		uint32_t w = i ? r->width / 2 : r->width;
		uint32_t valid = (lines + (1u << vs) - 1) >> vs;

		for (unsigned int l = 0; l < 8u << (r->vs - vs); l++) {
			const uint8_t *src = p[i] + stride[i] * MIN(l, valid - 1);
			uint8_t *d;

			if (w == r->pad_w[i]) {
				rows[i][l] = (JSAMPROW)src;
				continue;
			}
			d = r->pad[i] + (size_t)l * r->pad_w[i];
			memcpy(d, src, w);
			memset(d + w, src[w - 1], r->pad_w[i] - w);
			rows[i][l] = d;
		}
	}
	jpeg_write_raw_data(c, arrays, 8u << r->vs);
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
