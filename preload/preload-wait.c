/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libv4l2cuse-preload.so: poll, select and epoll. A handle on the fast
 * path waits on its wake-up socket instead of the node (wait.c); calls that
 * name no such handle pass straight through after a lock-free check.
 */
#undef _FORTIFY_SOURCE
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <time.h>

#include "preload-private.h"

/* ---------------------------------------------------------------------- */
/* poll, select, epoll: fast-path handles wait on their wake-up socket (wait.c) */

static struct timespec *
ms_timespec(int ms, struct timespec *ts)
{
	if (ms < 0)
		return NULL;
	ts->tv_sec = ms / 1000;
	ts->tv_nsec = (long)(ms % 1000) * 1000000;
	return ts;
}

EXPORT int
poll(struct pollfd *fds, nfds_t n, int timeout)
{
	struct timespec ts;

	shim_init();
	if (likely(!shim_poll_needed(fds, n)))
		return shim_real.poll(fds, n, timeout);
	return shim_poll(fds, n, ms_timespec(timeout, &ts), NULL, false);
}

EXPORT int
ppoll(struct pollfd *fds, nfds_t n, const struct timespec *timeout, const sigset_t *sigmask)
{
	shim_init();
	if (likely(!shim_poll_needed(fds, n)))
		return shim_real.ppoll(fds, n, timeout, sigmask);
	return shim_poll(fds, n, timeout, sigmask, true);
}

/* _FORTIFY_SOURCE callers: glibc's checks, then the same as poll()/ppoll(). */
EXPORT int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen);
EXPORT int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *timeout,
		       const sigset_t *sigmask, size_t fdslen);

EXPORT int
__poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen)
{
	struct timespec ts;

	shim_init();
	if (fdslen / sizeof(*fds) < n || !shim_poll_needed(fds, n))
		return shim_real.poll_chk(fds, n, timeout, fdslen);
	return shim_poll(fds, n, ms_timespec(timeout, &ts), NULL, false);
}

EXPORT int
__ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *timeout,
	    const sigset_t *sigmask, size_t fdslen)
{
	shim_init();
	if (fdslen / sizeof(*fds) < n || !shim_poll_needed(fds, n))
		return shim_real.ppoll_chk(fds, n, timeout, sigmask, fdslen);
	return shim_poll(fds, n, timeout, sigmask, true);
}

EXPORT int
select(int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *timeout)
{
	struct timespec ts;
	int ret;

	shim_init();
	if (likely(!shim_select_needed(n, r, w, e)))
		return shim_real.select(n, r, w, e, timeout);
	if (timeout) {
		if (timeout->tv_sec < 0 || timeout->tv_usec < 0 || timeout->tv_usec >= 1000000) {
			errno = EINVAL;
			return -1;
		}
		ts.tv_sec = timeout->tv_sec;
		ts.tv_nsec = timeout->tv_usec * 1000;
	}
	ret = shim_select(n, r, w, e, timeout ? &ts : NULL, NULL, false);
	if (timeout) {
		timeout->tv_sec = ts.tv_sec;
		timeout->tv_usec = ts.tv_nsec / 1000;
	}
	return ret;
}

EXPORT int
pselect(int n, fd_set *r, fd_set *w, fd_set *e, const struct timespec *timeout,
	const sigset_t *sigmask)
{
	struct timespec ts;

	shim_init();
	if (likely(!shim_select_needed(n, r, w, e)))
		return shim_real.pselect(n, r, w, e, timeout, sigmask);
	if (timeout)
		ts = *timeout;
	return shim_select(n, r, w, e, timeout ? &ts : NULL, sigmask, true);
}

EXPORT int
epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	shim_init();
	if (likely(!shim_fd_maybe_tracked(fd)))
		return shim_real.epoll_ctl(epfd, op, fd, ev);
	return shim_epoll_ctl(epfd, op, fd, ev);
}

/*
 * The epoll_wait() family: our registrations' events are rewritten (or
 * dropped, when a wake-up was stale: then the wait goes on for the time
 * left).
 */
static int
epoll_common(int epfd, struct epoll_event *ev, int max, const struct timespec *timeout,
	     const sigset_t *sigmask, int kind)
{
	/* A stale wake-up goes on waiting for what is left of @timeout. */
	int64_t start = timeout ? shim_now_ns() : 0;
	struct timespec left;
	int r;

	if (timeout)
		left = *timeout;
	for (;;) {
		int ms = -1;

		if (timeout && kind != 2) {
			int64_t t = (int64_t)left.tv_sec * 1000 + (left.tv_nsec + 999999) / 1000000;

			ms = t > INT_MAX ? INT_MAX : (int)t;
		}
		if (kind == 0)
			r = shim_real.epoll_wait(epfd, ev, max, ms);
		else if (kind == 1)
			r = shim_real.epoll_pwait(epfd, ev, max, ms, sigmask);
		else
			r = shim_real.epoll_pwait2(epfd, ev, max, timeout ? &left : NULL, sigmask);
		if (r <= 0 || !shim_epoll_maybe_ours())
			return r;
		r = shim_epoll_fix(epfd, ev, r);
		if (r > 0 || (timeout && left.tv_sec == 0 && left.tv_nsec == 0))
			return r;
		if (timeout && !shim_time_left(timeout, start, &left))
			return 0;
	}
}

EXPORT int
epoll_wait(int epfd, struct epoll_event *ev, int max, int timeout)
{
	struct timespec ts;

	shim_init();
	if (likely(!shim_epoll_maybe_ours()))
		return shim_real.epoll_wait(epfd, ev, max, timeout);
	return epoll_common(epfd, ev, max, ms_timespec(timeout, &ts), NULL, 0);
}

EXPORT int
epoll_pwait(int epfd, struct epoll_event *ev, int max, int timeout, const sigset_t *sigmask)
{
	struct timespec ts;

	shim_init();
	if (likely(!shim_epoll_maybe_ours()))
		return shim_real.epoll_pwait(epfd, ev, max, timeout, sigmask);
	return epoll_common(epfd, ev, max, ms_timespec(timeout, &ts), sigmask, 1);
}

EXPORT int epoll_pwait2(int epfd, struct epoll_event *ev, int max,
			const struct timespec *timeout, const sigset_t *sigmask);

EXPORT int
epoll_pwait2(int epfd, struct epoll_event *ev, int max, const struct timespec *timeout,
	     const sigset_t *sigmask)
{
	shim_init();
	if (!shim_real.epoll_pwait2) {
		errno = ENOSYS;
		return -1;
	}
	if (likely(!shim_epoll_maybe_ours()))
		return shim_real.epoll_pwait2(epfd, ev, max, timeout, sigmask);
	return epoll_common(epfd, ev, max, timeout, sigmask, 2);
}
