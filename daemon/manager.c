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
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <glib.h>

#include "util/cleanup.h"
#include "videobuf.h"
#include "device.h"
#include "hub.h"
#include "loopback.h"
#include "cuse.h"
#include "shim.h"
#include "selftest.h"
#include "usbface.h"
#include "manager.h"
#include "network.h"

#include "manager-private.h"

#define MGR_NODE_FIRST	32	/* docs/cuse.md, "Names" */
#define MGR_NODE_LAST	63

const char *const mdev_state_names[] = {
	[MDEV_BUILT] = "built",
	[MDEV_REGISTERING] = "registering",
	[MDEV_TESTING] = "testing",
	[MDEV_SERVING] = "serving",
	[MDEV_FAILED] = "failed",
	[MDEV_GAVE_UP] = "gave-up",
};

static void mdev_register(struct mdev *md);
static void mdev_fail(struct mdev *md, char *error);

/* Tell @md's watcher (manager.h) once; it may remove @md unless @r is -ENODEV. */
static void
mdev_ready_fire(struct mdev *md, int r)
{
	v4l2cuse_manager_ready_fn fn = md->ready_fn;

	if (!fn)
		return;
	md->ready_fn = NULL;
	fn(md->ready_data, r, r < 0 ? md->error : NULL);
}

/* Serving, and a loopback's writer node is there too: the watcher hears it. */
static void
mdev_ready_check(struct mdev *md)
{
	if (md->state == MDEV_SERVING && (!md->wcuse || md->writer_ready))
		mdev_ready_fire(md, 0);
}

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
	/* The camera is unplugged before its node goes. */
	g_clear_pointer(&md->usb, v4l2cuse_usbface_free);
	/* Answers parked requests (ENODEV) and closes /dev/cuse: the node goes. */
	g_clear_pointer(&md->cuse, v4l2cuse_cuse_free);
	g_clear_pointer(&md->wcuse, v4l2cuse_cuse_free);
	md->writer_ready = false;
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
	mdev_ready_fire(md, -ENODEV);
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

/*
 * Under the unit, one line when @d needs network the unit does not allow
 * (network.h): configured after the boot's generator run, or added at
 * runtime. The device is made anyway; its source fails to connect and the
 * placeholder stands in.
 */
