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
 * Threading and locks (docs/videobuf.md has the long version):
 *
 * - A queue has one internal mutex. It is never held while an op runs, so
 *   ops may call back into the queue: buf_queue may complete the buffer at
 *   once with vb_buffer_done(), wake may call vb_queue_dqbuf(),
 *   vb_queue_poll(), vb_queue_querybuf(), vb_queue_qbuf() or
 *   vb_queue_read().
 * - vb_buffer_done(), vb_buffer_set_bytesused(), vb_buffer_set_field(),
 *   vb_queue_skip_sequence()
 *   and vb_queue_set_error() may be called from any thread (producers).
 * - The "transition" entry points (reqbufs, create_bufs, streamon,
 *   streamoff, release, free, and read()/poll() when they start read
 *   emulation) allocate, free, start or stop with the mutex dropped. Call
 *   them from one thread (the dispatcher), never from inside an op: a
 *   second transition that overlaps returns -EBUSY (release and free wait
 *   for it instead). Everything else is safe from any thread at any time.
 * - stop_streaming must return every ACTIVE buffer before it returns; the
 *   queue waits (briefly, on a condition variable) for buf_prepare and
 *   buf_queue calls still running on other threads before it stops or
 *   frees, so those two ops must never block.
 * - wake is called without the lock from whichever thread caused the
 *   event. A wake raised by a buffer completed inside buf_queue is
 *   delivered after that buf_queue returns.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/videodev2.h>

#define VB_MAX_BUFFERS 32

/*
 * Buffer states. vb_buf_set_state() in queue.c is the only writer; the
 * legal transitions and the diagram are in docs/videobuf.md.
 */
enum vb_buf_state {
	VB_BUF_DEQUEUED,	/* owned by the client (or never queued) */
	VB_BUF_PREPARED,	/* PREPARE_BUF done, still the client's */
	VB_BUF_QUEUED,		/* queued by the client, not yet given to the driver */
	VB_BUF_ACTIVE,		/* owned by the driver/producer */
	VB_BUF_DONE,		/* filled, waiting for DQBUF */
	VB_BUF_ERROR,		/* failed, waiting for DQBUF (V4L2_BUF_FLAG_ERROR) */
	VB_BUF_PREPARING,	/* buf_prepare is running (vb2's PREPARING) */
};

#define VB_BUF_N_STATES (VB_BUF_PREPARING + 1)

const char *vb_buf_state_name(enum vb_buf_state state);

struct vb_queue;
struct vb_buffer;
struct vb_budget;

/*
 * Buffer memory budgets (budget.c). A budget has a limit in bytes (0:
 * unlimited) and may be chained to a parent: a charge must fit this budget
 * and every parent, and is taken from all of them or none. A queue with a
 * budget (vb_queue_config.budget) charges each buffer's page-aligned
 * memory (MMAP and read emulation buffers, USERPTR staging copies) before
 * allocating it and credits it when the queue frees it; memory a client
 * still maps after REQBUFS(0) (orphaned buffers) is no longer counted.
 * When a charge fails, allocation falls short exactly as when memory runs
 * out: fewer buffers, or -ENOMEM below the minimum. Thread-safe, refcounted.
 */
struct vb_budget_stats {
	uint64_t limit;		/* 0: unlimited */
	uint64_t used;		/* bytes charged now */
	uint64_t peak;		/* highest used */
	uint64_t refused;	/* charges that did not fit this budget */
};

/* @name is used in logs ("global buffer memory limit"); takes a ref on @parent. */
struct vb_budget *vb_budget_new(const char *name, uint64_t limit, struct vb_budget *parent);
struct vb_budget *vb_budget_ref(struct vb_budget *bg);		/* NULL-safe */
void vb_budget_unref(struct vb_budget *bg);			/* NULL-safe */
/*
 * Charge @bytes to @bg and its parents: 0, or -ENOMEM (nothing charged)
 * with one debug line naming @what (e.g. the queue) and the limit hit.
 */
int vb_budget_charge(struct vb_budget *bg, uint64_t bytes, const char *what);
void vb_budget_credit(struct vb_budget *bg, uint64_t bytes);
/* A lower limit refuses new charges only; charged memory stays. */
void vb_budget_set_limit(struct vb_budget *bg, uint64_t limit);

/*
 * The memory clients map (buffers, the fast path's queue): a close-on-exec
 * memfd of @size bytes (page-aligned by the caller), sealed against
 * shrinking and growing so that no resize can make a client's mapping
 * fault, and mapped read-write at *@ret_mem. Its fd, or -errno.
 */
