/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What the parts of a device share: device.c (life cycle, format, the
 * source and the placeholder), fh.c (file handles, parked requests,
 * events, read() and poll()), producer.c (the queues' driver ops and the
 * frame loop), ctrls.c (controls) and ioctl.c (the dispatcher). Nothing
 * outside daemon/device*.c, fh.c, producer.c, ctrls.c and ioctl.c
 * includes it: the rest of the daemon uses device.h.
 */

#include "videobuf.h"
#include "device.h"

struct v4l2cuse_shim;
struct v4l2cuse_control;
struct v4l2cuse_placeholder;
struct dev_fp;

/*
 * A control as the device keeps it: the source's description plus its
 * value, and the flags and range last told to subscribers (a source's
 * description may change: V4L2_EVENT_CTRL then says how).
 */
struct dev_ctrl {
	const struct v4l2cuse_control *desc;	/* NULL for a class control */
	uint32_t id;
	int64_t value;
	uint32_t flags;
	int64_t minimum, maximum, default_value;
	uint64_t step;
};

/* A request parked until a frame, an event or an error arrives. */
struct dev_parked {
	struct v4l2cuse_req *req;	/* NULL when nothing is parked */
	struct v4l2cuse_fh *fh;
	bool registering;		/* inside on_interrupt() registration */
	bool interrupted;		/* interrupt arrived during registration */
	size_t size;			/* read(): bytes asked for */
	struct v4l2_buffer buf;		/* DQBUF: the caller's argument */
};

/*
 * One buffer queue and what the producer keeps of it. An exclusive device
 * has one, used by every handle with vb2's ownership rules (the first
 * handle to allocate owns it, the others get EBUSY); a shared device gives
 * every handle its own, so each consumer streams or reads on its own.
 */
struct dev_queue {
	struct v4l2cuse_device *dev;
	struct v4l2cuse_fh *fh;		/* the handle of a shared device's queue, else NULL */
	struct vb_queue *q;
	GQueue active;			/* buffers handed over by buf_queue, oldest first */
	GList link;			/* in dev->streams while started */
	bool started;
};

struct v4l2cuse_fh {
	struct v4l2cuse_device *dev;
	struct dev_queue *dq;		/* dev->main, or its own on a shared device */
	GList link;			/* in dev->fhs */
	int open_flags;
	pid_t pid;
	uid_t uid;
	enum v4l2_priority prio;
	bool streaming_capable;		/* attached to the preload shim */
	/*
	 * output: it became the writer with write(), and stays it until it
	 * closes, streaming or not (the shim's write() emulation streams).
	 */
	bool writes;
	struct dev_fp *fp;		/* the shim's fast path (fastpath.c), or NULL */
	void *ph;			/* newest poll handle, or NULL */
	struct dev_parked dqbuf;
	struct dev_parked read;
	GArray *subs;			/* struct v4l2_event_subscription */
	GQueue events;			/* struct v4l2_event *, oldest first */
	uint32_t event_sequence;
};

struct v4l2cuse_device {
	char *name;
	char *label;
	unsigned int number;		/* N of videoN, for bus_info */
	uint32_t kernel_version;	/* QUERYCAP version */
	struct v4l2cuse_hub *hub;	/* inputs shared with other devices, or NULL */
	struct v4l2cuse_source *src;
	struct v4l2_pix_format fmt;	/* global across handles */
	struct v4l2_fract interval;
	bool shared;			/* every handle has its own queue */
	bool output;			/* a loopback's writer node (VIDEO_OUTPUT) */
	struct v4l2cuse_fh *writer;	/* output: the handle that writes */
	uint8_t *wbuf;			/* output: the frame being written */
	size_t wlen, walloc;
	struct dev_queue *main;		/* the one queue of an exclusive device */
	struct vb_queue_config qc;	/* how queues are made (shared: one per handle) */
	struct vb_budget *budget;	/* the device limit, chained to the global one */
	GQueue fhs;
	unsigned int n_fhs;
	unsigned int prio_count[V4L2_PRIORITY_RECORD + 1];

	/* The producer (producer.c). */
	GQueue streams;			/* struct dev_queue *, started */
	int timer_fd;
	guint timer_source;
	guint wake_source;		/* watch on the source's wake fd (no timer then) */
	int wake_fd;			/* the fd watched, -1 if none */
	int wake_dead_fd;		/* an fd that hung up and was not replaced */
	void *scratch;			/* drop target when no buffer is free */
	uint32_t frames;		/* frames produced since start */
	uint64_t next_tick_ns;		/* the timer's next expiry (CLOCK_MONOTONIC) */
	uint64_t tick_ns;		/* the timer's interval */

	/* No signal: the placeholder source, or the built-in card. */
	struct v4l2cuse_source *placeholder;	/* NULL: none configured */
	char *placeholder_spec;
	bool placeholder_started;
	bool placeholder_unusable;	/* cannot produce dev->fmt: not tried again */
	struct v4l2cuse_placeholder *card;	/* the built-in NO SIGNAL card, made on first use */
	bool signal_lost;		/* the last frame was a placeholder frame */

