/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The clients of tests/vm/test-faults.sh. A C program, not python: under
 * TCG a python start costs seconds, and the timings below are about
 * milliseconds.
 *
 *   fault-client read DEV [OPTS]     read() frames of sizeimage bytes
 *   fault-client poll DEV [OPTS]     O_NONBLOCK handle: poll(POLLIN), read()
 *   fault-client dqbuf DEV [OPTS]    MMAP streaming (under v4l2cuse-run)
 *   fault-client park-kill CMD...    run CMD, SIGKILL it once it is parked
 *
 * OPTS: --count N (stop after N frames, exit 0), --park-after N (print
 * "PARKED" before the blocking call that follows frame N, default 1),
 * --classify (tag each frame "card" (the NO SIGNAL placeholder: its bottom
 * row is Y' 43 / CbCr 128) or "camera"; YUYV only).
 *
 * Each client prints one line per frame, "frame N seq=S bytes=B [KIND]
 * t=REALTIME", and on the first error one line "END what=... t=REALTIME"
 * naming the errno (or the poll revents), then exits 3. stdout is flushed
 * after every line.
 *
 * park-kill reads CMD's stdout until "PARKED", samples /proc/PID/stat for
 * 500 ms and until a line (or EOF) arrives on its own stdin (the caller
 * knows when the call is parked in the daemon), sends SIGKILL and samples
 * the state every 0.2 ms until waitpid() reaps it. It prints "parked-states=... after-kill-states=... reap-ms=X
 * d-ms=Y" (the distinct states seen, in order; d-ms: how long the process
 * was seen in D after the kill) and exits 0, or 1 when CMD never parks or
 * is not reaped within 60 s of the kill (a wait the kill cannot break).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/videodev2.h>

#include "vm-client.h"

#define N_BUFS 3

struct opts {
	long count;		/* 0: until an error */
	long park_after;
	bool classify;
};

static int
end_errno(const char *what, int e)
{
	printf("END what=%s errno=%s (%s) t=%.3f\n", what, vm_errno_name(e), strerror(e),
	       vm_clock_seconds(CLOCK_REALTIME));
	fflush(stdout);
	return 3;
}

/* "card" when the bottom row is the placeholder's flat background. */
static const char *
classify(const uint8_t *buf, size_t len, const struct v4l2_pix_format *pix)
{
	size_t row = (size_t)pix->bytesperline * (pix->height - 1);

	if (pix->pixelformat != V4L2_PIX_FMT_YUYV || row + pix->width * 2 > len)
		return "?";
	for (size_t i = 0; i < pix->width * 2; i++) {
		uint8_t v = buf[row + i];

		if (i % 2 == 0 ? (v < 41 || v > 45) : (v < 126 || v > 130))
			return "camera";
	}
	return "card";
}

static void
print_frame(long n, long seq, size_t bytes, const uint8_t *buf, const struct v4l2_pix_format *pix,
	    const struct opts *o)
{
	printf("frame %ld seq=%ld bytes=%zu%s%s t=%.3f\n", n, seq, bytes, o->classify ? " " : "",
	       o->classify ? classify(buf, bytes, pix) : "", vm_clock_seconds(CLOCK_REALTIME));
	fflush(stdout);
}

static void
maybe_parked(long n, const struct opts *o)
{
	if (n == o->park_after) {
		printf("PARKED\n");
		fflush(stdout);
	}
}

static int
get_fmt(int fd, struct v4l2_pix_format *pix)
{
	struct v4l2_format f = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };

	if (ioctl(fd, VIDIOC_G_FMT, &f) < 0)
		return -errno;
	*pix = f.fmt.pix;
	return 0;
}

