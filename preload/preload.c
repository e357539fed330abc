/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libv4l2cuse-preload.so: the interposed libc functions. Each one calls the
 * real function first (or only) and acts only on fds that attached to a
 * v4l2cuse daemon (shim_attach() at open time) and on address ranges that
 * map their buffers; everything else passes straight through after a
 * lock-free table check. errno is what the real call left.
 *
 * Built with -U_FILE_OFFSET_BITS so that open/open64, mmap/mmap64, ... are
 * distinct symbols, and with -fvisibility=hidden plus a version script, so
 * that only these names are exported.
 */
#undef _FORTIFY_SOURCE
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/close_range.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <time.h>
#include <linux/videodev2.h>

#include "shim.h"

#define EXPORT __attribute__((visibility("default")))
#define likely(x) __builtin_expect(!!(x), 1)

struct shim_libc shim_real;
bool shim_debug_enabled;

void
shim_debug(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int saved = errno, n;

	if (!shim_debug_enabled)
		return;
	n = snprintf(buf, sizeof(buf), "v4l2cuse-preload[%d]: ", (int)getpid());
	va_start(ap, fmt);
	vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	strcat(buf, "\n");
	if (write(STDERR_FILENO, buf, strlen(buf)) < 0) {
		/* nothing to do */
	}
	errno = saved;
}

/* ---------------------------------------------------------------------- */
/* Resolving the real functions, once */

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int (*real_poll_chk)(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen);
static int (*real_ppoll_chk)(struct pollfd *fds, nfds_t n, const struct timespec *timeout,
			     const sigset_t *sigmask, size_t fdslen);
static bool fastpath_on;		/* V4L2CUSE_FASTPATH is not 0 */

static void
init_real(void)
{
	const char *dbg = secure_getenv("V4L2CUSE_PRELOAD_DEBUG");

#define R(field, name) shim_real.field = (__typeof__(shim_real.field))dlsym(RTLD_NEXT, name)
	R(open, "open");
	R(open64, "open64");
	R(openat, "openat");
	R(openat64, "openat64");
	R(open_2, "__open_2");
	R(open64_2, "__open64_2");
	R(openat_2, "__openat_2");
	R(openat64_2, "__openat64_2");
	R(close, "close");
	R(close_range, "close_range");
	R(closefrom, "closefrom");
	R(dup, "dup");
	R(dup2, "dup2");
	R(dup3, "dup3");
	R(fcntl, "fcntl");
	R(fcntl64, "fcntl64");
	R(ioctl, "ioctl");
	R(mmap, "mmap");
	R(mmap64, "mmap64");
	R(munmap, "munmap");
	R(syscall, "syscall");
	R(fopen, "fopen");
	R(fopen64, "fopen64");
	R(poll, "poll");
	R(ppoll, "ppoll");
	R(select, "select");
	R(pselect, "pselect");
	R(epoll_ctl, "epoll_ctl");
	R(epoll_wait, "epoll_wait");
	R(epoll_pwait, "epoll_pwait");
	R(epoll_pwait2, "epoll_pwait2");
#undef R
	real_poll_chk = (__typeof__(real_poll_chk))dlsym(RTLD_NEXT, "__poll_chk");
	real_ppoll_chk = (__typeof__(real_ppoll_chk))dlsym(RTLD_NEXT, "__ppoll_chk");
	fastpath_on = shim_fp_enabled();
	if (!shim_real.fcntl64)
		shim_real.fcntl64 = shim_real.fcntl;
	if (!shim_real.mmap64)
		shim_real.mmap64 = shim_real.mmap;
	shim_debug_enabled = dbg && *dbg && strcmp(dbg, "0") != 0;
	if (!shim_real.fopen64)
		shim_real.fopen64 = shim_real.fopen;
	shim_track_init();
}

static inline void
shim_init(void)
{
	pthread_once(&init_once, init_real);
}

__attribute__((constructor)) static void
shim_ctor(void)
{
	shim_init();
}

/* ---------------------------------------------------------------------- */
/* open and friends */

static bool
needs_mode(int flags)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
}

