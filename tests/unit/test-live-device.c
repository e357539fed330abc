/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A device whose source is a live GStreamer stream (gst:, sources/gst-live.c)
 * as a consumer sees it, through the fake transport and the daemon's frame
 * loop driven by the source's wake fd: no pipeline until the consumer
 * streams; the stream's frames (the NO SIGNAL card until the first one),
 * then, when it ends, the card with the signal reported lost and no error
 * on any buffer; the pipeline gone when the consumer stops.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <glib.h>
#include <linux/videodev2.h>

#include "v4l2cuse/source.h"
#include "videobuf.h"
#include "device.h"
#include "fake-req.h"
#include "fake-consumer.h"
#include "test-main.h"

#if HAVE_GSTREAMER_READER
#include "gst-common.h"

static unsigned int n_source_lost;

/* The source's and the device's signal lines are expected; no other warning. */
static void
log_handler(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data)
{
	if (strstr(message, "no signal")) {
		n_source_lost += strcmp(domain, "v4l2cuse-sources") == 0;
		g_test_message("expected: %s", message);
		return;
	}
	if (level & (G_LOG_LEVEL_WARNING | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_ERROR))
		g_error("unexpected: %s", message);
	g_test_message("%s", message);
}

V4L2CUSE_TEST("/live-device/lost", test_lost)
{
	struct v4l2cuse_device_config cfg = fake_yuyv_config(
		"video40", "gst:videotestsrc num-buffers=5 pattern=white ! "
		"video/x-raw,width=64,height=48,framerate=30/1,sizes=160x120,retry=60000",
		160, 120, 30);
	gint64 end = g_get_monotonic_time() + 20 * G_USEC_PER_SEC;
	unsigned int white = 0, card_before = 0, card = 0, h1, h2;
	struct v4l2cuse_device_stats st;
	struct v4l2cuse_device *dev;
	struct fake_consumer c;

	g_log_set_always_fatal(G_LOG_FATAL_MASK | G_LOG_LEVEL_CRITICAL);
	h1 = g_log_set_handler("v4l2cuse-sources", G_LOG_LEVEL_WARNING | G_LOG_LEVEL_MESSAGE,
			       log_handler, NULL);
	h2 = g_log_set_handler("v4l2cuse-daemon", G_LOG_LEVEL_WARNING | G_LOG_LEVEL_MESSAGE,
			       log_handler, NULL);
	dev = fake_device(&cfg);
	g_assert_cmpuint(v4l2cuse_gst_live_pipelines(), ==, 0);

	fake_consumer_start(&c, dev, 4, 0);
	g_assert_cmpuint(v4l2cuse_gst_live_pipelines(), ==, 1);
	while (card < 10 && g_get_monotonic_time() < end) {
		struct v4l2_buffer b;

		g_main_context_iteration(NULL, TRUE);
		/* Checked whole and without V4L2_BUF_FLAG_ERROR by the fake consumer. */
		while (fake_consumer_dqbuf(&c, 160 * 120 * 2, &b) == 0) {
			const uint8_t *p = c.mem[b.index];

			/*
			 * The card until the stream is connected (its first
			 * frame), the stream's frames, the card again when it
			 * has ended.
			 */
			if (p[0] == 235 && p[160 * 120 * 2 - 2] == 235) {
				g_assert_cmpuint(card, ==, 0);
				white++;
			} else if (white == 0) {
				card_before++;
			} else {
				card++;
			}
			g_assert_cmpint(fake_consumer_qbuf(&c, b.index), ==, 0);
		}
	}
	g_test_message("%u frames of the card, %u of the stream, %u of the card", card_before,
		       white, card);
	g_assert_cmpuint(white, >=, 1);
	g_assert_cmpuint(white, <=, 5);
	g_assert_cmpuint(card, >=, 10);
	v4l2cuse_device_get_stats(dev, &st);
	g_assert_true(st.signal_lost);
	g_assert_cmpuint(n_source_lost, ==, 1);	/* one line for the loss */

	fake_consumer_close(&c);
	for (unsigned int i = 0; i < 2000 && v4l2cuse_gst_live_pipelines() > 0; i++)
		g_usleep(5000);
	g_assert_cmpuint(v4l2cuse_gst_live_pipelines(), ==, 0);
	v4l2cuse_device_free(dev);
	g_log_remove_handler("v4l2cuse-sources", h1);
	g_log_remove_handler("v4l2cuse-daemon", h2);
}

#else

V4L2CUSE_TEST("/live-device/not-built", test_not_built)
{
	g_test_skip("built without GStreamer");
}

#endif
