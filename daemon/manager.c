/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The devices of one daemon (see manager.h). Each device goes
 *
 *   built --register--> registering --READY--> testing --pass--> serving
 *                            |                     |                |
 *                            +-- FAILED -----------+-- fail --------+-- ENDED
 *                                                  v
 *                               failed (retry timer) --> built again ...
 *                               gave-up (retry-limit reached, or retry off)
 *
 * A failure tears down the device's CUSE session, shim socket and device
 * (clients of an ENDED node must reopen anyway) and a retry builds them
 * again. Teardown never runs inside the CUSE state callback: it is
 * deferred to an idle callback.
 */
#include "config.h"

#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <glib.h>

#include "videobuf.h"
#include "device.h"
#include "hub.h"
#include "loopback.h"
#include "cuse.h"
#include "shim.h"
#include "selftest.h"
#include "manager.h"

#define MGR_NODE_FIRST	32	/* docs/cuse.md, "Names" */
#define MGR_NODE_LAST	63

enum mdev_state {
	MDEV_BUILT,		/* device made, not registered */
	MDEV_REGISTERING,	/* CUSE init in flight */
	MDEV_TESTING,		/* the node exists; self-test running */
	MDEV_SERVING,
	MDEV_FAILED,		/* torn down, retry timer armed */
	MDEV_GAVE_UP,		/* torn down for good */
};

static const char *const mdev_state_names[] = {
	[MDEV_BUILT] = "built",
	[MDEV_REGISTERING] = "registering",
	[MDEV_TESTING] = "testing",
	[MDEV_SERVING] = "serving",
	[MDEV_FAILED] = "failed",
	[MDEV_GAVE_UP] = "gave-up",
};

struct mdev {
	struct v4l2cuse_manager *m;
	struct v4l2cuse_conf_device *conf;	/* what it was built from (owned) */
	bool runtime;			/* added by v4l2cuse-ctl add */
	char *node;			/* resolved node name */
	struct v4l2cuse_device *dev;
	struct v4l2cuse_cuse *cuse;
	struct v4l2cuse_shim *shim;
	/* A loopback source's writer node (daemon/loopback.h), made and gone with it. */
	char *writer_node;
	struct v4l2cuse_device *wdev;
	struct v4l2cuse_cuse *wcuse;
	struct v4l2cuse_shim *wshim;
	enum mdev_state state;
	char *error;			/* the last failure */
	char *reported;			/* the last failure logged as a warning */
	unsigned int failures;		/* in a row */
	bool settled;			/* first attempt over */
	bool teardown_pending;
	uint64_t tag;			/* of the self-test we wait for */
	guint retry_source;
	guint timeout_source;
	guint idle_source;		/* deferred failure handling */
	gint64 retry_at;		/* monotonic µs */
};

struct v4l2cuse_manager {
	struct v4l2cuse_manager_events ev;
	void *data;
	bool stop_on_failure;
	struct v4l2cuse_conf *conf;	/* daemon settings in force */
	struct vb_budget *budget;	/* buffer-memory-limit of all devices together */
	struct v4l2cuse_hub *hub;	/* cameras and files shared between devices */
	GPtrArray *devs;		/* struct mdev * */
	struct v4l2cuse_selftest *selftest;
	uint64_t next_tag;
	bool waiting_settle;		/* report settled() when all are */
};

static void mdev_register(struct mdev *md);
static void mdev_fail(struct mdev *md, char *error);

/* ---------------------------------------------------------------------- */

static void
mgr_changed(struct v4l2cuse_manager *m)
{
	if (m->ev.changed)
		m->ev.changed(m->data);
}

/* A device's consumers came or went: STATUS follows without polling. */
static void
mgr_device_changed(void *data)
{
	mgr_changed(data);
}

static void
mgr_check_settled(struct v4l2cuse_manager *m)
{
	if (!m->waiting_settle || !v4l2cuse_manager_settled(m))
		return;
	m->waiting_settle = false;
	if (m->ev.settled)
		m->ev.settled(m->data);
}

static void
mdev_settle(struct mdev *md)
{
	md->settled = true;
	mgr_changed(md->m);
	mgr_check_settled(md->m);
}

static struct mdev *
mgr_find(struct v4l2cuse_manager *m, const char *id)
{
	for (unsigned int i = 0; i < m->devs->len; i++) {
		struct mdev *md = m->devs->pdata[i];

		if (strcmp(md->conf->id, id) == 0)
			return md;
	}
	return NULL;
}

static bool
node_in(GPtrArray *devs, const char *node, const struct mdev *skip)
{
	for (unsigned int i = 0; devs && i < devs->len; i++) {
		const struct mdev *md = devs->pdata[i];

		if (md != skip && ((md->node && strcmp(md->node, node) == 0) ||
				   (md->writer_node && strcmp(md->writer_node, node) == 0)))
			return true;
	}
	return false;
}

static bool
node_exists(const char *node)
{
	static const char *const where[] = { "/dev/", "/sys/class/cuse/",
					     "/sys/class/video4linux/" };

	for (size_t i = 0; i < G_N_ELEMENTS(where); i++) {
		g_autofree char *p = g_strconcat(where[i], node, NULL);

		if (access(p, F_OK) == 0)
			return true;
	}
	return false;
}

