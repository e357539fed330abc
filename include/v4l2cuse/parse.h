/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The one syntax of sizes, frame rates, pixel formats, lists of them and
 * booleans, for the command line and the configuration file (daemon/) and
 * the sources' options (sources/): implemented in sources/parse.c.
 *
 *   size    WIDTHxHEIGHT, decimal digits only, 1..V4L2CUSE_MAX_WIDTH x
 *           1..V4L2CUSE_MAX_HEIGHT ("640x480")
 *   rate    N or N/D frames per second, decimal digits only, N and D in
 *           1..2^32-1, at most V4L2CUSE_MAX_FPS ("30", "30000/1001")
 *   fourcc  1 to 4 characters, case-insensitive, padded with spaces
 *           ("YUYV", "mjpg"), of a set of format.c's formats
 *   list    items separated by ',', ';', '+', spaces or tabs (in a source
 *           option, where ',' ends the option, '+' and ';'), empty items
 *           skipped, at least one and at most V4L2CUSE_MAX_LIST, none twice
 *   bool    true, yes, on, 1 or false, no, off, 0, case-insensitive
 *
 * Every function returns 0, or -EINVAL with a one-line message in
 * *ret_error (g_free; none when @ret_error is NULL) that names the value
 * but not the key, e.g. "'0x0' is not a valid size (WIDTHxHEIGHT, 1..8192
 * each)": the caller prefixes where it came from ("FILE:LINE: [device ID]
 * size: ", "pattern: option 'sizes': ").
 */

#include <stdbool.h>
#include <stdint.h>
#include <linux/videodev2.h>

#include "v4l2cuse/format.h"

/*
 * The highest frame rate anything accepts or offers. Every frame of every
 * device is produced and answered on the daemon's one loop thread: 240 fps
 * (4.2 ms a frame) covers what cameras deliver (60, 120, some 240) and
 * leaves that thread time for the other devices and their clients.
 */
#define V4L2CUSE_MAX_FPS	240

/* Items in a list of formats, sizes or rates (the ioctl layer enumerates them). */
#define V4L2CUSE_MAX_LIST	16

struct v4l2cuse_size {
	uint32_t width, height;
};

int v4l2cuse_parse_size(const char *s, uint32_t *ret_width, uint32_t *ret_height,
			char **ret_error);

/* Frames per second @s as a frame interval (seconds per frame: D/N). */
int v4l2cuse_parse_rate(const char *s, struct v4l2_fract *ret_interval, char **ret_error);

/* Whether an interval is a frame rate of 1/2^32..V4L2CUSE_MAX_FPS fps. */
bool v4l2cuse_interval_valid(struct v4l2_fract interval);

/* An output format's fourcc; the message lists the known ones. */
int v4l2cuse_parse_fourcc(const char *s, uint32_t *ret, char **ret_error);
/* The same among the formats of @set. */
int v4l2cuse_parse_fourcc_of(const char *s, enum v4l2cuse_format_set set, uint32_t *ret,
			     char **ret_error);

int v4l2cuse_parse_bool(const char *s, bool *ret, char **ret_error);

/* The items of list @s, at most @max ("more than N entries") (g_strfreev). */
int v4l2cuse_split_list(const char *s, unsigned int max, char ***ret_items, char **ret_error);

/* Lists into @out (room for V4L2CUSE_MAX_LIST); *ret_n items. */
int v4l2cuse_parse_fourccs(const char *s, uint32_t *out, unsigned int *ret_n,
			   char **ret_error);
int v4l2cuse_parse_sizes(const char *s, struct v4l2cuse_size *out, unsigned int *ret_n,
			 char **ret_error);
int v4l2cuse_parse_rates(const char *s, struct v4l2_fract *out, unsigned int *ret_n,
			 char **ret_error);
