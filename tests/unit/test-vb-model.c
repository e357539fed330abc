/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * videobuf against a reference model: random sequences of ioctls from two
 * owners, read()/poll(), a producer completing buffers, error injection,
 * and after every step the return value, every buffer's state and
 * QUERYBUF (sequence numbers included), the owner, the streaming/reading
 * flags and the driver's buffer list are compared with a deliberately simple
 * model of the documented semantics (docs/videobuf.md).
 *
 * VB_MODEL_SEED=N runs only seed N; VB_MODEL_STEPS=N changes the number of
 * steps per seed (default 100000). A failure prints the seed, the step and
 * the last operations.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "videobuf.h"
#include "vb-fake-driver.h"
#include "vb-ref-model.h"

static int owner_storage[2];
static const void *const owners[2] = { &owner_storage[0], &owner_storage[1] };

struct run {
	guint32 seed;
	unsigned int step;
	GRand *rand;
	struct fake_drv *d;
	struct model m;
	char log[24][160];
	unsigned int nlog;
	/* outcomes, to see that the interesting paths are reached */
	unsigned int dq_ok, dq_eagain, dq_eio, dq_einval, dq_ebusy;
	unsigned int rd_data, rd_eagain;
};

static G_GNUC_PRINTF(2, 3) void
run_log(struct run *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->log[r->nlog % G_N_ELEMENTS(r->log)], sizeof(r->log[0]), fmt, ap);
	va_end(ap);
	r->nlog++;
}

static G_GNUC_PRINTF(2, 3) G_GNUC_NORETURN void
run_fail(struct run *r, const char *fmt, ...)
{
	unsigned int i, first = r->nlog > G_N_ELEMENTS(r->log) ? r->nlog - G_N_ELEMENTS(r->log) : 0;
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	g_printerr("model mismatch: seed %u, step %u: %s\n", r->seed, r->step, msg);
	g_printerr("last operations (rerun with VB_MODEL_SEED=%u):\n", r->seed);
	for (i = first; i < r->nlog; i++)
		g_printerr("  %s\n", r->log[i % G_N_ELEMENTS(r->log)]);
	g_error("seed %u step %u: %s", r->seed, r->step, msg);
}

#define expect_int(r, what, got, want)							\
	do {										\
		long _g = (long)(got), _w = (long)(want);				\
		if (_g != _w)								\
			run_fail(r, "%s: got %ld, model says %ld", what, _g, _w);	\
	} while (0)

/* --- Comparison ------------------------------------------------------------- */

static void
check_querybuf(struct run *r, unsigned int idx)
{
	struct model *m = &r->m;
	struct v4l2_buffer b = { .index = idx, .type = CAP };
	bool producer;

	if (idx >= m->n) {
		expect_int(r, "querybuf past the end", vb_queue_querybuf(r->d->q, &b), -EINVAL);
		return;
	}
	expect_int(r, "querybuf", vb_queue_querybuf(r->d->q, &b), 0);
	producer = m->b[idx].st == VB_BUF_QUEUED || m->b[idx].st == VB_BUF_ACTIVE;
	expect_int(r, "querybuf flags", b.flags, m_flags(m, idx));
	expect_int(r, "querybuf memory", b.memory, m->memory);
	expect_int(r, "querybuf sequence", b.sequence, m->b[idx].seqno);
	expect_int(r, "querybuf bytesused", b.bytesused, producer ? 0 : m->b[idx].bytes);
	if (m->memory == UPTR) {
		expect_int(r, "querybuf userptr", b.m.userptr, m->b[idx].uptr);
		expect_int(r, "querybuf length", b.length,
			   m->b[idx].uptr ? m->b[idx].ulen : m->b[idx].size);
	} else {
		expect_int(r, "querybuf length", b.length, m->b[idx].size);
	}
}

