/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * videobuf buffer states: every (from, to) pair through vb_buf_set_state(),
 * the only writer. A buffer is driven into each state with the public API,
 * then every transition is tried on it: the legal ones (the table in
 * docs/videobuf.md, repeated here) must succeed and keep the queued/done
 * lists in step, the others must be refused with -EINVAL and change
 * nothing.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include <glib.h>

#include "queue-private.h"
#include "vb-fake-driver.h"
#include "test-main.h"

/* docs/videobuf.md, "Legal transitions". */
static bool
expected_legal(enum vb_buf_state from, enum vb_buf_state to)
{
	static const struct { enum vb_buf_state from, to; } legal[] = {
		{ VB_BUF_DEQUEUED, VB_BUF_PREPARING },
		{ VB_BUF_DEQUEUED, VB_BUF_PREPARED },
		{ VB_BUF_DEQUEUED, VB_BUF_QUEUED },
		{ VB_BUF_DEQUEUED, VB_BUF_ERROR },
		{ VB_BUF_PREPARING, VB_BUF_DEQUEUED },
		{ VB_BUF_PREPARING, VB_BUF_PREPARED },
		{ VB_BUF_PREPARING, VB_BUF_QUEUED },
		{ VB_BUF_PREPARED, VB_BUF_QUEUED },
		{ VB_BUF_PREPARED, VB_BUF_DEQUEUED },
		{ VB_BUF_QUEUED, VB_BUF_ACTIVE },
		{ VB_BUF_QUEUED, VB_BUF_DEQUEUED },
		{ VB_BUF_QUEUED, VB_BUF_PREPARED },
		{ VB_BUF_ACTIVE, VB_BUF_DONE },
		{ VB_BUF_ACTIVE, VB_BUF_ERROR },
		{ VB_BUF_ACTIVE, VB_BUF_QUEUED },
		{ VB_BUF_DONE, VB_BUF_DEQUEUED },
		{ VB_BUF_ERROR, VB_BUF_DEQUEUED },
	};
	size_t i;

	for (i = 0; i < G_N_ELEMENTS(legal); i++)
		if (legal[i].from == from && legal[i].to == to)
			return true;
	return false;
}

static bool
on_list(GQueue *list, struct vb_buffer *b, GList *link)
{
	GList *l;

	for (l = list->head; l; l = l->next)
		if (l == link && l->data == b)
			return true;
	return false;
}

static void
check_lists(struct vb_queue *q)
{
	unsigned int i, queued = 0, done = 0, active = 0;

	for (i = 0; i < q->n_buffers; i++) {
		struct vb_buffer *b = q->bufs[i];
		enum vb_buf_state s = b->state;
		bool want_queued = s == VB_BUF_QUEUED || s == VB_BUF_ACTIVE ||
				   s == VB_BUF_DONE || s == VB_BUF_ERROR;
		bool want_done = s == VB_BUF_DONE || s == VB_BUF_ERROR;

		g_assert_cmpint(on_list(&q->queued, b, &b->queued_link), ==, want_queued);
		g_assert_cmpint(on_list(&q->done, b, &b->done_link), ==, want_done);
		queued += want_queued;
		done += want_done;
		active += s == VB_BUF_ACTIVE;
	}
	g_assert_cmpuint(q->queued.length, ==, queued);
	g_assert_cmpuint(q->done.length, ==, done);
	g_assert_cmpuint(q->n_active, ==, active);
}

/* Try every target state on buffer @index, currently in state @from. */
static void
check_all_targets(struct fake_drv *d, unsigned int index, enum vb_buf_state from)
{
	struct vb_queue *q = d->q;
	int to;

	vb_queue_lock(q);
	g_assert_cmpint(q->bufs[index]->state, ==, from);
	for (to = 0; to < VB_BUF_N_STATES; to++) {
		struct vb_buffer *b = q->bufs[index];
		int r;

		if (expected_legal(from, to))
			continue;
		r = vb_buf_set_state(q, b, to);
		if (r != -EINVAL)
			g_error("%s -> %s: %d, expected -EINVAL", vb_buf_state_name(from),
				vb_buf_state_name(to), r);
		g_assert_cmpint(b->state, ==, from);
		check_lists(q);
	}
	/* Out-of-range targets too. */
	g_assert_cmpint(vb_buf_set_state(q, q->bufs[index], VB_BUF_N_STATES), ==, -EINVAL);
	g_assert_cmpint(vb_buf_set_state(q, q->bufs[index], (enum vb_buf_state)-1), ==,
			-EINVAL);
	vb_queue_unlock(q);
}

/* Legal ones: one fresh queue per transition, the lists must follow. */
static void
check_legal_target(struct fake_drv *d, unsigned int index, enum vb_buf_state from,
		   enum vb_buf_state to)
{
	struct vb_queue *q = d->q;

	vb_queue_lock(q);
	g_assert_cmpint(q->bufs[index]->state, ==, from);
	g_assert_cmpint(vb_buf_set_state(q, q->bufs[index], to), ==, 0);
	g_assert_cmpint(q->bufs[index]->state, ==, to);
	check_lists(q);
	vb_queue_unlock(q);
}

