/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The "uvc" source: a real V4L2 camera passed through (driven through
 * libv4l2: v4l2_fd_open, v4l2_ioctl, v4l2_mmap), its formats converted to
 * every format of format.c.
 *
 * (The code is split along its seams: uvc-private.h lists the files.)
 *
 * Spec: uvc:/dev/videoN[,option=value...], e.g. "uvc:/dev/video0",
 * "uvc:/dev/v4l/by-id/usb-...-video-index0,retry_ms=500".
 *
 * Options:
 *   formats=F+F...    formats to offer (default: the camera's own ones
 *                     that format.c knows, in its order, then the others
 *                     of format.c, converted)
 *   buffers=N         camera buffers, 2..16 (default 4)
 *   retry_ms=N        how often to look for a lost camera (default 1000)
 *
 * What the device offers is a snapshot taken at create() (the camera must
 * be there then: a missing camera is a configuration error): for a format
 * the camera has, its sizes and intervals; for a converted format, every
 * size the camera has in a format convert.c reads, with the intervals of
 * the camera format that will feed it (a raw one if the camera has one at
 * that size, else MJPEG). Stepwise/continuous camera sizes and intervals
 * are offered as the common ones inside their range.
 *
 * Streaming: start() (first consumer streams or reads) sets the camera to
 * the chosen format and the nearest interval and starts it; stop() (the
 * last one stops) stops it. The camera is opened O_NONBLOCK and its fd,
 * together with a timerfd and an eventfd, sits in an epoll set that is the
 * source's wake fd: produce() dequeues without waiting, converts the frame
 * into the consumer's buffer (same format and size: a copy) and requeues
 * it. A frame that does not convert (a corrupt MJPEG) is dropped.
 *
 * Unplugged (DQBUF fails with ENODEV, EIO, ...): the camera is closed, the
 * timerfd wakes the daemon at the negotiated rate and produce() answers
 * -ENOLINK on every tick (no signal: the device shows its placeholder),
 * and a thread tries every retry_ms to open the same path again,
 * accepting only a device with the same identity (QUERYCAP card and
 * bus_info); it sets it up (format, interval, buffers, controls, STREAMON)
 * off the dispatcher and hands it over through the eventfd. Consumers never
 * see another format than the negotiated one: whatever the camera delivers
 * after a reconnect is converted.
 *
 * Controls: the camera's user-class controls of types INTEGER, BOOLEAN,
 * MENU, INTEGER64 and BUTTON that are neither read-only nor volatile are
 * snapshot at create() and offered, with the camera's current value as
 * their default (the daemon starts from the default); sets go to
 * the camera (and are applied again after a reconnect); while the camera is
 * gone they are only remembered. Other classes (camera class: exposure,
 * focus, ...) are not forwarded yet: the daemon adds only the user class
 * control, and v4l2-compliance wants one per class.
 */

#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <glib.h>
#include <libv4l2.h>

#include "util/macros.h"
#include "v4l2cuse/format.h"
#include "v4l2cuse/source.h"
#include "uvc-private.h"

static const char *const uvc_keys[] = {
	"formats", "buffers", "retry_ms", NULL,
};

int
v4l2cuse_uvc_ioctl(int fd, unsigned long req, void *arg)
{
	int r;

	do {
		r = v4l2_ioctl(fd, req, arg);
	} while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : r;
}

static void uvc_stop(struct v4l2cuse_source *src);

static void
uvc_destroy(struct v4l2cuse_source *src)
{
	struct uvc_source *u = uvc_from(src);

	if (!u)
		return;
	uvc_stop(src);
	if (u->fd >= 0)
		v4l2_close(u->fd);
	for (unsigned int i = 0; u->ctrls && i < u->n_ctrls; i++)
		v4l2cuse_uvc_ctrl_free(&u->ctrls[i]);
	g_free(u->ctrls);
	g_free(u->modes);
	if (u->epfd >= 0)
		close(u->epfd);
	if (u->timerfd >= 0)
		close(u->timerfd);
	if (u->evfd >= 0)
		close(u->evfd);
	v4l2cuse_convert_free(u->cv);
	g_mutex_clear(&u->lock);
	g_cond_clear(&u->cond);
	g_free(u->path);
	g_free(u);
}