/* A free videoN, 32 <= N <= 63, not used by @a or @b, nor @also (may be NULL). */
static char *
pick_node(GPtrArray *a, GPtrArray *b, const char *also)
{
	for (unsigned int n = MGR_NODE_FIRST; n <= MGR_NODE_LAST; n++) {
		g_autofree char *node = g_strdup_printf("video%u", n);

		if (!node_in(a, node, NULL) && !node_in(b, node, NULL) &&
		    g_strcmp0(node, also) != 0 && !node_exists(node))
			return g_steal_pointer(&node);
	}
	return NULL;
}

/* ---------------------------------------------------------------------- */
/* One device */

static void
mdev_teardown(struct mdev *md)
{
	if (md->timeout_source) {
		g_source_remove(md->timeout_source);
		md->timeout_source = 0;
	}
	md->tag = 0;		/* a late self-test result is ignored */
	/* Answers parked requests (ENODEV) and closes /dev/cuse: the node goes. */
	g_clear_pointer(&md->cuse, v4l2cuse_cuse_free);
	g_clear_pointer(&md->wcuse, v4l2cuse_cuse_free);
	g_clear_pointer(&md->shim, v4l2cuse_shim_free);
	g_clear_pointer(&md->wshim, v4l2cuse_shim_free);
	g_clear_pointer(&md->dev, v4l2cuse_device_free);
	g_clear_pointer(&md->wdev, v4l2cuse_device_free);
}

static void
mdev_free(struct mdev *md)
{
	if (md->retry_source)
		g_source_remove(md->retry_source);
	if (md->idle_source)
		g_source_remove(md->idle_source);
	mdev_teardown(md);
	v4l2cuse_conf_device_free(md->conf);
	g_free(md->node);
	g_free(md->writer_node);
	g_free(md->error);
	g_free(md->reported);
	g_free(md);
}

/* Make the device object; no CUSE yet. */
static int
mdev_build_device(struct mdev *md, char **ret_error)
{
	struct v4l2cuse_device_config cfg;
	g_autofree char *err = NULL, *spec = NULL;

	v4l2cuse_conf_device_config(md->conf, &cfg);
	cfg.name = md->node;
	cfg.global_budget = md->m->budget;
	cfg.hub = md->m->hub;
	if (md->writer_node)
		spec = v4l2cuse_loopback_spec_with_writer(cfg.source, md->writer_node);
	if (spec)
		cfg.source = spec;
	cfg.changed = mgr_device_changed;
	cfg.changed_data = md->m;
	md->dev = v4l2cuse_device_new(&cfg, &err);
	if (!md->dev) {
		*ret_error = g_strdup_printf("%s: %s", md->conf->where_source, err);
		return -EINVAL;
	}
	if (!md->writer_node)
		return 0;

	/* The writer node: any format, 640x480 YUYV until a writer sets one. */
	g_autofree char *wspec = g_strdup_printf("loopback-writer:%s", md->writer_node);
	g_autofree char *wlabel = g_strdup_printf("%.22s (writer)", v4l2cuse_device_label(md->dev));
	struct v4l2cuse_device_config wcfg = {
		.name = md->writer_node,
		.label = wlabel,
		.source = wspec,
		.width = 640,
		.height = 480,
		.pixelformat = V4L2_PIX_FMT_YUYV,
		.interval = cfg.interval,
		.id = md->conf->id,
		.buffer_memory_limit = cfg.buffer_memory_limit,
		.global_budget = md->m->budget,
		.hub = md->m->hub,
		.output = true,
		.changed = mgr_device_changed,
		.changed_data = md->m,
	};

	md->wdev = v4l2cuse_device_new(&wcfg, &err);
	if (!md->wdev) {
		*ret_error = g_strdup_printf("%s: writer node %s: %s", md->conf->where_source,
					     md->writer_node, err);
		g_clear_pointer(&md->dev, v4l2cuse_device_free);
		return -EINVAL;
	}
	return 0;
}

static struct mdev *
mdev_new(struct v4l2cuse_manager *m, const struct v4l2cuse_conf_device *d, bool runtime,
	 const char *node, const char *writer_node, char **ret_error)
{
	struct mdev *md = g_new0(struct mdev, 1);

	md->m = m;
	md->conf = v4l2cuse_conf_device_dup(d);
	md->runtime = runtime;
	md->node = g_strdup(node);
	md->writer_node = g_strdup(writer_node);
	if (mdev_build_device(md, ret_error) < 0) {
		mdev_free(md);
		return NULL;
	}
	md->state = MDEV_BUILT;
	return md;
}

static gboolean
mdev_retry_cb(gpointer data)
{
	struct mdev *md = data;
	g_autofree char *err = NULL;

	md->retry_source = 0;
	g_debug("%s: retrying /dev/%s (attempt %u)", md->conf->id, md->node, md->failures + 1);
	if (!md->dev && mdev_build_device(md, &err) < 0) {
		mdev_fail(md, g_steal_pointer(&err));
		return G_SOURCE_REMOVE;
	}
	mdev_register(md);
	return G_SOURCE_REMOVE;
}

