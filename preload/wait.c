/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Waiting on the nodes of fast-path handles: poll(), ppoll(), select(),
 * pselect() and epoll. While a handle streams through its fast path, its
 * readiness comes from the shared state (shim_fp_poll()) and a wait on its
 * node is a wait on its wake-up socket, which the daemon writes whenever it
 * publishes something; otherwise the node itself is polled (CUSE), as
 * without the fast path. Every other fd passes straight through.
 *
 * epoll: a node registered in an epoll set is watched through a duplicate
 * of its socket carrying the app's data; after epoll_wait() the events of
 * such registrations are rewritten to the node's mask, or dropped when
 * nothing is ready (a stale wake-up). An app that bypasses libc's
 * epoll_wait() sees EPOLLIN for any change (docs/shim.md).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "preload-private.h"

#define POLL_STACK 32

/* select()'s view of a poll mask (the kernel's POLLIN_SET and friends). */
#define SEL_IN	(POLLIN | POLLRDNORM | POLLRDBAND | POLLHUP | POLLERR)
#define SEL_OUT	(POLLOUT | POLLWRNORM | POLLWRBAND | POLLERR)
#define SEL_EX	(POLLPRI)

/* ---------------------------------------------------------------------- */
/* Time */

int64_t
shim_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

bool
shim_time_left(const struct timespec *total, int64_t start, struct timespec *left)
{
	int64_t ns;

	if (!total)
		return true;
	ns = (int64_t)total->tv_sec * 1000000000 + total->tv_nsec - (shim_now_ns() - start);
	if (ns <= 0)
		return false;
	left->tv_sec = ns / 1000000000;
	left->tv_nsec = ns % 1000000000;
	return true;
}

static int
real_wait(struct pollfd *fds, nfds_t n, const struct timespec *timeout,
	  const sigset_t *sigmask, bool use_ppoll)
{
	int ms;

	if (use_ppoll)
		return shim_real.ppoll(fds, n, timeout, sigmask);
	if (!timeout)
		ms = -1;
	else if (timeout->tv_sec >= INT_MAX / 1000)
		ms = INT_MAX;
	else
		ms = (int)(timeout->tv_sec * 1000 + (timeout->tv_nsec + 999999) / 1000000);
	return shim_real.poll(fds, n, ms);
}

/* The node polled itself (CUSE), at once. */
static short
node_revents(int fd, short events)
{
	struct pollfd p = { .fd = fd, .events = events };

	return shim_real.poll(&p, 1, 0) > 0 ? p.revents : 0;
}

/*
 * @h's readiness for @events, filtered as poll() reports it; consumes a
 * stale wake-up when nothing is ready. Returns false if @h does not stream
 * through its fast path (then ask the node).
 */
static bool
fp_revents(struct shim_handle *h, short events, short *ret)
{
	short m;

	if (!shim_fp_poll(h, events, &m))
		return false;
	m &= events | POLLERR | POLLHUP;
	if (!m) {
		shim_fp_woken(h, 0);
		if (!shim_fp_poll(h, events, &m))
			return false;
		m &= events | POLLERR | POLLHUP;
	}
	*ret = m;
	return true;
}

/* ---------------------------------------------------------------------- */
/* poll(), ppoll() */

struct slot {
	struct shim_handle *h;		/* a fast-path handle (a reference), or NULL */
	bool waits;			/* on the handle's socket, not the node */
	short revents;			/* ready from the shared state */
};

bool
shim_poll_needed(const struct pollfd *fds, nfds_t n)
{
	for (nfds_t i = 0; i < n; i++)
		if (shim_fd_maybe_tracked(fds[i].fd))
			return true;
	return false;
}

