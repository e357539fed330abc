/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * V4L2 modes <-> PipeWire EnumFormat/Format objects (formats.h).
 */
#include "config.h"

#include <errno.h>
#include <linux/videodev2.h>
#include <spa/param/format.h>
#include <spa/param/video/format.h>
#include <spa/param/video/raw.h>
#include <spa/pod/parser.h>

#include "util/macros.h"
#include "formats.h"

/*
 * The byte layouts are the same on both sides: V4L2 names 32-bit RGB by the
 * little-endian word (XBGR32 is B,G,R,X in memory), SPA by the bytes in
 * memory (BGRx); RGB565 is little-endian in both. MJPG and JPEG are both
 * JPEG frames; we produce MJPG.
 */
static const struct {
	uint32_t fourcc;
	uint32_t subtype;
	uint32_t format;
	bool packed;		/* one plane */
} format_map[] = {
	{ V4L2_PIX_FMT_YUYV, SPA_MEDIA_SUBTYPE_raw, SPA_VIDEO_FORMAT_YUY2, true },
	{ V4L2_PIX_FMT_UYVY, SPA_MEDIA_SUBTYPE_raw, SPA_VIDEO_FORMAT_UYVY, true },
	{ V4L2_PIX_FMT_YVYU, SPA_MEDIA_SUBTYPE_raw, SPA_VIDEO_FORMAT_YVYU, true },
	{ V4L2_PIX_FMT_NV12, SPA_MEDIA_SUBTYPE_raw, SPA_VIDEO_FORMAT_NV12, false },
	{ V4L2_PIX_FMT_NV21, SPA_MEDIA_SUBTYPE_raw, SPA_VIDEO_FORMAT_NV21, false },
	{ V4L2_PIX_FMT_YUV420, SPA_MEDIA_SUBTYPE_raw, SPA_VIDEO_FORMAT_I420, false },
	{ V4L2_PIX_FMT_YVU420, SPA_MEDIA_SUBTYPE_raw, SPA_VIDEO_FORMAT_YV12, false },
	{ V4L2_PIX_FMT_RGB24, SPA_MEDIA_SUBTYPE_raw, SPA_VIDEO_FORMAT_RGB, true },
	{ V4L2_PIX_FMT_BGR24, SPA_MEDIA_SUBTYPE_raw, SPA_VIDEO_FORMAT_BGR, true },
	{ V4L2_PIX_FMT_XRGB32, SPA_MEDIA_SUBTYPE_raw, SPA_VIDEO_FORMAT_xRGB, true },
	{ V4L2_PIX_FMT_XBGR32, SPA_MEDIA_SUBTYPE_raw, SPA_VIDEO_FORMAT_BGRx, true },
	{ V4L2_PIX_FMT_RGB565, SPA_MEDIA_SUBTYPE_raw, SPA_VIDEO_FORMAT_RGB16, true },
	{ V4L2_PIX_FMT_GREY, SPA_MEDIA_SUBTYPE_raw, SPA_VIDEO_FORMAT_GRAY8, true },
	{ V4L2_PIX_FMT_MJPEG, SPA_MEDIA_SUBTYPE_mjpg, SPA_VIDEO_FORMAT_ENCODED, false },
	{ V4L2_PIX_FMT_JPEG, SPA_MEDIA_SUBTYPE_mjpg, SPA_VIDEO_FORMAT_ENCODED, false },
};

bool
bridge_fourcc_is_packed(uint32_t fourcc)
{
	for (size_t i = 0; i < ARRAY_SIZE(format_map); i++) {
		if (format_map[i].fourcc == fourcc)
			return format_map[i].packed;
	}
	return false;
}

bool
bridge_fourcc_to_spa(uint32_t fourcc, uint32_t *ret_subtype, uint32_t *ret_format)
{
	for (size_t i = 0; i < ARRAY_SIZE(format_map); i++) {
		if (format_map[i].fourcc == fourcc) {
			*ret_subtype = format_map[i].subtype;
			*ret_format = format_map[i].format;
			return true;
		}
	}
	return false;
}

