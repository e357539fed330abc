/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The "pattern" source through the source ABI: enumeration, controls,
 * overlay, motion, MJPEG and error injection (sources/testpattern.c).
 */

#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>

#include "v4l2cuse/format.h"
#include "v4l2cuse/source.h"
#include "jpeg.h"
#include "tpg.h"
#include "test-source-util.h"
#include "test-tpg-pixels.h"
#include "test-main.h"

/* produce() into a fresh buffer; returns its result, *ret_buf is g_free'd */
static int
produce(struct v4l2cuse_source *src, const struct v4l2_pix_format *pix, uint32_t seq,
	uint64_t ts, uint8_t **ret_buf, struct v4l2cuse_frame *ret_frame)
{
	struct v4l2cuse_frame f = { 0 };
	int r;

	f.length = pix->sizeimage;
	f.data = g_malloc0(f.length);
	f.fmt = pix;
	f.sequence = seq;
	f.timestamp_ns = ts;
	r = src->ops->produce(src, &f);
	*ret_buf = f.data;
	if (ret_frame)
		*ret_frame = f;
	return r;
}

static uint8_t *
produce_ok(struct v4l2cuse_source *src, const struct v4l2_pix_format *pix, uint32_t seq)
{
	struct v4l2cuse_frame f;
	uint8_t *buf;

	g_assert_cmpint(produce(src, pix, seq, 0, &buf, &f), ==, 0);
	if (pix->pixelformat != V4L2_PIX_FMT_MJPEG)
		g_assert_cmpuint(f.bytesused, ==, pix->sizeimage);
	g_assert_false(f.error);
	return buf;
}

V4L2CUSE_TEST("/testpattern/enum", test_enum)
{
	static const uint32_t order[] = {
		V4L2_PIX_FMT_YUYV, V4L2_PIX_FMT_UYVY, V4L2_PIX_FMT_YVYU, V4L2_PIX_FMT_NV12,
		V4L2_PIX_FMT_NV21, V4L2_PIX_FMT_YUV420, V4L2_PIX_FMT_YVU420, V4L2_PIX_FMT_RGB24,
		V4L2_PIX_FMT_BGR24, V4L2_PIX_FMT_XRGB32, V4L2_PIX_FMT_XBGR32,
		V4L2_PIX_FMT_RGB565, V4L2_PIX_FMT_GREY, V4L2_PIX_FMT_MJPEG,
	};
	static const uint32_t sizes[][2] = { { 320, 240 }, { 640, 480 }, { 1280, 720 },
					     { 1920, 1080 } };
	struct v4l2cuse_source *src = ts_make("pattern");
	struct v4l2_fract fr;
	uint32_t fcc, w, h;

	for (unsigned int i = 0; i < G_N_ELEMENTS(order); i++) {
		g_assert_cmpint(src->ops->enum_format(src, i, &fcc), ==, 0);
		g_assert_cmpuint(fcc, ==, order[i]);
		g_assert_nonnull(v4l2cuse_format_info(fcc));
		for (unsigned int s = 0; s < 4; s++) {
			g_assert_cmpint(src->ops->enum_framesize(src, fcc, s, &w, &h), ==, 0);
			g_assert_cmpuint(w, ==, sizes[s][0]);
			g_assert_cmpuint(h, ==, sizes[s][1]);
			g_assert_cmpint(src->ops->enum_frameinterval(src, fcc, w, h, 0, &fr), ==, 0);
			g_assert_cmpuint(fr.numerator, ==, 1);
			g_assert_cmpuint(fr.denominator, ==, 30);
			g_assert_cmpint(src->ops->enum_frameinterval(src, fcc, w, h, 1, &fr), ==, 0);
			g_assert_cmpuint(fr.denominator, ==, 25);
			g_assert_cmpint(src->ops->enum_frameinterval(src, fcc, w, h, 2, &fr), ==, 0);
			g_assert_cmpuint(fr.denominator, ==, 15);
			g_assert_cmpint(src->ops->enum_frameinterval(src, fcc, w, h, 3, &fr), ==,
					-EINVAL);
			g_assert_cmpint(src->ops->enum_frameinterval(src, fcc, w + 1, h, 0, &fr),
					==, -EINVAL);
		}
		g_assert_cmpint(src->ops->enum_framesize(src, fcc, 4, &w, &h), ==, -EINVAL);
	}
	g_assert_cmpint(src->ops->enum_format(src, G_N_ELEMENTS(order), &fcc), ==, -EINVAL);
	g_assert_cmpint(src->ops->enum_framesize(src, V4L2_PIX_FMT_H264, 0, &w, &h), ==, -EINVAL);
	g_assert_cmpint(v4l2cuse_source_wake_fd(src), ==, -1);
	v4l2cuse_source_destroy(src);

	src = ts_make("pattern,sizes=64x48,fps=30000/1001+5,formats=GREY+MJPG");
	ts_assert_format(src, 0, V4L2_PIX_FMT_GREY);
	ts_assert_format(src, 1, V4L2_PIX_FMT_MJPEG);
	g_assert_cmpint(src->ops->enum_format(src, 2, &fcc), ==, -EINVAL);
	ts_assert_size(src, V4L2_PIX_FMT_MJPEG, 0, 64, 48);
	ts_assert_interval(src, V4L2_PIX_FMT_MJPEG, 64, 48, 0, 1001, 30000);
	ts_assert_interval(src, V4L2_PIX_FMT_MJPEG, 64, 48, 1, 1, 5);
	v4l2cuse_source_destroy(src);
}

