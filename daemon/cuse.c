/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The CUSE transport: one character device per v4l2cuse_device, driven from
 * the GLib main loop over fuse_session_fd() (receive_buf/process_buf), one
 * dispatcher thread that never blocks. The only file that speaks FUSE.
 * One more node is not a V4L2 device: the v4l2loopback control device
 * (daemon/lbctl.h), which answers open, release and ioctl only.
 */
#include "config.h"

#define FUSE_USE_VERSION 31

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <glib.h>
#include <glib-unix.h>
#include <fuse3/cuse_lowlevel.h>
#include <fuse3/fuse_lowlevel.h>

#include "util/fd-watch.h"
#include "util/macros.h"
#include "device.h"
#include "lbctl.h"
#include "cuse.h"

struct v4l2cuse_cuse {
	struct v4l2cuse_device *dev;	/* a V4L2 node's device, */
	struct v4l2cuse_lbctl *ctl;	/* or the control device's (dev NULL) */
	char *name;			/* the node's name, "video42" */
	struct fuse_session *se;
	struct fuse_buf buf;
	guint watch;
	bool init_done;
	bool confirmed;			/* init done and not aborted */
	int error;			/* why the session ended, -errno */
	char *devname_arg;		/* "DEVNAME=video42" */
	mode_t mode;
	gid_t gid;
	v4l2cuse_cuse_state_fn state_cb;
	void *state_data;
};

/* ---------------------------------------------------------------------- */
/* Requests: struct v4l2cuse_req over fuse_req_t */

struct cuse_req {
	struct v4l2cuse_req base;
	fuse_req_t req;
	bool heap;
	v4l2cuse_req_interrupt_fn intr_fn;
	void *intr_data;
};

static void
creq_done(struct cuse_req *cr)
{
	if (cr->heap)
		g_free(cr);
}

static void
creq_retry(struct v4l2cuse_req *r, const struct iovec *in, size_t n_in,
	   const struct iovec *out, size_t n_out)
{
	struct cuse_req *cr = (struct cuse_req *)r;

	fuse_reply_ioctl_retry(cr->req, n_in ? in : NULL, n_in, n_out ? out : NULL, n_out);
	creq_done(cr);
}

static void
creq_reply_ioctl(struct v4l2cuse_req *r, int res, const void *buf, size_t len)
{
	struct cuse_req *cr = (struct cuse_req *)r;

	/* The one place a negative errno turns positive... for ioctl data. */
	if (res < 0 && len == 0)
		fuse_reply_err(cr->req, -res);
	else
		fuse_reply_ioctl(cr->req, res, buf, len);	/* res > 0: the ioctl's value */
	creq_done(cr);
}

static void
creq_reply_err(struct v4l2cuse_req *r, int res)
{
	struct cuse_req *cr = (struct cuse_req *)r;

	fuse_reply_err(cr->req, -res);
	creq_done(cr);
}

static void
creq_reply_data(struct v4l2cuse_req *r, const void *buf, size_t len)
{
	struct cuse_req *cr = (struct cuse_req *)r;

	fuse_reply_buf(cr->req, buf, len);
	creq_done(cr);
}

static void
creq_reply_write(struct v4l2cuse_req *r, size_t count)
{
	struct cuse_req *cr = (struct cuse_req *)r;

	fuse_reply_write(cr->req, count);
	creq_done(cr);
}

static void
creq_reply_open(struct v4l2cuse_req *r, void *fh)
{
	struct cuse_req *cr = (struct cuse_req *)r;
	struct fuse_file_info fi = { .fh = (uintptr_t)fh, .direct_io = 1, .nonseekable = 1 };

	fuse_reply_open(cr->req, &fi);
	creq_done(cr);
}

static void
creq_reply_poll(struct v4l2cuse_req *r, unsigned int revents)
{
	struct cuse_req *cr = (struct cuse_req *)r;

	fuse_reply_poll(cr->req, revents);
	creq_done(cr);
}

static struct v4l2cuse_req *
creq_park(struct v4l2cuse_req *r)
{
	struct cuse_req *cr = g_memdup2(r, sizeof(struct cuse_req));

	cr->heap = true;
	return &cr->base;
}

static void
creq_interrupt_trampoline(fuse_req_t req, void *data)
{
	struct cuse_req *cr = data;

	/* Runs on the loop thread: interrupts arrive through process_buf. */
	cr->intr_fn(&cr->base, cr->intr_data);
}

static void
creq_on_interrupt(struct v4l2cuse_req *r, v4l2cuse_req_interrupt_fn fn, void *data)
{
	struct cuse_req *cr = (struct cuse_req *)r;

	cr->intr_fn = fn;
	cr->intr_data = data;
	fuse_req_interrupt_func(cr->req, creq_interrupt_trampoline, cr);
}

