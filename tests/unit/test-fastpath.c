/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The preload shim's fast path end to end, without CUSE: the daemon's side
 * (daemon/fastpath.c, the device through the fake transport, the shim
 * socket server) runs on this process's main loop, and an "app" thread
 * uses the shim's side (preload/fastpath.c, wait.c) as the library does
 * inside an app, with CUSE requests handed to the loop thread as the
 * kernel would hand them to the daemon.
 *
 * Checked: a streamed frame costs no CUSE request; DQBUF and QBUF answer
 * exactly what CUSE answers (flags, sequence numbers, timestamps at the
 * frame interval, QUERYBUF afterwards); anything the shared state cannot
 * answer goes to CUSE; STREAMOFF voids what was published; O_NONBLOCK,
 * EINTR, a wait woken by STREAMOFF and by the handle's release; poll,
 * select and epoll; shared devices; an output (writer) queue; a client
 * that corrupts its ring loses its fast path and nothing else.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <glib.h>
#include <linux/videodev2.h>

#include "videobuf.h"
#include "device.h"
#include "hub.h"
#include "shim.h"
#include "../../preload/shim.h"
#include "fake-req.h"

#define W 160
#define H 120
#define SIZEIMAGE (W * H * 2)
#define FPS 60
#define INTERVAL_NS (1000000000ull / FPS)

struct shim_libc shim_real;
bool shim_debug_enabled;

void
shim_debug(const char *fmt, ...)
{
}

static int test_poll(struct pollfd *fds, nfds_t n, int timeout);
static int test_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *timeout,
		      const sigset_t *sigmask);

static void
setup_real(void)
{
	shim_real.close = close;
	shim_real.ioctl = (int (*)(int, unsigned long, ...))ioctl;
	shim_real.mmap = mmap;
	shim_real.munmap = munmap;
	shim_real.syscall = syscall;
	shim_real.fcntl = fcntl;
	shim_real.poll = test_poll;
	shim_real.ppoll = test_ppoll;
	shim_real.select = select;
	shim_real.pselect = pselect;
	shim_real.epoll_ctl = epoll_ctl;
	shim_real.epoll_wait = epoll_wait;
	shim_real.epoll_pwait = epoll_pwait;
	shim_track_init();
}

/* ---------------------------------------------------------------------- */
/* The loop thread (the daemon) and the app thread */

struct fixture {
	char *dir;
	struct v4l2cuse_device *dev;
	struct v4l2cuse_shim *shim;
	struct v4l2cuse_hub *hub;
	struct v4l2cuse_device *capture;	/* output test: the writer's reader */
	struct v4l2cuse_shim *capture_shim;
	GMainLoop *loop;
	pthread_t app;
};

struct call {
	void (*fn)(gpointer data);
	gpointer data;
	bool done;
};

static GMutex call_mutex;
static GCond call_cond;

static gboolean
call_cb(gpointer p)
{
	struct call *c = p;

	c->fn(c->data);
	g_mutex_lock(&call_mutex);
	c->done = true;
	g_cond_broadcast(&call_cond);
	g_mutex_unlock(&call_mutex);
	return G_SOURCE_REMOVE;
}

/* Run @fn on the loop thread, as the kernel hands a request to the daemon. */
static void
on_loop(void (*fn)(gpointer), gpointer data)
{
	struct call c = { fn, data, false };

	g_main_context_invoke(NULL, call_cb, &c);
	g_mutex_lock(&call_mutex);
	while (!c.done)
		g_cond_wait(&call_cond, &call_mutex);
	g_mutex_unlock(&call_mutex);
}

struct ioc {
	struct v4l2cuse_fh *fh;
	unsigned int cmd;
	void *arg;
	int r;
};

static void
ioc_cb(gpointer p)
{
	struct ioc *i = p;

	i->r = fake_ioctl(i->fh, i->cmd, i->arg);
}

/* An ioctl through "CUSE". */
static int
cuse_ioctl(struct v4l2cuse_fh *fh, unsigned int cmd, void *arg)
{
	struct ioc i = { fh, cmd, arg, 0 };

	on_loop(ioc_cb, &i);
	return i.r;
}

struct stats_call {
	struct v4l2cuse_device *dev;
	struct v4l2cuse_device_stats st;
};

static void
stats_cb(gpointer p)
{
	struct stats_call *s = p;

	v4l2cuse_device_get_stats(s->dev, &s->st);
}

static struct v4l2cuse_device_stats
stats(struct v4l2cuse_device *dev)
{
	struct stats_call s = { .dev = dev };

	on_loop(stats_cb, &s);
	return s.st;
}

struct app {
	void (*fn)(struct fixture *f);
	struct fixture *f;
};

static gpointer
app_thread(gpointer p)
{
	struct app *a = p;

	a->f->app = pthread_self();
	a->fn(a->f);
	g_main_loop_quit(a->f->loop);
	return NULL;
}

/* Run @fn as the app, while this thread serves as the daemon. */
static void
run_app(struct fixture *f, void (*fn)(struct fixture *f))
{
	struct app a = { fn, f };
	GThread *t;

	f->loop = g_main_loop_new(NULL, FALSE);
	t = g_thread_new("app", app_thread, &a);
	g_main_loop_run(f->loop);
	g_thread_join(t);
	g_main_loop_unref(f->loop);
	/* What the app left behind (releases, hang-ups) is served too. */
	while (g_main_context_iteration(NULL, FALSE))
		;
}

