/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The preload shim's bookkeeping (preload/track.c) and its protocol client
 * (shim-client/client.c), linked directly: fd tracking across dup, close,
 * close_range and fork; the mapping table (full and partial unmaps,
 * MAP_FIXED replacement); vb2's mmap argument rules; request/reply with a
 * passed fd over a socketpair standing in for the daemon.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <glib.h>

#include "preload-private.h"
#include "fake-shim-libc.h"
#include "test-main.h"

static void
setup_real(void)
{
	fake_shim_libc_init();
	shim_track_init();
}

/* A handle whose "daemon" is the other end of a socketpair. */
static struct shim_handle *
new_handle(int *ret_peer)
{
	int sv[2];
	struct shim_handle *h;

	g_assert_no_errno(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv));
	h = shim_handle_new(sv[0], makedev(10, 203));
	g_assert_nonnull(h);
	*ret_peer = sv[1];
	return h;
}

static bool
peer_eof(int peer)
{
	char c;
	ssize_t n = recv(peer, &c, 1, MSG_DONTWAIT);

	return n == 0;
}

static bool
peer_has_data(int peer)
{
	struct pollfd p = { .fd = peer, .events = POLLIN };

	return poll(&p, 1, 0) == 1 && !peer_eof(peer);
}

V4L2CUSE_TEST("/shim-track/fd-dup-close", test_fd_dup_close)
{
	int peer, fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int fd2 = dup(fd), fd3 = dup(fd);
	struct shim_handle *h = new_handle(&peer), *g;

	g_assert_cmpuint(shim_fd_count(), ==, 0);
	g_assert_false(shim_fd_maybe_tracked(fd));
	shim_fd_set(fd, h);
	shim_handle_unref(h);		/* the fd holds it now */
	g_assert_cmpuint(shim_fd_count(), ==, 1);
	g_assert_true(shim_fd_maybe_tracked(fd));

	/* dup and F_DUPFD: the new number refers to the same handle. */
	shim_fd_dup(fd, fd2);
	g = shim_fd_get(fd2);
	g_assert_true(g == h);
	shim_handle_unref(g);
	g_assert_cmpuint(shim_fd_count(), ==, 2);

	/* dup2 of an untracked fd over a tracked one: the target is forgotten. */
	shim_fd_dup(fd3, fd2);
	g_assert_null(shim_fd_get(fd2));
	g_assert_cmpuint(shim_fd_count(), ==, 1);
	shim_fd_dup(fd, fd3);

	/* Closing one fd keeps the handle (and its connection) alive. */
	g_assert_true(shim_fd_forget(fd));
	g_assert_false(shim_fd_forget(fd));
	g_assert_false(peer_eof(peer));
	/* The last one closes the connection: the daemon drops its state. */
	g_assert_true(shim_fd_forget(fd3));
	g_assert_true(peer_eof(peer));
	g_assert_cmpuint(shim_fd_count(), ==, 0);

	/* Untracked fds and numbers out of range never touch the tables. */
	g_assert_false(shim_fd_forget(-1));
	g_assert_false(shim_fd_forget(1 << 30));
	shim_fd_dup(-1, fd);
	g_assert_cmpuint(shim_fd_count(), ==, 0);
	close(peer);
	close(fd);
	close(fd2);
	close(fd3);
}

V4L2CUSE_TEST("/shim-track/fd-close-range", test_fd_close_range)
{
	int peer;
	struct shim_handle *h = new_handle(&peer);

	shim_fd_set(5, h);
	shim_fd_set(700, h);
	shim_fd_set(3000, h);		/* another chunk */
	shim_handle_unref(h);
	g_assert_cmpuint(shim_fd_count(), ==, 3);
	shim_fd_forget_range(6, 2999);
	g_assert_cmpuint(shim_fd_count(), ==, 2);
	g_assert_false(peer_eof(peer));
	shim_fd_forget_range(0, ~0u);	/* closefrom(0) */
	g_assert_cmpuint(shim_fd_count(), ==, 0);
	g_assert_true(peer_eof(peer));
	close(peer);
}

