/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The v4l2loopback control device (lbctl.h): v4l2loopback's control ioctls
 * (v4l2cuse/loopback-abi.h) over the manager's loopback devices.
 *
 * Every argument comes through the CUSE retry protocol (the node is
 * registered with unrestricted ioctls, as the V4L2 nodes): round one sees
 * only the caller's address and asks for the structure, the next has it.
 * The 0.13/0.14 numbers say nothing of their argument, and REMOVE passes
 * its number by value under both, so the size of each argument is ours,
 * never the command's.
 *
 * Errors are v4l2loopback's: EINVAL for a missing argument, EEXIST for a
 * number in use, ENODEV for a number that is no loopback device, EBUSY to
 * remove one that is open; an unknown command is ENOTTY (v4l2loopback says
 * ENOSYS, which nothing relies on).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <glib.h>

#include "v4l2cuse/format.h"
#include "v4l2cuse/loopback-abi.h"
#include "videobuf.h"
#include "cuse.h"
#include "manager.h"
#include "lbctl.h"

#define LBCTL_MAX_NR	999	/* the node names the daemon takes: video0..video999 */

/* An ADD waiting until its device serves (or fails). */
struct lbctl_add {
	struct v4l2cuse_lbctl *ctl;
	struct v4l2cuse_req *req;	/* parked */
	char *id;
	int nr;				/* the answer: the writer node's number */
	GList link;			/* in ctl->adds */
};

struct v4l2cuse_lbctl {
	struct v4l2cuse_manager *m;
	struct v4l2cuse_cuse *cuse;
	GQueue adds;			/* struct lbctl_add * */
};

/* "video33" -> 33 (the names a loopback's nodes have: lb_valid_node()). */
static int
lbctl_nr(const char *node)
{
	return atoi(node + strlen("video"));
}

static void
lbctl_add_free(struct lbctl_add *add)
{
	g_queue_unlink(&add->ctl->adds, &add->link);
	g_free(add->id);
	g_free(add);
}

/* ---------------------------------------------------------------------- */
/* ADD */

/* @label as a value of a configuration file line (GKeyFile's escapes). */
static char *
lbctl_escape(const char *value)
{
	g_autoptr(GKeyFile) kf = g_key_file_new();

	g_key_file_set_string(kf, "device", "label", value);
	return g_key_file_get_value(kf, "device", "label", NULL);
}

/*
 * The label= line for @card_label (32 bytes, maybe not terminated, maybe
 * not UTF-8): at most 31 bytes of valid UTF-8 without control characters
 * or surrounding spaces, as label= wants. Empty: v4l2loopback's default
 * label, with the device's index (@index, as its id's).
 */
static char *
lbctl_label_key(const char card_label[32], unsigned int index)
{
	g_autofree char *raw = g_strndup(card_label, 31);
	g_autofree char *utf8 = g_utf8_make_valid(raw, -1);
	g_autofree char *escaped = NULL;
	char *p = utf8;

	for (char *q = utf8; *q; q++)
		if ((unsigned char)*q < 0x20 || *q == 0x7f)
			*q = ' ';
	/* U+FFFD for a bad byte is 3 bytes: cut at a character boundary. */
	while (*p && g_utf8_next_char(p) - utf8 <= 31)
		p = g_utf8_next_char(p);
	*p = '\0';
	g_strstrip(utf8);
	if (!*utf8)
		return g_strdup_printf("label=Dummy video device (0x%04X)", index);
	escaped = lbctl_escape(utf8);
	return g_strdup_printf("label=%s", escaped);
}

/*
 * The source= line for @cfg: the writer node (@writer, NULL: a free one)
 * and the writers' sizes, with v4l2loopback's defaults for the values
 * below the minimum and for a maximum below the minimum. -EINVAL for
 * sizes the writer node cannot take (above V4L2CUSE_MAX_WIDTH/HEIGHT).
 */
