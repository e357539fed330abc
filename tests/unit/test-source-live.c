/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The live GStreamer source, "gst:" and "uri:" (sources/gst-live.c), on
 * in-process pipelines (videotestsrc, a file the test writes): pixels of
 * raw and JPEG pipelines converted and scaled to the negotiated format,
 * descriptions that do not parse, a stream that ends and comes back, no
 * pipeline before start().
 */

#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#if HAVE_GSTREAMER_READER
#include <gio/gio.h>
#include <gst/gst.h>
#include "gst-common.h"
#include "jpeg.h"
#endif

#include "v4l2cuse/format.h"
#include "v4l2cuse/source.h"
#include "convert.h"
#include "test-source-util.h"
#include "file-samples.h"
#include "test-main.h"

#if HAVE_GSTREAMER_READER

/*
 * Wait on the source's wake fd (at most 100 ms at a time, 10 s in all) and
 * produce() when it turns readable, until a frame comes: 0, or the first
 * error other than -EAGAIN (between frames) and -ENOLINK (no signal yet).
 */
static int
wait_frame(struct v4l2cuse_source *src, const struct v4l2_pix_format *pix, uint8_t *buf,
	   uint32_t *ret_used)
{
	struct pollfd pfd = { .fd = v4l2cuse_source_wake_fd(src), .events = POLLIN };
	int r = -ENOLINK;

	g_assert_cmpint(pfd.fd, >=, 0);
	for (unsigned int i = 0; i < 100; i++) {
		if (poll(&pfd, 1, 100) == 0)
			continue;
		r = produce(src, pix, buf, ret_used);
		if (r != -ENOLINK && r != -EAGAIN)
			return r;
	}
	return r;
}

/* Wait until the source's pipelines are torn down (on its worker thread). */
static void
wait_no_pipeline(void)
{
	for (unsigned int i = 0; i < 2000 && v4l2cuse_gst_live_pipelines() > 0; i++)
		g_usleep(5000);
	g_assert_cmpuint(v4l2cuse_gst_live_pipelines(), ==, 0);
}

/* Y'CbCr of a YUYV pixel at (x, y). */
static void
yuyv_at(const uint8_t *buf, const struct v4l2_pix_format *pix, uint32_t x, uint32_t y,
	int *ret_y, int *ret_cb, int *ret_cr)
{
	const uint8_t *p = buf + (size_t)pix->bytesperline * y + (x & ~1u) * 2;

	*ret_y = p[(x & 1) * 2];
	*ret_cb = p[1];
	*ret_cr = p[3];
}

