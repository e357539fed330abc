/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Pixel packers (pack.h).
 */

#include "config.h"

#include <string.h>

#include <linux/videodev2.h>

#include "util/macros.h"
#include "v4l2cuse/format.h"
#include "pack.h"

/*
 * Where the components go in the packed formats: for 4:2:2 the bytes of
 * Y0 Cb Y1 Cr in a pixel pair, for RGB those of R G B (and X, set to 0xff,
 * in the 32-bit ones) in a pixel. How many bytes: format.c's bpp.
 */
static const struct {
	uint32_t fourcc;
	uint8_t pos[4];
} pack_orders[] = {
	{ V4L2_PIX_FMT_YUYV, { 0, 1, 2, 3 } },
	{ V4L2_PIX_FMT_UYVY, { 1, 0, 3, 2 } },
	{ V4L2_PIX_FMT_YVYU, { 0, 3, 2, 1 } },
	{ V4L2_PIX_FMT_RGB24, { 0, 1, 2, 0 } },
	{ V4L2_PIX_FMT_BGR24, { 2, 1, 0, 0 } },
	{ V4L2_PIX_FMT_XRGB32, { 1, 2, 3, 0 } },
	{ V4L2_PIX_FMT_XBGR32, { 2, 1, 0, 3 } },
};

static const uint8_t *
pack_pos(uint32_t fourcc)
{
	for (size_t i = 0; i < ARRAY_SIZE(pack_orders); i++) {
		if (pack_orders[i].fourcc == fourcc)
			return pack_orders[i].pos;
	}
	return NULL;
}

bool
v4l2cuse_pack_422_order(uint32_t fourcc, struct v4l2cuse_pack_order *ret)
{
	const struct v4l2cuse_format_info *fi = v4l2cuse_format_lookup(fourcc);
	const uint8_t *pos = pack_pos(fourcc);

	if (!pos || !fi->yuv)
		return false;
	*ret = (struct v4l2cuse_pack_order){ .y0 = pos[0], .cb = pos[1], .y1 = pos[2],
					     .cr = pos[3] };
	return true;
}

/* Semi-planar and planar formats whose chroma comes Cr first. */
static bool
pack_cr_first(uint32_t fourcc)
{
	return fourcc == V4L2_PIX_FMT_NV21 || fourcc == V4L2_PIX_FMT_NV61 ||
	       fourcc == V4L2_PIX_FMT_YVU420;
}

void
v4l2cuse_pack_yuv_line(uint32_t fourcc, const uint8_t *y, const uint8_t *cb, const uint8_t *cr,
		       size_t width, uint8_t *d0, uint8_t *d1, uint8_t *d2)
{
	struct v4l2cuse_pack_order o;
	size_t cw = width / 2;

	if (v4l2cuse_pack_422_order(fourcc, &o)) {
		for (size_t x = 0; x < cw; x++, d0 += 4) {
			d0[o.y0] = y[2 * x];
			d0[o.y1] = y[2 * x + 1];
			d0[o.cb] = cb[x];
			d0[o.cr] = cr[x];
		}
		return;
	}
	memcpy(d0, y, width);
	if (!d1 || fourcc == V4L2_PIX_FMT_GREY)
		return;
	if (pack_cr_first(fourcc)) {
		const uint8_t *t = cb;

		cb = cr;
		cr = t;
	}
	if (v4l2cuse_format_lookup(fourcc)->n_planes == 2) {	/* NV: interleaved */
		for (size_t x = 0; x < cw; x++) {
			d1[2 * x] = cb[x];
			d1[2 * x + 1] = cr[x];
		}
		return;
	}
	memcpy(d1, cb, cw);
	memcpy(d2, cr, cw);
}

void
v4l2cuse_pack_rgb_line(uint32_t fourcc, const uint8_t *rgb, size_t width, uint8_t *d0)
{
	const uint8_t *pos = pack_pos(fourcc);
	const uint8_t *s = rgb;
	size_t bytes;

	if (fourcc == V4L2_PIX_FMT_RGB24) {
		memcpy(d0, rgb, width * 3);
	} else if (fourcc == V4L2_PIX_FMT_RGB565) {
		/* Little-endian 16 bits: rrrrrggg gggbbbbb. */
		for (size_t x = 0; x < width; x++, s += 3, d0 += 2) {
			uint16_t v = (uint16_t)((s[0] >> 3) << 11 | (s[1] >> 2) << 5 | (s[2] >> 3));

			d0[0] = (uint8_t)(v & 0xff);
			d0[1] = (uint8_t)(v >> 8);
		}
	} else if (pos) {
		bytes = v4l2cuse_format_lookup(fourcc)->bpp[0] / 8;
		for (size_t x = 0; x < width; x++, s += 3, d0 += bytes) {
			if (bytes == 4)
				d0[pos[3]] = 0xff;
			d0[pos[0]] = s[0];
			d0[pos[1]] = s[1];
			d0[pos[2]] = s[2];
		}
	}
}

void
v4l2cuse_unpack_rgb_line(uint32_t fourcc, const uint8_t *s, size_t width, uint8_t *rgb)
{
	const uint8_t *pos = pack_pos(fourcc);
	size_t bytes;

	if (fourcc == V4L2_PIX_FMT_RGB565) {
		for (size_t x = 0; x < width; x++, s += 2, rgb += 3) {
			uint16_t v = (uint16_t)(s[0] | s[1] << 8);

			rgb[0] = (uint8_t)((v >> 8) & 0xf8);
			rgb[1] = (uint8_t)((v >> 3) & 0xfc);
			rgb[2] = (uint8_t)((v << 3) & 0xf8);
		}
	} else if (pos) {
		bytes = v4l2cuse_format_lookup(fourcc)->bpp[0] / 8;
		for (size_t x = 0; x < width; x++, s += bytes, rgb += 3) {
			rgb[0] = s[pos[0]];
			rgb[1] = s[pos[1]];
			rgb[2] = s[pos[2]];
		}
	}
}

void
v4l2cuse_unpack_yuv_line(uint32_t fourcc, const uint8_t *s, size_t width, uint8_t *y,
			 uint8_t *cb, uint8_t *cr)
{
	struct v4l2cuse_pack_order o;
	size_t cw = width / 2;

	if (v4l2cuse_pack_422_order(fourcc, &o)) {
		for (size_t x = 0; x < cw; x++, s += 4) {
			y[2 * x] = s[o.y0];
			y[2 * x + 1] = s[o.y1];
			cb[x] = s[o.cb];
			cr[x] = s[o.cr];
		}
		return;
	}
	if (pack_cr_first(fourcc)) {
		uint8_t *t = cb;

		cb = cr;
		cr = t;
	}
	for (size_t x = 0; x < cw; x++) {
		cb[x] = s[2 * x];
		cr[x] = s[2 * x + 1];
	}
}
