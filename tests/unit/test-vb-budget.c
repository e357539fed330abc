/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Buffer memory budgets (videobuf/budget.c) alone and through queues: a
 * refused charge makes REQBUFS/CREATE_BUFS/read() fall short like an
 * out-of-memory allocation (fewer buffers, ENOMEM below the minimum),
 * frees credit the memory back, and queues chained to one global budget
 * share it.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>

#include <glib.h>

#include "videobuf.h"
#include "vb-fake-driver.h"
#include "test-main.h"

static size_t page;

/* A buffer of 2.5 pages takes 3 pages of budget. */
#define SIZE_PAGES(p) ((size_t)(p) * page)
static size_t
buf_size(void)
{
	return page * 5 / 2;
}

static uint64_t
used(struct vb_budget *bg)
{
	struct vb_budget_stats st;

	vb_budget_get_stats(bg, &st);
	return st.used;
}

static struct fake_drv *
fake_new_budget(struct vb_budget *bg)
{
	struct vb_queue_config cfg = fake_config();

	cfg.budget = bg;
	return fake_new_with(&cfg, buf_size());
}

/* CREATE_BUFS(@count) of buf_size() for owner A; *ret_count: buffers made. */
static int
create_bufs(struct fake_drv *d, unsigned int count, unsigned int *ret_count)
{
	struct v4l2_create_buffers cb = { .count = count, .memory = MMAP };
	int r;

	cb.format.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	cb.format.fmt.pix.sizeimage = (uint32_t)buf_size();
	r = vb_queue_create_bufs(d->q, A, &cb);
	if (r == 0)
		*ret_count = cb.count;
	return r;
}

V4L2CUSE_TEST("/vb-budget/chain", test_budget_chain)
{
	struct vb_budget *global = vb_budget_new("global", 1000, NULL);
	struct vb_budget *dev = vb_budget_new("dev", 600, global);
	struct vb_budget *other = vb_budget_new("other", 0, global);	/* unlimited */
	struct vb_budget_stats st;

	g_assert_cmpint(vb_budget_charge(dev, 600, "t"), ==, 0);
	g_assert_cmpint(vb_budget_charge(dev, 1, "t"), ==, -ENOMEM);	/* device limit */
	g_assert_cmpuint(used(dev), ==, 600);
	g_assert_cmpuint(used(global), ==, 600);
	g_assert_cmpint(vb_budget_charge(other, 401, "t"), ==, -ENOMEM);	/* global */
	g_assert_cmpuint(used(other), ==, 0);	/* all or nothing */
	g_assert_cmpint(vb_budget_charge(other, 400, "t"), ==, 0);
	g_assert_cmpuint(used(global), ==, 1000);
	vb_budget_credit(dev, 600);
	g_assert_cmpuint(used(dev), ==, 0);
	g_assert_cmpuint(used(global), ==, 400);
	/* No wrap-around with huge charges. */
	g_assert_cmpint(vb_budget_charge(other, UINT64_MAX, "t"), ==, -ENOMEM);
	g_assert_cmpuint(used(global), ==, 400);
	vb_budget_get_stats(global, &st);
	g_assert_cmpuint(st.peak, ==, 1000);
	g_assert_cmpuint(st.refused, ==, 2);
	/* A lower limit refuses new charges only. */
	vb_budget_set_limit(global, 100);
	g_assert_cmpint(vb_budget_charge(other, 1, "t"), ==, -ENOMEM);
	g_assert_cmpuint(used(global), ==, 400);
	vb_budget_credit(other, 400);
	g_assert_cmpint(vb_budget_charge(other, 100, "t"), ==, 0);
	vb_budget_credit(other, 100);
	/* The children keep the parent alive. */
	vb_budget_unref(global);
	g_assert_cmpint(vb_budget_charge(dev, 50, "t"), ==, 0);
	vb_budget_credit(dev, 50);
	vb_budget_unref(dev);
	vb_budget_unref(other);
	vb_budget_unref(NULL);
	g_assert_null(vb_budget_ref(NULL));
}

V4L2CUSE_TEST("/vb-budget/reqbufs-partial", test_reqbufs_partial)
{
	/* Room for 5 buffers of 3 pages. */
	struct vb_budget *bg = vb_budget_new("dev", SIZE_PAGES(3 * 5 + 2), NULL);
	struct fake_drv *d = fake_new_budget(bg);
	unsigned int count = 0;

	g_assert_cmpint(fake_reqbufs(d, A, MMAP, 8, &count), ==, 0);
	g_assert_cmpuint(count, ==, 5);			/* fewer, like vb2 out of memory */
	g_assert_cmpuint(d->n_setup, ==, 2);		/* queue_setup asked again */
	g_assert_cmpuint(used(bg), ==, SIZE_PAGES(15));
	/* Another handle: EBUSY, nothing charged. */
	g_assert_cmpint(fake_reqbufs(d, B, MMAP, 2, NULL), ==, -EBUSY);
	g_assert_cmpuint(used(bg), ==, SIZE_PAGES(15));
	/* CREATE_BUFS: nothing left. */
	g_assert_cmpint(create_bufs(d, 2, &count), ==, -ENOMEM);
	/* Freeing credits everything back. */
	g_assert_cmpint(fake_reqbufs(d, A, MMAP, 0, NULL), ==, 0);
	g_assert_cmpuint(used(bg), ==, 0);
	/* REQBUFS(2) then CREATE_BUFS(8): 3 more fit. */
	g_assert_cmpint(fake_reqbufs(d, A, MMAP, 2, &count), ==, 0);
	g_assert_cmpint(create_bufs(d, 8, &count), ==, 0);
	g_assert_cmpuint(count, ==, 3);
	g_assert_cmpint(vb_queue_buffer_state(d->q, 4), ==, VB_BUF_DEQUEUED);
	g_assert_cmpint(vb_queue_buffer_state(d->q, 5), ==, -EINVAL);
	g_assert_cmpuint(used(bg), ==, SIZE_PAGES(15));
	/* The owner's release frees and credits too. */
	vb_queue_release(d->q, A);
	g_assert_cmpuint(used(bg), ==, 0);
	fake_free(d);
	vb_budget_unref(bg);
}