V4L2CUSE_TEST("/testpattern/control-table", test_control_table)
{
	struct v4l2cuse_source *src = ts_make("pattern:smpte");
	const struct v4l2cuse_control *c;
	uint32_t prev = 0;
	int64_t v;
	unsigned int n;

	for (n = 0; (c = v4l2cuse_source_control(src, n)); n++) {
		g_assert_cmpuint(c->id, >, prev);	/* NEXT_CTRL order */
		prev = c->id;
		g_assert_nonnull(c->name);
		g_assert_cmpint(c->minimum, <=, c->default_value);
		g_assert_cmpint(c->default_value, <=, c->maximum);
		g_assert_cmpuint(c->step, ==, 1);
		g_assert_cmpint(v4l2cuse_source_get_control(src, c->id, &v), ==, 0);
		g_assert_cmpint(v, ==, c->default_value);
		if (c->type == V4L2_CTRL_TYPE_MENU) {
			g_assert_cmpuint(c->id, ==, V4L2CUSE_CID_TEST_PATTERN);
			g_assert_cmpuint(c->id & 0xffff, >=, 0x1000);	/* driver-private */
			g_assert_cmpuint(V4L2_CTRL_ID2WHICH(c->id), ==, V4L2_CTRL_CLASS_USER);
			g_assert_cmpint(c->maximum, ==, 22);
			g_assert_cmpstr(c->menu[0], ==, "75% Colorbar");
			g_assert_cmpstr(c->menu[22], ==, "SMPTE RP 219 Colorbar");
			g_assert_cmpint(c->default_value, ==, 22);	/* from "pattern:smpte" */
		}
		if (c->type == V4L2_CTRL_TYPE_BOOLEAN)
			g_assert_cmpint(c->maximum, ==, 1);
	}
	g_assert_cmpuint(n, ==, 7);
	g_assert_cmpuint(v4l2cuse_source_control(src, 0)->id, ==, V4L2_CID_BRIGHTNESS);
	g_assert_cmpuint(v4l2cuse_source_control(src, 3)->id, ==, V4L2_CID_HUE);
	g_assert_cmpint(v4l2cuse_source_control(src, 3)->minimum, ==, -128);
	g_assert_cmpuint(v4l2cuse_source_control(src, 5)->id, ==, V4L2_CID_VFLIP);

	g_assert_cmpint(v4l2cuse_source_get_control(src, V4L2_CID_GAIN, &v), ==, -EINVAL);
	g_assert_cmpint(v4l2cuse_source_set_control(src, V4L2_CID_GAIN, 1), ==, -EINVAL);
	g_assert_cmpint(v4l2cuse_source_set_control(src, V4L2_CID_BRIGHTNESS, 256), ==, -ERANGE);
	g_assert_cmpint(v4l2cuse_source_set_control(src, V4L2_CID_BRIGHTNESS, 7), ==, 0);
	g_assert_cmpint(v4l2cuse_source_get_control(src, V4L2_CID_BRIGHTNESS, &v), ==, 0);
	g_assert_cmpint(v, ==, 7);
	v4l2cuse_source_destroy(src);

	/* option-given initial values become the defaults */
	src = ts_make("pattern,brightness=10,hflip=1");
	g_assert_cmpint(v4l2cuse_source_control(src, 0)->default_value, ==, 10);
	g_assert_cmpint(v4l2cuse_source_control(src, 4)->default_value, ==, 1);
	v4l2cuse_source_destroy(src);
}

