/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The converter's insides, shared by its files along the pipeline of
 * convert.h:
 *
 *   convert.c        the converter: state, scratch buffers, inputs and their
 *                    layout, colorimetry, the entry points
 *   convert-in.c     an input to the intermediate (Y'CbCr 4:2:x, ARGB, grey)
 *   convert-out.c    scaling the intermediate and packing it as the target
 *   convert-ycc.c    our colour math: Y'CbCr between matrices and ranges,
 *                    R'G'B' to BT.709 Y'CbCr
 *   convert-jpeg.c   JPEG in (decoding) and out (encoding), libjpeg-turbo
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>	/* jpeglib.h needs FILE */

#include <jpeglib.h>

#include "v4l2cuse/format.h"
#include "convert.h"
#include "jpeg.h"

enum {
	CV_BUF_IN,	/* the intermediate made from the input */
	CV_BUF_TMP,	/* a step of the input stage (ARGB before Y'CbCr, chroma) */
	CV_BUF_PLANES,	/* ARGB split into planes for scaling */
	CV_BUF_SCALE,	/* the scaled intermediate */
	CV_BUF_XFORM,	/* the intermediate in the target's colorimetry, an MJPEG strip */
	CV_BUF_LINE,	/* line buffers of the colour transform */
	CV_BUF_OUT,	/* a staging picture of the packer (grey as ARGB) */
	CV_BUF_STILL,	/* the RGB24 picture of v4l2cuse_convert_to_rgb24() */
	CV_N_BUFS
};

struct v4l2cuse_convert {
	struct {
		uint8_t *p;
		size_t size;
	} bufs[CV_N_BUFS];
	bool strict_jpeg;
	/* Convert and pack whole frames, no strips: the reference of the strip test. */
	bool whole_frames;

	struct jpeg_decompress_struct dinfo;
	struct v4l2cuse_jpeg_err derr;
	bool dinfo_init;
	struct jpeg_compress_struct cinfo;
	struct v4l2cuse_jpeg_err cerr;
	struct v4l2cuse_jpeg_dest cdest;
	struct v4l2cuse_jpeg_raw craw;
	bool cinfo_init;
};

#define CV_JPEG_QUALITY	85	/* MJPEG output, before the fallback */

/*
 * Raw frames are converted in strips of this many lines (even: whole 4:2:0
 * chroma lines), input to target, so that every intermediate of a strip
 * (at 1920 wide: 30-120 KiB each) stays in the L2 cache instead of making
 * a round trip through memory per stage. Every step is line-local, so
 * strips give the same bytes as whole frames (tests/unit/test-convert-strips.c).
 */
#define CV_STRIP_LINES	16

/*
 * A Y'CbCr colorimetry: the matrix (BT.601 or BT.709) and the range
 * (limited: Y' 16..235, Cb/Cr 16..240; full: 0..255). R'G'B' is always
 * full range, grey is full-range BT.601 luma (format.c).
 */
struct cv_ycc {
	bool bt709;
	bool full;
};

static inline bool
cv_ycc_equal(struct cv_ycc a, struct cv_ycc b)
{
	return a.bt709 == b.bt709 && a.full == b.full;
}

/* JFIF's: full-range BT.601 (JPEG in and out, grey). */
#define CV_YCC_JFIF	((struct cv_ycc){ .bt709 = false, .full = true })
/* Full-range BT.709, the form in which libyuv turns BT.709 into R'G'B' exactly. */
#define CV_YCC_709_FULL	((struct cv_ycc){ .bt709 = true, .full = true })

/* An intermediate picture; planes may point into the input. */
enum cv_kind {
	CV_YUV,		/* Y, Cb, Cr planes; chroma w/2 x h >> vs; in colorimetry ycc */
	CV_ARGB,	/* one plane, libyuv's ARGB: B, G, R, A bytes, A = 0xff */
	CV_GREY,	/* one plane, full-range luma */
};

struct cv_pic {
	enum cv_kind kind;
	uint32_t w, h;
	unsigned int vs;	/* CV_YUV: 1 for 4:2:0, 0 for 4:2:2 */
	struct cv_ycc ycc;	/* CV_YUV */
	const uint8_t *p[3];
	size_t stride[3];
};

/*
 * What the output stage wants from the input stage, by target: Y'CbCr (4:2:0
 * if need420, else the input's own 4:2:0 or 4:2:2) for the Y'CbCr targets
 * and MJPEG, where R'G'B' input becomes Y'CbCr in the target's colorimetry
 * right away; for R'G'B' and grey targets whatever kind the input is. A
 * JPEG for an R'G'B' target of its own size decodes to R'G'B', else to
 * Y'CbCr (cheaper to scale).
 */
struct cv_want {
	bool yuv;
	bool rgb;
	bool need420;
	struct cv_ycc ycc;	/* the target's */
	uint32_t w, h;		/* the target's size; 0: the input's */
};

/* convert.c */
uint8_t *v4l2cuse_convert_buf(struct v4l2cuse_convert *cv, unsigned int i,
			      size_t size); /* scratch buffer @i, grown */
size_t v4l2cuse_convert_layout(const struct v4l2cuse_format_info *f, uint32_t w, uint32_t h,
			       uint32_t bpl, size_t off[3], size_t stride[3]);
/* format.c's colorimetry for @fourcc at @height, @enc/@quant (non-zero) overriding it. */
struct cv_ycc v4l2cuse_convert_colorimetry(uint32_t fourcc, uint32_t height, uint32_t enc,
				   uint32_t quant);
/* What a target @out is written in: its own colorimetry if set, else format.c's. */
struct cv_ycc v4l2cuse_convert_target_colorimetry(const struct v4l2_pix_format *out);

/* convert-in.c */
/* Planes of a tight Y'CbCr 4:2:x picture in @buf (w * h + 2 * w/2 * h>>vs bytes). */
void v4l2cuse_convert_pic_yuv(struct cv_pic *pic, uint32_t w, uint32_t h, unsigned int vs,
			      struct cv_ycc ycc, uint8_t *buf);
/*
 * Lines [@y0, @y0 + @lines) of @in (@y0 even) as a picture of their own; a
 * JPEG only whole (0, its height).
 */
int v4l2cuse_convert_input(struct v4l2cuse_convert *cv, const struct v4l2cuse_image *in,
			   const struct cv_want *want, uint32_t y0, uint32_t lines,
			   struct cv_pic *pic);

/* convert-out.c */
void v4l2cuse_convert_scale(struct v4l2cuse_convert *cv, const struct cv_pic *in, uint32_t w,
			    uint32_t h, struct cv_pic *out);
void v4l2cuse_convert_copy_plane(uint8_t *dst, size_t dstride, const uint8_t *src, size_t sstride,
				 size_t row_bytes, uint32_t rows);
/* Targets made from R'G'B': the RGB formats. */
bool v4l2cuse_convert_is_rgb_target(const struct v4l2cuse_format_info *oi);
/* @pic as lines [@y0, @y0 + pic->h) of frame @out in @dst (MJPEG: only whole). */
int v4l2cuse_convert_pack(struct v4l2cuse_convert *cv, const struct cv_pic *pic,
			  const struct v4l2_pix_format *out, uint32_t y0, uint8_t *dst,
			  size_t dst_len, uint32_t *ret_bytesused);
/* The whole frame @pic packed strip by strip. */
int v4l2cuse_convert_pack_strips(struct v4l2cuse_convert *cv, const struct cv_pic *pic,
				 const struct v4l2_pix_format *out, uint8_t *dst, size_t dst_len,
				 uint32_t *ret_bytesused);

/* convert-ycc.c */
/*
 * Lines [@y0, @y1) of the Y'CbCr picture @in (y0 even) and their chroma,
 * taken to colorimetry @to, into planes @out (the same subsampling); only
 * the luma if @luma_only.
 */
void v4l2cuse_convert_ycc_lines(struct v4l2cuse_convert *cv, const struct cv_pic *in,
				struct cv_ycc to, uint32_t y0, uint32_t y1, bool luma_only,
				uint8_t *const out[3], const size_t out_stride[3]);
/* The whole of @in in colorimetry @to, in CV_BUF_XFORM (or @in itself if it is already). */
void v4l2cuse_convert_ycc_pic(struct v4l2cuse_convert *cv, const struct cv_pic *in, struct cv_ycc to,
			  bool luma_only, struct cv_pic *out);
/* An ARGB picture (even width, and height if @vs) to Y'CbCr 4:2:x in @ycc, in @out's planes. */
void v4l2cuse_convert_argb_to_ycc(const struct cv_pic *argb, unsigned int vs, struct cv_ycc ycc,
				  const struct cv_pic *out);

/* convert-jpeg.c */
/*
 * Decode a JPEG: as Y'CbCr into CV_BUF_IN (JFIF's colorimetry, no colour
 * conversion) if it is 4:2:2 or 4:2:0 and @want does not take R'G'B' at its
 * size, else as ARGB into scratch buffer @argb_buf.
 */
int v4l2cuse_convert_jpeg_decode(struct v4l2cuse_convert *cv, const uint8_t *data, size_t size,
				 const struct cv_want *want, unsigned int argb_buf,
				 struct cv_pic *pic);
/* Encode a Y'CbCr picture into @dst (as JFIF); lowers the quality until it fits. */
int v4l2cuse_convert_jpeg_encode(struct v4l2cuse_convert *cv, const struct cv_pic *pic,
				 uint8_t *dst, size_t dst_len, uint32_t *ret_len);
