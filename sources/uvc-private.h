/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The uvc source's insides (the source: uvc.c), split along its seams:
 *
 *   uvc.c           the source's life cycle and frames (create, negotiate,
 *                   start, stop, produce), and the camera backend
 *   uvc-snapshot.c  opening a camera, and what it offers: its modes at
 *                   create() and the formats, sizes and intervals enumerated
 *   uvc-ctrls.c     the camera's controls: snapshot, get, set, re-apply,
 *                   the camera's control events
 *   uvc-stream.c    a camera stream (formats single- and multi-planar,
 *                   buffers, STREAMON, a dequeued frame as one picture),
 *                   losing the camera, the thread that opens it (at
 *                   start(), and after an unplug)
 */

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>
#include <linux/videodev2.h>

#include "v4l2cuse/source.h"
#include "convert.h"
#include "fields.h"
#include "modes.h"
#include "nal.h"
#include "ratelimit.h"

#define UVC_MAX_MODES		512
#define UVC_MAX_INTERVALS	16
#define UVC_MAX_CTRLS		128
#define UVC_MAX_MENU		64
#define UVC_MAX_BUFS		16
#define UVC_MAX_PLANES		3

/*
 * How the source reaches a camera: libv4l2 (uvc.c), or, in the unit
 * tests, a fake camera (v4l2cuse_uvc_set_backend()). Errors are -errno.
 */
struct uvc_backend {
	/* Open @path read-write, non-blocking, close-on-exec: an fd. */
	int (*open)(const char *path);
	/* @fd answered QUERYCAP as a capture device: take it over. */
	int (*attach)(int fd);
	void (*close)(int fd);
	/* ioctl() on @fd: >= 0 or -errno (EINTR is retried by the caller). */
	int (*ioctl)(int fd, unsigned long req, void *arg);
	/* Map a buffer plane (MAP_SHARED, read-write): the address or NULL. */
	void *(*mmap)(int fd, size_t length, int64_t offset);
	void (*munmap)(void *addr, size_t length);
	/* The fd, and its epoll events, that say a control event is pending. */
	int (*event_fd)(int fd, uint32_t *ret_events);
};

/* NULL: libv4l2 again. Before any uvc source is created (tests only). */
void v4l2cuse_uvc_set_backend(const struct uvc_backend *be);

/* The camera's colorimetry, defaults resolved (format.h never says DEFAULT). */
struct uvc_colour {
	uint32_t colorspace, ycbcr_enc, quantization, xfer_func;
};

/* One camera format at one size. */
struct uvc_mode {
	uint32_t fourcc;		/* ours: the frame in format.c's single-buffer layout */
	uint32_t cam_fourcc;		/* the camera's (NV12M for NV12, ...) */
	uint32_t width, height;		/* the frame (both fields) */
	uint32_t field;			/* what the camera answers when asked for NONE */
	uint32_t fields;		/* 1u << V4L2_FIELD_*: the orders it delivers */
	uint32_t sizeimage;		/* the camera's (compressed formats: its bound) */
	struct uvc_colour colour;	/* at this size */
	struct v4l2_fract intervals[UVC_MAX_INTERVALS];
	unsigned int n_intervals;
};

struct uvc_ident {
	char card[32];
	char bus_info[32];
	uint32_t buf_type;		/* V4L2_BUF_TYPE_VIDEO_CAPTURE or _MPLANE */
};

/* A camera format, single- or multi-planar, as the source works with it. */
struct uvc_camfmt {
	uint32_t cam_fourcc;		/* as the camera names it */
	uint32_t fourcc;		/* ours (0: none of format.c's) */
	bool swap_uv;			/* its chroma planes are in the other order */
	uint32_t width, height, field;	/* height: V4L2's (a field's for TOP/BOTTOM/ALTERNATE) */
	unsigned int n_planes;		/* memory planes: 1, or 2..3 non-contiguous */
	uint32_t bytesperline[UVC_MAX_PLANES];
	uint32_t sizeimage;		/* all planes */
	struct uvc_colour colour;
};

/* What a stream is asked for. */
struct uvc_config {
	uint32_t cam_fourcc, width, height, field;
	/* Interlaced or compressed passthrough: nothing but exactly this will do. */
	bool exact;
	struct v4l2_fract interval;
	unsigned int n_bufs;
};

