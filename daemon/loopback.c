/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Loopback (see loopback.h): a writer node's frames reach capture devices.
 *
 * One struct loopback per writer node name holds the newest whole frame
 * written (its format, bytes, a generation and the time it arrived), who
 * writes, and the v4l2loopback-style knobs. Its two kinds of ends are
 * sources: the writer end (the output device's source: every format at any
 * size, the knobs as controls, consume() takes the frames) and the capture
 * ends (a capture device's source: the configured modes; produce() converts
 * the newest frame, or reports no signal).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <glib.h>

#include "v4l2cuse/format.h"
#include "v4l2cuse/source.h"
#include "util/cleanup.h"
#include "util/macros.h"
#include "convert.h"
#include "modes.h"
#include "loopback.h"

/* v4l2loopback's control ids (its V4L2LOOPBACK_CID_BASE is ours too). */
#define LB_CID_KEEP_FORMAT		(V4L2CUSE_CID_PRIVATE_BASE + 0)
#define LB_CID_SUSTAIN_FRAMERATE	(V4L2CUSE_CID_PRIVATE_BASE + 1)
#define LB_CID_TIMEOUT			(V4L2CUSE_CID_PRIVATE_BASE + 2)
#define LB_TIMEOUT_MAX_MS		100000

struct loopback {
	struct v4l2cuse_loopbacks *reg;	/* NULL: unbound */
	char *name;			/* the writer node */
	unsigned int refs;

	bool keep_format, sustain_framerate, compat;
	int64_t timeout_ms;

	/* The newest whole frame. */
	uint8_t *data;
	size_t alloc;
	uint32_t bytesused;
	struct v4l2_pix_format fmt;
	uint64_t gen;			/* frames taken; 0: none yet */
	uint64_t at_ns;			/* CLOCK_MONOTONIC when it came */

	/* The writer. */
	bool connected;
	pid_t pid;
	char comm[16];
	struct v4l2_pix_format writer_fmt;
	bool has_kept;			/* keep_format: later writers keep writer_fmt */
	uint64_t refused, dropped;
	GQueue captures;		/* struct lb_source *, started capture ends */
};

struct v4l2cuse_loopbacks {
	GHashTable *by_name;		/* name -> struct loopback * */
};

enum lb_end {
	LB_WRITER,
	LB_CAPTURE,
};

struct lb_source {
	struct v4l2cuse_source base;
	struct loopback *lb;
	enum lb_end end;

	/* The capture end. */
	struct v4l2cuse_modes modes;
	struct v4l2_pix_format pix;
	bool started;
	struct v4l2cuse_convert *cv;
	uint8_t *cache;			/* the newest frame in pix, for repeats */
	uint32_t cache_used;		/* its bytesused */
	uint64_t cache_gen;		/* the writer frame in it; 0: empty */
	uint64_t shown_gen;		/* the writer frame shown last */
	GList link;			/* in lb->captures while started */
	/* Its wake fd: an epoll set of a frame-written eventfd and its pace. */
	int epfd, evfd, tfd;
	uint64_t interval_ns;
	uint64_t delivered_ns;		/* when the last frame went out */
};

static const struct v4l2cuse_source_ops lb_writer_ops, lb_capture_ops;
static void lb_capture_stop(struct v4l2cuse_source *src);

static const char *const lb_keys[] = {
	"sizes", "formats", "fps", "keep_format", "sustain_framerate", "timeout", "compat", NULL,
};

static const struct v4l2cuse_control lb_controls[] = {
	{ .id = LB_CID_KEEP_FORMAT, .type = V4L2_CTRL_TYPE_BOOLEAN, .name = "keep_format",
	  .minimum = 0, .maximum = 1, .step = 1 },
	{ .id = LB_CID_SUSTAIN_FRAMERATE, .type = V4L2_CTRL_TYPE_BOOLEAN,
	  .name = "sustain_framerate", .minimum = 0, .maximum = 1, .step = 1, .default_value = 1 },
	{ .id = LB_CID_TIMEOUT, .type = V4L2_CTRL_TYPE_INTEGER, .name = "timeout",
	  .minimum = 0, .maximum = LB_TIMEOUT_MAX_MS, .step = 1 },
};

