/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * videobuf internals: the structs, the op-call macros and the functions
 * that cross between queue.c, buffers.c, stream.c, mem.c and read.c (and
 * test-vb-states, which checks the state table). Not installed, not for
 * the daemon.
 */

#include "config.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

#include "videobuf.h"

#ifndef V4L2CUSE_DEBUG_COUNTERS
#define V4L2CUSE_DEBUG_COUNTERS 0
#endif

/*
 * Debug builds count ops and events in q->cnt (struct vb_debug_counters).
 * Ops run without the queue lock, so every count is a relaxed atomic add
 * and readers copy the counters with atomic loads.
 */
#if V4L2CUSE_DEBUG_COUNTERS
#define vb_count(q, field) ((void)__atomic_add_fetch(&(q)->cnt.field, 1, __ATOMIC_RELAXED))
#else
#define vb_count(q, field) ((void)(q))
#endif

/*
 * Every driver op is called through one of these two (vb2's call_qop and
 * call_void_qop): an optional op the driver left NULL does its default
 * (returns 0, or nothing), and debug builds count the call in
 * q->cnt.<op>. An int op counts only when it returns 0, its default
 * included, so that buf_init pairs with buf_cleanup and start_streaming
 * with stop_streaming; a void op counts every call. Never with the queue
 * lock held.
 */
#define vb_call_qop(q, op, ...)							\
	({									\
		struct vb_queue *_q = (q);					\
		int _r = _q->ops->op ? _q->ops->op(__VA_ARGS__) : 0;		\
										\
		if (_r == 0)							\
			vb_count(_q, op);					\
		_r;								\
	})

#define vb_call_void_qop(q, op, ...)						\
	do {									\
		struct vb_queue *_q = (q);					\
										\
		if (_q->ops->op)						\
			_q->ops->op(__VA_ARGS__);				\
		vb_count(_q, op);						\
	} while (0)

/* Who uses the queue. Changed under the lock, with the owner. */
enum vb_io_mode {
	VB_MODE_IDLE,		/* no buffers, no owner */
	VB_MODE_STREAMING,	/* REQBUFS/CREATE_BUFS buffers, owner is a fh */
	VB_MODE_READ,		/* read emulation, owner is the reader */
};

struct vb_buffer {
	struct vb_queue *q;
	unsigned int index;
	enum vb_buf_state state;	/* only vb_buf_set_state() writes it */

	/* Memory: a sealed memfd mapped MAP_SHARED (mem.c). */
	int memfd;
	void *mem;
	size_t length;			/* queue_setup's size: v4l2 length */
	size_t mem_length;		/* page-aligned */
	bool charged;			/* mem_length charged to q->budget */
	uint32_t offset;		/* MMAP cookie (m.offset) */
	bool inited;			/* buf_init succeeded (or no buf_init) */

	/* USERPTR: the client's buffer, 0 until the first QBUF/PREPARE_BUF. */
	unsigned long userptr;
	uint32_t user_length;

	/* Written by the producer while ACTIVE, read under the lock after. */
	uint32_t bytesused;
	uint32_t field;			/* V4L2_FIELD_*, 0: NONE */

	uint32_t sequence;
	uint64_t timestamp_ns;
	bool timestamp_set;		/* the producer stamped it (vb_buffer_set_timestamp) */
	uint64_t done_serial;		/* when it last joined the done list */
	unsigned int mapped;

	GList queued_link;		/* q->queued: QUEUED, ACTIVE, DONE, ERROR */
	GList done_link;		/* q->done: DONE, ERROR */
};

struct vb_queue {
	pthread_mutex_t lock;
	pthread_cond_t idle;		/* inflight reached 0 or busy cleared */

	struct vb_queue_config cfg;
	const struct vb_ops *ops;
	char *name;
	size_t page_size;
	struct vb_budget *budget;	/* our reference, may be NULL */

	struct vb_buffer *bufs[VB_MAX_BUFFERS];
	unsigned int n_buffers;
	uint32_t memory;		/* V4L2_MEMORY_*, 0 without buffers */
	unsigned int generation;	/* bumped when buffers are freed */

