/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * vb-cycle: what one frame costs inside the videobuf library, without
 * CUSE: QBUF -> buf_queue -> the producer's vb_buffer_done -> DQBUF.
 *
 *   single       one thread does all three; the pure library cost
 *   cross-cond   a producer thread completes buffers; the consumer sleeps
 *                on a condition variable until the wake op signals it
 *   cross-spin   the same, but both threads spin instead of sleeping: the
 *                lock and cache-line cost without scheduler wake-ups
 *
 * Usage: vb-cycle [--cycles N] [--runs R] [--buffers B] [--mode single|cross-cond|cross-spin]
 * Prints one line per mode: the median and best ns per cycle over R runs.
 * docs/performance.md ("videobuf cycle") has the method and numbers.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <glib.h>

#include "util/clock.h"
#include "videobuf.h"

#define CAP V4L2_BUF_TYPE_VIDEO_CAPTURE
#define MMAP V4L2_MEMORY_MMAP

static int owner_storage;
#define OWNER ((const void *)&owner_storage)

struct bench {
	struct vb_queue *q;
	bool cross, spin;

	/* buffers handed over by buf_queue, a ring (one producer) */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct vb_buffer *ring[VB_MAX_BUFFERS];
	unsigned int head, tail;	/* spin mode: atomics */
	bool quit;

	/* consumer wake-up */
	pthread_mutex_t wlock;
	pthread_cond_t wcond;
	unsigned long wake_gen;		/* spin mode: atomic */
};

static int
b_queue_setup(struct vb_queue *q, unsigned int *num, size_t *size)
{
	*size = 4096;
	return 0;
}

static void
b_buf_queue(struct vb_buffer *b)
{
	struct bench *bn = vb_queue_priv(vb_buffer_queue(b));

	if (bn->spin) {
		unsigned int t = __atomic_load_n(&bn->tail, __ATOMIC_RELAXED);

		bn->ring[t % VB_MAX_BUFFERS] = b;
		__atomic_store_n(&bn->tail, t + 1, __ATOMIC_RELEASE);
		return;
	}
	if (bn->cross)
		pthread_mutex_lock(&bn->lock);
	bn->ring[bn->tail++ % VB_MAX_BUFFERS] = b;
	if (bn->cross) {
		pthread_cond_signal(&bn->cond);
		pthread_mutex_unlock(&bn->lock);
	}
}

static void
b_wake(struct vb_queue *q)
{
	struct bench *bn = vb_queue_priv(q);

	if (!bn->cross)
		return;
	if (bn->spin) {
		__atomic_add_fetch(&bn->wake_gen, 1, __ATOMIC_RELEASE);
		return;
	}
	pthread_mutex_lock(&bn->wlock);
	bn->wake_gen++;
	pthread_cond_signal(&bn->wcond);
	pthread_mutex_unlock(&bn->wlock);
}

static const struct vb_ops bench_ops = {
	.queue_setup = b_queue_setup,
	.buf_queue = b_buf_queue,
	.wake = b_wake,
};

static void
produce(struct vb_buffer *b)
{
	*(volatile uint32_t *)vb_buffer_mem(b) = vb_buffer_index(b);
	vb_buffer_set_bytesused(b, 4096);
	vb_buffer_done(b, VB_BUF_DONE);
}

/* Spin briefly, then let the other thread run (2 cores may be shared). */
static void
spin_pause(unsigned int spins)
{
	if (spins > 200)
		sched_yield();
	else
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#else
		__asm__ volatile("" ::: "memory");
#endif
}

static void *
producer_main(void *data)
{
	struct bench *bn = data;

	for (;;) {
		struct vb_buffer *b;

		if (bn->spin) {
			unsigned int h = bn->head;

			for (unsigned int spins = 0;
			     __atomic_load_n(&bn->tail, __ATOMIC_ACQUIRE) == h; spins++) {
				if (__atomic_load_n(&bn->quit, __ATOMIC_RELAXED))
					return NULL;
				spin_pause(spins);
			}
			b = bn->ring[h % VB_MAX_BUFFERS];
			bn->head = h + 1;
		} else {
			pthread_mutex_lock(&bn->lock);
			while (!bn->quit && bn->head == bn->tail)
				pthread_cond_wait(&bn->cond, &bn->lock);
			if (bn->quit) {
				pthread_mutex_unlock(&bn->lock);
				return NULL;
			}
			b = bn->ring[bn->head++ % VB_MAX_BUFFERS];
			pthread_mutex_unlock(&bn->lock);
		}
		produce(b);
	}
}


static void
must(int r, const char *what)
{
	if (r < 0) {
		fprintf(stderr, "vb-cycle: %s: %s\n", what, strerror(-r));
		exit(1);
	}
}

/* DQBUF, waiting the way the mode says. */
static void
dqbuf_wait(struct bench *bn, struct v4l2_buffer *b)
{
	for (;;) {
		unsigned long gen = bn->spin ? __atomic_load_n(&bn->wake_gen, __ATOMIC_ACQUIRE)
					     : 0;
		int r;

		if (bn->cross && !bn->spin) {
			pthread_mutex_lock(&bn->wlock);
			gen = bn->wake_gen;
			pthread_mutex_unlock(&bn->wlock);
		}
		*b = (struct v4l2_buffer){ .type = CAP };
		r = vb_queue_dqbuf(bn->q, OWNER, b);
		if (r == 0)
			return;
		if (r != -EAGAIN || !bn->cross)
			must(r, "dqbuf");
		if (bn->spin) {
			for (unsigned int spins = 0;
			     __atomic_load_n(&bn->wake_gen, __ATOMIC_ACQUIRE) == gen; spins++)
				spin_pause(spins);
		} else {
			pthread_mutex_lock(&bn->wlock);
			while (bn->wake_gen == gen)
				pthread_cond_wait(&bn->wcond, &bn->wlock);
			pthread_mutex_unlock(&bn->wlock);
		}
	}
}

