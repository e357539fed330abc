/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * client/capture.c, the consumer side of v4l2cuse-pipewire and
 * v4l2cuse-usb, against the daemon's code in this process
 * (fastpath-harness.c: the device through the fake transport, its shim
 * socket server and fast path on the main loop). The capture runs on the
 * app thread under a GLib main context of its own, driven the way each
 * caller drives it:
 *
 *  - "bridge" (pw-bridge/camera.c): one level-triggered watch of
 *    client_capture_fd() for the whole stream, moved when the fd changes;
 *    each frame given back at once.
 *  - "face" (usb/face.c): a one-shot watch added after a dequeue that
 *    found nothing; each frame held for a while (its URBs being sent), so
 *    wake-ups come while nothing watches.
 *
 * Checked: every frame arrives (a lost wake-up stalls the stream: all
 * buffers done, nothing wakes the caller), no CUSE request per frame in
 * steady state with the fast path, no spinning (dispatches that found no
 * frame stay a fraction of the frames), the fallback to the node with
 * V4L2CUSE_FASTPATH=0, and the move to the node when the fast path ends
 * mid-stream.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>
#include <glib.h>
#include <glib-unix.h>
#include <linux/videodev2.h>

#include "videobuf.h"
#include "device.h"
#include "shim.h"
#include "shim-client.h"
#include "../../client/capture-private.h"
#include "fastpath-harness.h"
#include "test-main.h"

#define WARMUP_FRAMES 10
#define FRAMES 60			/* 1 s at FPS */
#define DEADLINE_S 20

enum caller { CALLER_BRIDGE, CALLER_FACE };

struct run {
	struct fixture *f;
	enum caller caller;
	struct client node;		/* the harness's open and attached node */
	struct client_capture *cap;
	GMainContext *ctx;
	guint watch;
	int watched_fd;
	unsigned int frames;		/* delivered */
	unsigned int dispatches;	/* of the watch */
	unsigned int empty;		/* dispatches that found no frame */
	unsigned int moves;		/* the watch moved to another fd */
	uint32_t last_seq;
	bool holding;			/* face: a frame is being "sent" */
	/* Called once at frame @hook_at (the fast path's end, ...). */
	void (*hook)(struct run *r);
	unsigned int hook_at;
	/* bridge: called after each frame went back (a request of the node, ...). */
	void (*each)(struct run *r);
};

/*
 * The app's poll: GLib's, but a node of the fake transport (a /dev/null
 * fd standing for it) is asked through the shim's libc table (the device's
 * poll, test_poll), every 2 ms, as the kernel would ask the daemon.
 */
static gint
app_poll(GPollFD *fds, guint n, gint timeout)
{
	gint64 end = g_get_monotonic_time() + (gint64)timeout * 1000;
	bool nodes = false;

	G_STATIC_ASSERT(sizeof(GPollFD) == sizeof(struct pollfd));
	for (guint i = 0; i < n; i++)
		nodes |= node_fh(fds[i].fd, false) != NULL;
	if (!nodes)
		return poll((struct pollfd *)fds, n, timeout);
	for (;;) {
		int ready = 0;

		for (guint i = 0; i < n; i++) {
			struct pollfd p = { .fd = fds[i].fd, .events = (short)fds[i].events };

			fds[i].revents = shim_real.poll(&p, 1, 0) > 0 ? (gushort)p.revents : 0;
			ready += fds[i].revents != 0;
		}
		if (ready || timeout == 0 || (timeout > 0 && g_get_monotonic_time() >= end))
			return ready;
		g_usleep(2000);
	}
}

static void
deliver(struct run *r)
{
	const struct client_frame *fr = client_capture_pending(r->cap);

	g_assert_nonnull(fr);
	g_assert_false(fr->error);
	g_assert_cmpuint(fr->bytesused, ==, SIZEIMAGE);
	g_assert_cmphex(((const uint8_t *)fr->data)[0], !=, 0);	/* a pattern was drawn */
	if (r->frames)
		g_assert_cmpuint(fr->sequence, >, r->last_seq);
	r->last_seq = fr->sequence;
	client_capture_delivered(r->cap);
	r->frames++;
	if (r->hook && r->frames == r->hook_at)
		r->hook(r);
}

static gboolean on_bridge_frame(gint fd, GIOCondition cond, gpointer data);
static gboolean on_face_ready(gint fd, GIOCondition cond, gpointer data);

