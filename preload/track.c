/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Bookkeeping of the preload shim: fd -> handle, and address ranges that
 * map daemon buffers. Every untracked fd and mapping must cost next to
 * nothing, so the hot checks are lock-free loads (an fd-indexed two-level
 * table of atomic pointers, a mapping counter); the lock is taken only when
 * they say "maybe ours". The lock is the handles' shim_lock
 * (shim-client/handle.c): a table entry holds a reference to its handle.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "preload-private.h"

#define FD_CHUNK	1024
#define FD_CHUNKS	1024		/* fds up to 1M */

typedef _Atomic(struct shim_handle *) shim_slot;

static _Atomic(shim_slot *) fd_chunks[FD_CHUNKS];
static atomic_uint n_fds;
static unsigned int max_fd_plus_one;	/* under shim_lock */

struct shim_mapping {
	uintptr_t start, end;
	struct shim_handle *h;
	uint64_t map_id;
};

static struct shim_mapping *maps;	/* under shim_lock */
static size_t n_maps_alloc;
static atomic_uint n_maps;

/* ---------------------------------------------------------------------- */
/* fd table */

static shim_slot *
fd_slot(int fd, bool create)
{
	shim_slot *chunk;
	unsigned int c;

	if (fd < 0 || (unsigned int)fd >= FD_CHUNK * FD_CHUNKS)
		return NULL;
	c = (unsigned int)fd / FD_CHUNK;
	chunk = atomic_load_explicit(&fd_chunks[c], memory_order_acquire);
	if (!chunk && create) {
		/* Under the lock: nobody else creates it meanwhile. */
		chunk = calloc(FD_CHUNK, sizeof(*chunk));
		if (!chunk)
			return NULL;
		atomic_store_explicit(&fd_chunks[c], chunk, memory_order_release);
	}
	return chunk ? &chunk[fd % FD_CHUNK] : NULL;
}

bool
shim_fd_maybe_tracked(int fd)
{
	shim_slot *s;

	if (atomic_load_explicit(&n_fds, memory_order_relaxed) == 0)
		return false;
	s = fd_slot(fd, false);
	return s && atomic_load_explicit(s, memory_order_relaxed);
}

struct shim_handle *
shim_fd_get(int fd)
{
	struct shim_handle *h = NULL;
	shim_slot *s;

	if (!shim_fd_maybe_tracked(fd))
		return NULL;
	shim_lock();
	s = fd_slot(fd, false);
	if (s && (h = atomic_load(s)))
		shim_handle_ref_locked(h);
	shim_unlock();
	return h;
}

static void
fd_set_locked(int fd, struct shim_handle *h)
{
	shim_slot *s = fd_slot(fd, h != NULL);
	struct shim_handle *old;

	if (!s)
		return;		/* beyond the table: stays untracked (plain) */
	old = atomic_exchange(s, h);
	if (h) {
		shim_handle_ref_locked(h);
		if ((unsigned int)fd >= max_fd_plus_one)
			max_fd_plus_one = (unsigned int)fd + 1;
	}
	if (old)
		shim_handle_unref_locked(old);
	if (h && !old)
		atomic_fetch_add(&n_fds, 1);
	else if (!h && old)
		atomic_fetch_sub(&n_fds, 1);
}

void
shim_fd_set(int fd, struct shim_handle *h)
{
	shim_lock();
	fd_set_locked(fd, h);
	shim_unlock();
}

bool
shim_fd_forget(int fd)
{
	bool was;

	if (!shim_fd_maybe_tracked(fd))
		return false;
	shim_lock();
	{
		shim_slot *s = fd_slot(fd, false);

		was = s && atomic_load(s);
		if (was)
			fd_set_locked(fd, NULL);
	}
	shim_unlock();
	return was;
}

void
shim_fd_forget_range(unsigned int first, unsigned int last)
{
	if (atomic_load(&n_fds) == 0)
		return;
	shim_lock();
	if (last >= max_fd_plus_one)
		last = max_fd_plus_one ? max_fd_plus_one - 1 : 0;
	for (unsigned int fd = first; fd <= last && fd < FD_CHUNK * FD_CHUNKS; fd++) {
		shim_slot *s = fd_slot((int)fd, false);

		if (!s) {
			fd |= FD_CHUNK - 1;	/* skip the missing chunk */
			continue;
		}
		if (atomic_load(s))
			fd_set_locked((int)fd, NULL);
	}
	shim_unlock();
}