static gboolean
mdev_failed_idle(gpointer data)
{
	struct mdev *md = data;
	struct v4l2cuse_manager *m = md->m;
	const struct v4l2cuse_conf *c = m->conf;

	md->idle_source = 0;
	md->teardown_pending = false;
	mdev_teardown(md);
	if (m->stop_on_failure) {
		md->state = MDEV_GAVE_UP;
		if (m->ev.fatal)
			m->ev.fatal(m->data, md->error);
		return G_SOURCE_REMOVE;
	}
	md->failures++;
	if (c->retry_interval_s && (!c->retry_limit || md->failures <= c->retry_limit)) {
		md->state = MDEV_FAILED;
		md->retry_at = g_get_monotonic_time() +
			       (gint64)c->retry_interval_s * G_USEC_PER_SEC;
		md->retry_source = g_timeout_add_seconds(c->retry_interval_s, mdev_retry_cb, md);
		/* Once per distinct reason; the retries themselves are debug noise. */
		if (g_strcmp0(md->error, md->reported))
			g_warning("%s: /dev/%s: %s; retrying every %u s", md->conf->id, md->node,
				  md->error, c->retry_interval_s);
		else
			g_debug("%s: /dev/%s: %s (attempt %u); retrying in %u s", md->conf->id,
				md->node, md->error, md->failures, c->retry_interval_s);
		g_free(md->reported);
		md->reported = g_strdup(md->error);
	} else {
		md->state = MDEV_GAVE_UP;
		g_warning("%s: /dev/%s: %s; giving up%s", md->conf->id, md->node, md->error,
			  c->retry_interval_s ? " (retry-limit reached)" : " (retry-interval=0)");
	}
	mdev_settle(md);
	return G_SOURCE_REMOVE;
}

/* Record the failure now; tear down outside the caller's stack. */
static void
mdev_fail(struct mdev *md, char *error)
{
	g_free(md->error);
	md->error = error;
	if (md->timeout_source) {
		g_source_remove(md->timeout_source);
		md->timeout_source = 0;
	}
	md->tag = 0;
	if (!md->teardown_pending) {
		md->teardown_pending = true;
		md->idle_source = g_idle_add(mdev_failed_idle, md);
	}
}

static void
mdev_on_cuse_state(struct v4l2cuse_cuse *c, enum v4l2cuse_cuse_state state, void *data)
{
	struct mdev *md = data;
	struct v4l2cuse_selftest_spec spec = {
		.node = md->node,
		.id = md->conf->id,
		.mode = md->conf->mode,
		.gid = md->conf->gid,
	};
	int err = v4l2cuse_cuse_error(c);

	switch (state) {
	case V4L2CUSE_CUSE_READY:
		md->state = MDEV_TESTING;
		md->tag = ++md->m->next_tag;
		v4l2cuse_selftest_submit(md->m->selftest, md->tag, &spec);
		g_debug("%s: /dev/%s registered, self-test started", md->conf->id, md->node);
		return;
	case V4L2CUSE_CUSE_FAILED:
		if (err == -EEXIST || err == -ENODEV)
			mdev_fail(md, g_strdup_printf("device name '%s' is already taken: CUSE "
						      "refused to register /dev/%s", md->node,
						      md->node));
		else
			mdev_fail(md, g_strdup_printf("registering /dev/%s failed: %s", md->node,
						      g_strerror(-err)));
		return;
	case V4L2CUSE_CUSE_ENDED:
		mdev_fail(md, g_strdup_printf("the CUSE connection of /dev/%s was aborted",
					      md->node));
		return;
	}
}

/* The writer node of a loopback: its failures are the device's. */
static void
mdev_on_writer_state(struct v4l2cuse_cuse *c, enum v4l2cuse_cuse_state state, void *data)
{
	struct mdev *md = data;
	int err = v4l2cuse_cuse_error(c);

	switch (state) {
	case V4L2CUSE_CUSE_READY:
		g_debug("%s: writer node /dev/%s registered", md->conf->id, md->writer_node);
		return;
	case V4L2CUSE_CUSE_FAILED:
		mdev_fail(md, g_strdup_printf("the writer node's name '%s' is taken or refused: "
					      "%s", md->writer_node, g_strerror(-err)));
		return;
	case V4L2CUSE_CUSE_ENDED:
		mdev_fail(md, g_strdup_printf("the CUSE connection of the writer node /dev/%s "
					      "was aborted", md->writer_node));
		return;
	}
}

static gboolean
mdev_selftest_timeout(gpointer data)
{
	struct mdev *md = data;

	md->timeout_source = 0;
	mdev_fail(md, g_strdup_printf("the self-test of /dev/%s timed out after %u s", md->node,
				      md->m->conf->selftest_timeout_s));
	return G_SOURCE_REMOVE;
}

