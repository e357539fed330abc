/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A request from a client, as the ioctl/read/poll layer sees it. The
 * transport behind it is CUSE (daemon/cuse.c) in the daemon and a fake in
 * the unit tests; this layer never includes FUSE headers.
 *
 * Exactly one reply (or retry) is sent per request. A handler that cannot
 * answer now parks the request (v4l2cuse_req_park()), which returns a copy
 * that outlives the handler, and answers it later from the loop thread.
 */

#include <stdbool.h>
#include <stddef.h>
#include <sys/uio.h>

struct v4l2cuse_req;

typedef void (*v4l2cuse_req_interrupt_fn)(struct v4l2cuse_req *req, void *data);

struct v4l2cuse_req_ops {
	/* ioctl retry round: ask for @in to be copied in and @out to be writable. */
	void (*retry)(struct v4l2cuse_req *req, const struct iovec *in, size_t n_in,
		      const struct iovec *out, size_t n_out);
	/*
	 * ioctl reply: @r is 0, the ioctl's return value (> 0) or -errno;
	 * @buf is copied out even when r < 0.
	 */
	void (*reply_ioctl)(struct v4l2cuse_req *req, int r, const void *buf, size_t len);
	/* Any request: fail with -errno @r, nothing copied. */
	void (*reply_err)(struct v4l2cuse_req *req, int r);
	/* read(): @len bytes of data (0 ends the syscall). */
	void (*reply_data)(struct v4l2cuse_req *req, const void *buf, size_t len);
	/* write(): @count bytes were taken. */
	void (*reply_write)(struct v4l2cuse_req *req, size_t count);
	/* open(): success. */
	void (*reply_open)(struct v4l2cuse_req *req, void *fh);
	/* poll(): revents. */
	void (*reply_poll)(struct v4l2cuse_req *req, unsigned int revents);
	/* Return a heap copy valid until its reply (the original is then dead). */
	struct v4l2cuse_req *(*park)(struct v4l2cuse_req *req);
	/*
	 * Call @fn(req, data) when the client is interrupted by a signal. It may
	 * run inside this call (interrupt already pending): then it runs after
	 * registration is complete, never reentrantly. Only parked requests.
	 */
	void (*on_interrupt)(struct v4l2cuse_req *req, v4l2cuse_req_interrupt_fn fn, void *data);
};

struct v4l2cuse_req {
	const struct v4l2cuse_req_ops *ops;
	/*
	 * Optional, set by the layer: runs once, right before the reply (not
	 * before a retry round). The client acts on a reply at once, so what
	 * the request changed in memory it reads without asking (the fast
	 * path's shared state, docs/shim.md) is published here, never after.
	 * A parked copy keeps it.
	 */
	void (*before_reply)(void *data);
	void *before_reply_data;
};

static inline void
v4l2cuse_req_before_reply(struct v4l2cuse_req *req)
{
	void (*fn)(void *data) = req->before_reply;

	if (fn) {
		req->before_reply = NULL;
		fn(req->before_reply_data);
	}
}

static inline void
v4l2cuse_req_retry(struct v4l2cuse_req *req, const struct iovec *in, size_t n_in,
		   const struct iovec *out, size_t n_out)
{
	req->ops->retry(req, in, n_in, out, n_out);
}

static inline void
v4l2cuse_req_reply_ioctl(struct v4l2cuse_req *req, int r, const void *buf, size_t len)
{
	v4l2cuse_req_before_reply(req);
	req->ops->reply_ioctl(req, r, buf, len);
}

static inline void
v4l2cuse_req_reply_err(struct v4l2cuse_req *req, int r)
{
	v4l2cuse_req_before_reply(req);
	req->ops->reply_err(req, r);
}

static inline void
v4l2cuse_req_reply_data(struct v4l2cuse_req *req, const void *buf, size_t len)
{
	v4l2cuse_req_before_reply(req);
	req->ops->reply_data(req, buf, len);
}

static inline void
v4l2cuse_req_reply_write(struct v4l2cuse_req *req, size_t count)
{
	v4l2cuse_req_before_reply(req);
	req->ops->reply_write(req, count);
}

static inline void
v4l2cuse_req_reply_poll(struct v4l2cuse_req *req, unsigned int revents)
{
	v4l2cuse_req_before_reply(req);
	req->ops->reply_poll(req, revents);
}

static inline struct v4l2cuse_req *
v4l2cuse_req_park(struct v4l2cuse_req *req)
{
	struct v4l2cuse_req *parked = req->ops->park(req);

	parked->before_reply = req->before_reply;
	parked->before_reply_data = req->before_reply_data;
	return parked;
}
