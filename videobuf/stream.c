/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Streaming: starting and stopping the driver (vb2_start_streaming,
 * __vb2_queue_cancel), PREPARE_BUF, QBUF, DQBUF, STREAMON and STREAMOFF
 * (vb2_core_prepare_buf, vb2_core_qbuf, vb2_core_dqbuf,
 * vb2_core_streamon/off), and the producer's side: the buffer accessors
 * and vb_buffer_done() (vb2_buffer_done), which stamps sequence numbers
 * and timestamps.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include <glib.h>

#include "util/clock.h"
#include "util/macros.h"
#include "queue-private.h"

/* --- Start and cancel (inside a transition) --------------------------- */

/*
 * vb2_start_streaming(): hand every QUEUED buffer to the driver, then call
 * start_streaming. Called locked inside a transition with q->streaming
 * set; returns locked. On failure the driver must have given the buffers
 * back with vb_buffer_done(b, VB_BUF_QUEUED); stragglers are reclaimed
 * (vb2 WARNs and does the same).
 */
int
vb_queue_start_locked(struct vb_queue *q)
{
	struct vb_handoff h = { .n = 0 };
	unsigned int i, count;
	GList *l;
	int r = 0;

	q->sequence = 0;
	q->pair_field = 0;
	for (l = q->queued.head; l; l = l->next) {
		struct vb_buffer *b = l->data;

		if (b->state == VB_BUF_QUEUED)
			vb_handoff_add_locked(q, &h, b);
	}
	count = h.n;
	q->start_called = true;
	vb_queue_unlock(q);

	vb_handoff_run(q, &h);
	r = vb_call_qop(q, start_streaming, q, count);

	vb_queue_lock(q);
	if (r == 0)
		return 0;
	if (r > 0)
		r = -EIO;
	vb_count(q, start_failed);
	g_debug("%s: driver refused to start streaming: %s", q->name, g_strerror(-r));
	q->start_called = false;
	vb_queue_wait_inflight_locked(q);
	for (i = 0; i < q->n_buffers; i++) {
		struct vb_buffer *b = q->bufs[i];

		if (b->state != VB_BUF_ACTIVE)
			continue;
		g_debug("%s: bug: failed start_streaming kept buffer %u", q->name, i);
		vb_buf_set_state(q, b, VB_BUF_QUEUED);
		vb_count(q, reclaimed);
	}
	if (q->done.length)
		g_debug("%s: bug: start_streaming failed after completing buffers", q->name);
	return r;
}

/*
 * __vb2_queue_cancel(): stop the driver and return every buffer to
 * DEQUEUED; done buffers the client has not dequeued are dropped. Also
 * what vb2_core_streamoff() resets (waiting_for_buffers, the error
 * state). Called locked inside a transition; returns locked. The caller
 * wakes waiters after unlocking.
 */
void
vb_queue_cancel_locked(struct vb_queue *q)
{
	bool started = q->start_called;
	unsigned int i;

	/* New DQBUFs fail at once and no new hand-off starts. */
	q->streaming = false;
	q->start_called = false;
	vb_queue_wait_inflight_locked(q);

	if (started) {
		vb_queue_unlock(q);
		vb_call_void_qop(q, stop_streaming, q);
		vb_queue_lock(q);
	}

	for (i = 0; i < q->n_buffers; i++) {
		struct vb_buffer *b = q->bufs[i];

		if (b->state == VB_BUF_ACTIVE) {
			g_debug("%s: bug: stop_streaming left buffer %u active", q->name, i);
			vb_buf_set_state(q, b, VB_BUF_ERROR);
			vb_count(q, reclaimed);
		}
		switch (b->state) {
		case VB_BUF_QUEUED:
		case VB_BUF_DONE:
		case VB_BUF_ERROR:
		case VB_BUF_PREPARED:
			vb_buf_set_state(q, b, VB_BUF_DEQUEUED);
			break;
		default:
			break;
		}
	}

	q->error = false;
	q->waiting_for_buffers = true;
	q->sequence = 0;
	q->pair_field = 0;
	q->stream_epoch++;
	q->rd_cur = NULL;
	q->rd_pos = 0;
	q->rd_size = 0;
}

/* --- PREPARE_BUF, QBUF, DQBUF ----------------------------------------- */

