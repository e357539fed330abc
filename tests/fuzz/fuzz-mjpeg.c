/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer harness for the MJPEG stream splitter (sources/mjpeg-stream.c):
 * v4l2cuse_mjpeg_stream_scan() on the raw input (its invariants), then the reader over an
 * in-memory file, decoding what it finds (libjpeg-turbo through
 * convert.c, our error handling around it). Run: tests/fuzz/run-fuzz.sh.
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
#include "mjpeg-stream.h"

#define FUZZ_MAX_PIXELS	(512u * 512u)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
fuzz_scan(const uint8_t *data, size_t size, bool eof)
{
	size_t pos = 0;

	for (unsigned int i = 0; i < 256 && pos <= size; i++) {
		struct v4l2cuse_mjpeg_stream_frame fr;
		int r = v4l2cuse_mjpeg_stream_scan(data + pos, size - pos, eof, 1u << 20, &fr);

		if (fr.start > size - pos ||
		    (r != V4L2CUSE_MJPEG_STREAM_MORE && fr.end > size - pos))
			abort();
		if (r == V4L2CUSE_MJPEG_STREAM_FOUND) {
			if (fr.end <= fr.start + 4 || data[pos + fr.start] != 0xff ||
			    data[pos + fr.start + 1] != 0xd8 || data[pos + fr.end - 2] != 0xff ||
			    data[pos + fr.end - 1] != 0xd9 || !fr.width || !fr.height ||
			    fr.width > V4L2CUSE_MAX_WIDTH || fr.height > V4L2CUSE_MAX_HEIGHT)
				abort();
			pos += fr.end;
		} else if (r == -EBADMSG) {
			pos += MAX(fr.end, fr.start + 1);
		} else if (r == V4L2CUSE_MJPEG_STREAM_MORE || r == -ENODATA) {
			break;
		} else {
			abort();
		}
	}
}

/* The reader at the stream's own rate. */
static int
open_mjpeg(FILE *f, struct v4l2cuse_file_reader **r, char **error)
{
	return v4l2cuse_mjpeg_stream_reader_open(f, NULL, r, error);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct v4l2cuse_convert *cv;
	struct v4l2_pix_format out = { .pixelformat = V4L2_PIX_FMT_RGB24, .width = 16, .height = 16 };
	struct v4l2cuse_file_reader *r;
	uint8_t *dst;

	fuzz_scan(data, size, true);
	fuzz_scan(data, size, false);
	if (size == 0)
		return 0;
	if (!cv) {
		cv = v4l2cuse_convert_new();
		v4l2cuse_convert_set_strict_jpeg(cv, true);
	}
	r = fuzz_reader_open(data, size, open_mjpeg);
	if (!r)
		return 0;
	v4l2cuse_format_fill(&out);
	dst = g_malloc(out.sizeimage);
	for (unsigned int i = 0; i < 32; i++) {
		struct v4l2cuse_image img;
		uint32_t used;
		int rr = fuzz_reader_next(r, &img);

		if (rr == 0)
			break;
		if (rr < 0)
			continue;
		if (img.size < 4 || img.data[0] != 0xff || img.data[1] != 0xd8)
			abort();
		if ((uint64_t)img.width * img.height <= FUZZ_MAX_PIXELS) {
			rr = v4l2cuse_convert_frame(cv, &img, &out, dst, out.sizeimage, &used);
			if (rr < 0 && rr != -EBADMSG)
				abort();
		}
	}
	g_free(dst);
	v4l2cuse_file_reader_free(r);
	return 0;
}
