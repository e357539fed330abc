/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The pattern generator (sources/tpg.c): every pattern in every raw format,
 * checked by pixel values at known positions.
 */

#include "config.h"

#include <errno.h>
#include <string.h>

#include <glib.h>

#include "tpg.h"
#include "test-tpg-pixels.h"
#include "test-main.h"

/* R'G'B' code values */
#define W75 191, 191, 191
#define Y75 191, 191, 0
#define C75 0, 191, 191
#define G75 0, 191, 0
#define M75 191, 0, 191
#define R75 191, 0, 0
#define B75 0, 0, 191
#define WHT 255, 255, 255
#define YEL 255, 255, 0
#define CYN 0, 255, 255
#define GRN 0, 255, 0
#define MAG 255, 0, 255
#define RED 255, 0, 0
#define BLU 0, 0, 255
#define BLK 0, 0, 0

/* centre of SMPTE unit k (W/56) at 1280 wide */
#define UX(k) (((2 * (k) + 1) * 1280) / 112)

struct rgb {
	double r, g, b;
};

static const struct rgb bars75[8] = {
	{ W75 }, { Y75 }, { C75 }, { G75 }, { M75 }, { R75 }, { B75 }, { BLK },
};
static const struct rgb bars100[8] = {
	{ WHT }, { YEL }, { CYN }, { GRN }, { MAG }, { RED }, { BLU }, { BLK },
};
static const struct rgb barscsc[8] = {
	{ 191, 191, 191 }, { 191, 191, 50 }, { 50, 191, 191 }, { 50, 191, 50 },
	{ 191, 50, 191 }, { 191, 50, 50 }, { 50, 50, 191 }, { 50, 50, 50 },
};

struct frame {
	uint32_t fourcc, w, h;
	bool hd;
	uint8_t *buf;
	size_t size;
};

static struct frame
render_text(uint32_t f, uint32_t w, uint32_t h, const struct v4l2cuse_tpg_params *p, uint32_t n,
	    const char *const *text, unsigned int lines)
{
	struct v4l2cuse_tpg *t = v4l2cuse_tpg_new();
	struct frame fr = { f, w, h, h >= 720, NULL, 0 };
	uint32_t q = f == V4L2_PIX_FMT_YUV422P ? V4L2_QUANTIZATION_FULL_RANGE
					       : V4L2_QUANTIZATION_LIM_RANGE;

	/* 422P is the JPEG path: always full-range BT.601 */
	if (f == V4L2_PIX_FMT_YUV422P)
		fr.hd = false;
	g_assert_cmpint(v4l2cuse_tpg_set_format(t, f, w, h,
						fr.hd ? V4L2_YCBCR_ENC_709 : V4L2_YCBCR_ENC_601, q),
			==, 0);
	v4l2cuse_tpg_set_params(t, p);
	fr.size = v4l2cuse_tpg_frame_size(t);
	g_assert_cmpuint(fr.size, ==, px_frame_size(f, w, h));
	/* poison, so a pixel tpg forgets to write shows up */
	fr.buf = g_malloc(fr.size);
	memset(fr.buf, 0xa5, fr.size);
	v4l2cuse_tpg_fill(t, fr.buf, n, text, lines);
	v4l2cuse_tpg_free(t);
	return fr;
}

static struct frame
render(uint32_t f, uint32_t w, uint32_t h, const struct v4l2cuse_tpg_params *p, uint32_t n)
{
	return render_text(f, w, h, p, n, NULL, 0);
}

/* A frame of @pattern, every other parameter at its default. */
static struct frame
render_pattern(uint32_t f, uint32_t w, uint32_t h, enum v4l2cuse_tpg_pattern pattern)
{
	struct v4l2cuse_tpg_params p = V4L2CUSE_TPG_PARAMS_DEFAULT;

	p.pattern = pattern;
	return render(f, w, h, &p, 0);
}

static struct px
at(const struct frame *fr, uint32_t x, uint32_t y)
{
	return px_read(fr->fourcc, fr->buf, fr->w, fr->h, x, y);
}

static void
check_rgb(const struct frame *fr, uint32_t x, uint32_t y, struct rgb c, const char *what)
{
	bool full = fr->fourcc == V4L2_PIX_FMT_YUV422P;
	struct px e = px_expect(fr->fourcc, fr->hd, full, c.r, c.g, c.b);
	struct px a = at(fr, x, y);
	int tol = px_is_rgb(fr->fourcc) ? 0 : 1;

	if (!px_near(a, e, tol))
		g_error("%s %s %ux%u at (%u,%u): got Y%d Cb%d Cr%d R%d G%d B%d, "
			"expected Y%d Cb%d Cr%d R%d G%d B%d", what, px_fourcc(fr->fourcc),
			fr->w, fr->h, x, y, a.y, a.cb, a.cr, a.r, a.g, a.b, e.y, e.cb, e.cr,
			e.r, e.g, e.b);
}

static bool
is_white(const struct frame *fr, uint32_t x, uint32_t y)
{
	return px_level(fr->fourcc, at(fr, x, y)) > 128;
}

