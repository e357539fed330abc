/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Motion-JPEG encoder with a per-MCU-row cache (see mjpeg.h).
 */

#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>
#include <jpeglib.h>

#include "util/macros.h"
#include "jpeg.h"
#include "mjpeg.h"

/* One encode's output split at the restart markers. */
struct mjpeg_coded {
	uint8_t *buf;
	size_t size, len;
	size_t hdr_len;		/* SOI .. end of SOS */
	size_t *seg_off, *seg_len;
	uint32_t n_segs;
};

struct v4l2cuse_mjpeg_enc {
	uint32_t width, height;
	uint32_t mcu_rows;
	int quality;
	struct jpeg_compress_struct cinfo;
	struct v4l2cuse_jpeg_err err;
	struct v4l2cuse_jpeg_dest dest;
	struct mjpeg_coded full;	/* the cache: last full encode */
	struct mjpeg_coded band[2 * V4L2CUSE_MJPEG_MAX_RANGES];
	bool cache_valid;
	/* Dirty in the cached frame. */
	struct v4l2cuse_mjpeg_rows sticky[V4L2CUSE_MJPEG_MAX_RANGES];
	unsigned int n_sticky;
	bool *row_dirty;		/* per MCU row, scratch */
	const struct mjpeg_coded **row_src;	/* per MCU row: full or a band */
	uint32_t *row_seg;		/* per MCU row: segment index in row_src */
	uint32_t pad_w[3];
	uint8_t *pad[3];		/* 8 padded rows per component */
};

struct v4l2cuse_mjpeg_enc *
v4l2cuse_mjpeg_enc_new(uint32_t width, uint32_t height, int quality)
{
	struct v4l2cuse_mjpeg_enc *e = g_new0(struct v4l2cuse_mjpeg_enc, 1);

	e->width = width;
	e->height = height;
	e->mcu_rows = (height + 7) / 8;
	e->quality = CLAMP_VAL(quality, 1, 100);
	e->cinfo.err = v4l2cuse_jpeg_err_init(&e->err);
	jpeg_create_compress(&e->cinfo);
	v4l2cuse_jpeg_dest_attach(&e->dest, &e->cinfo);

	e->pad_w[0] = (width + 15) / 16 * 16;
	e->pad_w[1] = e->pad_w[2] = e->pad_w[0] / 2;
	for (unsigned int p = 0; p < 3; p++)
		e->pad[p] = g_malloc0((size_t)e->pad_w[p] * 8);
	e->full.size = MAX((size_t)width * height, 65536);
	e->full.buf = g_malloc(e->full.size);
	e->full.seg_off = g_new0(size_t, e->mcu_rows);
	e->full.seg_len = g_new0(size_t, e->mcu_rows);
	for (unsigned int i = 0; i < G_N_ELEMENTS(e->band); i++) {
		e->band[i].size = 65536;
		e->band[i].buf = g_malloc(e->band[i].size);
		e->band[i].seg_off = g_new0(size_t, e->mcu_rows);
		e->band[i].seg_len = g_new0(size_t, e->mcu_rows);
	}
	e->row_dirty = g_new0(bool, e->mcu_rows);
	e->row_src = g_new0(const struct mjpeg_coded *, e->mcu_rows);
	e->row_seg = g_new0(uint32_t, e->mcu_rows);
	return e;
}

void
v4l2cuse_mjpeg_enc_free(struct v4l2cuse_mjpeg_enc *e)
{
	if (!e)
		return;
	jpeg_destroy_compress(&e->cinfo);
	for (unsigned int p = 0; p < 3; p++)
		g_free(e->pad[p]);
	g_free(e->full.buf);
	g_free(e->full.seg_off);
	g_free(e->full.seg_len);
	for (unsigned int i = 0; i < G_N_ELEMENTS(e->band); i++) {
		g_free(e->band[i].buf);
		g_free(e->band[i].seg_off);
		g_free(e->band[i].seg_len);
	}
	g_free(e->row_dirty);
	g_free(e->row_src);
	g_free(e->row_seg);
	g_free(e);
}

void
v4l2cuse_mjpeg_enc_invalidate(struct v4l2cuse_mjpeg_enc *e)
{
	e->cache_valid = false;
}

