/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Pixel format facts shared by the daemon and the sources: the kernel's
 * ENUM_FMT descriptions, plane layout and the bytesperline/sizeimage math.
 * Implemented in sources/format.c (part of the sources library).
 */

#include <stdbool.h>
#include <stdint.h>
#include <linux/videodev2.h>

/* Largest frame we accept: 8192x8192 at 4 bytes per pixel. */
#define V4L2CUSE_MAX_WIDTH  8192
#define V4L2CUSE_MAX_HEIGHT 8192

struct v4l2cuse_format_info {
	uint32_t fourcc;
	const char *description;	/* exactly the kernel's (v4l_fill_fmtdesc) */
	bool compressed;		/* MJPEG/JPEG: V4L2_FMT_FLAG_COMPRESSED */
	bool yuv;			/* a Y'CbCr format (colorimetry differs) */
	uint8_t n_planes;		/* colour planes, all in one buffer (1..3) */
	uint8_t bpp[3];			/* bits per pixel of plane i, at full width */
	uint8_t hdiv, vdiv;		/* chroma subsampling of planes 1..2 */
	uint8_t width_align;		/* width must be a multiple of this */
};

/* NULL for a fourcc we don't know. */
const struct v4l2cuse_format_info *v4l2cuse_format_info(uint32_t fourcc);

/* Every format the project can produce, in a stable order. */
const struct v4l2cuse_format_info *v4l2cuse_format_by_index(unsigned int index);

/*
 * Fill @pix->bytesperline, sizeimage, field and the colorimetry fields from
 * @pix->pixelformat/width/height. bytesperline is unpadded; for planar
 * formats it is the luma line (the chroma planes follow at half stride).
 * Compressed formats get bytesperline 0 and a fixed worst-case sizeimage.
 * Returns 0, -EINVAL for an unknown fourcc or a zero size, -EOVERFLOW when
 * the size arithmetic would not fit in 32 bits.
 */
int v4l2cuse_format_fill(struct v4l2_pix_format *pix);

/*
 * Colorimetry the project uses for a format at a size: BT.601 limited range
 * for SD YUV, Rec.709 limited range for HD (height >= 720) YUV, sRGB full
 * range for RGB and grey, JPEG for MJPEG. Writes colorspace, ycbcr_enc,
 * quantization and xfer_func (never 0/DEFAULT).
 */
void v4l2cuse_format_colorimetry(struct v4l2_pix_format *pix);
