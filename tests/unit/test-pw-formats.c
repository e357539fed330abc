/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pw-bridge/formats.c: our modes -> EnumFormat objects -> the Format a
 * consumer fixes -> back to a mode. The negotiation step is PipeWire's own
 * (spa_pod_filter of the consumer's wish against our object, then
 * spa_pod_fixate), so what we test is what a real link does.
 */
#include "config.h"

#include <errno.h>
#include <linux/videodev2.h>
#include <glib.h>
#include <spa/debug/types.h>
#include <spa/param/format.h>
#include <spa/param/video/format.h>
#include <spa/param/video/raw.h>
#include <spa/param/video/raw-types.h>
#include <spa/pod/filter.h>
#include <spa/pod/iter.h>
#include <spa/pod/parser.h>

#include "util/macros.h"
#include "formats.h"
#include "test-main.h"

/*
 * Every raw format the daemon offers, by the name PipeWire gives it
 * (SPA's type names, as pw-dump and pw-cli print them), plus MJPG, which
 * is the mjpg subtype (no raw format). A second statement of the mapping,
 * in the words a user reads, not a copy of formats.c's table.
 */
static const struct {
	uint32_t fourcc;
	const char *spa_name;		/* NULL: SPA_MEDIA_SUBTYPE_mjpg */
} expected_map[] = {
	{ V4L2_PIX_FMT_YUYV, "YUY2" },
	{ V4L2_PIX_FMT_UYVY, "UYVY" },
	{ V4L2_PIX_FMT_YVYU, "YVYU" },
	{ V4L2_PIX_FMT_NV12, "NV12" },
	{ V4L2_PIX_FMT_NV21, "NV21" },
	{ V4L2_PIX_FMT_YUV420, "I420" },
	{ V4L2_PIX_FMT_YVU420, "YV12" },
	{ V4L2_PIX_FMT_RGB24, "RGB" },
	{ V4L2_PIX_FMT_BGR24, "BGR" },
	{ V4L2_PIX_FMT_XRGB32, "xRGB" },
	{ V4L2_PIX_FMT_XBGR32, "BGRx" },
	{ V4L2_PIX_FMT_RGB565, "RGB16" },
	{ V4L2_PIX_FMT_GREY, "GRAY8" },
	{ V4L2_PIX_FMT_MJPEG, NULL },
};

static uint32_t
expected_subtype(size_t i)
{
	return expected_map[i].spa_name ? SPA_MEDIA_SUBTYPE_raw : SPA_MEDIA_SUBTYPE_mjpg;
}

static struct client_mode
mode(uint32_t fourcc, uint32_t w, uint32_t h, unsigned int n_rates, ...)
{
	struct client_mode m = { .fourcc = fourcc, .width = w, .height = h, .n_rates = n_rates };
	va_list ap;

	va_start(ap, n_rates);
	for (unsigned int i = 0; i < n_rates; i++)
		m.rates[i] = (struct client_rate){ va_arg(ap, uint32_t), 1 };
	va_end(ap);
	return m;
}

/* The fields of an EnumFormat object, read with SPA's own parser. */
struct parsed {
	uint32_t media_type, subtype, format;
	struct spa_rectangle size;
	uint32_t choice;		/* of the framerate */
	struct spa_fraction rates[CLIENT_MAX_RATES + 1];
	uint32_t n_rates;		/* values, the default included */
};

static struct parsed
parse_enum(const struct spa_pod *pod)
{
	struct parsed p = { .format = SPA_VIDEO_FORMAT_UNKNOWN };
	const struct spa_pod_prop *prop;
	const struct spa_pod *val;
	const struct spa_fraction *values;

	g_assert_nonnull(pod);
	g_assert_true(spa_pod_is_object_type(pod, SPA_TYPE_OBJECT_Format));
	g_assert_cmpuint(((const struct spa_pod_object *)pod)->body.id, ==, SPA_PARAM_EnumFormat);
	g_assert_cmpint(spa_pod_parse_object(pod, SPA_TYPE_OBJECT_Format, NULL,
		SPA_FORMAT_mediaType, SPA_POD_Id(&p.media_type),
		SPA_FORMAT_mediaSubtype, SPA_POD_Id(&p.subtype),
		SPA_FORMAT_VIDEO_format, SPA_POD_OPT_Id(&p.format),
		SPA_FORMAT_VIDEO_size, SPA_POD_Rectangle(&p.size)), >=, 0);
	prop = spa_pod_find_prop(pod, NULL, SPA_FORMAT_VIDEO_framerate);
	g_assert_nonnull(prop);
	val = spa_pod_get_values(&prop->value, &p.n_rates, &p.choice);
	g_assert_cmpuint(val->type, ==, SPA_TYPE_Fraction);
	g_assert_cmpuint(p.n_rates, <=, G_N_ELEMENTS(p.rates));
	values = SPA_POD_BODY_CONST(val);
	for (uint32_t i = 0; i < p.n_rates; i++)
		p.rates[i] = values[i];
	return p;
}

