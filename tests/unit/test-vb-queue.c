/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * videobuf: allocation (REQBUFS, CREATE_BUFS) against the errno values vb2
 * gives, poll, USERPTR staging, memfd seals and the mmap cookie lookup.
 * (Queueing and streaming with either memory type: test-vb-stream.c.)
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

#define SIZE 10000u		/* not page-aligned on purpose */

V4L2CUSE_TEST("/vb/config", test_config)
{
	struct vb_queue_config cfg = fake_config();
	struct vb_ops no_queue = fake_ops;

	g_assert_null(vb_queue_new(NULL));
	cfg.type = 0;
	g_assert_null(vb_queue_new(&cfg));
	cfg = fake_config();
	cfg.io_modes = 0;
	g_assert_null(vb_queue_new(&cfg));
	cfg.io_modes = 1u << 7;
	g_assert_null(vb_queue_new(&cfg));
	cfg = fake_config();
	no_queue.buf_queue = NULL;
	cfg.ops = &no_queue;
	g_assert_null(vb_queue_new(&cfg));
	cfg.ops = NULL;
	g_assert_null(vb_queue_new(&cfg));
	vb_queue_free(NULL);
}

V4L2CUSE_TEST("/vb/state-names", test_state_names)
{
	GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
	int s;

	for (s = 0; s < VB_BUF_N_STATES; s++) {
		const char *name = vb_buf_state_name(s);

		g_assert_nonnull(name);
		g_assert_cmpstr(name, !=, "invalid");
		g_assert_false(g_hash_table_contains(seen, name));
		g_hash_table_add(seen, (gpointer)name);
	}
	g_assert_cmpstr(vb_buf_state_name(VB_BUF_N_STATES), ==, "invalid");
	g_assert_cmpstr(vb_buf_state_name((enum vb_buf_state)-1), ==, "invalid");
	g_hash_table_unref(seen);
}

V4L2CUSE_TEST("/vb/reqbufs/basic", test_reqbufs_basic)
{
	struct fake_drv *d = fake_new(SIZE);
	struct v4l2_requestbuffers req = { .count = 4, .type = CAP, .memory = MMAP };
	long page = sysconf(_SC_PAGESIZE);
	unsigned int i, j;

	g_assert_null(vb_queue_owner(d->q));
	g_assert_false(vb_queue_is_busy(d->q));
	req.flags = 0xff;
	req.reserved[0] = 0xff;
	g_assert_cmpint(vb_queue_reqbufs(d->q, A, &req), ==, 0);
	g_assert_cmpuint(req.count, ==, 4);
	g_assert_cmphex(req.capabilities, ==, V4L2_BUF_CAP_SUPPORTS_MMAP |
			V4L2_BUF_CAP_SUPPORTS_USERPTR | V4L2_BUF_CAP_SUPPORTS_ORPHANED_BUFS);
	g_assert_cmpuint(req.flags, ==, 0);
	g_assert_cmpuint(req.reserved[0], ==, 0);
	g_assert_true(vb_queue_owner(d->q) == A);
	g_assert_true(vb_queue_is_busy(d->q));
	g_assert_false(vb_queue_is_streaming(d->q));
	g_assert_cmpuint(d->n_setup, ==, 1);
	g_assert_cmpuint(d->last_setup_size_in, ==, 0);
	g_assert_cmpuint(d->last_setup_count_in, ==, 4);
	g_assert_cmpuint(d->n_init, ==, 4);

	for (i = 0; i < 4; i++) {
		struct v4l2_buffer b = fake_querybuf(d, i);

		g_assert_cmpuint(b.index, ==, i);
		g_assert_cmpuint(b.type, ==, CAP);
		g_assert_cmpuint(b.memory, ==, MMAP);
		g_assert_cmpuint(b.length, ==, SIZE);
		g_assert_cmpuint(b.bytesused, ==, 0);
		g_assert_cmpuint(b.sequence, ==, 0);
		g_assert_cmpint(b.timestamp.tv_sec, ==, 0);
		g_assert_cmpint(b.timestamp.tv_usec, ==, 0);
		g_assert_cmpuint(b.field, ==, V4L2_FIELD_NONE);
		g_assert_cmphex(b.flags, ==, V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC |
				V4L2_BUF_FLAG_TSTAMP_SRC_EOF);
		g_assert_cmpuint(b.m.offset % page, ==, 0);
		for (j = 0; j < i; j++) {
			struct v4l2_buffer o = fake_querybuf(d, j);

			/* cookies do not overlap */
			g_assert_true(o.m.offset + SIZE <= b.m.offset ||
				      b.m.offset + SIZE <= o.m.offset);
		}
		g_assert_cmpint(fake_state(d, i), ==, VB_BUF_DEQUEUED);
	}
	/* QUERYBUF(count) and bad types fail */
	{
		struct v4l2_buffer b = { .index = 4, .type = CAP };

		g_assert_cmpint(vb_queue_querybuf(d->q, &b), ==, -EINVAL);
		b.index = 0;
		b.type = V4L2_BUF_TYPE_VIDEO_OUTPUT;
		g_assert_cmpint(vb_queue_querybuf(d->q, &b), ==, -EINVAL);
	}
	g_assert_cmpint(fake_state(d, 4), ==, -EINVAL);
	fake_assert_balanced(d);
	fake_free(d);
}

