/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The ioctl layer driven through a fake transport that replays the CUSE
 * retry protocol: argument validation and errnos for every ioctl, the
 * plain/shim split, priorities, controls and events, read() and DQBUF
 * parking with interrupts and STREAMOFF wake-ups.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>
#include <glib.h>
#include <linux/videodev2.h>

#include "v4l2cuse/loopback-abi.h"
#include "videobuf.h"
#include "device.h"
#include "fake-req.h"
#include "test-main.h"

struct fixture {
	struct v4l2cuse_device *dev;
	struct v4l2cuse_fh *fh;		/* plain */
	struct v4l2cuse_fh *shim;	/* streaming-capable */
};

static void
fixture_setup(struct fixture *f, gconstpointer data)
{
	struct v4l2cuse_device_config cfg = fake_yuyv_config("video42", data ? data : "pattern",
							     320, 240, 30);
	int r = 0;

	f->dev = fake_device(&cfg);
	f->fh = v4l2cuse_fh_open(f->dev, O_RDWR, 1, 0, &r);
	f->shim = v4l2cuse_fh_open(f->dev, O_RDWR, 2, 0, &r);
	g_assert_nonnull(f->fh);
	g_assert_nonnull(f->shim);
	v4l2cuse_fh_set_streaming(f->shim, true);
}

static void
fixture_teardown(struct fixture *f, gconstpointer data)
{
	v4l2cuse_fh_release(f->fh);
	v4l2cuse_fh_release(f->shim);
	v4l2cuse_device_free(f->dev);
}

V4L2CUSE_TEST_FIXTURE(struct fixture, fixture_setup, fixture_teardown);

/* Run the main loop until @p is answered (frames come from a timer). */
static void
wait_parked(struct fake_parked *p)
{
	gint64 end = g_get_monotonic_time() + 5 * G_USEC_PER_SEC;

	while (!p->answered && g_get_monotonic_time() < end)
		g_main_context_iteration(NULL, TRUE);
	g_assert_true(p->answered);
}

V4L2CUSE_TEST_F("/ioctl/querycap", test_querycap)
{
	struct v4l2_capability cap;
	int rounds = 0;

	memset(&cap, 0xff, sizeof(cap));
	g_assert_cmpint(fake_ioctl_rounds(f->fh, VIDIOC_QUERYCAP, &cap, &rounds), ==, 0);
	g_assert_cmpint(rounds, ==, 2);
	g_assert_cmpstr((char *)cap.driver, ==, "v4l2cuse");
	g_assert_cmpstr((char *)cap.bus_info, ==, "platform:v4l2cuse-042");
	g_assert_cmphex(cap.device_caps, ==,
			V4L2_CAP_VIDEO_CAPTURE | V4L2_CAP_READWRITE | V4L2_CAP_EXT_PIX_FORMAT);
	g_assert_cmphex(cap.capabilities, ==, cap.device_caps | V4L2_CAP_DEVICE_CAPS);
	g_assert_cmpuint(cap.reserved[0], ==, 0);	/* whole struct written */
	g_assert_cmpuint(cap.version >> 16, >=, 3);

	g_assert_cmpint(fake_ioctl(f->shim, VIDIOC_QUERYCAP, &cap), ==, 0);
	g_assert_true(cap.device_caps & V4L2_CAP_STREAMING);

	/* NULL argument: EFAULT in round one. */
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_QUERYCAP, NULL), ==, -EFAULT);
}

V4L2CUSE_TEST_F("/ioctl/invalid", test_invalid_ioctls)
{
	static uint8_t buf[16384];
	static const uint8_t zero[16384];
	unsigned int cmds[] = {
		_IOC(_IOC_NONE, 'V', 0xff, 0),
		_IOC(_IOC_READ, 'V', 0, 0x3fff),
		_IOC(_IOC_WRITE, 'V', 0, 0x3fff),
		_IOC(_IOC_READ | _IOC_WRITE, 'V', 0, 0x3fff),
		VIDIOC_G_STD, VIDIOC_CROPCAP, VIDIOC_G_SELECTION, VIDIOC_EXPBUF,
		VIDIOC_G_TUNER, VIDIOC_G_AUDIO, VIDIOC_DBG_G_REGISTER,
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cmds); i++) {
		int rounds = 0;

		memset(buf, 0, sizeof(buf));
		g_assert_cmpint(fake_ioctl_rounds(f->shim, cmds[i], buf, &rounds), ==, -ENOTTY);
		g_assert_cmpint(rounds, ==, 1);
		g_assert_cmpmem(buf, sizeof(buf), zero, sizeof(zero));
	}
}

