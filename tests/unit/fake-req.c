/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The fake CUSE transport (fake-req.h). Like the kernel, it holds the layer
 * to req.h's contract: exactly one answer per request, a reply, a retry
 * round or parking it, and one reply to a parked copy. A second answer, or
 * a request the layer returns from with none, fails the test at once with
 * a message naming the request (tests/fuzz/fuzz-ioctl.c checks the same in
 * its own transport).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <glib.h>

#include "fake-req.h"
#include "req.h"

enum fake_state { FAKE_PENDING, FAKE_RETRY, FAKE_REPLIED, FAKE_PARKED_STATE };

enum fake_kind { FAKE_IOCTL, FAKE_READ, FAKE_WRITE, FAKE_POLL };

struct fake_req {
	struct v4l2cuse_req base;
	enum fake_state state;
	enum fake_kind kind;
	unsigned int cmd;	/* FAKE_IOCTL */
	int round;		/* FAKE_IOCTL: retry round, from 1 */
	size_t size;		/* FAKE_READ/WRITE: the chunk */
	off_t off;		/* FAKE_READ/WRITE: its offset in the syscall */
	int result;
	struct iovec in[8], out[8];
	size_t n_in, n_out;
	uint8_t *data;		/* reply payload (ioctl out or read data) */
	size_t len;
	unsigned int revents;
	bool heap;
	struct fake_parked *parked;	/* heap copies: where the answer goes */
	v4l2cuse_req_interrupt_fn intr_fn;
	void *intr_data;
};

static struct fake_parked last_parked;
static struct fake_req *last_parked_req;
static unsigned int poll_notifications;

/*
 * Answered parked copies stay allocated (reachable from here until the
 * test program exits), so a second answer to one is reported, not a use
 * after free.
 */
static GMutex answered_lock;
static GPtrArray *answered_parked;

/* "ioctl 0xc0585611 (type 'V', nr 17, 88 bytes), round 2" and the like. */
static char *
fake_req_describe(const struct fake_req *fr)
{
	switch (fr->kind) {
	case FAKE_IOCTL:
		return g_strdup_printf("ioctl %#010x (type '%c', nr %u, %u bytes), round %d%s",
				       fr->cmd, g_ascii_isprint((char)_IOC_TYPE(fr->cmd)) ?
				       (char)_IOC_TYPE(fr->cmd) : '?', _IOC_NR(fr->cmd),
				       _IOC_SIZE(fr->cmd), fr->round, fr->heap ? ", parked" : "");
	case FAKE_READ:
	case FAKE_WRITE:
		return g_strdup_printf("%s of %zu bytes at offset %" PRId64 "%s",
				       fr->kind == FAKE_READ ? "read" : "write", fr->size,
				       (int64_t)fr->off, fr->heap ? ", parked" : "");
	case FAKE_POLL:
		return g_strdup("poll");
	}
	return g_strdup("request of an unknown kind");
}

static const char *
fake_state_name(enum fake_state state)
{
	switch (state) {
	case FAKE_PENDING:
		return "no answer";
	case FAKE_RETRY:
		return "a retry";
	case FAKE_REPLIED:
		return "a reply";
	case FAKE_PARKED_STATE:
		return "parking it";
	}
	return "?";
}

/* Fail the test unless @fr is still waiting for its one answer, @what. */
static void
fake_check_first_answer(const struct fake_req *fr, const char *what)
{
	g_autofree char *desc = NULL;

	if (fr->state == FAKE_PENDING)
		return;
	desc = fake_req_describe(fr);
	g_error("fake transport: %s: %s after %s (one answer per request)", desc, what,
		fake_state_name(fr->state));
}

/* Fail the test if the layer returned from @fr without answering it. */
static void
fake_check_answered(const struct fake_req *fr)
{
	g_autofree char *desc = NULL;

	if (fr->state != FAKE_PENDING)
		return;
	desc = fake_req_describe(fr);
	g_error("fake transport: %s: the layer returned without answering or parking it",
		desc);
}