/* A started camera stream on an open fd. */
struct uvc_stream {
	int fd;
	uint32_t buf_type;
	struct uvc_camfmt fmt;		/* what the camera delivers */
	unsigned int n_bufs;
	void *mem[UVC_MAX_BUFS][UVC_MAX_PLANES];
	size_t len[UVC_MAX_BUFS][UVC_MAX_PLANES];
	uint8_t *joined;		/* non-contiguous planes joined into one frame */
	size_t joined_len;
};

/* One dequeued camera buffer. */
struct uvc_dqbuf {
	struct v4l2_buffer b;
	struct v4l2_plane planes[UVC_MAX_PLANES];
};

struct uvc_ctrl {
	struct v4l2cuse_control desc;
	char name[32];
	char *menu_store[UVC_MAX_MENU + 1];
	int64_t menu_int[UVC_MAX_MENU + 1];
};

struct uvc_source {
	struct v4l2cuse_source base;
	char *path;
	struct uvc_ident ident;
	int fd;				/* the camera, -1 while it is closed or gone */
	unsigned int n_bufs;
	unsigned int retry_ms;
	bool keep_open;			/* open from create() on, not only while streaming */
	struct v4l2cuse_convert *cv;
	struct v4l2cuse_weave *weave;
	struct v4l2cuse_nal *nal;

	/* The snapshot. */
	struct uvc_mode *modes;
	unsigned int n_modes;
	/* Its formats only: sizes and rates are the modes'. */
	struct v4l2cuse_modes offered;
	/* The camera's format and rate at create(): the default. */
	struct v4l2_pix_format cur;
	struct v4l2_fract cur_interval;
	struct uvc_ctrl *ctrls;
	unsigned int n_ctrls;
	int ctl_epfd;			/* control_fd(): the camera's event fd while it is there */
	int ctl_fd;			/* what is in ctl_epfd, -1 if nothing */

	/* Streaming (dispatcher thread). */
	bool started;
	struct v4l2_pix_format pix;
	struct v4l2_fract out_iv;
	struct uvc_config cfg;
	struct uvc_stream *stream;	/* NULL while the camera is gone */
	bool refused;			/* the camera is back but refuses cfg */
	bool opening;			/* start() asked the thread to open it */
	int64_t open_deadline;		/* monotonic us: no placeholder before, while opening */
	int epfd, timerfd, evfd;
	struct v4l2cuse_ratelimit rl_drop, rl_lost;

	/*
	 * The thread that opens the camera (at start(), or after an unplug);
	 * lock protects quit, retry_now, open_failed, pending*, values and
	 * values_gen.
	 */
	GThread *thread;
	GMutex lock;
	GCond cond;
	bool quit;
	bool retry_now;			/* the first try at once (start()), not after retry_ms */
	bool open_failed;		/* a try found no camera, or another one */
	int pending_fd;
	struct uvc_stream *pending;
	int pending_refused;		/* -errno: back, but the stream was refused */
	char *pending_why;		/* what the camera answered then */
	uint64_t pending_gen;		/* the values_gen applied to it */
	int64_t values[UVC_MAX_CTRLS];
	uint64_t values_gen;		/* bumped by every set_control() */
};

static inline struct uvc_source *
uvc_from(struct v4l2cuse_source *src)
{
	return (struct uvc_source *)src;
}


/* uvc.c: the backend's calls; ioctls are retried on EINTR. */
int v4l2cuse_uvc_ioctl(int fd, unsigned long req, void *arg);
int v4l2cuse_uvc_backend_open(const char *path);
int v4l2cuse_uvc_backend_attach(int fd);
void v4l2cuse_uvc_close(int fd);
void *v4l2cuse_uvc_mmap(int fd, size_t length, int64_t offset);
void v4l2cuse_uvc_munmap(void *addr, size_t length);
int v4l2cuse_uvc_event_fd(int fd, uint32_t *ret_events);

/* uvc-snapshot.c */
/* Open @path as a V4L2 capture device with streaming I/O: the fd or -errno. */
int v4l2cuse_uvc_open(const char *path, struct uvc_ident *ret_ident, char **ret_error);
/* @fd still answers (the camera is there), whatever an ioctl said. */
bool v4l2cuse_uvc_present(int fd);
int v4l2cuse_uvc_snapshot_formats(struct uvc_source *u, int fd, char **ret_error);
int v4l2cuse_uvc_parse_formats(struct uvc_source *u, const struct v4l2cuse_opts *o,
			       char **ret_error);
const struct uvc_mode *v4l2cuse_uvc_feed(const struct uvc_source *u, uint32_t fourcc, uint32_t w,
					 uint32_t h);
