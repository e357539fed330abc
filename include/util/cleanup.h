/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

/* Cleanup helpers for our own types (GLib types use g_autofree/g_autoptr). */
#define _cleanup_(fn) __attribute__((cleanup(fn)))

static inline void *
steal_ptr_impl(void *pp)
{
	void **p = pp;
	void *v = *p;

	*p = NULL;
	return v;
}
#define steal_ptr(pp) ((__typeof__(*(pp)))steal_ptr_impl(pp))

static inline int
steal_fd(int *fd)
{
	int v = *fd;

	*fd = -1;
	return v;
}

static inline void
closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;

		close(*fd);
		errno = saved;
	}
}
#define _cleanup_close_ _cleanup_(closep)

/*
 * Close *@fd unless it is -1 (none) and make it -1: an object's fd that may
 * never have been opened, or may be closed again (GLib 2.76's g_clear_fd()).
 */
static inline void
clear_fd(int *fd)
{
	closep(fd);
	*fd = -1;
}

static inline void
freep(void *p)
{
	free(*(void **)p);
}
#define _cleanup_free_ _cleanup_(freep)
