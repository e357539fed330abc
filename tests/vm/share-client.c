/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * share-client: one consumer of tests/vm/test-share.sh.
 *
 *   share-client DEVICE read|mmap FRAMES [SLOW_MS [CHECK]]
 *
 * Streams FRAMES frames (0: until SIGTERM) in the device's current format
 * (YUYV), by read() or by MMAP buffers (mmap needs the preload shim: run it
 * under v4l2cuse-run), blocking, sleeping SLOW_MS after each frame (a slow
 * consumer). Every frame is checked: read() returns exactly sizeimage
 * bytes, a dequeued buffer has bytesused == sizeimage and no ERROR flag,
 * and CHECK's bars have their limited-range BT.601 values, within 8, at
 * points of each bar: "bars" (the default: the 75% colour bars of the test
 * pattern and of vivid, at the centre of the row at 3/4 of the height),
 * "testsrc2" (FFmpeg's lavfi testsrc2, whose moving parts may cover some
 * points: 90% of the frames must show its bars), "blue" (a blue frame) or
 * "none". MMAP also
 * records the sequence numbers.
 *
 * Prints "share-client dev=D mode=M frames=N whole=N bars=N gaps=N
 * seq_first=S seq_last=S start=T end=T" (T: CLOCK_MONOTONIC seconds) and
 * exits 0 only if every frame was whole and showed the bars (testsrc2:
 * 90% of them).
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

#include "vm-client.h"

#define NBUF 4		/* asked for; a device may give more (min-buffers=) */
#define MAX_BUFS 32

/* SIGTERM/SIGINT: stop after the frame in flight and print the summary. */
static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
	stop = 1;
}

/*
 * Vertical bars: limited-range BT.601 Y'CbCr of each, checked at points
 * given as fractions of the bar's width and of the frame's height; a bar
 * is shown when at least @need of its points match.
 */
struct bars {
	const char *name;
	unsigned int n;
	uint8_t ycbcr[8][3];
	unsigned int n_points, need;
	double points[4][2];		/* x within the bar, y within the frame */
	unsigned int percent;		/* frames that must show the bars */
};

static const struct bars kinds[] = {
	/* Ours and vivid's 75% colour bars, at the centre, below the overlays. */
	{ "bars", 8, {
		{ 180, 128, 128 }, { 161, 44, 142 }, { 131, 156, 44 }, { 112, 72, 58 },
		{ 84, 184, 198 }, { 65, 100, 212 }, { 35, 212, 114 }, { 16, 128, 128 } },
	  1, 1, { { 0.5, 0.75 } }, 100 },
	/*
	 * FFmpeg's testsrc2 (lavfi): six full bars, with a diagonal band, a
	 * box and a checker grid moving over them. Every point of a bar is
	 * covered now and then (1-2% of the frames, measured over 4500); with
	 * 2 of these 4 points per bar, 3 frames of 4500 failed: 90% of the
	 * frames must show the bars (a wrong conversion fails them all).
	 */
	{ "testsrc2", 6, {
		{ 81, 90, 240 }, { 145, 54, 34 }, { 210, 16, 146 }, { 41, 240, 110 },
		{ 106, 202, 222 }, { 170, 166, 16 } },
	  4, 2, { { 0.3, 0.5 }, { 0.7, 0.5 }, { 0.3, 0.97 }, { 0.7, 0.97 } }, 90 },
	/*
	 * A frame of pure blue, corners too: GStreamer's videotestsrc
	 * pattern=blue, which describes YUY2 as BT.709 unless told otherwise.
	 */
	{ "blue", 1, { { 32, 240, 118 } },
	  4, 4, { { 0.05, 0.05 }, { 0.95, 0.05 }, { 0.05, 0.95 }, { 0.95, 0.95 } }, 100 },
};

static const struct bars *kind = &kinds[0];	/* NULL: whole frames only */

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
	if (!kind)
		return true;
	for (unsigned int i = 0; i < kind->n; i++) {
		const uint8_t *want = kind->ycbcr[i];
		unsigned int good = 0;
		uint32_t bx = 0, by = 0;
		const uint8_t *bad = NULL;

		for (unsigned int k = 0; k < kind->n_points; k++) {
			uint32_t x = (uint32_t)((i + kind->points[k][0]) * f->width / kind->n) & ~1u;
			uint32_t y = (uint32_t)(kind->points[k][1] * f->height);
			const uint8_t *px;

			y = y < f->height ? y : f->height - 1;
			px = p + (size_t)y * f->bytesperline + x * 2;
			if (near(px[0], want[0]) && near(px[1], want[1]) && near(px[3], want[2])) {
				good++;
			} else {
				bad = px;
				bx = x;
				by = y;
			}
		}
		if (good < kind->need) {
			fprintf(stderr, "%s bar %u at (%u,%u): %u %u %u, want %u %u %u\n",
				kind->name, i, bx, by, bad[0], bad[1], bad[3], want[0], want[1],
				want[2]);
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
		fprintf(stderr, "usage: share-client DEVICE read|mmap FRAMES [SLOW_MS [CHECK]]\n");
		return 2;
	}
	if (argc > 5) {
		kind = NULL;
		for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
			if (strcmp(argv[5], kinds[i].name) == 0)
				kind = &kinds[i];
		}
		if (!kind && strcmp(argv[5], "none") != 0) {
			fprintf(stderr, "share-client: CHECK is bars, testsrc2, blue or none\n");
			return 2;
		}
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
	start = vm_clock_seconds(CLOCK_MONOTONIC);
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
	       seq_first, seq_last, start, vm_clock_seconds(CLOCK_MONOTONIC));
	close(fd);
	return (frames == want || (!want && stop)) && whole == frames &&
	       (uint64_t)bars * 100 >= (uint64_t)frames * (kind ? kind->percent : 100) ? 0 : 1;
}