V4L2CUSE_TEST_F("/ioctl/plain-no-streaming", test_plain_no_streaming)
{
	struct v4l2_requestbuffers rb = { .count = 2, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					  .memory = V4L2_MEMORY_MMAP };
	struct v4l2_buffer b = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP };
	int type = V4L2_BUF_TYPE_VIDEO_CAPTURE;

	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_REQBUFS, &rb), ==, -ENOTTY);
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_QUERYBUF, &b), ==, -ENOTTY);
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_QBUF, &b), ==, -ENOTTY);
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_DQBUF, &b), ==, -ENOTTY);
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_STREAMON, &type), ==, -ENOTTY);
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_STREAMOFF, &type), ==, -ENOTTY);

	g_assert_cmpint(fake_ioctl(f->shim, VIDIOC_REQBUFS, &rb), ==, 0);
	g_assert_cmpuint(rb.count, >=, 2);
	g_assert_true(rb.capabilities & V4L2_BUF_CAP_SUPPORTS_MMAP);
	/* The shim handle owns the queue now: a plain read() is refused. */
	{
		uint8_t byte;

		g_assert_cmpint(fake_read(f->fh, &byte, 1, O_NONBLOCK), ==, -EBUSY);
	}
	rb.count = 0;
	g_assert_cmpint(fake_ioctl(f->shim, VIDIOC_REQBUFS, &rb), ==, 0);
}

V4L2CUSE_TEST_F("/ioctl/priority", test_priority)
{
	uint32_t p = 0;
	struct v4l2_format fmt = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };

	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_G_PRIORITY, &p), ==, 0);
	g_assert_cmpuint(p, ==, V4L2_PRIORITY_DEFAULT);
	p = 4;
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_S_PRIORITY, &p), ==, -EINVAL);
	p = V4L2_PRIORITY_RECORD;
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_S_PRIORITY, &p), ==, 0);
	p = 0;
	g_assert_cmpint(fake_ioctl(f->shim, VIDIOC_G_PRIORITY, &p), ==, 0);
	g_assert_cmpuint(p, ==, V4L2_PRIORITY_RECORD);
	/* Outranked: priority-checked ioctls fail, S_PRIORITY included. */
	g_assert_cmpint(fake_ioctl(f->shim, VIDIOC_G_FMT, &fmt), ==, 0);
	g_assert_cmpint(fake_ioctl(f->shim, VIDIOC_S_FMT, &fmt), ==, -EBUSY);
	p = V4L2_PRIORITY_INTERACTIVE;
	g_assert_cmpint(fake_ioctl(f->shim, VIDIOC_S_PRIORITY, &p), ==, -EBUSY);
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_S_FMT, &fmt), ==, 0);
	/* Back to the default: the other handle may act again. */
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_S_PRIORITY, &p), ==, 0);
	g_assert_cmpint(fake_ioctl(f->shim, VIDIOC_S_FMT, &fmt), ==, 0);
}

V4L2CUSE_TEST_F("/ioctl/enum-fmt", test_enum_fmt)
{
	struct v4l2_fmtdesc d = { .index = 0, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	unsigned int n;

	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_ENUM_FMT, &d), ==, 0);
	g_assert_cmphex(d.pixelformat, ==, V4L2_PIX_FMT_YUYV);
	g_assert_cmpstr((char *)d.description, ==, "YUYV 4:2:2");
	for (n = 0;; n++) {
		d = (struct v4l2_fmtdesc){ .index = n, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
		if (fake_ioctl(f->fh, VIDIOC_ENUM_FMT, &d) < 0)
			break;
		g_assert_cmpuint(d.index, ==, n);
		g_assert_cmpuint(strlen((char *)d.description), >, 0);
		if (d.pixelformat == V4L2_PIX_FMT_MJPEG)
			g_assert_true(d.flags & V4L2_FMT_FLAG_COMPRESSED);
	}
	g_assert_cmpuint(n, >=, 2);
	d = (struct v4l2_fmtdesc){ .index = n, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_ENUM_FMT, &d), ==, -EINVAL);
	d = (struct v4l2_fmtdesc){ .index = 0, .type = V4L2_BUF_TYPE_VIDEO_OUTPUT };
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_ENUM_FMT, &d), ==, -EINVAL);
}

