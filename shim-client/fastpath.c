/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The fast path, the shim's side (docs/shim.md, "The fast path"; the
 * layout and its rules are in include/v4l2cuse/shim-protocol.h): QBUF,
 * DQBUF and poll readiness of a streaming handle from the handle's
 * shared-memory queue, so a streamed frame costs no CUSE request.
 *
 * The rule that keeps it exact: answer here only what the published state
 * answers for certain; everything else goes through CUSE, which is the
 * reference, and the daemon takes our submissions before any CUSE request
 * of the handle, so it sees them in the app's order.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/videodev2.h>

#include "shim-client.h"

void (*shim_fp_test_hook)(struct shim_fp *fp, enum shim_fp_point point);

static inline void
fp_test_hook(struct shim_fp *fp, enum shim_fp_point point)
{
	if (__builtin_expect(shim_fp_test_hook != NULL, 0))
		shim_fp_test_hook(fp, point);
}

bool
shim_fp_enabled(void)
{
	const char *v = secure_getenv("V4L2CUSE_FASTPATH");

	return !v || strcmp(v, "0") != 0;
}

/* ---------------------------------------------------------------------- */
/* Setup */

bool shim_fp_auto;

void
shim_fp_want(struct shim_handle *h)
{
	if (shim_fp_auto && !__atomic_load_n(&h->fp_asked, __ATOMIC_ACQUIRE))
		shim_fp_setup(h);
}

void
shim_fp_want_ioctl(struct shim_handle *h, unsigned long request, const void *arg)
{
	uint32_t count, memory;

	if (!arg)
		return;
	if (request == VIDIOC_REQBUFS) {
		const struct v4l2_requestbuffers *rb = arg;

		count = rb->count;
		memory = rb->memory;
	} else if (request == VIDIOC_CREATE_BUFS) {
		const struct v4l2_create_buffers *cb = arg;

		count = cb->count;
		memory = cb->memory;
	} else {
		return;
	}
	/* REQBUFS(0) and CREATE_BUFS(0) are how apps probe the capabilities. */
	if (count > 0 && (memory == V4L2_MEMORY_MMAP || memory == V4L2_MEMORY_USERPTR))
		shim_fp_want(h);
}

void
shim_fp_want_poll(struct shim_handle *h, short events)
{
	if (events & (POLLIN | POLLRDNORM))
		shim_fp_want(h);
}

static void fp_setup_locked(struct shim_handle *h);

/* Once per handle: later calls (another thread's too) find it asked. */
void
shim_fp_setup(struct shim_handle *h)
{
	pthread_mutex_lock(&h->io);
	if (!h->fp_asked)
		fp_setup_locked(h);
	__atomic_store_n(&h->fp_asked, true, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&h->io);
}