static int
run_read(const char *dev, bool nonblock, const struct opts *o)
{
	struct v4l2_pix_format pix;
	uint8_t *buf;
	int fd = open(dev, O_RDWR | (nonblock ? O_NONBLOCK : 0));
	int r;

	if (fd < 0)
		return end_errno("open", errno);
	if ((r = get_fmt(fd, &pix)) < 0)
		return end_errno("G_FMT", -r);
	buf = malloc(pix.sizeimage);
	if (!buf)
		return end_errno("malloc", ENOMEM);
	for (long n = 0; !o->count || n < o->count;) {
		ssize_t got;

		maybe_parked(n, o);
		if (nonblock) {
			struct pollfd p = { .fd = fd, .events = POLLIN };

			r = poll(&p, 1, -1);
			if (r < 0)
				return end_errno("poll", errno);
			if (p.revents & (POLLERR | POLLHUP | POLLNVAL)) {
				printf("END what=poll revents=0x%x%s%s%s t=%.3f\n", p.revents,
				       p.revents & POLLERR ? " POLLERR" : "",
				       p.revents & POLLHUP ? " POLLHUP" : "",
				       p.revents & POLLNVAL ? " POLLNVAL" : "", vm_clock_seconds(CLOCK_REALTIME));
				fflush(stdout);
				return 3;
			}
		}
		got = read(fd, buf, pix.sizeimage);
		if (got < 0 && nonblock && errno == EAGAIN)
			continue;
		if (got < 0)
			return end_errno("read", errno);
		if (got == 0) {
			printf("END what=read eof t=%.3f\n", vm_clock_seconds(CLOCK_REALTIME));
			fflush(stdout);
			return 3;
		}
		n++;
		print_frame(n, -1, (size_t)got, buf, &pix, o);
	}
	free(buf);
	close(fd);
	printf("DONE\n");
	return 0;
}

static int
run_dqbuf(const char *dev, const struct opts *o)
{
	struct v4l2_requestbuffers rb = {
		.count = N_BUFS, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP,
	};
	enum v4l2_buf_type type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	struct v4l2_pix_format pix;
	void *maps[32] = { 0 };
	int fd = open(dev, O_RDWR);
	int r;

	if (fd < 0)
		return end_errno("open", errno);
	if ((r = get_fmt(fd, &pix)) < 0)
		return end_errno("G_FMT", -r);
	if (ioctl(fd, VIDIOC_REQBUFS, &rb) < 0)
		return end_errno("REQBUFS", errno);
	if (rb.count < 1 || rb.count > 32)
		return end_errno("REQBUFS count", ERANGE);
	for (uint32_t i = 0; i < rb.count; i++) {
		struct v4l2_buffer b = {
			.index = i, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP,
		};

		if (ioctl(fd, VIDIOC_QUERYBUF, &b) < 0)
			return end_errno("QUERYBUF", errno);
		maps[i] = mmap(NULL, b.length, PROT_READ, MAP_SHARED, fd, b.m.offset);
		if (maps[i] == MAP_FAILED)
			return end_errno("mmap", errno);
		if (ioctl(fd, VIDIOC_QBUF, &b) < 0)
			return end_errno("QBUF", errno);
	}
	if (ioctl(fd, VIDIOC_STREAMON, &type) < 0)
		return end_errno("STREAMON", errno);
	for (long n = 0; !o->count || n < o->count;) {
		struct v4l2_buffer b = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP };

		maybe_parked(n, o);
		if (ioctl(fd, VIDIOC_DQBUF, &b) < 0)
			return end_errno("DQBUF", errno);
		n++;
		if (b.index >= rb.count)
			return end_errno("DQBUF index", ERANGE);
		print_frame(n, b.sequence, b.bytesused, maps[b.index], &pix, o);
		if (ioctl(fd, VIDIOC_QBUF, &b) < 0)
			return end_errno("QBUF", errno);
	}
	if (ioctl(fd, VIDIOC_STREAMOFF, &type) < 0)
		return end_errno("STREAMOFF", errno);
	close(fd);
	printf("DONE\n");
	return 0;
}