static void
check_all(struct run *r)
{
	struct model *m = &r->m;
	struct fake_drv *d = r->d;
	const void *owner = m->owner == NONE ? NULL : owners[m->owner];
	unsigned int i;

	expect_int(r, "owner", vb_queue_owner(d->q) == owner, 1);
	expect_int(r, "streaming", vb_queue_is_streaming(d->q), m->streaming);
	expect_int(r, "reading", vb_queue_is_reading(d->q), m->mode == M_READ);
	expect_int(r, "busy", vb_queue_is_busy(d->q), m->mode != M_IDLE);
	for (i = 0; i < VB_MAX_BUFFERS; i++) {
		int want = i < m->n ? (int)m->b[i].st : -EINVAL;

		if (vb_queue_buffer_state(d->q, i) != want)
			run_fail(r, "buffer %u is %s, model says %s", i,
				 vb_buf_state_name(vb_queue_buffer_state(d->q, i)),
				 want < 0 ? "absent" : vb_buf_state_name(want));
	}
	expect_int(r, "driver buffers", d->n_active, m->nf);
	for (i = 0; i < m->nf; i++)
		expect_int(r, "driver buffer order", vb_buffer_index(d->active[i]), m->fifo[i]);
	expect_int(r, "imbalance", vb_queue_debug_imbalance(d->q), 0);
	check_querybuf(r, g_rand_int_range(r->rand, 0, VB_MAX_BUFFERS));
}

/* --- Operations: each runs the real call and the model, then compares. ----- */

static uint32_t
pick_memory(struct run *r)
{
	int x = g_rand_int_range(r->rand, 0, 20);

	return x < 11 ? MMAP : x < 19 ? UPTR : V4L2_MEMORY_DMABUF;
}

static void
op_reqbufs(struct run *r, int who)
{
	struct model *m = &r->m;
	uint32_t memory = pick_memory(r);
	unsigned int count = g_rand_int_range(r->rand, 0, 4) == 0 ? 0
			     : (unsigned int)g_rand_int_range(r->rand, 1, 40);
	unsigned int got = 0;
	int want, res;
	bool any_mapped = false;
	unsigned int i;

	res = fake_reqbufs(r->d, owners[who], memory, count, &got);
	run_log(r, "reqbufs(%c, mem %u, count %u) = %d", 'A' + who, memory, count, res);
	for (i = 0; i < m->n; i++)
		any_mapped |= m->b[i].mapped > 0;

	if (memory != MMAP && memory != UPTR) {
		want = -EINVAL;
	} else if (m->mode == M_READ) {
		if (count == 0 && m->owner == who) {
			m_teardown(m);
			want = 0;
		} else {
			want = -EBUSY;
		}
	} else if (m_busy(m, who) || m->streaming) {
		want = -EBUSY;
	} else if (m->n && !m->orphans && any_mapped) {
		want = -EBUSY;
	} else {
		if (m->n || count == 0)
			m_teardown(m);
		want = 0;
		if (count) {
			unsigned int num = CLAMP(count, MIN_BUFFERS, VB_MAX_BUFFERS);

			m_alloc(m, num, DRV_SIZE);
			m->memory = memory;
			m->owner = who;
			m->mode = M_STREAMING;
			m->waiting = true;
			expect_int(r, "reqbufs count", got, num);
		}
	}
	expect_int(r, "reqbufs", res, want);
}

static void
op_create_bufs(struct run *r, int who)
{
	static const uint32_t sizes[] = { 0, DRV_SIZE - 1, DRV_SIZE, 2 * DRV_SIZE };
	struct model *m = &r->m;
	struct v4l2_create_buffers cb = {
		.count = (uint32_t)g_rand_int_range(r->rand, 0, 9),
		.memory = pick_memory(r),
	};
	int want, res;

	cb.format.type = CAP;
	cb.format.fmt.pix.sizeimage = sizes[g_rand_int_range(r->rand, 0, 4)];
	res = vb_queue_create_bufs(r->d->q, owners[who], &cb);
	run_log(r, "create_bufs(%c, mem %u, count %u, size %u) = %d", 'A' + who, cb.memory,
		cb.count, cb.format.fmt.pix.sizeimage, res);

	if (cb.memory != MMAP && cb.memory != UPTR)
		want = -EINVAL;
	else if (cb.count == 0)
		want = 0;
	else if (m->mode == M_READ || m_busy(m, who))
		want = -EBUSY;
	else if (m->n == VB_MAX_BUFFERS)
		want = -ENOBUFS;
	else if (m->n && cb.memory != m->memory)
		want = -EINVAL;
	else if (cb.format.fmt.pix.sizeimage < DRV_SIZE)
		want = -EINVAL;
	else {
		unsigned int first = m->n, num = MIN(cb.count, VB_MAX_BUFFERS - m->n);

		if (m->n == 0) {
			m->memory = cb.memory;
			m->waiting = true;
		}
		m_alloc(m, num, cb.format.fmt.pix.sizeimage);
		m->owner = who;
		m->mode = M_STREAMING;
		want = 0;
		expect_int(r, "create_bufs index", cb.index, first);
		expect_int(r, "create_bufs count", cb.count, num);
	}
	expect_int(r, "create_bufs", res, want);
}

