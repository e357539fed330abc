/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The control socket that v4l2cuse-ctl talks to (protocol and commands:
 * include/v4l2cuse/ctl-protocol.h). Callers must be root or members of the
 * [daemon] control-group; SO_PEERCRED and SO_PEERGROUPS decide, checked at
 * accept time. Loop thread only.
 */

#include <sys/types.h>

struct v4l2cuse_manager;
struct v4l2cuse_control;

/* "reload": re-read the configuration like SIGHUP; 0 or -errno + one line. */
typedef int (*v4l2cuse_control_reload_fn)(void *data, char **ret_error);

/* $RUNTIME_DIRECTORY (first entry) or /run/v4l2cuse, plus control.sock. */
char *v4l2cuse_control_default_path(void);

/*
 * Listen on @path (a stale socket is replaced; its directory is created
 * 0755 if missing). @gid: the group allowed besides root ((gid_t)-1: root
 * only); the socket gets mode 0660 and that group, or 0600.
 */
struct v4l2cuse_control *v4l2cuse_control_new(const char *path, gid_t gid,
					      struct v4l2cuse_manager *m,
					      v4l2cuse_control_reload_fn reload, void *data,
					      char **ret_error);
void v4l2cuse_control_free(struct v4l2cuse_control *c);	/* NULL-safe */