static void (*reply_hook)(void *data);
static void *reply_hook_data;

void
fake_set_reply_hook(void (*fn)(void *data), void *data)
{
	reply_hook = fn;
	reply_hook_data = data;
}

static void
fake_answer(struct fake_req *fr, int result, const void *buf, size_t len, const char *what)
{
	fake_check_first_answer(fr, what);
	if (reply_hook)
		reply_hook(reply_hook_data);	/* the client has its answer now */
	if (fr->heap) {
		fr->state = FAKE_REPLIED;
		fr->parked->answered = true;
		fr->parked->result = result;
		fr->parked->len = len;
		if (last_parked_req == fr)
			last_parked_req = NULL;
		g_mutex_lock(&answered_lock);
		if (!answered_parked)
			answered_parked = g_ptr_array_new_with_free_func(g_free);
		g_ptr_array_add(answered_parked, fr);
		g_mutex_unlock(&answered_lock);
		return;
	}
	fr->state = FAKE_REPLIED;
	fr->result = result;
	fr->data = len ? g_memdup2(buf, len) : NULL;
	fr->len = len;
}

static void
fr_retry(struct v4l2cuse_req *r, const struct iovec *in, size_t n_in,
	 const struct iovec *out, size_t n_out)
{
	struct fake_req *fr = (struct fake_req *)r;

	fake_check_first_answer(fr, "a retry");
	g_assert_false(fr->heap);
	g_assert_cmpuint(n_in, <=, 8);
	g_assert_cmpuint(n_out, <=, 8);
	fr->state = FAKE_RETRY;
	memcpy(fr->in, in, n_in * sizeof(*in));
	memcpy(fr->out, out, n_out * sizeof(*out));
	fr->n_in = n_in;
	fr->n_out = n_out;
}

static void
fr_reply_ioctl(struct v4l2cuse_req *r, int res, const void *buf, size_t len)
{
	fake_answer((struct fake_req *)r, res, buf, len, "an ioctl reply");
}

static void
fr_reply_err(struct v4l2cuse_req *r, int res)
{
	g_assert_cmpint(res, <, 0);
	fake_answer((struct fake_req *)r, res, NULL, 0, "an error reply");
}

static void
fr_reply_data(struct v4l2cuse_req *r, const void *buf, size_t len)
{
	fake_answer((struct fake_req *)r, 0, buf, len, "a data reply");
}

static void
fr_reply_write(struct v4l2cuse_req *r, size_t count)
{
	struct fake_req *fr = (struct fake_req *)r;

	fake_answer(fr, 0, NULL, 0, "a write reply");
	fr->len = count;
}

static void
fr_reply_open(struct v4l2cuse_req *r, void *fh)
{
	fake_answer((struct fake_req *)r, 0, NULL, 0, "an open reply");
}

static void
fr_reply_poll(struct v4l2cuse_req *r, unsigned int revents)
{
	struct fake_req *fr = (struct fake_req *)r;

	fr->revents = revents;
	fake_answer(fr, 0, NULL, 0, "a poll reply");
}

static struct v4l2cuse_req *
fr_park(struct v4l2cuse_req *r)
{
	struct fake_req *fr = (struct fake_req *)r;
	struct fake_req *copy;

	fake_check_first_answer(fr, "parking it");
	g_assert_false(fr->heap);
	copy = g_memdup2(fr, sizeof(*fr));
	fr->state = FAKE_PARKED_STATE;
	copy->heap = true;
	memset(&last_parked, 0, sizeof(last_parked));
	copy->parked = &last_parked;
	last_parked_req = copy;
	return &copy->base;
}

static void
fr_on_interrupt(struct v4l2cuse_req *r, v4l2cuse_req_interrupt_fn fn, void *data)
{
	struct fake_req *fr = (struct fake_req *)r;

	fr->intr_fn = fn;
	fr->intr_data = data;
}

