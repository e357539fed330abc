/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Test helpers: read one pixel of a frame in any raw format we produce, and
 * compute reference colours independently of sources/tpg.c.
 */

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <linux/videodev2.h>

struct px {
	int y, cb, cr;		/* Y'CbCr formats; GREY: y */
	int r, g, b;		/* RGB formats */
};

static const uint32_t px_raw_formats[] = {
	V4L2_PIX_FMT_YUYV, V4L2_PIX_FMT_UYVY, V4L2_PIX_FMT_YVYU,
	V4L2_PIX_FMT_NV12, V4L2_PIX_FMT_NV21, V4L2_PIX_FMT_YUV420,
	V4L2_PIX_FMT_YVU420, V4L2_PIX_FMT_RGB24, V4L2_PIX_FMT_BGR24,
	V4L2_PIX_FMT_XRGB32, V4L2_PIX_FMT_XBGR32, V4L2_PIX_FMT_RGB565,
	V4L2_PIX_FMT_GREY, V4L2_PIX_FMT_YUV422P,
};

static inline bool
px_is_yuv(uint32_t f)
{
	switch (f) {
	case V4L2_PIX_FMT_YUYV: case V4L2_PIX_FMT_UYVY: case V4L2_PIX_FMT_YVYU:
	case V4L2_PIX_FMT_NV12: case V4L2_PIX_FMT_NV21: case V4L2_PIX_FMT_YUV420:
	case V4L2_PIX_FMT_YVU420: case V4L2_PIX_FMT_YUV422P:
		return true;
	default:
		return false;
	}
}

static inline bool
px_is_rgb(uint32_t f)
{
	return !px_is_yuv(f) && f != V4L2_PIX_FMT_GREY;
}

static inline size_t
px_frame_size(uint32_t f, uint32_t w, uint32_t h)
{
	switch (f) {
	case V4L2_PIX_FMT_NV12: case V4L2_PIX_FMT_NV21: case V4L2_PIX_FMT_YUV420:
	case V4L2_PIX_FMT_YVU420:
		return (size_t)w * h * 3 / 2;
	case V4L2_PIX_FMT_YUYV: case V4L2_PIX_FMT_UYVY: case V4L2_PIX_FMT_YVYU:
	case V4L2_PIX_FMT_RGB565: case V4L2_PIX_FMT_YUV422P:
		return (size_t)w * h * 2;
	case V4L2_PIX_FMT_RGB24: case V4L2_PIX_FMT_BGR24:
		return (size_t)w * h * 3;
	case V4L2_PIX_FMT_XRGB32: case V4L2_PIX_FMT_XBGR32:
		return (size_t)w * h * 4;
	default:
		return (size_t)w * h;
	}
}

/* The packed formats: where a pixel's components are. */
static const struct px_packed {
	uint32_t fourcc;
	unsigned int bpp;	/* bytes a pixel */
	bool yuv;		/* 4:2:2: Y (of the pair's first pixel), Cb, Cr
				 * in a 4-byte pair of pixels; else R, G, B */
	unsigned int off[3];
} px_packed_layouts[] = {
	{ V4L2_PIX_FMT_YUYV, 2, true, { 0, 1, 3 } },
	{ V4L2_PIX_FMT_UYVY, 2, true, { 1, 0, 2 } },
	{ V4L2_PIX_FMT_YVYU, 2, true, { 0, 3, 1 } },
	{ V4L2_PIX_FMT_RGB24, 3, false, { 0, 1, 2 } },
	{ V4L2_PIX_FMT_BGR24, 3, false, { 2, 1, 0 } },
	{ V4L2_PIX_FMT_XRGB32, 4, false, { 1, 2, 3 } },
	{ V4L2_PIX_FMT_XBGR32, 4, false, { 2, 1, 0 } },
};

static inline struct px
px_read_packed(const struct px_packed *l, const uint8_t *buf, uint32_t w, uint32_t x, uint32_t y)
{
	struct px p = { 0 };
	const uint8_t *b;

	if (l->yuv) {
		b = buf + ((size_t)y * w + (x & ~1u)) * l->bpp;
		p.y = b[l->off[0] + (x & 1) * 2];
		p.cb = b[l->off[1]];
		p.cr = b[l->off[2]];
	} else {
		b = buf + ((size_t)y * w + x) * l->bpp;
		p.r = b[l->off[0]];
		p.g = b[l->off[1]];
		p.b = b[l->off[2]];
	}
	return p;
}