static void
fp_setup_locked(struct shim_handle *h)
{
	struct v4l2cuse_shim_request req = { .type = V4L2CUSE_SHIM_FASTPATH };
	struct v4l2cuse_shim_reply rep;
	struct shim_fp *fp;
	int fds[SHIM_MAX_REPLY_FDS], r, flags;
	struct stat st;
	void *mem;

	req.fastpath.version = V4L2CUSE_FP_VERSION;
	r = shim_request_fds_locked(h, &req, &rep, fds, SHIM_MAX_REPLY_FDS);
	if (r < 0 || rep.status < 0 || fds[0] < 0 || fds[1] < 0) {
		shim_debug("no fast path: %s", strerror(r < 0 ? -r : rep.status < 0 ? -rep.status
										: EPROTO));
		goto err_close;
	}
	if (fstat(fds[0], &st) < 0 || (uint64_t)st.st_size != rep.length ||
	    rep.length < sizeof(struct v4l2cuse_fp_shared)) {
		shim_debug("no fast path: unexpected memfd");
		goto err_close;
	}
	mem = shim_real.mmap(NULL, rep.length, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
	if (mem == MAP_FAILED)
		goto err_close;
	fp = calloc(1, sizeof(*fp));
	if (!fp) {
		shim_real.munmap(mem, rep.length);
		goto err_close;
	}
	fp->sh = mem;
	fp->size = rep.length;
	if (fp->sh->magic != V4L2CUSE_FP_MAGIC || fp->sh->version != V4L2CUSE_FP_VERSION) {
		shim_debug("no fast path: layout %#x/%u", fp->sh->magic, fp->sh->version);
		shim_real.munmap(mem, rep.length);
		free(fp);
		goto err_close;
	}
	fp->sock = fds[1];
	/*
	 * Blocking, so that fp_wait() can wait in recv() (every other use of
	 * it says MSG_DONTWAIT): a signal handler with SA_RESTART then
	 * restarts the wait as the kernel restarts the ioctl or read() it
	 * interrupts.
	 */
	flags = shim_real.fcntl(fp->sock, F_GETFL);
	if (flags < 0 || shim_real.fcntl(fp->sock, F_SETFL, flags & ~O_NONBLOCK) < 0) {
		shim_debug("no fast path: socket flags: %s", strerror(errno));
		shim_real.munmap(mem, rep.length);
		free(fp);
		goto err_close;
	}
	pthread_mutex_init(&fp->lock, NULL);
	pthread_mutex_init(&fp->rd.lock, NULL);
	pthread_mutex_init(&fp->wr.lock, NULL);
	shim_real.close(fds[0]);
	__atomic_store_n(&h->fp, fp, __ATOMIC_RELEASE);	/* other threads read it unlocked */
	shim_debug("fast path: %zu bytes, socket %d", fp->size, fp->sock);
	return;

err_close:
	for (int i = 0; i < SHIM_MAX_REPLY_FDS; i++)
		if (fds[i] >= 0)
			shim_real.close(fds[i]);
}

void
shim_fp_free(struct shim_fp *fp)
{
	if (!fp)
		return;
	shim_fp_read_free(fp);
	shim_fp_write_free(fp);
	shim_real.munmap(fp->sh, fp->size);
	shim_real.close(fp->sock);
	pthread_mutex_destroy(&fp->lock);
	pthread_mutex_destroy(&fp->rd.lock);
	pthread_mutex_destroy(&fp->wr.lock);
	free(fp);
}

void
shim_fp_forget_child(struct shim_handle *h)
{
	shim_fp_free(h->fp);
	h->fp = NULL;
	h->fp_asked = true;	/* the connection is the parent's: never ask on it */
}

/* ---------------------------------------------------------------------- */
/* The shared state */

/* The state under its sequence lock; false if the daemon never finished a write. */
bool
shim_fp_state(struct shim_fp *fp, struct v4l2cuse_fp_state *st)
{
	const struct v4l2cuse_fp_state *s = &fp->sh->state;

	for (int tries = 0; tries < 10000; tries++) {
		uint32_t seq = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);

		if (seq & 1) {
			sched_yield();	/* the daemon is writing it (or was preempted doing so) */
			continue;
		}
		st->flags = __atomic_load_n(&s->flags, __ATOMIC_RELAXED);
		st->epoch = __atomic_load_n(&s->epoch, __ATOMIC_RELAXED);
		st->type = __atomic_load_n(&s->type, __ATOMIC_RELAXED);
		st->memory = __atomic_load_n(&s->memory, __ATOMIC_RELAXED);
		st->n_buffers = __atomic_load_n(&s->n_buffers, __ATOMIC_RELAXED);
		st->n_queued = __atomic_load_n(&s->n_queued, __ATOMIC_RELAXED);
		st->sub_tail = __atomic_load_n(&s->sub_tail, __ATOMIC_RELAXED);
		st->qbufs_taken = __atomic_load_n(&s->qbufs_taken, __ATOMIC_RELAXED);
		st->acks_taken = __atomic_load_n(&s->acks_taken, __ATOMIC_RELAXED);
		st->read_buffers = __atomic_load_n(&s->read_buffers, __ATOMIC_RELAXED);
		st->write_buffers = __atomic_load_n(&s->write_buffers, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&s->seq, __ATOMIC_RELAXED) == seq) {
			st->seq = seq;		/* which version: fp_settle_locked() compares */
			return true;
		}
	}
	return false;
}

