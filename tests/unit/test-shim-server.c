/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The daemon's shim server (daemon/shim.c) over a real unix socket, with the
 * device driven through the fake CUSE transport: the attach ioctl (ENOTTY
 * in round one without a server), token and credential checks and their
 * refusals, MAP/UNMAP and V4L2_BUF_FLAG_MAPPED, orphaned buffers, USERPTR
 * staging memfds, and that nothing of a client remains once it is gone.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <glib.h>
#include <linux/videodev2.h>

#include "device.h"
#include "shim.h"
#include "sandbox.h"
#include "fake-req.h"
#include "test-main.h"

struct fixture {
	char *dir;
	char *path;
	struct v4l2cuse_device *dev;
	struct v4l2cuse_shim *shim;
	struct v4l2cuse_fh *fh;
};

static void
fixture_setup(struct fixture *f, gconstpointer data)
{
	struct v4l2cuse_device_config cfg = fake_yuyv_config("video42", "pattern", 320, 240, 30);
	g_autofree char *err = NULL;
	int r = 0;

	f->dev = fake_device(&cfg);
	f->dir = g_dir_make_tmp("shim-server-XXXXXX", NULL);
	g_assert_nonnull(f->dir);
	g_setenv("RUNTIME_DIRECTORY", f->dir, TRUE);
	f->path = v4l2cuse_shim_socket_path("video42", &err);
	g_assert_null(err);
	g_assert_nonnull(f->path);
	f->shim = v4l2cuse_shim_new(f->dev, f->path, &err);
	g_assert_null(err);
	g_assert_nonnull(f->shim);
	/* Opened by this process's main thread, as this uid. */
	f->fh = v4l2cuse_fh_open(f->dev, O_RDWR, getpid(), getuid(), &r);
	g_assert_nonnull(f->fh);
}

static void
fixture_teardown(struct fixture *f, gconstpointer data)
{
	if (f->fh)
		v4l2cuse_fh_release(f->fh);
	v4l2cuse_shim_free(f->shim);
	g_assert_false(g_file_test(f->path, G_FILE_TEST_EXISTS));
	v4l2cuse_device_free(f->dev);
	rmdir(f->dir);
	g_free(f->dir);
	g_free(f->path);
}

V4L2CUSE_TEST_FIXTURE(struct fixture, fixture_setup, fixture_teardown);

static struct v4l2cuse_shim_stats
stats(struct fixture *f)
{
	struct v4l2cuse_shim_stats st;

	v4l2cuse_shim_get_stats(f->shim, &st);
	return st;
}

/* Run the loop until @sock has something to read (a reply or EOF). */
static void
wait_readable(int sock)
{
	gint64 end = g_get_monotonic_time() + 5 * G_USEC_PER_SEC;
	struct pollfd p = { .fd = sock, .events = POLLIN };

	while (poll(&p, 1, 0) == 0) {
		g_assert_cmpint(g_get_monotonic_time(), <, end);
		if (!g_main_context_iteration(NULL, FALSE))
			g_usleep(1000);
	}
}

static int
client_connect(struct fixture *f)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	g_strlcpy(sa.sun_path, f->path, sizeof(sa.sun_path));
	g_assert_no_errno(connect(sock, (struct sockaddr *)&sa, sizeof(sa)));
	return sock;
}

/* One request; the reply's status, or -ECONNRESET if the server hung up. */
static int
client_call(int sock, struct v4l2cuse_shim_request *req, struct v4l2cuse_shim_reply *rep,
	    int *ret_fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { rep, sizeof(*rep) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			     .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *cm;
	ssize_t n;

	if (ret_fd)
		*ret_fd = -1;
	req->seq++;
	if (send(sock, req, sizeof(*req), MSG_NOSIGNAL) != sizeof(*req))
		return -ECONNRESET;
	wait_readable(sock);
	n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	if (n <= 0)
		return -ECONNRESET;
	g_assert_cmpint(n, ==, sizeof(*rep));
	g_assert_cmpuint(rep->seq, ==, req->seq);
	g_assert_cmpuint(rep->type, ==, req->type);
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		int fd;

		g_assert_cmpint(cm->cmsg_type, ==, SCM_RIGHTS);
		memcpy(&fd, CMSG_DATA(cm), sizeof(int));
		g_assert_nonnull(ret_fd);
		*ret_fd = fd;
	}
	return rep->status;
}

