/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * YUV4MPEG2 reader.
 *
 * Header: "YUV4MPEG2" then space-separated tags up to '\n' (at most
 * V4L2CUSE_FILE_READER_MAX_LINE bytes): W<width> H<height> (required, 1..8192),
 * F<num>:<den> (frame rate, default 25:1 like FFmpeg; any rate paces the
 * file, the file source offers it up to V4L2CUSE_MAX_FPS), A<num>:<den>
 * (pixel aspect, 0:0 unknown), I<p|t|b|m|?> (interlacing; fields are delivered
 * woven, as progressive frames), C<colour space> (default 420jpeg),
 * X<anything> and unknown tags (ignored). Each frame: "FRAME", optional
 * tags, '\n', then the planes.
 *
 * Colour spaces (8 bit only): 420jpeg 420paldv 420mpeg2 420 -> YU12;
 * 422 -> 422P; 444 -> 4:4:4 planar; 444alpha -> 4:4:4 (alpha dropped);
 * mono -> YU12 with neutral chroma (Y4M luma is limited range, so GREY
 * output maps it like any Y'CbCr). Chroma planes of odd sizes are
 * ceil(size / 2) as in the spec; odd widths/heights that a subsampled
 * output needs even are cropped by one column/row.
 *
 * Corruption: a frame that does not start with "FRAME" is skipped by
 * scanning for the next "FRAME" tag (-EBADMSG once); a truncated last frame
 * ends the file.
 */

#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>

#include "util/macros.h"
#include "v4l2cuse/format.h"
#include "file-reader.h"

enum y4m_cs {
	Y4M_420,
	Y4M_422,
	Y4M_444,
	Y4M_444ALPHA,
	Y4M_MONO,
};

struct y4m_header {
	uint32_t width, height;
	uint32_t fps_num, fps_den;
	uint32_t par_num, par_den;
	enum y4m_cs cs;
	char interlace;
};

struct y4m_reader {
	struct v4l2cuse_file_reader base;
	off_t data_off;			/* the first FRAME */
	struct y4m_header h;
	uint32_t out_w, out_h;		/* delivered size (cropped to even if needed) */
	uint32_t out_fourcc;
	size_t frame_size;		/* payload bytes of one frame in the file */
	size_t plane_w[4], plane_h[4];	/* planes in the file */
	unsigned int n_planes;
	bool direct;			/* file layout == delivered layout */
	uint8_t *raw;			/* frame_size bytes as read */
	uint8_t *out;			/* delivered frame when !direct */
	size_t out_size;
	bool resync;			/* last FRAME marker was bad: scan for one */
	char line[V4L2CUSE_FILE_READER_MAX_LINE];
};

static struct y4m_reader *
y4m_from(struct v4l2cuse_file_reader *r)
{
	return (struct y4m_reader *)r;
}

static bool
y4m_parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *ret)
{
	guint64 v;

	if (!g_ascii_string_to_unsigned(s, 10, min, max, &v, NULL))
		return false;
	*ret = (uint32_t)v;
	return true;
}

static bool
y4m_parse_ratio(const char *s, uint32_t *ret_num, uint32_t *ret_den)
{
	const char *colon = strchr(s, ':');
	g_autofree char *num = NULL;

	if (!colon)
		return false;
	num = g_strndup(s, (gsize)(colon - s));
	return y4m_parse_u32(num, 0, 1000000000, ret_num) &&
	       y4m_parse_u32(colon + 1, 0, 1000000000, ret_den);
}