int
shim_poll(struct pollfd *fds, nfds_t n, const struct timespec *timeout,
	  const sigset_t *sigmask, bool use_ppoll)
{
	struct slot stack_slots[POLL_STACK], *slots = stack_slots;
	struct pollfd stack_work[POLL_STACK], *work = stack_work;
	struct timespec left, zero = { 0, 0 };
	int64_t start = timeout ? shim_now_ns() : 0;
	unsigned int ours = 0;
	int r, saved;

	if (n > POLL_STACK) {
		slots = calloc(n, sizeof(*slots));
		work = calloc(n, sizeof(*work));
		if (!slots || !work) {
			free(slots);
			free(work);
			return real_wait(fds, n, timeout, sigmask, use_ppoll);
		}
	}
	for (nfds_t i = 0; i < n; i++) {
		struct shim_handle *h = shim_fd_get(fds[i].fd);

		slots[i] = (struct slot){ 0 };
		if (h)
			shim_fp_want_poll(h, fds[i].events);	/* POLLIN: read() starts */
		if (h && shim_fp_wait_fd(h) >= 0) {
			/* Where the daemon's poll would start read() emulation, ours starts. */
			shim_fp_read_autostart(h, fds[i].fd, fds[i].events);
			slots[i].h = h;
			ours++;
		} else {
			shim_handle_unref(h);
		}
	}
	if (!ours) {
		r = real_wait(fds, n, timeout, sigmask, use_ppoll);
		goto out;
	}
	left = timeout ? *timeout : zero;
	for (;;) {
		unsigned int ready = 0, count = 0;

		for (nfds_t i = 0; i < n; i++) {
			struct slot *s = &slots[i];
			short m;

			work[i] = fds[i];
			work[i].revents = 0;
			s->waits = false;
			s->revents = 0;
			if (!s->h || !shim_fp_poll(s->h, fds[i].events, &m))
				continue;
			m &= fds[i].events | POLLERR | POLLHUP;
			if (m) {
				s->revents = m;
				work[i].fd = -1;	/* poll() skips it */
				ready++;
			} else {
				work[i].fd = shim_fp_wait_fd(s->h);
				work[i].events = POLLIN;
				s->waits = true;
			}
		}
		r = real_wait(work, n, ready ? &zero : timeout ? &left : NULL, sigmask,
			      use_ppoll);
		if (r < 0)
			goto out;
		for (nfds_t i = 0; i < n; i++) {
			struct slot *s = &slots[i];

			if (s->revents) {
				fds[i].revents = s->revents;
			} else if (s->waits && work[i].revents) {
				short m = 0;

				/* Woken: read the state again (a hang-up ends the fast path). */
				if (work[i].revents & (POLLHUP | POLLERR | POLLNVAL))
					shim_fp_woken(s->h, work[i].revents);
				if (!fp_revents(s->h, fds[i].events, &m))
					m = node_revents(fds[i].fd, fds[i].events);
				fds[i].revents = m;
			} else {
				fds[i].revents = s->waits ? 0 : work[i].revents;
			}
			count += fds[i].revents != 0;
		}
		/* Nothing but stale wake-ups: wait again, for what is left. */
		if (count || r == 0 || (timeout && !shim_time_left(timeout, start, &left))) {
			r = (int)count;
			goto out;
		}
	}
out:
	saved = errno;
	for (nfds_t i = 0; i < n; i++)
		shim_handle_unref(slots[i].h);
	if (slots != stack_slots) {
		free(slots);
		free(work);
	}
	errno = saved;
	return r;
}

/* ---------------------------------------------------------------------- */
/* select(), pselect() */

bool
shim_select_needed(int n, const fd_set *r, const fd_set *w, const fd_set *e)
{
	for (int fd = 0; fd < n && fd < FD_SETSIZE; fd++) {
		if (((r && FD_ISSET(fd, r)) || (w && FD_ISSET(fd, w)) || (e && FD_ISSET(fd, e))) &&
		    shim_fd_maybe_tracked(fd))
			return true;
	}
	return false;
}