V4L2CUSE_TEST_F("/ioctl/fmt", test_fmt)
{
	struct v4l2_format g = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE }, t, s;

	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_G_FMT, &g), ==, 0);
	g_assert_cmpuint(g.fmt.pix.width, ==, 320);
	g_assert_cmpuint(g.fmt.pix.height, ==, 240);
	g_assert_cmpuint(g.fmt.pix.bytesperline, ==, 640);
	g_assert_cmpuint(g.fmt.pix.sizeimage, ==, 640 * 240);
	g_assert_cmpuint(g.fmt.pix.field, ==, V4L2_FIELD_NONE);
	g_assert_cmpuint(g.fmt.pix.colorspace, !=, 0);

	/* TRY(G) == G, byte for byte. */
	t = g;
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_TRY_FMT, &t), ==, 0);
	g_assert_cmpmem(&t, sizeof(t), &g, sizeof(g));

	/* Never fails for a bad fourcc or size: substitutes and clamps. */
	memset(&t, 0xff, sizeof(t));
	t.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_TRY_FMT, &t), ==, 0);
	g_assert_cmpuint(t.fmt.pix.width, >, 0);
	g_assert_cmpuint(t.fmt.pix.sizeimage, >, 0);
	g_assert_cmpuint(t.fmt.pix.field, ==, V4L2_FIELD_NONE);

	t = (struct v4l2_format){ .type = V4L2_BUF_TYPE_VIDEO_OUTPUT };
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_TRY_FMT, &t), ==, -EINVAL);
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_G_FMT, &t), ==, -EINVAL);
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_S_FMT, &t), ==, -EINVAL);

	/* S_FMT is global: the other handle sees it. */
	s = (struct v4l2_format){ .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	s.fmt.pix.width = 640;
	s.fmt.pix.height = 480;
	s.fmt.pix.pixelformat = V4L2_PIX_FMT_RGB24;
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_S_FMT, &s), ==, 0);
	g_assert_cmpuint(s.fmt.pix.bytesperline, ==, 640 * 3);
	g = (struct v4l2_format){ .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	g_assert_cmpint(fake_ioctl(f->shim, VIDIOC_G_FMT, &g), ==, 0);
	g_assert_cmpmem(&g, sizeof(g), &s, sizeof(s));
}

V4L2CUSE_TEST_F("/ioctl/framesizes", test_framesizes)
{
	struct v4l2_frmsizeenum fs = { .index = 0, .pixel_format = V4L2_PIX_FMT_YUYV };
	struct v4l2_frmivalenum fi = { 0 };
	bool seen_640 = false;

	for (fs.index = 0; fake_ioctl(f->fh, VIDIOC_ENUM_FRAMESIZES, &fs) == 0; fs.index++) {
		g_assert_cmpuint(fs.type, ==, V4L2_FRMSIZE_TYPE_DISCRETE);
		seen_640 |= fs.discrete.width == 640 && fs.discrete.height == 480;
	}
	g_assert_true(seen_640);
	fs = (struct v4l2_frmsizeenum){ .index = 0, .pixel_format = v4l2_fourcc('X', 'X', 'X', 'X') };
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_ENUM_FRAMESIZES, &fs), ==, -EINVAL);

	fi = (struct v4l2_frmivalenum){ .pixel_format = V4L2_PIX_FMT_YUYV, .width = 640,
					.height = 480 };
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_ENUM_FRAMEINTERVALS, &fi), ==, 0);
	g_assert_cmpuint(fi.type, ==, V4L2_FRMIVAL_TYPE_DISCRETE);
	g_assert_cmpuint(fi.discrete.numerator, >, 0);
	fi = (struct v4l2_frmivalenum){ .pixel_format = V4L2_PIX_FMT_YUYV, .width = 641,
					.height = 480 };
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_ENUM_FRAMEINTERVALS, &fi), ==, -EINVAL);
}

