/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * MJPEG stream reader: a file of concatenated JPEGs (what `ffmpeg -f mjpeg`
 * and many cameras write). Frames are found by walking the JPEG marker
 * segments, not by searching for FFD9, so an EOI byte pair inside a
 * segment or the entropy-coded data does not cut a frame. The size comes
 * from each frame's SOF segment; decoding is convert.c's (libjpeg-turbo).
 *
 * Hostile input: garbage between frames is skipped, a frame that is cut
 * (a new SOI before its EOI, a bad marker, the end of the file) or larger
 * than V4L2CUSE_FILE_READER_MAX_JPEG is reported once as -EBADMSG and skipped, and
 * a frame without SOF or SOS, or with a size of 0 or above 8192, is
 * corrupt. The file is read in growing chunks; nothing is mapped.
 * A frame cut inside its header segments may take the next frame with it
 * (the segment length runs into it); one cut in its coded data does not.
 */

#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>

#include "util/macros.h"
#include "v4l2cuse/format.h"
#include "file-reader.h"
#include "mjpeg-stream.h"

/* Need more data, or stop at the end of the file. */
static int
mjs_short(bool eof, size_t start, size_t len, struct v4l2cuse_mjpeg_stream_frame *ret)
{
	if (!eof) {
		ret->start = start;
		return V4L2CUSE_MJPEG_STREAM_MORE;
	}
	ret->start = start;
	ret->end = len;		/* a frame cut by the end of the file */
	return -EBADMSG;
}

int
v4l2cuse_mjpeg_stream_scan(const uint8_t *p, size_t len, bool eof, size_t max_frame,
			   struct v4l2cuse_mjpeg_stream_frame *ret)
{
	size_t i = 0, pos;
	uint32_t w = 0, h = 0;
	bool have_sos = false;

	*ret = (struct v4l2cuse_mjpeg_stream_frame){ 0 };
	/* The next SOI. */
	while (i + 1 < len && !(p[i] == 0xff && p[i + 1] == 0xd8)) {
		const uint8_t *ff = memchr(p + i + 1, 0xff, len - i - 1);

		i = ff ? (size_t)(ff - p) : len;
	}
	if (i + 1 >= len) {
		/* Nothing (keep a trailing 0xff: it may start an SOI). */
		ret->start = ret->end = len && p[len - 1] == 0xff && i < len ? len - 1 : len;
		return eof ? -ENODATA : V4L2CUSE_MJPEG_STREAM_MORE;
	}
	ret->start = i;
	pos = i + 2;
	for (;;) {
		uint8_t m;
		size_t seg;

		if (pos - ret->start > max_frame) {
			ret->end = pos;
			return -EBADMSG;
		}
		if (pos + 1 >= len)
			return mjs_short(eof, ret->start, len, ret);
		if (p[pos] != 0xff) {
			ret->end = pos;		/* not a marker where one must be */
			return -EBADMSG;
		}
		m = p[pos + 1];
		if (m == 0xff) {		/* fill byte */
			pos++;
			continue;
		}
		if (m == 0xd8 || m == 0x00) {	/* SOI inside a frame: it was cut */
			ret->end = pos;
			return -EBADMSG;
		}
		if (m == 0xd9) {
			ret->end = pos + 2;
			if (!have_sos || !w || !h)
				return -EBADMSG;
			ret->width = w;
			ret->height = h;
			return V4L2CUSE_MJPEG_STREAM_FOUND;
		}
		if ((m >= 0xd0 && m <= 0xd7) || m == 0x01) {
			pos += 2;
			continue;
		}
		if (pos + 3 >= len)
			return mjs_short(eof, ret->start, len, ret);
		seg = (size_t)p[pos + 2] << 8 | p[pos + 3];
		if (seg < 2) {
			ret->end = pos + 2;
			return -EBADMSG;
		}
		if (seg > len - pos - 2)
			return mjs_short(eof, ret->start, len, ret);
		/* SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC): the size. */
		if (m >= 0xc0 && m <= 0xcf && m != 0xc4 && m != 0xc8 && m != 0xcc) {
			if (seg < 8) {
				ret->end = pos + 2 + seg;
				return -EBADMSG;
			}
			h = (uint32_t)p[pos + 5] << 8 | p[pos + 6];
			w = (uint32_t)p[pos + 7] << 8 | p[pos + 8];
			if (!w || !h || w > V4L2CUSE_MAX_WIDTH || h > V4L2CUSE_MAX_HEIGHT) {
				ret->end = pos + 2 + seg;
				return -EBADMSG;
			}
		}
		pos += 2 + seg;
		if (m != 0xda)
			continue;
		/* SOS: entropy-coded data up to a marker that is not RSTn or stuffing. */
		have_sos = true;
		for (;;) {
			const uint8_t *ff;

			if (pos - ret->start > max_frame) {
				ret->end = pos;
				return -EBADMSG;
			}
			ff = pos < len ? memchr(p + pos, 0xff, len - pos) : NULL;
			if (!ff || (size_t)(ff - p) + 1 >= len)
				return mjs_short(eof, ret->start, len, ret);
			pos = (size_t)(ff - p);
			m = p[pos + 1];
			if (m == 0x00 || (m >= 0xd0 && m <= 0xd7))
				pos += 2;
			else if (m == 0xff)
				pos++;
			else
				break;
		}
	}
}

