/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the uvc source does to frames it passes through: interlaced frames
 * made progressive (sources/fields.c) and H.264/HEVC key frames given their
 * parameter sets (sources/nal.c).
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <glib.h>
#include <linux/videodev2.h>

#include "fields.h"
#include "nal.h"
#include "test-main.h"

/* YUYV frames W pixels wide whose every line is one byte value. */
#define W 4
#define BPL (W * 2)

static void
fill_line(uint8_t *line, uint8_t v)
{
	memset(line, v, BPL);
}

static void
assert_lines(const struct v4l2cuse_image *img, const uint8_t *want, unsigned int n)
{
	g_assert_cmpuint(img->height, ==, n);
	g_assert_cmpuint(img->size, >=, (size_t)BPL * n);
	for (unsigned int y = 0; y < n; y++) {
		for (unsigned int x = 0; x < BPL; x++)
			g_assert_cmpuint(img->data[y * BPL + x], ==, want[y]);
	}
}

V4L2CUSE_TEST("/passthrough/weave-seq", test_weave_seq)
{
	struct v4l2cuse_weave *w = v4l2cuse_weave_new();
	uint8_t buf[BPL * 4];
	struct v4l2cuse_image in = {
		.fourcc = V4L2_PIX_FMT_YUYV, .width = W, .height = 4, .bytesperline = BPL,
		.data = buf, .size = sizeof(buf),
	}, out;
	/* SEQ_TB: the top field's lines (frame lines 0, 2) then the bottom's (1, 3). */
	static const uint8_t tb[4] = { 10, 12, 11, 13 }, woven[4] = { 10, 11, 12, 13 };

	for (unsigned int y = 0; y < 4; y++)
		fill_line(buf + y * BPL, tb[y]);
	g_assert_cmpint(v4l2cuse_weave(w, &in, V4L2_FIELD_SEQ_TB, 0, &out), ==, 0);
	assert_lines(&out, woven, 4);
	/* SEQ_BT: the same buffer is the bottom field (10, 12) first. */
	g_assert_cmpint(v4l2cuse_weave(w, &in, V4L2_FIELD_SEQ_BT, 0, &out), ==, 0);
	{
		static const uint8_t bt[4] = { 11, 10, 13, 12 };

		assert_lines(&out, bt, 4);
	}
	/* INTERLACED: the lines alternate already; the buffer itself. */
	g_assert_cmpint(v4l2cuse_weave(w, &in, V4L2_FIELD_INTERLACED, 0, &out), ==, 0);
	g_assert_true(out.data == buf);
	/* An odd number of lines cannot be two fields. */
	in.height = 3;
	in.size = BPL * 3;
	g_assert_cmpint(v4l2cuse_weave(w, &in, V4L2_FIELD_SEQ_TB, 0, &out), ==, -EINVAL);
	/* A compressed frame passes only whole. */
	in.fourcc = V4L2_PIX_FMT_MJPEG;
	g_assert_cmpint(v4l2cuse_weave(w, &in, V4L2_FIELD_SEQ_TB, 0, &out), ==, -EINVAL);
	v4l2cuse_weave_free(w);
}

V4L2CUSE_TEST("/passthrough/weave-alternate", test_weave_alternate)
{
	struct v4l2cuse_weave *w = v4l2cuse_weave_new();
	uint8_t top[BPL * 2], bottom[BPL * 2];
	struct v4l2cuse_image t = {
		.fourcc = V4L2_PIX_FMT_YUYV, .width = W, .height = 2, .bytesperline = BPL,
		.data = top, .size = sizeof(top),
	}, b = t, out;
	static const uint8_t woven[4] = { 1, 2, 3, 4 };

	fill_line(top, 1);
	fill_line(top + BPL, 3);
	fill_line(bottom, 2);
	fill_line(bottom + BPL, 4);
	b.data = bottom;
	g_assert_cmpint(v4l2cuse_weave(w, &t, V4L2_FIELD_ALTERNATE, V4L2_FIELD_TOP, &out), ==,
			-EAGAIN);
	g_assert_cmpint(v4l2cuse_weave(w, &b, V4L2_FIELD_ALTERNATE, V4L2_FIELD_BOTTOM, &out),
			==, 0);
	assert_lines(&out, woven, 4);
	/* A lost field: top, top, bottom makes one frame of the second top. */
	fill_line(top, 5);
	g_assert_cmpint(v4l2cuse_weave(w, &t, V4L2_FIELD_ALTERNATE, V4L2_FIELD_TOP, &out), ==,
			-EAGAIN);
	g_assert_cmpint(v4l2cuse_weave(w, &t, V4L2_FIELD_ALTERNATE, V4L2_FIELD_TOP, &out), ==,
			-EAGAIN);
	g_assert_cmpint(v4l2cuse_weave(w, &b, V4L2_FIELD_ALTERNATE, V4L2_FIELD_BOTTOM, &out),
			==, 0);
	{
		static const uint8_t want[4] = { 5, 2, 3, 4 };

		assert_lines(&out, want, 4);
	}
	/* After a reset the bottom field alone is no frame. */
	g_assert_cmpint(v4l2cuse_weave(w, &t, V4L2_FIELD_ALTERNATE, V4L2_FIELD_TOP, &out), ==,
			-EAGAIN);
	v4l2cuse_weave_reset(w);
	g_assert_cmpint(v4l2cuse_weave(w, &b, V4L2_FIELD_ALTERNATE, V4L2_FIELD_BOTTOM, &out),
			==, -EAGAIN);
	/* A buffer that says neither field. */
	g_assert_cmpint(v4l2cuse_weave(w, &b, V4L2_FIELD_ALTERNATE, V4L2_FIELD_NONE, &out), ==,
			-EINVAL);
	g_assert_cmpuint(v4l2cuse_field_frame_height(V4L2_FIELD_ALTERNATE, 288), ==, 576);
	g_assert_cmpuint(v4l2cuse_field_frame_height(V4L2_FIELD_INTERLACED, 576), ==, 576);
	v4l2cuse_weave_free(w);
}

