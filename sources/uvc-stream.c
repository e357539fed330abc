/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The uvc source's streams (uvc-private.h): a camera's formats through the
 * single- or the multi-planar API, setting a camera up and streaming (mmap
 * buffers, one mapping per plane), a dequeued frame as one picture in
 * format.c's layout, losing the camera (no signal at the negotiated rate on
 * the timerfd) and the thread that finds it again and hands a started
 * stream over through the eventfd, or tells that the camera is back but
 * refuses the stream.
 */

#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <glib.h>

#include "util/macros.h"
#include "v4l2cuse/format.h"
#include "uvc-private.h"

/*
 * The multi-planar formats whose planes lie apart, and the format.c format
 * that has the same planes in one buffer (the order of the chroma planes
 * swapped where format.c only has the other one).
 */
static const struct {
	uint32_t cam, ours;
	bool swap_uv;
} uvc_apart[] = {
	{ V4L2_PIX_FMT_NV12M, V4L2_PIX_FMT_NV12, false },
	{ V4L2_PIX_FMT_NV21M, V4L2_PIX_FMT_NV21, false },
	{ V4L2_PIX_FMT_YUV420M, V4L2_PIX_FMT_YUV420, false },
	{ V4L2_PIX_FMT_YVU420M, V4L2_PIX_FMT_YVU420, false },
	{ V4L2_PIX_FMT_NV16M, V4L2_PIX_FMT_NV16, false },
	{ V4L2_PIX_FMT_NV61M, V4L2_PIX_FMT_NV61, false },
	{ V4L2_PIX_FMT_YUV422M, V4L2_PIX_FMT_YUV422P, false },
	{ V4L2_PIX_FMT_YVU422M, V4L2_PIX_FMT_YUV422P, true },
	{ V4L2_PIX_FMT_YUV444M, V4L2CUSE_PIX_FMT_YUV444P, false },
	{ V4L2_PIX_FMT_YVU444M, V4L2CUSE_PIX_FMT_YUV444P, true },
};

uint32_t
v4l2cuse_uvc_our_fourcc(uint32_t cam_fourcc, bool *ret_swap_uv)
{
	if (ret_swap_uv)
		*ret_swap_uv = false;
	for (size_t i = 0; i < G_N_ELEMENTS(uvc_apart); i++) {
		if (uvc_apart[i].cam == cam_fourcc) {
			if (ret_swap_uv)
				*ret_swap_uv = uvc_apart[i].swap_uv;
			return uvc_apart[i].ours;
		}
	}
	if (v4l2cuse_format_lookup(cam_fourcc) || v4l2cuse_format_passthrough(cam_fourcc))
		return cam_fourcc;
	return 0;
}

static const char *
uvc_field_name(uint32_t field)
{
	static const char *const names[] = {
		[V4L2_FIELD_ANY] = "any", [V4L2_FIELD_NONE] = "progressive",
		[V4L2_FIELD_TOP] = "top field", [V4L2_FIELD_BOTTOM] = "bottom field",
		[V4L2_FIELD_INTERLACED] = "interlaced", [V4L2_FIELD_SEQ_TB] = "seq-tb",
		[V4L2_FIELD_SEQ_BT] = "seq-bt", [V4L2_FIELD_ALTERNATE] = "alternate",
		[V4L2_FIELD_INTERLACED_TB] = "interlaced-tb",
		[V4L2_FIELD_INTERLACED_BT] = "interlaced-bt",
	};

	return field < G_N_ELEMENTS(names) && names[field] ? names[field] : "unknown field order";
}

char *
v4l2cuse_uvc_describe(uint32_t fourcc, uint32_t width, uint32_t height, uint32_t field)
{
	return g_strdup_printf("%ux%u %.4s %s", width, height, (const char *)&fourcc,
			       uvc_field_name(field));
}

