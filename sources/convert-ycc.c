/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The converter's own colour math (convert-private.h), for what libyuv
 * (version 1857, Debian 12) has no function for:
 *
 *  - Y'CbCr from one colorimetry to another (BT.601 <-> BT.709, limited
 *    <-> full range): decoded JPEGs (full-range BT.601) to limited-range
 *    targets, Y'CbCr to JFIF for MJPEG and to full-range BT.601 grey, and
 *    inputs whose colorimetry is not the target's. libyuv converts Y'CbCr to
 *    R'G'B' with any matrix, but Y'CbCr to Y'CbCr only without a change.
 *  - R'G'B' to BT.709 Y'CbCr: libyuv's R'G'B' -> Y'CbCr is BT.601 only.
 *
 * Both come from one matrix per colorimetry (cv_ycc_matrix()). The Y'CbCr
 * transform is linear: luma gets a term from chroma (BT.601 and BT.709 weigh
 * R, G and B differently), taken from the chroma sample the pixel shares,
 * the way 4:2:x is read everywhere else. Integer math in 14-bit fixed
 * point, in SSE2 on x86-64 and in loops the compiler vectorises elsewhere
 * (and for the last samples of a line), with the same results.
 */

#include "config.h"

#include <math.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include <glib.h>

#include "util/macros.h"
#include "convert-private.h"

#define CV_Q		14
#define CV_ONE		(1 << CV_Q)
#define CV_HALF		(1 << (CV_Q - 1))

/*
 * 8-bit Y'CbCr = m * 8-bit R'G'B' + off in colorimetry @ycc (Kr, Kb of
 * BT.601 or BT.709; Y' scaled to 219 or 255 levels above 16 or 0, Cb and
 * Cr to 224 or 255 around 128).
 */
static void
cv_ycc_matrix(struct cv_ycc ycc, double m[3][3], double off[3])
{
	double kr = ycc.bt709 ? 0.2126 : 0.299, kb = ycc.bt709 ? 0.0722 : 0.114;
	double kg = 1.0 - kr - kb;
	double ys = (ycc.full ? 255.0 : 219.0) / 255.0, cs = (ycc.full ? 255.0 : 224.0) / 255.0;
	double rows[3][3] = {
		{ kr, kg, kb },
		{ -kr / (2 * (1 - kb)), -kg / (2 * (1 - kb)), 0.5 },
		{ 0.5, -kg / (2 * (1 - kr)), -kb / (2 * (1 - kr)) },
	};

	for (unsigned int j = 0; j < 3; j++) {
		m[0][j] = rows[0][j] * ys;
		m[1][j] = rows[1][j] * cs;
		m[2][j] = rows[2][j] * cs;
	}
	off[0] = ycc.full ? 0.0 : 16.0;
	off[1] = off[2] = 128.0;
}

static void
cv_invert3(const double m[3][3], double inv[3][3])
{
	double det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
		     m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
		     m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);

	for (unsigned int i = 0; i < 3; i++) {
		for (unsigned int j = 0; j < 3; j++) {
			/* cofactor of m[j][i] */
			unsigned int r0 = (j + 1) % 3, r1 = (j + 2) % 3;
			unsigned int c0 = (i + 1) % 3, c1 = (i + 2) % 3;

			inv[i][j] = (m[r0][c0] * m[r1][c1] - m[r0][c1] * m[r1][c0]) / det;
		}
	}
}

static int16_t
cv_fix(double v)
{
	return (int16_t)lround(v * CV_ONE);
}

/* --- Y'CbCr to Y'CbCr --------------------------------------------------- */

/*
 * out = a * (Y', Cb - 128, Cr - 128) + add, >> CV_Q (add holds the offsets
 * and the rounding). Luma never feeds chroma: the first column of a is
 * (y_y, 0, 0), as a grey stays grey in every matrix.
 */
struct cv_xf {
	int16_t y_y, y_cb, y_cr;
	int16_t cb_cb, cb_cr, cr_cb, cr_cr;
	int32_t add[3];		/* Y', Cb, Cr */
	bool cross;		/* luma depends on chroma */
};