static void
attach(struct fixture *f, struct v4l2cuse_fh *fh, struct v4l2cuse_shim_attach *a)
{
	memset(a, 0, sizeof(*a));
	a->magic = V4L2CUSE_SHIM_MAGIC;
	a->version = V4L2CUSE_SHIM_VERSION;
	g_assert_cmpint(fake_ioctl(fh, VIDIOC_V4L2CUSE_ATTACH, a), ==, 0);
}

static int
hello(int sock, const struct v4l2cuse_shim_attach *a)
{
	struct v4l2cuse_shim_request req = { .type = V4L2CUSE_SHIM_HELLO };
	struct v4l2cuse_shim_reply rep;

	req.hello.version = V4L2CUSE_SHIM_VERSION;
	memcpy(req.hello.token, a->token, sizeof(req.hello.token));
	return client_call(sock, &req, &rep, NULL);
}

/* Attach @fh: the connection, the HELLO's status in *ret. */
static int
connect_fh_status(struct fixture *f, struct v4l2cuse_fh *fh, int *ret)
{
	struct v4l2cuse_shim_attach a;
	int sock;

	attach(f, fh, &a);
	sock = client_connect(f);
	*ret = hello(sock, &a);
	return sock;
}

/* Attach @fh and return an authenticated connection. */
static int
connect_fh(struct fixture *f, struct v4l2cuse_fh *fh)
{
	int r, sock = connect_fh_status(f, fh, &r);

	g_assert_cmpint(r, ==, 0);
	return sock;
}

static bool
has_streaming(struct v4l2cuse_fh *fh)
{
	struct v4l2_capability cap;

	g_assert_cmpint(fake_ioctl(fh, VIDIOC_QUERYCAP, &cap), ==, 0);
	return cap.device_caps & V4L2_CAP_STREAMING;
}

V4L2CUSE_TEST_F("/shim-server/attach", test_attach)
{
	struct v4l2cuse_shim_attach a, b;
	struct stat st;
	int sock;

	/* The socket: mode 0666 in a 0755 directory of ours. */
	g_assert_no_errno(stat(f->path, &st));
	g_assert_true(S_ISSOCK(st.st_mode));
	g_assert_cmpint(st.st_mode & 0777, ==, 0666);

	attach(f, f->fh, &a);
	g_assert_cmpstr(a.socket_path, ==, f->path);
	attach(f, f->fh, &b);
	g_assert_true(memcmp(a.token, b.token, sizeof(a.token)) != 0);
	g_assert_cmpuint(stats(f).tokens, ==, 2);
	/* The handle is plain until a connection authenticates. */
	g_assert_false(has_streaming(f->fh));

	sock = client_connect(f);
	g_assert_cmpint(hello(sock, &a), ==, 0);
	g_assert_true(has_streaming(f->fh));
	g_assert_cmpuint(stats(f).tokens, ==, 1);
	g_assert_cmpuint(stats(f).authenticated, ==, 1);
	/* A second HELLO on the same connection is refused, nothing else happens. */
	g_assert_cmpint(hello(sock, &b), ==, -EALREADY);
	close(sock);
	while (stats(f).connections)
		g_main_context_iteration(NULL, TRUE);
	/* Release revokes the handle's unused token. */
	v4l2cuse_fh_release(f->fh);
	f->fh = NULL;
	g_assert_cmpuint(stats(f).tokens, ==, 0);
}

