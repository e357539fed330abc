/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The v4l2loopback control device, /dev/v4l2loopback: the ioctls through
 * which v4l2loopback-ctl (and scripts and apps made for v4l2loopback
 * 0.13-0.15) add, query and remove loopback devices at runtime, answered
 * with the manager's loopback devices (docs/loopback.md, "Adding devices
 * at runtime"; the ABI is v4l2cuse/loopback-abi.h).
 *
 * ADD makes a device as `v4l2cuse-ctl add` does, source loopback, and
 * answers once both of its nodes exist and it serves (the request waits,
 * parked); QUERY and REMOVE take either node's number. Transport-neutral
 * like a device: daemon/cuse.c feeds it requests, the unit tests fake ones.
 * Loop thread only.
 */

#include <sys/types.h>

#include "device.h"
#include "req.h"

struct v4l2cuse_manager;
struct v4l2cuse_lbctl;

/*
 * Register /dev/v4l2loopback for @m's devices: mode 0600, or 0660 with
 * group @gid ((gid_t)-1: root only). NULL with one line in *ret_error when
 * it cannot be registered (the name is taken: the v4l2loopback module is
 * loaded, or another daemon has it).
 */
struct v4l2cuse_lbctl *v4l2cuse_lbctl_new(struct v4l2cuse_manager *m, gid_t gid,
					  char **ret_error);
/* Answers the ADDs still waiting (ENODEV); the node goes. NULL-safe. */
void v4l2cuse_lbctl_free(struct v4l2cuse_lbctl *ctl);

/* One ioctl request from the transport; exactly one answer (or a retry round). */
void v4l2cuse_lbctl_ioctl(struct v4l2cuse_lbctl *ctl, struct v4l2cuse_req *req,
			  const struct v4l2cuse_ioctl_args *args);
