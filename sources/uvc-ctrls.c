/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The uvc source's controls (uvc-private.h; uvc.c's header describes
 * which): the snapshot at create(), the control ops, applying the values
 * to a camera that is back, and the camera's control events (changes made
 * by other applications, or by the camera itself) taken in for
 * control_update().
 */

#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/epoll.h>

#include <glib.h>

#include "util/macros.h"
#include "v4l2cuse/format.h"
#include "uvc-private.h"

/* Flags passed on: the rest are the camera's business (GRABBED: its stream). */
#define UVC_CTRL_FLAGS	(V4L2_CTRL_FLAG_SLIDER | V4L2_CTRL_FLAG_WRITE_ONLY | \
			 V4L2_CTRL_FLAG_EXECUTE_ON_WRITE | V4L2_CTRL_FLAG_INACTIVE | \
			 V4L2_CTRL_FLAG_VOLATILE)

void
v4l2cuse_uvc_ctrl_free(struct uvc_ctrl *c)
{
	for (unsigned int i = 0; i <= UVC_MAX_MENU; i++)
		g_free(c->menu_store[i]);
}

/* A 32-bit control's value as the daemon keeps it (a bitmask is unsigned). */
static int64_t
uvc_value32(const struct v4l2cuse_control *d, int32_t v)
{
	return d->type == V4L2_CTRL_TYPE_BITMASK ? (int64_t)(uint32_t)v : v;
}

static int
uvc_get_value(int fd, const struct v4l2cuse_control *d, int64_t *ret)
{
	struct v4l2_ext_control c = { .id = d->id };
	struct v4l2_ext_controls cs = {
		.which = V4L2_CTRL_WHICH_CUR_VAL, .count = 1, .controls = &c,
	};
	int r = v4l2cuse_uvc_ioctl(fd, VIDIOC_G_EXT_CTRLS, &cs);

	if (r < 0)
		return r;
	*ret = d->type == V4L2_CTRL_TYPE_INTEGER64 ? c.value64 : uvc_value32(d, c.value);
	return 0;
}

static int
uvc_set_value(int fd, const struct v4l2cuse_control *d, int64_t v)
{
	struct v4l2_ext_control c = { .id = d->id };
	struct v4l2_ext_controls cs = {
		.which = V4L2_CTRL_WHICH_CUR_VAL, .count = 1, .controls = &c,
	};

	if (d->type == V4L2_CTRL_TYPE_INTEGER64)
		c.value64 = v;
	else
		c.value = (int32_t)v;
	return v4l2cuse_uvc_ioctl(fd, VIDIOC_S_EXT_CTRLS, &cs);
}

/*
 * The standard control classes (v4l2-controls.h: user, codec, camera,
 * flash, JPEG, image source and processing, DV, detection, ...). Driver
 * classes of their own (vivid's test class, with its buttons that unplug
 * the device and inject errors) are the driver's business, not a camera's
 * settings: not forwarded.
 */
static bool
uvc_standard_class(uint32_t id)
{
	uint32_t which = V4L2_CTRL_ID2WHICH(id);

	return which >= V4L2_CTRL_CLASS_USER && which <= V4L2_CTRL_CLASS_COLORIMETRY;
}

static bool
uvc_ctrl_usable(const struct v4l2_query_ext_ctrl *q)
{
	if (!uvc_standard_class(q->id) || q->nr_of_dims != 0 ||
	    (q->flags & (V4L2_CTRL_FLAG_DISABLED | V4L2_CTRL_FLAG_READ_ONLY)) ||
	    q->minimum > q->maximum)
		return false;
	switch (q->type) {
	case V4L2_CTRL_TYPE_INTEGER:
	case V4L2_CTRL_TYPE_BOOLEAN:
	case V4L2_CTRL_TYPE_INTEGER64:
	case V4L2_CTRL_TYPE_BUTTON:
	case V4L2_CTRL_TYPE_BITMASK:
		return true;
	case V4L2_CTRL_TYPE_MENU:
	case V4L2_CTRL_TYPE_INTEGER_MENU:
		return q->minimum >= 0 && q->maximum <= UVC_MAX_MENU;
	default:
		return false;	/* strings and compound controls */
	}
}

static void
uvc_snapshot_menu(struct uvc_ctrl *c, int fd, const struct v4l2_query_ext_ctrl *q)
{
	for (int64_t i = q->minimum; i <= q->maximum; i++) {
		struct v4l2_querymenu m = { .id = q->id, .index = (uint32_t)i };

		if (v4l2cuse_uvc_ioctl(fd, VIDIOC_QUERYMENU, &m) < 0)
			continue;
		if (q->type == V4L2_CTRL_TYPE_INTEGER_MENU) {
			c->menu_int[i] = m.value;
			c->menu_store[i] = g_strdup_printf("%lld", (long long)m.value);
		} else {
			c->menu_store[i] = g_strndup((const char *)m.name, sizeof(m.name));
		}
	}
	c->desc.menu = (const char *const *)c->menu_store;
	if (q->type == V4L2_CTRL_TYPE_INTEGER_MENU)
		c->desc.menu_int = c->menu_int;
}

