/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * videobuf read() emulation: frames delivered in CUSE-sized pieces, the
 * frame cursor across read() calls, ownership against streaming I/O,
 * skipped ERROR frames, and start/stop.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>

#include <glib.h>

#include "videobuf.h"
#include "vb-fake-driver.h"
#include "test-main.h"

#define CHUNK 131072u			/* one FUSE_READ at most */
#define FRAME (600u * 1024u)		/* 600 KiB: 4 full chunks + 90112 bytes */

/* What fake_fill() wrote at @off of buffer @index. */
static uint8_t
pattern(unsigned int index, size_t off)
{
	return (uint8_t)(index * 31 + off);
}

static void
assert_pattern(const void *data, size_t len, unsigned int index, size_t off)
{
	const uint8_t *p = data;
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != pattern(index, off + i))
			g_error("byte %zu of buffer %u: %u, not %u", off + i, index, p[i],
				pattern(index, off + i));
}

/*
 * One read() syscall of @count bytes as CUSE delivers it: pieces of at
 * most 128 KiB, the first with off == 0, until a piece comes back short.
 * Returns the total, or the error of the first piece.
 */
static ssize_t
read_syscall(struct fake_drv *d, const void *owner, size_t count, uint8_t *dst)
{
	size_t total = 0;

	while (total < count) {
		size_t want = MIN(count - total, (size_t)CHUNK);
		const void *data = NULL;
		ssize_t n = vb_queue_read(d->q, owner, want, total == 0, &data);

		if (n < 0)
			return total ? (ssize_t)total : n;
		if (n > 0)
			memcpy(dst + total, data, (size_t)n);
		total += (size_t)n;
		if ((size_t)n < want)
			break;
	}
	return (ssize_t)total;
}

V4L2CUSE_TEST("/vb-read/chunks", test_read_chunks)
{
	struct fake_drv *d = fake_new(FRAME);
	const void *data = NULL;
	uint8_t *dst = g_malloc(2 * FRAME);
	unsigned int i;
	ssize_t n;

	/* First read: emulation starts, nothing produced yet. */
	g_assert_cmpint(vb_queue_read(d->q, A, CHUNK, true, &data), ==, -EAGAIN);
	g_assert_true(vb_queue_is_reading(d->q));
	g_assert_true(vb_queue_is_busy(d->q));
	g_assert_true(vb_queue_is_streaming(d->q));
	g_assert_true(vb_queue_owner(d->q) == A);
	g_assert_cmpuint(d->n_init, ==, 3);		/* cfg.read_buffers */
	g_assert_cmpuint(d->n_start, ==, 1);
	g_assert_cmpuint(d->last_start_count, ==, 3);
	g_assert_cmpuint(d->n_active, ==, 3);
	/* A continuation piece with no frame: 0, never a park. */
	g_assert_cmpint(vb_queue_read(d->q, A, CHUNK, false, &data), ==, 0);

	fake_produce(d, VB_BUF_DONE);			/* buffer 0 */
	fake_produce(d, VB_BUF_DONE);			/* buffer 1 */
	for (i = 0; i < 4; i++) {
		n = vb_queue_read(d->q, A, CHUNK, i == 0, &data);
		g_assert_cmpint(n, ==, CHUNK);
		assert_pattern(data, CHUNK, 0, (size_t)i * CHUNK);
	}
	n = vb_queue_read(d->q, A, CHUNK, false, &data);
	g_assert_cmpint(n, ==, FRAME - 4 * CHUNK);
	g_assert_cmpint(n, ==, 90112);
	assert_pattern(data, (size_t)n, 0, 4 * CHUNK);
	/* The frame is finished but not yet back with the driver... */
	g_assert_cmpuint(d->n_active, ==, 1);
	g_assert_cmpint(fake_state(d, 0), ==, VB_BUF_DEQUEUED);
	/* ...a further piece of the same read() gets 0 and requeues it. */
	g_assert_cmpint(vb_queue_read(d->q, A, CHUNK, false, &data), ==, 0);
	g_assert_cmpuint(d->n_active, ==, 2);

	/* A whole read() syscall of exactly sizeimage, and of more. */
	g_assert_cmpint(read_syscall(d, A, FRAME, dst), ==, FRAME);
	assert_pattern(dst, FRAME, 1, 0);
	g_assert_cmpint(read_syscall(d, A, 2 * FRAME, dst), ==, -EAGAIN);
	fake_produce(d, VB_BUF_DONE);			/* buffer 2 */
	g_assert_cmpint(read_syscall(d, A, 2 * FRAME, dst), ==, FRAME);
	assert_pattern(dst, FRAME, 2, 0);
	/* A frame ending exactly at a piece boundary: the next piece gets 0. */
	d->size = 4 * CHUNK;
	fake_produce(d, VB_BUF_DONE);			/* buffer 0 again, 512 KiB */
	g_assert_cmpint(read_syscall(d, A, 2 * FRAME, dst), ==, 4 * CHUNK);
	assert_pattern(dst, 4 * CHUNK, 0, 0);
	g_assert_cmpint(vb_queue_read(d->q, A, CHUNK, true, &data), ==, -EAGAIN);

	vb_queue_release(d->q, A);
	g_assert_false(vb_queue_is_reading(d->q));
	g_assert_null(vb_queue_owner(d->q));
	g_assert_cmpuint(d->n_stop, ==, 1);
	fake_assert_balanced(d);
	fake_free(d);
	g_free(dst);
}

