/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What apps made for v4l2loopback use of it beyond V4L2 itself
 * (docs/loopback.md): the private "client usage" event, which a loopback's
 * writer node answers, and the control device /dev/v4l2loopback that
 * v4l2loopback-ctl adds and removes devices through (daemon/lbctl.c). The
 * layouts and numbers are v4l2loopback's published ones (its
 * v4l2loopback.h), written down here again; the checks at the end hold
 * them to the published values.
 *
 * A writer subscribes to it (VIDIOC_SUBSCRIBE_EVENT, id 0, usually with
 * V4L2_EVENT_SUB_FL_SEND_INITIAL for the count at once), waits for
 * POLLPRI and DQEVENTs it; the event's u.data starts with a struct
 * v4l2cuse_event_client_usage. It comes whenever the number of readers
 * changes: v4l2-relayd (Intel IPU6 laptop cameras) runs its camera only
 * while the count is above 0. Only the newest count waits in a handle's
 * queue (a newer one replaces it, as v4l2loopback's one-element queue).
 *
 * The event's type changed: v4l2loopback's first version (2022-12, which
 * v4l2-relayd copied and some distributions still build) used
 * V4L2_EVENT_PRIVATE_START itself, every release since 0.13 uses the
 * offset below. Both are answered; an event has the type its subscriber
 * asked for.
 */

#include <stdbool.h>
#include <stdint.h>
#include <linux/ioctl.h>
#include <linux/videodev2.h>

/* v4l2loopback's V4L2LOOPBACK_EVENT_OFFSET, where its private events start. */
#define V4L2CUSE_LOOPBACK_EVENT_OFFSET	0x08e00000u

/* v4l2loopback's V4L2_EVENT_PRI_CLIENT_USAGE (0.13 and later). */
#define V4L2CUSE_EVENT_CLIENT_USAGE	(V4L2_EVENT_PRIVATE_START + \
					 V4L2CUSE_LOOPBACK_EVENT_OFFSET + 1)
/* The same event as v4l2loopback's first version and v4l2-relayd name it. */
#define V4L2CUSE_EVENT_CLIENT_USAGE_OLD	V4L2_EVENT_PRIVATE_START

/* The payload, at the start of struct v4l2_event's u.data. */
struct v4l2cuse_event_client_usage {
	uint32_t count;			/* readers streaming now */
};

static inline bool
v4l2cuse_event_is_client_usage(uint32_t type)
{
	return type == V4L2CUSE_EVENT_CLIENT_USAGE || type == V4L2CUSE_EVENT_CLIENT_USAGE_OLD;
}

/* ---------------------------------------------------------------------- */
/*
 * The control device, /dev/v4l2loopback (v4l2loopback 0.13 and later).
 *
 * A v4l2loopback device is one node, /dev/videoN, both output and capture;
 * a v4l2cuse loopback is two, a writer node and a capture node. Here a
 * device's number is its writer node's (v4l2loopback's ADD returns "the
 * OUTPUT device"): ADD returns it, QUERY and REMOVE take either node's.
 *
 * The commands, each with the argument the caller passes:
 *   VERSION  __u32 *: filled with the version code we answer as
 *   ADD      struct v4l2cuse_loopback_config * (NULL: all defaults);
 *            returns the new device's number (the ioctl's return value)
 *   REMOVE   the number itself, by value (not a pointer, although 0.15's
 *            number says __u32)
 *   QUERY    struct v4l2cuse_loopback_config *, output_nr set: filled in
 *
 * 0.15 gave them numbers that say direction and size; 0.13 and 0.14 used
 * bare numbers (the _OLD ones), which 0.15 still accepts, and so do we.
 * The structure is the same in all three, and the same for 32-bit callers.
 */

/* v4l2loopback's struct v4l2_loopback_config, 72 bytes. */
struct v4l2cuse_loopback_config {
	/*
	 * The device number N of /dev/videoN. ADD: below 0 picks a free
	 * one; a number in use is EEXIST. QUERY: which device.
	 */
	int32_t output_nr;
	/*
	 * Once capture_nr, never implemented: v4l2loopback-ctl leaves it
	 * uninitialised, so ADD ignores it. QUERY fills in the capture
	 * node's number (v4l2loopback leaves it as it was).
	 */
	int32_t unused;
	char card_label[32];		/* "" on ADD: the default label */
	/* Frame sizes writers may set; below the minimum: the defaults. */
	uint32_t min_width;
	uint32_t max_width;
	uint32_t min_height;
	uint32_t max_height;
	int32_t max_buffers;		/* <= 0: the default */
	int32_t max_openers;		/* <= 0: the default */
	int32_t debug;
	/* Whether the node announces OUTPUT and CAPTURE at once; < 0: default. */
	int32_t announce_all_caps;
};

/* v4l2loopback's V4L2LOOPBACK_CTL_IOCTLMAGIC and the 0.15 numbers. */
#define V4L2CUSE_LOOPBACK_CTL_MAGIC	'~'
#define V4L2CUSE_LOOPBACK_CTL_VERSION	_IOR(V4L2CUSE_LOOPBACK_CTL_MAGIC, 0, uint32_t)
#define V4L2CUSE_LOOPBACK_CTL_ADD	_IOW(V4L2CUSE_LOOPBACK_CTL_MAGIC, 1, \
					     struct v4l2cuse_loopback_config)
#define V4L2CUSE_LOOPBACK_CTL_REMOVE	_IOW(V4L2CUSE_LOOPBACK_CTL_MAGIC, 2, uint32_t)
#define V4L2CUSE_LOOPBACK_CTL_QUERY	_IOWR(V4L2CUSE_LOOPBACK_CTL_MAGIC, 3, \
					      struct v4l2cuse_loopback_config)

/* The numbers of 0.13 and 0.14 (v4l2loopback's *_legacy). */
#define V4L2CUSE_LOOPBACK_CTL_ADD_OLD		0x4c80
#define V4L2CUSE_LOOPBACK_CTL_REMOVE_OLD	0x4c81
#define V4L2CUSE_LOOPBACK_CTL_QUERY_OLD		0x4c82

/* The version VERSION answers: 0.15.0's, the first with this ABI (KERNEL_VERSION()). */
#define V4L2CUSE_LOOPBACK_VERSION_CODE	((0u << 16) | (15u << 8) | 0u)

_Static_assert(sizeof(struct v4l2cuse_loopback_config) == 72,
	       "struct v4l2_loopback_config is 72 bytes");
_Static_assert(V4L2CUSE_LOOPBACK_CTL_VERSION == 0x80047e00u, "V4L2LOOPBACK_CTL_VERSION");
_Static_assert(V4L2CUSE_LOOPBACK_CTL_ADD == 0x40487e01u, "V4L2LOOPBACK_CTL_ADD");
_Static_assert(V4L2CUSE_LOOPBACK_CTL_REMOVE == 0x40047e02u, "V4L2LOOPBACK_CTL_REMOVE");
_Static_assert(V4L2CUSE_LOOPBACK_CTL_QUERY == 0xc0487e03u, "V4L2LOOPBACK_CTL_QUERY");
