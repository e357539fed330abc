/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The placeholder frame a source delivers while its input is gone (a file
 * that became unreadable, a camera that was unplugged): by default a "NO
 * SIGNAL" card, or the first frame of a configured image or video file,
 * scaled and converted to the negotiated format like any other frame.
 *
 * The default card: R'G'B' (32, 32, 32) everywhere (limited-range BT.601
 * Y' 43, Cb/Cr 128), with "NO SIGNAL" centred in (235, 235, 235) in the
 * 5x7 test-pattern font, scaled up to about 60% of the width. Its
 * corners and its edges (outside the middle third of the lines) are
 * therefore always the background colour.
 *
 * Not thread-safe; one thread owns a placeholder.
 */

#include <stdint.h>
#include <stddef.h>
#include <linux/videodev2.h>

struct placeholder;

#define PLACEHOLDER_BG_RGB	32
#define PLACEHOLDER_FG_RGB	235

/*
 * @image: NULL or "" for the built-in card, else a file the file source can
 * read (its first frame is used). Fails with a one-line message naming the
 * file.
 */
int placeholder_new(const char *image, struct placeholder **ret, char **ret_error);
void placeholder_free(struct placeholder *ph);		/* NULL-safe */

/*
 * Fill @dst (@len >= pix->sizeimage) with the placeholder in @pix; the
 * converted frame is cached until the format changes. *ret_bytesused as in
 * cv_convert().
 */
int placeholder_fill(struct placeholder *ph, const struct v4l2_pix_format *pix, void *dst,
		     size_t len, uint32_t *ret_bytesused);