static bool
outside_equal(const struct v4l2_pix_format *pix, const uint8_t *a, const uint8_t *b,
	      const struct v4l2_rect *r, unsigned int *inside_diff)
{
	*inside_diff = 0;
	for (uint32_t y = 0; y < pix->height; y++) {
		for (uint32_t x = 0; x < pix->width; x++) {
			struct px pa = px_read(pix->pixelformat, a, pix->width, pix->height, x, y);
			struct px pb = px_read(pix->pixelformat, b, pix->width, pix->height, x, y);
			bool inside = x < r->width && y < r->height;

			if (px_equal(pa, pb))
				continue;
			if (!inside)
				return false;
			(*inside_diff)++;
		}
	}
	return true;
}

V4L2CUSE_TEST("/testpattern/overlay-static", test_overlay_and_static)
{
	for (unsigned int i = 0; ; i++) {
		struct v4l2cuse_source *src = ts_make("pattern");
		struct v4l2_pix_format pix;
		struct v4l2_rect r;
		uint32_t fcc;
		uint8_t *a, *b;
		unsigned int diff;

		if (src->ops->enum_format(src, i, &fcc) < 0) {
			v4l2cuse_source_destroy(src);
			break;
		}
		if (fcc == V4L2_PIX_FMT_MJPEG) {
			v4l2cuse_source_destroy(src);
			continue;
		}
		pix = ts_start(src, fcc, 640, 480, 1, 30);
		g_assert_cmpint(v4l2cuse_testpattern_overlay_rect(src, 640, 480, &r), ==, 0);
		g_assert_cmpint(r.left, ==, 0);
		g_assert_cmpint(r.top, ==, 0);
		g_assert_cmpuint(r.width, ==, 296);
		g_assert_cmpuint(r.height, ==, 72);
		a = produce_ok(src, &pix, 41);
		b = produce_ok(src, &pix, 42);
		g_assert_true(outside_equal(&pix, a, b, &r, &diff));
		g_assert_cmpuint(diff, >, 10);	/* the counter changed */
		g_free(a);
		g_free(b);
		v4l2cuse_source_destroy(src);
	}

	/* overlay off: identical frames, empty rectangle */
	struct v4l2cuse_source *src = ts_make("pattern,overlay=0");
	struct v4l2_pix_format pix = ts_start(src, V4L2_PIX_FMT_YUYV, 640, 480, 1, 30);
	struct v4l2_rect r;
	uint8_t *a = produce_ok(src, &pix, 1), *b = produce_ok(src, &pix, 2);

	g_assert_cmpint(v4l2cuse_testpattern_overlay_rect(src, 640, 480, &r), ==, 0);
	g_assert_cmpuint(r.width, ==, 0);
	g_assert_cmpuint(r.height, ==, 0);
	g_assert_true(memcmp(a, b, pix.sizeimage) == 0);
	g_free(a);
	g_free(b);
	v4l2cuse_source_destroy(src);

	/* fewer lines, no label */
	src = ts_make("pattern,overlay=counter+label,label=");
	g_assert_cmpint(v4l2cuse_testpattern_overlay_rect(src, 640, 480, &r), ==, 0);
	g_assert_cmpuint(r.height, ==, 8 + 16);
	v4l2cuse_source_destroy(src);
	src = ts_make("pattern,overlay=time+format");
	g_assert_cmpint(v4l2cuse_testpattern_overlay_rect(src, 640, 480, &r), ==, 0);
	g_assert_cmpuint(r.height, ==, 8 + 32);
	g_assert_cmpint(v4l2cuse_testpattern_overlay_rect(NULL, 640, 480, &r), ==, -EINVAL);
	v4l2cuse_source_destroy(src);
}