struct hook {
	enum vb_buf_state to;	/* VB_BUF_N_STATES: check every illegal target */
	bool ran;
};

/* buf_prepare runs with the buffer in PREPARING: check from there. */
static int
hook_prepare(struct vb_buffer *b)
{
	struct fake_drv *d = vb_queue_priv(vb_buffer_queue(b));
	struct hook *h = d->user;

	h->ran = true;
	if (h->to == VB_BUF_N_STATES)
		check_all_targets(d, vb_buffer_index(b), VB_BUF_PREPARING);
	else
		check_legal_target(d, vb_buffer_index(b), VB_BUF_PREPARING, h->to);
	/* Fail, so the queue puts the buffer back (if still PREPARING). */
	return -EAGAIN;
}

static const struct vb_ops hook_ops = {
	.queue_setup = fake_queue_setup,
	.buf_prepare = hook_prepare,
	.buf_queue = fake_buf_queue,
	.start_streaming = fake_start_streaming,
	.stop_streaming = fake_stop_streaming,
};

/* A queue with buffer 0 in @state (PREPARING is reached through the hook). */
static struct fake_drv *
queue_in_state(enum vb_buf_state state)
{
	struct fake_drv *d = fake_new(4096);

	g_assert_cmpint(fake_reqbufs(d, A, MMAP, 2, NULL), ==, 0);
	switch (state) {
	case VB_BUF_DEQUEUED:
		break;
	case VB_BUF_PREPARED:
		g_assert_cmpint(vb_queue_prepare_buf(d->q, A, &(struct v4l2_buffer){
			.index = 0, .type = CAP, .memory = MMAP }), ==, 0);
		break;
	case VB_BUF_QUEUED:
		g_assert_cmpint(fake_qbuf(d, A, MMAP, 0), ==, 0);
		break;
	case VB_BUF_ACTIVE:
	case VB_BUF_DONE:
	case VB_BUF_ERROR:
		g_assert_cmpint(fake_qbuf(d, A, MMAP, 0), ==, 0);
		g_assert_cmpint(vb_queue_streamon(d->q, A, CAP), ==, 0);
		if (state != VB_BUF_ACTIVE)
			fake_produce(d, state);
		break;
	default:
		g_assert_not_reached();
	}
	g_assert_cmpint(fake_state(d, 0), ==, state);
	return d;
}

/* The fake driver may still hold buffers we moved behind its back. */
static void
discard(struct fake_drv *d)
{
	d->n_active = 0;
	vb_queue_free(d->q);
	g_free(d);
}

V4L2CUSE_TEST("/vb-states/matrix", test_matrix)
{
	static const enum vb_buf_state reachable[] = {
		VB_BUF_DEQUEUED, VB_BUF_PREPARED, VB_BUF_QUEUED,
		VB_BUF_ACTIVE, VB_BUF_DONE, VB_BUF_ERROR,
	};
	unsigned int legal = 0, illegal = 0;
	size_t i;
	int to;

	for (i = 0; i < G_N_ELEMENTS(reachable); i++) {
		enum vb_buf_state from = reachable[i];
		struct fake_drv *d = queue_in_state(from);

		check_all_targets(d, 0, from);
		discard(d);
		for (to = 0; to < VB_BUF_N_STATES; to++) {
			if (!expected_legal(from, to)) {
				illegal++;
				continue;
			}
			d = queue_in_state(from);
			check_legal_target(d, 0, from, to);
			discard(d);
			legal++;
		}
	}

	/* PREPARING, from inside buf_prepare. */
	for (to = 0; to <= VB_BUF_N_STATES; to++) {
		struct vb_queue_config cfg = fake_config();
		struct hook h = { .to = to };
		struct fake_drv *d;

		if (to < VB_BUF_N_STATES && !expected_legal(VB_BUF_PREPARING, to)) {
			illegal++;
			continue;
		}
		cfg.ops = &hook_ops;
		d = fake_new_with(&cfg, 4096);
		d->user = &h;
		g_assert_cmpint(fake_reqbufs(d, A, MMAP, 2, NULL), ==, 0);
		g_assert_cmpint(fake_qbuf(d, A, MMAP, 0), ==, -EAGAIN);
		g_assert_true(h.ran);
		if (to == VB_BUF_N_STATES)
			g_assert_cmpint(fake_state(d, 0), ==, VB_BUF_DEQUEUED);
		else
			legal++;
		discard(d);
	}
	g_assert_cmpuint(legal, ==, 17);
	g_assert_cmpuint(legal + illegal, ==, VB_BUF_N_STATES * VB_BUF_N_STATES);
}

V4L2CUSE_TEST("/vb-states/mode-names", test_mode_names)
{
	g_assert_cmpstr(vb_io_mode_name(VB_MODE_IDLE), ==, "idle");
	g_assert_cmpstr(vb_io_mode_name(VB_MODE_STREAMING), ==, "streaming");
	g_assert_cmpstr(vb_io_mode_name(VB_MODE_READ), ==, "read");
	g_assert_cmpstr(vb_io_mode_name((enum vb_io_mode)42), ==, "invalid");
}
