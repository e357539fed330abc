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

void
v4l2cuse_tpg_draw_text(struct v4l2cuse_tpg *t, uint8_t *dst, const char *const *text,
		       unsigned int n_lines)
{
	struct v4l2_rect r;
	size_t cw;

	v4l2cuse_tpg_overlay_rect(t, n_lines, &r);
	if (!r.width || !r.height)
		return;
	cw = r.width;
	for (size_t i = 0; i < (size_t)r.width * r.height; i++)
		t->canvas[i] = C_TEXT_BG;
	for (unsigned int l = 0; l < MIN(n_lines, V4L2CUSE_TPG_TEXT_MAX_LINES); l++) {
		const char *s = text[l] ? text[l] : "";

		for (unsigned int col = 0; col < V4L2CUSE_TPG_TEXT_COLS && s[col]; col++) {
			unsigned char c = (unsigned char)s[col];
			const uint8_t *g =
				v4l2cuse_tpg_font_5x7[(c >= 32 && c < 127 ? c : '?') - 32];
			uint32_t cx = V4L2CUSE_TPG_TEXT_PAD + col * V4L2CUSE_TPG_TEXT_CELL_W + 1;
			uint32_t cy = V4L2CUSE_TPG_TEXT_PAD + l * V4L2CUSE_TPG_TEXT_CELL_H + 1;

			for (uint32_t gy = 0; gy < 7; gy++) {
				for (uint32_t gx = 0; gx < 5; gx++) {
					if (!(g[gy] & (0x10 >> gx)))
						continue;
					for (uint32_t dy = 0; dy < 2; dy++) {
						for (uint32_t dx = 0; dx < 2; dx++) {
							uint32_t px = cx + 2 * gx + dx;
							uint32_t py = cy + 2 * gy + dy;

							if (px < r.width && py < r.height)
								t->canvas[py * cw + px] = C_TEXT_FG;
						}
					}
				}
			}
		}
	}
	v4l2cuse_tpg_blit(t, dst, 0, 0, r.width, r.height, t->canvas, cw);
}