void
v4l2cuse_uvc_snapshot_controls(struct uvc_source *u, int fd)
{
	struct v4l2_query_ext_ctrl q = { .id = V4L2_CTRL_FLAG_NEXT_CTRL };

	u->ctrls = g_new0(struct uvc_ctrl, UVC_MAX_CTRLS);
	while (u->n_ctrls < UVC_MAX_CTRLS &&
	       v4l2cuse_uvc_ioctl(fd, VIDIOC_QUERY_EXT_CTRL, &q) == 0) {
		struct uvc_ctrl *c = &u->ctrls[u->n_ctrls];
		uint32_t id = q.id;

		if (uvc_ctrl_usable(&q)) {
			memcpy(c->name, q.name, sizeof(c->name) - 1);
			c->desc = (struct v4l2cuse_control){
				.id = q.id, .type = q.type, .name = c->name,
				.minimum = q.minimum, .maximum = q.maximum, .step = q.step,
				.default_value = q.default_value,
				.flags = q.flags & UVC_CTRL_FLAGS,
			};
			if (q.type == V4L2_CTRL_TYPE_BUTTON)
				c->desc.flags |= V4L2_CTRL_FLAG_WRITE_ONLY;
			if (q.type == V4L2_CTRL_TYPE_MENU || q.type == V4L2_CTRL_TYPE_INTEGER_MENU)
				uvc_snapshot_menu(c, fd, &q);
			if (q.type == V4L2_CTRL_TYPE_BUTTON ||
			    uvc_get_value(fd, &c->desc, &u->values[u->n_ctrls]) < 0)
				u->values[u->n_ctrls] = q.default_value;
			/*
			 * The daemon starts every control at its default_value
			 * and does not ask get_control() (daemon/ctrls.c): offer
			 * the camera's current value as the default, so that the
			 * daemon's value is the camera's (else setting the real
			 * default would never reach a camera that is elsewhere).
			 */
			c->desc.default_value = u->values[u->n_ctrls];
			u->n_ctrls++;
		}
		q = (struct v4l2_query_ext_ctrl){ .id = id | V4L2_CTRL_FLAG_NEXT_CTRL };
	}
}

void
v4l2cuse_uvc_subscribe_controls(struct uvc_source *u, int fd)
{
	for (unsigned int i = 0; i < u->n_ctrls; i++) {
		struct v4l2_event_subscription sub = {
			.type = V4L2_EVENT_CTRL, .id = u->ctrls[i].desc.id,
		};

		if (u->ctrls[i].desc.type != V4L2_CTRL_TYPE_BUTTON)
			v4l2cuse_uvc_ioctl(fd, VIDIOC_SUBSCRIBE_EVENT, &sub);
	}
}

void
v4l2cuse_uvc_watch_controls(struct uvc_source *u, int fd)
{
	uint32_t events = 0;
	int efd = fd >= 0 ? v4l2cuse_uvc_event_fd(fd, &events) : -1;

	if (u->ctl_fd >= 0)
		epoll_ctl(u->ctl_epfd, EPOLL_CTL_DEL, u->ctl_fd, NULL);
	u->ctl_fd = -1;
	if (efd >= 0) {
		struct epoll_event ev = { .events = events };

		if (epoll_ctl(u->ctl_epfd, EPOLL_CTL_ADD, efd, &ev) == 0)
			u->ctl_fd = efd;
	}
}

uint64_t
v4l2cuse_uvc_apply_controls(struct uvc_source *u, int fd)
{
	int64_t values[UVC_MAX_CTRLS];
	uint64_t gen;

	g_mutex_lock(&u->lock);
	memcpy(values, u->values, sizeof(values));
	gen = u->values_gen;
	g_mutex_unlock(&u->lock);
	for (unsigned int i = 0; i < u->n_ctrls; i++) {
		int64_t cur;

		if (u->ctrls[i].desc.type == V4L2_CTRL_TYPE_BUTTON)
			continue;
		if (uvc_get_value(fd, &u->ctrls[i].desc, &cur) == 0 && cur == values[i])
			continue;
		uvc_set_value(fd, &u->ctrls[i].desc, values[i]);
	}
	return gen;
}

