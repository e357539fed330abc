/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * videobuf: queueing and streaming, each test once with MMAP and once with
 * USERPTR memory, against the errno values vb2 gives: ownership, QBUF/DQBUF
 * errors, start/stop, the error state and PREPARE_BUF. (Allocation, poll,
 * USERPTR staging and the memfds: test-vb-queue.c.)
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>

#include "videobuf.h"
#include "vb-fake-driver.h"
#include "test-main.h"

/*
 * A test run twice, /vb/@name/mmap and /vb/@name/userptr: static void
 * @fn(uint32_t mem) gets the memory type.
 */
#define VB_TEST_BOTH(name, fn)								\
	static void fn(uint32_t mem);							\
	static void									\
	fn##_data_(gconstpointer data)							\
	{										\
		fn(GPOINTER_TO_UINT(data));						\
	}										\
	V4L2CUSE_TEST_DATA("/vb/" name "/mmap", fn##_data_,				\
			   GUINT_TO_POINTER(V4L2_MEMORY_MMAP))				\
	V4L2CUSE_TEST_DATA("/vb/" name "/userptr", fn##_data_,				\
			   GUINT_TO_POINTER(V4L2_MEMORY_USERPTR))			\
	static void fn(uint32_t mem)

#define SIZE 10000u		/* not page-aligned on purpose */

VB_TEST_BOTH("owner/ebusy", test_owner_ebusy)
{
	struct fake_drv *d = fake_new(SIZE);
	struct v4l2_create_buffers cb = { .count = 1, .memory = mem };
	struct v4l2_buffer b = fake_vbuf(mem, 0);
	const void *rdata;

	cb.format.type = CAP;
	cb.format.fmt.pix.sizeimage = SIZE;
	g_assert_cmpint(fake_reqbufs(d, A, mem, 2, NULL), ==, 0);
	g_assert_cmpint(fake_reqbufs(d, B, mem, 2, NULL), ==, -EBUSY);
	g_assert_cmpint(fake_reqbufs(d, B, mem, 0, NULL), ==, -EBUSY);
	g_assert_cmpint(vb_queue_create_bufs(d->q, B, &cb), ==, -EBUSY);
	g_assert_cmpint(vb_queue_prepare_buf(d->q, B, &b), ==, -EBUSY);
	g_assert_cmpint(fake_qbuf(d, B, mem, 0), ==, -EBUSY);
	g_assert_cmpint(fake_dqbuf(d, B, NULL), ==, -EBUSY);
	g_assert_cmpint(vb_queue_streamon(d->q, B, CAP), ==, -EBUSY);
	g_assert_cmpint(vb_queue_streamoff(d->q, B, CAP), ==, -EBUSY);
	g_assert_cmpint(vb_queue_read(d->q, B, 100, true, &rdata), ==, -EBUSY);
	/* ...even with bad arguments (vb2 checks the owner first). */
	b.index = 99;
	g_assert_cmpint(vb_queue_qbuf(d->q, B, &b), ==, -EBUSY);
	b.index = 0;
	/* QUERYBUF has no owner. */
	g_assert_cmpint(vb_queue_querybuf(d->q, &b), ==, 0);
	/* B's release changes nothing. */
	vb_queue_release(d->q, B);
	g_assert_true(vb_queue_owner(d->q) == A);
	g_assert_cmpint(fake_state(d, 1), ==, VB_BUF_DEQUEUED);
	/* NULL owners are refused. */
	g_assert_cmpint(fake_qbuf(d, NULL, mem, 0), ==, -EINVAL);
	g_assert_cmpint(fake_dqbuf(d, NULL, NULL), ==, -EINVAL);
	g_assert_cmpint(vb_queue_streamon(d->q, NULL, CAP), ==, -EINVAL);
	g_assert_cmpint(vb_queue_streamoff(d->q, NULL, CAP), ==, -EINVAL);
	g_assert_cmpint(vb_queue_read(d->q, NULL, 1, true, &rdata), ==, -EINVAL);
	g_assert_cmpint(vb_queue_prepare_buf(d->q, NULL, &b), ==, -EINVAL);
	g_assert_cmpint(vb_queue_create_bufs(d->q, NULL, &cb), ==, -EINVAL);
	vb_queue_release(d->q, NULL);
	g_assert_true(vb_queue_owner(d->q) == A);
	fake_assert_balanced(d);
	fake_free(d);
}