static struct v4l2cuse_device *
make_device(struct fixture *f, const char *name, const char *source, bool shared, bool output,
	    struct v4l2cuse_shim **ret_shim)
{
	struct v4l2cuse_device_config cfg = fake_yuyv_config(name, source, W, H, FPS);
	g_autofree char *err = NULL, *path = NULL;
	struct v4l2cuse_device *dev;

	cfg.shared = shared;
	cfg.output = output;
	cfg.hub = f->hub;
	dev = fake_device(&cfg);

	path = v4l2cuse_shim_socket_path(name, &err);
	g_assert_nonnull(path);
	*ret_shim = v4l2cuse_shim_new(dev, path, &err);
	g_assert_null(err);
	return dev;
}

static void
fixture_setup(struct fixture *f, gconstpointer data)
{
	const char *kind = data;

	f->dir = g_dir_make_tmp("fastpath-XXXXXX", NULL);
	g_assert_nonnull(f->dir);
	g_setenv("RUNTIME_DIRECTORY", f->dir, TRUE);
	if (g_strcmp0(kind, "output") == 0) {
		f->hub = v4l2cuse_hub_new();
		f->capture = make_device(f, "video42", "loopback:video43,sizes=160x120,fps=60+30",
					 false, false, &f->capture_shim);
		f->dev = make_device(f, "video43", "loopback-writer:video43", false, true,
				     &f->shim);
	} else {
		f->dev = make_device(f, "video42", "pattern,sizes=160x120,fps=60+30",
				     g_strcmp0(kind, "shared") == 0, false, &f->shim);
	}
}

static void
fixture_teardown(struct fixture *f, gconstpointer data)
{
	v4l2cuse_shim_free(f->shim);
	v4l2cuse_device_free(f->dev);
	v4l2cuse_shim_free(f->capture_shim);
	v4l2cuse_device_free(f->capture);
	if (f->hub)
		v4l2cuse_hub_free(f->hub);
	rmdir(f->dir);
	g_free(f->dir);
}

/* ---------------------------------------------------------------------- */
/* The nodes: the app's fds stand for them, and polling one asks the device */

#define MAX_NODES 4

static struct {
	int fd;
	struct v4l2cuse_fh *fh;
} nodes[MAX_NODES];
static GMutex nodes_mutex;

static void
node_add(int fd, struct v4l2cuse_fh *fh)
{
	g_mutex_lock(&nodes_mutex);
	for (int i = 0; i < MAX_NODES; i++) {
		if (!nodes[i].fh) {
			nodes[i].fd = fd;
			nodes[i].fh = fh;
			g_mutex_unlock(&nodes_mutex);
			return;
		}
	}
	g_assert_not_reached();
}

static struct v4l2cuse_fh *
node_fh(int fd, bool remove)
{
	struct v4l2cuse_fh *fh = NULL;

	g_mutex_lock(&nodes_mutex);
	for (int i = 0; i < MAX_NODES; i++) {
		if (nodes[i].fh && nodes[i].fd == fd) {
			fh = nodes[i].fh;
			if (remove)
				nodes[i].fh = NULL;
		}
	}
	g_mutex_unlock(&nodes_mutex);
	return fh;
}

struct poll_call {
	struct v4l2cuse_fh *fh;
	short events;
	short revents;
};

static void
poll_cb(gpointer p)
{
	struct poll_call *c = p;

	c->revents = (short)fake_poll(c->fh, (unsigned int)c->events);
}

/* poll() of a node is a CUSE poll: asked again every 5 ms until ready or timed out. */
static int
test_poll(struct pollfd *fds, nfds_t n, int timeout)
{
	struct v4l2cuse_fh *fh = n == 1 ? node_fh(fds[0].fd, false) : NULL;
	gint64 end = g_get_monotonic_time() + (gint64)timeout * 1000;

	for (nfds_t i = 1; i < n; i++)
		g_assert_null(node_fh(fds[i].fd, false));
	if (!fh)
		return poll(fds, n, timeout);
	for (;;) {
		struct poll_call c = { fh, fds[0].events, 0 };

		on_loop(poll_cb, &c);
		fds[0].revents = c.revents & (fds[0].events | POLLERR | POLLHUP);
		if (fds[0].revents || timeout == 0 ||
		    (timeout > 0 && g_get_monotonic_time() >= end))
			return fds[0].revents != 0;
		g_usleep(5000);
	}
}

static int
test_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *timeout,
	   const sigset_t *sigmask)
{
	int ms = timeout ? (int)(timeout->tv_sec * 1000 + timeout->tv_nsec / 1000000) : -1;

	if (n == 1 && node_fh(fds[0].fd, false))
		return test_poll(fds, n, ms);
	return ppoll(fds, n, timeout, sigmask);
}

/* ---------------------------------------------------------------------- */
/* A client: a handle attached to the shim, with or without its fast path */

struct client {
	struct fixture *f;
	struct v4l2cuse_device *dev;
	struct v4l2cuse_fh *fh;
	struct shim_handle *h;
	int fd;				/* the app's fd of the node: tracked, for poll & co */
	uint32_t type;
	unsigned int n;
	uint8_t *mem[VB_MAX_BUFFERS];
	size_t len[VB_MAX_BUFFERS];
};