V4L2CUSE_TEST("/vb-budget/reqbufs-enomem", test_reqbufs_enomem)
{
	/* Room for one buffer: below min_buffers (2). */
	struct vb_budget *bg = vb_budget_new("dev", SIZE_PAGES(4), NULL);
	struct fake_drv *d = fake_new_budget(bg);
	const void *data;

	g_assert_cmpint(fake_reqbufs(d, A, MMAP, 4, NULL), ==, -ENOMEM);
	g_assert_null(vb_queue_owner(d->q));
	g_assert_cmpuint(used(bg), ==, 0);	/* the one allocated was freed */
	/* USERPTR staging memory counts the same. */
	g_assert_cmpint(fake_reqbufs(d, A, UPTR, 2, NULL), ==, -ENOMEM);
	/* Read emulation buffers too: read() fails with ENOMEM. */
	g_assert_cmpint(vb_queue_read(d->q, A, 100, true, &data), ==, -ENOMEM);
	g_assert_false(vb_queue_is_reading(d->q));
	g_assert_cmpuint(used(bg), ==, 0);
	/* Nothing fits at all. */
	vb_budget_set_limit(bg, page);
	g_assert_cmpint(fake_reqbufs(d, A, MMAP, 2, NULL), ==, -ENOMEM);
	/* With room, read emulation starts and charges its 3 buffers. */
	vb_budget_set_limit(bg, 0);
	g_assert_cmpint(vb_queue_read(d->q, A, 100, true, &data), ==, -EAGAIN);
	g_assert_true(vb_queue_is_reading(d->q));
	g_assert_cmpuint(used(bg), ==, SIZE_PAGES(9));
	vb_queue_release(d->q, A);
	g_assert_cmpuint(used(bg), ==, 0);
	fake_free(d);
	vb_budget_unref(bg);
}

V4L2CUSE_TEST("/vb-budget/shared-global", test_shared_global)
{
	/* Two devices of 4 buffers each under a global budget of 6. */
	struct vb_budget *global = vb_budget_new("global", SIZE_PAGES(18), NULL);
	struct vb_budget *b1 = vb_budget_new("dev1", SIZE_PAGES(12), global);
	struct vb_budget *b2 = vb_budget_new("dev2", SIZE_PAGES(12), global);
	struct fake_drv *d1 = fake_new_budget(b1), *d2 = fake_new_budget(b2);
	unsigned int count = 0;

	g_assert_cmpint(fake_reqbufs(d1, A, MMAP, 32, &count), ==, 0);
	g_assert_cmpuint(count, ==, 4);			/* device limit */
	g_assert_cmpint(fake_reqbufs(d2, A, MMAP, 32, &count), ==, 0);
	g_assert_cmpuint(count, ==, 2);			/* what the global limit leaves */
	g_assert_cmpuint(used(global), ==, SIZE_PAGES(18));
	g_assert_cmpint(fake_reqbufs(d2, A, MMAP, 0, NULL), ==, 0);
	g_assert_cmpint(fake_reqbufs(d1, A, MMAP, 32, &count), ==, 0);	/* realloc */
	g_assert_cmpuint(count, ==, 4);
	g_assert_cmpuint(used(global), ==, SIZE_PAGES(12));
	/* Freeing the queue credits its budget before it lets go of it. */
	fake_free(d1);
	g_assert_cmpuint(used(b1), ==, 0);
	g_assert_cmpuint(used(global), ==, 0);
	g_assert_cmpint(fake_reqbufs(d2, A, MMAP, 32, &count), ==, 0);
	g_assert_cmpuint(count, ==, 4);
	fake_free(d2);
	g_assert_cmpuint(used(global), ==, 0);
	vb_budget_unref(b1);
	vb_budget_unref(b2);
	vb_budget_unref(global);
}

/* Threads charging and crediting one chain: the totals come out exact. */
static void *
hammer(void *data)
{
	struct vb_budget *bg = data;

	for (int i = 0; i < 20000; i++) {
		if (vb_budget_charge(bg, 7, "t") == 0)
			vb_budget_credit(bg, 7);
	}
	return NULL;
}

V4L2CUSE_TEST("/vb-budget/threads", test_threads)
{
	struct vb_budget *global = vb_budget_new("global", 40, NULL);
	struct vb_budget *devs[4];
	pthread_t t[4];
	struct vb_budget_stats st;

	for (int i = 0; i < 4; i++) {
		devs[i] = vb_budget_new("dev", 14, global);
		pthread_create(&t[i], NULL, hammer, devs[i]);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		g_assert_cmpuint(used(devs[i]), ==, 0);
		vb_budget_unref(devs[i]);
	}
	vb_budget_get_stats(global, &st);
	g_assert_cmpuint(st.used, ==, 0);
	g_assert_cmpuint(st.peak, <=, 40);
	vb_budget_unref(global);
}

int
main(int argc, char **argv)
{
	long p = sysconf(_SC_PAGESIZE);

	page = p > 0 ? (size_t)p : 4096;
	g_test_init(&argc, &argv, NULL);
	v4l2cuse_test_add_registered();
	return g_test_run();
}
