/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The clients of tests/vm/test-abuse.sh (C: a python start costs seconds
 * under TCG, and 1000 opens from a shell are slow).
 *
 *   abuse-client opens DEV N MAX        open N handles (each must succeed),
 *                                       then more until one fails or MAX
 *   abuse-client reqbufs DEV COUNT H    H handles, REQBUFS(COUNT, MMAP) on
 *                                       each (streaming needs v4l2cuse-run)
 *   abuse-client noread DEV read|stream start read() or streaming, then
 *                                       never read/DQBUF again
 *   abuse-client count DEV SECONDS      MMAP streaming (v4l2cuse-run):
 *                                       DQBUF/QBUF for SECONDS, sequence gaps
 *   abuse-client connects PATH N        N connections to the AF_UNIX seqpacket
 *                                       socket PATH that never say anything
 *   abuse-client attach DEV             MMAP streaming set up (v4l2cuse-run:
 *                                       the shim attaches at REQBUFS) and one
 *                                       frame, timed
 *   abuse-client intr DEV SECONDS read|dqbuf USEC MIN_EINTR
 *                                       blocking read()/DQBUF with a SIGALRM
 *                                       every USEC µs (handler, no SA_RESTART)
 *                                       for SECONDS, and on until MIN_EINTR
 *                                       calls returned EINTR (at most 10 x
 *                                       SECONDS: a slow machine interrupts
 *                                       fewer calls per second)
 *
 * opens, reqbufs, connects and noread print "HOLD" once set up and keep everything
 * until SIGUSR1 or SIGTERM, then print "released" and exit 0. Each mode
 * prints "key=value" result lines; errno values are printed by name.
 * Exit status: 0 done, 1 a setup step failed (one "error: ..." line), 2 usage.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <linux/videodev2.h>

#include "vm-client.h"

#define MAX_HANDLES 4096
#define STREAM_BUFS 8	/* 800 ms of slack at 10 fps under TCG */

static int
fail(const char *what, int err)
{
	printf("error: %s: %s (%s)\n", what, vm_errno_name(err), strerror(err));
	return 1;
}

static double
now_ms(void)
{
	return vm_clock_seconds(CLOCK_MONOTONIC) * 1e3;
}

/* Block until SIGUSR1 or SIGTERM (both blocked by the caller). */
static void
hold(void)
{
	sigset_t set;
	int sig;

	printf("HOLD\n");
	fflush(stdout);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGTERM);
	sigwait(&set, &sig);
}

static int
xioctl(int fd, unsigned long req, void *arg)
{
	int r;

	do
		r = ioctl(fd, req, arg);
	while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : 0;
}

static int
do_opens(const char *dev, long n, long max)
{
	static int fds[MAX_HANDLES];
	struct rlimit rl;
	long opened = 0, i;
	double t0, t1;

	if (n < 1 || max < n || max > MAX_HANDLES - 16)
		return 2;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return fail("getrlimit", errno);
	rl.rlim_cur = (rlim_t)max + 16;
	if (rl.rlim_max < rl.rlim_cur)
		rl.rlim_max = rl.rlim_cur;	/* root may raise the hard limit */
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		return fail("setrlimit", errno);
	t0 = now_ms();
	for (i = 0; i < max; i++) {
		int fd = open(dev, O_RDWR | O_CLOEXEC);

		if (fd < 0) {
			printf("limit-open=%ld errno=%s\n", i + 1, vm_errno_name(errno));
			break;
		}
		fds[opened++] = fd;
		if (opened == n) {
			t1 = now_ms();
			printf("opened=%ld ms=%.0f\n", opened, t1 - t0);
		}
	}
	if (opened < n) {
		printf("opened=%ld (wanted %ld)\n", opened, n);
		return 1;
	}
	if (i == max)
		printf("limit-open=none (%ld handles open)\n", opened);
	printf("total-open=%ld\n", opened);
	/* Every handle still answers. */
	for (i = 0; i < opened; i++) {
		struct v4l2_capability cap;

		if (xioctl(fds[i], VIDIOC_QUERYCAP, &cap) < 0)
			return fail("QUERYCAP on a held handle", errno);
	}
	printf("querycap-all=ok\n");
	hold();
	t0 = now_ms();
	for (i = 0; i < opened; i++)
		close(fds[i]);
	printf("released close-ms=%.0f\n", now_ms() - t0);
	return 0;
}