struct open_call {
	struct client *c;
	int r;
};

static void
open_cb(gpointer p)
{
	struct open_call *o = p;

	o->c->fh = v4l2cuse_fh_open(o->c->dev, O_RDWR | O_NONBLOCK, getpid(), getuid(), &o->r);
}

static void
release_cb(gpointer p)
{
	struct client *c = p;

	v4l2cuse_fh_release(c->fh);
	c->fh = NULL;
}

static void
client_open(struct fixture *f, struct v4l2cuse_device *dev, struct client *c, bool fast)
{
	struct v4l2cuse_shim_attach a = { .magic = V4L2CUSE_SHIM_MAGIC,
					  .version = V4L2CUSE_SHIM_VERSION };
	struct open_call o = { c, 0 };
	int sock;

	memset(c, 0, sizeof(*c));
	c->f = f;
	c->dev = dev;
	c->type = dev == f->dev && f->capture ? V4L2_BUF_TYPE_VIDEO_OUTPUT
					      : V4L2_BUF_TYPE_VIDEO_CAPTURE;
	on_loop(open_cb, &o);
	g_assert_nonnull(c->fh);
	g_assert_cmpint(cuse_ioctl(c->fh, VIDIOC_V4L2CUSE_ATTACH, &a), ==, 0);
	sock = shim_connect(&a);
	g_assert_cmpint(sock, >=, 0);
	c->h = shim_handle_new(sock, 0);
	g_assert_nonnull(c->h);
	if (fast) {
		shim_fp_setup(c->h);
		g_assert_nonnull(c->h->fp);
	}
	/* Non-blocking, as most apps that poll first open it. */
	c->fd = open("/dev/null", O_RDWR | O_CLOEXEC | O_NONBLOCK);
	g_assert_cmpint(c->fd, >=, 0);
	shim_fd_set(c->fd, c->h);
	node_add(c->fd, c->fh);
}

struct map_call {
	struct client *c;
	struct v4l2_buffer *b;
	int fd;
	int r;
};

static void
map_cb(gpointer p)
{
	struct map_call *m = p;
	unsigned int index;

	m->r = vb_queue_mmap_fd(v4l2cuse_fh_queue(m->c->fh), m->b->m.offset, m->b->length, &m->fd,
				&index);
}

/* REQBUFS(@n) MMAP, map, QBUF the first @queue buffers (CUSE), STREAMON. */
static void
client_stream(struct client *c, unsigned int n, unsigned int queue)
{
	struct v4l2_requestbuffers rb = { .count = n, .type = c->type,
					  .memory = V4L2_MEMORY_MMAP };
	int type = (int)c->type;

	g_assert_cmpint(cuse_ioctl(c->fh, VIDIOC_REQBUFS, &rb), ==, 0);
	g_assert_cmpuint(rb.count, ==, n);
	c->n = n;
	for (unsigned int i = 0; i < n; i++) {
		struct v4l2_buffer b = { .index = i, .type = c->type, .memory = V4L2_MEMORY_MMAP };
		struct map_call m = { c, &b, -1, 0 };

		g_assert_cmpint(cuse_ioctl(c->fh, VIDIOC_QUERYBUF, &b), ==, 0);
		on_loop(map_cb, &m);
		g_assert_cmpint(m.r, ==, 0);
		c->mem[i] = mmap(NULL, b.length, PROT_READ | PROT_WRITE, MAP_SHARED, m.fd, 0);
		g_assert_true(c->mem[i] != MAP_FAILED);
		c->len[i] = b.length;
		close(m.fd);
		if (i < queue) {
			b = (struct v4l2_buffer){ .index = i, .type = c->type,
						  .memory = V4L2_MEMORY_MMAP,
						  .bytesused = (uint32_t)b.length };
			g_assert_cmpint(cuse_ioctl(c->fh, VIDIOC_QBUF, &b), ==, 0);
		}
	}
	g_assert_cmpint(cuse_ioctl(c->fh, VIDIOC_STREAMON, &type), ==, 0);
}

static void
client_close(struct client *c)
{
	for (unsigned int i = 0; i < c->n; i++)
		munmap(c->mem[i], c->len[i]);
	shim_epoll_forget_fd(c->fd);
	shim_fd_forget(c->fd);
	shim_handle_unref(c->h);	/* the last reference: the connection closes */
	node_fh(c->fd, true);
	close(c->fd);
	on_loop(release_cb, c);
}

/* poll() of the app's fd through the shim: the revents, 0 after 5 s. */
static short
client_poll(struct client *c, short events, int timeout_ms)
{
	struct pollfd p = { .fd = c->fd, .events = events };
	struct timespec ts = { timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000 };
	int r = shim_poll(&p, 1, &ts, NULL, false);

	g_assert_cmpint(r, >=, 0);
	return r ? p.revents : 0;
}

/* Wait for a frame and DQBUF it through the fast path. */
static void
fast_dqbuf(struct client *c, struct v4l2_buffer *b)
{
	int r = -1;

	g_assert_cmpint(client_poll(c, POLLIN | POLLOUT, 5000) & (POLLIN | POLLOUT), !=, 0);
	*b = (struct v4l2_buffer){ .type = c->type, .memory = V4L2_MEMORY_MMAP };
	g_assert_true(shim_fp_dqbuf(c->h, c->fd, b, &r));
	g_assert_cmpint(r, ==, 0);
}

