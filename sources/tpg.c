/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tpg: test-pattern generator (see tpg.h): the generator itself (format,
 * palette, line cache, frame assembly, the box and the border). The
 * patterns' geometry is in tpg-pattern.c, the text overlay in tpg-text.c
 * (tpg-private.h).
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include <glib.h>

#include "util/macros.h"
#include "v4l2cuse/format.h"
#include "pack.h"
#include "tpg-private.h"

/* R'G'B' of the fixed colours, 0..1 (PLUGE steps slightly outside). */
static const double tpg_rgb[C_RAMP][3] = {
#define V8(x) ((x) / 255.0)
	[C_CSC_WHITE] = { V8(191), V8(191), V8(191) },
	[C_CSC_YELLOW] = { V8(191), V8(191), V8(50) },
	[C_CSC_CYAN] = { V8(50), V8(191), V8(191) },
	[C_CSC_GREEN] = { V8(50), V8(191), V8(50) },
	[C_CSC_MAGENTA] = { V8(191), V8(50), V8(191) },
	[C_CSC_RED] = { V8(191), V8(50), V8(50) },
	[C_CSC_BLUE] = { V8(50), V8(50), V8(191) },
	[C_CSC_BLACK] = { V8(50), V8(50), V8(50) },
	[C_75_WHITE] = { V8(191), V8(191), V8(191) },
	[C_75_YELLOW] = { V8(191), V8(191), 0 },
	[C_75_CYAN] = { 0, V8(191), V8(191) },
	[C_75_GREEN] = { 0, V8(191), 0 },
	[C_75_MAGENTA] = { V8(191), 0, V8(191) },
	[C_75_RED] = { V8(191), 0, 0 },
	[C_75_BLUE] = { 0, 0, V8(191) },
	[C_WHITE] = { 1, 1, 1 },
	[C_YELLOW] = { 1, 1, 0 },
	[C_CYAN] = { 0, 1, 1 },
	[C_GREEN] = { 0, 1, 0 },
	[C_MAGENTA] = { 1, 0, 1 },
	[C_RED] = { 1, 0, 0 },
	[C_BLUE] = { 0, 0, 1 },
	[C_BLACK] = { 0, 0, 0 },
	[C_GREY40] = { 0.40, 0.40, 0.40 },
	[C_GREY15] = { 0.15, 0.15, 0.15 },
	[C_PLUGE_M2] = { -0.02, -0.02, -0.02 },
	[C_PLUGE_P2] = { 0.02, 0.02, 0.02 },
	[C_PLUGE_P4] = { 0.04, 0.04, 0.04 },
#undef V8
};

bool
v4l2cuse_tpg_supports(uint32_t fourcc)
{
	const struct v4l2cuse_format_info *fi = v4l2cuse_format_lookup(fourcc);

	return fi && !fi->compressed && (fi->output || fourcc == V4L2_PIX_FMT_YUV422P);
}

struct v4l2cuse_tpg *
v4l2cuse_tpg_new(void)
{
	struct v4l2cuse_tpg *t = g_new0(struct v4l2cuse_tpg, 1);
	const struct v4l2cuse_tpg_params def = V4L2CUSE_TPG_PARAMS_DEFAULT;

	t->p = def;
	t->dirty = true;
	return t;
}

static void
tpg_free_buffers(struct v4l2cuse_tpg *t)
{
	for (unsigned int i = 0; i < TPG_MAX_PAT; i++) {
		for (unsigned int p = 0; p < 3; p++)
			g_clear_pointer(&t->line[i][p], g_free);
		for (unsigned int j = 0; j < TPG_MAX_PAT; j++) {
			g_clear_pointer(&t->pair[i][j][0], g_free);
			g_clear_pointer(&t->pair[i][j][1], g_free);
			t->pair_valid[i][j] = false;
		}
	}
	for (unsigned int r = 0; r < 2; r++) {
		for (unsigned int p = 0; p < 3; p++)
			g_clear_pointer(&t->tmp[r][p], g_free);
	}
	g_clear_pointer(&t->row_pat, g_free);
	g_clear_pointer(&t->idx, g_free);
	g_clear_pointer(&t->py, g_free);
	g_clear_pointer(&t->pcb, g_free);
	g_clear_pointer(&t->pcr, g_free);
	g_clear_pointer(&t->prgb, g_free);
	g_clear_pointer(&t->canvas, g_free);
	g_clear_pointer(&t->ov_img, g_free);
	g_clear_pointer(&t->ov_atlas, g_free);
	t->ov_valid = false;
	g_clear_pointer(&t->solid, g_free);
}

