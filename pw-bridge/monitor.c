/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Which v4l2cuse nodes exist, and what each offers.
 *
 * CUSE nodes are in sysfs class "cuse", not "video4linux", so nothing that
 * finds cameras through udev sees them. We scan /sys/class/cuse once, then
 * follow /dev with inotify: IN_CREATE/IN_MOVED_TO for a new node, IN_ATTRIB
 * because the daemon sets the node's group and mode right after creating
 * it (a user who could not open it a moment ago now can), IN_DELETE/
 * IN_MOVED_FROM for a node gone (a device removed, the daemon stopped).
 *
 * A probe opens the node, so it runs in a worker thread: an open or ioctl
 * on a CUSE node waits for its daemon, and a daemon that is slow to answer
 * must not stall the cameras already published. Each name has at most one
 * probe in flight; events that arrive meanwhile are remembered and probed
 * again once it ends, and a result that a removal overtook is dropped.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>
#include <gio/gio.h>
#include <glib-unix.h>

#include "util/cleanup.h"
#include "shim-client.h"
#include "bridge.h"

#define SYSFS_CUSE "/sys/class/cuse"

enum entry_state {
	ENTRY_IDLE,		/* not ours, not openable, or gone */
	ENTRY_PROBING,		/* a probe is in flight */
	ENTRY_PUBLISHED,	/* reported through added() */
};

struct entry {
	char *name;
	enum entry_state state;
	unsigned int gen;	/* bumped when the node goes away */
	bool again;		/* an event arrived during the probe */
	dev_t rdev;		/* PUBLISHED: the node we reported */
};

struct bridge_monitor {
	int refs;		/* the owner and every probe in flight */
	char *dev_dir;
	int inotify_fd;
	guint watch_id;
	GHashTable *entries;	/* name -> struct entry */
	GCancellable *cancel;
	bridge_monitor_added_fn added;
	bridge_monitor_removed_fn removed;
	void *user_data;
};

struct probe {
	struct bridge_monitor *m;
	char *name;
	unsigned int gen;
};

void
bridge_device_free(struct bridge_device *d)
{
	if (!d)
		return;
	g_free(d->name);
	g_free(d->path);
	g_free(d->card);
	g_free(d->bus_info);
	g_free(d->modes);
	g_free(d);
}

/* A format PipeWire has a name for. */
static bool
spa_usable(uint32_t fourcc)
{
	uint32_t subtype, spa_format;

	return bridge_fourcc_to_spa(fourcc, &subtype, &spa_format);
}

/* Is @dir/@name a CUSE character device? (An O_PATH open calls no driver.) */
static bool
node_is_cuse(const char *dir, const char *name, dev_t *ret_rdev)
{
	g_autofree char *path = g_build_filename(dir, name, NULL);
	_cleanup_close_ int fd = open(path, O_PATH | O_CLOEXEC);

	return fd >= 0 && shim_is_cuse_node(fd, ret_rdev);
}

int
bridge_device_probe(const char *dir, const char *name, struct bridge_device **ret)
{
	g_autofree char *path = g_build_filename(dir, name, NULL);
	_cleanup_(bridge_device_freep) struct bridge_device *d = NULL;
	g_autoptr(GArray) modes = g_array_new(FALSE, TRUE, sizeof(struct client_mode));
	_cleanup_close_ int fd = -1;
	struct v4l2_capability cap = { 0 };
	struct v4l2cuse_info info = { 0 };
	struct stat st;
	uint32_t caps;
	bool feed;
	dev_t rdev;
	int r;

	/*
	 * Only a CUSE character device gets opened, and only it gets our
	 * private ioctl (a kernel driver could give the number another
	 * meaning).
	 */
	if (!node_is_cuse(dir, name, &rdev))
		return -ENODEV;
	fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || st.st_rdev != rdev)
		return -ENODEV;		/* replaced between the two opens */
	if (client_xioctl(fd, VIDIOC_V4L2CUSE_INFO, &info) < 0 || info.magic != V4L2CUSE_INFO_MAGIC)
		return -ENODEV;		/* another CUSE device (osspd, ...) */
	/* A USB camera now (docs/usb.md): PipeWire lists its uvcvideo node itself. */
	if (info.flags & V4L2CUSE_INFO_USB_FACE)
		return -ENODEV;
	r = client_xioctl(fd, VIDIOC_QUERYCAP, &cap);
	if (r < 0)
		return r;
	caps = cap.capabilities & V4L2_CAP_DEVICE_CAPS ? cap.device_caps : cap.capabilities;
	/*
	 * A pipewire: device: its writer node is ours to feed (feed.c); its
	 * capture node is not published, PipeWire has the camera already.
	 */
	feed = (info.flags & V4L2CUSE_INFO_FEED) && (caps & V4L2_CAP_VIDEO_OUTPUT);
	if (!feed && (!(caps & V4L2_CAP_VIDEO_CAPTURE) || (info.flags & V4L2CUSE_INFO_FEED)))
		return -ENODEV;
	if (!feed) {
		r = client_probe_modes(fd, spa_usable, modes);
		if (r < 0)
			return r;
	}

	d = g_new0(struct bridge_device, 1);
	d->name = g_strdup(name);
	d->path = g_steal_pointer(&path);
	d->rdev = rdev;
	d->feed = feed;
	d->info = info;
	d->info.name[sizeof(d->info.name) - 1] = '\0';
	d->info.id[sizeof(d->info.id) - 1] = '\0';
	d->card = g_strndup((const char *)cap.card, sizeof(cap.card));
	d->bus_info = g_strndup((const char *)cap.bus_info, sizeof(cap.bus_info));
	d->n_modes = modes->len;
	d->modes = (struct client_mode *)(void *)g_array_free(g_steal_pointer(&modes), FALSE);
	*ret = steal_ptr(&d);
	return 0;
}

