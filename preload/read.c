/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * read() and write() of an app's fd (docs/shim.md, "read() through the
 * fast path", "write() through the fast path"): the fd of an attached
 * handle whose fast path can serve it reads through the fast path's read()
 * emulation (shim-client/fpread.c) and writes through its write()
 * emulation (shim-client/fpwrite.c), everything else through the real
 * read() and write().
 */
#include "config.h"

#include <errno.h>
#include <sys/stat.h>

#include "preload-private.h"

/* Is @fd still @h's node? (An fd closed behind our back may be reused.) */
static bool
still_ours(int fd, struct shim_handle *h)
{
	struct stat st;

	return fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == h->rdev;
}

ssize_t
shim_read(int fd, void *buf, size_t count)
{
	struct shim_handle *h = shim_fd_get(fd);
	ssize_t r = 0;
	bool done = false;
	int saved = errno;

	if (h)
		shim_fp_want(h);	/* read() streams: the first one sets it up */
	if (h && shim_fp_of(h) && still_ours(fd, h))
		done = shim_fp_read(h, fd, buf, count, &r);
	shim_handle_unref(h);
	errno = saved;
	if (!done)
		return shim_real.read(fd, buf, count);
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

ssize_t
shim_write(int fd, const void *buf, size_t count)
{
	struct shim_handle *h = shim_fd_get(fd);
	ssize_t r = 0;
	bool done = false;
	int saved = errno;

	if (h)
		shim_fp_want(h);	/* write() streams too: the first one sets it up */
	if (h && shim_fp_of(h) && still_ours(fd, h))
		done = shim_fp_write(h, fd, buf, count, &r);
	shim_handle_unref(h);
	errno = saved;
	if (!done)
		return shim_real.write(fd, buf, count);
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	return r;
}