static void
fast_qbuf(struct client *c, uint32_t index)
{
	struct v4l2_buffer b = { .index = index, .type = c->type, .memory = V4L2_MEMORY_MMAP };
	int r = -1;

	g_assert_true(shim_fp_qbuf(c->h, &b, &r));
	g_assert_cmpint(r, ==, 0);
	g_assert_cmpuint(b.index, ==, index);
	g_assert_true(b.flags & V4L2_BUF_FLAG_QUEUED);
	g_assert_false(b.flags & (V4L2_BUF_FLAG_DONE | V4L2_BUF_FLAG_ERROR));
}

static int64_t
ts_us(const struct v4l2_buffer *b)
{
	return (int64_t)b->timestamp.tv_sec * 1000000 + b->timestamp.tv_usec;
}

/* ---------------------------------------------------------------------- */
/* Tests */

/*
 * Steady streaming: every frame through the shared-memory queue, none
 * through CUSE; what DQBUF and QBUF answer is what CUSE answers.
 */
static void
app_stream(struct fixture *f)
{
	struct client c;
	struct v4l2cuse_device_stats before, after;
	struct v4l2_buffer b, q;
	int64_t last_ts = 0;
	uint32_t last_seq = 0;
	unsigned int frames = 0;

	client_open(f, f->dev, &c, true);
	client_stream(&c, 4, 4);
	/* The first frame, and the steady state from there on. */
	fast_dqbuf(&c, &b);
	fast_qbuf(&c, b.index);
	before = stats(f->dev);
	while (frames < 40) {
		fast_dqbuf(&c, &b);
		frames++;
		/* What DQBUF of a done buffer returns (vb2's __fill_v4l2_buffer). */
		g_assert_cmpuint(b.type, ==, V4L2_BUF_TYPE_VIDEO_CAPTURE);
		g_assert_cmpuint(b.memory, ==, V4L2_MEMORY_MMAP);
		g_assert_cmpuint(b.bytesused, ==, SIZEIMAGE);
		g_assert_cmpuint(b.field, ==, V4L2_FIELD_NONE);
		g_assert_cmpuint(b.flags, ==, V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC |
					      V4L2_BUF_FLAG_TSTAMP_SRC_EOF);
		g_assert_cmphex(c.mem[b.index][0], !=, 0);	/* a pattern was drawn */
		if (last_ts) {
			/* Evenly spaced: the ticks' due times, whole intervals apart. */
			int64_t d = ts_us(&b) - last_ts;
			int64_t k = (d * 1000 + (int64_t)INTERVAL_NS / 2) / (int64_t)INTERVAL_NS;

			g_assert_cmpint(k, >=, 1);
			g_assert_cmpint(k, ==, (int64_t)(b.sequence - last_seq));
			g_assert_cmpint(ABS(d * 1000 - k * (int64_t)INTERVAL_NS), <=, 1000);
		}
		last_ts = ts_us(&b);
		last_seq = b.sequence;
		/* QUERYBUF through CUSE now: dequeued, exactly as the app sees it. */
		q = (struct v4l2_buffer){ .index = b.index, .type = b.type };
		if (frames % 8 == 0) {
			g_assert_cmpint(cuse_ioctl(c.fh, VIDIOC_QUERYBUF, &q), ==, 0);
			g_assert_cmpmem(&q, sizeof(q), &b, sizeof(b));
		}
		fast_qbuf(&c, b.index);
		if (frames % 8 == 4) {
			g_assert_cmpint(cuse_ioctl(c.fh, VIDIOC_QUERYBUF, &q), ==, 0);
			g_assert_true(q.flags & V4L2_BUF_FLAG_QUEUED);
		}
	}
	after = stats(f->dev);
	/* The QUERYBUFs (two CUSE rounds each) were the only requests. */
	g_assert_cmpuint(after.requests - before.requests, ==, 2 * (frames / 8 + (frames + 4) / 8));
	g_assert_cmpuint(after.fast_frames - before.fast_frames, >=, frames - 1);
	g_assert_cmpuint(after.fast_handles, ==, 1);
	/* Gaps only where this process stalled longer than the producer makes up for. */
	g_assert_cmpuint(after.stalls, >=, 0);

	/* STREAMOFF (CUSE): the queue's state is void, DQBUF and QBUF go to CUSE. */
	{
		int type = V4L2_BUF_TYPE_VIDEO_CAPTURE, r;

		g_assert_cmpint(cuse_ioctl(c.fh, VIDIOC_STREAMOFF, &type), ==, 0);
		b = (struct v4l2_buffer){ .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					  .memory = V4L2_MEMORY_MMAP };
		g_assert_false(shim_fp_dqbuf(c.h, c.fd, &b, &r));
		g_assert_cmpint(cuse_ioctl(c.fh, VIDIOC_DQBUF, &b), ==, -EINVAL);
		b.index = 0;
		g_assert_false(shim_fp_qbuf(c.h, &b, &r));
		/* poll: the node's own answer (POLLERR, not streaming). */
		g_assert_false(shim_fp_poll(c.h, POLLIN, &(short){ 0 }));
		g_assert_cmpint(client_poll(&c, POLLIN, 0), ==, POLLERR);
		/* Streaming again: nothing of before comes back. */
		for (unsigned int i = 0; i < 4; i++) {
			b = (struct v4l2_buffer){ .index = i, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
						  .memory = V4L2_MEMORY_MMAP };
			/* Not dequeued in this epoch: CUSE queues it. */
			g_assert_false(shim_fp_qbuf(c.h, &b, &r));
			g_assert_cmpint(cuse_ioctl(c.fh, VIDIOC_QBUF, &b), ==, 0);
		}
		g_assert_cmpint(cuse_ioctl(c.fh, VIDIOC_STREAMON, &type), ==, 0);
		fast_dqbuf(&c, &b);
		g_assert_cmpuint(b.sequence, <=, stats(f->dev).stalls);	/* 0 after a start */
	}
	client_close(&c);
	g_assert_cmpuint(stats(f->dev).fast_handles, ==, 0);
}

