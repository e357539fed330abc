/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The configuration file (daemon/conf.c), the offered-subset source wrapper
 * (daemon/offer.c), and the daemon refusing bad files with one line and a
 * non-zero exit before it touches /dev/cuse ($V4L2CUSE_DAEMON).
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <glib.h>
#include <glib/gstdio.h>

#include "v4l2cuse/source.h"
#include "util/cleanup.h"
#include "test-source-util.h"
#include "conf.h"
#include "offer.h"
#include "test-main.h"

/* Parse @text as "test.conf"; returns the error line or NULL. */
static char *
parse(const char *text, struct v4l2cuse_conf **ret)
{
	struct v4l2cuse_conf *conf = v4l2cuse_conf_new();
	char *err = NULL;
	int r = v4l2cuse_conf_parse(conf, "test.conf", text, strlen(text), &err);

	if (r == 0)
		r = v4l2cuse_conf_finish(conf, &err);
	if (r < 0) {
		g_assert_nonnull(err);
		g_assert_null(strchr(err, '\n'));	/* one line */
		v4l2cuse_conf_free(conf);
		if (ret)
			*ret = NULL;
		return err;
	}
	g_assert_null(err);
	if (ret)
		*ret = conf;
	else
		v4l2cuse_conf_free(conf);
	return NULL;
}

V4L2CUSE_TEST("/config/valid", test_valid)
{
	static const char text[] =
		"# two cameras\n"
		"[daemon]\n"
		"retry-interval = 2\n"
		"retry-limit=3\n"
		"group=root\n"
		"buffer-memory-limit = 1G\n"
		"device-buffer-memory-limit = 96M\n"
		"loopback-control = no\n"
		"[device front]\n"
		"node=/dev/video40\n"
		"label=Front camera\n"
		"source=pattern:smpte\n"
		"formats=MJPG, YUYV\n"
		"sizes=1280x720;640x480\n"
		"frame-rates=30+15/2\n"
		"read-buffers=4\n"
		"mode=0640\n"
		"buffer-memory-limit=unlimited\n"
		"\n"
		"[device back]\n"
		"source=pattern\n"
		"format=NV12\n"
		"size=320x240\n"
		"frame-rate=25\n"
		"placeholder=pattern:black\n"
		"enabled=yes\n";
	_cleanup_(v4l2cuse_conf_freep) struct v4l2cuse_conf *conf = NULL;
	const struct v4l2cuse_conf_device *f, *b;
	char *err = parse(text, &conf);

	g_assert_cmpstr(err, ==, NULL);
	g_assert_cmpuint(conf->retry_interval_s, ==, 2);
	g_assert_cmpuint(conf->retry_limit, ==, 3);
	g_assert_false(conf->loopback_control);
	g_assert_cmpuint(conf->devices->len, ==, 2);

	f = v4l2cuse_conf_find(conf, "front");
	g_assert_nonnull(f);
	g_assert_cmpstr(f->node, ==, "video40");
	g_assert_cmpstr(f->label, ==, "Front camera");
	g_assert_cmpstr(f->source, ==, "pattern:smpte");
	g_assert_cmpuint(f->offer.n_formats, ==, 2);
	g_assert_cmpuint(f->offer.formats[0], ==, V4L2_PIX_FMT_MJPEG);
	g_assert_cmpuint(f->offer.n_sizes, ==, 2);
	g_assert_cmpuint(f->offer.sizes[1].width, ==, 640);
	g_assert_cmpuint(f->offer.n_intervals, ==, 2);
	g_assert_cmpuint(f->offer.intervals[1].numerator, ==, 2);
	g_assert_cmpuint(f->offer.intervals[1].denominator, ==, 15);
	/* Defaults come from the first of each list. */
	g_assert_cmpuint(f->pixelformat, ==, V4L2_PIX_FMT_MJPEG);
	g_assert_cmpuint(f->width, ==, 1280);
	g_assert_cmpuint(f->interval.denominator, ==, 30);
	g_assert_cmpuint(f->read_buffers, ==, 4);
	g_assert_cmpuint(f->mode, ==, 0640);
	g_assert_cmpuint(conf->buffer_memory_limit, ==, (uint64_t)1 << 30);
	g_assert_cmpuint(f->buffer_memory_limit, ==, 0);	/* unlimited */
	g_assert_cmpuint(f->gid, ==, 0);	/* [daemon] group=root */
	g_assert_true(f->enabled);
	g_assert_true(g_str_has_prefix(f->where, "test.conf:9: [device front]"));

	b = v4l2cuse_conf_find(conf, "back");
	g_assert_nonnull(b);
	g_assert_null(b->node);		/* picked at start */
	g_assert_cmpuint(b->pixelformat, ==, V4L2_PIX_FMT_NV12);
	g_assert_cmpuint(b->height, ==, 240);
	g_assert_cmpuint(b->interval.numerator, ==, 1);
	g_assert_cmpuint(b->interval.denominator, ==, 25);
	g_assert_cmpstr(b->placeholder, ==, "pattern:black");
	g_assert_cmpuint(b->mode, ==, 0660);
	g_assert_cmpuint(b->buffer_memory_limit, ==, (uint64_t)96 << 20);	/* [daemon] */
	g_assert_true(g_str_has_prefix(b->where_source, "test.conf:21: [device back] source"));

	g_assert_false(v4l2cuse_conf_device_equal(f, b));
	{
		struct v4l2cuse_conf_device *c = v4l2cuse_conf_device_dup(b);

		g_assert_true(v4l2cuse_conf_device_equal(b, c));
		g_free(c->source);
		c->source = g_strdup("pattern:ramp");
		g_assert_false(v4l2cuse_conf_device_equal(b, c));
		g_assert_true(v4l2cuse_conf_device_equal_but_source(b, c));
		c->width = 640;
		g_assert_false(v4l2cuse_conf_device_equal_but_source(b, c));
		c->width = b->width;
		c->buffer_memory_limit = 1 << 20;
		g_assert_false(v4l2cuse_conf_device_equal_but_source(b, c));
		v4l2cuse_conf_device_free(c);
	}
}

