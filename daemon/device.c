/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The device: global state, file handles, the videobuf queue's driver ops,
 * the frame producer, read() and poll(). The ioctl dispatcher is ioctl.c.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/timerfd.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <glib.h>
#include <glib-unix.h>

#include "v4l2cuse/format.h"
#include "v4l2cuse/source.h"
#include "util/macros.h"
#include "videobuf.h"
#include "device-private.h"
#include "shim.h"
#include "offer.h"
#include "sandbox.h"

#define DEV_READ_BUFFERS 3

/* ---------------------------------------------------------------------- */
/* Producer */

static void dev_timer_stop(struct v4l2cuse_device *dev);
static int dev_arm_producer(struct v4l2cuse_device *dev);

/*
 * The source failed this frame with @r: fill it from the placeholder
 * instead, if there is one that can produce the current format. Returns
 * the placeholder's result, or @r when there is none.
 */
static int
dev_produce_placeholder(struct v4l2cuse_device *dev, struct v4l2cuse_frame *frame, int r)
{
	struct v4l2cuse_source *ph = dev->placeholder;
	int pr;

	if (!ph || dev->placeholder_unusable)
		return r;
	if (!dev->placeholder_started) {
		struct v4l2_pix_format f = {
			.width = dev->fmt.width,
			.height = dev->fmt.height,
			.pixelformat = dev->fmt.pixelformat,
		};

		pr = v4l2cuse_source_negotiate(ph, &f);
		if (pr == 0 && (f.width != dev->fmt.width || f.height != dev->fmt.height ||
				f.pixelformat != dev->fmt.pixelformat ||
				f.sizeimage > dev->fmt.sizeimage))
			pr = -EINVAL;
		if (pr == 0)
			pr = ph->ops->start(ph, &dev->fmt, &dev->interval);
		if (pr < 0) {
			dev->placeholder_unusable = true;
			g_message("%s: the placeholder '%s' cannot produce %ux%u %.4s (%s): "
				  "sending error frames", dev->name, dev->placeholder_spec,
				  dev->fmt.width, dev->fmt.height,
				  (const char *)&dev->fmt.pixelformat, g_strerror(-pr));
			return r;
		}
		dev->placeholder_started = true;
	}
	frame->bytesused = 0;
	frame->error = false;
	pr = ph->ops->produce(ph, frame);
	if (pr < 0)
		return r;
	if (!dev->placeholder_showing)
		g_message("%s: the source failed (%s): showing the placeholder", dev->name,
			  g_strerror(-r));
	dev->placeholder_showing = true;
	return 0;
}

static void
dev_placeholder_stop(struct v4l2cuse_device *dev)
{
	if (dev->placeholder && dev->placeholder_started)
		dev->placeholder->ops->stop(dev->placeholder);
	dev->placeholder_started = false;
	dev->placeholder_showing = false;
}

/*
 * Fill the oldest buffer the queue handed us. With none free the frame is
 * dropped and leaves a sequence gap (vivid does the same); a source with a
 * wake fd still has its frame consumed, into a scratch buffer, so that its
 * fd stops being readable.
 */
