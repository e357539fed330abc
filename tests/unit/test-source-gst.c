/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The "file" source (sources/file.c) on containers GStreamer reads (when
 * built in), on sample files the test writes with GStreamer itself: frames
 * in order through loops, create() not waiting for the first frame, a file
 * without video.
 */

#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#if HAVE_GSTREAMER_READER
#include <gst/gst.h>
#endif

#include "v4l2cuse/format.h"
#include "v4l2cuse/source.h"
#include "test-source-util.h"
#include "file-samples.h"
#include "test-main.h"

#if HAVE_GSTREAMER_READER
/* A Matroska file of MJPEG frames made with GStreamer from raw I420 greys. */
static bool
write_mkv(const char *path, const char *raw)
{
	g_autofree char *desc = g_strdup_printf(
		"filesrc location=\"%s\" ! rawvideoparse width=64 height=48 format=i420 "
		"framerate=30/1 ! jpegenc quality=95 ! matroskamux ! filesink location=\"%s\"",
		raw, path);

	return gst_write(desc);
}

/*
 * Until GStreamer's first frame has arrived the source offers sizes and
 * rates that do not depend on the file and produce() has nothing yet; then
 * the file's own size and rate are added in front. Polls, at most @tries
 * times 10 ms, until size 0 of YU12 is @w x @h.
 */
static void
wait_first_frame(struct v4l2cuse_source *src, uint32_t w, uint32_t h, unsigned int tries)
{
	uint32_t fw = 0, fh = 0;

	for (unsigned int i = 0; i < tries; i++) {
		g_assert_cmpint(src->ops->enum_framesize(src, V4L2_PIX_FMT_YUV420, 0, &fw, &fh),
				==, 0);
		if (fw == w && fh == h)
			return;
		g_usleep(10000);
	}
	g_error("the first frame's size %ux%u never came (size 0 is %ux%u)", w, h, fw, fh);
}

/* A GStreamer-written MKV: its format, size and rate, its frames in order through loops. */
V4L2CUSE_TEST("/file/gstreamer", test_gstreamer)
{
	g_autofree char *raw = tmp_path("g.i420");
	g_autofree char *mkv = tmp_path("g.mkv");
	g_autofree char *spec = g_strdup_printf("file:%s", mkv);
	g_autofree uint8_t *buf = NULL;
	struct v4l2cuse_source *src;
	struct v4l2_pix_format pix;
	FILE *fp = fopen(raw, "wb");

	for (unsigned int i = 0; i < 6; i++) {
		uint8_t frame[64 * 48 * 3 / 2];

		memset(frame, sample_y(3 * i), 64 * 48);
		memset(frame + 64 * 48, 128, 64 * 48 / 2);
		fwrite(frame, 1, sizeof(frame), fp);
	}
	fclose(fp);
	if (!write_mkv(mkv, raw)) {
		g_test_skip("GStreamer cannot write the sample MKV here");
		return;
	}
	src = ts_make(spec);
	ts_assert_format(src, 0, V4L2_PIX_FMT_YUV420);
	wait_first_frame(src, 64, 48, 3000);
	ts_assert_size(src, V4L2_PIX_FMT_YUV420, 0, 64, 48);
	ts_assert_interval(src, V4L2_PIX_FMT_YUV420, 64, 48, 0, 1, 30);

	/*
	 * Frames in order through loops, produced in real time: a frame the
	 * decoder has not delivered yet (after the seek that loops) shows the
	 * previous one again; none is skipped.
	 */
	pix = ts_start(src, V4L2_PIX_FMT_YUV420, 64, 48, 1, 30);
	buf = g_malloc(pix.sizeimage);
	{
		unsigned int seen = 0, wraps = 0, changes = 0;
		int last = -1;

		for (unsigned int n = 0; n < 60; n++) {
			int r = produce(src, &pix, buf, NULL), k = -1;

			g_usleep(33000);
			if (r == -EAGAIN)
				continue;	/* nothing decoded yet */
			g_assert_cmpint(r, ==, 0);
			for (int i = 0; i < 6; i++) {
				if (abs((int)buf[0] - sample_y(3 * (unsigned int)i)) <= 4)
					k = i;
			}
			if (k < 0)
				g_error("frame %u: luma %u is none of the samples", n, buf[0]);
			seen |= 1u << k;
			if (last >= 0 && k != last) {
				changes++;
				if (k < last)
					wraps++;
				g_assert_cmpint((k - last + 6) % 6, ==, 1);
			}
			last = k;
		}
		g_test_message("gstreamer: %u changes, %u wraps", changes, wraps);
		g_assert_cmpuint(seen, ==, 0x3f);
		g_assert_cmpuint(wraps, >=, 2);
	}
	v4l2cuse_source_destroy(src);
}