V4L2CUSE_TEST("/config/defaults", test_defaults)
{
	_cleanup_(v4l2cuse_conf_freep) struct v4l2cuse_conf *conf = NULL;
	const struct v4l2cuse_conf_device *d;

	g_assert_null(parse("[device x]\n", &conf));
	d = conf->devices->pdata[0];
	g_assert_cmpstr(d->source, ==, "pattern");
	/* Format, size and rate left to the source (a camera's current ones). */
	g_assert_cmpuint(d->pixelformat, ==, 0);
	g_assert_cmpuint(d->width, ==, 0);
	g_assert_cmpuint(d->interval.denominator, ==, 0);
	g_assert_cmpuint(conf->retry_interval_s, ==, 5);
	g_assert_cmpuint(conf->selftest_timeout_s, ==, 10);
	g_assert_true(conf->loopback_control);		/* /dev/v4l2loopback */
	/* 512 MiB per device; 2 GiB for all, at most half the RAM. */
	g_assert_cmpuint(d->buffer_memory_limit, ==, (uint64_t)512 << 20);
	g_assert_cmpuint(conf->buffer_memory_limit, ==, v4l2cuse_conf_default_total_memory());
	g_assert_cmpuint(conf->buffer_memory_limit, <=, (uint64_t)2 << 30);
	g_assert_cmpuint(conf->buffer_memory_limit, >, 0);

	/* No devices at all is a valid (idle) configuration. */
	g_clear_pointer(&conf, v4l2cuse_conf_free);
	g_assert_null(parse("# nothing\n", &conf));
	g_assert_cmpuint(conf->devices->len, ==, 0);
}

