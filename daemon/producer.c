/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The device's producer: the videobuf driver ops of its queues, the frame
 * timer or the source's wake fd, and the frame loop.
 *
 * The source runs while at least one queue streams (or reads): the first
 * queue to start starts it, the last to stop stops it. Each frame is
 * produced once, into the oldest buffer handed over by one of the started
 * queues, and copied into the oldest buffer of each other one. A queue
 * without a free buffer misses that frame alone: its own sequence number
 * skips one (vivid does the same for its one queue), and the others are
 * not held back.
 *
 * No signal (the source returns -ENOLINK, or -ENODEV when it is gone for
 * good): the frame comes from the configured placeholder source, or the
 * built-in NO SIGNAL card, in the negotiated format, and the device
 * reports signal "lost" until the source produces again.
 *
 * Refused (-ECONNREFUSED: the input is there but no longer streams this
 * configuration): every started queue ends in vb2's error state (DQBUF and
 * read() fail with EIO, poll() with POLLERR) until its consumer stops; no
 * placeholder is shown for it.
 *
 * Interlaced formats: each buffer carries the format's field order, or for
 * V4L2_FIELD_ALTERNATE the field the source says (TOP or BOTTOM, the
 * placeholder's alternating); both fields of a frame share its sequence
 * number (videobuf). ALTERNATE cannot be read(): the field would be lost
 * (vb2 drivers refuse it the same way).
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include <glib.h>
#include <glib-unix.h>

#include "v4l2cuse/source.h"
#include "util/clock.h"
#include "util/fd-watch.h"
#include "util/macros.h"
#include "videobuf.h"
#include "placeholder.h"
#include "device-private.h"
#include "loopback.h"
#include "offer.h"

static void dev_timer_stop(struct v4l2cuse_device *dev);
static int dev_arm_producer(struct v4l2cuse_device *dev);

/*
 * Ticks a late timer makes up for at once (each its own frame, stamped with
 * its own time): as many as a queue can have buffers; beyond that a stall's
 * ticks could only be dropped frames anyway, and are counted as such.
 */
#define DEV_MAX_CATCH_UP VB_MAX_BUFFERS

/* ---------------------------------------------------------------------- */
/* The placeholder */

/* The configured placeholder source, started on first use; false if unusable. */
static bool
dev_placeholder_ready(struct v4l2cuse_device *dev)
{
	struct v4l2cuse_source *ph = dev->placeholder;
	struct v4l2_pix_format f = {
		.width = dev->fmt.width,
		.height = dev->fmt.height,
		.pixelformat = dev->fmt.pixelformat,
	};
	int r;

	if (!ph || dev->placeholder_unusable)
		return false;
	if (dev->placeholder_started)
		return true;
	r = v4l2cuse_source_negotiate(ph, &f);
	if (r == 0 && (f.width != dev->fmt.width || f.height != dev->fmt.height ||
		       f.pixelformat != dev->fmt.pixelformat || f.sizeimage > dev->fmt.sizeimage))
		r = -EINVAL;
	if (r == 0)
		r = ph->ops->start(ph, &dev->fmt, &dev->interval);
	if (r < 0) {
		dev->placeholder_unusable = true;
		g_message("%s: the placeholder '%s' cannot produce %ux%u %.4s (%s)", dev->name,
			  dev->placeholder_spec, dev->fmt.width, dev->fmt.height,
			  (const char *)&dev->fmt.pixelformat, g_strerror(-r));
		return false;
	}
	dev->placeholder_started = true;
	return true;
}

/*
 * Fill @frame in place of what the source failed to produce (@r): from the
 * configured placeholder, or, when the source has no signal, the built-in
 * card. Returns 0, or @r when there is nothing to show instead.
 */
static int
dev_produce_placeholder(struct v4l2cuse_device *dev, struct v4l2cuse_frame *frame, int r)
{
	bool no_signal = r == -ENOLINK || r == -ENODEV;
	int pr = -ENOENT;

	frame->bytesused = 0;
	frame->error = false;
	if (dev_placeholder_ready(dev))
		pr = dev->placeholder->ops->produce(dev->placeholder, frame);
	if (pr < 0 && no_signal) {
		if (!dev->card)
			dev->card = v4l2cuse_placeholder_new();
		pr = v4l2cuse_placeholder_fill(dev->card, &dev->fmt, frame->data, frame->length,
					       &frame->bytesused);
	}
	if (pr < 0)
		return r;
	if (!dev->signal_lost)
		g_message("%s: %s (%s): showing the placeholder", dev->name,
			  no_signal ? "no signal" : "the source failed", g_strerror(-r));
	dev->signal_lost = true;
	return 0;
}

void
dev_placeholder_stop(struct v4l2cuse_device *dev)
{
	if (dev->placeholder && dev->placeholder_started)
		dev->placeholder->ops->stop(dev->placeholder);
	dev->placeholder_started = false;
}

/* ---------------------------------------------------------------------- */
/* The frame loop */

/*
 * The source refuses to go on: the taken buffers back to their queues and
 * every started queue into the error state (vb_queue_set_error()).
 */
static void
dev_refused(struct v4l2cuse_device *dev, struct dev_queue **dqs, struct vb_buffer **bufs,
	    unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		if (bufs[i])
			g_queue_push_head(&dqs[i]->active, bufs[i]);
		vb_queue_set_error(dqs[i]->q);
	}
	g_message("%s: the source refuses to stream %ux%u %.4s: the consumers' streams end "
		  "with an error", dev->name, dev->fmt.width, dev->fmt.height,
		  (const char *)&dev->fmt.pixelformat);
}

