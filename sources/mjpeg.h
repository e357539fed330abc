/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A Motion-JPEG encoder for mostly static frames (libjpeg-turbo).
 *
 * Input is planar 4:2:2 Y'CbCr (Y: width x height, then Cb and Cr:
 * width / 2 x height each), full-range BT.601 as JFIF wants. Output is a
 * baseline JFIF JPEG with 4:2:2 sampling (Y 2x1), standard Huffman tables
 * (DHT always present) and a restart marker after every MCU row (8 lines).
 *
 * Because every MCU row is then coded independently, the encoder keeps the
 * coded rows of the last full encode and, when the caller says only some
 * line ranges changed (the text overlay, a moving box), re-encodes just the
 * MCU rows those touch and splices them between the cached rows. Call
 * v4l2cuse_mjpeg_enc_invalidate() whenever anything outside the ranges may have
 * changed (or pass a range covering the whole height).
 */

#include <stddef.h>
#include <stdint.h>

struct v4l2cuse_mjpeg_enc;

/* @width must be even. @quality 1..100. */
struct v4l2cuse_mjpeg_enc *v4l2cuse_mjpeg_enc_new(uint32_t width, uint32_t height, int quality);
void v4l2cuse_mjpeg_enc_free(struct v4l2cuse_mjpeg_enc *e);	/* NULL-safe */
void v4l2cuse_mjpeg_enc_invalidate(struct v4l2cuse_mjpeg_enc *e);

/* Lines [y0, y1) of a frame. */
struct v4l2cuse_mjpeg_rows {
	uint32_t y0, y1;
};
#define V4L2CUSE_MJPEG_MAX_RANGES 4

/*
 * Encode @yuv into @out (at most @out_len bytes). @dirty lists the line
 * ranges that may differ from the frame the cache was built from (n_dirty
 * <= V4L2CUSE_MJPEG_MAX_RANGES; NULL/0: nothing changed); the ranges given with the
 * frame that (re)builds the cache are re-encoded in every later frame too,
 * since the cache holds that frame's content there (e.g. a moving box).
 * If the result would not fit, retries at lower quality (and stays there).
 * Returns 0 and *ret_len, -ENOSPC if even quality 5 does not fit, -EIO on
 * an encoder error.
 */
int v4l2cuse_mjpeg_enc_encode_ranges(struct v4l2cuse_mjpeg_enc *e, const uint8_t *yuv,
				     const struct v4l2cuse_mjpeg_rows *dirty, unsigned int n_dirty,
				     uint8_t *out, size_t out_len, size_t *ret_len);