static void
watch(struct run *r, GIOCondition cond, GUnixFDSourceFunc fn)
{
	GSource *s;

	if (r->watched_fd >= 0 && r->watched_fd != client_capture_fd(r->cap))
		r->moves++;
	r->watched_fd = client_capture_fd(r->cap);
	s = g_unix_fd_source_new(r->watched_fd, cond);
	g_source_set_callback(s, G_SOURCE_FUNC(fn), r, NULL);
	r->watch = g_source_attach(s, r->ctx);
	g_source_unref(s);
}

/* pw-bridge/camera.c's on_frame(), with PipeWire taking each frame at once. */
static gboolean
on_bridge_frame(gint fd, GIOCondition cond, gpointer data)
{
	struct run *r = data;
	int ret = client_capture_dequeue(r->cap);
	bool moved = client_capture_fd(r->cap) != fd;

	r->dispatches++;
	if (ret == -EAGAIN) {
		g_assert_true(moved || !(cond & (G_IO_ERR | G_IO_HUP | G_IO_NVAL)));
		r->empty++;
	} else {
		g_assert_cmpint(ret, ==, 0);
		deliver(r);
		g_assert_cmpint(client_capture_release(r->cap), ==, 0);
		if (r->each)
			r->each(r);
	}
	if (!moved)
		return G_SOURCE_CONTINUE;
	watch(r, G_IO_IN | G_IO_ERR | G_IO_HUP, on_bridge_frame);
	return G_SOURCE_REMOVE;
}

static void face_pump(struct run *r);

static gboolean
face_sent(gpointer data)
{
	struct run *r = data;

	r->holding = false;
	g_assert_cmpint(client_capture_release(r->cap), ==, 0);
	face_pump(r);
	return G_SOURCE_REMOVE;
}

/* usb/face.c's face_pump(): take a frame, "send" it for 5 ms, give it back, again. */
static void
face_pump(struct run *r)
{
	GSource *s;
	int ret;

	if (r->holding || r->watch)
		return;
	ret = client_capture_dequeue(r->cap);
	if (ret == -EAGAIN) {
		watch(r, G_IO_IN | G_IO_ERR, on_face_ready);
		return;
	}
	g_assert_cmpint(ret, ==, 0);
	deliver(r);
	r->holding = true;
	s = g_timeout_source_new(5);
	g_source_set_callback(s, face_sent, r, NULL);
	g_source_attach(s, r->ctx);
	g_source_unref(s);
}

static gboolean
on_face_ready(gint fd, GIOCondition cond, gpointer data)
{
	struct run *r = data;
	unsigned int before = r->frames;

	r->dispatches++;
	r->watch = 0;
	face_pump(r);
	if (r->frames == before)
		r->empty++;
	return G_SOURCE_REMOVE;
}

static void
start(struct run *r)
{
	const struct client_mode mode = {
		.fourcc = V4L2_PIX_FMT_YUYV,
		.width = W,
		.height = H,
		.stride = W * 2,
		.size = SIZEIMAGE,
		.rates = { { FPS, 1 } },
		.n_rates = 1,
	};
	g_autofree char *err = NULL;
	int ret;

	/* Open and attached by the harness; the capture takes the fd and the handle. */
	client_open(r->f, r->f->dev, &r->node, false);
	shim_fd_forget(r->node.fd);	/* not an app's fd: nothing interposes here */
	ret = client_capture_start_attached(r->node.fd, r->node.h, "video42", &mode,
					    (struct client_rate){ FPS, 1 }, 4, &r->cap, &err);
	g_assert_cmpstr(err, ==, NULL);
	g_assert_cmpint(ret, ==, 0);
	r->watched_fd = -1;
	if (r->caller == CALLER_BRIDGE)
		watch(r, G_IO_IN | G_IO_ERR | G_IO_HUP, on_bridge_frame);
	else
		face_pump(r);
}

/* Run until @n frames in all were delivered; a stall (a lost wake-up) fails. */
static void
run_until(struct run *r, unsigned int n)
{
	gint64 deadline = g_get_monotonic_time() + DEADLINE_S * G_USEC_PER_SEC;

	while (r->frames < n) {
		g_assert_cmpint(g_get_monotonic_time(), <, deadline);
		g_main_context_iteration(r->ctx, TRUE);
	}
}