#define assert_near(v, want, tol)						\
	do {									\
		int v_ = (v), w_ = (want);					\
		if (abs(v_ - w_) > (tol))					\
			g_error("%s = %d, expected %d +- %d", #v, v_, w_, (tol));	\
	} while (0)

/* Every pixel of a YUYV frame (or those of columns x0..x1) is Y'CbCr @y @cb @cr. */
static void
assert_yuyv(const uint8_t *buf, const struct v4l2_pix_format *pix, uint32_t x0, uint32_t x1,
	    int y, int cb, int cr, int tol)
{
	for (uint32_t j = 0; j < pix->height; j++) {
		for (uint32_t i = x0; i < x1; i++) {
			int py, pcb, pcr;

			yuyv_at(buf, pix, i, j, &py, &pcb, &pcr);
			assert_near(py, y, tol);
			assert_near(pcb, cb, tol);
			assert_near(pcr, cr, tol);
		}
	}
}

/*
 * A raw pipeline (solid red, 320x240 RGB) at other sizes: YUYV 160x120,
 * NV12 640x480 and, at another aspect ratio, YUYV 640x360 with black
 * borders left and right (add-borders). Red is BT.601 limited range
 * Y' 81, Cb 90, Cr 240; black 16, 128, 128.
 */
V4L2CUSE_TEST("/live/raw", test_raw)
{
	struct v4l2cuse_source *src = ts_make(
		"gst:videotestsrc pattern=solid-color foreground-color=0xffff0000 ! "
		"video/x-raw,format=RGB,width=320,height=240,framerate=30/1,"
		"sizes=160x120+640x480+640x360");
	g_autofree uint8_t *buf = NULL;
	struct v4l2_pix_format pix;

	ts_assert_size(src, V4L2_PIX_FMT_YUYV, 0, 160, 120);
	ts_assert_interval(src, V4L2_PIX_FMT_YUYV, 160, 120, 0, 1, 30);

	pix = ts_start(src, V4L2_PIX_FMT_YUYV, 160, 120, 1, 30);
	buf = g_malloc(640 * 480 * 2);
	g_assert_cmpint(wait_frame(src, &pix, buf, NULL), ==, 0);
	assert_yuyv(buf, &pix, 0, pix.width, 81, 90, 240, 3);
	src->ops->stop(src);

	pix = ts_start(src, V4L2_PIX_FMT_NV12, 640, 480, 1, 30);
	g_assert_cmpint(wait_frame(src, &pix, buf, NULL), ==, 0);
	for (size_t i = 0; i < (size_t)640 * 480; i++)
		assert_near(buf[i], 81, 3);
	for (size_t i = 0; i < (size_t)640 * 240; i += 2) {
		assert_near(buf[640 * 480 + i], 90, 3);
		assert_near(buf[640 * 480 + i + 1], 240, 3);
	}
	src->ops->stop(src);

	/* 4:3 in 16:9: 480x360 in the middle, 80 columns of black each side. */
	pix = ts_start(src, V4L2_PIX_FMT_YUYV, 640, 360, 1, 30);
	g_assert_cmpint(wait_frame(src, &pix, buf, NULL), ==, 0);
	assert_yuyv(buf, &pix, 0, 76, 16, 128, 128, 3);
	assert_yuyv(buf, &pix, 84, 556, 81, 90, 240, 3);
	assert_yuyv(buf, &pix, 564, 640, 16, 128, 128, 3);
	v4l2cuse_source_destroy(src);
	wait_no_pipeline();
}

/*
 * A pipeline ending in jpegenc (solid blue, 320x240): an MJPEG consumer at
 * that size gets its JPEGs as they are; a YUYV one at 160x120 gets them
 * decoded and scaled. Blue is Y' 41, Cb 240, Cr 110; jpegenc stores the
 * limited-range values of its I420 input in a JFIF (full-range) JPEG, so
 * what comes back decoded is 51, 226, 112 (depending on the GStreamer
 * version one or the other: both pass).
 */
V4L2CUSE_TEST("/live/jpeg", test_jpeg)
{
	struct v4l2cuse_source *src = ts_make(
		"gst:videotestsrc pattern=solid-color foreground-color=0xff0000ff ! "
		"video/x-raw,width=320,height=240,framerate=30/1 ! jpegenc,"
		"sizes=320x240+160x120");
	struct v4l2cuse_convert *cv = v4l2cuse_convert_new();
	struct v4l2_pix_format pix, yuyv = {
		.pixelformat = V4L2_PIX_FMT_YUYV, .width = 320, .height = 240,
	};
	g_autofree uint8_t *buf = NULL, *dec = NULL;
	uint32_t used = 0, w, h;

	pix = ts_start(src, V4L2_PIX_FMT_MJPEG, 320, 240, 1, 30);
	buf = g_malloc(pix.sizeimage);
	g_assert_cmpint(wait_frame(src, &pix, buf, &used), ==, 0);
	g_assert_cmpuint(used, >, 4);
	g_assert_cmpuint(used, <=, pix.sizeimage);
	g_assert_cmphex(buf[0], ==, 0xff);
	g_assert_cmphex(buf[1], ==, 0xd8);
	g_assert_cmpint(v4l2cuse_jpeg_size(buf, used, &w, &h), ==, 0);
	g_assert_cmpuint(w, ==, 320);
	g_assert_cmpuint(h, ==, 240);
	/* It decodes, to blue. */
	g_assert_cmpint(v4l2cuse_format_fill(&yuyv), ==, 0);
	dec = g_malloc(yuyv.sizeimage);
	{
		struct v4l2cuse_image img = v4l2cuse_convert_image_of(&pix, buf, used);
		uint32_t n;

		g_assert_cmpint(v4l2cuse_convert_frame(cv, &img, &yuyv, dec, yuyv.sizeimage, &n),
				==, 0);
		assert_yuyv(dec, &yuyv, 0, yuyv.width, 46, 233, 111, 8);
	}
	src->ops->stop(src);

	pix = ts_start(src, V4L2_PIX_FMT_YUYV, 160, 120, 1, 30);
	g_assert_cmpint(wait_frame(src, &pix, buf, NULL), ==, 0);
	assert_yuyv(buf, &pix, 0, pix.width, 46, 233, 111, 8);
	v4l2cuse_convert_free(cv);
	v4l2cuse_source_destroy(src);
	wait_no_pipeline();
}

/* create() fails with one line naming the spec and GStreamer's message; nothing is built. */
/*
 * Timestamps are the stream's: a non-live 5 fps pipeline's frames are due
 * exactly 200 ms apart on its clock, so their timestamps are whole
 * multiples of 200 ms apart (frames may be dropped), to the nanosecond
 * give or take rounding; the daemon's wake-up times never are. Each is no
 * later than the time produce() was called.
 */
V4L2CUSE_TEST("/live/stream-clock", test_stream_clock)
{
	struct v4l2cuse_source *src = ts_make(
		"gst:videotestsrc ! video/x-raw,width=160,height=120,framerate=5/1,"
		"sizes=160x120,fps=5");
	g_autofree uint8_t *buf = g_malloc(160 * 120 * 2);
	struct v4l2_pix_format pix = ts_start(src, V4L2_PIX_FMT_YUYV, 160, 120, 1, 5);
	struct pollfd pfd = { .fd = v4l2cuse_source_wake_fd(src), .events = POLLIN };
	uint64_t ts[4];
	unsigned int n = 0;

	for (unsigned int i = 0; i < 200 && n < G_N_ELEMENTS(ts); i++) {
		struct v4l2cuse_frame f = { .data = buf, .length = pix.sizeimage, .fmt = &pix };
		struct timespec now;

		if (poll(&pfd, 1, 100) == 0)
			continue;
		clock_gettime(CLOCK_MONOTONIC, &now);
		f.timestamp_ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
		if (src->ops->produce(src, &f) != 0)
			continue;
		g_assert_cmpuint(f.timestamp_ns, <=,
				 (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec);
		ts[n++] = f.timestamp_ns;
	}
	g_assert_cmpuint(n, ==, G_N_ELEMENTS(ts));
	for (unsigned int i = 1; i < n; i++) {
		uint64_t d = ts[i] - ts[i - 1];
		uint64_t rem = d % 200000000u;

		g_assert_cmpuint(d, >=, 200000000u - 1000u);
		g_assert_true(rem <= 1000u || rem >= 200000000u - 1000u);
	}
	v4l2cuse_source_destroy(src);
	wait_no_pipeline();
}

V4L2CUSE_TEST("/live/parse-errors", test_parse_errors)
{
	static const struct { const char *spec, *prefix, *contains; } cases[] = {
		{ "gst:videotestsrc ! nosuchelement", "gst: 'videotestsrc ! nosuchelement': "
		  "GStreamer: ", "nosuchelement" },
		{ "gst:videotestsrc !", "gst: 'videotestsrc !': GStreamer: ", NULL },
		{ "gst:videotestsrc nosuchproperty=1", "gst: 'videotestsrc nosuchproperty=1': "
		  "GStreamer: ", "nosuchproperty" },
		{ "gst:", "gst: no pipeline given", NULL },
		{ "gst,sizes=320x240", "gst: no pipeline given", NULL },
		{ "uri:", "uri: no URI given", NULL },
		{ "uri:not a uri", "uri: 'not a uri' is not a URI", NULL },
		{ "gst:videotestsrc,timeout=5", "gst: option 'timeout': ", NULL },
		{ "gst:videotestsrc,sizes=641x480", "gst: option 'sizes': ", NULL },
		/* Credentials in a URI are not repeated. */
		{ "gst:rtspsrc location=rtsp://user:secret@127.0.0.1/x ! nosuch",
		  "gst: 'rtspsrc location=rtsp://***@127.0.0.1/x ! nosuch': GStreamer: ", NULL },
		{ "gst:rtspsrc location=rtsp://user:secret@127.0.0.1/x nosuchproperty=1",
		  "gst: 'rtspsrc location=rtsp://***@127.0.0.1/x nosuchproperty=1': GStreamer: ",
		  "nosuchproperty" },
		{ "gst:videotestsrc ! capsfilter caps=rtsp://u:secret@h/x",
		  "gst: 'videotestsrc ! capsfilter caps=rtsp://***@h/x': GStreamer: ", NULL },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		struct v4l2cuse_source *src = NULL;
		g_autofree char *error = NULL;
		int r = v4l2cuse_source_create(cases[i].spec, &src, &error);

		g_test_message("%s -> %d %s", cases[i].spec, r, error);
		g_assert_cmpint(r, ==, -EINVAL);
		g_assert_null(src);
		g_assert_nonnull(error);
		g_assert_null(strchr(error, '\n'));
		g_assert_true(g_str_has_prefix(error, cases[i].prefix));
		if (cases[i].contains)
			g_assert_nonnull(strstr(error, cases[i].contains));
		g_assert_null(strstr(error, "secret"));
	}
	g_assert_cmpuint(v4l2cuse_gst_live_pipelines(), ==, 0);
}

/*
 * Trailing items that are the source's options are options; the others,
 * caps fields with commas, stay in the description (width= and height=
 * reach the caps: the offer is the options', the frame the pipeline's).
 */
V4L2CUSE_TEST("/live/options", test_options)
{
	struct v4l2cuse_source *src = ts_make(
		"gst:videotestsrc ! video/x-raw,width=64,height=48,fps=15,formats=NV12+YUYV,"
		"sizes=64x48,timeout=1000,latency=50,retry=100");
	uint32_t f;

	ts_assert_format(src, 0, V4L2_PIX_FMT_NV12);
	ts_assert_format(src, 1, V4L2_PIX_FMT_YUYV);
	g_assert_cmpint(src->ops->enum_format(src, 2, &f), ==, -EINVAL);
	ts_assert_size(src, V4L2_PIX_FMT_NV12, 0, 64, 48);
	ts_assert_interval(src, V4L2_PIX_FMT_NV12, 64, 48, 0, 1, 15);
	v4l2cuse_source_destroy(src);

	/* Defaults: every output format, 320x240 640x480 1280x720 1920x1080, 30 25 15 fps. */
	src = ts_make("uri:rtsp://127.0.0.1:1/none");
	ts_assert_format(src, 0, V4L2_PIX_FMT_YUYV);
	ts_assert_size(src, V4L2_PIX_FMT_YUYV, 1, 640, 480);
	ts_assert_size(src, V4L2_PIX_FMT_YUYV, 2, 1280, 720);
	ts_assert_interval(src, V4L2_PIX_FMT_YUYV, 640, 480, 0, 1, 30);
	v4l2cuse_source_destroy(src);
	g_assert_cmpuint(v4l2cuse_gst_live_pipelines(), ==, 0);
}

/*
 * On demand: created, enumerated and negotiated, the source has built no
 * pipeline (nothing connects to a camera nobody watches); start() builds
 * one, stop() tears it down, and so does destroy() of a started source.
 */
V4L2CUSE_TEST("/live/on-demand", test_on_demand)
{
	struct v4l2cuse_source *src = ts_make("gst:videotestsrc,sizes=64x48");
	struct v4l2_pix_format pix = { .pixelformat = V4L2_PIX_FMT_YUYV, .width = 64, .height = 48 };
	g_autofree uint8_t *buf = NULL;

	g_assert_cmpuint(v4l2cuse_gst_live_pipelines(), ==, 0);
	g_assert_cmpint(v4l2cuse_source_negotiate(src, &pix), ==, 0);
	g_assert_cmpuint(v4l2cuse_gst_live_pipelines(), ==, 0);

	pix = ts_start(src, V4L2_PIX_FMT_YUYV, 64, 48, 1, 30);
	g_assert_cmpuint(v4l2cuse_gst_live_pipelines(), ==, 1);
	buf = g_malloc(pix.sizeimage);
	g_assert_cmpint(wait_frame(src, &pix, buf, NULL), ==, 0);
	src->ops->stop(src);
	wait_no_pipeline();
	/* Not started: no frame, and still nothing built. */
	g_assert_cmpint(produce(src, &pix, buf, NULL), ==, -EINVAL);
	g_assert_cmpuint(v4l2cuse_gst_live_pipelines(), ==, 0);

	pix = ts_start(src, V4L2_PIX_FMT_YUYV, 64, 48, 1, 30);
	g_assert_cmpuint(v4l2cuse_gst_live_pipelines(), ==, 1);
	v4l2cuse_source_destroy(src);
	g_assert_cmpuint(v4l2cuse_gst_live_pipelines(), ==, 0);
}

/*
 * A stream that ends (5 frames, then end-of-stream): no signal (-ENOLINK,
 * one warning), then, after the back-off (retry=20 ms), frames again from
 * a new pipeline and no second warning for the same loss. Twice. Driven
 * by the wake fd alone, as the daemon does: it turns readable for each
 * frame and, while there is no signal, at the negotiated rate.
 */
V4L2CUSE_TEST("/live/reconnect", test_reconnect)
{
	struct v4l2cuse_source *src = ts_make(
		"gst:videotestsrc num-buffers=5 pattern=white ! "
		"video/x-raw,width=64,height=48,framerate=30/1,sizes=64x48,retry=20");
	unsigned int warnings = n_warnings, lost = 0, back = 0, frames = 0;
	g_autofree uint8_t *buf = NULL;
	struct v4l2_pix_format pix;
	bool was_lost = false;

	pix = ts_start(src, V4L2_PIX_FMT_YUYV, 64, 48, 1, 30);
	buf = g_malloc(pix.sizeimage);
	g_assert_cmpint(wait_frame(src, &pix, buf, NULL), ==, 0);
	for (unsigned int i = 0; i < 2000 && back < 2; i++) {
		struct pollfd pfd = { .fd = v4l2cuse_source_wake_fd(src), .events = POLLIN };
		int r;

		g_assert_cmpint(poll(&pfd, 1, 2000), ==, 1);
		r = produce(src, &pix, buf, NULL);
		if (r == -EAGAIN)
			continue;	/* between frames */
		if (r == 0) {
			frames++;
			assert_yuyv(buf, &pix, 0, pix.width, 235, 128, 128, 2);
			if (was_lost) {
				back++;
				g_assert_cmpuint(n_warnings, ==, warnings + back);
			}
			was_lost = false;
		} else {
			g_assert_cmpint(r, ==, -ENOLINK);
			if (!was_lost)
				lost++;
			was_lost = true;
		}
	}
	g_test_message("%u frames, lost %u times, back %u times", frames, lost, back);
	g_assert_cmpuint(back, ==, 2);
	g_assert_cmpuint(lost, ==, 2);
	/*
	 * Each frame of the streams at most once (5 of each of the first two
	 * pipelines, the first of the third): nothing is repeated between
	 * frames (fewer only if the appsink dropped one on a loaded machine).
	 */
	g_assert_cmpuint(frames, <=, 10);
	g_assert_cmpuint(n_warnings, ==, warnings + 2);
	v4l2cuse_source_destroy(src);
	g_assert_cmpuint(v4l2cuse_gst_live_pipelines(), ==, 0);
}

/*
 * A stream that goes silent without ending (three frames through a funnel
 * whose other input, live, drops everything: no end-of-stream): no signal
 * timeout= (200 ms) after the last frame, with one warning.
 */
V4L2CUSE_TEST("/live/timeout", test_timeout)
{
	struct v4l2cuse_source *src = ts_make(
		"gst:videotestsrc is-live=true ! valve drop=true ! f. "
		"videotestsrc num-buffers=3 pattern=white ! "
		"video/x-raw,width=64,height=48,framerate=30/1 ! f. funnel name=f,"
		"sizes=64x48,timeout=200,retry=60000");
	struct pollfd pfd = { .fd = v4l2cuse_source_wake_fd(src), .events = POLLIN };
	unsigned int warnings = n_warnings;
	g_autofree uint8_t *buf = NULL;
	struct v4l2_pix_format pix;
	int64_t last = 0;
	int r = 0;

	pix = ts_start(src, V4L2_PIX_FMT_YUYV, 64, 48, 1, 30);
	buf = g_malloc(pix.sizeimage);
	g_assert_cmpint(wait_frame(src, &pix, buf, NULL), ==, 0);
	last = g_get_monotonic_time();
	for (unsigned int i = 0; i < 1000; i++) {
		g_assert_cmpint(poll(&pfd, 1, 2000), ==, 1);
		r = produce(src, &pix, buf, NULL);
		if (r == 0)
			last = g_get_monotonic_time();
		else if (r != -EAGAIN)
			break;
	}
	g_assert_cmpint(r, ==, -ENOLINK);
	g_assert_cmpint(g_get_monotonic_time() - last, >=, 200000);
	g_assert_cmpuint(n_warnings, ==, warnings + 1);
	v4l2cuse_source_destroy(src);
	g_assert_cmpuint(v4l2cuse_gst_live_pipelines(), ==, 0);
}

/* The source's debug lines that say a latency was set ("latency=N ms on NAME"). */
static GPtrArray *latency_lines;
static GMutex latency_lock;

static void
latency_log(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data)
{
	if (!strstr(message, "latency="))
		return;
	g_mutex_lock(&latency_lock);
	g_ptr_array_add(latency_lines, g_strdup(message));
	g_mutex_unlock(&latency_lock);
}

/* Wait until a latency line containing @what was logged (2 s at most). */
static bool
latency_logged(const char *what)
{
	for (unsigned int i = 0; i < 400; i++) {
		bool found = false;

		g_mutex_lock(&latency_lock);
		for (guint j = 0; j < latency_lines->len; j++)
			found = found || strstr(latency_lines->pdata[j], what);
		g_mutex_unlock(&latency_lock);
		if (found)
			return true;
		g_usleep(5000);
	}
	return false;
}

/*
 * latency= reaches the jitter buffer of an rtspsrc, named in a gst:
 * description (set when the pipeline is built) or made by uridecodebin
 * for uri: (its source-setup, when it starts). Nothing listens on port 1:
 * the stream is lost after that (one warning each), which is not checked
 * here.
 */
V4L2CUSE_TEST("/live/latency", test_latency)
{
	static const struct { const char *spec, *line; } cases[] = {
		{ "gst:rtspsrc name=cam location=rtsp://127.0.0.1:1/x ! decodebin,"
		  "sizes=64x48,latency=123", "gst: latency=123 ms on cam" },
		{ "uri:rtsp://127.0.0.1:1/y,sizes=64x48,latency=77", "uri: latency=77 ms on source" },
	};
	GstElementFactory *f;
	guint handler;

	gst_init(NULL, NULL);
	f = gst_element_factory_find("rtspsrc");
	if (!f) {
		g_test_skip("no rtspsrc (gstreamer1.0-plugins-good)");
		return;
	}
	gst_object_unref(f);
	latency_lines = g_ptr_array_new_with_free_func(g_free);
	handler = g_log_set_handler("v4l2cuse-sources", G_LOG_LEVEL_DEBUG, latency_log, NULL);
	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		struct v4l2cuse_source *src = ts_make(cases[i].spec);

		g_mutex_lock(&latency_lock);
		g_assert_cmpuint(latency_lines->len, ==, 0);	/* nothing built at create() */
		g_mutex_unlock(&latency_lock);
		ts_start(src, V4L2_PIX_FMT_YUYV, 64, 48, 1, 30);
		if (!latency_logged(cases[i].line))
			g_error("no '%s'", cases[i].line);
		v4l2cuse_source_destroy(src);
		g_ptr_array_set_size(latency_lines, 0);
	}
	g_log_remove_handler("v4l2cuse-sources", handler);
	g_ptr_array_unref(latency_lines);
	g_assert_cmpuint(v4l2cuse_gst_live_pipelines(), ==, 0);
}

/*
 * @spec (a uri: source of solid green JPEGs, 128x96 offered) streamed as
 * YUYV 128x96 at @fps gives a green frame: Y' 145, Cb 54, Cr 34, or 141,
 * 63, 45 after jpegenc's range (see /live/jpeg). Its pipeline is gone after.
 */
static void
assert_green_frame(const char *spec, unsigned int fps)
{
	struct v4l2cuse_source *src = ts_make(spec);
	struct v4l2_pix_format pix = ts_start(src, V4L2_PIX_FMT_YUYV, 128, 96, 1, fps);
	g_autofree uint8_t *buf = g_malloc(pix.sizeimage);

	g_assert_cmpint(wait_frame(src, &pix, buf, NULL), ==, 0);
	assert_yuyv(buf, &pix, 0, pix.width, 143, 58, 40, 8);
	v4l2cuse_source_destroy(src);
	wait_no_pipeline();
}

/*
 * uri:file:// of a small Matroska file (green MJPEG, 64x48) through
 * uridecodebin, scaled to 128x96 YUYV. Green is Y' 145, Cb 54, Cr 34,
 * or 141, 63, 45 after jpegenc's range (see /live/jpeg).
 */
V4L2CUSE_TEST("/live/uri-file", test_uri_file)
{
	g_autofree char *mkv = tmp_path("live.mkv");
	g_autofree char *desc = g_strdup_printf(
		"videotestsrc num-buffers=60 pattern=solid-color foreground-color=0xff00ff00 ! "
		"video/x-raw,width=64,height=48,framerate=30/1 ! jpegenc ! matroskamux ! "
		"filesink location=\"%s\"", mkv);
	g_autofree char *uri = NULL, *spec = NULL;

	if (!gst_write(desc)) {
		g_test_skip("GStreamer cannot write the sample MKV here");
		return;
	}
	uri = gst_filename_to_uri(mkv, NULL);
	spec = g_strdup_printf("uri:%s,sizes=128x96,latency=0", uri);
	assert_green_frame(spec, 30);
}

/* An HTTP MJPEG camera: multipart/x-mixed-replace of one JPEG, 10 parts a second. */
static const char mjpeg_server[] =
	"import http.server, os, sys, threading, time\n"
	/* Gone with the test: stdin's end is the test's. */
	"threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()\n"
	"jpeg = open(sys.argv[1], 'rb').read()\n"
	"part = b'--f\\r\\nContent-Type: image/jpeg\\r\\nContent-Length: %d\\r\\n\\r\\n' "
	"% len(jpeg) + jpeg + b'\\r\\n'\n"
	"class H(http.server.BaseHTTPRequestHandler):\n"
	"    def log_message(self, *a): pass\n"
	"    def do_GET(self):\n"
	"        self.send_response(200)\n"
	"        self.send_header('Content-Type', 'multipart/x-mixed-replace; boundary=f')\n"
	"        self.end_headers()\n"
	"        try:\n"
	"            while True:\n"
	"                self.wfile.write(part); self.wfile.flush(); time.sleep(0.1)\n"
	"        except OSError: pass\n"
	"s = http.server.ThreadingHTTPServer(('127.0.0.1', 0), H)\n"
	"s.daemon_threads = True\n"
	"print(s.server_address[1], flush=True)\n"
	"s.serve_forever()\n";

/*
 * uri:http:// of an MJPEG camera's stream (never ends, parts without
 * timestamps) plays: uridecodebin's souphttpsrc live, its multipartdemux
 * single-stream. A solid green JPEG, decoded as in /live/uri-file.
 */
V4L2CUSE_TEST("/live/uri-http-mjpeg", test_uri_http_mjpeg)
{
	g_autofree char *jpg = tmp_path("green.jpg");
	g_autofree char *desc = g_strdup_printf(
		"videotestsrc num-buffers=1 pattern=solid-color foreground-color=0xff00ff00 ! "
		"video/x-raw,width=64,height=48 ! jpegenc ! filesink location=\"%s\"", jpg);
	g_autoptr(GSubprocess) server = NULL;
	g_autoptr(GDataInputStream) out = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree char *port = NULL, *spec = NULL;
	g_autofree char *python = g_find_program_in_path("python3");

	if (!gst_write(desc) || !python) {
		g_test_skip("no GStreamer JPEG writer or no python3 here");
		return;
	}
	server = g_subprocess_new(G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE,
				  &error, "python3", "-c",
				  mjpeg_server, jpg, NULL);
	g_assert_no_error(error);
	out = g_data_input_stream_new(g_subprocess_get_stdout_pipe(server));
	port = g_data_input_stream_read_line(out, NULL, NULL, &error);
	g_assert_no_error(error);
	g_assert_nonnull(port);
	spec = g_strdup_printf("uri:http://127.0.0.1:%s/cam.mjpg,sizes=128x96,fps=10", port);
	assert_green_frame(spec, 10);
	g_subprocess_force_exit(server);
	g_subprocess_wait(server, NULL, NULL);
}

#else

V4L2CUSE_TEST("/live/not-built", test_not_built)
{
	g_test_skip("built without GStreamer");
}

#endif
