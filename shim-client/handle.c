/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Handles: one per open file description of a node that attached (a
 * connection to the daemon, its staging maps, its fast path), reference
 * counted under shim_lock. The preload library's fd and mapping tables
 * (preload/track.c) hold references and share the lock; our own programs
 * (client/) hold one per capture.
 */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>

#include "shim-client.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct shim_handle *all_handles;	/* under lock */

void
shim_lock(void)
{
	pthread_mutex_lock(&lock);
}

void
shim_unlock(void)
{
	pthread_mutex_unlock(&lock);
}

struct shim_handle *
shim_handle_new(int sock, dev_t rdev)
{
	struct shim_handle *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->refs = 1;
	h->sock = sock;
	h->rdev = rdev;
	pthread_mutex_init(&h->io, NULL);
	shim_lock();
	h->next = all_handles;
	all_handles = h;
	shim_unlock();
	return h;
}

void
shim_handle_ref_locked(struct shim_handle *h)
{
	h->refs++;
}

void
shim_handle_unref_locked(struct shim_handle *h)
{
	struct shim_handle **pp;

	if (--h->refs > 0)
		return;
	for (pp = &all_handles; *pp; pp = &(*pp)->next) {
		if (*pp == h) {
			*pp = h->next;
			break;
		}
	}
	for (int i = 0; i < SHIM_MAX_BUFFERS; i++)
		if (h->staging[i])
			shim_real.munmap(h->staging[i], h->staging_len[i]);
	shim_fp_free(h->fp);
	/* The daemon drops this connection's mapping records with it. */
	if (h->sock >= 0)
		shim_real.close(h->sock);
	pthread_mutex_destroy(&h->io);
	free(h);
}

void
shim_handle_unref(struct shim_handle *h)
{
	if (!h)
		return;
	shim_lock();
	shim_handle_unref_locked(h);
	shim_unlock();
}

void
shim_handles_after_fork_child(void)
{
	/*
	 * The child shares the parent's connections: talking on them would
	 * mix both processes' requests and let the child drop the parent's
	 * mapping counts. Its handles stay (the preload library's tables
	 * still name them), but without a socket: munmap and close are only
	 * local, and mmap of new buffers fails (docs/shim.md).
	 */
	pthread_mutex_init(&lock, NULL);
	for (struct shim_handle *h = all_handles; h; h = h->next) {
		if (h->sock >= 0)
			shim_real.close(h->sock);
		h->sock = -1;
		pthread_mutex_init(&h->io, NULL);
		shim_fp_forget_child(h);	/* the rings are the parent's */
	}
}