/* The camera's colorimetry with its defaults made explicit (videodev2.h's maps). */
static struct uvc_colour
uvc_colour_of(uint32_t fourcc, uint32_t height, uint32_t cs, uint32_t enc, uint32_t quant,
	      uint32_t xfer)
{
	const struct v4l2cuse_format_info *fi = v4l2cuse_format_lookup(fourcc);
	bool rgb = fi && !fi->yuv && !fi->compressed && fourcc != V4L2_PIX_FMT_GREY;
	struct uvc_colour c;

	if (cs == V4L2_COLORSPACE_DEFAULT) {
		if (fi && !fi->yuv && !fi->compressed)
			cs = V4L2_COLORSPACE_SRGB;
		else if (fi && fi->compressed && !v4l2cuse_format_passthrough(fourcc))
			cs = V4L2_COLORSPACE_JPEG;
		else
			cs = V4L2_MAP_COLORSPACE_DEFAULT(height < 720, height >= 720);
	}
	c.colorspace = cs;
	c.xfer_func = xfer ? xfer : V4L2_MAP_XFER_FUNC_DEFAULT(cs);
	c.ycbcr_enc = enc ? enc : V4L2_MAP_YCBCR_ENC_DEFAULT(cs);
	c.quantization = quant ? quant : V4L2_MAP_QUANTIZATION_DEFAULT(rgb, cs, c.ycbcr_enc);
	return c;
}

int
v4l2cuse_uvc_fmt(int fd, uint32_t buf_type, unsigned long req, struct uvc_camfmt *f)
{
	struct v4l2_format v = { .type = buf_type };
	bool mp = buf_type == V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE;
	int r;

	if (req != VIDIOC_G_FMT && mp) {
		v.fmt.pix_mp.pixelformat = f->cam_fourcc;
		v.fmt.pix_mp.width = f->width;
		v.fmt.pix_mp.height = f->height;
		v.fmt.pix_mp.field = f->field;
	} else if (req != VIDIOC_G_FMT) {
		v.fmt.pix.pixelformat = f->cam_fourcc;
		v.fmt.pix.width = f->width;
		v.fmt.pix.height = f->height;
		v.fmt.pix.field = f->field;
	}
	r = v4l2cuse_uvc_ioctl(fd, req, &v);
	if (r < 0)
		return r;
	memset(f, 0, sizeof(*f));
	if (mp) {
		const struct v4l2_pix_format_mplane *p = &v.fmt.pix_mp;

		f->cam_fourcc = p->pixelformat;
		f->width = p->width;
		f->height = p->height;
		f->field = p->field;
		f->n_planes = CLAMP_VAL(p->num_planes, 1u, (unsigned int)UVC_MAX_PLANES);
		for (unsigned int i = 0; i < f->n_planes; i++) {
			f->bytesperline[i] = p->plane_fmt[i].bytesperline;
			f->sizeimage += p->plane_fmt[i].sizeimage;
		}
		f->fourcc = v4l2cuse_uvc_our_fourcc(p->pixelformat, &f->swap_uv);
		f->colour = uvc_colour_of(f->fourcc, p->height, p->colorspace, p->ycbcr_enc,
					  p->quantization, p->xfer_func);
	} else {
		const struct v4l2_pix_format *p = &v.fmt.pix;

		f->cam_fourcc = p->pixelformat;
		f->width = p->width;
		f->height = p->height;
		f->field = p->field;
		f->n_planes = 1;
		f->bytesperline[0] = p->bytesperline;
		f->sizeimage = p->sizeimage;
		f->fourcc = v4l2cuse_uvc_our_fourcc(p->pixelformat, &f->swap_uv);
		/* Without EXT_PIX_FORMAT the fields after priv mean nothing. */
		if (p->priv == V4L2_PIX_FMT_PRIV_MAGIC)
			f->colour = uvc_colour_of(f->fourcc, p->height, p->colorspace, p->ycbcr_enc,
						  p->quantization, p->xfer_func);
		else
			f->colour = uvc_colour_of(f->fourcc, p->height, p->colorspace, 0, 0, 0);
	}
	/* Only the planes of a non-contiguous format lie apart. */
	if (f->fourcc == f->cam_fourcc)
		f->n_planes = 1;
	return 0;
}