static int
lbctl_source_key(const struct v4l2cuse_loopback_config *cfg, const char *writer,
		 char **ret_key, char **ret_error)
{
	uint32_t min_w = MAX(cfg->min_width, 2u), min_h = MAX(cfg->min_height, 2u);
	uint32_t max_w = cfg->max_width < min_w ? V4L2CUSE_MAX_WIDTH : cfg->max_width;
	uint32_t max_h = cfg->max_height < min_h ? V4L2CUSE_MAX_HEIGHT : cfg->max_height;

	if (max_w > V4L2CUSE_MAX_WIDTH || max_h > V4L2CUSE_MAX_HEIGHT) {
		*ret_error = g_strdup_printf("writer sizes %ux%u to %ux%u: at most %ux%u", min_w,
					     min_h, max_w, max_h, V4L2CUSE_MAX_WIDTH,
					     V4L2CUSE_MAX_HEIGHT);
		return -EINVAL;
	}
	*ret_key = g_strdup_printf("source=loopback%s%s,min_width=%u,max_width=%u,"
				   "min_height=%u,max_height=%u", writer ? ":" : "",
				   writer ? writer : "", min_w, max_w, min_h, max_h);
	return 0;
}

/* A device id no device has: v4l2loopback-0, v4l2loopback-1, ... and its index. */
static char *
lbctl_new_id(struct v4l2cuse_lbctl *ctl, unsigned int *ret_index)
{
	for (unsigned int i = 0;; i++) {
		g_autofree char *id = g_strdup_printf("v4l2loopback-%u", i);

		if (!v4l2cuse_manager_has_device(ctl->m, id)) {
			*ret_index = i;
			return g_steal_pointer(&id);
		}
	}
}

/* The device of @add serves, failed or went: answer the waiting ADD. */
static void
lbctl_add_ready(void *data, int r, const char *error)
{
	struct lbctl_add *add = data;
	struct v4l2cuse_lbctl *ctl = add->ctl;
	g_autofree char *err = NULL;

	if (r == 0) {
		g_message("v4l2loopback: added %s: writer /dev/video%d", add->id, add->nr);
		v4l2cuse_req_reply_ioctl(add->req, add->nr, NULL, 0);
		lbctl_add_free(add);
		return;
	}
	/* All or nothing, as v4l2loopback's ADD: a device that failed goes. */
	g_message("v4l2loopback: adding %s failed: %s", add->id, error ? error : g_strerror(-r));
	if (r != -ENODEV && v4l2cuse_manager_remove(ctl->m, add->id, &err) < 0)
		g_warning("bug: v4l2loopback: %s", err);
	v4l2cuse_req_reply_err(add->req, r);
	lbctl_add_free(add);
}

/*
 * Make the device @cfg asks for (NULL: all defaults) as v4l2cuse-ctl add
 * does; its id in *ret_id and its writer node's number in *ret_nr.
 */
static int
lbctl_make(struct v4l2cuse_lbctl *ctl, const struct v4l2cuse_loopback_config *cfg,
	   char **ret_id, int *ret_nr, char **ret_error)
{
	static const struct v4l2cuse_loopback_config defaults = {
		.output_nr = -1,
		.announce_all_caps = -1,
	};
	g_autofree char *writer = NULL, *source = NULL, *label = NULL, *id = NULL, *err = NULL;
	struct v4l2cuse_manager_loopback lb;
	const char *keys[3];
	unsigned int n = 0, index;
	int r;

	if (!cfg)
		cfg = &defaults;
	/* cfg->unused (once capture_nr): v4l2loopback-ctl never sets it. */
	if (cfg->output_nr > LBCTL_MAX_NR) {
		*ret_error = g_strdup_printf("device number %d is above %d", cfg->output_nr,
					     LBCTL_MAX_NR);
		return -EINVAL;
	}
	if (cfg->output_nr >= 0) {
		writer = g_strdup_printf("video%d", cfg->output_nr);
		if (v4l2cuse_manager_node_taken(ctl->m, writer)) {
			*ret_error = g_strdup_printf("/dev/%s exists", writer);
			return -EEXIST;
		}
	}
	r = lbctl_source_key(cfg, writer, &source, ret_error);
	if (r < 0)
		return r;
	id = lbctl_new_id(ctl, &index);
	label = lbctl_label_key(cfg->card_label, index);
	keys[n++] = source;
	keys[n++] = label;
	keys[n] = NULL;
	r = v4l2cuse_manager_add_keys(ctl->m, id, keys, ret_error);
	if (r < 0)
		return r == -EEXIST ? -EEXIST : -EINVAL;
	if (v4l2cuse_manager_loopback_by_id(ctl->m, id, &lb) < 0) {
		*ret_error = g_strdup_printf("bug: %s is not a loopback device", id);
		v4l2cuse_manager_remove(ctl->m, id, &err);
		return -EIO;
	}
	*ret_nr = lbctl_nr(lb.writer_node);
	*ret_id = g_steal_pointer(&id);
	return 0;
}

