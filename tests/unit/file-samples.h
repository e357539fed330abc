/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What the file source's tests (test-source-file.c, test-source-gst.c,
 * test-source-live.c)
 * share (file-samples.c): a temporary directory for the sample files they
 * write, the samples' grey levels, producing a frame, and a log handler
 * that lets the file source's expected warnings through (counted) while
 * any other warning stays fatal. file-samples.c has their main(): it sets
 * the directory and the handler up, runs the registered tests
 * (test-main.h) and removes the directory.
 */

#include <stdbool.h>
#include <stdint.h>
#include <glib.h>
#include <linux/videodev2.h>

#include "v4l2cuse/source.h"

/* The temporary directory. */
extern char *tmpdir;

/* The file source's warnings seen so far ("corrupt frame", "no signal"). */
extern unsigned int n_warnings;

/* @name in the temporary directory (g_free it). */
char *tmp_path(const char *name);

/* Frame i of the samples: flat Y' = 16 + 8 i, Cb = 100 + i, Cr = 150 - i. */
static inline uint8_t
sample_y(unsigned int i)
{
	return (uint8_t)(16 + 8 * i);
}

/* produce() one frame of @pix; a raw one must fill sizeimage. */
int produce(struct v4l2cuse_source *src, const struct v4l2_pix_format *pix, uint8_t *buf,
	    uint32_t *ret_used);

#if HAVE_GSTREAMER_READER
/* Run a gst-launch style pipeline that writes a file; false if it cannot. */
bool gst_write(const char *desc);
#endif