static const struct v4l2cuse_req_ops creq_ops = {
	.retry = creq_retry,
	.reply_ioctl = creq_reply_ioctl,
	.reply_err = creq_reply_err,
	.reply_data = creq_reply_data,
	.reply_write = creq_reply_write,
	.reply_open = creq_reply_open,
	.reply_poll = creq_reply_poll,
	.park = creq_park,
	.on_interrupt = creq_on_interrupt,
};

#define CUSE_REQ(r) { .base = { .ops = &creq_ops }, .req = (r) }

/* ---------------------------------------------------------------------- */
/* Poll handles */

static void
cuse_poll_notify(void *ph)
{
	fuse_lowlevel_notify_poll(ph);
	fuse_pollhandle_destroy(ph);
}

static void
cuse_poll_destroy(void *ph)
{
	fuse_pollhandle_destroy(ph);
}

static const struct v4l2cuse_poll_ops cuse_poll_ops = {
	.notify = cuse_poll_notify,
	.destroy = cuse_poll_destroy,
};

/* ---------------------------------------------------------------------- */
/* CUSE ops */

static struct v4l2cuse_cuse *
cuse_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static struct v4l2cuse_fh *
fh_of(struct fuse_file_info *fi)
{
	return (struct v4l2cuse_fh *)(uintptr_t)fi->fh;
}

static void
cuse_init_done(void *userdata)
{
	struct v4l2cuse_cuse *c = userdata;

	c->init_done = true;
}

static void
cuse_open(fuse_req_t req, struct fuse_file_info *fi)
{
	struct v4l2cuse_cuse *c = cuse_of(req);
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	struct cuse_req cr = CUSE_REQ(req);
	struct v4l2cuse_fh *fh;
	int r = 0;

	fh = v4l2cuse_fh_open(c->dev, fi->flags, ctx->pid, ctx->uid, &r);
	if (!fh)
		creq_reply_err(&cr.base, r);
	else
		creq_reply_open(&cr.base, fh);
}

static void
cuse_release(fuse_req_t req, struct fuse_file_info *fi)
{
	v4l2cuse_fh_release(fh_of(fi));
	fuse_reply_err(req, 0);
}

static void
cuse_read(fuse_req_t req, size_t size, off_t off, struct fuse_file_info *fi)
{
	struct cuse_req cr = CUSE_REQ(req);

	v4l2cuse_fh_read(fh_of(fi), &cr.base, size, off, fi->flags);
}

static void
cuse_write(fuse_req_t req, const char *buf, size_t size, off_t off,
	   struct fuse_file_info *fi)
{
	struct cuse_req cr = CUSE_REQ(req);

	v4l2cuse_fh_write(fh_of(fi), &cr.base, buf, size, off);
}

static void
cuse_ioctl(fuse_req_t req, int cmd, void *arg, struct fuse_file_info *fi,
	   unsigned int flags, const void *in_buf, size_t in_bufsz, size_t out_bufsz)
{
	struct cuse_req cr = CUSE_REQ(req);
	struct v4l2cuse_ioctl_args a = {
		/* libfuse 3.14 passes int: V4L2's _IOR/_IOWR numbers arrive negative. */
		.cmd = (unsigned int)cmd,
		.arg = (unsigned long)arg,
		.flags = (flags & FUSE_IOCTL_COMPAT) ? V4L2CUSE_IOCTL_COMPAT : 0,
		.in = in_buf,
		.in_size = in_bufsz,
		.out_size = out_bufsz,
	};

	v4l2cuse_fh_ioctl(fh_of(fi), &cr.base, &a);
}

static void
cuse_poll(fuse_req_t req, struct fuse_file_info *fi, struct fuse_pollhandle *ph)
{
	struct cuse_req cr = CUSE_REQ(req);

	v4l2cuse_fh_poll(fh_of(fi), &cr.base, fi->poll_events, ph);
}

static const struct cuse_lowlevel_ops cuse_ops = {
	.init_done = cuse_init_done,
	.open = cuse_open,
	.read = cuse_read,
	.write = cuse_write,
	.release = cuse_release,
	.ioctl = cuse_ioctl,
	.poll = cuse_poll,
};

/* The control device: no state per handle (as a misc device's), ioctls only. */
static void
cuse_ctl_open(fuse_req_t req, struct fuse_file_info *fi)
{
	struct cuse_req cr = CUSE_REQ(req);

	creq_reply_open(&cr.base, NULL);
}

static void
cuse_ctl_release(fuse_req_t req, struct fuse_file_info *fi)
{
	fuse_reply_err(req, 0);
}

