/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libv4l2cuse-preload.so: the interposed functions of a handle's buffers.
 * mmap() of an attached handle maps the daemon's buffer memfd (zero copy),
 * munmap() tells the daemon; ioctl() copies USERPTR payloads through the
 * daemon's staging memfds and takes QBUF/DQBUF on the fast path
 * (shim-client/fastpath.c). Everything else passes straight through; errno
 * is what the real call left.
 */
#undef _FORTIFY_SOURCE
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/videodev2.h>

#include "preload-private.h"

/* ---------------------------------------------------------------------- */
/* mmap, munmap */

#define MAX_UNMAPPED (2 * SHIM_MAX_BUFFERS)

static void *
real_mmap(bool raw, void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (raw)
		return (void *)shim_real.syscall(SYS_mmap, addr, len, prot, flags, fd, off);
	return shim_real.mmap(addr, len, prot, flags, fd, off);
}

static int
real_munmap(bool raw, void *addr, size_t len)
{
	if (raw)
		return (int)shim_real.syscall(SYS_munmap, addr, len);
	return shim_real.munmap(addr, len);
}

static void
send_unmap(struct shim_handle *h, uint64_t map_id)
{
	struct v4l2cuse_shim_request req = { .type = V4L2CUSE_SHIM_UNMAP };
	struct v4l2cuse_shim_reply rep;
	int fd;

	req.unmap.map_id = map_id;
	if (shim_request(h, &req, &rep, &fd) == 0 && fd >= 0)
		shim_real.close(fd);
}

/* Tell the daemon, drop the references (no lock held). */
static void
release_unmapped(struct shim_unmapped *u, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		send_unmap(u[i].h, u[i].map_id);
		shim_handle_unref(u[i].h);
	}
}

/* mmap() of a buffer of attached handle @h, which the caller holds. */
static void *
mmap_buffer(struct shim_handle *h, void *addr, size_t len, int prot, int flags, off_t off)
{
	struct v4l2cuse_shim_request req = { .type = V4L2CUSE_SHIM_MAP };
	struct v4l2cuse_shim_reply rep;
	struct shim_unmapped gone[MAX_UNMAPPED];
	size_t n_gone = 0;
	void *p;
	int memfd, r, err = 0;

	r = shim_mmap_check(len, prot, flags, (int64_t)off);
	if (r < 0) {
		shim_debug("mmap(len %zu, prot %#x, flags %#x, offset %#llx): refused", len,
			   prot, flags, (unsigned long long)off);
		errno = -r;
		return MAP_FAILED;
	}
	if (shim_fp_reading(h)) {
		errno = EBUSY;		/* vb_queue_mmap_fd() during read emulation */
		return MAP_FAILED;
	}
	if (shim_fp_writing(h)) {
		errno = EINVAL;		/* the daemon's write() leaves no buffer to map */
		return MAP_FAILED;
	}
	req.map.offset = (uint64_t)off;
	req.map.length = len;
	r = shim_request(h, &req, &rep, &memfd);
	if (r < 0) {
		errno = ENODEV;		/* no daemon to ask: what CUSE itself says */
		return MAP_FAILED;
	}
	if (rep.status < 0 || memfd < 0) {
		if (memfd >= 0)
			shim_real.close(memfd);
		errno = rep.status < 0 ? -rep.status : EIO;
		return MAP_FAILED;
	}

	shim_lock();
	p = shim_real.mmap(addr, len, prot, flags, memfd, 0);
	if (p == MAP_FAILED) {
		err = errno;
	} else {
		if (flags & MAP_FIXED)
			n_gone = shim_map_remove_locked(p, len, gone, MAX_UNMAPPED);
		if (shim_map_add_locked(p, len, h, rep.map_id) < 0)
			err = -1;	/* mapped, but untracked: release the record */
	}
	shim_unlock();
	shim_real.close(memfd);
	if (err)
		send_unmap(h, rep.map_id);
	release_unmapped(gone, n_gone);
	shim_debug("mmap(offset %#llx, len %zu) = %p (buffer %u)", (unsigned long long)off,
		   len, p, rep.index);
	if (p == MAP_FAILED)
		errno = err;
	return p;
}

void *
shim_mmap(bool raw, void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	struct shim_handle *h = NULL;
	struct shim_unmapped gone[MAX_UNMAPPED];
	size_t n_gone = 0;
	struct stat st;
	void *p;
	int saved;

	if (fd >= 0 && (h = shim_fd_get(fd))) {
		/* Still our node? (An fd closed behind our back may be reused.) */
		if (fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == h->rdev) {
			p = mmap_buffer(h, addr, len, prot, flags, off);
			saved = errno;
			shim_handle_unref(h);
			errno = saved;
			return p;
		}
		shim_handle_unref(h);
		shim_fd_drop(fd);
	}
	if (!(flags & MAP_FIXED) || !shim_maps_maybe_tracked())
		return real_mmap(raw, addr, len, prot, flags, fd, off);
	/* MAP_FIXED replaces what was there, maybe one of our mappings. */
	shim_lock();
	p = real_mmap(raw, addr, len, prot, flags, fd, off);
	saved = errno;
	if (p != MAP_FAILED)
		n_gone = shim_map_remove_locked(p, len, gone, MAX_UNMAPPED);
	shim_unlock();
	release_unmapped(gone, n_gone);
	errno = saved;
	return p;
}