/*
 * What a link does: filter our EnumFormat with the consumer's wish, fixate
 * the result (the default where a choice is left). NULL if they do not
 * intersect.
 */
static struct spa_pod *
negotiate(const struct spa_pod *ours, const struct spa_pod *wish, uint8_t *buf, size_t size)
{
	struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buf, size);
	struct spa_pod *result = NULL;

	if (spa_pod_filter(&b, &result, ours, wish) < 0)
		return NULL;
	g_assert_nonnull(result);
	spa_pod_fixate(result);
	return result;
}

V4L2CUSE_TEST("/pw-formats/map", test_map)
{
	uint32_t subtype, format;

	for (size_t i = 0; i < G_N_ELEMENTS(expected_map); i++) {
		g_assert_true(bridge_fourcc_to_spa(expected_map[i].fourcc, &subtype, &format));
		g_assert_cmpuint(subtype, ==, expected_subtype(i));
		if (expected_map[i].spa_name)
			g_assert_cmpstr(spa_debug_type_find_short_name(spa_type_video_format, format),
					==, expected_map[i].spa_name);
		else
			g_assert_cmpuint(format, ==, SPA_VIDEO_FORMAT_ENCODED);
		g_assert_cmpuint(bridge_fourcc_from_spa(subtype, format), ==,
				 expected_map[i].fourcc);
	}
	/* JPEG frames are offered as mjpg too; mjpg comes back as MJPG. */
	g_assert_true(bridge_fourcc_to_spa(V4L2_PIX_FMT_JPEG, &subtype, &format));
	g_assert_cmpuint(subtype, ==, SPA_MEDIA_SUBTYPE_mjpg);
	g_assert_cmpuint(bridge_fourcc_from_spa(SPA_MEDIA_SUBTYPE_mjpg, SPA_VIDEO_FORMAT_UNKNOWN),
			 ==, V4L2_PIX_FMT_MJPEG);
	/* Nothing for what neither side can name. */
	g_assert_false(bridge_fourcc_to_spa(V4L2_PIX_FMT_YUV422P, &subtype, &format));
	g_assert_false(bridge_fourcc_to_spa(v4l2_fourcc('H', '2', '6', '4'), &subtype, &format));
	g_assert_cmpuint(bridge_fourcc_from_spa(SPA_MEDIA_SUBTYPE_raw, SPA_VIDEO_FORMAT_ARGB), ==, 0);
	g_assert_cmpuint(bridge_fourcc_from_spa(SPA_MEDIA_SUBTYPE_h264, SPA_VIDEO_FORMAT_ENCODED),
			 ==, 0);
}

/* One object per mode, as PipeWire's v4l2 plugin: fixed size, rates an Enum. */
V4L2CUSE_TEST("/pw-formats/build-raw", test_build_raw)
{
	struct client_mode m = mode(V4L2_PIX_FMT_YUYV, 640, 480, 3, 30, 25, 15);
	uint8_t buf[1024];
	struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buf, sizeof(buf));
	struct parsed p = parse_enum(bridge_mode_build(&b, &m));

	g_assert_cmpuint(p.media_type, ==, SPA_MEDIA_TYPE_video);
	g_assert_cmpuint(p.subtype, ==, SPA_MEDIA_SUBTYPE_raw);
	g_assert_cmpuint(p.format, ==, SPA_VIDEO_FORMAT_YUY2);
	g_assert_cmpuint(p.size.width, ==, 640);
	g_assert_cmpuint(p.size.height, ==, 480);
	g_assert_cmpuint(p.choice, ==, SPA_CHOICE_Enum);
	/* The default (the device's first rate), then every rate. */
	g_assert_cmpuint(p.n_rates, ==, 4);
	g_assert_cmpuint(p.rates[0].num, ==, 30);
	g_assert_cmpuint(p.rates[1].num, ==, 30);
	g_assert_cmpuint(p.rates[2].num, ==, 25);
	g_assert_cmpuint(p.rates[3].num, ==, 15);
	for (unsigned int i = 0; i < p.n_rates; i++)
		g_assert_cmpuint(p.rates[i].denom, ==, 1);
}