/* Parse the header line (without its '\n'). */
static int
y4m_parse_header(const char *line, struct y4m_header *h, char **ret_error)
{
	static const struct {
		const char *name;
		enum y4m_cs cs;
	} spaces[] = {
		{ "420jpeg", Y4M_420 }, { "420paldv", Y4M_420 }, { "420mpeg2", Y4M_420 },
		{ "420", Y4M_420 }, { "422", Y4M_422 }, { "444", Y4M_444 },
		{ "444alpha", Y4M_444ALPHA }, { "mono", Y4M_MONO },
	};
	g_auto(GStrv) tags = NULL;
	bool have_w = false, have_h = false;

	if (strncmp(line, "YUV4MPEG2", 9) != 0 || (line[9] != ' ' && line[9] != '\0')) {
		*ret_error = g_strdup("not a YUV4MPEG2 file");
		return -EINVAL;
	}
	*h = (struct y4m_header){ .fps_num = 25, .fps_den = 1, .cs = Y4M_420, .interlace = 'p' };
	tags = g_strsplit(line + 9, " ", -1);
	for (guint i = 0; tags[i]; i++) {
		const char *t = tags[i];
		bool ok = true;

		switch (t[0]) {
		case '\0':
			break;
		case 'W':
			ok = have_w = y4m_parse_u32(t + 1, 1, V4L2CUSE_MAX_WIDTH, &h->width);
			break;
		case 'H':
			ok = have_h = y4m_parse_u32(t + 1, 1, V4L2CUSE_MAX_HEIGHT, &h->height);
			break;
		case 'F':
			ok = y4m_parse_ratio(t + 1, &h->fps_num, &h->fps_den) && h->fps_num &&
			     h->fps_den;
			break;
		case 'A':
			ok = y4m_parse_ratio(t + 1, &h->par_num, &h->par_den);
			break;
		case 'I':
			ok = t[1] && strchr("ptbm?", t[1]) && !t[2];
			h->interlace = t[1];
			break;
		case 'C': {
			size_t j;

			for (j = 0; j < G_N_ELEMENTS(spaces); j++) {
				if (strcmp(t + 1, spaces[j].name) == 0)
					break;
			}
			if (j == G_N_ELEMENTS(spaces)) {
				*ret_error = g_strdup_printf("unsupported Y4M colour space '%.32s' "
							     "(supported: 420jpeg 420paldv 420mpeg2 "
							     "420 422 444 444alpha mono, 8 bit)", t);
				return -EINVAL;
			}
			h->cs = spaces[j].cs;
			break;
		}
		default:
			break;		/* X tags and unknown ones: ignored */
		}
		if (!ok) {
			*ret_error = g_strdup_printf("bad Y4M header tag '%.32s'", t);
			return -EINVAL;
		}
	}
	if (!have_w || !have_h) {
		*ret_error = g_strdup("Y4M header without W and H");
		return -EINVAL;
	}
	return 0;
}

/*
 * Read up to '\n' (dropped) into @buf. 0; -ENODATA at EOF before any byte;
 * -EBADMSG for a line too long or cut by EOF; -EIO on a read error.
 */
static int
y4m_read_line(FILE *f, char *buf, size_t cap, size_t *ret_len)
{
	size_t n = 0;
	int c;

	while ((c = getc(f)) != EOF) {
		if (c == '\n') {
			buf[n] = '\0';
			*ret_len = n;
			return 0;
		}
		if (n + 1 >= cap)
			return -EBADMSG;
		buf[n++] = (char)c;
	}
	if (ferror(f))
		return -EIO;
	return n ? -EBADMSG : -ENODATA;
}

/* Skip to just after the next "FRAME" followed by ' ' or '\n'. */
static int
y4m_find_marker(struct y4m_reader *y, bool *ret_eol)
{
	static const char tag[] = "FRAME";
	size_t matched = 0;
	int c;

	while ((c = getc(y->base.f)) != EOF) {
		if (matched == 5) {
			if (c == ' ' || c == '\n') {
				*ret_eol = c == '\n';
				return 0;
			}
			matched = 0;
		}
		if (c == tag[matched])
			matched++;
		else
			matched = c == 'F' ? 1 : 0;
	}
	return ferror(y->base.f) ? -EIO : -ENODATA;
}