V4L2CUSE_TEST_F("/shim-server/attach-errors", test_attach_errors)
{
	struct v4l2cuse_shim_attach a = { 0 };
	int rounds = 0;

	/* Wrong magic or version. */
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_V4L2CUSE_ATTACH, &a), ==, -EINVAL);
	a.magic = V4L2CUSE_SHIM_MAGIC;
	a.version = 99;
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_V4L2CUSE_ATTACH, &a), ==, -EPROTONOSUPPORT);
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_V4L2CUSE_ATTACH, NULL), ==, -EFAULT);
	/* At most a few unused tokens per handle: the oldest goes. */
	for (int i = 0; i < 10; i++)
		attach(f, f->fh, &a);
	g_assert_cmpuint(stats(f).tokens, ==, V4L2CUSE_SHIM_MAX_TOKENS_PER_FH);

	/* Without the server: ENOTTY in round one, nothing written. */
	v4l2cuse_shim_free(f->shim);
	f->shim = NULL;
	memset(&a, 0, sizeof(a));
	a.magic = V4L2CUSE_SHIM_MAGIC;
	g_assert_cmpint(fake_ioctl_rounds(f->fh, VIDIOC_V4L2CUSE_ATTACH, &a, &rounds), ==,
			-ENOTTY);
	g_assert_cmpint(rounds, ==, 1);
	g_assert_cmpuint(a.version, ==, 0);
	/* Recreate for teardown. */
	{
		g_autofree char *err = NULL;

		f->shim = v4l2cuse_shim_new(f->dev, f->path, &err);
		g_assert_nonnull(f->shim);
	}
}

/* Refusals: a garbage or reused token, another uid, another process. */
V4L2CUSE_TEST_F("/shim-server/refusals", test_refusals)
{
	struct v4l2cuse_shim_attach a;
	struct v4l2cuse_shim_request req = { .type = V4L2CUSE_SHIM_MAP };
	struct v4l2cuse_shim_reply rep;
	struct v4l2cuse_fh *other_uid, *other_pid;
	int sock, r = 0;

	/* Anything before HELLO: refused and disconnected. */
	sock = client_connect(f);
	g_assert_cmpint(client_call(sock, &req, &rep, NULL), ==, -EACCES);
	g_assert_cmpint(client_call(sock, &req, &rep, NULL), ==, -ECONNRESET);
	close(sock);

	/* A token nobody issued. */
	memset(&a, 0x5a, sizeof(a));
	sock = client_connect(f);
	g_assert_cmpint(hello(sock, &a), ==, -EACCES);
	close(sock);

	/* A used token. */
	attach(f, f->fh, &a);
	sock = client_connect(f);
	g_assert_cmpint(hello(sock, &a), ==, 0);
	close(sock);
	sock = client_connect(f);
	g_assert_cmpint(hello(sock, &a), ==, -EACCES);
	close(sock);

	/* A handle opened by another user: our uid does not match. */
	other_uid = v4l2cuse_fh_open(f->dev, O_RDWR, getpid(), getuid() + 1000, &r);
	attach(f, other_uid, &a);
	sock = client_connect(f);
	g_assert_cmpint(hello(sock, &a), ==, -EACCES);
	close(sock);
	/* The attempt burnt the token: the real owner can't use it either. */
	g_assert_cmpuint(stats(f).tokens, ==, 0);
	g_assert_false(has_streaming(other_uid));

	/* A handle opened by a thread of another process (pid 1's). */
	other_pid = v4l2cuse_fh_open(f->dev, O_RDWR, 1, getuid(), &r);
	attach(f, other_pid, &a);
	sock = client_connect(f);
	g_assert_cmpint(hello(sock, &a), ==, -EACCES);
	close(sock);
	g_assert_false(has_streaming(other_pid));

	/* A malformed message ends the connection. */
	sock = client_connect(f);
	g_assert_cmpint(send(sock, "x", 1, 0), ==, 1);
	wait_readable(sock);
	{
		char c;

		g_assert_cmpint(recv(sock, &c, 1, MSG_DONTWAIT), ==, 0);
	}
	close(sock);

	g_assert_cmpuint(stats(f).refused, ==, 4);
	while (stats(f).connections)
		g_main_context_iteration(NULL, TRUE);
	v4l2cuse_fh_release(other_uid);
	v4l2cuse_fh_release(other_pid);
}

static uint32_t
querybuf_flags(struct v4l2cuse_fh *fh, unsigned int index, uint32_t memory)
{
	struct v4l2_buffer b = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = memory,
				 .index = index };

	g_assert_cmpint(fake_ioctl(fh, VIDIOC_QUERYBUF, &b), ==, 0);
	return b.flags;
}