V4L2CUSE_TEST("/pw-formats/build-mjpg-one-rate", test_build_mjpg_one_rate)
{
	struct client_mode m = mode(V4L2_PIX_FMT_MJPEG, 1280, 720, 1, 15);
	uint8_t buf[1024];
	struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buf, sizeof(buf));
	struct parsed p = parse_enum(bridge_mode_build(&b, &m));

	g_assert_cmpuint(p.subtype, ==, SPA_MEDIA_SUBTYPE_mjpg);
	/* mjpg carries no raw format property. */
	g_assert_cmpuint(p.format, ==, SPA_VIDEO_FORMAT_UNKNOWN);
	g_assert_cmpuint(p.size.width, ==, 1280);
	g_assert_cmpuint(p.choice, ==, SPA_CHOICE_None);
	g_assert_cmpuint(p.n_rates, ==, 1);
	g_assert_cmpuint(p.rates[0].num, ==, 15);
}

V4L2CUSE_TEST("/pw-formats/build-refused", test_build_refused)
{
	struct client_mode no_rate = mode(V4L2_PIX_FMT_YUYV, 320, 240, 0);
	struct client_mode unknown = mode(V4L2_PIX_FMT_YUV422P, 320, 240, 1, 30);
	struct client_mode ok = mode(V4L2_PIX_FMT_YUYV, 320, 240, 16,
				     1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16);
	uint8_t buf[1024], tiny[64];
	struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buf, sizeof(buf));
	struct spa_pod_builder bt = SPA_POD_BUILDER_INIT(tiny, sizeof(tiny));

	g_assert_null(bridge_mode_build(&b, &no_rate));
	g_assert_null(bridge_mode_build(&b, &unknown));
	/* Too small a builder: no half-written object. */
	g_assert_null(bridge_mode_build(&bt, &ok));
	/* The most rates fit the bridge's 1024-byte builder. */
	g_assert_nonnull(bridge_mode_build(&b, &ok));
}

/* A consumer wanting any format of our list gets our default rate. */
V4L2CUSE_TEST("/pw-formats/round-trip-every-format", test_round_trip_every_format)
{
	for (size_t i = 0; i < G_N_ELEMENTS(expected_map); i++) {
		struct client_mode m = mode(expected_map[i].fourcc, 320, 240, 2, 15, 10);
		uint8_t buf[1024], wbuf[256], rbuf[1024];
		struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buf, sizeof(buf));
		struct spa_pod_builder wb = SPA_POD_BUILDER_INIT(wbuf, sizeof(wbuf));
		struct spa_pod *ours = bridge_mode_build(&b, &m), *wish, *fixed;
		struct bridge_format f;

		g_assert_nonnull(ours);
		/* "Video, this subtype, anything else": the default wins. */
		wish = spa_pod_builder_add_object(&wb, SPA_TYPE_OBJECT_Format, SPA_PARAM_EnumFormat,
			SPA_FORMAT_mediaType, SPA_POD_Id(SPA_MEDIA_TYPE_video),
			SPA_FORMAT_mediaSubtype, SPA_POD_Id(expected_subtype(i)));
		fixed = negotiate(ours, wish, rbuf, sizeof(rbuf));
		g_assert_nonnull(fixed);
		g_assert_cmpint(bridge_format_parse(fixed, &f), ==, 0);
		g_assert_cmpuint(f.fourcc, ==, expected_map[i].fourcc);
		g_assert_cmpuint(f.width, ==, 320);
		g_assert_cmpuint(f.height, ==, 240);
		g_assert_cmpuint(f.rate.num, ==, 15);
		g_assert_cmpuint(f.rate.denom, ==, 1);
		g_assert_true(bridge_modes_find(&m, 1, &f) == &m);
	}
}

