/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The uvc source's camera and what it offers (uvc-private.h): opening and
 * identifying a camera, the snapshot of its modes at create(), and the
 * enumerations built on it (uvc.c's header describes them).
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <glib.h>
#include <libv4l2.h>

#include "util/macros.h"
#include "v4l2cuse/format.h"
#include "uvc-private.h"

int
v4l2cuse_uvc_open(const char *path, struct uvc_ident *ret_ident, char **ret_error)
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

	for (fi.index = 0;
	     fi.index < 64 && v4l2cuse_uvc_ioctl(fd, VIDIOC_ENUM_FRAMEINTERVALS, &fi) == 0;
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

		if (v4l2cuse_uvc_ioctl(fd, VIDIOC_G_PARM, &parm) == 0)
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

	for (fs.index = 0;
	     fs.index < 64 && v4l2cuse_uvc_ioctl(fd, VIDIOC_ENUM_FRAMESIZES, &fs) == 0;
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

		if (v4l2cuse_uvc_ioctl(fd, VIDIOC_G_FMT, &f) == 0)
			uvc_add_mode(u, fd, fourcc, f.fmt.pix.width, f.fmt.pix.height);
	}
}

int
v4l2cuse_uvc_snapshot_formats(struct uvc_source *u, int fd, char **ret_error)
{
	struct v4l2_fmtdesc fd_desc = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	GString *skipped = g_string_new(NULL);

	u->modes = g_new0(struct uvc_mode, UVC_MAX_MODES);
	for (fd_desc.index = 0;
	     fd_desc.index < 128 && v4l2cuse_uvc_ioctl(fd, VIDIOC_ENUM_FMT, &fd_desc) == 0;
	     fd_desc.index++) {
		if (fd_desc.flags & V4L2_FMT_FLAG_EMULATED)
			continue;	/* libv4l2's own conversions: we do ours */
		if (!v4l2cuse_convert_input_supported(fd_desc.pixelformat)) {
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

int
v4l2cuse_uvc_parse_formats(struct uvc_source *u, const struct v4l2cuse_opts *o, char **ret_error)
{
	const char *v = v4l2cuse_opts_get_str(o, "formats", NULL);

	if (v)
		return v4l2cuse_modes_parse_formats(&u->offered, o, v, ret_error);
	/* The camera's own formats first (its order), then the converted ones. */
	for (unsigned int i = 0; i < u->n_modes; i++) {
		if (v4l2cuse_format_info(u->modes[i].fourcc))
			v4l2cuse_modes_add_format(&u->offered, u->modes[i].fourcc);
	}
	v4l2cuse_modes_add_output_formats(&u->offered);
	return 0;
}

/* The camera mode that feeds @fourcc at @w x @h, NULL if there is none. */
const struct uvc_mode *
v4l2cuse_uvc_feed(const struct uvc_source *u, uint32_t fourcc, uint32_t w, uint32_t h)
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

int
v4l2cuse_uvc_enum_format(struct v4l2cuse_source *src, unsigned int index, uint32_t *ret_fourcc)
{
	return v4l2cuse_modes_enum_format(&uvc_from(src)->offered, index, ret_fourcc);
}

int
v4l2cuse_uvc_enum_framesize(struct v4l2cuse_source *src, uint32_t fourcc, unsigned int index,
			    uint32_t *ret_width, uint32_t *ret_height)
{
	struct uvc_source *u = uvc_from(src);

	if (!v4l2cuse_modes_has_format(&u->offered, fourcc) ||
	    !uvc_size_at(u, fourcc, index, ret_width, ret_height))
		return -EINVAL;
	return 0;
}

int
v4l2cuse_uvc_enum_frameinterval(struct v4l2cuse_source *src, uint32_t fourcc, uint32_t width,
				uint32_t height, unsigned int index, struct v4l2_fract *ret)
{
	struct uvc_source *u = uvc_from(src);
	const struct uvc_mode *m = v4l2cuse_modes_has_format(&u->offered, fourcc)
					   ? v4l2cuse_uvc_feed(u, fourcc, width, height)
					   : NULL;

	if (!m || index >= m->n_intervals)
		return -EINVAL;
	*ret = m->intervals[index];
	return 0;
}