static int
uvc_create(const char *args, struct v4l2cuse_source **ret_src, char **ret_error)
{
	struct uvc_source *u = g_new0(struct uvc_source, 1);
	struct epoll_event ev = { .events = EPOLLIN };
	struct v4l2cuse_opts *o = NULL;
	char *error = NULL;
	uint32_t n;
	int r;

	u->base.ops = &v4l2cuse_uvc_ops;
	u->fd = u->epfd = u->timerfd = u->evfd = u->pending_fd = -1;
	g_mutex_init(&u->lock);
	g_cond_init(&u->cond);
	u->cv = v4l2cuse_convert_new();
	r = v4l2cuse_opts_parse("uvc", args, uvc_keys, &o, &error);
	if (r < 0)
		goto err;
	if (!v4l2cuse_opts_arg(o) || !*v4l2cuse_opts_arg(o)) {
		error = g_strdup("uvc: no device given (uvc:/dev/videoN[,option=value...])");
		r = -EINVAL;
		goto err;
	}
	u->path = g_strdup(v4l2cuse_opts_arg(o));
	if ((r = v4l2cuse_opts_get_uint(o, "buffers", 4, 2, UVC_MAX_BUFS, &u->n_bufs,
					&error)) < 0 ||
	    (r = v4l2cuse_opts_get_uint(o, "retry_ms", 1000, 50, 600000, &n, &error)) < 0)
		goto err;
	u->retry_ms = n;

	r = v4l2cuse_uvc_open(u->path, &u->ident, &error);
	if (r < 0)
		goto err;
	u->fd = r;
	r = v4l2cuse_uvc_snapshot_formats(u, u->fd, &error);
	if (r < 0)
		goto err;
	r = v4l2cuse_uvc_parse_formats(u, o, &error);
	if (r < 0)
		goto err;
	v4l2cuse_uvc_snapshot_controls(u, u->fd);

	u->epfd = epoll_create1(EPOLL_CLOEXEC);
	u->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	u->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (u->epfd < 0 || u->timerfd < 0 || u->evfd < 0) {
		r = -errno;
		error = g_strdup_printf("uvc: %s", g_strerror(-r));
		goto err;
	}
	ev.data.u32 = 1;
	epoll_ctl(u->epfd, EPOLL_CTL_ADD, u->timerfd, &ev);
	ev.data.u32 = 2;
	epoll_ctl(u->epfd, EPOLL_CTL_ADD, u->evfd, &ev);

	g_debug("uvc: '%s' (%s, %s): %u modes, %u formats offered, %u controls", u->path,
		u->ident.card, u->ident.bus_info, u->n_modes, u->offered.n_formats, u->n_ctrls);
	v4l2cuse_opts_free(o);
	*ret_src = &u->base;
	return 0;

err:
	*ret_error = error;
	v4l2cuse_opts_free(o);
	uvc_destroy(&u->base);
	return r;
}

static void
uvc_stop(struct v4l2cuse_source *src)
{
	struct uvc_source *u = uvc_from(src);

	v4l2cuse_uvc_thread_stop(u);
	if (u->stream) {
		epoll_ctl(u->epfd, EPOLL_CTL_DEL, u->stream->fd, NULL);
		v4l2cuse_uvc_stream_free(u->stream);
		u->stream = NULL;
	}
	if (u->timerfd >= 0)
		v4l2cuse_uvc_timer_arm(u, false);
	u->started = false;
}

static int
uvc_start(struct v4l2cuse_source *src, const struct v4l2_pix_format *pix,
	  const struct v4l2_fract *interval)
{
	struct uvc_source *u = uvc_from(src);
	const struct uvc_mode *m;
	struct uvc_stream *s = NULL;
	uint64_t drain;
	int r;

	if (u->started)
		return -EBUSY;
	m = v4l2cuse_modes_has_format(&u->offered, pix->pixelformat)
		    ? v4l2cuse_uvc_feed(u, pix->pixelformat, pix->width, pix->height)
		    : NULL;
	if (!m)
		return -EINVAL;
	r = v4l2cuse_modes_stream(pix, interval, m->intervals[0], &u->pix, &u->out_iv);
	if (r < 0)
		return r;
	u->cfg = (struct uvc_config){
		.fourcc = m->fourcc, .width = m->width, .height = m->height,
		.interval = u->out_iv, .n_bufs = u->n_bufs,
	};
	while (read(u->evfd, &drain, sizeof(drain)) > 0)
		;
	if (u->fd < 0) {
		/* Gone since the last stream: one quick look before "no signal". */
		struct uvc_ident id;
		int fd = v4l2cuse_uvc_open(u->path, &id, NULL);

		if (fd >= 0 && strcmp(id.card, u->ident.card) == 0 &&
		    strcmp(id.bus_info, u->ident.bus_info) == 0) {
			u->fd = fd;
			v4l2cuse_uvc_apply_controls(u, fd);
		} else if (fd >= 0) {
			v4l2_close(fd);
		}
	}
	u->started = true;
	if (u->fd >= 0) {
		r = v4l2cuse_uvc_stream_start(u->fd, &u->cfg, &s);
		if (r == -EBUSY) {
			u->started = false;
			return r;	/* another application streams from the camera */
		}
		if (r == 0) {
			struct epoll_event ev = { .events = EPOLLIN, .data.u32 = 0 };

			u->stream = s;
			epoll_ctl(u->epfd, EPOLL_CTL_ADD, u->fd, &ev);
			return 0;
		}
		g_debug("uvc: '%s': cannot stream: %s", u->path, g_strerror(-r));
	}
	v4l2cuse_uvc_lose(u, r < 0 ? r : -ENODEV);
	return 0;
}

