/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * H.264 and HEVC streams passed through as a camera sends them (Annex B
 * byte streams: NAL units after 00 00 01 start codes), with one promise
 * added: every key frame a consumer gets carries the stream's parameter
 * sets, so a consumer that starts (or a camera that comes back) mid-stream
 * can decode from its first frame.
 *
 *   - the newest parameter sets seen (H.264 SPS and PPS; HEVC VPS, SPS and
 *     PPS) are kept;
 *   - a key frame (H.264 IDR; HEVC IRAP: BLA, IDR, CRA) without them gets
 *     them put in front, after an access unit delimiter if it starts with
 *     one;
 *   - after a reset (a new stream), frames before the first key frame are
 *     held back: a decoder cannot use them.
 *
 * The frame's own bytes are never changed. Not thread-safe.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct v4l2cuse_nal;

/* For V4L2_PIX_FMT_H264 or V4L2_PIX_FMT_HEVC; NULL for any other fourcc. */
struct v4l2cuse_nal *v4l2cuse_nal_new(uint32_t fourcc);
void v4l2cuse_nal_free(struct v4l2cuse_nal *n);	/* NULL-safe */

/* A new stream: wait for a key frame again (the parameter sets are kept). */
void v4l2cuse_nal_reset(struct v4l2cuse_nal *n);

/*
 * One frame (access unit) of @size bytes at @data into @dst (@dst_len
 * bytes), with the parameter sets put in front where they are missing.
 * Returns 0 with *ret_len the bytes written and *ret_key whether it is a
 * key frame; -EAGAIN for a frame held back (before the first key frame);
 * -ENOSPC when it does not fit; -EBADMSG for data without a start code.
 */
int v4l2cuse_nal_frame(struct v4l2cuse_nal *n, const uint8_t *data, size_t size, uint8_t *dst,
		       size_t dst_len, size_t *ret_len, bool *ret_key);
