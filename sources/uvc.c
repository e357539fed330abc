/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The "uvc" source: a real V4L2 camera passed through (driven through
 * libv4l2: v4l2_fd_open, v4l2_ioctl, v4l2_mmap), its formats converted to
 * every format of format.c.
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
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <glib.h>
#include <libv4l2.h>

#include "util/macros.h"
#include "v4l2cuse/format.h"
#include "v4l2cuse/source.h"
#include "convert.h"
#include "modes.h"
#include "ratelimit.h"

#define UVC_MAX_MODES		512
#define UVC_MAX_INTERVALS	16
#define UVC_MAX_SIZES		32
#define UVC_MAX_CTRLS		64
#define UVC_MAX_MENU		64
#define UVC_MAX_BUFS		16

static const char *const uvc_keys[] = {
	"formats", "buffers", "retry_ms", NULL,
};


/* One camera format at one size. */
struct uvc_mode {
	uint32_t fourcc, width, height;
	struct v4l2_fract intervals[UVC_MAX_INTERVALS];
	unsigned int n_intervals;
};

struct uvc_ident {
	char card[32];
	char bus_info[32];
};

/* What a stream is asked for. */
struct uvc_config {
	uint32_t fourcc, width, height;
	struct v4l2_fract interval;
	unsigned int n_bufs;
};

/* A started camera stream on an open fd. */
struct uvc_stream {
	int fd;
	struct v4l2_pix_format fmt;	/* what the camera delivers */
	unsigned int n_bufs;
	void *mem[UVC_MAX_BUFS];
	size_t len[UVC_MAX_BUFS];
};

struct uvc_ctrl {
	struct v4l2cuse_control desc;
	char name[32];
	char *menu_store[UVC_MAX_MENU + 1];
};

struct uvc_source {
	struct v4l2cuse_source base;
	char *path;
	struct uvc_ident ident;
	int fd;				/* the camera, -1 while it is gone */
	unsigned int n_bufs;
	unsigned int retry_ms;
	struct cv *cv;

	/* The snapshot. */
	struct uvc_mode *modes;
	unsigned int n_modes;
	struct modes offered;		/* its formats only: sizes and rates are the modes' */
	struct uvc_ctrl *ctrls;
	unsigned int n_ctrls;

	/* Streaming (dispatcher thread). */
	bool started;
	struct v4l2_pix_format pix;
	struct v4l2_fract out_iv;
	struct uvc_config cfg;
	struct uvc_stream *stream;	/* NULL while the camera is gone */
	int epfd, timerfd, evfd;
	struct ratelimit rl_drop, rl_lost;

	/* The reconnect thread; lock protects quit, pending and values. */
	GThread *thread;
	GMutex lock;
	GCond cond;
	bool quit;
	int pending_fd;
	struct uvc_stream *pending;
	int64_t values[UVC_MAX_CTRLS];
};

static struct uvc_source *
uvc_from(struct v4l2cuse_source *src)
{
	return (struct uvc_source *)src;
}

static int
uvc_ioctl(int fd, unsigned long req, void *arg)
{
	int r;

	do {
		r = v4l2_ioctl(fd, req, arg);
	} while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : r;
}

/* --- opening and identity ----------------------------------------------- */

static int
uvc_open(const char *path, struct uvc_ident *ret_ident, char **ret_error)
{
	struct v4l2_capability cap = { 0 };
	uint32_t caps;
	int fd, r;

	/*
	 * Plain open and QUERYCAP first: libv4l2 complains on stderr about
	 * anything that is not a V4L2 device. Then libv4l2 takes the fd over
	 * (v4l2_fd_open(), what v4l2_open() does after its open()).
	 */
	fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		if (ret_error)
			*ret_error = g_strdup_printf("uvc: '%s': %s", path, g_strerror(-r));
		return r;
	}
	do {
		r = ioctl(fd, VIDIOC_QUERYCAP, &cap) < 0 ? -errno : 0;
	} while (r == -EINTR);
	caps = cap.capabilities & V4L2_CAP_DEVICE_CAPS ? cap.device_caps : cap.capabilities;
	if (r == -ENOTTY || r == -EINVAL ||
	    (r == 0 && (!(caps & V4L2_CAP_VIDEO_CAPTURE) || !(caps & V4L2_CAP_STREAMING))))
		r = -ENOTTY;
	if (r == 0 && v4l2_fd_open(fd, 0) < 0)
		r = -errno ? -errno : -EIO;
	if (r < 0) {
		if (ret_error)
			*ret_error = g_strdup_printf("uvc: '%s': %s", path, r == -ENOTTY ?
						     "not a V4L2 capture device with streaming I/O" :
						     g_strerror(-r));
		close(fd);
		return r;
	}
	memset(ret_ident, 0, sizeof(*ret_ident));
	memcpy(ret_ident->card, cap.card, sizeof(ret_ident->card) - 1);
	memcpy(ret_ident->bus_info, cap.bus_info, sizeof(ret_ident->bus_info) - 1);
	return fd;
}

