/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The preload shim's fast path end to end, without CUSE: the daemon's side
 * (daemon/fastpath.c, the device through the fake transport, the shim
 * socket server) runs on this process's main loop, and an "app" thread
 * uses the shim's side (shim-client/fastpath.c, preload/wait.c) as the
 * library does inside an app, with CUSE requests handed to the loop thread
 * as the kernel would hand them to the daemon.
 *
 * Checked: a streamed frame costs no CUSE request; DQBUF and QBUF answer
 * exactly what CUSE answers (flags, sequence numbers, timestamps at the
 * frame interval, QUERYBUF afterwards); anything the shared state cannot
 * answer goes to CUSE; STREAMOFF voids what was published; O_NONBLOCK,
 * EINTR, a wait woken by STREAMOFF and by the handle's release; poll,
 * select and epoll; shared devices; an output (writer) queue and its
 * client-usage event (POLLPRI from the shared state when a reader starts);
 * a client that corrupts its ring loses its fast path and nothing else.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <glib.h>
#include <linux/videodev2.h>

#include "v4l2cuse/loopback-abi.h"
#include "videobuf.h"
#include "device.h"
#include "hub.h"
#include "shim.h"
#include "preload-private.h"
#include "fake-req.h"
#include "fastpath-harness.h"
#include "test-main.h"

V4L2CUSE_TEST_FIXTURE(struct fixture, fixture_setup, fixture_teardown);

/* ---------------------------------------------------------------------- */
/* Tests */

/*
 * Steady streaming: every frame through the shared-memory queue, none
 * through CUSE; what DQBUF and QBUF answer is what CUSE answers.
 */
static void
app_stream(struct fixture *f)
{
	struct client c;
	struct v4l2cuse_device_stats before, after;
	struct v4l2_buffer b, q;
	int64_t last_ts = 0;
	uint32_t last_seq = 0;
	unsigned int frames = 0;

	client_open(f, f->dev, &c, true);
	client_stream(&c, 4, 4);
	/* The first frame, and the steady state from there on. */
	fast_dqbuf(&c, &b);
	fast_qbuf(&c, b.index);
	before = stats(f->dev);
	while (frames < 40) {
		fast_dqbuf(&c, &b);
		frames++;
		/* What DQBUF of a done buffer returns (vb2's __fill_v4l2_buffer). */
		g_assert_cmpuint(b.type, ==, V4L2_BUF_TYPE_VIDEO_CAPTURE);
		g_assert_cmpuint(b.memory, ==, V4L2_MEMORY_MMAP);
		g_assert_cmpuint(b.bytesused, ==, SIZEIMAGE);
		g_assert_cmpuint(b.field, ==, V4L2_FIELD_NONE);
		g_assert_cmpuint(b.flags, ==, V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC |
					      V4L2_BUF_FLAG_TSTAMP_SRC_EOF);
		g_assert_cmphex(c.mem[b.index][0], !=, 0);	/* a pattern was drawn */
		if (last_ts) {
			/* Evenly spaced: the ticks' due times, whole intervals apart. */
			int64_t d = ts_us(&b) - last_ts;
			int64_t k = (d * 1000 + (int64_t)INTERVAL_NS / 2) / (int64_t)INTERVAL_NS;

			g_assert_cmpint(k, >=, 1);
			g_assert_cmpint(k, ==, (int64_t)(b.sequence - last_seq));
			g_assert_cmpint(ABS(d * 1000 - k * (int64_t)INTERVAL_NS), <=, 1000);
		}
		last_ts = ts_us(&b);
		last_seq = b.sequence;
		/* QUERYBUF through CUSE now: dequeued, exactly as the app sees it. */
		q = (struct v4l2_buffer){ .index = b.index, .type = b.type };
		if (frames % 8 == 0) {
			g_assert_cmpint(cuse_ioctl(c.fh, VIDIOC_QUERYBUF, &q), ==, 0);
			g_assert_cmpmem(&q, sizeof(q), &b, sizeof(b));
		}
		fast_qbuf(&c, b.index);
		if (frames % 8 == 4) {
			g_assert_cmpint(cuse_ioctl(c.fh, VIDIOC_QUERYBUF, &q), ==, 0);
			g_assert_true(q.flags & V4L2_BUF_FLAG_QUEUED);
		}
	}
	after = stats(f->dev);
	/* The QUERYBUFs (two CUSE rounds each) were the only requests. */
	g_assert_cmpuint(after.requests - before.requests, ==, 2 * (frames / 8 + (frames + 4) / 8));
	g_assert_cmpuint(after.fast_frames - before.fast_frames, >=, frames - 1);
	g_assert_cmpuint(after.fast_handles, ==, 1);
	/* Gaps only where this process stalled longer than the producer makes up for. */
	g_assert_cmpuint(after.stalls, >=, 0);

	/* STREAMOFF (CUSE): the queue's state is void, DQBUF and QBUF go to CUSE. */
	{
		int type = V4L2_BUF_TYPE_VIDEO_CAPTURE, r;

		g_assert_cmpint(cuse_ioctl(c.fh, VIDIOC_STREAMOFF, &type), ==, 0);
		b = (struct v4l2_buffer){ .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					  .memory = V4L2_MEMORY_MMAP };
		g_assert_false(shim_fp_dqbuf(c.h, c.fd, &b, &r));
		g_assert_cmpint(cuse_ioctl(c.fh, VIDIOC_DQBUF, &b), ==, -EINVAL);
		b.index = 0;
		g_assert_false(shim_fp_qbuf(c.h, &b, &r));
		/* poll: the node's own answer (POLLERR, not streaming). */
		g_assert_false(shim_fp_poll(c.h, POLLIN, &(short){ 0 }));
		g_assert_cmpint(client_poll(&c, POLLIN, 0), ==, POLLERR);
		/* Streaming again: nothing of before comes back. */
		for (unsigned int i = 0; i < 4; i++) {
			b = (struct v4l2_buffer){ .index = i, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
						  .memory = V4L2_MEMORY_MMAP };
			/* Not dequeued in this epoch: CUSE queues it. */
			g_assert_false(shim_fp_qbuf(c.h, &b, &r));
			g_assert_cmpint(cuse_ioctl(c.fh, VIDIOC_QBUF, &b), ==, 0);
		}
		g_assert_cmpint(cuse_ioctl(c.fh, VIDIOC_STREAMON, &type), ==, 0);
		fast_dqbuf(&c, &b);
		g_assert_cmpuint(b.sequence, <=, stats(f->dev).stalls);	/* 0 after a start */
	}
	client_close(&c);
	g_assert_cmpuint(stats(f->dev).fast_handles, ==, 0);
}

