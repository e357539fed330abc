/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What manager.c (the life cycle of each device) and manager-report.c (what
 * `v4l2cuse-ctl list` and `stats` and STATUS= say of them) share.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <glib.h>

#include "manager.h"

struct vb_budget;
struct v4l2cuse_conf;
struct v4l2cuse_conf_device;
struct v4l2cuse_device;
struct v4l2cuse_cuse;
struct v4l2cuse_shim;
struct v4l2cuse_hub;
struct v4l2cuse_selftest;
struct v4l2cuse_usbface;

enum mdev_state {
	MDEV_BUILT,		/* device made, not registered */
	MDEV_REGISTERING,	/* CUSE init in flight */
	MDEV_TESTING,		/* the node exists; self-test running */
	MDEV_SERVING,
	MDEV_FAILED,		/* torn down, retry timer armed */
	MDEV_GAVE_UP,		/* torn down for good */
};

extern const char *const mdev_state_names[];


struct mdev {
	struct v4l2cuse_manager *m;
	struct v4l2cuse_conf_device *conf;	/* what it was built from (owned) */
	bool runtime;			/* added by v4l2cuse-ctl add */
	char *node;			/* resolved node name */
	struct v4l2cuse_device *dev;
	struct v4l2cuse_cuse *cuse;
	struct v4l2cuse_shim *shim;
	/* A loopback source's writer node (daemon/loopback.h), made and gone with it. */
	char *writer_node;
	struct v4l2cuse_device *wdev;
	struct v4l2cuse_cuse *wcuse;
	struct v4l2cuse_shim *wshim;
	bool writer_ready;		/* the writer node exists (its CUSE is READY) */
	struct v4l2cuse_usbface *usb;	/* usb=true, while serving */
	enum mdev_state state;
	char *error;			/* the last failure */
	int fail_errno;			/* its errno, if known (-EEXIST: name taken), else 0 */
	/* v4l2cuse_manager_watch_ready(): told once of serving or failing. */
	v4l2cuse_manager_ready_fn ready_fn;
	void *ready_data;
	char *reported;			/* the last failure logged as a warning */
	unsigned int failures;		/* in a row */
	bool settled;			/* first attempt over */
	bool teardown_pending;
	uint64_t tag;			/* of the self-test we wait for */
	guint retry_source;
	guint timeout_source;
	guint idle_source;		/* deferred failure handling */
	gint64 retry_at;		/* monotonic µs */
};

struct v4l2cuse_manager {
	struct v4l2cuse_manager_events ev;
	void *data;
	bool stop_on_failure;
	struct v4l2cuse_conf *conf;	/* daemon settings in force */
	struct vb_budget *budget;	/* buffer-memory-limit of all devices together */
	struct v4l2cuse_hub *hub;	/* cameras and files shared between devices */
	GPtrArray *devs;		/* struct mdev * */
	struct v4l2cuse_selftest *selftest;
	uint64_t next_tag;
	bool waiting_settle;		/* report settled() when all are */
	char *service_network;		/* V4L2CUSE_SERVICE_NETWORK (network.h); NULL: no unit */
};
