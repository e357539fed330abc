/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer harness for the daemon's ioctl layer (daemon/ioctl.c, device.c,
 * ctrls.c and videobuf/), driven without CUSE through a transport that
 * plays the kernel's part from the fuzz input:
 *
 * - ioctls go in CUSE retry rounds: round one carries no data; every retry
 *   the daemon asks for is served from a fake caller memory (64 KiB at the
 *   fake address FUZZ_BASE) that the input may patch between rounds, as a
 *   second thread of the caller could; sizes above the 128 KiB CUSE cap and
 *   addresses outside that memory end the syscall there (ENOMEM, EFAULT).
 * - read() goes in 128 KiB chunks like fake_read() in tests/unit.
 * - parked requests are answered later (frames, interrupts, shutdown);
 *   interrupts go through on_interrupt, also "already pending" ones.
 * - poll handles are heap tokens: each must be notified or destroyed once.
 *
 * The input is a little program (see the op enum; tests/fuzz/gen-ioctl-seeds.py
 * writes the seeds in tests/fuzz/corpus/ioctl/). Every input gets a fresh
 * device, which is freed at the end with everything on it.
 *
 * Checked besides ASan/UBSan/LSan: exactly one answer (reply, retry or park)
 * per request and exactly one reply per parked request; replies never longer
 * than the round allowed (the kernel would fail them with EIO); results 0 or
 * -errno in range; unknown commands and streaming I/O on plain handles get
 * ENOTTY; no retry loop; read() never parks mid-syscall; an interrupted
 * request is answered; no g_warning/g_critical ("bug: ..."); nothing parked
 * or polled is left when the device is gone.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include <glib.h>
#include <linux/videodev2.h>

#include "v4l2cuse/ctl-protocol.h"
#include "v4l2cuse/shim-protocol.h"
#include "device-private.h"
#include "fuzz-common.h"

#define FUZZ_BASE	0x10000ul	/* the caller memory's fake address */
#define FUZZ_MEM	(64 * 1024)
#define CUSE_MAX_IOCTL	(128 * 1024)	/* in or out bytes per ioctl round */
#define CUSE_MAX_IOV	256		/* FUSE_IOCTL_MAX_IOV */
#define MAX_ROUNDS	16		/* more is a retry loop: the caller would spin */
#define MAX_FH		8
#define MAX_OPS		256


/* ---------------------------------------------------------------------- */
/* The input */

struct input {
	const uint8_t *p;
	size_t n;
};

static uint8_t
in_u8(struct input *in)
{
	if (!in->n)
		return 0;
	in->n--;
	return *in->p++;
}

static uint16_t
in_u16(struct input *in)
{
	uint16_t v = in_u8(in);

	return v | (uint16_t)in_u8(in) << 8;
}

static uint32_t
in_u32(struct input *in)
{
	uint32_t v = in_u16(in);

	return v | (uint32_t)in_u16(in) << 16;
}

/* ---------------------------------------------------------------------- */
/* The harness state (one device per input) */

struct slot {
	struct v4l2cuse_fh *fh;
	unsigned int parked;		/* its requests still parked */
};

static struct {
	struct v4l2cuse_device *dev;
	struct slot slots[MAX_FH];
	GQueue parked;			/* struct hreq * (heap copies) */
	unsigned int poll_handles;	/* handed out, not yet notified/destroyed */
	uint64_t answered;		/* parked requests answered */
	uint8_t mem[FUZZ_MEM];		/* the caller's memory */
} h;

/* Static, not per request: large ASan allocations would dominate the run time. */
static struct iovec retry_in[CUSE_MAX_IOV], retry_out[CUSE_MAX_IOV];
static uint8_t inbuf[CUSE_MAX_IOCTL];

static bool trace;		/* FUZZ_IOCTL_TRACE=1: one line per ioctl round and read */

static bool
mem_range(uintptr_t addr, size_t len, size_t *ret_off)
{
	if (addr < FUZZ_BASE || addr - FUZZ_BASE > FUZZ_MEM || len > FUZZ_MEM - (addr - FUZZ_BASE))
		return false;
	*ret_off = addr - FUZZ_BASE;
	return true;
}