static void
mdev_register(struct mdev *md)
{
	g_autofree char *err = NULL;
	g_autofree char *sock = NULL;

	md->state = MDEV_REGISTERING;
	/* The preload shim's socket; without it handles stay read()-only. */
	sock = v4l2cuse_shim_socket_path(md->node, &err);
	if (sock)
		md->shim = v4l2cuse_shim_new(md->dev, sock, &err);
	if (!md->shim)
		g_message("%s: no preload shim socket (%s): apps under v4l2cuse-run get "
			  "read() I/O only", md->node, err);
	g_clear_pointer(&err, g_free);

	md->cuse = v4l2cuse_cuse_new(md->dev, md->conf->mode, md->conf->gid,
				     mdev_on_cuse_state, md, &err);
	if (!md->cuse) {
		mdev_fail(md, g_steal_pointer(&err));
		return;
	}
	if (md->wdev) {
		/* A loopback's writer node, with its own shim socket (output streaming). */
		sock = (g_free(sock), v4l2cuse_shim_socket_path(md->writer_node, &err));
		if (sock)
			md->wshim = v4l2cuse_shim_new(md->wdev, sock, &err);
		g_clear_pointer(&err, g_free);
		md->wcuse = v4l2cuse_cuse_new(md->wdev, md->conf->mode, md->conf->gid,
					      mdev_on_writer_state, md, &err);
		if (!md->wcuse) {
			mdev_fail(md, g_strdup_printf("writer node: %s", err));
			return;
		}
	}
	md->timeout_source = g_timeout_add_seconds(md->m->conf->selftest_timeout_s,
						   mdev_selftest_timeout, md);
	mgr_changed(md->m);
}

static void
mgr_selftest_done(void *data, uint64_t tag, int r, const char *error)
{
	struct v4l2cuse_manager *m = data;
	struct mdev *md = NULL;

	for (unsigned int i = 0; i < m->devs->len && !md; i++) {
		struct mdev *x = m->devs->pdata[i];

		if (x->tag == tag && x->state == MDEV_TESTING)
			md = x;
	}
	if (!md)
		return;		/* removed, timed out or failed meanwhile */
	md->tag = 0;
	if (md->timeout_source) {
		g_source_remove(md->timeout_source);
		md->timeout_source = 0;
	}
	if (r < 0) {
		mdev_fail(md, g_strdup_printf("self-test failed: %s", error));
		return;
	}
	md->state = MDEV_SERVING;
	g_message("%s: serving /dev/%s (%s, source %s)%s", md->conf->id, md->node,
		  v4l2cuse_device_label(md->dev), v4l2cuse_device_source_spec(md->dev),
		  md->failures ? " after retrying" : "");
	md->failures = 0;
	g_clear_pointer(&md->error, g_free);
	g_clear_pointer(&md->reported, g_free);
	mdev_settle(md);
}

/* ---------------------------------------------------------------------- */

struct v4l2cuse_manager *
v4l2cuse_manager_new(const struct v4l2cuse_manager_events *ev, void *data,
		     bool stop_on_failure)
{
	struct v4l2cuse_manager *m = g_new0(struct v4l2cuse_manager, 1);

	m->ev = *ev;
	m->data = data;
	m->stop_on_failure = stop_on_failure;
	m->conf = v4l2cuse_conf_new();
	m->budget = vb_budget_new("global buffer memory limit", m->conf->buffer_memory_limit,
				  NULL);
	m->hub = v4l2cuse_hub_new();
	m->devs = g_ptr_array_new();
	m->selftest = v4l2cuse_selftest_new(mgr_selftest_done, m);
	return m;
}

void
v4l2cuse_manager_free(struct v4l2cuse_manager *m)
{
	if (!m)
		return;
	/* Nodes first: a self-test blocked in open() then fails and returns. */
	for (unsigned int i = 0; i < m->devs->len; i++)
		mdev_free(m->devs->pdata[i]);
	g_ptr_array_set_size(m->devs, 0);
	v4l2cuse_selftest_free(m->selftest);
	g_ptr_array_unref(m->devs);
	v4l2cuse_conf_free(m->conf);
	vb_budget_unref(m->budget);
	v4l2cuse_hub_free(m->hub);	/* after the devices: their sources are its taps */
	g_free(m);
}

bool
v4l2cuse_manager_settled(struct v4l2cuse_manager *m)
{
	for (unsigned int i = 0; i < m->devs->len; i++) {
		struct mdev *md = m->devs->pdata[i];

		if (!md->settled)
			return false;
	}
	return true;
}

void
v4l2cuse_manager_count(struct v4l2cuse_manager *m, unsigned int *ret_serving,
		       unsigned int *ret_total)
{
	unsigned int serving = 0;

	for (unsigned int i = 0; i < m->devs->len; i++)
		serving += ((struct mdev *)m->devs->pdata[i])->state == MDEV_SERVING;
	*ret_serving = serving;
	*ret_total = m->devs->len;
}

const struct v4l2cuse_conf *
v4l2cuse_manager_conf(struct v4l2cuse_manager *m)
{
	return m->conf;
}

static void
mgr_remove(struct v4l2cuse_manager *m, struct mdev *md)
{
	g_ptr_array_remove(m->devs, md);
	g_message("%s: removing /dev/%s", md->conf->id, md->node);
	mdev_free(md);
}

/* Register a built device and keep it. */
static void
mgr_start(struct v4l2cuse_manager *m, struct mdev *md)
{
	g_ptr_array_add(m->devs, md);
	mdev_register(md);
}

