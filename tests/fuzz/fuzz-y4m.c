/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer harness for the Y4M reader (sources/y4m.c): the whole reader
 * over an in-memory file (fmemopen): header, FRAME lines, resync, rewind,
 * and the conversion of what it delivers. Run: tests/fuzz/run-fuzz.sh.
 */

#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "v4l2cuse/format.h"
#include "convert.h"
#include "file-reader.h"
#include "fuzz-reader.h"

/* Sizes above this are valid but only make the run slow. */
#define FUZZ_MAX_PIXELS	(256u * 256u)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool
fuzz_too_big(const uint8_t *data, size_t size)
{
	const uint8_t *nl = memchr(data, '\n', MIN(size, (size_t)V4L2CUSE_FILE_READER_MAX_LINE));
	g_autofree char *line = g_strndup((const char *)data, nl ? (gsize)(nl - data) : MIN(size, 4096));
	unsigned long w = 1, h = 1;
	const char *p;

	if ((p = strstr(line, " W")))
		w = strtoul(p + 2, NULL, 10);
	if ((p = strstr(line, " H")))
		h = strtoul(p + 2, NULL, 10);
	return w * h > FUZZ_MAX_PIXELS;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct v4l2cuse_convert *cv;
	struct v4l2_pix_format out = { .pixelformat = V4L2_PIX_FMT_YUYV, .width = 32, .height = 16 };
	struct v4l2cuse_file_reader *r;
	uint8_t *dst;

	if (size == 0 || fuzz_too_big(data, size))
		return 0;
	if (!cv)
		cv = v4l2cuse_convert_new();
	r = fuzz_reader_open(data, size, v4l2cuse_y4m_reader_open);
	if (!r)
		return 0;
	v4l2cuse_format_fill(&out);
	dst = g_malloc(out.sizeimage);
	for (unsigned int pass = 0; pass < 2; pass++) {
		for (unsigned int i = 0; i < 16; i++) {
			struct v4l2cuse_image img;
			uint32_t used;
			int rr = fuzz_reader_next(r, &img);

			if (rr == 0)
				break;
			if (rr < 0)
				continue;
			/* What a reader hands out is whole: its size matches its format. */
			if (img.size < v4l2cuse_convert_input_size(img.fourcc, img.width,
								   img.height, 0) ||
			    img.width != r->info.width || img.height != r->info.height)
				abort();
			if (v4l2cuse_convert_frame(cv, &img, &out, dst, out.sizeimage, &used) < 0)
				abort();
		}
		if (r->ops->rewind(r) < 0)
			break;
	}
	g_free(dst);
	v4l2cuse_file_reader_free(r);
	return 0;
}