/* The caller writes to its memory: up to 3 patches [off u16][len u8][bytes]. */
static void
mem_patch(struct input *in)
{
	unsigned int n = in_u8(in) % 4;

	for (unsigned int i = 0; i < n; i++) {
		size_t off = in_u16(in), len = in_u8(in);

		off %= FUZZ_MEM - len;
		for (size_t j = 0; j < len && in->n; j++)
			h.mem[off + j] = in_u8(in);
	}
}

/* ---------------------------------------------------------------------- */
/* The transport */

enum hreq_kind { HREQ_IOCTL, HREQ_READ, HREQ_POLL };

struct hreq {
	struct v4l2cuse_req base;
	enum hreq_kind kind;
	unsigned int answers;		/* replies, retries and parks seen */
	bool retried, parked, heap;
	bool intr_pending;		/* a signal is already pending at park time */
	int slot;
	int result;
	size_t out_size;		/* bytes this round can take back */
	size_t n_in, n_out;		/* retry: the iovecs asked for (in retry_iov) */
	uint8_t *data;
	size_t len;
	v4l2cuse_req_interrupt_fn intr_fn;
	void *intr_data;
	GList link;			/* in h.parked (heap copies) */
};

static void
hreq_answer(struct v4l2cuse_req *req, enum hreq_kind kind, int result, const void *buf,
	    size_t len)
{
	struct hreq *r = (struct hreq *)req;

	fuzz_check(r->answers == 0, "a second answer to one request (result %d)", result);
	r->answers++;
	fuzz_check(r->kind == kind, "answer of kind %d to a request of kind %d", kind, r->kind);
	fuzz_check(result <= 0 && result >= -4095, "result %d is not 0 or -errno", result);
	fuzz_check(len <= r->out_size, "reply of %zu bytes, the round allows %zu (EIO)", len,
		   r->out_size);
	if (r->heap) {
		g_queue_unlink(&h.parked, &r->link);
		h.slots[r->slot].parked--;
		h.answered++;
		g_free(r);
		return;
	}
	r->result = result;
	/* Only ioctl replies are copied out; read() data is not looked at. */
	r->data = len && kind == HREQ_IOCTL ? g_memdup2(buf, len) : NULL;
	r->len = len;
}

static void
hr_retry(struct v4l2cuse_req *req, const struct iovec *in, size_t n_in,
	 const struct iovec *out, size_t n_out)
{
	struct hreq *r = (struct hreq *)req;

	fuzz_check(!r->heap && r->kind == HREQ_IOCTL, "retry of a parked or non-ioctl request");
	fuzz_check(r->answers == 0, "retry after an answer");
	r->answers++;
	r->retried = true;
	/* The kernel refuses more than FUSE_IOCTL_MAX_IOV (ENOMEM to the caller). */
	r->n_in = MIN(n_in, (size_t)CUSE_MAX_IOV + 1);
	r->n_out = MIN(n_out, (size_t)CUSE_MAX_IOV + 1);
	memcpy(retry_in, in, MIN(n_in, (size_t)CUSE_MAX_IOV) * sizeof(*in));
	memcpy(retry_out, out, MIN(n_out, (size_t)CUSE_MAX_IOV) * sizeof(*out));
}

static void
hr_reply_ioctl(struct v4l2cuse_req *req, int result, const void *buf, size_t len)
{
	hreq_answer(req, HREQ_IOCTL, result, buf, len);
}

static void
hr_reply_err(struct v4l2cuse_req *req, int result)
{
	fuzz_check(result < 0, "reply_err(%d)", result);
	hreq_answer(req, ((struct hreq *)req)->kind, result, NULL, 0);
}

static void
hr_reply_data(struct v4l2cuse_req *req, const void *buf, size_t len)
{
	hreq_answer(req, HREQ_READ, 0, buf, len);
}

static void
hr_reply_write(struct v4l2cuse_req *req, size_t count)
{
	fuzz_check(false, "reply_write: this harness does not write");
}