static void
cuse_ctl_ioctl(fuse_req_t req, int cmd, void *arg, struct fuse_file_info *fi,
	       unsigned int flags, const void *in_buf, size_t in_bufsz, size_t out_bufsz)
{
	struct cuse_req cr = CUSE_REQ(req);
	struct v4l2cuse_ioctl_args a = {
		.cmd = (unsigned int)cmd,
		.arg = (unsigned long)arg,
		.flags = (flags & FUSE_IOCTL_COMPAT) ? V4L2CUSE_IOCTL_COMPAT : 0,
		.in = in_buf,
		.in_size = in_bufsz,
		.out_size = out_bufsz,
	};

	v4l2cuse_lbctl_ioctl(cuse_of(req)->ctl, &cr.base, &a);
}

static const struct cuse_lowlevel_ops cuse_ctl_ops = {
	.init_done = cuse_init_done,
	.open = cuse_ctl_open,
	.release = cuse_ctl_release,
	.ioctl = cuse_ctl_ioctl,
};

/* ---------------------------------------------------------------------- */
/* The session on the main loop */

static void
cuse_set_state(struct v4l2cuse_cuse *c, enum v4l2cuse_cuse_state state, int error)
{
	if (state == V4L2CUSE_CUSE_FAILED || state == V4L2CUSE_CUSE_ENDED)
		c->error = error;
	if (c->state_cb)
		c->state_cb(c, state, c->state_data);
}

/* The node exists: apply our own permissions so they don't depend on udev. */
static void
cuse_confirm(struct v4l2cuse_cuse *c)
{
	g_autofree char *path = g_strdup_printf("/dev/%s", c->name);

	c->confirmed = true;
	if (c->gid != (gid_t)-1 && chown(path, 0, c->gid) < 0)
		g_message("%s: cannot set the group of %s: %s", c->name, path,
			  g_strerror(errno));
	if (chmod(path, c->mode) < 0)
		g_message("%s: cannot set the mode of %s: %s", c->name, path, g_strerror(errno));
	cuse_set_state(c, V4L2CUSE_CUSE_READY, 0);
}

static gboolean
cuse_dispatch(int fd, GIOCondition cond, gpointer data)
{
	struct v4l2cuse_cuse *c = data;

	/* Bounded batch, so one busy device can't starve the others. */
	for (int i = 0; i < 64; i++) {
		int r = fuse_session_receive_buf(c->se, &c->buf);

		if (r == -EAGAIN || r == -EINTR)
			break;
		if (r <= 0 || fuse_session_exited(c->se)) {
			c->watch = 0;
			if (!c->confirmed) {
				/* CUSE aborts a duplicate DEVNAME silently: ENODEV here. */
				cuse_set_state(c, V4L2CUSE_CUSE_FAILED, r < 0 ? r : -EEXIST);
			} else {
				cuse_set_state(c, V4L2CUSE_CUSE_ENDED, r < 0 ? r : -ENODEV);
			}
			return G_SOURCE_REMOVE;
		}
		fuse_session_process_buf(c->se, &c->buf);
		if (c->init_done && !c->confirmed) {
			/* The init reply was handled inside its write: an abort
			 * shows as ENODEV on the next read, so read again first. */
			r = fuse_session_receive_buf(c->se, &c->buf);
			if (r == -EAGAIN) {
				cuse_confirm(c);
				continue;
			}
			if (r <= 0 || fuse_session_exited(c->se)) {
				c->watch = 0;
				cuse_set_state(c, V4L2CUSE_CUSE_FAILED, -EEXIST);
				return G_SOURCE_REMOVE;
			}
			cuse_confirm(c);
			fuse_session_process_buf(c->se, &c->buf);
		}
	}
	return G_SOURCE_CONTINUE;
}

int
v4l2cuse_cuse_precheck(const char *name, char **ret_error)
{
	static const char *const where[] = { "/dev/", "/sys/class/cuse/",
					     "/sys/class/video4linux/" };

	if (access("/dev/cuse", F_OK) < 0) {
		*ret_error = g_strdup("/dev/cuse does not exist: this kernel has no CUSE "
				      "or the module is not loaded (try 'modprobe cuse')");
		return -ENODEV;
	}
	if (access("/dev/cuse", R_OK | W_OK) < 0) {
		*ret_error = g_strdup_printf("cannot open /dev/cuse: %s (run as root)",
					     g_strerror(errno));
		return -EACCES;
	}
	/* Tests set this to reach CUSE's own (silent) duplicate-name abort. */
	if (g_getenv("V4L2CUSE_TEST_SKIP_NAME_CHECK"))
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(where); i++) {
		g_autofree char *p = g_strconcat(where[i], name, NULL);

		if (access(p, F_OK) == 0) {
			*ret_error = g_strdup_printf("device name '%s' is already taken (%s exists)",
						     name, p);
			return -EEXIST;
		}
	}
	return 0;
}

