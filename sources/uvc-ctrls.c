/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The uvc source's controls (uvc-private.h; uvc.c's header describes
 * which): the snapshot at create(), the control ops, and applying the
 * values to a camera that is back.
 */

#include "config.h"

#include <errno.h>
#include <string.h>

#include <glib.h>
#include <libv4l2.h>

#include "util/macros.h"
#include "v4l2cuse/format.h"
#include "uvc-private.h"

void
v4l2cuse_uvc_ctrl_free(struct uvc_ctrl *c)
{
	for (unsigned int i = 0; i <= UVC_MAX_MENU; i++)
		g_free(c->menu_store[i]);
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
	*ret = d->type == V4L2_CTRL_TYPE_INTEGER64 ? c.value64 : c.value;
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

void
v4l2cuse_uvc_snapshot_controls(struct uvc_source *u, int fd)
{
	struct v4l2_query_ext_ctrl q = { .id = V4L2_CTRL_FLAG_NEXT_CTRL };

	u->ctrls = g_new0(struct uvc_ctrl, UVC_MAX_CTRLS);
	while (u->n_ctrls < UVC_MAX_CTRLS &&
	       v4l2cuse_uvc_ioctl(fd, VIDIOC_QUERY_EXT_CTRL, &q) == 0) {
		struct uvc_ctrl *c = &u->ctrls[u->n_ctrls];
		uint32_t id = q.id;
		bool ok;

		ok = V4L2_CTRL_ID2WHICH(q.id) == V4L2_CTRL_CLASS_USER && q.nr_of_dims == 0 &&
		     !(q.flags & (V4L2_CTRL_FLAG_DISABLED | V4L2_CTRL_FLAG_READ_ONLY |
				  V4L2_CTRL_FLAG_VOLATILE)) &&
		     (q.type == V4L2_CTRL_TYPE_INTEGER || q.type == V4L2_CTRL_TYPE_BOOLEAN ||
		      q.type == V4L2_CTRL_TYPE_MENU || q.type == V4L2_CTRL_TYPE_INTEGER64 ||
		      q.type == V4L2_CTRL_TYPE_BUTTON) &&
		     q.minimum <= q.maximum &&
		     (q.type != V4L2_CTRL_TYPE_MENU ||
		      (q.minimum >= 0 && q.maximum <= UVC_MAX_MENU));
		if (ok) {
			memcpy(c->name, q.name, sizeof(c->name) - 1);
			c->desc = (struct v4l2cuse_control){
				.id = q.id, .type = q.type, .name = c->name,
				.minimum = q.minimum, .maximum = q.maximum, .step = q.step,
				.default_value = q.default_value,
				.flags = q.flags & (V4L2_CTRL_FLAG_SLIDER | V4L2_CTRL_FLAG_WRITE_ONLY |
						    V4L2_CTRL_FLAG_EXECUTE_ON_WRITE),
			};
			if (q.type == V4L2_CTRL_TYPE_MENU) {
				for (int64_t i = q.minimum; i <= q.maximum; i++) {
					struct v4l2_querymenu m = { .id = q.id, .index = (uint32_t)i };

					if (v4l2cuse_uvc_ioctl(fd, VIDIOC_QUERYMENU, &m) == 0)
						c->menu_store[i] = g_strndup((const char *)m.name,
									     sizeof(m.name));
				}
				c->desc.menu = (const char *const *)c->menu_store;
			}
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
v4l2cuse_uvc_apply_controls(struct uvc_source *u, int fd)
{
	int64_t values[UVC_MAX_CTRLS];

	g_mutex_lock(&u->lock);
	memcpy(values, u->values, sizeof(values));
	g_mutex_unlock(&u->lock);
	for (unsigned int i = 0; i < u->n_ctrls; i++) {
		int64_t cur;

		if (u->ctrls[i].desc.type == V4L2_CTRL_TYPE_BUTTON)
			continue;
		if (uvc_get_value(fd, &u->ctrls[i].desc, &cur) == 0 && cur == values[i])
			continue;
		uvc_set_value(fd, &u->ctrls[i].desc, values[i]);
	}
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

	if (i < 0)
		return i;
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
	/* Applied, or remembered for when the camera is back. */
	g_mutex_lock(&u->lock);
	if (u->ctrls[i].desc.type != V4L2_CTRL_TYPE_BUTTON)
		u->values[i] = value;
	g_mutex_unlock(&u->lock);
	return 0;
}
