/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Shared devices (share=true) through the fake transport: every handle
 * streams on its own queue, each produced frame reaches every consumer
 * (the same bytes), a consumer without free buffers misses frames alone,
 * one consumer's REQBUFS(0), interrupt or close leaves the others
 * streaming, the format stays while others stream, and every consumer's
 * buffers are charged to the device's memory limit.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>
#include <glib.h>
#include <linux/videodev2.h>

#include "videobuf.h"
#include "device.h"
#include "fake-req.h"
#include "fake-consumer.h"
#include "test-main.h"

#define W 160
#define H 120
#define SIZEIMAGE (W * H * 2)
#define NBUF 4

struct fixture {
	struct v4l2cuse_device *dev;
};

static struct v4l2cuse_device *
shared_device(uint64_t limit)
{
	/* The counter makes every frame different, and copies comparable. */
	struct v4l2cuse_device_config cfg = fake_yuyv_config(
		"video42", "pattern,overlay=counter,sizes=160x120+320x240,fps=60+30+5", W, H, 60);

	cfg.shared = true;
	cfg.buffer_memory_limit = limit;
	return fake_device(&cfg);
}

static void
fixture_setup(struct fixture *f, gconstpointer data)
{
	f->dev = shared_device(0);
}

static void
fixture_teardown(struct fixture *f, gconstpointer data)
{
	v4l2cuse_device_free(f->dev);
}

V4L2CUSE_TEST_FIXTURE(struct fixture, fixture_setup, fixture_teardown);

static struct v4l2cuse_fh *
open_fh(struct v4l2cuse_device *dev, bool shim)
{
	return fake_open(dev, shim, O_RDWR | O_NONBLOCK);
}

static int
qbuf(struct fake_consumer *c, uint32_t index)
{
	return fake_consumer_qbuf(c, index);
}

static void
consumer_start(struct fake_consumer *c, struct v4l2cuse_device *dev, unsigned int n)
{
	fake_consumer_start(c, dev, n, 0);
}

static int
consumer_dqbuf(struct fake_consumer *c, struct v4l2_buffer *ret)
{
	return fake_consumer_dqbuf(c, SIZEIMAGE, ret);
}

/* Run the loop until the producer made one more frame (the timer fired). */
static void
tick(void)
{
	unsigned int before = fake_poll_notifications();
	gint64 end = g_get_monotonic_time() + 5 * G_USEC_PER_SEC;

	while (fake_poll_notifications() == before && g_get_monotonic_time() < end)
		g_main_context_iteration(NULL, TRUE);
	g_assert_cmpuint(fake_poll_notifications(), !=, before);
}

/* poll() arms a notification for @fh: the next frame wakes it. */
static void
arm(struct v4l2cuse_fh *fh)
{
	fake_poll(fh, POLLIN);
}

/*
 * The device's counters. A queue sees a sequence gap only where the device
 * counted a dropped frame for it: a frame that found none of its buffers
 * free, which happens to a consumer that requeues at once too when a late
 * wake-up of the test makes up for more ticks than it has buffers queued
 * (daemon/producer.c), or a tick lost in a longer stall.
 */
static struct v4l2cuse_device_stats
dev_stats(struct v4l2cuse_device *dev)
{
	struct v4l2cuse_device_stats st;

	v4l2cuse_device_get_stats(dev, &st);
	return st;
}

V4L2CUSE_TEST_F("/share/every-consumer-every-frame", test_every_consumer_gets_every_frame)
{
	struct fake_consumer a, b;
	struct v4l2cuse_device_stats st;
	unsigned int same = 0;

	consumer_start(&a, f->dev, NBUF);
	consumer_start(&b, f->dev, NBUF);
	v4l2cuse_device_get_stats(f->dev, &st);
	g_assert_cmpuint(st.consumers, ==, 2);
	g_assert_true(st.shared);
	while (a.frames < 40) {
		struct v4l2_buffer ba, bb;

		arm(a.fh);
		tick();
		/*
		 * Each frame to both (each requeues at once); a late wake-up
		 * brings the ticks it missed together.
		 */
		g_assert_cmpint(consumer_dqbuf(&a, &ba), ==, 0);
		do {
			g_assert_cmpint(consumer_dqbuf(&b, &bb), ==, 0);
			g_assert_cmpuint(ba.sequence, ==, bb.sequence);
			if (memcmp(a.mem[ba.index], b.mem[bb.index], SIZEIMAGE) == 0)
				same++;
			g_assert_cmpint(qbuf(&a, ba.index), ==, 0);
			g_assert_cmpint(qbuf(&b, bb.index), ==, 0);
		} while (consumer_dqbuf(&a, &ba) == 0);
		g_assert_cmpint(consumer_dqbuf(&b, &bb), ==, -EAGAIN);
	}
	/* The same frame, byte for byte, and no consumer missed one. */
	g_assert_cmpuint(same, ==, a.frames);
	g_assert_cmpuint(b.frames, ==, a.frames);
	g_assert_cmpuint(a.gaps, ==, b.gaps);
	g_assert_cmpuint(a.gaps + b.gaps, <=, dev_stats(f->dev).dropped);
	fake_consumer_close(&a);
	fake_consumer_close(&b);
	v4l2cuse_device_get_stats(f->dev, &st);
	g_assert_cmpuint(st.consumers, ==, 0);
	g_assert_false(st.streaming);
	g_assert_cmpuint(st.buffer_memory, ==, 0);
}

