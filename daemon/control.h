/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The control socket that v4l2cuse-ctl talks to (protocol and commands:
 * include/v4l2cuse/ctl-protocol.h). Callers must be root or members of the
 * [daemon] control-group; SO_PEERCRED and SO_PEERGROUPS decide, checked at
 * accept time. Loop thread only.
 *
 * Every daemon shares one path unless its configuration names another
 * (control-socket=), and a socket file is never removed while a daemon
 * listens on it: a connect() that succeeds means a live daemon, one
 * refused with ECONNREFUSED a file left by a daemon that ended. The path
 * belongs to the daemon that listens there first, except that a daemon
 * started with a configuration (the service) takes it over from one
 * started with --device (a test run by hand): it asks, and that one closes
 * and removes its socket ("yield-socket") before the new one binds.
 */

#include <stdbool.h>
#include <sys/types.h>

struct v4l2cuse_manager;
struct v4l2cuse_control;

/* "reload": re-read the configuration like SIGHUP; 0 or -errno + one line. */
typedef int (*v4l2cuse_control_reload_fn)(void *data, char **ret_error);

/* What the daemon was started with: which commands make sense, who keeps the socket. */
enum v4l2cuse_control_kind {
	/* A configuration file: every command; takes the socket from a CMDLINE daemon. */
	V4L2CUSE_CONTROL_CONFIGURED,
	/*
	 * One device from the command line (--device): add, remove and
	 * reload are refused (its set of devices is the command line, and
	 * it ends when a registration fails); it gives the socket to a
	 * CONFIGURED daemon that asks.
	 */
	V4L2CUSE_CONTROL_CMDLINE,
};

/* $RUNTIME_DIRECTORY (first entry) or /run/v4l2cuse, plus control.sock. */
char *v4l2cuse_control_default_path(void);

/*
 * Listen on @path unless another live daemon does (a stale socket is
 * replaced; its directory is created 0755 if missing). @gid: the group
 * allowed besides root ((gid_t)-1: root only); the socket gets mode 0660
 * and that group, or 0600. @reload: required for CONFIGURED, unused for
 * CMDLINE. Never NULL: a daemon that gets no socket logs one line saying
 * why and runs without one (v4l2cuse_control_serving() is false).
 */
struct v4l2cuse_control *v4l2cuse_control_new(const char *path, gid_t gid,
					      enum v4l2cuse_control_kind kind,
					      struct v4l2cuse_manager *m,
					      v4l2cuse_control_reload_fn reload, void *data);
/* Whether this daemon listens on its socket now (it may have given it away). */
bool v4l2cuse_control_serving(const struct v4l2cuse_control *c);
/* Removes the socket file if it is still this daemon's. NULL-safe. */
void v4l2cuse_control_free(struct v4l2cuse_control *c);
