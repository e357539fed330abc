/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A fake transport for the ioctl layer: replays the kernel's CUSE ioctl
 * retry protocol over this process's memory (the "client" memory is ours),
 * so tests call fake_ioctl(fh, cmd, &arg) like a real ioctl(). Every
 * request must get exactly one answer (reply, retry round or park; a
 * parked copy exactly one reply): anything else fails the test at once
 * with a message naming the request.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "device.h"

#define FAKE_PARKED 1000	/* fake_ioctl/fake_read: the request was parked */

/* The outcome of a parked request once it is answered. */
struct fake_parked {
	bool answered;
	int result;		/* 0, an ioctl's value (> 0) or -errno */
	size_t len;		/* read(): bytes */
};

/* Returns 0, -errno, or FAKE_PARKED (then see fake_last_parked()). */
int fake_ioctl(struct v4l2cuse_fh *fh, unsigned int cmd, void *arg);
/* Same, with a cap on the out size the "kernel" allows (ENOMEM above). */
int fake_ioctl_rounds(struct v4l2cuse_fh *fh, unsigned int cmd, void *arg, int *ret_rounds);
/*
 * The same protocol against another handler of it, @fn(@obj, ...) (the
 * v4l2loopback control device's v4l2cuse_lbctl_ioctl()): returns the
 * reply's value (which may be above 0), -errno, or FAKE_PARKED. @arg is
 * passed as the caller's argument, a pointer or a number.
 */
typedef void (*fake_ioctl_fn)(void *obj, struct v4l2cuse_req *req,
			      const struct v4l2cuse_ioctl_args *a);
int fake_ioctl_on(fake_ioctl_fn fn, void *obj, unsigned int cmd, void *arg, int *ret_rounds);
/* One read() syscall of @count bytes, in 128 KiB chunks; returns bytes or -errno. */
ssize_t fake_read(struct v4l2cuse_fh *fh, void *buf, size_t count, int flags);
/* One write() syscall of @count bytes, in 128 KiB chunks; returns bytes or -errno. */
ssize_t fake_write(struct v4l2cuse_fh *fh, const void *buf, size_t count);
/* poll(): the revents answer. */
unsigned int fake_poll(struct v4l2cuse_fh *fh, unsigned int events);
/* The parked request of the last call that returned FAKE_PARKED. */
struct fake_parked *fake_last_parked(void);
/*
 * Call @fn(@data) on the loop thread at every reply (not a retry round),
 * the moment the client would have its answer and could act on it before
 * the layer returns (NULL: none).
 */
void fake_set_reply_hook(void (*fn)(void *data), void *data);
/* Deliver FUSE_INTERRUPT to the last parked request. */
void fake_interrupt_last(void);
/* Poll notifications received (wake-ups). */
unsigned int fake_poll_notifications(void);
void fake_install_poll_ops(struct v4l2cuse_device *dev);
/* v4l2cuse_device_new() that must succeed (its error printed if not), poll ops installed. */
struct v4l2cuse_device *fake_device(const struct v4l2cuse_device_config *cfg);
/* A device configuration: YUYV @w x @h at @fps frames a second from @source. */
struct v4l2cuse_device_config fake_yuyv_config(const char *name, const char *source,
					       uint32_t w, uint32_t h, unsigned int fps);
