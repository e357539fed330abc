/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * primitive-costs: what the machine charges for the pieces a frame's path
 * is made of, so that a per-frame cost can be read as a sum of them
 * (docs/performance.md, "Loopback: where a frame's CPU goes"):
 *
 *   syscall      a system call that does nothing (getppid)
 *   memcpy       a user-space copy of one frame, malloc'd to a shared memfd
 *   kernel-copy  the kernel writing one frame into user memory (read() of
 *                /dev/zero: clear_user) and moving one through a pipe
 *                (copy_from_user + copy_to_user, as a loopback module does)
 *   wake         a one-byte round trip between two processes over a
 *                socketpair: two wake-ups, each with a context switch
 *
 *   primitive-costs [FRAME_BYTES]      (default 614400: 640x480 YUYV)
 *
 * Each is the mean of the best of three rounds. Under TCG the kernel's copy
 * loops and the wake-ups cost far more, next to a user-space memcpy, than on
 * hardware: that is what this shows.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

#define ROUNDS 3

static void
die(const char *what)
{
	perror(what);
	exit(1);
}

/* The best of ROUNDS rounds of @n calls of @fn, in seconds per call. */
static double
best_of(void (*fn)(void *), void *data, int n)
{
	double best = 0;

	for (int r = 0; r < ROUNDS; r++) {
		double t0 = now_s();

		for (int i = 0; i < n; i++)
			fn(data);
		double t = (now_s() - t0) / n;

		if (r == 0 || t < best)
			best = t;
	}
	return best;
}

struct copy {
	char *src, *dst;
	size_t size;
	int fd[2];
};

static void
do_syscall(void *data)
{
	(void)data;
	syscall(SYS_getppid);
}

static void
do_memcpy(void *data)
{
	struct copy *c = data;

	memcpy(c->dst, c->src, c->size);
	__asm__ volatile("" ::: "memory");
}

static void
do_clear_user(void *data)
{
	struct copy *c = data;

	for (size_t o = 0; o < c->size;) {
		ssize_t n = read(c->fd[0], c->dst + o, c->size - o);

		if (n <= 0)
			die("read /dev/zero");
		o += (size_t)n;
	}
}

static void
do_pipe(void *data)
{
	struct copy *c = data;

	for (size_t o = 0; o < c->size;) {
		/* One pipe's worth at a time (its default size): the same thread reads. */
		size_t chunk = c->size - o < 65536 ? c->size - o : 65536;
		ssize_t w = write(c->fd[1], c->src + o, chunk), n;

		if (w <= 0)
			die("write pipe");
		for (ssize_t got = 0; got < w; got += n) {
			n = read(c->fd[0], c->dst + o + got, (size_t)(w - got));
			if (n <= 0)
				die("read pipe");
		}
		o += (size_t)w;
	}
}

static void
do_wake(void *data)
{
	int *sock = data;
	char b = 0;

	if (write(*sock, &b, 1) != 1 || read(*sock, &b, 1) != 1)
		die("socketpair");
}

int
main(int argc, char **argv)
{
	struct copy c = { .size = argc > 1 ? strtoul(argv[1], NULL, 0) : 614400 };
	int sv[2], memfd;
	pid_t pid;

	if (c.size == 0 || c.size > (256u << 20)) {
		fprintf(stderr, "usage: primitive-costs [FRAME_BYTES]\n");
		return 2;
	}
	c.src = malloc(c.size);
	memfd = memfd_create("primitive-costs", MFD_CLOEXEC);
	if (!c.src || memfd < 0 || ftruncate(memfd, (off_t)c.size) < 0)
		die("memfd");
	c.dst = mmap(NULL, c.size, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	if (c.dst == MAP_FAILED)
		die("mmap");
	memset(c.src, 0x5a, c.size);
	memset(c.dst, 0, c.size);

	printf("frame_bytes=%zu\n", c.size);
	printf("syscall_us=%.2f\n", best_of(do_syscall, NULL, 20000) * 1e6);
	printf("memcpy_ms=%.3f\n", best_of(do_memcpy, &c, 50) * 1e3);

	c.fd[0] = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	if (c.fd[0] < 0)
		die("/dev/zero");
	printf("kernel_clear_user_ms=%.3f\n", best_of(do_clear_user, &c, 20) * 1e3);
	close(c.fd[0]);

	if (pipe2(c.fd, O_CLOEXEC) < 0)
		die("pipe");
	printf("kernel_pipe_two_copies_ms=%.3f\n", best_of(do_pipe, &c, 20) * 1e3);
	close(c.fd[0]);
	close(c.fd[1]);

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		die("socketpair");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		char b;

		close(sv[0]);
		while (read(sv[1], &b, 1) == 1 && write(sv[1], &b, 1) == 1)
			;
		_exit(0);
	}
	close(sv[1]);
	printf("wake_round_trip_us=%.1f\n", best_of(do_wake, &sv[0], 2000) * 1e6);
	close(sv[0]);
	waitpid(pid, NULL, 0);
	return 0;
}
