/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Pixel packers: the one place that knows where the bytes of a pixel go
 * inside each raw format (format.c knows the planes, their bits per pixel
 * and subsampling; this file the order inside them): Y, Cb and Cr in packed
 * 4:2:2, the chroma order of the semi-planar and planar formats, the RGB
 * byte orders (the X byte of the 32-bit formats is 0xff) and RGB565's bits.
 * The test pattern (tpg.c) writes every output line through them, from a
 * planar intermediate. The converter (convert.c) has libyuv move its
 * pixels and asks here only which formats put Cr first.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Whether @fourcc's chroma comes Cr first: in its planes (NV21 NV61 YV12)
 * or in its pixel pairs (YVYU).
 */
bool v4l2cuse_pack_cr_first(uint32_t fourcc);

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