V4L2CUSE_TEST("/vb/reqbufs/clamp", test_reqbufs_clamp)
{
	struct fake_drv *d = fake_new(SIZE);
	unsigned int count = 0;

	g_assert_cmpint(fake_reqbufs(d, A, MMAP, 1, &count), ==, 0);
	g_assert_cmpuint(count, ==, 2);		/* min_buffers */
	g_assert_cmpint(fake_reqbufs(d, A, MMAP, 1000, &count), ==, 0);
	g_assert_cmpuint(count, ==, VB_MAX_BUFFERS);
	g_assert_cmpuint(d->last_setup_count_in, ==, VB_MAX_BUFFERS);
	g_assert_cmpint(fake_reqbufs(d, A, MMAP, UINT32_MAX, &count), ==, 0);
	g_assert_cmpuint(count, ==, VB_MAX_BUFFERS);
	/* The driver may lower the count. */
	d->max_buffers = 3;
	g_assert_cmpint(fake_reqbufs(d, A, MMAP, 8, &count), ==, 0);
	g_assert_cmpuint(count, ==, 3);
	fake_assert_balanced(d);
	fake_free(d);
}

V4L2CUSE_TEST("/vb/reqbufs/bad-args", test_reqbufs_bad_args)
{
	struct fake_drv *d = fake_new(SIZE);
	struct v4l2_requestbuffers req = { .count = 2, .type = V4L2_BUF_TYPE_VIDEO_OUTPUT,
					   .memory = MMAP };

	g_assert_cmpint(vb_queue_reqbufs(d->q, A, &req), ==, -EINVAL);
	/* capabilities are filled even on failure (vb2_ioctl_reqbufs) */
	g_assert_cmphex(req.capabilities, ==, vb_queue_buf_caps(d->q));
	req.type = 0;
	g_assert_cmpint(vb_queue_reqbufs(d->q, A, &req), ==, -EINVAL);
	req.type = CAP;
	req.memory = V4L2_MEMORY_DMABUF;
	g_assert_cmpint(vb_queue_reqbufs(d->q, A, &req), ==, -EINVAL);
	req.memory = 0;
	g_assert_cmpint(vb_queue_reqbufs(d->q, A, &req), ==, -EINVAL);
	req.memory = V4L2_MEMORY_OVERLAY;
	g_assert_cmpint(vb_queue_reqbufs(d->q, A, &req), ==, -EINVAL);
	req.memory = 1000;
	g_assert_cmpint(vb_queue_reqbufs(d->q, A, &req), ==, -EINVAL);
	req.memory = MMAP;
	g_assert_cmpint(vb_queue_reqbufs(d->q, NULL, &req), ==, -EINVAL);
	g_assert_null(vb_queue_owner(d->q));
	g_assert_cmpuint(d->n_setup, ==, 0);
	fake_free(d);

	/* A memory type the queue does not enable. */
	{
		struct vb_queue_config cfg = fake_config();

		cfg.io_modes = VB_IO_MMAP;
		d = fake_new_with(&cfg, SIZE);
		g_assert_cmphex(vb_queue_buf_caps(d->q), ==, V4L2_BUF_CAP_SUPPORTS_MMAP |
				V4L2_BUF_CAP_SUPPORTS_ORPHANED_BUFS);
		g_assert_cmpint(fake_reqbufs(d, A, UPTR, 2, NULL), ==, -EINVAL);
		fake_free(d);

		cfg = fake_config();
		cfg.io_modes = VB_IO_USERPTR;
		cfg.allow_orphans = false;
		d = fake_new_with(&cfg, SIZE);
		g_assert_cmphex(vb_queue_buf_caps(d->q), ==, V4L2_BUF_CAP_SUPPORTS_USERPTR);
		g_assert_cmpint(fake_reqbufs(d, A, MMAP, 2, NULL), ==, -EINVAL);
		g_assert_cmpint(fake_reqbufs(d, A, UPTR, 2, NULL), ==, 0);
		fake_free(d);
	}
}

V4L2CUSE_TEST("/vb/reqbufs/zero", test_reqbufs_zero)
{
	struct fake_drv *d = fake_new(SIZE);
	unsigned int wakes;

	/* Nothing to free: fine. */
	g_assert_cmpint(fake_reqbufs(d, A, MMAP, 0, NULL), ==, 0);
	g_assert_null(vb_queue_owner(d->q));
	g_assert_cmpint(fake_reqbufs(d, A, MMAP, 4, NULL), ==, 0);
	g_assert_cmpint(fake_qbuf(d, A, MMAP, 0), ==, 0);
	wakes = d->n_wake;
	g_assert_cmpint(fake_reqbufs(d, A, MMAP, 0, NULL), ==, 0);
	g_assert_cmpuint(d->n_cleanup, ==, 4);
	g_assert_cmpuint(d->n_wake, ==, wakes + 1);
	g_assert_null(vb_queue_owner(d->q));
	g_assert_false(vb_queue_is_busy(d->q));
	g_assert_cmpint(fake_state(d, 0), ==, -EINVAL);
	/* Ownership is gone: B may allocate now. */
	g_assert_cmpint(fake_reqbufs(d, B, MMAP, 2, NULL), ==, 0);
	g_assert_true(vb_queue_owner(d->q) == B);
	fake_assert_balanced(d);
	fake_free(d);
}

