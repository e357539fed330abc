/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One capture from a v4l2cuse node: a plain MMAP streaming client. CUSE
 * has no mmap, so the handle attaches through the preload shim's protocol
 * (preload/client.c, docs/shim.md): the daemon hands us the memfd of each
 * buffer and we map it read-only. What the caller does with a frame (copy
 * it into a PipeWire buffer, send it to uvcvideo) is its own business.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "v4l2cuse/ctl-protocol.h"
#include "../preload/shim.h"
#include "client.h"

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
	int pending_index;		/* -1: no frame pending */
	struct client_frame pending;
	uint64_t frames, dropped;
};

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

	return client_xioctl(c->fd, VIDIOC_QBUF, &b);
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

	r = client_xioctl(c->fd, VIDIOC_QUERYBUF, &b);
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

	c->fd = -1;
	c->pending_index = -1;
	what = "open";
	c->fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (c->fd < 0) {
		r = -errno;
		goto err;
	}
	/* The private ioctl and the authenticated socket (docs/shim.md). */
	c->shim = shim_attach(c->fd);
	if (!c->shim) {
		/* preload/client.c said why at debug level. */
		*ret_error = g_strdup("cannot attach to the daemon's buffer socket "
				      "(is " V4L2CUSE_CTL_RUNDIR " reachable? --verbose says more)");
		r = -ENOTSUP;
		goto err_msg;
	}
	what = "set the format (VIDIOC_S_FMT)";
	f.fmt.pix.pixelformat = mode->fourcc;
	f.fmt.pix.width = mode->width;
	f.fmt.pix.height = mode->height;
	f.fmt.pix.field = V4L2_FIELD_NONE;
	r = client_xioctl(c->fd, VIDIOC_S_FMT, &f);
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
		r = client_xioctl(c->fd, VIDIOC_S_PARM, &parm);
		if (r < 0)
			g_debug("%s: VIDIOC_S_PARM %u/%u fps: %s", path, rate.num, rate.denom,
				g_strerror(-r));
	}
	what = "allocate buffers (VIDIOC_REQBUFS)";
	r = client_xioctl(c->fd, VIDIOC_REQBUFS, &rb);
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
	r = client_xioctl(c->fd, VIDIOC_STREAMON, &type);
	if (r < 0)
		goto err;
	c->streaming = true;
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
		client_xioctl(c->fd, VIDIOC_STREAMOFF, &type);
	for (unsigned int i = 0; i < SHIM_MAX_BUFFERS; i++) {
		if (c->bufs[i].mem)
			munmap(c->bufs[i].mem, c->bufs[i].length);
	}
	/* Closing the connection drops the daemon's map records. */
	shim_handle_unref(c->shim);
	/* And closing the node frees its queue (vb2: REQBUFS(0) at release). */
	clear_fd(&c->fd);
	g_free(c);
}

int
client_capture_fd(const struct client_capture *c)
{
	return c->fd;
}

int
client_capture_dequeue(struct client_capture *c)
{
	for (;;) {
		struct v4l2_buffer b = capture_buffer(0);
		int r = client_xioctl(c->fd, VIDIOC_DQBUF, &b);

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
