/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A filtering source: the configured subset of another source's formats,
 * sizes and frame rates (see offer.h). Enumeration skips what the subset
 * excludes; negotiation picks inside the subset and lets the inner source
 * fill in the details; frames, controls and the wake fd pass through.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <glib.h>

#include "v4l2cuse/format.h"
#include "v4l2cuse/source.h"
#include "util/macros.h"
#include "offer.h"

struct offer_source {
	struct v4l2cuse_source base;
	struct v4l2cuse_source *inner;
	struct v4l2cuse_offer offer;
};

static const struct v4l2cuse_source_ops offer_ops;

static struct offer_source *
offer_of(struct v4l2cuse_source *src)
{
	return (struct offer_source *)src;
}

static bool
fract_eq(struct v4l2_fract a, struct v4l2_fract b)
{
	return (uint64_t)a.numerator * b.denominator == (uint64_t)b.numerator * a.denominator;
}

static bool
offer_allows_format(const struct v4l2cuse_offer *o, uint32_t fourcc)
{
	if (!o->n_formats)
		return true;
	for (unsigned int i = 0; i < o->n_formats; i++)
		if (o->formats[i] == fourcc)
			return true;
	return false;
}

static bool
offer_allows_size(const struct v4l2cuse_offer *o, uint32_t w, uint32_t h)
{
	if (!o->n_sizes)
		return true;
	for (unsigned int i = 0; i < o->n_sizes; i++)
		if (o->sizes[i].width == w && o->sizes[i].height == h)
			return true;
	return false;
}

static bool
offer_allows_interval(const struct v4l2cuse_offer *o, struct v4l2_fract f)
{
	if (!o->n_intervals)
		return true;
	for (unsigned int i = 0; i < o->n_intervals; i++)
		if (fract_eq(o->intervals[i], f))
			return true;
	return false;
}

static bool
inner_has_sizes(struct v4l2cuse_source *in, uint32_t fourcc)
{
	uint32_t w, h;

	return in->ops->enum_framesize(in, fourcc, 0, &w, &h) == 0;
}

/*
 * The index-th allowed size of @fourcc. A source that enumerates no sizes
 * (it clamps in negotiate) offers the configured list as it is.
 */
static int
offer_size_at(struct offer_source *os, uint32_t fourcc, unsigned int index,
	      uint32_t *ret_w, uint32_t *ret_h)
{
	struct v4l2cuse_source *in = os->inner;
	uint32_t w, h;

	if (!inner_has_sizes(in, fourcc)) {
		if (index >= os->offer.n_sizes)
			return -EINVAL;
		*ret_w = os->offer.sizes[index].width;
		*ret_h = os->offer.sizes[index].height;
		return 0;
	}
	for (unsigned int i = 0; in->ops->enum_framesize(in, fourcc, i, &w, &h) == 0; i++) {
		if (!offer_allows_size(&os->offer, w, h))
			continue;
		if (index-- == 0) {
			*ret_w = w;
			*ret_h = h;
			return 0;
		}
	}
	return -EINVAL;
}

static bool
offer_format_usable(struct offer_source *os, uint32_t fourcc)
{
	uint32_t w, h;

	return offer_allows_format(&os->offer, fourcc) &&
	       (!inner_has_sizes(os->inner, fourcc) ? true
						    : offer_size_at(os, fourcc, 0, &w, &h) == 0);
}

/* ---------------------------------------------------------------------- */

static int
offer_create(const char *args, struct v4l2cuse_source **ret_src, char **ret_error)
{
	/* Only made by v4l2cuse_offer_wrap(); never in the registry. */
	if (ret_error)
		*ret_error = g_strdup("offer: not a source of its own");
	return -EINVAL;
}

static void
offer_destroy(struct v4l2cuse_source *src)
{
	struct offer_source *os = offer_of(src);

	v4l2cuse_source_destroy(os->inner);
	g_free(os);
}

static int
offer_enum_format(struct v4l2cuse_source *src, unsigned int index, uint32_t *ret_fourcc)
{
	struct offer_source *os = offer_of(src);
	uint32_t fourcc;

	for (unsigned int i = 0; os->inner->ops->enum_format(os->inner, i, &fourcc) == 0; i++) {
		if (!offer_format_usable(os, fourcc))
			continue;
		if (index-- == 0) {
			*ret_fourcc = fourcc;
			return 0;
		}
	}
	return -EINVAL;
}