static struct lb_source *
lb_of(struct v4l2cuse_source *src)
{
	return (struct lb_source *)src;
}

static bool
lb_is(struct v4l2cuse_source *src)
{
	return src && (src->ops == &lb_writer_ops || src->ops == &lb_capture_ops);
}

static uint64_t
lb_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---------------------------------------------------------------------- */
/* The registry */

struct v4l2cuse_loopbacks *
v4l2cuse_loopbacks_new(void)
{
	struct v4l2cuse_loopbacks *reg = g_new0(struct v4l2cuse_loopbacks, 1);

	reg->by_name = g_hash_table_new(g_str_hash, g_str_equal);
	return reg;
}

void
v4l2cuse_loopbacks_free(struct v4l2cuse_loopbacks *reg)
{
	if (!reg)
		return;
	if (g_hash_table_size(reg->by_name))
		g_warning("bug: %u loopbacks still in use", g_hash_table_size(reg->by_name));
	g_hash_table_destroy(reg->by_name);
	g_free(reg);
}

static struct loopback *
lb_get(struct v4l2cuse_loopbacks *reg, const char *name)
{
	struct loopback *lb = reg && name ? g_hash_table_lookup(reg->by_name, name) : NULL;

	if (lb) {
		lb->refs++;
		return lb;
	}
	lb = g_new0(struct loopback, 1);
	lb->refs = 1;
	lb->name = g_strdup(name ? name : "");
	lb->sustain_framerate = true;
	if (reg && name) {
		lb->reg = reg;
		g_hash_table_insert(reg->by_name, lb->name, lb);
	}
	return lb;
}

static void
lb_put(struct loopback *lb)
{
	if (--lb->refs)
		return;
	if (lb->reg)
		g_hash_table_remove(lb->reg->by_name, lb->name);
	g_free(lb->data);
	g_free(lb->name);
	g_free(lb);
}

/* ---------------------------------------------------------------------- */
/* Specs */

bool
v4l2cuse_loopback_is_spec(const char *spec)
{
	size_t n = spec ? strcspn(spec, ":,") : 0;

	return (n == 8 && strncmp(spec, "loopback", 8) == 0) ||
	       (n == 15 && strncmp(spec, "loopback-writer", 15) == 0);
}

static bool
lb_valid_node(const char *s)
{
	if (strncmp(s, "video", 5) != 0 || !s[5] || strlen(s) > 10)
		return false;
	for (const char *p = s + 5; *p; p++) {
		if (!g_ascii_isdigit(*p))
			return false;
	}
	return true;
}

/* Options of a capture end's spec; @o freed by the caller. */
static int
lb_parse_opts(const char *spec, struct v4l2cuse_opts **ret_o, char **ret_writer,
	      char **ret_error)
{
	const char *args = spec + strcspn(spec, ":,");
	const char *arg;
	int r;

	if (*args == ':')
		args++;
	r = v4l2cuse_opts_parse("loopback", args, lb_keys, ret_o, ret_error);
	if (r < 0)
		return r;
	arg = v4l2cuse_opts_arg(*ret_o);
	if (arg && *arg && !lb_valid_node(arg)) {
		if (ret_error)
			*ret_error = g_strdup_printf("loopback: '%s' is not a node name (videoN)",
						     arg);
		return -EINVAL;
	}
	if (ret_writer)
		*ret_writer = arg && *arg ? g_strdup(arg) : NULL;
	return 0;
}