V4L2CUSE_TEST_F("/ioctl/parm-input", test_parm_input)
{
	struct v4l2_streamparm p = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	struct v4l2_input in = { .index = 0 };
	uint32_t idx = 0;
	int cur = -1;

	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_G_PARM, &p), ==, 0);
	g_assert_cmphex(p.parm.capture.capability, ==, V4L2_CAP_TIMEPERFRAME);
	g_assert_cmpuint(p.parm.capture.timeperframe.denominator, ==, 30);
	g_assert_cmpuint(p.parm.capture.readbuffers, >, 0);
	p.parm.capture.timeperframe = (struct v4l2_fract){ 0, 0 };
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_S_PARM, &p), ==, 0);
	g_assert_cmpuint(p.parm.capture.timeperframe.numerator, >, 0);
	p.parm.capture.timeperframe = (struct v4l2_fract){ 1, 0 };
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_S_PARM, &p), ==, 0);
	g_assert_cmpuint(p.parm.capture.timeperframe.denominator, >, 0);
	p.parm.capture.timeperframe = (struct v4l2_fract){ 1, 15 };
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_S_PARM, &p), ==, 0);
	g_assert_cmpuint(p.parm.capture.timeperframe.denominator, ==, 15);
	p.type = V4L2_BUF_TYPE_VIDEO_OUTPUT;
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_G_PARM, &p), ==, -EINVAL);

	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_ENUMINPUT, &in), ==, 0);
	g_assert_cmpuint(in.type, ==, V4L2_INPUT_TYPE_CAMERA);
	in.index = 1;
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_ENUMINPUT, &in), ==, -EINVAL);
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_G_INPUT, &cur), ==, 0);
	g_assert_cmpint(cur, ==, 0);
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_S_INPUT, &idx), ==, 0);
	idx = 1;
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_S_INPUT, &idx), ==, -EINVAL);
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_LOG_STATUS, NULL), ==, 0);
}

V4L2CUSE_TEST_F("/ioctl/controls", test_controls)
{
	struct v4l2_queryctrl q = { .id = V4L2_CTRL_FLAG_NEXT_CTRL };
	struct v4l2_control c = { .id = V4L2_CID_BRIGHTNESS };
	unsigned int n = 0;
	bool class_first = false;

	while (fake_ioctl(f->fh, VIDIOC_QUERYCTRL, &q) == 0) {
		if (n == 0)
			class_first = q.id == V4L2_CID_USER_CLASS &&
				      q.type == V4L2_CTRL_TYPE_CTRL_CLASS;
		n++;
		q.id |= V4L2_CTRL_FLAG_NEXT_CTRL;
	}
	g_assert_true(class_first);
	g_assert_cmpuint(n, >=, 7);	/* class + 6 user controls + pattern menu */

	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_G_CTRL, &c), ==, 0);
	c.value = 100000;	/* clamped */
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_S_CTRL, &c), ==, 0);
	g_assert_cmpint(c.value, ==, 255);
	c.id = V4L2_CID_USER_CLASS;
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_G_CTRL, &c), ==, -EINVAL);
	c.id = 0x12345678;
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_S_CTRL, &c), ==, -EINVAL);
}

