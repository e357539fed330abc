/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * write() of a loopback writer node's handle, emulated in the shim
 * (shim-client/fpwrite.c) on top of the fast path, end to end with the
 * harness of test-fastpath.c (fastpath-harness.h): the daemon's side on
 * this process's main loop, an "app" thread using the shim's side, a
 * reader on the loopback's capture node.
 *
 * Checked against the daemon's own write() (CUSE, the reference): the
 * reader gets the bytes written; after the first write() (through CUSE:
 * it makes the handle the writer) no CUSE request per frame, where CUSE
 * takes five for a 640x480 YUYV frame; short and long writes and their
 * counts; a write() that finds no free buffer waits for the daemon, with
 * O_NONBLOCK and through signals, and never fails; S_FMT between writes
 * (the writer stays the writer, another handle still gets EBUSY), a
 * compressed format through CUSE; the app's own buffer ioctls answered as
 * after a CUSE write(); another thread's S_FMT while a write() waits, two
 * threads writing; poll(); a forked child; close leaving no buffers,
 * mapping or writer behind; without a fast path, CUSE.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <glib.h>
#include <linux/videodev2.h>

#include "videobuf.h"
#include "device.h"
#include "hub.h"
#include "loopback.h"
#include "shim.h"
#include "preload-private.h"
#include "fake-req.h"
#include "fastpath-harness.h"
#include "test-main.h"

V4L2CUSE_TEST_FIXTURE(struct fixture, fixture_setup, fixture_teardown);

#define OUTPUT V4L2_BUF_TYPE_VIDEO_OUTPUT
#define CAPTURE V4L2_BUF_TYPE_VIDEO_CAPTURE
#define BIG_W 640
#define BIG_H 480
#define BIG_SIZE (BIG_W * BIG_H * 2)	/* YUYV: five CUSE requests of 128 KiB */

/* write() as the library's write() does it: errno and -1, or bytes. */
static ssize_t
app_write(struct client *c, const void *buf, size_t count)
{
	return shim_write(c->fd, buf, count);
}

/* An ioctl as the library's ioctl() does it for a writer node's handle. */
static int
app_ioctl(struct client *c, unsigned long request, void *arg)
{
	int r = 0;

	if (shim_fp_write_ioctl(c->h, c->fd, request, arg, &r))
		return r;
	return cuse_ioctl(c->fh, (unsigned int)request, arg);
}

static int
set_format(struct client *c, uint32_t w, uint32_t h, uint32_t fourcc)
{
	struct v4l2_format fmt = { .type = c->type };

	fmt.fmt.pix = (struct v4l2_pix_format){ .width = w, .height = h, .pixelformat = fourcc };
	return app_ioctl(c, VIDIOC_S_FMT, &fmt);
}

struct lb_call {
	struct v4l2cuse_device *dev;
	struct v4l2cuse_loopback_stats st;
};

static void
lb_cb(gpointer p)
{
	struct lb_call *l = p;

	g_assert_cmpint(v4l2cuse_device_loopback_stats(l->dev, &l->st), ==, 0);
}

/* The writer node's loopback counters, read on the loop. */
static struct v4l2cuse_loopback_stats
lb_stats(struct fixture *f)
{
	struct lb_call l = { .dev = f->dev };

	on_loop(lb_cb, &l);
	return l.st;
}

/* The daemon takes a frame at the kick: wait until @n were taken in all. */
static void
wait_written(struct fixture *f, uint64_t n)
{
	gint64 end = g_get_monotonic_time() + 5 * G_USEC_PER_SEC;

	while (lb_stats(f).written < n) {
		g_assert_cmpint(g_get_monotonic_time(), <, end);
		g_usleep(1000);
	}
	g_assert_cmpuint(lb_stats(f).written, ==, n);
}

/* A frame of the reader produced from now on (the frames already done are skipped). */
static void
reader_fresh_frame(struct client *r, uint8_t *buf)
{
	ssize_t n;

	while (shim_read(r->fd, buf, SIZEIMAGE) == SIZEIMAGE)
		;
	g_assert_cmpint(errno, ==, EAGAIN);
	g_assert_cmpint(client_poll(r, POLLIN, 5000) & POLLIN, !=, 0);
	n = shim_read(r->fd, buf, SIZEIMAGE);
	g_assert_cmpint(n, ==, SIZEIMAGE);
}

static void
reader_open(struct fixture *f, struct client *r)
{
	static uint8_t buf[SIZEIMAGE];

	client_open(f, f->capture, r, false);
	g_assert_cmpint(set_format(r, W, H, V4L2_PIX_FMT_YUYV), ==, 0);
	/* Its first read() starts the daemon's read() emulation. */
	g_assert_cmpint(client_poll(r, POLLIN, 5000) & POLLIN, !=, 0);
	g_assert_cmpint(shim_read(r->fd, buf, SIZEIMAGE), ==, SIZEIMAGE);
}