int
v4l2cuse_loopback_parse(const char *spec, char **ret_writer, char **ret_error)
{
	_cleanup_(v4l2cuse_opts_freep) struct v4l2cuse_opts *o = NULL;
	int r = lb_parse_opts(spec, &o, ret_writer, ret_error);

	return r < 0 ? r : 0;
}

char *
v4l2cuse_loopback_spec_with_writer(const char *spec, const char *writer)
{
	const char *args = spec + strcspn(spec, ":,");
	const char *rest;

	if (*args == ':')
		args++;
	rest = args + strcspn(args, ",");
	return g_strdup_printf("loopback:%s%s", writer, rest);
}

/* ---------------------------------------------------------------------- */
/* Both ends */

static void
lb_destroy(struct v4l2cuse_source *src)
{
	struct lb_source *s = lb_of(src);

	if (!s)
		return;
	if (s->end == LB_WRITER && s->lb->connected)
		v4l2cuse_loopback_set_writer(src, 0);
	if (s->end == LB_CAPTURE)
		lb_capture_stop(src);
	if (s->epfd >= 0)
		close(s->epfd);
	if (s->evfd >= 0)
		close(s->evfd);
	if (s->tfd >= 0)
		close(s->tfd);
	lb_put(s->lb);
	v4l2cuse_convert_free(s->cv);
	g_free(s->cache);
	g_free(s);
}

static int
lb_create(const char *args, struct v4l2cuse_source **ret_src, char **ret_error)
{
	/* Only made by v4l2cuse_loopback_create(), which needs the registry. */
	if (ret_error)
		*ret_error = g_strdup("loopback: made by the daemon only");
	return -EINVAL;
}

static const struct v4l2cuse_control *
lb_control(struct v4l2cuse_source *src, unsigned int index)
{
	/* The knobs are the writer node's (v4l2loopback has them there too). */
	if (lb_of(src)->end != LB_WRITER || index >= G_N_ELEMENTS(lb_controls))
		return NULL;
	return &lb_controls[index];
}

static int
lb_get_control(struct v4l2cuse_source *src, uint32_t id, int64_t *ret)
{
	struct loopback *lb = lb_of(src)->lb;

	switch (id) {
	case LB_CID_KEEP_FORMAT:
		*ret = lb->keep_format;
		return 0;
	case LB_CID_SUSTAIN_FRAMERATE:
		*ret = lb->sustain_framerate;
		return 0;
	case LB_CID_TIMEOUT:
		*ret = lb->timeout_ms;
		return 0;
	}
	return -EINVAL;
}

static int
lb_set_control(struct v4l2cuse_source *src, uint32_t id, int64_t value)
{
	struct loopback *lb = lb_of(src)->lb;

	switch (id) {
	case LB_CID_KEEP_FORMAT:
		lb->keep_format = value != 0;
		if (!lb->keep_format)
			lb->has_kept = false;
		else if (lb->gen)
			lb->has_kept = true;	/* the format written last stays */
		return 0;
	case LB_CID_SUSTAIN_FRAMERATE:
		lb->sustain_framerate = value != 0;
		return 0;
	case LB_CID_TIMEOUT:
		lb->timeout_ms = value;
		return 0;
	}
	return -EINVAL;
}

int
v4l2cuse_loopback_get_stats(struct v4l2cuse_source *src, struct v4l2cuse_loopback_stats *ret)
{
	struct loopback *lb;

	if (!lb_is(src))
		return -EINVAL;
	lb = lb_of(src)->lb;
	*ret = (struct v4l2cuse_loopback_stats){
		.writer_end = lb_of(src)->end == LB_WRITER,
		.connected = lb->connected,
		.pid = lb->pid,
		.fmt = lb->writer_fmt,
		.written = lb->gen,
		.refused = lb->refused,
		.dropped = lb->dropped,
		.compat = lb->compat,
	};
	memcpy(ret->comm, lb->comm, sizeof(ret->comm));
	return 0;
}

/* ---------------------------------------------------------------------- */
/* The writer end */

