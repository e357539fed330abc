/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The "uvc" source: a real V4L2 capture device passed through (a webcam,
 * an analog grabber, an HDMI or SDI capture card, a SoC camera; driven
 * through libv4l2: v4l2_fd_open, v4l2_ioctl, v4l2_mmap, except a
 * multi-planar-only camera, driven directly: uvc-snapshot.c), its formats
 * converted to every format of format.c.
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
 *   keep_open=BOOL    keep the camera open while nobody streams, for an
 *                     instant start (default 0: open only while streamed)
 *
 * What the device offers is a snapshot taken at create() (the camera must
 * be there then: a missing camera is a configuration error): for a format
 * the camera has, the sizes it takes (TRY_FMT) and its intervals; for a
 * converted format, every size the camera has in a format convert.c reads,
 * with the intervals of the camera format that will feed it (a raw one if
 * the camera has one at that size, else MJPEG). Stepwise/continuous camera
 * sizes and intervals are offered as the common ones inside their range.
 * H.264 and HEVC are offered where the camera has them, never converted.
 * Multi-planar cameras (VIDEO_CAPTURE_MPLANE) are driven through that API;
 * formats whose planes lie apart (NV12M, YUV420M, ...) are offered as
 * their one-buffer equivalents (NV12, YU12, ...), their planes joined.
 *
 * Formats: at the camera's own format and size the frame is the camera's
 * (copied; its colorimetry is reported as the camera reports it at that
 * size); everything else is converted (colorimetry: format.c's). A device
 * with no format configured starts at the camera's current format and rate
 * (default_format()).
 *
 * Interlaced cameras (a TV or S-Video input, 1080i HDMI): a consumer that
 * asks for a progressive frame (V4L2_FIELD_NONE or ANY) gets one: the
 * camera is asked for NONE, and whatever field order it answers is made
 * progressive before conversion (fields.h: woven, or one field as a picture
 * of half the height), so scaling never mixes fields. A consumer that asks
 * for an interlaced field order gets it where the camera delivers it, at
 * the camera's own formats and sizes only: the camera's buffers as they
 * are, V4L2_FIELD_ALTERNATE as one field per buffer (TOP/BOTTOM in
 * frame->field).
 *
 * On demand: after the snapshot create() closes the camera, which is open
 * only while somebody streams (its LED says so; uvcvideo keeps an open
 * camera out of USB autosuspend; an unplug while closed leaves no dead fd
 * behind and costs nothing until the next start()). start() (first
 * consumer streams or reads) does not wait for it: the thread below opens
 * it at once, checks its identity, applies the controls and sets the
 * stream up (the chosen format, the nearest interval), and hands it over
 * through the eventfd; meanwhile produce() answers -EAGAIN, and no signal
 * only once UVC_OPEN_GRACE_US has passed or a try found no camera (or
 * another one). stop() (the last one stops) stops the stream, the thread,
 * and closes the camera. With keep_open=1 the camera stays open from
 * create() on (control events from other applications arrive while idle)
 * and start() sets the stream up at once, on the dispatcher.
 *
 * The camera is opened O_NONBLOCK and its fd, together with a timerfd and
 * an eventfd, sits in an epoll set that is the source's wake fd: produce()
 * dequeues without waiting, converts the frame into the consumer's buffer
 * and requeues it. A frame that does not convert (a corrupt MJPEG) is
 * dropped.
 *
 * A camera that refuses (S_FMT answers another format than an interlaced
 * or compressed consumer needs, REQBUFS or STREAMON fail) is not an unplug:
 * one log line names what it answered, and the stream fails with its error
 * (EPIPE for a format it answered differently) where start() sets it up
 * (keep_open=1), else produce() answers -ECONNREFUSED once (the consumers'
 * streams end with an error); the next start() tries again with the next
 * configuration.
 *
 * Unplugged (an ioctl fails with ENODEV, EIO, ... and the fd no longer
 * answers QUERYCAP): the camera is closed, the timerfd wakes the daemon at
 * the negotiated rate and produce() answers -ENOLINK on every tick (no
 * signal: the device shows its placeholder), and a thread tries every
 * retry_ms to open the same path again, accepting only a device with the
 * same identity (QUERYCAP card and bus_info); it sets it up with the
 * current stream's configuration (format, interval, buffers, controls,
 * STREAMON) off the dispatcher and hands it over through the eventfd. If
 * the camera is back but refuses that configuration, produce() answers
 * -ECONNREFUSED once (the consumers' streams end with an error) instead of
 * no signal for ever. Progressive consumers never see another format than
 * the negotiated one: whatever the camera delivers after a reconnect is
 * converted.
 *
 * Controls: the camera's controls of every standard class (user, camera:
 * exposure, focus, pan/tilt/zoom..., image source and processing, codec,
 * JPEG, flash, DV, detection, ...) of types INTEGER, BOOLEAN, MENU,
 * INTEGER_MENU, INTEGER64, BUTTON and BITMASK that are not read-only are
 * snapshot at create() and offered, with the camera's current value as
 * their default (the daemon starts from the default); sets go to the
 * camera (and are applied again after a reconnect); while the camera is
 * closed or gone they are only remembered (a get answers that value), and
 * applied when it is opened. Driver classes of their own (vivid's test
 * class) are not forwarded. The source subscribes to the camera's control
 * events: what other applications (or the camera's automatic controls)
 * change arrives through control_fd()/control_update(), values, flags
 * (INACTIVE) and ranges, while the camera is open (only while streamed,
 * unless keep_open=1).
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <glib.h>
#include <libv4l2.h>

#include "util/cleanup.h"
#include "util/macros.h"
#include "v4l2cuse/format.h"
#include "v4l2cuse/source.h"
#include "uvc-private.h"

/* How long produce() waits for a camera start() opens before "no signal". */
#define UVC_OPEN_GRACE_US	(1 * G_USEC_PER_SEC)

static const char *const uvc_keys[] = {
	"formats", "buffers", "retry_ms", "keep_open", NULL,
};

/* ---------------------------------------------------------------------- */
/* The camera backend: libv4l2 */

static int
uvc_lib_open(const char *path)
{
	int fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

static int
uvc_lib_attach(int fd)
{
	return v4l2_fd_open(fd, 0) < 0 ? (errno ? -errno : -EIO) : 0;
}

static void
uvc_lib_close(int fd)
{
	v4l2_close(fd);
}

static int
uvc_lib_ioctl(int fd, unsigned long req, void *arg)
{
	/*
	 * TRY_FMT asks the driver itself: libv4l2 answers it from its own
	 * tables for UVC cameras (field NONE, no colorimetry), and the
	 * snapshot wants the camera's answer.
	 */
	int r = req == VIDIOC_TRY_FMT ? ioctl(fd, req, arg) : v4l2_ioctl(fd, req, arg);

	return r < 0 ? -errno : r;
}

static void *
uvc_lib_mmap(int fd, size_t length, int64_t offset)
{
	void *p = v4l2_mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, offset);

	return p == MAP_FAILED ? NULL : p;
}

static void
uvc_lib_munmap(void *addr, size_t length)
{
	v4l2_munmap(addr, length);
}

static int
uvc_lib_event_fd(int fd, uint32_t *ret_events)
{
	*ret_events = EPOLLPRI;		/* V4L2 events: POLLPRI on the device */
	return fd;
}

static const struct uvc_backend uvc_libv4l2 = {
	.open = uvc_lib_open,
	.attach = uvc_lib_attach,
	.close = uvc_lib_close,
	.ioctl = uvc_lib_ioctl,
	.mmap = uvc_lib_mmap,
	.munmap = uvc_lib_munmap,
	.event_fd = uvc_lib_event_fd,
};

static const struct uvc_backend *uvc_be = &uvc_libv4l2;

void
v4l2cuse_uvc_set_backend(const struct uvc_backend *be)
{
	uvc_be = be ? be : &uvc_libv4l2;
}

int
v4l2cuse_uvc_ioctl(int fd, unsigned long req, void *arg)
{
	int r;

	do {
		r = uvc_be->ioctl(fd, req, arg);
	} while (r == -EINTR);
	return r;
}

int
v4l2cuse_uvc_backend_open(const char *path)
{
	return uvc_be->open(path);
}

int
v4l2cuse_uvc_backend_attach(int fd)
{
	return uvc_be->attach(fd);
}

void
v4l2cuse_uvc_close(int fd)
{
	uvc_be->close(fd);
}

void *
v4l2cuse_uvc_mmap(int fd, size_t length, int64_t offset)
{
	return uvc_be->mmap(fd, length, offset);
}

void
v4l2cuse_uvc_munmap(void *addr, size_t length)
{
	uvc_be->munmap(addr, length);
}

int
v4l2cuse_uvc_event_fd(int fd, uint32_t *ret_events)
{
	return uvc_be->event_fd(fd, ret_events);
}

/* ---------------------------------------------------------------------- */
/* The source */

static void uvc_stop(struct v4l2cuse_source *src);

static void
uvc_destroy(struct v4l2cuse_source *src)
{
	struct uvc_source *u = uvc_from(src);

	if (!u)
		return;
	uvc_stop(src);
	if (u->fd >= 0)
		v4l2cuse_uvc_close(u->fd);
	for (unsigned int i = 0; u->ctrls && i < u->n_ctrls; i++)
		v4l2cuse_uvc_ctrl_free(&u->ctrls[i]);
	g_free(u->ctrls);
	g_free(u->modes);
	clear_fd(&u->epfd);
	clear_fd(&u->timerfd);
	clear_fd(&u->evfd);
	clear_fd(&u->ctl_epfd);
	v4l2cuse_convert_free(u->cv);
	v4l2cuse_weave_free(u->weave);
	v4l2cuse_nal_free(u->nal);
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
	u->ctl_epfd = u->ctl_fd = -1;
	g_mutex_init(&u->lock);
	g_cond_init(&u->cond);
	u->cv = v4l2cuse_convert_new();
	u->weave = v4l2cuse_weave_new();
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
	    (r = v4l2cuse_opts_get_uint(o, "retry_ms", 1000, 50, 600000, &n, &error)) < 0 ||
	    (r = v4l2cuse_opts_get_bool(o, "keep_open", false, &u->keep_open, &error)) < 0)
		goto err;
	u->retry_ms = n;

	u->epfd = epoll_create1(EPOLL_CLOEXEC);
	u->ctl_epfd = epoll_create1(EPOLL_CLOEXEC);
	u->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	u->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (u->epfd < 0 || u->ctl_epfd < 0 || u->timerfd < 0 || u->evfd < 0) {
		r = -errno;
		error = g_strdup_printf("uvc: %s", g_strerror(-r));
		goto err;
	}
	ev.data.u32 = 1;
	epoll_ctl(u->epfd, EPOLL_CTL_ADD, u->timerfd, &ev);
	ev.data.u32 = 2;
	epoll_ctl(u->epfd, EPOLL_CTL_ADD, u->evfd, &ev);

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
	if (u->keep_open) {
		v4l2cuse_uvc_subscribe_controls(u, u->fd);
		v4l2cuse_uvc_watch_controls(u, u->fd);
	} else {
		/* Open only while streamed: its LED says so, and USB may suspend it. */
		v4l2cuse_uvc_close(u->fd);
		u->fd = -1;
	}

	g_debug("uvc: '%s' (%s, %s, %s): %u modes, %u formats offered, %u controls", u->path,
		u->ident.card, u->ident.bus_info,
		u->ident.buf_type == V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE ? "multi-planar"
									: "single-planar",
		u->n_modes, u->offered.n_formats, u->n_ctrls);
	v4l2cuse_opts_free(o);
	*ret_src = &u->base;
	return 0;

err:
	*ret_error = error;
	v4l2cuse_opts_free(o);
	uvc_destroy(&u->base);
	return r;
}