/* The handle streams through the fast path: the state to answer from. */
static bool
fp_active(struct shim_fp *fp, struct v4l2cuse_fp_state *st)
{
	return fp && !fp->dead && shim_fp_state(fp, st) && (st->flags & V4L2CUSE_FP_ACTIVE);
}

/*
 * Skip completions of an older epoch than @epoch (STREAMOFF, REQBUFS and
 * the like voided them): 1 if one of @epoch is waiting, 0 if none, -1 if
 * the oldest is of a newer epoch. The daemon writes a new epoch's
 * completions before the state that names it, so a state read a moment
 * earlier can be older than the ring: those completions are the next
 * state's, never void (issue 28, item 3). Epochs compare as serial
 * numbers. fp->lock held.
 */
static int
fp_pending_locked(struct shim_fp *fp, uint32_t epoch)
{
	uint32_t head = __atomic_load_n(&fp->sh->done_head, __ATOMIC_ACQUIRE);
	int32_t age = 0;

	if (head - fp->done_tail > V4L2CUSE_FP_DONE_RING)
		fp->done_tail = head - V4L2CUSE_FP_DONE_RING;	/* never: the daemon waits */
	while (fp->done_tail != head &&
	       (age = (int32_t)(fp->sh->done[fp->done_tail % V4L2CUSE_FP_DONE_RING].epoch -
				epoch)) < 0)
		fp->done_tail++;
	__atomic_store_n(&fp->sh->done_tail, fp->done_tail, __ATOMIC_RELEASE);
	if (fp->done_tail == head)
		return 0;
	return age == 0 ? 1 : -1;
}

static void
fp_kick(struct shim_fp *fp)
{
	/* Full means a kick is already pending; MSG_NOSIGNAL: the daemon may be gone. */
	(void)!send(fp->sock, "", 1, MSG_DONTWAIT | MSG_NOSIGNAL);
}

/* Room for one submission? fp->lock held. */
static struct v4l2cuse_fp_sub *
fp_sub_slot_locked(struct shim_fp *fp, const struct v4l2cuse_fp_state *st)
{
	if (fp->sub_head - st->sub_tail >= V4L2CUSE_FP_SUB_RING)
		return NULL;
	return &fp->sh->sub[fp->sub_head % V4L2CUSE_FP_SUB_RING];
}

static void
fp_sub_post_locked(struct shim_fp *fp)
{
	fp->sub_head++;
	__atomic_store_n(&fp->sh->sub_head, fp->sub_head, __ATOMIC_RELEASE);
}

/*
 * The wake-up socket carries a byte per change; once the app has taken
 * what it wants of @st (read with the completions up to @head_seen), read
 * them all, and if something new arrived meanwhile (whose byte we just
 * read), ask the daemon to wake us again: a poll() or epoll on the socket,
 * and a blocking DQBUF about to wait, must see it. New is any state
 * published since @st (a change of the flags alone: the error state,
 * issue 28, item 2) and any completion after @head_seen; not a completion
 * or an event that was there already and that the waiter does not want
 * (a poll() for POLLIN while an event is pending, for POLLPRI while frames
 * are), which would otherwise have the daemon answer kick after kick, as
 * fast as both can. fp->lock held.
 */
static void
fp_settle_locked(struct shim_fp *fp, const struct v4l2cuse_fp_state *st, uint32_t head_seen)
{
	char buf[256];
	struct v4l2cuse_fp_state now;

	fp_test_hook(fp, SHIM_FP_SETTLE);
	while (recv(fp->sock, buf, sizeof(buf), MSG_DONTWAIT) == (ssize_t)sizeof(buf))
		;
	if (!shim_fp_state(fp, &now))
		return;
	if (now.seq != st->seq ||
	    (__atomic_load_n(&fp->sh->done_head, __ATOMIC_ACQUIRE) != head_seen &&
	     fp_pending_locked(fp, now.epoch) != 0))
		fp_kick(fp);
}

