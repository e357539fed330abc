/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer harness for the daemon's side of the preload shim's fast path
 * (daemon/fastpath.c): what a client writes into its shared-memory queue.
 * A shared device has two streaming handles with a fast path each: A is
 * the hostile client, whose whole shared region the input writes (ring
 * entries of any kind, indices, counters, the daemon's own half), kicks
 * and CUSE requests; B is an honest client that dequeues and queues its
 * frames through its ring as the shim does. Frames are produced on demand.
 *
 * Checked besides ASan/UBSan/LSan:
 * - nothing A does changes B's buffers (their states stay as they were
 *   across every operation of A's);
 * - B's completions are whole and in order (sequence numbers increase),
 *   each names one of B's buffers, and B never sees one twice;
 * - the daemon never blocks (every kick returns) and never writes outside
 *   the daemon's half of a ring except A's and B's own tails it reads;
 * - B's CUSE requests (DQBUF, QBUF, STREAMOFF, STREAMON, REQBUFS) are
 *   checked at the moment of their reply, when the app acts on it: the
 *   state is published already (ACTIVE exactly while B streams without
 *   error), and the ring offers no buffer the daemon does not hold as
 *   done (a DQBUF through CUSE took it out first); no completion is ever
 *   of a newer epoch than the state (the shim would keep it for the next
 *   one, never skip it);
 * - afterwards both handles release cleanly: no fd, mapping or memory left.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include <glib.h>
#include <linux/videodev2.h>

#include "v4l2cuse/shim-protocol.h"
#include "device-private.h"
#include "fake-req.h"
#include "fuzz-common.h"
#include "fuzz-input.h"

#define NBUF 4
#define MAX_OPS 256

enum op {
	OP_SUB,		/* [op][index][serial u8: 0x80+ the epoch][userptr u8][length u8][bytesused u8] */
	OP_SUB_HEAD,	/* [u32]: A's submission index, anywhere */
	OP_DONE_TAIL,	/* [u32]: A's completion index, anywhere */
	OP_SCRIBBLE,	/* [offset u16][len u8][bytes...]: anywhere in A's region */
	OP_KICK,	/* A writes its socket */
	OP_STEP,	/* a frame */
	OP_CUSE,	/* [which][cmd][index]: a CUSE request of A */
	OP_HONEST,	/* B dequeues what it has and queues it back */
	OP_ACK_REAL,	/* A acknowledges a completion it was really given (+ junk) */
	OP_CUSE_B,	/* [which][index]: a CUSE request of B, checked at its reply */
	N_OPS
};

struct client {
	struct v4l2cuse_fh *fh;
	struct v4l2cuse_fp_shared *sh;
	size_t size;
	int sock;
	/* B only: its shim-side counters. */
	uint32_t done_tail, sub_head;
	uint32_t last_seq;
	bool seen_frame;
};

static struct v4l2cuse_device *dev;
static struct client a, b;
static bool trace;			/* FUZZ_FASTPATH_TRACE=1: what B got */

static uint32_t
in_u32(struct fuzz_input *in)
{
	uint32_t v = 0;

	for (int i = 0; i < 4; i++)
		v = v << 8 | fuzz_in_u8(in);
	return v;
}

static void
loop_drain(void)
{
	for (int i = 0; i < 100 && g_main_context_iteration(NULL, FALSE); i++)
		;
}

/* The producer's timer, fired now (it is otherwise disarmed: no frame by chance). */
static void
step(void)
{
	struct itimerspec its = { .it_value = { .tv_nsec = 1 } };

	if (dev->timer_fd < 0 || timerfd_settime(dev->timer_fd, 0, &its, NULL) < 0)
		return;
	g_main_context_iteration(NULL, TRUE);
	loop_drain();
}

static void
disarm(void)
{
	struct itimerspec off = { { 0, 0 }, { 0, 0 } };

	if (dev->timer_fd >= 0)
		timerfd_settime(dev->timer_fd, 0, &off, NULL);
}

static void
client_start(struct client *c)
{
	struct v4l2_requestbuffers rb = { .count = NBUF, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					  .memory = V4L2_MEMORY_MMAP };
	int type = V4L2_BUF_TYPE_VIDEO_CAPTURE, memfd = -1, r = 0;

	memset(c, 0, sizeof(*c));
	c->fh = v4l2cuse_fh_open(dev, O_RDWR | O_NONBLOCK, getpid(), getuid(), &r);
	fuzz_check(c->fh, "open: %d", r);
	v4l2cuse_fh_set_streaming(c->fh, true);
	r = v4l2cuse_fh_fastpath(c->fh, &memfd, &c->sock, &c->size);
	fuzz_check(r == 0, "fast path: %d", r);
	c->sh = mmap(NULL, c->size, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	fuzz_check(c->sh != MAP_FAILED, "mmap");
	close(memfd);
	fuzz_check(fake_ioctl(c->fh, VIDIOC_REQBUFS, &rb) == 0 && rb.count == NBUF, "reqbufs");
	for (uint32_t i = 0; i < NBUF; i++) {
		struct v4l2_buffer q = { .index = i, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					 .memory = V4L2_MEMORY_MMAP };

		fuzz_check(fake_ioctl(c->fh, VIDIOC_QBUF, &q) == 0, "qbuf %u", i);
	}
	fuzz_check(fake_ioctl(c->fh, VIDIOC_STREAMON, &type) == 0, "streamon");
	disarm();
}

static void
client_stop(struct client *c)
{
	v4l2cuse_fh_release(c->fh);
	munmap(c->sh, c->size);
	close(c->sock);
	loop_drain();
}

/* B's buffer states: A must never change them. */
static void
b_states(int *st)
{
	for (unsigned int i = 0; i < NBUF; i++)
		st[i] = vb_queue_buffer_state(v4l2cuse_fh_queue(b.fh), i);
}

/* B, as the shim: take every completion of the current epoch, ACK and QBUF it. */
static void
honest(void)
{
	struct v4l2cuse_fp_shared *sh = b.sh;
	uint32_t epoch = __atomic_load_n(&sh->state.epoch, __ATOMIC_ACQUIRE);
	uint32_t head = __atomic_load_n(&sh->done_head, __ATOMIC_ACQUIRE);

	fuzz_check(head - b.done_tail <= V4L2CUSE_FP_DONE_RING, "B's ring overran: %u",
		   head - b.done_tail);
	while (b.done_tail != head) {
		struct v4l2cuse_fp_done d = sh->done[b.done_tail % V4L2CUSE_FP_DONE_RING];

		/* As the shim: older epochs are void, a newer one is the next state's. */
		fuzz_check((int32_t)(d.epoch - epoch) <= 0,
			   "B's completion of epoch %u is newer than the state's %u", d.epoch, epoch);
		b.done_tail++;
		if (d.epoch != epoch)
			continue;
		fuzz_check(d.index < NBUF && d.dq.index == d.index, "B got buffer %u", d.index);
		fuzz_check(!(d.dq.flags & (V4L2_BUF_FLAG_DONE | V4L2_BUF_FLAG_QUEUED)),
			   "B's completion has flags %#x", d.dq.flags);
		fuzz_check(!b.seen_frame || d.dq.sequence > b.last_seq,
			   "B's sequence went from %u to %u", b.last_seq, d.dq.sequence);
		b.seen_frame = true;
		b.last_seq = d.dq.sequence;
		if (trace)
			fprintf(stderr, "B: buffer %u sequence %u\n", d.index, d.dq.sequence);
		if (b.sub_head - sh->state.sub_tail + 2 > V4L2CUSE_FP_SUB_RING)
			continue;	/* full: the next CUSE request of B takes it */
		sh->sub[b.sub_head++ % V4L2CUSE_FP_SUB_RING] =
			(struct v4l2cuse_fp_sub){ .op = V4L2CUSE_FP_ACK, .serial = d.serial };
		sh->sub[b.sub_head++ % V4L2CUSE_FP_SUB_RING] =
			(struct v4l2cuse_fp_sub){ .op = V4L2CUSE_FP_QBUF, .index = d.index,
						  .serial = epoch };
	}
	__atomic_store_n(&sh->done_tail, b.done_tail, __ATOMIC_RELEASE);
	__atomic_store_n(&sh->sub_head, b.sub_head, __ATOMIC_RELEASE);
}

static void
op_cuse(struct fuzz_input *in)
{
	static const unsigned int cmds[] = {
		VIDIOC_QBUF, VIDIOC_DQBUF, VIDIOC_QUERYBUF, VIDIOC_STREAMOFF, VIDIOC_STREAMON,
		VIDIOC_REQBUFS, VIDIOC_QUERYCAP,
	};
	unsigned int cmd = cmds[fuzz_in_u8(in) % G_N_ELEMENTS(cmds)];
	uint8_t index = fuzz_in_u8(in);
	union {
		struct v4l2_buffer buf;
		struct v4l2_requestbuffers rb;
		struct v4l2_capability cap;
		int type;
	} u;

	memset(&u, 0, sizeof(u));
	if (cmd == VIDIOC_REQBUFS) {
		u.rb = (struct v4l2_requestbuffers){ .count = index % 6,
						     .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
						     .memory = V4L2_MEMORY_MMAP };
	} else if (cmd == VIDIOC_STREAMOFF || cmd == VIDIOC_STREAMON) {
		u.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	} else if (cmd != VIDIOC_QUERYCAP) {
		u.buf = (struct v4l2_buffer){ .index = index % (NBUF + 2),
					      .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					      .memory = V4L2_MEMORY_MMAP };
	}
	/* A's handle is O_NONBLOCK: nothing parks. */
	fake_ioctl(a.fh, cmd, &u);
}

/*
 * At the reply of B's CUSE request (the app has it and may look at its
 * ring at once): what the request did is published.
 */
static void
b_at_reply(void *data)
{
	struct v4l2cuse_fp_shared *sh = b.sh;
	struct vb_queue *q = v4l2cuse_fh_queue(b.fh);
	struct vb_queue_snapshot snap;
	uint32_t epoch = __atomic_load_n(&sh->state.epoch, __ATOMIC_ACQUIRE);
	uint32_t flags = __atomic_load_n(&sh->state.flags, __ATOMIC_ACQUIRE);
	uint32_t head = __atomic_load_n(&sh->done_head, __ATOMIC_ACQUIRE);

	fake_set_reply_hook(NULL, NULL);
	vb_queue_snapshot(q, b.fh, &snap);
	fuzz_check(!!(flags & V4L2CUSE_FP_ACTIVE) == (snap.owned && snap.streaming && !snap.error),
		   "B's state says %s at the reply", flags & V4L2CUSE_FP_ACTIVE ? "active" : "idle");
	for (uint32_t t = b.done_tail; t != head; t++) {
		const struct v4l2cuse_fp_done *d = &sh->done[t % V4L2CUSE_FP_DONE_RING];

		fuzz_check((int32_t)(d->epoch - epoch) <= 0, "a completion newer than B's state");
		if (d->epoch != epoch || !(flags & V4L2CUSE_FP_ACTIVE))
			continue;
		fuzz_check(d->index < NBUF &&
			   vb_queue_buffer_state(q, d->index) == VB_BUF_DONE,
			   "B's ring offers buffer %u, which is not done", d->index);
	}
}

static void
op_cuse_b(struct fuzz_input *in)
{
	static const unsigned int cmds[] = {
		VIDIOC_DQBUF, VIDIOC_QBUF, VIDIOC_STREAMOFF, VIDIOC_STREAMON, VIDIOC_REQBUFS,
	};
	unsigned int cmd = cmds[fuzz_in_u8(in) % G_N_ELEMENTS(cmds)];
	uint8_t index = fuzz_in_u8(in);
	union {
		struct v4l2_buffer buf;
		struct v4l2_requestbuffers rb;
		int type;
	} u;

	/* What B's app has already taken from its ring comes first, as in the shim. */
	honest();
	memset(&u, 0, sizeof(u));
	if (cmd == VIDIOC_REQBUFS) {
		u.rb = (struct v4l2_requestbuffers){ .count = NBUF,
						     .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
						     .memory = V4L2_MEMORY_MMAP };
	} else if (cmd == VIDIOC_STREAMOFF || cmd == VIDIOC_STREAMON) {
		u.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	} else {
		u.buf = (struct v4l2_buffer){ .index = index % NBUF,
					      .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					      .memory = V4L2_MEMORY_MMAP };
	}
	fake_set_reply_hook(b_at_reply, NULL);
	/* B's handle is O_NONBLOCK: nothing parks. A new stream counts from 0 again. */
	if (fake_ioctl(b.fh, cmd, &u) == 0 && (cmd == VIDIOC_STREAMOFF || cmd == VIDIOC_STREAMON))
		b.seen_frame = false;
	fake_set_reply_hook(NULL, NULL);
	disarm();			/* STREAMON may have armed the producer */
}

static void
run(struct fuzz_input *in)
{
	for (unsigned int n = 0; n < MAX_OPS && in->p < in->end; n++) {
		uint8_t o = fuzz_in_u8(in) % N_OPS;
		int before[NBUF], after[NBUF];
		bool a_op = o != OP_STEP && o != OP_HONEST && o != OP_CUSE_B;

		if (a_op)
			b_states(before);
		switch (o) {
		case OP_SUB: {
			uint8_t op = fuzz_in_u8(in), index = fuzz_in_u8(in), serial = fuzz_in_u8(in);
			/*
			 * A serial with its top bit set is the state's epoch, as
			 * the shim writes into a QBUF: a QBUF the daemon then
			 * refuses comes back as an ERROR completion (issue 28,
			 * item 10), a path a random serial would seldom reach.
			 */
			struct v4l2cuse_fp_sub e = {
				.op = op % 4,
				.index = index,
				.serial = serial & 0x80 ? __atomic_load_n(&a.sh->state.epoch,
									  __ATOMIC_ACQUIRE) : serial,
				.userptr = (uint64_t)fuzz_in_u8(in) << 12,
				.length = (uint32_t)fuzz_in_u8(in) << 10,
				.bytesused = (uint32_t)fuzz_in_u8(in) << 10,
			};
			uint32_t head = a.sh->sub_head;

			a.sh->sub[head % V4L2CUSE_FP_SUB_RING] = e;
			__atomic_store_n(&a.sh->sub_head, head + 1, __ATOMIC_RELEASE);
			break;
		}
		case OP_SUB_HEAD:
			__atomic_store_n(&a.sh->sub_head, in_u32(in), __ATOMIC_RELEASE);
			break;
		case OP_DONE_TAIL:
			__atomic_store_n(&a.sh->done_tail, in_u32(in), __ATOMIC_RELEASE);
			break;
		case OP_SCRIBBLE: {
			size_t off = ((size_t)fuzz_in_u8(in) << 8 | fuzz_in_u8(in)) % a.size;
			size_t len = MIN((size_t)fuzz_in_u8(in) % 64, a.size - off);

			for (size_t i = 0; i < len; i++)
				((uint8_t *)a.sh)[off + i] = fuzz_in_u8(in);
			break;
		}
		case OP_KICK:
			fuzz_check(send(a.sock, "k", 1, MSG_DONTWAIT | MSG_NOSIGNAL) == 1 ||
				   errno == EAGAIN, "kick: %s", g_strerror(errno));
			loop_drain();
			break;
		case OP_STEP:
			step();
			break;
		case OP_CUSE:
			op_cuse(in);
			break;
		case OP_HONEST:
			honest();
			/* B's kick: its queued buffers are taken before the next frame anyway. */
			(void)!send(b.sock, "k", 1, MSG_DONTWAIT | MSG_NOSIGNAL);
			loop_drain();
			break;
		case OP_CUSE_B:
			op_cuse_b(in);
			break;
		case OP_ACK_REAL: {
			uint32_t head = __atomic_load_n(&a.sh->done_head, __ATOMIC_ACQUIRE);
			struct v4l2cuse_fp_done d = a.sh->done[(head - 1) % V4L2CUSE_FP_DONE_RING];
			uint32_t sh = a.sh->sub_head;

			a.sh->sub[sh % V4L2CUSE_FP_SUB_RING] = (struct v4l2cuse_fp_sub){
				.op = V4L2CUSE_FP_ACK, .serial = d.serial + (fuzz_in_u8(in) & 1),
			};
			a.sh->sub[(sh + 1) % V4L2CUSE_FP_SUB_RING] = (struct v4l2cuse_fp_sub){
				.op = V4L2CUSE_FP_QBUF, .index = d.index,
			};
			__atomic_store_n(&a.sh->sub_head, sh + 2, __ATOMIC_RELEASE);
			break;
		}
		}
		if (a_op) {
			b_states(after);
			fuzz_check(memcmp(before, after, sizeof(before)) == 0,
				   "A's op %u changed B's buffers", o);
		}
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
fuzz_cleanup(void)
{
	v4l2cuse_device_free(dev);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct v4l2cuse_device_config cfg = fake_yuyv_config("video42",
							     "pattern,sizes=64x48,overlay=0",
							     64, 48, 30);

	cfg.shared = true;
	fuzz_quiet_glib(G_LOG_LEVEL_WARNING);
	trace = g_strcmp0(g_getenv("FUZZ_FASTPATH_TRACE"), "1") == 0;
	dev = fake_device(&cfg);
	loop_drain();		/* the main context's own wake-up fd exists from now on */
	atexit(fuzz_cleanup);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input in = { data, data + size };
	struct v4l2cuse_device_stats st;
	unsigned int fds = fuzz_count_fds();

	client_start(&a);
	client_start(&b);
	run(&in);
	client_stop(&a);
	client_stop(&b);
	v4l2cuse_device_get_stats(dev, &st);
	fuzz_check(st.opens == 0 && st.fast_handles == 0 && st.buffer_memory == 0 &&
		   !st.streaming, "left: %u opens, %u fast paths, %" G_GUINT64_FORMAT " bytes",
		   st.opens, st.fast_handles, st.buffer_memory);
	fuzz_check(fuzz_count_fds() == fds, "fds: %u before, %u after", fds, fuzz_count_fds());
	return 0;
}