V4L2CUSE_TEST_F("/share/slow-consumer", test_slow_consumer)
{
	struct fake_consumer fast, slow;
	struct v4l2cuse_device_stats st;
	struct v4l2_buffer b;
	unsigned int slow_frames = 0;

	consumer_start(&fast, f->dev, NBUF);
	consumer_start(&slow, f->dev, 2);
	for (int i = 0; i < 20; i++) {
		arm(fast.fh);
		tick();
		g_assert_cmpint(consumer_dqbuf(&fast, &b), ==, 0);
		do
			g_assert_cmpint(qbuf(&fast, b.index), ==, 0);
		while (consumer_dqbuf(&fast, &b) == 0);
	}
	/*
	 * The fast one never waited for the slow one: its gaps are its own
	 * drops, what the device dropped beyond every frame after the slow
	 * one's two (both streamed from the first tick on).
	 */
	g_assert_cmpuint(fast.frames, >=, 20);
	st = dev_stats(f->dev);
	g_assert_cmpuint(st.dropped, >=, st.produced - 2);
	g_assert_cmpuint(fast.gaps, <=, st.dropped - (st.produced - 2));
	/* The slow one has its two oldest frames, then a gap of its own. */
	while (consumer_dqbuf(&slow, &b) == 0) {
		slow_frames++;
		g_assert_cmpuint(b.sequence, ==, slow_frames == 1 ? 0 : 1);
	}
	g_assert_cmpuint(slow_frames, ==, 2);
	g_assert_cmpint(qbuf(&slow, 0), ==, 0);
	g_assert_cmpint(qbuf(&slow, 1), ==, 0);
	arm(slow.fh);
	tick();
	g_assert_cmpint(consumer_dqbuf(&slow, &b), ==, 0);
	g_assert_cmpuint(b.sequence, >, 2);	/* the frames it missed: a gap */
	g_assert_cmpuint(slow.gaps, >=, 1);
	g_assert_cmpuint(slow.gaps, ==, 1);	/* 0, 1, then the gap */
	fake_consumer_close(&slow);
	fake_consumer_close(&fast);
}

V4L2CUSE_TEST_F("/share/one-leaves", test_one_leaves)
{
	struct fake_consumer a, b, c;
	struct v4l2_requestbuffers rb0 = { .count = 0, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					   .memory = V4L2_MEMORY_MMAP };
	int type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	struct v4l2_buffer buf = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
				   .memory = V4L2_MEMORY_MMAP };
	struct fake_parked *parked;
	uint64_t d0;
	unsigned int g0;

	consumer_start(&a, f->dev, NBUF);
	consumer_start(&b, f->dev, NBUF);
	consumer_start(&c, f->dev, NBUF);

	/* a: STREAMOFF + REQBUFS(0) while the others stream. */
	arm(b.fh);
	tick();
	g_assert_cmpint(fake_ioctl(a.fh, VIDIOC_STREAMOFF, &type), ==, 0);
	fake_consumer_unmap(&a);
	g_assert_cmpint(fake_ioctl(a.fh, VIDIOC_REQBUFS, &rb0), ==, 0);

	/*
	 * b: a blocking DQBUF parked, interrupted (the kernel's answer to a
	 * SIGKILL), then the handle released, as when the process dies.
	 */
	fake_consumer_close(&b);
	fake_consumer_start(&b, f->dev, NBUF, O_RDWR);
	g_assert_cmpint(fake_ioctl(b.fh, VIDIOC_DQBUF, &buf), ==, FAKE_PARKED);
	parked = fake_last_parked();
	fake_interrupt_last();
	g_assert_true(parked->answered);
	g_assert_cmpint(parked->result, ==, -EINTR);
	fake_consumer_close(&b);

	/* c streamed on through all of it, alone now: its gaps are the drops. */
	d0 = dev_stats(f->dev).dropped;
	g0 = c.gaps;
	for (int i = 0; i < 10; i++) {
		arm(c.fh);
		tick();
		while (consumer_dqbuf(&c, &buf) == 0)
			g_assert_cmpint(qbuf(&c, buf.index), ==, 0);
	}
	g_assert_cmpuint(c.frames, >=, 10);
	g_assert_cmpuint(c.gaps - g0, <=, dev_stats(f->dev).dropped - d0);
	v4l2cuse_fh_release(a.fh);
	fake_consumer_close(&c);
}

