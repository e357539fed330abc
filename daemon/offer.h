/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What a device offers: the configured subset of its source's formats,
 * sizes and frame rates (config keys formats=, sizes=, frame-rates=). A
 * source is wrapped in a filtering source that enumerates and negotiates
 * only inside the subset and forwards everything else; set-source wraps
 * the new source the same way, so consumers keep their format.
 */

#include <stdbool.h>
#include <stdint.h>
#include <linux/videodev2.h>

#include "v4l2cuse/parse.h"

struct v4l2cuse_source;

#define V4L2CUSE_OFFER_MAX	V4L2CUSE_MAX_LIST	/* entries per list (parse.h's lists) */

/* Zero-initialise: an empty list means "whatever the source offers". */
struct v4l2cuse_offer {
	uint32_t formats[V4L2CUSE_OFFER_MAX];
	unsigned int n_formats;
	struct v4l2cuse_size sizes[V4L2CUSE_OFFER_MAX];
	unsigned int n_sizes;
	struct v4l2_fract intervals[V4L2CUSE_OFFER_MAX];	/* frame intervals, 1/fps */
	unsigned int n_intervals;
};

static inline bool
v4l2cuse_offer_is_empty(const struct v4l2cuse_offer *o)
{
	return !o || (!o->n_formats && !o->n_sizes && !o->n_intervals);
}

/*
 * Replace *src by a source that offers only what @o allows (nothing happens
 * for an empty @o). Every listed format, size and rate must be offered by
 * the source, else -EINVAL with one line in *ret_error and *src untouched.
 * On success the wrapper owns the old *src.
 */
int v4l2cuse_offer_wrap(const struct v4l2cuse_offer *o, struct v4l2cuse_source **src,
			char **ret_error);

/* The wrapped source inside a wrapper, or @src itself. */
struct v4l2cuse_source *v4l2cuse_offer_inner(struct v4l2cuse_source *src);
