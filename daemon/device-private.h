/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "device.h"

struct v4l2cuse_shim;

struct v4l2cuse_control;

/* A control as the device keeps it: the source's description plus its value. */
struct dev_ctrl {
	const struct v4l2cuse_control *desc;	/* NULL for the user class control */
	uint32_t id;
	int64_t value;
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

struct v4l2cuse_fh {
	struct v4l2cuse_device *dev;
	GList link;			/* in dev->fhs */
	int open_flags;
	pid_t pid;
	uid_t uid;
	enum v4l2_priority prio;
	bool streaming_capable;		/* attached to the preload shim */
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
	struct v4l2cuse_source *src;
	struct v4l2_pix_format fmt;	/* global across handles */
	struct v4l2_fract interval;
	struct vb_queue *q;
	struct vb_budget *budget;	/* the device limit, chained to the global one */
	GQueue fhs;
	unsigned int n_fhs;
	unsigned int prio_count[V4L2_PRIORITY_RECORD + 1];

	/* The producer: buffers handed over by buf_queue, and a frame timer. */
	GQueue active;			/* struct vb_buffer * */
	bool streaming;
	int timer_fd;
	guint timer_source;
	guint wake_source;		/* watch on the source's wake fd (no timer then) */
	int wake_fd;			/* the fd watched, -1 if none */
	int wake_dead_fd;		/* an fd that hung up and was not replaced */
	void *scratch;			/* drop target when no buffer is free */
	uint32_t frames;		/* frames produced since start */

	/* Service bits (daemon/manager.c, v4l2cuse-ctl). */
	char *id;			/* device id, for the info ioctl */
	char *source_spec;		/* the spec dev->src was made from */
	struct v4l2cuse_offer *offer;	/* NULL: the source offers all it has */
	struct v4l2cuse_source *placeholder;	/* NULL: none */
	char *placeholder_spec;
	bool placeholder_started;
	bool placeholder_unusable;	/* cannot produce dev->fmt: not tried again */
	bool placeholder_showing;	/* the last frame came from it */
	uint64_t delivered, dropped, errors;

	struct dev_ctrl *ctrls;
	unsigned int n_ctrls;

	const struct v4l2cuse_poll_ops *poll_ops;
	struct v4l2cuse_shim *shim;	/* the preload shim's server, or NULL */
};

/* device.c */
void dev_wake_fh(struct v4l2cuse_fh *fh);
void dev_wake_all(struct v4l2cuse_device *dev);
int dev_prio_check(struct v4l2cuse_fh *fh);
void dev_set_interval(struct v4l2cuse_device *dev, struct v4l2_fract interval);
int dev_set_format(struct v4l2cuse_device *dev, struct v4l2_pix_format *pix, bool try_only);
void dev_queue_event(struct v4l2cuse_fh *fh, const struct v4l2_event *ev);
void dev_park(struct dev_parked *p, struct v4l2cuse_fh *fh, struct v4l2cuse_req *req);
void dev_dqbuf(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req, const struct v4l2_buffer *arg);

/* ctrls.c */
int dev_ctrls_init(struct v4l2cuse_device *dev);
void dev_ctrls_free(struct v4l2cuse_device *dev);
struct dev_ctrl *dev_ctrl_find(struct v4l2cuse_device *dev, uint32_t id);
void dev_ctrl_send_event(struct v4l2cuse_device *dev, struct v4l2cuse_fh *skip,
			 struct dev_ctrl *c, uint32_t changes);
void dev_ctrl_fill_event(struct dev_ctrl *c, uint32_t changes, struct v4l2_event *ev);
