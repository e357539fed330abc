/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The shim's side of the daemon protocol (include/v4l2cuse/shim-protocol.h):
 * is this fd one of our nodes, attach (private ioctl + authenticated
 * connection), and one request/reply at a time on a handle's socket.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "shim-client.h"

bool
shim_is_cuse_node(int fd, dev_t *ret_rdev)
{
	char path[64], link[256];
	struct stat st;
	ssize_t n;
	const char *base;

	if (fstat(fd, &st) < 0 || !S_ISCHR(st.st_mode))
		return false;
	/*
	 * Only CUSE devices get the private ioctl: a kernel driver could give
	 * the same number another meaning. The class, not the (dynamic) major,
	 * says so; the handshake then says whether the daemon is ours.
	 */
	snprintf(path, sizeof(path), "/sys/dev/char/%u:%u/subsystem", major(st.st_rdev),
		 minor(st.st_rdev));
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return false;
	link[n] = '\0';
	base = strrchr(link, '/');
	base = base ? base + 1 : link;
	if (strcmp(base, "cuse") != 0)
		return false;
	*ret_rdev = st.st_rdev;
	return true;
}

/*
 * Send @req and receive its reply with up to @max_fds passed fds (-1 where
 * none came; more are closed). 0 or -errno (transport).
 */
static int
shim_send_recv(int sock, const struct v4l2cuse_shim_request *req,
	       struct v4l2cuse_shim_reply *rep, int *fds, unsigned int max_fds)
{
	union {
		char buf[CMSG_SPACE(SHIM_MAX_REPLY_FDS * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { rep, sizeof(*rep) };
	struct msghdr mh = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = u.buf,
		.msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *cm;
	unsigned int got = 0, i;
	ssize_t n;

	for (i = 0; i < max_fds; i++)
		fds[i] = -1;
	do
		n = send(sock, req, sizeof(*req), MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(*req))
		return n < 0 ? -errno : -EIO;
	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN ? -ETIMEDOUT : -errno;
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		size_t k;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		for (k = 0; k < (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int); k++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cm) + k * sizeof(int), sizeof(int));
			if (got < max_fds)
				fds[got++] = fd;
			else
				shim_real.close(fd);
		}
	}
	if (n != (ssize_t)sizeof(*rep) || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
	    rep->seq != req->seq || rep->type != req->type) {
		for (i = 0; i < got; i++) {
			shim_real.close(fds[i]);
			fds[i] = -1;
		}
		return n == 0 ? -ECONNRESET : -EPROTO;
	}
	return 0;
}

int
shim_request_fds_locked(struct shim_handle *h, struct v4l2cuse_shim_request *req,
			struct v4l2cuse_shim_reply *rep, int *fds, unsigned int max_fds)
{
	int r;

	for (unsigned int i = 0; i < max_fds; i++)
		fds[i] = -1;
	if (h->sock < 0)
		return -ENOTCONN;	/* a forked child: the parent's connection */
	req->seq = ++h->seq;
	r = shim_send_recv(h->sock, req, rep, fds, max_fds);
	if (r < 0) {
		/*
		 * The conversation is lost: a reply that comes after the
		 * timeout would answer the next request, and every reply after
		 * it would be one behind. Close the connection (the daemon
		 * drops what it held for it); later requests fail at once, as
		 * in a forked child.
		 */
		shim_debug("request %u failed: %s; closing the connection", req->type,
			   strerror(-r));
		shim_real.close(h->sock);
		h->sock = -1;
	}
	return r;
}

int
shim_request_locked(struct shim_handle *h, struct v4l2cuse_shim_request *req,
		    struct v4l2cuse_shim_reply *rep, int *ret_fd)
{
	return shim_request_fds_locked(h, req, rep, ret_fd, 1);
}

int
shim_request(struct shim_handle *h, struct v4l2cuse_shim_request *req,
	     struct v4l2cuse_shim_reply *rep, int *ret_fd)
{
	int r;

	pthread_mutex_lock(&h->io);
	r = shim_request_locked(h, req, rep, ret_fd);
	pthread_mutex_unlock(&h->io);
	return r;
}

unsigned int shim_reply_timeout_ms = 10000;

int
shim_connect(const struct v4l2cuse_shim_attach *a)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = shim_reply_timeout_ms / 1000,
			      .tv_usec = shim_reply_timeout_ms % 1000 * 1000 };
	struct v4l2cuse_shim_request req;
	struct v4l2cuse_shim_reply rep;
	int sock, fd, r;

	if (!memchr(a->socket_path, '\0', sizeof(a->socket_path)) || a->socket_path[0] != '/')
		return -EPROTO;
	memcpy(sa.sun_path, a->socket_path, strlen(a->socket_path) + 1);
	sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (sock < 0)
		return -errno;
	/* The daemon answers at once; never hang an app on a wedged one. */
	setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	do
		r = connect(sock, (struct sockaddr *)&sa, sizeof(sa));
	while (r < 0 && errno == EINTR);
	if (r < 0) {
		r = -errno;
		goto err_close;
	}
	memset(&req, 0, sizeof(req));
	req.type = V4L2CUSE_SHIM_HELLO;
	req.seq = 1;
	req.hello.version = V4L2CUSE_SHIM_VERSION;
	memcpy(req.hello.token, a->token, sizeof(req.hello.token));
	r = shim_send_recv(sock, &req, &rep, &fd, 1);
	explicit_bzero(&req, sizeof(req));
	if (r < 0)
		goto err_close;
	if (fd >= 0)
		shim_real.close(fd);
	if (rep.status < 0) {
		r = rep.status;
		goto err_close;
	}
	return sock;

err_close:
	shim_real.close(sock);
	return r;
}

struct shim_handle *
shim_attach(int fd)
{
	struct v4l2cuse_shim_attach a;
	struct shim_handle *h;
	dev_t rdev;
	int sock;

	if (!shim_is_cuse_node(fd, &rdev))
		return NULL;
	memset(&a, 0, sizeof(a));
	a.magic = V4L2CUSE_SHIM_MAGIC;
	a.version = V4L2CUSE_SHIM_VERSION;
	if (shim_real.ioctl(fd, VIDIOC_V4L2CUSE_ATTACH, &a) < 0) {
		shim_debug("fd %d: a CUSE node without our handshake (%s)", fd, strerror(errno));
		return NULL;
	}
	if (a.magic != V4L2CUSE_SHIM_MAGIC || a.version != V4L2CUSE_SHIM_VERSION) {
		shim_debug("fd %d: unexpected handshake reply", fd);
		return NULL;
	}
	sock = shim_connect(&a);
	explicit_bzero(a.token, sizeof(a.token));
	if (sock < 0) {
		shim_debug("fd %d: cannot attach to %s: %s", fd, a.socket_path, strerror(-sock));
		return NULL;
	}
	h = shim_handle_new(sock, rdev);
	if (!h) {
		shim_real.close(sock);
		return NULL;
	}
	shim_debug("fd %d: attached (%s)", fd, a.socket_path);
	return h;
}
