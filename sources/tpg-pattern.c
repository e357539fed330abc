/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The test patterns (tpg.h, tpg-private.h): names, and which colour each
 * pixel gets. Pattern semantics follow the
 * kernel's vivid/v4l2-tpg so that people who know vivid know these; the code
 * is our own.
 *
 * Geometry of the patterns at width W, height H (x, y from the top-left of
 * the unflipped picture):
 *   colour bars (75%, 100%, CSC): bar i = x * 8 / W, i.e. columns
 *       [i * W / 8, (i + 1) * W / 8); order white, yellow, cyan, green,
 *       magenta, red, blue, black. 75% = R'G'B' 191/255; CSC bars use 191
 *       and 50 (never out of gamut), black 50.
 *   horizontal bars: band y * 8 / H, in the 100% bar colours.
 *   colour squares: colour (band + bar) % 8 of the 100% bars.
 *   checkers N x N: white where ((x / N) ^ (y / N)) is odd for 1x1 and 2x2
 *       (black otherwise); 16x16 starts with white at (0, 0). The "Red/Green"
 *       checkers use red where the grey ones are white, green elsewhere.
 *   alternating lines: odd rows (hor) / odd columns (vert) white, rest black.
 *   crosses (black lines on white): 1 px: row H/2 and column W/2; 2 px: rows
 *       with (y + 1) / 2 == H / 4, columns with (x + 1) / 2 == W / 4; 10 px:
 *       (y + 10) / 20 == H / 40, (x + 10) / 20 == W / 40.
 *   grey ramp: level x * 256 / W (0..255 full scale R'G'B').
 *   noise: random grey per pixel, new every frame (the one pattern that is
 *       never static).
 *   SMPTE RP 219 (after RP 219-1, with *2 = 75% white, *3 = 0% black), in
 *       units of W/56 (d = 7 units sidebars, c = 6 units) and rows of H/12:
 *       rows [0, 7): 40% grey | 75% white yellow cyan green magenta red
 *       blue | 40% grey; row 7: 100% cyan | 75% white | 100% blue; row 8:
 *       100% yellow | black | ramp 0..100% | 100% red; rows 9..11: 15% grey
 *       | black 9u | 100% white 12u | black 5u | -2% 2u | black 2u | +2% 2u |
 *       black 2u | +4% 2u | black 6u | 15% grey. The PLUGE steps keep their
 *       sub-black/over-black values in limited-range Y'CbCr (Y' 12/20/25);
 *       in full-range formats -2% clips to black.
 */

#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include <glib.h>

#include "util/macros.h"
#include "tpg-private.h"

const char *const v4l2cuse_tpg_pattern_menu[V4L2CUSE_TPG_PAT_COUNT + 1] = {
	"75% Colorbar",
	"100% Colorbar",
	"CSC Colorbar",
	"Horizontal 100% Colorbar",
	"100% Color Squares",
	"100% Black",
	"100% White",
	"100% Red",
	"100% Green",
	"100% Blue",
	"16x16 Checkers",
	"2x2 Checkers",
	"1x1 Checkers",
	"2x2 Red/Green Checkers",
	"1x1 Red/Green Checkers",
	"Alternating Hor Lines",
	"Alternating Vert Lines",
	"One Pixel Wide Cross",
	"Two Pixels Wide Cross",
	"Ten Pixels Wide Cross",
	"Gray Ramp",
	"Noise",
	"SMPTE RP 219 Colorbar",
	NULL,
};

const char *const v4l2cuse_tpg_pattern_names[V4L2CUSE_TPG_PAT_COUNT] = {
	"bars75", "bars100", "csc", "hbars", "squares",
	"black", "white", "red", "green", "blue",
	"checkers16", "checkers2", "checkers1", "rgcheckers2", "rgcheckers1",
	"hlines", "vlines", "cross1", "cross2", "cross10",
	"ramp", "noise", "smpte",
};

int
v4l2cuse_tpg_pattern_from_name(const char *name)
{
	char *end = NULL;
	long n;

	if (!name || !*name)
		return -EINVAL;
	for (int i = 0; i < V4L2CUSE_TPG_PAT_COUNT; i++) {
		if (g_ascii_strcasecmp(name, v4l2cuse_tpg_pattern_names[i]) == 0)
			return i;
	}
	n = strtol(name, &end, 10);
	if (*end == '\0' && n >= 0 && n < V4L2CUSE_TPG_PAT_COUNT)
		return (int)n;
	return -EINVAL;
}