static int
do_reqbufs(const char *dev, long count, long handles)
{
	static int fds[64];
	uint64_t total = 0;
	long i;

	if (handles < 1 || handles > 64 || count < 0 || count > 64)
		return 2;
	for (i = 0; i < handles; i++) {
		fds[i] = open(dev, O_RDWR | O_CLOEXEC);
		if (fds[i] < 0)
			return fail("open", errno);
	}
	for (i = 0; i < handles; i++) {
		struct v4l2_requestbuffers rb = {
			.count = (uint32_t)count,
			.type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
			.memory = V4L2_MEMORY_MMAP,
		};
		int r = xioctl(fds[i], VIDIOC_REQBUFS, &rb);

		if (r < 0) {
			printf("handle=%ld reqbufs=%ld errno=%s\n", i, count, vm_errno_name(-r));
			continue;
		}
		for (uint32_t b = 0; b < rb.count; b++) {
			struct v4l2_buffer vb = {
				.index = b,
				.type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
				.memory = V4L2_MEMORY_MMAP,
			};

			if ((r = xioctl(fds[i], VIDIOC_QUERYBUF, &vb)) < 0)
				return fail("QUERYBUF", -r);
			total += vb.length;
		}
		printf("handle=%ld reqbufs=%ld got=%u\n", i, count, rb.count);
	}
	printf("buffer-bytes=%llu\n", (unsigned long long)total);
	hold();
	for (i = 0; i < handles; i++)
		close(fds[i]);
	printf("released\n");
	return 0;
}

struct stream {
	int fd;
	void *mem[STREAM_BUFS];
	size_t len[STREAM_BUFS];
	uint32_t n;
};

/* REQBUFS, mmap, QBUF every buffer, STREAMON. */
static int
stream_start(struct stream *s, const char *dev)
{
	struct v4l2_requestbuffers rb = {
		.count = STREAM_BUFS,
		.type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
		.memory = V4L2_MEMORY_MMAP,
	};
	int type = V4L2_BUF_TYPE_VIDEO_CAPTURE, r;

	s->fd = open(dev, O_RDWR | O_CLOEXEC);
	if (s->fd < 0)
		return fail("open", errno);
	if ((r = xioctl(s->fd, VIDIOC_REQBUFS, &rb)) < 0)
		return fail("REQBUFS", -r);
	s->n = rb.count < STREAM_BUFS ? rb.count : STREAM_BUFS;
	for (uint32_t i = 0; i < s->n; i++) {
		struct v4l2_buffer vb = {
			.index = i,
			.type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
			.memory = V4L2_MEMORY_MMAP,
		};

		if ((r = xioctl(s->fd, VIDIOC_QUERYBUF, &vb)) < 0)
			return fail("QUERYBUF", -r);
		s->len[i] = vb.length;
		s->mem[i] = mmap(NULL, vb.length, PROT_READ, MAP_SHARED, s->fd, vb.m.offset);
		if (s->mem[i] == MAP_FAILED)
			return fail("mmap", errno);
		if ((r = xioctl(s->fd, VIDIOC_QBUF, &vb)) < 0)
			return fail("QBUF", -r);
	}
	if ((r = xioctl(s->fd, VIDIOC_STREAMON, &type)) < 0)
		return fail("STREAMON", -r);
	return 0;
}

/*
 * Idle connections to a shim socket, as anybody may open them (the socket
 * is 0666): connected, then never a word. One the daemon closes (it makes
 * room for others, or times a silent one out) is opened again at once, as
 * an attacker would, so that N are held until SIGUSR1 or SIGTERM.
 */
