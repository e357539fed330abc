/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Buffers: allocation through queue_setup and buf_init, freeing through
 * buf_cleanup, and the ioctls that make or describe buffers: REQBUFS,
 * CREATE_BUFS and QUERYBUF (vb2_core_reqbufs, vb2_core_create_bufs,
 * __vb2_queue_alloc, __vb2_queue_free, __fill_v4l2_buffer). A buffer's
 * memory is mem.c's.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <glib.h>

#include "util/macros.h"
#include "queue-private.h"

/* --- Allocate and free (inside a transition) -------------------------- */

static void
vb_buffer_destroy(struct vb_queue *q, struct vb_buffer *b)
{
	if (b->inited)
		vb_call_void_qop(q, buf_cleanup, b);
	vb_mem_free(b);
	g_free(b);
}

/*
 * __vb2_queue_free(): detach every buffer, then buf_cleanup and free the
 * memory with the lock dropped. Called locked inside a transition after
 * a cancel; returns locked.
 */
void
vb_queue_free_buffers_locked(struct vb_queue *q)
{
	struct vb_buffer *bufs[VB_MAX_BUFFERS];
	unsigned int i, n = q->n_buffers;

	q->memory = 0;
	if (n == 0)
		return;
	for (i = 0; i < n; i++) {
		bufs[i] = q->bufs[i];
		q->bufs[i] = NULL;
		if (bufs[i]->state != VB_BUF_DEQUEUED)
			g_debug("%s: bug: freeing buffer %u in state %s", q->name, i,
				vb_buf_state_name(bufs[i]->state));
	}
	q->n_buffers = 0;
	q->generation++;
	g_queue_init(&q->queued);
	g_queue_init(&q->done);
	q->n_active = 0;

	vb_queue_unlock(q);
	for (i = 0; i < n; i++)
		vb_buffer_destroy(q, bufs[i]);
	vb_queue_lock(q);
}

/*
 * The second half of vb2_core_reqbufs()/vb2_core_create_bufs(): ask
 * queue_setup, allocate and buf_init up to @count buffers of @memory
 * after the existing ones, and ask again with fewer if allocation fell
 * short (__vb2_queue_alloc stops at the first failure). MMAP cookies are
 * cumulative and page-aligned like vb2's, and must stay below 4 GiB.
 * Called locked inside a transition with q->memory set; returns locked,
 * with the new buffers installed or nothing changed.
 */
int
vb_queue_setup_alloc_locked(struct vb_queue *q, uint32_t memory, unsigned int count,
			    size_t size, bool create, unsigned int *ret_count)
{
	struct vb_buffer *bufs[VB_MAX_BUFFERS];
	unsigned int first = q->n_buffers, num = count, allocated = 0, i;
	uint64_t offset = 0;
	size_t aligned = 0;
	int r;

	if (first > 0 && memory == V4L2_MEMORY_MMAP) {
		struct vb_buffer *last = q->bufs[first - 1];

		offset = (uint64_t)last->offset + last->mem_length;
	}
	vb_queue_unlock(q);

	r = vb_call_qop(q, queue_setup, q, &num, &size);
	if (r > 0)
		r = -EINVAL;
	if (r < 0)
		goto out_lock;
	num = MIN(num, VB_MAX_BUFFERS - first);
	r = vb_size_align(q, size, &aligned);
	if (r < 0) {
		g_debug("%s: queue_setup asked for an impossible size %zu", q->name, size);
		goto out_lock;
	}

	for (allocated = 0; allocated < num; allocated++) {
		struct vb_buffer *b = g_new0(struct vb_buffer, 1);

		b->q = q;
		b->index = first + allocated;
		b->memfd = -1;
		b->state = VB_BUF_DEQUEUED;
		b->queued_link.data = b;
		b->done_link.data = b;
		if (memory == V4L2_MEMORY_MMAP) {
			if (offset + aligned > ((uint64_t)1 << 32)) {
				g_debug("%s: out of mmap cookies at buffer %u", q->name, b->index);
				g_free(b);
				break;
			}
			b->offset = (uint32_t)offset;
		}
		if (vb_mem_alloc(q, b, size) < 0) {
			g_free(b);
			break;
		}
		if (vb_call_qop(q, buf_init, b) != 0) {
			g_debug("%s: buf_init failed for buffer %u", q->name, b->index);
			vb_mem_free(b);
			g_free(b);
			break;
		}
		b->inited = true;
		offset += aligned;
		bufs[allocated] = b;
	}

	if (allocated == 0) {
		r = -ENOMEM;
	} else if (!create && allocated < q->cfg.min_buffers) {
		r = -ENOMEM;
	} else if (allocated < num) {
		unsigned int again = allocated;
		size_t size2 = create ? size : 0;

		r = vb_call_qop(q, queue_setup, q, &again, &size2);
		if (r > 0)
			r = -EINVAL;
		if (r == 0 && allocated < again)
			r = -ENOMEM;
	}
	if (r < 0) {
		for (i = 0; i < allocated; i++)
			vb_buffer_destroy(q, bufs[i]);
	}

out_lock:
	vb_queue_lock(q);
	if (r < 0)
		return r;
	for (i = 0; i < allocated; i++)
		q->bufs[first + i] = bufs[i];
	q->n_buffers = first + allocated;
	*ret_count = allocated;
	return 0;
}