static void
hr_reply_open(struct v4l2cuse_req *req, void *fh)
{
	fuzz_check(false, "reply_open from the ioctl layer");
}

static void
hr_reply_poll(struct v4l2cuse_req *req, unsigned int revents)
{
	fuzz_check(!((struct hreq *)req)->heap, "a parked poll");
	hreq_answer(req, HREQ_POLL, 0, NULL, 0);
}

static struct v4l2cuse_req *
hr_park(struct v4l2cuse_req *req)
{
	struct hreq *r = (struct hreq *)req, *copy;

	fuzz_check(!r->heap && r->kind != HREQ_POLL, "park of a parked request or a poll");
	fuzz_check(r->answers == 0, "park after an answer");
	r->answers++;
	r->parked = true;
	copy = g_new0(struct hreq, 1);
	copy->base = r->base;
	copy->kind = r->kind;
	copy->heap = true;
	copy->slot = r->slot;
	copy->out_size = r->out_size;
	copy->intr_pending = r->intr_pending;
	copy->link.data = copy;
	g_queue_push_tail_link(&h.parked, &copy->link);
	h.slots[r->slot].parked++;
	return &copy->base;
}

static void
hr_on_interrupt(struct v4l2cuse_req *req, v4l2cuse_req_interrupt_fn fn, void *data)
{
	struct hreq *r = (struct hreq *)req;

	fuzz_check(r->heap, "on_interrupt on a request that is not parked");
	r->intr_fn = fn;
	r->intr_data = data;
	/* Already interrupted: runs now, after registration (req.h). */
	if (r->intr_pending) {
		r->intr_pending = false;
		fn(req, data);
	}
}

static const struct v4l2cuse_req_ops hr_ops = {
	.retry = hr_retry,
	.reply_ioctl = hr_reply_ioctl,
	.reply_err = hr_reply_err,
	.reply_data = hr_reply_data,
	.reply_write = hr_reply_write,
	.reply_open = hr_reply_open,
	.reply_poll = hr_reply_poll,
	.park = hr_park,
	.on_interrupt = hr_on_interrupt,
};

static void
poll_consume(void *ph)
{
	fuzz_check(ph && h.poll_handles > 0, "poll handle %p notified or destroyed twice", ph);
	h.poll_handles--;
	g_free(ph);
}

static const struct v4l2cuse_poll_ops poll_ops = {
	.notify = poll_consume,
	.destroy = poll_consume,
};

/* ---------------------------------------------------------------------- */
/* The ops of the program */

/* The commands ioctl.c knows; anything else must be ENOTTY. */
static const struct {
	unsigned int cmd;
	bool streaming;		/* shim-attached handles only */
} cmds[] = {
	{ VIDIOC_QUERYCAP }, { VIDIOC_G_PRIORITY }, { VIDIOC_S_PRIORITY },
	{ VIDIOC_ENUM_FMT }, { VIDIOC_G_FMT }, { VIDIOC_S_FMT }, { VIDIOC_TRY_FMT },
	{ VIDIOC_ENUM_FRAMESIZES }, { VIDIOC_ENUM_FRAMEINTERVALS }, { VIDIOC_G_PARM },
	{ VIDIOC_S_PARM }, { VIDIOC_ENUMINPUT }, { VIDIOC_G_INPUT }, { VIDIOC_S_INPUT },
	{ VIDIOC_LOG_STATUS }, { VIDIOC_QUERYCTRL }, { VIDIOC_QUERY_EXT_CTRL },
	{ VIDIOC_QUERYMENU }, { VIDIOC_G_CTRL }, { VIDIOC_S_CTRL },
	{ VIDIOC_G_EXT_CTRLS }, { VIDIOC_S_EXT_CTRLS }, { VIDIOC_TRY_EXT_CTRLS },
	{ VIDIOC_SUBSCRIBE_EVENT }, { VIDIOC_UNSUBSCRIBE_EVENT }, { VIDIOC_DQEVENT },
	{ VIDIOC_REQBUFS, true }, { VIDIOC_CREATE_BUFS, true }, { VIDIOC_QUERYBUF, true },
	{ VIDIOC_PREPARE_BUF, true }, { VIDIOC_QBUF, true }, { VIDIOC_DQBUF, true },
	{ VIDIOC_STREAMON, true }, { VIDIOC_STREAMOFF, true },
	{ VIDIOC_V4L2CUSE_ATTACH }, { VIDIOC_V4L2CUSE_INFO },
	/* Real V4L2 commands we do not implement. */
	{ VIDIOC_G_STD }, { VIDIOC_ENUMSTD }, { VIDIOC_G_SELECTION }, { VIDIOC_EXPBUF },
	{ VIDIOC_G_FBUF }, { VIDIOC_G_TUNER }, { VIDIOC_ENUMAUDIO },
};
#define N_KNOWN	36	/* the first N_KNOWN entries are implemented */