/* A queue's share of a frame: @b is NULL when it has no free buffer. */
static void
dev_queue_miss(struct dev_queue *dq)
{
	vb_queue_skip_sequence(dq->q, 1);
	dq->dev->dropped++;
}

/* Give @b back filled with @frame (copied when @b is not where it was made). */
static void
dev_queue_deliver(struct dev_queue *dq, struct vb_buffer *b, const struct v4l2cuse_frame *frame)
{
	struct v4l2cuse_device *dev = dq->dev;
	const struct v4l2_pix_format *fmt = &dev->fmt;
	uint8_t *mem = vb_buffer_mem(b);
	size_t len = vb_buffer_length(b);
	uint32_t used = frame->error ? 0 : MIN((size_t)frame->bytesused, len);

	vb_buffer_set_timestamp(b, frame->timestamp_ns);
	if (!frame->error && mem != frame->data)
		memcpy(mem, frame->data, used);
	if (fmt->field == V4L2_FIELD_ALTERNATE)
		vb_buffer_set_field(b, frame->field == V4L2_FIELD_BOTTOM ? V4L2_FIELD_BOTTOM
									  : V4L2_FIELD_TOP);
	else
		vb_buffer_set_field(b, fmt->field);
	if (fmt->bytesperline == 0 && !frame->error) {
		/* Compressed: padded to sizeimage, which read() hands out whole. */
		size_t pad_to = MIN(len, (size_t)fmt->sizeimage);

		if (used < pad_to)
			memset(mem + used, 0, pad_to - used);
		if (vb_queue_is_reading(dq->q))
			used = (uint32_t)pad_to;
	}
	vb_buffer_set_bytesused(b, used);
	if (frame->error)
		dev->errors++;
	else
		dev->delivered++;
	vb_buffer_done(b, frame->error ? VB_BUF_ERROR : VB_BUF_DONE);
}

/*
 * One frame, due at @ts_ns: take the oldest buffer of every started queue,
 * fill the first one from the source and copy it into the others. A queue
 * with no buffer free misses the frame (a sequence gap for it alone). With
 * no buffer at all, a source with a wake fd still has its frame consumed,
 * into a scratch buffer, so that its fd stops being readable. The buffers
 * the consumers queued through the preload shim's fast path since the last
 * frame are taken first.
 */
