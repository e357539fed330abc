/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The "NO SIGNAL" card (placeholder.h).
 */

#include "config.h"

#include <errno.h>
#include <string.h>

#include <glib.h>

#include "util/macros.h"
#include "v4l2cuse/format.h"
#include "convert.h"
#include "placeholder.h"
#include "tpg.h"

struct v4l2cuse_placeholder {
	struct v4l2cuse_convert *cv;
	struct v4l2_pix_format pix;	/* format of the cached frame */
	uint8_t *frame;
	uint32_t frame_used;
	bool frame_valid;
};

static const char ph_text[] = "NO SIGNAL";

/* The "NO SIGNAL" card in RGB24 at @w x @h. */
static uint8_t *
ph_render_card(uint32_t w, uint32_t h)
{
	const uint32_t cols = (uint32_t)strlen(ph_text) * 6 - 1, rows = 7;
	uint8_t *rgb = g_malloc((size_t)w * h * 3);
	uint32_t s, x0, y0;

	memset(rgb, V4L2CUSE_PLACEHOLDER_BG_RGB, (size_t)w * h * 3);
	s = MAX(1u, MIN(w * 6 / 10 / cols, h / 5 / rows));
	x0 = w > cols * s ? (w - cols * s) / 2 : 0;
	y0 = h > rows * s ? (h - rows * s) / 2 : 0;
	for (size_t i = 0; ph_text[i]; i++) {
		const uint8_t *glyph = v4l2cuse_tpg_font_5x7[ph_text[i] - 32];

		for (uint32_t gy = 0; gy < rows * s; gy++) {
			uint32_t y = y0 + gy;

			if (y >= h)
				break;
			for (uint32_t gx = 0; gx < 5 * s; gx++) {
				uint32_t x = x0 + (uint32_t)i * 6 * s + gx;

				if (x >= w)
					break;
				if (glyph[gy / s] & (0x10 >> (gx / s)))
					memset(rgb + ((size_t)y * w + x) * 3,
					       V4L2CUSE_PLACEHOLDER_FG_RGB, 3);
			}
		}
	}
	return rgb;
}

struct v4l2cuse_placeholder *
v4l2cuse_placeholder_new(void)
{
	struct v4l2cuse_placeholder *ph = g_new0(struct v4l2cuse_placeholder, 1);

	ph->cv = v4l2cuse_convert_new();
	return ph;
}

void
v4l2cuse_placeholder_free(struct v4l2cuse_placeholder *ph)
{
	if (!ph)
		return;
	v4l2cuse_convert_free(ph->cv);
	g_free(ph->frame);
	g_free(ph);
}

int
v4l2cuse_placeholder_fill(struct v4l2cuse_placeholder *ph, const struct v4l2_pix_format *pix,
			  void *dst, size_t len, uint32_t *ret_bytesused)
{
	if (len < pix->sizeimage)
		return -EINVAL;
	if (!ph->frame_valid || ph->pix.pixelformat != pix->pixelformat ||
	    ph->pix.width != pix->width || ph->pix.height != pix->height ||
	    ph->pix.sizeimage != pix->sizeimage) {
		g_autofree uint8_t *card = ph_render_card(pix->width, pix->height);
		struct v4l2cuse_image in = {
			.fourcc = V4L2_PIX_FMT_RGB24, .width = pix->width, .height = pix->height,
			.data = card, .size = (size_t)pix->width * pix->height * 3,
		};
		int r;

		ph->frame_valid = false;
		g_free(ph->frame);
		ph->frame = g_malloc(pix->sizeimage);
		r = v4l2cuse_convert_frame(ph->cv, &in, pix, ph->frame, pix->sizeimage,
					   &ph->frame_used);
		if (r < 0)
			return r;
		ph->pix = *pix;
		ph->frame_valid = true;
	}
	memcpy(dst, ph->frame, ph->frame_used);
	*ret_bytesused = ph->frame_used;
	return 0;
}
