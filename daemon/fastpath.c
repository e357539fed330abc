/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The preload shim's fast path, the daemon's side (docs/shim.md, "The fast
 * path"; the layout is include/v4l2cuse/shim-protocol.h): a handle's
 * shared-memory queue, so that a streaming app's QBUF, DQBUF and poll()
 * cost no CUSE request.
 *
 * - Completions: every done buffer of a handle that streams is published
 *   (vb_queue_peek_done()) before the app asks for it; its DQBUF comes back
 *   as an ACK, which dequeues it here (vb_queue_dqbuf_serial()), so the
 *   queue's state is exact whenever a CUSE request of the handle is served.
 * - Submissions (QBUF, ACK) are taken before every CUSE request of the
 *   handle (dev_request_begin()), at every frame while the queue is started
 *   (the producer), and when the client writes to the socket.
 * - Everything in the shared memory but our own output is hostile: a
 *   submission is only ever applied to the handle's own queue, through the
 *   same vb_queue_qbuf() a CUSE QBUF takes; indices are the ring's, read
 *   once; a ring that makes no sense ends the fast path of that handle
 *   (it goes on through CUSE). We never block on the client: the memfd is
 *   sealed against shrinking, and the socket is written with MSG_DONTWAIT.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <glib.h>
#include <glib-unix.h>

#include "v4l2cuse/shim-protocol.h"
#include "util/fd-watch.h"
#include "util/macros.h"
#include "videobuf.h"
#include "device-private.h"

/*
 * What we publish (buffer indices, n_buffers, read_buffers, write_buffers)
 * must fit the protocol's buffer limit, which sizes the clients'
 * per-buffer tables; with it, the completion ring holds a voided epoch and
 * a full current one of our queues (the protocol header checks the ring
 * against the limit).
 */
_Static_assert(VB_MAX_BUFFERS <= V4L2CUSE_SHIM_MAX_BUFFERS,
	       "a queue has more buffers than the shim protocol carries");

struct dev_fp {
	struct v4l2cuse_fh *fh;
	struct v4l2cuse_fp_shared *sh;	/* our mapping of the memfd */
	size_t size;
	int sock;			/* our end of the socketpair */
	guint watch;			/* kicks, and the client's hang-up */
	/* Our own view: nothing here is ever read back from the shared memory. */
	uint32_t done_head;		/* completions published */
	uint32_t sub_tail;		/* submissions taken */
	uint32_t qbufs_taken, acks_taken;
	uint32_t epoch;			/* of the completions we publish */
	uint64_t published;		/* serial of the newest completion published */
	struct vb_queue *q;		/* the queue the epoch belongs to */
	unsigned int vb_epoch;		/* and that queue's stream epoch */
	struct v4l2cuse_fp_state state;	/* as last published */
	bool broken;
};

/* ---------------------------------------------------------------------- */
/* Publishing */

static void
dev_fp_signal(struct dev_fp *fp)
{
	/* Full (the client does not read) or gone: either way, nothing to do. */
	(void)!send(fp->sock, "", 1, MSG_DONTWAIT | MSG_NOSIGNAL);
}

/* The state block, under its sequence lock (the shim retries on odd or changed). */
static void
dev_fp_write_state(struct dev_fp *fp, const struct v4l2cuse_fp_state *st)
{
	struct v4l2cuse_fp_state *out = &fp->sh->state;
	uint32_t seq = fp->state.seq;

	__atomic_store_n(&out->seq, seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&out->flags, st->flags, __ATOMIC_RELAXED);
	__atomic_store_n(&out->epoch, st->epoch, __ATOMIC_RELAXED);
	__atomic_store_n(&out->type, st->type, __ATOMIC_RELAXED);
	__atomic_store_n(&out->memory, st->memory, __ATOMIC_RELAXED);
	__atomic_store_n(&out->n_buffers, st->n_buffers, __ATOMIC_RELAXED);
	__atomic_store_n(&out->n_queued, st->n_queued, __ATOMIC_RELAXED);
	__atomic_store_n(&out->sub_tail, st->sub_tail, __ATOMIC_RELAXED);
	__atomic_store_n(&out->qbufs_taken, st->qbufs_taken, __ATOMIC_RELAXED);
	__atomic_store_n(&out->acks_taken, st->acks_taken, __ATOMIC_RELAXED);
	__atomic_store_n(&out->read_buffers, st->read_buffers, __ATOMIC_RELAXED);
	__atomic_store_n(&out->write_buffers, st->write_buffers, __ATOMIC_RELAXED);
	__atomic_store_n(&out->seq, seq + 2, __ATOMIC_RELEASE);
	fp->state = *st;
	fp->state.seq = seq + 2;
}

/*
 * Publish what changed for @fh: new completions and the state. The client
 * is woken when anything changed, or with @force (it asked to be: it may
 * have consumed a wake-up meant for something it has not seen yet).
 */
static void
dev_fp_publish_full(struct v4l2cuse_fh *fh, bool force)
{
	struct dev_fp *fp = fh->fp;
	struct vb_queue *q = fh->dq->q;
	struct vb_queue_snapshot snap;
	struct v4l2cuse_fp_state st = { 0 };
	uint32_t tail, n_new = 0;
	bool active;

	vb_queue_snapshot(q, fh, &snap);
	if (q != fp->q || snap.epoch != fp->vb_epoch) {
		/* Cancelled, freed or replaced: what was published is void. */
		if (q != fp->q)
			fp->published = 0;	/* serials are the queue's */
		fp->q = q;
		fp->vb_epoch = snap.epoch;
		fp->epoch++;
	}
	active = !fp->broken && snap.owned && snap.streaming && !snap.error &&
		 (snap.memory == V4L2_MEMORY_MMAP || snap.memory == V4L2_MEMORY_USERPTR);
	/* The client's tail is hostile: a wrong one only loses its own completions. */
	tail = __atomic_load_n(&fp->sh->done_tail, __ATOMIC_ACQUIRE);
	while (active && fp->done_head - tail < V4L2CUSE_FP_DONE_RING) {
		struct v4l2cuse_fp_done *d = &fp->sh->done[fp->done_head % V4L2CUSE_FP_DONE_RING];
		struct v4l2_buffer dq, requeue;
		uint64_t serial;
		uint32_t length;

		if (vb_queue_peek_done(q, fh, fp->published, &dq, &requeue, &serial, &length) < 0)
			break;
		d->epoch = fp->epoch;
		d->index = dq.index;
		d->serial = serial;
		d->length = length;
		d->dq = dq;
		d->requeue = requeue;
		fp->published = serial;
		fp->done_head++;
		n_new++;
	}
	if (n_new)
		__atomic_store_n(&fp->sh->done_head, fp->done_head, __ATOMIC_RELEASE);

	st.flags = (active ? V4L2CUSE_FP_ACTIVE : 0) |
		   (snap.poll & POLLERR ? V4L2CUSE_FP_POLLERR : 0) |
		   (g_queue_is_empty(&fh->events) ? 0 : V4L2CUSE_FP_EVENTS) |
		   (fp->broken ? V4L2CUSE_FP_BROKEN : 0);
	if (fh->dev->output)
		st.flags |= V4L2CUSE_FP_OUTPUT;
	else if (active && fh->dq->started)
		st.flags |= V4L2CUSE_FP_TICKED;	/* dev_produce_one() takes submissions */
	st.epoch = fp->epoch;
	st.type = snap.type;
	st.memory = snap.memory;
	st.n_buffers = snap.n_buffers;
	st.n_queued = snap.n_queued;
	st.sub_tail = fp->sub_tail;
	st.qbufs_taken = fp->qbufs_taken;
	st.acks_taken = fp->acks_taken;
	st.read_buffers = snap.read_buffers;	/* the shim's read() emulation */
	/* Its write() emulation: as many buffers as the device's read() would use (3). */
	if (fh->dev->output)
		st.write_buffers = MIN(fh->dev->qc.read_buffers, (unsigned int)VB_MAX_BUFFERS);
	st.seq = fp->state.seq;
	if (memcmp(&st, &fp->state, sizeof(st)) != 0)
		dev_fp_write_state(fp, &st);
	else if (!n_new && !force)
		return;
	dev_fp_signal(fp);
}

void
dev_fp_publish(struct v4l2cuse_fh *fh)
{
	if (fh->fp)
		dev_fp_publish_full(fh, false);
}

void
dev_fp_void(struct v4l2cuse_fh *fh)
{
	struct dev_fp *fp = fh->fp;

	if (!fp)
		return;
	/* Done buffers left the done list behind the client's back: publish anew. */
	fp->epoch++;
	fp->published = 0;
}

/* ---------------------------------------------------------------------- */
/* Submissions */

static void
dev_fp_break(struct dev_fp *fp, const char *why)
{
	fp->broken = true;
	g_message("%s: pid %d corrupted its fast-path queue (%s); the handle goes on "
		  "through CUSE", fp->fh->dev->name, (int)fp->fh->pid, why);
}

/* One submission, copied out of the shared memory already. */
static int
dev_fp_apply(struct dev_fp *fp, const struct v4l2cuse_fp_sub *e, uint32_t memory)
{
	struct v4l2cuse_fh *fh = fp->fh;
	struct vb_queue *q = fh->dq->q;
	int r;

	switch (e->op) {
	case V4L2CUSE_FP_QBUF: {
		/* What a CUSE QBUF of the handle would do, with its checks. */
		struct v4l2_buffer b = {
			.index = e->index,
			.type = vb_queue_type(q),
			.memory = memory,
			.length = e->length,
			.bytesused = e->bytesused,
		};

		b.m.userptr = (unsigned long)e->userptr;
		fp->qbufs_taken++;
		r = vb_queue_qbuf(q, fh, &b);
		if (r == 0)
			return 0;
		/*
		 * The app was told it is queued (the shim answered from the
		 * state of @e->serial's epoch): in that epoch it gets the
		 * buffer back as ERROR, as vb2 can only say with the errno
		 * (issue 28, item 10). In a later one, the STREAMOFF or
		 * REQBUFS that began it took the buffer back already.
		 */
		if (e->serial == fp->epoch && vb_queue_return_refused(q, fh, e->index) == 0)
			g_debug("%s: fast-path QBUF %u: %s; returned as ERROR",
				fh->dev->name, e->index, g_strerror(-r));
		else
			g_debug("%s: fast-path QBUF %u: %s", fh->dev->name, e->index,
				g_strerror(-r));
		return 0;
	}
	case V4L2CUSE_FP_ACK:
		fp->acks_taken++;
		r = vb_queue_dqbuf_serial(q, fh, e->serial);
		if (r == 0)
			fh->dev->fast_frames++;
		else
			g_debug("%s: fast-path ACK %" G_GUINT64_FORMAT ": %s", fh->dev->name,
				e->serial, g_strerror(-r));
		return 0;
	default:
		return -EINVAL;
	}
}

void
dev_fp_take(struct v4l2cuse_fh *fh)
{
	struct dev_fp *fp = fh ? fh->fp : NULL;
	struct vb_queue_snapshot snap;
	uint32_t head, n;

	if (!fp || fp->broken)
		return;
	head = __atomic_load_n(&fp->sh->sub_head, __ATOMIC_ACQUIRE);
	n = head - fp->sub_tail;
	if (n == 0)
		return;
	if (n > V4L2CUSE_FP_SUB_RING) {
		dev_fp_break(fp, "submission index out of range");
		return;
	}
	vb_queue_snapshot(fh->dq->q, fh, &snap);
	for (uint32_t i = 0; i < n; i++) {
		struct v4l2cuse_fp_sub e;

		/* Copied once: the client may rewrite it while we look. */
		memcpy(&e, &fp->sh->sub[(fp->sub_tail + i) % V4L2CUSE_FP_SUB_RING], sizeof(e));
		if (dev_fp_apply(fp, &e, snap.memory) < 0) {
			fp->sub_tail += i;
			dev_fp_break(fp, "unknown submission");
			return;
		}
	}
	fp->sub_tail = head;
}

/* ---------------------------------------------------------------------- */
/* Life cycle */

static gboolean
dev_fp_kick_cb(int fd, GIOCondition cond, gpointer data)
{
	struct v4l2cuse_fh *fh = data;
	struct dev_fp *fp = fh->fp;
	char buf[64];
	ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);

	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		/* The client closed its end: nobody listens any more. */
		fp->watch = 0;
		return G_SOURCE_REMOVE;
	}
	fh->dev->fast_wakeups++;
	dev_fp_take(fh);
	dev_fp_publish_full(fh, true);
	return G_SOURCE_CONTINUE;
}

