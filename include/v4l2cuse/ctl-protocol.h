/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Talking to a running v4l2cuse daemon:
 *
 * 1. The instance ioctl. VIDIOC_V4L2CUSE_INFO on any node the daemon serves
 *    returns the daemon's per-process random nonce, its pid and the node's
 *    name and device id. The daemon's own self-test (daemon/selftest.c)
 *    opens each node from a worker thread and compares the nonce: that
 *    proves the node is served by this instance and not by a stale or
 *    foreign CUSE daemon that happens to hold the name. bus_info is not
 *    used for this, because it must stay stable across restarts (browsers
 *    use it as the device id). Private ioctl numbers: shim-protocol.h owns
 *    BASE_VIDIOC_PRIVATE + 0..15 (and + 42), this header + 16..31.
 *
 * 2. The control socket (v4l2cuse-ctl). A SOCK_STREAM unix socket, by
 *    default V4L2CUSE_CTL_SOCKET_NAME in the runtime directory. One request
 *    per connection: a single line of tab-separated fields (command first,
 *    no tabs or newlines inside a field), at most V4L2CUSE_CTL_MAX_REQUEST
 *    bytes. The reply is any number of text lines, then a last line that is
 *    either "ok" or "error <one-line message>"; then the daemon closes the
 *    connection. Callers must be root or in the configured control group
 *    (checked with SO_PEERCRED and SO_PEERGROUPS).
 *
 *    Commands (daemon/control.c has the details, v4l2cuse-ctl(1) the user
 *    view):
 *      list                       a header line, then one line per device
 *      stats                      "[daemon]", then "[device ID]" per device,
 *                                 each followed by "KEY VALUE" lines
 *      add ID [KEY=VALUE...]      a device like a [device ID] config group
 *      remove ID
 *      set-source ID SPEC         switch the source live (same format)
 *      set-placeholder ID SPEC    "none" removes it
 *      reload                     like SIGHUP
 *      yield-socket               daemon to daemon: one started with a
 *                                 configuration asks one started with
 *                                 --device for the socket, which closes
 *                                 and removes it, then answers ok
 *                                 (daemon/control.h); others refuse
 *
 *    A daemon started with --device refuses add, remove and reload.
 */

#include <stdint.h>
#include <linux/ioctl.h>
#include <linux/videodev2.h>

#define V4L2CUSE_INFO_MAGIC		0x49433256u	/* "V2CI" */
#define V4L2CUSE_INFO_VERSION		1u

struct v4l2cuse_info {
	uint32_t magic;		/* V4L2CUSE_INFO_MAGIC */
	uint32_t version;	/* V4L2CUSE_INFO_VERSION */
	uint64_t nonce;		/* random, fixed for the daemon's lifetime */
	uint32_t pid;		/* the daemon's pid (in its pid namespace) */
	uint32_t flags;		/* V4L2CUSE_INFO_* */
	char name[32];		/* node name, "video42" */
	char id[32];		/* device id (config group "device ID") */
	uint32_t reserved[8];
};

/*
 * The device is a USB camera right now (usb=true, docs/usb.md): apps
 * should list its uvcvideo node, not this one (v4l2cuse-pipewire skips it).
 */
#define V4L2CUSE_INFO_USB_FACE		(1u << 0)

/*
 * A pipewire:TARGET device (docs/pipewire.md, "Cameras from PipeWire"):
 * a loopback whose writer is v4l2cuse-pipewire in the user's session.
 * Both its nodes carry the flag: the capture node is not published back
 * into PipeWire (that would list the camera twice, or feed it its own
 * frames), and the writer node is the one the bridge feeds.
 */
#define V4L2CUSE_INFO_FEED		(1u << 1)

#define VIDIOC_V4L2CUSE_INFO \
	_IOR('V', BASE_VIDIOC_PRIVATE + 16, struct v4l2cuse_info)

#define V4L2CUSE_CTL_SOCKET_NAME	"control.sock"
#define V4L2CUSE_CTL_RUNDIR		"/run/v4l2cuse"
#define V4L2CUSE_CTL_MAX_REQUEST	8192
#define V4L2CUSE_CTL_MAX_CLIENTS	16	/* concurrent connections */
#define V4L2CUSE_CTL_TIMEOUT_S		5	/* to send the request */

_Static_assert(sizeof(struct v4l2cuse_info) == 120, "info ABI");

#define V4L2CUSE_FEED_TARGET_MAX	256

/*
 * VIDIOC_V4L2CUSE_FEED on a feed's writer node: what to capture, and what
 * the device's readers asked for (the format PipeWire should offer
 * closest to). ENOTTY on other nodes.
 */
struct v4l2cuse_feed {
	char target[V4L2CUSE_FEED_TARGET_MAX];	/* node.name, object.serial or
						 * node.description; "": the default camera */
	uint32_t width, height, pixelformat;	/* the readers' format; 0: none streams */
	uint32_t fps_num, fps_den;		/* their rate in frames per second (num/den) */
	uint32_t reserved[11];
};

#define VIDIOC_V4L2CUSE_FEED \
	_IOR('V', BASE_VIDIOC_PRIVATE + 17, struct v4l2cuse_feed)

_Static_assert(sizeof(struct v4l2cuse_feed) == 320, "feed ABI");