V4L2CUSE_TEST("/testpattern/pinned-values", test_pinned_values)
{
	static const uint8_t sd[8][3] = {
		{ 180, 128, 128 }, { 161, 44, 142 }, { 131, 156, 44 }, { 112, 72, 58 },
		{ 84, 184, 198 }, { 65, 100, 212 }, { 35, 212, 114 }, { 16, 128, 128 },
	};
	struct v4l2cuse_source *src = ts_make("pattern");
	struct v4l2_pix_format pix = ts_start(src, V4L2_PIX_FMT_YUYV, 640, 480, 1, 30);
	uint8_t *buf = produce_ok(src, &pix, 0);

	g_assert_cmpuint(pix.bytesperline, ==, 1280);
	g_assert_cmpuint(pix.sizeimage, ==, 614400);
	for (uint32_t y = 72; y < 480; y += 13) {
		for (uint32_t x = 0; x < 640; x++) {
			const uint8_t *m = buf + y * 1280 + (x & ~1u) * 2;

			g_assert_cmpuint(m[(x & 1) * 2], ==, sd[x / 80][0]);
			g_assert_cmpuint(m[1], ==, sd[x / 80][1]);
			g_assert_cmpuint(m[3], ==, sd[x / 80][2]);
		}
	}
	g_free(buf);
	v4l2cuse_source_destroy(src);
}

V4L2CUSE_TEST("/testpattern/controls-change-pixels", test_controls_change_pixels)
{
	static const struct { uint32_t id; int64_t v; } changes[] = {
		{ V4L2_CID_BRIGHTNESS, 200 }, { V4L2_CID_CONTRAST, 30 },
		{ V4L2_CID_SATURATION, 0 }, { V4L2_CID_HUE, 64 }, { V4L2_CID_HFLIP, 1 },
		{ V4L2_CID_VFLIP, 1 }, { V4L2CUSE_CID_TEST_PATTERN, 3 },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(changes); i++) {
		/* vflip is invisible on vertical bars: use squares for it */
		struct v4l2cuse_source *src = ts_make(changes[i].id == V4L2_CID_VFLIP ?
						      "pattern:squares,overlay=0" : "pattern,overlay=0");
		struct v4l2_pix_format pix = ts_start(src, V4L2_PIX_FMT_YUYV, 320, 240, 1, 30);
		uint8_t *a = produce_ok(src, &pix, 0), *b;
		int64_t v;

		g_assert_cmpint(v4l2cuse_source_set_control(src, changes[i].id, changes[i].v), ==, 0);
		g_assert_cmpint(v4l2cuse_source_get_control(src, changes[i].id, &v), ==, 0);
		g_assert_cmpint(v, ==, changes[i].v);
		b = produce_ok(src, &pix, 1);
		if (memcmp(a, b, pix.sizeimage) == 0)
			g_error("control %08x had no effect", changes[i].id);
		if (changes[i].id == V4L2_CID_BRIGHTNESS)
			g_assert_cmpuint(b[20], >, a[20] + 40);	/* Y of the white bar */
		if (changes[i].id == V4L2_CID_HFLIP)	/* black bar now on the left */
			g_assert_cmpuint(b[100 * 640 + 0], ==, 16);
		g_free(a);
		g_free(b);
		v4l2cuse_source_destroy(src);
	}
}

V4L2CUSE_TEST("/testpattern/hscroll", test_hscroll)
{
	struct v4l2cuse_source *src = ts_make("pattern:ramp,hscroll=2,overlay=0");
	struct v4l2_pix_format pix = ts_start(src, V4L2_PIX_FMT_RGB24, 320, 240, 1, 30);
	uint8_t *a = produce_ok(src, &pix, 0), *b = produce_ok(src, &pix, 1);

	for (uint32_t x = 0; x < 320; x++)
		g_assert_cmpuint(b[100 * 960 + x * 3], ==, a[100 * 960 + ((x + 2) % 320) * 3]);
	g_free(a);
	g_free(b);
	v4l2cuse_source_destroy(src);
}

/* --- MJPEG ---------------------------------------------------------------- */

