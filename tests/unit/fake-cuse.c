/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * daemon/cuse.c and daemon/selftest.c without /dev/cuse, for tests of
 * daemon/manager.c: a "registration" succeeds at the next idle of the
 * main loop, and so does every self-test. The devices are the real ones
 * (the fake transport, fake-req.h, opens their handles), and so is the
 * v4l2loopback control device (fake_ioctl_on() sends it ioctls). A name
 * can be refused (fake-cuse.h).
 */
#include "config.h"

#include <errno.h>
#include <glib.h>

#include "device.h"
#include "cuse.h"
#include "selftest.h"
#include "fake-cuse.h"

struct v4l2cuse_cuse {
	struct v4l2cuse_device *dev;
	v4l2cuse_cuse_state_fn state_cb;
	void *data;
	guint ready_source;
	int error;
};

static char *refused_name;

void
fake_cuse_refuse(const char *name)
{
	g_free(refused_name);
	refused_name = g_strdup(name);
}

static gboolean
fake_cuse_ready(gpointer data)
{
	struct v4l2cuse_cuse *c = data;

	c->ready_source = 0;
	if (c->error)
		c->state_cb(c, V4L2CUSE_CUSE_FAILED, c->data);
	else
		c->state_cb(c, V4L2CUSE_CUSE_READY, c->data);
	return G_SOURCE_REMOVE;
}

struct v4l2cuse_cuse *
v4l2cuse_cuse_new(struct v4l2cuse_device *dev, mode_t mode, gid_t gid,
		  v4l2cuse_cuse_state_fn state_cb, void *data, char **ret_error)
{
	struct v4l2cuse_cuse *c = g_new0(struct v4l2cuse_cuse, 1);

	c->dev = dev;
	c->state_cb = state_cb;
	c->data = data;
	/* As CUSE aborts a duplicate name: FAILED once the "init" is done. */
	if (refused_name && g_strcmp0(refused_name, v4l2cuse_device_name(dev)) == 0) {
		g_clear_pointer(&refused_name, g_free);
		c->error = -EEXIST;
	}
	c->ready_source = g_idle_add(fake_cuse_ready, c);
	return c;
}

void
v4l2cuse_cuse_free(struct v4l2cuse_cuse *c)
{
	if (!c)
		return;
	if (c->ready_source)
		g_source_remove(c->ready_source);
	g_free(c);
}

struct v4l2cuse_cuse *
v4l2cuse_cuse_new_lbctl(struct v4l2cuse_lbctl *ctl, mode_t mode, gid_t gid,
			v4l2cuse_cuse_state_fn state_cb, void *data, char **ret_error)
{
	struct v4l2cuse_cuse *c = g_new0(struct v4l2cuse_cuse, 1);

	c->state_cb = state_cb;
	c->data = data;
	c->ready_source = g_idle_add(fake_cuse_ready, c);
	return c;
}

struct v4l2cuse_device *
v4l2cuse_cuse_device(struct v4l2cuse_cuse *c)
{
	return c->dev;
}

int
v4l2cuse_cuse_error(struct v4l2cuse_cuse *c)
{
	return c->error;
}

struct v4l2cuse_selftest {
	v4l2cuse_selftest_done_fn done;
	void *data;
	GSList *pending;		/* struct fake_selftest * */
};

struct fake_selftest {
	struct v4l2cuse_selftest *st;
	uint64_t tag;
	guint source;
};

static gboolean
fake_selftest_pass(gpointer data)
{
	struct fake_selftest *t = data;
	struct v4l2cuse_selftest *st = t->st;

	st->pending = g_slist_remove(st->pending, t);
	st->done(st->data, t->tag, 0, NULL);
	g_free(t);
	return G_SOURCE_REMOVE;
}

struct v4l2cuse_selftest *
v4l2cuse_selftest_new(v4l2cuse_selftest_done_fn done, void *data)
{
	struct v4l2cuse_selftest *st = g_new0(struct v4l2cuse_selftest, 1);

	st->done = done;
	st->data = data;
	return st;
}

void
v4l2cuse_selftest_free(struct v4l2cuse_selftest *st)
{
	if (!st)
		return;
	for (GSList *l = st->pending; l; l = l->next) {
		struct fake_selftest *t = l->data;

		g_source_remove(t->source);
		g_free(t);
	}
	g_slist_free(st->pending);
	g_free(st);
}

void
v4l2cuse_selftest_submit(struct v4l2cuse_selftest *st, uint64_t tag,
			 const struct v4l2cuse_selftest_spec *spec)
{
	struct fake_selftest *t = g_new0(struct fake_selftest, 1);

	t->st = st;
	t->tag = tag;
	t->source = g_idle_add(fake_selftest_pass, t);
	st->pending = g_slist_prepend(st->pending, t);
}