/*
 * The field order a consumer gets for @field at @fourcc, @w x frame height
 * @h: an interlaced one only at a camera mode that delivers interlaced
 * frames (the one asked for if the camera has it, else its own), else a
 * progressive frame.
 */
static uint32_t
uvc_negotiate_field(const struct uvc_source *u, uint32_t fourcc, uint32_t w, uint32_t h,
		    uint32_t field)
{
	const struct uvc_mode *m = v4l2cuse_uvc_native(u, fourcc, w, h);
	const struct v4l2cuse_format_info *fi = v4l2cuse_format_offered(fourcc);

	if (field == V4L2_FIELD_ANY || field == V4L2_FIELD_NONE || !m || !fi || fi->compressed)
		return V4L2_FIELD_NONE;
	if (field <= V4L2_FIELD_INTERLACED_BT && (m->fields & (1u << field)))
		return field;
	/* The camera's own: a driver answers what it has. */
	if (m->field != V4L2_FIELD_NONE && m->field != V4L2_FIELD_ANY)
		return m->field;
	return V4L2_FIELD_NONE;
}

static int
uvc_negotiate(struct v4l2cuse_source *src, struct v4l2_pix_format *pix)
{
	struct uvc_source *u = uvc_from(src);
	uint32_t fourcc = pix->pixelformat, w = 0, h = 0, sw, sh, field;
	uint32_t want_h = v4l2cuse_field_frame_height(pix->field, pix->height);
	uint64_t best = UINT64_MAX;
	struct v4l2_pix_format f = { 0 };
	const struct uvc_mode *m;
	int r;

	/* The format asked for, else the first offered one the camera can feed. */
	for (unsigned int k = 0; !w && k <= u->offered.n_formats; k++) {
		if (k > 0)
			fourcc = u->offered.formats[k - 1];
		else if (!v4l2cuse_modes_has_format(&u->offered, fourcc))
			continue;
		/* The nearest size, by |dw| + |dh| (ties: the earlier one). */
		for (unsigned int i = 0; v4l2cuse_uvc_size_at(u, fourcc, i, &sw, &sh); i++) {
			uint64_t d = (uint64_t)ABS((int64_t)sw - (int64_t)pix->width) +
				     (uint64_t)ABS((int64_t)sh - (int64_t)want_h);

			if (d < best) {
				best = d;
				w = sw;
				h = sh;
			}
		}
	}
	if (!w)
		return -EINVAL;
	field = uvc_negotiate_field(u, fourcc, w, h, pix->field);
	f.pixelformat = fourcc;
	f.width = w;
	f.height = V4L2_FIELD_HAS_T_OR_B(field) ? h / 2 : h;
	r = v4l2cuse_format_fill(&f);
	if (r < 0)
		return r;
	f.field = field;
	m = v4l2cuse_uvc_native(u, fourcc, w, h);
	if (m) {
		/* The camera's own frames: its colorimetry at this size. */
		f.colorspace = m->colour.colorspace;
		f.ycbcr_enc = m->colour.ycbcr_enc;
		f.quantization = m->colour.quantization;
		f.xfer_func = m->colour.xfer_func;
		/* Its frames must fit (and, for H.264/HEVC, parameter sets added). */
		if (!f.bytesperline && m->sizeimage > f.sizeimage - V4L2CUSE_JPEG_HEADROOM)
			f.sizeimage = m->sizeimage + V4L2CUSE_JPEG_HEADROOM;
	}
	*pix = f;
	return 0;
}