static void
free_frame(struct frame *fr)
{
	g_free(fr->buf);
	fr->buf = NULL;
}

V4L2CUSE_TEST("/tpg/bars", test_bars)
{
	static const struct { enum v4l2cuse_tpg_pattern pat; const struct rgb *c; } cases[] = {
		{ V4L2CUSE_TPG_PAT_75_COLORBAR, bars75 },
		{ V4L2CUSE_TPG_PAT_100_COLORBAR, bars100 },
		{ V4L2CUSE_TPG_PAT_CSC_COLORBAR, barscsc },
	};
	static const uint32_t sizes[][2] = { { 640, 480 }, { 1280, 720 }, { 320, 240 } };

	for (size_t c = 0; c < G_N_ELEMENTS(cases); c++) {
		for (size_t f = 0; f < G_N_ELEMENTS(px_raw_formats); f++) {
			for (size_t s = 0; s < G_N_ELEMENTS(sizes); s++) {
				struct v4l2cuse_tpg_params p = V4L2CUSE_TPG_PARAMS_DEFAULT;
				uint32_t w = sizes[s][0], h = sizes[s][1];
				struct frame fr;

				p.pattern = cases[c].pat;
				fr = render(px_raw_formats[f], w, h, &p, 0);
				for (unsigned int i = 0; i < 8; i++) {
					uint32_t x0 = i * w / 8, x1 = (i + 1) * w / 8 - 1;
					uint32_t xs[] = { x0, x0 + 1, (x0 + x1) / 2, x1 - 1, x1 };

					for (size_t k = 0; k < G_N_ELEMENTS(xs); k++) {
						check_rgb(&fr, xs[k], 0, cases[c].c[i], "bars");
						check_rgb(&fr, xs[k], h / 2, cases[c].c[i], "bars");
						check_rgb(&fr, xs[k], h - 1, cases[c].c[i], "bars");
					}
				}
				free_frame(&fr);
			}
		}
	}
}

/* The values the VM test checks (documented in sources/testpattern.c). */
V4L2CUSE_TEST("/tpg/bars-pinned", test_bars_pinned)
{
	static const uint8_t sd[8][3] = {
		{ 180, 128, 128 }, { 161, 44, 142 }, { 131, 156, 44 }, { 112, 72, 58 },
		{ 84, 184, 198 }, { 65, 100, 212 }, { 35, 212, 114 }, { 16, 128, 128 },
	};
	static const uint8_t hd[8][3] = {
		{ 180, 128, 128 }, { 168, 44, 136 }, { 145, 147, 44 }, { 133, 63, 52 },
		{ 63, 193, 204 }, { 51, 109, 212 }, { 28, 212, 120 }, { 16, 128, 128 },
	};
	struct v4l2cuse_tpg_params p = V4L2CUSE_TPG_PARAMS_DEFAULT;
	struct frame a = render(V4L2_PIX_FMT_YUYV, 640, 480, &p, 0);
	struct frame b = render(V4L2_PIX_FMT_YUYV, 1280, 720, &p, 0);

	for (unsigned int i = 0; i < 8; i++) {
		for (uint32_t x = i * 80; x < (i + 1) * 80; x++) {
			struct px v = at(&a, x, 300);

			g_assert_cmpint(v.y, ==, sd[i][0]);
			g_assert_cmpint(v.cb, ==, sd[i][1]);
			g_assert_cmpint(v.cr, ==, sd[i][2]);
		}
		for (uint32_t x = i * 160; x < (i + 1) * 160; x += 7) {
			struct px v = at(&b, x, 700);

			g_assert_cmpint(v.y, ==, hd[i][0]);
			g_assert_cmpint(v.cb, ==, hd[i][1]);
			g_assert_cmpint(v.cr, ==, hd[i][2]);
		}
	}
	free_frame(&a);
	free_frame(&b);
}

V4L2CUSE_TEST("/tpg/solids", test_solids)
{
	static const struct { enum v4l2cuse_tpg_pattern pat; struct rgb c; } cases[] = {
		{ V4L2CUSE_TPG_PAT_BLACK, { BLK } }, { V4L2CUSE_TPG_PAT_WHITE, { WHT } },
		{ V4L2CUSE_TPG_PAT_RED, { RED } }, { V4L2CUSE_TPG_PAT_GREEN, { GRN } },
		{ V4L2CUSE_TPG_PAT_BLUE, { BLU } },
	};

	for (size_t c = 0; c < G_N_ELEMENTS(cases); c++) {
		for (size_t f = 0; f < G_N_ELEMENTS(px_raw_formats); f++) {
			struct v4l2cuse_tpg_params p = V4L2CUSE_TPG_PARAMS_DEFAULT;
			struct frame fr;

			p.pattern = cases[c].pat;
			fr = render(px_raw_formats[f], 320, 240, &p, 0);
			for (uint32_t y = 0; y < 240; y += 17)
				for (uint32_t x = 0; x < 320; x += 13)
					check_rgb(&fr, x, y, cases[c].c, "solid");
			check_rgb(&fr, 319, 239, cases[c].c, "solid");
			free_frame(&fr);
		}
	}
}