int vb_memfd_new(const char *name, size_t size, void **ret_mem);
void vb_budget_get_stats(struct vb_budget *bg, struct vb_budget_stats *ret);

/*
 * Driver ops. None is ever called with the queue mutex held. "Dispatcher"
 * below means the thread that called the vb_queue_*() entry point.
 */
struct vb_ops {
	/*
	 * Required, dispatcher. Agree on count and size. On entry
	 * *num_buffers is the requested count (REQBUFS: already clamped to
	 * [min_buffers, VB_MAX_BUFFERS]; CREATE_BUFS: what still fits) and
	 * *size is 0 for REQBUFS and read emulation, or the client's
	 * sizeimage for CREATE_BUFS (then the op checks it is large enough,
	 * -EINVAL if not, and leaves it). The op sets *size to the buffer
	 * size it needs and may lower *num_buffers. If fewer buffers than
	 * agreed could be allocated, it is called again with the lower count
	 * (vb2 does the same) and fails if that is not enough. Sizes of 0 or
	 * above 4 GiB minus a page are refused with -EINVAL.
	 */
	int (*queue_setup)(struct vb_queue *q, unsigned int *num_buffers, size_t *size);

	/*
	 * Optional, dispatcher. Called once after a buffer's memory is
	 * allocated and before the buffer becomes visible. On failure
	 * (nonzero) the buffer is freed without buf_cleanup and allocation
	 * stops there.
	 */
	int (*buf_init)(struct vb_buffer *b);

	/*
	 * Optional, caller of QBUF/PREPARE_BUF. Validate a buffer before it
	 * is queued (the buffer is in state PREPARING). Must not block. On
	 * failure the buffer goes back to DEQUEUED and the error is returned.
	 */
	int (*buf_prepare)(struct vb_buffer *b);

	/*
	 * Required, caller of QBUF/STREAMON/read(). The buffer now belongs to
	 * the driver (ACTIVE); it must come back through vb_buffer_done(),
	 * from any thread, possibly before buf_queue returns. Must not block.
	 */
	void (*buf_queue)(struct vb_buffer *b);

	/*
	 * Optional, dispatcher. Streaming starts with @count buffers already
	 * handed over with buf_queue (STREAMON, or the QBUF that reached
	 * min_queued_buffers). On failure the driver must give every buffer
	 * back with vb_buffer_done(b, VB_BUF_QUEUED) before returning; the
	 * error is returned to the client and streaming stays off.
	 */
	int (*start_streaming)(struct vb_queue *q, unsigned int count);

	/*
	 * Optional, dispatcher. Only called after a successful
	 * start_streaming. The driver must give every ACTIVE buffer back
	 * (vb_buffer_done(b, VB_BUF_ERROR)) before returning; the queue
	 * then returns every buffer to DEQUEUED.
	 */
	void (*stop_streaming)(struct vb_queue *q);

	/*
	 * Optional, dispatcher. Called once before a buffer's memory is
	 * freed (for every buffer whose buf_init succeeded, or every buffer
	 * if there is no buf_init).
	 */
	void (*buf_cleanup)(struct vb_buffer *b);

	/*
	 * Optional, any thread. Something a waiter may care about happened: a
	 * buffer became DONE/ERROR, streaming stopped, buffers were freed or
	 * the queue entered the error state. Called from the thread that
	 * caused it, without the queue lock. The daemon retries its parked
	 * DQBUF/read()/poll requests from here. It must not call the
	 * transition entry points.
	 */
	void (*wake)(struct vb_queue *q);
};

struct vb_queue_config {
	uint32_t type;			/* V4L2_BUF_TYPE_VIDEO_CAPTURE */
	uint32_t io_modes;		/* VB_IO_MMAP | VB_IO_USERPTR | VB_IO_READ */
	unsigned int min_buffers;	/* REQBUFS clamps count up to this (>= 1) */
	unsigned int min_queued_buffers; /* STREAMON defers start until queued */
	unsigned int read_buffers;	/* internal buffers for read emulation
					 * (0: 2; raised to min_buffers and
					 * min_queued_buffers) */
	bool allow_orphans;		/* REQBUFS(0) while mapped succeeds */
	const struct vb_ops *ops;
	void *priv;			/* driver data, vb_queue_priv() */
	const char *name;		/* for logs and memfd names */
	struct vb_budget *budget;	/* optional; the queue takes a reference */
};