/* ---------------------------------------------------------------------- */
/* QBUF, DQBUF */

bool
shim_fp_qbuf(struct shim_handle *h, struct v4l2_buffer *b, int *ret)
{
	struct shim_fp *fp = shim_fp_of(h);
	struct v4l2cuse_fp_state st;
	struct v4l2cuse_fp_sub *e;
	bool output;
	unsigned int i = b->index;

	if (!fp_active(fp, &st) || b->type != st.type || b->memory != st.memory ||
	    i >= st.n_buffers || i >= SHIM_MAX_BUFFERS)
		return false;
	output = st.flags & V4L2CUSE_FP_OUTPUT;
	pthread_mutex_lock(&fp->lock);
	/* Only a buffer we dequeued in this epoch: its state is known to be ours. */
	if (!fp->bufs[i].owned || fp->bufs[i].epoch != st.epoch)
		goto out_cuse;
	/* vb2's checks that could refuse it: CUSE gives the errno. */
	if (st.memory == V4L2_MEMORY_USERPTR &&
	    (b->m.userptr == 0 || b->length < fp->bufs[i].length))
		goto out_cuse;
	if (output && b->bytesused > fp->bufs[i].length)
		goto out_cuse;
	e = fp_sub_slot_locked(fp, &st);
	if (!e)
		goto out_cuse;		/* full: CUSE takes the ring first */
	*e = (struct v4l2cuse_fp_sub){
		.op = V4L2CUSE_FP_QBUF,
		.index = i,
		.serial = st.epoch,	/* a refusal in this epoch comes back as ERROR */
		.userptr = b->m.userptr,
		.length = b->length,
		.bytesused = b->bytesused,
	};
	fp_test_hook(fp, SHIM_FP_QBUF_POST);
	fp_sub_post_locked(fp);
	fp->qbufs_posted++;
	fp->bufs[i].owned = false;
	{
		struct v4l2_buffer arg = *b;

		*b = fp->bufs[i].requeue;
		if (st.memory == V4L2_MEMORY_USERPTR) {
			b->m.userptr = arg.m.userptr;
			b->length = arg.length;
		}
		if (output)
			b->bytesused = arg.bytesused ? arg.bytesused : fp->bufs[i].length;
	}
	/* Unless the producer takes it at its next frame, tell the daemon now. */
	if (!(st.flags & V4L2CUSE_FP_TICKED))
		fp_kick(fp);
	pthread_mutex_unlock(&fp->lock);
	*ret = 0;
	return true;

out_cuse:
	pthread_mutex_unlock(&fp->lock);
	return false;
}

bool
shim_fp_adopt(struct shim_handle *h, uint32_t type, uint32_t index, uint32_t length)
{
	struct shim_fp *fp = shim_fp_of(h);
	struct v4l2cuse_fp_state st;

	if (!fp_active(fp, &st) || type != st.type || st.memory != V4L2_MEMORY_MMAP ||
	    index >= st.n_buffers || index >= SHIM_MAX_BUFFERS)
		return false;
	pthread_mutex_lock(&fp->lock);
	fp->bufs[index].owned = true;
	fp->bufs[index].epoch = st.epoch;
	fp->bufs[index].length = length;
	/* What its QBUF answers: only the emulations queue it, and look at the errno alone. */
	fp->bufs[index].requeue = (struct v4l2_buffer){
		.index = index, .type = type, .memory = V4L2_MEMORY_MMAP,
		.flags = V4L2_BUF_FLAG_QUEUED, .length = length,
	};
	pthread_mutex_unlock(&fp->lock);
	return true;
}

/*
 * Take the oldest completion: 1, 0 if none, -1 if it cannot be
 * acknowledged, -EAGAIN if @st is older than the ring (read it again).
 */