/* A new fd from any open: attach if it is one of our nodes. */
static int
after_open(int fd, int flags)
{
	struct shim_handle *h;
	int saved;

	if (fd < 0)
		return fd;
	saved = errno;
	/* The number is fresh: whatever we knew under it was closed behind our back. */
	shim_fd_forget(fd);
	if (!(flags & O_PATH)) {
		h = shim_attach(fd);
		if (h) {
			if (fastpath_on)
				shim_fp_setup(h);
			shim_fd_set(fd, h);
			shim_handle_unref(h);
		}
	}
	errno = saved;
	return fd;
}

#define OPEN_MODE(flags)						\
	mode_t mode = 0;						\
	if (needs_mode(flags)) {					\
		va_list ap;						\
		va_start(ap, flags);					\
		mode = (mode_t)va_arg(ap, int);				\
		va_end(ap);						\
	}

EXPORT int
open(const char *path, int flags, ...)
{
	OPEN_MODE(flags);
	shim_init();
	return after_open(shim_real.open(path, flags, mode), flags);
}

EXPORT int
open64(const char *path, int flags, ...)
{
	OPEN_MODE(flags);
	shim_init();
	return after_open(shim_real.open64(path, flags, mode), flags);
}

EXPORT int
openat(int dirfd, const char *path, int flags, ...)
{
	OPEN_MODE(flags);
	shim_init();
	return after_open(shim_real.openat(dirfd, path, flags, mode), flags);
}

EXPORT int
openat64(int dirfd, const char *path, int flags, ...)
{
	OPEN_MODE(flags);
	shim_init();
	return after_open(shim_real.openat64(dirfd, path, flags, mode), flags);
}

/* _FORTIFY_SOURCE callers: the same checks as glibc's (it aborts on O_CREAT). */
EXPORT int __open_2(const char *path, int flags);
EXPORT int __open64_2(const char *path, int flags);
EXPORT int __openat_2(int dirfd, const char *path, int flags);
EXPORT int __openat64_2(int dirfd, const char *path, int flags);

EXPORT int
__open_2(const char *path, int flags)
{
	shim_init();
	return after_open(shim_real.open_2(path, flags), flags);
}

EXPORT int
__open64_2(const char *path, int flags)
{
	shim_init();
	return after_open(shim_real.open64_2(path, flags), flags);
}

EXPORT int
__openat_2(int dirfd, const char *path, int flags)
{
	shim_init();
	return after_open(shim_real.openat_2(dirfd, path, flags), flags);
}

EXPORT int
__openat64_2(int dirfd, const char *path, int flags)
{
	shim_init();
	return after_open(shim_real.openat64_2(dirfd, path, flags), flags);
}

/*
 * Loopback compatibility (V4L2CUSE_LOOPBACK_COMPAT=1, v4l2cuse-run
 * --loopback-compat): apps that offer a virtual camera only when the
 * v4l2loopback module is loaded (OBS reads /proc/modules with fopen()) read
 * a /proc/modules that lists it, after the real lines. Nothing else changes.
 */
static FILE *
compat_modules(FILE *(*real)(const char *, const char *), const char *path, const char *mode)
{
	static const char line[] = "v4l2loopback 49152 0 - Live 0x0000000000000000\n";
	const char *on;
	char buf[4096];
	FILE *in, *out;
	size_t n;
	int fd;

	if (!path || strcmp(path, "/proc/modules") != 0 || !mode || mode[0] != 'r' ||
	    strchr(mode, '+'))
		return real(path, mode);
	on = secure_getenv("V4L2CUSE_LOOPBACK_COMPAT");
	if (!on || !*on || strcmp(on, "0") == 0)
		return real(path, mode);
	fd = memfd_create("v4l2cuse-proc-modules", MFD_CLOEXEC);
	if (fd < 0)
		return real(path, mode);
	in = real(path, mode);		/* none in some containers: our line alone */
	while (in && (n = fread(buf, 1, sizeof(buf), in)) > 0) {
		if (write(fd, buf, n) != (ssize_t)n)
			break;
	}
	if (in)
		fclose(in);
	if (write(fd, line, sizeof(line) - 1) != (ssize_t)(sizeof(line) - 1) ||
	    lseek(fd, 0, SEEK_SET) < 0 || !(out = fdopen(fd, "r"))) {
		shim_real.close(fd);
		return real(path, mode);
	}
	shim_debug("/proc/modules: v4l2loopback listed (loopback compatibility)");
	return out;
}