V4L2CUSE_TEST("/shim-track/maps", test_maps)
{
	long page = sysconf(_SC_PAGESIZE);
	uint8_t *base = (uint8_t *)0x10000000;
	struct shim_unmapped out[8];
	int peer;
	struct shim_handle *h = new_handle(&peer);

	shim_lock();
	g_assert_cmpint(shim_map_add_locked(base, 4 * page, h, 1), ==, 0);
	g_assert_cmpint(shim_map_add_locked(base + 8 * page, 4 * page, h, 2), ==, 0);
	g_assert_cmpint(shim_map_add_locked(base + 16 * page, 4 * page, h, 3), ==, 0);
	shim_unlock();
	shim_handle_unref(h);		/* the mappings hold it */
	g_assert_cmpuint(shim_map_count(), ==, 3);
	g_assert_true(shim_maps_maybe_tracked());

	shim_lock();
	/* Not touching any: nothing. */
	g_assert_cmpuint(shim_map_remove_locked(base + 4 * page, 4 * page, out, 8), ==, 0);
	/* A hole in the middle keeps the record; the kernel keeps two pieces. */
	g_assert_cmpuint(shim_map_remove_locked(base + page, page, out, 8), ==, 0);
	/* Trimming the tail, then the head: the record shrinks... */
	g_assert_cmpuint(shim_map_remove_locked(base + 10 * page, 2 * page, out, 8), ==, 0);
	g_assert_cmpuint(shim_map_remove_locked(base + 8 * page, page, out, 8), ==, 0);
	/* ...and goes once what is left is covered (a length in bytes: whole pages). */
	g_assert_cmpuint(shim_map_remove_locked(base + 9 * page, 1, out, 8), ==, 1);
	g_assert_cmpuint(out[0].map_id, ==, 2);
	g_assert_true(out[0].h == h);
	shim_handle_unref_locked(out[0].h);
	/* One range covering two mappings returns both. */
	g_assert_cmpuint(shim_map_remove_locked(base, 20 * page, out, 8), ==, 2);
	g_assert_cmpuint(out[0].map_id + out[1].map_id, ==, 4);
	g_assert_false(peer_eof(peer));
	shim_handle_unref_locked(out[0].h);
	shim_handle_unref_locked(out[1].h);
	shim_unlock();
	g_assert_cmpuint(shim_map_count(), ==, 0);
	g_assert_false(shim_maps_maybe_tracked());
	/* The last mapping held the last reference. */
	g_assert_true(peer_eof(peer));
	close(peer);
}

V4L2CUSE_TEST("/shim-track/mmap-check", test_mmap_check)
{
	long page = sysconf(_SC_PAGESIZE);
	const int rw = PROT_READ | PROT_WRITE;

	g_assert_cmpint(shim_mmap_check(153600, rw, MAP_SHARED, 0), ==, 0);
	g_assert_cmpint(shim_mmap_check(153600, PROT_READ, MAP_SHARED, page), ==, 0);
	g_assert_cmpint(shim_mmap_check(153600, rw, MAP_SHARED_VALIDATE, 0), ==, 0);
	g_assert_cmpint(shim_mmap_check(153600, rw, MAP_SHARED | MAP_FIXED | MAP_POPULATE, 0),
			==, 0);
	/* vb2: VM_SHARED needed... */
	g_assert_cmpint(shim_mmap_check(153600, rw, MAP_PRIVATE, 0), ==, -EINVAL);
	g_assert_cmpint(shim_mmap_check(153600, rw, MAP_PRIVATE | MAP_ANONYMOUS, 0), ==, -EINVAL);
	/* ...and VM_READ on a capture queue. */
	g_assert_cmpint(shim_mmap_check(153600, PROT_WRITE, MAP_SHARED, 0), ==, -EINVAL);
	g_assert_cmpint(shim_mmap_check(153600, PROT_NONE, MAP_SHARED, 0), ==, -EINVAL);
	/* Cookies are page-aligned 32-bit offsets; lengths are non-zero. */
	g_assert_cmpint(shim_mmap_check(153600, rw, MAP_SHARED, 100), ==, -EINVAL);
	g_assert_cmpint(shim_mmap_check(153600, rw, MAP_SHARED, -page), ==, -EINVAL);
	g_assert_cmpint(shim_mmap_check(153600, rw, MAP_SHARED, (int64_t)1 << 32), ==, -EINVAL);
	g_assert_cmpint(shim_mmap_check(0, rw, MAP_SHARED, 0), ==, -EINVAL);
	g_assert_cmpint(shim_mmap_check((size_t)1 << 33, rw, MAP_SHARED, 0), ==, -EINVAL);
}

