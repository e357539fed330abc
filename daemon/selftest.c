/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The readiness self-test, run off the dispatcher thread (see selftest.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <glib.h>
#include <glib-unix.h>
#include <linux/videodev2.h>

#include "v4l2cuse/ctl-protocol.h"
#include "device.h"
#include "selftest.h"

#define SELFTEST_THREADS 2

struct selftest_job {
	struct v4l2cuse_selftest *st;
	uint64_t tag;
	char *node;
	char *id;
	mode_t mode;
	gid_t gid;
	int r;
	char *error;
};

struct v4l2cuse_selftest {
	GThreadPool *pool;
	GAsyncQueue *results;		/* struct selftest_job *, done */
	int efd;
	guint watch;
	v4l2cuse_selftest_done_fn done;
	void *data;
};

static void
job_free(struct selftest_job *j)
{
	g_free(j->node);
	g_free(j->id);
	g_free(j->error);
	g_free(j);
}

static int
xioctl(int fd, unsigned long cmd, void *arg)
{
	int r;

	do {
		r = ioctl(fd, cmd, arg);
	} while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : 0;
}

/*
 * The node and its sysfs entry agree: /dev/NODE is the character device
 * /sys/class/cuse/NODE/dev names, so it is a CUSE node and not a leftover.
 */
static int
check_sysfs(const char *node, const struct stat *st, char **ret_error)
{
	g_autofree char *path = g_strdup_printf("/sys/class/cuse/%s/dev", node);
	g_autofree char *text = NULL;
	unsigned int maj, min;

	if (!g_file_get_contents(path, &text, NULL, NULL) ||
	    sscanf(text, "%u:%u", &maj, &min) != 2) {
		*ret_error = g_strdup_printf("%s is missing: not a CUSE device", path);
		return -ENODEV;
	}
	if (major(st->st_rdev) != maj || minor(st->st_rdev) != min) {
		*ret_error = g_strdup_printf("/dev/%s is %u:%u but the CUSE device is %u:%u",
					     node, major(st->st_rdev), minor(st->st_rdev), maj,
					     min);
		return -ENODEV;
	}
	return 0;
}

static int
check_perms(const struct v4l2cuse_selftest_spec *spec, const struct stat *st,
	    char **ret_error)
{
	if ((st->st_mode & 07777) != spec->mode) {
		*ret_error = g_strdup_printf("/dev/%s has mode %04o, expected %04o", spec->node,
					     (unsigned int)(st->st_mode & 07777),
					     (unsigned int)spec->mode);
		return -EPERM;
	}
	if (spec->gid != (gid_t)-1 && st->st_gid != spec->gid) {
		*ret_error = g_strdup_printf("/dev/%s has group %u, expected %u", spec->node,
					     (unsigned int)st->st_gid, (unsigned int)spec->gid);
		return -EPERM;
	}
	return 0;
}

/* QUERYCAP, the instance nonce, name and id, then the node's permissions. */
static int
check_fd(int fd, const char *path, const struct v4l2cuse_selftest_spec *spec,
	 char **ret_error)
{
	struct v4l2_capability cap = { 0 };
	struct v4l2cuse_info info = { 0 };
	struct stat st;
	int r;

	r = xioctl(fd, VIDIOC_QUERYCAP, &cap);
	if (r < 0) {
		*ret_error = g_strdup_printf("QUERYCAP on %s failed: %s", path, g_strerror(-r));
		return r;
	}
	if (strcmp((const char *)cap.driver, "v4l2cuse") != 0 ||
	    !(cap.device_caps & V4L2_CAP_VIDEO_CAPTURE)) {
		*ret_error = g_strdup_printf("%s is driver '%.16s', not a v4l2cuse capture node",
					     path, (const char *)cap.driver);
		return -ENODEV;
	}
	r = xioctl(fd, VIDIOC_V4L2CUSE_INFO, &info);
	if (r < 0) {
		*ret_error = g_strdup_printf("the info ioctl on %s failed: %s", path,
					     g_strerror(-r));
		return r;
	}
	if (info.magic != V4L2CUSE_INFO_MAGIC || info.nonce != v4l2cuse_instance_nonce()) {
		*ret_error = g_strdup_printf("%s is served by another v4l2cuse (pid %u)", path,
					     info.pid);
		return -EADDRINUSE;
	}
	if (strncmp(info.name, spec->node, sizeof(info.name)) != 0 ||
	    strncmp(info.id, spec->id, sizeof(info.id)) != 0) {
		*ret_error = g_strdup_printf("%s answers as %.32s (%.32s), expected %s (%s)", path,
					     info.name, info.id, spec->node, spec->id);
		return -ENODEV;
	}
	if (fstat(fd, &st) < 0) {
		r = -errno;
		*ret_error = g_strdup_printf("fstat %s: %s", path, g_strerror(-r));
		return r;
	}
	return check_perms(spec, &st, ret_error);
}

int
v4l2cuse_selftest_check(const struct v4l2cuse_selftest_spec *spec, char **ret_error)
{
	g_autofree char *path = g_strdup_printf("/dev/%s", spec->node);
	struct stat st;
	int fd, r;

	errno = 0;
	if (stat(path, &st) < 0 || !S_ISCHR(st.st_mode)) {
		*ret_error = g_strdup_printf("%s is not there (%s)", path,
					     errno ? g_strerror(errno) : "not a device");
		return -ENOENT;
	}
	r = check_sysfs(spec->node, &st, ret_error);
	if (r < 0)
		return r;

	fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0 && errno == EPERM) {
		/*
		 * A device cgroup (systemd DevicePolicy=closed) that cannot
		 * list our dynamic major: the sysfs check above is all we
		 * can do. docs/service.md explains the trade-off.
		 */
		static gsize warned;

		if (g_once_init_enter(&warned)) {
			g_message("self-test: the device policy forbids opening our own nodes; "
				  "checking them in sysfs only");
			g_once_init_leave(&warned, 1);
		}
		return check_perms(spec, &st, ret_error);
	}
	if (fd < 0) {
		r = -errno;
		*ret_error = g_strdup_printf("cannot open %s: %s", path, g_strerror(-r));
		return r;
	}
	r = check_fd(fd, path, spec, ret_error);
	close(fd);		/* the RELEASE round trip: the loop answers it */
	return r;
}

