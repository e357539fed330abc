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
 * 4. Fast path. FASTPATH hands out the handle's shared-memory queue (the
 *    memfd of struct v4l2cuse_fp_shared) and the one end of a stream
 *    socketpair that wakes either side; from then on QBUF, DQBUF and
 *    poll() of a streaming handle need no CUSE request (below).
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

/*
 * The most buffers a handle's queue has. Every buffer index on the wire
 * (MAP's reply, STAGING, the fast path's completions and submissions) is
 * below it, and the fast path's n_buffers, read_buffers and write_buffers
 * are at most it:
 * a client sizes its per-buffer tables by it (and still checks every
 * index it reads). The daemon's queues never have more (VB_MAX_BUFFERS,
 * checked at compile time where the daemon sees both).
 */
#define V4L2CUSE_SHIM_MAX_BUFFERS	32

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
	V4L2CUSE_SHIM_FASTPATH = 5,	/* version -> length + memfd, socket */
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
		struct {
			uint32_t version;	/* V4L2CUSE_FP_VERSION */
		} fastpath;
		uint8_t pad[48];
	};
};

/*
 * Daemon -> shim. MAP and STAGING successes carry one fd (SCM_RIGHTS),
 * FASTPATH two in one message: the memfd, then the socket.
 */
struct v4l2cuse_shim_reply {
	uint32_t type;		/* the request's */
	uint32_t seq;		/* the request's */
	int32_t status;		/* 0 or -errno */
	uint32_t index;		/* MAP: buffer index */
	uint64_t map_id;	/* MAP: give it back with UNMAP */
	uint64_t length;	/* MAP/STAGING: the buffer's length; FASTPATH: the memfd's */
	uint64_t reserved[2];
};

/*
 * The fast path (docs/shim.md, "The fast path"): one memfd per handle,
 * mapped MAP_SHARED by the daemon and the shim, and a SOCK_STREAM
 * socketpair of which the shim holds one end.
 *
 * - Completions (daemon -> shim): the daemon publishes every done buffer
 *   of a handle that streams (V4L2CUSE_FP_ACTIVE) as a struct
 *   v4l2cuse_fp_done in @done[@done_head % V4L2CUSE_FP_DONE_RING] and then
 *   advances @done_head; the shim's DQBUF takes the oldest one whose epoch
 *   is the state's and answers with its @dq, then advances @done_tail and
 *   posts an ACK with its serial. An epoch changes with every STREAMOFF,
 *   REQBUFS and release: older entries are void (epochs compare as serial
 *   numbers). The daemon writes a new epoch's entries before the state
 *   that names it: an entry newer than the state the shim read belongs
 *   to the next state, and is never skipped.
 * - Every CUSE request of the handle publishes what it changed before its
 *   reply, so the app's next DQBUF or poll() reads it.
 * - Submissions (shim -> daemon): QBUF and ACK entries in
 *   @sub[@sub_head % V4L2CUSE_FP_SUB_RING], then @sub_head advances. The
 *   daemon takes them before every CUSE request of the handle, at every
 *   frame of the device while the queue is V4L2CUSE_FP_TICKED, and when
 *   the socket is written ("kick"); it advances @state.sub_tail. The shim
 *   QBUFs through the ring only a buffer it dequeued through it in the same
 *   epoch, answering with the entry's @requeue (USERPTR: m.userptr and
 *   length, output: bytesused are the caller's, 0 meaning the length).
 * - Everything else, and anything the shim cannot answer exactly from the
 *   state (an index out of range, another memory type, not streaming, an
 *   error state...), goes through CUSE as before, which is the reference.
 * - poll(): capture POLLIN|POLLRDNORM while a completion of the current
 *   epoch is unconsumed, POLLERR with V4L2CUSE_FP_POLLERR; output
 *   POLLOUT|POLLWRNORM also while fewer than n_buffers are queued;
 *   POLLPRI with V4L2CUSE_FP_EVENTS. The daemon writes a byte to the socket
 *   whenever it publishes something; the shim waits for the socket.
 * - read(): the shim emulates it on top of the above as vb2's fileio does
 *   on top of its streaming calls (REQBUFS of @state.read_buffers MMAP
 *   buffers, QBUF, STREAMON through CUSE, then DQBUF and QBUF through the
 *   rings); the daemon sees an ordinary MMAP streamer.
 * - write(): the shim emulates it on an output queue the same way, once a
 *   write() through CUSE made the handle the writer (REQBUFS of
 *   @state.write_buffers MMAP buffers, STREAMON through CUSE; each write()
 *   fills a free buffer and QBUFs it through the ring, whose completion
 *   frees it again); the daemon sees an MMAP output streamer, and keeps a
 *   handle that joined with write() the writer when it stops.
 *
 * The daemon writes the state and the completions, and reads only
 * @sub_head, @done_tail and @sub[] (as hostile input: one handle's ring
 * can only name its own queue's buffers, and a ring the daemon cannot make
 * sense of switches the handle back to CUSE for good).
 */
#define V4L2CUSE_FP_VERSION		1u
#define V4L2CUSE_FP_MAGIC		0x48545046u	/* "FPTH" */
/*
 * The completion ring has room for every completion the shim may not have
 * looked at yet: one per buffer of the current epoch (a buffer is published
 * again only once its ACK dequeued it) behind as many of a voided epoch
 * (the shim skips them at its next look). Were it ever full, the daemon
 * would publish the rest later, never overwrite.
 */