void
v4l2cuse_uvc_stream_free(struct uvc_stream *s)
{
	struct v4l2_requestbuffers rb = { .type = s ? s->buf_type : 0, .memory = V4L2_MEMORY_MMAP };
	int type;

	if (!s)
		return;
	type = (int)s->buf_type;
	v4l2cuse_uvc_ioctl(s->fd, VIDIOC_STREAMOFF, &type);
	for (unsigned int i = 0; i < s->n_bufs; i++) {
		for (unsigned int p = 0; p < UVC_MAX_PLANES; p++) {
			if (s->mem[i][p])
				v4l2cuse_uvc_munmap(s->mem[i][p], s->len[i][p]);
		}
	}
	v4l2cuse_uvc_ioctl(s->fd, VIDIOC_REQBUFS, &rb);
	g_free(s->joined);
	g_free(s);
}

/* A v4l2_buffer for buffer @index of @s (its planes in @d for multi-planar). */
static void
uvc_buf_init(const struct uvc_stream *s, struct uvc_dqbuf *d, uint32_t index)
{
	memset(d, 0, sizeof(*d));
	d->b.type = s->buf_type;
	d->b.memory = V4L2_MEMORY_MMAP;
	d->b.index = index;
	if (s->buf_type == V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE) {
		d->b.m.planes = d->planes;
		d->b.length = UVC_MAX_PLANES;
	}
}

/* A buffer of field order @field holds whole frames (fields.h: nothing to weave). */
static bool
uvc_whole_frames(uint32_t field)
{
	return field == V4L2_FIELD_ANY || field == V4L2_FIELD_NONE ||
	       field == V4L2_FIELD_INTERLACED || field == V4L2_FIELD_INTERLACED_TB ||
	       field == V4L2_FIELD_INTERLACED_BT;
}

/* Whether the camera's answer @got is a stream @cfg can be served from. */
static bool
uvc_answer_fits(const struct uvc_config *cfg, const struct uvc_camfmt *got)
{
	const struct v4l2cuse_format_info *fi = v4l2cuse_format_lookup(got->fourcc);

	if (cfg->exact)
		return got->cam_fourcc == cfg->cam_fourcc && got->width == cfg->width &&
		       got->height == cfg->height && got->field == cfg->field;
	/* Progressive: anything the converter reads, its fields woven first. */
	if (!fi || !v4l2cuse_convert_input_supported(got->fourcc))
		return false;
	return !fi->compressed || uvc_whole_frames(got->field);
}

static int
uvc_map_buffers(struct uvc_stream *s, char **ret_why)
{
	struct v4l2_requestbuffers rb = {
		.type = s->buf_type, .memory = V4L2_MEMORY_MMAP, .count = s->n_bufs,
	};
	int r;

	r = v4l2cuse_uvc_ioctl(s->fd, VIDIOC_REQBUFS, &rb);
	if (r < 0) {
		*ret_why = g_strdup_printf("REQBUFS: %s", g_strerror(-r));
		return r;
	}
	if (rb.count < 2) {
		*ret_why = g_strdup_printf("REQBUFS: %u buffers", rb.count);
		return -ENOMEM;
	}
	s->n_bufs = MIN(rb.count, (uint32_t)UVC_MAX_BUFS);
	for (unsigned int i = 0; i < s->n_bufs; i++) {
		struct uvc_dqbuf d;
		unsigned int n;

		uvc_buf_init(s, &d, i);
		r = v4l2cuse_uvc_ioctl(s->fd, VIDIOC_QUERYBUF, &d.b);
		if (r < 0) {
			*ret_why = g_strdup_printf("QUERYBUF: %s", g_strerror(-r));
			return r;
		}
		bool mp = s->buf_type == V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE;

		n = mp ? MIN(d.b.length, (uint32_t)UVC_MAX_PLANES) : 1;
		for (unsigned int p = 0; p < n; p++) {
			size_t len = mp ? d.planes[p].length : d.b.length;
			int64_t off = mp ? d.planes[p].m.mem_offset : d.b.m.offset;

			s->mem[i][p] = v4l2cuse_uvc_mmap(s->fd, len, off);
			if (!s->mem[i][p]) {
				r = -errno ? -errno : -ENOMEM;
				*ret_why = g_strdup_printf("mmap: %s", g_strerror(-r));
				return r;
			}
			s->len[i][p] = len;
		}
		r = v4l2cuse_uvc_ioctl(s->fd, VIDIOC_QBUF, &d.b);
		if (r < 0) {
			*ret_why = g_strdup_printf("QBUF: %s", g_strerror(-r));
			return r;
		}
	}
	return 0;
}

