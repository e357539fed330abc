/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The libjpeg(-turbo) glue of the sources, for the converter (convert.c:
 * decoding, encoding RGB) and the test pattern's MJPEG encoder (mjpeg.c):
 * the error manager, the destination manager, the quality fallback, and
 * reading a JPEG's size.
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