VB_TEST_BOTH("owner/release", test_owner_release)
{
	struct fake_drv *d = fake_new(SIZE);
	unsigned int wakes;

	fake_stream(d, A, mem, 4, 2);
	fake_produce(d, VB_BUF_DONE);
	g_assert_cmpint(vb_queue_mapped(d->q, 2, 1), ==, 1);
	wakes = d->n_wake;
	vb_queue_release(d->q, A);
	g_assert_cmpuint(d->n_stop, ==, 1);
	g_assert_cmpuint(d->n_cleanup, ==, 4);
	g_assert_cmpuint(d->n_wake, ==, wakes + 1);
	g_assert_null(vb_queue_owner(d->q));
	g_assert_false(vb_queue_is_streaming(d->q));
	g_assert_false(vb_queue_is_busy(d->q));
	fake_assert_balanced(d);
	/* Releasing the queue again does nothing. */
	vb_queue_release(d->q, A);
	g_assert_cmpuint(d->n_stop, ==, 1);
	fake_free(d);

	/* vb_queue_free() stops a streaming queue too. */
	d = fake_new(SIZE);
	fake_stream(d, A, mem, 4, 1);
	vb_queue_free(d->q);
	g_assert_cmpuint(d->n_stop, ==, 1);
	g_assert_cmpuint(d->n_cleanup, ==, 4);
	g_free(d);
}

VB_TEST_BOTH("qbuf/errors", test_qbuf_errors)
{
	struct fake_drv *d = fake_new(SIZE);
	struct v4l2_buffer b = fake_vbuf(mem, 0);

	/* No buffers at all. */
	g_assert_cmpint(vb_queue_qbuf(d->q, A, &b), ==, -EINVAL);
	g_assert_cmpint(fake_reqbufs(d, A, mem, 3, NULL), ==, 0);
	b.index = 3;
	g_assert_cmpint(vb_queue_qbuf(d->q, A, &b), ==, -EINVAL);
	b.index = UINT32_MAX;
	g_assert_cmpint(vb_queue_qbuf(d->q, A, &b), ==, -EINVAL);
	b.index = 0;
	b.type = V4L2_BUF_TYPE_VIDEO_OUTPUT;
	g_assert_cmpint(vb_queue_qbuf(d->q, A, &b), ==, -EINVAL);
	b.type = CAP;
	b.memory = fake_other_memory(mem);
	g_assert_cmpint(vb_queue_qbuf(d->q, A, &b), ==, -EINVAL);
	b.memory = V4L2_MEMORY_DMABUF;
	g_assert_cmpint(vb_queue_qbuf(d->q, A, &b), ==, -EINVAL);
	b.memory = mem;
	g_assert_cmpuint(d->n_prepare, ==, 0);

	/* A good QBUF returns the updated struct. */
	b.flags = 0xffffffff;
	b.bytesused = 1234;
	g_assert_cmpint(vb_queue_qbuf(d->q, A, &b), ==, 0);
	g_assert_cmphex(b.flags, ==, V4L2_BUF_FLAG_QUEUED | V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC |
			V4L2_BUF_FLAG_TSTAMP_SRC_EOF);
	g_assert_cmpuint(b.length, ==, mem == V4L2_MEMORY_MMAP ? SIZE : FAKE_CLIENT_LEN);
	g_assert_cmpuint(b.bytesused, ==, 0);
	g_assert_cmpuint(b.m.offset, ==, fake_querybuf(d, 0).m.offset);
	g_assert_cmpuint(d->n_prepare, ==, 1);
	g_assert_cmpint(fake_state(d, 0), ==, VB_BUF_QUEUED);
	/* Double QBUF. */
	g_assert_cmpint(vb_queue_qbuf(d->q, A, &b), ==, -EINVAL);
	g_assert_cmpint(fake_state(d, 0), ==, VB_BUF_QUEUED);
	g_assert_cmpuint(d->n_prepare, ==, 1);
	/* and while ACTIVE */
	g_assert_cmpint(vb_queue_streamon(d->q, A, CAP), ==, 0);
	g_assert_cmpint(fake_state(d, 0), ==, VB_BUF_ACTIVE);
	g_assert_cmpint(vb_queue_qbuf(d->q, A, &b), ==, -EINVAL);
	/* and while DONE */
	fake_produce(d, VB_BUF_DONE);
	g_assert_cmpint(vb_queue_qbuf(d->q, A, &b), ==, -EINVAL);
	g_assert_cmpint(fake_dqbuf(d, A, NULL), ==, 0);
	g_assert_cmpint(vb_queue_qbuf(d->q, A, &b), ==, 0);

	/* buf_prepare failing: the buffer stays DEQUEUED. */
	d->fail_prepare = -ENOEXEC;
	g_assert_cmpint(fake_qbuf(d, A, mem, 1), ==, -ENOEXEC);
	g_assert_cmpint(fake_state(d, 1), ==, VB_BUF_DEQUEUED);
	g_assert_cmpint(fake_qbuf(d, A, mem, 1), ==, 0);
	g_assert_cmpint(vb_queue_streamoff(d->q, A, CAP), ==, 0);
	fake_assert_balanced(d);
	fake_free(d);
}