V4L2CUSE_TEST_F("/fastpath/stream", test_stream)
{
	run_app(f, app_stream);
}

/* Anything the shared state cannot answer for certain goes to CUSE. */
static void
app_fallbacks(struct fixture *f)
{
	struct client c;
	struct v4l2_buffer b;
	int r = 0;

	client_open(f, f->dev, &c, true);
	/* Not streaming: nothing answered here. */
	b = (struct v4l2_buffer){ .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP };
	g_assert_false(shim_fp_dqbuf(c.h, c.fd, &b, &r));
	g_assert_false(shim_fp_qbuf(c.h, &b, &r));
	client_stream(&c, 4, 3);
	/* Buffer 3 was never dequeued through the fast path. */
	b = (struct v4l2_buffer){ .index = 3, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
				  .memory = V4L2_MEMORY_MMAP };
	g_assert_false(shim_fp_qbuf(c.h, &b, &r));
	fast_dqbuf(&c, &b);
	/* The wrong type, memory or index: vb2's errno comes from CUSE. */
	{
		struct v4l2_buffer bad = b;

		bad.type = V4L2_BUF_TYPE_VIDEO_OUTPUT;
		g_assert_false(shim_fp_qbuf(c.h, &bad, &r));
		g_assert_false(shim_fp_dqbuf(c.h, c.fd, &bad, &r));
		g_assert_cmpint(cuse_ioctl(c.fh, VIDIOC_QBUF, &bad), ==, -EINVAL);
		bad = b;
		bad.memory = V4L2_MEMORY_USERPTR;
		g_assert_false(shim_fp_qbuf(c.h, &bad, &r));
		g_assert_cmpint(cuse_ioctl(c.fh, VIDIOC_QBUF, &bad), ==, -EINVAL);
		bad = b;
		bad.index = 4;
		g_assert_false(shim_fp_qbuf(c.h, &bad, &r));
		g_assert_cmpint(cuse_ioctl(c.fh, VIDIOC_QBUF, &bad), ==, -EINVAL);
	}
	/* Dequeued through the fast path: queued through it, but only once. */
	fast_qbuf(&c, b.index);
	g_assert_false(shim_fp_qbuf(c.h, &b, &r));
	g_assert_cmpint(cuse_ioctl(c.fh, VIDIOC_QBUF, &b), ==, -EINVAL);
	/* A DQBUF through CUSE in between (another process, say): nothing repeats. */
	{
		struct v4l2_buffer x = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					 .memory = V4L2_MEMORY_MMAP }, y;
		bool seen[VB_MAX_BUFFERS] = { false };

		g_assert_cmpint(client_poll(&c, POLLIN, 5000), ==, POLLIN);
		g_assert_cmpint(cuse_ioctl(c.fh, VIDIOC_DQBUF, &x), ==, 0);
		seen[x.index] = true;
		y = x;
		while (shim_fp_dqbuf(c.h, c.fd, &y, &r) && r == 0) {
			g_assert_false(seen[y.index]);
			seen[y.index] = true;
			y.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
		}
		g_assert_cmpint(r, ==, -EAGAIN);	/* the app's fd is O_NONBLOCK */
	}
	client_close(&c);
}