static void
lbctl_add(struct v4l2cuse_lbctl *ctl, struct v4l2cuse_req *req,
	  const struct v4l2cuse_ioctl_args *a)
{
	struct v4l2cuse_loopback_config cfg;
	g_autofree char *err = NULL;
	struct lbctl_add *add;
	char *id = NULL;
	int nr, r;

	/* NULL is all defaults (v4l2loopback-ctl add without options). */
	if (a->arg && a->in_size < sizeof(cfg)) {
		struct iovec iov = { (void *)a->arg, sizeof(cfg) };

		v4l2cuse_req_retry(req, &iov, 1, NULL, 0);
		return;
	}
	if (a->arg)
		memcpy(&cfg, a->in, sizeof(cfg));
	r = lbctl_make(ctl, a->arg ? &cfg : NULL, &id, &nr, &err);
	if (r < 0) {
		g_message("v4l2loopback: ADD refused: %s", err);
		v4l2cuse_req_reply_err(req, r);
		return;
	}
	add = g_new0(struct lbctl_add, 1);
	add->ctl = ctl;
	add->id = id;
	add->nr = nr;
	add->link.data = add;
	add->req = v4l2cuse_req_park(req);
	g_queue_push_tail_link(&ctl->adds, &add->link);
	/* Answered once both nodes exist and the device passed its self-test. */
	v4l2cuse_manager_watch_ready(ctl->m, id, lbctl_add_ready, add);
}

/* ---------------------------------------------------------------------- */
/* REMOVE, QUERY, VERSION */

/* The loopback device whose writer or capture node is /dev/video@nr. */
static int
lbctl_find(struct v4l2cuse_lbctl *ctl, int64_t nr, struct v4l2cuse_manager_loopback *ret)
{
	g_autofree char *node = NULL;

	if (nr < 0 || nr > LBCTL_MAX_NR)
		return -ENODEV;
	node = g_strdup_printf("video%d", (int)nr);
	return v4l2cuse_manager_find_loopback(ctl->m, node, ret);
}

static void
lbctl_remove(struct v4l2cuse_lbctl *ctl, struct v4l2cuse_req *req,
	     const struct v4l2cuse_ioctl_args *a)
{
	struct v4l2cuse_manager_loopback lb;
	g_autofree char *err = NULL, *id = NULL, *what = NULL;
	/* The number itself, as an int (0.15's __u32 cast back as v4l2loopback does). */
	int r = lbctl_find(ctl, (int)a->arg, &lb);

	if (r == 0 && lb.opens)
		r = -EBUSY;		/* any handle, as v4l2loopback's open count */
	if (r == 0) {
		/* @lb's strings go with the device. */
		id = g_strdup(lb.id);
		what = g_strdup_printf("/dev/%s, /dev/%s", lb.node, lb.writer_node);
		r = v4l2cuse_manager_remove(ctl->m, id, &err);
		if (r == 0)
			g_message("v4l2loopback: removed %s (%s)", id, what);
	}
	if (r < 0)
		v4l2cuse_req_reply_err(req, r);
	else
		v4l2cuse_req_reply_ioctl(req, 0, NULL, 0);
}

static void
lbctl_query(struct v4l2cuse_lbctl *ctl, struct v4l2cuse_req *req,
	    const struct v4l2cuse_ioctl_args *a)
{
	struct v4l2cuse_loopback_config cfg;
	struct v4l2cuse_manager_loopback lb;
	int r;

	if (!a->arg) {
		v4l2cuse_req_reply_err(req, -EINVAL);
		return;
	}
	if (a->in_size < sizeof(cfg) || a->out_size < sizeof(cfg)) {
		struct iovec iov = { (void *)a->arg, sizeof(cfg) };

		v4l2cuse_req_retry(req, &iov, 1, &iov, 1);
		return;
	}
	memcpy(&cfg, a->in, sizeof(cfg));
	r = lbctl_find(ctl, cfg.output_nr, &lb);
	if (r < 0) {
		v4l2cuse_req_reply_err(req, r);
		return;
	}
	snprintf(cfg.card_label, sizeof(cfg.card_label), "%s", lb.label);
	cfg.output_nr = lbctl_nr(lb.writer_node);
	cfg.unused = lbctl_nr(lb.node);		/* where readers read */
	cfg.min_width = lb.lb.min_width;
	cfg.max_width = lb.lb.max_width;
	cfg.min_height = lb.lb.min_height;
	cfg.max_height = lb.lb.max_height;
	/* What a consumer may allocate and how many may open, whatever ADD said. */
	cfg.max_buffers = VB_MAX_BUFFERS;
	cfg.max_openers = V4L2CUSE_MAX_OPENS;
	cfg.debug = 0;
	/* Each node announces one direction: v4l2loopback's exclusive_caps. */
	cfg.announce_all_caps = 0;
	v4l2cuse_req_reply_ioctl(req, 0, &cfg, sizeof(cfg));
}