/*
 * The consumer's choice wins: of a device's modes it asks for RGB at
 * 640x480, 10 fps; only that object intersects, and its Format maps back
 * to that mode and rate.
 */
V4L2CUSE_TEST("/pw-formats/negotiate-consumer-choice", test_negotiate_consumer_choice)
{
	struct client_mode modes[] = {
		mode(V4L2_PIX_FMT_YUYV, 320, 240, 2, 15, 10),
		mode(V4L2_PIX_FMT_YUYV, 640, 480, 2, 15, 10),
		mode(V4L2_PIX_FMT_RGB24, 320, 240, 2, 15, 10),
		mode(V4L2_PIX_FMT_RGB24, 640, 480, 2, 15, 10),
		mode(V4L2_PIX_FMT_MJPEG, 640, 480, 2, 15, 10),
	};
	uint8_t wbuf[512];
	struct spa_pod_builder wb = SPA_POD_BUILDER_INIT(wbuf, sizeof(wbuf));
	struct spa_pod *wish;
	const struct client_mode *found = NULL;
	unsigned int matches = 0;

	wish = spa_pod_builder_add_object(&wb, SPA_TYPE_OBJECT_Format, SPA_PARAM_EnumFormat,
		SPA_FORMAT_mediaType, SPA_POD_Id(SPA_MEDIA_TYPE_video),
		SPA_FORMAT_mediaSubtype, SPA_POD_Id(SPA_MEDIA_SUBTYPE_raw),
		SPA_FORMAT_VIDEO_format, SPA_POD_CHOICE_ENUM_Id(3, SPA_VIDEO_FORMAT_RGB,
			SPA_VIDEO_FORMAT_RGB, SPA_VIDEO_FORMAT_BGRx),
		SPA_FORMAT_VIDEO_size, SPA_POD_Rectangle(&SPA_RECTANGLE(640, 480)),
		SPA_FORMAT_VIDEO_framerate, SPA_POD_CHOICE_RANGE_Fraction(
			&SPA_FRACTION(10, 1), &SPA_FRACTION(1, 1), &SPA_FRACTION(12, 1)));
	for (size_t i = 0; i < G_N_ELEMENTS(modes); i++) {
		uint8_t buf[1024], rbuf[1024];
		struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buf, sizeof(buf));
		struct spa_pod *fixed = negotiate(bridge_mode_build(&b, &modes[i]), wish, rbuf,
						  sizeof(rbuf));
		struct bridge_format f;

		if (!fixed)
			continue;
		matches++;
		g_assert_cmpint(bridge_format_parse(fixed, &f), ==, 0);
		g_assert_cmpuint(f.fourcc, ==, V4L2_PIX_FMT_RGB24);
		g_assert_cmpuint(f.rate.num, ==, 10);
		found = bridge_modes_find(modes, G_N_ELEMENTS(modes), &f);
	}
	g_assert_cmpuint(matches, ==, 1);
	g_assert_true(found == &modes[3]);
}

/* A fixed 640x480 Format; @format UNKNOWN leaves the property out. */
static struct spa_pod *
fixed_format(uint8_t *buf, size_t size, uint32_t media_type, uint32_t subtype, uint32_t format)
{
	struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buf, size);
	struct spa_pod_frame f;

	spa_pod_builder_push_object(&b, &f, SPA_TYPE_OBJECT_Format, SPA_PARAM_Format);
	spa_pod_builder_add(&b,
		SPA_FORMAT_mediaType, SPA_POD_Id(media_type),
		SPA_FORMAT_mediaSubtype, SPA_POD_Id(subtype), 0);
	if (format != SPA_VIDEO_FORMAT_UNKNOWN)
		spa_pod_builder_add(&b, SPA_FORMAT_VIDEO_format, SPA_POD_Id(format), 0);
	spa_pod_builder_add(&b,
		SPA_FORMAT_VIDEO_size, SPA_POD_Rectangle(&SPA_RECTANGLE(640, 480)), 0);
	return spa_pod_builder_pop(&b, &f);
}

