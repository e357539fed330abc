/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Controls: the source's control table plus a class control for every
 * class it has, with the kernel's v4l2-ctrls rules for enumeration,
 * validation, extended controls (error_idx) and V4L2_EVENT_CTRL. The
 * values live here; the source is told about every change, and tells of
 * changes made elsewhere (another application on a camera) through its
 * control_fd(): they reach subscribers as V4L2_EVENT_CTRL too.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <glib.h>
#include <glib-unix.h>

#include "v4l2cuse/source.h"
#include "util/macros.h"
#include "device-private.h"
#include "ctrls.h"

static int
ctrl_cmp(const void *a, const void *b)
{
	const struct dev_ctrl *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* The kernel's names of the class controls (v4l2_ctrl_get_name()). */
static const char *
ctrl_class_name(uint32_t id)
{
	static const struct {
		uint32_t id;
		const char *name;
	} names[] = {
		{ V4L2_CID_USER_CLASS, "User Controls" },
		{ V4L2_CID_CODEC_CLASS, "Codec Controls" },
		{ V4L2_CID_CAMERA_CLASS, "Camera Controls" },
		{ V4L2_CID_FM_TX_CLASS, "FM Radio Modulator Controls" },
		{ V4L2_CID_FLASH_CLASS, "Flash Controls" },
		{ V4L2_CID_JPEG_CLASS, "JPEG Compression Controls" },
		{ V4L2_CID_IMAGE_SOURCE_CLASS, "Image Source Controls" },
		{ V4L2_CID_IMAGE_PROC_CLASS, "Image Processing Controls" },
		{ V4L2_CID_DV_CLASS, "Digital Video Controls" },
		{ V4L2_CID_FM_RX_CLASS, "FM Radio Receiver Controls" },
		{ V4L2_CID_RF_TUNER_CLASS, "RF Tuner Controls" },
		{ V4L2_CID_DETECT_CLASS, "Detection Controls" },
		{ V4L2_CID_CODEC_STATELESS_CLASS, "Stateless Codec Controls" },
		{ V4L2_CID_COLORIMETRY_CLASS, "Colorimetry Controls" },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
		if (names[i].id == id)
			return names[i].name;
	}
	return "Driver Controls";
}

/* The description as subscribers were last told it. */
static void
ctrl_remember(struct dev_ctrl *c)
{
	const struct v4l2cuse_control *d = c->desc;

	c->flags = d->flags;
	c->minimum = d->minimum;
	c->maximum = d->maximum;
	c->step = d->step;
	c->default_value = d->default_value;
}

static bool
ctrl_desc_valid(const struct v4l2cuse_control *c)
{
	if (c->minimum > c->maximum || V4L2_CTRL_ID2WHICH(c->id) == 0)
		return false;
	switch (c->type) {
	case V4L2_CTRL_TYPE_MENU:
		return c->menu != NULL && c->minimum >= 0;
	case V4L2_CTRL_TYPE_INTEGER_MENU:
		return c->menu != NULL && c->menu_int != NULL && c->minimum >= 0;
	case V4L2_CTRL_TYPE_BITMASK:
		return c->minimum == 0 && c->maximum > 0 && c->maximum <= UINT32_MAX;
	default:
		return true;
	}
}

static void ctrls_watch(struct v4l2cuse_device *dev);

int
dev_ctrls_init(struct v4l2cuse_device *dev)
{
	const struct v4l2cuse_control *c;
	GArray *a = g_array_new(FALSE, TRUE, sizeof(struct dev_ctrl));
	GHashTable *classes = g_hash_table_new(NULL, NULL);
	GHashTableIter it;
	gpointer key;

	for (unsigned int i = 0; (c = v4l2cuse_source_control(dev->src, i)); i++) {
		struct dev_ctrl dc = { .desc = c, .id = c->id, .value = c->default_value };
		int64_t v;

		/* A camera's current value, not its default, is the truth. */
		if (v4l2cuse_source_get_control(dev->src, c->id, &v) == 0)
			dc.value = v;

		if (!ctrl_desc_valid(c)) {
			g_array_unref(a);
			g_hash_table_destroy(classes);
			return -EINVAL;
		}
		ctrl_remember(&dc);
		g_hash_table_add(classes, GUINT_TO_POINTER(V4L2_CTRL_ID2WHICH(c->id) | 1));
		g_array_append_val(a, dc);
	}
	/* Every class with a control has its class control (v4l2-compliance). */
	g_hash_table_iter_init(&it, classes);
	while (g_hash_table_iter_next(&it, &key, NULL)) {
		struct dev_ctrl dc = {
			.desc = NULL, .id = GPOINTER_TO_UINT(key),
			.flags = V4L2_CTRL_FLAG_READ_ONLY | V4L2_CTRL_FLAG_WRITE_ONLY,
		};

		g_array_append_val(a, dc);
	}
	g_hash_table_destroy(classes);
	g_array_sort(a, ctrl_cmp);
	dev->n_ctrls = a->len;
	dev->ctrls = (struct dev_ctrl *)g_array_free(a, FALSE);
	ctrls_watch(dev);
	return 0;
}

void
dev_ctrls_free(struct v4l2cuse_device *dev)
{
	dev_ctrls_unwatch(dev);
	g_free(dev->ctrls);
	dev->ctrls = NULL;
	dev->n_ctrls = 0;
}

static bool ctrl_is_int(const struct dev_ctrl *c);

/* An exact old-style private id (not a NEXT_CTRL query). */
static bool
ctrl_is_private_id(uint32_t id)
{
	return !(id & (V4L2_CTRL_FLAG_NEXT_CTRL | V4L2_CTRL_FLAG_NEXT_COMPOUND)) &&
	       id >= V4L2_CID_PRIVATE_BASE;
}

/*
 * Old-style private controls (the kernel's find_private_ref()):
 * V4L2_CID_PRIVATE_BASE + n names the n-th driver-private user-class
 * control usable with G/S_CTRL. v4l2-compliance 1.22 probes them.
 */
static struct dev_ctrl *
ctrl_find_private(struct v4l2cuse_device *dev, uint32_t n)
{
	for (unsigned int i = 0; i < dev->n_ctrls; i++) {
		struct dev_ctrl *c = &dev->ctrls[i];

		if (V4L2_CTRL_ID2WHICH(c->id) != V4L2_CTRL_CLASS_USER ||
		    V4L2_CTRL_DRIVER_PRIV(c->id) == 0 || !ctrl_is_int(c))
			continue;
		if (n-- == 0)
			return c;
	}
	return NULL;
}

struct dev_ctrl *
dev_ctrl_find(struct v4l2cuse_device *dev, uint32_t id)
{
	struct dev_ctrl key = { .id = id };

	if (id >= V4L2_CID_PRIVATE_BASE)
		return ctrl_find_private(dev, id - V4L2_CID_PRIVATE_BASE);
	if (!dev->n_ctrls)
		return NULL;	/* bsearch() wants a non-NULL array */
	return bsearch(&key, dev->ctrls, dev->n_ctrls, sizeof(key), ctrl_cmp);
}

static bool
ctrl_is_class(const struct dev_ctrl *c)
{
	return c->desc == NULL;
}

static uint32_t
ctrl_type(const struct dev_ctrl *c)
{
	return c->desc ? c->desc->type : V4L2_CTRL_TYPE_CTRL_CLASS;
}

/* Controls G/S_CTRL can carry (the kernel's ctrl->is_int). */
static bool
ctrl_is_int(const struct dev_ctrl *c)
{
	switch (ctrl_type(c)) {
	case V4L2_CTRL_TYPE_INTEGER:
	case V4L2_CTRL_TYPE_BOOLEAN:
	case V4L2_CTRL_TYPE_MENU:
	case V4L2_CTRL_TYPE_INTEGER_MENU:
	case V4L2_CTRL_TYPE_BUTTON:
	case V4L2_CTRL_TYPE_BITMASK:
		return true;
	default:
		return false;
	}
}

static bool
ctrl_is_menu(const struct dev_ctrl *c)
{
	return ctrl_type(c) == V4L2_CTRL_TYPE_MENU || ctrl_type(c) == V4L2_CTRL_TYPE_INTEGER_MENU;
}

static uint32_t
ctrl_flags(const struct dev_ctrl *c)
{
	return c->desc ? c->desc->flags
		       : V4L2_CTRL_FLAG_READ_ONLY | V4L2_CTRL_FLAG_WRITE_ONLY;
}

/* Kernel: the ID of the next control after @id (NEXT_CTRL), or exact @id. */
static struct dev_ctrl *
ctrl_lookup_query(struct v4l2cuse_device *dev, uint32_t id)
{
	uint32_t mask = V4L2_CTRL_FLAG_NEXT_CTRL | V4L2_CTRL_FLAG_NEXT_COMPOUND;

	if (id & mask) {
		uint32_t base = id & ~mask;

		/* We have no compound controls: NEXT_COMPOUND alone finds none. */
		if (!(id & V4L2_CTRL_FLAG_NEXT_CTRL))
			return NULL;
		for (unsigned int i = 0; i < dev->n_ctrls; i++)
			if (dev->ctrls[i].id > base)
				return &dev->ctrls[i];
		return NULL;
	}
	return dev_ctrl_find(dev, id);
}

/*
 * As v4l2-ctrls' v4l2_queryctrl(): the extended query, narrowed to the old
 * structure (the 64-bit limits truncated to 32 bits).
 */
int
dev_queryctrl(struct v4l2cuse_device *dev, struct v4l2_queryctrl *q)
{
	struct v4l2_query_ext_ctrl ext = { .id = q->id };
	int r = dev_query_ext_ctrl(dev, &ext);

	if (r < 0)
		return r;
	memset(q, 0, sizeof(*q));
	q->id = ext.id;
	q->type = ext.type;
	q->flags = ext.flags;
	g_strlcpy((char *)q->name, ext.name, sizeof(q->name));
	q->minimum = (int32_t)ext.minimum;
	q->maximum = (int32_t)ext.maximum;
	q->step = (int32_t)ext.step;
	q->default_value = (int32_t)ext.default_value;
	return 0;
}

int
dev_query_ext_ctrl(struct v4l2cuse_device *dev, struct v4l2_query_ext_ctrl *q)
{
	struct dev_ctrl *c = ctrl_lookup_query(dev, q->id);

	uint32_t asked = q->id;

	if (!c)
		return -EINVAL;
	memset(q, 0, sizeof(*q));
	/* Old-style private ids are answered under the id asked for. */
	q->id = ctrl_is_private_id(asked) ? asked : c->id;
	q->type = ctrl_type(c);
	q->flags = ctrl_flags(c);
	q->elems = 1;
	if (ctrl_is_class(c)) {
		g_strlcpy(q->name, ctrl_class_name(c->id), sizeof(q->name));
		return 0;
	}
	q->elem_size = q->type == V4L2_CTRL_TYPE_INTEGER64 ? 8 : 4;
	g_strlcpy(q->name, c->desc->name, sizeof(q->name));
	q->minimum = c->desc->minimum;
	q->maximum = c->desc->maximum;
	q->step = c->desc->step;
	q->default_value = c->desc->default_value;
	return 0;
}

int
dev_querymenu(struct v4l2cuse_device *dev, struct v4l2_querymenu *m)
{
	struct dev_ctrl *c = dev_ctrl_find(dev, m->id);
	uint32_t index = m->index, id = m->id;

	if (!c || !ctrl_is_menu(c))
		return -EINVAL;
	if ((int64_t)index < c->desc->minimum || (int64_t)index > c->desc->maximum)
		return -EINVAL;
	if (!c->desc->menu[index] || !c->desc->menu[index][0])
		return -EINVAL;
	memset(m, 0, sizeof(*m));
	m->id = id;
	m->index = index;
	if (ctrl_type(c) == V4L2_CTRL_TYPE_INTEGER_MENU)
		m->value = c->desc->menu_int[index];
	else
		g_strlcpy((char *)m->name, c->desc->menu[index], sizeof(m->name));
	return 0;
}

/* The kernel's validate_new(): clamp integers, reject bad menu items. */
static int
ctrl_validate(const struct dev_ctrl *c, int64_t *val)
{
	const struct v4l2cuse_control *d = c->desc;
	int64_t v = *val;

	switch (d->type) {
	case V4L2_CTRL_TYPE_INTEGER:
	case V4L2_CTRL_TYPE_INTEGER64:
	case V4L2_CTRL_TYPE_BOOLEAN: {
		uint64_t step = d->step ? d->step : 1;

		v = CLAMP_VAL(v, d->minimum, d->maximum);
		/* Round to the nearest step from the minimum (ROUND_TO_RANGE). */
		v = d->minimum + (int64_t)(((uint64_t)(v - d->minimum) + step / 2) / step * step);
		if (v > d->maximum)
			v -= (int64_t)step;
		break;
	}
	case V4L2_CTRL_TYPE_MENU:
	case V4L2_CTRL_TYPE_INTEGER_MENU:
		if (v < d->minimum || v > d->maximum)
			return -ERANGE;
		if (!d->menu[v] || !d->menu[v][0])
			return -EINVAL;
		break;
	case V4L2_CTRL_TYPE_BITMASK:
		/* The kernel keeps the bits the mask has. */
		v = (int64_t)((uint32_t)v & (uint32_t)d->maximum);
		break;
	case V4L2_CTRL_TYPE_BUTTON:
		v = 0;
		break;
	default:
		return -EINVAL;
	}
	*val = v;
	return 0;
}

void
dev_ctrl_fill_event(struct dev_ctrl *c, uint32_t changes, struct v4l2_event *ev)
{
	memset(ev, 0, sizeof(*ev));
	ev->type = V4L2_EVENT_CTRL;
	ev->id = c->id;
	ev->u.ctrl.changes = changes;
	ev->u.ctrl.type = ctrl_type(c);
	ev->u.ctrl.flags = ctrl_flags(c);
	if (c->desc) {
		ev->u.ctrl.value64 = c->value;
		ev->u.ctrl.minimum = (int32_t)c->desc->minimum;
		ev->u.ctrl.maximum = (int32_t)c->desc->maximum;
		ev->u.ctrl.step = (int32_t)c->desc->step;
		ev->u.ctrl.default_value = (int32_t)c->desc->default_value;
	}
}

void
dev_ctrl_send_event(struct v4l2cuse_device *dev, struct v4l2cuse_fh *origin,
		    struct dev_ctrl *c, uint32_t changes)
{
	struct v4l2_event ev;

	dev_ctrl_fill_event(c, changes, &ev);
	for (GList *l = dev->fhs.head; l; l = l->next) {
		struct v4l2cuse_fh *fh = l->data;
		uint32_t flags;

		if (!dev_subscribed(fh, V4L2_EVENT_CTRL, c->id, &flags))
			continue;
		/* The setter hears its own change only with ALLOW_FEEDBACK. */
		if (fh == origin && !(flags & V4L2_EVENT_SUB_FL_ALLOW_FEEDBACK))
			continue;
		dev_queue_event(fh, &ev);
	}
}

/* Apply a validated value: the source first, then the cache and events. */
static int
ctrl_apply(struct v4l2cuse_fh *fh, struct dev_ctrl *c, int64_t v)
{
	struct v4l2cuse_device *dev = fh->dev;
	int r;

	/* A volatile control's cache may be stale: it always goes to the source. */
	if (c->value == v && ctrl_type(c) != V4L2_CTRL_TYPE_BUTTON &&
	    !(ctrl_flags(c) & V4L2_CTRL_FLAG_VOLATILE))
		return 0;
	r = v4l2cuse_source_set_control(dev->src, c->id, v);
	if (r < 0)
		return r;
	c->value = v;
	dev_ctrl_send_event(dev, fh, c, V4L2_EVENT_CTRL_CH_VALUE);
	return 0;
}

/* A volatile control (changed by the hardware) is read from the source. */
static void
ctrl_refresh_volatile(struct v4l2cuse_device *dev, struct dev_ctrl *c)
{
	int64_t v;

	if ((ctrl_flags(c) & V4L2_CTRL_FLAG_VOLATILE) &&
	    v4l2cuse_source_get_control(dev->src, c->id, &v) == 0)
		c->value = v;
}

int
dev_g_ctrl(struct v4l2cuse_fh *fh, struct v4l2_control *ctl)
{
	struct dev_ctrl *c = dev_ctrl_find(fh->dev, ctl->id);

	if (!c || !ctrl_is_int(c))
		return -EINVAL;
	if (ctrl_flags(c) & V4L2_CTRL_FLAG_WRITE_ONLY)
		return -EACCES;
	ctrl_refresh_volatile(fh->dev, c);
	ctl->value = (int32_t)c->value;
	return 0;
}

int
dev_s_ctrl(struct v4l2cuse_fh *fh, struct v4l2_control *ctl)
{
	struct dev_ctrl *c = dev_ctrl_find(fh->dev, ctl->id);
	int64_t v = ctl->value;
	int r;

	if (!c || !ctrl_is_int(c))
		return -EINVAL;
	if (ctrl_flags(c) & V4L2_CTRL_FLAG_READ_ONLY)
		return -EACCES;
	r = ctrl_validate(c, &v);
	if (r < 0)
		return r;
	r = ctrl_apply(fh, c, v);
	if (r < 0)
		return r;
	ctl->value = (int32_t)v;
	return 0;
}

/* The kernel's class_check(): a class as 'which' must exist. */
static int
ctrl_class_check(struct v4l2cuse_device *dev, uint32_t which)
{
	if (which == V4L2_CTRL_WHICH_CUR_VAL || which == V4L2_CTRL_WHICH_DEF_VAL)
		return 0;
	return dev_ctrl_find(dev, which | 1) ? 0 : -EINVAL;
}

/*
 * G/S/TRY_EXT_CTRLS on an already copied-in array. Mirrors
 * v4l2_g_ext_ctrls_common()/try_set_ext_ctrls_common(): error_idx is count
 * for G and S failures (nothing was applied), the failing index for TRY.
 */
int
dev_ext_ctrls(struct v4l2cuse_fh *fh, unsigned int cmd, struct v4l2_ext_controls *cs,
	      struct v4l2_ext_control *ctrls)
{
	struct v4l2cuse_device *dev = fh->dev;
	bool get = cmd == VIDIOC_G_EXT_CTRLS;
	bool set = cmd == VIDIOC_S_EXT_CTRLS;
	g_autofree struct dev_ctrl **refs = NULL;
	g_autofree int64_t *vals = NULL;
	uint32_t which = cs->which;
	int r;

	cs->error_idx = cs->count;
	if (which == V4L2_CTRL_WHICH_REQUEST_VAL)
		return -EINVAL;
	if (!get && which == V4L2_CTRL_WHICH_DEF_VAL)
		return -EINVAL;
	if (which != V4L2_CTRL_WHICH_CUR_VAL && which != V4L2_CTRL_WHICH_DEF_VAL &&
	    V4L2_CTRL_ID2WHICH(which) != which)
		return -EINVAL;
	if (cs->count == 0)
		return ctrl_class_check(dev, which);

	refs = g_new0(struct dev_ctrl *, cs->count);
	vals = g_new0(int64_t, cs->count);
	/* prepare_ext_ctrls(): every id must exist and belong to the class. */
	for (uint32_t i = 0; i < cs->count; i++) {
		uint32_t id = ctrls[i].id;

		if (!get && !set)
			cs->error_idx = i;
		if ((which != V4L2_CTRL_WHICH_CUR_VAL && which != V4L2_CTRL_WHICH_DEF_VAL &&
		     V4L2_CTRL_ID2WHICH(id) != which) ||
		    id >= V4L2_CID_PRIVATE_BASE || !(refs[i] = dev_ctrl_find(dev, id)))
			return -EINVAL;
	}
	if (get) {
		for (uint32_t i = 0; i < cs->count; i++)
			if (ctrl_flags(refs[i]) & V4L2_CTRL_FLAG_WRITE_ONLY)
				return -EACCES;
		for (uint32_t i = 0; i < cs->count; i++) {
			int64_t v;

			if (which != V4L2_CTRL_WHICH_DEF_VAL)
				ctrl_refresh_volatile(dev, refs[i]);
			v = which == V4L2_CTRL_WHICH_DEF_VAL ? refs[i]->desc->default_value
							     : refs[i]->value;

			if (ctrl_type(refs[i]) == V4L2_CTRL_TYPE_INTEGER64)
				ctrls[i].value64 = v;
			else
				ctrls[i].value = (int32_t)v;
		}
		return 0;
	}
	/* validate_ctrls() */
	for (uint32_t i = 0; i < cs->count; i++) {
		struct dev_ctrl *c = refs[i];

		cs->error_idx = i;
		if (ctrl_flags(c) & V4L2_CTRL_FLAG_READ_ONLY) {
			r = -EACCES;
			goto fail;
		}
		vals[i] = ctrl_type(c) == V4L2_CTRL_TYPE_INTEGER64 ? ctrls[i].value64
								  : ctrls[i].value;
		r = ctrl_validate(c, &vals[i]);
		if (r < 0)
			goto fail;
	}
	cs->error_idx = cs->count;
	for (uint32_t i = 0; i < cs->count; i++) {
		if (ctrl_type(refs[i]) == V4L2_CTRL_TYPE_INTEGER64)
			ctrls[i].value64 = vals[i];
		else
			ctrls[i].value = (int32_t)vals[i];
		if (set) {
			r = ctrl_apply(fh, refs[i], vals[i]);
			if (r < 0)
				return r;
		}
	}
	return 0;

fail:
	if (set)
		cs->error_idx = cs->count;
	return r;
}

/* SUBSCRIBE_EVENT for controls: the id must exist; SEND_INITIAL queues now. */
int
dev_ctrl_subscribe(struct v4l2cuse_fh *fh, const struct v4l2_event_subscription *sub)
{
	struct dev_ctrl *c = dev_ctrl_find(fh->dev, sub->id);

	if (!c)
		return -EINVAL;
	/* The kernel's send_initial_event(): none for the class control. */
	if ((sub->flags & V4L2_EVENT_SUB_FL_SEND_INITIAL) && !ctrl_is_class(c)) {
		uint32_t changes = V4L2_EVENT_CTRL_CH_FLAGS;
		struct v4l2_event ev;

		if (!(ctrl_flags(c) & V4L2_CTRL_FLAG_WRITE_ONLY))
			changes |= V4L2_EVENT_CTRL_CH_VALUE;
		dev_ctrl_fill_event(c, changes, &ev);
		dev_queue_event(fh, &ev);
	}
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Changes made outside (the source's control_fd()) */

/* Compare with what subscribers know; tell them what changed. */
static void
ctrls_refresh(struct v4l2cuse_device *dev)
{
	for (unsigned int i = 0; i < dev->n_ctrls; i++) {
		struct dev_ctrl *c = &dev->ctrls[i];
		const struct v4l2cuse_control *d = c->desc;
		uint32_t changes = 0;
		int64_t v;

		if (!d)
			continue;
		/*
		 * A volatile control changes by itself: the kernel sends no value
		 * events for that, and G_CTRL reads it fresh anyway.
		 */
		if (d->type != V4L2_CTRL_TYPE_BUTTON && !(d->flags & V4L2_CTRL_FLAG_VOLATILE) &&
		    v4l2cuse_source_get_control(dev->src, c->id, &v) == 0 && v != c->value) {
			c->value = v;
			changes |= V4L2_EVENT_CTRL_CH_VALUE;
		}
		if (d->flags != c->flags)
			changes |= V4L2_EVENT_CTRL_CH_FLAGS;
		if (d->minimum != c->minimum || d->maximum != c->maximum || d->step != c->step ||
		    d->default_value != c->default_value)
			changes |= V4L2_EVENT_CTRL_CH_RANGE;
		if (!changes)
			continue;
		ctrl_remember(c);
		g_debug("%s: control %#x changed at the source (value %" G_GINT64_FORMAT
			", changes %#x)", dev->name, c->id, c->value, changes);
		dev_ctrl_send_event(dev, NULL, c, changes);
	}
}

static gboolean
ctrls_changed_cb(int fd, GIOCondition cond, gpointer data)
{
	struct v4l2cuse_device *dev = data;

	v4l2cuse_source_control_update(dev->src);
	ctrls_refresh(dev);
	return G_SOURCE_CONTINUE;
}

static void
ctrls_watch(struct v4l2cuse_device *dev)
{
	int fd = v4l2cuse_source_control_fd(dev->src);

	dev_ctrls_unwatch(dev);
	if (fd >= 0)
		dev->ctrl_watch = g_unix_fd_add(fd, G_IO_IN, ctrls_changed_cb, dev);
}

void
dev_ctrls_unwatch(struct v4l2cuse_device *dev)
{
	if (dev->ctrl_watch)
		g_source_remove(dev->ctrl_watch);
	dev->ctrl_watch = 0;
}