/* Mostly a buffer the client holds, sometimes anything (or past the end). */
static uint32_t
pick_index(struct run *r, bool prepare)
{
	struct model *m = &r->m;
	unsigned int i, cand[VB_MAX_BUFFERS], n = 0;

	for (i = 0; i < m->n; i++)
		if (m->b[i].st == VB_BUF_DEQUEUED || (!prepare && m->b[i].st == VB_BUF_PREPARED))
			cand[n++] = i;
	if (n && g_rand_int_range(r->rand, 0, 4))
		return cand[g_rand_int_range(r->rand, 0, (gint32)n)];
	return (uint32_t)g_rand_int_range(r->rand, 0, (gint32)m->n + 2);
}

/* QBUF and PREPARE_BUF share their checks. */
static void
op_qbuf(struct run *r, int who, bool prepare)
{
	struct model *m = &r->m;
	struct v4l2_buffer b = {
		.index = pick_index(r, prepare),
		.type = g_rand_int_range(r->rand, 0, 30) ? CAP : V4L2_BUF_TYPE_VIDEO_OUTPUT,
		.memory = g_rand_int_range(r->rand, 0, 20) ? m->memory : pick_memory(r),
	};
	enum vb_buf_state orig = VB_BUF_DEQUEUED;
	int idx = (int)b.index, want, res;

	if (g_rand_int_range(r->rand, 0, 30) == 0) {
		r->d->fail_prepare = -ENOEXEC;
		m->fail_prepare = -ENOEXEC;
	}
	if (b.memory == UPTR) {
		int x = g_rand_int_range(r->rand, 0, 10);

		b.m.userptr = x == 0 ? 0 : 0x10000000ul + b.index * 0x100000ul;
		b.length = x == 1 ? DRV_SIZE - 1
			 : DRV_SIZE * (1 + (uint32_t)g_rand_int_range(r->rand, 0, 3));
	}
	if (!prepare && g_rand_int_range(r->rand, 0, 30) == 0) {
		r->d->fail_start = -EPERM;
		m->fail_start = -EPERM;
	}
	res = prepare ? vb_queue_prepare_buf(r->d->q, owners[who], &b)
		      : vb_queue_qbuf(r->d->q, owners[who], &b);
	run_log(r, "%s(%c, %d, type %u, mem %u, uptr %#lx/%u) = %d", prepare ? "prepare" : "qbuf",
		'A' + who, idx, b.type, b.memory, b.m.userptr, b.length, res);

	if (m_busy(m, who) || m->mode == M_READ) {
		want = -EBUSY;
	} else if (b.type != CAP || (unsigned int)idx >= m->n || b.memory != m->memory) {
		want = -EINVAL;
	} else if (m->error) {
		want = -EIO;
	} else if ((orig = m->b[idx].st) != VB_BUF_DEQUEUED &&
		   (prepare || orig != VB_BUF_PREPARED)) {
		want = -EINVAL;
	} else if (orig == VB_BUF_DEQUEUED && m->memory == UPTR &&
		   (b.m.userptr == 0 || b.length < m->b[idx].size)) {
		want = -EINVAL;
	} else if (orig == VB_BUF_DEQUEUED && m->fail_prepare) {
		want = m->fail_prepare;
		m->fail_prepare = 0;
	} else {
		want = 0;
		if (orig == VB_BUF_DEQUEUED && m->memory == UPTR) {
			m->b[idx].uptr = b.m.userptr;
			m->b[idx].ulen = b.length;
		}
		if (prepare) {
			m_set(m, idx, VB_BUF_PREPARED);
		} else {
			m_set(m, idx, VB_BUF_QUEUED);
			m->b[idx].bytes = 0;
			m->waiting = false;
			if (m->started)
				m_handoff(m, idx);
			if (m->streaming && !m->started && m->nq >= m->min_queued) {
				want = m_start(m);
				if (want < 0) {
					m->streaming = false;
					m_set(m, idx, orig == VB_BUF_PREPARED ? VB_BUF_PREPARED
									      : VB_BUF_DEQUEUED);
				}
			}
		}
		if (want == 0)
			expect_int(r, "qbuf flags", b.flags, m_flags(m, idx));
	}
	expect_int(r, prepare ? "prepare_buf" : "qbuf", res, want);
	/* A knob that was not consumed stays armed in both. */
	expect_int(r, "fail_prepare knob", r->d->fail_prepare, m->fail_prepare);
	expect_int(r, "fail_start knob", r->d->fail_start, m->fail_start);
}