V4L2CUSE_TEST_F("/ioctl/ext-ctrls", test_ext_ctrls)
{
	struct v4l2_ext_control ctrls[2] = {
		{ .id = V4L2_CID_BRIGHTNESS, .value = 10 },
		{ .id = V4L2_CID_CONTRAST, .value = 20 },
	};
	struct v4l2_ext_controls cs = { .which = V4L2_CTRL_WHICH_CUR_VAL, .count = 2,
					 .controls = ctrls };
	int rounds = 0;

	g_assert_cmpint(fake_ioctl_rounds(f->fh, VIDIOC_S_EXT_CTRLS, &cs, &rounds), ==, 0);
	g_assert_cmpint(rounds, ==, 3);
	ctrls[0].value = ctrls[1].value = 0;
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_G_EXT_CTRLS, &cs), ==, 0);
	g_assert_cmpint(ctrls[0].value, ==, 10);
	g_assert_cmpint(ctrls[1].value, ==, 20);

	/* count 0 succeeds; REQUEST_VAL is refused. */
	cs.count = 0;
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_G_EXT_CTRLS, &cs), ==, 0);
	cs.which = V4L2_CTRL_WHICH_REQUEST_VAL;
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_G_EXT_CTRLS, &cs), ==, -EINVAL);

	/* An invalid id: error_idx = count for G and S, the index for TRY. */
	cs = (struct v4l2_ext_controls){ .which = V4L2_CTRL_WHICH_CUR_VAL, .count = 2,
					 .controls = ctrls };
	ctrls[1].id = 0x00980fff;
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_G_EXT_CTRLS, &cs), ==, -EINVAL);
	g_assert_cmpuint(cs.error_idx, ==, 2);
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_S_EXT_CTRLS, &cs), ==, -EINVAL);
	g_assert_cmpuint(cs.error_idx, ==, 2);
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_TRY_EXT_CTRLS, &cs), ==, -EINVAL);
	g_assert_cmpuint(cs.error_idx, ==, 1);

	/* The class control is read-only and write-only. */
	ctrls[0].id = V4L2_CID_USER_CLASS;
	cs.count = 1;
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_G_EXT_CTRLS, &cs), ==, -EACCES);
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_TRY_EXT_CTRLS, &cs), ==, -EACCES);
	g_assert_cmpuint(cs.error_idx, ==, 0);

	/* Too many, or no array. */
	cs.count = V4L2_CID_MAX_CTRLS + 1;
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_G_EXT_CTRLS, &cs), ==, -EINVAL);
	cs.count = 1;
	cs.controls = NULL;
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_G_EXT_CTRLS, &cs), ==, -EFAULT);
}

V4L2CUSE_TEST_F("/ioctl/events", test_events)
{
	struct v4l2_event_subscription sub = { .type = V4L2_EVENT_CTRL, .id = V4L2_CID_BRIGHTNESS,
					       .flags = V4L2_EVENT_SUB_FL_SEND_INITIAL };
	struct v4l2_control c = { .id = V4L2_CID_BRIGHTNESS, .value = 77 };
	struct v4l2_event ev;

	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_DQEVENT, &ev), ==, -ENOENT);
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_SUBSCRIBE_EVENT, &sub), ==, 0);
	/* The initial event is visible at once, as POLLPRI. */
	g_assert_true(fake_poll(f->fh, POLLPRI) & POLLPRI);
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_DQEVENT, &ev), ==, 0);
	g_assert_cmpuint(ev.type, ==, V4L2_EVENT_CTRL);
	g_assert_cmpuint(ev.id, ==, V4L2_CID_BRIGHTNESS);
	g_assert_false(fake_poll(f->fh, POLLPRI) & POLLPRI);

	/* A change by another handle is reported; the setter's own is not. */
	g_assert_cmpint(fake_ioctl(f->shim, VIDIOC_S_CTRL, &c), ==, 0);
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_DQEVENT, &ev), ==, 0);
	g_assert_cmpint(ev.u.ctrl.value, ==, 77);
	c.value = 78;
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_S_CTRL, &c), ==, 0);
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_DQEVENT, &ev), ==, -ENOENT);

	sub = (struct v4l2_event_subscription){ .type = V4L2_EVENT_CTRL, .id = 0x00980fff };
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_SUBSCRIBE_EVENT, &sub), ==, -EINVAL);
	sub = (struct v4l2_event_subscription){ .type = 0x7777 };
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_SUBSCRIBE_EVENT, &sub), ==, -EINVAL);
	/* v4l2loopback's client-usage event is a writer node's (test-loopback.c). */
	sub = (struct v4l2_event_subscription){ .type = V4L2CUSE_EVENT_CLIENT_USAGE,
						.flags = V4L2_EVENT_SUB_FL_SEND_INITIAL };
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_SUBSCRIBE_EVENT, &sub), ==, -EINVAL);
	sub.type = V4L2CUSE_EVENT_CLIENT_USAGE_OLD;
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_SUBSCRIBE_EVENT, &sub), ==, -EINVAL);
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_DQEVENT, &ev), ==, -ENOENT);
	sub = (struct v4l2_event_subscription){ .type = V4L2_EVENT_ALL };
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_UNSUBSCRIBE_EVENT, &sub), ==, 0);
}