uint32_t
bridge_fourcc_from_spa(uint32_t subtype, uint32_t format)
{
	for (size_t i = 0; i < ARRAY_SIZE(format_map); i++) {
		if (format_map[i].subtype != subtype)
			continue;
		/* The first mjpg entry (MJPG) is the one we answer with. */
		if (subtype == SPA_MEDIA_SUBTYPE_mjpg || format_map[i].format == format)
			return format_map[i].fourcc;
	}
	return 0;
}

struct spa_pod *
bridge_mode_build(struct spa_pod_builder *b, const struct client_mode *m)
{
	struct spa_pod_frame f[2];
	uint32_t subtype, format;

	if (m->n_rates == 0 || m->n_rates > CLIENT_MAX_RATES ||
	    !bridge_fourcc_to_spa(m->fourcc, &subtype, &format))
		return NULL;
	spa_pod_builder_push_object(b, &f[0], SPA_TYPE_OBJECT_Format, SPA_PARAM_EnumFormat);
	spa_pod_builder_add(b,
		SPA_FORMAT_mediaType, SPA_POD_Id(SPA_MEDIA_TYPE_video),
		SPA_FORMAT_mediaSubtype, SPA_POD_Id(subtype),
		0);
	if (subtype == SPA_MEDIA_SUBTYPE_raw)
		spa_pod_builder_add(b, SPA_FORMAT_VIDEO_format, SPA_POD_Id(format), 0);
	spa_pod_builder_add(b,
		SPA_FORMAT_VIDEO_size, SPA_POD_Rectangle(&SPA_RECTANGLE(m->width, m->height)),
		0);
	spa_pod_builder_prop(b, SPA_FORMAT_VIDEO_framerate, 0);
	if (m->n_rates == 1) {
		spa_pod_builder_fraction(b, m->rates[0].num, m->rates[0].denom);
	} else {
		/* An Enum choice: the default, then every alternative. */
		spa_pod_builder_push_choice(b, &f[1], SPA_CHOICE_Enum, 0);
		spa_pod_builder_fraction(b, m->rates[0].num, m->rates[0].denom);
		for (unsigned int i = 0; i < m->n_rates; i++)
			spa_pod_builder_fraction(b, m->rates[i].num, m->rates[i].denom);
		spa_pod_builder_pop(b, &f[1]);
	}
	/* NULL if the builder overflowed: the pod is incomplete. */
	return spa_pod_builder_pop(b, &f[0]);
}

/* The size and rate ranges of a feed's EnumFormat object, defaults @want's. */
static void
feed_add_size_rate(struct spa_pod_builder *b, const struct bridge_format *want)
{
	struct spa_rectangle size = SPA_RECTANGLE(640, 480);
	struct spa_fraction rate = SPA_FRACTION(30, 1);

	if (want->width && want->height)
		size = SPA_RECTANGLE(want->width, want->height);
	if (want->rate.num && want->rate.denom)
		rate = want->rate;
	spa_pod_builder_add(b,
		SPA_FORMAT_VIDEO_size, SPA_POD_CHOICE_RANGE_Rectangle(&size,
			&SPA_RECTANGLE(1, 1), &SPA_RECTANGLE(8192, 8192)),
		SPA_FORMAT_VIDEO_framerate, SPA_POD_CHOICE_RANGE_Fraction(&rate,
			&SPA_FRACTION(0, 1), &SPA_FRACTION(240, 1)),
		0);
}