void
v4l2cuse_loopback_set_writer(struct v4l2cuse_source *src, pid_t pid)
{
	struct loopback *lb;
	g_autofree char *path = NULL, *comm = NULL;

	if (!lb_is(src))
		return;
	lb = lb_of(src)->lb;
	lb->connected = pid != 0;
	if (!pid) {
		g_message("loopback %s: the writer (pid %d, %s) left", lb->name, (int)lb->pid,
			  lb->comm);
		return;
	}
	lb->pid = pid;
	path = g_strdup_printf("/proc/%d/comm", (int)pid);
	if (g_file_get_contents(path, &comm, NULL, NULL))
		g_strchomp(comm);
	g_strlcpy(lb->comm, comm ? comm : "?", sizeof(lb->comm));
	g_message("loopback %s: writer pid %d (%s), %ux%u %.4s", lb->name, (int)pid, lb->comm,
		  lb->writer_fmt.width, lb->writer_fmt.height,
		  (const char *)&lb->writer_fmt.pixelformat);
}

void
v4l2cuse_loopback_refused(struct v4l2cuse_source *src)
{
	if (lb_is(src))
		lb_of(src)->lb->refused++;
}

/* A format writers may write: one the converter reads and format.c knows. */
static bool
lb_known_format(uint32_t fourcc)
{
	return v4l2cuse_format_info(fourcc) != NULL;
}

static int
lb_writer_enum_format(struct v4l2cuse_source *src, unsigned int index, uint32_t *ret_fourcc)
{
	struct loopback *lb = lb_of(src)->lb;

	if (lb->keep_format && lb->has_kept) {
		if (index)
			return -EINVAL;
		*ret_fourcc = lb->writer_fmt.pixelformat;
		return 0;
	}
	if (!v4l2cuse_format_by_index(index))
		return -EINVAL;
	*ret_fourcc = v4l2cuse_format_by_index(index)->fourcc;
	return 0;
}

static int
lb_writer_enum_framesize(struct v4l2cuse_source *src, uint32_t fourcc, unsigned int index,
			 uint32_t *ret_width, uint32_t *ret_height)
{
	return -EINVAL;		/* a range: size_range() */
}

static int
lb_writer_enum_frameinterval(struct v4l2cuse_source *src, uint32_t fourcc, uint32_t width,
			     uint32_t height, unsigned int index, struct v4l2_fract *ret)
{
	return -EINVAL;		/* a range: size_range() */
}

static int
lb_writer_size_range(struct v4l2cuse_source *src, uint32_t fourcc,
		     struct v4l2_frmsize_stepwise *ret, struct v4l2_fract *ret_fastest,
		     struct v4l2_fract *ret_slowest)
{
	struct loopback *lb = lb_of(src)->lb;

	if (lb->keep_format && lb->has_kept) {
		if (fourcc != lb->writer_fmt.pixelformat)
			return -EINVAL;
		*ret = (struct v4l2_frmsize_stepwise){
			lb->writer_fmt.width, lb->writer_fmt.width, 1,
			lb->writer_fmt.height, lb->writer_fmt.height, 1,
		};
	} else {
		if (!lb_known_format(fourcc))
			return -EINVAL;
		/* Even sizes: every subsampled format takes them. */
		*ret = (struct v4l2_frmsize_stepwise){
			2, V4L2CUSE_MAX_WIDTH, 2, 2, V4L2CUSE_MAX_HEIGHT, 2,
		};
	}
	*ret_fastest = (struct v4l2_fract){ 1, V4L2CUSE_MAX_FPS };
	*ret_slowest = (struct v4l2_fract){ 1, 1 };
	return 0;
}