static int
fp_pop_locked(struct shim_fp *fp, const struct v4l2cuse_fp_state *st, struct v4l2_buffer *b)
{
	struct v4l2cuse_fp_done d;
	struct v4l2cuse_fp_sub *e;
	int r;

	r = fp_pending_locked(fp, st->epoch);
	if (r <= 0)
		return r == 0 ? 0 : -EAGAIN;
	e = fp_sub_slot_locked(fp, st);
	if (!e)
		return -1;
	memcpy(&d, &fp->sh->done[fp->done_tail % V4L2CUSE_FP_DONE_RING], sizeof(d));
	if (d.index >= SHIM_MAX_BUFFERS)
		return -1;
	*e = (struct v4l2cuse_fp_sub){ .op = V4L2CUSE_FP_ACK, .index = d.index,
				       .serial = d.serial };
	fp_sub_post_locked(fp);
	fp->acks_posted++;
	fp->done_tail++;
	__atomic_store_n(&fp->sh->done_tail, fp->done_tail, __ATOMIC_RELEASE);
	fp->bufs[d.index].owned = true;
	fp->bufs[d.index].epoch = d.epoch;
	fp->bufs[d.index].length = d.length;
	fp->bufs[d.index].requeue = d.requeue;
	*b = d.dq;
	return 1;
}

/*
 * Wait for the daemon's next wake-up (the byte stays for fp_settle_locked()
 * to take): 0, -EINTR, -EPIPE if the daemon is gone, or another -errno.
 * A signal handler ends the wait with EINTR as it ends vb2's, unless it
 * has SA_RESTART: the kernel restarts a recv() without a timeout on that
 * rule, as it restarts vb2's DQBUF or read().
 */
static int
fp_wait(struct shim_fp *fp)
{
	char byte;
	ssize_t n = recv(fp->sock, &byte, 1, MSG_PEEK);

	if (n > 0)
		return 0;
	if (n < 0 && errno == EINTR)
		return -EINTR;
	fp->dead = true;		/* gone, or the socket is unusable: CUSE from now on */
	return n < 0 && errno != ECONNRESET ? -errno : -EPIPE;
}

enum shim_fp_dq
shim_fp_dqbuf_try(struct shim_handle *h, int fd, struct v4l2_buffer *b, int *ret, bool woken)
{
	struct shim_fp *fp = shim_fp_of(h);
	struct v4l2cuse_fp_state st;
	struct v4l2_buffer out;
	int r, flags;

	for (unsigned int stale = 0;; stale++) {
		if (!fp_active(fp, &st) || b->type != st.type)
			return SHIM_FP_DQ_CUSE;	/* not streaming through it, or an error */
		fp_test_hook(fp, SHIM_FP_STATE_READ);
		pthread_mutex_lock(&fp->lock);
		r = fp_pop_locked(fp, &st, &out);
		if (r == -EAGAIN && stale < 1000) {
			/* The daemon is writing the state of the ring's new epoch. */
			pthread_mutex_unlock(&fp->lock);
			sched_yield();
			continue;
		}
		if (r == -EAGAIN)
			r = 0;			/* its byte comes: wait for it */
		break;
	}
	/*
	 * The wake-ups are taken once the app has what there is; a wake-up
	 * that brought no completion (a state change, an event) is taken
	 * before waiting again, or the wait would end at once.
	 */
	if ((r > 0 && fp_pending_locked(fp, st.epoch) == 0) || (r == 0 && woken))
		fp_settle_locked(fp, &st, fp->done_tail);	/* nothing left */
	pthread_mutex_unlock(&fp->lock);
	if (r < 0)
		return SHIM_FP_DQ_CUSE;		/* the ring is full: CUSE takes it first */
	if (r > 0) {
		*b = out;
		*ret = 0;
		return SHIM_FP_DQ_DONE;
	}
	/* The file's flags now: fcntl(F_SETFL) counts, as for the kernel. */
	flags = shim_real.fcntl(fd, F_GETFL);
	if (flags >= 0 && (flags & O_NONBLOCK)) {
		pthread_mutex_lock(&fp->lock);
		fp_settle_locked(fp, &st, fp->done_tail);	/* r == 0: nothing left */
		pthread_mutex_unlock(&fp->lock);
		*ret = -EAGAIN;
		return SHIM_FP_DQ_DONE;
	}
	return SHIM_FP_DQ_WAIT;
}

