/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Raw frames reader (file-reader.h): a file of frames of one format and
 * size (the file source's format= and size=), laid out as V4L2 would
 * (format.c), one after the other; a partial last frame ends the file.
 */

#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>

#include <glib.h>

#include "convert.h"
#include "file-reader.h"

struct raw_reader {
	struct v4l2cuse_file_reader base;
	uint8_t *buf;
	size_t frame_size;
};

static int
raw_next(struct v4l2cuse_file_reader *r, struct v4l2cuse_image *ret)
{
	struct raw_reader *rr = (struct raw_reader *)r;
	size_t n = fread(rr->buf, 1, rr->frame_size, rr->base.f);

	if (n < rr->frame_size)
		return ferror(rr->base.f) ? -EIO : -ENODATA;	/* a partial last frame ends it */
	*ret = (struct v4l2cuse_image){
		.fourcc = r->info.fourcc, .width = r->info.width, .height = r->info.height,
		.data = rr->buf, .size = rr->frame_size,
	};
	return 0;
}

static int
raw_rewind(struct v4l2cuse_file_reader *r)
{
	return v4l2cuse_file_reader_seek(r, 0);
}

static void
raw_destroy(struct v4l2cuse_file_reader *r)
{
	struct raw_reader *rr = (struct raw_reader *)r;

	g_free(rr->buf);
	g_free(rr);
}

static const struct v4l2cuse_file_reader_ops raw_ops = {
	.name = "raw",
	.next = raw_next,
	.rewind = raw_rewind,
	.destroy = raw_destroy,
};

int
v4l2cuse_raw_reader_open(FILE *f, uint32_t fourcc, uint32_t width, uint32_t height,
			 const struct v4l2_fract *fps_iv, struct v4l2cuse_file_reader **ret,
			 char **ret_error)
{
	struct raw_reader *rr = g_new0(struct raw_reader, 1);
	struct stat st;
	bool too_short;

	rr->base.ops = &raw_ops;
	rr->base.f = f;
	rr->frame_size = v4l2cuse_convert_input_size(fourcc, width, height, 0);
	if (!rr->frame_size) {
		*ret_error = g_strdup_printf("raw %.4s frames cannot be %ux%u",
					     (const char *)&fourcc, width, height);
		v4l2cuse_file_reader_free(&rr->base);
		return -EINVAL;
	}
	/* A file shorter than one frame must not cost a frame-sized buffer first. */
	too_short = fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) &&
		    (uint64_t)st.st_size < rr->frame_size;
	rr->buf = too_short ? NULL : g_malloc(rr->frame_size);
	rr->base.info = (struct v4l2cuse_file_reader_info){
		.width = width, .height = height,
		.interval = fps_iv && fps_iv->denominator ? *fps_iv : (struct v4l2_fract){ 1, 30 },
		.fourcc = fourcc,
		.can_reopen = true,
	};
	g_snprintf(rr->base.info.kind, sizeof(rr->base.info.kind), "raw %.4s",
		   (const char *)&fourcc);
	if (too_short || raw_next(&rr->base, &(struct v4l2cuse_image){ 0 }) < 0 ||
	    raw_rewind(&rr->base) < 0) {
		*ret_error = g_strdup_printf("shorter than one %ux%u %.4s frame (%zu bytes)",
					     width, height, (const char *)&fourcc, rr->frame_size);
		v4l2cuse_file_reader_free(&rr->base);
		return -EINVAL;
	}
	*ret = &rr->base;
	return 0;
}
