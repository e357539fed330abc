/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Frame conversion for the file and uvc sources: whatever a file reader or
 * a camera delivers, to any format of format.c at any size.
 *
 * The pipeline: the input becomes one of three intermediate layouts at its
 * own size, that is scaled (bilinear, per plane), then packed:
 *
 *   target                           intermediate
 *   YU12 YV12 NV12 NV21              planar Y'CbCr 4:2:0
 *   YUYV UYVY YVYU                   planar Y'CbCr 4:2:2 (or 4:2:0 when the
 *                                    input is 4:2:0: chroma lines repeat)
 *   GREY                             luma (from Y'CbCr, see below)
 *   RGB3 BGR3 BX24 XR24 RGBP MJPG    RGB24
 *
 * Colour math is left to libraries: libv4lconvert converts between Y'CbCr
 * and R'G'B' (BT.601, limited-range Y'CbCr, full-range RGB) and
 * libjpeg-turbo decodes and encodes JPEG (JFIF). Our own code only moves
 * samples: plane (de)interleaving and RGB repacking (pack.h's packers,
 * shared with the test pattern), chroma subsampling by averaging and
 * upsampling by repetition, bilinear scaling, and the one mapping no library
 * offers here: limited-range luma to the full-range GREY of format.c
 * (Y' = (Y - 16) * 255 / 219). Same format and size is a copy; MJPEG in
 * and MJPEG out at the same size passes the JPEG through unchanged.
 *
 * Approximations (documented, not bugs): Y'CbCr input is passed through
 * without a matrix change whatever its origin, and RGB <-> Y'CbCr is always
 * BT.601, while format.c labels Y'CbCr frames of 720 lines and more BT.709.
 * Bilinear scaling has no prefilter, so downscaling by more than 2x aliases.
 * RGB input to a 4:2:2 target goes through 4:2:0.
 *
 * Not thread-safe: one thread owns a struct v4l2cuse_convert.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/videodev2.h>

#include "v4l2cuse/format.h"

/*
 * One input frame in V4L2's single-buffer layout: plane 0 has lines of
 * @bytesperline bytes (0: the natural width * bpp), the chroma planes of
 * planar formats follow without gaps, with bytesperline scaled like V4L2
 * does (YU12: bytesperline / 2). MJPEG/JPEG: @data holds @size bytes of
 * JPEG, and the frame's own header gives the size (@width/@height are only
 * a hint).
 *
 * Inputs: every format of format.c (v4l2cuse_format_lookup(): the output
 * formats and NV16 NV61 422P V4L2CUSE_PIX_FMT_YUV444P JPEG), in the layout
 * v4l2cuse_format_frame_size() describes. Y'CbCr inputs need even widths
 * (and 4:2:0 ones even heights).
 */
struct v4l2cuse_image {
	uint32_t fourcc;
	uint32_t width, height;
	uint32_t bytesperline;
	const uint8_t *data;
	size_t size;
};

struct v4l2cuse_convert;

struct v4l2cuse_convert *v4l2cuse_convert_new(void);
void v4l2cuse_convert_free(struct v4l2cuse_convert *cv);			/* NULL-safe */

/*
 * Treat JPEGs with corrupt-data warnings (truncated, extraneous bytes) as
 * corrupt (-EBADMSG) instead of showing what libjpeg made of them. Files
 * want this; cameras, whose JPEGs are often slightly off, don't.
 */
void v4l2cuse_convert_set_strict_jpeg(struct v4l2cuse_convert *cv, bool strict);

/* Whether @fourcc is an input v4l2cuse_convert_frame() takes. */
bool v4l2cuse_convert_input_supported(uint32_t fourcc);

/*
 * Bytes a raw input frame needs (planes included) for @bytesperline
 * (0: natural), or 0 for compressed or unknown formats and bad sizes.
 */
size_t v4l2cuse_convert_input_size(uint32_t fourcc, uint32_t width, uint32_t height,
				   uint32_t bytesperline);

/*
 * Convert @in into @dst (@dst_len >= out->sizeimage) as @out says
 * (pixelformat, width, height; bytesperline/sizeimage as
 * v4l2cuse_format_fill() computes them). *ret_bytesused is sizeimage for
 * raw targets, the JPEG size for MJPEG.
 * MJPEG is encoded at quality 85, lower (jpeg.h's fallback) if it does not
 * fit. Returns 0, -EINVAL for an unsupported input or target or a frame
 * smaller than its format needs, -EBADMSG for a JPEG that does not decode,
 * -ENOSPC when no MJPEG encoding fits (even at quality 5), -EIO when
 * libv4lconvert fails.
 */
int v4l2cuse_convert_frame(struct v4l2cuse_convert *cv, const struct v4l2cuse_image *in,
			   const struct v4l2_pix_format *out, void *dst, size_t dst_len,
			   uint32_t *ret_bytesused);

/*
 * Decode/convert @in to tightly packed RGB24 at its own size, in memory
 * owned by @cv (valid until the next call on @cv). For still images.
 */
int v4l2cuse_convert_to_rgb24(struct v4l2cuse_convert *cv, const struct v4l2cuse_image *in,
			      const uint8_t **ret_rgb, uint32_t *ret_width, uint32_t *ret_height);