int
shim_munmap(bool raw, void *addr, size_t len)
{
	struct shim_unmapped gone[MAX_UNMAPPED];
	size_t n_gone = 0;
	int r, saved;

	if (likely(!shim_maps_maybe_tracked()))
		return real_munmap(raw, addr, len);
	/* Under the lock: the range cannot be mapped again before we update. */
	shim_lock();
	r = real_munmap(raw, addr, len);
	saved = errno;
	if (r == 0)
		n_gone = shim_map_remove_locked(addr, len, gone, MAX_UNMAPPED);
	shim_unlock();
	release_unmapped(gone, n_gone);
	errno = saved;
	return r;
}

EXPORT void *
mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	shim_init();
	return shim_mmap(false, addr, len, prot, flags, fd, off);
}

EXPORT void *
mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off)
{
	shim_init();
	return shim_mmap(false, addr, len, prot, flags, fd, (off_t)off);
}

EXPORT int
munmap(void *addr, size_t len)
{
	shim_init();
	return shim_munmap(false, addr, len);
}

/* ---------------------------------------------------------------------- */
/* ioctl: only USERPTR needs the shim (copy from the staging memfd at DQBUF) */

/* Map buffer @index's staging memfd (h->io held). */
static int
staging_map_locked(struct shim_handle *h, unsigned int index)
{
	struct v4l2cuse_shim_request req = { .type = V4L2CUSE_SHIM_STAGING };
	struct v4l2cuse_shim_reply rep;
	void *p;
	int fd, r;

	if (h->staging[index])
		return 0;
	req.staging.index = index;
	r = shim_request_locked(h, &req, &rep, &fd);
	if (r < 0)
		return r;
	if (rep.status < 0 || fd < 0 || rep.length == 0) {
		if (fd >= 0)
			shim_real.close(fd);
		return rep.status < 0 ? rep.status : -EIO;
	}
	/* Writable: an output buffer's payload is copied into it at QBUF. */
	p = shim_real.mmap(NULL, rep.length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	r = p == MAP_FAILED ? -errno : 0;
	shim_real.close(fd);
	if (r < 0)
		return r;
	h->staging[index] = p;
	h->staging_len[index] = rep.length;
	return 0;
}

static void
staging_reset(struct shim_handle *h)
{
	pthread_mutex_lock(&h->io);
	for (int i = 0; i < SHIM_MAX_BUFFERS; i++) {
		if (h->staging[i])
			shim_real.munmap(h->staging[i], h->staging_len[i]);
		h->staging[i] = NULL;
		h->staging_len[i] = 0;
	}
	pthread_mutex_unlock(&h->io);
}

/* Is [p, p + len) mapped? (The kernel's get_user_pages would fail otherwise.) */
static bool
range_mapped(unsigned long p, size_t len)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned long start = p & ~((unsigned long)page - 1);

	if (len == 0 || p + len < p)
		return false;
	return msync((void *)start, p + len - start, MS_ASYNC) == 0;
}

static int
userptr_qbuf(int fd, struct v4l2_buffer *b)
{
	struct shim_handle *h;
	int r = 0;

	if (b->m.userptr == 0)
		return 0;		/* the daemon says EINVAL */
	if (!range_mapped(b->m.userptr, b->length))
		return -EFAULT;
	if (b->index >= SHIM_MAX_BUFFERS || !(h = shim_fd_get(fd)))
		return 0;
	pthread_mutex_lock(&h->io);
	r = staging_map_locked(h, b->index);
	/* Output: the daemon reads the payload from the staging copy. */
	if (r == 0 && b->type == V4L2_BUF_TYPE_VIDEO_OUTPUT) {
		size_t n = b->bytesused ? b->bytesused : b->length;

		if (n > h->staging_len[b->index] || n > b->length)
			r = -EINVAL;
		else
			memcpy(h->staging[b->index], (const void *)b->m.userptr, n);
	}
	pthread_mutex_unlock(&h->io);
	shim_handle_unref(h);
	if (r < 0)
		shim_debug("fd %d: no staging memory for buffer %u: %s", fd, b->index,
			   strerror(-r));
	return 0;		/* a bad index: the daemon answers EINVAL */
}

static void
userptr_dqbuf(int fd, struct v4l2_buffer *b)
{
	struct shim_handle *h;
	bool copied = false;

	if (b->bytesused == 0 || (b->flags & V4L2_BUF_FLAG_ERROR))
		return;
	if (b->index < SHIM_MAX_BUFFERS && (h = shim_fd_get(fd))) {
		pthread_mutex_lock(&h->io);
		if (staging_map_locked(h, b->index) == 0 &&
		    b->bytesused <= h->staging_len[b->index] && b->bytesused <= b->length) {
			memcpy((void *)b->m.userptr, h->staging[b->index], b->bytesused);
			copied = true;
		}
		pthread_mutex_unlock(&h->io);
		shim_handle_unref(h);
	}
	if (!copied) {
		shim_debug("fd %d: USERPTR buffer %u: no copy", fd, b->index);
		b->flags |= V4L2_BUF_FLAG_ERROR;
		b->bytesused = 0;
	}
}

