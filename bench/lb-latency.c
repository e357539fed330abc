/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lb-latency: writer-to-reader latency of a loopback (ours or
 * v4l2loopback), and what it costs.
 *
 *   lb-latency write DEV WxH FPS SECONDS   write YUYV frames, each stamped
 *   lb-latency read DEV WxH SECONDS        read() frames, print the latency
 *
 * The writer sets YUYV WxH on DEV (VIDEO_OUTPUT) and writes one frame per
 * write() at FPS, its first 8 bytes the CLOCK_MONOTONIC time (ns) just
 * before the write. The reader sets YUYV WxH on DEV (VIDEO_CAPTURE: our
 * capture node, or v4l2loopback's one node) and reads frames; for each
 * whole frame whose stamp is new, latency = now - stamp. Same format and
 * size on both sides, so the bytes pass unchanged. It prints
 * "frames=N new=N median_ms=X p90_ms=X max_ms=X busy_ms_per_frame=X" (busy:
 * the system's busy CPU from /proc/stat over the run, per new frame).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <linux/videodev2.h>

#include "bench.h"

#define MAX_SAMPLES 100000

/* The system's busy CPU time so far (bench.h's jiffies), in seconds. */
static double
busy_seconds(void)
{
	unsigned long long busy, total;

	cpu_jiffies(&busy, &total);
	return (double)busy / sysconf(_SC_CLK_TCK);
}

static int
set_fmt(int fd, uint32_t type, uint32_t w, uint32_t h, uint32_t *ret_size)
{
	struct v4l2_format f = { .type = type };

	f.fmt.pix.width = w;
	f.fmt.pix.height = h;
	f.fmt.pix.pixelformat = V4L2_PIX_FMT_YUYV;
	f.fmt.pix.field = V4L2_FIELD_NONE;
	if (ioctl(fd, VIDIOC_S_FMT, &f) < 0)
		return -errno;
	if (f.fmt.pix.width != w || f.fmt.pix.height != h)
		return -EINVAL;
	*ret_size = f.fmt.pix.sizeimage;
	return 0;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
	uint32_t w, h, size;
	int fd, r;

	if (argc < 5 || sscanf(argv[3], "%ux%u", &w, &h) != 2) {
		fprintf(stderr, "usage: lb-latency write DEV WxH FPS SECONDS | read DEV WxH SECONDS\n");
		return 2;
	}
	fd = open(argv[2], O_RDWR);
	if (fd < 0) {
		perror(argv[2]);
		return 1;
	}
	if (strcmp(argv[1], "write") == 0 && argc >= 6) {
		double fps = atof(argv[4]), secs = atof(argv[5]);
		uint64_t period = (uint64_t)(1e9 / fps), end = v4l2cuse_now_ns() + (uint64_t)(secs * 1e9);
		uint64_t next = v4l2cuse_now_ns();
		uint8_t *buf;

		r = set_fmt(fd, V4L2_BUF_TYPE_VIDEO_OUTPUT, w, h, &size);
		if (r < 0) {
			fprintf(stderr, "S_FMT(OUTPUT): %s\n", strerror(-r));
			return 1;
		}
		buf = malloc(size);
		for (uint32_t i = 0; i < size; i += 2) {
			buf[i] = 100;
			buf[i + 1] = 128;
		}
		while (v4l2cuse_now_ns() < end) {
			uint64_t t;
			struct timespec ts;

			next += period;
			t = v4l2cuse_now_ns();
			memcpy(buf, &t, sizeof(t));
			if (write(fd, buf, size) != (ssize_t)size) {
				perror("write");
				return 1;
			}
			ts.tv_sec = (time_t)(next / 1000000000u);
			ts.tv_nsec = (long)(next % 1000000000u);
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		}
		return 0;
	}
	if (strcmp(argv[1], "read") == 0) {
		double secs = atof(argv[4]), b0 = busy_seconds(), b1;
		uint64_t end = v4l2cuse_now_ns() + (uint64_t)(secs * 1e9), last = 0;
		uint64_t *lat = calloc(MAX_SAMPLES, sizeof(*lat));
		unsigned int frames = 0, n = 0;
		uint8_t *buf;

		r = set_fmt(fd, V4L2_BUF_TYPE_VIDEO_CAPTURE, w, h, &size);
		if (r < 0) {
			fprintf(stderr, "S_FMT(CAPTURE): %s\n", strerror(-r));
			return 1;
		}
		buf = malloc(size + 1);
		while (v4l2cuse_now_ns() < end) {
			ssize_t got = read(fd, buf, size + 1);
			uint64_t t, now = v4l2cuse_now_ns();

			if (got < 0 && errno == EINTR)
				continue;
			if (got < 0) {
				perror("read");
				return 1;
			}
			frames++;
			if ((size_t)got != size)
				continue;
			memcpy(&t, buf, sizeof(t));
			if (t == last || t > now || now - t > 10000000000ull)
				continue;	/* a repeat, or not a stamp (placeholder) */
			last = t;
			if (n < MAX_SAMPLES)
				lat[n++] = now - t;
		}
		b1 = busy_seconds();
		if (!n) {
			printf("frames=%u new=0\n", frames);
			return 1;
		}
		qsort(lat, n, sizeof(*lat), cmp_u64);
		printf("frames=%u new=%u median_ms=%.2f p90_ms=%.2f max_ms=%.2f busy_ms_per_frame=%.2f\n",
		       frames, n, lat[n / 2] / 1e6, lat[n * 9 / 10] / 1e6, lat[n - 1] / 1e6,
		       (b1 - b0) * 1000 / n);
		return 0;
	}
	fprintf(stderr, "lb-latency: write or read\n");
	return 2;
}