static const uint16_t tpg_bars[3][8] = {
	{ C_75_WHITE, C_75_YELLOW, C_75_CYAN, C_75_GREEN,
	  C_75_MAGENTA, C_75_RED, C_75_BLUE, C_BLACK },
	{ C_WHITE, C_YELLOW, C_CYAN, C_GREEN, C_MAGENTA, C_RED, C_BLUE, C_BLACK },
	{ C_CSC_WHITE, C_CSC_YELLOW, C_CSC_CYAN, C_CSC_GREEN,
	  C_CSC_MAGENTA, C_CSC_RED, C_CSC_BLUE, C_CSC_BLACK },
};

unsigned int
v4l2cuse_tpg_pat_lines(enum v4l2cuse_tpg_pattern pat)
{
	switch (pat) {
	case V4L2CUSE_TPG_PAT_CHECKERS_16X16:
	case V4L2CUSE_TPG_PAT_CHECKERS_2X2:
	case V4L2CUSE_TPG_PAT_CHECKERS_1X1:
	case V4L2CUSE_TPG_PAT_COLOR_CHECKERS_2X2:
	case V4L2CUSE_TPG_PAT_COLOR_CHECKERS_1X1:
	case V4L2CUSE_TPG_PAT_ALTERNATING_HLINES:
	case V4L2CUSE_TPG_PAT_CROSS_1_PIXEL:
	case V4L2CUSE_TPG_PAT_CROSS_2_PIXELS:
	case V4L2CUSE_TPG_PAT_CROSS_10_PIXELS:
		return 2;
	case V4L2CUSE_TPG_PAT_100_HCOLORBAR:
	case V4L2CUSE_TPG_PAT_100_COLORSQUARES:
		return 8;
	case V4L2CUSE_TPG_PAT_SMPTE_RP219:
		return 4;
	default:
		return 1;
	}
}

unsigned int
v4l2cuse_tpg_row_pat(const struct v4l2cuse_tpg *t, uint32_t y)
{
	uint32_t h = t->height;

	switch (t->p.pattern) {
	case V4L2CUSE_TPG_PAT_CHECKERS_16X16:
		return (y >> 4) & 1;
	case V4L2CUSE_TPG_PAT_CHECKERS_2X2:
	case V4L2CUSE_TPG_PAT_COLOR_CHECKERS_2X2:
		return (y >> 1) & 1;
	case V4L2CUSE_TPG_PAT_CHECKERS_1X1:
	case V4L2CUSE_TPG_PAT_COLOR_CHECKERS_1X1:
	case V4L2CUSE_TPG_PAT_ALTERNATING_HLINES:
		return y & 1;
	case V4L2CUSE_TPG_PAT_100_HCOLORBAR:
	case V4L2CUSE_TPG_PAT_100_COLORSQUARES:
		return (uint32_t)((uint64_t)y * 8 / h);
	case V4L2CUSE_TPG_PAT_CROSS_1_PIXEL:
		return y == h / 2;
	case V4L2CUSE_TPG_PAT_CROSS_2_PIXELS:
		return (y + 1) / 2 == h / 4;
	case V4L2CUSE_TPG_PAT_CROSS_10_PIXELS:
		return (y + 10) / 20 == h / 40;
	case V4L2CUSE_TPG_PAT_SMPTE_RP219: {
		uint32_t band = (uint32_t)((uint64_t)y * 12 / h);

		return band < 7 ? 0 : band == 7 ? 1 : band == 8 ? 2 : 3;
	}
	default:
		return 0;
	}
}