/* ---------------------------------------------------------------------- */

static void
selftest_worker(gpointer data, gpointer user_data)
{
	struct selftest_job *j = data;
	struct v4l2cuse_selftest_spec spec = {
		.node = j->node, .id = j->id, .mode = j->mode, .gid = j->gid,
	};
	uint64_t one = 1;

	j->r = v4l2cuse_selftest_check(&spec, &j->error);
	g_async_queue_push(j->st->results, j);
	if (write(j->st->efd, &one, sizeof(one)) < 0)
		g_debug("self-test: eventfd write failed: %s", g_strerror(errno));
}

static gboolean
selftest_on_results(int fd, GIOCondition cond, gpointer data)
{
	struct v4l2cuse_selftest *st = data;
	struct selftest_job *j;
	uint64_t n;

	if (read(fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		g_debug("self-test: eventfd read failed: %s", g_strerror(errno));
	while ((j = g_async_queue_try_pop(st->results))) {
		st->done(st->data, j->tag, j->r, j->error);
		job_free(j);
	}
	return G_SOURCE_CONTINUE;
}

struct v4l2cuse_selftest *
v4l2cuse_selftest_new(v4l2cuse_selftest_done_fn done, void *data)
{
	struct v4l2cuse_selftest *st = g_new0(struct v4l2cuse_selftest, 1);

	st->done = done;
	st->data = data;
	st->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (st->efd < 0)
		g_error("eventfd: %s", g_strerror(errno));	/* out of fds at start */
	st->results = g_async_queue_new();
	st->pool = g_thread_pool_new_full(selftest_worker, st, (GDestroyNotify)job_free,
					  SELFTEST_THREADS, FALSE, NULL);
	st->watch = g_unix_fd_add(st->efd, G_IO_IN, selftest_on_results, st);
	return st;
}

void
v4l2cuse_selftest_free(struct v4l2cuse_selftest *st)
{
	struct selftest_job *j;

	if (!st)
		return;
	/* Queued jobs are dropped, running ones finish (their nodes are gone). */
	g_thread_pool_free(st->pool, TRUE, TRUE);
	g_source_remove(st->watch);
	while ((j = g_async_queue_try_pop(st->results)))
		job_free(j);
	g_async_queue_unref(st->results);
	close(st->efd);
	g_free(st);
}

void
v4l2cuse_selftest_submit(struct v4l2cuse_selftest *st, uint64_t tag,
			 const struct v4l2cuse_selftest_spec *spec)
{
	struct selftest_job *j = g_new0(struct selftest_job, 1);

	j->st = st;
	j->tag = tag;
	j->node = g_strdup(spec->node);
	j->id = g_strdup(spec->id);
	j->mode = spec->mode;
	j->gid = spec->gid;
	g_thread_pool_push(st->pool, j, NULL);
}