/* Decode to RGB (rgb=true) or Y'CbCr; returns a w*h*3 buffer or NULL. */
static uint8_t *
jpeg_decode(const uint8_t *data, size_t len, bool rgb, uint32_t *ret_w, uint32_t *ret_h)
{
	struct jpeg_decompress_struct d;
	struct v4l2cuse_jpeg_err err;
	uint8_t *volatile out = NULL;

	d.err = v4l2cuse_jpeg_err_init(&err);
	if (setjmp(err.jb)) {
		jpeg_destroy_decompress(&d);
		g_free(out);
		return NULL;
	}
	jpeg_create_decompress(&d);
	jpeg_mem_src(&d, data, len);
	jpeg_read_header(&d, TRUE);
	g_assert_cmpint(d.jpeg_color_space, ==, JCS_YCbCr);
	g_assert_cmpint(d.comp_info[0].h_samp_factor, ==, 2);
	g_assert_cmpint(d.comp_info[0].v_samp_factor, ==, 1);
	d.out_color_space = rgb ? JCS_RGB : JCS_YCbCr;
	jpeg_start_decompress(&d);
	out = g_malloc((size_t)d.output_width * d.output_height * 3);
	while (d.output_scanline < d.output_height) {
		JSAMPROW row = out + (size_t)d.output_scanline * d.output_width * 3;

		jpeg_read_scanlines(&d, &row, 1);
	}
	*ret_w = d.output_width;
	*ret_h = d.output_height;
	jpeg_finish_decompress(&d);
	jpeg_destroy_decompress(&d);
	return out;
}

V4L2CUSE_TEST("/testpattern/mjpeg", test_mjpeg)
{
	for (int pat = 0; pat <= 22; pat++) {
		g_autofree char *spec = g_strdup_printf("pattern:%d", pat);
		struct v4l2cuse_source *src = ts_make(spec), *ref = ts_make(spec);
		struct v4l2_pix_format pix = ts_start(src, V4L2_PIX_FMT_MJPEG, 640, 480, 1, 30);
		struct v4l2_pix_format rpix = ts_start(ref, V4L2_PIX_FMT_RGB24, 640, 480, 1, 30);
		struct v4l2_pix_format ypix;
		struct v4l2cuse_frame f;
		uint8_t *jpg, *rgb, *dec, *ycc, *yuyv;
		struct v4l2cuse_source *yref;
		uint32_t w, h;
		unsigned int bad = 0, n = 0;

		g_assert_cmpint(produce(src, &pix, 3, 0, &jpg, &f), ==, 0);
		g_assert_cmpuint(f.bytesused, >, 600);
		g_assert_cmpuint(f.bytesused, <=, pix.sizeimage);
		g_assert_cmpuint(jpg[0], ==, 0xff);
		g_assert_cmpuint(jpg[1], ==, 0xd8);
		g_assert_cmpuint(jpg[f.bytesused - 2], ==, 0xff);
		g_assert_cmpuint(jpg[f.bytesused - 1], ==, 0xd9);
		dec = jpeg_decode(jpg, f.bytesused, true, &w, &h);
		g_assert_nonnull(dec);
		g_assert_cmpuint(w, ==, 640);
		g_assert_cmpuint(h, ==, 480);
		rgb = produce_ok(ref, &rpix, 3);
		if (pat != 21) {	/* noise differs per frame and defeats JPEG */
			/* near the RGB24 rendering, away from edges */
			for (uint32_t y = 80; y < 480; y += 11) {
				for (uint32_t x = 0; x < 640; x += 7) {
					const uint8_t *p = dec + ((size_t)y * 640 + x) * 3;
					const uint8_t *q = rgb + ((size_t)y * 640 + x) * 3;
					int d = MAX(MAX(abs(p[0] - q[0]), abs(p[1] - q[1])),
						    abs(p[2] - q[2]));

					n++;
					bad += d > 24;
				}
			}
			/* high-frequency patterns (1x1 checkers, lines) blur; most
			 * pixels of the rest must be close */
			if (pat != 12 && pat != 14 && pat != 15 && pat != 16 && pat != 13 &&
			    pat != 11)
				g_assert_cmpuint(bad, <, n / 20);
		}
		g_free(dec);

		/* Y'CbCr: full range, i.e. the YUYV values expanded */
		if (pat == 0) {
			yref = ts_make(spec);
			ypix = ts_start(yref, V4L2_PIX_FMT_YUYV, 640, 480, 1, 30);
			yuyv = produce_ok(yref, &ypix, 3);
			ycc = jpeg_decode(jpg, f.bytesused, false, &w, &h);
			for (unsigned int bar = 0; bar < 8; bar++) {
				uint32_t x = bar * 80 + 40, y = 300;
				const uint8_t *p = ycc + ((size_t)y * 640 + x) * 3;
				const uint8_t *m = yuyv + y * 1280 + x * 2;
				int ey = (int)lround((m[0] - 16) * 255.0 / 219);
				int ecb = (int)lround(128 + (m[1] - 128) * 255.0 / 224);
				int ecr = (int)lround(128 + (m[3] - 128) * 255.0 / 224);

				g_assert_cmpint(abs(p[0] - ey), <=, 3);
				g_assert_cmpint(abs(p[1] - ecb), <=, 3);
				g_assert_cmpint(abs(p[2] - ecr), <=, 3);
			}
			g_free(ycc);
			g_free(yuyv);
			v4l2cuse_source_destroy(yref);
		}
		g_free(jpg);
		g_free(rgb);
		v4l2cuse_source_destroy(src);
		v4l2cuse_source_destroy(ref);
	}
}

