/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * write() emulation of the preload shim on a writer node (an app's write()
 * comes through preload/read.c; docs/shim.md, "write() through the fast
 * path"), the mirror of fpread.c. Through CUSE a write() is cut into
 * requests of 128 KiB (five for a 640x480 YUYV frame); here it costs one
 * copy into a buffer both sides map and one wake-up of the daemon.
 *
 * The first write() of a handle goes through CUSE: the daemon's write()
 * decides whether the handle may write (one writer at a time, else EBUSY)
 * and makes it the writer until it closes. Then, if the handle's fast path
 * can stream and the format is raw, the shim asks through CUSE what vb2's
 * write() file I/O would: REQBUFS of the node's write_buffers count of MMAP
 * output buffers, maps them (MAP, as an app's mmap() does, read-write and
 * outside the mapping table: their life is the handle's) and STREAMONs.
 * From then on a write() copies the app's bytes into a free buffer and
 * QBUFs it through the ring with their count as bytesused; the daemon
 * takes it at the kick as a frame of the loopback, and its completion
 * frees the buffer again. The daemon sees an MMAP output streamer.
 *
 * What a write() answers is what the daemon's own write() answers
 * (daemon/fh.c, docs/loopback.md): one frame per call, bytes past a raw
 * frame not taken (the frame size is returned), a shorter call taken and
 * never shown (the daemon counts it as refused). It never answers EAGAIN
 * and never waits for a reader: a write() that finds every buffer queued
 * waits until the daemon has taken an earlier one, with O_NONBLOCK too
 * and through signals, as a CUSE write() waits for its reply. Compressed
 * formats (the daemon looks for a JPEG's markers, and a call that ends
 * without one is whole only when the next begins) go through CUSE. The
 * queue is the emulation's alone: the app's buffer ioctls, S_FMT and
 * mmap() find it as the daemon's write() leaves it (the emulation stops
 * first, and the next write() starts it again).
 *
 * Whatever cannot start here (no fast path, V4L2CUSE_FASTPATH=0, a daemon
 * that publishes no write_buffers, buffers of the app's own, a compressed
 * format, REQBUFS refused) goes through the real write(), which gives the
 * daemon's answer.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/videodev2.h>

#include "shim-client.h"

#define OUTPUT V4L2_BUF_TYPE_VIDEO_OUTPUT

bool
shim_fp_writing(struct shim_handle *h)
{
	return shim_fp_of(h) && __atomic_load_n(&shim_fp_of(h)->wr.active, __ATOMIC_ACQUIRE);
}

/* Could the emulation start here: a writer node's idle queue, a daemon that has it? */
static bool
wr_eligible(struct shim_fp *fp, struct v4l2cuse_fp_state *st)
{
	return fp && !fp->dead && shim_fp_state(fp, st) &&
	       !(st->flags & (V4L2CUSE_FP_ACTIVE | V4L2CUSE_FP_BROKEN)) &&
	       (st->flags & V4L2CUSE_FP_OUTPUT) && st->type == OUTPUT && st->n_buffers == 0 &&
	       st->write_buffers > 0 && st->write_buffers <= SHIM_MAX_BUFFERS;
}

/*
 * Unmap the buffers. @tell: the handle that lives on, whose daemon hears
 * UNMAP of each; NULL when the handle itself goes (its release frees them).
 */
static void
wr_unmap(struct shim_fp *fp, struct shim_handle *tell)
{
	for (unsigned int i = 0; i < fp->wr.n; i++) {
		if (fp->wr.mem[i])
			shim_fp_unmap_internal(tell, fp->wr.mem[i], fp->wr.len[i],
					       fp->wr.map_id[i]);
		fp->wr.mem[i] = NULL;
		fp->wr.free[i] = false;
	}
	fp->wr.n = 0;
}

/* The node's format (G_FMT through CUSE), once until the app's next S_FMT. */
static int
wr_format_locked(struct shim_fp *fp, int fd)
{
	struct v4l2_format f = { .type = OUTPUT };
	int r;

	if (fp->wr.fmt_known)
		return 0;
	r = shim_cuse_ioctl(fd, VIDIOC_G_FMT, &f);
	if (r < 0)
		return r;
	/* The daemon's test (daemon/fh.c): a raw frame has a line length. */
	fp->wr.raw = f.fmt.pix.bytesperline != 0;
	fp->wr.sizeimage = f.fmt.pix.sizeimage;
	fp->wr.fmt_known = true;
	return 0;
}

/* vb2's __vb2_init_fileio() for write() through CUSE: 0, or -errno with nothing left behind. */
static int
wr_start_locked(struct shim_handle *h, int fd)
{
	struct shim_fp *fp = shim_fp_of(h);
	struct v4l2cuse_fp_state st;
	struct v4l2_requestbuffers rb = { .type = OUTPUT, .memory = V4L2_MEMORY_MMAP };
	int r, type = OUTPUT;

	if (!wr_eligible(fp, &st))
		return -EAGAIN;
	r = wr_format_locked(fp, fd);
	if (r < 0)
		return r;
	if (!fp->wr.raw || fp->wr.sizeimage == 0)
		return -EAGAIN;		/* compressed: the daemon's write() finds a frame */
	rb.count = st.write_buffers;
	r = shim_cuse_ioctl(fd, VIDIOC_REQBUFS, &rb);
	if (r < 0) {
		shim_debug("write() emulation: REQBUFS: %s", strerror(-r));
		return r;	/* another owner: the daemon answers the write() (EBUSY) */
	}
	fp->wr.n = rb.count;
	if (rb.count == 0 || rb.count > SHIM_MAX_BUFFERS) {
		fp->wr.n = 0;
		r = -ENOMEM;
		goto err_free;
	}
	for (unsigned int i = 0; i < fp->wr.n && r == 0; i++)
		r = shim_fp_map_internal(h, fd, OUTPUT, i, PROT_READ | PROT_WRITE, &fp->wr.mem[i],
					 &fp->wr.len[i], &fp->wr.map_id[i]);
	/* Too few queued to start: the first frame's QBUF starts it (and joins: we write). */
	if (r == 0)
		r = shim_cuse_ioctl(fd, VIDIOC_STREAMON, &type);
	/* Fresh from REQBUFS, nobody queued them: the ring takes them from the first frame on. */
	for (unsigned int i = 0; i < fp->wr.n && r == 0; i++) {
		if (fp->wr.len[i] < fp->wr.sizeimage ||
		    !shim_fp_adopt(h, OUTPUT, i, (uint32_t)fp->wr.len[i]))
			r = -EIO;
		fp->wr.free[i] = true;
	}
	if (r < 0)
		goto err_free;
	__atomic_store_n(&fp->wr.active, true, __ATOMIC_RELEASE);
	shim_debug("write() emulation: %u buffers through the fast path", fp->wr.n);
	return 0;

err_free:
	shim_debug("write() emulation not started: %s", strerror(-r));
	wr_unmap(fp, h);
	rb = (struct v4l2_requestbuffers){ .count = 0, .type = OUTPUT,
					   .memory = V4L2_MEMORY_MMAP };
	(void)shim_cuse_ioctl(fd, VIDIOC_STREAMOFF, &type);
	(void)shim_cuse_ioctl(fd, VIDIOC_REQBUFS, &rb);
	return r;
}

/*
 * Leave the queue as the daemon's write() leaves it: STREAMOFF (the
 * handle stays the writer: it joined with write()), unmap, REQBUFS(0).
 * Stopped whatever the daemon answers (gone: CUSE fails from now on).
 */
static void
wr_stop_locked(struct shim_handle *h, int fd)
{
	struct shim_fp *fp = shim_fp_of(h);
	struct v4l2_requestbuffers rb = { .count = 0, .type = OUTPUT,
					  .memory = V4L2_MEMORY_MMAP };
	int type = OUTPUT, r;

	r = shim_cuse_ioctl(fd, VIDIOC_STREAMOFF, &type);
	wr_unmap(fp, h);
	if (r == 0)
		r = shim_cuse_ioctl(fd, VIDIOC_REQBUFS, &rb);
	if (r < 0)
		shim_debug("write() emulation: stop: %s", strerror(-r));
	__atomic_store_n(&fp->wr.active, false, __ATOMIC_RELEASE);
}

void
shim_fp_write_free(struct shim_fp *fp)
{
	wr_unmap(fp, NULL);
	fp->wr.active = false;
}

/*
 * A buffer to fill: one nobody queued, else one the ring gives back (a
 * completion, ERROR or not: either way it is ours again). 0 and
 * *ret_index; 1 if it waited (without wr.lock: look at everything again);
 * -EAGAIN when the ring cannot answer (the daemon's write() must).
 *
 * The wait is the kernel's for a CUSE write(): until the daemon answers,
 * which it does at once (it takes a frame at its kick), so neither
 * O_NONBLOCK nor a signal ends it. It waits without the lock, as the
 * read() emulation does: another thread's S_FMT or REQBUFS is answered at
 * once. Once it waited, the call goes on with the file pinned.
 */
static int
wr_free_buffer_locked(struct shim_handle *h, struct shim_fp_file *file, bool *woken,
		      unsigned int *ret_index)
{
	struct shim_fp *fp = shim_fp_of(h);

	for (;;) {
		struct v4l2_buffer b = { .type = OUTPUT, .memory = V4L2_MEMORY_MMAP };
		int r = 0;

		for (unsigned int i = 0; i < fp->wr.n; i++) {
			if (fp->wr.free[i]) {
				*ret_index = i;
				return 0;
			}
		}
		switch (shim_fp_dqbuf_try(h, shim_fp_file_fd(file), &b, &r, *woken)) {
		case SHIM_FP_DQ_DONE:
			if (r == -EAGAIN)
				break;		/* O_NONBLOCK: a write() waits all the same */
			if (r < 0)
				return -EAGAIN;
			if (b.index < fp->wr.n)
				fp->wr.free[b.index] = true;
			continue;
		case SHIM_FP_DQ_CUSE:
			return -EAGAIN;		/* stopped, an error, the ring full: CUSE */
		case SHIM_FP_DQ_WAIT:
			break;
		}
		shim_fp_file_pin(file);
		pthread_mutex_unlock(&fp->wr.lock);
		(void)shim_fp_wait(h);	/* EINTR: look again, then wait on; gone: CUSE */
		pthread_mutex_lock(&fp->wr.lock);
		*woken = true;
		return 1;
	}
}

/* Fill buffer @index with the call's frame and queue it: the bytes taken, or -errno. */
static ssize_t
wr_queue_locked(struct shim_handle *h, int fd, unsigned int index, const void *buf, size_t count)
{
	struct shim_fp *fp = shim_fp_of(h);
	/* One frame per call: bytes past it are not taken (daemon/fh.c). */
	uint32_t n = count < fp->wr.sizeimage ? (uint32_t)count : fp->wr.sizeimage;
	struct v4l2_buffer b = { .index = index, .type = OUTPUT, .memory = V4L2_MEMORY_MMAP,
				 .bytesused = n };
	int r = 0;

	memcpy(fp->wr.mem[index], buf, n);
	fp->wr.free[index] = false;
	if (!shim_fp_qbuf(h, &b, &r)) {
		b = (struct v4l2_buffer){ .index = index, .type = OUTPUT,
					  .memory = V4L2_MEMORY_MMAP, .bytesused = n };
		r = shim_cuse_ioctl(fd, VIDIOC_QBUF, &b);
	}
	if (r < 0) {
		shim_debug("write() emulation: QBUF %u: %s", index, strerror(-r));
		fp->wr.free[index] = true;	/* refused: still ours */
		return r;
	}
	return n;
}

bool
shim_fp_write(struct shim_handle *h, int fd, const void *buf, size_t count, ssize_t *ret)
{
	struct shim_fp *fp = shim_fp_of(h);
	struct shim_fp_file file = { fd, -1 };
	bool woken = false;
	unsigned int index;
	ssize_t r;

	if (!fp || (!shim_fp_writing(h) && fp->dead))
		return false;
	pthread_mutex_lock(&fp->wr.lock);
	for (;;) {
		if (!fp->wr.active && (count == 0 || !fp->wr.joined ||
					wr_start_locked(h, shim_fp_file_fd(&file)) < 0))
			break;			/* the daemon's write() answers */
		if (count == 0) {
			*ret = 0;		/* no request: the kernel sends none either */
			goto out;
		}
		if (!shim_range_mapped(buf, count < fp->wr.sizeimage ? count : fp->wr.sizeimage)) {
			*ret = -EFAULT;
			goto out;
		}
		r = wr_free_buffer_locked(h, &file, &woken, &index);
		if (r == 1)
			continue;	/* it waited: stopped, started again meanwhile? */
		if (r < 0) {
			wr_stop_locked(h, shim_fp_file_fd(&file));
			break;
		}
		*ret = wr_queue_locked(h, shim_fp_file_fd(&file), index, buf, count);
		goto out;
	}
	/* Through CUSE, on the file the call began on. The first one joins. */
	r = shim_real.write(shim_fp_file_fd(&file), buf, count);
	*ret = r < 0 ? -errno : r;
	if (r > 0 && !fp->wr.joined) {
		/* The writer now, until it closes: the next write()s come here. */
		fp->wr.joined = true;
		(void)wr_start_locked(h, shim_fp_file_fd(&file));
	}
out:
	pthread_mutex_unlock(&fp->wr.lock);
	shim_fp_file_unpin(&file);
	return true;
}

bool
shim_fp_write_ioctl(struct shim_handle *h, int fd, unsigned long request, void *arg, int *ret)
{
	struct shim_fp *fp = shim_fp_of(h);
	struct v4l2cuse_fp_state st;

	if (!fp)
		return false;
	if (request == VIDIOC_S_FMT) {
		/* A writer node's: the next write() asks for the format again. */
		if (!shim_fp_state(fp, &st) || !(st.flags & V4L2CUSE_FP_OUTPUT))
			return false;
	} else if (!shim_buffer_ioctl(request) || !shim_fp_writing(h)) {
		return false;
	}
	/* Under the lock: no write() starts it again before the ioctl is answered. */
	pthread_mutex_lock(&fp->wr.lock);
	if (request == VIDIOC_S_FMT)
		fp->wr.fmt_known = false;
	if (fp->wr.active)
		wr_stop_locked(h, fd);
	*ret = shim_cuse_ioctl(fd, request, arg);
	pthread_mutex_unlock(&fp->wr.lock);
	return true;
}
