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
struct vb_budget;
struct v4l2cuse_source;
struct v4l2cuse_device;
struct v4l2cuse_fh;
struct v4l2cuse_offer;
struct v4l2cuse_shim;
struct v4l2cuse_hub;

#define V4L2CUSE_MAX_OPENS	1024	/* file handles per device */
#define V4L2CUSE_MAX_EVENTS	64	/* pending events per file handle */

struct v4l2cuse_device_config {
	const char *name;		/* node name, "video42" */
	const char *label;		/* QUERYCAP card */
	const char *source;		/* --source spec */
	uint32_t width, height;		/* default format (0: the source's default_format()) */
	uint32_t pixelformat;		/* 0: the source's default_format() */
	struct v4l2_fract interval;	/* default frame interval (0/0: the source's) */
	const char *id;			/* device id (ctl, the info ioctl); NULL: name */
	const struct v4l2cuse_offer *offer;	/* offered subset (NULL: the source's all) */
	const char *placeholder;	/* source spec shown while the source fails */
	bool shared;			/* every handle streams on its own queue */
	bool output;			/* a loopback's writer node: VIDEO_OUTPUT, write() */
	unsigned int min_buffers;	/* REQBUFS minimum (0: 2) */
	unsigned int read_buffers;	/* read() emulation buffers (0: 3) */
	uint64_t buffer_memory_limit;	/* bytes of buffer memory (0: unlimited) */
	struct vb_budget *global_budget;	/* all devices' budget (NULL: none); ref taken */
	struct v4l2cuse_hub *hub;	/* shares inputs between devices (NULL: no sharing) */
	/*
	 * Called on the loop thread when what the service's STATUS shows may
	 * have changed (a handle opened or closed, buffers allocated or freed,
	 * streaming started or stopped), so nothing has to poll for it.
	 */
	void (*changed)(void *data);
	void *changed_data;
};