VB_TEST_BOTH("dqbuf/errors", test_dqbuf_errors)
{
	struct fake_drv *d = fake_new(SIZE);
	struct v4l2_buffer b = { .type = CAP };

	g_assert_cmpint(fake_dqbuf(d, A, NULL), ==, -EINVAL);	/* streaming off */
	g_assert_cmpint(fake_reqbufs(d, A, mem, 2, NULL), ==, 0);
	g_assert_cmpint(fake_dqbuf(d, A, NULL), ==, -EINVAL);
	g_assert_cmpint(fake_qbuf(d, A, mem, 0), ==, 0);
	g_assert_cmpint(fake_dqbuf(d, A, NULL), ==, -EINVAL);
	g_assert_cmpint(vb_queue_streamon(d->q, A, CAP), ==, 0);
	g_assert_cmpint(fake_dqbuf(d, A, NULL), ==, -EAGAIN);	/* nothing done */
	b.type = V4L2_BUF_TYPE_VIDEO_OUTPUT;
	fake_produce(d, VB_BUF_DONE);
	g_assert_cmpint(vb_queue_dqbuf(d->q, A, &b), ==, -EINVAL);
	g_assert_cmpint(fake_dqbuf(d, A, &b), ==, 0);
	g_assert_cmpint(fake_dqbuf(d, A, NULL), ==, -EAGAIN);
	g_assert_cmpint(vb_queue_streamoff(d->q, A, CAP), ==, 0);
	fake_assert_balanced(d);
	fake_free(d);
}

