/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One capture from a v4l2cuse node: a plain MMAP streaming client. CUSE
 * has no mmap, so the handle attaches through the preload shim's protocol
 * (shim-client/client.c, docs/shim.md): the daemon hands us the memfd of each
 * buffer and we map it read-only. What the caller does with a frame (copy
 * it into a PipeWire buffer, send it to uvcvideo) is its own business.
 *
 * Streaming goes through the handle's fast path when the daemon gives one
 * (shim-client/fastpath.c, docs/shim.md "The fast path"): QBUF, DQBUF and the
 * wait for a frame through shared memory and a wake-up socket, as the
 * shim does inside an app, so a frame costs no CUSE request. Without it
 * (V4L2CUSE_FASTPATH=0, an older daemon, or once it ended) the node
 * answers through CUSE, as before.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "v4l2cuse/ctl-protocol.h"
#include "shim-client.h"
#include "client.h"
#include "capture-private.h"

struct capture_buffer {
	void *mem;
	size_t length;
};

struct client_capture {
	int fd;
	struct shim_handle *shim;
	struct v4l2_pix_format pix;
	unsigned int n_buffers;
	struct capture_buffer bufs[SHIM_MAX_BUFFERS];
	bool streaming;
	/*
	 * QBUF, DQBUF and readiness through the fast path: set at STREAMON if
	 * it streams, cleared for good (client_capture_dequeue()) once it no
	 * longer does; client_capture_fd() follows it.
	 */
	bool fast;
	int pending_index;		/* -1: no frame pending */
	struct client_frame pending;
	uint64_t frames, dropped;
};

/*
 * An ioctl of the node, retried on EINTR: 0 or -errno. Through the shim's
 * libc table (libc itself here, shim-libc.c), which the unit tests route
 * to a node of their fake transport.
 */
static int
node_ioctl(int fd, unsigned long request, void *arg)
{
	int r;

	do
		r = shim_real.ioctl(fd, request, arg);
	while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : 0;
}

/* Buffer @index of our queue (capture, MMAP), for QUERYBUF, QBUF, DQBUF. */
static struct v4l2_buffer
capture_buffer(unsigned int index)
{
	return (struct v4l2_buffer){
		.type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
		.memory = V4L2_MEMORY_MMAP,
		.index = index,
	};
}

static int
queue_buffer(struct client_capture *c, unsigned int index)
{
	struct v4l2_buffer b = capture_buffer(index);
	int r;

	/* The fast path answers only for a buffer it dequeued; else CUSE does. */
	if (c->fast && shim_fp_qbuf(c->shim, &b, &r))
		return r;
	return node_ioctl(c->fd, VIDIOC_QBUF, &b);
}

static int
dequeue_buffer(struct client_capture *c, struct v4l2_buffer *b)
{
	int r;

	/* The fd is O_NONBLOCK: -EAGAIN when nothing is done, as from the node. */
	if (c->fast && shim_fp_dqbuf(c->shim, c->fd, b, &r))
		return r;
	return node_ioctl(c->fd, VIDIOC_DQBUF, b);
}

/*
 * Is a frame (or the error state) there for the fast path's DQBUF? 1: yes;
 * 0: not yet, and the wait fd turns readable when something changes; -1:
 * the fast path no longer streams, the node answers from now on. The
 * order of preload/wait.c's poll(): a wake-up that brought nothing is
 * taken (shim_fp_woken()) before the state is read again, so a watch of
 * the wait fd neither fires again for it (a level-triggered GLib watch
 * would spin) nor misses what came meanwhile (that write is a wake-up the
 * take leaves, or asks the daemon for again). A hang-up of the wait fd
 * (the daemon is gone) ends the fast path.
 */
static int
capture_fp_ready(struct client_capture *c)
{
	struct pollfd p = { .fd = shim_fp_wait_fd(c->shim), .events = POLLIN };
	short m;

	if (!shim_fp_poll(c->shim, POLLIN, &m))
		return -1;
	if (m & (POLLIN | POLLERR))
		return 1;
	if (p.fd >= 0 && shim_real.poll(&p, 1, 0) > 0 &&
	    (p.revents & (POLLHUP | POLLERR | POLLNVAL)))
		shim_fp_woken(c->shim, p.revents);
	else
		shim_fp_woken(c->shim, 0);
	if (!shim_fp_poll(c->shim, POLLIN, &m))
		return -1;
	return (m & (POLLIN | POLLERR)) != 0;
}

