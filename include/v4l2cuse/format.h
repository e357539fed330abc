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

/*
 * A private fourcc for planar Y'CbCr 4:4:4 (Y, then Cb, then Cr, each
 * width x height): what the Y4M reader delivers for 4:4:4 files. Read, never
 * offered.
 */
#define V4L2CUSE_PIX_FMT_YUV444P	v4l2_fourcc('4', '4', '4', 'P')

/*
 * One table in sources/format.c holds every pixel format the project knows:
 * those it produces (output: offered to consumers, ENUM_FMT) and those it
 * only reads from files and cameras (NV16, NV61, 422P, 4:4:4 planar, JPEG).
 * Everything else that needs a fact about a format asks it here.
 */
struct v4l2cuse_format_info {
	uint32_t fourcc;
	const char *description;	/* exactly the kernel's (v4l_fill_fmtdesc); NULL
					 * for the formats that are only read */
	bool output;			/* produced and offered (v4l2cuse_format_by_index()) */
	bool compressed;		/* MJPEG/JPEG: V4L2_FMT_FLAG_COMPRESSED */
	bool yuv;			/* a Y'CbCr format (colorimetry differs; GREY is not) */
	uint8_t n_planes;		/* colour planes, all in one buffer (1..3) */
	uint8_t bpp[3];			/* bits per pixel of plane i: its line is
					 * width * bpp[i] / 8 bytes (NV12 CbCr: 8, YU12
					 * Cb/Cr: 4, YUYV: 16; 0 for MJPEG/JPEG) */
	uint8_t hdiv, vdiv;		/* chroma subsampling (YUYV 2x1, NV12 2x2);
					 * planes 1..2 have height / vdiv lines */
	uint8_t width_align;		/* width is rounded up to a multiple of this */
};

/* An output format, NULL for a fourcc we do not produce. */
const struct v4l2cuse_format_info *v4l2cuse_format_info(uint32_t fourcc);

/*
 * Every output format, in a stable order: Y'CbCr (packed 4:2:2, then
 * 4:2:0), RGB, grey, compressed. Sources offer them in this order.
 */
const struct v4l2cuse_format_info *v4l2cuse_format_by_index(unsigned int index);

/*
 * Any format the project knows, also the ones it only reads; NULL for a
 * fourcc it can neither read nor produce.
 */
const struct v4l2cuse_format_info *v4l2cuse_format_lookup(uint32_t fourcc);

/*
 * Every known format, read-only ones included, in the same kind of order:
 * Y'CbCr, RGB, grey, compressed (the order in which a camera's formats are
 * preferred as the input of a conversion).
 */
const struct v4l2cuse_format_info *v4l2cuse_format_lookup_by_index(unsigned int index);

/* The formats an option may name. */
enum v4l2cuse_format_set {
	V4L2CUSE_FORMATS_OUTPUT,	/* produced and offered: v4l2cuse_format_info() */
	V4L2CUSE_FORMATS_RAW,		/* every uncompressed one, for raw frames in files */
};

bool v4l2cuse_format_in_set(const struct v4l2cuse_format_info *info,
			    enum v4l2cuse_format_set set);

/*
 * Bytes of a raw frame of @info at @width x @height in V4L2's single-buffer
 * layout, with plane 0 lines of @bytesperline bytes (0: the natural
 * width * bpp[0] / 8; the chroma planes' lines scale like V4L2's, e.g.
 * bytesperline / 2 for YU12) and the chroma planes following without gaps;
 * each plane's offset and line length in @ret_off/@ret_stride if not NULL.
 * 0 for a compressed format, a size of 0 or past V4L2CUSE_MAX_*, a width or
 * height the subsampling cannot split (odd for 4:2:x planes and packed
 * 4:2:2), or a bytesperline below the natural one.
 */
size_t v4l2cuse_format_frame_size(const struct v4l2cuse_format_info *info, uint32_t width,
				  uint32_t height, uint32_t bytesperline, size_t ret_off[3],
				  size_t ret_stride[3]);

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