static const struct v4l2cuse_req_ops fr_ops = {
	.retry = fr_retry,
	.reply_ioctl = fr_reply_ioctl,
	.reply_err = fr_reply_err,
	.reply_data = fr_reply_data,
	.reply_write = fr_reply_write,
	.reply_open = fr_reply_open,
	.reply_poll = fr_reply_poll,
	.park = fr_park,
	.on_interrupt = fr_on_interrupt,
};

/* CUSE's limit on one request's data: an ioctl's argument, a read or write chunk. */
#define CUSE_MAX_REQUEST ((size_t)128 * 1024)

/* The request for chunk [@off, @off + @size) of a read() or write(). */
static struct fake_req
fr_chunk(enum fake_kind kind, size_t size, size_t off)
{
	return (struct fake_req){
		.base = { .ops = &fr_ops },
		.kind = kind,
		.size = size,
		.off = (off_t)off,
	};
}

int
fake_ioctl_on(fake_ioctl_fn fn, void *obj, unsigned int cmd, void *arg, int *ret_rounds)
{
	struct iovec in[8], out[8];
	size_t n_in = 0, n_out = 0;

	for (int round = 1; round <= 8; round++) {
		size_t in_size = 0, out_size = 0, off = 0;
		g_autofree uint8_t *inbuf = NULL;
		struct fake_req fr = {
			.base = { .ops = &fr_ops },
			.kind = FAKE_IOCTL,
			.cmd = cmd,
			.round = round,
		};
		int result;

		for (size_t i = 0; i < n_in; i++)
			in_size += in[i].iov_len;
		for (size_t i = 0; i < n_out; i++)
			out_size += out[i].iov_len;
		if (in_size > CUSE_MAX_REQUEST || out_size > CUSE_MAX_REQUEST)
			return -ENOMEM;
		inbuf = g_malloc(MAX(in_size, 1));
		for (size_t i = 0; i < n_in; i++) {
			memcpy(inbuf + off, in[i].iov_base, in[i].iov_len);
			off += in[i].iov_len;
		}
		struct v4l2cuse_ioctl_args a = {
			.cmd = cmd,
			.arg = (unsigned long)arg,
			.in = in_size ? inbuf : NULL,
			.in_size = in_size,
			.out_size = out_size,
		};
		fn(obj, &fr.base, &a);
		fake_check_answered(&fr);
		if (ret_rounds)
			*ret_rounds = round;
		switch (fr.state) {
		case FAKE_RETRY:
			memcpy(in, fr.in, fr.n_in * sizeof(*in));
			memcpy(out, fr.out, fr.n_out * sizeof(*out));
			n_in = fr.n_in;
			n_out = fr.n_out;
			continue;
		case FAKE_PARKED_STATE:
			return FAKE_PARKED;
		case FAKE_REPLIED:
			/* The kernel scatters the reply over the out iovecs; more is EIO. */
			if (fr.len > out_size) {
				g_free(fr.data);
				return -EIO;
			}
			off = 0;
			for (size_t i = 0; i < n_out && off < fr.len; i++) {
				size_t n = MIN(out[i].iov_len, fr.len - off);

				memcpy(out[i].iov_base, fr.data + off, n);
				off += n;
			}
			g_free(fr.data);
			result = fr.result;
			return result;
		case FAKE_PENDING:
			break;
		}
	}
	g_error("fake transport: ioctl %#010x: still asking for memory after 8 rounds", cmd);
	return -EIO;
}

static void
fake_fh_ioctl(void *fh, struct v4l2cuse_req *req, const struct v4l2cuse_ioctl_args *a)
{
	v4l2cuse_fh_ioctl(fh, req, a);
}

int
fake_ioctl_rounds(struct v4l2cuse_fh *fh, unsigned int cmd, void *arg, int *ret_rounds)
{
	return fake_ioctl_on(fake_fh_ioctl, fh, cmd, arg, ret_rounds);
}

int
fake_ioctl(struct v4l2cuse_fh *fh, unsigned int cmd, void *arg)
{
	return fake_ioctl_rounds(fh, cmd, arg, NULL);
}