V4L2CUSE_TEST("/vb-read/short", test_read_short)
{
	struct fake_drv *d = fake_new(5000);
	const void *data = NULL;
	size_t off = 0;
	ssize_t n;

	fake_produce(d, VB_BUF_DONE);			/* nothing active yet */
	g_assert_cmpint(vb_queue_read(d->q, A, 1, true, &data), ==, -EAGAIN);
	fake_produce(d, VB_BUF_DONE);
	fake_produce(d, VB_BUF_DONE);
	/* Short read() calls continue the same frame (vb2 fileio). */
	while (off < 5000) {
		n = vb_queue_read(d->q, A, 1000, true, &data);
		g_assert_cmpint(n, ==, 1000);
		assert_pattern(data, 1000, 0, off);
		off += 1000;
		g_assert_cmpuint(vb_queue_poll(d->q, A, POLLIN), ==, POLLIN | POLLRDNORM);
	}
	/* the next read() moves on to the next frame */
	n = vb_queue_read(d->q, A, 1, true, &data);
	g_assert_cmpint(n, ==, 1);
	assert_pattern(data, 1, 1, 0);
	/* 1-byte non-blocking reads, as v4l2-compliance does */
	n = vb_queue_read(d->q, A, 1, true, &data);
	g_assert_cmpint(n, ==, 1);
	assert_pattern(data, 1, 1, 1);
	/* A reader that stops mid-frame: poll still says readable. */
	g_assert_cmpuint(vb_queue_poll(d->q, A, POLLIN), ==, POLLIN | POLLRDNORM);
	g_assert_cmpuint(vb_queue_poll(d->q, B, POLLIN), ==, 0);
	/* count 0 reads nothing and moves nothing */
	n = vb_queue_read(d->q, A, 0, true, &data);
	g_assert_cmpint(n, ==, 0);
	n = vb_queue_read(d->q, A, 10, true, &data);
	g_assert_cmpint(n, ==, 10);
	assert_pattern(data, 10, 1, 2);
	/* and goes away: release stops everything */
	vb_queue_release(d->q, A);
	g_assert_cmpuint(d->n_stop, ==, 1);
	g_assert_cmpuint(d->n_cleanup, ==, 3);
	g_assert_false(vb_queue_is_busy(d->q));
	/* B may read now; it starts a fresh emulation. */
	g_assert_cmpint(vb_queue_read(d->q, B, 10, true, &data), ==, -EAGAIN);
	g_assert_true(vb_queue_owner(d->q) == B);
	g_assert_cmpuint(d->n_start, ==, 2);
	vb_queue_release(d->q, B);
	fake_assert_balanced(d);
	fake_free(d);
}