void
shim_fd_dup(int oldfd, int newfd)
{
	struct shim_handle *h;

	if (oldfd == newfd || newfd < 0)
		return;
	if (!shim_fd_maybe_tracked(oldfd) && !shim_fd_maybe_tracked(newfd))
		return;
	shim_lock();
	{
		shim_slot *s = fd_slot(oldfd, false);

		h = s ? atomic_load(s) : NULL;
		/* Whatever @newfd was is closed now; it refers to @oldfd's file. */
		fd_set_locked(newfd, h);
	}
	shim_unlock();
}

unsigned int
shim_fd_count(void)
{
	return atomic_load(&n_fds);
}

/* ---------------------------------------------------------------------- */
/* Mappings */

bool
shim_maps_maybe_tracked(void)
{
	return atomic_load_explicit(&n_maps, memory_order_relaxed) != 0;
}

int
shim_map_add_locked(void *addr, size_t len, struct shim_handle *h, uint64_t map_id)
{
	size_t n = atomic_load(&n_maps);

	if (n == n_maps_alloc) {
		size_t alloc = n_maps_alloc ? n_maps_alloc * 2 : 16;
		struct shim_mapping *m = realloc(maps, alloc * sizeof(*m));

		if (!m)
			return -ENOMEM;
		maps = m;
		n_maps_alloc = alloc;
	}
	maps[n] = (struct shim_mapping){
		.start = (uintptr_t)addr,
		.end = (uintptr_t)addr + len,
		.h = h,
		.map_id = map_id,
	};
	shim_handle_ref_locked(h);
	atomic_store(&n_maps, n + 1);
	return 0;
}

size_t
shim_map_remove_locked(void *addr, size_t len, struct shim_unmapped *out, size_t max)
{
	uintptr_t start = (uintptr_t)addr, end;
	size_t n = atomic_load(&n_maps), i = 0, n_out = 0;
	long page = sysconf(_SC_PAGESIZE);

	/* The kernel unmaps whole pages. */
	len = (len + (size_t)page - 1) & ~((size_t)page - 1);
	end = start + len;
	if (end < start)
		end = UINTPTR_MAX;
	while (i < n) {
		struct shim_mapping *m = &maps[i];

		if (m->end <= start || m->start >= end) {
			i++;
			continue;
		}
		if (start <= m->start && end >= m->end) {
			if (n_out < max) {
				out[n_out].h = m->h;
				out[n_out].map_id = m->map_id;
				n_out++;
			} else {
				shim_handle_unref_locked(m->h);	/* no room: forget quietly */
			}
			maps[i] = maps[--n];
			continue;
		}
		/* Partial: trim an end; a hole in the middle keeps the record. */
		if (start <= m->start)
			m->start = end;
		else if (end >= m->end)
			m->end = start;
		i++;
	}
	atomic_store(&n_maps, n);
	return n_out;
}

unsigned int
shim_map_count(void)
{
	return atomic_load(&n_maps);
}

int
shim_mmap_check(size_t len, int prot, int flags, int64_t off)
{
	long page = sysconf(_SC_PAGESIZE);
	int type = flags & MAP_TYPE;

	/* vb2_mmap(): VM_SHARED needed, and VM_READ for a capture queue. */
	if (type != MAP_SHARED && type != MAP_SHARED_VALIDATE)
		return -EINVAL;
	if (!(prot & PROT_READ))
		return -EINVAL;
	if (len == 0 || len > UINT32_MAX)
		return -EINVAL;
	if (off < 0 || off > (int64_t)UINT32_MAX || (off & (page - 1)))
		return -EINVAL;
	return 0;
}

/* ---------------------------------------------------------------------- */
/* fork */

static void
track_prepare(void)
{
	shim_lock();
}

static void
track_parent(void)
{
	shim_unlock();
}

void
shim_track_after_fork_child(void)
{
	/*
	 * The child keeps its copies of the tables (the fds and mappings it
	 * inherited); their handles lose the parent's connections.
	 */
	shim_handles_after_fork_child();
	shim_epoll_forget_child();
}

static void
track_child(void)
{
	shim_track_after_fork_child();
}

static pthread_once_t track_once = PTHREAD_ONCE_INIT;

static void
track_init_once(void)
{
	pthread_atfork(track_prepare, track_parent, track_child);
}

void
shim_track_init(void)
{
	pthread_once(&track_once, track_init_once);
}