static void
dev_produce_one(struct v4l2cuse_device *dev, uint64_t ts_ns)
{
	unsigned int n, i = 0, first;
	g_autofree struct vb_buffer **bufs = NULL;
	struct dev_queue **dqs;
	int r;

	for (GList *l = dev->streams.head; l; l = l->next) {
		struct dev_queue *dq = l->data;

		/* A shared device's queue has its handle; an exclusive one its owner. */
		dev_fp_take(dq->fh ? dq->fh : (struct v4l2cuse_fh *)vb_queue_owner(dq->q));
	}
	n = g_queue_get_length(&dev->streams);
	first = n;
	bufs = g_new0(struct vb_buffer *, MAX(n, 1u));
	dqs = g_newa(struct dev_queue *, MAX(n, 1u));
	for (GList *l = dev->streams.head; l; l = l->next, i++) {
		dqs[i] = l->data;
		bufs[i] = g_queue_pop_head(&dqs[i]->active);
		if (bufs[i] && first == n)
			first = i;
	}
	if (first == n && dev->wake_source == 0) {
		dev->frames++;
		dev->produced++;
		for (i = 0; i < n; i++)
			dev_queue_miss(dqs[i]);
		return;
	}
	if (first == n && !dev->scratch)
		dev->scratch = g_malloc(dev->fmt.sizeimage);

	struct v4l2cuse_frame frame = {
		.data = first < n ? vb_buffer_mem(bufs[first]) : dev->scratch,
		.length = first < n ? vb_buffer_length(bufs[first]) : dev->fmt.sizeimage,
		.fmt = &dev->fmt,
		.sequence = dev->frames,
		.timestamp_ns = ts_ns,
	};

	r = dev->src->ops->produce(dev->src, &frame);
	if (r == -ECONNREFUSED) {
		dev_refused(dev, dqs, bufs, n);
		return;
	}
	if (r < 0 && r != -EAGAIN && r != -ENODATA) {
		r = dev_produce_placeholder(dev, &frame, r);
		/* Placeholder fields alternate as a camera's would. */
		frame.field = dev->frames & 1 ? V4L2_FIELD_BOTTOM : V4L2_FIELD_TOP;
	}
	else if (r == 0 && dev->signal_lost) {
		dev->signal_lost = false;
		g_message("%s: the source is back", dev->name);
	}
	if (dev_streaming(dev))
		dev_arm_producer(dev);	/* the source may have changed its wake fd */
	if (r == -EAGAIN || r == -ENODATA) {
		/* Not due yet, or dropped on purpose: the buffers wait for the next one. */
		for (i = 0; i < n; i++) {
			if (bufs[i])
				g_queue_push_head(&dqs[i]->active, bufs[i]);
		}
		if (r == -EAGAIN)
			return;
		dev->frames++;
		dev->produced++;
		for (i = 0; i < n; i++)
			dev_queue_miss(dqs[i]);
		return;
	}
	dev->frames++;
	dev->produced++;
	if (r < 0) {
		g_debug("%s: source failed to produce a frame: %s", dev->name, g_strerror(-r));
		frame.error = true;
		frame.bytesused = 0;
	}
	if (frame.bytesused == 0 && !frame.error)
		frame.bytesused = dev->fmt.sizeimage;
	/* The copies first: delivering the first buffer hands its memory back. */
	for (i = 0; i < n; i++) {
		if (i == first)
			continue;
		if (bufs[i])
			dev_queue_deliver(dqs[i], bufs[i], &frame);
		else
			dev_queue_miss(dqs[i]);
	}
	if (first < n)
		dev_queue_deliver(dqs[first], bufs[first], &frame);
}

/* @n ticks went by with no frame made (a stall): every started queue misses them. */
static void
dev_skip_ticks(struct v4l2cuse_device *dev, uint64_t n)
{
	for (GList *l = dev->streams.head; l; l = l->next) {
		struct dev_queue *dq = l->data;

		vb_queue_skip_sequence(dq->q, (unsigned int)MIN(n, (uint64_t)UINT_MAX));
		dev->dropped += n;
	}
	dev->frames += (uint32_t)n;
	dev->produced += n;
	dev->ticks_lost += n;
	dev->stalls++;
}

static gboolean
dev_timer_cb(int fd, GIOCondition cond, gpointer data)
{
	struct v4l2cuse_device *dev = data;
	uint64_t expirations;

	if (read(fd, &expirations, sizeof(expirations)) != sizeof(expirations))
		return G_SOURCE_CONTINUE;
	/*
	 * Every tick is a frame stamped with the time it was due, so the rate
	 * and the spacing of the timestamps are the requested ones whenever we
	 * wake up: a late wake-up (a loaded machine) makes up for the ticks it
	 * missed at once, into the buffers the consumers have queued (a queue
	 * with none free misses the frame, a sequence gap for it alone); a
	 * stall of more than DEV_MAX_CATCH_UP ticks drops the rest, as gaps.
	 * No clock is read per frame.
	 */
	if (expirations > DEV_MAX_CATCH_UP && dev_streaming(dev)) {
		uint64_t skip = expirations - DEV_MAX_CATCH_UP;

		dev_skip_ticks(dev, skip);
		dev->next_tick_ns += skip * dev->tick_ns;
		expirations = DEV_MAX_CATCH_UP;
	}
	for (uint64_t i = 0; i < expirations && dev_streaming(dev); i++) {
		uint64_t due = dev->next_tick_ns;

		dev->next_tick_ns += dev->tick_ns;
		dev_produce_one(dev, due);
	}
	return G_SOURCE_CONTINUE;
}