V4L2CUSE_TEST_F("/ioctl/read", test_read)
{
	size_t size = 320 * 240 * 2;
	g_autofree uint8_t *frame = g_malloc(size * 2);
	struct v4l2cuse_device_stats st;
	struct fake_parked *p;
	struct v4l2_format fmt = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	ssize_t n;

	/* Non-blocking: nothing yet. */
	g_assert_cmpint(fake_read(f->fh, frame, size, O_NONBLOCK), ==, -EAGAIN);
	/* Blocking: parks, then a whole frame arrives. */
	g_assert_cmpint(fake_read(f->fh, frame, size, 0), ==, FAKE_PARKED);
	p = fake_last_parked();
	wait_parked(p);
	g_assert_cmpint(p->result, ==, 0);
	g_assert_cmpuint(p->len, ==, 128 * 1024);	/* the first chunk */
	/*
	 * The rest of that syscall would follow as chunks with off != 0; the
	 * next whole read gets exactly sizeimage bytes, never spanning frames.
	 */
	n = fake_read(f->fh, frame, size - 128 * 1024, O_NONBLOCK);
	g_assert_cmpint(n, ==, (ssize_t)(size - 128 * 1024));
	for (int i = 0; i < 3; i++) {
		do {
			n = fake_read(f->fh, frame, size * 2, O_NONBLOCK);
			if (n == -EAGAIN)
				g_main_context_iteration(NULL, TRUE);
		} while (n == -EAGAIN);
		g_assert_cmpint(n, ==, (ssize_t)size);
	}
	/* The reader owns the queue: S_FMT is busy, streaming elsewhere too. */
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_G_FMT, &fmt), ==, 0);
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_S_FMT, &fmt), ==, -EBUSY);
	{
		struct v4l2_requestbuffers rb = { .count = 2,
						  .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
						  .memory = V4L2_MEMORY_MMAP };

		g_assert_cmpint(fake_ioctl(f->shim, VIDIOC_REQBUFS, &rb), ==, -EBUSY);
	}
	/* poll: a frame ready or coming; never POLLERR for the reader. */
	g_assert_false(fake_poll(f->fh, POLLIN) & POLLERR);

	/* A parked read is interrupted: EINTR, and counted (v4l2cuse-ctl stats). */
	while ((n = fake_read(f->fh, frame, size, O_NONBLOCK)) != -EAGAIN)
		g_assert_cmpint(n, ==, (ssize_t)size);
	g_assert_cmpint(fake_read(f->fh, frame, size, 0), ==, FAKE_PARKED);
	v4l2cuse_device_get_stats(f->dev, &st);
	g_assert_cmpuint(st.parked, ==, 1);
	g_assert_cmpuint(st.interrupted, ==, 0);
	p = fake_last_parked();
	fake_interrupt_last();
	g_assert_true(p->answered);
	g_assert_cmpint(p->result, ==, -EINTR);
	v4l2cuse_device_get_stats(f->dev, &st);
	g_assert_cmpuint(st.parked, ==, 0);
	g_assert_cmpuint(st.interrupted, ==, 1);
}

