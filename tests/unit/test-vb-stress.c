/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * videobuf under two threads: a producer thread completes buffers (as a
 * camera thread would) while the consumer thread QBUFs and DQBUFs and now
 * and then stops, restarts, fails to start, or reallocates. Every DQBUF is
 * checked against the consumer's own book of which buffers it queued (no
 * buffer lost, none twice), sequence numbers must rise within a session,
 * each frame must carry the sequence the producer expected, and at the end
 * every buffer is back with the consumer and the debug counters balance.
 *
 * Two flavours of waiting: the consumer sleeps until the wake op signals
 * it, or it "parks" its DQBUF and the wake op (on whichever thread
 * completed the buffer) performs the DQBUF for it, as the daemon does.
 *
 * VB_STRESS_FRAMES=N changes the number of frames (default 100000).
 * Under ThreadSanitizer: see docs/videobuf.md.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <glib.h>

#include "videobuf.h"
#include "test-main.h"

#define CAP V4L2_BUF_TYPE_VIDEO_CAPTURE
#define MMAP V4L2_MEMORY_MMAP
#define SIZE 4096u

static int owner_storage;
#define OWNER ((const void *)&owner_storage)

struct stress {
	struct vb_queue *q;
	bool dqbuf_in_wake;

	/* The driver: buffers handed over, the producer's state. */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct vb_buffer *fifo[VB_MAX_BUFFERS];
	unsigned int nf;
	struct vb_buffer *bufs[VB_MAX_BUFFERS];	/* by index, from buf_init */
	bool started, producer_busy, quit;
	int fail_start;
	uint32_t sequence;			/* the producer's count since the start */
	unsigned long produced, produced_err;
	unsigned int rng;			/* producer's own random state */

	/* The consumer's wake-up and its parked DQBUF. */
	pthread_mutex_t wlock;
	pthread_cond_t wcond;
	unsigned long wake_gen;
	bool parked;
	int parked_r;
	struct v4l2_buffer parked_buf;
	bool parked_done;
	unsigned long wake_dqbufs;		/* DQBUFs done inside wake */
};

/* --- The driver ---------------------------------------------------------------- */

static int
s_queue_setup(struct vb_queue *q, unsigned int *num, size_t *size)
{
	*size = SIZE;
	return 0;
}

static int
s_buf_init(struct vb_buffer *b)
{
	struct stress *s = vb_queue_priv(vb_buffer_queue(b));

	pthread_mutex_lock(&s->lock);
	s->bufs[vb_buffer_index(b)] = b;
	pthread_mutex_unlock(&s->lock);
	return 0;
}