/* vb2_queue_or_prepare_buf() and the checks vb2_core_qbuf() starts with. */
static int
vb_check_buf_locked(struct vb_queue *q, const void *owner, const struct v4l2_buffer *vb,
		    struct vb_buffer **ret)
{
	if (vb_queue_not_owner(q, owner))
		return -EBUSY;
	if (q->mode == VB_MODE_READ) {
		g_debug("%s: file io in progress", q->name);
		return -EBUSY;
	}
	if (vb->type != q->cfg.type) {
		g_debug("%s: invalid buffer type %u", q->name, vb->type);
		return -EINVAL;
	}
	if (vb->index >= q->n_buffers) {
		g_debug("%s: buffer index %u out of range", q->name, vb->index);
		return -EINVAL;
	}
	if (vb->memory != q->memory) {
		g_debug("%s: invalid memory type %u", q->name, vb->memory);
		return -EINVAL;
	}
	if (q->busy)
		return -EBUSY;
	if (q->error) {
		g_debug("%s: fatal error occurred on queue", q->name);
		return -EIO;
	}
	*ret = q->bufs[vb->index];
	return 0;
}

/*
 * __buf_prepare()/__prepare_userptr(): DEQUEUED -> (PREPARING ->)
 * @target. buf_prepare runs without the lock. On failure the buffer is
 * DEQUEUED again with its old USERPTR fields.
 */
static int
vb_buf_prepare_locked(struct vb_queue *q, struct vb_buffer *b, const struct v4l2_buffer *vb,
		      enum vb_buf_state target)
{
	unsigned long old_userptr = b->userptr;
	uint32_t old_length = b->user_length;
	int r = 0;

	/*
	 * Output: the payload is the client's (__fill_vb2_buffer(): 0 means
	 * the whole buffer, more than the buffer is refused).
	 */
	if (vb_is_output(q)) {
		if (vb->bytesused > b->length) {
			g_debug("%s: buffer %u: bytesused %u > length %zu", q->name, b->index,
				vb->bytesused, b->length);
			return -EINVAL;
		}
		b->bytesused = vb->bytesused ? vb->bytesused : (uint32_t)b->length;
	}
	if (q->memory == V4L2_MEMORY_USERPTR) {
		if (vb->m.userptr == 0 || vb->length < b->length) {
			g_debug("%s: userptr buffer %u: address %#lx, size %u < %zu", q->name,
				b->index, vb->m.userptr, vb->length, b->length);
			return -EINVAL;
		}
		b->userptr = vb->m.userptr;
		b->user_length = vb->length;
	}
	/* Without the op there is no PREPARING step and no unlocked call. */
	if (q->ops->buf_prepare) {
		vb_buf_set_state(q, b, VB_BUF_PREPARING);
		q->inflight++;
		vb_queue_unlock(q);
		r = vb_call_qop(q, buf_prepare, b);
		vb_queue_lock(q);
		if (--q->inflight == 0)
			pthread_cond_broadcast(&q->idle);
		if (r > 0)
			r = -EINVAL;
	}
	if (r < 0) {
		g_debug("%s: buffer %u: preparation failed: %s", q->name, b->index,
			g_strerror(-r));
		b->userptr = old_userptr;
		b->user_length = old_length;
		if (b->state == VB_BUF_PREPARING)
			vb_buf_set_state(q, b, VB_BUF_DEQUEUED);
		return r;
	}
	return vb_buf_set_state(q, b, target);
}

int
vb_queue_prepare_buf(struct vb_queue *q, const void *owner, struct v4l2_buffer *vb)
{
	struct vb_buffer *b;
	int r;

	if (!owner)
		return -EINVAL;
	vb_queue_lock(q);
	r = vb_check_buf_locked(q, owner, vb, &b);
	if (r < 0)
		goto out_unlock;
	/* vb2_core_prepare_buf(): only from DEQUEUED, once. */
	if (b->state != VB_BUF_DEQUEUED) {
		g_debug("%s: prepare_buf %u: invalid buffer state %s", q->name, b->index,
			vb_buf_state_name(b->state));
		r = -EINVAL;
		goto out_unlock;
	}
	r = vb_buf_prepare_locked(q, b, vb, VB_BUF_PREPARED);
	if (r == 0)
		vb_fill_v4l2_buffer(q, b, vb);
out_unlock:
	vb_queue_unlock(q);
	return r;
}

