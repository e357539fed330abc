/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * read() of a fast-path handle, emulated in the shim (shim-client/fpread.c)
 * on top of the fast path, end to end with the harness of test-fastpath.c
 * (fastpath-harness.h): the daemon's side on this process's main loop, an
 * "app" thread using the shim's side.
 *
 * Checked: whole frames, the bytes the daemon's own read() emulation
 * (CUSE) returns; no CUSE request per frame and every frame counted as a
 * fast-path frame; short reads continue the frame and never span two;
 * O_NONBLOCK (EAGAIN), a blocking read woken by a frame, EINTR; the
 * streaming ioctls answer EBUSY (and REQBUFS's checks) as the daemon does
 * during its own emulation, REQBUFS(0) stops it; another handle owning the
 * queue sends read() through CUSE (EBUSY there); poll() starts it; close
 * leaves the daemon without buffers, owner or mapping.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <glib.h>
#include <linux/videodev2.h>

#include "videobuf.h"
#include "device.h"
#include "hub.h"
#include "shim.h"
#include "preload-private.h"
#include "fake-req.h"
#include "fastpath-harness.h"
#include "test-main.h"

V4L2CUSE_TEST_FIXTURE(struct fixture, fixture_setup, fixture_teardown);

/* read() as the library's read() does it: errno and -1, or bytes. */
static ssize_t
app_read(struct client *c, void *buf, size_t count)
{
	return shim_read(c->fd, buf, count);
}

/* A whole frame, waiting for it (the fd is O_NONBLOCK: poll first). */
static ssize_t
read_frame(struct client *c, void *buf, size_t count)
{
	for (int tries = 0; tries < 100; tries++) {
		ssize_t r = app_read(c, buf, count);

		if (r >= 0 || errno != EAGAIN)
			return r;
		g_assert_cmpint(client_poll(c, POLLIN, 5000) & POLLIN, !=, 0);
	}
	g_assert_not_reached();
}

/* Memory mappings of memfds in this process (the daemon's and the shim's). */
static unsigned int
memfd_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	unsigned int n = 0;

	g_assert_nonnull(f);
	while (fgets(line, sizeof(line), f))
		n += strstr(line, "/memfd:") != NULL;
	fclose(f);
	return n;
}

static uint8_t frame_fast[SIZEIMAGE], frame_cuse[SIZEIMAGE];

static int64_t
thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---------------------------------------------------------------------- */

/*
 * Whole frames through the shim: no CUSE request per frame, each counted
 * as a fast-path frame, the bytes the daemon's own read() returns; close
 * leaves nothing behind.
 */
static void
app_frames(struct fixture *f)
{
	struct v4l2cuse_device_stats before, after;
	struct client c, plain;
	static uint8_t buf[SIZEIMAGE + 4096];
	unsigned int maps = memfd_maps();
	int64_t t0, cpu0, cpu1;

	client_open(f, f->dev, &c, true);
	g_assert_false(shim_fp_reading(c.h));
	/* The first read() starts the emulation: REQBUFS, QBUF, STREAMON through CUSE. */
	g_assert_cmpint(read_frame(&c, buf, sizeof(buf)), ==, SIZEIMAGE);
	g_assert_true(shim_fp_reading(c.h));
	g_assert_cmpuint(c.h->fp->rd.n, ==, 3);		/* read-buffers= default */
	g_assert_cmpuint(shim_map_count(), ==, 0);	/* not the app's mappings */
	before = stats(f->dev);
	t0 = g_get_monotonic_time();
	cpu0 = thread_cpu_ns();
	for (unsigned int i = 0; i < 30; i++) {
		/* A bigger buffer still gets one frame: a read never spans two. */
		g_assert_cmpint(read_frame(&c, buf, sizeof(buf)), ==, SIZEIMAGE);
		g_assert_cmphex(buf[0], !=, 0);
	}
	cpu1 = thread_cpu_ns();
	after = stats(f->dev);
	g_test_message("30 frames read in %.1f ms (60 fps source), app thread CPU %.1f us a frame "
		       "(the stats calls included)",
		       (double)(g_get_monotonic_time() - t0) / 1000.0, (double)(cpu1 - cpu0) / 30e3);
	g_assert_cmpuint(after.requests, ==, before.requests);		/* no CUSE request */
	g_assert_cmpuint(after.fast_frames - before.fast_frames, >=, 30);	/* all counted */
	g_assert_cmpuint(after.consumers, ==, 1);
	memcpy(frame_fast, buf, SIZEIMAGE);
	client_close(&c);

	/* Closed: no buffers, no owner, no mapping left on either side. */
	after = stats(f->dev);
	g_assert_cmpuint(after.consumers, ==, 0);
	g_assert_false(after.streaming);
	g_assert_cmpuint(after.buffer_memory, ==, 0);
	g_assert_cmpuint(memfd_maps(), ==, maps);

	/* The daemon's own read() emulation (no fast path): the same bytes. */
	client_open(f, f->dev, &plain, false);
	g_assert_cmpint(read_frame(&plain, buf, sizeof(buf)), ==, SIZEIMAGE);
	memcpy(frame_cuse, buf, SIZEIMAGE);
	g_assert_cmpmem(frame_fast, SIZEIMAGE, frame_cuse, SIZEIMAGE);
	client_close(&plain);
	g_assert_cmpuint(memfd_maps(), ==, maps);
}