void
v4l2cuse_tpg_free(struct v4l2cuse_tpg *t)
{
	if (!t)
		return;
	tpg_free_buffers(t);
	g_free(t);
}

int
v4l2cuse_tpg_set_format(struct v4l2cuse_tpg *t, uint32_t fourcc, uint32_t width, uint32_t height,
			uint32_t ycbcr_enc, uint32_t quantization)
{
	const struct v4l2cuse_format_info *fi = v4l2cuse_format_lookup(fourcc);
	size_t bpl0, csize, ov_size;
	uint32_t ov_h;

	if (!v4l2cuse_tpg_supports(fourcc) ||
	    !v4l2cuse_format_frame_size(fi, width, height, 0, NULL, NULL))
		return -EINVAL;

	tpg_free_buffers(t);
	t->fi = fi;
	t->width = width;
	t->height = height;
	t->ycbcr_enc = ycbcr_enc == V4L2_YCBCR_ENC_709 ? V4L2_YCBCR_ENC_709 : V4L2_YCBCR_ENC_601;
	t->quantization = quantization == V4L2_QUANTIZATION_FULL_RANGE ?
			  V4L2_QUANTIZATION_FULL_RANGE : V4L2_QUANTIZATION_LIM_RANGE;

	memset(t->plane_off, 0, sizeof(t->plane_off));
	memset(t->plane_bpl, 0, sizeof(t->plane_bpl));
	t->frame_size = v4l2cuse_format_frame_size(fi, width, height, 0, t->plane_off,
						   t->plane_bpl);
	bpl0 = t->plane_bpl[0];
	/* A cached chroma line covers 2 * width pixels, like the luma lines. */
	t->chroma_line = 2 * t->plane_bpl[1];
	csize = t->chroma_line;

	t->row_pat = g_malloc0(height);
	t->idx = g_new0(uint16_t, 2 * (size_t)width);
	t->py = g_malloc0(2 * (size_t)width);
	t->pcb = g_malloc0(width);
	t->pcr = g_malloc0(width);
	t->prgb = g_malloc0(6 * (size_t)width);
	t->solid = g_new0(uint16_t, width);
	for (unsigned int i = 0; i < TPG_MAX_PAT; i++) {
		t->line[i][0] = g_malloc0(2 * bpl0);
		for (unsigned int p = 1; p < fi->n_planes; p++)
			t->line[i][p] = g_malloc0(csize);
	}
	for (unsigned int r = 0; r < 2; r++) {
		t->tmp[r][0] = g_malloc0(bpl0);
		for (unsigned int p = 1; p < fi->n_planes; p++)
			t->tmp[r][p] = g_malloc0(width);
	}
	t->canvas_size = (size_t)V4L2CUSE_TPG_TEXT_CELL_H * V4L2CUSE_TPG_TEXT_MAX_LINES +
			 2 * V4L2CUSE_TPG_TEXT_PAD;
	t->canvas_size *= (size_t)V4L2CUSE_TPG_TEXT_CELL_W * V4L2CUSE_TPG_TEXT_COLS +
			  2 * V4L2CUSE_TPG_TEXT_PAD;
	t->canvas = g_new0(uint16_t, t->canvas_size);
	/* The overlay's image: the frame's layout, as many lines as it covers. */
	ov_h = MIN(2 * V4L2CUSE_TPG_TEXT_PAD +
		   V4L2CUSE_TPG_TEXT_CELL_H * V4L2CUSE_TPG_TEXT_MAX_LINES, height) & ~1u;
	t->ov_off[0] = 0;
	ov_size = bpl0 * ov_h;
	for (unsigned int p = 1; p < fi->n_planes; p++) {
		t->ov_off[p] = ov_size;
		ov_size += t->plane_bpl[p] * (ov_h / tpg_vsub(fi));
	}
	t->ov_img = g_malloc0(MAX(ov_size, 1));
	t->ov_cell_bytes = V4L2CUSE_TPG_TEXT_CELL_H * V4L2CUSE_TPG_TEXT_CELL_W * (fi->bpp[0] / 8);
	for (unsigned int p = 1; p < fi->n_planes; p++)
		t->ov_cell_bytes += V4L2CUSE_TPG_TEXT_CELL_H / tpg_vsub(fi) *
				    tpg_chroma_bytes(fi, V4L2CUSE_TPG_TEXT_CELL_W);
	t->ov_atlas = g_malloc(TPG_ATLAS_CELLS * t->ov_cell_bytes);
	t->dirty = true;
	return 0;
}