/* One bad file per row: the exact line (prefix) expected. */
static const struct {
	const char *text;
	const char *error;
} bad[] = {
	{ "[device a]\nnode=video40\ncolour=red\n",
	  "test.conf:3: [device a] colour: unknown key (known: node, label, source" },
	{ "[device a]\nsize=0x0\n",
	  "test.conf:2: [device a] size: '0x0' is not a valid size (WIDTHxHEIGHT, 1..8192 each)" },
	{ "[device a]\nsize=640x\n", "test.conf:2: [device a] size: '640x' is not a valid size" },
	{ "[device a]\nnode=video42\n[device b]\nnode=video42\n",
	  "test.conf:3: [device b] node: video42 is already the node of test.conf:1: [device a]" },
	{ "[device a]\nnode=video42\nnode=video43\n",
	  "test.conf:3: [device a] node: set twice (first at line 2)" },
	{ "[device a]\n[device a]\n", "test.conf:2: [device a] appears twice (first at line 1)" },
	{ "[camera a]\n", "test.conf:1: [camera a]: unknown group (known: [daemon], [device ID])" },
	{ "[device a b]\n", "test.conf:1: [device a b]: 'a b' is not a device id" },
	{ "[device a]\nnode=cam0\n",
	  "test.conf:2: [device a] node: 'cam0' is not a node name like video42" },
	{ "[device a]\nformat=XYZW\n",
	  "test.conf:2: [device a] format: unknown pixel format 'XYZW'" },
	{ "[device a]\nformats=YUYV\nformat=MJPG\n",
	  "test.conf:3: [device a] format: not one of formats=" },
	{ "[device a]\nframe-rate=0\n",
	  "test.conf:2: [device a] frame-rate: '0' is not a frame rate" },
	{ "[device a]\nframe-rates=30,500\n",
	  "test.conf:2: [device a] frame-rates: '500' is not a frame rate" },
	{ "[device a]\nsource=nosuch:x\n",
	  "test.conf:2: [device a] source: unknown source 'nosuch' (known: pattern" },
	{ "[device a]\nsource=pipewire:cam,writer=cam1\n",
	  "test.conf:2: [device a] source: pipewire: writer: 'cam1' is not a node name (videoN)" },
	{ "[device a]\nsource=pipewire:cam,nosuch=1\n",
	  "test.conf:2: [device a] source: pipewire: unknown option 'nosuch'" },
	{ "[device a]\nplaceholder=pipewire:cam\n",
	  "test.conf:2: [device a] placeholder: unknown source 'pipewire'" },
	{ "[device a]\nlabel=0123456789012345678901234567890123\n",
	  "test.conf:2: [device a] label: '0123456789012345678901234567890123' must be 1..31" },
	{ "[device a]\nmode=0999\n", "test.conf:2: [device a] mode: '0999' is not an octal mode" },
	/* An invalid escape then a trailing one: GLib's parser warned (fuzz-config). */
	{ "[device a]\nlabel = Dfr\\m\\\n", "test.conf:2: [device a] label: bad escape in the value" },
	{ "[daemon]\nretry-interval = 2\\\n",
	  "test.conf:2: [daemon] retry-interval: bad escape in the value" },
	{ "[device a]\ngroup=no-such-group-here\n",
	  "test.conf:2: [device a] group: no group named 'no-such-group-here'" },
	{ "[device a]\nread-buffers=1\n",
	  "test.conf:2: [device a] read-buffers: '1' is not a number in 2..16" },
	{ "[device a]\nenabled=maybe\n",
	  "test.conf:2: [device a] enabled: 'maybe' is not a boolean" },
	{ "[device a]\nnetwork=sometimes\n",
	  "test.conf:2: [device a] network: 'sometimes' is not a boolean" },
	{ "[device a]\nnetwork=true\nnetwork=false\n",
	  "test.conf:3: [device a] network: set twice (first at line 2)" },
	{ "[daemon]\nretry-interval=-1\n",
	  "test.conf:2: [daemon] retry-interval: '-1' is not a number in 0..3600" },
	{ "[daemon]\nverbose=1\n", "test.conf:2: [daemon] verbose: unknown key" },
	{ "[daemon]\nloopback-control=maybe\n", "test.conf:2: [daemon] loopback-control: 'maybe'" },
	{ "[daemon]\nbuffer-memory-limit=12Q\n",
	  "test.conf:2: [daemon] buffer-memory-limit: '12Q' is not a memory size" },
	{ "[device a]\nbuffer-memory-limit=4K\n",
	  "test.conf:2: [device a] buffer-memory-limit: '4K' is not a memory size" },
	{ "[device a]\nbuffer-memory-limit=99999999999T\n",
	  "test.conf:2: [device a] buffer-memory-limit: '99999999999T' is not a memory size" },
	{ "node=video42\n", "test.conf:1: 'node=video42' comes before any [group] header" },
	{ "[device a]\njunk\n", "test.conf:2: 'junk' is not a key=value line" },
	{ "[device a\n", "test.conf:1: '[device a' is not a [group] header" },
	{ "[device a]\nsizes=" "1x1,2x2,3x3,4x4,5x5,6x6,7x7,8x8,9x9,10x10,11x11,12x12,13x13,14x14,"
	  "15x15,16x16,17x17\n", "test.conf:2: [device a] sizes: more than 16 entries" },
};