V4L2CUSE_TEST_F("/ioctl/dqbuf-parking", test_dqbuf_parking)
{
	struct v4l2_requestbuffers rb = { .count = 3, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					  .memory = V4L2_MEMORY_MMAP };
	struct v4l2_buffer b;
	int type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	struct v4l2cuse_device_stats st;
	struct fake_parked *p;

	g_assert_cmpint(fake_ioctl(f->shim, VIDIOC_REQBUFS, &rb), ==, 0);
	for (uint32_t i = 0; i < rb.count; i++) {
		b = (struct v4l2_buffer){ .index = i, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					  .memory = V4L2_MEMORY_MMAP };
		g_assert_cmpint(fake_ioctl(f->shim, VIDIOC_QBUF, &b), ==, 0);
	}
	b = (struct v4l2_buffer){ .index = 0, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
				  .memory = V4L2_MEMORY_MMAP };
	g_assert_cmpint(fake_ioctl(f->shim, VIDIOC_QBUF, &b), ==, -EINVAL);	/* double */
	/* The plain handle can't touch the owner's queue even with the shim. */
	g_assert_cmpint(fake_ioctl(f->shim, VIDIOC_STREAMON, &type), ==, 0);

	/* Blocking DQBUF parks and is answered with a filled buffer. */
	b = (struct v4l2_buffer){ .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP };
	g_assert_cmpint(fake_ioctl(f->shim, VIDIOC_DQBUF, &b), ==, FAKE_PARKED);
	p = fake_last_parked();
	wait_parked(p);
	g_assert_cmpint(p->result, ==, 0);

	/* Parked again: STREAMOFF (another thread of the app) wakes it, EINVAL. */
	for (;;) {
		b = (struct v4l2_buffer){ .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					  .memory = V4L2_MEMORY_MMAP };
		int r = fake_ioctl(f->shim, VIDIOC_DQBUF, &b);

		if (r == FAKE_PARKED)
			break;
		g_assert_cmpint(r, ==, 0);
	}
	p = fake_last_parked();
	g_assert_false(p->answered);
	/* A second blocking DQBUF on the same handle is refused. */
	g_assert_cmpint(fake_ioctl(f->shim, VIDIOC_DQBUF, &b), ==, -EBUSY);
	v4l2cuse_device_get_stats(f->dev, &st);
	g_assert_cmpuint(st.parked, ==, 1);
	g_assert_cmpint(fake_ioctl(f->shim, VIDIOC_STREAMOFF, &type), ==, 0);
	g_assert_true(p->answered);
	g_assert_cmpint(p->result, ==, -EINVAL);
	/* Woken, not interrupted. */
	v4l2cuse_device_get_stats(f->dev, &st);
	g_assert_cmpuint(st.parked, ==, 0);
	g_assert_cmpuint(st.interrupted, ==, 0);

	/* An interrupted DQBUF answers EINTR. */
	g_assert_cmpint(fake_ioctl(f->shim, VIDIOC_STREAMON, &type), ==, 0);
	for (uint32_t i = 0; i < rb.count; i++) {
		b = (struct v4l2_buffer){ .index = i, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					  .memory = V4L2_MEMORY_MMAP };
		fake_ioctl(f->shim, VIDIOC_QBUF, &b);
	}
	b = (struct v4l2_buffer){ .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP };
	while (fake_ioctl(f->shim, VIDIOC_DQBUF, &b) != FAKE_PARKED)
		;
	p = fake_last_parked();
	fake_interrupt_last();
	g_assert_cmpint(p->result, ==, -EINTR);
	v4l2cuse_device_get_stats(f->dev, &st);
	g_assert_cmpuint(st.parked, ==, 0);
	g_assert_cmpuint(st.interrupted, ==, 1);
	g_assert_cmpint(fake_ioctl(f->shim, VIDIOC_STREAMOFF, &type), ==, 0);
	rb.count = 0;
	g_assert_cmpint(fake_ioctl(f->shim, VIDIOC_REQBUFS, &rb), ==, 0);
}

V4L2CUSE_TEST_F("/ioctl/many-opens", test_many_opens)
{
	struct v4l2cuse_fh *fhs[V4L2CUSE_MAX_OPENS];
	unsigned int n = 0;
	int r = 0;

	for (; n < G_N_ELEMENTS(fhs); n++) {
		fhs[n] = v4l2cuse_fh_open(f->dev, O_RDWR, 3, 0, &r);
		if (!fhs[n])
			break;
	}
	g_assert_cmpuint(n, >=, 100);
	g_assert_cmpint(r, ==, -EMFILE);	/* the limit: a clean error */
	while (n--)
		v4l2cuse_fh_release(fhs[n]);
}