V4L2CUSE_TEST_F("/fastpath/fallbacks", test_fallbacks)
{
	run_app(f, app_fallbacks);
}

/* O_NONBLOCK as the file has it now, EINTR, and waits that STREAMOFF or release end. */
static gboolean
streamoff_later(gpointer p)
{
	struct client *c = p;
	int type = V4L2_BUF_TYPE_VIDEO_CAPTURE;

	g_assert_cmpint(fake_ioctl(c->fh, VIDIOC_STREAMOFF, &type), ==, 0);
	return G_SOURCE_REMOVE;
}

static void
schedule_cb(gpointer p)
{
	void **a = p;

	g_timeout_add(50, (GSourceFunc)a[0], a[1]);
}

static void
later(GSourceFunc fn, gpointer data)
{
	void *a[2] = { (void *)fn, data };

	on_loop(schedule_cb, a);
}

static void
app_waits(struct fixture *f)
{
	struct client c;
	struct v4l2_buffer b;
	int r = 0, flags;

	client_open(f, f->dev, &c, true);
	/* Every buffer with the app: no frame can come. */
	client_stream(&c, 2, 1);
	fast_dqbuf(&c, &b);
	/* The app's fd, made non-blocking after open: EAGAIN, as the kernel says. */
	flags = fcntl(c.fd, F_GETFL);
	g_assert_true(flags & O_NONBLOCK);
	g_assert_true(shim_fp_dqbuf(c.h, c.fd, &b, &r));
	g_assert_cmpint(r, ==, -EAGAIN);
	g_assert_cmpint(client_poll(&c, POLLIN, 0), ==, 0);
	/* Blocking (F_SETFL counts, as in the kernel): a signal ends the wait with EINTR. */
	g_assert_no_errno(fcntl(c.fd, F_SETFL, flags & ~O_NONBLOCK));
	app_signals_start(f, 50, false);
	g_assert_true(shim_fp_dqbuf(c.h, c.fd, &b, &r));
	app_signals_stop();
	g_assert_cmpint(r, ==, -EINTR);
	/*
	 * STREAMOFF from elsewhere ends the wait: CUSE answers it (EINVAL),
	 * asked by the shim of the file the wait began on (the fd may name
	 * another by now).
	 */
	later(streamoff_later, &c);
	b = (struct v4l2_buffer){ .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP };
	g_assert_true(shim_fp_dqbuf(c.h, c.fd, &b, &r));
	g_assert_cmpint(r, ==, -EINVAL);
	g_assert_cmpint(cuse_ioctl(c.fh, VIDIOC_DQBUF, &b), ==, -EINVAL);
	client_close(&c);
}

V4L2CUSE_TEST_F("/fastpath/waits", test_waits)
{
	run_app(f, app_waits);
}

/* The handle goes (the daemon ends it) while the app waits: CUSE takes over. */
static gboolean
release_later(gpointer p)
{
	release_cb(p);
	return G_SOURCE_REMOVE;
}

/*
 * The daemon is woken by the client only when the producer would not
 * take a submission anyway: an app that waits in a blocking DQBUF, one
 * that polls (or epolls) for POLLIN only while an event it does not ask
 * for is pending, and one that polls for events only while frames wait cost no
 * wake-up a frame (no kick answered by a byte answered by a kick...), and
 * still get what they wait for.
 */
/* A frame done while a waiter takes its wake-ups is a kick (a race, rare). */
#define FEW_WAKEUPS 5

/*
 * 20 frames, each waited for in a blocking DQBUF (@ep < 0, @use_poll false),
 * by poll() or by epoll_wait() on @ep, dequeued and queued again through
 * the fast path: all delivered, few wake-ups of the daemon. Returns the
 * CUSE requests they cost.
 */
static uint64_t
stream_20(struct fixture *f, struct client *c, bool use_poll, int ep)
{
	struct v4l2cuse_device_stats before = stats(f->dev), after;
	struct v4l2_buffer b;

	for (unsigned int i = 0; i < 20; i++) {
		if (ep >= 0)
			epoll_wait_in(ep, 0x42);
		if (use_poll)
			fast_dqbuf(c, &b);	/* poll(POLLIN | POLLOUT), DQBUF */
		else
			fast_dqbuf_now(c, &b);
		fast_qbuf(c, b.index);
	}
	after = stats(f->dev);
	g_assert_cmpuint(after.fast_frames - before.fast_frames, >=, 19);	/* the last ACK: next tick */
	g_assert_cmpuint(after.fast_wakeups - before.fast_wakeups, <=, FEW_WAKEUPS);
	return after.requests - before.requests;
}

