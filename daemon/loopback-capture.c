/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A loopback's capture end (loopback.h): the source of a capture device. It
 * offers the configured modes and turns the newest written frame into the
 * device's format at the device's pace; its wake fd is an epoll set of an
 * eventfd the writer end signals and a timer at the device's rate.
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
#include "loopback-private.h"

/* ---------------------------------------------------------------------- */
/* The capture end */

/* The negotiated frame interval in nanoseconds. */
static uint64_t
lb_interval_ns(const struct lb_source *s)
{
	return (uint64_t)s->interval.numerator * 1000000000u / s->interval.denominator;
}

/* The pace: a tick every frame interval, from @from_ns on. */
static void
lb_capture_pace(struct lb_source *s, uint64_t from_ns)
{
	uint64_t interval_ns = lb_interval_ns(s), first = from_ns + interval_ns;
	struct itimerspec its = {
		.it_interval = { .tv_sec = (time_t)(interval_ns / 1000000000u),
				 .tv_nsec = (long)(interval_ns % 1000000000u) },
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
	s->shown_gen = 0;	/* the last written frame, if any, is news to a new stream */
	s->interval = iv;
	s->delivered_ns = 0;
	lb_capture_pace(s, v4l2cuse_now_ns());
	g_queue_push_tail_link(&s->lb->captures, &s->link);
	return 0;
}

void
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
 * The newest written frame in the device's format, at the device's pace.
 * A written frame goes out at once unless the last one went out less than
 * half a frame interval ago (then at the next tick); at a tick without a
 * new frame the last one repeats (sustain_framerate), or nothing happens.
 * Frames written faster than the device's rate are skipped. No frame yet,
 * or none for timeout ms: no signal, at the device's rate.
 *
 * A raw written frame is converted (or, in the device's own format, copied)
 * straight into the buffer: the writer end keeps it unchanged until the
 * next write, so a repeat converts it again from there. A compressed one
 * (which may not decode) is converted once into the cache and copied from
 * it, so that a bad JPEG leaves the last good frame to repeat. At 640x480
 * YUYV the cache cost a 600 KiB copy a frame (docs/performance.md,
 * "Loopback").
 */
static int
lb_capture_produce(struct v4l2cuse_source *src, struct v4l2cuse_frame *frame)
{
	struct lb_source *s = lb_of(src);
	struct loopback *lb = s->lb;
	uint64_t n, now = v4l2cuse_now_ns();
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
	    (lb->knobs.timeout_ms && now - lb->at_ns > (uint64_t)lb->knobs.timeout_ms * 1000000ull))
		return tick ? -ENOLINK : -EAGAIN;
	if (fresh && !tick && s->delivered_ns && now - s->delivered_ns < lb_interval_ns(s) / 2)
		return -EAGAIN;		/* too soon: at the next tick */
	if (!fresh && (!tick || !lb->knobs.sustain_framerate || !s->cache_gen))
		return -EAGAIN;
	if (fresh) {
		struct v4l2cuse_image img = v4l2cuse_convert_image_of(&lb->fmt, lb->data,
								      lb->bytesused);
		bool raw = !v4l2cuse_format_info(lb->fmt.pixelformat)->compressed;

		if (s->shown_gen && lb->gen > s->shown_gen + 1)
			lb->dropped += lb->gen - s->shown_gen - 1;
		s->shown_gen = lb->gen;
		r = v4l2cuse_convert_frame(s->cv, &img, &s->pix, raw ? frame->data : s->cache,
					   raw ? frame->length : s->pix.sizeimage, &s->cache_used);
		if (r == 0) {
			s->cache_gen = lb->gen;
			s->cache_is_lb = raw;
		} else {
			/* Garbage written (a bad JPEG): the last good frame stays. */
			lb->refused++;
			g_debug("loopback %s: a written frame does not convert: %s", lb->name,
				g_strerror(-r));
			if (s->cache_is_lb)
				s->cache_gen = 0;	/* the last good one was overwritten */
			if (!s->cache_gen)
				return tick ? -ENOLINK : -EAGAIN;
		}
		if (!tick)
			lb_capture_pace(s, now);	/* the next repeat one interval later */
		if (s->cache_is_lb && s->cache_gen == lb->gen)
			goto delivered;		/* converted into the buffer */
	}
	if (s->cache_is_lb) {
		/* A repeat (lb->gen is still cache_gen: nothing newer was written). */
		struct v4l2cuse_image img = v4l2cuse_convert_image_of(&lb->fmt, lb->data,
								      lb->bytesused);

		r = v4l2cuse_convert_frame(s->cv, &img, &s->pix, frame->data, frame->length,
					   &s->cache_used);
		if (r < 0)
			return r;
	} else {
		memcpy(frame->data, s->cache, s->cache_used);
	}
delivered:
	s->delivered_ns = now;
	frame->bytesused = s->cache_used;
	return 0;
}

const struct v4l2cuse_source_ops lb_capture_ops = {
	.abi = V4L2CUSE_SOURCE_ABI,
	.name = "loopback",
	.create = lb_create,
	.destroy = lb_destroy,
	.enum_format = v4l2cuse_modes_source_enum_format,
	.enum_framesize = v4l2cuse_modes_source_enum_framesize,
	.enum_frameinterval = v4l2cuse_modes_source_enum_frameinterval,
	.start = lb_capture_start,
	.stop = lb_capture_stop,
	.produce = lb_capture_produce,
	.wake_fd = lb_capture_wake_fd,
	.control = lb_control,
	.get_control = lb_get_control,
	.set_control = lb_set_control,
};

/* ---------------------------------------------------------------------- */

/* @k become @lb's knobs. */
static void
lb_capture_set_knobs(struct loopback *lb, const struct lb_knobs *k)
{
	lb_set_keep_format(lb, k->keep_format);
	lb->knobs.sustain_framerate = k->sustain_framerate;
	lb->knobs.timeout_ms = k->timeout_ms;
	lb->knobs.compat = k->compat;
	lb->knobs.feed = k->feed;
	memcpy(lb->knobs.feed_target, k->feed_target, sizeof(lb->knobs.feed_target));
	lb->knobs.min_width = k->min_width;
	lb->knobs.max_width = k->max_width;
	lb->knobs.min_height = k->min_height;
	lb->knobs.max_height = k->max_height;
}

/*
 * The sizes writers may set, v4l2loopback's min_width, max_width,
 * min_height and max_height: even (a minimum rounds up, a maximum down),
 * the minimum no larger than the maximum.
 */
static int
lb_capture_size_limits(const struct v4l2cuse_opts *o, struct lb_knobs *k, char **ret_error)
{
	uint32_t min_w, max_w, min_h, max_h;
	int r;

	if ((r = v4l2cuse_opts_get_uint(o, "min_width", 2, 1, V4L2CUSE_MAX_WIDTH, &min_w,
					ret_error)) < 0 ||
	    (r = v4l2cuse_opts_get_uint(o, "max_width", V4L2CUSE_MAX_WIDTH, 2,
					V4L2CUSE_MAX_WIDTH, &max_w, ret_error)) < 0 ||
	    (r = v4l2cuse_opts_get_uint(o, "min_height", 2, 1, V4L2CUSE_MAX_HEIGHT, &min_h,
					ret_error)) < 0 ||
	    (r = v4l2cuse_opts_get_uint(o, "max_height", V4L2CUSE_MAX_HEIGHT, 2,
					V4L2CUSE_MAX_HEIGHT, &max_h, ret_error)) < 0)
		return r;
	k->min_width = (min_w + 1) & ~1u;
	k->max_width = max_w & ~1u;
	k->min_height = (min_h + 1) & ~1u;
	k->max_height = max_h & ~1u;
	if (k->min_width > k->max_width || k->min_height > k->max_height) {
		if (ret_error)
			*ret_error = v4l2cuse_opts_error(o, "writer sizes %ux%u to %ux%u: the "
							 "minimum is above the maximum",
							 k->min_width, k->min_height,
							 k->max_width, k->max_height);
		return -EINVAL;
	}
	return 0;
}

int
lb_capture_setup(struct lb_source *s, const char *spec, char **ret_error)
{
	_cleanup_(v4l2cuse_opts_freep) struct v4l2cuse_opts *o = NULL;
	g_autofree char *writer = NULL, *target = NULL;
	struct lb_knobs *k = &s->knobs;
	int r;

	r = lb_parse_opts(spec, &o, &writer, &target, ret_error);
	if (r < 0)
		return r;
	/*
	 * A feed: its writer closes when the PipeWire node goes, but a stalled
	 * graph closes nothing, so the readers see the placeholder after 3 s
	 * without a frame.
	 */
	k->feed = target != NULL;
	if (target)
		g_strlcpy(k->feed_target, target, sizeof(k->feed_target));
	r = v4l2cuse_modes_from_options(&s->ms.modes, o, ret_error);
	if (r < 0 ||
	    (r = v4l2cuse_opts_get_bool(o, "keep_format", false, &k->keep_format,
					ret_error)) < 0 ||
	    (r = v4l2cuse_opts_get_bool(o, "sustain_framerate", true, &k->sustain_framerate,
					ret_error)) < 0 ||
	    (r = v4l2cuse_opts_get_bool(o, "compat", false, &k->compat, ret_error)) < 0 ||
	    (r = v4l2cuse_opts_get_int(o, "timeout", k->feed ? LB_FEED_TIMEOUT_MS : 0, 0,
				       LB_TIMEOUT_MAX_MS, &k->timeout_ms,
				       ret_error)) < 0 ||
	    (r = lb_capture_size_limits(o, k, ret_error)) < 0)
		return r;
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
	/* The newest capture end's options are the knobs (loopback-private.h). */
	s->found = s->lb->knobs;
	lb_capture_set_knobs(s->lb, &s->knobs);
	g_queue_push_tail_link(&s->lb->ends, &s->end_link);
	return 0;
}

void
lb_capture_leave(struct lb_source *s)
{
	struct loopback *lb = s->lb;
	bool newest = lb->ends.tail == &s->end_link;

	if (!g_list_find(lb->ends.head, s))
		return;		/* its setup failed */
	g_queue_unlink(&lb->ends, &s->end_link);
	if (newest && lb->ends.length)
		lb_capture_set_knobs(lb, &s->found);
}
