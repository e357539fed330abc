/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The harness of test-fastpath.c: see fastpath-harness.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <glib.h>
#include <linux/videodev2.h>

#include "videobuf.h"
#include "device.h"
#include "hub.h"
#include "shim.h"
#include "preload-private.h"
#include "fake-req.h"
#include "fake-shim-libc.h"
#include "fastpath-harness.h"
#include "test-main.h"

static int test_poll(struct pollfd *fds, nfds_t n, int timeout);
static int test_ioctl(int fd, unsigned long request, ...);
static ssize_t test_read(int fd, void *buf, size_t count);
static ssize_t test_write(int fd, const void *buf, size_t count);
static int test_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *timeout,
		      const sigset_t *sigmask);
static int test_close(int fd);
static int test_fcntl(int fd, int cmd, ...);

/*
 * The shim's libc table: plain libc, with ioctl, read, write, poll and
 * ppoll through the fake nodes.
 */
static void
fastpath_harness_init(void)
{
	fake_shim_libc_init();
	shim_real.close = test_close;
	shim_real.fcntl = test_fcntl;
	shim_real.ioctl = test_ioctl;
	shim_real.read = test_read;
	shim_real.write = test_write;
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
void
on_loop(void (*fn)(gpointer), gpointer data)
{
	struct call c = { fn, data, false };

	g_main_context_invoke(NULL, call_cb, &c);
	g_mutex_lock(&call_mutex);
	while (!c.done)
		g_cond_wait(&call_cond, &call_mutex);
	g_mutex_unlock(&call_mutex);
}

void
epoll_wait_in(int ep, uint64_t data)
{
	struct epoll_event out[4];
	int n;

	do {
		n = epoll_wait(ep, out, 4, 5000);
		g_assert_cmpint(n, >=, 1);
		n = shim_epoll_fix(ep, out, n);
	} while (n == 0);	/* a stale wake-up, dropped */
	g_assert_cmpint(n, ==, 1);
	g_assert_cmphex(out[0].data.u64, ==, data);
	g_assert_cmphex(out[0].events, ==, EPOLLIN);
}

static int app_signals_done, app_signals_caught;
static unsigned int app_signals_interval;

static void
on_usr1(int sig)
{
	g_atomic_int_inc(&app_signals_caught);
}

static gboolean
signal_app(gpointer p)
{
	struct fixture *f = p;

	if (g_atomic_int_get(&app_signals_done))
		return G_SOURCE_REMOVE;
	pthread_kill(f->app, SIGUSR1);
	g_timeout_add(app_signals_interval, signal_app, f);
	return G_SOURCE_REMOVE;
}

static void
schedule_signals(gpointer p)
{
	g_timeout_add(app_signals_interval, signal_app, p);
}

void
app_signals_start(struct fixture *f, unsigned int interval_ms, bool restart)
{
	struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = restart ? SA_RESTART : 0 };

	sigaction(SIGUSR1, &sa, NULL);
	g_atomic_int_set(&app_signals_caught, 0);
	g_atomic_int_set(&app_signals_done, 0);
	app_signals_interval = interval_ms;
	on_loop(schedule_signals, f);
}

unsigned int
app_signals_seen(void)
{
	return (unsigned int)g_atomic_int_get(&app_signals_caught);
}

void
app_signals_stop(void)
{
	g_atomic_int_set(&app_signals_done, 1);
	signal(SIGUSR1, SIG_IGN);
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
int
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

struct v4l2cuse_device_stats
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
void
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

void
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
	} else if (g_strcmp0(kind, "static") == 0) {
		/* Every frame the same bytes: no overlay (counter, time). */
		f->dev = make_device(f, "video42", "pattern,sizes=160x120,fps=60+30,overlay=0",
				     false, false, &f->shim);
	} else {
		f->dev = make_device(f, "video42", "pattern,sizes=160x120,fps=60+30",
				     g_strcmp0(kind, "shared") == 0, false, &f->shim);
	}
}

void
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

#define MAX_NODES 8

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

struct v4l2cuse_fh *
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

/* Does any fd still refer to @fh (an open file description with other fds)? */
static bool
node_in_use(struct v4l2cuse_fh *fh)
{
	bool used = false;

	g_mutex_lock(&nodes_mutex);
	for (int i = 0; i < MAX_NODES; i++)
		used |= nodes[i].fh == fh;
	g_mutex_unlock(&nodes_mutex);
	return used;
}

static void
release_fh_cb(gpointer p)
{
	v4l2cuse_fh_release(p);
}

/* The shim's own close() (a file it pinned): the last fd of a node releases it. */
static int
test_close(int fd)
{
	struct v4l2cuse_fh *fh = node_fh(fd, true);
	int r = close(fd);

	if (fh && !node_in_use(fh))
		on_loop(release_fh_cb, fh);
	return r;
}

