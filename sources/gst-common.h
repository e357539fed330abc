/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What the GStreamer-based code shares (gst-common.c): the file reader
 * (gst.c, behind "file:") and the live source (gst-live.c, "gst:" and
 * "uri:"). GStreamer's initialisation, the bus drained for its first error,
 * and a sample from an appsink as a struct v4l2cuse_image: its caps to our
 * format, its colorimetry, and GStreamer's padded planes repacked to
 * V4L2's layout when they are not already in it.
 *
 * Threading: one thread owns a struct v4l2cuse_gst_frame; the helpers take
 * what GStreamer's threads left on the bus or in the appsink without
 * waiting.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gst/gst.h>
#include <gst/video/video.h>

#include "convert.h"

/* gst_init_check() once; -EIO and "GStreamer: ..." when it fails. */
int v4l2cuse_gst_init(char **ret_error);

/*
 * Drain @bus (it would grow for ever): the first error message as
 * "GStreamer: MESSAGE" (g_free) or NULL, and whether end-of-stream was
 * posted in *ret_eos (when not NULL; left alone when not posted).
 */
char *v4l2cuse_gst_bus_poll(GstBus *bus, bool *ret_eos);

/*
 * The GStreamer raw format to ask a pipeline for when @fourcc is wanted,
 * for the formats GStreamer and V4L2 lay out alike (YUYV UYVY YVYU NV12
 * NV21 YU12 YV12 GREY); GST_VIDEO_FORMAT_UNKNOWN for the others (ask for
 * I420 and convert).
 */
GstVideoFormat v4l2cuse_gst_format_of(uint32_t fourcc);

/* A sample taken from an appsink, mapped as an image. */
struct v4l2cuse_gst_frame {
	GstSample *sample;
	GstVideoFrame vframe;
	bool vmapped;
	GstBuffer *jpeg_buf;
	GstMapInfo jpeg_map;		/* image/jpeg samples */
	uint8_t *tight;			/* the repacked planes */
	size_t tight_size;
};

/*
 * Take @sample (its reference passes to @f; the previous one is released)
 * and describe it in *ret: a raw sample of one of the formats of
 * v4l2cuse_gst_format_of() in V4L2's single-buffer layout (repacked when
 * GStreamer's strides or plane offsets differ; odd sizes of subsampled
 * formats lose their last column or line), with the colorimetry of its
 * caps; an image/jpeg sample as its bytes (V4L2_PIX_FMT_JPEG, the size from
 * the caps when they have one). ret->data stays valid until the next take,
 * release or clear. -EBADMSG for a sample without caps or buffer, of
 * another format, of a size outside 2x2..V4L2CUSE_MAX_*, or unmappable.
 */
int v4l2cuse_gst_frame_take(struct v4l2cuse_gst_frame *f, GstSample *sample,
			    struct v4l2cuse_image *ret);
/* Unmap and unref the sample (the repack buffer is kept for the next). */
void v4l2cuse_gst_frame_release(struct v4l2cuse_gst_frame *f);
/* Release and free everything; @f may be reused afterwards. */
void v4l2cuse_gst_frame_clear(struct v4l2cuse_gst_frame *f);

/*
 * For tests: the live source's pipelines that exist now, built at a
 * start() or a reconnect and not yet torn down (create() builds only a
 * syntax check that never leaves the NULL state: not counted).
 */
unsigned int v4l2cuse_gst_live_pipelines(void);