static void
cv_xf_init(struct cv_xf *xf, struct cv_ycc from, struct cv_ycc to)
{
	double mf[3][3], of[3], mt[3][3], ot[3], inv[3][3], a[3][3], b[3];

	cv_ycc_matrix(from, mf, of);
	cv_ycc_matrix(to, mt, ot);
	cv_invert3(mf, inv);
	for (unsigned int i = 0; i < 3; i++) {
		b[i] = ot[i];
		for (unsigned int j = 0; j < 3; j++) {
			a[i][j] = 0;
			for (unsigned int k = 0; k < 3; k++)
				a[i][j] += mt[i][k] * inv[k][j];
			b[i] -= a[i][j] * of[j];
		}
	}
	/*
	 * Centre chroma: a * (Y', Cb, Cr) + b = a * (Y', Cb - 128, Cr - 128) +
	 * b + 128 * (a[i][1] + a[i][2]). a[1][0] and a[2][0] are 0 up to
	 * rounding (a grey has no chroma in any matrix).
	 */
	*xf = (struct cv_xf){
		.y_y = cv_fix(a[0][0]), .y_cb = cv_fix(a[0][1]), .y_cr = cv_fix(a[0][2]),
		.cb_cb = cv_fix(a[1][1]), .cb_cr = cv_fix(a[1][2]),
		.cr_cb = cv_fix(a[2][1]), .cr_cr = cv_fix(a[2][2]),
	};
	for (unsigned int i = 0; i < 3; i++)
		xf->add[i] = (int32_t)lround((b[i] + 128 * (a[i][1] + a[i][2])) * CV_ONE) + CV_HALF;
	xf->cross = xf->y_cb || xf->y_cr;
}

/*
 * The loops below take their coefficients into locals and their planes as
 * restrict pointers: with nothing that may alias, gcc vectorises them
 * (sources/meson.build asks for its dynamic cost model; the -O2 default
 * one leaves them scalar, 4x slower). Where SSE2 is there (every x86-64),
 * the Y'CbCr transform's loops are written with it instead, 16 samples a
 * step in 16-bit lanes with 32-bit sums (gcc's own vectorisation widens
 * every byte to 32 bits first and was 56% of YUYV -> RGB3 at 1080p); the
 * arithmetic is the scalar loops', so the bytes are the same, and the
 * scalar loops finish each line's last samples.
 */

#ifdef __SSE2__
/* 8 int32 sums >> CV_Q, twice, clamped to 16 bytes. */
static inline __m128i
cv_sse2_pack(__m128i a, __m128i b, __m128i c, __m128i d)
{
	return _mm_packus_epi16(_mm_packs_epi32(_mm_srai_epi32(a, CV_Q), _mm_srai_epi32(b, CV_Q)),
				_mm_packs_epi32(_mm_srai_epi32(c, CV_Q), _mm_srai_epi32(d, CV_Q)));
}

/* Bytes minus 128 as two vectors of eight int16. */
static inline void
cv_sse2_centre(const uint8_t *p, __m128i *lo, __m128i *hi)
{
	const __m128i zero = _mm_setzero_si128(), c128 = _mm_set1_epi16(128);
	__m128i v = _mm_loadu_si128((const __m128i *)p);

	*lo = _mm_sub_epi16(_mm_unpacklo_epi8(v, zero), c128);
	*hi = _mm_sub_epi16(_mm_unpackhi_epi8(v, zero), c128);
}

/* (u * k_u + v * k_v + add) for the 8 (u, v) pairs of @u, @v: 4 + 4 int32. */
static inline void
cv_sse2_madd(__m128i u, __m128i v, __m128i k, __m128i add, __m128i *lo, __m128i *hi)
{
	*lo = _mm_add_epi32(_mm_madd_epi16(_mm_unpacklo_epi16(u, v), k), add);
	*hi = _mm_add_epi32(_mm_madd_epi16(_mm_unpackhi_epi16(u, v), k), add);
}

