/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The modes a synthetic source offers: every listed format at every listed
 * size at every listed frame interval (the test pattern and the file
 * source; a camera's modes are not a product and live in uvc.c). Lists
 * keep their order (the first entry is the default) and never hold a
 * duplicate. Also the option syntax both sources share: lists joined by
 * '+' (or ';'), sizes "WxH", rates "N" or "N/D" frames per second.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/videodev2.h>

#include "v4l2cuse/format.h"

struct v4l2cuse_opts;

#define MODES_MAX_FORMATS	16
#define MODES_MAX_SIZES		16
#define MODES_MAX_RATES		16

struct modes_size {
	uint32_t width, height;
};

struct modes {
	uint32_t formats[MODES_MAX_FORMATS];
	unsigned int n_formats;
	struct modes_size sizes[MODES_MAX_SIZES];
	unsigned int n_sizes;
	struct v4l2_fract intervals[MODES_MAX_RATES];	/* seconds per frame */
	unsigned int n_intervals;
};

/* Append unless present or full; true when appended. */
bool modes_add_format(struct modes *m, uint32_t fourcc);
/* Every output format of format.c, in its order (what sources offer by default). */
void modes_add_output_formats(struct modes *m);
bool modes_add_size(struct modes *m, uint32_t width, uint32_t height);
bool modes_add_interval(struct modes *m, struct v4l2_fract interval);
/*
 * Move to the front, inserting it if absent (false when the list is full):
 * the list only grows, so whatever was offered stays offered.
 */
bool modes_prepend_size(struct modes *m, uint32_t width, uint32_t height);
bool modes_prepend_interval(struct modes *m, struct v4l2_fract interval);

bool modes_has_format(const struct modes *m, uint32_t fourcc);
bool modes_has(const struct modes *m, uint32_t fourcc, uint32_t width, uint32_t height);

/* The source ops' enumerations: 0 or -EINVAL past the end / for a mode not offered. */
int modes_enum_format(const struct modes *m, unsigned int index, uint32_t *ret_fourcc);
int modes_enum_framesize(const struct modes *m, uint32_t fourcc, unsigned int index,
			 uint32_t *ret_width, uint32_t *ret_height);
int modes_enum_frameinterval(const struct modes *m, uint32_t fourcc, uint32_t width,
			     uint32_t height, unsigned int index, struct v4l2_fract *ret);

/* "WxH" with 1 <= W, H <= the format limits; nothing else, no tail. */
bool modes_parse_size(const char *s, uint32_t *ret_width, uint32_t *ret_height);
/* "N" or "N/D" frames per second (at most 1000) -> seconds per frame. */
bool modes_parse_rate(const char *s, struct v4l2_fract *ret_interval);
/* The fourcc of @s (case-insensitive) in @set, 0 if none. */
uint32_t modes_fourcc_from(const char *s, enum v4l2cuse_format_set set);
/* "YUYV UYVY ...": @set for error messages (g_free). */
char *modes_fourcc_list(enum v4l2cuse_format_set set);

/*
 * Option values replacing a list: formats= (output formats), sizes= (even W
 * and H), fps=. An empty item is skipped; an unknown, malformed or repeated
 * item, too many items or none at all fail with -EINVAL and one line
 * naming the option (v4l2cuse_opts_error()).
 */
int modes_parse_formats(struct modes *m, const struct v4l2cuse_opts *o, const char *value,
			char **ret_error);
int modes_parse_sizes(struct modes *m, const struct v4l2cuse_opts *o, const char *value,
		      char **ret_error);
int modes_parse_rates(struct modes *m, const struct v4l2cuse_opts *o, const char *value,
		      char **ret_error);

/* Split an option list at '+' and ';' (g_strfreev). */
char **modes_split_list(const char *value);
