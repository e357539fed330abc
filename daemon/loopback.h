/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Loopback: an app writes frames into a writer node, other apps capture
 * them from a capture device (docs/loopback.md).
 *
 * A capture device whose source is "loopback:WRITER[,options]" reads the
 * frames written to /dev/WRITER, an output device that the daemon creates
 * next to it (the manager makes it; its own source is the "writer end",
 * "loopback-writer:WRITER"). Both ends find each other by the writer's
 * node name in a registry (owned by the hub, daemon/hub.c). The writer end
 * takes any format of format.c at any size; each capture end converts and
 * scales the newest written frame to its device's format, at its device's
 * rate (repeating or skipping frames), and reports no signal (the
 * placeholder) before the first frame and after the timeout.
 *
 * Capture end options: sizes=, formats=, fps= (the modes it offers, as the
 * test pattern's; default the same), keep_format=0|1, sustain_framerate=0|1
 * (default 1), timeout=MS (default 0: none), compat=0|1 (the writer node
 * reports driver "v4l2 loopback" and bus_info "platform:v4l2loopback-NNN",
 * for apps that look for v4l2loopback), min_width, max_width, min_height,
 * max_height (the sizes writers may set, default 2 to
 * V4L2CUSE_MAX_WIDTH/HEIGHT, made even). keep_format, sustain_framerate and
 * timeout are also controls of the writer node, named as v4l2loopback's.
 *
 * Loop thread only.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/videodev2.h>

#include "v4l2cuse/ctl-protocol.h"

struct v4l2cuse_source;
struct v4l2cuse_loopbacks;

struct v4l2cuse_loopbacks *v4l2cuse_loopbacks_new(void);
void v4l2cuse_loopbacks_free(struct v4l2cuse_loopbacks *reg);	/* NULL-safe */

/*
 * Whether @spec names a loopback end ("loopback...", "loopback-writer..."
 * or a feed, "pipewire...").
 */
bool v4l2cuse_loopback_is_spec(const char *spec);
/*
 * Whether @spec is a feed, "pipewire:[TARGET][,writer=videoN][,options]":
 * a loopback whose writer is v4l2cuse-pipewire, capturing the PipeWire
 * node TARGET (docs/pipewire.md). The capture end's options are the
 * loopback's; timeout= defaults to 3000 ms.
 */
bool v4l2cuse_loopback_is_feed_spec(const char *spec);

/*
 * The writer node named in a capture end's @spec ("loopback:video43,..."),
 * NULL when it names none (g_free). -EINVAL with one line in *ret_error for
 * a bad spec (a bad name or option); 0 otherwise.
 */
int v4l2cuse_loopback_parse(const char *spec, char **ret_writer, char **ret_error);

/* A capture end's @spec naming @writer as its writer node (g_free). */
char *v4l2cuse_loopback_spec_with_writer(const char *spec, const char *writer);

/*
 * Either end for @spec, bound through @reg (NULL: unbound, as for
 * --check-config). 0, or -errno with one line in *ret_error.
 */
int v4l2cuse_loopback_create(struct v4l2cuse_loopbacks *reg, const char *spec,
			     struct v4l2cuse_source **ret_src, char **ret_error);

/* What v4l2cuse-ctl list shows of a loopback. */
struct v4l2cuse_loopback_stats {
	bool writer_end;		/* the source is the writer end */
	bool connected;			/* a writer writes or streams now */
	pid_t pid;			/* the writer's (0: none yet) */
	char comm[16];
	struct v4l2_pix_format fmt;	/* the writer's format */
	uint64_t written;		/* whole frames taken from writers */
	uint64_t refused;		/* writes refused: short, oversized, not a frame */
	uint64_t dropped;		/* written frames no reader got (faster writer) */
	bool compat;			/* driver and bus_info as v4l2loopback's */
	bool feed;			/* a pipewire: device */
	char feed_target[V4L2CUSE_FEED_TARGET_MAX];
	struct v4l2_pix_format want;	/* the readers' format (width 0: none streams) */
	struct v4l2_fract want_interval;	/* and their frame interval */
	uint32_t min_width, max_width;	/* the sizes writers may set */
	uint32_t min_height, max_height;
};

/* 0, or -EINVAL when @src is not a loopback end. */
int v4l2cuse_loopback_get_stats(struct v4l2cuse_source *src, struct v4l2cuse_loopback_stats *ret);

/* The writer end: who writes (@pid 0: the writer closed; its comm is looked up). */
void v4l2cuse_loopback_set_writer(struct v4l2cuse_source *src, pid_t pid);
/* The writer end: a write that was not a whole frame was refused. */
void v4l2cuse_loopback_refused(struct v4l2cuse_source *src);

/*
 * Readers, as v4l2loopback counts them for its client-usage event
 * (v4l2cuse/loopback-abi.h): the consumers of the capture devices whose
 * stream runs (STREAMON with a buffer queued, or read()), not those that
 * merely opened the node.
 *
 * The capture end: @n consumers of its device stream now.
 */
void v4l2cuse_loopback_set_readers(struct v4l2cuse_source *src, unsigned int n);
/* Either end: the readers of every capture end of its loopback; 0 for other sources. */
unsigned int v4l2cuse_loopback_readers(struct v4l2cuse_source *src);
/*
 * The writer end: @changed(@data) runs after each change of the number
 * of readers, until the end is destroyed (@changed NULL: no longer).
 */
void v4l2cuse_loopback_watch_readers(struct v4l2cuse_source *src, void (*changed)(void *data),
				     void *data);