V4L2CUSE_TEST("/tpg/checkers", test_checkers)
{
	static const struct {
		enum v4l2cuse_tpg_pattern pat;
		unsigned int n;
		bool origin_white;
	} cases[] = {
		{ V4L2CUSE_TPG_PAT_CHECKERS_16X16, 16, true },
		{ V4L2CUSE_TPG_PAT_CHECKERS_2X2, 2, false },
		{ V4L2CUSE_TPG_PAT_CHECKERS_1X1, 1, false },
	};

	for (size_t c = 0; c < G_N_ELEMENTS(cases); c++) {
		for (size_t f = 0; f < G_N_ELEMENTS(px_raw_formats); f++) {
			struct v4l2cuse_tpg_params p = V4L2CUSE_TPG_PARAMS_DEFAULT;
			unsigned int n = cases[c].n;
			struct frame fr;

			p.pattern = cases[c].pat;
			fr = render(px_raw_formats[f], 640, 480, &p, 0);
			for (uint32_t y = 0; y < 480; y += 3) {
				for (uint32_t x = 0; x < 640; x += 5) {
					bool odd = ((x / n) ^ (y / n)) & 1;
					bool white = cases[c].origin_white ? !odd : odd;

					if (is_white(&fr, x, y) != white)
						g_error("checkers %u %s at (%u,%u)", n,
							px_fourcc(fr.fourcc), x, y);
				}
			}
			free_frame(&fr);
		}
	}

	/* red/green checkers, exact in RGB */
	for (unsigned int n = 1; n <= 2; n++) {
		struct v4l2cuse_tpg_params p = V4L2CUSE_TPG_PARAMS_DEFAULT;
		struct frame fr;

		p.pattern = n == 1 ? V4L2CUSE_TPG_PAT_COLOR_CHECKERS_1X1
				   : V4L2CUSE_TPG_PAT_COLOR_CHECKERS_2X2;
		fr = render(V4L2_PIX_FMT_RGB24, 64, 48, &p, 0);
		for (uint32_t y = 0; y < 48; y++) {
			for (uint32_t x = 0; x < 64; x++) {
				struct rgb red = { RED }, green = { GRN };

				check_rgb(&fr, x, y, ((x / n) ^ (y / n)) & 1 ? red : green, "rgcheck");
			}
		}
		free_frame(&fr);
	}
}

V4L2CUSE_TEST("/tpg/lines", test_lines)
{
	for (size_t f = 0; f < G_N_ELEMENTS(px_raw_formats); f++) {
		struct frame fr;

		fr = render_pattern(px_raw_formats[f], 320, 240, V4L2CUSE_TPG_PAT_ALTERNATING_HLINES);
		for (uint32_t y = 0; y < 240; y++)
			g_assert_cmpint(is_white(&fr, 7, y), ==, y & 1);
		free_frame(&fr);

		fr = render_pattern(px_raw_formats[f], 320, 240, V4L2CUSE_TPG_PAT_ALTERNATING_VLINES);
		for (uint32_t x = 0; x < 320; x++)
			g_assert_cmpint(is_white(&fr, x, 9), ==, x & 1);
		free_frame(&fr);
	}
}

V4L2CUSE_TEST("/tpg/cross", test_cross)
{
	for (size_t f = 0; f < G_N_ELEMENTS(px_raw_formats); f++) {
		struct frame fr;

		fr = render_pattern(px_raw_formats[f], 640, 480, V4L2CUSE_TPG_PAT_CROSS_1_PIXEL);
		for (uint32_t x = 0; x < 640; x += 9)
			g_assert_false(is_white(&fr, x, 240));
		for (uint32_t y = 0; y < 480; y += 9)
			g_assert_false(is_white(&fr, 320, y));
		g_assert_true(is_white(&fr, 20, 20));
		g_assert_true(is_white(&fr, 20, 239));
		g_assert_true(is_white(&fr, 20, 241));
		g_assert_true(is_white(&fr, 600, 470));
		if (px_is_rgb(fr.fourcc) || fr.fourcc == V4L2_PIX_FMT_GREY) {
			g_assert_true(is_white(&fr, 319, 20));
			g_assert_true(is_white(&fr, 321, 20));
		}
		free_frame(&fr);

		fr = render_pattern(px_raw_formats[f], 640, 480, V4L2CUSE_TPG_PAT_CROSS_2_PIXELS);
		g_assert_false(is_white(&fr, 319, 10));
		g_assert_false(is_white(&fr, 320, 10));
		g_assert_true(is_white(&fr, 317, 10));
		g_assert_true(is_white(&fr, 322, 10));
		g_assert_false(is_white(&fr, 10, 239));
		g_assert_false(is_white(&fr, 10, 240));
		g_assert_true(is_white(&fr, 10, 237));
		g_assert_true(is_white(&fr, 10, 242));
		free_frame(&fr);

		fr = render_pattern(px_raw_formats[f], 640, 480, V4L2CUSE_TPG_PAT_CROSS_10_PIXELS);
		for (uint32_t x = 310; x < 330; x++)
			g_assert_false(is_white(&fr, x, 10));
		g_assert_true(is_white(&fr, 307, 10));
		g_assert_true(is_white(&fr, 332, 10));
		for (uint32_t y = 230; y < 250; y++)
			g_assert_false(is_white(&fr, 10, y));
		g_assert_true(is_white(&fr, 10, 227));
		g_assert_true(is_white(&fr, 10, 252));
		free_frame(&fr);
	}
}

