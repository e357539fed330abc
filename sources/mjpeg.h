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
 * coded rows of the last full encode and, when the caller says only the
 * top @dirty_rows lines changed (the text overlay), re-encodes just that
 * band and splices it in front of the cached rows. Call
 * mjpeg_enc_invalidate() whenever anything below the band may have changed
 * (or pass dirty_rows >= height).
 */

#include <stddef.h>
#include <stdint.h>

struct mjpeg_enc;

/* @width must be even. @quality 1..100. */
struct mjpeg_enc *mjpeg_enc_new(uint32_t width, uint32_t height, int quality);
void mjpeg_enc_free(struct mjpeg_enc *e);	/* NULL-safe */
void mjpeg_enc_invalidate(struct mjpeg_enc *e);

/*
 * Encode @yuv into @out (at most @out_len bytes). If the result would not
 * fit, retries at lower quality (and stays there for later frames).
 * Returns 0 and *ret_len, -ENOSPC if even quality 5 does not fit, -EIO on
 * an encoder error.
 */
int mjpeg_enc_encode(struct mjpeg_enc *e, const uint8_t *yuv, uint32_t dirty_rows,
		     uint8_t *out, size_t out_len, size_t *ret_len);

/* The quality currently used. */
int mjpeg_enc_quality(const struct mjpeg_enc *e);