int
v4l2cuse_uvc_stream_start(int fd, uint32_t buf_type, const struct uvc_config *cfg,
			  struct uvc_stream **ret, char **ret_why)
{
	struct uvc_stream *s = g_new0(struct uvc_stream, 1);
	struct v4l2_streamparm parm = { .type = buf_type };
	struct uvc_camfmt f = {
		.cam_fourcc = cfg->cam_fourcc, .width = cfg->width, .height = cfg->height,
		.field = cfg->field,
	};
	g_autofree char *asked = v4l2cuse_uvc_describe(cfg->cam_fourcc, cfg->width, cfg->height,
						       cfg->field);
	char *why = NULL;
	int type = (int)buf_type;
	int r;

	s->fd = fd;
	s->buf_type = buf_type;
	s->n_bufs = cfg->n_bufs;
	r = v4l2cuse_uvc_fmt(fd, buf_type, VIDIOC_S_FMT, &f);
	if (r < 0) {
		why = g_strdup_printf("S_FMT %s: %s", asked, g_strerror(-r));
		goto err;
	}
	if (!uvc_answer_fits(cfg, &f)) {
		g_autofree char *got = v4l2cuse_uvc_describe(f.cam_fourcc, f.width, f.height,
							     f.field);

		why = g_strdup_printf("asked for %s, it answered %s", asked, got);
		r = -EPIPE;	/* as the kernel's pipeline validation: formats differ */
		goto err;
	}
	s->fmt = f;
	parm.parm.capture.timeperframe = cfg->interval;
	v4l2cuse_uvc_ioctl(fd, VIDIOC_S_PARM, &parm);	/* best effort */

	r = uvc_map_buffers(s, &why);
	if (r < 0)
		goto err;
	r = v4l2cuse_uvc_ioctl(fd, VIDIOC_STREAMON, &type);
	if (r < 0) {
		why = g_strdup_printf("STREAMON %s: %s", asked, g_strerror(-r));
		goto err;
	}
	*ret = s;
	return 0;

err:
	if (ret_why)
		*ret_why = why;
	else
		g_free(why);
	v4l2cuse_uvc_stream_free(s);
	return r;
}

int
v4l2cuse_uvc_dqbuf(struct uvc_stream *s, struct uvc_dqbuf *d)
{
	int r;

	uvc_buf_init(s, d, 0);
	r = v4l2cuse_uvc_ioctl(s->fd, VIDIOC_DQBUF, &d->b);
	if (r == 0 && d->b.index >= s->n_bufs)
		return -EIO;
	return r;
}

int
v4l2cuse_uvc_qbuf(struct uvc_stream *s, struct uvc_dqbuf *d)
{
	uint32_t index = d->b.index;

	uvc_buf_init(s, d, index);
	return v4l2cuse_uvc_ioctl(s->fd, VIDIOC_QBUF, &d->b);
}