V4L2CUSE_TEST("/tpg/ramp", test_ramp)
{
	for (size_t f = 0; f < G_N_ELEMENTS(px_raw_formats); f++) {
		struct frame fr;
		int prev = -1;

		fr = render_pattern(px_raw_formats[f], 640, 480, V4L2CUSE_TPG_PAT_GRAY_RAMP);
		for (uint32_t x = 0; x < 640; x++) {
			int v = px_level(fr.fourcc, at(&fr, x, 100));

			g_assert_cmpint(v, >=, prev);
			prev = v;
		}
		check_rgb(&fr, 0, 5, (struct rgb){ BLK }, "ramp");
		check_rgb(&fr, 639, 5, (struct rgb){ WHT }, "ramp");
		check_rgb(&fr, 320, 5, (struct rgb){ 128, 128, 128 }, "ramp");
		free_frame(&fr);
	}
}

V4L2CUSE_TEST("/tpg/hbars-squares", test_hbars_squares)
{
	for (size_t f = 0; f < G_N_ELEMENTS(px_raw_formats); f++) {
		struct frame fr;

		fr = render_pattern(px_raw_formats[f], 640, 480, V4L2CUSE_TPG_PAT_100_HCOLORBAR);
		for (unsigned int band = 0; band < 8; band++) {
			check_rgb(&fr, 10, band * 60 + 2, bars100[band], "hbars");
			check_rgb(&fr, 600, band * 60 + 57, bars100[band], "hbars");
		}
		free_frame(&fr);

		fr = render_pattern(px_raw_formats[f], 640, 480, V4L2CUSE_TPG_PAT_100_COLORSQUARES);
		for (unsigned int band = 0; band < 8; band++) {
			for (unsigned int bar = 0; bar < 8; bar++)
				check_rgb(&fr, bar * 80 + 40, band * 60 + 30,
					  bars100[(band + bar) % 8], "squares");
		}
		free_frame(&fr);
	}
}

V4L2CUSE_TEST("/tpg/smpte", test_smpte)
{
	struct v4l2cuse_tpg_params p = V4L2CUSE_TPG_PARAMS_DEFAULT;
	struct frame fr;

	p.pattern = V4L2CUSE_TPG_PAT_SMPTE_RP219;
	fr = render(V4L2_PIX_FMT_YUYV, 1280, 720, &p, 0);
	/* top: 40% grey sidebars, 75% bars */
	g_assert_cmpint(at(&fr, 10, 100).y, ==, 104);	/* 16 + 219 * 0.4 */
	g_assert_cmpint(at(&fr, 1270, 100).y, ==, 104);
	check_rgb(&fr, UX(7), 100, (struct rgb){ W75 }, "smpte");
	check_rgb(&fr, UX(43), 100, (struct rgb){ B75 }, "smpte");
	/* row 7: cyan | 75% white | blue; row 8: yellow | black | ramp | red */
	check_rgb(&fr, 10, 7 * 60 + 30, (struct rgb){ CYN }, "smpte");
	check_rgb(&fr, 640, 7 * 60 + 30, (struct rgb){ W75 }, "smpte");
	check_rgb(&fr, 1270, 7 * 60 + 30, (struct rgb){ BLU }, "smpte");
	check_rgb(&fr, 10, 8 * 60 + 30, (struct rgb){ YEL }, "smpte");
	check_rgb(&fr, UX(10), 8 * 60 + 30, (struct rgb){ BLK }, "smpte");
	check_rgb(&fr, 1270, 8 * 60 + 30, (struct rgb){ RED }, "smpte");
	g_assert_cmpint(at(&fr, UX(14), 8 * 60 + 30).y, <, at(&fr, UX(40), 8 * 60 + 30).y);
	/* bottom: 15% grey, black, white, PLUGE -2/0/+2/0/+4 */
	g_assert_cmpint(at(&fr, 10, 700).y, ==, 49);	/* 16 + 219 * 0.15 */
	check_rgb(&fr, UX(20), 700, (struct rgb){ WHT }, "smpte");
	g_assert_cmpint(at(&fr, UX(34), 700).y, ==, 12);
	g_assert_cmpint(at(&fr, UX(36), 700).y, ==, 16);
	g_assert_cmpint(at(&fr, UX(38), 700).y, ==, 20);
	g_assert_cmpint(at(&fr, UX(42), 700).y, ==, 25);
	free_frame(&fr);

	/* full-range RGB clips -2% to black */
	fr = render(V4L2_PIX_FMT_RGB24, 1280, 720, &p, 0);
	check_rgb(&fr, UX(34), 700, (struct rgb){ BLK }, "smpte");
	check_rgb(&fr, UX(42), 700, (struct rgb){ 10, 10, 10 }, "smpte");
	free_frame(&fr);
}

