/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The uvc source's controls against a fake camera (fake-camera.h, its
 * controls answered from tables here): every standard class is offered
 * (camera class too), a driver's own class and read-only controls are
 * not; sets reach the camera; changes made on the camera (control events)
 * arrive through control_fd()/control_update(): values, flags, ranges.
 * While nobody streams the camera is closed: a get answers the value
 * remembered, a set is remembered and reaches the camera when it opens,
 * also one made while the source's thread sets the camera up.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>
#include <glib.h>
#include <linux/videodev2.h>

#include "v4l2cuse/source.h"
#include "fake-camera.h"
#include "test-source-util.h"
#include "test-main.h"

struct fake_ctrl {
	struct v4l2_query_ext_ctrl q;
	int64_t value;
};

#define CID_VIVID_TEST	0x00f0f000	/* a driver's own class */

static struct fake_ctrl fake_ctrls[] = {
	{ .q = { .id = V4L2_CID_BRIGHTNESS, .type = V4L2_CTRL_TYPE_INTEGER, .name = "Brightness",
		 .minimum = 0, .maximum = 255, .step = 1, .default_value = 128 }, .value = 100 },
	{ .q = { .id = V4L2_CID_EXPOSURE_AUTO, .type = V4L2_CTRL_TYPE_MENU,
		 .name = "Auto Exposure", .minimum = 0, .maximum = 3, .step = 1,
		 .default_value = 3 }, .value = 3 },
	{ .q = { .id = V4L2_CID_EXPOSURE_ABSOLUTE, .type = V4L2_CTRL_TYPE_INTEGER,
		 .name = "Exposure Time, Absolute", .minimum = 3, .maximum = 2047, .step = 1,
		 .default_value = 250, .flags = V4L2_CTRL_FLAG_INACTIVE }, .value = 250 },
	{ .q = { .id = V4L2_CID_FOCUS_ABSOLUTE, .type = V4L2_CTRL_TYPE_INTEGER,
		 .name = "Focus, Absolute", .minimum = 0, .maximum = 250, .step = 5,
		 .default_value = 0 }, .value = 40 },
	{ .q = { .id = V4L2_CID_PAN_ABSOLUTE, .type = V4L2_CTRL_TYPE_INTEGER,
		 .name = "Pan, Absolute", .minimum = -36000, .maximum = 36000, .step = 3600,
		 .default_value = 0 }, .value = 0 },
	/* Read-only and a driver's own class: not offered. */
	{ .q = { .id = V4L2_CID_PAN_SPEED, .type = V4L2_CTRL_TYPE_INTEGER, .name = "Pan, Speed",
		 .minimum = 0, .maximum = 1, .step = 1, .flags = V4L2_CTRL_FLAG_READ_ONLY } },
	{ .q = { .id = CID_VIVID_TEST, .type = V4L2_CTRL_TYPE_INTEGER, .name = "Test",
		 .minimum = 0, .maximum = 1, .step = 1 } },
};

static const char *const exposure_menu[] = {
	"Auto Mode", "Manual Mode", "Shutter Priority Mode", "Aperture Priority Mode",
};

static GQueue fake_events = G_QUEUE_INIT;
static unsigned int fake_subscribed;

static struct fake_ctrl *
fake_find(uint32_t id)
{
	for (size_t i = 0; i < G_N_ELEMENTS(fake_ctrls); i++) {
		if (fake_ctrls[i].q.id == id)
			return &fake_ctrls[i];
	}
	return NULL;
}

