/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A fake videobuf driver for the test-vb-* programs (vb-fake-driver.c,
 * the static library vb_fake_driver): it records every op, keeps the
 * buffers it was handed in FIFO order, and has vivid-style one-shot
 * failure knobs. Single-threaded use unless a test adds its own locking
 * (test-vb-stress has its own driver).
 */

#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>

#include <glib.h>

#include "videobuf.h"

/* Short names the vb-* tests share: the capture type, the memory types, two handles. */
#define CAP V4L2_BUF_TYPE_VIDEO_CAPTURE
#define MMAP V4L2_MEMORY_MMAP
#define UPTR V4L2_MEMORY_USERPTR
extern int fake_owners[2];
#define A ((const void *)&fake_owners[0])
#define B ((const void *)&fake_owners[1])

struct fake_drv {
	struct vb_queue *q;

	/* Buffers handed over by buf_queue and not yet returned, oldest first. */
	struct vb_buffer *active[VB_MAX_BUFFERS * 2];
	unsigned int n_active;

	/* queue_setup: size to ask for, and a cap on the count (0: none). */
	size_t size;
	unsigned int max_buffers;
	unsigned int min_accept;	/* second queue_setup accepts >= this */

	/* Knobs: a negative errno makes the op fail once, then it resets. */
	int fail_setup;
	int fail_prepare;
	int fail_start;
	int fail_init_at;		/* buf_init fails for this index + 1 (0: never) */
	bool start_keeps_buffers;	/* bug: failing start does not return buffers */
	bool stop_keeps_buffers;	/* bug: stop does not return buffers */
	bool complete_in_queue;		/* buf_queue completes the buffer at once */

	/* Call counts (n_setup: accepted calls, as the queue counts them). */
	unsigned int n_setup, n_init, n_prepare, n_queue, n_start, n_stop, n_cleanup;
	unsigned int n_wake;
	unsigned int last_start_count;
	size_t last_setup_size_in;
	unsigned int last_setup_count_in;

	/* The wake op calls this too (DQBUF from wake, for example). */
	void (*on_wake)(struct fake_drv *drv);
	void *user;
};

/* The ops, for tests that build their own table from some of them. */
int fake_queue_setup(struct vb_queue *q, unsigned int *num, size_t *size);
int fake_buf_init(struct vb_buffer *b);
void fake_buf_cleanup(struct vb_buffer *b);
int fake_buf_prepare(struct vb_buffer *b);	/* asserts the buffer is PREPARING */
void fake_buf_queue(struct vb_buffer *b);	/* asserts the buffer is ACTIVE */
int fake_start_streaming(struct vb_queue *q, unsigned int count);
void fake_stop_streaming(struct vb_queue *q);
void fake_wake(struct vb_queue *q);

/* Every op. */
extern const struct vb_ops fake_ops;
/* Only the required ops: every optional default is exercised too. */
extern const struct vb_ops fake_min_ops;

/* Byte i of buffer k is k * 31 + i; bytesused is @bytes. */
void fake_fill(struct vb_buffer *b, uint32_t bytes);
/* Fill (DONE only) and give the buffer back with @state. */
void fake_complete_buffer(struct fake_drv *d, struct vb_buffer *b, enum vb_buf_state state);
/* The oldest buffer the driver holds, taken off its list; NULL if none. */
struct vb_buffer *fake_pop(struct fake_drv *d);
/* The producer: complete the oldest active buffer. Returns its index or -1. */
int fake_produce(struct fake_drv *d, enum vb_buf_state state);
/* Give every buffer the driver holds back with @state, unfilled. */
void fake_return_all(struct fake_drv *d, enum vb_buf_state state);

/*
 * Capture, every I/O mode, min_buffers 2, 3 read buffers, orphans allowed;
 * no priv: fake_new_with() sets it to the driver it makes.
 */
struct vb_queue_config fake_config(void);
/* A driver with a queue from @cfg (its priv replaced) asking for @size. */
struct fake_drv *fake_new_with(const struct vb_queue_config *cfg, size_t size);
struct fake_drv *fake_new(size_t size);		/* with fake_config() */
/* Frees the queue and checks every paired op balanced. */
void fake_free(struct fake_drv *d);

/* Helpers for the ioctls. */
int fake_reqbufs(struct fake_drv *d, const void *owner, uint32_t memory, unsigned int count,
		 unsigned int *ret_count);

/* The "client's" memory for USERPTR buffers (the queue never writes it). */
#define FAKE_CLIENT_LEN (64u * 1024u)
extern uint8_t fake_client_mem[VB_MAX_BUFFERS][FAKE_CLIENT_LEN];

/* A QBUF/PREPARE_BUF argument; USERPTR buffers point into fake_client_mem. */
struct v4l2_buffer fake_vbuf(uint32_t memory, unsigned int index);
int fake_qbuf(struct fake_drv *d, const void *owner, uint32_t memory, unsigned int index);
/* PREPARE_BUF of buffer @index with @memory. */
int fake_prepare(struct fake_drv *d, const void *owner, uint32_t memory, unsigned int index);
/* QUERYBUF of capture buffer @index, asserted to succeed. */
struct v4l2_buffer fake_querybuf(struct fake_drv *d, unsigned int index);
/* The memory type (MMAP or USERPTR) a test does not use. */
uint32_t fake_other_memory(uint32_t memory);
/* DQBUF; the buffer goes to *@ret (may be NULL) whatever the result. */
int fake_dqbuf(struct fake_drv *d, const void *owner, struct v4l2_buffer *ret);
/* REQBUFS(@count) of @memory, QBUF buffers 0 .. @queued - 1, STREAMON: each must succeed. */
void fake_stream(struct fake_drv *d, const void *owner, uint32_t memory, unsigned int count,
		 unsigned int queued);
int fake_state(struct fake_drv *d, unsigned int index);	/* vb_queue_buffer_state() */
/* No imbalance, and the queue's debug counters agree with ours. */
void fake_assert_balanced(struct fake_drv *d);
