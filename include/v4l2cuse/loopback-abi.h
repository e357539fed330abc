/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What apps made for v4l2loopback use of it beyond V4L2 itself, as a
 * loopback's writer node answers it (docs/loopback.md): the private
 * "client usage" event.
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