/* H.264: SPS (7), PPS (8), IDR slice (5), non-IDR slice (1), AUD (9). */
static const uint8_t sps[] = { 0, 0, 0, 1, 0x67, 0x42, 0x00, 0x1e };
static const uint8_t pps[] = { 0, 0, 0, 1, 0x68, 0xce, 0x38, 0x80 };
static const uint8_t idr[] = { 0, 0, 0, 1, 0x65, 0x88, 0x84, 0x21 };
static const uint8_t slice[] = { 0, 0, 0, 1, 0x41, 0x9a, 0x02 };
static const uint8_t aud[] = { 0, 0, 0, 1, 0x09, 0xf0 };

static size_t
cat(uint8_t *dst, const uint8_t *const *parts, const size_t *lens, unsigned int n)
{
	size_t len = 0;

	for (unsigned int i = 0; i < n; i++) {
		memcpy(dst + len, parts[i], lens[i]);
		len += lens[i];
	}
	return len;
}

V4L2CUSE_TEST("/passthrough/nal-h264", test_nal_h264)
{
	struct v4l2cuse_nal *n = v4l2cuse_nal_new(V4L2_PIX_FMT_H264);
	uint8_t in[128], out[128], want[128];
	size_t in_len, out_len, want_len;
	bool key;

	g_assert_null(v4l2cuse_nal_new(V4L2_PIX_FMT_YUYV));
	/* Before the first key frame: held back. */
	in_len = cat(in, (const uint8_t *const[]){ slice }, (size_t[]){ sizeof(slice) }, 1);
	g_assert_cmpint(v4l2cuse_nal_frame(n, in, in_len, out, sizeof(out), &out_len, &key), ==,
			-EAGAIN);
	/* A key frame with its parameter sets: as it is. */
	in_len = cat(in, (const uint8_t *const[]){ sps, pps, idr },
		     (size_t[]){ sizeof(sps), sizeof(pps), sizeof(idr) }, 3);
	g_assert_cmpint(v4l2cuse_nal_frame(n, in, in_len, out, sizeof(out), &out_len, &key), ==,
			0);
	g_assert_true(key);
	g_assert_cmpmem(out, out_len, in, in_len);
	/* A slice: as it is, not a key frame. */
	in_len = cat(in, (const uint8_t *const[]){ slice }, (size_t[]){ sizeof(slice) }, 1);
	g_assert_cmpint(v4l2cuse_nal_frame(n, in, in_len, out, sizeof(out), &out_len, &key), ==,
			0);
	g_assert_false(key);
	g_assert_cmpmem(out, out_len, in, in_len);
	/* A bare key frame after an AUD: the parameter sets go after the AUD. */
	in_len = cat(in, (const uint8_t *const[]){ aud, idr },
		     (size_t[]){ sizeof(aud), sizeof(idr) }, 2);
	want_len = cat(want, (const uint8_t *const[]){ aud, sps, pps, idr },
		       (size_t[]){ sizeof(aud), sizeof(sps), sizeof(pps), sizeof(idr) }, 4);
	g_assert_cmpint(v4l2cuse_nal_frame(n, in, in_len, out, sizeof(out), &out_len, &key), ==,
			0);
	g_assert_true(key);
	g_assert_cmpmem(out, out_len, want, want_len);
	/* Too small a buffer; data without a start code. */
	g_assert_cmpint(v4l2cuse_nal_frame(n, in, in_len, out, in_len, &out_len, &key), ==,
			-ENOSPC);
	g_assert_cmpint(v4l2cuse_nal_frame(n, (const uint8_t *)"\x12\x34\x56\x78", 4, out,
					   sizeof(out), &out_len, &key), ==, -EBADMSG);
	/* A reset (a new stream) waits for a key frame again. */
	v4l2cuse_nal_reset(n);
	in_len = cat(in, (const uint8_t *const[]){ slice }, (size_t[]){ sizeof(slice) }, 1);
	g_assert_cmpint(v4l2cuse_nal_frame(n, in, in_len, out, sizeof(out), &out_len, &key), ==,
			-EAGAIN);
	v4l2cuse_nal_free(n);
}