/* The k_u, k_v pair of cv_sse2_madd() in every lane. */
static inline __m128i
cv_sse2_pair(int32_t k_u, int32_t k_v)
{
	return _mm_set1_epi32((int32_t)(((uint32_t)(uint16_t)k_v << 16) | (uint16_t)k_u));
}
#endif

/* The luma term of a chroma line, per luma pixel (each chroma sample twice). */
static void
cv_xf_corr(const struct cv_xf *xf, const uint8_t *restrict cb, const uint8_t *restrict cr,
	   uint32_t cw, int32_t *restrict corr)
{
	const int32_t k_cb = xf->y_cb, k_cr = xf->y_cr, add = xf->add[0];
	uint32_t c = 0;

#ifdef __SSE2__
	const __m128i k = cv_sse2_pair(k_cb, k_cr), a = _mm_set1_epi32(add);

	for (; c + 16 <= cw; c += 16) {
		__m128i u[2], v[2], s[4];

		cv_sse2_centre(cb + c, &u[0], &u[1]);
		cv_sse2_centre(cr + c, &v[0], &v[1]);
		cv_sse2_madd(u[0], v[0], k, a, &s[0], &s[1]);
		cv_sse2_madd(u[1], v[1], k, a, &s[2], &s[3]);
		for (unsigned int i = 0; i < 4; i++) {
			_mm_storeu_si128((__m128i *)(corr + 2 * c + 8 * i),
					 _mm_unpacklo_epi32(s[i], s[i]));
			_mm_storeu_si128((__m128i *)(corr + 2 * c + 8 * i + 4),
					 _mm_unpackhi_epi32(s[i], s[i]));
		}
	}
#endif
	for (; c < cw; c++) {
		int32_t v = (cb[c] - 128) * k_cb + (cr[c] - 128) * k_cr + add;

		corr[2 * c] = v;
		corr[2 * c + 1] = v;
	}
}

static void
cv_xf_luma(const struct cv_xf *xf, const uint8_t *restrict s, const int32_t *restrict corr,
	   uint32_t w, uint8_t *restrict d)
{
	const int32_t k = xf->y_y;
	uint32_t x = 0;

#ifdef __SSE2__
	const __m128i zero = _mm_setzero_si128(), k16 = _mm_set1_epi16((int16_t)k);

	for (; x + 16 <= w; x += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(s + x)), p[2], q[4];

		p[0] = _mm_unpacklo_epi8(v, zero);
		p[1] = _mm_unpackhi_epi8(v, zero);
		for (unsigned int i = 0; i < 2; i++) {
			/* s * k as int32: the low and high halves of the 16-bit products */
			__m128i lo = _mm_mullo_epi16(p[i], k16), hi = _mm_mulhi_epi16(p[i], k16);

			q[2 * i] = _mm_add_epi32(_mm_unpacklo_epi16(lo, hi),
						 _mm_loadu_si128((const __m128i *)(corr + x + 8 * i)));
			q[2 * i + 1] = _mm_add_epi32(_mm_unpackhi_epi16(lo, hi),
						     _mm_loadu_si128((const __m128i *)(corr + x + 8 * i + 4)));
		}
		_mm_storeu_si128((__m128i *)(d + x), cv_sse2_pack(q[0], q[1], q[2], q[3]));
	}
#endif
	for (; x < w; x++) {
		int32_t v = (s[x] * k + corr[x]) >> CV_Q;

		d[x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
	}
}