int
v4l2cuse_fh_fastpath(struct v4l2cuse_fh *fh, int *ret_memfd, int *ret_sock, size_t *ret_size)
{
	struct v4l2cuse_device *dev = fh->dev;
	long page = sysconf(_SC_PAGESIZE);
	size_t size = sizeof(struct v4l2cuse_fp_shared);
	struct dev_fp *fp;
	int memfd, sv[2], r;
	void *mem;

	if (fh->fp)
		return -EALREADY;	/* one per handle */
	size = (size + (size_t)page - 1) & ~((size_t)page - 1);
	if (vb_budget_charge(dev->budget, size, "fast-path queue") < 0)
		return -ENOMEM;
	memfd = vb_memfd_new("v4l2cuse-fastpath", size, &mem);
	if (memfd < 0) {
		r = memfd;
		goto err_credit;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) < 0) {
		r = -errno;
		goto err_unmap;
	}
	fp = g_new0(struct dev_fp, 1);
	fp->fh = fh;
	fp->sh = mem;
	fp->size = size;
	fp->sock = sv[0];
	fp->sh->magic = V4L2CUSE_FP_MAGIC;
	fp->sh->version = V4L2CUSE_FP_VERSION;
	fp->watch = v4l2cuse_fd_watch_add(sv[0], G_IO_IN | G_IO_HUP | G_IO_ERR, dev_fp_kick_cb, fh);
	fh->fp = fp;
	dev_fp_publish_full(fh, true);
	*ret_memfd = memfd;
	*ret_sock = sv[1];
	*ret_size = size;
	return 0;

err_unmap:
	munmap(mem, size);
	close(memfd);
err_credit:
	vb_budget_credit(dev->budget, size);
	return r;
}

void
dev_fp_free(struct v4l2cuse_fh *fh)
{
	struct dev_fp *fp = fh->fp;

	if (!fp)
		return;
	fh->fp = NULL;
	if (fp->watch)
		g_source_remove(fp->watch);
	/* The client sees the hang-up and goes on through CUSE (which fails now). */
	close(fp->sock);
	munmap(fp->sh, fp->size);
	vb_budget_credit(fh->dev->budget, fp->size);
	g_free(fp);
}
