/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What fuzz-source-spec.c and fuzz-raw-options.c do with a source that was
 * created: enumerate its formats, sizes and intervals (each must be valid:
 * a known fourcc, 1..V4L2CUSE_MAX_* pixels, a non-zero interval), negotiate
 * a requested format (the result is enumerated and negotiating it again
 * changes nothing, as source.h promises), and when the negotiated frame is
 * small, start the source and let it fill one frame (bytesused within the
 * buffer) before stopping and destroying it (not the live GStreamer
 * source: starting it runs the pipeline the input describes).
 */

#include <stdint.h>
#include <string.h>
#include <glib.h>
#include <linux/videodev2.h>

#include "v4l2cuse/format.h"
#include "v4l2cuse/source.h"
#include "fuzz-common.h"

#define FUZZ_ENUM_MAX		64	/* more is a bug: offers are short lists */
#define FUZZ_PRODUCE_PIXELS	(320 * 240)

static inline bool
fuzz_size_offered(struct v4l2cuse_source *src, uint32_t fourcc, uint32_t w, uint32_t h)
{
	uint32_t ew, eh;

	for (unsigned int i = 0; src->ops->enum_framesize(src, fourcc, i, &ew, &eh) == 0; i++)
		if (ew == w && eh == h)
			return true;
	return false;
}

static inline void
fuzz_exercise_source(struct v4l2cuse_source *src, uint32_t want_fourcc, uint32_t want_w,
		     uint32_t want_h)
{
	struct v4l2_pix_format pix = { .width = want_w, .height = want_h,
				       .pixelformat = want_fourcc,
				       .field = V4L2_FIELD_NONE }, again;
	struct v4l2_fract iv = { 0, 0 };
	uint32_t fourcc, w, h;
	unsigned int nf, nsizes = 0;

	for (nf = 0; src->ops->enum_format(src, nf, &fourcc) == 0; nf++) {
		fuzz_check(nf < FUZZ_ENUM_MAX, "more than %u formats", FUZZ_ENUM_MAX);
		fuzz_check(v4l2cuse_format_info(fourcc), "unknown fourcc %08x offered", fourcc);
		for (unsigned int i = 0; src->ops->enum_framesize(src, fourcc, i, &w, &h) == 0;
		     i++) {
			fuzz_check(i < FUZZ_ENUM_MAX, "more than %u sizes", FUZZ_ENUM_MAX);
			fuzz_check(w >= 1 && h >= 1 && w <= V4L2CUSE_MAX_WIDTH &&
				   h <= V4L2CUSE_MAX_HEIGHT, "size %ux%u offered", w, h);
			nsizes++;
			for (unsigned int k = 0;
			     src->ops->enum_frameinterval(src, fourcc, w, h, k, &iv) == 0; k++) {
				fuzz_check(k < FUZZ_ENUM_MAX, "more than %u intervals",
					   FUZZ_ENUM_MAX);
				fuzz_check(iv.numerator && iv.denominator, "interval %u/%u",
					   iv.numerator, iv.denominator);
			}
		}
	}
	fuzz_check(nf > 0, "a source that offers no format");

	if (v4l2cuse_source_negotiate(src, &pix) < 0)
		return;
	fuzz_check(pix.width >= 1 && pix.height >= 1 && pix.width <= V4L2CUSE_MAX_WIDTH &&
		   pix.height <= V4L2CUSE_MAX_HEIGHT, "negotiated %ux%u", pix.width, pix.height);
	fuzz_check(pix.sizeimage > 0, "negotiated sizeimage 0");
	fuzz_check(!nsizes || fuzz_size_offered(src, pix.pixelformat, pix.width, pix.height),
		   "negotiated %ux%u is not offered", pix.width, pix.height);
	again = pix;
	fuzz_check(v4l2cuse_source_negotiate(src, &again) == 0 &&
		   memcmp(&again, &pix, sizeof(pix)) == 0, "negotiating twice changes it");

	if ((uint64_t)pix.width * pix.height > FUZZ_PRODUCE_PIXELS)
		return;
	/*
	 * The live GStreamer source (gst:, uri:) would build and run whatever
	 * pipeline or URI the input names, one per input, and connect: its
	 * create() (which only parses) and its offer are fuzzed, not start().
	 */
	if (strcmp(src->ops->name, "gst") == 0 || strcmp(src->ops->name, "uri") == 0)
		return;
	if (src->ops->enum_frameinterval(src, pix.pixelformat, pix.width, pix.height, 0, &iv) < 0)
		iv = (struct v4l2_fract){ 1, 30 };
	if (src->ops->start(src, &pix, &iv) == 0) {
		g_autofree uint8_t *buf = g_malloc0(pix.sizeimage);
		struct v4l2cuse_frame frame = { .data = buf, .length = pix.sizeimage,
						.fmt = &pix };
		int r = src->ops->produce(src, &frame);

		fuzz_check(r <= 0 && r > -4096, "produce() returned %d", r);
		fuzz_check(r < 0 || frame.bytesused <= pix.sizeimage, "bytesused %u > %u",
			   frame.bytesused, pix.sizeimage);
		src->ops->stop(src);
	}
}