V4L2CUSE_TEST_F_DATA("/fastpath-read/frames", test_frames, "static")
{
	run_app(f, app_frames);
}

/* Short reads continue the frame and never span two; a partial frame polls POLLIN. */
static void
app_short(struct fixture *f)
{
	struct client c;
	static uint8_t buf[SIZEIMAGE];
	size_t chunk = 1000, got = 0;
	ssize_t r;

	client_open(f, f->dev, &c, true);
	/* Two frames read 1000 bytes at a time: the last chunk of each is short. */
	for (int frame = 0; frame < 2; frame++) {
		got = 0;
		while (got < SIZEIMAGE) {
			r = read_frame(&c, buf + got, chunk);
			g_assert_cmpint(r, >, 0);
			g_assert_cmpint(r, ==, MIN(chunk, SIZEIMAGE - got));
			got += (size_t)r;
			if (got < SIZEIMAGE) {
				g_assert_true(c.h->fp->rd.partial);
				/* The rest of the frame is readable at once. */
				g_assert_cmpint(client_poll(&c, POLLIN, 0) & POLLIN, !=, 0);
			}
		}
		g_assert_cmpuint(got, ==, SIZEIMAGE);
		g_assert_false(c.h->fp->rd.partial);
		/* One frame, then the next from its start. */
		g_assert_cmphex(buf[0], !=, 0);
	}
	/* Half a frame, then a large read gets exactly the other half. */
	r = read_frame(&c, buf, SIZEIMAGE / 2);
	g_assert_cmpint(r, ==, SIZEIMAGE / 2);
	r = read_frame(&c, buf, sizeof(buf));
	g_assert_cmpint(r, ==, SIZEIMAGE - SIZEIMAGE / 2);
	client_close(&c);
}

V4L2CUSE_TEST_F("/fastpath-read/short", test_short)
{
	run_app(f, app_short);
}

/* O_NONBLOCK (the file's flags now), a blocking read woken by a frame, EINTR. */
/* Whole frames until a read() fails (at most @tries): its errno, 0 if none failed. */
static int
read_until_error(struct client *c, uint8_t *buf, size_t size, int tries)
{
	for (int i = 0; i < tries; i++) {
		ssize_t r = app_read(c, buf, size);

		if (r < 0)
			return errno;
		g_assert_cmpint(r, ==, SIZEIMAGE);
	}
	return 0;
}

static void
app_waits(struct fixture *f)
{
	struct client c;
	static uint8_t buf[SIZEIMAGE];
	int flags;
	int64_t t0;
	ssize_t r;

	client_open(f, f->dev, &c, true);
	g_assert_cmpint(read_frame(&c, buf, sizeof(buf)), ==, SIZEIMAGE);
	/* Non-blocking: take what is there until EAGAIN (frames come every 16 ms). */
	g_assert_cmpint(read_until_error(&c, buf, sizeof(buf), 100), ==, EAGAIN);
	/* Blocking (F_SETFL counts, as in the kernel): the read waits for the frame. */
	flags = fcntl(c.fd, F_GETFL);
	g_assert_no_errno(fcntl(c.fd, F_SETFL, flags & ~O_NONBLOCK));
	t0 = g_get_monotonic_time();
	r = app_read(&c, buf, sizeof(buf));
	g_assert_cmpint(r, ==, SIZEIMAGE);
	g_test_message("a blocking read() waited %.1f ms", (g_get_monotonic_time() - t0) / 1000.0);
	/* A signal handler ends a wait with EINTR (frames may win some races). */
	app_signals_start(f, 7, false);
	r = read_until_error(&c, buf, sizeof(buf), 500);
	app_signals_stop();
	g_assert_cmpint(r, ==, EINTR);
	/* And reading goes on. */
	g_assert_cmpint(app_read(&c, buf, sizeof(buf)), ==, SIZEIMAGE);
	/* A handler with SA_RESTART: the waits go on through the signals, as the kernel restarts them. */
	app_signals_start(f, 7, true);
	for (int i = 0; i < 20; i++)
		g_assert_cmpint(app_read(&c, buf, sizeof(buf)), ==, SIZEIMAGE);
	app_signals_stop();
	g_test_message("20 blocking reads, %u signals (SA_RESTART)", app_signals_seen());
	g_assert_cmpuint(app_signals_seen(), >=, 5);
	client_close(&c);
}