V4L2CUSE_TEST("/vb-read/ebusy", test_read_ebusy)
{
	struct fake_drv *d = fake_new(4096);
	struct v4l2_create_buffers cb = { .count = 1, .memory = MMAP };
	const void *data = NULL;
	unsigned int index;
	int fd;

	cb.format.type = CAP;
	cb.format.fmt.pix.sizeimage = 4096;
	g_assert_cmpint(vb_queue_read(d->q, A, 10, true, &data), ==, -EAGAIN);
	/* Another handle: EBUSY for everything that needs the queue. */
	g_assert_cmpint(vb_queue_read(d->q, B, 10, true, &data), ==, -EBUSY);
	g_assert_cmpint(vb_queue_read(d->q, B, 10, false, &data), ==, -EBUSY);
	g_assert_cmpint(fake_reqbufs(d, B, MMAP, 2, NULL), ==, -EBUSY);
	g_assert_cmpint(vb_queue_create_bufs(d->q, B, &cb), ==, -EBUSY);
	/* The reader itself cannot mix in streaming I/O (vb2: file io in progress). */
	g_assert_cmpint(fake_reqbufs(d, A, MMAP, 2, NULL), ==, -EBUSY);
	g_assert_cmpint(vb_queue_create_bufs(d->q, A, &cb), ==, -EBUSY);
	g_assert_cmpint(fake_qbuf(d, A, MMAP, 0), ==, -EBUSY);
	g_assert_cmpint(fake_dqbuf(d, A, NULL), ==, -EBUSY);
	g_assert_cmpint(vb_queue_streamon(d->q, A, CAP), ==, -EBUSY);
	g_assert_cmpint(vb_queue_streamoff(d->q, A, CAP), ==, -EBUSY);
	g_assert_cmpint(vb_queue_mmap_fd(d->q, 0, 4096, &fd, &index), ==, -EBUSY);
	/* CREATE_BUFS(0) only validates: EBUSY becomes 0 (vb2). */
	cb.count = 0;
	g_assert_cmpint(vb_queue_create_bufs(d->q, A, &cb), ==, 0);
	g_assert_cmpint(vb_queue_create_bufs(d->q, B, &cb), ==, 0);
	/* but bad arguments still fail */
	cb.memory = V4L2_MEMORY_DMABUF;
	g_assert_cmpint(vb_queue_create_bufs(d->q, A, &cb), ==, -EINVAL);
	/* Wrong type/memory are EINVAL before the busy test. */
	{
		struct v4l2_requestbuffers req = { .count = 0, .type = CAP,
						   .memory = V4L2_MEMORY_DMABUF };

		g_assert_cmpint(vb_queue_reqbufs(d->q, A, &req), ==, -EINVAL);
	}
	/* B's poll sees the queue but starts nothing. */
	g_assert_cmpuint(vb_queue_poll(d->q, B, POLLIN), ==, 0);
	/* REQBUFS(0) by the reader stops read emulation (our extension). */
	g_assert_cmpint(fake_reqbufs(d, A, MMAP, 0, NULL), ==, 0);
	g_assert_false(vb_queue_is_reading(d->q));
	g_assert_null(vb_queue_owner(d->q));
	g_assert_cmpuint(d->n_stop, ==, 1);
	g_assert_cmpuint(d->n_cleanup, ==, 3);

	/* A streaming owner: read() is EBUSY for it and for others. */
	g_assert_cmpint(fake_reqbufs(d, A, MMAP, 2, NULL), ==, 0);
	g_assert_cmpint(vb_queue_read(d->q, A, 10, true, &data), ==, -EBUSY);
	g_assert_cmpint(vb_queue_read(d->q, B, 10, true, &data), ==, -EBUSY);
	/* poll never starts reading while buffers exist */
	g_assert_cmpuint(vb_queue_poll(d->q, B, POLLIN), ==, POLLERR);
	g_assert_false(vb_queue_is_reading(d->q));
	g_assert_cmpint(fake_reqbufs(d, A, MMAP, 0, NULL), ==, 0);
	g_assert_cmpint(vb_queue_read(d->q, B, 10, true, &data), ==, -EAGAIN);
	g_assert_true(vb_queue_owner(d->q) == B);
	vb_queue_release(d->q, B);
	fake_assert_balanced(d);
	fake_free(d);
}