static void
stop(struct run *r)
{
	uint64_t frames, dropped;

	if (r->watch)
		g_source_destroy(g_main_context_find_source_by_id(r->ctx, r->watch));
	client_capture_counts(r->cap, &frames, &dropped);
	g_assert_cmpuint(frames, ==, r->frames);
	/* Closes the node through shim_real.close(): the harness releases its handle. */
	client_capture_stop(r->cap);
	g_assert_null(node_fh(r->node.fd, false));
	/* What is left in the context (a face's timeout) goes with it. */
	g_main_context_pop_thread_default(r->ctx);
	g_main_context_unref(r->ctx);
}

static gboolean
tick(gpointer data)
{
	return G_SOURCE_CONTINUE;
}

static void
setup_ctx(struct run *r, struct fixture *f, enum caller caller)
{
	*r = (struct run){ .f = f, .caller = caller };
	r->ctx = g_main_context_new();
	g_main_context_push_thread_default(r->ctx);
	g_main_context_set_poll_func(r->ctx, app_poll);
	/* Bounds a blocked iteration, so that a stall meets the deadline. */
	{
		GSource *s = g_timeout_source_new(100);

		g_source_set_callback(s, tick, NULL, NULL);
		g_source_attach(s, r->ctx);
		g_source_unref(s);
	}
}

/* Steady state through the fast path: 0 CUSE requests per frame, every frame, no spin. */
static void
app_fast(struct fixture *f, enum caller caller)
{
	struct v4l2cuse_device_stats before, after;
	struct run r;
	unsigned int frames, dispatches, empty;

	setup_ctx(&r, f, caller);
	start(&r);
	/* The wait fd is the fast path's socket, not the node. */
	g_assert_cmpint(client_capture_fd(r.cap), !=, r.node.fd);
	g_assert_cmpint(client_capture_fd(r.cap), ==, shim_fp_wait_fd(r.node.h));
	run_until(&r, WARMUP_FRAMES);
	before = stats(f->dev);
	frames = r.frames;
	dispatches = r.dispatches;
	empty = r.empty;
	run_until(&r, WARMUP_FRAMES + FRAMES);
	after = stats(f->dev);
	frames = r.frames - frames;
	dispatches = r.dispatches - dispatches;
	empty = r.empty - empty;
	g_test_message("%s: %u frames: %" G_GUINT64_FORMAT " CUSE requests, %" G_GUINT64_FORMAT
		       " fast frames, %" G_GUINT64_FORMAT " daemon wake-ups by the client, "
		       "%u dispatches of the watch (%u without a frame)",
		       caller == CALLER_BRIDGE ? "bridge" : "face", frames,
		       after.requests - before.requests, after.fast_frames - before.fast_frames,
		       after.fast_wakeups - before.fast_wakeups, dispatches, empty);
	g_assert_cmpuint(after.requests - before.requests, ==, 0);
	g_assert_cmpuint(after.fast_frames - before.fast_frames, >=, frames - 1);
	g_assert_cmpuint(after.fast_handles, ==, 1);
	/* No busy loop: a watch that fired for nothing is taken, not repeated. */
	g_assert_cmpuint(empty, <=, frames / 2 + 2);
	g_assert_cmpuint(r.moves, ==, 0);
	stop(&r);
	g_assert_cmpuint(stats(f->dev).fast_handles, ==, 0);
}

static void
app_fast_bridge(struct fixture *f)
{
	app_fast(f, CALLER_BRIDGE);
}

static void
app_fast_face(struct fixture *f)
{
	app_fast(f, CALLER_FACE);
}

V4L2CUSE_TEST_FIXTURE(struct fixture, fixture_setup, fixture_teardown);

V4L2CUSE_TEST_F("/client-capture/fast/bridge", test_fast_bridge)
{
	run_app(f, app_fast_bridge);
}

V4L2CUSE_TEST_F("/client-capture/fast/face", test_fast_face)
{
	run_app(f, app_fast_face);
}

/* V4L2CUSE_FASTPATH=0: the node, through CUSE, as before the fast path. */
static void
app_nofast(struct fixture *f, enum caller caller)
{
	struct v4l2cuse_device_stats before, after;
	struct run r;

	g_setenv("V4L2CUSE_FASTPATH", "0", TRUE);
	setup_ctx(&r, f, caller);
	start(&r);
	g_unsetenv("V4L2CUSE_FASTPATH");
	g_assert_cmpint(client_capture_fd(r.cap), ==, r.node.fd);
	g_assert_null(shim_fp_of(r.node.h));
	run_until(&r, WARMUP_FRAMES);
	before = stats(f->dev);
	run_until(&r, WARMUP_FRAMES + 20);
	after = stats(f->dev);
	g_test_message("without the fast path: %" G_GUINT64_FORMAT " CUSE requests for 20 frames",
		       after.requests - before.requests);
	/* DQBUF, DQBUF -> EAGAIN, QBUF at least (two rounds each), and the polls. */
	g_assert_cmpuint(after.requests - before.requests, >=, 20 * 3);
	g_assert_cmpuint(after.fast_frames, ==, 0);
	g_assert_cmpuint(after.fast_handles, ==, 0);
	g_assert_cmpuint(r.moves, ==, 0);
	stop(&r);
}