VB_TEST_BOTH("stream/cycle", test_stream_cycle)
{
	struct fake_drv *d = fake_new(SIZE);
	struct v4l2_buffer b;
	uint64_t last_ts = 0;
	unsigned int i, round;

	fake_stream(d, A, mem, 4, 4);
	g_assert_true(vb_queue_is_streaming(d->q));
	g_assert_cmpuint(d->n_start, ==, 1);
	g_assert_cmpuint(d->last_start_count, ==, 4);
	g_assert_cmpuint(d->n_queue, ==, 4);
	/* STREAMON twice is fine and starts nothing. */
	g_assert_cmpint(vb_queue_streamon(d->q, A, CAP), ==, 0);
	g_assert_cmpuint(d->n_start, ==, 1);
	g_assert_cmpint(vb_queue_streamon(d->q, A, V4L2_BUF_TYPE_VIDEO_OUTPUT), ==, -EINVAL);

	for (round = 0; round < 12; round++) {
		unsigned int wakes = d->n_wake;
		enum vb_buf_state st = round == 5 ? VB_BUF_ERROR : VB_BUF_DONE;
		int index = fake_produce(d, st);
		uint64_t ts;

		g_assert_cmpint(index, ==, (int)(round % 4));
		g_assert_cmpuint(d->n_wake, ==, wakes + 1);
		g_assert_cmpint(fake_state(d, index), ==, st);
		b = fake_querybuf(d, index);
		g_assert_true(b.flags & V4L2_BUF_FLAG_DONE);
		g_assert_cmpint(fake_dqbuf(d, A, &b), ==, 0);
		g_assert_cmpuint(b.index, ==, (unsigned int)index);
		g_assert_cmpuint(b.sequence, ==, round);
		g_assert_cmpuint(b.field, ==, V4L2_FIELD_NONE);
		g_assert_cmpuint(b.memory, ==, mem);
		g_assert_false(b.flags & (V4L2_BUF_FLAG_DONE | V4L2_BUF_FLAG_QUEUED));
		g_assert_true(b.flags & V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC);
		if (st == VB_BUF_ERROR) {
			g_assert_true(b.flags & V4L2_BUF_FLAG_ERROR);
		} else {
			g_assert_false(b.flags & V4L2_BUF_FLAG_ERROR);
			g_assert_cmpuint(b.bytesused, ==, SIZE);
		}
		ts = (uint64_t)b.timestamp.tv_sec * 1000000 + b.timestamp.tv_usec;
		g_assert_cmpuint(ts, >, 0);
		g_assert_cmpuint(ts, >=, last_ts);
		last_ts = ts;
		g_assert_cmpint(fake_state(d, index), ==, VB_BUF_DEQUEUED);
		/* QUERYBUF keeps the frame's data after DQBUF */
		b = fake_querybuf(d, index);
		g_assert_cmpuint(b.sequence, ==, round);
		g_assert_cmpint(fake_qbuf(d, A, mem, index), ==, 0);
		g_assert_cmpint(fake_state(d, index), ==, VB_BUF_ACTIVE);
	}
	/* Dropped frames leave a gap: 11 was the last one. */
	vb_queue_skip_sequence(d->q, 3);
	fake_produce(d, VB_BUF_DONE);
	g_assert_cmpint(fake_dqbuf(d, A, &b), ==, 0);
	g_assert_cmpuint(b.sequence, ==, 15);

	/* Done buffers come out in completion order, not index order. */
	{
		struct vb_buffer *x = fake_pop(d), *y = fake_pop(d);

		fake_complete_buffer(d, y, VB_BUF_DONE);
		fake_complete_buffer(d, x, VB_BUF_DONE);
		g_assert_cmpint(fake_dqbuf(d, A, &b), ==, 0);
		g_assert_cmpuint(b.index, ==, vb_buffer_index(y));
		g_assert_cmpint(fake_dqbuf(d, A, &b), ==, 0);
		g_assert_cmpuint(b.index, ==, vb_buffer_index(x));
	}

	/* STREAMOFF: sequence restarts at 0. */
	g_assert_cmpint(vb_queue_streamoff(d->q, A, CAP), ==, 0);
	for (i = 0; i < 4; i++)
		g_assert_cmpint(fake_qbuf(d, A, mem, i), ==, 0);
	g_assert_cmpint(vb_queue_streamon(d->q, A, CAP), ==, 0);
	fake_produce(d, VB_BUF_DONE);
	g_assert_cmpint(fake_dqbuf(d, A, &b), ==, 0);
	g_assert_cmpuint(b.sequence, ==, 0);
	g_assert_cmpint(vb_queue_streamoff(d->q, A, CAP), ==, 0);
	fake_assert_balanced(d);
	fake_free(d);
}

/* buf_queue completing at once, and vb_buffer_done() refusals. */
VB_TEST_BOTH("stream/sync-complete", test_stream_sync_complete)
{
	struct fake_drv *d = fake_new(SIZE);
	struct v4l2_buffer b;
	struct vb_buffer *vb;

	g_assert_cmpint(fake_reqbufs(d, A, mem, 2, NULL), ==, 0);
	d->complete_in_queue = true;
	g_assert_cmpint(fake_qbuf(d, A, mem, 0), ==, 0);
	g_assert_cmpint(vb_queue_streamon(d->q, A, CAP), ==, 0);
	g_assert_cmpint(fake_state(d, 0), ==, VB_BUF_DONE);
	g_assert_cmpint(fake_qbuf(d, A, mem, 1), ==, 0);
	g_assert_cmpint(fake_state(d, 1), ==, VB_BUF_DONE);
	g_assert_cmpint(fake_dqbuf(d, A, &b), ==, 0);
	g_assert_cmpuint(b.index, ==, 0);
	g_assert_cmpint(fake_dqbuf(d, A, &b), ==, 0);
	g_assert_cmpuint(b.index, ==, 1);
	d->complete_in_queue = false;

	/* A buffer that is not ACTIVE is refused. */
	g_assert_cmpint(fake_qbuf(d, A, mem, 0), ==, 0);
	vb = fake_pop(d);
	vb_buffer_done(vb, VB_BUF_DONE);
	g_assert_cmpint(fake_state(d, 0), ==, VB_BUF_DONE);
	vb_buffer_done(vb, VB_BUF_DONE);		/* twice: refused */
	g_assert_cmpint(fake_state(d, 0), ==, VB_BUF_DONE);
	g_assert_cmpint(fake_dqbuf(d, A, &b), ==, 0);
	vb_buffer_done(vb, VB_BUF_ERROR);		/* DEQUEUED: refused */
	g_assert_cmpint(fake_state(d, 0), ==, VB_BUF_DEQUEUED);
	/* An invalid completion state turns into ERROR (vb2). */
	g_assert_cmpint(fake_qbuf(d, A, mem, 0), ==, 0);
	vb_buffer_done(fake_pop(d), VB_BUF_PREPARED);
	g_assert_cmpint(fake_state(d, 0), ==, VB_BUF_ERROR);
	g_assert_cmpint(vb_queue_streamoff(d->q, A, CAP), ==, 0);
	fake_assert_balanced(d);
	fake_free(d);
}