/* --- the snapshot ------------------------------------------------------- */

/* Rates above the project's limit (V4L2CUSE_MAX_FPS) are not offered. */
static void
uvc_add_interval(struct uvc_mode *m, struct v4l2_fract iv)
{
	if (!v4l2cuse_interval_valid(iv) || m->n_intervals >= UVC_MAX_INTERVALS)
		return;
	for (unsigned int i = 0; i < m->n_intervals; i++) {
		if ((uint64_t)m->intervals[i].numerator * iv.denominator ==
		    (uint64_t)iv.numerator * m->intervals[i].denominator)
			return;
	}
	m->intervals[m->n_intervals++] = iv;
}

static void
uvc_enum_intervals(int fd, struct uvc_mode *m)
{
	static const struct v4l2_fract common[] = {
		{ 1, 60 }, { 1, 50 }, { 1, 30 }, { 1, 25 }, { 1, 15 }, { 1, 10 }, { 1, 5 },
	};
	struct v4l2_frmivalenum fi = {
		.pixel_format = m->fourcc, .width = m->width, .height = m->height,
	};

	for (fi.index = 0; fi.index < 64 && uvc_ioctl(fd, VIDIOC_ENUM_FRAMEINTERVALS, &fi) == 0;
	     fi.index++) {
		if (fi.type == V4L2_FRMIVAL_TYPE_DISCRETE) {
			uvc_add_interval(m, fi.discrete);
			continue;
		}
		/* Stepwise/continuous: the common rates inside the range. */
		for (size_t i = 0; i < G_N_ELEMENTS(common); i++) {
			const struct v4l2_fract *lo = &fi.stepwise.min, *hi = &fi.stepwise.max;
			const struct v4l2_fract *c = &common[i];

			if ((uint64_t)c->numerator * lo->denominator >=
			    (uint64_t)lo->numerator * c->denominator &&
			    (uint64_t)c->numerator * hi->denominator <=
			    (uint64_t)hi->numerator * c->denominator)
				uvc_add_interval(m, *c);
		}
		break;
	}
	if (!m->n_intervals) {
		struct v4l2_streamparm parm = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };

		if (uvc_ioctl(fd, VIDIOC_G_PARM, &parm) == 0)
			uvc_add_interval(m, parm.parm.capture.timeperframe);
		uvc_add_interval(m, (struct v4l2_fract){ 1, 30 });
	}
}

static void
uvc_add_mode(struct uvc_source *u, int fd, uint32_t fourcc, uint32_t w, uint32_t h)
{
	struct uvc_mode *m;

	if (u->n_modes >= UVC_MAX_MODES || w < 2 || h < 2 || (w & 1) || (h & 1) ||
	    w > V4L2CUSE_MAX_WIDTH || h > V4L2CUSE_MAX_HEIGHT)
		return;
	for (unsigned int i = 0; i < u->n_modes; i++) {
		if (u->modes[i].fourcc == fourcc && u->modes[i].width == w &&
		    u->modes[i].height == h)
			return;
	}
	m = &u->modes[u->n_modes++];
	*m = (struct uvc_mode){ .fourcc = fourcc, .width = w, .height = h };
	uvc_enum_intervals(fd, m);
}

