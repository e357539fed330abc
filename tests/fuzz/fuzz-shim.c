/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer harness for the daemon's shim server (daemon/shim.c): messages
 * as the server receives them on its SOCK_SEQPACKET connections, from peers
 * of fuzzed credentials. The input is a little program of ops (see the op
 * enum): attach tokens for one of three handles (opened by this process as
 * our uid, by this process as another uid, by pid 1 as our uid), connect
 * as a fuzzed SO_PEERCRED (v4l2cuse_shim_adopt() on a socketpair, uid ours,
 * another or root, pid ours, 1 or fuzzed), HELLO with an issued token, a
 * replayed one or forged bytes, MAP/UNMAP/STAGING with real or fuzzed
 * offsets and ids, FASTPATH (the handle's shared-memory queue), REQBUFS on
 * a handle, release a handle, and raw messages of any length, optionally
 * carrying an fd of ours.
 *
 * A model follows every token and connection; checked besides
 * ASan/UBSan/LSan:
 * - a HELLO succeeds only with a token that was issued, never presented
 *   before, whose handle is still open, from a peer of that handle's uid
 *   whose process holds the opener thread; forged or replayed tokens and
 *   peers of another uid never attach;
 * - an fd or a successful MAP/STAGING/FASTPATH only on an attached
 *   connection (FASTPATH: two fds, once per handle);
 * - exactly one reply per well-formed request, with its type and seq; a
 *   refused HELLO, a request before HELLO and a malformed message end the
 *   connection;
 * - afterwards no connection, token, mapping or fd of ours is left.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <linux/videodev2.h>

#include "device.h"
#include "shim.h"
#include "fake-req.h"
#include "fuzz-common.h"
#include "fuzz-input.h"

#define N_FH		3
#define MAX_TOKENS	32
#define MAX_BUFS	8
#define MAX_OPS		128

enum op {
	OP_ATTACH,	/* fh */
	OP_HELLO,	/* token index, version byte */
	OP_FORGED,	/* 32 token bytes */
	OP_MAP,		/* buffer index or 8+8 raw bytes */
	OP_UNMAP,	/* map id */
	OP_STAGING,	/* index */
	OP_RAW,		/* length, bytes; optionally with an fd */
	OP_CONNECT,	/* cred byte */
	OP_REQBUFS,	/* fh, memory, count */
	OP_RELEASE,	/* fh: released and opened again */
	OP_FASTPATH,	/* version byte */
	N_OPS
};

struct token {
	uint8_t bytes[V4L2CUSE_SHIM_TOKEN_SIZE];
	int fh;				/* index into fhs[] */
	unsigned int fh_gen;		/* fhs_gen[fh] when issued */
	bool used;
};

static struct v4l2cuse_device *dev;
static struct v4l2cuse_shim *shim;
static char *dir, *sock_path;
static uid_t me;

static struct v4l2cuse_fh *fhs[N_FH];
static unsigned int fhs_gen[N_FH];
static bool fast[N_FH];			/* the handle has its fast path */
static const uid_t fh_uid_delta[N_FH] = { 0, 1, 0 };
static struct token tokens[MAX_TOKENS];
static unsigned int n_tokens;
static struct {
	uint32_t offset, length;
} bufs[MAX_BUFS];
static unsigned int n_bufs;

static struct {
	int fd;				/* our end; -1: none */
	struct ucred cred;
	bool alive;			/* the server has not hung up */
	bool authenticated;
	int fh;				/* bound handle, -1 */
	unsigned int fh_gen;
	uint32_t seq;
} conn = { .fd = -1 };

static void
open_fh(int i)
{
	int r = 0;

	fhs[i] = v4l2cuse_fh_open(dev, O_RDWR, i == 2 ? 1 : getpid(), me + fh_uid_delta[i], &r);
	fuzz_check(fhs[i], "fh_open: %d", r);
	fhs_gen[i]++;
	fast[i] = false;
}

static void
release_fh(int i)
{
	v4l2cuse_fh_release(fhs[i]);
	fhs[i] = NULL;
	if (conn.fh == i)
		conn.fh = -1;		/* the connection stays, unbound */
	if (i == 0)
		n_bufs = 0;		/* only fh 0 allocates buffers here */
}

/* Run the loop until our end is readable (a reply or the hang-up). */
static bool
pump(void)
{
	struct pollfd p = { .fd = conn.fd, .events = POLLIN };

	for (int i = 0; i < 1000; i++) {
		if (poll(&p, 1, 0) > 0)
			return true;
		g_main_context_iteration(NULL, FALSE);
	}
	return poll(&p, 1, 0) > 0;
}

/* Receive what the server sent: 1 a reply, 0 the hang-up; up to two fds. */
static int
receive(struct v4l2cuse_shim_reply *rep, int *ret_fd, int *ret_fd2)
{
	union {
		char buf[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { rep, sizeof(*rep) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			     .msg_controllen = sizeof(u.buf) };
	ssize_t n;

	*ret_fd = -1;
	*ret_fd2 = -1;
	fuzz_check(pump(), "no reply and no hang-up");
	n = recvmsg(conn.fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	if (n <= 0) {
		conn.alive = false;
		return 0;
	}
	fuzz_check(n == sizeof(*rep), "a reply of %zd bytes", n);
	fuzz_check(!(mh.msg_flags & MSG_CTRUNC), "more than 4 fds in one reply");
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		fuzz_check(cm->cmsg_type == SCM_RIGHTS && *ret_fd < 0 &&
			   (cm->cmsg_len == CMSG_LEN(sizeof(int)) ||
			    cm->cmsg_len == CMSG_LEN(2 * sizeof(int))),
			   "a reply with more than two fds");
		memcpy(ret_fd, CMSG_DATA(cm), sizeof(int));
		if (cm->cmsg_len == CMSG_LEN(2 * sizeof(int)))
			memcpy(ret_fd2, CMSG_DATA(cm) + sizeof(int), sizeof(int));
	}
	return 1;
}

static unsigned int
connections(void)
{
	struct v4l2cuse_shim_stats st;

	v4l2cuse_shim_get_stats(shim, &st);
	return st.connections;
}

static void
disconnect(void)
{
	if (conn.fd < 0)
		return;
	close(conn.fd);
	conn.fd = -1;
	/* The server sees the hang-up on one of its next loop iterations. */
	for (int i = 0; i < 100 && connections(); i++)
		g_main_context_iteration(NULL, FALSE);
}

static void
do_connect(uint8_t how)
{
	static const uid_t uid_delta[4] = { 0, 1, 0, 12345 };
	int sv[2];

	disconnect();
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) < 0)
		abort();
	conn.cred.uid = (how & 3) == 2 ? 0 : me + uid_delta[how & 3];
	conn.cred.gid = getgid();
	conn.cred.pid = (how >> 2 & 3) == 0 ? getpid() : (how >> 2 & 3) == 1 ? 1 :
			(how >> 2 & 3) == 2 ? 0 : (pid_t)(how >> 4) + 2;
	conn.fd = sv[0];
	conn.alive = v4l2cuse_shim_adopt(shim, sv[1], &conn.cred) == 0;
	conn.authenticated = false;
	conn.fh = -1;
	conn.seq = 0;
}

/* Whether the server may accept a HELLO with token @t from the peer. */
static bool
hello_allowed(const struct token *t)
{
	char path[64];
	pid_t opener = t->fh == 2 ? 1 : getpid();

	if (t->used || !fhs[t->fh] || fhs_gen[t->fh] != t->fh_gen ||
	    conn.cred.uid != me + fh_uid_delta[t->fh] || conn.cred.pid <= 0)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/task/%d", (int)conn.cred.pid, (int)opener);
	return access(path, F_OK) == 0;
}

/* Send @req (@len bytes, maybe with @pass_fd) and check the answer. */
static void
call(const void *req, size_t len, int pass_fd, const struct token *t)
{
	struct v4l2cuse_shim_request r = { 0 };
	struct v4l2cuse_shim_reply rep;
	bool was_auth = conn.authenticated, well_formed = len == sizeof(r);
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { (void *)req, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	int fd, fd2, got;

	if (conn.fd < 0 || !conn.alive)
		return;
	memcpy(&r, req, MIN(len, sizeof(r)));
	if (pass_fd >= 0) {
		struct cmsghdr *cm;

		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = sizeof(u.buf);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &pass_fd, sizeof(int));
	}
	if (sendmsg(conn.fd, &mh, MSG_NOSIGNAL) != (ssize_t)len) {
		conn.alive = false;
		return;
	}
	got = receive(&rep, &fd, &fd2);
	if (!got) {
		/* Hung up without a reply: only for a malformed message. */
		fuzz_check(!well_formed, "no reply to a %zu-byte request type %u", len, r.type);
		return;
	}
	fuzz_check(well_formed, "a reply to a malformed %zu-byte message", len);
	fuzz_check(rep.type == r.type && rep.seq == r.seq, "reply %u/%u to request %u/%u",
		   rep.type, rep.seq, r.type, r.seq);
	fuzz_check(rep.status <= 0 && rep.status > -4096, "status %d", rep.status);
	if (fd >= 0) {
		fuzz_check(was_auth && rep.status == 0 && (r.type == V4L2CUSE_SHIM_MAP ||
							   r.type == V4L2CUSE_SHIM_STAGING ||
							   r.type == V4L2CUSE_SHIM_FASTPATH),
			   "an fd for request %u (status %d) on a connection %s", r.type,
			   rep.status, was_auth ? "attached" : "never attached");
		fuzz_check((fd2 >= 0) == (r.type == V4L2CUSE_SHIM_FASTPATH),
			   "request %u answered with %d fds", r.type, fd2 >= 0 ? 2 : 1);
		close(fd);
		if (fd2 >= 0)
			close(fd2);
	}
	if (r.type == V4L2CUSE_SHIM_FASTPATH && rep.status == 0) {
		fuzz_check(fd >= 0 && conn.fh >= 0 && fhs[conn.fh] && fhs_gen[conn.fh] == conn.fh_gen,
			   "a fast path without its fds or for a released handle");
		fuzz_check(!fast[conn.fh], "a second fast path for one handle");
		fast[conn.fh] = true;
	}
	if (r.type == V4L2CUSE_SHIM_HELLO) {
		bool consumed = !was_auth && r.hello.version == V4L2CUSE_SHIM_VERSION;
		bool allowed = consumed && t && hello_allowed(t);

		if (rep.status == 0) {
			fuzz_check(t, "a forged token was accepted");
			fuzz_check(allowed, "HELLO accepted: token %s, handle %d %s, peer uid %u "
				   "pid %d, opener uid %u", t->used ? "replayed" : "fresh", t->fh,
				   fhs[t->fh] && fhs_gen[t->fh] == t->fh_gen ? "open" : "gone",
				   (unsigned int)conn.cred.uid, (int)conn.cred.pid,
				   (unsigned int)(me + fh_uid_delta[t->fh]));
			conn.authenticated = true;
			conn.fh = t->fh;
			conn.fh_gen = t->fh_gen;
		} else {
			fuzz_check(!allowed, "HELLO refused (%d) though allowed", rep.status);
		}
		if (consumed && t)
			((struct token *)t)->used = true;
	} else {
		fuzz_check(was_auth || rep.status == -EACCES, "request %u before HELLO: %d",
			   r.type, rep.status);
		if ((r.type == V4L2CUSE_SHIM_MAP || r.type == V4L2CUSE_SHIM_STAGING) &&
		    rep.status == 0)
			fuzz_check(conn.fh >= 0 && fhs[conn.fh] && fhs_gen[conn.fh] == conn.fh_gen,
				   "buffers for a released handle");
	}
	if (!conn.authenticated) {
		/* Anything refused before HELLO ends the connection. */
		fuzz_check(receive(&rep, &fd, &fd2) == 0, "still connected after a refusal");
	}
}

static void
send_request(struct v4l2cuse_shim_request *req, const struct token *t)
{
	req->seq = ++conn.seq;
	call(req, sizeof(*req), -1, t);
}

static void
do_reqbufs(struct fuzz_input *in)
{
	int i = fuzz_in_u8(in) % N_FH;
	uint8_t m = fuzz_in_u8(in);
	struct v4l2_requestbuffers rb = {
		.count = m >> 2 & 7, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
		.memory = m & 1 ? V4L2_MEMORY_USERPTR : V4L2_MEMORY_MMAP,
	};

	if (!fhs[i] || fake_ioctl(fhs[i], VIDIOC_REQBUFS, &rb) != 0 || i != 0)
		return;
	n_bufs = 0;
	for (unsigned int k = 0; k < MIN(rb.count, MAX_BUFS); k++) {
		struct v4l2_buffer b = { .index = k, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					 .memory = rb.memory };

		if (fake_ioctl(fhs[i], VIDIOC_QUERYBUF, &b) == 0) {
			bufs[n_bufs].offset = rb.memory == V4L2_MEMORY_MMAP ? b.m.offset : 0;
			bufs[n_bufs++].length = b.length;
		}
	}
}

static void
do_attach(int i)
{
	struct v4l2cuse_shim_attach a = { .magic = V4L2CUSE_SHIM_MAGIC,
					  .version = V4L2CUSE_SHIM_VERSION };
	struct token *t;

	if (!fhs[i] || n_tokens >= MAX_TOKENS)
		return;
	fuzz_check(fake_ioctl(fhs[i], VIDIOC_V4L2CUSE_ATTACH, &a) == 0, "attach failed");
	t = &tokens[n_tokens++];
	memcpy(t->bytes, a.token, sizeof(t->bytes));
	t->fh = i;
	t->fh_gen = fhs_gen[i];
	t->used = false;
	/* Issuing more than the limit drops the oldest unused one of the handle. */
	for (unsigned int k = 0, n = 0; k + 1 < n_tokens; k++) {
		struct token *o = &tokens[n_tokens - 2 - k];

		if (o->fh == i && o->fh_gen == t->fh_gen && !o->used &&
		    ++n >= V4L2CUSE_SHIM_MAX_TOKENS_PER_FH)
			o->used = true;
	}
}

static void
run(struct fuzz_input *in)
{
	for (unsigned int n = 0; n < MAX_OPS && in->p < in->end; n++) {
		struct v4l2cuse_shim_request req = { 0 };
		uint8_t b;

		switch (fuzz_in_u8(in) % N_OPS) {
		case OP_ATTACH:
			do_attach(fuzz_in_u8(in) % N_FH);
			break;
		case OP_HELLO:
			b = fuzz_in_u8(in);
			req.type = V4L2CUSE_SHIM_HELLO;
			req.hello.version = b & 0x80 ? b : V4L2CUSE_SHIM_VERSION;
			if (n_tokens) {
				const struct token *t = &tokens[b % n_tokens];

				memcpy(req.hello.token, t->bytes, sizeof(req.hello.token));
				send_request(&req, t);
			}
			break;
		case OP_FORGED:
			req.type = V4L2CUSE_SHIM_HELLO;
			req.hello.version = V4L2CUSE_SHIM_VERSION;
			fuzz_in_bytes(in, req.hello.token, sizeof(req.hello.token));
			send_request(&req, NULL);
			break;
		case OP_MAP:
			b = fuzz_in_u8(in);
			req.type = V4L2CUSE_SHIM_MAP;
			if (b & 0x80 || !n_bufs) {
				fuzz_in_bytes(in, &req.map.offset, sizeof(req.map.offset));
				fuzz_in_bytes(in, &req.map.length, sizeof(req.map.length));
			} else {
				req.map.offset = bufs[b % n_bufs].offset;
				req.map.length = bufs[b % n_bufs].length - (b & 0x40 ? 1 : 0);
			}
			send_request(&req, NULL);
			break;
		case OP_UNMAP:
			req.type = V4L2CUSE_SHIM_UNMAP;
			req.unmap.map_id = fuzz_in_u8(in);
			send_request(&req, NULL);
			break;
		case OP_STAGING:
			req.type = V4L2CUSE_SHIM_STAGING;
			req.staging.index = fuzz_in_u8(in);
			send_request(&req, NULL);
			break;
		case OP_RAW: {
			uint8_t raw[2 * sizeof(req)];
			size_t len;

			b = fuzz_in_u8(in);
			len = (b & 0x7f) % sizeof(raw);
			fuzz_in_bytes(in, raw, len);
			/* A sent fd: the server has no control buffer, the kernel drops it. */
			call(raw, len, b & 0x80 ? STDERR_FILENO : -1, NULL);
			break;
		}
		case OP_CONNECT:
			do_connect(fuzz_in_u8(in));
			break;
		case OP_REQBUFS:
			do_reqbufs(in);
			break;
		case OP_RELEASE:
			b = fuzz_in_u8(in) % N_FH;
			release_fh(b);
			open_fh(b);
			break;
		case OP_FASTPATH:
			b = fuzz_in_u8(in);
			req.type = V4L2CUSE_SHIM_FASTPATH;
			req.fastpath.version = b & 0x80 ? b : V4L2CUSE_FP_VERSION;
			send_request(&req, NULL);
			break;
		}
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
fuzz_cleanup(void)
{
	v4l2cuse_shim_free(shim);
	v4l2cuse_device_free(dev);
	g_rmdir(dir);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct v4l2cuse_device_config cfg = fake_yuyv_config("video42", "pattern", 320, 240, 30);
	g_autofree char *err = NULL;

	fuzz_quiet_glib(G_LOG_LEVEL_WARNING);
	me = getuid();
	dev = fake_device(&cfg);
	dir = g_dir_make_tmp("fuzz-shim-XXXXXX", NULL);
	if (!dir)
		abort();
	g_setenv("RUNTIME_DIRECTORY", dir, TRUE);
	sock_path = v4l2cuse_shim_socket_path("video42", &err);
	shim = sock_path ? v4l2cuse_shim_new(dev, sock_path, &err) : NULL;
	fuzz_check(shim, "shim: %s", err);
	atexit(fuzz_cleanup);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input in = { data, data + size };
	struct v4l2cuse_shim_stats st;
	unsigned int fds = fuzz_count_fds();

	for (int i = 0; i < N_FH; i++)
		open_fh(i);
	n_tokens = 0;
	n_bufs = 0;
	do_connect(0);
	run(&in);
	disconnect();
	for (int i = 0; i < N_FH; i++)
		release_fh(i);
	for (int i = 0; i < 100 && connections(); i++)
		g_main_context_iteration(NULL, FALSE);

	v4l2cuse_shim_get_stats(shim, &st);
	fuzz_check(st.connections == 0 && st.tokens == 0 && st.mappings == 0,
		   "left: %u connections, %u tokens, %u mappings", st.connections, st.tokens,
		   st.mappings);
	fuzz_check(fuzz_count_fds() == fds, "fds: %u before, %u after", fds, fuzz_count_fds());
	return 0;
}