int
vb_queue_qbuf(struct vb_queue *q, const void *owner, struct v4l2_buffer *vb)
{
	struct vb_handoff h = { .n = 0 };
	enum vb_buf_state orig;
	struct vb_buffer *b;
	bool wake = false;
	int r;

	if (!owner)
		return -EINVAL;
	vb_queue_lock(q);
	r = vb_check_buf_locked(q, owner, vb, &b);
	if (r < 0)
		goto out_unlock;

	orig = b->state;
	switch (b->state) {
	case VB_BUF_DEQUEUED:
		r = vb_buf_prepare_locked(q, b, vb, VB_BUF_QUEUED);
		break;
	case VB_BUF_PREPARED:
		r = vb_buf_set_state(q, b, VB_BUF_QUEUED);
		break;
	case VB_BUF_PREPARING:
		g_debug("%s: qbuf %u: buffer still being prepared", q->name, b->index);
		r = -EINVAL;
		break;
	default:
		g_debug("%s: qbuf %u refused: buffer is %s", q->name, b->index,
			vb_buf_state_name(b->state));
		r = -EINVAL;
		break;
	}
	if (r < 0)
		goto out_unlock;

	/* Capture: the payload is the driver's to set again. */
	if (!vb_is_output(q))
		b->bytesused = 0;
	q->waiting_for_buffers = false;
	if (q->start_called)
		vb_handoff_add_locked(q, &h, b);
	vb_fill_v4l2_buffer(q, b, vb);

	/*
	 * vb2_core_qbuf(): STREAMON happened with too few buffers queued and
	 * now there are enough. If starting fails, this buffer counts as not
	 * queued.
	 */
	if (q->streaming && !q->start_called &&
	    q->queued.length >= q->cfg.min_queued_buffers &&
	    vb_transition_begin_locked(q) == 0) {
		r = vb_queue_start_locked(q);
		if (r < 0) {
			q->streaming = false;
			if (b->state == VB_BUF_QUEUED)
				vb_buf_set_state(q, b, orig == VB_BUF_PREPARED ?
						 VB_BUF_PREPARED : VB_BUF_DEQUEUED);
			wake = true;
		}
		vb_transition_end_locked(q);
	}

out_unlock:
	vb_queue_unlock(q);
	vb_handoff_run(q, &h);
	if (wake)
		vb_queue_wake(q);
	return r;
}

/*
 * What DQBUF, STREAMON and STREAMOFF check first (vb2_queue_is_busy(),
 * "file io in progress", the type): -EBUSY, -EINVAL or 0. Locked.
 */
static int
vb_check_stream_locked(struct vb_queue *q, const void *owner, uint32_t type)
{
	if (vb_queue_not_owner(q, owner) || q->mode == VB_MODE_READ)
		return -EBUSY;
	if (type != q->cfg.type)
		return -EINVAL;
	return 0;
}

/*
 * What DQBUF checks before it takes a done buffer (vb2_core_dqbuf(),
 * __vb2_wait_for_done_vb()): 0, -EBUSY, -EINVAL (type, "streaming off"),
 * -EIO (queue error). Locked.
 */
static int
vb_check_dqbuf_locked(struct vb_queue *q, const void *owner, uint32_t type)
{
	int r = vb_check_stream_locked(q, owner, type);

	if (r < 0)
		return r;
	if (!q->streaming)
		return -EINVAL;
	if (q->error)
		return -EIO;
	return 0;
}

/* The oldest done buffer goes to the client as @vb (may be NULL). Locked. */
static void
vb_dqbuf_head_locked(struct vb_queue *q, struct v4l2_buffer *vb)
{
	struct vb_buffer *b = q->done.head->data;

	if (vb) {
		vb_fill_v4l2_buffer(q, b, vb);
		vb->flags &= ~V4L2_BUF_FLAG_DONE;
	}
	vb_buf_set_state(q, b, VB_BUF_DEQUEUED);
}

int
vb_queue_dqbuf(struct vb_queue *q, const void *owner, struct v4l2_buffer *vb)
{
	int r;

	if (!owner)
		return -EINVAL;
	vb_queue_lock(q);
	r = vb_check_dqbuf_locked(q, owner, vb->type);
	if (r == 0 && !q->done.head)
		r = -EAGAIN;
	if (r == 0)
		vb_dqbuf_head_locked(q, vb);
	vb_queue_unlock(q);
	return r;
}