static void
mgr_check_network(struct v4l2cuse_manager *m, const struct v4l2cuse_conf_device *d)
{
	g_autofree char *msg = v4l2cuse_net_uncovered(m->service_network, d);

	if (msg)
		g_warning("%s", msg);
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
	mgr_check_network(m, d);
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
		mdev_ready_fire(md, md->fail_errno ? md->fail_errno : -EIO);
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
	/* Last: the watcher may remove @md. */
	mdev_ready_fire(md, md->fail_errno ? md->fail_errno : -EIO);
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
		if (err == -EEXIST || err == -ENODEV) {
			md->fail_errno = -EEXIST;
			mdev_fail(md, g_strdup_printf("device name '%s' is already taken: CUSE "
						      "refused to register /dev/%s", md->node,
						      md->node));
		} else
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
		md->writer_ready = true;
		mdev_ready_check(md);
		return;
	case V4L2CUSE_CUSE_FAILED:
		if (err == -EEXIST || err == -ENODEV)
			md->fail_errno = -EEXIST;
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
	md->fail_errno = 0;
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
	md->fail_errno = 0;
	g_clear_pointer(&md->error, g_free);
	g_clear_pointer(&md->reported, g_free);
	if (md->conf->usb && !md->usb)
		md->usb = v4l2cuse_usbface_new(md->dev, md->conf->id, md->node, md->conf->mode,
						!md->conf->has_mode);
	mdev_settle(md);
	mdev_ready_check(md);
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
	m->service_network = g_strdup(g_getenv(V4L2CUSE_NET_ENV));
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
	g_free(m->service_network);
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

void
v4l2cuse_manager_foreach_serving(struct v4l2cuse_manager *m,
				 void (*fn)(const char *id, const char *node, const char *label,
					    void *data),
				 void *data)
{
	for (unsigned int i = 0; i < m->devs->len; i++) {
		struct mdev *md = m->devs->pdata[i];

		if (md->state == MDEV_SERVING)
			fn(md->conf->id, md->node, v4l2cuse_device_label(md->dev), data);
	}
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
v4l2cuse_manager_add_keys(struct v4l2cuse_manager *m, const char *id,
			  const char *const *keys, char **ret_error)
{
	_cleanup_(v4l2cuse_conf_freep) struct v4l2cuse_conf *conf = v4l2cuse_conf_new();
	g_autoptr(GString) text = g_string_new(NULL);
	int r;

	if (!id || !v4l2cuse_conf_id_valid(id)) {
		*ret_error = g_strdup("usage: add ID [KEY=VALUE...] "
				      "(ID: 1..31 of A-Z a-z 0-9 - _ .)");
		return -EINVAL;
	}
	g_string_append_printf(text, "[device %s]\n", id);
	for (unsigned int i = 0; keys[i]; i++) {
		if (!strchr(keys[i], '=') || keys[i][0] == '[' || keys[i][0] == '#' ||
		    strchr(keys[i], '\n')) {
			*ret_error = g_strdup_printf("'%s' is not KEY=VALUE", keys[i]);
			return -EINVAL;
		}
		g_string_append_printf(text, "%s\n", keys[i]);
	}
	/* The daemon's defaults for group= and mode=. */
	conf->group = g_strdup(m->conf->group);
	conf->mode = m->conf->mode;
	conf->has_mode = m->conf->has_mode;
	r = v4l2cuse_conf_parse(conf, "add", text->str, text->len, ret_error);
	if (r == 0)
		r = v4l2cuse_conf_finish(conf, ret_error);
	if (r == 0)
		r = v4l2cuse_manager_add(m, conf->devices->pdata[0], ret_error);
	return r;
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
	if (r == 0) {
		struct v4l2cuse_conf_device d = *md->conf;

		d.source = (char *)spec;
		mgr_check_network(m, &d);
	}
	mgr_changed(m);
	return r;
}

int
v4l2cuse_manager_set_placeholder(struct v4l2cuse_manager *m, const char *id,
				 const char *spec, char **ret_error)
{
	struct mdev *md = mgr_find_live(m, id, ret_error);
	int r;

	if (!md)
		return -ENOENT;
	r = v4l2cuse_device_set_placeholder(md->dev, spec, ret_error);
	if (r == 0) {
		struct v4l2cuse_conf_device d = *md->conf;

		d.placeholder = (char *)spec;	/* NULL: none */
		mgr_check_network(m, &d);
	}
	return r;
}

int
v4l2cuse_manager_watch_ready(struct v4l2cuse_manager *m, const char *id,
			     v4l2cuse_manager_ready_fn fn, void *data)
{
	struct mdev *md = mgr_find(m, id);

	if (!md)
		return -ENOENT;
	md->ready_fn = fn;
	md->ready_data = data;
	mdev_ready_check(md);		/* serving already: told at once */
	return 0;
}

void
v4l2cuse_manager_unwatch_ready(struct v4l2cuse_manager *m, const char *id)
{
	struct mdev *md = mgr_find(m, id);

	if (md)
		md->ready_fn = NULL;
}

/* @md, a built loopback device (dev and wdev), as the control device sees it. */
static void
mdev_loopback_info(struct mdev *md, struct v4l2cuse_manager_loopback *ret)
{
	struct v4l2cuse_device_stats st, wst;

	v4l2cuse_device_get_stats(md->dev, &st);
	v4l2cuse_device_get_stats(md->wdev, &wst);
	*ret = (struct v4l2cuse_manager_loopback){
		.id = md->conf->id,
		.node = md->node,
		.writer_node = md->writer_node,
		.label = v4l2cuse_device_label(md->dev),
		.serving = md->state == MDEV_SERVING,
		.opens = st.opens + wst.opens,
	};
	if (v4l2cuse_device_loopback_stats(md->dev, &ret->lb) < 0)
		g_warning("bug: %s: a loopback device without loopback stats", md->conf->id);
}

int
v4l2cuse_manager_find_loopback(struct v4l2cuse_manager *m, const char *node,
			       struct v4l2cuse_manager_loopback *ret)
{
	for (unsigned int i = 0; i < m->devs->len; i++) {
		struct mdev *md = m->devs->pdata[i];

		if (md->dev && md->wdev &&
		    (strcmp(md->node, node) == 0 || strcmp(md->writer_node, node) == 0)) {
			mdev_loopback_info(md, ret);
			return 0;
		}
	}
	return -ENODEV;
}

int
v4l2cuse_manager_loopback_by_id(struct v4l2cuse_manager *m, const char *id,
				struct v4l2cuse_manager_loopback *ret)
{
	struct mdev *md = mgr_find(m, id);

	if (!md || !md->dev || !md->wdev)
		return -ENODEV;
	mdev_loopback_info(md, ret);
	return 0;
}

bool
v4l2cuse_manager_has_device(struct v4l2cuse_manager *m, const char *id)
{
	return mgr_find(m, id) != NULL;
}

bool
v4l2cuse_manager_node_taken(struct v4l2cuse_manager *m, const char *node)
{
	return node_in(m->devs, node, NULL) || node_exists(node);
}