static void
fill(uint8_t *p, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(16 + (i * 7 + seed * 13) % 224);
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

/* ---------------------------------------------------------------------- */

/*
 * Frames through the emulation reach the reader byte for byte, as the
 * same frame written through CUSE; no CUSE request per frame, at most one
 * wake-up of the daemon; every frame counted as written; close leaves no
 * buffers, mapping or writer behind.
 */
static void
app_frames(struct fixture *f)
{
	static uint8_t frame[SIZEIMAGE], got_fast[SIZEIMAGE], got_cuse[SIZEIMAGE];
	struct v4l2cuse_device_stats before, after;
	struct v4l2cuse_loopback_stats lb;
	struct client w, plain, r;
	unsigned int maps = memfd_maps();
	uint64_t written;

	reader_open(f, &r);
	client_open(f, f->dev, &w, true);
	g_assert_cmpint(set_format(&w, W, H, V4L2_PIX_FMT_YUYV), ==, 0);
	g_assert_false(shim_fp_writing(w.h));
	/* The first write() goes through CUSE (it makes the handle the writer) and sets up. */
	fill(frame, SIZEIMAGE, 0);
	g_assert_cmpint(app_write(&w, frame, SIZEIMAGE), ==, SIZEIMAGE);
	g_assert_true(shim_fp_writing(w.h));
	g_assert_cmpuint(w.h->fp->wr.n, ==, 3);		/* write_buffers: read()'s default */
	g_assert_cmpuint(shim_map_count(), ==, 0);	/* not the app's mappings */
	written = lb_stats(f).written;
	g_assert_cmpuint(written, >=, 1);
	before = stats(f->dev);
	for (unsigned int i = 1; i <= 30; i++) {
		fill(frame, SIZEIMAGE, i);
		g_assert_cmpint(app_write(&w, frame, SIZEIMAGE), ==, SIZEIMAGE);
	}
	wait_written(f, written + 30);
	after = stats(f->dev);
	g_assert_cmpuint(after.requests, ==, before.requests);		/* no CUSE request */
	g_assert_cmpuint(after.fast_wakeups - before.fast_wakeups, >=, 1);
	g_assert_cmpuint(after.fast_wakeups - before.fast_wakeups, <=, 30);	/* one a frame */
	g_assert_cmpuint(after.fast_frames - before.fast_frames, >=, 27);
	lb = lb_stats(f);
	g_assert_true(lb.connected);
	g_assert_cmpint(lb.pid, ==, getpid());
	g_assert_cmpuint(lb.refused, ==, 0);

	/* The reader gets the bytes written. */
	fill(frame, SIZEIMAGE, 99);
	g_assert_cmpint(app_write(&w, frame, SIZEIMAGE), ==, SIZEIMAGE);
	wait_written(f, written + 31);
	reader_fresh_frame(&r, got_fast);
	g_assert_cmpmem(got_fast, SIZEIMAGE, frame, SIZEIMAGE);
	client_close(&w);

	/* Closed: no buffers, no writer, no mapping left on either side. */
	after = stats(f->dev);
	g_assert_cmpuint(after.opens, ==, 0);
	g_assert_cmpuint(after.consumers, ==, 0);
	g_assert_cmpuint(after.buffer_memory, ==, 0);
	g_assert_false(lb_stats(f).connected);

	/* The daemon's own write() (no fast path): the reader sees the same. */
	client_open(f, f->dev, &plain, false);
	g_assert_cmpint(set_format(&plain, W, H, V4L2_PIX_FMT_YUYV), ==, 0);
	fill(frame, SIZEIMAGE, 7);
	g_assert_cmpint(app_write(&plain, frame, SIZEIMAGE), ==, SIZEIMAGE);
	fill(frame, SIZEIMAGE, 99);
	g_assert_cmpint(app_write(&plain, frame, SIZEIMAGE), ==, SIZEIMAGE);
	g_assert_null(plain.h->fp);
	wait_written(f, written + 33);
	reader_fresh_frame(&r, got_cuse);
	g_assert_cmpmem(got_fast, SIZEIMAGE, got_cuse, SIZEIMAGE);
	client_close(&plain);
	client_close(&r);
	g_assert_cmpuint(memfd_maps(), ==, maps);
}

V4L2CUSE_TEST_F_DATA("/fastpath-write/frames", test_frames, "output")
{
	run_app(f, app_frames);
}

/*
 * A 640x480 YUYV frame: five CUSE requests through the daemon's write()
 * (V4L2CUSE_FASTPATH=0, an older daemon), none through the emulation.
 */
static void
app_requests(struct fixture *f)
{
	g_autofree uint8_t *frame = g_malloc0(BIG_SIZE);
	struct v4l2cuse_device_stats before, after;
	uint64_t written;
	struct client c;

	/* Without a fast path: CUSE, in requests of 128 KiB. */
	client_open(f, f->dev, &c, false);
	g_assert_cmpint(set_format(&c, BIG_W, BIG_H, V4L2_PIX_FMT_YUYV), ==, 0);
	written = lb_stats(f).written;
	before = stats(f->dev);
	for (unsigned int i = 0; i < 4; i++)
		g_assert_cmpint(app_write(&c, frame, BIG_SIZE), ==, BIG_SIZE);
	after = stats(f->dev);
	g_assert_cmpuint(after.requests - before.requests, ==, 4 * 5);
	g_assert_false(shim_fp_writing(c.h));
	g_assert_cmpuint(lb_stats(f).written, ==, written + 4);
	client_close(&c);

	/* With it: the first write() and the set-up, then none. */
	client_open(f, f->dev, &c, true);
	g_assert_cmpint(set_format(&c, BIG_W, BIG_H, V4L2_PIX_FMT_YUYV), ==, 0);
	g_assert_cmpint(app_write(&c, frame, BIG_SIZE), ==, BIG_SIZE);
	before = stats(f->dev);
	for (unsigned int i = 0; i < 20; i++)
		g_assert_cmpint(app_write(&c, frame, BIG_SIZE), ==, BIG_SIZE);
	wait_written(f, written + 4 + 1 + 20);
	after = stats(f->dev);
	g_test_message("20 frames of 640x480: %" G_GUINT64_FORMAT " CUSE requests, "
		       "%" G_GUINT64_FORMAT " wake-ups", after.requests - before.requests,
		       after.fast_wakeups - before.fast_wakeups);
	g_assert_cmpuint(after.requests, ==, before.requests);
	g_assert_cmpuint(after.fast_wakeups - before.fast_wakeups, <=, 20);
	g_assert_true(shim_fp_writing(c.h));
	client_close(&c);
}

V4L2CUSE_TEST_F_DATA("/fastpath-write/requests", test_requests, "output")
{
	run_app(f, app_requests);
}

/*
 * Short and long writes: what the daemon's write() answers and counts.
 * One frame per call: a shorter one is taken and never shown (refused),
 * bytes past a frame are not taken; 0 bytes take nothing.
 */
struct sizes {
	ssize_t r_short, r_long, r_full, r_zero;
	uint64_t written, refused;
};

static void
write_sizes(struct fixture *f, bool fast, struct client *r, struct sizes *s)
{
	static uint8_t frame[SIZEIMAGE + 1000], shown[SIZEIMAGE], got[SIZEIMAGE];
	struct v4l2cuse_loopback_stats lb0, lb;
	struct client w;

	client_open(f, f->dev, &w, fast);
	g_assert_cmpint(set_format(&w, W, H, V4L2_PIX_FMT_YUYV), ==, 0);
	fill(frame, sizeof(frame), 1);
	g_assert_cmpint(app_write(&w, frame, SIZEIMAGE), ==, SIZEIMAGE);
	g_assert_cmpint(shim_fp_writing(w.h), ==, fast);
	lb0 = lb_stats(f);
	memcpy(shown, frame, SIZEIMAGE);
	/* Half a frame: taken, never shown. */
	fill(frame, sizeof(frame), 2);
	s->r_short = app_write(&w, frame, SIZEIMAGE / 2);
	s->r_zero = app_write(&w, frame, 0);
	/* The reader still gets the last whole frame. */
	reader_fresh_frame(r, got);
	g_assert_cmpmem(got, SIZEIMAGE, shown, SIZEIMAGE);
	/* More than a frame: one frame taken. */
	fill(frame, sizeof(frame), 3);
	s->r_long = app_write(&w, frame, sizeof(frame));
	s->r_full = app_write(&w, frame, SIZEIMAGE);
	wait_written(f, lb0.written + 2);
	reader_fresh_frame(r, got);
	g_assert_cmpmem(got, SIZEIMAGE, frame, SIZEIMAGE);
	lb = lb_stats(f);
	s->written = lb.written - lb0.written;
	s->refused = lb.refused - lb0.refused;
	client_close(&w);
}

static void
app_sizes(struct fixture *f)
{
	struct sizes fast, ref;
	struct client r, w;
	void *hole;

	reader_open(f, &r);
	write_sizes(f, false, &r, &ref);
	write_sizes(f, true, &r, &fast);
	g_assert_cmpint(ref.r_short, ==, SIZEIMAGE / 2);
	g_assert_cmpint(ref.r_long, ==, SIZEIMAGE);
	g_assert_cmpuint(ref.written, ==, 2);
	g_assert_cmpuint(ref.refused, ==, 1);
	g_assert_cmpint(fast.r_short, ==, ref.r_short);
	g_assert_cmpint(fast.r_zero, ==, ref.r_zero);
	g_assert_cmpint(fast.r_long, ==, ref.r_long);
	g_assert_cmpint(fast.r_full, ==, ref.r_full);
	g_assert_cmpuint(fast.written, ==, ref.written);
	g_assert_cmpuint(fast.refused, ==, ref.refused);

	/* Bytes from memory that is not mapped: EFAULT, as the kernel's copy says. */
	client_open(f, f->dev, &w, true);
	hole = mmap(NULL, SIZEIMAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	g_assert_true(hole != MAP_FAILED);
	g_assert_cmpint(app_write(&w, hole, SIZEIMAGE), ==, SIZEIMAGE);	/* joins, sets up */
	g_assert_true(shim_fp_writing(w.h));
	g_assert_no_errno(munmap(hole, SIZEIMAGE));
	g_assert_cmpint(app_write(&w, hole, SIZEIMAGE), ==, -1);
	g_assert_cmpint(errno, ==, EFAULT);
	client_close(&w);
	client_close(&r);
}

V4L2CUSE_TEST_F_DATA("/fastpath-write/sizes", test_sizes, "output")
{
	run_app(f, app_sizes);
}

/* ---------------------------------------------------------------------- */
/* No free buffer: the write() waits for the daemon, whatever O_NONBLOCK and signals say */

/* The daemon's loop, held still by another thread until released. */
struct hold {
	GMutex lock;
	GCond cond;
	bool held, release;
	GThread *t;
};

static void
hold_cb(gpointer p)
{
	struct hold *h = p;

	g_mutex_lock(&h->lock);
	h->held = true;
	g_cond_broadcast(&h->cond);
	while (!h->release)
		g_cond_wait(&h->cond, &h->lock);
	g_mutex_unlock(&h->lock);
}

static gpointer
hold_thread(gpointer p)
{
	on_loop(hold_cb, p);
	return NULL;
}

static void
hold_loop(struct hold *h)
{
	h->held = h->release = false;
	h->t = g_thread_new("hold", hold_thread, h);
	g_mutex_lock(&h->lock);
	while (!h->held)
		g_cond_wait(&h->cond, &h->lock);
	g_mutex_unlock(&h->lock);
}

static void
release_loop(struct hold *h)
{
	g_mutex_lock(&h->lock);
	h->release = true;
	g_cond_broadcast(&h->cond);
	g_mutex_unlock(&h->lock);
}

/* While the write() waits: signals to the app thread, then the loop goes on. */
static struct {
	struct hold *hold;
	pthread_t app;
	unsigned int waits;
	GThread *t;
} window;

static volatile sig_atomic_t caught;

static void
on_usr1(int sig)
{
	caught++;
}

static gpointer
signal_then_release(gpointer p)
{
	for (int i = 0; i < 3; i++) {
		g_usleep(10000);
		pthread_kill(window.app, SIGUSR1);
	}
	g_usleep(10000);
	release_loop(window.hold);
	return NULL;
}

static void
wait_hook(struct shim_fp *fp, enum shim_fp_point point)
{
	if (point != SHIM_FP_WAIT)
		return;
	if (window.waits++ == 0)
		window.t = g_thread_new("signals", signal_then_release, NULL);
}

static void
write_waits(struct fixture *f, struct client *w, struct hold *hold, unsigned int seed)
{
	static uint8_t frame[SIZEIMAGE];
	uint64_t written = lb_stats(f).written;
	unsigned int n = w->h->fp->wr.n;
	ssize_t r;

	/* The daemon takes nothing: every buffer is queued after n writes. */
	hold_loop(hold);
	for (unsigned int i = 0; i < n; i++) {
		fill(frame, SIZEIMAGE, seed + i);
		g_assert_cmpint(app_write(w, frame, SIZEIMAGE), ==, SIZEIMAGE);
	}
	window.hold = hold;
	window.app = pthread_self();
	window.waits = 0;
	caught = 0;
	shim_fp_test_hook = wait_hook;
	fill(frame, SIZEIMAGE, seed + n);
	r = app_write(w, frame, SIZEIMAGE);
	shim_fp_test_hook = NULL;
	g_thread_join(window.t);
	g_thread_join(hold->t);
	g_test_message("the write() waited %u times, %d signals", window.waits, (int)caught);
	g_assert_cmpint(r, ==, SIZEIMAGE);	/* neither EAGAIN nor EINTR */
	g_assert_cmpuint(window.waits, >=, 1);
	g_assert_cmpint(caught, ==, 3);
	wait_written(f, written + n + 1);
}

static void
app_waits(struct fixture *f)
{
	struct sigaction sa = { .sa_handler = on_usr1 };	/* no SA_RESTART */
	static uint8_t frame[SIZEIMAGE];
	struct hold hold;
	struct client w;
	int flags;

	g_mutex_init(&hold.lock);
	g_cond_init(&hold.cond);
	sigaction(SIGUSR1, &sa, NULL);
	client_open(f, f->dev, &w, true);
	g_assert_cmpint(set_format(&w, W, H, V4L2_PIX_FMT_YUYV), ==, 0);
	g_assert_cmpint(app_write(&w, frame, SIZEIMAGE), ==, SIZEIMAGE);
	g_assert_true(shim_fp_writing(w.h));
	/* O_NONBLOCK (the harness opens so): no EAGAIN, the daemon's write() never says it. */
	write_waits(f, &w, &hold, 10);
	/* Blocking: the same. */
	flags = fcntl(w.fd, F_GETFL);
	g_assert_no_errno(fcntl(w.fd, F_SETFL, flags & ~O_NONBLOCK));
	write_waits(f, &w, &hold, 20);
	signal(SIGUSR1, SIG_IGN);
	client_close(&w);
	g_mutex_clear(&hold.lock);
	g_cond_clear(&hold.cond);
}

V4L2CUSE_TEST_F_DATA("/fastpath-write/waits", test_waits, "output")
{
	run_app(f, app_waits);
}

/* ---------------------------------------------------------------------- */
/* S_FMT between writes */

struct fmt_answers {
	ssize_t r_big, r_small, r_jpeg, r_other_write, r_again;
	int r_small_fmt, r_other_fmt, r_jpeg_fmt;
	bool connected, writing_small, writing_jpeg, writing_again;
	uint64_t written;
	uint32_t width;
};

static const uint8_t jpeg[] = { 0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 'J', 'F', 'I', 'F', 0x00,
				0xff, 0xd9 };

static void
fmt_sequence(struct fixture *f, bool fast, struct fmt_answers *a)
{
	g_autofree uint8_t *frame = g_malloc0(BIG_SIZE);
	struct client w, other;
	uint64_t written = lb_stats(f).written;

	client_open(f, f->dev, &w, fast);
	client_open(f, f->dev, &other, fast);
	g_assert_cmpint(set_format(&w, BIG_W, BIG_H, V4L2_PIX_FMT_YUYV), ==, 0);
	a->r_big = app_write(&w, frame, BIG_SIZE);
	g_assert_cmpint(app_write(&w, frame, BIG_SIZE), ==, BIG_SIZE);
	/* A smaller size: the next write() takes one frame of it. */
	a->r_small_fmt = set_format(&w, 320, 240, V4L2_PIX_FMT_YUYV);
	/* The writer is still the writer: another handle may neither write nor set a format. */
	a->connected = lb_stats(f).connected;
	a->r_other_write = app_write(&other, frame, 320 * 240 * 2);
	if (a->r_other_write < 0)
		a->r_other_write = -errno;
	a->r_other_fmt = set_format(&other, 160, 120, V4L2_PIX_FMT_YUYV);
	a->r_small = app_write(&w, frame, BIG_SIZE);
	a->writing_small = shim_fp_writing(w.h);
	a->width = lb_stats(f).fmt.width;
	/* A compressed format: the daemon's write() finds the JPEG. */
	a->r_jpeg_fmt = set_format(&w, BIG_W, BIG_H, V4L2_PIX_FMT_MJPEG);
	a->r_jpeg = app_write(&w, jpeg, sizeof(jpeg));
	a->writing_jpeg = shim_fp_writing(w.h);
	/* And back. */
	g_assert_cmpint(set_format(&w, BIG_W, BIG_H, V4L2_PIX_FMT_YUYV), ==, 0);
	a->r_again = app_write(&w, frame, BIG_SIZE);
	a->writing_again = shim_fp_writing(w.h);
	g_assert_cmpint(app_write(&w, frame, BIG_SIZE), ==, BIG_SIZE);
	wait_written(f, written + 6);
	a->written = lb_stats(f).written - written;
	client_close(&other);
	client_close(&w);
}

static void
app_s_fmt(struct fixture *f)
{
	struct fmt_answers fast, ref;

	fmt_sequence(f, false, &ref);
	fmt_sequence(f, true, &fast);
	g_assert_cmpint(ref.r_big, ==, BIG_SIZE);
	g_assert_cmpint(ref.r_small, ==, 320 * 240 * 2);
	g_assert_cmpint(ref.r_other_write, ==, -EBUSY);
	g_assert_cmpint(ref.r_other_fmt, ==, -EBUSY);
	g_assert_cmpint(ref.r_jpeg, ==, sizeof(jpeg));
	g_assert_cmpint(fast.r_big, ==, ref.r_big);
	g_assert_cmpint(fast.r_small_fmt, ==, ref.r_small_fmt);
	g_assert_true(fast.connected && ref.connected);
	g_assert_cmpint(fast.r_other_write, ==, ref.r_other_write);
	g_assert_cmpint(fast.r_other_fmt, ==, ref.r_other_fmt);
	g_assert_cmpint(fast.r_small, ==, ref.r_small);
	g_assert_cmpuint(fast.width, ==, 320);
	g_assert_cmpuint(ref.width, ==, 320);
	g_assert_cmpint(fast.r_jpeg_fmt, ==, ref.r_jpeg_fmt);
	g_assert_cmpint(fast.r_jpeg, ==, ref.r_jpeg);
	g_assert_cmpint(fast.r_again, ==, ref.r_again);
	g_assert_cmpuint(fast.written, ==, ref.written);
	/* Through the emulation but for the compressed frame. */
	g_assert_true(fast.writing_small);
	g_assert_false(fast.writing_jpeg);
	g_assert_true(fast.writing_again);
}

V4L2CUSE_TEST_F_DATA("/fastpath-write/s-fmt", test_s_fmt, "output")
{
	run_app(f, app_s_fmt);
}

/* ---------------------------------------------------------------------- */
/* The app's own buffer ioctls: as the queue is after the daemon's write() */

struct answers {
	int r_querybuf, r_qbuf, r_dqbuf, r_streamoff, r_streamon, r_reqbufs, r_create0;
	ssize_t r_write_after;
	struct v4l2_buffer querybuf;
	struct v4l2_requestbuffers reqbufs;
	struct v4l2_create_buffers create0;
};

static void
ask_all(struct fixture *f, bool fast, struct answers *a)
{
	static uint8_t frame[SIZEIMAGE];
	struct v4l2_buffer b = { .index = 0, .type = OUTPUT, .memory = V4L2_MEMORY_MMAP };
	struct v4l2_requestbuffers rb0 = { .count = 0, .type = OUTPUT,
					   .memory = V4L2_MEMORY_MMAP };
	int type = OUTPUT;
	struct client w;

	memset(a, 0, sizeof(*a));
	client_open(f, f->dev, &w, fast);
	g_assert_cmpint(set_format(&w, W, H, V4L2_PIX_FMT_YUYV), ==, 0);
	g_assert_cmpint(app_write(&w, frame, SIZEIMAGE), ==, SIZEIMAGE);
	g_assert_cmpint(app_write(&w, frame, SIZEIMAGE), ==, SIZEIMAGE);
	g_assert_cmpint(shim_fp_writing(w.h), ==, fast);
	a->create0 = (struct v4l2_create_buffers){ .count = 0, .memory = V4L2_MEMORY_MMAP };
	a->create0.format.type = OUTPUT;
	a->create0.format.fmt.pix.sizeimage = SIZEIMAGE;
	a->r_create0 = app_ioctl(&w, VIDIOC_CREATE_BUFS, &a->create0);
	/* The emulation's buffers are not the app's: the daemon's write() leaves none. */
	g_assert_false(shim_fp_writing(w.h));
	g_assert_cmpint(app_write(&w, frame, SIZEIMAGE), ==, SIZEIMAGE);
	a->querybuf = (struct v4l2_buffer){ .index = 0, .type = OUTPUT,
					    .memory = V4L2_MEMORY_MMAP };
	a->r_querybuf = app_ioctl(&w, VIDIOC_QUERYBUF, &a->querybuf);
	g_assert_cmpint(app_write(&w, frame, SIZEIMAGE), ==, SIZEIMAGE);
	a->r_qbuf = app_ioctl(&w, VIDIOC_QBUF, &b);
	g_assert_cmpint(app_write(&w, frame, SIZEIMAGE), ==, SIZEIMAGE);
	a->r_dqbuf = app_ioctl(&w, VIDIOC_DQBUF, &b);
	g_assert_cmpint(app_write(&w, frame, SIZEIMAGE), ==, SIZEIMAGE);
	a->r_streamoff = app_ioctl(&w, VIDIOC_STREAMOFF, &type);
	g_assert_cmpint(app_write(&w, frame, SIZEIMAGE), ==, SIZEIMAGE);
	a->r_streamon = app_ioctl(&w, VIDIOC_STREAMON, &type);
	g_assert_cmpint(app_write(&w, frame, SIZEIMAGE), ==, SIZEIMAGE);
	g_assert_cmpint(shim_fp_writing(w.h), ==, fast);
	/* Its own buffers: write() is refused while they exist, as vb2 does. */
	a->reqbufs = (struct v4l2_requestbuffers){ .count = 2, .type = OUTPUT,
						   .memory = V4L2_MEMORY_MMAP };
	a->r_reqbufs = app_ioctl(&w, VIDIOC_REQBUFS, &a->reqbufs);
	a->r_write_after = app_write(&w, frame, SIZEIMAGE);
	if (a->r_write_after < 0)
		a->r_write_after = -errno;
	g_assert_false(shim_fp_writing(w.h));
	/* Freed: write() works again (and through the emulation with it). */
	g_assert_cmpint(app_ioctl(&w, VIDIOC_REQBUFS, &rb0), ==, 0);
	g_assert_cmpint(app_write(&w, frame, SIZEIMAGE), ==, SIZEIMAGE);
	g_assert_cmpint(shim_fp_writing(w.h), ==, fast);
	client_close(&w);
}

static void
app_ioctls(struct fixture *f)
{
	struct answers fast, ref;

	ask_all(f, false, &ref);
	ask_all(f, true, &fast);
	g_assert_cmpint(ref.r_querybuf, ==, -EINVAL);
	g_assert_cmpint(ref.r_reqbufs, ==, 0);
	g_assert_cmpint(ref.r_write_after, ==, -EBUSY);
	g_assert_cmpint(fast.r_create0, ==, ref.r_create0);
	g_assert_cmpint(fast.r_querybuf, ==, ref.r_querybuf);
	g_assert_cmpint(fast.r_qbuf, ==, ref.r_qbuf);
	g_assert_cmpint(fast.r_dqbuf, ==, ref.r_dqbuf);
	g_assert_cmpint(fast.r_streamoff, ==, ref.r_streamoff);
	g_assert_cmpint(fast.r_streamon, ==, ref.r_streamon);
	g_assert_cmpint(fast.r_reqbufs, ==, ref.r_reqbufs);
	g_assert_cmpint(fast.r_write_after, ==, ref.r_write_after);
	g_assert_cmpmem(&fast.reqbufs, sizeof(fast.reqbufs), &ref.reqbufs, sizeof(ref.reqbufs));
	g_assert_cmpmem(&fast.create0, sizeof(fast.create0), &ref.create0, sizeof(ref.create0));
	g_assert_cmpmem(&fast.querybuf, sizeof(fast.querybuf), &ref.querybuf,
			sizeof(ref.querybuf));
}

V4L2CUSE_TEST_F_DATA("/fastpath-write/ioctls", test_ioctls, "output")
{
	run_app(f, app_ioctls);
}

/* ---------------------------------------------------------------------- */
/* Other threads, poll(), a forked child */

/* Another thread's S_FMT while a write() waits for a buffer: answered at once. */
struct fmt_window {
	struct client *c;
	struct hold *hold;
	int r;
	bool done;
};

static gpointer
other_s_fmt(gpointer p)
{
	struct fmt_window *w = p;

	w->r = set_format(w->c, 320, 240, V4L2_PIX_FMT_YUYV);
	w->done = true;
	return NULL;
}

static struct fmt_window *fmt_window;

static void
s_fmt_hook(struct shim_fp *fp, enum shim_fp_point point)
{
	GThread *t;

	if (point != SHIM_FP_WAIT)
		return;
	shim_fp_test_hook = NULL;
	/* The loop answers again (the S_FMT is a CUSE request) ... */
	release_loop(fmt_window->hold);
	/* ... and the other thread's S_FMT finds the emulation's lock free. */
	t = g_thread_new("other", other_s_fmt, fmt_window);
	g_thread_join(t);
}

struct writer_thread {
	struct client *c;
	unsigned int frames;
	unsigned int ok;
};

static gpointer
write_frames(gpointer p)
{
	struct writer_thread *t = p;
	g_autofree uint8_t *frame = g_malloc0(SIZEIMAGE);

	for (unsigned int i = 0; i < t->frames; i++)
		t->ok += app_write(t->c, frame, SIZEIMAGE) == SIZEIMAGE;
	return NULL;
}

static void
app_threads(struct fixture *f)
{
	g_autofree uint8_t *frame = g_malloc0(BIG_SIZE);
	struct writer_thread a, b;
	struct fmt_window fw;
	struct hold hold;
	struct client w;
	uint64_t requests, written;
	GThread *ta, *tb;
	ssize_t r;

	g_mutex_init(&hold.lock);
	g_cond_init(&hold.cond);
	client_open(f, f->dev, &w, true);
	g_assert_cmpint(set_format(&w, W, H, V4L2_PIX_FMT_YUYV), ==, 0);
	g_assert_cmpint(app_write(&w, frame, SIZEIMAGE), ==, SIZEIMAGE);
	g_assert_true(shim_fp_writing(w.h));

	/* Two threads writing at once: whole frames, every one taken, no CUSE. */
	written = lb_stats(f).written;
	requests = stats(f->dev).requests;
	a = (struct writer_thread){ &w, 20, 0 };
	b = a;
	ta = g_thread_new("a", write_frames, &a);
	tb = g_thread_new("b", write_frames, &b);
	g_thread_join(ta);
	g_thread_join(tb);
	g_assert_cmpuint(a.ok + b.ok, ==, 40);
	wait_written(f, written + 40);
	g_assert_cmpuint(stats(f->dev).requests, ==, requests);

	/* S_FMT from another thread while a write() waits: the write() takes the new size. */
	hold_loop(&hold);
	for (unsigned int i = 0; i < w.h->fp->wr.n; i++)
		g_assert_cmpint(app_write(&w, frame, SIZEIMAGE), ==, SIZEIMAGE);
	fw = (struct fmt_window){ .c = &w, .hold = &hold };
	fmt_window = &fw;
	shim_fp_test_hook = s_fmt_hook;
	r = app_write(&w, frame, BIG_SIZE);
	shim_fp_test_hook = NULL;
	g_thread_join(hold.t);
	g_assert_true(fw.done);
	g_assert_cmpint(fw.r, ==, 0);
	g_assert_cmpint(r, ==, 320 * 240 * 2);
	g_assert_true(shim_fp_writing(w.h));
	g_assert_cmpuint(lb_stats(f).fmt.width, ==, 320);

	/* poll(): writable at once, as the node says to a writer; no CUSE request. */
	requests = stats(f->dev).requests;
	g_assert_cmpint(client_poll(&w, POLLOUT, 0), ==, POLLOUT);
	g_assert_cmpint(client_poll(&w, POLLOUT | POLLIN, 0), ==, POLLOUT);
	g_assert_cmpuint(stats(f->dev).requests, ==, requests);
	client_close(&w);
	g_mutex_clear(&hold.lock);
	g_cond_clear(&hold.cond);
}

V4L2CUSE_TEST_F_DATA("/fastpath-write/threads", test_threads, "output")
{
	run_app(f, app_threads);
}

/*
 * A forked child (its handles lose the fast path, shim_fp_forget_child())
 * writes through CUSE, where the daemon sees the parent's streamer: EBUSY,
 * as for the read() emulation's child. The parent's writer role stays.
 */
static void
app_fork(struct fixture *f)
{
	static uint8_t frame[SIZEIMAGE];
	struct client w;

	client_open(f, f->dev, &w, true);
	g_assert_cmpint(set_format(&w, W, H, V4L2_PIX_FMT_YUYV), ==, 0);
	g_assert_cmpint(app_write(&w, frame, SIZEIMAGE), ==, SIZEIMAGE);
	g_assert_true(shim_fp_writing(w.h));
	shim_fp_forget_child(w.h);	/* what the child's atfork handler does */
	g_assert_false(shim_fp_writing(w.h));
	g_assert_cmpint(app_write(&w, frame, SIZEIMAGE), ==, -1);
	g_assert_cmpint(errno, ==, EBUSY);
	g_assert_true(lb_stats(f).connected);
	client_close(&w);
	g_assert_false(lb_stats(f).connected);
	g_assert_cmpuint(stats(f->dev).buffer_memory, ==, 0);
}

V4L2CUSE_TEST_F_DATA("/fastpath-write/fork", test_fork, "output")
{
	run_app(f, app_fork);
}

/*
 * A writer killed in the middle of a frame (docs/loopback.md, "Writers
 * that die"): the write() emulation's process dies at each point of a
 * frame's way into the daemon, for real (a child forked on the loop
 * thread, which runs the emulation and dies while the daemon waits for
 * it), then the kernel closes its files. Frame N is written with every
 * byte N; every frame the reader gets must be one frame whole.
 *
 * - copy: killed by a fault in the middle of the emulation's copy of
 *   frame 3 into a mapped buffer, before its QBUF: never shown, the
 *   reader keeps frame 2;
 * - unposted: killed with frame 3's QBUF written into the ring but not
 *   posted (SHIM_FP_QBUF_POST): never shown;
 * - unkicked: killed after posting the QBUF, before waking the daemon
 *   (the kick is lost): the buffer was queued whole, so the daemon takes
 *   it at the release ("what the app did before it closed counts") and
 *   the reader gets frame 3 whole;
 * - kicked: killed after its write() returned, the daemon not having
 *   looked yet: frame 3 whole.
 */
enum death { DIE_COPY, DIE_UNPOSTED, DIE_UNKICKED, DIE_KICKED };

static enum death death;

/* The reader's next frame, which must be one written frame whole: its value. */
static uint8_t
reader_whole(struct client *r)
{
	static uint8_t buf[SIZEIMAGE];

	g_assert_cmpint(client_poll(r, POLLIN, 5000) & POLLIN, !=, 0);
	g_assert_cmpint(shim_read(r->fd, buf, SIZEIMAGE), ==, SIZEIMAGE);
	for (size_t i = 1; i < SIZEIMAGE; i++) {
		if (buf[i] != buf[0])
			g_error("the reader got a torn frame: byte %zu is %u, byte 0 %u", i, buf[i],
				buf[0]);
	}
	return buf[0];
}

static void
die_hook(struct shim_fp *fp, enum shim_fp_point point)
{
	if (point == SHIM_FP_QBUF_POST)
		raise(SIGKILL);
}

struct kill_call {
	struct client *w;
	const uint8_t *frame;
	int status;
};

/*
 * On the loop thread, so that the daemon does nothing while the child
 * lives: fork (no atfork handlers: the child keeps the fast path, as the
 * process it stands for), write frame 3 through the emulation and die.
 * Nothing the child does needs CUSE (a free buffer waits); the alarm
 * catches it if it did.
 */
static void
kill_cb(gpointer p)
{
	struct kill_call *k = p;
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	pid_t pid = _Fork();

	g_assert_cmpint(pid, >=, 0);
	if (pid == 0) {
		alarm(5);
		sigaction(SIGSEGV, &dfl, NULL);
		if (death == DIE_UNPOSTED)
			shim_fp_test_hook = die_hook;
		if (death == DIE_UNKICKED) {
			/* The kick goes nowhere: as if it died right after posting. */
			int null = open("/dev/null", O_RDWR);

			dup2(null, k->w->h->fp->sock);
		}
		(void)!shim_write(k->w->fd, k->frame, SIZEIMAGE);
		raise(SIGKILL);
		_exit(1);
	}
	g_assert_cmpint(waitpid(pid, &k->status, 0), ==, pid);
	/*
	 * The kernel closes its files: the daemon finds its connections
	 * hung up (and the kick, if any) first, the handle's release after.
	 */
	g_assert_no_errno(shutdown(k->w->h->fp->sock, SHUT_RDWR));
	g_assert_no_errno(shutdown(k->w->h->sock, SHUT_RDWR));
}

static void
app_writer_dies(struct fixture *f)
{
	static uint8_t frame[SIZEIMAGE];
	long page = sysconf(_SC_PAGESIZE);
	size_t half = (SIZEIMAGE / 2 + (size_t)page - 1) & ~((size_t)page - 1);
	struct v4l2cuse_loopback_stats lb;
	struct kill_call k = { 0 };
	struct client w, r;
	unsigned int index = 0;
	uint8_t *src, *buf, want = death >= DIE_UNKICKED ? 3 : 2;
	size_t in_buf = 0;

	reader_open(f, &r);
	client_open(f, f->dev, &w, true);
	g_assert_cmpint(set_format(&w, W, H, V4L2_PIX_FMT_YUYV), ==, 0);
	/* Frame 1 through CUSE (it makes the handle the writer), frame 2 through the ring. */
	for (uint8_t n = 1; n <= 2; n++) {
		memset(frame, n, SIZEIMAGE);
		g_assert_cmpint(app_write(&w, frame, SIZEIMAGE), ==, SIZEIMAGE);
	}
	g_assert_true(shim_fp_writing(w.h));
	wait_written(f, 2);
	reader_fresh_frame(&r, frame);
	g_assert_cmpuint(reader_whole(&r), ==, 2);

	/* Frame 3, from memory whose second half faults (DIE_COPY) or not. */
	src = mmap(NULL, 2 * half, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	g_assert_true(src != MAP_FAILED);
	memset(src, 3, 2 * half);
	if (death == DIE_COPY)
		g_assert_no_errno(mprotect(src + half, half, PROT_NONE));
	while (!w.h->fp->wr.free[index])
		index++;		/* the buffer the child fills */
	buf = w.h->fp->wr.mem[index];
	memset(buf, 0, SIZEIMAGE);
	k = (struct kill_call){ .w = &w, .frame = src };
	on_loop(kill_cb, &k);
	g_assert_true(WIFSIGNALED(k.status));
	g_assert_cmpint(WTERMSIG(k.status), ==, death == DIE_COPY ? SIGSEGV : SIGKILL);
	for (size_t i = 0; i < SIZEIMAGE; i++)
		in_buf += buf[i] == 3;
	if (death == DIE_COPY) {
		/*
		 * It died with part of frame 3 in the buffer (glibc's memcpy
		 * copies this size forwards with rep movsb here: 20416 bytes;
		 * one that loads the end first faults before any store).
		 */
		g_test_message("killed with %zu of %d bytes copied", in_buf, SIZEIMAGE);
		g_assert_cmpuint(in_buf, <, SIZEIMAGE);
	} else {
		g_assert_cmpuint(in_buf, ==, SIZEIMAGE);
	}
	/* The rest of the kernel's closing: the handle is released. */
	client_close(&w);
	munmap(src, 2 * half);

	/* Frame 2 stays, or frame 3 comes whole; nothing else, nothing torn. */
	for (int i = 0; i < 20 && reader_whole(&r) != want; i++)
		;
	for (int i = 0; i < 5; i++)
		g_assert_cmpuint(reader_whole(&r), ==, want);
	lb = lb_stats(f);
	g_assert_cmpuint(lb.written, ==, want);
	g_assert_cmpuint(lb.refused, ==, 0);
	g_assert_false(lb.connected);
	g_assert_cmpuint(stats(f->dev).buffer_memory, ==, 0);
	client_close(&r);
}

V4L2CUSE_TEST_F_DATA("/fastpath-write/writer-dies/copy", test_dies_copy, "output")
{
	death = DIE_COPY;
	run_app(f, app_writer_dies);
}

V4L2CUSE_TEST_F_DATA("/fastpath-write/writer-dies/unposted", test_dies_unposted, "output")
{
	death = DIE_UNPOSTED;
	run_app(f, app_writer_dies);
}

V4L2CUSE_TEST_F_DATA("/fastpath-write/writer-dies/unkicked", test_dies_unkicked, "output")
{
	death = DIE_UNKICKED;
	run_app(f, app_writer_dies);
}

V4L2CUSE_TEST_F_DATA("/fastpath-write/writer-dies/kicked", test_dies_kicked, "output")
{
	death = DIE_KICKED;
	run_app(f, app_writer_dies);
}