static void
cv_xf_chroma(const struct cv_xf *xf, const uint8_t *restrict cb, const uint8_t *restrict cr,
	     uint32_t cw, uint8_t *restrict dcb, uint8_t *restrict dcr)
{
	const int32_t bb = xf->cb_cb, br = xf->cb_cr, rb = xf->cr_cb, rr = xf->cr_cr;
	const int32_t ab = xf->add[1], ar = xf->add[2];
	uint32_t c = 0;

#ifdef __SSE2__
	const __m128i kb = cv_sse2_pair(bb, br), kr = cv_sse2_pair(rb, rr);
	const __m128i vab = _mm_set1_epi32(ab), var = _mm_set1_epi32(ar);

	for (; c + 16 <= cw; c += 16) {
		__m128i u[2], v[2], b[4], r[4];

		cv_sse2_centre(cb + c, &u[0], &u[1]);
		cv_sse2_centre(cr + c, &v[0], &v[1]);
		cv_sse2_madd(u[0], v[0], kb, vab, &b[0], &b[1]);
		cv_sse2_madd(u[1], v[1], kb, vab, &b[2], &b[3]);
		cv_sse2_madd(u[0], v[0], kr, var, &r[0], &r[1]);
		cv_sse2_madd(u[1], v[1], kr, var, &r[2], &r[3]);
		_mm_storeu_si128((__m128i *)(dcb + c), cv_sse2_pack(b[0], b[1], b[2], b[3]));
		_mm_storeu_si128((__m128i *)(dcr + c), cv_sse2_pack(r[0], r[1], r[2], r[3]));
	}
#endif
	for (; c < cw; c++) {
		int32_t u = cb[c] - 128, v = cr[c] - 128;
		int32_t b = (u * bb + v * br + ab) >> CV_Q, r = (u * rb + v * rr + ar) >> CV_Q;

		dcb[c] = (uint8_t)(b < 0 ? 0 : b > 255 ? 255 : b);
		dcr[c] = (uint8_t)(r < 0 ? 0 : r > 255 ? 255 : r);
	}
}

void
v4l2cuse_convert_ycc_lines(struct v4l2cuse_convert *cv, const struct cv_pic *in, struct cv_ycc to,
			   uint32_t y0, uint32_t y1, bool luma_only, uint8_t *const out[3],
			   const size_t out_stride[3])
{
	uint32_t w = in->w, cw = in->w / 2, cy0 = y0 >> in->vs;
	int32_t *corr = (int32_t *)v4l2cuse_convert_buf(cv, CV_BUF_LINE, (size_t)w * 4 + 8);
	struct cv_xf xf;

	cv_xf_init(&xf, in->ycc, to);
	if (!xf.cross) {
		for (uint32_t x = 0; x < w; x++)
			corr[x] = xf.add[0];
	}
	for (uint32_t y = y0; y < y1; y++) {
		uint32_t cy = y >> in->vs;
		const uint8_t *cb = in->p[1] + in->stride[1] * cy;
		const uint8_t *cr = in->p[2] + in->stride[2] * cy;

		if (y == y0 || cy != (y - 1) >> in->vs) {
			/* The first luma line of a chroma line. */
			if (xf.cross)
				cv_xf_corr(&xf, cb, cr, cw, corr);
			if (!luma_only)
				cv_xf_chroma(&xf, cb, cr, cw, out[1] + out_stride[1] * (cy - cy0),
					     out[2] + out_stride[2] * (cy - cy0));
		}
		cv_xf_luma(&xf, in->p[0] + in->stride[0] * y, corr, w,
			   out[0] + out_stride[0] * (y - y0));
	}
}

void
v4l2cuse_convert_ycc_pic(struct v4l2cuse_convert *cv, const struct cv_pic *in, struct cv_ycc to,
		     bool luma_only, struct cv_pic *out)
{
	uint8_t *planes[3];
	uint8_t *buf;

	if (cv_ycc_equal(in->ycc, to)) {
		*out = *in;
		return;
	}
	buf = v4l2cuse_convert_buf(cv, CV_BUF_XFORM,
				   (size_t)in->w * in->h + (size_t)in->w * ((in->h + in->vs) >> in->vs));
	v4l2cuse_convert_pic_yuv(out, in->w, in->h, in->vs, to, buf);
	for (unsigned int i = 0; i < 3; i++)
		planes[i] = (uint8_t *)out->p[i];
	v4l2cuse_convert_ycc_lines(cv, in, to, 0, in->h, luma_only, planes, out->stride);
}

