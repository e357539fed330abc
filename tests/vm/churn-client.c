/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * churn-client: one client of tests/vm/test-churn.sh.
 *
 *   churn-client DEVICE SECONDS read|mmap SEED
 *
 * Until SECONDS have passed, loops: open DEVICE, QUERYCAP, enumerate the
 * formats and discrete sizes, S_FMT a random one (one iteration in 8 tries
 * a bogus fourcc and size, which must be adjusted to an offered format, and
 * a wrong buffer type, which must fail with EINVAL), S_PARM a random rate,
 * stream 1..5 frames by read() or by MMAP buffers (mmap needs the preload
 * shim: run it under v4l2cuse-run), close (mmap: one iteration in 4 closes
 * while streaming and mapped, then unmaps), pause 0..150 ms.
 *
 * Frames are checked: a read() returns sizeimage bytes (MJPEG: 1..sizeimage
 * starting with FF D8), a dequeued buffer has a valid index, that bytesused,
 * a strictly increasing sequence, and MJPEG data starts with FF D8.
 *
 * The format is per device, so another client may change it between our
 * S_FMT and our first frame: the frames are checked against G_FMT taken once
 * we own the queue (from then on S_FMT by others gets EBUSY). EBUSY from
 * S_FMT, REQBUFS or read() (another handle owns the queue) is the spec's
 * answer, counted apart and not an error.
 *
 * Prints one line "churn-client ... errors=N" and exits 0 only if N is 0.
 * Each error is described on stderr (the first 20). A blocking call that
 * takes longer than 30 s is an error (SIGALRM interrupts it).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
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

#define CHURN_MAX_MODES 64
#define CHURN_MAX_BUFS 8
#define CHURN_BLOCK_S 30
#define CHURN_READ_MAX (1u << 20)

struct churn_mode {
	uint32_t fourcc, width, height;
};

struct churn_stats {
	unsigned long iterations, frames, busy, bogus, early_close, fmt_stolen;
	unsigned long errors;
};

static struct churn_stats st;
static const char *dev_path;
static bool use_mmap;
static unsigned int rng;

