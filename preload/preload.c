/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libv4l2cuse-preload.so: the interposed libc functions. Each one calls the
 * real function first (or only) and acts only on fds that attached to a
 * v4l2cuse daemon (shim_attach() at open time) and on address ranges that
 * map their buffers; everything else passes straight through after a
 * lock-free table check. errno is what the real call left.
 *
 * This file resolves the real functions and follows the fds: open (where a
 * handle attaches), close, dup, fcntl, raw syscall(), read() and write()
 * (read.c; the emulations themselves are shim-client/fpread.c and
 * fpwrite.c). The buffers' functions (mmap, munmap, ioctl) are in
 * preload-buffers.c, the waits (poll, select, epoll) in preload-wait.c.
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

#include "preload-private.h"

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
	if (shim_real.write(STDERR_FILENO, buf, strlen(buf)) < 0) {
		/* nothing to do */
	}
	errno = saved;
}
/* ---------------------------------------------------------------------- */
/* Resolving the real functions, once */

pthread_once_t shim_init_once = PTHREAD_ONCE_INIT;

void
shim_init_real(void)
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
	R(poll_chk, "__poll_chk");
	R(ppoll_chk, "__ppoll_chk");
	R(read, "read");
	R(read_chk, "__read_chk");
	R(write, "write");
#undef R
	shim_fp_auto = shim_fp_enabled();
	if (!shim_real.fcntl64)
		shim_real.fcntl64 = shim_real.fcntl;
	if (!shim_real.mmap64)
		shim_real.mmap64 = shim_real.mmap;
	shim_debug_enabled = dbg && *dbg && strcmp(dbg, "0") != 0;
	if (!shim_real.fopen64)
		shim_real.fopen64 = shim_real.fopen;
	shim_track_init();
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
			/* The fast path waits for the first call that streams. */
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
		if (shim_real.write(fd, buf, n) != (ssize_t)n)
			break;
	}
	if (in)
		fclose(in);
	if (shim_real.write(fd, line, sizeof(line) - 1) != (ssize_t)(sizeof(line) - 1) ||
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

void
shim_fd_drop(int fd)
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
	shim_fd_drop(fd);
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
		shim_fd_drop((int)a[0]);
		return shim_real.syscall(nr, a[0]);
	case SYS_mmap:
		return (long)shim_mmap(true, (void *)a[0], (size_t)a[1], (int)a[2], (int)a[3],
				       (int)a[4], (off_t)a[5]);
	case SYS_munmap:
		return shim_munmap(true, (void *)a[0], (size_t)a[1]);
	case SYS_read:
		if (!shim_fd_maybe_tracked((int)a[0]))
			return shim_real.syscall(nr, a[0], a[1], a[2]);
		return shim_read((int)a[0], (void *)a[1], (size_t)a[2]);
	case SYS_write:
		if (!shim_fd_maybe_tracked((int)a[0]))
			return shim_real.syscall(nr, a[0], a[1], a[2]);
		return shim_write((int)a[0], (const void *)a[1], (size_t)a[2]);
	default:
		return shim_real.syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	}
}

/* ---------------------------------------------------------------------- */
/* read(): the shim's read() emulation on the fast path (read.c) */

EXPORT ssize_t
read(int fd, void *buf, size_t count)
{
	shim_init();
	if (likely(!shim_fd_maybe_tracked(fd)))
		return shim_real.read(fd, buf, count);
	return shim_read(fd, buf, count);
}

/* _FORTIFY_SOURCE callers: glibc's check (it aborts), then the same as read(). */
EXPORT ssize_t __read_chk(int fd, void *buf, size_t count, size_t buflen);

EXPORT ssize_t
__read_chk(int fd, void *buf, size_t count, size_t buflen)
{
	shim_init();
	if (count > buflen)
		return shim_real.read_chk ? shim_real.read_chk(fd, buf, count, buflen)
					  : (abort(), -1);	/* glibc's __chk_fail() */
	if (likely(!shim_fd_maybe_tracked(fd)))
		return shim_real.read(fd, buf, count);
	return shim_read(fd, buf, count);
}

/* ---------------------------------------------------------------------- */
/* write(): the shim's write() emulation on the fast path (read.c) */

EXPORT ssize_t
write(int fd, const void *buf, size_t count)
{
	shim_init();
	if (likely(!shim_fd_maybe_tracked(fd)))
		return shim_real.write(fd, buf, count);
	return shim_write(fd, buf, count);
}
