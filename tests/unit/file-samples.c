/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The file source tests' shared part and main() (file-samples.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#if HAVE_GSTREAMER_READER
#include <gst/gst.h>
#endif

#include "file-samples.h"
#include "test-main.h"

char *tmpdir;

/*
 * Runtime warnings of the file source are expected here: warnings are not
 * fatal in these programs, but any other warning of the sources still is.
 */
unsigned int n_warnings;

static void
log_handler(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data)
{
	if ((level & G_LOG_LEVEL_WARNING) &&
	    (strstr(message, "corrupt frame") || strstr(message, "no signal"))) {
		n_warnings++;
		g_test_message("expected warning: %s", message);
		return;
	}
	if (level & (G_LOG_LEVEL_WARNING | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_ERROR))
		g_error("unexpected: %s", message);
	if (level & G_LOG_LEVEL_MESSAGE)
		g_test_message("%s", message);
}

char *
tmp_path(const char *name)
{
	return g_build_filename(tmpdir, name, NULL);
}

int
produce(struct v4l2cuse_source *src, const struct v4l2_pix_format *pix, uint8_t *buf,
	uint32_t *ret_used)
{
	struct v4l2cuse_frame f = {
		.data = buf, .length = pix->sizeimage, .fmt = pix,
	};
	int r = src->ops->produce(src, &f);

	if (ret_used)
		*ret_used = f.bytesused;
	if (r == 0 && pix->pixelformat != V4L2_PIX_FMT_MJPEG)
		g_assert_cmpuint(f.bytesused, ==, pix->sizeimage);
	return r;
}

int
main(int argc, char **argv)
{
	g_autofree char *cmd = NULL;
	int r;

	g_test_init(&argc, &argv, NULL);
	/* The sources' warnings through log_handler. */
	g_log_set_always_fatal(G_LOG_FATAL_MASK | G_LOG_LEVEL_CRITICAL);
	g_log_set_handler("v4l2cuse-sources", G_LOG_LEVEL_WARNING | G_LOG_LEVEL_MESSAGE,
			  log_handler, NULL);
	tmpdir = g_dir_make_tmp("v4l2cuse-test-file-XXXXXX", NULL);
	g_assert_nonnull(tmpdir);
	v4l2cuse_test_add_registered();
	r = g_test_run();
	/* Remove the directory and what the tests wrote into it. */
	cmd = g_strdup_printf("rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		g_printerr("could not remove %s\n", tmpdir);
	g_free(tmpdir);
	return r;
}

#if HAVE_GSTREAMER_READER
/* Run a gst-launch style pipeline that writes a file; false if it cannot. */
bool
gst_write(const char *desc)
{
	GError *err = NULL;
	GstElement *p;
	GstMessage *msg;
	bool ok;

	gst_init(NULL, NULL);
	p = gst_parse_launch(desc, &err);
	if (!p) {
		g_test_message("cannot write a sample: %s", err->message);
		g_error_free(err);
		return false;
	}
	gst_element_set_state(p, GST_STATE_PLAYING);
	msg = gst_bus_timed_pop_filtered(GST_ELEMENT_BUS(p), 60 * GST_SECOND,
					 GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
	ok = msg && GST_MESSAGE_TYPE(msg) == GST_MESSAGE_EOS;
	if (msg)
		gst_message_unref(msg);
	gst_element_set_state(p, GST_STATE_NULL);
	gst_object_unref(p);
	return ok;
}
#endif