/* libfuse's messages go to g_log with the daemon's other ones (the journal). */
static void
cuse_fuse_log(enum fuse_log_level level, const char *fmt, va_list ap)
{
	g_autofree char *msg = g_strdup_vprintf(fmt, ap);
	GLogLevelFlags gl = level <= FUSE_LOG_ERR ? G_LOG_LEVEL_WARNING
			    : level <= FUSE_LOG_NOTICE ? G_LOG_LEVEL_MESSAGE
			    : level <= FUSE_LOG_INFO ? G_LOG_LEVEL_INFO : G_LOG_LEVEL_DEBUG;

	g_strchomp(msg);
	g_log("v4l2cuse-fuse", gl, "%s", msg);
}

static void
cuse_free_struct(struct v4l2cuse_cuse *c)
{
	g_free(c->devname_arg);
	g_free(c->name);
	g_free(c);
}

/* Register /dev/@c->name with @ops and serve it from the main loop. */
static int
cuse_start(struct v4l2cuse_cuse *c, const struct cuse_lowlevel_ops *ops, char **ret_error)
{
	const char *dev_info_argv[1];
	char *argv[] = { (char *)"v4l2cuse", (char *)"-f", (char *)"-s", NULL };
	int multithreaded = 0, fd, r;

	c->devname_arg = g_strdup_printf("DEVNAME=%s", c->name);
	dev_info_argv[0] = c->devname_arg;

	r = v4l2cuse_cuse_precheck(c->name, ret_error);
	if (r < 0)
		return r;
	fuse_set_log_func(cuse_fuse_log);

	struct cuse_info ci = {
		.dev_major = 0,		/* dynamic */
		.dev_minor = 0,
		.dev_info_argc = 1,
		.dev_info_argv = dev_info_argv,
		.flags = CUSE_UNRESTRICTED_IOCTL,
	};

	c->se = cuse_lowlevel_setup(3, argv, &ci, ops, &multithreaded, c);
	if (!c->se) {
		*ret_error = g_strdup("cannot set up the CUSE session (see the libfuse message "
				      "logged before this one)");
		return -EIO;
	}
	/* GLib owns the signals; children must not inherit /dev/cuse. */
	fuse_remove_signal_handlers(c->se);
	fd = fuse_session_fd(c->se);
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	c->watch = v4l2cuse_fd_watch_add(fd, G_IO_IN, cuse_dispatch, c);
	return 0;
}

struct v4l2cuse_cuse *
v4l2cuse_cuse_new(struct v4l2cuse_device *dev, mode_t mode, gid_t gid,
		  v4l2cuse_cuse_state_fn state_cb, void *data, char **ret_error)
{
	struct v4l2cuse_cuse *c = g_new0(struct v4l2cuse_cuse, 1);

	c->dev = dev;
	c->name = g_strdup(v4l2cuse_device_name(dev));
	c->mode = mode;
	c->gid = gid;
	c->state_cb = state_cb;
	c->state_data = data;
	if (cuse_start(c, &cuse_ops, ret_error) < 0) {
		cuse_free_struct(c);
		return NULL;
	}
	v4l2cuse_device_set_poll_ops(dev, &cuse_poll_ops);
	return c;
}

struct v4l2cuse_cuse *
v4l2cuse_cuse_new_lbctl(struct v4l2cuse_lbctl *ctl, mode_t mode, gid_t gid,
			v4l2cuse_cuse_state_fn state_cb, void *data, char **ret_error)
{
	struct v4l2cuse_cuse *c = g_new0(struct v4l2cuse_cuse, 1);

	c->ctl = ctl;
	c->name = g_strdup(V4L2CUSE_LBCTL_NAME);
	c->mode = mode;
	c->gid = gid;
	c->state_cb = state_cb;
	c->state_data = data;
	if (cuse_start(c, &cuse_ctl_ops, ret_error) < 0) {
		cuse_free_struct(c);
		return NULL;
	}
	return c;
}

void
v4l2cuse_cuse_free(struct v4l2cuse_cuse *c)
{
	if (!c)
		return;
	if (c->watch)
		g_source_remove(c->watch);
	/* Answer every parked request before the node goes away (the control
	 * device's owner answers its own). */
	if (c->dev)
		v4l2cuse_device_cancel_all(c->dev, -ENODEV);
	/*
	 * Closes /dev/cuse: the node vanishes. (Not cuse_lowlevel_teardown():
	 * we removed libfuse's signal handlers already and it would complain.)
	 */
	if (c->se)
		fuse_session_destroy(c->se);
	free(c->buf.mem);
	cuse_free_struct(c);
}

struct v4l2cuse_device *
v4l2cuse_cuse_device(struct v4l2cuse_cuse *c)
{
	return c->dev;
}

int
v4l2cuse_cuse_error(struct v4l2cuse_cuse *c)
{
	return c->error;
}