/*
 * What the handle's fast path answers without CUSE: true when answered
 * (*r is 0 or -errno), false for the real ioctl. The streaming ioctls
 * while the shim's read() emulation runs (vb2's answers during file I/O),
 * those and S_FMT of a writer node once its write() emulation stopped
 * (the answers of the queue the daemon's write() leaves), and QBUF and
 * DQBUF of a streaming handle.
 */
typedef bool (*fp_answer_fn)(struct shim_handle *h, int fd, unsigned long request, void *arg,
			     int *r);

static bool
answer_reading(struct shim_handle *h, int fd, unsigned long request, void *arg, int *r)
{
	return shim_fp_reading(h) && shim_fp_read_ioctl(h, fd, request, arg, r);
}

static bool
answer_writing(struct shim_handle *h, int fd, unsigned long request, void *arg, int *r)
{
	return shim_fp_of(h) && shim_fp_write_ioctl(h, fd, request, arg, r);
}

static bool
answer_qbuf(struct shim_handle *h, int fd, unsigned long request, void *arg, int *r)
{
	return shim_fp_of(h) && shim_fp_qbuf(h, arg, r);
}

static bool
answer_dqbuf(struct shim_handle *h, int fd, unsigned long request, void *arg, int *r)
{
	return shim_fp_of(h) && shim_fp_dqbuf(h, fd, arg, r);
}

/* @answer for @fd's handle: true with *ret and errno as the ioctl leaves them. */
static bool
fast_ioctl(int fd, fp_answer_fn answer, unsigned long request, void *arg, int *ret)
{
	struct shim_handle *h = shim_fd_get(fd);
	bool done = false;
	int r = 0, saved = errno;

	if (h)
		done = answer(h, fd, request, arg, &r);
	shim_handle_unref(h);
	errno = saved;
	if (done) {
		*ret = r < 0 ? -1 : 0;
		if (r < 0)
			errno = -r;
	}
	return done;
}

static int
shim_ioctl(int fd, unsigned long request, void *arg)
{
	struct v4l2_buffer *b = arg;
	int r, saved;

	if (request == VIDIOC_REQBUFS || request == VIDIOC_CREATE_BUFS) {
		struct shim_handle *h = shim_fd_get(fd);

		saved = errno;
		if (h)
			shim_fp_want_ioctl(h, request, arg);	/* before the buffers exist */
		shim_handle_unref(h);
		errno = saved;
	}
	if (shim_buffer_ioctl(request) && fast_ioctl(fd, answer_reading, request, arg, &r))
		return r;
	if ((shim_buffer_ioctl(request) || request == VIDIOC_S_FMT) &&
	    fast_ioctl(fd, answer_writing, request, arg, &r))
		return r;
	switch (request) {
	case VIDIOC_REQBUFS:
		r = shim_real.ioctl(fd, request, arg);
		if (r == 0) {
			struct shim_handle *h = shim_fd_get(fd);

			saved = errno;
			if (h) {
				staging_reset(h);	/* buffers were freed */
				shim_handle_unref(h);
			}
			errno = saved;
		}
		return r;
	case VIDIOC_QBUF:
	case VIDIOC_PREPARE_BUF:
		if (b && b->memory == V4L2_MEMORY_USERPTR &&
		    (b->type == V4L2_BUF_TYPE_VIDEO_CAPTURE ||
		     b->type == V4L2_BUF_TYPE_VIDEO_OUTPUT)) {
			saved = errno;
			r = userptr_qbuf(fd, b);
			errno = saved;
			if (r < 0) {
				errno = -r;
				return -1;
			}
		}
		if (b && request == VIDIOC_QBUF && fast_ioctl(fd, answer_qbuf, request, b, &r))
			return r;
		return shim_real.ioctl(fd, request, arg);
	case VIDIOC_DQBUF:
		if (!b || !fast_ioctl(fd, answer_dqbuf, request, b, &r))
			r = shim_real.ioctl(fd, request, arg);
		if (r == 0 && b->memory == V4L2_MEMORY_USERPTR &&
		    b->type == V4L2_BUF_TYPE_VIDEO_CAPTURE) {
			saved = errno;
			userptr_dqbuf(fd, b);
			errno = saved;
		}
		return r;
	default:
		return shim_real.ioctl(fd, request, arg);
	}
}

EXPORT int
ioctl(int fd, unsigned long request, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);
	shim_init();
	if (likely(!shim_fd_maybe_tracked(fd)))
		return shim_real.ioctl(fd, request, arg);
	return shim_ioctl(fd, request, arg);
}
