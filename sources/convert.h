/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Frame conversion for the file, uvc and loopback paths: whatever a file
 * reader, a camera or a writer delivers, to any format of format.c at any
 * size.
 *
 * The pipeline: the input becomes an intermediate at its own size, that is
 * scaled, then packed:
 *
 *   target                           intermediate
 *   YU12 YV12 NV12 NV21              planar Y'CbCr 4:2:0
 *   YUYV UYVY YVYU MJPG              planar Y'CbCr 4:2:2, or 4:2:0 when the
 *                                    input is 4:2:0 (packed 4:2:2 repeats
 *                                    chroma lines) or R'G'B' (MJPEG)
 *   RGB3 BGR3 BX24 XR24 RGBP GREY    what the input is: planar Y'CbCr, ARGB
 *                                    or grey
 *
 * libyuv (Chromium's and WebRTC's converter, SIMD) does the pixel work:
 * unpacking, packing, Y'CbCr <-> R'G'B' with the matrix and range of the
 * picture, R'G'B' to BT.601 Y'CbCr, scaling (bilinear, per plane).
 * libjpeg-turbo decodes and encodes JPEG, as raw planar Y'CbCr where it can
 * (no colour conversion in between). Our own code (convert-ycc.c) does what neither offers:
 * Y'CbCr from one matrix or range to another, and R'G'B' to BT.709 Y'CbCr.
 * Same format, size and colorimetry is a copy; MJPEG in and MJPEG out at
 * the same size passes the JPEG through unchanged. A raw input to a raw
 * target of its own size runs input and pack in strips of 16 lines, so
 * the intermediates stay in the cache; a scaled picture is packed in
 * strips. Strips give the same bytes as whole frames.
 *
 * Colour: a Y'CbCr target is written in the Y'CbCr encoding and
 * quantization its struct v4l2_pix_format gives (a camera's or a writer's
 * label passed on; DEFAULT ones as the kernel maps its colorspace), and
 * where it gives no colorspace in the colorimetry format.c reports for it
 * (v4l2cuse_format_colorimetry(): Y'CbCr BT.601 below 720 lines
 * and BT.709 from 720 on, limited range); R'G'B' is full range; GREY
 * full-range BT.601 luma; MJPEG JFIF, full-range BT.601. Inputs are read in the
 * colorimetry struct v4l2cuse_image gives, format.c's for their format and
 * size by default; a JPEG is always JFIF. Y'CbCr -> Y'CbCr across matrices
 * takes the luma correction from the chroma sample a pixel shares.
 * Limited-range BT.709 goes to R'G'B' through full range (libyuv's own
 * limited-range BT.709 constants clamp the Cb -> B' factor: up to 12 levels
 * off). Measured against the formulas (tests/unit/test-convert.c): Y' and
 * Cb/Cr within 1, R'G'B' within 2, for BT.601 and BT.709.
 *
 * Approximations (documented, not bugs): bilinear scaling has no prefilter,
 * so shrinking by more than 2x aliases (libyuv 1857's box filter rounds
 * down and its ARGB scaler darkens white: convert-out.c). R'G'B' input to
 * a 4:2:0 or 4:2:x target averages the R'G'B' of the pixels that share a
 * chroma sample; odd
 * widths of R'G'B', grey and JPEG input lose their last column on the way
 * to Y'CbCr (and 4:2:0 JPEGs their last odd line).
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
 * (and the planar 4:2:0 ones even heights).
 */
struct v4l2cuse_image {
	uint32_t fourcc;
	uint32_t width, height;
	uint32_t bytesperline;
	const uint8_t *data;
	size_t size;
	/*
	 * Y'CbCr input: its matrix (V4L2_YCBCR_ENC_601, _709; XV601 and
	 * XV709 read as those) and range (V4L2_QUANTIZATION_LIM_RANGE,
	 * _FULL_RANGE). 0 (DEFAULT) is v4l2cuse_format_colorimetry()'s for
	 * the fourcc at this height. Other encodings are read as BT.601.
	 * Ignored for R'G'B', grey and JPEG.
	 */
	uint32_t ycbcr_enc;
	uint32_t quantization;
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
 * The image of a frame at @data in the format @pix (v4l2cuse_format_fill()'s
 * layout, as a source or a writer app delivers it) of which @bytesused
 * bytes were filled: a raw frame is sizeimage bytes, a compressed one
 * (bytesperline 0) the @bytesused it came with. Colorimetry is left at 0.
 */
struct v4l2cuse_image v4l2cuse_convert_image_of(const struct v4l2_pix_format *pix,
						const void *data, size_t bytesused);

/*
 * Set @img's ycbcr_enc and quantization from a device's format @pix (a
 * camera's G_FMT), the kernel's defaults for its colorspace standing in
 * for DEFAULT (V4L2_MAP_YCBCR_ENC_DEFAULT(), V4L2_MAP_QUANTIZATION_DEFAULT():
 * sRGB and SMPTE 170M are BT.601, Rec. 709 is BT.709, Y'CbCr limited
 * range). A @pix without a colorspace leaves @img at format.c's.
 */
void v4l2cuse_convert_image_colorimetry(struct v4l2cuse_image *img,
					const struct v4l2_pix_format *pix);

/*
 * Convert @in into @dst (@dst_len >= out->sizeimage) as @out says
 * (pixelformat, width, height; bytesperline/sizeimage as
 * v4l2cuse_format_fill() computes them). *ret_bytesused is sizeimage for
 * raw targets, the JPEG size for MJPEG.
 * MJPEG is encoded at quality 85, lower (jpeg.h's fallback) if it does not
 * fit. Returns 0, -EINVAL for an unsupported input or target or a frame
 * smaller than its format needs, -EBADMSG for a JPEG that does not decode,
 * -ENOSPC when no MJPEG encoding fits (even at quality 5), -EIO when the
 * JPEG encoder fails.
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
