/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The modes a synthetic source offers: every listed format at every listed
 * size at every listed frame interval (the test pattern and the file
 * source; a camera's modes are not a product and live in uvc.c). Lists
 * keep their order (the first entry is the default) and never hold a
 * duplicate. Also the formats=, sizes= and fps= options both sources take,
 * in the syntax of v4l2cuse/parse.h.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/videodev2.h>

#include "v4l2cuse/format.h"
#include "v4l2cuse/parse.h"
#include "v4l2cuse/source.h"

struct v4l2cuse_opts;

struct v4l2cuse_modes {
	uint32_t formats[V4L2CUSE_MAX_LIST];
	unsigned int n_formats;
	struct v4l2cuse_size sizes[V4L2CUSE_MAX_LIST];
	unsigned int n_sizes;
	struct v4l2_fract intervals[V4L2CUSE_MAX_LIST];	/* seconds per frame */
	unsigned int n_intervals;
};

/* Append unless present or full; true when appended. */
bool v4l2cuse_modes_add_format(struct v4l2cuse_modes *m, uint32_t fourcc);
/* Every output format of format.c, in its order (what sources offer by default). */
void v4l2cuse_modes_add_output_formats(struct v4l2cuse_modes *m);
bool v4l2cuse_modes_add_size(struct v4l2cuse_modes *m, uint32_t width, uint32_t height);
bool v4l2cuse_modes_add_interval(struct v4l2cuse_modes *m, struct v4l2_fract interval);
/*
 * Move to the front, inserting it if absent (false when the list is full):
 * the list only grows, so whatever was offered stays offered.
 */
bool v4l2cuse_modes_prepend_size(struct v4l2cuse_modes *m, uint32_t width, uint32_t height);
bool v4l2cuse_modes_prepend_interval(struct v4l2cuse_modes *m, struct v4l2_fract interval);

bool v4l2cuse_modes_has_format(const struct v4l2cuse_modes *m, uint32_t fourcc);
bool v4l2cuse_modes_has(const struct v4l2cuse_modes *m, uint32_t fourcc, uint32_t width,
			uint32_t height);

/*
 * For start(): the format to stream, @pix's fourcc and size with the rest
 * as format.c fills it, and the frame interval, @interval or @def when that
 * is NULL or 0/0. -EINVAL (or format.c's -EOVERFLOW) for a bad format.
 */
int v4l2cuse_modes_stream(const struct v4l2_pix_format *pix, const struct v4l2_fract *interval,
			  struct v4l2_fract def, struct v4l2_pix_format *ret_pix,
			  struct v4l2_fract *ret_interval);

/* The source ops' enumerations: 0 or -EINVAL past the end / for a mode not offered. */
int v4l2cuse_modes_enum_format(const struct v4l2cuse_modes *m, unsigned int index,
			       uint32_t *ret_fourcc);
int v4l2cuse_modes_enum_framesize(const struct v4l2cuse_modes *m, uint32_t fourcc,
				  unsigned int index, uint32_t *ret_width, uint32_t *ret_height);
int v4l2cuse_modes_enum_frameinterval(const struct v4l2cuse_modes *m, uint32_t fourcc,
				      uint32_t width, uint32_t height, unsigned int index,
				      struct v4l2_fract *ret);

/*
 * A source whose offer is exactly one list of modes (the test pattern, a
 * loopback's capture end; the file source for its formats): embedded first
 * in its private struct, so that the source ops below can be its
 * enum_format, enum_framesize and enum_frameinterval, the only code that
 * answers them from a v4l2cuse_modes.
 */
struct v4l2cuse_modes_source {
	struct v4l2cuse_source base;
	struct v4l2cuse_modes modes;
};

int v4l2cuse_modes_source_enum_format(struct v4l2cuse_source *src, unsigned int index,
				      uint32_t *ret_fourcc);
int v4l2cuse_modes_source_enum_framesize(struct v4l2cuse_source *src, uint32_t fourcc,
					 unsigned int index, uint32_t *ret_width,
					 uint32_t *ret_height);
int v4l2cuse_modes_source_enum_frameinterval(struct v4l2cuse_source *src, uint32_t fourcc,
					     uint32_t width, uint32_t height, unsigned int index,
					     struct v4l2_fract *ret);

/*
 * The offer of a synthetic source (the test pattern, a loopback's capture
 * end): every output format, 320x240 640x480 1280x720 1920x1080, 30 25 15
 * fps, each list replaced by the formats=, sizes= and fps= options when
 * given. 0, or -EINVAL with one line as the parsers below.
 */
int v4l2cuse_modes_from_options(struct v4l2cuse_modes *m, const struct v4l2cuse_opts *o,
				char **ret_error);

/*
 * Option values replacing a list: formats= (output formats), sizes= (even W
 * and H: every format must take them), fps=. Errors are one line naming
 * the option (v4l2cuse_opts_error()), e.g. "pattern: option 'sizes':
 * '640x480' is listed twice"; @m is unchanged then.
 */
int v4l2cuse_modes_parse_formats(struct v4l2cuse_modes *m, const struct v4l2cuse_opts *o,
				 const char *value, char **ret_error);
int v4l2cuse_modes_parse_sizes(struct v4l2cuse_modes *m, const struct v4l2cuse_opts *o,
			       const char *value, char **ret_error);
int v4l2cuse_modes_parse_rates(struct v4l2cuse_modes *m, const struct v4l2cuse_opts *o,
			       const char *value, char **ret_error);

/* "option 'KEY': MESSAGE" for a parse.h error @msg (freed), as *ret_error. */
int v4l2cuse_modes_option_error(const struct v4l2cuse_opts *o, const char *key, char *msg,
				char **ret_error);
