/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * v4l2cuse-pipewire: every v4l2cuse node the user can open, published as a
 * PipeWire camera (docs/pipewire.md).
 *
 * main.c     options, the GLib main loop with PipeWire's loop as a GSource,
 *            the PipeWire connection and its back-off.
 * monitor.c  which nodes exist: a scan of /sys/class/cuse at start, then
 *            inotify on /dev; a probe per node (the daemon's private INFO
 *            ioctl, QUERYCAP, the modes).
 * camera.c   one pw_stream per node: formats, buffers, on-demand capture.
 * feed.c     a pipewire: device's writer node, fed from a PipeWire node
 *            while the device has readers.
 * The V4L2 side of a capture (open, attach through the shim protocol, MMAP
 * buffers, DQBUF/QBUF) and the probe of the modes are client/'s.
 * formats.c  modes <-> EnumFormat/Format objects.
 *
 * Everything runs on one thread: the GLib main loop, which also iterates
 * PipeWire's loop, so no PipeWire call needs a lock.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <glib.h>
#include <linux/videodev2.h>
#include <pipewire/pipewire.h>

#include "v4l2cuse/ctl-protocol.h"
#include "formats.h"

#define BRIDGE_NODE_PREFIX "v4l2cuse."

/* What a probe found out about one node (monitor.c). */
struct bridge_device {
	char *name;			/* "video42": the /dev and sysfs name */
	char *path;			/* "/dev/video42" */
	dev_t rdev;
	struct v4l2cuse_info info;	/* the daemon's answer (nonce, id) */
	bool feed;			/* a pipewire: device's writer node (feed.c) */
	char *card;			/* QUERYCAP card: the label */
	char *bus_info;
	struct client_mode *modes;	/* every translatable mode */
	unsigned int n_modes;
};

void bridge_device_free(struct bridge_device *d);

static inline void
bridge_device_freep(struct bridge_device **p)
{
	bridge_device_free(*p);
}

/*
 * Probe @dir/@name: 0 and a device, or -errno: -ENODEV for a node that is
 * not ours (not CUSE, no INFO answer, not a capture device nor a feed's
 * writer node, a feed's capture node), -EACCES when
 * the user may not open it, other errors from the ioctls.
 */
int bridge_device_probe(const char *dir, const char *name, struct bridge_device **ret);

/* --- camera.c --- */
struct bridge_camera;

/* A camera for @dev (taken); it is published while it has a core. */
struct bridge_camera *bridge_camera_new(struct bridge_device *dev);
void bridge_camera_free(struct bridge_camera *cam);
/* Publish on @core (NULL: PipeWire went away, drop the stream). */
void bridge_camera_set_core(struct bridge_camera *cam, struct pw_core *core);

/* A stream's state change, for the debug log (camera.c, feed.c). */
static inline void
bridge_log_stream_state(const char *node_name, enum pw_stream_state old,
			enum pw_stream_state state, const char *error)
{
	g_debug("%s: stream %s -> %s%s%s", node_name, pw_stream_state_as_string(old),
		pw_stream_state_as_string(state), error ? ": " : "", error ? error : "");
}

/* --- feed.c --- */
struct bridge_feed;

/* The feed of @dev (a writer node, taken); it streams while it has a core and readers. */
struct bridge_feed *bridge_feed_new(struct bridge_device *dev);
void bridge_feed_free(struct bridge_feed *feed);
/* PipeWire is there (@core) or gone (NULL). */
void bridge_feed_set_core(struct bridge_feed *feed, struct pw_core *core);

/* --- monitor.c --- */
struct bridge_monitor;

typedef void (*bridge_monitor_added_fn)(struct bridge_device *dev, void *user_data);
typedef void (*bridge_monitor_removed_fn)(const char *name, void *user_data);

/*
 * Watch @dev_dir (inotify) and report our nodes: @added for a new node
 * (the device is the callee's), @removed for one that went away. The scan
 * of what exists already happens in bridge_monitor_start().
 */
struct bridge_monitor *bridge_monitor_new(const char *dev_dir, bridge_monitor_added_fn added,
					  bridge_monitor_removed_fn removed, void *user_data,
					  GError **error);
void bridge_monitor_start(struct bridge_monitor *m);
void bridge_monitor_free(struct bridge_monitor *m);