static void
app_wakeups(struct fixture *f)
{
	struct v4l2_event_subscription sub = { .type = V4L2_EVENT_CTRL, .id = V4L2_CID_BRIGHTNESS,
					       .flags = V4L2_EVENT_SUB_FL_SEND_INITIAL };
	struct v4l2cuse_device_stats before, after;
	struct client c;
	struct v4l2_buffer b;

	client_open(f, f->dev, &c, true);
	client_stream(&c, 4, 4);
	fast_dqbuf(&c, &b);
	fast_qbuf(&c, b.index);

	/* Blocking DQBUF, no poll(): the wait is on the socket, in the shim. */
	g_assert_no_errno(fcntl(c.fd, F_SETFL, O_RDWR));
	g_assert_cmpuint(stream_20(f, &c, false, -1), ==, 0);

	/* An event pending (POLLPRI) that the app's poll() does not ask for. */
	g_assert_no_errno(fcntl(c.fd, F_SETFL, O_RDWR | O_NONBLOCK));
	g_assert_cmpint(cuse_ioctl(c.fh, VIDIOC_SUBSCRIBE_EVENT, &sub), ==, 0);
	g_assert_cmpint(client_poll(&c, POLLPRI, 5000), ==, POLLPRI);
	stream_20(f, &c, true, -1);
	/* The same through epoll: its rewrite drops the wake-ups it does not want. */
	{
		struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 0x42 };
		int ep = epoll_create1(EPOLL_CLOEXEC);

		g_assert_no_errno(ep);
		g_assert_no_errno(shim_epoll_ctl(ep, EPOLL_CTL_ADD, c.fd, &ev));
		stream_20(f, &c, false, ep);
		g_assert_no_errno(shim_epoll_ctl(ep, EPOLL_CTL_DEL, c.fd, NULL));
		close(ep);
	}
	/* Still there for whoever asks. */
	g_assert_cmpint(client_poll(&c, POLLPRI, 0), ==, POLLPRI);

	/* Frames done and not dequeued, a poll() for events only: it sleeps. */
	{
		struct v4l2_event ev;

		g_assert_cmpint(cuse_ioctl(c.fh, VIDIOC_DQEVENT, &ev), ==, 0);
	}
	before = stats(f->dev);
	g_assert_cmpint(client_poll(&c, POLLPRI, 200), ==, 0);
	after = stats(f->dev);
	g_assert_cmpuint(after.fast_wakeups - before.fast_wakeups, <=, FEW_WAKEUPS);
	g_assert_cmpint(client_poll(&c, POLLIN, 0), ==, POLLIN);
	client_close(&c);
}

V4L2CUSE_TEST_F("/fastpath/wakeups", test_wakeups)
{
	run_app(f, app_wakeups);
}

static void
app_gone(struct fixture *f)
{
	struct client c;
	struct v4l2_buffer b;
	int r = 0;

	client_open(f, f->dev, &c, true);
	client_stream(&c, 2, 1);
	fast_dqbuf(&c, &b);
	g_assert_no_errno(fcntl(c.fd, F_SETFL, O_RDWR));	/* a blocking DQBUF */
	node_fh(c.fd, true);
	later(release_later, &c);
	b = (struct v4l2_buffer){ .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP };
	/*
	 * The file the wait began on answers: here /dev/null, standing for a
	 * node without its daemon (CUSE would say ECONNABORTED).
	 */
	g_assert_true(shim_fp_dqbuf(c.h, c.fd, &b, &r));
	g_assert_cmpint(r, ==, -ENOTTY);
	/* And from now on, poll asks the node (here: no more). */
	g_assert_false(shim_fp_poll(c.h, POLLIN, &(short){ 0 }));
	g_assert_true(c.h->fp->dead);
	for (unsigned int i = 0; i < c.n; i++)
		munmap(c.mem[i], c.len[i]);
	shim_fd_forget(c.fd);
	shim_handle_unref(c.h);
	close(c.fd);
}

V4L2CUSE_TEST_F("/fastpath/gone", test_gone)
{
	run_app(f, app_gone);
}