/*
 * A forked child inherits the fds and mappings but must never talk on the
 * parent's connection: its close and munmap stay local, its mmap fails,
 * and the parent's handle is intact.
 */
V4L2CUSE_TEST("/shim-track/fork", test_fork)
{
	long page = sysconf(_SC_PAGESIZE);
	int peer, fd = open("/dev/null", O_RDONLY | O_CLOEXEC), status;
	struct shim_handle *h = new_handle(&peer);
	void *addr = (void *)0x20000000;
	pid_t pid;

	shim_fd_set(fd, h);
	shim_lock();
	shim_map_add_locked(addr, page, h, 7);
	shim_unlock();
	shim_handle_unref(h);

	pid = fork();
	g_assert_cmpint(pid, >=, 0);
	if (pid == 0) {
		struct shim_unmapped out[4];
		struct v4l2cuse_shim_request req = { .type = V4L2CUSE_SHIM_MAP };
		struct v4l2cuse_shim_reply rep;
		struct shim_handle *c = shim_fd_get(fd);
		int memfd, ok = 1;
		size_t n;

		ok &= c == h && c->sock == -1;
		ok &= shim_request(c, &req, &rep, &memfd) == -ENOTCONN;
		shim_handle_unref(c);
		shim_lock();
		n = shim_map_remove_locked(addr, page, out, 4);
		for (size_t i = 0; i < n; i++)
			shim_handle_unref_locked(out[i].h);
		shim_unlock();
		ok &= n == 1;
		ok &= shim_fd_forget(fd);
		ok &= shim_fd_count() == 0 && shim_map_count() == 0;
		_exit(ok ? 0 : 1);
	}
	g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
	g_assert_true(WIFEXITED(status));
	g_assert_cmpint(WEXITSTATUS(status), ==, 0);

	/* Nothing reached the daemon's end, and the connection is alive. */
	g_assert_false(peer_has_data(peer));
	g_assert_false(peer_eof(peer));
	g_assert_cmpuint(shim_fd_count(), ==, 1);
	g_assert_cmpuint(shim_map_count(), ==, 1);
	h = shim_fd_get(fd);
	g_assert_nonnull(h);
	g_assert_cmpint(h->sock, >=, 0);
	shim_handle_unref(h);

	{
		struct shim_unmapped out[4];

		shim_lock();
		g_assert_cmpuint(shim_map_remove_locked(addr, page, out, 4), ==, 1);
		shim_handle_unref_locked(out[0].h);
		shim_unlock();
	}
	shim_fd_forget(fd);
	g_assert_true(peer_eof(peer));
	close(peer);
	close(fd);
}

/* The "daemon" answers one MAP with a memfd. */
static gpointer
fake_daemon(gpointer data)
{
	int peer = GPOINTER_TO_INT(data);
	struct v4l2cuse_shim_request req;
	struct v4l2cuse_shim_reply rep = { 0 };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { &rep, sizeof(rep) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			     .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *cm;
	int memfd;

	g_assert_cmpint(recv(peer, &req, sizeof(req), 0), ==, sizeof(req));
	g_assert_cmpuint(req.type, ==, V4L2CUSE_SHIM_MAP);
	g_assert_cmpuint(req.map.offset, ==, 4096);
	memfd = memfd_create("fake", MFD_CLOEXEC);
	g_assert_no_errno(ftruncate(memfd, 8192));
	rep.type = req.type;
	rep.seq = req.seq;
	rep.index = 1;
	rep.map_id = 42;
	rep.length = 8192;
	memset(&u, 0, sizeof(u));
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &memfd, sizeof(int));
	g_assert_cmpint(sendmsg(peer, &mh, 0), ==, sizeof(rep));
	close(memfd);
	/* A reply with the wrong sequence number is a protocol error. */
	g_assert_cmpint(recv(peer, &req, sizeof(req), 0), ==, sizeof(req));
	rep.seq = req.seq + 1;
	g_assert_cmpint(send(peer, &rep, sizeof(rep), 0), ==, sizeof(rep));
	return NULL;
}

