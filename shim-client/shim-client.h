/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The client side of the shim protocol (include/v4l2cuse/shim-protocol.h,
 * docs/shim.md): one library shared by libv4l2cuse-preload.so (preload/),
 * which runs it inside foreign processes, and our own consumers of a node
 * (client/, for v4l2cuse-pipewire and v4l2cuse-usb). libc only, no GLib;
 * built -fvisibility=hidden and as PIC for the preload library.
 *
 * handle.c   handles (one per open file description of a node): their
 *            reference counts, shim_lock, the fork child's reset.
 * client.c   the connection: detection, attach, MAP/UNMAP/STAGING.
 * fastpath.c the fast path: QBUF, DQBUF and readiness through the handle's
 *            shared-memory queue instead of CUSE.
 * fpread.c   read() emulation on top of the fast path (as vb2's fileio on
 *            top of its streaming calls).
 * fpwrite.c  write() emulation on a writer node, the same way.
 *
 * The program that links it provides the real libc functions (shim_real),
 * shim_debug() and shim_debug_enabled: preload/preload.c resolves them
 * with dlsym(RTLD_NEXT), client/shim-libc.c takes libc's own, the unit
 * tests their fakes (tests/unit/fake-shim-libc.c). The library never calls
 * libc's interposable entry points (open, close, mmap, ioctl, ...) but
 * through shim_real, so the preload library never calls itself.
 *
 * Locking: shim_lock (handle.c) guards the handle reference counts (and
 * the preload library's tables of fds and mappings) and is held only for
 * short bookkeeping. A handle's io lock serializes its socket conversation
 * and its USERPTR staging maps. Never take an io lock while holding
 * shim_lock.
 */

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/types.h>
#include <linux/videodev2.h>

#include "v4l2cuse/shim-protocol.h"

/* Per-buffer tables of a handle are sized by the protocol's buffer limit. */
#define SHIM_MAX_BUFFERS V4L2CUSE_SHIM_MAX_BUFFERS
#define SHIM_MAX_REPLY_FDS 2		/* FASTPATH: memfd and socket */

/*
 * The real libc functions: dlsym(RTLD_NEXT) in the preload library, libc
 * itself in our programs (client/shim-libc.c), fakes in the unit tests.
 */
struct shim_libc {
	int (*open)(const char *path, int flags, ...);
	int (*open64)(const char *path, int flags, ...);
	int (*openat)(int dirfd, const char *path, int flags, ...);
	int (*openat64)(int dirfd, const char *path, int flags, ...);
	int (*open_2)(const char *path, int flags);
	int (*open64_2)(const char *path, int flags);
	int (*openat_2)(int dirfd, const char *path, int flags);
	int (*openat64_2)(int dirfd, const char *path, int flags);
	int (*close)(int fd);
	int (*close_range)(unsigned int first, unsigned int last, int flags);
	void (*closefrom)(int lowfd);
	int (*dup)(int fd);
	int (*dup2)(int fd, int fd2);
	int (*dup3)(int fd, int fd2, int flags);
	int (*fcntl)(int fd, int cmd, ...);
	int (*fcntl64)(int fd, int cmd, ...);
	int (*ioctl)(int fd, unsigned long request, ...);
	void *(*mmap)(void *addr, size_t len, int prot, int flags, int fd, off_t off);
	void *(*mmap64)(void *addr, size_t len, int prot, int flags, int fd, off_t off);
	int (*munmap)(void *addr, size_t len);
	long (*syscall)(long nr, ...);
	FILE *(*fopen)(const char *path, const char *mode);
	FILE *(*fopen64)(const char *path, const char *mode);
	int (*poll)(struct pollfd *fds, nfds_t n, int timeout);
	int (*ppoll)(struct pollfd *fds, nfds_t n, const struct timespec *timeout,
		     const sigset_t *sigmask);
	int (*select)(int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *timeout);
	int (*pselect)(int n, fd_set *r, fd_set *w, fd_set *e, const struct timespec *timeout,
		       const sigset_t *sigmask);
	int (*epoll_ctl)(int epfd, int op, int fd, struct epoll_event *ev);
	int (*epoll_wait)(int epfd, struct epoll_event *ev, int max, int timeout);
	int (*epoll_pwait)(int epfd, struct epoll_event *ev, int max, int timeout,
			   const sigset_t *sigmask);
	int (*epoll_pwait2)(int epfd, struct epoll_event *ev, int max,
			    const struct timespec *timeout, const sigset_t *sigmask);
	/* glibc's _FORTIFY_SOURCE entries, NULL where the libc has none. */
	int (*poll_chk)(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen);
	int (*ppoll_chk)(struct pollfd *fds, nfds_t n, const struct timespec *timeout,
			 const sigset_t *sigmask, size_t fdslen);
	ssize_t (*read)(int fd, void *buf, size_t count);
	ssize_t (*read_chk)(int fd, void *buf, size_t count, size_t buflen);
	ssize_t (*write)(int fd, const void *buf, size_t count);
};

/* The program's (see the top of this file). */
extern struct shim_libc shim_real;
extern bool shim_debug_enabled;

void shim_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* An attached file handle (one open file description on our node). */
struct shim_handle {
	int refs;			/* fds + mappings + users; under shim_lock */
	int sock;			/* connection to the daemon; -1 in a forked child
					 * and once a request failed (client.c) */
	dev_t rdev;			/* the node, to spot a stale fd number */
	pthread_mutex_t io;		/* socket conversation, staging maps */
	uint32_t seq;
	struct shim_handle *next;	/* all handles, for fork */
	/* USERPTR: the daemon's staging memfd of each buffer, mapped read-only. */
	void *staging[SHIM_MAX_BUFFERS];
	size_t staging_len[SHIM_MAX_BUFFERS];
	/*
	 * The fast path (fastpath.c), or NULL: set once, at the first call
	 * that streams (shim_fp_want()), never changed after but in a forked
	 * child; read it with shim_fp_of(). @fp_asked: it was asked for
	 * (set up or refused), never again.
	 */
	struct shim_fp *fp;
	bool fp_asked;
};

static inline struct shim_fp *
shim_fp_of(struct shim_handle *h)
{
	return __atomic_load_n(&h->fp, __ATOMIC_ACQUIRE);
}

/*
 * The buffer and streaming ioctls: what a handle's read() or write()
 * emulation answers while it holds the queue (fpread.c, fpwrite.c).
 */
static inline bool
shim_buffer_ioctl(unsigned long request)
{
	switch (request) {
	case VIDIOC_REQBUFS:
	case VIDIOC_CREATE_BUFS:
	case VIDIOC_QUERYBUF:
	case VIDIOC_PREPARE_BUF:
	case VIDIOC_QBUF:
	case VIDIOC_DQBUF:
	case VIDIOC_STREAMON:
	case VIDIOC_STREAMOFF:
		return true;
	default:
		return false;
	}
}

/* --- handle.c --- */
void shim_lock(void);
void shim_unlock(void);

/* A new handle with one reference (the caller's), socket @sock. */
struct shim_handle *shim_handle_new(int sock, dev_t rdev);
/* Under shim_lock. */
void shim_handle_ref_locked(struct shim_handle *h);
void shim_handle_unref_locked(struct shim_handle *h);
/* Accepts NULL. */
void shim_handle_unref(struct shim_handle *h);
/*
 * In the child of fork(), before anything else: shim_lock and every
 * handle's io lock start unlocked, and the handles lose their socket and
 * their fast path, which are the parent's (docs/shim.md).
 */
void shim_handles_after_fork_child(void);

/* --- client.c --- */
/* If @fd is a v4l2cuse node whose daemon accepts us, a new handle (1 ref). */
struct shim_handle *shim_attach(int fd);
/* One request/reply; *ret_fd gets a passed fd or -1. 0 or -errno (transport). */
int shim_request(struct shim_handle *h, struct v4l2cuse_shim_request *req,
		 struct v4l2cuse_shim_reply *rep, int *ret_fd);
/* The same with h->io held by the caller. */
int shim_request_locked(struct shim_handle *h, struct v4l2cuse_shim_request *req,
			struct v4l2cuse_shim_reply *rep, int *ret_fd);
/* The same with up to @max_fds passed fds (-1 where none came). */
int shim_request_fds_locked(struct shim_handle *h, struct v4l2cuse_shim_request *req,
			    struct v4l2cuse_shim_reply *rep, int *fds, unsigned int max_fds);
/*
 * Connect and authenticate with @a's token; the socket, or -errno. Its
 * replies must come within shim_reply_timeout_ms (SO_RCVTIMEO; the daemon
 * answers at once, a wedged one must not hang the app); tests shorten it.
 */
int shim_connect(const struct v4l2cuse_shim_attach *a);
extern unsigned int shim_reply_timeout_ms;
/* Is @fd a character device of the cuse class? Fills *ret_rdev. */
bool shim_is_cuse_node(int fd, dev_t *ret_rdev);

/* --- fastpath.c --- */
/* A handle's fast path: the shared-memory queue and the wake-up socket. */
struct shim_fp {
	struct v4l2cuse_fp_shared *sh;	/* mapped read-write, shared with the daemon */
	size_t size;
	int sock;			/* our end of the wake-up socketpair */
	pthread_mutex_t lock;		/* the rings and the fields below */
	uint32_t done_tail;		/* completions consumed */
	uint32_t sub_head;		/* submissions posted */
	uint32_t qbufs_posted, acks_posted;
	/* A buffer this handle dequeued through the ring, until it queues it. */
	struct {
		bool owned;
		uint32_t epoch;
		uint32_t length;	/* the buffer's own length */
		struct v4l2_buffer requeue;
	} bufs[SHIM_MAX_BUFFERS];
	bool dead;			/* the daemon hung up: CUSE from now on */
	/* read() emulation (fpread.c): internal MMAP buffers streamed through the rings. */
	struct {
		pthread_mutex_t lock;	/* held through a read(), a start, a stop */
		bool active;		/* started (atomic loads without the lock) */
		bool partial;		/* a frame is partly read: poll says POLLIN (atomic) */
		uint32_t type;
		unsigned int n;
		void *mem[SHIM_MAX_BUFFERS];	/* mapped read-only, not in the mapping table */
		size_t len[SHIM_MAX_BUFFERS];
		uint64_t map_id[SHIM_MAX_BUFFERS];
		bool cur;		/* a frame is being read: */
		uint32_t index, pos, size;
	} rd;
	/* write() emulation (fpwrite.c): internal MMAP output buffers queued through the rings. */
	struct {
		pthread_mutex_t lock;	/* held through a write(), a start, a stop */
		bool active;		/* started (atomic loads without the lock) */
		bool joined;		/* a write() through CUSE made the handle the writer */
		bool fmt_known;		/* the format below is the node's (until S_FMT) */
		bool raw;		/* it is not compressed: the emulation takes it */
		uint32_t sizeimage;
		unsigned int n;
		bool free[SHIM_MAX_BUFFERS];	/* ours to fill: not queued */
		void *mem[SHIM_MAX_BUFFERS];	/* mapped read-write, not in the map table */
		size_t len[SHIM_MAX_BUFFERS];
		uint64_t map_id[SHIM_MAX_BUFFERS];
	} wr;
};

/* Is the fast path wanted? (V4L2CUSE_FASTPATH=0 turns it off.) */
bool shim_fp_enabled(void);
/* Ask the daemon for @h's fast path; h->fp stays NULL if there is none. */
void shim_fp_setup(struct shim_handle *h);
void shim_fp_free(struct shim_fp *fp);
/*
 * QBUF and DQBUF (@fd is the app's, for its O_NONBLOCK) through the fast
 * path: true when answered (*ret is 0 or -errno, *b filled as the kernel
 * fills it), false when the request must go through CUSE.
 */
bool shim_fp_qbuf(struct shim_handle *h, struct v4l2_buffer *b, int *ret);
bool shim_fp_dqbuf(struct shim_handle *h, int fd, struct v4l2_buffer *b, int *ret);
/*
 * MMAP buffer @index of @type, which the handle's own REQBUFS made and
 * nobody queued yet, may be queued through the ring (shim_fp_qbuf()) in
 * the current epoch, as one the ring gave back: false if the handle does
 * not stream through the fast path. For the emulations, whose QBUF
 * answers carry the index, type, memory, length and QUEUED flag only.
 */
bool shim_fp_adopt(struct shim_handle *h, uint32_t type, uint32_t index, uint32_t length);
/*
 * One look at the ring for DQBUF, no waiting (shim_fp_dqbuf() and the
 * read() emulation, which waits without its lock): DONE with *ret and *b
 * (-EAGAIN with O_NONBLOCK), CUSE when the ring cannot answer, WAIT when
 * a blocking caller must wait (shim_fp_wait()). @woken: it waited before.
 */
enum shim_fp_dq { SHIM_FP_DQ_DONE, SHIM_FP_DQ_CUSE, SHIM_FP_DQ_WAIT };
enum shim_fp_dq shim_fp_dqbuf_try(struct shim_handle *h, int fd, struct v4l2_buffer *b,
				  int *ret, bool woken);
/* Wait for the daemon's next wake-up: 0, -EINTR, or -errno once it is gone. */
int shim_fp_wait(struct shim_handle *h);
/*
 * The file a call works on: the app's fd, and once the call waits (when
 * another thread may close the fd) a duplicate that keeps the file open
 * until the call ends, as the kernel keeps it through a syscall.
 */
struct shim_fp_file {
	int fd;
	int pin;			/* -1 until shim_fp_file_pin() */
};
int shim_fp_file_fd(const struct shim_fp_file *f);
void shim_fp_file_pin(struct shim_fp_file *f);
void shim_fp_file_unpin(struct shim_fp_file *f);
/*
 * poll() of @h from the shared state: true with *ret_revents (0: not ready
 * yet, wait for POLLIN on shim_fp_wait_fd()), false when the node must be
 * polled (CUSE): no fast path, or not streaming through it.
 */
bool shim_fp_poll(struct shim_handle *h, short events, short *ret_revents);
int shim_fp_wait_fd(struct shim_handle *h);
/*
 * The wait fd reported @revents while shim_fp_poll() said "not ready":
 * a hang-up ends the fast path (the daemon is gone), a stale wake-up is
 * consumed.
 */
void shim_fp_woken(struct shim_handle *h, short revents);
/* fork(): the child goes through CUSE (its parent's rings are not its own). */
void shim_fp_forget_child(struct shim_handle *h);
/*
 * Set up the fast path lazily (issue 28, item 12): a probe of the node
 * (open, QUERYCAP, ENUM_FMT, close) costs the daemon no memfd, socketpair
 * or watch. shim_fp_want() sets it up once, if @shim_fp_auto (the
 * library's init sets it unless V4L2CUSE_FASTPATH=0; the unit tests set
 * up by hand); callers: REQBUFS and CREATE_BUFS of MMAP or USERPTR buffers
 * with a count (shim_fp_want_ioctl()), read() and write(), and poll(),
 * select() or epoll_ctl() asking POLLIN (shim_fp_want_poll()), where vb2
 * starts its read() emulation.
 */
extern bool shim_fp_auto;
void shim_fp_want(struct shim_handle *h);
void shim_fp_want_ioctl(struct shim_handle *h, unsigned long request, const void *arg);
void shim_fp_want_poll(struct shim_handle *h, short events);
/* The shared state under its sequence lock; false if it never settled. */
bool shim_fp_state(struct shim_fp *fp, struct v4l2cuse_fp_state *st);
/*
 * The fast path's race windows, for the unit tests (NULL in the library):
 * a test runs the daemon's side or another app thread there, so that an
 * interleaving that is rare in an app happens every time.
 */
enum shim_fp_point {
	SHIM_FP_STATE_READ,	/* DQBUF read the state, has not looked at the ring yet */
	SHIM_FP_SETTLE,		/* about to take the wake-ups (fp->lock held) */
	SHIM_FP_WAIT,		/* a blocking DQBUF or read() is about to wait */
	SHIM_FP_QBUF_POST,	/* QBUF's entry is written, not posted yet (fp->lock held) */
};
extern void (*shim_fp_test_hook)(struct shim_fp *fp, enum shim_fp_point point);

/* --- fpread.c --- */
/*
 * read() of attached @h through the emulation, @fd being the caller's fd
 * of it: true when answered (*ret: bytes or -errno), false when the real
 * read() (CUSE) must answer.
 */
bool shim_fp_read(struct shim_handle *h, int fd, void *buf, size_t count, ssize_t *ret);
/* Is read() emulation running on @h? (A lock-free hint.) */
bool shim_fp_reading(struct shim_handle *h);
/*
 * poll()/select()/epoll asking @events of @fd: start read() emulation
 * where the daemon's own poll would start its own (failure: CUSE answers).
 */
void shim_fp_read_autostart(struct shim_handle *h, int fd, short events);
/*
 * An ioctl of @h while its read() emulation runs: true when answered as
 * vb2 answers during file I/O (*ret 0 or -errno), false for the usual way.
 */
bool shim_fp_read_ioctl(struct shim_handle *h, int fd, unsigned long request, void *arg,
			int *ret);
/* Unmap the emulation's buffers (the handle goes; the daemon's records go with it). */
void shim_fp_read_free(struct shim_fp *fp);

/* --- fastpath.c: what the emulations share --- */
/* An ioctl through CUSE (the real one): 0 or -errno. */
int shim_cuse_ioctl(int fd, unsigned long request, void *arg);
/* Is [p, p + len) mapped? (The kernel's copy_to_user/copy_from_user would fault.) */
bool shim_range_mapped(const void *p, size_t len);
/*
 * Map MMAP buffer @index of @type with @prot (QUERYBUF through CUSE, then
 * MAP as an app's mmap() asks), outside the mapping table: the emulation
 * owns it. 0 or -errno, nothing left behind.
 */
int shim_fp_map_internal(struct shim_handle *h, int fd, uint32_t type, unsigned int index,
			 int prot, void **ret_mem, size_t *ret_len, uint64_t *ret_map_id);
/* Unmap it (@mem may be NULL); @tell: the live handle whose daemon hears UNMAP, or NULL. */
void shim_fp_unmap_internal(struct shim_handle *tell, void *mem, size_t len, uint64_t map_id);

/* --- fpwrite.c --- */
/*
 * write() of attached @h through the emulation, @fd being the caller's fd
 * of it: true when answered (*ret: bytes or -errno), false when the real
 * write() (CUSE) must answer.
 */
bool shim_fp_write(struct shim_handle *h, int fd, const void *buf, size_t count, ssize_t *ret);
/* Is write() emulation running on @h? (A lock-free hint.) */
bool shim_fp_writing(struct shim_handle *h);
/*
 * An ioctl of @h (a writer node's handle with a fast path) that needs the
 * queue as the daemon's own write() leaves it: the buffer ioctls while the
 * emulation runs, S_FMT. true when answered (*ret 0 or -errno): the
 * emulation stopped first, then the real ioctl answered, with no write()
 * in between; S_FMT also makes the next write() ask for the format again.
 * false for the usual way.
 */
bool shim_fp_write_ioctl(struct shim_handle *h, int fd, unsigned long request, void *arg,
			 int *ret);
/* Unmap the emulation's buffers (the handle goes; the daemon's records go with it). */
void shim_fp_write_free(struct shim_fp *fp);