/* select() and epoll on the app's fd, and a stale wake-up dropped. */
static void
app_select_epoll(struct fixture *f)
{
	struct client c;
	struct v4l2_buffer b;
	struct epoll_event ev = { .events = 0, .data.u64 = 0x1234 }, out[4];
	int ep = epoll_create1(EPOLL_CLOEXEC), n, r = 0;
	fd_set rs;
	struct timespec ts = { 5, 0 };

	client_open(f, f->dev, &c, true);
	client_stream(&c, 4, 4);
	/* select(): readable once a frame is there. */
	FD_ZERO(&rs);
	FD_SET(c.fd, &rs);
	g_assert_cmpint(shim_select(c.fd + 1, &rs, NULL, NULL, &ts, NULL, false), ==, 1);
	g_assert_true(FD_ISSET(c.fd, &rs));
	fast_dqbuf(&c, &b);
	fast_qbuf(&c, b.index);
	/* epoll: ADD with no events, then MOD (v4l2-compliance does this). */
	g_assert_no_errno(shim_epoll_ctl(ep, EPOLL_CTL_ADD, c.fd, &ev));
	g_assert_cmpint(shim_epoll_ctl(ep, EPOLL_CTL_ADD, c.fd, &ev), ==, -1);
	g_assert_cmpint(errno, ==, EEXIST);
	ev.events = EPOLLIN;
	g_assert_no_errno(shim_epoll_ctl(ep, EPOLL_CTL_MOD, c.fd, &ev));
	for (unsigned int frames = 0; frames < 10;) {
		epoll_wait_in(ep, 0x1234);
		while (shim_fp_dqbuf(c.h, c.fd, &b, &r) && r == 0) {
			fast_qbuf(&c, b.index);
			b.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
			frames++;
		}
	}
	/* Nothing ready (every buffer with the app): no event, not even a stale one. */
	for (unsigned int i = 0; i < c.n; i++)
		fast_dqbuf(&c, &b);
	n = epoll_wait(ep, out, 4, 100);
	g_assert_cmpint(n >= 0 ? shim_epoll_fix(ep, out, n) : n, ==, 0);
	g_assert_no_errno(shim_epoll_ctl(ep, EPOLL_CTL_DEL, c.fd, NULL));
	g_assert_cmpint(shim_epoll_ctl(ep, EPOLL_CTL_DEL, c.fd, NULL), ==, -1);
	g_assert_cmpint(errno, ==, ENOENT);
	g_assert_false(shim_epoll_maybe_ours());
	/* Registered again, then the node's fd closes: the registration goes. */
	g_assert_no_errno(shim_epoll_ctl(ep, EPOLL_CTL_ADD, c.fd, &ev));
	g_assert_true(shim_epoll_maybe_ours());
	client_close(&c);
	g_assert_false(shim_epoll_maybe_ours());
	close(ep);
}

V4L2CUSE_TEST_F("/fastpath/select-epoll", test_select_epoll)
{
	run_app(f, app_select_epoll);
}

/* A shared device: each consumer's own queue, each through its own fast path. */
static void
app_shared(struct fixture *f)
{
	struct client a, b;
	struct v4l2cuse_device_stats before, after;

	client_open(f, f->dev, &a, true);
	client_open(f, f->dev, &b, true);
	client_stream(&a, 4, 4);
	client_stream(&b, 4, 4);
	before = stats(f->dev);
	for (unsigned int i = 0; i < 20; i++) {
		struct v4l2_buffer ba, bb;

		fast_dqbuf(&a, &ba);
		fast_dqbuf(&b, &bb);
		/* Both see the same frames (b may be a frame behind or ahead). */
		g_assert_cmpint(ABS((int)ba.sequence - (int)bb.sequence), <=, 4);
		fast_qbuf(&a, ba.index);
		fast_qbuf(&b, bb.index);
	}
	after = stats(f->dev);
	g_assert_cmpuint(after.requests, ==, before.requests);
	g_assert_cmpuint(after.fast_handles, ==, 2);
	client_close(&a);
	client_close(&b);
}

V4L2CUSE_TEST_F_DATA("/fastpath/shared", test_shared, "shared")
{
	run_app(f, app_shared);
}

struct share_call {
	struct v4l2cuse_device *dev;
	bool shared;
	int r;
};

static void
share_cb(gpointer p)
{
	struct share_call *s = p;
	g_autofree char *err = NULL;

	s->r = v4l2cuse_device_set_shared(s->dev, s->shared, &err);
	if (err)
		g_printerr("%s\n", err);
}

/*
 * share= switched live under a handle with a fast path: its new queue counts
 * its done buffers from 1 again, and they reach the app all the same (the
 * old queue's serials, far ahead, must not hide them).
 */
