/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The "file" source: frames from a file, paced, looped, scaled and
 * converted to the negotiated format.
 *
 * Spec: file:PATH[,option=value...] (PATH cannot contain ','), e.g.
 *   file:clip.y4m
 *   file:cam.mjpeg,fps=15,loop=0
 *   file:frames.yuv,format=NV12,size=1280x720,fps=25
 *   file:movie.mkv                       (GStreamer, when built in)
 *
 * What PATH may be (by content, see v4l2cuse_file_reader_open()): Y4M (4:2:0, 4:2:2,
 * 4:4:4, mono; rate and pixel aspect from the header), concatenated JPEGs
 * (an MJPEG stream; 30 fps unless fps= says otherwise), a single JPEG or a
 * PNG (a still, held), raw frames (format= and size= are then required),
 * and anything GStreamer's uridecodebin decodes (mp4, mkv, webm, ...) when
 * built with -Dgstreamer.
 *
 * Options:
 *   loop=1|0        at the end of the file start again (default), or hold
 *                   the last frame
 *   fps=N[/D]       the file's frame rate (raw and MJPEG files have none;
 *                   for the others it overrides the header: playback speed)
 *   format=FOURCC   raw frames of this format (every uncompressed one of
 *                   format.c): YUYV UYVY YVYU NV12 NV21 YU12 YV12 NV16 NV61
 *                   422P 444P (planar 4:4:4) RGB3 BGR3 BX24 XR24 RGBP GREY
 *   size=WxH        raw frame size
 *   sizes=WxH+...   sizes to offer (default: the file's, rounded down to
 *                   even; with non-square pixels (Y4M A, GStreamer PAR)
 *                   also the size with square ones, e.g. 720x576 A16:15 ->
 *                   768x576; then 320x240 640x480 1280x720 1920x1080)
 *   formats=F+F...  formats to offer, in order (default: the file's own
 *                   format when it is one of ours, then the others of
 *                   format.c: YUYV UYVY YVYU NV12 NV21 YU12 YV12 RGB3 BGR3
 *                   BX24 XR24 RGBP GREY MJPG)
 * Frame intervals offered: the file's rate, then 30, 25 and 15 fps.
 *
 * GStreamer files start without waiting: create() only checks that
 * GStreamer recognises the file (typefinding its first 256 KiB) and starts
 * decoding on GStreamer's threads; nothing on the calling thread (the
 * daemon's loop, e.g. for v4l2cuse-ctl set-source) waits for the first
 * frame. Until that frame has arrived the source knows the file's format
 * (YU12, what GStreamer hands over) but not its size or rate, and offers
 * what it can deliver whatever they are: every format at the sizes of
 * sizes= (else 320x240 640x480 1280x720 1920x1080) and the rates of fps=
 * (if given), 30, 25 and 15 fps; produce() answers -EAGAIN (nothing yet).
 * With the first frame the file's own size (and square-pixel size) and
 * rate are added in front of those lists, as for other files; nothing
 * offered before is taken away, so a format negotiated meanwhile stays
 * valid. What GStreamer finds wrong after create() (no video stream, a
 * missing decoder, no frame within 10 s) is one warning naming the file,
 * and the source has no signal (-ENOLINK).
 *
 * Pacing: produce() runs at the negotiated interval; output frame n shows
 * file frame floor(n * interval / file interval), so the file plays at its
 * own speed at any negotiated rate (frames are repeated or skipped; at
 * equal rates every frame is shown once, in order). Skipped frames are
 * read but not converted. A GStreamer frame that is not decoded in time
 * holds the file's clock (the previous frame shows again) rather than
 * being skipped.
 *
 * Errors: everything wrong with the file at create() (missing, unreadable,
 * unsupported, first frame does not decode; for GStreamer files: not
 * recognised) is a one-line error naming the file. At runtime a corrupt
 * frame is skipped (the previous one is shown again) with a rate-limited
 * warning; a read error, or a whole pass of the
 * file without a good frame, is "no signal": produce() returns -ENOLINK
 * (the device shows its placeholder) and the file is reopened every second
 * (not for GStreamer files).
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <glib.h>