/* The camera's controls and events (fake-camera.c answers the rest). */
static int
ctrl_ioctl(int fd, unsigned long req, void *arg)
{
	switch (req) {
	case VIDIOC_QUERY_EXT_CTRL: {
		struct v4l2_query_ext_ctrl *q = arg;
		uint32_t id = q->id & ~(V4L2_CTRL_FLAG_NEXT_CTRL | V4L2_CTRL_FLAG_NEXT_COMPOUND);
		const struct fake_ctrl *best = NULL;

		for (size_t i = 0; i < G_N_ELEMENTS(fake_ctrls); i++) {
			const struct fake_ctrl *c = &fake_ctrls[i];

			if (q->id & V4L2_CTRL_FLAG_NEXT_CTRL ? c->q.id > id && (!best ||
								c->q.id < best->q.id)
							     : c->q.id == id)
				best = c;
		}
		if (!best)
			return -EINVAL;
		*q = best->q;
		return 0;
	}
	case VIDIOC_QUERYMENU: {
		struct v4l2_querymenu *m = arg;

		if (m->id != V4L2_CID_EXPOSURE_AUTO || m->index >= G_N_ELEMENTS(exposure_menu))
			return -EINVAL;
		g_strlcpy((char *)m->name, exposure_menu[m->index], sizeof(m->name));
		return 0;
	}
	case VIDIOC_G_EXT_CTRLS:
	case VIDIOC_S_EXT_CTRLS: {
		struct v4l2_ext_controls *cs = arg;
		struct fake_ctrl *c = cs->count == 1 ? fake_find(cs->controls[0].id) : NULL;

		if (!c)
			return -EINVAL;
		if (req == VIDIOC_G_EXT_CTRLS)
			cs->controls[0].value = (int32_t)c->value;
		else
			c->value = cs->controls[0].value;
		return 0;
	}
	case VIDIOC_SUBSCRIBE_EVENT: {
		const struct v4l2_event_subscription *s = arg;

		g_assert_cmpuint(s->type, ==, V4L2_EVENT_CTRL);
		g_assert_nonnull(fake_find(s->id));
		fake_subscribed++;
		return 0;
	}
	case VIDIOC_DQEVENT: {
		struct v4l2_event *ev = g_queue_pop_head(&fake_events);
		uint64_t n;

		if (!ev)
			return -ENOENT;
		*(struct v4l2_event *)arg = *ev;
		g_free(ev);
		if (g_queue_is_empty(&fake_events))
			while (read(fd, &n, sizeof(n)) > 0)
				;
		return 0;
	}
	default:
		return -ENOTTY;
	}
}

static const struct fake_camera_mode fake_modes[] = {
	{ 640, 480 },
};

static const struct fake_camera fake_camera = {
	.modes = fake_modes, .n_modes = G_N_ELEMENTS(fake_modes), .ioctl = ctrl_ioctl,
};

/* Another application changes a control on the camera: the kernel's event. */
static void
fake_event(uint32_t id, uint32_t changes, int64_t value, uint32_t flags, int32_t min,
	   int32_t max)
{
	struct v4l2_event *ev = g_new0(struct v4l2_event, 1);
	uint64_t one = 1;

	ev->type = V4L2_EVENT_CTRL;
	ev->id = id;
	ev->u.ctrl.changes = changes;
	ev->u.ctrl.value = (int32_t)value;
	ev->u.ctrl.flags = flags;
	ev->u.ctrl.minimum = min;
	ev->u.ctrl.maximum = max;
	ev->u.ctrl.step = 1;
	g_queue_push_tail(&fake_events, ev);
	g_assert_cmpint(write(fake_camera_fd(), &one, sizeof(one)), ==, sizeof(one));
}

static bool
readable(int fd)
{
	struct epoll_event ev;
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event add = { .events = EPOLLIN };
	int n;

	epoll_ctl(ep, EPOLL_CTL_ADD, fd, &add);
	n = epoll_wait(ep, &ev, 1, 0);
	close(ep);
	return n > 0;
}

static const struct v4l2cuse_control *
find_control(struct v4l2cuse_source *src, uint32_t id)
{
	const struct v4l2cuse_control *c;

	for (unsigned int i = 0; (c = v4l2cuse_source_control(src, i)); i++) {
		if (c->id == id)
			return c;
	}
	return NULL;
}