static struct bridge_monitor *
monitor_ref(struct bridge_monitor *m)
{
	m->refs++;
	return m;
}

static void
monitor_unref(struct bridge_monitor *m)
{
	if (--m->refs > 0)
		return;
	g_hash_table_destroy(m->entries);
	g_object_unref(m->cancel);
	g_free(m->dev_dir);
	g_free(m);
}

static void
entry_free(gpointer p)
{
	struct entry *e = p;

	g_free(e->name);
	g_free(e);
}

static void probe_start(struct bridge_monitor *m, struct entry *e);

static void
probe_thread(GTask *task, gpointer source, gpointer task_data, GCancellable *cancel)
{
	struct probe *p = task_data;
	struct bridge_device *dev = NULL;
	int r;

	r = bridge_device_probe(p->m->dev_dir, p->name, &dev);
	if (r < 0)
		g_task_return_new_error(task, G_IO_ERROR, g_io_error_from_errno(-r), "%s",
					g_strerror(-r));
	else
		g_task_return_pointer(task, dev, (GDestroyNotify)bridge_device_free);
}

static void
probe_free(gpointer data)
{
	struct probe *p = data;

	g_free(p->name);
	g_free(p);
}

static void
probe_done(GObject *source, GAsyncResult *res, gpointer user_data)
{
	struct probe *p = g_task_get_task_data(G_TASK(res));
	struct bridge_monitor *m = p->m;
	g_autoptr(GError) error = NULL;
	struct bridge_device *dev;
	struct entry *e;

	dev = g_task_propagate_pointer(G_TASK(res), &error);
	if (g_cancellable_is_cancelled(m->cancel)) {
		bridge_device_free(dev);
		goto out;
	}
	e = g_hash_table_lookup(m->entries, p->name);
	g_assert(e && e->state == ENTRY_PROBING);
	e->state = ENTRY_IDLE;
	if (e->gen != p->gen) {
		/* The node went away meanwhile: whatever we found is stale. */
		bridge_device_free(dev);
	} else if (dev) {
		g_debug("%s: ours (device \"%s\", %u modes)", p->name, dev->info.id,
			dev->n_modes);
		e->state = ENTRY_PUBLISHED;
		e->rdev = dev->rdev;
		e->again = false;
		m->added(dev, m->user_data);
	} else if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED)) {
		/* IN_ATTRIB brings us back when the group or ACL changes. */
		g_debug("%s: not accessible to this user yet", p->name);
	} else if (!g_error_matches(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND) &&
		   !g_error_matches(error, G_IO_ERROR, G_IO_ERROR_NO_SUCH_DEVICE)) {
		g_message("%s/%s: cannot read the device's formats: %s", m->dev_dir, p->name,
			  error->message);
	}
	if (e->state == ENTRY_IDLE && e->again) {
		e->again = false;
		probe_start(m, e);
	}
out:
	monitor_unref(m);
}

static void
probe_start(struct bridge_monitor *m, struct entry *e)
{
	g_autoptr(GTask) task = g_task_new(NULL, m->cancel, probe_done, NULL);
	struct probe *p = g_new0(struct probe, 1);

	p->m = monitor_ref(m);
	p->name = g_strdup(e->name);
	p->gen = e->gen;
	e->state = ENTRY_PROBING;
	g_task_set_task_data(task, p, probe_free);
	g_task_run_in_thread(task, probe_thread);
}

static struct entry *
entry_get(struct bridge_monitor *m, const char *name)
{
	struct entry *e = g_hash_table_lookup(m->entries, name);

	if (!e) {
		e = g_new0(struct entry, 1);
		e->name = g_strdup(name);
		g_hash_table_insert(m->entries, e->name, e);
	}
	return e;
}

static bool
node_is(const struct bridge_monitor *m, const char *name, dev_t rdev)
{
	dev_t now;

	return node_is_cuse(m->dev_dir, name, &now) && now == rdev;
}