size_t
v4l2cuse_tpg_frame_size(const struct v4l2cuse_tpg *t)
{
	return t->fi ? t->frame_size : 0;
}

void
v4l2cuse_tpg_set_params(struct v4l2cuse_tpg *t, const struct v4l2cuse_tpg_params *p)
{
	const struct v4l2cuse_tpg_params *o = &t->p;

	if (p->pattern != o->pattern || p->brightness != o->brightness ||
	    p->contrast != o->contrast || p->saturation != o->saturation ||
	    p->hue != o->hue || p->hflip != o->hflip || p->vflip != o->vflip)
		t->dirty = true;
	t->p = *p;
	t->p.pattern = CLAMP_VAL((int)p->pattern, 0, V4L2CUSE_TPG_PAT_COUNT - 1);
	t->p.brightness = CLAMP_VAL(p->brightness, 0, 255);
	t->p.contrast = CLAMP_VAL(p->contrast, 0, 255);
	t->p.saturation = CLAMP_VAL(p->saturation, 0, 255);
	t->p.hue = CLAMP_VAL(p->hue, -128, 127);
}

bool
v4l2cuse_tpg_is_scrolling(const struct v4l2cuse_tpg *t)
{
	return t->p.hscroll || t->p.vscroll || t->p.pattern == V4L2CUSE_TPG_PAT_NOISE;
}

/* --- colours ------------------------------------------------------------ */

static uint8_t
tpg_round(double v, double lo, double hi)
{
	v = floor(v + 0.5);
	return (uint8_t)(v < lo ? lo : v > hi ? hi : v);
}

static void
tpg_compute_color(const struct v4l2cuse_tpg *t, const double rgb[3], bool controls, bool excursion,
		  struct v4l2cuse_tpg_pixel *out)
{
	const struct v4l2cuse_tpg_params *p = &t->p;
	bool identity = !controls || (p->brightness == 128 && p->contrast == 128 &&
				      p->saturation == 128 && p->hue == 0);
	bool yuv = t->fi->yuv;
	bool full = !yuv || t->quantization == V4L2_QUANTIZATION_FULL_RANGE;
	bool bt709 = yuv && t->ycbcr_enc == V4L2_YCBCR_ENC_709;
	double kr = bt709 ? 0.2126 : 0.299, kb = bt709 ? 0.0722 : 0.114;
	double kg = 1.0 - kr - kb;
	double r = rgb[0], g = rgb[1], b = rgb[2];
	double luma = kr * r + kg * g + kb * b;
	double yscale = full ? 255.0 : 219.0, cscale = full ? 255.0 : 224.0;
	double black = full ? 0.0 : 16.0;
	double y, cb, cr;

	memset(out, 0, sizeof(*out));
	if (t->fi->fourcc == V4L2_PIX_FMT_GREY) {
		y = 255.0 * luma;
		if (!identity)
			y = y * p->contrast / 128.0 + (p->brightness - 128);
		out->y = tpg_round(y, 0, 255);
		out->cb = out->cr = 128;
		return;
	}
	if (!yuv && identity) {
		out->r = tpg_round(r * 255.0, 0, 255);
		out->g = tpg_round(g * 255.0, 0, 255);
		out->b = tpg_round(b * 255.0, 0, 255);
		return;
	}

	y = black + yscale * luma;
	cb = cscale * (b - luma) / (2.0 * (1.0 - kb));
	cr = cscale * (r - luma) / (2.0 * (1.0 - kr));
	if (!identity) {
		double th = p->hue * G_PI / 128.0;
		double gain = p->contrast * p->saturation / (128.0 * 128.0);
		double cb2 = cb * cos(th) + cr * sin(th);
		double cr2 = cr * cos(th) - cb * sin(th);

		y = black + (y - black) * p->contrast / 128.0 + (p->brightness - 128);
		cb = cb2 * gain;
		cr = cr2 * gain;
	}
	if (yuv) {
		if (full) {
			out->y = tpg_round(y, 0, 255);
			out->cb = tpg_round(cb + 128.0, 0, 255);
			out->cr = tpg_round(cr + 128.0, 0, 255);
		} else {
			out->y = tpg_round(y, excursion ? 1 : 16, excursion ? 254 : 235);
			out->cb = tpg_round(cb + 128.0, 16, 240);
			out->cr = tpg_round(cr + 128.0, 16, 240);
		}
		return;
	}
	/* RGB with picture controls: back from full-range BT.601 Y'CbCr. */
	luma = y / 255.0;
	r = luma + 2.0 * (1.0 - kr) * cr / 255.0;
	b = luma + 2.0 * (1.0 - kb) * cb / 255.0;
	g = (luma - kr * r - kb * b) / kg;
	out->r = tpg_round(r * 255.0, 0, 255);
	out->g = tpg_round(g * 255.0, 0, 255);
	out->b = tpg_round(b * 255.0, 0, 255);
}