/* Resolve @d's node for a new device, avoiding @staged and the devices kept. */
static char *
mgr_resolve_node(struct v4l2cuse_manager *m, const struct v4l2cuse_conf_device *d,
		 const struct mdev *old, GPtrArray *staged, GPtrArray *kept, char **ret_error)
{
	if (d->node) {
		if (node_in(kept, d->node, NULL) || node_in(staged, d->node, NULL)) {
			*ret_error = g_strdup_printf("%s node: %s is in use by another device",
						     d->where, d->node);
			return NULL;
		}
		return g_strdup(d->node);
	}
	/* No node= : keep the one it had, else pick a free one. */
	if (old && !node_in(kept, old->node, NULL) && !node_in(staged, old->node, NULL))
		return g_strdup(old->node);
	{
		char *node = pick_node(kept, staged, NULL);

		if (!node)
			*ret_error = g_strdup_printf("%s: no free node name in video%u..video%u",
						     d->where, MGR_NODE_FIRST, MGR_NODE_LAST);
		return node;
	}
}

/*
 * A loopback source's writer node (NULL in *ret_writer for other sources):
 * the one its spec names, else the one @old had, else a free one; never
 * @node (the device's own) nor one @staged or @kept use.
 */
static int
mgr_resolve_writer(const struct v4l2cuse_conf_device *d, const char *node,
		   const struct mdev *old, GPtrArray *staged, GPtrArray *kept,
		   char **ret_writer, char **ret_error)
{
	g_autofree char *writer = NULL, *msg = NULL;

	*ret_writer = NULL;
	if (!v4l2cuse_loopback_is_spec(d->source))
		return 0;
	if (v4l2cuse_loopback_parse(d->source, &writer, &msg) < 0) {
		*ret_error = g_strdup_printf("%s: %s", d->where_source, msg);
		return -EINVAL;
	}
	if (!writer && old && old->writer_node)
		writer = g_strdup(old->writer_node);
	if (!writer)
		writer = pick_node(kept, staged, node);
	if (!writer) {
		*ret_error = g_strdup_printf("%s: no free node name for the writer in "
					     "video%u..video%u", d->where_source, MGR_NODE_FIRST,
					     MGR_NODE_LAST);
		return -EEXIST;
	}
	if (strcmp(writer, node) == 0 || node_in(kept, writer, NULL) ||
	    node_in(staged, writer, NULL)) {
		*ret_error = g_strdup_printf("%s: the writer node %s is in use by another device",
					     d->where_source, writer);
		return -EEXIST;
	}
	*ret_writer = g_steal_pointer(&writer);
	return 0;
}

int
v4l2cuse_manager_apply(struct v4l2cuse_manager *m, struct v4l2cuse_conf *conf,
		       char **ret_error)
{
	g_autoptr(GPtrArray) kept = g_ptr_array_new();		/* struct mdev *, untouched */
	g_autoptr(GPtrArray) staged = g_ptr_array_new();	/* new struct mdev *, built */
	g_autoptr(GPtrArray) replaced = g_ptr_array_new();	/* old one per staged, or NULL */
	g_autoptr(GPtrArray) removed = g_ptr_array_new();
	unsigned int switched = 0;

	/* Phase 1: decide and build; nothing changes yet. */
	for (unsigned int i = 0; i < m->devs->len; i++) {
		struct mdev *md = m->devs->pdata[i];
		const struct v4l2cuse_conf_device *d = v4l2cuse_conf_find(conf, md->conf->id);

		if ((!d && md->runtime) ||
		    (d && d->enabled && v4l2cuse_conf_device_equal(d, md->conf)))
			g_ptr_array_add(kept, md);
		else if (!d || !d->enabled)
			g_ptr_array_add(removed, md);
	}
	for (unsigned int i = 0; i < conf->devices->len; i++) {
		const struct v4l2cuse_conf_device *d = conf->devices->pdata[i];
		struct mdev *old = mgr_find(m, d->id), *md;
		g_autofree char *node = NULL, *writer = NULL;
		char *err = NULL;

		if (!d->enabled || (old && g_ptr_array_find(kept, old, NULL)))
			continue;
		node = mgr_resolve_node(m, d, old, staged, kept, &err);
		if (node && mgr_resolve_writer(d, node, old, staged, kept, &writer, &err) < 0)
			g_clear_pointer(&node, g_free);
		md = node ? mdev_new(m, d, false, node, writer, &err) : NULL;
		if (!md) {
			*ret_error = err;
			for (unsigned int k = 0; k < staged->len; k++)
				mdev_free(staged->pdata[k]);
			return -EINVAL;
		}
		g_ptr_array_add(staged, md);
		g_ptr_array_add(replaced, old);
	}

	/* Phase 2: daemon settings, removals, live switches, registrations. */
	if (m->conf->control_socket && g_strcmp0(m->conf->control_socket, conf->control_socket))
		g_message("control-socket changes take effect at the next start");
	v4l2cuse_conf_free(m->conf);
	m->conf = conf;
	vb_budget_set_limit(m->budget, conf->buffer_memory_limit);
	for (unsigned int i = 0; i < removed->len; i++)
		mgr_remove(m, removed->pdata[i]);
	for (unsigned int i = 0; i < staged->len; i++) {
		struct mdev *md = staged->pdata[i], *old = replaced->pdata[i];
		g_autofree char *err = NULL;

		if (old && old->dev && old->state == MDEV_SERVING &&
		    v4l2cuse_conf_device_equal_but_source(md->conf, old->conf) &&
		    g_strcmp0(md->node, old->node) == 0) {
			/* Only source=, placeholder= or share= changed: switch live. */
			int r = 0;

			if (md->conf->share != old->conf->share)
				r = v4l2cuse_device_set_shared(old->dev, md->conf->share, &err);
			if (r == 0 && g_strcmp0(md->conf->source, old->conf->source) != 0)
				r = v4l2cuse_device_set_source(old->dev, md->conf->source, &err);
			if (r == 0 && g_strcmp0(md->conf->placeholder, old->conf->placeholder) != 0)
				r = v4l2cuse_device_set_placeholder(old->dev, md->conf->placeholder,
								    &err);
			if (r == 0) {
				v4l2cuse_conf_device_free(old->conf);
				old->conf = v4l2cuse_conf_device_dup(md->conf);
				mdev_free(md);
				switched++;
				continue;
			}
			g_message("%s: %s; re-creating the device", old->conf->id, err);
		}
		if (old)
			mgr_remove(m, old);
		mgr_start(m, md);
	}
	g_message("configuration applied: %u devices, %u kept, %u new or re-created, "
		  "%u switched live, %u removed", m->devs->len, kept->len,
		  staged->len - switched, switched, removed->len);
	m->waiting_settle = true;
	mgr_changed(m);
	mgr_check_settled(m);
	return 0;
}

