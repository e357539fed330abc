/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The vb_ queue itself: buffer states (vb_buf_set_state() is their only
 * writer), the lock, transitions (allocate, free, start, stop with the
 * lock dropped), hand-offs to buf_queue and the delivery of wakes, the
 * queue's life cycle and ownership, and the debug counters. The
 * behaviour follows the kernel's videobuf2-core.c and videobuf2-v4l2.c;
 * the comments name the vb2 function whose behaviour a block reproduces.
 * The code is our own: vb2 holds the driver's lock across its ops, we
 * never hold ours (see "Lock discipline" in docs/videobuf.md).
 *
 * Buffer allocation, REQBUFS, CREATE_BUFS and QUERYBUF are in buffers.c;
 * PREPARE_BUF, QBUF, DQBUF, streaming and buffer completion in stream.c;
 * memfds and the preload shim's lookups in mem.c; read emulation and poll
 * in read.c.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>

#include <glib.h>

#include "util/macros.h"
#include "queue-private.h"

/* --- States ----------------------------------------------------------- */

static const char *const vb_buf_state_names[VB_BUF_N_STATES] = {
	[VB_BUF_DEQUEUED] = "dequeued",
	[VB_BUF_PREPARED] = "prepared",
	[VB_BUF_QUEUED] = "queued",
	[VB_BUF_ACTIVE] = "active",
	[VB_BUF_DONE] = "done",
	[VB_BUF_ERROR] = "error",
	[VB_BUF_PREPARING] = "preparing",
};

/* @names[@i] of a table of @n, "invalid" past its end. */
static const char *
vb_name_of(const char *const *names, size_t n, unsigned int i)
{
	return i < n ? names[i] : "invalid";
}

const char *
vb_buf_state_name(enum vb_buf_state state)
{
	return vb_name_of(vb_buf_state_names, G_N_ELEMENTS(vb_buf_state_names), state);
}

static const char *const vb_io_mode_names[] = {
	[VB_MODE_IDLE] = "idle",
	[VB_MODE_STREAMING] = "streaming",
	[VB_MODE_READ] = "read",
};

const char *
vb_io_mode_name(enum vb_io_mode mode)
{
	return vb_name_of(vb_io_mode_names, G_N_ELEMENTS(vb_io_mode_names), mode);
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
	/* a QBUF the client was told had succeeded, refused (vb_queue_return_refused) */
	[VB_BUF_DEQUEUED][VB_BUF_ERROR] = true,
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
	if (was && !now) {
		g_queue_unlink(&q->done, &b->done_link);
	} else if (!was && now) {
		g_queue_push_tail_link(&q->done, &b->done_link);
		b->done_serial = ++q->done_serial;
	}

	if (old == VB_BUF_ACTIVE)
		q->n_active--;
	if (state == VB_BUF_ACTIVE)
		q->n_active++;
	b->state = state;
	return 0;
}

/* --- Locking, transitions, hand-offs ---------------------------------- */

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

/* Let buf_prepare/buf_queue calls running without the lock finish. */
void
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

/* --- Queue life cycle and ownership ----------------------------------- */

/*
 * Cancel, free, drop the owner: REQBUFS(0), release, free, and the end of
 * read emulation. Locked, inside a transition.
 */
void
vb_queue_teardown_locked(struct vb_queue *q)
{
	vb_queue_cancel_locked(q);
	vb_queue_free_buffers_locked(q);
	q->owner = NULL;
	q->mode = VB_MODE_IDLE;
}

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

uint32_t
vb_queue_type(struct vb_queue *q)
{
	return q->cfg.type;
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

/* --- Debug counters --------------------------------------------------- */

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
