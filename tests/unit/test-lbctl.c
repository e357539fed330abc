/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * daemon/lbctl.c, the v4l2loopback control device, on the real manager with
 * a fake CUSE and self-test (fake-cuse.c), its ioctls sent through the fake
 * transport's retry protocol as v4l2loopback-ctl would send them: ADD makes
 * a loopback device whose nodes, label and writer sizes are what it asked
 * for, QUERY says so, REMOVE makes it go; the 0.13/0.14 numbers work as the
 * 0.15 ones; the errors are v4l2loopback's.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <linux/videodev2.h>

#include "v4l2cuse/loopback-abi.h"
#include "videobuf.h"
#include "device.h"
#include "manager.h"
#include "manager-private.h"
#include "lbctl.h"
#include "fake-req.h"
#include "fake-consumer.h"
#include "fake-cuse.h"
#include "test-main.h"

struct fixture {
	char *runtime_dir;		/* the shim sockets' directory */
	struct v4l2cuse_manager *m;
	struct v4l2cuse_lbctl *ctl;
};

static void
fixture_setup(struct fixture *f, gconstpointer data)
{
	static const struct v4l2cuse_manager_events ev = { 0 };
	g_autofree char *err = NULL;

	f->runtime_dir = g_dir_make_tmp("v4l2cuse-lbctl-XXXXXX", NULL);
	g_assert_nonnull(f->runtime_dir);
	g_setenv("RUNTIME_DIRECTORY", f->runtime_dir, TRUE);
	f->m = v4l2cuse_manager_new(&ev, f, false);
	f->ctl = v4l2cuse_lbctl_new(f->m, (gid_t)-1, &err);
	g_assert_nonnull(f->ctl);
}

static void
fixture_teardown(struct fixture *f, gconstpointer data)
{
	v4l2cuse_lbctl_free(f->ctl);
	v4l2cuse_manager_free(f->m);
	g_unsetenv("RUNTIME_DIRECTORY");
	g_assert_cmpint(g_rmdir(f->runtime_dir), ==, 0);	/* no socket left behind */
	g_free(f->runtime_dir);
}

V4L2CUSE_TEST_FIXTURE(struct fixture, fixture_setup, fixture_teardown);

static void
ctl_ioctl_fn(void *obj, struct v4l2cuse_req *req, const struct v4l2cuse_ioctl_args *a)
{
	v4l2cuse_lbctl_ioctl(obj, req, a);
}

/* One ioctl on /dev/v4l2loopback, answered at once. */
static int
ctl(struct fixture *f, unsigned int cmd, void *arg)
{
	int r = fake_ioctl_on(ctl_ioctl_fn, f->ctl, cmd, arg, NULL);

	g_assert_cmpint(r, !=, FAKE_PARKED);
	return r;
}

/* REMOVE passes the number itself. */
static int
ctl_remove(struct fixture *f, unsigned int cmd, long nr)
{
	return ctl(f, cmd, (void *)nr);
}

/* An ADD: parked until the device serves (the loop runs meanwhile); its answer. */
static int
ctl_add(struct fixture *f, unsigned int cmd, struct v4l2cuse_loopback_config *cfg)
{
	gint64 end = g_get_monotonic_time() + 5 * G_USEC_PER_SEC;
	struct fake_parked *p;
	int r = fake_ioctl_on(ctl_ioctl_fn, f->ctl, cmd, cfg, NULL);

	if (r != FAKE_PARKED)
		return r;
	p = fake_last_parked();
	while (!p->answered && g_get_monotonic_time() < end)
		g_main_context_iteration(NULL, TRUE);
	g_assert_true(p->answered);
	return p->result;
}

/* What v4l2loopback-ctl add sends: everything 0 but what it was told. */
static struct v4l2cuse_loopback_config
config(int nr, const char *label)
{
	struct v4l2cuse_loopback_config cfg = { .output_nr = nr, .announce_all_caps = -1 };

	/* Its capture_nr, left uninitialised by v4l2loopback-ctl: ignored. */
	cfg.unused = 0x5a5a5a5a;
	if (label)
		snprintf(cfg.card_label, sizeof(cfg.card_label), "%s", label);
	return cfg;
}