VB_TEST_BOTH("stream/deferred-start", test_stream_deferred_start)
{
	struct vb_queue_config cfg = fake_config();
	struct fake_drv *d;

	cfg.min_queued_buffers = 3;
	d = fake_new_with(&cfg, SIZE);
	g_assert_cmpint(vb_queue_streamon(d->q, A, CAP), ==, -EINVAL);	/* no buffers */
	g_assert_cmpint(fake_reqbufs(d, A, mem, 2, NULL), ==, 0);
	/* fewer buffers than min_queued_buffers: can never start */
	g_assert_cmpint(vb_queue_streamon(d->q, A, CAP), ==, -EINVAL);
	fake_stream(d, A, mem, 4, 0);
	g_assert_true(vb_queue_is_streaming(d->q));
	g_assert_cmpuint(d->n_start, ==, 0);
	g_assert_cmpint(fake_dqbuf(d, A, NULL), ==, -EAGAIN);
	g_assert_cmpuint(vb_queue_poll(d->q, A, POLLIN), ==, POLLERR);	/* no QBUF yet */
	g_assert_cmpint(fake_qbuf(d, A, mem, 0), ==, 0);
	g_assert_cmpuint(vb_queue_poll(d->q, A, POLLIN), ==, 0);
	g_assert_cmpint(fake_qbuf(d, A, mem, 1), ==, 0);
	g_assert_cmpuint(d->n_start, ==, 0);
	g_assert_cmpint(fake_state(d, 1), ==, VB_BUF_QUEUED);
	g_assert_cmpint(fake_qbuf(d, A, mem, 2), ==, 0);
	g_assert_cmpuint(d->n_start, ==, 1);
	g_assert_cmpuint(d->last_start_count, ==, 3);
	g_assert_cmpint(fake_state(d, 0), ==, VB_BUF_ACTIVE);
	g_assert_cmpint(fake_state(d, 2), ==, VB_BUF_ACTIVE);
	g_assert_cmpint(fake_qbuf(d, A, mem, 3), ==, 0);
	g_assert_cmpint(fake_state(d, 3), ==, VB_BUF_ACTIVE);
	g_assert_cmpuint(d->n_start, ==, 1);
	g_assert_cmpint(vb_queue_streamoff(d->q, A, CAP), ==, 0);
	g_assert_cmpuint(d->n_stop, ==, 1);

	/* STREAMOFF before the deferred start: no stop_streaming. */
	g_assert_cmpint(vb_queue_streamon(d->q, A, CAP), ==, 0);
	g_assert_cmpint(fake_qbuf(d, A, mem, 0), ==, 0);
	g_assert_cmpint(vb_queue_streamoff(d->q, A, CAP), ==, 0);
	g_assert_cmpuint(d->n_stop, ==, 1);
	g_assert_cmpint(fake_state(d, 0), ==, VB_BUF_DEQUEUED);

	/* The deferred start fails inside QBUF: that buffer is not queued. */
	g_assert_cmpint(vb_queue_streamon(d->q, A, CAP), ==, 0);
	g_assert_cmpint(fake_prepare(d, A, mem, 0), ==, 0);
	g_assert_cmpint(fake_qbuf(d, A, mem, 1), ==, 0);
	g_assert_cmpint(fake_qbuf(d, A, mem, 2), ==, 0);
	d->fail_start = -EPERM;
	g_assert_cmpint(fake_qbuf(d, A, mem, 0), ==, -EPERM);
	g_assert_false(vb_queue_is_streaming(d->q));
	g_assert_cmpint(fake_state(d, 0), ==, VB_BUF_PREPARED);
	g_assert_cmpint(fake_state(d, 1), ==, VB_BUF_QUEUED);
	g_assert_cmpint(fake_state(d, 2), ==, VB_BUF_QUEUED);
	g_assert_cmpint(fake_dqbuf(d, A, NULL), ==, -EINVAL);
	/* The next STREAMON starts with what is queued. */
	g_assert_cmpint(fake_qbuf(d, A, mem, 3), ==, 0);
	g_assert_cmpint(vb_queue_streamon(d->q, A, CAP), ==, 0);
	g_assert_cmpuint(d->last_start_count, ==, 3);
	g_assert_cmpint(vb_queue_streamoff(d->q, A, CAP), ==, 0);
	fake_assert_balanced(d);
	fake_free(d);
}