static int
unix_connect(const struct sockaddr_un *sa)
{
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

static int
do_connects(const char *path, long n)
{
	static struct pollfd fds[MAX_HANDLES];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const struct timespec zero = { 0, 0 };
	struct rlimit rl;
	sigset_t set;
	long i, reopened = 0;

	if (n < 1 || n > MAX_HANDLES - 16 || strlen(path) >= sizeof(sa.sun_path))
		return 2;
	strcpy(sa.sun_path, path);
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)n + 16) {
		rl.rlim_cur = (rlim_t)n + 16;
		if (rl.rlim_max < rl.rlim_cur)
			rl.rlim_max = rl.rlim_cur;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			return fail("setrlimit", errno);
	}
	for (i = 0; i < n; i++) {
		fds[i].fd = unix_connect(&sa);
		if (fds[i].fd < 0)
			return fail("connect", -fds[i].fd);
		fds[i].events = POLLIN;
	}
	printf("connected=%ld\n", n);
	printf("HOLD\n");
	fflush(stdout);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGTERM);
	while (sigtimedwait(&set, NULL, &zero) < 0) {
		if (poll(fds, (nfds_t)n, 50) <= 0)
			continue;
		for (i = 0; i < n; i++) {
			if (!fds[i].revents)
				continue;
			close(fds[i].fd);	/* anything readable is the daemon's EOF */
			fds[i].fd = unix_connect(&sa);
			if (fds[i].fd < 0)
				return fail("connect again", -fds[i].fd);
			reopened++;
		}
	}
	for (i = 0; i < n; i++)
		close(fds[i].fd);
	printf("released reopened=%ld\n", reopened);
	return 0;
}

/* One app's attach through the shim: streaming set up, then a frame. */
static int
do_attach(const char *dev)
{
	struct stream s;
	struct v4l2_buffer vb = {
		.type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
		.memory = V4L2_MEMORY_MMAP,
	};
	double t0 = now_ms(), t1;
	int r;

	if (stream_start(&s, dev))
		return 1;
	t1 = now_ms();
	if ((r = xioctl(s.fd, VIDIOC_DQBUF, &vb)) < 0)
		return fail("DQBUF", -r);
	printf("attach-ms=%.1f frame-ms=%.1f seq=%u bytes=%u\n", t1 - t0, now_ms() - t1,
	       vb.sequence, vb.bytesused);
	close(s.fd);
	return 0;
}

static int
do_noread(const char *dev, const char *how)
{
	if (strcmp(how, "read") == 0) {
		static char frame[4 << 20];
		int fd = open(dev, O_RDWR | O_CLOEXEC);
		ssize_t n;

		if (fd < 0)
			return fail("open", errno);
		n = read(fd, frame, sizeof(frame));
		if (n < 0)
			return fail("read", errno);
		printf("first-read=%zd\n", n);
		hold();
		close(fd);
	} else if (strcmp(how, "stream") == 0) {
		struct stream s;
		struct v4l2_buffer vb = {
			.type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
			.memory = V4L2_MEMORY_MMAP,
		};
		int r;

		if (stream_start(&s, dev))
			return 1;
		if ((r = xioctl(s.fd, VIDIOC_DQBUF, &vb)) < 0)
			return fail("DQBUF", -r);
		printf("first-dqbuf seq=%u\n", vb.sequence);
		hold();
		close(s.fd);
	} else {
		return 2;
	}
	printf("released\n");
	return 0;
}

static int
do_count(const char *dev, double seconds)
{
	struct stream s;
	long frames = 0, gaps = 0, missing = 0;
	uint32_t first = 0, last = 0;
	double end;
	int r;

	if (stream_start(&s, dev))
		return 1;
	end = now_ms() + seconds * 1e3;
	while (now_ms() < end) {
		struct v4l2_buffer vb = {
			.type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
			.memory = V4L2_MEMORY_MMAP,
		};

		if ((r = xioctl(s.fd, VIDIOC_DQBUF, &vb)) < 0)
			return fail("DQBUF", -r);
		if (frames == 0) {
			first = vb.sequence;
		} else if (vb.sequence != last + 1) {
			gaps++;
			missing += (long)(vb.sequence - last - 1);
		}
		last = vb.sequence;
		frames++;
		if ((r = xioctl(s.fd, VIDIOC_QBUF, &vb)) < 0)
			return fail("QBUF", -r);
	}
	printf("frames=%ld first-seq=%u last-seq=%u gaps=%ld missing=%ld\n", frames, first, last,
	       gaps, missing);
	close(s.fd);
	return 0;
}

