/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The daemon's end of the preload shim protocol
 * (include/v4l2cuse/shim-protocol.h, docs/shim.md): a unix socket served
 * from the default GLib main context. It issues single-use tokens for the
 * private attach ioctl, authenticates connections (token + SO_PEERCRED
 * against the handle's opener), hands out buffer memfds with SCM_RIGHTS
 * and keeps the V4L2_BUF_FLAG_MAPPED counts of the queue in step with the
 * shim's mappings. No FUSE: the unit tests drive it with real sockets.
 *
 * Threading: the loop thread only, like the device.
 */

#include <stdbool.h>
#include <sys/types.h>

#include "v4l2cuse/shim-protocol.h"

struct v4l2cuse_device;
struct v4l2cuse_fh;
struct v4l2cuse_shim;

/* Limits on what clients can make us hold. */
#define V4L2CUSE_SHIM_MAX_CONNECTIONS	1100	/* > V4L2CUSE_MAX_OPENS */
#define V4L2CUSE_SHIM_MAX_PENDING	64	/* connections before HELLO */
#define V4L2CUSE_SHIM_MAX_PENDING_PER_UID 16	/* of them, one peer uid's */
#define V4L2CUSE_SHIM_HELLO_TIMEOUT_S	5	/* then an idle connection is closed */
#define V4L2CUSE_SHIM_MAX_TOKENS_PER_FH	4	/* the oldest unused one goes */
#define V4L2CUSE_SHIM_MAX_MAPS		1024	/* mapping records per connection */

struct v4l2cuse_shim_stats {
	unsigned int connections;	/* open, authenticated or not */
	unsigned int authenticated;	/* bound to a handle (or were, until its release) */
	unsigned int tokens;		/* issued and not yet presented */
	unsigned int mappings;		/* mapping records held for clients */
	unsigned int refused;		/* HELLOs refused since start */
};

/*
 * The socket path for device @name: $RUNTIME_DIRECTORY (its first entry,
 * as systemd's RuntimeDirectory= sets it) or /run/v4l2cuse, plus
 * "<name>.sock". The directory is created 0755 if missing, and must be a
 * directory owned by us and writable by nobody else. NULL with one line in
 * *ret_error on failure.
 */
char *v4l2cuse_shim_socket_path(const char *name, char **ret_error);

/*
 * Listen on @path (a stale socket there is replaced; anything else is an
 * error), mode 0666: anyone may connect, the token and peer credentials
 * decide. Registers itself with @dev, so the attach ioctl works from now
 * on. NULL with one line in *ret_error on failure.
 */
struct v4l2cuse_shim *v4l2cuse_shim_new(struct v4l2cuse_device *dev, const char *path,
					char **ret_error);
/* Closes every connection, unlinks the socket, unregisters. NULL-safe. */
void v4l2cuse_shim_free(struct v4l2cuse_shim *s);
const char *v4l2cuse_shim_path(struct v4l2cuse_shim *s);

/*
 * Serve the connected (non-blocking) socket @fd as a client whose
 * SO_PEERCRED is @cred: what accepting a connection does after
 * getsockopt(). Answers what the client sent already (its HELLO). Takes
 * @fd, also on failure (-EBUSY at the connection limit; -ECONNRESET: closed
 * at once, a refused HELLO or EOF). At the limits of connections before
 * HELLO it closes an older one (shim.c, shim_pending_make_room()). For the
 * tests and the fuzzer, which need peers of other uids.
 */
struct ucred;
int v4l2cuse_shim_adopt(struct v4l2cuse_shim *s, int fd, const struct ucred *cred);

/* VIDIOC_V4L2CUSE_ATTACH for @fh: fills @a (token, path). 0 or -errno. */
int v4l2cuse_shim_attach(struct v4l2cuse_shim *s, struct v4l2cuse_fh *fh,
			 struct v4l2cuse_shim_attach *a);
/* @fh is released: revoke its tokens, unbind its connections. */
void v4l2cuse_shim_fh_release(struct v4l2cuse_shim *s, struct v4l2cuse_fh *fh);
/* The handles' queues were replaced (share= switched): forget the old ones. */
void v4l2cuse_shim_queues_changed(struct v4l2cuse_shim *s);
void v4l2cuse_shim_get_stats(struct v4l2cuse_shim *s, struct v4l2cuse_shim_stats *ret);