enum op {
	OP_OPEN,	/* [flags]: bit 0 O_NONBLOCK, bit 1 shim-attached */
	OP_RELEASE,	/* [slot] */
	OP_IOCTL,	/* [cmd index][slot][mode] rounds... */
	OP_IOCTL_RAW,	/* [cmd u32][slot][mode] rounds... */
	OP_READ,	/* [slot][size u16][flags]: bit 0 O_NONBLOCK, bit 2 interrupt */
	OP_POLL,	/* [slot][events u16][flags]: bit 0 with a poll handle */
	OP_INTERRUPT,	/* [parked index] */
	OP_STEP,	/* [n]: produce up to n % 4 + 1 frames */
	OP_ATTACH,	/* [slot]: the preload shim attaches */
	OP_SWITCH,	/* [spec index]: switch the source or the placeholder */
	N_OPS
};

#define PATTERN_ARGS	",sizes=160x120+96x64+64x48,formats=YUYV+MJPG+NV12+GREY+RGB3,overlay=0"
static const char *const specs[] = {
	"pattern" PATTERN_ARGS,
	"pattern:smpte" PATTERN_ARGS ",fail_produce_every=3,drop_every=5,error_flag_every=4",
	"pattern:black" PATTERN_ARGS ",vanish_after=3",
	"pattern" PATTERN_ARGS ",fail_start=1",
	"pattern" PATTERN_ARGS ",fps=60+5",
};
/* The placeholder of specs[0x80 | i]: it can produce every format the specs offer. */
#define PLACEHOLDER	"pattern:black" PATTERN_ARGS

static struct v4l2cuse_fh *
slot_fh(struct input *in, int *ret_slot)
{
	int s = in_u8(in) % MAX_FH;

	if (ret_slot)
		*ret_slot = s;
	return h.slots[s].fh;
}

static void
op_open(struct input *in)
{
	uint8_t flags = in_u8(in);
	int err = 0;

	for (int s = 0; s < MAX_FH; s++) {
		if (h.slots[s].fh)
			continue;
		h.slots[s].fh = v4l2cuse_fh_open(h.dev, O_RDWR | (flags & 1 ? O_NONBLOCK : 0),
						 getpid(), getuid(), &err);
		fuzz_check(h.slots[s].fh, "open failed: %d", err);
		if (flags & 2)
			v4l2cuse_fh_set_streaming(h.slots[s].fh, true);
		return;
	}
}

static void
op_release(struct input *in)
{
	int s;
	struct v4l2cuse_fh *fh = slot_fh(in, &s);

	/* A parked request holds a file reference: no release before it ends. */
	if (!fh || h.slots[s].parked)
		return;
	v4l2cuse_fh_release(fh);
	h.slots[s].fh = NULL;
}

/* Scatter an ioctl reply over the out iovecs, as the kernel copies it out. */
static void
ioctl_copy_out(const struct iovec *out, size_t n_out, const uint8_t *data, size_t len)
{
	size_t done = 0, off;

	for (size_t i = 0; i < n_out && done < len; i++) {
		size_t n = MIN(out[i].iov_len, len - done);

		if (mem_range((uintptr_t)out[i].iov_base, n, &off))
			memcpy(h.mem + off, data + done, n);
		done += n;
	}
}

