/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The fake videobuf driver of the test-vb-* programs (vb-fake-driver.h
 * says what it does), built once as a static library.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <glib.h>

#include "vb-fake-driver.h"

void
fake_fill(struct vb_buffer *b, uint32_t bytes)
{
	uint8_t *mem = vb_buffer_mem(b);
	uint32_t i;

	for (i = 0; i < bytes; i++)
		mem[i] = (uint8_t)(vb_buffer_index(b) * 31 + i);
	vb_buffer_set_bytesused(b, bytes);
}

int
fake_queue_setup(struct vb_queue *q, unsigned int *num, size_t *size)
{
	struct fake_drv *d = vb_queue_priv(q);

	d->last_setup_size_in = *size;
	d->last_setup_count_in = *num;
	if (d->fail_setup) {
		int r = d->fail_setup;

		d->fail_setup = 0;
		return r;
	}
	if (*size) {
		if (*size < d->size)
			return -EINVAL;
	} else {
		*size = d->size;
	}
	if (d->max_buffers && *num > d->max_buffers)
		*num = d->max_buffers;
	if (d->min_accept && *num < d->min_accept)
		return -EINVAL;
	d->n_setup++;
	return 0;
}

int
fake_buf_init(struct vb_buffer *b)
{
	struct fake_drv *d = vb_queue_priv(vb_buffer_queue(b));

	if (d->fail_init_at && vb_buffer_index(b) + 1 == (unsigned int)d->fail_init_at) {
		d->fail_init_at = 0;
		return -ENOMEM;
	}
	d->n_init++;
	return 0;
}

void
fake_buf_cleanup(struct vb_buffer *b)
{
	struct fake_drv *d = vb_queue_priv(vb_buffer_queue(b));

	d->n_cleanup++;
}

int
fake_buf_prepare(struct vb_buffer *b)
{
	struct fake_drv *d = vb_queue_priv(vb_buffer_queue(b));

	d->n_prepare++;
	if (d->fail_prepare) {
		int r = d->fail_prepare;

		d->fail_prepare = 0;
		return r;
	}
	/* PREPARING while we run */
	g_assert_cmpint(vb_queue_buffer_state(d->q, vb_buffer_index(b)), ==, VB_BUF_PREPARING);
	return 0;
}

void
fake_complete_buffer(struct fake_drv *d, struct vb_buffer *b, enum vb_buf_state state)
{
	if (state == VB_BUF_DONE)
		fake_fill(b, (uint32_t)MIN(d->size, vb_buffer_length(b)));
	vb_buffer_done(b, state);
}

void
fake_buf_queue(struct vb_buffer *b)
{
	struct fake_drv *d = vb_queue_priv(vb_buffer_queue(b));

	d->n_queue++;
	g_assert_cmpint(vb_queue_buffer_state(d->q, vb_buffer_index(b)), ==, VB_BUF_ACTIVE);
	if (d->complete_in_queue) {
		fake_complete_buffer(d, b, VB_BUF_DONE);
		return;
	}
	g_assert_cmpuint(d->n_active, <, G_N_ELEMENTS(d->active));
	d->active[d->n_active++] = b;
}

struct vb_buffer *
fake_pop(struct fake_drv *d)
{
	struct vb_buffer *b;

	if (d->n_active == 0)
		return NULL;
	b = d->active[0];
	memmove(&d->active[0], &d->active[1], --d->n_active * sizeof(d->active[0]));
	return b;
}

int
fake_produce(struct fake_drv *d, enum vb_buf_state state)
{
	struct vb_buffer *b = fake_pop(d);

	if (!b)
		return -1;
	fake_complete_buffer(d, b, state);
	return (int)vb_buffer_index(b);
}

void
fake_return_all(struct fake_drv *d, enum vb_buf_state state)
{
	struct vb_buffer *b;

	while ((b = fake_pop(d)))
		vb_buffer_done(b, state);
}

int
fake_start_streaming(struct vb_queue *q, unsigned int count)
{
	struct fake_drv *d = vb_queue_priv(q);

	d->n_start++;
	d->last_start_count = count;
	if (d->fail_start) {
		int r = d->fail_start;

		d->fail_start = 0;
		if (!d->start_keeps_buffers)
			fake_return_all(d, VB_BUF_QUEUED);
		return r;
	}
	return 0;
}

void
fake_stop_streaming(struct vb_queue *q)
{
	struct fake_drv *d = vb_queue_priv(q);

	d->n_stop++;
	if (!d->stop_keeps_buffers)
		fake_return_all(d, VB_BUF_ERROR);
	else
		d->n_active = 0;
}

void
fake_wake(struct vb_queue *q)
{
	struct fake_drv *d = vb_queue_priv(q);

	d->n_wake++;
	if (d->on_wake)
		d->on_wake(d);
}

const struct vb_ops fake_ops = {
	.queue_setup = fake_queue_setup,
	.buf_init = fake_buf_init,
	.buf_prepare = fake_buf_prepare,
	.buf_queue = fake_buf_queue,
	.start_streaming = fake_start_streaming,
	.stop_streaming = fake_stop_streaming,
	.buf_cleanup = fake_buf_cleanup,
	.wake = fake_wake,
};