V4L2CUSE_TEST("/vb/reqbufs/streaming", test_reqbufs_streaming)
{
	struct fake_drv *d = fake_new(SIZE);

	fake_stream(d, A, MMAP, 2, 0);
	g_assert_cmpint(fake_reqbufs(d, A, MMAP, 4, NULL), ==, -EBUSY);
	g_assert_cmpint(fake_reqbufs(d, A, MMAP, 0, NULL), ==, -EBUSY);
	g_assert_cmpint(vb_queue_streamoff(d->q, A, CAP), ==, 0);
	g_assert_cmpint(fake_reqbufs(d, A, MMAP, 0, NULL), ==, 0);
	fake_assert_balanced(d);
	fake_free(d);
}

V4L2CUSE_TEST("/vb/reqbufs/mapped", test_reqbufs_mapped)
{
	struct vb_queue_config cfg = fake_config();
	struct fake_drv *d;
	struct v4l2_buffer b;
	unsigned int index, gen;
	uint8_t *map;
	int fd;

	/* Without orphans: EBUSY while mapped, like vb2 before 5.0. */
	cfg.allow_orphans = false;
	d = fake_new_with(&cfg, SIZE);
	g_assert_cmpint(fake_reqbufs(d, A, MMAP, 2, NULL), ==, 0);
	g_assert_cmpint(vb_queue_mapped(d->q, 1, 1), ==, 1);
	g_assert_cmpint(fake_reqbufs(d, A, MMAP, 0, NULL), ==, -EBUSY);
	g_assert_cmpint(fake_reqbufs(d, A, MMAP, 3, NULL), ==, -EBUSY);
	g_assert_cmpint(fake_reqbufs(d, A, UPTR, 3, NULL), ==, -EBUSY);
	g_assert_cmpint(vb_queue_mapped(d->q, 1, -1), ==, 0);
	g_assert_cmpint(fake_reqbufs(d, A, MMAP, 0, NULL), ==, 0);
	fake_assert_balanced(d);
	fake_free(d);

	/* With orphans: REQBUFS(0) succeeds, the client's mapping lives on. */
	d = fake_new(SIZE);
	g_assert_cmpint(fake_reqbufs(d, A, MMAP, 2, NULL), ==, 0);
	b = fake_querybuf(d, 1);
	g_assert_cmpint(vb_queue_mmap_fd(d->q, b.m.offset, b.length, &fd, &index), ==, 0);
	g_assert_cmpuint(index, ==, 1);
	map = mmap(NULL, b.length, PROT_READ, MAP_SHARED, fd, 0);
	g_assert_true(map != MAP_FAILED);
	close(fd);
	g_assert_cmpint(vb_queue_mapped(d->q, index, 1), ==, 1);
	gen = vb_queue_generation(d->q);
	g_assert_cmpint(vb_queue_streamon(d->q, A, CAP), ==, 0);
	g_assert_cmpint(fake_qbuf(d, A, MMAP, 0), ==, 0);
	g_assert_cmpint(fake_qbuf(d, A, MMAP, 1), ==, 0);
	fake_produce(d, VB_BUF_DONE);
	fake_produce(d, VB_BUF_DONE);
	g_assert_cmpint(vb_queue_streamoff(d->q, A, CAP), ==, 0);
	g_assert_cmpint(fake_reqbufs(d, A, MMAP, 0, NULL), ==, 0);
	g_assert_cmpuint(vb_queue_generation(d->q), !=, gen);
	/* the orphan still holds the last frame */
	g_assert_cmpuint(map[0], ==, (uint8_t)(1 * 31));
	g_assert_cmpuint(map[SIZE - 1], ==, (uint8_t)(1 * 31 + SIZE - 1));
	munmap(map, b.length);
	fake_assert_balanced(d);
	fake_free(d);
}

V4L2CUSE_TEST("/vb/reqbufs/realloc", test_reqbufs_realloc)
{
	struct fake_drv *d = fake_new(SIZE);
	struct v4l2_buffer b;
	unsigned int count = 0;

	g_assert_cmpint(fake_reqbufs(d, A, MMAP, 3, &count), ==, 0);
	g_assert_cmpint(fake_qbuf(d, A, MMAP, 0), ==, 0);
	/* A different memory type reallocates (vb2). */
	g_assert_cmpint(fake_reqbufs(d, A, UPTR, 4, &count), ==, 0);
	g_assert_cmpuint(count, ==, 4);
	g_assert_cmpuint(d->n_cleanup, ==, 3);
	g_assert_cmpuint(d->n_init, ==, 7);
	b = fake_querybuf(d, 3);
	g_assert_cmpuint(b.memory, ==, UPTR);
	g_assert_cmpuint(b.m.userptr, ==, 0);
	g_assert_cmpuint(b.length, ==, SIZE);
	g_assert_cmpint(fake_state(d, 0), ==, VB_BUF_DEQUEUED);
	/* The same memory type with a new count reallocates too. */
	g_assert_cmpint(fake_reqbufs(d, A, UPTR, 2, &count), ==, 0);
	g_assert_cmpuint(count, ==, 2);
	g_assert_cmpuint(d->n_cleanup, ==, 7);
	fake_assert_balanced(d);
	fake_free(d);
}

