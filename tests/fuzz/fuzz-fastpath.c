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
 *
 * An op byte with its top bit set drives the writer side instead (and
 * creates it the first time): a loopback's writer node and its capture
 * node. W is the writer, a streaming handle with a fast path: the input
 * REQBUFS, maps, fills, QBUFs through its ring (any index, bytesused 0,
 * short, whole or past the buffer, the epoch or not, unmapped buffers) or
 * through CUSE, STREAMON/OFF in between, write()s through CUSE (whole
 * calls, calls cut after some of their 128 KiB requests) and dies: a
 * partial frame in one of its mapped buffers or one call cut short, then
 * its connection hangs up and its handle is released, and a new W opens.
 * Frames queued honestly are what the shim's write() emulation
 * (shim-client/fpwrite.c) queues: one buffer filled whole, a QBUF of
 * sizeimage bytes in the state's epoch, a kick. R reads the capture node
 * (streaming or not). Checked besides the above:
 * - no torn frame: W only ever fills a buffer or a write() call whole,
 *   with one byte value (a whole frame), except when it dies, so every
 *   frame R gets once the loopback has a frame has one byte value, never
 *   the dying W's (W_DEAD);
 * - both devices left with no handle, buffer or fast path.
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
#include "hub.h"
#include "loopback.h"
#include "loopback-private.h"
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

/* The writer side: a loopback's writer node and its capture node. */
#define WW 320
#define WH 240
#define W_FRAME (WW * WH * 2)		/* YUYV: a write() call of two CUSE requests */
#define W_DEAD 0xee			/* the bytes of a frame its writer died in */
#define CUSE_REQUEST (128 * 1024)

enum w_op {
	W_REQBUFS,	/* [count]: REQBUFS through CUSE, and map them all */
	W_STREAM,	/* [on]: STREAMON or STREAMOFF through CUSE */
	W_FILL,		/* [index][value]: a buffer filled whole */
	W_SUB,		/* [op][index][serial][bytesused]: a ring entry, posted */
	W_FRAME_Q,	/* [index][value]: what the write() emulation does for a frame */
	W_ACK,		/* the completions taken and ACKed, as the shim does */
	W_KICK,		/* W writes its socket */
	W_CUSE_QBUF,	/* [index][bytesused] */
	W_CUSE_DQBUF,
	W_WRITE,	/* [value][length]: a write() call through CUSE */
	W_DIE,		/* [how][index][length]: killed in the middle of a frame */
	R_STREAM,	/* R streams or stops */
	R_STEP,		/* a frame of the capture node */
	N_W_OPS
};

struct writer {
	struct v4l2cuse_fh *fh;
	struct v4l2cuse_fp_shared *sh;
	size_t size;
	int sock;
	uint32_t done_tail, sub_head;
	unsigned int n;
	uint8_t *mem[VB_MAX_BUFFERS];
	size_t len[VB_MAX_BUFFERS];
};

static struct v4l2cuse_hub *hub;
static struct v4l2cuse_device *wdev, *rdev;	/* writer node, capture node */
static struct writer w;
static struct {
	struct v4l2cuse_fh *fh;
	unsigned int n;
	uint8_t *mem[VB_MAX_BUFFERS];
	size_t len[VB_MAX_BUFFERS];
	bool streaming;
} r;
static bool w_side;			/* this input created them */
static uint64_t w_frames;		/* frames the loopback had before this op */

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

/* @d's producer timer, fired now (it is otherwise disarmed: no frame by chance). */
static void
step_dev(struct v4l2cuse_device *d)
{
	struct itimerspec its = { .it_value = { .tv_nsec = 1 } };

	if (d->timer_fd < 0 || timerfd_settime(d->timer_fd, 0, &its, NULL) < 0)
		return;
	g_main_context_iteration(NULL, TRUE);
	loop_drain();
}

static void
step(void)
{
	step_dev(dev);
}

static void
disarm_dev(struct v4l2cuse_device *d)
{
	struct itimerspec off = { { 0, 0 }, { 0, 0 } };

	if (d->timer_fd >= 0)
		timerfd_settime(d->timer_fd, 0, &off, NULL);
}

