/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * v4l2-bench: what a V4L2 capture node costs a client.
 *
 *   v4l2-bench rtt DEVICE [N]              QUERYCAP and G_FMT round trips
 *   v4l2-bench read DEVICE WxH FPS SECS    steady-state read() capture
 *
 * "read" sets YUYV at WxH and FPS, reads (and discards) one second of warm-up
 * frames, then reads for SECS seconds, one read() of sizeimage per frame, and
 * reports delivered fps, MB/s and the system-wide busy CPU per frame taken
 * from /proc/stat (all CPUs: the daemon's work counts, not only ours) and
 * from every task's run time (bench.h: exact, where /proc/stat samples).
 * Works on any capture node with read() I/O (v4l2cuse, vivid).
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

static int
bench_rtt(const char *dev, int n)
{
	int fd = open(dev, O_RDWR);
	struct v4l2_capability cap;
	struct v4l2_format fmt = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	double t0, t1, t2;

	if (fd < 0) {
		perror(dev);
		return 1;
	}
	t0 = now_s();
	for (int i = 0; i < n; i++)
		if (xioctl(fd, VIDIOC_QUERYCAP, &cap) < 0) {
			perror("QUERYCAP");
			return 1;
		}
	t1 = now_s();
	for (int i = 0; i < n; i++)
		if (xioctl(fd, VIDIOC_G_FMT, &fmt) < 0) {
			perror("G_FMT");
			return 1;
		}
	t2 = now_s();
	printf("rtt %s driver=%s querycap_us=%.1f g_fmt_us=%.1f n=%d\n", dev, cap.driver,
	       (t1 - t0) / n * 1e6, (t2 - t1) / n * 1e6, n);
	close(fd);
	return 0;
}

static int
bench_read(const char *dev, unsigned int w, unsigned int h, unsigned int fps, double secs)
{
	int fd = open(dev, O_RDWR);
	struct v4l2_capability cap = { 0 };
	struct v4l2_format fmt = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	struct v4l2_streamparm parm = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	struct window win;
	unsigned int frames = 0;
	uint8_t *buf;
	double t0;

	if (fd < 0) {
		perror(dev);
		return 1;
	}
	xioctl(fd, VIDIOC_QUERYCAP, &cap);
	fmt.fmt.pix.width = w;
	fmt.fmt.pix.height = h;
	fmt.fmt.pix.pixelformat = V4L2_PIX_FMT_YUYV;
	fmt.fmt.pix.field = V4L2_FIELD_NONE;
	if (xioctl(fd, VIDIOC_S_FMT, &fmt) < 0) {
		perror("S_FMT");
		return 1;
	}
	if (fmt.fmt.pix.width != w || fmt.fmt.pix.height != h) {
		fprintf(stderr, "%s: %ux%u not offered (got %ux%u)\n", dev, w, h,
			fmt.fmt.pix.width, fmt.fmt.pix.height);
		return 1;
	}
	parm.parm.capture.timeperframe = (struct v4l2_fract){ 1, fps };
	if (xioctl(fd, VIDIOC_S_PARM, &parm) < 0)
		perror("S_PARM (continuing)");
	buf = malloc(fmt.fmt.pix.sizeimage);
	window_hook("start");
	for (t0 = now_s(); now_s() - t0 < 1.0;)
		if (read(fd, buf, fmt.fmt.pix.sizeimage) < 0 && errno != EINTR) {
			perror("read");
			return 1;
		}
	window_open(&win);
	while (window_elapsed(&win) < secs) {
		ssize_t n = read(fd, buf, fmt.fmt.pix.sizeimage);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			perror("read");
			return 1;
		}
		if ((size_t)n != fmt.fmt.pix.sizeimage) {
			fprintf(stderr, "short frame: %zd of %u\n", n, fmt.fmt.pix.sizeimage);
			return 1;
		}
		frames++;
	}
	window_close(&win);
	printf("read %s driver=%s size=%ux%u fps_req=%u frames=%u secs=%.2f fps=%.2f "
	       "MBps=%.2f cpu_ms_per_frame=%.2f task_ms_per_frame=%.2f\n",
	       dev, cap.driver, w, h, fps, frames, win.secs, frames / win.secs,
	       frames * (double)fmt.fmt.pix.sizeimage / win.secs / 1e6,
	       frames ? win.busy_ms / frames : 0.0, frames ? win.task_ms / frames : 0.0);
	free(buf);
	close(fd);
	return 0;
}

int
main(int argc, char **argv)
{
	unsigned int w, h;

	if (argc >= 3 && strcmp(argv[1], "rtt") == 0)
		return bench_rtt(argv[2], argc > 3 ? atoi(argv[3]) : 1000);
	if (argc == 6 && strcmp(argv[1], "read") == 0 && sscanf(argv[3], "%ux%u", &w, &h) == 2)
		return bench_read(argv[2], w, h, (unsigned int)atoi(argv[4]), atof(argv[5]));
	fprintf(stderr, "usage: v4l2-bench rtt DEVICE [N]\n"
			"       v4l2-bench read DEVICE WxH FPS SECS\n");
	return 2;
}