#include "util/macros.h"
#include "v4l2cuse/format.h"
#include "v4l2cuse/source.h"
#include "convert.h"
#include "file-reader.h"
#include "modes.h"
#include "ratelimit.h"

#define FS_MAX_STEPS	64		/* file frames read per produce() at most */
#define FS_RETRY_US	G_USEC_PER_SEC

static const char *const fs_keys[] = {
	"loop", "fps", "format", "size", "sizes", "formats", NULL,
};

struct file_source {
	/*
	 * First: the base and the offer. Its formats are known at create();
	 * sizes and rates may wait for GStreamer (fs_pending()).
	 */
	struct v4l2cuse_modes_source ms;
	char *path;
	struct v4l2cuse_file_reader_opts ropts;
	struct v4l2cuse_file_reader *rd;
	struct v4l2cuse_file_reader_info info;	/* of the first open; enumerations use it */
	bool pending;			/* info not known yet (GStreamer starting) */
	bool own_sizes;			/* sizes= replaced the file's own size */
	struct v4l2_fract file_iv;	/* seconds per file frame */
	bool loop;
	struct v4l2cuse_convert *cv;

	/* Streaming. */
	bool started;
	struct v4l2_pix_format pix;
	struct v4l2_fract out_iv;
	uint64_t n;			/* produce() calls since start */
	uint64_t n_base, frame_base;	/* pacing origin (moved when we fall behind) */
	uint64_t frame_no;		/* file frames consumed (the next one's index) */
	unsigned int pass_good;		/* good frames since the last rewind */
	bool at_eof;			/* loop=0: holding the last frame */
	bool failed;			/* no signal: the file failed */
	int64_t last_try_us;
	uint8_t *cache;			/* the frame shown now, converted */
	uint32_t cache_used;
	bool cache_valid;
	struct v4l2cuse_ratelimit rl_corrupt, rl_fail;
};

static struct file_source *
fs_from(struct v4l2cuse_source *src)
{
	return (struct file_source *)src;
}

/* --- opening by content ------------------------------------------------- */

static bool
fs_has_ext(const char *path, const char *ext)
{
	const char *dot = strrchr(path, '.');

	return dot && !strchr(dot, '/') && g_ascii_strcasecmp(dot + 1, ext) == 0;
}

int
v4l2cuse_file_reader_open(const char *path, const struct v4l2cuse_file_reader_opts *opts,
			  struct v4l2cuse_file_reader **ret, char **ret_error)
{
	static const uint8_t png_sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
	g_autofree char *error = NULL;
	uint8_t magic[16] = { 0 };
	struct stat st;
	size_t n;
	FILE *f;
	int fd, r;