V4L2CUSE_TEST("/tpg/noise", test_noise)
{
	struct v4l2cuse_tpg_params p = V4L2CUSE_TPG_PARAMS_DEFAULT;
	struct frame a, b;
	unsigned int diff = 0;

	p.pattern = V4L2CUSE_TPG_PAT_NOISE;
	a = render(V4L2_PIX_FMT_YUYV, 320, 240, &p, 0);
	b = render(V4L2_PIX_FMT_YUYV, 320, 240, &p, 1);
	for (uint32_t y = 0; y < 240; y++) {
		for (uint32_t x = 0; x < 320; x++) {
			struct px pa = at(&a, x, y);

			g_assert_cmpint(pa.cb, ==, 128);
			g_assert_cmpint(pa.cr, ==, 128);
			diff += pa.y != at(&b, x, y).y;
		}
	}
	g_assert_cmpuint(diff, >, 320 * 240 / 2);
	free_frame(&a);
	free_frame(&b);
}

static bool
in_rect(const struct v4l2_rect *r, uint32_t x, uint32_t y)
{
	return x >= (uint32_t)r->left && x < r->left + r->width &&
	       y >= (uint32_t)r->top && y < r->top + r->height;
}

V4L2CUSE_TEST("/tpg/overlay", test_overlay)
{
	static const char *const text1[] = { "#0000000001", "00:00:00.033", "640x480 YUYV 30 fps",
					     "v4l2cuse" };
	static const char *const text2[] = { "#0000000002", "00:00:00.066", "640x480 YUYV 30 fps",
					     "v4l2cuse" };
	struct v4l2_rect r;

	v4l2cuse_tpg_overlay_rect_for(640, 480, 4, &r);
	g_assert_cmpint(r.left, ==, 0);
	g_assert_cmpint(r.top, ==, 0);
	g_assert_cmpuint(r.width, ==, 296);
	g_assert_cmpuint(r.height, ==, 72);
	v4l2cuse_tpg_overlay_rect_for(640, 480, 0, &r);
	g_assert_cmpuint(r.width, ==, 0);
	v4l2cuse_tpg_overlay_rect_for(101, 33, 3, &r);
	g_assert_cmpuint(r.width, ==, 100);
	g_assert_cmpuint(r.height, ==, 32);

	for (size_t f = 0; f < G_N_ELEMENTS(px_raw_formats); f++) {
		for (int pat = 0; pat < V4L2CUSE_TPG_PAT_COUNT; pat++) {
			struct v4l2cuse_tpg_params p = V4L2CUSE_TPG_PARAMS_DEFAULT;
			struct frame plain, a, b;
			unsigned int in_a = 0, in_ab = 0;

			if (pat == V4L2CUSE_TPG_PAT_NOISE)
				continue;
			p.pattern = pat;
			plain = render(px_raw_formats[f], 640, 480, &p, 0);
			a = render_text(px_raw_formats[f], 640, 480, &p, 1, text1, 4);
			b = render_text(px_raw_formats[f], 640, 480, &p, 2, text2, 4);
			v4l2cuse_tpg_overlay_rect_for(640, 480, 4, &r);
			for (uint32_t y = 0; y < 480; y++) {
				for (uint32_t x = 0; x < 640; x++) {
					struct px pp = at(&plain, x, y), pa = at(&a, x, y);
					struct px pb = at(&b, x, y);

					if (in_rect(&r, x, y)) {
						in_a += !px_equal(pp, pa);
						in_ab += !px_equal(pa, pb);
					} else if (!px_equal(pp, pa) || !px_equal(pa, pb)) {
						g_error("pattern %d %s: (%u,%u) outside the overlay "
							"changed", pat, px_fourcc(a.fourcc), x, y);
					}
				}
			}
			/* the overlay is visible, and the counter/time text moved */
			g_assert_cmpuint(in_a, >, 1000);
			g_assert_cmpuint(in_ab, >, 20);
			/* frames are byte-identical outside the rectangle rows */
			g_assert_true(memcmp(a.buf + a.size - 100, b.buf + b.size - 100, 100) == 0);
			free_frame(&plain);
			free_frame(&a);
			free_frame(&b);
		}
	}
}

/*
 * The overlay is packed again only where a glyph changed: a generator kept
 * across frames (text, line count, pattern, brightness, box changing; the buffer
 * scribbled on in between) writes exactly what a new one writes.
 */