#define VB_IO_MMAP	(1u << 0)
#define VB_IO_USERPTR	(1u << 1)
#define VB_IO_READ	(1u << 2)

/* NULL if @cfg is unusable (no ops, queue_setup or buf_queue, type 0, ...). */
struct vb_queue *vb_queue_new(const struct vb_queue_config *cfg);
/* Frees everything (stops streaming first). NULL-safe. */
void vb_queue_free(struct vb_queue *q);
void *vb_queue_priv(struct vb_queue *q);
/* The buffer type of vb_queue_config (V4L2_BUF_TYPE_VIDEO_CAPTURE or _OUTPUT). */
uint32_t vb_queue_type(struct vb_queue *q);

/*
 * --- V4L2 streaming ioctls. @owner identifies the caller's file handle
 * (never NULL). Structs are read and, on success, filled as the kernel
 * fills them (REQBUFS/CREATE_BUFS also fill capabilities on failure).
 *
 * Ownership (vb2's vb2_queue_is_busy): the first handle that allocates
 * buffers or starts read emulation owns the queue; any other gets -EBUSY
 * from reqbufs, create_bufs (count > 0), prepare_buf, qbuf, dqbuf,
 * streamon, streamoff and read. REQBUFS(0) by the owner frees the buffers
 * (or stops read emulation) and drops ownership. Streaming and read I/O
 * exclude each other (-EBUSY).
 */
int vb_queue_reqbufs(struct vb_queue *q, const void *owner, struct v4l2_requestbuffers *req);
int vb_queue_create_bufs(struct vb_queue *q, const void *owner, struct v4l2_create_buffers *cb);
int vb_queue_querybuf(struct vb_queue *q, struct v4l2_buffer *b);
int vb_queue_prepare_buf(struct vb_queue *q, const void *owner, struct v4l2_buffer *b);
int vb_queue_qbuf(struct vb_queue *q, const void *owner, struct v4l2_buffer *b);
/*
 * -EAGAIN: nothing done yet (the caller parks a blocking request, or
 * returns EAGAIN for O_NONBLOCK). -EINVAL: not streaming. -EIO: queue
 * error.
 */
int vb_queue_dqbuf(struct vb_queue *q, const void *owner, struct v4l2_buffer *b);
int vb_queue_streamon(struct vb_queue *q, const void *owner, uint32_t type);
int vb_queue_streamoff(struct vb_queue *q, const void *owner, uint32_t type);
/* V4L2_BUF_CAP_* for REQBUFS/CREATE_BUFS replies. */
uint32_t vb_queue_buf_caps(struct vb_queue *q);

/*
 * vb2_core_poll's mask for @owner asking for @events (POLLIN|POLLRDNORM|...):
 * 0 without POLLIN/POLLRDNORM; starts read emulation for @owner when read
 * I/O is allowed and the queue has no buffers and no owner; POLLERR when
 * not streaming, in the error state, or before the first QBUF after
 * REQBUFS/STREAMOFF; POLLIN|POLLRDNORM when a buffer is done or the
 * reader has an unfinished frame. POLLPRI (events) is the caller's
 * business.
 */
unsigned int vb_queue_poll(struct vb_queue *q, const void *owner, unsigned int events);

/*
 * read() emulation. @new_call is true for the first chunk of a read()
 * syscall (CUSE off == 0). Starts read streaming on first use (the owner
 * becomes the reader). On success returns the number of bytes (<= @count)
 * available at *ret_data from the current frame and advances the cursor;
 * they stay valid until the next vb_queue_read() call for this queue (or
 * the reader's release/REQBUFS(0)). A frame is bytesused bytes long.
 * Returns 0 when @new_call is false and the current frame is finished (a
 * read never spans two frames), -EAGAIN when no frame is ready (the caller
 * parks only if @new_call), -EBUSY when another owner streams or reads, or
 * the caller uses streaming I/O, -EINVAL without VB_IO_READ, -EIO in the
 * error state. A short read continues the same frame at the next call; a
 * finished frame goes back to the driver at the next call. ERROR and empty
 * frames are skipped (re-queued).
 */
ssize_t vb_queue_read(struct vb_queue *q, const void *owner, size_t count,
		      bool new_call, const void **ret_data);

/*
 * The owner's file handle closes: stop streaming/reading, free buffers
 * (mapped ones live on in the client's mappings), drop ownership. Does
 * nothing for a handle that is not the owner.
 */