/* Non-contiguous planes into one frame in format.c's layout (natural lines). */
static int
uvc_join(struct uvc_stream *s, const struct uvc_dqbuf *d, const struct v4l2cuse_format_info *fi,
	 struct v4l2cuse_image *ret)
{
	const struct uvc_camfmt *f = &s->fmt;
	size_t off[3], stride[3];
	size_t size = v4l2cuse_format_frame_size(fi, f->width, f->height, 0, off, stride);

	if (!size || f->n_planes != fi->n_planes)
		return -EINVAL;
	if (s->joined_len < size) {
		g_free(s->joined);
		s->joined = g_malloc(size);
		s->joined_len = size;
	}
	for (unsigned int p = 0; p < f->n_planes; p++) {
		unsigned int to = f->swap_uv && p ? 3 - p : p;
		uint32_t lines = p ? f->height / fi->vdiv : f->height;
		size_t data_off = d->planes[p].data_offset;
		size_t need = data_off + (size_t)f->bytesperline[p] * (lines - 1) + stride[to];

		if (f->bytesperline[p] < stride[to] || need > s->len[d->b.index][p])
			return -EINVAL;
		for (uint32_t y = 0; y < lines; y++)
			memcpy(s->joined + off[to] + stride[to] * y,
			       (const uint8_t *)s->mem[d->b.index][p] + data_off +
				       (size_t)f->bytesperline[p] * y,
			       stride[to]);
	}
	*ret = (struct v4l2cuse_image){
		.fourcc = f->fourcc, .width = f->width, .height = f->height,
		.bytesperline = 0, .data = s->joined, .size = size,
	};
	return 0;
}

int
v4l2cuse_uvc_image(struct uvc_stream *s, const struct uvc_dqbuf *d, struct v4l2cuse_image *ret)
{
	const struct uvc_camfmt *f = &s->fmt;
	const struct v4l2cuse_format_info *fi = v4l2cuse_format_lookup(f->fourcc);
	bool mp = s->buf_type == V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE;
	size_t len = s->len[d->b.index][0];
	size_t start = mp ? d->planes[0].data_offset : 0;
	size_t used = mp ? d->planes[0].bytesused : d->b.bytesused;

	int r = 0;

	if (f->n_planes > 1) {
		r = fi ? uvc_join(s, d, fi, ret) : -EINVAL;
	} else if (start >= len) {
		r = -EINVAL;
	} else {
		used = used > start && used <= len ? used - start : len - start;
		*ret = (struct v4l2cuse_image){
			.fourcc = f->fourcc, .width = f->width, .height = f->height,
			.bytesperline = f->bytesperline[0],
			.data = (const uint8_t *)s->mem[d->b.index][0] + start,
			/* Raw frames: the whole buffer (bytesused may leave out padding). */
			.size = fi && !fi->compressed ? len - start : used,
		};
	}
	if (r == 0) {
		/* Read in the encoding the camera reports (its defaults made explicit). */
		ret->ycbcr_enc = f->colour.ycbcr_enc;
		ret->quantization = f->colour.quantization;
	}
	return r;
}

/* A try found no camera at the path, or another one: start() stops waiting. */
static void
uvc_open_failed(struct uvc_source *u)
{
	g_mutex_lock(&u->lock);
	u->open_failed = true;
	g_mutex_unlock(&u->lock);
}

/*
 * Opens the camera off the dispatcher (the open resumes a suspended USB
 * camera, STREAMON starts it: both take their time), at start() at once,
 * after an unplug every retry_ms, until it is there and the same camera.
 */
