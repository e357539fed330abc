/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The vb_ queue: buffer states, queue ownership and the V4L2 streaming
 * ioctls. The behaviour follows the kernel's videobuf2-core.c and
 * videobuf2-v4l2.c (vb2_core_reqbufs, vb2_core_create_bufs,
 * vb2_core_qbuf, vb2_core_dqbuf, vb2_core_streamon/off,
 * __vb2_queue_cancel, vb2_buffer_done, vb2_ioctl_* ownership); the
 * comments name the vb2 function whose behaviour a block reproduces. The
 * code is our own: vb2 holds the driver's lock across its ops, we never
 * hold ours (see "Lock discipline" in docs/videobuf.md).
 *
 * Read emulation and poll live in read.c, buffer memory in mem.c.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <glib.h>

#include "util/macros.h"
#include "queue-private.h"

/* --- States ------------------------------------------------------------ */

static const char *const vb_buf_state_names[VB_BUF_N_STATES] = {
	[VB_BUF_DEQUEUED] = "dequeued",
	[VB_BUF_PREPARED] = "prepared",
	[VB_BUF_QUEUED] = "queued",
	[VB_BUF_ACTIVE] = "active",
	[VB_BUF_DONE] = "done",
	[VB_BUF_ERROR] = "error",
	[VB_BUF_PREPARING] = "preparing",
};

const char *
vb_buf_state_name(enum vb_buf_state state)
{
	if ((unsigned int)state >= G_N_ELEMENTS(vb_buf_state_names))
		return "invalid";
	return vb_buf_state_names[state];
}

static const char *const vb_io_mode_names[] = {
	[VB_MODE_IDLE] = "idle",
	[VB_MODE_STREAMING] = "streaming",
	[VB_MODE_READ] = "read",
};

const char *
vb_io_mode_name(enum vb_io_mode mode)
{
	if ((unsigned int)mode >= G_N_ELEMENTS(vb_io_mode_names))
		return "invalid";
	return vb_io_mode_names[mode];
}

/*
 * Every legal transition; docs/videobuf.md draws the same graph. Anything
 * else is refused by vb_buf_set_state().
 */
static const bool vb_buf_transitions[VB_BUF_N_STATES][VB_BUF_N_STATES] = {
	/* QBUF/PREPARE_BUF: with buf_prepare via PREPARING, else directly */
	[VB_BUF_DEQUEUED][VB_BUF_PREPARING] = true,
	[VB_BUF_DEQUEUED][VB_BUF_PREPARED] = true,
	[VB_BUF_DEQUEUED][VB_BUF_QUEUED] = true,
	/* buf_prepare failed; succeeded for PREPARE_BUF; for QBUF */
	[VB_BUF_PREPARING][VB_BUF_DEQUEUED] = true,
	[VB_BUF_PREPARING][VB_BUF_PREPARED] = true,
	[VB_BUF_PREPARING][VB_BUF_QUEUED] = true,
	/* QBUF; cancel (STREAMOFF, REQBUFS) */
	[VB_BUF_PREPARED][VB_BUF_QUEUED] = true,
	[VB_BUF_PREPARED][VB_BUF_DEQUEUED] = true,
	/* buf_queue; cancel; QBUF undone after its deferred start failed */
	[VB_BUF_QUEUED][VB_BUF_ACTIVE] = true,
	[VB_BUF_QUEUED][VB_BUF_DEQUEUED] = true,
	[VB_BUF_QUEUED][VB_BUF_PREPARED] = true,
	/* vb_buffer_done(); cancel reclaims a buffer the driver kept as ERROR */
	[VB_BUF_ACTIVE][VB_BUF_DONE] = true,
	[VB_BUF_ACTIVE][VB_BUF_ERROR] = true,
	[VB_BUF_ACTIVE][VB_BUF_QUEUED] = true,
	/* DQBUF, read(), cancel */
	[VB_BUF_DONE][VB_BUF_DEQUEUED] = true,
	[VB_BUF_ERROR][VB_BUF_DEQUEUED] = true,
};