static void
test_stream(struct fixture *f, gconstpointer data)
{
	run_app(f, app_stream);
}

/* Anything the shared state cannot answer for certain goes to CUSE. */
static void
app_fallbacks(struct fixture *f)
{
	struct client c;
	struct v4l2_buffer b;
	int r = 0;

	client_open(f, f->dev, &c, true);
	/* Not streaming: nothing answered here. */
	b = (struct v4l2_buffer){ .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP };
	g_assert_false(shim_fp_dqbuf(c.h, c.fd, &b, &r));
	g_assert_false(shim_fp_qbuf(c.h, &b, &r));
	client_stream(&c, 4, 3);
	/* Buffer 3 was never dequeued through the fast path. */
	b = (struct v4l2_buffer){ .index = 3, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
				  .memory = V4L2_MEMORY_MMAP };
	g_assert_false(shim_fp_qbuf(c.h, &b, &r));
	fast_dqbuf(&c, &b);
	/* The wrong type, memory or index: vb2's errno comes from CUSE. */
	{
		struct v4l2_buffer bad = b;

		bad.type = V4L2_BUF_TYPE_VIDEO_OUTPUT;
		g_assert_false(shim_fp_qbuf(c.h, &bad, &r));
		g_assert_false(shim_fp_dqbuf(c.h, c.fd, &bad, &r));
		g_assert_cmpint(cuse_ioctl(c.fh, VIDIOC_QBUF, &bad), ==, -EINVAL);
		bad = b;
		bad.memory = V4L2_MEMORY_USERPTR;
		g_assert_false(shim_fp_qbuf(c.h, &bad, &r));
		g_assert_cmpint(cuse_ioctl(c.fh, VIDIOC_QBUF, &bad), ==, -EINVAL);
		bad = b;
		bad.index = 4;
		g_assert_false(shim_fp_qbuf(c.h, &bad, &r));
		g_assert_cmpint(cuse_ioctl(c.fh, VIDIOC_QBUF, &bad), ==, -EINVAL);
	}
	/* Dequeued through the fast path: queued through it, but only once. */
	fast_qbuf(&c, b.index);
	g_assert_false(shim_fp_qbuf(c.h, &b, &r));
	g_assert_cmpint(cuse_ioctl(c.fh, VIDIOC_QBUF, &b), ==, -EINVAL);
	/* A DQBUF through CUSE in between (another process, say): nothing repeats. */
	{
		struct v4l2_buffer x = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					 .memory = V4L2_MEMORY_MMAP }, y;
		bool seen[VB_MAX_BUFFERS] = { false };

		g_assert_cmpint(client_poll(&c, POLLIN, 5000), ==, POLLIN);
		g_assert_cmpint(cuse_ioctl(c.fh, VIDIOC_DQBUF, &x), ==, 0);
		seen[x.index] = true;
		y = x;
		while (shim_fp_dqbuf(c.h, c.fd, &y, &r) && r == 0) {
			g_assert_false(seen[y.index]);
			seen[y.index] = true;
			y.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
		}
		g_assert_cmpint(r, ==, -EAGAIN);	/* the app's fd is O_NONBLOCK */
	}
	client_close(&c);
}

static void
test_fallbacks(struct fixture *f, gconstpointer data)
{
	run_app(f, app_fallbacks);
}

/* O_NONBLOCK as the file has it now, EINTR, and waits that STREAMOFF or release end. */
static void
on_usr1(int sig)
{
}

static int app_woken;

/* Signal the app until it says the wait ended (it may not have begun yet). */
static gboolean
kill_app_later(gpointer p)
{
	struct fixture *f = p;

	if (g_atomic_int_get(&app_woken))
		return G_SOURCE_REMOVE;
	pthread_kill(f->app, SIGUSR1);
	g_timeout_add(50, kill_app_later, f);
	return G_SOURCE_REMOVE;
}

static gboolean
streamoff_later(gpointer p)
{
	struct client *c = p;
	int type = V4L2_BUF_TYPE_VIDEO_CAPTURE;

	g_assert_cmpint(fake_ioctl(c->fh, VIDIOC_STREAMOFF, &type), ==, 0);
	return G_SOURCE_REMOVE;
}

static void
schedule_cb(gpointer p)
{
	void **a = p;

	g_timeout_add(50, (GSourceFunc)a[0], a[1]);
}

