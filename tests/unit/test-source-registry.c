/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The source registry, option parsing helpers and default negotiation
 * (sources/registry.c, sources/options.c).
 */

#include "config.h"

#include <errno.h>
#include <string.h>

#include <glib.h>

#include "v4l2cuse/format.h"
#include "v4l2cuse/source.h"

static void
assert_one_line(const char *msg)
{
	g_assert_nonnull(msg);
	g_assert_cmpuint(strlen(msg), >, 0);
	g_assert_null(strchr(msg, '\n'));
}

static void
test_lookup(void)
{
	g_assert_true(v4l2cuse_source_lookup("pattern") == &v4l2cuse_testpattern_ops);
	g_assert_null(v4l2cuse_source_lookup("nope"));
	g_assert_null(v4l2cuse_source_lookup(NULL));
	g_assert_true(v4l2cuse_source_by_index(0) == &v4l2cuse_testpattern_ops);
	g_assert_true(v4l2cuse_source_by_index(1) == &v4l2cuse_file_ops);
	g_assert_true(v4l2cuse_source_lookup("file") == &v4l2cuse_file_ops);
	g_assert_true(v4l2cuse_source_by_index(2) == &v4l2cuse_uvc_ops);
	g_assert_null(v4l2cuse_source_by_index(3));
	g_assert_cmpuint(v4l2cuse_testpattern_ops.abi, ==, V4L2CUSE_SOURCE_ABI);
}

static void
test_create_ok(void)
{
	static const char *const specs[] = {
		NULL, "", "pattern", "pattern:smpte", "pattern:bars75,hscroll=2",
		"pattern,box=1", "pattern,box", "pattern:,border=1", "pattern:22",
		"pattern:ramp,sizes=640x480;320x240,fps=30000/1001+15,formats=MJPG+yuyv",
		"pattern,overlay=counter+label,label=cam 1", "pattern,overlay=off",
		"pattern,brightness=10,contrast=255,saturation=0,hue=-128,hflip=yes,vflip=on",
		"pattern,fail_start=1,fail_produce_every=2,drop_every=3,error_flag_every=4,"
		"vanish_after=5,quality=1", "pattern,,box=1,",
	};

	for (size_t i = 0; i < G_N_ELEMENTS(specs); i++) {
		struct v4l2cuse_source *src = NULL;
		char *error = NULL;
		int r = v4l2cuse_source_create(specs[i], &src, &error);

		if (r < 0)
			g_error("'%s': %d %s", specs[i] ? specs[i] : "(null)", r, error);
		g_assert_null(error);
		g_assert_true(src->ops == &v4l2cuse_testpattern_ops);
		v4l2cuse_source_destroy(src);
	}
	v4l2cuse_source_destroy(NULL);
}

