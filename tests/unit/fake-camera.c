/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The fake camera (fake-camera.h): answers like a UVC driver under
 * v4l2-core would, so far as the uvc source asks: sizes it does not have
 * snap to the nearest one, any pixel format is answered with YUYV, the
 * field is always NONE, the format carries the extended fields (priv is
 * V4L2_PIX_FMT_PRIV_MAGIC, as v4l2-core sets it), DQBUF without a queued
 * buffer is EAGAIN (the fd is non-blocking), buffer memory is the fake's.
 *
 * The uvc source opens the camera from its own thread: the open count, the
 * fd and the switches a test flips (unplugged, open held) are atomic or
 * under a lock; the rest is touched by one thread at a time (the source's
 * thread hands the camera over before the test's thread streams it).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <glib.h>
#include <linux/videodev2.h>

#include "fake-camera.h"
#include "uvc-private.h"

#define FAKE_MAX_BUFS	4
#define FAKE_OFFSET(i)	((int64_t)(i) << 16)	/* QUERYBUF's m.offset of buffer i */

static const struct fake_camera *cam;
static int cam_fd = -1;			/* atomic */
static int cam_opens, cam_closes;	/* atomic */
static int cam_gone;			/* atomic: unplugged */
static int cam_busy;			/* atomic: another application streams */
static GMutex cam_lock;
static GCond cam_cond;
static bool cam_held;			/* cam_lock: open() waits */
static bool cam_held_setup;		/* cam_lock: S_FMT waits */
static unsigned int cam_parked;		/* cam_lock: calls waiting at one of those */

/* Wait while *@held (at most 5 s: a test that fails must not hang). */
static void
fake_gate(const bool *held)
{
	gint64 end = g_get_monotonic_time() + 5 * G_USEC_PER_SEC;

	g_mutex_lock(&cam_lock);
	cam_parked++;
	g_cond_broadcast(&cam_cond);
	while (*held && g_cond_wait_until(&cam_cond, &cam_lock, end))
		;
	cam_parked--;
	g_mutex_unlock(&cam_lock);
}
static unsigned int cam_mode;		/* the current size: an index into cam->modes */
static bool cam_streaming;
static uint32_t cam_sequence;
static struct {
	uint8_t *mem;
	size_t len;
	bool queued;
} cam_bufs[FAKE_MAX_BUFS];
static unsigned int cam_n_bufs;
static unsigned int cam_fifo[FAKE_MAX_BUFS];	/* queued buffers, oldest first */
static unsigned int cam_n_queued;

static int
fake_open(const char *path)
{
	int fd;

	/* Held: as a camera that takes its time to resume. */
	fake_gate(&cam_held);
	if (g_atomic_int_get(&cam_gone))
		return -ENOENT;
	g_assert_cmpint(g_atomic_int_get(&cam_fd), <, 0);	/* one open at a time */
	fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	g_atomic_int_inc(&cam_opens);
	g_atomic_int_set(&cam_fd, fd);
	return fd;
}

static int
fake_attach(int fd)
{
	return 0;
}

static void
fake_free_bufs(void)
{
	for (unsigned int i = 0; i < cam_n_bufs; i++)
		g_clear_pointer(&cam_bufs[i].mem, g_free);
	memset(cam_bufs, 0, sizeof(cam_bufs));
	cam_n_bufs = cam_n_queued = 0;
}

static void
fake_close(int fd)
{
	g_assert_cmpint(fd, ==, cam_fd);
	/* Closing the fd frees a driver's buffers and stops its stream. */
	fake_free_bufs();
	cam_streaming = false;
	close(fd);
	g_atomic_int_inc(&cam_closes);
	g_atomic_int_set(&cam_fd, -1);
}

/* The mode nearest to @w x @h (|dw| + |dh|; ties: the earlier one). */
static unsigned int
fake_nearest(uint32_t w, uint32_t h)
{
	unsigned int best = 0;
	uint64_t best_d = UINT64_MAX;

	for (unsigned int i = 0; i < cam->n_modes; i++) {
		uint64_t d = (uint64_t)labs((long)cam->modes[i].width - (long)w) +
			     (uint64_t)labs((long)cam->modes[i].height - (long)h);

		if (d < best_d) {
			best_d = d;
			best = i;
		}
	}
	return best;
}

static void
fake_fill_fmt(struct v4l2_format *f, unsigned int mode)
{
	const struct fake_camera_mode *m = &cam->modes[mode];

	f->fmt.pix = (struct v4l2_pix_format){
		.width = m->width, .height = m->height, .pixelformat = V4L2_PIX_FMT_YUYV,
		.field = V4L2_FIELD_NONE, .bytesperline = m->width * 2,
		.sizeimage = m->width * m->height * 2, .colorspace = m->colorspace,
		.priv = V4L2_PIX_FMT_PRIV_MAGIC, .ycbcr_enc = m->ycbcr_enc,
		.quantization = m->quantization, .xfer_func = m->xfer_func,
	};
}

static int
fake_fmt(unsigned long req, struct v4l2_format *f)
{
	unsigned int mode;

	if (f->type != V4L2_BUF_TYPE_VIDEO_CAPTURE)
		return -EINVAL;
	if (req == VIDIOC_G_FMT) {
		fake_fill_fmt(f, cam_mode);
		return 0;
	}
	mode = fake_nearest(f->fmt.pix.width, f->fmt.pix.height);
	if (req == VIDIOC_S_FMT) {
		fake_gate(&cam_held_setup);
		if (g_atomic_int_get(&cam_busy))
			return -EBUSY;
		/* vb2: no format change while buffers are allocated. */
		if (cam_n_bufs && mode != cam_mode)
			return -EBUSY;
		cam_mode = mode;
	}
	fake_fill_fmt(f, mode);
	return 0;
}

static int
fake_reqbufs(struct v4l2_requestbuffers *rb)
{
	size_t size = (size_t)cam->modes[cam_mode].width * cam->modes[cam_mode].height * 2;

	if (rb->type != V4L2_BUF_TYPE_VIDEO_CAPTURE || rb->memory != V4L2_MEMORY_MMAP)
		return -EINVAL;
	if (cam_streaming)
		return -EBUSY;
	fake_free_bufs();
	if (rb->count == 0)
		return 0;
	cam_n_bufs = CLAMP(rb->count, 2u, (unsigned int)FAKE_MAX_BUFS);
	for (unsigned int i = 0; i < cam_n_bufs; i++) {
		cam_bufs[i].mem = g_malloc0(size);
		cam_bufs[i].len = size;
	}
	rb->count = cam_n_bufs;
	return 0;
}

static int
fake_buf_check(const struct v4l2_buffer *b)
{
	if (b->type != V4L2_BUF_TYPE_VIDEO_CAPTURE || b->memory != V4L2_MEMORY_MMAP ||
	    b->index >= cam_n_bufs)
		return -EINVAL;
	return 0;
}

/* The oldest queued buffer, filled with the camera's colour. */
static int
fake_dqbuf(struct v4l2_buffer *b)
{
	unsigned int i;
	uint8_t *p;

	if (b->type != V4L2_BUF_TYPE_VIDEO_CAPTURE || b->memory != V4L2_MEMORY_MMAP)
		return -EINVAL;
	if (!cam_streaming)
		return -EINVAL;
	if (!cam_n_queued)
		return -EAGAIN;
	i = cam_fifo[0];
	memmove(cam_fifo, cam_fifo + 1, --cam_n_queued * sizeof(cam_fifo[0]));
	cam_bufs[i].queued = false;
	p = cam_bufs[i].mem;
	for (size_t o = 0; o + 4 <= cam_bufs[i].len; o += 4) {
		p[o] = cam->y;
		p[o + 1] = cam->cb;
		p[o + 2] = cam->y;
		p[o + 3] = cam->cr;
	}
	*b = (struct v4l2_buffer){
		.index = i, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP,
		.bytesused = (uint32_t)cam_bufs[i].len, .length = (uint32_t)cam_bufs[i].len,
		.field = V4L2_FIELD_NONE, .sequence = cam_sequence++,
		.flags = V4L2_BUF_FLAG_MAPPED | V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC,
		.m.offset = (uint32_t)FAKE_OFFSET(i),
	};
	return 0;
}

static int
fake_ioctl(int fd, unsigned long req, void *arg)
{
	g_assert_cmpint(fd, ==, cam_fd);
	if (g_atomic_int_get(&cam_gone))
		return -ENODEV;		/* unplugged: QUERYCAP too */
	switch (req) {
	case VIDIOC_QUERYCAP: {
		struct v4l2_capability *c = arg;

		memset(c, 0, sizeof(*c));
		strcpy((char *)c->card, "fake camera");
		strcpy((char *)c->bus_info, "fake:0");
		c->capabilities = V4L2_CAP_VIDEO_CAPTURE | V4L2_CAP_STREAMING;
		return 0;
	}
	case VIDIOC_ENUM_FMT: {
		struct v4l2_fmtdesc *d = arg;

		if (d->type != V4L2_BUF_TYPE_VIDEO_CAPTURE || d->index > 0)
			return -EINVAL;
		d->pixelformat = V4L2_PIX_FMT_YUYV;
		d->flags = 0;
		return 0;
	}
	case VIDIOC_ENUM_FRAMESIZES: {
		struct v4l2_frmsizeenum *s = arg;

		if (s->pixel_format != V4L2_PIX_FMT_YUYV || s->index >= cam->n_modes)
			return -EINVAL;
		s->type = V4L2_FRMSIZE_TYPE_DISCRETE;
		s->discrete.width = cam->modes[s->index].width;
		s->discrete.height = cam->modes[s->index].height;
		return 0;
	}
	case VIDIOC_ENUM_FRAMEINTERVALS: {
		struct v4l2_frmivalenum *i = arg;
		unsigned int m = fake_nearest(i->width, i->height);

		if (i->pixel_format != V4L2_PIX_FMT_YUYV || i->index > 0 ||
		    cam->modes[m].width != i->width || cam->modes[m].height != i->height)
			return -EINVAL;
		i->type = V4L2_FRMIVAL_TYPE_DISCRETE;
		i->discrete = (struct v4l2_fract){ 1, 30 };
		return 0;
	}
	case VIDIOC_G_FMT:
	case VIDIOC_TRY_FMT:
	case VIDIOC_S_FMT:
		return fake_fmt(req, arg);
	case VIDIOC_G_PARM:
	case VIDIOC_S_PARM: {
		struct v4l2_streamparm *p = arg;

		if (p->type != V4L2_BUF_TYPE_VIDEO_CAPTURE)
			return -EINVAL;
		p->parm.capture.capability = V4L2_CAP_TIMEPERFRAME;
		p->parm.capture.timeperframe = (struct v4l2_fract){ 1, 30 };
		return 0;
	}
	case VIDIOC_REQBUFS:
		return fake_reqbufs(arg);
	case VIDIOC_QUERYBUF: {
		struct v4l2_buffer *b = arg;
		int r = fake_buf_check(b);

		if (r < 0)
			return r;
		b->length = (uint32_t)cam_bufs[b->index].len;
		b->m.offset = (uint32_t)FAKE_OFFSET(b->index);
		return 0;
	}
	case VIDIOC_QBUF: {
		struct v4l2_buffer *b = arg;
		int r = fake_buf_check(b);

		if (r < 0)
			return r;
		if (cam_bufs[b->index].queued)
			return -EINVAL;
		cam_bufs[b->index].queued = true;
		cam_fifo[cam_n_queued++] = b->index;
		return 0;
	}
	case VIDIOC_DQBUF:
		return fake_dqbuf(arg);
	case VIDIOC_STREAMON:
	case VIDIOC_STREAMOFF:
		if (*(int *)arg != V4L2_BUF_TYPE_VIDEO_CAPTURE)
			return -EINVAL;
		if (req == VIDIOC_STREAMON && !cam_n_bufs)
			return -EINVAL;
		cam_streaming = req == VIDIOC_STREAMON;
		if (!cam_streaming) {
			/* STREAMOFF takes every buffer back. */
			for (unsigned int i = 0; i < cam_n_bufs; i++)
				cam_bufs[i].queued = false;
			cam_n_queued = 0;
		}
		return 0;
	default:
		return cam->ioctl ? cam->ioctl(fd, req, arg) : -ENOTTY;
	}
}

static void *
fake_mmap(int fd, size_t length, int64_t offset)
{
	g_assert_cmpint(fd, ==, cam_fd);
	for (unsigned int i = 0; i < cam_n_bufs; i++) {
		if (FAKE_OFFSET(i) == offset && length == cam_bufs[i].len)
			return cam_bufs[i].mem;
	}
	errno = EINVAL;
	return NULL;
}

static void
fake_munmap(void *addr, size_t length)
{
	/* The memory is the fake's until REQBUFS(0) or close. */
}

static int
fake_event_fd(int fd, uint32_t *ret_events)
{
	*ret_events = EPOLLIN;
	return fd;
}

static const struct uvc_backend fake_backend = {
	.open = fake_open,
	.attach = fake_attach,
	.close = fake_close,
	.ioctl = fake_ioctl,
	.mmap = fake_mmap,
	.munmap = fake_munmap,
	.event_fd = fake_event_fd,
};

void
fake_camera_install(const struct fake_camera *c)
{
	g_assert_cmpuint(c->n_modes, >, 0);
	cam = c;
	cam_mode = 0;
	cam_sequence = 0;
	g_atomic_int_set(&cam_opens, 0);
	g_atomic_int_set(&cam_closes, 0);
	g_atomic_int_set(&cam_gone, 0);
	g_atomic_int_set(&cam_busy, 0);
	fake_camera_hold_open(false);
	fake_camera_hold_setup(false);
	v4l2cuse_uvc_set_backend(&fake_backend);
}

void
fake_camera_remove(void)
{
	g_assert_cmpint(cam_fd, <, 0);	/* the source closed it */
	v4l2cuse_uvc_set_backend(NULL);
	cam = NULL;
}

int
fake_camera_fd(void)
{
	return g_atomic_int_get(&cam_fd);
}

unsigned int
fake_camera_opens(void)
{
	return (unsigned int)g_atomic_int_get(&cam_opens);
}

unsigned int
fake_camera_closes(void)
{
	return (unsigned int)g_atomic_int_get(&cam_closes);
}

void
fake_camera_unplug(bool gone)
{
	g_atomic_int_set(&cam_gone, gone);
}

void
fake_camera_busy(bool busy)
{
	g_atomic_int_set(&cam_busy, busy);
}

void
fake_camera_hold_open(bool hold)
{
	g_mutex_lock(&cam_lock);
	cam_held = hold;
	g_cond_broadcast(&cam_cond);
	g_mutex_unlock(&cam_lock);
}

void
fake_camera_hold_setup(bool hold)
{
	g_mutex_lock(&cam_lock);
	cam_held_setup = hold;
	g_cond_broadcast(&cam_cond);
	g_mutex_unlock(&cam_lock);
}

bool
fake_camera_wait_parked(void)
{
	gint64 end = g_get_monotonic_time() + 5 * G_USEC_PER_SEC;
	bool parked;

	g_mutex_lock(&cam_lock);
	while (!cam_parked && g_cond_wait_until(&cam_cond, &cam_lock, end))
		;
	parked = cam_parked > 0;
	g_mutex_unlock(&cam_lock);
	return parked;
}

void
fake_camera_current(uint32_t *ret_width, uint32_t *ret_height)
{
	*ret_width = cam->modes[cam_mode].width;
	*ret_height = cam->modes[cam_mode].height;
}