V4L2CUSE_TEST("/vb/reqbufs/setup-fail", test_reqbufs_setup_fail)
{
	struct fake_drv *d = fake_new(SIZE);

	d->fail_setup = -ENOSPC;
	g_assert_cmpint(fake_reqbufs(d, A, MMAP, 2, NULL), ==, -ENOSPC);
	g_assert_null(vb_queue_owner(d->q));
	g_assert_false(vb_queue_is_busy(d->q));
	g_assert_cmpint(fake_state(d, 0), ==, -EINVAL);

	/* A failure after freeing the old buffers also drops ownership. */
	g_assert_cmpint(fake_reqbufs(d, A, MMAP, 2, NULL), ==, 0);
	d->fail_setup = -EIO;
	g_assert_cmpint(fake_reqbufs(d, A, MMAP, 3, NULL), ==, -EIO);
	g_assert_null(vb_queue_owner(d->q));
	g_assert_cmpint(fake_reqbufs(d, B, MMAP, 2, NULL), ==, 0);

	/* buf_init fails at the third buffer: the driver accepts 2... */
	d->fail_init_at = 3;
	g_assert_cmpint(fake_reqbufs(d, B, MMAP, 4, NULL), ==, 0);
	{
		unsigned int n = 0;

		while (fake_state(d, n) >= 0)
			n++;
		g_assert_cmpuint(n, ==, 2);
	}
	/* ...or refuses fewer than 4 (vb2 asks queue_setup again). */
	d->fail_init_at = 3;
	d->min_accept = 4;
	g_assert_cmpint(fake_reqbufs(d, B, MMAP, 4, NULL), ==, -EINVAL);
	g_assert_cmpint(fake_state(d, 0), ==, -EINVAL);
	d->min_accept = 0;
	/* Fewer than min_buffers allocated: ENOMEM. */
	d->fail_init_at = 2;
	g_assert_cmpint(fake_reqbufs(d, B, MMAP, 4, NULL), ==, -ENOMEM);
	/* No buffer at all: ENOMEM. */
	d->fail_init_at = 1;
	g_assert_cmpint(fake_reqbufs(d, B, MMAP, 4, NULL), ==, -ENOMEM);
	fake_assert_balanced(d);
	fake_free(d);
}

V4L2CUSE_TEST("/vb/reqbufs/size-overflow", test_reqbufs_size_overflow)
{
	struct fake_drv *d = fake_new(0);
	unsigned int count = 0;

	/* Sizes that are no buffer length at all. */
	g_assert_cmpint(fake_reqbufs(d, A, MMAP, 2, NULL), ==, -EINVAL);
	d->size = UINT32_MAX;
	g_assert_cmpint(fake_reqbufs(d, A, MMAP, 2, NULL), ==, -EINVAL);
	d->size = (size_t)UINT32_MAX + 1;
	g_assert_cmpint(fake_reqbufs(d, A, MMAP, 2, NULL), ==, -EINVAL);
	d->size = SIZE_MAX;
	g_assert_cmpint(fake_reqbufs(d, A, MMAP, 2, NULL), ==, -EINVAL);
	d->size = (size_t)UINT32_MAX - 100;	/* wraps when page-aligned */
	g_assert_cmpint(fake_reqbufs(d, A, MMAP, 2, NULL), ==, -EINVAL);
	g_assert_null(vb_queue_owner(d->q));

	/* The 32-bit cookie space holds four 1 GiB buffers (sparse memfds). */
	d->size = (size_t)1 << 30;
	g_assert_cmpint(fake_reqbufs(d, A, MMAP, 8, &count), ==, 0);
	g_assert_cmpuint(count, ==, 4);
	g_assert_cmpuint(fake_querybuf(d, 3).m.offset, ==, 3u << 30);
	/* CREATE_BUFS: no cookie left. */
	{
		struct v4l2_create_buffers cb = { .count = 1, .memory = MMAP };

		cb.format.type = CAP;
		cb.format.fmt.pix.sizeimage = 1u << 30;
		g_assert_cmpint(vb_queue_create_bufs(d->q, A, &cb), ==, -ENOMEM);
	}
	g_assert_cmpint(fake_reqbufs(d, A, MMAP, 0, NULL), ==, 0);

	/* Just over 2 GiB: only one fits, fewer than min_buffers. */
	d->size = ((size_t)1 << 31) + 1;
	g_assert_cmpint(fake_reqbufs(d, A, MMAP, 2, NULL), ==, -ENOMEM);
	/* USERPTR has no cookies: two of those are fine. */
	g_assert_cmpint(fake_reqbufs(d, A, UPTR, 2, &count), ==, 0);
	g_assert_cmpuint(count, ==, 2);
	fake_assert_balanced(d);
	fake_free(d);
}

