/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The consumer side of a v4l2cuse node, for the daemon's own helper
 * programs that stream from a node like any app does: v4l2cuse-pipewire
 * (pw-bridge/) and v4l2cuse-usb (usb/).
 *
 * modes.c    what a node offers: its modes as ENUM_FMT, ENUM_FRAMESIZES and
 *            ENUM_FRAMEINTERVALS list them, with TRY_FMT's line and image
 *            sizes (the daemon owns that math; clients never recompute it).
 * capture.c  one capture: open, attach through the shim protocol
 *            (shim-client/client.c, docs/shim.md), MMAP buffers, DQBUF/QBUF,
 *            through the fast path (shim-client/fastpath.c) when there is one.
 *
 * shim-libc.c the libc table the shim protocol's client (shim-client/)
 *            calls through.
 *
 * GLib, no main loop of its own: the caller polls client_capture_fd().
 */

#include <stdbool.h>
#include <stdint.h>
#include <glib.h>
#include <linux/videodev2.h>

#define CLIENT_MAX_RATES 16

/* Frames per second as a fraction (the inverse of a V4L2 frame interval). */
struct client_rate {
	uint32_t num, denom;
};

/* One (format, discrete size) of a node with its frame rates. */
struct client_mode {
	uint32_t fourcc;		/* V4L2_PIX_FMT_* */
	uint32_t width, height;
	uint32_t stride;		/* TRY_FMT bytesperline (0 for MJPEG) */
	uint32_t size;			/* TRY_FMT sizeimage: one buffer */
	struct client_rate rates[CLIENT_MAX_RATES];	/* the node's order */
	unsigned int n_rates;
};

/* ioctl() retried on EINTR: 0 or -errno. */
int client_xioctl(int fd, unsigned long request, void *arg);

/*
 * Append every (format, discrete size) of the capture node @fd whose
 * format @usable accepts (NULL: all) and that has at least one discrete
 * rate and is settable as listed (TRY_FMT), to @modes (of struct
 * client_mode). 0 or -errno of TRY_FMT.
 */
int client_probe_modes(int fd, bool (*usable)(uint32_t fourcc), GArray *modes);

/* --- capture.c --- */
struct client_capture;

/* A frame the device filled, dequeued and not yet given back. */
struct client_frame {
	const void *data;
	uint32_t bytesused;
	uint32_t sequence;
	uint64_t pts_ns;		/* CLOCK_MONOTONIC, as the V4L2 timestamp */
	bool error;			/* V4L2_BUF_FLAG_ERROR */
};

/*
 * Open @path, attach through the shim protocol, set @mode at @rate (0/x:
 * leave the rate), map @n_buffers buffers (the device may give fewer, at
 * least 2) and start streaming. 0, or -errno with a one-line reason in
 * @ret_error; -EBUSY when a shared device streams another format for
 * another app.
 */
int client_capture_start(const char *path, const struct client_mode *mode,
			 struct client_rate rate, unsigned int n_buffers,
			 struct client_capture **ret, char **ret_error);
/* Stop streaming, unmap, close: the node is free for other apps. NULL-safe. */
void client_capture_stop(struct client_capture *c);
/*
 * The fd to poll for G_IO_IN (a frame may be ready: call
 * client_capture_dequeue()) and G_IO_ERR: while the capture streams
 * through the fast path, its wake-up socket, else the node. A readiness
 * that brings no frame is taken by client_capture_dequeue()'s -EAGAIN, so
 * a level-triggered watch fires once per change, and none is lost. It
 * changes (for good, from the socket to the node) only in
 * client_capture_dequeue(), when the fast path ends: a caller that keeps
 * its watch compares the fd after each call.
 */
int client_capture_fd(const struct client_capture *c);
/*
 * Dequeue every finished buffer; keep the newest as the pending frame and
 * give older ones back (counted as dropped). 0 if a frame is pending,
 * -EAGAIN if none, other -errno when the device failed (-ENODEV,
 * -ECONNABORTED: the daemon is gone). Through the fast path no CUSE
 * request is made.
 */
int client_capture_dequeue(struct client_capture *c);
/* The pending frame, or NULL. */
const struct client_frame *client_capture_pending(const struct client_capture *c);
/* Give the pending frame's buffer back to the device. */
int client_capture_release(struct client_capture *c);
/* The pending frame went to the consumer (counted). */
void client_capture_delivered(struct client_capture *c);
/* Frames delivered, and dropped because a newer one was ready first. */
void client_capture_counts(const struct client_capture *c, uint64_t *ret_frames,
			   uint64_t *ret_dropped);