V4L2CUSE_TEST("/config/bad", test_bad)
{
	for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_autofree char *err = parse(bad[i].text, NULL);

		if (!err || !g_str_has_prefix(err, bad[i].error))
			g_error("case %zu: expected '%s...', got '%s'", i, bad[i].error,
				err ? err : "(no error)");
	}
	/* Disabled devices may share a node. */
	g_assert_null(parse("[device a]\nnode=video42\n[device b]\nnode=video42\nenabled=false\n",
			    NULL));
}

/* network= (daemon/network.h): unset, true, false; a change is a change. */
V4L2CUSE_TEST("/config/network", test_network)
{
	static const char text[] =
		"[device auto]\nsource=pattern\n"
		"[device on]\nsource=pattern\nnetwork=yes\n"
		"[device off]\nsource=pattern\nnetwork = false\n";
	_cleanup_(v4l2cuse_conf_freep) struct v4l2cuse_conf *conf = NULL;
	const struct v4l2cuse_conf_device *a, *on, *off;
	struct v4l2cuse_conf_device *c;

	g_assert_null(parse(text, &conf));
	a = v4l2cuse_conf_find(conf, "auto");
	on = v4l2cuse_conf_find(conf, "on");
	off = v4l2cuse_conf_find(conf, "off");
	g_assert_false(a->has_network);
	g_assert_true(on->has_network);
	g_assert_true(on->network);
	g_assert_true(off->has_network);
	g_assert_false(off->network);

	/* Not a device setting (the unit's): equal but for the source, not equal. */
	c = v4l2cuse_conf_device_dup(on);
	g_assert_true(v4l2cuse_conf_device_equal(on, c));
	c->network = false;
	g_assert_false(v4l2cuse_conf_device_equal(on, c));
	g_assert_true(v4l2cuse_conf_device_equal_but_source(on, c));
	v4l2cuse_conf_device_free(c);
}

static void
write_file(const char *dir, const char *name, const char *text)
{
	g_autofree char *p = g_build_filename(dir, name, NULL);

	g_assert_true(g_file_set_contents(p, text, -1, NULL));
}

static void
rm_rf(const char *dir)
{
	g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", dir);

	g_assert_cmpint(system(cmd), ==, 0);
}

V4L2CUSE_TEST("/config/load-dropins", test_load_dropins)
{
	g_autofree char *dir = g_dir_make_tmp("v4l2cuse-conf-XXXXXX", NULL);
	g_autofree char *main_path = g_build_filename(dir, "v4l2cuse.conf", NULL);
	g_autofree char *dropdir = g_build_filename(dir, "conf.d", NULL);
	g_autofree char *missing = g_build_filename(dir, "nope.conf", NULL);
	_cleanup_(v4l2cuse_conf_freep) struct v4l2cuse_conf *conf = NULL;
	char *err = NULL;
	bool found = true;

	g_assert_nonnull(dir);
	/* Nothing there: fine unless required. */
	g_assert_cmpint(v4l2cuse_conf_load(main_path, false, &conf, &found, &err), ==, 0);
	g_assert_false(found);
	g_clear_pointer(&conf, v4l2cuse_conf_free);
	g_assert_cmpint(v4l2cuse_conf_load(missing, true, &conf, &found, &err), ==, -ENOENT);
	g_assert_true(g_str_has_suffix(err, "nope.conf: no such file"));
	g_clear_pointer(&err, g_free);

	write_file(dir, "v4l2cuse.conf", "[daemon]\nretry-interval=1\n[device a]\nnode=video40\n");
	g_assert_cmpint(g_mkdir(dropdir, 0755), ==, 0);
	write_file(dropdir, "20-c.conf", "[device c]\nnode=video42\n");
	write_file(dropdir, "10-b.conf", "[daemon]\nretry-interval=3\n[device b]\nnode=video41\n");
	write_file(dropdir, "README", "not a config file\n");
	g_assert_cmpint(v4l2cuse_conf_load(main_path, true, &conf, &found, &err), ==, 0);
	g_assert_true(found);
	g_assert_cmpuint(conf->devices->len, ==, 3);
	/* Main file first, then conf.d in name order; later [daemon] keys win. */
	g_assert_cmpstr(((struct v4l2cuse_conf_device *)conf->devices->pdata[1])->id, ==, "b");
	g_assert_cmpstr(((struct v4l2cuse_conf_device *)conf->devices->pdata[2])->id, ==, "c");
	g_assert_cmpuint(conf->retry_interval_s, ==, 3);
	g_clear_pointer(&conf, v4l2cuse_conf_free);

	/* The same id in two files names both places. */
	write_file(dropdir, "30-a.conf", "\n[device a]\nnode=video43\n");
	g_assert_cmpint(v4l2cuse_conf_load(main_path, true, &conf, &found, &err), ==, -EINVAL);
	g_assert_nonnull(strstr(err, "30-a.conf:2: [device a]: device 'a' is already defined at "));
	g_assert_nonnull(strstr(err, "v4l2cuse.conf:3: [device a]"));
	g_clear_pointer(&err, g_free);
	rm_rf(dir);
}

