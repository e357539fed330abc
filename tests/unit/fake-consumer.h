/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A streaming consumer on the fake transport (fake-req.h): a handle that
 * REQBUFS, maps its buffers as the preload shim would (the buffers'
 * memfds), queues them, streams, and dequeues without blocking, counting
 * frames and sequence gaps. For tests of the device's frame delivery.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/videodev2.h>

#include "videobuf.h"
#include "device.h"

struct fake_consumer {
	struct v4l2cuse_fh *fh;
	unsigned int n_bufs;
	uint8_t *mem[VB_MAX_BUFFERS];
	size_t len[VB_MAX_BUFFERS];
	uint32_t last_seq;		/* UINT32_MAX before the first frame */
	unsigned int frames, gaps;
};

/* A handle of @dev opened with @flags; attached to the shim if @shim. */
struct v4l2cuse_fh *fake_open(struct v4l2cuse_device *dev, bool shim, int flags);
/* Open (O_NONBLOCK unless @flags says otherwise), REQBUFS(@n) MMAP, map, QBUF all, STREAMON. */
void fake_consumer_start(struct fake_consumer *c, struct v4l2cuse_device *dev,
			 unsigned int n, int flags);
int fake_consumer_qbuf(struct fake_consumer *c, uint32_t index);
/*
 * One DQBUF: 0 with *ret filled (the frame checked whole: @sizeimage
 * bytes, no ERROR flag; sequence gaps counted), or -errno (-EAGAIN).
 */
int fake_consumer_dqbuf(struct fake_consumer *c, uint32_t sizeimage, struct v4l2_buffer *ret);
void fake_consumer_unmap(struct fake_consumer *c);
/* Unmap and release the handle. */
void fake_consumer_close(struct fake_consumer *c);
