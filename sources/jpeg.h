/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The libjpeg(-turbo) glue of the sources, for the converter (convert.c:
 * decoding, encoding) and the test pattern's MJPEG encoder (mjpeg.c): the
 * error manager, the destination manager, raw-data (planar Y'CbCr) encoding,
 * the quality fallback, and reading a JPEG's size.
 */

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jpeglib.h>

/*
 * Errors do not exit the process: error_exit longjmp()s to @jb, which the
 * caller armed with setjmp() around its libjpeg calls (and then calls
 * jpeg_abort_*()). Warnings (corrupt data that still decodes) are counted
 * in @warnings; nothing is printed.
 */
struct v4l2cuse_jpeg_err {
	struct jpeg_error_mgr pub;
	jmp_buf jb;
	unsigned int warnings;
};

/* Set @e up; returns &e->pub, for a compress or decompress struct's err. */
struct jpeg_error_mgr *v4l2cuse_jpeg_err_init(struct v4l2cuse_jpeg_err *e);

/*
 * Compressed output into memory of the caller's: v4l2cuse_jpeg_dest_set()
 * before each image. When @buf is full it grows (g_realloc(), so @buf must
 * be g_malloc()'ed and is updated) if @grow; else the encoder goes on into
 * a spill area and @overflow says the image did not fit. After
 * jpeg_finish_compress() @len is the size of the JPEG (if it fit).
 */
struct v4l2cuse_jpeg_dest {
	struct jpeg_destination_mgr pub;
	uint8_t *buf;
	size_t size;
	bool grow;
	bool overflow;
	size_t len;
	uint8_t spill[4096];
};

/* Set @d's callbacks and make it @c's destination (once). */
void v4l2cuse_jpeg_dest_attach(struct v4l2cuse_jpeg_dest *d, j_compress_ptr c);
void v4l2cuse_jpeg_dest_set(struct v4l2cuse_jpeg_dest *d, uint8_t *buf, size_t size, bool grow);

/*
 * Raw-data encoding: planar Y'CbCr 4:2:2 or 4:2:0 straight into the DCT
 * (jpeg_write_raw_data(), no colour conversion or subsampling in libjpeg).
 * The samples must already be JFIF's: full-range BT.601. The encoder reads
 * whole MCUs (16 luma columns, 8 or 16 lines), so a last MCU column that
 * the picture only partly covers is padded by repeating its last sample,
 * in @pad (one MCU row per plane), and a last MCU row by repeating its last
 * line.
 */
struct v4l2cuse_jpeg_raw {
	uint32_t width;			/* luma samples, even */
	unsigned int vs;		/* chroma lines: height >> vs (0: 4:2:2, 1: 4:2:0) */
	uint32_t pad_w[3];		/* the MCU-padded line of each plane */
	uint8_t *pad[3];
};

/* Set @r up for @width and @vs (its padding lines are reallocated). */
void v4l2cuse_jpeg_raw_init(struct v4l2cuse_jpeg_raw *r, uint32_t width, unsigned int vs);
void v4l2cuse_jpeg_raw_clear(struct v4l2cuse_jpeg_raw *r);		/* frees the padding */

/*
 * Set up @c (its destination attached) for a @height-line image of @r at
 * @quality, with a restart marker after every MCU row if @restart_rows, and
 * start it (jpeg_start_compress()). Inside the caller's setjmp().
 */
void v4l2cuse_jpeg_raw_start(const struct v4l2cuse_jpeg_raw *r, j_compress_ptr c,
			     uint32_t height, int quality, bool restart_rows);

/*
 * Write the MCU row at c->next_scanline (8 << vs lines): its luma line i is
 * @p[0] + i * @stride[0], its chroma line i @p[1 or 2] + i * @stride[1 or 2],
 * for i < @lines (luma lines; chroma: (@lines + vs) >> vs), the last line
 * repeating past that. Inside the caller's setjmp().
 */
void v4l2cuse_jpeg_raw_write(struct v4l2cuse_jpeg_raw *r, j_compress_ptr c,
			     const uint8_t *const p[3], const size_t stride[3], uint32_t lines);

/*
 * The quality fallback of the encoders (an image must fit the format's
 * sizeimage): the quality to try after an image did not fit at @quality:
 * 20 lower, not below V4L2CUSE_JPEG_MIN_QUALITY; 0 when @quality was the
 * lowest already.
 */
#define V4L2CUSE_JPEG_MIN_QUALITY	5
int v4l2cuse_jpeg_lower_quality(int quality);

/*
 * Width and height from a JPEG's header. -EBADMSG if it is not a JPEG,
 * -EOVERFLOW past V4L2CUSE_MAX_*.
 */
int v4l2cuse_jpeg_size(const uint8_t *data, size_t size, uint32_t *ret_width, uint32_t *ret_height);