static int
map(int sock, uint64_t offset, uint64_t length, struct v4l2cuse_shim_reply *rep, int *ret_fd)
{
	struct v4l2cuse_shim_request req = { .type = V4L2CUSE_SHIM_MAP };

	req.map.offset = offset;
	req.map.length = length;
	return client_call(sock, &req, rep, ret_fd);
}

static int
unmap(int sock, uint64_t map_id)
{
	struct v4l2cuse_shim_request req = { .type = V4L2CUSE_SHIM_UNMAP };
	struct v4l2cuse_shim_reply rep;

	req.unmap.map_id = map_id;
	return client_call(sock, &req, &rep, NULL);
}

V4L2CUSE_TEST_F("/shim-server/map", test_map)
{
	struct v4l2_requestbuffers rb = { .count = 3, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					  .memory = V4L2_MEMORY_MMAP };
	struct v4l2_buffer b = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP,
				 .index = 1 };
	struct v4l2cuse_shim_reply rep;
	struct v4l2cuse_fh *other;
	struct stat st;
	int sock = connect_fh(f, f->fh), fd, fd2, r = 0, sock2;
	uint8_t *p;

	/* No buffers yet. */
	g_assert_cmpint(map(sock, 0, 153600, &rep, &fd), ==, -EINVAL);
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_REQBUFS, &rb), ==, 0);
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_QUERYBUF, &b), ==, 0);
	g_assert_cmpuint(b.m.offset % 4096, ==, 0);

	/* Not a cookie, or not the buffer's length. */
	g_assert_cmpint(map(sock, b.m.offset + 0xdeadb000, b.length, &rep, &fd), ==, -EINVAL);
	g_assert_cmpint(map(sock, b.m.offset, b.length + 1, &rep, &fd), ==, -EINVAL);
	g_assert_cmpint(map(sock, (uint64_t)1 << 32, b.length, &rep, &fd), ==, -EINVAL);
	g_assert_cmpint(fd, ==, -1);

	g_assert_cmpint(map(sock, b.m.offset, b.length, &rep, &fd), ==, 0);
	g_assert_cmpint(fd, >=, 0);
	g_assert_cmpuint(rep.index, ==, 1);
	g_assert_no_errno(fstat(fd, &st));
	g_assert_cmpint(st.st_size, >=, b.length);
	/* Sealed: the client can't shrink it under the producer. */
	g_assert_cmpint(ftruncate(fd, 0), ==, -1);
	p = mmap(NULL, b.length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	g_assert_true(p != MAP_FAILED);
	close(fd);
	g_assert_true(querybuf_flags(f->fh, 1, V4L2_MEMORY_MMAP) & V4L2_BUF_FLAG_MAPPED);
	g_assert_false(querybuf_flags(f->fh, 0, V4L2_MEMORY_MMAP) & V4L2_BUF_FLAG_MAPPED);
	g_assert_cmpuint(stats(f).mappings, ==, 1);

	/* A second mapping of the same buffer: counted twice. */
	g_assert_cmpint(map(sock, b.m.offset, b.length, &rep, &fd2), ==, 0);
	close(fd2);
	g_assert_cmpint(unmap(sock, rep.map_id), ==, 0);
	g_assert_cmpint(unmap(sock, rep.map_id), ==, -EINVAL);
	g_assert_true(querybuf_flags(f->fh, 1, V4L2_MEMORY_MMAP) & V4L2_BUF_FLAG_MAPPED);

	/* Another user's handle never gets this handle's buffers. */
	other = v4l2cuse_fh_open(f->dev, O_RDWR, getpid(), getuid() + 1, &r);
	v4l2cuse_fh_set_streaming(other, true);
	{
		/* (A connection bound to it by hand: HELLO would refuse it.) */
		struct v4l2cuse_shim_attach a;

		attach(f, other, &a);
		sock2 = client_connect(f);
		g_assert_cmpint(hello(sock2, &a), ==, -EACCES);
		close(sock2);
	}
	v4l2cuse_fh_release(other);

	/* Disconnecting drops every record and count of the connection. */
	close(sock);
	while (stats(f).connections)
		g_main_context_iteration(NULL, TRUE);
	g_assert_cmpuint(stats(f).mappings, ==, 0);
	g_assert_false(querybuf_flags(f->fh, 1, V4L2_MEMORY_MMAP) & V4L2_BUF_FLAG_MAPPED);
	munmap(p, b.length);
}

