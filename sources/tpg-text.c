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

/* The atlas slot of glyph @g (NULL: blank). */
static unsigned int
tpg_atlas_slot(const uint8_t *g)
{
	return g ? 1 + (unsigned int)((g - v4l2cuse_tpg_font_5x7[0]) /
				      sizeof(v4l2cuse_tpg_font_5x7[0])) : 0;
}

/*
 * Copy the full cell at (@x, @y) of the overlay's image into @slot, or
 * back (@to_img).
 */
static void
tpg_cell_copy(struct v4l2cuse_tpg *t, uint32_t x, uint32_t y, uint8_t *slot, bool to_img)
{
	const struct v4l2cuse_format_info *fi = t->fi;
	unsigned int vsub = tpg_vsub(fi);

	for (unsigned int p = 0; p < fi->n_planes; p++) {
		unsigned int sub = p ? vsub : 1;
		size_t n = p ? tpg_chroma_bytes(fi, V4L2CUSE_TPG_TEXT_CELL_W) :
			       V4L2CUSE_TPG_TEXT_CELL_W * (size_t)(fi->bpp[0] / 8);
		size_t xo = p ? tpg_chroma_bytes(fi, x) : x * (size_t)(fi->bpp[0] / 8);

		for (uint32_t r = 0; r < V4L2CUSE_TPG_TEXT_CELL_H / sub; r++) {
			uint8_t *img = t->ov_img + t->ov_off[p] + (y / sub + r) * t->plane_bpl[p] + xo;

			if (to_img)
				memcpy(img, slot, n);
			else
				memcpy(slot, img, n);
			slot += n;
		}
	}
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
 * cells): a frame writes only the cells whose glyph changed since the last,
 * usually the counter's and the clock's last digits, into the overlay's
 * image, and copies that image into the frame. A full cell is drawn and
 * packed the first time its glyph shows, and copied from the atlas after.
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
		memset(t->ov_len, 0, sizeof(t->ov_len));
		memset(t->ov_atlas_valid, 0, sizeof(t->ov_atlas_valid));
		t->ov_width = r.width;
		t->ov_height = r.height;
		t->ov_valid = true;
	}
	/* Lines past @n_lines are blank: a clipped overlay keeps its height. */
	for (unsigned int l = 0; l < V4L2CUSE_TPG_TEXT_MAX_LINES; l++) {
		const char *s = l < n_lines && text[l] ? text[l] : "";
		size_t len = strnlen(s, V4L2CUSE_TPG_TEXT_COLS), was = t->ov_len[l];
		uint32_t y = V4L2CUSE_TPG_TEXT_PAD + l * V4L2CUSE_TPG_TEXT_CELL_H;

		if (y >= r.height || (len == was && !memcmp(s, t->ov_text[l], len)))
			continue;
		for (unsigned int col = 0; col < MAX(len, was); col++) {
			uint32_t x = V4L2CUSE_TPG_TEXT_PAD + col * V4L2CUSE_TPG_TEXT_CELL_W;
			/* past the end of the line: a blank cell */
			char c = col < len ? s[col] : 0;
			const uint8_t *g = c ? tpg_glyph(c) : NULL;
			unsigned int a = tpg_atlas_slot(g);
			uint8_t *slot = t->ov_atlas + a * t->ov_cell_bytes;
			bool full = x + V4L2CUSE_TPG_TEXT_CELL_W <= r.width &&
				    y + V4L2CUSE_TPG_TEXT_CELL_H <= r.height;

			if (c == (col < was ? t->ov_text[l][col] : 0) || x >= r.width)
				continue;
			if (full && t->ov_atlas_valid[a]) {
				tpg_cell_copy(t, x, y, slot, true);
				continue;
			}
			tpg_draw_cell(t, &r, x, y, g);
			v4l2cuse_tpg_blit(t, t->ov_img, t->ov_off, x, y,
					  MIN(V4L2CUSE_TPG_TEXT_CELL_W, r.width - x),
					  MIN(V4L2CUSE_TPG_TEXT_CELL_H, r.height - y),
					  t->canvas + (size_t)y * r.width + x, r.width);
			if (full) {
				tpg_cell_copy(t, x, y, slot, false);
				t->ov_atlas_valid[a] = true;
			}
		}
		memcpy(t->ov_text[l], s, len);
		t->ov_len[l] = len;
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