static struct mdev *
find_node(struct fixture *f, int nr)
{
	g_autofree char *node = g_strdup_printf("video%d", nr);

	for (unsigned int i = 0; i < f->m->devs->len; i++) {
		struct mdev *md = f->m->devs->pdata[i];

		if (g_strcmp0(md->node, node) == 0 || g_strcmp0(md->writer_node, node) == 0)
			return md;
	}
	return NULL;
}

static int
node_nr(const char *node)
{
	g_assert_true(g_str_has_prefix(node, "video"));
	return atoi(node + 5);
}

/* QUERYCAP of @dev through a handle of its own. */
static struct v4l2_capability
querycap(struct v4l2cuse_device *dev)
{
	struct v4l2cuse_fh *fh = fake_open(dev, false, O_RDWR | O_NONBLOCK);
	struct v4l2_capability cap;

	g_assert_cmpint(fake_ioctl(fh, VIDIOC_QUERYCAP, &cap), ==, 0);
	v4l2cuse_fh_release(fh);
	return cap;
}

V4L2CUSE_TEST_F("/lbctl/add-query-remove", test_add_query_remove)
{
	struct v4l2cuse_loopback_config cfg = config(-1, "Test Cam");
	struct v4l2cuse_loopback_config q;
	struct v4l2_capability cap;
	struct v4l2_format fmt = { .type = V4L2_BUF_TYPE_VIDEO_OUTPUT };
	struct v4l2cuse_fh *fh;
	struct mdev *md;
	int nr, cap_nr;

	cfg.max_width = 1280;
	cfg.max_height = 720;
	nr = ctl_add(f, V4L2CUSE_LOOPBACK_CTL_ADD, &cfg);
	g_assert_cmpint(nr, >=, 0);

	/* A loopback device serving: the number is its writer node's. */
	md = find_node(f, nr);
	g_assert_nonnull(md);
	g_assert_cmpint(md->state, ==, MDEV_SERVING);
	g_assert_true(md->writer_ready);
	g_assert_cmpint(node_nr(md->writer_node), ==, nr);
	g_assert_cmpstr(md->node, !=, md->writer_node);
	cap_nr = node_nr(md->node);
	cap = querycap(md->dev);
	g_assert_cmpstr((const char *)cap.card, ==, "Test Cam");
	g_assert_cmpuint(cap.device_caps & V4L2_CAP_VIDEO_CAPTURE, !=, 0);
	cap = querycap(md->wdev);
	g_assert_cmpuint(cap.device_caps & V4L2_CAP_VIDEO_OUTPUT, !=, 0);

	/* The writer's sizes are what ADD said. */
	fh = fake_open(md->wdev, false, O_RDWR | O_NONBLOCK);
	fmt.fmt.pix = (struct v4l2_pix_format){ .width = 1920, .height = 1080,
						.pixelformat = V4L2_PIX_FMT_YUYV };
	g_assert_cmpint(fake_ioctl(fh, VIDIOC_TRY_FMT, &fmt), ==, 0);
	g_assert_cmpuint(fmt.fmt.pix.width, ==, 1280);
	g_assert_cmpuint(fmt.fmt.pix.height, ==, 720);
	v4l2cuse_fh_release(fh);

	/* QUERY by either node's number says what ADD set. */
	for (int i = 0; i < 2; i++) {
		q = config(i ? cap_nr : nr, NULL);
		g_assert_cmpint(ctl(f, V4L2CUSE_LOOPBACK_CTL_QUERY, &q), ==, 0);
		g_assert_cmpint(q.output_nr, ==, nr);
		g_assert_cmpint(q.unused, ==, cap_nr);
		g_assert_cmpstr(q.card_label, ==, "Test Cam");
		g_assert_cmpuint(q.min_width, ==, 2);
		g_assert_cmpuint(q.max_width, ==, 1280);
		g_assert_cmpuint(q.min_height, ==, 2);
		g_assert_cmpuint(q.max_height, ==, 720);
		g_assert_cmpint(q.announce_all_caps, ==, 0);
		g_assert_cmpint(q.max_buffers, ==, VB_MAX_BUFFERS);
		g_assert_cmpint(q.max_openers, ==, V4L2CUSE_MAX_OPENS);
	}

	/* REMOVE: both nodes go; the number is free again. */
	g_assert_cmpint(ctl_remove(f, V4L2CUSE_LOOPBACK_CTL_REMOVE, nr), ==, 0);
	g_assert_null(find_node(f, nr));
	g_assert_null(find_node(f, cap_nr));
	g_assert_cmpuint(f->m->devs->len, ==, 0);
	q = config(nr, NULL);
	g_assert_cmpint(ctl(f, V4L2CUSE_LOOPBACK_CTL_QUERY, &q), ==, -ENODEV);
}