int
v4l2cuse_manager_add(struct v4l2cuse_manager *m, const struct v4l2cuse_conf_device *d,
		     char **ret_error)
{
	struct mdev *md;
	g_autofree char *node = NULL, *writer = NULL;
	int r;

	if (mgr_find(m, d->id)) {
		*ret_error = g_strdup_printf("device '%s' exists already", d->id);
		return -EEXIST;
	}
	node = mgr_resolve_node(m, d, NULL, NULL, m->devs, ret_error);
	if (!node)
		return -EEXIST;
	r = mgr_resolve_writer(d, node, NULL, NULL, m->devs, &writer, ret_error);
	if (r < 0)
		return r;
	md = mdev_new(m, d, true, node, writer, ret_error);
	if (!md)
		return -EINVAL;
	g_message("%s: adding /dev/%s%s%s", d->id, node, writer ? " and its writer node /dev/" : "",
		  writer ? writer : "");
	mgr_start(m, md);
	return 0;
}

int
v4l2cuse_manager_remove(struct v4l2cuse_manager *m, const char *id, char **ret_error)
{
	struct mdev *md = mgr_find(m, id);

	if (!md) {
		*ret_error = g_strdup_printf("no device '%s'", id);
		return -ENOENT;
	}
	mgr_remove(m, md);
	mgr_changed(m);
	mgr_check_settled(m);
	return 0;
}

static struct mdev *
mgr_find_live(struct v4l2cuse_manager *m, const char *id, char **ret_error)
{
	struct mdev *md = mgr_find(m, id);

	if (!md) {
		*ret_error = g_strdup_printf("no device '%s'", id);
		return NULL;
	}
	if (!md->dev) {
		*ret_error = g_strdup_printf("device '%s' is not running (%s)", id,
					     mdev_state_names[md->state]);
		return NULL;
	}
	return md;
}

int
v4l2cuse_manager_set_source(struct v4l2cuse_manager *m, const char *id, const char *spec,
			    char **ret_error)
{
	struct mdev *md = mgr_find_live(m, id, ret_error);
	int r;

	if (!md)
		return -ENOENT;
	r = v4l2cuse_device_set_source(md->dev, spec, ret_error);
	mgr_changed(m);
	return r;
}

int
v4l2cuse_manager_set_placeholder(struct v4l2cuse_manager *m, const char *id,
				 const char *spec, char **ret_error)
{
	struct mdev *md = mgr_find_live(m, id, ret_error);

	if (!md)
		return -ENOENT;
	return v4l2cuse_device_set_placeholder(md->dev, spec, ret_error);
}

/* ---------------------------------------------------------------------- */
/* list and STATUS= */

static void
format_fmt(const struct v4l2cuse_device_stats *st, char *buf, size_t size)
{
	const struct v4l2_fract *iv = &st->interval;

	if (iv->numerator == 1 || iv->numerator == 0)
		snprintf(buf, size, "%ux%u/%.4s@%u", st->fmt.width, st->fmt.height,
			 (const char *)&st->fmt.pixelformat, iv->denominator);
	else
		snprintf(buf, size, "%ux%u/%.4s@%u/%u", st->fmt.width, st->fmt.height,
			 (const char *)&st->fmt.pixelformat, iv->denominator, iv->numerator);
}