static void
uvc_enum_sizes(struct uvc_source *u, int fd, uint32_t fourcc)
{
	static const struct {
		uint32_t w, h;
	} common[] = {
		{ 160, 120 }, { 320, 240 }, { 640, 480 }, { 800, 600 }, { 1024, 768 },
		{ 1280, 720 }, { 1280, 960 }, { 1920, 1080 }, { 2560, 1440 }, { 3840, 2160 },
	};
	struct v4l2_frmsizeenum fs = { .pixel_format = fourcc };

	for (fs.index = 0; fs.index < 64 && uvc_ioctl(fd, VIDIOC_ENUM_FRAMESIZES, &fs) == 0;
	     fs.index++) {
		if (fs.type == V4L2_FRMSIZE_TYPE_DISCRETE) {
			uvc_add_mode(u, fd, fourcc, fs.discrete.width, fs.discrete.height);
			continue;
		}
		for (size_t i = 0; i < G_N_ELEMENTS(common); i++) {
			const struct v4l2_frmsize_stepwise *s = &fs.stepwise;
			uint32_t sw = MAX(s->step_width, 1u), sh = MAX(s->step_height, 1u);

			if (common[i].w >= s->min_width && common[i].w <= s->max_width &&
			    common[i].h >= s->min_height && common[i].h <= s->max_height &&
			    (common[i].w - s->min_width) % sw == 0 &&
			    (common[i].h - s->min_height) % sh == 0)
				uvc_add_mode(u, fd, fourcc, common[i].w, common[i].h);
		}
		uvc_add_mode(u, fd, fourcc, fs.stepwise.max_width & ~1u,
			     fs.stepwise.max_height & ~1u);
		break;
	}
	if (fs.index == 0) {
		/* No ENUM_FRAMESIZES: the current size. */
		struct v4l2_format f = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };

		if (uvc_ioctl(fd, VIDIOC_G_FMT, &f) == 0)
			uvc_add_mode(u, fd, fourcc, f.fmt.pix.width, f.fmt.pix.height);
	}
}

static int
uvc_snapshot_formats(struct uvc_source *u, int fd, char **ret_error)
{
	struct v4l2_fmtdesc fd_desc = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	GString *skipped = g_string_new(NULL);

	u->modes = g_new0(struct uvc_mode, UVC_MAX_MODES);
	for (fd_desc.index = 0; fd_desc.index < 128 &&
	     uvc_ioctl(fd, VIDIOC_ENUM_FMT, &fd_desc) == 0; fd_desc.index++) {
		if (fd_desc.flags & V4L2_FMT_FLAG_EMULATED)
			continue;	/* libv4l2's own conversions: we do ours */
		if (!cv_input_supported(fd_desc.pixelformat)) {
			g_string_append_printf(skipped, "%s%.4s", skipped->len ? " " : "",
					       (const char *)&fd_desc.pixelformat);
			continue;
		}
		uvc_enum_sizes(u, fd, fd_desc.pixelformat);
	}
	if (!u->n_modes) {
		*ret_error = g_strdup_printf("uvc: '%s' offers no format we can read%s%s%s",
					     u->path, skipped->len ? " (only " : "", skipped->str,
					     skipped->len ? ")" : "");
		g_string_free(skipped, TRUE);
		return -EINVAL;
	}
	if (skipped->len)
		g_debug("uvc: '%s': formats not used: %s", u->path, skipped->str);
	g_string_free(skipped, TRUE);
	return 0;
}

static int
uvc_parse_formats(struct uvc_source *u, const struct v4l2cuse_opts *o, char **ret_error)
{
	const char *v = v4l2cuse_opts_get_str(o, "formats", NULL);

	if (v)
		return modes_parse_formats(&u->offered, o, v, ret_error);
	/* The camera's own formats first (its order), then the converted ones. */
	for (unsigned int i = 0; i < u->n_modes; i++) {
		if (v4l2cuse_format_info(u->modes[i].fourcc))
			modes_add_format(&u->offered, u->modes[i].fourcc);
	}
	modes_add_output_formats(&u->offered);
	return 0;
}

static void
uvc_ctrl_free(struct uvc_ctrl *c)
{
	for (unsigned int i = 0; i <= UVC_MAX_MENU; i++)
		g_free(c->menu_store[i]);
}