V4L2CUSE_TEST_F("/lbctl/old-numbers", test_old_numbers)
{
	struct v4l2cuse_loopback_config cfg = config(40, "Old Tool");
	struct v4l2cuse_loopback_config q = config(40, NULL);
	struct mdev *md;

	/* 0.13/0.14's numbers, a number asked for, REMOVE by the capture node's. */
	g_assert_cmpint(ctl_add(f, V4L2CUSE_LOOPBACK_CTL_ADD_OLD, &cfg), ==, 40);
	md = find_node(f, 40);
	g_assert_nonnull(md);
	g_assert_cmpstr(md->writer_node, ==, "video40");
	g_assert_cmpint(ctl(f, V4L2CUSE_LOOPBACK_CTL_QUERY_OLD, &q), ==, 0);
	g_assert_cmpstr(q.card_label, ==, "Old Tool");
	g_assert_cmpint(q.output_nr, ==, 40);
	g_assert_cmpint(ctl_remove(f, V4L2CUSE_LOOPBACK_CTL_REMOVE_OLD, node_nr(md->node)), ==, 0);
	g_assert_null(find_node(f, 40));
}

V4L2CUSE_TEST_F("/lbctl/add-defaults", test_add_defaults)
{
	struct v4l2cuse_loopback_config q;
	uint32_t version = 0;
	int nr;

	/* v4l2loopback-ctl add without options passes NULL. */
	nr = ctl_add(f, V4L2CUSE_LOOPBACK_CTL_ADD, NULL);
	g_assert_cmpint(nr, >=, 0);
	q = config(nr, NULL);
	g_assert_cmpint(ctl(f, V4L2CUSE_LOOPBACK_CTL_QUERY, &q), ==, 0);
	g_assert_cmpuint(q.max_width, ==, 8192);
	g_assert_cmpuint(q.max_height, ==, 8192);
	g_assert_cmpstr(q.card_label, ==, "Dummy video device (0x0000)");	/* v4l2loopback's */
	/* A second one gets other numbers. */
	g_assert_cmpint(ctl_add(f, V4L2CUSE_LOOPBACK_CTL_ADD, NULL), !=, nr);
	g_assert_cmpuint(f->m->devs->len, ==, 2);

	g_assert_cmpint(ctl(f, V4L2CUSE_LOOPBACK_CTL_VERSION, &version), ==, 0);
	g_assert_cmphex(version, ==, 0x000f00);
}

V4L2CUSE_TEST_F("/lbctl/label", test_label)
{
	struct v4l2cuse_loopback_config cfg = config(-1, NULL);
	struct v4l2cuse_loopback_config q;
	int nr;

	/* 32 bytes without a terminator, a newline and a backslash in it. */
	memcpy(cfg.card_label, "Cam\nOne \\ 456789012345678901234X", 32);
	nr = ctl_add(f, V4L2CUSE_LOOPBACK_CTL_ADD, &cfg);
	g_assert_cmpint(nr, >=, 0);
	q = config(nr, NULL);
	g_assert_cmpint(ctl(f, V4L2CUSE_LOOPBACK_CTL_QUERY, &q), ==, 0);
	g_assert_cmpstr(q.card_label, ==, "Cam One \\ 456789012345678901234");
}