	/* O_NONBLOCK: a FIFO must not hang the open; we only take regular files. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		r = -errno;
		*ret_error = g_strdup_printf("'%s': %s", path, g_strerror(-r));
		return r;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		*ret_error = g_strdup_printf("'%s': not a regular file", path);
		close(fd);
		return -EINVAL;
	}
	if (st.st_size == 0) {
		*ret_error = g_strdup_printf("'%s': empty file", path);
		close(fd);
		return -EINVAL;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	f = fdopen(fd, "rb");
	if (!f) {
		r = -errno;
		close(fd);
		*ret_error = g_strdup_printf("'%s': %s", path, g_strerror(-r));
		return r;
	}
	n = fread(magic, 1, sizeof(magic), f);
	if (ferror(f)) {
		fclose(f);
		*ret_error = g_strdup_printf("'%s': %s", path, g_strerror(EIO));
		return -EIO;
	}
	rewind(f);

	if (opts && opts->raw_fourcc) {
		r = v4l2cuse_raw_reader_open(f, opts->raw_fourcc, opts->raw_width, opts->raw_height,
					     &opts->fps_iv, ret, &error);
	} else if ((n >= 9 && memcmp(magic, "YUV4MPEG2", 9) == 0) || fs_has_ext(path, "y4m")) {
		r = v4l2cuse_y4m_reader_open(f, ret, &error);
	} else if (n >= 8 && memcmp(magic, png_sig, 8) == 0) {
		r = v4l2cuse_image_reader_open(f, ret, &error);
	} else if ((n >= 3 && magic[0] == 0xff && magic[1] == 0xd8 && magic[2] == 0xff) ||
		   fs_has_ext(path, "mjpeg") || fs_has_ext(path, "mjpg") || fs_has_ext(path, "mjp") ||
		   fs_has_ext(path, "jpg") || fs_has_ext(path, "jpeg")) {
		r = v4l2cuse_mjpeg_stream_reader_open(f, opts ? &opts->fps_iv : NULL, ret, &error);
		if (r == 0 && (*ret)->info.still) {
			/* One JPEG: decode it once, like a PNG. */
			v4l2cuse_file_reader_free(*ret);
			*ret = NULL;
			f = fopen(path, "rbe");
			r = f ? v4l2cuse_image_reader_open(f, ret, &error) : -errno;
			if (!f)
				error = g_strdup(g_strerror(-r));
		}
	} else {
#if HAVE_GSTREAMER_READER
		r = v4l2cuse_gst_reader_open(f, path, ret, &error);
#else
		fclose(f);
		error = g_strdup("unsupported file type (not Y4M, MJPEG, JPEG or PNG; raw "
				 "frames need format= and size=; GStreamer support is not built in)");
		r = -EINVAL;
#endif
	}
	if (r < 0) {
		*ret_error = g_strdup_printf("'%s': %s", path, error ? error : g_strerror(-r));
		return r;
	}
	return 0;
}

/* --- options ------------------------------------------------------------ */

/* Options that matter before the file is opened. */
static int
fs_parse_open_opts(struct file_source *fs, const struct v4l2cuse_opts *o, char **ret_error)
{
	char *msg = NULL;
	const char *v;
	int r;

	if (!v4l2cuse_opts_arg(o) || !*v4l2cuse_opts_arg(o)) {
		*ret_error = g_strdup("file: no file given (file:PATH[,option=value...])");
		return -EINVAL;
	}
	fs->path = g_strdup(v4l2cuse_opts_arg(o));
	r = v4l2cuse_opts_get_bool(o, "loop", true, &fs->loop, ret_error);
	if (r < 0)
		return r;
	if ((v = v4l2cuse_opts_get_str(o, "fps", NULL)) &&
	    v4l2cuse_parse_rate(v, &fs->ropts.fps_iv, &msg) < 0)
		return v4l2cuse_modes_option_error(o, "fps", msg, ret_error);
	if (v4l2cuse_opts_has(o, "format") != v4l2cuse_opts_has(o, "size")) {
		*ret_error = v4l2cuse_opts_error(o, "raw frames need both format= and size=");
		return -EINVAL;
	}
	if ((v = v4l2cuse_opts_get_str(o, "format", NULL)) &&
	    v4l2cuse_parse_fourcc_of(v, V4L2CUSE_FORMATS_RAW, &fs->ropts.raw_fourcc, &msg) < 0)
		return v4l2cuse_modes_option_error(o, "format", msg, ret_error);
	if ((v = v4l2cuse_opts_get_str(o, "size", NULL)) &&
	    v4l2cuse_parse_size(v, &fs->ropts.raw_width, &fs->ropts.raw_height, &msg) < 0)
		return v4l2cuse_modes_option_error(o, "size", msg, ret_error);
	return 0;
}