VB_TEST_BOTH("stream/start-fails", test_stream_start_fails)
{
	struct fake_drv *d = fake_new(SIZE);
	unsigned int i, wakes;

	g_assert_cmpint(fake_reqbufs(d, A, mem, 4, NULL), ==, 0);
	for (i = 0; i < 3; i++)
		g_assert_cmpint(fake_qbuf(d, A, mem, i), ==, 0);
	d->fail_start = -EIO;
	wakes = d->n_wake;
	g_assert_cmpint(vb_queue_streamon(d->q, A, CAP), ==, -EIO);
	g_assert_cmpuint(d->n_wake, ==, wakes + 1);
	g_assert_false(vb_queue_is_streaming(d->q));
	g_assert_cmpuint(d->n_queue, ==, 3);		/* they were handed over... */
	for (i = 0; i < 3; i++)				/* ...and given back QUEUED */
		g_assert_cmpint(fake_state(d, i), ==, VB_BUF_QUEUED);
	g_assert_cmpint(fake_state(d, 3), ==, VB_BUF_DEQUEUED);
	g_assert_cmpint(vb_queue_debug_imbalance(d->q), ==, 0);
	g_assert_cmpint(fake_dqbuf(d, A, NULL), ==, -EINVAL);
	g_assert_cmpuint(vb_queue_poll(d->q, A, POLLIN), ==, POLLERR);
	/* STREAMON again: a second chance with the same buffers. */
	g_assert_cmpint(vb_queue_streamon(d->q, A, CAP), ==, 0);
	g_assert_cmpuint(d->last_start_count, ==, 3);
	g_assert_cmpuint(d->n_active, ==, 3);
	g_assert_cmpint(vb_queue_streamoff(d->q, A, CAP), ==, 0);
	fake_assert_balanced(d);

	/* A buggy driver keeps the buffers: they are reclaimed and counted. */
	for (i = 0; i < 2; i++)
		g_assert_cmpint(fake_qbuf(d, A, mem, i), ==, 0);
	d->fail_start = -EIO;
	d->start_keeps_buffers = true;
	g_assert_cmpint(vb_queue_streamon(d->q, A, CAP), ==, -EIO);
	g_assert_cmpint(fake_state(d, 0), ==, VB_BUF_QUEUED);
	g_assert_cmpint(fake_state(d, 1), ==, VB_BUF_QUEUED);
	d->n_active = 0;
	if (vb_queue_debug_counters(d->q, &(struct vb_debug_counters){ 0 }) == 0)
		g_assert_cmpint(vb_queue_debug_imbalance(d->q), >, 0);
	fake_free(d);
}

static void
dqbuf_on_wake(struct fake_drv *d)
{
	int *results = d->user;
	int r = fake_dqbuf(d, A, NULL);

	results[r == -EINVAL ? 0 : r == 0 ? 1 : 2]++;
}