/* @md's figures; a device not running has the limit it will get. */
static void
mdev_get_stats(const struct mdev *md, struct v4l2cuse_device_stats *st)
{
	*st = (struct v4l2cuse_device_stats){
		.buffer_memory_limit = md->conf->buffer_memory_limit,
	};
	if (md->dev)
		v4l2cuse_device_get_stats(md->dev, st);
}

/* The SIGNAL of list and stats: "lost" while the placeholder is shown. */
static const char *
mdev_signal(const struct mdev *md, const struct v4l2cuse_device_stats *st)
{
	if (!md->dev)
		return "-";
	return st->signal_lost ? "lost" : "ok";
}

/* "used/limit" with K/M/G units, the limit in the largest exact unit ("-": none). */
static void
format_mem(uint64_t used, uint64_t limit, char *buf, size_t size)
{
	static const char units[] = "KMGT";
	unsigned int u = 0;

	if (!limit) {
		snprintf(buf, size, "%" G_GUINT64_FORMAT "K/-", (used + 1023) >> 10);
		return;
	}
	while (u + 1 < sizeof(units) - 1 && limit % ((uint64_t)1 << (10 * (u + 2))) == 0)
		u++;
	if (limit % 1024)
		snprintf(buf, size, "%" G_GUINT64_FORMAT "K/%" G_GUINT64_FORMAT,
			 (used + 1023) >> 10, limit);
	else
		snprintf(buf, size, "%" G_GUINT64_FORMAT "K/%" G_GUINT64_FORMAT "%c",
			 (used + 1023) >> 10, limit >> (10 * (u + 1)), units[u]);
}

/* "    input shared with: ID ID" under a device whose camera or file others use too. */
static void
mgr_list_sharing(struct v4l2cuse_manager *m, struct mdev *md, const char *input, GString *out)
{
	g_string_append(out, "    input shared with:");
	for (unsigned int i = 0; i < m->devs->len; i++) {
		struct mdev *other = m->devs->pdata[i];
		struct v4l2cuse_device_stats st = { 0 };

		if (other == md || !other->dev)
			continue;
		v4l2cuse_device_get_stats(other->dev, &st);
		if (g_strcmp0(st.input, input) == 0)
			g_string_append_printf(out, " %s", other->conf->id);
	}
	g_string_append_c(out, '\n');
}

/* "    writer /dev/videoN: ..." under a loopback device. */
static void
mgr_list_writer(struct mdev *md, GString *out)
{
	struct v4l2cuse_loopback_stats lb;

	g_string_append_printf(out, "    writer /dev/%s: ", md->writer_node);
	if (!md->dev || v4l2cuse_device_loopback_stats(md->dev, &lb) < 0) {
		g_string_append(out, "-\n");
		return;
	}
	if (lb.pid)
		g_string_append_printf(out, "%s, pid %d (%s), %ux%u/%.4s, ",
				       lb.connected ? "connected" : "gone", (int)lb.pid, lb.comm,
				       lb.fmt.width, lb.fmt.height, (const char *)&lb.fmt.pixelformat);
	else
		g_string_append(out, "no writer yet, ");
	g_string_append_printf(out, "%" G_GUINT64_FORMAT " written, %" G_GUINT64_FORMAT
			       " refused, %" G_GUINT64_FORMAT " dropped\n", lb.written, lb.refused,
			       lb.dropped);
}

void
v4l2cuse_manager_list(struct v4l2cuse_manager *m, GString *out)
{
	gint64 now = g_get_monotonic_time();

	g_string_append_printf(out, "%-12s %-8s %-11s %-6s %5s %-9s %9s %10s %8s %7s %-22s "
			       "%-13s %s\n", "ID", "NODE", "STATE", "SIGNAL", "OPENS", "STREAMING",
			       "CONSUMERS", "DELIVERED", "DROPPED", "ERRORS", "FORMAT", "BUFMEM",
			       "SOURCE");
	for (unsigned int i = 0; i < m->devs->len; i++) {
		struct mdev *md = m->devs->pdata[i];
		struct v4l2cuse_device_stats st;
		char fmt[40] = "-", mem[48], consumers[16] = "-";

		mdev_get_stats(md, &st);
		if (md->dev) {
			format_fmt(&st, fmt, sizeof(fmt));
			/* "N" on a shared device, "N/1" on an exclusive one. */
			snprintf(consumers, sizeof(consumers), st.shared ? "%u" : "%u/1",
				 st.consumers);
		}
		format_mem(st.buffer_memory, st.buffer_memory_limit, mem, sizeof(mem));
		g_string_append_printf(out, "%-12s %-8s %-11s %-6s %5u %-9s %9s %10" G_GUINT64_FORMAT
				       " %8" G_GUINT64_FORMAT " %7" G_GUINT64_FORMAT " %-22s %-13s %s\n",
				       md->conf->id, md->node, mdev_state_names[md->state],
				       mdev_signal(md, &st), st.opens,
				       st.streaming ? "yes" : "no", consumers, st.delivered,
				       st.dropped, st.errors, fmt, mem,
				       md->dev ? v4l2cuse_device_source_spec(md->dev)
					       : md->conf->source);
		if (st.input && st.input_users > 1)
			mgr_list_sharing(m, md, st.input, out);
		if (md->writer_node)
			mgr_list_writer(md, out);
		if (md->error && md->state != MDEV_SERVING) {
			g_string_append_printf(out, "    error: %s", md->error);
			if (md->state == MDEV_FAILED)
				g_string_append_printf(out, " (retry %u in %d s)", md->failures + 1,
						       (int)MAX(0, (md->retry_at - now +
								    G_USEC_PER_SEC - 1) /
								   G_USEC_PER_SEC));
			g_string_append_c(out, '\n');
		}
	}
}