static void
y4m_crop_plane(uint8_t *dst, size_t dw, size_t dh, const uint8_t *src, size_t sw)
{
	for (size_t y = 0; y < dh; y++)
		memcpy(dst + y * dw, src + y * sw, dw);
}

static int
y4m_next(struct v4l2cuse_file_reader *r, struct v4l2cuse_image *ret)
{
	struct y4m_reader *y = y4m_from(r);
	size_t len, n;
	int rr;

	if (y->resync) {
		bool eol = false;

		rr = y4m_find_marker(y, &eol);
		if (rr < 0)
			return rr;
		y->resync = false;
		if (!eol && (rr = y4m_read_line(y->base.f, y->line, sizeof(y->line), &len)) < 0) {
			if (rr == -EBADMSG)
				y->resync = true;
			return rr;
		}
	} else {
		rr = y4m_read_line(y->base.f, y->line, sizeof(y->line), &len);
		if (rr == -ENODATA || rr == -EIO)
			return rr;
		if (rr < 0 || strncmp(y->line, "FRAME", 5) != 0 ||
		    (y->line[5] != '\0' && y->line[5] != ' ')) {
			y->resync = true;
			return -EBADMSG;
		}
	}

	n = fread(y->raw, 1, y->frame_size, y->base.f);
	if (n < y->frame_size)
		return ferror(y->base.f) ? -EIO : -ENODATA;	/* a cut last frame ends the file */

	if (!y->direct) {
		uint8_t *o = y->out;
		size_t off = 0;

		/* Planes 0..2 (the alpha plane is dropped), cropped. */
		for (unsigned int p = 0; p < 3 && p < y->n_planes; p++) {
			size_t dw = p ? (y->h.cs == Y4M_444 || y->h.cs == Y4M_444ALPHA ? y->out_w
											 : y->out_w / 2)
				      : y->out_w;
			size_t dh = p && y->h.cs == Y4M_420 ? y->out_h / 2 : y->out_h;

			y4m_crop_plane(o, dw, dh, y->raw + off, y->plane_w[p]);
			o += dw * dh;
			off += y->plane_w[p] * y->plane_h[p];
		}
		/* mono: the chroma planes were set to 128 once at open */
	}
	*ret = (struct v4l2cuse_image){
		.fourcc = y->out_fourcc, .width = y->out_w, .height = y->out_h,
		.data = y->direct ? y->raw : y->out,
		.size = y->direct ? y->frame_size : y->out_size,
	};
	return 0;
}

static int
y4m_rewind(struct v4l2cuse_file_reader *r)
{
	struct y4m_reader *y = y4m_from(r);

	y->resync = false;
	return v4l2cuse_file_reader_seek(r, y->data_off);
}

static void
y4m_destroy(struct v4l2cuse_file_reader *r)
{
	struct y4m_reader *y = y4m_from(r);

	g_free(y->raw);
	g_free(y->out);
	g_free(y);
}

static const struct v4l2cuse_file_reader_ops y4m_ops = {
	.name = "y4m",
	.next = y4m_next,
	.rewind = y4m_rewind,
	.destroy = y4m_destroy,
};