static void
app_nofast_bridge(struct fixture *f)
{
	app_nofast(f, CALLER_BRIDGE);
}

static void
app_nofast_face(struct fixture *f)
{
	app_nofast(f, CALLER_FACE);
}

V4L2CUSE_TEST_F("/client-capture/nofast/bridge", test_nofast_bridge)
{
	run_app(f, app_nofast_bridge);
}

V4L2CUSE_TEST_F("/client-capture/nofast/face", test_nofast_face)
{
	run_app(f, app_nofast_face);
}

/*
 * The fast path ends mid-stream (the daemon ends a handle's fast path for
 * good when its ring is corrupt: here an unknown submission, written as a
 * broken shim would): the capture moves to the node, the caller's watch
 * follows client_capture_fd(), and frames go on through CUSE.
 */
static void
corrupt_ring(struct run *r)
{
	struct shim_fp *fp = shim_fp_of(r->node.h);

	/* Posted as the shim posts, so that its next QBUF comes after it. */
	pthread_mutex_lock(&fp->lock);
	fp->sh->sub[fp->sub_head % V4L2CUSE_FP_SUB_RING] = (struct v4l2cuse_fp_sub){ .op = 77 };
	fp->sub_head++;
	__atomic_store_n(&fp->sh->sub_head, fp->sub_head, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&fp->lock);
}

static void
app_ended(struct fixture *f, enum caller caller)
{
	struct run r;

	setup_ctx(&r, f, caller);
	r.hook = corrupt_ring;
	r.hook_at = WARMUP_FRAMES;
	start(&r);
	g_assert_cmpint(client_capture_fd(r.cap), !=, r.node.fd);
	run_until(&r, WARMUP_FRAMES + 20);
	g_assert_cmpint(client_capture_fd(r.cap), ==, r.node.fd);
	g_assert_cmpuint(r.moves, ==, 1);
	g_assert_true(shim_fp_of(r.node.h)->sh->state.flags & V4L2CUSE_FP_BROKEN);
	stop(&r);
}

static void
app_ended_bridge(struct fixture *f)
{
	app_ended(f, CALLER_BRIDGE);
}

static void
app_ended_face(struct fixture *f)
{
	app_ended(f, CALLER_FACE);
}

V4L2CUSE_TEST_F("/client-capture/ended/bridge", test_ended_bridge)
{
	run_app(f, app_ended_bridge);
}

V4L2CUSE_TEST_F("/client-capture/ended/face", test_ended_face)
{
	run_app(f, app_ended_face);
}

/*
 * Wake-ups that bring no frame: a CUSE request of the handle after each
 * fast QBUF (QUERYBUF: the daemon takes the QBUF first and publishes the
 * state it changed, which wakes the wait fd with no completion). Each is
 * taken once (shim_fp_woken()): the level-triggered watch neither spins
 * on it nor, having taken it, misses the frame that follows.
 */
static void
querybuf(struct run *r)
{
	struct v4l2_buffer b = { .index = 0, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };

	g_assert_cmpint(cuse_ioctl(r->node.fh, VIDIOC_QUERYBUF, &b), ==, 0);
}

static void
app_stale(struct fixture *f)
{
	struct run r;

	setup_ctx(&r, f, CALLER_BRIDGE);
	r.each = querybuf;
	start(&r);
	run_until(&r, FRAMES);
	g_test_message("%u frames, a stale wake-up after each: %u dispatches of the watch "
		       "(%u without a frame)", r.frames, r.dispatches, r.empty);
	g_assert_cmpuint(r.empty, >=, 1);		/* it did happen */
	g_assert_cmpuint(r.empty, <=, 2 * r.frames);	/* once each, not a spin */
	g_assert_cmpuint(r.moves, ==, 0);
	stop(&r);
}

V4L2CUSE_TEST_F("/client-capture/stale", test_stale)
{
	run_app(f, app_stale);
}