V4L2CUSE_TEST("/tpg/overlay-incremental", test_overlay_incremental)
{
	static const uint32_t sizes[][2] = { { 640, 480 }, { 36, 22 }, { 2, 2 } };
	static const unsigned int n_lines[] = { 3, 3, 4, 1, 3, 0, 3, 2, 4, 3 };

	for (size_t f = 0; f < G_N_ELEMENTS(px_raw_formats); f++) {
		for (size_t s = 0; s < G_N_ELEMENTS(sizes); s++) {
			struct v4l2cuse_tpg_params p = V4L2CUSE_TPG_PARAMS_DEFAULT;
			struct v4l2cuse_tpg *t = v4l2cuse_tpg_new();
			uint32_t w = sizes[s][0], h = sizes[s][1];
			g_autofree uint8_t *buf = NULL;
			uint32_t q = px_raw_formats[f] == V4L2_PIX_FMT_YUV422P ?
					     V4L2_QUANTIZATION_FULL_RANGE : V4L2_QUANTIZATION_LIM_RANGE;

			g_assert_cmpint(v4l2cuse_tpg_set_format(t, px_raw_formats[f], w, h,
								V4L2_YCBCR_ENC_601, q), ==, 0);
			buf = g_malloc(v4l2cuse_tpg_frame_size(t));
			for (uint32_t n = 0; n < G_N_ELEMENTS(n_lines); n++) {
				char l[3][32];
				const char *text[4] = { l[0], l[1], l[2], "label" };
				struct frame ref;

				g_snprintf(l[0], sizeof(l[0]), "#%010u", n * 7);
				g_snprintf(l[1], sizeof(l[1]), "00:00:%02u.%03u", n, n * 33);
				g_snprintf(l[2], sizeof(l[2]), n == 4 ? "x" : "%ux%u \x01 fps", w, h);
				p.brightness = n < 6 ? 128 : 200;
				/* black swaps the overlay's colours */
				p.pattern = n == 5 || n == 6 ? V4L2CUSE_TPG_PAT_BLACK
							     : V4L2CUSE_TPG_PAT_75_COLORBAR;
				p.box = n >= 8;
				v4l2cuse_tpg_set_params(t, &p);
				memset(buf, (int)n * 37, v4l2cuse_tpg_frame_size(t));
				v4l2cuse_tpg_fill(t, buf, n, text, n_lines[n]);
				ref = render_text(px_raw_formats[f], w, h, &p, n, text, n_lines[n]);
				if (memcmp(ref.buf, buf, ref.size) != 0)
					g_error("%s %ux%u frame %u: differs from a new generator's",
						px_fourcc(ref.fourcc), w, h, n);
				free_frame(&ref);
			}
			v4l2cuse_tpg_free(t);
		}
	}
}

V4L2CUSE_TEST("/tpg/font", test_font)
{
	/* glyphs are distinct and within 5 bits */
	for (unsigned int i = 0; i < 95; i++) {
		for (unsigned int r = 0; r < 7; r++)
			g_assert_cmpuint(v4l2cuse_tpg_font_5x7[i][r] & ~0x1fu, ==, 0);
		for (unsigned int j = 0; j < i; j++)
			g_assert_true(
				memcmp(v4l2cuse_tpg_font_5x7[i], v4l2cuse_tpg_font_5x7[j], 7) != 0);
	}
}

V4L2CUSE_TEST("/tpg/scroll", test_scroll)
{
	static const uint32_t fmts[] = { V4L2_PIX_FMT_RGB24, V4L2_PIX_FMT_YUYV, V4L2_PIX_FMT_NV12,
					 V4L2_PIX_FMT_YUV420, V4L2_PIX_FMT_GREY };

	for (size_t f = 0; f < G_N_ELEMENTS(fmts); f++) {
		struct v4l2cuse_tpg_params p = V4L2CUSE_TPG_PARAMS_DEFAULT;
		struct frame a, b;

		p.pattern = V4L2CUSE_TPG_PAT_GRAY_RAMP;
		p.hscroll = 6;
		a = render(fmts[f], 320, 240, &p, 0);
		b = render(fmts[f], 320, 240, &p, 3);
		for (uint32_t x = 0; x < 320; x++)
			g_assert_true(px_equal(at(&b, x, 50), at(&a, (x + 18) % 320, 50)));
		free_frame(&a);
		free_frame(&b);

		p.hscroll = -4;
		a = render(fmts[f], 320, 240, &p, 0);
		b = render(fmts[f], 320, 240, &p, 5);
		for (uint32_t x = 0; x < 320; x++)
			g_assert_true(px_equal(at(&b, x, 50), at(&a, (x + 320 - 20) % 320, 50)));
		free_frame(&a);
		free_frame(&b);

		p.hscroll = 0;
		p.vscroll = 10;
		p.pattern = V4L2CUSE_TPG_PAT_100_HCOLORBAR;
		a = render(fmts[f], 320, 240, &p, 0);
		b = render(fmts[f], 320, 240, &p, 2);
		for (uint32_t y = 0; y < 240; y++)
			g_assert_true(px_equal(at(&b, 3, y), at(&a, 3, (y + 20) % 240)));
		free_frame(&a);
		free_frame(&b);
	}
}