static int
uvc_produce(struct v4l2cuse_source *src, struct v4l2cuse_frame *frame)
{
	struct uvc_source *u = uvc_from(src);
	struct v4l2_buffer b = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP };
	unsigned int suppressed = 0;
	struct v4l2cuse_image img;
	uint64_t drain;
	int r, q;

	if (!u->started)
		return -EINVAL;
	if (!frame->data || frame->length < u->pix.sizeimage)
		return -EINVAL;
	if (read(u->evfd, &drain, sizeof(drain)) > 0 || (!u->stream && u->thread)) {
		struct uvc_stream *s;
		int fd;

		g_mutex_lock(&u->lock);
		s = u->pending;
		fd = u->pending_fd;
		u->pending = NULL;
		u->pending_fd = -1;
		g_mutex_unlock(&u->lock);
		if (s) {
			v4l2cuse_uvc_thread_stop(u);
			v4l2cuse_uvc_adopt(u, fd, s);
		}
	}
	if (!u->stream)
		return v4l2cuse_uvc_no_signal(u);

	r = v4l2cuse_uvc_ioctl(u->stream->fd, VIDIOC_DQBUF, &b);
	if (r == -EAGAIN)
		return -EAGAIN;
	if (r < 0 || b.index >= u->stream->n_bufs) {
		if (r < 0 && !v4l2cuse_uvc_is_gone_error(r)) {
			if (v4l2cuse_ratelimit_pass(&u->rl_drop, &suppressed))
				g_debug("uvc: DQBUF: %s", g_strerror(-r));
			return -ENODATA;
		}
		v4l2cuse_uvc_lose(u, r < 0 ? r : -EIO);
		return -ENOLINK;
	}
	img = (struct v4l2cuse_image){
		.fourcc = u->stream->fmt.pixelformat,
		.width = u->stream->fmt.width, .height = u->stream->fmt.height,
		.bytesperline = u->stream->fmt.bytesperline,
		.data = u->stream->mem[b.index],
		.size = MIN(b.bytesused ? b.bytesused : u->stream->len[b.index],
			    u->stream->len[b.index]),
	};
	if (!v4l2cuse_format_lookup(img.fourcc)->compressed)	/* a format we read */
		img.size = u->stream->len[b.index];
	r = v4l2cuse_convert_frame(u->cv, &img, &u->pix, frame->data, frame->length,
				   &frame->bytesused);
	q = v4l2cuse_uvc_ioctl(u->stream->fd, VIDIOC_QBUF, &b);
	if (q < 0 && v4l2cuse_uvc_is_gone_error(q)) {
		v4l2cuse_uvc_lose(u, q);
		return -ENOLINK;
	}
	if (r < 0) {
		if (v4l2cuse_ratelimit_pass(&u->rl_drop, &suppressed))
			g_debug("uvc: dropped a frame that does not convert (%s; %u more)",
				g_strerror(-r), suppressed);
		return -ENODATA;
	}
	frame->error = (b.flags & V4L2_BUF_FLAG_ERROR) != 0;
	return 0;
}

static int
uvc_wake_fd(struct v4l2cuse_source *src)
{
	return uvc_from(src)->epfd;
}

const struct v4l2cuse_source_ops v4l2cuse_uvc_ops = {
	.abi = V4L2CUSE_SOURCE_ABI,
	.name = "uvc",
	.flags = V4L2CUSE_SOURCE_INPUT,
	.create = uvc_create,
	.destroy = uvc_destroy,
	.enum_format = v4l2cuse_uvc_enum_format,
	.enum_framesize = v4l2cuse_uvc_enum_framesize,
	.enum_frameinterval = v4l2cuse_uvc_enum_frameinterval,
	.negotiate = NULL,
	.start = uvc_start,
	.stop = uvc_stop,
	.produce = uvc_produce,
	.wake_fd = uvc_wake_fd,
	.control = v4l2cuse_uvc_control,
	.get_control = v4l2cuse_uvc_get_control,
	.set_control = v4l2cuse_uvc_set_control,
};