/* Split a finished encode into header and restart intervals. */
static int
mjpeg_parse(struct mjpeg_coded *t, uint32_t expect_segs)
{
	const uint8_t *b = t->buf;
	size_t pos = 2, start;

	t->n_segs = 0;
	if (t->len < 4 || b[0] != 0xff || b[1] != 0xd8)
		return -EIO;
	for (;;) {
		size_t seglen;

		if (pos + 4 > t->len || b[pos] != 0xff)
			return -EIO;
		seglen = (size_t)b[pos + 2] << 8 | b[pos + 3];
		if (b[pos + 1] == 0xda) {
			pos += 2 + seglen;
			break;
		}
		pos += 2 + seglen;
	}
	t->hdr_len = pos;
	start = pos;
	while (pos + 1 < t->len) {
		uint8_t m;

		if (b[pos] != 0xff) {
			pos++;
			continue;
		}
		m = b[pos + 1];
		if (m == 0x00) {
			pos += 2;
			continue;
		}
		if ((m >= 0xd0 && m <= 0xd7) || m == 0xd9) {
			if (t->n_segs >= expect_segs)
				return -EIO;
			t->seg_off[t->n_segs] = start;
			t->seg_len[t->n_segs] = pos - start;
			t->n_segs++;
			if (m == 0xd9)
				return t->n_segs == expect_segs ? 0 : -EIO;
			pos += 2;
			start = pos;
			continue;
		}
		return -EIO;
	}
	return -EIO;
}

/*
 * Encode lines [@first, @first + @rows) into @t as an image of its own
 * (@first a multiple of 8; @rows too unless the range ends the frame).
 */
static int
mjpeg_encode_rows(struct v4l2cuse_mjpeg_enc *e, const uint8_t *yuv, uint32_t first, uint32_t rows,
		  struct mjpeg_coded *t)
{
	struct jpeg_compress_struct *c = &e->cinfo;
	const uint8_t *plane[3];
	uint32_t pw[3] = { e->width, e->width / 2, e->width / 2 };
	JSAMPROW rowp[3][8];
	JSAMPARRAY arrays[3] = { rowp[0], rowp[1], rowp[2] };

	plane[0] = yuv;
	plane[1] = yuv + (size_t)e->width * e->height;
	plane[2] = plane[1] + (size_t)(e->width / 2) * e->height;

	/* @t's buffer grows as needed; it is @t's again after the encode, also on errors. */
	v4l2cuse_jpeg_dest_set(&e->dest, t->buf, t->size, true);
	if (setjmp(e->err.jb)) {
		jpeg_abort_compress(c);
		t->buf = e->dest.buf;
		t->size = e->dest.size;
		return -EIO;
	}
	c->image_width = e->width;
	c->image_height = rows;
	c->input_components = 3;
	c->in_color_space = JCS_YCbCr;
	jpeg_set_defaults(c);
	jpeg_set_colorspace(c, JCS_YCbCr);
	jpeg_set_quality(c, e->quality, TRUE);
	c->raw_data_in = TRUE;
	c->comp_info[0].h_samp_factor = 2;
	c->comp_info[0].v_samp_factor = 1;
	c->comp_info[1].h_samp_factor = 1;
	c->comp_info[1].v_samp_factor = 1;
	c->comp_info[2].h_samp_factor = 1;
	c->comp_info[2].v_samp_factor = 1;
	c->restart_in_rows = 1;
	c->dct_method = JDCT_ISLOW;
	c->optimize_coding = FALSE;
	jpeg_start_compress(c, TRUE);

	while (c->next_scanline < rows) {
		uint32_t y0 = c->next_scanline;

		for (unsigned int p = 0; p < 3; p++) {
			for (unsigned int i = 0; i < 8; i++) {
				uint32_t y = first + MIN(y0 + i, rows - 1);
				const uint8_t *src = plane[p] + (size_t)y * pw[p];

				if (pw[p] == e->pad_w[p]) {
					rowp[p][i] = (JSAMPROW)src;
				} else {
					uint8_t *d = e->pad[p] + (size_t)i * e->pad_w[p];

					memcpy(d, src, pw[p]);
					memset(d + pw[p], src[pw[p] - 1], e->pad_w[p] - pw[p]);
					rowp[p][i] = d;
				}
			}
		}
		jpeg_write_raw_data(c, arrays, 8);
	}
	jpeg_finish_compress(c);
	t->buf = e->dest.buf;
	t->size = e->dest.size;
	t->len = e->dest.len;
	return mjpeg_parse(t, (rows + 7) / 8);
}