/* One run: ns per cycle. */
static double
run(const char *mode, unsigned long cycles, unsigned int nbuf)
{
	struct bench bn = { .cross = strcmp(mode, "single") != 0,
			    .spin = strcmp(mode, "cross-spin") == 0 };
	struct vb_queue_config cfg = {
		.type = CAP,
		.io_modes = VB_IO_MMAP,
		.min_buffers = 1,
		.ops = &bench_ops,
		.priv = &bn,
		.name = "bench",
	};
	struct v4l2_requestbuffers req = { .count = nbuf, .type = CAP, .memory = MMAP };
	pthread_t producer;
	uint64_t t0, t1;
	unsigned long i;
	unsigned int k;

	pthread_mutex_init(&bn.lock, NULL);
	pthread_cond_init(&bn.cond, NULL);
	pthread_mutex_init(&bn.wlock, NULL);
	pthread_cond_init(&bn.wcond, NULL);
	bn.q = vb_queue_new(&cfg);
	must(bn.q ? 0 : -EINVAL, "vb_queue_new");
	must(vb_queue_reqbufs(bn.q, OWNER, &req), "reqbufs");
	nbuf = req.count;
	must(vb_queue_streamon(bn.q, OWNER, CAP), "streamon");
	if (bn.cross)
		must(-pthread_create(&producer, NULL, producer_main, &bn), "pthread_create");

	/* Prime the pipeline: every buffer queued once. */
	for (k = 0; k < nbuf; k++) {
		struct v4l2_buffer b = { .index = k, .type = CAP, .memory = MMAP };

		must(vb_queue_qbuf(bn.q, OWNER, &b), "qbuf");
	}
	t0 = v4l2cuse_now_ns();
	for (i = 0; i < cycles; i++) {
		struct v4l2_buffer b;

		if (!bn.cross)
			produce(bn.ring[bn.head++ % VB_MAX_BUFFERS]);
		dqbuf_wait(&bn, &b);
		b.memory = MMAP;
		b.flags = 0;
		must(vb_queue_qbuf(bn.q, OWNER, &b), "qbuf");
	}
	t1 = v4l2cuse_now_ns();

	if (bn.cross) {
		if (bn.spin) {
			__atomic_store_n(&bn.quit, true, __ATOMIC_RELAXED);
		} else {
			pthread_mutex_lock(&bn.lock);
			bn.quit = true;
			pthread_cond_signal(&bn.cond);
			pthread_mutex_unlock(&bn.lock);
		}
		pthread_join(producer, NULL);
	}
	/* Whatever the producer still holds goes back at STREAMOFF. */
	while (bn.head != bn.tail)
		vb_buffer_done(bn.ring[bn.head++ % VB_MAX_BUFFERS], VB_BUF_ERROR);
	must(vb_queue_streamoff(bn.q, OWNER, CAP), "streamoff");
	vb_queue_free(bn.q);
	pthread_cond_destroy(&bn.wcond);
	pthread_mutex_destroy(&bn.wlock);
	pthread_cond_destroy(&bn.cond);
	pthread_mutex_destroy(&bn.lock);
	return (double)(t1 - t0) / (double)cycles;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
	static const char *const all[] = { "single", "cross-cond", "cross-spin" };
	unsigned long cycles = 1000000;
	unsigned int runs = 5, nbuf = 4, r, m;
	const char *only = NULL;
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--cycles") && i + 1 < argc)
			cycles = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
			runs = (unsigned int)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--buffers") && i + 1 < argc)
			nbuf = (unsigned int)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--mode") && i + 1 < argc)
			only = argv[++i];
		else {
			fprintf(stderr, "usage: %s [--cycles N] [--runs R] [--buffers B] "
				"[--mode single|cross-cond|cross-spin]\n", argv[0]);
			return 2;
		}
	}
	if (cycles == 0 || runs == 0 || runs > 100 || nbuf == 0 || nbuf > VB_MAX_BUFFERS) {
		fprintf(stderr, "vb-cycle: bad arguments\n");
		return 2;
	}

	printf("# vb-cycle: %lu cycles x %u runs, %u buffers; ns per QBUF->done->DQBUF cycle\n",
	       cycles, runs, nbuf);
	for (m = 0; m < G_N_ELEMENTS(all); m++) {
		double res[100];

		if (only && strcmp(only, all[m]))
			continue;
		/* the cross modes are ~100x slower per cycle: fewer cycles */
		for (r = 0; r < runs; r++)
			res[r] = run(all[m], m == 1 ? MAX(cycles / 20, 1ul) : cycles, nbuf);
		qsort(res, runs, sizeof(res[0]), cmp_double);
		printf("%-11s median %8.1f ns  best %8.1f ns\n", all[m], res[runs / 2], res[0]);
	}
	return 0;
}