/* --- R'G'B' to Y'CbCr --------------------------------------------------- */

#ifdef __SSE2__
/*
 * The weighted sums of two vectors of int16 (B, G, R, A) quadruples (@p,
 * @q: 2 each) with weights @k (kb, kg, kr, 0, twice): 4 int32 in order.
 */
static inline __m128i
cv_sse2_dot4(__m128i p, __m128i q, __m128i k)
{
	__m128i a = _mm_madd_epi16(p, k), b = _mm_madd_epi16(q, k);

	/* (b*kb + g*kg, r*kr) pairs: add each pair's second half into its first */
	a = _mm_shuffle_epi32(_mm_add_epi32(a, _mm_srli_epi64(a, 32)), _MM_SHUFFLE(3, 1, 2, 0));
	b = _mm_shuffle_epi32(_mm_add_epi32(b, _mm_srli_epi64(b, 32)), _MM_SHUFFLE(3, 1, 2, 0));
	return _mm_unpacklo_epi64(a, b);
}

static inline __m128i
cv_sse2_weights(int32_t k0, int32_t k1, int32_t k2)
{
	return _mm_setr_epi16((int16_t)k0, (int16_t)k1, (int16_t)k2, 0, (int16_t)k0, (int16_t)k1,
			      (int16_t)k2, 0);
}
#endif

