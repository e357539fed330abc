/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * read() emulation of the preload shim (an app's read() comes through
 * preload/read.c; docs/shim.md, "read() through the fast path"), built the
 * way vb2 builds its file I/O on top of its own streaming calls: on the
 * first read() (or a poll asking POLLIN, where the daemon's own emulation
 * would start) of a handle whose fast path can
 * stream and which has no buffers, the shim asks REQBUFS for the queue's
 * read-buffers= count of MMAP buffers through CUSE, maps them (MAP, as an
 * app's mmap() does, read-only and outside the mapping table: their life
 * is the handle's), QBUFs them all and STREAMONs. From then on a read()
 * takes a completion from the ring (the fast path's DQBUF), copies from
 * the mapped buffer into the app's, and queues the buffer again through
 * the ring once the frame is read to its end. The daemon sees an ordinary
 * MMAP streamer: no CUSE request per frame, one copy.
 *
 * What a read() answers follows videobuf/read.c: a short read continues
 * the same frame at the next call, a read never spans two frames, ERROR
 * and empty frames are skipped, EAGAIN with O_NONBLOCK (the file's flags
 * now), a blocking wait ended by a signal gives EINTR, EIO in the error
 * state, EINVAL once the queue stopped; while it runs, the handle's
 * streaming ioctls and mmap() answer as vb2 answers during file I/O
 * (EBUSY), and REQBUFS(0) stops it. One difference, as vb2 itself: a
 * frame read to its end goes back to the driver at once; the daemon keeps
 * it until the next call only because it replies from the frame's memory.
 *
 * Whatever cannot start here (no fast path, V4L2CUSE_FASTPATH=0, buffers
 * or another owner, an output queue, REQBUFS refused) goes through the
 * real read(), which gives the daemon's answer.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/videodev2.h>

#include "shim-client.h"

bool
shim_fp_reading(struct shim_handle *h)
{
	return shim_fp_of(h) && __atomic_load_n(&shim_fp_of(h)->rd.active, __ATOMIC_ACQUIRE);
}

/* Could the emulation start here, where the daemon would start its own? */
static bool
rd_eligible(struct shim_fp *fp, struct v4l2cuse_fp_state *st)
{
	return fp && !fp->dead && shim_fp_state(fp, st) &&
	       !(st->flags & (V4L2CUSE_FP_ACTIVE | V4L2CUSE_FP_OUTPUT | V4L2CUSE_FP_BROKEN)) &&
	       st->type == V4L2_BUF_TYPE_VIDEO_CAPTURE && st->n_buffers == 0 &&
	       st->read_buffers > 0 && st->read_buffers <= SHIM_MAX_BUFFERS;
}

/*
 * Unmap the buffers. @tell: the handle that lives on, whose daemon hears
 * UNMAP of each; NULL when the handle itself goes (its release frees them).
 */
static void
rd_unmap(struct shim_fp *fp, struct shim_handle *tell)
{
	for (unsigned int i = 0; i < fp->rd.n; i++) {
		if (!fp->rd.mem[i])
			continue;
		shim_fp_unmap_internal(tell, fp->rd.mem[i], fp->rd.len[i], fp->rd.map_id[i]);
		fp->rd.mem[i] = NULL;
	}
	fp->rd.n = 0;
	fp->rd.cur = false;
	__atomic_store_n(&fp->rd.partial, false, __ATOMIC_RELEASE);
}

/* Map buffer @index read-only (QUERYBUF through CUSE, then MAP as mmap() asks). */
static int
rd_map_locked(struct shim_handle *h, int fd, unsigned int index)
{
	struct shim_fp *fp = shim_fp_of(h);

	return shim_fp_map_internal(h, fd, fp->rd.type, index, PROT_READ, &fp->rd.mem[index],
				    &fp->rd.len[index], &fp->rd.map_id[index]);
}

/* __vb2_init_fileio() through CUSE: 0, or -errno with nothing left behind. */
static int
rd_start_locked(struct shim_handle *h, int fd)
{
	struct shim_fp *fp = shim_fp_of(h);
	struct v4l2cuse_fp_state st;
	struct v4l2_requestbuffers rb = { 0 };
	int r, type;

	if (fp->rd.active)
		return 0;
	if (!rd_eligible(fp, &st))
		return -EAGAIN;
	rb.count = st.read_buffers;
	rb.type = st.type;
	rb.memory = V4L2_MEMORY_MMAP;
	r = shim_cuse_ioctl(fd, VIDIOC_REQBUFS, &rb);
	if (r < 0) {
		shim_debug("read() emulation: REQBUFS: %s", strerror(-r));
		return r;	/* another owner, ...: the daemon answers the read() */
	}
	fp->rd.type = st.type;
	fp->rd.n = rb.count;
	if (rb.count == 0 || rb.count > SHIM_MAX_BUFFERS) {
		fp->rd.n = 0;
		r = -ENOMEM;
		goto err_free;
	}
	for (unsigned int i = 0; i < fp->rd.n && r == 0; i++)
		r = rd_map_locked(h, fd, i);
	for (unsigned int i = 0; i < fp->rd.n && r == 0; i++) {
		struct v4l2_buffer b = { .index = i, .type = st.type,
					 .memory = V4L2_MEMORY_MMAP };

		r = shim_cuse_ioctl(fd, VIDIOC_QBUF, &b);
	}
	type = (int)st.type;
	if (r == 0)
		r = shim_cuse_ioctl(fd, VIDIOC_STREAMON, &type);
	if (r < 0)
		goto err_free;
	fp->rd.cur = false;
	__atomic_store_n(&fp->rd.active, true, __ATOMIC_RELEASE);
	shim_debug("read() emulation: %u buffers through the fast path", fp->rd.n);
	return 0;

err_free:
	shim_debug("read() emulation not started: %s", strerror(-r));
	rd_unmap(shim_fp_of(h), h);
	rb = (struct v4l2_requestbuffers){ .count = 0, .type = st.type,
					   .memory = V4L2_MEMORY_MMAP };
	(void)shim_cuse_ioctl(fd, VIDIOC_REQBUFS, &rb);
	return r;
}

/* STREAMOFF and unmap; the caller frees the buffers (REQBUFS(0)). 0 or -errno. */
static int
rd_stop_locked(struct shim_handle *h, int fd)
{
	struct shim_fp *fp = shim_fp_of(h);
	int type = (int)fp->rd.type, r;

	r = shim_cuse_ioctl(fd, VIDIOC_STREAMOFF, &type);
	if (r < 0)
		return r;
	rd_unmap(shim_fp_of(h), h);
	__atomic_store_n(&fp->rd.active, false, __ATOMIC_RELEASE);
	return 0;
}

void
shim_fp_read_free(struct shim_fp *fp)
{
	rd_unmap(fp, NULL);
	fp->rd.active = false;
}

/* A buffer the reader is done with goes back (vb2_core_qbuf), through the ring if it can. */
static void
rd_requeue_locked(struct shim_handle *h, int fd, uint32_t index)
{
	struct v4l2_buffer b = { .index = index, .type = shim_fp_of(h)->rd.type,
				 .memory = V4L2_MEMORY_MMAP };
	int r = 0;

	if (!shim_fp_qbuf(h, &b, &r)) {
		b = (struct v4l2_buffer){ .index = index, .type = shim_fp_of(h)->rd.type,
					  .memory = V4L2_MEMORY_MMAP };
		r = shim_cuse_ioctl(fd, VIDIOC_QBUF, &b);
	}
	if (r < 0)
		shim_debug("read() emulation: QBUF %u: %s", index, strerror(-r));
}

/*
 * The next frame (vb_read_next_frame_locked): DQBUF through the ring (or
 * CUSE when the ring cannot answer: the error state, a stopped queue),
 * ERROR and empty frames skipped. 0, 1 if it waited (without rd.lock:
 * look at everything again), -EAGAIN, -EINTR, -EIO, -EINVAL.
 *
 * The wait is vb2's: its DQBUF waits with the queue unlocked, so another
 * thread's STREAMOFF, REQBUFS(0) or QUERYBUF of the handle is answered at
 * once, not after the next frame (issue 28, item 6). Once it waited, the
 * call goes on with the file pinned (another thread may close the fd).
 */
static int
rd_next_frame_locked(struct shim_handle *h, struct shim_fp_file *file, bool *woken)
{
	struct shim_fp *fp = shim_fp_of(h);

	for (;;) {
		struct v4l2_buffer b = { .type = fp->rd.type, .memory = V4L2_MEMORY_MMAP };
		int r = 0;

		switch (shim_fp_dqbuf_try(h, shim_fp_file_fd(file), &b, &r, *woken)) {
		case SHIM_FP_DQ_DONE:
			break;
		case SHIM_FP_DQ_CUSE:
			b = (struct v4l2_buffer){ .type = fp->rd.type,
						  .memory = V4L2_MEMORY_MMAP };
			r = shim_cuse_ioctl(shim_fp_file_fd(file), VIDIOC_DQBUF, &b);
			break;
		case SHIM_FP_DQ_WAIT:
			shim_fp_file_pin(file);
			pthread_mutex_unlock(&fp->rd.lock);
			r = shim_fp_wait(h);
			pthread_mutex_lock(&fp->rd.lock);
			*woken = true;
			return r == -EINTR ? r : 1;	/* gone: CUSE answers at the next try */
		}
		if (r < 0)
			return r;
		if (b.index >= fp->rd.n || !fp->rd.mem[b.index])
			return -EIO;	/* never: the daemon only names our buffers */
		if ((b.flags & V4L2_BUF_FLAG_ERROR) || b.bytesused == 0) {
			shim_debug("read() emulation: skipping %s buffer %u",
				   b.bytesused ? "failed" : "empty", b.index);
			rd_requeue_locked(h, shim_fp_file_fd(file), b.index);
			continue;
		}
		fp->rd.cur = true;
		fp->rd.index = b.index;
		fp->rd.pos = 0;
		fp->rd.size = b.bytesused < fp->rd.len[b.index] ? b.bytesused
								 : (uint32_t)fp->rd.len[b.index];
		return 0;
	}
}

/*
 * One read() with the emulation running: bytes or -errno; *ret_stopped
 * when another thread stopped it (REQBUFS(0)) while this one waited.
 */
static ssize_t
rd_read_locked(struct shim_handle *h, struct shim_fp_file *file, void *buf, size_t count,
	       bool *ret_stopped)
{
	struct shim_fp *fp = shim_fp_of(h);
	bool woken = false;
	size_t n;
	int r;

	if (count == 0)
		return 0;
	if (!shim_range_mapped(buf, count))
		return -EFAULT;
	while (!fp->rd.cur) {
		if (!fp->rd.active) {
			*ret_stopped = true;
			return 0;
		}
		r = rd_next_frame_locked(h, file, &woken);
		if (r < 0)
			return r;
	}
	n = fp->rd.size - fp->rd.pos;
	if (count < n)
		n = count;
	memcpy(buf, (const char *)fp->rd.mem[fp->rd.index] + fp->rd.pos, n);
	fp->rd.pos += (uint32_t)n;
	if (fp->rd.pos >= fp->rd.size) {
		/* Read to its end: back to the driver now, as vb2 does. */
		fp->rd.cur = false;
		rd_requeue_locked(h, shim_fp_file_fd(file), fp->rd.index);
	}
	__atomic_store_n(&fp->rd.partial, fp->rd.cur, __ATOMIC_RELEASE);
	return (ssize_t)n;
}

bool
shim_fp_read(struct shim_handle *h, int fd, void *buf, size_t count, ssize_t *ret)
{
	struct shim_fp *fp = shim_fp_of(h);
	struct shim_fp_file file = { fd, -1 };
	bool stopped;

	if (!fp || (!fp->rd.active && fp->dead))
		return false;
	pthread_mutex_lock(&fp->rd.lock);
	do {
		stopped = false;
		if (!fp->rd.active &&
		    (count == 0 || rd_start_locked(h, shim_fp_file_fd(&file)) < 0)) {
			pthread_mutex_unlock(&fp->rd.lock);
			if (file.pin < 0)
				return false;	/* the caller's fd: the real read() answers */
			/* It waited, and the emulation was stopped meanwhile: the daemon's read(). */
			*ret = shim_real.read(file.pin, buf, count);
			if (*ret < 0)
				*ret = -errno;
			shim_fp_file_unpin(&file);
			return true;
		}
		/* Stopped (REQBUFS(0)) while it waited: it starts again, as the daemon's would. */
		*ret = rd_read_locked(h, &file, buf, count, &stopped);
	} while (stopped);
	pthread_mutex_unlock(&fp->rd.lock);
	shim_fp_file_unpin(&file);
	return true;
}

void
shim_fp_read_autostart(struct shim_handle *h, int fd, short events)
{
	struct shim_fp *fp = shim_fp_of(h);
	struct v4l2cuse_fp_state st;
	int saved = errno;

	/* vb2_core_poll(): only a capture queue asked for POLLIN starts it. */
	if (!fp || !(events & (POLLIN | POLLRDNORM)) || shim_fp_reading(h) ||
	    !rd_eligible(fp, &st))
		return;
	pthread_mutex_lock(&fp->rd.lock);
	(void)rd_start_locked(h, fd);
	pthread_mutex_unlock(&fp->rd.lock);
	errno = saved;
}

bool
shim_fp_read_ioctl(struct shim_handle *h, int fd, unsigned long request, void *arg, int *ret)
{
	struct shim_fp *fp = shim_fp_of(h);
	bool done = true;
	int r = 0;

	if (!shim_fp_reading(h) || !arg)
		return false;	/* no argument: CUSE says EFAULT before anything */
	pthread_mutex_lock(&fp->rd.lock);
	if (!fp->rd.active) {
		pthread_mutex_unlock(&fp->rd.lock);
		return false;
	}
	switch (request) {
	case VIDIOC_REQBUFS: {
		/*
		 * vb_queue_reqbufs() during read emulation: the memory type and
		 * the buffer type checked first (EINVAL; asked through CUSE with
		 * CREATE_BUFS(0), which checks them the same way and the
		 * priority as REQBUFS does), then REQBUFS(0) stops the
		 * emulation and anything else is EBUSY.
		 */
		struct v4l2_requestbuffers *rb = arg;
		struct v4l2_create_buffers probe = { .count = 0, .memory = rb->memory };

		probe.format.type = rb->type;
		r = shim_cuse_ioctl(fd, VIDIOC_CREATE_BUFS, &probe);
		if (r == 0 && rb->count == 0) {
			r = rd_stop_locked(h, fd);
			if (r == 0)
				r = shim_cuse_ioctl(fd, VIDIOC_REQBUFS, rb);
			break;
		}
		/* A failed ioctl copies nothing back (video_usercopy, CUSE). */
		if (r == 0)
			r = -EBUSY;
		break;
	}
	case VIDIOC_CREATE_BUFS: {
		/* count 0 only checks (the daemon says 0 during read emulation too). */
		struct v4l2_create_buffers *cb = arg, probe = *cb;

		if (cb->count == 0) {
			done = false;
			break;
		}
		probe.count = 0;
		r = shim_cuse_ioctl(fd, VIDIOC_CREATE_BUFS, &probe);
		if (r == 0)
			r = -EBUSY;	/* and, failed, nothing is copied back */
		break;
	}
	case VIDIOC_PREPARE_BUF:
	case VIDIOC_QBUF:
	case VIDIOC_DQBUF:
	case VIDIOC_STREAMON:
	case VIDIOC_STREAMOFF:
		r = -EBUSY;	/* vb2: "file io in progress" */
		break;
	case VIDIOC_QUERYBUF: {
		struct v4l2_buffer *b = arg;

		/* The daemon's emulation buffers are never mapped by the app. */
		r = shim_cuse_ioctl(fd, request, arg);
		if (r == 0)
			b->flags &= ~(uint32_t)V4L2_BUF_FLAG_MAPPED;
		break;
	}
	default:
		done = false;
		break;
	}
	pthread_mutex_unlock(&fp->rd.lock);
	if (done)
		*ret = r;
	return done;
}