static int
offer_enum_framesize(struct v4l2cuse_source *src, uint32_t fourcc, unsigned int index,
		     uint32_t *ret_w, uint32_t *ret_h)
{
	struct offer_source *os = offer_of(src);

	if (!offer_allows_format(&os->offer, fourcc))
		return -EINVAL;
	return offer_size_at(os, fourcc, index, ret_w, ret_h);
}

static int
offer_enum_frameinterval(struct v4l2cuse_source *src, uint32_t fourcc, uint32_t w,
			 uint32_t h, unsigned int index, struct v4l2_fract *ret)
{
	struct offer_source *os = offer_of(src);
	struct v4l2cuse_source *in = os->inner;
	struct v4l2_fract f;
	bool any = false;

	if (!offer_allows_format(&os->offer, fourcc) || !offer_allows_size(&os->offer, w, h))
		return -EINVAL;
	for (unsigned int i = 0;
	     in->ops->enum_frameinterval(in, fourcc, w, h, i, &f) == 0; i++) {
		any = true;
		if (!offer_allows_interval(&os->offer, f))
			continue;
		if (index-- == 0) {
			*ret = f;
			return 0;
		}
	}
	if (!any && index < os->offer.n_intervals) {
		/* The source runs at whatever rate the daemon's timer asks. */
		*ret = os->offer.intervals[index];
		return 0;
	}
	return -EINVAL;
}

static int
offer_negotiate(struct v4l2cuse_source *src, struct v4l2_pix_format *pix)
{
	struct offer_source *os = offer_of(src);
	struct v4l2_pix_format pick = *pix, fill;
	uint32_t frame_h;
	int r;

	/* Sizes are frame sizes: a field's height counts twice (V4L2). */
	if (V4L2_FIELD_HAS_T_OR_B(pix->field) && pix->height <= V4L2CUSE_MAX_HEIGHT / 2)
		pick.height = pix->height * 2;
	/* Nearest allowed fourcc and size, then the source's own details. */
	r = v4l2cuse_source_negotiate_default(src, &pick);
	if (r < 0)
		return r;
	fill = (struct v4l2_pix_format){
		.width = pick.width,
		.height = pick.height,
		.pixelformat = pick.pixelformat,
		.field = pix->field,
	};
	if (V4L2_FIELD_HAS_T_OR_B(pix->field))
		fill.height /= 2;
	r = v4l2cuse_source_negotiate(os->inner, &fill);
	if (r < 0)
		return r;
	frame_h = V4L2_FIELD_HAS_T_OR_B(fill.field) ? fill.height * 2 : fill.height;
	if (fill.pixelformat != pick.pixelformat || fill.width != pick.width ||
	    frame_h != pick.height)
		return -EINVAL;		/* the source does not keep its own offer */
	*pix = fill;
	return 0;
}

static int
offer_start(struct v4l2cuse_source *src, const struct v4l2_pix_format *pix,
	    const struct v4l2_fract *interval)
{
	struct offer_source *os = offer_of(src);

	return os->inner->ops->start(os->inner, pix, interval);
}

static void
offer_stop(struct v4l2cuse_source *src)
{
	struct offer_source *os = offer_of(src);

	os->inner->ops->stop(os->inner);
}

static int
offer_produce(struct v4l2cuse_source *src, struct v4l2cuse_frame *frame)
{
	struct offer_source *os = offer_of(src);

	return os->inner->ops->produce(os->inner, frame);
}

static int
offer_wake_fd(struct v4l2cuse_source *src)
{
	return v4l2cuse_source_wake_fd(offer_of(src)->inner);
}

static const struct v4l2cuse_control *
offer_control(struct v4l2cuse_source *src, unsigned int index)
{
	return v4l2cuse_source_control(offer_of(src)->inner, index);
}

static int
offer_get_control(struct v4l2cuse_source *src, uint32_t id, int64_t *ret)
{
	return v4l2cuse_source_get_control(offer_of(src)->inner, id, ret);
}

static int
offer_set_control(struct v4l2cuse_source *src, uint32_t id, int64_t value)
{
	return v4l2cuse_source_set_control(offer_of(src)->inner, id, value);
}

static int
offer_default_format(struct v4l2cuse_source *src, struct v4l2_pix_format *pix,
		     struct v4l2_fract *ret_interval)
{
	/* Negotiated inside the offer afterwards, as any format asked for. */
	return v4l2cuse_source_default_format(offer_of(src)->inner, pix, ret_interval);
}

