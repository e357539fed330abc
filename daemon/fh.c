/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * File handles: open and release, priorities, events, and the requests
 * that wait (a blocking DQBUF or read() is parked and answered from the
 * loop when a frame, an error or an interrupt arrives), read(), write()
 * (a loopback's writer node) and poll().
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <time.h>
#include <glib.h>

#include "v4l2cuse/loopback-abi.h"
#include "v4l2cuse/source.h"
#include "util/clock.h"
#include "util/macros.h"
#include "videobuf.h"
#include "device-private.h"
#include "loopback.h"
#include "offer.h"
#include "shim.h"

/* ---------------------------------------------------------------------- */
/* Wake-ups: parked requests and pollers */

static void
dev_unpark(struct dev_parked *p)
{
	p->req = NULL;
	p->registering = false;
	p->interrupted = false;
}

/* Answer the parked request of @p with EINTR: its caller was interrupted. */
static void
dev_parked_interrupted(struct dev_parked *p, struct v4l2cuse_req *req)
{
	p->fh->dev->interrupted++;
	dev_unpark(p);
	v4l2cuse_req_reply_err(req, -EINTR);
}

static void
dev_interrupt_cb(struct v4l2cuse_req *req, void *data)
{
	struct dev_parked *p = data;

	p->fh->dev->requests++;		/* the transport's interrupt request */
	if (p->req != req)
		return;
	if (p->registering) {
		p->interrupted = true;	/* answered once registration returns */
		return;
	}
	dev_parked_interrupted(p, req);
}

/* Park @req in @p (which must be empty) and listen for interrupts. */
static void
dev_park(struct dev_parked *p, struct v4l2cuse_fh *fh, struct v4l2cuse_req *req)
{
	struct v4l2cuse_req *parked = v4l2cuse_req_park(req);

	p->req = parked;
	p->fh = fh;
	p->registering = true;
	parked->ops->on_interrupt(parked, dev_interrupt_cb, p);
	p->registering = false;
	if (p->interrupted)
		dev_parked_interrupted(p, parked);
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

static uint64_t
dev_buffer_memory(struct v4l2cuse_device *dev)
{
	struct vb_budget_stats st;

	vb_budget_get_stats(dev->budget, &st);
	return st.used;
}

static void
dev_request_replying(void *data)
{
	dev_fp_publish(data);
}

void
dev_request_begin(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req)
{
	fh->dev->requests++;
	fh->dev->request_memory = dev_buffer_memory(fh->dev);
	dev_fp_take(fh);	/* the app's earlier QBUFs and DQBUFs come first */
	/*
	 * What the request did is in the fast path's state before the app
	 * has the reply: a DQBUF through CUSE must take its buffer out of
	 * the ring, STREAMON must say ACTIVE, before the app's next DQBUF
	 * or poll() reads them without asking (issue 28, item 1).
	 */
	if (fh->fp) {
		req->before_reply = dev_request_replying;
		req->before_reply_data = fh;
	}
}

void
dev_request_end(struct v4l2cuse_fh *fh)
{
	dev_fp_publish(fh);
	if (dev_buffer_memory(fh->dev) != fh->dev->request_memory)
		dev_changed(fh->dev);	/* buffers allocated or freed */
}

/* Something changed for @fh: answer what can be answered, wake pollers. */
void
dev_wake_fh(struct v4l2cuse_fh *fh)
{
	if (fh->dqbuf.req) {
		struct v4l2cuse_req *req = fh->dqbuf.req;
		struct v4l2_buffer buf = fh->dqbuf.buf;
		int r = vb_queue_dqbuf(fh->dq->q, fh, &buf);

		if (r == 0)
			dev_fp_void(fh);
		if (r != -EAGAIN) {
			dev_unpark(&fh->dqbuf);
			v4l2cuse_req_reply_ioctl(req, r, &buf, r < 0 ? 0 : sizeof(buf));
		}
	}
	if (fh->read.req)
		dev_read_retry(fh);
	dev_fp_publish(fh);
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

bool
dev_subscribed(struct v4l2cuse_fh *fh, uint32_t type, uint32_t id, uint32_t *ret_flags)
{
	for (unsigned int i = 0; i < fh->subs->len; i++) {
		struct v4l2_event_subscription *s =
			&g_array_index(fh->subs, struct v4l2_event_subscription, i);

		if (s->type == type && s->id == id) {
			if (ret_flags)
				*ret_flags = s->flags;
			return true;
		}
	}
	return false;
}

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
	dev_fp_publish(fh);
	dev_notify_poll(fh);
}

void
dev_client_usage_event(struct v4l2cuse_fh *fh, uint32_t type)
{
	struct v4l2cuse_event_client_usage u = {
		.count = v4l2cuse_loopback_readers(v4l2cuse_offer_inner(fh->dev->src)),
	};
	struct v4l2_event ev = { .type = type };

	/*
	 * v4l2loopback subscribes it with a one-element queue whose newer
	 * event replaces the pending one: a writer that was away reads the
	 * count of now, not a backlog of counts.
	 */
	for (GList *l = fh->events.head, *next; l; l = next) {
		struct v4l2_event *e = l->data;

		next = l->next;
		if (e->type == type) {
			g_free(e);
			g_queue_delete_link(&fh->events, l);
		}
	}
	memcpy(ev.u.data, &u, sizeof(u));
	dev_queue_event(fh, &ev);
}

void
dev_client_usage_changed(void *data)
{
	static const uint32_t types[] = {
		V4L2CUSE_EVENT_CLIENT_USAGE, V4L2CUSE_EVENT_CLIENT_USAGE_OLD,
	};
	struct v4l2cuse_device *dev = data;

	for (GList *l = dev->fhs.head; l; l = l->next) {
		for (size_t i = 0; i < G_N_ELEMENTS(types); i++) {
			if (dev_subscribed(l->data, types[i], 0, NULL))
				dev_client_usage_event(l->data, types[i]);
		}
	}
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

	dev->requests++;
	if (dev->n_fhs >= V4L2CUSE_MAX_OPENS) {
		*ret_err = -EMFILE;
		return NULL;
	}
	fh = g_new0(struct v4l2cuse_fh, 1);
	fh->dev = dev;
	fh->dq = dev->shared ? dev_queue_new(dev, fh) : dev->main;
	if (!fh->dq) {
		g_free(fh);
		*ret_err = -ENOMEM;
		return NULL;
	}
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
	dev_changed(dev);
	return fh;
}

void
v4l2cuse_fh_release(struct v4l2cuse_fh *fh)
{
	struct v4l2cuse_device *dev = fh->dev;

	dev->requests++;
	/* A parked request holds its own file reference: none can be left. */
	if (fh->dqbuf.req || fh->read.req)
		g_warning("bug: %s: release with a parked request", dev->name);
	dev_fp_take(fh);	/* what the app did before it closed counts */
	g_queue_unlink(&dev->fhs, &fh->link);
	dev->n_fhs--;
	if (fh->prio > V4L2_PRIORITY_UNSET && fh->prio <= V4L2_PRIORITY_RECORD)
		dev->prio_count[fh->prio]--;
	if (dev->writer == fh)
		dev_writer_leave(dev);
	dev_fp_free(fh);
	if (dev->shim)
		v4l2cuse_shim_fh_release(dev->shim, fh);	/* revoke its tokens */
	if (fh->dq == dev->main)
		vb_queue_release(fh->dq->q, fh);
	else
		dev_queue_free(fh->dq);
	if (fh->ph && dev->poll_ops)
		dev->poll_ops->destroy(fh->ph);
	g_array_unref(fh->subs);
	g_queue_clear_full(&fh->events, g_free);
	g_free(fh);
	dev_changed(dev);
}

void
v4l2cuse_fh_set_streaming(struct v4l2cuse_fh *fh, bool on)
{
	fh->streaming_capable = on;
}

struct v4l2cuse_device *
v4l2cuse_fh_device(struct v4l2cuse_fh *fh)
{
	return fh->dev;
}

uid_t
v4l2cuse_fh_uid(const struct v4l2cuse_fh *fh)
{
	return fh->uid;
}

pid_t
v4l2cuse_fh_pid(const struct v4l2cuse_fh *fh)
{
	return fh->pid;
}

struct vb_queue *
v4l2cuse_fh_queue(struct v4l2cuse_fh *fh)
{
	return fh->dq->q;
}

/* ---------------------------------------------------------------------- */
/* DQBUF (blocking DQBUF parks) */

void
dev_dqbuf(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req, const struct v4l2_buffer *arg)
{
	struct v4l2_buffer buf = *arg;
	int r;

	if (fh->dqbuf.req) {
		/* One blocked DQBUF per handle (docs/cuse.md). */
		v4l2cuse_req_reply_err(req, -EBUSY);
		return;
	}
	r = vb_queue_dqbuf(fh->dq->q, fh, &buf);
	if (r == 0)
		dev_fp_void(fh);	/* it may have been published already */
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
	ssize_t n = vb_queue_read(fh->dq->q, fh, fh->read.size, true, &data);

	if (n == -EAGAIN)
		return;
	dev_unpark(&fh->read);
	if (n < 0)
		v4l2cuse_req_reply_err(req, (int)n);
	else
		v4l2cuse_req_reply_data(req, data, n);
}

static void
dev_read(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req, size_t size, off_t off,
	 int file_flags)
{
	const void *data = NULL;
	ssize_t n;

	if (fh->dev->output) {
		v4l2cuse_req_reply_err(req, -EINVAL);	/* a writer node has no read */
		return;
	}
	if (fh->read.req) {
		/* The kernel serializes one file's reads; another fd may collide. */
		v4l2cuse_req_reply_err(req, -EBUSY);
		return;
	}
	n = vb_queue_read(fh->dq->q, fh, size, off == 0, &data);
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

void
v4l2cuse_fh_read(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req, size_t size,
		 off_t off, int file_flags)
{
	dev_request_begin(fh, req);
	dev_read(fh, req, size, off, file_flags);
	dev_request_end(fh);
}

/* ---------------------------------------------------------------------- */
/* write() (a loopback's writer node) */

void
dev_writer_leave(struct v4l2cuse_device *dev)
{
	if (dev->wlen)
		v4l2cuse_loopback_refused(dev->src);	/* a frame it never finished */
	dev->writer = NULL;
	dev->wlen = 0;
	dev->src->ops->stop(dev->src);
	v4l2cuse_loopback_set_writer(dev->src, 0);
}

int
dev_writer_join(struct v4l2cuse_fh *fh)
{
	struct v4l2cuse_device *dev = fh->dev;
	int r;

	if (dev->writer == fh)
		return 0;
	if (dev->writer)
		return -EBUSY;		/* one writer at a time */
	r = dev->src->ops->start(dev->src, &dev->fmt, &dev->interval);
	if (r < 0)
		return r;
	dev->writer = fh;
	v4l2cuse_loopback_set_writer(dev->src, fh->pid);
	return 0;
}

/* A whole frame arrived: hand it to the loopback. */
static void
dev_writer_commit(struct v4l2cuse_device *dev, size_t bytes)
{
	struct v4l2cuse_frame frame = {
		.data = dev->wbuf,
		.length = dev->walloc,
		.fmt = &dev->fmt,
		.timestamp_ns = v4l2cuse_now_ns(),
		.bytesused = (uint32_t)bytes,
	};

	if (v4l2cuse_source_consume(dev->src, &frame) < 0)
		v4l2cuse_loopback_refused(dev->src);
	dev->wlen = 0;
}

/*
 * The writer's previous write() call ended (a new call, or a frame queued
 * by the shim's write() emulation, comes): short of a raw frame, it was
 * never shown; a JPEG without its end marker is whole now.
 */
void
dev_writer_end_call(struct v4l2cuse_device *dev)
{
	if (!dev->wlen)
		return;
	if (dev->fmt.bytesperline)
		v4l2cuse_loopback_refused(dev->src);
	else
		dev_writer_commit(dev, dev->wlen);
	dev->wlen = 0;
}

/*
 * One frame per write() call, as v4l2loopback's writers expect. A call
 * reaches us as requests of up to 128 KiB (less when the writer's buffer
 * is not page-aligned), the first at offset 0 (docs/cuse.md), so where a
 * call ends is not known from one request: a raw frame is whole at
 * sizeimage bytes, and a compressed one at its JPEG end marker (else when
 * the next call starts). A call that ends short of a frame is taken, as
 * V4L2 drivers take short writes, but never shown; bytes past a raw frame
 * are not taken (a short count).
 */
static int
dev_write_chunk(struct v4l2cuse_fh *fh, const uint8_t *buf, size_t size, off_t off,
		size_t *ret_taken)
{
	struct v4l2cuse_device *dev = fh->dev;
	size_t sizeimage = dev->fmt.sizeimage;
	bool raw = dev->fmt.bytesperline != 0;
	int r;

	if (!dev->output)
		return -EINVAL;		/* a capture node has no write (v4l2 core) */
	if (vb_queue_is_busy(fh->dq->q))
		return -EBUSY;
	r = dev_writer_join(fh);
	if (r < 0)
		return r;
	fh->writes = true;	/* the writer until it closes */
	if (off == 0)
		dev_writer_end_call(dev);
	if (off != 0 && (size_t)off != dev->wlen)
		return -EINVAL;		/* the rest of a call we refused */
	if (!size)
		return 0;
	if (dev->walloc < sizeimage) {
		g_free(dev->wbuf);
		dev->wbuf = g_malloc(sizeimage);
		dev->walloc = sizeimage;
	}
	if (raw) {
		size_t n = MIN(size, sizeimage - dev->wlen);

		memcpy(dev->wbuf + dev->wlen, buf, n);
		dev->wlen += n;
		*ret_taken = n;
		if (dev->wlen == sizeimage)
			dev_writer_commit(dev, sizeimage);
		return 0;
	}
	/* Compressed: the call is the frame; it must fit and start like a JPEG. */
	if (dev->wlen + size > sizeimage ||
	    (off == 0 && (size < 2 || buf[0] != 0xff || buf[1] != 0xd8))) {
		dev->wlen = 0;
		v4l2cuse_loopback_refused(dev->src);
		return -EINVAL;
	}
	memcpy(dev->wbuf + dev->wlen, buf, size);
	dev->wlen += size;
	*ret_taken = size;
	if (dev->wlen >= 4 && dev->wbuf[dev->wlen - 2] == 0xff && dev->wbuf[dev->wlen - 1] == 0xd9)
		dev_writer_commit(dev, dev->wlen);	/* EOI: the JPEG is whole */
	return 0;
}

void
v4l2cuse_fh_write(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req, const void *buf,
		  size_t size, off_t off)
{
	size_t taken = 0;
	int r;

	dev_request_begin(fh, req);
	r = dev_write_chunk(fh, buf, size, off, &taken);
	if (r < 0)
		v4l2cuse_req_reply_err(req, r);
	else
		v4l2cuse_req_reply_write(req, taken);
	dev_request_end(fh);
}

/* ---------------------------------------------------------------------- */
/* poll() */

void
v4l2cuse_fh_poll(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req, unsigned int events,
		 void *ph)
{
	unsigned int revents;

	dev_request_begin(fh, req);
	if (ph) {
		if (fh->ph && fh->dev->poll_ops)
			fh->dev->poll_ops->destroy(fh->ph);
		fh->ph = ph;
	}
	/* A writer node's write() never waits; its streaming writer polls the queue. */
	if (fh->dev->output && vb_queue_owner(fh->dq->q) != fh)
		revents = events & (POLLOUT | POLLWRNORM);
	else
		revents = vb_queue_poll(fh->dq->q, fh, events);
	if (!g_queue_is_empty(&fh->events))
		revents |= POLLPRI;
	v4l2cuse_req_reply_poll(req, revents);
	dev_request_end(fh);
}