/* ---------------------------------------------------------------------- */
/* The offered subset */

static struct v4l2cuse_source *
wrapped(const char *spec, const char *conf_text, char **ret_error)
{
	_cleanup_(v4l2cuse_conf_freep) struct v4l2cuse_conf *conf = NULL;
	struct v4l2cuse_source *src = NULL;
	const struct v4l2cuse_conf_device *d;
	g_autofree char *err = parse(conf_text, &conf);

	g_assert_cmpstr(err, ==, NULL);
	d = conf->devices->pdata[0];
	g_assert_cmpint(v4l2cuse_source_create(spec, &src, NULL), ==, 0);
	if (v4l2cuse_offer_wrap(&d->offer, &src, ret_error) < 0) {
		v4l2cuse_source_destroy(src);
		return NULL;
	}
	return src;
}

V4L2CUSE_TEST("/config/offer", test_offer)
{
	struct v4l2cuse_source *src;
	struct v4l2_pix_format pix = { 0 };
	struct v4l2_fract f;
	uint32_t fourcc, w, h;
	char *err = NULL;

	src = wrapped("pattern", "[device a]\nformats=MJPG,YUYV\nsizes=640x480,320x240\n"
			"frame-rates=15\n", &err);
	g_assert_nonnull(src);
	ts_assert_format(src, 0, V4L2_PIX_FMT_YUYV);	/* the source's order */
	ts_assert_format(src, 1, V4L2_PIX_FMT_MJPEG);
	g_assert_cmpint(src->ops->enum_format(src, 2, &fourcc), ==, -EINVAL);
	g_assert_cmpint(src->ops->enum_framesize(src, V4L2_PIX_FMT_NV12, 0, &w, &h), ==, -EINVAL);
	g_assert_cmpint(src->ops->enum_framesize(src, V4L2_PIX_FMT_YUYV, 0, &w, &h), ==, 0);
	g_assert_cmpuint(w, ==, 320);
	g_assert_cmpint(src->ops->enum_framesize(src, V4L2_PIX_FMT_YUYV, 1, &w, &h), ==, 0);
	g_assert_cmpuint(w, ==, 640);
	g_assert_cmpint(src->ops->enum_framesize(src, V4L2_PIX_FMT_YUYV, 2, &w, &h), ==, -EINVAL);
	g_assert_cmpint(src->ops->enum_frameinterval(src, V4L2_PIX_FMT_YUYV, 640, 480, 0, &f),
			==, 0);
	g_assert_cmpuint(f.denominator, ==, 15);
	g_assert_cmpint(src->ops->enum_frameinterval(src, V4L2_PIX_FMT_YUYV, 640, 480, 1, &f),
			==, -EINVAL);
	g_assert_cmpint(src->ops->enum_frameinterval(src, V4L2_PIX_FMT_YUYV, 1280, 720, 0, &f),
			==, -EINVAL);

	/* Negotiation stays inside: NV12 1920x1080 becomes YUYV 640x480. */
	pix = (struct v4l2_pix_format){ .width = 1920, .height = 1080,
					.pixelformat = V4L2_PIX_FMT_NV12 };
	g_assert_cmpint(v4l2cuse_source_negotiate(src, &pix), ==, 0);
	g_assert_cmpuint(pix.pixelformat, ==, V4L2_PIX_FMT_YUYV);
	g_assert_cmpuint(pix.width, ==, 640);
	g_assert_cmpuint(pix.sizeimage, ==, 640 * 480 * 2);
	pix = (struct v4l2_pix_format){ .width = 300, .height = 200,
					.pixelformat = V4L2_PIX_FMT_MJPEG };
	g_assert_cmpint(v4l2cuse_source_negotiate(src, &pix), ==, 0);
	g_assert_cmpuint(pix.pixelformat, ==, V4L2_PIX_FMT_MJPEG);
	g_assert_cmpuint(pix.width, ==, 320);
	g_assert_true(v4l2cuse_offer_inner(src) != src);
	v4l2cuse_source_destroy(src);

	/* What the source does not offer is refused, naming it. */
	g_assert_null(wrapped("pattern", "[device a]\nsizes=123x45\n", &err));
	g_assert_cmpstr(err, ==, "source 'pattern' does not offer 123x45");
	g_clear_pointer(&err, g_free);
	g_assert_null(wrapped("pattern,formats=YUYV", "[device a]\nformats=MJPG\n", &err));
	g_assert_cmpstr(err, ==, "source 'pattern' does not offer format MJPG");
	g_clear_pointer(&err, g_free);
	g_assert_null(wrapped("pattern", "[device a]\nframe-rates=7\n", &err));
	g_assert_cmpstr(err, ==, "source 'pattern' does not offer 7/1 fps");
	g_clear_pointer(&err, g_free);
}