const struct v4l2cuse_control *
v4l2cuse_uvc_control(struct v4l2cuse_source *src, unsigned int index)
{
	struct uvc_source *u = uvc_from(src);

	return index < u->n_ctrls ? &u->ctrls[index].desc : NULL;
}

static int
uvc_ctrl_index(const struct uvc_source *u, uint32_t id)
{
	for (unsigned int i = 0; i < u->n_ctrls; i++) {
		if (u->ctrls[i].desc.id == id)
			return (int)i;
	}
	return -EINVAL;
}

int
v4l2cuse_uvc_get_control(struct v4l2cuse_source *src, uint32_t id, int64_t *ret_value)
{
	struct uvc_source *u = uvc_from(src);
	int i = uvc_ctrl_index(u, id);
	int64_t v;

	if (i < 0)
		return i;
	/* A volatile control changes by itself: read it from the camera. */
	if ((u->ctrls[i].desc.flags & V4L2_CTRL_FLAG_VOLATILE) && u->fd >= 0 &&
	    uvc_get_value(u->fd, &u->ctrls[i].desc, &v) == 0) {
		g_mutex_lock(&u->lock);
		u->values[i] = v;
		g_mutex_unlock(&u->lock);
	}
	g_mutex_lock(&u->lock);
	*ret_value = u->values[i];
	g_mutex_unlock(&u->lock);
	return 0;
}

int
v4l2cuse_uvc_set_control(struct v4l2cuse_source *src, uint32_t id, int64_t value)
{
	struct uvc_source *u = uvc_from(src);
	int i = uvc_ctrl_index(u, id);
	int r = 0;

	if (i < 0)
		return i;
	if (u->fd >= 0) {
		r = uvc_set_value(u->fd, &u->ctrls[i].desc, value);
		if (r < 0 && !v4l2cuse_uvc_is_gone_error(r))
			return r;	/* the camera refused (busy, inactive, ...) */
	}
	/*
	 * Applied, or remembered for when the camera is open again (the
	 * generation tells a camera the thread is setting up that it missed
	 * this one).
	 */
	g_mutex_lock(&u->lock);
	if (u->ctrls[i].desc.type != V4L2_CTRL_TYPE_BUTTON) {
		u->values[i] = value;
		u->values_gen++;
	}
	g_mutex_unlock(&u->lock);
	return 0;
}

int
v4l2cuse_uvc_control_fd(struct v4l2cuse_source *src)
{
	return uvc_from(src)->ctl_epfd;
}

/* One V4L2_EVENT_CTRL of the camera into the snapshot. */
static void
uvc_take_event(struct uvc_source *u, const struct v4l2_event *ev)
{
	const struct v4l2_event_ctrl *e = &ev->u.ctrl;
	int i = uvc_ctrl_index(u, ev->id);
	struct v4l2cuse_control *d;

	if (ev->type != V4L2_EVENT_CTRL || i < 0)
		return;
	d = &u->ctrls[i].desc;
	if (e->changes & V4L2_EVENT_CTRL_CH_RANGE) {
		d->minimum = e->minimum;
		d->maximum = e->maximum;
		d->step = (uint64_t)e->step;
		d->default_value = e->default_value;
		/* A menu keeps its items: new ones past the snapshot are not offered. */
		if ((d->type == V4L2_CTRL_TYPE_MENU || d->type == V4L2_CTRL_TYPE_INTEGER_MENU) &&
		    d->maximum > UVC_MAX_MENU)
			d->maximum = UVC_MAX_MENU;
	}
	if (e->changes & V4L2_EVENT_CTRL_CH_FLAGS)
		d->flags = (d->flags & ~UVC_CTRL_FLAGS) | (e->flags & UVC_CTRL_FLAGS) |
			   (d->type == V4L2_CTRL_TYPE_BUTTON ? V4L2_CTRL_FLAG_WRITE_ONLY : 0);
	if (e->changes & V4L2_EVENT_CTRL_CH_VALUE) {
		g_mutex_lock(&u->lock);
		u->values[i] = d->type == V4L2_CTRL_TYPE_INTEGER64 ? e->value64
								   : uvc_value32(d, e->value);
		g_mutex_unlock(&u->lock);
	}
}

void
v4l2cuse_uvc_control_update(struct v4l2cuse_source *src)
{
	struct uvc_source *u = uvc_from(src);
	struct v4l2_event ev;

	if (u->fd < 0)
		return;
	/* Bounded: a camera that keeps sending must not hold the loop. */
	for (unsigned int n = 0; n < 256; n++) {
		memset(&ev, 0, sizeof(ev));
		if (v4l2cuse_uvc_ioctl(u->fd, VIDIOC_DQEVENT, &ev) < 0)
			break;
		uvc_take_event(u, &ev);
	}
}