static bool
vb_state_on_queued_list(enum vb_buf_state s)
{
	return s == VB_BUF_QUEUED || s == VB_BUF_ACTIVE || s == VB_BUF_DONE ||
	       s == VB_BUF_ERROR;
}

static bool
vb_state_on_done_list(enum vb_buf_state s)
{
	return s == VB_BUF_DONE || s == VB_BUF_ERROR;
}

/*
 * The only writer of b->state. Keeps the queued list (vb2's queued_list:
 * from QBUF until DQBUF), the done list and the ACTIVE count in step with
 * the state. Called with the lock held.
 */
int
vb_buf_set_state(struct vb_queue *q, struct vb_buffer *b, enum vb_buf_state state)
{
	enum vb_buf_state old = b->state;
	bool was, now;

	if ((unsigned int)state >= VB_BUF_N_STATES || !vb_buf_transitions[old][state]) {
		g_debug("%s: buffer %u: refused transition %s -> %s", q->name, b->index,
			vb_buf_state_name(old), vb_buf_state_name(state));
		return -EINVAL;
	}

	was = vb_state_on_queued_list(old);
	now = vb_state_on_queued_list(state);
	if (was && !now)
		g_queue_unlink(&q->queued, &b->queued_link);
	else if (!was && now)
		g_queue_push_tail_link(&q->queued, &b->queued_link);

	was = vb_state_on_done_list(old);
	now = vb_state_on_done_list(state);
	if (was && !now)
		g_queue_unlink(&q->done, &b->done_link);
	else if (!was && now)
		g_queue_push_tail_link(&q->done, &b->done_link);

	if (old == VB_BUF_ACTIVE)
		q->n_active--;
	if (state == VB_BUF_ACTIVE)
		q->n_active++;
	b->state = state;
	return 0;
}

/* --- Locking, transitions, hand-offs -------------------------------------- */

void
vb_queue_lock(struct vb_queue *q)
{
	pthread_mutex_lock(&q->lock);
}

void
vb_queue_unlock(struct vb_queue *q)
{
	pthread_mutex_unlock(&q->lock);
}

static void
vb_queue_wait_inflight_locked(struct vb_queue *q)
{
	while (q->inflight > 0)
		pthread_cond_wait(&q->idle, &q->lock);
}

/*
 * Start a transition (allocate, free, start, stop): mark the queue busy so
 * no other transition, QBUF or read hand-off starts while we drop the
 * lock, and let buf_prepare/buf_queue calls already running elsewhere
 * finish. A transition already running (on any thread) gives -EBUSY.
 */
int
vb_transition_begin_locked(struct vb_queue *q)
{
	if (q->busy) {
		g_debug("%s: another transition is running", q->name);
		return -EBUSY;
	}
	q->busy = true;
	q->busy_thread = pthread_self();
	vb_queue_wait_inflight_locked(q);
	return 0;
}

/* For release/free, which cannot fail: wait for another thread's transition. */
static int
vb_transition_begin_wait_locked(struct vb_queue *q)
{
	while (q->busy && !pthread_equal(q->busy_thread, pthread_self()))
		pthread_cond_wait(&q->idle, &q->lock);
	if (q->busy) {
		g_debug("%s: bug: release/free from inside a transition", q->name);
		return -EDEADLK;
	}
	return vb_transition_begin_locked(q);
}

void
vb_transition_end_locked(struct vb_queue *q)
{
	q->busy = false;
	pthread_cond_broadcast(&q->idle);
}

/*
 * A wake raised on this thread while it runs buf_queue for a queue is held
 * back until the hand-off is over: a transition on another thread may be
 * waiting for the hand-off, and the daemon's wake handler may need a lock
 * that transition's caller holds.
 */
struct vb_wake_defer {
	struct vb_queue *q;
	bool pending;
	struct vb_wake_defer *prev;
};

