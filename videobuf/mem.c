/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Buffer memory: one memfd per buffer, sealed against shrinking and
 * growing so a client that maps it cannot SIGBUS the producer by
 * truncating it (docs/cuse.md), and mapped MAP_SHARED in the
 * daemon. MMAP clients map the same memfd through the preload shim; for
 * USERPTR it is the staging copy. Also the shim's lookups: a buffer's fd
 * by mmap cookie or index, mapping counts and the buffer generation.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include <glib.h>

#include "queue-private.h"

/*
 * A buffer size must fit the 32-bit v4l2_buffer.length after rounding up
 * to a page (vb2's __vb2_buf_mem_alloc checks the same wrap-around).
 */
int
vb_size_align(const struct vb_queue *q, size_t size, size_t *ret_aligned)
{
	size_t aligned;

	if (size == 0 || size > UINT32_MAX)
		return -EINVAL;
	aligned = (size + q->page_size - 1) & ~(q->page_size - 1);
	if (aligned > UINT32_MAX)
		return -EINVAL;
	*ret_aligned = aligned;
	return 0;
}

int
vb_memfd_new(const char *name, size_t size, void **ret_mem)
{
	void *mem;
	int fd, r;

	fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)size) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
		goto err_close;
	mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (mem == MAP_FAILED)
		goto err_close;
	*ret_mem = mem;
	return fd;

err_close:
	r = -errno;
	close(fd);
	return r;
}

int
vb_mem_alloc(struct vb_queue *q, struct vb_buffer *b, size_t length)
{
	char name[64];
	size_t aligned;
	void *mem;
	int fd, r;

	r = vb_size_align(q, length, &aligned);
	if (r < 0)
		return r;
	snprintf(name, sizeof(name), "v4l2cuse:%s:%u", q->name, b->index);
	/* An exhausted budget looks like an exhausted machine (vb2's ENOMEM). */
	if (q->budget && vb_budget_charge(q->budget, aligned, name) < 0)
		return -ENOMEM;
	fd = vb_memfd_new(name, aligned, &mem);
	if (fd < 0) {
		r = fd;
		goto err_credit;
	}
	b->memfd = fd;
	b->mem = mem;
	b->length = length;
	b->mem_length = aligned;
	b->charged = q->budget != NULL;
	return 0;

err_credit:
	if (q->budget)
		vb_budget_credit(q->budget, aligned);
	g_debug("%s: buffer %u: memfd of %zu bytes failed: %s", q->name, b->index,
		aligned, g_strerror(-r));
	return r;
}

/* The daemon's side only: a client's mapping keeps the memfd alive. */
void
vb_mem_free(struct vb_buffer *b)
{
	if (b->mem) {
		munmap(b->mem, b->mem_length);
		b->mem = NULL;
	}
	if (b->memfd >= 0) {
		close(b->memfd);
		b->memfd = -1;
	}
	if (b->charged) {
		vb_budget_credit(b->q->budget, b->mem_length);
		b->charged = false;
	}
}

static int
vb_mem_dup_fd(struct vb_buffer *b, int *ret_fd)
{
	int fd = fcntl(b->memfd, F_DUPFD_CLOEXEC, 3);

	if (fd < 0)
		return -errno;
	*ret_fd = fd;
	return 0;
}

/* --- Lookups for the preload shim ------------------------------------- */

int
vb_queue_mmap_fd(struct vb_queue *q, uint32_t offset, size_t length,
		 int *ret_fd, unsigned int *ret_index)
{
	struct vb_buffer *b = NULL;
	unsigned int i;
	int r = -EINVAL;

	vb_queue_lock(q);
	/* __find_plane_by_offset() and vb2_mmap() */
	if (q->memory != V4L2_MEMORY_MMAP) {
		g_debug("%s: mmap: queue is not set up for mmap", q->name);
		goto out_unlock;
	}
	if (q->mode == VB_MODE_READ) {
		r = -EBUSY;
		goto out_unlock;
	}
	for (i = 0; i < q->n_buffers; i++) {
		if (q->bufs[i]->offset == offset) {
			b = q->bufs[i];
			break;
		}
	}
	if (!b || (length != b->length && length != b->mem_length)) {
		g_debug("%s: mmap: no buffer at offset %#x with length %zu", q->name, offset,
			length);
		goto out_unlock;
	}
	r = vb_mem_dup_fd(b, ret_fd);
	if (r == 0)
		*ret_index = b->index;
out_unlock:
	vb_queue_unlock(q);
	return r;
}

int
vb_queue_mapped(struct vb_queue *q, unsigned int index, int delta)
{
	int r = -EINVAL;

	vb_queue_lock(q);
	if (index < q->n_buffers) {
		long mapped = (long)q->bufs[index]->mapped + delta;

		if (mapped >= 0 && mapped <= INT32_MAX) {
			q->bufs[index]->mapped = (unsigned int)mapped;
			r = (int)mapped;
		}
	}
	vb_queue_unlock(q);
	return r;
}

unsigned int
vb_queue_generation(struct vb_queue *q)
{
	unsigned int gen;

	vb_queue_lock(q);
	gen = q->generation;
	vb_queue_unlock(q);
	return gen;
}

int
vb_queue_buffer_fd(struct vb_queue *q, unsigned int index, int *ret_fd)
{
	int r = -EINVAL;

	vb_queue_lock(q);
	if (index < q->n_buffers)
		r = vb_mem_dup_fd(q->bufs[index], ret_fd);
	vb_queue_unlock(q);
	return r;
}
