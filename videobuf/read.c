/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * read() emulation and the poll mask. The emulation follows vb2's file I/O
 * emulator (__vb2_init_fileio, __vb2_perform_fileio in
 * videobuf2-core.c): internal MMAP buffers, all queued and streamed on
 * first use, a cursor over the frame being read. Two differences, both for
 * CUSE (docs/cuse.md, "read() and poll()"): a finished frame goes back to the
 * driver at the *next* call, because the daemon replies from the pointer
 * we return, and a read() syscall arrives as several calls, of which only
 * the first (new_call) may take a new frame. The poll mask follows
 * vb2_core_poll.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>

#include <glib.h>

#include "util/macros.h"
#include "queue-private.h"

/*
 * __vb2_init_fileio() for reading: cfg.read_buffers MMAP buffers through
 * queue_setup, all queued, streaming started, @owner the reader. Called
 * locked outside a transition; returns locked.
 */
static int
vb_read_start_locked(struct vb_queue *q, const void *owner)
{
	unsigned int allocated, i;
	int r;

	if (!(q->cfg.io_modes & VB_IO_READ))
		return -EINVAL;
	if (q->mode != VB_MODE_IDLE || q->n_buffers || q->streaming ||
	    vb_queue_not_owner(q, owner))
		return -EBUSY;
	r = vb_transition_begin_locked(q);
	if (r < 0)
		return r;

	q->memory = V4L2_MEMORY_MMAP;
	r = vb_queue_setup_alloc_locked(q, V4L2_MEMORY_MMAP, q->cfg.read_buffers, 0, false,
					&allocated);
	if (r < 0) {
		q->memory = 0;
		goto out_end;
	}
	q->owner = owner;
	q->mode = VB_MODE_READ;
	for (i = 0; i < q->n_buffers; i++)
		vb_buf_set_state(q, q->bufs[i], VB_BUF_QUEUED);
	q->waiting_for_buffers = false;
	if (q->queued.length < q->cfg.min_queued_buffers) {
		g_debug("%s: read: queue_setup left too few buffers to start", q->name);
		r = -ENOMEM;
	} else {
		q->streaming = true;
		r = vb_queue_start_locked(q);
	}
	if (r < 0)
		vb_queue_teardown_locked(q);
	else
		g_debug("%s: read emulation started with %u buffers", q->name, allocated);
out_end:
	vb_transition_end_locked(q);
	return r;
}

/* A frame the reader is done with goes back to the driver (vb2_core_qbuf). */
static void
vb_read_requeue_locked(struct vb_queue *q, struct vb_handoff *h, struct vb_buffer *b)
{
	b->bytesused = 0;
	if (vb_buf_set_state(q, b, VB_BUF_QUEUED) < 0)
		return;
	if (q->start_called)
		vb_handoff_add_locked(q, h, b);
}

/* vb2_core_dqbuf() for the emulator; ERROR and empty frames are skipped. */
static int
vb_read_next_frame_locked(struct vb_queue *q, struct vb_handoff *h)
{
	for (;;) {
		struct vb_buffer *b;
		bool usable;

		if (!q->streaming)
			return -EINVAL;
		if (q->error)
			return -EIO;
		if (!q->done.head)
			return -EAGAIN;
		b = q->done.head->data;
		usable = b->state == VB_BUF_DONE && b->bytesused > 0;
		vb_buf_set_state(q, b, VB_BUF_DEQUEUED);
		if (!usable) {
			g_debug("%s: read: skipping %s buffer %u (%u bytes)", q->name,
				b->state == VB_BUF_DONE ? "empty" : "failed", b->index,
				b->bytesused);
			vb_read_requeue_locked(q, h, b);
			continue;
		}
		q->rd_cur = b;
		q->rd_pos = 0;
		q->rd_size = b->bytesused;
		return 0;
	}
}