static void
dev_produce_one(struct v4l2cuse_device *dev)
{
	struct vb_buffer *b = g_queue_pop_head(&dev->active);
	struct timespec ts;
	int r;

	if (!b && dev->wake_source == 0) {
		vb_queue_skip_sequence(dev->q, 1);
		dev->frames++;
		dev->dropped++;
		return;
	}
	if (!b && !dev->scratch)
		dev->scratch = g_malloc(dev->fmt.sizeimage);

	clock_gettime(CLOCK_MONOTONIC, &ts);
	struct v4l2cuse_frame frame = {
		.data = b ? vb_buffer_mem(b) : dev->scratch,
		.length = b ? vb_buffer_length(b) : dev->fmt.sizeimage,
		.fmt = &dev->fmt,
		.sequence = dev->frames,
		.timestamp_ns = (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec,
	};

	r = dev->src->ops->produce(dev->src, &frame);
	if (r < 0 && r != -EAGAIN && r != -ENODATA)
		r = dev_produce_placeholder(dev, &frame, r);
	else if (r == 0 && dev->placeholder_showing) {
		dev->placeholder_showing = false;
		g_message("%s: the source is back", dev->name);
	}
	if (dev->streaming)
		dev_arm_producer(dev);	/* the source may have changed its wake fd */
	if (r == -EAGAIN) {
		/* Not due yet: keep the buffer for the next wake-up. */
		if (b)
			g_queue_push_head(&dev->active, b);
		return;
	}
	dev->frames++;
	if (!b || r == -ENODATA) {
		/* Dropped: no buffer free, or the source dropped it on purpose. */
		if (b)
			g_queue_push_head(&dev->active, b);
		vb_queue_skip_sequence(dev->q, 1);
		dev->dropped++;
		return;
	}
	if (r < 0) {
		g_debug("%s: source failed to produce a frame: %s", dev->name, g_strerror(-r));
		frame.error = true;
		frame.bytesused = 0;
	}
	if (frame.bytesused == 0 && !frame.error)
		frame.bytesused = dev->fmt.sizeimage;
	/* Compressed frames are padded to sizeimage for read() (GStreamer rw). */
	if (dev->fmt.bytesperline == 0 && frame.bytesused < dev->fmt.sizeimage &&
	    frame.bytesused <= frame.length)
		memset((uint8_t *)frame.data + frame.bytesused, 0,
		       MIN(frame.length, dev->fmt.sizeimage) - frame.bytesused);
	/* read() hands out whole sizeimage frames: there the padding counts. */
	if (dev->fmt.bytesperline == 0 && !frame.error && vb_queue_is_reading(dev->q))
		frame.bytesused = dev->fmt.sizeimage;
	vb_buffer_set_bytesused(b, frame.error ? 0 : frame.bytesused);
	if (frame.error)
		dev->errors++;
	else
		dev->delivered++;
	vb_buffer_done(b, frame.error ? VB_BUF_ERROR : VB_BUF_DONE);
}

static gboolean
dev_timer_cb(int fd, GIOCondition cond, gpointer data)
{
	struct v4l2cuse_device *dev = data;
	uint64_t expirations;

	if (read(fd, &expirations, sizeof(expirations)) != sizeof(expirations))
		return G_SOURCE_CONTINUE;
	/*
	 * Late ticks (a loaded machine) are not turned into drops: one frame
	 * per wake-up, so the sequence only has gaps when no buffer was free.
	 */
	if (dev->streaming)
		dev_produce_one(dev);
	return G_SOURCE_CONTINUE;
}

/* A source with its own clock (a camera): produce when its fd is readable. */
static gboolean
dev_wake_cb(int fd, GIOCondition cond, gpointer data)
{
	struct v4l2cuse_device *dev = data;

	/* On ERR/HUP the source reports the loss through produce(). */
	if (dev->streaming)
		dev_produce_one(dev);
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

static int
dev_timer_start(struct v4l2cuse_device *dev)
{
	uint64_t ns = (uint64_t)dev->interval.numerator * 1000000000ull /
		      MAX(dev->interval.denominator, 1u);
	struct itimerspec its = {
		.it_interval = { .tv_sec = ns / 1000000000ull, .tv_nsec = ns % 1000000000ull },
		.it_value = { .tv_sec = ns / 1000000000ull, .tv_nsec = ns % 1000000000ull },
	};

	if (dev->timer_fd < 0) {
		dev->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (dev->timer_fd < 0)
			return -errno;
	}
	if (timerfd_settime(dev->timer_fd, 0, &its, NULL) < 0)
		return -errno;
	if (!dev->timer_source)
		dev->timer_source = g_unix_fd_add(dev->timer_fd, G_IO_IN, dev_timer_cb, dev);
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
	if (dev->streaming && !dev->wake_source)
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
	dev->wake_source = g_unix_fd_add(fd, G_IO_IN | G_IO_ERR | G_IO_HUP, dev_wake_cb, dev);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* videobuf driver ops */

static int
dev_queue_setup(struct vb_queue *q, unsigned int *num_buffers, size_t *size)
{
	struct v4l2cuse_device *dev = vb_queue_priv(q);

	if (*size && *size < dev->fmt.sizeimage)
		return -EINVAL;
	if (!*size)
		*size = dev->fmt.sizeimage;
	return 0;
}

static void
dev_buf_queue(struct vb_buffer *b)
{
	struct v4l2cuse_device *dev = vb_queue_priv(vb_buffer_queue(b));

	g_queue_push_tail(&dev->active, b);
}

static void
dev_return_all(struct v4l2cuse_device *dev, enum vb_buf_state state)
{
	struct vb_buffer *b;

	while ((b = g_queue_pop_head(&dev->active)))
		vb_buffer_done(b, state);
}

static int
dev_start_streaming(struct vb_queue *q, unsigned int count)
{
	struct v4l2cuse_device *dev = vb_queue_priv(q);
	int r;

	r = dev->src->ops->start(dev->src, &dev->fmt, &dev->interval);
	if (r < 0)
		goto err_return;
	dev->wake_fd = -1;
	dev->wake_dead_fd = -1;
	r = dev_arm_producer(dev);
	if (r < 0)
		goto err_stop_source;
	dev->frames = 0;
	dev->streaming = true;
	g_debug("%s: streaming %ux%u %.4s at %u/%u s", dev->name, dev->fmt.width,
		dev->fmt.height, (const char *)&dev->fmt.pixelformat,
		dev->interval.numerator, dev->interval.denominator);
	return 0;

err_stop_source:
	dev->src->ops->stop(dev->src);
err_return:
	g_message("%s: the source failed to start: %s", dev->name, g_strerror(-r));
	dev_return_all(dev, VB_BUF_QUEUED);
	return r;
}

static void
dev_stop_streaming(struct vb_queue *q)
{
	struct v4l2cuse_device *dev = vb_queue_priv(q);

	dev->streaming = false;
	dev_timer_stop(dev);
	if (dev->wake_source) {
		g_source_remove(dev->wake_source);
		dev->wake_source = 0;
	}
	dev->wake_fd = -1;
	g_clear_pointer(&dev->scratch, g_free);
	dev->src->ops->stop(dev->src);
	dev_placeholder_stop(dev);
	dev_return_all(dev, VB_BUF_ERROR);
}

static void
dev_queue_wake(struct vb_queue *q)
{
	dev_wake_all(vb_queue_priv(q));
}

static const struct vb_ops dev_vb_ops = {
	.queue_setup = dev_queue_setup,
	.buf_queue = dev_buf_queue,
	.start_streaming = dev_start_streaming,
	.stop_streaming = dev_stop_streaming,
	.wake = dev_queue_wake,
};

/* ---------------------------------------------------------------------- */
/* Format */

int
dev_set_format(struct v4l2cuse_device *dev, struct v4l2_pix_format *pix, bool try_only)
{
	struct v4l2_pix_format f = {
		.width = pix->width,
		.height = pix->height,
		.pixelformat = pix->pixelformat,
	};
	int r;

	r = v4l2cuse_source_negotiate(dev->src, &f);
	if (r < 0)
		return r;
	f.field = V4L2_FIELD_NONE;
	f.priv = V4L2_PIX_FMT_PRIV_MAGIC;
	f.flags = 0;
	*pix = f;
	if (!try_only) {
		dev->fmt = f;
		dev->placeholder_unusable = false;	/* it may fit the new format */
	}
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Wake-ups: parked requests and pollers */

static void
dev_unpark(struct dev_parked *p)
{
	p->req = NULL;
	p->registering = false;
	p->interrupted = false;
}

static void
dev_interrupt_cb(struct v4l2cuse_req *req, void *data)
{
	struct dev_parked *p = data;

	if (p->req != req)
		return;
	if (p->registering) {
		p->interrupted = true;	/* answered once registration returns */
		return;
	}
	dev_unpark(p);
	v4l2cuse_req_reply_err(req, -EINTR);
}

/* Park @req in @p (which must be empty) and listen for interrupts. */
void
dev_park(struct dev_parked *p, struct v4l2cuse_fh *fh, struct v4l2cuse_req *req)
{
	struct v4l2cuse_req *parked = v4l2cuse_req_park(req);

	p->req = parked;
	p->fh = fh;
	p->registering = true;
	parked->ops->on_interrupt(parked, dev_interrupt_cb, p);
	p->registering = false;
	if (p->interrupted) {
		dev_unpark(p);
		v4l2cuse_req_reply_err(parked, -EINTR);
	}
}

static void dev_read_retry(struct v4l2cuse_fh *fh);

static void
dev_notify_poll(struct v4l2cuse_fh *fh)
{
	void *ph = fh->ph;

	if (!ph)
		return;
	fh->ph = NULL;
	if (fh->dev->poll_ops)
		fh->dev->poll_ops->notify(ph);
}

/* Something changed for @fh: answer what can be answered, wake pollers. */
void
dev_wake_fh(struct v4l2cuse_fh *fh)
{
	if (fh->dqbuf.req) {
		struct v4l2cuse_req *req = fh->dqbuf.req;
		struct v4l2_buffer buf = fh->dqbuf.buf;
		int r = vb_queue_dqbuf(fh->dev->q, fh, &buf);

		if (r != -EAGAIN) {
			dev_unpark(&fh->dqbuf);
			v4l2cuse_req_reply_ioctl(req, r, &buf, r < 0 ? 0 : sizeof(buf));
		}
	}
	if (fh->read.req)
		dev_read_retry(fh);
	dev_notify_poll(fh);
}

void
dev_wake_all(struct v4l2cuse_device *dev)
{
	GList *l, *next;

	for (l = dev->fhs.head; l; l = next) {
		next = l->next;		/* a reply never frees a handle, but be safe */
		dev_wake_fh(l->data);
	}
}

void
v4l2cuse_device_cancel_all(struct v4l2cuse_device *dev, int r)
{
	for (GList *l = dev->fhs.head; l; l = l->next) {
		struct v4l2cuse_fh *fh = l->data;
		struct v4l2cuse_req *req;

		if ((req = fh->dqbuf.req)) {
			dev_unpark(&fh->dqbuf);
			v4l2cuse_req_reply_err(req, r);
		}
		if ((req = fh->read.req)) {
			dev_unpark(&fh->read);
			v4l2cuse_req_reply_err(req, r);
		}
		dev_notify_poll(fh);
	}
}

/* ---------------------------------------------------------------------- */
/* Events */

void
dev_queue_event(struct v4l2cuse_fh *fh, const struct v4l2_event *ev)
{
	struct v4l2_event *e;

	/* Bounded: the oldest event goes when a client never dequeues. */
	if (g_queue_get_length(&fh->events) >= V4L2CUSE_MAX_EVENTS)
		g_free(g_queue_pop_head(&fh->events));
	e = g_memdup2(ev, sizeof(*ev));
	e->sequence = fh->event_sequence++;
	clock_gettime(CLOCK_MONOTONIC, &e->timestamp);
	g_queue_push_tail(&fh->events, e);
	dev_notify_poll(fh);
}

/* ---------------------------------------------------------------------- */
/* Priorities (the kernel's v4l2_prio_*) */

static enum v4l2_priority
dev_prio_max(struct v4l2cuse_device *dev)
{
	for (int p = V4L2_PRIORITY_RECORD; p > V4L2_PRIORITY_UNSET; p--)
		if (dev->prio_count[p])
			return p;
	return V4L2_PRIORITY_UNSET;
}

int
dev_prio_check(struct v4l2cuse_fh *fh)
{
	return fh->prio < dev_prio_max(fh->dev) ? -EBUSY : 0;
}

/* ---------------------------------------------------------------------- */
/* File handles */

struct v4l2cuse_fh *
v4l2cuse_fh_open(struct v4l2cuse_device *dev, int open_flags, pid_t pid, uid_t uid,
		 int *ret_err)
{
	struct v4l2cuse_fh *fh;

	if (dev->n_fhs >= V4L2CUSE_MAX_OPENS) {
		*ret_err = -EMFILE;
		return NULL;
	}
	fh = g_new0(struct v4l2cuse_fh, 1);
	fh->dev = dev;
	fh->open_flags = open_flags;
	fh->pid = pid;
	fh->uid = uid;
	fh->prio = V4L2_PRIORITY_DEFAULT;
	fh->subs = g_array_new(FALSE, TRUE, sizeof(struct v4l2_event_subscription));
	g_queue_init(&fh->events);
	dev->prio_count[fh->prio]++;
	fh->link.data = fh;
	g_queue_push_tail_link(&dev->fhs, &fh->link);
	dev->n_fhs++;
	return fh;
}

void
v4l2cuse_fh_release(struct v4l2cuse_fh *fh)
{
	struct v4l2cuse_device *dev = fh->dev;

	/* A parked request holds its own file reference: none can be left. */
	if (fh->dqbuf.req || fh->read.req)
		g_warning("bug: %s: release with a parked request", dev->name);
	g_queue_unlink(&dev->fhs, &fh->link);
	dev->n_fhs--;
	if (fh->prio > V4L2_PRIORITY_UNSET && fh->prio <= V4L2_PRIORITY_RECORD)
		dev->prio_count[fh->prio]--;
	vb_queue_release(dev->q, fh);
	if (dev->shim)
		v4l2cuse_shim_fh_release(dev->shim, fh);	/* revoke its tokens */
	if (fh->ph && dev->poll_ops)
		dev->poll_ops->destroy(fh->ph);
	g_array_unref(fh->subs);
	g_queue_clear_full(&fh->events, g_free);
	g_free(fh);
}

void
v4l2cuse_fh_set_streaming(struct v4l2cuse_fh *fh, bool on)
{
	fh->streaming_capable = on;
}

/* ---------------------------------------------------------------------- */
/* DQBUF (blocking DQBUF parks) */

void
dev_dqbuf(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req, const struct v4l2_buffer *arg)
{
	struct v4l2_buffer buf = *arg;
	int r;

	if (fh->dqbuf.req) {
		/* One blocked DQBUF per handle (cuse-facts rule 8). */
		v4l2cuse_req_reply_err(req, -EBUSY);
		return;
	}
	r = vb_queue_dqbuf(fh->dev->q, fh, &buf);
	if (r == -EAGAIN && !(fh->open_flags & O_NONBLOCK)) {
		fh->dqbuf.buf = *arg;
		dev_park(&fh->dqbuf, fh, req);
		return;
	}
	v4l2cuse_req_reply_ioctl(req, r, &buf, r < 0 ? 0 : sizeof(buf));
}

/* ---------------------------------------------------------------------- */
/* read() */

static void
dev_read_retry(struct v4l2cuse_fh *fh)
{
	struct v4l2cuse_req *req = fh->read.req;
	const void *data = NULL;
	ssize_t n = vb_queue_read(fh->dev->q, fh, fh->read.size, true, &data);

	if (n == -EAGAIN)
		return;
	dev_unpark(&fh->read);
	if (n < 0)
		v4l2cuse_req_reply_err(req, (int)n);
	else
		v4l2cuse_req_reply_data(req, data, n);
}

void
v4l2cuse_fh_read(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req, size_t size,
		 off_t off, int file_flags)
{
	const void *data = NULL;
	ssize_t n;

	if (fh->read.req) {
		/* The kernel serializes one file's reads; another fd may collide. */
		v4l2cuse_req_reply_err(req, -EBUSY);
		return;
	}
	n = vb_queue_read(fh->dev->q, fh, size, off == 0, &data);
	if (n == -EAGAIN && off == 0 && !(file_flags & O_NONBLOCK)) {
		fh->read.size = size;
		dev_park(&fh->read, fh, req);
		return;
	}
	if (n == -EAGAIN && off != 0)
		n = 0;		/* end this syscall; never park mid-call */
	if (n < 0)
		v4l2cuse_req_reply_err(req, (int)n);
	else
		v4l2cuse_req_reply_data(req, data, n);
}

/* ---------------------------------------------------------------------- */
/* poll() */

void
v4l2cuse_fh_poll(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req, unsigned int events,
		 void *ph)
{
	unsigned int revents;

	if (ph) {
		if (fh->ph && fh->dev->poll_ops)
			fh->dev->poll_ops->destroy(fh->ph);
		fh->ph = ph;
	}
	revents = vb_queue_poll(fh->dev->q, fh, events);
	if (!g_queue_is_empty(&fh->events))
		revents |= POLLPRI;
	req->ops->reply_poll(req, revents);
}

/* ---------------------------------------------------------------------- */
/* Lifecycle */

static uint32_t
dev_kernel_version(void)
{
	struct utsname u;
	unsigned int a = 0, b = 0, c = 0;

	if (uname(&u) == 0)
		sscanf(u.release, "%u.%u.%u", &a, &b, &c);
	return (MIN(a, 255u) << 16) | (MIN(b, 255u) << 8) | MIN(c, 255u);
}

static unsigned int
dev_number(const char *name)
{
	const char *p = name + strlen(name);

	while (p > name && g_ascii_isdigit(p[-1]))
		p--;
	return (unsigned int)g_ascii_strtoull(p, NULL, 10);
}

struct v4l2cuse_device *
v4l2cuse_device_new(const struct v4l2cuse_device_config *cfg, char **ret_error)
{
	struct v4l2cuse_device *dev = g_new0(struct v4l2cuse_device, 1);
	struct v4l2_pix_format pix = {
		.width = cfg->width,
		.height = cfg->height,
		.pixelformat = cfg->pixelformat,
	};
	int r;

	dev->name = g_strdup(cfg->name);
	dev->label = g_strdup(cfg->label ? cfg->label : "v4l2cuse test pattern");
	dev->id = g_strdup(cfg->id ? cfg->id : cfg->name);
	dev->source_spec = g_strdup(cfg->source ? cfg->source : "pattern");
	dev->number = dev_number(cfg->name);
	dev->kernel_version = dev_kernel_version();
	dev->timer_fd = -1;
	dev->wake_fd = -1;
	dev->wake_dead_fd = -1;
	g_queue_init(&dev->fhs);
	g_queue_init(&dev->active);

	r = v4l2cuse_sandbox_check_spec(cfg->source, ret_error);
	if (r == 0)
		r = v4l2cuse_source_create(cfg->source, &dev->src, ret_error);
	if (r < 0) {
		if (!*ret_error)
			*ret_error = g_strdup_printf("source '%s': %s", cfg->source,
						     g_strerror(-r));
		goto err_free;
	}
	if (cfg->offer) {
		dev->offer = g_memdup2(cfg->offer, sizeof(*cfg->offer));
		r = v4l2cuse_offer_wrap(dev->offer, &dev->src, ret_error);
		if (r < 0)
			goto err_free;
	}
	if (cfg->placeholder && v4l2cuse_device_set_placeholder(dev, cfg->placeholder,
								ret_error) < 0)
		goto err_free;
	if (!pix.pixelformat)
		dev->src->ops->enum_format(dev->src, 0, &pix.pixelformat);
	r = dev_set_format(dev, &pix, false);
	if (r < 0) {
		*ret_error = g_strdup_printf("source '%s' offers no usable format", cfg->source);
		goto err_free;
	}
	if (cfg->width && (pix.width != cfg->width || pix.height != cfg->height)) {
		*ret_error = g_strdup_printf("source '%s' does not offer %ux%u", cfg->source,
					     cfg->width, cfg->height);
		goto err_free;
	}
	if (cfg->pixelformat && pix.pixelformat != cfg->pixelformat) {
		*ret_error = g_strdup_printf("source '%s' does not offer format %.4s",
					     cfg->source, (const char *)&cfg->pixelformat);
		goto err_free;
	}
	dev->interval = cfg->interval.denominator ? cfg->interval
						  : (struct v4l2_fract){ 1, 30 };
	r = dev_ctrls_init(dev);
	if (r < 0) {
		*ret_error = g_strdup_printf("source '%s': bad control table", cfg->source);
		goto err_free;
	}

	struct vb_queue_config qc = {
		.type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
		.io_modes = VB_IO_MMAP | VB_IO_USERPTR | VB_IO_READ,
		.min_buffers = cfg->min_buffers ? cfg->min_buffers : 2,
		.min_queued_buffers = 1,
		.read_buffers = cfg->read_buffers ? cfg->read_buffers : DEV_READ_BUFFERS,
		.allow_orphans = true,
		.ops = &dev_vb_ops,
		.priv = dev,
		.name = dev->name,
	};
	char *limit_name = g_strdup_printf("%s buffer memory limit", dev->name);

	dev->budget = vb_budget_new(limit_name, cfg->buffer_memory_limit, cfg->global_budget);
	g_free(limit_name);
	qc.budget = dev->budget;
	dev->q = vb_queue_new(&qc);
	if (!dev->q) {
		*ret_error = g_strdup("cannot create the buffer queue");
		goto err_free;
	}
	return dev;

err_free:
	v4l2cuse_device_free(dev);
	return NULL;
}

void
v4l2cuse_device_free(struct v4l2cuse_device *dev)
{
	GList *l;

	if (!dev)
		return;
	v4l2cuse_device_cancel_all(dev, -ENODEV);
	while ((l = dev->fhs.head))
		v4l2cuse_fh_release(l->data);
	vb_queue_free(dev->q);
	vb_budget_unref(dev->budget);
	dev_timer_stop(dev);
	dev_ctrls_free(dev);
	v4l2cuse_source_destroy(dev->src);
	v4l2cuse_source_destroy(dev->placeholder);
	g_free(dev->placeholder_spec);
	g_free(dev->offer);
	g_free(dev->source_spec);
	g_free(dev->id);
	g_free(dev->name);
	g_free(dev->label);
	g_free(dev);
}

void
v4l2cuse_device_set_poll_ops(struct v4l2cuse_device *dev, const struct v4l2cuse_poll_ops *ops)
{
	dev->poll_ops = ops;
}

const char *
v4l2cuse_device_name(struct v4l2cuse_device *dev)
{
	return dev->name;
}

const char *
v4l2cuse_device_label(struct v4l2cuse_device *dev)
{
	return dev->label;
}

/* ---------------------------------------------------------------------- */
/* Service: sources switched live, the placeholder, statistics */

const char *
v4l2cuse_device_id(struct v4l2cuse_device *dev)
{
	return dev->id;
}

const char *
v4l2cuse_device_source_spec(struct v4l2cuse_device *dev)
{
	return dev->source_spec;
}

const char *
v4l2cuse_device_placeholder_spec(struct v4l2cuse_device *dev)
{
	return dev->placeholder_spec;
}

void
v4l2cuse_device_get_stats(struct v4l2cuse_device *dev, struct v4l2cuse_device_stats *ret)
{
	struct vb_budget_stats mem;

	vb_budget_get_stats(dev->budget, &mem);
	*ret = (struct v4l2cuse_device_stats){
		.buffer_memory = mem.used,
		.buffer_memory_limit = mem.limit,
		.buffer_memory_refused = mem.refused,
		.opens = dev->n_fhs,
		.streaming = dev->streaming,
		.placeholder_active = dev->placeholder_showing,
		.delivered = dev->delivered,
		.dropped = dev->dropped,
		.errors = dev->errors,
		.fmt = dev->fmt,
		.interval = dev->interval,
	};
}

/* The new source's controls, with the old values where the ids match. */
static void
dev_ctrls_rebuild(struct v4l2cuse_device *dev, struct dev_ctrl *old, unsigned int n_old)
{
	dev->ctrls = NULL;
	dev->n_ctrls = 0;
	if (dev_ctrls_init(dev) < 0) {
		g_warning("bug: %s: the new source has a bad control table", dev->name);
		return;
	}
	for (unsigned int i = 0; i < dev->n_ctrls; i++) {
		struct dev_ctrl *c = &dev->ctrls[i];

		for (unsigned int j = 0; c->desc && j < n_old; j++) {
			if (old[j].id != c->id || !old[j].desc ||
			    old[j].desc->type != c->desc->type || old[j].value < c->desc->minimum ||
			    old[j].value > c->desc->maximum)
				continue;
			if (v4l2cuse_source_set_control(dev->src, c->id, old[j].value) == 0)
				c->value = old[j].value;
		}
	}
}

int
v4l2cuse_device_set_source(struct v4l2cuse_device *dev, const char *spec, char **ret_error)
{
	struct v4l2cuse_source *src = NULL, *old;
	struct v4l2_pix_format f = {
		.width = dev->fmt.width,
		.height = dev->fmt.height,
		.pixelformat = dev->fmt.pixelformat,
	};
	struct dev_ctrl *old_ctrls;
	unsigned int n_old_ctrls;
	int r;

	r = v4l2cuse_sandbox_check_spec(spec, ret_error);
	if (r == 0)
		r = v4l2cuse_source_create(spec, &src, ret_error);
	if (r < 0)
		return r;
	if (dev->offer && (r = v4l2cuse_offer_wrap(dev->offer, &src, ret_error)) < 0) {
		v4l2cuse_source_destroy(src);
		return r;
	}
	/* Consumers keep their format: the new source must produce it as it is. */
	r = v4l2cuse_source_negotiate(src, &f);
	if (r < 0 || f.width != dev->fmt.width || f.height != dev->fmt.height ||
	    f.pixelformat != dev->fmt.pixelformat || f.bytesperline != dev->fmt.bytesperline ||
	    f.sizeimage != dev->fmt.sizeimage) {
		*ret_error = g_strdup_printf("source '%s' cannot produce the current format "
					     "%ux%u %.4s", spec, dev->fmt.width, dev->fmt.height,
					     (const char *)&dev->fmt.pixelformat);
		v4l2cuse_source_destroy(src);
		return -EINVAL;
	}
	if (dev->streaming) {
		r = src->ops->start(src, &dev->fmt, &dev->interval);
		if (r < 0) {
			*ret_error = g_strdup_printf("source '%s' failed to start: %s", spec,
						     g_strerror(-r));
			v4l2cuse_source_destroy(src);
			return r;
		}
	}

	/* Nothing can fail from here on. */
	old = dev->src;
	dev->src = src;
	if (dev->streaming) {
		/* Watch the new wake fd (or the timer) before the old fd closes. */
		dev->wake_dead_fd = -1;
		dev_arm_producer(dev);
		old->ops->stop(old);
	}
	old_ctrls = dev->ctrls;
	n_old_ctrls = dev->n_ctrls;
	dev_ctrls_rebuild(dev, old_ctrls, n_old_ctrls);
	g_free(old_ctrls);
	v4l2cuse_source_destroy(old);
	g_free(dev->source_spec);
	dev->source_spec = g_strdup(spec);
	g_message("%s: switched the source to '%s'%s", dev->name, spec,
		  dev->streaming ? " while streaming" : "");
	return 0;
}

int
v4l2cuse_device_set_placeholder(struct v4l2cuse_device *dev, const char *spec,
				char **ret_error)
{
	struct v4l2cuse_source *ph = NULL;
	int r;

	if (spec) {
		r = v4l2cuse_sandbox_check_spec(spec, ret_error);
		if (r == 0)
			r = v4l2cuse_source_create(spec, &ph, ret_error);
		if (r < 0)
			return r;
	}
	dev_placeholder_stop(dev);
	v4l2cuse_source_destroy(dev->placeholder);
	g_free(dev->placeholder_spec);
	dev->placeholder = ph;
	dev->placeholder_spec = g_strdup(spec);
	dev->placeholder_unusable = false;
	return 0;
}

uint64_t
v4l2cuse_instance_nonce(void)
{
	static gsize once;
	static uint64_t nonce;

	if (g_once_init_enter(&once)) {
		uint64_t n = 0;
		ssize_t got = getrandom(&n, sizeof(n), 0);

		if (got != (ssize_t)sizeof(n) || n == 0)
			n = ((uint64_t)g_random_int() << 32 | g_random_int()) | 1;
		nonce = n;
		g_once_init_leave(&once, 1);
	}
	return nonce;
}