static int
uvc_get_value(int fd, const struct v4l2cuse_control *d, int64_t *ret)
{
	struct v4l2_ext_control c = { .id = d->id };
	struct v4l2_ext_controls cs = {
		.which = V4L2_CTRL_WHICH_CUR_VAL, .count = 1, .controls = &c,
	};
	int r = uvc_ioctl(fd, VIDIOC_G_EXT_CTRLS, &cs);

	if (r < 0)
		return r;
	*ret = d->type == V4L2_CTRL_TYPE_INTEGER64 ? c.value64 : c.value;
	return 0;
}

static int
uvc_set_value(int fd, const struct v4l2cuse_control *d, int64_t v)
{
	struct v4l2_ext_control c = { .id = d->id };
	struct v4l2_ext_controls cs = {
		.which = V4L2_CTRL_WHICH_CUR_VAL, .count = 1, .controls = &c,
	};

	if (d->type == V4L2_CTRL_TYPE_INTEGER64)
		c.value64 = v;
	else
		c.value = (int32_t)v;
	return uvc_ioctl(fd, VIDIOC_S_EXT_CTRLS, &cs);
}

static void
uvc_snapshot_controls(struct uvc_source *u, int fd)
{
	struct v4l2_query_ext_ctrl q = { .id = V4L2_CTRL_FLAG_NEXT_CTRL };

	u->ctrls = g_new0(struct uvc_ctrl, UVC_MAX_CTRLS);
	while (u->n_ctrls < UVC_MAX_CTRLS && uvc_ioctl(fd, VIDIOC_QUERY_EXT_CTRL, &q) == 0) {
		struct uvc_ctrl *c = &u->ctrls[u->n_ctrls];
		uint32_t id = q.id;
		bool ok;

		ok = V4L2_CTRL_ID2WHICH(q.id) == V4L2_CTRL_CLASS_USER && q.nr_of_dims == 0 &&
		     !(q.flags & (V4L2_CTRL_FLAG_DISABLED | V4L2_CTRL_FLAG_READ_ONLY |
				  V4L2_CTRL_FLAG_VOLATILE)) &&
		     (q.type == V4L2_CTRL_TYPE_INTEGER || q.type == V4L2_CTRL_TYPE_BOOLEAN ||
		      q.type == V4L2_CTRL_TYPE_MENU || q.type == V4L2_CTRL_TYPE_INTEGER64 ||
		      q.type == V4L2_CTRL_TYPE_BUTTON) &&
		     q.minimum <= q.maximum &&
		     (q.type != V4L2_CTRL_TYPE_MENU ||
		      (q.minimum >= 0 && q.maximum <= UVC_MAX_MENU));
		if (ok) {
			memcpy(c->name, q.name, sizeof(c->name) - 1);
			c->desc = (struct v4l2cuse_control){
				.id = q.id, .type = q.type, .name = c->name,
				.minimum = q.minimum, .maximum = q.maximum, .step = q.step,
				.default_value = q.default_value,
				.flags = q.flags & (V4L2_CTRL_FLAG_SLIDER | V4L2_CTRL_FLAG_WRITE_ONLY |
						    V4L2_CTRL_FLAG_EXECUTE_ON_WRITE),
			};
			if (q.type == V4L2_CTRL_TYPE_MENU) {
				for (int64_t i = q.minimum; i <= q.maximum; i++) {
					struct v4l2_querymenu m = { .id = q.id, .index = (uint32_t)i };

					if (uvc_ioctl(fd, VIDIOC_QUERYMENU, &m) == 0)
						c->menu_store[i] = g_strndup((const char *)m.name,
									     sizeof(m.name));
				}
				c->desc.menu = (const char *const *)c->menu_store;
			}
			if (q.type == V4L2_CTRL_TYPE_BUTTON ||
			    uvc_get_value(fd, &c->desc, &u->values[u->n_ctrls]) < 0)
				u->values[u->n_ctrls] = q.default_value;
			/*
			 * The daemon starts every control at its default_value
			 * and does not ask get_control() (daemon/ctrls.c): offer
			 * the camera's current value as the default, so that the
			 * daemon's value is the camera's (else setting the real
			 * default would never reach a camera that is elsewhere).
			 */
			c->desc.default_value = u->values[u->n_ctrls];
			u->n_ctrls++;
		}
		q = (struct v4l2_query_ext_ctrl){ .id = id | V4L2_CTRL_FLAG_NEXT_CTRL };
	}
}