int
shim_select(int n, fd_set *rs, fd_set *ws, fd_set *es, struct timespec *timeout,
	    const sigset_t *sigmask, bool pselect)
{
	struct pollfd *p;
	int64_t start = timeout ? shim_now_ns() : 0;
	unsigned int k = 0;
	int r, count = 0;

	if (n < 0 || n > FD_SETSIZE) {
		errno = EINVAL;
		return -1;
	}
	p = calloc((size_t)n + 1, sizeof(*p));
	if (!p) {
		errno = ENOMEM;
		return -1;
	}
	for (int fd = 0; fd < n; fd++) {
		short ev = 0;

		if (rs && FD_ISSET(fd, rs))
			ev |= POLLIN | POLLRDNORM;
		if (ws && FD_ISSET(fd, ws))
			ev |= POLLOUT | POLLWRNORM;
		if (es && FD_ISSET(fd, es))
			ev |= POLLPRI;
		if (ev)
			p[k++] = (struct pollfd){ .fd = fd, .events = ev };
	}
	r = shim_poll(p, k, timeout, sigmask, true);
	if (r < 0)
		goto out;
	for (unsigned int i = 0; i < k; i++) {
		if (p[i].revents & POLLNVAL) {
			errno = EBADF;
			r = -1;
			goto out;
		}
	}
	if (rs)
		FD_ZERO(rs);
	if (ws)
		FD_ZERO(ws);
	if (es)
		FD_ZERO(es);
	for (unsigned int i = 0; i < k; i++) {
		short ev = p[i].events, re = p[i].revents;

		if ((ev & POLLIN) && (re & SEL_IN)) {
			FD_SET(p[i].fd, rs);
			count++;
		}
		if ((ev & POLLOUT) && (re & SEL_OUT)) {
			FD_SET(p[i].fd, ws);
			count++;
		}
		if ((ev & POLLPRI) && (re & SEL_EX)) {
			FD_SET(p[i].fd, es);
			count++;
		}
	}
	r = count;
out:
	/* Linux's select() leaves the time not slept in the timeout; pselect() does not. */
	if (timeout && !pselect && !shim_time_left(timeout, start, timeout))
		*timeout = (struct timespec){ 0, 0 };
	free(p);
	return r;
}

/* ---------------------------------------------------------------------- */
/* epoll */

/* A node in an epoll set, watched through a duplicate of its socket. */
struct epreg {
	int epfd;
	int fd;				/* the app's node fd */
	int dup;			/* ours, registered in its place */
	struct shim_handle *h;		/* a reference */
	uint32_t events;		/* what the app asked for */
	uint64_t data;
};

static pthread_mutex_t ep_lock = PTHREAD_MUTEX_INITIALIZER;
static struct epreg *regs;		/* under ep_lock */
static size_t n_regs_alloc;
static atomic_uint n_regs;

bool
shim_epoll_maybe_ours(void)
{
	return atomic_load_explicit(&n_regs, memory_order_relaxed) != 0;
}

static struct epreg *
reg_find_locked(int epfd, int fd)
{
	unsigned int n = atomic_load(&n_regs);

	for (unsigned int i = 0; i < n; i++)
		if (regs[i].epfd == epfd && regs[i].fd == fd)
			return &regs[i];
	return NULL;
}

static void
reg_remove_locked(struct epreg *r, bool del)
{
	unsigned int n = atomic_load(&n_regs);

	if (del)
		shim_real.epoll_ctl(r->epfd, EPOLL_CTL_DEL, r->dup, NULL);
	shim_real.close(r->dup);
	shim_handle_unref(r->h);
	*r = regs[n - 1];
	atomic_store(&n_regs, n - 1);
}