/* ---------------------------------------------------------------------- */
/* The daemon itself refuses bad files: one line on stderr, exit status 2. */

static void
run_daemon(const char *conf_text, bool check_only, const char *expect, int expect_status)
{
	const char *daemon = g_getenv("V4L2CUSE_DAEMON");
	g_autofree char *dir = NULL, *path = NULL, *out = NULL, *errout = NULL;
	const char *argv[6] = { daemon, "--config", NULL, NULL, NULL };
	g_autoptr(GError) error = NULL;
	int status;

	if (!daemon) {
		g_test_skip("V4L2CUSE_DAEMON is not set");
		return;
	}
	dir = g_dir_make_tmp("v4l2cuse-daemon-XXXXXX", NULL);
	path = g_build_filename(dir, "v4l2cuse.conf", NULL);
	g_assert_true(g_file_set_contents(path, conf_text, -1, NULL));
	argv[2] = path;
	if (check_only)
		argv[3] = "--check-config";
	g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out,
				   &errout, &status, &error));
	g_assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) != expect_status || !strstr(errout, expect))
		g_error("daemon --config: expected status %d and '%s', got %d and '%s'",
			expect_status, expect, WEXITSTATUS(status), errout);
	if (expect_status != 0) {
		/* Exactly one line. */
		g_assert_cmpuint(strlen(errout), >, 0);
		g_assert_true(strchr(errout, '\n') == errout + strlen(errout) - 1);
	}
	rm_rf(dir);
}

V4L2CUSE_TEST("/config/daemon-refuses", test_daemon_refuses)
{
	run_daemon("[device a]\nnode=video40\nwhat=1\n", false,
		   "v4l2cuse.conf:3: [device a] what: unknown key", 2);
	run_daemon("[device a]\nsize=0x0\n", false,
		   "v4l2cuse.conf:2: [device a] size: '0x0' is not a valid size", 2);
	run_daemon("[device a]\nnode=video40\n[device b]\nnode=video40\n", false,
		   "v4l2cuse.conf:3: [device b] node: video40 is already the node of", 2);
	/* Values only the source can judge fail before any CUSE work too. */
	run_daemon("[device a]\nsource=pattern,nosuchoption=1\n", false,
		   "v4l2cuse.conf:2: [device a] source: pattern: unknown option 'nosuchoption'", 2);
	run_daemon("[device a]\nsizes=123x45\n", true,
		   "[device a] source: source 'pattern' does not offer 123x45", 2);
	run_daemon("[device a]\nnode=video40\nformats=YUYV\n", true, "", 0);
}
