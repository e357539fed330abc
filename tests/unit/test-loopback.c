/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Loopback (daemon/loopback.c) through the fake transport: a writer node
 * (output device, "loopback-writer:video43") and a capture device
 * ("loopback:video43") made through one hub. Readers get the placeholder
 * before any writer; written frames reach them converted and scaled;
 * short, oversized and garbage writes are refused without touching what
 * readers see; one writer at a time; a new writer with another format is
 * picked up; the timeout brings the placeholder back; MJPEG writes decode;
 * the writer node's client-usage event (v4l2-relayd) counts the readers;
 * pyvirtualcam's probe, S_FMT and write() of each of its formats reach a
 * reader with compat=1.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <glib.h>
#include <linux/videodev2.h>

#include "videobuf.h"
#include "device.h"
#include "hub.h"
#include "loopback.h"
#include "v4l2cuse/format.h"
#include "v4l2cuse/loopback-abi.h"
#include "v4l2cuse/source.h"
#include "convert.h"
#include "fake-req.h"
#include "fake-consumer.h"
#include "test-main.h"

#define CW 160
#define CH 120

struct fixture {
	struct v4l2cuse_hub *hub;
	struct v4l2cuse_device *writer;
	struct v4l2cuse_device *capture;
	struct fake_consumer reader;
};

static struct v4l2cuse_device *
device(struct v4l2cuse_hub *hub, const char *name, const char *spec, bool output,
       uint32_t w, uint32_t h)
{
	struct v4l2cuse_device_config cfg = fake_yuyv_config(name, spec, w, h, 60);

	cfg.hub = hub;
	cfg.output = output;
	return fake_device(&cfg);
}

/*
 * The capture device (video42) and its writer node (video43); the reader
 * streams from the start unless @data says "shared": then the capture
 * device has share=true and no reader yet (the client-usage tests).
 * "compat": the loopback has compat=1 (the pyvirtualcam tests);
 * "feed": the capture device is "pipewire:Fake Camera" (a feed).
 */
static void
fixture_setup(struct fixture *f, gconstpointer data)
{
	const char *spec = "loopback:video43,sizes=160x120+320x240,fps=60+30";

	if (g_strcmp0(data, "compat") == 0)
		spec = "loopback:video43,sizes=160x120+320x240,fps=60+30,compat=1";
	else if (g_strcmp0(data, "feed") == 0)
		spec = "pipewire:Fake Camera,sizes=160x120+320x240,fps=60+30,writer=video43";
	f->hub = v4l2cuse_hub_new();
	f->capture = device(f->hub, "video42", spec, false, CW, CH);
	f->writer = device(f->hub, "video43", "loopback-writer:video43", true, 640, 480);
	if (g_strcmp0(data, "shared") == 0) {
		g_autofree char *err = NULL;

		g_assert_cmpint(v4l2cuse_device_set_shared(f->capture, true, &err), ==, 0);
		return;
	}
	fake_consumer_start(&f->reader, f->capture, 4, 0);
}

static void
fixture_teardown(struct fixture *f, gconstpointer data)
{
	if (f->reader.fh)
		fake_consumer_close(&f->reader);
	v4l2cuse_device_free(f->writer);
	v4l2cuse_device_free(f->capture);
	v4l2cuse_hub_free(f->hub);
}

V4L2CUSE_TEST_FIXTURE(struct fixture, fixture_setup, fixture_teardown);

/* The next frame the reader gets (the loop runs until one comes). */
static const uint8_t *
next_frame(struct fixture *f)
{
	gint64 end = g_get_monotonic_time() + 5 * G_USEC_PER_SEC;
	struct v4l2_buffer b;

	while (g_get_monotonic_time() < end) {
		if (fake_consumer_dqbuf(&f->reader, CW * CH * 2, &b) == 0) {
			g_assert_cmpint(fake_consumer_qbuf(&f->reader, b.index), ==, 0);
			return f->reader.mem[b.index];
		}
		g_main_context_iteration(NULL, TRUE);
	}
	g_assert_not_reached();
	return NULL;
}

/* Frames until one has luma @y at its centre (the loopback's latency). */
static void
wait_luma(struct fixture *f, uint8_t y)
{
	for (int i = 0; i < 20; i++) {
		const uint8_t *p = next_frame(f);

		if (p[(CH / 2 * CW + CW / 2) * 2] == y) {
			/* Uniform and neutral: the whole frame is the written one. */
			for (size_t j = 0; j < CW * CH * 2; j += 2) {
				g_assert_cmpuint(p[j], ==, y);
				g_assert_cmpint(ABS((int)p[j + 1] - 128), <=, 1);
			}
			return;
		}
	}
	g_assert_not_reached();
}

static bool
signal_lost(struct fixture *f)
{
	struct v4l2cuse_device_stats st;

	v4l2cuse_device_get_stats(f->capture, &st);
	return st.signal_lost;
}

static struct v4l2cuse_fh *
open_writer(struct fixture *f, uint32_t fourcc, uint32_t w, uint32_t h,
	    struct v4l2_pix_format *ret)
{
	struct v4l2cuse_fh *fh = fake_open(f->writer, false, O_RDWR | O_NONBLOCK);
	struct v4l2_format fmt = { .type = V4L2_BUF_TYPE_VIDEO_OUTPUT };

	/* ffmpeg's order: G_FMT must work before anybody set a format. */
	g_assert_cmpint(fake_ioctl(fh, VIDIOC_G_FMT, &fmt), ==, 0);
	g_assert_cmpuint(fmt.fmt.pix.sizeimage, >, 0);
	if (fourcc) {
		fmt.fmt.pix = (struct v4l2_pix_format){ .width = w, .height = h,
							.pixelformat = fourcc };
		g_assert_cmpint(fake_ioctl(fh, VIDIOC_S_FMT, &fmt), ==, 0);
	}
	*ret = fmt.fmt.pix;
	return fh;
}

/* A uniform frame of luma @y in @pix (YUYV or NV12). */
static uint8_t *
uniform(const struct v4l2_pix_format *pix, uint8_t y)
{
	uint8_t *p = g_malloc(pix->sizeimage);

	if (pix->pixelformat == V4L2_PIX_FMT_YUYV) {
		for (size_t i = 0; i < pix->sizeimage; i += 2) {
			p[i] = y;
			p[i + 1] = 128;
		}
	} else {
		size_t luma = (size_t)pix->width * pix->height;

		memset(p, y, luma);
		memset(p + luma, 128, pix->sizeimage - luma);
	}
	return p;
}

/* @w writes a whole uniform frame of @pix, luma @y, and the reader gets it. */
static void
write_seen(struct fixture *f, struct v4l2cuse_fh *w, const struct v4l2_pix_format *pix,
	   uint8_t y)
{
	g_autofree uint8_t *frame = uniform(pix, y);

	g_assert_cmpint(fake_write(w, frame, pix->sizeimage), ==, (ssize_t)pix->sizeimage);
	wait_luma(f, y);
}

V4L2CUSE_TEST_F("/loopback/before-writer", test_before_writer)
{
	/* Whole frames at once, from the placeholder; STREAMON did not fail. */
	for (int i = 0; i < 3; i++)
		next_frame(f);
	g_assert_true(signal_lost(f));
}

V4L2CUSE_TEST_F("/loopback/write-reaches-reader", test_write_reaches_reader)
{
	struct v4l2_pix_format pix;
	struct v4l2cuse_fh *w = open_writer(f, V4L2_PIX_FMT_YUYV, 320, 240, &pix);
	struct v4l2_capability cap;

	g_assert_cmpint(fake_ioctl(w, VIDIOC_QUERYCAP, &cap), ==, 0);
	g_assert_true(cap.device_caps & V4L2_CAP_VIDEO_OUTPUT);
	g_assert_false(cap.device_caps & V4L2_CAP_VIDEO_CAPTURE);
	g_assert_cmpstr((char *)cap.bus_info, ==, "platform:v4l2cuse-043");
	write_seen(f, w, &pix, 100);
	g_assert_false(signal_lost(f));
	/* The writer node has no read(); the capture node no write(). */
	{
		uint8_t b[16];

		g_assert_cmpint(fake_read(w, b, sizeof(b), O_NONBLOCK), ==, -EINVAL);
		g_assert_cmpint(fake_write(f->reader.fh, b, sizeof(b)), ==, -EINVAL);
	}
	/* poll: a writer can always write. */
	g_assert_cmpuint(fake_poll(w, POLLOUT) & POLLOUT, ==, POLLOUT);
	v4l2cuse_fh_release(w);
}