V4L2CUSE_TEST("/shim-track/request", test_request)
{
	int peer, memfd;
	struct shim_handle *h = new_handle(&peer);
	struct v4l2cuse_shim_request req = { .type = V4L2CUSE_SHIM_MAP };
	struct v4l2cuse_shim_reply rep;
	GThread *t = g_thread_new("daemon", fake_daemon, GINT_TO_POINTER(peer));
	struct stat st;

	req.map.offset = 4096;
	req.map.length = 8192;
	g_assert_cmpint(shim_request(h, &req, &rep, &memfd), ==, 0);
	g_assert_cmpint(rep.status, ==, 0);
	g_assert_cmpuint(rep.map_id, ==, 42);
	g_assert_cmpint(memfd, >=, 0);
	g_assert_cmpint(fcntl(memfd, F_GETFD), ==, FD_CLOEXEC);	/* MSG_CMSG_CLOEXEC */
	g_assert_no_errno(fstat(memfd, &st));
	g_assert_cmpint(st.st_size, ==, 8192);
	close(memfd);
	g_assert_cmpint(shim_request(h, &req, &rep, &memfd), ==, -EPROTO);
	g_assert_cmpint(memfd, ==, -1);
	g_thread_join(t);
	shim_handle_unref(h);
	close(peer);
}

/*
 * A daemon that answers late: HELLO at once, the first MAP only after the
 * client gave up waiting (the test says when), then it reports whether
 * the late reply could be sent and whether the client sent anything more
 * on that connection.
 */
struct late_daemon {
	int listen_fd;
	GMutex lock;
	GCond cond;
	bool gave_up;		/* the client's request timed out */
	bool answered;		/* the late reply was sent (or refused) */
	ssize_t late;		/* send() of the late reply */
	ssize_t after;		/* recv() after it: 0 = EOF */
};

static gpointer
late_daemon_run(gpointer data)
{
	struct late_daemon *d = data;
	struct v4l2cuse_shim_request req;
	struct v4l2cuse_shim_reply rep = { 0 };
	int peer = accept4(d->listen_fd, NULL, NULL, SOCK_CLOEXEC);

	g_assert_cmpint(peer, >=, 0);
	g_assert_cmpint(recv(peer, &req, sizeof(req), 0), ==, sizeof(req));
	g_assert_cmpuint(req.type, ==, V4L2CUSE_SHIM_HELLO);
	rep.type = req.type;
	rep.seq = req.seq;
	g_assert_cmpint(send(peer, &rep, sizeof(rep), 0), ==, sizeof(rep));

	g_assert_cmpint(recv(peer, &req, sizeof(req), 0), ==, sizeof(req));
	g_mutex_lock(&d->lock);
	while (!d->gave_up)
		g_cond_wait(&d->cond, &d->lock);
	g_mutex_unlock(&d->lock);
	rep.type = req.type;
	rep.seq = req.seq;
	rep.map_id = 7;
	/* The real daemon's send (MSG_NOSIGNAL): EPIPE once the client has closed. */
	d->late = send(peer, &rep, sizeof(rep), MSG_NOSIGNAL);
	g_mutex_lock(&d->lock);
	d->answered = true;
	g_cond_signal(&d->cond);
	g_mutex_unlock(&d->lock);

	/* Whatever the client does next; it answers a request at once. */
	d->after = recv(peer, &req, sizeof(req), 0);
	if (d->after == (ssize_t)sizeof(req)) {
		rep.seq = req.seq;
		rep.map_id = 8;
		send(peer, &rep, sizeof(rep), MSG_NOSIGNAL);
	}
	close(peer);
	return NULL;
}