/* REQBUFS(0) while mapped succeeds (orphaned buffers); old records are inert. */
V4L2CUSE_TEST_F("/shim-server/orphans", test_orphans)
{
	struct v4l2_requestbuffers rb = { .count = 2, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					  .memory = V4L2_MEMORY_MMAP };
	struct v4l2_buffer b = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP };
	struct v4l2cuse_shim_reply rep;
	int sock = connect_fh(f, f->fh), fd;
	uint64_t old_id;
	uint8_t *p;

	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_REQBUFS, &rb), ==, 0);
	g_assert_true(rb.capabilities & V4L2_BUF_CAP_SUPPORTS_ORPHANED_BUFS);
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_QUERYBUF, &b), ==, 0);
	g_assert_cmpint(map(sock, b.m.offset, b.length, &rep, &fd), ==, 0);
	old_id = rep.map_id;
	p = mmap(NULL, b.length, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	g_assert_true(p != MAP_FAILED);

	rb.count = 0;
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_REQBUFS, &rb), ==, 0);
	rb.count = 2;
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_REQBUFS, &rb), ==, 0);
	g_assert_false(querybuf_flags(f->fh, 0, V4L2_MEMORY_MMAP) & V4L2_BUF_FLAG_MAPPED);
	/* The orphan's mapping still reads; unmapping it leaves the new buffer alone. */
	g_assert_cmpint(p[0] | 1, !=, 0);
	g_assert_cmpint(map(sock, b.m.offset, b.length, &rep, &fd), ==, 0);
	close(fd);
	g_assert_cmpint(unmap(sock, old_id), ==, 0);
	g_assert_true(querybuf_flags(f->fh, 0, V4L2_MEMORY_MMAP) & V4L2_BUF_FLAG_MAPPED);
	munmap(p, b.length);

	/* Release: the queue goes, the connection stays until the client drops it. */
	v4l2cuse_fh_release(f->fh);
	f->fh = NULL;
	g_assert_cmpint(map(sock, b.m.offset, b.length, &rep, &fd), ==, -EBADF);
	close(sock);
	while (stats(f).connections)
		g_main_context_iteration(NULL, TRUE);
}

V4L2CUSE_TEST_F("/shim-server/staging", test_staging)
{
	struct v4l2_requestbuffers rb = { .count = 2, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					  .memory = V4L2_MEMORY_USERPTR };
	struct v4l2cuse_shim_request req = { .type = V4L2CUSE_SHIM_STAGING };
	struct v4l2cuse_shim_reply rep;
	struct v4l2cuse_fh *second;
	int sock = connect_fh(f, f->fh), fd, r = 0, sock2;

	/* MMAP buffers are not handed out as staging memory. */
	rb.memory = V4L2_MEMORY_MMAP;
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_REQBUFS, &rb), ==, 0);
	req.staging.index = 0;
	g_assert_cmpint(client_call(sock, &req, &rep, &fd), ==, -EINVAL);
	rb.count = 0;
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_REQBUFS, &rb), ==, 0);

	rb.count = 2;
	rb.memory = V4L2_MEMORY_USERPTR;
	g_assert_cmpint(fake_ioctl(f->fh, VIDIOC_REQBUFS, &rb), ==, 0);
	g_assert_cmpint(client_call(sock, &req, &rep, &fd), ==, 0);
	g_assert_cmpint(fd, >=, 0);
	g_assert_cmpuint(rep.length, >=, 153600);
	close(fd);
	req.staging.index = 7;
	g_assert_cmpint(client_call(sock, &req, &rep, &fd), ==, -EINVAL);

	/* Only the owner's connection gets them. */
	second = v4l2cuse_fh_open(f->dev, O_RDWR, getpid(), getuid(), &r);
	sock2 = connect_fh(f, second);
	req.staging.index = 0;
	g_assert_cmpint(client_call(sock2, &req, &rep, &fd), ==, -EACCES);
	close(sock2);
	close(sock);
	while (stats(f).connections)
		g_main_context_iteration(NULL, TRUE);
	v4l2cuse_fh_release(second);
}

