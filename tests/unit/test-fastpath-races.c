/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The fast path's race windows, each made to happen every time: the shim
 * calls shim_fp_test_hook() at its windows and the fake transport calls
 * its reply hook the moment a reply would reach the app, and the test
 * runs the other side there (the daemon's loop, another app thread). The
 * harness is test-fastpath.c's; vb2 is the reference for every answer.
 *
 * - A reply goes out with the fast-path state already saying what it did:
 *   right after STREAMOFF a DQBUF or poll() never takes a completion it
 *   cancelled (vb2: EINVAL, POLLERR), right after STREAMON the state says
 *   it streams.
 * - A blocking DQBUF that takes a wake-up while the queue goes into the
 *   error state (only the state's flags change) ends with EIO.
 * - Completions of a newer epoch than the state the shim read are not
 *   skipped: they reach the app.
 * - While a blocking read() of the shim's emulation waits, another thread's
 *   QUERYBUF, STREAMOFF and REQBUFS(0) answer at once.
 * - close() of the fd while a blocking DQBUF waits: the DQBUF ends on the
 *   file it began on (as in the kernel, the file lives until it returns),
 *   never on whatever file the number names by then.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <glib.h>
#include <linux/videodev2.h>

#include "videobuf.h"
#include "device.h"
#include "shim.h"
#include "shim-client.h"
#include "fake-req.h"
#include "fastpath-harness.h"
#include "test-main.h"

V4L2CUSE_TEST_FIXTURE(struct fixture, fixture_setup, fixture_teardown);

#define CAPTURE V4L2_BUF_TYPE_VIDEO_CAPTURE

/* The hook of the shim's race windows: @fn once, at @point. */
static enum shim_fp_point hook_point;
static void (*hook_fn)(struct shim_fp *fp, void *data);
static void *hook_data;

static void
hook_once(struct shim_fp *fp, enum shim_fp_point point)
{
	void (*fn)(struct shim_fp *, void *) = hook_fn;

	if (point != hook_point || !fn)
		return;
	hook_fn = NULL;
	shim_fp_test_hook = NULL;
	fn(fp, hook_data);
}

static void
hook_at(enum shim_fp_point point, void (*fn)(struct shim_fp *fp, void *data), void *data)
{
	hook_point = point;
	hook_fn = fn;
	hook_data = data;
	shim_fp_test_hook = hook_once;
}

/* DQBUF as the library's ioctl() does it: the fast path, else the real ioctl of @fd. */
static int
lib_dqbuf(struct client *c, int fd, struct v4l2_buffer *b)
{
	int r = 0;

	*b = (struct v4l2_buffer){ .type = CAPTURE, .memory = V4L2_MEMORY_MMAP };
	if (shim_fp_dqbuf(c->h, fd, b, &r))
		return r;
	return shim_real.ioctl(fd, VIDIOC_DQBUF, b) < 0 ? -errno : 0;
}

static void
blocking(struct client *c)
{
	int flags = fcntl(c->fd, F_GETFL);

	g_assert_no_errno(fcntl(c->fd, F_SETFL, flags & ~O_NONBLOCK));
}

/* ---------------------------------------------------------------------- */
/* Reply, then publish */

struct at_reply {
	struct client *c;
	bool called;
	bool dq_fast, poll_fast;
	int dq_r;
	struct v4l2_buffer b;
	short revents;
};

/* On the loop, at the reply: what the app's very next DQBUF and poll() see. */
static void
at_reply_cb(void *p)
{
	struct at_reply *a = p;

	fake_set_reply_hook(NULL, NULL);
	a->called = true;
	a->b = (struct v4l2_buffer){ .type = CAPTURE, .memory = V4L2_MEMORY_MMAP };
	a->dq_fast = shim_fp_dqbuf(a->c->h, a->c->fd, &a->b, &a->dq_r);	/* O_NONBLOCK */
	a->poll_fast = shim_fp_poll(a->c->h, POLLIN, &a->revents);
}

static void
app_reply_publish(struct fixture *f)
{
	struct at_reply a = { 0 };
	struct client c;
	struct v4l2_buffer b;
	int type = CAPTURE;

	client_open(f, f->dev, &c, true);
	client_stream(&c, 4, 4);

	/*
	 * DQBUF through CUSE (the ring full, another thread, a forked child)
	 * of a completion already published: when its reply arrives, the
	 * ring no longer offers that buffer.
	 */
	g_assert_cmpint(client_poll(&c, POLLIN, 5000), ==, POLLIN);
	a.c = &c;
	b = (struct v4l2_buffer){ .type = CAPTURE, .memory = V4L2_MEMORY_MMAP };
	fake_set_reply_hook(at_reply_cb, &a);
	g_assert_cmpint(cuse_ioctl(c.fh, VIDIOC_DQBUF, &b), ==, 0);
	g_assert_true(a.called);
	if (a.dq_fast && a.dq_r == 0)
		g_assert_cmpuint(a.b.index, !=, b.index);	/* never the same buffer twice */
	client_close(&c);

	client_open(f, f->dev, &c, true);
	client_stream(&c, 4, 4);
	/*
	 * STREAMOFF: when its reply arrives, what was published is void (it
	 * wakes the queue, which publishes, inside the request).
	 */
	g_assert_cmpint(client_poll(&c, POLLIN, 5000), ==, POLLIN);
	a = (struct at_reply){ .c = &c };
	fake_set_reply_hook(at_reply_cb, &a);
	g_assert_cmpint(cuse_ioctl(c.fh, VIDIOC_STREAMOFF, &type), ==, 0);
	g_assert_true(a.called);
	g_assert_false(a.dq_fast);		/* CUSE: EINVAL */
	g_assert_false(a.poll_fast);		/* CUSE: POLLERR */
	g_assert_cmpint(cuse_ioctl(c.fh, VIDIOC_DQBUF, &a.b), ==, -EINVAL);
	g_assert_cmpint(client_poll(&c, POLLIN, 0), ==, POLLERR);

	/* STREAMON: when its reply arrives, the state says it streams. */
	for (unsigned int i = 0; i < 4; i++) {
		b = (struct v4l2_buffer){ .index = i, .type = CAPTURE,
					  .memory = V4L2_MEMORY_MMAP };
		g_assert_cmpint(cuse_ioctl(c.fh, VIDIOC_QBUF, &b), ==, 0);
	}
	a = (struct at_reply){ .c = &c };
	fake_set_reply_hook(at_reply_cb, &a);
	g_assert_cmpint(cuse_ioctl(c.fh, VIDIOC_STREAMON, &type), ==, 0);
	g_assert_true(a.called);
	g_assert_true(a.poll_fast);
	fast_dqbuf(&c, &b);
	g_assert_cmpuint(b.sequence, <=, stats(f->dev).stalls);
	client_close(&c);
}

V4L2CUSE_TEST_F("/fastpath-races/reply-publish", test_reply_publish)
{
	run_app(f, app_reply_publish);
}

/* ---------------------------------------------------------------------- */
/* The error state while a blocking DQBUF takes its wake-ups */

struct stuck {
	struct client *c;
	guint timer;
	bool fired;
};

static void
set_error_cb(gpointer p)
{
	struct client *c = p;

	vb_queue_set_error(v4l2cuse_fh_queue(c->fh));	/* vb2_queue_error() */
}

/* The wait did not end: say so, and end it (STREAMOFF wakes it with a new epoch). */
static gboolean
stuck_cb(gpointer p)
{
	struct stuck *s = p;
	int type = CAPTURE;

	s->timer = 0;
	s->fired = true;
	g_assert_cmpint(fake_ioctl(s->c->fh, VIDIOC_STREAMOFF, &type), ==, 0);
	return G_SOURCE_REMOVE;
}

static void
stuck_arm_cb(gpointer p)
{
	struct stuck *s = p;

	s->timer = g_timeout_add(2000, stuck_cb, s);
}

static void
stuck_disarm_cb(gpointer p)
{
	struct stuck *s = p;

	if (s->timer)
		g_source_remove(s->timer);
	s->timer = 0;
}

/* In settle, after the DQBUF read the state and before it takes the wake-ups. */
static void
error_in_window(struct shim_fp *fp, void *data)
{
	struct stuck *s = data;

	on_loop(set_error_cb, s->c);
	on_loop(stuck_arm_cb, s);	/* a safety net: a failure, not a hang */
}

static void
app_error_wakes(struct fixture *f)
{
	struct v4l2_event_subscription sub = { .type = V4L2_EVENT_CTRL, .id = V4L2_CID_BRIGHTNESS,
					       .flags = V4L2_EVENT_SUB_FL_SEND_INITIAL };
	struct client c;
	struct stuck s = { .c = &c };
	struct v4l2_buffer b;
	int r;

	client_open(f, f->dev, &c, true);
	/* Every buffer with the app: no frame can come. */
	client_stream(&c, 2, 1);
	fast_dqbuf(&c, &b);
	/* An event: a wake-up that brings no completion, taken before waiting again. */
	g_assert_cmpint(cuse_ioctl(c.fh, VIDIOC_SUBSCRIBE_EVENT, &sub), ==, 0);
	blocking(&c);
	hook_at(SHIM_FP_SETTLE, error_in_window, &s);
	r = lib_dqbuf(&c, c.fd, &b);
	on_loop(stuck_disarm_cb, &s);
	g_assert_false(s.fired);
	g_assert_cmpint(r, ==, -EIO);		/* vb2: DQBUF after vb2_queue_error() */
	client_close(&c);
}

V4L2CUSE_TEST_F("/fastpath-races/error-wakes", test_error_wakes)
{
	run_app(f, app_error_wakes);
}

/* ---------------------------------------------------------------------- */
/* Completions of a newer epoch than the state read */

struct restart {
	struct client *c;
	uint32_t index;
	uint64_t serial;
};

/*
 * After the DQBUF read the state: STREAMOFF, QBUF, STREAMON (a new epoch)
 * and the first frame of the new epoch published.
 */
static void
restart_in_window(struct shim_fp *fp, void *data)
{
	struct restart *rs = data;
	struct client *c = rs->c;
	uint32_t head = __atomic_load_n(&fp->sh->done_head, __ATOMIC_ACQUIRE);
	gint64 end = g_get_monotonic_time() + 5 * G_USEC_PER_SEC;
	int type = CAPTURE;

	g_assert_cmpint(cuse_ioctl(c->fh, VIDIOC_STREAMOFF, &type), ==, 0);
	for (unsigned int i = 0; i < 2; i++) {
		struct v4l2_buffer b = { .index = i, .type = CAPTURE,
					 .memory = V4L2_MEMORY_MMAP };

		g_assert_cmpint(cuse_ioctl(c->fh, VIDIOC_QBUF, &b), ==, 0);
	}
	g_assert_cmpint(cuse_ioctl(c->fh, VIDIOC_STREAMON, &type), ==, 0);
	/* Waiting for a frame (about 17 ms), not for a race. */
	while (__atomic_load_n(&fp->sh->done_head, __ATOMIC_ACQUIRE) == head) {
		g_assert_cmpint(g_get_monotonic_time(), <, end);
		g_usleep(1000);
	}
	rs->index = fp->sh->done[head % V4L2CUSE_FP_DONE_RING].index;
	rs->serial = fp->sh->done[head % V4L2CUSE_FP_DONE_RING].serial;
}

static void
app_newer_epoch(struct fixture *f)
{
	struct client c;
	struct restart rs = { .c = &c };
	struct v4l2_buffer b;
	int r;

	client_open(f, f->dev, &c, true);
	client_stream(&c, 2, 2);
	/* Both buffers with the app: the ring is empty, no frame comes. */
	fast_dqbuf(&c, &b);
	fast_dqbuf(&c, &b);
	hook_at(SHIM_FP_STATE_READ, restart_in_window, &rs);
	r = lib_dqbuf(&c, c.fd, &b);
	g_assert_null(hook_fn);
	/* The new epoch's first frame, right away or at the next DQBUF. */
	if (r == -EAGAIN) {
		g_assert_cmpint(client_poll(&c, POLLIN, 5000), ==, POLLIN);
		r = lib_dqbuf(&c, c.fd, &b);
	}
	g_assert_cmpint(r, ==, 0);
	g_assert_cmpuint(b.index, ==, rs.index);
	g_assert_cmpuint(b.sequence, <=, stats(f->dev).stalls);	/* 0 after a start */
	client_close(&c);
}

V4L2CUSE_TEST_F("/fastpath-races/newer-epoch", test_newer_epoch)
{
	run_app(f, app_newer_epoch);
}

/* ---------------------------------------------------------------------- */
/* Another thread's ioctls while a read() waits */

struct other_thread {
	struct client *c;
	GMutex lock;
	GCond cond;
	bool done;
	int querybuf, streamoff, reqbufs0;
	struct v4l2_buffer qb;
};

static gpointer
other_ioctls(gpointer p)
{
	struct other_thread *o = p;
	struct v4l2_requestbuffers rb = { .count = 0, .type = CAPTURE,
					  .memory = V4L2_MEMORY_MMAP };
	int type = CAPTURE, r = 0;

	o->qb = (struct v4l2_buffer){ .index = 0, .type = CAPTURE };
	o->querybuf = shim_fp_read_ioctl(o->c->h, o->c->fd, VIDIOC_QUERYBUF, &o->qb, &r) ? r : 1;
	o->streamoff = shim_fp_read_ioctl(o->c->h, o->c->fd, VIDIOC_STREAMOFF, &type, &r) ? r : 1;
	o->reqbufs0 = shim_fp_read_ioctl(o->c->h, o->c->fd, VIDIOC_REQBUFS, &rb, &r) ? r : 1;
	g_mutex_lock(&o->lock);
	o->done = true;
	g_cond_signal(&o->cond);
	g_mutex_unlock(&o->lock);
	return NULL;
}

struct read_window {
	struct other_thread *o;
	GThread *t;
	bool answered;		/* within 2 s, while the read waits */
};

/* The read() is about to wait for a frame: another thread's ioctls now. */
static void
ioctls_in_window(struct shim_fp *fp, void *data)
{
	struct read_window *w = data;
	gint64 end = g_get_monotonic_time() + 2 * G_USEC_PER_SEC;

	w->t = g_thread_new("other", other_ioctls, w->o);
	g_mutex_lock(&w->o->lock);
	while (!w->o->done && g_cond_wait_until(&w->o->cond, &w->o->lock, end))
		;
	w->answered = w->o->done;
	g_mutex_unlock(&w->o->lock);
}

static void
app_read_ioctls(struct fixture *f)
{
	g_autofree uint8_t *buf = g_malloc(SIZEIMAGE);
	struct other_thread o = { 0 };
	struct read_window w = { .o = &o };
	struct client c;
	ssize_t n = 0;
	unsigned int reads = 0;

	client_open(f, f->dev, &c, true);
	blocking(&c);
	o.c = &c;
	g_mutex_init(&o.lock);
	g_cond_init(&o.cond);
	/* Read until a read() has to wait for its frame (the app reads faster than 60 fps). */
	hook_at(SHIM_FP_WAIT, ioctls_in_window, &w);
	while (hook_fn) {
		g_assert_true(shim_fp_read(c.h, c.fd, buf, SIZEIMAGE, &n));
		g_assert_cmpint(n, ==, SIZEIMAGE);
		g_assert_cmpuint(++reads, <, 1000);
	}
	g_thread_join(w.t);
	g_assert_true(w.answered);
	/* As the daemon answers during its own emulation (test-fastpath-read.c). */
	g_assert_cmpint(o.querybuf, ==, 0);
	g_assert_false(o.qb.flags & V4L2_BUF_FLAG_MAPPED);
	g_assert_cmpint(o.streamoff, ==, -EBUSY);
	g_assert_cmpint(o.reqbufs0, ==, 0);
	/* The read that waited read a whole frame all the same (the emulation started again). */
	g_assert_cmpint(n, ==, SIZEIMAGE);
	g_assert_true(shim_fp_read(c.h, c.fd, buf, SIZEIMAGE, &n));
	g_assert_cmpint(n, ==, SIZEIMAGE);
	g_mutex_clear(&o.lock);
	g_cond_clear(&o.cond);
	client_close(&c);
}

V4L2CUSE_TEST_F("/fastpath-races/read-ioctls", test_read_ioctls)
{
	run_app(f, app_read_ioctls);
}

/* ---------------------------------------------------------------------- */
/* close() while a blocking DQBUF waits */

struct closing {
	struct client *c, *other;
	struct fixture *f;
	int old_fd;
};

static void
qbuf1_cb(gpointer p)
{
	struct client *c = p;
	struct v4l2_buffer b = { .index = 1, .type = CAPTURE, .memory = V4L2_MEMORY_MMAP };

	g_assert_cmpint(fake_ioctl(c->fh, VIDIOC_QBUF, &b), ==, 0);
}

/*
 * The DQBUF is about to wait: another thread closes the fd, and opens the
 * node again, which gets the same number. Then a frame comes, if the file
 * the DQBUF began on is still there (as the kernel keeps it).
 */
static void
close_in_window(struct shim_fp *fp, void *data)
{
	struct closing *cl = data;
	struct v4l2cuse_fh *fh = cl->c->fh;

	int hold;

	cl->old_fd = cl->c->fd;
	client_close_fd(cl->c);
	/* The number stays free for the node's next open (its socket comes first here). */
	hold = open("/dev/null", O_RDONLY | O_CLOEXEC);
	g_assert_cmpint(hold, >=, 0);
	if (hold != cl->old_fd) {
		g_assert_cmpint(dup2(hold, cl->old_fd), ==, cl->old_fd);
		close(hold);
	}
	client_open(cl->f, cl->f->dev, cl->other, true);
	close(cl->old_fd);
	client_renumber(cl->other, cl->old_fd);
	if (cl->c->fh) {
		g_assert_true(cl->c->fh == fh);
		on_loop(qbuf1_cb, cl->c);
	}
}

static void
app_close_waiting(struct fixture *f)
{
	struct client c, other;
	struct closing cl = { &c, &other, f, -1 };
	struct v4l2_buffer b;
	int r;

	client_open(f, f->dev, &c, true);
	client_stream(&c, 2, 1);
	fast_dqbuf(&c, &b);
	g_assert_cmpuint(b.index, ==, 0);
	blocking(&c);
	hook_at(SHIM_FP_WAIT, close_in_window, &cl);
	r = lib_dqbuf(&c, c.fd, &b);
	g_assert_null(hook_fn);
	/* The frame of the file it began on, not an answer about another file. */
	g_assert_cmpint(r, ==, 0);
	g_assert_cmpuint(b.index, ==, 1);
	g_assert_cmpuint(stats(f->dev).fast_handles, ==, 1);	/* released with the DQBUF */
	for (unsigned int i = 0; i < c.n; i++)
		munmap(c.mem[i], c.len[i]);
	shim_handle_unref(c.h);
	client_close(&other);
}

V4L2CUSE_TEST_F("/fastpath-races/close-waiting", test_close_waiting)
{
	run_app(f, app_close_waiting);
}

/* ---------------------------------------------------------------------- */
/* A QBUF the shim answered and the daemon refused */

#define OUTPUT V4L2_BUF_TYPE_VIDEO_OUTPUT

/*
 * In the window between the shim's checks and the daemon's, the entry is
 * made to say what the daemon refuses (a payload beyond the buffer: vb2's
 * EINVAL): the two sets of checks disagree, as they would if they drifted
 * apart.
 */
static void
drift_in_window(struct shim_fp *fp, void *data)
{
	struct v4l2cuse_fp_sub *e = &fp->sh->sub[fp->sub_head % V4L2CUSE_FP_SUB_RING];

	e->bytesused = *(const uint32_t *)data + 1;
}

/* DQBUF without blocking until @deadline: 0 and the buffer, or -EAGAIN. */
static int
dqbuf_until(struct client *c, struct v4l2_buffer *b, gint64 deadline)
{
	for (;;) {
		int r = -1;

		*b = (struct v4l2_buffer){ .type = c->type, .memory = V4L2_MEMORY_MMAP };
		g_assert_true(shim_fp_dqbuf(c->h, c->fd, b, &r));	/* O_NONBLOCK */
		if (r != -EAGAIN || g_get_monotonic_time() >= deadline)
			return r;
		g_usleep(5000);
	}
}

/*
 * The shim answers a QBUF of the ring at once and the daemon applies it
 * later (issue 28, item 10): when the daemon refuses it, the app has been
 * told it is queued. The buffer comes back through DQBUF with
 * V4L2_BUF_FLAG_ERROR, as a buffer the driver could not fill: never lost.
 */
static void
app_qbuf_refused(struct fixture *f)
{
	struct v4l2_format fmt = { .type = OUTPUT };
	struct v4l2_buffer b, lost, got[2];
	gint64 deadline;
	struct client w;
	uint32_t len;
	int r = -1;

	client_open(f, f->dev, &w, true);
	fmt.fmt.pix = (struct v4l2_pix_format){ .width = W, .height = H,
						.pixelformat = V4L2_PIX_FMT_YUYV };
	g_assert_cmpint(cuse_ioctl(w.fh, VIDIOC_S_FMT, &fmt), ==, 0);
	client_stream(&w, 2, 2);
	fast_dqbuf(&w, &b);
	len = (uint32_t)w.len[b.index];
	hook_at(SHIM_FP_QBUF_POST, drift_in_window, &len);
	lost = (struct v4l2_buffer){ .index = b.index, .type = OUTPUT,
				     .memory = V4L2_MEMORY_MMAP };
	g_assert_true(shim_fp_qbuf(w.h, &lost, &r));
	g_assert_cmpint(r, ==, 0);		/* what the app was told */
	g_assert_null(hook_fn);

	/* Both buffers come back: the other one consumed, the refused one as ERROR. */
	deadline = g_get_monotonic_time() + 2 * G_USEC_PER_SEC;
	for (unsigned int i = 0; i < 2; i++)
		g_assert_cmpint(dqbuf_until(&w, &got[i], deadline), ==, 0);
	g_assert_cmpuint(got[0].index, !=, got[1].index);
	for (unsigned int i = 0; i < 2; i++) {
		bool refused = got[i].index == lost.index;

		g_assert_cmpint(!!(got[i].flags & V4L2_BUF_FLAG_ERROR), ==, refused);
	}
	/* And it goes back to the queue as any dequeued buffer. */
	fast_qbuf(&w, lost.index);
	deadline = g_get_monotonic_time() + 2 * G_USEC_PER_SEC;
	g_assert_cmpint(dqbuf_until(&w, &b, deadline), ==, 0);
	g_assert_cmpuint(b.index, ==, lost.index);
	g_assert_false(b.flags & V4L2_BUF_FLAG_ERROR);
	client_close(&w);
}

V4L2CUSE_TEST_F_DATA("/fastpath-races/qbuf-refused", test_qbuf_refused, "output")
{
	run_app(f, app_qbuf_refused);
}
