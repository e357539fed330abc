/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The reference model of test-vb-model.c (vb-ref-model.h): what the
 * documented semantics (docs/videobuf.md) say a queue's buffers, lists
 * and flags are after each operation, kept deliberately simple.
 */
#include "config.h"

#include <string.h>

#include "vb-ref-model.h"

bool
m_on_queued(enum vb_buf_state s)
{
	return s == VB_BUF_QUEUED || s == VB_BUF_ACTIVE || s == VB_BUF_DONE || s == VB_BUF_ERROR;
}

void
m_list_remove(int *list, unsigned int *n, int idx)
{
	unsigned int i;

	for (i = 0; i < *n; i++) {
		if (list[i] == idx) {
			memmove(&list[i], &list[i + 1], (*n - i - 1) * sizeof(list[0]));
			(*n)--;
			return;
		}
	}
}

void
m_set(struct model *m, int idx, enum vb_buf_state s)
{
	enum vb_buf_state old = m->b[idx].st;
	bool was_d = old == VB_BUF_DONE || old == VB_BUF_ERROR;
	bool now_d = s == VB_BUF_DONE || s == VB_BUF_ERROR;

	if (m_on_queued(old) && !m_on_queued(s))
		m_list_remove(m->qlist, &m->nq, idx);
	else if (!m_on_queued(old) && m_on_queued(s))
		m->qlist[m->nq++] = idx;
	if (was_d && !now_d)
		m_list_remove(m->done, &m->nd, idx);
	else if (!was_d && now_d)
		m->done[m->nd++] = idx;
	m->b[idx].st = s;
}

void
m_alloc(struct model *m, unsigned int count, size_t size)
{
	unsigned int i;

	for (i = m->n; i < m->n + count; i++) {
		memset(&m->b[i], 0, sizeof(m->b[i]));
		m->b[i].st = VB_BUF_DEQUEUED;
		m->b[i].size = size;
	}
	m->n += count;
}

void
m_driver_return_all(struct model *m, enum vb_buf_state s)
{
	unsigned int i;

	for (i = 0; i < m->nf; i++) {
		int idx = m->fifo[i];

		if (s != VB_BUF_QUEUED)
			m->b[idx].seqno = m->seq++;
		m_set(m, idx, s);
	}
	m->nf = 0;
}

void
m_cancel(struct model *m)
{
	unsigned int i;

	if (m->started)
		m_driver_return_all(m, VB_BUF_ERROR);
	for (i = 0; i < m->n; i++) {
		enum vb_buf_state s = m->b[i].st;

		if (s == VB_BUF_QUEUED || s == VB_BUF_DONE || s == VB_BUF_ERROR ||
		    s == VB_BUF_PREPARED)
			m_set(m, (int)i, VB_BUF_DEQUEUED);
	}
	m->streaming = m->started = m->error = false;
	m->waiting = true;
	m->seq = 0;
	m->cur = NONE;
}

void
m_teardown(struct model *m)
{
	m_cancel(m);
	m->n = 0;
	m->memory = 0;
	m->owner = NONE;
	m->mode = M_IDLE;
}

void
m_handoff(struct model *m, int idx)
{
	m_set(m, idx, VB_BUF_ACTIVE);
	m->fifo[m->nf++] = idx;
}

int
m_start(struct model *m)
{
	unsigned int i;
	int r;

	m->seq = 0;
	for (i = 0; i < m->nq; i++)
		if (m->b[m->qlist[i]].st == VB_BUF_QUEUED)
			m_handoff(m, m->qlist[i]);
	m->started = true;
	if (!m->fail_start)
		return 0;
	r = m->fail_start;
	m->fail_start = 0;
	m_driver_return_all(m, VB_BUF_QUEUED);
	m->started = false;
	return r;
}

int
m_read_start(struct model *m, int who)
{
	unsigned int i, count = MAX(READ_BUFFERS, MAX(MIN_BUFFERS, m->min_queued));
	int r;

	m_alloc(m, count, DRV_SIZE);
	m->memory = MMAP;
	m->owner = who;
	m->mode = M_READ;
	for (i = 0; i < m->n; i++)
		m_set(m, (int)i, VB_BUF_QUEUED);
	m->waiting = false;
	m->streaming = true;
	r = m_start(m);
	if (r < 0)
		m_teardown(m);
	return r;
}

bool
m_busy(const struct model *m, int who)
{
	return m->owner != NONE && m->owner != who;
}

uint32_t
m_flags(const struct model *m, int idx)
{
	enum vb_buf_state s = m->b[idx].st;
	bool producer = s == VB_BUF_QUEUED || s == VB_BUF_ACTIVE;
	uint32_t f = V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC | V4L2_BUF_FLAG_TSTAMP_SRC_EOF;

	if (producer)
		f |= V4L2_BUF_FLAG_QUEUED;
	if (s == VB_BUF_ERROR)
		f |= V4L2_BUF_FLAG_ERROR | V4L2_BUF_FLAG_DONE;
	if (s == VB_BUF_DONE)
		f |= V4L2_BUF_FLAG_DONE;
	if (s == VB_BUF_PREPARED)
		f |= V4L2_BUF_FLAG_PREPARED;
	if (m->b[idx].mapped)
		f |= V4L2_BUF_FLAG_MAPPED;
	return f;
}

void
m_read_requeue(struct model *m, int idx)
{
	m->b[idx].bytes = 0;
	m_set(m, idx, VB_BUF_QUEUED);
	if (m->started)
		m_handoff(m, idx);
}