V4L2CUSE_TEST("/vb-read/poll-start", test_read_poll_start)
{
	struct fake_drv *d = fake_new(4096);
	const void *data = NULL;

	/* POLLPRI only (select's exceptfds): no read emulation (docs/cuse.md). */
	g_assert_cmpuint(vb_queue_poll(d->q, A, POLLPRI), ==, 0);
	g_assert_false(vb_queue_is_reading(d->q));
	g_assert_null(vb_queue_owner(d->q));
	/* POLLIN does start it, for the poller. */
	g_assert_cmpuint(vb_queue_poll(d->q, A, POLLIN | POLLPRI), ==, 0);
	g_assert_true(vb_queue_is_reading(d->q));
	g_assert_true(vb_queue_owner(d->q) == A);
	g_assert_cmpint(vb_queue_read(d->q, B, 10, true, &data), ==, -EBUSY);
	fake_produce(d, VB_BUF_DONE);
	g_assert_cmpuint(vb_queue_poll(d->q, A, POLLIN), ==, POLLIN | POLLRDNORM);
	g_assert_cmpint(vb_queue_read(d->q, A, 4096, true, &data), ==, 4096);
	assert_pattern(data, 4096, 0, 0);
	g_assert_cmpuint(vb_queue_poll(d->q, A, POLLIN), ==, 0);
	/* an error state is POLLERR and EIO at the next frame */
	vb_queue_set_error(d->q);
	g_assert_cmpuint(vb_queue_poll(d->q, A, POLLIN), ==, POLLERR);
	g_assert_cmpint(vb_queue_read(d->q, A, 4096, true, &data), ==, -EIO);
	vb_queue_release(d->q, A);

	/* A failing start: POLLERR, nothing left behind. */
	d->fail_start = -EIO;
	g_assert_cmpuint(vb_queue_poll(d->q, A, POLLIN), ==, POLLERR);
	g_assert_false(vb_queue_is_busy(d->q));
	g_assert_null(vb_queue_owner(d->q));
	fake_assert_balanced(d);
	fake_free(d);
}

V4L2CUSE_TEST("/vb-read/skip-errors", test_read_skip_errors)
{
	struct fake_drv *d = fake_new(4096);
	const void *data = NULL;
	unsigned int queued;

	g_assert_cmpint(vb_queue_read(d->q, A, 10, true, &data), ==, -EAGAIN);
	fake_produce(d, VB_BUF_ERROR);			/* 0: failed */
	{
		struct vb_buffer *b = fake_pop(d);	/* 1: empty */

		vb_buffer_set_bytesused(b, 0);
		vb_buffer_done(b, VB_BUF_DONE);
	}
	queued = d->n_queue;
	g_assert_cmpuint(vb_queue_poll(d->q, A, POLLIN), ==, POLLIN | POLLRDNORM);
	g_assert_cmpint(vb_queue_read(d->q, A, 10, true, &data), ==, -EAGAIN);
	/* both went back to the driver */
	g_assert_cmpuint(d->n_queue, ==, queued + 2);
	g_assert_cmpuint(d->n_active, ==, 3);
	fake_produce(d, VB_BUF_ERROR);			/* 2 */
	fake_produce(d, VB_BUF_DONE);			/* 0 */
	g_assert_cmpint(vb_queue_read(d->q, A, 10, true, &data), ==, 10);
	assert_pattern(data, 10, 0, 0);
	vb_queue_release(d->q, A);
	fake_assert_balanced(d);
	fake_free(d);
}