static int
lb_writer_negotiate(struct v4l2cuse_source *src, struct v4l2_pix_format *pix)
{
	struct loopback *lb = lb_of(src)->lb;
	struct v4l2_pix_format f = { 0 };

	if (lb->keep_format && lb->has_kept) {
		f.pixelformat = lb->writer_fmt.pixelformat;
		f.width = lb->writer_fmt.width;
		f.height = lb->writer_fmt.height;
	} else {
		f.pixelformat = lb_known_format(pix->pixelformat) ?
				pix->pixelformat : v4l2cuse_format_by_index(0)->fourcc;
		f.width = CLAMP(pix->width, 2u, (uint32_t)V4L2CUSE_MAX_WIDTH) & ~1u;
		f.height = CLAMP(pix->height, 2u, (uint32_t)V4L2CUSE_MAX_HEIGHT) & ~1u;
	}
	if (v4l2cuse_format_fill(&f) < 0)
		return -EINVAL;
	/*
	 * The writer's colorimetry stands, as an output driver takes it
	 * (GStreamer's v4l2sink fails when it is changed); 0 or out of range
	 * means ours.
	 */
	if (pix->colorspace && pix->colorspace <= V4L2_COLORSPACE_DCI_P3) {
		f.colorspace = pix->colorspace;
		f.ycbcr_enc = pix->ycbcr_enc <= V4L2_YCBCR_ENC_SMPTE240M ? pix->ycbcr_enc : 0;
		f.quantization = pix->quantization <= V4L2_QUANTIZATION_LIM_RANGE ?
				 pix->quantization : 0;
		f.xfer_func = pix->xfer_func <= V4L2_XFER_FUNC_SMPTE2084 ? pix->xfer_func : 0;
	}
	*pix = f;
	return 0;
}

static int
lb_writer_start(struct v4l2cuse_source *src, const struct v4l2_pix_format *pix,
		const struct v4l2_fract *interval)
{
	struct loopback *lb = lb_of(src)->lb;

	lb->writer_fmt = *pix;
	if (lb->keep_format)
		lb->has_kept = true;
	return 0;
}

static void
lb_writer_stop(struct v4l2cuse_source *src)
{
}

static int
lb_writer_produce(struct v4l2cuse_source *src, struct v4l2cuse_frame *frame)
{
	return -EINVAL;		/* an output device's endpoint produces nothing */
}

static int
lb_writer_consume(struct v4l2cuse_source *src, const struct v4l2cuse_frame *frame)
{
	struct loopback *lb = lb_of(src)->lb;
	const struct v4l2_pix_format *f = frame->fmt;

	if (!frame->bytesused || frame->bytesused > f->sizeimage)
		return -EINVAL;
	if (lb->alloc < f->sizeimage) {
		g_free(lb->data);
		lb->data = g_malloc(f->sizeimage);
		lb->alloc = f->sizeimage;
	}
	memcpy(lb->data, frame->data, frame->bytesused);
	lb->bytesused = frame->bytesused;
	lb->fmt = *f;
	lb->writer_fmt = *f;
	lb->gen++;
	lb->at_ns = lb_now_ns();
	/* Readers take it at once (at their own pace at most). */
	for (GList *l = lb->captures.head; l; l = l->next) {
		struct lb_source *c = l->data;
		uint64_t one = 1;

		if (write(c->evfd, &one, sizeof(one)) < 0 && errno != EAGAIN)
			g_debug("loopback %s: eventfd: %s", lb->name, g_strerror(errno));
	}
	return 0;
}

static const struct v4l2cuse_source_ops lb_writer_ops = {
	.abi = V4L2CUSE_SOURCE_ABI,
	.name = "loopback-writer",
	.create = lb_create,
	.destroy = lb_destroy,
	.enum_format = lb_writer_enum_format,
	.enum_framesize = lb_writer_enum_framesize,
	.enum_frameinterval = lb_writer_enum_frameinterval,
	.negotiate = lb_writer_negotiate,
	.start = lb_writer_start,
	.stop = lb_writer_stop,
	.produce = lb_writer_produce,
	.size_range = lb_writer_size_range,
	.consume = lb_writer_consume,
	.control = lb_control,
	.get_control = lb_get_control,
	.set_control = lb_set_control,
};

