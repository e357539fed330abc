/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The "uvc" source without a camera: every startup error is one line that
 * names the device. Against a fake camera (fake-camera.h): the camera is
 * open only while the source streams (on demand), start() does not wait
 * for it, a camera gone while closed gives no signal until it is back,
 * keep_open=1 keeps it open. (Streaming, controls and unplugging of a real
 * driver are covered in the VM over vivid: tests/vm/test-sources.sh.)
 */

#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <string.h>

#include <glib.h>

#include "v4l2cuse/source.h"
#include "fake-camera.h"
#include "test-source-util.h"
#include "test-main.h"

V4L2CUSE_TEST("/uvc/errors", test_errors)
{
	static const struct {
		const char *spec;
		const char *want;
	} cases[] = {
		{ "uvc", "uvc: no device given" },
		{ "uvc:", "uvc: no device given" },
		{ "uvc:/dev/v4l2cuse-no-such-camera", "uvc: '/dev/v4l2cuse-no-such-camera': No such "
						      "file or directory" },
		{ "uvc:/dev/null", "uvc: '/dev/null': not a V4L2 capture device" },
		{ "uvc:/dev/null,buffers=1", "uvc: option 'buffers'" },
		{ "uvc:/dev/null,retry_ms=x", "uvc: option 'retry_ms'" },
		{ "uvc:/dev/null,frobnicate=1", "uvc: unknown option 'frobnicate'" },
		/* The device draws placeholders (placeholder= of the device), not the source. */
		{ "uvc:/dev/null,placeholder=/x.png", "uvc: unknown option 'placeholder'" },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		struct v4l2cuse_source *src = NULL;
		g_autofree char *error = NULL;

		g_assert_cmpint(v4l2cuse_source_create(cases[i].spec, &src, &error), <, 0);
		g_assert_null(src);
		g_test_message("%s -> %s", cases[i].spec, error);
		if (!g_str_has_prefix(error, cases[i].want))
			g_error("%s: '%s' does not start with '%s'", cases[i].spec, error,
				cases[i].want);
		g_assert_null(strchr(error, '\n'));
	}
}

static const struct fake_camera_mode cam_modes[] = {
	{ 640, 480 }, { 320, 240 },
};

static const struct fake_camera cam = {
	.modes = cam_modes, .n_modes = G_N_ELEMENTS(cam_modes), .y = 100, .cb = 128, .cr = 128,
};

/* The frames the tests take: YUYV 320x240 at 100 frames a second. */
struct grab {
	struct v4l2_pix_format pix;
	uint8_t buf[320 * 240 * 2];
	struct v4l2cuse_frame f;
};

static void
grab_start(struct v4l2cuse_source *src, struct grab *g)
{
	g->pix = ts_start(src, V4L2_PIX_FMT_YUYV, 320, 240, 1, 100);
	g->f = (struct v4l2cuse_frame){ .data = g->buf, .length = sizeof(g->buf),
					.fmt = &g->pix };
}

/* A camera frame within @timeout_ms, with nothing but waits before it. */
static void
grab_frame(struct v4l2cuse_source *src, struct grab *g, int timeout_ms)
{
	memset(g->buf, 0, sizeof(g->buf));
	g_assert_cmpint(ts_produce_wait(src, &g->f, timeout_ms, NULL), ==, 0);
	g_assert_cmpuint(g->f.bytesused, ==, sizeof(g->buf));
	g_assert_cmpuint(g->buf[0], ==, cam.y);
}