/* --- QUERYBUF --------------------------------------------------------- */

/*
 * __fill_v4l2_buffer(): the whole struct, zeroed first, for @b in @state.
 * bytesused is the producer's while the buffer is queued or active, so it
 * reads 0 then. Locked.
 */
void
vb_fill_v4l2_buffer_as(struct vb_queue *q, struct vb_buffer *b, enum vb_buf_state state,
		       struct v4l2_buffer *out)
{
	/* Output buffers carry the client's payload throughout. */
	bool producer_owned = !vb_is_output(q) &&
			      (state == VB_BUF_QUEUED || state == VB_BUF_ACTIVE);

	memset(out, 0, sizeof(*out));
	out->index = b->index;
	out->type = q->cfg.type;
	out->memory = q->memory;
	out->field = b->field ? b->field : V4L2_FIELD_NONE;
	out->bytesused = producer_owned ? 0 : b->bytesused;
	out->sequence = b->sequence;
	out->timestamp.tv_sec = (time_t)(b->timestamp_ns / 1000000000u);
	out->timestamp.tv_usec = (suseconds_t)(b->timestamp_ns % 1000000000u / 1000u);
	out->flags = V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC | V4L2_BUF_FLAG_TSTAMP_SRC_EOF;
	switch (state) {
	case VB_BUF_QUEUED:
	case VB_BUF_ACTIVE:
	case VB_BUF_PREPARING:
		out->flags |= V4L2_BUF_FLAG_QUEUED;
		break;
	case VB_BUF_ERROR:
		out->flags |= V4L2_BUF_FLAG_ERROR;
		/* fall through */
	case VB_BUF_DONE:
		out->flags |= V4L2_BUF_FLAG_DONE;
		break;
	case VB_BUF_PREPARED:
		out->flags |= V4L2_BUF_FLAG_PREPARED;
		break;
	case VB_BUF_DEQUEUED:
		break;
	}
	if (b->mapped)
		out->flags |= V4L2_BUF_FLAG_MAPPED;
	if (q->memory == V4L2_MEMORY_USERPTR) {
		out->m.userptr = b->userptr;
		out->length = b->userptr ? b->user_length : (uint32_t)b->length;
	} else {
		out->m.offset = b->offset;
		out->length = (uint32_t)b->length;
	}
}

void
vb_fill_v4l2_buffer(struct vb_queue *q, struct vb_buffer *b, struct v4l2_buffer *out)
{
	vb_fill_v4l2_buffer_as(q, b, b->state, out);
}

int
vb_queue_querybuf(struct vb_queue *q, struct v4l2_buffer *vb)
{
	int r = 0;

	vb_queue_lock(q);
	if (vb->type != q->cfg.type || vb->index >= q->n_buffers)
		r = -EINVAL;
	else
		vb_fill_v4l2_buffer(q, q->bufs[vb->index], vb);
	vb_queue_unlock(q);
	return r;
}

int
vb_queue_buffer_state(struct vb_queue *q, unsigned int index)
{
	int r = -EINVAL;

	vb_queue_lock(q);
	if (index < q->n_buffers)
		r = (int)q->bufs[index]->state;
	vb_queue_unlock(q);
	return r;
}

/* --- REQBUFS, CREATE_BUFS --------------------------------------------- */

uint32_t
vb_queue_buf_caps(struct vb_queue *q)
{
	uint32_t caps = 0;

	/* fill_buf_caps() in videobuf2-v4l2.c, for what we support */
	if (q->cfg.io_modes & VB_IO_MMAP)
		caps |= V4L2_BUF_CAP_SUPPORTS_MMAP;
	if (q->cfg.io_modes & VB_IO_USERPTR)
		caps |= V4L2_BUF_CAP_SUPPORTS_USERPTR;
	if (q->cfg.allow_orphans)
		caps |= V4L2_BUF_CAP_SUPPORTS_ORPHANED_BUFS;
	return caps;
}

/* vb2_verify_memory_type(): memory and type first, the busy test last. */
static int
vb_verify_memory_type_locked(struct vb_queue *q, uint32_t memory, uint32_t type)
{
	if (memory != V4L2_MEMORY_MMAP && memory != V4L2_MEMORY_USERPTR) {
		g_debug("%s: unsupported memory type %u", q->name, memory);
		return -EINVAL;
	}
	if (type != q->cfg.type) {
		g_debug("%s: requested type %u is incorrect", q->name, type);
		return -EINVAL;
	}
	if ((memory == V4L2_MEMORY_MMAP && !(q->cfg.io_modes & VB_IO_MMAP)) ||
	    (memory == V4L2_MEMORY_USERPTR && !(q->cfg.io_modes & VB_IO_USERPTR))) {
		g_debug("%s: memory type %u not enabled", q->name, memory);
		return -EINVAL;
	}
	if (q->mode == VB_MODE_READ) {
		g_debug("%s: file io in progress", q->name);
		return -EBUSY;
	}
	return 0;
}

