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
#include "v4l2cuse/parse.h"
#include "v4l2cuse/source.h"
#include "test-source-util.h"
#include "test-main.h"

/* The registered sources, as "unknown source" lists them. */
#if HAVE_GSTREAMER_READER
#define KNOWN	"pattern, file, uvc, gst, uri"
#else
#define KNOWN	"pattern, file, uvc"
#endif

static void
assert_one_line(const char *msg)
{
	g_assert_nonnull(msg);
	g_assert_cmpuint(strlen(msg), >, 0);
	g_assert_null(strchr(msg, '\n'));
}

V4L2CUSE_TEST("/registry/lookup", test_lookup)
{
	g_assert_true(v4l2cuse_source_lookup("pattern") == &v4l2cuse_testpattern_ops);
	g_assert_null(v4l2cuse_source_lookup("nope"));
	g_assert_null(v4l2cuse_source_lookup(NULL));
	g_assert_true(v4l2cuse_source_by_index(0) == &v4l2cuse_testpattern_ops);
	g_assert_true(v4l2cuse_source_by_index(1) == &v4l2cuse_file_ops);
	g_assert_true(v4l2cuse_source_lookup("file") == &v4l2cuse_file_ops);
	g_assert_true(v4l2cuse_source_by_index(2) == &v4l2cuse_uvc_ops);
#if HAVE_GSTREAMER_READER
	g_assert_true(v4l2cuse_source_by_index(3) == &v4l2cuse_gst_ops);
	g_assert_true(v4l2cuse_source_lookup("uri") == &v4l2cuse_uri_ops);
	g_assert_true(v4l2cuse_source_by_index(4) == &v4l2cuse_uri_ops);
	g_assert_null(v4l2cuse_source_by_index(5));
#else
	g_assert_null(v4l2cuse_source_lookup("gst"));
	g_assert_null(v4l2cuse_source_by_index(3));
#endif
	g_assert_cmpuint(v4l2cuse_testpattern_ops.abi, ==, V4L2CUSE_SOURCE_ABI);
}

V4L2CUSE_TEST("/registry/create-ok", test_create_ok)
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

