/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * File handles: open and release, priorities, events, and the requests
 * that wait (a blocking DQBUF or read() is parked and answered from the
 * loop when a frame, an error or an interrupt arrives), read() and poll().
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <time.h>
#include <glib.h>

#include "util/macros.h"
#include "videobuf.h"
#include "device-private.h"
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

/* Something changed for @fh: answer what can be answered, wake pollers. */
void
dev_wake_fh(struct v4l2cuse_fh *fh)
{
	if (fh->dqbuf.req) {
		struct v4l2cuse_req *req = fh->dqbuf.req;
		struct v4l2_buffer buf = fh->dqbuf.buf;
		int r = vb_queue_dqbuf(fh->dq->q, fh, &buf);

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
	revents = vb_queue_poll(fh->dq->q, fh, events);
	if (!g_queue_is_empty(&fh->events))
		revents |= POLLPRI;
	req->ops->reply_poll(req, revents);
}