static void
later(GSourceFunc fn, gpointer data)
{
	void *a[2] = { (void *)fn, data };

	on_loop(schedule_cb, a);
}

static void
app_waits(struct fixture *f)
{
	struct sigaction sa = { .sa_handler = on_usr1 };	/* no SA_RESTART */
	struct client c;
	struct v4l2_buffer b;
	int r = 0, flags;

	sigaction(SIGUSR1, &sa, NULL);
	client_open(f, f->dev, &c, true);
	/* Every buffer with the app: no frame can come. */
	client_stream(&c, 2, 1);
	fast_dqbuf(&c, &b);
	/* The app's fd, made non-blocking after open: EAGAIN, as the kernel says. */
	flags = fcntl(c.fd, F_GETFL);
	g_assert_true(flags & O_NONBLOCK);
	g_assert_true(shim_fp_dqbuf(c.h, c.fd, &b, &r));
	g_assert_cmpint(r, ==, -EAGAIN);
	g_assert_cmpint(client_poll(&c, POLLIN, 0), ==, 0);
	/* Blocking (F_SETFL counts, as in the kernel): a signal ends the wait with EINTR. */
	g_assert_no_errno(fcntl(c.fd, F_SETFL, flags & ~O_NONBLOCK));
	g_atomic_int_set(&app_woken, 0);
	later(kill_app_later, f);
	g_assert_true(shim_fp_dqbuf(c.h, c.fd, &b, &r));
	g_atomic_int_set(&app_woken, 1);
	g_assert_cmpint(r, ==, -EINTR);
	/* STREAMOFF from elsewhere ends the wait: CUSE answers it (EINVAL). */
	later(streamoff_later, &c);
	b = (struct v4l2_buffer){ .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP };
	g_assert_false(shim_fp_dqbuf(c.h, c.fd, &b, &r));
	g_assert_cmpint(cuse_ioctl(c.fh, VIDIOC_DQBUF, &b), ==, -EINVAL);
	client_close(&c);
	signal(SIGUSR1, SIG_DFL);
}

static void
test_waits(struct fixture *f, gconstpointer data)
{
	run_app(f, app_waits);
}

/* The handle goes (the daemon ends it) while the app waits: CUSE takes over. */
static gboolean
release_later(gpointer p)
{
	release_cb(p);
	return G_SOURCE_REMOVE;
}

static void
app_gone(struct fixture *f)
{
	struct client c;
	struct v4l2_buffer b;
	int r = 0;

	client_open(f, f->dev, &c, true);
	client_stream(&c, 2, 1);
	fast_dqbuf(&c, &b);
	g_assert_no_errno(fcntl(c.fd, F_SETFL, O_RDWR));	/* a blocking DQBUF */
	node_fh(c.fd, true);
	later(release_later, &c);
	b = (struct v4l2_buffer){ .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP };
	g_assert_false(shim_fp_dqbuf(c.h, c.fd, &b, &r));
	/* And from now on, poll asks the node (here: no more). */
	g_assert_false(shim_fp_poll(c.h, POLLIN, &(short){ 0 }));
	g_assert_true(c.h->fp->dead);
	for (unsigned int i = 0; i < c.n; i++)
		munmap(c.mem[i], c.len[i]);
	shim_fd_forget(c.fd);
	shim_handle_unref(c.h);
	close(c.fd);
}

static void
test_gone(struct fixture *f, gconstpointer data)
{
	run_app(f, app_gone);
}

/* select() and epoll on the app's fd, and a stale wake-up dropped. */
static void
app_select_epoll(struct fixture *f)
{
	struct client c;
	struct v4l2_buffer b;
	struct epoll_event ev = { .events = 0, .data.u64 = 0x1234 }, out[4];
	int ep = epoll_create1(EPOLL_CLOEXEC), n, r = 0;
	fd_set rs;
	struct timespec ts = { 5, 0 };

	client_open(f, f->dev, &c, true);
	client_stream(&c, 4, 4);
	/* select(): readable once a frame is there. */
	FD_ZERO(&rs);
	FD_SET(c.fd, &rs);
	g_assert_cmpint(shim_select(c.fd + 1, &rs, NULL, NULL, &ts, NULL, false), ==, 1);
	g_assert_true(FD_ISSET(c.fd, &rs));
	fast_dqbuf(&c, &b);
	fast_qbuf(&c, b.index);
	/* epoll: ADD with no events, then MOD (v4l2-compliance does this). */
	g_assert_no_errno(shim_epoll_ctl(ep, EPOLL_CTL_ADD, c.fd, &ev));
	g_assert_cmpint(shim_epoll_ctl(ep, EPOLL_CTL_ADD, c.fd, &ev), ==, -1);
	g_assert_cmpint(errno, ==, EEXIST);
	ev.events = EPOLLIN;
	g_assert_no_errno(shim_epoll_ctl(ep, EPOLL_CTL_MOD, c.fd, &ev));
	for (unsigned int frames = 0; frames < 10;) {
		n = epoll_wait(ep, out, 4, 5000);
		g_assert_cmpint(n, >=, 1);
		n = shim_epoll_fix(ep, out, n);
		if (n == 0)
			continue;	/* a stale wake-up, dropped */
		g_assert_cmpint(n, ==, 1);
		g_assert_cmphex(out[0].data.u64, ==, 0x1234);
		g_assert_cmphex(out[0].events, ==, EPOLLIN);
		while (shim_fp_dqbuf(c.h, c.fd, &b, &r) && r == 0) {
			fast_qbuf(&c, b.index);
			b.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
			frames++;
		}
	}
	/* Nothing ready (every buffer with the app): no event, not even a stale one. */
	for (unsigned int i = 0; i < c.n; i++)
		fast_dqbuf(&c, &b);
	n = epoll_wait(ep, out, 4, 100);
	g_assert_cmpint(n >= 0 ? shim_epoll_fix(ep, out, n) : n, ==, 0);
	g_assert_no_errno(shim_epoll_ctl(ep, EPOLL_CTL_DEL, c.fd, NULL));
	g_assert_cmpint(shim_epoll_ctl(ep, EPOLL_CTL_DEL, c.fd, NULL), ==, -1);
	g_assert_cmpint(errno, ==, ENOENT);
	g_assert_false(shim_epoll_maybe_ours());
	/* Registered again, then the node's fd closes: the registration goes. */
	g_assert_no_errno(shim_epoll_ctl(ep, EPOLL_CTL_ADD, c.fd, &ev));
	g_assert_true(shim_epoll_maybe_ours());
	client_close(&c);
	g_assert_false(shim_epoll_maybe_ours());
	close(ep);
}