static gpointer
uvc_reconnect_thread(gpointer data)
{
	struct uvc_source *u = data;
	struct uvc_config cfg;
	bool warned = false, now;

	g_mutex_lock(&u->lock);
	cfg = u->cfg;	/* the configuration of the stream to set up */
	now = u->retry_now;
	g_mutex_unlock(&u->lock);
	for (;; now = false) {
		int64_t until = g_get_monotonic_time() + (int64_t)u->retry_ms * 1000;
		struct uvc_stream *s = NULL;
		struct uvc_ident id;
		char *why = NULL;
		uint64_t one = 1, gen;
		int fd, r;

		g_mutex_lock(&u->lock);
		while (!now && !u->quit && g_cond_wait_until(&u->cond, &u->lock, until))
			;
		if (u->quit) {
			g_mutex_unlock(&u->lock);
			return NULL;
		}
		g_mutex_unlock(&u->lock);

		fd = v4l2cuse_uvc_open(u->path, &id, NULL);
		if (fd < 0) {
			uvc_open_failed(u);
			continue;
		}
		if (strcmp(id.card, u->ident.card) != 0 ||
		    strcmp(id.bus_info, u->ident.bus_info) != 0 || id.buf_type != u->ident.buf_type) {
			if (!warned)
				g_message("uvc: '%s' is now '%s' (%s), not '%s' (%s): waiting",
					  u->path, id.card, id.bus_info, u->ident.card,
					  u->ident.bus_info);
			warned = true;
			v4l2cuse_uvc_close(fd);
			uvc_open_failed(u);
			continue;
		}
		v4l2cuse_uvc_subscribe_controls(u, fd);
		gen = v4l2cuse_uvc_apply_controls(u, fd);
		r = v4l2cuse_uvc_stream_start(fd, u->ident.buf_type, &cfg, &s, &why);
		if (r < 0 && v4l2cuse_uvc_is_gone_error(r) && !v4l2cuse_uvc_present(fd)) {
			/* Gone again while it was set up. */
			g_free(why);
			v4l2cuse_uvc_close(fd);
			uvc_open_failed(u);
			continue;
		}
		g_mutex_lock(&u->lock);
		u->pending_fd = fd;
		u->pending = s;
		u->pending_refused = r;
		u->pending_why = why;
		u->pending_gen = gen;
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
	u->retry_now = false;
	u->open_failed = false;
	/* A stream handed over but never adopted. */
	if (u->pending_fd >= 0) {
		v4l2cuse_uvc_stream_free(u->pending);
		v4l2cuse_uvc_close(u->pending_fd);
	}
	u->pending = NULL;
	u->pending_fd = -1;
	u->pending_refused = 0;
	g_clear_pointer(&u->pending_why, g_free);
}

void
v4l2cuse_uvc_thread_start(struct uvc_source *u, bool now)
{
	if (u->thread)
		return;
	u->quit = false;
	u->retry_now = now;
	u->open_failed = false;
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
		v4l2cuse_uvc_watch_controls(u, -1);
		v4l2cuse_uvc_close(u->fd);
		u->fd = -1;
	}
	v4l2cuse_uvc_timer_arm(u, true);
	v4l2cuse_uvc_thread_start(u, false);
}

void
v4l2cuse_uvc_adopt(struct uvc_source *u, int fd, struct uvc_stream *s)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = 0 };

	u->fd = fd;
	u->stream = s;
	v4l2cuse_uvc_watch_controls(u, fd);
	epoll_ctl(u->epfd, EPOLL_CTL_ADD, fd, &ev);
	v4l2cuse_uvc_timer_arm(u, false);
	v4l2cuse_weave_reset(u->weave);
	if (u->nal)
		v4l2cuse_nal_reset(u->nal);
	if (u->opening)
		g_debug("uvc: '%s' opened (%.4s %ux%u)", u->path,
			(const char *)&s->fmt.cam_fourcc, s->fmt.width, s->fmt.height);
	else
		g_message("uvc: '%s' is back (%.4s %ux%u)", u->path,
			  (const char *)&s->fmt.cam_fourcc, s->fmt.width, s->fmt.height);
	u->opening = false;
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