/* --- The preload shim's fast path ------------------------------------- */

int
vb_queue_peek_done(struct vb_queue *q, const void *owner, uint64_t after,
		   struct v4l2_buffer *dq, struct v4l2_buffer *requeue, uint64_t *ret_serial,
		   uint32_t *ret_length)
{
	int r;

	if (!owner)
		return -EINVAL;
	vb_queue_lock(q);
	r = vb_check_dqbuf_locked(q, owner, q->cfg.type);
	if (r < 0)
		goto out_unlock;
	r = -EAGAIN;
	for (GList *l = q->done.head; l; l = l->next) {
		struct vb_buffer *b = l->data;

		if (b->done_serial <= after)
			continue;
		vb_fill_v4l2_buffer(q, b, dq);
		dq->flags &= ~V4L2_BUF_FLAG_DONE;
		vb_fill_v4l2_buffer_as(q, b, VB_BUF_QUEUED, requeue);
		*ret_serial = b->done_serial;
		*ret_length = (uint32_t)b->length;
		r = 0;
		break;
	}
out_unlock:
	vb_queue_unlock(q);
	return r;
}

int
vb_queue_dqbuf_serial(struct vb_queue *q, const void *owner, uint64_t serial)
{
	int r;

	if (!owner)
		return -EINVAL;
	vb_queue_lock(q);
	r = vb_check_dqbuf_locked(q, owner, q->cfg.type);
	if (r == 0 && (!q->done.head ||
		       ((struct vb_buffer *)q->done.head->data)->done_serial != serial))
		r = -ESTALE;
	if (r == 0)
		vb_dqbuf_head_locked(q, NULL);
	vb_queue_unlock(q);
	return r;
}

int
vb_queue_return_refused(struct vb_queue *q, const void *owner, uint32_t index)
{
	struct vb_buffer *b;
	int r;

	if (!owner)
		return -EINVAL;
	vb_queue_lock(q);
	r = vb_check_dqbuf_locked(q, owner, q->cfg.type);
	if (r < 0)
		goto out_unlock;
	if (index >= q->n_buffers || q->bufs[index]->state != VB_BUF_DEQUEUED) {
		r = -EINVAL;	/* queued after all (twice), or gone with its queue */
		goto out_unlock;
	}
	b = q->bufs[index];
	if (!vb_is_output(q))
		b->bytesused = 0;
	r = vb_buf_set_state(q, b, VB_BUF_ERROR);
out_unlock:
	vb_queue_unlock(q);
	if (r == 0)
		vb_queue_wake(q);	/* pollers and a parked DQBUF */
	return r;
}

void
vb_queue_snapshot(struct vb_queue *q, const void *owner, struct vb_queue_snapshot *ret)
{
	vb_queue_lock(q);
	*ret = (struct vb_queue_snapshot){
		.owned = owner && q->owner == owner && q->mode == VB_MODE_STREAMING,
		.streaming = q->streaming,
		.started = q->start_called,
		.error = q->error,
		.type = q->cfg.type,
		.memory = q->memory,
		.n_buffers = q->n_buffers,
		.n_queued = q->queued.length,
		.epoch = q->stream_epoch,
		.generation = q->generation,
		.poll = vb_poll_mask_locked(q, owner, POLLIN | POLLRDNORM | POLLOUT | POLLWRNORM),
		.read_buffers = (q->cfg.io_modes & VB_IO_READ) ? q->cfg.read_buffers : 0,
	};
	vb_queue_unlock(q);
}

/* --- STREAMON, STREAMOFF ---------------------------------------------- */

int
vb_queue_streamon(struct vb_queue *q, const void *owner, uint32_t type)
{
	bool wake = false;
	int r;

	if (!owner)
		return -EINVAL;
	vb_queue_lock(q);
	r = vb_check_stream_locked(q, owner, type);
	if (r < 0 || q->streaming)
		goto out_unlock;
	if (q->n_buffers == 0) {
		g_debug("%s: streamon: no buffers have been allocated", q->name);
		r = -EINVAL;
		goto out_unlock;
	}
	if (q->n_buffers < q->cfg.min_queued_buffers) {
		g_debug("%s: streamon: need at least %u buffers", q->name,
			q->cfg.min_queued_buffers);
		r = -EINVAL;
		goto out_unlock;
	}
	r = vb_transition_begin_locked(q);
	if (r < 0)
		goto out_unlock;
	q->streaming = true;
	/* vb2_core_streamon(): start now only with enough buffers queued. */
	if (q->queued.length >= q->cfg.min_queued_buffers) {
		r = vb_queue_start_locked(q);
		if (r < 0) {
			q->streaming = false;
			wake = true;
		}
	}
	vb_transition_end_locked(q);

out_unlock:
	vb_queue_unlock(q);
	if (wake)
		vb_queue_wake(q);
	return r;
}