/*
 * Offered formats, sizes and rates that do not depend on the file's first
 * frame: the options', else every format (the file's own first) at the
 * common sizes and rates. fs_info_known() adds the file's own size and
 * rate in front once they are known.
 */
static int
fs_parse_offer_opts(struct file_source *fs, const struct v4l2cuse_opts *o, char **ret_error)
{
	struct v4l2cuse_modes *m = &fs->ms.modes;
	const char *v;
	int r;

	if ((v = v4l2cuse_opts_get_str(o, "formats", NULL))) {
		r = v4l2cuse_modes_parse_formats(m, o, v, ret_error);
		if (r < 0)
			return r;
	} else {
		/* The file's own format first: no conversion by default. */
		if (v4l2cuse_format_info(fs->info.fourcc))
			v4l2cuse_modes_add_format(m, fs->info.fourcc);
		v4l2cuse_modes_add_output_formats(m);
	}

	fs->own_sizes = (v = v4l2cuse_opts_get_str(o, "sizes", NULL)) != NULL;
	if (fs->own_sizes) {
		r = v4l2cuse_modes_parse_sizes(m, o, v, ret_error);
		if (r < 0)
			return r;
	} else {
		v4l2cuse_modes_add_size(m, 320, 240);
		v4l2cuse_modes_add_size(m, 640, 480);
		v4l2cuse_modes_add_size(m, 1280, 720);
		v4l2cuse_modes_add_size(m, 1920, 1080);
	}

	if (fs->ropts.fps_iv.denominator)
		v4l2cuse_modes_add_interval(m, fs->ropts.fps_iv);
	v4l2cuse_modes_add_interval(m, (struct v4l2_fract){ 1, 30 });
	v4l2cuse_modes_add_interval(m, (struct v4l2_fract){ 1, 25 });
	v4l2cuse_modes_add_interval(m, (struct v4l2_fract){ 1, 15 });
	return 0;
}

/*
 * The file's info is known (at create, or with a GStreamer file's first
 * frame): its rate paces the file, and its own size (the square-pixel one
 * too for non-square pixels) and rate go in front of the offer, unless
 * sizes= and fps= replaced them. Nothing offered before goes away.
 */
static void
fs_info_known(struct file_source *fs)
{
	const struct v4l2_fract *a = &fs->info.aspect;
	struct v4l2cuse_modes *m = &fs->ms.modes;

	fs->info = fs->rd->info;
	g_debug("file: '%s': %s, %ux%u, rate %u/%u", fs->path, fs->info.kind, fs->info.width,
		fs->info.height, fs->info.interval.denominator, fs->info.interval.numerator);
	fs->file_iv = fs->ropts.fps_iv.denominator ? fs->ropts.fps_iv :
		      fs->info.interval.denominator && fs->info.interval.numerator ?
		      fs->info.interval : (struct v4l2_fract){ 1, 30 };
	/* A file faster than the project's limit plays at its speed; it is not offered. */
	if (v4l2cuse_interval_valid(fs->file_iv))
		v4l2cuse_modes_prepend_interval(m, fs->file_iv);
	if (fs->own_sizes || fs->info.width < 2 || fs->info.height < 2)
		return;
	/* Non-square pixels (Y4M A, GStreamer PAR): also the square-pixel size. */
	if (a->numerator && a->denominator && a->numerator != a->denominator) {
		uint64_t w = ((uint64_t)fs->info.width * a->numerator + a->denominator / 2) /
			     a->denominator;

		if (w >= 2 && w <= V4L2CUSE_MAX_WIDTH)
			v4l2cuse_modes_prepend_size(m, (uint32_t)w & ~1u, fs->info.height & ~1u);
	}
	v4l2cuse_modes_prepend_size(m, fs->info.width & ~1u, fs->info.height & ~1u);
}

/* --- ops ---------------------------------------------------------------- */

/* "<prefix><*error>" in place of *error. */
static void
fs_prefix_error(char **error, const char *prefix)
{
	char *e = g_strconcat(prefix, *error ? *error : "error", NULL);

	g_free(*error);
	*error = e;
}