EXPORT FILE *
fopen(const char *path, const char *mode)
{
	shim_init();
	return compat_modules(shim_real.fopen, path, mode);
}

EXPORT FILE *
fopen64(const char *path, const char *mode)
{
	shim_init();
	return compat_modules(shim_real.fopen64, path, mode);
}

/* ---------------------------------------------------------------------- */
/* close, dup, fcntl */

static void
forget_fd(int fd)
{
	int saved = errno;

	shim_epoll_forget_fd(fd);	/* a node's or an epoll set's registrations */
	shim_fd_forget(fd);
	errno = saved;
}

EXPORT int
close(int fd)
{
	shim_init();
	/* First: once closed, the number can be reused by another thread's open. */
	forget_fd(fd);
	return shim_real.close(fd);
}

EXPORT int
close_range(unsigned int first, unsigned int last, int flags)
{
	int r, saved;

	shim_init();
	if (shim_real.close_range)
		r = shim_real.close_range(first, last, flags);
	else
		r = (int)shim_real.syscall(SYS_close_range, first, last, flags);
	if (r == 0 && !(flags & CLOSE_RANGE_CLOEXEC)) {
		saved = errno;
		shim_fd_forget_range(first, last);
		errno = saved;
	}
	return r;
}

EXPORT void
closefrom(int lowfd)
{
	int saved;

	shim_init();
	if (shim_real.closefrom)
		shim_real.closefrom(lowfd);
	else
		shim_real.syscall(SYS_close_range, (unsigned int)lowfd, ~0u, 0);
	saved = errno;
	if (lowfd >= 0)
		shim_fd_forget_range((unsigned int)lowfd, UINT_MAX);
	errno = saved;
}

static int
after_dup(int oldfd, int r)
{
	int saved;

	if (r >= 0) {
		saved = errno;
		shim_fd_dup(oldfd, r);
		errno = saved;
	}
	return r;
}

EXPORT int
dup(int fd)
{
	shim_init();
	return after_dup(fd, shim_real.dup(fd));
}

EXPORT int
dup2(int fd, int fd2)
{
	shim_init();
	return after_dup(fd, shim_real.dup2(fd, fd2));
}

EXPORT int
dup3(int fd, int fd2, int flags)
{
	shim_init();
	return after_dup(fd, shim_real.dup3(fd, fd2, flags));
}

static int
shim_fcntl(int (*real)(int, int, ...), int fd, int cmd, va_list ap)
{
	/* Every fcntl argument is an int, a long or a pointer: pass a word. */
	void *arg = va_arg(ap, void *);
	int r = real(fd, cmd, arg);

	if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC)
		return after_dup(fd, r);
	return r;
}

EXPORT int
fcntl(int fd, int cmd, ...)
{
	va_list ap;
	int r;

	shim_init();
	va_start(ap, cmd);
	r = shim_fcntl(shim_real.fcntl, fd, cmd, ap);
	va_end(ap);
	return r;
}

EXPORT int fcntl64(int fd, int cmd, ...);

EXPORT int
fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	int r;

	shim_init();
	va_start(ap, cmd);
	r = shim_fcntl(shim_real.fcntl64, fd, cmd, ap);
	va_end(ap);
	return r;
}

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

static void *
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
		forget_fd(fd);
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

static int
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
 * QBUF and DQBUF through the handle's fast path: true when answered (*ret
 * is the ioctl's result, errno set), false for the real ioctl (CUSE).
 */
static bool
fast_qbuf(int fd, struct v4l2_buffer *b, int *ret)
{
	struct shim_handle *h = shim_fd_get(fd);
	bool done = false;
	int r = 0;

	if (h && h->fp)
		done = shim_fp_qbuf(h, b, &r);
	shim_handle_unref(h);
	if (done) {
		*ret = r < 0 ? -1 : 0;
		if (r < 0)
			errno = -r;
	}
	return done;
}

