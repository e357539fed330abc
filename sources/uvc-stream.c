/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The uvc source's streams (uvc-private.h): setting a camera up and
 * streaming (mmap buffers), losing it (no signal at the negotiated rate on
 * the timerfd) and the thread that finds it again and hands a started
 * stream over through the eventfd.
 */

#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <glib.h>
#include <libv4l2.h>

#include "util/macros.h"
#include "v4l2cuse/format.h"
#include "uvc-private.h"

void
v4l2cuse_uvc_stream_free(struct uvc_stream *s)
{
	struct v4l2_requestbuffers rb = {
		.type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP,
	};
	int type = V4L2_BUF_TYPE_VIDEO_CAPTURE;

	if (!s)
		return;
	v4l2cuse_uvc_ioctl(s->fd, VIDIOC_STREAMOFF, &type);
	for (unsigned int i = 0; i < s->n_bufs; i++) {
		if (s->mem[i] && s->mem[i] != MAP_FAILED)
			v4l2_munmap(s->mem[i], s->len[i]);
	}
	v4l2cuse_uvc_ioctl(s->fd, VIDIOC_REQBUFS, &rb);
	g_free(s);
}

/* Configure @fd as @cfg says (or as close as the camera gets) and stream. */
int
v4l2cuse_uvc_stream_start(int fd, const struct uvc_config *cfg, struct uvc_stream **ret)
{
	struct uvc_stream *s = g_new0(struct uvc_stream, 1);
	struct v4l2_format f = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	struct v4l2_streamparm parm = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	struct v4l2_requestbuffers rb = {
		.type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP,
		.count = cfg->n_bufs,
	};
	int type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	int r;

	s->fd = fd;
	f.fmt.pix.pixelformat = cfg->fourcc;
	f.fmt.pix.width = cfg->width;
	f.fmt.pix.height = cfg->height;
	f.fmt.pix.field = V4L2_FIELD_NONE;
	r = v4l2cuse_uvc_ioctl(fd, VIDIOC_S_FMT, &f);
	if (r < 0)
		goto err;
	if (!v4l2cuse_convert_input_supported(f.fmt.pix.pixelformat) ||
	    (f.fmt.pix.field != V4L2_FIELD_NONE && f.fmt.pix.field != V4L2_FIELD_ANY)) {
		r = -EPROTO;	/* the camera changed and has nothing we read */
		goto err;
	}
	s->fmt = f.fmt.pix;
	parm.parm.capture.timeperframe = cfg->interval;
	v4l2cuse_uvc_ioctl(fd, VIDIOC_S_PARM, &parm);	/* best effort */

	r = v4l2cuse_uvc_ioctl(fd, VIDIOC_REQBUFS, &rb);
	if (r < 0)
		goto err;
	if (rb.count < 2) {
		r = -ENOMEM;
		goto err;
	}
	s->n_bufs = MIN(rb.count, (uint32_t)UVC_MAX_BUFS);
	for (unsigned int i = 0; i < s->n_bufs; i++) {
		struct v4l2_buffer b = {
			.type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP, .index = i,
		};

		r = v4l2cuse_uvc_ioctl(fd, VIDIOC_QUERYBUF, &b);
		if (r < 0)
			goto err;
		s->len[i] = b.length;
		s->mem[i] = v4l2_mmap(NULL, b.length, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
				      b.m.offset);
		if (s->mem[i] == MAP_FAILED) {
			r = -errno;
			goto err;
		}
		r = v4l2cuse_uvc_ioctl(fd, VIDIOC_QBUF, &b);
		if (r < 0)
			goto err;
	}
	r = v4l2cuse_uvc_ioctl(fd, VIDIOC_STREAMON, &type);
	if (r < 0)
		goto err;
	*ret = s;
	return 0;

err:
	v4l2cuse_uvc_stream_free(s);
	return r;
}

