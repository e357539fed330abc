/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * daemon/manager.c with the real devices and a fake CUSE and self-test
 * (fake-cuse.c): what a reload (v4l2cuse_manager_apply with a changed
 * configuration) does to the devices. The loopback knobs: options changed
 * in the configuration reach the writer node's controls once the reload
 * has re-created the device, and a reload that fails changes nothing.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <linux/videodev2.h>

#include "v4l2cuse/source.h"
#include "device.h"
#include "conf.h"
#include "manager.h"
#include "manager-private.h"
#include "fake-req.h"
#include "fake-consumer.h"
#include "test-main.h"

/* The writer node's controls (v4l2loopback's ids, daemon/loopback-private.h). */
#define CID_KEEP_FORMAT		(V4L2CUSE_CID_PRIVATE_BASE + 0)
#define CID_SUSTAIN_FRAMERATE	(V4L2CUSE_CID_PRIVATE_BASE + 1)
#define CID_TIMEOUT		(V4L2CUSE_CID_PRIVATE_BASE + 2)

struct fixture {
	char *runtime_dir;		/* the shim sockets' directory */
	struct v4l2cuse_manager *m;
	bool settled;
};

static void
on_settled(void *data)
{
	((struct fixture *)data)->settled = true;
}

static void
fixture_setup(struct fixture *f, gconstpointer data)
{
	static const struct v4l2cuse_manager_events ev = { .settled = on_settled };

	f->runtime_dir = g_dir_make_tmp("v4l2cuse-manager-XXXXXX", NULL);
	g_assert_nonnull(f->runtime_dir);
	g_setenv("RUNTIME_DIRECTORY", f->runtime_dir, TRUE);
	f->m = v4l2cuse_manager_new(&ev, f, false);
}

static void
fixture_teardown(struct fixture *f, gconstpointer data)
{
	v4l2cuse_manager_free(f->m);
	g_unsetenv("RUNTIME_DIRECTORY");
	g_assert_cmpint(g_rmdir(f->runtime_dir), ==, 0);	/* no socket left behind */
	g_free(f->runtime_dir);
}

V4L2CUSE_TEST_FIXTURE(struct fixture, fixture_setup, fixture_teardown);

static struct v4l2cuse_conf *
conf_of(const char *text)
{
	struct v4l2cuse_conf *conf = v4l2cuse_conf_new();
	g_autofree char *err = NULL;

	if (v4l2cuse_conf_parse(conf, "test.conf", text, strlen(text), &err) < 0 ||
	    v4l2cuse_conf_finish(conf, &err) < 0)
		g_error("%s", err);
	return conf;
}

/* Apply @text and run the loop until every device has registered and passed. */
static int
apply(struct fixture *f, const char *text)
{
	g_autofree char *err = NULL;
	struct v4l2cuse_conf *conf = conf_of(text);
	gint64 end = g_get_monotonic_time() + 5 * G_USEC_PER_SEC;
	int r;

	f->settled = false;
	r = v4l2cuse_manager_apply(f->m, conf, &err);
	if (r < 0) {
		v4l2cuse_conf_free(conf);
		g_test_message("refused: %s", err);
		return r;
	}
	while (!f->settled && g_get_monotonic_time() < end)
		g_main_context_iteration(NULL, TRUE);
	g_assert_true(f->settled);
	return 0;
}

static struct mdev *
find(struct fixture *f, const char *id)
{
	for (unsigned int i = 0; i < f->m->devs->len; i++) {
		struct mdev *md = f->m->devs->pdata[i];

		if (strcmp(md->conf->id, id) == 0)
			return md;
	}
	g_assert_not_reached();
	return NULL;
}

struct knobs {
	int keep_format, sustain_framerate, timeout;
	bool compat;
};

/* The knobs as an app sees them on the writer node of device @id. */
static struct knobs
knobs_of(struct fixture *f, const char *id)
{
	struct mdev *md = find(f, id);
	struct v4l2cuse_fh *fh;
	struct v4l2_capability cap;
	struct v4l2_control c[3] = { { .id = CID_KEEP_FORMAT }, { .id = CID_SUSTAIN_FRAMERATE },
				     { .id = CID_TIMEOUT } };
	struct knobs k;

	g_assert_cmpint(md->state, ==, MDEV_SERVING);
	g_assert_nonnull(md->wdev);
	fh = fake_open(md->wdev, false, O_RDWR | O_NONBLOCK);
	for (size_t i = 0; i < G_N_ELEMENTS(c); i++)
		g_assert_cmpint(fake_ioctl(fh, VIDIOC_G_CTRL, &c[i]), ==, 0);
	g_assert_cmpint(fake_ioctl(fh, VIDIOC_QUERYCAP, &cap), ==, 0);
	v4l2cuse_fh_release(fh);
	k = (struct knobs){
		.keep_format = c[0].value,
		.sustain_framerate = c[1].value,
		.timeout = c[2].value,
		/* compat=1: droidcam's bus_info */
		.compat = g_str_has_prefix((const char *)cap.bus_info, "platform:v4l2loopback-"),
	};
	return k;
}