V4L2CUSE_TEST("/tpg/flips", test_flips)
{
	for (size_t f = 0; f < G_N_ELEMENTS(px_raw_formats); f++) {
		struct v4l2cuse_tpg_params p = V4L2CUSE_TPG_PARAMS_DEFAULT;
		struct frame a, b;

		p.pattern = V4L2CUSE_TPG_PAT_100_COLORSQUARES;
		a = render(px_raw_formats[f], 320, 240, &p, 0);
		p.hflip = true;
		b = render(px_raw_formats[f], 320, 240, &p, 0);
		for (uint32_t y = 0; y < 240; y += 7)
			for (uint32_t x = 0; x < 320; x++)
				g_assert_cmpint(px_level(a.fourcc, at(&b, x, y)), ==,
						px_level(a.fourcc, at(&a, 319 - x, y)));
		g_assert_false(px_equal(at(&a, 5, 5), at(&b, 5, 5)));
		free_frame(&b);

		p.hflip = false;
		p.vflip = true;
		b = render(px_raw_formats[f], 320, 240, &p, 0);
		for (uint32_t y = 0; y < 240; y++)
			for (uint32_t x = 0; x < 320; x += 7)
				g_assert_cmpint(px_level(a.fourcc, at(&b, x, y)), ==,
						px_level(a.fourcc, at(&a, x, 239 - y)));
		g_assert_false(px_equal(at(&a, 5, 5), at(&b, 5, 5)));
		free_frame(&a);
		free_frame(&b);
	}
}

V4L2CUSE_TEST("/tpg/controls", test_controls)
{
	for (size_t f = 0; f < G_N_ELEMENTS(px_raw_formats); f++) {
		uint32_t fcc = px_raw_formats[f];
		struct v4l2cuse_tpg_params p = V4L2CUSE_TPG_PARAMS_DEFAULT;
		struct frame ref, fr;
		struct px r0, r1, v0, v1;

		ref = render(fcc, 320, 240, &p, 0);
		r0 = at(&ref, 10, 100);		/* 75% white */
		r1 = at(&ref, 200, 100);	/* 75% red */

		p.brightness = 200;
		fr = render(fcc, 320, 240, &p, 0);
		v0 = at(&fr, 10, 100);
		g_assert_cmpint(px_level(fcc, v0), >, px_level(fcc, r0) + 40);
		free_frame(&fr);

		p.brightness = 128;
		p.contrast = 0;
		fr = render(fcc, 320, 240, &p, 0);
		v0 = at(&fr, 10, 100);
		v1 = at(&fr, 200, 100);
		g_assert_true(px_near(v0, v1, 1));	/* everything collapses to black */
		g_assert_cmpint(px_level(fcc, v0), <, px_level(fcc, r0));
		free_frame(&fr);

		p.contrast = 128;
		if (fcc != V4L2_PIX_FMT_GREY) {
			p.saturation = 0;
			fr = render(fcc, 320, 240, &p, 0);
			v1 = at(&fr, 200, 100);
			if (px_is_yuv(fcc)) {
				g_assert_cmpint(v1.cb, ==, 128);
				g_assert_cmpint(v1.cr, ==, 128);
				g_assert_cmpint(v1.y, ==, r1.y);
			} else {
				g_assert_cmpint(abs(v1.r - v1.g), <=, 8);
				g_assert_cmpint(abs(v1.r - r1.r), >, 50);
			}
			free_frame(&fr);

			p.saturation = 128;
			p.hue = 64;
			fr = render(fcc, 320, 240, &p, 0);
			v1 = at(&fr, 200, 100);
			g_assert_false(px_near(v1, r1, 10));
			if (px_is_yuv(fcc))
				g_assert_cmpint(v1.y, ==, r1.y);
			free_frame(&fr);
			p.hue = 0;
		}
		free_frame(&ref);
	}
}

V4L2CUSE_TEST("/tpg/box-border", test_box_border)
{
	for (size_t f = 0; f < G_N_ELEMENTS(px_raw_formats); f++) {
		struct v4l2cuse_tpg_params p = V4L2CUSE_TPG_PARAMS_DEFAULT;
		struct frame a, b;
		unsigned int diff = 0;

		p.pattern = V4L2CUSE_TPG_PAT_BLACK;
		p.border = true;
		a = render(px_raw_formats[f], 320, 240, &p, 0);
		check_rgb(&a, 0, 0, (struct rgb){ GRN }, "border");
		check_rgb(&a, 319, 239, (struct rgb){ GRN }, "border");
		check_rgb(&a, 1, 120, (struct rgb){ GRN }, "border");
		check_rgb(&a, 318, 120, (struct rgb){ GRN }, "border");
		check_rgb(&a, 2, 120, (struct rgb){ BLK }, "border");
		check_rgb(&a, 160, 2, (struct rgb){ BLK }, "border");
		free_frame(&a);

		p.border = false;
		p.box = true;
		a = render(px_raw_formats[f], 320, 240, &p, 0);
		b = render(px_raw_formats[f], 320, 240, &p, 10);
		/* box is 30x30: at (0,0) in frame 0, at (40,20) in frame 10 */
		check_rgb(&a, 5, 5, (struct rgb){ GRN }, "box");
		check_rgb(&a, 29, 29, (struct rgb){ GRN }, "box");
		check_rgb(&a, 30, 30, (struct rgb){ BLK }, "box");
		check_rgb(&b, 45, 25, (struct rgb){ GRN }, "box");
		check_rgb(&b, 5, 5, (struct rgb){ BLK }, "box");
		for (uint32_t y = 0; y < 240; y++)
			for (uint32_t x = 0; x < 320; x++)
				diff += !px_equal(at(&a, x, y), at(&b, x, y));
		g_assert_cmpuint(diff, >, 100);
		free_frame(&a);
		free_frame(&b);
	}
}