/* ---------------------------------------------------------------------- */
/* The capture end */

static int
lb_capture_enum_format(struct v4l2cuse_source *src, unsigned int index, uint32_t *ret_fourcc)
{
	return v4l2cuse_modes_enum_format(&lb_of(src)->modes, index, ret_fourcc);
}

static int
lb_capture_enum_framesize(struct v4l2cuse_source *src, uint32_t fourcc, unsigned int index,
			  uint32_t *ret_width, uint32_t *ret_height)
{
	return v4l2cuse_modes_enum_framesize(&lb_of(src)->modes, fourcc, index, ret_width,
					     ret_height);
}

static int
lb_capture_enum_frameinterval(struct v4l2cuse_source *src, uint32_t fourcc, uint32_t width,
			      uint32_t height, unsigned int index, struct v4l2_fract *ret)
{
	return v4l2cuse_modes_enum_frameinterval(&lb_of(src)->modes, fourcc, width, height, index,
						 ret);
}

/* The pace: a tick every frame interval, from @from_ns on. */
static void
lb_capture_pace(struct lb_source *s, uint64_t from_ns)
{
	uint64_t first = from_ns + s->interval_ns;
	struct itimerspec its = {
		.it_interval = { .tv_sec = (time_t)(s->interval_ns / 1000000000u),
				 .tv_nsec = (long)(s->interval_ns % 1000000000u) },
		.it_value = { .tv_sec = (time_t)(first / 1000000000u),
			      .tv_nsec = (long)(first % 1000000000u) },
	};

	timerfd_settime(s->tfd, TFD_TIMER_ABSTIME, &its, NULL);
}

static int
lb_capture_start(struct v4l2cuse_source *src, const struct v4l2_pix_format *pix,
		 const struct v4l2_fract *interval)
{
	struct lb_source *s = lb_of(src);
	struct v4l2_fract iv = interval && interval->numerator && interval->denominator
				       ? *interval : (struct v4l2_fract){ 1, 30 };

	if (s->started)
		return -EBUSY;
	s->pix = *pix;
	s->started = true;
	g_free(s->cache);
	s->cache = g_malloc(pix->sizeimage);
	s->cache_gen = 0;
	s->shown_gen = s->lb->gen;
	s->interval_ns = (uint64_t)iv.numerator * 1000000000u / iv.denominator;
	s->delivered_ns = 0;
	lb_capture_pace(s, lb_now_ns());
	g_queue_push_tail_link(&s->lb->captures, &s->link);
	return 0;
}

static void
lb_capture_stop(struct v4l2cuse_source *src)
{
	struct lb_source *s = lb_of(src);
	struct itimerspec off = { 0 };
	uint64_t n;

	if (s->started)
		g_queue_unlink(&s->lb->captures, &s->link);
	s->started = false;
	g_clear_pointer(&s->cache, g_free);
	s->cache_gen = 0;
	if (s->tfd >= 0)
		timerfd_settime(s->tfd, 0, &off, NULL);
	while (s->evfd >= 0 && read(s->evfd, &n, sizeof(n)) > 0)
		;
}

static int
lb_capture_wake_fd(struct v4l2cuse_source *src)
{
	return lb_of(src)->epfd;
}

/*
 * The newest written frame in the device's format, at the device's rate:
 * converted once per written frame, repeated from the cache while the
 * writer is slower (sustain_framerate), skipped over while it is faster.
 * No frame yet, or none for timeout ms: no signal.
 */
/*
 * The newest written frame in the device's format, at the device's pace.
 * A written frame goes out at once unless the last one went out less than
 * half a frame interval ago (then at the next tick); at a tick without a
 * new frame the last one repeats (sustain_framerate), or nothing happens.
 * Frames are converted once each and repeated from the cache; frames
 * written faster than the device's rate are skipped. No frame yet, or none
 * for timeout ms: no signal, at the device's rate.
 */