static void
test_create_errors(void)
{
	static const struct { const char *spec; int err; const char *msg; } cases[] = {
		{ "xyz", -ENOENT, "unknown source 'xyz' (known: pattern, file, uvc)" },
		{ "xyz:1,a=b", -ENOENT, "unknown source 'xyz' (known: pattern, file, uvc)" },
		{ ":smpte", -ENOENT, "unknown source '' (known: pattern, file, uvc)" },
		{ "pattern,foo=1", -EINVAL, "pattern: unknown option 'foo' (known: sizes, fps, formats, "
		  "hscroll, vscroll, box, border, overlay, label, quality, brightness, contrast, "
		  "saturation, hue, hflip, vflip, fail_start, fail_produce_every, drop_every, "
		  "error_flag_every, vanish_after)" },
		{ "pattern,hscroll=abc", -EINVAL, "pattern: option 'hscroll': expected an integer in "
		  "-8192..8192, got 'abc'" },
		{ "pattern,hscroll=", -EINVAL, NULL },
		{ "pattern,hscroll=9000", -EINVAL, NULL },
		{ "pattern,box=maybe", -EINVAL, "pattern: option 'box': expected 0 or 1, got 'maybe'" },
		{ "pattern,box=1,box=0", -EINVAL, "pattern: option 'box' given twice" },
		{ "pattern,=1", -EINVAL, "pattern: option '=1' has no name" },
		{ "pattern:nonsense", -EINVAL, NULL },
		{ "pattern:23", -EINVAL, NULL },
		{ "pattern,sizes=641x480", -EINVAL, "pattern: option 'sizes': '641x480' is not WxH "
		  "with even W and H in 2..8192" },
		{ "pattern,sizes=640x480+640x480", -EINVAL,
		  "pattern: option 'sizes': '640x480' given twice" },
		{ "pattern,sizes=+;", -EINVAL, "pattern: option 'sizes': nothing given" },
		{ "pattern,sizes=2x2+4x4+6x6+8x8+10x10+12x12+14x14+16x16+18x18+20x20+22x22+24x24+"
		  "26x26+28x28+30x30+32x32+34x34", -EINVAL,
		  "pattern: option 'sizes': more than 16 items" },
		{ "pattern,fps=30;30/1", -EINVAL, "pattern: option 'fps': '30/1' given twice" },
		{ "pattern,fps=60/2+30", -EINVAL, "pattern: option 'fps': '30' given twice" },
		{ "pattern,sizes=640", -EINVAL, NULL },
		{ "pattern,sizes=", -EINVAL, NULL },
		{ "pattern,sizes=8194x2", -EINVAL, NULL },
		{ "pattern,fps=0", -EINVAL, NULL },
		{ "pattern,fps=30/0", -EINVAL, NULL },
		{ "pattern,fps=2000", -EINVAL, NULL },
		{ "pattern,fps=abc", -EINVAL, NULL },
		{ "pattern,formats=ABCD", -EINVAL, "pattern: option 'formats': unknown format 'ABCD' "
		  "(known: YUYV UYVY YVYU NV12 NV21 YU12 YV12 RGB3 BGR3 BX24 XR24 RGBP GREY MJPG)" },
		{ "pattern,formats=YUYV+YUYV", -EINVAL, NULL },
		{ "pattern,overlay=counter+bogus", -EINVAL, NULL },
		{ "pattern,quality=101", -EINVAL, NULL },
		{ "pattern,brightness=256", -EINVAL, NULL },
		{ "pattern,hue=-129", -EINVAL, NULL },
		{ "pattern,vanish_after=-1", -EINVAL, NULL },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		struct v4l2cuse_source *src = NULL;
		char *error = NULL;
		int r = v4l2cuse_source_create(cases[i].spec, &src, &error);

		if (r != cases[i].err)
			g_error("'%s': got %d, expected %d", cases[i].spec, r, cases[i].err);
		g_assert_null(src);
		assert_one_line(error);
		if (cases[i].msg)
			g_assert_cmpstr(error, ==, cases[i].msg);
		else
			g_assert_true(g_str_has_prefix(error, "pattern: "));
		g_free(error);
	}

	/* NULL ret_error is allowed */
	struct v4l2cuse_source *src = NULL;

	g_assert_cmpint(v4l2cuse_source_create("nope", &src, NULL), ==, -ENOENT);
	g_assert_cmpint(v4l2cuse_source_create("pattern,nope", &src, NULL), ==, -EINVAL);
}