static void
disarm(void)
{
	disarm_dev(dev);
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

/* ---------------------------------------------------------------------- */
/* The writer side */

/* Map @fh's buffer @i (MMAP, as the shim's MAP gives it): its length, 0 if none. */
static size_t
map_buffer(struct v4l2cuse_fh *fh, uint32_t type, unsigned int i, uint8_t **ret)
{
	struct v4l2_buffer q = { .index = i, .type = type, .memory = V4L2_MEMORY_MMAP };
	unsigned int index;
	void *p;
	int fd;

	if (fake_ioctl(fh, VIDIOC_QUERYBUF, &q) < 0 ||
	    vb_queue_mmap_fd(v4l2cuse_fh_queue(fh), q.m.offset, q.length, &fd, &index) < 0)
		return 0;
	p = mmap(NULL, q.length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return 0;
	*ret = p;
	return q.length;
}

static void
w_unmap(void)
{
	for (unsigned int i = 0; i < w.n; i++)
		if (w.len[i])
			munmap(w.mem[i], w.len[i]);
	w.n = 0;
}

static void
w_open(void)
{
	struct v4l2_format fmt = { .type = V4L2_BUF_TYPE_VIDEO_OUTPUT };
	int memfd = -1, r = 0;

	memset(&w, 0, sizeof(w));
	w.fh = v4l2cuse_fh_open(wdev, O_RDWR | O_NONBLOCK, getpid(), getuid(), &r);
	fuzz_check(w.fh, "open the writer node: %d", r);
	v4l2cuse_fh_set_streaming(w.fh, true);
	r = v4l2cuse_fh_fastpath(w.fh, &memfd, &w.sock, &w.size);
	fuzz_check(r == 0, "the writer's fast path: %d", r);
	w.sh = mmap(NULL, w.size, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	fuzz_check(w.sh != MAP_FAILED, "mmap");
	close(memfd);
	fmt.fmt.pix = (struct v4l2_pix_format){ .width = WW, .height = WH,
						.pixelformat = V4L2_PIX_FMT_YUYV };
	fuzz_check(fake_ioctl(w.fh, VIDIOC_S_FMT, &fmt) == 0 && fmt.fmt.pix.sizeimage == W_FRAME,
		   "the writer's S_FMT");
}

/*
 * W goes, as the kernel ends a process: its connection hangs up first (a
 * kick it sent is still read), then its handle is released.
 */
static void
w_close(void)
{
	shutdown(w.sock, SHUT_RDWR);
	loop_drain();
	v4l2cuse_fh_release(w.fh);
	close(w.sock);
	munmap(w.sh, w.size);
	w_unmap();
	loop_drain();
}

static void
r_open(void)
{
	struct v4l2_requestbuffers rb = { .count = 3, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					  .memory = V4L2_MEMORY_MMAP };
	int e = 0;

	memset(&r, 0, sizeof(r));
	r.fh = v4l2cuse_fh_open(rdev, O_RDWR | O_NONBLOCK, getpid(), getuid(), &e);
	fuzz_check(r.fh, "open the capture node: %d", e);
	v4l2cuse_fh_set_streaming(r.fh, true);
	fuzz_check(fake_ioctl(r.fh, VIDIOC_REQBUFS, &rb) == 0 && rb.count == 3, "R's reqbufs");
	for (r.n = 0; r.n < rb.count; r.n++) {
		r.len[r.n] = map_buffer(r.fh, V4L2_BUF_TYPE_VIDEO_CAPTURE, r.n, &r.mem[r.n]);
		fuzz_check(r.len[r.n] >= W_FRAME, "R's buffer %u", r.n);
	}
}

static void
r_close(void)
{
	v4l2cuse_fh_release(r.fh);
	for (unsigned int i = 0; i < r.n; i++)
		munmap(r.mem[i], r.len[i]);
	loop_drain();
}

/*
 * The capture end's pace (loopback-capture.c): its tick, which lets a
 * frame written within half a frame interval of the last one out, now
 * (@ns 1) or never (0: no frame by chance).
 */
static void
r_pace(long ns)
{
	struct itimerspec its = { .it_value = { .tv_nsec = ns } };

	timerfd_settime(lb_of(rdev->src)->tfd, 0, &its, NULL);
}

static void
r_tick(void)
{
	r_pace(1);
	if (r.streaming)
		g_main_context_iteration(NULL, TRUE);
	loop_drain();
}

/*
 * What R got: once the loopback had a frame, each one is a written frame
 * whole (one byte value), and never the dying writer's.
 */
static void
r_drain(void)
{
	struct v4l2cuse_loopback_stats lb;

	for (;;) {
		struct v4l2_buffer q = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					 .memory = V4L2_MEMORY_MMAP };
		const uint8_t *p;

		if (fake_ioctl(r.fh, VIDIOC_DQBUF, &q) < 0)
			break;
		fuzz_check(q.index < r.n, "R got buffer %u", q.index);
		p = r.mem[q.index];
		if (trace)
			fprintf(stderr, "R: buffer %u, %u bytes, flags %#x, bytes %#x %#x\n", q.index,
				q.bytesused, q.flags, p[0], p[W_FRAME - 1]);
		if (w_frames && !(q.flags & V4L2_BUF_FLAG_ERROR)) {
			fuzz_check(q.bytesused == W_FRAME, "R's frame of %u bytes", q.bytesused);
			for (size_t i = 1; i < W_FRAME; i++)
				fuzz_check(p[i] == p[0], "R got a torn frame: byte %zu is %#x, byte 0 %#x",
					   i, p[i], p[0]);
			fuzz_check(p[0] != W_DEAD, "R got a frame its writer died in");
		}
		fake_ioctl(r.fh, VIDIOC_QBUF, &q);
	}
	fuzz_check(v4l2cuse_device_loopback_stats(rdev, &lb) == 0, "loopback stats");
	w_frames = lb.written;
}

/* 0, a frame, short of one, past the buffer, or any. */
static uint32_t
w_bytesused(uint8_t sel, unsigned int index)
{
	size_t len = index < w.n ? w.len[index] : W_FRAME;

	switch (sel % 5) {
	case 0: return 0;
	case 1: return W_FRAME;
	case 2: return W_FRAME - 1;
	case 3: return (uint32_t)len + 1;
	default: return (uint32_t)sel << 10;
	}
}

static void
w_post(struct v4l2cuse_fp_sub e)
{
	w.sh->sub[w.sub_head++ % V4L2CUSE_FP_SUB_RING] = e;
	__atomic_store_n(&w.sh->sub_head, w.sub_head, __ATOMIC_RELEASE);
}

static void
w_kick(void)
{
	fuzz_check(send(w.sock, "k", 1, MSG_DONTWAIT | MSG_NOSIGNAL) == 1 || errno == EAGAIN,
		   "W's kick: %s", g_strerror(errno));
	loop_drain();
}

static uint32_t
w_epoch(void)
{
	return __atomic_load_n(&w.sh->state.epoch, __ATOMIC_ACQUIRE);
}

/* A frame's byte value: 1 to W_DEAD - 1. */
static uint8_t
frame_value(uint8_t v)
{
	return (uint8_t)(1 + v % (W_DEAD - 1));
}

/* The completions, as the shim takes them: ACKed, the buffers the writer's again. */
static void
w_ack(void)
{
	uint32_t epoch = w_epoch();
	uint32_t head = __atomic_load_n(&w.sh->done_head, __ATOMIC_ACQUIRE);

	fuzz_check(head - w.done_tail <= V4L2CUSE_FP_DONE_RING, "W's ring overran: %u",
		   head - w.done_tail);
	for (; w.done_tail != head; w.done_tail++) {
		struct v4l2cuse_fp_done d = w.sh->done[w.done_tail % V4L2CUSE_FP_DONE_RING];

		fuzz_check((int32_t)(d.epoch - epoch) <= 0, "W's completion is of a newer epoch");
		if (d.epoch == epoch && w.sub_head - w.sh->state.sub_tail + 1 < V4L2CUSE_FP_SUB_RING)
			w_post((struct v4l2cuse_fp_sub){ .op = V4L2CUSE_FP_ACK,
							 .serial = d.serial });
	}
	__atomic_store_n(&w.sh->done_tail, w.done_tail, __ATOMIC_RELEASE);
}

/*
 * W killed in the middle of a frame, after the daemon took all it had
 * posted: part of a frame in a mapped buffer (with its QBUF written into
 * the ring but not posted, or not); or a write() call of whose two
 * requests the kernel had sent one. Then a new W.
 */
static void
w_die(struct fuzz_input *in)
{
	static uint8_t dead[CUSE_REQUEST];
	uint8_t how = fuzz_in_u8(in) % 3, index = fuzz_in_u8(in);
	size_t len = ((size_t)fuzz_in_u8(in) << 8 | fuzz_in_u8(in)) * 3 % (W_FRAME - 1) + 1;

	w_kick();
	if (w.n)
		index %= w.n;
	if (how == 1 || !w.n || !w.len[index]) {
		memset(dead, W_DEAD, sizeof(dead));
		fake_write(w.fh, dead, sizeof(dead));
	} else {
		memset(w.mem[index], W_DEAD, MIN(len, w.len[index]));
		if (how == 2)
			w.sh->sub[w.sub_head % V4L2CUSE_FP_SUB_RING] = (struct v4l2cuse_fp_sub){
				.op = V4L2CUSE_FP_QBUF, .index = index, .serial = w_epoch(),
				.bytesused = W_FRAME,
			};
	}
	w_close();
	w_open();
}

static void
w_run(struct fuzz_input *in, uint8_t o)
{
	static uint8_t frame[W_FRAME + 100];

	if (!w_side) {
		struct v4l2cuse_loopback_stats lb;

		w_open();
		r_open();
		fuzz_check(v4l2cuse_device_loopback_stats(rdev, &lb) == 0, "loopback stats");
		w_frames = lb.written;
		w_side = true;
	}
	switch ((o & 0x7f) % N_W_OPS) {
	case W_REQBUFS: {
		struct v4l2_requestbuffers rb = { .count = fuzz_in_u8(in) % 5,
						  .type = V4L2_BUF_TYPE_VIDEO_OUTPUT,
						  .memory = V4L2_MEMORY_MMAP };

		if (fake_ioctl(w.fh, VIDIOC_REQBUFS, &rb) < 0)
			break;
		w_unmap();
		for (w.n = 0; w.n < MIN(rb.count, (unsigned int)VB_MAX_BUFFERS); w.n++)
			w.len[w.n] = map_buffer(w.fh, V4L2_BUF_TYPE_VIDEO_OUTPUT, w.n,
						&w.mem[w.n]);
		break;
	}
	case W_STREAM: {
		int type = V4L2_BUF_TYPE_VIDEO_OUTPUT;

		fake_ioctl(w.fh, fuzz_in_u8(in) & 1 ? VIDIOC_STREAMON : VIDIOC_STREAMOFF, &type);
		break;
	}
	case W_FILL: {
		uint8_t index = fuzz_in_u8(in), v = frame_value(fuzz_in_u8(in));

		if (index < w.n && w.len[index])
			memset(w.mem[index], v, w.len[index]);
		break;
	}
	case W_SUB: {
		uint8_t op = fuzz_in_u8(in), index = fuzz_in_u8(in), serial = fuzz_in_u8(in);

		w_post((struct v4l2cuse_fp_sub){
			.op = op % 4,
			.index = index,
			.serial = serial & 0x80 ? w_epoch() : serial,
			.bytesused = w_bytesused(fuzz_in_u8(in), index),
		});
		break;
	}
	case W_FRAME_Q: {
		uint8_t index = fuzz_in_u8(in), v = frame_value(fuzz_in_u8(in));

		if (index >= w.n || !w.len[index])
			break;
		memset(w.mem[index], v, w.len[index]);
		w_post((struct v4l2cuse_fp_sub){ .op = V4L2CUSE_FP_QBUF, .index = index,
						 .serial = w_epoch(), .bytesused = W_FRAME });
		w_kick();
		break;
	}
	case W_ACK:
		w_ack();
		break;
	case W_KICK:
		w_kick();
		break;
	case W_CUSE_QBUF: {
		uint8_t index = fuzz_in_u8(in) % (VB_MAX_BUFFERS + 1);
		struct v4l2_buffer q = { .index = index, .type = V4L2_BUF_TYPE_VIDEO_OUTPUT,
					 .memory = V4L2_MEMORY_MMAP,
					 .bytesused = w_bytesused(fuzz_in_u8(in), index) };

		fake_ioctl(w.fh, VIDIOC_QBUF, &q);
		break;
	}
	case W_CUSE_DQBUF: {
		struct v4l2_buffer q = { .type = V4L2_BUF_TYPE_VIDEO_OUTPUT,
					 .memory = V4L2_MEMORY_MMAP };

		fake_ioctl(w.fh, VIDIOC_DQBUF, &q);
		break;
	}
	case W_WRITE: {
		static const size_t lens[] = { W_FRAME, W_FRAME / 2, CUSE_REQUEST, W_FRAME + 100, 0 };
		uint8_t v = frame_value(fuzz_in_u8(in));
		size_t len = lens[fuzz_in_u8(in) % G_N_ELEMENTS(lens)];

		memset(frame, v, len);
		fake_write(w.fh, frame, len);
		break;
	}
	case W_DIE:
		w_die(in);
		break;
	case R_STREAM: {
		int type = V4L2_BUF_TYPE_VIDEO_CAPTURE;

		if (r.streaming) {
			fake_ioctl(r.fh, VIDIOC_STREAMOFF, &type);
			r.streaming = false;
			break;
		}
		for (unsigned int i = 0; i < r.n; i++) {
			struct v4l2_buffer q = { .index = i, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
						 .memory = V4L2_MEMORY_MMAP };

			fake_ioctl(r.fh, VIDIOC_QBUF, &q);
		}
		r.streaming = fake_ioctl(r.fh, VIDIOC_STREAMON, &type) == 0;
		r_pace(0);
		break;
	}
	case R_STEP:
		r_tick();
		break;
	}
	r_drain();
}

static void
run(struct fuzz_input *in)
{
	for (unsigned int n = 0; n < MAX_OPS && in->p < in->end; n++) {
		uint8_t o = fuzz_in_u8(in);
		int before[NBUF], after[NBUF];
		bool a_op;

		if (o & 0x80) {
			w_run(in, o);
			continue;
		}
		o %= N_OPS;
		a_op = o != OP_STEP && o != OP_HONEST && o != OP_CUSE_B;

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
	v4l2cuse_device_free(wdev);
	v4l2cuse_device_free(rdev);
	v4l2cuse_hub_free(hub);
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
	/* The writer side: its frames reach the capture node as they are (same format). */
	hub = v4l2cuse_hub_new();
	cfg = fake_yuyv_config("video44", "loopback:video45,sizes=320x240,fps=30", WW, WH, 30);
	cfg.hub = hub;
	rdev = fake_device(&cfg);
	cfg = fake_yuyv_config("video45", "loopback-writer:video45", WW, WH, 30);
	cfg.hub = hub;
	cfg.output = true;
	wdev = fake_device(&cfg);
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
	if (w_side) {
		w_close();
		r_close();
		w_side = false;
		for (int i = 0; i < 2; i++) {
			v4l2cuse_device_get_stats(i ? wdev : rdev, &st);
			fuzz_check(st.opens == 0 && st.fast_handles == 0 && st.buffer_memory == 0 &&
				   !st.streaming, "the writer side left: %u opens, %u fast paths, %"
				   G_GUINT64_FORMAT " bytes", st.opens, st.fast_handles,
				   st.buffer_memory);
		}
	}
	v4l2cuse_device_get_stats(dev, &st);
	fuzz_check(st.opens == 0 && st.fast_handles == 0 && st.buffer_memory == 0 &&
		   !st.streaming, "left: %u opens, %u fast paths, %" G_GUINT64_FORMAT " bytes",
		   st.opens, st.fast_handles, st.buffer_memory);
	fuzz_check(fuzz_count_fds() == fds, "fds: %u before, %u after", fds, fuzz_count_fds());
	return 0;
}