static void
test_select_epoll(struct fixture *f, gconstpointer data)
{
	run_app(f, app_select_epoll);
}

/* A shared device: each consumer's own queue, each through its own fast path. */
static void
app_shared(struct fixture *f)
{
	struct client a, b;
	struct v4l2cuse_device_stats before, after;

	client_open(f, f->dev, &a, true);
	client_open(f, f->dev, &b, true);
	client_stream(&a, 4, 4);
	client_stream(&b, 4, 4);
	before = stats(f->dev);
	for (unsigned int i = 0; i < 20; i++) {
		struct v4l2_buffer ba, bb;

		fast_dqbuf(&a, &ba);
		fast_dqbuf(&b, &bb);
		/* Both see the same frames (b may be a frame behind or ahead). */
		g_assert_cmpint(ABS((int)ba.sequence - (int)bb.sequence), <=, 4);
		fast_qbuf(&a, ba.index);
		fast_qbuf(&b, bb.index);
	}
	after = stats(f->dev);
	g_assert_cmpuint(after.requests, ==, before.requests);
	g_assert_cmpuint(after.fast_handles, ==, 2);
	client_close(&a);
	client_close(&b);
}

static void
test_shared(struct fixture *f, gconstpointer data)
{
	run_app(f, app_shared);
}

struct share_call {
	struct v4l2cuse_device *dev;
	bool shared;
	int r;
};

static void
share_cb(gpointer p)
{
	struct share_call *s = p;
	g_autofree char *err = NULL;

	s->r = v4l2cuse_device_set_shared(s->dev, s->shared, &err);
	if (err)
		g_printerr("%s\n", err);
}

/*
 * share= switched live under a handle with a fast path: its new queue counts
 * its done buffers from 1 again, and they reach the app all the same (the
 * old queue's serials, far ahead, must not hide them).
 */
static void
app_reshare(struct fixture *f)
{
	struct client c;
	struct v4l2_requestbuffers rb = { .count = 0, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					  .memory = V4L2_MEMORY_MMAP };
	struct share_call sc = { f->dev, true, -1 };
	int type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	struct v4l2_buffer b;

	client_open(f, f->dev, &c, true);
	client_stream(&c, 4, 4);
	for (unsigned int i = 0; i < 12; i++) {
		fast_dqbuf(&c, &b);
		fast_qbuf(&c, b.index);
	}
	g_assert_cmpint(cuse_ioctl(c.fh, VIDIOC_STREAMOFF, &type), ==, 0);
	for (unsigned int i = 0; i < c.n; i++)
		munmap(c.mem[i], c.len[i]);
	g_assert_cmpint(cuse_ioctl(c.fh, VIDIOC_REQBUFS, &rb), ==, 0);
	on_loop(share_cb, &sc);
	g_assert_cmpint(sc.r, ==, 0);
	client_stream(&c, 4, 4);
	for (unsigned int i = 0; i < 6; i++) {
		fast_dqbuf(&c, &b);
		fast_qbuf(&c, b.index);
	}
	client_close(&c);
}

static void
test_reshare(struct fixture *f, gconstpointer data)
{
	run_app(f, app_reshare);
}