static void fs_stop(struct v4l2cuse_source *src);

static void
fs_destroy(struct v4l2cuse_source *src)
{
	struct file_source *fs = fs_from(src);

	if (!fs)
		return;
	fs_stop(src);
	v4l2cuse_file_reader_free(fs->rd);
	v4l2cuse_convert_free(fs->cv);
	g_free(fs->path);
	g_free(fs);
}

/* The first good frame must decode: a broken file is a startup error. */
static int
fs_check_first_frame(struct file_source *fs, char **ret_error)
{
	struct v4l2cuse_image img;
	const uint8_t *rgb;
	uint32_t w, h;
	int r, tries = 0;

	while ((r = fs->rd->ops->next(fs->rd, &img)) == -EBADMSG && ++tries < 500)
		;
	if (r == 0)
		r = v4l2cuse_convert_to_rgb24(fs->cv, &img, &rgb, &w, &h);
	if (r < 0) {
		*ret_error = g_strdup_printf("file: '%s': %s", fs->path,
					     r == -ENODATA ? "no frames" :
					     r == -EBADMSG ? "no frame decodes" : g_strerror(-r));
		return r == -ENODATA ? -EINVAL : r;
	}
	return fs->rd->ops->rewind(fs->rd);
}

/*
 * A reader that is still starting (GStreamer before its first frame):
 * true while its info is unknown. When it arrives, the offer grows; when
 * the file turns out unplayable, that is logged once and the source has no
 * signal from then on.
 */
static bool
fs_pending(struct file_source *fs)
{
	g_autofree char *error = NULL;
	int r;

	if (!fs->pending)
		return false;
	r = v4l2cuse_file_reader_probe(fs->rd, &error);
	if (r == -EAGAIN)
		return true;
	fs->pending = false;
	if (r < 0) {
		g_warning("file: '%s': %s; no signal", fs->path, error);
		fs->failed = true;
		return false;
	}
	fs_info_known(fs);
	return false;
}

static int
fs_create(const char *args, struct v4l2cuse_source **ret_src, char **ret_error)
{
	struct file_source *fs = g_new0(struct file_source, 1);
	struct v4l2cuse_opts *o = NULL;
	char *error = NULL;
	int r;

	fs->ms.base.ops = &v4l2cuse_file_ops;
	fs->cv = v4l2cuse_convert_new();
	v4l2cuse_convert_set_strict_jpeg(fs->cv, true);
	r = v4l2cuse_opts_parse("file", args, fs_keys, &o, &error);
	if (r < 0)
		goto err;
	r = fs_parse_open_opts(fs, o, &error);
	if (r < 0)
		goto err;
	r = v4l2cuse_file_reader_open(fs->path, &fs->ropts, &fs->rd, &error);
	if (r < 0) {
		fs_prefix_error(&error, "file: ");
		goto err;
	}
	fs->info = fs->rd->info;
	fs->pending = fs->info.width == 0;
	if (!fs->pending) {
		r = fs_check_first_frame(fs, &error);
		if (r < 0)
			goto err;
	}
	r = fs_parse_offer_opts(fs, o, &error);
	if (r < 0)
		goto err;
	if (!fs->pending)
		fs_info_known(fs);
	v4l2cuse_opts_free(o);
	*ret_src = &fs->ms.base;
	return 0;

err:
	*ret_error = error;
	v4l2cuse_opts_free(o);
	fs_destroy(&fs->ms.base);
	return r;
}

static int
fs_enum_framesize(struct v4l2cuse_source *src, uint32_t fourcc, unsigned int index,
		  uint32_t *ret_width, uint32_t *ret_height)
{
	fs_pending(fs_from(src));
	return v4l2cuse_modes_source_enum_framesize(src, fourcc, index, ret_width, ret_height);
}