static void
op_dqbuf(struct run *r, int who)
{
	struct model *m = &r->m;
	struct v4l2_buffer b = { 0 };
	int want, res, idx = NONE;

	res = fake_dqbuf(r->d, owners[who], &b);
	run_log(r, "dqbuf(%c) = %d (index %u)", 'A' + who, res, b.index);
	if (m_busy(m, who) || m->mode == M_READ)
		want = -EBUSY;
	else if (!m->streaming)
		want = -EINVAL;
	else if (m->error)
		want = -EIO;
	else if (m->nd == 0)
		want = -EAGAIN;
	else
		want = 0;
	expect_int(r, "dqbuf", res, want);
	r->dq_eagain += want == -EAGAIN;
	r->dq_eio += want == -EIO;
	r->dq_einval += want == -EINVAL;
	r->dq_ebusy += want == -EBUSY;
	if (want < 0)
		return;
	r->dq_ok++;
	idx = m->done[0];
	expect_int(r, "dqbuf index", b.index, idx);
	expect_int(r, "dqbuf flags", b.flags, m_flags(m, idx) & ~V4L2_BUF_FLAG_DONE);
	expect_int(r, "dqbuf sequence", b.sequence, m->b[idx].seqno);
	expect_int(r, "dqbuf bytesused", b.bytesused, m->b[idx].bytes);
	m_set(m, idx, VB_BUF_DEQUEUED);
}

/*
 * What STREAMON and STREAMOFF check first (vb_check_stream_locked()):
 * another owner's queue or read() mode is EBUSY, a wrong type EINVAL.
 */
static int
m_stream_check(struct model *m, int who, uint32_t type)
{
	if (m_busy(m, who) || m->mode == M_READ)
		return -EBUSY;
	return type == CAP ? 0 : -EINVAL;
}

static void
op_streamon(struct run *r, int who)
{
	struct model *m = &r->m;
	uint32_t type = g_rand_int_range(r->rand, 0, 20) ? CAP : V4L2_BUF_TYPE_VIDEO_OUTPUT;
	int want, res;

	if (g_rand_int_range(r->rand, 0, 20) == 0) {
		r->d->fail_start = -EIO;
		m->fail_start = -EIO;
	}
	res = vb_queue_streamon(r->d->q, owners[who], type);
	run_log(r, "streamon(%c, type %u) = %d", 'A' + who, type, res);
	want = m_stream_check(m, who, type);
	if (want == 0 && !m->streaming) {
		if (m->n == 0 || m->n < m->min_queued) {
			want = -EINVAL;
		} else {
			m->streaming = true;
			if (m->nq >= m->min_queued) {
				want = m_start(m);
				if (want < 0)
					m->streaming = false;
			}
		}
	}
	expect_int(r, "streamon", res, want);
	expect_int(r, "fail_start knob", r->d->fail_start, m->fail_start);
}

static void
op_streamoff(struct run *r, int who)
{
	struct model *m = &r->m;
	uint32_t type = g_rand_int_range(r->rand, 0, 20) ? CAP : V4L2_BUF_TYPE_VIDEO_OUTPUT;
	int want, res;

	res = vb_queue_streamoff(r->d->q, owners[who], type);
	run_log(r, "streamoff(%c, type %u) = %d", 'A' + who, type, res);
	want = m_stream_check(m, who, type);
	if (want == 0)
		m_cancel(m);
	expect_int(r, "streamoff", res, want);
}