/* --- streams -------------------------------------------------------------- */

static void
uvc_stream_free(struct uvc_stream *s)
{
	struct v4l2_requestbuffers rb = {
		.type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP,
	};
	int type = V4L2_BUF_TYPE_VIDEO_CAPTURE;

	if (!s)
		return;
	uvc_ioctl(s->fd, VIDIOC_STREAMOFF, &type);
	for (unsigned int i = 0; i < s->n_bufs; i++) {
		if (s->mem[i] && s->mem[i] != MAP_FAILED)
			v4l2_munmap(s->mem[i], s->len[i]);
	}
	uvc_ioctl(s->fd, VIDIOC_REQBUFS, &rb);
	g_free(s);
}

/* Configure @fd as @cfg says (or as close as the camera gets) and stream. */
static int
uvc_stream_start(int fd, const struct uvc_config *cfg, struct uvc_stream **ret)
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
	r = uvc_ioctl(fd, VIDIOC_S_FMT, &f);
	if (r < 0)
		goto err;
	if (!cv_input_supported(f.fmt.pix.pixelformat) ||
	    (f.fmt.pix.field != V4L2_FIELD_NONE && f.fmt.pix.field != V4L2_FIELD_ANY)) {
		r = -EPROTO;	/* the camera changed and has nothing we read */
		goto err;
	}
	s->fmt = f.fmt.pix;
	parm.parm.capture.timeperframe = cfg->interval;
	uvc_ioctl(fd, VIDIOC_S_PARM, &parm);	/* best effort */

	r = uvc_ioctl(fd, VIDIOC_REQBUFS, &rb);
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

		r = uvc_ioctl(fd, VIDIOC_QUERYBUF, &b);
		if (r < 0)
			goto err;
		s->len[i] = b.length;
		s->mem[i] = v4l2_mmap(NULL, b.length, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
				      b.m.offset);
		if (s->mem[i] == MAP_FAILED) {
			r = -errno;
			goto err;
		}
		r = uvc_ioctl(fd, VIDIOC_QBUF, &b);
		if (r < 0)
			goto err;
	}
	r = uvc_ioctl(fd, VIDIOC_STREAMON, &type);
	if (r < 0)
		goto err;
	*ret = s;
	return 0;

err:
	uvc_stream_free(s);
	return r;
}

/* --- the reconnect thread ------------------------------------------------ */

static void
uvc_apply_controls(struct uvc_source *u, int fd)
{
	int64_t values[UVC_MAX_CTRLS];

	g_mutex_lock(&u->lock);
	memcpy(values, u->values, sizeof(values));
	g_mutex_unlock(&u->lock);
	for (unsigned int i = 0; i < u->n_ctrls; i++) {
		int64_t cur;

		if (u->ctrls[i].desc.type == V4L2_CTRL_TYPE_BUTTON)
			continue;
		if (uvc_get_value(fd, &u->ctrls[i].desc, &cur) == 0 && cur == values[i])
			continue;
		uvc_set_value(fd, &u->ctrls[i].desc, values[i]);
	}
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

		fd = uvc_open(u->path, &id, NULL);
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
		uvc_apply_controls(u, fd);
		r = uvc_stream_start(fd, &cfg, &s);
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

static void
uvc_thread_stop(struct uvc_source *u)
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
		uvc_stream_free(u->pending);
		v4l2_close(u->pending_fd);
		u->pending = NULL;
		u->pending_fd = -1;
	}
}

static void
uvc_thread_start(struct uvc_source *u)
{
	if (u->thread)
		return;
	u->quit = false;
	u->thread = g_thread_new("v4l2cuse-uvc", uvc_reconnect_thread, u);
}

/* --- losing and finding the camera --------------------------------------- */