V4L2CUSE_TEST("/testpattern/mjpeg-cache", test_mjpeg_cache)
{
	/*
	 * The row cache must be invisible: a stream that re-encodes only the
	 * overlay band produces exactly what a fresh full encode produces.
	 */
	static const char *const specs[] = {
		"pattern", "pattern:smpte,label=cache", "pattern:checkers16,overlay=counter",
		"pattern,overlay=0", "pattern,box=1", "pattern:ramp,hscroll=4",
	};
	static const uint32_t sizes[][2] = { { 640, 480 }, { 320, 240 }, { 1280, 720 } };

	for (size_t s = 0; s < G_N_ELEMENTS(specs); s++) {
		for (size_t z = 0; z < G_N_ELEMENTS(sizes); z++) {
			struct v4l2cuse_source *src = ts_make(specs[s]);
			struct v4l2_pix_format pix = ts_start(src, V4L2_PIX_FMT_MJPEG, sizes[z][0],
							      sizes[z][1], 1, 30);

			/* later frames put the box far from where it was cached */
			static const uint32_t seqs[] = { 0, 1, 2, 3, 50, 101, 137, 500 };

			for (size_t k = 0; k < G_N_ELEMENTS(seqs); k++) {
				struct v4l2cuse_source *fresh = ts_make(specs[s]);
				uint32_t seq = seqs[k];
				struct v4l2cuse_frame fa, fb;
				uint8_t *a, *b;

				ts_start(fresh, V4L2_PIX_FMT_MJPEG, sizes[z][0], sizes[z][1], 1, 30);
				g_assert_cmpint(produce(src, &pix, seq, 0, &a, &fa), ==, 0);
				g_assert_cmpint(produce(fresh, &pix, seq, 0, &b, &fb), ==, 0);
				g_assert_cmpuint(fa.bytesused, ==, fb.bytesused);
				g_assert_true(memcmp(a, b, fa.bytesused) == 0);
				g_free(a);
				g_free(b);
				v4l2cuse_source_destroy(fresh);
			}
			/* a control change invalidates the cache */
			{
				struct v4l2cuse_source *fresh = ts_make(specs[s]);
				struct v4l2cuse_frame fa, fb;
				uint8_t *a, *b;

				g_assert_cmpint(v4l2cuse_source_set_control(src, V4L2_CID_BRIGHTNESS,
									    40), ==, 0);
				g_assert_cmpint(v4l2cuse_source_set_control(fresh, V4L2_CID_BRIGHTNESS,
									    40), ==, 0);
				ts_start(fresh, V4L2_PIX_FMT_MJPEG, sizes[z][0], sizes[z][1], 1, 30);
				g_assert_cmpint(produce(src, &pix, 9, 0, &a, &fa), ==, 0);
				g_assert_cmpint(produce(fresh, &pix, 9, 0, &b, &fb), ==, 0);
				g_assert_cmpuint(fa.bytesused, ==, fb.bytesused);
				g_assert_true(memcmp(a, b, fa.bytesused) == 0);
				g_free(a);
				g_free(b);
				v4l2cuse_source_destroy(fresh);
			}
			v4l2cuse_source_destroy(src);
		}
	}
}

V4L2CUSE_TEST("/testpattern/mjpeg-noise-fits", test_mjpeg_noise_fits)
{
	/* the worst case for JPEG still fits sizeimage (quality drops if needed) */
	struct v4l2cuse_source *src = ts_make("pattern:noise,quality=100,sizes=64x48");
	struct v4l2_pix_format pix = ts_start(src, V4L2_PIX_FMT_MJPEG, 64, 48, 1, 30);

	for (uint32_t seq = 0; seq < 3; seq++) {
		struct v4l2cuse_frame f;
		uint8_t *buf;
		uint32_t w, h;
		uint8_t *dec;

		g_assert_cmpint(produce(src, &pix, seq, 0, &buf, &f), ==, 0);
		g_assert_cmpuint(f.bytesused, <=, pix.sizeimage);
		dec = jpeg_decode(buf, f.bytesused, true, &w, &h);
		g_assert_nonnull(dec);
		g_free(dec);
		g_free(buf);
	}
	v4l2cuse_source_destroy(src);
}