static int
fs_enum_frameinterval(struct v4l2cuse_source *src, uint32_t fourcc, uint32_t width,
		      uint32_t height, unsigned int index, struct v4l2_fract *ret)
{
	fs_pending(fs_from(src));
	return v4l2cuse_modes_source_enum_frameinterval(src, fourcc, width, height, index, ret);
}

static void
fs_stop(struct v4l2cuse_source *src)
{
	struct file_source *fs = fs_from(src);

	g_clear_pointer(&fs->cache, g_free);
	fs->cache_valid = false;
	fs->started = false;
}

static void
fs_restart_pacing(struct file_source *fs)
{
	fs->n_base = fs->n;
	fs->frame_base = 0;
	fs->frame_no = 0;
	fs->pass_good = 0;
	fs->at_eof = false;
}

static int
fs_start(struct v4l2cuse_source *src, const struct v4l2_pix_format *pix,
	 const struct v4l2_fract *interval)
{
	struct file_source *fs = fs_from(src);
	int r;

	if (fs->started)
		return -EBUSY;
	if (!v4l2cuse_modes_has(&fs->ms.modes, pix->pixelformat, pix->width, pix->height))
		return -EINVAL;
	r = v4l2cuse_modes_stream(pix, interval, fs->ms.modes.intervals[0], &fs->pix, &fs->out_iv);
	if (r < 0)
		return r;
	fs->n = 0;
	fs_restart_pacing(fs);
	if (fs->rd && !fs->failed && !fs_pending(fs))
		fs->rd->ops->rewind(fs->rd);
	fs->cache = g_malloc(fs->pix.sizeimage);
	fs->cache_valid = false;
	fs->last_try_us = 0;
	fs->started = true;
	return 0;
}

static void
fs_fail(struct file_source *fs, int r, const char *what)
{
	unsigned int suppressed = 0;

	if (v4l2cuse_ratelimit_pass(&fs->rl_fail, &suppressed))
		g_warning("file: '%s': %s%s%s; no signal%s", fs->path, what,
			  r ? ": " : "", r ? g_strerror(-r) : "",
			  fs->info.can_reopen ? " and retrying every second" : "");
	fs->failed = true;
	fs->cache_valid = false;
	fs->last_try_us = g_get_monotonic_time();
	if (fs->info.can_reopen)
		g_clear_pointer(&fs->rd, v4l2cuse_file_reader_free);
}

static void
fs_try_reopen(struct file_source *fs)
{
	g_autofree char *error = NULL;
	struct v4l2cuse_file_reader *rd = NULL;
	int64_t now = g_get_monotonic_time();

	if (!fs->info.can_reopen || now - fs->last_try_us < FS_RETRY_US)
		return;
	fs->last_try_us = now;
	if (v4l2cuse_file_reader_open(fs->path, &fs->ropts, &rd, &error) < 0) {
		g_debug("file: reopening failed: %s", error);
		return;
	}
	g_message("file: '%s': readable again", fs->path);
	v4l2cuse_file_reader_free(fs->rd);
	fs->rd = rd;
	fs->failed = false;
	fs_restart_pacing(fs);
}

static void
fs_corrupt(struct file_source *fs, uint64_t index, int r)
{
	unsigned int suppressed = 0;

	if (!v4l2cuse_ratelimit_pass(&fs->rl_corrupt, &suppressed))
		return;
	if (suppressed)
		g_warning("file: '%s': skipped corrupt frame %" G_GUINT64_FORMAT " (%s; %u more "
			  "suppressed)", fs->path, index, g_strerror(-r), suppressed);
	else
		g_warning("file: '%s': skipped corrupt frame %" G_GUINT64_FORMAT " (%s)", fs->path,
			  index, g_strerror(-r));
}