static bool
fast_dqbuf(int fd, struct v4l2_buffer *b, int *ret)
{
	struct shim_handle *h = shim_fd_get(fd);
	bool done = false;
	int r = 0, saved = errno;

	if (h && h->fp)
		done = shim_fp_dqbuf(h, fd, b, &r);
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
		if (b && request == VIDIOC_QBUF && fast_qbuf(fd, b, &r))
			return r;
		return shim_real.ioctl(fd, request, arg);
	case VIDIOC_DQBUF:
		if (!b || !fast_dqbuf(fd, b, &r))
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

/* ---------------------------------------------------------------------- */
/* poll, select, epoll: fast-path handles wait on their wake-up socket (wait.c) */

static struct timespec *
ms_timespec(int ms, struct timespec *ts)
{
	if (ms < 0)
		return NULL;
	ts->tv_sec = ms / 1000;
	ts->tv_nsec = (long)(ms % 1000) * 1000000;
	return ts;
}

EXPORT int
poll(struct pollfd *fds, nfds_t n, int timeout)
{
	struct timespec ts;

	shim_init();
	if (likely(!shim_poll_needed(fds, n)))
		return shim_real.poll(fds, n, timeout);
	return shim_poll(fds, n, ms_timespec(timeout, &ts), NULL, false);
}

EXPORT int
ppoll(struct pollfd *fds, nfds_t n, const struct timespec *timeout, const sigset_t *sigmask)
{
	shim_init();
	if (likely(!shim_poll_needed(fds, n)))
		return shim_real.ppoll(fds, n, timeout, sigmask);
	return shim_poll(fds, n, timeout, sigmask, true);
}

/* _FORTIFY_SOURCE callers: glibc's checks, then the same as poll()/ppoll(). */
EXPORT int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen);
EXPORT int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *timeout,
		       const sigset_t *sigmask, size_t fdslen);

EXPORT int
__poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen)
{
	struct timespec ts;

	shim_init();
	if (fdslen / sizeof(*fds) < n || !shim_poll_needed(fds, n))
		return real_poll_chk(fds, n, timeout, fdslen);
	return shim_poll(fds, n, ms_timespec(timeout, &ts), NULL, false);
}

EXPORT int
__ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *timeout,
	    const sigset_t *sigmask, size_t fdslen)
{
	shim_init();
	if (fdslen / sizeof(*fds) < n || !shim_poll_needed(fds, n))
		return real_ppoll_chk(fds, n, timeout, sigmask, fdslen);
	return shim_poll(fds, n, timeout, sigmask, true);
}

EXPORT int
select(int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *timeout)
{
	struct timespec ts;
	int ret;

	shim_init();
	if (likely(!shim_select_needed(n, r, w, e)))
		return shim_real.select(n, r, w, e, timeout);
	if (timeout) {
		if (timeout->tv_sec < 0 || timeout->tv_usec < 0 || timeout->tv_usec >= 1000000) {
			errno = EINVAL;
			return -1;
		}
		ts.tv_sec = timeout->tv_sec;
		ts.tv_nsec = timeout->tv_usec * 1000;
	}
	ret = shim_select(n, r, w, e, timeout ? &ts : NULL, NULL, false);
	if (timeout) {
		timeout->tv_sec = ts.tv_sec;
		timeout->tv_usec = ts.tv_nsec / 1000;
	}
	return ret;
}

EXPORT int
pselect(int n, fd_set *r, fd_set *w, fd_set *e, const struct timespec *timeout,
	const sigset_t *sigmask)
{
	struct timespec ts;

	shim_init();
	if (likely(!shim_select_needed(n, r, w, e)))
		return shim_real.pselect(n, r, w, e, timeout, sigmask);
	if (timeout)
		ts = *timeout;
	return shim_select(n, r, w, e, timeout ? &ts : NULL, sigmask, true);
}

EXPORT int
epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	shim_init();
	if (likely(!shim_fd_maybe_tracked(fd)))
		return shim_real.epoll_ctl(epfd, op, fd, ev);
	return shim_epoll_ctl(epfd, op, fd, ev);
}

/*
 * The epoll_wait() family: our registrations' events are rewritten (or
 * dropped, when a wake-up was stale: then the wait goes on for the time
 * left).
 */