V4L2CUSE_TEST_F("/share/format-stays", test_format_stays)
{
	struct fake_consumer a;
	struct v4l2cuse_fh *b = open_fh(f->dev, true);
	struct v4l2_format fmt = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	struct v4l2_streamparm parm = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };

	/* Nobody streams: S_FMT changes the device's format. */
	fmt.fmt.pix = (struct v4l2_pix_format){ .width = 320, .height = 240,
						.pixelformat = V4L2_PIX_FMT_YUYV };
	g_assert_cmpint(fake_ioctl(b, VIDIOC_S_FMT, &fmt), ==, 0);
	g_assert_cmpuint(fmt.fmt.pix.width, ==, 320);
	fmt.fmt.pix = (struct v4l2_pix_format){ .width = W, .height = H,
						.pixelformat = V4L2_PIX_FMT_YUYV };
	g_assert_cmpint(fake_ioctl(b, VIDIOC_S_FMT, &fmt), ==, 0);

	consumer_start(&a, f->dev, NBUF);
	/* a streams: b's S_FMT is answered with the format in force. */
	fmt.fmt.pix = (struct v4l2_pix_format){ .width = 320, .height = 240,
						.pixelformat = V4L2_PIX_FMT_RGB24 };
	g_assert_cmpint(fake_ioctl(b, VIDIOC_S_FMT, &fmt), ==, 0);
	g_assert_cmpuint(fmt.fmt.pix.width, ==, W);
	g_assert_cmpuint(fmt.fmt.pix.height, ==, H);
	g_assert_cmpuint(fmt.fmt.pix.pixelformat, ==, V4L2_PIX_FMT_YUYV);
	/* TRY_FMT still tries. */
	fmt.fmt.pix = (struct v4l2_pix_format){ .width = 320, .height = 240,
						.pixelformat = V4L2_PIX_FMT_RGB24 };
	g_assert_cmpint(fake_ioctl(b, VIDIOC_TRY_FMT, &fmt), ==, 0);
	g_assert_cmpuint(fmt.fmt.pix.width, ==, 320);
	/* S_PARM keeps the rate. */
	parm.parm.capture.timeperframe = (struct v4l2_fract){ 1, 5 };
	g_assert_cmpint(fake_ioctl(b, VIDIOC_S_PARM, &parm), ==, 0);
	g_assert_cmpuint(parm.parm.capture.timeperframe.denominator, ==, 60);
	/* a's own S_FMT: its queue is busy, as in vb2. */
	g_assert_cmpint(fake_ioctl(a.fh, VIDIOC_S_FMT, &fmt), ==, -EBUSY);
	/* share= cannot switch while a consumer streams. */
	{
		g_autofree char *err = NULL;

		g_assert_cmpint(v4l2cuse_device_set_shared(f->dev, false, &err), ==, -EBUSY);
		g_assert_nonnull(err);
	}
	fake_consumer_close(&a);
	v4l2cuse_fh_release(b);
}