/* A source with its own clock (a camera): produce when its fd is readable. */
static gboolean
dev_wake_cb(int fd, GIOCondition cond, gpointer data)
{
	struct v4l2cuse_device *dev = data;

	/* On ERR/HUP the source reports the loss through produce(). */
	if (dev_streaming(dev))
		dev_produce_one(dev, v4l2cuse_now_ns());
	if (cond & (G_IO_ERR | G_IO_HUP | G_IO_NVAL) &&
	    v4l2cuse_source_wake_fd(dev->src) == fd) {
		/* Still the same dead fd: fall back to the timer, don't spin. */
		dev->wake_source = 0;
		dev->wake_fd = -1;
		dev->wake_dead_fd = fd;
		dev_arm_producer(dev);
		return G_SOURCE_REMOVE;
	}
	return G_SOURCE_CONTINUE;
}

/* The frame timer, on an absolute schedule: tick k is due at start + k * interval. */
static int
dev_timer_start(struct v4l2cuse_device *dev)
{
	uint64_t ns = (uint64_t)dev->interval.numerator * 1000000000ull /
		      MAX(dev->interval.denominator, 1u);
	uint64_t first;
	struct itimerspec its;

	ns = MAX(ns, 1u);
	if (dev->timer_fd < 0) {
		dev->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (dev->timer_fd < 0)
			return -errno;
	}
	first = v4l2cuse_now_ns() + ns;
	its = (struct itimerspec){
		.it_interval = { .tv_sec = ns / 1000000000ull, .tv_nsec = ns % 1000000000ull },
		.it_value = { .tv_sec = first / 1000000000ull, .tv_nsec = first % 1000000000ull },
	};
	if (timerfd_settime(dev->timer_fd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
		return -errno;
	dev->tick_ns = ns;
	dev->next_tick_ns = first;
	if (!dev->timer_source)
		dev->timer_source = v4l2cuse_fd_watch_add(dev->timer_fd, G_IO_IN, dev_timer_cb, dev);
	return 0;
}

static void
dev_timer_stop(struct v4l2cuse_device *dev)
{
	if (dev->timer_source) {
		g_source_remove(dev->timer_source);
		dev->timer_source = 0;
	}
	if (dev->timer_fd >= 0) {
		close(dev->timer_fd);
		dev->timer_fd = -1;
	}
}

void
dev_set_interval(struct v4l2cuse_device *dev, struct v4l2_fract interval)
{
	dev->interval = interval;
	if (dev_streaming(dev) && !dev->wake_source)
		dev_timer_start(dev);	/* re-arm at the new rate */
}

/*
 * Drive produce() from the source's wake fd when it has one, else from the
 * frame timer; called at start and after every produce() because a camera
 * source swaps its fd when the camera goes away and comes back.
 */
static int
dev_arm_producer(struct v4l2cuse_device *dev)
{
	int fd = v4l2cuse_source_wake_fd(dev->src);

	if (fd == dev->wake_dead_fd)
		fd = -1;		/* hung up earlier: wait for a new one */
	if (fd >= 0 && fd == dev->wake_fd && dev->wake_source)
		return 0;
	if (fd < 0 && !dev->wake_source && dev->timer_source)
		return 0;
	if (dev->wake_source) {
		g_source_remove(dev->wake_source);
		dev->wake_source = 0;
		dev->wake_fd = -1;
	}
	if (fd < 0)
		return dev_timer_start(dev);
	dev_timer_stop(dev);
	dev->wake_fd = fd;
	dev->wake_dead_fd = -1;
	dev->wake_source = v4l2cuse_fd_watch_add(fd, G_IO_IN | G_IO_ERR | G_IO_HUP, dev_wake_cb, dev);
	return 0;
}

void
dev_producer_rearm(struct v4l2cuse_device *dev)
{
	if (!dev_streaming(dev))
		return;
	dev->wake_dead_fd = -1;
	dev_arm_producer(dev);
}

bool
dev_streaming(struct v4l2cuse_device *dev)
{
	return !g_queue_is_empty(&dev->streams);
}

/* The source stops: the last queue stopped, or the device goes. */
static void
dev_producer_stop(struct v4l2cuse_device *dev)
{
	dev_timer_stop(dev);
	if (dev->wake_source) {
		g_source_remove(dev->wake_source);
		dev->wake_source = 0;
	}
	dev->wake_fd = -1;
	g_clear_pointer(&dev->scratch, g_free);
	dev->src->ops->stop(dev->src);
	dev_placeholder_stop(dev);
	/* signal_lost stays: what the source showed last, until it produces again. */
	dev_changed(dev);
}

void
dev_producer_free(struct v4l2cuse_device *dev)
{
	dev_timer_stop(dev);
	v4l2cuse_placeholder_free(dev->card);
	dev->card = NULL;
}

/* ---------------------------------------------------------------------- */
/* videobuf driver ops */

static int
dev_queue_setup(struct vb_queue *q, unsigned int *num_buffers, size_t *size)
{
	struct dev_queue *dq = vb_queue_priv(q);

	if (*size && *size < dq->dev->fmt.sizeimage)
		return -EINVAL;
	if (!*size)
		*size = dq->dev->fmt.sizeimage;
	return 0;
}

static void
dev_buf_queue(struct vb_buffer *b)
{
	struct dev_queue *dq = vb_queue_priv(vb_buffer_queue(b));

	g_queue_push_tail(&dq->active, b);
}

static void
dev_return_all(struct dev_queue *dq, enum vb_buf_state state)
{
	struct vb_buffer *b;

	while ((b = g_queue_pop_head(&dq->active)))
		vb_buffer_done(b, state);
}

/*
 * A queue started or stopped: a loopback's capture end counts its readers
 * (v4l2loopback's client-usage event on the writer node).
 */
static void
dev_streams_changed(struct v4l2cuse_device *dev)
{
	v4l2cuse_loopback_set_readers(v4l2cuse_offer_inner(dev->src),
				      g_queue_get_length(&dev->streams));
}

static int
dev_start_streaming(struct vb_queue *q, unsigned int count)
{
	struct dev_queue *dq = vb_queue_priv(q);
	struct v4l2cuse_device *dev = dq->dev;
	int r;

	/* vb2 drivers refuse read() of single fields: it cannot say which one it is. */
	if (dev->fmt.field == V4L2_FIELD_ALTERNATE && vb_queue_is_reading(q)) {
		r = -EINVAL;
		goto err_return;
	}
	if (dev_streaming(dev))
		goto join;		/* the source runs already: join it */
	r = dev->src->ops->start(dev->src, &dev->fmt, &dev->interval);
	if (r < 0)
		goto err_return;
	dev->wake_fd = -1;
	dev->wake_dead_fd = -1;
	dev->frames = 0;
	g_queue_push_tail_link(&dev->streams, &dq->link);
	r = dev_arm_producer(dev);
	if (r < 0)
		goto err_stop_source;
	dq->started = true;
	dev_changed(dev);
	dev_streams_changed(dev);
	g_debug("%s: streaming %ux%u %.4s at %u/%u s", dev->name, dev->fmt.width,
		dev->fmt.height, (const char *)&dev->fmt.pixelformat,
		dev->interval.numerator, dev->interval.denominator);
	return 0;

join:
	g_queue_push_tail_link(&dev->streams, &dq->link);
	dq->started = true;
	dev_streams_changed(dev);
	g_debug("%s: a consumer joined (%u streaming)", dev->name,
		g_queue_get_length(&dev->streams));
	return 0;

err_stop_source:
	g_queue_unlink(&dev->streams, &dq->link);
	dev_producer_stop(dev);
err_return:
	g_message("%s: the source failed to start: %s", dev->name, g_strerror(-r));
	dev_return_all(dq, VB_BUF_QUEUED);
	return r;
}

static void
dev_stop_streaming(struct vb_queue *q)
{
	struct dev_queue *dq = vb_queue_priv(q);
	struct v4l2cuse_device *dev = dq->dev;

	if (dq->started) {
		g_queue_unlink(&dev->streams, &dq->link);
		dq->started = false;
		if (!dev_streaming(dev))
			dev_producer_stop(dev);
		dev_streams_changed(dev);
	}
	dev_return_all(dq, VB_BUF_ERROR);
}

static void
dev_queue_wake(struct vb_queue *q)
{
	struct dev_queue *dq = vb_queue_priv(q);

	if (dq->fh)
		dev_wake_fh(dq->fh);
	else
		dev_wake_all(dq->dev);
}

static const struct vb_ops dev_vb_ops = {
	.queue_setup = dev_queue_setup,
	.buf_queue = dev_buf_queue,
	.start_streaming = dev_start_streaming,
	.stop_streaming = dev_stop_streaming,
	.wake = dev_queue_wake,
};

/* ---------------------------------------------------------------------- */
/* A writer node's output queue: the buffers a writer queues are consumed */

/* Every buffer handed over goes to the loopback, then back to the writer. */
static void
dev_out_consume(struct dev_queue *dq)
{
	struct v4l2cuse_device *dev = dq->dev;
	struct vb_buffer *b;

	while ((b = g_queue_pop_head(&dq->active))) {
		struct v4l2cuse_frame frame = {
			.data = vb_buffer_mem(b),
			.length = vb_buffer_length(b),
			.fmt = &dev->fmt,
			.bytesused = vb_buffer_bytesused(b),
		};

		/* A write() call before it (the shim's emulation streams after one) ended. */
		dev_writer_end_call(dev);
		if ((dev->fmt.bytesperline && frame.bytesused != dev->fmt.sizeimage) ||
		    v4l2cuse_source_consume(dev->src, &frame) < 0)
			v4l2cuse_loopback_refused(dev->src);	/* short of a frame, or not one */
		vb_buffer_done(b, VB_BUF_DONE);
	}
}

static void
dev_out_buf_queue(struct vb_buffer *b)
{
	struct dev_queue *dq = vb_queue_priv(vb_buffer_queue(b));

	g_queue_push_tail(&dq->active, b);
	if (dq->started)
		dev_out_consume(dq);
}

static int
dev_out_start_streaming(struct vb_queue *q, unsigned int count)
{
	struct dev_queue *dq = vb_queue_priv(q);
	/* The handle that streams owns the queue (vb2's owner). */
	int r = dev_writer_join((struct v4l2cuse_fh *)vb_queue_owner(q));

	if (r < 0) {
		dev_return_all(dq, VB_BUF_QUEUED);
		return r;
	}
	dq->started = true;
	dev_out_consume(dq);
	return 0;
}

static void
dev_out_stop_streaming(struct vb_queue *q)
{
	struct dev_queue *dq = vb_queue_priv(q);

	dq->started = false;
	dev_return_all(dq, VB_BUF_ERROR);
	/*
	 * A streaming writer goes with its stream; one that joined with
	 * write() stays until it closes, as without streaming: the shim's
	 * write() emulation stops it to let S_FMT through (docs/loopback.md).
	 */
	if (dq->dev->writer && !dq->dev->writer->writes)
		dev_writer_leave(dq->dev);
}

static const struct vb_ops dev_out_vb_ops = {
	.queue_setup = dev_queue_setup,
	.buf_queue = dev_out_buf_queue,
	.start_streaming = dev_out_start_streaming,
	.stop_streaming = dev_out_stop_streaming,
	.wake = dev_queue_wake,
};

struct dev_queue *
dev_queue_new(struct v4l2cuse_device *dev, struct v4l2cuse_fh *fh)
{
	struct dev_queue *dq = g_new0(struct dev_queue, 1);
	struct vb_queue_config qc = dev->qc;

	dq->dev = dev;
	dq->fh = fh;
	dq->link.data = dq;
	g_queue_init(&dq->active);
	qc.ops = dev->output ? &dev_out_vb_ops : &dev_vb_ops;
	qc.priv = dq;
	dq->q = vb_queue_new(&qc);
	if (!dq->q) {
		g_free(dq);
		return NULL;
	}
	return dq;
}

void
dev_queue_free(struct dev_queue *dq)
{
	if (!dq)
		return;
	vb_queue_free(dq->q);	/* stops streaming first */
	g_free(dq);
}
