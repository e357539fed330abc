/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * One V4L2 capture device: its global state (format, frame interval,
 * priorities, controls), its videobuf queue, its frame source and producer
 * timer, and the file handles open on it. Transport-neutral: daemon/cuse.c
 * feeds it requests; tests/unit feeds it fake ones.
 *
 * Threading: everything here runs on the loop thread.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <glib.h>
#include <linux/videodev2.h>

#include "req.h"

struct vb_queue;
struct v4l2cuse_source;
struct v4l2cuse_device;
struct v4l2cuse_fh;

#define V4L2CUSE_MAX_OPENS	1024	/* file handles per device */
#define V4L2CUSE_MAX_EVENTS	64	/* pending events per file handle */

struct v4l2cuse_device_config {
	const char *name;		/* node name, "video42" */
	const char *label;		/* QUERYCAP card */
	const char *source;		/* --source spec */
	uint32_t width, height;		/* default format (0: source's first) */
	uint32_t pixelformat;		/* 0: source's first */
	struct v4l2_fract interval;	/* default frame interval (0/0: 1/30) */
};

/* Transport hooks for poll wake-ups (CUSE poll handles). */
struct v4l2cuse_poll_ops {
	void (*notify)(void *ph);	/* wake and consume the handle */
	void (*destroy)(void *ph);	/* drop a handle without waking */
};

/* On failure returns NULL and sets *ret_error (g_free) to one line. */
struct v4l2cuse_device *v4l2cuse_device_new(const struct v4l2cuse_device_config *cfg,
					    char **ret_error);
void v4l2cuse_device_free(struct v4l2cuse_device *dev);
void v4l2cuse_device_set_poll_ops(struct v4l2cuse_device *dev,
				  const struct v4l2cuse_poll_ops *ops);
const char *v4l2cuse_device_name(struct v4l2cuse_device *dev);
const char *v4l2cuse_device_label(struct v4l2cuse_device *dev);
/* Fail every parked request with @r (shutdown: -ENODEV). */
void v4l2cuse_device_cancel_all(struct v4l2cuse_device *dev, int r);

/* --- Requests from the transport. Each sends exactly one reply. --- */
struct v4l2cuse_ioctl_args {
	unsigned int cmd;		/* the full 32-bit command */
	unsigned long arg;		/* the caller's address */
	unsigned int flags;		/* V4L2CUSE_IOCTL_COMPAT, ... */
	const void *in;			/* data copied in this round */
	size_t in_size;
	size_t out_size;		/* bytes the caller can receive this round */
};
#define V4L2CUSE_IOCTL_COMPAT	(1u << 0)

/* Open a handle; NULL with -errno in *ret_err when out of handles. */
struct v4l2cuse_fh *v4l2cuse_fh_open(struct v4l2cuse_device *dev, int open_flags,
				     pid_t pid, uid_t uid, int *ret_err);
void v4l2cuse_fh_release(struct v4l2cuse_fh *fh);
void v4l2cuse_fh_ioctl(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req,
		       const struct v4l2cuse_ioctl_args *args);
/* read(): @off is the bytes already returned in this syscall (0 = new). */
void v4l2cuse_fh_read(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req,
		      size_t size, off_t off, int file_flags);
/* poll(): @ph (may be NULL) is kept and notified on the next change. */
void v4l2cuse_fh_poll(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req,
		      unsigned int events, void *ph);

/* Mark a handle as attached to the preload shim (streaming I/O allowed). */
void v4l2cuse_fh_set_streaming(struct v4l2cuse_fh *fh, bool on);