/* F_DUPFD of a node's fd is one more fd of the same file. */
static int
test_fcntl(int fd, int cmd, ...)
{
	struct v4l2cuse_fh *fh;
	va_list ap;
	long arg;
	int r;

	va_start(ap, cmd);
	arg = va_arg(ap, long);
	va_end(ap);
	r = fcntl(fd, cmd, arg);
	if (r >= 0 && (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) && (fh = node_fh(fd, false)))
		node_add(r, fh);
	return r;
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

/* The shim's own CUSE requests (read() emulation): an ioctl of a node goes to the device. */
static int
test_ioctl(int fd, unsigned long request, ...)
{
	struct v4l2cuse_fh *fh = node_fh(fd, false);
	va_list ap;
	void *arg;
	int r;

	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (!fh)
		return ioctl(fd, request, arg);
	r = cuse_ioctl(fh, (unsigned int)request, arg);
	g_assert_cmpint(r, !=, FAKE_PARKED);
	if (r < 0) {
		errno = -r;
		return -1;
	}
	return r;
}

struct read_call {
	struct v4l2cuse_fh *fh;
	void *buf;
	size_t count;
	int flags;
	ssize_t r;
};

static void
read_cb(gpointer p)
{
	struct read_call *c = p;

	c->r = fake_read(c->fh, c->buf, c->count, c->flags);
}

/* The real read() of a node: a CUSE read (never parked: the handles are O_NONBLOCK). */
static ssize_t
test_read(int fd, void *buf, size_t count)
{
	struct read_call c = { node_fh(fd, false), buf, count, fcntl(fd, F_GETFL), 0 };

	if (!c.fh)
		return read(fd, buf, count);
	on_loop(read_cb, &c);
	g_assert_cmpint(c.r, !=, FAKE_PARKED);
	if (c.r < 0) {
		errno = (int)-c.r;
		return -1;
	}
	return c.r;
}

struct write_call {
	struct v4l2cuse_fh *fh;
	const void *buf;
	size_t count;
	ssize_t r;
};

static void
write_cb(gpointer p)
{
	struct write_call *c = p;

	c->r = fake_write(c->fh, c->buf, c->count);
}

/* The real write() of a node: a CUSE write, in requests of 128 KiB. */
static ssize_t
test_write(int fd, const void *buf, size_t count)
{
	struct write_call c = { node_fh(fd, false), buf, count, 0 };

	if (!c.fh)
		return write(fd, buf, count);
	on_loop(write_cb, &c);
	if (c.r < 0) {
		errno = (int)-c.r;
		return -1;
	}
	return c.r;
}

/* ---------------------------------------------------------------------- */
/* A client: a handle attached to the shim, with or without its fast path */

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

void
release_cb(gpointer p)
{
	struct client *c = p;

	v4l2cuse_fh_release(c->fh);
	c->fh = NULL;
}

void
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
	{
		struct stat st;

		/* The node the handle is on, as shim_read() checks it. */
		g_assert_no_errno(fstat(c->fd, &st));
		c->h->rdev = st.st_rdev;
	}
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
void
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

void
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

void
client_renumber(struct client *c, int fd)
{
	struct v4l2cuse_fh *fh = node_fh(c->fd, true);

	g_assert_nonnull(fh);
	g_assert_cmpint(dup2(c->fd, fd), ==, fd);
	shim_fd_set(fd, c->h);
	shim_fd_forget(c->fd);
	close(c->fd);
	c->fd = fd;
	node_add(fd, fh);
}

void
client_close_fd(struct client *c)
{
	struct v4l2cuse_fh *fh = node_fh(c->fd, true);

	shim_fd_forget(c->fd);
	close(c->fd);
	if (fh && !node_in_use(fh))
		on_loop(release_cb, c);
}

/* poll() of the app's fd through the shim: the revents, 0 after 5 s. */
short
client_poll(struct client *c, short events, int timeout_ms)
{
	struct pollfd p = { .fd = c->fd, .events = events };
	struct timespec ts = { timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000 };
	int r = shim_poll(&p, 1, &ts, NULL, false);

	g_assert_cmpint(r, >=, 0);
	return r ? p.revents : 0;
}

/* Wait for a frame and DQBUF it through the fast path. */
void
fast_dqbuf_now(struct client *c, struct v4l2_buffer *b)
{
	int r = -1;

	*b = (struct v4l2_buffer){ .type = c->type, .memory = V4L2_MEMORY_MMAP };
	g_assert_true(shim_fp_dqbuf(c->h, c->fd, b, &r));
	g_assert_cmpint(r, ==, 0);
}

void
fast_dqbuf(struct client *c, struct v4l2_buffer *b)
{
	g_assert_cmpint(client_poll(c, POLLIN | POLLOUT, 5000) & (POLLIN | POLLOUT), !=, 0);
	fast_dqbuf_now(c, b);
}

void
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

int64_t
ts_us(const struct v4l2_buffer *b)
{
	return (int64_t)b->timestamp.tv_sec * 1000000 + b->timestamp.tv_usec;
}

/* The main() of the programs that use the harness (test-main.h). */
int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	fastpath_harness_init();
	v4l2cuse_test_add_registered();
	return g_test_run();
}