static void
app_reshare(struct fixture *f)
{
	struct client c;
	struct v4l2_requestbuffers rb = { .count = 0, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					  .memory = V4L2_MEMORY_MMAP };
	struct share_call sc = { f->dev, true, -1 };
	int type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	struct v4l2_buffer b;

	client_open(f, f->dev, &c, true);
	client_stream(&c, 4, 4);
	for (unsigned int i = 0; i < 12; i++) {
		fast_dqbuf(&c, &b);
		fast_qbuf(&c, b.index);
	}
	g_assert_cmpint(cuse_ioctl(c.fh, VIDIOC_STREAMOFF, &type), ==, 0);
	for (unsigned int i = 0; i < c.n; i++)
		munmap(c.mem[i], c.len[i]);
	g_assert_cmpint(cuse_ioctl(c.fh, VIDIOC_REQBUFS, &rb), ==, 0);
	on_loop(share_cb, &sc);
	g_assert_cmpint(sc.r, ==, 0);
	client_stream(&c, 4, 4);
	for (unsigned int i = 0; i < 6; i++) {
		fast_dqbuf(&c, &b);
		fast_qbuf(&c, b.index);
	}
	client_close(&c);
}

V4L2CUSE_TEST_F("/fastpath/reshare", test_reshare)
{
	run_app(f, app_reshare);
}

/* Output streaming (a writer node): queued frames reach the reader. */
static void
app_output(struct fixture *f)
{
	struct client w;
	struct v4l2_format fmt = { .type = V4L2_BUF_TYPE_VIDEO_OUTPUT };
	struct v4l2cuse_device_stats before, after;

	client_open(f, f->dev, &w, true);
	fmt.fmt.pix = (struct v4l2_pix_format){ .width = W, .height = H,
						.pixelformat = V4L2_PIX_FMT_YUYV };
	g_assert_cmpint(cuse_ioctl(w.fh, VIDIOC_S_FMT, &fmt), ==, 0);
	client_stream(&w, 2, 2);
	before = stats(f->dev);
	for (unsigned int i = 0; i < 20; i++) {
		struct v4l2_buffer b;
		int r = -1;

		/* POLLOUT: a buffer can be dequeued (each is consumed at once). */
		fast_dqbuf(&w, &b);
		g_assert_cmpuint(b.bytesused, ==, SIZEIMAGE);
		memset(w.mem[b.index], (int)(16 + i), SIZEIMAGE);
		b = (struct v4l2_buffer){ .index = b.index, .type = V4L2_BUF_TYPE_VIDEO_OUTPUT,
					  .memory = V4L2_MEMORY_MMAP, .bytesused = 0 };
		g_assert_true(shim_fp_qbuf(w.h, &b, &r));
		g_assert_cmpint(r, ==, 0);
		/* bytesused 0 means the whole buffer, as in vb2. */
		g_assert_cmpuint(b.bytesused, ==, w.len[b.index]);
		g_assert_true(b.flags & V4L2_BUF_FLAG_QUEUED);
	}
	after = stats(f->dev);
	/* The kicks, not CUSE requests, carried the frames. */
	g_assert_cmpuint(after.requests, ==, before.requests);
	g_assert_cmpuint(after.fast_frames - before.fast_frames, >=, 19);
	client_close(&w);
}

V4L2CUSE_TEST_F_DATA("/fastpath/output", test_output, "output")
{
	run_app(f, app_output);
}

/* The reader's STREAMON, from the loop a moment after the writer began to wait. */
static gboolean
reader_streamon_cb(gpointer p)
{
	struct client *r = p;
	int type = V4L2_BUF_TYPE_VIDEO_CAPTURE;

	g_assert_cmpint(fake_ioctl(r->fh, VIDIOC_STREAMON, &type), ==, 0);
	return G_SOURCE_REMOVE;
}

static void
reader_streamon_later(gpointer p)
{
	g_timeout_add(20, reader_streamon_cb, p);
}

static uint32_t
usage_count(struct client *c)
{
	struct v4l2cuse_event_client_usage u;
	struct v4l2_event ev;

	g_assert_cmpint(cuse_ioctl(c->fh, VIDIOC_DQEVENT, &ev), ==, 0);
	g_assert_cmpuint(ev.type, ==, V4L2CUSE_EVENT_CLIENT_USAGE);
	memcpy(&u, ev.u.data, sizeof(u));
	return u.count;
}

/*
 * v4l2-relayd: its v4l2sink streams into the writer node through the fast
 * path and polls the same fd for POLLPRI, the client-usage event. The
 * shared state says POLLPRI, and a wait in the shim wakes when a reader
 * starts, with no CUSE request of the writer's.
 */