/* --- errors and injection ------------------------------------------------ */

V4L2CUSE_TEST("/testpattern/start-errors", test_start_errors)
{
	struct v4l2cuse_source *src = ts_make("pattern,formats=YUYV");
	struct v4l2_pix_format pix = { .pixelformat = V4L2_PIX_FMT_NV12, .width = 640,
				       .height = 480 };
	struct v4l2_fract iv = { 1, 30 };
	uint8_t *buf;

	g_assert_cmpint(src->ops->start(src, &pix, &iv), ==, -EINVAL);
	pix.pixelformat = V4L2_PIX_FMT_YUYV;
	pix.width = 642;
	g_assert_cmpint(src->ops->start(src, &pix, &iv), ==, -EINVAL);
	/* produce before start */
	pix.width = 640;
	g_assert_cmpint(v4l2cuse_format_fill(&pix), ==, 0);
	g_assert_cmpint(produce(src, &pix, 0, 0, &buf, NULL), ==, -EINVAL);
	g_free(buf);
	g_assert_cmpint(src->ops->start(src, &pix, NULL), ==, 0);	/* default interval */
	g_assert_cmpint(src->ops->start(src, &pix, &iv), ==, -EBUSY);
	/* a buffer that is too small */
	{
		struct v4l2cuse_frame f = { 0 };

		f.length = pix.sizeimage - 1;
		f.data = g_malloc(f.length);
		f.fmt = &pix;
		g_assert_cmpint(src->ops->produce(src, &f), ==, -EINVAL);
		g_free(f.data);
	}
	src->ops->stop(src);
	src->ops->stop(src);	/* twice is fine */
	g_assert_cmpint(src->ops->start(src, &pix, &iv), ==, 0);
	v4l2cuse_source_destroy(src);	/* destroys a started source */
}

V4L2CUSE_TEST("/testpattern/injection", test_injection)
{
	struct v4l2cuse_source *src;
	struct v4l2_pix_format pix = { .pixelformat = V4L2_PIX_FMT_GREY, .width = 320,
				       .height = 240 };
	struct v4l2_fract iv = { 1, 30 };
	struct v4l2cuse_frame f;
	uint8_t *buf;

	g_assert_cmpint(v4l2cuse_format_fill(&pix), ==, 0);

	/* fail_start=2: two failures, then success; nothing started on failure */
	src = ts_make("pattern,fail_start=2");
	g_assert_cmpint(src->ops->start(src, &pix, &iv), ==, -EIO);
	g_assert_cmpint(produce(src, &pix, 0, 0, &buf, NULL), ==, -EINVAL);
	g_free(buf);
	g_assert_cmpint(src->ops->start(src, &pix, &iv), ==, -EIO);
	g_assert_cmpint(src->ops->start(src, &pix, &iv), ==, 0);
	v4l2cuse_source_destroy(src);

	/* fail_produce_every=3 */
	src = ts_make("pattern,fail_produce_every=3");
	g_assert_cmpint(src->ops->start(src, &pix, &iv), ==, 0);
	for (uint32_t i = 1; i <= 9; i++) {
		int r = produce(src, &pix, i, 0, &buf, NULL);

		g_assert_cmpint(r, ==, i % 3 == 0 ? -EIO : 0);
		g_free(buf);
	}
	/* the count restarts with start() */
	src->ops->stop(src);
	g_assert_cmpint(src->ops->start(src, &pix, &iv), ==, 0);
	g_assert_cmpint(produce(src, &pix, 0, 0, &buf, NULL), ==, 0);
	g_free(buf);
	v4l2cuse_source_destroy(src);

	/* drop_every=2: -ENODATA, nothing written */
	src = ts_make("pattern,drop_every=2");
	g_assert_cmpint(src->ops->start(src, &pix, &iv), ==, 0);
	for (uint32_t i = 1; i <= 6; i++) {
		int r = produce(src, &pix, i, 0, &buf, &f);

		g_assert_cmpint(r, ==, i % 2 == 0 ? -ENODATA : 0);
		if (r == -ENODATA)
			g_assert_cmpuint(buf[pix.sizeimage - 1], ==, 0);
		g_free(buf);
	}
	v4l2cuse_source_destroy(src);

	/* error_flag_every=2: frames filled, every 2nd flagged */
	src = ts_make("pattern,error_flag_every=2");
	g_assert_cmpint(src->ops->start(src, &pix, &iv), ==, 0);
	for (uint32_t i = 1; i <= 6; i++) {
		g_assert_cmpint(produce(src, &pix, i, 0, &buf, &f), ==, 0);
		g_assert_cmpint(f.error, ==, i % 2 == 0);
		g_assert_cmpuint(f.bytesused, ==, pix.sizeimage);
		g_free(buf);
	}
	v4l2cuse_source_destroy(src);

	/* vanish_after=3: -ENODEV for good, start too */
	src = ts_make("pattern,vanish_after=3");
	g_assert_cmpint(src->ops->start(src, &pix, &iv), ==, 0);
	for (uint32_t i = 1; i <= 5; i++) {
		g_assert_cmpint(produce(src, &pix, i, 0, &buf, NULL), ==, i <= 3 ? 0 : -ENODEV);
		g_free(buf);
	}
	src->ops->stop(src);
	g_assert_cmpint(src->ops->start(src, &pix, &iv), ==, -ENODEV);
	v4l2cuse_source_destroy(src);
}