	/* Service bits (daemon/manager.c, v4l2cuse-ctl). */
	char *id;			/* device id, for the info ioctl */
	bool usb_face;			/* shown as a USB camera now (info ioctl flag) */
	char *source_spec;		/* the spec dev->src was made from */
	struct v4l2cuse_offer *offer;	/* NULL: the source offers all it has */
	uint64_t delivered, dropped, errors;
	uint64_t interrupted;		/* parked requests answered EINTR (caller interrupted) */
	uint64_t produced;		/* frames made (or failed) since creation */
	uint64_t ticks_lost;		/* timer ticks dropped after a stall */
	uint64_t stalls;		/* stalls that dropped ticks */
	uint64_t fast_frames;		/* frames dequeued through the fast path */
	uint64_t fast_wakeups;		/* wake-ups by a fast-path client (kicks) */
	uint64_t requests;		/* requests from the transport (CUSE) */

	struct dev_ctrl *ctrls;
	unsigned int n_ctrls;
	guint ctrl_watch;		/* on the source's control_fd(), or 0 */

	const struct v4l2cuse_poll_ops *poll_ops;
	struct v4l2cuse_shim *shim;	/* the preload shim's server, or NULL */
	void (*changed)(void *data);	/* device config's */
	void *changed_data;
	uint64_t request_memory;	/* buffer memory when the current request began */
};

/* device.c */
int dev_set_format(struct v4l2cuse_device *dev, struct v4l2_pix_format *pix, bool try_only);
bool dev_others_busy(struct v4l2cuse_device *dev, struct v4l2cuse_fh *fh);

/* A loopback's writer node with compat=1: QUERYCAP passes for v4l2loopback's. */
bool dev_loopback_compat(struct v4l2cuse_device *dev);
/* output: the writer set a new format: its next frames come in it. */
void dev_writer_restart(struct v4l2cuse_device *dev);

/* device.c: what STATUS shows may have changed (open, buffers, streaming). */
void dev_changed(struct v4l2cuse_device *dev);

/* fh.c */
/* A request of @fh from the transport starts (counted; the fast path's
 * submissions are taken first; what it changes is published right before
 * @req's reply) and ends (what changed after the reply is published). */
void dev_request_begin(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req);
void dev_request_end(struct v4l2cuse_fh *fh);
void dev_wake_fh(struct v4l2cuse_fh *fh);
void dev_wake_all(struct v4l2cuse_device *dev);
int dev_prio_check(struct v4l2cuse_fh *fh);
void dev_queue_event(struct v4l2cuse_fh *fh, const struct v4l2_event *ev);
/* Whether @fh subscribed to events of @type and @id (its flags in *ret_flags, may be NULL). */
bool dev_subscribed(struct v4l2cuse_fh *fh, uint32_t type, uint32_t id, uint32_t *ret_flags);
/*
 * A writer node: v4l2loopback's client-usage event (v4l2cuse/loopback-abi.h)
 * of @type, the loopback's readers now, to @fh; it replaces one pending.
 */
void dev_client_usage_event(struct v4l2cuse_fh *fh, uint32_t type);
/* A writer node's readers changed (@data: the device): every subscriber hears. */
void dev_client_usage_changed(void *data);
void dev_dqbuf(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req, const struct v4l2_buffer *arg);
/* output: @fh becomes the writer (-EBUSY: another one is); the writer goes. */
int dev_writer_join(struct v4l2cuse_fh *fh);
void dev_writer_leave(struct v4l2cuse_device *dev);
/* output: the writer's write() call ended, the next frame comes (write() or a buffer). */
void dev_writer_end_call(struct v4l2cuse_device *dev);

/* producer.c */
struct dev_queue *dev_queue_new(struct v4l2cuse_device *dev, struct v4l2cuse_fh *fh);
void dev_queue_free(struct dev_queue *dq);
void dev_set_interval(struct v4l2cuse_device *dev, struct v4l2_fract interval);
/* After the source was switched while streaming: watch its wake fd. */
void dev_producer_rearm(struct v4l2cuse_device *dev);
void dev_producer_free(struct v4l2cuse_device *dev);
void dev_placeholder_stop(struct v4l2cuse_device *dev);
bool dev_streaming(struct v4l2cuse_device *dev);

/* fastpath.c (each NULL-safe: a handle without a fast path does nothing) */
/* Take @fh's submissions (NULL-safe): its QBUFs and acknowledged DQBUFs. */
void dev_fp_take(struct v4l2cuse_fh *fh);
/* Publish new completions and the state; wake the client if anything changed. */
void dev_fp_publish(struct v4l2cuse_fh *fh);
/* Done buffers were dequeued through CUSE: publish the rest anew. */
void dev_fp_void(struct v4l2cuse_fh *fh);
void dev_fp_free(struct v4l2cuse_fh *fh);

/* ctrls.c (the ioctl side is in ctrls.h) */
/* The source's controls, and a watch on its control_fd() for changes made elsewhere. */
int dev_ctrls_init(struct v4l2cuse_device *dev);
/* Stop watching the source's changes (before it is replaced or destroyed). */
void dev_ctrls_unwatch(struct v4l2cuse_device *dev);
void dev_ctrls_free(struct v4l2cuse_device *dev);
struct dev_ctrl *dev_ctrl_find(struct v4l2cuse_device *dev, uint32_t id);
void dev_ctrl_send_event(struct v4l2cuse_device *dev, struct v4l2cuse_fh *skip,
			 struct dev_ctrl *c, uint32_t changes);
void dev_ctrl_fill_event(struct dev_ctrl *c, uint32_t changes, struct v4l2_event *ev);