static bool
vb_queue_any_mapped(struct vb_queue *q)
{
	unsigned int i;

	for (i = 0; i < q->n_buffers; i++)
		if (q->bufs[i]->mapped)
			return true;
	return false;
}

int
vb_queue_reqbufs(struct vb_queue *q, const void *owner, struct v4l2_requestbuffers *req)
{
	unsigned int count = req->count, allocated = 0;
	uint32_t memory = req->memory;
	bool freed = false;
	int r;

	/* vb2_ioctl_reqbufs() fills the capabilities whatever happens. */
	req->capabilities = vb_queue_buf_caps(q);
	req->flags = 0;
	memset(req->reserved, 0, sizeof(req->reserved));
	if (!owner)
		return -EINVAL;

	vb_queue_lock(q);
	r = vb_verify_memory_type_locked(q, memory, req->type);
	if (r == -EBUSY && count == 0 && q->owner == owner) {
		/* The reader gives read emulation up (vb2 would say EBUSY). */
		r = vb_transition_begin_locked(q);
		if (r == 0) {
			vb_queue_teardown_locked(q);
			vb_transition_end_locked(q);
			freed = true;
		}
		goto out_unlock;
	}
	if (r < 0)
		goto out_unlock;
	if (vb_queue_not_owner(q, owner)) {
		r = -EBUSY;
		goto out_unlock;
	}
	if (q->streaming) {
		g_debug("%s: reqbufs: streaming active", q->name);
		r = -EBUSY;
		goto out_unlock;
	}
	if (q->n_buffers && !q->cfg.allow_orphans && vb_queue_any_mapped(q)) {
		g_debug("%s: reqbufs: memory in use", q->name);
		r = -EBUSY;
		goto out_unlock;
	}
	r = vb_transition_begin_locked(q);
	if (r < 0)
		goto out_unlock;

	/* vb2_core_reqbufs(): existing buffers go first, whatever the count. */
	if (q->n_buffers || count == 0) {
		vb_queue_teardown_locked(q);
		freed = true;
		if (count == 0)
			goto out_end;
	}

	count = CLAMP_VAL(count, q->cfg.min_buffers, (unsigned int)VB_MAX_BUFFERS);
	q->memory = memory;
	r = vb_queue_setup_alloc_locked(q, memory, count, 0, false, &allocated);
	if (r < 0) {
		q->memory = 0;
		goto out_end;
	}
	q->owner = owner;
	q->mode = VB_MODE_STREAMING;
	q->waiting_for_buffers = true;
	req->count = allocated;

out_end:
	vb_transition_end_locked(q);
out_unlock:
	vb_queue_unlock(q);
	if (freed)
		vb_queue_wake(q);
	return r;
}

int
vb_queue_create_bufs(struct vb_queue *q, const void *owner, struct v4l2_create_buffers *cb)
{
	unsigned int allocated = 0;
	bool first_alloc;
	size_t size;
	int r;

	cb->capabilities = vb_queue_buf_caps(q);
	cb->flags = 0;
	memset(cb->reserved, 0, sizeof(cb->reserved));
	if (!owner)
		return -EINVAL;

	vb_queue_lock(q);
	cb->index = q->n_buffers;
	r = vb_verify_memory_type_locked(q, cb->memory, cb->format.type);
	/* vb2_ioctl_create_bufs(): count 0 only validates; EBUSY maps to 0. */
	if (cb->count == 0) {
		if (r == -EBUSY)
			r = 0;
		goto out_unlock;
	}
	if (r < 0)
		goto out_unlock;
	if (vb_queue_not_owner(q, owner)) {
		r = -EBUSY;
		goto out_unlock;
	}
	if (q->n_buffers == VB_MAX_BUFFERS) {
		g_debug("%s: maximum number of buffers already allocated", q->name);
		r = -ENOBUFS;
		goto out_unlock;
	}
	if (q->n_buffers && q->memory != cb->memory) {
		g_debug("%s: create_bufs: memory model mismatch", q->name);
		r = -EINVAL;
		goto out_unlock;
	}
	size = cb->format.fmt.pix.sizeimage;
	if (size == 0) {
		r = -EINVAL;
		goto out_unlock;
	}
	r = vb_transition_begin_locked(q);
	if (r < 0)
		goto out_unlock;

	first_alloc = q->n_buffers == 0;
	if (first_alloc)
		q->memory = cb->memory;
	r = vb_queue_setup_alloc_locked(q, cb->memory,
					MIN(cb->count, VB_MAX_BUFFERS - q->n_buffers),
					size, true, &allocated);
	if (r < 0) {
		if (first_alloc)
			q->memory = 0;
	} else {
		if (first_alloc)
			q->waiting_for_buffers = true;
		q->owner = owner;
		q->mode = VB_MODE_STREAMING;
		cb->count = allocated;
	}
	vb_transition_end_locked(q);

out_unlock:
	vb_queue_unlock(q);
	return r;
}