/* For v4l2cuse-ctl list (loop thread). */
struct v4l2cuse_device_stats {
	unsigned int opens;		/* open file handles */
	unsigned int consumers;		/* queues streaming or reading */
	unsigned int parked;		/* blocking DQBUF and read() requests waiting */
	bool streaming;			/* a consumer streams or reads */
	bool shared;			/* share=true */
	bool signal_lost;		/* frames come from the placeholder */
	uint64_t delivered;		/* frames handed to consumers since creation */
	uint64_t dropped;		/* frames skipped (no free buffer, source drop) */
	uint64_t errors;		/* frames delivered with V4L2_BUF_FLAG_ERROR */
	uint64_t interrupted;		/* parked DQBUF/read() answered EINTR (caller interrupted) */
	uint64_t produced;		/* frames made (or failed) since creation */
	uint64_t ticks_lost;		/* frame-timer ticks dropped after stalls (a sequence gap each) */
	uint64_t stalls;		/* such stalls: one sequence gap per streaming queue each */
	uint64_t fast_frames;		/* of the delivered, dequeued through the shim's fast path */
	uint64_t fast_wakeups;		/* times a fast-path client woke the daemon (a kick) */
	uint64_t requests;		/* requests from the transport (CUSE) since creation */
	unsigned int fast_handles;	/* handles with a fast path */
	struct v4l2_pix_format fmt;
	struct v4l2_fract interval;
	uint64_t buffer_memory;		/* bytes of buffers allocated now */
	uint64_t buffer_memory_limit;	/* 0: unlimited */
	uint64_t buffer_memory_refused;	/* allocations the device limit refused */
	const char *input;		/* the shared input's key (daemon/hub.h), or NULL */
	unsigned int input_users;	/* devices using that input */
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
/* The device is a USB camera now (daemon/usbface.h): the info ioctl says so. */
void v4l2cuse_device_set_usb_face(struct v4l2cuse_device *dev, bool on);
/* Fail every parked request with @r (shutdown: -ENODEV). */
void v4l2cuse_device_cancel_all(struct v4l2cuse_device *dev, int r);
const char *v4l2cuse_device_id(struct v4l2cuse_device *dev);
const char *v4l2cuse_device_source_spec(struct v4l2cuse_device *dev);
const char *v4l2cuse_device_placeholder_spec(struct v4l2cuse_device *dev);	/* or NULL */
void v4l2cuse_device_get_stats(struct v4l2cuse_device *dev, struct v4l2cuse_device_stats *ret);

/*
 * Switch to the source @spec (wrapped in the device's offer) without
 * disturbing consumers: it must produce the current format exactly, and
 * while streaming it is started before the old one stops, so no parked
 * request is lost and the frame sequence goes on. Controls with the same
 * id keep their values. 0, or -errno with one line in *ret_error and the
 * old source still in place. Loop thread.
 */
int v4l2cuse_device_set_source(struct v4l2cuse_device *dev, const char *spec,
			       char **ret_error);
struct v4l2cuse_loopback_stats;
/* A loopback's figures, for either end's device; -EINVAL for other devices. */
int v4l2cuse_device_loopback_stats(struct v4l2cuse_device *dev,
				   struct v4l2cuse_loopback_stats *ret);

/*
 * Switch between one queue for all handles (vb2's ownership rules) and one
 * queue per handle (share=true). Only while no handle holds buffers or
 * reads: -EBUSY with one line in *ret_error otherwise. Loop thread.
 */
int v4l2cuse_device_set_shared(struct v4l2cuse_device *dev, bool shared, char **ret_error);
/*
 * The placeholder: frames from source @spec (NULL: none) replace the
 * frames the source fails to produce (errors, or gone for good), if it can
 * produce the current format. 0 or -errno with one line in *ret_error.
 */
int v4l2cuse_device_set_placeholder(struct v4l2cuse_device *dev, const char *spec,
				    char **ret_error);

/* The daemon's random per-process nonce (VIDIOC_V4L2CUSE_INFO). Any thread. */
uint64_t v4l2cuse_instance_nonce(void);

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
/*
 * write() (output devices): @off is the bytes already taken in this
 * syscall (0 = a new one, i.e. a new frame). Replies with the count taken
 * or -errno (docs/loopback.md).
 */
void v4l2cuse_fh_write(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req, const void *buf,
		       size_t size, off_t off);
/* poll(): @ph (may be NULL) is kept and notified on the next change. */
void v4l2cuse_fh_poll(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req,
		      unsigned int events, void *ph);

/* Mark a handle as attached to the preload shim (streaming I/O allowed). */
void v4l2cuse_fh_set_streaming(struct v4l2cuse_fh *fh, bool on);
/*
 * The shim's fast path for @fh (daemon/fastpath.c): the shared-memory
 * queue's sealed memfd (*ret_size bytes) and the client's end of the
 * wake-up socket, both for the caller to pass on and close. 0, -EALREADY
 * (one per handle), -ENOMEM (the device's buffer memory limit), -errno.
 */
int v4l2cuse_fh_fastpath(struct v4l2cuse_fh *fh, int *ret_memfd, int *ret_sock,
			 size_t *ret_size);

/* For the shim's server: who opened @fh, and the queue it streams on. */
struct v4l2cuse_device *v4l2cuse_fh_device(struct v4l2cuse_fh *fh);
uid_t v4l2cuse_fh_uid(const struct v4l2cuse_fh *fh);
pid_t v4l2cuse_fh_pid(const struct v4l2cuse_fh *fh);
struct vb_queue *v4l2cuse_fh_queue(struct v4l2cuse_fh *fh);
/*
 * The preload shim's server of @dev (NULL: none): ATTACH is answered by it
 * and a released handle's tokens are revoked through it.
 */
void v4l2cuse_device_set_shim(struct v4l2cuse_device *dev, struct v4l2cuse_shim *shim);