static void
uvc_timer_arm(struct uvc_source *u, bool on)
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
static void
uvc_lose(struct uvc_source *u, int r)
{
	unsigned int suppressed = 0;

	if (ratelimit_pass(&u->rl_lost, &suppressed))
		g_warning("uvc: '%s' is gone (%s); no signal until it is back",
			  u->path, g_strerror(-r));
	if (u->stream) {
		epoll_ctl(u->epfd, EPOLL_CTL_DEL, u->stream->fd, NULL);
		uvc_stream_free(u->stream);
		u->stream = NULL;
	}
	if (u->fd >= 0) {
		v4l2_close(u->fd);
		u->fd = -1;
	}
	uvc_timer_arm(u, true);
	uvc_thread_start(u);
}

static void
uvc_adopt(struct uvc_source *u, int fd, struct uvc_stream *s)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = 0 };

	u->fd = fd;
	u->stream = s;
	epoll_ctl(u->epfd, EPOLL_CTL_ADD, fd, &ev);
	uvc_timer_arm(u, false);
	g_message("uvc: '%s' is back (%.4s %ux%u)", u->path, (const char *)&s->fmt.pixelformat,
		  s->fmt.width, s->fmt.height);
}

static bool
uvc_is_gone_error(int r)
{
	return r == -ENODEV || r == -EIO || r == -ENXIO || r == -EPIPE || r == -EBADF ||
	       r == -ESHUTDOWN;
}

/* --- ops ------------------------------------------------------------------ */

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
		uvc_ctrl_free(&u->ctrls[i]);
	g_free(u->ctrls);
	g_free(u->modes);
	if (u->epfd >= 0)
		close(u->epfd);
	if (u->timerfd >= 0)
		close(u->timerfd);
	if (u->evfd >= 0)
		close(u->evfd);
	cv_free(u->cv);
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
	u->cv = cv_new();
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

	r = uvc_open(u->path, &u->ident, &error);
	if (r < 0)
		goto err;
	u->fd = r;
	r = uvc_snapshot_formats(u, u->fd, &error);
	if (r < 0)
		goto err;
	r = uvc_parse_formats(u, o, &error);
	if (r < 0)
		goto err;
	uvc_snapshot_controls(u, u->fd);

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
	if (ret_error)
		*ret_error = error;
	else
		g_free(error);
	v4l2cuse_opts_free(o);
	uvc_destroy(&u->base);
	return r;
}

/* The camera mode that feeds @fourcc at @w x @h, NULL if there is none. */
static const struct uvc_mode *
uvc_feed(const struct uvc_source *u, uint32_t fourcc, uint32_t w, uint32_t h)
{
	const struct v4l2cuse_format_info *fi;

	for (unsigned int i = 0; i < u->n_modes; i++) {
		const struct uvc_mode *m = &u->modes[i];

		if (m->fourcc == fourcc && m->width == w && m->height == h)
			return m;
	}
	/* format.c's order is the preference: Y'CbCr, RGB, grey, compressed. */
	for (unsigned int f = 0; (fi = v4l2cuse_format_lookup_by_index(f)); f++) {
		for (unsigned int i = 0; i < u->n_modes; i++) {
			const struct uvc_mode *m = &u->modes[i];

			if (m->fourcc == fi->fourcc && m->width == w && m->height == h)
				return m;
		}
	}
	return NULL;
}

/* The index-th distinct size a format is offered at. */
static bool
uvc_size_at(const struct uvc_source *u, uint32_t fourcc, unsigned int index, uint32_t *ret_w,
	    uint32_t *ret_h)
{
	bool native = false;
	unsigned int n = 0;

	for (unsigned int i = 0; i < u->n_modes; i++)
		native |= u->modes[i].fourcc == fourcc;
	for (unsigned int i = 0; i < u->n_modes; i++) {
		const struct uvc_mode *m = &u->modes[i];
		bool dup = false;

		if (native && m->fourcc != fourcc)
			continue;
		for (unsigned int j = 0; j < i && !dup; j++) {
			const struct uvc_mode *p = &u->modes[j];

			dup = (!native || p->fourcc == fourcc) && p->width == m->width &&
			      p->height == m->height;
		}
		if (dup)
			continue;
		if (n++ == index) {
			*ret_w = m->width;
			*ret_h = m->height;
			return true;
		}
	}
	return false;
}

