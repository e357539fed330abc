/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The uvc source's camera and what it offers (uvc-private.h): opening and
 * identifying a camera, the snapshot of its modes at create() and the
 * enumerations built on it (uvc.c's header describes them).
 *
 * Every mode is what the camera answers to TRY_FMT: its size (a stepwise
 * camera's common sizes are kept only as it takes them), the field order
 * it delivers when asked for a progressive frame, the field orders it
 * delivers at all (asked once per format), its colorimetry at that size
 * and, for compressed formats, its frame size bound.
 */

#include "config.h"

#include <errno.h>
#include <string.h>

#include <glib.h>

#include "util/macros.h"
#include "v4l2cuse/format.h"
#include "uvc-private.h"

int
v4l2cuse_uvc_open(const char *path, struct uvc_ident *ret_ident, char **ret_error)
{
	struct v4l2_capability cap = { 0 };
	uint32_t caps = 0;
	int fd, r;

	fd = v4l2cuse_uvc_backend_open(path);
	if (fd < 0) {
		if (ret_error)
			*ret_error = g_strdup_printf("uvc: '%s': %s", path, g_strerror(-fd));
		return fd;
	}
	/* QUERYCAP before the backend takes the fd: libv4l2 complains about non-V4L2 files. */
	r = v4l2cuse_uvc_ioctl(fd, VIDIOC_QUERYCAP, &cap);
	if (r == 0)
		caps = cap.capabilities & V4L2_CAP_DEVICE_CAPS ? cap.device_caps : cap.capabilities;
	if (r == -ENOTTY || r == -EINVAL ||
	    (r == 0 && (!(caps & (V4L2_CAP_VIDEO_CAPTURE | V4L2_CAP_VIDEO_CAPTURE_MPLANE)) ||
			!(caps & V4L2_CAP_STREAMING))))
		r = -ENOTTY;
	/*
	 * libv4l2 only for cameras with the single-planar API. Its mplane
	 * plugin shows a multi-planar-only camera as single-planar, and
	 * v4l2_fd_open() fails (G_FMT: EINVAL) while the camera's format has
	 * its planes apart (NV12M, measured with vivid multiplanar=2): such a
	 * camera is driven through the multi-planar API directly (libv4l2's
	 * calls pass an fd it did not open straight to the kernel).
	 */
	if (r == 0 && (caps & V4L2_CAP_VIDEO_CAPTURE))
		r = v4l2cuse_uvc_backend_attach(fd);
	if (r < 0) {
		if (ret_error)
			*ret_error = g_strdup_printf("uvc: '%s': %s", path, r == -ENOTTY ?
						     "not a V4L2 capture device with streaming I/O" :
						     g_strerror(-r));
		v4l2cuse_uvc_close(fd);
		return r;
	}
	memset(ret_ident, 0, sizeof(*ret_ident));
	memcpy(ret_ident->card, cap.card, sizeof(ret_ident->card) - 1);
	memcpy(ret_ident->bus_info, cap.bus_info, sizeof(ret_ident->bus_info) - 1);
	/* A multi-planar-only camera is driven through the multi-planar API. */
	ret_ident->buf_type = caps & V4L2_CAP_VIDEO_CAPTURE ? V4L2_BUF_TYPE_VIDEO_CAPTURE
							   : V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE;
	return fd;
}

bool
v4l2cuse_uvc_present(int fd)
{
	struct v4l2_capability cap;

	return v4l2cuse_uvc_ioctl(fd, VIDIOC_QUERYCAP, &cap) == 0;
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
uvc_enum_intervals(struct uvc_source *u, int fd, struct uvc_mode *m)
{
	static const struct v4l2_fract common[] = {
		{ 1, 60 }, { 1, 50 }, { 1, 30 }, { 1, 25 }, { 1, 15 }, { 1, 10 }, { 1, 5 },
	};
	struct v4l2_frmivalenum fi = {
		.pixel_format = m->cam_fourcc, .width = m->width, .height = m->height,
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
		struct v4l2_streamparm parm = { .type = u->ident.buf_type };

		if (v4l2cuse_uvc_ioctl(fd, VIDIOC_G_PARM, &parm) == 0)
			uvc_add_interval(m, parm.parm.capture.timeperframe);
		uvc_add_interval(m, (struct v4l2_fract){ 1, 30 });
	}
}

/*
 * The field orders the camera delivers @cam_fourcc in, asked at one of its
 * sizes (a driver decides them by its input or signal, not by size).
 */
static uint32_t
uvc_probe_fields(struct uvc_source *u, int fd, uint32_t cam_fourcc, uint32_t w, uint32_t h)
{
	static const uint32_t fields[] = {
		V4L2_FIELD_NONE, V4L2_FIELD_INTERLACED, V4L2_FIELD_INTERLACED_TB,
		V4L2_FIELD_INTERLACED_BT, V4L2_FIELD_SEQ_TB, V4L2_FIELD_SEQ_BT,
		V4L2_FIELD_ALTERNATE, V4L2_FIELD_TOP, V4L2_FIELD_BOTTOM,
	};
	uint32_t mask = 0;

	for (size_t i = 0; i < G_N_ELEMENTS(fields); i++) {
		struct uvc_camfmt f = {
			.cam_fourcc = cam_fourcc, .width = w, .field = fields[i],
			.height = V4L2_FIELD_HAS_T_OR_B(fields[i]) ? h / 2 : h,
		};

		if (v4l2cuse_uvc_fmt(fd, u->ident.buf_type, VIDIOC_TRY_FMT, &f) == 0 &&
		    f.cam_fourcc == cam_fourcc && f.field == fields[i])
			mask |= 1u << fields[i];
	}
	return mask;
}

static void
uvc_add_mode(struct uvc_source *u, int fd, uint32_t cam_fourcc, uint32_t ours, uint32_t w,
	     uint32_t h, uint32_t *fields)
{
	struct uvc_camfmt f = { .cam_fourcc = cam_fourcc, .width = w, .height = h,
				.field = V4L2_FIELD_NONE };
	const struct v4l2cuse_format_info *fi = v4l2cuse_format_offered(ours);
	struct uvc_mode *m;
	int r;

	if (!fi)
		fi = v4l2cuse_format_lookup(ours);	/* one only read (NV16, ...) */

	if (u->n_modes >= UVC_MAX_MODES)
		return;
	/* What the camera makes of it (not every size of a range is one it takes). */
	r = v4l2cuse_uvc_fmt(fd, u->ident.buf_type, VIDIOC_TRY_FMT, &f);
	if (r == 0 && f.cam_fourcc != cam_fourcc)
		return;
	if (r < 0) {
		/* No TRY_FMT: take the size as enumerated. */
		f = (struct uvc_camfmt){ .cam_fourcc = cam_fourcc, .width = w, .height = h,
					 .field = V4L2_FIELD_NONE };
	}
	if (f.field == V4L2_FIELD_ANY)
		f.field = V4L2_FIELD_NONE;
	w = f.width;
	h = v4l2cuse_field_frame_height(f.field, f.height);
	if (w < 2 || h < 2 || (w & 1) || (h & 1) || w > V4L2CUSE_MAX_WIDTH ||
	    h > V4L2CUSE_MAX_HEIGHT || !fi)
		return;
	for (unsigned int i = 0; i < u->n_modes; i++) {
		if (u->modes[i].fourcc == ours && u->modes[i].width == w && u->modes[i].height == h)
			return;
	}
	if (*fields == UINT32_MAX)
		*fields = uvc_probe_fields(u, fd, cam_fourcc, w, h) | 1u << f.field;
	m = &u->modes[u->n_modes++];
	*m = (struct uvc_mode){
		.fourcc = ours, .cam_fourcc = cam_fourcc, .width = w, .height = h,
		.field = f.field, .fields = *fields, .sizeimage = f.sizeimage,
		.colour = f.colour,
	};
	if (!m->colour.colorspace) {
		struct v4l2_pix_format p = { .pixelformat = ours, .width = w, .height = h };

		/* Nothing from the camera: what format.c says for it. */
		v4l2cuse_format_colorimetry(&p);
		m->colour = (struct uvc_colour){ p.colorspace, p.ycbcr_enc, p.quantization,
						 p.xfer_func };
	}
	uvc_enum_intervals(u, fd, m);
}

static void
uvc_enum_sizes(struct uvc_source *u, int fd, uint32_t cam_fourcc, uint32_t ours)
{
	static const struct {
		uint32_t w, h;
	} common[] = {
		{ 160, 120 }, { 320, 240 }, { 640, 480 }, { 720, 480 }, { 720, 576 },
		{ 800, 600 }, { 1024, 768 }, { 1280, 720 }, { 1280, 960 }, { 1920, 1080 },
		{ 2560, 1440 }, { 3840, 2160 },
	};
	struct v4l2_frmsizeenum fs = { .pixel_format = cam_fourcc };
	uint32_t fields = UINT32_MAX;	/* probed with the first mode */

	for (fs.index = 0;
	     fs.index < 64 && v4l2cuse_uvc_ioctl(fd, VIDIOC_ENUM_FRAMESIZES, &fs) == 0;
	     fs.index++) {
		if (fs.type == V4L2_FRMSIZE_TYPE_DISCRETE) {
			uvc_add_mode(u, fd, cam_fourcc, ours, fs.discrete.width,
				     fs.discrete.height, &fields);
			continue;
		}
		for (size_t i = 0; i < G_N_ELEMENTS(common); i++) {
			const struct v4l2_frmsize_stepwise *s = &fs.stepwise;
			uint32_t sw = MAX(s->step_width, 1u), sh = MAX(s->step_height, 1u);

			if (common[i].w >= s->min_width && common[i].w <= s->max_width &&
			    common[i].h >= s->min_height && common[i].h <= s->max_height &&
			    (common[i].w - s->min_width) % sw == 0 &&
			    (common[i].h - s->min_height) % sh == 0)
				uvc_add_mode(u, fd, cam_fourcc, ours, common[i].w, common[i].h,
					     &fields);
		}
		if (fs.stepwise.max_width <= V4L2CUSE_MAX_WIDTH &&
		    fs.stepwise.max_height <= V4L2CUSE_MAX_HEIGHT)
			uvc_add_mode(u, fd, cam_fourcc, ours, fs.stepwise.max_width & ~1u,
				     fs.stepwise.max_height & ~1u, &fields);
		break;
	}
	if (fs.index == 0) {
		/* No ENUM_FRAMESIZES (a TV card without a scaler): the current size. */
		struct uvc_camfmt f;

		if (v4l2cuse_uvc_fmt(fd, u->ident.buf_type, VIDIOC_G_FMT, &f) == 0)
			uvc_add_mode(u, fd, cam_fourcc, ours, f.width,
				     v4l2cuse_field_frame_height(f.field, f.height), &fields);
	}
}

/* The camera's current format and rate: what the device starts at by default. */
static void
uvc_snapshot_current(struct uvc_source *u, int fd)
{
	struct v4l2_streamparm parm = { .type = u->ident.buf_type };
	struct uvc_camfmt f;

	u->cur_interval = (struct v4l2_fract){ 1, 30 };
	if (v4l2cuse_uvc_ioctl(fd, VIDIOC_G_PARM, &parm) == 0 &&
	    v4l2cuse_interval_valid(parm.parm.capture.timeperframe))
		u->cur_interval = parm.parm.capture.timeperframe;
	if (v4l2cuse_uvc_fmt(fd, u->ident.buf_type, VIDIOC_G_FMT, &f) == 0 &&
	    v4l2cuse_uvc_native(u, f.fourcc, f.width,
				v4l2cuse_field_frame_height(f.field, f.height))) {
		u->cur.pixelformat = f.fourcc;
		u->cur.width = f.width;
		u->cur.height = v4l2cuse_field_frame_height(f.field, f.height);
		return;
	}
	/* A format we do not read: the first mode. */
	u->cur.pixelformat = u->modes[0].fourcc;
	u->cur.width = u->modes[0].width;
	u->cur.height = u->modes[0].height;
}

int
v4l2cuse_uvc_snapshot_formats(struct uvc_source *u, int fd, char **ret_error)
{
	struct v4l2_fmtdesc fd_desc = { .type = u->ident.buf_type };
	GString *skipped = g_string_new(NULL);

	u->modes = g_new0(struct uvc_mode, UVC_MAX_MODES);
	for (fd_desc.index = 0;
	     fd_desc.index < 128 && v4l2cuse_uvc_ioctl(fd, VIDIOC_ENUM_FMT, &fd_desc) == 0;
	     fd_desc.index++) {
		uint32_t ours = v4l2cuse_uvc_our_fourcc(fd_desc.pixelformat, NULL);

		if (fd_desc.flags & V4L2_FMT_FLAG_EMULATED)
			continue;	/* libv4l2's own conversions: we do ours */
		if (!ours || (!v4l2cuse_convert_input_supported(ours) &&
			      !v4l2cuse_format_passthrough(ours))) {
			g_string_append_printf(skipped, "%s%.4s", skipped->len ? " " : "",
					       (const char *)&fd_desc.pixelformat);
			continue;
		}
		uvc_enum_sizes(u, fd, fd_desc.pixelformat, ours);
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
	uvc_snapshot_current(u, fd);
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
		if (v4l2cuse_format_offered(u->modes[i].fourcc))
			v4l2cuse_modes_add_format(&u->offered, u->modes[i].fourcc);
	}
	v4l2cuse_modes_add_output_formats(&u->offered);
	return 0;
}

const struct uvc_mode *
v4l2cuse_uvc_native(const struct uvc_source *u, uint32_t fourcc, uint32_t w, uint32_t h)
{
	for (unsigned int i = 0; i < u->n_modes; i++) {
		const struct uvc_mode *m = &u->modes[i];

		if (m->fourcc == fourcc && m->width == w && m->height == h)
			return m;
	}
	return NULL;
}

/* The camera mode that feeds @fourcc at @w x @h, NULL if there is none. */
const struct uvc_mode *
v4l2cuse_uvc_feed(const struct uvc_source *u, uint32_t fourcc, uint32_t w, uint32_t h)
{
	const struct uvc_mode *m = v4l2cuse_uvc_native(u, fourcc, w, h);
	const struct v4l2cuse_format_info *fi;

	if (m || v4l2cuse_format_passthrough(fourcc))
		return m;	/* H.264 and HEVC are never converted */
	/* format.c's order is the preference: Y'CbCr, RGB, grey, compressed. */
	for (unsigned int f = 0; (fi = v4l2cuse_format_lookup_by_index(f)); f++) {
		if ((m = v4l2cuse_uvc_native(u, fi->fourcc, w, h)))
			return m;
	}
	return NULL;
}

/*
 * The index-th distinct size a format is offered at: a camera format's
 * own, a converted one's every size a format the converter reads has.
 */
bool
v4l2cuse_uvc_size_at(const struct uvc_source *u, uint32_t fourcc, unsigned int index,
		     uint32_t *ret_w, uint32_t *ret_h)
{
	bool native = false;
	unsigned int n = 0;

	for (unsigned int i = 0; i < u->n_modes; i++)
		native |= u->modes[i].fourcc == fourcc;
	for (unsigned int i = 0; i < u->n_modes; i++) {
		const struct uvc_mode *m = &u->modes[i];
		bool dup = false;

		if (native ? m->fourcc != fourcc : v4l2cuse_format_passthrough(m->fourcc) != NULL)
			continue;
		for (unsigned int j = 0; j < i && !dup; j++) {
			const struct uvc_mode *p = &u->modes[j];

			dup = (native ? p->fourcc == fourcc : !v4l2cuse_format_passthrough(p->fourcc)) &&
			      p->width == m->width && p->height == m->height;
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
	    !v4l2cuse_uvc_size_at(u, fourcc, index, ret_width, ret_height))
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
