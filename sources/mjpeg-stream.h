/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The MJPEG stream splitter (mjpeg-stream.c), exposed for the reader, the
 * fuzz harness and the tests.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define V4L2CUSE_MJPEG_STREAM_FOUND	1
#define V4L2CUSE_MJPEG_STREAM_MORE	0

struct v4l2cuse_mjpeg_stream_frame {
	size_t start, end;		/* [start, end): SOI .. EOI */
	uint32_t width, height;		/* from the SOF segment */
};

/*
 * Find the next complete JPEG in @p[0..len) (at most @max_frame bytes).
 *   V4L2CUSE_MJPEG_STREAM_FOUND: ret->start..end is the frame, with its size.
 *   V4L2CUSE_MJPEG_STREAM_MORE:  more data is needed; bytes before ret->start can go.
 *   -EBADMSG:  a broken frame (or garbage) ends at ret->end: drop it.
 *   -ENODATA:  @eof and no frame left.
 * With @eof, a frame cut by the end is -EBADMSG (ret->end = len).
 */
int v4l2cuse_mjpeg_stream_scan(const uint8_t *p, size_t len, bool eof, size_t max_frame,
			       struct v4l2cuse_mjpeg_stream_frame *ret);