static __thread struct vb_wake_defer *vb_wake_defer_top;

void
vb_queue_wake(struct vb_queue *q)
{
	struct vb_wake_defer *d;

	for (d = vb_wake_defer_top; d; d = d->prev) {
		if (d->q == q) {
			d->pending = true;
			return;
		}
	}
	vb_call_void_qop(q, wake, q);
}

/* vb2's __enqueue_in_driver, split: QUEUED -> ACTIVE now, buf_queue later. */
void
vb_handoff_add_locked(struct vb_queue *q, struct vb_handoff *h, struct vb_buffer *b)
{
	if (vb_buf_set_state(q, b, VB_BUF_ACTIVE) < 0)
		return;
	h->bufs[h->n++] = b;
	q->inflight++;
}

/* Runs the collected buf_queue calls; called without the lock. */
void
vb_handoff_run(struct vb_queue *q, struct vb_handoff *h)
{
	struct vb_wake_defer defer = { .q = q, .prev = vb_wake_defer_top };
	unsigned int i;

	if (h->n == 0)
		return;
	vb_wake_defer_top = &defer;
	for (i = 0; i < h->n; i++)
		vb_call_void_qop(q, buf_queue, h->bufs[i]);
	vb_wake_defer_top = defer.prev;

	vb_queue_lock(q);
	q->inflight -= h->n;
	if (q->inflight == 0)
		pthread_cond_broadcast(&q->idle);
	vb_queue_unlock(q);
	h->n = 0;
	if (defer.pending)
		vb_queue_wake(q);
}

/* --- Start, cancel, free, allocate (inside a transition) ------------------- */

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
	q->rd_cur = NULL;
	q->rd_pos = 0;
	q->rd_size = 0;
}

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

/* Cancel, free, drop the owner. Locked, inside a transition. */
static void
vb_queue_teardown_locked(struct vb_queue *q)
{
	vb_queue_cancel_locked(q);
	vb_queue_free_buffers_locked(q);
	q->owner = NULL;
	q->mode = VB_MODE_IDLE;
}

void
vb_read_stop_locked(struct vb_queue *q)
{
	vb_queue_teardown_locked(q);
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

/* --- Queue life cycle --------------------------------------------------- */

struct vb_queue *
vb_queue_new(const struct vb_queue_config *cfg)
{
	const uint32_t all_io = VB_IO_MMAP | VB_IO_USERPTR | VB_IO_READ;
	struct vb_queue *q;
	long page;

	if (!cfg || !cfg->ops || !cfg->ops->queue_setup || !cfg->ops->buf_queue ||
	    cfg->type == 0 || (cfg->io_modes & all_io) == 0 || (cfg->io_modes & ~all_io)) {
		g_debug("vb_queue_new: unusable configuration");
		return NULL;
	}

	q = g_new0(struct vb_queue, 1);
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->idle, NULL);
	q->cfg = *cfg;
	q->ops = cfg->ops;
	q->name = g_strdup(cfg->name ? cfg->name : "vb");
	q->cfg.name = q->name;
	q->budget = vb_budget_ref(cfg->budget);
	q->cfg.budget = NULL;	/* q->budget holds the reference */
	q->cfg.min_buffers = CLAMP_VAL(cfg->min_buffers, 1u, (unsigned int)VB_MAX_BUFFERS);
	q->cfg.min_queued_buffers = MIN(cfg->min_queued_buffers, (unsigned int)VB_MAX_BUFFERS);
	q->cfg.read_buffers = cfg->read_buffers ? cfg->read_buffers : 2;
	q->cfg.read_buffers = MAX(q->cfg.read_buffers, q->cfg.min_buffers);
	q->cfg.read_buffers = MAX(q->cfg.read_buffers, q->cfg.min_queued_buffers);
	q->cfg.read_buffers = MIN(q->cfg.read_buffers, (unsigned int)VB_MAX_BUFFERS);
	page = sysconf(_SC_PAGESIZE);
	q->page_size = page > 0 ? (size_t)page : 4096;
	g_queue_init(&q->queued);
	g_queue_init(&q->done);
	q->waiting_for_buffers = true;
	return q;
}

