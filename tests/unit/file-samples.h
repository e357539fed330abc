/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What the file source's tests (test-source-file.c, test-source-gst.c)
 * share: a temporary directory for the sample files they write, the
 * samples' grey levels, producing a frame, and a log handler that lets the
 * file source's expected warnings through (counted) while any other
 * warning stays fatal. Header-only, since each test is a program of its own.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <glib.h>
#include <linux/videodev2.h>

#include "v4l2cuse/source.h"

static char *tmpdir;

/*
 * Runtime warnings of the file source are expected here: warnings are not
 * fatal in this program, but any other warning of the sources still is.
 */
static unsigned int n_warnings;

static inline void
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

static inline char *
tmp_path(const char *name)
{
	return g_build_filename(tmpdir, name, NULL);
}

/* Frame i of the samples: flat Y' = 16 + 8 i, Cb = 100 + i, Cr = 150 - i. */
static inline uint8_t
sample_y(unsigned int i)
{
	return (uint8_t)(16 + 8 * i);
}

/* produce() one frame of @pix; a raw one must fill sizeimage. */
static inline int
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

/* Route the sources' warnings through log_handler; make the directory. */
static inline void
file_samples_init(void)
{
	g_log_set_always_fatal(G_LOG_FATAL_MASK | G_LOG_LEVEL_CRITICAL);
	g_log_set_handler("v4l2cuse-sources", G_LOG_LEVEL_WARNING | G_LOG_LEVEL_MESSAGE,
			  log_handler, NULL);
	tmpdir = g_dir_make_tmp("v4l2cuse-test-file-XXXXXX", NULL);
	g_assert_nonnull(tmpdir);
}

/* Remove the directory and what the tests wrote into it. */
static inline void
file_samples_cleanup(void)
{
	g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", tmpdir);

	if (system(cmd) != 0)
		g_printerr("could not remove %s\n", tmpdir);
	g_free(tmpdir);
}