V4L2CUSE_TEST("/vb/create-bufs", test_create_bufs)
{
	struct fake_drv *d = fake_new(SIZE);
	struct v4l2_create_buffers cb = { .count = 0, .memory = MMAP };
	long page = sysconf(_SC_PAGESIZE);
	struct v4l2_buffer b0, b2;

	cb.format.type = CAP;
	cb.format.fmt.pix.sizeimage = SIZE;
	/* count 0 validates only */
	g_assert_cmpint(vb_queue_create_bufs(d->q, A, &cb), ==, 0);
	g_assert_cmpuint(cb.index, ==, 0);
	g_assert_cmphex(cb.capabilities, ==, vb_queue_buf_caps(d->q));
	g_assert_null(vb_queue_owner(d->q));
	g_assert_cmpuint(d->n_setup, ==, 0);
	cb.memory = V4L2_MEMORY_DMABUF;
	g_assert_cmpint(vb_queue_create_bufs(d->q, A, &cb), ==, -EINVAL);
	cb.memory = MMAP;
	cb.format.type = V4L2_BUF_TYPE_VIDEO_OUTPUT;
	g_assert_cmpint(vb_queue_create_bufs(d->q, A, &cb), ==, -EINVAL);
	cb.format.type = CAP;

	cb.count = 2;
	g_assert_cmpint(vb_queue_create_bufs(d->q, A, &cb), ==, 0);
	g_assert_cmpuint(cb.index, ==, 0);
	g_assert_cmpuint(cb.count, ==, 2);
	g_assert_cmpuint(d->last_setup_size_in, ==, SIZE);
	g_assert_true(vb_queue_owner(d->q) == A);

	/* A bigger size for the next ones; the length follows the request. */
	cb.count = 3;
	cb.format.fmt.pix.sizeimage = 3 * SIZE;
	g_assert_cmpint(vb_queue_create_bufs(d->q, A, &cb), ==, 0);
	g_assert_cmpuint(cb.index, ==, 2);
	g_assert_cmpuint(cb.count, ==, 3);
	b0 = fake_querybuf(d, 0);
	b2 = fake_querybuf(d, 2);
	g_assert_cmpuint(b0.length, ==, SIZE);
	g_assert_cmpuint(b2.length, ==, 3 * SIZE);
	g_assert_cmpuint(b2.m.offset % page, ==, 0);
	g_assert_cmpuint(fake_querybuf(d, 4).m.offset, >=, b2.m.offset + 3 * SIZE);

	/* Too small for the format, no size, wrong memory, other owner. */
	cb.count = 1;
	cb.format.fmt.pix.sizeimage = SIZE - 1;
	g_assert_cmpint(vb_queue_create_bufs(d->q, A, &cb), ==, -EINVAL);
	cb.format.fmt.pix.sizeimage = 0;
	g_assert_cmpint(vb_queue_create_bufs(d->q, A, &cb), ==, -EINVAL);
	cb.format.fmt.pix.sizeimage = SIZE;
	cb.memory = UPTR;
	g_assert_cmpint(vb_queue_create_bufs(d->q, A, &cb), ==, -EINVAL);
	cb.memory = MMAP;
	g_assert_cmpint(vb_queue_create_bufs(d->q, B, &cb), ==, -EBUSY);
	cb.count = 0;
	g_assert_cmpint(vb_queue_create_bufs(d->q, B, &cb), ==, 0);
	g_assert_cmpuint(cb.index, ==, 5);

	/* Up to 32 in all, then ENOBUFS. */
	cb.count = 100;
	g_assert_cmpint(vb_queue_create_bufs(d->q, A, &cb), ==, 0);
	g_assert_cmpuint(cb.index, ==, 5);
	g_assert_cmpuint(cb.count, ==, VB_MAX_BUFFERS - 5);
	cb.count = 1;
	g_assert_cmpint(vb_queue_create_bufs(d->q, A, &cb), ==, -ENOBUFS);
	g_assert_cmpint(fake_state(d, VB_MAX_BUFFERS - 1), ==, VB_BUF_DEQUEUED);

	/* Allowed while streaming; new buffers are DEQUEUED. */
	fake_stream(d, A, MMAP, 2, 0);
	g_assert_cmpint(vb_queue_create_bufs(d->q, A, &cb), ==, 0);
	g_assert_cmpuint(cb.index, ==, 2);
	g_assert_cmpint(fake_qbuf(d, A, MMAP, 2), ==, 0);
	g_assert_cmpint(fake_state(d, 2), ==, VB_BUF_ACTIVE);
	g_assert_cmpint(vb_queue_streamoff(d->q, A, CAP), ==, 0);

	/* USERPTR buffers through CREATE_BUFS on an empty queue. */
	g_assert_cmpint(fake_reqbufs(d, A, MMAP, 0, NULL), ==, 0);
	cb.memory = UPTR;
	cb.count = 2;
	g_assert_cmpint(vb_queue_create_bufs(d->q, B, &cb), ==, 0);
	g_assert_cmpuint(fake_querybuf(d, 1).memory, ==, UPTR);
	g_assert_true(vb_queue_owner(d->q) == B);
	fake_assert_balanced(d);
	fake_free(d);
}

