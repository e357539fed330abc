/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * videobuf: a user-space buffer queue in the spirit of the kernel's
 * videobuf2 (drivers/media/common/videobuf2/). It implements the V4L2
 * streaming ioctls (REQBUFS, CREATE_BUFS, QUERYBUF, PREPARE_BUF, QBUF,
 * DQBUF, STREAMON, STREAMOFF), read() emulation and the poll mask on top of
 * a small set of driver ops. It knows nothing of FUSE/CUSE: the caller (the
 * daemon's ioctl layer) passes decoded V4L2 structs and an opaque owner
 * identity (its file handle), and the queue never sleeps: where the kernel
 * would block it returns -EAGAIN and later calls ops->wake.
 *
 * Errors are negative errno values, chosen as vb2 chooses them.
 *
 * Threading and locks: a queue has one internal mutex. Every vb_queue_*()
 * entry point may be called from the dispatcher thread; vb_buffer_done()
 * and the vb_buffer_*() accessors may also be called from a producer
 * thread. No op is ever called with the queue mutex held, so ops may call
 * back into the queue (e.g. buf_queue may complete the buffer at once, and
 * wake may call vb_queue_dqbuf()).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/videodev2.h>

#define VB_MAX_BUFFERS 32

enum vb_buf_state {
	VB_BUF_DEQUEUED,	/* owned by the client (or never queued) */
	VB_BUF_PREPARED,	/* PREPARE_BUF done, still the client's */
	VB_BUF_QUEUED,		/* queued by the client, not yet given to the driver */
	VB_BUF_ACTIVE,		/* owned by the driver/producer */
	VB_BUF_DONE,		/* filled, waiting for DQBUF */
	VB_BUF_ERROR,		/* failed, waiting for DQBUF (V4L2_BUF_FLAG_ERROR) */
};

const char *vb_buf_state_name(enum vb_buf_state state);

struct vb_queue;
struct vb_buffer;

struct vb_ops {
	/*
	 * Required. Agree on count and size. On entry *num_buffers is the
	 * requested count (already clamped to [min_buffers, VB_MAX_BUFFERS])
	 * and *size is 0 for REQBUFS, or the client's size for CREATE_BUFS
	 * (then the op checks it is large enough, -EINVAL if not). The op sets
	 * *size to the buffer size it needs and may lower *num_buffers.
	 */
	int (*queue_setup)(struct vb_queue *q, unsigned int *num_buffers, size_t *size);

	/* Optional. Called once after a buffer's memory is allocated. */
	int (*buf_init)(struct vb_buffer *b);

	/* Optional. Validate a buffer before it is queued (QBUF/PREPARE_BUF). */
	int (*buf_prepare)(struct vb_buffer *b);

	/*
	 * Required. The buffer now belongs to the driver (ACTIVE); it must
	 * come back through vb_buffer_done(), from any thread.
	 */
	void (*buf_queue)(struct vb_buffer *b);

	/*
	 * Optional. Streaming starts with @count buffers already handed over
	 * with buf_queue. On failure the driver must give every buffer back
	 * with vb_buffer_done(b, VB_BUF_QUEUED).
	 */
	int (*start_streaming)(struct vb_queue *q, unsigned int count);

	/*
	 * Optional. Streaming stops: the driver must give every ACTIVE buffer
	 * back (vb_buffer_done(b, VB_BUF_ERROR)) before returning.
	 */
	void (*stop_streaming)(struct vb_queue *q);

	/* Optional. Called once before a buffer's memory is freed. */
	void (*buf_cleanup)(struct vb_buffer *b);

	/*
	 * Optional. Something a waiter may care about happened: a buffer
	 * became DONE/ERROR, streaming stopped, buffers were freed or the
	 * queue entered the error state. Called from the thread that caused
	 * it, without the queue lock. The daemon retries its parked
	 * DQBUF/read()/poll requests from here.
	 */
	void (*wake)(struct vb_queue *q);

	/*
	 * Optional. A USERPTR buffer completed: copy @len bytes of the
	 * buffer's staging memory to the client's @userptr. Without it the
	 * staging memfd is the only copy (the preload shim copies at DQBUF).
	 */
	int (*userptr_write)(struct vb_buffer *b, unsigned long userptr,
			     const void *data, size_t len);
};

struct vb_queue_config {
	uint32_t type;			/* V4L2_BUF_TYPE_VIDEO_CAPTURE */
	uint32_t io_modes;		/* VB_IO_MMAP | VB_IO_USERPTR | VB_IO_READ */
	unsigned int min_buffers;	/* REQBUFS clamps count up to this (>= 1) */
	unsigned int min_queued_buffers; /* STREAMON defers start until queued */
	unsigned int read_buffers;	/* internal buffers for read emulation */
	bool allow_orphans;		/* REQBUFS(0) while mapped succeeds */
	const struct vb_ops *ops;
	void *priv;			/* driver data, vb_queue_priv() */
	const char *name;		/* for logs and memfd names */
};

#define VB_IO_MMAP	(1u << 0)
#define VB_IO_USERPTR	(1u << 1)
#define VB_IO_READ	(1u << 2)

struct vb_queue *vb_queue_new(const struct vb_queue_config *cfg);
/* Frees everything (stops streaming first). NULL-safe. */
void vb_queue_free(struct vb_queue *q);
void *vb_queue_priv(struct vb_queue *q);

/* --- V4L2 streaming ioctls. @owner identifies the caller's file handle. --- */
int vb_queue_reqbufs(struct vb_queue *q, const void *owner, struct v4l2_requestbuffers *req);
int vb_queue_create_bufs(struct vb_queue *q, const void *owner, struct v4l2_create_buffers *cb);
int vb_queue_querybuf(struct vb_queue *q, struct v4l2_buffer *b);
int vb_queue_prepare_buf(struct vb_queue *q, const void *owner, struct v4l2_buffer *b);
int vb_queue_qbuf(struct vb_queue *q, const void *owner, struct v4l2_buffer *b);
/* -EAGAIN: nothing done yet (the caller parks a blocking request). */
int vb_queue_dqbuf(struct vb_queue *q, const void *owner, struct v4l2_buffer *b);
int vb_queue_streamon(struct vb_queue *q, const void *owner, uint32_t type);
int vb_queue_streamoff(struct vb_queue *q, const void *owner, uint32_t type);
/* V4L2_BUF_CAP_* for REQBUFS/CREATE_BUFS replies. */
uint32_t vb_queue_buf_caps(struct vb_queue *q);

/*
 * vb2_core_poll's mask for @owner asking for @events (POLLIN|POLLRDNORM|...):
 * may start read emulation (POLLIN requested, read I/O allowed, no buffers).
 */
unsigned int vb_queue_poll(struct vb_queue *q, const void *owner, unsigned int events);

/*
 * read() emulation. @new_call is true for the first chunk of a read()
 * syscall (CUSE off == 0). Starts read streaming on first use (the owner
 * becomes the reader). On success returns the number of bytes (<= @count)
 * available at *ret_data from the current frame and advances the cursor;
 * they stay valid until the next vb_queue_read*() call for this queue.
 * Returns 0 when @new_call is false and the current frame is finished (a
 * read never spans two frames), -EAGAIN when no frame is ready (the caller
 * parks only if @new_call), -EBUSY when another owner streams or reads.
 */
ssize_t vb_queue_read(struct vb_queue *q, const void *owner, size_t count,
		      bool new_call, const void **ret_data);

/* The owner's file handle closes: stop streaming/reading, free buffers. */
void vb_queue_release(struct vb_queue *q, const void *owner);

/* Owner of the queue (NULL if none) and whether a format change is refused. */
const void *vb_queue_owner(struct vb_queue *q);
bool vb_queue_is_busy(struct vb_queue *q);	/* buffers allocated or read I/O */
bool vb_queue_is_streaming(struct vb_queue *q);

/* Enter/leave the queue error state (poll POLLERR, DQBUF -EIO). */
void vb_queue_set_error(struct vb_queue *q);

/*
 * MMAP support for the preload shim. Looks up the buffer whose m.offset
 * cookie is @offset and whose length is @length (-EINVAL otherwise), and
 * returns a new fd (F_DUPFD_CLOEXEC of its memfd, caller closes) and the
 * buffer index. vb_queue_mapped() adjusts the mapping count
 * (V4L2_BUF_FLAG_MAPPED) by @delta.
 */
int vb_queue_mmap_fd(struct vb_queue *q, uint32_t offset, size_t length,
		     int *ret_fd, unsigned int *ret_index);
int vb_queue_mapped(struct vb_queue *q, unsigned int index, int delta);

/* --- Producer side (any thread). --- */
struct vb_queue *vb_buffer_queue(struct vb_buffer *b);
unsigned int vb_buffer_index(struct vb_buffer *b);
void *vb_buffer_mem(struct vb_buffer *b);	/* daemon-side memory */
size_t vb_buffer_length(struct vb_buffer *b);
void vb_buffer_set_bytesused(struct vb_buffer *b, uint32_t bytesused);
/*
 * Give an ACTIVE buffer back. @state: DONE (filled), ERROR (failed,
 * dequeued with V4L2_BUF_FLAG_ERROR) or QUEUED (only from a failing
 * start_streaming). Stamps sequence and CLOCK_MONOTONIC timestamp for
 * DONE/ERROR. @skip adds a gap to the sequence (dropped frames).
 */
void vb_buffer_done(struct vb_buffer *b, enum vb_buf_state state);
void vb_queue_skip_sequence(struct vb_queue *q, unsigned int n);

/* Debug builds: unbalanced paired ops (setup/cleanup, start/stop); 0 if balanced. */
int vb_queue_debug_imbalance(struct vb_queue *q);