/* Connections that never say HELLO are closed after a timeout. */
V4L2CUSE_TEST_F("/shim-server/pending-limit", test_pending_limit)
{
	int socks[V4L2CUSE_SHIM_MAX_PENDING + 4];
	unsigned int n;

	for (size_t i = 0; i < G_N_ELEMENTS(socks); i++) {
		socks[i] = client_connect(f);
		/* Let the server accept (the listen backlog is finite). */
		while (g_main_context_iteration(NULL, FALSE))
			;
	}
	n = stats(f).connections;
	g_assert_cmpuint(n, <=, V4L2CUSE_SHIM_MAX_PENDING);
	for (size_t i = 0; i < G_N_ELEMENTS(socks); i++)
		close(socks[i]);
	while (stats(f).connections)
		g_main_context_iteration(NULL, TRUE);
}

/* A connection from another uid (@uid), adopted as if accepted: the client's end. */
static int
adopt_as(struct fixture *f, uid_t uid)
{
	struct ucred cred = { .pid = 1, .uid = uid, .gid = getgid() };
	int sv[2];

	g_assert_no_errno(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0,
				     sv));
	v4l2cuse_shim_adopt(f->shim, sv[1], &cred);
	return sv[0];
}

static bool
hung_up(int sock)
{
	char c;

	return recv(sock, &c, 1, MSG_DONTWAIT) == 0;
}

/* Attach f->fh and say HELLO; the µs it took, the HELLO's status in *ret. */
static gint64
timed_attach(struct fixture *f, int *ret)
{
	gint64 start = g_get_monotonic_time();
	int sock = connect_fh_status(f, f->fh, ret);

	close(sock);
	return g_get_monotonic_time() - start;
}

/*
 * Idle connections of another uid (200, never a HELLO) do not keep this
 * uid's attach out: a uid's own oldest pending connection makes room for
 * its next, and at the device's limit the oldest of the uid holding the
 * most goes. The peer uid is injected (v4l2cuse_shim_adopt, as accept
 * calls it with SO_PEERCRED), so no second user is needed.
 */
V4L2CUSE_TEST_F("/shim-server/pending-other-uid", test_pending_other_uid)
{
	uid_t other = getuid() == 4242 ? 4243 : 4242;
	int idle[200], sock, r;
	struct v4l2cuse_shim_attach a;
	unsigned int open_idle = 0;
	gint64 us;

	for (size_t i = 0; i < G_N_ELEMENTS(idle); i++)
		idle[i] = adopt_as(f, other);
	us = timed_attach(f, &r);
	g_test_message("attach behind them: %" G_GINT64_FORMAT " us", us);
	g_assert_cmpint(r, ==, 0);
	g_assert_cmpint(us, <, G_USEC_PER_SEC);
	for (size_t i = 0; i < G_N_ELEMENTS(idle); i++)
		open_idle += !hung_up(idle[i]);
	g_test_message("%u of 200 idle connections of uid %u still open", open_idle,
		       (unsigned int)other);
	g_assert_cmpuint(open_idle, <=, V4L2CUSE_SHIM_MAX_PENDING_PER_UID);
	g_assert_false(hung_up(idle[G_N_ELEMENTS(idle) - 1]));	/* the newest stay */

	/* Connected before the flood, HELLO after it: still there. */
	while (stats(f).connections > open_idle)	/* the attach above, closed */
		g_main_context_iteration(NULL, TRUE);
	attach(f, f->fh, &a);
	sock = client_connect(f);
	while (stats(f).connections == open_idle)	/* accepted, no HELLO yet */
		g_main_context_iteration(NULL, TRUE);
	for (size_t i = 0; i < G_N_ELEMENTS(idle); i++) {
		close(idle[i]);
		idle[i] = adopt_as(f, other);
	}
	g_assert_cmpint(hello(sock, &a), ==, 0);
	close(sock);

	/* The same from many uids (subordinate uids of one user): the oldest go first. */
	for (size_t i = 0; i < G_N_ELEMENTS(idle); i++) {
		close(idle[i]);
		idle[i] = adopt_as(f, other + 1 + (uid_t)i);
	}
	g_assert_cmpuint(stats(f).connections, <=, V4L2CUSE_SHIM_MAX_PENDING + 1);
	us = timed_attach(f, &r);
	g_assert_cmpint(r, ==, 0);
	g_assert_cmpint(us, <, G_USEC_PER_SEC);

	for (size_t i = 0; i < G_N_ELEMENTS(idle); i++)
		close(idle[i]);
	while (stats(f).connections)
		g_main_context_iteration(NULL, TRUE);
}

