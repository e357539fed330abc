/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Formats between a v4l2cuse node and PipeWire (docs/pipewire.md):
 *
 * - A device's modes, as its ENUM_FMT / ENUM_FRAMESIZES /
 *   ENUM_FRAMEINTERVALS list them, each with the line and image size its
 *   TRY_FMT answers (the daemon owns that math; we never recompute it).
 * - One EnumFormat object per mode, as PipeWire's own v4l2 plugin offers a
 *   camera: media type video, subtype raw (with the video format) or mjpg,
 *   a fixed size, the frame rates as an Enum choice (the device's first
 *   rate is the default; a single rate is a plain fraction).
 * - The Format a consumer fixed, parsed back to a V4L2 fourcc, size and
 *   rate, and matched against the modes.
 *
 * Pure translation: no I/O, no PipeWire context; tests/unit/test-pw-formats.c
 * covers it.
 */

#include <stdbool.h>
#include <stdint.h>
#include <spa/pod/builder.h>
#include <spa/utils/defs.h>

#include "../client/client.h"

/* What a consumer fixed. */
struct bridge_format {
	uint32_t fourcc;
	uint32_t width, height;
	struct spa_fraction rate;	/* frames per second; 0/1 if absent */
};

/*
 * The SPA media subtype and video format of a V4L2 fourcc: true for the
 * formats we translate (raw formats and MJPG/JPEG), false for others.
 * @ret_format is SPA_VIDEO_FORMAT_ENCODED for MJPG.
 */
bool bridge_fourcc_to_spa(uint32_t fourcc, uint32_t *ret_subtype, uint32_t *ret_format);

/* The V4L2 fourcc of an SPA subtype and format; 0 if we have none. */
uint32_t bridge_fourcc_from_spa(uint32_t subtype, uint32_t format);

/*
 * The EnumFormat object of @m, built in @b. NULL when @m has no rate or a
 * fourcc we do not translate, or @b is too small (the caller skips it).
 */
struct spa_pod *bridge_mode_build(struct spa_pod_builder *b, const struct client_mode *m);

/*
 * What a pipewire: device (a feed, feed.c) asks of the node it captures:
 * the EnumFormat objects of its input stream, in @b, into @ret (up to
 * @max; the count is returned). One raw object whose format choice lists
 * every raw format we translate, @want's fourcc first when it is one of
 * them, then the packed ones (they need no plane layout); then an MJPG
 * object. Sizes and rates are ranges whose defaults are @want's (what the
 * device's readers streamed), 640x480 at 30 fps when it has none.
 */
unsigned int bridge_feed_formats_build(struct spa_pod_builder *b, const struct bridge_format *want,
				       const struct spa_pod **ret, unsigned int max);

/* Whether @fourcc keeps its pixels in one plane (packed YUV, RGB, GREY). */
bool bridge_fourcc_is_packed(uint32_t fourcc);

/*
 * A fixed Format object back to @out: 0, or -EINVAL when it is not a
 * video format with a size, -ENOTSUP for a subtype or format we do not
 * translate.
 */
int bridge_format_parse(const struct spa_pod *format, struct bridge_format *out);

/*
 * The mode of @modes (@n_modes of them) that @f selects: same fourcc and
 * size, and a rate the mode offers (any when @f has none). NULL if none.
 */
const struct client_mode *bridge_modes_find(const struct client_mode *modes, unsigned int n_modes,
					    const struct bridge_format *f);