/* The memfd behind buffer @index, mapped read-only. */
static int
map_buffer(struct client_capture *c, unsigned int index)
{
	struct v4l2_buffer b = capture_buffer(index);
	struct v4l2cuse_shim_request req = { .type = V4L2CUSE_SHIM_MAP };
	struct v4l2cuse_shim_reply rep;
	_cleanup_close_ int memfd = -1;
	void *mem;
	int r;

	r = node_ioctl(c->fd, VIDIOC_QUERYBUF, &b);
	if (r < 0)
		return r;
	req.map.offset = b.m.offset;
	req.map.length = b.length;
	r = shim_request(c->shim, &req, &rep, &memfd);
	if (r < 0)
		return r;
	if (rep.status < 0)
		return rep.status;
	if (memfd < 0 || rep.index != index)
		return -EPROTO;
	mem = mmap(NULL, b.length, PROT_READ, MAP_SHARED, memfd, 0);
	if (mem == MAP_FAILED)
		return -errno;
	c->bufs[index].mem = mem;
	c->bufs[index].length = b.length;
	/*
	 * The map record stays with the daemon until the connection closes
	 * (client_capture_stop): it counts this buffer as mapped, as vb2
	 * would while our mapping lives.
	 */
	return 0;
}

int
client_capture_start(const char *path, const struct client_mode *mode, struct client_rate rate,
		     unsigned int n_buffers, struct client_capture **ret, char **ret_error)
{
	struct shim_handle *shim;
	int fd, r;

	fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		*ret_error = g_strdup_printf("cannot open: %s", g_strerror(-r));
		return r;
	}
	/* The private ioctl and the authenticated socket (docs/shim.md). */
	shim = shim_attach(fd);
	if (!shim) {
		/* shim-client/client.c said why at debug level. */
		*ret_error = g_strdup("cannot attach to the daemon's buffer socket "
				      "(is " V4L2CUSE_CTL_RUNDIR " reachable? --verbose says more)");
		shim_real.close(fd);
		return -ENOTSUP;
	}
	return client_capture_start_attached(fd, shim, path, mode, rate, n_buffers, ret, ret_error);
}

int
client_capture_start_attached(int fd, struct shim_handle *shim, const char *path,
			      const struct client_mode *mode, struct client_rate rate,
			      unsigned int n_buffers, struct client_capture **ret, char **ret_error)
{
	struct client_capture *c = g_new0(struct client_capture, 1);
	struct v4l2_format f = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	struct v4l2_streamparm parm = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	struct v4l2_requestbuffers rb = {
		.type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
		.memory = V4L2_MEMORY_MMAP,
		.count = CLAMP(n_buffers, 2, SHIM_MAX_BUFFERS),
	};
	int type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	const char *what;
	int r;

	c->fd = fd;
	c->shim = shim;
	c->pending_index = -1;
	/*
	 * The fast path, asked for before the buffers exist, as the shim asks
	 * at an app's REQBUFS. None (refused, an older daemon): CUSE.
	 */
	if (shim_fp_enabled())
		shim_fp_setup(c->shim);
	what = "set the format (VIDIOC_S_FMT)";
	f.fmt.pix.pixelformat = mode->fourcc;
	f.fmt.pix.width = mode->width;
	f.fmt.pix.height = mode->height;
	f.fmt.pix.field = V4L2_FIELD_NONE;
	r = node_ioctl(c->fd, VIDIOC_S_FMT, &f);
	if (r < 0)
		goto err;
	if (f.fmt.pix.pixelformat != mode->fourcc || f.fmt.pix.width != mode->width ||
	    f.fmt.pix.height != mode->height) {
		/* A shared device keeps the format of the app streaming now. */
		*ret_error = g_strdup_printf("the device streams %ux%u %.4s for another app",
					     f.fmt.pix.width, f.fmt.pix.height,
					     (const char *)&f.fmt.pix.pixelformat);
		r = -EBUSY;
		goto err_msg;
	}
	c->pix = f.fmt.pix;
	if (rate.num && rate.denom) {
		parm.parm.capture.timeperframe.numerator = rate.denom;
		parm.parm.capture.timeperframe.denominator = rate.num;
		r = node_ioctl(c->fd, VIDIOC_S_PARM, &parm);
		if (r < 0)
			g_debug("%s: VIDIOC_S_PARM %u/%u fps: %s", path, rate.num, rate.denom,
				g_strerror(-r));
	}
	what = "allocate buffers (VIDIOC_REQBUFS)";
	r = node_ioctl(c->fd, VIDIOC_REQBUFS, &rb);
	if (r < 0)
		goto err;
	if (rb.count < 2) {
		r = -ENOMEM;
		goto err;
	}
	c->n_buffers = MIN(rb.count, SHIM_MAX_BUFFERS);
	what = "map the buffers";
	for (unsigned int i = 0; i < c->n_buffers; i++) {
		r = map_buffer(c, i);
		if (r < 0)
			goto err;
	}
	what = "queue the buffers (VIDIOC_QBUF)";
	for (unsigned int i = 0; i < c->n_buffers; i++) {
		r = queue_buffer(c, i);
		if (r < 0)
			goto err;
	}
	what = "start streaming (VIDIOC_STREAMON)";
	r = node_ioctl(c->fd, VIDIOC_STREAMON, &type);
	if (r < 0)
		goto err;
	c->streaming = true;
	{
		short m;

		/* STREAMON's reply came after the daemon published it: ACTIVE now. */
		c->fast = shim_fp_poll(c->shim, POLLIN, &m);
	}
	g_debug("%s: streaming through %s", path, c->fast ? "the fast path" : "CUSE");
	*ret = c;
	return 0;

err:
	*ret_error = g_strdup_printf("cannot %s: %s", what, g_strerror(-r));
err_msg:
	client_capture_stop(c);
	return r;
}