static void
tpg_build_palette(struct v4l2cuse_tpg *t)
{
	enum v4l2cuse_tpg_pattern pat = t->p.pattern;
	static const double black[3] = { 0, 0, 0 }, white[3] = { 1, 1, 1 };

	for (unsigned int c = 0; c < C_CONTRAST; c++) {
		bool pluge = c == C_PLUGE_M2 || c == C_PLUGE_P2 || c == C_PLUGE_P4;

		tpg_compute_color(t, tpg_rgb[c], true, pluge, &t->pal[c]);
	}
	t->pal[C_CONTRAST] = t->pal[pat == V4L2CUSE_TPG_PAT_GREEN ? C_RED : C_GREEN];
	/* The overlay is an annotation: no picture controls, no flips. */
	tpg_compute_color(t, pat == V4L2CUSE_TPG_PAT_BLACK ? white : black, false, false,
			  &t->pal[C_TEXT_BG]);
	tpg_compute_color(t, pat == V4L2CUSE_TPG_PAT_BLACK ? black : white, false, false,
			  &t->pal[C_TEXT_FG]);
	for (unsigned int i = 0; i < 256; i++) {
		double v[3] = { i / 255.0, i / 255.0, i / 255.0 };

		tpg_compute_color(t, v, true, false, &t->pal[C_RAMP + i]);
	}
}

/* --- packing ------------------------------------------------------------ */

static inline uint8_t
tpg_avg(uint8_t a, uint8_t b)
{
	return (uint8_t)((a + b + 1) >> 1);
}

/*
 * Convert @n colour indices (n even for the subsampled formats) into
 * plane 0 bytes at @o0 and, for planar formats, one line of chroma at @o1
 * (NV: interleaved, n bytes) or @o1/@o2 (3 planes: n / 2 bytes each, in
 * memory order, i.e. Cr first for YV12): the palette gives a planar line
 * (chroma of pixel pairs averaged) that the shared packers (pack.h) write.
 */
static void
tpg_pack(struct v4l2cuse_tpg *t, const uint16_t *idx, size_t n, uint8_t *o0, uint8_t *o1,
	 uint8_t *o2)
{
	const struct v4l2cuse_tpg_pixel *pal = t->pal;

	if (!t->fi->yuv && t->fi->fourcc != V4L2_PIX_FMT_GREY) {
		for (size_t x = 0; x < n; x++) {
			t->prgb[3 * x] = pal[idx[x]].r;
			t->prgb[3 * x + 1] = pal[idx[x]].g;
			t->prgb[3 * x + 2] = pal[idx[x]].b;
		}
		v4l2cuse_pack_rgb_line(t->fi->fourcc, t->prgb, n, o0);
		return;
	}
	for (size_t x = 0; x < n; x++)
		t->py[x] = pal[idx[x]].y;
	for (size_t x = 0; t->fi->yuv && x + 1 < n; x += 2) {
		t->pcb[x / 2] = tpg_avg(pal[idx[x]].cb, pal[idx[x + 1]].cb);
		t->pcr[x / 2] = tpg_avg(pal[idx[x]].cr, pal[idx[x + 1]].cr);
	}
	v4l2cuse_pack_yuv_line(t->fi->fourcc, t->py, t->pcb, t->pcr, n, o0, o1, o2);
}