static int
uvc_default_format(struct v4l2cuse_source *src, struct v4l2_pix_format *pix,
		   struct v4l2_fract *ret_interval)
{
	struct uvc_source *u = uvc_from(src);
	const struct uvc_mode *m;
	uint64_t cur_ns, best = UINT64_MAX;

	pix->pixelformat = u->cur.pixelformat;
	pix->width = u->cur.width;
	pix->height = u->cur.height;
	*ret_interval = u->cur_interval;
	m = v4l2cuse_uvc_feed(u, pix->pixelformat, pix->width, pix->height);
	if (!m)
		return 0;
	/* The offered interval nearest to the camera's current one. */
	cur_ns = (uint64_t)u->cur_interval.numerator * 1000000000ull / u->cur_interval.denominator;
	for (unsigned int i = 0; i < m->n_intervals; i++) {
		uint64_t ns = (uint64_t)m->intervals[i].numerator * 1000000000ull /
			      m->intervals[i].denominator;
		uint64_t d = ns > cur_ns ? ns - cur_ns : cur_ns - ns;

		if (d < best) {
			best = d;
			*ret_interval = m->intervals[i];
		}
	}
	return 0;
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
	if (!u->keep_open && u->fd >= 0) {
		v4l2cuse_uvc_watch_controls(u, -1);
		v4l2cuse_uvc_close(u->fd);
		u->fd = -1;
	}
	u->opening = false;
	u->refused = false;
	u->started = false;
}