static void
app_output_usage(struct fixture *f)
{
	struct v4l2_event_subscription sub = { .type = V4L2CUSE_EVENT_CLIENT_USAGE,
					       .flags = V4L2_EVENT_SUB_FL_SEND_INITIAL };
	struct v4l2_requestbuffers rb = { .count = 2, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					  .memory = V4L2_MEMORY_MMAP };
	struct v4l2_format fmt = { .type = V4L2_BUF_TYPE_VIDEO_OUTPUT };
	struct v4l2cuse_device_stats before, after;
	struct client w, r;

	client_open(f, f->dev, &w, true);
	fmt.fmt.pix = (struct v4l2_pix_format){ .width = W, .height = H,
						.pixelformat = V4L2_PIX_FMT_YUYV };
	g_assert_cmpint(cuse_ioctl(w.fh, VIDIOC_S_FMT, &fmt), ==, 0);
	client_stream(&w, 2, 2);
	g_assert_cmpint(cuse_ioctl(w.fh, VIDIOC_SUBSCRIBE_EVENT, &sub), ==, 0);
	before = stats(f->dev);
	g_assert_cmpint(client_poll(&w, POLLPRI, 5000), ==, POLLPRI);
	after = stats(f->dev);
	g_assert_cmpuint(after.requests, ==, before.requests);
	g_assert_cmpuint(usage_count(&w), ==, 0);
	g_assert_cmpint(client_poll(&w, POLLPRI, 0), ==, 0);

	/* A reader with its buffers queued; its STREAMON comes while the writer waits. */
	client_open(f, f->capture, &r, false);
	g_assert_cmpint(cuse_ioctl(r.fh, VIDIOC_REQBUFS, &rb), ==, 0);
	for (uint32_t i = 0; i < rb.count; i++) {
		struct v4l2_buffer b = { .index = i, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					 .memory = V4L2_MEMORY_MMAP };

		g_assert_cmpint(cuse_ioctl(r.fh, VIDIOC_QBUF, &b), ==, 0);
	}
	g_assert_cmpint(client_poll(&w, POLLPRI, 0), ==, 0);
	before = stats(f->dev);
	on_loop(reader_streamon_later, &r);
	g_assert_cmpint(client_poll(&w, POLLPRI, 5000), ==, POLLPRI);
	after = stats(f->dev);
	g_assert_cmpuint(after.requests, ==, before.requests);
	g_assert_cmpuint(usage_count(&w), ==, 1);

	/* The reader goes: 0 again. */
	client_close(&r);
	g_assert_cmpint(client_poll(&w, POLLPRI, 5000), ==, POLLPRI);
	g_assert_cmpuint(usage_count(&w), ==, 0);
	client_close(&w);
}

V4L2CUSE_TEST_F_DATA("/fastpath/output-client-usage", test_output_usage, "output")
{
	run_app(f, app_output_usage);
}

/*
 * A client that corrupts its ring: its fast path ends (it goes on through
 * CUSE), and the other handle of the shared device streams on.
 */
