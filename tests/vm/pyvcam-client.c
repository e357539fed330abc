/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pyvcam-client: a writer that does what pyvirtualcam's v4l2loopback
 * backend (pyvirtualcam 0.14, native_linux_v4l2loopback) does, for
 * tests/vm/test-loopback.sh; written from its behaviour, no Python needed
 * (a python3 start costs seconds under TCG).
 *
 *   pyvcam-client FORMAT WIDTH HEIGHT FRAMES FPS [DEVICE]
 *
 * FORMAT is I420, NV12, YUYV, UYVY or GREY (pyvirtualcam turns its RGB and
 * BGR frames into I420 itself). Without DEVICE it probes /dev/video0 to
 * /dev/video99 in order as pyvirtualcam does: it opens each O_WRONLY |
 * O_SYNC and keeps the first whose QUERYCAP `capabilities` (not
 * device_caps) has VIDEO_OUTPUT and whose `driver` is exactly
 * "v4l2 loopback"; a node that is missing, fails to open or fails the check
 * is skipped ("skip /dev/videoN: ..." for those that exist), except that
 * EACCES ends the probe with an error, as pyvirtualcam raises then. With
 * DEVICE that node must pass the same check.
 *
 * Then S_FMT(OUTPUT) with only width, height and pixelformat set (the
 * driver fills bytesperline, sizeimage and the colorimetry; the answer is
 * printed, not used: pyvirtualcam ignores it, and sends no S_PARM), and
 * FRAMES write()s of a frame of pyvirtualcam's size (W*H*3/2, W*H*2 or
 * W*H, tightly packed) paced at FPS, then close(). A failed write() is
 * reported and the next frame written, as pyvirtualcam does.
 *
 * The frame: the 75% colour bars, eight vertical bars of limited-range
 * BT.601 Y'CbCr (share-client's "bars"); GREY: their luma bytes.
 *
 * Prints "pyvcam-client node=/dev/videoN format=F size=WxH frames=N
 * written=N short=N failed=N". Exit status: 0 every frame written whole,
 * 1 no node found or a setup step failed ("error: ..."), 2 usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <linux/videodev2.h>

#include "vm-client.h"

/* Limited-range BT.601 Y'CbCr of the 75% bars: white to black. */
static const uint8_t bars[8][3] = {
	{ 180, 128, 128 }, { 161, 44, 142 }, { 131, 156, 44 }, { 112, 72, 58 },
	{ 84, 184, 198 }, { 65, 100, 212 }, { 35, 212, 114 }, { 16, 128, 128 },
};

static const struct {
	const char *name;
	uint32_t fourcc;
} formats[] = {
	{ "I420", V4L2_PIX_FMT_YUV420 },
	{ "NV12", V4L2_PIX_FMT_NV12 },
	{ "YUYV", V4L2_PIX_FMT_YUYV },
	{ "UYVY", V4L2_PIX_FMT_UYVY },
	{ "GREY", V4L2_PIX_FMT_GREY },
};

static int
usage(void)
{
	fprintf(stderr, "usage: pyvcam-client I420|NV12|YUYV|UYVY|GREY WIDTH HEIGHT FRAMES FPS "
			"[DEVICE]\n");
	return 2;
}

/*
 * pyvirtualcam's check of one node: 1 kept (*ret_fd open), 0 skipped,
 * -errno an error that ends its probe (EACCES).
 */
static int
try_open(const char *path, bool quiet_missing, int *ret_fd)
{
	struct v4l2_capability cap;
	int fd = open(path, O_WRONLY | O_SYNC);

	if (fd < 0) {
		int e = errno;

		if (e == EACCES) {
			printf("error: %s: %s (pyvirtualcam stops its probe here)\n", path,
			       strerror(e));
			return -e;
		}
		if (e != ENOENT || !quiet_missing)
			printf("skip %s: open: %s\n", path, vm_errno_name(e));
		return 0;
	}
	memset(&cap, 0, sizeof(cap));
	if (ioctl(fd, VIDIOC_QUERYCAP, &cap) < 0) {
		printf("skip %s: QUERYCAP: %s\n", path, vm_errno_name(errno));
		close(fd);
		return 0;
	}
	if (!(cap.capabilities & V4L2_CAP_VIDEO_OUTPUT) ||
	    strcmp((const char *)cap.driver, "v4l2 loopback") != 0) {
		printf("skip %s: driver '%.16s', capabilities 0x%08x\n", path,
		       (const char *)cap.driver, cap.capabilities);
		close(fd);
		return 0;
	}
	*ret_fd = fd;
	return 1;
}