int
shim_epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	struct shim_handle *h = shim_fd_get(fd);
	struct epoll_event mine;
	struct epreg *reg;
	int r = 0, err = 0;

	if (h && op != EPOLL_CTL_DEL && ev)
		shim_fp_want_poll(h, (short)(ev->events & 0xffff));	/* POLLIN: read() starts */
	if (!h || shim_fp_wait_fd(h) < 0) {
		shim_handle_unref(h);
		return shim_real.epoll_ctl(epfd, op, fd, ev);
	}
	if (op != EPOLL_CTL_DEL) {
		if (!ev) {
			shim_handle_unref(h);
			errno = EFAULT;
			return -1;
		}
		/* The kernel polls the file at EPOLL_CTL_ADD/MOD: vb2 starts file I/O there. */
		shim_fp_read_autostart(h, fd, (short)(ev->events & 0xffff));
		/* Any change wakes us: the rewrite after epoll_wait() filters. */
		mine.events = (ev->events & (EPOLLET | EPOLLONESHOT | EPOLLWAKEUP | EPOLLEXCLUSIVE)) |
			      EPOLLIN;
		mine.data = ev->data;
	}
	pthread_mutex_lock(&ep_lock);
	reg = reg_find_locked(epfd, fd);
	switch (op) {
	case EPOLL_CTL_ADD: {
		int dup;

		if (reg) {
			err = EEXIST;
			break;
		}
		if (atomic_load(&n_regs) == n_regs_alloc) {
			size_t alloc = n_regs_alloc ? 2 * n_regs_alloc : 8;
			struct epreg *p = realloc(regs, alloc * sizeof(*p));

			if (!p) {
				err = ENOMEM;
				break;
			}
			regs = p;
			n_regs_alloc = alloc;
		}
		dup = shim_real.fcntl(shim_fp_wait_fd(h), F_DUPFD_CLOEXEC, 0);
		if (dup < 0) {
			err = errno;
			break;
		}
		if (shim_real.epoll_ctl(epfd, EPOLL_CTL_ADD, dup, &mine) < 0) {
			err = errno;
			shim_real.close(dup);
			break;
		}
		regs[atomic_load(&n_regs)] = (struct epreg){
			.epfd = epfd, .fd = fd, .dup = dup, .h = h, .events = ev->events,
			.data = ev->data.u64,
		};
		h = NULL;		/* the registration holds the reference */
		atomic_fetch_add(&n_regs, 1);
		break;
	}
	case EPOLL_CTL_MOD:
		if (!reg) {
			err = ENOENT;
			break;
		}
		if (shim_real.epoll_ctl(epfd, EPOLL_CTL_MOD, reg->dup, &mine) < 0) {
			err = errno;
			break;
		}
		reg->events = ev->events;
		reg->data = ev->data.u64;
		break;
	case EPOLL_CTL_DEL:
		if (!reg) {
			err = ENOENT;
			break;
		}
		reg_remove_locked(reg, true);
		break;
	default:
		err = EINVAL;
		break;
	}
	pthread_mutex_unlock(&ep_lock);
	shim_handle_unref(h);
	if (err) {
		errno = err;
		r = -1;
	}
	return r;
}

int
shim_epoll_fix(int epfd, struct epoll_event *ev, int n)
{
	int out = 0;

	pthread_mutex_lock(&ep_lock);
	for (int i = 0; i < n; i++) {
		unsigned int k, nr = atomic_load(&n_regs);
		struct epreg *reg = NULL;
		short events, m;

		for (k = 0; k < nr; k++) {
			if (regs[k].epfd == epfd && regs[k].data == ev[i].data.u64) {
				reg = &regs[k];
				break;
			}
		}
		if (!reg) {
			ev[out++] = ev[i];
			continue;
		}
		events = (short)(reg->events & 0xffff);
		shim_fp_read_autostart(reg->h, reg->fd, events);
		if (ev[i].events & (EPOLLHUP | EPOLLERR))
			shim_fp_woken(reg->h, POLLHUP);
		if (!fp_revents(reg->h, events, &m)) {
			/* Not streaming through the fast path: the node's own answer. */
			m = node_revents(reg->fd, events);
			if (!(m & (events | POLLERR | POLLHUP))) {
				shim_fp_woken(reg->h, 0);
				m = node_revents(reg->fd, events);
			}
			m &= events | POLLERR | POLLHUP;
		}
		if (!m)
			continue;
		ev[out].events = (uint32_t)(unsigned short)m;
		ev[out].data = ev[i].data;
		out++;
	}
	pthread_mutex_unlock(&ep_lock);
	return out;
}

void
shim_epoll_forget_fd(int fd)
{
	if (!shim_epoll_maybe_ours())
		return;
	pthread_mutex_lock(&ep_lock);
	for (unsigned int i = 0; i < atomic_load(&n_regs);) {
		struct epreg *r = &regs[i];

		if (r->fd == fd)
			reg_remove_locked(r, true);	/* the set outlives the node's fd */
		else if (r->epfd == fd)
			reg_remove_locked(r, false);	/* the set goes with its fd */
		else
			i++;
	}
	pthread_mutex_unlock(&ep_lock);
}

void
shim_epoll_forget_child(void)
{
	/*
	 * The sets are shared with the parent, whose registrations they are:
	 * only our duplicates close (the registrations stay with the files).
	 */
	pthread_mutex_init(&ep_lock, NULL);
	while (atomic_load(&n_regs))
		reg_remove_locked(&regs[0], false);
}