static void
test_options(void)
{
	static const char *const keys[] = { "a", "b", "flag", "n", "s", NULL };
	struct v4l2cuse_opts *o = NULL;
	char *error = NULL;
	int64_t i64 = 77;
	uint32_t u32 = 77;
	bool b = false;

	g_assert_cmpint(v4l2cuse_opts_parse("t", "ARG,a=1,flag,n=-5,s=x=y", keys, &o, &error), ==, 0);
	g_assert_cmpstr(v4l2cuse_opts_arg(o), ==, "ARG");
	g_assert_true(v4l2cuse_opts_has(o, "a"));
	g_assert_false(v4l2cuse_opts_has(o, "b"));
	g_assert_cmpstr(v4l2cuse_opts_get_str(o, "s", NULL), ==, "x=y");
	g_assert_cmpstr(v4l2cuse_opts_get_str(o, "b", "def"), ==, "def");
	g_assert_cmpint(v4l2cuse_opts_get_bool(o, "flag", false, &b, &error), ==, 0);
	g_assert_true(b);
	g_assert_cmpint(v4l2cuse_opts_get_bool(o, "b", true, &b, &error), ==, 0);
	g_assert_true(b);
	g_assert_cmpint(v4l2cuse_opts_get_int(o, "n", 0, -10, 10, &i64, &error), ==, 0);
	g_assert_cmpint(i64, ==, -5);
	g_assert_cmpint(v4l2cuse_opts_get_int(o, "n", 0, 0, 10, &i64, &error), ==, -EINVAL);
	g_assert_cmpint(i64, ==, -5);	/* untouched on failure */
	g_assert_cmpstr(error, ==, "t: option 'n': expected an integer in 0..10, got '-5'");
	g_clear_pointer(&error, g_free);
	g_assert_cmpint(v4l2cuse_opts_get_uint(o, "a", 5, 0, 10, &u32, &error), ==, 0);
	g_assert_cmpuint(u32, ==, 1);
	g_assert_cmpint(v4l2cuse_opts_get_uint(o, "b", 5, 0, 10, &u32, &error), ==, 0);
	g_assert_cmpuint(u32, ==, 5);
	g_assert_cmpint(v4l2cuse_opts_get_bool(o, "s", false, &b, &error), ==, -EINVAL);
	assert_one_line(error);
	g_clear_pointer(&error, g_free);
	error = v4l2cuse_opts_error(o, "custom %d", 3);
	g_assert_cmpstr(error, ==, "t: custom 3");
	g_clear_pointer(&error, g_free);
	v4l2cuse_opts_free(o);

	/* leading ',' = no ARG; empty args; NULL args */
	g_assert_cmpint(v4l2cuse_opts_parse("t", ",a=2", keys, &o, NULL), ==, 0);
	g_assert_null(v4l2cuse_opts_arg(o));
	g_assert_cmpstr(v4l2cuse_opts_get_str(o, "a", NULL), ==, "2");
	v4l2cuse_opts_free(o);
	g_assert_cmpint(v4l2cuse_opts_parse("t", "", keys, &o, NULL), ==, 0);
	g_assert_null(v4l2cuse_opts_arg(o));
	v4l2cuse_opts_free(o);
	g_assert_cmpint(v4l2cuse_opts_parse("t", NULL, keys, &o, NULL), ==, 0);
	v4l2cuse_opts_free(o);
	v4l2cuse_opts_free(NULL);

	/* an ARG may contain '=' and ':' */
	g_assert_cmpint(v4l2cuse_opts_parse("t", "/x=y:z.y4m,a=1", keys, &o, NULL), ==, 0);
	g_assert_cmpstr(v4l2cuse_opts_arg(o), ==, "/x=y:z.y4m");
	v4l2cuse_opts_free(o);

	o = NULL;
	g_assert_cmpint(v4l2cuse_opts_parse("t", ",zz=1", keys, &o, &error), ==, -EINVAL);
	g_assert_null(o);
	g_assert_cmpstr(error, ==, "t: unknown option 'zz' (known: a, b, flag, n, s)");
	g_clear_pointer(&error, g_free);
	g_assert_cmpint(v4l2cuse_opts_parse("t", ",a=1", NULL, &o, &error), ==, -EINVAL);
	g_assert_cmpstr(error, ==, "t: unknown option 'a' (known: none)");
	g_clear_pointer(&error, g_free);

	{
		__attribute__((cleanup(v4l2cuse_opts_freep))) struct v4l2cuse_opts *auto_o = NULL;

		g_assert_cmpint(v4l2cuse_opts_parse("t", "x", keys, &auto_o, NULL), ==, 0);
	}
}

static struct v4l2cuse_source *
make(const char *spec)
{
	struct v4l2cuse_source *src = NULL;
	char *error = NULL;

	if (v4l2cuse_source_create(spec, &src, &error) < 0)
		g_error("%s: %s", spec, error);
	return src;
}