static void
cv_argb_luma(const uint8_t *restrict s, uint32_t w, const int32_t k[3], int32_t add,
	     uint8_t *restrict d)
{
	const int32_t kb = k[0], kg = k[1], kr = k[2], a = add + CV_HALF;
	uint32_t x = 0;

#ifdef __SSE2__
	const __m128i zero = _mm_setzero_si128(), kv = cv_sse2_weights(kb, kg, kr);
	const __m128i av = _mm_set1_epi32(a);

	for (; x + 16 <= w; x += 16) {
		__m128i y[4];

		for (unsigned int i = 0; i < 4; i++) {
			__m128i v = _mm_loadu_si128((const __m128i *)(s + 4 * x + 16 * i));

			y[i] = _mm_add_epi32(cv_sse2_dot4(_mm_unpacklo_epi8(v, zero),
							  _mm_unpackhi_epi8(v, zero), kv),
					     av);
		}
		_mm_storeu_si128((__m128i *)(d + x), cv_sse2_pack(y[0], y[1], y[2], y[3]));
	}
#endif
	for (; x < w; x++) {
		int32_t v = (kb * s[4 * x] + kg * s[4 * x + 1] + kr * s[4 * x + 2] + a) >> CV_Q;

		d[x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
	}
}

/* Cb and Cr of the mean of the 2x2 (or 2x1: @s0 == @s1) blocks of two ARGB lines. */
static void
cv_argb_chroma(const uint8_t *restrict s0, const uint8_t *restrict s1, uint32_t cw,
	       const int32_t k[3][3], const int32_t add[3], uint8_t *restrict dcb,
	       uint8_t *restrict dcr)
{
	const int32_t b0 = k[1][0], b1 = k[1][1], b2 = k[1][2], ab = 4 * add[1] + 2 * CV_ONE;
	const int32_t r0 = k[2][0], r1 = k[2][1], r2 = k[2][2], ar = 4 * add[2] + 2 * CV_ONE;
	uint32_t x = 0;

#ifdef __SSE2__
	const __m128i zero = _mm_setzero_si128();
	const __m128i kb = cv_sse2_weights(b0, b1, b2), kr = cv_sse2_weights(r0, r1, r2);
	const __m128i vab = _mm_set1_epi32(ab), var = _mm_set1_epi32(ar);

	/* 8 chroma samples (16 pixels) a step */
	for (; x + 8 <= cw; x += 8) {
		__m128i z[4], u[2], v[2];

		for (unsigned int i = 0; i < 4; i++) {
			__m128i l0 = _mm_loadu_si128((const __m128i *)(s0 + 8 * x + 16 * i));
			__m128i l1 = _mm_loadu_si128((const __m128i *)(s1 + 8 * x + 16 * i));
			/* the two lines' pixels 0, 1 and 2, 3 added in int16 */
			__m128i p = _mm_add_epi16(_mm_unpacklo_epi8(l0, zero),
						  _mm_unpacklo_epi8(l1, zero));
			__m128i q = _mm_add_epi16(_mm_unpackhi_epi8(l0, zero),
						  _mm_unpackhi_epi8(l1, zero));

			/* and the pixel pairs: the (B, G, R, A) sums of 2 chroma samples */
			z[i] = _mm_add_epi16(_mm_unpacklo_epi64(p, q), _mm_unpackhi_epi64(p, q));
		}
		for (unsigned int i = 0; i < 2; i++) {
			u[i] = _mm_srai_epi32(_mm_add_epi32(cv_sse2_dot4(z[2 * i], z[2 * i + 1], kb),
							    vab), 2);
			v[i] = _mm_srai_epi32(_mm_add_epi32(cv_sse2_dot4(z[2 * i], z[2 * i + 1], kr),
							    var), 2);
		}
		/* >> (CV_Q + 2) in all: 2 above, CV_Q in cv_sse2_pack() */
		_mm_storel_epi64((__m128i *)(dcb + x), cv_sse2_pack(u[0], u[1], u[0], u[1]));
		_mm_storel_epi64((__m128i *)(dcr + x), cv_sse2_pack(v[0], v[1], v[0], v[1]));
	}
#endif
	for (; x < cw; x++) {
		int32_t sb = s0[8 * x] + s0[8 * x + 4] + s1[8 * x] + s1[8 * x + 4];
		int32_t sg = s0[8 * x + 1] + s0[8 * x + 5] + s1[8 * x + 1] + s1[8 * x + 5];
		int32_t sr = s0[8 * x + 2] + s0[8 * x + 6] + s1[8 * x + 2] + s1[8 * x + 6];
		int32_t u = (b0 * sb + b1 * sg + b2 * sr + ab) >> (CV_Q + 2);
		int32_t v = (r0 * sb + r1 * sg + r2 * sr + ar) >> (CV_Q + 2);

		dcb[x] = (uint8_t)(u < 0 ? 0 : u > 255 ? 255 : u);
		dcr[x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
	}
}

void
v4l2cuse_convert_argb_to_ycc(const struct cv_pic *argb, unsigned int vs, struct cv_ycc ycc,
			     const struct cv_pic *out)
{
	double m[3][3], off[3];
	int32_t k[3][3], add[3];
	uint32_t cw = argb->w / 2;

	cv_ycc_matrix(ycc, m, off);
	for (unsigned int i = 0; i < 3; i++) {
		/* libyuv's ARGB is B, G, R, A in memory: column j is byte 2 - j. */
		for (unsigned int j = 0; j < 3; j++)
			k[i][2 - j] = (int32_t)lround(m[i][j] * CV_ONE);
		add[i] = (int32_t)lround(off[i] * CV_ONE);
	}
	for (uint32_t y = 0; y < argb->h; y++)
		cv_argb_luma(argb->p[0] + argb->stride[0] * y, argb->w, k[0], add[0],
			     (uint8_t *)out->p[0] + out->stride[0] * y);
	/* Chroma from the mean R'G'B' of the pixels that share it. */
	for (uint32_t cy = 0; cy < (argb->h + vs) >> vs; cy++) {
		const uint8_t *s0 = argb->p[0] + argb->stride[0] * (cy << vs);
		const uint8_t *s1 = (cy << vs) + vs < argb->h ? s0 + argb->stride[0] * vs : s0;
		uint8_t *dcb = (uint8_t *)out->p[1] + out->stride[1] * cy;
		uint8_t *dcr = (uint8_t *)out->p[2] + out->stride[2] * cy;

		cv_argb_chroma(s0, s1, cw, k, add, dcb, dcr);
	}
}