static void
op_ioctl(struct input *in, unsigned int cmd, bool known, bool streaming)
{
	int s;
	struct v4l2cuse_fh *fh = slot_fh(in, &s);
	uint8_t mode = in_u8(in);
	static struct iovec iin[CUSE_MAX_IOV], iout[CUSE_MAX_IOV];
	size_t n_in = 0, n_out = 0;

	if (!fh)
		return;
	mem_patch(in);		/* the caller fills its argument */
	for (int round = 1;; round++) {
		size_t in_size = 0, out_size = 0, off;
		struct hreq *r;

		fuzz_check(round <= MAX_ROUNDS, "cmd %#x: still retrying after %d rounds", cmd,
			   MAX_ROUNDS);
		if (n_in > CUSE_MAX_IOV || n_out > CUSE_MAX_IOV)
			return;		/* the kernel: ENOMEM */
		for (size_t i = 0; i < n_in; i++)
			in_size += iin[i].iov_len;
		for (size_t i = 0; i < n_out; i++)
			out_size += iout[i].iov_len;
		if (in_size > CUSE_MAX_IOCTL || out_size > CUSE_MAX_IOCTL)
			return;		/* the kernel: ENOMEM */
		if (round > 1)
			mem_patch(in);	/* another thread of the caller writes */
		in_size = 0;
		for (size_t i = 0; i < n_in; i++) {
			if (!mem_range((uintptr_t)iin[i].iov_base, iin[i].iov_len, &off))
				return;	/* the kernel: EFAULT */
			memcpy(inbuf + in_size, h.mem + off, iin[i].iov_len);
			in_size += iin[i].iov_len;
		}

		r = g_new0(struct hreq, 1);	/* heap: ASan sees stale uses */
		r->base.ops = &hr_ops;
		r->kind = HREQ_IOCTL;
		r->slot = s;
		r->out_size = out_size;
		r->intr_pending = mode & 4;
		struct v4l2cuse_ioctl_args a = {
			.cmd = cmd,
			.arg = mode & 1 ? 0 : FUZZ_BASE + (mode >> 4) * 8,
			.flags = (mode & 0xe) == 0xe ? V4L2CUSE_IOCTL_COMPAT : 0,
			.in = in_size ? inbuf : NULL,
			.in_size = in_size,
			.out_size = out_size,
		};
		v4l2cuse_fh_ioctl(fh, &r->base, &a);
		fuzz_check(r->answers == 1, "cmd %#x round %d: %u answers", cmd, round, r->answers);
		if (r->retried) {
			fuzz_check(!(a.flags & V4L2CUSE_IOCTL_COMPAT), "compat request retried");
			fuzz_check(known, "unknown cmd %#x retried", cmd);
			n_in = r->n_in;
			n_out = r->n_out;
			memcpy(iin, retry_in, MIN(n_in, (size_t)CUSE_MAX_IOV) * sizeof(*iin));
			memcpy(iout, retry_out, MIN(n_out, (size_t)CUSE_MAX_IOV) * sizeof(*iout));
			g_free(r);
			continue;
		}
		if (trace)
			fprintf(stderr, "ioctl %#x slot %d round %d: %s %d len %zu\n", cmd, s,
				round, r->retried ? "retry" : r->parked ? "parked" : "result",
				r->result, r->len);
		if (r->parked) {
			fuzz_check(cmd == VIDIOC_DQBUF, "cmd %#x parked", cmd);
			g_free(r);
			return;
		}
		if (!known || (a.flags & V4L2CUSE_IOCTL_COMPAT) ||
		    (streaming && !fh->streaming_capable))
			fuzz_check(r->result == -ENOTTY, "cmd %#x: %d, not ENOTTY", cmd, r->result);
		ioctl_copy_out(iout, n_out, r->data, r->len);
		g_free(r->data);
		g_free(r);
		return;
	}
}

static void
op_ioctl_table(struct input *in)
{
	unsigned int i = in_u8(in) % G_N_ELEMENTS(cmds);

	op_ioctl(in, cmds[i].cmd, i < N_KNOWN, cmds[i].streaming);
}