static int
lb_capture_produce(struct v4l2cuse_source *src, struct v4l2cuse_frame *frame)
{
	struct lb_source *s = lb_of(src);
	struct loopback *lb = s->lb;
	uint64_t n, now = lb_now_ns();
	bool tick = false, fresh;
	int r;

	if (!s->started || !frame->data || frame->length < s->pix.sizeimage)
		return -EINVAL;
	while (read(s->evfd, &n, sizeof(n)) > 0)
		;
	if (read(s->tfd, &n, sizeof(n)) == sizeof(n))
		tick = true;
	fresh = lb->gen && lb->gen != s->shown_gen;
	if (!lb->gen ||
	    (lb->timeout_ms && now - lb->at_ns > (uint64_t)lb->timeout_ms * 1000000ull))
		return tick ? -ENOLINK : -EAGAIN;
	if (fresh && !tick && s->delivered_ns && now - s->delivered_ns < s->interval_ns / 2)
		return -EAGAIN;		/* too soon: at the next tick */
	if (!fresh && (!tick || !lb->sustain_framerate || !s->cache_gen))
		return -EAGAIN;
	if (fresh) {
		struct v4l2cuse_image img = {
			.fourcc = lb->fmt.pixelformat,
			.width = lb->fmt.width,
			.height = lb->fmt.height,
			.bytesperline = lb->fmt.bytesperline,
			.data = lb->data,
			.size = lb->fmt.bytesperline ? lb->fmt.sizeimage : lb->bytesused,
		};

		if (s->shown_gen && lb->gen > s->shown_gen + 1)
			lb->dropped += lb->gen - s->shown_gen - 1;
		s->shown_gen = lb->gen;
		r = v4l2cuse_convert_frame(s->cv, &img, &s->pix, s->cache, s->pix.sizeimage,
					   &s->cache_used);
		if (r == 0) {
			s->cache_gen = lb->gen;
		} else {
			/* Garbage written (a bad JPEG): the last good frame stays. */
			lb->refused++;
			g_debug("loopback %s: a written frame does not convert: %s", lb->name,
				g_strerror(-r));
			if (!s->cache_gen)
				return tick ? -ENOLINK : -EAGAIN;
		}
		if (!tick)
			lb_capture_pace(s, now);	/* the next repeat one interval later */
	}
	s->delivered_ns = now;
	memcpy(frame->data, s->cache, s->cache_used);
	frame->bytesused = s->cache_used;
	return 0;
}

static const struct v4l2cuse_source_ops lb_capture_ops = {
	.abi = V4L2CUSE_SOURCE_ABI,
	.name = "loopback",
	.create = lb_create,
	.destroy = lb_destroy,
	.enum_format = lb_capture_enum_format,
	.enum_framesize = lb_capture_enum_framesize,
	.enum_frameinterval = lb_capture_enum_frameinterval,
	.start = lb_capture_start,
	.stop = lb_capture_stop,
	.produce = lb_capture_produce,
	.wake_fd = lb_capture_wake_fd,
	.control = lb_control,
	.get_control = lb_get_control,
	.set_control = lb_set_control,
};

/* ---------------------------------------------------------------------- */

