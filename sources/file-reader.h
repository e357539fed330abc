/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Frame readers behind the "file" source (file.c) and the placeholder
 * image (placeholder.c), one per container, all with the same ops:
 *
 *   y4m.c            YUV4MPEG2: 4:2:0, 4:2:2, 4:4:4(+alpha), mono, 8 bit
 *   mjpeg-stream.c   concatenated JPEGs (a single one is a still)
 *   image.c          still PNG (libpng) or JPEG (libjpeg-turbo), decoded once
 *   raw.c            raw frames of a given format and size
 *   gst.c            anything GStreamer decodes (-Dgstreamer)
 *
 * Files are hostile: every length is checked before use, sizes are limited
 * to V4L2CUSE_MAX_* and the limits below, and a reader never reads past
 * what it was given. The Y4M and MJPEG parsers have libFuzzer harnesses
 * (tests/fuzz/).
 *
 * Threading: one thread owns a reader (the daemon's dispatcher). Reads of
 * regular files are synchronous; gst.c decodes on GStreamer's threads and
 * never waits, not even for its first frame (see probe()).
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <linux/videodev2.h>

#include "convert.h"

#define V4L2CUSE_FILE_READER_MAX_LINE	4096		/* a Y4M header or FRAME line */
#define V4L2CUSE_FILE_READER_MAX_JPEG	(32u << 20)	/* one JPEG (stream frame or still) */
#define V4L2CUSE_FILE_READER_MAX_IMAGE	(64u << 20)	/* a still image file */

struct v4l2cuse_file_reader;

struct v4l2cuse_file_reader_info {
	uint32_t width, height;		/* frame size (of the first frame); 0 until probe() */
	struct v4l2_fract interval;	/* seconds per frame; 0/0: the file has no rate */
	struct v4l2_fract aspect;	/* pixel aspect ratio (Y4M A, GStreamer PAR); 0:0 unknown */
	uint32_t fourcc;		/* what next() delivers (for the format list's order) */
	bool still;			/* one picture, held; next() keeps returning it */
	bool can_reopen;		/* cheap to open again after a runtime failure */
	char kind[40];			/* "Y4M 4:2:0", "MJPEG stream", "PNG", ... */
};

struct v4l2cuse_file_reader_ops {
	const char *name;
	/*
	 * Required. The next frame. *ret_img stays valid until the next call,
	 * rewind() or destroy(). Returns 0; -ENODATA at the end of the file;
	 * -EBADMSG when a corrupt frame was skipped (call again for the next
	 * one); -EAGAIN when nothing is decoded yet (GStreamer); any other
	 * -errno when the file failed (read error).
	 */
	int (*next)(struct v4l2cuse_file_reader *r, struct v4l2cuse_image *ret_img);
	/* Required. Back to the first frame (asynchronous for GStreamer). */
	int (*rewind)(struct v4l2cuse_file_reader *r);
	/*
	 * Required. Frees the reader, the struct included; the file (base.f)
	 * is not its business: v4l2cuse_file_reader_free() closes it.
	 */
	void (*destroy)(struct v4l2cuse_file_reader *r);
	/*
	 * Optional, never blocks: for a reader that learns the file's info
	 * only from its first decoded frame (GStreamer); until then the
	 * info's size is 0 and only fourcc and kind are known. 0: the info
	 * is complete; -EAGAIN: not yet; other -errno: the file cannot be
	 * played, with a one-line reason in *ret_error (g_free).
	 */
	int (*probe)(struct v4l2cuse_file_reader *r, char **ret_error);
};

struct v4l2cuse_file_reader {
	const struct v4l2cuse_file_reader_ops *ops;
	struct v4l2cuse_file_reader_info info;
	/*
	 * The file next() reads, or NULL for a reader done with it at open
	 * (image.c, gst.c). Owned by the reader from its open on, closed
	 * by v4l2cuse_file_reader_free().
	 */
	FILE *f;
};

/* Closes base.f, then calls the reader's own destroy(). */
static inline void
v4l2cuse_file_reader_free(struct v4l2cuse_file_reader *r)
{
	if (!r)
		return;
	if (r->f)
		fclose(r->f);
	r->ops->destroy(r);
}

/*
 * For the rewind() of a reader that reads its file: back to @offset (its
 * first frame), with the end-of-file and error flags of the last pass cleared.
 */
static inline int
v4l2cuse_file_reader_seek(struct v4l2cuse_file_reader *r, off_t offset)
{
	clearerr(r->f);
	return fseeko(r->f, offset, SEEK_SET) < 0 ? -errno : 0;
}

static inline int
v4l2cuse_file_reader_probe(struct v4l2cuse_file_reader *r, char **ret_error)
{
	return r->ops->probe ? r->ops->probe(r, ret_error) : 0;
}

/*
 * The readers. Each takes ownership of @f (also on failure) and reads it
 * from its current position; @name is only used in messages. On failure
 * they return -errno and a one-line reason in *ret_error (g_free), without
 * the file name.
 */
int v4l2cuse_y4m_reader_open(FILE *f, struct v4l2cuse_file_reader **ret, char **ret_error);
/* @fps_iv: seconds per frame for the stream (0/0: 1/30). */
int v4l2cuse_mjpeg_stream_reader_open(FILE *f, const struct v4l2_fract *fps_iv,
				      struct v4l2cuse_file_reader **ret, char **ret_error);
/* PNG or JPEG by content. */
int v4l2cuse_image_reader_open(FILE *f, struct v4l2cuse_file_reader **ret, char **ret_error);
int v4l2cuse_raw_reader_open(FILE *f, uint32_t fourcc, uint32_t width, uint32_t height,
			     const struct v4l2_fract *fps_iv, struct v4l2cuse_file_reader **ret,
			     char **ret_error);
#if HAVE_GSTREAMER_READER
/* @path for GStreamer's own open and the extension; @f for typefinding. */
int v4l2cuse_gst_reader_open(FILE *f, const char *path, struct v4l2cuse_file_reader **ret,
			     char **ret_error);
#endif

/* What v4l2cuse_file_reader_open() is told beyond the path (file.c's options). */
struct v4l2cuse_file_reader_opts {
	uint32_t raw_fourcc;		/* non-zero: raw frames of this format... */
	uint32_t raw_width, raw_height;	/* ...and size */
	struct v4l2_fract fps_iv;	/* 0/0: the file's rate (or 1/30) */
};

/*
 * Open @path with the reader its content asks for: "YUV4MPEG2" -> y4m,
 * a JPEG -> MJPEG stream (one JPEG -> still image), PNG -> still image,
 * raw when @opts says so, anything else -> GStreamer if built in (the
 * extensions .y4m and .mjpeg/.mjpg/.mjp/.jpg/.jpeg also pick a reader, for
 * files that start with garbage). Errors
 * are one line naming the file: "'clip.avi': unsupported file type ...".
 * Implemented in file.c.
 */
int v4l2cuse_file_reader_open(const char *path, const struct v4l2cuse_file_reader_opts *opts,
			      struct v4l2cuse_file_reader **ret, char **ret_error);