/* The file frame output frame @n shows (see "Pacing" above). */
static uint64_t
fs_wanted(const struct file_source *fs)
{
	unsigned __int128 t = (unsigned __int128)(fs->n - fs->n_base) * fs->out_iv.numerator *
			      fs->file_iv.denominator;

	t /= (unsigned __int128)fs->out_iv.denominator * fs->file_iv.numerator;
	return fs->frame_base + (uint64_t)MIN(t, (unsigned __int128)UINT64_MAX / 2);
}

/* Read up to the wanted frame and convert it into the cache. */
static void
fs_advance(struct file_source *fs)
{
	uint64_t want = fs_wanted(fs);
	unsigned int steps = 0;

	if (fs->info.still)
		want = 0;
	while (!fs->at_eof && (fs->frame_no <= want || !fs->cache_valid)) {
		struct v4l2cuse_image img;
		uint64_t index = fs->frame_no;
		int r;

		if (fs->info.still && fs->cache_valid)
			return;
		if (++steps > FS_MAX_STEPS) {
			/* Far behind (a slow file): forget the lost time. */
			fs->n_base = fs->n;
			fs->frame_base = fs->frame_no;
			return;
		}
		r = fs->rd->ops->next(fs->rd, &img);
		switch (r) {
		case 0:
			fs->frame_no++;
			fs->pass_good++;
			if (index < want && fs->cache_valid)
				break;	/* skipped by the pacing: not converted */
			r = v4l2cuse_convert_frame(fs->cv, &img, &fs->pix, fs->cache,
						   fs->pix.sizeimage, &fs->cache_used);
			if (r == 0)
				fs->cache_valid = true;
			else
				fs_corrupt(fs, index, r);
			break;
		case -EBADMSG:
			fs->frame_no++;
			fs_corrupt(fs, index, r);
			break;
		case -EAGAIN:
			/*
			 * Not decoded yet (GStreamer after a seek, or slower
			 * than real time): show the previous frame again and
			 * let the file's clock wait, instead of skipping.
			 */
			fs->n_base++;
			return;
		case -ENODATA:
			if (!fs->loop && fs->cache_valid) {
				fs->at_eof = true;
				return;
			}
			if (fs->pass_good == 0) {
				fs_fail(fs, 0, "no frame of the file decodes");
				return;
			}
			fs->pass_good = 0;
			r = fs->rd->ops->rewind(fs->rd);
			if (r < 0) {
				fs_fail(fs, r, "cannot rewind");
				return;
			}
			break;
		default:
			fs_fail(fs, r, "read error");
			return;
		}
	}
}

static int
fs_produce(struct v4l2cuse_source *src, struct v4l2cuse_frame *frame)
{
	struct file_source *fs = fs_from(src);

	if (!fs->started)
		return -EINVAL;
	if (!frame->data || frame->length < fs->pix.sizeimage)
		return -EINVAL;
	if (fs_pending(fs))
		return -EAGAIN;		/* GStreamer's first frame is not there yet */
	if (fs->failed)
		fs_try_reopen(fs);
	if (!fs->failed)
		fs_advance(fs);
	fs->n++;
	if (!fs->failed && fs->cache_valid) {
		memcpy(frame->data, fs->cache, fs->cache_used);
		frame->bytesused = fs->cache_used;
		return 0;
	}
	/* Nothing decoded yet (GStreamer after a rewind): nothing to show, no gap. */
	return fs->failed ? -ENOLINK : -EAGAIN;
}

const struct v4l2cuse_source_ops v4l2cuse_file_ops = {
	.abi = V4L2CUSE_SOURCE_ABI,
	.name = "file",
	.flags = V4L2CUSE_SOURCE_INPUT,
	.create = fs_create,
	.destroy = fs_destroy,
	.enum_format = v4l2cuse_modes_source_enum_format,
	.enum_framesize = fs_enum_framesize,
	.enum_frameinterval = fs_enum_frameinterval,
	.start = fs_start,
	.stop = fs_stop,
	.produce = fs_produce,
};