V4L2CUSE_TEST("/vb-read/pointer-lifetime", test_read_pointer_lifetime)
{
	struct fake_drv *d = fake_new(4096);
	const void *data = NULL, *first;
	unsigned int queued;

	g_assert_cmpint(vb_queue_read(d->q, A, 10, true, &data), ==, -EAGAIN);
	fake_produce(d, VB_BUF_DONE);
	fake_produce(d, VB_BUF_DONE);
	fake_produce(d, VB_BUF_DONE);
	g_assert_cmpint(vb_queue_read(d->q, A, 4096, true, &data), ==, 4096);
	first = data;
	/* The buffer is ours (DEQUEUED) until the next call: nothing queued. */
	queued = d->n_queue;
	g_assert_cmpint(fake_state(d, 0), ==, VB_BUF_DEQUEUED);
	assert_pattern(first, 4096, 0, 0);
	g_assert_cmpint(vb_queue_read(d->q, A, 4096, true, &data), ==, 4096);
	g_assert_true(data != first);
	g_assert_cmpuint(d->n_queue, ==, queued + 1);
	g_assert_cmpint(fake_state(d, 0), ==, VB_BUF_ACTIVE);
	assert_pattern(data, 4096, 1, 0);
	vb_queue_release(d->q, A);
	fake_assert_balanced(d);
	fake_free(d);
}

V4L2CUSE_TEST("/vb-read/not-allowed", test_read_not_allowed)
{
	struct vb_queue_config cfg = fake_config();
	struct fake_drv *d;
	const void *data = NULL;

	cfg.io_modes = VB_IO_MMAP | VB_IO_USERPTR;
	d = fake_new_with(&cfg, 4096);
	g_assert_cmpint(vb_queue_read(d->q, A, 10, true, &data), ==, -EINVAL);
	g_assert_cmpuint(vb_queue_poll(d->q, A, POLLIN), ==, POLLERR);
	g_assert_false(vb_queue_is_busy(d->q));
	fake_free(d);

	/* Read-only queues, and the read buffer count is raised to the minimums. */
	cfg = fake_config();
	cfg.io_modes = VB_IO_READ;
	cfg.read_buffers = 0;
	cfg.min_buffers = 1;
	cfg.min_queued_buffers = 4;
	d = fake_new_with(&cfg, 4096);
	g_assert_cmphex(vb_queue_buf_caps(d->q), ==, V4L2_BUF_CAP_SUPPORTS_ORPHANED_BUFS);
	g_assert_cmpint(fake_reqbufs(d, A, MMAP, 2, NULL), ==, -EINVAL);
	g_assert_cmpint(vb_queue_read(d->q, A, 10, true, &data), ==, -EAGAIN);
	g_assert_cmpuint(d->n_init, ==, 4);
	g_assert_cmpuint(d->n_start, ==, 1);
	vb_queue_release(d->q, A);

	/* queue_setup failing, or leaving too few buffers to start. */
	d->fail_setup = -ENOSPC;
	g_assert_cmpint(vb_queue_read(d->q, A, 10, true, &data), ==, -ENOSPC);
	g_assert_null(vb_queue_owner(d->q));
	d->max_buffers = 2;
	g_assert_cmpint(vb_queue_read(d->q, A, 10, true, &data), ==, -ENOMEM);
	g_assert_null(vb_queue_owner(d->q));
	g_assert_false(vb_queue_is_busy(d->q));
	fake_assert_balanced(d);
	fake_free(d);
}