static void
test_negotiate(void)
{
	struct v4l2cuse_source *src = make("pattern");
	struct v4l2_pix_format pix, again;
	static const struct { uint32_t w, h, ew, eh; } sizes[] = {
		{ 640, 480, 640, 480 }, { 700, 500, 640, 480 }, { 1, 1, 320, 240 },
		{ 0, 0, 320, 240 }, { 0xffffffff, 0xffffffff, 1920, 1080 },
		{ 1280, 720, 1280, 720 }, { 1700, 950, 1920, 1080 }, { 1600, 900, 1280, 720 }, { 1000, 650, 1280, 720 }, { 960, 600, 640, 480 },
		{ 480, 360, 320, 240 },	/* |dw|+|dh| 280 vs 280: first enumerated wins */
	};

	for (size_t i = 0; i < G_N_ELEMENTS(sizes); i++) {
		memset(&pix, 0xff, sizeof(pix));
		pix.pixelformat = V4L2_PIX_FMT_NV12;
		pix.width = sizes[i].w;
		pix.height = sizes[i].h;
		g_assert_cmpint(v4l2cuse_source_negotiate(src, &pix), ==, 0);
		g_assert_cmpuint(pix.pixelformat, ==, V4L2_PIX_FMT_NV12);
		g_assert_cmpuint(pix.width, ==, sizes[i].ew);
		g_assert_cmpuint(pix.height, ==, sizes[i].eh);
		g_assert_cmpuint(pix.bytesperline, ==, sizes[i].ew);
		g_assert_cmpuint(pix.sizeimage, ==, sizes[i].ew * sizes[i].eh * 3 / 2);
		g_assert_cmpuint(pix.field, ==, V4L2_FIELD_NONE);
		g_assert_cmpuint(pix.priv, ==, V4L2_PIX_FMT_PRIV_MAGIC);
		again = pix;
		g_assert_cmpint(v4l2cuse_source_negotiate(src, &again), ==, 0);
		g_assert_true(memcmp(&pix, &again, sizeof(pix)) == 0);
	}

	/* unknown fourcc -> the first offered (YUYV) */
	memset(&pix, 0xff, sizeof(pix));
	g_assert_cmpint(v4l2cuse_source_negotiate(src, &pix), ==, 0);
	g_assert_cmpuint(pix.pixelformat, ==, V4L2_PIX_FMT_YUYV);
	g_assert_cmpuint(pix.width, ==, 1920);
	g_assert_cmpuint(pix.colorspace, ==, V4L2_COLORSPACE_REC709);

	/* MJPEG: compressed */
	pix = (struct v4l2_pix_format){ .pixelformat = V4L2_PIX_FMT_MJPEG, .width = 640,
					.height = 480 };
	g_assert_cmpint(v4l2cuse_source_negotiate(src, &pix), ==, 0);
	g_assert_cmpuint(pix.bytesperline, ==, 0);
	g_assert_cmpuint(pix.sizeimage, ==, 640 * 480 * 2 + V4L2CUSE_JPEG_HEADROOM);
	g_assert_cmpuint(pix.colorspace, ==, V4L2_COLORSPACE_JPEG);
	v4l2cuse_source_destroy(src);

	/* restricted formats and sizes */
	src = make("pattern,formats=GREY+RGB3,sizes=100x50+200x100");
	pix = (struct v4l2_pix_format){ .pixelformat = V4L2_PIX_FMT_YUYV, .width = 190,
					.height = 100 };
	g_assert_cmpint(v4l2cuse_source_negotiate(src, &pix), ==, 0);
	g_assert_cmpuint(pix.pixelformat, ==, V4L2_PIX_FMT_GREY);
	g_assert_cmpuint(pix.width, ==, 200);
	g_assert_cmpuint(pix.height, ==, 100);
	g_assert_cmpuint(pix.sizeimage, ==, 200 * 100);
	v4l2cuse_source_destroy(src);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/registry/lookup", test_lookup);
	g_test_add_func("/registry/create-ok", test_create_ok);
	g_test_add_func("/registry/create-errors", test_create_errors);
	g_test_add_func("/registry/options", test_options);
	g_test_add_func("/registry/negotiate", test_negotiate);
	return g_test_run();
}