int
shim_fp_file_fd(const struct shim_fp_file *f)
{
	return f->pin >= 0 ? f->pin : f->fd;
}

void
shim_fp_file_pin(struct shim_fp_file *f)
{
	/*
	 * The kernel holds the file through a syscall: another thread's
	 * close() of the fd neither releases it nor makes the call go on
	 * with whatever file the number names next. A duplicate does the
	 * same for a call that waits here (EMFILE: the number, as before).
	 */
	if (f->pin < 0)
		f->pin = shim_real.fcntl(f->fd, F_DUPFD_CLOEXEC, 0);
}

void
shim_fp_file_unpin(struct shim_fp_file *f)
{
	int saved = errno;

	if (f->pin >= 0)
		shim_real.close(f->pin);
	f->pin = -1;
	errno = saved;
}

int
shim_fp_wait(struct shim_handle *h)
{
	fp_test_hook(shim_fp_of(h), SHIM_FP_WAIT);
	return fp_wait(shim_fp_of(h));
}

bool
shim_fp_dqbuf(struct shim_handle *h, int fd, struct v4l2_buffer *b, int *ret)
{
	struct shim_fp_file file = { fd, -1 };
	bool woken = false;
	int r;

	for (;;) {
		switch (shim_fp_dqbuf_try(h, shim_fp_file_fd(&file), b, ret, woken)) {
		case SHIM_FP_DQ_DONE:
			shim_fp_file_unpin(&file);
			return true;
		case SHIM_FP_DQ_CUSE:
			if (file.pin < 0)
				return false;	/* the caller's fd is the file it asked about */
			/* It waited: the file it began on answers (issue 28, item 7). */
			*ret = shim_real.ioctl(file.pin, VIDIOC_DQBUF, b) < 0 ? -errno : 0;
			shim_fp_file_unpin(&file);
			return true;
		case SHIM_FP_DQ_WAIT:
			break;
		}
		shim_fp_file_pin(&file);
		r = shim_fp_wait(h);
		if (r == -EINTR) {
			*ret = -EINTR;
			shim_fp_file_unpin(&file);
			return true;
		}
		/* Woken, or the daemon is gone: then the next try says CUSE, which answers. */
		woken = true;
	}
}

/* ---------------------------------------------------------------------- */
/* Readiness */

bool
shim_fp_poll(struct shim_handle *h, short events, short *ret_revents)
{
	struct shim_fp *fp = shim_fp_of(h);
	struct v4l2cuse_fp_state st;
	short mask = 0;
	bool pending;

	if (!fp_active(fp, &st))
		return false;
	pthread_mutex_lock(&fp->lock);
	/* A completion of a newer epoch: the state is a moment old, the frame is there. */
	pending = fp_pending_locked(fp, st.epoch) != 0;
	if (__atomic_load_n(&fp->wr.active, __ATOMIC_ACQUIRE)) {
		/* write() emulation: as the node answers a writer that does not stream. */
		mask = events & (POLLOUT | POLLWRNORM);
	} else if (st.flags & V4L2CUSE_FP_OUTPUT) {
		/* vb2: a buffer is free to fill (not queued), or one is done. */
		uint32_t queued = st.n_queued + (fp->qbufs_posted - st.qbufs_taken) -
				  (fp->acks_posted - st.acks_taken);

		if (!(events & (POLLOUT | POLLWRNORM)))
			mask = 0;
		else if (st.flags & V4L2CUSE_FP_POLLERR)
			mask = POLLERR;
		else if (pending || queued < st.n_buffers)
			mask = POLLOUT | POLLWRNORM;
	} else if (events & (POLLIN | POLLRDNORM)) {
		if (st.flags & V4L2CUSE_FP_POLLERR)
			mask = POLLERR;
		else if (pending || __atomic_load_n(&fp->rd.partial, __ATOMIC_ACQUIRE))
			mask = POLLIN | POLLRDNORM;	/* read(): the rest of a frame, too */
	}
	pthread_mutex_unlock(&fp->lock);
	if (st.flags & V4L2CUSE_FP_EVENTS)
		mask |= POLLPRI;
	*ret_revents = mask;
	return true;
}