static void
lbctl_version(struct v4l2cuse_lbctl *ctl, struct v4l2cuse_req *req,
	      const struct v4l2cuse_ioctl_args *a)
{
	uint32_t version = V4L2CUSE_LOOPBACK_VERSION_CODE;

	if (!a->arg) {
		v4l2cuse_req_reply_err(req, -EINVAL);
		return;
	}
	if (a->out_size < sizeof(version)) {
		struct iovec iov = { (void *)a->arg, sizeof(version) };

		v4l2cuse_req_retry(req, NULL, 0, &iov, 1);
		return;
	}
	v4l2cuse_req_reply_ioctl(req, 0, &version, sizeof(version));
}

void
v4l2cuse_lbctl_ioctl(struct v4l2cuse_lbctl *ctl, struct v4l2cuse_req *req,
		     const struct v4l2cuse_ioctl_args *a)
{
	/* 32-bit callers: the same layout (fixed-width fields), as v4l2loopback's compat_ioctl. */
	switch (a->cmd) {
	case V4L2CUSE_LOOPBACK_CTL_VERSION:
		lbctl_version(ctl, req, a);
		return;
	case V4L2CUSE_LOOPBACK_CTL_ADD:
	case V4L2CUSE_LOOPBACK_CTL_ADD_OLD:
		lbctl_add(ctl, req, a);
		return;
	case V4L2CUSE_LOOPBACK_CTL_REMOVE:
	case V4L2CUSE_LOOPBACK_CTL_REMOVE_OLD:
		lbctl_remove(ctl, req, a);
		return;
	case V4L2CUSE_LOOPBACK_CTL_QUERY:
	case V4L2CUSE_LOOPBACK_CTL_QUERY_OLD:
		lbctl_query(ctl, req, a);
		return;
	}
	v4l2cuse_req_reply_err(req, -ENOTTY);
}

/* ---------------------------------------------------------------------- */

static void
lbctl_on_state(struct v4l2cuse_cuse *c, enum v4l2cuse_cuse_state state, void *data)
{
	switch (state) {
	case V4L2CUSE_CUSE_READY:
		g_message("v4l2loopback: /dev/%s is up, v4l2loopback-ctl adds and removes "
			  "loopback devices", V4L2CUSE_LBCTL_NAME);
		return;
	case V4L2CUSE_CUSE_FAILED:
		g_warning("v4l2loopback: /dev/%s was refused (%s): is the v4l2loopback module "
			  "loaded?", V4L2CUSE_LBCTL_NAME, g_strerror(-v4l2cuse_cuse_error(c)));
		return;
	case V4L2CUSE_CUSE_ENDED:
		g_warning("v4l2loopback: the CUSE connection of /dev/%s was aborted",
			  V4L2CUSE_LBCTL_NAME);
		return;
	}
}

struct v4l2cuse_lbctl *
v4l2cuse_lbctl_new(struct v4l2cuse_manager *m, gid_t gid, char **ret_error)
{
	struct v4l2cuse_lbctl *ctl = g_new0(struct v4l2cuse_lbctl, 1);

	ctl->m = m;
	/* As v4l2loopback's misc device (0600 root), or its udev rule's group. */
	ctl->cuse = v4l2cuse_cuse_new_lbctl(ctl, gid == (gid_t)-1 ? 0600 : 0660, gid,
					    lbctl_on_state, ctl, ret_error);
	if (!ctl->cuse) {
		g_free(ctl);
		return NULL;
	}
	return ctl;
}

void
v4l2cuse_lbctl_free(struct v4l2cuse_lbctl *ctl)
{
	struct lbctl_add *add;

	if (!ctl)
		return;
	/* Their devices stay (the daemon stops, or the key turned it off). */
	while ((add = g_queue_peek_head(&ctl->adds))) {
		v4l2cuse_manager_unwatch_ready(ctl->m, add->id);
		v4l2cuse_req_reply_err(add->req, -ENODEV);
		lbctl_add_free(add);
	}
	v4l2cuse_cuse_free(ctl->cuse);
	g_free(ctl);
}