static void
op_ioctl_raw(struct input *in)
{
	unsigned int cmd = in_u32(in);
	bool known = false, streaming = false;

	for (unsigned int i = 0; i < N_KNOWN; i++) {
		if (cmds[i].cmd == cmd) {
			known = true;
			streaming = cmds[i].streaming;
		}
	}
	op_ioctl(in, cmd, known, streaming);
}

static void
op_read(struct input *in)
{
	int s;
	struct v4l2cuse_fh *fh = slot_fh(in, &s);
	size_t count = (size_t)in_u16(in) * 4 + 1, done = 0;
	uint8_t flags = in_u8(in);

	if (!fh)
		return;
	while (done < count) {
		size_t chunk = MIN(count - done, (size_t)CUSE_MAX_IOCTL);
		struct hreq *r = g_new0(struct hreq, 1);
		size_t len;

		r->base.ops = &hr_ops;
		r->kind = HREQ_READ;
		r->slot = s;
		r->out_size = chunk;
		r->intr_pending = flags & 4;
		v4l2cuse_fh_read(fh, &r->base, chunk, (off_t)done, flags & 1 ? O_NONBLOCK : 0);
		fuzz_check(r->answers == 1, "read: %u answers", r->answers);
		if (r->parked) {
			fuzz_check(done == 0, "read parked after %zu bytes of the syscall", done);
			g_free(r);
			return;
		}
		len = r->len;
		if (trace)
			fprintf(stderr, "read slot %d %zu+%zu: %s %d len %zu\n", s, done, chunk,
				r->parked ? "parked" : "result", r->result, len);
		g_free(r->data);
		if (r->result < 0) {
			g_free(r);
			return;
		}
		g_free(r);
		done += len;
		if (len < chunk)
			break;		/* a short chunk ends the syscall */
	}
}

static void
op_poll(struct input *in)
{
	int s;
	struct v4l2cuse_fh *fh = slot_fh(in, &s);
	unsigned int events = in_u16(in);
	uint8_t flags = in_u8(in);
	struct hreq *r;
	void *ph = NULL;

	if (!fh)
		return;
	if (flags & 1) {
		ph = g_malloc(1);
		h.poll_handles++;
	}
	r = g_new0(struct hreq, 1);
	r->base.ops = &hr_ops;
	r->kind = HREQ_POLL;
	r->slot = s;
	v4l2cuse_fh_poll(fh, &r->base, events, ph);
	fuzz_check(r->answers == 1, "poll: %u answers", r->answers);
	g_free(r);
}

static void
interrupt(struct hreq *r)
{
	uint64_t before = h.answered;

	fuzz_check(r->intr_fn, "a parked request without an interrupt handler");
	r->intr_fn(&r->base, r->intr_data);
	fuzz_check(h.answered == before + 1, "an interrupted request was not answered");
}

static void
op_interrupt(struct input *in)
{
	unsigned int i = in_u8(in);
	struct hreq *r;

	if (g_queue_is_empty(&h.parked))
		return;
	r = g_queue_peek_nth(&h.parked, i % g_queue_get_length(&h.parked));
	interrupt(r);
}

/* Frames come from a timerfd: fire it now instead of waiting for it. */
static void
op_step(struct input *in)
{
	unsigned int n = in_u8(in) % 4 + 1;

	for (unsigned int i = 0; i < n; i++) {
		struct itimerspec its = { .it_value = { .tv_nsec = 1 } };
		bool armed = h.dev->timer_source && h.dev->timer_fd >= 0 &&
			     timerfd_settime(h.dev->timer_fd, 0, &its, NULL) == 0;

		g_main_context_iteration(NULL, armed);
	}
}

static void
op_attach(struct input *in)
{
	struct v4l2cuse_fh *fh = slot_fh(in, NULL);

	if (fh)
		v4l2cuse_fh_set_streaming(fh, true);
}

