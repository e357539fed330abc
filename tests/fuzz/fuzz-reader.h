/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Shared by the file reader harnesses (fuzz-y4m.c, fuzz-mjpeg.c): a reader
 * opened over the input as an in-memory file, where a refused input must
 * come with one line of reason, and the results of next() a reader may
 * give (anything else aborts, so libFuzzer saves the input as a crash).
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "file-reader.h"

/* The reader @open_reader makes of @data; NULL when it refused the input. */
static inline struct v4l2cuse_file_reader *
fuzz_reader_open(const uint8_t *data, size_t size,
		 int (*open_reader)(FILE *f, struct v4l2cuse_file_reader **r, char **error))
{
	struct v4l2cuse_file_reader *r = NULL;
	char *error = NULL;
	FILE *f = fmemopen((void *)data, size, "rb");

	if (!f)
		return NULL;
	if (open_reader(f, &r, &error) < 0) {
		if (!error || strchr(error, '\n'))
			abort();	/* every failure has one line of reason */
		g_free(error);
		return NULL;
	}
	return r;
}

/*
 * The next image of @r: 1 when *@img holds one, 0 at the end (-ENODATA,
 * -EIO), -1 for a frame the reader skipped (-EBADMSG).
 */
static inline int
fuzz_reader_next(struct v4l2cuse_file_reader *r, struct v4l2cuse_image *img)
{
	int rr = r->ops->next(r, img);

	if (rr == -ENODATA || rr == -EIO)
		return 0;
	if (rr == -EBADMSG)
		return -1;
	if (rr != 0)
		abort();
	return 1;
}