static void
assert_knobs(struct fixture *f, const char *id, struct knobs want)
{
	struct knobs k = knobs_of(f, id);

	g_assert_cmpint(k.keep_format, ==, want.keep_format);
	g_assert_cmpint(k.sustain_framerate, ==, want.sustain_framerate);
	g_assert_cmpint(k.timeout, ==, want.timeout);
	g_assert_cmpint(k.compat, ==, want.compat);
}

#define VCAM "[device vcam]\nnode = video42\n"

V4L2CUSE_TEST_F("/manager/reload/loopback-options", test_reload_loopback_options)
{
	static const struct knobs defaults = { .sustain_framerate = 1 };
	static const struct knobs changed = { .keep_format = 1, .timeout = 2000, .compat = true };

	g_assert_cmpint(apply(f, VCAM "source = loopback:video43\n"), ==, 0);
	assert_knobs(f, "vcam", defaults);
	/* Every option changed: the reload re-creates both nodes with them. */
	g_assert_cmpint(apply(f, VCAM "source = loopback:video43,keep_format=1,"
				      "sustain_framerate=0,timeout=2000,compat=1\n"), ==, 0);
	assert_knobs(f, "vcam", changed);
	/* One option: the others go back to their defaults with it. */
	g_assert_cmpint(apply(f, VCAM "source = loopback:video43,timeout=500\n"), ==, 0);
	assert_knobs(f, "vcam", (struct knobs){ .sustain_framerate = 1, .timeout = 500 });
	/* The writer node picked by the daemon (no name in the spec) keeps its name. */
	g_assert_cmpint(apply(f, VCAM "source = loopback,timeout=700\n"), ==, 0);
	assert_knobs(f, "vcam", (struct knobs){ .sustain_framerate = 1, .timeout = 700 });
	g_assert_cmpint(apply(f, VCAM "source = loopback,timeout=800\n"), ==, 0);
	assert_knobs(f, "vcam", (struct knobs){ .sustain_framerate = 1, .timeout = 800 });
}

V4L2CUSE_TEST_F("/manager/reload/loopback-refused", test_reload_loopback_refused)
{
	/* A reload refused as a whole (another device cannot be built) changes no knob. */
	g_assert_cmpint(apply(f, VCAM "source = loopback:video43,timeout=300\n"), ==, 0);
	g_assert_cmpint(apply(f, VCAM "source = loopback:video43,timeout=900,compat=1\n"
				  "[device other]\nnode = video44\n"
				  "source = file:/nonexistent/v4l2cuse-test.y4m\n"), ==, -EINVAL);
	assert_knobs(f, "vcam", (struct knobs){ .sustain_framerate = 1, .timeout = 300 });
}

/*
 * Under the unit (daemon/network.h): a device that needs more of the
 * network than the unit's V4L2CUSE_SERVICE_NETWORK allows is one warning
 * line, from the configuration or added at runtime, and serves anyway
 * (its placeholder); a covered one says nothing (any other warning fails
 * the test: g_test_init() makes them fatal).
 */
V4L2CUSE_TEST("/manager/service-network", test_service_network)
{
	const char *const keys[] = { "source=uri:http://cam.local/x.mjpg", NULL };
	struct fixture fx = { 0 }, *f = &fx;
	g_autofree char *err = NULL;

	if (!HAVE_GSTREAMER_READER) {
		g_test_skip("uri: needs -Dgstreamer");
		return;
	}
	g_setenv("V4L2CUSE_SERVICE_NETWORK", "192.0.2.7", TRUE);
	fixture_setup(f, NULL);		/* the manager reads it once */
	g_unsetenv("V4L2CUSE_SERVICE_NETWORK");

	g_test_expect_message(NULL, G_LOG_LEVEL_WARNING,
			      "yard: needs the network (192.0.2.9), which the service does not "
			      "allow (V4L2CUSE_SERVICE_NETWORK=192.0.2.7), and shows its "
			      "placeholder; with the device in the configuration, run "
			      "'systemctl daemon-reload && systemctl restart v4l2cuse'");
	g_assert_cmpint(apply(f, "[device door]\nnode = video42\n"
				 "source = uri:rtsp://192.0.2.7/x\n"
				 "[device yard]\nnode = video43\n"
				 "source = uri:rtsp://192.0.2.9/x\n"), ==, 0);
	g_test_assert_expected_messages();
	g_assert_cmpint(find(f, "door")->state, ==, MDEV_SERVING);
	g_assert_cmpint(find(f, "yard")->state, ==, MDEV_SERVING);

	g_test_expect_message(NULL, G_LOG_LEVEL_WARNING,
			      "lobby: needs the network (cam.local, a host name: *");
	g_assert_cmpint(v4l2cuse_manager_add_keys(f->m, "lobby", keys, &err), ==, 0);
	g_test_assert_expected_messages();
	fixture_teardown(f, NULL);
}