/*
 * create() does not wait for GStreamer's first frame. The file holds one
 * 2048x2048 frame of noise: demuxing, decoding and converting it takes
 * GStreamer's threads far longer than create() takes to return and the
 * test to look, so what the source offers right after create() is what it
 * offers before the first frame (no timing is measured). Then the frame
 * arrives and the offer grows; what was offered (and negotiated) stays.
 */
V4L2CUSE_TEST("/file/gstreamer-async", test_gstreamer_async)
{
	g_autofree char *mkv = tmp_path("big.mkv");
	g_autofree char *spec = g_strdup_printf("file:%s", mkv);
	g_autofree char *desc = g_strdup_printf(
		"videotestsrc pattern=snow num-buffers=1 ! "
		"video/x-raw,width=2048,height=2048,framerate=24/1 ! jpegenc quality=98 ! "
		"matroskamux ! filesink location=\"%s\"", mkv);
	g_autofree uint8_t *buf = NULL;
	struct v4l2cuse_source *src;
	struct v4l2_pix_format pix;
	struct v4l2_fract iv;
	uint32_t f, w, h;
	int r;

	if (!gst_write(desc)) {
		g_test_skip("GStreamer cannot write the sample MKV here");
		return;
	}
	src = ts_make(spec);
	ts_assert_format(src, 0, V4L2_PIX_FMT_YUV420);
	f = V4L2_PIX_FMT_YUV420;
	ts_assert_size(src, f, 0, 320, 240);
	g_assert_cmpint(src->ops->enum_frameinterval(src, f, 320, 240, 0, &iv), ==, 0);
	g_assert_cmpuint(iv.denominator, ==, 30);
	pix = ts_start(src, V4L2_PIX_FMT_YUYV, 640, 480, 1, 30);
	buf = g_malloc(pix.sizeimage);
	g_assert_cmpint(produce(src, &pix, buf, NULL), ==, -EAGAIN);

	wait_first_frame(src, 2048, 2048, 3000);
	ts_assert_interval(src, f, 2048, 2048, 0, 1, 24);
	g_assert_cmpint(src->ops->enum_framesize(src, f, 2, &w, &h), ==, 0);
	g_assert_cmpuint(w, ==, 640);	/* still offered, after 2048x2048 and 320x240 */
	for (unsigned int i = 0; i < 3000 && (r = produce(src, &pix, buf, NULL)) == -EAGAIN; i++)
		g_usleep(10000);
	g_assert_cmpint(r, ==, 0);
	v4l2cuse_source_destroy(src);
}

/* A file GStreamer recognises but that has no video: no signal, after one warning. */
V4L2CUSE_TEST("/file/gstreamer-no-video", test_gstreamer_no_video)
{
	g_autofree char *wav = tmp_path("a.wav");
	g_autofree char *spec = g_strdup_printf("file:%s", wav);
	g_autofree char *desc = g_strdup_printf(
		"audiotestsrc num-buffers=20 ! wavenc ! filesink location=\"%s\"", wav);
	g_autofree uint8_t *buf = NULL;
	unsigned int warnings = n_warnings;
	struct v4l2cuse_source *src;
	struct v4l2_pix_format pix;
	int r = -EAGAIN;

	if (!gst_write(desc)) {
		g_test_skip("GStreamer cannot write the sample WAV here");
		return;
	}
	src = ts_make(spec);
	pix = ts_start(src, V4L2_PIX_FMT_YUYV, 320, 240, 1, 30);
	buf = g_malloc(pix.sizeimage);
	for (unsigned int i = 0; i < 3000 && (r = produce(src, &pix, buf, NULL)) == -EAGAIN; i++)
		g_usleep(10000);
	g_assert_cmpint(r, ==, -ENOLINK);
	g_assert_cmpint(produce(src, &pix, buf, NULL), ==, -ENOLINK);
	g_assert_cmpuint(n_warnings, ==, warnings + 1);
	v4l2cuse_source_destroy(src);
}
#endif