V4L2CUSE_TEST_F("/fastpath-read/waits", test_waits)
{
	run_app(f, app_waits);
}

/*
 * The streaming ioctls during read emulation: what the daemon answers
 * during its own (CUSE), byte for byte; REQBUFS(0) ends it.
 */
struct answers {
	int r_reqbufs, r_badmem, r_badtype, r_create, r_create0, r_qbuf, r_dqbuf, r_prep,
		r_streamon, r_streamoff, r_querybuf;
	struct v4l2_requestbuffers reqbufs, badmem, badtype;
	struct v4l2_create_buffers create, create0;
	struct v4l2_buffer querybuf;
};

typedef int (*ioctl_fn)(struct client *c, unsigned long request, void *arg);

static int
ioctl_fast(struct client *c, unsigned long request, void *arg)
{
	int r = 0;

	g_assert_true(shim_fp_read_ioctl(c->h, c->fd, request, arg, &r) ||
		      (r = cuse_ioctl(c->fh, (unsigned int)request, arg), true));
	return r;
}

static int
ioctl_cuse(struct client *c, unsigned long request, void *arg)
{
	return cuse_ioctl(c->fh, (unsigned int)request, arg);
}

static void
ask_all(struct client *c, ioctl_fn fn, struct answers *a)
{
	struct v4l2_buffer b = { .index = 0, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
				 .memory = V4L2_MEMORY_MMAP };
	int type = V4L2_BUF_TYPE_VIDEO_CAPTURE;

	memset(a, 0, sizeof(*a));
	a->reqbufs = (struct v4l2_requestbuffers){ .count = 4, .type = type,
						   .memory = V4L2_MEMORY_MMAP };
	a->r_reqbufs = fn(c, VIDIOC_REQBUFS, &a->reqbufs);
	a->badmem = (struct v4l2_requestbuffers){ .count = 4, .type = type,
						  .memory = V4L2_MEMORY_DMABUF };
	a->r_badmem = fn(c, VIDIOC_REQBUFS, &a->badmem);
	a->badtype = (struct v4l2_requestbuffers){ .count = 0, .type = V4L2_BUF_TYPE_VIDEO_OUTPUT,
						   .memory = V4L2_MEMORY_MMAP };
	a->r_badtype = fn(c, VIDIOC_REQBUFS, &a->badtype);
	a->create = (struct v4l2_create_buffers){ .count = 1, .memory = V4L2_MEMORY_MMAP };
	a->create.format.type = type;
	a->create.format.fmt.pix.sizeimage = SIZEIMAGE;
	a->r_create = fn(c, VIDIOC_CREATE_BUFS, &a->create);
	a->create0 = a->create;
	a->create0.count = 0;
	a->r_create0 = fn(c, VIDIOC_CREATE_BUFS, &a->create0);
	a->r_qbuf = fn(c, VIDIOC_QBUF, &b);
	a->r_prep = fn(c, VIDIOC_PREPARE_BUF, &b);
	a->r_dqbuf = fn(c, VIDIOC_DQBUF, &b);
	a->r_streamon = fn(c, VIDIOC_STREAMON, &type);
	a->r_streamoff = fn(c, VIDIOC_STREAMOFF, &type);
	a->querybuf = (struct v4l2_buffer){ .index = 1, .type = type,
					    .memory = V4L2_MEMORY_MMAP };
	a->r_querybuf = fn(c, VIDIOC_QUERYBUF, &a->querybuf);
}