static void
churn_error(const char *fmt, ...)
{
	va_list ap;

	st.errors++;
	if (st.errors > 20)
		return;
	fprintf(stderr, "churn-client %s %s it=%lu: ", dev_path, use_mmap ? "mmap" : "read",
		st.iterations);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static unsigned int
churn_rand(unsigned int n)
{
	return n ? (unsigned int)rand_r(&rng) % n : 0;
}

static double
churn_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
churn_sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void
on_alarm(int sig)
{
	(void)sig;
}

/* Runs a blocking call with a time limit of CHURN_BLOCK_S: its result, and
 * errno ETIME instead of EINTR if SIGALRM had to cut it short. */
#define churn_timed(call)                                                      \
	({                                                                     \
		__typeof__(call) r_;                                           \
		int e_;                                                        \
		alarm(CHURN_BLOCK_S);                                          \
		r_ = (call);                                                   \
		e_ = errno;                                                    \
		alarm(0);                                                      \
		errno = r_ < 0 && e_ == EINTR ? ETIME : e_;                    \
		r_;                                                            \
	})

static int
churn_ioctl(int fd, unsigned long cmd, void *arg)
{
	return churn_timed(ioctl(fd, cmd, arg));
}

static ssize_t
churn_read(int fd, void *buf, size_t len)
{
	return churn_timed(read(fd, buf, len));
}

static unsigned int
churn_enum(int fd, struct churn_mode *modes)
{
	unsigned int n = 0;

	for (uint32_t i = 0;; i++) {
		struct v4l2_fmtdesc fd_ = { .index = i, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };

		if (churn_ioctl(fd, VIDIOC_ENUM_FMT, &fd_) < 0) {
			if (errno != EINVAL)
				churn_error("ENUM_FMT %u: %s", i, strerror(errno));
			break;
		}
		for (uint32_t j = 0; n < CHURN_MAX_MODES; j++) {
			struct v4l2_frmsizeenum fs = { .index = j, .pixel_format = fd_.pixelformat };

			if (churn_ioctl(fd, VIDIOC_ENUM_FRAMESIZES, &fs) < 0) {
				if (errno != EINVAL)
					churn_error("ENUM_FRAMESIZES: %s", strerror(errno));
				break;
			}
			if (fs.type != V4L2_FRMSIZE_TYPE_DISCRETE) {
				churn_error("frame sizes are not discrete");
				break;
			}
			modes[n++] = (struct churn_mode){ fd_.pixelformat, fs.discrete.width,
							  fs.discrete.height };
		}
	}
	if (n == 0)
		churn_error("no formats enumerated");
	return n;
}

static bool
churn_offered(const struct churn_mode *modes, unsigned int n, const struct v4l2_pix_format *p)
{
	for (unsigned int i = 0; i < n; i++)
		if (modes[i].fourcc == p->pixelformat && modes[i].width == p->width &&
		    modes[i].height == p->height)
			return true;
	return false;
}

/* One frame's payload: @len bytes at @data for format @p. */
static void
churn_check_frame(const struct v4l2_pix_format *p, const uint8_t *data, size_t len,
		  const char *what)
{
	if (p->pixelformat == V4L2_PIX_FMT_MJPEG) {
		if (len < 2 || len > p->sizeimage || data[0] != 0xff || data[1] != 0xd8)
			churn_error("%s: MJPEG frame of %zu bytes (sizeimage %u) starts %02x %02x",
				    what, len, p->sizeimage, len ? data[0] : 0, len > 1 ? data[1] : 0);
	} else if (len != p->sizeimage) {
		churn_error("%s: %zu bytes, sizeimage %u", what, len, p->sizeimage);
	}
	st.frames++;
}

/* Returns false if the queue is someone else's (EBUSY) or on error. */
static bool
churn_owned_fmt(int fd, struct v4l2_format *fmt, const struct v4l2_format *set)
{
	*fmt = (struct v4l2_format){ .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	if (churn_ioctl(fd, VIDIOC_G_FMT, fmt) < 0) {
		churn_error("G_FMT: %s", strerror(errno));
		return false;
	}
	if (fmt->fmt.pix.pixelformat != set->fmt.pix.pixelformat ||
	    fmt->fmt.pix.width != set->fmt.pix.width || fmt->fmt.pix.height != set->fmt.pix.height)
		st.fmt_stolen++;
	/* bytesperline is 0 for compressed formats (MJPEG) */
	if (fmt->fmt.pix.sizeimage == 0 ||
	    (fmt->fmt.pix.bytesperline == 0 && fmt->fmt.pix.pixelformat != V4L2_PIX_FMT_MJPEG))
		churn_error("G_FMT: sizeimage %u bytesperline %u", fmt->fmt.pix.sizeimage,
			    fmt->fmt.pix.bytesperline);
	return true;
}

static void
churn_stream_read(int fd, const struct v4l2_format *set, unsigned int frames)
{
	struct v4l2_format fmt;
	size_t cap = CHURN_READ_MAX;
	uint8_t *buf = malloc(cap);

	for (unsigned int k = 0; k < frames && buf; k++) {
		ssize_t n = churn_read(fd, buf, cap);

		if (n < 0) {
			if (errno == EBUSY && k == 0)
				st.busy++;
			else
				churn_error("read frame %u: %s", k, strerror(errno));
			break;
		}
		if (k == 0 && !churn_owned_fmt(fd, &fmt, set))
			break;
		/* We ask for more than a frame: a read returns one frame at most. */
		if (cap <= fmt.fmt.pix.sizeimage) {
			churn_error("read: sizeimage %u, raise CHURN_READ_MAX", fmt.fmt.pix.sizeimage);
			break;
		}
		churn_check_frame(&fmt.fmt.pix, buf, (size_t)n, "read");
	}
	free(buf);
}

/* Without @teardown, closes *@fd while streaming (and sets it to -1), then
 * unmaps: what an app that exits without cleaning up does. */
static void
churn_stream_mmap(int *fdp, const struct v4l2_format *set, unsigned int frames, bool teardown)
{
	int fd = *fdp;
	struct v4l2_requestbuffers req = {
		.count = 2 + churn_rand(3), .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
		.memory = V4L2_MEMORY_MMAP,
	};
	int type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	void *mem[CHURN_MAX_BUFS] = { 0 };
	size_t len[CHURN_MAX_BUFS] = { 0 };
	struct v4l2_format fmt;
	int64_t last_seq = -1;
	unsigned int i, n;

	if (churn_ioctl(fd, VIDIOC_REQBUFS, &req) < 0) {
		if (errno == EBUSY)
			st.busy++;
		else
			churn_error("REQBUFS(%u): %s", req.count, strerror(errno));
		return;
	}
	n = req.count;
	if (n < 1 || n > CHURN_MAX_BUFS) {
		churn_error("REQBUFS gave %u buffers", n);
		return;
	}
	if (!churn_owned_fmt(fd, &fmt, set))
		return;
	for (i = 0; i < n; i++) {
		struct v4l2_buffer b = { .index = i, .type = req.type, .memory = req.memory };

		if (churn_ioctl(fd, VIDIOC_QUERYBUF, &b) < 0) {
			churn_error("QUERYBUF %u: %s", i, strerror(errno));
			goto out;
		}
		if (b.length < fmt.fmt.pix.sizeimage) {
			churn_error("QUERYBUF %u: length %u < sizeimage %u", i, b.length,
				    fmt.fmt.pix.sizeimage);
			goto out;
		}
		mem[i] = mmap(NULL, b.length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, b.m.offset);
		if (mem[i] == MAP_FAILED) {
			mem[i] = NULL;
			churn_error("mmap buffer %u: %s", i, strerror(errno));
			goto out;
		}
		len[i] = b.length;
		if (churn_ioctl(fd, VIDIOC_QBUF, &b) < 0) {
			churn_error("QBUF %u: %s", i, strerror(errno));
			goto out;
		}
	}
	if (churn_ioctl(fd, VIDIOC_STREAMON, &type) < 0) {
		churn_error("STREAMON: %s", strerror(errno));
		goto out;
	}
	for (unsigned int k = 0; k < frames; k++) {
		struct v4l2_buffer b = { .type = req.type, .memory = req.memory };
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int r = poll(&pfd, 1, CHURN_BLOCK_S * 1000);

		if (r <= 0 || !(pfd.revents & POLLIN)) {
			churn_error("poll frame %u: %s (revents %#x)", k,
				    r < 0 ? strerror(errno) : r == 0 ? "timeout" : "no POLLIN",
				    (unsigned int)pfd.revents);
			goto out;
		}
		if (churn_ioctl(fd, VIDIOC_DQBUF, &b) < 0) {
			churn_error("DQBUF frame %u: %s", k, strerror(errno));
			goto out;
		}
		if (b.index >= n) {
			churn_error("DQBUF: index %u of %u", b.index, n);
			goto out;
		}
		if ((int64_t)b.sequence <= last_seq)
			churn_error("DQBUF: sequence %u after %lld", b.sequence, (long long)last_seq);
		last_seq = b.sequence;
		if (b.flags & V4L2_BUF_FLAG_ERROR)
			churn_error("DQBUF: error flag on buffer %u", b.index);
		else
			churn_check_frame(&fmt.fmt.pix, mem[b.index], b.bytesused, "mmap");
		if (churn_ioctl(fd, VIDIOC_QBUF, &b) < 0) {
			churn_error("QBUF %u again: %s", b.index, strerror(errno));
			goto out;
		}
	}
	if (!teardown) {
		st.early_close++;
		if (close(fd) < 0)
			churn_error("close while streaming: %s", strerror(errno));
		*fdp = -1;
	} else if (churn_ioctl(fd, VIDIOC_STREAMOFF, &type) < 0) {
		churn_error("STREAMOFF: %s", strerror(errno));
	}
out:
	for (i = 0; i < n; i++)
		if (mem[i])
			munmap(mem[i], len[i]);
	if (*fdp < 0)
		return;
	req.count = 0;
	if (churn_ioctl(fd, VIDIOC_REQBUFS, &req) < 0)
		churn_error("REQBUFS(0): %s", strerror(errno));
}

/* Wrong things a client may ask; each has one right answer. */
static void
churn_bogus(int fd, const struct churn_mode *modes, unsigned int n)
{
	struct v4l2_format f = { .type = V4L2_BUF_TYPE_VIDEO_OUTPUT };

	st.bogus++;
	if (churn_ioctl(fd, VIDIOC_S_FMT, &f) == 0)
		churn_error("S_FMT of an OUTPUT type succeeded, want EINVAL");
	else if (errno != EINVAL)
		churn_error("S_FMT of an OUTPUT type: %s, want EINVAL", strerror(errno));
	f = (struct v4l2_format){ .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	f.fmt.pix.pixelformat = 0xdeadbeef;
	f.fmt.pix.width = 1 + churn_rand(100000);
	f.fmt.pix.height = churn_rand(3) ? 7 : 0;
	f.fmt.pix.field = V4L2_FIELD_INTERLACED;
	if (churn_ioctl(fd, VIDIOC_TRY_FMT, &f) < 0)
		churn_error("TRY_FMT of a made-up format: %s", strerror(errno));
	else if (!churn_offered(modes, n, &f.fmt.pix) || f.fmt.pix.field != V4L2_FIELD_NONE)
		churn_error("TRY_FMT of a made-up format gave %ux%u %.4s field %u", f.fmt.pix.width,
			    f.fmt.pix.height, (const char *)&f.fmt.pix.pixelformat,
			    f.fmt.pix.field);
}

static void
churn_iteration(void)
{
	struct churn_mode modes[CHURN_MAX_MODES];
	struct v4l2_capability cap = { 0 };
	struct v4l2_format set = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	struct v4l2_streamparm parm = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	unsigned int n, frames = 1 + churn_rand(5);
	bool teardown = churn_rand(4) != 0;
	int fd;

	st.iterations++;
	fd = open(dev_path, O_RDWR);
	if (fd < 0) {
		churn_error("open: %s", strerror(errno));
		return;
	}
	if (churn_ioctl(fd, VIDIOC_QUERYCAP, &cap) < 0) {
		churn_error("QUERYCAP: %s", strerror(errno));
		goto out;
	}
	if (!(cap.device_caps & V4L2_CAP_VIDEO_CAPTURE) ||
	    !(cap.device_caps & (use_mmap ? V4L2_CAP_STREAMING : V4L2_CAP_READWRITE))) {
		churn_error("QUERYCAP: device caps %#x lack %s", cap.device_caps,
			    use_mmap ? "STREAMING (is the shim preloaded?)" : "READWRITE");
		goto out;
	}
	n = churn_enum(fd, modes);
	if (n == 0)
		goto out;
	if (churn_rand(8) == 0)
		churn_bogus(fd, modes, n);

	const struct churn_mode *m = &modes[churn_rand(n)];

	set.fmt.pix.pixelformat = m->fourcc;
	set.fmt.pix.width = m->width;
	set.fmt.pix.height = m->height;
	set.fmt.pix.field = V4L2_FIELD_NONE;
	if (churn_ioctl(fd, VIDIOC_S_FMT, &set) < 0) {
		if (errno == EBUSY)
			st.busy++;
		else
			churn_error("S_FMT %ux%u %.4s: %s", m->width, m->height,
				    (const char *)&m->fourcc, strerror(errno));
		goto out;
	}
	if (set.fmt.pix.pixelformat != m->fourcc || set.fmt.pix.width != m->width ||
	    set.fmt.pix.height != m->height) {
		churn_error("S_FMT %ux%u %.4s gave %ux%u %.4s", m->width, m->height,
			    (const char *)&m->fourcc, set.fmt.pix.width, set.fmt.pix.height,
			    (const char *)&set.fmt.pix.pixelformat);
		goto out;
	}
	parm.parm.capture.timeperframe = (struct v4l2_fract){ 1, churn_rand(2) ? 30 : 15 };
	if (churn_ioctl(fd, VIDIOC_S_PARM, &parm) < 0 && errno != EBUSY)
		churn_error("S_PARM: %s", strerror(errno));

	if (use_mmap)
		churn_stream_mmap(&fd, &set, frames, teardown);
	else
		churn_stream_read(fd, &set, frames);
out:
	if (fd >= 0 && close(fd) < 0)
		churn_error("close: %s", strerror(errno));
}

int
main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_alarm };	/* no SA_RESTART */
	double end;

	if (argc != 5 || (strcmp(argv[3], "read") != 0 && strcmp(argv[3], "mmap") != 0)) {
		fprintf(stderr, "usage: churn-client DEVICE SECONDS read|mmap SEED\n");
		return 2;
	}
	dev_path = argv[1];
	end = churn_now() + atof(argv[2]);
	use_mmap = strcmp(argv[3], "mmap") == 0;
	rng = (unsigned int)strtoul(argv[4], NULL, 0);
	sigaction(SIGALRM, &sa, NULL);

	while (churn_now() < end) {
		churn_iteration();
		churn_sleep_ms(churn_rand(150));
	}
	printf("churn-client dev=%s mode=%s iterations=%lu frames=%lu busy=%lu bogus=%lu "
	       "early_close=%lu fmt_changed_by_others=%lu errors=%lu\n",
	       dev_path, argv[3], st.iterations, st.frames, st.busy, st.bogus, st.early_close,
	       st.fmt_stolen, st.errors);
	return st.errors ? 1 : 0;
}