static inline struct px
px_read(uint32_t f, const uint8_t *buf, uint32_t w, uint32_t h, uint32_t x, uint32_t y)
{
	struct px p = { 0 };
	size_t luma = (size_t)w * h;
	const uint8_t *b;

	for (size_t i = 0; i < sizeof(px_packed_layouts) / sizeof(px_packed_layouts[0]); i++) {
		if (px_packed_layouts[i].fourcc == f)
			return px_read_packed(&px_packed_layouts[i], buf, w, x, y);
	}
	switch (f) {
	case V4L2_PIX_FMT_NV12:
	case V4L2_PIX_FMT_NV21:
		p.y = buf[(size_t)y * w + x];
		b = buf + luma + (size_t)(y / 2) * w + (x & ~1u);
		p.cb = b[f == V4L2_PIX_FMT_NV21];
		p.cr = b[f == V4L2_PIX_FMT_NV12];
		break;
	case V4L2_PIX_FMT_YUV420:
	case V4L2_PIX_FMT_YVU420: {
		size_t q = luma / 4, o = (size_t)(y / 2) * (w / 2) + x / 2;
		const uint8_t *u = buf + luma + (f == V4L2_PIX_FMT_YVU420 ? q : 0);
		const uint8_t *v = buf + luma + (f == V4L2_PIX_FMT_YVU420 ? 0 : q);

		p.y = buf[(size_t)y * w + x];
		p.cb = u[o];
		p.cr = v[o];
		break;
	}
	case V4L2_PIX_FMT_YUV422P: {
		size_t q = luma / 2, o = (size_t)y * (w / 2) + x / 2;

		p.y = buf[(size_t)y * w + x];
		p.cb = buf[luma + o];
		p.cr = buf[luma + q + o];
		break;
	}
	case V4L2_PIX_FMT_RGB565: {
		unsigned int v;

		b = buf + ((size_t)y * w + x) * 2;
		v = b[0] | b[1] << 8;
		p.r = (v >> 11) << 3; p.g = ((v >> 5) & 63) << 2; p.b = (v & 31) << 3;
		break;
	}
	case V4L2_PIX_FMT_GREY:
		p.y = buf[(size_t)y * w + x];
		break;
	}
	return p;
}

/*
 * Reference value of R'G'B' (0..255 8-bit code values) in format @f:
 * BT.601 (or 709 when @hd) limited range for Y'CbCr (full range when
 * @full), full-range BT.601 luma for GREY, RGB565 truncated.
 */
static inline struct px
px_expect(uint32_t f, bool hd, bool full, double r8, double g8, double b8)
{
	struct px p = { 0 };
	double r = r8 / 255, g = g8 / 255, b = b8 / 255;
	double kr = hd ? 0.2126 : 0.299, kb = hd ? 0.0722 : 0.114;
	double y = kr * r + (1 - kr - kb) * g + kb * b;

	if (f == V4L2_PIX_FMT_GREY) {
		p.y = (int)lround(255 * (0.299 * r + 0.587 * g + 0.114 * b));
	} else if (px_is_yuv(f)) {
		p.y = (int)lround((full ? 0 : 16) + (full ? 255 : 219) * y);
		p.cb = (int)lround(128 + (full ? 255 : 224) * (b - y) / (2 * (1 - kb)));
		p.cr = (int)lround(128 + (full ? 255 : 224) * (r - y) / (2 * (1 - kr)));
	} else {
		p.r = (int)lround(r8);
		p.g = (int)lround(g8);
		p.b = (int)lround(b8);
		if (f == V4L2_PIX_FMT_RGB565) {
			p.r &= ~7; p.g &= ~3; p.b &= ~7;
		}
	}
	return p;
}

static inline bool
px_near(struct px a, struct px b, int tol)
{
	return abs(a.y - b.y) <= tol && abs(a.cb - b.cb) <= tol && abs(a.cr - b.cr) <= tol &&
	       abs(a.r - b.r) <= tol && abs(a.g - b.g) <= tol && abs(a.b - b.b) <= tol;
}

static inline bool
px_equal(struct px a, struct px b)
{
	return px_near(a, b, 0);
}

/* The brightness-like channel: Y' or, for RGB, G. */
static inline int
px_level(uint32_t f, struct px p)
{
	return px_is_rgb(f) ? (p.r + p.g + p.b) / 3 : p.y;
}

static inline const char *
px_fourcc(uint32_t f)
{
	static char s[5];

	for (int i = 0; i < 4; i++)
		s[i] = (char)((f >> (8 * i)) & 0x7f);
	s[4] = 0;
	return s;
}