V4L2CUSE_TEST("/vb/poll", test_poll)
{
	struct vb_queue_config cfg = fake_config();
	struct fake_drv *d;

	cfg.io_modes = VB_IO_MMAP;	/* no read emulation from poll */
	d = fake_new_with(&cfg, SIZE);
	g_assert_cmpuint(vb_queue_poll(d->q, A, POLLPRI), ==, 0);
	g_assert_cmpuint(vb_queue_poll(d->q, A, POLLOUT | POLLWRNORM), ==, 0);
	g_assert_cmpuint(vb_queue_poll(d->q, A, POLLIN), ==, POLLERR);
	g_assert_cmpuint(vb_queue_poll(d->q, A, POLLRDNORM), ==, POLLERR);
	g_assert_cmpint(fake_reqbufs(d, A, MMAP, 2, NULL), ==, 0);
	g_assert_cmpuint(vb_queue_poll(d->q, A, POLLIN), ==, POLLERR);
	g_assert_cmpint(vb_queue_streamon(d->q, A, CAP), ==, 0);
	g_assert_cmpuint(vb_queue_poll(d->q, A, POLLIN), ==, POLLERR);	/* no QBUF yet */
	g_assert_cmpint(fake_qbuf(d, A, MMAP, 0), ==, 0);
	g_assert_cmpuint(vb_queue_poll(d->q, A, POLLIN), ==, 0);
	fake_produce(d, VB_BUF_ERROR);
	g_assert_cmpuint(vb_queue_poll(d->q, A, POLLIN | POLLPRI), ==, POLLIN | POLLRDNORM);
	/* Any handle sees the queue's mask (vb2 has no owner check here). */
	g_assert_cmpuint(vb_queue_poll(d->q, B, POLLIN), ==, POLLIN | POLLRDNORM);
	g_assert_cmpuint(vb_queue_poll(d->q, A, POLLPRI), ==, 0);
	g_assert_cmpint(fake_dqbuf(d, A, NULL), ==, 0);
	g_assert_cmpuint(vb_queue_poll(d->q, A, POLLIN), ==, 0);
	/* after STREAMOFF: POLLERR, and again after a new STREAMON */
	g_assert_cmpint(vb_queue_streamoff(d->q, A, CAP), ==, 0);
	g_assert_cmpuint(vb_queue_poll(d->q, A, POLLIN), ==, POLLERR);
	g_assert_cmpint(vb_queue_streamon(d->q, A, CAP), ==, 0);
	g_assert_cmpuint(vb_queue_poll(d->q, A, POLLIN), ==, POLLERR);
	g_assert_cmpint(vb_queue_streamoff(d->q, A, CAP), ==, 0);
	fake_assert_balanced(d);
	fake_free(d);
}