void vb_queue_release(struct vb_queue *q, const void *owner);

/* Owner of the queue (NULL if none) and whether a format change is refused. */
const void *vb_queue_owner(struct vb_queue *q);
bool vb_queue_is_busy(struct vb_queue *q);	/* buffers allocated or read I/O */
bool vb_queue_is_streaming(struct vb_queue *q);
bool vb_queue_is_reading(struct vb_queue *q);	/* read emulation active */

/*
 * Enter the queue error state (vb2_queue_error): poll POLLERR, DQBUF and
 * QBUF -EIO, read() -EIO at the next frame. STREAMOFF and REQBUFS(0) leave
 * it. Wakes waiters.
 */
void vb_queue_set_error(struct vb_queue *q);

/*
 * MMAP support for the preload shim. Looks up the buffer whose m.offset
 * cookie is @offset and whose length is @length (the buffer's length, or
 * that rounded up to a page; -EINVAL otherwise, or when the queue has no
 * MMAP buffers; -EBUSY during read emulation), and returns a new fd
 * (F_DUPFD_CLOEXEC of its memfd, caller closes) and the buffer index.
 * vb_queue_mapped() adjusts the mapping count (V4L2_BUF_FLAG_MAPPED) by
 * @delta and returns the new count (-EINVAL for a bad index or a count
 * that would go negative).
 *
 * Mappings outlive REQBUFS(0) (orphaned buffers): record
 * vb_queue_generation() with each mapping and skip vb_queue_mapped() for
 * mappings of an older generation; it changes whenever buffers are freed.
 */
int vb_queue_mmap_fd(struct vb_queue *q, uint32_t offset, size_t length,
		     int *ret_fd, unsigned int *ret_index);
int vb_queue_mapped(struct vb_queue *q, unsigned int index, int delta);
unsigned int vb_queue_generation(struct vb_queue *q);

/*
 * A new fd (F_DUPFD_CLOEXEC, caller closes) for buffer @index's memfd: the
 * MMAP memory, or the USERPTR staging copy (the only copy: the queue never
 * writes the client's memory; the preload shim copies from it at DQBUF).
 * Sealed against shrinking and growing. -EINVAL for a bad index.
 */
int vb_queue_buffer_fd(struct vb_queue *q, unsigned int index, int *ret_fd);

/* State of buffer @index (enum vb_buf_state), -EINVAL for a bad index. */
int vb_queue_buffer_state(struct vb_queue *q, unsigned int index);

/*
 * --- The preload shim's fast path (daemon/fastpath.c, docs/shim.md). The
 * daemon publishes done buffers to a client before the client dequeues
 * them, and the client's DQBUF comes back later as an acknowledgement.
 *
 * Every buffer gets a new serial number each time it joins the done list.
 * vb_queue_peek_done() fills @dq as DQBUF would return the oldest done
 * buffer whose serial is above @after, @requeue as QBUF of it would return
 * it afterwards (USERPTR: with the userptr and length of its last QBUF;
 * output: with its last payload), its serial and its own length (what
 * USERPTR QBUF needs at least, and output bytesused may be at most);
 * -EAGAIN when there is none, DQBUF's errors otherwise. vb_queue_dqbuf_serial() is DQBUF of the
 * oldest done buffer if its serial is @serial (-ESTALE if not), without
 * the struct.
 */
int vb_queue_peek_done(struct vb_queue *q, const void *owner, uint64_t after,
		       struct v4l2_buffer *dq, struct v4l2_buffer *requeue, uint64_t *ret_serial,
		       uint32_t *ret_length);
int vb_queue_dqbuf_serial(struct vb_queue *q, const void *owner, uint64_t serial);
/*
 * A QBUF of buffer @index that the client was already told had succeeded
 * (the fast path answers in the client and the daemon applies it later)
 * and that vb_queue_qbuf() then refused: the buffer joins the done list as
 * ERROR (bytesused 0 on a capture queue), so the client's next DQBUF
 * returns it, as a buffer the driver could not fill, instead of the client
 * waiting for it forever. Only for a DEQUEUED buffer of a streaming queue
 * without error that @owner owns: -EINVAL, -EBUSY or -EIO otherwise (then
 * the STREAMOFF or REQBUFS the client is about to need takes it back).
 */
int vb_queue_return_refused(struct vb_queue *q, const void *owner, uint32_t index);