V4L2CUSE_TEST("/registry/create-errors", test_create_errors)
{
	static const struct { const char *spec; int err; const char *msg; } cases[] = {
		{ "xyz", -ENOENT, "unknown source 'xyz' (known: " KNOWN ")" },
		{ "xyz:1,a=b", -ENOENT, "unknown source 'xyz' (known: " KNOWN ")" },
		{ ":smpte", -ENOENT, "unknown source '' (known: " KNOWN ")" },
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
		{ "pattern,sizes=641x480", -EINVAL, "pattern: option 'sizes': '641x480' is not an "
		  "even size (4:2:x formats need one)" },
		{ "pattern,sizes=640x480+640x480", -EINVAL,
		  "pattern: option 'sizes': '640x480' is listed twice" },
		{ "pattern,sizes=+;", -EINVAL, "pattern: option 'sizes': empty list" },
		{ "pattern,sizes=640x480x2", -EINVAL, "pattern: option 'sizes': '640x480x2' is not a "
		  "valid size (WIDTHxHEIGHT, 1..8192 each)" },
		{ "pattern,sizes=2x2+4x4+6x6+8x8+10x10+12x12+14x14+16x16+18x18+20x20+22x22+24x24+"
		  "26x26+28x28+30x30+32x32+34x34", -EINVAL,
		  "pattern: option 'sizes': more than 16 entries" },
		{ "pattern,fps=30;30/1", -EINVAL, "pattern: option 'fps': '30/1' is listed twice" },
		{ "pattern,fps=60/2+30", -EINVAL, "pattern: option 'fps': '30' is listed twice" },
		{ "pattern,fps=241", -EINVAL, "pattern: option 'fps': '241' is not a frame rate (N "
		  "or N/D frames per second, up to 240)" },
		{ "pattern,fps=-30", -EINVAL, NULL },
		{ "pattern,sizes=640", -EINVAL, NULL },
		{ "pattern,sizes=", -EINVAL, NULL },
		{ "pattern,sizes=8194x2", -EINVAL, NULL },
		{ "pattern,fps=0", -EINVAL, NULL },
		{ "pattern,fps=30/0", -EINVAL, NULL },
		{ "pattern,fps=2000", -EINVAL, NULL },
		{ "pattern,fps=abc", -EINVAL, NULL },
		{ "pattern,formats=ABCD", -EINVAL, "pattern: option 'formats': unknown pixel format "
		  "'ABCD' (known: YUYV UYVY YVYU NV12 NV21 YU12 YV12 RGB3 BGR3 BX24 XR24 RGBP GREY "
		  "MJPG)" },
		{ "pattern,formats=NV16", -EINVAL, NULL },	/* read, never produced */
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

V4L2CUSE_TEST("/registry/options", test_options)
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

V4L2CUSE_TEST("/registry/negotiate", test_negotiate)
{
	struct v4l2cuse_source *src = ts_make("pattern");
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
	src = ts_make("pattern,formats=GREY+RGB3,sizes=100x50+200x100");
	pix = (struct v4l2_pix_format){ .pixelformat = V4L2_PIX_FMT_YUYV, .width = 190,
					.height = 100 };
	g_assert_cmpint(v4l2cuse_source_negotiate(src, &pix), ==, 0);
	g_assert_cmpuint(pix.pixelformat, ==, V4L2_PIX_FMT_GREY);
	g_assert_cmpuint(pix.width, ==, 200);
	g_assert_cmpuint(pix.height, ==, 100);
	g_assert_cmpuint(pix.sizeimage, ==, 200 * 100);
	v4l2cuse_source_destroy(src);
}

/* The one syntax of sizes, rates, fourccs and lists (v4l2cuse/parse.h). */
V4L2CUSE_TEST("/registry/parse", test_parse)
{
	static const struct {
		const char *s;
		uint32_t w, h;		/* 0: refused */
	} sizes[] = {
		{ "640x480", 640, 480 }, { "1x1", 1, 1 }, { "8192x8192", 8192, 8192 },
		{ "0640x0480", 640, 480 }, { "8193x1", 0, 0 }, { "0x480", 0, 0 }, { "640x", 0, 0 },
		{ "x480", 0, 0 }, { "+640x480", 0, 0 }, { " 640x480", 0, 0 }, { "640x 480", 0, 0 },
		{ "640X480", 0, 0 }, { "640x480x2", 0, 0 }, { "-1x480", 0, 0 }, { "", 0, 0 },
		{ "4294967936x480", 0, 0 },
	};
	static const struct {
		const char *s;
		uint32_t num, den;	/* the interval; 0: refused */
	} rates[] = {
		{ "30", 1, 30 }, { "30000/1001", 1001, 30000 }, { "240", 1, 240 },
		{ "480/2", 2, 480 }, { "1/10", 10, 1 }, { "241", 0, 0 }, { "0", 0, 0 },
		{ "30/0", 0, 0 }, { "30/", 0, 0 }, { "/30", 0, 0 }, { "30/1/1", 0, 0 },
		{ "+30", 0, 0 }, { "30.0", 0, 0 }, { "4294967296", 0, 0 }, { "", 0, 0 },
	};
	static const struct {
		const char *s;
		bool ok, value;
	} bools[] = {
		{ "true", true, true }, { "YES", true, true }, { "On", true, true },
		{ "1", true, true }, { "false", true, false }, { "no", true, false },
		{ "OFF", true, false }, { "0", true, false }, { "", false, false },
		{ "2", false, false }, { "yes ", false, false }, { "tru", false, false },
		{ "enabled", false, false },
	};
	struct v4l2cuse_size sz[V4L2CUSE_MAX_LIST];
	struct v4l2_fract iv[V4L2CUSE_MAX_LIST];
	uint32_t f[V4L2CUSE_MAX_LIST];
	unsigned int n;

	for (size_t i = 0; i < G_N_ELEMENTS(sizes); i++) {
		g_autofree char *err = NULL;
		uint32_t w = 0, h = 0;
		int r = v4l2cuse_parse_size(sizes[i].s, &w, &h, &err);

		g_test_message("'%s' -> %d %ux%u %s", sizes[i].s, r, w, h, err ? err : "");
		g_assert_cmpint(r, ==, sizes[i].w ? 0 : -EINVAL);
		g_assert_cmpuint(w, ==, sizes[i].w);
		g_assert_cmpuint(h, ==, sizes[i].h);
		g_assert_true(!err == !!sizes[i].w);
	}
	for (size_t i = 0; i < G_N_ELEMENTS(rates); i++) {
		g_autofree char *err = NULL;
		struct v4l2_fract v = { 0, 0 };
		int r = v4l2cuse_parse_rate(rates[i].s, &v, &err);

		g_test_message("'%s' -> %d %u/%u %s", rates[i].s, r, v.numerator, v.denominator,
			       err ? err : "");
		g_assert_cmpint(r, ==, rates[i].num ? 0 : -EINVAL);
		g_assert_cmpuint(v.numerator, ==, rates[i].num);
		g_assert_cmpuint(v.denominator, ==, rates[i].den);
	}
	g_assert_true(v4l2cuse_interval_valid((struct v4l2_fract){ 1, V4L2CUSE_MAX_FPS }));
	g_assert_false(v4l2cuse_interval_valid((struct v4l2_fract){ 1, V4L2CUSE_MAX_FPS + 1 }));
	g_assert_false(v4l2cuse_interval_valid((struct v4l2_fract){ 0, 1 }));

	g_assert_cmpint(v4l2cuse_parse_fourcc("mjpg", &f[0], NULL), ==, 0);
	g_assert_cmpuint(f[0], ==, V4L2_PIX_FMT_MJPEG);
	g_assert_cmpint(v4l2cuse_parse_fourcc_of("nv16", V4L2CUSE_FORMATS_RAW, &f[0], NULL), ==, 0);
	g_assert_cmpuint(f[0], ==, V4L2_PIX_FMT_NV16);
	{
		g_autofree char *err = NULL;

		g_assert_cmpint(v4l2cuse_parse_fourcc("NV16", &f[0], &err), ==, -EINVAL);
		g_assert_true(g_str_has_prefix(err, "unknown pixel format 'NV16' (known: YUYV "));
	}

	/* Lists: any of , ; + space tab between items, empty items skipped. */
	g_assert_cmpint(v4l2cuse_parse_fourccs(" MJPG, yuyv;+GREY\t", f, &n, NULL), ==, 0);
	g_assert_cmpuint(n, ==, 3);
	g_assert_cmpuint(f[2], ==, V4L2_PIX_FMT_GREY);
	g_assert_cmpint(v4l2cuse_parse_sizes("640x480+320x240", sz, &n, NULL), ==, 0);
	g_assert_cmpuint(n, ==, 2);
	g_assert_cmpuint(sz[1].height, ==, 240);
	{
		g_autofree char *err = NULL;

		/* The same rate twice, and nothing changes on failure. */
		iv[0] = (struct v4l2_fract){ 7, 7 };
		g_assert_cmpint(v4l2cuse_parse_rates("60/2,30", iv, &n, &err), ==, -EINVAL);
		g_assert_cmpstr(err, ==, "'30' is listed twice");
		g_assert_cmpuint(iv[0].numerator, ==, 7);
	}
	{
		g_autofree char *err = NULL;

		g_assert_cmpint(v4l2cuse_parse_rates(" ,;", iv, &n, &err), ==, -EINVAL);
		g_assert_cmpstr(err, ==, "empty list");
	}

	/* Booleans: the config file's and the sources' options' one spelling. */
	for (size_t i = 0; i < G_N_ELEMENTS(bools); i++) {
		g_autofree char *err = NULL;
		bool v = !bools[i].value;
		int r = v4l2cuse_parse_bool(bools[i].s, &v, &err);

		g_test_message("'%s' -> %d %d %s", bools[i].s, r, v, err ? err : "");
		g_assert_cmpint(r, ==, bools[i].ok ? 0 : -EINVAL);
		g_assert_true(!err == bools[i].ok);
		if (bools[i].ok)
			g_assert_cmpint(v, ==, bools[i].value);
	}
	{
		g_autofree char *err = NULL;
		bool v = true;

		g_assert_cmpint(v4l2cuse_parse_bool("maybe", &v, &err), ==, -EINVAL);
		g_assert_cmpstr(err, ==, "'maybe' is not a boolean (true or false)");
		g_assert_true(v);	/* untouched */
	}
}
