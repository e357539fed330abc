/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Pixel packers: the one place that knows where the bytes of a pixel go
 * inside each raw format (format.c knows the planes, their bits per pixel
 * and subsampling; this file the order inside them): Y, Cb and Cr in packed
 * 4:2:2, the chroma order of the semi-planar and planar formats, the RGB
 * byte orders (the X byte of the 32-bit formats is 0xff) and RGB565's bits.
 * The test pattern (tpg.c) and the converter (convert.c) write every output
 * line through them, from a planar intermediate; the converter also reads
 * packed and semi-planar input through the unpackers.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Byte offsets in a pixel pair (4 bytes) of packed 4:2:2: YUYV UYVY YVYU. */
struct v4l2cuse_pack_order {
	uint8_t y0, cb, y1, cr;
};

/* The order of @fourcc, false for a format that is not packed 4:2:2. */
bool v4l2cuse_pack_422_order(uint32_t fourcc, struct v4l2cuse_pack_order *ret);

/*
 * One line of @width pixels (even unless @fourcc is GREY) from planar
 * Y'CbCr: @y holds @width samples, @cb and @cr @width / 2 (unused for
 * GREY). Writes plane 0 at @d0 and, for the (semi-)planar formats, this
 * line's chroma: NV12 NV21 NV16 NV61 interleaved at @d1 (@width bytes),
 * the three-plane formats at @d1 (the chroma plane that comes first in
 * memory: Cr for YV12) and @d2 (@width / 2 bytes each). @d1 NULL: no
 * chroma on this line (the odd lines of 4:2:0). @fourcc: a raw Y'CbCr
 * format of format.c but 4:4:4, or GREY.
 */
void v4l2cuse_pack_yuv_line(uint32_t fourcc, const uint8_t *y, const uint8_t *cb,
			    const uint8_t *cr, size_t width, uint8_t *d0, uint8_t *d1,
			    uint8_t *d2);

/* One line of @width R'G'B' pixels (RGB24 triplets) as RGB3 BGR3 BX24 XR24 or RGBP. */
void v4l2cuse_pack_rgb_line(uint32_t fourcc, const uint8_t *rgb, size_t width, uint8_t *d0);

/*
 * The reverse of v4l2cuse_pack_rgb_line(): one line of an RGB format into
 * RGB24 triplets at @rgb. RGB565 widens without filling the low bits (the
 * values libv4lconvert gives: 0xffff is 248, 252, 248).
 */
void v4l2cuse_unpack_rgb_line(uint32_t fourcc, const uint8_t *s, size_t width, uint8_t *rgb);

/*
 * The reverse of v4l2cuse_pack_yuv_line() for one line of packed 4:2:2
 * (@s: @width * 2 bytes into @y, @cb, @cr) or for the interleaved chroma of
 * NV12 NV21 NV16 NV61 (@s: @width bytes into @cb, @cr; @y unused).
 */
void v4l2cuse_unpack_yuv_line(uint32_t fourcc, const uint8_t *s, size_t width, uint8_t *y,
			      uint8_t *cb, uint8_t *cr);
