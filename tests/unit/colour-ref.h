/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The reference the colour tests check pixels against: Y'CbCr <-> R'G'B'
 * by the formulas of ITU-R BT.601 and BT.709 (Kr, Kb) and V4L2's ranges
 * (limited: Y' 16-235, Cb/Cr 16-240; full: 0-255), in doubles, R'G'B'
 * full range 0-255. Independent of the converter's code on purpose.
 * Header-only: each test is a program of its own.
 */

#include <stdbool.h>
#include <glib.h>

static inline void
ref_ycc_to_rgb_range(bool bt709, bool full, const double ycc[3], double rgb[3])
{
	double kr = bt709 ? 0.2126 : 0.299, kb = bt709 ? 0.0722 : 0.114, kg = 1 - kr - kb;
	double y = full ? ycc[0] / 255 : (ycc[0] - 16) / 219;
	double pb = (ycc[1] - 128) / (full ? 255 : 224), pr = (ycc[2] - 128) / (full ? 255 : 224);
	double r = y + 2 * (1 - kr) * pr, b = y + 2 * (1 - kb) * pb;
	double g = (y - kr * r - kb * b) / kg;

	rgb[0] = CLAMP(r * 255, 0, 255);
	rgb[1] = CLAMP(g * 255, 0, 255);
	rgb[2] = CLAMP(b * 255, 0, 255);
}

/* Limited range. */
static inline void
ref_ycc_to_rgb(bool bt709, const double ycc[3], double rgb[3])
{
	ref_ycc_to_rgb_range(bt709, false, ycc, rgb);
}

/* Limited range. */
static inline void
ref_rgb_to_ycc(bool bt709, const double rgb[3], double ycc[3])
{
	double kr = bt709 ? 0.2126 : 0.299, kb = bt709 ? 0.0722 : 0.114;
	double r = rgb[0] / 255, g = rgb[1] / 255, b = rgb[2] / 255;
	double y = kr * r + (1 - kr - kb) * g + kb * b;

	ycc[0] = 16 + 219 * y;
	ycc[1] = 128 + 224 * (b - y) / (2 * (1 - kb));
	ycc[2] = 128 + 224 * (r - y) / (2 * (1 - kr));
}