V4L2CUSE_TEST("/uvc-ctrls/classes-and-events", test_classes_and_events)
{
	struct v4l2cuse_source *src = NULL;
	g_autofree char *error = NULL;
	const struct v4l2cuse_control *c;
	unsigned int n = 0;
	int64_t v;
	int cfd;

	fake_camera_install(&fake_camera);
	/* Kept open: the camera's events arrive while nobody streams. */
	g_assert_cmpint(v4l2cuse_source_create("uvc:/fake/camera,keep_open=1", &src, &error),
			==, 0);
	g_assert_null(error);

	/* Offered: user and camera class; not the read-only one, not the driver's class. */
	for (unsigned int i = 0; v4l2cuse_source_control(src, i); i++)
		n++;
	g_assert_cmpuint(n, ==, 5);
	g_assert_null(find_control(src, V4L2_CID_PAN_SPEED));
	g_assert_null(find_control(src, CID_VIVID_TEST));
	c = find_control(src, V4L2_CID_EXPOSURE_AUTO);
	g_assert_nonnull(c);
	g_assert_cmpuint(c->type, ==, V4L2_CTRL_TYPE_MENU);
	g_assert_cmpstr(c->menu[1], ==, "Manual Mode");
	c = find_control(src, V4L2_CID_FOCUS_ABSOLUTE);
	g_assert_nonnull(c);
	g_assert_cmpint(c->step, ==, 5);
	/* The camera's current value is the default the daemon starts at. */
	g_assert_cmpint(c->default_value, ==, 40);
	g_assert_cmpuint(fake_subscribed, ==, 5);

	/* A set reaches the camera. */
	g_assert_cmpint(v4l2cuse_source_set_control(src, V4L2_CID_PAN_ABSOLUTE, 7200), ==, 0);
	g_assert_cmpint(fake_find(V4L2_CID_PAN_ABSOLUTE)->value, ==, 7200);

	/* Another application: manual exposure; exposure time becomes active. */
	cfd = v4l2cuse_source_control_fd(src);
	g_assert_cmpint(cfd, >=, 0);
	g_assert_false(readable(cfd));
	fake_event(V4L2_CID_EXPOSURE_AUTO, V4L2_EVENT_CTRL_CH_VALUE, 1, 0, 0, 3);
	fake_event(V4L2_CID_EXPOSURE_ABSOLUTE, V4L2_EVENT_CTRL_CH_FLAGS, 250, 0, 3, 2047);
	fake_event(V4L2_CID_BRIGHTNESS, V4L2_EVENT_CTRL_CH_VALUE | V4L2_EVENT_CTRL_CH_RANGE, 20,
		   0, 10, 100);
	g_assert_true(readable(cfd));
	v4l2cuse_source_control_update(src);
	g_assert_false(readable(cfd));
	g_assert_cmpint(v4l2cuse_source_get_control(src, V4L2_CID_EXPOSURE_AUTO, &v), ==, 0);
	g_assert_cmpint(v, ==, 1);
	c = find_control(src, V4L2_CID_EXPOSURE_ABSOLUTE);
	g_assert_false(c->flags & V4L2_CTRL_FLAG_INACTIVE);
	c = find_control(src, V4L2_CID_BRIGHTNESS);
	g_assert_cmpint(c->minimum, ==, 10);
	g_assert_cmpint(c->maximum, ==, 100);
	g_assert_cmpint(v4l2cuse_source_get_control(src, V4L2_CID_BRIGHTNESS, &v), ==, 0);
	g_assert_cmpint(v, ==, 20);
	/* An event for a control not offered is ignored. */
	fake_event(CID_VIVID_TEST, V4L2_EVENT_CTRL_CH_VALUE, 1, 0, 0, 1);
	v4l2cuse_source_control_update(src);
	g_assert_false(readable(cfd));

	v4l2cuse_source_destroy(src);
	fake_camera_remove();
}