static void
app_hostile(struct fixture *f)
{
	struct client evil, good;
	struct v4l2cuse_fp_shared *sh;
	struct v4l2_buffer b;
	int r = 0;

	client_open(f, f->dev, &evil, true);
	client_open(f, f->dev, &good, true);
	client_stream(&evil, 4, 4);
	client_stream(&good, 4, 4);
	fast_dqbuf(&evil, &b);
	fast_dqbuf(&good, &b);
	fast_qbuf(&good, b.index);
	/* Evil: a QBUF of an index out of range, an ACK of no frame. */
	sh = evil.h->fp->sh;
	sh->sub[sh->sub_head % V4L2CUSE_FP_SUB_RING] =
		(struct v4l2cuse_fp_sub){ .op = V4L2CUSE_FP_QBUF, .index = 999 };
	sh->sub[(sh->sub_head + 1) % V4L2CUSE_FP_SUB_RING] =
		(struct v4l2cuse_fp_sub){ .op = V4L2CUSE_FP_ACK, .serial = ~0ull };
	__atomic_store_n(&sh->sub_head, sh->sub_head + 2, __ATOMIC_RELEASE);
	/* Taken before its next CUSE request: refused like a CUSE QBUF would be. */
	b = (struct v4l2_buffer){ .index = 0, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	g_assert_cmpint(cuse_ioctl(evil.fh, VIDIOC_QUERYBUF, &b), ==, 0);
	g_assert_false(sh->state.flags & V4L2CUSE_FP_BROKEN);
	/* Now nonsense: an unknown submission, then an index far ahead. */
	sh->sub[sh->sub_head % V4L2CUSE_FP_SUB_RING] = (struct v4l2cuse_fp_sub){ .op = 77 };
	__atomic_store_n(&sh->sub_head, sh->sub_head + 1, __ATOMIC_RELEASE);
	g_assert_cmpint(cuse_ioctl(evil.fh, VIDIOC_QUERYBUF, &b), ==, 0);
	g_assert_true(sh->state.flags & V4L2CUSE_FP_BROKEN);
	g_assert_false(sh->state.flags & V4L2CUSE_FP_ACTIVE);
	__atomic_store_n(&sh->sub_head, sh->sub_head + 100000, __ATOMIC_RELEASE);
	sh->done_tail = 12345;
	/* Evil goes on through CUSE. */
	b = (struct v4l2_buffer){ .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP };
	g_assert_false(shim_fp_dqbuf(evil.h, evil.fd, &b, &r));
	g_assert_cmpint(client_poll(&evil, POLLIN, 5000), ==, POLLIN);
	g_assert_cmpint(cuse_ioctl(evil.fh, VIDIOC_DQBUF, &b), ==, 0);
	/* Good streams on through its fast path. */
	for (unsigned int i = 0; i < 5; i++) {
		fast_dqbuf(&good, &b);
		fast_qbuf(&good, b.index);
	}
	client_close(&evil);
	client_close(&good);
}

V4L2CUSE_TEST_F_DATA("/fastpath/hostile", test_hostile, "shared")
{
	run_app(f, app_hostile);
}

/*
 * The fast path is set up at the first call that streams, not at open
 * (issue 28, item 12): probes of the node (open, QUERYCAP, REQBUFS(0), a
 * poll for events) cost the daemon no memfd (charged to the buffer
 * budget), socketpair or watch; a streaming session's REQBUFS sets up one.
 */
static void
app_lazy(struct fixture *f)
{
	struct v4l2_requestbuffers rb = { .count = 0, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					  .memory = V4L2_MEMORY_MMAP };
	struct v4l2_create_buffers cb = { .count = 0, .memory = V4L2_MEMORY_MMAP,
					  .format.type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	struct v4l2cuse_device_stats st;
	struct client probe[6], c;
	struct v4l2_buffer b;

	shim_fp_auto = true;	/* as the library's init sets it */
	for (unsigned int i = 0; i < G_N_ELEMENTS(probe); i++) {
		struct v4l2_capability cap;

		client_open(f, f->dev, &probe[i], false);	/* attached, as after open() */
		g_assert_cmpint(cuse_ioctl(probe[i].fh, VIDIOC_QUERYCAP, &cap), ==, 0);
		g_assert_true(cap.device_caps & V4L2_CAP_STREAMING);
		/* What the library's ioctl(), poll() and epoll_ctl() ask first. */
		shim_fp_want_ioctl(probe[i].h, VIDIOC_REQBUFS, &rb);
		g_assert_cmpint(cuse_ioctl(probe[i].fh, VIDIOC_REQBUFS, &rb), ==, 0);
		g_assert_cmpint(cuse_ioctl(probe[i].fh, VIDIOC_G_FMT, &cb.format), ==, 0);
		shim_fp_want_ioctl(probe[i].h, VIDIOC_CREATE_BUFS, &cb);
		shim_fp_want_poll(probe[i].h, POLLPRI);
		g_assert_null(shim_fp_of(probe[i].h));
	}
	st = stats(f->dev);
	g_assert_cmpuint(st.opens, ==, G_N_ELEMENTS(probe));
	g_assert_cmpuint(st.fast_handles, ==, 0);
	g_assert_cmpuint(st.buffer_memory, ==, 0);	/* no fast-path memfd charged */
	for (unsigned int i = 0; i < G_N_ELEMENTS(probe); i++)
		client_close(&probe[i]);

	client_open(f, f->dev, &c, false);
	rb.count = 4;
	shim_fp_want_ioctl(c.h, VIDIOC_REQBUFS, &rb);
	g_assert_nonnull(shim_fp_of(c.h));
	shim_fp_want(c.h);			/* once per handle */
	client_stream(&c, 4, 4);
	for (unsigned int i = 0; i < 3; i++) {
		fast_dqbuf(&c, &b);
		fast_qbuf(&c, b.index);
	}
	st = stats(f->dev);
	g_assert_cmpuint(st.fast_handles, ==, 1);
	g_assert_cmpuint(st.fast_frames, >=, 1);
	client_close(&c);

	/* A read() client: its first poll for POLLIN sets it up (read() emulation starts). */
	client_open(f, f->dev, &c, false);
	shim_fp_want_poll(c.h, POLLIN);
	g_assert_nonnull(shim_fp_of(c.h));
	g_assert_cmpuint(stats(f->dev).fast_handles, ==, 1);
	client_close(&c);
	shim_fp_auto = false;
}

V4L2CUSE_TEST_F("/fastpath/lazy", test_lazy)
{
	run_app(f, app_lazy);
}