static void
app_ioctls(struct fixture *f)
{
	struct client c, plain;
	struct answers fast, ref;
	static uint8_t buf[SIZEIMAGE];
	struct v4l2_requestbuffers rb;
	uint64_t memory;

	/* The reference: the daemon's own read() emulation. */
	client_open(f, f->dev, &plain, false);
	g_assert_cmpint(read_frame(&plain, buf, sizeof(buf)), ==, SIZEIMAGE);
	ask_all(&plain, ioctl_cuse, &ref);
	client_close(&plain);

	client_open(f, f->dev, &c, true);
	memory = stats(f->dev).buffer_memory;	/* the fast path's own memfd */
	g_assert_cmpint(read_frame(&c, buf, sizeof(buf)), ==, SIZEIMAGE);
	g_assert_cmpuint(stats(f->dev).buffer_memory, >, memory);
	ask_all(&c, ioctl_fast, &fast);
	g_assert_true(shim_fp_reading(c.h));
	g_assert_cmpint(fast.r_reqbufs, ==, -EBUSY);
	g_assert_cmpint(fast.r_qbuf, ==, -EBUSY);
	g_assert_cmpint(fast.r_streamon, ==, -EBUSY);
	g_assert_cmpint(fast.r_badmem, ==, -EINVAL);
	g_assert_cmpint(fast.r_reqbufs, ==, ref.r_reqbufs);
	g_assert_cmpint(fast.r_badmem, ==, ref.r_badmem);
	g_assert_cmpint(fast.r_badtype, ==, ref.r_badtype);
	g_assert_cmpint(fast.r_create, ==, ref.r_create);
	g_assert_cmpint(fast.r_create0, ==, ref.r_create0);
	g_assert_cmpint(fast.r_qbuf, ==, ref.r_qbuf);
	g_assert_cmpint(fast.r_prep, ==, ref.r_prep);
	g_assert_cmpint(fast.r_dqbuf, ==, ref.r_dqbuf);
	g_assert_cmpint(fast.r_streamon, ==, ref.r_streamon);
	g_assert_cmpint(fast.r_streamoff, ==, ref.r_streamoff);
	g_assert_cmpint(fast.r_querybuf, ==, ref.r_querybuf);
	g_assert_cmpmem(&fast.reqbufs, sizeof(fast.reqbufs), &ref.reqbufs, sizeof(ref.reqbufs));
	g_assert_cmpmem(&fast.badmem, sizeof(fast.badmem), &ref.badmem, sizeof(ref.badmem));
	g_assert_cmpmem(&fast.badtype, sizeof(fast.badtype), &ref.badtype, sizeof(ref.badtype));
	g_assert_cmpmem(&fast.create, sizeof(fast.create), &ref.create, sizeof(ref.create));
	g_assert_cmpmem(&fast.create0, sizeof(fast.create0), &ref.create0, sizeof(ref.create0));
	/* QUERYBUF: the same buffer but for its state (QUEUED or DONE: frames move). */
	fast.querybuf.flags &= ~(uint32_t)(V4L2_BUF_FLAG_QUEUED | V4L2_BUF_FLAG_DONE);
	ref.querybuf.flags &= ~(uint32_t)(V4L2_BUF_FLAG_QUEUED | V4L2_BUF_FLAG_DONE);
	fast.querybuf.timestamp = ref.querybuf.timestamp = (struct timeval){ 0 };
	fast.querybuf.sequence = ref.querybuf.sequence = 0;
	fast.querybuf.bytesused = ref.querybuf.bytesused = 0;
	g_assert_cmpmem(&fast.querybuf, sizeof(fast.querybuf), &ref.querybuf,
			sizeof(ref.querybuf));

	/* REQBUFS(0) by the reader ends it: streaming is free again. */
	rb = (struct v4l2_requestbuffers){ .count = 0, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					   .memory = V4L2_MEMORY_MMAP };
	g_assert_cmpint(ioctl_fast(&c, VIDIOC_REQBUFS, &rb), ==, 0);
	g_assert_false(shim_fp_reading(c.h));
	g_assert_cmpuint(stats(f->dev).buffer_memory, ==, memory);
	g_assert_cmpuint(stats(f->dev).consumers, ==, 0);
	/* And read() starts it again. */
	g_assert_cmpint(read_frame(&c, buf, sizeof(buf)), ==, SIZEIMAGE);
	g_assert_true(shim_fp_reading(c.h));
	client_close(&c);
}

V4L2CUSE_TEST_F("/fastpath-read/ioctls", test_ioctls)
{
	run_app(f, app_ioctls);
}

