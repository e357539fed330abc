/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * tpg: the test-pattern generator library behind the "pattern" source (in
 * the spirit of the kernel's v4l2-tpg, written from scratch). It knows
 * pixel formats and colours, nothing about sources, options or time.
 *
 * Usage: v4l2cuse_tpg_new(), v4l2cuse_tpg_set_format(), v4l2cuse_tpg_set_params() (any time; cheap
 * when nothing changed), then v4l2cuse_tpg_fill() per frame. Not thread-safe: one
 * thread owns a tpg.
 *
 * Colours are defined as R'G'B' and converted once per format/parameter
 * change into a palette (Y'CbCr with the format's matrix and range, or
 * R'G'B'); brightness/contrast/saturation/hue are applied in Y'CbCr like
 * vivid's tpg. Lines are written through the packers the converter uses
 * too (pack.h). Every distinct pattern line is rendered once into a line
 * cache (twice as wide as the frame, so horizontal scrolling is an offset),
 * and a frame is a memcpy per line plus the moving parts and the overlay.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/videodev2.h>

/* Menu order: vivid's tpg_pattern_strings, plus SMPTE RP 219 at the end. */
enum v4l2cuse_tpg_pattern {
	V4L2CUSE_TPG_PAT_75_COLORBAR,
	V4L2CUSE_TPG_PAT_100_COLORBAR,
	V4L2CUSE_TPG_PAT_CSC_COLORBAR,
	V4L2CUSE_TPG_PAT_100_HCOLORBAR,
	V4L2CUSE_TPG_PAT_100_COLORSQUARES,
	V4L2CUSE_TPG_PAT_BLACK,
	V4L2CUSE_TPG_PAT_WHITE,
	V4L2CUSE_TPG_PAT_RED,
	V4L2CUSE_TPG_PAT_GREEN,
	V4L2CUSE_TPG_PAT_BLUE,
	V4L2CUSE_TPG_PAT_CHECKERS_16X16,
	V4L2CUSE_TPG_PAT_CHECKERS_2X2,
	V4L2CUSE_TPG_PAT_CHECKERS_1X1,
	V4L2CUSE_TPG_PAT_COLOR_CHECKERS_2X2,
	V4L2CUSE_TPG_PAT_COLOR_CHECKERS_1X1,
	V4L2CUSE_TPG_PAT_ALTERNATING_HLINES,
	V4L2CUSE_TPG_PAT_ALTERNATING_VLINES,
	V4L2CUSE_TPG_PAT_CROSS_1_PIXEL,
	V4L2CUSE_TPG_PAT_CROSS_2_PIXELS,
	V4L2CUSE_TPG_PAT_CROSS_10_PIXELS,
	V4L2CUSE_TPG_PAT_GRAY_RAMP,
	V4L2CUSE_TPG_PAT_NOISE,
	V4L2CUSE_TPG_PAT_SMPTE_RP219,
	V4L2CUSE_TPG_PAT_COUNT
};

/* Menu names (vivid's strings), NULL-terminated. */
extern const char *const v4l2cuse_tpg_pattern_menu[V4L2CUSE_TPG_PAT_COUNT + 1];
/* Short names for "pattern:NAME" ("bars75", "smpte", ...). */
extern const char *const v4l2cuse_tpg_pattern_names[V4L2CUSE_TPG_PAT_COUNT];
/* Pattern for a short name or a menu index ("0".."22"), -EINVAL if none. */
int v4l2cuse_tpg_pattern_from_name(const char *name);

/* The font: v4l2cuse_tpg_font_5x7[c - 32][row], bit 4 = leftmost column. */
extern const uint8_t v4l2cuse_tpg_font_5x7[95][7];

/* Overlay text geometry: 12x16 cells, 4 px padding, 24 columns. */
#define V4L2CUSE_TPG_TEXT_CELL_W		12
#define V4L2CUSE_TPG_TEXT_CELL_H		16
#define V4L2CUSE_TPG_TEXT_PAD		4
#define V4L2CUSE_TPG_TEXT_COLS		24
#define V4L2CUSE_TPG_TEXT_MAX_LINES	8

struct v4l2cuse_tpg_params {
	enum v4l2cuse_tpg_pattern pattern;
	int brightness;		/* 0..255, 128 = neutral */
	int contrast;		/* 0..255, 128 = neutral */
	int saturation;		/* 0..255, 128 = neutral */
	int hue;		/* -128..127, 0 = neutral (+-180 degrees) */
	bool hflip, vflip;
	int hscroll, vscroll;	/* pixels per frame; > 0: picture moves left/up */
	bool box;		/* a square that bounces around, 4/2 px per frame */
	bool border;		/* a 2 px frame in the contrast colour */
};

#define V4L2CUSE_TPG_PARAMS_DEFAULT { .pattern = V4L2CUSE_TPG_PAT_75_COLORBAR, .brightness = 128, \
			     .contrast = 128, .saturation = 128 }

struct v4l2cuse_tpg;

struct v4l2cuse_tpg *v4l2cuse_tpg_new(void);
void v4l2cuse_tpg_free(struct v4l2cuse_tpg *t);		/* NULL-safe */

/*
 * Raw formats tpg renders: the ones in format.c except MJPEG, plus
 * V4L2_PIX_FMT_YUV422P (planar 4:2:2, used internally for JPEG encoding).
 */
bool v4l2cuse_tpg_supports(uint32_t fourcc);

/*
 * Set the frame format. For Y'CbCr formats @ycbcr_enc (601 or 709) and
 * @quantization (LIM_RANGE or FULL_RANGE) select the matrix and range;
 * RGB is always full range, GREY is full-range BT.601 luma. Widths of the
 * subsampled formats and heights of the 4:2:0 ones must be even.
 * Returns -EINVAL for anything else, -ENOMEM never (GLib aborts).
 */
int v4l2cuse_tpg_set_format(struct v4l2cuse_tpg *t, uint32_t fourcc, uint32_t width,
			    uint32_t height, uint32_t ycbcr_enc, uint32_t quantization);
/* Bytes of one frame in the current format. */
size_t v4l2cuse_tpg_frame_size(const struct v4l2cuse_tpg *t);

void v4l2cuse_tpg_set_params(struct v4l2cuse_tpg *t, const struct v4l2cuse_tpg_params *p);

/*
 * The overlay rectangle for @n_lines text lines (at most 8) in a frame of
 * @width x @height: {0, 0, min(8 + 12 * 24, width), min(8 + 16 * n_lines,
 * height)}, both rounded down to even; all zero for n_lines == 0.
 */
void v4l2cuse_tpg_overlay_rect_for(uint32_t width, uint32_t height, unsigned int n_lines,
				   struct v4l2_rect *ret);
/* The same for the current format. */
void v4l2cuse_tpg_overlay_rect(const struct v4l2cuse_tpg *t, unsigned int n_lines,
			       struct v4l2_rect *ret);

/* Whether every line may change from frame to frame (scroll or noise). */
bool v4l2cuse_tpg_is_scrolling(const struct v4l2cuse_tpg *t);
/* Where the box is in frame @frame; false without a box. */
bool v4l2cuse_tpg_box_rect(const struct v4l2cuse_tpg *t, uint32_t frame, struct v4l2_rect *ret);

/*
 * Render frame number @frame into @dst (v4l2cuse_tpg_frame_size() bytes), with
 * @n_lines lines of @text (ASCII; others print as '?'; cut at 24 columns)
 * in the overlay rectangle. n_lines 0: no overlay.
 */
void v4l2cuse_tpg_fill(struct v4l2cuse_tpg *t, uint8_t *dst, uint32_t frame,
		       const char *const *text, unsigned int n_lines);

/* The palette entry tpg would use for a named colour (for tests). */
struct v4l2cuse_tpg_pixel {
	uint8_t y, cb, cr;	/* Y'CbCr formats and GREY (y) */
	uint8_t r, g, b;	/* RGB formats */
};