ssize_t
vb_queue_read(struct vb_queue *q, const void *owner, size_t count, bool new_call,
	      const void **ret_data)
{
	struct vb_handoff h = { .n = 0 };
	const void *data = NULL;
	ssize_t r = 0;
	size_t n;

	if (!owner)
		return -EINVAL;
	vb_queue_lock(q);
	if (!(q->cfg.io_modes & VB_IO_READ)) {
		r = -EINVAL;
		goto out_unlock;
	}
	if (vb_queue_not_owner(q, owner) || q->mode == VB_MODE_STREAMING) {
		r = -EBUSY;
		goto out_unlock;
	}
	if (q->mode == VB_MODE_IDLE) {
		/* A continuation chunk with nothing started has nothing to give. */
		if (!new_call)
			goto out_unlock;
		r = vb_read_start_locked(q, owner);
		if (r < 0)
			goto out_unlock;
	}
	if (q->busy) {
		/* Another thread is starting or stopping; its end wakes us. */
		r = -EAGAIN;
		goto out_unlock;
	}

	if (q->rd_cur && q->rd_pos >= q->rd_size) {
		vb_read_requeue_locked(q, &h, q->rd_cur);
		q->rd_cur = NULL;
	}
	if (!q->rd_cur) {
		/* A read() never spans two frames. */
		if (!new_call)
			goto out_unlock;
		r = vb_read_next_frame_locked(q, &h);
		if (r < 0)
			goto out_unlock;
	}
	n = MIN(count, q->rd_size - q->rd_pos);
	data = (const char *)q->rd_cur->mem + q->rd_pos;
	q->rd_pos += n;
	r = (ssize_t)n;

out_unlock:
	vb_queue_unlock(q);
	vb_handoff_run(q, &h);
	if (r >= 0)
		*ret_data = data;
	return r;
}

/*
 * vb2_core_poll() for an output queue: POLLOUT|POLLWRNORM while a buffer is
 * free to fill (not all are queued) or a done one can be dequeued. Locked.
 */
static unsigned int
vb_output_poll_locked(struct vb_queue *q, unsigned int events)
{
	if (!(events & (POLLOUT | POLLWRNORM)))
		return 0;
	if (!q->streaming || q->error)
		return POLLERR;
	if (q->queued.length < q->n_buffers || q->done.head)
		return POLLOUT | POLLWRNORM;
	return 0;
}

/* vb2_core_poll()'s mask once read emulation is (or is not) running. Locked. */
unsigned int
vb_poll_mask_locked(struct vb_queue *q, const void *owner, unsigned int events)
{
	if (vb_is_output(q))
		return vb_output_poll_locked(q, events);
	/* vb2_core_poll(): a capture queue only answers POLLIN/POLLRDNORM. */
	if (!(events & (POLLIN | POLLRDNORM)))
		return 0;
	/* Nothing to wait for when not streaming or after an error. */
	if (!q->streaming || q->error)
		return POLLERR;
	/* quirk_poll_must_check_waiting_for_buffers: no QBUF yet. */
	if (q->waiting_for_buffers)
		return POLLERR;
	if (q->done.head)
		return POLLIN | POLLRDNORM;
	/* Our addition: the reader's unfinished frame is readable at once. */
	if (q->mode == VB_MODE_READ && q->owner == owner && q->rd_cur &&
	    q->rd_pos < q->rd_size)
		return POLLIN | POLLRDNORM;
	return 0;
}

unsigned int
vb_queue_poll(struct vb_queue *q, const void *owner, unsigned int events)
{
	unsigned int mask;

	vb_queue_lock(q);
	/* Start read emulation only if the streaming API is unused. */
	if (!vb_is_output(q) && (events & (POLLIN | POLLRDNORM)) &&
	    q->mode == VB_MODE_IDLE && q->n_buffers == 0 && !q->owner &&
	    (q->cfg.io_modes & VB_IO_READ) && owner && vb_read_start_locked(q, owner) < 0)
		mask = POLLERR;
	else
		mask = vb_poll_mask_locked(q, owner, events);
	vb_queue_unlock(q);
	return mask;
}
