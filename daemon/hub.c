/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Inputs shared between devices (see hub.h).
 *
 * An input is in one of three modes:
 *
 *   idle ---first tap starts---> direct ---another starts---> fanout
 *    ^                             |   ^                        |
 *    +------last tap stops---------+   +---one tap is left------+
 *
 * direct: the one streaming tap's produce() is the source's produce(),
 * into the device's buffer; the device follows the source's wake fd (or
 * its own timer). fanout: the hub watches the source's wake fd (or runs a
 * timer at the input's rate), produces into its staging buffer, bumps a
 * generation and signals each started tap's eventfd; the taps' wake fds
 * are those eventfds, and a tap's produce() converts the newest frame
 * once per generation, if it is due at the tap's rate (else -EAGAIN). A
 * device re-reads its source's wake fd after every produce(), so taps
 * switch between the two modes without being told: on a switch the hub
 * signals their eventfds once so that each device calls produce() again.
 *
 * Frames that cannot be converted (an interlaced field order, H.264 or
 * HEVC) are only shared as they are: while a tap streams one, every tap
 * that starts must stream exactly its format (else EBUSY, as a camera
 * busy in another format).
 *
 * Controls changed outside (the source's control_fd(), e.g. another
 * application on the camera): the hub takes the changes in once and
 * signals every tap's own control fd, so that each device compares and
 * tells its subscribers.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include <glib.h>
#include <glib-unix.h>

#include "v4l2cuse/format.h"
#include "v4l2cuse/source.h"
#include "util/cleanup.h"
#include "util/clock.h"
#include "util/fd-watch.h"
#include "util/macros.h"
#include "convert.h"
#include "hub.h"
#include "loopback.h"

enum hub_mode {
	HUB_IDLE,
	HUB_DIRECT,
	HUB_FANOUT,
};

struct hub_input {
	struct v4l2cuse_hub *hub;
	char *key;
	struct v4l2cuse_source *src;	/* the one instance */
	GQueue taps;			/* struct hub_tap *, all */
	GQueue started;			/* struct hub_tap *, streaming */
	enum hub_mode mode;
	struct v4l2_pix_format fmt;	/* what src produces (not idle) */
	struct v4l2_fract interval;

	/* fanout */
	uint8_t *staging;
	size_t staging_len;
	bool staged;			/* staging holds a frame in fmt; the fields below
					 * describe it and mean nothing without one */
	int result;			/* of the newest produce(): 0 or -errno */
	uint32_t bytesused;
	bool error;			/* V4L2_BUF_FLAG_ERROR */
	uint32_t field;			/* an ALTERNATE frame's TOP or BOTTOM */
	uint64_t gen;			/* frames produced into staging */
	uint64_t timestamp_ns;
	uint32_t frames;
	int timer_fd;
	guint timer_source;
	guint wake_source;
	int wake_fd;
	guint ctl_watch;		/* on the source's control_fd() */
};

struct hub_tap {
	struct v4l2cuse_source base;
	struct hub_input *in;
	GList link;			/* in in->taps */
	GList started_link;		/* in in->started */
	bool started;
	struct v4l2_pix_format fmt;
	struct v4l2_fract interval;
	int evfd;			/* its wake fd in fanout */
	int ctl_evfd;			/* its control_fd(): the input's controls changed */
	uint64_t gen;			/* the input's frame taken last */
	uint64_t next_due_ns;
	struct v4l2cuse_convert *cv;
};

struct v4l2cuse_hub {
	GHashTable *inputs;		/* key -> struct hub_input * */
	struct v4l2cuse_loopbacks *loopbacks;	/* writer nodes and their capture ends */
};

static const struct v4l2cuse_source_ops hub_tap_ops;

static struct hub_tap *
tap_of(struct v4l2cuse_source *src)
{
	return (struct hub_tap *)src;
}

static uint64_t
interval_ns(struct v4l2_fract iv)
{
	return (uint64_t)iv.numerator * 1000000000ull / MAX(iv.denominator, 1u);
}

