/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A deliberately simple model of a videobuf queue's documented semantics
 * (docs/videobuf.md), which test-vb-model.c compares the real queue with
 * after every step: buffer states, the queued, done and driver lists, the
 * read() cursor, the flags QUERYBUF reports.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <glib.h>

#include "videobuf.h"
#include "vb-fake-driver.h"

/* The queue the model mirrors: the fake driver's buffer size, read() buffers, min_buffers. */
#define DRV_SIZE 4096u
#define READ_BUFFERS 3u
#define MIN_BUFFERS 2u
#define NONE (-1)	/* no owner, no buffer */

enum { M_IDLE, M_STREAMING, M_READ };

struct model {
	/* configuration */
	bool orphans;
	unsigned int min_queued;

	int owner;			/* NONE, 0 or 1 */
	int mode;
	unsigned int n;
	uint32_t memory;
	bool streaming, started, error, waiting;
	uint32_t seq;

	struct {
		enum vb_buf_state st;
		size_t size;
		uint32_t bytes;
		uint32_t seqno;
		int mapped;
		unsigned long uptr;
		uint32_t ulen;
	} b[VB_MAX_BUFFERS];

	int qlist[VB_MAX_BUFFERS];	/* queued list, in order */
	unsigned int nq;
	int done[VB_MAX_BUFFERS];	/* done list, in order */
	unsigned int nd;
	int fifo[VB_MAX_BUFFERS];	/* the driver's buffers, in order */
	unsigned int nf;

	int cur;			/* read cursor */
	size_t pos, rsize;

	int fail_start, fail_prepare;	/* armed knobs, mirrored */
};

/* A buffer in state @s is on the queued list (QBUF done, not yet DQBUF). */
bool m_on_queued(enum vb_buf_state s);
/* Take @idx off the list of *@n indices. */
void m_list_remove(int *list, unsigned int *n, int idx);
/* Buffer @idx goes to state @s; the queued and done lists follow. */
void m_set(struct model *m, int idx, enum vb_buf_state s);
/* @count more buffers of @size bytes, DEQUEUED. */
void m_alloc(struct model *m, unsigned int count, size_t size);
/* The driver gives every buffer back (stop_streaming, a failed start). */
void m_driver_return_all(struct model *m, enum vb_buf_state s);
/* STREAMOFF: everything back to DEQUEUED, the counters reset. */
void m_cancel(struct model *m);
/* REQBUFS(0) or release: no buffers, no owner. */
void m_teardown(struct model *m);
/* Buffer @idx goes to the driver (ACTIVE). */
void m_handoff(struct model *m, int idx);
/* start_streaming with what is queued: 0 or the armed fail_start errno. */
int m_start(struct model *m);
/* The first read() by @who sets up and starts the read buffers. */
int m_read_start(struct model *m, int who);
/* Another handle than @who owns the queue. */
bool m_busy(const struct model *m, int who);
/* The flags QUERYBUF reports for buffer @idx. */
uint32_t m_flags(const struct model *m, int idx);
/* read() used up buffer @idx: queued again (and to the driver when started). */
void m_read_requeue(struct model *m, int idx);