/* --- the reader --------------------------------------------------------- */

#define MJS_CHUNK	(256u << 10)

struct mjs_reader {
	struct v4l2cuse_file_reader base;
	uint8_t *buf;
	size_t cap, len, pos;	/* pos: first byte not consumed */
	bool eof;
};

static struct mjs_reader *
mjs_from(struct v4l2cuse_file_reader *r)
{
	return (struct mjs_reader *)r;
}

/* Move the unconsumed bytes to the front and read more. */
static int
mjs_fill(struct mjs_reader *m)
{
	size_t want, n;

	if (m->pos) {
		memmove(m->buf, m->buf + m->pos, m->len - m->pos);
		m->len -= m->pos;
		m->pos = 0;
	}
	/* Read at least as much as we hold: rescans stay linear in the frame size. */
	want = MAX((size_t)MJS_CHUNK, m->len);
	if (m->cap - m->len < want) {
		m->cap = m->len + want;
		m->buf = g_realloc(m->buf, m->cap);
	}
	n = fread(m->buf + m->len, 1, want, m->base.f);
	m->len += n;
	if (n < want) {
		if (ferror(m->base.f))
			return -EIO;
		m->eof = true;
	}
	return 0;
}

static int
mjs_next(struct v4l2cuse_file_reader *r, struct v4l2cuse_image *ret)
{
	struct mjs_reader *m = mjs_from(r);

	for (;;) {
		struct v4l2cuse_mjpeg_stream_frame fr;
		const uint8_t *p = m->buf ? m->buf + m->pos : NULL;	/* nothing read yet */
		int s = v4l2cuse_mjpeg_stream_scan(p, m->len - m->pos, m->eof,
						   V4L2CUSE_FILE_READER_MAX_JPEG, &fr);

		switch (s) {
		case V4L2CUSE_MJPEG_STREAM_FOUND:
			*ret = (struct v4l2cuse_image){
				.fourcc = V4L2_PIX_FMT_MJPEG, .width = fr.width,
				.height = fr.height, .data = m->buf + m->pos + fr.start,
				.size = fr.end - fr.start,
			};
			m->pos += fr.end;
			return 0;
		case -EBADMSG:
			m->pos += MAX(fr.end, fr.start + 1);
			return -EBADMSG;
		case -ENODATA:
			m->pos = m->len;
			return -ENODATA;
		default:	/* V4L2CUSE_MJPEG_STREAM_MORE */
			m->pos += fr.start;
			if (m->len - m->pos > V4L2CUSE_FILE_READER_MAX_JPEG + 16) {
				m->pos = m->len;	/* unreachable (scan caps frames), but bounded */
				return -EBADMSG;
			}
			if (mjs_fill(m) < 0)
				return -EIO;
			break;
		}
	}
}

static int
mjs_rewind(struct v4l2cuse_file_reader *r)
{
	struct mjs_reader *m = mjs_from(r);

	m->len = m->pos = 0;
	m->eof = false;
	return v4l2cuse_file_reader_seek(r, 0);
}

static void
mjs_destroy(struct v4l2cuse_file_reader *r)
{
	struct mjs_reader *m = mjs_from(r);

	g_free(m->buf);
	g_free(m);
}

static const struct v4l2cuse_file_reader_ops mjs_ops = {
	.name = "mjpeg",
	.next = mjs_next,
	.rewind = mjs_rewind,
	.destroy = mjs_destroy,
};

int
v4l2cuse_mjpeg_stream_reader_open(FILE *f, const struct v4l2_fract *fps_iv,
				  struct v4l2cuse_file_reader **ret, char **ret_error)
{
	struct mjs_reader *m = g_new0(struct mjs_reader, 1);
	struct v4l2cuse_image img;
	unsigned int bad = 0;
	int r;

	m->base.ops = &mjs_ops;
	m->base.f = f;
	/* The first good frame gives the size; a few bad ones before it are fine. */
	while ((r = mjs_next(&m->base, &img)) == -EBADMSG && ++bad < 16)
		;
	if (r < 0) {
		*ret_error = g_strdup(r == -EIO ? g_strerror(EIO) : "no complete JPEG frame found");
		v4l2cuse_file_reader_free(&m->base);
		return r == -EIO ? r : -EINVAL;
	}
	m->base.info = (struct v4l2cuse_file_reader_info){
		.width = img.width, .height = img.height,
		.interval = fps_iv && fps_iv->denominator ? *fps_iv : (struct v4l2_fract){ 1, 30 },
		.fourcc = V4L2_PIX_FMT_MJPEG,
		.can_reopen = true,
	};
	/* One JPEG (nothing but trailing garbage after it): a still image. */
	r = mjs_next(&m->base, &img);
	while (r == -EBADMSG)
		r = mjs_next(&m->base, &img);
	m->base.info.still = r == -ENODATA;
	g_strlcpy(m->base.info.kind, m->base.info.still ? "JPEG" : "MJPEG stream",
		  sizeof(m->base.info.kind));
	r = mjs_rewind(&m->base);
	if (r < 0) {
		*ret_error = g_strdup_printf("cannot seek: %s", g_strerror(-r));
		v4l2cuse_file_reader_free(&m->base);
		return r;
	}
	*ret = &m->base;
	return 0;
}
