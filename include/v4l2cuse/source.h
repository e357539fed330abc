/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The frame-source ABI. A source produces frames into memory it is lent;
 * it knows nothing of CUSE or of videobuf internals.
 *
 * Threading: every op is called from the daemon's dispatcher thread unless
 * its comment says otherwise, and no op may block (a file read or a camera
 * DQBUF that would wait returns -EAGAIN instead).
 *
 * Errors are negative errno values.
 */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/videodev2.h>

#define V4L2CUSE_SOURCE_ABI 1

struct v4l2cuse_source_ops;

/* Embedded first in every implementation's private struct; set by create(). */
struct v4l2cuse_source {
	const struct v4l2cuse_source_ops *ops;
};

/* One frame to fill. The memory is lent for the duration of produce() only. */
struct v4l2cuse_frame {
	void *data;				/* in: buffer memory */
	size_t length;				/* in: its size, >= fmt->sizeimage */
	const struct v4l2_pix_format *fmt;	/* in: the negotiated format */
	uint32_t sequence;			/* in: frame number since start */
	uint64_t timestamp_ns;			/* in: CLOCK_MONOTONIC */
	uint32_t bytesused;			/* out: payload size */
	bool error;				/* out: frame is damaged (BUF_FLAG_ERROR) */
};

/* A control the source offers (a subset of struct v4l2_query_ext_ctrl). */
struct v4l2cuse_control {
	uint32_t id;			/* V4L2_CID_* */
	uint32_t type;			/* V4L2_CTRL_TYPE_INTEGER, BOOLEAN, MENU, ... */
	const char *name;
	int64_t minimum, maximum;
	uint64_t step;
	int64_t default_value;
	uint32_t flags;			/* V4L2_CTRL_FLAG_* */
	const char *const *menu;	/* MENU: names for minimum..maximum, NULL = skipped */
};

struct v4l2cuse_source_ops {
	uint32_t abi;			/* V4L2CUSE_SOURCE_ABI */
	const char *name;		/* "pattern", "file", "uvc" */

	/*
	 * Required. @args is the part of the --source spec after "name:" or
	 * "name," (may be NULL or ""). On failure returns -errno and, if
	 * @ret_error is not NULL, a newly allocated one-line message (g_free).
	 * On success the caller owns *ret_src.
	 */
	int (*create)(const char *args, struct v4l2cuse_source **ret_src,
		      char **ret_error);

	/* Required. Accepts never-started sources; stops a started one. */
	void (*destroy)(struct v4l2cuse_source *src);

	/* Required. The index-th fourcc offered, -EINVAL past the end. */
	int (*enum_format)(struct v4l2cuse_source *src, unsigned int index,
			   uint32_t *ret_fourcc);

	/* Required. The index-th discrete size for @fourcc, -EINVAL past the end. */
	int (*enum_framesize)(struct v4l2cuse_source *src, uint32_t fourcc,
			      unsigned int index, uint32_t *ret_width,
			      uint32_t *ret_height);

	/* Required. The index-th discrete interval, -EINVAL past the end. */
	int (*enum_frameinterval)(struct v4l2cuse_source *src, uint32_t fourcc,
				  uint32_t width, uint32_t height,
				  unsigned int index, struct v4l2_fract *ret);

	/*
	 * Optional. Rewrite @pix to the closest format the source can
	 * produce. The default (v4l2cuse_source_negotiate()) picks the
	 * nearest enumerated fourcc and size and fills the rest with
	 * v4l2cuse_format_fill().
	 */
	int (*negotiate)(struct v4l2cuse_source *src, struct v4l2_pix_format *pix);

	/*
	 * Required. Start producing @pix at @interval (already negotiated).
	 * May fail (-EIO, -EBUSY, ...): then nothing was started.
	 */
	int (*start)(struct v4l2cuse_source *src, const struct v4l2_pix_format *pix,
		     const struct v4l2_fract *interval);

	/* Required. Stop; safe to call when not started. */
	void (*stop)(struct v4l2cuse_source *src);

	/*
	 * Required, never blocks. Fill @frame. 0: filled; -EAGAIN: no frame
	 * due yet (only sources with a wake fd); -ENODEV: gone for good;
	 * other errors: this frame failed (the daemon sends a placeholder or
	 * an ERROR buffer). Sources without wake_fd are called at the frame
	 * interval by the daemon's timer.
	 */
	int (*produce)(struct v4l2cuse_source *src, struct v4l2cuse_frame *frame);

	/* Optional. An fd that turns readable when produce() will succeed. */
	int (*wake_fd)(struct v4l2cuse_source *src);

	/* Optional. The index-th control, NULL past the end. */
	const struct v4l2cuse_control *(*control)(struct v4l2cuse_source *src,
						  unsigned int index);
	/* Optional (required with control). Value of control @id. */
	int (*get_control)(struct v4l2cuse_source *src, uint32_t id, int64_t *ret_value);
	/*
	 * Optional (required with control). Set control @id; the value is
	 * already validated and clamped against the description.
	 */
	int (*set_control)(struct v4l2cuse_source *src, uint32_t id, int64_t value);
};

/* Registry: "pattern[:NAME][,opt=v...]", "file:PATH[,...]", "uvc:/dev/videoN". */
int v4l2cuse_source_create(const char *spec, struct v4l2cuse_source **ret_src,
			   char **ret_error);
const struct v4l2cuse_source_ops *v4l2cuse_source_lookup(const char *name);

/* Default negotiation used when ops->negotiate is NULL. */
int v4l2cuse_source_negotiate_default(struct v4l2cuse_source *src,
				      struct v4l2_pix_format *pix);

/* Wrappers that supply defaults for optional ops. */
static inline void
v4l2cuse_source_destroy(struct v4l2cuse_source *src)
{
	if (src)
		src->ops->destroy(src);
}

static inline int
v4l2cuse_source_negotiate(struct v4l2cuse_source *src, struct v4l2_pix_format *pix)
{
	return src->ops->negotiate ? src->ops->negotiate(src, pix)
				   : v4l2cuse_source_negotiate_default(src, pix);
}

static inline int
v4l2cuse_source_wake_fd(struct v4l2cuse_source *src)
{
	return src->ops->wake_fd ? src->ops->wake_fd(src) : -1;
}

static inline const struct v4l2cuse_control *
v4l2cuse_source_control(struct v4l2cuse_source *src, unsigned int index)
{
	return src->ops->control ? src->ops->control(src, index) : NULL;
}

static inline int
v4l2cuse_source_get_control(struct v4l2cuse_source *src, uint32_t id, int64_t *ret)
{
	return src->ops->get_control ? src->ops->get_control(src, id, ret) : -EINVAL;
}

static inline int
v4l2cuse_source_set_control(struct v4l2cuse_source *src, uint32_t id, int64_t value)
{
	return src->ops->set_control ? src->ops->set_control(src, id, value) : -EINVAL;
}