static void
s_buf_queue(struct vb_buffer *b)
{
	struct stress *s = vb_queue_priv(vb_buffer_queue(b));

	pthread_mutex_lock(&s->lock);
	g_assert_cmpuint(s->nf, <, VB_MAX_BUFFERS);
	s->fifo[s->nf++] = b;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

/* Called with s->lock; waits until the producer holds no buffer. */
static unsigned int
s_take_all_locked(struct stress *s, struct vb_buffer **out)
{
	unsigned int n;

	while (s->producer_busy)
		pthread_cond_wait(&s->cond, &s->lock);
	n = s->nf;
	memcpy(out, s->fifo, n * sizeof(out[0]));
	s->nf = 0;
	return n;
}

static int
s_start_streaming(struct vb_queue *q, unsigned int count)
{
	struct stress *s = vb_queue_priv(q);
	struct vb_buffer *back[VB_MAX_BUFFERS];
	unsigned int n, i;
	int r;

	pthread_mutex_lock(&s->lock);
	r = s->fail_start;
	s->fail_start = 0;
	if (r == 0) {
		/* The queue numbers frames from 0 after each start; so do we. */
		s->started = true;
		s->sequence = 0;
		pthread_cond_broadcast(&s->cond);
		pthread_mutex_unlock(&s->lock);
		return 0;
	}
	n = s_take_all_locked(s, back);
	pthread_mutex_unlock(&s->lock);
	for (i = 0; i < n; i++)
		vb_buffer_done(back[i], VB_BUF_QUEUED);
	return r;
}

static void
s_stop_streaming(struct vb_queue *q)
{
	struct stress *s = vb_queue_priv(q);
	struct vb_buffer *back[VB_MAX_BUFFERS];
	unsigned int n, i;

	pthread_mutex_lock(&s->lock);
	s->started = false;
	n = s_take_all_locked(s, back);
	pthread_mutex_unlock(&s->lock);
	for (i = 0; i < n; i++)
		vb_buffer_done(back[i], VB_BUF_ERROR);
}

static void
s_wake(struct vb_queue *q)
{
	struct stress *s = vb_queue_priv(q);

	pthread_mutex_lock(&s->wlock);
	s->wake_gen++;
	/* The daemon's way: answer the parked DQBUF from the waking thread. */
	if (s->dqbuf_in_wake && s->parked) {
		struct v4l2_buffer b = { .type = CAP };
		int r = vb_queue_dqbuf(q, OWNER, &b);

		if (r != -EAGAIN) {
			s->parked = false;
			s->parked_r = r;
			s->parked_buf = b;
			s->parked_done = true;
			s->wake_dqbufs++;
		}
	}
	pthread_cond_broadcast(&s->wcond);
	pthread_mutex_unlock(&s->wlock);
}

static const struct vb_ops stress_ops = {
	.queue_setup = s_queue_setup,
	.buf_init = s_buf_init,
	.buf_queue = s_buf_queue,
	.start_streaming = s_start_streaming,
	.stop_streaming = s_stop_streaming,
	.wake = s_wake,
};

static unsigned int
xorshift(unsigned int *state)
{
	unsigned int x = *state;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *state = x;
}

/* The producer thread: fills buffers as soon as it has them. */
static void *
producer_main(void *data)
{
	struct stress *s = data;

	for (;;) {
		struct vb_buffer *b;
		uint32_t *mem, seq;
		bool err;

		pthread_mutex_lock(&s->lock);
		while (!s->quit && (!s->started || s->nf == 0))
			pthread_cond_wait(&s->cond, &s->lock);
		if (s->quit) {
			pthread_mutex_unlock(&s->lock);
			return NULL;
		}
		b = s->fifo[0];
		memmove(&s->fifo[0], &s->fifo[1], --s->nf * sizeof(s->fifo[0]));
		s->producer_busy = true;
		err = xorshift(&s->rng) % 100 == 0;
		/* The only thread completing buffers while started: its number. */
		seq = s->sequence++;
		pthread_mutex_unlock(&s->lock);

		mem = vb_buffer_mem(b);
		mem[0] = vb_buffer_index(b);
		mem[1] = seq;
		mem[2] = 0xc0ffee;
		vb_buffer_set_bytesused(b, SIZE);
		vb_buffer_done(b, err ? VB_BUF_ERROR : VB_BUF_DONE);

		pthread_mutex_lock(&s->lock);
		s->producer_busy = false;
		s->produced++;
		s->produced_err += err;
		pthread_cond_broadcast(&s->cond);
		pthread_mutex_unlock(&s->lock);
	}
}

/* --- The consumer ---------------------------------------------------------------- */

struct consumer {
	struct stress *s;
	GRand *rand;
	unsigned int n;			/* buffers allocated */
	bool mine[VB_MAX_BUFFERS];	/* dequeued: the consumer holds it */
	bool streaming;
	bool have_seq;
	uint32_t last_seq;
	unsigned long frames, errors, streamoffs, start_failures, reallocs, eagain, waits;
};

static void
c_qbuf(struct consumer *c, unsigned int i)
{
	struct v4l2_buffer b = { .index = i, .type = CAP, .memory = MMAP };
	int r;

	g_assert_true(c->mine[i]);
	r = vb_queue_qbuf(c->s->q, OWNER, &b);
	if (r == 0) {
		c->mine[i] = false;
		return;
	}
	/* Only the deferred start can fail here (then the buffer is still ours). */
	g_assert_cmpint(r, ==, -EIO);
	c->streaming = false;
	c->start_failures++;
}

static void
c_all_mine(struct consumer *c)
{
	unsigned int i;

	for (i = 0; i < c->n; i++) {
		c->mine[i] = true;
		g_assert_cmpint(vb_queue_buffer_state(c->s->q, i), ==, VB_BUF_DEQUEUED);
	}
	c->have_seq = false;
}

static void
c_streamon(struct consumer *c)
{
	int r;

	if (g_rand_int_range(c->rand, 0, 5) == 0) {
		pthread_mutex_lock(&c->s->lock);
		c->s->fail_start = -EIO;
		pthread_mutex_unlock(&c->s->lock);
	}
	r = vb_queue_streamon(c->s->q, OWNER, CAP);
	if (r == 0) {
		c->streaming = true;
		c->have_seq = false;
	} else {
		g_assert_cmpint(r, ==, -EIO);
		c->start_failures++;
	}
}

static void
c_streamoff(struct consumer *c)
{
	g_assert_cmpint(vb_queue_streamoff(c->s->q, OWNER, CAP), ==, 0);
	c->streaming = false;
	c->streamoffs++;
	/* Everything comes back: nothing may still be with the driver. */
	pthread_mutex_lock(&c->s->lock);
	g_assert_cmpuint(c->s->nf, ==, 0);
	g_assert_false(c->s->producer_busy);
	pthread_mutex_unlock(&c->s->lock);
	c_all_mine(c);
}

static void
c_realloc(struct consumer *c)
{
	struct v4l2_requestbuffers req = { .type = CAP, .memory = MMAP };

	c_streamoff(c);
	req.count = (uint32_t)g_rand_int_range(c->rand, 2, 9);
	g_assert_cmpint(vb_queue_reqbufs(c->s->q, OWNER, &req), ==, 0);
	c->n = req.count;
	c->reallocs++;
	c_all_mine(c);
}

static void
c_got(struct consumer *c, int r, const struct v4l2_buffer *b)
{
	if (r == -EINVAL) {
		/* stopped under our feet (a failed deferred start) */
		g_assert_false(vb_queue_is_streaming(c->s->q));
		c->streaming = false;
		return;
	}
	g_assert_cmpint(r, ==, 0);
	g_assert_cmpuint(b->index, <, c->n);
	if (c->mine[b->index])
		g_error("buffer %u dequeued twice", b->index);
	c->mine[b->index] = true;
	if (c->have_seq && b->sequence <= c->last_seq)
		g_error("sequence %u after %u", b->sequence, c->last_seq);
	c->have_seq = true;
	c->last_seq = b->sequence;
	if (b->flags & V4L2_BUF_FLAG_ERROR) {
		c->errors++;
	} else {
		const uint32_t *mem;

		pthread_mutex_lock(&c->s->lock);
		mem = vb_buffer_mem(c->s->bufs[b->index]);
		pthread_mutex_unlock(&c->s->lock);
		g_assert_cmpuint(b->bytesused, ==, SIZE);
		g_assert_cmpuint(mem[0], ==, b->index);
		g_assert_cmpuint(mem[1], ==, b->sequence);
		g_assert_cmpuint(mem[2], ==, 0xc0ffee);
		c->frames++;
	}
}

/*
 * Wait on s->wcond (s->wlock held) for at most a second; past @deadline the
 * test fails with @what instead (a wake-up that never comes must not hang).
 */
static void
s_wait(struct stress *s, gint64 deadline, const char *what)
{
	struct timespec ts;

	if (g_get_monotonic_time() > deadline)
		g_error("%s", what);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 1;
	pthread_cond_timedwait(&s->wcond, &s->wlock, &ts);
}

/* One DQBUF that waits, either flavour. */
static void
c_dqbuf_wait(struct consumer *c)
{
	struct stress *s = c->s;
	struct v4l2_buffer b = { .type = CAP };
	gint64 deadline = g_get_monotonic_time() + 10 * G_TIME_SPAN_SECOND;
	int r;

	pthread_mutex_lock(&s->wlock);
	for (;;) {
		unsigned long gen = s->wake_gen;

		b = (struct v4l2_buffer){ .type = CAP };
		r = vb_queue_dqbuf(s->q, OWNER, &b);
		if (r != -EAGAIN)
			break;
		c->eagain++;
		if (s->dqbuf_in_wake) {
			s->parked = true;
			s->parked_done = false;
			while (!s->parked_done)
				s_wait(s, deadline, "parked DQBUF never answered");
			c->waits++;
			r = s->parked_r;
			b = s->parked_buf;
			break;
		}
		while (s->wake_gen == gen)
			s_wait(s, deadline, "no wake-up for 10 s: lost wake");
		c->waits++;
	}
	pthread_mutex_unlock(&s->wlock);
	c_got(c, r, &b);
}

static void
run_stress(bool dqbuf_in_wake, unsigned long target, guint32 seed)
{
	struct stress *s = g_new0(struct stress, 1);
	struct consumer c = { .s = s };
	struct vb_queue_config cfg = {
		.type = CAP,
		.io_modes = VB_IO_MMAP,
		.min_buffers = 2,
		.min_queued_buffers = 2,
		.allow_orphans = true,
		.ops = &stress_ops,
		.priv = s,
		.name = "stress",
	};
	struct v4l2_requestbuffers req = { .count = 6, .type = CAP, .memory = MMAP };
	struct vb_debug_counters cnt;
	pthread_t producer;
	unsigned long iter = 0;
	unsigned int i;

	s->dqbuf_in_wake = dqbuf_in_wake;
	s->rng = seed | 1;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	pthread_mutex_init(&s->wlock, NULL);
	pthread_cond_init(&s->wcond, NULL);
	s->q = vb_queue_new(&cfg);
	g_assert_nonnull(s->q);
	c.rand = g_rand_new_with_seed(seed);
	g_assert_cmpint(pthread_create(&producer, NULL, producer_main, s), ==, 0);

	g_assert_cmpint(vb_queue_reqbufs(s->q, OWNER, &req), ==, 0);
	c.n = req.count;
	c_all_mine(&c);

	while (c.frames < target) {
		unsigned int x = (unsigned int)g_rand_int_range(c.rand, 0, 100000);

		iter++;
		if (!c.streaming) {
			/* queue some or all, then start */
			for (i = 0; i < c.n; i++)
				if (c.mine[i] && g_rand_int_range(c.rand, 0, 4))
					c_qbuf(&c, i);
			c_streamon(&c);
			continue;
		}
		if (x < 500) {
			c_streamoff(&c);
			continue;
		}
		if (x < 530) {
			c_realloc(&c);
			continue;
		}
		/* give back what we hold (sometimes keep one for a while) */
		for (i = 0; i < c.n && c.streaming; i++)
			if (c.mine[i] && g_rand_int_range(c.rand, 0, 8))
				c_qbuf(&c, i);
		if (!c.streaming)
			continue;
		/*
		 * Fewer than min_queued_buffers out: the deferred start may not
		 * have happened, and DQBUF would wait forever. Queue them all.
		 */
		{
			unsigned int out = 0;

			for (i = 0; i < c.n; i++)
				out += !c.mine[i];
			for (i = 0; i < c.n && c.streaming && out < 2; i++)
				if (c.mine[i])
					c_qbuf(&c, i), out++;
			if (!c.streaming)
				continue;
		}
		c_dqbuf_wait(&c);
	}

	c_streamoff(&c);
	pthread_mutex_lock(&s->lock);
	s->quit = true;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	pthread_join(producer, NULL);

	/* every buffer accounted for */
	for (i = 0; i < c.n; i++)
		g_assert_true(c.mine[i]);
	g_assert_cmpint(vb_queue_debug_imbalance(s->q), ==, 0);
	if (vb_queue_debug_counters(s->q, &cnt) == 0) {
		g_assert_cmpuint(cnt.reclaimed, ==, 0);
		g_assert_cmpuint(cnt.buf_queue, ==, cnt.buf_done);
		g_assert_cmpuint(cnt.start_streaming, ==, cnt.stop_streaming);
	}
	g_test_message("%s: %lu frames, %lu error frames, %lu produced (%lu errors), "
		       "%lu iterations, %lu EAGAIN, %lu waits, %lu DQBUFs inside wake, "
		       "%lu streamoffs, %lu failed starts, %lu reallocations",
		       dqbuf_in_wake ? "dqbuf-in-wake" : "wait-for-wake", c.frames, c.errors,
		       s->produced, s->produced_err, iter, c.eagain, c.waits, s->wake_dqbufs,
		       c.streamoffs, c.start_failures, c.reallocs);
	g_assert_cmpuint(c.frames, >=, target);
	g_assert_cmpuint(s->produced, >=, c.frames + c.errors);

	vb_queue_free(s->q);
	g_rand_free(c.rand);
	pthread_cond_destroy(&s->wcond);
	pthread_mutex_destroy(&s->wlock);
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	g_free(s);
}

static unsigned long
frames_target(void)
{
	const char *v = g_getenv("VB_STRESS_FRAMES");

	return v && *v ? g_ascii_strtoull(v, NULL, 0) : 100000;
}

V4L2CUSE_TEST("/vb-stress/wait-for-wake", test_wait_for_wake)
{
	run_stress(false, frames_target(), 1234);
}

V4L2CUSE_TEST("/vb-stress/dqbuf-in-wake", test_dqbuf_in_wake)
{
	run_stress(true, frames_target(), 5678);
}