static gpointer
uvc_reconnect_thread(gpointer data)
{
	struct uvc_source *u = data;
	struct uvc_config cfg = u->cfg;	/* fixed while the thread runs */
	bool warned = false;

	for (;;) {
		int64_t until = g_get_monotonic_time() + (int64_t)u->retry_ms * 1000;
		struct uvc_stream *s = NULL;
		struct uvc_ident id;
		uint64_t one = 1;
		int fd, r;

		g_mutex_lock(&u->lock);
		while (!u->quit && g_cond_wait_until(&u->cond, &u->lock, until))
			;
		if (u->quit) {
			g_mutex_unlock(&u->lock);
			return NULL;
		}
		g_mutex_unlock(&u->lock);

		fd = v4l2cuse_uvc_open(u->path, &id, NULL);
		if (fd < 0)
			continue;
		if (strcmp(id.card, u->ident.card) != 0 ||
		    strcmp(id.bus_info, u->ident.bus_info) != 0) {
			if (!warned)
				g_message("uvc: '%s' is now '%s' (%s), not '%s' (%s): waiting",
					  u->path, id.card, id.bus_info, u->ident.card,
					  u->ident.bus_info);
			warned = true;
			v4l2_close(fd);
			continue;
		}
		v4l2cuse_uvc_apply_controls(u, fd);
		r = v4l2cuse_uvc_stream_start(fd, &cfg, &s);
		if (r < 0) {
			g_debug("uvc: '%s' is back but does not stream: %s", u->path,
				g_strerror(-r));
			v4l2_close(fd);
			continue;
		}
		g_mutex_lock(&u->lock);
		u->pending_fd = fd;
		u->pending = s;
		g_mutex_unlock(&u->lock);
		if (write(u->evfd, &one, sizeof(one)) < 0)
			g_debug("uvc: eventfd: %s", g_strerror(errno));
		return NULL;
	}
}

void
v4l2cuse_uvc_thread_stop(struct uvc_source *u)
{
	if (!u->thread)
		return;
	g_mutex_lock(&u->lock);
	u->quit = true;
	g_cond_signal(&u->cond);
	g_mutex_unlock(&u->lock);
	g_thread_join(u->thread);
	u->thread = NULL;
	u->quit = false;
	/* A stream handed over but never adopted. */
	if (u->pending) {
		v4l2cuse_uvc_stream_free(u->pending);
		v4l2_close(u->pending_fd);
		u->pending = NULL;
		u->pending_fd = -1;
	}
}

void
v4l2cuse_uvc_thread_start(struct uvc_source *u)
{
	if (u->thread)
		return;
	u->quit = false;
	u->thread = g_thread_new("v4l2cuse-uvc", uvc_reconnect_thread, u);
}

void
v4l2cuse_uvc_timer_arm(struct uvc_source *u, bool on)
{
	uint64_t ns = on ? (uint64_t)u->out_iv.numerator * 1000000000ull /
			   MAX(u->out_iv.denominator, 1u) : 0;
	struct itimerspec its = {
		.it_interval = { .tv_sec = (time_t)(ns / 1000000000ull),
				 .tv_nsec = (long)(ns % 1000000000ull) },
		.it_value = { .tv_sec = (time_t)(ns / 1000000000ull),
			      .tv_nsec = (long)(ns % 1000000000ull) },
	};

	timerfd_settime(u->timerfd, 0, &its, NULL);
}

/* The camera is gone: close it, pace the no-signal ticks, look for it. */
void
v4l2cuse_uvc_lose(struct uvc_source *u, int r)
{
	unsigned int suppressed = 0;

	if (v4l2cuse_ratelimit_pass(&u->rl_lost, &suppressed))
		g_warning("uvc: '%s' is gone (%s); no signal until it is back",
			  u->path, g_strerror(-r));
	if (u->stream) {
		epoll_ctl(u->epfd, EPOLL_CTL_DEL, u->stream->fd, NULL);
		v4l2cuse_uvc_stream_free(u->stream);
		u->stream = NULL;
	}
	if (u->fd >= 0) {
		v4l2_close(u->fd);
		u->fd = -1;
	}
	v4l2cuse_uvc_timer_arm(u, true);
	v4l2cuse_uvc_thread_start(u);
}

void
v4l2cuse_uvc_adopt(struct uvc_source *u, int fd, struct uvc_stream *s)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = 0 };

	u->fd = fd;
	u->stream = s;
	epoll_ctl(u->epfd, EPOLL_CTL_ADD, fd, &ev);
	v4l2cuse_uvc_timer_arm(u, false);
	g_message("uvc: '%s' is back (%.4s %ux%u)", u->path, (const char *)&s->fmt.pixelformat,
		  s->fmt.width, s->fmt.height);
}

bool
v4l2cuse_uvc_is_gone_error(int r)
{
	return r == -ENODEV || r == -EIO || r == -ENXIO || r == -EPIPE || r == -EBADF ||
	       r == -ESHUTDOWN;
}

/* The camera is gone: -ENOLINK on each tick of the timerfd, -EAGAIN between. */
int
v4l2cuse_uvc_no_signal(struct uvc_source *u)
{
	uint64_t n;

	return read(u->timerfd, &n, sizeof(n)) == sizeof(n) ? -ENOLINK : -EAGAIN;
}