/* The mode of exactly @fourcc at @w x @h (no conversion), NULL if none. */
const struct uvc_mode *v4l2cuse_uvc_native(const struct uvc_source *u, uint32_t fourcc,
					   uint32_t w, uint32_t h);
bool v4l2cuse_uvc_size_at(const struct uvc_source *u, uint32_t fourcc, unsigned int index,
			  uint32_t *ret_w, uint32_t *ret_h);
int v4l2cuse_uvc_enum_format(struct v4l2cuse_source *src, unsigned int index, uint32_t *ret_fourcc);
int v4l2cuse_uvc_enum_framesize(struct v4l2cuse_source *src, uint32_t fourcc, unsigned int index,
				uint32_t *ret_width, uint32_t *ret_height);
int v4l2cuse_uvc_enum_frameinterval(struct v4l2cuse_source *src, uint32_t fourcc, uint32_t width,
				    uint32_t height, unsigned int index, struct v4l2_fract *ret);

/* uvc-ctrls.c */
void v4l2cuse_uvc_ctrl_free(struct uvc_ctrl *c);
void v4l2cuse_uvc_snapshot_controls(struct uvc_source *u, int fd);
/* Subscribe @fd to the control events of every forwarded control. */
void v4l2cuse_uvc_subscribe_controls(struct uvc_source *u, int fd);
/* Set the remembered values on @fd: the values_gen they are of. */
uint64_t v4l2cuse_uvc_apply_controls(struct uvc_source *u, int fd);
/* Watch @fd's control events (control_fd()), or nothing with -1. */
void v4l2cuse_uvc_watch_controls(struct uvc_source *u, int fd);
const struct v4l2cuse_control *v4l2cuse_uvc_control(struct v4l2cuse_source *src,
						    unsigned int index);
int v4l2cuse_uvc_get_control(struct v4l2cuse_source *src, uint32_t id, int64_t *ret_value);
int v4l2cuse_uvc_set_control(struct v4l2cuse_source *src, uint32_t id, int64_t value);
int v4l2cuse_uvc_control_fd(struct v4l2cuse_source *src);
void v4l2cuse_uvc_control_update(struct v4l2cuse_source *src);

/* uvc-stream.c */
/*
 * G_FMT (@req 0), TRY_FMT or S_FMT of @f on @fd, single- or multi-planar
 * by @buf_type; on success @f is what the camera answered.
 */
int v4l2cuse_uvc_fmt(int fd, uint32_t buf_type, unsigned long req, struct uvc_camfmt *f);
/* Our fourcc (format.c's single-buffer layout) for a camera's fourcc, 0 if none. */
uint32_t v4l2cuse_uvc_our_fourcc(uint32_t cam_fourcc, bool *ret_swap_uv);
/* "720x480 YUYV interlaced" */
char *v4l2cuse_uvc_describe(uint32_t fourcc, uint32_t width, uint32_t height, uint32_t field);
void v4l2cuse_uvc_stream_free(struct uvc_stream *s);
/*
 * Configure @fd as @cfg says and stream. On failure -errno and, when not
 * NULL, one line in *ret_why naming what the camera answered.
 */
int v4l2cuse_uvc_stream_start(int fd, uint32_t buf_type, const struct uvc_config *cfg,
			      struct uvc_stream **ret, char **ret_why);
/* DQBUF without waiting: 0, -EAGAIN, or the camera's error. */
int v4l2cuse_uvc_dqbuf(struct uvc_stream *s, struct uvc_dqbuf *d);
int v4l2cuse_uvc_qbuf(struct uvc_stream *s, struct uvc_dqbuf *d);
/* The dequeued frame as one picture (planes joined when they are apart). */
int v4l2cuse_uvc_image(struct uvc_stream *s, const struct uvc_dqbuf *d,
		       struct v4l2cuse_image *ret);
/* Look for the camera: at once if @now (start()), else after retry_ms. */
void v4l2cuse_uvc_thread_start(struct uvc_source *u, bool now);
void v4l2cuse_uvc_thread_stop(struct uvc_source *u);
void v4l2cuse_uvc_timer_arm(struct uvc_source *u, bool on);
void v4l2cuse_uvc_lose(struct uvc_source *u, int r);
void v4l2cuse_uvc_adopt(struct uvc_source *u, int fd, struct uvc_stream *s);
bool v4l2cuse_uvc_is_gone_error(int r);
int v4l2cuse_uvc_no_signal(struct uvc_source *u);