/*
 * Frames repeat while nothing new is written (sustain_framerate): each
 * repeat is the written frame, whole, converted again from what the writer
 * end keeps (a raw frame is converted straight into the reader's buffer,
 * not through a cache), also after a change of the writer's format.
 */
V4L2CUSE_TEST_F("/loopback/repeats", test_repeats)
{
	struct v4l2_pix_format pix;
	struct v4l2cuse_fh *w = open_writer(f, V4L2_PIX_FMT_YUYV, 320, 240, &pix);
	struct v4l2_format fmt = { .type = V4L2_BUF_TYPE_VIDEO_OUTPUT };
	static const uint8_t lumas[] = { 90, 150 };

	for (unsigned int k = 0; k < G_N_ELEMENTS(lumas); k++) {
		if (k == 1) {
			/* Another format, at the reader's own size. */
			fmt.fmt.pix = (struct v4l2_pix_format){ .width = CW, .height = CH,
								.pixelformat = V4L2_PIX_FMT_NV12 };
			g_assert_cmpint(fake_ioctl(w, VIDIOC_S_FMT, &fmt), ==, 0);
			pix = fmt.fmt.pix;
		}
		write_seen(f, w, &pix, lumas[k]);
		for (int i = 0; i < 8; i++) {
			const uint8_t *p = next_frame(f);

			for (size_t j = 0; j < CW * CH * 2; j += 2) {
				g_assert_cmpuint(p[j], ==, lumas[k]);
				g_assert_cmpint(ABS((int)p[j + 1] - 128), <=, 1);
			}
		}
	}
	v4l2cuse_fh_release(w);
}

V4L2CUSE_TEST_F("/loopback/bad-writes", test_bad_writes)
{
	struct v4l2_pix_format pix;
	struct v4l2cuse_fh *w = open_writer(f, V4L2_PIX_FMT_YUYV, 320, 240, &pix);
	struct v4l2cuse_fh *w2;
	g_autofree uint8_t *good = uniform(&pix, 80);
	g_autofree uint8_t *big = g_malloc0(pix.sizeimage + 1000);
	struct v4l2_format fmt = { .type = V4L2_BUF_TYPE_VIDEO_OUTPUT };
	struct v4l2_format bad = { .type = V4L2_BUF_TYPE_VIDEO_OUTPUT };

	write_seen(f, w, &pix, 80);
	/* Short (one request, then two): taken, as drivers take them, never shown. */
	g_assert_cmpint(fake_write(w, big, 1000), ==, 1000);
	g_assert_cmpint(fake_write(w, big, 140000), ==, 140000);
	wait_luma(f, 80);
	/* Oversized: the frame is taken, the rest is not. */
	{
		g_autofree uint8_t *ninety = uniform(&pix, 90);

		memcpy(big, ninety, pix.sizeimage);
	}
	g_assert_cmpint(fake_write(w, big, pix.sizeimage + 1000), ==, (ssize_t)pix.sizeimage);
	wait_luma(f, 90);
	/* A second writer: EBUSY for its writes and its S_FMT. */
	w2 = fake_open(f->writer, false, O_RDWR);
	g_assert_cmpint(fake_write(w2, good, pix.sizeimage), ==, -EBUSY);
	fmt.fmt.pix = pix;
	g_assert_cmpint(fake_ioctl(w2, VIDIOC_S_FMT, &fmt), ==, -EBUSY);
	/* A capture buffer type on the writer node: EINVAL. */
	bad.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	g_assert_cmpint(fake_ioctl(w, VIDIOC_G_FMT, &bad), ==, -EINVAL);
	/* Garbage formats are adjusted, as S_FMT does. */
	bad.type = V4L2_BUF_TYPE_VIDEO_OUTPUT;
	bad.fmt.pix = (struct v4l2_pix_format){ .width = 0, .height = 99999,
						.pixelformat = v4l2_fourcc('Z', 'Z', 'Z', 'Z') };
	g_assert_cmpint(fake_ioctl(w, VIDIOC_TRY_FMT, &bad), ==, 0);
	g_assert_cmpuint(bad.fmt.pix.pixelformat, ==, V4L2_PIX_FMT_YUYV);
	g_assert_cmpuint(bad.fmt.pix.width, >=, 2);
	g_assert_cmpuint(bad.fmt.pix.height, <=, 8192);
	v4l2cuse_fh_release(w2);
	v4l2cuse_fh_release(w);
	/* The readers were never shown anything but whole frames: still 90. */
	wait_luma(f, 90);
	{
		struct v4l2cuse_loopback_stats lb;

		g_assert_cmpint(v4l2cuse_device_loopback_stats(f->capture, &lb), ==, 0);
		g_assert_cmpuint(lb.written, ==, 2);	/* the 80 and the 90 */
		g_assert_cmpuint(lb.refused, ==, 2);	/* the two short calls */
	}
}

V4L2CUSE_TEST_F("/loopback/next-writer", test_next_writer)
{
	struct v4l2_pix_format pix;
	struct v4l2cuse_fh *w = open_writer(f, 0, 0, 0, &pix);	/* no S_FMT: the default */

	g_assert_cmpuint(pix.width, ==, 640);
	write_seen(f, w, &pix, 60);
	v4l2cuse_fh_release(w);		/* the writer exits: the last frame stays */
	wait_luma(f, 60);
	w = open_writer(f, V4L2_PIX_FMT_NV12, 1280, 720, &pix);
	write_seen(f, w, &pix, 150);
	v4l2cuse_fh_release(w);
}

V4L2CUSE_TEST_F("/loopback/timeout", test_timeout)
{
	struct v4l2_pix_format pix;
	struct v4l2cuse_fh *w = open_writer(f, V4L2_PIX_FMT_YUYV, 320, 240, &pix);
	struct v4l2_control c = { .id = V4L2_CID_USER_BASE | 0xf002, .value = 100 };
	gint64 end;

	g_assert_cmpint(fake_ioctl(w, VIDIOC_S_CTRL, &c), ==, 0);
	write_seen(f, w, &pix, 70);
	/* No more writes: after 100 ms the placeholder. */
	end = g_get_monotonic_time() + 3 * G_USEC_PER_SEC;
	while (!signal_lost(f) && g_get_monotonic_time() < end)
		next_frame(f);
	g_assert_true(signal_lost(f));
	write_seen(f, w, &pix, 70);
	v4l2cuse_fh_release(w);
}

/*
 * A reader that starts after the writer left gets the last written frame
 * (as long as no timeout is set), not nothing: v4l2-compliance under the
 * shim waited for ever in a blocking DQBUF on such a device.
 */
V4L2CUSE_TEST_F("/loopback/reader-after-writer", test_reader_after_writer)
{
	struct v4l2_pix_format pix;
	struct v4l2cuse_fh *w = open_writer(f, V4L2_PIX_FMT_YUYV, 320, 240, &pix);

	write_seen(f, w, &pix, 90);
	v4l2cuse_fh_release(w);
	fake_consumer_close(&f->reader);
	fake_consumer_start(&f->reader, f->capture, 4, 0);
	wait_luma(f, 90);
	g_assert_false(signal_lost(f));
}

V4L2CUSE_TEST_F("/loopback/mjpeg", test_mjpeg)
{
	struct v4l2_pix_format pix, yuyv = { .width = 320, .height = 240,
					     .pixelformat = V4L2_PIX_FMT_YUYV };
	struct v4l2cuse_fh *w = open_writer(f, V4L2_PIX_FMT_MJPEG, 320, 240, &pix);
	g_autofree uint8_t *src = NULL, *jpeg = g_malloc(pix.sizeimage);
	struct v4l2cuse_convert *cv = v4l2cuse_convert_new();
	uint32_t used = 0;
	uint8_t junk[64] = { 0x12, 0x34 };

	g_assert_cmpint(v4l2cuse_format_fill(&yuyv), ==, 0);
	src = uniform(&yuyv, 120);
	struct v4l2cuse_image img = { .fourcc = V4L2_PIX_FMT_YUYV, .width = 320, .height = 240,
				      .data = src, .size = yuyv.sizeimage };
	g_assert_cmpint(v4l2cuse_convert_frame(cv, &img, &pix, jpeg, pix.sizeimage, &used), ==, 0);
	g_assert_cmpint(fake_write(w, jpeg, used), ==, (ssize_t)used);
	/* JPEG decode: within rounding of 120. */
	for (int i = 0; i < 20; i++) {
		const uint8_t *p = next_frame(f);

		if (ABS((int)p[(CH / 2 * CW + CW / 2) * 2] - 120) <= 2)
			break;
		g_assert_cmpint(i, <, 19);
	}
	/* Not a JPEG: refused. */
	g_assert_cmpint(fake_write(w, junk, sizeof(junk)), ==, -EINVAL);
	v4l2cuse_convert_free(cv);
	v4l2cuse_fh_release(w);
}