/* Plane geometry in the file and in what we deliver. */
static int
y4m_setup(struct y4m_reader *y, char **ret_error)
{
	struct y4m_header *h = &y->h;
	size_t w = h->width, hh = h->height, cw = (w + 1) / 2, ch = (hh + 1) / 2;
	uint64_t total = 0;
	bool even_w = true, even_h = true;

	switch (h->cs) {
	case Y4M_420:
		y->n_planes = 3;
		y->plane_w[1] = y->plane_w[2] = cw;
		y->plane_h[1] = y->plane_h[2] = ch;
		y->out_fourcc = V4L2_PIX_FMT_YUV420;
		break;
	case Y4M_422:
		y->n_planes = 3;
		y->plane_w[1] = y->plane_w[2] = cw;
		y->plane_h[1] = y->plane_h[2] = hh;
		y->out_fourcc = V4L2_PIX_FMT_YUV422P;
		even_h = false;
		break;
	case Y4M_444:
	case Y4M_444ALPHA:
		y->n_planes = h->cs == Y4M_444 ? 3 : 4;
		for (unsigned int p = 1; p < y->n_planes; p++) {
			y->plane_w[p] = w;
			y->plane_h[p] = hh;
		}
		y->out_fourcc = V4L2CUSE_PIX_FMT_YUV444P;
		break;
	case Y4M_MONO:
		y->n_planes = 1;
		y->out_fourcc = V4L2_PIX_FMT_YUV420;
		break;
	}
	y->plane_w[0] = w;
	y->plane_h[0] = hh;
	for (unsigned int p = 0; p < y->n_planes; p++)
		total += (uint64_t)y->plane_w[p] * y->plane_h[p];
	y->frame_size = (size_t)total;

	y->out_w = even_w ? h->width & ~1u : h->width;
	y->out_h = even_h ? h->height & ~1u : h->height;
	if (y->out_w == 0 || y->out_h == 0) {
		*ret_error = g_strdup_printf("Y4M frames of %ux%u are too small", h->width,
					     h->height);
		return -EINVAL;
	}
	y->out_size = v4l2cuse_convert_input_size(y->out_fourcc, y->out_w, y->out_h, 0);
	y->direct = h->cs != Y4M_MONO && h->cs != Y4M_444ALPHA && y->out_w == w && y->out_h == hh;
	y->raw = g_malloc(y->frame_size);
	if (!y->direct) {
		y->out = g_malloc(y->out_size);
		if (h->cs == Y4M_MONO)
			memset(y->out + (size_t)y->out_w * y->out_h, 128,
			       y->out_size - (size_t)y->out_w * y->out_h);
	}
	return 0;
}

int
v4l2cuse_y4m_reader_open(FILE *f, struct v4l2cuse_file_reader **ret, char **ret_error)
{
	static const char *const cs_names[] = {
		[Y4M_420] = "4:2:0", [Y4M_422] = "4:2:2", [Y4M_444] = "4:4:4",
		[Y4M_444ALPHA] = "4:4:4 alpha", [Y4M_MONO] = "mono",
	};
	struct y4m_reader *y = g_new0(struct y4m_reader, 1);
	size_t len;
	int r;

	y->base.ops = &y4m_ops;
	y->base.f = f;
	r = y4m_read_line(f, y->line, sizeof(y->line), &len);
	if (r < 0) {
		*ret_error = g_strdup(r == -EIO ? g_strerror(EIO) : r == -ENODATA ? "empty file"
				      : "not a YUV4MPEG2 file (no header line)");
		goto err;
	}
	if (memchr(y->line, '\0', len)) {
		*ret_error = g_strdup("not a YUV4MPEG2 file");
		r = -EINVAL;
		goto err;
	}
	r = y4m_parse_header(y->line, &y->h, ret_error);
	if (r < 0)
		goto err;
	y->data_off = ftello(f);
	if (y->data_off < 0) {
		r = -errno;
		*ret_error = g_strdup_printf("cannot seek: %s", g_strerror(-r));
		goto err;
	}
	r = y4m_setup(y, ret_error);
	if (r < 0)
		goto err;

	y->base.info = (struct v4l2cuse_file_reader_info){
		.width = y->out_w, .height = y->out_h,
		.interval = { y->h.fps_den, y->h.fps_num },
		.aspect = { y->h.par_num, y->h.par_den },
		.fourcc = y->out_fourcc,
		.can_reopen = true,
	};
	g_snprintf(y->base.info.kind, sizeof(y->base.info.kind), "Y4M %s", cs_names[y->h.cs]);
	*ret = &y->base;
	return 0;

err:
	v4l2cuse_file_reader_free(&y->base);
	return r;
}
