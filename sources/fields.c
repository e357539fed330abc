/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Interlaced frames made progressive (fields.h): plane by plane, line by
 * line, in the single-buffer layout of format.c.
 */

#include "config.h"

#include <errno.h>
#include <string.h>

#include <glib.h>
#include <linux/videodev2.h>

#include "util/macros.h"
#include "v4l2cuse/format.h"
#include "fields.h"

struct v4l2cuse_weave {
	uint8_t *buf;			/* the woven frame */
	size_t len;
	/* ALTERNATE: the fields of the frame being woven */
	unsigned int have;		/* bit 0: top, bit 1: bottom */
	uint32_t fourcc, width, height, bytesperline;
};

struct v4l2cuse_weave *
v4l2cuse_weave_new(void)
{
	return g_new0(struct v4l2cuse_weave, 1);
}

void
v4l2cuse_weave_free(struct v4l2cuse_weave *w)
{
	if (!w)
		return;
	g_free(w->buf);
	g_free(w);
}

void
v4l2cuse_weave_reset(struct v4l2cuse_weave *w)
{
	w->have = 0;
}

uint32_t
v4l2cuse_field_frame_height(uint32_t field, uint32_t height)
{
	return V4L2_FIELD_HAS_T_OR_B(field) ? height * 2 : height;
}

static uint8_t *
weave_buffer(struct v4l2cuse_weave *w, size_t size)
{
	if (w->len < size) {
		g_free(w->buf);
		w->buf = g_malloc(size);
		w->len = size;
	}
	return w->buf;
}

/*
 * The layout of a frame of @f at @width x @height with @bpl: plane offsets,
 * strides and line counts; 0 when a plane cannot be split into two fields.
 */
static size_t
weave_layout(const struct v4l2cuse_format_info *f, uint32_t width, uint32_t height, uint32_t bpl,
	     size_t off[3], size_t stride[3], uint32_t lines[3])
{
	size_t size = v4l2cuse_format_frame_size(f, width, height, bpl, off, stride);

	for (unsigned int p = 0; size && p < f->n_planes; p++) {
		lines[p] = p ? height / f->vdiv : height;
		if (lines[p] & 1)
			return 0;
	}
	return size;
}

/* SEQ_TB / SEQ_BT: each plane holds its first field's lines, then the other's. */
static int
weave_seq(struct v4l2cuse_weave *w, const struct v4l2cuse_format_info *f,
	  const struct v4l2cuse_image *in, bool top_first, struct v4l2cuse_image *ret)
{
	size_t off[3], stride[3];
	uint32_t lines[3];
	size_t size = weave_layout(f, in->width, in->height, in->bytesperline, off, stride, lines);
	uint8_t *out;

	if (!size || in->size < size)
		return -EINVAL;
	out = weave_buffer(w, size);
	for (unsigned int p = 0; p < f->n_planes; p++) {
		const uint8_t *first = in->data + off[p];
		const uint8_t *second = first + stride[p] * (lines[p] / 2);
		const uint8_t *top = top_first ? first : second;
		const uint8_t *bottom = top_first ? second : first;

		for (uint32_t y = 0; y < lines[p]; y++)
			memcpy(out + off[p] + stride[p] * y,
			       (y & 1 ? bottom : top) + stride[p] * (y / 2), stride[p]);
	}
	*ret = *in;
	ret->data = out;
	ret->size = size;
	return 0;
}

/* ALTERNATE: this field into its lines of the frame; whole once both are in. */
static int
weave_alternate(struct v4l2cuse_weave *w, const struct v4l2cuse_format_info *f,
		const struct v4l2cuse_image *in, uint32_t buf_field, struct v4l2cuse_image *ret)
{
	size_t foff[3], fstride[3], off[3], stride[3];
	uint32_t flines[3], lines[3];
	size_t fsize = v4l2cuse_format_frame_size(f, in->width, in->height, in->bytesperline,
						  foff, fstride);
	size_t size = in->height <= V4L2CUSE_MAX_HEIGHT / 2
			      ? weave_layout(f, in->width, in->height * 2, in->bytesperline, off,
					     stride, lines)
			      : 0;
	unsigned int bit = buf_field == V4L2_FIELD_BOTTOM ? 2 : 1;
	uint8_t *out;

	if (buf_field != V4L2_FIELD_TOP && buf_field != V4L2_FIELD_BOTTOM)
		return -EINVAL;
	if (!fsize || !size || in->size < fsize)
		return -EINVAL;
	for (unsigned int p = 0; p < f->n_planes; p++)
		flines[p] = p ? in->height / f->vdiv : in->height;
	if (w->fourcc != in->fourcc || w->width != in->width || w->height != in->height ||
	    w->bytesperline != in->bytesperline)
		w->have = 0;	/* the format changed: start a new frame */
	w->fourcc = in->fourcc;
	w->width = in->width;
	w->height = in->height;
	w->bytesperline = in->bytesperline;
	/* The same field again: the other one of the frame was lost. */
	if (w->have & bit)
		w->have = 0;
	out = weave_buffer(w, size);
	for (unsigned int p = 0; p < f->n_planes; p++) {
		for (uint32_t y = 0; y < flines[p]; y++)
			memcpy(out + off[p] + stride[p] * (2 * y + (bit == 2)),
			       in->data + foff[p] + fstride[p] * y, MIN(stride[p], fstride[p]));
	}
	w->have |= bit;
	if (w->have != 3)
		return -EAGAIN;
	w->have = 0;
	*ret = *in;
	ret->height = in->height * 2;
	ret->data = out;
	ret->size = size;
	return 0;
}

int
v4l2cuse_weave(struct v4l2cuse_weave *w, const struct v4l2cuse_image *in, uint32_t field,
	       uint32_t buf_field, struct v4l2cuse_image *ret)
{
	const struct v4l2cuse_format_info *f = v4l2cuse_format_lookup(in->fourcc);

	switch (field) {
	case V4L2_FIELD_ANY:
	case V4L2_FIELD_NONE:
	case V4L2_FIELD_INTERLACED:
	case V4L2_FIELD_INTERLACED_TB:
	case V4L2_FIELD_INTERLACED_BT:
		*ret = *in;
		return 0;
	default:
		break;
	}
	if (!f || f->compressed)
		return -EINVAL;
	switch (field) {
	case V4L2_FIELD_TOP:
	case V4L2_FIELD_BOTTOM:
		*ret = *in;
		return 0;
	case V4L2_FIELD_SEQ_TB:
	case V4L2_FIELD_SEQ_BT:
		return weave_seq(w, f, in, field == V4L2_FIELD_SEQ_TB, ret);
	case V4L2_FIELD_ALTERNATE:
		return weave_alternate(w, f, in, buf_field, ret);
	default:
		return -EINVAL;
	}
}
