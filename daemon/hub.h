/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Inputs shared between devices, and the registry of loopbacks (daemon/
 * loopback.h: writer nodes that feed capture devices): every source a
 * device uses comes from here. Devices whose source= names the same camera
 * or file (v4l2cuse_source_input_key(): the same device node, also through
 * a by-id link, or the same file, with the same options) get one instance
 * of the source between them, and each device a "tap" on it: a
 * source of its own that enumerates, negotiates and sets controls on the
 * shared instance, and streams in the device's own format.
 *
 * The input runs while a tap streams. With one tap streaming, frames go
 * straight from the source into that device's buffers (no copy). With
 * more, the input is set to the largest size they stream at (the fastest
 * rate), the hub produces each frame once into a staging buffer, and each
 * tap converts and scales it to its own format, paced at its own rate.
 * A tap joining with a larger size restarts the input in the new mode
 * (a short pause for the others, no error).
 *
 * Loop thread only.
 */

#include <stdbool.h>

struct v4l2cuse_hub;
struct v4l2cuse_source;

struct v4l2cuse_hub *v4l2cuse_hub_new(void);
/* NULL-safe. Every source made through @hub must be destroyed first. */
void v4l2cuse_hub_free(struct v4l2cuse_hub *hub);

/*
 * The source for @spec: a tap on the input another source of @hub already
 * reads when @spec names the same one, else a new input. Specs of sources
 * without an input (the test pattern) are created plainly. 0, or -errno
 * with one line in *ret_error.
 */
int v4l2cuse_hub_source_create(struct v4l2cuse_hub *hub, const char *spec,
			       struct v4l2cuse_source **ret_src, char **ret_error);

/*
 * For a tap: its input's key and the number of taps on it (all devices
 * that use it, streaming or not); NULL for any other source.
 */
const char *v4l2cuse_hub_input(struct v4l2cuse_source *src, unsigned int *ret_taps);