void
client_capture_stop(struct client_capture *c)
{
	int type = V4L2_BUF_TYPE_VIDEO_CAPTURE;

	if (!c)
		return;
	if (c->streaming)
		node_ioctl(c->fd, VIDIOC_STREAMOFF, &type);
	for (unsigned int i = 0; i < SHIM_MAX_BUFFERS; i++) {
		if (c->bufs[i].mem)
			munmap(c->bufs[i].mem, c->bufs[i].length);
	}
	/* Closing the connection drops the daemon's map records. */
	shim_handle_unref(c->shim);
	/* And closing the node frees its queue (vb2: REQBUFS(0) at release). */
	if (c->fd >= 0)
		shim_real.close(c->fd);
	g_free(c);
}

int
client_capture_fd(const struct client_capture *c)
{
	return c->fast ? shim_fp_wait_fd(c->shim) : c->fd;
}

int
client_capture_dequeue(struct client_capture *c)
{
	if (c->fast) {
		int ready = capture_fp_ready(c);

		if (ready == 0)
			return c->pending_index >= 0 ? 0 : -EAGAIN;
		if (ready < 0) {
			/* Ended (the daemon hung up, an error): the node from now on. */
			c->fast = false;
			g_debug("the fast path ended: streaming through CUSE");
		}
	}
	for (;;) {
		struct v4l2_buffer b = capture_buffer(0);
		int r = dequeue_buffer(c, &b);

		if (r == -EAGAIN)
			return c->pending_index >= 0 ? 0 : -EAGAIN;
		if (r < 0)
			return r;
		if (b.index >= c->n_buffers)
			return -EPROTO;
		if (c->pending_index >= 0) {
			/* A newer frame: the waiting one is dropped. */
			c->dropped++;
			r = client_capture_release(c);
			if (r < 0)
				return r;
		}
		c->pending_index = (int)b.index;
		c->pending = (struct client_frame){
			.data = c->bufs[b.index].mem,
			.bytesused = MIN(b.bytesused, (uint32_t)c->bufs[b.index].length),
			.sequence = b.sequence,
			.pts_ns = (uint64_t)b.timestamp.tv_sec * G_GUINT64_CONSTANT(1000000000) +
				  (uint64_t)b.timestamp.tv_usec * 1000u,
			.error = b.flags & V4L2_BUF_FLAG_ERROR,
		};
	}
}

const struct client_frame *
client_capture_pending(const struct client_capture *c)
{
	return c->pending_index >= 0 ? &c->pending : NULL;
}

int
client_capture_release(struct client_capture *c)
{
	int index = c->pending_index;

	if (index < 0)
		return 0;
	c->pending_index = -1;
	return queue_buffer(c, (unsigned int)index);
}

void
client_capture_delivered(struct client_capture *c)
{
	c->frames++;
}

void
client_capture_counts(const struct client_capture *c, uint64_t *ret_frames, uint64_t *ret_dropped)
{
	*ret_frames = c->frames;
	*ret_dropped = c->dropped;
}