/*
 * The camera is closed (or was lost): the thread opens it and sets the
 * stream up, produce() takes it over. Until then produce() waits, without
 * a placeholder for a camera that only takes its time, up to
 * UVC_OPEN_GRACE_US.
 */
static void
uvc_open_async(struct uvc_source *u)
{
	u->opening = true;
	u->open_deadline = g_get_monotonic_time() + UVC_OPEN_GRACE_US;
	v4l2cuse_uvc_timer_arm(u, true);
	v4l2cuse_uvc_thread_start(u, true);
}

/* Still opening and not late: no placeholder yet (the timer's tick is taken). */
static bool
uvc_still_opening(struct uvc_source *u)
{
	unsigned int suppressed = 0;
	bool failed;
	uint64_t n;

	if (!u->opening)
		return false;
	g_mutex_lock(&u->lock);
	failed = u->open_failed;
	g_mutex_unlock(&u->lock);
	if (!failed && g_get_monotonic_time() < u->open_deadline) {
		if (read(u->timerfd, &n, sizeof(n)) < 0 && errno != EAGAIN)
			g_debug("uvc: timerfd: %s", g_strerror(errno));
		return true;
	}
	u->opening = false;
	if (failed && v4l2cuse_ratelimit_pass(&u->rl_lost, &suppressed))
		g_warning("uvc: '%s' is not there; no signal until it is back", u->path);
	else if (!failed)
		g_debug("uvc: '%s' is slow to open; no signal until it streams", u->path);
	return false;
}