static int
mjpeg_assemble(const struct v4l2cuse_mjpeg_enc *e, uint8_t *out, size_t out_len, size_t *ret_len)
{
	size_t len = e->full.hdr_len;

	for (uint32_t i = 0; i < e->mcu_rows; i++)
		len += e->row_src[i]->seg_len[e->row_seg[i]] + 2;
	if (len > out_len)
		return -ENOSPC;

	memcpy(out, e->full.buf, e->full.hdr_len);
	len = e->full.hdr_len;
	for (uint32_t i = 0; i < e->mcu_rows; i++) {
		const struct mjpeg_coded *src = e->row_src[i];
		uint32_t seg = e->row_seg[i];

		memcpy(out + len, src->buf + src->seg_off[seg], src->seg_len[seg]);
		len += src->seg_len[seg];
		out[len++] = 0xff;
		out[len++] = i + 1 < e->mcu_rows ? (uint8_t)(0xd0 + (i % 8)) : 0xd9;
	}
	*ret_len = len;
	return 0;
}

static void
mjpeg_mark(struct v4l2cuse_mjpeg_enc *e, const struct v4l2cuse_mjpeg_rows *r, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		uint32_t a = r[i].y0 / 8;
		uint32_t b = (uint32_t)MIN(((uint64_t)r[i].y1 + 7) / 8, e->mcu_rows);

		for (uint32_t m = a; m < b; m++)
			e->row_dirty[m] = true;
	}
}

/* Full encode into the cache; the rows map to it. */
static int
mjpeg_full(struct v4l2cuse_mjpeg_enc *e, const uint8_t *yuv,
	   const struct v4l2cuse_mjpeg_rows *dirty, unsigned int n_dirty)
{
	int r = mjpeg_encode_rows(e, yuv, 0, e->height, &e->full);

	e->cache_valid = r == 0;
	e->n_sticky = MIN(n_dirty, V4L2CUSE_MJPEG_MAX_RANGES);
	memcpy(e->sticky, dirty, e->n_sticky * sizeof(*dirty));
	for (uint32_t i = 0; i < e->mcu_rows; i++) {
		e->row_src[i] = &e->full;
		e->row_seg[i] = i;
	}
	return r;
}

/* Re-encode the dirty runs of MCU rows; 1: too many runs, do a full encode. */
static int
mjpeg_partial(struct v4l2cuse_mjpeg_enc *e, const uint8_t *yuv,
	      const struct v4l2cuse_mjpeg_rows *dirty, unsigned int n_dirty)
{
	unsigned int runs = 0;

	memset(e->row_dirty, 0, e->mcu_rows * sizeof(bool));
	mjpeg_mark(e, dirty, n_dirty);
	mjpeg_mark(e, e->sticky, e->n_sticky);
	for (uint32_t i = 0; i < e->mcu_rows; i++) {
		e->row_src[i] = &e->full;
		e->row_seg[i] = i;
	}
	for (uint32_t a = 0; a < e->mcu_rows;) {
		uint32_t b = a;
		int r;

		if (!e->row_dirty[a]) {
			a++;
			continue;
		}
		while (b < e->mcu_rows && e->row_dirty[b])
			b++;
		if (a == 0 && b == e->mcu_rows)
			return 1;
		if (runs == G_N_ELEMENTS(e->band))
			return 1;
		r = mjpeg_encode_rows(e, yuv, a * 8, MIN(b * 8, e->height) - a * 8,
				      &e->band[runs]);
		if (r < 0)
			return r;
		for (uint32_t m = a; m < b; m++) {
			e->row_src[m] = &e->band[runs];
			e->row_seg[m] = m - a;
		}
		runs++;
		a = b;
	}
	return 0;
}

int
v4l2cuse_mjpeg_enc_encode_ranges(struct v4l2cuse_mjpeg_enc *e, const uint8_t *yuv,
				 const struct v4l2cuse_mjpeg_rows *dirty, unsigned int n_dirty,
				 uint8_t *out, size_t out_len, size_t *ret_len)
{
	n_dirty = dirty ? MIN(n_dirty, V4L2CUSE_MJPEG_MAX_RANGES) : 0;
	for (;;) {
		int r = 1;

		if (e->cache_valid)
			r = mjpeg_partial(e, yuv, dirty, n_dirty);
		if (r == 1)
			r = mjpeg_full(e, yuv, dirty, n_dirty);
		if (r == 0)
			r = mjpeg_assemble(e, out, out_len, ret_len);
		if (r != -ENOSPC)
			return r;
		if (!v4l2cuse_jpeg_lower_quality(e->quality))
			return -ENOSPC;
		e->quality = v4l2cuse_jpeg_lower_quality(e->quality);
		e->cache_valid = false;
		g_debug("MJPEG frame too large, quality lowered to %d", e->quality);
	}
}