int
shim_fp_wait_fd(struct shim_handle *h)
{
	return shim_fp_of(h) ? shim_fp_of(h)->sock : -1;
}

void
shim_fp_woken(struct shim_handle *h, short revents)
{
	struct shim_fp *fp = shim_fp_of(h);
	struct v4l2cuse_fp_state st;

	if (!fp)
		return;
	if (revents & (POLLHUP | POLLERR | POLLNVAL)) {
		fp->dead = true;
		return;
	}
	if (!shim_fp_state(fp, &st))
		return;
	pthread_mutex_lock(&fp->lock);
	fp_settle_locked(fp, &st, __atomic_load_n(&fp->sh->done_head, __ATOMIC_ACQUIRE));
	pthread_mutex_unlock(&fp->lock);
}

/* ---------------------------------------------------------------------- */
/* The emulations' own buffers (fpread.c, fpwrite.c) */

int
shim_cuse_ioctl(int fd, unsigned long request, void *arg)
{
	return shim_real.ioctl(fd, request, arg) < 0 ? -errno : 0;
}

bool
shim_range_mapped(const void *p, size_t len)
{
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t start = (uintptr_t)p & ~((uintptr_t)page - 1);

	if ((uintptr_t)p + len < (uintptr_t)p)
		return false;
	return msync((void *)start, (uintptr_t)p + len - start, MS_ASYNC) == 0;
}

int
shim_fp_map_internal(struct shim_handle *h, int fd, uint32_t type, unsigned int index, int prot,
		     void **ret_mem, size_t *ret_len, uint64_t *ret_map_id)
{
	struct v4l2_buffer b = { .index = index, .type = type, .memory = V4L2_MEMORY_MMAP };
	struct v4l2cuse_shim_request req = { .type = V4L2CUSE_SHIM_MAP };
	struct v4l2cuse_shim_reply rep;
	int memfd = -1, r;
	void *p;

	r = shim_cuse_ioctl(fd, VIDIOC_QUERYBUF, &b);
	if (r < 0)
		return r;
	if (b.length == 0)
		return -EINVAL;
	req.map.offset = b.m.offset;
	req.map.length = b.length;
	r = shim_request(h, &req, &rep, &memfd);
	if (r < 0)
		return r;
	if (rep.status < 0 || memfd < 0) {
		if (memfd >= 0)
			shim_real.close(memfd);
		return rep.status < 0 ? rep.status : -EIO;
	}
	p = shim_real.mmap(NULL, b.length, prot, MAP_SHARED, memfd, 0);
	r = p == MAP_FAILED ? -errno : 0;
	shim_real.close(memfd);
	if (r < 0) {
		shim_fp_unmap_internal(h, NULL, 0, rep.map_id);
		return r;
	}
	*ret_mem = p;
	*ret_len = b.length;
	*ret_map_id = rep.map_id;
	return 0;
}

void
shim_fp_unmap_internal(struct shim_handle *tell, void *mem, size_t len, uint64_t map_id)
{
	if (mem)
		shim_real.munmap(mem, len);
	if (tell && tell->sock >= 0) {
		struct v4l2cuse_shim_request req = { .type = V4L2CUSE_SHIM_UNMAP };
		struct v4l2cuse_shim_reply rep;
		int memfd = -1;

		req.unmap.map_id = map_id;
		if (shim_request(tell, &req, &rep, &memfd) == 0 && memfd >= 0)
			shim_real.close(memfd);
	}
}