static int
offer_control_fd(struct v4l2cuse_source *src)
{
	return v4l2cuse_source_control_fd(offer_of(src)->inner);
}

static void
offer_control_update(struct v4l2cuse_source *src)
{
	v4l2cuse_source_control_update(offer_of(src)->inner);
}

static const struct v4l2cuse_source_ops offer_ops = {
	.abi = V4L2CUSE_SOURCE_ABI,
	.name = "offer",
	.create = offer_create,
	.destroy = offer_destroy,
	.enum_format = offer_enum_format,
	.enum_framesize = offer_enum_framesize,
	.enum_frameinterval = offer_enum_frameinterval,
	.negotiate = offer_negotiate,
	.default_format = offer_default_format,
	.start = offer_start,
	.stop = offer_stop,
	.produce = offer_produce,
	.wake_fd = offer_wake_fd,
	.control = offer_control,
	.get_control = offer_get_control,
	.set_control = offer_set_control,
	.control_fd = offer_control_fd,
	.control_update = offer_control_update,
};

/* ---------------------------------------------------------------------- */

/* Some allowed format of @os offers the size (or takes any size). */
static bool
offer_size_offered(struct offer_source *os, struct v4l2cuse_size s)
{
	struct v4l2cuse_source *in = os->inner;
	uint32_t f;

	for (unsigned int i = 0; in->ops->enum_format(in, i, &f) == 0; i++) {
		if (!offer_allows_format(&os->offer, f))
			continue;
		if (!inner_has_sizes(in, f) || v4l2cuse_source_offers_size(in, f, s.width, s.height))
			return true;
	}
	return false;
}

static bool
offer_interval_offered(struct offer_source *os, struct v4l2_fract want)
{
	struct v4l2cuse_source *in = os->inner;
	struct v4l2_fract f;
	uint32_t fourcc, w, h;
	bool any = false;

	for (unsigned int i = 0; offer_enum_format(&os->base, i, &fourcc) == 0; i++) {
		for (unsigned int j = 0; offer_size_at(os, fourcc, j, &w, &h) == 0; j++) {
			for (unsigned int k = 0;
			     in->ops->enum_frameinterval(in, fourcc, w, h, k, &f) == 0; k++) {
				any = true;
				if (fract_eq(f, want))
					return true;
			}
		}
	}
	return !any;		/* a source without rates runs at any rate */
}

int
v4l2cuse_offer_wrap(const struct v4l2cuse_offer *o, struct v4l2cuse_source **src,
		    char **ret_error)
{
	struct offer_source *os;
	uint32_t fourcc;

	if (v4l2cuse_offer_is_empty(o))
		return 0;
	os = g_new0(struct offer_source, 1);
	os->base.ops = &offer_ops;
	os->inner = *src;
	os->offer = *o;

	for (unsigned int i = 0; i < o->n_formats; i++) {
		if (!v4l2cuse_source_offers_format(os->inner, o->formats[i])) {
			*ret_error = g_strdup_printf("source '%s' does not offer format %.4s",
						     os->inner->ops->name,
						     (const char *)&o->formats[i]);
			goto err_free;
		}
	}
	for (unsigned int i = 0; i < o->n_sizes; i++) {
		if (!offer_size_offered(os, o->sizes[i])) {
			*ret_error = g_strdup_printf("source '%s' does not offer %ux%u%s",
						     os->inner->ops->name, o->sizes[i].width,
						     o->sizes[i].height,
						     o->n_formats ? " in the listed formats" : "");
			goto err_free;
		}
	}
	for (unsigned int i = 0; i < o->n_intervals; i++) {
		if (!offer_interval_offered(os, o->intervals[i])) {
			*ret_error = g_strdup_printf("source '%s' does not offer %u/%u fps",
						     os->inner->ops->name,
						     o->intervals[i].denominator,
						     o->intervals[i].numerator);
			goto err_free;
		}
	}
	if (offer_enum_format(&os->base, 0, &fourcc) < 0) {
		*ret_error = g_strdup_printf("source '%s' offers nothing in the configured "
					     "formats and sizes", os->inner->ops->name);
		goto err_free;
	}
	*src = &os->base;
	return 0;

err_free:
	g_free(os);		/* not the inner source: the caller keeps it */
	return -EINVAL;
}

struct v4l2cuse_source *
v4l2cuse_offer_inner(struct v4l2cuse_source *src)
{
	return src && src->ops == &offer_ops ? offer_of(src)->inner : src;
}