unsigned int
bridge_feed_formats_build(struct spa_pod_builder *b, const struct bridge_format *want,
			  const struct spa_pod **ret, unsigned int max)
{
	struct spa_pod_frame f[2];
	uint32_t subtype, first = SPA_VIDEO_FORMAT_UNKNOWN;
	unsigned int n = 0;
	struct spa_pod *pod;

	if (max < 2)
		return 0;
	if (!bridge_fourcc_to_spa(want->fourcc, &subtype, &first) ||
	    subtype != SPA_MEDIA_SUBTYPE_raw)
		first = SPA_VIDEO_FORMAT_YUY2;

	spa_pod_builder_push_object(b, &f[0], SPA_TYPE_OBJECT_Format, SPA_PARAM_EnumFormat);
	spa_pod_builder_add(b,
		SPA_FORMAT_mediaType, SPA_POD_Id(SPA_MEDIA_TYPE_video),
		SPA_FORMAT_mediaSubtype, SPA_POD_Id(SPA_MEDIA_SUBTYPE_raw),
		0);
	/* An Enum choice: the default, then every alternative, packed ones first. */
	spa_pod_builder_prop(b, SPA_FORMAT_VIDEO_format, 0);
	spa_pod_builder_push_choice(b, &f[1], SPA_CHOICE_Enum, 0);
	spa_pod_builder_id(b, first);
	spa_pod_builder_id(b, first);
	for (int packed = 1; packed >= 0; packed--) {
		for (size_t i = 0; i < ARRAY_SIZE(format_map); i++) {
			if (format_map[i].subtype == SPA_MEDIA_SUBTYPE_raw &&
			    format_map[i].packed == packed && format_map[i].format != first)
				spa_pod_builder_id(b, format_map[i].format);
		}
	}
	spa_pod_builder_pop(b, &f[1]);
	feed_add_size_rate(b, want);
	pod = spa_pod_builder_pop(b, &f[0]);
	if (pod)
		ret[n++] = pod;

	spa_pod_builder_push_object(b, &f[0], SPA_TYPE_OBJECT_Format, SPA_PARAM_EnumFormat);
	spa_pod_builder_add(b,
		SPA_FORMAT_mediaType, SPA_POD_Id(SPA_MEDIA_TYPE_video),
		SPA_FORMAT_mediaSubtype, SPA_POD_Id(SPA_MEDIA_SUBTYPE_mjpg),
		0);
	feed_add_size_rate(b, want);
	pod = spa_pod_builder_pop(b, &f[0]);
	if (pod)
		ret[n++] = pod;
	return n;
}

int
bridge_format_parse(const struct spa_pod *format, struct bridge_format *out)
{
	uint32_t media_type, subtype, video_format = SPA_VIDEO_FORMAT_UNKNOWN;
	struct spa_rectangle size = { 0, 0 };
	struct spa_fraction rate = { 0, 1 };
	uint32_t fourcc;
	int r;

	if (!format || !spa_pod_is_object_type(format, SPA_TYPE_OBJECT_Format))
		return -EINVAL;
	r = spa_pod_parse_object(format, SPA_TYPE_OBJECT_Format, NULL,
		SPA_FORMAT_mediaType, SPA_POD_Id(&media_type),
		SPA_FORMAT_mediaSubtype, SPA_POD_Id(&subtype),
		SPA_FORMAT_VIDEO_format, SPA_POD_OPT_Id(&video_format),
		SPA_FORMAT_VIDEO_size, SPA_POD_Rectangle(&size),
		SPA_FORMAT_VIDEO_framerate, SPA_POD_OPT_Fraction(&rate));
	if (r < 0 || media_type != SPA_MEDIA_TYPE_video || size.width == 0 || size.height == 0)
		return -EINVAL;
	if (subtype == SPA_MEDIA_SUBTYPE_raw && video_format == SPA_VIDEO_FORMAT_UNKNOWN)
		return -EINVAL;
	fourcc = bridge_fourcc_from_spa(subtype, video_format);
	if (!fourcc)
		return -ENOTSUP;
	*out = (struct bridge_format){
		.fourcc = fourcc,
		.width = size.width,
		.height = size.height,
		.rate = rate.denom ? rate : (struct spa_fraction){ 0, 1 },
	};
	return 0;
}

const struct client_mode *
bridge_modes_find(const struct client_mode *modes, unsigned int n_modes,
		  const struct bridge_format *f)
{
	for (unsigned int i = 0; i < n_modes; i++) {
		const struct client_mode *m = &modes[i];

		if (m->fourcc != f->fourcc || m->width != f->width || m->height != f->height)
			continue;
		if (f->rate.num == 0)
			return m;
		for (unsigned int k = 0; k < m->n_rates; k++) {
			/* Equal as fractions: 30/1 is 60/2. */
			if ((uint64_t)m->rates[k].num * f->rate.denom ==
			    (uint64_t)f->rate.num * m->rates[k].denom)
				return m;
		}
	}
	return NULL;
}