/* The frame, tightly packed as pyvirtualcam hands it over; its size in *ret_size. */
static uint8_t *
make_frame(uint32_t fourcc, uint32_t w, uint32_t h, size_t *ret_size)
{
	size_t luma = (size_t)w * h, size;
	uint8_t *p;

	if (fourcc == V4L2_PIX_FMT_YUV420 || fourcc == V4L2_PIX_FMT_NV12)
		size = luma * 3 / 2;
	else if (fourcc == V4L2_PIX_FMT_GREY)
		size = luma;
	else
		size = luma * 2;
	p = calloc(1, size);
	if (!p)
		return NULL;
	for (uint32_t y = 0; y < h; y++) {
		for (uint32_t x = 0; x < w; x++) {
			const uint8_t *c = bars[(size_t)x * 8 / w];
			size_t i = (size_t)y * w + x, ci = (size_t)(y / 2) * (w / 2) + x / 2;

			switch (fourcc) {
			case V4L2_PIX_FMT_YUV420:
				p[i] = c[0];
				p[luma + ci] = c[1];
				p[luma + luma / 4 + ci] = c[2];
				break;
			case V4L2_PIX_FMT_NV12:
				p[i] = c[0];
				p[luma + (size_t)(y / 2) * w + (x & ~1u)] = c[1];
				p[luma + (size_t)(y / 2) * w + (x | 1u)] = c[2];
				break;
			case V4L2_PIX_FMT_YUYV:
				p[i * 2] = c[0];
				p[i * 2 + 1] = x & 1 ? c[2] : c[1];
				break;
			case V4L2_PIX_FMT_UYVY:
				p[i * 2 + 1] = c[0];
				p[i * 2] = x & 1 ? c[2] : c[1];
				break;
			default:
				p[i] = c[0];
				break;
			}
		}
	}
	*ret_size = size;
	return p;
}

int
main(int argc, char **argv)
{
	struct v4l2_format fmt;
	struct timespec next;
	unsigned int frames, written = 0, shorts = 0, failed = 0;
	uint32_t fourcc = 0, w, h;
	const char *fname = NULL;
	char path[32];
	uint8_t *frame;
	size_t size;
	double fps;
	int fd = -1, r = 0;

	if (argc < 6 || argc > 7)
		return usage();
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		if (strcmp(argv[1], formats[i].name) == 0) {
			fourcc = formats[i].fourcc;
			fname = formats[i].name;
		}
	}
	w = (uint32_t)strtoul(argv[2], NULL, 10);
	h = (uint32_t)strtoul(argv[3], NULL, 10);
	frames = (unsigned int)strtoul(argv[4], NULL, 10);
	fps = strtod(argv[5], NULL);
	if (!fourcc || w < 2 || h < 2 || w > 8192 || h > 8192 || (w | h) & 1 || fps <= 0 ||
	    fps > 240)
		return usage();

	if (argc == 7) {
		snprintf(path, sizeof(path), "%s", argv[6]);
		r = try_open(path, false, &fd);
	} else {
		for (int n = 0; n < 100 && r == 0; n++) {
			snprintf(path, sizeof(path), "/dev/video%d", n);
			r = try_open(path, true, &fd);
		}
	}
	if (r < 0)
		return 1;
	if (r == 0) {
		printf("error: no v4l2 loopback device found at %s\n",
		       argc == 7 ? argv[6] : "/dev/video[0-99]");
		return 1;
	}

	memset(&fmt, 0, sizeof(fmt));
	fmt.type = V4L2_BUF_TYPE_VIDEO_OUTPUT;
	fmt.fmt.pix.width = w;
	fmt.fmt.pix.height = h;
	fmt.fmt.pix.pixelformat = fourcc;
	if (ioctl(fd, VIDIOC_S_FMT, &fmt) < 0) {
		printf("error: %s: S_FMT: %s\n", path, vm_errno_name(errno));
		return 1;
	}
	printf("s_fmt %ux%u %.4s bytesperline=%u sizeimage=%u colorspace=%u\n",
	       fmt.fmt.pix.width, fmt.fmt.pix.height, (const char *)&fmt.fmt.pix.pixelformat,
	       fmt.fmt.pix.bytesperline, fmt.fmt.pix.sizeimage, fmt.fmt.pix.colorspace);

	frame = make_frame(fourcc, w, h, &size);
	if (!frame) {
		printf("error: out of memory\n");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (unsigned int i = 0; i < frames; i++) {
		ssize_t n = write(fd, frame, size);

		if (n < 0) {
			printf("error writing frame %u: %s\n", i, vm_errno_name(errno));
			failed++;
		} else if ((size_t)n < size) {
			printf("frame %u: short write %zd of %zu\n", i, n, size);
			shorts++;
		} else {
			written++;
		}
		/* Its own pacing, to absolute deadlines (pyvirtualcam's sleep_until_next_frame). */
		next.tv_nsec += (long)(1e9 / fps);
		while (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
			;
	}
	close(fd);
	free(frame);
	printf("pyvcam-client node=%s format=%s size=%ux%u frames=%u written=%u short=%u "
	       "failed=%u\n", path, fname, w, h, frames, written, shorts, failed);
	return written == frames ? 0 : 1;
}