VB_TEST_BOTH("stream/streamoff", test_stream_streamoff)
{
	struct fake_drv *d = fake_new(SIZE);
	int results[3] = { 0 };
	unsigned int i, wakes;

	g_assert_cmpint(fake_reqbufs(d, A, mem, 4, NULL), ==, 0);
	/* STREAMOFF without STREAMON: allowed, and resets queued buffers. */
	g_assert_cmpint(fake_qbuf(d, A, mem, 0), ==, 0);
	g_assert_cmpint(fake_prepare(d, A, mem, 1), ==, 0);
	g_assert_cmpint(vb_queue_streamoff(d->q, A, CAP), ==, 0);
	g_assert_cmpint(fake_state(d, 0), ==, VB_BUF_DEQUEUED);
	g_assert_cmpint(fake_state(d, 1), ==, VB_BUF_DEQUEUED);
	g_assert_cmpuint(d->n_stop, ==, 0);
	g_assert_cmpint(vb_queue_streamoff(d->q, A, V4L2_BUF_TYPE_VIDEO_OUTPUT), ==, -EINVAL);

	for (i = 0; i < 4; i++)
		g_assert_cmpint(fake_qbuf(d, A, mem, i), ==, 0);
	g_assert_cmpint(vb_queue_streamon(d->q, A, CAP), ==, 0);
	fake_produce(d, VB_BUF_DONE);			/* 0 DONE, not dequeued */
	/* A waiter parked in DQBUF retries from wake and gets EINVAL. */
	d->on_wake = dqbuf_on_wake;
	d->user = results;
	wakes = d->n_wake;
	g_assert_cmpint(vb_queue_streamoff(d->q, A, CAP), ==, 0);
	g_assert_cmpuint(d->n_wake, >, wakes);
	g_assert_cmpint(results[0], >, 0);
	g_assert_cmpint(results[1], ==, 0);		/* the DONE buffer is dropped */
	g_assert_cmpint(results[2], ==, 0);
	d->on_wake = NULL;
	g_assert_cmpuint(d->n_stop, ==, 1);
	g_assert_cmpuint(d->n_active, ==, 0);
	for (i = 0; i < 4; i++)
		g_assert_cmpint(fake_state(d, i), ==, VB_BUF_DEQUEUED);
	g_assert_cmpint(fake_dqbuf(d, A, NULL), ==, -EINVAL);

	/* A buggy driver keeps buffers at stop: reclaimed, counted. */
	g_assert_cmpint(fake_qbuf(d, A, mem, 0), ==, 0);
	g_assert_cmpint(vb_queue_streamon(d->q, A, CAP), ==, 0);
	fake_assert_balanced(d);
	d->stop_keeps_buffers = true;
	g_assert_cmpint(vb_queue_streamoff(d->q, A, CAP), ==, 0);
	g_assert_cmpint(fake_state(d, 0), ==, VB_BUF_DEQUEUED);
	if (vb_queue_debug_counters(d->q, &(struct vb_debug_counters){ 0 }) == 0)
		g_assert_cmpint(vb_queue_debug_imbalance(d->q), >, 0);
	fake_free(d);
}

VB_TEST_BOTH("stream/error", test_stream_error)
{
	struct fake_drv *d = fake_new(SIZE);
	unsigned int wakes;

	fake_stream(d, A, mem, 3, 2);
	fake_produce(d, VB_BUF_DONE);
	wakes = d->n_wake;
	vb_queue_set_error(d->q);
	g_assert_cmpuint(d->n_wake, ==, wakes + 1);
	g_assert_cmpint(fake_dqbuf(d, A, NULL), ==, -EIO);
	g_assert_cmpint(fake_qbuf(d, A, mem, 2), ==, -EIO);
	g_assert_cmpint(fake_prepare(d, A, mem, 2), ==, -EIO);
	g_assert_cmpuint(vb_queue_poll(d->q, A, POLLIN | POLLRDNORM), ==, POLLERR);
	/* STREAMOFF leaves the error state. */
	g_assert_cmpint(vb_queue_streamoff(d->q, A, CAP), ==, 0);
	g_assert_cmpint(fake_qbuf(d, A, mem, 2), ==, 0);
	g_assert_cmpint(vb_queue_streamon(d->q, A, CAP), ==, 0);
	g_assert_cmpuint(vb_queue_poll(d->q, A, POLLIN), ==, 0);
	fake_produce(d, VB_BUF_DONE);
	g_assert_cmpuint(vb_queue_poll(d->q, A, POLLIN), ==, POLLIN | POLLRDNORM);
	g_assert_cmpint(fake_dqbuf(d, A, NULL), ==, 0);
	g_assert_cmpint(vb_queue_streamoff(d->q, A, CAP), ==, 0);

	/* So does REQBUFS(0). */
	vb_queue_set_error(d->q);
	g_assert_cmpint(fake_reqbufs(d, A, mem, 0, NULL), ==, 0);
	fake_stream(d, A, mem, 2, 1);
	g_assert_cmpuint(vb_queue_poll(d->q, A, POLLIN), ==, 0);
	g_assert_cmpint(vb_queue_streamoff(d->q, A, CAP), ==, 0);
	fake_assert_balanced(d);
	fake_free(d);
}

