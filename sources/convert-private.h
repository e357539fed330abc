/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The converter's insides, shared by its files along the pipeline of
 * convert.h:
 *
 *   convert.c        the converter: state, scratch buffers, inputs and their
 *                    layout, libv4lconvert, the entry points
 *   convert-in.c     an input to the intermediate (Y'CbCr 4:2:x or RGB24)
 *   convert-out.c    scaling the intermediate and packing it as the target
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
	CV_BUF_DEC,	/* decoded JPEG (RGB24), libv4lconvert RGB output */
	CV_BUF_CANON,	/* the intermediate */
	CV_BUF_TMP,	/* a repacked input for libv4lconvert */
	CV_BUF_SCALE,	/* the scaled intermediate */
	CV_BUF_XMAP,	/* scaler column tables */
	CV_BUF_LUMA,	/* Y'CbCr input with its luma expanded for libv4lconvert, GREY */
	CV_N_BUFS
};

struct v4l2cuse_convert {
	struct v4lconvert_data *v4l;
	struct {
		uint8_t *p;
		size_t size;
	} bufs[CV_N_BUFS];
	bool strict_jpeg;

	struct jpeg_decompress_struct dinfo;
	struct v4l2cuse_jpeg_err derr;
	bool dinfo_init;
	struct jpeg_compress_struct cinfo;
	struct v4l2cuse_jpeg_err cerr;
	struct v4l2cuse_jpeg_dest cdest;
	bool cinfo_init;
};

#define CV_JPEG_QUALITY	85	/* MJPEG output, before the fallback */

/* An intermediate picture; planes may point into the input. */
enum cv_kind {
	CV_YUV,		/* Y, Cb, Cr planes; chroma w/2 x h >> vs */
	CV_RGB,		/* one plane, 3 bytes per pixel */
	CV_GREY,	/* one plane, full-range luma */
};

struct cv_pic {
	enum cv_kind kind;
	uint32_t w, h;
	unsigned int vs;
	const uint8_t *p[3];
	size_t stride[3];
};

/* convert.c */
uint8_t *v4l2cuse_convert_buf(struct v4l2cuse_convert *cv, unsigned int i,
			      size_t size); /* scratch buffer @i, grown */
size_t v4l2cuse_convert_layout(const struct v4l2cuse_format_info *f, uint32_t w, uint32_t h,
			       uint32_t bpl, size_t off[3], size_t stride[3]);
unsigned int v4l2cuse_convert_vs(const struct v4l2cuse_format_info *f);
bool v4l2cuse_convert_v4l_reads(uint32_t fourcc);
/* @data (a raw format libv4lconvert reads) to RGB24/BGR24/YU12/YV12, same size. */
int v4l2cuse_convert_v4l(struct v4l2cuse_convert *cv, uint32_t fourcc, uint32_t w, uint32_t h,
			 uint32_t bpl, const uint8_t *data, size_t size, uint32_t dst_fourcc,
			 uint8_t *dst, size_t dst_len);

/* convert-in.c */
void v4l2cuse_convert_pic_yuv(struct cv_pic *pic, uint32_t w, uint32_t h, unsigned int vs,
			      uint8_t *buf);
/* Y'CbCr 4:2:0 (@need420) or 4:2:x. */
int v4l2cuse_convert_to_yuv(struct v4l2cuse_convert *cv, const struct v4l2cuse_image *in,
			    bool need420, struct cv_pic *pic);
int v4l2cuse_convert_to_rgb(struct v4l2cuse_convert *cv, const struct v4l2cuse_image *in,
			    struct cv_pic *pic);
/* A Y'CbCr picture to tight RGB24/BGR24 (libv4lconvert, via a tight YU12/YUYV). */
int v4l2cuse_convert_yuv_to_rgb(struct v4l2cuse_convert *cv, const struct cv_pic *yuv,
				uint32_t rgb_fourcc, uint8_t *out, size_t out_len);

/* convert-out.c */
void v4l2cuse_convert_scale(struct v4l2cuse_convert *cv, const struct cv_pic *in, uint32_t w,
			    uint32_t h, bool luma_only, struct cv_pic *out);
void v4l2cuse_convert_copy_plane(uint8_t *dst, size_t dstride, const uint8_t *src, size_t sstride,
				 size_t row_bytes, uint32_t rows);
/* The limited-range luma to full-range GREY mapping. */
const uint8_t *v4l2cuse_convert_luma_lut(void);
/* A Y'CbCr or grey picture in the tight layout of raw @fourcc. */
void v4l2cuse_convert_pack_yuv(const struct cv_pic *pic, uint32_t fourcc, uint8_t *dst);
/* Targets made from the RGB24 intermediate: the RGB formats and MJPEG. */
bool v4l2cuse_convert_is_rgb_target(const struct v4l2cuse_format_info *oi);
int v4l2cuse_convert_pack(struct v4l2cuse_convert *cv, const struct cv_pic *pic,
			  const struct v4l2_pix_format *out, uint8_t *dst, size_t dst_len,
			  uint32_t *ret_bytesused);

/* convert-jpeg.c */
/* Decode a JPEG to tight RGB24 in CV_BUF_DEC. */
int v4l2cuse_convert_jpeg_decode(struct v4l2cuse_convert *cv, const uint8_t *data, size_t size,
				 struct cv_pic *pic);
/* Encode tight-or-strided RGB24 into @dst; lowers the quality until it fits. */
int v4l2cuse_convert_jpeg_encode(struct v4l2cuse_convert *cv, const struct cv_pic *pic,
				 uint8_t *dst, size_t dst_len, uint32_t *ret_len);