/*
 * "KEY VALUE" lines in groups, like a key file: "[daemon]", then one
 * "[device ID]" per device in list order. Byte counts end in "-bytes".
 * Readers must skip keys and groups they do not know: more will come.
 */
void
v4l2cuse_manager_stats(struct v4l2cuse_manager *m, GString *out)
{
	struct vb_budget_stats mem;

	vb_budget_get_stats(m->budget, &mem);
	g_string_append_printf(out, "[daemon]\npid %d\ndevices %u\n", (int)getpid(), m->devs->len);
#if HAVE_MALLINFO2
	{
		/* glibc's allocator over all arenas: what the daemon's live
		 * allocations hold (chunks in use, plus the large ones malloc
		 * maps on their own), and what malloc keeps free for reuse.
		 * Not meaningful under ASan, whose allocator is not glibc's. */
		struct mallinfo2 mi = mallinfo2();

		g_string_append_printf(out, "heap-in-use-bytes %zu\nheap-free-bytes %zu\n",
				       mi.uordblks + mi.hblkhd, mi.fordblks);
	}
#endif
	g_string_append_printf(out, "buffer-memory-bytes %" G_GUINT64_FORMAT
			       "\nbuffer-memory-limit-bytes %" G_GUINT64_FORMAT "\n",
			       mem.used, mem.limit);
	for (unsigned int i = 0; i < m->devs->len; i++) {
		struct mdev *md = m->devs->pdata[i];
		struct v4l2cuse_device_stats st;
		struct v4l2cuse_shim_stats sh = { 0 };

		mdev_get_stats(md, &st);
		if (md->shim)
			v4l2cuse_shim_get_stats(md->shim, &sh);
		g_string_append_printf(out, "[device %s]\nnode %s\nstate %s\nsignal %s\nopens %u\n"
				       "consumers %u\nstreaming %s\ndelivered %" G_GUINT64_FORMAT
				       "\ndropped %" G_GUINT64_FORMAT "\nerrors %" G_GUINT64_FORMAT
				       "\nparked %u\ninterrupted %" G_GUINT64_FORMAT
				       "\nbuffer-memory-bytes %" G_GUINT64_FORMAT
				       "\nbuffer-memory-limit-bytes %" G_GUINT64_FORMAT
				       "\nbuffer-memory-refused %" G_GUINT64_FORMAT
				       "\nshim-connections %u\nshim-attached %u\nshim-tokens %u"
				       "\nshim-mappings %u\nshim-refused %u\nproduced %" G_GUINT64_FORMAT
				       "\nticks-lost %" G_GUINT64_FORMAT
				       "\nfast-frames %" G_GUINT64_FORMAT "\nfast-handles %u"
				       "\ncuse-requests %" G_GUINT64_FORMAT "\n",
				       md->conf->id, md->node, mdev_state_names[md->state],
				       mdev_signal(md, &st), st.opens, st.consumers,
				       st.streaming ? "yes" : "no", st.delivered, st.dropped, st.errors,
				       st.parked, st.interrupted, st.buffer_memory, st.buffer_memory_limit,
				       st.buffer_memory_refused, sh.connections, sh.authenticated,
				       sh.tokens, sh.mappings, sh.refused, st.produced, st.ticks_lost, st.fast_frames,
				       st.fast_handles, st.requests);
	}
}

char *
v4l2cuse_manager_status(struct v4l2cuse_manager *m)
{
	GString *s = g_string_new(NULL);
	unsigned int serving = 0, streaming = 0, opens = 0, failed = 0;
	struct vb_budget_stats mem;

	for (unsigned int i = 0; i < m->devs->len; i++) {
		struct mdev *md = m->devs->pdata[i];
		struct v4l2cuse_device_stats st;

		mdev_get_stats(md, &st);
		serving += md->state == MDEV_SERVING;
		streaming += st.streaming;
		opens += st.opens;
		failed += md->state == MDEV_FAILED || md->state == MDEV_GAVE_UP;
	}
	vb_budget_get_stats(m->budget, &mem);
	g_string_append_printf(s, "%u/%u devices serving, %u streaming, %u open, buffers %"
			       G_GUINT64_FORMAT " KiB", serving, m->devs->len, streaming, opens,
			       (mem.used + 1023) >> 10);
	for (unsigned int i = 0; i < m->devs->len && failed; i++) {
		struct mdev *md = m->devs->pdata[i];

		if (md->state == MDEV_FAILED || md->state == MDEV_GAVE_UP)
			g_string_append_printf(s, "; %s %s: %s", md->node,
					       md->state == MDEV_FAILED ? "retrying" : "failed",
					       md->error ? md->error : "?");
	}
	return g_string_free(s, FALSE);
}
