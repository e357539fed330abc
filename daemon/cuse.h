/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <sys/types.h>

struct v4l2cuse_device;
struct v4l2cuse_lbctl;
struct v4l2cuse_cuse;

/* The v4l2loopback control device's node, /dev/v4l2loopback (daemon/lbctl.h). */
#define V4L2CUSE_LBCTL_NAME	"v4l2loopback"

enum v4l2cuse_cuse_state {
	V4L2CUSE_CUSE_READY,	/* the node exists and is served by us */
	V4L2CUSE_CUSE_FAILED,	/* registration failed (e.g. name taken) */
	V4L2CUSE_CUSE_ENDED,	/* the connection was aborted later */
};

typedef void (*v4l2cuse_cuse_state_fn)(struct v4l2cuse_cuse *c,
				       enum v4l2cuse_cuse_state state, void *data);

/* Checks /dev/cuse and that @name is free; one line in *ret_error if not. */
int v4l2cuse_cuse_precheck(const char *name, char **ret_error);

/*
 * Register @dev as /dev/<name> and serve it from the default main context.
 * The node gets @mode and group @gid ((gid_t)-1: leave it) once it exists.
 * @state_cb reports READY, or FAILED/ENDED with v4l2cuse_cuse_error().
 */
struct v4l2cuse_cuse *v4l2cuse_cuse_new(struct v4l2cuse_device *dev, mode_t mode,
					gid_t gid, v4l2cuse_cuse_state_fn state_cb,
					void *data, char **ret_error);
/*
 * The same for the v4l2loopback control device: /dev/V4L2CUSE_LBCTL_NAME,
 * whose opens need no handle and whose ioctls go to @ctl.
 */
struct v4l2cuse_cuse *v4l2cuse_cuse_new_lbctl(struct v4l2cuse_lbctl *ctl, mode_t mode,
					      gid_t gid, v4l2cuse_cuse_state_fn state_cb,
					      void *data, char **ret_error);
void v4l2cuse_cuse_free(struct v4l2cuse_cuse *c);
struct v4l2cuse_device *v4l2cuse_cuse_device(struct v4l2cuse_cuse *c);	/* NULL: control */
int v4l2cuse_cuse_error(struct v4l2cuse_cuse *c);