static uint16_t
tpg_smpte_color(const struct v4l2cuse_tpg *t, unsigned int line, uint32_t x)
{
	uint64_t w = t->width;
	uint32_t u = (uint32_t)((uint64_t)x * 56 / w);	/* 0..55 */
	static const struct { uint8_t end; uint16_t color; } row4[] = {
		{ 7, C_GREY15 }, { 16, C_BLACK }, { 28, C_WHITE }, { 33, C_BLACK },
		{ 35, C_PLUGE_M2 }, { 37, C_BLACK }, { 39, C_PLUGE_P2 }, { 41, C_BLACK },
		{ 43, C_PLUGE_P4 }, { 49, C_BLACK }, { 56, C_GREY15 },
	};

	switch (line) {
	case 0:
		if (u < 7 || u >= 49)
			return C_GREY40;
		return tpg_bars[0][(u - 7) / 6];
	case 1:
		return u < 7 ? C_CYAN : u >= 49 ? C_BLUE : C_75_WHITE;
	case 2:
		if (u < 7)
			return C_YELLOW;
		if (u < 13)
			return C_BLACK;
		if (u >= 49)
			return C_RED;
		return C_RAMP + (uint16_t)MIN(255, ((uint64_t)x * 56 - 13 * w) * 256 / (36 * w));
	default:
		for (size_t i = 0; i < ARRAY_SIZE(row4); i++) {
			if (u < row4[i].end)
				return row4[i].color;
		}
		return C_GREY15;
	}
}

uint16_t
v4l2cuse_tpg_color_at(const struct v4l2cuse_tpg *t, unsigned int line, uint32_t x)
{
	uint32_t w = t->width;
	unsigned int bar = (unsigned int)((uint64_t)x * 8 / w);

	switch (t->p.pattern) {
	case V4L2CUSE_TPG_PAT_75_COLORBAR:
		return tpg_bars[0][bar];
	case V4L2CUSE_TPG_PAT_100_COLORBAR:
		return tpg_bars[1][bar];
	case V4L2CUSE_TPG_PAT_CSC_COLORBAR:
		return tpg_bars[2][bar];
	case V4L2CUSE_TPG_PAT_100_HCOLORBAR:
		return tpg_bars[1][line];
	case V4L2CUSE_TPG_PAT_100_COLORSQUARES:
		return tpg_bars[1][(line + bar) % 8];
	case V4L2CUSE_TPG_PAT_BLACK:
		return C_BLACK;
	case V4L2CUSE_TPG_PAT_WHITE:
		return C_WHITE;
	case V4L2CUSE_TPG_PAT_RED:
		return C_RED;
	case V4L2CUSE_TPG_PAT_GREEN:
		return C_GREEN;
	case V4L2CUSE_TPG_PAT_BLUE:
		return C_BLUE;
	case V4L2CUSE_TPG_PAT_CHECKERS_16X16:
		return (((x >> 4) & 1) ^ line) ? C_BLACK : C_WHITE;
	case V4L2CUSE_TPG_PAT_CHECKERS_2X2:
		return (((x >> 1) & 1) ^ line) ? C_WHITE : C_BLACK;
	case V4L2CUSE_TPG_PAT_CHECKERS_1X1:
		return ((x & 1) ^ line) ? C_WHITE : C_BLACK;
	case V4L2CUSE_TPG_PAT_COLOR_CHECKERS_2X2:
		return (((x >> 1) & 1) ^ line) ? C_RED : C_GREEN;
	case V4L2CUSE_TPG_PAT_COLOR_CHECKERS_1X1:
		return ((x & 1) ^ line) ? C_RED : C_GREEN;
	case V4L2CUSE_TPG_PAT_ALTERNATING_HLINES:
		return line ? C_WHITE : C_BLACK;
	case V4L2CUSE_TPG_PAT_ALTERNATING_VLINES:
		return (x & 1) ? C_WHITE : C_BLACK;
	case V4L2CUSE_TPG_PAT_CROSS_1_PIXEL:
		return line || x == w / 2 ? C_BLACK : C_WHITE;
	case V4L2CUSE_TPG_PAT_CROSS_2_PIXELS:
		return line || (x + 1) / 2 == w / 4 ? C_BLACK : C_WHITE;
	case V4L2CUSE_TPG_PAT_CROSS_10_PIXELS:
		return line || (x + 10) / 20 == w / 40 ? C_BLACK : C_WHITE;
	case V4L2CUSE_TPG_PAT_GRAY_RAMP:
		return C_RAMP + (uint16_t)((uint64_t)x * 256 / w);
	case V4L2CUSE_TPG_PAT_SMPTE_RP219:
		return tpg_smpte_color(t, line, x);
	default:
		return C_BLACK;
	}
}