static unsigned int
open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	unsigned int n = 0;

	g_assert_nonnull(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/*
 * Nobody streams: the camera is closed (its LED off, USB may suspend it).
 * start() opens it within the grace, frames flow, stop() closes it; 20
 * rounds leave no fd behind.
 */
V4L2CUSE_TEST("/uvc/on-demand", test_on_demand)
{
	struct v4l2cuse_source *src;
	g_autofree struct grab *g = g_new0(struct grab, 1);
	unsigned int fds;

	fake_camera_install(&cam);
	src = ts_make("uvc:/fake/camera");
	/* The snapshot opened it once, and closed it. */
	g_assert_cmpint(fake_camera_fd(), <, 0);
	g_assert_cmpuint(fake_camera_opens(), ==, 1);
	g_assert_cmpuint(fake_camera_closes(), ==, 1);

	fds = open_fds();
	for (unsigned int round = 0; round < 20; round++) {
		gint64 t0 = g_get_monotonic_time();

		grab_start(src, g);
		/* No placeholder while it opens: waits, then its frame, within the grace. */
		grab_frame(src, g, 1000);
		g_assert_cmpint(g_get_monotonic_time() - t0, <, G_USEC_PER_SEC);
		g_assert_cmpint(fake_camera_fd(), >=, 0);
		grab_frame(src, g, 1000);
		grab_frame(src, g, 1000);
		src->ops->stop(src);
		g_assert_cmpint(fake_camera_fd(), <, 0);
		g_assert_cmpuint(fake_camera_opens(), ==, 2 + round);
		g_assert_cmpuint(fake_camera_closes(), ==, 2 + round);
	}
	g_assert_cmpuint(open_fds(), ==, fds);
	v4l2cuse_source_destroy(src);
	fake_camera_remove();
}

/* keep_open=1: open from create() on, streamed and stopped without closing. */
V4L2CUSE_TEST("/uvc/keep-open", test_keep_open)
{
	struct v4l2cuse_source *src;
	g_autofree struct grab *g = g_new0(struct grab, 1);
	int fd;

	fake_camera_install(&cam);
	src = ts_make("uvc:/fake/camera,keep_open=1");
	fd = fake_camera_fd();
	g_assert_cmpint(fd, >=, 0);
	for (unsigned int round = 0; round < 3; round++) {
		grab_start(src, g);
		/* Open already: the frame is there at once. */
		g_assert_cmpint(src->ops->produce(src, &g->f), ==, 0);
		src->ops->stop(src);
		g_assert_cmpint(fake_camera_fd(), ==, fd);
	}
	g_assert_cmpuint(fake_camera_opens(), ==, 1);
	g_assert_cmpuint(fake_camera_closes(), ==, 0);
	v4l2cuse_source_destroy(src);
	g_assert_cmpint(fake_camera_fd(), <, 0);
	fake_camera_remove();
}

/*
 * A camera slow to open (a USB camera resuming): start() does not wait
 * for it, produce() waits without a placeholder for the grace (1 s), then
 * gives no signal until the camera is there.
 */
V4L2CUSE_TEST("/uvc/slow-open", test_slow_open)
{
	struct v4l2cuse_source *src;
	g_autofree struct grab *g = g_new0(struct grab, 1);
	unsigned int waits = 0;
	gint64 t0;

	fake_camera_install(&cam);
	src = ts_make("uvc:/fake/camera");
	fake_camera_hold_open(true);
	t0 = g_get_monotonic_time();
	grab_start(src, g);
	g_assert_cmpint(g_get_monotonic_time() - t0, <, G_USEC_PER_SEC / 2);
	/* Ticks at 100/s: waits (not "no signal") for the grace, then no signal. */
	g_assert_cmpint(ts_produce_wait(src, &g->f, 4000, &waits), ==, -ENOLINK);
	g_assert_cmpint(g_get_monotonic_time() - t0, >=, G_USEC_PER_SEC);
	g_assert_cmpuint(waits, >, 10);
	g_assert_cmpint(fake_camera_fd(), <, 0);
	fake_camera_hold_open(false);
	g_assert_cmpint(ts_produce_wait(src, &g->f, 2000, NULL), ==, 0);
	g_assert_cmpuint(g->buf[0], ==, cam.y);
	src->ops->stop(src);
	g_assert_cmpint(fake_camera_fd(), <, 0);
	v4l2cuse_source_destroy(src);
	fake_camera_remove();
}

/*
 * Unplugged while closed: nothing happens until start(), which gives no
 * signal at once (not after the grace), and the camera's frames again
 * when it is back.
 */
V4L2CUSE_TEST("/uvc/gone-while-closed", test_gone_while_closed)
{
	/* "is not there; no signal until it is back" is a warning: expected here. */
	GLogLevelFlags fatal = g_log_set_always_fatal(G_LOG_FATAL_MASK | G_LOG_LEVEL_CRITICAL);
	struct v4l2cuse_source *src;
	g_autofree struct grab *g = g_new0(struct grab, 1);
	gint64 t0;
	int r;

	fake_camera_install(&cam);
	src = ts_make("uvc:/fake/camera,retry_ms=50");
	g_assert_cmpint(fake_camera_fd(), <, 0);
	fake_camera_unplug(true);
	t0 = g_get_monotonic_time();
	grab_start(src, g);
	g_assert_cmpint(ts_produce_wait(src, &g->f, 2000, NULL), ==, -ENOLINK);
	g_assert_cmpint(g_get_monotonic_time() - t0, <, G_USEC_PER_SEC / 2);
	/* No signal on every tick while it is away. */
	g_assert_cmpint(ts_produce_wait(src, &g->f, 2000, NULL), ==, -ENOLINK);
	fake_camera_unplug(false);
	do {
		r = ts_produce_wait(src, &g->f, 2000, NULL);
	} while (r == -ENOLINK && g_get_monotonic_time() - t0 < 5 * G_USEC_PER_SEC);
	g_assert_cmpint(r, ==, 0);
	g_assert_cmpuint(g->buf[0], ==, cam.y);
	src->ops->stop(src);
	g_assert_cmpint(fake_camera_fd(), <, 0);
	g_assert_cmpuint(fake_camera_opens(), ==, fake_camera_closes());

	/* Gone and stopped while the thread looks for it: stop() ends the thread. */
	fake_camera_unplug(true);
	grab_start(src, g);
	g_assert_cmpint(ts_produce_wait(src, &g->f, 2000, NULL), ==, -ENOLINK);
	src->ops->stop(src);
	fake_camera_unplug(false);
	v4l2cuse_source_destroy(src);
	fake_camera_remove();
	g_log_set_always_fatal(fatal);
}

/*
 * Busy with another application when start() opens it: no placeholder,
 * the stream ends with an error (-ECONNREFUSED once), stop() closes the
 * camera; the next start() streams once it is free.
 */
V4L2CUSE_TEST("/uvc/refused-at-open", test_refused_at_open)
{
	struct v4l2cuse_source *src;
	g_autofree struct grab *g = g_new0(struct grab, 1);

	fake_camera_install(&cam);
	src = ts_make("uvc:/fake/camera");
	fake_camera_busy(true);
	grab_start(src, g);
	g_assert_cmpint(ts_produce_wait(src, &g->f, 2000, NULL), ==, -ECONNREFUSED);
	/* Said once: nothing more until stop(). */
	g_assert_cmpint(src->ops->produce(src, &g->f), ==, -EAGAIN);
	src->ops->stop(src);
	g_assert_cmpint(fake_camera_fd(), <, 0);
	g_assert_cmpuint(fake_camera_opens(), ==, fake_camera_closes());
	fake_camera_busy(false);
	grab_start(src, g);
	grab_frame(src, g, 1000);
	src->ops->stop(src);
	g_assert_cmpint(fake_camera_fd(), <, 0);
	v4l2cuse_source_destroy(src);
	fake_camera_remove();
}