static int
uvc_start(struct v4l2cuse_source *src, const struct v4l2_pix_format *pix,
	  const struct v4l2_fract *interval)
{
	struct uvc_source *u = uvc_from(src);
	uint32_t frame_h = v4l2cuse_field_frame_height(pix->field, pix->height);
	bool interlaced = pix->field != V4L2_FIELD_NONE && pix->field != V4L2_FIELD_ANY;
	bool passthrough = v4l2cuse_format_passthrough(pix->pixelformat) != NULL;
	const struct uvc_mode *m;
	struct uvc_stream *s = NULL;
	g_autofree char *why = NULL;
	uint64_t drain;
	int r;

	if (u->started)
		return -EBUSY;
	m = v4l2cuse_modes_has_format(&u->offered, pix->pixelformat)
		    ? v4l2cuse_uvc_feed(u, pix->pixelformat, pix->width, frame_h)
		    : NULL;
	if (!m || ((interlaced || passthrough) && m->fourcc != pix->pixelformat))
		return -EINVAL;
	u->pix = *pix;
	u->out_iv = interval && interval->numerator && interval->denominator
			    ? *interval : m->intervals[0];
	u->cfg = (struct uvc_config){
		.cam_fourcc = m->cam_fourcc, .width = m->width,
		.height = interlaced ? pix->height : m->height,
		.field = interlaced ? pix->field : V4L2_FIELD_NONE,
		.exact = interlaced || passthrough,
		.interval = u->out_iv, .n_bufs = u->n_bufs,
	};
	while (read(u->evfd, &drain, sizeof(drain)) > 0)
		;
	v4l2cuse_weave_reset(u->weave);
	v4l2cuse_nal_free(u->nal);
	u->nal = v4l2cuse_nal_new(pix->pixelformat);
	if (u->fd < 0) {
		/* Closed (or lost while kept open): opened off the dispatcher. */
		u->started = true;
		uvc_open_async(u);
		return 0;
	}
	/* Kept open (keep_open=1): set up here, as fast as the camera answers. */
	r = v4l2cuse_uvc_stream_start(u->fd, u->ident.buf_type, &u->cfg, &s, &why);
	if (r == 0) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = 0 };

		u->stream = s;
		u->started = true;
		epoll_ctl(u->epfd, EPOLL_CTL_ADD, u->fd, &ev);
		return 0;
	}
	if (!v4l2cuse_uvc_is_gone_error(r) || v4l2cuse_uvc_present(u->fd)) {
		/* There, and it refuses: the consumer gets the error, not a card. */
		g_message("uvc: '%s' refuses the stream: %s", u->path, why);
		return r;
	}
	g_debug("uvc: '%s': cannot stream: %s", u->path, why);
	u->started = true;
	v4l2cuse_uvc_lose(u, r);
	return 0;
}

/* What the reconnect thread handed over: a stream, or the camera's refusal. */
static int
uvc_take_pending(struct uvc_source *u)
{
	struct uvc_stream *s;
	uint64_t gen;
	char *why;
	int fd, refused;

	g_mutex_lock(&u->lock);
	gen = u->pending_gen;
	s = u->pending;
	fd = u->pending_fd;
	refused = u->pending_refused;
	why = u->pending_why;
	u->pending = NULL;
	u->pending_fd = -1;
	u->pending_refused = 0;
	u->pending_why = NULL;
	g_mutex_unlock(&u->lock);
	if (fd < 0)
		return 0;
	v4l2cuse_uvc_thread_stop(u);
	/* A set_control() while the thread applied the values: apply it too. */
	if (gen != u->values_gen)
		v4l2cuse_uvc_apply_controls(u, fd);
	if (s) {
		v4l2cuse_uvc_adopt(u, fd, s);
		return 0;
	}
	/* There, but it refuses this stream: keep it (controls), end the stream. */
	if (u->opening)
		g_message("uvc: '%s' refuses the stream: %s", u->path, why);
	else
		g_message("uvc: '%s' is back but refuses the stream: %s", u->path, why);
	g_free(why);
	u->fd = fd;
	v4l2cuse_uvc_watch_controls(u, fd);
	v4l2cuse_uvc_timer_arm(u, false);
	u->opening = false;
	u->refused = true;
	return refused;
}