	const void *owner;
	enum vb_io_mode mode;

	bool streaming;			/* STREAMON done (maybe deferred start) */
	bool start_called;		/* start_streaming succeeded or running */
	bool error;
	bool waiting_for_buffers;	/* no QBUF since REQBUFS/STREAMOFF */

	/*
	 * A transition (alloc, free, start, stop) runs with the lock dropped
	 * on busy_thread; other transitions get -EBUSY meanwhile.
	 */
	bool busy;
	pthread_t busy_thread;
	/* buf_prepare/buf_queue calls running without the lock. */
	unsigned int inflight;

	GQueue queued;			/* vb2's queued_list */
	GQueue done;			/* vb2's done_list */
	unsigned int n_active;		/* owned by the driver */
	uint32_t sequence;
	uint32_t pair_field;		/* a frame's first field is done: TOP or BOTTOM, else 0 */
	uint64_t done_serial;		/* buffers that joined the done list, ever */
	unsigned int stream_epoch;	/* bumped by every cancel */

	/* Read emulation cursor: the frame being read, DEQUEUED meanwhile. */
	struct vb_buffer *rd_cur;
	size_t rd_pos;
	size_t rd_size;

#if V4L2CUSE_DEBUG_COUNTERS
	struct vb_debug_counters cnt;
#endif
};

/* Buffers collected under the lock for buf_queue after unlocking. */
struct vb_handoff {
	struct vb_buffer *bufs[VB_MAX_BUFFERS];
	unsigned int n;
};

/* vb2_queue_is_busy(): someone else owns the queue. Locked. */
static inline bool
vb_queue_not_owner(const struct vb_queue *q, const void *owner)
{
	return q->owner && q->owner != owner;
}

/* queue.c: states, lock, transitions, hand-offs, wakes, ownership */
void vb_queue_lock(struct vb_queue *q);
void vb_queue_unlock(struct vb_queue *q);
int vb_buf_set_state(struct vb_queue *q, struct vb_buffer *b, enum vb_buf_state state);
const char *vb_io_mode_name(enum vb_io_mode mode);	/* test-vb-states */
int vb_transition_begin_locked(struct vb_queue *q);
void vb_transition_end_locked(struct vb_queue *q);
void vb_queue_wait_inflight_locked(struct vb_queue *q);
void vb_handoff_add_locked(struct vb_queue *q, struct vb_handoff *h, struct vb_buffer *b);
void vb_handoff_run(struct vb_queue *q, struct vb_handoff *h);
void vb_queue_wake(struct vb_queue *q);
void vb_queue_teardown_locked(struct vb_queue *q);

/* buffers.c: allocation, freeing, the v4l2_buffer view */
int vb_queue_setup_alloc_locked(struct vb_queue *q, uint32_t memory, unsigned int count,
				size_t size, bool create, unsigned int *ret_count);
void vb_queue_free_buffers_locked(struct vb_queue *q);
void vb_fill_v4l2_buffer(struct vb_queue *q, struct vb_buffer *b, struct v4l2_buffer *out);
/* The same, as if @b were in @state (the fast path's QBUF answer). */
void vb_fill_v4l2_buffer_as(struct vb_queue *q, struct vb_buffer *b, enum vb_buf_state state,
			    struct v4l2_buffer *out);

/* read.c: vb2_core_poll's mask, without starting read emulation */
unsigned int vb_poll_mask_locked(struct vb_queue *q, const void *owner, unsigned int events);

/* stream.c: start and stop */
int vb_queue_start_locked(struct vb_queue *q);
void vb_queue_cancel_locked(struct vb_queue *q);

/* mem.c: memfds */
int vb_size_align(const struct vb_queue *q, size_t size, size_t *ret_aligned);
int vb_mem_alloc(struct vb_queue *q, struct vb_buffer *b, size_t length);
void vb_mem_free(struct vb_buffer *b);

/* An output queue: the client fills buffers, the driver consumes them. */
static inline bool
vb_is_output(const struct vb_queue *q)
{
	return V4L2_TYPE_IS_OUTPUT(q->cfg.type);
}