/* The state letter of /proc/PID/stat, or 0 when it cannot be read. */
static char
proc_state(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

static void
add_state(char *seen, size_t size, char s)
{
	size_t len = strlen(seen);

	if (s && (len == 0 || seen[len - 1] != s) && len + 1 < size) {
		seen[len] = s;
		seen[len + 1] = 0;
	}
}

static void
sleep_s(double s)
{
	struct timespec ts = { .tv_sec = (time_t)s, .tv_nsec = (long)((s - (time_t)s) * 1e9) };

	nanosleep(&ts, NULL);
}

static int
run_park_kill(char **argv)
{
	char line[256], before[32] = "", after[32] = "";
	double t_kill, t_d = 0, d_total = 0, deadline;
	int pfd[2], status;
	bool parked = false, go = false;
	FILE *in;
	pid_t pid;

	if (pipe(pfd) < 0) {
		perror("pipe");
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		dup2(pfd[1], STDOUT_FILENO);
		close(pfd[0]);
		close(pfd[1]);
		execvp(argv[0], argv);
		perror(argv[0]);
		_exit(127);
	}
	close(pfd[1]);
	in = fdopen(pfd[0], "r");
	while (fgets(line, sizeof(line), in)) {
		printf("client: %s", line);
		if (strcmp(line, "PARKED\n") == 0) {
			parked = true;
			break;
		}
	}
	fflush(stdout);
	if (!parked) {
		waitpid(pid, &status, 0);
		printf("the client never parked (status 0x%x)\n", status);
		return 1;
	}
	/* Parked means blocked in the call: sample it there for 500 ms, and
	 * on until the go-ahead. */
	deadline = vm_clock_seconds(CLOCK_MONOTONIC) + 0.5;
	while (vm_clock_seconds(CLOCK_MONOTONIC) < deadline || !go) {
		struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };

		add_state(before, sizeof(before), proc_state(pid));
		if (!go && poll(&p, 1, 5) != 0)
			go = true;	/* a line, EOF or an error: no more waiting */
		else if (go)
			sleep_s(0.005);
	}
	kill(pid, SIGKILL);
	t_kill = vm_clock_seconds(CLOCK_MONOTONIC);
	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);
		double t = vm_clock_seconds(CLOCK_MONOTONIC);
		char s;

		if (w == pid)
			break;
		s = proc_state(pid);
		add_state(after, sizeof(after), s);
		if (s == 'D' && !t_d)
			t_d = t;
		else if (s != 'D' && t_d) {
			d_total += t - t_d;
			t_d = 0;
		}
		if (t - t_kill > 60) {
			printf("not reaped 60 s after SIGKILL: states %s after %s\n", before, after);
			return 1;
		}
		sleep_s(0.0002);
	}
	if (t_d)
		d_total += vm_clock_seconds(CLOCK_MONOTONIC) - t_d;
	printf("parked-states=%s after-kill-states=%s reap-ms=%.1f d-ms=%.1f signal=%d\n", before,
	       after[0] ? after : "-", (vm_clock_seconds(CLOCK_MONOTONIC) - t_kill) * 1e3, d_total * 1e3,
	       WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	return 0;
}

int
main(int argc, char **argv)
{
	struct opts o = { .park_after = 1 };

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 3 && strcmp(argv[1], "park-kill") == 0)
		return run_park_kill(argv + 2);
	if (argc < 3) {
		fprintf(stderr, "usage: fault-client read|poll|dqbuf DEV [--count N] "
				"[--park-after N] [--classify] | park-kill CMD...\n");
		return 2;
	}
	for (int i = 3; i < argc; i++) {
		if (strcmp(argv[i], "--count") == 0 && i + 1 < argc)
			o.count = strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--park-after") == 0 && i + 1 < argc)
			o.park_after = strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--classify") == 0)
			o.classify = true;
		else {
			fprintf(stderr, "fault-client: unknown option '%s'\n", argv[i]);
			return 2;
		}
	}
	if (strcmp(argv[1], "read") == 0)
		return run_read(argv[2], false, &o);
	if (strcmp(argv[1], "poll") == 0)
		return run_read(argv[2], true, &o);
	if (strcmp(argv[1], "dqbuf") == 0)
		return run_dqbuf(argv[2], &o);
	fprintf(stderr, "fault-client: unknown mode '%s'\n", argv[1]);
	return 2;
}