static int
uvc_enum_format(struct v4l2cuse_source *src, unsigned int index, uint32_t *ret_fourcc)
{
	return modes_enum_format(&uvc_from(src)->offered, index, ret_fourcc);
}

static int
uvc_enum_framesize(struct v4l2cuse_source *src, uint32_t fourcc, unsigned int index,
		   uint32_t *ret_width, uint32_t *ret_height)
{
	struct uvc_source *u = uvc_from(src);

	if (!modes_has_format(&u->offered, fourcc) || !uvc_size_at(u, fourcc, index, ret_width, ret_height))
		return -EINVAL;
	return 0;
}

static int
uvc_enum_frameinterval(struct v4l2cuse_source *src, uint32_t fourcc, uint32_t width,
		       uint32_t height, unsigned int index, struct v4l2_fract *ret)
{
	struct uvc_source *u = uvc_from(src);
	const struct uvc_mode *m = modes_has_format(&u->offered, fourcc) ? uvc_feed(u, fourcc, width, height)
							     : NULL;

	if (!m || index >= m->n_intervals)
		return -EINVAL;
	*ret = m->intervals[index];
	return 0;
}

static void
uvc_stop(struct v4l2cuse_source *src)
{
	struct uvc_source *u = uvc_from(src);

	uvc_thread_stop(u);
	if (u->stream) {
		epoll_ctl(u->epfd, EPOLL_CTL_DEL, u->stream->fd, NULL);
		uvc_stream_free(u->stream);
		u->stream = NULL;
	}
	if (u->timerfd >= 0)
		uvc_timer_arm(u, false);
	u->started = false;
}