V4L2CUSE_TEST_F("/lbctl/errors", test_errors)
{
	struct v4l2cuse_loopback_config cfg = config(41, "First");
	struct v4l2cuse_loopback_config q;
	struct v4l2_capability cap;
	uint32_t u = 0;
	struct mdev *md;

	g_assert_cmpint(ctl_add(f, V4L2CUSE_LOOPBACK_CTL_ADD, &cfg), ==, 41);
	md = find_node(f, 41);

	/* A number in use, as the writer or the capture node: EEXIST. */
	g_assert_cmpint(ctl_add(f, V4L2CUSE_LOOPBACK_CTL_ADD, &cfg), ==, -EEXIST);
	cfg = config(node_nr(md->node), NULL);
	g_assert_cmpint(ctl_add(f, V4L2CUSE_LOOPBACK_CTL_ADD, &cfg), ==, -EEXIST);
	/* Numbers and sizes the daemon cannot have: EINVAL. */
	cfg = config(1000, NULL);
	g_assert_cmpint(ctl_add(f, V4L2CUSE_LOOPBACK_CTL_ADD, &cfg), ==, -EINVAL);
	cfg = config(-1, NULL);
	cfg.max_width = 9000;
	g_assert_cmpint(ctl_add(f, V4L2CUSE_LOOPBACK_CTL_ADD, &cfg), ==, -EINVAL);
	cfg = config(-1, NULL);
	cfg.min_width = cfg.max_width = 641;	/* no even width in 641..641 */
	g_assert_cmpint(ctl_add(f, V4L2CUSE_LOOPBACK_CTL_ADD, &cfg), ==, -EINVAL);
	g_assert_cmpuint(f->m->devs->len, ==, 1);	/* nothing half-made */

	/* Numbers that are no loopback device: ENODEV. */
	g_assert_cmpint(ctl_remove(f, V4L2CUSE_LOOPBACK_CTL_REMOVE, 7), ==, -ENODEV);
	g_assert_cmpint(ctl_remove(f, V4L2CUSE_LOOPBACK_CTL_REMOVE, -1), ==, -ENODEV);
	g_assert_cmpint(ctl_remove(f, V4L2CUSE_LOOPBACK_CTL_REMOVE_OLD, 100000), ==, -ENODEV);
	q = config(-1, NULL);
	g_assert_cmpint(ctl(f, V4L2CUSE_LOOPBACK_CTL_QUERY, &q), ==, -ENODEV);

	/* No argument where one is needed: EINVAL. */
	g_assert_cmpint(ctl(f, V4L2CUSE_LOOPBACK_CTL_QUERY, NULL), ==, -EINVAL);
	g_assert_cmpint(ctl(f, V4L2CUSE_LOOPBACK_CTL_VERSION, NULL), ==, -EINVAL);

	/* Commands it does not have: ENOTTY. */
	g_assert_cmpint(ctl(f, _IOR(V4L2CUSE_LOOPBACK_CTL_MAGIC, 9, uint32_t), &u), ==, -ENOTTY);
	g_assert_cmpint(ctl(f, 0x4c83, &u), ==, -ENOTTY);
	g_assert_cmpint(ctl(f, VIDIOC_QUERYCAP, &cap), ==, -ENOTTY);

	/* The first device is untouched. */
	q = config(41, NULL);
	g_assert_cmpint(ctl(f, V4L2CUSE_LOOPBACK_CTL_QUERY, &q), ==, 0);
	g_assert_cmpstr(q.card_label, ==, "First");
}

V4L2CUSE_TEST_F("/lbctl/remove-busy", test_remove_busy)
{
	struct v4l2cuse_loopback_config cfg = config(42, NULL);
	struct v4l2cuse_fh *fh;
	struct mdev *md;

	g_assert_cmpint(ctl_add(f, V4L2CUSE_LOOPBACK_CTL_ADD, &cfg), ==, 42);
	md = find_node(f, 42);
	/* Open on either node: EBUSY, as v4l2loopback with an opener. */
	fh = fake_open(md->dev, false, O_RDWR | O_NONBLOCK);
	g_assert_cmpint(ctl_remove(f, V4L2CUSE_LOOPBACK_CTL_REMOVE, 42), ==, -EBUSY);
	v4l2cuse_fh_release(fh);
	fh = fake_open(md->wdev, false, O_RDWR | O_NONBLOCK);
	g_assert_cmpint(ctl_remove(f, V4L2CUSE_LOOPBACK_CTL_REMOVE, 42), ==, -EBUSY);
	v4l2cuse_fh_release(fh);
	g_assert_nonnull(find_node(f, 42));
	g_assert_cmpint(ctl_remove(f, V4L2CUSE_LOOPBACK_CTL_REMOVE, 42), ==, 0);
	g_assert_null(find_node(f, 42));
}