/*
 * A hardened /proc: hidepid=2 with gid= a group the daemon is not in (a
 * plain hidepid=2 lets group 0 see every process, and the daemon runs as
 * root:root). The daemon, root with CAP_CHOWN only, then cannot see other
 * users' processes there, yet a client of another uid must still attach.
 * Root only: the subprocess mounts such a /proc in a mount namespace of its
 * own, drops its capabilities as the daemon does, and serves a client
 * forked as uid 65534.
 */
V4L2CUSE_TEST_F("/shim-server/hidepid", test_hidepid)
{
	struct v4l2cuse_shim_attach a;
	struct v4l2cuse_fh *fh;
	g_autofree char *err = NULL;
	int token_pipe[2], status, r = 0;
	pid_t child;

	if (getuid() != 0) {
		g_test_skip("needs root (a proc mount with hidepid=2,gid=)");
		return;
	}
	if (!g_test_subprocess()) {
		g_test_trap_subprocess(NULL, 20 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_DEFAULT);
		g_test_trap_assert_passed();
		return;
	}
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  "hidepid=2,gid=4242") < 0) {
		g_test_skip("cannot mount a proc with hidepid=2 here");
		return;
	}
	g_assert_no_errno(chmod(f->dir, 0755));		/* uid 65534 reaches the socket */
	g_assert_no_errno(pipe2(token_pipe, O_CLOEXEC));
	child = fork();
	g_assert_cmpint(child, >=, 0);
	if (child == 0) {
		/*
		 * The app: another uid, the opener of the handle, says HELLO
		 * and waits for the reply in a plain recv() (the loop is the
		 * parent's: this copy of the server must not answer).
		 */
		struct v4l2cuse_shim_request req = { .type = V4L2CUSE_SHIM_HELLO, .seq = 1 };
		struct v4l2cuse_shim_reply rep;
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		int sock;

		close(token_pipe[1]);
		if (read(token_pipe[0], &a, sizeof(a)) != sizeof(a) || setgroups(0, NULL) < 0 ||
		    setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
			_exit(2);
		g_strlcpy(sa.sun_path, f->path, sizeof(sa.sun_path));
		sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		req.hello.version = V4L2CUSE_SHIM_VERSION;
		memcpy(req.hello.token, a.token, sizeof(req.hello.token));
		if (connect(sock, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
		    send(sock, &req, sizeof(req), 0) != sizeof(req) ||
		    recv(sock, &rep, sizeof(rep), 0) != sizeof(rep))
			_exit(3);
		_exit(rep.status == 0 ? 0 : 1);
	}
	close(token_pipe[0]);
	g_assert_cmpint(v4l2cuse_sandbox_drop_caps(&err), ==, 0);
	{
		/* What the daemon sees of the client: nothing. */
		g_autofree char *path = g_strdup_printf("/proc/%d/task/%d", (int)child,
							 (int)child);

		g_assert_false(g_file_test(path, G_FILE_TEST_EXISTS));
	}
	fh = v4l2cuse_fh_open(f->dev, O_RDWR, child, 65534, &r);
	g_assert_nonnull(fh);
	attach(f, fh, &a);
	g_assert_cmpint(write(token_pipe[1], &a, sizeof(a)), ==, sizeof(a));
	close(token_pipe[1]);
	while (waitpid(child, &status, WNOHANG) == 0) {
		if (!g_main_context_iteration(NULL, FALSE))
			g_usleep(1000);
	}
	g_assert_true(WIFEXITED(status));
	g_assert_cmpint(WEXITSTATUS(status), ==, 0);	/* the HELLO was accepted */
	g_assert_true(has_streaming(fh));
	v4l2cuse_fh_release(fh);
	while (stats(f).connections)
		g_main_context_iteration(NULL, TRUE);
}