static uint64_t
tpg_rand(uint64_t *state)
{
	/* splitmix64: cheap, good enough for noise, deterministic per seed */
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void
tpg_build_lines(struct v4l2cuse_tpg *t)
{
	uint32_t w = t->width;

	tpg_build_palette(t);
	t->n_pat = v4l2cuse_tpg_pat_lines(t->p.pattern);
	for (uint32_t y = 0; y < t->height; y++)
		t->row_pat[y] = (uint8_t)v4l2cuse_tpg_row_pat(t, y);

	for (unsigned int pl = 0; pl < t->n_pat; pl++) {
		if (t->p.pattern == V4L2CUSE_TPG_PAT_NOISE) {
			uint64_t seed = 0x7e57;

			for (size_t x = 0; x < 2 * (size_t)w; x++)
				t->idx[x] = C_RAMP + (tpg_rand(&seed) & 0xff);
		} else {
			for (uint32_t x = 0; x < w; x++) {
				uint16_t c =
					v4l2cuse_tpg_color_at(t, pl, t->p.hflip ? w - 1 - x : x);

				t->idx[x] = c;
				t->idx[w + x] = c;
			}
		}
		tpg_pack(t, t->idx, 2 * (size_t)w, t->line[pl][0], t->line[pl][1],
			 t->line[pl][2]);
	}
	memset(t->pair_valid, 0, sizeof(t->pair_valid));
	t->ov_valid = false;	/* the palette may have changed */
	t->dirty = false;
}

/* The averaged 4:2:0 chroma of pattern lines @a and @b (lazily cached). */
static uint8_t *const *
tpg_pair(struct v4l2cuse_tpg *t, unsigned int a, unsigned int b)
{
	if (!t->pair_valid[a][b]) {
		for (unsigned int p = 1; p < t->fi->n_planes; p++) {
			uint8_t *d, *s1 = t->line[a][p], *s2 = t->line[b][p];

			if (!t->pair[a][b][p - 1])
				t->pair[a][b][p - 1] = g_malloc(t->chroma_line);
			d = t->pair[a][b][p - 1];
			for (size_t i = 0; i < t->chroma_line; i++)
				d[i] = tpg_avg(s1[i], s2[i]);
		}
		t->pair_valid[a][b] = true;
	}
	return t->pair[a][b];
}

/* --- frame assembly ----------------------------------------------------- */

static uint32_t
tpg_umod(int64_t a, uint32_t m)
{
	int64_t r = a % (int64_t)m;

	return (uint32_t)(r < 0 ? r + m : r);
}

static inline uint32_t
tpg_src_row(const struct v4l2cuse_tpg *t, uint32_t y, uint32_t voff)
{
	uint32_t r = t->p.vflip ? t->height - 1 - y : y;

	r += voff;
	return r >= t->height ? r - t->height : r;
}

/*
 * Write a @rw x @rh block of colour indices (row stride @stride, 0 = the
 * same row every time) at (@x0, @y0) of an image laid out like the frame
 * (its lines t->plane_bpl[] long) whose planes start at @plane_off (the
 * frame's own t->plane_off, or the text overlay's image). Subsampled
 * formats need even x0, rw and, for 4:2:0, even y0 and rh.
 */
void
v4l2cuse_tpg_blit(struct v4l2cuse_tpg *t, uint8_t *dst, const size_t *plane_off, uint32_t x0,
		  uint32_t y0, uint32_t rw, uint32_t rh, const uint16_t *idx, size_t stride)
{
	const struct v4l2cuse_format_info *fi = t->fi;
	size_t bpp = fi->bpp[0] / 8;
	unsigned int vsub = tpg_vsub(fi);

	if (rw == 0 || rh == 0)
		return;
	for (uint32_t r = 0; r < rh; r += vsub) {
		unsigned int rows = MIN(vsub, rh - r);

		for (unsigned int i = 0; i < rows; i++) {
			uint32_t y = y0 + r + i;

			tpg_pack(t, idx + (size_t)(r + i) * stride, rw, t->tmp[i][0],
				 t->tmp[i][1], t->tmp[i][2]);
			memcpy(dst + plane_off[0] + y * t->plane_bpl[0] + x0 * bpp, t->tmp[i][0],
			       rw * bpp);
		}
		if (fi->n_planes == 1)
			continue;
		for (unsigned int p = 1; p < fi->n_planes; p++) {
			size_t n = tpg_chroma_bytes(fi, rw);
			size_t xo = tpg_chroma_bytes(fi, x0);
			uint8_t *d = dst + plane_off[p] + ((y0 + r) / vsub) * t->plane_bpl[p] + xo;

			if (rows == 2) {
				for (size_t i = 0; i < n; i++)
					d[i] = tpg_avg(t->tmp[0][p][i], t->tmp[1][p][i]);
			} else {
				memcpy(d, t->tmp[0][p], n);
			}
		}
	}
}

void
v4l2cuse_tpg_fill_rect(struct v4l2cuse_tpg *t, uint8_t *dst, uint32_t x0, uint32_t y0, uint32_t rw,
		       uint32_t rh, uint16_t color)
{
	for (uint32_t i = 0; i < rw; i++)
		t->solid[i] = color;
	v4l2cuse_tpg_blit(t, dst, t->plane_off, x0, y0, rw, rh, t->solid, 0);
}

static uint32_t
tpg_bounce(uint64_t s, uint32_t range)
{
	uint64_t m;

	if (range == 0)
		return 0;
	m = s % (2 * (uint64_t)range);
	return (uint32_t)(m <= range ? m : 2 * (uint64_t)range - m);
}

bool
v4l2cuse_tpg_box_rect(const struct v4l2cuse_tpg *t, uint32_t frame, struct v4l2_rect *ret)
{
	uint32_t w = t->width, h = t->height;
	uint32_t bs;

	if (!t->fi || !t->p.box)
		return false;
	bs = MIN(MAX(2u, (MIN(w, h) / 8) & ~1u), MIN(w, h) & ~1u);
	if (!bs)
		return false;
	ret->left = (int32_t)tpg_bounce((uint64_t)frame * 4, w - bs);
	ret->top = (int32_t)tpg_bounce((uint64_t)frame * 2, h - bs);
	ret->width = bs;
	ret->height = bs;
	return true;
}

void
v4l2cuse_tpg_fill(struct v4l2cuse_tpg *t, uint8_t *dst, uint32_t frame, const char *const *text,
		  unsigned int n_lines)
{
	const struct v4l2cuse_format_info *fi = t->fi;
	uint32_t w = t->width, h = t->height;
	uint32_t hoff, voff;
	size_t bpp, row_bytes;
	bool noise;

	if (!fi)
		return;
	if (t->dirty)
		tpg_build_lines(t);

	bpp = fi->bpp[0] / 8;
	row_bytes = (size_t)w * bpp;
	noise = t->p.pattern == V4L2CUSE_TPG_PAT_NOISE;
	hoff = tpg_umod((int64_t)frame * t->p.hscroll, w);
	voff = tpg_umod((int64_t)frame * t->p.vscroll, h);
	if (fi->hdiv > 1)
		hoff &= ~1u;
	t->rng = 0x5eed0000ULL + frame;

	for (uint32_t y = 0; y < h; y++) {
		unsigned int pl = t->row_pat[tpg_src_row(t, y, voff)];
		uint32_t off = hoff;

		if (noise) {
			off = (uint32_t)(tpg_rand(&t->rng) % w);
			if (fi->hdiv > 1)
				off &= ~1u;
		}
		memcpy(dst + y * t->plane_bpl[0], t->line[pl][0] + off * bpp, row_bytes);
	}

	if (fi->n_planes > 1) {
		size_t xo = tpg_chroma_bytes(fi, hoff);

		for (uint32_t cy = 0; cy < h / tpg_vsub(fi); cy++) {
			uint8_t *const *src;
			unsigned int a, b;

			a = t->row_pat[tpg_src_row(t, cy * tpg_vsub(fi), voff)];
			b = tpg_vsub(fi) == 2 ? t->row_pat[tpg_src_row(t, cy * 2 + 1, voff)] : a;
			if (a == b)
				src = &t->line[a][1];
			else
				src = tpg_pair(t, a, b);
			for (unsigned int p = 1; p < fi->n_planes; p++)
				memcpy(dst + t->plane_off[p] + cy * t->plane_bpl[p],
				       src[p - 1] + xo, t->plane_bpl[p]);
		}
	}

	if (t->p.border && w >= 4 && h >= 4) {
		v4l2cuse_tpg_fill_rect(t, dst, 0, 0, w, 2, C_CONTRAST);
		v4l2cuse_tpg_fill_rect(t, dst, 0, h - 2, w, 2, C_CONTRAST);
		v4l2cuse_tpg_fill_rect(t, dst, 0, 2, 2, h - 4, C_CONTRAST);
		v4l2cuse_tpg_fill_rect(t, dst, w - 2, 2, 2, h - 4, C_CONTRAST);
	}
	if (t->p.box) {
		struct v4l2_rect b;

		if (v4l2cuse_tpg_box_rect(t, frame, &b))
			v4l2cuse_tpg_fill_rect(t, dst, (uint32_t)b.left, (uint32_t)b.top, b.width,
					       b.height, C_CONTRAST);
	}
	if (n_lines && text)
		v4l2cuse_tpg_draw_text(t, dst, text, n_lines);
}
