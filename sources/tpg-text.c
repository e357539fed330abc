/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The test pattern's text overlay (tpg.h): where it goes and how its 5x7
 * glyphs (tpg-font.c) are drawn, doubled, into 12x16 cells.
 */

#include "config.h"

#include <string.h>

#include <glib.h>

#include "util/macros.h"
#include "tpg-private.h"

void
v4l2cuse_tpg_overlay_rect_for(uint32_t width, uint32_t height, unsigned int n_lines,
			      struct v4l2_rect *ret)
{
	uint32_t w = 2 * V4L2CUSE_TPG_TEXT_PAD + V4L2CUSE_TPG_TEXT_CELL_W * V4L2CUSE_TPG_TEXT_COLS;
	uint32_t h;

	n_lines = MIN(n_lines, V4L2CUSE_TPG_TEXT_MAX_LINES);
	h = 2 * V4L2CUSE_TPG_TEXT_PAD + V4L2CUSE_TPG_TEXT_CELL_H * n_lines;
	memset(ret, 0, sizeof(*ret));
	if (n_lines == 0)
		return;
	ret->width = MIN(w, width) & ~1u;
	ret->height = MIN(h, height) & ~1u;
}

void
v4l2cuse_tpg_overlay_rect(const struct v4l2cuse_tpg *t, unsigned int n_lines, struct v4l2_rect *ret)
{
	if (!t->fi) {
		memset(ret, 0, sizeof(*ret));
		return;
	}
	v4l2cuse_tpg_overlay_rect_for(t->width, t->height, n_lines, ret);
}

/* The glyph of character @c. */
static const uint8_t *
tpg_glyph(char c)
{
	unsigned char u = (unsigned char)c;

	return v4l2cuse_tpg_font_5x7[(u >= 32 && u < 127 ? u : '?') - 32];
}

/*
 * Draw glyph @g (NULL: none) into the canvas cell at (@x, @y), its 5x7
 * dots doubled and one pixel in from the cell's corner, clipped to the
 * overlay's @r.
 */
static void
tpg_draw_cell(struct v4l2cuse_tpg *t, const struct v4l2_rect *r, uint32_t x, uint32_t y,
	      const uint8_t *g)
{
	uint32_t cw = MIN(V4L2CUSE_TPG_TEXT_CELL_W, r->width - x);
	uint32_t ch = MIN(V4L2CUSE_TPG_TEXT_CELL_H, r->height - y);
	uint16_t *cell = t->canvas + (size_t)y * r->width + x;

	for (uint32_t cy = 0; cy < ch; cy++) {
		for (uint32_t cx = 0; cx < cw; cx++) {
			uint32_t gx = (cx - 1) / 2, gy = (cy - 1) / 2;
			bool on = g && cx >= 1 && cy >= 1 && gx < 5 && gy < 7 &&
				  (g[gy] & (0x10 >> gx));

			cell[(size_t)cy * r->width + cx] = on ? C_TEXT_FG : C_TEXT_BG;
		}
	}
}

/*
 * The overlay is a grid of cells, V4L2CUSE_TPG_TEXT_CELL_W x _H pixels from
 * (PAD, PAD), on the text background. Cells start at even coordinates and
 * have even sizes, so a cell packs on its own into the same bytes as in the
 * whole rectangle (4:2:2 pairs and 4:2:0 line pairs never straddle two
 * cells): a frame packs only the cells whose glyph changed since the last,
 * usually the counter's and the clock's last digits, into the overlay's
 * image, and copies that image into the frame.
 */
void
v4l2cuse_tpg_draw_text(struct v4l2cuse_tpg *t, uint8_t *dst, const char *const *text,
		       unsigned int n_lines)
{
	const struct v4l2cuse_format_info *fi = t->fi;
	unsigned int vsub = tpg_vsub(fi);
	size_t bpp = fi->bpp[0] / 8;
	bool all;
	struct v4l2_rect r;

	v4l2cuse_tpg_overlay_rect(t, n_lines, &r);
	if (!r.width || !r.height)
		return;
	n_lines = MIN(n_lines, V4L2CUSE_TPG_TEXT_MAX_LINES);
	all = !t->ov_valid || r.width != t->ov_width || r.height != t->ov_height;
	if (all) {
		for (size_t i = 0; i < (size_t)r.width * r.height; i++)
			t->canvas[i] = C_TEXT_BG;
		v4l2cuse_tpg_blit(t, t->ov_img, t->ov_off, 0, 0, r.width, r.height, t->canvas,
				  r.width);
		memset(t->ov_glyph, 0, sizeof(t->ov_glyph));
		t->ov_width = r.width;
		t->ov_height = r.height;
		t->ov_valid = true;
	}
	/* Lines past @n_lines are blank: a clipped overlay keeps its height. */
	for (unsigned int l = 0; l < V4L2CUSE_TPG_TEXT_MAX_LINES; l++) {
		const char *s = l < n_lines && text[l] ? text[l] : "";
		size_t len = strnlen(s, V4L2CUSE_TPG_TEXT_COLS);
		uint32_t y = V4L2CUSE_TPG_TEXT_PAD + l * V4L2CUSE_TPG_TEXT_CELL_H;

		for (unsigned int col = 0; col < V4L2CUSE_TPG_TEXT_COLS; col++) {
			uint32_t x = V4L2CUSE_TPG_TEXT_PAD + col * V4L2CUSE_TPG_TEXT_CELL_W;
			/* past the end of the line: a blank cell */
			const uint8_t *g = col < len ? tpg_glyph(s[col]) : NULL;

			if (g == t->ov_glyph[l][col] || x >= r.width || y >= r.height)
				continue;
			t->ov_glyph[l][col] = g;
			tpg_draw_cell(t, &r, x, y, g);
			v4l2cuse_tpg_blit(t, t->ov_img, t->ov_off, x, y,
					  MIN(V4L2CUSE_TPG_TEXT_CELL_W, r.width - x),
					  MIN(V4L2CUSE_TPG_TEXT_CELL_H, r.height - y),
					  t->canvas + (size_t)y * r.width + x, r.width);
		}
	}

	for (uint32_t y = 0; y < r.height; y++)
		memcpy(dst + y * t->plane_bpl[0], t->ov_img + y * t->plane_bpl[0], r.width * bpp);
	for (unsigned int p = 1; p < fi->n_planes; p++) {
		size_t n = tpg_chroma_bytes(fi, r.width);

		for (uint32_t cy = 0; cy < r.height / vsub; cy++)
			memcpy(dst + t->plane_off[p] + cy * t->plane_bpl[p],
			       t->ov_img + t->ov_off[p] + cy * t->plane_bpl[p], n);
	}
}
