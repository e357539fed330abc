/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What the interposing files of libv4l2cuse-preload.so share (preload.c,
 * preload-buffers.c, preload-wait.c); everything here is hidden, only the
 * EXPORTed libc names leave the library.
 */

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define EXPORT __attribute__((visibility("default")))
#define likely(x) __builtin_expect(!!(x), 1)

/* Resolves shim_real and reads the environment (preload.c), once. */
extern pthread_once_t shim_init_once;
void shim_init_real(void);

/* Every interposed function calls this first: it may run before our constructor. */
static inline void
shim_init(void)
{
	pthread_once(&shim_init_once, shim_init_real);
}

/*
 * Forget @fd everywhere: its handle and its epoll registrations (preload.c,
 * for close() and an fd found reused); errno kept.
 */
void shim_fd_drop(int fd);

/*
 * mmap() and munmap() of the library (preload-buffers.c); @raw: the caller
 * came through syscall(), so the real call is a raw syscall too.
 */
void *shim_mmap(bool raw, void *addr, size_t len, int prot, int flags, int fd, off_t off);
int shim_munmap(bool raw, void *addr, size_t len);