static int
epoll_common(int epfd, struct epoll_event *ev, int max, const struct timespec *timeout,
	     const sigset_t *sigmask, int kind)
{
	struct timespec left;
	int64_t start = 0;
	int r;

	if (timeout)
		left = *timeout;
	for (;;) {
		int ms = -1;

		if (timeout && kind != 2) {
			int64_t t = (int64_t)left.tv_sec * 1000 + (left.tv_nsec + 999999) / 1000000;

			ms = t > INT_MAX ? INT_MAX : (int)t;
		}
		if (kind == 0)
			r = shim_real.epoll_wait(epfd, ev, max, ms);
		else if (kind == 1)
			r = shim_real.epoll_pwait(epfd, ev, max, ms, sigmask);
		else
			r = shim_real.epoll_pwait2(epfd, ev, max, timeout ? &left : NULL, sigmask);
		if (r <= 0 || !shim_epoll_maybe_ours())
			return r;
		r = shim_epoll_fix(epfd, ev, r);
		if (r > 0 || (timeout && left.tv_sec == 0 && left.tv_nsec == 0))
			return r;
		if (timeout) {
			struct timespec now;
			int64_t ns;

			clock_gettime(CLOCK_MONOTONIC, &now);
			if (!start)
				start = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
			ns = (int64_t)timeout->tv_sec * 1000000000 + timeout->tv_nsec -
			     ((int64_t)now.tv_sec * 1000000000 + now.tv_nsec - start);
			if (ns <= 0)
				return 0;
			left.tv_sec = ns / 1000000000;
			left.tv_nsec = ns % 1000000000;
		}
	}
}

EXPORT int
epoll_wait(int epfd, struct epoll_event *ev, int max, int timeout)
{
	struct timespec ts;

	shim_init();
	if (likely(!shim_epoll_maybe_ours()))
		return shim_real.epoll_wait(epfd, ev, max, timeout);
	return epoll_common(epfd, ev, max, ms_timespec(timeout, &ts), NULL, 0);
}

EXPORT int
epoll_pwait(int epfd, struct epoll_event *ev, int max, int timeout, const sigset_t *sigmask)
{
	struct timespec ts;

	shim_init();
	if (likely(!shim_epoll_maybe_ours()))
		return shim_real.epoll_pwait(epfd, ev, max, timeout, sigmask);
	return epoll_common(epfd, ev, max, ms_timespec(timeout, &ts), sigmask, 1);
}

EXPORT int epoll_pwait2(int epfd, struct epoll_event *ev, int max,
			const struct timespec *timeout, const sigset_t *sigmask);

EXPORT int
epoll_pwait2(int epfd, struct epoll_event *ev, int max, const struct timespec *timeout,
	     const sigset_t *sigmask)
{
	shim_init();
	if (!shim_real.epoll_pwait2) {
		errno = ENOSYS;
		return -1;
	}
	if (likely(!shim_epoll_maybe_ours()))
		return shim_real.epoll_pwait2(epfd, ev, max, timeout, sigmask);
	return epoll_common(epfd, ev, max, timeout, sigmask, 2);
}

/* ---------------------------------------------------------------------- */
/* syscall(): libv4l2 opens, maps and closes the device with raw syscalls */

EXPORT long
syscall(long nr, ...)
{
	va_list ap;
	long a[6];

	/* As glibc's syscall() does: six words, whatever the caller passed. */
	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	shim_init();

	switch (nr) {
	case SYS_openat:
		return after_open((int)shim_real.syscall(nr, a[0], a[1], a[2], a[3]), (int)a[2]);
#ifdef SYS_open
	case SYS_open:
		return after_open((int)shim_real.syscall(nr, a[0], a[1], a[2]), (int)a[1]);
#endif
	case SYS_close:
		forget_fd((int)a[0]);
		return shim_real.syscall(nr, a[0]);
	case SYS_mmap:
		return (long)shim_mmap(true, (void *)a[0], (size_t)a[1], (int)a[2], (int)a[3],
				       (int)a[4], (off_t)a[5]);
	case SYS_munmap:
		return shim_munmap(true, (void *)a[0], (size_t)a[1]);
	default:
		return shim_real.syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	}
}