/* Output streaming (a writer node): queued frames reach the reader. */
static void
app_output(struct fixture *f)
{
	struct client w;
	struct v4l2_format fmt = { .type = V4L2_BUF_TYPE_VIDEO_OUTPUT };
	struct v4l2cuse_device_stats before, after;

	client_open(f, f->dev, &w, true);
	fmt.fmt.pix = (struct v4l2_pix_format){ .width = W, .height = H,
						.pixelformat = V4L2_PIX_FMT_YUYV };
	g_assert_cmpint(cuse_ioctl(w.fh, VIDIOC_S_FMT, &fmt), ==, 0);
	client_stream(&w, 2, 2);
	before = stats(f->dev);
	for (unsigned int i = 0; i < 20; i++) {
		struct v4l2_buffer b;
		int r = -1;

		/* POLLOUT: a buffer can be dequeued (each is consumed at once). */
		fast_dqbuf(&w, &b);
		g_assert_cmpuint(b.bytesused, ==, SIZEIMAGE);
		memset(w.mem[b.index], (int)(16 + i), SIZEIMAGE);
		b = (struct v4l2_buffer){ .index = b.index, .type = V4L2_BUF_TYPE_VIDEO_OUTPUT,
					  .memory = V4L2_MEMORY_MMAP, .bytesused = 0 };
		g_assert_true(shim_fp_qbuf(w.h, &b, &r));
		g_assert_cmpint(r, ==, 0);
		/* bytesused 0 means the whole buffer, as in vb2. */
		g_assert_cmpuint(b.bytesused, ==, w.len[b.index]);
		g_assert_true(b.flags & V4L2_BUF_FLAG_QUEUED);
	}
	after = stats(f->dev);
	/* The kicks, not CUSE requests, carried the frames. */
	g_assert_cmpuint(after.requests, ==, before.requests);
	g_assert_cmpuint(after.fast_frames - before.fast_frames, >=, 19);
	client_close(&w);
}

static void
test_output(struct fixture *f, gconstpointer data)
{
	run_app(f, app_output);
}

/*
 * A client that corrupts its ring: its fast path ends (it goes on through
 * CUSE), and the other handle of the shared device streams on.
 */
static void
app_hostile(struct fixture *f)
{
	struct client evil, good;
	struct v4l2cuse_fp_shared *sh;
	struct v4l2_buffer b;
	int r = 0;

	client_open(f, f->dev, &evil, true);
	client_open(f, f->dev, &good, true);
	client_stream(&evil, 4, 4);
	client_stream(&good, 4, 4);
	fast_dqbuf(&evil, &b);
	fast_dqbuf(&good, &b);
	fast_qbuf(&good, b.index);
	/* Evil: a QBUF of an index out of range, an ACK of no frame. */
	sh = evil.h->fp->sh;
	sh->sub[sh->sub_head % V4L2CUSE_FP_SUB_RING] =
		(struct v4l2cuse_fp_sub){ .op = V4L2CUSE_FP_QBUF, .index = 999 };
	sh->sub[(sh->sub_head + 1) % V4L2CUSE_FP_SUB_RING] =
		(struct v4l2cuse_fp_sub){ .op = V4L2CUSE_FP_ACK, .serial = ~0ull };
	__atomic_store_n(&sh->sub_head, sh->sub_head + 2, __ATOMIC_RELEASE);
	/* Taken before its next CUSE request: refused like a CUSE QBUF would be. */
	b = (struct v4l2_buffer){ .index = 0, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	g_assert_cmpint(cuse_ioctl(evil.fh, VIDIOC_QUERYBUF, &b), ==, 0);
	g_assert_false(sh->state.flags & V4L2CUSE_FP_BROKEN);
	/* Now nonsense: an unknown submission, then an index far ahead. */
	sh->sub[sh->sub_head % V4L2CUSE_FP_SUB_RING] = (struct v4l2cuse_fp_sub){ .op = 77 };
	__atomic_store_n(&sh->sub_head, sh->sub_head + 1, __ATOMIC_RELEASE);
	g_assert_cmpint(cuse_ioctl(evil.fh, VIDIOC_QUERYBUF, &b), ==, 0);
	g_assert_true(sh->state.flags & V4L2CUSE_FP_BROKEN);
	g_assert_false(sh->state.flags & V4L2CUSE_FP_ACTIVE);
	__atomic_store_n(&sh->sub_head, sh->sub_head + 100000, __ATOMIC_RELEASE);
	sh->done_tail = 12345;
	/* Evil goes on through CUSE. */
	b = (struct v4l2_buffer){ .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP };
	g_assert_false(shim_fp_dqbuf(evil.h, evil.fd, &b, &r));
	g_assert_cmpint(client_poll(&evil, POLLIN, 5000), ==, POLLIN);
	g_assert_cmpint(cuse_ioctl(evil.fh, VIDIOC_DQBUF, &b), ==, 0);
	/* Good streams on through its fast path. */
	for (unsigned int i = 0; i < 5; i++) {
		fast_dqbuf(&good, &b);
		fast_qbuf(&good, b.index);
	}
	client_close(&evil);
	client_close(&good);
}

static void
test_hostile(struct fixture *f, gconstpointer data)
{
	run_app(f, app_hostile);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	setup_real();
	/* The socket server checks /proc/<peer>/task/<opener>: we are both. */
#define ADD(name, kind, fn) \
	g_test_add("/fastpath/" name, struct fixture, kind, fixture_setup, fn, fixture_teardown)
	ADD("stream", NULL, test_stream);
	ADD("fallbacks", NULL, test_fallbacks);
	ADD("waits", NULL, test_waits);
	ADD("gone", NULL, test_gone);
	ADD("select-epoll", NULL, test_select_epoll);
	ADD("shared", "shared", test_shared);
	ADD("reshare", NULL, test_reshare);
	ADD("output", "output", test_output);
	ADD("hostile", "shared", test_hostile);
#undef ADD
	return g_test_run();
}
