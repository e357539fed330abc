/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * v4l2-mmap-bench: steady-state MMAP streaming from a V4L2 capture node.
 *
 *   v4l2-mmap-bench DEVICE WxH FPS SECS [BUFFERS]
 *
 * Sets YUYV at WxH and FPS, REQBUFS(MMAP) (default 4 buffers), maps and
 * queues them, STREAMON, dequeues (and requeues) one second of warm-up
 * frames, then streams for SECS seconds: poll(POLLIN), DQBUF, read one byte
 * per page of the frame (what any consumer does at least), QBUF. Reports
 * delivered fps and the system-wide busy CPU per frame from /proc/stat (all
 * CPUs: the daemon's work counts too) and from every task's run time
 * (bench.h), like v4l2-bench's "read", and how
 * evenly the frames' timestamps are spaced (the smallest and largest step,
 * in ms) with the sequence gaps (frames the driver dropped). Works on vivid,
 * v4l2loopback, and on v4l2cuse under v4l2cuse-run.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
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

#include "bench.h"

#define MAX_BUFS 32

/* What the dequeued frames said of themselves. */
struct spacing {
	bool seen;
	uint32_t last_seq;
	double last_ts, min_step, max_step;
	unsigned int gaps;
};

static void
spacing_add(struct spacing *s, const struct v4l2_buffer *b)
{
	double ts = b->timestamp.tv_sec + b->timestamp.tv_usec / 1e6;

	if (s->seen) {
		double step = ts - s->last_ts;

		if (b->sequence != s->last_seq + 1)
			s->gaps++;
		else if (s->min_step == 0 || step < s->min_step)
			s->min_step = step;
		if (b->sequence == s->last_seq + 1 && step > s->max_step)
			s->max_step = step;
	}
	s->seen = true;
	s->last_seq = b->sequence;
	s->last_ts = ts;
}

/* Wait for and dequeue one frame, touch it, requeue it. 1 if it was good. */
static int
cycle(int fd, uint8_t **mem, volatile uint8_t *sink, struct spacing *sp)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	struct v4l2_buffer b = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP };
	long page = sysconf(_SC_PAGESIZE);
	int good;

	if (poll(&p, 1, 5000) <= 0) {
		fprintf(stderr, "poll: no frame within 5 s\n");
		return -1;
	}
	if (xioctl(fd, VIDIOC_DQBUF, &b) < 0) {
		if (errno == EAGAIN)
			return 0;
		perror("DQBUF");
		return -1;
	}
	good = !(b.flags & V4L2_BUF_FLAG_ERROR) && b.bytesused > 0;
	if (sp)
		spacing_add(sp, &b);
	for (uint32_t off = 0; good && off < b.bytesused; off += (uint32_t)page)
		*sink += mem[b.index][off];
	if (xioctl(fd, VIDIOC_QBUF, &b) < 0) {
		perror("QBUF");
		return -1;
	}
	return good;
}

int
main(int argc, char **argv)
{
	struct v4l2_capability cap = { 0 };
	struct v4l2_format fmt = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	struct v4l2_streamparm parm = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	struct v4l2_requestbuffers rb = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					  .memory = V4L2_MEMORY_MMAP };
	uint8_t *mem[MAX_BUFS];
	struct window win;
	unsigned int w, h, fps, frames = 0, errors = 0;
	int type = V4L2_BUF_TYPE_VIDEO_CAPTURE, fd, r;
	volatile uint8_t sink = 0;
	struct spacing sp = { 0 };
	double secs, t0;

	if (argc < 5 || sscanf(argv[2], "%ux%u", &w, &h) != 2) {
		fprintf(stderr, "usage: v4l2-mmap-bench DEVICE WxH FPS SECS [BUFFERS]\n");
		return 2;
	}
	fps = (unsigned int)atoi(argv[3]);
	secs = atof(argv[4]);
	rb.count = argc > 5 ? (unsigned int)atoi(argv[5]) : 4;

	fd = open(argv[1], O_RDWR | O_NONBLOCK);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	xioctl(fd, VIDIOC_QUERYCAP, &cap);
	if (!(cap.device_caps & V4L2_CAP_STREAMING)) {
		fprintf(stderr, "%s: no STREAMING (v4l2cuse: run under v4l2cuse-run)\n", argv[1]);
		return 1;
	}
	fmt.fmt.pix.width = w;
	fmt.fmt.pix.height = h;
	fmt.fmt.pix.pixelformat = V4L2_PIX_FMT_YUYV;
	fmt.fmt.pix.field = V4L2_FIELD_NONE;
	if (xioctl(fd, VIDIOC_S_FMT, &fmt) < 0) {
		/* v4l2loopback: the writer fixed the format; take it if it fits. */
		if (errno != EBUSY || xioctl(fd, VIDIOC_G_FMT, &fmt) < 0) {
			perror("S_FMT");
			return 1;
		}
	}
	if (fmt.fmt.pix.width != w || fmt.fmt.pix.height != h ||
	    fmt.fmt.pix.pixelformat != V4L2_PIX_FMT_YUYV) {
		fprintf(stderr, "%s: %ux%u YUYV not offered\n", argv[1], w, h);
		return 1;
	}
	parm.parm.capture.timeperframe = (struct v4l2_fract){ 1, fps };
	if (xioctl(fd, VIDIOC_S_PARM, &parm) < 0)
		perror("S_PARM (continuing)");
	if (xioctl(fd, VIDIOC_REQBUFS, &rb) < 0 || rb.count < 2 || rb.count > MAX_BUFS) {
		perror("REQBUFS");
		return 1;
	}
	for (unsigned int i = 0; i < rb.count; i++) {
		struct v4l2_buffer b = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					 .memory = V4L2_MEMORY_MMAP, .index = i };

		if (xioctl(fd, VIDIOC_QUERYBUF, &b) < 0) {
			perror("QUERYBUF");
			return 1;
		}
		mem[i] = mmap(NULL, b.length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, b.m.offset);
		if (mem[i] == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
		if (xioctl(fd, VIDIOC_QBUF, &b) < 0) {
			perror("QBUF");
			return 1;
		}
	}
	if (xioctl(fd, VIDIOC_STREAMON, &type) < 0) {
		perror("STREAMON");
		return 1;
	}
	window_hook("start");
	for (t0 = now_s(); now_s() - t0 < 1.0;)
		if (cycle(fd, mem, &sink, NULL) < 0)
			return 1;
	window_open(&win);
	while (window_elapsed(&win) < secs) {
		r = cycle(fd, mem, &sink, &sp);
		if (r < 0)
			return 1;
		frames += r == 1;
		errors += r == 0;
	}
	window_close(&win);
	xioctl(fd, VIDIOC_STREAMOFF, &type);
	printf("mmap %s driver=%s size=%ux%u fps_req=%u buffers=%u frames=%u errors=%u "
	       "secs=%.2f fps=%.2f cpu_ms_per_frame=%.2f task_ms_per_frame=%.2f "
	       "ts_step_ms=%.3f..%.3f seq_gaps=%u\n",
	       argv[1], cap.driver, w, h, fps, rb.count, frames, errors, win.secs,
	       frames / win.secs, frames ? win.busy_ms / frames : 0.0,
	       frames ? win.task_ms / frames : 0.0, sp.min_step * 1000, sp.max_step * 1000, sp.gaps);
	close(fd);
	return 0;
}