static int
lb_capture_setup(struct lb_source *s, const char *spec, char **ret_error)
{
	_cleanup_(v4l2cuse_opts_freep) struct v4l2cuse_opts *o = NULL;
	g_autofree char *writer = NULL;
	const char *v;
	bool keep, sustain, compat;
	int64_t timeout;
	int r;

	r = lb_parse_opts(spec, &o, &writer, ret_error);
	if (r < 0)
		return r;
	if ((v = v4l2cuse_opts_get_str(o, "formats", NULL)))
		r = v4l2cuse_modes_parse_formats(&s->modes, o, v, ret_error);
	else
		v4l2cuse_modes_add_output_formats(&s->modes);
	if (r == 0 && (v = v4l2cuse_opts_get_str(o, "sizes", NULL)))
		r = v4l2cuse_modes_parse_sizes(&s->modes, o, v, ret_error);
	else if (r == 0) {
		v4l2cuse_modes_add_size(&s->modes, 640, 480);
		v4l2cuse_modes_add_size(&s->modes, 320, 240);
		v4l2cuse_modes_add_size(&s->modes, 1280, 720);
		v4l2cuse_modes_add_size(&s->modes, 1920, 1080);
	}
	if (r == 0 && (v = v4l2cuse_opts_get_str(o, "fps", NULL)))
		r = v4l2cuse_modes_parse_rates(&s->modes, o, v, ret_error);
	else if (r == 0) {
		v4l2cuse_modes_add_interval(&s->modes, (struct v4l2_fract){ 1, 30 });
		v4l2cuse_modes_add_interval(&s->modes, (struct v4l2_fract){ 1, 25 });
		v4l2cuse_modes_add_interval(&s->modes, (struct v4l2_fract){ 1, 15 });
	}
	if (r < 0 ||
	    (r = v4l2cuse_opts_get_bool(o, "keep_format", false, &keep, ret_error)) < 0 ||
	    (r = v4l2cuse_opts_get_bool(o, "sustain_framerate", true, &sustain, ret_error)) < 0 ||
	    (r = v4l2cuse_opts_get_bool(o, "compat", false, &compat, ret_error)) < 0 ||
	    (r = v4l2cuse_opts_get_int(o, "timeout", 0, 0, LB_TIMEOUT_MAX_MS, &timeout,
				       ret_error)) < 0)
		return r;
	/* The capture end made first sets the knobs; the controls change them later. */
	if (s->lb->refs == 1) {
		s->lb->keep_format = keep;
		s->lb->sustain_framerate = sustain;
		s->lb->timeout_ms = timeout;
		s->lb->compat = compat;
	}
	s->cv = v4l2cuse_convert_new();
	s->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->evfd < 0 || s->tfd < 0 || s->epfd < 0 ||
	    epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->evfd,
		      &(struct epoll_event){ .events = EPOLLIN }) < 0 ||
	    epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->tfd,
		      &(struct epoll_event){ .events = EPOLLIN }) < 0) {
		r = -errno;
		if (ret_error)
			*ret_error = g_strdup_printf("loopback: %s", g_strerror(-r));
		return r;
	}
	return 0;
}

int
v4l2cuse_loopback_create(struct v4l2cuse_loopbacks *reg, const char *spec,
			 struct v4l2cuse_source **ret_src, char **ret_error)
{
	size_t n = strcspn(spec, ":,");
	bool writer_end = n == 15;
	g_autofree char *name = NULL;
	struct lb_source *s;
	int r;

	if (writer_end) {
		name = g_strdup(spec[n] == ':' ? spec + n + 1 : "");
		if (!lb_valid_node(name)) {
			if (ret_error)
				*ret_error = g_strdup_printf("loopback-writer: '%s' is not a node "
							     "name (videoN)", name);
			return -EINVAL;
		}
	} else {
		r = v4l2cuse_loopback_parse(spec, &name, ret_error);
		if (r < 0)
			return r;
	}
	s = g_new0(struct lb_source, 1);
	s->epfd = s->evfd = s->tfd = -1;
	s->link.data = s;
	s->base.ops = writer_end ? &lb_writer_ops : &lb_capture_ops;
	s->end = writer_end ? LB_WRITER : LB_CAPTURE;
	s->lb = lb_get(reg, name);
	if (!writer_end && (r = lb_capture_setup(s, spec, ret_error)) < 0) {
		lb_destroy(&s->base);
		return r;
	}
	*ret_src = &s->base;
	return 0;
}