static volatile sig_atomic_t alarms;

static void
on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

static int
do_intr(const char *dev, double seconds, const char *how, long usec, long min_eintr)
{
	static char frame[4 << 20];
	struct sigaction sa = { .sa_handler = on_alarm };	/* no SA_RESTART */
	struct itimerval it = { .it_interval = { 0, usec }, .it_value = { 0, usec } };
	long calls = 0, ok = 0, eintr = 0, other = 0;
	int other_errno = 0, fd = -1;
	bool dq = strcmp(how, "dqbuf") == 0;
	struct stream s;
	double start, end, t, max_ms = 0;

	if (!dq && strcmp(how, "read") != 0)
		return 2;
	if (dq) {
		if (stream_start(&s, dev))
			return 1;
		fd = s.fd;
	} else if ((fd = open(dev, O_RDWR | O_CLOEXEC)) < 0) {
		return fail("open", errno);
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	start = now_ms();
	end = start + seconds * 1e3;
	while ((t = now_ms()) < end || (eintr < min_eintr && t < start + 10 * seconds * 1e3)) {
		struct v4l2_buffer vb = {
			.type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
			.memory = V4L2_MEMORY_MMAP,
		};
		int r;

		calls++;
		if (dq) {
			r = ioctl(fd, VIDIOC_DQBUF, &vb);
		} else {
			ssize_t n = read(fd, frame, sizeof(frame));

			r = n < 0 ? -1 : 0;
		}
		if (r == 0) {
			ok++;
			if (dq && xioctl(fd, VIDIOC_QBUF, &vb) < 0)
				return fail("QBUF", errno);
		} else if (errno == EINTR) {
			eintr++;
		} else {
			other++;
			other_errno = errno;
		}
		t = now_ms() - t;
		if (t > max_ms)
			max_ms = t;
	}
	it = (struct itimerval){ 0 };
	setitimer(ITIMER_REAL, &it, NULL);
	printf("calls=%ld eintr=%ld ok=%ld other=%ld%s%s alarms=%ld max-call-ms=%.1f s=%.1f\n",
	       calls, eintr, ok, other, other ? " other-errno=" : "",
	       other ? vm_errno_name(other_errno) : "", (long)alarms, max_ms, (now_ms() - start) / 1e3);
	close(fd);
	return other ? 1 : 0;
}

int
main(int argc, char **argv)
{
	sigset_t set;

	setvbuf(stdout, NULL, _IOLBF, 0);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (argc == 5 && strcmp(argv[1], "opens") == 0)
		return do_opens(argv[2], atol(argv[3]), atol(argv[4]));
	if (argc == 5 && strcmp(argv[1], "reqbufs") == 0)
		return do_reqbufs(argv[2], atol(argv[3]), atol(argv[4]));
	if (argc == 4 && strcmp(argv[1], "connects") == 0)
		return do_connects(argv[2], atol(argv[3]));
	if (argc == 3 && strcmp(argv[1], "attach") == 0)
		return do_attach(argv[2]);
	if (argc == 4 && strcmp(argv[1], "noread") == 0)
		return do_noread(argv[2], argv[3]);
	if (argc == 4 && strcmp(argv[1], "count") == 0)
		return do_count(argv[2], atof(argv[3]));
	if (argc == 7 && strcmp(argv[1], "intr") == 0)
		return do_intr(argv[2], atof(argv[3]), argv[4], atol(argv[5]), atol(argv[6]));
	fprintf(stderr, "usage: see the comment at the top of tests/vm/abuse-client.c\n");
	return 2;
}
