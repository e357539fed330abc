/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The built-in "NO SIGNAL" card: what a device shows while its source has
 * no signal (produce() returned -ENOLINK: a camera unplugged, a file gone)
 * and no placeholder= source of the device can stand in (daemon/producer.c).
 * Sources never draw it themselves. A placeholder= image is a source of its
 * own ("file:IMAGE"), converted like any other frame.
 *
 * The card: R'G'B' (32, 32, 32) everywhere (limited-range BT.601 Y' 43,
 * Cb/Cr 128), with "NO SIGNAL" centred in (235, 235, 235) in the 5x7
 * test-pattern font, scaled up to about 60% of the width. Its corners and
 * its edges (outside the middle third of the lines) are therefore always
 * the background colour. It is rendered in RGB24 at the target size and
 * converted by convert.c.
 *
 * Not thread-safe; one thread owns a placeholder.
 */

#include <stdint.h>
#include <stddef.h>
#include <linux/videodev2.h>

struct v4l2cuse_placeholder;

#define V4L2CUSE_PLACEHOLDER_BG_RGB	32
#define V4L2CUSE_PLACEHOLDER_FG_RGB	235

struct v4l2cuse_placeholder *v4l2cuse_placeholder_new(void);
void v4l2cuse_placeholder_free(struct v4l2cuse_placeholder *ph);		/* NULL-safe */

/*
 * Fill @dst (@len >= pix->sizeimage) with the card in @pix; the converted
 * frame is cached until the format changes. *ret_bytesused as in
 * v4l2cuse_convert_frame().
 */
int v4l2cuse_placeholder_fill(struct v4l2cuse_placeholder *ph, const struct v4l2_pix_format *pix,
			      void *dst, size_t len, uint32_t *ret_bytesused);
