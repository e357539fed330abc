/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What libv4l2cuse-preload.so resolves with dlsym(RTLD_NEXT) inside apps
 * (struct shim_libc, shim-client/shim-client.h) is, in our own programs,
 * libc itself: the whole table, so that a protocol path that starts using
 * another call never finds a NULL.
 */
#include "config.h"

#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <glib.h>

#include "shim-client.h"

struct shim_libc shim_real = {
	.open = open,
	.open64 = open64,
	.openat = openat,
	.openat64 = openat64,
	.close = close,
	.close_range = close_range,
	.closefrom = closefrom,
	.dup = dup,
	.dup2 = dup2,
	.dup3 = dup3,
	.fcntl = fcntl,
	.fcntl64 = fcntl,
	.ioctl = ioctl,
	.mmap = mmap,
	.mmap64 = mmap64,
	.munmap = munmap,
	.syscall = syscall,
	.fopen = fopen,
	.fopen64 = fopen64,
	.poll = poll,
	.ppoll = ppoll,
	.select = select,
	.pselect = pselect,
	.epoll_ctl = epoll_ctl,
	.epoll_wait = epoll_wait,
	.epoll_pwait = epoll_pwait,
	.epoll_pwait2 = epoll_pwait2,
	.read = read,
	.write = write,
};
bool shim_debug_enabled;

void
shim_debug(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	g_logv(G_LOG_DOMAIN, G_LOG_LEVEL_DEBUG, fmt, ap);
	va_end(ap);
}