V4L2CUSE_TEST("/vb/userptr", test_userptr)
{
	struct fake_drv *d = fake_new(SIZE);
	uint8_t *client = g_malloc0(2 * SIZE), *staging;
	struct v4l2_buffer b = { .index = 0, .type = CAP, .memory = UPTR };
	unsigned int index;
	int fd;

	g_assert_cmpint(fake_reqbufs(d, A, UPTR, 2, NULL), ==, 0);
	b = fake_querybuf(d, 0);
	g_assert_cmpuint(b.memory, ==, UPTR);
	g_assert_cmpuint(b.m.userptr, ==, 0);
	g_assert_cmpuint(b.length, ==, SIZE);
	/* No cookie lookups for USERPTR. */
	g_assert_cmpint(vb_queue_mmap_fd(d->q, 0, SIZE, &fd, &index), ==, -EINVAL);

	/* Validation: address 0, too short. */
	b = (struct v4l2_buffer){ .index = 0, .type = CAP, .memory = UPTR, .length = SIZE };
	g_assert_cmpint(vb_queue_qbuf(d->q, A, &b), ==, -EINVAL);
	b.m.userptr = (unsigned long)client;
	b.length = SIZE - 1;
	g_assert_cmpint(vb_queue_qbuf(d->q, A, &b), ==, -EINVAL);
	g_assert_cmpint(vb_queue_prepare_buf(d->q, A, &b), ==, -EINVAL);
	g_assert_cmpint(fake_state(d, 0), ==, VB_BUF_DEQUEUED);
	g_assert_cmpuint(d->n_prepare, ==, 0);
	b.memory = MMAP;
	b.length = SIZE;
	g_assert_cmpint(vb_queue_qbuf(d->q, A, &b), ==, -EINVAL);
	b.memory = UPTR;
	b.length = 2 * SIZE;
	g_assert_cmpint(vb_queue_qbuf(d->q, A, &b), ==, 0);
	g_assert_cmpuint(b.m.userptr, ==, (unsigned long)client);
	g_assert_cmpuint(b.length, ==, 2 * SIZE);
	b = fake_querybuf(d, 0);
	g_assert_cmpuint(b.m.userptr, ==, (unsigned long)client);
	g_assert_cmpuint(b.length, ==, 2 * SIZE);
	g_assert_cmpint(vb_queue_qbuf(d->q, A, &b), ==, -EINVAL);	/* double */

	/* A failing buf_prepare keeps the old address. */
	d->fail_prepare = -EFAULT;
	b = (struct v4l2_buffer){ .index = 1, .type = CAP, .memory = UPTR,
				  .m.userptr = (unsigned long)client + 1, .length = SIZE };
	g_assert_cmpint(vb_queue_qbuf(d->q, A, &b), ==, -EFAULT);
	g_assert_cmpuint(fake_querybuf(d, 1).m.userptr, ==, 0);

	/*
	 * Completion fills the staging memfd, the only copy: the client's
	 * memory stays untouched (the preload shim copies at DQBUF).
	 */
	g_assert_cmpint(vb_queue_streamon(d->q, A, CAP), ==, 0);
	fake_produce(d, VB_BUF_DONE);
	g_assert_cmpint(vb_queue_buffer_fd(d->q, 0, &fd), ==, 0);
	staging = mmap(NULL, SIZE, PROT_READ, MAP_SHARED, fd, 0);
	g_assert_true(staging != MAP_FAILED);
	g_assert_cmpuint(staging[1], ==, 1);
	g_assert_cmpuint(staging[SIZE - 1], ==, (uint8_t)(SIZE - 1));
	munmap(staging, SIZE);
	close(fd);
	g_assert_cmpuint(client[1], ==, 0);
	g_assert_cmpuint(client[SIZE - 1], ==, 0);
	g_assert_cmpint(fake_dqbuf(d, A, &b), ==, 0);
	g_assert_cmpuint(b.memory, ==, UPTR);
	g_assert_cmpuint(b.m.userptr, ==, (unsigned long)client);
	g_assert_cmpuint(b.bytesused, ==, SIZE);
	g_assert_false(b.flags & V4L2_BUF_FLAG_ERROR);
	g_assert_cmpint(vb_queue_streamoff(d->q, A, CAP), ==, 0);
	fake_assert_balanced(d);
	fake_free(d);
	g_free(client);

	/* The client's address is only recorded: 0x1000 is nobody's memory. */
	{
		struct vb_queue_config cfg = fake_config();
		uint8_t buf[64] = { 0 };

		cfg.ops = &fake_min_ops;
		d = fake_new_with(&cfg, SIZE);
		g_assert_cmpint(fake_reqbufs(d, A, UPTR, 2, NULL), ==, 0);
		b = (struct v4l2_buffer){ .index = 1, .type = CAP, .memory = UPTR,
					  .m.userptr = 0x1000, .length = SIZE };
		g_assert_cmpint(vb_queue_qbuf(d->q, A, &b), ==, 0);
		g_assert_cmpint(vb_queue_streamon(d->q, A, CAP), ==, 0);
		fake_produce(d, VB_BUF_DONE);
		g_assert_cmpint(vb_queue_buffer_fd(d->q, 1, &fd), ==, 0);
		g_assert_cmpint(pread(fd, buf, sizeof(buf), 0), ==, sizeof(buf));
		g_assert_cmpuint(buf[1], ==, 32);
		close(fd);
		g_assert_cmpint(vb_queue_buffer_fd(d->q, 2, &fd), ==, -EINVAL);
		g_assert_cmpint(fake_dqbuf(d, A, NULL), ==, 0);
		g_assert_cmpint(vb_queue_streamoff(d->q, A, CAP), ==, 0);
		vb_queue_free(d->q);
		g_free(d);
	}
}