static void
op_produce(struct run *r)
{
	struct model *m = &r->m;
	int kind = g_rand_int_range(r->rand, 0, 20), idx;
	struct vb_buffer *b;

	if (m->nf == 0) {
		expect_int(r, "driver idle", r->d->n_active, 0);
		return;
	}
	idx = m->fifo[0];
	memmove(&m->fifo[0], &m->fifo[1], --m->nf * sizeof(m->fifo[0]));
	b = fake_pop(r->d);
	expect_int(r, "produce index", vb_buffer_index(b), idx);
	if (kind < 15) {
		fake_fill(b, DRV_SIZE);
		vb_buffer_done(b, VB_BUF_DONE);
		m->b[idx].bytes = DRV_SIZE;
	} else if (kind < 19) {
		vb_buffer_done(b, VB_BUF_ERROR);
	} else {
		vb_buffer_set_bytesused(b, 0);
		vb_buffer_done(b, VB_BUF_DONE);
		m->b[idx].bytes = 0;
	}
	run_log(r, "produce(%d, %s)", idx, kind < 15 ? "done" : kind < 19 ? "error" : "empty");
	m->b[idx].seqno = m->seq++;
	m_set(m, idx, kind < 15 || kind == 19 ? VB_BUF_DONE : VB_BUF_ERROR);
	/* The sequence number the queue stamped, at once. */
	check_querybuf(r, (unsigned int)idx);
}

static void
op_release(struct run *r, int who)
{
	struct model *m = &r->m;

	vb_queue_release(r->d->q, owners[who]);
	run_log(r, "release(%c)", 'A' + who);
	if (m->owner == who)
		m_teardown(m);
}

static void
op_poll(struct run *r, int who)
{
	static const unsigned int ev[] = { POLLIN, POLLRDNORM, POLLPRI, POLLIN | POLLPRI, POLLOUT };
	struct model *m = &r->m;
	unsigned int events = ev[g_rand_int_range(r->rand, 0, G_N_ELEMENTS(ev))];
	unsigned int res, want = 0;

	if (g_rand_int_range(r->rand, 0, 20) == 0) {
		r->d->fail_start = -EIO;
		m->fail_start = -EIO;
	}
	res = vb_queue_poll(r->d->q, owners[who], events);
	run_log(r, "poll(%c, %#x) = %#x", 'A' + who, events, res);
	if (!(events & (POLLIN | POLLRDNORM)))
		goto out;
	if (m->mode == M_IDLE && m->n == 0 && m->owner == NONE && m_read_start(m, who) < 0) {
		want = POLLERR;
		goto out;
	}
	if (!m->streaming || m->error || m->waiting)
		want = POLLERR;
	else if (m->nd)
		want = POLLIN | POLLRDNORM;
	else if (m->mode == M_READ && m->owner == who && m->cur != NONE && m->pos < m->rsize)
		want = POLLIN | POLLRDNORM;
out:
	expect_int(r, "poll", res, want);
	expect_int(r, "fail_start knob", r->d->fail_start, m->fail_start);
}