/* A streaming writer (GStreamer's v4l2sink under v4l2cuse-run): MMAP buffers. */
V4L2CUSE_TEST_F("/loopback/output-streaming", test_output_streaming)
{
	struct v4l2_pix_format pix;
	struct v4l2cuse_fh *w = open_writer(f, V4L2_PIX_FMT_YUYV, 320, 240, &pix);
	struct v4l2cuse_fh *other = fake_open(f->writer, false, O_RDWR);
	struct v4l2_requestbuffers rb = { .count = 2, .type = V4L2_BUF_TYPE_VIDEO_OUTPUT,
					  .memory = V4L2_MEMORY_MMAP };
	int type = V4L2_BUF_TYPE_VIDEO_OUTPUT;
	struct v4l2_capability cap;
	uint8_t *mem[2];
	size_t len[2];

	/* Streaming needs the shim, as on capture nodes. */
	g_assert_cmpint(fake_ioctl(w, VIDIOC_REQBUFS, &rb), ==, -ENOTTY);
	v4l2cuse_fh_set_streaming(w, true);
	g_assert_cmpint(fake_ioctl(w, VIDIOC_QUERYCAP, &cap), ==, 0);
	g_assert_true(cap.device_caps & V4L2_CAP_STREAMING);
	g_assert_cmpint(fake_ioctl(w, VIDIOC_REQBUFS, &rb), ==, 0);
	g_assert_cmpuint(rb.count, >=, 2);
	for (unsigned int i = 0; i < 2; i++) {
		struct v4l2_buffer b = { .index = i, .type = V4L2_BUF_TYPE_VIDEO_OUTPUT,
					 .memory = V4L2_MEMORY_MMAP };
		unsigned int index;
		int fd;

		g_assert_cmpint(fake_ioctl(w, VIDIOC_QUERYBUF, &b), ==, 0);
		g_assert_cmpint(vb_queue_mmap_fd(v4l2cuse_fh_queue(w), b.m.offset, b.length, &fd,
						 &index), ==, 0);
		mem[i] = mmap(NULL, b.length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		g_assert_true(mem[i] != MAP_FAILED);
		len[i] = b.length;
		close(fd);
	}
	/* Poll before STREAMON: nothing to wait for. */
	g_assert_cmpuint(fake_poll(w, POLLOUT) & POLLERR, ==, POLLERR);
	{
		g_autofree uint8_t *frame = uniform(&pix, 130);
		struct v4l2_buffer b = { .index = 0, .type = V4L2_BUF_TYPE_VIDEO_OUTPUT,
					 .memory = V4L2_MEMORY_MMAP, .bytesused = pix.sizeimage };

		memcpy(mem[0], frame, pix.sizeimage);
		g_assert_cmpint(fake_ioctl(w, VIDIOC_QBUF, &b), ==, 0);
		g_assert_cmpint(fake_ioctl(w, VIDIOC_STREAMON, &type), ==, 0);
	}
	wait_luma(f, 130);
	/* The buffer came back; poll says a buffer is free. */
	{
		struct v4l2_buffer b = { .type = V4L2_BUF_TYPE_VIDEO_OUTPUT,
					 .memory = V4L2_MEMORY_MMAP };

		g_assert_cmpuint(fake_poll(w, POLLOUT) & POLLOUT, ==, POLLOUT);
		g_assert_cmpint(fake_ioctl(w, VIDIOC_DQBUF, &b), ==, 0);
		g_assert_cmpuint(b.index, ==, 0);
		g_assert_cmpuint(b.bytesused, ==, pix.sizeimage);
	}
	/* Another handle cannot write meanwhile; the writer cannot write() while streaming. */
	g_assert_cmpint(fake_write(other, mem[0], pix.sizeimage), ==, -EBUSY);
	g_assert_cmpint(fake_write(w, mem[0], pix.sizeimage), ==, -EBUSY);
	/* A buffer short of a frame is refused, not shown; more than the buffer is EINVAL. */
	{
		struct v4l2_buffer b = { .index = 1, .type = V4L2_BUF_TYPE_VIDEO_OUTPUT,
					 .memory = V4L2_MEMORY_MMAP, .bytesused = 100 };

		memset(mem[1], 10, len[1]);
		g_assert_cmpint(fake_ioctl(w, VIDIOC_QBUF, &b), ==, 0);
		b = (struct v4l2_buffer){ .index = 0, .type = V4L2_BUF_TYPE_VIDEO_OUTPUT,
					  .memory = V4L2_MEMORY_MMAP, .bytesused = len[0] + 1 };
		g_assert_cmpint(fake_ioctl(w, VIDIOC_QBUF, &b), ==, -EINVAL);
	}
	wait_luma(f, 130);
	g_assert_cmpint(fake_ioctl(w, VIDIOC_STREAMOFF, &type), ==, 0);
	/* Its buffers still hold the queue (vb2); REQBUFS(0) lets go. */
	g_assert_cmpint(fake_write(other, mem[0], pix.sizeimage), ==, -EBUSY);
	rb.count = 0;
	g_assert_cmpint(fake_ioctl(w, VIDIOC_REQBUFS, &rb), ==, 0);
	/* The writer left: another may write now. */
	write_seen(f, other, &pix, 40);
	munmap(mem[0], len[0]);
	munmap(mem[1], len[1]);
	v4l2cuse_fh_release(other);
	v4l2cuse_fh_release(w);
}

/*
 * A handle that became the writer with write() and then streams (what the
 * shim's write() emulation does behind the app's back, docs/shim.md) stays
 * the writer when its stream stops, until it closes; the write() call it
 * left unfinished ends when its first queued frame comes.
 */
V4L2CUSE_TEST_F("/loopback/write-then-stream", test_write_then_stream)
{
	struct v4l2_pix_format pix;
	struct v4l2cuse_fh *w = open_writer(f, V4L2_PIX_FMT_YUYV, 320, 240, &pix);
	struct v4l2cuse_fh *other = fake_open(f->writer, false, O_RDWR);
	struct v4l2_requestbuffers rb = { .count = 2, .type = V4L2_BUF_TYPE_VIDEO_OUTPUT,
					  .memory = V4L2_MEMORY_MMAP };
	struct v4l2_format fmt = { .type = V4L2_BUF_TYPE_VIDEO_OUTPUT };
	g_autofree uint8_t *frame = uniform(&pix, 90);
	struct v4l2cuse_loopback_stats lb;
	int type = V4L2_BUF_TYPE_VIDEO_OUTPUT;
	uint64_t refused;
	unsigned int index;
	uint8_t *mem;
	int fd;

	write_seen(f, w, &pix, 60);
	/* Half a frame: taken, not shown, not counted yet. */
	g_assert_cmpint(fake_write(w, frame, pix.sizeimage / 2), ==, pix.sizeimage / 2);
	g_assert_cmpint(v4l2cuse_device_loopback_stats(f->writer, &lb), ==, 0);
	refused = lb.refused;

	/* The writer streams a frame of its own. */
	v4l2cuse_fh_set_streaming(w, true);
	g_assert_cmpint(fake_ioctl(w, VIDIOC_REQBUFS, &rb), ==, 0);
	{
		struct v4l2_buffer b = { .index = 0, .type = V4L2_BUF_TYPE_VIDEO_OUTPUT,
					 .memory = V4L2_MEMORY_MMAP };

		g_assert_cmpint(fake_ioctl(w, VIDIOC_QUERYBUF, &b), ==, 0);
		g_assert_cmpint(vb_queue_mmap_fd(v4l2cuse_fh_queue(w), b.m.offset, b.length, &fd,
						 &index), ==, 0);
		mem = mmap(NULL, b.length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		g_assert_true(mem != MAP_FAILED);
		close(fd);
		memcpy(mem, frame, pix.sizeimage);
		b = (struct v4l2_buffer){ .index = 0, .type = V4L2_BUF_TYPE_VIDEO_OUTPUT,
					  .memory = V4L2_MEMORY_MMAP, .bytesused = pix.sizeimage };
		g_assert_cmpint(fake_ioctl(w, VIDIOC_STREAMON, &type), ==, 0);
		g_assert_cmpint(fake_ioctl(w, VIDIOC_QBUF, &b), ==, 0);
		munmap(mem, pix.sizeimage);
	}
	wait_luma(f, 90);
	/* The unfinished write() call ended with it: refused now, as a next write() would. */
	g_assert_cmpint(v4l2cuse_device_loopback_stats(f->writer, &lb), ==, 0);
	g_assert_cmpuint(lb.refused, ==, refused + 1);

	/* Its stream stops and its buffers go: it is still the writer. */
	g_assert_cmpint(fake_ioctl(w, VIDIOC_STREAMOFF, &type), ==, 0);
	rb.count = 0;
	g_assert_cmpint(fake_ioctl(w, VIDIOC_REQBUFS, &rb), ==, 0);
	g_assert_cmpint(v4l2cuse_device_loopback_stats(f->writer, &lb), ==, 0);
	g_assert_true(lb.connected);
	g_assert_cmpint(fake_write(other, frame, pix.sizeimage), ==, -EBUSY);
	fmt.fmt.pix = pix;
	g_assert_cmpint(fake_ioctl(other, VIDIOC_S_FMT, &fmt), ==, -EBUSY);
	write_seen(f, w, &pix, 120);
	/* Until it closes. */
	v4l2cuse_fh_release(w);
	write_seen(f, other, &pix, 40);
	v4l2cuse_fh_release(other);
}

/* ---------------------------------------------------------------------- */
/* A writer that dies mid-frame (docs/loopback.md, "Writers that die") */

/*
 * The reader's next frame, which must be one written frame whole: frame N
 * is written with every byte N, so a frame mixing two has two values. The
 * value.
 */
static uint8_t
next_whole(struct fixture *f)
{
	const uint8_t *p = next_frame(f);

	for (size_t i = 1; i < CW * CH * 2; i++) {
		if (p[i] != p[0])
			g_error("the reader got a torn frame: byte %zu is %u, byte 0 %u", i, p[i],
				p[0]);
	}
	return p[0];
}

/* Frames until the reader has frame @n; each one whole, none newer, none older than @since. */
static void
wait_whole(struct fixture *f, uint8_t since, uint8_t n)
{
	for (int i = 0; i < 20; i++) {
		uint8_t got = next_whole(f);

		g_assert_cmpuint(got, >=, since);
		g_assert_cmpuint(got, <=, n);
		if (got == n)
			return;
	}
	g_assert_not_reached();
}

/*
 * A CUSE write() writer killed in the middle of a frame: the kernel had
 * sent two of the five 128 KiB requests of its call (a 640x480 YUYV frame)
 * when the handle was released. The readers keep the previous frame whole,
 * while it writes and after it is gone, and the next writer's frames come
 * whole too: the daemon's frame buffer, which still held the old frame
 * past the two requests, is never shown.
 */
V4L2CUSE_TEST_F("/loopback/torn/cuse-writer-dies", test_torn_cuse_writer_dies)
{
	struct v4l2_pix_format pix;
	struct v4l2cuse_fh *w = open_writer(f, V4L2_PIX_FMT_YUYV, 640, 480, &pix);
	g_autofree uint8_t *frame = g_malloc(pix.sizeimage);
	struct v4l2cuse_loopback_stats lb;

	g_assert_cmpuint(pix.sizeimage, >, 4 * 128 * 1024);	/* five requests */
	for (uint8_t n = 1; n <= 2; n++) {
		memset(frame, n, pix.sizeimage);
		g_assert_cmpint(fake_write(w, frame, pix.sizeimage), ==, (ssize_t)pix.sizeimage);
		wait_whole(f, n - 1, n);
	}
	/* Frame 3: the first two requests of its call, as the kernel sends them. */
	memset(frame, 3, pix.sizeimage);
	g_assert_cmpint(fake_write(w, frame, 2 * 128 * 1024), ==, 2 * 128 * 1024);
	for (int i = 0; i < 5; i++)
		g_assert_cmpuint(next_whole(f), ==, 2);
	/* Killed: the kernel releases its handle. */
	v4l2cuse_fh_release(w);
	for (int i = 0; i < 5; i++)
		g_assert_cmpuint(next_whole(f), ==, 2);
	g_assert_false(signal_lost(f));
	g_assert_cmpint(v4l2cuse_device_loopback_stats(f->writer, &lb), ==, 0);
	g_assert_cmpuint(lb.written, ==, 2);
	g_assert_cmpuint(lb.refused, ==, 1);	/* frame 3, never shown */
	g_assert_false(lb.connected);

	/* The next writer's first frame, and one cut short by its exit too. */
	w = open_writer(f, V4L2_PIX_FMT_YUYV, 640, 480, &pix);
	memset(frame, 4, pix.sizeimage);
	g_assert_cmpint(fake_write(w, frame, pix.sizeimage), ==, (ssize_t)pix.sizeimage);
	wait_whole(f, 2, 4);
	memset(frame, 5, pix.sizeimage);
	g_assert_cmpint(fake_write(w, frame, 128 * 1024 + 100), ==, 128 * 1024 + 100);
	v4l2cuse_fh_release(w);
	for (int i = 0; i < 5; i++)
		g_assert_cmpuint(next_whole(f), ==, 4);
}

/* ---------------------------------------------------------------------- */
/* v4l2loopback's client-usage event (v4l2-relayd) */

static void
subscribe_usage(struct v4l2cuse_fh *fh, uint32_t type, uint32_t flags, int expect)
{
	struct v4l2_event_subscription sub = { .type = type, .flags = flags };

	g_assert_cmpint(fake_ioctl(fh, VIDIOC_SUBSCRIBE_EVENT, &sub), ==, expect);
}

/* DQEVENT on @fh: a client-usage event of @type, whose count it returns. */
static uint32_t
usage_event(struct v4l2cuse_fh *fh, uint32_t type)
{
	struct v4l2cuse_event_client_usage u;
	struct v4l2_event ev;

	g_assert_cmpint(fake_ioctl(fh, VIDIOC_DQEVENT, &ev), ==, 0);
	g_assert_cmpuint(ev.type, ==, type);
	g_assert_cmpuint(ev.id, ==, 0);
	memcpy(&u, ev.u.data, sizeof(u));
	return u.count;
}

static void
no_event(struct v4l2cuse_fh *fh)
{
	struct v4l2_event ev;

	g_assert_false(fake_poll(fh, POLLPRI) & POLLPRI);
	g_assert_cmpint(fake_ioctl(fh, VIDIOC_DQEVENT, &ev), ==, -ENOENT);
}

/* SEND_INITIAL: the count at once, as POLLPRI; the event's fields as DQEVENT fills them. */
V4L2CUSE_TEST_F_DATA("/loopback/client-usage/initial", test_usage_initial, "shared")
{
	struct v4l2cuse_fh *w = fake_open(f->writer, false, O_RDWR | O_NONBLOCK);
	struct v4l2cuse_fh *opener = fake_open(f->capture, false, O_RDWR | O_NONBLOCK);
	struct v4l2cuse_event_client_usage u;
	struct v4l2_event ev;
	struct timespec now;

	subscribe_usage(w, V4L2CUSE_EVENT_CLIENT_USAGE, V4L2_EVENT_SUB_FL_SEND_INITIAL, 0);
	g_assert_true(fake_poll(w, POLLPRI) & POLLPRI);
	g_assert_cmpint(fake_ioctl(w, VIDIOC_DQEVENT, &ev), ==, 0);
	clock_gettime(CLOCK_MONOTONIC, &now);
	g_assert_cmpuint(ev.type, ==, V4L2CUSE_EVENT_CLIENT_USAGE);
	g_assert_cmpuint(ev.type, ==, 0x08000000u + 0x08e00000u + 1);	/* v4l2loopback's */
	memcpy(&u, ev.u.data, sizeof(u));
	g_assert_cmpuint(u.count, ==, 0);	/* a handle that only opened is no reader */
	g_assert_cmpuint(ev.pending, ==, 0);
	g_assert_cmpuint(ev.sequence, ==, 0);
	g_assert_true(ev.timestamp.tv_sec || ev.timestamp.tv_nsec);
	g_assert_cmpint(ev.timestamp.tv_sec, <=, now.tv_sec);
	no_event(w);
	/* Subscribing again changes nothing: no second initial event (the kernel's). */
	subscribe_usage(w, V4L2CUSE_EVENT_CLIENT_USAGE, V4L2_EVENT_SUB_FL_SEND_INITIAL, 0);
	no_event(w);
	/* Without SEND_INITIAL: nothing until the count changes. */
	subscribe_usage(w, V4L2CUSE_EVENT_CLIENT_USAGE_OLD, 0, 0);
	no_event(w);
	v4l2cuse_fh_release(opener);
	v4l2cuse_fh_release(w);
}

/*
 * Each reader that streams or reads counts, on share=true each one (the
 * first v4l2loopback counted its readers, later ones say 0 or 1 with one
 * reader at a time); stopping and closing take them back, and POLLPRI
 * wakes the writer each time.
 */
V4L2CUSE_TEST_F_DATA("/loopback/client-usage/readers", test_usage_readers, "shared")
{
	int type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	struct v4l2cuse_fh *w = fake_open(f->writer, false, O_RDWR | O_NONBLOCK);
	struct v4l2cuse_fh *opener, *rd;
	struct fake_consumer second = { 0 };
	unsigned int woken;
	uint8_t b[64];

	subscribe_usage(w, V4L2CUSE_EVENT_CLIENT_USAGE, V4L2_EVENT_SUB_FL_SEND_INITIAL, 0);
	g_assert_cmpuint(usage_event(w, V4L2CUSE_EVENT_CLIENT_USAGE), ==, 0);
	g_assert_false(fake_poll(w, POLLPRI) & POLLPRI);	/* a poll that waits */
	woken = fake_poll_notifications();

	/* Opening the capture node is not reading it. */
	opener = fake_open(f->capture, false, O_RDWR | O_NONBLOCK);
	no_event(w);

	fake_consumer_start(&f->reader, f->capture, 4, 0);
	g_assert_cmpuint(fake_poll_notifications(), >, woken);
	g_assert_true(fake_poll(w, POLLPRI) & POLLPRI);
	g_assert_cmpuint(usage_event(w, V4L2CUSE_EVENT_CLIENT_USAGE), ==, 1);

	fake_consumer_start(&second, f->capture, 4, 0);
	g_assert_cmpuint(usage_event(w, V4L2CUSE_EVENT_CLIENT_USAGE), ==, 2);

	/* read() starts a stream too. */
	rd = fake_open(f->capture, false, O_RDWR | O_NONBLOCK);
	fake_read(rd, b, sizeof(b), O_NONBLOCK);
	g_assert_cmpuint(usage_event(w, V4L2CUSE_EVENT_CLIENT_USAGE), ==, 3);
	v4l2cuse_fh_release(rd);
	g_assert_cmpuint(usage_event(w, V4L2CUSE_EVENT_CLIENT_USAGE), ==, 2);

	/* STREAMOFF, then close of a streaming reader. */
	woken = fake_poll_notifications();
	g_assert_false(fake_poll(w, POLLPRI) & POLLPRI);
	g_assert_cmpint(fake_ioctl(f->reader.fh, VIDIOC_STREAMOFF, &type), ==, 0);
	g_assert_cmpuint(fake_poll_notifications(), >, woken);
	g_assert_cmpuint(usage_event(w, V4L2CUSE_EVENT_CLIENT_USAGE), ==, 1);
	fake_consumer_close(&second);
	g_assert_cmpuint(usage_event(w, V4L2CUSE_EVENT_CLIENT_USAGE), ==, 0);
	no_event(w);
	/* A stopped reader closing is no change. */
	fake_consumer_close(&f->reader);
	v4l2cuse_fh_release(opener);
	no_event(w);
	v4l2cuse_fh_release(w);
}

/*
 * Both ids: each subscription gets events of its own type; a writer that
 * did not dequeue finds only the newest count (v4l2loopback's one-element
 * queue), with the sequence going on and the pending count right.
 */
V4L2CUSE_TEST_F_DATA("/loopback/client-usage/both-ids", test_usage_both_ids, "shared")
{
	struct v4l2cuse_fh *w = fake_open(f->writer, false, O_RDWR | O_NONBLOCK);
	struct v4l2cuse_fh *old = fake_open(f->writer, false, O_RDWR | O_NONBLOCK);
	struct fake_consumer second = { 0 };
	struct v4l2cuse_event_client_usage u;
	struct v4l2_event ev;

	subscribe_usage(w, V4L2CUSE_EVENT_CLIENT_USAGE, V4L2_EVENT_SUB_FL_SEND_INITIAL, 0);
	subscribe_usage(w, V4L2CUSE_EVENT_CLIENT_USAGE_OLD, V4L2_EVENT_SUB_FL_SEND_INITIAL, 0);
	subscribe_usage(old, V4L2_EVENT_PRIVATE_START, V4L2_EVENT_SUB_FL_SEND_INITIAL, 0);
	g_assert_cmpuint(usage_event(old, V4L2_EVENT_PRIVATE_START), ==, 0);

	/* Two readers come, the events wait: one of each type, the newest count. */
	fake_consumer_start(&f->reader, f->capture, 4, 0);
	fake_consumer_start(&second, f->capture, 4, 0);
	g_assert_cmpint(fake_ioctl(w, VIDIOC_DQEVENT, &ev), ==, 0);
	g_assert_cmpuint(ev.type, ==, V4L2CUSE_EVENT_CLIENT_USAGE);
	g_assert_cmpuint(ev.pending, ==, 1);
	g_assert_cmpuint(ev.sequence, ==, 4);	/* 0, 1: initial; 2, 3: replaced */
	memcpy(&u, ev.u.data, sizeof(u));
	g_assert_cmpuint(u.count, ==, 2);
	g_assert_cmpint(fake_ioctl(w, VIDIOC_DQEVENT, &ev), ==, 0);
	g_assert_cmpuint(ev.type, ==, V4L2CUSE_EVENT_CLIENT_USAGE_OLD);
	g_assert_cmpuint(ev.pending, ==, 0);
	g_assert_cmpuint(ev.sequence, ==, 5);
	memcpy(&u, ev.u.data, sizeof(u));
	g_assert_cmpuint(u.count, ==, 2);
	no_event(w);
	g_assert_cmpuint(usage_event(old, V4L2_EVENT_PRIVATE_START), ==, 2);
	no_event(old);

	fake_consumer_close(&second);
	g_assert_cmpuint(usage_event(w, V4L2CUSE_EVENT_CLIENT_USAGE), ==, 1);
	g_assert_cmpuint(usage_event(w, V4L2CUSE_EVENT_CLIENT_USAGE_OLD), ==, 1);
	g_assert_cmpuint(usage_event(old, V4L2_EVENT_PRIVATE_START), ==, 1);
	v4l2cuse_fh_release(old);
	v4l2cuse_fh_release(w);
}

/* UNSUBSCRIBE drops what is pending and stops the events; ALL as well. */
V4L2CUSE_TEST_F_DATA("/loopback/client-usage/unsubscribe", test_usage_unsubscribe, "shared")
{
	struct v4l2cuse_fh *w = fake_open(f->writer, false, O_RDWR | O_NONBLOCK);
	struct v4l2_event_subscription sub = { .type = V4L2CUSE_EVENT_CLIENT_USAGE };
	int type = V4L2_BUF_TYPE_VIDEO_CAPTURE;

	subscribe_usage(w, V4L2CUSE_EVENT_CLIENT_USAGE, V4L2_EVENT_SUB_FL_SEND_INITIAL, 0);
	subscribe_usage(w, V4L2CUSE_EVENT_CLIENT_USAGE_OLD, 0, 0);
	g_assert_cmpint(fake_ioctl(w, VIDIOC_UNSUBSCRIBE_EVENT, &sub), ==, 0);
	no_event(w);	/* the initial event went with it */
	fake_consumer_start(&f->reader, f->capture, 4, 0);
	g_assert_cmpuint(usage_event(w, V4L2CUSE_EVENT_CLIENT_USAGE_OLD), ==, 1);
	no_event(w);
	sub.type = V4L2_EVENT_ALL;
	g_assert_cmpint(fake_ioctl(w, VIDIOC_UNSUBSCRIBE_EVENT, &sub), ==, 0);
	g_assert_cmpint(fake_ioctl(f->reader.fh, VIDIOC_STREAMOFF, &type), ==, 0);
	no_event(w);
	v4l2cuse_fh_release(w);
}

/*
 * Only a writer node answers the private ids, with id 0; the capture node
 * refuses them as nodes refuse unknown event types (EINVAL).
 */
V4L2CUSE_TEST_F("/loopback/client-usage/writer-only", test_usage_writer_only)
{
	struct v4l2cuse_fh *w = fake_open(f->writer, false, O_RDWR | O_NONBLOCK);
	struct v4l2_event_subscription sub = { .type = V4L2CUSE_EVENT_CLIENT_USAGE, .id = 1 };

	subscribe_usage(f->reader.fh, V4L2CUSE_EVENT_CLIENT_USAGE, 0, -EINVAL);
	subscribe_usage(f->reader.fh, V4L2CUSE_EVENT_CLIENT_USAGE_OLD,
			V4L2_EVENT_SUB_FL_SEND_INITIAL, -EINVAL);
	g_assert_cmpint(fake_ioctl(w, VIDIOC_SUBSCRIBE_EVENT, &sub), ==, -EINVAL);
	subscribe_usage(w, V4L2CUSE_EVENT_CLIENT_USAGE + 1, 0, -EINVAL);
	/* The fixture's reader streams: the initial count is 1. */
	subscribe_usage(w, V4L2CUSE_EVENT_CLIENT_USAGE_OLD, V4L2_EVENT_SUB_FL_SEND_INITIAL, 0);
	g_assert_cmpuint(usage_event(w, V4L2CUSE_EVENT_CLIENT_USAGE_OLD), ==, 1);
	v4l2cuse_fh_release(w);
}

/* ---------------------------------------------------------------------- */
/* pyvirtualcam (its native_linux_v4l2loopback backend, 0.14) */

#define PV_W 320
#define PV_H 240

/* The 75% colour bars, limited-range BT.601 Y'CbCr: 40 pixels each at PV_W. */
static const uint8_t pv_bars[8][3] = {
	{ 180, 128, 128 }, { 161, 44, 142 }, { 131, 156, 44 }, { 112, 72, 58 },
	{ 84, 184, 198 }, { 65, 100, 212 }, { 35, 212, 114 }, { 16, 128, 128 },
};

/*
 * Its probe of one node: open(O_WRONLY | O_SYNC), QUERYCAP, then it keeps
 * the node only if `capabilities` (not device_caps) has VIDEO_OUTPUT and
 * `driver` is exactly "v4l2 loopback"; otherwise it closes it and tries
 * the next /dev/videoN. NULL: skipped.
 */
static struct v4l2cuse_fh *
pv_probe(struct v4l2cuse_device *dev)
{
	struct v4l2cuse_fh *fh = fake_open(dev, false, O_WRONLY | O_SYNC);
	struct v4l2_capability cap;

	if (fake_ioctl(fh, VIDIOC_QUERYCAP, &cap) == 0 &&
	    (cap.capabilities & V4L2_CAP_VIDEO_OUTPUT) &&
	    strcmp((const char *)cap.driver, "v4l2 loopback") == 0)
		return fh;
	v4l2cuse_fh_release(fh);
	return NULL;
}

/*
 * A frame as pyvirtualcam hands it to write(): tightly packed, of its own
 * size (w*h*3/2, w*h*2 or w*h), whatever S_FMT answered.
 */
static uint8_t *
pv_frame(uint32_t fourcc, size_t *ret_size)
{
	size_t luma = PV_W * PV_H, size;
	uint8_t *p;

	switch (fourcc) {
	case V4L2_PIX_FMT_YUV420:
	case V4L2_PIX_FMT_NV12:
		size = luma * 3 / 2;
		break;
	case V4L2_PIX_FMT_YUYV:
	case V4L2_PIX_FMT_UYVY:
		size = luma * 2;
		break;
	default:
		size = luma;		/* GREY */
		break;
	}
	p = g_malloc(size);
	for (uint32_t y = 0; y < PV_H; y++) {
		for (uint32_t x = 0; x < PV_W; x++) {
			const uint8_t *c = pv_bars[x / (PV_W / 8)];
			size_t cw = PV_W / 2, ci = (size_t)(y / 2) * cw + x / 2;

			switch (fourcc) {
			case V4L2_PIX_FMT_YUV420:
				p[y * PV_W + x] = c[0];
				p[luma + ci] = c[1];
				p[luma + luma / 4 + ci] = c[2];
				break;
			case V4L2_PIX_FMT_NV12:
				p[y * PV_W + x] = c[0];
				p[luma + (size_t)(y / 2) * PV_W + (x & ~1u)] = c[1];
				p[luma + (size_t)(y / 2) * PV_W + (x | 1u)] = c[2];
				break;
			case V4L2_PIX_FMT_YUYV:
				p[(y * PV_W + x) * 2] = c[0];
				p[(y * PV_W + x) * 2 + 1] = x & 1 ? c[2] : c[1];
				break;
			case V4L2_PIX_FMT_UYVY:
				p[(y * PV_W + x) * 2 + 1] = c[0];
				p[(y * PV_W + x) * 2] = x & 1 ? c[2] : c[1];
				break;
			default:
				p[y * PV_W + x] = c[0];
				break;
			}
		}
	}
	*ret_size = size;
	return p;
}

/*
 * The reader's frame (CW x CH YUYV) shows the bars. GREY: neutral chroma,
 * and luma as full range (pyvirtualcam's GRAY is libyuv's J400, full-range
 * luma, as V4L2's GREY), which a limited-range reader sees as 16 + Y*219/255.
 */
static bool
pv_reader_sees_bars(const uint8_t *p, bool grey)
{
	for (unsigned int i = 0; i < 8; i++) {
		uint32_t x = (i * (CW / 8) + CW / 16) & ~1u;
		const uint8_t *px = p + ((size_t)CH / 2 * CW + x) * 2;
		int y = grey ? 16 + (pv_bars[i][0] * 219 + 127) / 255 : pv_bars[i][0];
		int cb = grey ? 128 : pv_bars[i][1], cr = grey ? 128 : pv_bars[i][2];

		if (ABS(px[0] - y) > 2 || ABS(px[1] - cb) > 2 || ABS(px[3] - cr) > 2)
			return false;
	}
	return true;
}

/*
 * pyvirtualcam's whole sequence: the probe (the capture node, then the
 * writer node, in /dev/videoN order), S_FMT(OUTPUT) with only width,
 * height and pixelformat set (it leaves bytesperline, sizeimage and the
 * colorimetry to the driver and ignores the answer; no G_FMT, no S_PARM:
 * it paces itself), one write() per frame, close.
 */
static void
pv_replay(struct fixture *f, uint32_t fourcc)
{
	struct v4l2_format fmt;
	struct v4l2cuse_fh *w;
	g_autofree uint8_t *frame = NULL;
	size_t size;
	int i;

	g_assert_null(pv_probe(f->capture));
	w = pv_probe(f->writer);
	g_assert_nonnull(w);

	memset(&fmt, 0, sizeof(fmt));
	fmt.type = V4L2_BUF_TYPE_VIDEO_OUTPUT;
	fmt.fmt.pix.width = PV_W;
	fmt.fmt.pix.height = PV_H;
	fmt.fmt.pix.pixelformat = fourcc;
	g_assert_cmpint(fake_ioctl(w, VIDIOC_S_FMT, &fmt), ==, 0);

	frame = pv_frame(fourcc, &size);
	g_assert_cmpint(fake_write(w, frame, size), ==, (ssize_t)size);
	g_assert_cmpint(fake_write(w, frame, size), ==, (ssize_t)size);
	for (i = 0; i < 20; i++) {
		if (pv_reader_sees_bars(next_frame(f), fourcc == V4L2_PIX_FMT_GREY))
			break;
	}
	g_assert_cmpint(i, <, 20);
	g_assert_false(signal_lost(f));
	{
		struct v4l2cuse_loopback_stats lb;

		g_assert_cmpint(v4l2cuse_device_loopback_stats(f->capture, &lb), ==, 0);
		g_assert_cmpuint(lb.written, ==, 2);
		g_assert_cmpuint(lb.refused, ==, 0);
	}
	v4l2cuse_fh_release(w);
}

V4L2CUSE_TEST_F_DATA("/loopback/pyvirtualcam/i420", test_pv_i420, "compat")
{
	pv_replay(f, V4L2_PIX_FMT_YUV420);
}

V4L2CUSE_TEST_F_DATA("/loopback/pyvirtualcam/nv12", test_pv_nv12, "compat")
{
	pv_replay(f, V4L2_PIX_FMT_NV12);
}

V4L2CUSE_TEST_F_DATA("/loopback/pyvirtualcam/yuyv", test_pv_yuyv, "compat")
{
	pv_replay(f, V4L2_PIX_FMT_YUYV);
}

V4L2CUSE_TEST_F_DATA("/loopback/pyvirtualcam/uyvy", test_pv_uyvy, "compat")
{
	pv_replay(f, V4L2_PIX_FMT_UYVY);
}

V4L2CUSE_TEST_F_DATA("/loopback/pyvirtualcam/grey", test_pv_grey, "compat")
{
	pv_replay(f, V4L2_PIX_FMT_GREY);
}

/*
 * Without compat=1 its probe passes over both nodes (it would go on to
 * /dev/video99 and give up): the writer node says driver "v4l2cuse"
 * there, as every other node.
 */
V4L2CUSE_TEST_F("/loopback/pyvirtualcam/no-compat", test_pv_no_compat)
{
	struct v4l2cuse_fh *fh = fake_open(f->writer, false, O_WRONLY);
	struct v4l2_capability cap;

	g_assert_null(pv_probe(f->capture));
	g_assert_null(pv_probe(f->writer));
	g_assert_cmpint(fake_ioctl(fh, VIDIOC_QUERYCAP, &cap), ==, 0);
	g_assert_cmpstr((char *)cap.driver, ==, "v4l2cuse");
	g_assert_cmpstr((char *)cap.bus_info, ==, "platform:v4l2cuse-043");
	v4l2cuse_fh_release(fh);
}

/* With compat=1 the writer node passes for v4l2loopback's; the capture node does not. */
V4L2CUSE_TEST_F_DATA("/loopback/pyvirtualcam/compat-querycap", test_pv_compat_querycap, "compat")
{
	struct v4l2_capability cap;
	struct v4l2cuse_fh *fh = fake_open(f->writer, false, O_RDWR);

	g_assert_cmpint(fake_ioctl(fh, VIDIOC_QUERYCAP, &cap), ==, 0);
	g_assert_cmpstr((char *)cap.driver, ==, "v4l2 loopback");
	g_assert_cmpstr((char *)cap.bus_info, ==, "platform:v4l2loopback-043");
	g_assert_true(cap.capabilities & V4L2_CAP_VIDEO_OUTPUT);
	v4l2cuse_fh_release(fh);
	g_assert_cmpint(fake_ioctl(f->reader.fh, VIDIOC_QUERYCAP, &cap), ==, 0);
	g_assert_cmpstr((char *)cap.driver, ==, "v4l2cuse");
	g_assert_cmpstr((char *)cap.bus_info, ==, "platform:v4l2cuse-042");
	g_assert_false(cap.capabilities & V4L2_CAP_VIDEO_OUTPUT);
}

/*
 * OBS 29's virtual camera (Debian 12's obs-studio, written against
 * v4l2loopback 0.12): QUERYCAP, G_FMT, S_PARM, S_FMT YUYV, then
 * STREAMON(OUTPUT) with no buffers, which must succeed, then write() of
 * whole frames; at the end STREAMOFF (its argument passed by value: EFAULT
 * through CUSE, ignored) and close. With compat=1 that STREAMON is write()
 * I/O starting: it makes the handle the writer (another handle's is EBUSY),
 * with or without the shim; the frames reach the reader.
 */
static void
obs29_replay(struct fixture *f, bool shim)
{
	struct v4l2cuse_fh *w = fake_open(f->writer, false, O_RDWR);
	struct v4l2cuse_fh *other = fake_open(f->writer, false, O_RDWR);
	struct v4l2_format fmt = { .type = V4L2_BUF_TYPE_VIDEO_OUTPUT };
	struct v4l2_streamparm parm = { .type = V4L2_BUF_TYPE_VIDEO_OUTPUT };
	int type = V4L2_BUF_TYPE_VIDEO_OUTPUT;
	struct v4l2_capability cap;
	g_autofree uint8_t *frame = NULL;

	v4l2cuse_fh_set_streaming(w, shim);
	v4l2cuse_fh_set_streaming(other, shim);
	g_assert_cmpint(fake_ioctl(w, VIDIOC_QUERYCAP, &cap), ==, 0);
	g_assert_true(cap.device_caps & V4L2_CAP_VIDEO_OUTPUT);
	g_assert_cmpint(fake_ioctl(w, VIDIOC_G_FMT, &fmt), ==, 0);
	parm.parm.output.capability = V4L2_CAP_TIMEPERFRAME;
	parm.parm.output.timeperframe = (struct v4l2_fract){ 1, 30 };
	g_assert_cmpint(fake_ioctl(w, VIDIOC_S_PARM, &parm), ==, 0);
	fmt.fmt.pix.width = 320;
	fmt.fmt.pix.height = 240;
	fmt.fmt.pix.pixelformat = V4L2_PIX_FMT_YUYV;
	fmt.fmt.pix.sizeimage = 320 * 240 * 2;
	g_assert_cmpint(fake_ioctl(w, VIDIOC_S_FMT, &fmt), ==, 0);
	g_assert_cmpint(fake_ioctl(w, VIDIOC_STREAMON, &type), ==, 0);
	g_assert_cmpint(fake_ioctl(other, VIDIOC_STREAMON, &type), ==, -EBUSY);
	frame = uniform(&fmt.fmt.pix, 170);
	g_assert_cmpint(fake_write(w, frame, 320 * 240 * 2), ==, 320 * 240 * 2);
	wait_luma(f, 170);
	g_assert_cmpint(fake_ioctl(w, VIDIOC_STREAMOFF, &type), ==, 0);
	/* Still the writer until it closes, as after a write(). */
	g_assert_cmpint(fake_ioctl(other, VIDIOC_STREAMON, &type), ==, -EBUSY);
	v4l2cuse_fh_release(w);
	g_assert_cmpint(fake_ioctl(other, VIDIOC_STREAMON, &type), ==, 0);
	v4l2cuse_fh_release(other);
}

V4L2CUSE_TEST_F_DATA("/loopback/obs29/plain", test_obs29_plain, "compat")
{
	obs29_replay(f, false);
}

V4L2CUSE_TEST_F_DATA("/loopback/obs29/shim", test_obs29_shim, "compat")
{
	obs29_replay(f, true);
}

/*
 * Without compat=1 the node answers as vb2 does: STREAMON with no buffers
 * is EINVAL (ENOTTY without the shim: no streaming at all there).
 */
V4L2CUSE_TEST_F("/loopback/obs29/no-compat", test_obs29_no_compat)
{
	struct v4l2cuse_fh *w = fake_open(f->writer, false, O_RDWR);
	int type = V4L2_BUF_TYPE_VIDEO_OUTPUT;

	g_assert_cmpint(fake_ioctl(w, VIDIOC_STREAMON, &type), ==, -ENOTTY);
	v4l2cuse_fh_set_streaming(w, true);
	g_assert_cmpint(fake_ioctl(w, VIDIOC_STREAMON, &type), ==, -EINVAL);
	g_assert_cmpint(fake_ioctl(w, VIDIOC_STREAMOFF, &type), ==, 0);
	v4l2cuse_fh_release(w);
}

/* Writer sizes (v4l2loopback's min/max_width/height, set by /dev/v4l2loopback's ADD). */
V4L2CUSE_TEST("/loopback/writer-size-limits", test_writer_size_limits)
{
	struct v4l2cuse_hub *hub = v4l2cuse_hub_new();
	struct v4l2cuse_device *capture = device(hub, "video42", "loopback:video43,sizes=160x120,"
						 "min_width=321,max_width=1280,min_height=100,"
						 "max_height=721", false, CW, CH);
	struct v4l2cuse_device *writer = device(hub, "video43", "loopback-writer:video43", true,
						640, 480);
	struct v4l2cuse_fh *fh = fake_open(writer, false, O_RDWR | O_NONBLOCK);
	struct v4l2_frmsizeenum fs = { .pixel_format = V4L2_PIX_FMT_YUYV };
	struct v4l2_format fmt = { .type = V4L2_BUF_TYPE_VIDEO_OUTPUT };
	struct v4l2cuse_loopback_stats st;
	g_autofree char *err = NULL;
	struct v4l2cuse_source *src = NULL;

	/* Even: a minimum rounds up, a maximum down. */
	g_assert_cmpint(fake_ioctl(fh, VIDIOC_ENUM_FRAMESIZES, &fs), ==, 0);
	g_assert_cmpuint(fs.type, ==, V4L2_FRMSIZE_TYPE_STEPWISE);
	g_assert_cmpuint(fs.stepwise.min_width, ==, 322);
	g_assert_cmpuint(fs.stepwise.max_width, ==, 1280);
	g_assert_cmpuint(fs.stepwise.min_height, ==, 100);
	g_assert_cmpuint(fs.stepwise.max_height, ==, 720);
	/* S_FMT outside them is clamped into them. */
	fmt.fmt.pix = (struct v4l2_pix_format){ .width = 1920, .height = 64,
						.pixelformat = V4L2_PIX_FMT_YUYV };
	g_assert_cmpint(fake_ioctl(fh, VIDIOC_S_FMT, &fmt), ==, 0);
	g_assert_cmpuint(fmt.fmt.pix.width, ==, 1280);
	g_assert_cmpuint(fmt.fmt.pix.height, ==, 100);
	g_assert_cmpint(v4l2cuse_device_loopback_stats(capture, &st), ==, 0);
	g_assert_cmpuint(st.min_width, ==, 322);
	g_assert_cmpuint(st.max_height, ==, 720);
	v4l2cuse_fh_release(fh);
	v4l2cuse_device_free(writer);
	v4l2cuse_device_free(capture);

	/* No even size between them, or beyond what the writer takes: refused. */
	g_assert_cmpint(v4l2cuse_loopback_create(NULL, "loopback:video43,min_width=641,"
						 "max_width=641", &src, &err), ==, -EINVAL);
	g_assert_nonnull(strstr(err, "minimum is above the maximum"));
	g_clear_pointer(&err, g_free);
	g_assert_cmpint(v4l2cuse_loopback_create(NULL, "loopback:video43,max_height=8193", &src,
						 &err), ==, -EINVAL);
	g_assert_null(src);
	v4l2cuse_hub_free(hub);
}

/* --- pipewire: (a feed: the writer is v4l2cuse-pipewire) --- */

static uint32_t
info_flags(struct v4l2cuse_device *dev)
{
	struct v4l2cuse_fh *fh = fake_open(dev, false, O_RDWR | O_NONBLOCK);
	struct v4l2cuse_info info;
	uint32_t flags;

	g_assert_cmpint(fake_ioctl(fh, VIDIOC_V4L2CUSE_INFO, &info), ==, 0);
	flags = info.flags;
	v4l2cuse_fh_release(fh);
	return flags;
}

/*
 * Both nodes say "feed" (the bridge does not publish the capture node and
 * feeds the writer node); the writer node names the target and, once a
 * reader streams, the readers' format; frames written reach them as for
 * any loopback. A plain loopback is no feed.
 */
V4L2CUSE_TEST_F_DATA("/loopback/feed/info", test_feed_info, "feed")
{
	struct v4l2cuse_fh *w = fake_open(f->writer, false, O_RDWR | O_NONBLOCK);
	struct v4l2cuse_fh *c = fake_open(f->capture, false, O_RDWR | O_NONBLOCK);
	struct v4l2cuse_feed feed;
	struct v4l2_pix_format pix;

	g_assert_true(info_flags(f->capture) & V4L2CUSE_INFO_FEED);
	g_assert_true(info_flags(f->writer) & V4L2CUSE_INFO_FEED);
	g_assert_cmpint(fake_ioctl(c, VIDIOC_V4L2CUSE_FEED, &feed), ==, -ENOTTY);
	memset(&feed, 0xff, sizeof(feed));
	g_assert_cmpint(fake_ioctl(w, VIDIOC_V4L2CUSE_FEED, &feed), ==, 0);
	g_assert_cmpstr(feed.target, ==, "Fake Camera");
	/* The fixture's reader streams 160x120 YUYV at 60 fps. */
	g_assert_cmpuint(feed.width, ==, CW);
	g_assert_cmpuint(feed.height, ==, CH);
	g_assert_cmpuint(feed.pixelformat, ==, V4L2_PIX_FMT_YUYV);
	g_assert_cmpuint(feed.fps_num / feed.fps_den, ==, 60);
	g_assert_cmpuint(feed.reserved[0], ==, 0);
	v4l2cuse_fh_release(c);

	v4l2cuse_fh_release(w);
	w = open_writer(f, V4L2_PIX_FMT_YUYV, 320, 240, &pix);
	write_seen(f, w, &pix, 200);
	v4l2cuse_fh_release(w);

	/* No reader streams: no format asked for. */
	fake_consumer_close(&f->reader);
	w = fake_open(f->writer, false, O_RDWR | O_NONBLOCK);
	g_assert_cmpint(fake_ioctl(w, VIDIOC_V4L2CUSE_FEED, &feed), ==, 0);
	g_assert_cmpuint(feed.width, ==, 0);
	g_assert_cmpuint(feed.fps_den, ==, 0);
	v4l2cuse_fh_release(w);
}

V4L2CUSE_TEST_F("/loopback/feed/not-a-feed", test_feed_not_a_feed)
{
	struct v4l2cuse_fh *w = fake_open(f->writer, false, O_RDWR | O_NONBLOCK);
	struct v4l2cuse_feed feed;

	g_assert_false(info_flags(f->capture) & V4L2CUSE_INFO_FEED);
	g_assert_false(info_flags(f->writer) & V4L2CUSE_INFO_FEED);
	g_assert_cmpint(fake_ioctl(w, VIDIOC_V4L2CUSE_FEED, &feed), ==, -ENOTTY);
	v4l2cuse_fh_release(w);
}

/* The spec: the target is the first argument, the writer node an option. */
V4L2CUSE_TEST("/loopback/feed/spec", test_feed_spec)
{
	static const struct {
		const char *spec, *writer, *with;
	} ok[] = {
		{ "pipewire", NULL, "pipewire:,writer=video40" },
		{ "pipewire:", NULL, "pipewire:,writer=video40" },
		{ "pipewire:v4l2_input.pci-0000_00_14.0", NULL,
		  "pipewire:v4l2_input.pci-0000_00_14.0,writer=video40" },
		{ "pipewire:,fps=30", NULL, "pipewire:,fps=30,writer=video40" },
		{ "pipewire:Cam,writer=video50,timeout=0", "video50",
		  "pipewire:Cam,writer=video50,timeout=0" },
	};
	static const char *const bad[] = {
		"pipewire:Cam,writer=cam0",
		"pipewire:Cam,bogus=1",
		"loopback:video43,writer=video44",
	};

	g_assert_true(v4l2cuse_loopback_is_spec("pipewire:x"));
	g_assert_true(v4l2cuse_loopback_is_feed_spec("pipewire:x"));
	g_assert_false(v4l2cuse_loopback_is_feed_spec("loopback:video43"));
	g_assert_false(v4l2cuse_loopback_is_feed_spec("pipewirex:"));
	for (size_t i = 0; i < G_N_ELEMENTS(ok); i++) {
		g_autofree char *writer = NULL, *err = NULL, *with = NULL;

		g_assert_cmpint(v4l2cuse_loopback_parse(ok[i].spec, &writer, &err), ==, 0);
		g_assert_cmpstr(writer, ==, ok[i].writer);
		with = v4l2cuse_loopback_spec_with_writer(ok[i].spec, "video40");
		g_assert_cmpstr(with, ==, ok[i].with);
	}
	for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_autofree char *writer = NULL, *err = NULL;

		g_assert_cmpint(v4l2cuse_loopback_parse(bad[i], &writer, &err), ==, -EINVAL);
		g_assert_nonnull(err);
		g_assert_null(strchr(err, '\n'));
	}
}

/* A feed's capture end shows the placeholder after 3 s without frames by default. */
V4L2CUSE_TEST("/loopback/feed/timeout", test_feed_timeout)
{
	struct v4l2cuse_hub *hub = v4l2cuse_hub_new();
	struct v4l2cuse_device *c = device(hub, "video42", "pipewire:,writer=video43,sizes=160x120",
					   false, CW, CH);
	struct v4l2cuse_device *w = device(hub, "video43", "loopback-writer:video43", true, 640, 480);
	struct v4l2cuse_fh *fh = fake_open(w, false, O_RDWR | O_NONBLOCK);
	struct v4l2_control ctl = { .id = V4L2CUSE_CID_PRIVATE_BASE + 2 };

	g_assert_cmpint(fake_ioctl(fh, VIDIOC_G_CTRL, &ctl), ==, 0);
	g_assert_cmpint(ctl.value, ==, 3000);
	v4l2cuse_fh_release(fh);
	v4l2cuse_device_free(w);
	v4l2cuse_device_free(c);
	v4l2cuse_hub_free(hub);
}