V4L2CUSE_TEST("/tpg/static", test_static)
{
	/* without motion, frame N and N+1 are byte-identical without overlay */
	for (size_t f = 0; f < G_N_ELEMENTS(px_raw_formats); f++) {
		for (int pat = 0; pat < V4L2CUSE_TPG_PAT_COUNT; pat++) {
			struct v4l2cuse_tpg_params p = V4L2CUSE_TPG_PARAMS_DEFAULT;
			struct frame a, b;

			p.pattern = pat;
			p.border = true;
			a = render(px_raw_formats[f], 320, 240, &p, 7);
			b = render(px_raw_formats[f], 320, 240, &p, 8);
			g_assert_cmpint(memcmp(a.buf, b.buf, a.size) == 0, ==,
					pat != V4L2CUSE_TPG_PAT_NOISE);
			/* and every byte was written */
			for (size_t i = 0; i + 3 < a.size; i += 4)
				g_assert_false(a.buf[i] == 0xa5 && a.buf[i + 1] == 0xa5 &&
					       a.buf[i + 2] == 0xa5 && a.buf[i + 3] == 0xa5);
			free_frame(&a);
			free_frame(&b);
		}
	}
}

V4L2CUSE_TEST("/tpg/formats-errors", test_formats_and_errors)
{
	struct v4l2cuse_tpg *t = v4l2cuse_tpg_new();

	g_assert_true(v4l2cuse_tpg_supports(V4L2_PIX_FMT_YUYV));
	g_assert_true(v4l2cuse_tpg_supports(V4L2_PIX_FMT_YUV422P));
	g_assert_false(v4l2cuse_tpg_supports(V4L2_PIX_FMT_MJPEG));
	g_assert_cmpint(v4l2cuse_tpg_set_format(t, V4L2_PIX_FMT_MJPEG, 640, 480, 0, 0), ==,
			-EINVAL);
	g_assert_cmpint(v4l2cuse_tpg_set_format(t, V4L2_PIX_FMT_YUYV, 641, 480, 0, 0), ==, -EINVAL);
	g_assert_cmpint(v4l2cuse_tpg_set_format(t, V4L2_PIX_FMT_NV12, 640, 481, 0, 0), ==, -EINVAL);
	g_assert_cmpint(v4l2cuse_tpg_set_format(t, V4L2_PIX_FMT_GREY, 641, 481, 0, 0), ==, 0);
	g_assert_cmpuint(v4l2cuse_tpg_frame_size(t), ==, 641 * 481);
	g_assert_cmpint(v4l2cuse_tpg_set_format(t, V4L2_PIX_FMT_GREY, 0, 481, 0, 0), ==, -EINVAL);
	v4l2cuse_tpg_free(t);
	v4l2cuse_tpg_free(NULL);

	g_assert_cmpint(v4l2cuse_tpg_pattern_from_name("bars75"), ==, V4L2CUSE_TPG_PAT_75_COLORBAR);
	g_assert_cmpint(v4l2cuse_tpg_pattern_from_name("SMPTE"), ==, V4L2CUSE_TPG_PAT_SMPTE_RP219);
	g_assert_cmpint(v4l2cuse_tpg_pattern_from_name("22"), ==, V4L2CUSE_TPG_PAT_SMPTE_RP219);
	g_assert_cmpint(v4l2cuse_tpg_pattern_from_name("23"), ==, -EINVAL);
	g_assert_cmpint(v4l2cuse_tpg_pattern_from_name("nope"), ==, -EINVAL);
	g_assert_cmpint(v4l2cuse_tpg_pattern_from_name(""), ==, -EINVAL);
	g_assert_cmpstr(v4l2cuse_tpg_pattern_menu[0], ==, "75% Colorbar");
	g_assert_cmpstr(v4l2cuse_tpg_pattern_menu[21], ==, "Noise");
	g_assert_cmpstr(v4l2cuse_tpg_pattern_menu[22], ==, "SMPTE RP 219 Colorbar");
	g_assert_null(v4l2cuse_tpg_pattern_menu[V4L2CUSE_TPG_PAT_COUNT]);
}

V4L2CUSE_TEST("/tpg/odd-sizes", test_odd_grey)
{
	/* unaligned formats accept odd sizes; all patterns render */
	for (int pat = 0; pat < V4L2CUSE_TPG_PAT_COUNT; pat++) {
		struct v4l2cuse_tpg_params p = V4L2CUSE_TPG_PARAMS_DEFAULT;
		static const char *const text[] = { "odd" };
		struct frame fr;

		p.pattern = pat;
		p.box = p.border = true;
		p.hscroll = 3;
		p.vscroll = 5;
		fr = render_text(V4L2_PIX_FMT_RGB24, 37, 23, &p, 3, text, 1);
		free_frame(&fr);
		fr = render_text(V4L2_PIX_FMT_GREY, 3, 3, &p, 3, text, 1);
		free_frame(&fr);
		fr = render_text(V4L2_PIX_FMT_NV12, 2, 2, &p, 3, text, 1);
		free_frame(&fr);
	}
}