static void
op_read(struct run *r, int who)
{
	static const size_t counts[] = { 0, 1, 100, DRV_SIZE - 1, DRV_SIZE, 131072 };
	struct model *m = &r->m;
	size_t count = counts[g_rand_int_range(r->rand, 0, G_N_ELEMENTS(counts))];
	bool new_call = g_rand_int_range(r->rand, 0, 4) != 0;
	const void *data = NULL;
	ssize_t res, want;

	if (g_rand_int_range(r->rand, 0, 20) == 0) {
		r->d->fail_start = -EIO;
		m->fail_start = -EIO;
	}
	res = vb_queue_read(r->d->q, owners[who], count, new_call, &data);
	run_log(r, "read(%c, %zu, %s) = %zd", 'A' + who, count, new_call ? "new" : "cont", res);

	if (m_busy(m, who) || m->mode == M_STREAMING) {
		want = -EBUSY;
		goto out;
	}
	if (m->mode == M_IDLE) {
		if (!new_call) {
			want = 0;
			goto out;
		}
		want = m_read_start(m, who);
		if (want < 0)
			goto out;
	}
	if (m->cur != NONE && m->pos >= m->rsize) {
		m_read_requeue(m, m->cur);
		m->cur = NONE;
	}
	if (m->cur == NONE) {
		if (!new_call) {
			want = 0;
			goto out;
		}
		for (;;) {
			int idx;

			if (!m->streaming) {
				want = -EINVAL;
				goto out;
			}
			if (m->error) {
				want = -EIO;
				goto out;
			}
			if (m->nd == 0) {
				want = -EAGAIN;
				goto out;
			}
			idx = m->done[0];
			if (m->b[idx].st == VB_BUF_DONE && m->b[idx].bytes > 0) {
				m_set(m, idx, VB_BUF_DEQUEUED);
				m->cur = idx;
				m->pos = 0;
				m->rsize = m->b[idx].bytes;
				break;
			}
			m_set(m, idx, VB_BUF_DEQUEUED);
			m_read_requeue(m, idx);
		}
	}
	want = (ssize_t)MIN(count, m->rsize - m->pos);
	expect_int(r, "read", res, want);
	if (want > 0) {
		const uint8_t *p = data;

		expect_int(r, "read data", p[0], (uint8_t)(m->cur * 31 + m->pos));
		expect_int(r, "read data end", p[want - 1],
			   (uint8_t)(m->cur * 31 + m->pos + want - 1));
	}
	m->pos += (size_t)want;
	r->rd_data += want > 0;
out:
	r->rd_eagain += want == -EAGAIN;
	expect_int(r, "read", res, want);
	expect_int(r, "fail_start knob", r->d->fail_start, m->fail_start);
}

static void
op_mapped(struct run *r)
{
	struct model *m = &r->m;
	unsigned int idx = (unsigned int)g_rand_int_range(r->rand, 0, (gint32)m->n + 1);
	int delta = g_rand_boolean(r->rand) ? 1 : -1, res, want;

	res = vb_queue_mapped(r->d->q, idx, delta);
	run_log(r, "mapped(%u, %+d) = %d", idx, delta, res);
	if (idx >= m->n || m->b[idx].mapped + delta < 0) {
		want = -EINVAL;
	} else {
		m->b[idx].mapped += delta;
		want = m->b[idx].mapped;
	}
	expect_int(r, "mapped", res, want);
}

static void
op_error(struct run *r)
{
	vb_queue_set_error(r->d->q);
	run_log(r, "set_error");
	r->m.error = true;
}

/* The ops the run draws from, as one signature (@who: the handle that acts). */
static void
op_queue(struct run *r, int who)
{
	op_qbuf(r, who, false);
}

static void
op_prepare(struct run *r, int who)
{
	op_qbuf(r, who, true);
}

static void
op_produce_any(struct run *r, int who)
{
	op_produce(r);
}

static void
op_error_any(struct run *r, int who)
{
	op_error(r);
}

static void
op_mapped_any(struct run *r, int who)
{
	op_mapped(r);
}

static void
op_querybuf(struct run *r, int who)
{
	check_querybuf(r, (unsigned int)g_rand_int_range(r->rand, 0, 34));
}

/*
 * Weights: a step draws a number below 1000 and runs the first op whose
 * end is above it. The producer and QBUF/DQBUF dominate, like real use.
 */
static const struct model_op {
	const char *name;
	unsigned int end;
	void (*run)(struct run *r, int who);
} model_ops[] = {
	{ "reqbufs", 25, op_reqbufs },
	{ "create", 40, op_create_bufs },
	{ "qbuf", 240, op_queue },
	{ "prepare", 270, op_prepare },
	{ "dqbuf", 440, op_dqbuf },
	{ "streamon", 480, op_streamon },
	{ "streamoff", 492, op_streamoff },
	{ "produce", 712, op_produce_any },
	{ "error", 715, op_error_any },
	{ "release", 722, op_release },
	{ "poll", 780, op_poll },
	{ "read", 900, op_read },
	{ "mapped", 930, op_mapped_any },
	{ "querybuf", 1000, op_querybuf },
};

/* --- The run ----------------------------------------------------------------- */