/*
 * A reply later than the receive timeout must not answer the next request:
 * the connection is closed at the timeout, later requests fail at once
 * (mmap then says ENODEV, as in a forked child) and the daemon sees EOF.
 * (Before, the late reply answered the next request, -EPROTO, and every
 * reply after it was one behind.)
 */
V4L2CUSE_TEST("/shim-track/late-reply", test_late_reply)
{
	g_autofree char *dir = g_dir_make_tmp("v4l2cuse-shim-XXXXXX", NULL);
	struct v4l2cuse_shim_attach a = { .magic = V4L2CUSE_SHIM_MAGIC };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct v4l2cuse_shim_request req = { .type = V4L2CUSE_SHIM_MAP };
	struct v4l2cuse_shim_reply rep;
	struct late_daemon d = { 0 };
	struct shim_handle *h;
	unsigned int timeout = shim_reply_timeout_ms;
	GThread *t;
	int sock, memfd;

	g_assert_nonnull(dir);
	g_snprintf(a.socket_path, sizeof(a.socket_path), "%s/late.sock", dir);
	g_strlcpy(sa.sun_path, a.socket_path, sizeof(sa.sun_path));
	d.listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	g_assert_no_errno(bind(d.listen_fd, (struct sockaddr *)&sa, sizeof(sa)));
	g_assert_no_errno(listen(d.listen_fd, 1));
	g_mutex_init(&d.lock);
	g_cond_init(&d.cond);
	t = g_thread_new("late-daemon", late_daemon_run, &d);

	shim_reply_timeout_ms = 50;	/* the daemon waits for the test, not for a clock */
	sock = shim_connect(&a);
	shim_reply_timeout_ms = timeout;
	g_assert_cmpint(sock, >=, 0);
	h = shim_handle_new(sock, makedev(10, 203));

	g_assert_cmpint(shim_request(h, &req, &rep, &memfd), ==, -ETIMEDOUT);
	g_mutex_lock(&d.lock);
	d.gave_up = true;
	g_cond_signal(&d.cond);
	while (!d.answered)
		g_cond_wait(&d.cond, &d.lock);
	g_mutex_unlock(&d.lock);

	/* The late reply (map id 7) is not taken for this request's. */
	g_assert_cmpint(shim_request(h, &req, &rep, &memfd), ==, -ENOTCONN);
	g_assert_cmpint(memfd, ==, -1);
	g_assert_cmpint(shim_request(h, &req, &rep, &memfd), ==, -ENOTCONN);
	shim_handle_unref(h);
	g_thread_join(t);
	/* Closed at the timeout: the late reply found no reader, and nothing came after. */
	g_assert_cmpint(d.late, ==, -1);
	g_assert_cmpint(d.after, ==, 0);

	close(d.listen_fd);
	g_assert_no_errno(unlink(a.socket_path));
	g_assert_no_errno(rmdir(dir));
	g_mutex_clear(&d.lock);
	g_cond_clear(&d.cond);
}

/* Not a character device, or not of the cuse class: no handshake is tried. */
V4L2CUSE_TEST("/shim-track/not-cuse", test_not_cuse)
{
	dev_t rdev;
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int pipefd[2];

	g_assert_false(shim_is_cuse_node(fd, &rdev));
	close(fd);
	g_assert_no_errno(pipe2(pipefd, O_CLOEXEC));
	g_assert_false(shim_is_cuse_node(pipefd[0], &rdev));
	g_assert_null(shim_attach(pipefd[0]));
	close(pipefd[0]);
	close(pipefd[1]);
	g_assert_false(shim_is_cuse_node(-1, &rdev));
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	setup_real();
	v4l2cuse_test_add_registered();
	return g_test_run();
}