#define V4L2CUSE_FP_DONE_RING		64u
#define V4L2CUSE_FP_SUB_RING		128u

/* state.flags */
#define V4L2CUSE_FP_ACTIVE	(1u << 0)	/* owns its queue, streaming, no error */
#define V4L2CUSE_FP_TICKED	(1u << 1)	/* the producer takes submissions every frame */
#define V4L2CUSE_FP_POLLERR	(1u << 2)	/* poll() answers POLLERR */
#define V4L2CUSE_FP_EVENTS	(1u << 3)	/* V4L2 events pending: POLLPRI */
#define V4L2CUSE_FP_OUTPUT	(1u << 4)	/* an output queue: QBUF always kicks */
#define V4L2CUSE_FP_BROKEN	(1u << 5)	/* the ring was corrupted: CUSE only */

/* Written by the daemon under a sequence lock: odd @seq while it writes. */
struct v4l2cuse_fp_state {
	uint32_t seq;
	uint32_t flags;			/* V4L2CUSE_FP_* */
	uint32_t epoch;
	uint32_t type;			/* V4L2_BUF_TYPE_* */
	uint32_t memory;		/* V4L2_MEMORY_* of the buffers, 0 without */
	uint32_t n_buffers;
	uint32_t n_queued;		/* queued, active or done, as the daemon sees them */
	uint32_t sub_tail;		/* submissions taken */
	uint32_t qbufs_taken;		/* QBUF submissions taken, ever */
	uint32_t acks_taken;		/* ACK submissions taken, ever */
	/*
	 * The queue's read() emulation buffer count (read-buffers=), 0 when
	 * the queue has no read() (an output queue; a daemon older than this
	 * field): the shim's read() emulation asks REQBUFS for as many.
	 */
	uint32_t read_buffers;
	/*
	 * A writer node's write() emulation buffer count (its file I/O count,
	 * as read()'s), 0 when the queue takes no write() (a capture queue;
	 * a daemon older than this field, whose writer would stop being the
	 * writer at the emulation's STREAMOFF): the shim's write() emulation
	 * asks REQBUFS for as many.
	 */
	uint32_t write_buffers;
	uint32_t reserved[4];
};

struct v4l2cuse_fp_done {
	uint32_t epoch;
	uint32_t index;
	uint64_t serial;		/* give it back in the ACK */
	uint32_t length;		/* the buffer's own (USERPTR: QBUF needs as much) */
	uint32_t reserved;
	struct v4l2_buffer dq;		/* what DQBUF returns */
	struct v4l2_buffer requeue;	/* what QBUF of it returns (see above) */
};

/*
 * The shim answers a QBUF before the daemon applies it. The daemon
 * applies it with the checks of a CUSE QBUF; if it refuses it while the
 * epoch is still the one the shim answered in (@serial), the buffer comes
 * back as a completion with V4L2_BUF_FLAG_ERROR (bytesused 0 on capture),
 * which the shim dequeues and acknowledges as any other: the app, told
 * its QBUF succeeded, gets its buffer back, never waits for it forever.
 * A refusal in another epoch needs nothing: that epoch's STREAMOFF or
 * REQBUFS took every buffer back already.
 */
enum v4l2cuse_fp_op {
	V4L2CUSE_FP_QBUF = 1,		/* index; userptr, length (USERPTR); bytesused (output);
					 * serial: the epoch of the state the shim answered in */
	V4L2CUSE_FP_ACK = 2,		/* serial: the client dequeued that completion */
};

struct v4l2cuse_fp_sub {
	uint32_t op;			/* enum v4l2cuse_fp_op */
	uint32_t index;
	uint64_t serial;		/* ACK: the completion's; QBUF: the state's epoch */
	uint64_t userptr;
	uint32_t length;
	uint32_t bytesused;
};

struct v4l2cuse_fp_shared {
	/* Daemon -> shim. */
	uint32_t magic;			/* V4L2CUSE_FP_MAGIC */
	uint32_t version;		/* V4L2CUSE_FP_VERSION */
	uint32_t done_head;		/* completions published (release order) */
	uint32_t reserved0;
	struct v4l2cuse_fp_state state;
	struct v4l2cuse_fp_done done[V4L2CUSE_FP_DONE_RING];
	/* Shim -> daemon, on a page of its own. */
	uint32_t sub_head __attribute__((aligned(4096)));	/* submissions posted */
	uint32_t done_tail;		/* completions consumed */
	uint32_t reserved1[14];
	struct v4l2cuse_fp_sub sub[V4L2CUSE_FP_SUB_RING];
};

_Static_assert(V4L2CUSE_FP_DONE_RING >= 2 * V4L2CUSE_SHIM_MAX_BUFFERS,
	       "the completion ring holds a voided epoch and a current one");
_Static_assert(sizeof(struct v4l2cuse_shim_attach) == 176, "attach ABI");
_Static_assert(sizeof(struct v4l2cuse_fp_done) == 200, "fast path ABI");
_Static_assert(sizeof(struct v4l2cuse_fp_sub) == 32, "fast path ABI");
_Static_assert(sizeof(struct v4l2cuse_shim_request) == 56, "request ABI");
_Static_assert(sizeof(struct v4l2cuse_shim_reply) == 48, "reply ABI");