ssize_t
fake_read(struct v4l2cuse_fh *fh, void *buf, size_t count, int flags)
{
	size_t done = 0;

	while (done < count) {
		size_t chunk = MIN(count - done, CUSE_MAX_REQUEST);
		struct fake_req fr = fr_chunk(FAKE_READ, chunk, done);

		v4l2cuse_fh_read(fh, &fr.base, chunk, (off_t)done, flags);
		fake_check_answered(&fr);
		if (fr.state == FAKE_PARKED_STATE)
			return done ? (ssize_t)done : FAKE_PARKED;
		g_assert_cmpint(fr.state, ==, FAKE_REPLIED);
		if (fr.result < 0) {
			g_free(fr.data);
			return done ? (ssize_t)done : fr.result;
		}
		g_assert_cmpuint(fr.len, <=, chunk);
		memcpy((uint8_t *)buf + done, fr.data, fr.len);
		g_free(fr.data);
		done += fr.len;
		if (fr.len < chunk)
			break;		/* a short chunk ends the syscall */
	}
	return (ssize_t)done;
}

ssize_t
fake_write(struct v4l2cuse_fh *fh, const void *buf, size_t count)
{
	size_t done = 0;

	/* As the kernel: chunks of at most 128 KiB; a short or failed one ends it. */
	while (done < count) {
		size_t chunk = MIN(count - done, CUSE_MAX_REQUEST);
		struct fake_req fr = fr_chunk(FAKE_WRITE, chunk, done);

		v4l2cuse_fh_write(fh, &fr.base, (const uint8_t *)buf + done, chunk, (off_t)done);
		fake_check_answered(&fr);
		g_assert_cmpint(fr.state, ==, FAKE_REPLIED);
		if (fr.result < 0)
			return done ? (ssize_t)done : fr.result;
		g_assert_cmpuint(fr.len, <=, chunk);
		done += fr.len;
		if (fr.len < chunk)
			break;
	}
	return (ssize_t)done;
}

unsigned int
fake_poll(struct v4l2cuse_fh *fh, unsigned int events)
{
	struct fake_req fr = { .base = { .ops = &fr_ops }, .kind = FAKE_POLL };

	v4l2cuse_fh_poll(fh, &fr.base, events, GINT_TO_POINTER(1));
	fake_check_answered(&fr);
	g_assert_cmpint(fr.state, ==, FAKE_REPLIED);
	return fr.revents;
}

struct fake_parked *
fake_last_parked(void)
{
	return &last_parked;
}

void
fake_interrupt_last(void)
{
	struct fake_req *fr = last_parked_req;

	g_assert_nonnull(fr);
	g_assert_nonnull(fr->intr_fn);
	fr->intr_fn(&fr->base, fr->intr_data);
}

static void
fake_poll_notify(void *ph)
{
	poll_notifications++;
}

static void
fake_poll_destroy(void *ph)
{
}

static const struct v4l2cuse_poll_ops fake_poll_ops = {
	.notify = fake_poll_notify,
	.destroy = fake_poll_destroy,
};

unsigned int
fake_poll_notifications(void)
{
	return poll_notifications;
}

void
fake_install_poll_ops(struct v4l2cuse_device *dev)
{
	v4l2cuse_device_set_poll_ops(dev, &fake_poll_ops);
}

struct v4l2cuse_device_config
fake_yuyv_config(const char *name, const char *source, uint32_t w, uint32_t h, unsigned int fps)
{
	return (struct v4l2cuse_device_config){
		.name = name,
		.source = source,
		.width = w,
		.height = h,
		.pixelformat = V4L2_PIX_FMT_YUYV,
		.interval = { 1, fps },
	};
}

struct v4l2cuse_device *
fake_device(const struct v4l2cuse_device_config *cfg)
{
	g_autofree char *err = NULL;
	struct v4l2cuse_device *dev = v4l2cuse_device_new(cfg, &err);

	if (err)
		g_printerr("%s\n", err);
	g_assert_null(err);
	g_assert_nonnull(dev);
	fake_install_poll_ops(dev);
	return dev;
}