VB_TEST_BOTH("prepare-buf", test_prepare_buf)
{
	struct fake_drv *d = fake_new(SIZE);
	struct v4l2_buffer b = fake_vbuf(mem, 0);

	g_assert_cmpint(vb_queue_prepare_buf(d->q, A, &b), ==, -EINVAL);	/* no buffers */
	g_assert_cmpint(fake_reqbufs(d, A, mem, 2, NULL), ==, 0);
	g_assert_cmpint(vb_queue_prepare_buf(d->q, A, &b), ==, 0);
	g_assert_true(b.flags & V4L2_BUF_FLAG_PREPARED);
	g_assert_false(b.flags & V4L2_BUF_FLAG_QUEUED);
	g_assert_cmpint(fake_state(d, 0), ==, VB_BUF_PREPARED);
	g_assert_true(fake_querybuf(d, 0).flags & V4L2_BUF_FLAG_PREPARED);
	g_assert_cmpuint(d->n_prepare, ==, 1);
	/* Twice: EINVAL (vb2 "invalid buffer state"). */
	g_assert_cmpint(vb_queue_prepare_buf(d->q, A, &b), ==, -EINVAL);
	/* QBUF of a prepared buffer does not prepare again. */
	g_assert_cmpint(fake_qbuf(d, A, mem, 0), ==, 0);
	g_assert_cmpuint(d->n_prepare, ==, 1);
	g_assert_cmpint(vb_queue_prepare_buf(d->q, A, &b), ==, -EINVAL);	/* QUEUED */
	/* Failing preparation. */
	b.index = 1;
	d->fail_prepare = -EFAULT;
	g_assert_cmpint(vb_queue_prepare_buf(d->q, A, &b), ==, -EFAULT);
	g_assert_cmpint(fake_state(d, 1), ==, VB_BUF_DEQUEUED);
	b.index = 2;
	g_assert_cmpint(vb_queue_prepare_buf(d->q, A, &b), ==, -EINVAL);
	b.index = 1;
	b.type = 0;
	g_assert_cmpint(vb_queue_prepare_buf(d->q, A, &b), ==, -EINVAL);
	b.type = CAP;
	b.memory = fake_other_memory(mem);
	g_assert_cmpint(vb_queue_prepare_buf(d->q, A, &b), ==, -EINVAL);
	g_assert_cmpint(vb_queue_streamoff(d->q, A, CAP), ==, 0);
	fake_assert_balanced(d);
	fake_free(d);

	/* Without buf_prepare: straight to PREPARED/QUEUED. */
	{
		struct vb_queue_config cfg = fake_config();

		cfg.ops = &fake_min_ops;
		d = fake_new_with(&cfg, SIZE);
		g_assert_cmpint(fake_reqbufs(d, A, mem, 2, NULL), ==, 0);
		b = fake_vbuf(mem, 0);
		g_assert_cmpint(vb_queue_prepare_buf(d->q, A, &b), ==, 0);
		g_assert_cmpint(fake_state(d, 0), ==, VB_BUF_PREPARED);
		g_assert_cmpint(fake_qbuf(d, A, mem, 0), ==, 0);
		g_assert_cmpint(fake_qbuf(d, A, mem, 1), ==, 0);
		g_assert_cmpint(vb_queue_streamon(d->q, A, CAP), ==, 0);
		fake_produce(d, VB_BUF_DONE);
		g_assert_cmpint(fake_dqbuf(d, A, NULL), ==, 0);
		/* no stop_streaming op: the queue reclaims, and counts that */
		g_assert_cmpint(vb_queue_streamoff(d->q, A, CAP), ==, 0);
		g_assert_cmpint(fake_state(d, 1), ==, VB_BUF_DEQUEUED);
		d->n_active = 0;
		vb_queue_free(d->q);
		g_free(d);
	}
}