void
vb_queue_free(struct vb_queue *q)
{
	if (!q)
		return;
	vb_queue_lock(q);
	if (vb_transition_begin_wait_locked(q) == 0) {
		vb_queue_teardown_locked(q);
		vb_transition_end_locked(q);
	}
	vb_queue_unlock(q);
	pthread_cond_destroy(&q->idle);
	pthread_mutex_destroy(&q->lock);
	vb_budget_unref(q->budget);
	g_free(q->name);
	g_free(q);
}

void *
vb_queue_priv(struct vb_queue *q)
{
	return q->cfg.priv;
}

void
vb_queue_release(struct vb_queue *q, const void *owner)
{
	bool wake = false;

	if (!q || !owner)
		return;
	vb_queue_lock(q);
	if (q->owner != owner) {
		vb_queue_unlock(q);
		return;
	}
	/* _vb2_fop_release(): the owner's close stops and frees everything. */
	if (vb_transition_begin_wait_locked(q) == 0) {
		if (q->owner == owner) {
			vb_queue_teardown_locked(q);
			wake = true;
		}
		vb_transition_end_locked(q);
	}
	vb_queue_unlock(q);
	if (wake)
		vb_queue_wake(q);
}

/* --- Helpers for the ioctls ------------------------------------------------ */

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