/* The frame as the consumer wants it, from the camera's picture @img. */
static int
uvc_fill(struct uvc_source *u, const struct uvc_dqbuf *d, const struct v4l2cuse_image *img,
	 struct v4l2cuse_frame *frame)
{
	struct v4l2cuse_image pic;
	size_t len;
	bool key;
	int r;

	if (u->nal) {
		/* H.264/HEVC: the camera's stream, parameter sets on key frames. */
		r = v4l2cuse_nal_frame(u->nal, img->data, img->size, frame->data,
				       MIN(frame->length, (size_t)u->pix.sizeimage), &len, &key);
		frame->bytesused = (uint32_t)len;
		return r;
	}
	if (u->pix.field != V4L2_FIELD_NONE) {
		/* Interlaced as the camera delivers it: the same format, copied. */
		frame->field = d->b.field;
		pic = *img;
	} else {
		r = v4l2cuse_weave(u->weave, img, u->stream->fmt.field, d->b.field, &pic);
		if (r < 0)
			return r;
	}
	return v4l2cuse_convert_frame(u->cv, &pic, &u->pix, frame->data, frame->length,
				      &frame->bytesused);
}

static int
uvc_produce(struct v4l2cuse_source *src, struct v4l2cuse_frame *frame)
{
	struct uvc_source *u = uvc_from(src);
	unsigned int suppressed = 0;
	struct v4l2cuse_image img;
	struct uvc_dqbuf d;
	uint64_t drain;
	int r, q;

	if (!u->started)
		return -EINVAL;
	if (!frame->data || frame->length < u->pix.sizeimage)
		return -EINVAL;
	if (read(u->evfd, &drain, sizeof(drain)) > 0 || (!u->stream && u->thread)) {
		r = uvc_take_pending(u);
		if (r < 0)
			return -ECONNREFUSED;
	}
	if (u->refused)
		return -EAGAIN;		/* said once; nothing more until stop() */
	if (!u->stream)
		return uvc_still_opening(u) ? -EAGAIN : v4l2cuse_uvc_no_signal(u);

	r = v4l2cuse_uvc_dqbuf(u->stream, &d);
	if (r == -EAGAIN)
		return -EAGAIN;
	if (r < 0) {
		if (!v4l2cuse_uvc_is_gone_error(r)) {
			if (v4l2cuse_ratelimit_pass(&u->rl_drop, &suppressed))
				g_debug("uvc: DQBUF: %s", g_strerror(-r));
			return -ENODATA;
		}
		v4l2cuse_uvc_lose(u, r);
		return -ENOLINK;
	}
	r = v4l2cuse_uvc_image(u->stream, &d, &img);
	if (r == 0)
		r = uvc_fill(u, &d, &img, frame);
	frame->error = (d.b.flags & V4L2_BUF_FLAG_ERROR) != 0;
	q = v4l2cuse_uvc_qbuf(u->stream, &d);
	if (q < 0 && v4l2cuse_uvc_is_gone_error(q)) {
		v4l2cuse_uvc_lose(u, q);
		return -ENOLINK;
	}
	if (r == -EAGAIN)
		return -EAGAIN;		/* the first field of a frame, or no key frame yet */
	if (r < 0) {
		if (v4l2cuse_ratelimit_pass(&u->rl_drop, &suppressed))
			g_debug("uvc: dropped a frame that does not convert (%s; %u more)",
				g_strerror(-r), suppressed);
		return -ENODATA;
	}
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
	.negotiate = uvc_negotiate,
	.default_format = uvc_default_format,
	.start = uvc_start,
	.stop = uvc_stop,
	.produce = uvc_produce,
	.wake_fd = uvc_wake_fd,
	.control = v4l2cuse_uvc_control,
	.get_control = v4l2cuse_uvc_get_control,
	.set_control = v4l2cuse_uvc_set_control,
	.control_fd = v4l2cuse_uvc_control_fd,
	.control_update = v4l2cuse_uvc_control_update,
};