static void
node_gone(struct bridge_monitor *m, const char *name)
{
	struct entry *e = g_hash_table_lookup(m->entries, name);

	if (!e)
		return;
	e->gen++;
	e->again = false;
	if (e->state == ENTRY_PUBLISHED) {
		e->state = ENTRY_IDLE;
		m->removed(name, m->user_data);
	}
	if (e->state == ENTRY_IDLE)
		g_hash_table_remove(m->entries, name);
}

/* Something happened to @name: probe it unless it is published unchanged. */
static void
node_event(struct bridge_monitor *m, const char *name)
{
	struct entry *e = entry_get(m, name);

	switch (e->state) {
	case ENTRY_PROBING:
		e->again = true;
		break;
	case ENTRY_PUBLISHED: {
		g_autofree char *path = g_build_filename(m->dev_dir, name, NULL);

		/*
		 * Still the same node, and still ours to open: the daemon makes
		 * a node root's alone when its USB face takes over (docs/usb.md).
		 */
		if (node_is(m, name, e->rdev) && access(path, R_OK | W_OK) == 0)
			break;
		/* Replaced behind our back (a lost event): start over. */
		node_gone(m, name);
		probe_start(m, entry_get(m, name));
		break;
	}
	case ENTRY_IDLE:
		probe_start(m, e);
		break;
	}
}

/* What exists now: every CUSE device, and every published node checked. */
static void
monitor_scan(struct bridge_monitor *m)
{
	g_autoptr(GPtrArray) gone = g_ptr_array_new_with_free_func(g_free);
	GHashTableIter it;
	struct entry *e;
	DIR *dir;
	struct dirent *de;

	g_hash_table_iter_init(&it, m->entries);
	while (g_hash_table_iter_next(&it, NULL, (gpointer *)&e)) {
		if (e->state == ENTRY_PUBLISHED && !node_is(m, e->name, e->rdev))
			g_ptr_array_add(gone, g_strdup(e->name));
	}
	for (unsigned int i = 0; i < gone->len; i++)
		node_gone(m, gone->pdata[i]);

	dir = opendir(SYSFS_CUSE);
	if (!dir) {
		g_debug(SYSFS_CUSE ": %s (no CUSE device yet)", g_strerror(errno));
		return;
	}
	while ((de = readdir(dir))) {
		if (de->d_name[0] != '.')
			node_event(m, de->d_name);
	}
	closedir(dir);
}

static gboolean
on_inotify(gint fd, GIOCondition cond, gpointer user_data)
{
	struct bridge_monitor *m = user_data;
	/* The kernel hands out whole events, aligned for struct inotify_event. */
	char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;

	for (;;) {
		n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)(void *)p;

			p += sizeof(*ev) + ev->len;
			if (ev->mask & IN_Q_OVERFLOW) {
				g_debug("inotify queue overflow: rescanning");
				monitor_scan(m);
				continue;
			}
			if (!ev->len || ev->name[0] == '.')
				continue;
			if (ev->mask & (IN_DELETE | IN_MOVED_FROM))
				node_gone(m, ev->name);
			if (ev->mask & (IN_CREATE | IN_MOVED_TO | IN_ATTRIB)) {
				/* Most of /dev is not ours: no probe for those. */
				dev_t rdev;

				if (node_is_cuse(m->dev_dir, ev->name, &rdev))
					node_event(m, ev->name);
			}
		}
	}
	return G_SOURCE_CONTINUE;
}

struct bridge_monitor *
bridge_monitor_new(const char *dev_dir, bridge_monitor_added_fn added,
		   bridge_monitor_removed_fn removed, void *user_data, GError **error)
{
	struct bridge_monitor *m;
	_cleanup_close_ int fd = -1;

	fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (fd < 0 || inotify_add_watch(fd, dev_dir, IN_CREATE | IN_DELETE | IN_ATTRIB |
					IN_MOVED_FROM | IN_MOVED_TO | IN_ONLYDIR) < 0) {
		int e = errno;

		g_set_error(error, G_IO_ERROR, g_io_error_from_errno(e), "cannot watch %s: %s",
			    dev_dir, g_strerror(e));
		return NULL;
	}
	m = g_new0(struct bridge_monitor, 1);
	m->refs = 1;
	m->dev_dir = g_strdup(dev_dir);
	m->inotify_fd = steal_fd(&fd);
	m->entries = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, entry_free);
	m->cancel = g_cancellable_new();
	m->added = added;
	m->removed = removed;
	m->user_data = user_data;
	m->watch_id = g_unix_fd_add(m->inotify_fd, G_IO_IN, on_inotify, m);
	return m;
}

void
bridge_monitor_start(struct bridge_monitor *m)
{
	monitor_scan(m);
}

void
bridge_monitor_free(struct bridge_monitor *m)
{
	if (!m)
		return;
	/* Probes in flight finish in their threads and report to nobody. */
	g_cancellable_cancel(m->cancel);
	g_source_remove(m->watch_id);
	close(m->inotify_fd);
	monitor_unref(m);
}