static bool
same_format(const struct v4l2_pix_format *a, const struct v4l2_pix_format *b)
{
	return a->pixelformat == b->pixelformat && a->width == b->width &&
	       a->height == b->height && a->bytesperline == b->bytesperline &&
	       a->sizeimage == b->sizeimage && a->field == b->field;
}

/* A format others can be converted from: progressive, and one the converter reads. */
static bool
convertible(const struct v4l2_pix_format *f)
{
	return f->field == V4L2_FIELD_NONE && v4l2cuse_format_info(f->pixelformat);
}

static void
evfd_signal(int fd)
{
	uint64_t one = 1;

	if (write(fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		g_debug("hub: eventfd: %s", g_strerror(errno));
}

static void
evfd_drain(int fd)
{
	uint64_t n;

	while (read(fd, &n, sizeof(n)) > 0)
		;
}

static void
tap_signal(struct hub_tap *t)
{
	evfd_signal(t->evfd);
}

static void
tap_drain(struct hub_tap *t)
{
	evfd_drain(t->evfd);
}

/* ---------------------------------------------------------------------- */
/* fanout: the hub produces */

static void hub_watch(struct hub_input *in);

static void
hub_produce(struct hub_input *in)
{
	struct v4l2cuse_frame frame = {
		.data = in->staging,
		.length = in->staging_len,
		.fmt = &in->fmt,
		.sequence = in->frames,
		.timestamp_ns = v4l2cuse_now_ns(),
	};
	int r;

	r = in->src->ops->produce(in->src, &frame);
	hub_watch(in);		/* the source may have changed its wake fd */
	if (r == -EAGAIN)
		return;
	in->staged = true;
	in->frames++;
	in->result = r;
	in->bytesused = frame.bytesused ? frame.bytesused : in->fmt.sizeimage;
	in->error = frame.error;
	in->field = frame.field;
	in->timestamp_ns = frame.timestamp_ns;
	in->gen++;
	for (GList *l = in->started.head; l; l = l->next)
		tap_signal(l->data);
}

static gboolean
hub_timer_cb(int fd, GIOCondition cond, gpointer data)
{
	struct hub_input *in = data;
	uint64_t n;

	if (read(fd, &n, sizeof(n)) == sizeof(n) && in->mode == HUB_FANOUT)
		hub_produce(in);
	return G_SOURCE_CONTINUE;
}

static gboolean
hub_wake_cb(int fd, GIOCondition cond, gpointer data)
{
	struct hub_input *in = data;

	if (in->mode == HUB_FANOUT)
		hub_produce(in);
	if ((cond & (G_IO_ERR | G_IO_HUP | G_IO_NVAL)) && in->wake_source &&
	    v4l2cuse_source_wake_fd(in->src) == fd) {
		/* A dead fd that stays: pace with the timer instead of spinning. */
		in->wake_source = 0;
		in->wake_fd = -2;
		hub_watch(in);
		return G_SOURCE_REMOVE;
	}
	return G_SOURCE_CONTINUE;
}

static void
hub_unwatch(struct hub_input *in)
{
	if (in->wake_source)
		g_source_remove(in->wake_source);
	in->wake_source = 0;
	in->wake_fd = -1;
	if (in->timer_source)
		g_source_remove(in->timer_source);
	in->timer_source = 0;
	clear_fd(&in->timer_fd);
}

/* fanout: follow the source's wake fd, or a timer at the input's rate. */
static void
hub_watch(struct hub_input *in)
{
	int fd;

	if (in->mode != HUB_FANOUT)
		return;
	fd = in->wake_fd == -2 ? -1 : v4l2cuse_source_wake_fd(in->src);
	if (fd >= 0) {
		if (in->wake_source && in->wake_fd == fd)
			return;
		hub_unwatch(in);
		in->wake_fd = fd;
		in->wake_source = v4l2cuse_fd_watch_add(fd, G_IO_IN | G_IO_ERR | G_IO_HUP, hub_wake_cb,
						in);
		return;
	}
	if (in->timer_source)
		return;
	if (in->wake_source)
		g_source_remove(in->wake_source);
	in->wake_source = 0;
	in->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (in->timer_fd < 0) {
		g_warning("hub: %s: timerfd: %s", in->key, g_strerror(errno));
		return;
	}
	{
		uint64_t ns = interval_ns(in->interval);
		struct itimerspec its = {
			.it_interval = { .tv_sec = ns / 1000000000ull, .tv_nsec = ns % 1000000000ull },
			.it_value = { .tv_sec = ns / 1000000000ull, .tv_nsec = ns % 1000000000ull },
		};

		timerfd_settime(in->timer_fd, 0, &its, NULL);
	}
	in->timer_source = v4l2cuse_fd_watch_add(in->timer_fd, G_IO_IN, hub_timer_cb, in);
}

/* ---------------------------------------------------------------------- */
/* Modes */

static void
hub_stop_source(struct hub_input *in)
{
	hub_unwatch(in);
	if (in->mode != HUB_IDLE)
		in->src->ops->stop(in->src);
	in->mode = HUB_IDLE;
}

/*
 * The mode for the taps started now: the format and rate serving all of
 * them (the largest size, the first started at that size; the fastest
 * rate), restarting the source only when that changes. On failure the
 * input is idle.
 */
static int
hub_reconfigure(struct hub_input *in)
{
	unsigned int n = g_queue_get_length(&in->started);
	const struct hub_tap *big = NULL;
	struct v4l2_fract iv = { 0, 0 };
	enum hub_mode mode = n == 0 ? HUB_IDLE : n == 1 ? HUB_DIRECT : HUB_FANOUT;
	int r;

	if (mode == HUB_IDLE) {
		hub_stop_source(in);
		return 0;
	}
	for (GList *l = in->started.head; l; l = l->next) {
		const struct hub_tap *t = l->data;

		if (!big || (uint64_t)t->fmt.width * t->fmt.height >
				    (uint64_t)big->fmt.width * big->fmt.height)
			big = t;
		if (!iv.denominator || interval_ns(t->interval) < interval_ns(iv))
			iv = t->interval;
	}
	if (in->mode == HUB_IDLE || !same_format(&in->fmt, &big->fmt) ||
	    interval_ns(in->interval) != interval_ns(iv)) {
		hub_stop_source(in);
		r = in->src->ops->start(in->src, &big->fmt, &iv);
		if (r < 0)
			return r;
		g_debug("hub: %s: %ux%u %.4s at %u/%u s for %u devices", in->key, big->fmt.width,
			big->fmt.height, (const char *)&big->fmt.pixelformat, iv.numerator,
			iv.denominator, n);
	}
	in->fmt = big->fmt;
	in->interval = iv;
	/*
	 * Staging keeps its frame only while the hub produces into it without
	 * a break. After a restart (the input is idle here) it holds the old
	 * format's bytes, or none (reallocated below); after direct mode, a
	 * frame older than those its device took meanwhile. A tap that had
	 * not taken it would deliver it (or its result, an error) as the new
	 * format's: empty until the first frame produced from now on.
	 */
	if (in->mode != HUB_FANOUT)
		in->staged = false;
	if (mode == HUB_FANOUT && in->staging_len < in->fmt.sizeimage) {
		g_free(in->staging);
		in->staging = g_malloc(in->fmt.sizeimage);
		in->staging_len = in->fmt.sizeimage;
	}
	if (mode == HUB_DIRECT)
		hub_unwatch(in);
	in->mode = mode;
	hub_watch(in);
	/* Each device calls produce() once more and follows the new wake fd. */
	for (GList *l = in->started.head; l; l = l->next)
		tap_signal(l->data);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* The tap: a source of its own for one device */

static int
tap_create(const char *args, struct v4l2cuse_source **ret_src, char **ret_error)
{
	/* Only made by v4l2cuse_hub_source_create(); never in the registry. */
	if (ret_error)
		*ret_error = g_strdup("hub: not a source of its own");
	return -EINVAL;
}

static void tap_stop(struct v4l2cuse_source *src);

static void
hub_input_free(struct hub_input *in)
{
	if (in->ctl_watch)
		g_source_remove(in->ctl_watch);
	hub_stop_source(in);
	v4l2cuse_source_destroy(in->src);
	g_free(in->staging);
	g_free(in->key);
	g_free(in);
}

static void
tap_destroy(struct v4l2cuse_source *src)
{
	struct hub_tap *t = tap_of(src);
	struct hub_input *in = t->in;

	tap_stop(src);
	g_queue_unlink(&in->taps, &t->link);
	if (g_queue_is_empty(&in->taps)) {
		if (in->key)
			g_hash_table_remove(in->hub->inputs, in->key);
		hub_input_free(in);
	}
	close(t->evfd);
	clear_fd(&t->ctl_evfd);
	v4l2cuse_convert_free(t->cv);
	g_free(t);
}

static int
tap_enum_format(struct v4l2cuse_source *src, unsigned int index, uint32_t *ret_fourcc)
{
	struct v4l2cuse_source *s = tap_of(src)->in->src;

	return s->ops->enum_format(s, index, ret_fourcc);
}

static int
tap_enum_framesize(struct v4l2cuse_source *src, uint32_t fourcc, unsigned int index,
		   uint32_t *ret_width, uint32_t *ret_height)
{
	struct v4l2cuse_source *s = tap_of(src)->in->src;

	return s->ops->enum_framesize(s, fourcc, index, ret_width, ret_height);
}

static int
tap_enum_frameinterval(struct v4l2cuse_source *src, uint32_t fourcc, uint32_t width,
		       uint32_t height, unsigned int index, struct v4l2_fract *ret)
{
	struct v4l2cuse_source *s = tap_of(src)->in->src;

	return s->ops->enum_frameinterval(s, fourcc, width, height, index, ret);
}

static int
tap_negotiate(struct v4l2cuse_source *src, struct v4l2_pix_format *pix)
{
	return v4l2cuse_source_negotiate(tap_of(src)->in->src, pix);
}

static int
tap_default_format(struct v4l2cuse_source *src, struct v4l2_pix_format *pix,
		   struct v4l2_fract *ret_interval)
{
	return v4l2cuse_source_default_format(tap_of(src)->in->src, pix, ret_interval);
}

/* Frames another tap cannot convert are shared only in exactly their format. */
static bool
tap_fits(const struct hub_input *in, const struct v4l2_pix_format *pix)
{
	for (GList *l = in->started.head; l; l = l->next) {
		const struct hub_tap *o = l->data;

		if ((!convertible(&o->fmt) || !convertible(pix)) && !same_format(&o->fmt, pix))
			return false;
	}
	return true;
}

static int
tap_start(struct v4l2cuse_source *src, const struct v4l2_pix_format *pix,
	  const struct v4l2_fract *interval)
{
	struct hub_tap *t = tap_of(src);
	struct hub_input *in = t->in;
	int r;

	if (t->started || !tap_fits(in, pix))
		return -EBUSY;
	t->fmt = *pix;
	t->interval = interval && interval->numerator && interval->denominator
			      ? *interval : (struct v4l2_fract){ 1, 30 };
	t->started = true;
	t->gen = in->gen;
	t->next_due_ns = 0;
	g_queue_push_tail_link(&in->started, &t->started_link);
	r = hub_reconfigure(in);
	if (r < 0) {
		int r2;

		g_queue_unlink(&in->started, &t->started_link);
		t->started = false;
		r2 = hub_reconfigure(in);
		if (r2 < 0)
			g_warning("hub: %s: cannot restart for the other devices: %s", in->key,
				  g_strerror(-r2));
		return r;
	}
	tap_drain(t);
	t->gen = in->gen;
	return 0;
}

static void
tap_stop(struct v4l2cuse_source *src)
{
	struct hub_tap *t = tap_of(src);
	struct hub_input *in = t->in;
	int r;

	if (!t->started)
		return;
	g_queue_unlink(&in->started, &t->started_link);
	t->started = false;
	tap_drain(t);
	r = hub_reconfigure(in);
	if (r < 0)
		g_warning("hub: %s: cannot restart for the other devices: %s", in->key,
			  g_strerror(-r));
}

/* fanout: the newest frame, converted, if there is a new one and it is due. */
static int
tap_produce_fanout(struct hub_tap *t, struct v4l2cuse_frame *frame)
{
	struct hub_input *in = t->in;
	uint64_t iv = interval_ns(t->interval), in_iv = interval_ns(in->interval);
	uint64_t ts = in->timestamp_ns;

	tap_drain(t);
	if (!in->staged || t->gen == in->gen)
		return -EAGAIN;
	t->gen = in->gen;
	/* Slower than the input: take the frames that keep its cadence. */
	if (ts + in_iv / 2 < t->next_due_ns)
		return -EAGAIN;
	t->next_due_ns = ts > t->next_due_ns + iv ? ts + iv : t->next_due_ns + iv;
	if (in->result < 0)
		return in->result;	/* no signal, a failed or dropped frame: for all */
	frame->error = in->error;
	frame->field = in->field;
	if (same_format(&in->fmt, &t->fmt)) {
		if (frame->length < in->bytesused)
			return -EINVAL;
		memcpy(frame->data, in->staging, in->bytesused);
		frame->bytesused = in->bytesused;
		return 0;
	}
	struct v4l2cuse_image img = v4l2cuse_convert_image_of(&in->fmt, in->staging, in->bytesused);

	/* The input's frames are what its format says: a camera's own label. */
	v4l2cuse_convert_image_colorimetry(&img, &in->fmt);
	int r = v4l2cuse_convert_frame(t->cv, &img, &t->fmt, frame->data, frame->length,
				       &frame->bytesused);

	if (r < 0) {
		g_debug("hub: %s: a frame did not convert: %s", in->key, g_strerror(-r));
		return -ENODATA;
	}
	return 0;
}

static int
tap_produce(struct v4l2cuse_source *src, struct v4l2cuse_frame *frame)
{
	struct hub_tap *t = tap_of(src);
	struct hub_input *in = t->in;

	if (!t->started)
		return -EINVAL;
	switch (in->mode) {
	case HUB_DIRECT:
		tap_drain(t);
		return in->src->ops->produce(in->src, frame);
	case HUB_FANOUT:
		return tap_produce_fanout(t, frame);
	case HUB_IDLE:
		break;
	}
	/* Started, but the input could not restart for it: no signal. */
	tap_drain(t);
	return -ENOLINK;
}

static int
tap_wake_fd(struct v4l2cuse_source *src)
{
	struct hub_tap *t = tap_of(src);

	switch (t->in->mode) {
	case HUB_DIRECT:
		return v4l2cuse_source_wake_fd(t->in->src);
	case HUB_FANOUT:
		return t->evfd;
	case HUB_IDLE:
		break;
	}
	return -1;
}

static const struct v4l2cuse_control *
tap_control(struct v4l2cuse_source *src, unsigned int index)
{
	return v4l2cuse_source_control(tap_of(src)->in->src, index);
}

static int
tap_get_control(struct v4l2cuse_source *src, uint32_t id, int64_t *ret)
{
	return v4l2cuse_source_get_control(tap_of(src)->in->src, id, ret);
}

static int
tap_set_control(struct v4l2cuse_source *src, uint32_t id, int64_t value)
{
	return v4l2cuse_source_set_control(tap_of(src)->in->src, id, value);
}

static int
tap_control_fd(struct v4l2cuse_source *src)
{
	return tap_of(src)->ctl_evfd;
}

static void
tap_control_update(struct v4l2cuse_source *src)
{
	/* The input took the changes in already (hub_ctl_cb). */
	evfd_drain(tap_of(src)->ctl_evfd);
}

static const struct v4l2cuse_source_ops hub_tap_ops = {
	.abi = V4L2CUSE_SOURCE_ABI,
	.name = "hub",
	.create = tap_create,
	.destroy = tap_destroy,
	.enum_format = tap_enum_format,
	.enum_framesize = tap_enum_framesize,
	.enum_frameinterval = tap_enum_frameinterval,
	.negotiate = tap_negotiate,
	.default_format = tap_default_format,
	.start = tap_start,
	.stop = tap_stop,
	.produce = tap_produce,
	.wake_fd = tap_wake_fd,
	.control = tap_control,
	.get_control = tap_get_control,
	.set_control = tap_set_control,
	.control_fd = tap_control_fd,
	.control_update = tap_control_update,
};

/* ---------------------------------------------------------------------- */
/* The hub */

struct v4l2cuse_hub *
v4l2cuse_hub_new(void)
{
	struct v4l2cuse_hub *hub = g_new0(struct v4l2cuse_hub, 1);

	hub->inputs = g_hash_table_new(g_str_hash, g_str_equal);
	hub->loopbacks = v4l2cuse_loopbacks_new();
	return hub;
}

void
v4l2cuse_hub_free(struct v4l2cuse_hub *hub)
{
	if (!hub)
		return;
	if (g_hash_table_size(hub->inputs))
		g_warning("bug: hub freed with %u inputs in use", g_hash_table_size(hub->inputs));
	g_hash_table_destroy(hub->inputs);
	v4l2cuse_loopbacks_free(hub->loopbacks);
	g_free(hub);
}

/* The input's controls changed outside: taken in once, told to every tap. */
static gboolean
hub_ctl_cb(int fd, GIOCondition cond, gpointer data)
{
	struct hub_input *in = data;

	v4l2cuse_source_control_update(in->src);
	for (GList *l = in->taps.head; l; l = l->next) {
		struct hub_tap *t = l->data;

		evfd_signal(t->ctl_evfd);
	}
	return G_SOURCE_CONTINUE;
}

static struct hub_tap *
hub_tap_new(struct hub_input *in)
{
	struct hub_tap *t = g_new0(struct hub_tap, 1);

	t->base.ops = &hub_tap_ops;
	t->in = in;
	t->link.data = t;
	t->started_link.data = t;
	t->ctl_evfd = -1;
	t->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (t->evfd < 0) {
		g_free(t);
		return NULL;
	}
	if (v4l2cuse_source_control_fd(in->src) >= 0) {
		t->ctl_evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (t->ctl_evfd < 0) {
			close(t->evfd);
			g_free(t);
			return NULL;
		}
		if (!in->ctl_watch)
			in->ctl_watch = g_unix_fd_add(v4l2cuse_source_control_fd(in->src),
						      G_IO_IN, hub_ctl_cb, in);
	}
	t->cv = v4l2cuse_convert_new();
	g_queue_push_tail_link(&in->taps, &t->link);
	return t;
}

int
v4l2cuse_hub_source_create(struct v4l2cuse_hub *hub, const char *spec,
			   struct v4l2cuse_source **ret_src, char **ret_error)
{
	g_autofree char *key = NULL;
	struct hub_input *in;
	struct hub_tap *t;
	int r;

	if (v4l2cuse_loopback_is_spec(spec))
		return v4l2cuse_loopback_create(hub ? hub->loopbacks : NULL, spec, ret_src,
						ret_error);
	key = hub ? v4l2cuse_source_input_key(spec) : NULL;
	in = key ? g_hash_table_lookup(hub->inputs, key) : NULL;
	if (!key)
		return v4l2cuse_source_create(spec, ret_src, ret_error);
	if (!in) {
		in = g_new0(struct hub_input, 1);
		in->hub = hub;
		in->timer_fd = -1;
		in->wake_fd = -1;
		r = v4l2cuse_source_create(spec, &in->src, ret_error);
		if (r < 0) {
			g_free(in);
			return r;
		}
		in->key = g_steal_pointer(&key);
		g_hash_table_insert(hub->inputs, in->key, in);
	}
	t = hub_tap_new(in);
	if (!t) {
		r = -errno;
		if (ret_error)
			*ret_error = g_strdup_printf("eventfd: %s", g_strerror(-r));
		if (g_queue_is_empty(&in->taps)) {
			g_hash_table_remove(hub->inputs, in->key);
			hub_input_free(in);
		}
		return r;
	}
	*ret_src = &t->base;
	return 0;
}

const char *
v4l2cuse_hub_input(struct v4l2cuse_source *src, unsigned int *ret_taps)
{
	struct hub_tap *t;

	if (!src || src->ops != &hub_tap_ops)
		return NULL;
	t = tap_of(src);
	if (ret_taps)
		*ret_taps = g_queue_get_length(&t->in->taps);
	return t->in->key;
}