/* A queue as the fast path publishes it to one handle, read under one lock. */
struct vb_queue_snapshot {
	bool owned;		/* @owner owns the queue for streaming I/O */
	bool streaming;		/* STREAMON done */
	bool started;		/* start_streaming ran: buffers go to the driver */
	bool error;		/* vb_queue_set_error() */
	uint32_t type;
	uint32_t memory;	/* V4L2_MEMORY_*, 0 without buffers */
	unsigned int n_buffers;
	unsigned int n_queued;	/* queued, active or done (not yet dequeued) */
	unsigned int epoch;	/* bumped by every STREAMOFF, REQBUFS, release (cancel) */
	unsigned int generation;	/* vb_queue_generation() */
	unsigned int poll;	/* vb_queue_poll() for all of POLLIN/OUT/RDNORM/WRNORM,
				 * without starting read emulation */
	unsigned int read_buffers;	/* read emulation's buffer count, 0 without read I/O */
};
void vb_queue_snapshot(struct vb_queue *q, const void *owner, struct vb_queue_snapshot *ret);

/* --- Producer side (any thread). --- */
struct vb_queue *vb_buffer_queue(struct vb_buffer *b);
unsigned int vb_buffer_index(struct vb_buffer *b);
void *vb_buffer_mem(struct vb_buffer *b);	/* daemon-side memory */
size_t vb_buffer_length(struct vb_buffer *b);
/*
 * The frame's CLOCK_MONOTONIC time, for the next vb_buffer_done() (which
 * otherwise reads the clock itself).
 */
void vb_buffer_set_timestamp(struct vb_buffer *b, uint64_t ns);
/* Clamped to vb_buffer_length(); reset to 0 at QBUF (capture). */
void vb_buffer_set_bytesused(struct vb_buffer *b, uint32_t bytesused);
/* The payload: an output buffer's, as the client queued it. */
uint32_t vb_buffer_bytesused(struct vb_buffer *b);
/*
 * The field order of a capture buffer's content (V4L2_FIELD_*, reported at
 * DQBUF; NONE until set). A TOP or BOTTOM field done right after the other
 * field of its frame gets that field's sequence number (V4L2: both fields
 * of a V4L2_FIELD_ALTERNATE frame share one).
 */
void vb_buffer_set_field(struct vb_buffer *b, uint32_t field);
/*
 * Give an ACTIVE buffer back. @state: DONE (filled), ERROR (failed,
 * dequeued with V4L2_BUF_FLAG_ERROR) or QUEUED (only from a failing
 * start_streaming). Stamps the sequence number (0 for the first buffer
 * after each start) and, unless vb_buffer_set_timestamp() gave one, the
 * CLOCK_MONOTONIC time for DONE/ERROR, and wakes waiters. Anything but an ACTIVE buffer is refused (logged at debug
 * level as a driver bug).
 */
void vb_buffer_done(struct vb_buffer *b, enum vb_buf_state state);
/* Add a gap of @n to the sequence numbers (dropped frames). */
void vb_queue_skip_sequence(struct vb_queue *q, unsigned int n);

/*
 * Debug builds (V4L2CUSE_DEBUG_COUNTERS): how often each op was called, as
 * vb2 counts them: an int op (queue_setup, buf_init, buf_prepare,
 * start_streaming) when it succeeded, a void op every time; an optional
 * op the driver left out counts as called, except buf_prepare (without
 * it a buffer skips PREPARING). Returns -EOPNOTSUPP when the counters are
 * compiled out. Only unsigned int members (copied as such).
 */
struct vb_debug_counters {
	unsigned int queue_setup;	/* successful calls */
	unsigned int buf_init;		/* successful calls */
	unsigned int buf_cleanup;
	unsigned int buf_prepare;	/* successful calls */
	unsigned int buf_queue;
	unsigned int buf_done;		/* vb_buffer_done() accepted */
	unsigned int start_streaming;	/* successful starts */
	unsigned int start_failed;
	unsigned int stop_streaming;
	unsigned int reclaimed;		/* ACTIVE buffers the driver did not return */
	unsigned int wake;
};
int vb_queue_debug_counters(struct vb_queue *q, struct vb_debug_counters *ret);

/*
 * Debug builds: the number of unbalanced pairs (buf_init/buf_cleanup
 * against live buffers, start/stop_streaming against the started state,
 * buf_queue/buf_done against ACTIVE buffers, buffers the driver failed to
 * return), logged at debug level; 0 if balanced or compiled out.
 */
int vb_queue_debug_imbalance(struct vb_queue *q);