int
vb_queue_streamoff(struct vb_queue *q, const void *owner, uint32_t type)
{
	int r;

	if (!owner)
		return -EINVAL;
	vb_queue_lock(q);
	r = vb_check_stream_locked(q, owner, type);
	if (r < 0)
		goto out_unlock;
	/* vb2_core_streamoff(): cancel even when not streaming. */
	r = vb_transition_begin_locked(q);
	if (r < 0)
		goto out_unlock;
	vb_queue_cancel_locked(q);
	vb_transition_end_locked(q);
out_unlock:
	vb_queue_unlock(q);
	if (r == 0)
		vb_queue_wake(q);
	return r;
}

/* --- Producer side ---------------------------------------------------- */

struct vb_queue *
vb_buffer_queue(struct vb_buffer *b)
{
	return b->q;
}

unsigned int
vb_buffer_index(struct vb_buffer *b)
{
	return b->index;
}

void *
vb_buffer_mem(struct vb_buffer *b)
{
	return b->mem;
}

size_t
vb_buffer_length(struct vb_buffer *b)
{
	return b->length;
}

uint32_t
vb_buffer_bytesused(struct vb_buffer *b)
{
	return b->bytesused;
}

void
vb_buffer_set_timestamp(struct vb_buffer *b, uint64_t ns)
{
	b->timestamp_ns = ns;
	b->timestamp_set = true;
}

void
vb_buffer_set_bytesused(struct vb_buffer *b, uint32_t bytesused)
{
	b->bytesused = (uint32_t)MIN((size_t)bytesused, b->length);
}

void
vb_buffer_set_field(struct vb_buffer *b, uint32_t field)
{
	b->field = field;
}

void
vb_queue_skip_sequence(struct vb_queue *q, unsigned int n)
{
	vb_queue_lock(q);
	q->sequence += n;
	q->pair_field = 0;
	vb_queue_unlock(q);
}

/* The sequence number of a buffer done now (locked). */
static uint32_t
vb_next_sequence(struct vb_queue *q, uint32_t field)
{
	bool half = field == V4L2_FIELD_TOP || field == V4L2_FIELD_BOTTOM;

	if (half && q->pair_field && q->pair_field != field) {
		/* The second field of the frame the last buffer began. */
		q->pair_field = 0;
		return q->sequence - 1;
	}
	q->pair_field = half ? field : 0;
	return q->sequence++;
}

/* vb2_buffer_done() */
void
vb_buffer_done(struct vb_buffer *b, enum vb_buf_state state)
{
	struct vb_queue *q = b->q;
	bool wake;

	if (state != VB_BUF_DONE && state != VB_BUF_ERROR && state != VB_BUF_QUEUED) {
		g_debug("%s: bug: buffer %u done with state %s", q->name, b->index,
			vb_buf_state_name(state));
		state = VB_BUF_ERROR;
	}

	vb_queue_lock(q);
	if (b->state != VB_BUF_ACTIVE) {
		g_debug("%s: bug: buffer %u done while %s", q->name, b->index,
			vb_buf_state_name(b->state));
		vb_queue_unlock(q);
		return;
	}
	if (state != VB_BUF_QUEUED) {
		b->sequence = vb_next_sequence(q, b->field);
		if (!b->timestamp_set)
			b->timestamp_ns = v4l2cuse_now_ns();
	}
	b->timestamp_set = false;
	vb_buf_set_state(q, b, state);
	vb_count(q, buf_done);
	/* Buffers given back by stop_streaming are dropped: cancel wakes once. */
	wake = state != VB_BUF_QUEUED && q->streaming;
	vb_queue_unlock(q);
	if (wake)
		vb_queue_wake(q);
}
