/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * libv4l2cuse-preload.so internals. The library runs inside foreign
 * processes: libc only, no GLib, nothing exported but the interposed libc
 * names (preload*.c), errno kept as the real call left it. The protocol's
 * client (handles, the connection, the fast path and its read() and write()
 * emulations) is the shim-client library (shim-client/shim-client.h),
 * linked in whole.
 *
 * track.c   which fds are attached v4l2cuse handles, which address ranges
 *           are mappings of their buffers; fork handling. Pure bookkeeping
 *           plus the mmap argument rules: the unit tests link it directly.
 * wait.c    poll/ppoll/select/pselect and epoll for fast-path handles.
 * read.c    read() and write() of an fd: an attached one through the fast
 *           path's read() and write() emulations.
 * preload.c the interposed functions of the fds (open, close, dup, fcntl,
 *           syscall, read, write) and the resolution of the real ones;
 *           preload-buffers.c mmap, munmap, ioctl; preload-wait.c poll,
 *           select, epoll. The helpers at the end of this file are theirs.
 *
 * Locking: track.c's tables are under shim_lock, the handles' lock
 * (shim-client.h), held only for short bookkeeping (plus the real
 * munmap/mmap whose result changes the mapping table); wait.c's epoll
 * registrations under a lock of their own. Never take a handle's io lock
 * while holding shim_lock.
 */

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "shim-client.h"

/* --- track.c --- */
/* Lock-free hint: could @fd be tracked? (false: certainly not.) */
bool shim_fd_maybe_tracked(int fd);
/* Is any mapping tracked? (false: munmap/MAP_FIXED need no lookup.) */
bool shim_maps_maybe_tracked(void);

/* The handle behind @fd with a new reference, or NULL. */
struct shim_handle *shim_fd_get(int fd);
/* @fd now refers to @h (takes a reference); replaces what @fd had. */
void shim_fd_set(int fd, struct shim_handle *h);
/* @fd was closed or reused: forget it. Returns whether it was tracked. */
bool shim_fd_forget(int fd);
/* close_range(): forget every fd in [first, last]. */
void shim_fd_forget_range(unsigned int first, unsigned int last);
/* @newfd is a duplicate of @oldfd (dup, dup2, dup3, F_DUPFD*). */
void shim_fd_dup(int oldfd, int newfd);
/* Number of tracked fds (tests). */
unsigned int shim_fd_count(void);

/* A mapping that went away: the daemon hears about it through @h. */
struct shim_unmapped {
	struct shim_handle *h;		/* holds the mapping's reference */
	uint64_t map_id;
};

/* Record [addr, addr+len) as mapping @map_id of @h (takes a reference). */
int shim_map_add_locked(void *addr, size_t len, struct shim_handle *h, uint64_t map_id);
/*
 * [addr, addr+len) was unmapped (or replaced by MAP_FIXED). Mappings it
 * covers entirely are removed and returned in @out (at most @max; the
 * caller sends UNMAP and drops the references); mappings it overlaps at one
 * end are trimmed. Returns the number stored in @out.
 */
size_t shim_map_remove_locked(void *addr, size_t len, struct shim_unmapped *out, size_t max);
unsigned int shim_map_count(void);

/*
 * vb2's mmap rules for a capture buffer: MAP_SHARED (or
 * MAP_SHARED_VALIDATE), PROT_READ, a non-zero length, and an offset that
 * can be a cookie (page-aligned, below 4 GiB). 0 or -EINVAL.
 */
int shim_mmap_check(size_t len, int prot, int flags, int64_t off);

/*
 * Install the fork handlers (once): in a child, handles lose their socket
 * and fast path (shim_handles_after_fork_child()), epoll registrations go.
 */
void shim_track_init(void);
/* The atfork child handler, for tests. */
void shim_track_after_fork_child(void);

/* --- wait.c --- */
/* CLOCK_MONOTONIC in ns. */
int64_t shim_now_ns(void);
/* What is left of @total (NULL: forever) after @start; false when nothing. */
bool shim_time_left(const struct timespec *total, int64_t start, struct timespec *left);
/*
 * poll()/ppoll() with fast-path handles: their readiness from the shared
 * state, their waits on the wake-up socket. @timeout NULL: forever. @ppoll
 * selects ppoll() (with @sigmask) for the waits.
 */
int shim_poll(struct pollfd *fds, nfds_t n, const struct timespec *timeout,
	      const sigset_t *sigmask, bool ppoll);
/* Does any fd of @fds (or of the fd_sets) belong to a fast-path handle? */
bool shim_poll_needed(const struct pollfd *fds, nfds_t n);
bool shim_select_needed(int n, const fd_set *r, const fd_set *w, const fd_set *e);
/* select()/pselect() on top of shim_poll(); updates @timeout (µs) like Linux. */
int shim_select(int n, fd_set *r, fd_set *w, fd_set *e, struct timespec *timeout,
		const sigset_t *sigmask, bool pselect);
/* epoll: a fast-path handle is watched through its wake-up socket. */
int shim_epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev);
/* After epoll_wait: our registrations' events rewritten or dropped. */
int shim_epoll_fix(int epfd, struct epoll_event *ev, int n);
bool shim_epoll_maybe_ours(void);
/* @fd (an app's node fd, or an epoll fd) is closed: drop our registrations. */
void shim_epoll_forget_fd(int fd);
void shim_epoll_forget_child(void);

/* --- read.c --- */
/*
 * read() of @fd (the library's read(), __read_chk and syscall(SYS_read)):
 * an attached handle whose fast path can serve it reads through the
 * emulation (shim_fp_read()), everything else through the real read().
 */
ssize_t shim_read(int fd, void *buf, size_t count);
/*
 * write() of @fd (the library's write() and syscall(SYS_write)): the same
 * with the write() emulation (shim_fp_write()).
 */
ssize_t shim_write(int fd, const void *buf, size_t count);

/* --- preload.c, preload-buffers.c, preload-wait.c --- */
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
