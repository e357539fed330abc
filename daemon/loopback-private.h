/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What the files of a loopback share (loopback.c: the registry, the specs,
 * what both ends have in common; loopback-writer.c: the writer end;
 * loopback-capture.c: the capture end). See loopback.h.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <glib.h>
#include <linux/videodev2.h>

#include "v4l2cuse/source.h"
#include "util/clock.h"
#include "modes.h"
#include "loopback.h"

struct v4l2cuse_convert;

/* v4l2loopback's control ids (its V4L2LOOPBACK_CID_BASE is ours too). */
#define LB_CID_KEEP_FORMAT		(V4L2CUSE_CID_PRIVATE_BASE + 0)
#define LB_CID_SUSTAIN_FRAMERATE	(V4L2CUSE_CID_PRIVATE_BASE + 1)
#define LB_CID_TIMEOUT			(V4L2CUSE_CID_PRIVATE_BASE + 2)
#define LB_TIMEOUT_MAX_MS		100000
#define LB_FEED_TIMEOUT_MS		3000	/* pipewire:'s default timeout= */

/*
 * The v4l2loopback-style knobs: a capture end's options, a loopback's
 * values. The size limits are even (every subsampled format takes them).
 */
struct lb_knobs {
	bool keep_format, sustain_framerate, compat;
	bool feed;				/* pipewire:: v4l2cuse-pipewire writes */
	char feed_target[V4L2CUSE_FEED_TARGET_MAX];	/* its PipeWire node ("": default) */
	int64_t timeout_ms;
	uint32_t min_width, max_width, min_height, max_height;	/* writers' sizes */
};

struct loopback {
	struct v4l2cuse_loopbacks *reg;	/* NULL: unbound */
	char *name;			/* the writer node */
	unsigned int refs;

	/*
	 * The knobs: the options of the newest capture end (the tail of
	 * @ends), changed later by the writer node's controls. A reload
	 * builds the new capture end, then the new writer node (whose controls
	 * start from the knobs), while the old ones still hold the loopback,
	 * and frees the old ones once every new device is built; a reload
	 * refused midway frees the new ones instead, and the newest capture
	 * end puts back the knobs it found.
	 */
	struct lb_knobs knobs;
	GQueue ends;			/* struct lb_source *, every capture end, oldest first */

	/* The newest whole frame. */
	uint8_t *data;
	size_t alloc;
	uint32_t bytesused;
	struct v4l2_pix_format fmt;
	uint64_t gen;			/* frames taken; 0: none yet */
	uint64_t at_ns;			/* CLOCK_MONOTONIC when it came */

	/* The writer. */
	bool connected;
	pid_t pid;
	char comm[16];
	struct v4l2_pix_format writer_fmt;
	bool has_kept;			/* keep_format: later writers keep writer_fmt */
	uint64_t refused, dropped;
	GQueue captures;		/* struct lb_source *, started capture ends */
	GQueue watchers;		/* struct lb_source *, writer ends told of readers */
};

struct v4l2cuse_loopbacks {
	GHashTable *by_name;		/* name -> struct loopback * */
};

enum lb_end {
	LB_WRITER,
	LB_CAPTURE,
};

struct lb_source {
	/* First: the base and, for the capture end, its offer (the enum_* ops). */
	struct v4l2cuse_modes_source ms;
	struct loopback *lb;
	enum lb_end end;

	/* The writer end: who hears of changes in the number of readers. */
	void (*readers_changed)(void *data);
	void *readers_data;
	GList watch_link;		/* in lb->watchers while watching */

	/* The capture end. */
	unsigned int readers;		/* its device's consumers that stream */
	struct lb_knobs knobs;		/* its options */
	struct lb_knobs found;		/* the loopback's knobs before them */
	GList end_link;			/* in lb->ends once set up */
	struct v4l2_pix_format pix;
	bool started;
	struct v4l2cuse_convert *cv;
	uint8_t *cache;			/* the newest frame in pix, for repeats */
	uint32_t cache_used;		/* its bytesused */
	uint64_t cache_gen;		/* the writer frame in it; 0: empty */
	bool cache_is_lb;		/* a raw frame: the loopback's own data is
					 * the cache (cache_gen is its gen) */
	uint64_t shown_gen;		/* the writer frame shown last */
	GList link;			/* in lb->captures while started */
	/* Its wake fd: an epoll set of a frame-written eventfd and its pace. */
	int epfd, evfd, tfd;
	struct v4l2_fract interval;	/* the negotiated frame interval */
	uint64_t delivered_ns;		/* when the last frame went out */
};

extern const struct v4l2cuse_source_ops lb_writer_ops, lb_capture_ops;

static inline struct lb_source *
lb_of(struct v4l2cuse_source *src)
{
	return (struct lb_source *)src;
}

static inline bool
lb_is(struct v4l2cuse_source *src)
{
	return src && (src->ops == &lb_writer_ops || src->ops == &lb_capture_ops);
}

/* loopback.c: the ops both ends share. */
void lb_destroy(struct v4l2cuse_source *src);
int lb_create(const char *args, struct v4l2cuse_source **ret_src, char **ret_error);
const struct v4l2cuse_control *lb_control(struct v4l2cuse_source *src, unsigned int index);
int lb_get_control(struct v4l2cuse_source *src, uint32_t id, int64_t *ret);
int lb_set_control(struct v4l2cuse_source *src, uint32_t id, int64_t value);
void lb_set_keep_format(struct loopback *lb, bool keep);
int lb_parse_opts(const char *spec, struct v4l2cuse_opts **ret_o, char **ret_writer,
		  char **ret_target, char **ret_error);

/* loopback-capture.c */
int lb_capture_setup(struct lb_source *s, const char *spec, char **ret_error);
void lb_capture_stop(struct v4l2cuse_source *src);
/* Out of lb->ends; the knobs it replaced come back if it was the newest. */
void lb_capture_leave(struct lb_source *s);