V4L2CUSE_TEST_F("/lbctl/not-loopback", test_not_loopback)
{
	g_autofree char *err = NULL;
	static const char *const keys[] = { "node=video50", NULL };
	struct v4l2cuse_loopback_config q = config(50, NULL);

	/* A test-pattern camera is no loopback device: not the control device's. */
	g_assert_cmpint(v4l2cuse_manager_add_keys(f->m, "cam", keys, &err), ==, 0);
	g_assert_cmpint(ctl(f, V4L2CUSE_LOOPBACK_CTL_QUERY, &q), ==, -ENODEV);
	g_assert_cmpint(ctl_remove(f, V4L2CUSE_LOOPBACK_CTL_REMOVE, 50), ==, -ENODEV);
	g_assert_cmpuint(f->m->devs->len, ==, 1);
	/* ...and its node is taken. */
	g_assert_cmpint(ctl_add(f, V4L2CUSE_LOOPBACK_CTL_ADD, &q), ==, -EEXIST);
}

V4L2CUSE_TEST_F("/lbctl/add-waiting", test_add_waiting)
{
	struct v4l2cuse_loopback_config cfg = config(43, NULL);
	struct fake_parked *p;

	/* An ADD waits for its device: the daemon stopping answers ENODEV. */
	g_assert_cmpint(fake_ioctl_on(ctl_ioctl_fn, f->ctl, V4L2CUSE_LOOPBACK_CTL_ADD, &cfg,
				      NULL), ==, FAKE_PARKED);
	p = fake_last_parked();
	g_assert_false(p->answered);
	g_clear_pointer(&f->ctl, v4l2cuse_lbctl_free);
	g_assert_true(p->answered);
	g_assert_cmpint(p->result, ==, -ENODEV);

	/* ...and so does its device going first (v4l2cuse-ctl remove). */
	{
		g_autofree char *err = NULL;

		f->ctl = v4l2cuse_lbctl_new(f->m, (gid_t)-1, &err);
		cfg = config(44, NULL);
		g_assert_cmpint(fake_ioctl_on(ctl_ioctl_fn, f->ctl, V4L2CUSE_LOOPBACK_CTL_ADD,
					      &cfg, NULL), ==, FAKE_PARKED);
		p = fake_last_parked();
		g_assert_cmpint(v4l2cuse_manager_remove(f->m, find_node(f, 44)->conf->id, &err),
				==, 0);
		g_assert_true(p->answered);
		g_assert_cmpint(p->result, ==, -ENODEV);
	}
}

V4L2CUSE_TEST_F("/lbctl/add-refused", test_add_refused)
{
	struct v4l2cuse_loopback_config cfg = config(45, NULL);
	/* The manager warns of the failure (and would retry): not fatal here. */
	GLogLevelFlags fatal = g_log_set_always_fatal(G_LOG_FATAL_MASK | G_LOG_LEVEL_CRITICAL);

	/* CUSE refuses the writer node (a name taken meanwhile): EEXIST, and no device. */
	fake_cuse_refuse("video45");
	g_assert_cmpint(ctl_add(f, V4L2CUSE_LOOPBACK_CTL_ADD, &cfg), ==, -EEXIST);
	g_log_set_always_fatal(fatal);
	g_assert_cmpuint(f->m->devs->len, ==, 0);
	/* The number is free again. */
	g_assert_cmpint(ctl_add(f, V4L2CUSE_LOOPBACK_CTL_ADD, &cfg), ==, 45);
}
