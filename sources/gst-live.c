/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The live GStreamer source (-Dgstreamer), two spellings of one source:
 *
 *   gst:PIPELINE[,option=value...]   a gst-launch description whose last
 *                                    element's output becomes the frames
 *   uri:URI[,option=value...]        gst:uridecodebin uri=URI (rtsp://,
 *                                    srt://, http(s)://, udp://, file://)
 *
 * e.g. gst:videotestsrc pattern=ball ! video/x-raw,width=320,height=240
 *      gst:rtspsrc location=rtsp://cam/stream ! decodebin
 *      uri:rtsp://cam/stream,latency=100,sizes=1280x720
 *
 * A description holds ',' (caps); options are the trailing ",key=value"
 * items whose key is one of ours, so a description's own fields (width=,
 * format=, ...) stay in it. Options:
 *   sizes=WxH+...  sizes offered (default 320x240 640x480 1280x720 1920x1080)
 *   fps=N[/D]+...  rates offered (default 30 25 15)
 *   formats=F+...  formats offered (default: every output format)
 *   timeout=MS     no frame for that long is a lost stream (default 2000;
 *                  the first frame after a (re)connect gets at least 10 s)
 *   latency=MS     the jitter buffer of network sources: "latency" on every
 *                  source element that has it (rtspsrc, srtsrc), named in
 *                  the description or made by uridecodebin (source-setup)
 *   retry=MS       first reconnect delay (default 500), doubling up to
 *                  16 times that (8 s), back to it once frames flow
 *
 * On demand: create() builds nothing that connects. It parses the
 * description once (a syntax error or a missing element fails create()
 * with GStreamer's message), looks at what its last element puts out, and
 * drops it. The modes are the options' (a live stream's own size is not
 * known before it is connected). start() builds
 *
 *   PIPELINE ! videoconvert ! videoscale add-borders=true ! videorate
 *            ! capsfilter caps=video/x-raw,format=F,width=W,height=H,
 *                          pixel-aspect-ratio=1/1,framerate=R
 *            ! appsink sync=true max-buffers=1 drop=true
 *
 * (F: the negotiated format when GStreamer lays it out as V4L2 does, else
 * I420, which the converter packs), or, when the last element puts out
 * only image/jpeg, PIPELINE ! appsink: its JPEGs pass through unchanged to
 * an MJPEG consumer at their own size, and are decoded (and scaled) by
 * the converter for anything else. stop() tears it down. Changing state
 * (PLAYING, NULL) runs on a worker thread of the source, in order, so that
 * a network source's connect or teardown never blocks the daemon.
 *
 * Frames: the source's wake fd (an epoll set of an eventfd and a timerfd)
 * turns readable when the appsink has a new frame (it keeps the newest one
 * and drops older ones), and produce() converts it then; between frames it
 * answers -EAGAIN. The timerfd ticks at the negotiated interval: it drives
 * the no-signal answers and notices a stream that went silent.
 *
 * Lost and back: before the first frame, after an error on the bus, at
 * end-of-stream and after timeout= without a frame, produce() answers
 * -ENOLINK (the device shows its placeholder, signal "lost"); the pipeline
 * is torn down and built again after the back-off. One warning when the
 * stream is lost (with GStreamer's message), one message when it is back;
 * the failed retries in between are debug lines (rate-limited). User
 * names and passwords in URIs (scheme://user:pass@host) are not logged.
 */

#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <glib.h>
#include <gst/gst.h>
#include <gst/app/gstappsink.h>
#include <gst/video/video.h>

#include "util/macros.h"
#include "v4l2cuse/format.h"
#include "v4l2cuse/source.h"
#include "convert.h"
#include "gst-common.h"
#include "live-spec.h"
#include "modes.h"
#include "ratelimit.h"

#define LIVE_FIRST_FRAME_MS	10000u
#define LIVE_BACKOFF_FACTOR	16u
#define LIVE_SINK_NAME		"v4l2cuse-sink"
#define LIVE_CAPS_NAME		"v4l2cuse-caps"
#define LIVE_TS_MAX_AGE_NS	(5 * G_GUINT64_CONSTANT(1000000000))

/* Pipelines built at start() or a reconnect and not yet torn down (for tests). */
static int live_alive;

unsigned int
v4l2cuse_gst_live_pipelines(void)
{
	return (unsigned int)g_atomic_int_get(&live_alive);
}

struct gst_live {
	struct v4l2cuse_modes_source ms;	/* first: the base and the offer */
	const char *kind;		/* "gst" or "uri" */
	char *desc;			/* the description start() builds on */
	char *shown;			/* the spec's ARG for messages, credentials hidden */
	bool jpeg;			/* the last element puts out image/jpeg only */
	uint32_t timeout_ms, retry_ms;
	int64_t latency_ms;		/* -1: not set */
	GThreadPool *worker;		/* state changes, one at a time, in order */
	struct v4l2cuse_convert *cv;
	int epfd, evfd, timerfd;	/* the wake fd and what it watches */

	/* Streaming (dispatcher thread). */
	bool started;
	struct v4l2_pix_format pix;
	struct v4l2_fract iv;
	GstElement *pipeline;		/* NULL: down, waiting for retry_at_us */
	GstElement *sink;
	GstBus *bus;
	int64_t built_us, last_frame_us, retry_at_us;
	uint32_t backoff_ms;
	bool flowing;			/* frames came since the pipeline was built */
	bool lost;			/* the loss was logged; "back" not yet */
	struct v4l2cuse_gst_frame frame;
	uint8_t *cache;			/* a new frame, converted */
	uint32_t cache_used;
	uint64_t cache_ts_ns;		/* its time on the stream's clock (CLOCK_MONOTONIC), 0: unknown */
	struct v4l2cuse_ratelimit rl_retry, rl_convert;
};

static struct gst_live *
live_from(struct v4l2cuse_source *src)
{
	return (struct gst_live *)src;
}

/* --- the worker: state changes off the dispatcher ------------------------ */

struct live_task {
	GstElement *pipeline;		/* a reference of the task's own */
	bool play;			/* PLAYING, else NULL and the last unref */
};

static void
live_worker(gpointer data, gpointer user_data)
{
	struct live_task *t = data;

	/* A failure to play posts its error on the bus, which produce() reads. */
	gst_element_set_state(t->pipeline, t->play ? GST_STATE_PLAYING : GST_STATE_NULL);
	gst_object_unref(t->pipeline);
	if (!t->play)
		g_atomic_int_add(&live_alive, -1);	/* stopped and released */
	g_free(t);
}

static void
live_push(struct gst_live *l, GstElement *pipeline, bool play)
{
	struct live_task *t = g_new0(struct live_task, 1);

	t->pipeline = play ? gst_object_ref(pipeline) : pipeline;
	t->play = play;
	g_thread_pool_push(l->worker, t, NULL);
}

/* --- the description ---------------------------------------------------- */

/* User and password of URIs in @s (scheme://user:password@host) as "***", for logs. */
static char *
live_redact(const char *s)
{
	static GRegex *re;	/* compiled once; never freed (GLib keeps it too) */
	char *out;

	if (g_once_init_enter(&re))
		g_once_init_leave(&re, g_regex_new("(://)[^/@\\s\"']+@", G_REGEX_OPTIMIZE, 0,
						   NULL));
	out = g_regex_replace(re, s, -1, 0, "\\1***@", 0, NULL);
	return out ? out : g_strdup(s);
}

/* Whether every structure of @caps is image/jpeg (ANY and EMPTY are not). */
static bool
live_caps_jpeg(GstCaps *caps)
{
	guint n = caps && !gst_caps_is_any(caps) ? gst_caps_get_size(caps) : 0;

	for (guint i = 0; i < n; i++) {
		if (!gst_structure_has_name(gst_caps_get_structure(caps, i), "image/jpeg"))
			return false;
	}
	return n > 0;
}

/*
 * Parse @desc as create() checks it: -EINVAL and GStreamer's message for a
 * description that does not parse (syntax, a missing element or property,
 * a link that cannot be). A fakesink ends it, as the appsink will (caps
 * last in a description are caps, not an element name), and what the last
 * element's pad linked to it can carry decides the tail start() builds:
 * only image/jpeg (jpegenc, an image/jpeg capsfilter) makes the JPEG tail;
 * a pad that appears later (decodebin) or anything else is raw video for
 * the videoconvert tail. The result never leaves the NULL state.
 */
static int
live_check(struct gst_live *l, char **ret_error)
{
	g_autofree char *full = g_strdup_printf("%s ! fakesink name=" LIVE_SINK_NAME, l->desc);
	GError *err = NULL;
	GstElement *p = gst_parse_launch_full(full, NULL, GST_PARSE_FLAG_FATAL_ERRORS, &err);
	GstElement *sink;
	GstPad *pad, *peer;

	if (!p) {
		g_autofree char *msg = live_redact(err ? err->message
						       : "cannot parse the pipeline");

		*ret_error = g_strdup_printf("%s: '%s': GStreamer: %s", l->kind, l->shown, msg);
		g_clear_error(&err);
		return -EINVAL;
	}
	g_clear_error(&err);
	gst_object_ref_sink(p);
	sink = GST_IS_BIN(p) ? gst_bin_get_by_name(GST_BIN(p), LIVE_SINK_NAME) : NULL;
	pad = sink ? gst_element_get_static_pad(sink, "sink") : NULL;
	peer = pad ? gst_pad_get_peer(pad) : NULL;
	if (peer) {
		GstCaps *caps = gst_pad_query_caps(peer, NULL);
		g_autofree char *text = gst_caps_to_string(caps);

		l->jpeg = live_caps_jpeg(caps);
		g_debug("%s: the pipeline puts out %s", l->kind, text);
		gst_caps_unref(caps);
		gst_object_unref(peer);
	}
	if (pad)
		gst_object_unref(pad);
	if (sink)
		gst_object_unref(sink);
	gst_object_unref(p);
	return 0;
}

/* --- building and tearing down ------------------------------------------ */

/*
 * The jitter buffer of a network source: "latency" (ms) on a source element
 * that has it (rtspsrc, srtsrc), whether the description names it or
 * uridecodebin makes it (source-setup, on the thread that changes state).
 */
static void
live_set_latency(struct gst_live *l, GstElement *source)
{
	GParamSpec *ps = g_object_class_find_property(G_OBJECT_GET_CLASS(source), "latency");
	GValue v = G_VALUE_INIT, u = G_VALUE_INIT;

	if (!ps || !(ps->flags & G_PARAM_WRITABLE))
		return;
	g_value_init(&u, G_TYPE_INT64);
	g_value_set_int64(&u, l->latency_ms);
	g_value_init(&v, ps->value_type);
	if (g_value_transform(&u, &v)) {
		g_object_set_property(G_OBJECT(source), "latency", &v);
		g_debug("%s: latency=%" G_GINT64_FORMAT " ms on %s", l->kind, l->latency_ms,
			GST_ELEMENT_NAME(source));
	}
	g_value_unset(&v);
	g_value_unset(&u);
}

/*
 * An HTTP source made by uridecodebin: a camera's MJPEG stream
 * (multipart/x-mixed-replace) never ends and its parts carry no
 * timestamps, so souphttpsrc must say it is live and stamp what it
 * receives; else uridecodebin's queue waits for a preroll that never
 * comes. (A `gst:` description sets what it needs itself.)
 */
static void
live_http_live(struct gst_live *l, GstElement *source)
{
	GstElementFactory *f = gst_element_get_factory(source);

	if (!f || strcmp(GST_OBJECT_NAME(f), "souphttpsrc") != 0)
		return;
	g_object_set(source, "is-live", TRUE, "do-timestamp", TRUE, NULL);
	g_debug("%s: is-live and do-timestamp on %s", l->kind, GST_ELEMENT_NAME(source));
}

static void
live_source_setup(GstElement *bin, GstElement *source, gpointer data)
{
	struct gst_live *l = data;	/* outlives its pipelines (destroy() waits) */

	if (l->latency_ms >= 0)
		live_set_latency(l, source);
	live_http_live(l, source);
}

/*
 * A multipartdemux that uridecodebin (decodebin) makes exposes its pad
 * only once it knows no other part type follows: a camera's stream has
 * one, so say so (single-stream) and the JPEGs flow.
 */
static void
live_element_added(GstBin *bin, GstBin *sub, GstElement *e, gpointer data)
{
	GstElementFactory *f = gst_element_get_factory(e);

	if (f && strcmp(GST_OBJECT_NAME(f), "multipartdemux") == 0)
		g_object_set(e, "single-stream", TRUE, NULL);
}

/*
 * What uridecodebin makes, set up as it is made: the jitter buffer of
 * network sources (latency=), HTTP streams as live ones. Source elements
 * the description names get latency= now.
 */
static void
live_connect_setup(struct gst_live *l, GstBin *bin)
{
	GstIterator *it = gst_bin_iterate_recurse(bin);
	GValue v = G_VALUE_INIT;
	bool uridecodebin = false;

	while (gst_iterator_next(it, &v) == GST_ITERATOR_OK) {
		GstElement *e = g_value_get_object(&v);
		GstElementFactory *f = gst_element_get_factory(e);

		if (f && g_str_has_prefix(GST_OBJECT_NAME(f), "uridecodebin")) {
			g_signal_connect(e, "source-setup", G_CALLBACK(live_source_setup), l);
			uridecodebin = true;
		} else if (GST_OBJECT_FLAG_IS_SET(e, GST_ELEMENT_FLAG_SOURCE) && l->latency_ms >= 0) {
			live_set_latency(l, e);
		}
		g_value_reset(&v);
	}
	g_value_unset(&v);
	gst_iterator_free(it);
	if (uridecodebin)
		g_signal_connect(bin, "deep-element-added", G_CALLBACK(live_element_added), l);
}

/* The caps the raw tail asks for: the negotiated size and rate, square pixels. */
static GstCaps *
live_raw_caps(const struct gst_live *l)
{
	GstVideoFormat f = v4l2cuse_gst_format_of(l->pix.pixelformat);

	if (f == GST_VIDEO_FORMAT_UNKNOWN)
		f = GST_VIDEO_FORMAT_I420;
	return gst_caps_new_simple("video/x-raw",
				   "format", G_TYPE_STRING, gst_video_format_to_string(f),
				   "width", G_TYPE_INT, (int)l->pix.width,
				   "height", G_TYPE_INT, (int)l->pix.height,
				   "pixel-aspect-ratio", GST_TYPE_FRACTION, 1, 1,
				   "framerate", GST_TYPE_FRACTION, (int)l->iv.denominator,
				   (int)l->iv.numerator, NULL);
}

static void live_lose(struct gst_live *l, char *reason, int64_t now);

/*
 * On a streaming thread: a frame reached the appsink; wake the daemon. The
 * eventfd outlives every pipeline (destroy() waits for the worker).
 */
static GstFlowReturn
live_new_sample(GstAppSink *sink, gpointer data)
{
	struct gst_live *l = data;
	uint64_t one = 1;

	if (write(l->evfd, &one, sizeof(one)) < 0)
		g_debug("gst: eventfd: %s", g_strerror(errno));
	return GST_FLOW_OK;
}

/* Build the pipeline for the negotiated format and start it (on the worker). */
static void
live_build(struct gst_live *l, int64_t now)
{
	g_autofree char *full = NULL;
	GError *err = NULL;
	GstElement *p, *filter;

	full = g_strdup_printf("%s ! %sappsink name=" LIVE_SINK_NAME, l->desc,
			       l->jpeg ? "" : "videoconvert ! videoscale add-borders=true ! "
					      "videorate ! capsfilter name=" LIVE_CAPS_NAME " ! ");
	p = gst_parse_launch_full(full, NULL, GST_PARSE_FLAG_FATAL_ERRORS, &err);
	if (!p || !GST_IS_PIPELINE(p)) {
		char *reason = g_strdup_printf("GStreamer: %s",
					       err ? err->message : "cannot build the pipeline");

		g_clear_error(&err);
		if (p)
			gst_object_unref(gst_object_ref_sink(p));
		l->built_us = now;
		live_lose(l, reason, now);
		return;
	}
	g_clear_error(&err);
	gst_object_ref_sink(p);
	/*
	 * The system clock (CLOCK_MONOTONIC, GStreamer's default clock type),
	 * not one a source element provides (pipewiresrc, audio sources): a
	 * frame's running time plus the base time is then its time on the
	 * V4L2 clock (live_sample_time()).
	 */
	GstClock *clock = gst_system_clock_obtain();

	gst_pipeline_use_clock(GST_PIPELINE(p), clock);
	gst_object_unref(clock);
	g_atomic_int_inc(&live_alive);
	l->pipeline = p;
	l->sink = gst_bin_get_by_name(GST_BIN(p), LIVE_SINK_NAME);
	l->bus = gst_element_get_bus(p);
	filter = l->jpeg ? NULL : gst_bin_get_by_name(GST_BIN(p), LIVE_CAPS_NAME);
	if (filter) {
		GstCaps *caps = live_raw_caps(l);

		g_object_set(filter, "caps", caps, NULL);
		gst_caps_unref(caps);
		gst_object_unref(filter);
	}
	if (l->jpeg) {
		GstCaps *caps = gst_caps_new_empty_simple("image/jpeg");

		g_object_set(l->sink, "caps", caps, NULL);
		gst_caps_unref(caps);
	}
	/* The newest frame only; played at its time (paces files, no CPU spin). */
	g_object_set(l->sink, "sync", TRUE, "max-buffers", 1, "drop", TRUE,
		     "emit-signals", FALSE, NULL);
	{
		GstAppSinkCallbacks cb = { .new_sample = live_new_sample };

		gst_app_sink_set_callbacks(GST_APP_SINK(l->sink), &cb, l, NULL);
	}
	live_connect_setup(l, GST_BIN(p));
	l->built_us = now;
	l->flowing = false;
	live_push(l, p, true);
	g_debug("%s: '%s': started", l->kind, l->shown);
}

static void
live_teardown(struct gst_live *l)
{
	v4l2cuse_gst_frame_release(&l->frame);
	g_clear_pointer(&l->sink, gst_object_unref);
	g_clear_pointer(&l->bus, gst_object_unref);
	if (l->pipeline) {
		live_push(l, l->pipeline, false);	/* takes our reference */
		l->pipeline = NULL;
	}
	l->flowing = false;
}

/* The stream is lost (@reason, freed): no signal until the retry brings it back. */
static void
live_lose(struct gst_live *l, char *reason, int64_t now)
{
	g_autofree char *shown = live_redact(reason);	/* GStreamer's may quote the URI */
	unsigned int suppressed = 0;

	if (!l->lost) {
		g_warning("%s: '%s': %s; no signal, reconnecting", l->kind, l->shown, shown);
		l->lost = true;
	} else if (v4l2cuse_ratelimit_pass(&l->rl_retry, &suppressed)) {
		g_debug("%s: '%s': still lost: %s (%u more)", l->kind, l->shown, shown,
			suppressed);
	}
	g_free(reason);
	live_teardown(l);
	l->retry_at_us = now + (int64_t)l->backoff_ms * 1000;
	l->backoff_ms = MIN(l->backoff_ms * 2, l->retry_ms * LIVE_BACKOFF_FACTOR);
}

/* --- ops ---------------------------------------------------------------- */

static void live_stop(struct v4l2cuse_source *src);

static void
live_destroy(struct v4l2cuse_source *src)
{
	struct gst_live *l = live_from(src);

	if (!l)
		return;
	live_stop(src);
	if (l->worker)
		g_thread_pool_free(l->worker, FALSE, TRUE);	/* the teardowns finish */
	if (l->epfd >= 0)
		close(l->epfd);
	if (l->evfd >= 0)
		close(l->evfd);
	if (l->timerfd >= 0)
		close(l->timerfd);
	v4l2cuse_gst_frame_clear(&l->frame);
	v4l2cuse_convert_free(l->cv);
	g_free(l->desc);
	g_free(l->shown);
	g_free(l);
}

static int
live_parse_opts(struct gst_live *l, const char *opts, char **ret_error)
{
	struct v4l2cuse_opts *o = NULL;
	int64_t latency = -1;
	int r;

	r = v4l2cuse_opts_parse(l->kind, opts, v4l2cuse_live_keys, &o, ret_error);
	if (r < 0)
		return r;
	r = v4l2cuse_modes_from_options(&l->ms.modes, o, ret_error);
	if (r == 0)
		r = v4l2cuse_opts_get_uint(o, "timeout", 2000, 100, 600000, &l->timeout_ms,
					   ret_error);
	if (r == 0)
		r = v4l2cuse_opts_get_uint(o, "retry", 500, 10, 60000, &l->retry_ms, ret_error);
	if (r == 0 && v4l2cuse_opts_has(o, "latency"))
		r = v4l2cuse_opts_get_int(o, "latency", 0, 0, 60000, &latency, ret_error);
	l->latency_ms = latency;
	v4l2cuse_opts_free(o);
	return r;
}

static int
live_wake_setup(struct gst_live *l, char **ret_error)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int r;

	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	l->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	l->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (l->epfd < 0 || l->evfd < 0 || l->timerfd < 0 ||
	    epoll_ctl(l->epfd, EPOLL_CTL_ADD, l->evfd, &ev) < 0 ||
	    epoll_ctl(l->epfd, EPOLL_CTL_ADD, l->timerfd, &ev) < 0) {
		r = -errno;
		*ret_error = g_strdup_printf("%s: %s", l->kind, g_strerror(-r));
		return r;
	}
	return 0;
}

/* The timerfd at @iv seconds per tick, or stopped (NULL). */
static void
live_timer_arm(struct gst_live *l, const struct v4l2_fract *iv)
{
	uint64_t ns = iv ? (uint64_t)iv->numerator * 1000000000ull / MAX(iv->denominator, 1u) : 0;
	struct timespec t = { .tv_sec = (time_t)(ns / 1000000000ull),
			      .tv_nsec = (long)(ns % 1000000000ull) };
	struct itimerspec its = { .it_interval = t, .it_value = t };

	timerfd_settime(l->timerfd, 0, &its, NULL);
}

/* Reset @fd (an eventfd or timerfd): true if it was readable. */
static bool
live_drain(int fd)
{
	uint64_t n;

	return read(fd, &n, sizeof(n)) == sizeof(n);
}

/* Quote @uri as a gst-launch property value. */
static char *
live_uri_desc(const char *uri)
{
	GString *s = g_string_new("uridecodebin uri=\"");

	for (const char *c = uri; *c; c++) {
		if (*c == '"' || *c == '\\')
			g_string_append_c(s, '\\');
		g_string_append_c(s, *c);
	}
	g_string_append_c(s, '"');
	return g_string_free(s, FALSE);
}

static int
live_create(const struct v4l2cuse_source_ops *ops, const char *args,
	    struct v4l2cuse_source **ret_src, char **ret_error)
{
	struct gst_live *l = g_new0(struct gst_live, 1);
	g_autofree char *arg = NULL, *opts = NULL;
	bool uri = ops == &v4l2cuse_uri_ops;
	int r;

	l->ms.base.ops = ops;
	l->kind = ops->name;
	l->cv = v4l2cuse_convert_new();
	l->epfd = l->evfd = l->timerfd = -1;
	v4l2cuse_live_split(args, &arg, &opts);
	l->shown = live_redact(arg);
	r = live_parse_opts(l, opts, ret_error);
	if (r < 0)
		goto err;
	if (!*arg) {
		*ret_error = g_strdup_printf("%s: no %s given (%s:%s[,option=value...])", l->kind,
					     uri ? "URI" : "pipeline", l->kind,
					     uri ? "URI" : "PIPELINE");
		r = -EINVAL;
		goto err;
	}
	r = v4l2cuse_gst_init(ret_error);
	if (r < 0) {
		char *e = g_strdup_printf("%s: %s", l->kind, *ret_error);

		g_free(*ret_error);
		*ret_error = e;
		goto err;
	}
	if (uri && !gst_uri_is_valid(arg)) {
		*ret_error = g_strdup_printf("uri: '%s' is not a URI (scheme://...)", l->shown);
		r = -EINVAL;
		goto err;
	}
	l->desc = uri ? live_uri_desc(arg) : g_strdup(arg);
	r = live_check(l, ret_error);
	if (r < 0)
		goto err;
	r = live_wake_setup(l, ret_error);
	if (r < 0)
		goto err;
	l->worker = g_thread_pool_new(live_worker, l, 1, FALSE, NULL);
	*ret_src = &l->ms.base;
	return 0;

err:
	live_destroy(&l->ms.base);
	return r;
}

static int
live_gst_create(const char *args, struct v4l2cuse_source **ret_src, char **ret_error)
{
	return live_create(&v4l2cuse_gst_ops, args, ret_src, ret_error);
}

static int
live_uri_create(const char *args, struct v4l2cuse_source **ret_src, char **ret_error)
{
	return live_create(&v4l2cuse_uri_ops, args, ret_src, ret_error);
}

static int
live_start(struct v4l2cuse_source *src, const struct v4l2_pix_format *pix,
	   const struct v4l2_fract *interval)
{
	struct gst_live *l = live_from(src);
	int r;

	if (l->started)
		return -EBUSY;
	if (!v4l2cuse_modes_has(&l->ms.modes, pix->pixelformat, pix->width, pix->height))
		return -EINVAL;
	r = v4l2cuse_modes_stream(pix, interval, l->ms.modes.intervals[0], &l->pix, &l->iv);
	if (r < 0)
		return r;
	l->cache = g_malloc(l->pix.sizeimage);
	l->cache_used = 0;
	l->backoff_ms = l->retry_ms;
	l->lost = false;
	l->started = true;
	live_drain(l->evfd);
	live_timer_arm(l, &l->iv);
	/* Connecting runs on GStreamer's and the worker's threads: no signal until frames come. */
	live_build(l, g_get_monotonic_time());
	return 0;
}

static void
live_stop(struct v4l2cuse_source *src)
{
	struct gst_live *l = live_from(src);

	if (!l->started)
		return;
	live_teardown(l);
	live_timer_arm(l, NULL);
	g_clear_pointer(&l->cache, g_free);
	l->started = false;
}

/* A frame came: convert it into the cache; false if it does not convert. */
/*
 * When @sample's frame was due on the stream's clock: its PTS as running
 * time plus the pipeline's base time, in CLOCK_MONOTONIC nanoseconds (the
 * pipeline runs on the system clock, live_build()). A network stream's PTS
 * comes from the sender's timestamps through the jitter buffer, so frames
 * keep the stream's spacing rather than the daemon's wake-ups. 0 when the
 * buffer has none.
 */
static uint64_t
live_sample_time(struct gst_live *l, GstSample *sample)
{
	GstBuffer *buf = gst_sample_get_buffer(sample);
	const GstSegment *seg = gst_sample_get_segment(sample);
	GstClockTime rt, base;

	if (!buf || !seg || !GST_BUFFER_PTS_IS_VALID(buf) || seg->format != GST_FORMAT_TIME)
		return 0;
	rt = gst_segment_to_running_time(seg, GST_FORMAT_TIME, GST_BUFFER_PTS(buf));
	base = gst_element_get_base_time(l->pipeline);
	if (!GST_CLOCK_TIME_IS_VALID(rt) || !GST_CLOCK_TIME_IS_VALID(base))
		return 0;
	return rt + base;
}

static bool
live_take(struct gst_live *l, GstSample *sample, int64_t now)
{
	struct v4l2cuse_image img;
	unsigned int suppressed = 0;
	uint64_t ts = live_sample_time(l, sample);
	int r = v4l2cuse_gst_frame_take(&l->frame, sample, &img);

	if (r == 0)
		r = v4l2cuse_convert_frame(l->cv, &img, &l->pix, l->cache, l->pix.sizeimage,
					   &l->cache_used);
	v4l2cuse_gst_frame_release(&l->frame);
	if (r < 0) {
		if (v4l2cuse_ratelimit_pass(&l->rl_convert, &suppressed))
			g_debug("%s: dropped a frame that does not convert (%s; %u more)", l->kind,
				g_strerror(-r), suppressed);
		return false;
	}
	if (!l->flowing) {
		if (l->lost)
			g_message("%s: '%s': receiving again", l->kind, l->shown);
		else
			g_debug("%s: '%s': receiving", l->kind, l->shown);
		l->lost = false;
		l->backoff_ms = l->retry_ms;
	}
	l->flowing = true;
	l->last_frame_us = now;
	l->cache_ts_ns = ts;
	return true;
}

/*
 * What the pipeline did since the last call: errors, the end, a frame,
 * silence. True when a new frame is in the cache.
 */
static bool
live_poll(struct gst_live *l, int64_t now)
{
	bool eos = false;
	char *error = v4l2cuse_gst_bus_poll(l->bus, &eos);
	GstSample *sample;
	uint32_t wait_ms;

	if (error || eos) {
		live_lose(l, error ? error : g_strdup("end of stream"), now);
		return false;
	}
	sample = gst_app_sink_try_pull_sample(GST_APP_SINK(l->sink), 0);
	if (sample)
		return live_take(l, sample, now);
	wait_ms = l->flowing ? l->timeout_ms : MAX(l->timeout_ms, LIVE_FIRST_FRAME_MS);
	if (now - (l->flowing ? l->last_frame_us : l->built_us) > (int64_t)wait_ms * 1000)
		live_lose(l, g_strdup_printf("no frame for %u ms", wait_ms), now);
	return false;
}

static int
live_produce(struct v4l2cuse_source *src, struct v4l2cuse_frame *frame)
{
	struct gst_live *l = live_from(src);
	int64_t now = g_get_monotonic_time();
	bool tick, fresh = false;

	if (!l->started || !frame->data || frame->length < l->pix.sizeimage)
		return -EINVAL;
	tick = live_drain(l->timerfd);
	live_drain(l->evfd);
	if (l->pipeline)
		fresh = live_poll(l, now);
	else if (now >= l->retry_at_us)
		live_build(l, now);
	if (fresh) {
		memcpy(frame->data, l->cache, l->cache_used);
		frame->bytesused = l->cache_used;
		/*
		 * The stream's time for the frame, when it is a sane one: not in
		 * the future, not older than LIVE_TS_MAX_AGE_NS (a clock that
		 * jumped, a stream with broken timestamps).
		 */
		if (l->cache_ts_ns && l->cache_ts_ns <= frame->timestamp_ns &&
		    frame->timestamp_ns - l->cache_ts_ns < LIVE_TS_MAX_AGE_NS)
			frame->timestamp_ns = l->cache_ts_ns;
		return 0;
	}
	/* No signal once per tick of the negotiated rate; between frames, nothing. */
	return l->flowing || !tick ? -EAGAIN : -ENOLINK;
}

static int
live_wake_fd(struct v4l2cuse_source *src)
{
	return live_from(src)->epfd;
}

const struct v4l2cuse_source_ops v4l2cuse_gst_ops = {
	.abi = V4L2CUSE_SOURCE_ABI,
	.name = "gst",
	.create = live_gst_create,
	.destroy = live_destroy,
	.enum_format = v4l2cuse_modes_source_enum_format,
	.enum_framesize = v4l2cuse_modes_source_enum_framesize,
	.enum_frameinterval = v4l2cuse_modes_source_enum_frameinterval,
	.start = live_start,
	.stop = live_stop,
	.produce = live_produce,
	.wake_fd = live_wake_fd,
};

const struct v4l2cuse_source_ops v4l2cuse_uri_ops = {
	.abi = V4L2CUSE_SOURCE_ABI,
	.name = "uri",
	.create = live_uri_create,
	.destroy = live_destroy,
	.enum_format = v4l2cuse_modes_source_enum_format,
	.enum_framesize = v4l2cuse_modes_source_enum_framesize,
	.enum_frameinterval = v4l2cuse_modes_source_enum_frameinterval,
	.start = live_start,
	.stop = live_stop,
	.produce = live_produce,
	.wake_fd = live_wake_fd,
};
