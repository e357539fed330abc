/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The protocol between the daemon and the preload shim
 * (libv4l2cuse-preload.so, started by v4l2cuse-run). docs/shim.md has the
 * long version; in short:
 *
 * 1. Attach. Right after open() of a character device whose
 *    /sys/dev/char/M:m/subsystem is "cuse", the shim calls
 *    VIDIOC_V4L2CUSE_ATTACH. Our daemon answers with a fresh single-use
 *    token for that file handle and the path of its unix socket; any other
 *    CUSE device answers ENOTTY/EINVAL (or a reply without our magic) and
 *    the fd is left alone.
 * 2. Hello. The shim connects (SOCK_SEQPACKET) and sends HELLO with the
 *    token. The daemon checks the token (consumed by this attempt, whatever
 *    its outcome) and SO_PEERCRED: the uid must be the opener's and the
 *    process must be the one whose thread opened the handle. Only then is
 *    the handle streaming-capable (QUERYCAP shows V4L2_CAP_STREAMING) and
 *    the connection bound to it. One connection per file handle.
 * 3. Buffers. MAP asks for the memfd behind an mmap(offset, length) of the
 *    handle's queue (vb2 rules: a buffer cookie and its length); the reply
 *    carries the memfd (SCM_RIGHTS) and a map id the shim returns with
 *    UNMAP when the range is unmapped. STAGING hands out the staging memfd
 *    of a USERPTR buffer (read-only use: the shim copies a dequeued frame
 *    to the app's pointer). Closing the connection releases every mapping
 *    record it holds.
 *
 * Every request gets exactly one reply, in order; the shim waits for it.
 * Messages are fixed-size structs in host byte order (both ends run on the
 * same machine); the reply's @status is 0 or -errno.
 */

#include <stdint.h>
#include <linux/ioctl.h>
#include <linux/videodev2.h>

#define V4L2CUSE_SHIM_MAGIC		0x4d494853u	/* "SHIM" */
#define V4L2CUSE_SHIM_VERSION		1u
#define V4L2CUSE_SHIM_TOKEN_SIZE	32
#define V4L2CUSE_SHIM_PATH_SIZE		108		/* sizeof(sun_path) */

/* VIDIOC_V4L2CUSE_ATTACH: in magic + version, out everything. */
struct v4l2cuse_shim_attach {
	uint32_t magic;		/* in and out: V4L2CUSE_SHIM_MAGIC */
	uint32_t version;	/* in: the shim's; out: the daemon's */
	uint32_t flags;		/* out: 0 */
	uint32_t reserved0;
	uint8_t token[V4L2CUSE_SHIM_TOKEN_SIZE];	/* out: single use */
	char socket_path[V4L2CUSE_SHIM_PATH_SIZE];	/* out: NUL-terminated */
	uint32_t reserved[5];
};

#define VIDIOC_V4L2CUSE_ATTACH \
	_IOWR('V', BASE_VIDIOC_PRIVATE + 42, struct v4l2cuse_shim_attach)

enum v4l2cuse_shim_msg_type {
	V4L2CUSE_SHIM_HELLO = 1,	/* token -> status */
	V4L2CUSE_SHIM_MAP = 2,		/* offset, length -> index, map_id + memfd */
	V4L2CUSE_SHIM_UNMAP = 3,	/* map_id -> status */
	V4L2CUSE_SHIM_STAGING = 4,	/* index -> length + memfd (USERPTR) */
};

/* Shim -> daemon. */
struct v4l2cuse_shim_request {
	uint32_t type;		/* enum v4l2cuse_shim_msg_type */
	uint32_t seq;		/* echoed in the reply */
	union {
		struct {
			uint32_t version;	/* V4L2CUSE_SHIM_VERSION */
			uint32_t reserved;
			uint8_t token[V4L2CUSE_SHIM_TOKEN_SIZE];
		} hello;
		struct {
			uint64_t offset;	/* mmap() offset: a QUERYBUF m.offset */
			uint64_t length;	/* mmap() length */
		} map;
		struct {
			uint64_t map_id;
		} unmap;
		struct {
			uint32_t index;		/* buffer index */
		} staging;
		uint8_t pad[48];
	};
};

/* Daemon -> shim. MAP and STAGING successes carry one fd (SCM_RIGHTS). */
struct v4l2cuse_shim_reply {
	uint32_t type;		/* the request's */
	uint32_t seq;		/* the request's */
	int32_t status;		/* 0 or -errno */
	uint32_t index;		/* MAP: buffer index */
	uint64_t map_id;	/* MAP: give it back with UNMAP */
	uint64_t length;	/* MAP/STAGING: the buffer's length */
	uint64_t reserved[2];
};

_Static_assert(sizeof(struct v4l2cuse_shim_attach) == 176, "attach ABI");
_Static_assert(sizeof(struct v4l2cuse_shim_request) == 56, "request ABI");
_Static_assert(sizeof(struct v4l2cuse_shim_reply) == 48, "reply ABI");