/* Closed (nobody streams): sets are remembered and reach the camera at start(). */
V4L2CUSE_TEST("/uvc-ctrls/while-closed", test_while_closed)
{
	struct v4l2cuse_source *src = NULL;
	g_autofree char *error = NULL;
	g_autofree uint8_t *buf = g_malloc(640 * 480 * 2);
	struct v4l2_pix_format pix;
	struct v4l2cuse_frame f;
	int64_t v;

	fake_find(V4L2_CID_PAN_ABSOLUTE)->value = 0;
	fake_find(V4L2_CID_BRIGHTNESS)->value = 100;
	fake_camera_install(&fake_camera);
	g_assert_cmpint(v4l2cuse_source_create("uvc:/fake/camera", &src, &error), ==, 0);
	g_assert_cmpint(fake_camera_fd(), <, 0);
	g_assert_cmpint(v4l2cuse_source_get_control(src, V4L2_CID_BRIGHTNESS, &v), ==, 0);
	g_assert_cmpint(v, ==, 100);

	g_assert_cmpint(v4l2cuse_source_set_control(src, V4L2_CID_PAN_ABSOLUTE, -3600), ==, 0);
	g_assert_cmpint(v4l2cuse_source_set_control(src, V4L2_CID_BRIGHTNESS, 30), ==, 0);
	/* Not opened for it. */
	g_assert_cmpint(fake_camera_fd(), <, 0);
	g_assert_cmpuint(fake_camera_opens(), ==, 1);
	g_assert_cmpint(fake_find(V4L2_CID_PAN_ABSOLUTE)->value, ==, 0);
	g_assert_cmpint(v4l2cuse_source_get_control(src, V4L2_CID_PAN_ABSOLUTE, &v), ==, 0);
	g_assert_cmpint(v, ==, -3600);
	/* No events while closed: nothing to take in. */
	v4l2cuse_source_control_update(src);

	pix = ts_start(src, V4L2_PIX_FMT_YUYV, 640, 480, 1, 100);
	f = (struct v4l2cuse_frame){ .data = buf, .length = 640 * 480 * 2, .fmt = &pix };
	g_assert_cmpint(ts_produce_wait(src, &f, 2000, NULL), ==, 0);
	g_assert_cmpint(fake_find(V4L2_CID_PAN_ABSOLUTE)->value, ==, -3600);
	g_assert_cmpint(fake_find(V4L2_CID_BRIGHTNESS)->value, ==, 30);
	/* Open: a set goes straight to the camera. */
	g_assert_cmpint(v4l2cuse_source_set_control(src, V4L2_CID_BRIGHTNESS, 40), ==, 0);
	g_assert_cmpint(fake_find(V4L2_CID_BRIGHTNESS)->value, ==, 40);
	src->ops->stop(src);
	g_assert_cmpint(fake_camera_fd(), <, 0);

	v4l2cuse_source_destroy(src);
	fake_camera_remove();
}

/*
 * A set while the source's thread sets the camera up (after it applied the
 * values it had, before the stream is handed over) reaches the camera too.
 */
V4L2CUSE_TEST("/uvc-ctrls/set-while-opening", test_set_while_opening)
{
	struct v4l2cuse_source *src = NULL;
	g_autofree char *error = NULL;
	g_autofree uint8_t *buf = g_malloc(640 * 480 * 2);
	struct v4l2_pix_format pix;
	struct v4l2cuse_frame f;

	fake_find(V4L2_CID_FOCUS_ABSOLUTE)->value = 40;
	fake_camera_install(&fake_camera);
	g_assert_cmpint(v4l2cuse_source_create("uvc:/fake/camera", &src, &error), ==, 0);
	fake_camera_hold_setup(true);
	pix = ts_start(src, V4L2_PIX_FMT_YUYV, 640, 480, 1, 100);
	/* The thread waits in S_FMT: the controls are applied already. */
	g_assert_true(fake_camera_wait_parked());
	g_assert_cmpint(v4l2cuse_source_set_control(src, V4L2_CID_FOCUS_ABSOLUTE, 125), ==, 0);
	g_assert_cmpint(fake_find(V4L2_CID_FOCUS_ABSOLUTE)->value, ==, 40);
	fake_camera_hold_setup(false);
	f = (struct v4l2cuse_frame){ .data = buf, .length = 640 * 480 * 2, .fmt = &pix };
	g_assert_cmpint(ts_produce_wait(src, &f, 2000, NULL), ==, 0);
	g_assert_cmpint(fake_find(V4L2_CID_FOCUS_ABSOLUTE)->value, ==, 125);
	src->ops->stop(src);

	v4l2cuse_source_destroy(src);
	fake_camera_remove();
}
