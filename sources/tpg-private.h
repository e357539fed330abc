/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The test-pattern generator's insides, shared by tpg.c (the generator),
 * tpg-pattern.c (what each pattern draws where) and tpg-text.c (the text
 * overlay).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <glib.h>

#include "v4l2cuse/format.h"
#include "tpg.h"

/* Palette entries. */
enum {
	C_CSC_WHITE, C_CSC_YELLOW, C_CSC_CYAN, C_CSC_GREEN,
	C_CSC_MAGENTA, C_CSC_RED, C_CSC_BLUE, C_CSC_BLACK,
	C_75_WHITE, C_75_YELLOW, C_75_CYAN, C_75_GREEN,
	C_75_MAGENTA, C_75_RED, C_75_BLUE,
	C_WHITE, C_YELLOW, C_CYAN, C_GREEN, C_MAGENTA, C_RED, C_BLUE, C_BLACK,
	C_GREY40, C_GREY15, C_PLUGE_M2, C_PLUGE_P2, C_PLUGE_P4,
	C_CONTRAST, C_TEXT_BG, C_TEXT_FG,
	C_RAMP,				/* 256 grey levels */
	C_COUNT = C_RAMP + 256,
};

#define TPG_MAX_PAT 8
/* Overlay cells kept packed: blank and every glyph of the font. */
#define TPG_ATLAS_CELLS (1 + G_N_ELEMENTS(v4l2cuse_tpg_font_5x7))

struct v4l2cuse_tpg {
	const struct v4l2cuse_format_info *fi;	/* NULL: no format set */
	uint32_t width, height;
	uint32_t ycbcr_enc, quantization;
	size_t plane_off[3];
	size_t plane_bpl[3];
	size_t chroma_line;	/* bytes of a cached chroma line (2 * width pixels) */
	size_t frame_size;

	struct v4l2cuse_tpg_params p;
	bool dirty;		/* palette and line cache must be rebuilt */

	struct v4l2cuse_tpg_pixel pal[C_COUNT];
	unsigned int n_pat;
	uint8_t *row_pat;	/* pattern line of each (unflipped) row */
	uint16_t *idx;		/* 2 * width colour indices (scratch) */
	uint8_t *py, *pcb, *pcr;	/* a planar line for the packers (2 * width) */
	uint8_t *prgb;
	uint8_t *line[TPG_MAX_PAT][3];	/* cached lines, 2 * width pixels */
	uint8_t *pair[TPG_MAX_PAT][TPG_MAX_PAT][2];	/* 4:2:0 chroma of two lines */
	bool pair_valid[TPG_MAX_PAT][TPG_MAX_PAT];
	uint8_t *tmp[2][3];	/* blit rows */

	/*
	 * The text overlay as last drawn (tpg-text.c): its colour indices, the
	 * text of each line (a cell past its end is blank) and its rectangle
	 * packed in the frame's format
	 * (lines t->plane_bpl[] long, planes at ov_off[]), so that a frame
	 * packs again only the cells whose character changed and copies the
	 * rest. ov_valid is cleared by anything that changes the packing: the
	 * format, the palette.
	 */
	uint16_t *canvas;
	size_t canvas_size;
	char ov_text[V4L2CUSE_TPG_TEXT_MAX_LINES][V4L2CUSE_TPG_TEXT_COLS];
	size_t ov_len[V4L2CUSE_TPG_TEXT_MAX_LINES];
	uint32_t ov_width, ov_height;
	bool ov_valid;
	uint8_t *ov_img;
	size_t ov_off[3];
	/*
	 * Every glyph's cell as packed the first time it was drawn (slot 0:
	 * blank), ov_cell_bytes each: a cell that changes to a glyph packed
	 * before is copied from here instead of drawn and packed again.
	 * Cleared with the overlay (ov_valid).
	 */
	uint8_t *ov_atlas;
	size_t ov_cell_bytes;
	bool ov_atlas_valid[TPG_ATLAS_CELLS];
	uint16_t *solid;	/* one row for solid rectangles */
	uint64_t rng;
};

/* Luma rows per chroma row (2 for 4:2:0). */
static inline unsigned int
tpg_vsub(const struct v4l2cuse_format_info *fi)
{
	return fi->n_planes > 1 ? fi->vdiv : 1;
}

/*
 * Bytes of a chroma plane's row for @w pixels (also the offset of pixel
 * @w in it): NV's interleaved CbCr as many as the pixels, each of the three
 * planes of the 4:2:x planar formats half.
 */
static inline size_t
tpg_chroma_bytes(const struct v4l2cuse_format_info *fi, size_t w)
{
	return fi->n_planes == 2 ? w : w / 2;
}

/* tpg.c: write colour indices to the frame (tpg.c's comments). */
void v4l2cuse_tpg_blit(struct v4l2cuse_tpg *t, uint8_t *dst, const size_t *plane_off, uint32_t x0,
		       uint32_t y0, uint32_t rw, uint32_t rh, const uint16_t *idx, size_t stride);
void v4l2cuse_tpg_fill_rect(struct v4l2cuse_tpg *t, uint8_t *dst, uint32_t x0, uint32_t y0,
			    uint32_t rw, uint32_t rh, uint16_t color);

/* tpg-pattern.c: distinct lines of the pattern, each row's line, colours. */
unsigned int v4l2cuse_tpg_pat_lines(enum v4l2cuse_tpg_pattern pat);
unsigned int v4l2cuse_tpg_row_pat(const struct v4l2cuse_tpg *t, uint32_t y);
uint16_t v4l2cuse_tpg_color_at(const struct v4l2cuse_tpg *t, unsigned int line, uint32_t x);

/* tpg-text.c: the text overlay. */
void v4l2cuse_tpg_draw_text(struct v4l2cuse_tpg *t, uint8_t *dst, const char *const *text,
			    unsigned int n_lines);
