/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Interlaced camera frames made progressive, before the converter (which
 * only knows progressive pictures and would scale across fields).
 *
 * What a buffer of each V4L2 field order becomes:
 *   NONE, INTERLACED, INTERLACED_TB, INTERLACED_BT
 *                  the buffer itself: the two fields' lines already
 *                  alternate (the temporal order does not change the picture)
 *   SEQ_TB, SEQ_BT the two fields, stored one after the other in each
 *                  plane (top first, or bottom first), woven line by line
 *   ALTERNATE      one field per buffer (its own TOP or BOTTOM): woven with
 *                  the other field of the same frame; every second buffer
 *                  completes a frame
 *   TOP, BOTTOM    the one field, a picture of half the height (the
 *                  converter scales it within the field)
 *
 * Raw formats of format.c only (v4l2cuse_format_lookup(); their planes are
 * woven each on its own); a compressed frame passes only as a whole frame
 * (NONE, INTERLACED*).
 *
 * Not thread-safe: one thread owns a struct v4l2cuse_weave.
 */

#include <stdint.h>

#include "convert.h"

struct v4l2cuse_weave;

struct v4l2cuse_weave *v4l2cuse_weave_new(void);
void v4l2cuse_weave_free(struct v4l2cuse_weave *w);	/* NULL-safe */

/* A new stream: a field kept from before is forgotten. */
void v4l2cuse_weave_reset(struct v4l2cuse_weave *w);

/*
 * @in is one buffer of a camera whose format has field order @field; for
 * ALTERNATE, @buf_field is the buffer's V4L2_FIELD_TOP or _BOTTOM and
 * in->height the height of the field. Returns 0 with *ret the progressive
 * picture (*in itself, or memory of @w valid until the next call on it),
 * -EAGAIN for the first field of an ALTERNATE frame (kept for the next
 * call), -EINVAL for what cannot be split into fields (a compressed frame,
 * a plane with an odd number of lines, a frame shorter than its format).
 */
int v4l2cuse_weave(struct v4l2cuse_weave *w, const struct v4l2cuse_image *in, uint32_t field,
		   uint32_t buf_field, struct v4l2cuse_image *ret);

/* The height of a progressive frame for @height in a format of field order @field. */
uint32_t v4l2cuse_field_frame_height(uint32_t field, uint32_t height);