static void
run_seed(guint32 seed, unsigned int steps)
{
	struct vb_queue_config cfg = fake_config();
	struct run *r = g_new0(struct run, 1);
	unsigned int counts[G_N_ELEMENTS(model_ops)] = { 0 };
	GString *summary;
	size_t k;

	r->seed = seed;
	r->rand = g_rand_new_with_seed(seed);
	r->m.orphans = seed & 1;
	r->m.min_queued = seed % 4;
	r->m.owner = NONE;
	r->m.cur = NONE;
	r->m.waiting = true;
	cfg.allow_orphans = r->m.orphans;
	cfg.min_buffers = MIN_BUFFERS;
	cfg.min_queued_buffers = r->m.min_queued;
	cfg.read_buffers = READ_BUFFERS;
	r->d = fake_new_with(&cfg, DRV_SIZE);

	for (r->step = 0; r->step < steps; r->step++) {
		/* Mostly the owner acts (a real client), sometimes the other one. */
		int who = r->m.owner != NONE && g_rand_int_range(r->rand, 0, 10) ? r->m.owner
			  : g_rand_int_range(r->rand, 0, 2);
		int op = g_rand_int_range(r->rand, 0, 1000);

		/* Steer a little by mode, so each mode sees its own traffic. */
		if (r->m.mode == M_READ && op >= 40 && op < 492 &&
		    g_rand_int_range(r->rand, 0, 10) < 7)
			op = 780 + g_rand_int_range(r->rand, 0, 120);	/* read */
		else if (r->m.mode == M_STREAMING && op >= 780 && op < 900 &&
			 g_rand_int_range(r->rand, 0, 10) < 8)
			op = 270 + g_rand_int_range(r->rand, 0, 170);	/* dqbuf */
		else if (r->m.mode == M_STREAMING && !r->m.streaming && op >= 270 && op < 440 &&
			 g_rand_int_range(r->rand, 0, 10) < 4)
			op = 440;					/* streamon */
		else if (r->m.mode == M_IDLE && op >= 240 && op < 480 &&
			 g_rand_int_range(r->rand, 0, 10) < 3)
			op = g_rand_int_range(r->rand, 0, 25);		/* reqbufs */

		for (k = 0; op >= (int)model_ops[k].end; k++)
			;
		model_ops[k].run(r, who);
		counts[k]++;
		check_all(r);
	}
	summary = g_string_new(NULL);
	for (k = 0; k < G_N_ELEMENTS(model_ops); k++)
		g_string_append_printf(summary, "%s%s %u", k ? ", " : "", model_ops[k].name,
				       counts[k]);
	g_test_message("seed %u: %u steps (%s)", seed, steps, summary->str);
	g_string_free(summary, TRUE);
	g_test_message("seed %u: outcomes: dqbuf ok %u, EAGAIN %u, EIO %u, EINVAL %u, "
		       "EBUSY %u; read data %u, EAGAIN %u; start_streaming %u, stop_streaming %u",
		       seed, r->dq_ok, r->dq_eagain, r->dq_eio, r->dq_einval,
		       r->dq_ebusy, r->rd_data, r->rd_eagain, r->d->n_start, r->d->n_stop);
	fake_free(r->d);
	g_rand_free(r->rand);
	g_free(r);
}

static unsigned int
env_uint(const char *name, unsigned int def)
{
	const char *v = g_getenv(name);

	return v && *v ? (unsigned int)g_ascii_strtoull(v, NULL, 0) : def;
}

static void
test_model(gconstpointer data)
{
	run_seed(GPOINTER_TO_UINT(data), env_uint("VB_MODEL_STEPS", 100000));
}

int
main(int argc, char **argv)
{
	static const guint32 seeds[] = { 1, 2, 20240601, 3735928559u };
	size_t i;

	g_test_init(&argc, &argv, NULL);
	if (g_getenv("VB_MODEL_SEED")) {
		guint32 seed = env_uint("VB_MODEL_SEED", 0);
		char *path = g_strdup_printf("/vb-model/seed-%u", seed);

		g_test_add_data_func(path, GUINT_TO_POINTER(seed), test_model);
		g_free(path);
	} else {
		for (i = 0; i < G_N_ELEMENTS(seeds); i++) {
			char *path = g_strdup_printf("/vb-model/seed-%u", seeds[i]);

			g_test_add_data_func(path, GUINT_TO_POINTER(seeds[i]), test_model);
			g_free(path);
		}
	}
	return g_test_run();
}