/* Two read() consumers and one MMAP consumer at once. */
V4L2CUSE_TEST_F("/share/readers", test_readers)
{
	struct v4l2cuse_fh *r1 = open_fh(f->dev, false), *r2 = open_fh(f->dev, false);
	g_autofree uint8_t *frame = g_malloc(SIZEIMAGE);
	unsigned int got1 = 0, got2 = 0, got3 = 0;
	struct fake_consumer m;
	struct v4l2_buffer b;
	gint64 end;

	consumer_start(&m, f->dev, NBUF);
	end = g_get_monotonic_time() + 10 * G_USEC_PER_SEC;
	while ((got1 < 8 || got2 < 8 || got3 < 8) && g_get_monotonic_time() < end) {
		ssize_t n;

		if ((n = fake_read(r1, frame, SIZEIMAGE, O_NONBLOCK)) > 0) {
			g_assert_cmpint(n, ==, SIZEIMAGE);
			got1++;
		}
		if ((n = fake_read(r2, frame, SIZEIMAGE, O_NONBLOCK)) > 0) {
			g_assert_cmpint(n, ==, SIZEIMAGE);
			got2++;
		}
		while (consumer_dqbuf(&m, &b) == 0) {
			got3++;
			g_assert_cmpint(qbuf(&m, b.index), ==, 0);
		}
		g_main_context_iteration(NULL, TRUE);
	}
	g_assert_cmpuint(got1, >=, 8);
	g_assert_cmpuint(got2, >=, 8);
	g_assert_cmpuint(got3, >=, 8);
	g_assert_cmpuint(m.gaps, <=, dev_stats(f->dev).dropped);
	v4l2cuse_fh_release(r1);
	fake_consumer_close(&m);
	v4l2cuse_fh_release(r2);
}

/* share= switches both ways while handles are open but idle. */
V4L2CUSE_TEST_F("/share/switch", test_switch)
{
	struct v4l2cuse_fh *a = open_fh(f->dev, true), *b = open_fh(f->dev, true);
	struct v4l2_requestbuffers rb = { .count = 2, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					  .memory = V4L2_MEMORY_MMAP };
	g_autofree char *err = NULL;

	g_assert_cmpint(v4l2cuse_device_set_shared(f->dev, false, &err), ==, 0);
	g_assert_true(v4l2cuse_fh_queue(a) == v4l2cuse_fh_queue(b));
	g_assert_cmpint(fake_ioctl(a, VIDIOC_REQBUFS, &rb), ==, 0);
	g_assert_cmpint(fake_ioctl(b, VIDIOC_REQBUFS, &rb), ==, -EBUSY);	/* exclusive */
	rb.count = 0;
	g_assert_cmpint(fake_ioctl(a, VIDIOC_REQBUFS, &rb), ==, 0);
	g_assert_cmpint(v4l2cuse_device_set_shared(f->dev, true, &err), ==, 0);
	g_assert_true(v4l2cuse_fh_queue(a) != v4l2cuse_fh_queue(b));
	rb.count = 2;
	g_assert_cmpint(fake_ioctl(a, VIDIOC_REQBUFS, &rb), ==, 0);
	g_assert_cmpint(fake_ioctl(b, VIDIOC_REQBUFS, &rb), ==, 0);
	v4l2cuse_fh_release(a);
	v4l2cuse_fh_release(b);
}

/* Every consumer's buffers count against the device's limit. */
V4L2CUSE_TEST("/share/budget", test_budget)
{
	const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	const uint64_t buf = (SIZEIMAGE + page - 1) / page * page;
	struct v4l2cuse_device *dev = shared_device(5 * buf);
	struct v4l2cuse_fh *a = open_fh(dev, true), *b = open_fh(dev, true);
	struct v4l2_requestbuffers rb = { .count = 4, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					  .memory = V4L2_MEMORY_MMAP };
	struct v4l2cuse_device_stats st;

	g_assert_cmpint(fake_ioctl(a, VIDIOC_REQBUFS, &rb), ==, 0);
	g_assert_cmpuint(rb.count, ==, 4);
	/* One buffer of room left: below b's minimum of 2. */
	rb.count = 4;
	g_assert_cmpint(fake_ioctl(b, VIDIOC_REQBUFS, &rb), ==, -ENOMEM);
	v4l2cuse_device_get_stats(dev, &st);
	g_assert_cmpuint(st.buffer_memory, ==, 4 * buf);
	/* a lets go: b gets its four. */
	rb.count = 0;
	g_assert_cmpint(fake_ioctl(a, VIDIOC_REQBUFS, &rb), ==, 0);
	rb.count = 4;
	g_assert_cmpint(fake_ioctl(b, VIDIOC_REQBUFS, &rb), ==, 0);
	g_assert_cmpuint(rb.count, ==, 4);
	v4l2cuse_fh_release(b);		/* its queue, and its buffers, go with it */
	v4l2cuse_device_get_stats(dev, &st);
	g_assert_cmpuint(st.buffer_memory, ==, 0);
	v4l2cuse_fh_release(a);
	v4l2cuse_device_free(dev);
}