const struct vb_ops fake_min_ops = {
	.queue_setup = fake_queue_setup,
	.buf_queue = fake_buf_queue,
};

struct vb_queue_config
fake_config(void)
{
	return (struct vb_queue_config){
		.type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
		.io_modes = VB_IO_MMAP | VB_IO_USERPTR | VB_IO_READ,
		.min_buffers = 2,
		.min_queued_buffers = 0,
		.read_buffers = 3,
		.allow_orphans = true,
		.ops = &fake_ops,
		.name = "test",
	};
}

struct fake_drv *
fake_new_with(const struct vb_queue_config *cfg_in, size_t size)
{
	struct fake_drv *d = g_new0(struct fake_drv, 1);
	struct vb_queue_config cfg = *cfg_in;

	d->size = size;
	cfg.priv = d;
	d->q = vb_queue_new(&cfg);
	g_assert_nonnull(d->q);
	return d;
}

struct fake_drv *
fake_new(size_t size)
{
	struct vb_queue_config cfg = fake_config();

	return fake_new_with(&cfg, size);
}

void
fake_free(struct fake_drv *d)
{
	vb_queue_free(d->q);
	g_assert_cmpuint(d->n_init, ==, d->n_cleanup);
	g_assert_cmpuint(d->n_stop, <=, d->n_start);
	g_free(d);
}

int
fake_reqbufs(struct fake_drv *d, const void *owner, uint32_t memory, unsigned int count,
	     unsigned int *ret_count)
{
	struct v4l2_requestbuffers req = {
		.count = count,
		.type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
		.memory = memory,
	};
	int r = vb_queue_reqbufs(d->q, owner, &req);

	if (r == 0 && ret_count)
		*ret_count = req.count;
	return r;
}

int fake_owners[2];
uint8_t fake_client_mem[VB_MAX_BUFFERS][FAKE_CLIENT_LEN];

struct v4l2_buffer
fake_vbuf(uint32_t memory, unsigned int index)
{
	struct v4l2_buffer b = {
		.index = index,
		.type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
		.memory = memory,
	};

	if (memory == V4L2_MEMORY_USERPTR && index < VB_MAX_BUFFERS) {
		b.m.userptr = (unsigned long)fake_client_mem[index];
		b.length = FAKE_CLIENT_LEN;
	}
	return b;
}

int
fake_qbuf(struct fake_drv *d, const void *owner, uint32_t memory, unsigned int index)
{
	struct v4l2_buffer b = fake_vbuf(memory, index);

	return vb_queue_qbuf(d->q, owner, &b);
}

int
fake_prepare(struct fake_drv *d, const void *owner, uint32_t memory, unsigned int index)
{
	struct v4l2_buffer b = fake_vbuf(memory, index);

	return vb_queue_prepare_buf(d->q, owner, &b);
}

struct v4l2_buffer
fake_querybuf(struct fake_drv *d, unsigned int index)
{
	struct v4l2_buffer b = { .index = index, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };

	g_assert_cmpint(vb_queue_querybuf(d->q, &b), ==, 0);
	return b;
}

uint32_t
fake_other_memory(uint32_t memory)
{
	return memory == V4L2_MEMORY_MMAP ? V4L2_MEMORY_USERPTR : V4L2_MEMORY_MMAP;
}

void
fake_stream(struct fake_drv *d, const void *owner, uint32_t memory, unsigned int count,
	    unsigned int queued)
{
	g_assert_cmpint(fake_reqbufs(d, owner, memory, count, NULL), ==, 0);
	for (unsigned int i = 0; i < queued; i++)
		g_assert_cmpint(fake_qbuf(d, owner, memory, i), ==, 0);
	g_assert_cmpint(vb_queue_streamon(d->q, owner, V4L2_BUF_TYPE_VIDEO_CAPTURE), ==, 0);
}

int
fake_dqbuf(struct fake_drv *d, const void *owner, struct v4l2_buffer *ret)
{
	struct v4l2_buffer b = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	int r = vb_queue_dqbuf(d->q, owner, &b);

	if (ret)
		*ret = b;
	return r;
}

int
fake_state(struct fake_drv *d, unsigned int index)
{
	return vb_queue_buffer_state(d->q, index);
}

void
fake_assert_balanced(struct fake_drv *d)
{
	struct vb_debug_counters c;

	g_assert_cmpint(vb_queue_debug_imbalance(d->q), ==, 0);
	if (vb_queue_debug_counters(d->q, &c) == 0) {
		g_assert_cmpuint(c.queue_setup, ==, d->n_setup);
		g_assert_cmpuint(c.buf_init, ==, d->n_init);
		g_assert_cmpuint(c.buf_cleanup, ==, d->n_cleanup);
		g_assert_cmpuint(c.buf_queue, ==, d->n_queue);
		g_assert_cmpuint(c.stop_streaming, ==, d->n_stop);
		g_assert_cmpuint(c.wake, ==, d->n_wake);
	}
}
