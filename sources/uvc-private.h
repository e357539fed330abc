/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The uvc source's insides (the source: uvc.c), split along its seams:
 *
 *   uvc.c           the source's life cycle and frames (create, start, stop,
 *                   produce)
 *   uvc-snapshot.c  opening a camera, and what it offers: its modes at
 *                   create() and the formats, sizes and intervals enumerated
 *   uvc-ctrls.c     the camera's controls: snapshot, get, set, re-apply
 *   uvc-stream.c    a camera stream (buffers, STREAMON), losing the camera,
 *                   the reconnect thread
 */

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>
#include <linux/videodev2.h>

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
	struct v4l2cuse_convert *cv;

	/* The snapshot. */
	struct uvc_mode *modes;
	unsigned int n_modes;
	/* Its formats only: sizes and rates are the modes'. */
	struct v4l2cuse_modes offered;
	struct uvc_ctrl *ctrls;
	unsigned int n_ctrls;

	/* Streaming (dispatcher thread). */
	bool started;
	struct v4l2_pix_format pix;
	struct v4l2_fract out_iv;
	struct uvc_config cfg;
	struct uvc_stream *stream;	/* NULL while the camera is gone */
	int epfd, timerfd, evfd;
	struct v4l2cuse_ratelimit rl_drop, rl_lost;

	/* The reconnect thread; lock protects quit, pending and values. */
	GThread *thread;
	GMutex lock;
	GCond cond;
	bool quit;
	int pending_fd;
	struct uvc_stream *pending;
	int64_t values[UVC_MAX_CTRLS];
};

static inline struct uvc_source *
uvc_from(struct v4l2cuse_source *src)
{
	return (struct uvc_source *)src;
}


/* uvc.c: ioctl on the camera (libv4l2), retried on EINTR; -errno. */
int v4l2cuse_uvc_ioctl(int fd, unsigned long req, void *arg);

/* uvc-snapshot.c */
/* Open @path as a V4L2 capture device with streaming I/O: the fd or -errno. */
int v4l2cuse_uvc_open(const char *path, struct uvc_ident *ret_ident, char **ret_error);
int v4l2cuse_uvc_snapshot_formats(struct uvc_source *u, int fd, char **ret_error);
int v4l2cuse_uvc_parse_formats(struct uvc_source *u, const struct v4l2cuse_opts *o,
			       char **ret_error);
const struct uvc_mode *v4l2cuse_uvc_feed(const struct uvc_source *u, uint32_t fourcc, uint32_t w,
					 uint32_t h);
int v4l2cuse_uvc_enum_format(struct v4l2cuse_source *src, unsigned int index, uint32_t *ret_fourcc);
int v4l2cuse_uvc_enum_framesize(struct v4l2cuse_source *src, uint32_t fourcc, unsigned int index,
				uint32_t *ret_width, uint32_t *ret_height);
int v4l2cuse_uvc_enum_frameinterval(struct v4l2cuse_source *src, uint32_t fourcc, uint32_t width,
				    uint32_t height, unsigned int index, struct v4l2_fract *ret);

/* uvc-ctrls.c */
void v4l2cuse_uvc_ctrl_free(struct uvc_ctrl *c);
void v4l2cuse_uvc_snapshot_controls(struct uvc_source *u, int fd);
void v4l2cuse_uvc_apply_controls(struct uvc_source *u, int fd);
const struct v4l2cuse_control *v4l2cuse_uvc_control(struct v4l2cuse_source *src,
						    unsigned int index);
int v4l2cuse_uvc_get_control(struct v4l2cuse_source *src, uint32_t id, int64_t *ret_value);
int v4l2cuse_uvc_set_control(struct v4l2cuse_source *src, uint32_t id, int64_t value);

/* uvc-stream.c */
void v4l2cuse_uvc_stream_free(struct uvc_stream *s);
int v4l2cuse_uvc_stream_start(int fd, const struct uvc_config *cfg, struct uvc_stream **ret);
void v4l2cuse_uvc_thread_start(struct uvc_source *u);
void v4l2cuse_uvc_thread_stop(struct uvc_source *u);
void v4l2cuse_uvc_timer_arm(struct uvc_source *u, bool on);
void v4l2cuse_uvc_lose(struct uvc_source *u, int r);
void v4l2cuse_uvc_adopt(struct uvc_source *u, int fd, struct uvc_stream *s);
bool v4l2cuse_uvc_is_gone_error(int r);
int v4l2cuse_uvc_no_signal(struct uvc_source *u);