V4L2CUSE_TEST("/vb/mmap/seals", test_mmap_seals)
{
	struct fake_drv *d = fake_new(SIZE);
	struct v4l2_buffer b;
	unsigned int index;
	uint8_t *map;
	int fd, seals;

	g_assert_cmpint(fake_reqbufs(d, A, MMAP, 2, NULL), ==, 0);
	b = fake_querybuf(d, 1);
	g_assert_cmpint(vb_queue_mmap_fd(d->q, b.m.offset, b.length, &fd, &index), ==, 0);
	g_assert_cmpint(fcntl(fd, F_GETFD), ==, FD_CLOEXEC);
	seals = fcntl(fd, F_GET_SEALS);
	g_assert_cmpint(seals, ==, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
	/* A client cannot shrink (SIGBUS the producer) or grow it. */
	g_assert_cmpint(ftruncate(fd, 0), ==, -1);
	g_assert_cmpint(errno, ==, EPERM);
	g_assert_cmpint(ftruncate(fd, 1 << 20), ==, -1);
	g_assert_cmpint(errno, ==, EPERM);
	g_assert_cmpint(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE), ==, -1);
	g_assert_cmpint(errno, ==, EPERM);
	/* The daemon's mapping and the client's are the same memory. */
	map = mmap(NULL, b.length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	g_assert_true(map != MAP_FAILED);
	g_assert_cmpint(fake_qbuf(d, A, MMAP, 1), ==, 0);
	g_assert_cmpint(vb_queue_streamon(d->q, A, CAP), ==, 0);
	fake_produce(d, VB_BUF_DONE);
	g_assert_cmpuint(map[5], ==, (uint8_t)(31 + 5));
	map[5] = 0;
	munmap(map, b.length);
	close(fd);
	/* the page-aligned tail is mappable too: the memfd is page-aligned */
	g_assert_cmpint(vb_queue_buffer_fd(d->q, 0, &fd), ==, 0);
	{
		struct stat st;

		g_assert_cmpint(fstat(fd, &st), ==, 0);
		g_assert_cmpint(st.st_size % sysconf(_SC_PAGESIZE), ==, 0);
		g_assert_cmpint(st.st_size, >=, SIZE);
	}
	close(fd);
	g_assert_cmpint(vb_queue_streamoff(d->q, A, CAP), ==, 0);
	fake_assert_balanced(d);
	fake_free(d);
}

V4L2CUSE_TEST("/vb/mmap/lookup", test_mmap_lookup)
{
	struct fake_drv *d = fake_new(SIZE);
	long page = sysconf(_SC_PAGESIZE);
	size_t aligned = (SIZE + page - 1) / page * page;
	struct v4l2_buffer b0, b2, b;
	unsigned int index = 99, gen;
	int fd = -1;

	/* No buffers: nothing to find. */
	g_assert_cmpint(vb_queue_mmap_fd(d->q, 0, SIZE, &fd, &index), ==, -EINVAL);
	g_assert_cmpint(fake_reqbufs(d, A, MMAP, 3, NULL), ==, 0);
	b0 = fake_querybuf(d, 0);
	b2 = fake_querybuf(d, 2);
	g_assert_cmpint(vb_queue_mmap_fd(d->q, b2.m.offset, SIZE, &fd, &index), ==, 0);
	g_assert_cmpuint(index, ==, 2);
	close(fd);
	g_assert_cmpint(vb_queue_mmap_fd(d->q, b2.m.offset, aligned, &fd, &index), ==, 0);
	close(fd);
	index = 99;
	fd = -1;
	g_assert_cmpint(vb_queue_mmap_fd(d->q, b2.m.offset, SIZE - 1, &fd, &index), ==, -EINVAL);
	g_assert_cmpint(vb_queue_mmap_fd(d->q, b2.m.offset, SIZE + 1, &fd, &index), ==, -EINVAL);
	g_assert_cmpint(vb_queue_mmap_fd(d->q, b2.m.offset, aligned + 1, &fd, &index), ==,
			-EINVAL);
	g_assert_cmpint(vb_queue_mmap_fd(d->q, b2.m.offset, 0, &fd, &index), ==, -EINVAL);
	g_assert_cmpint(vb_queue_mmap_fd(d->q, b2.m.offset + page, SIZE, &fd, &index), ==,
			-EINVAL);
	g_assert_cmpint(vb_queue_mmap_fd(d->q, b0.m.offset + 1, SIZE, &fd, &index), ==,
			-EINVAL);
	g_assert_cmpint(vb_queue_mmap_fd(d->q, 0xdead0000, SIZE, &fd, &index), ==, -EINVAL);
	/* ret_* untouched on failure */
	g_assert_cmpuint(index, ==, 99);
	g_assert_cmpint(fd, ==, -1);

	/* Mapping counts become V4L2_BUF_FLAG_MAPPED. */
	g_assert_cmpint(vb_queue_mapped(d->q, 0, 1), ==, 1);
	g_assert_cmpint(vb_queue_mapped(d->q, 0, 1), ==, 2);
	g_assert_true(fake_querybuf(d, 0).flags & V4L2_BUF_FLAG_MAPPED);
	g_assert_false(fake_querybuf(d, 1).flags & V4L2_BUF_FLAG_MAPPED);
	g_assert_cmpint(fake_qbuf(d, A, MMAP, 0), ==, 0);
	g_assert_cmpint(vb_queue_streamon(d->q, A, CAP), ==, 0);
	fake_produce(d, VB_BUF_DONE);
	g_assert_cmpint(fake_dqbuf(d, A, &b), ==, 0);
	g_assert_true(b.flags & V4L2_BUF_FLAG_MAPPED);
	g_assert_cmpint(vb_queue_mapped(d->q, 0, -2), ==, 0);
	g_assert_false(fake_querybuf(d, 0).flags & V4L2_BUF_FLAG_MAPPED);
	g_assert_cmpint(vb_queue_mapped(d->q, 0, -1), ==, -EINVAL);
	g_assert_cmpint(vb_queue_mapped(d->q, 3, 1), ==, -EINVAL);
	g_assert_cmpint(vb_queue_streamoff(d->q, A, CAP), ==, 0);

	/* Cookies die with their buffers; the generation tells orphans apart. */
	gen = vb_queue_generation(d->q);
	g_assert_cmpint(fake_reqbufs(d, A, MMAP, 0, NULL), ==, 0);
	g_assert_cmpuint(vb_queue_generation(d->q), ==, gen + 1);
	g_assert_cmpint(vb_queue_mmap_fd(d->q, b2.m.offset, SIZE, &fd, &index), ==, -EINVAL);
	fake_assert_balanced(d);
	fake_free(d);
}