/* A Format fixed by another producer's rules still maps, or is refused. */
V4L2CUSE_TEST("/pw-formats/parse", test_parse)
{
	struct client_mode modes[] = { mode(V4L2_PIX_FMT_NV12, 640, 480, 2, 30, 15) };
	uint8_t buf[512];
	struct spa_pod_builder b;
	struct spa_pod *pod;
	struct bridge_format f;

	/* No frame rate: any of the mode's. */
	pod = fixed_format(buf, sizeof(buf), SPA_MEDIA_TYPE_video, SPA_MEDIA_SUBTYPE_raw,
			   SPA_VIDEO_FORMAT_NV12);
	g_assert_cmpint(bridge_format_parse(pod, &f), ==, 0);
	g_assert_cmpuint(f.rate.num, ==, 0);
	g_assert_true(bridge_modes_find(modes, 1, &f) == &modes[0]);

	/* 60/2 is 30/1; 20 fps is not offered; another size is not either. */
	f.rate = SPA_FRACTION(60, 2);
	g_assert_true(bridge_modes_find(modes, 1, &f) == &modes[0]);
	f.rate = SPA_FRACTION(20, 1);
	g_assert_null(bridge_modes_find(modes, 1, &f));
	f.rate = SPA_FRACTION(30, 1);
	f.width = 320;
	g_assert_null(bridge_modes_find(modes, 1, &f));

	/* A format we cannot name. */
	pod = fixed_format(buf, sizeof(buf), SPA_MEDIA_TYPE_video, SPA_MEDIA_SUBTYPE_raw,
			   SPA_VIDEO_FORMAT_ARGB);
	g_assert_cmpint(bridge_format_parse(pod, &f), ==, -ENOTSUP);

	/* Audio; raw video without a format; no size; not a format at all. */
	pod = fixed_format(buf, sizeof(buf), SPA_MEDIA_TYPE_audio, SPA_MEDIA_SUBTYPE_raw,
			   SPA_VIDEO_FORMAT_UNKNOWN);
	g_assert_cmpint(bridge_format_parse(pod, &f), ==, -EINVAL);
	pod = fixed_format(buf, sizeof(buf), SPA_MEDIA_TYPE_video, SPA_MEDIA_SUBTYPE_raw,
			   SPA_VIDEO_FORMAT_UNKNOWN);
	g_assert_cmpint(bridge_format_parse(pod, &f), ==, -EINVAL);
	b = SPA_POD_BUILDER_INIT(buf, sizeof(buf));
	pod = spa_pod_builder_add_object(&b, SPA_TYPE_OBJECT_Format, SPA_PARAM_Format,
		SPA_FORMAT_mediaType, SPA_POD_Id(SPA_MEDIA_TYPE_video),
		SPA_FORMAT_mediaSubtype, SPA_POD_Id(SPA_MEDIA_SUBTYPE_mjpg));
	g_assert_cmpint(bridge_format_parse(pod, &f), ==, -EINVAL);
	b = SPA_POD_BUILDER_INIT(buf, sizeof(buf));
	pod = spa_pod_builder_add_object(&b, SPA_TYPE_OBJECT_ParamBuffers, SPA_PARAM_Buffers,
		SPA_PARAM_BUFFERS_buffers, SPA_POD_Int(4));
	g_assert_cmpint(bridge_format_parse(pod, &f), ==, -EINVAL);
	g_assert_cmpint(bridge_format_parse(NULL, &f), ==, -EINVAL);

	/* An unfixed format (still a choice) is not a Format. */
	b = SPA_POD_BUILDER_INIT(buf, sizeof(buf));
	pod = spa_pod_builder_add_object(&b, SPA_TYPE_OBJECT_Format, SPA_PARAM_Format,
		SPA_FORMAT_mediaType, SPA_POD_Id(SPA_MEDIA_TYPE_video),
		SPA_FORMAT_mediaSubtype, SPA_POD_Id(SPA_MEDIA_SUBTYPE_raw),
		SPA_FORMAT_VIDEO_format, SPA_POD_CHOICE_ENUM_Id(2, SPA_VIDEO_FORMAT_NV12,
								SPA_VIDEO_FORMAT_YUY2),
		SPA_FORMAT_VIDEO_size, SPA_POD_Rectangle(&SPA_RECTANGLE(640, 480)));
	g_assert_cmpint(bridge_format_parse(pod, &f), ==, -EINVAL);
}
