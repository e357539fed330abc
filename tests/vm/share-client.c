/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * share-client: one consumer of tests/vm/test-share.sh.
 *
 *   share-client DEVICE read|mmap FRAMES [SLOW_MS]
 *
 * Streams FRAMES frames (0: until SIGTERM) in the device's current format
 * (YUYV), by read() or by MMAP buffers (mmap needs the preload shim: run it
 * under v4l2cuse-run), blocking, sleeping SLOW_MS after each frame (a slow
 * consumer). Every frame is checked: read() returns exactly sizeimage
 * bytes, a dequeued buffer has bytesused == sizeimage and no ERROR flag,
 * and the 75% colour bars (ours and vivid's) have their limited-range
 * BT.601 values, within 8, at the centre of each bar on the row at 3/4 of
 * the height. MMAP also records the sequence numbers.
 *
 * Prints "share-client dev=D mode=M frames=N whole=N bars=N gaps=N
 * seq_first=S seq_last=S start=T end=T" (T: CLOCK_MONOTONIC seconds) and
 * exits 0 only if every frame was whole and showed the bars.
 */
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
#include <time.h>
#include <unistd.h>

#include <linux/videodev2.h>

#define NBUF 4		/* asked for; a device may give more (min-buffers=) */
#define MAX_BUFS 32

/* SIGTERM/SIGINT: stop after the frame in flight and print the summary. */
static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
	stop = 1;
}

static const uint8_t bars75[8][3] = {
	{ 180, 128, 128 }, { 161, 44, 142 }, { 131, 156, 44 }, { 112, 72, 58 },
	{ 84, 184, 198 }, { 65, 100, 212 }, { 35, 212, 114 }, { 16, 128, 128 },
};

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int
xioctl(int fd, unsigned long req, void *arg)
{
	int r;

	do {
		r = ioctl(fd, req, arg);
	} while (r < 0 && errno == EINTR && !stop);
	return r;
}

static bool
near(int a, int b)
{
	return abs(a - b) <= 8;
}

static bool
check_bars(const uint8_t *p, const struct v4l2_pix_format *f)
{
	uint32_t row = f->height * 3 / 4;

	for (int i = 0; i < 8; i++) {
		uint32_t x = ((2 * i + 1) * f->width / 16) & ~1u;
		const uint8_t *px = p + (size_t)row * f->bytesperline + x * 2;

		if (!near(px[0], bars75[i][0]) || !near(px[1], bars75[i][1]) ||
		    !near(px[3], bars75[i][2])) {
			fprintf(stderr, "bar %d at (%u,%u): %u %u %u, want %u %u %u\n", i, x, row,
				px[0], px[1], px[3], bars75[i][0], bars75[i][1], bars75[i][2]);
			return false;
		}
	}
	return true;
}

int
main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };	/* no SA_RESTART: EINTR */
	struct v4l2_format fmt = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	unsigned int want, slow_ms, frames = 0, whole = 0, bars = 0, gaps = 0;
	long long seq_first = -1, seq_last = -1;
	bool use_mmap;
	double start;
	int fd;

	if (argc < 4) {
		fprintf(stderr, "usage: share-client DEVICE read|mmap FRAMES [SLOW_MS]\n");
		return 2;
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	use_mmap = strcmp(argv[2], "mmap") == 0;
	want = (unsigned int)strtoul(argv[3], NULL, 10);
	slow_ms = argc > 4 ? (unsigned int)strtoul(argv[4], NULL, 10) : 0;
	fd = open(argv[1], O_RDWR);
	if (fd < 0 || xioctl(fd, VIDIOC_G_FMT, &fmt) < 0) {
		perror(argv[1]);
		return 1;
	}
	if (fmt.fmt.pix.pixelformat != V4L2_PIX_FMT_YUYV) {
		fprintf(stderr, "%s: not YUYV\n", argv[1]);
		return 1;
	}
	start = now();
	if (!use_mmap) {
		size_t size = fmt.fmt.pix.sizeimage;
		uint8_t *buf = malloc(size + 1);

		while (!stop && (!want || frames < want)) {
			ssize_t n = read(fd, buf, size + 1);

			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0) {
				perror("read");
				break;
			}
			frames++;
			whole += (size_t)n == size;
			bars += (size_t)n == size && check_bars(buf, &fmt.fmt.pix);
			if (slow_ms)
				usleep(slow_ms * 1000);
		}
		free(buf);
	} else {
		struct v4l2_requestbuffers rb = { .count = NBUF, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
						  .memory = V4L2_MEMORY_MMAP };
		void *mem[MAX_BUFS];
		int type = V4L2_BUF_TYPE_VIDEO_CAPTURE;

		if (xioctl(fd, VIDIOC_REQBUFS, &rb) < 0 || rb.count > MAX_BUFS) {
			perror("REQBUFS (run under v4l2cuse-run)");
			return 1;
		}
		for (unsigned int i = 0; i < rb.count; i++) {
			struct v4l2_buffer b = { .index = i, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
						 .memory = V4L2_MEMORY_MMAP };

			if (xioctl(fd, VIDIOC_QUERYBUF, &b) < 0 ||
			    (mem[i] = mmap(NULL, b.length, PROT_READ, MAP_SHARED, fd,
					   b.m.offset)) == MAP_FAILED ||
			    xioctl(fd, VIDIOC_QBUF, &b) < 0) {
				perror("QUERYBUF/mmap/QBUF");
				return 1;
			}
		}
		if (xioctl(fd, VIDIOC_STREAMON, &type) < 0) {
			perror("STREAMON");
			return 1;
		}
		while (!stop && (!want || frames < want)) {
			struct v4l2_buffer b = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
						 .memory = V4L2_MEMORY_MMAP };
			bool ok;

			if (xioctl(fd, VIDIOC_DQBUF, &b) < 0) {
				if (!stop)
					perror("DQBUF");
				break;
			}
			frames++;
			ok = b.bytesused == fmt.fmt.pix.sizeimage && !(b.flags & V4L2_BUF_FLAG_ERROR);
			whole += ok;
			bars += ok && check_bars(mem[b.index], &fmt.fmt.pix);
			if (seq_last >= 0 && b.sequence != seq_last + 1)
				gaps++;
			if (seq_first < 0)
				seq_first = b.sequence;
			seq_last = b.sequence;
			if (slow_ms)
				usleep(slow_ms * 1000);
			if (xioctl(fd, VIDIOC_QBUF, &b) < 0) {
				perror("QBUF");
				break;
			}
		}
		xioctl(fd, VIDIOC_STREAMOFF, &type);
	}
	printf("share-client dev=%s mode=%s frames=%u whole=%u bars=%u gaps=%u seq_first=%lld "
	       "seq_last=%lld start=%.3f end=%.3f\n", argv[1], argv[2], frames, whole, bars, gaps,
	       seq_first, seq_last, start, now());
	close(fd);
	return (frames == want || (!want && stop)) && whole == frames && bars == frames ? 0 : 1;
}
