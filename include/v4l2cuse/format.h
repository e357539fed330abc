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

/* Bytes added to the MJPEG sizeimage bound for markers and tables. */
#define V4L2CUSE_JPEG_HEADROOM 4096

struct v4l2cuse_format_info {
	uint32_t fourcc;
	const char *description;	/* exactly the kernel's (v4l_fill_fmtdesc) */
	bool compressed;		/* MJPEG/JPEG: V4L2_FMT_FLAG_COMPRESSED */
	bool yuv;			/* a Y'CbCr format (colorimetry differs) */
	uint8_t n_planes;		/* colour planes, all in one buffer (1..3) */
	uint8_t bpp[3];			/* plane i's line is width * bpp[i] / 8 bytes
					 * (NV12 CbCr: 8, YU12 Cb/Cr: 4; 0 for MJPEG) */
	uint8_t hdiv, vdiv;		/* chroma subsampling (YUYV 2x1, NV12 2x2);
					 * planes 1..2 have height / vdiv lines */
	uint8_t width_align;		/* width is rounded up to a multiple of this */
};

/* NULL for a fourcc we don't know. */
const struct v4l2cuse_format_info *v4l2cuse_format_info(uint32_t fourcc);

/* Every format the project can produce, in a stable order. */
const struct v4l2cuse_format_info *v4l2cuse_format_by_index(unsigned int index);

/*
 * Fill @pix->bytesperline, sizeimage, field and the colorimetry fields from
 * @pix->pixelformat/width/height; also sets priv = V4L2_PIX_FMT_PRIV_MAGIC
 * and flags = 0 (we advertise EXT_PIX_FORMAT).
 *
 * Sizes: the width is rounded up to info->width_align (2 for the 4:2:2 and
 * 4:2:0 formats and MJPEG), and for vertically subsampled formats (vdiv 2:
 * NV12, NV21, YU12, YV12) the height is rounded up to even. Neither can
 * pass the maximum, which is even.
 *
 * bytesperline is unpadded: width * bpp[0] / 8. For the planar formats it
 * is the luma line; the chroma planes follow the luma plane without gaps,
 * each of height / vdiv lines of width * bpp[i] / 8 bytes (YU12/YV12:
 * bytesperline / 2 per chroma plane; NV12/NV21: bytesperline for the one
 * interleaved CbCr plane). sizeimage is exactly the sum of the planes.
 *
 * Compressed formats (MJPEG) get bytesperline 0 and a fixed worst-case
 * sizeimage of width * height * 2 + V4L2CUSE_JPEG_HEADROOM: the size of the
 * same frame in YUYV plus room for headers. Encoders write into a buffer of
 * that size and must fit (the test pattern retries at a lower quality); the
 * daemon pads every compressed frame to sizeimage for read().
 *
 * Returns 0, -EINVAL for an unknown fourcc or a zero size, -EOVERFLOW for a
 * width above V4L2CUSE_MAX_WIDTH or a height above V4L2CUSE_MAX_HEIGHT (or
 * size arithmetic that would not fit in 32 bits). @pix is unchanged on
 * failure.
 */
int v4l2cuse_format_fill(struct v4l2_pix_format *pix);

/*
 * Colorimetry the project uses for a format at a size (never 0/DEFAULT):
 *   YUV, height < 720:   SMPTE170M, ycbcr_enc 601, LIM_RANGE, xfer 709
 *   YUV, height >= 720:  REC709,    ycbcr_enc 709, LIM_RANGE, xfer 709
 *   RGB and GREY:        SRGB,      ycbcr_enc 601, FULL_RANGE, xfer SRGB
 *   MJPEG:               JPEG,      ycbcr_enc 601, FULL_RANGE, xfer SRGB
 * (GREY is full-range BT.601 luma.) Writes colorspace, ycbcr_enc,
 * quantization and xfer_func. Unknown fourccs are treated as RGB.
 */
void v4l2cuse_format_colorimetry(struct v4l2_pix_format *pix);