static int
uvc_start(struct v4l2cuse_source *src, const struct v4l2_pix_format *pix,
	  const struct v4l2_fract *interval)
{
	struct uvc_source *u = uvc_from(src);
	const struct uvc_mode *m;
	struct v4l2_pix_format f = { 0 };
	struct uvc_stream *s = NULL;
	uint64_t drain;
	int r;

	if (u->started)
		return -EBUSY;
	m = modes_has_format(&u->offered, pix->pixelformat) ? uvc_feed(u, pix->pixelformat, pix->width,
							   pix->height) : NULL;
	if (!m)
		return -EINVAL;
	f.pixelformat = pix->pixelformat;
	f.width = pix->width;
	f.height = pix->height;
	r = v4l2cuse_format_fill(&f);
	if (r < 0)
		return r;
	u->pix = f;
	u->out_iv = interval && interval->numerator && interval->denominator ? *interval
									     : m->intervals[0];
	u->cfg = (struct uvc_config){
		.fourcc = m->fourcc, .width = m->width, .height = m->height,
		.interval = u->out_iv, .n_bufs = u->n_bufs,
	};
	while (read(u->evfd, &drain, sizeof(drain)) > 0)
		;
	if (u->fd < 0) {
		/* Gone since the last stream: one quick look before "no signal". */
		struct uvc_ident id;
		int fd = uvc_open(u->path, &id, NULL);

		if (fd >= 0 && strcmp(id.card, u->ident.card) == 0 &&
		    strcmp(id.bus_info, u->ident.bus_info) == 0) {
			u->fd = fd;
			uvc_apply_controls(u, fd);
		} else if (fd >= 0) {
			v4l2_close(fd);
		}
	}
	u->started = true;
	if (u->fd >= 0) {
		r = uvc_stream_start(u->fd, &u->cfg, &s);
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
	uvc_lose(u, r < 0 ? r : -ENODEV);
	return 0;
}

/* The camera is gone: -ENOLINK on each tick of the timerfd, -EAGAIN between. */
static int
uvc_no_signal(struct uvc_source *u)
{
	uint64_t n;

	return read(u->timerfd, &n, sizeof(n)) == sizeof(n) ? -ENOLINK : -EAGAIN;
}

static int
uvc_produce(struct v4l2cuse_source *src, struct v4l2cuse_frame *frame)
{
	struct uvc_source *u = uvc_from(src);
	struct v4l2_buffer b = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP };
	unsigned int suppressed = 0;
	struct cv_image img;
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
			uvc_thread_stop(u);
			uvc_adopt(u, fd, s);
		}
	}
	if (!u->stream)
		return uvc_no_signal(u);

	r = uvc_ioctl(u->stream->fd, VIDIOC_DQBUF, &b);
	if (r == -EAGAIN)
		return -EAGAIN;
	if (r < 0 || b.index >= u->stream->n_bufs) {
		if (r < 0 && !uvc_is_gone_error(r)) {
			if (ratelimit_pass(&u->rl_drop, &suppressed))
				g_debug("uvc: DQBUF: %s", g_strerror(-r));
			return -ENODATA;
		}
		uvc_lose(u, r < 0 ? r : -EIO);
		return -ENOLINK;
	}
	img = (struct cv_image){
		.fourcc = u->stream->fmt.pixelformat,
		.width = u->stream->fmt.width, .height = u->stream->fmt.height,
		.bytesperline = u->stream->fmt.bytesperline,
		.data = u->stream->mem[b.index],
		.size = MIN(b.bytesused ? b.bytesused : u->stream->len[b.index],
			    u->stream->len[b.index]),
	};
	if (!v4l2cuse_format_lookup(img.fourcc)->compressed)	/* a format we read */
		img.size = u->stream->len[b.index];
	r = cv_convert(u->cv, &img, &u->pix, frame->data, frame->length, &frame->bytesused);
	q = uvc_ioctl(u->stream->fd, VIDIOC_QBUF, &b);
	if (q < 0 && uvc_is_gone_error(q)) {
		uvc_lose(u, q);
		return -ENOLINK;
	}
	if (r < 0) {
		if (ratelimit_pass(&u->rl_drop, &suppressed))
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

static const struct v4l2cuse_control *
uvc_control(struct v4l2cuse_source *src, unsigned int index)
{
	struct uvc_source *u = uvc_from(src);

	return index < u->n_ctrls ? &u->ctrls[index].desc : NULL;
}

static int
uvc_ctrl_index(const struct uvc_source *u, uint32_t id)
{
	for (unsigned int i = 0; i < u->n_ctrls; i++) {
		if (u->ctrls[i].desc.id == id)
			return (int)i;
	}
	return -EINVAL;
}

static int
uvc_get_control(struct v4l2cuse_source *src, uint32_t id, int64_t *ret_value)
{
	struct uvc_source *u = uvc_from(src);
	int i = uvc_ctrl_index(u, id);

	if (i < 0)
		return i;
	g_mutex_lock(&u->lock);
	*ret_value = u->values[i];
	g_mutex_unlock(&u->lock);
	return 0;
}

static int
uvc_set_control(struct v4l2cuse_source *src, uint32_t id, int64_t value)
{
	struct uvc_source *u = uvc_from(src);
	int i = uvc_ctrl_index(u, id);
	int r = 0;

	if (i < 0)
		return i;
	if (u->fd >= 0) {
		r = uvc_set_value(u->fd, &u->ctrls[i].desc, value);
		if (r < 0 && !uvc_is_gone_error(r))
			return r;	/* the camera refused (busy, inactive, ...) */
	}
	/* Applied, or remembered for when the camera is back. */
	g_mutex_lock(&u->lock);
	if (u->ctrls[i].desc.type != V4L2_CTRL_TYPE_BUTTON)
		u->values[i] = value;
	g_mutex_unlock(&u->lock);
	return 0;
}

const struct v4l2cuse_source_ops v4l2cuse_uvc_ops = {
	.abi = V4L2CUSE_SOURCE_ABI,
	.name = "uvc",
	.create = uvc_create,
	.destroy = uvc_destroy,
	.enum_format = uvc_enum_format,
	.enum_framesize = uvc_enum_framesize,
	.enum_frameinterval = uvc_enum_frameinterval,
	.negotiate = NULL,
	.start = uvc_start,
	.stop = uvc_stop,
	.produce = uvc_produce,
	.wake_fd = uvc_wake_fd,
	.control = uvc_control,
	.get_control = uvc_get_control,
	.set_control = uvc_set_control,
};