V4L2CUSE_TEST("/testpattern/time-overlay", test_time_overlay)
{
	/* timestamps drive the time line; frames differ only inside the rect */
	struct v4l2cuse_source *src = ts_make("pattern,overlay=time");
	struct v4l2_pix_format pix = ts_start(src, V4L2_PIX_FMT_RGB24, 320, 240, 1, 30);
	struct v4l2_rect r;
	uint8_t *a, *b, *c;
	unsigned int diff;

	g_assert_cmpint(produce(src, &pix, 0, 5000000000ull, &a, NULL), ==, 0);
	g_assert_cmpint(produce(src, &pix, 1, 5000000000ull + 33000000, &b, NULL), ==, 0);
	g_assert_cmpint(produce(src, &pix, 2, 5000000000ull + 33000000, &c, NULL), ==, 0);
	g_assert_cmpint(v4l2cuse_testpattern_overlay_rect(src, 320, 240, &r), ==, 0);
	g_assert_true(outside_equal(&pix, a, b, &r, &diff));
	g_assert_cmpuint(diff, >, 0);
	g_assert_true(memcmp(b, c, pix.sizeimage) == 0);	/* same time, no counter */
	g_free(a);
	g_free(b);
	g_free(c);
	v4l2cuse_source_destroy(src);
}

V4L2CUSE_TEST("/testpattern/overlay-text", test_overlay_text)
{
	/* the lines the overlay shows, drawn by a generator of our own */
	static const char *const lines[] = { "#0000000123", "01:02:03.456", "320x240 RGB3 30 fps",
					     "cam" };
	struct v4l2cuse_source *src = ts_make("pattern,label=cam");
	struct v4l2_pix_format pix = ts_start(src, V4L2_PIX_FMT_RGB24, 320, 240, 1, 30);
	const struct v4l2cuse_tpg_params def = V4L2CUSE_TPG_PARAMS_DEFAULT;
	struct v4l2cuse_tpg *t = v4l2cuse_tpg_new();
	uint64_t t0 = 5000000000ull;
	g_autofree uint8_t *ref = g_malloc(pix.sizeimage);
	uint8_t *a, *b;

	g_assert_cmpint(produce(src, &pix, 0, t0, &a, NULL), ==, 0);
	g_assert_cmpint(produce(src, &pix, 123, t0 + 3723456000000ull, &b, NULL), ==, 0);
	g_assert_cmpint(v4l2cuse_tpg_set_format(t, pix.pixelformat, pix.width, pix.height,
						pix.ycbcr_enc, pix.quantization), ==, 0);
	v4l2cuse_tpg_set_params(t, &def);
	v4l2cuse_tpg_fill(t, ref, 123, lines, G_N_ELEMENTS(lines));
	g_assert_true(memcmp(ref, b, pix.sizeimage) == 0);
	g_free(a);
	g_free(b);
	v4l2cuse_tpg_free(t);
	v4l2cuse_source_destroy(src);
}