/* A 320x240 YUYV device with its own buffer memory limit under @global. */
static struct v4l2cuse_device *
budget_device(const char *name, uint64_t limit, struct vb_budget *global)
{
	struct v4l2cuse_device_config cfg = fake_yuyv_config(name, "pattern", 320, 240, 30);

	cfg.buffer_memory_limit = limit;
	cfg.global_budget = global;
	return fake_device(&cfg);
}

V4L2CUSE_TEST("/ioctl/buffer-memory", test_buffer_memory)
{
	const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	const uint64_t buf = (153600 + page - 1) / page * page;	/* 320x240 YUYV */
	struct vb_budget *global = vb_budget_new("global", 6 * buf, NULL);
	struct v4l2cuse_device *d1 = budget_device("video40", 5 * buf + 100, global);
	struct v4l2cuse_device *d2 = budget_device("video41", 0, global);
	struct v4l2cuse_device_stats st;
	struct v4l2cuse_fh *s1, *s2, *plain;
	struct v4l2_requestbuffers rb = {
		.count = 32, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP,
	};
	char frame[1024];
	int r = 0;

	s1 = v4l2cuse_fh_open(d1, O_RDWR, 2, 0, &r);
	s2 = v4l2cuse_fh_open(d2, O_RDWR, 2, 0, &r);
	plain = v4l2cuse_fh_open(d2, O_RDWR | O_NONBLOCK, 3, 0, &r);
	v4l2cuse_fh_set_streaming(s1, true);
	v4l2cuse_fh_set_streaming(s2, true);

	/* The device limit: 5 of 32. */
	g_assert_cmpint(fake_ioctl(s1, VIDIOC_REQBUFS, &rb), ==, 0);
	g_assert_cmpuint(rb.count, ==, 5);
	v4l2cuse_device_get_stats(d1, &st);
	g_assert_cmpuint(st.buffer_memory, ==, 5 * buf);
	g_assert_cmpuint(st.buffer_memory_limit, ==, 5 * buf + 100);
	g_assert_cmpuint(st.buffer_memory_refused, ==, 1);
	/* The global limit leaves one buffer for video41: below the minimum. */
	rb.count = 32;
	g_assert_cmpint(fake_ioctl(s2, VIDIOC_REQBUFS, &rb), ==, -ENOMEM);
	/* read() emulation is refused the same way. */
	g_assert_cmpint(fake_read(plain, frame, sizeof(frame), O_NONBLOCK), ==, -ENOMEM);
	/* CREATE_BUFS on video40: nothing more. */
	{
		struct v4l2_create_buffers cb = { .count = 1, .memory = V4L2_MEMORY_MMAP };

		cb.format.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
		g_assert_cmpint(fake_ioctl(s1, VIDIOC_G_FMT, &cb.format), ==, 0);
		g_assert_cmpint(fake_ioctl(s1, VIDIOC_CREATE_BUFS, &cb), ==, -ENOMEM);
	}
	/* Closing the owner frees its buffers: video41 gets its 6. */
	v4l2cuse_fh_release(s1);
	v4l2cuse_device_get_stats(d1, &st);
	g_assert_cmpuint(st.buffer_memory, ==, 0);
	rb.count = 32;
	g_assert_cmpint(fake_ioctl(s2, VIDIOC_REQBUFS, &rb), ==, 0);
	g_assert_cmpuint(rb.count, ==, 6);
	rb.count = 0;
	g_assert_cmpint(fake_ioctl(s2, VIDIOC_REQBUFS, &rb), ==, 0);
	v4l2cuse_fh_release(s2);
	v4l2cuse_fh_release(plain);
	v4l2cuse_device_free(d1);
	v4l2cuse_device_free(d2);
	{
		struct vb_budget_stats gs;

		vb_budget_get_stats(global, &gs);
		g_assert_cmpuint(gs.used, ==, 0);
		g_assert_cmpuint(gs.peak, ==, 6 * buf);
	}
	vb_budget_unref(global);
}