/* Another handle owns the queue: read() goes through CUSE, which says EBUSY. */
static void
app_owned(struct fixture *f)
{
	struct client owner, c;
	static uint8_t buf[SIZEIMAGE];
	struct v4l2_buffer b;
	uint64_t requests;

	client_open(f, f->dev, &owner, true);
	client_open(f, f->dev, &c, true);
	client_stream(&owner, 2, 2);
	fast_dqbuf(&owner, &b);
	g_assert_cmpint(app_read(&c, buf, sizeof(buf)), ==, -1);
	g_assert_cmpint(errno, ==, EBUSY);
	g_assert_false(shim_fp_reading(c.h));
	/* poll() does not start it either: the node answers (the owner's frame is done). */
	requests = stats(f->dev).requests;
	(void)client_poll(&c, POLLIN, 0);
	g_assert_cmpuint(stats(f->dev).requests, >, requests);
	g_assert_false(shim_fp_reading(c.h));
	fast_qbuf(&owner, b.index);
	client_close(&owner);
	/* The owner gone, read() goes through the shim. */
	g_assert_cmpint(read_frame(&c, buf, sizeof(buf)), ==, SIZEIMAGE);
	g_assert_true(shim_fp_reading(c.h));
	client_close(&c);

	/* Without a fast path (V4L2CUSE_FASTPATH=0): the daemon's read(). */
	client_open(f, f->dev, &c, false);
	g_assert_cmpint(read_frame(&c, buf, sizeof(buf)), ==, SIZEIMAGE);
	g_assert_null(c.h->fp);
	client_close(&c);
}

V4L2CUSE_TEST_F("/fastpath-read/owned", test_owned)
{
	run_app(f, app_owned);
}

/* poll() first (and select, epoll): it starts the emulation, then read() takes the frame. */
static void
app_poll(struct fixture *f)
{
	struct client c;
	static uint8_t buf[SIZEIMAGE];
	uint64_t requests;
	fd_set rs;
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 0x1234 };
	int ep;

	client_open(f, f->dev, &c, true);
	/* Not for POLLOUT: a capture queue starts on POLLIN only. */
	(void)client_poll(&c, POLLOUT, 0);
	g_assert_false(shim_fp_reading(c.h));
	g_assert_cmpint(client_poll(&c, POLLIN, 5000), ==, POLLIN);
	g_assert_true(shim_fp_reading(c.h));
	requests = stats(f->dev).requests;
	g_assert_cmpint(app_read(&c, buf, sizeof(buf)), ==, SIZEIMAGE);
	for (unsigned int i = 0; i < 10; i++) {
		struct timespec ts = { 5, 0 };

		FD_ZERO(&rs);
		FD_SET(c.fd, &rs);
		g_assert_cmpint(shim_select(c.fd + 1, &rs, NULL, NULL, &ts, NULL, false), ==, 1);
		g_assert_true(FD_ISSET(c.fd, &rs));
		g_assert_cmpint(app_read(&c, buf, sizeof(buf)), ==, SIZEIMAGE);
	}
	g_assert_cmpuint(stats(f->dev).requests, ==, requests);
	client_close(&c);
	g_assert_cmpuint(stats(f->dev).consumers, ==, 0);

	/* epoll: EPOLL_CTL_ADD polls the file (the kernel's ep_insert) and starts it. */
	client_open(f, f->dev, &c, true);
	ep = epoll_create1(EPOLL_CLOEXEC);
	g_assert_no_errno(shim_epoll_ctl(ep, EPOLL_CTL_ADD, c.fd, &ev));
	g_assert_true(shim_fp_reading(c.h));
	for (unsigned int frames = 0; frames < 5; frames++) {
		epoll_wait_in(ep, 0x1234);
		g_assert_cmpint(app_read(&c, buf, sizeof(buf)), ==, SIZEIMAGE);
	}
	client_close(&c);
	close(ep);
	g_assert_cmpuint(stats(f->dev).consumers, ==, 0);
}

V4L2CUSE_TEST_F("/fastpath-read/poll", test_poll)
{
	run_app(f, app_poll);
}

/* A shared device (a queue per handle): two readers at once, each through the shim. */
static void
app_shared(struct fixture *f)
{
	struct client a, b;
	static uint8_t buf[SIZEIMAGE];
	uint64_t requests;

	client_open(f, f->dev, &a, true);
	client_open(f, f->dev, &b, true);
	g_assert_cmpint(read_frame(&a, buf, sizeof(buf)), ==, SIZEIMAGE);
	g_assert_cmpint(read_frame(&b, buf, sizeof(buf)), ==, SIZEIMAGE);
	requests = stats(f->dev).requests;
	for (unsigned int i = 0; i < 10; i++) {
		g_assert_cmpint(read_frame(&a, buf, sizeof(buf)), ==, SIZEIMAGE);
		g_assert_cmpint(read_frame(&b, buf, sizeof(buf)), ==, SIZEIMAGE);
	}
	g_assert_cmpuint(stats(f->dev).requests, ==, requests);
	g_assert_true(shim_fp_reading(a.h) && shim_fp_reading(b.h));
	client_close(&a);
	client_close(&b);
	g_assert_cmpuint(stats(f->dev).consumers, ==, 0);
}

V4L2CUSE_TEST_F_DATA("/fastpath-read/shared", test_shared, "shared")
{
	run_app(f, app_shared);
}