/* vb2_queue_is_busy(): someone else owns the queue. */
static bool
vb_queue_not_owner(struct vb_queue *q, const void *owner)
{
	return q->owner && q->owner != owner;
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

/*
 * __fill_v4l2_buffer(): the whole struct, zeroed first. bytesused is the
 * producer's while the buffer is queued or active, so it reads 0 then.
 */
static void
vb_fill_v4l2_buffer(struct vb_queue *q, struct vb_buffer *b, struct v4l2_buffer *out)
{
	bool producer_owned = b->state == VB_BUF_QUEUED || b->state == VB_BUF_ACTIVE;

	memset(out, 0, sizeof(*out));
	out->index = b->index;
	out->type = q->cfg.type;
	out->memory = q->memory;
	out->field = V4L2_FIELD_NONE;
	out->bytesused = producer_owned ? 0 : b->bytesused;
	out->sequence = b->sequence;
	out->timestamp.tv_sec = (time_t)(b->timestamp_ns / 1000000000u);
	out->timestamp.tv_usec = (suseconds_t)(b->timestamp_ns % 1000000000u / 1000u);
	out->flags = V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC | V4L2_BUF_FLAG_TSTAMP_SRC_EOF;
	switch (b->state) {
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

/* --- REQBUFS, CREATE_BUFS --------------------------------------------------- */

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
			vb_read_stop_locked(q);
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

/* --- QUERYBUF, PREPARE_BUF, QBUF, DQBUF ------------------------------------- */

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

int
vb_queue_dqbuf(struct vb_queue *q, const void *owner, struct v4l2_buffer *vb)
{
	struct vb_buffer *b;
	int r = 0;

	if (!owner)
		return -EINVAL;
	vb_queue_lock(q);
	if (vb_queue_not_owner(q, owner)) {
		r = -EBUSY;
	} else if (q->mode == VB_MODE_READ) {
		r = -EBUSY;
	} else if (vb->type != q->cfg.type) {
		r = -EINVAL;
	} else if (!q->streaming) {
		/* __vb2_wait_for_done_vb(): "streaming off" */
		r = -EINVAL;
	} else if (q->error) {
		r = -EIO;
	} else if (!q->done.head) {
		r = -EAGAIN;
	}
	if (r < 0)
		goto out_unlock;

	b = q->done.head->data;
	vb_fill_v4l2_buffer(q, b, vb);
	vb_buf_set_state(q, b, VB_BUF_DEQUEUED);
	vb->flags &= ~V4L2_BUF_FLAG_DONE;

out_unlock:
	vb_queue_unlock(q);
	return r;
}

/* --- STREAMON, STREAMOFF ---------------------------------------------------- */

int
vb_queue_streamon(struct vb_queue *q, const void *owner, uint32_t type)
{
	bool wake = false;
	int r = 0;

	if (!owner)
		return -EINVAL;
	vb_queue_lock(q);
	if (vb_queue_not_owner(q, owner) || q->mode == VB_MODE_READ) {
		r = -EBUSY;
		goto out_unlock;
	}
	if (type != q->cfg.type) {
		r = -EINVAL;
		goto out_unlock;
	}
	if (q->streaming)
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
	int r = 0;

	if (!owner)
		return -EINVAL;
	vb_queue_lock(q);
	if (vb_queue_not_owner(q, owner) || q->mode == VB_MODE_READ) {
		r = -EBUSY;
		goto out_unlock;
	}
	if (type != q->cfg.type) {
		r = -EINVAL;
		goto out_unlock;
	}
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

/* --- Small getters and setters --------------------------------------------- */

const void *
vb_queue_owner(struct vb_queue *q)
{
	const void *owner;

	vb_queue_lock(q);
	owner = q->owner;
	vb_queue_unlock(q);
	return owner;
}

bool
vb_queue_is_busy(struct vb_queue *q)
{
	bool busy;

	vb_queue_lock(q);
	busy = q->n_buffers > 0 || q->mode != VB_MODE_IDLE;
	vb_queue_unlock(q);
	return busy;
}

bool
vb_queue_is_streaming(struct vb_queue *q)
{
	bool streaming;

	vb_queue_lock(q);
	streaming = q->streaming;
	vb_queue_unlock(q);
	return streaming;
}

bool
vb_queue_is_reading(struct vb_queue *q)
{
	bool reading;

	vb_queue_lock(q);
	reading = q->mode == VB_MODE_READ;
	vb_queue_unlock(q);
	return reading;
}

void
vb_queue_set_error(struct vb_queue *q)
{
	/* vb2_queue_error() */
	vb_queue_lock(q);
	q->error = true;
	vb_queue_unlock(q);
	vb_queue_wake(q);
}

int
vb_queue_mmap_fd(struct vb_queue *q, uint32_t offset, size_t length,
		 int *ret_fd, unsigned int *ret_index)
{
	struct vb_buffer *b = NULL;
	unsigned int i;
	int r = -EINVAL;

	vb_queue_lock(q);
	/* __find_plane_by_offset() and vb2_mmap() */
	if (q->memory != V4L2_MEMORY_MMAP) {
		g_debug("%s: mmap: queue is not set up for mmap", q->name);
		goto out_unlock;
	}
	if (q->mode == VB_MODE_READ) {
		r = -EBUSY;
		goto out_unlock;
	}
	for (i = 0; i < q->n_buffers; i++) {
		if (q->bufs[i]->offset == offset) {
			b = q->bufs[i];
			break;
		}
	}
	if (!b || (length != b->length && length != b->mem_length)) {
		g_debug("%s: mmap: no buffer at offset %#x with length %zu", q->name, offset,
			length);
		goto out_unlock;
	}
	r = vb_mem_dup_fd(b, ret_fd);
	if (r == 0)
		*ret_index = b->index;
out_unlock:
	vb_queue_unlock(q);
	return r;
}

int
vb_queue_mapped(struct vb_queue *q, unsigned int index, int delta)
{
	int r = -EINVAL;

	vb_queue_lock(q);
	if (index < q->n_buffers) {
		long mapped = (long)q->bufs[index]->mapped + delta;

		if (mapped >= 0 && mapped <= INT32_MAX) {
			q->bufs[index]->mapped = (unsigned int)mapped;
			r = (int)mapped;
		}
	}
	vb_queue_unlock(q);
	return r;
}

unsigned int
vb_queue_generation(struct vb_queue *q)
{
	unsigned int gen;

	vb_queue_lock(q);
	gen = q->generation;
	vb_queue_unlock(q);
	return gen;
}

int
vb_queue_buffer_fd(struct vb_queue *q, unsigned int index, int *ret_fd)
{
	int r = -EINVAL;

	vb_queue_lock(q);
	if (index < q->n_buffers)
		r = vb_mem_dup_fd(q->bufs[index], ret_fd);
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

void
vb_queue_skip_sequence(struct vb_queue *q, unsigned int n)
{
	vb_queue_lock(q);
	q->sequence += n;
	vb_queue_unlock(q);
}

/* --- Producer side ------------------------------------------------------------ */

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

void
vb_buffer_set_bytesused(struct vb_buffer *b, uint32_t bytesused)
{
	b->bytesused = (uint32_t)MIN((size_t)bytesused, b->length);
}

static uint64_t
vb_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
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
		b->sequence = q->sequence++;
		b->timestamp_ns = vb_now_ns();
	}
	vb_buf_set_state(q, b, state);
	vb_count(q, buf_done);
	/* Buffers given back by stop_streaming are dropped: cancel wakes once. */
	wake = state != VB_BUF_QUEUED && q->streaming;
	vb_queue_unlock(q);
	if (wake)
		vb_queue_wake(q);
}

/* --- Debug counters ------------------------------------------------------------ */

#if V4L2CUSE_DEBUG_COUNTERS
/*
 * A copy of q->cnt. The counters are bumped atomically without the lock
 * (vb_count()), so they are read the same way; every member of struct
 * vb_debug_counters is an unsigned int.
 */
static void
vb_counters_copy(struct vb_queue *q, struct vb_debug_counters *ret)
{
	const unsigned int *src = (const unsigned int *)&q->cnt;
	unsigned int *dst = (unsigned int *)ret;
	size_t i;

	G_STATIC_ASSERT(sizeof(*ret) % sizeof(unsigned int) == 0);
	for (i = 0; i < sizeof(*ret) / sizeof(unsigned int); i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}
#endif

int
vb_queue_debug_counters(struct vb_queue *q, struct vb_debug_counters *ret)
{
#if V4L2CUSE_DEBUG_COUNTERS
	vb_counters_copy(q, ret);
	return 0;
#else
	(void)q;
	(void)ret;
	return -EOPNOTSUPP;
#endif
}

int
vb_queue_debug_imbalance(struct vb_queue *q)
{
#if V4L2CUSE_DEBUG_COUNTERS
	struct vb_debug_counters cnt, *c = &cnt;
	unsigned int live = 0, i;
	int n = 0;

	vb_queue_lock(q);
	vb_counters_copy(q, c);
	for (i = 0; i < q->n_buffers; i++)
		if (q->bufs[i]->inited)
			live++;
	if (c->buf_init != c->buf_cleanup + live) {
		g_debug("%s: unbalanced: buf_init %u, buf_cleanup %u, live %u", q->name,
			c->buf_init, c->buf_cleanup, live);
		n++;
	}
	if (c->start_streaming != c->stop_streaming + (q->start_called ? 1u : 0u)) {
		g_debug("%s: unbalanced: start_streaming %u, stop_streaming %u, started %d",
			q->name, c->start_streaming, c->stop_streaming, q->start_called);
		n++;
	}
	if (c->buf_queue != c->buf_done + c->reclaimed + q->n_active) {
		g_debug("%s: unbalanced: buf_queue %u, buf_done %u, reclaimed %u, active %u",
			q->name, c->buf_queue, c->buf_done, c->reclaimed, q->n_active);
		n++;
	}
	if (c->reclaimed) {
		g_debug("%s: unbalanced: %u buffers reclaimed from the driver", q->name,
			c->reclaimed);
		n++;
	}
	vb_queue_unlock(q);
	return n;
#else
	(void)q;
	return 0;
#endif
}