static void
op_switch(struct input *in)
{
	uint8_t i = in_u8(in);
	const char *spec = specs[(i >> 1) % G_N_ELEMENTS(specs)];
	g_autofree char *error = NULL;

	if (i & 1)
		v4l2cuse_device_set_placeholder(h.dev, (i & 0x80) ? NULL : spec, &error);
	else
		v4l2cuse_device_set_source(h.dev, spec, &error);
}

/*
 * The fds the default main context watches (its own wake-up fd included):
 * after v4l2cuse_device_free() no timer or wake fd watch may be left.
 */
static int
context_fds(void)
{
	GMainContext *ctx = g_main_context_default();
	GPollFD fds[32];
	gint prio, timeout;
	int n;

	g_main_context_acquire(ctx);
	g_main_context_prepare(ctx, &prio);
	n = g_main_context_query(ctx, G_MAXINT, &timeout, fds, G_N_ELEMENTS(fds));
	for (int i = 0; i < MIN(n, (int)G_N_ELEMENTS(fds)); i++)
		fds[i].revents = 0;
	if (g_main_context_check(ctx, G_MAXINT, fds, MIN(n, (int)G_N_ELEMENTS(fds))))
		g_main_context_dispatch(ctx);
	g_main_context_release(ctx);
	return n;
}

static int idle_fds;

/* ---------------------------------------------------------------------- */

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet_glib(G_LOG_LEVEL_WARNING);	/* "bug: ..." warnings abort */
	trace = g_strcmp0(g_getenv("FUZZ_IOCTL_TRACE"), "1") == 0;
	idle_fds = context_fds();
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size };
	uint8_t spec = in_u8(&in), end = in_u8(&in);
	struct v4l2cuse_device_config cfg = {
		.name = "video99",
		.source = specs[spec % G_N_ELEMENTS(specs)],
		.width = 160,
		.height = 120,
		.pixelformat = V4L2_PIX_FMT_YUYV,
		.placeholder = (spec & 0x80) ? PLACEHOLDER : NULL,
	};
	g_autofree char *error = NULL;

	memset(&h, 0, sizeof(h));
	g_queue_init(&h.parked);
	h.dev = v4l2cuse_device_new(&cfg, &error);
	fuzz_check(h.dev, "device: %s", error);
	v4l2cuse_device_set_poll_ops(h.dev, &poll_ops);

	for (unsigned int i = 0; i < MAX_OPS && in.n; i++) {
		switch (in_u8(&in) % N_OPS) {
		case OP_OPEN: op_open(&in); break;
		case OP_RELEASE: op_release(&in); break;
		case OP_IOCTL: op_ioctl_table(&in); break;
		case OP_IOCTL_RAW: op_ioctl_raw(&in); break;
		case OP_READ: op_read(&in); break;
		case OP_POLL: op_poll(&in); break;
		case OP_INTERRUPT: op_interrupt(&in); break;
		case OP_STEP: op_step(&in); break;
		case OP_ATTACH: op_attach(&in); break;
		case OP_SWITCH: op_switch(&in); break;
		}
	}

	if (trace)
		fprintf(stderr, "end: %u parked, %u poll handles, %d fds watched (idle %d)\n",
			g_queue_get_length(&h.parked), h.poll_handles, context_fds(), idle_fds);
	/* The end: clients killed (interrupt, release) or the daemon shutting down. */
	if (end & 1) {
		while (!g_queue_is_empty(&h.parked))
			interrupt(g_queue_peek_head(&h.parked));
		for (int s = 0; s < MAX_FH; s++)
			if (h.slots[s].fh)
				v4l2cuse_fh_release(h.slots[s].fh);
	}
	v4l2cuse_device_free(h.dev);
	fuzz_check(g_queue_is_empty(&h.parked), "%u requests parked after the device is gone",
		   g_queue_get_length(&h.parked));
	fuzz_check(h.poll_handles == 0, "%u poll handles neither notified nor destroyed",
		   h.poll_handles);
	while (g_main_context_iteration(NULL, FALSE))
		;
	fuzz_check(context_fds() == idle_fds, "%d fds watched after the device is gone, %d before",
		   context_fds(), idle_fds);
	return 0;
}
